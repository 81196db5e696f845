//! The conveniences a kubectl user expects, through the real binary: `info` naming where
//! flotilla's files live (from the XDG variables), shell completion, the man pages, and
//! `-o wide` / `-o name` on the tables.

use std::path::Path;
use std::process::{Command, Output};

fn flotilla_in(config: &Path, state: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .env("XDG_CONFIG_HOME", config)
        .env("XDG_STATE_HOME", state)
        .env_remove("KUBECONFIG")
        .output()
        .expect("run flotilla")
}

fn flotilla(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().expect("temp dir");
    flotilla_in(dir.path(), dir.path(), args)
}

/// What a command printed, whatever its exit code.
fn printed(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What a command that must succeed printed.
fn stdout(output: &Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn info_names_every_path_from_the_xdg_variables_and_says_which_exist() {
    let config = tempfile::tempdir().expect("temp dir");
    let state = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(config.path().join("flotilla/themes")).expect("mkdir");
    std::fs::write(config.path().join("flotilla/themes/light.yaml"), "{}\n").expect("write");
    let output = flotilla_in(
        config.path(),
        state.path(),
        &["info", "--theme", "light", "-o", "json"],
    );
    let value: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(value["version"], env!("CARGO_PKG_VERSION"));
    let item = |name: &str| {
        value["items"]
            .as_array()
            .and_then(|items| items.iter().find(|item| item["name"] == name))
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {value}"))
    };
    let under = |dir: &Path, rest: &str| dir.join(rest).display().to_string();
    assert_eq!(item("config")["path"], under(config.path(), "flotilla"));
    assert_eq!(
        item("settings")["path"],
        under(config.path(), "flotilla/config.yaml")
    );
    assert_eq!(
        item("theme")["path"],
        under(config.path(), "flotilla/themes/light.yaml")
    );
    assert_eq!(item("theme")["exists"], true);
    assert_eq!(
        item("keymap")["path"],
        under(config.path(), "flotilla/keymaps/default.yaml")
    );
    assert_eq!(item("keymap")["exists"], false);
    assert_eq!(
        item("audit")["path"],
        under(state.path(), "flotilla/audit.log")
    );
    // Starting the command opened the default log, so it exists now.
    assert_eq!(
        item("log")["path"],
        under(state.path(), "flotilla/flotilla.log")
    );
    assert_eq!(item("log")["exists"], true);
    assert!(item("kubeconfig")["path"].is_string());
    // Where the operator's own health rules are read from.
    assert_eq!(
        item("health")["path"],
        under(config.path(), "flotilla/health")
    );
    assert_eq!(item("health")["exists"], false);

    let table = stdout(&flotilla_in(config.path(), state.path(), &["info"]));
    assert!(table.starts_with("NAME "), "{table}");
    assert!(
        table.contains(&under(state.path(), "flotilla/audit.log")),
        "{table}"
    );
    assert!(table.contains(&format!("flotilla {}", env!("CARGO_PKG_VERSION"))));
}

#[test]
fn info_names_the_kubeconfig_files_kubectl_would_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["info", "-o", "json"])
        .env("XDG_CONFIG_HOME", dir.path())
        .env("XDG_STATE_HOME", dir.path())
        .env("KUBECONFIG", "/nowhere/one:/nowhere/two")
        .output()
        .expect("run flotilla");
    let value: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    let kubeconfigs: Vec<&str> = value["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|item| item["name"] == "kubeconfig")
        .filter_map(|item| item["path"].as_str())
        .collect();
    assert_eq!(kubeconfigs, ["/nowhere/one", "/nowhere/two"]);
}

#[test]
fn completion_scripts_call_flotilla_back_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let script = stdout(&flotilla(&["completion", shell]));
        for word in ["FLOTILLA_COMPLETE", "flotilla"] {
            assert!(script.contains(word), "{shell} script lacks {word}");
        }
    }
    let refused = flotilla(&["completion", "tcsh"]);
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn the_man_page_is_roff_with_every_command() {
    let page = stdout(&flotilla(&["man"]));
    assert!(page.contains(".TH flotilla 1"), "{page}");
    for command in ["render", "plan", "repair", "completion"] {
        assert!(page.contains(command), "man page lacks {command}");
    }
}

/// `flotilla-placement-set` for `placement set`: every command's page name, depth first.
fn page_names(command: &clap::Command, prefix: &str, names: &mut Vec<String>) {
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        let name = format!("{prefix}-{}", sub.get_name());
        names.push(name.clone());
        page_names(sub, &name, names);
    }
}

#[test]
fn man_out_writes_a_page_for_every_command() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("man");
    std::fs::create_dir(&out).expect("mkdir");
    let listed = stdout(&flotilla(&["man", "--out", out.to_str().expect("utf-8")]));
    let mut expected = vec!["flotilla".to_string()];
    page_names(
        &<flotilla::cli::Cli as clap::CommandFactory>::command(),
        "flotilla",
        &mut expected,
    );
    assert!(expected.len() > 20, "{expected:?}");
    assert!(expected.contains(&"flotilla-placement-set".to_string()));
    for name in &expected {
        let path = out.join(format!("{name}.1"));
        let page = std::fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("no page {}: {err}", path.display()));
        assert!(page.contains(&format!(".TH {name} 1")), "{name}: {page}");
        assert!(listed.contains(&path.display().to_string()), "{listed}");
    }
    let plan = std::fs::read_to_string(out.join("flotilla-plan.1")).expect("plan page");
    assert!(plan.contains("prune"), "{plan}");
    let refused = flotilla(&[
        "man",
        "--out",
        dir.path().join("absent").to_str().expect("utf-8"),
    ]);
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn clusters_name_lists_cluster_names_and_wide_adds_labels() {
    // The demo's clusters include an unreachable one: every form exits 3.
    let listed = |args: &[&str]| {
        let output = flotilla(args);
        assert_eq!(output.status.code(), Some(3), "{args:?}");
        printed(&output)
    };
    let names = listed(&["clusters", "--demo", "-o", "name"]);
    let lines: Vec<&str> = names.lines().collect();
    assert!(lines.len() >= 12, "{names}");
    assert!(lines.iter().all(|line| !line.contains(' ')), "{names}");
    let table = listed(&["clusters", "--demo"]);
    let wide = listed(&["clusters", "--demo", "-o", "wide"]);
    assert!(!table.contains("LABELS"), "{table}");
    assert!(
        wide.lines()
            .next()
            .is_some_and(|h| h.contains("CONTEXT") && h.contains("LABELS"))
    );
    assert!(wide.contains("region="), "{wide}");
}

#[test]
fn status_name_lists_each_resource_once_as_kind_namespace_name() {
    let names = printed(&flotilla(&["status", "--demo", "-o", "name"]));
    let lines: Vec<&str> = names.lines().collect();
    let unique: std::collections::BTreeSet<&&str> = lines.iter().collect();
    assert_eq!(unique.len(), lines.len(), "{names}");
    assert!(lines.contains(&"Deployment/shop/inventory"), "{names}");
    assert!(lines.iter().all(|line| line.split('/').count() >= 2));
}

#[test]
fn render_name_lists_the_fleets_resources() {
    let names = stdout(&flotilla(&["render", "--demo", "-o", "name"]));
    assert!(
        names
            .lines()
            .any(|line| line == "Deployment/shop/inventory"),
        "{names}"
    );
    assert!(names.lines().count() >= 15, "{names}");
}

#[test]
fn table_columns_line_up_under_their_titles() {
    let table = printed(&flotilla(&["status", "--demo", "-o", "wide"]));
    let mut lines = table.lines();
    let header = lines.next().expect("a header");
    let at = |title: &str| {
        header
            .find(title)
            .unwrap_or_else(|| panic!("{title} in {header}"))
    };
    let (sync, since) = (at("SYNC"), at("SINCE"));
    for row in lines.take_while(|line| !line.is_empty()) {
        let chars: Vec<char> = row.chars().collect();
        assert_eq!(
            chars.get(sync - 1),
            Some(&' '),
            "SYNC column starts after a space: {row}"
        );
        assert_ne!(
            chars.get(sync),
            Some(&' '),
            "SYNC column starts at its title: {row}"
        );
        assert_ne!(
            chars.get(since),
            Some(&' '),
            "SINCE column starts at its title: {row}"
        );
    }
}

#[test]
fn namespace_and_selector_narrow_render_and_status_as_kubectl_does() {
    let render = stdout(&flotilla(&["render", "--demo", "-n", "shop", "-o", "name"]));
    let rendered: Vec<&str> = render.lines().collect();
    assert!(rendered.contains(&"Deployment/shop/checkout"), "{render}");
    assert!(
        rendered.iter().all(|line| line.contains("/shop/")),
        "-n shop keeps only the shop namespace's resources:\n{render}"
    );

    let selected = stdout(&flotilla(&[
        "render",
        "--demo",
        "-l",
        "app=checkout",
        "-o",
        "name",
    ]));
    assert_eq!(
        selected.lines().collect::<Vec<_>>(),
        ["Deployment/shop/checkout"],
        "-l matches the template's labels"
    );
    let negated = stdout(&flotilla(&[
        "render",
        "--demo",
        "-n",
        "shop",
        "-l",
        "team=shop,app!=checkout",
        "-o",
        "name",
    ]));
    assert_eq!(
        negated.lines().collect::<Vec<_>>(),
        ["Deployment/shop/inventory"]
    );

    let status = flotilla(&["status", "--demo", "-n", "payments", "-o", "json"]);
    let json: serde_json::Value =
        serde_json::from_slice(&status.stdout).expect("status -o json is JSON");
    let items = json["items"].as_array().expect("items");
    assert!(!items.is_empty());
    for item in items {
        let resource = item["resource"].to_string();
        assert!(resource.contains("payments"), "{resource}");
    }
}

#[test]
fn a_bad_selector_is_an_input_error_naming_the_flag() {
    let output = flotilla(&["plan", "--demo", "-l", "tier in a,b"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("-l/--selector"), "{stderr}");
    assert!(stderr.contains("hint"), "{stderr}");
}

#[test]
fn jsonpath_templates_the_json_shape_as_kubectl_does() {
    // Whatever the exit code (the demo has an unreachable store), the template shapes stdout.
    let names = printed(&flotilla(&[
        "clusters",
        "--demo",
        "-o",
        "jsonpath={.items[*].name}",
    ]));
    let listed: Vec<&str> = names.split(' ').collect();
    assert!(listed.contains(&"prod-eu-west-2"), "{names}");
    assert!(listed.len() > 10, "{names}");

    let rows = printed(&flotilla(&[
        "status",
        "--demo",
        "-n",
        "shop",
        "-o",
        r#"jsonpath={range .items[*]}{.cluster}{"\t"}{.resource.name}{"\t"}{.sync}{"\n"}{end}"#,
    ]));
    let first = rows.lines().next().expect("a row per cell");
    assert_eq!(first.split('\t').count(), 3, "{rows}");

    let bad = flotilla(&["clusters", "--demo", "-o", "jsonpath={.items["]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no closing"));
}

#[test]
fn a_user_key_map_with_a_bad_entry_stops_the_console_naming_file_line_and_field() {
    let config = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(config.path().join("flotilla/keymaps")).expect("mkdir");
    let file = config.path().join("flotilla/keymaps/mine.yaml");
    // The views' sections and the editors' are checked alike.
    for (text, expected) in [
        (
            "drift:\n  revert: [R]\n  explode: [E]\n",
            "3: drift: explode: unknown command",
        ),
        (
            "placement:\n  toggle: [x]\noverrides:\n  delete: [x]\n  remove: [y]\n",
            "5: overrides: remove: unknown command",
        ),
        (
            "object:\n  next-view: [n]\n  explode: [E]\n",
            "3: object: explode: unknown command",
        ),
        (
            "ocm-placement:\n  confirm: [ctrl-s]\nobjekt:\n  up: [k]\n",
            "3: objekt: unknown section",
        ),
    ] {
        std::fs::write(&file, text).expect("write");
        let output = flotilla_in(config.path(), config.path(), &["demo", "--keymap", "mine"]);
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("{}:{expected}", file.display())),
            "{stderr}"
        );
    }
    // A good one passes the check (and then needs a terminal, which a test has not).
    std::fs::write(&file, "drift:\n  revert: [R]\n").expect("write");
    let output = flotilla_in(config.path(), config.path(), &["demo", "--keymap", "mine"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("needs a terminal"), "{stderr}");
}
