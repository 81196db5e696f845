//! The placement editor's keys and engine work (its data is `state::placement_editor`): where
//! the selected resource goes, edited as an explicit cluster list and a label selector (either
//! dialect), with a live preview of the clusters entering and leaving — and why every other
//! cluster stays out — then, on enter, a review of the rendered diffs grouped across clusters
//! before anything is written. Its sections' commands (`placement`, `editor`) go through
//! [`command`] and typed text through [`key`] (both pure); the engine work happens in
//! [`refresh`], outside `update`, because it needs the fleet and its source files. It must not
//! write a file or talk to a cluster: saving and propagating are an effect the operator
//! confirms.

use super::action::InputKey;
use super::review::{NEW_SINCE_START, cells_of, dry_run_of, not_ready};
use super::state::FleetSave;
use super::state::placement_editor::{Field, PlacementEditor, Stage, review_rows};
use super::state::review::jump;
use super::state::{LastChange, Mode, PendingApply, Reopen, State};
use super::text_input::edit_text;
use crate::config::keymap::ViewCommand;
use crate::engine::edit::placement::{
    DiffGroup, PlacementPreview, parse_field_selector, parse_replicas, parse_selector,
    parse_tolerations, preview_placement,
};
use crate::engine::{Fleet, SourceFile};
use crate::messages::{CellRef, Effect};

/// Opens the editor on the selected resource (the engine fills it in on the next refresh).
pub fn open(state: &mut State) {
    if let Some(why) = &state.cannot_edit.placements {
        state.notice = Some(why.clone());
        return;
    }
    if state.readonly {
        state.notice = Some("read-only: placements cannot be edited".into());
        return;
    }
    if state.placements.is_some() {
        super::ocm_placement::open(state);
        return;
    }
    let Some(resource) = state.resource_view.selected() else {
        state.notice = Some("select a federated resource to edit its placement".into());
        return;
    };
    let mut editor = PlacementEditor::new(resource);
    editor.hub = state.hub;
    state.mode = Mode::Placement(Box::new(editor));
}

/// Loads the placement's source and recomputes a stale preview. Returns whether anything
/// changed. Cheap when nothing did.
pub fn refresh(state: &mut State, fleet: &Fleet, files: &[SourceFile]) -> bool {
    let Mode::Placement(editor) = &mut state.mode else {
        return false;
    };
    if editor.source.is_none() && editor.resource >= fleet.resources.len() {
        state.mode = Mode::Normal;
        state.notice = Some(NEW_SINCE_START.into());
        return true;
    }
    if editor.source.is_none() {
        match fleet.placement_source(files, editor.resource) {
            Ok(source) => {
                editor.edit = source.editable();
                editor.original = editor.edit.clone();
                editor.source = Some(source);
            }
            Err(reason) => {
                state.mode = Mode::Normal;
                state.notice = Some(format!("cannot edit this placement: {reason}"));
                return true;
            }
        }
    }
    if editor.previewed == editor.revision {
        return false;
    }
    editor.previewed = editor.revision;
    let Some(source) = &editor.source else {
        return false;
    };
    match source.with(&editor.edit) {
        Ok(object) => {
            let preview = preview_placement(fleet, files, source, &object);
            editor.error = preview.errors.first().map(|e| e.to_string());
            editor.preview = Some(preview);
        }
        Err(error) => {
            editor.error = Some(error.to_string());
            editor.preview = None;
        }
    }
    true
}

/// A command of the review's section (`editor`) or, editing, of the `placement` section: on
/// the cluster list every one, in a text field only those that leave it (back, next field,
/// review).
pub fn command(
    state: &mut State,
    mut editor: Box<PlacementEditor>,
    command: ViewCommand,
) -> Vec<Effect> {
    match editor.stage {
        Stage::Reviewing {
            scroll,
            side_by_side,
        } => {
            let rows = review_rows(&editor);
            let last = rows.len().saturating_sub(1);
            let scroll = match command {
                ViewCommand::Back => {
                    editor.stage = Stage::Editing;
                    state.mode = Mode::Placement(editor);
                    return Vec::new();
                }
                ViewCommand::Save => return propose(state, editor),
                ViewCommand::OwnPolicy => return propose_own_policy(state, editor),
                ViewCommand::Up => scroll.saturating_sub(1),
                ViewCommand::Down => (scroll + 1).min(last),
                ViewCommand::NextChange => jump(&rows, scroll, true),
                ViewCommand::PrevChange => jump(&rows, scroll, false),
                _ => scroll,
            };
            let side_by_side = side_by_side ^ (command == ViewCommand::SideBySide);
            editor.stage = Stage::Reviewing {
                scroll,
                side_by_side,
            };
        }
        Stage::Editing => match command {
            ViewCommand::Back => {
                state.notice = Some("placement edit cancelled; nothing written".into());
                return Vec::new();
            }
            ViewCommand::NextField => {
                let dialect = editor.source.as_ref().map(|source| source.dialect);
                editor.field = editor.field.next(dialect);
            }
            ViewCommand::Review => {
                let not_ready = not_ready(
                    "placement",
                    editor.error.as_ref(),
                    editor.changed(),
                    editor.preview_is_current(),
                );
                if let Some(notice) = not_ready {
                    state.notice = Some(notice);
                } else {
                    editor.stage = Stage::Reviewing {
                        scroll: 0,
                        side_by_side: false,
                    };
                    let effects = ask_for_dry_run(state, &mut editor);
                    state.mode = Mode::Placement(editor);
                    return effects;
                }
            }
            command if editor.field == Field::Clusters => {
                cluster_command(state, &mut editor, command)
            }
            _ => {}
        },
    }
    state.mode = Mode::Placement(editor);
    Vec::new()
}

/// A key typed into the focused text field (the cluster list and the review take none).
pub fn key(state: &mut State, mut editor: Box<PlacementEditor>, key: InputKey) -> Vec<Effect> {
    if editor.stage == Stage::Editing && editor.field != Field::Clusters {
        text_key(&mut editor, key);
    }
    state.mode = Mode::Placement(editor);
    Vec::new()
}

/// A command of the placement section on the cluster list.
fn cluster_command(state: &State, editor: &mut PlacementEditor, command: ViewCommand) {
    let count = state.clusters.len();
    match command {
        ViewCommand::Up => editor.cursor = editor.cursor.saturating_sub(1),
        ViewCommand::Down => editor.cursor = (editor.cursor + 1).min(count.saturating_sub(1)),
        ViewCommand::Toggle => {
            if let Some(row) = state.clusters.get(editor.cursor) {
                let name = row.spec.name.clone();
                if !editor.edit.clusters.remove(&name) {
                    editor.edit.clusters.insert(name);
                }
                editor.revision += 1;
            }
        }
        _ => {}
    }
}

/// Typing into the focused text field.
fn text_key(editor: &mut PlacementEditor, key: InputKey) {
    let text = match editor.field {
        Field::Fields => &mut editor.edit.fields,
        Field::Tolerations => &mut editor.edit.tolerations,
        Field::Replicas => &mut editor.edit.replicas,
        Field::Selector | Field::Clusters => &mut editor.edit.selector,
    };
    if edit_text(text, key) {
        editor.revision += 1;
        // Typing errors show at once; the engine's verdict follows with the preview.
        editor.error = match editor.field {
            Field::Fields => parse_field_selector(&editor.edit.fields).err(),
            Field::Tolerations => parse_tolerations(&editor.edit.tolerations).err(),
            Field::Replicas => parse_replicas(&editor.edit.replicas).err(),
            Field::Selector | Field::Clusters => parse_selector(&editor.edit.selector).err(),
        }
        .map(|err| err.to_string());
    }
}

/// Asks the backend to dry-run the edited objects on their clusters (live clusters answer;
/// simulated ones do not, and the offline diff stays).
fn ask_for_dry_run(state: &State, editor: &mut PlacementEditor) -> Vec<Effect> {
    editor.dry_run.clear();
    let Some(preview) = &editor.preview else {
        return Vec::new();
    };
    let (asked, effects) = dry_run_of(
        state,
        preview.fleet.as_ref(),
        &preview.diffs,
        editor.revision,
    );
    editor.dry_run_clusters = asked;
    effects
}

/// From the review to the confirmation: the same popup as `a`, carrying the document to save.
fn propose(state: &mut State, editor: Box<PlacementEditor>) -> Vec<Effect> {
    let (Some(source), Some(preview)) = (&editor.source, &editor.preview) else {
        state.mode = Mode::Placement(editor);
        return Vec::new();
    };
    let Ok(object) = source.with(&editor.edit) else {
        state.mode = Mode::Placement(editor);
        return Vec::new();
    };
    let cells = cells_to_apply(state, preview, |_| true);
    let created = cells_to_apply(state, preview, |group| group.created);
    let reapply = cells_to_apply(state, preview, |group| !group.created);
    let mut summary = vec![format!(
        "save {} ({}:{})",
        source.title, source.file, source.line
    )];
    for change in preview.entering() {
        summary.push(format!("+ {} enters", change.cluster));
    }
    for change in preview.leaving() {
        summary.push(format!(
            "- {} leaves: {}",
            change.cluster,
            crate::model::leaving(editor.hub)
        ));
    }
    // A shared policy's edit changes its other resources too: the confirmation says so.
    let edited = state
        .fleet
        .resources
        .get(editor.resource)
        .map(|resource| resource.target.clone());
    if let Some(edited) = edited {
        let count = preview.others(&edited).count();
        let named: Vec<String> = preview
            .others(&edited)
            .take(3)
            .map(|other| other.resource.display_key())
            .collect();
        if count > 0 {
            summary.push(format!(
                "also changes {count} other resource(s) {} places: {}{}",
                source.title,
                named.join(", "),
                if count > named.len() { ", …" } else { "" }
            ));
        }
    }
    summary.push(format!(
        "{} object(s) created, {} updated",
        preview.created, preview.updated
    ));
    // Typing a danger-class cluster's name is required when the edit writes to one.
    let danger = cells
        .iter()
        .map(|cell| cell.cluster as usize)
        .find(|cluster| state.is_dangerous(*cluster))
        .and_then(|cluster| state.clusters.get(cluster))
        .map(|row| row.spec.name.clone());
    let confirm_word = danger.unwrap_or_else(|| "y".into());
    state.mode = Mode::Confirm(Box::new(PendingApply {
        cells,
        summary,
        confirm_word,
        typed: String::new(),
        save: Some(FleetSave {
            file: source.file.clone(),
            document: source.document,
            object,
            title: source.title.clone(),
            reopen: Some(Reopen::Placement),
        }),
        delete: Vec::new(),
        undo: Some(LastChange {
            title: source.title.clone(),
            previous: FleetSave {
                file: source.file.clone(),
                document: source.document,
                object: source.object.clone(),
                title: source.title.clone(),
                reopen: None,
            },
            reapply,
            created,
        }),
        placement: None,
        reload: None,
        waves: false,
    }));
    Vec::new()
}

/// Asks to save the edited placement as a new policy of the resource's own (see
/// `engine::edit::placement::own_policy`): the shared policy and its other resources are left
/// as they are; only the edited resource's objects are applied. Fleet directories and the demo
/// only.
fn propose_own_policy(state: &mut State, editor: Box<PlacementEditor>) -> Vec<Effect> {
    let refuse = |state: &mut State, editor: Box<PlacementEditor>, why: String| {
        state.notice = Some(why);
        state.mode = Mode::Placement(editor);
        Vec::new()
    };
    let (Some(source), Some(preview)) = (&editor.source, &editor.preview) else {
        state.mode = Mode::Placement(editor);
        return Vec::new();
    };
    if state.hub.is_some() {
        let why = "on a hub, create the policy with kubectl; o works on fleet directories".into();
        return refuse(state, editor, why);
    }
    let Some(target) = state
        .fleet
        .resources
        .get(editor.resource)
        .map(|resource| resource.target.clone())
    else {
        state.mode = Mode::Placement(editor);
        return Vec::new();
    };
    if preview.sharing <= 1 {
        let why = format!(
            "{} places only {} already: enter saves the edit",
            source.title,
            target.display_key()
        );
        return refuse(state, editor, why);
    }
    let policy = match source.with(&editor.edit).and_then(|object| {
        crate::engine::edit::placement::own_policy(&state.fleet, source, &object, &target)
    }) {
        Ok(policy) => policy,
        Err(why) => return refuse(state, editor, why.to_string()),
    };
    let name = policy["metadata"]["name"].as_str().unwrap_or_default();
    let title = match &target.namespace {
        Some(ns) => format!(
            "{} {ns}/{name}",
            policy["kind"].as_str().unwrap_or_default()
        ),
        None => format!("{} {name}", policy["kind"].as_str().unwrap_or_default()),
    };
    let document = state
        .files
        .iter()
        .find(|file| file.path == source.file)
        .map_or(0, |file| {
            crate::engine::document::parse::document_spans(&file.text).len()
        });
    let cells = cells_to_apply(state, preview, |group| group.resource == target);
    let mut summary = vec![format!(
        "save a new {title} ({}) for {} alone",
        source.file,
        target.display_key()
    )];
    if let Some(change) = preview.change_of(&target) {
        summary.extend(change.gained.iter().map(|c| format!("+ {c} enters")));
        summary.extend(
            change
                .lost
                .iter()
                .map(|c| format!("- {c} leaves: {}", crate::model::leaving(editor.hub))),
        );
    }
    summary.push(format!(
        "{} keeps placing its {} other resource(s) as it does",
        source.title,
        preview.sharing - 1
    ));
    // Typing a danger-class cluster's name is required when the edit writes to one.
    let confirm_word = cells
        .iter()
        .map(|cell| cell.cluster as usize)
        .find(|cluster| state.is_dangerous(*cluster))
        .and_then(|cluster| state.clusters.get(cluster))
        .map_or_else(|| "y".into(), |row| row.spec.name.clone());
    state.mode = Mode::Confirm(Box::new(PendingApply {
        cells,
        summary,
        confirm_word,
        typed: String::new(),
        save: Some(FleetSave {
            file: source.file.clone(),
            document,
            object: policy,
            title,
            reopen: None,
        }),
        delete: Vec::new(),
        undo: None,
        placement: None,
        reload: None,
        waves: false,
    }));
    Vec::new()
}

/// The cells of the diff groups `take` selects: each changed object on its cluster.
fn cells_to_apply(
    state: &State,
    preview: &PlacementPreview,
    take: impl Fn(&DiffGroup) -> bool,
) -> Vec<CellRef> {
    cells_of(state, &preview.diffs, take)
}

/// Asks to undo the last placement change: the document goes back, the objects it changed are
/// re-applied as they were, and the objects it created are deleted — each listed first.
pub fn ask_to_undo(state: &mut State) {
    if state.readonly {
        state.notice = Some("read-only: nothing can be undone here".into());
        return;
    }
    if state.placements.is_some() {
        super::ocm_placement::ask_to_undo(state);
        return;
    }
    let Some(change) = state.last_change.clone() else {
        state.notice = Some("nothing to undo".into());
        return;
    };
    let name = |cell: &CellRef| {
        let resource = state
            .resources
            .get(cell.resource as usize)
            .map(|r| r.target.display_key())
            .unwrap_or_default();
        let cluster = state
            .clusters
            .get(cell.cluster as usize)
            .map(|c| c.spec.name.clone())
            .unwrap_or_default();
        format!("{resource} on {cluster}")
    };
    let mut summary = vec![format!(
        "undo: restore {} in {} as it was",
        change.title, change.previous.file
    )];
    summary.push(format!(
        "re-apply {} object(s) as they were",
        change.reapply.len()
    ));
    if !change.created.is_empty() {
        summary.push(format!(
            "delete {} object(s) the change created:",
            change.created.len()
        ));
        summary.extend(
            change
                .created
                .iter()
                .map(|cell| format!("  - {}", name(cell))),
        );
    }
    let danger = change
        .reapply
        .iter()
        .chain(&change.created)
        .map(|cell| cell.cluster as usize)
        .find(|cluster| state.is_dangerous(*cluster))
        .and_then(|cluster| state.clusters.get(cluster))
        .map(|row| row.spec.name.clone());
    state.mode = Mode::Confirm(Box::new(PendingApply {
        cells: change.reapply.clone(),
        summary,
        confirm_word: danger.unwrap_or_else(|| "y".into()),
        save: Some(change.previous.clone()),
        delete: change.created.clone(),
        ..PendingApply::default()
    }));
}
