//! The Open Cluster Management Placement editor's own data, as `Mode::OcmPlacement` holds it:
//! choosing a Placement or editing one, its predicates, tolerations and number of clusters as
//! typed, the field with the cursor and the offline decision preview, and whether the Placement
//! changed on the hub since editing began. Plain data and pure reads of it: it must not import
//! the state or change it (keys and previews are `app::ocm_placement`).

use crate::engine::edit::ocm_placement::{
    DecisionPreview, HubPlacement, PlacementEdit, PlacementWorld, PredicateText,
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

/// The editor's state; lives in `Mode::OcmPlacement`.
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
    /// Bumped by every edit and by every change of the hub's Placements; the preview belongs
    /// to `previewed`.
    pub revision: u64,
    pub previewed: u64,
}

impl OcmPlacementEditor {
    pub fn choosing(cursor: usize) -> OcmPlacementEditor {
        OcmPlacementEditor {
            stage: OcmStage::Choosing { cursor },
            base: None,
            edit: PlacementEdit::default(),
            original: PlacementEdit::default(),
            field: OcmField::Labels(0),
            error: None,
            preview: None,
            revision: 1,
            previewed: 0,
        }
    }

    pub fn changed(&self) -> bool {
        self.edit != self.original
    }

    /// Whether the Placement being edited changed on the hub (`placements`, as last read)
    /// since editing began.
    pub fn changed_on_hub(&self, placements: Option<&PlacementWorld>) -> bool {
        let (Some(base), Some(world)) = (&self.base, placements) else {
            return false;
        };
        world
            .placements
            .iter()
            .find(|p| p.namespace() == base.namespace() && p.name() == base.name())
            .is_none_or(|p| p.resource_version() != base.resource_version())
    }

    /// Predicates shown: every one being edited, plus an empty one to add (ORed).
    pub fn predicate_slots(&self) -> usize {
        self.edit.predicates.len() + 1
    }

    pub fn text_mut(&mut self) -> &mut String {
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

    pub fn step(&mut self, forward: bool) {
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
