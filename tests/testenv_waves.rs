//! Propagation in waves against real members whose controllers and KWOK roll Deployments out,
//! driven as an operator drives it: the real binary in a pseudo-terminal, `a`, `tab` for a
//! canary wave, `y`. A Deployment the canary's Node cannot hold passes its progress deadline
//! there: the rollout stops naming the Degraded cell, and kubectl finds nothing on the other
//! members, then or later. A healthy one paused with `p` right after the canary wave stays on
//! the canary alone while it turns Healthy (kubectl confirms the others have nothing); `p`
//! again sends the next wave, and kubectl sees it arrive.

mod harness;

use std::time::Duration;

use harness::PtyApp;
use harness::{FleetDir, TestNamespace, env, eventually, kubectl, kubectl_ok, prod_inventory};

/// The two tests share the members' Nodes: one at a time, so one's replicas never starve the
/// other's.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A fleet placing Deployment `web` (`replicas` of one CPU each; a member's KWOK Node holds
/// four, with `deadline` seconds to progress) on every member.
fn fleet(ns: &str, replicas: u32, deadline: u32) -> FleetDir {
    let mut text = prod_inventory(&env().members);
    text.push_str(&format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {ns}}}
spec:
  replicas: {replicas}
  progressDeadlineSeconds: {deadline}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources: {{requests: {{cpu: "1"}}}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: web, namespace: {ns}}}
spec:
  resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: web}}]
  placement:
    clusterAffinity: {{labelSelector: {{matchLabels: {{env: prod}}}}}}
"#
    ));
    FleetDir::new().fleet(text)
}

fn has_web(member: &str, ns: &str) -> bool {
    kubectl(member, &["get", "deployment", "web", "-n", ns])
        .status
        .success()
}

/// The console on `fleet`, with its own (empty) config and state: the default wave gate, in
/// sync and Healthy.
fn console(fleet: &FleetDir) -> PtyApp {
    let kubeconfig = env().kubeconfig_path.to_string_lossy().to_string();
    let state = fleet.state().to_string_lossy().to_string();
    let fleet = fleet.path().to_string_lossy().to_string();
    PtyApp::spawn(
        &["--kubeconfig", &kubeconfig, "--fleet", &fleet, "console"],
        200,
        50,
        &[("XDG_STATE_HOME", &state), ("XDG_CONFIG_HOME", &state)],
    )
}

/// `a`, `tab` for a canary wave, `y`, once the members are probed.
fn propagate_with_a_canary(app: &mut PtyApp) {
    app.wait_for("every member probed", |s| {
        s.contains(&format!("clusters {0}/{0} Ready", env().members.len()))
    });
    app.send("a");
    app.wait_for("the propagation confirmation", |s| s.contains("Propagate"));
    app.send("\t");
    app.wait_for("a canary wave first", |s| {
        s.contains("waves: member-1 first")
    });
    app.send("y");
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn a_degraded_canary_stops_the_rollout_and_nothing_reaches_the_other_members() {
    let members = env().members.clone();
    let ns = TestNamespace::on("waves-degraded", &members);
    let ns = ns.name.as_str();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let fleet = fleet(ns, 6, 15);
    let mut app = console(&fleet);
    propagate_with_a_canary(&mut app);
    let screen = app.wait_for_within(
        "the rollout to stop on the Degraded canary",
        Duration::from_secs(180),
        |s| s.contains("propagation stopped:") && s.contains("is Degraded"),
    );
    assert!(
        screen.contains(&format!("Deployment/{ns}/web on member-1 is Degraded")),
        "{screen}"
    );
    let progressing = kubectl_ok(
        "member-1",
        &[
            "get",
            "deployment",
            "web",
            "-n",
            ns,
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Progressing\")].reason}",
        ],
    );
    assert_eq!(
        progressing.trim(),
        "ProgressDeadlineExceeded",
        "kubectl on member-1"
    );
    for member in &members[1..] {
        assert!(!has_web(member, ns), "{member} got a wave after the stop");
    }
    // Nothing is sent later either: a tick, a health report or a key must not restart it.
    app.send("p");
    std::thread::sleep(Duration::from_secs(5));
    for member in &members[1..] {
        assert!(
            !has_web(member, ns),
            "{member} got the Deployment after the stop"
        );
    }
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn a_paused_rollout_holds_the_next_wave_until_resumed() {
    let members = env().members.clone();
    let ns = TestNamespace::on("waves-paused", &members);
    let ns = ns.name.as_str();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    // A deadline no slow start reaches: this test is about the pause, not about Degraded.
    let fleet = fleet(ns, 1, 600);
    let mut app = console(&fleet);
    propagate_with_a_canary(&mut app);
    app.send("p");
    app.wait_for("the rollout paused", |s| s.contains("PAUSED"));
    eventually(
        "the canary's Deployment available",
        Duration::from_secs(120),
        || {
            // The canary's apply may still be on its way when the pause is shown.
            let available = kubectl(
                "member-1",
                &[
                    "get",
                    "deployment",
                    "web",
                    "-n",
                    ns,
                    "-o",
                    "jsonpath={.status.availableReplicas}",
                ],
            );
            let available = String::from_utf8_lossy(&available.stdout);
            (available.trim() == "1").then_some(())
        },
    );
    // The console saw the canary Healthy: the wave passed its gate and the next one is held.
    app.wait_for_within(
        "the canary wave through its gate, the next held",
        Duration::from_secs(180),
        |s| s.contains("PAUSED before wave 2/2"),
    );
    for member in &members[1..] {
        assert!(
            !has_web(member, ns),
            "{member} got the next wave while paused"
        );
    }
    app.send("p");
    for member in &members[1..] {
        eventually(
            &format!("the next wave on {member}"),
            Duration::from_secs(120),
            || has_web(member, ns).then_some(()),
        );
    }
    app.wait_for_within("the rollout to finish", Duration::from_secs(180), |s| {
        s.contains("propagation finished")
    });
    app.send("q");
    assert_eq!(app.wait_exit(), 0);
}
