//! The console never draws a Secret's values: not in the rendered object of a cell, not in the
//! drift view, not in what a repair asks to confirm. Headless, through the real session and
//! views.

mod common;

use std::sync::Arc;

use common::console::Console;
use flotilla::app::action::{Action, InputKey};
use flotilla::app::state::Mode;
use flotilla::backend::{BackendEvent, CellRef, CellUpdate, DriftField};
use flotilla::config::keymap::KeyCommand;
use flotilla::engine::{SourceFile, load_fleet};
use flotilla::model::CellStatus;
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
    let files = vec![SourceFile {
        path: "fleet.yaml".into(),
        text: FLEET.into(),
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
    console.command(KeyCommand::Select);
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
    console.command(KeyCommand::Drift);
    let screen_text = screen(&console);
    assert!(screen_text.contains("/data/password"), "{screen_text}");
    assert!(screen_text.contains("*** (changed)"), "{screen_text}");
    assert!(!leaks(&screen_text), "{screen_text}");
    for key in ['r', 'a', 'i'] {
        console.key(InputKey::Char(' '));
        console.key(InputKey::Char(key));
        let asked = screen(&console);
        assert!(!leaks(&asked), "{key}: {asked}");
        if key == 'r' {
            assert!(
                asked.contains("force-apply"),
                "a confirmation is asked: {asked}"
            );
        }
        console.key(InputKey::Esc);
        console.key(InputKey::Esc);
        console.command(KeyCommand::Drift);
    }
}
