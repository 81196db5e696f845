//! A propagation in progress, as the state holds it: the waves, which one is running, the
//! gate its cells must pass, the cells it still waits for, the in-sync cells waiting to be
//! Healthy, what has settled, and whether the operator paused it. Plain data: following the
//! backend's reports is `app::rollout`'s job, and this must not import the state.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::wave_gate::WaveGate;
use crate::messages::CellRef;
use crate::model::StatusKind;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rollout {
    pub waves: Vec<Vec<CellRef>>,
    pub current: usize,
    /// What every cell of a wave must reach before the next wave starts.
    pub gate: WaveGate,
    /// Cells of the current wave that have not passed the gate yet.
    pub waiting: BTreeSet<CellRef>,
    /// Cells of the current wave reported in sync whose live health the gate still waits for.
    pub awaiting_health: BTreeMap<CellRef, HealthWait>,
    /// Cells of the current wave that passed the gate; a Degraded one still stops the rollout
    /// until the next wave starts.
    pub passed: BTreeSet<CellRef>,
    /// Cells that passed the gate, over all waves.
    pub settled: usize,
    pub failed: Vec<(CellRef, StatusKind)>,
    pub wave_started_ms: u64,
    /// The operator holds the next wave back; the running one carries on.
    pub paused: bool,
}

/// An in-sync cell waiting for its live object to be Healthy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HealthWait {
    /// Whether the cell's health has been read in an action after the one that reported it in
    /// sync: a backend sends a cell's status before the health of the object it changed, so
    /// the health held in the same action may still describe the object before the write.
    pub current: bool,
    /// Since when (app clock, ms) it has been Healthy without a break.
    pub healthy_since: Option<u64>,
}

impl Rollout {
    pub fn total(&self) -> usize {
        self.waves.iter().map(Vec::len).sum()
    }

    /// Cells of the waves after the current one: not propagated yet.
    pub fn not_started(&self) -> usize {
        self.waves
            .get(self.current + 1..)
            .unwrap_or_default()
            .iter()
            .map(Vec::len)
            .sum()
    }
}
