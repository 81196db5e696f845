//! What a backend reports: the [`BackendEvent`]s, the rows a hub gains and what a connected
//! hub lets the console do. Plain data and a constructor for the whole matrix; it must not
//! find anything out (the backends do) nor import anything above `engine`.

use super::cell::{CellRef, CellUpdate, HealthUpdate};
use super::drift_field::DriftField;
use super::effect::SharedFleet;
use super::live_object::{CellPods, LiveObject};
use super::plan_item::PlanItem;
use crate::model::{CellStatus, ClusterStatus, StatusKind};

/// Edits a source does not support, each with the reason the console gives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CannotEdit {
    pub overrides: Option<String>,
    pub placements: Option<String>,
    /// Why `a` has nothing to ask of this hub.
    pub reschedule: Option<String>,
}

/// What a connected hub is and lets the console do: the header's label, the hub's kind,
/// whether the console may only look, a first notice, the edits it has no API for, and (on
/// Open Cluster Management) its Placements for the placement editor.
#[derive(Debug, Clone, PartialEq)]
pub struct HubTraits {
    pub label: String,
    pub kind: crate::model::HubKind,
    pub readonly: bool,
    pub notice: Option<String>,
    pub cannot_edit: CannotEdit,
    pub placements: Option<std::sync::Arc<crate::engine::edit::ocm_placement::PlacementWorld>>,
}

/// Facts a backend reports.
#[derive(Debug, Clone, PartialEq)]
pub enum BackendEvent {
    /// The fleet, loaded and placed in the background after the console started, with the
    /// texts it was loaded from; every cell is Pending until the backend's snapshot follows.
    FleetLoaded {
        fleet: SharedFleet,
        files: std::sync::Arc<Vec<crate::engine::SourceFile>>,
        /// The audit log's entries, read beside the fleet, for the drift view's owner-fight
        /// notes (empty for the simulated fleet).
        audit: std::sync::Arc<Vec<serde_json::Value>>,
    },
    /// A hub, connected and read in the background after the console started: its fleet
    /// (as [`BackendEvent::FleetLoaded`]) and what it lets the console do.
    HubLoaded {
        fleet: SharedFleet,
        files: std::sync::Arc<Vec<crate::engine::SourceFile>>,
        hub: Box<HubTraits>,
    },
    /// The fleet or hub the console started on could not be had (a bad fleet file, an unknown
    /// context, a hub that did not answer): the console ends and prints `error`; `input` says
    /// whether it was the user's input (exit 2) or an unreachable hub (exit 3).
    StartFailed { error: String, input: bool },
    /// The whole matrix at once: one status kind per cell, resource-major
    /// (`resource * clusters + cluster`), plus the cells whose status carries detail.
    Snapshot {
        kinds: Vec<StatusKind>,
        details: Vec<CellUpdate>,
    },
    /// A cluster's connection status changed.
    Cluster { cluster: u32, status: ClusterStatus },
    /// Some cells changed.
    Cells(Vec<CellUpdate>),
    /// These clusters are alive and their caches current, though nothing changed.
    Heartbeat { clusters: Vec<u32> },
    /// A line for the status bar and the log (e.g. "applied 3 objects to prod-eu-west-1").
    Notice(String),
    /// What one cluster's API server answered to a dry run of an edit (`revision` is the
    /// editor's, so a stale answer is dropped).
    DryRun { revision: u64, items: Vec<PlanItem> },
    /// Hub mode: rows the hub gained since the console started (a new binding, Federated
    /// object or ManifestWork manifest), appended after the existing rows; their cells follow
    /// as ordinary cell updates.
    ResourcesAdded(Vec<AddedResource>),
    /// OCM hub: the Placements, clusters and sets the placement editor decides against, sent
    /// whenever they change.
    Placements(std::sync::Arc<crate::engine::edit::ocm_placement::PlacementWorld>),
    /// Live health changed for these cells (`None`: the cluster no longer holds the object,
    /// or its kind has no health).
    Health(Vec<HealthUpdate>),
    /// The drifted fields of one cell, field by field (empty: no drift any more). Sent with
    /// the cell's update whenever its drift may have changed.
    Drift {
        cell: CellRef,
        fields: Vec<DriftField>,
    },
    /// A followed cell's live object and recent Events (answering
    /// [`Effect::OpenObjectView`](super::effect::Effect::OpenObjectView), then again every few
    /// seconds while it is followed).
    LiveObject {
        cell: CellRef,
        live: Box<LiveObject>,
    },
    /// Cells' workload pods, answering [`Effect::ReadPods`](super::effect::Effect::ReadPods)
    /// (a cluster's answers together, as it gives them).
    Pods(Vec<(CellRef, CellPods)>),
    /// Lines and notes of the log pane's streams (answering
    /// [`Effect::OpenLogs`](super::effect::Effect::OpenLogs) number `stream`), in order;
    /// `skipped` lines before them were left out to keep the pane bounded.
    Logs {
        stream: u64,
        items: Vec<super::logs::LogItem>,
        skipped: usize,
    },
}

impl BackendEvent {
    /// The whole matrix of `resources` × `clusters` cells as a snapshot, from each cell's
    /// status and detail line. A status with an empty reason (a cell the fleet itself says
    /// why it is not placed) carries no detail.
    pub fn snapshot(
        resources: usize,
        clusters: usize,
        mut cell: impl FnMut(usize, usize) -> (CellStatus, Option<String>),
    ) -> BackendEvent {
        let mut kinds = Vec::with_capacity(resources * clusters);
        let mut details = Vec::new();
        for resource in 0..resources {
            for cluster in 0..clusters {
                let (status, message) = cell(resource, cluster);
                kinds.push(status.kind());
                if status.detail().is_some_and(|detail| !detail.is_empty()) || message.is_some() {
                    details.push(CellUpdate {
                        cell: CellRef {
                            resource: resource as u32,
                            cluster: cluster as u32,
                        },
                        status,
                        message,
                    });
                }
            }
        }
        BackendEvent::Snapshot { kinds, details }
    }
}

/// A row a hub gained while the console runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedResource {
    pub target: crate::model::ResourceRef,
    pub dialect: crate::model::Dialect,
    /// What carries it on the hub, e.g. `ResourceBinding shop/web-deployment`.
    pub source: String,
}
