//! What the app and a backend say to each other: the [`Effect`]s the app asks for and the
//! [`BackendEvent`]s a backend answers with, and the cell, save and write shapes they carry.
//! Plain data and small helpers to build it; it must not do anything the messages describe.

use std::collections::BTreeMap;

use super::fanout::drift::DriftField;
use super::fanout::planning::PlanItem;
use crate::model::{CellStatus, ClusterStatus, StatusKind};

/// A (resource, cluster) cell position in the propagation matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellRef {
    pub resource: u32,
    pub cluster: u32,
}

/// Groups per-cluster items (a cell's row, a field to revert, a whole cell) by their cluster,
/// clusters in order and items in the order given.
pub fn by_cluster<T>(items: impl IntoIterator<Item = (u32, T)>) -> BTreeMap<u32, Vec<T>> {
    let mut grouped: BTreeMap<u32, Vec<T>> = BTreeMap::new();
    for (cluster, item) in items {
        grouped.entry(cluster).or_default().push(item);
    }
    grouped
}

/// One cell's new status.
#[derive(Debug, Clone, PartialEq)]
pub struct CellUpdate {
    pub cell: CellRef,
    pub status: CellStatus,
    /// Human detail for the detail pane (an API error, the drifted path), if any.
    pub message: Option<String>,
}

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
    /// [`Effect::FollowObject`], then again every few seconds while it is followed).
    LiveObject {
        cell: CellRef,
        live: Box<LiveObject>,
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

/// One cell's live health.
#[derive(Debug, Clone, PartialEq)]
pub struct HealthUpdate {
    pub cell: CellRef,
    pub health: Option<crate::model::CellHealth>,
}

/// A row a hub gained while the console runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedResource {
    pub target: crate::model::ResourceRef,
    pub dialect: crate::model::Dialect,
    /// What carries it on the hub, e.g. `ResourceBinding shop/web-deployment`.
    pub source: String,
}

/// One drifted field to take back: re-applied with the desired value, forcing ownership.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RevertField {
    pub cell: CellRef,
    /// JSON pointer of the field, as the drift reported it.
    pub path: String,
}

/// A fleet handed to a backend; two are equal when they are the same fleet.
#[derive(Debug, Clone)]
pub struct SharedFleet(pub std::sync::Arc<crate::engine::Fleet>);

impl PartialEq for SharedFleet {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Requests the app makes of a backend. Confirmed edits of the fleet's own files are not
/// effects: the session writes them (`app::state::edits`), then hands the backend the new
/// fleet.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Propagate the desired objects of these cells.
    Apply { cells: Vec<CellRef> },
    /// Delete the objects of these cells, confirmed by the operator.
    Delete { cells: Vec<CellRef> },
    /// The fleet was edited and saved: work from this one now (same resources and clusters).
    UseFleet(SharedFleet),
    /// Server-side dry run of these cells as an edited (not yet saved) fleet renders them;
    /// answered with [`BackendEvent::DryRun`]. Writes nothing.
    DryRun {
        fleet: SharedFleet,
        cells: Vec<CellRef>,
        revision: u64,
    },
    /// Hub mode: write this policy to the hub (server-side apply, field manager `flotilla`,
    /// taking over fields others set — the operator confirmed it), then follow the hub until
    /// its rendered object for each cell in `expect` equals the engine's (`expect` holds the
    /// engine's render of the edited fleet).
    HubApply {
        object: serde_json::Value,
        /// The object as the edit was computed from it (`None`: the edit creates it); the
        /// write is refused when the hub no longer holds it.
        base: Option<serde_json::Value>,
        title: String,
        expect: Vec<(CellRef, serde_json::Value)>,
    },
    /// OCM hub: write an edited Placement — `patch` is a JSON patch guarded by the
    /// resourceVersion the edit started from, sent as field manager `flotilla` — then follow
    /// its PlacementDecisions until they hold exactly `expect` (the editor's preview).
    WritePlacement {
        namespace: String,
        name: String,
        patch: Vec<serde_json::Value>,
        expect: Vec<String>,
    },
    /// The live view opened on these cells (or moved to them): read each one's live object
    /// and recent Events, answer with [`BackendEvent::LiveObject`] and keep answering every
    /// few seconds until another follow or [`Effect::StopFollowing`] replaces the set. Reads
    /// only.
    FollowObject { cells: Vec<CellRef> },
    /// The live view closed: stop reading for it.
    StopFollowing,
    /// Take back exactly these drifted fields (re-apply the desired values with force),
    /// confirmed by the operator. Other drifted fields of the same objects keep their values.
    Revert { fields: Vec<RevertField> },
}

impl Effect {
    /// A short name for messages: `apply`, `dry run`, `follow`.
    pub fn name(&self) -> &'static str {
        match self {
            Effect::Apply { .. } => "apply",
            Effect::Delete { .. } => "delete",
            Effect::UseFleet(_) => "use fleet",
            Effect::DryRun { .. } => "dry run",
            Effect::HubApply { .. } => "hub apply",
            Effect::WritePlacement { .. } => "placement write",
            Effect::FollowObject { .. } => "follow",
            Effect::StopFollowing => "stop following",
            Effect::Revert { .. } => "revert",
        }
    }

    /// Whether the effect only reads (the live view's follows), so a read-only backend takes it.
    pub fn only_reads(&self) -> bool {
        matches!(self, Effect::FollowObject { .. } | Effect::StopFollowing)
    }
}

/// The channel of a read-only backend: the console sends on it as on any other, and only
/// effects that merely read ([`Effect::only_reads`]) reach the backend; any other is refused
/// with a warning, so nothing sent to a read-only backend can become a write. Must be called
/// within a tokio runtime.
pub fn reads_only() -> (
    tokio::sync::mpsc::UnboundedSender<Effect>,
    tokio::sync::mpsc::UnboundedReceiver<Effect>,
) {
    let (console, mut sent) = tokio::sync::mpsc::unbounded_channel::<Effect>();
    let (reads, backend) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(effect) = sent.recv().await {
            if !effect.only_reads() {
                tracing::warn!("read-only: a {} request was refused", effect.name());
                continue;
            }
            if reads.send(effect).is_err() {
                return;
            }
        }
    });
    (console, backend)
}

/// What one cluster holds for a followed cell, as the live view shows it. Text in it is as the
/// cluster sent it: whoever prints it escapes it.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct LiveObject {
    /// The object on the cluster with Secret values masked; `None` when it does not hold it.
    pub object: Option<serde_json::Value>,
    /// The unified diff of the live object against the desired one, as a read-only plan
    /// reads it (Secret values masked); empty when nothing differs.
    pub diff: String,
    /// A fingerprint of the unmasked object's normalised state, so clusters group by what
    /// they really hold (see `engine::compare::live_state::fingerprint`).
    pub fingerprint: Option<u64>,
    /// The cluster's recent Events for the object (and its pods, for a workload), newest first.
    pub events: Vec<ObjectEvent>,
    /// Why the object or its Events could not be read, if they could not.
    pub error: Option<String>,
}

/// One cluster Event about a followed object or one of its pods.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectEvent {
    /// `Normal` or `Warning`.
    #[serde(rename = "type")]
    pub event_type: String,
    pub reason: String,
    pub message: String,
    pub count: u32,
    /// What it is about: `Deployment shop/web`, `Pod shop/web-7d9c4-x2x`.
    pub object: String,
    /// When it last happened (RFC 3339), where the cluster says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<String>,
    /// Seconds from then until it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_seconds: Option<u64>,
}

impl ObjectEvent {
    pub fn is_warning(&self) -> bool {
        self.event_type == "Warning"
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_read_only_channel_lets_the_live_views_reads_through_and_nothing_else() {
        let (console, mut backend) = reads_only();
        let cell = CellRef {
            resource: 0,
            cluster: 1,
        };
        console.send(Effect::Apply { cells: vec![cell] }).unwrap();
        console.send(Effect::Delete { cells: vec![cell] }).unwrap();
        console.send(Effect::Revert { fields: Vec::new() }).unwrap();
        console
            .send(Effect::FollowObject { cells: vec![cell] })
            .unwrap();
        console.send(Effect::StopFollowing).unwrap();
        drop(console);
        let mut received = Vec::new();
        while let Some(effect) = backend.recv().await {
            received.push(effect);
        }
        assert_eq!(
            received,
            [
                Effect::FollowObject { cells: vec![cell] },
                Effect::StopFollowing
            ]
        );
    }
}
