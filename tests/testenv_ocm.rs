//! Checks against the Open Cluster Management test environment (`cargo xtask testenv up
//! --hub ocm`): a ManifestWork applied to the hub with kubectl reaches its member and only
//! that one (kubectl on the members confirms); flotilla's hub reader shows each manifest's
//! state per cluster with OCM's reason text; a Placement with a ManagedClusterSetBinding gets
//! a PlacementDecision the reader shows; a member stopped with `testenv stop` turns not ready
//! in `flotilla --hub hub clusters` as OCM reports it; a ManifestWorkReplicaSet (the hub's work
//! manager) follows its Placement from member-1 to member-2, and flotilla's hub read shows the
//! result; `render --hub` and `status --hub` with `-n` and `-l` pick the objects by namespace
//! and by the manifests' labels; the object view of a ManifestWork's Deployment (and `status
//! --hub --resource`) reads the member's object and Events as kubectl does. `cargo xtask test`
//! runs them in their own step (their names start with `hub_ocm_`, which the plain-hub step
//! skips). They only touch objects named after themselves (and a ManagedCluster label named
//! so), delete them afterwards, and the outage test restarts the member it stops.

mod harness;

use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use serde_json::Value;

use harness::console::press_in;
use harness::{
    HubTest, Restart, TestNamespace, apply, column_of, condition, env, eventually, hub_clusters,
    hub_console, hub_reader, hub_render, json, kubectl, kubectl_ok, row_of, select_row, serial,
    testenv_cmd_ok,
};

/// Generous: OCM declares a cluster's lease stopped after five lease periods (the test
/// environment's lease is 10 s), and a busy 2-core machine is slow.
const OUTAGE_LIMIT: Duration = Duration::from_secs(240);
const APPLY_LIMIT: Duration = Duration::from_secs(90);

/// Panics with instructions unless the hub runs OCM with every member Available.
fn ocm_hub() {
    let out = kubectl("hub", &["get", "managedclusters", "-o", "json"]);
    assert!(
        out.status.success(),
        "these tests need the OCM test environment: `cargo xtask testenv up --hub ocm \
         --members 2` and FLOTILLA_TESTENV_KUBECONFIG=target/testenv/kubeconfig ({})",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    let list: Value = serde_json::from_slice(&out.stdout).expect("kubectl printed JSON");
    for member in &env().members {
        eventually(
            &format!("ManagedCluster {member} to be Available"),
            OUTAGE_LIMIT,
            || {
                let cluster = json("hub", &["get", "managedcluster", member]);
                (condition(&cluster, "ManagedClusterConditionAvailable") == Some("True"))
                    .then_some(())
            },
        );
    }
    assert!(list["items"].as_array().is_some_and(|i| !i.is_empty()));
}

/// The tests share the members, and one of them stops member-2: a test waits for its turn,
/// then for the OCM hub.
fn ocm_turn() -> MutexGuard<'static, ()> {
    let serial = serial();
    ocm_hub();
    serial
}

/// A test on the OCM hub with a namespace of its own there.
fn ocm_test(name: &str) -> HubTest {
    HubTest::on_hub(name, ocm_hub)
}

/// A test of a ManifestWork of its own: [`ocm_turn`], and ManifestWork `name` (unique to
/// the test) in `member`'s namespace on the hub, deleted afterwards.
struct WorkTest {
    name: String,
    _work: Cleanup,
    _turn: MutexGuard<'static, ()>,
}

fn work_test(test: &str, member: &str) -> WorkTest {
    let turn = ocm_turn();
    let name = unique(test);
    WorkTest {
        _work: Cleanup::new("hub", &["manifestwork", &name, "-n", member]),
        name,
        _turn: turn,
    }
}

/// Applies [`manifest_work`] `name` (its objects in namespace `name`) for `member` and waits
/// until the member has its ConfigMap.
fn deliver_work(member: &str, name: &str) {
    apply("hub", &manifest_work(member, name, name, ""));
    eventually(&format!("the ConfigMap on {member}"), APPLY_LIMIT, || {
        member_has(member, &["get", "configmap", "colors", "-n", name]).then_some(())
    });
}

/// A name unique to this test run (lower case, DNS-safe).
fn unique(test: &str) -> String {
    format!("t-{test}-{:x}", std::process::id())
}

/// Deletes a hub or member object when dropped (`kubectl delete KIND NAME [-n NS]`), so a
/// failed assertion leaves nothing behind.
struct Cleanup {
    context: String,
    args: Vec<String>,
}

impl Cleanup {
    fn new(context: &str, args: &[&str]) -> Self {
        Self {
            context: context.to_string(),
            args: args.iter().map(|a| (*a).to_string()).collect(),
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let mut args: Vec<&str> = vec!["delete"];
        args.extend(self.args.iter().map(String::as_str));
        args.extend(["--ignore-not-found", "--wait=false"]);
        let _ = kubectl(&self.context, &args);
    }
}

/// A ManifestWork in hub namespace `cluster` carrying a Namespace and a ConfigMap in it (and
/// `extra` manifests, YAML list items indented by four spaces).
fn manifest_work(cluster: &str, name: &str, ns: &str, extra: &str) -> String {
    format!(
        "apiVersion: work.open-cluster-management.io/v1\nkind: ManifestWork\n\
         metadata: {{name: {name}, namespace: {cluster}}}\nspec:\n  workload:\n    manifests:\n    \
         - apiVersion: v1\n      kind: Namespace\n      metadata: {{name: {ns}}}\n    \
         - apiVersion: v1\n      kind: ConfigMap\n      metadata: {{name: colors, namespace: {ns}}}\n      \
         data: {{color: blue}}\n{extra}"
    )
}

/// Binds the `global` ManagedClusterSet to namespace `ns` and creates Placement `web` there,
/// with one predicate whose `requiredClusterSelector` is `selector` (YAML indented six
/// spaces).
fn placement_web(ns: &str, selector: &str) {
    apply(
        "hub",
        &format!(
            "apiVersion: cluster.open-cluster-management.io/v1beta2\nkind: ManagedClusterSetBinding\n\
             metadata: {{name: global, namespace: {ns}}}\nspec: {{clusterSet: global}}\n---\n\
             apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\n\
             metadata: {{name: web, namespace: {ns}}}\nspec:\n  clusterSets: [global]\n  \
             predicates:\n  - requiredClusterSelector:\n{selector}"
        ),
    );
}

fn member_has(member: &str, args: &[&str]) -> bool {
    kubectl(member, args).status.success()
}

#[test]
#[ignore = "needs the OCM testenv: run through cargo xtask test"]
fn hub_ocm_a_manifestwork_reaches_its_member_and_only_that_one() {
    let test = work_test("reach", "member-1");
    let name = test.name.as_str();
    let deployment = format!(
        "    - apiVersion: apps/v1\n      kind: Deployment\n      metadata: {{name: web, namespace: {name}}}\n      \
         spec:\n        replicas: 2\n        selector: {{matchLabels: {{app: web}}}}\n        \
         template:\n          metadata: {{labels: {{app: web}}}}\n          \
         spec: {{containers: [{{name: web, image: nginx:1.27}}]}}\n"
    );
    apply("hub", &manifest_work("member-1", name, name, &deployment));

    let image = eventually(
        "the ManifestWork's Deployment on member-1",
        APPLY_LIMIT,
        || {
            let out = kubectl(
                "member-1",
                &[
                    "get",
                    "deployment",
                    "web",
                    "-n",
                    name,
                    "-o",
                    "jsonpath={.spec.template.spec.containers[0].image}",
                ],
            );
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).to_string())
        },
    );
    assert_eq!(image, "nginx:1.27");
    assert!(member_has(
        "member-1",
        &["get", "configmap", "colors", "-n", name]
    ));
    // OCM records what it applied on the member.
    let applied = kubectl_ok("member-1", &["get", "appliedmanifestworks", "-o", "name"]);
    assert!(
        applied.lines().any(|l| l.ends_with(&format!("-{name}"))),
        "{applied}"
    );
    let work = eventually(
        "the ManifestWork to report Applied and Available",
        APPLY_LIMIT,
        || {
            let work = json("hub", &["get", "manifestwork", name, "-n", "member-1"]);
            (condition(&work, "Applied") == Some("True")
                && condition(&work, "Available") == Some("True"))
            .then_some(work)
        },
    );
    assert_eq!(
        work.pointer("/status/resourceStatus/manifests")
            .and_then(Value::as_array)
            .map(Vec::len),
        Some(3),
        "a status per manifest"
    );
    for member in &env().members[1..] {
        assert!(
            !member_has(member, &["get", "namespace", name]),
            "{member} must not get member-1's ManifestWork"
        );
    }
}

#[test]
#[ignore = "needs the OCM testenv: run through cargo xtask test"]
fn hub_ocm_the_console_model_shows_each_manifests_state_with_ocms_reasons() {
    use flotilla::backend::hub;
    use flotilla::model::CellStatus;

    let test = work_test("model", "member-1");
    let name = test.name.as_str();
    // A ConfigMap in a namespace the member does not have: the agent cannot apply it.
    let broken = format!(
        "    - apiVersion: v1\n      kind: ConfigMap\n      \
         metadata: {{name: orphan, namespace: {name}-absent}}\n      data: {{a: b}}\n"
    );
    apply("hub", &manifest_work("member-1", name, name, &broken));

    let (runtime, hub) = hub_reader();
    assert_eq!(hub.kind, hub::HubKind::OpenClusterManagement);
    assert!(hub.label().contains("Open Cluster Management"));

    let good = format!("ConfigMap/{name}/colors");
    let bad = format!("ConfigMap/{name}-absent/orphan");
    let view = eventually("the agent to report both ConfigMaps", APPLY_LIMIT, || {
        let view = runtime.block_on(hub.read()).expect("read the hub");
        let settled = |key: &str| {
            let row = view
                .rows
                .iter()
                .position(|r| r.target.display_key() == key)?;
            (view.cell(row, 0).0 != CellStatus::Pending).then_some(())
        };
        settled(&good)?;
        settled(&bad)?;
        Some(view)
    });
    let names: Vec<&str> = view.clusters.iter().map(|(s, _)| s.name.as_str()).collect();
    assert_eq!(
        names,
        env().members.iter().map(String::as_str).collect::<Vec<_>>()
    );
    let row = |key: &str| {
        view.rows
            .iter()
            .position(|r| r.target.display_key() == key)
            .unwrap_or_else(|| panic!("no row {key}"))
    };
    let (status, message) = view.cell(row(&good), 0);
    assert_eq!(status, CellStatus::InSync, "{message:?}");
    assert_eq!(
        message.as_deref(),
        Some(format!("ManifestWork {name}: Applied, Available").as_str())
    );
    assert_eq!(view.rows[row(&good)].source, format!("ManifestWork {name}"));

    let CellStatus::Failed(reason) = view.cell(row(&bad), 0).0 else {
        panic!(
            "the ConfigMap in a missing namespace must fail: {:?}",
            view.cell(row(&bad), 0)
        );
    };
    assert!(
        reason.starts_with("AppliedManifestFailed: ") && reason.contains("not found"),
        "OCM's own reason text: {reason}"
    );
    let CellStatus::NotPlaced(why) = view.cell(row(&good), 1).0 else {
        panic!("member-2 has no ManifestWork for it");
    };
    assert!(why.contains("no ManifestWork"), "{why}");
}

#[test]
#[ignore = "needs the OCM testenv: run through cargo xtask test"]
fn hub_ocm_a_placement_decision_shows_in_the_reader() {
    use flotilla::backend::hub::ocm;

    let test = ocm_test("ocm-placement");
    let ns = test.ns();
    // A claim only member-2 reports: the Placement must pick member-2 alone.
    let claim = format!("{}.flotilla.dev", unique("claim"));
    let _claim = Cleanup::new("member-2", &["clusterclaim", &claim]);
    apply(
        "member-2",
        &format!(
            "apiVersion: cluster.open-cluster-management.io/v1alpha1\nkind: ClusterClaim\n\
             metadata: {{name: {claim}}}\nspec: {{value: picked}}\n"
        ),
    );
    placement_web(
        ns,
        &format!(
            "      claimSelector:\n        \
             matchExpressions: [{{key: {claim}, operator: In, values: [picked]}}]\n"
        ),
    );

    let (runtime, hub) = hub_reader();
    let state = eventually("a PlacementDecision choosing member-2", APPLY_LIMIT, || {
        let state = runtime
            .block_on(ocm::placement_state(&hub.client))
            .expect("read placements");
        let placement = state
            .placements
            .iter()
            .find(|p| p.namespace == ns && p.name == "web")?;
        (!placement.decisions.is_empty()).then_some(state.clone())
    });
    let placement = state
        .placements
        .iter()
        .find(|p| p.namespace == ns && p.name == "web")
        .expect("the Placement");
    assert_eq!(placement.clusters(), ["member-2"]);
    assert_eq!(
        placement.decisions[0].source,
        format!("{ns}/web-decision-1")
    );
    let (satisfied, said) = placement.satisfied.clone().expect("PlacementSatisfied");
    assert!(satisfied, "{said}");
    assert!(said.starts_with("AllDecisionsScheduled"), "{said}");
    let binding = state
        .bindings
        .iter()
        .find(|b| b.namespace == ns)
        .expect("the binding");
    assert_eq!(binding.cluster_set, "global");
    assert!(state.sets.iter().any(|s| s.name == "global"));

    // The claim also reaches flotilla's cluster list, as a label of member-2.
    let listed = hub_clusters();
    let member = listed
        .iter()
        .find(|i| i["name"] == "member-2")
        .expect("member-2 listed");
    assert_eq!(member["labels"][&claim], "picked", "{member}");
}

#[test]
#[ignore = "needs the OCM testenv: run through cargo xtask test"]
fn hub_ocm_clusters_lists_the_managed_clusters_as_ocm_reports_them() {
    let _turn = ocm_turn();
    let listed = hub_clusters();
    let names: Vec<&str> = listed.iter().filter_map(|i| i["name"].as_str()).collect();
    assert_eq!(
        names,
        env().members.iter().map(String::as_str).collect::<Vec<_>>()
    );
    for item in &listed {
        assert_eq!(item["health"], "Ready", "{item}");
        assert_eq!(item["version"], "v1.36.3", "{item}");
        assert_eq!(item["context"], item["name"], "{item}");
        assert!(
            item["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("ManagedClusterAvailable")),
            "{item}"
        );
    }
}

/// OCM's registration controller (feature gate `ClusterProfile`, on in the test environment)
/// writes a ClusterProfile per ManagedCluster into each namespace a cluster set is bound to;
/// `--inventory clusterprofiles:hub` reads them as any consumer of SIG Multicluster's API
/// would: the members, OCM as their manager, their version and health.
#[test]
#[ignore = "needs the OCM testenv: run through cargo xtask test"]
fn hub_ocm_cluster_profiles_ocm_writes_are_the_inventory() {
    let _turn = ocm_turn();
    let members: Vec<&str> = env().members.iter().map(String::as_str).collect();
    let profiles = eventually(
        "OCM to write a ClusterProfile per member",
        APPLY_LIMIT,
        || {
            let list = json("hub", &["get", "clusterprofiles", "-A"]);
            let items = list["items"].as_array().cloned().unwrap_or_default();
            let healthy = |name: &str| {
                items.iter().any(|p| {
                    p["metadata"]["name"] == name
                        && condition(p, "ControlPlaneHealthy") == Some("True")
                        && p.pointer("/status/version/kubernetes").is_some()
                })
            };
            // Another test's namespace, deleted without waiting, may still hold OCM's copies
            // of the profiles; one profile a cluster is what this test reads.
            let mut names: Vec<&str> = items
                .iter()
                .filter_map(|p| p["metadata"]["name"].as_str())
                .collect();
            names.sort_unstable();
            let one_each = names.windows(2).all(|pair| pair[0] != pair[1]);
            (one_each && members.iter().all(|m| healthy(m))).then_some(items)
        },
    );
    assert!(
        profiles
            .iter()
            .all(|p| p["spec"]["clusterManager"]["name"] == "open-cluster-management"),
        "{profiles:?}"
    );
    let no_fleet = tempfile::tempdir().expect("temp dir");
    let out = harness::flotilla(
        &no_fleet.path().join("none"),
        &[
            "clusters",
            "-o",
            "json",
            "--inventory",
            "clusterprofiles:hub",
        ],
    );
    assert!(out.status.success(), "{}", harness::output_text(&out));
    let listed: Value = serde_json::from_slice(&out.stdout).expect("clusters JSON");
    let items = listed["items"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = items.iter().filter_map(|i| i["name"].as_str()).collect();
    assert_eq!(names, members);
    for item in &items {
        assert_eq!(item["health"], "Ready", "{item}");
        assert_eq!(item["version"], "v1.36.3", "{item}");
        assert_eq!(item["context"], item["name"], "{item}");
        assert_eq!(
            item["labels"]["x-k8s.io/cluster-manager"], "open-cluster-management",
            "{item}"
        );
    }
}

#[test]
#[ignore = "needs the OCM testenv: run through cargo xtask test"]
fn hub_ocm_a_stopped_member_turns_not_ready_as_ocm_reports_it() {
    let _turn = ocm_turn();
    let health = |member: &str| {
        hub_clusters()
            .into_iter()
            .find(|i| i["name"] == member)
            .unwrap_or_else(|| panic!("{member} listed"))
    };
    assert_eq!(health("member-2")["health"], "Ready");
    let restart = Restart("member-2");
    testenv_cmd_ok(&["stop", "member-2"]);
    let t = Instant::now();
    let down = eventually("OCM to report member-2 not available", OUTAGE_LIMIT, || {
        Some(health("member-2")).filter(|m| m["health"] != "Ready")
    });
    eprintln!(
        "member-2 reported {} {:.1} s after `testenv stop`",
        down["health"],
        t.elapsed().as_secs_f64()
    );
    // The agent went down with its cluster: the hub stops hearing its lease.
    assert_eq!(down["health"], "Unreachable", "{down}");
    assert!(
        down["message"]
            .as_str()
            .is_some_and(|m| m.contains("ManagedClusterLeaseUpdateStopped")),
        "{down}"
    );
    assert_eq!(
        health("member-1")["health"],
        "Ready",
        "only member-2 is out"
    );

    testenv_cmd_ok(&["start", "member-2"]);
    drop(restart);
    eventually("member-2 to be Ready again", OUTAGE_LIMIT, || {
        (health("member-2")["health"] == "Ready").then_some(())
    });
}

#[test]
#[ignore = "needs the OCM testenv: run through cargo xtask test"]
fn hub_ocm_the_console_shows_manifestworks_and_says_why_it_cannot_edit_overrides() {
    use flotilla::model::CellStatus;

    let test = work_test("console", "member-2");
    let name = test.name.as_str();
    deliver_work("member-2", name);

    let (mut session, mut hub_events) = hub_console();
    assert_eq!(session.state.source, "hub hub · Open Cluster Management");
    assert!(
        !session.state.readonly && session.state.placements.is_some(),
        "an OCM hub's Placements are editable: {:?}",
        session.state.notice
    );
    let key = format!("ConfigMap/{name}/colors");
    let row = row_of(&session, &key);
    let member_2 = column_of(&session, "member-2");
    hub_events.pump(&mut session, APPLY_LIMIT, &|s| {
        s.state.cells.kind(row, member_2) == flotilla::model::StatusKind::InSync
    });
    let member_1 = column_of(&session, "member-1");
    assert!(
        matches!(
            session.state.cells.status(row, member_1),
            CellStatus::NotPlaced(_)
        ),
        "{:?}",
        session.state.cells.status(row, member_1)
    );
    assert_eq!(
        session.state.cells.message(row, member_2),
        Some(format!("ManifestWork {name}: Applied, Available").as_str())
    );

    select_row(&mut session, &key);
    press_in(&mut session, "<tab>o");
    let notice = session.state.notice.clone().unwrap_or_default();
    assert!(
        notice.starts_with("Open Cluster Management has no override API"),
        "{notice}"
    );
    press_in(&mut session, "a");
    let notice = session.state.notice.clone().unwrap_or_default();
    assert!(
        notice.contains("nothing to propagate or reschedule"),
        "{notice}"
    );
    assert_eq!(session.state.mode, flotilla::app::state::Mode::Normal);

    // A ManifestWork created while the console runs becomes a new row at the bottom.
    let later = format!("{name}-later");
    let _later = Cleanup::new("hub", &["manifestwork", &later, "-n", "member-1"]);
    apply("hub", &manifest_work("member-1", &later, &later, ""));
    let key = format!("ConfigMap/{later}/colors");
    hub_events.pump(&mut session, APPLY_LIMIT, &|s| {
        s.state
            .resources
            .iter()
            .position(|r| r.target.display_key() == key)
            .is_some_and(|added| {
                s.state.cells.kind(added, member_1) == flotilla::model::StatusKind::InSync
            })
    });
    let added = row_of(&session, &key);
    assert!(added > row, "appended after the rows shown at start");
    assert_eq!(
        session.state.resources[row].target.display_key(),
        format!("ConfigMap/{name}/colors"),
        "old rows keep their place"
    );

    // `render --hub` prints what the ManifestWorks carry, for their cluster only.
    let rendered = hub_render();
    let ours: Vec<(&str, &str)> = rendered["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|i| {
            i.pointer("/object/metadata/name").and_then(Value::as_str) == Some(name)
                || i.pointer("/object/metadata/namespace")
                    .and_then(Value::as_str)
                    == Some(name)
        })
        .map(|i| {
            (
                i["cluster"].as_str().unwrap_or_default(),
                i["object"]["kind"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(ours, [("member-2", "Namespace"), ("member-2", "ConfigMap")]);
}

/// The namespace where the test environment binds the `global` ManagedClusterSet.
const PLACEMENT_NAMESPACE: &str = "flotilla-ocm";

/// Labels ManagedClusters (`key=value` per cluster) and takes the label off again when
/// dropped, so other tests see the clusters as they were.
struct ClusterLabels {
    key: String,
    clusters: Vec<String>,
}

impl ClusterLabels {
    fn set(key: &str, values: &[(&str, &str)]) -> Self {
        let labels = Self {
            key: key.to_string(),
            clusters: values.iter().map(|(c, _)| (*c).to_string()).collect(),
        };
        for (cluster, value) in values {
            kubectl_ok(
                "hub",
                &[
                    "label",
                    "managedcluster",
                    cluster,
                    &format!("{key}={value}"),
                    "--overwrite",
                ],
            );
        }
        labels
    }
}

impl Drop for ClusterLabels {
    fn drop(&mut self) {
        for cluster in &self.clusters {
            let _ = kubectl(
                "hub",
                &[
                    "label",
                    "managedcluster",
                    cluster,
                    &format!("{}-", self.key),
                ],
            );
        }
    }
}

/// The ConfigMap `colors` in `ns` on `member`, if it is there.
fn colors_on(member: &str, ns: &str) -> Option<Value> {
    let out = kubectl(
        member,
        &["get", "configmap", "colors", "-n", ns, "-o", "json"],
    );
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).expect("kubectl printed JSON"))
}

/// The ManifestWork `name` in hub namespace `cluster`, if it is there.
fn manifest_work_in(cluster: &str, name: &str) -> Option<Value> {
    let out = kubectl(
        "hub",
        &["get", "manifestwork", name, "-n", cluster, "-o", "json"],
    );
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).expect("kubectl printed JSON"))
}

#[test]
#[ignore = "needs the OCM testenv: run through cargo xtask test"]
fn hub_ocm_a_manifestworkreplicaset_follows_its_placement_from_member_1_to_member_2() {
    let _turn = ocm_turn();
    let name = unique("mwrs");
    // The ConfigMap's namespace exists on the members beforehand, so what the agent applies
    // and removes is the ConfigMap alone.
    let ns = TestNamespace::on("ocm-mwrs", &env().members);
    let ns = ns.name.as_str();
    let key = format!("flotilla.dev/{name}");
    let _labels = ClusterLabels::set(&key, &[("member-1", "one"), ("member-2", "two")]);
    // Dropped in reverse: the ManifestWorkReplicaSet first (its finalizer deletes its
    // ManifestWorks), then the Placement.
    let _placement = Cleanup::new("hub", &["placement", &name, "-n", PLACEMENT_NAMESPACE]);
    let _set = Cleanup::new(
        "hub",
        &["manifestworkreplicaset", &name, "-n", PLACEMENT_NAMESPACE],
    );
    apply(
        "hub",
        &format!(
            "apiVersion: cluster.open-cluster-management.io/v1beta1\nkind: Placement\n\
             metadata: {{name: {name}, namespace: {PLACEMENT_NAMESPACE}}}\nspec:\n  \
             clusterSets: [global]\n  predicates:\n  - requiredClusterSelector:\n      \
             labelSelector: {{matchLabels: {{{key}: one}}}}\n---\n\
             apiVersion: work.open-cluster-management.io/v1alpha1\nkind: ManifestWorkReplicaSet\n\
             metadata: {{name: {name}, namespace: {PLACEMENT_NAMESPACE}}}\nspec:\n  \
             placementRefs: [{{name: {name}}}]\n  manifestWorkTemplate:\n    workload:\n      \
             manifests:\n      - apiVersion: v1\n        kind: ConfigMap\n        \
             metadata: {{name: colors, namespace: {ns}}}\n        data: {{color: blue}}\n"
        ),
    );

    // The work manager writes a ManifestWork into member-1's namespace, named after the set
    // and labelled with it and the Placement; the agent applies its ConfigMap.
    let work = eventually("a ManifestWork in namespace member-1", APPLY_LIMIT, || {
        manifest_work_in("member-1", &name)
    });
    assert_eq!(
        work.pointer("/metadata/labels/work.open-cluster-management.io~1manifestworkreplicaset")
            .and_then(Value::as_str),
        Some(format!("{PLACEMENT_NAMESPACE}.{name}").as_str()),
        "{work}"
    );
    assert_eq!(
        work.pointer("/metadata/labels/work.open-cluster-management.io~1placementname")
            .and_then(Value::as_str),
        Some(name.as_str()),
        "{work}"
    );
    let colors = eventually("the ConfigMap on member-1", APPLY_LIMIT, || {
        colors_on("member-1", ns)
    });
    assert_eq!(colors["data"]["color"], "blue");
    // The set reports one cluster, applied. (Its PlacementRolledOut stays False, reason
    // Progressing: OCM v1.2.1 counts a cluster as rolled out only once its ManifestWork has a
    // Progressing condition, which the agent sets only from condition rules, and a ConfigMap
    // has none.)
    eventually(
        "the ManifestWorkReplicaSet to report one cluster applied",
        APPLY_LIMIT,
        || {
            let set = json(
                "hub",
                &[
                    "get",
                    "manifestworkreplicaset",
                    &name,
                    "-n",
                    PLACEMENT_NAMESPACE,
                ],
            );
            (set.pointer("/status/summary/total") == Some(&Value::from(1))
                && set.pointer("/status/summary/applied") == Some(&Value::from(1))
                && condition(&set, "PlacementVerified") == Some("True")
                && condition(&set, "ManifestworkApplied") == Some("True"))
            .then_some(())
        },
    );
    assert!(
        manifest_work_in("member-2", &name).is_none(),
        "the Placement does not select member-2"
    );
    assert!(
        colors_on("member-2", ns).is_none(),
        "member-2 got the ConfigMap"
    );

    // Move the Placement to member-2.
    kubectl_ok(
        "hub",
        &[
            "patch",
            "placement",
            &name,
            "-n",
            PLACEMENT_NAMESPACE,
            "--type=merge",
            "-p",
            &format!(
                "{{\"spec\":{{\"predicates\":[{{\"requiredClusterSelector\":{{\"labelSelector\":\
                 {{\"matchLabels\":{{\"{key}\":\"two\"}}}}}}}}]}}}}"
            ),
        ],
    );
    let t = Instant::now();
    let colors = eventually("the ConfigMap on member-2", APPLY_LIMIT, || {
        colors_on("member-2", ns)
    });
    assert_eq!(colors["data"]["color"], "blue");
    assert!(manifest_work_in("member-2", &name).is_some());
    eventually("member-1's ManifestWork to be deleted", APPLY_LIMIT, || {
        manifest_work_in("member-1", &name).is_none().then_some(())
    });
    // Deleting the ManifestWork makes member-1's agent delete what it applied (OCM's default
    // deleteOption is Foreground), and its AppliedManifestWork with it.
    eventually(
        "the agent to remove the ConfigMap from member-1",
        APPLY_LIMIT,
        || colors_on("member-1", ns).is_none().then_some(()),
    );
    eventually("member-1's AppliedManifestWork to go", APPLY_LIMIT, || {
        let applied = kubectl_ok("member-1", &["get", "appliedmanifestworks", "-o", "name"]);
        (!applied.lines().any(|l| l.ends_with(&format!("-{name}")))).then_some(())
    });
    eprintln!(
        "the ConfigMap moved from member-1 to member-2 {:.1} s after the Placement changed",
        t.elapsed().as_secs_f64()
    );
    assert!(
        member_has("member-1", &["get", "namespace", ns]),
        "the namespace was not the work's: it stays"
    );

    // flotilla's hub read shows the ConfigMap rendered for member-2 only, from the
    // ManifestWork the set generated.
    let rendered = hub_render();
    let ours: Vec<&Value> = rendered["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|i| {
            i.pointer("/object/metadata/namespace")
                .and_then(Value::as_str)
                == Some(ns)
        })
        .collect();
    assert_eq!(ours.len(), 1, "{ours:?}");
    assert_eq!(ours[0]["cluster"], "member-2");
    assert_eq!(ours[0]["object"]["kind"], "ConfigMap");
    assert_eq!(ours[0]["object"]["metadata"]["name"], "colors");
    assert_eq!(ours[0]["object"]["data"]["color"], "blue");
    let unplaced: Vec<&Value> = rendered["unplaced"]
        .as_array()
        .expect("unplaced")
        .iter()
        .filter(|u| u.pointer("/resource/namespace").and_then(Value::as_str) == Some(ns))
        .collect();
    assert_eq!(unplaced.len(), 1, "{unplaced:?}");
    assert_eq!(unplaced[0]["cluster"], "member-1");
    assert!(
        unplaced[0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("no ManifestWork")),
        "{unplaced:?}"
    );

    // The console's model names the set the ManifestWork came from.
    let (runtime, hub) = hub_reader();
    let view = runtime.block_on(hub.read()).expect("read the hub");
    let key = format!("ConfigMap/{ns}/colors");
    let row = view
        .rows
        .iter()
        .find(|r| r.target.display_key() == key)
        .unwrap_or_else(|| panic!("no row {key}"));
    assert_eq!(
        row.source,
        format!("ManifestWork {name} (ManifestWorkReplicaSet {PLACEMENT_NAMESPACE}/{name})")
    );
}

/// Confirms with `y` and waits until the console says what OCM decided for Placement `web`.
fn confirm_until_decided(session: &mut flotilla::app::Session, events: &mut harness::HubEvents) {
    press_in(session, "y");
    events.pump(session, APPLY_LIMIT, &|s| {
        s.state
            .notice
            .as_deref()
            .is_some_and(|n| n.contains("for Placement") && n.contains("web"))
    });
}

#[test]
#[ignore = "needs the OCM testenv: run through cargo xtask test"]
fn hub_ocm_a_placement_edited_in_the_console_is_decided_by_ocm_as_previewed() {
    use flotilla::app::session::Session;
    use flotilla::app::state::Mode;
    use flotilla::app::state::ocm_placement::OcmStage;
    use flotilla::engine::edit::placement::Membership;

    let test = ocm_test("ocm-edit");
    let ns = test.ns();
    let key = format!("{}.flotilla.dev/colour", unique("edit"));
    let _labels = ClusterLabels::set(&key, &[("member-1", "blue"), ("member-2", "green")]);
    placement_web(
        ns,
        &format!("      labelSelector:\n        matchLabels: {{{key}: blue}}\n"),
    );
    let decided = || decided_for(ns, "web");
    eventually("OCM to decide member-1", APPLY_LIMIT, || {
        (decided() == ["member-1"]).then_some(())
    });
    // A ManifestWorkReplicaSet follows the Placement with a ConfigMap.
    let cm = unique("edit-colors");
    let _set = Cleanup::new("hub", &["manifestworkreplicaset", "web", "-n", ns]);
    apply(
        "hub",
        &format!(
            "apiVersion: work.open-cluster-management.io/v1alpha1\nkind: ManifestWorkReplicaSet\n\
             metadata: {{name: web, namespace: {ns}}}\nspec:\n  placementRefs: [{{name: web}}]\n  \
             manifestWorkTemplate:\n    workload:\n      manifests:\n      - apiVersion: v1\n        \
             kind: ConfigMap\n        metadata: {{name: {cm}, namespace: default}}\n        \
             data: {{color: blue}}\n"
        ),
    );
    let on = |member: &str| member_has(member, &["get", "configmap", &cm, "-n", "default"]);
    eventually("the set's ConfigMap on member-1", APPLY_LIMIT, || {
        on("member-1").then_some(())
    });

    let (mut session, mut hub_events) = hub_console();
    let open_ours = |session: &mut Session| {
        let world = session.state.placements.clone().expect("Placements read");
        let index = world
            .placements
            .iter()
            .position(|p| p.namespace() == ns && p.name() == "web")
            .expect("our Placement is among the hub's");
        press_in(session, "e");
        if let Mode::OcmPlacement(editor) = &session.state.mode
            && matches!(editor.stage, OcmStage::Choosing { .. })
        {
            for _ in 0..index {
                press_in(session, "<down>");
            }
            press_in(session, "<enter>");
        }
    };
    let type_green = |session: &mut Session| {
        press_in(session, &format!("<ctrl-u>{key}=green"));
    };

    // `e` on the set's ConfigMap opens the Placement the set follows, with no list to choose
    // from. The preview: member-2 enters, member-1 leaves and says why.
    let row_key = format!("ConfigMap/default/{cm}");
    let row = select_row(&mut session, &row_key);
    press_in(&mut session, "e");
    let Mode::OcmPlacement(editor) = &session.state.mode else {
        panic!("the Placement editor opens: {:?}", session.state.notice);
    };
    assert_eq!(
        editor.stage,
        OcmStage::Editing,
        "straight to the followed Placement"
    );
    assert_eq!(
        editor.base.as_ref().map(|b| b.title()),
        Some(format!("Placement {ns}/web"))
    );
    type_green(&mut session);
    let Mode::OcmPlacement(editor) = &session.state.mode else {
        panic!("the Placement editor opens: {:?}", session.state.notice);
    };
    assert_eq!(editor.error, None);
    let preview = editor.preview.clone().expect("a preview");
    assert_eq!(preview.selected, ["member-2"]);
    let member_1 = preview
        .clusters
        .iter()
        .find(|row| row.cluster == "member-1")
        .expect("member-1 in the preview");
    assert_eq!(
        member_1.membership,
        Membership::Leaving {
            reason: format!("labels do not match {key}=green")
        }
    );
    assert_eq!(preview.entering().collect::<Vec<_>>(), ["member-2"]);

    // Confirm: OCM decides exactly what the preview said, and the console says so.
    press_in(&mut session, "<enter>");
    let Mode::Confirm(pending) = &session.state.mode else {
        panic!("enter asks first: {:?}", session.state.notice);
    };
    assert!(pending.placement.is_some());
    let summary = pending.summary.join("\n");
    assert!(
        summary.contains(&format!("ManifestWorkReplicaSet {ns}/web follows it"))
            && summary.contains("its ManifestWorks are created for member-2")
            && summary.contains("its ManifestWorks for member-1 are deleted"),
        "{summary}"
    );
    confirm_until_decided(&mut session, &mut hub_events);
    let notice = session.state.notice.clone().unwrap_or_default();
    assert_eq!(
        notice,
        format!("OCM decided [member-2] for Placement {ns}/web, as previewed")
    );
    assert_eq!(decided(), ["member-2"], "kubectl sees the same decision");
    let stored = json(
        "hub",
        &["get", "placement", "web", "-n", ns, "--show-managed-fields"],
    );
    assert_eq!(
        stored["spec"]["predicates"][0]["requiredClusterSelector"]["labelSelector"],
        serde_json::json!({"matchLabels": {key.as_str(): "green"}})
    );
    assert_eq!(stored["spec"]["clusterSets"], serde_json::json!(["global"]));
    let managers: Vec<&str> = stored["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert!(managers.contains(&"flotilla"), "{managers:?}");

    // The set's work follows the decision: the console shows the ConfigMap moving and kubectl
    // finds it on member-2 only.
    let (member_1, member_2) = (
        session
            .state
            .fleet
            .cluster_index("member-1")
            .expect("member-1"),
        session
            .state
            .fleet
            .cluster_index("member-2")
            .expect("member-2"),
    );
    hub_events.pump(&mut session, APPLY_LIMIT, &|s| {
        s.state.cells.kind(row, member_2) == flotilla::model::StatusKind::InSync
            && s.state.cells.kind(row, member_1) == flotilla::model::StatusKind::NotPlaced
    });
    eventually("the ConfigMap to move to member-2", APPLY_LIMIT, || {
        (on("member-2") && !on("member-1")).then_some(())
    });

    // A Placement changed on the hub after the editor opened is not overwritten.
    hub_events.pump(&mut session, APPLY_LIMIT, &|s| {
        s.state.placements.as_ref().is_some_and(|w| {
            w.placements
                .iter()
                .any(|p| p.namespace() == ns && p.decided == ["member-2"])
        })
    });

    // `u` writes the predicates back as they were; OCM decides member-1 again.
    press_in(&mut session, "u");
    let Mode::Confirm(pending) = &session.state.mode else {
        panic!("u asks first: {:?}", session.state.notice);
    };
    assert!(
        pending.summary[0].starts_with("undo: "),
        "{:?}",
        pending.summary
    );
    assert!(
        pending
            .summary
            .contains(&"+ member-1 enters the decision".to_string())
            && pending
                .summary
                .contains(&"- member-2 leaves the decision".to_string()),
        "{:?}",
        pending.summary
    );
    confirm_until_decided(&mut session, &mut hub_events);
    assert_eq!(
        session.state.notice.as_deref(),
        Some(format!("OCM decided [member-1] for Placement {ns}/web, as previewed").as_str())
    );
    assert_eq!(decided(), ["member-1"], "kubectl sees the undone decision");
    hub_events.pump(&mut session, APPLY_LIMIT, &|s| {
        s.state.placements.as_ref().is_some_and(|w| {
            w.placements
                .iter()
                .any(|p| p.namespace() == ns && p.decided == ["member-1"])
        })
    });

    open_ours(&mut session);
    type_green(&mut session);
    kubectl_ok(
        "hub",
        &[
            "annotate",
            "placement",
            "web",
            "-n",
            ns,
            "touched-by=someone-else",
        ],
    );
    press_in(&mut session, "<enter>");
    press_in(&mut session, "y");
    hub_events.pump(&mut session, APPLY_LIMIT, &|s| {
        s.state
            .notice
            .as_deref()
            .is_some_and(|n| n.contains("refused"))
    });
    let notice = session.state.notice.clone().unwrap_or_default();
    assert!(
        notice.contains("changed on the hub since the editor opened"),
        "{notice}"
    );
    let stored = json("hub", &["get", "placement", "web", "-n", ns]);
    assert_eq!(
        stored["spec"]["predicates"][0]["requiredClusterSelector"]["labelSelector"],
        serde_json::json!({"matchLabels": {key.as_str(): "blue"}}),
        "the refused write changed nothing"
    );
}

#[test]
#[ignore = "needs the OCM testenv: run through cargo xtask test"]
fn hub_ocm_drift_names_a_field_changed_on_a_member_against_its_manifestwork() {
    let test = work_test("drift", "member-1");
    let name = test.name.as_str();
    deliver_work("member-1", name);
    let drift = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .arg("--kubeconfig")
            .arg(&env().kubeconfig_path)
            .args(["--hub", "hub", "drift", "-o", "json"])
            .env_remove("KUBECONFIG")
            .output()
            .expect("run flotilla");
        let report: Value = serde_json::from_slice(&out.stdout).expect("drift prints JSON");
        let ours: Vec<Value> = report["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["resource"]["namespace"] == name)
            .cloned()
            .collect();
        (out.status.code(), ours)
    };
    let (code, ours) = drift();
    assert!(ours.is_empty(), "nothing drifted yet: {ours:?}");
    assert!(matches!(code, Some(0 | 1)), "{code:?}");

    // OCM's agent re-applies a ManifestWork only on its own schedule: while member-1 holds the
    // changed value, drift must name it (retried should the agent take it back first).
    let (code, item) = eventually("drift to name the changed field", APPLY_LIMIT, || {
        kubectl_ok(
            "member-1",
            &[
                "patch",
                "configmap",
                "colors",
                "-n",
                name,
                "--type",
                "merge",
                "-p",
                r#"{"data":{"color":"red"}}"#,
            ],
        );
        let (code, ours) = drift();
        ours.into_iter().next().map(|item| (code, item))
    });
    assert_eq!(code, Some(1), "drift exits 1 when something drifted");
    assert_eq!(item["cluster"], "member-1");
    assert_eq!(item["resource"]["kind"], "ConfigMap");
    let field = &item["fields"][0];
    assert_eq!(field["path"], "/data/color");
    assert_eq!(field["desired"], "blue", "what the ManifestWork carries");
    assert_eq!(field["live"], "red", "what kubectl wrote on the member");
    assert_eq!(field["manager"], "kubectl-patch");
}

/// The clusters OCM decided for Placement `ns/name`, in name order.
fn decided_for(ns: &str, name: &str) -> Vec<String> {
    let list = json(
        "hub",
        &[
            "get",
            "placementdecisions",
            "-n",
            ns,
            "-l",
            &format!("cluster.open-cluster-management.io/placement={name}"),
        ],
    );
    let mut clusters: Vec<String> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|d| {
            d["status"]["decisions"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|d| d["clusterName"].as_str().map(str::to_string))
        .filter(|c| !c.is_empty())
        .collect();
    clusters.sort();
    clusters
}

/// Runs flotilla on the hub with a state directory the calls share (the edit journal `undo`
/// reads), without a terminal; returns its `-o json` report after checking the exit code.
fn ocm_editing(state: &std::path::Path, args: &[&str], code: i32) -> Value {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--kubeconfig")
        .arg(&env().kubeconfig_path)
        .args(["--hub", "hub"])
        .args(args)
        .args(["-o", "json"])
        .env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", state)
        .env_remove("KUBECONFIG")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run flotilla");
    assert_eq!(
        output.status.code(),
        Some(code),
        "{args:?}: {}",
        harness::output_text(&output)
    );
    if code == 2 {
        return Value::String(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("not JSON ({err}): {}", harness::output_text(&output)))
}

#[test]
#[ignore = "needs the OCM testenv: run through cargo xtask test"]
fn hub_ocm_placement_set_writes_the_placement_and_undo_puts_it_back() {
    let test = ocm_test("ocm-editors");
    let ns = test.ns();
    let state = tempfile::tempdir().expect("temp dir");
    let key = format!("{}.flotilla.dev/colour", unique("editors"));
    let _labels = ClusterLabels::set(&key, &[("member-1", "blue"), ("member-2", "green")]);
    placement_web(
        ns,
        &format!("      labelSelector:\n        matchLabels: {{{key}: blue}}\n"),
    );
    eventually("OCM to decide member-1", APPLY_LIMIT, || {
        (decided_for(ns, "web") == ["member-1"]).then_some(())
    });
    let placement = format!("{ns}/web");
    let selector = format!("{key}=green");
    let stored_selector = || {
        json("hub", &["get", "placement", "web", "-n", ns])
            .pointer("/spec/predicates/0/requiredClusterSelector/labelSelector")
            .cloned()
    };
    let blue = stored_selector();
    // `ocm-placement set` to the green selector, with `flags`; its report, exiting `code`.
    let set_green = |flags: &[&str], code: i32| {
        let mut args = vec![
            "ocm-placement",
            "set",
            &placement,
            "--cluster-selector",
            &selector,
        ];
        args.extend(flags);
        ocm_editing(state.path(), &args, code)
    };

    // The dry run previews OCM's decision moving from member-1 to member-2 and writes nothing.
    let dry = set_green(&["--dry-run"], 1);
    assert_eq!(dry["gained"], serde_json::json!(["member-2"]));
    assert_eq!(dry["lost"], serde_json::json!(["member-1"]));
    assert_eq!(dry["written"], false);
    assert_eq!(stored_selector(), blue);
    // Leaving member-1 is a deletion there: refused without a terminal unless --yes.
    let refused = set_green(&[], 2);
    assert!(
        refused.as_str().unwrap_or_default().contains("pass --yes"),
        "{refused}"
    );
    assert_eq!(stored_selector(), blue);
    // Someone else changes the Placement while the operator is asked: the write is refused
    // as the fleet changed under the edit (exit 4), and the other change stays.
    let kubeconfig = env().kubeconfig_path.to_string_lossy().into_owned();
    let mut asking = harness::pty::PtyApp::spawn(
        &[
            "--kubeconfig",
            &kubeconfig,
            "--hub",
            "hub",
            "ocm-placement",
            "set",
            &placement,
            "--cluster-selector",
            &selector,
        ],
        160,
        40,
        &[],
    );
    asking.wait_for("the question before writing", |screen| {
        screen.contains("[y/N]")
    });
    kubectl_ok(
        "hub",
        &[
            "annotate",
            "placement",
            "web",
            "-n",
            ns,
            "flotilla.dev/meanwhile=yes",
        ],
    );
    asking.send("y\r");
    assert_eq!(asking.wait_exit(), 4, "{}", asking.screen_text());
    assert!(
        asking.screen_text().contains("changed on the hub"),
        "{}",
        asking.screen_text()
    );
    assert_eq!(stored_selector(), blue);
    assert_eq!(
        json("hub", &["get", "placement", "web", "-n", ns])
            .pointer("/metadata/annotations/flotilla.dev~1meanwhile")
            .cloned(),
        Some(serde_json::json!("yes"))
    );
    let written = set_green(&["--yes"], 0);
    assert_eq!(written["written"], true);
    assert_eq!(
        stored_selector(),
        Some(serde_json::json!({"matchLabels": {key.clone(): "green"}}))
    );
    eventually("OCM to decide member-2", APPLY_LIMIT, || {
        (decided_for(ns, "web") == ["member-2"]).then_some(())
    });

    // Undo writes the predicates back as they were, and OCM decides member-1 again.
    let undone = ocm_editing(state.path(), &["undo", "--yes"], 0);
    assert_eq!(undone["gained"], serde_json::json!(["member-1"]));
    assert_eq!(stored_selector(), blue);
    eventually("OCM to decide member-1 again", APPLY_LIMIT, || {
        (decided_for(ns, "web") == ["member-1"]).then_some(())
    });

    // A bad selector names its flag; nothing is written.
    let bad = ocm_editing(
        state.path(),
        &[
            "ocm-placement",
            "set",
            &placement,
            "--cluster-selector",
            "colour in blue",
        ],
        2,
    );
    assert!(
        bad.as_str()
            .unwrap_or_default()
            .contains("--cluster-selector"),
        "{bad}"
    );
    assert_eq!(stored_selector(), blue);
}

/// A ManifestWork for `cluster` carrying namespace `ns` and Deployment `web` there (`replicas`
/// of one CPU each on `image`), whose status feedback is OCM's well-known values and the
/// whole status (the work agent runs with `RawFeedbackJsonString`).
fn deployment_work(cluster: &str, name: &str, ns: &str, replicas: u32, image: &str) -> String {
    format!(
        "apiVersion: work.open-cluster-management.io/v1\nkind: ManifestWork\n\
         metadata: {{name: {name}, namespace: {cluster}}}\nspec:\n  workload:\n    manifests:\n    \
         - apiVersion: v1\n      kind: Namespace\n      metadata: {{name: {ns}}}\n    \
         - apiVersion: apps/v1\n      kind: Deployment\n      metadata: {{name: web, namespace: {ns}}}\n      \
         spec:\n        replicas: {replicas}\n        minReadySeconds: 15\n        \
         progressDeadlineSeconds: 20\n        selector: {{matchLabels: {{app: web}}}}\n        \
         template:\n          metadata: {{labels: {{app: web}}}}\n          spec:\n            \
         containers:\n            - name: web\n              image: {image}\n              \
         resources: {{requests: {{cpu: \"1\"}}}}\n  manifestConfigs:\n  \
         - resourceIdentifier: {{group: apps, resource: deployments, name: web, namespace: {ns}}}\n    \
         feedbackRules:\n    - type: WellKnownStatus\n    - type: JSONPaths\n      \
         jsonPaths: [{{name: status, path: .status}}]\n"
    )
}

#[test]
#[ignore = "needs the OCM testenv: run through cargo xtask test"]
fn hub_ocm_health_comes_from_status_feedback_with_the_member_controllers_reason() {
    use flotilla::model::HealthKind;

    let _turn = ocm_turn();
    let name = unique("health");
    let _works: Vec<Cleanup> = env()
        .members
        .iter()
        .map(|m| Cleanup::new("hub", &["manifestwork", &name, "-n", m]))
        .collect();
    // The console is open before the works exist, so it sees the rollout from its start.
    let (mut session, mut events) = hub_console();
    for member in &env().members {
        apply(
            "hub",
            &deployment_work(member, &name, &name, 2, "nginx:1.27"),
        );
    }
    let key = format!("Deployment/{name}/web");
    let limit = Duration::from_secs(240);
    let members = &env().members;
    assert!(
        harness::pump_until_healthy(&mut session, &mut events, &key, limit),
        "the rollout was seen in progress"
    );
    let healthy = harness::console_health(&session, &key);
    for member in members {
        assert!(
            healthy[member].1.starts_with("status feedback: "),
            "{healthy:?}"
        );
        assert_eq!(
            harness::available_replicas(member, &name),
            "2",
            "kubectl on {member}"
        );
    }
    let status = harness::hub_status_until_healthy(&key, limit);
    assert_eq!(status.len(), 2, "{status:?}");

    // member-2's ManifestWork alone rolls onto an image with more replicas than its Node holds.
    apply(
        "hub",
        &deployment_work("member-2", &name, &name, 6, "nginx:1.28"),
    );
    let health = harness::pump_until_degraded(&mut session, &mut events, &key, "member-2", limit);
    let reason = &health["member-2"].1;
    assert!(
        reason.contains("ProgressDeadlineExceeded") && reason.contains("has timed out progressing"),
        "the member controller's reason, through OCM's feedback: {reason}"
    );
    assert_eq!(health["member-1"].0, HealthKind::Healthy, "{health:?}");
    let on_member = json("member-2", &["get", "deploy", "web", "-n", &name]);
    let reason_on_member = on_member["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Progressing")
        .and_then(|c| c["reason"].as_str())
        .map(str::to_string);
    assert_eq!(
        reason_on_member.as_deref(),
        Some("ProgressDeadlineExceeded")
    );
    let status = harness::hub_status_health(&key);
    assert_eq!(status["member-2"].0, "Degraded", "{status:?}");
    assert!(
        status["member-2"].1.contains("ProgressDeadlineExceeded"),
        "{status:?}"
    );
    assert_eq!(status["member-1"].0, "Healthy", "{status:?}");
}

/// `flotilla --hub hub ARGS…` printing JSON, parsed (exit 0, 1 or 3 allowed: status reports
/// cells that are not placed or not healthy yet).
fn hub_json(args: &[&str]) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--kubeconfig")
        .arg(&env().kubeconfig_path)
        .args(["--hub", "hub"])
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .expect("run flotilla");
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 3)),
        "{}",
        harness::output_text(&out)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}", harness::output_text(&out)))
}

#[test]
#[ignore = "needs the OCM testenv: run through cargo xtask test"]
fn hub_ocm_render_and_status_pick_objects_by_namespace_and_the_manifests_labels() {
    let test = work_test("scope", "member-2");
    let name = test.name.as_str();
    let labelled = format!(
        "    - apiVersion: v1\n      kind: ConfigMap\n      \
         metadata: {{name: labelled, namespace: {name}, labels: {{app: web}}}}\n      \
         data: {{color: green}}\n"
    );
    apply("hub", &manifest_work("member-2", name, name, &labelled));
    eventually("the labelled ConfigMap on member-2", APPLY_LIMIT, || {
        member_has("member-2", &["get", "configmap", "labelled", "-n", name]).then_some(())
    });
    let listed = |value: &Value, list: &str| {
        let mut out: Vec<String> = value[list]
            .as_array()
            .into_iter()
            .flatten()
            .map(|entry| {
                let (kind, object_name) = match entry.get("object") {
                    Some(object) => (&object["kind"], &object["metadata"]["name"]),
                    None => (&entry["resource"]["kind"], &entry["resource"]["name"]),
                };
                format!(
                    "{} {}/{}",
                    entry["cluster"].as_str().unwrap_or_default(),
                    kind.as_str().unwrap_or_default(),
                    object_name.as_str().unwrap_or_default()
                )
            })
            .collect();
        out.sort();
        out
    };
    let render = |selector: &str| {
        let value = hub_json(&["render", "-o", "json", "-n", name, "-l", selector]);
        (listed(&value, "items"), listed(&value, "unplaced"))
    };
    assert_eq!(
        render("app=web"),
        (
            vec!["member-2 ConfigMap/labelled".to_string()],
            vec!["member-1 ConfigMap/labelled".to_string()]
        )
    );
    assert_eq!(
        render("!app"),
        (
            vec!["member-2 ConfigMap/colors".to_string()],
            vec!["member-1 ConfigMap/colors".to_string()]
        ),
        "-n leaves the Namespace out"
    );
    // Once OCM reports the ManifestWork Available, the one cell in scope is in sync.
    let cells = || {
        let status = hub_json(&["status", "-o", "json", "-n", name, "-l", "app=web"]);
        status["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|item| {
                format!(
                    "{} {} {}",
                    item["cluster"].as_str().unwrap_or_default(),
                    item["resource"]["name"].as_str().unwrap_or_default(),
                    item["sync"].as_str().unwrap_or_default()
                )
            })
            .collect::<Vec<String>>()
    };
    let expected = [
        "member-1 labelled NotPlaced".to_string(),
        "member-2 labelled InSync".to_string(),
    ];
    let mut last = Vec::new();
    let settled = (0..60).any(|_| {
        last = cells();
        let done = last == expected;
        if !done {
            std::thread::sleep(Duration::from_secs(1));
        }
        done
    });
    assert!(settled, "status --hub -n -l: {last:?}");
}

#[test]
#[ignore = "needs the OCM testenv: run through cargo xtask test"]
fn hub_ocm_the_live_view_reads_a_manifestworks_deployment_and_its_events_on_the_member() {
    let test = work_test("object-view", "member-1");
    let name = test.name.as_str();
    let (mut session, mut events) = hub_console();
    apply(
        "hub",
        &deployment_work("member-1", name, name, 1, "nginx:1.27"),
    );
    let key = format!("Deployment/{name}/web");
    let limit = Duration::from_secs(180);
    // member-1's deployment controller has scaled the Deployment's ReplicaSet: an Event.
    eventually("web's Events on member-1", limit, || {
        harness::deployment_events("member-1", name)
            .iter()
            .any(|(reason, _)| reason == "ScalingReplicaSet")
            .then_some(())
    });
    events.pump(&mut session, limit, &|s| {
        s.state
            .resources
            .iter()
            .any(|row| row.target.display_key() == key)
    });

    // `enter` on the cell: the object view reads member-1 itself (through its context).
    let read = harness::live_view_of(&mut session, &mut events, &key, "member-1", &|read| {
        read.live
            .events
            .iter()
            .any(|e| e.reason == "ScalingReplicaSet")
    });
    assert!(read.live.error.is_none(), "{:?}", read.live.error);
    let live = read
        .live
        .object
        .as_ref()
        .expect("member-1 holds the Deployment");
    let on_member = json("member-1", &["get", "deployment", "web", "-n", name]);
    assert_eq!(
        live["metadata"]["uid"], on_member["metadata"]["uid"],
        "kubectl on member-1 reads the same object"
    );
    assert_eq!(live["spec"], on_member["spec"], "kubectl on member-1");
    assert!(read.yaml.contains("image: nginx:1.27"), "{}", read.yaml);
    assert_eq!(
        read.live.diff, "",
        "member-1 holds what its ManifestWork says"
    );
    let listed = harness::deployment_events("member-1", name);
    let of_deployment: Vec<_> = read
        .live
        .events
        .iter()
        .filter(|e| e.object == format!("Deployment {name}/web"))
        .collect();
    assert!(!of_deployment.is_empty(), "{:?}", read.live.events);
    for event in of_deployment {
        let pair = (event.reason.clone(), event.message.clone());
        assert!(
            listed.contains(&pair),
            "{pair:?} among kubectl's {listed:?}"
        );
    }

    // `status --hub --resource` reads the same member by the same code.
    let fleet = tempfile::tempdir().expect("a fleet dir");
    let out = harness::flotilla(
        fleet.path(),
        &["--hub", "hub", "status", "--resource", &key, "-o", "json"],
    );
    let value: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("status -o json: {}", harness::output_text(&out)));
    let item = value["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|item| item["cluster"] == "member-1")
        .unwrap_or_else(|| panic!("member-1's cell: {value}"));
    assert_eq!(
        item["live"]["metadata"]["uid"], on_member["metadata"]["uid"],
        "{item}"
    );
    assert!(
        item["events"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|e| e["reason"] == "ScalingReplicaSet"),
        "{item}"
    );
    let on_member_2 = value["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|item| item["cluster"] == "member-2");
    assert!(
        on_member_2.is_none_or(|item| item["sync"] == "NotPlaced" && item.get("live").is_none()),
        "member-2 is not placed: nothing read there: {on_member_2:?}"
    );
}
