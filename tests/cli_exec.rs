//! `flotilla exec` on the demo, through the real binary: the simulated container answers as a
//! shell would, the command's exit code is flotilla's, `--readonly` refuses before anything
//! runs, a danger-class cluster runs nothing until its name is typed, every run is in the
//! audit log without its output, and what cannot be found is an input error (exit 2).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Runs flotilla with `state` as its state and config home, `input` on stdin.
fn flotilla_in<S: AsRef<std::ffi::OsStr>>(state: &Path, args: &[S], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", state)
        .env("USER", "operator")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run flotilla");
    let mut stdin = child.stdin.take().expect("stdin");
    // The command may end before it reads all of it.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    child.wait_with_output().expect("wait for flotilla")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn audit(state: &Path) -> Vec<Value> {
    std::fs::read_to_string(state.join("flotilla/audit.log"))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("an audit line is JSON"))
        .collect()
}

const INVENTORY: &[&str] = &[
    "exec",
    "--demo",
    "Deployment/shop/inventory",
    "--cluster",
    "edge-store-0001",
];

/// `exec` on the demo's inventory at edge-store-0001, running `command`.
fn with(command: &[&str]) -> Vec<String> {
    INVENTORY
        .iter()
        .chain(&["--"])
        .chain(command)
        .map(|word| word.to_string())
        .collect()
}

#[test]
fn the_demos_container_answers_and_its_exit_code_is_flotillas() {
    let state = tempfile::tempdir().expect("temp dir");
    let env = flotilla_in(state.path(), &with(&["env"]), "");
    assert_eq!(env.status.code(), Some(0), "{env:?}");
    let out = text(&env.stdout);
    assert!(
        out.lines()
            .any(|line| line.starts_with("HOSTNAME=inventory-")),
        "{out}"
    );
    assert!(out.contains("KUBERNETES_SERVICE_HOST="), "{out}");
    // stderr says which pod and container it chose.
    let said = text(&env.stderr);
    assert!(
        said.contains("edge-store-0001 pod shop/inventory-")
            && said.contains("container inventory"),
        "{said}"
    );

    let hi = flotilla_in(state.path(), &with(&["sh", "-c", "echo hi; exit 3"]), "");
    assert_eq!(text(&hi.stdout), "hi\n");
    assert_eq!(hi.status.code(), Some(3), "{hi:?}");
    assert!(text(&hi.stderr).contains("command terminated with exit code 3"));

    let missing = flotilla_in(state.path(), &with(&["curl", "localhost"]), "");
    assert_eq!(missing.status.code(), Some(127), "{missing:?}");
    assert!(text(&missing.stderr).contains("curl: command not found"));

    // With -i, stdin is the command's: an interactive shell reads it to `exit`.
    let mut args = INVENTORY.to_vec();
    args.extend(["-i", "--", "sh"]);
    let shell = flotilla_in(
        state.path(),
        &args,
        "hostname\necho $HOME\nexit 5\necho never\n",
    );
    assert_eq!(shell.status.code(), Some(5), "{shell:?}");
    let lines: Vec<String> = text(&shell.stdout).lines().map(str::to_string).collect();
    assert!(lines[0].starts_with("inventory-"), "{lines:?}");
    assert_eq!(lines[1..], ["/root".to_string()]);
}

#[test]
fn readonly_refuses_before_anything_runs() {
    let state = tempfile::tempdir().expect("temp dir");
    let mut args = vec!["--readonly".to_string()];
    args.extend(with(&["env"]));
    let refused = flotilla_in(state.path(), &args, "");
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(text(&refused.stderr).contains("--readonly forbids it"));
    assert!(refused.stdout.is_empty());
    assert!(audit(state.path()).is_empty());
}

#[test]
fn a_danger_class_cluster_runs_nothing_until_its_name_is_typed() {
    let state = tempfile::tempdir().expect("temp dir");
    let args = [
        "exec",
        "--demo",
        "Deployment/payments/ledger",
        "--cluster",
        "prod-eu-west-2",
        "--",
        "hostname",
    ];
    let wrong = flotilla_in(state.path(), &args, "y\n");
    assert_eq!(wrong.status.code(), Some(2), "{wrong:?}");
    assert!(text(&wrong.stderr).contains("type its name"), "{wrong:?}");
    assert!(text(&wrong.stderr).contains("nothing run"));
    assert!(wrong.stdout.is_empty());
    assert!(
        audit(state.path()).is_empty(),
        "nothing ran, nothing is logged"
    );

    let typed = flotilla_in(state.path(), &args, "prod-eu-west-2\n");
    assert_eq!(typed.status.code(), Some(0), "{typed:?}");
    assert!(text(&typed.stdout).starts_with("ledger-"), "{typed:?}");

    let mut yes = args.to_vec();
    yes.insert(5, "--yes");
    let scripted = flotilla_in(state.path(), &yes, "");
    assert_eq!(scripted.status.code(), Some(0), "{scripted:?}");
    assert!(!text(&scripted.stderr).contains("type its name"));
}

#[test]
fn every_run_is_audited_with_where_and_what_but_never_its_output() {
    let state = tempfile::tempdir().expect("temp dir");
    let ran = flotilla_in(
        state.path(),
        &with(&["sh", "-c", "echo secret-output; exit 2"]),
        "",
    );
    assert_eq!(ran.status.code(), Some(2));
    let entries = audit(state.path());
    assert_eq!(entries.len(), 1, "{entries:?}");
    let entry = &entries[0];
    assert_eq!(entry["action"], "exec");
    assert_eq!(entry["user"], "operator");
    assert_eq!(entry["clusters"][0], "edge-store-0001");
    assert!(
        entry["exec"]["pod"]
            .as_str()
            .is_some_and(|pod| pod.starts_with("shop/inventory-")),
        "{entry}"
    );
    assert_eq!(entry["exec"]["container"], "inventory");
    assert_eq!(
        entry["exec"]["command"],
        serde_json::json!(["sh", "-c", "echo secret-output; exit 2"])
    );
    assert_eq!(entry["results"][0]["message"], "exit code 2");
    let line = std::fs::read_to_string(state.path().join("flotilla/audit.log")).expect("log");
    assert_eq!(
        line.matches("secret-output").count(),
        1,
        "only the command names it, never its output: {line}"
    );

    // A bearer token in the command is scrubbed before it is written.
    flotilla_in(
        state.path(),
        &with(&["sh", "-c", "echo Authorization: Bearer abc.def.ghi"]),
        "",
    );
    let log = std::fs::read_to_string(state.path().join("flotilla/audit.log")).expect("log");
    assert!(!log.contains("abc.def.ghi"), "{log}");
}

#[test]
fn what_cannot_be_found_is_an_input_error() {
    let state = tempfile::tempdir().expect("temp dir");
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "exec",
                "--demo",
                "Deployment/shop/inventory",
                "--cluster",
                "edge-store-9",
                "--",
                "env",
            ],
            "no such cluster",
        ),
        (
            &[
                "exec",
                "--demo",
                "Deployment/shop/checkout",
                "--cluster",
                "edge-store-0001",
                "--",
                "env",
            ],
            "does not place it on edge-store-0001",
        ),
        (
            &[
                "exec",
                "--demo",
                "Service/shop/checkout",
                "--cluster",
                "prod-eu-west-1",
                "--",
                "env",
            ],
            "has no pods of its own",
        ),
        (
            &[
                "exec",
                "--demo",
                "Deployment/shop/inventory",
                "--cluster",
                "edge-store-0001",
                "-c",
                "db",
                "--",
                "env",
            ],
            "no such container; its containers: inventory",
        ),
        (
            &[
                "exec",
                "--demo",
                "Deployment/shop/inventory",
                "--cluster",
                "edge-store-0001",
                "--pod",
                "nope",
                "--",
                "env",
            ],
            "--pod nope: not one of Deployment/shop/inventory's pods",
        ),
    ];
    for (args, says) in cases {
        let output = flotilla_in(state.path(), args, "");
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        assert!(
            text(&output.stderr).contains(says),
            "{args:?}: {}",
            text(&output.stderr)
        );
    }
    // No command at all is clap's usage error, also 2.
    let bare = flotilla_in(state.path(), &INVENTORY[..5], "");
    assert_eq!(bare.status.code(), Some(2));
    assert!(audit(state.path()).is_empty());
}

#[test]
fn a_pod_that_is_not_running_is_refused_by_the_cluster() {
    let state = tempfile::tempdir().expect("temp dir");
    let pods = flotilla_in(
        state.path(),
        &[
            "pods",
            "--demo",
            "Deployment/payments/ledger",
            "--cluster",
            "prod-eu-west-2",
            "-o",
            "json",
        ],
        "",
    );
    let value: Value = serde_json::from_slice(&pods.stdout).expect("json");
    let crashing = value["items"][0]["pods"]
        .as_array()
        .expect("pods")
        .iter()
        .find(|pod| pod["status"] == "CrashLoopBackOff")
        .and_then(|pod| pod["name"].as_str())
        .expect("a crashing pod")
        .to_string();
    let output = flotilla_in(
        state.path(),
        &[
            "exec",
            "--demo",
            "Deployment/payments/ledger",
            "--cluster",
            "prod-eu-west-2",
            "--yes",
            "--pod",
            &crashing,
            "--",
            "env",
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert!(
        text(&output.stderr).contains("container not found"),
        "{output:?}"
    );
    let entries = audit(state.path());
    assert_eq!(entries[0]["results"][0]["result"], "failed");
}
