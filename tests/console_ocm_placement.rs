//! The Open Cluster Management Placement editor driven headless on a hub with two clusters and
//! two Placements, keys through the shared `harness::console` harness into `update`: editing
//! the Placement the selected row follows previews the decision change and confirming writes
//! it (guarded by the version the editor started from), `u` writes the last edited Placement
//! back once, the operator chooses a Placement when no row follows one, and bad text blocks
//! enter.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

mod harness;

use flotilla::app::state::ocm_placement::{OcmField, OcmStage};
use flotilla::app::state::{ClusterRow, Mode, ResourceRow, State};
use flotilla::engine::dialect::ocm::{OcmCluster, OcmClusterSet, SetSelector};
use flotilla::engine::edit::ocm_placement::{HubPlacement, PlacementWorld, ReplicaSetRef};
use flotilla::engine::place::selector::LabelSelector;
use flotilla::messages::Effect;
use flotilla::model::{Dialect, ResourceRef};
use harness::console::{Console, user_keymap};
use serde_json::json;

fn placement(name: &str, env: &str, decided: &[&str]) -> HubPlacement {
    HubPlacement {
        object: json!({
            "metadata": {"name": name, "namespace": "apps", "resourceVersion": "7"},
            "spec": {"predicates": [{"requiredClusterSelector": {
                "labelSelector": {"matchLabels": {"env": env}}}}]}
        }),
        decided: decided.iter().map(|d| d.to_string()).collect(),
        satisfied: Some((true, "AllDecisionsScheduled".into())),
    }
}

/// alpha (prod) and beta (dev); Placement `web` decided alpha, and a ManifestWorkReplicaSet
/// delivering ConfigMap/apps/colors follows it; Placement `db` decided beta.
fn ocm_state() -> State {
    let names = [("alpha", "prod"), ("beta", "dev")];
    let clusters = names
        .iter()
        .map(|(name, _)| ClusterRow {
            spec: flotilla::model::ClusterSpec {
                name: (*name).into(),
                ..Default::default()
            },
            status: Default::default(),
            last_seen_ms: None,
        })
        .collect();
    let resources = vec![ResourceRow {
        target: ResourceRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("apps".into()),
            name: "colors".into(),
        },
        dialect: Dialect::Karmada,
        placement: String::new(),
        labels: None,
    }];
    let mut state = State::new("hub".into(), clusters, resources);
    state.hub = Some(flotilla::model::HubKind::OpenClusterManagement);
    state.placements = Some(Arc::new(PlacementWorld {
        clusters: names
            .iter()
            .map(|(name, env)| OcmCluster {
                name: (*name).into(),
                labels: BTreeMap::from([("env".to_string(), env.to_string())]),
                ..Default::default()
            })
            .collect(),
        sets: vec![OcmClusterSet {
            name: "global".into(),
            selector: SetSelector::Labels(LabelSelector::default()),
        }],
        bindings: vec![("apps".into(), "global".into())],
        placements: vec![
            placement("db", "dev", &["beta"]),
            placement("web", "prod", &["alpha"]),
        ],
        replica_sets: vec![ReplicaSetRef {
            namespace: "apps".into(),
            name: "colors".into(),
            placements: vec!["web".into()],
            objects: vec!["ConfigMap/apps/colors".into()],
        }],
    }));
    state.focus = flotilla::app::state::Pane::Resources;
    state
}

#[test]
fn editing_the_followed_placement_previews_the_move_and_confirming_writes_it() {
    let mut console = Console::on_state(ocm_state());
    console.keys("e");
    let Mode::OcmPlacement(editor) = &console.state.mode else {
        panic!("the OCM editor opens: {:?}", console.state.notice);
    };
    assert_eq!(
        editor.base.as_ref().map(HubPlacement::title).as_deref(),
        Some("Placement apps/web"),
        "the Placement the row's ManifestWorkReplicaSet follows"
    );
    assert_eq!(editor.edit.predicates[0].labels, "env=prod");

    console.keys("<ctrl-u>env=dev");
    let Mode::OcmPlacement(editor) = &console.state.mode else {
        panic!("still editing");
    };
    let preview = editor.preview.as_ref().unwrap();
    assert_eq!(preview.entering().collect::<Vec<_>>(), ["beta"]);
    assert_eq!(preview.leaving().collect::<Vec<_>>(), ["alpha"]);

    console.keys("<enter>");
    let Mode::Confirm(pending) = &console.state.mode else {
        panic!("enter asks first: {:?}", console.state.notice);
    };
    let summary = pending.summary.join("\n");
    assert!(summary.contains("+ beta enters"), "{summary}");
    assert!(summary.contains("- alpha leaves"), "{summary}");
    assert!(
        summary.contains("ManifestWorkReplicaSet apps/colors follows it")
            && summary.contains("for alpha are deleted"),
        "{summary}"
    );
    let effects = console.keys("y");
    let [
        Effect::WritePlacement {
            namespace,
            name,
            patch,
            expect,
        },
    ] = effects.as_slice()
    else {
        panic!("one Placement write: {effects:?}");
    };
    assert_eq!((namespace.as_str(), name.as_str()), ("apps", "web"));
    assert_eq!(expect, &["beta"]);
    assert_eq!(patch[0]["op"], "test");
    assert_eq!(patch[0]["value"], "7");
    assert_eq!(
        patch[1]["value"][0]["requiredClusterSelector"]["labelSelector"],
        json!({"matchLabels": {"env": "dev"}})
    );
}

#[test]
fn u_writes_the_last_edited_placement_back_once() {
    let mut console = Console::on_state(ocm_state());
    console.keys("u");
    assert_eq!(console.state.notice.as_deref(), Some("nothing to undo"));
    console.keys("e");
    console.keys("<ctrl-u>env=dev<enter>y");
    // The hub now holds the edit, at a new version, and OCM decided beta.
    if let Some(world) = &mut console.state.placements {
        let web = &mut Arc::make_mut(world).placements[1];
        web.object = json!({
            "metadata": {"name": "web", "namespace": "apps", "resourceVersion": "8"},
            "spec": {"predicates": [{"requiredClusterSelector": {
                "labelSelector": {"matchLabels": {"env": "dev"}}}}]}
        });
        web.decided = vec!["beta".into()];
    }
    console.keys("u");
    let Mode::Confirm(pending) = &console.state.mode else {
        panic!("u asks first: {:?}", console.state.notice);
    };
    assert!(
        pending
            .summary
            .contains(&"+ alpha enters the decision".to_string())
    );
    assert!(
        pending
            .summary
            .contains(&"- beta leaves the decision".to_string())
    );
    let effects = console.keys("y");
    let [Effect::WritePlacement { patch, expect, .. }] = effects.as_slice() else {
        panic!("one Placement write: {effects:?}");
    };
    assert_eq!(expect, &["alpha"]);
    assert_eq!(
        patch[0]["value"], "8",
        "guarded by the version the hub holds now"
    );
    assert_eq!(
        patch[1]["value"][0]["requiredClusterSelector"]["labelSelector"],
        json!({"matchLabels": {"env": "prod"}})
    );
    console.keys("u");
    assert_eq!(
        console.state.notice.as_deref(),
        Some("nothing to undo"),
        "an undo is not undone"
    );
}

#[test]
fn without_a_followed_placement_the_operator_chooses_one_and_bad_text_blocks_enter() {
    let mut console = Console::on_state(ocm_state());
    if let Some(world) = &mut console.state.placements {
        Arc::make_mut(world).replica_sets.clear();
    }
    console.keys("e");
    assert!(matches!(
        &console.state.mode,
        Mode::OcmPlacement(editor) if editor.stage == OcmStage::Choosing { cursor: 0 }
    ));
    console.keys("<down><enter>");
    let Mode::OcmPlacement(editor) = &console.state.mode else {
        panic!("editing");
    };
    assert_eq!(editor.base.as_ref().unwrap().name(), "web");

    // Tab to the new predicate's labels, then to tolerations: a Karmada effect is refused.
    console.keys("<tab><tab><tab><tab>gpu:NoSchedule<enter>");
    let Mode::OcmPlacement(editor) = &console.state.mode else {
        panic!("still editing: {:?}", console.state.notice);
    };
    assert_eq!(editor.field, OcmField::Tolerations);
    assert!(
        editor
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("NoSelect")
    );
    assert!(
        console
            .state
            .notice
            .as_deref()
            .unwrap_or_default()
            .starts_with("fix the Placement first")
    );
    console.keys("<esc>");
    assert_eq!(console.state.mode, Mode::Normal);
}

#[test]
fn a_on_a_hub_without_reschedule_says_why() {
    let mut console = Console::on_state(ocm_state());
    console.state.cannot_edit.reschedule = Some("nothing to reschedule on OCM".into());
    console.keys("a");
    assert_eq!(console.state.mode, Mode::Normal);
    assert_eq!(
        console.state.notice.as_deref(),
        Some("nothing to reschedule on OCM")
    );
}

#[test]
fn a_user_key_map_moves_the_placement_editors_keys_in_the_list_and_in_the_fields() {
    let mut console = Console::on_state(ocm_state());
    if let Some(world) = &mut console.state.placements {
        Arc::make_mut(world).replica_sets.clear();
    }
    console.use_keymap(user_keymap(
        "ocm-placement:\n  down: [J]\n  confirm: [ctrl-s]\n  next-field: [ctrl-n]\n",
    ));
    console.keys("e");
    let choosing = |console: &Console| match &console.state.mode {
        Mode::OcmPlacement(editor) => match editor.stage {
            OcmStage::Choosing { cursor } => Some(cursor),
            OcmStage::Editing => None,
        },
        other => panic!("the editor is open: {other:?}"),
    };
    console.keys("j<down>");
    assert_eq!(choosing(&console), Some(0), "j and down moved to J");
    console.keys("J<enter>");
    assert_eq!(
        choosing(&console),
        Some(1),
        "J moves down; enter no longer chooses"
    );
    console.keys("<ctrl-s>");
    let Mode::OcmPlacement(editor) = &console.state.mode else {
        panic!("editing");
    };
    assert_eq!(
        editor.base.as_ref().unwrap().name(),
        "web",
        "ctrl-s chose it"
    );
    assert_eq!(editor.field, OcmField::Labels(0));

    // In the fields characters are text, J included; ctrl-n leaves the field, tab does not.
    console.keys("<ctrl-u>env=devJ<backspace><tab><ctrl-n>");
    let Mode::OcmPlacement(editor) = &console.state.mode else {
        panic!("still editing");
    };
    assert_eq!(editor.edit.predicates[0].labels, "env=dev");
    assert_eq!(editor.field, OcmField::Claims(0));
    // shift-tab, which neither map binds here, goes back a field as up does.
    console.keys("<shift-tab>");
    let Mode::OcmPlacement(editor) = &console.state.mode else {
        panic!("still editing");
    };
    assert_eq!(
        editor.field,
        OcmField::Labels(0),
        "shift-tab: the field before"
    );
    console.keys("<ctrl-n>");
    console.keys("<enter>");
    assert!(
        matches!(console.state.mode, Mode::OcmPlacement(_)),
        "enter no longer confirms"
    );
    console.keys("<ctrl-s>");
    assert!(
        matches!(console.state.mode, Mode::Confirm(_)),
        "ctrl-s asks to write: {:?}",
        console.state.notice
    );
}
