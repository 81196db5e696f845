//! Smoke tests of the real test environment (`cargo xtask testenv`): server-side apply round
//! trips through kube-rs, clusters are independent, the read-only contexts are refused writes,
//! and the servers are the stamped upstream release. They only touch their own namespaces and
//! must never stop or start a cluster (that lives in its own test binary).

mod harness;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use harness::{TestNamespace, env};

fn config_map(name: &str, color: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "labels": {"app.kubernetes.io/managed-by": "flotilla"},
        },
        "data": {"color": color},
    })
}

fn color(cm: &ConfigMap) -> Option<&str> {
    cm.data.as_ref()?.get("color").map(String::as_str)
}

/// The version the wrapper module pins (`k8s.io/kubernetes vX.Y.Z`), e.g. `v1.36.3`.
fn pinned_kubernetes_version() -> String {
    let go_mod = harness::repo_root().join("xtask/go/kube-apiserver/go.mod");
    let text = std::fs::read_to_string(&go_mod).expect("read the kube-apiserver wrapper go.mod");
    text.lines()
        .map(|l| l.trim().trim_start_matches("require ").trim())
        .find_map(|l| l.strip_prefix("k8s.io/kubernetes "))
        .map(|v| v.split_whitespace().next().unwrap_or_default().to_string())
        .expect("go.mod requires k8s.io/kubernetes")
}

#[tokio::test]
#[ignore = "needs testenv: run through cargo xtask test"]
async fn server_side_apply_round_trip_on_a_member() {
    let ns = TestNamespace::new("ssa-round-trip");
    let api: Api<ConfigMap> = Api::namespaced(env().client("member-1").await, &ns.name);
    let flotilla = PatchParams::apply("flotilla");

    let created = api
        .patch("ssa", &flotilla, &Patch::Apply(config_map("ssa", "blue")))
        .await
        .expect("first apply");
    assert_eq!(color(&created), Some("blue"));

    let got = api.get("ssa").await.expect("read back");
    let managers: Vec<(String, String)> = got
        .metadata
        .managed_fields
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|m| {
            (
                m.manager.unwrap_or_default(),
                m.operation.unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(managers, [("flotilla".to_string(), "Apply".to_string())]);

    // Re-applying the same intent is a no-op; a changed intent updates.
    let same = api
        .patch("ssa", &flotilla, &Patch::Apply(config_map("ssa", "blue")))
        .await
        .expect("idempotent apply");
    assert_eq!(
        same.metadata.resource_version,
        got.metadata.resource_version
    );
    let updated = api
        .patch("ssa", &flotilla, &Patch::Apply(config_map("ssa", "green")))
        .await
        .expect("second apply");
    assert_eq!(color(&updated), Some("green"));

    // Another writer takes the field: a plain apply now conflicts, a forced one wins.
    harness::kubectl_ok(
        "member-1",
        &[
            "patch",
            "configmap",
            "ssa",
            "-n",
            &ns.name,
            "--type=merge",
            "--field-manager=someone-else",
            "-p",
            r#"{"data":{"color":"red"}}"#,
        ],
    );
    let conflict = api
        .patch("ssa", &flotilla, &Patch::Apply(config_map("ssa", "green")))
        .await
        .expect_err("apply over another manager's field must conflict");
    match conflict {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 409, "{status:?}");
            assert!(status.message.contains("someone-else"), "{status:?}");
        }
        other => panic!("expected a 409 conflict, got {other:?}"),
    }
    let forced = api
        .patch(
            "ssa",
            &flotilla.clone().force(),
            &Patch::Apply(config_map("ssa", "green")),
        )
        .await
        .expect("forced apply");
    assert_eq!(color(&forced), Some("green"));

    // An independent client sees the same object and manager.
    let seen = harness::kubectl_ok(
        "member-1",
        &[
            "get",
            "configmap",
            "ssa",
            "-n",
            &ns.name,
            "--show-managed-fields",
            "-o",
            "jsonpath={.data.color} {.metadata.managedFields[?(@.operation==\"Apply\")].manager}",
        ],
    );
    assert_eq!(seen.trim(), "green flotilla");
}

#[tokio::test]
#[ignore = "needs testenv: run through cargo xtask test"]
async fn clusters_are_independent() {
    let ns = TestNamespace::new("independent");
    let m1: Api<ConfigMap> = Api::namespaced(env().client("member-1").await, &ns.name);
    let m2: Api<ConfigMap> = Api::namespaced(env().client("member-2").await, &ns.name);

    m1.create(
        &PostParams::default(),
        &serde_json::from_value(config_map("only-on-member-1", "blue")).expect("configmap"),
    )
    .await
    .expect("create on member-1");

    assert!(m1.get_opt("only-on-member-1").await.expect("get").is_some());
    assert!(
        m2.get_opt("only-on-member-1")
            .await
            .expect("get on member-2")
            .is_none(),
        "an object created on member-1 is visible on member-2"
    );
    let on_m2 = m2.list(&ListParams::default()).await.expect("list");
    assert!(
        on_m2
            .items
            .iter()
            .all(|cm| cm.metadata.name.as_deref() != Some("only-on-member-1"))
    );
    let out = harness::kubectl(
        "member-2",
        &["get", "configmap", "only-on-member-1", "-n", &ns.name],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("NotFound"));

    // Each cluster is its own API server, not one server behind several names.
    let servers: std::collections::BTreeSet<String> = env()
        .clusters
        .iter()
        .map(|c| {
            harness::kubectl_ok(
                c,
                &[
                    "config",
                    "view",
                    "--minify",
                    "-o",
                    "jsonpath={.clusters[0].cluster.server}",
                ],
            )
        })
        .collect();
    assert_eq!(servers.len(), env().clusters.len(), "{servers:?}");
}

#[tokio::test]
#[ignore = "needs testenv: run through cargo xtask test"]
async fn readonly_context_is_refused_writes() {
    let ns = TestNamespace::new("readonly");
    let admin: Api<ConfigMap> = Api::namespaced(env().client("member-1").await, &ns.name);
    admin
        .create(
            &PostParams::default(),
            &serde_json::from_value(config_map("existing", "blue")).expect("configmap"),
        )
        .await
        .expect("admin create");

    let ro: Api<ConfigMap> = Api::namespaced(env().client("member-1-readonly").await, &ns.name);
    let listed = ro
        .list(&ListParams::default())
        .await
        .expect("readonly list");
    assert!(
        listed
            .items
            .iter()
            .any(|cm| cm.metadata.name.as_deref() == Some("existing"))
    );
    assert_eq!(
        color(&ro.get("existing").await.expect("readonly get")),
        Some("blue")
    );

    let refused = ro
        .create(
            &PostParams::default(),
            &serde_json::from_value(config_map("not-allowed", "red")).expect("configmap"),
        )
        .await
        .expect_err("readonly create must be refused");
    match refused {
        kube::Error::Api(status) => assert_eq!(status.code, 403, "{status:?}"),
        other => panic!("expected 403, got {other:?}"),
    }
    let refused_apply = ro
        .patch(
            "existing",
            &PatchParams::apply("flotilla"),
            &Patch::Apply(config_map("existing", "red")),
        )
        .await
        .expect_err("readonly apply must be refused");
    assert!(
        matches!(&refused_apply, kube::Error::Api(s) if s.code == 403),
        "{refused_apply:?}"
    );

    let can_i = harness::kubectl(
        "member-1-readonly",
        &["auth", "can-i", "create", "configmaps", "-n", &ns.name],
    );
    assert_eq!(String::from_utf8_lossy(&can_i.stdout).trim(), "no");
}

#[tokio::test]
#[ignore = "needs testenv: run through cargo xtask test"]
async fn servers_report_the_stamped_upstream_version() {
    let expected = pinned_kubernetes_version();
    let minor = expected.split('.').nth(1).expect("minor").to_string();
    for cluster in &env().clusters {
        let info = env()
            .client(cluster)
            .await
            .apiserver_version()
            .await
            .expect("GET /version");
        assert_eq!(info.git_version, expected, "{cluster}: {info:?}");
        assert_eq!(info.major, "1", "{cluster}");
        assert_eq!(info.minor, minor, "{cluster}");
        assert_eq!(info.git_tree_state, "clean", "{cluster}");
    }
    // The real kubectl agrees.
    let version: serde_json::Value =
        serde_json::from_str(&harness::kubectl_ok("member-2", &["version", "-o", "json"]))
            .expect("kubectl version -o json");
    assert_eq!(
        version.pointer("/serverVersion/gitVersion"),
        Some(&json!(expected))
    );
}
