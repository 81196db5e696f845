//! What the placement and override editors share when an edit goes to review: the cells its
//! diffs change, the clusters' server-side dry run it asks for, and the answers as they arrive
//! for the edit under review. It must not write or talk to a cluster: the dry run is an
//! effect.

use std::collections::BTreeSet;

use super::state::override_editor;
use super::state::placement_editor::Stage;
use super::state::{Mode, State};
use crate::engine::Fleet;
use crate::engine::edit::placement::DiffGroup;
use crate::messages::PlanItem;
use crate::messages::{CellRef, Effect, SharedFleet};

/// Why an editor cannot open on a row the hub gained after the console loaded its fleet.
pub const NEW_SINCE_START: &str =
    "this row is new on the hub since the console started: reopen the console to edit it";

/// Why an edit cannot go to review yet — the notice to show — or `None` when it can: its
/// `error`, no change, or a preview not yet computed for the latest change.
pub fn not_ready(
    what: &str,
    error: Option<&String>,
    changed: bool,
    preview_current: bool,
) -> Option<String> {
    if let Some(error) = error {
        Some(format!("fix the {what} first: {error}"))
    } else if !changed {
        Some("nothing changed yet".into())
    } else if !preview_current {
        Some("the preview is still being computed".into())
    } else {
        None
    }
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
        Mode::Overrides(editor) => override_editor::dry_run_answered(editor, revision, items),
        _ => {}
    }
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
        for name in group.clusters.iter() {
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
