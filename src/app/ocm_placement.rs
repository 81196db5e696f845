//! The Open Cluster Management Placement editor: choose one of the hub's Placements, edit its
//! predicates (label and claim selectors, ORed across predicates), tolerations and number of
//! clusters as text; every keystroke decides the edited Placement again, offline, and shows
//! which clusters enter, leave, stay or stay out and why. Enter asks for a confirmation that
//! lists the decision change and the ManifestWorkReplicaSets that follow it. It must not talk
//! to the hub: the write is an effect the operator confirms.

use std::sync::Arc;

use super::action::InputKey;
use super::state::{Mode, PendingApply, PlacementWrite, State};
use super::update::edit_text;
use crate::backend::Effect;
use crate::engine::edit::ocm_placement::{
    DecisionPreview, HubPlacement, PlacementEdit, PlacementWorld, PredicateText, editable, edited,
    patch, preview, with_parts_of,
};

/// Which text the keys edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OcmField {
    /// Predicate `n`'s label selector (`n` = the count of predicates: a new one, ORed).
    Labels(usize),
    /// Predicate `n`'s claim selector.
    Claims(usize),
    Tolerations,
    Count,
}

/// Choosing a Placement, or editing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OcmStage {
    Choosing { cursor: usize },
    Editing,
}

/// The editor's state; lives in [`Mode::OcmPlacement`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OcmPlacementEditor {
    pub stage: OcmStage,
    /// The Placement as it was when editing began; the write is guarded by its version.
    pub base: Option<HubPlacement>,
    pub edit: PlacementEdit,
    pub original: PlacementEdit,
    pub field: OcmField,
    /// What is wrong with the input; the last good preview stays meanwhile.
    pub error: Option<String>,
    pub preview: Option<DecisionPreview>,
}

impl OcmPlacementEditor {
    fn choosing(cursor: usize) -> OcmPlacementEditor {
        OcmPlacementEditor {
            stage: OcmStage::Choosing { cursor },
            base: None,
            edit: PlacementEdit::default(),
            original: PlacementEdit::default(),
            field: OcmField::Labels(0),
            error: None,
            preview: None,
        }
    }

    pub fn changed(&self) -> bool {
        self.edit != self.original
    }

    /// Predicates shown: every one being edited, plus an empty one to add (ORed).
    pub fn predicate_slots(&self) -> usize {
        self.edit.predicates.len() + 1
    }

    fn text_mut(&mut self) -> &mut String {
        let slot = match self.field {
            OcmField::Labels(n) | OcmField::Claims(n) => n,
            OcmField::Tolerations => return &mut self.edit.tolerations,
            OcmField::Count => return &mut self.edit.count,
        };
        if slot >= self.edit.predicates.len() {
            self.edit.predicates.push(PredicateText::default());
        }
        let predicate = &mut self.edit.predicates[slot];
        match self.field {
            OcmField::Claims(_) => &mut predicate.claims,
            _ => &mut predicate.labels,
        }
    }

    /// The fields in tab order.
    fn fields(&self) -> Vec<OcmField> {
        (0..self.predicate_slots())
            .flat_map(|n| [OcmField::Labels(n), OcmField::Claims(n)])
            .chain([OcmField::Tolerations, OcmField::Count])
            .collect()
    }

    fn step(&mut self, forward: bool) {
        let fields = self.fields();
        let at = fields.iter().position(|f| *f == self.field).unwrap_or(0);
        let next = if forward {
            (at + 1) % fields.len()
        } else {
            (at + fields.len() - 1) % fields.len()
        };
        self.field = fields[next];
    }
}

/// Where the Placements come from on this hub, or why they cannot be edited.
fn world(state: &State) -> Result<Arc<PlacementWorld>, String> {
    state
        .placements
        .clone()
        .ok_or_else(|| "this hub's Placements have not been read yet".to_string())
}

/// `e` on an OCM hub: edits the Placement the selected row's ManifestWorkReplicaSet follows,
/// or the only Placement; otherwise lets the operator choose one.
pub fn open(state: &mut State) {
    let world = match world(state) {
        Ok(world) => world,
        Err(why) => {
            state.notice = Some(why);
            return;
        }
    };
    if world.placements.is_empty() {
        state.notice =
            Some("no Placement on this hub yet; create one with kubectl, then edit it here".into());
        return;
    }
    let row = state
        .selected_resource()
        .and_then(|r| state.resources.get(r))
        .map(|r| r.target.display_key());
    let followed = row.and_then(|key| {
        world
            .replica_sets
            .iter()
            .find(|set| set.objects.contains(&key))
            .and_then(|set| {
                world.placements.iter().position(|p| {
                    p.namespace() == set.namespace && set.placements.iter().any(|n| n == p.name())
                })
            })
    });
    match followed.or((world.placements.len() == 1).then_some(0)) {
        Some(index) => begin(state, &world, index),
        None => {
            state.mode = Mode::OcmPlacement(Box::new(OcmPlacementEditor::choosing(0)));
        }
    }
}

fn begin(state: &mut State, world: &PlacementWorld, index: usize) {
    let Some(base) = world.placements.get(index).cloned() else {
        return;
    };
    let edit = editable(&base.object);
    let mut editor = OcmPlacementEditor {
        stage: OcmStage::Editing,
        original: edit.clone(),
        edit,
        base: Some(base),
        ..OcmPlacementEditor::choosing(0)
    };
    recompute(world, &mut editor);
    state.mode = Mode::OcmPlacement(Box::new(editor));
}

/// Decides the edited Placement again.
fn recompute(world: &PlacementWorld, editor: &mut OcmPlacementEditor) {
    let Some(base) = &editor.base else {
        return;
    };
    let result = edited(&base.object, &editor.edit)
        .and_then(|object| preview(world, base, &object).map_err(|err| err.to_string()));
    match result {
        Ok(decision) => {
            editor.error = None;
            editor.preview = Some(decision);
        }
        Err(error) => editor.error = Some(error),
    }
}

/// The hub's Placements changed: the preview is decided against them again.
pub fn world_changed(state: &mut State, world: Arc<PlacementWorld>) {
    if let Mode::OcmPlacement(editor) = &mut state.mode {
        recompute(&world, editor);
    }
    state.placements = Some(world);
}

/// Whether the Placement being edited changed on the hub since editing began.
pub fn changed_on_hub(state: &State, editor: &OcmPlacementEditor) -> bool {
    let (Some(base), Some(world)) = (&editor.base, &state.placements) else {
        return false;
    };
    world
        .placements
        .iter()
        .find(|p| p.namespace() == base.namespace() && p.name() == base.name())
        .is_none_or(|p| p.resource_version() != base.resource_version())
}

/// One key in the editor.
pub fn key(state: &mut State, mut editor: Box<OcmPlacementEditor>, key: InputKey) -> Vec<Effect> {
    let world = match world(state) {
        Ok(world) => world,
        Err(why) => {
            state.notice = Some(why);
            return Vec::new();
        }
    };
    match editor.stage {
        OcmStage::Choosing { cursor } => match key {
            InputKey::Esc => return Vec::new(),
            InputKey::Up | InputKey::Char('k') => {
                editor.stage = OcmStage::Choosing {
                    cursor: cursor.saturating_sub(1),
                }
            }
            InputKey::Down | InputKey::Char('j') => {
                editor.stage = OcmStage::Choosing {
                    cursor: (cursor + 1).min(world.placements.len().saturating_sub(1)),
                }
            }
            InputKey::Enter => {
                begin(state, &world, cursor);
                return Vec::new();
            }
            _ => {}
        },
        OcmStage::Editing => match key {
            InputKey::Esc => {
                state.notice = Some("Placement edit cancelled; nothing written".into());
                return Vec::new();
            }
            InputKey::Tab | InputKey::Down => editor.step(true),
            InputKey::Up => editor.step(false),
            InputKey::Enter => {
                if let Some(error) = &editor.error {
                    state.notice = Some(format!("fix the Placement first: {error}"));
                } else if !editor.changed() {
                    state.notice = Some("nothing changed yet".into());
                } else {
                    propose(state, editor);
                    return Vec::new();
                }
            }
            other => {
                if edit_text(editor.text_mut(), other) {
                    recompute(&world, &mut editor);
                }
            }
        },
    }
    state.mode = Mode::OcmPlacement(editor);
    Vec::new()
}

/// From the editor to the confirmation: the decision change, what follows the Placement, and
/// the write it makes.
fn propose(state: &mut State, editor: Box<OcmPlacementEditor>) {
    let (Some(base), Some(decision)) = (&editor.base, &editor.preview) else {
        state.mode = Mode::OcmPlacement(editor);
        return;
    };
    let Ok(after) = edited(&base.object, &editor.edit) else {
        state.mode = Mode::OcmPlacement(editor);
        return;
    };
    let world = state.placements.clone().unwrap_or_default();
    let mut summary = vec![
        format!("write {} to the hub as flotilla", base.title()),
        "(refused if it changed on the hub since you opened it)".to_string(),
    ];
    let entering: Vec<&str> = decision.entering().collect();
    let leaving: Vec<&str> = decision.leaving().collect();
    for cluster in &entering {
        summary.push(format!("+ {cluster} enters the decision"));
    }
    for cluster in &leaving {
        summary.push(format!("- {cluster} leaves the decision"));
    }
    if entering.is_empty() && leaving.is_empty() {
        summary.push("the decision stays as it is".into());
    }
    if !decision.satisfied.0 {
        summary.push(format!(
            "⚠ OCM will report PlacementSatisfied=False ({})",
            decision.satisfied.1
        ));
    }
    for set in world.followers(base) {
        summary.push(format!(
            "ManifestWorkReplicaSet {}/{} follows it:",
            set.namespace, set.name
        ));
        if !entering.is_empty() {
            summary.push(format!(
                "  its ManifestWorks are created for {}",
                entering.join(", ")
            ));
        }
        if !leaving.is_empty() {
            summary.push(format!(
                "  its ManifestWorks for {} are deleted, and OCM's agents remove their objects there",
                leaving.join(", ")
            ));
        }
    }
    let danger = entering
        .iter()
        .chain(&leaving)
        .filter_map(|name| state.clusters.iter().position(|c| &c.spec.name == name))
        .find(|cluster| state.is_dangerous(*cluster))
        .and_then(|cluster| state.clusters.get(cluster))
        .map(|row| row.spec.name.clone());
    state.mode = Mode::Confirm(Box::new(PendingApply {
        confirm_word: danger.unwrap_or_else(|| "y".into()),
        summary,
        placement: Some(PlacementWrite {
            namespace: base.namespace().to_string(),
            name: base.name().to_string(),
            patch: patch(&base.object, &after),
            expect: decision.selected.clone(),
            previous: Some(base.object.clone()),
        }),
        ..PendingApply::default()
    }));
}

/// `u` on an OCM hub: asks to write the last edited Placement's predicates, tolerations and
/// number of clusters back as they were, with the decision change that brings.
pub fn ask_to_undo(state: &mut State) {
    let Some((namespace, name, previous)) = state.last_placement.clone() else {
        state.notice = Some("nothing to undo".into());
        return;
    };
    let Some(world) = state.placements.clone() else {
        return;
    };
    let Some(current) = world
        .placements
        .iter()
        .find(|p| p.namespace() == namespace && p.name() == name)
    else {
        state.notice = Some(format!(
            "Placement {namespace}/{name} is gone from the hub; nothing to undo"
        ));
        return;
    };
    let restored = with_parts_of(&current.object, &previous);
    let decision = match preview(&world, current, &restored) {
        Ok(decision) => decision,
        Err(err) => {
            state.notice = Some(format!("cannot undo: {err}"));
            return;
        }
    };
    let mut summary = vec![format!(
        "undo: write {}'s predicates, tolerations and number of clusters back as they were",
        current.title()
    )];
    summary.extend(
        decision
            .entering()
            .map(|c| format!("+ {c} enters the decision")),
    );
    summary.extend(
        decision
            .leaving()
            .map(|c| format!("- {c} leaves the decision")),
    );
    state.mode = Mode::Confirm(Box::new(PendingApply {
        confirm_word: "y".into(),
        summary,
        placement: Some(PlacementWrite {
            namespace,
            name,
            patch: patch(&current.object, &restored),
            expect: decision.selected,
            previous: None,
        }),
        ..PendingApply::default()
    }));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::app::state::{ClusterRow, ResourceRow};
    use crate::app::{Action, update};
    use crate::config::keymap::KeyCommand;
    use crate::engine::dialect::ocm::{OcmCluster, OcmClusterSet, SetSelector};
    use crate::engine::edit::ocm_placement::ReplicaSetRef;
    use crate::engine::place::selector::LabelSelector;
    use crate::model::{Dialect, ResourceRef};

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
                spec: crate::model::ClusterSpec {
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
        state.hub = Some("Open Cluster Management".into());
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
        state.focus = crate::app::state::Pane::Resources;
        state
    }

    fn keys(state: &mut State, keys: &[InputKey]) -> Vec<Effect> {
        keys.iter()
            .flat_map(|key| update(state, Action::Input(*key)))
            .collect()
    }

    fn typed(text: &str) -> Vec<InputKey> {
        text.chars().map(InputKey::Char).collect()
    }

    #[test]
    fn editing_the_followed_placement_previews_the_move_and_confirming_writes_it() {
        let mut state = ocm_state();
        update(&mut state, Action::Command(KeyCommand::EditPlacement));
        let Mode::OcmPlacement(editor) = &state.mode else {
            panic!("the OCM editor opens: {:?}", state.notice);
        };
        assert_eq!(
            editor.base.as_ref().map(HubPlacement::title).as_deref(),
            Some("Placement apps/web"),
            "the Placement the row's ManifestWorkReplicaSet follows"
        );
        assert_eq!(editor.edit.predicates[0].labels, "env=prod");

        let mut input = vec![InputKey::ClearLine];
        input.extend(typed("env=dev"));
        keys(&mut state, &input);
        let Mode::OcmPlacement(editor) = &state.mode else {
            panic!("still editing");
        };
        let preview = editor.preview.as_ref().unwrap();
        assert_eq!(preview.entering().collect::<Vec<_>>(), ["beta"]);
        assert_eq!(preview.leaving().collect::<Vec<_>>(), ["alpha"]);

        keys(&mut state, &[InputKey::Enter]);
        let Mode::Confirm(pending) = &state.mode else {
            panic!("enter asks first: {:?}", state.notice);
        };
        let summary = pending.summary.join("\n");
        assert!(summary.contains("+ beta enters"), "{summary}");
        assert!(summary.contains("- alpha leaves"), "{summary}");
        assert!(
            summary.contains("ManifestWorkReplicaSet apps/colors follows it")
                && summary.contains("for alpha are deleted"),
            "{summary}"
        );
        let effects = keys(&mut state, &[InputKey::Char('y')]);
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
        let mut state = ocm_state();
        update(&mut state, Action::Command(KeyCommand::Undo));
        assert_eq!(state.notice.as_deref(), Some("nothing to undo"));
        update(&mut state, Action::Command(KeyCommand::EditPlacement));
        let mut input = vec![InputKey::ClearLine];
        input.extend(typed("env=dev"));
        input.extend([InputKey::Enter, InputKey::Char('y')]);
        keys(&mut state, &input);
        // The hub now holds the edit, at a new version, and OCM decided beta.
        if let Some(world) = &mut state.placements {
            let web = &mut Arc::make_mut(world).placements[1];
            web.object = json!({
                "metadata": {"name": "web", "namespace": "apps", "resourceVersion": "8"},
                "spec": {"predicates": [{"requiredClusterSelector": {
                    "labelSelector": {"matchLabels": {"env": "dev"}}}}]}
            });
            web.decided = vec!["beta".into()];
        }
        update(&mut state, Action::Command(KeyCommand::Undo));
        let Mode::Confirm(pending) = &state.mode else {
            panic!("u asks first: {:?}", state.notice);
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
        let effects = keys(&mut state, &[InputKey::Char('y')]);
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
        update(&mut state, Action::Command(KeyCommand::Undo));
        assert_eq!(
            state.notice.as_deref(),
            Some("nothing to undo"),
            "an undo is not undone"
        );
    }

    #[test]
    fn without_a_followed_placement_the_operator_chooses_one_and_bad_text_blocks_enter() {
        let mut state = ocm_state();
        if let Some(world) = &mut state.placements {
            Arc::make_mut(world).replica_sets.clear();
        }
        update(&mut state, Action::Command(KeyCommand::EditPlacement));
        assert!(matches!(
            &state.mode,
            Mode::OcmPlacement(editor) if editor.stage == OcmStage::Choosing { cursor: 0 }
        ));
        keys(&mut state, &[InputKey::Down, InputKey::Enter]);
        let Mode::OcmPlacement(editor) = &state.mode else {
            panic!("editing");
        };
        assert_eq!(editor.base.as_ref().unwrap().name(), "web");

        // Tab to the new predicate's labels, then to tolerations: a Karmada effect is refused.
        let mut input = vec![InputKey::Tab, InputKey::Tab, InputKey::Tab, InputKey::Tab];
        input.extend(typed("gpu:NoSchedule"));
        input.push(InputKey::Enter);
        keys(&mut state, &input);
        let Mode::OcmPlacement(editor) = &state.mode else {
            panic!("still editing: {:?}", state.notice);
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
            state
                .notice
                .as_deref()
                .unwrap_or_default()
                .starts_with("fix the Placement first")
        );
        keys(&mut state, &[InputKey::Esc]);
        assert_eq!(state.mode, Mode::Normal);
    }

    #[test]
    fn a_on_a_hub_without_reschedule_says_why() {
        let mut state = ocm_state();
        state.cannot_edit.reschedule = Some("nothing to reschedule on OCM".into());
        update(&mut state, Action::Command(KeyCommand::Apply));
        assert_eq!(state.mode, Mode::Normal);
        assert_eq!(
            state.notice.as_deref(),
            Some("nothing to reschedule on OCM")
        );
    }
}
