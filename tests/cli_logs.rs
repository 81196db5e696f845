//! `flotilla logs` on the demo, through the real binary: every line names its cluster, pod and
//! container; lines of all clusters come in time order; `--tail`, `--since`, `--previous`
//! (the crash-looping pod's last run before this one, ending in its crash), `-c`, `-f` and
//! `-o json` do what kubectl users expect; bad input is exit 2 with the reason, a cluster that
//! cannot be reached is named on stderr with exit 3.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

fn command(args: &[&str], state: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_flotilla"));
    command
        .args(args)
        .env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", state)
        .env("NO_COLOR", "1");
    command
}

fn flotilla(args: &[&str]) -> Output {
    let state = tempfile::tempdir().expect("temp dir");
    command(args, state.path()).output().expect("run flotilla")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).to_string()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).to_string()
}

/// `-o json` lines.
fn objects(output: &Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|err| panic!("not a JSON line ({err}): {line:?}"))
        })
        .collect()
}

const LEDGER: &str = "Deployment/payments/ledger";
const LEDGER_CLUSTERS: [&str; 3] = ["prod-eu-west-1", "prod-eu-west-2", "prod-us-east-1"];

#[test]
fn each_line_names_its_cluster_pod_and_container_in_time_order() {
    let output = flotilla(&["logs", "--demo", LEDGER, "--tail", "2", "-o", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = objects(&output);
    let mut per_container = std::collections::BTreeMap::<(String, String), usize>::new();
    for line in &lines {
        assert!(
            LEDGER_CLUSTERS.contains(&line["cluster"].as_str().unwrap_or("")),
            "{line}"
        );
        assert_eq!(line["namespace"], "payments");
        assert_eq!(line["container"], "ledger");
        assert!(
            line["pod"]
                .as_str()
                .is_some_and(|p| p.starts_with("ledger-"))
        );
        *per_container
            .entry((
                line["cluster"].as_str().unwrap_or("").into(),
                line["pod"].as_str().unwrap_or("").into(),
            ))
            .or_default() += 1;
    }
    // --tail is per container, and every placed cluster's pods speak.
    assert!(per_container.values().all(|&n| n <= 2), "{per_container:?}");
    for cluster in LEDGER_CLUSTERS {
        assert!(per_container.keys().any(|(c, _)| c == cluster), "{cluster}");
    }
    let times: Vec<Timestamp> = lines
        .iter()
        .map(|line| {
            line["time"]
                .as_str()
                .expect("time")
                .parse()
                .expect("rfc3339")
        })
        .collect();
    assert!(times.is_sorted(), "interleaved by time: {times:?}");

    // As text: CLUSTER POD CONTAINER TIME TEXT, the time as kubectl prints it, in order.
    let text = flotilla(&["logs", "--demo", LEDGER, "--tail", "2", "--timestamps"]);
    assert_eq!(text.status.code(), Some(0));
    let mut previous: Option<Timestamp> = None;
    for printed in stdout(&text).lines() {
        let words: Vec<&str> = printed.splitn(5, ' ').collect();
        assert_eq!(words.len(), 5, "{printed}");
        assert!(LEDGER_CLUSTERS.contains(&words[0]), "{printed}");
        assert!(
            words[1].starts_with("ledger-") && words[2] == "ledger",
            "{printed}"
        );
        let fraction = words[3].rsplit_once('.').map(|(_, f)| f).unwrap_or("");
        assert_eq!(fraction.len(), 10, "nine digits and Z: {printed}");
        let at: Timestamp = words[3].parse().expect("a time");
        assert!(previous.is_none_or(|p| p <= at), "in time order: {printed}");
        previous = Some(at);
    }
    assert!(
        !stdout(&text).contains('\x1b'),
        "NO_COLOR: no escape sequences"
    );
}

#[test]
fn one_cluster_since_and_container_narrow_what_is_read() {
    let all = objects(&flotilla(&["logs", "--demo", LEDGER, "-o", "json"]));
    let one = flotilla(&[
        "logs",
        "--demo",
        LEDGER,
        "--cluster",
        "prod-us-east-1",
        "-c",
        "ledger",
        "-o",
        "json",
    ]);
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    let one = objects(&one);
    assert!(!one.is_empty());
    assert!(one.iter().all(|l| l["cluster"] == "prod-us-east-1"));
    assert!(one.len() < all.len());

    let since = objects(&flotilla(&[
        "logs", "--demo", LEDGER, "--since", "30s", "-o", "json",
    ]));
    assert!(!since.is_empty() && since.len() < all.len());
    let now = Timestamp::now();
    for line in &since {
        let at: Timestamp = line["time"].as_str().unwrap_or("").parse().expect("time");
        // Read a moment ago: nothing older than 30 s then (and a little slack for the run).
        assert!(now.duration_since(at).as_secs() <= 40, "{line}");
    }

    let missing = flotilla(&["logs", "--demo", LEDGER, "-c", "sidecar"]);
    assert_eq!(missing.status.code(), Some(3));
    assert!(stderr(&missing).contains("has no container \"sidecar\" (it has ledger)"));
}

#[test]
fn previous_reads_the_crash_loops_last_run() {
    let output = flotilla(&["logs", "--demo", LEDGER, "--previous", "-o", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = objects(&output);
    // Only the crash-looping pod on prod-eu-west-2 ran before; its run ended in the crash.
    assert!(
        lines.iter().all(|l| l["cluster"] == "prod-eu-west-2"),
        "{lines:?}"
    );
    let last = lines.last().expect("a line");
    assert!(
        last["text"].as_str().unwrap_or("").starts_with("fatal:"),
        "{last}"
    );
    let current = objects(&flotilla(&[
        "logs",
        "--demo",
        LEDGER,
        "--cluster",
        "prod-eu-west-2",
        "-o",
        "json",
    ]));
    let crashing: Vec<&Value> = current.iter().filter(|l| l["pod"] == last["pod"]).collect();
    let first_now: Timestamp = crashing[0]["time"]
        .as_str()
        .unwrap_or("")
        .parse()
        .expect("t");
    let previous_end: Timestamp = last["time"].as_str().unwrap_or("").parse().expect("t");
    assert!(
        previous_end < first_now,
        "the previous run ended before this one began"
    );
    assert!(stderr(&output).contains("no previous run (never restarted)"));
}

#[test]
fn follow_keeps_the_lines_coming() {
    let state = tempfile::tempdir().expect("temp dir");
    let mut child = command(
        &[
            "logs",
            "--demo",
            LEDGER,
            "--cluster",
            "prod-us-east-1",
            "--tail",
            "0",
            "-f",
        ],
        state.path(),
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .expect("spawn");
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok).take(3) {
            let _ = tx.send(line);
        }
    });
    let lines: Vec<String> = (0..3)
        .map_while(|_| rx.recv_timeout(Duration::from_secs(30)).ok())
        .collect();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(lines.len(), 3, "new lines while following: {lines:?}");
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("prod-us-east-1 ledger-"))
    );
}

#[test]
fn bad_input_is_exit_2_and_an_unreachable_cluster_exit_3() {
    for (args, says) in [
        (
            vec!["logs", "--demo", "Service/payments/ledger"],
            "has no pods of its own",
        ),
        (
            vec!["logs", "--demo", LEDGER, "--since", "5x"],
            "expected a duration",
        ),
        (vec!["logs", "--demo", LEDGER, "-o", "yaml"], "-o json"),
        (
            vec!["logs", "--demo", "Deployment/payments/nothing"],
            "no such",
        ),
        (
            vec!["logs", "--demo", LEDGER, "--cluster", "nowhere"],
            "nowhere",
        ),
    ] {
        let output = flotilla(&args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(says),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty());
    }
    let output = flotilla(&[
        "logs",
        "--demo",
        "DaemonSet/monitoring/node-exporter",
        "--tail",
        "1",
    ]);
    assert_eq!(output.status.code(), Some(3));
    let err = stderr(&output);
    assert!(
        err.contains("edge-store-0003") && err.contains("unreachable"),
        "{err}"
    );
    assert!(
        err.contains("could not read every log: edge-store-0003"),
        "{err}"
    );
    // The reachable clusters' lines still came.
    assert!(stdout(&output).lines().count() > 10);
}
