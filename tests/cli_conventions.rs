//! Conventions every command keeps, through the real binary: the console without a terminal
//! says what to run instead (exit 2), a `--context` glob that selects none of the fleet's
//! clusters is an input error and globs take character classes, a signal ends a command with 130 (SIGINT) or 143 (SIGTERM), an
//! apply it ends is in the audit log as interrupted, and a reader that closes the pipe early
//! (`| head`) ends a command quietly; `--inventory` spelt any other way than
//! `clusterprofiles:CONTEXT` is an input error naming that form; `render` places a fleet without
//! an inventory on the contexts `--context` names, and says when there are none.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod harness;

use harness::FleetDir;

fn flotilla(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .env("XDG_STATE_HOME", dir)
        .env("XDG_CONFIG_HOME", dir)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .output()
        .expect("run flotilla")
}

#[test]
fn the_console_without_a_terminal_says_what_to_run_instead() {
    let dir = tempfile::tempdir().expect("temp dir");
    for args in [&["demo"][..], &["console", "--demo"], &["watch", "--demo"]] {
        let output = flotilla(dir.path(), args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("needs a terminal"), "{args:?}: {stderr}");
        assert!(stderr.contains("flotilla render"), "{args:?}: {stderr}");
        assert!(!stderr.contains("os error"), "{args:?}: {stderr}");
    }
}

const CLUSTERS: &str = "\
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: east}
spec: {syncMode: Push}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: west}
spec: {syncMode: Push}
";

const KUBECONFIG: &str = "\
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: 'https://127.0.0.1:1'}
users:
- name: u
  user: {token: t}
contexts:
- name: east
  context: {cluster: c, user: u}
- name: west
  context: {cluster: c, user: u}
current-context: east
";

/// A fleet of [`CLUSTERS`], with [`KUBECONFIG`] beside it.
fn east_and_west() -> FleetDir {
    let fleet = FleetDir::new().clusters(CLUSTERS);
    std::fs::write(fleet.beside("kubeconfig"), KUBECONFIG).expect("write kubeconfig");
    fleet
}

#[test]
fn a_context_glob_that_selects_no_fleet_cluster_is_an_input_error() {
    let dir = east_and_west();
    let kubeconfig = dir.beside("kubeconfig");
    let (fleet, kubeconfig) = (
        dir.path().to_str().expect("a UTF-8 path"),
        kubeconfig.to_str().expect("a UTF-8 path"),
    );
    for command in [
        &["plan"][..],
        &["drift"],
        &["apply", "--yes"],
        &["repair", "--revert", "--yes"],
    ] {
        let mut args = vec!["--fleet", fleet, "--kubeconfig", kubeconfig];
        args.extend(["--context", "prod-*"]);
        args.extend(command);
        let output = flotilla(dir.root(), &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{command:?}: {stderr}");
        assert!(stderr.contains("--context prod-*"), "{command:?}: {stderr}");
        assert!(
            stderr.contains("east") && stderr.contains("west"),
            "{command:?}: {stderr}"
        );
    }
}

/// `--context` reads globs as a shell does, character classes included; a pattern that is no
/// glob is refused before anything runs.
#[test]
fn context_globs_take_character_classes_and_a_bad_one_is_an_input_error() {
    let dir = east_and_west();
    let kubeconfig = dir.beside("kubeconfig");
    let (fleet, kubeconfig) = (
        dir.path().to_str().expect("a UTF-8 path"),
        kubeconfig.to_str().expect("a UTF-8 path"),
    );
    let base = ["--fleet", fleet, "--kubeconfig", kubeconfig];
    let picked = flotilla(
        dir.root(),
        &[
            &base[..],
            &["--context", "[w-z]*", "clusters", "-o", "name"],
        ]
        .concat(),
    );
    let stdout = String::from_utf8_lossy(&picked.stdout);
    // The one selected cluster's server is a closed port: unreachable, exit 3.
    assert_eq!(picked.status.code(), Some(3), "{stdout}");
    assert_eq!(stdout.lines().collect::<Vec<_>>(), ["west"]);

    let bad = flotilla(
        dir.root(),
        &[&base[..], &["--context", "prod-[ab", "clusters"]].concat(),
    );
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("\"prod-[ab\" is not a glob"), "{stderr}");
    assert!(bad.stdout.is_empty());
}

/// Runs `plan` with a kubeconfig that is a FIFO nobody writes to, so the command waits on
/// it; then sends the signal and returns the exit status.
fn signalled_plan(signal: &str) -> Option<i32> {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("kubeconfig");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--fleet")
        .arg(dir.path().join("no-fleet"))
        .arg("--kubeconfig")
        .arg(&fifo)
        .args(["--context", "east", "plan"])
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn flotilla");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().expect("poll").is_none(),
        "plan waits on the kubeconfig"
    );
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success());
    child.wait().expect("wait").code()
}

#[test]
fn a_signal_ends_a_command_with_128_plus_its_number() {
    assert_eq!(signalled_plan("INT"), Some(130));
    assert_eq!(signalled_plan("TERM"), Some(143));
}

/// An apply that SIGINT ends while a cluster holds its request leaves an audit entry naming the
/// cluster and the objects, with the result `interrupted`: what reached the cluster is unknown.
#[test]
fn an_apply_ended_by_sigint_is_in_the_audit_log_as_interrupted() {
    let dir = FleetDir::new();
    // A cluster that accepts connections and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let (accepted_tx, accepted) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
            let _ = accepted_tx.send(());
        }
    });
    std::fs::write(
        dir.beside("kubeconfig"),
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: east\n  cluster: {{server: \"https://127.0.0.1:{port}\"}}\n\
             users:\n- name: u\n  user: {{token: t}}\ncontexts:\n- name: east\n  context: {{cluster: east, user: u}}\n"
        ),
    )
    .expect("write kubeconfig");
    dir.write(
        "fleet.yaml",
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: east, annotations: {flotilla.dev/context: east}}\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata: {name: colors, namespace: shop}\ndata: {color: blue}\n---\n\
         apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p, namespace: shop}\n\
         spec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: colors}]\n  placement: {clusterAffinity: {clusterNames: [east]}}\n",
    );
    let state = dir.beside("state");
    let mut child = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--fleet")
        .arg(dir.path())
        .arg("--kubeconfig")
        .arg(dir.beside("kubeconfig"))
        .args(["apply", "--yes"])
        .env("XDG_STATE_HOME", &state)
        .env("XDG_CONFIG_HOME", &state)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn flotilla");
    let reached = accepted.recv_timeout(Duration::from_secs(60));
    if reached.is_err() {
        let _ = child.kill();
    }
    assert!(reached.is_ok(), "the apply never reached the cluster");
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success());
    assert_eq!(child.wait().expect("wait").code(), Some(130));

    let log = std::fs::read_to_string(state.join("flotilla/audit.log")).expect("the audit log");
    let entries: Vec<serde_json::Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let [entry] = entries.as_slice() else {
        panic!("one entry: {log}");
    };
    assert_eq!(entry["action"], "apply", "{entry}");
    assert_eq!(entry["clusters"], serde_json::json!(["east"]), "{entry}");
    let objects = entry["objects"].to_string();
    assert!(objects.contains("ConfigMap/shop/colors"), "{entry}");
    assert_eq!(entry["results"][0]["result"], "interrupted", "{entry}");
    assert!(
        entry["results"][0]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("SIGINT"),
        "{entry}"
    );
}

#[test]
fn a_reader_that_closes_the_pipe_early_ends_the_command_quietly() {
    let dir = tempfile::tempdir().expect("temp dir");
    for args in [
        ["status", "--demo", "--cluster", "prod-eu-west-1"],
        ["clusters", "--demo", "-o", "wide"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .args(args)
            .env("XDG_STATE_HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path())
            .env_remove("KUBECONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn flotilla");
        // As `| head -0` does: the reader is gone before anything is written.
        drop(child.stdout.take());
        let output = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: not an input error"
        );
    }
}

#[test]
fn an_inventory_flag_spelt_otherwise_names_the_accepted_form() {
    let dir = tempfile::tempdir().expect("temp dir");
    for value in [
        "clusterprofile:hub",
        "clusterprofiles:",
        "hub",
        "ClusterProfiles:hub",
    ] {
        let output = flotilla(dir.path(), &["clusters", "--inventory", value]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{value}: {stderr}");
        assert!(
            stderr.contains("clusterprofiles:CONTEXT"),
            "{value}: {stderr}"
        );
    }
    // Well spelt, but naming a context the kubeconfig lacks: an input error too.
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n",
    )
    .expect("kubeconfig");
    let output = flotilla(
        dir.path(),
        &[
            "clusters",
            "--kubeconfig",
            &kubeconfig.display().to_string(),
            "--inventory",
            "clusterprofiles:nowhere",
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--inventory clusterprofiles:nowhere"),
        "{stderr}"
    );
}

/// A fleet without an inventory places on the contexts `--context` names, in `render` as in
/// every other command; without contexts it says why nothing is placed instead of printing an
/// empty matrix as if that were the fleet's intent.
#[test]
fn render_places_an_inventoryless_fleet_on_the_named_contexts_and_says_when_there_are_none() {
    let dir = FleetDir::new().fleet(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\ndata: {x: '1'}\n---\n\
         apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {name: all}\n\
         spec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]\n  placement: {}\n",
    );
    std::fs::write(dir.beside("kubeconfig"), KUBECONFIG).expect("write kubeconfig");
    let kubeconfig = dir.beside("kubeconfig");
    let (fleet, kubeconfig) = (
        dir.path().to_str().expect("a UTF-8 path"),
        kubeconfig.to_str().expect("a UTF-8 path"),
    );
    let base = ["--fleet", fleet, "--kubeconfig", kubeconfig];
    let named = flotilla(
        dir.root(),
        &[&base[..], &["--context", "*", "render", "-o", "json"]].concat(),
    );
    assert_eq!(named.status.code(), Some(0), "{named:?}");
    let json: serde_json::Value = serde_json::from_slice(&named.stdout).expect("JSON");
    let mut placed: Vec<&str> = json["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|item| item["object"]["kind"] == "ConfigMap")
        .filter_map(|item| item["cluster"].as_str())
        .collect();
    placed.sort_unstable();
    assert_eq!(placed, ["east", "west"], "{json}");
    assert!(named.stderr.is_empty(), "{named:?}");

    let none = flotilla(dir.root(), &[&base[..], &["render"]].concat());
    let stderr = String::from_utf8_lossy(&none.stderr);
    assert_eq!(none.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("declares no clusters"), "{stderr}");
    assert!(stderr.contains("--context GLOB"), "{stderr}");
}
