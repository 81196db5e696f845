//! What the app asks of a backend: the [`Effect`]s, the drifted fields a revert takes back
//! and the fleet handed over with an edit. Plain data; it must not perform an effect (the
//! backends do) nor import anything above `engine`.

use super::cell::CellRef;

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
    /// answered with [`BackendEvent::DryRun`](super::event::BackendEvent::DryRun). Writes
    /// nothing.
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
    /// The object view opened on these cells (or moved to them): read each one's live object
    /// and recent Events, answer with
    /// [`BackendEvent::LiveObject`](super::event::BackendEvent::LiveObject) and keep answering
    /// every few seconds until another follow or [`Effect::CloseObjectView`] replaces the set.
    /// Reads only.
    OpenObjectView { cells: Vec<CellRef> },
    /// The object view closed: stop reading for it.
    CloseObjectView,
    /// Read the pods of these cells' workloads once (the `:pods` query), answered with
    /// [`BackendEvent::Pods`](super::event::BackendEvent::Pods) as clusters answer. Reads only.
    ReadPods { cells: Vec<CellRef> },
    /// `L`: stream the logs of these cells' workloads into the log pane, answered with
    /// [`BackendEvent::Logs`](super::event::BackendEvent::Logs) until the pane's lease ends.
    /// Reads only.
    OpenLogs(super::logs::LogOpen),
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
            Effect::OpenObjectView { .. } => "open object view",
            Effect::CloseObjectView => "close object view",
            Effect::ReadPods { .. } => "read pods",
            Effect::OpenLogs(_) => "open logs",
            Effect::Revert { .. } => "revert",
        }
    }

    /// Whether the effect only reads (the object view's follows, the pods query, logs), so a read-only
    /// backend takes it.
    pub fn only_reads(&self) -> bool {
        matches!(
            self,
            Effect::OpenObjectView { .. }
                | Effect::CloseObjectView
                | Effect::ReadPods { .. }
                | Effect::OpenLogs(_)
        )
    }
}
