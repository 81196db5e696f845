//! The command-line contract, through the real binary: output shapes, exit codes, and that no
//! odd input makes it panic.

use std::process::{Command, Output};

fn flotilla(args: &[&str]) -> Output {
    let state = tempfile::tempdir().expect("temp dir");
    Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_CONFIG_HOME", state.path())
        .output()
        .expect("run flotilla")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn clusters_json_follows_the_contract() {
    let output = flotilla(&["clusters", "--demo", "-o", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    let items = value["items"].as_array().expect("an items array");
    assert!(
        items.len() >= 12,
        "at least 12 clusters, got {}",
        items.len()
    );
    for item in items {
        for key in [
            "name",
            "context",
            "labels",
            "taints",
            "provider",
            "region",
            "health",
            "version",
            "latencyMs",
            "message",
        ] {
            assert!(item.get(key).is_some(), "{key} missing in {item}");
        }
        assert!(item["labels"].is_object());
        assert!(item["taints"].is_array());
        let health = item["health"].as_str().expect("health is a string");
        assert!(
            [
                "Ready",
                "NotReady",
                "Unreachable",
                "Unauthorized",
                "Unknown"
            ]
            .contains(&health),
            "{health} is not a contract health"
        );
    }
    let not_ready = items
        .iter()
        .filter(|item| item["health"] != "Ready")
        .count();
    assert!(not_ready >= 1, "at least one cluster is not Ready");
    let unreachable = items
        .iter()
        .find(|item| item["health"] == "Unreachable")
        .expect("an unreachable cluster");
    assert!(
        unreachable["latencyMs"].is_null(),
        "no latency for a cluster that never answered"
    );
}

#[test]
fn clusters_yaml_and_table_say_the_same() {
    let yaml = flotilla(&["--demo", "clusters", "-o", "yaml"]);
    assert_eq!(yaml.status.code(), Some(0), "{}", stderr(&yaml));
    let parsed: serde_json::Value = serde_saphyr::from_slice(&yaml.stdout).expect("valid YAML");
    let json = flotilla(&["clusters", "--demo", "-o", "json"]);
    let from_json: serde_json::Value = serde_json::from_slice(&json.stdout).expect("valid JSON");
    assert_eq!(parsed, from_json, "yaml is the same structure as json");

    let table = flotilla(&["clusters", "--demo"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.starts_with("NAME"), "{text}");
    assert!(text.contains("prod-eu-west-1") && text.contains("Unreachable"));
}

#[test]
fn the_same_seed_gives_the_same_clusters() {
    let first = flotilla(&["clusters", "--demo", "--demo-seed", "11", "-o", "json"]);
    let second = flotilla(&["clusters", "--demo", "--demo-seed", "11", "-o", "json"]);
    assert_eq!(first.stdout, second.stdout);
}

#[test]
fn demo_scale_synthesises_the_requested_fleet() {
    let output = flotilla(&["clusters", "--demo-scale", "300,5", "-o", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert_eq!(value["items"].as_array().map(Vec::len), Some(300));
}

#[test]
fn a_bad_flag_is_a_usage_error_with_exit_2() {
    let output = flotilla(&["--no-such-flag"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--no-such-flag"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn unimplemented_commands_say_so_with_exit_2() {
    let output = flotilla(&["--demo", "plan"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("not implemented yet: plan"));
}

#[test]
fn a_missing_fleet_directory_is_an_input_error() {
    let output = flotilla(&["clusters", "--fleet", "/nonexistent/fleet"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("/nonexistent/fleet"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn odd_arguments_never_panic() {
    let odd: &[&[&str]] = &[
        &[""],
        &["-o"],
        &["-o", "xml", "clusters"],
        &["--demo-scale", "0,0", "clusters"],
        &["--demo-scale", "abc", "clusters"],
        &["--demo-scale", "18446744073709551616,1", "clusters"],
        &["--demo-seed", "-1", "clusters"],
        &["repair"],
        &["repair", "--revert", "--adopt"],
        &["render", "--cluster"],
        &["watch", "--interval", "soon"],
        &["clusters", "--context", "\u{7f}*"],
        &["\u{1b}[31m"],
        &["--fleet", "", "clusters"],
        &[
            "--theme",
            "",
            "--keymap",
            "../../etc/passwd",
            "clusters",
            "--demo",
        ],
        &["help", "nope"],
    ];
    for args in odd {
        let output = flotilla(args);
        let err = stderr(&output);
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
        let code = output.status.code();
        assert!(
            matches!(code, Some(0 | 2)),
            "{args:?} exited {code:?}: {err}"
        );
    }
}

#[test]
fn the_wall_without_clusters_says_how_to_name_them_before_touching_the_terminal() {
    let output = flotilla(&["watch", "--fleet", "/nonexistent/fleet"]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(text.contains("no clusters"), "{text}");
    assert!(text.contains("--context GLOB"), "{text}");
    assert!(
        output.stdout.is_empty(),
        "nothing may be drawn: {:?}",
        output.stdout
    );
}

#[test]
fn repair_refuses_bad_input_and_never_mutates_without_yes_or_a_terminal() {
    let fleet = tempfile::tempdir().expect("temp dir");
    let dir = fleet.path().to_str().expect("utf-8 path");
    // `output()` gives the child no terminal: without --yes nothing may change.
    let output = flotilla(&["repair", "--revert", "--fleet", dir, "--cluster", "a"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("no terminal to ask on") && stderr(&output).contains("--yes"),
        "{}",
        stderr(&output)
    );
    let output = flotilla(&["repair", "--ignore", "--path", "spec/replicas", "--yes"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--path \"spec/replicas\" is not a JSON pointer"),
        "{}",
        stderr(&output)
    );
    let output = flotilla(&["repair", "--adopt", "--resource", "web", "--yes"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("expected KIND/NAMESPACE/NAME"),
        "{}",
        stderr(&output)
    );
    let output = flotilla(&["repair", "--revert", "--readonly", "--yes"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--readonly"),
        "{}",
        stderr(&output)
    );
    let output = flotilla(&[
        "repair",
        "--ignore",
        "--yes",
        "--fleet",
        "/nonexistent/fleet",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("/nonexistent/fleet"),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        std::fs::read_dir(fleet.path()).expect("list").count(),
        0,
        "nothing was written to the fleet directory"
    );
}
