#![allow(clippy::unwrap_used)]
//! The render contract: JSON and YAML carry the same structure, every unplaced pair is listed
//! once with its reason, `--cluster` narrows the output, and the table reads in a terminal.

use std::collections::BTreeSet;

use flotilla::commands::render::{FleetInput, OutputFormat, run_render};
use flotilla::commands::scope::ResourceScope;
use flotilla::engine::load_fleet;
use flotilla::fleet::demo::{demo_files, synthetic_fleet};
use serde_json::Value;

fn render(
    files: Vec<flotilla::engine::SourceFile>,
    cluster: Option<&str>,
    format: OutputFormat,
) -> String {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let clusters: Vec<String> = cluster.map(str::to_string).into_iter().collect();
    let code = run_render(
        FleetInput::Files(files),
        &clusters,
        &ResourceScope::default(),
        format,
        false,
        false,
        &mut out,
        &mut err,
    );
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    String::from_utf8(out).unwrap()
}

#[test]
fn json_lists_every_object_and_every_unplaced_pair_once() {
    let (fleet, _) = load_fleet(&demo_files());
    let doc: Value = serde_json::from_str(&render(demo_files(), None, OutputFormat::Json)).unwrap();
    let items = doc["items"].as_array().unwrap();
    let unplaced = doc["unplaced"].as_array().unwrap();
    let mut seen = BTreeSet::new();
    for u in unplaced {
        assert!(u["reason"].as_str().is_some_and(|r| !r.is_empty()));
        let key = (
            u["cluster"].as_str().unwrap().to_string(),
            u["resource"].to_string(),
        );
        assert!(seen.insert(key), "unplaced twice: {u}");
        for field in ["apiVersion", "kind", "name"] {
            assert!(u["resource"][field].is_string(), "{u}");
        }
    }
    let placed_pairs: usize = (0..fleet.resources.len())
        .map(|r| {
            (0..fleet.clusters.len())
                .filter(|&c| fleet.is_placed(r, c))
                .count()
        })
        .sum();
    assert_eq!(
        unplaced.len() + placed_pairs,
        fleet.resources.len() * fleet.clusters.len()
    );
    let namespaces = items
        .iter()
        .filter(|i| i["object"]["kind"] == "Namespace")
        .count();
    assert!(
        namespaces > 0,
        "Namespaces are rendered where the dialect propagates them"
    );
    assert_eq!(
        items.len(),
        placed_pairs + namespaces - fleet_namespace_items(&fleet)
    );
    let taint = unplaced
        .iter()
        .find(|u| {
            u["cluster"] == "gpu-us-east-1"
                && u["resource"]["name"] == "checkout"
                && u["resource"]["kind"] == "Deployment"
        })
        .unwrap();
    assert_eq!(
        taint["reason"],
        "taint dedicated=gpu:NoSchedule not tolerated"
    );
    // Items come cluster by cluster, in inventory order.
    let order: Vec<&str> = items
        .iter()
        .map(|i| i["cluster"].as_str().unwrap())
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
}

/// Placed pairs of Namespace resources (they are items and counted among `namespaces`).
fn fleet_namespace_items(fleet: &flotilla::engine::Fleet) -> usize {
    (0..fleet.resources.len())
        .filter(|&r| fleet.resources[r].target.kind == "Namespace")
        .map(|r| {
            (0..fleet.clusters.len())
                .filter(|&c| fleet.is_placed(r, c))
                .count()
        })
        .sum()
}

#[test]
fn yaml_has_the_same_structure_as_json() {
    let json: Value =
        serde_json::from_str(&render(demo_files(), None, OutputFormat::Json)).unwrap();
    let yaml: Value =
        serde_saphyr::from_str(&render(demo_files(), None, OutputFormat::Yaml)).unwrap();
    assert_eq!(json, yaml);
    let one: Value = serde_saphyr::from_str(&render(
        demo_files(),
        Some("lab-eu-west-1"),
        OutputFormat::Yaml,
    ))
    .unwrap();
    assert!(
        one["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["cluster"] == "lab-eu-west-1")
    );
}

#[test]
fn cluster_filter_renders_one_cluster() {
    let doc: Value = serde_json::from_str(&render(
        demo_files(),
        Some("gpu-us-east-1"),
        OutputFormat::Json,
    ))
    .unwrap();
    let kinds: BTreeSet<String> = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            format!(
                "{}/{}",
                i["object"]["kind"].as_str().unwrap(),
                i["object"]["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert!(kinds.contains("Job/trainer"), "{kinds:?}");
    assert!(kinds.contains("DaemonSet/node-exporter"), "{kinds:?}");
    assert!(!kinds.contains("Deployment/checkout"), "{kinds:?}");
    assert!(
        doc["unplaced"]
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["cluster"] == "gpu-us-east-1")
    );
}

#[test]
fn table_shows_a_matrix_for_few_clusters_and_counts_for_many() {
    let table = render(demo_files(), None, OutputFormat::Table);
    assert!(table.starts_with("RESOURCE"));
    assert!(table.contains("Deployment/shop/checkout"));
    assert!(table.contains("gpu-us-east-1  (taint dedicated=gpu:NoSchedule)"));
    assert!(table.contains("taint dedicated=gpu:NoSchedule not tolerated"));
    assert!(table.contains("NamespaceNotFederated"));
    let big = render(synthetic_fleet(40, 30), None, OutputFormat::Table);
    let header = big.lines().next().unwrap();
    assert!(
        !header.contains(" 17"),
        "no per-cluster columns above 16 clusters: {header}"
    );
    assert!(big.contains("30 resources × 40 clusters"));
    assert!(big.contains("not placed, by reason:"));
}

#[test]
fn empty_fleet_renders_valid_empty_documents() {
    let json: Value = serde_json::from_str(&render(Vec::new(), None, OutputFormat::Json)).unwrap();
    assert_eq!(json, serde_json::json!({"items": [], "unplaced": []}));
    let yaml: Value =
        serde_saphyr::from_str(&render(Vec::new(), None, OutputFormat::Yaml)).unwrap();
    assert_eq!(yaml, json);
}

#[test]
fn cached_json_variants_render_exactly_what_decide_renders() {
    // JSON reuses the bytes of identical (replicas, override set) variants; YAML builds every
    // object through decide(). Both must describe the same fleet.
    let files = synthetic_fleet(60, 40);
    let json: Value =
        serde_json::from_str(&render(files.clone(), None, OutputFormat::Json)).unwrap();
    let yaml: Value = serde_saphyr::from_str(&render(files, None, OutputFormat::Yaml)).unwrap();
    assert!(json["items"].as_array().unwrap().len() > 1000);
    assert_eq!(json, yaml);
}

/// The Karmada fields of issue 22 as `flotilla render` shows them on
/// testdata/fleets/karmada-fidelity: dependencies pulled by propagateDeps, suspended cells,
/// the affinity group the scheduler fell through to, and a policy waiting for its
/// dependentOverrides.
#[test]
fn karmada_policy_fields_show_in_the_table_and_the_json() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fleets/karmada-fidelity");
    let files = flotilla::fleet::dir::read_fleet_dir(&dir).unwrap();
    let table = render(files.clone(), None, OutputFormat::Table);
    let row = |key: &str| -> String {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{key} ")))
            .unwrap_or_else(|| panic!("no row {key} in\n{table}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    // Columns: east, edge, west.
    assert_eq!(
        row("ConfigMap/shop/settings"),
        "ConfigMap/shop/settings karmada dependency of Deployment shop/web 2/3 - ✓ · ✓"
    );
    assert_eq!(
        row("ServiceAccount/shop/web-sa"),
        "ServiceAccount/shop/web-sa karmada dependency of Deployment shop/web 2/3 - ✓ · ✓"
    );
    assert_eq!(
        row("ConfigMap/shop/shared"),
        "ConfigMap/shop/shared karmada edge + dependency 3/3 - ✓ ✓ ✓"
    );
    assert_eq!(
        row("ConfigMap/shop/loose"),
        "ConfigMap/shop/loose karmada no policy 0/3 - · · ·"
    );
    assert_eq!(
        row("Job/batch/nightly"),
        "Job/batch/nightly karmada selector env=prod 1/3 1 1 · ‖"
    );
    assert_eq!(
        row("Deployment/edge/api"),
        "Deployment/edge/api karmada backup: east (Divided) 1/3 4 4 · ·"
    );
    for text in [
        "‖ suspended",
        "suspended (placed, held back from the cluster), by reason:",
        "suspension.dispatchingOnClusters [west]",
        "waiting for dependentOverrides: OverridePolicy edge/edge-tuning not in the fleet",
        "overflow group 'burst' of affinity group 'backup'",
    ] {
        assert!(table.contains(text), "{text} in\n{table}");
    }

    let json: Value =
        serde_json::from_str(&render(files.clone(), None, OutputFormat::Json)).unwrap();
    let yaml: Value = serde_saphyr::from_str(&render(files, None, OutputFormat::Yaml)).unwrap();
    assert_eq!(json, yaml);
    let items = json["items"].as_array().unwrap();
    let on = |cluster: &str, kind: &str, name: &str| {
        items.iter().any(|i| {
            i["cluster"] == cluster
                && i["object"]["kind"] == kind
                && i["object"]["metadata"]["name"] == name
        })
    };
    assert!(on("east", "Secret", "creds") && on("west", "Secret", "creds"));
    assert!(!on("edge", "Secret", "creds"));
    assert!(
        on("edge", "ConfigMap", "shared"),
        "its own policy still places it"
    );
    assert!(
        on("east", "Job", "nightly") && !on("west", "Job", "nightly"),
        "west is suspended"
    );
    let suspended: Vec<(String, String)> = json["suspended"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["cluster"].as_str().unwrap().to_string(),
                s["resource"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        suspended,
        [
            ("east".to_string(), "paused".to_string()),
            ("west".to_string(), "nightly".to_string()),
            ("west".to_string(), "paused".to_string()),
        ]
    );
    assert!(
        json["unplaced"]
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["resource"]["name"] != "nightly" || u["cluster"] == "edge"),
        "a suspended cell is not also unplaced"
    );
}
