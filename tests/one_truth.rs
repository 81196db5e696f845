//! One story on every surface: on the demo and on generated fleets (`--demo-scale` with
//! several seeds, each with its own unreachable and not-Ready clusters, refused applies,
//! pending and drifted cells), `status -o json` (run through the binary), the console's state
//! (what the matrix and the wall are drawn from) and `plan -o json` agree on every cell's sync
//! and health, and on the totals.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Arc;

use flotilla::app::{self, Action};
use flotilla::backend::sim::{Scenario, SimCore};
use flotilla::engine::load_fleet;
use serde_json::Value;

fn flotilla(args: &[&str]) -> Value {
    let state = tempfile::tempdir().expect("state dir");
    let output = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_CONFIG_HOME", state.path())
        .env_remove("KUBECONFIG")
        .output()
        .expect("run flotilla");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// The console's state after the simulated fleet's first report, as `flotilla demo` starts.
fn console(
    files: &[flotilla::engine::SourceFile],
    synthetic: bool,
    seed: u64,
) -> app::state::State {
    let (fleet, errors) = load_fleet(files);
    assert!(errors.is_empty(), "{errors:?}");
    let fleet = Arc::new(fleet);
    let scenario = Scenario::for_demo(&fleet.clusters, synthetic, seed);
    let core = SimCore::new(fleet.clone(), &scenario, seed);
    let mut state = app::state_for_fleet(&fleet, "demo".into());
    app::update(&mut state, Action::Backend(core.snapshot()));
    for health in core.health_events() {
        app::update(&mut state, Action::Backend(health));
    }
    // Each cluster's first answer, as the demo's task sends it.
    let mut settled = std::collections::HashMap::new();
    for cluster in 0..core.cluster_count() {
        for event in core.probe(cluster, &mut settled) {
            app::update(&mut state, Action::Backend(event));
        }
    }
    state
}

/// Per (resource key, cluster): the console's sync and live health (`None`: no health).
fn console_cells(
    state: &app::state::State,
) -> BTreeMap<(String, String), (String, Option<String>)> {
    let mut cells = BTreeMap::new();
    for (row, resource) in state.resources.iter().enumerate() {
        for (column, cluster) in state.clusters.iter().enumerate() {
            let sync = state.cells.kind(row, column).as_str().to_string();
            let health = state
                .cells
                .health(row, column)
                .map(|h| h.kind.as_str().to_string());
            cells.insert(
                (resource.target.display_key(), cluster.spec.name.clone()),
                (sync, health),
            );
        }
    }
    cells
}

fn key_of(item: &Value) -> (String, String) {
    let resource = &item["resource"];
    let key = match resource["namespace"].as_str() {
        Some(ns) => format!(
            "{}/{ns}/{}",
            resource["kind"].as_str().unwrap_or_default(),
            resource["name"].as_str().unwrap_or_default()
        ),
        None => format!(
            "{}/{}",
            resource["kind"].as_str().unwrap_or_default(),
            resource["name"].as_str().unwrap_or_default()
        ),
    };
    (
        key,
        item["cluster"].as_str().unwrap_or_default().to_string(),
    )
}

/// The health a one-shot read and the console both name: the live object's verdict (`None`:
/// not held, no health for the kind, or not assessed).
fn assessed(health: &str) -> Option<String> {
    matches!(health, "Healthy" | "Progressing" | "Degraded" | "Suspended")
        .then(|| health.to_string())
}

fn agree(args: &[&str], files: &[flotilla::engine::SourceFile], synthetic: bool, seed: u64) {
    let state = console(files, synthetic, seed);
    let shown = console_cells(&state);
    let mut status_args = args.to_vec();
    status_args.extend(["status", "-o", "json"]);
    let status = flotilla(&status_args);
    let items = status["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        items.len(),
        shown.len(),
        "{args:?}: one status item per cell"
    );
    for item in &items {
        let key = key_of(item);
        let (sync, health) = shown
            .get(&key)
            .unwrap_or_else(|| panic!("{args:?}: {key:?} is no console cell"));
        assert_eq!(
            item["sync"].as_str(),
            Some(sync.as_str()),
            "{args:?} {key:?}: {item}"
        );
        // The same verdict, healthy ones included: the wall's Healthy count is drawn from
        // the console's.
        let said = assessed(item["health"].as_str().unwrap_or_default());
        assert_eq!(
            said.as_deref(),
            health.as_deref(),
            "{args:?} {key:?}: the console's health against status's {item}"
        );
    }
    // The health totals are the console's counts of each verdict (the wall's Healthy,
    // Degraded and Progressing tiles).
    for kind in [
        flotilla::model::HealthKind::Healthy,
        flotilla::model::HealthKind::Progressing,
        flotilla::model::HealthKind::Degraded,
    ] {
        assert_eq!(
            status["totals"]["health"][kind.as_str()]
                .as_u64()
                .unwrap_or(0),
            u64::from(state.cells.health_count(kind)),
            "{args:?}: {kind:?} cells"
        );
    }
    // The totals say the same as the console's counts (the wall's tiles are drawn from them).
    for (kind, count) in status["totals"]["sync"].as_object().into_iter().flatten() {
        let kind = flotilla::model::StatusKind::ALL
            .into_iter()
            .find(|k| k.as_str() == kind)
            .unwrap_or_else(|| panic!("no status kind {kind}"));
        assert_eq!(
            Some(state.cells.totals().get(kind) as u64),
            count.as_u64(),
            "{args:?}: {kind:?}"
        );
    }
    // plan names the same refusals and the same unreachable cells.
    let mut plan_args = args.to_vec();
    plan_args.extend(["plan", "-o", "json"]);
    let plan = flotilla(&plan_args);
    for item in plan["items"].as_array().into_iter().flatten() {
        if item["resource"]["name"] == "*" {
            continue;
        }
        let key = key_of(item);
        let Some((sync, _)) = shown.get(&key) else {
            continue;
        };
        if item["action"] == "error" {
            assert!(
                matches!(sync.as_str(), "Failed" | "Unreachable"),
                "{args:?} {key:?}: plan refused it, the console shows {sync}: {item}"
            );
        }
        if matches!(sync.as_str(), "Failed") {
            assert_eq!(item["action"], "error", "{args:?} {key:?}: {item}");
        }
    }
}

#[test]
fn status_the_console_and_plan_agree_on_the_demo() {
    agree(&["--demo"], &flotilla::fleet::demo::demo_files(), false, 7);
}

#[test]
fn status_the_console_and_plan_agree_on_generated_fleets() {
    for (clusters, resources, seed) in [(210, 30, 7), (120, 45, 11), (260, 20, 23)] {
        let size = format!("{clusters},{resources}");
        let seed_text = seed.to_string();
        agree(
            &["--demo-scale", &size, "--demo-seed", &seed_text],
            &flotilla::fleet::demo::synthetic_fleet(clusters, resources),
            true,
            seed,
        );
    }
}
