//! Editing a placement in the console against the real test environment, the way an operator
//! does it: the real binary in a pseudo-terminal, keys in, screens out. Widening a label
//! selector brings member-3 in; the preview shows it entering, the review shows member-3's
//! server-side dry run of the object, confirming saves the fleet file (only the policy's
//! document changes) and propagates — kubectl finds the object on member-3 — and the audit
//! log records both writes. Undo puts the document back and, after listing it, deletes the
//! object it created.

mod harness;

use std::path::Path;

use flotilla::engine::document::parse::document_spans;
use harness::{FleetDir, TestNamespace, apply_fleet, env, kubectl, pty_console};

/// Karmada inventory (member-1 and member-2 prod, member-3 dev), a ConfigMap placed on prod,
/// and an unrelated ConfigMap with its own policy in the same file, with comments.
fn fleet_text(ns: &str) -> String {
    format!(
        r#"# the fleet for the edit test
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {{name: member-1, labels: {{env: prod}}}}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {{name: member-2, labels: {{env: prod}}}}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {{name: member-3, labels: {{env: dev}}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: settings, namespace: {ns}}}
data: {{mode: fast}}  # the value operators tune
---
# where settings go
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: settings, namespace: {ns}}}
spec:
  resourceSelectors: [{{apiVersion: v1, kind: ConfigMap, name: settings}}]
  placement:
    clusterAffinity:
      labelSelector:
        matchLabels: {{env: prod}}  # prod only, for now
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: other, namespace: {ns}}}
data: {{keep: "me"}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: other, namespace: {ns}}}
spec:
  resourceSelectors: [{{apiVersion: v1, kind: ConfigMap, name: other}}]
  placement:
    clusterAffinity: {{clusterNames: [member-1]}}
"#
    )
}

/// The text of every document of a file, in order.
fn documents(text: &str) -> Vec<String> {
    document_spans(text)
        .into_iter()
        .map(|(_, range)| text[range].to_string())
        .collect()
}

fn has_settings(member: &str, ns: &str) -> bool {
    kubectl(member, &["get", "configmap", "settings", "-n", ns])
        .status
        .success()
}

/// The cells of the `settings` row, after its dialect column.
fn settings_cells(screen: &str) -> String {
    screen
        .lines()
        .find(|line| line.contains("/settings"))
        .and_then(|line| line.split("karmada").nth(1))
        .map(|cells| cells.trim_start().chars().take(5).collect())
        .unwrap_or_default()
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn widening_a_selector_in_the_console_saves_one_document_propagates_and_undoes() {
    let members: Vec<String> = env().members.iter().take(3).cloned().collect();
    assert_eq!(members, ["member-1", "member-2", "member-3"]);
    let ns = TestNamespace::on("edit", &members);
    let original = fleet_text(&ns.name);
    let fleet = FleetDir::new().fleet(&original);
    let file = fleet.join("fleet.yaml");
    apply_fleet(fleet.path());
    assert!(has_settings("member-1", &ns.name) && has_settings("member-2", &ns.name));
    assert!(!has_settings("member-3", &ns.name));

    let mut console = pty_console(&fleet);
    console.wait_for("settings in sync on the prod members", |screen| {
        settings_cells(screen) == "✓ ✓ ·"
    });
    console.send("\t");
    console.send("/settings\r");
    console.wait_for("the settings row alone", |screen| {
        settings_cells(screen) == "✓ ✓ ·" && !screen.contains("/other ")
    });
    console.send("e");
    console.wait_for("the placement editor on the policy", |screen| {
        screen.contains(&format!("PropagationPolicy {}/settings", ns.name))
            && screen.contains("selector env=prod")
    });
    console.send("\t");
    console.send("\x15");
    console.send("env in (prod,dev)");
    console.wait_for("member-3 entering in the preview", |screen| {
        screen.contains("1 entering · 0 leaving · 1 object(s) created")
            && screen
                .lines()
                .any(|line| line.contains("member-3") && line.contains("+ enters"))
    });
    console.send("\r");
    console.wait_for("member-3's server-side dry run of the object", |screen| {
        screen.contains("server-side dry run: 1 of 1 cluster(s) answered")
            && screen.contains(&format!(
                "ConfigMap/{}/settings on member-3 · create",
                ns.name
            ))
            && screen.contains("+  mode: fast")
    });
    console.send("\r");
    console.wait_for("the confirmation", |screen| {
        screen.contains("+ member-3 enters") && screen.contains("y propagate")
    });
    console.send("y");
    console.wait_for("settings in sync on all three members", |screen| {
        settings_cells(screen) == "✓ ✓ ✓"
    });
    assert!(
        has_settings("member-3", &ns.name),
        "kubectl finds it on member-3"
    );

    let saved = std::fs::read_to_string(&file).expect("read the fleet");
    let (before, after) = (documents(&original), documents(&saved));
    assert_eq!(before.len(), after.len());
    let changed: Vec<usize> = (0..before.len())
        .filter(|i| before[*i] != after[*i])
        .collect();
    assert_eq!(changed, [4], "only the policy's document changes:\n{saved}");
    assert!(after[4].contains("# where settings go"), "{}", after[4]);
    assert!(
        Path::new(&format!("{}.flotilla-bak", file.display())).exists(),
        "a backup is kept"
    );
    let audit =
        std::fs::read_to_string(fleet.state().join("flotilla/audit.log")).expect("the audit log");
    assert!(audit.contains("\"save-placement\""), "{audit}");
    assert!(
        audit
            .lines()
            .any(|line| line.contains("\"apply\"") && line.contains("member-3")),
        "{audit}"
    );

    console.send("u");
    console.wait_for("the undo confirmation listing the deletion", |screen| {
        screen.contains(&format!("ConfigMap/{}/settings on member-3", ns.name))
            && screen.contains("y propagate")
    });
    console.send("y");
    console.wait_for("settings back on the prod members only", |screen| {
        settings_cells(screen) == "✓ ✓ ·"
    });
    let restored = std::fs::read_to_string(&file).expect("read the fleet");
    let restored_docs = documents(&restored);
    for (index, text) in before.iter().enumerate().filter(|(i, _)| *i != 4) {
        assert_eq!(&restored_docs[index], text, "document {index} untouched");
    }
    assert!(
        restored_docs[4].contains("env: prod"),
        "{}",
        restored_docs[4]
    );
    assert!(!restored_docs[4].contains("dev"), "{}", restored_docs[4]);
    assert!(
        !has_settings("member-3", &ns.name),
        "undo deleted it on member-3"
    );
    assert!(has_settings("member-1", &ns.name) && has_settings("member-2", &ns.name));
    console.send("q");
    assert_eq!(console.wait_exit(), 0);
}
