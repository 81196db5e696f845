//! Plan and apply with one member stopped (`cargo xtask testenv stop`): that member is
//! reported unreachable (exit 3) within the per-cluster timeout, and every other member still
//! gets its objects, as kubectl confirms. In its own test binary because it stops a cluster;
//! it always starts it again.

mod harness;

use std::time::{Duration, Instant};

use harness::{
    FleetDir, Restart, TestNamespace, env, flotilla, kubectl_ok, output_text, testenv_cmd_ok,
};
use serde_json::Value;

/// The per-cluster timeout of plan and apply (backend::fanout::targets::Options::default()).
const CLUSTER_TIMEOUT: Duration = Duration::from_secs(60);

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn a_stopped_member_is_unreachable_and_the_others_succeed() {
    let members = env().members.clone();
    assert!(members.len() >= 3, "needs 3 members: {members:?}");
    let down = members[1].clone();
    let ns = TestNamespace::on("outage-propagate", &members);
    let mut fleet = String::new();
    for member in &members {
        fleet.push_str(&format!(
            "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {{name: {member}}}\n---\n"
        ));
    }
    fleet.push_str(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: settings, namespace: {ns}}}\n\
         data: {{color: blue}}\n---\n\
         apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\n\
         metadata: {{name: settings, namespace: {ns}}}\nspec:\n  resourceSelectors: \
         [{{apiVersion: v1, kind: ConfigMap, name: settings}}]\n  placement: {{}}\n",
        ns = ns.name
    ));
    let dir = FleetDir::new().fleet(fleet);

    let restart = Restart(&down);
    testenv_cmd_ok(&["stop", &down]);

    let started = Instant::now();
    let plan = flotilla(dir.path(), &["plan", "-o", "json"]);
    assert!(
        started.elapsed() < CLUSTER_TIMEOUT,
        "plan must not wait beyond the per-cluster timeout"
    );
    assert_eq!(plan.status.code(), Some(3), "{}", output_text(&plan));
    let items: Value = serde_json::from_slice(&plan.stdout).expect("plan JSON");
    for item in items["items"].as_array().cloned().unwrap_or_default() {
        if item["cluster"] == down.as_str() {
            assert_eq!(item["action"], "error", "{item}");
            assert!(
                item["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains("unreachable"),
                "{item}"
            );
        } else {
            assert_ne!(item["action"], "error", "{item}");
        }
    }

    let apply = flotilla(dir.path(), &["apply", "--yes", "-o", "json"]);
    assert_eq!(apply.status.code(), Some(3), "{}", output_text(&apply));
    let items: Value = serde_json::from_slice(&apply.stdout).expect("apply JSON");
    for item in items["items"].as_array().cloned().unwrap_or_default() {
        if item["cluster"] == down.as_str() {
            // The first failed request stops that cluster; the rest are not attempted.
            assert!(
                item["result"] == "error" || item["result"] == "skipped",
                "{item}"
            );
            assert!(
                item["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains("unreachable"),
                "{item}"
            );
        } else {
            assert_eq!(item["result"], "applied", "{item}");
        }
    }
    for member in members.iter().filter(|m| **m != down) {
        let color = kubectl_ok(
            member,
            &[
                "get",
                "configmap",
                "settings",
                "-n",
                &ns.name,
                "-o",
                "jsonpath={.data.color}",
            ],
        );
        assert_eq!(color, "blue", "{member}");
    }
    let clusters = flotilla(dir.path(), &["clusters", "-o", "json"]);
    assert_eq!(
        clusters.status.code(),
        Some(3),
        "a stopped member: some clusters failed"
    );
    let list: Value = serde_json::from_slice(&clusters.stdout).expect("clusters JSON");
    let health = list["items"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["name"] == down.as_str()).cloned())
        .unwrap_or_default();
    assert_eq!(health["health"], "Unreachable", "{health}");
    drop(restart);
}
