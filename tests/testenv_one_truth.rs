//! One story on every surface, on a real API server: an apply the server refuses (a ConfigMap
//! over its 1 MiB limit, which only the server judges) leaves the cell Failed with the
//! server's answer in `apply`, in a later `status` (which reads the audit log's record of the
//! apply), in `plan`, and in the console's live backend started afterwards; kubectl confirms
//! nothing was created.

mod harness;

use std::path::Path;
use std::process::{Command, Output};

use harness::{FleetDir, TestNamespace, env, inventory, kubectl, output_text};
use serde_json::Value;

/// flotilla with one state directory across calls (the audit log lives there).
fn flotilla(state: &Path, fleet: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--kubeconfig")
        .arg(&env().kubeconfig_path)
        .arg("--fleet")
        .arg(fleet)
        .args(args)
        .env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", state)
        .env_remove("KUBECONFIG")
        .output()
        .expect("run flotilla")
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("invalid JSON ({e}): {}", output_text(output)))
}

fn cell<'a>(items: &'a Value, name: &str) -> &'a Value {
    items
        .as_array()
        .into_iter()
        .flatten()
        .find(|item| item["resource"]["name"] == name)
        .unwrap_or_else(|| panic!("no item for {name}: {items}"))
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn a_refused_apply_is_failed_with_the_servers_answer_on_every_surface() {
    let member = env().members[0].clone();
    let ns = TestNamespace::on("one-truth", std::slice::from_ref(&member));
    let big = "x".repeat(1_100_000);
    let dir = FleetDir::new().fleet(format!(
        "{}apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big, namespace: {ns}}}\n\
             data: {{blob: {big}}}\n---\n\
             apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\n\
             metadata: {{name: big, namespace: {ns}}}\nspec:\n  resourceSelectors:\n  \
             - {{apiVersion: v1, kind: ConfigMap, name: big}}\n  placement: {{}}\n",
        inventory(&[(&member, &member, "prod")]),
        ns = ns.name
    ));
    let (state, fleet) = (dir.state(), dir.path().to_path_buf());

    let apply = flotilla(&state, &fleet, &["apply", "--yes", "-o", "json"]);
    assert_eq!(apply.status.code(), Some(3), "{}", output_text(&apply));
    let refused = cell(&json(&apply)["items"], "big").clone();
    assert_eq!(refused["result"], "error", "{refused}");
    let answer = refused["message"].as_str().unwrap_or_default().to_string();
    assert!(answer.contains("1048576"), "the server's answer: {answer}");
    let held = kubectl(&member, &["get", "configmap", "big", "-n", &ns.name]);
    assert!(!held.status.success(), "kubectl: nothing was created");

    // status, run afterwards, says what the apply met.
    let status = flotilla(&state, &fleet, &["status", "-o", "json"]);
    assert_eq!(status.status.code(), Some(3), "{}", output_text(&status));
    let status = json(&status);
    let said = cell(&status["items"], "big");
    assert_eq!(said["sync"], "Failed", "{said}");
    assert_eq!(said["reason"].as_str(), Some(answer.as_str()), "{said}");
    assert!(said["since"].is_string(), "when it was refused: {said}");
    assert_eq!(status["totals"]["sync"]["Failed"], 1, "{status}");

    // plan's dry run meets the same refusal.
    let plan = flotilla(&state, &fleet, &["plan", "-o", "json"]);
    assert_eq!(plan.status.code(), Some(3), "{}", output_text(&plan));
    assert_eq!(cell(&json(&plan)["items"], "big")["action"], "error");

    // The console started afterwards shows the cell Failed with the same answer.
    let mut live = harness::live_fleet(&fleet, &[]);
    // The audit log this test's commands wrote (the console reads its own user's).
    let log = state.join("flotilla").join("audit.log");
    let entries = flotilla::jsonl::read::<Value>(&log, |_| true)
        .expect("the audit log")
        .lines
        .into_iter()
        .map(|(_, entry)| entry)
        .collect::<Vec<_>>();
    live.failures = flotilla::backend::audit::last_failures(&entries);
    let fleet = live.fleet.clone();
    let row = fleet
        .resources
        .iter()
        .position(|r| r.target.name == "big")
        .expect("the row");
    let column = fleet.cluster_index(&member).expect("the column");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
        let _effects = flotilla::backend::kube::live::spawn(live, events_tx);
        let mut state = flotilla::app::state_for_fleet(&fleet, "test".into());
        let shown = |s: &flotilla::app::state::State| {
            s.clusters[column].status.health == flotilla::model::Health::Ready
                && s.cells.kind(row, column) == flotilla::model::StatusKind::Failed
        };
        let held = harness::run_within(
            &mut state,
            &mut events,
            std::time::Duration::from_secs(60),
            "the cell Failed",
            shown,
        )
        .await;
        assert!(
            held,
            "the console shows {:?} ({:?})",
            state.cells.kind(row, column),
            state.cells.message(row, column)
        );
        assert_eq!(state.cells.message(row, column), Some(answer.as_str()));
    });
}
