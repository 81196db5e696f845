//! The console never draws a Secret's values: not in the rendered object of a cell, not in the
//! drift view, not in what a repair asks to confirm, not in the override editor's list of the
//! rules that write into a Secret (Karmada's or a FederatedSecret's), its forms, their errors
//! or its review. Headless, through the real session and views.

mod harness;

use std::sync::Arc;

use flotilla::app::action::Action;
use flotilla::app::state::Mode;
use flotilla::engine::{SourceFile, load_fleet};
use flotilla::messages::{BackendEvent, CellRef, CellUpdate, DriftField};
use flotilla::model::CellStatus;
use harness::console::Console;
use serde_json::Value;

const FLEET: &str = "\
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: m1}
spec: {syncMode: Push}
---
apiVersion: v1
kind: Secret
metadata: {name: db, namespace: shop}
stringData: {password: hunter2}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: db, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Secret, name: db}]
  placement:
    clusterAffinity: {clusterNames: [m1]}
";

/// The password, what it was changed to, and their base64.
fn leaks(text: &str) -> bool {
    ["hunter2", "aHVudGVyMg==", "letmein", "bGV0bWVpbg=="]
        .iter()
        .any(|value| text.contains(value))
}

fn console() -> Console {
    console_of(FLEET)
}

fn console_of(text: &str) -> Console {
    let files = vec![SourceFile {
        path: "fleet.yaml".into(),
        text: text.into(),
    }];
    let (fleet, errors) = load_fleet(&files);
    assert!(errors.is_empty(), "{errors:?}");
    let fleet = Arc::new(fleet);
    let state = flotilla::app::state_for_fleet(&fleet, "test".into());
    Console::new(state, fleet, files)
}

fn screen(console: &Console) -> String {
    let backend = ratatui::backend::TestBackend::new(200, 40);
    let mut terminal = ratatui::Terminal::new(backend).expect("a test terminal");
    let theme = flotilla::config::theme::Theme::load(None, true);
    let keymap = flotilla::config::keymap::Keymap::load("default", None);
    let context = flotilla::views::ViewContext {
        theme: &theme,
        keymap: &keymap,
        ascii: false,
    };
    terminal
        .draw(|frame| flotilla::views::render(frame, &console.session.state, &context))
        .expect("drawn");
    terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect()
}

#[test]
fn the_rendered_object_of_a_secret_cell_shows_its_keys_not_its_values() {
    let mut console = console();
    console.select("Secret/shop/db");
    console.select_cluster("m1");
    console.keys("<enter>");
    assert!(matches!(console.state.mode, Mode::Object { .. }));
    let yaml = console
        .state
        .explanation
        .as_ref()
        .and_then(|e| e.object_yaml.clone())
        .expect("the object is shown");
    assert!(yaml.contains("password") && yaml.contains("***"), "{yaml}");
    assert!(!leaks(&yaml), "{yaml}");
    let screen = screen(&console);
    assert!(screen.contains("password"), "{screen}");
    assert!(!leaks(&screen), "{screen}");
}

#[test]
fn a_drifted_secret_value_is_masked_in_the_drift_view_and_its_confirmations() {
    let mut console = console();
    let resource = console.select("Secret/shop/db") as u32;
    let cluster = console.cluster("m1") as u32;
    let cell = CellRef { resource, cluster };
    console.act(Action::Backend(BackendEvent::Cells(vec![CellUpdate {
        cell,
        status: CellStatus::Drifted,
        message: None,
    }])));
    console.act(Action::Backend(BackendEvent::Drift {
        cell,
        fields: vec![DriftField {
            path: "/data/password".into(),
            desired: Value::from("aHVudGVyMg=="),
            live: Value::from("bGV0bWVpbg=="),
            manager: Some("kubectl-edit".into()),
            time: None,
            secret: true,
        }],
    }));
    console.keys("D");
    let screen_text = screen(&console);
    assert!(screen_text.contains("/data/password"), "{screen_text}");
    assert!(screen_text.contains("*** (changed)"), "{screen_text}");
    assert!(!leaks(&screen_text), "{screen_text}");
    for key in ['r', 'a', 'i'] {
        console.keys(" ");
        console.keys(&key.to_string());
        let asked = screen(&console);
        assert!(!leaks(&asked), "{key}: {asked}");
        if key == 'r' {
            assert!(
                asked.contains("force-apply"),
                "a confirmation is asked: {asked}"
            );
        }
        console.keys("<esc>");
        console.keys("<esc>");
        console.keys("D");
    }
}

/// The override policy writing a password into the Secret on m1, beside a label.
const OVERRIDES: &str = "\
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: db-m1, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Secret, name: db}]
  overrideRules:
  - targetCluster: {clusterNames: [m1]}
    overriders:
      plaintext:
      - {path: /stringData/password, operator: replace, value: m1-override-pw-5522}
  - targetCluster: {clusterNames: [m1]}
    overriders:
      labelsOverrider:
      - {operator: add, value: {tier: gold-on-m1}}
";

/// A FederatedSecret whose override on k1 writes a password.
const FEDERATED: &str = "\
apiVersion: core.kubefed.io/v1beta1
kind: KubeFedCluster
metadata: {name: k1, namespace: kube-federation-system}
spec: {apiEndpoint: \"https://k1:6443\", secretRef: {name: k1}}
---
apiVersion: types.kubefed.io/v1beta1
kind: FederatedNamespace
metadata: {name: shop, namespace: shop}
spec:
  placement: {clusterSelector: {}}
---
apiVersion: types.kubefed.io/v1beta1
kind: FederatedSecret
metadata: {name: db, namespace: shop}
spec:
  template:
    stringData: {password: fed-template-pw-8855}
  placement:
    clusters: [{name: k1}]
  overrides:
  - clusterName: k1
    clusterOverrides:
    - {path: /stringData/password, value: m1-override-pw-5522}
";

/// The values written in these fleets, typed in the editor, and their base64.
fn override_leaks(text: &str) -> bool {
    leaks(text)
        || [
            "m1-override-pw-5522",
            "bTEtb3ZlcnJpZGUtcHctNTUyMg==",
            "fed-template-pw-8855",
            "typed-pw-3344",
            "dHlwZWQtcHctMzM0NA==",
            "987654",
        ]
        .iter()
        .any(|value| text.contains(value))
}

fn override_editor(console: &Console) -> &flotilla::app::state::override_editor::OverrideEditor {
    match &console.state.mode {
        Mode::Overrides(editor) => editor,
        other => panic!("not in the override editor: {other:?}"),
    }
}

/// Opens the override editor on the Secret's cell on `cluster`.
fn open_overrides(console: &mut Console, cluster: &str) {
    console.select_cluster(cluster);
    console.select("Secret/shop/db");
    console.keys("o");
    assert!(
        matches!(console.state.mode, Mode::Overrides(_)),
        "{:?}",
        console.state.notice
    );
}

#[test]
fn the_override_editor_lists_edits_and_reviews_a_secret_value_without_drawing_it() {
    let mut console = console_of(&format!("{FLEET}{OVERRIDES}"));
    open_overrides(&mut console, "m1");
    let items: Vec<String> = override_editor(&console)
        .rows
        .iter()
        .flat_map(|(_, rule)| rule.items.clone())
        .collect();
    let listed = items.join("\n");
    assert!(listed.contains("/stringData/password"), "{listed}");
    assert!(
        listed.contains("gold-on-m1"),
        "a label is no secret: {listed}"
    );
    assert!(!override_leaks(&listed), "{listed}");
    let drawn = screen(&console);
    assert!(drawn.contains("/stringData/password"), "{drawn}");
    assert!(!override_leaks(&drawn), "{drawn}");

    // Editing the rule: its value is not put back in the form, nor drawn as typed.
    let cursor = override_editor(&console)
        .rows
        .iter()
        .position(|(_, rule)| rule.secret)
        .expect("the rule writing the password");
    assert_eq!(cursor, 0, "listed first");
    console.keys("e");
    let flotilla::app::state::override_editor::Stage::Form(form) = &override_editor(&console).stage
    else {
        panic!("the rule's form opens");
    };
    assert_eq!(form.path, "/stringData/password");
    assert_eq!(form.value, "", "the value is typed anew");
    assert!(!override_leaks(&screen(&console)));
    console.type_text("typed-pw-3344");
    let drawn = screen(&console);
    assert!(drawn.contains("not shown"), "{drawn}");
    assert!(!override_leaks(&drawn), "{drawn}");
    // A value of the wrong type is refused without quoting either value.
    console.keys("<ctrl-u>");
    console.type_text("987654");
    let drawn = screen(&console);
    assert!(drawn.contains("holds a string"), "{drawn}");
    assert!(!override_leaks(&drawn), "{drawn}");
    console.keys("<ctrl-u>");
    console.type_text("typed-pw-3344");
    console.keys("<enter>");
    let editor = override_editor(&console);
    assert_eq!(editor.error, None);
    let preview = editor.preview.as_ref().expect("a preview");
    let diffs: String = preview.diffs.iter().map(|d| d.diff.as_str()).collect();
    assert!(diffs.contains("password"), "{diffs}");
    assert!(!override_leaks(&diffs), "{diffs}");
    // The review draws the masked diff.
    console.keys("<enter>");
    let drawn = screen(&console);
    assert!(!override_leaks(&drawn), "{drawn}");
}

#[test]
fn a_federated_secret_override_is_listed_masked_in_the_editor() {
    let mut console = console_of(FEDERATED);
    open_overrides(&mut console, "k1");
    let listed: Vec<String> = override_editor(&console)
        .rows
        .iter()
        .flat_map(|(_, rule)| rule.items.clone())
        .collect();
    assert_eq!(listed, ["replace /stringData/password = \"***\""]);
    let drawn = screen(&console);
    assert!(drawn.contains("/stringData/password"), "{drawn}");
    assert!(!override_leaks(&drawn), "{drawn}");
}

#[test]
fn the_explanation_of_a_cell_traces_an_override_into_a_secret_masked() {
    for (text, cluster) in [
        (format!("{FLEET}{OVERRIDES}"), "m1"),
        (FEDERATED.into(), "k1"),
    ] {
        let mut console = console_of(&text);
        console.select_cluster(cluster);
        console.select("Secret/shop/db");
        // The explanation follows the cursor on the next action.
        console.act(Action::Tick {
            now_ms: 0,
            unix_ms: None,
        });
        let steps = console
            .state
            .explanation
            .as_ref()
            .map(|e| e.steps.join("\n"))
            .expect("the cell is explained");
        assert!(steps.contains("/stringData/password"), "{steps}");
        assert!(steps.contains("***"), "{steps}");
        assert!(!override_leaks(&steps), "{steps}");
        let drawn = screen(&console);
        assert!(!override_leaks(&drawn), "{drawn}");
    }
}
