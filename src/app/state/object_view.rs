//! The drilled-in view of one cell, as data: which of its views is showing (the desired
//! object, the live one, their diff, the cluster's Events, or every placed cluster grouped by
//! live state), how far it is scrolled, and what the backend last read for the cells it
//! follows, those reads grouped by identical live state, and the template's status as Karmada
//! would aggregate it from them (beside the hub's own, on a Karmada hub). Plain data and pure
//! reads of it; it must not import the state, change it, nor hold anything but what was
//! received and what was worked out from it when it arrived.

use std::collections::HashMap;

use crate::engine::compare::live_state::{self, LiveGroup};
use crate::engine::interpreter::Aggregation;
use crate::messages::{CellRef, LiveObject};

/// One of the object view's views, cycled with the focus keys (tab / shift-tab).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ObjectTab {
    /// The object the engine renders for the cluster.
    #[default]
    Desired,
    /// The object on the cluster, Secret values masked, server bookkeeping left out.
    Live,
    /// Live against desired, as a read-only plan reads it.
    Diff,
    /// The cluster's recent Events for the object (and its pods), newest first.
    Events,
    /// Every cluster the resource is placed on, grouped by identical live state.
    Clusters,
}

impl ObjectTab {
    pub const ALL: [ObjectTab; 5] = [
        ObjectTab::Desired,
        ObjectTab::Live,
        ObjectTab::Diff,
        ObjectTab::Events,
        ObjectTab::Clusters,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ObjectTab::Desired => "desired",
            ObjectTab::Live => "live",
            ObjectTab::Diff => "diff",
            ObjectTab::Events => "events",
            ObjectTab::Clusters => "clusters",
        }
    }

    /// The next view (or the previous one, going `back`), wrapping around.
    pub fn step(self, back: bool) -> ObjectTab {
        let count = ObjectTab::ALL.len();
        let at = ObjectTab::ALL
            .iter()
            .position(|tab| *tab == self)
            .unwrap_or(0);
        let next = if back {
            (at + count - 1) % count
        } else {
            (at + 1) % count
        };
        ObjectTab::ALL[next]
    }
}

/// What the backend last read for a followed cell, and when it arrived (app clock, ms).
#[derive(Debug, Clone, PartialEq)]
pub struct LiveRead {
    pub live: LiveObject,
    pub received_ms: u64,
    /// The live object as YAML for reading: Secret values masked, server bookkeeping out,
    /// status kept. Empty when the cluster does not hold it.
    pub yaml: String,
}

/// The cells the backend is asked to follow and what it answered for each.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveBook {
    pub followed: Vec<CellRef>,
    pub reads: HashMap<CellRef, LiveRead>,
    /// Per resource: its template's status aggregated from the reads of its placed clusters,
    /// worked out when a read arrives (a statusAggregation script runs then, never in a frame).
    pub aggregated: HashMap<usize, AggregateRead>,
    /// Per resource, on a Karmada hub: its binding's per-member record (`aggregatedStatus`)
    /// held against the reads of its placed clusters, worked out as a read arrives.
    pub hub_members: HashMap<usize, HubMembers>,
}

/// A Karmada binding's per-member record beside flotilla's reads of the members.
#[derive(Debug, Clone, PartialEq)]
pub struct HubMembers {
    pub checks: Vec<crate::engine::interpreter::members::MemberCheck>,
    /// A hash of what went into it (the record and the members' objects), so an unchanged
    /// read does not collect again.
    pub inputs: u64,
}

/// A template's status as Karmada would aggregate it from the members flotilla read, and what
/// a Karmada hub aggregated itself, where there is one.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregateRead {
    /// flotilla's aggregation, or why the rule failed (naming it).
    pub flotilla: Result<Aggregation, String>,
    /// How many placed clusters' reads went into it (those that could not be read do not).
    pub members: usize,
    /// The hub template's `.status`, as the hub aggregated it.
    pub hub: Option<serde_json::Value>,
    /// A hash of what went into it (the template and the members' objects), so an unchanged
    /// read does not run the rule again.
    pub inputs: u64,
}

impl AggregateRead {
    /// Whether the hub's status and flotilla's agree; `None` off a hub or when either failed.
    pub fn agrees(&self) -> Option<bool> {
        let ours = self.flotilla.as_ref().ok()?;
        let hub = self.hub.as_ref()?;
        Some(crate::engine::interpreter::status::same_status(
            &ours.status,
            hub,
        ))
    }
}

impl LiveBook {
    /// The `placed` clusters of `resource` grouped by identical live state, largest first
    /// (clusters not read yet, or that could not be read, are left out).
    pub fn groups(&self, resource: usize, placed: &[usize]) -> Vec<LiveGroup<usize>> {
        let members: Vec<(usize, Option<(u64, &serde_json::Value)>)> = placed
            .iter()
            .filter_map(|&cluster| {
                let cell = CellRef {
                    resource: resource as u32,
                    cluster: cluster as u32,
                };
                let read = self.reads.get(&cell)?;
                // A cluster that could not be read holds nothing anyone knows of.
                if read.live.object.is_none() && read.live.error.is_some() {
                    return None;
                }
                let shown = match (&read.live.object, read.live.fingerprint) {
                    (Some(object), Some(print)) => Some((print, object)),
                    _ => None,
                };
                Some((cluster, shown))
            })
            .collect();
        live_state::group_by_state(&members)
    }
}
