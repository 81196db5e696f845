//! Conventions every command keeps, through the real binary: the console without a terminal
//! says what to run instead (exit 2), a `--context` glob that selects none of the fleet's
//! clusters is an input error, and a signal ends a command with 130 (SIGINT) or 143 (SIGTERM).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

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

#[test]
fn a_context_glob_that_selects_no_fleet_cluster_is_an_input_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fleet = dir.path().join("fleet");
    std::fs::create_dir(&fleet).expect("fleet dir");
    std::fs::write(fleet.join("clusters.yaml"), CLUSTERS).expect("write clusters");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, KUBECONFIG).expect("write kubeconfig");
    let (fleet, kubeconfig) = (
        fleet.to_str().expect("a UTF-8 path"),
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
        let output = flotilla(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{command:?}: {stderr}");
        assert!(stderr.contains("--context prod-*"), "{command:?}: {stderr}");
        assert!(
            stderr.contains("east") && stderr.contains("west"),
            "{command:?}: {stderr}"
        );
    }
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
