//! The placement editor: where the selected resource goes, edited as an explicit cluster list
//! and a label selector (either dialect), with a live preview of the clusters entering and
//! leaving — and why every other cluster stays out — then, on enter, a review of the rendered
//! diffs grouped across clusters before anything is written. Keys go through [`key`] (pure);
//! the engine work happens in [`refresh`], outside `update`, because it needs the fleet and its
//! source files. It must not write a file or talk to a cluster: saving and propagating are an
//! effect the operator confirms.

use std::collections::BTreeSet;

use super::action::InputKey;
use super::state::{LastChange, Mode, PendingApply, State};
use crate::backend::propagate::PlanItem;
use crate::backend::{CellRef, Effect, FleetSave, SharedFleet};
use crate::engine::edit::placement::{
    DiffGroup, EditablePlacement, PlacementPreview, PlacementSource, parse_field_selector,
    parse_replicas, parse_selector, parse_tolerations, preview_placement,
};
use crate::engine::{Fleet, SourceFile};

/// Which part of the placement the keys edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Field {
    #[default]
    Clusters,
    Selector,
    /// Karmada only.
    Fields,
    /// Karmada only.
    Tolerations,
    /// Karmada only.
    Replicas,
}

impl Field {
    /// The next field tab moves to; KubeFed placements have only clusters and a selector.
    fn next(self, dialect: Option<crate::model::Dialect>) -> Field {
        let karmada = dialect == Some(crate::model::Dialect::Karmada);
        match self {
            Field::Clusters => Field::Selector,
            Field::Selector if karmada => Field::Fields,
            Field::Fields => Field::Tolerations,
            Field::Tolerations => Field::Replicas,
            Field::Selector | Field::Replicas => Field::Clusters,
        }
    }
}

/// Editing, or reviewing the diffs before confirming.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stage {
    #[default]
    Editing,
    Reviewing {
        /// First review row shown.
        scroll: usize,
        /// Old and new side by side instead of one unified column.
        side_by_side: bool,
    },
}

/// One row of the review: what the preview does, then each diff group's hunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewRow {
    /// A line about the whole change (a cluster leaving, nothing changing).
    Note(String),
    /// `Kind/ns/name on a, b: identical`.
    Group(String),
    /// `@@ -1,3 +1,4 @@`, where `n`/`p` jump to.
    Hunk(String),
    Context(String),
    Removed(String),
    Added(String),
}

/// The review's rows, in order; the view draws them and `n`/`p` jump between their hunks.
/// The clusters' server-side dry run replaces the offline render diff as answers arrive.
pub fn review_rows(editor: &PlacementEditor) -> Vec<ReviewRow> {
    let Some(preview) = &editor.preview else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    for change in preview.leaving() {
        rows.push(ReviewRow::Note(format!(
            "{} leaves; its objects stay on it (prune with `flotilla apply --prune`)",
            change.cluster
        )));
    }
    rows.extend(diff_review_rows(
        &preview.diffs,
        &editor.dry_run,
        editor.dry_run_clusters,
    ));
    rows
}

/// The rows of an edit's diffs: the offline render diff until the clusters' dry run answers,
/// then the servers' own diffs, each grouped across clusters by identical content. Shared by
/// the placement and override editors.
pub fn diff_review_rows(diffs: &[DiffGroup], dry_run: &[PlanItem], asked: usize) -> Vec<ReviewRow> {
    let mut rows = Vec::new();
    if diffs.is_empty() {
        rows.push(ReviewRow::Note("no rendered object changes".into()));
        return rows;
    }
    if dry_run.is_empty() {
        rows.push(ReviewRow::Note(
            "offline render diff; each cluster's server-side dry run replaces it as it answers"
                .into(),
        ));
        for group in diffs {
            rows.push(ReviewRow::Group(group_title(
                &group.resource.display_key(),
                &group.clusters,
                None,
            )));
            push_diff(&mut rows, &group.diff);
        }
        return rows;
    }
    let answered: BTreeSet<&str> = dry_run.iter().map(|item| item.cluster.as_str()).collect();
    rows.push(ReviewRow::Note(format!(
        "server-side dry run: {} of {asked} cluster(s) answered",
        answered.len(),
    )));
    let mut groups: std::collections::BTreeMap<(String, &str, &str, &str), Vec<String>> =
        std::collections::BTreeMap::new();
    for item in dry_run {
        groups
            .entry((
                item.resource.display_key(),
                item.action.as_str(),
                item.diff.as_str(),
                item.message.as_str(),
            ))
            .or_default()
            .push(item.cluster.clone());
    }
    for ((resource, action, diff, message), clusters) in groups {
        rows.push(ReviewRow::Group(group_title(
            &resource,
            &clusters,
            Some(action),
        )));
        if !message.is_empty() {
            rows.push(ReviewRow::Note(message.to_string()));
        }
        push_diff(&mut rows, diff);
    }
    rows
}

fn group_title(resource: &str, clusters: &[String], action: Option<&str>) -> String {
    let identical = if clusters.len() > 1 {
        ": identical"
    } else {
        ""
    };
    let action = action.map(|a| format!(" · {a}")).unwrap_or_default();
    format!("{resource} on {}{identical}{action}", clusters.join(", "))
}

fn push_diff(rows: &mut Vec<ReviewRow>, diff: &str) {
    for line in diff.lines() {
        if line.starts_with("+++") || line.starts_with("---") {
            continue;
        }
        rows.push(if line.starts_with("@@") {
            ReviewRow::Hunk(line.to_string())
        } else if let Some(rest) = line.strip_prefix('+') {
            ReviewRow::Added(rest.to_string())
        } else if let Some(rest) = line.strip_prefix('-') {
            ReviewRow::Removed(rest.to_string())
        } else {
            ReviewRow::Context(line.strip_prefix(' ').unwrap_or(line).to_string())
        });
    }
}

/// The row of the next (or previous) hunk or group header from `scroll`.
pub fn jump(rows: &[ReviewRow], scroll: usize, forward: bool) -> usize {
    let is_stop = |row: &ReviewRow| matches!(row, ReviewRow::Hunk(_) | ReviewRow::Group(_));
    if forward {
        rows.iter()
            .enumerate()
            .skip(scroll + 1)
            .find(|(_, row)| is_stop(row))
            .map_or(scroll, |(at, _)| at)
    } else {
        rows.iter()
            .enumerate()
            .take(scroll)
            .rev()
            .find(|(_, row)| is_stop(row))
            .map_or(0, |(at, _)| at)
    }
}

/// The editor's state; lives in [`Mode::Placement`].
#[derive(Debug, Clone, Default)]
pub struct PlacementEditor {
    pub resource: usize,
    /// Filled in by [`refresh`] from the fleet's files.
    pub source: Option<PlacementSource>,
    pub field: Field,
    /// Row of the cluster list (fleet cluster order).
    pub cursor: usize,
    pub edit: EditablePlacement,
    pub original: EditablePlacement,
    /// What is wrong with the current input, shown inline; nothing is previewed meanwhile.
    pub error: Option<String>,
    pub preview: Option<PlacementPreview>,
    /// Bumped by every edit; the preview belongs to `previewed`.
    pub revision: u64,
    pub previewed: u64,
    pub stage: Stage,
    /// The clusters' server-side dry run of the edit under review, as answers arrive.
    pub dry_run: Vec<PlanItem>,
    /// How many clusters were asked.
    pub dry_run_clusters: usize,
}

impl PartialEq for PlacementEditor {
    fn eq(&self, other: &Self) -> bool {
        self.resource == other.resource
            && self.revision == other.revision
            && self.previewed == other.previewed
            && self.field == other.field
            && self.cursor == other.cursor
            && self.edit == other.edit
            && self.error == other.error
            && self.stage == other.stage
    }
}

impl Eq for PlacementEditor {}

impl PlacementEditor {
    pub fn new(resource: usize) -> PlacementEditor {
        PlacementEditor {
            resource,
            revision: 1,
            ..PlacementEditor::default()
        }
    }

    pub fn changed(&self) -> bool {
        self.edit != self.original
    }

    /// Whether the preview shown belongs to the current input.
    pub fn preview_is_current(&self) -> bool {
        self.previewed == self.revision && self.preview.is_some()
    }
}

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
    state.mode = Mode::Placement(Box::new(PlacementEditor::new(resource)));
}

/// Loads the placement's source and recomputes a stale preview. Returns whether anything
/// changed. Cheap when nothing did.
pub fn refresh(state: &mut State, fleet: &Fleet, files: &[SourceFile]) -> bool {
    let Mode::Placement(editor) = &mut state.mode else {
        return false;
    };
    if editor.source.is_none() && editor.resource >= fleet.resources.len() {
        state.mode = Mode::Normal;
        state.notice = Some(super::NEW_SINCE_START.into());
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
            editor.error = Some(error);
            editor.preview = None;
        }
    }
    true
}

/// One key in the editor.
pub fn key(state: &mut State, mut editor: Box<PlacementEditor>, key: InputKey) -> Vec<Effect> {
    match editor.stage {
        Stage::Reviewing {
            scroll,
            side_by_side,
        } => {
            let rows = review_rows(&editor);
            let last = rows.len().saturating_sub(1);
            let scroll = match key {
                InputKey::Esc => {
                    editor.stage = Stage::Editing;
                    state.mode = Mode::Placement(editor);
                    return Vec::new();
                }
                InputKey::Enter | InputKey::Char('y') => return propose(state, editor),
                InputKey::Up | InputKey::Char('k') => scroll.saturating_sub(1),
                InputKey::Down | InputKey::Char('j') => (scroll + 1).min(last),
                InputKey::Char('n') => jump(&rows, scroll, true),
                InputKey::Char('p') => jump(&rows, scroll, false),
                _ => scroll,
            };
            let side_by_side = side_by_side ^ (key == InputKey::Char('s'));
            editor.stage = Stage::Reviewing {
                scroll,
                side_by_side,
            };
        }
        Stage::Editing => match key {
            InputKey::Esc => {
                state.notice = Some("placement edit cancelled; nothing written".into());
                return Vec::new();
            }
            InputKey::Tab => {
                let dialect = editor.source.as_ref().map(|source| source.dialect);
                editor.field = editor.field.next(dialect);
            }
            InputKey::Enter => {
                if let Some(error) = &editor.error {
                    state.notice = Some(format!("fix the placement first: {error}"));
                } else if !editor.changed() {
                    state.notice = Some("nothing changed yet".into());
                } else if !editor.preview_is_current() {
                    state.notice = Some("the preview is still being computed".into());
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
            other => match editor.field {
                Field::Clusters => cluster_key(state, &mut editor, other),
                Field::Selector | Field::Fields | Field::Tolerations | Field::Replicas => {
                    text_key(&mut editor, other)
                }
            },
        },
    }
    state.mode = Mode::Placement(editor);
    Vec::new()
}

fn cluster_key(state: &State, editor: &mut PlacementEditor, key: InputKey) {
    let count = state.clusters.len();
    match key {
        InputKey::Up | InputKey::Char('k') => editor.cursor = editor.cursor.saturating_sub(1),
        InputKey::Down | InputKey::Char('j') => {
            editor.cursor = (editor.cursor + 1).min(count.saturating_sub(1))
        }
        InputKey::Char(' ') => {
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
    let changed = match key {
        InputKey::Char(c) => {
            text.push(c);
            true
        }
        InputKey::Backspace => text.pop().is_some(),
        InputKey::ClearLine => {
            let had = !text.is_empty();
            text.clear();
            had
        }
        _ => false,
    };
    if changed {
        editor.revision += 1;
        // Typing errors show at once; the engine's verdict follows with the preview.
        editor.error = match editor.field {
            Field::Fields => parse_field_selector(&editor.edit.fields).err(),
            Field::Tolerations => parse_tolerations(&editor.edit.tolerations).err(),
            Field::Replicas => parse_replicas(&editor.edit.replicas).err(),
            Field::Selector | Field::Clusters => parse_selector(&editor.edit.selector).err(),
        };
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

/// The dry run an edit under review asks for — the cells its diffs change, rendered from the
/// edited fleet — and how many clusters it asks. Shared by the placement and override editors.
pub fn dry_run_of(
    state: &State,
    fleet: Option<&std::sync::Arc<Fleet>>,
    diffs: &[DiffGroup],
    revision: u64,
) -> (usize, Vec<Effect>) {
    let Some(fleet) = fleet else {
        return (0, Vec::new());
    };
    let cells = cells_of(state, diffs, |_| true);
    let asked = cells
        .iter()
        .map(|cell| cell.cluster)
        .collect::<BTreeSet<_>>()
        .len();
    if cells.is_empty() {
        return (asked, Vec::new());
    }
    (
        asked,
        vec![Effect::DryRun {
            fleet: SharedFleet(fleet.clone()),
            cells,
            revision,
        }],
    )
}

/// A dry-run answer from one cluster, kept when it belongs to the edit under review.
pub fn dry_run_answered(state: &mut State, revision: u64, items: Vec<PlanItem>) {
    match &mut state.mode {
        Mode::Placement(editor)
            if editor.revision == revision && matches!(editor.stage, Stage::Reviewing { .. }) =>
        {
            editor.dry_run.extend(items);
        }
        Mode::Overrides(editor) => super::overrides::dry_run_answered(editor, revision, items),
        _ => {}
    }
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
            "- {} leaves (its objects stay; prune with `flotilla apply --prune`)",
            change.cluster
        ));
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
        }),
        delete: Vec::new(),
        undo: Some(LastChange {
            title: source.title.clone(),
            previous: FleetSave {
                file: source.file.clone(),
                document: source.document,
                object: source.object.clone(),
                title: source.title.clone(),
            },
            reapply,
            created,
        }),
        placement: None,
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

/// The cells of the diff groups `take` selects, in the console's rows and columns.
pub fn cells_of(
    state: &State,
    diffs: &[DiffGroup],
    take: impl Fn(&DiffGroup) -> bool,
) -> Vec<CellRef> {
    let mut cells = BTreeSet::new();
    for group in diffs.iter().filter(|group| take(group)) {
        let Some(resource) = state
            .resources
            .iter()
            .position(|r| r.target == group.resource)
        else {
            continue;
        };
        for name in &group.clusters {
            if let Some(cluster) = state.clusters.iter().position(|c| &c.spec.name == name) {
                cells.insert(CellRef {
                    resource: resource as u32,
                    cluster: cluster as u32,
                });
            }
        }
    }
    cells.into_iter().collect()
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
        typed: String::new(),
        save: Some(change.previous.clone()),
        delete: change.created.clone(),
        undo: None,
        placement: None,
        waves: false,
    }));
}
