//! The cell-status rules of design §4, written once for every backend that works a cell out
//! from what it knows of a cluster: the live backend from its watch caches, the demo from its
//! simulated clusters. In order: not placed but present is Orphaned, else NotPlaced; placed
//! but held back by Karmada's `suspension` is Suspended (nothing is delivered); placed on
//! a cluster that cannot be reached is Unreachable (Pending while connecting); a kind the
//! cluster does not serve is Failed; the last apply's failure stays until the next apply;
//! applying is Pending; an object that cannot be rendered is Failed; before the cluster's first
//! list it is Pending; placed and absent is Pending, or Missing once it was seen; present and
//! matching the intent is InSync, and a field with another live value is Drifted. Pure: no
//! I/O, no clock. It must not keep state: each backend keeps its own facts and answers
//! [`CellFacts`] from them.

use crate::messages::{BackendEvent, CellRef, CellUpdate, DriftField};
use crate::model::{CellStatus, StatusKind};

/// Whether a cluster can be talked to, as far as the backend knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// Not probed yet.
    Connecting,
    /// Answering (Ready or NotReady): cells come from what the cluster holds.
    Answering,
    /// Unreachable, unauthorized or not connected at all; the reason is shown on every cell.
    Down(String),
}

/// What a backend knows of one (resource, cluster) cell. [`judge`] asks in the rules' order,
/// so a backend works out only what the answer needs (a cell on a dead cluster never renders
/// its object).
pub trait CellFacts {
    /// The object the fleet wants there, as the backend needs it to tell drift.
    type Desired;
    /// Whether the fleet places the resource on the cluster.
    fn placed(&self) -> bool;
    /// Why it does not.
    fn not_placed_reason(&self) -> String;
    /// Why Karmada's `suspension` holds the placed object back from the cluster, if it does.
    fn suspended(&self) -> Option<String>;
    /// Whether the cluster holds the object, as far as this backend can tell.
    fn present(&self) -> bool;
    fn reach(&self) -> &Reach;
    /// The (apiVersion, kind) of the resource, when the cluster does not serve it.
    fn unserved(&self) -> Option<(String, String)>;
    /// The last apply's failure: the status it left and its message.
    fn failure(&self) -> Option<(CellStatus, String)>;
    /// Whether an apply of the object is in flight.
    fn applying(&self) -> bool;
    /// The desired object, or why it cannot be rendered.
    fn desired(&self) -> Result<Self::Desired, String>;
    /// Whether the cluster's first list of the kind is in.
    fn listed(&self) -> bool;
    /// Whether the object was seen on the cluster before (its absence is then Missing).
    fn seen(&self) -> bool;
    /// The fields of the present object that left the desired ones, after ignore rules.
    fn drift(&self, desired: &Self::Desired) -> Vec<DriftField>;
}

/// Which rule decided a cell, with what it takes to say so.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict<'a> {
    Orphaned,
    NotPlaced(String),
    Suspended(String),
    Unreachable(&'a str),
    Connecting,
    NotServed(String, String),
    ApplyFailed(CellStatus, String),
    Applying,
    NotRendered(String),
    FirstList,
    NotApplied,
    Deleted,
    InSync,
    Drifted(Vec<DriftField>),
}

/// The rules, in order.
pub fn judge<F: CellFacts>(facts: &F) -> Verdict<'_> {
    if !facts.placed() {
        return if facts.present() {
            Verdict::Orphaned
        } else {
            Verdict::NotPlaced(facts.not_placed_reason())
        };
    }
    if let Some(reason) = facts.suspended() {
        return Verdict::Suspended(reason);
    }
    match facts.reach() {
        Reach::Down(reason) => return Verdict::Unreachable(reason),
        Reach::Connecting => return Verdict::Connecting,
        Reach::Answering => {}
    }
    if let Some((api_version, kind)) = facts.unserved() {
        return Verdict::NotServed(api_version, kind);
    }
    if let Some((status, message)) = facts.failure() {
        return Verdict::ApplyFailed(status, message);
    }
    if facts.applying() {
        return Verdict::Applying;
    }
    let desired = match facts.desired() {
        Ok(desired) => desired,
        Err(reason) => return Verdict::NotRendered(reason),
    };
    if !facts.listed() {
        return Verdict::FirstList;
    }
    if !facts.present() {
        return if facts.seen() {
            Verdict::Deleted
        } else {
            Verdict::NotApplied
        };
    }
    let fields = facts.drift(&desired);
    if fields.is_empty() {
        Verdict::InSync
    } else {
        Verdict::Drifted(fields)
    }
}

impl Verdict<'_> {
    /// The cell's status.
    pub fn status(self) -> CellStatus {
        self.status_and_detail_with(false).0
    }

    /// The cell's status and a line for the detail pane.
    pub fn status_and_detail(self) -> (CellStatus, Option<String>) {
        self.status_and_detail_with(true)
    }

    fn status_and_detail_with(self, detail: bool) -> (CellStatus, Option<String>) {
        let say = |text: &str| detail.then(|| text.to_string());
        match self {
            Verdict::Orphaned => (
                CellStatus::Orphaned,
                say("carries flotilla's marker but is no longer placed here"),
            ),
            Verdict::NotPlaced(reason) => (CellStatus::NotPlaced(reason), None),
            Verdict::Suspended(reason) => (CellStatus::Suspended(reason), None),
            Verdict::Unreachable(reason) => (CellStatus::Unreachable, say(reason)),
            Verdict::Connecting => (CellStatus::Pending, say("connecting to the cluster…")),
            Verdict::NotServed(api_version, kind) => (
                CellStatus::Failed(format!("kind not served: {api_version} {kind}")),
                None,
            ),
            Verdict::ApplyFailed(status, message) => (status, detail.then_some(message)),
            Verdict::Applying => (CellStatus::Pending, say("applying…")),
            Verdict::NotRendered(reason) => (CellStatus::Failed(reason), None),
            Verdict::FirstList => (
                CellStatus::Pending,
                say("waiting for the cluster's first list"),
            ),
            Verdict::NotApplied => (CellStatus::Pending, say("not applied yet")),
            Verdict::Deleted => (
                CellStatus::Missing,
                say("deleted on the cluster outside flotilla"),
            ),
            Verdict::InSync => (CellStatus::InSync, None),
            Verdict::Drifted(fields) => (
                CellStatus::Drifted,
                if detail { drift_summary(&fields) } else { None },
            ),
        }
    }
}

/// The detail line of a drifted cell: its first drifted field, who changed it, and how many
/// more there are.
pub fn drift_summary(fields: &[DriftField]) -> Option<String> {
    let first = fields.first()?;
    let by = first
        .manager
        .as_deref()
        .map(|manager| format!(" by {manager}"))
        .unwrap_or_default();
    let more = match fields.len() {
        1 => String::new(),
        n => format!(" (+{} more fields)", n - 1),
    };
    let (desired, live) = first.shown();
    Some(format!(
        "{} changed{by}: desired {desired} live {live}{more}",
        first.path
    ))
}

/// Drift events for the drifted cells among `updates`, field by field (`fields` gives a
/// cell's). The console forgets the drift of a cell whose update says it is no longer
/// Drifted.
pub fn drift_events(
    updates: &[CellUpdate],
    fields: impl Fn(CellRef) -> Vec<DriftField>,
) -> Vec<BackendEvent> {
    updates
        .iter()
        .filter(|update| update.status.kind() == StatusKind::Drifted)
        .map(|update| BackendEvent::Drift {
            cell: update.cell,
            fields: fields(update.cell),
        })
        .collect()
}
