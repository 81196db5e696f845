//! Checks of the Karmada test environment (`cargo xtask testenv up --hub karmada`), driven
//! only through kubectl: a Deployment template with a PropagationPolicy and an
//! OverridePolicy reaches exactly the placed member with the overridden image, the hub shows
//! the ResourceBinding and Works with Karmada's conditions, Divided scheduling spreads
//! replicas over the fake Nodes' capacity, and a member stopped with `testenv stop` turns
//! not Ready. `cargo xtask test` runs them in their own step against `testenv up --hub
//! karmada` (their names start with `hub_karmada_`, which the plain-hub step skips); they
//! only touch their own namespaces, and the outage test restarts the member it stops.

mod support;

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use support::{TestNamespace, env, kubectl, kubectl_ok, testenv_cmd_ok};

/// The tests share the members, and one of them stops member-2: run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

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

fn json(context: &str, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    let text = kubectl_ok(context, &all);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("kubectl printed no JSON ({e}): {text}"))
}

/// The status of condition `kind` in `obj.status.conditions`.
fn condition<'a>(obj: &'a Value, kind: &str) -> Option<&'a str> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(kind))?
        .get("status")?
        .as_str()
}

/// Polls `check` every 500 ms until it returns `Some`, or panics after `limit`.
fn eventually<T>(what: &str, limit: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let t = Instant::now();
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(
            t.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn apply(context: &str, yaml: &str) {
    let mut child = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&env().kubeconfig_path)
        .args(["--context", context, "apply", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("running kubectl");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().expect("kubectl stdin");
        stdin
            .write_all(yaml.as_bytes())
            .expect("writing to kubectl");
    }
    let out = child.wait_with_output().expect("waiting for kubectl");
    assert!(
        out.status.success(),
        "kubectl apply on {context} failed: {}\n{yaml}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
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
    let _serial = serial();
    karmada_hub();
    // Created on the hub only: Karmada propagates the namespace to the members itself.
    let ns = TestNamespace::on("karmada-placement", &["hub".to_string()]);
    let ns = ns.name.as_str();
    apply(
        "hub",
        &format!(
            "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\n\
             metadata: {{name: web, namespace: {ns}}}\nspec:\n  resourceSelectors:\n  \
             - {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  placement:\n    \
             clusterAffinity: {{clusterNames: [member-1]}}\n---\n\
             apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\n\
             metadata: {{name: web, namespace: {ns}}}\nspec:\n  resourceSelectors:\n  \
             - {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  overrideRules:\n  \
             - targetCluster: {{clusterNames: [member-1]}}\n    overriders:\n      \
             imageOverrider: [{{component: Tag, operator: replace, value: \"1.27\"}}]\n"
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
    let _serial = serial();
    karmada_hub();
    let ns = TestNamespace::on("karmada-divided", &["hub".to_string()]);
    let ns = ns.name.as_str();
    apply(
        "hub",
        &format!(
            "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\n\
             metadata: {{name: web, namespace: {ns}}}\nspec:\n  resourceSelectors:\n  \
             - {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  placement:\n    \
             clusterAffinity: {{clusterNames: [member-1, member-2]}}\n    replicaScheduling:\n      \
             replicaSchedulingType: Divided\n      replicaDivisionPreference: Weighted\n      \
             weightPreference: {{dynamicWeight: AvailableReplicas}}\n"
        ),
    );
    apply("hub", &deployment(ns, "web", 4));
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
    let listed = flotilla_clusters();
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
    testenv_cmd_ok(&["start", "member-2"]);
    eventually(
        "member-2 to be Ready again",
        Duration::from_secs(120),
        || (ready("member-2").as_deref() == Some("True")).then_some(()),
    );
}

/// `flotilla --hub hub clusters -o json`, as items.
fn flotilla_clusters() -> Vec<Value> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--kubeconfig")
        .arg(&env().kubeconfig_path)
        .args(["--hub", "hub", "clusters", "-o", "json"])
        .env_remove("KUBECONFIG")
        .output()
        .expect("run flotilla");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let value: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    value["items"].as_array().cloned().unwrap_or_default()
}

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_clusters_lists_the_members_as_the_hub_reports_them() {
    let _serial = serial();
    karmada_hub();
    let listed = flotilla_clusters();
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

#[test]
#[ignore = "needs the karmada testenv: run through cargo xtask test"]
fn hub_karmada_the_console_model_shows_the_bindings_clusters_and_each_works_state() {
    use flotilla::backend::hub;
    use flotilla::model::CellStatus;

    let _serial = serial();
    karmada_hub();
    let ns = TestNamespace::on("hub-model", &["hub".to_string()]);
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
    clusterAffinity: {{clusterNames: [member-1]}}
"#,
            ns = ns.name
        ),
    );
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
    assert_eq!(message.as_deref(), Some("Work Applied"));
    let CellStatus::NotPlaced(reason) = view.cell(row, 1).0 else {
        panic!("member-2 is not scheduled");
    };
    assert!(reason.contains("did not schedule"), "{reason}");
}
