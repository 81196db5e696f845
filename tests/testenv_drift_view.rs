//! The console's drift view against the real test environment, driven as an operator does it:
//! the real binary in a pseudo-terminal. kubectl scales a Deployment on two members to the
//! same value; the view shows one group of two; reverting one member and adopting the other
//! leaves kubectl seeing the desired value on the first and the kept value on the second,
//! the fleet carrying an override for the second, the audit log an entry for each, and
//! `flotilla drift` clean. An image ignored from the view stops counting at once, `apply`
//! leaves it, and removing the rule in the view brings the drift back.

mod harness;

use harness::{
    FleetDir, TestNamespace, apply_fleet, env, flotilla, kubectl_ok, output_text, pty_console,
};

fn fleet_text(ns: &str) -> String {
    format!(
        r#"apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {{name: member-1}}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {{name: member-2}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {ns}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: web, namespace: {ns}}}
spec:
  resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: web}}]
  placement:
    clusterAffinity: {{clusterNames: [member-1, member-2]}}
"#
    )
}

/// The fleet, applied to the environment.
fn applied_fleet(ns: &str) -> FleetDir {
    let fleet = FleetDir::new().fleet(fleet_text(ns));
    apply_fleet(fleet.path());
    fleet
}

fn replicas(context: &str, ns: &str) -> String {
    harness::jsonpath(context, "deployment/web", ns, "{.spec.replicas}")
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn two_members_drift_alike_revert_one_adopt_the_other_in_the_drift_view() {
    let members: Vec<String> = env().members.iter().take(2).cloned().collect();
    assert_eq!(members, ["member-1", "member-2"]);
    let ns = TestNamespace::on("driftview", &members);
    let ns = ns.name.as_str();
    let fleet = applied_fleet(ns);
    for member in &members {
        assert_eq!(replicas(member, ns), "2");
        kubectl_ok(
            member,
            &["scale", "deployment", "web", "-n", ns, "--replicas=5"],
        );
    }

    let mut console = pty_console(&fleet);
    console.wait_for("both members drifted", |s| s.contains("~2 Drifted"));
    console.send("D");
    let group = format!("2 clusters  Deployment/{ns}/web  /spec/replicas  desired 2  live 5");
    console.wait_for("one group of two in the drift view", |s| {
        s.contains("Drift · 2 field(s) in 1 group(s)") && s.contains(&group)
    });
    // The group's first member row is member-1: revert it.
    console.send("j");
    console.send("r");
    console.wait_for("the revert confirmation for member-1 alone", |s| {
        s.contains("Revert? Nothing is written")
            && s.contains(&format!(
                "member-1  Deployment/{ns}/web  /spec/replicas: live 5"
            ))
            && !s.contains("member-2  Deployment")
    });
    console.send("y");
    console.wait_for("member-1 back in sync", |s| {
        s.contains("Drift · 1 field(s) in 1 group(s)") && s.contains("member-2  Deployment")
    });
    console.send("g");
    console.send("a");
    console.wait_for("the adopt confirmation listing the override", |s| {
        s.contains("Adopt? Nothing is written") && s.contains("kind: OverridePolicy")
    });
    console.send("y");
    // The save's notice may already have given way to the apply's by the time we look.
    console.wait_for("no drift left", |s| {
        (s.contains("adopted 1 field(s): saved") || s.contains("object(s) on member-2"))
            && s.contains("Drift · 0 field(s)")
            && !s.contains("Drifted")
    });
    console.send("\x1b");
    console.wait_for("the matrix again", |s| s.contains("Federated resources"));
    console.send("q");
    assert_eq!(console.wait_exit(), 0);

    assert_eq!(
        replicas("member-1", ns),
        "2",
        "reverted to the desired value"
    );
    assert_eq!(
        replicas("member-2", ns),
        "5",
        "adopted: the live value stays"
    );
    let files: String = std::fs::read_dir(fleet.path())
        .expect("the fleet dir")
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().extension().is_some_and(|e| e == "yaml"))
        .map(|entry| std::fs::read_to_string(entry.path()).unwrap_or_default())
        .collect();
    assert!(
        files.contains("OverridePolicy") && files.contains("member-2"),
        "the fleet carries the override: {files}"
    );
    let drift = flotilla(fleet.path(), &["drift"]);
    assert_eq!(drift.status.code(), Some(0), "{}", output_text(&drift));
    let log = std::fs::read_to_string(fleet.state().join("flotilla/audit.log")).unwrap_or_default();
    assert!(log.contains("\"console-revert\""), "{log}");
    assert!(log.contains("\"console-adopt\""), "{log}");
}

fn image(context: &str, ns: &str) -> String {
    harness::jsonpath(
        context,
        "deployment/web",
        ns,
        "{.spec.template.spec.containers[0].image}",
    )
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn an_image_ignored_in_the_drift_view_stops_counting_and_apply_leaves_it() {
    let members: Vec<String> = env().members.iter().take(2).cloned().collect();
    let ns = TestNamespace::on("driftignore", &members);
    let ns = ns.name.as_str();
    let fleet = applied_fleet(ns);
    kubectl_ok(
        "member-1",
        &["set", "image", "deployment/web", "web=nginx:1.28", "-n", ns],
    );

    let mut console = pty_console(&fleet);
    console.wait_for("member-1 drifted", |s| s.contains("~1 Drifted"));
    console.send("D");
    console.wait_for("the image drift", |s| {
        s.contains("Drift · 1 field(s)") && s.contains("live \"nginx:1.28\"")
    });
    console.send("i");
    console.wait_for("the ignore confirmation", |s| {
        s.contains("Ignore? Nothing is written")
            && s.contains("kind: DriftIgnore")
            && s.contains("/spec/template/spec/containers/0/image")
    });
    console.send("y");
    console.wait_for("the drift ignored and the rule listed", |s| {
        s.contains("Drift · 0 field(s)")
            && !s.contains("Drifted")
            && s.contains("Ignore rules (1)")
            && s.contains("ignore-deployment-web")
    });
    let apply = flotilla(fleet.path(), &["apply", "--yes"]);
    assert_eq!(apply.status.code(), Some(0), "{}", output_text(&apply));
    assert_eq!(
        image("member-1", ns),
        "nginx:1.28",
        "apply leaves an ignored field"
    );
    let drift = flotilla(fleet.path(), &["drift"]);
    assert_eq!(drift.status.code(), Some(0), "{}", output_text(&drift));

    // Remove the rule again: the drift counts once more.
    console.send("\t");
    console.send("d");
    console.wait_for("the removal confirmation", |s| {
        s.contains("Remove rule? Nothing is written") && s.contains("- kind: DriftIgnore")
    });
    console.send("y");
    console.wait_for("the drift back", |s| {
        s.contains("Drift · 1 field(s)") && s.contains("Ignore rules (0)")
    });
    console.send("\x1b");
    console.wait_for("the matrix again", |s| s.contains("Federated resources"));
    console.send("q");
    assert_eq!(console.wait_exit(), 0);
    let log = std::fs::read_to_string(fleet.state().join("flotilla/audit.log")).unwrap_or_default();
    assert!(log.contains("\"console-ignore\""), "{log}");
    assert!(log.contains("\"console-remove-ignore\""), "{log}");
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn enter_on_a_drifted_cell_shows_the_live_object_its_diff_and_the_clusters_events() {
    let members: Vec<String> = env().members.iter().take(2).cloned().collect();
    let ns = TestNamespace::on("liveview-pty", &members);
    let ns = ns.name.as_str();
    let fleet = applied_fleet(ns);
    // The member's deployment controller records the scale as an Event of the Deployment.
    kubectl_ok(
        "member-1",
        &["scale", "deployment", "web", "-n", ns, "--replicas=3"],
    );

    let mut console = pty_console(&fleet);
    console.wait_for("member-1 drifted", |s| s.contains("~1 Drifted"));
    // Focus starts on the clusters, member-1 first: enter goes to its column in the matrix,
    // whose cursor is on the Deployment's row; enter again opens that cell.
    console.send("\r");
    console.send("\r");
    let title = format!("Deployment/{ns}/web on member-1 · tab next view");
    console.wait_for("the cell's object view", |s| s.contains(&title));
    console.send("\t");
    console.wait_for("the live object, scaled", |s| {
        s.contains(&title) && s.contains("replicas: 3")
    });
    console.send("\t");
    console.wait_for("the diff naming the drifted field", |s| {
        s.contains(&title)
            && s.contains("replicas")
            && s.contains('3')
            && s.contains('2')
            && !s.contains("live matches the desired object")
    });
    console.send("\t");
    let events = console.wait_for("the member's Event for the scale", |s| {
        s.contains(&title) && s.contains("ScalingReplicaSet")
    });
    assert!(events.contains("Scaled up replica set"), "{events}");
    console.send("\x1b");
    console.wait_for("the matrix again", |s| s.contains("Federated resources"));
    console.send("q");
    assert_eq!(console.wait_exit(), 0);
}
