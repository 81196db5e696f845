//! The Open Cluster Management Placement editor's keys (its data is `state::ocm_placement`):
//! choose one of the hub's Placements, edit its predicates (label and claim selectors, ORed
//! across predicates), tolerations and number of clusters as text; every keystroke decides the
//! edited Placement again, offline, and shows which clusters enter, leave, stay or stay out
//! and why. Enter asks for a confirmation that lists the decision change and the
//! ManifestWorkReplicaSets that follow it. Its commands are the `ocm-placement` key map
//! section's ([`command`]); what is typed into a field comes through [`key`].
//! It must not talk to the hub: the write is an effect the operator confirms.

use std::sync::Arc;

use super::action::InputKey;
use super::state::ocm_placement::{OcmPlacementEditor, OcmStage};
use super::state::{Mode, PendingApply, PlacementWrite, State};
use super::text_input::edit_text;
use crate::config::keymap::ViewCommand;
use crate::engine::edit::ocm_placement::{
    PlacementWorld, editable, edited, patch, preview, with_parts_of,
};
use crate::messages::Effect;

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
    editor.revision += 1;
    state.mode = Mode::OcmPlacement(Box::new(editor));
}

/// Decides the edited Placement again when the edit or the hub's Placements changed since
/// the last preview (the same protocol as the other editors); cheap otherwise.
pub fn refresh(state: &mut State) {
    let Some(world) = state.placements.clone() else {
        return;
    };
    if let Mode::OcmPlacement(editor) = &mut state.mode
        && editor.stage == OcmStage::Editing
        && editor.previewed != editor.revision
    {
        recompute(&world, editor);
        editor.previewed = editor.revision;
    }
}

/// Decides the edited Placement again.
fn recompute(world: &PlacementWorld, editor: &mut OcmPlacementEditor) {
    let Some(base) = &editor.base else {
        return;
    };
    let result = edited(&base.object, &editor.edit)
        .map_err(|err| err.to_string())
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
        editor.revision += 1;
    }
    state.placements = Some(world);
}

/// A command of the `ocm-placement` section: on the list of Placements, or in the fields.
pub fn command(
    state: &mut State,
    mut editor: Box<OcmPlacementEditor>,
    command: ViewCommand,
) -> Vec<Effect> {
    let world = match world(state) {
        Ok(world) => world,
        Err(why) => {
            state.notice = Some(why);
            return Vec::new();
        }
    };
    match editor.stage {
        OcmStage::Choosing { cursor } => match command {
            ViewCommand::Back => return Vec::new(),
            ViewCommand::Up => {
                editor.stage = OcmStage::Choosing {
                    cursor: cursor.saturating_sub(1),
                }
            }
            ViewCommand::Down => {
                editor.stage = OcmStage::Choosing {
                    cursor: (cursor + 1).min(world.placements.len().saturating_sub(1)),
                }
            }
            ViewCommand::Confirm => {
                begin(state, &world, cursor);
                return Vec::new();
            }
            _ => {}
        },
        OcmStage::Editing => match command {
            ViewCommand::Back => {
                state.notice = Some("Placement edit cancelled; nothing written".into());
                return Vec::new();
            }
            ViewCommand::NextField | ViewCommand::Down => editor.step(true),
            ViewCommand::Up => editor.step(false),
            ViewCommand::Confirm => {
                if let Some(error) = &editor.error {
                    state.notice = Some(format!("fix the Placement first: {error}"));
                } else if !editor.changed() {
                    state.notice = Some("nothing changed yet".into());
                } else {
                    propose(state, editor);
                    return Vec::new();
                }
            }
            _ => {}
        },
    }
    state.mode = Mode::OcmPlacement(editor);
    Vec::new()
}

/// A key typed into the focused field (every field is text; the list takes none).
pub fn key(state: &mut State, mut editor: Box<OcmPlacementEditor>, key: InputKey) -> Vec<Effect> {
    if let Err(why) = world(state) {
        state.notice = Some(why);
        return Vec::new();
    }
    if editor.stage == OcmStage::Editing && edit_text(editor.text_mut(), key) {
        editor.revision += 1;
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
