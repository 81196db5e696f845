//! A fleet directory that declares no clusters, on real API servers: the kubeconfig contexts
//! `--context` names are its clusters for every command and the console, exactly as if the
//! fleet declared them — `clusters` lists them, `render` renders for them, `plan` and `apply`
//! place on them (kubectl, an independent client, sees the objects), `status` reads them,
//! `placement set` previews against them, and the console's live backend watches them.

mod harness;

use std::process::Output;

use harness::{FleetDir, TestNamespace, env, flotilla, kubectl_ok, output_text};
use serde_json::Value;

fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("invalid JSON ({e}): {}", output_text(output)))
}

/// Two members named by context, one flag each.
fn members() -> Vec<String> {
    env().members.iter().take(2).cloned().collect()
}

fn with_contexts<'a>(members: &'a [String], args: &[&'a str]) -> Vec<&'a str> {
    let mut all = Vec::new();
    for member in members {
        all.extend(["--context", member.as_str()]);
    }
    all.extend(args);
    all
}

/// A ConfigMap and a ClusterPropagationPolicy placing it everywhere: no inventory at all.
fn fleet(ns: &str) -> FleetDir {
    FleetDir::new().fleet(format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: colors, namespace: {ns}}}\n\
             data: {{color: blue}}\n---\n\
             apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\n\
             metadata: {{name: everywhere}}\nspec:\n  resourceSelectors:\n  \
             - {{apiVersion: v1, kind: ConfigMap}}\n  placement: {{}}\n"
    ))
}

fn cells_for(items: &Value) -> Vec<(String, String)> {
    items
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| {
            (
                item["cluster"].as_str().unwrap_or_default().to_string(),
                item["sync"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn contexts_are_the_inventory_of_a_fleet_that_declares_none() {
    let members = members();
    let ns = TestNamespace::on("contexts-inventory", &members);
    let dir = fleet(&ns.name);
    let fleet = dir.path();
    let run = |args: &[&str]| flotilla(fleet, &with_contexts(&members, args));

    let clusters = run(&["clusters", "-o", "json"]);
    assert_eq!(code(&clusters), 0, "{}", output_text(&clusters));
    let listed: Vec<String> = json(&clusters)["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c["name"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(listed, members, "one cluster per context, named after it");

    let render = run(&["render", "-o", "json"]);
    assert_eq!(code(&render), 0, "{}", output_text(&render));
    let rendered: Vec<String> = json(&render)["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["object"]["kind"] == "ConfigMap")
        .map(|item| item["cluster"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(rendered, members, "{}", output_text(&render));

    let plan = run(&["plan", "-o", "json"]);
    assert_eq!(
        code(&plan),
        1,
        "a first plan has changes: {}",
        output_text(&plan)
    );
    let planned: Vec<String> = json(&plan)["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["resource"]["kind"] == "ConfigMap")
        .map(|item| item["cluster"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(planned, members, "{}", output_text(&plan));

    let apply = run(&["apply", "--yes"]);
    assert_eq!(code(&apply), 0, "{}", output_text(&apply));
    for member in &members {
        let color = kubectl_ok(
            member,
            &[
                "get",
                "configmap",
                "colors",
                "-n",
                &ns.name,
                "-o",
                "jsonpath={.data.color}",
            ],
        );
        assert_eq!(color, "blue", "kubectl on {member}");
    }

    let status = run(&["status", "-o", "json"]);
    assert_eq!(code(&status), 0, "{}", output_text(&status));
    let cells = cells_for(&json(&status)["items"]);
    assert_eq!(
        cells,
        members
            .iter()
            .map(|m| (m.clone(), "InSync".to_string()))
            .collect::<Vec<_>>(),
        "{}",
        output_text(&status)
    );

    // An edit previews against the same clusters: keeping the first member alone names the
    // second as losing it.
    let preview = run(&[
        "placement",
        "set",
        &format!("ConfigMap/{}/colors", ns.name),
        "--clusters",
        &members[0],
        "--dry-run",
        "-o",
        "json",
    ]);
    assert_eq!(code(&preview), 1, "{}", output_text(&preview));
    assert_eq!(
        json(&preview)["lost"],
        serde_json::json!([members[1]]),
        "{}",
        output_text(&preview)
    );
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn the_console_watches_the_contexts_of_a_fleet_without_inventory() {
    use flotilla::app;
    use flotilla::model::StatusKind;

    let members = members();
    let ns = TestNamespace::on("contexts-console", &members);
    let dir = fleet(&ns.name);
    let live_fleet = harness::live_fleet(dir.path(), &with_contexts(&members, &[]));
    let fleet = live_fleet.fleet.clone();
    let names: Vec<&str> = fleet.clusters.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, members, "the console's columns are the contexts");

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
        let _effects = flotilla::backend::kube::live::spawn(live_fleet, events_tx);
        let mut state = app::state_for_fleet(&fleet, "test".into());
        let placed_and_pending = |s: &app::state::State| {
            (0..s.clusters.len()).all(|c| s.cells.kind(0, c) == StatusKind::Pending)
        };
        let shown = harness::run_within(
            &mut state,
            &mut events,
            std::time::Duration::from_secs(60),
            "the ConfigMap placed",
            placed_and_pending,
        )
        .await;
        assert!(
            shown,
            "every member shows the ConfigMap placed, not yet applied: {:?}",
            (0..state.clusters.len())
                .map(|c| state.cells.kind(0, c))
                .collect::<Vec<_>>()
        );
    });
}
