#![allow(clippy::unwrap_used)]
//! Properties of the engine over generated fleets: rendering is deterministic and independent
//! of document, file and cluster order; overrides never reach a cluster the resource is not
//! placed on; Divided replicas always sum to the total.

use std::fmt::Write as _;

use flotilla::engine::place::replicas::{RspPreference, divide_by_static_weight, kubefed_plan};
use flotilla::engine::render::{SecretValues, write_json};
use flotilla::engine::{Decision, Fleet, SourceFile, load_fleet};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct GenCluster {
    env: usize,
    region: usize,
    tainted: bool,
}

#[derive(Debug, Clone)]
struct GenWorkload {
    replicas: i64,
    /// 0 Duplicated, 1 Divided equal, 2 Divided static weights, 3 Aggregated, 4 spread by region.
    scheduling: usize,
    env: usize,
    tolerate: bool,
    weight_eu: i64,
}

const ENVS: [&str; 3] = ["prod", "dev", "edge"];
const REGIONS: [&str; 3] = ["eu", "us", "ap"];

fn cluster_docs(clusters: &[GenCluster]) -> Vec<String> {
    clusters
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut d = format!(
                "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: c{i}\n  labels: {{env: {}, region: {}}}\nspec:\n  syncMode: Push\n  region: {}\n",
                ENVS[c.env], REGIONS[c.region], REGIONS[c.region]
            );
            if c.tainted {
                d.push_str("  taints: [{key: dedicated, value: x, effect: NoSchedule}]\n");
            }
            d
        })
        .collect()
}

fn workload_docs(workloads: &[GenWorkload], with_overrides: bool) -> Vec<String> {
    let mut docs = Vec::new();
    for (i, w) in workloads.iter().enumerate() {
        docs.push(format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w{i}\n  namespace: ns\n  labels: {{app: w{i}}}\nspec:\n  replicas: {}\n  template:\n    spec:\n      containers: [{{name: c, image: reg.io/w{i}:1}}]\n",
            w.replicas
        ));
        let mut placement = format!(
            "    clusterAffinity:\n      labelSelector:\n        matchExpressions: [{{key: env, operator: NotIn, values: [{}]}}]\n",
            ENVS[w.env]
        );
        if w.tolerate {
            placement.push_str("    clusterTolerations: [{key: dedicated, operator: Exists}]\n");
        }
        match w.scheduling {
            1 => placement.push_str("    replicaScheduling: {replicaSchedulingType: Divided}\n"),
            2 => {
                let _ = write!(
                    placement,
                    "    replicaScheduling:\n      replicaSchedulingType: Divided\n      weightPreference:\n        staticWeightList:\n        - {{targetCluster: {{labelSelector: {{matchLabels: {{region: eu}}}}}}, weight: {}}}\n        - {{targetCluster: {{labelSelector: {{matchLabels: {{region: us}}}}}}, weight: 1}}\n",
                    w.weight_eu
                );
            }
            3 => placement.push_str("    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}\n"),
            4 => placement.push_str("    spreadConstraints: [{spreadByField: region, minGroups: 1, maxGroups: 2}]\n"),
            _ => {}
        }
        docs.push(format!(
            "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: w{i}, namespace: ns}}\nspec:\n  resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: w{i}}}]\n  placement:\n{placement}"
        ));
    }
    if with_overrides {
        docs.push("apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterOverridePolicy\nmetadata: {name: eu-registry}\nspec:\n  overrideRules:\n  - targetCluster: {labelSelector: {matchLabels: {region: eu}}}\n    overriders:\n      imageOverrider: [{component: Registry, operator: replace, value: eu.io}]\n      labelsOverrider: [{operator: add, value: {overridden: \"yes\"}}]\n".to_string());
        docs.push("apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: edge, namespace: ns}\nspec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]\n  overrideRules:\n  - targetCluster: {labelSelector: {matchLabels: {env: edge}}}\n    overriders:\n      annotationsOverrider: [{operator: add, value: {edge: \"true\"}}]\n".to_string());
    }
    docs
}

fn files(docs: &[String], split: usize) -> Vec<SourceFile> {
    let split = split.max(1);
    docs.chunks(docs.len().div_ceil(split).max(1))
        .enumerate()
        .map(|(i, chunk)| SourceFile {
            path: format!("f{i}.yaml"),
            text: chunk.join("---\n"),
        })
        .collect()
}

fn json(fleet: &Fleet) -> String {
    let mut out = Vec::new();
    let all: Vec<usize> = (0..fleet.clusters.len()).collect();
    write_json(fleet, &all, SecretValues::Masked, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn clusters_strategy() -> impl Strategy<Value = Vec<GenCluster>> {
    prop::collection::vec(
        (0..3usize, 0..3usize, prop::bool::weighted(0.25)).prop_map(|(env, region, tainted)| {
            GenCluster {
                env,
                region,
                tainted,
            }
        }),
        1..8,
    )
}

fn workloads_strategy() -> impl Strategy<Value = Vec<GenWorkload>> {
    prop::collection::vec(
        (0..40i64, 0..5usize, 0..3usize, any::<bool>(), 1..5i64).prop_map(
            |(replicas, scheduling, env, tolerate, weight_eu)| GenWorkload {
                replicas,
                scheduling,
                env,
                tolerate,
                weight_eu,
            },
        ),
        1..6,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn rendering_ignores_document_file_and_cluster_order(
        clusters in clusters_strategy(),
        workloads in workloads_strategy(),
        shuffle in any::<prop::sample::Index>(),
        split in 1..4usize,
    ) {
        let mut docs = cluster_docs(&clusters);
        docs.extend(workload_docs(&workloads, true));
        let (base, errors) = load_fleet(&files(&docs, 1));
        prop_assert!(errors.is_empty(), "{:?}", errors);
        let expected = json(&base);
        prop_assert_eq!(&expected, &json(&load_fleet(&files(&docs, 1)).0), "same input, same output");
        // Rotate and reverse the documents, spread them over files in another order.
        let mut shuffled = docs.clone();
        let k = shuffle.index(shuffled.len());
        shuffled.rotate_left(k);
        shuffled.reverse();
        let mut parts = files(&shuffled, split);
        parts.reverse();
        prop_assert_eq!(expected, json(&load_fleet(&parts).0));
    }

    #[test]
    fn overrides_never_reach_a_cluster_the_resource_is_not_placed_on(
        clusters in clusters_strategy(),
        workloads in workloads_strategy(),
    ) {
        let mut plain = cluster_docs(&clusters);
        plain.extend(workload_docs(&workloads, false));
        let mut with = cluster_docs(&clusters);
        with.extend(workload_docs(&workloads, true));
        let (a, _) = load_fleet(&files(&plain, 1));
        let (b, _) = load_fleet(&files(&with, 1));
        for r in 0..a.resources.len() {
            for c in 0..a.clusters.len() {
                prop_assert_eq!(a.is_placed(r, c), b.is_placed(r, c), "overrides changed placement of {} on {}", &a.resources[r].target, &a.clusters[c].name);
                match b.decide(r, c) {
                    Decision::NotPlaced { .. } => {
                        let e = b.explain(r, c);
                        prop_assert!(!e.steps.iter().any(|s| s.contains("override step")), "{:?}", e.steps);
                    }
                    Decision::Placed { object, .. } | Decision::Suspended { object, .. } => {
                        let eu = b.clusters[c].labels.get("region").map(String::as_str) == Some("eu");
                        prop_assert_eq!(object["metadata"]["labels"].get("overridden").is_some(), eu);
                    }
                }
            }
        }
        // The rendered items of a cluster only hold resources placed there.
        let doc: serde_json::Value = serde_json::from_str(&json(&b)).unwrap();
        for item in doc["items"].as_array().unwrap() {
            let c = b.cluster_index(item["cluster"].as_str().unwrap()).unwrap();
            let name = item["object"]["metadata"]["name"].as_str().unwrap();
            if item["object"]["kind"] == "Deployment" {
                let r = b.resources.iter().position(|x| x.target.name == name).unwrap();
                prop_assert!(b.is_placed(r, c));
            }
        }
    }

    #[test]
    fn divided_replicas_sum_to_the_total(
        clusters in clusters_strategy(),
        workloads in workloads_strategy(),
    ) {
        let mut docs = cluster_docs(&clusters);
        docs.extend(workload_docs(&workloads, false));
        let (fleet, _) = load_fleet(&files(&docs, 1));
        for (i, w) in workloads.iter().enumerate() {
            if !(1..=3).contains(&w.scheduling) {
                continue;
            }
            let r = fleet.resources.iter().position(|x| x.target.name == format!("w{i}")).unwrap();
            let placed: Vec<usize> = (0..fleet.clusters.len()).filter(|&c| fleet.is_placed(r, c)).collect();
            let feasible = (0..fleet.clusters.len()).any(|c| {
                let cl = &clusters[fleet.clusters[c].name[1..].parse::<usize>().unwrap()];
                cl.env != w.env && (!cl.tainted || w.tolerate)
            });
            let sum: i64 = placed.iter().map(|&c| fleet.replicas(r, c).unwrap_or(0)).sum();
            if feasible && w.replicas > 0 {
                prop_assert_eq!(sum, w.replicas, "w{} over {:?}", i, placed);
            } else {
                prop_assert_eq!(sum, 0);
            }
        }
    }

    #[test]
    fn static_weight_division_is_exact(total in 0..10_000i64, weights in prop::collection::vec(0..20i64, 1..30)) {
        let names: Vec<String> = (0..weights.len()).map(|i| format!("c{i:02}")).collect();
        let cands: Vec<(&str, i64)> = names.iter().map(String::as_str).zip(weights.iter().copied()).collect();
        let split = divide_by_static_weight(total, &cands);
        let sum: i64 = split.iter().sum();
        if weights.iter().any(|w| *w > 0) {
            prop_assert_eq!(sum, total);
            for (s, w) in split.iter().zip(&weights) {
                if *w == 0 { prop_assert_eq!(*s, 0); }
            }
        } else {
            prop_assert_eq!(sum, 0);
        }
    }

    #[test]
    fn kubefed_planner_places_every_replica_without_caps(total in 0..1_000i64, weights in prop::collection::vec(1..10i64, 1..12)) {
        let names: Vec<String> = (0..weights.len()).map(|i| format!("k{i}")).collect();
        let prefs: Vec<(&str, Option<RspPreference>)> = names
            .iter()
            .zip(&weights)
            .map(|(n, w)| (n.as_str(), Some(RspPreference { min_replicas: 0, max_replicas: None, weight: *w })))
            .collect();
        let plan = kubefed_plan(total, &prefs, "ns/name");
        prop_assert_eq!(plan.iter().sum::<i64>(), total);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Whatever an operator types, loading and rendering report errors and never panic.
    #[test]
    fn mangled_fleets_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0..6usize, any::<prop::sample::Index>()), 1..12),
    ) {
        let mut files = flotilla::fleet::demo::demo_files();
        let pieces = [": ", "-", "\n", "  ", "{", "[", "'", "~", "0", "--- ", "\t", "*a", "&a "];
        for (at, op, which) in edits {
            let file = &mut files[at.index(5)];
            let mut text: Vec<char> = file.text.chars().collect();
            if text.is_empty() {
                continue;
            }
            let i = at.index(text.len());
            match op {
                0 => {
                    text.remove(i);
                }
                1 => {
                    for ch in which.get(&pieces).chars().rev() {
                        text.insert(i, ch);
                    }
                }
                2 => text.truncate(i),
                3 => {
                    let j = which.index(text.len());
                    text.swap(i, j);
                }
                4 => text.insert(i, ' '),
                _ => {
                    let j = (i + which.index(40)).min(text.len());
                    let copy: Vec<char> = text[i..j].to_vec();
                    for ch in copy.into_iter().rev() {
                        text.insert(i, ch);
                    }
                }
            }
            file.text = text.into_iter().collect();
        }
        let (fleet, errors) = load_fleet(&files);
        for e in &errors {
            prop_assert!(e.location.line >= 1);
            prop_assert!(!e.hint.is_empty());
        }
        let _ = json(&fleet);
        for r in 0..fleet.resources.len() {
            for c in 0..fleet.clusters.len() {
                let _ = fleet.explain(r, c);
            }
        }
    }
}

/// A fleet whose resources all share one PropagationPolicy (with its own placement terms),
/// and an override for the eu clusters.
fn shared_policy_fleet(
    clusters: &[GenCluster],
    replicas: &[i64],
    excluded_env: usize,
) -> Vec<SourceFile> {
    let mut docs = cluster_docs(clusters);
    for (i, replicas) in replicas.iter().enumerate() {
        docs.push(format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: w{i}, namespace: ns}}\nspec:\n  replicas: {replicas}\n  template:\n    spec:\n      containers: [{{name: c, image: reg.io/w{i}:1}}]\n"
        ));
    }
    docs.push(format!(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: shared, namespace: ns}}\nspec:\n  resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment}}]\n  placement:\n    clusterAffinity:\n      labelSelector: {{matchExpressions: [{{key: env, operator: NotIn, values: [{}]}}]}}\n",
        ENVS[excluded_env]
    ));
    docs.push("apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterOverridePolicy\nmetadata: {name: eu-registry}\nspec:\n  overrideRules:\n  - targetCluster: {labelSelector: {matchLabels: {region: eu}}}\n    overriders:\n      imageOverrider: [{component: Registry, operator: replace, value: eu.io}]\n".to_string());
    files(&docs, 2)
}

/// Per (resource, cluster): the object the fleet renders there, if any.
fn rendered(fleet: &Fleet) -> std::collections::BTreeMap<(String, String), serde_json::Value> {
    let mut out = std::collections::BTreeMap::new();
    for (r, resource) in fleet.resources.iter().enumerate() {
        for (c, cluster) in fleet.clusters.iter().enumerate() {
            if let Decision::Placed { object, .. } | Decision::Suspended { object, .. } =
                fleet.decide(r, c)
            {
                out.insert(
                    (resource.target.display_key(), cluster.name.clone()),
                    object,
                );
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    /// The blast radius of a shared policy's edit: the resources and clusters a preview lists
    /// (gained, lost, changed) are exactly those whose rendering differs once the edit is
    /// written, cluster for cluster — whichever resource the editor was opened on.
    #[test]
    fn a_placement_preview_names_every_resource_and_cluster_whose_render_changes(
        clusters in clusters_strategy(),
        replicas in prop::collection::vec(1..9i64, 1..5),
        excluded_env in 0..3usize,
        opened_on in any::<prop::sample::Index>(),
        names in prop::collection::vec(any::<bool>(), 8),
        selector in 0..4usize,
        scheduling in 0..3usize,
    ) {
        use flotilla::engine::edit::placement::{EditablePlacement, preview_placement};

        let files = shared_policy_fleet(&clusters, &replicas, excluded_env);
        let (before, errors) = load_fleet(&files);
        prop_assert!(errors.is_empty(), "{:?}", errors);
        let resource = opened_on.index(before.resources.len());
        let source = before.placement_source(&files, resource).unwrap();
        let edit = EditablePlacement {
            clusters: clusters
                .iter()
                .enumerate()
                .filter(|(i, _)| names[*i % names.len()])
                .map(|(i, _)| format!("c{i}"))
                .collect(),
            selector: ["", "env=prod", "env!=dev", "region in (eu,us)"][selector].to_string(),
            replicas: ["", "divided", "aggregated"][scheduling].to_string(),
            ..source.editable()
        };
        let object = source.with(&edit).unwrap();
        let preview = preview_placement(&before, &files, &source, &object);
        prop_assert!(preview.errors.is_empty(), "{:?}", preview.errors);
        let after = preview.fleet.clone().unwrap();

        let (old, new) = (rendered(&before), rendered(&after));
        let mut expected: std::collections::BTreeMap<String, [Vec<String>; 3]> = Default::default();
        let keys: std::collections::BTreeSet<&(String, String)> = old.keys().chain(new.keys()).collect();
        for key in keys {
            let slot = match (old.get(key), new.get(key)) {
                (None, Some(_)) => 0,
                (Some(_), None) => 1,
                (Some(a), Some(b)) if a != b => 2,
                _ => continue,
            };
            expected.entry(key.0.clone()).or_default()[slot].push(key.1.clone());
        }
        let listed: std::collections::BTreeMap<String, [Vec<String>; 3]> = preview
            .resources
            .iter()
            .map(|change| {
                (
                    change.resource.display_key(),
                    [change.gained.to_vec(), change.lost.to_vec(), change.changed.to_vec()],
                )
            })
            .collect();
        prop_assert_eq!(&listed, &expected);
        // Every resource the policy places is counted, whichever one was opened.
        prop_assert_eq!(preview.sharing, before.resources.len());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    /// A placement edit rewrites only what it changes: in the written file every line outside
    /// the edited policy's `placement` is byte-identical (flow-style selectors included), and
    /// a placement field whose value did not change keeps its line.
    #[test]
    fn a_placement_edit_touches_only_the_lines_it_changes(
        clusters in clusters_strategy(),
        replicas in prop::collection::vec(1..9i64, 1..4),
        excluded_env in 0..3usize,
        names in prop::collection::vec(any::<bool>(), 8),
        selector in 0..3usize,
    ) {
        use flotilla::engine::edit::placement::{EditablePlacement, replace_document};

        let files = shared_policy_fleet(&clusters, &replicas, excluded_env);
        let (fleet, errors) = load_fleet(&files);
        prop_assert!(errors.is_empty(), "{:?}", errors);
        let source = fleet.placement_source(&files, 0).unwrap();
        let edit = EditablePlacement {
            clusters: clusters
                .iter()
                .enumerate()
                .filter(|(i, _)| names[*i % names.len()])
                .map(|(i, _)| format!("c{i}"))
                .collect(),
            // 0 keeps the selector as written.
            selector: match selector {
                0 => source.editable().selector,
                1 => "env=prod".to_string(),
                _ => "region in (eu,us)".to_string(),
            },
            ..source.editable()
        };
        let object = source.with(&edit).unwrap();
        let written = replace_document(&fleet, &files, &source.file, source.document, &object).unwrap();
        let (old, new) = (
            &files.iter().find(|f| f.path == source.file).unwrap().text,
            &written.iter().find(|f| f.path == source.file).unwrap().text,
        );
        let placement_at = old.find("  placement:\n").unwrap();
        let policy_end = old[placement_at..].find("---\n").map_or(old.len(), |i| placement_at + i);
        // Everything before the placement and after the policy is kept byte for byte.
        prop_assert!(new.starts_with(&old[..placement_at]), "{}", new);
        prop_assert!(new.ends_with(&old[policy_end..]), "{}", new);
        // The selector line stays exactly as written when the selector did not change.
        if selector == 0 {
            let line = old[placement_at..]
                .lines()
                .find(|l| l.contains("labelSelector"))
                .unwrap();
            prop_assert!(new.contains(line), "{}", new);
        }
    }
}
