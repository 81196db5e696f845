//! A propagation in progress, as the state holds it: the waves, which one is running, the
//! cells it still waits for and what has settled. Plain data: following the backend's reports
//! is `app::rollout`'s job, and this must not import the state.

use std::collections::BTreeSet;

use crate::backend::CellRef;
use crate::model::StatusKind;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rollout {
    pub waves: Vec<Vec<CellRef>>,
    pub current: usize,
    /// Cells of the current wave not settled yet.
    pub waiting: BTreeSet<CellRef>,
    /// Cells of the current wave the backend has reported on since the wave started; an
    /// older status (from before the write) never settles a cell.
    pub fresh: BTreeSet<CellRef>,
    /// Settled cells, in sync or not, over all waves.
    pub synced: usize,
    pub failed: Vec<(CellRef, StatusKind)>,
    pub wave_started_ms: u64,
}

impl Rollout {
    pub fn total(&self) -> usize {
        self.waves.iter().map(Vec::len).sum()
    }
}
