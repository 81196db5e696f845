#![allow(clippy::unwrap_used)]
//! Table-driven checks of every placement and override rule, on the fixtures under
//! testdata/fleets/. Each row is what an operator would see for one (resource, cluster).

use std::path::Path;

use flotilla::engine::{Decision, Fleet, load_fleet};
use flotilla::fleet::dir::read_fleet_dir;
use serde_json::{Value, json};

fn load(case: &str) -> Fleet {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/fleets")
        .join(case);
    let files = read_fleet_dir(&dir).unwrap();
    let (fleet, errors) = load_fleet(&files);
    assert!(errors.is_empty(), "{case}: {errors:#?}");
    fleet
}

fn resource(fleet: &Fleet, key: &str) -> usize {
    fleet
        .resources
        .iter()
        .position(|r| r.target.display_key() == key)
        .unwrap_or_else(|| panic!("no resource {key}"))
}

fn decide(fleet: &Fleet, key: &str, cluster: &str) -> Decision {
    let c = fleet
        .cluster_index(cluster)
        .unwrap_or_else(|| panic!("no cluster {cluster}"));
    fleet.decide(resource(fleet, key), c)
}

fn object(fleet: &Fleet, key: &str, cluster: &str) -> Value {
    match decide(fleet, key, cluster) {
        Decision::Placed { object, .. } => object,
        Decision::Suspended { reason, .. } | Decision::NotPlaced { reason } => {
            panic!("{key} not delivered to {cluster}: {reason}")
        }
    }
}

#[derive(Debug)]
enum Want {
    /// Placed, with these replicas (None for kinds without replicas).
    Placed(Option<i64>),
    /// Not placed; the reason contains this text.
    Not(&'static str),
    /// Placed but held back by Karmada's suspension; the reason contains this text.
    Held(&'static str),
}

fn check(fleet: &Fleet, rows: &[(&str, &str, Want)]) {
    for (key, cluster, want) in rows {
        let got = decide(fleet, key, cluster);
        match (want, &got) {
            (Want::Placed(r), Decision::Placed { replicas, .. }) => {
                assert_eq!(replicas, r, "{key} on {cluster}: replicas");
            }
            (Want::Not(text), Decision::NotPlaced { reason })
            | (Want::Held(text), Decision::Suspended { reason, .. }) => {
                assert!(
                    reason.contains(text),
                    "{key} on {cluster}: reason {reason:?} lacks {text:?}"
                );
            }
            _ => panic!("{key} on {cluster}: wanted {want:?}, got {got:?}"),
        }
    }
}

#[test]
fn karmada_policy_selection() {
    use Want::*;
    let fleet = load("karmada-selection");
    check(
        &fleet,
        &[
            // A PropagationPolicy of the namespace beats a higher-priority ClusterPropagationPolicy.
            ("Deployment/front/web", "alpha", Placed(Some(1))),
            (
                "Deployment/front/web",
                "gamma",
                Not("not in clusterAffinity.clusterNames"),
            ),
            // Same priority: a name selector beats a kind-only one.
            ("Deployment/app/api", "gamma", Placed(Some(1))),
            ("Deployment/app/api", "beta", Not("clusterNames")),
            // A labelSelector beats kind-only.
            ("Deployment/app/worker", "alpha", Placed(Some(1))),
            // Priority beats precision.
            ("Deployment/app/batcher", "alpha", Placed(Some(1))),
            ("Deployment/app/batcher", "beta", Placed(Some(1))),
            // Same priority and precision: the name that sorts first.
            ("Deployment/app/twin", "alpha", Placed(Some(1))),
            ("Deployment/app/twin", "beta", Not("clusterNames")),
            // A name decides alone; the labelSelector beside it is ignored.
            ("Deployment/app/labelled", "gamma", Placed(Some(1))),
            // Nobody selects it.
            (
                "ConfigMap/app/orphan",
                "alpha",
                Not("no PropagationPolicy selects it"),
            ),
            // A ClusterPropagationPolicy with a namespace in its selector; cluster-scoped kinds.
            ("ConfigMap/other/shared", "beta", Placed(None)),
            ("ClusterRole/reader", "gamma", Placed(None)),
        ],
    );
    let web = resource(&fleet, "Deployment/front/web");
    let steps = fleet.explain(web, 0).steps.join("\n");
    assert!(
        steps.contains("claimed by PropagationPolicy front/web-by-label"),
        "{steps}"
    );
    assert!(
        steps.contains("always wins over ClusterPropagationPolicies"),
        "{steps}"
    );
    let twin = resource(&fleet, "Deployment/app/twin");
    let steps = fleet.explain(twin, 0).steps.join("\n");
    assert!(
        steps.contains("also matched PropagationPolicy app/bb-tie"),
        "{steps}"
    );
}

#[test]
fn karmada_placement_rules() {
    use Want::*;
    let fleet = load("karmada-placement");
    check(
        &fleet,
        &[
            // clusterNames, exclude, taints; unknown names are ignored.
            ("ConfigMap/p/names", "m1", Placed(None)),
            (
                "ConfigMap/p/names",
                "m3",
                Not("excluded by clusterAffinity.exclude"),
            ),
            (
                "ConfigMap/p/names",
                "m5",
                Not("taint dedicated=gpu:NoSchedule not tolerated"),
            ),
            (
                "ConfigMap/p/names",
                "m2",
                Not("not in clusterAffinity.clusterNames"),
            ),
            // fieldSelector on provider and region.
            ("ConfigMap/p/fields", "m1", Placed(None)),
            (
                "ConfigMap/p/fields",
                "m2",
                Not("fieldSelector provider=aws does not match (provider gcp)"),
            ),
            ("ConfigMap/p/fields", "m3", Not("region notin (us)")),
            // zone In needs every zone of the cluster listed; a cluster without zones fails.
            ("ConfigMap/p/zones", "m1", Placed(None)),
            ("ConfigMap/p/zones", "m2", Placed(None)),
            ("ConfigMap/p/zones", "m4", Not("zone")),
            // clusterAffinities: the first group with a feasible cluster.
            ("ConfigMap/p/fallback", "m1", Placed(None)),
            ("ConfigMap/p/fallback", "m2", Placed(None)),
            ("ConfigMap/p/fallback", "m5", Not("affinity group 'eu'")),
            // Tolerations; PreferNoSchedule never filters.
            ("Deployment/p/tolerated", "m5", Placed(Some(2))),
            (
                "Deployment/p/untolerated",
                "m5",
                Not("taint dedicated=gpu:NoSchedule not tolerated"),
            ),
            ("Deployment/p/untolerated", "m6", Placed(Some(2))),
            // Divided by static weights (max matching weight), remainder by weight then name;
            // spread constraints are ignored with static weights.
            ("Deployment/p/divided", "m1", Placed(Some(5))),
            ("Deployment/p/divided", "m2", Placed(Some(2))),
            ("Deployment/p/divided", "m3", Placed(Some(1))),
            ("Deployment/p/divided", "m4", Placed(Some(1))),
            ("Deployment/p/divided", "m6", Placed(Some(1))),
            (
                "Deployment/p/divided",
                "m5",
                Not("labelSelector env=prod does not match"),
            ),
            // Fewer replicas than clusters: clusters that get 0 are not placed.
            ("Deployment/p/divided-few", "m1", Placed(Some(1))),
            ("Deployment/p/divided-few", "m2", Placed(Some(1))),
            (
                "Deployment/p/divided-few",
                "m3",
                Not("Divided: 0 of 2 replicas"),
            ),
            // Aggregated: documented choice, everything on the first cluster by name.
            ("Deployment/p/aggregated", "m1", Placed(Some(5))),
            (
                "Deployment/p/aggregated",
                "m2",
                Not("Aggregated: all 5 replicas packed onto m1"),
            ),
            // Spread by region: two regions (largest first, then name), one cluster each.
            ("Deployment/p/spread-region", "m1", Placed(Some(1))),
            ("Deployment/p/spread-region", "m3", Placed(Some(1))),
            (
                "Deployment/p/spread-region",
                "m2",
                Not("not among the clusters chosen in region eu"),
            ),
            (
                "Deployment/p/spread-region",
                "m4",
                Not("region ap not among the 2 chosen"),
            ),
            ("Deployment/p/spread-cluster", "m1", Placed(Some(1))),
            ("Deployment/p/spread-cluster", "m2", Placed(Some(1))),
            (
                "Deployment/p/spread-cluster",
                "m3",
                Not("not among the 2 clusters chosen"),
            ),
            (
                "Deployment/p/spread-impossible",
                "m1",
                Not("minGroups is 4"),
            ),
            // Dynamic weights: equal offline, and spread constraints do apply.
            ("Deployment/p/dynamic", "m1", Placed(Some(2))),
            ("Deployment/p/dynamic", "m2", Placed(Some(2))),
            (
                "Deployment/p/dynamic",
                "m3",
                Not("not among the 2 clusters chosen"),
            ),
            // Jobs divide parallelism.
            ("Job/p/job", "m1", Placed(Some(2))),
            ("Job/p/job", "m2", Placed(Some(2))),
        ],
    );
    let job = object(&fleet, "Job/p/job", "m1");
    assert_eq!(job["spec"]["parallelism"], 2);
    let divided = resource(&fleet, "Deployment/p/divided");
    let steps = fleet.explain(divided, 0).steps.join("\n");
    assert!(
        steps.contains("static weight of this cluster: 3 of 7"),
        "{steps}"
    );
    assert!(steps.contains("spreadConstraints ignored"), "{steps}");
    assert!(
        steps.contains("random"),
        "explain says what flotilla chose: {steps}"
    );
}

#[test]
fn karmada_overrides_apply_in_upstream_order() {
    let fleet = load("karmada-overrides");
    let edge = object(&fleet, "Deployment/o/app", "e1");
    assert_eq!(edge["metadata"]["labels"]["order"], "c-name");
    assert_eq!(edge["metadata"]["annotations"]["owner"], "platform");
    assert_eq!(edge["spec"]["replicas"], 1);
    let containers = &edge["spec"]["template"]["spec"]["containers"];
    // Image before args before plaintext: the registry rewrite happens first, then the tag.
    assert_eq!(containers[0]["image"], "eu.io/team/web:1.0-edge");
    assert_eq!(containers[0]["args"], json!(["--a", "--edge"]));
    assert_eq!(containers[1]["image"], "eu.io/envoy:1.30");
    assert_eq!(containers[1]["command"], json!(["envoy", "--lite"]));

    let core = object(&fleet, "Deployment/o/app", "c1");
    assert_eq!(
        core["metadata"]["labels"]["order"], "b-label",
        "labelSelector applies after kind-only"
    );
    assert_eq!(core["spec"]["replicas"], 3);
    assert_eq!(
        core["spec"]["template"]["spec"]["containers"][0]["image"],
        "eu.io/team/web:1.0"
    );

    let us = object(&fleet, "Deployment/o/app", "u1");
    assert_eq!(
        us["spec"]["template"]["spec"]["containers"][0]["image"],
        "registry.io/team/web:1.0"
    );

    let settings = object(&fleet, "ConfigMap/o/settings", "u1");
    assert_eq!(
        settings["data"]["settings.json"],
        "{\"db\":{\"host\":\"db-us\"}}"
    );
    let yaml: Value =
        serde_saphyr::from_str(settings["data"]["config.yaml"].as_str().unwrap()).unwrap();
    assert_eq!(yaml, json!({"cache": {"size": 8}}));
    let untouched = object(&fleet, "ConfigMap/o/settings", "c1");
    assert_eq!(
        untouched["data"]["settings.json"],
        "{\"db\":{\"host\":\"db\"},\"pool\":4}"
    );

    // Explain lists every step in order: policy, rule, overrider, path.
    let app = resource(&fleet, "Deployment/o/app");
    let steps = fleet.explain(app, fleet.cluster_index("e1").unwrap()).steps;
    let order: Vec<usize> = [
        "ClusterOverridePolicy global rule 0",
        "OverridePolicy o/a-first rule 0",
        "OverridePolicy o/a-first rule 1",
        "OverridePolicy o/b-label rule 0",
        "OverridePolicy o/c-name rule 0",
    ]
    .iter()
    .map(|p| {
        steps
            .iter()
            .position(|s| s.contains(p))
            .unwrap_or_else(|| panic!("{p} missing from {steps:#?}"))
    })
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{steps:#?}");
    assert!(
        steps
            .iter()
            .any(|s| s.contains("plaintext replace /spec/replicas = 1")),
        "{steps:#?}"
    );
    assert!(
        steps
            .iter()
            .any(|s| s.contains("replicas on this cluster: 1")),
        "{steps:#?}"
    );
}

#[test]
fn kubefed_placement_and_overrides() {
    use Want::*;
    let fleet = load("kubefed");
    check(
        &fleet,
        &[
            ("Namespace/team", "k3", Placed(None)),
            (
                "Namespace/half",
                "k2",
                Not("not in spec.placement.clusters"),
            ),
            (
                "ConfigMap/team/empty-list",
                "k1",
                Not("spec.placement.clusters is empty"),
            ),
            ("ConfigMap/team/all", "k1", Placed(None)),
            ("ConfigMap/team/all", "k3", Placed(None)),
            (
                "ConfigMap/team/none",
                "k1",
                Not("no spec.placement.clusters or clusterSelector"),
            ),
            ("ConfigMap/team/named", "k2", Placed(None)),
            (
                "ConfigMap/team/named",
                "k1",
                Not("not in spec.placement.clusters"),
            ),
            ("ConfigMap/team/prod", "k2", Placed(None)),
            (
                "ConfigMap/team/prod",
                "k3",
                Not("clusterSelector env=prod does not match"),
            ),
            ("Deployment/half/web", "k1", Placed(Some(1))),
            (
                "Deployment/half/web",
                "k2",
                Not("its namespace is not placed here"),
            ),
            ("Deployment/orphan/web", "k1", Not("NamespaceNotFederated")),
            ("ClusterRole/reader", "k3", Placed(None)),
            ("ClusterRole/reader", "k1", Not("env=dev")),
            ("Widget/team/w1", "k3", Placed(None)),
            (
                "DaemonSet/team/agent",
                "k1",
                Not("disabled by FederatedTypeConfig daemonsets.apps"),
            ),
            // RSP: weights 2:1, k3 has no entry so 0 replicas; it owns /spec/replicas.
            ("Deployment/team/scaled", "k1", Placed(Some(6))),
            ("Deployment/team/scaled", "k2", Placed(Some(3))),
            ("Deployment/team/scaled", "k3", Placed(Some(0))),
        ],
    );
    let k1 = object(&fleet, "Deployment/team/api", "k1");
    assert_eq!(k1["spec"]["replicas"], 5, "an empty op means replace");
    assert_eq!(k1["metadata"]["labels"]["zone"], "a");
    assert_eq!(k1["metadata"]["labels"]["kubefed.io/managed"], "true");
    assert!(
        k1["metadata"]["annotations"].get("dropped").is_none(),
        "template annotations are dropped"
    );
    assert_eq!(k1["metadata"]["namespace"], "team");
    let k2 = object(&fleet, "Deployment/team/api", "k2");
    assert!(
        k2["spec"]["template"]["spec"]["containers"][0]
            .get("args")
            .is_none()
    );
    assert_eq!(
        k2["apiVersion"], "apps/v1beta2",
        "apiVersion may be overridden"
    );
    let ns = object(&fleet, "Namespace/team", "k1");
    assert_eq!(ns["metadata"]["name"], "team");
    assert_eq!(ns["metadata"]["labels"]["owner"], "team");
    assert!(ns["metadata"].get("namespace").is_none());
    let widget = object(&fleet, "Widget/team/w1", "k3");
    assert_eq!(widget["apiVersion"], "example.com/v1");
    let named = resource(&fleet, "ConfigMap/team/named");
    let steps = fleet.explain(named, 0).steps.join("\n");
    assert!(
        steps.contains("k9 not in the inventory; dropped"),
        "{steps}"
    );
}

#[test]
fn inventory_merges_both_dialects() {
    let fleet = load("inventory-merge");
    let names: Vec<&str> = fleet.clusters.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["x", "y", "z"]);
    let x = &fleet.clusters[0];
    assert_eq!(
        x.labels.get("env").map(String::as_str),
        Some("prod"),
        "Karmada wins a conflicting label"
    );
    assert_eq!(
        x.labels.get("team").map(String::as_str),
        Some("kf"),
        "labels are united"
    );
    assert_eq!(x.region.as_deref(), Some("eu"));
    assert_eq!(x.provider.as_deref(), Some("aws"));
    assert_eq!(x.zones, ["us-1a"], "zones fall back to the KubeFedCluster");
    assert_eq!(x.taints.len(), 1);
    assert_eq!(x.context, "ctx-x");
    assert_eq!(fleet.clusters[1].context, "kind-y");
    assert_eq!(
        fleet.clusters[2].context, "z",
        "the context defaults to the name"
    );
}

#[test]
fn every_rendered_object_carries_the_ownership_marker() {
    for case in [
        "demo",
        "karmada-placement",
        "karmada-overrides",
        "kubefed",
        "karmada-fidelity",
    ] {
        let fleet = if case == "demo" {
            load_fleet(&flotilla::fleet::demo::demo_files()).0
        } else {
            load(case)
        };
        for c in 0..fleet.clusters.len() {
            for ns in fleet.implied_namespaces(c) {
                assert_eq!(
                    ns["metadata"]["labels"]["app.kubernetes.io/managed-by"],
                    "flotilla"
                );
            }
            for (r, res) in fleet.resources.iter().enumerate() {
                if let Decision::Placed { object, .. } = fleet.decide(r, c) {
                    assert_eq!(
                        object["metadata"]["labels"]["app.kubernetes.io/managed-by"], "flotilla",
                        "{case} {}",
                        res.target
                    );
                    let source = object["metadata"]["annotations"]["flotilla.dev/source"]
                        .as_str()
                        .unwrap();
                    match res.dialect {
                        flotilla::model::Dialect::Karmada => {
                            assert_eq!(source, res.target.display_key())
                        }
                        flotilla::model::Dialect::KubeFed => {
                            assert!(source.starts_with("Federated"), "{source}")
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn karmada_namespaces_follow_their_objects() {
    let fleet = load_fleet(&flotilla::fleet::demo::demo_files()).0;
    let gpu = fleet.cluster_index("gpu-us-east-1").unwrap();
    let names: Vec<String> = fleet
        .implied_namespaces(gpu)
        .iter()
        .map(|n| n["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        ["ml", "monitoring"],
        "only namespaces of objects placed on the gpu cluster"
    );
    let batch = fleet.cluster_index("batch-ap-south-1").unwrap();
    let ns = fleet.implied_namespaces(batch);
    assert!(ns.iter().any(|n| n["metadata"]["name"] == "batch"));
    assert_eq!(
        ns[0]["metadata"]["annotations"]["flotilla.dev/source"],
        "Namespace/batch"
    );
}

#[test]
fn placement_answers_without_rendering() {
    let fleet = load_fleet(&flotilla::fleet::demo::demo_files()).0;
    let checkout = resource(&fleet, "Deployment/shop/checkout");
    let gpu = fleet.cluster_index("gpu-us-east-1").unwrap();
    let eu = fleet.cluster_index("prod-eu-west-1").unwrap();
    assert_eq!(fleet.placement(checkout, eu), Ok(Some(3)));
    assert_eq!(
        fleet.placement(checkout, gpu),
        Err("taint dedicated=gpu:NoSchedule not tolerated".to_string())
    );
    // KubeFed without an RSP keeps the template's replicas; overrides apply later.
    let ledger = resource(&fleet, "Deployment/payments/ledger");
    assert_eq!(fleet.placement(ledger, eu), Ok(Some(2)));
    assert_eq!(
        fleet.replicas(ledger, eu),
        Some(4),
        "after the prod-eu-west-1 override"
    );
    let cm = resource(&fleet, "ConfigMap/shop/registry-config");
    assert_eq!(fleet.placement(cm, eu), Ok(None));
    for r in 0..fleet.resources.len() {
        for c in 0..fleet.clusters.len() {
            assert_eq!(fleet.placement(r, c).is_ok(), fleet.is_placed(r, c));
            assert_eq!(
                fleet.unplaced_reason(r, c).map(str::to_string),
                fleet.placement(r, c).err()
            );
        }
    }
}

/// propagateDeps, suspension, conflictResolution, dependentOverrides, overflow groups and the
/// fields only a hub decides, on testdata/fleets/karmada-fidelity, as explain tells them.
#[test]
fn karmada_policy_fields_beyond_placement() {
    use Want::*;
    let fleet = load("karmada-fidelity");
    check(
        &fleet,
        &[
            ("ConfigMap/shop/settings", "east", Placed(None)),
            ("Secret/shop/creds", "west", Placed(None)),
            ("ServiceAccount/shop/web-sa", "east", Placed(None)),
            ("PersistentVolumeClaim/shop/web-data", "west", Placed(None)),
            (
                "ConfigMap/shop/settings",
                "edge",
                Not("Deployment shop/web (which needs it: propagateDeps) is not scheduled here"),
            ),
            ("ConfigMap/shop/shared", "edge", Placed(None)),
            ("ConfigMap/shop/shared", "east", Placed(None)),
            (
                "ConfigMap/shop/loose",
                "east",
                Not("no PropagationPolicy selects it"),
            ),
            ("Job/batch/nightly", "east", Placed(Some(1))),
            (
                "Job/batch/nightly",
                "west",
                Held("dispatchingOnClusters [west]"),
            ),
            (
                "ConfigMap/batch/paused",
                "east",
                Held("suspension.dispatching"),
            ),
            ("Deployment/edge/api", "east", Placed(Some(4))),
            ("Deployment/edge/api", "west", Not("overflow group 'burst'")),
            (
                "ConfigMap/edge/waiting",
                "east",
                Not("waiting for dependentOverrides"),
            ),
        ],
    );
    let explain = |key: &str, cluster: &str| {
        fleet.explain(resource(&fleet, key), fleet.cluster_index(cluster).unwrap())
    };
    let settings = explain("ConfigMap/shop/settings", "east");
    assert_eq!(
        settings.reason,
        "placed as a dependency of Deployment shop/web (propagateDeps)"
    );
    let steps = settings.steps.join("\n");
    assert!(
        steps.contains("conflictResolution: Overwrite"),
        "web's policy says Overwrite: {steps}"
    );
    let shared = explain("ConfigMap/shop/shared", "east").steps.join("\n");
    assert!(
        shared.contains("conflictResolution: Abort (the default)"),
        "its own policy's: {shared}"
    );
    let web = explain("Deployment/shop/web", "east").steps.join("\n");
    assert!(web.contains("propagateDeps: ConfigMap shop/settings, ConfigMap shop/shared, PersistentVolumeClaim shop/web-data, Secret shop/creds, ServiceAccount shop/web-sa follow it"), "{web}");
    assert!(
        web.contains("ConfigMap not-in-fleet not in the fleet"),
        "{web}"
    );
    let nightly = explain("Job/batch/nightly", "west");
    assert!(
        nightly
            .reason
            .starts_with("suspended: PropagationPolicy batch/nightly"),
        "{}",
        nightly.reason
    );
    let steps = nightly.steps.join("\n");
    for note in [
        "failover (application failover after 120s unhealthy, purgeMode Gracefully, graceful eviction within 600s)",
        "schedulePriority (KubePriorityClass high)",
        "activationPreference: Lazy",
    ] {
        assert!(steps.contains(note), "{note} in {steps}");
    }
    let shared = explain("ConfigMap/shop/shared", "edge").steps.join("\n");
    assert!(
        shared.contains(
            "clusterTolerations with tolerationSeconds (cluster.karmada.io/not-ready for 300s)"
        ),
        "{shared}"
    );
    let api = explain("Deployment/edge/api", "east").steps.join("\n");
    assert!(api.contains("using affinity group 'backup' (#1)"), "{api}");
    assert!(api.contains("workloadAffinity: Karmada places it away from the workloads sharing its app.group label value"), "{api}");
}
