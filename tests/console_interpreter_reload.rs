//! The console follows a fleet's Karmada `ResourceInterpreterCustomization` through every
//! reload: a customization saved from an edit, or reloaded from disk after a refused save,
//! judges the health the console shows from then on, without a restart. Driven through the
//! real session (`update`, then its effects), as the console loop drives it.

mod harness;

use std::sync::Arc;

use flotilla::app::action::Action;
use flotilla::app::state::{AfterSave, FleetChanged, Saved};
use flotilla::engine::{SourceFile, health, load_fleet};
use flotilla::messages::Effect;
use flotilla::model::HealthKind;
use harness::console::Console;
use serde_json::json;

const FLEET: &str = "\
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: a}
---
apiVersion: apps.example.io/v1
kind: Widget
metadata: {name: dial, namespace: shop}
spec: {size: 3}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: dial, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps.example.io/v1, kind: Widget, name: dial}]
  placement: {clusterAffinity: {clusterNames: [a]}}
";

/// A customization whose health is `condition` of the observed Widget.
fn customization(condition: &str) -> String {
    format!(
        "\
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: widget
spec:
  target:
    apiVersion: apps.example.io/v1
    kind: Widget
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observedObj)
          return {condition}
        end
"
    )
}

fn file(path: &str, text: &str) -> SourceFile {
    SourceFile {
        path: path.into(),
        text: text.into(),
    }
}

/// The Widget a cluster holds: ready, in phase `Starting`.
fn live_widget() -> serde_json::Value {
    json!({
        "apiVersion": "apps.example.io/v1",
        "kind": "Widget",
        "metadata": {"name": "dial", "namespace": "shop", "generation": 1},
        "spec": {"size": 3},
        "status": {"ready": true, "phase": "Starting"},
    })
}

/// The health the console is shown for the live Widget, and the rule that decided it.
fn shown() -> Option<(HealthKind, Option<String>)> {
    health::assess(&live_widget()).map(|health| (health.kind, health.rule))
}

#[test]
fn an_edited_customization_decides_health_after_a_save_and_after_a_reload_from_disk() {
    let files = vec![
        file("fleet/fleet.yaml", FLEET),
        file(
            "fleet/interpreters.yaml",
            &customization("observedObj.status.ready == true"),
        ),
    ];
    let (fleet, errors) = load_fleet(&files);
    assert!(errors.is_empty(), "{errors:?}");
    // As the console starts: the fleet it loaded judges health.
    flotilla::engine::fleet::interpreted::use_for_health(&fleet);
    let fleet = Arc::new(fleet);
    let state = flotilla::app::state_for_fleet(&fleet, "fleet".into());
    let mut console = Console::new(state, fleet, files).running_effects();
    assert_eq!(
        shown(),
        Some((
            HealthKind::Healthy,
            Some("apps.example.io/Widget (karmada interpreter, fleet/interpreters.yaml:11)".into())
        ))
    );

    // The customization is saved with a stricter script at the same line: the same object
    // (already judged once) is judged again by the new script.
    let stricter = customization("observedObj.status.phase == 'Running'");
    console.act(Action::Saved(Saved::Written {
        files: vec![file("fleet/interpreters.yaml", &stricter)],
        notice: "saved fleet/interpreters.yaml".into(),
        then: AfterSave::Propagate {
            apply: Vec::new(),
            delete: Vec::new(),
        },
    }));
    assert!(
        console
            .sent()
            .iter()
            .any(|effect| matches!(effect, Effect::UseFleet(_))),
        "the backend works from the saved fleet"
    );
    assert_eq!(
        shown().map(|(kind, _)| kind),
        Some(HealthKind::Degraded),
        "the saved script decides: {:?}",
        health::assess(&live_widget())
    );

    // A later save is refused because the file changed on disk; the operator reloads it,
    // and what is on disk now (the customization gone) is what counts.
    console.act(Action::Saved(Saved::Changed(FleetChanged {
        file: "fleet/interpreters.yaml".into(),
        title: "ResourceInterpreterCustomization widget".into(),
        reason: "fleet/interpreters.yaml changed on disk".into(),
        lines: vec!["- the whole customization".into()],
        disk: Some("# no interpreters any more\n".into()),
        reopen: None,
    })));
    console.keys("y");
    assert_eq!(
        console.state.notice.as_deref(),
        Some("reloaded fleet/interpreters.yaml from disk")
    );
    assert_eq!(
        shown(),
        None,
        "without its customization a Widget has no health again"
    );
}
