//! Outage simulation against the real test environment: `cargo xtask testenv stop/start`
//! takes one member down and brings it back with its data. It lives in its own test binary
//! because it stops a cluster other tests would otherwise be using, and it must always
//! restart what it stopped.

mod harness;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;

use harness::{Restart, TestNamespace, env, testenv_cmd, testenv_cmd_ok};

#[tokio::test]
#[ignore = "needs testenv: run through cargo xtask test"]
async fn a_stopped_member_is_unreachable_and_returns_with_its_data() {
    let member = env().members.last().expect("a member").clone();
    let ns = TestNamespace::on("outage", std::slice::from_ref(&member));
    harness::kubectl_ok(
        &member,
        &[
            "create",
            "configmap",
            "survivor",
            "-n",
            &ns.name,
            "--from-literal=color=blue",
        ],
    );

    let restart = Restart(&member);
    testenv_cmd_ok(&["stop", &member]);
    let down: Api<ConfigMap> = Api::namespaced(env().client(&member).await, &ns.name);
    let err = down
        .get("survivor")
        .await
        .expect_err("a stopped member must not answer");
    assert!(
        !matches!(err, kube::Error::Api(_)),
        "expected a connection error, got an API answer: {err:?}"
    );
    let status = testenv_cmd(&["status"]);
    assert!(!status.status.success(), "status must report the outage");
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("stopped"),
        "{}",
        String::from_utf8_lossy(&status.stdout)
    );

    testenv_cmd_ok(&["start", &member]);
    drop(restart);
    let up: Api<ConfigMap> = Api::namespaced(env().client(&member).await, &ns.name);
    let cm = up
        .get("survivor")
        .await
        .expect("the object survived the outage");
    assert_eq!(
        cm.data.and_then(|d| d.get("color").cloned()).as_deref(),
        Some("blue")
    );
    assert!(testenv_cmd(&["status"]).status.success());
}
