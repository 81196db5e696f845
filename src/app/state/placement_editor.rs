//! The placement editor's own data, as `Mode::Placement` holds it: the field being edited, the
//! explicit cluster list and selector as typed, the engine's preview and the clusters' dry run,
//! and whether the operator is editing or reviewing. Plain data: it must not import the state
//! or act on it (keys and engine work are `app::placement_editor`).

use super::review::{ReviewRow, diff_review_rows};
use crate::engine::edit::placement::{
    EditablePlacement, PlacementPreview, PlacementSource, change_words,
};
use crate::messages::PlanItem;
use crate::model::HubKind;

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
    pub fn next(self, dialect: Option<crate::model::Dialect>) -> Field {
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

/// The editor's state; lives in `Mode::Placement`.
#[derive(Debug, Clone, Default)]
pub struct PlacementEditor {
    pub resource: usize,
    /// Filled in by `app::placement_editor::refresh` from the fleet's files.
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
    /// The hub the edit is written to (none: a fleet directory flotilla propagates), which
    /// decides what a cluster leaving the placement loses.
    pub hub: Option<HubKind>,
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

/// How many of the other resources a shared policy's edit changes the review names one by
/// one; the rest are counted (a policy may place thousands).
pub const SHOWN_OTHERS: usize = 20;

/// The review's rows, in order; the view draws them and `n`/`p` jump between their hunks.
/// The clusters' server-side dry run replaces the offline render diff as answers arrive.
pub fn review_rows(editor: &PlacementEditor) -> Vec<ReviewRow> {
    let Some(preview) = &editor.preview else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    // A shared policy's edit changes its other resources too: said first, one line each.
    let edited = preview
        .fleet
        .as_ref()
        .and_then(|fleet| fleet.resources.get(editor.resource))
        .map(|resource| resource.target.clone());
    if let (Some(edited), Some(source)) = (&edited, &editor.source)
        && preview.sharing > 1
    {
        let others: Vec<_> = preview.others(edited).collect();
        rows.push(ReviewRow::Note(format!(
            "{} other resource(s) share {}; the edit changes {} of them{}",
            preview.sharing - 1,
            source.title,
            others.len(),
            if source.dialect == crate::model::Dialect::Karmada {
                " (o saves it as a policy of its own instead: they keep theirs)"
            } else {
                ""
            }
        )));
        for other in others.iter().take(SHOWN_OTHERS) {
            rows.push(ReviewRow::Note(format!(
                "also {}: {}",
                other.resource.display_key(),
                change_words(&other.gained, &other.lost, &other.changed)
            )));
        }
        if others.len() > SHOWN_OTHERS {
            rows.push(ReviewRow::Note(format!(
                "… and {} more (`flotilla placement set … --dry-run -o json` lists every one)",
                others.len() - SHOWN_OTHERS
            )));
        }
    }
    for change in preview.leaving() {
        rows.push(ReviewRow::Note(format!(
            "{} leaves; {}",
            change.cluster,
            crate::model::leaving(editor.hub)
        )));
    }
    rows.extend(diff_review_rows(
        &preview.diffs,
        &editor.dry_run,
        editor.dry_run_clusters,
    ));
    rows
}
