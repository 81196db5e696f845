//! The README and the docs cannot drift from the binary: every `flotilla …` command in a fenced
//! shell block parses with the real command line and, run the way the README's quick start sets
//! up (the demo fleet's files in `fleet/`, contexts for its clusters), answers — it prints
//! something and exits with a documented code, never an input error; and the README's key
//! tables are the default key map's help, section by section, line for line.
//! `FLOTILLA_BLESS=1 cargo test --test readme` rewrites the key table.

mod harness;

use harness::FleetDir;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use flotilla::cli::Cli;
use flotilla::config::keymap::{Keymap, Section};

const BEGIN: &str = "<!-- keys:begin";
const END: &str = "<!-- keys:end -->";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.expect("docs entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The `flotilla` command lines of a page's fenced `sh` blocks, with their line numbers; `cargo
/// run --release --` counts as `flotilla`, and a `#` comment ends the command.
fn commands(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut found = Vec::new();
    let mut in_shell = false;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(fence) = trimmed.strip_prefix("```") {
            in_shell = !in_shell && matches!(fence, "sh" | "bash" | "console" | "shell");
            continue;
        }
        if !in_shell {
            continue;
        }
        let Some(words) = shlex::split(trimmed) else {
            found.push((index + 1, vec![format!("unparsable shell line: {trimmed}")]));
            continue;
        };
        let words: Vec<String> = words
            .into_iter()
            .take_while(|w| !w.starts_with('#'))
            .collect();
        let args = match words.as_slice() {
            [first, rest @ ..] if first == "flotilla" => rest.to_vec(),
            [cargo, run, release, dashes, rest @ ..]
                if cargo == "cargo" && run == "run" && release == "--release" && dashes == "--" =>
            {
                rest.to_vec()
            }
            _ => continue,
        };
        // A pipe or a redirection ends the command.
        let args = args
            .into_iter()
            .take_while(|w| !matches!(w.as_str(), "|" | ">" | "&&" | ";"))
            .collect();
        found.push((index + 1, args));
    }
    found
}

#[test]
fn every_documented_command_parses() {
    let mut failures = Vec::new();
    let mut seen = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("page readable");
        for (line, args) in commands(&text) {
            seen += 1;
            let argv = std::iter::once("flotilla".to_string()).chain(args.iter().cloned());
            if let Err(err) = Cli::try_parse_from(argv) {
                let first = err
                    .to_string()
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_string();
                failures.push(format!(
                    "{}:{line}: flotilla {}: {first}",
                    relative(&page),
                    args.join(" ")
                ));
            }
        }
    }
    assert!(seen >= 5, "the README's commands were not found ({seen})");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_command_that_does_not_exist_is_caught() {
    let found = commands("```sh\nflotilla deploy-everything --now   # no such command\n```\n");
    assert_eq!(found.len(), 1);
    let argv = std::iter::once("flotilla".to_string()).chain(found[0].1.iter().cloned());
    assert!(Cli::try_parse_from(argv).is_err());
}

fn table(entries: Vec<(String, &'static str)>) -> String {
    let mut table = String::from("| keys | does |\n|---|---|\n");
    for (keys, does) in entries {
        let keys: Vec<String> = keys.split(' ').map(|key| format!("`{key}`")).collect();
        table.push_str(&format!(
            "| {} | {} |\n",
            keys.join(" "),
            does.replace('|', "\\|")
        ));
    }
    table
}

/// The README's key tables as the default key map's help screen lists them: the main view's,
/// then each view's own section.
fn key_table() -> String {
    let map = Keymap::built_in("default");
    let mut text = table(map.help_entries(false));
    for section in Section::ALL {
        text.push_str(&format!(
            "\n{} (`{}:` in a key map file):\n\n",
            section.title(),
            section.name()
        ));
        text.push_str(&table(map.section_help(section, false)));
    }
    text
}

#[test]
fn the_readme_key_table_is_the_default_key_map() {
    let path = root().join("README.md");
    let text = std::fs::read_to_string(&path).expect("README readable");
    let begin = text.find(BEGIN).expect("README has the keys:begin marker");
    let after_begin = begin + text[begin..].find('\n').expect("marker line ends") + 1;
    let end = text.find(END).expect("README has the keys:end marker");
    let expected = key_table();
    if std::env::var_os("FLOTILLA_BLESS").is_some() {
        let rewritten = format!("{}{expected}{}", &text[..after_begin], &text[end..]);
        std::fs::write(&path, rewritten).expect("README writable");
        return;
    }
    assert_eq!(
        &text[after_begin..end],
        expected,
        "README.md's key table differs from keymaps/default.yaml; \
         run FLOTILLA_BLESS=1 cargo test --test readme"
    );
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The quick start's setup in a fresh directory: `fleet/` holds the demo fleet's files,
/// `health/` the rule docs/health.md writes, and a
/// kubeconfig has a context for each of its clusters and for the hub the README attaches to,
/// all pointing at a closed port (what a documented command does with clusters it cannot
/// reach is part of what it must answer).
fn quick_start() -> (FleetDir, PathBuf) {
    let fleet = FleetDir::copy_of("demo");
    let mut names = vec!["my-karmada".to_string()];
    for entry in std::fs::read_dir(fleet.path()).expect("demo fleet") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("demo file");
        for doc in text.split("\n---") {
            let inventory = doc.contains("kind: Cluster") || doc.contains("kind: KubeFedCluster");
            if let Some(name) = doc
                .lines()
                .find_map(|line| line.trim().strip_prefix("name: "))
                .filter(|_| inventory)
            {
                names.push(name.trim().to_string());
            }
        }
    }
    // docs/health.md's example writes a rule into `health/` before it names the directory.
    let rule = fleet.beside("health/ConfigMap");
    std::fs::create_dir_all(&rule).expect("rules dir");
    std::fs::write(
        rule.join("health.lua"),
        "return {status = \"Healthy\", message = \"configured\"}\n",
    )
    .expect("rule");
    let mut kubeconfig = String::from(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: closed\n  cluster: {server: 'https://127.0.0.1:1'}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n",
    );
    for name in &names {
        kubeconfig.push_str(&format!(
            "- name: {name}\n  context: {{cluster: closed, user: u}}\n"
        ));
    }
    let path = fleet.beside("kubeconfig");
    std::fs::write(&path, kubeconfig).expect("kubeconfig");
    assert!(
        names.len() > 5,
        "the demo fleet's clusters were not found: {names:?}"
    );
    (fleet, path)
}

/// Exit codes the README documents (0 nothing, 1 changes, 3 some clusters failed, 4 the fleet
/// changed under an edit); 2 (an input error) means the documented command is wrong.
const ANSWERS: [u32; 4] = [0, 1, 3, 4];

/// Runs a documented interactive command in a terminal: it draws, and `q` quits it.
fn run_in_terminal(dir: &Path, kubeconfig: &Path, args: &[String]) -> Result<(), String> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let kubeconfig = kubeconfig.display().to_string();
    let mut app =
        harness::PtyApp::spawn_in(Some(dir), &args, 120, 40, &[("KUBECONFIG", &kubeconfig)]);
    app.wait_for("a first frame", |screen| screen.trim().len() > 20);
    app.send("q");
    let code = app.wait_exit();
    if ANSWERS.contains(&code) {
        Ok(())
    } else {
        Err(format!(
            "exited {code}; the screen was:\n{}",
            app.screen_text()
        ))
    }
}

/// Runs a documented command as a script would: it prints something and exits with a
/// documented code within two minutes.
fn run_as_script(dir: &Path, kubeconfig: &Path, args: &[String]) -> Result<(), String> {
    let stdout = dir.join("stdout");
    let stderr = dir.join("stderr");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .current_dir(dir)
        .env("KUBECONFIG", kubeconfig)
        .env("NO_COLOR", "1")
        .env("XDG_STATE_HOME", dir)
        .env("XDG_CONFIG_HOME", dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&stdout).expect("stdout file"))
        .stderr(std::fs::File::create(&stderr).expect("stderr file"))
        .spawn()
        .expect("flotilla runs");
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            return Err("did not finish within two minutes".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = std::fs::read_to_string(&stdout).unwrap_or_default();
    let err = std::fs::read_to_string(&stderr).unwrap_or_default();
    let code = status.code().map_or(u32::MAX, |c| c as u32);
    if !ANSWERS.contains(&code) {
        return Err(format!("exited {code}:\n{out}{err}"));
    }
    if out.trim().is_empty() && err.trim().is_empty() {
        return Err(format!("printed nothing (exit {code})"));
    }
    Ok(())
}

#[test]
fn every_documented_command_answers() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("page readable");
        for (line, args) in commands(&text) {
            let (dir, kubeconfig) = quick_start();
            let interactive = args
                .iter()
                .any(|a| matches!(a.as_str(), "console" | "watch" | "demo"));
            let result = if interactive {
                run_in_terminal(dir.root(), &kubeconfig, &args)
            } else {
                run_as_script(dir.root(), &kubeconfig, &args)
            };
            ran += 1;
            if let Err(why) = result {
                failures.push(format!(
                    "{}:{line}: flotilla {}: {why}",
                    relative(&page),
                    args.join(" ")
                ));
            }
        }
    }
    assert!(ran >= 5, "the README's commands were not found ({ran})");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
