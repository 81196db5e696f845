//! `flotilla pods` and `flotilla images` on the demo, through the real binary: the simulated
//! pods in trouble (a crash loop, an OOM kill, a pod the tainted GPU cluster cannot place) and
//! the old image two clusters still run are what a user sees, in the table and in `-o json`,
//! with the CLI contract's exit codes.

use std::process::{Command, Output};

use serde_json::Value;

fn flotilla(args: &[&str]) -> Output {
    let state = tempfile::tempdir().expect("temp dir");
    Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_CONFIG_HOME", state.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("run flotilla")
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "not JSON ({err}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn items(value: &Value) -> &Vec<Value> {
    value["items"].as_array().expect("items")
}

/// The cell of `cluster` and workload `key` (`Kind/ns/name`).
fn cell<'a>(value: &'a Value, cluster: &str, key: &str) -> &'a Value {
    let (kind, rest) = key.split_once('/').expect("key");
    let (namespace, name) = rest.split_once('/').expect("key");
    items(value)
        .iter()
        .find(|item| {
            item["cluster"] == cluster
                && item["resource"]["kind"] == kind
                && item["resource"]["namespace"] == namespace
                && item["resource"]["name"] == name
        })
        .unwrap_or_else(|| panic!("no cell {key} on {cluster}"))
}

#[test]
fn pods_on_the_demo_name_each_trouble_where_it_is() {
    let output = flotilla(&["pods", "--demo", "-o", "json"]);
    // The demo's unreachable store could not be read: some clusters failed.
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let value = json(&output);
    let ledger = cell(&value, "prod-eu-west-2", "Deployment/payments/ledger");
    assert_eq!(ledger["summary"], "1/2 ready, 1 CrashLoopBackOff: exit 1");
    let crashing: Vec<&Value> = ledger["pods"]
        .as_array()
        .expect("pods")
        .iter()
        .filter(|pod| pod["status"] == "CrashLoopBackOff")
        .collect();
    assert_eq!(crashing.len(), 1);
    assert_eq!(crashing[0]["lastTermination"]["exitCode"], 1);
    assert_eq!(crashing[0]["restarts"], 7);

    let inventory = cell(&value, "prod-us-east-1", "Deployment/shop/inventory");
    assert_eq!(inventory["worst"], "OOMKilled");
    assert!(
        inventory["summary"]
            .as_str()
            .is_some_and(|s| s.contains("1 OOMKilled 3m ago")),
        "{inventory}"
    );

    let trainer = cell(&value, "gpu-us-east-1", "Job/ml/trainer");
    let pending: Vec<&Value> = trainer["pods"]
        .as_array()
        .expect("pods")
        .iter()
        .filter(|pod| pod["trouble"] == "Pending")
        .collect();
    assert_eq!(pending.len(), 1);
    assert!(
        pending[0].get("node").is_none(),
        "an unscheduled pod has no node"
    );
    assert!(
        pending[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("untolerated taint")),
        "{}",
        pending[0]
    );

    let store = cell(&value, "edge-store-0003", "Deployment/shop/inventory");
    assert!(
        store["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("unreachable")),
        "{store}"
    );

    // A settled workload's pods are all ready, none in trouble.
    let fraud = cell(&value, "prod-eu-west-1", "Deployment/payments/fraud-scorer");
    assert!(fraud.get("worst").is_none());
    assert_eq!(fraud["summary"], "3/3 ready");
}

#[test]
fn the_pods_count_agrees_with_the_cells_health() {
    // status says the stalled ledger has 1 of 2 replicas available; pods shows which one.
    let status = json(&flotilla(&[
        "status",
        "--demo",
        "--cluster",
        "prod-eu-west-2",
        "--resource",
        "Deployment/payments/ledger",
        "-o",
        "json",
    ]));
    let reason = items(&status)[0]["reason"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(reason.starts_with("1/2 available"), "{reason}");
    let pods = json(&flotilla(&[
        "pods",
        "--demo",
        "deploy/payments/ledger",
        "--cluster",
        "prod-eu-west-2",
        "-o",
        "json",
    ]));
    assert_eq!(items(&pods).len(), 1);
    assert!(
        items(&pods)[0]["summary"]
            .as_str()
            .is_some_and(|s| s.starts_with("1/2 ready"))
    );
}

#[test]
fn a_state_narrows_the_pods_and_the_exit_says_so() {
    let output = flotilla(&[
        "pods",
        "--demo",
        "--cluster",
        "prod-eu-west-2",
        "--cluster",
        "prod-us-east-1",
        "--state",
        "crashloopbackoff",
    ]);
    // Every chosen cluster answered and a pod is in trouble: exit 1.
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let table = String::from_utf8_lossy(&output.stdout);
    let rows: Vec<&str> = table
        .lines()
        .filter(|line| line.starts_with("prod-"))
        .collect();
    assert!(
        rows.iter().any(|row| row.contains("ledger-")
            && row.contains("CrashLoopBackOff")
            && row.contains("Error (exit 1)")),
        "{table}"
    );
    assert!(
        !table.contains("OOMKilled (exit 137)"),
        "only the state asked for: {table}"
    );
    assert!(
        table.contains("Pods: 1 in 1 workload cells on 1 clusters; 1 CrashLoopBackOff."),
        "{table}"
    );

    // The cell's line counts all its pods, not only those the state shows.
    let pending = json(&flotilla(&[
        "pods",
        "--demo",
        "--cluster",
        "gpu-us-east-1",
        "--state",
        "Pending",
        "-o",
        "json",
    ]));
    assert_eq!(items(&pending).len(), 1);
    assert_eq!(items(&pending)[0]["pods"].as_array().map(Vec::len), Some(1));
    assert!(
        items(&pending)[0]["summary"]
            .as_str()
            .is_some_and(|s| s.starts_with("1/2 ready, 1 Pending: ")),
        "{pending}"
    );

    let healthy = flotilla(&["pods", "--demo", "--cluster", "staging-eu-west-1"]);
    assert_eq!(healthy.status.code(), Some(0), "{healthy:?}");
}

#[test]
fn a_wrong_state_or_a_kind_without_pods_is_an_input_error() {
    let output = flotilla(&["pods", "--demo", "--state", "Sleepy"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("CrashLoopBackOff") && stderr.contains("Restarting"),
        "the states there are: {stderr}"
    );
    let output = flotilla(&["pods", "--demo", "ConfigMap/shop/registry-config"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("has no pods of its own"));
    let output = flotilla(&["images", "--demo", "Deployment/shop/nowhere"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn images_show_the_old_image_on_the_two_clusters_that_run_it() {
    let output = flotilla(&["images", "--demo", "Deployment/shop/checkout", "-o", "json"]);
    assert_eq!(output.status.code(), Some(1), "skew found: {output:?}");
    let value = json(&output);
    let skewed: Vec<&str> = items(&value)
        .iter()
        .filter(|item| item["skew"] == true)
        .map(|item| item["cluster"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(skewed, ["prod-eu-west-1", "prod-us-east-1"]);
    for item in items(&value).iter().filter(|item| item["skew"] == true) {
        let desired = item["desired"].as_str().unwrap_or("");
        // The regional registry the fleet's override renders, at the old tag.
        let (repository, tag) = desired.rsplit_once(':').expect("tagged");
        assert_eq!(tag, "2.4.1");
        assert_eq!(
            item["running"],
            serde_json::json!([format!("{repository}:2.3.0")])
        );
        assert_eq!(item["live"], item["desired"], "the template is current");
    }
    let table = String::from_utf8_lossy(
        &flotilla(&["images", "--demo", "Deployment/shop/checkout"]).stdout,
    )
    .into_owned();
    assert!(
        table.contains(
            "Deployment/shop/checkout checkout: prod-eu-west-1, prod-us-east-1 run an image other than the desired one."
        ),
        "{table}"
    );
    let settled = flotilla(&["images", "--demo", "Deployment/payments/ledger"]);
    assert_eq!(settled.status.code(), Some(0), "{settled:?}");
}

/// A workload that is not in the fleet is named as typed (the commands take it as their
/// argument, not as `--resource`), with the nearest workload and only workloads listed.
#[test]
fn an_unknown_workload_is_named_as_typed_among_the_fleets_workloads() {
    for command in ["pods", "images", "logs"] {
        let output = flotilla(&[command, "--demo", "Deployment/shop/checkot"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{command}: {stderr}");
        assert!(
            stderr.starts_with(
                "error: Deployment/shop/checkot: no such workload in the fleet; did you mean Deployment/shop/checkout?"
            ),
            "{command}: {stderr}"
        );
        assert!(!stderr.contains("--resource"), "{command}: {stderr}");
        assert!(!stderr.contains("Namespace/"), "only workloads: {stderr}");
    }
}
