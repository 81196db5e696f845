//! Checks of the Karmada test environment (`cargo xtask testenv up --hub karmada`), driven
//! only through kubectl: a Deployment template with a PropagationPolicy and an
//! OverridePolicy reaches exactly the placed member with the overridden image, the hub shows
//! the ResourceBinding and Works with Karmada's conditions, Divided scheduling spreads
//! replicas over the fake Nodes' capacity, a member stopped with `testenv stop` turns not
//! Ready, and the oracle: flotilla's offline `render` of the same files equals, field for
//! field, the manifests Karmada writes into its Works (Duplicated and Divided, overriders,
//! policy priority, taints and tolerations, propagateDeps, and suspension: flotilla's
//! suspended cells are the Works Karmada holds back), as does `--hub hub render`; `plan`
//! predicts the objects Karmada refuses to adopt under `conflictResolution: Abort`; an override edited
//! through the console's session on the hub reaches the member exactly as previewed, and `a`
//! reschedules; `plan --hub` and `drift --hub` compare with what Karmada rendered, reading
//! members through their contexts or Karmada's cluster proxy; health follows Karmada's
//! aggregated status, a stuck member turns its cell Degraded, and the object view reads that
//! member's object and Events, as `status --hub --resource -o json` does for every member
//! (kubectl agrees; a Secret's value never shows). `cargo xtask test` runs them in their own
//! step against `testenv up --hub karmada` (their names start with `hub_karmada_`, which the
//! plain-hub step skips); they only touch their own namespaces, and the outage test restarts
//! the member it stops. A customization of a CRD's kind on the hub divides an instance as
//! flotilla's render does and judges its health in `status --hub` and the console, which takes
//! the customization edited on the hub without a restart.

mod harness;

use std::time::{Duration, Instant};

use serde_json::Value;

use harness::console::press_in;
use harness::{
    FleetDir, HubTest, apply, column_of, condition, env, eventually, hub_clusters, hub_console,
    json, kubectl, kubectl_ok, running_web_pods, select_row, serial, testenv_cmd_ok,
};

/// Panics with instructions unless the hub is a Karmada hub with the members joined.
fn karmada_hub() {
    let out = kubectl("hub", &["get", "clusters", "-o", "name"]);
    assert!(
        out.status.success(),
        "these tests need the Karmada test environment: `cargo xtask testenv up --hub karmada \
         --members 2` and FLOTILLA_TESTENV_KUBECONFIG=target/testenv/kubeconfig ({})",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    for member in &env().members {
        let name = format!("cluster.cluster.karmada.io/{member}");
        assert!(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|l| l == name),
            "{member} is not joined to the hub"
        );
    }
}

/// A test on the Karmada hub: alone, with a namespace of its own on the hub.
fn karmada_test(name: &str) -> HubTest {
    HubTest::on_hub(name, karmada_hub)
}

fn deployment(ns: &str, name: &str, replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: {ns}}}\n\
         spec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n  \
         template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers:\n      \
         - name: web\n        image: nginx:1.25\n        \
         resources: {{requests: {{cpu: 500m, memory: 256Mi}}}}\n"
    )
}

/// The Deployment's first image on a member, `None` while it does not exist there.
fn member_image(member: &str, ns: &str, name: &str) -> Option<String> {
    let out = kubectl(
        member,
        &[
            "get",
            "deployment",
            name,
            "-n",
            ns,
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ],
    );
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).to_string())
}

/// Works in `karmada-es-<member>` that carry Deployment `ns/name`.
fn works_for(member: &str, ns: &str, name: &str) -> Vec<Value> {
    let list = json(
        "hub",
        &["get", "works", "-n", &format!("karmada-es-{member}")],
    );
    list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|w| {
                    w.pointer("/spec/workload/manifests")
                        .and_then(Value::as_array)
                        .is_some_and(|ms| {
                            ms.iter().any(|m| {
                                m["kind"] == "Deployment"
                                    && m["metadata"]["name"] == name
                                    && m["metadata"]["namespace"] == ns
                            })
                        })
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_policy_and_override_reach_exactly_the_placed_member() {
    // Created on the hub only: Karmada propagates the namespace to the members itself.
    let test = karmada_test("karmada-placement");
    let ns = test.ns();
    apply(
        "hub",
        &format!(
            "{}\n---\n{}",
            policy("PropagationPolicy", ns, "web", WEB, &placed_on("member-1")),
            policy(
                "OverridePolicy",
                ns,
                "web",
                WEB,
                &tag_on("member-1", "1.27")
            ),
        ),
    );
    apply("hub", &deployment(ns, "web", 2));

    let image = eventually(
        "the Deployment on member-1",
        Duration::from_secs(90),
        || member_image("member-1", ns, "web"),
    );
    assert_eq!(
        image, "nginx:1.27",
        "member-1 got the template without the override"
    );
    assert_eq!(
        member_image("member-2", ns, "web"),
        None,
        "member-2 is not placed but got the Deployment"
    );

    let binding = eventually(
        "the ResourceBinding to be fully applied",
        Duration::from_secs(60),
        || {
            let rb = json(
                "hub",
                &["get", "resourcebinding", "web-deployment", "-n", ns],
            );
            (condition(&rb, "Scheduled") == Some("True")
                && condition(&rb, "FullyApplied") == Some("True"))
            .then_some(rb)
        },
    );
    let clusters: Vec<&str> = binding["spec"]["clusters"]
        .as_array()
        .map(|cs| cs.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(clusters, ["member-1"]);

    let works = eventually(
        "an Applied Work for member-1",
        Duration::from_secs(60),
        || {
            let works = works_for("member-1", ns, "web");
            works
                .iter()
                .any(|w| condition(w, "Applied") == Some("True"))
                .then_some(works)
        },
    );
    assert_eq!(works.len(), 1, "one Work per placed cluster");
    let manifest = &works[0]["spec"]["workload"]["manifests"][0];
    assert_eq!(
        manifest["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.27",
        "the Work carries the overridden manifest"
    );
    assert!(works_for("member-2", ns, "web").is_empty());
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_divided_replicas_follow_the_fake_nodes_capacity() {
    let test = karmada_test("karmada-divided");
    let ns = test.ns();
    let divided = format!(
        "{}    replicaScheduling:\n      \
         replicaSchedulingType: Divided\n      replicaDivisionPreference: Weighted\n      \
         weightPreference: {{dynamicWeight: AvailableReplicas}}\n",
        placed_on("member-1, member-2")
    );
    deploy_web(ns, 4, &divided);
    let replicas = eventually(
        "both members to get a share of the replicas",
        Duration::from_secs(90),
        || {
            let mut shares = Vec::new();
            for member in ["member-1", "member-2"] {
                let out = kubectl(
                    member,
                    &[
                        "get",
                        "deployment",
                        "web",
                        "-n",
                        ns,
                        "-o",
                        "jsonpath={.spec.replicas}",
                    ],
                );
                if !out.status.success() {
                    return None;
                }
                shares.push(String::from_utf8_lossy(&out.stdout).parse::<u32>().ok()?);
            }
            Some(shares)
        },
    );
    assert_eq!(replicas.iter().sum::<u32>(), 4, "{replicas:?}");
    assert!(replicas.iter().all(|r| *r > 0), "{replicas:?}");
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_a_stopped_member_turns_not_ready() {
    let _serial = serial();
    karmada_hub();
    let ready = |member: &str| {
        let cluster = json("hub", &["get", "cluster", member]);
        condition(&cluster, "Ready").map(str::to_string)
    };
    assert_eq!(ready("member-2").as_deref(), Some("True"));
    testenv_cmd_ok(&["stop", "member-2"]);
    // Started again even when an assertion below fails, so the tests after this one have it.
    let restart = harness::Restart("member-2");
    let t = Instant::now();
    eventually(
        "member-2's Ready condition to turn False",
        Duration::from_secs(120),
        || (ready("member-2").as_deref() == Some("False")).then_some(()),
    );
    eprintln!(
        "member-2 reported not Ready {:.1} s after `testenv stop`",
        t.elapsed().as_secs_f64()
    );
    // flotilla shows what the hub reports, with Karmada's reason.
    let listed = hub_clusters();
    let member = listed
        .iter()
        .find(|item| item["name"] == "member-2")
        .expect("member-2 listed");
    assert_eq!(member["health"], "Unreachable", "{member}");
    assert!(
        member["message"]
            .as_str()
            .is_some_and(|m| m.contains("ClusterNotReachable")),
        "{member}"
    );
    drop(restart);
    eventually(
        "member-2 to be Ready again",
        Duration::from_secs(120),
        || (ready("member-2").as_deref() == Some("True")).then_some(()),
    );
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_clusters_lists_the_members_as_the_hub_reports_them() {
    let _serial = serial();
    karmada_hub();
    let listed = hub_clusters();
    let names: Vec<&str> = listed.iter().filter_map(|i| i["name"].as_str()).collect();
    assert_eq!(
        names,
        env().members.iter().map(String::as_str).collect::<Vec<_>>()
    );
    for item in &listed {
        assert_eq!(item["health"], "Ready", "{item}");
        assert_eq!(item["version"], "v1.36.3", "{item}");
        assert_eq!(
            item["context"], item["name"],
            "members keep their contexts: {item}"
        );
    }
    let plain = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--kubeconfig")
        .arg(&env().kubeconfig_path)
        .args(["--hub", "member-1", "clusters"])
        .env_remove("KUBECONFIG")
        .output()
        .expect("run flotilla");
    assert_eq!(plain.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&plain.stderr).contains("is not a federation hub"),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
}

/// Applies ConfigMap `colors` in `ns` on the hub with a PropagationPolicy naming `members`.
fn colors_on(ns: &str, members: &str) {
    apply(
        "hub",
        &format!(
            r#"apiVersion: v1
kind: ConfigMap
metadata: {{name: colors, namespace: {ns}}}
data: {{color: blue}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: colors, namespace: {ns}}}
spec:
  resourceSelectors: [{{apiVersion: v1, kind: ConfigMap, name: colors}}]
  placement:
    clusterAffinity: {{clusterNames: [{members}]}}
"#
        ),
    );
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_the_console_model_shows_the_bindings_clusters_and_each_works_state() {
    use flotilla::backend::hub;
    use flotilla::model::CellStatus;

    let test = karmada_test("hub-model");
    let ns = &test.ns;
    colors_on(&ns.name, "member-1");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let hub = runtime
        .block_on(hub::connect(
            Some(&env().kubeconfig_path),
            "hub",
            Default::default(),
        ))
        .expect("connect to the hub");
    assert_eq!(hub.kind, hub::HubKind::Karmada);
    let key = format!("ConfigMap/{}/colors", ns.name);
    let (view, row) = eventually(
        "the binding's Work to be Applied on member-1",
        Duration::from_secs(60),
        || {
            let view = runtime.block_on(hub.read()).expect("read the hub");
            let row = view
                .rows
                .iter()
                .position(|r| r.target.display_key() == key)?;
            (view.cell(row, 0).0 == CellStatus::InSync).then_some((view, row))
        },
    );
    let names: Vec<&str> = view.clusters.iter().map(|(s, _)| s.name.as_str()).collect();
    assert_eq!(names[..2], ["member-1", "member-2"]);
    assert_eq!(
        view.rows[row].cells.keys().collect::<Vec<_>>(),
        ["member-1"],
        "the binding's clusters"
    );
    assert_eq!(
        view.rows[row].source,
        format!("ResourceBinding {}/colors-configmap", ns.name)
    );
    let (status, message) = view.cell(row, 0);
    assert_eq!(status, CellStatus::InSync);
    assert!(
        message
            .as_deref()
            .is_some_and(|m| m.starts_with("Work Applied")),
        "{message:?}"
    );
    let CellStatus::NotPlaced(reason) = view.cell(row, 1).0 else {
        panic!("member-2 is not scheduled");
    };
    assert!(reason.contains("did not schedule"), "{reason}");
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_a_work_status_changed_on_the_hub_reaches_exactly_its_cell_without_a_relist() {
    use flotilla::backend::hub::cache;
    use flotilla::backend::hub::console::view_changes;
    use flotilla::messages::BackendEvent;
    use flotilla::model::CellStatus;

    let test = karmada_test("hub-watch");
    let ns = &test.ns;
    colors_on(&ns.name, "member-1, member-2");
    let works = eventually("both Works to be Applied", Duration::from_secs(60), || {
        let works: Vec<Value> = ["member-1", "member-2"]
            .iter()
            .flat_map(|member| {
                let list = json(
                    "hub",
                    &["get", "works", "-n", &format!("karmada-es-{member}")],
                );
                list["items"].as_array().cloned().unwrap_or_default()
            })
            .filter(|work| {
                work.pointer("/spec/workload/manifests/0/metadata/namespace")
                    == Some(&Value::from(ns.name.as_str()))
            })
            .collect();
        (works.len() == 2
            && works
                .iter()
                .all(|w| condition(w, "Applied") == Some("True")))
        .then_some(works)
    });
    let (mut session, mut hub_events) = hub_console();
    let key = format!("ConfigMap/{}/colors", ns.name);
    let row = select_row(&mut session, &key);
    let (member_1, member_2) = (
        column_of(&session, "member-1"),
        column_of(&session, "member-2"),
    );
    hub_events.pump(&mut session, Duration::from_secs(60), &|s| {
        s.state.cells.status(row, member_1) == CellStatus::InSync
            && s.state.cells.status(row, member_2) == CellStatus::InSync
            && s.state
                .notice
                .as_ref()
                .is_some_and(|n| n.contains("caches synced"))
    });
    let (relists, full_reads) = (cache::relists(), view_changes::full_reads());
    assert!(
        full_reads >= 1,
        "the backend built its view once at the start"
    );

    let work = works
        .iter()
        .find(|w| w["metadata"]["namespace"] == "karmada-es-member-1")
        .expect("member-1's Work");
    let name = work["metadata"]["name"].as_str().expect("a name");
    kubectl_ok(
        "hub",
        &[
            "-n",
            "karmada-es-member-1",
            "patch",
            "work",
            name,
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"conditions":[{"type":"Applied","status":"False","reason":"ProbeFailed","message":"set with kubectl","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}"#,
        ],
    );
    let failed = CellStatus::Failed("ProbeFailed: set with kubectl".into());
    let seen = hub_events.pump_seeing(&mut session, Duration::from_secs(30), &|s| {
        s.state.cells.status(row, member_1) == failed
    });
    assert_eq!(
        session.state.cells.status(row, member_2),
        CellStatus::InSync,
        "member-2's Work did not change"
    );
    let ours: Vec<u32> = seen
        .iter()
        .flat_map(|event| match event {
            BackendEvent::Cells(cells) => cells.clone(),
            _ => Vec::new(),
        })
        .filter(|cell| cell.cell.resource as usize == row)
        .map(|cell| cell.cell.cluster)
        .collect();
    // Karmada's own status controller may rewrite member-2's Work meanwhile (its cell then
    // comes along with what changed); what must hold is that member-1's change came as a cell.
    assert!(
        ours.contains(&(member_1 as u32)) && ours.len() <= 2,
        "member-1's change reaches the console as its own cell update: {ours:?}"
    );
    assert!(
        !seen
            .iter()
            .any(|event| matches!(event, BackendEvent::Snapshot { .. })),
        "no whole matrix was sent"
    );
    assert_eq!(
        (cache::relists(), view_changes::full_reads()),
        (relists, full_reads),
        "the change came through the watch: no relist, no full read of the view"
    );
}

// ----- Oracle: flotilla's offline render against the Works Karmada writes -------------------

/// The hub's member Clusters as fleet inventory documents: names, labels and taints as Karmada
/// holds them (so the offline render schedules over the same clusters).
fn hub_inventory() -> String {
    let list = json("hub", &["get", "clusters"]);
    let mut docs = Vec::new();
    for cluster in list["items"].as_array().into_iter().flatten() {
        let mut spec = serde_json::Map::new();
        for field in ["syncMode", "provider", "region", "zone", "zones", "taints"] {
            if let Some(value) = cluster["spec"].get(field) {
                spec.insert(field.to_string(), value.clone());
            }
        }
        if let Some(taints) = spec.get_mut("taints").and_then(Value::as_array_mut) {
            for taint in taints {
                if let Some(taint) = taint.as_object_mut() {
                    taint.remove("timeAdded");
                }
            }
        }
        let mut metadata = serde_json::json!({"name": cluster["metadata"]["name"]});
        if let Some(labels) = cluster["metadata"].get("labels") {
            metadata["labels"] = labels.clone();
        }
        let doc = serde_json::json!({
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "Cluster",
            "metadata": metadata,
            "spec": spec,
        });
        docs.push(doc.to_string());
    }
    docs.join("\n---\n")
}

/// `namespace/kind/name` of an object.
fn object_key(object: &Value) -> String {
    format!(
        "{}/{}/{}",
        object["metadata"]["namespace"].as_str().unwrap_or(""),
        object["kind"].as_str().unwrap_or(""),
        object["metadata"]["name"].as_str().unwrap_or("")
    )
}

/// Every leaf of `value` (scalars, empty objects and empty arrays) by JSON pointer.
fn leaves(value: &Value, at: String, out: &mut std::collections::BTreeMap<String, Value>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                let key = key.replace('~', "~0").replace('/', "~1");
                leaves(child, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (index, child) in items.iter().enumerate() {
                leaves(child, format!("{at}/{index}"), out);
            }
        }
        other => {
            out.insert(at, other.clone());
        }
    }
}

type Leaves = std::collections::BTreeMap<String, Value>;

fn leaves_of(value: &Value) -> Leaves {
    let mut out = Leaves::new();
    leaves(value, String::new(), &mut out);
    out
}

/// The labels and annotations Karmada adds for itself (keys in its own `karmada.io` domains).
fn is_karmadas_own(pointer: &str) -> bool {
    ["/metadata/labels/", "/metadata/annotations/"]
        .iter()
        .any(|prefix| {
            pointer
                .strip_prefix(prefix)
                .is_some_and(|key| key.contains("karmada.io"))
        })
}

/// The ownership label and source annotation flotilla adds to what it applies directly.
fn is_flotillas_own(pointer: &str, value: &Value) -> bool {
    (pointer == "/metadata/labels/app.kubernetes.io~1managed-by" && value == "flotilla")
        || pointer.starts_with("/metadata/annotations/flotilla.dev~1")
}

/// The (cluster, object) pairs Karmada wrote into Works for objects in `ns`, as leaves.
fn work_manifests(ns: &str) -> std::collections::BTreeMap<(String, String), Value> {
    manifests_in_works(ns, |_| true)
        .into_iter()
        .map(|(cluster, manifest)| ((cluster, object_key(&manifest)), manifest))
        .collect()
}

/// (cluster, manifest) of each object in `ns` that the Works `keep` passes carry.
fn manifests_in_works(ns: &str, keep: impl Fn(&Value) -> bool) -> Vec<(String, Value)> {
    let works = json("hub", &["get", "works", "-A"]);
    let mut out = Vec::new();
    for work in works["items"].as_array().into_iter().flatten() {
        let Some(cluster) = work["metadata"]["namespace"]
            .as_str()
            .and_then(|n| n.strip_prefix("karmada-es-"))
        else {
            continue;
        };
        if !keep(work) {
            continue;
        }
        for manifest in work
            .pointer("/spec/workload/manifests")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|m| m["metadata"]["namespace"] == ns)
        {
            out.push((cluster.to_string(), manifest.clone()));
        }
    }
    out
}

/// `placed`: each (cluster, key) of [`work_manifests`] as `cluster key`, in order.
fn placed(ns: &str) -> Vec<String> {
    work_manifests(ns)
        .keys()
        .map(|(c, k)| format!("{c} {k}"))
        .collect()
}

/// Panics with the mismatches unless the render and the Works agreed.
fn assert_agree(agreed: Result<(), Vec<String>>, works: &str) {
    if let Err(mismatches) = agreed {
        panic!(
            "flotilla's render differs from Karmada's {works}:\n  {}",
            mismatches.join("\n  ")
        );
    }
}

/// A render's items in `ns` (`{"items":[{"cluster","object"}]}`) by (cluster, object key).
fn rendered_in(rendered: &Value, ns: &str) -> std::collections::BTreeMap<(String, String), Value> {
    rendered["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["object"]["metadata"]["namespace"] == ns)
        .map(|item| {
            (
                (
                    item["cluster"].as_str().unwrap_or("").to_string(),
                    object_key(&item["object"]),
                ),
                item["object"].clone(),
            )
        })
        .collect()
}

/// What `flotilla render` of `fleet` writes for objects in `ns` (the implied Namespace
/// objects aside: Karmada propagates namespaces through its own namespace controller).
fn offline_render(
    fleet: &std::path::Path,
    ns: &str,
) -> std::collections::BTreeMap<(String, String), Value> {
    let out = harness::flotilla(fleet, &["render", "-o", "json", "--show-secrets"]);
    assert!(out.status.success(), "{}", harness::output_text(&out));
    let rendered: Value = serde_json::from_slice(&out.stdout).expect("render JSON");
    rendered_in(&rendered, ns)
}

/// How the Works differ from the offline render, field by field, ignoring only Karmada's own
/// labels and annotations, flotilla's own ownership marks, and the fields the hub's API
/// server added to the template (`added`: defaults and server metadata, by object key) where
/// the render has none.
fn oracle_mismatches(
    works: &std::collections::BTreeMap<(String, String), Value>,
    rendered: &std::collections::BTreeMap<(String, String), Value>,
    added: &std::collections::BTreeMap<String, Leaves>,
) -> Vec<String> {
    let mut mismatches = Vec::new();
    for key in rendered.keys().filter(|k| !works.contains_key(*k)) {
        mismatches.push(format!(
            "{} on {}: rendered, but no Work carries it",
            key.1, key.0
        ));
    }
    for (key, work) in works {
        let Some(render) = rendered.get(key) else {
            mismatches.push(format!(
                "{} on {}: in a Work, but not rendered",
                key.1, key.0
            ));
            continue;
        };
        // flotilla marks what it applies itself; through Karmada, Karmada's labels do that.
        let want: Leaves = leaves_of(render)
            .into_iter()
            .filter(|(pointer, value)| !is_flotillas_own(pointer, value))
            .collect();
        let server_added = added.get(&key.1);
        let got: Leaves = leaves_of(work)
            .into_iter()
            .filter(|(pointer, _)| {
                want.contains_key(pointer)
                    || !(is_karmadas_own(pointer)
                        || server_added.is_some_and(|a| a.contains_key(pointer)))
            })
            .collect();
        for (pointer, value) in &want {
            match got.get(pointer) {
                Some(v) if v == value => {}
                Some(v) => mismatches.push(format!(
                    "{} on {} {pointer}: rendered {value}, Karmada wrote {v}",
                    key.1, key.0
                )),
                None => mismatches.push(format!(
                    "{} on {} {pointer}: rendered {value}, Karmada wrote nothing",
                    key.1, key.0
                )),
            }
        }
        for (pointer, value) in got.iter().filter(|(p, _)| !want.contains_key(*p)) {
            mismatches.push(format!(
                "{} on {} {pointer}: Karmada wrote {value}, not rendered",
                key.1, key.0
            ));
        }
    }
    mismatches
}

/// The fields the hub's API server added to each template in `templates` (by object key):
/// the stored template's leaves that the file did not write.
fn server_added(ns: &str, templates: &[Value]) -> std::collections::BTreeMap<String, Leaves> {
    templates
        .iter()
        .map(|template| {
            let kind = template["kind"].as_str().unwrap_or("");
            let name = template["metadata"]["name"].as_str().unwrap_or("");
            let stored = json("hub", &["get", kind, name, "-n", ns]);
            let written = leaves_of(template);
            let added = leaves_of(&stored)
                .into_iter()
                .filter(|(pointer, _)| !written.contains_key(pointer))
                .collect();
            (object_key(&stored), added)
        })
        .collect()
}

/// Applies `policies` then `templates` (policies first, so each template is claimed by the
/// policy with the highest priority at once) to the hub, writes the same documents and the
/// hub's inventory as a fleet directory, and waits until Karmada's Works equal flotilla's
/// offline render of that directory. Returns the last mismatches on timeout.
fn oracle_case(ns: &str, policies: &str, templates: &str) -> Result<(), Vec<String>> {
    let fleet = hub_fleet(policies, templates);
    apply("hub", policies);
    apply("hub", templates);
    let rendered = offline_render(fleet.path(), ns);
    assert!(
        !rendered.is_empty(),
        "the offline render placed nothing in {ns}"
    );
    let added = server_added(ns, &documents(templates));
    works_agree(ns, &rendered, &added, |_| true)
}

/// The fleet directory of a case: the hub's inventory, and `policies` then `templates` in
/// one file.
fn hub_fleet(policies: &str, templates: &str) -> FleetDir {
    FleetDir::new()
        .clusters(hub_inventory())
        .fleet(format!("{policies}\n---\n{templates}"))
}

/// The YAML documents of `templates` (joined by `---` lines), parsed.
fn documents(templates: &str) -> Vec<Value> {
    templates
        .split("\n---\n")
        .map(|doc| serde_saphyr::from_str(doc).expect("template YAML"))
        .collect()
}

/// Waits until the Works Karmada holds for objects in `ns` (those `delivered` keeps, by
/// (cluster, key)) equal `rendered`; the last mismatches after 90 s.
fn works_agree(
    ns: &str,
    rendered: &std::collections::BTreeMap<(String, String), Value>,
    added: &std::collections::BTreeMap<String, Leaves>,
    delivered: impl Fn(&(String, String)) -> bool,
) -> Result<(), Vec<String>> {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let works = work_manifests(ns)
            .into_iter()
            .filter(|(key, _)| delivered(key))
            .collect();
        let mismatches = oracle_mismatches(&works, rendered, added);
        if mismatches.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(mismatches);
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn policy(kind: &str, ns: &str, name: &str, selectors: &str, spec: &str) -> String {
    format!(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: {kind}\nmetadata: {{name: {name}, namespace: {ns}}}\n\
         spec:\n  resourceSelectors: [{selectors}]\n{spec}"
    )
}

/// Deployment `web`, as a policy's resource selector.
const WEB: &str = "{apiVersion: apps/v1, kind: Deployment, name: web}";

/// A policy spec's placement on `clusters` (`member-1, member-2`).
fn placed_on(clusters: &str) -> String {
    format!("  placement:\n    clusterAffinity: {{clusterNames: [{clusters}]}}\n")
}

/// Applies PropagationPolicy `web` with `spec` for Deployment `web`, then the Deployment with
/// `replicas`, to the hub.
fn deploy_web(ns: &str, replicas: u32, spec: &str) {
    apply("hub", &policy("PropagationPolicy", ns, "web", WEB, spec));
    apply("hub", &deployment(ns, "web", replicas));
}

/// An OverridePolicy spec giving the image tag `tag` on `cluster`.
fn tag_on(cluster: &str, tag: &str) -> String {
    format!(
        "  overrideRules:\n  - targetCluster: {{clusterNames: [{cluster}]}}\n    overriders:\n      \
         imageOverrider: [{{component: Tag, operator: replace, value: \"{tag}\"}}]\n"
    )
}

fn config_map(ns: &str, name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {ns}, labels: {{app: {name}}}}}\ndata: {{greeting: hello}}"
    )
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_oracle_offline_render_equals_the_works_karmada_writes() {
    let test = karmada_test("karmada-oracle");
    let ns = test.ns();
    let deploy = |name: &str| format!("{{apiVersion: apps/v1, kind: Deployment, name: {name}}}");
    let both = &placed_on("member-1, member-2");
    let policies = [
        // Duplicated, with image, plaintext, labels and annotations overriders per cluster.
        policy("PropagationPolicy", ns, "dup", &deploy("dup"), both),
        policy(
            "OverridePolicy",
            ns,
            "dup-member-1",
            &deploy("dup"),
            "  overrideRules:\n  - targetCluster: {clusterNames: [member-1]}\n    overriders:\n      \
             imageOverrider:\n      - {component: Registry, operator: replace, value: registry.example.com}\n      \
             - {component: Tag, operator: replace, value: \"1.27\"}\n      \
             plaintext:\n      - {path: /spec/replicas, operator: replace, value: 5}\n      \
             labelsOverrider:\n      - {operator: add, value: {tier: edge}}\n",
        ),
        policy(
            "OverridePolicy",
            ns,
            "dup-member-2",
            &deploy("dup"),
            "  overrideRules:\n  - targetCluster: {clusterNames: [member-2]}\n    overriders:\n      \
             annotationsOverrider:\n      - {operator: add, value: {owner: team-b}}\n      \
             plaintext:\n      - {path: /spec/template/spec/containers/0/env, operator: add, value: [{name: MODE, value: canary}]}\n",
        ),
        // Divided by static weights 2:1.
        policy(
            "PropagationPolicy",
            ns,
            "split",
            &deploy("split"),
            "  placement:\n    clusterAffinity: {clusterNames: [member-1, member-2]}\n    \
             replicaScheduling:\n      replicaSchedulingType: Divided\n      \
             replicaDivisionPreference: Weighted\n      weightPreference:\n        staticWeightList:\n        \
             - {targetCluster: {clusterNames: [member-1]}, weight: 2}\n        \
             - {targetCluster: {clusterNames: [member-2]}, weight: 1}\n",
        ),
        // Two policies claim the same ConfigMap: the higher priority wins.
        policy(
            "PropagationPolicy",
            ns,
            "prio-low",
            "{apiVersion: v1, kind: ConfigMap, name: prio}",
            "  priority: 1\n  placement:\n    clusterAffinity: {clusterNames: [member-1]}\n",
        ),
        policy(
            "PropagationPolicy",
            ns,
            "prio-high",
            "{apiVersion: v1, kind: ConfigMap, labelSelector: {matchLabels: {app: prio}}}",
            "  priority: 5\n  placement:\n    clusterAffinity: {clusterNames: [member-2]}\n",
        ),
    ]
    .join("\n---\n");
    let templates = [
        deployment(ns, "dup", 2),
        deployment(ns, "split", 6),
        config_map(ns, "prio"),
    ]
    .join("\n---\n");
    assert_agree(oracle_case(ns, &policies, &templates), "Works");

    // The hub's own render (`--hub hub render`) is what the Works hold, object for object.
    let hub_render = harness::hub_render();
    assert_eq!(
        rendered_in(&hub_render, ns),
        work_manifests(ns),
        "--hub render is not what the Works hold"
    );
    assert!(
        hub_render["unplaced"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|u| {
                u["cluster"] == "member-1"
                    && u["resource"]["name"] == "prio"
                    && u["reason"]
                        .as_str()
                        .is_some_and(|r| r.contains("did not schedule"))
            }),
        "the lower-priority policy's cluster is listed as unplaced: {}",
        hub_render["unplaced"]
    );

    // -n and -l pick by namespace and by the resource template's labels — not the Work's:
    // member-1's labelsOverrider adds tier=edge to dup there, which -l does not match.
    let scoped = |selector: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .arg("--kubeconfig")
            .arg(&env().kubeconfig_path)
            .args([
                "--hub", "hub", "render", "-o", "json", "-n", ns, "-l", selector,
            ])
            .env_remove("KUBECONFIG")
            .output()
            .expect("run flotilla");
        assert!(out.status.success(), "{}", harness::output_text(&out));
        let rendered: Value = serde_json::from_slice(&out.stdout).expect("render JSON");
        let listed = |list: &str| {
            let mut out: Vec<String> = rendered[list]
                .as_array()
                .into_iter()
                .flatten()
                .map(|entry| {
                    let object = entry.get("object").unwrap_or(&entry["resource"]);
                    let name = object
                        .pointer("/metadata/name")
                        .or_else(|| object.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    format!(
                        "{} {}/{name}",
                        entry["cluster"].as_str().unwrap_or_default(),
                        object["kind"].as_str().unwrap_or_default()
                    )
                })
                .collect();
            out.sort();
            out
        };
        (listed("items"), listed("unplaced"))
    };
    assert_eq!(
        scoped("app=prio"),
        (
            vec!["member-2 ConfigMap/prio".to_string()],
            vec!["member-1 ConfigMap/prio".to_string()]
        )
    );
    assert_eq!(scoped("tier=edge"), (vec![], vec![]));
}

/// Removes a taint from a hub Cluster when dropped, even when an assertion fails.
struct Untaint(&'static str);

impl Drop for Untaint {
    fn drop(&mut self) {
        let _ = kubectl(
            "hub",
            &[
                "patch",
                "cluster",
                self.0,
                "--type=json",
                "-p",
                r#"[{"op":"remove","path":"/spec/taints"}]"#,
            ],
        );
    }
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_oracle_taints_and_tolerations_schedule_alike() {
    let test = karmada_test("karmada-oracle-taints");
    let ns = test.ns();
    let _untaint = Untaint("member-2");
    kubectl_ok(
        "hub",
        &[
            "patch",
            "cluster",
            "member-2",
            "--type=merge",
            "-p",
            r#"{"spec":{"taints":[{"key":"oracle-dedicated","value":"gpu","effect":"NoSchedule"}]}}"#,
        ],
    );
    let both = &placed_on("member-1, member-2");
    let policies = [
        policy(
            "PropagationPolicy",
            ns,
            "shy",
            "{apiVersion: v1, kind: ConfigMap, name: shy}",
            both,
        ),
        policy(
            "PropagationPolicy",
            ns,
            "bold",
            "{apiVersion: v1, kind: ConfigMap, name: bold}",
            &format!(
                "{both}    clusterTolerations:\n    \
                 - {{key: oracle-dedicated, operator: Equal, value: gpu, effect: NoSchedule}}\n"
            ),
        ),
    ]
    .join("\n---\n");
    let templates = [config_map(ns, "shy"), config_map(ns, "bold")].join("\n---\n");
    assert_agree(oracle_case(ns, &policies, &templates), "Works");
    assert_eq!(
        placed(ns),
        [
            format!("member-1 {ns}/ConfigMap/bold"),
            format!("member-1 {ns}/ConfigMap/shy"),
            format!("member-2 {ns}/ConfigMap/bold"),
        ],
        "the taint keeps `shy` off member-2 and `bold` tolerates it"
    );
}

/// propagateDeps: the ConfigMap, Secret and ServiceAccount a Deployment references go where
/// the Deployment goes, and a dependency with a policy of its own goes there as well; what
/// flotilla renders offline is what Karmada's dependencies distributor writes into Works.
#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_oracle_propagate_deps_follow_the_workload() {
    let test = karmada_test("karmada-oracle-deps");
    let ns = test.ns();
    let policies = [
        policy(
            "PropagationPolicy",
            ns,
            "web",
            WEB,
            "  propagateDeps: true\n  placement:\n    clusterAffinity: {clusterNames: [member-1]}\n",
        ),
        policy(
            "PropagationPolicy",
            ns,
            "shared",
            "{apiVersion: v1, kind: ConfigMap, name: shared}",
            &placed_on("member-2"),
        ),
    ]
    .join("\n---\n");
    let templates = [
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: {ns}}}\n\
             spec:\n  replicas: 1\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    \
             metadata: {{labels: {{app: web}}}}\n    spec:\n      serviceAccountName: web-sa\n      \
             containers:\n      - name: web\n        image: nginx:1.25\n        \
             envFrom: [{{configMapRef: {{name: settings}}}}, {{configMapRef: {{name: shared}}}}]\n        \
             env: [{{name: PASSWORD, valueFrom: {{secretKeyRef: {{name: creds, key: password}}}}}}]\n"
        ),
        config_map(ns, "settings"),
        config_map(ns, "shared"),
        config_map(ns, "unrelated"),
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata: {{name: creds, namespace: {ns}}}\ntype: Opaque\ndata: {{password: aHVudGVyMg==}}"
        ),
        format!("apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: web-sa, namespace: {ns}}}"),
    ]
    .join("\n---\n");
    assert_agree(oracle_case(ns, &policies, &templates), "Works");
    assert_eq!(
        placed(ns),
        [
            format!("member-1 {ns}/ConfigMap/settings"),
            format!("member-1 {ns}/ConfigMap/shared"),
            format!("member-1 {ns}/Deployment/web"),
            format!("member-1 {ns}/Secret/creds"),
            format!("member-1 {ns}/ServiceAccount/web-sa"),
            format!("member-2 {ns}/ConfigMap/shared"),
        ],
        "the dependencies follow web to member-1; shared also goes where its own policy puts it"
    );
}

/// A `kind: List` file and a `kind: ConfigMapList` file, applied with kubectl (which expands
/// them into their items, as flotilla's loader does), propagate exactly as their items would.
#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_oracle_kind_list_files_are_their_items() {
    let test = karmada_test("karmada-oracle-list");
    let ns = test.ns();
    let policies = [
        policy(
            "PropagationPolicy",
            ns,
            "listed",
            "{apiVersion: v1, kind: ConfigMap, labelSelector: {matchLabels: {from: list}}}",
            &placed_on("member-1"),
        ),
        policy(
            "PropagationPolicy",
            ns,
            "web",
            WEB,
            &placed_on("member-1, member-2"),
        ),
    ]
    .join("\n---\n");
    let listed = |name: &str| {
        format!(
            "  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {{name: {name}, namespace: {ns}, labels: {{from: list}}}}\n    data: {{greeting: hello}}\n"
        )
    };
    let list = format!(
        "apiVersion: v1\nkind: List\nitems:\n{}{}  - apiVersion: apps/v1\n    kind: Deployment\n    \
         metadata: {{name: web, namespace: {ns}}}\n    spec:\n      replicas: 1\n      \
         selector: {{matchLabels: {{app: web}}}}\n      template:\n        metadata: {{labels: {{app: web}}}}\n        \
         spec: {{containers: [{{name: web, image: nginx:1.25}}]}}\n",
        listed("one"),
        listed("two"),
    );
    let config_map_list = format!(
        "apiVersion: v1\nkind: ConfigMapList\nitems:\n{}",
        listed("three")
    );
    let fleet = FleetDir::new()
        .clusters(hub_inventory())
        .file("policies.yaml", &policies)
        .file("list.yaml", &list)
        .file("cm-list.yaml", &config_map_list);
    apply("hub", &policies);
    apply("hub", &list);
    apply("hub", &config_map_list);
    let items: Vec<Value> = [&list, &config_map_list]
        .iter()
        .flat_map(|text| {
            let doc: Value = serde_saphyr::from_str(text).expect("list YAML");
            doc["items"].as_array().cloned().unwrap_or_default()
        })
        .collect();
    let rendered = offline_render(fleet.path(), ns);
    let added = server_added(ns, &items);
    assert_agree(works_agree(ns, &rendered, &added, |_| true), "Works");
    assert_eq!(
        placed(ns),
        [
            format!("member-1 {ns}/ConfigMap/one"),
            format!("member-1 {ns}/ConfigMap/three"),
            format!("member-1 {ns}/ConfigMap/two"),
            format!("member-1 {ns}/Deployment/web"),
            format!("member-2 {ns}/Deployment/web"),
        ]
    );
}

/// The Works Karmada keeps for objects in `ns` with dispatching suspended, as (cluster, key).
fn suspended_works(ns: &str) -> std::collections::BTreeSet<(String, String)> {
    manifests_in_works(ns, |work| {
        work.pointer("/spec/suspendDispatching") == Some(&Value::Bool(true))
    })
    .into_iter()
    .map(|(cluster, manifest)| (cluster, object_key(&manifest)))
    .collect()
}

/// The (cluster, key) cells of objects in `ns` the hub view (`--hub`) shows as Suspended.
fn hub_suspended_cells(ns: &str) -> std::collections::BTreeSet<(String, String)> {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let view = runtime.block_on(async {
        let hub = flotilla::backend::hub::connect(
            Some(&env().kubeconfig_path),
            "hub",
            flotilla::backend::kube::kubeconfig::Timeouts::default(),
        )
        .await
        .expect("connect to the hub");
        hub.read().await.expect("read the hub")
    });
    view.rows
        .iter()
        .filter(|row| row.target.namespace.as_deref() == Some(ns))
        .flat_map(|row| {
            let key = format!("{ns}/{}/{}", row.target.kind, row.target.name);
            row.cells
                .iter()
                .filter(|(_, (status, _))| {
                    matches!(status, flotilla::model::CellStatus::Suspended(_))
                })
                .map(move |(cluster, _)| (cluster.clone(), key.clone()))
        })
        .collect()
}

/// suspension: the cells flotilla shows as suspended are exactly the Works Karmada holds back
/// (`suspendDispatching`), the member does not get them, and the rest equal the render.
#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_oracle_suspended_cells_are_the_works_karmada_holds_back() {
    let test = karmada_test("karmada-oracle-suspend");
    let ns = test.ns();
    let both = &placed_on("member-1, member-2");
    let policies = [
        policy(
            "PropagationPolicy",
            ns,
            "one",
            "{apiVersion: v1, kind: ConfigMap, name: one}",
            &format!(
                "  suspension: {{dispatchingOnClusters: {{clusterNames: [member-2]}}}}\n{both}"
            ),
        ),
        policy(
            "PropagationPolicy",
            ns,
            "all",
            "{apiVersion: v1, kind: ConfigMap, name: all}",
            &format!("  suspension: {{dispatching: true}}\n{both}"),
        ),
    ]
    .join("\n---\n");
    let templates = [config_map(ns, "one"), config_map(ns, "all")].join("\n---\n");
    let fleet = hub_fleet(&policies, &templates);
    apply("hub", &policies);
    apply("hub", &templates);
    let out = harness::flotilla(fleet.path(), &["render", "-o", "json"]);
    assert!(out.status.success(), "{}", harness::output_text(&out));
    let rendered: Value = serde_json::from_slice(&out.stdout).expect("render JSON");
    let shown: std::collections::BTreeSet<(String, String)> = rendered["suspended"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["resource"]["namespace"] == ns)
        .map(|s| {
            (
                s["cluster"].as_str().unwrap_or("").to_string(),
                format!(
                    "{ns}/{}/{}",
                    s["resource"]["kind"].as_str().unwrap_or(""),
                    s["resource"]["name"].as_str().unwrap_or("")
                ),
            )
        })
        .collect();
    assert_eq!(shown.len(), 3, "{}", rendered["suspended"]);
    let held = eventually(
        "Karmada holds the suspended Works",
        Duration::from_secs(90),
        || {
            let held = suspended_works(ns);
            (held.len() >= shown.len()).then_some(held)
        },
    );
    assert_eq!(
        held, shown,
        "flotilla's suspended cells are the Works Karmada holds back"
    );
    // Attached to the hub, the console's cells say Suspended exactly there, from the Works.
    let on_hub = eventually(
        "the hub view to show the held Works as Suspended",
        Duration::from_secs(60),
        || {
            let suspended = hub_suspended_cells(ns);
            (suspended == held).then_some(suspended)
        },
    );
    assert_eq!(on_hub, held);
    let rendered_items = offline_render(fleet.path(), ns);
    let added = server_added(ns, &documents(&templates));
    assert_agree(
        works_agree(ns, &rendered_items, &added, |key| !held.contains(key)),
        "dispatched Works",
    );
    let on_member_2 = kubectl("member-2", &["get", "configmap", "one", "-n", ns]);
    assert!(
        !on_member_2.status.success(),
        "member-2 is suspended and has no `one`"
    );
    eventually("member-1 gets `one`", Duration::from_secs(60), || {
        kubectl("member-1", &["get", "configmap", "one", "-n", ns])
            .status
            .success()
            .then_some(())
    });
}

/// conflictResolution: a ConfigMap member-1 already has without Karmada's label is refused
/// under Abort (the Work does not apply) and taken over under Overwrite; flotilla's `plan`,
/// run first, predicts exactly that.
#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_oracle_abort_refuses_an_object_it_did_not_create() {
    let test = HubTest::on(
        "karmada-oracle-conflict",
        &["hub".to_string(), "member-1".to_string()],
        karmada_hub,
    );
    let ns = test.ns();
    for name in ["kept", "taken"] {
        apply(
            "member-1",
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {ns}}}\ndata: {{greeting: local}}"
            ),
        );
    }
    let member_1 = &placed_on("member-1");
    let policies = [
        policy(
            "PropagationPolicy",
            ns,
            "kept",
            "{apiVersion: v1, kind: ConfigMap, name: kept}",
            member_1,
        ),
        policy(
            "PropagationPolicy",
            ns,
            "taken",
            "{apiVersion: v1, kind: ConfigMap, name: taken}",
            &format!("  conflictResolution: Overwrite\n{member_1}"),
        ),
    ]
    .join("\n---\n");
    let templates = [config_map(ns, "kept"), config_map(ns, "taken")].join("\n---\n");
    let fleet = hub_fleet(&policies, &templates);
    let out = harness::flotilla(
        fleet.path(),
        &["plan", "--cluster", "member-1", "-o", "json"],
    );
    let planned: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("plan JSON: {e}\n{}", harness::output_text(&out)));
    let action = |name: &str| -> (String, String) {
        planned["items"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|i| i["resource"]["kind"] == "ConfigMap" && i["resource"]["name"] == name)
            .map(|i| {
                (
                    i["action"].as_str().unwrap_or("").to_string(),
                    i["message"].as_str().unwrap_or("").to_string(),
                )
            })
            .unwrap_or_else(|| panic!("no plan item for {name}: {planned}"))
    };
    let (kept, why) = action("kept");
    assert_eq!(kept, "conflict", "{why}");
    assert!(
        why.starts_with("Karmada would refuse to adopt it (conflictResolution: Abort)"),
        "{why}"
    );
    // Overwrite: no refusal predicted (a field another manager owns is still shown as
    // server-side apply's own conflict, which Karmada's apply would override).
    let (_, why) = action("taken");
    assert!(!why.starts_with("Karmada would refuse"), "{why}");

    apply("hub", &policies);
    apply("hub", &templates);
    eventually(
        "Karmada takes `taken` over (Overwrite)",
        Duration::from_secs(90),
        || {
            let live = json("member-1", &["get", "configmap", "taken", "-n", ns]);
            (live["data"]["greeting"] == "hello").then_some(())
        },
    );
    let refused = eventually(
        "the Work of `kept` fails to apply (Abort)",
        Duration::from_secs(90),
        || {
            let works = json("hub", &["get", "works", "-n", "karmada-es-member-1"]);
            works["items"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|w| {
                    w.pointer("/spec/workload/manifests/0/metadata/name")
                        == Some(&Value::from("kept"))
                        && w.pointer("/spec/workload/manifests/0/metadata/namespace")
                            == Some(&Value::from(ns))
                        && condition(w, "Applied") == Some("False")
                })
                .cloned()
        },
    );
    let status = refused["status"].to_string();
    assert!(
        status.contains("already exists in the cluster member-1")
            && status.contains("Karmada will not manage this resource"),
        "{status}"
    );
    let live = json("member-1", &["get", "configmap", "kept", "-n", ns]);
    assert_eq!(live["data"]["greeting"], "local", "Karmada left it alone");
}

// ----- Editing on the hub, driven headless ---------------------------------------------------

/// Leaves of a Deployment's spec on a member (what a user would call its settings).
fn member_spec(member: &str, ns: &str, name: &str) -> Leaves {
    let live = json(member, &["get", "deployment", name, "-n", ns]);
    leaves_of(&live["spec"])
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_an_override_edited_in_the_console_reaches_the_member_exactly_as_previewed() {
    use flotilla::app::state::Mode;
    use flotilla::messages::PlanAction;
    use flotilla::model::CellStatus;

    let test = karmada_test("karmada-hub-edit");
    let ns = test.ns();
    let both = &placed_on("member-1, member-2");
    let policies = [
        policy("PropagationPolicy", ns, "web", WEB, both),
        policy(
            "OverridePolicy",
            ns,
            "web-tag",
            WEB,
            &tag_on("member-1", "1.27"),
        ),
    ]
    .join("\n---\n");
    apply("hub", &policies);
    apply("hub", &deployment(ns, "web", 2));
    eventually(
        "the override on member-1 and the template on member-2",
        Duration::from_secs(90),
        || {
            (member_image("member-1", ns, "web").as_deref() == Some("nginx:1.27")
                && member_image("member-2", ns, "web").as_deref() == Some("nginx:1.25"))
            .then_some(())
        },
    );
    let before_1 = member_spec("member-1", ns, "web");
    let before_2 = member_spec("member-2", ns, "web");

    // The console's session on the hub, without a terminal.
    let (mut session, mut hub_events) = hub_console();
    assert!(
        !session.state.readonly,
        "editable: {:?}",
        session.state.notice
    );
    assert_eq!(session.state.source, "hub hub · Karmada");
    let key = format!("Deployment/{ns}/web");
    let row = select_row(&mut session, &key);
    let member_1 = column_of(&session, "member-1");
    press_in(&mut session, "<tab>");
    assert_eq!(session.state.selected_cell().map(|(r, _)| r), Some(row));

    // o, e on the policy's image rule, 1.27 → 1.28, then review.
    press_in(&mut session, "o");
    let Mode::Overrides(editor) = &session.state.mode else {
        panic!("the override editor opens: {:?}", session.state.notice);
    };
    assert_eq!(editor.docs[0].title, format!("OverridePolicy {ns}/web-tag"));
    press_in(&mut session, "e<ctrl-u>1.28<enter><enter>");
    // The preview: the engine's render of the edited policy against the Works, per cluster.
    let dry_run = harness::pump_until_previewed(&mut session, &mut hub_events);
    let [item] = dry_run.as_slice() else {
        panic!("one cell changes, on member-1: {dry_run:?}");
    };
    assert_eq!(
        (item.cluster.as_str(), item.action),
        ("member-1", PlanAction::Update)
    );
    assert!(
        item.message
            .contains("the member's live object matches the Work"),
        "the preview checks member-1's live state too: {}",
        item.message
    );
    let changed = harness::changed_lines(&item.diff);
    assert_eq!(
        changed,
        ["-      - image: nginx:1.27", "+      - image: nginx:1.28"],
        "the preview predicts exactly the image change:\n{}",
        item.diff
    );

    // Confirm: the policy goes to the hub; Karmada re-renders the Work and the member follows.
    press_in(&mut session, "<enter>");
    assert!(
        matches!(session.state.mode, Mode::Confirm(_)),
        "{:?}",
        session.state.mode
    );
    press_in(&mut session, "y");
    hub_events.pump(&mut session, Duration::from_secs(90), &|s| {
        s.state.rollout.is_none()
            && s.state.cells.status(row, member_1) == CellStatus::InSync
            && s.state
                .notice
                .as_deref()
                .is_some_and(|n| !n.starts_with("writing"))
    });
    let stored = json(
        "hub",
        &[
            "get",
            "overridepolicy",
            "web-tag",
            "-n",
            ns,
            "--show-managed-fields",
        ],
    );
    assert_eq!(
        stored.pointer("/spec/overrideRules/0/overriders/imageOverrider/0/value"),
        Some(&Value::from("1.28"))
    );
    let managers: Vec<&str> = stored["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    let title = format!("OverridePolicy {ns}/web-tag");
    assert!(
        flotilla::backend::audit::read_entries()
            .iter()
            .any(|e| e["action"] == "hub-apply" && e["objects"][0] == title.as_str()),
        "the audit log records the hub write"
    );
    assert!(
        managers.contains(&"flotilla"),
        "server-side apply as flotilla: {managers:?}"
    );
    let after_1 = eventually("member-1 to run 1.28", Duration::from_secs(60), || {
        let spec = member_spec("member-1", ns, "web");
        (spec != before_1).then_some(spec)
    });
    let moved: Vec<(String, Option<&Value>, Option<&Value>)> = after_1
        .keys()
        .chain(before_1.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|p| after_1.get(*p) != before_1.get(*p))
        .map(|p| (p.clone(), before_1.get(p), after_1.get(p)))
        .collect();
    assert_eq!(
        moved,
        [(
            "/template/spec/containers/0/image".to_string(),
            Some(&Value::from("nginx:1.27")),
            Some(&Value::from("nginx:1.28"))
        )],
        "member-1 changed exactly as previewed"
    );
    assert_eq!(
        member_spec("member-2", ns, "web"),
        before_2,
        "member-2 untouched"
    );
    let Mode::Normal = session.state.mode else {
        panic!("back to the matrix: {:?}", session.state.mode);
    };

    // Unticking both cluster names removes `clusterNames`, a field kubectl's apply owns: the
    // hub must hold the edit exactly (server-side apply alone would leave kubectl's field).
    press_in(&mut session, "e <down> <enter>");
    let Mode::Placement(editor) = &session.state.mode else {
        panic!("the placement editor reviews: {:?}", session.state.notice);
    };
    assert!(editor.edit.clusters.is_empty(), "{:?}", editor.edit);
    press_in(&mut session, "<enter>");
    press_in(&mut session, "y");
    hub_events.pump(&mut session, Duration::from_secs(30), &|s| {
        s.state
            .notice
            .as_deref()
            .is_some_and(|n| n.starts_with("wrote PropagationPolicy") || n.contains("refused"))
    });
    let stored = json("hub", &["get", "propagationpolicy", "web", "-n", ns]);
    assert_eq!(
        stored.pointer("/spec/placement/clusterAffinity/clusterNames"),
        None,
        "the unticked names are gone from the hub: {}",
        stored["spec"]["placement"]
    );

    // `a` on a hub asks Karmada to reschedule the binding; its scheduler takes it up.
    press_in(&mut session, "a");
    let Mode::Confirm(pending) = &session.state.mode else {
        panic!("a asks first: {:?}", session.state.mode);
    };
    assert!(
        pending.summary[0].starts_with("reschedule Deployment/"),
        "{:?}",
        pending.summary
    );
    press_in(&mut session, "y");
    hub_events.pump(&mut session, Duration::from_secs(30), &|s| {
        s.state
            .notice
            .as_deref()
            .is_some_and(|n| n.starts_with("asked Karmada to reschedule ResourceBinding"))
    });
    let binding = json(
        "hub",
        &["get", "resourcebinding", "web-deployment", "-n", ns],
    );
    let triggered = binding
        .pointer("/spec/rescheduleTriggeredAt")
        .and_then(Value::as_str)
        .expect("rescheduleTriggeredAt set")
        .to_string();
    rescheduled_since(ns, "web-deployment", &triggered);

    // A template bound after the console started becomes a row at the bottom, with its cells;
    // its policies are not in the loaded fleet, so the editors say to reopen.
    apply(
        "hub",
        &format!(
            "{}\n---\n{}",
            config_map(ns, "late"),
            policy(
                "PropagationPolicy",
                ns,
                "late",
                "{apiVersion: v1, kind: ConfigMap, name: late}",
                &placed_on("member-1"),
            )
        ),
    );
    let late = format!("ConfigMap/{ns}/late");
    hub_events.pump(&mut session, Duration::from_secs(60), &|s| {
        s.state
            .resources
            .iter()
            .position(|r| r.target.display_key() == late)
            .is_some_and(|r| s.state.cells.status(r, member_1) == CellStatus::InSync)
    });
    let added = select_row(&mut session, &late);
    assert_eq!(added, session.state.resources.len() - 1, "appended last");
    assert_eq!(
        session.state.resources[row].target.display_key(),
        key,
        "the edited row keeps its place"
    );
    press_in(&mut session, "e");
    assert_eq!(session.state.mode, Mode::Normal);
    assert!(
        session
            .state
            .notice
            .as_deref()
            .is_some_and(|n| n.contains("reopen the console to edit it")),
        "{:?}",
        session.state.notice
    );
}

// ----- plan and drift with --hub ------------------------------------------------------------

fn flotilla_hub(
    kubeconfig: &std::path::Path,
    fleet: Option<&std::path::Path>,
    args: &[&str],
) -> std::process::Output {
    let state = tempfile::tempdir().expect("state dir");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"));
    cmd.arg("--kubeconfig").arg(kubeconfig);
    if let Some(fleet) = fleet {
        cmd.arg("--fleet").arg(fleet);
    }
    cmd.args(["--hub", "hub"])
        .args(args)
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_CONFIG_HOME", state.path())
        .env_remove("KUBECONFIG")
        .output()
        .expect("run flotilla")
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_plan_and_drift_compare_with_what_karmada_rendered() {
    let test = karmada_test("karmada-hub-plan");
    let ns = test.ns();
    let both = &placed_on("member-1, member-2");
    let override_tag = |tag: &str| {
        policy(
            "OverridePolicy",
            ns,
            "web-tag",
            WEB,
            &tag_on("member-1", tag),
        )
    };
    let propagation = policy("PropagationPolicy", ns, "web", WEB, both);
    apply(
        "hub",
        &format!("{propagation}\n---\n{}", override_tag("1.27")),
    );
    apply("hub", &deployment(ns, "web", 2));
    eventually("the override on member-1", Duration::from_secs(90), || {
        (member_image("member-1", ns, "web").as_deref() == Some("nginx:1.27")
            && member_image("member-2", ns, "web").is_some())
        .then_some(())
    });
    let fleet = FleetDir::new().clusters(hub_inventory());
    let write_fleet = |tag: &str| {
        fleet.write(
            "fleet.yaml",
            format!(
                "{propagation}\n---\n{}\n---\n{}",
                override_tag(tag),
                deployment(ns, "web", 2)
            ),
        )
    };
    let kubeconfig = &env().kubeconfig_path;

    write_fleet("1.27");
    let same = flotilla_hub(kubeconfig, Some(fleet.path()), &["plan", "-o", "json"]);
    let items: Value = serde_json::from_slice(&same.stdout).expect("plan JSON");
    let ours: Vec<&Value> = items["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["resource"]["namespace"] == ns)
        .collect();
    assert_eq!(ours.len(), 2, "{}", harness::output_text(&same));
    assert!(
        ours.iter().all(|i| i["action"] == "unchanged"),
        "the files say what Karmada rendered: {}",
        harness::output_text(&same)
    );

    write_fleet("1.29");
    let changed = flotilla_hub(
        kubeconfig,
        Some(fleet.path()),
        &[
            "plan",
            "--resource",
            &format!("Deployment/{ns}/web"),
            "-o",
            "json",
        ],
    );
    assert_eq!(
        changed.status.code(),
        Some(1),
        "{}",
        harness::output_text(&changed)
    );
    let items: Value = serde_json::from_slice(&changed.stdout).expect("plan JSON");
    let by_cluster = |cluster: &str| {
        items["items"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|i| i["cluster"] == cluster)
            .cloned()
            .unwrap_or_else(|| panic!("no plan item for {cluster}: {items}"))
    };
    let member_1 = by_cluster("member-1");
    assert_eq!(member_1["action"], "update");
    let diff = member_1["diff"].as_str().unwrap_or_default();
    assert!(
        diff.contains("-      - image: nginx:1.27") && diff.contains("+      - image: nginx:1.29"),
        "{diff}"
    );
    assert_eq!(by_cluster("member-2")["action"], "unchanged");

    // Drift: the members hold what Karmada rendered, read through their contexts and, with a
    // kubeconfig that only knows the hub, through Karmada's cluster proxy.
    let scope = ["drift", "--resource", &format!("Deployment/{ns}/web")];
    let direct = flotilla_hub(kubeconfig, None, &scope);
    assert_eq!(
        direct.status.code(),
        Some(0),
        "{}",
        harness::output_text(&direct)
    );
    let hub_only = tempfile::NamedTempFile::new().expect("kubeconfig");
    let minified = kubectl_ok("hub", &["config", "view", "--raw", "--minify"]);
    std::fs::write(hub_only.path(), minified).expect("hub-only kubeconfig");
    // The proxy really reaches member-1: the object read through it is member-1's.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let through_proxy = runtime.block_on(async {
        use flotilla::backend::fanout::cluster_api::ClusterApi;
        let hub = flotilla::backend::hub::connect(Some(hub_only.path()), "hub", Default::default())
            .await
            .expect("connect");
        let spec = flotilla::model::ClusterSpec {
            name: "member-1".into(),
            ..Default::default()
        };
        let client = hub
            .member_client(&spec, Default::default())
            .await
            .expect("proxy client");
        flotilla::backend::kube::api::KubeCluster::new(client, true)
            .get(&flotilla::model::ResourceRef {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                namespace: Some(ns.to_string()),
                name: "web".into(),
            })
            .await
            .expect("read through the proxy")
    });
    assert_eq!(
        through_proxy
            .as_ref()
            .and_then(|d| d.pointer("/spec/template/spec/containers/0/image")),
        Some(&Value::from("nginx:1.27")),
        "member-1's Deployment, read through Karmada's cluster proxy"
    );
    let proxied = flotilla_hub(hub_only.path(), None, &scope);
    assert_eq!(
        proxied.status.code(),
        Some(0),
        "{}",
        harness::output_text(&proxied)
    );
    assert!(
        String::from_utf8_lossy(&proxied.stdout).contains("Drift: 0 field(s)"),
        "{}",
        harness::output_text(&proxied)
    );
}

/// Runs flotilla on the hub with a state directory the calls share (the edit journal `undo`
/// reads), without a terminal.
fn editing(state: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--kubeconfig")
        .arg(&env().kubeconfig_path)
        .args(["--hub", "hub"])
        .args(args)
        .env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", state)
        .env_remove("KUBECONFIG")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run flotilla")
}

/// `placement set RESOURCE --add-cluster member-2 -o json` on the hub.
fn add_member_2(state: &std::path::Path, resource: &str) -> std::process::Output {
    editing(
        state,
        &[
            "placement",
            "set",
            resource,
            "--add-cluster",
            "member-2",
            "-o",
            "json",
        ],
    )
}

/// Merges `patch` into PropagationPolicy `ns/name` on the hub with kubectl (someone else's
/// change).
fn patch_policy(ns: &str, name: &str, patch: &str) {
    kubectl_ok(
        "hub",
        &[
            "patch",
            "propagationpolicy",
            name,
            "-n",
            ns,
            "--type",
            "merge",
            "-p",
            patch,
        ],
    );
}

/// The cluster names a PropagationPolicy on the hub places on, as kubectl reads them.
fn policy_clusters(ns: &str, name: &str) -> Vec<String> {
    let policy = json("hub", &["get", "propagationpolicy", name, "-n", ns]);
    policy
        .pointer("/spec/placement/clusterAffinity/clusterNames")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn report_of(output: &std::process::Output, code: i32) -> Value {
    assert_eq!(
        output.status.code(),
        Some(code),
        "{}",
        harness::output_text(output)
    );
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("not JSON ({err}): {}", harness::output_text(output)))
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_placement_set_reschedule_and_undo_write_to_the_hub() {
    let test = karmada_test("karmada-editors");
    let ns = test.ns();
    let state = tempfile::tempdir().expect("temp dir");
    deploy_web(ns, 1, &placed_on("member-1"));
    let resource = format!("Deployment/{ns}/web");
    eventually("web on member-1", Duration::from_secs(60), || {
        member_image("member-1", ns, "web")
    });

    // Adding a cluster loses none: written at once, and Karmada propagates it there.
    let added = report_of(&add_member_2(state.path(), &resource), 0);
    assert_eq!(added["gained"], serde_json::json!(["member-2"]));
    assert_eq!(added["written"], true);
    assert_eq!(policy_clusters(ns, "web"), ["member-1", "member-2"]);
    eventually("web on member-2", Duration::from_secs(60), || {
        member_image("member-2", ns, "web")
    });

    // Moving it off member-1 is a deletion there: a dry run shows it, no terminal refuses it.
    let dry = report_of(
        &editing(
            state.path(),
            &[
                "placement",
                "set",
                &resource,
                "--clusters",
                "member-2",
                "--dry-run",
                "-o",
                "json",
            ],
        ),
        1,
    );
    assert_eq!(dry["lost"], serde_json::json!(["member-1"]));
    assert_eq!(dry["written"], false);
    let refused = editing(
        state.path(),
        &["placement", "set", &resource, "--clusters", "member-2"],
    );
    assert_eq!(
        refused.status.code(),
        Some(2),
        "{}",
        harness::output_text(&refused)
    );
    assert!(String::from_utf8_lossy(&refused.stderr).contains("pass --yes"));
    assert_eq!(policy_clusters(ns, "web"), ["member-1", "member-2"]);

    // Undo puts the policy back as the hub held it; Karmada takes web off member-2 again.
    let undo_dry = report_of(
        &editing(state.path(), &["undo", "--dry-run", "-o", "json"]),
        1,
    );
    assert_eq!(undo_dry["lost"], serde_json::json!(["member-2"]));
    report_of(&editing(state.path(), &["undo", "--yes", "-o", "json"]), 0);
    assert_eq!(policy_clusters(ns, "web"), ["member-1"]);
    eventually("web gone from member-2", Duration::from_secs(60), || {
        member_image("member-2", ns, "web").is_none().then_some(())
    });

    // An edit someone else changed on the hub afterwards is not undone.
    report_of(&add_member_2(state.path(), &resource), 0);
    patch_policy(
        ns,
        "web",
        r#"{"spec":{"placement":{"clusterAffinity":{"clusterNames":["member-2"]}}}}"#,
    );
    let foreign = editing(state.path(), &["undo", "--yes"]);
    assert_eq!(
        foreign.status.code(),
        Some(2),
        "{}",
        harness::output_text(&foreign)
    );
    assert!(
        String::from_utf8_lossy(&foreign.stderr).contains("changed since flotilla's placement set")
    );
    assert_eq!(
        policy_clusters(ns, "web"),
        ["member-2"],
        "their change is kept"
    );

    // Reschedule sets rescheduleTriggeredAt on the binding, as `a` does in the console.
    let dry = report_of(
        &editing(
            state.path(),
            &["reschedule", &resource, "--dry-run", "-o", "json"],
        ),
        1,
    );
    assert_eq!(
        dry["binding"],
        format!("ResourceBinding/{ns}/web-deployment")
    );
    let refused = editing(state.path(), &["reschedule", &resource]);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "{}",
        harness::output_text(&refused)
    );
    let binding = json(
        "hub",
        &["get", "resourcebinding", "web-deployment", "-n", ns],
    );
    assert!(binding.pointer("/spec/rescheduleTriggeredAt").is_none());
    let asked = report_of(
        &editing(
            state.path(),
            &["reschedule", &resource, "--yes", "-o", "json"],
        ),
        0,
    );
    let binding = json(
        "hub",
        &["get", "resourcebinding", "web-deployment", "-n", ns],
    );
    assert_eq!(
        binding.pointer("/spec/rescheduleTriggeredAt"),
        Some(&asked["rescheduleTriggeredAt"])
    );
    rescheduled_since(
        ns,
        "web-deployment",
        asked["rescheduleTriggeredAt"].as_str().unwrap_or_default(),
    );
}

/// Waits until Karmada scheduled binding `ns/name` at or after `triggered`.
fn rescheduled_since(ns: &str, name: &str, triggered: &str) {
    eventually(
        "Karmada to reschedule after the trigger",
        Duration::from_secs(60),
        || {
            let binding = json("hub", &["get", "resourcebinding", name, "-n", ns]);
            let last = binding
                .pointer("/status/lastScheduledTime")
                .and_then(Value::as_str)?
                .to_string();
            (last.as_str() >= triggered).then_some(())
        },
    );
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_override_add_and_remove_write_flotillas_override_policy() {
    let test = karmada_test("karmada-override-cmd");
    let ns = test.ns();
    let state = tempfile::tempdir().expect("temp dir");
    deploy_web(ns, 1, &placed_on("member-1, member-2"));
    let resource = format!("Deployment/{ns}/web");
    for member in ["member-1", "member-2"] {
        eventually(&format!("web on {member}"), Duration::from_secs(60), || {
            member_image(member, ns, "web")
        });
    }
    let added = report_of(
        &editing(
            state.path(),
            &[
                "override",
                "add",
                &resource,
                "--cluster",
                "member-1",
                "--image-tag",
                "1.27",
                "-o",
                "json",
            ],
        ),
        0,
    );
    assert_eq!(added["changed"], serde_json::json!(["member-1"]));
    // flotilla's own OverridePolicy for the Deployment, created on the hub.
    let edited = added["edited"].as_str().unwrap_or_default().to_string();
    let name = edited
        .strip_prefix(&format!("OverridePolicy {ns}/"))
        .unwrap_or_else(|| panic!("an OverridePolicy in {ns}: {edited}"))
        .to_string();
    let policy = json("hub", &["get", "overridepolicy", &name, "-n", ns]);
    assert_eq!(
        policy.pointer("/spec/overrideRules/0/overriders/imageOverrider/0/value"),
        Some(&Value::from("1.27"))
    );
    eventually("member-1 on nginx:1.27", Duration::from_secs(60), || {
        (member_image("member-1", ns, "web").as_deref() == Some("nginx:1.27")).then_some(())
    });
    assert_eq!(
        member_image("member-2", ns, "web").as_deref(),
        Some("nginx:1.25")
    );
    // Listed by number, and removed by it: member-1 goes back to the template's image.
    let output = editing(state.path(), &["override", "list", &resource, "-o", "json"]);
    let listed = report_of(&output, 0);
    let items = listed["items"].as_array().expect("items");
    let rule = items
        .iter()
        .find(|item| item["policy"] == edited)
        .and_then(|item| item["rule"].as_u64())
        .expect("flotilla's rule listed")
        .to_string();
    report_of(
        &editing(
            state.path(),
            &[
                "override", "remove", &resource, "--rule", &rule, "-o", "json",
            ],
        ),
        0,
    );
    let policy = json("hub", &["get", "overridepolicy", &name, "-n", ns]);
    assert!(
        policy
            .pointer("/spec/overrideRules")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty),
        "the rule is gone from the hub: {policy}"
    );
    eventually(
        "member-1 back on nginx:1.25",
        Duration::from_secs(60),
        || (member_image("member-1", ns, "web").as_deref() == Some("nginx:1.25")).then_some(()),
    );
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_health_follows_aggregated_status_and_a_stuck_member_turns_degraded() {
    use flotilla::model::HealthKind;

    let test = karmada_test("karmada-health");
    let ns = test.ns();
    // The console is open before the deployment exists, so it sees the rollout from its start.
    let (mut session, mut events) = hub_console();
    // Each replica asks for one of the KWOK Node's four CPUs; `minReadySeconds` keeps a new
    // pod unavailable long enough for Progressing to be seen.
    apply(
        "hub",
        &format!(
            "{}---\n\
             apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: {ns}}}\n\
             spec:\n  replicas: 2\n  minReadySeconds: 15\n  progressDeadlineSeconds: 20\n  \
             selector: {{matchLabels: {{app: web}}}}\n  template:\n    \
             metadata: {{labels: {{app: web}}}}\n    spec:\n      containers:\n      \
             - name: web\n        image: nginx:1.27\n        \
             resources: {{requests: {{cpu: \"1\"}}}}\n",
            policy(
                "PropagationPolicy",
                ns,
                "web",
                WEB,
                &placed_on("member-1, member-2")
            ),
        ),
    );
    let key = format!("Deployment/{ns}/web");
    let limit = Duration::from_secs(240);
    assert!(
        harness::pump_until_healthy(&mut session, &mut events, &key, limit),
        "the rollout was seen in progress"
    );
    let healthy = harness::console_health(&session, &key);
    for member in &env().members {
        assert!(
            healthy[member]
                .1
                .starts_with("Karmada reports Healthy (2/2 available"),
            "Karmada's verdict with its counts: {healthy:?}"
        );
        assert_eq!(
            harness::available_replicas(member, ns),
            "2",
            "kubectl on {member}"
        );
    }
    let status = harness::hub_status_until_healthy(&key, limit);
    assert_eq!(status.len(), 2, "{status:?}");

    // A new rollout on member-2 alone that its Node cannot hold passes its deadline there.
    apply(
        "hub",
        &policy(
            "OverridePolicy",
            ns,
            "web",
            WEB,
            &format!(
                "{}      plaintext: [{{path: /spec/replicas, operator: replace, value: 6}}]\n",
                tag_on("member-2", "1.28")
            ),
        ),
    );
    let health = harness::pump_until_degraded(&mut session, &mut events, &key, "member-2", limit);
    let reason = &health["member-2"].1;
    assert!(
        reason.starts_with("Karmada reports Unhealthy")
            && reason.contains("on the member: ")
            && reason.contains("available, progress deadline exceeded")
            && reason.contains("ProgressDeadlineExceeded"),
        "Karmada's verdict and the member controller's reason: {reason}"
    );
    assert_eq!(health["member-1"].0, HealthKind::Healthy, "{health:?}");
    let progressing = json("member-2", &["get", "deploy", "web", "-n", ns]);
    let reason_on_member = progressing["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Progressing")
        .and_then(|c| c["reason"].as_str())
        .map(str::to_string);
    assert_eq!(
        reason_on_member.as_deref(),
        Some("ProgressDeadlineExceeded"),
        "kubectl on member-2"
    );
    let status = harness::hub_status_health(&key);
    assert_eq!(status["member-2"].0, "Degraded", "{status:?}");
    assert!(
        status["member-2"].1.contains("ProgressDeadlineExceeded"),
        "{status:?}"
    );
    assert_eq!(status["member-1"].0, "Healthy", "{status:?}");

    // The object view of the stuck cell: member-2's own object, read through its context or
    // Karmada's proxy, with its controller's Events; it holds what Karmada's Work says.
    let read = harness::live_view_of(&mut session, &mut events, &key, "member-2", &|read| {
        read.live
            .events
            .iter()
            .any(|e| e.reason == "ScalingReplicaSet")
    });
    assert!(read.live.error.is_none(), "{:?}", read.live.error);
    assert!(read.yaml.contains("replicas: 6"), "{}", read.yaml);
    assert!(read.yaml.contains("image: nginx:1.28"), "{}", read.yaml);
    assert!(
        read.yaml.contains("reason: ProgressDeadlineExceeded"),
        "{}",
        read.yaml
    );
    assert_eq!(read.live.diff, "", "member-2 holds what its Work renders");

    // The console's `:pods pending` reads each member's pods through its context or Karmada's
    // proxy: member-2's pods that its Node cannot hold wait, as kubectl says, and the matrix
    // keeps member-2 alone.
    press_in(&mut session, "<esc><esc>:pods pending<enter>");
    events.pump(&mut session, limit, &|s| {
        s.state.pods.asked > 0 && s.state.pods.answered() == s.state.pods.asked
    });
    let pending = json(
        "member-2",
        &[
            "get",
            "pods",
            "-n",
            ns,
            "-l",
            "app=web",
            "--field-selector",
            "status.phase=Pending",
        ],
    )["items"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(pending > 0, "kubectl on member-2 shows pods waiting");
    let cell = |member: &str| flotilla::messages::CellRef {
        resource: harness::row_of(&session, &key) as u32,
        cluster: column_of(&session, member) as u32,
    };
    let pods = session
        .state
        .pods
        .of(cell("member-2"))
        .expect("member-2 answered");
    assert!(
        pods.summary.contains(&format!(", {pending} Pending")),
        "{pending} Pending as kubectl counts them: {}",
        pods.line()
    );
    let visible: Vec<&str> = session
        .state
        .cluster_view
        .visible
        .iter()
        .map(|&c| session.state.clusters[c].spec.name.as_str())
        .collect();
    assert_eq!(visible, ["member-2"], "{}", session.state.pods.progress());
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_status_with_a_resource_carries_each_members_live_object_and_events() {
    let test = karmada_test("karmada-status-live");
    let ns = test.ns();
    apply(
        "hub",
        &format!(
            "{}---\n{}---\n\
             apiVersion: v1\nkind: Secret\nmetadata: {{name: creds, namespace: {ns}}}\n\
             stringData: {{password: not-a-real-password}}\n",
            policy(
                "PropagationPolicy",
                ns,
                "web",
                &format!("{WEB}, {{apiVersion: v1, kind: Secret, name: creds}}"),
                &placed_on("member-1, member-2"),
            ),
            deployment(ns, "web", 1),
        ),
    );
    let limit = Duration::from_secs(180);
    // Each member's deployment controller has scaled the ReplicaSet: an Event to find.
    for member in &env().members {
        eventually(&format!("web's Events on {member}"), limit, || {
            let events = json(
                member,
                &[
                    "get",
                    "events",
                    "-n",
                    ns,
                    "--field-selector",
                    "involvedObject.kind=Deployment,involvedObject.name=web",
                ],
            );
            (!events["items"].as_array()?.is_empty()).then_some(())
        });
    }
    let key = format!("Deployment/{ns}/web");
    let secret = format!("Secret/{ns}/creds");
    let items = eventually("status --hub to hold every member's cell", limit, || {
        let fleet = FleetDir::new();
        let out = harness::flotilla(
            fleet.path(),
            &[
                "--hub",
                "hub",
                "status",
                "--resource",
                &key,
                "--resource",
                &secret,
                "-o",
                "json",
            ],
        );
        let value: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("status -o json: {}", harness::output_text(&out)));
        let items: Vec<Value> = value["items"].as_array()?.clone();
        let held = |kind: &str, member: &str| {
            items.iter().any(|item| {
                item["resource"]["kind"] == kind
                    && item["cluster"] == member
                    && item["live"].is_object()
                    && (kind != "Deployment"
                        || item["events"].as_array().is_some_and(|e| !e.is_empty()))
            })
        };
        env()
            .members
            .iter()
            .all(|m| held("Deployment", m) && held("Secret", m))
            .then_some(items)
    });
    let cell = |kind: &str, member: &str| -> &Value {
        items
            .iter()
            .find(|item| item["resource"]["kind"] == kind && item["cluster"] == member)
            .unwrap_or_else(|| panic!("{kind} on {member}: {items:?}"))
    };
    for member in &env().members {
        let item = cell("Deployment", member);
        assert!(item["liveError"].is_null(), "{item}");
        // The member's own object, as kubectl reads it there.
        let on_member = json(member, &["get", "deployment", "web", "-n", ns]);
        let live = &item["live"];
        assert_eq!(
            live["metadata"]["uid"], on_member["metadata"]["uid"],
            "{member}: {live}"
        );
        assert_eq!(live["spec"], on_member["spec"], "{member}");
        // Its Events are the member's: each one the JSON names, kubectl lists there.
        let on_member = harness::deployment_events(member, ns);
        let of_deployment: Vec<&Value> = item["events"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["object"] == format!("Deployment {ns}/web"))
            .collect();
        assert!(!of_deployment.is_empty(), "{member}: {item}");
        for event in of_deployment {
            let pair = (
                event["reason"].as_str().unwrap_or_default().to_string(),
                event["message"].as_str().unwrap_or_default().to_string(),
            );
            assert!(
                on_member.contains(&pair),
                "{member}: {pair:?} among kubectl's {on_member:?}"
            );
        }
        assert!(
            on_member
                .iter()
                .any(|(reason, _)| reason == "ScalingReplicaSet"),
            "{on_member:?}"
        );

        // The Secret is the member's too, its value never printed.
        let item = cell("Secret", member);
        let uid = json(member, &["get", "secret", "creds", "-n", ns])["metadata"]["uid"].clone();
        assert_eq!(item["live"]["metadata"]["uid"], uid, "{item}");
        assert_eq!(item["live"]["data"]["password"], "***", "{item}");
        assert!(!item.to_string().contains("not-a-real-password"), "{item}");
        assert!(
            !item.to_string().contains("bm90LWEtcmVhbC1wYXNzd29yZA"),
            "{item}"
        );
    }
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_an_edit_of_a_policy_changed_with_kubectl_meanwhile_is_refused_and_kubectl_wins() {
    use flotilla::app::state::Mode;

    let test = karmada_test("karmada-cas");
    let ns = test.ns();
    apply(
        "hub",
        &policy(
            "PropagationPolicy",
            ns,
            "web",
            "{apiVersion: v1, kind: ConfigMap, name: web}",
            &format!("  conflictResolution: Overwrite\n{}", placed_on("member-1")),
        ),
    );
    // A ConfigMap: the members' fake Nodes keep their capacity for the tests after this one.
    apply("hub", &config_map(ns, "web"));
    eventually("web on member-1", Duration::from_secs(60), || {
        kubectl("member-1", &["get", "configmap", "web", "-n", ns])
            .status
            .success()
            .then_some(())
    });

    // The console's session on the hub: e on web, member-2 named too, reviewed, confirmation open.
    let (mut session, mut hub_events) = hub_console();
    let key = format!("ConfigMap/{ns}/web");
    select_row(&mut session, &key);
    press_in(&mut session, "e");
    let Mode::Placement(editor) = &session.state.mode else {
        panic!("the placement editor opens: {:?}", session.state.notice);
    };
    assert!(
        editor.source.is_some(),
        "it edits PropagationPolicy {ns}/web"
    );
    let member_2 = column_of(&session, "member-2");
    for _ in 0..member_2 {
        press_in(&mut session, "<down>");
    }
    press_in(&mut session, " <enter><enter>");
    let Mode::Confirm(pending) = &session.state.mode else {
        panic!(
            "the confirmation: {:?} {:?}",
            session.state.mode, session.state.notice
        );
    };
    assert!(
        pending.summary.iter().any(|l| l.contains("member-2")),
        "member-2 enters: {:?}",
        pending.summary
    );

    // Meanwhile someone changes the same policy with kubectl.
    patch_policy(
        ns,
        "web",
        r#"{"spec":{"conflictResolution":"Abort","priority":5}}"#,
    );

    // Confirming writes nothing: the hub no longer holds what the edit was made from.
    press_in(&mut session, "y");
    hub_events.pump(&mut session, Duration::from_secs(60), &|s| {
        s.state
            .notice
            .as_deref()
            .is_some_and(|n| n.starts_with("not written"))
    });
    let notice = session.state.notice.clone().unwrap_or_default();
    assert!(
        notice.contains(&format!("PropagationPolicy {ns}/web changed on the hub")),
        "{notice}"
    );
    let stored = json("hub", &["get", "propagationpolicy", "web", "-n", ns]);
    assert_eq!(
        stored["spec"]["conflictResolution"], "Abort",
        "kubectl's change stays"
    );
    assert_eq!(stored["spec"]["priority"], 5, "kubectl's change stays");
    assert_eq!(
        policy_clusters(ns, "web"),
        ["member-1"],
        "the refused edit wrote nothing"
    );

    // The same through the CLI, racing nothing: it edits what the hub holds now and keeps both.
    let state = tempfile::tempdir().expect("temp dir");
    report_of(&add_member_2(state.path(), &key), 0);
    let stored = json("hub", &["get", "propagationpolicy", "web", "-n", ns]);
    assert_eq!(stored["spec"]["conflictResolution"], "Abort");
    assert_eq!(stored["spec"]["priority"], 5);
    assert_eq!(policy_clusters(ns, "web"), ["member-1", "member-2"]);
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_flotillas_aggregation_of_the_members_equals_the_hubs_template_status() {
    let test = karmada_test("karmada-aggregate");
    let ns = test.ns();
    let (mut session, mut events) = hub_console();
    apply(
        "hub",
        &format!(
            "{}---\n{}",
            policy(
                "PropagationPolicy",
                ns,
                "web",
                WEB,
                &placed_on("member-1, member-2")
            ),
            deployment(ns, "web", 2),
        ),
    );
    let key = format!("Deployment/{ns}/web");
    let limit = Duration::from_secs(240);
    harness::pump_until_healthy(&mut session, &mut events, &key, limit);
    // The clusters tab follows every placed member: each read brings the member's object and
    // what the hub aggregated.
    harness::live_view_of(&mut session, &mut events, &key, "member-1", &|read| {
        read.live.hub.is_some()
    });
    press_in(&mut session, "<tab><tab><tab><tab>");
    let row = harness::row_of(&session, &key);
    events.pump_explained(
        &mut session,
        limit,
        &|s| {
            s.state
                .live
                .aggregated
                .get(&row)
                .is_some_and(|a| a.members == 2 && a.agrees() == Some(true))
        },
        &|s| format!("{:?}", s.state.live.aggregated.get(&row)),
    );
    let aggregated = &session.state.live.aggregated[&row];
    let ours = aggregated.flotilla.as_ref().expect("flotilla aggregated");
    assert_eq!(ours.rule, "apps/Deployment (built-in)");
    // The hub's template as kubectl reads it there: the status Karmada aggregated.
    let on_hub = json("hub", &["get", "deployment", "web", "-n", ns]);
    assert!(
        flotilla::engine::interpreter::status::same_status(&ours.status, &on_hub["status"]),
        "flotilla {} vs the hub {}",
        ours.status,
        on_hub["status"]
    );
    assert_eq!(
        ours.status["readyReplicas"], 4,
        "two replicas on each member"
    );
    assert_eq!(
        ours.status["observedGeneration"], on_hub["metadata"]["generation"],
        "every member caught up with the template"
    );

    // Beside it, the binding's record of each member (as kubectl reads it on the hub) held
    // against what flotilla read there: both members applied and Healthy, as read.
    let binding = json(
        "hub",
        &["get", "resourcebinding", "web-deployment", "-n", ns],
    );
    let mut recorded: Vec<String> = binding["status"]["aggregatedStatus"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item["clusterName"].as_str().map(str::to_string))
        .collect();
    recorded.sort();
    assert_eq!(recorded, ["member-1", "member-2"], "{binding}");
    events.pump_explained(
        &mut session,
        limit,
        &|s| {
            s.state.live.hub_members.get(&row).is_some_and(|m| {
                m.checks.len() == 2
                    && m.checks
                        .iter()
                        .all(|c| c.read.is_some() && c.differs.is_empty())
            })
        },
        &|s| format!("{:?}", s.state.live.hub_members.get(&row)),
    );
    for check in &session.state.live.hub_members[&row].checks {
        assert!(check.applied, "{check:?}");
        assert_eq!(check.health, "Healthy", "{check:?}");
        let read = check.read.as_ref().expect("read");
        assert!(read.applied && read.health == Some("Healthy"), "{check:?}");
    }

    // `status --hub --resource -o json` gives the same, beside the hub's own.
    let fleet = FleetDir::new();
    let out = harness::flotilla(
        fleet.path(),
        &["--hub", "hub", "status", "--resource", &key, "-o", "json"],
    );
    let value: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("status -o json: {}", harness::output_text(&out)));
    // Each member's chain runs from the hub's template through the binding and the Work
    // Karmada marked the member's object with, to the object and its Events.
    for cell in value["items"].as_array().expect("items") {
        let steps: Vec<&str> = cell["chain"]
            .as_array()
            .unwrap_or_else(|| panic!("a read cell has its chain: {cell}"))
            .iter()
            .filter_map(|link| link["step"].as_str())
            .collect();
        for step in ["template", "binding", "work", "object", "events"] {
            assert!(steps.contains(&step), "{step} in {steps:?}: {cell}");
        }
    }
    let item = &value["aggregated"][0];
    assert_eq!(item["rule"], "apps/Deployment (built-in)", "{value}");
    assert_eq!(item["agrees"], true, "{item}");
    assert!(
        flotilla::engine::interpreter::status::same_status(&item["status"], &on_hub["status"]),
        "{item} vs the hub {}",
        on_hub["status"]
    );
    let members = item["hubMembers"]
        .as_array()
        .expect("the hub's record per member");
    assert_eq!(members.len(), 2, "{item}");
    for member in members {
        assert_eq!(member["applied"], true, "{member}");
        assert_eq!(member["flotilla"]["applied"], true, "{member}");
        assert!(
            member.get("differs").is_none(),
            "as flotilla read it: {member}"
        );
    }
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_pods_logs_and_exec_reach_members_through_the_cluster_proxy() {
    let test = karmada_test("karmada-proxy-pods");
    let ns = test.ns();
    deploy_web(ns, 1, &placed_on("member-1, member-2"));
    let limit = Duration::from_secs(180);
    for member in &env().members {
        eventually(&format!("web's pod running on {member}"), limit, || {
            (running_web_pods(member, ns).len() == 1).then_some(())
        });
    }
    // A kubeconfig of the hub alone: its members are reached only through Karmada's proxy.
    let only_hub = tempfile::tempdir().expect("a dir");
    let kubeconfig = only_hub.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        kubectl_ok("hub", &["config", "view", "--minify", "--flatten"]),
    )
    .expect("write the hub's kubeconfig");
    let key = format!("Deployment/{ns}/web");

    // `pods`: each member's pods, as kubectl lists them there.
    let out = flotilla_hub(&kubeconfig, None, &["pods", &key, "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", harness::output_text(&out));
    let listed: Value = serde_json::from_slice(&out.stdout).expect("pods -o json");
    for member in &env().members {
        let item = listed["items"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|item| item["cluster"] == member.as_str())
            .unwrap_or_else(|| panic!("{member} in {listed}"));
        let names: Vec<&str> = item["pods"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|pod| pod["name"].as_str())
            .collect();
        assert_eq!(
            names,
            running_web_pods(member, ns),
            "{member}: flotilla against kubectl"
        );
    }

    // `logs`: each member's pod's lines, as kubectl logs prints them there.
    let out = flotilla_hub(&kubeconfig, None, &["logs", &key, "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", harness::output_text(&out));
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    for member in &env().members {
        let pod = &running_web_pods(member, ns)[0];
        let ours: Vec<&str> = lines
            .iter()
            .filter(|line| line["cluster"] == member.as_str() && line["pod"] == pod.as_str())
            .filter_map(|line| line["text"].as_str())
            .collect();
        let theirs = kubectl_ok(member, &["logs", pod, "-n", ns]);
        let theirs: Vec<&str> = theirs.lines().collect();
        assert!(
            !ours.is_empty(),
            "{member}: no lines read through the proxy"
        );
        assert_eq!(ours, theirs, "{member}: flotilla logs against kubectl logs");
    }

    // `exec`: a command in member-2's pod through the proxy answers as kubectl exec there.
    let script = "echo $FLOTILLA_MEMBER; pwd";
    let ours = flotilla_hub(
        &kubeconfig,
        None,
        &[
            "exec",
            &key,
            "--cluster",
            "member-2",
            "--",
            "/bin/sh",
            "-c",
            script,
        ],
    );
    assert_eq!(
        ours.status.code(),
        Some(0),
        "{}",
        harness::output_text(&ours)
    );
    let pod = &running_web_pods("member-2", ns)[0];
    let theirs = kubectl_ok(
        "member-2",
        &["exec", pod, "-n", ns, "--", "/bin/sh", "-c", script],
    );
    assert_eq!(String::from_utf8_lossy(&ours.stdout), theirs, "member-2");
    assert!(theirs.starts_with("member-2"), "{theirs}");
}

/// The custom kind Widget of `group` (namespaced, with a status subresource), as a CRD.
fn widget_crd(group: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
         metadata: {{name: widgets.{group}}}\n\
         spec:\n  group: {group}\n  scope: Namespaced\n  \
         names: {{plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}}\n  \
         versions:\n  - name: v1\n    served: true\n    storage: true\n    \
         subresources: {{status: {{}}}}\n    \
         schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}\n"
    )
}

/// A `ResourceInterpreterCustomization` `name` of Widget of `group`: its replicas are
/// `spec.size`, a cluster's share is written there, and it is healthy when `health` (a Lua
/// expression over `observedObj`) holds.
fn widget_interpreter(name: &str, group: &str, health: &str) -> String {
    format!(
        "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\n\
         metadata: {{name: {name}}}\n\
         spec:\n  target: {{apiVersion: {group}/v1, kind: Widget}}\n  customizations:\n    \
         replicaResource:\n      luaScript: |\n        function GetReplicas(obj)\n          \
         return obj.spec.size, nil\n        end\n    \
         replicaRevision:\n      luaScript: |\n        function ReviseReplica(obj, desired)\n          \
         obj.spec.size = desired\n          return obj\n        end\n    \
         healthInterpretation:\n      luaScript: |\n        function InterpretHealth(observedObj)\n          \
         return {health}\n        end\n"
    )
}

/// Cluster-wide objects a test made (`kind/name` on each context), deleted when it ends.
struct ClusterWide(Vec<(String, String)>);

impl Drop for ClusterWide {
    fn drop(&mut self) {
        for (context, object) in &self.0 {
            let _ = kubectl(
                context,
                &["delete", object, "--ignore-not-found", "--wait=false"],
            );
        }
    }
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_oracle_the_hubs_interpreter_divides_a_custom_kind_and_judges_its_health() {
    use flotilla::model::HealthKind;

    let test = karmada_test("karmada-interpreter");
    let ns = test.ns();
    let group = "interp.karmada.flotilla.test";
    let customization = format!("widget-{ns}");
    let contexts = ["hub", "member-1", "member-2"];
    let _cleanup = ClusterWide(
        contexts
            .iter()
            .map(|c| (c.to_string(), format!("crd/widgets.{group}")))
            .chain([(
                "hub".to_string(),
                format!("resourceinterpretercustomization/{customization}"),
            )])
            .collect(),
    );
    for context in contexts {
        apply(context, &widget_crd(group));
        kubectl_ok(
            context,
            &[
                "wait",
                "--for=condition=Established",
                "--timeout=60s",
                &format!("crd/widgets.{group}"),
            ],
        );
    }
    let ready = "observedObj.status ~= nil and observedObj.status.ready == true";
    let interpreter = widget_interpreter(&customization, group, ready);
    // The hub's interpreter is in place before the template, so its binding has replicas.
    apply("hub", &interpreter);
    std::thread::sleep(Duration::from_secs(3));
    let policies = format!(
        "{interpreter}---\n{}",
        policy(
            "PropagationPolicy",
            ns,
            "dial",
            &format!("{{apiVersion: {group}/v1, kind: Widget, name: dial}}"),
            &format!(
                "{}    replicaScheduling:\n      replicaSchedulingType: Divided\n      \
                 replicaDivisionPreference: Weighted\n      weightPreference:\n        \
                 staticWeightList:\n        - targetCluster: {{clusterNames: [member-1]}}\n          \
                 weight: 1\n        - targetCluster: {{clusterNames: [member-2]}}\n          \
                 weight: 2\n",
                placed_on("member-1, member-2")
            ),
        )
    );
    let template = format!(
        "apiVersion: {group}/v1\nkind: Widget\nmetadata: {{name: dial, namespace: {ns}}}\n\
         spec: {{size: 6, color: blue}}"
    );
    // flotilla's offline render of the same files (the customization, the policy, the
    // template) equals the Works Karmada writes, field for field.
    assert_agree(oracle_case(ns, &policies, &template), "Works");
    let sizes: Vec<(String, Value)> = work_manifests(ns)
        .into_iter()
        .map(|((cluster, _), manifest)| (cluster, manifest["spec"]["size"].clone()))
        .collect();
    assert_eq!(
        sizes,
        [
            ("member-1".to_string(), serde_json::json!(2)),
            ("member-2".to_string(), serde_json::json!(4))
        ],
        "Karmada divides the 6 by the hub's GetReplicas, 1:2, through its ReviseReplica"
    );

    // kubectl writes each member's status: ready on member-1, not on member-2.
    let widget = format!("widget.{group}/dial");
    for (member, ready) in [("member-1", true), ("member-2", false)] {
        eventually(
            &format!("the Widget on {member}"),
            Duration::from_secs(60),
            || {
                kubectl(member, &["get", &widget, "-n", ns])
                    .status
                    .success()
                    .then_some(())
            },
        );
        kubectl_ok(
            member,
            &[
                "patch",
                &widget,
                "-n",
                ns,
                "--subresource=status",
                "--type=merge",
                "-p",
                &format!("{{\"status\":{{\"ready\":{ready}}}}}"),
            ],
        );
    }
    let key = format!("Widget/{ns}/dial");
    let status = eventually(
        "status --hub to judge the Widgets by the hub's interpreter",
        Duration::from_secs(120),
        || {
            let fleet = tempfile::tempdir().expect("a fleet dir");
            let out = harness::flotilla(
                fleet.path(),
                &["--hub", "hub", "status", "--resource", &key, "-o", "json"],
            );
            let value: Value = serde_json::from_slice(&out.stdout).ok()?;
            let items: std::collections::BTreeMap<String, Value> = value["items"]
                .as_array()?
                .iter()
                .map(|item| {
                    (
                        item["cluster"].as_str().unwrap_or("").to_string(),
                        item.clone(),
                    )
                })
                .collect();
            (items.get("member-1")?["health"] == "Healthy"
                && items.get("member-2")?["health"] == "Degraded")
                .then_some(items)
        },
    );
    let judged = &status["member-2"];
    assert!(
        judged["reason"]
            .as_str()
            .is_some_and(|r| r.contains("InterpretHealth")),
        "{judged}"
    );
    assert!(
        judged["healthRule"].as_str().is_some_and(
            |rule| rule.contains(&format!("ResourceInterpreterCustomization/{customization}"))
        ),
        "the hub's customization decided: {judged}"
    );

    // The console on the hub judges member-2 by the hub's interpreter, and takes an edited
    // interpreter as the hub holds it, without a restart.
    let (mut session, mut events) = hub_console();
    let limit = Duration::from_secs(120);
    let health = harness::pump_until_degraded(&mut session, &mut events, &key, "member-2", limit);
    assert!(
        health["member-2"].1.contains("InterpretHealth"),
        "{health:?}"
    );
    let answered = "observedObj.status ~= nil and observedObj.status.ready ~= nil";
    apply("hub", &widget_interpreter(&customization, group, answered));
    let seen = events.pump_seeing(&mut session, limit, &|s| {
        harness::console_health(s, &key)
            .get("member-2")
            .is_some_and(|(kind, _)| *kind != HealthKind::Degraded)
    });
    assert!(
        seen.iter().any(|event| matches!(event,
            flotilla::messages::BackendEvent::Notice(n)
                if n.contains("resource interpreter customizations changed"))),
        "the console took the edited customization from the hub's watch"
    );
}
