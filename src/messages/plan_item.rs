//! One row of a plan: what applying would do to one object on one cluster, as `plan -o json`
//! prints it and a dry run of an edit answers the console with. Plain data; it must not plan
//! (the backends do, and say what a row means for its cell) nor import anything above
//! `model`.

use serde::Serialize;

use crate::model::ResourceRef;

/// What a plan would do to one object on one cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum PlanAction {
    Create,
    Update,
    Unchanged,
    Prune,
    Conflict,
    Error,
}

impl PlanAction {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanAction::Create => "create",
            PlanAction::Update => "update",
            PlanAction::Unchanged => "unchanged",
            PlanAction::Prune => "prune",
            PlanAction::Conflict => "conflict",
            PlanAction::Error => "error",
        }
    }
}

/// One row of `plan -o json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanItem {
    pub cluster: String,
    pub resource: ResourceRef,
    pub action: PlanAction,
    pub diff: String,
    pub message: String,
    /// The live object's health, when the cluster holds it and its kind has one (not part of
    /// `plan -o json`; `status` shows it).
    #[serde(skip)]
    pub health: Option<crate::model::CellHealth>,
}
