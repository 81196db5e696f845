//! The console's fleet-wide pods query (`:pods [STATE]`, `:images`): what the backends answered
//! of each workload cell's pods and images, the trouble the matrix's rows are narrowed to, and per row and column
//! how many answered cells are in it, so narrowing costs a lookup per row. Plain data and its
//! reads; it must not ask a backend (`update` sends the effect) nor decide a pod's trouble
//! (the engine's `health::pods` does, in the backend).

use std::collections::HashMap;

use crate::engine::health::pods::PodTrouble;
use crate::messages::{CellPods, CellRef};

/// Which pods the rows are narrowed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodsFilter {
    /// Any pod in any trouble (`:pods`).
    AnyTrouble,
    /// A pod in this trouble (`:pods crashloopbackoff`).
    Trouble(PodTrouble),
    /// A workload running other images than the fleet renders for it (`:images`).
    ImageSkew,
}

impl PodsFilter {
    /// Whether a cell's pods are what the filter keeps.
    pub fn keeps(self, pods: &CellPods) -> bool {
        match self {
            PodsFilter::AnyTrouble => !pods.troubles.is_empty(),
            PodsFilter::Trouble(trouble) => pods.troubles.contains(&trouble),
            PodsFilter::ImageSkew => !pods.skew.is_empty(),
        }
    }

    /// How the header names it.
    pub fn label(self) -> String {
        match self {
            PodsFilter::AnyTrouble => "pods: in trouble".into(),
            PodsFilter::Trouble(trouble) => format!("pods: {trouble}"),
            PodsFilter::ImageSkew => "images: not as desired".into(),
        }
    }
}

/// The last pods query and its answers so far.
#[derive(Debug, Clone, Default)]
pub struct PodsQuery {
    /// What the rows are narrowed to; `None`: not narrowed (answers are still kept for the
    /// cells' explanations).
    pub filter: Option<PodsFilter>,
    /// The cells the last query asked about.
    pub asked: usize,
    cells: HashMap<CellRef, CellPods>,
    /// Cells the filter keeps, in all and per resource row and per cluster column.
    kept: usize,
    kept_by_resource: HashMap<u32, u32>,
    kept_by_cluster: HashMap<u32, u32>,
    /// Answered cells whose pods could not be read.
    unread: usize,
}

impl PodsQuery {
    /// A new query over `asked` cells, narrowing to `filter`; earlier answers are dropped.
    pub fn start(&mut self, filter: Option<PodsFilter>, asked: usize) {
        *self = PodsQuery {
            filter,
            asked,
            ..PodsQuery::default()
        };
    }

    /// Stops narrowing the rows; the answers stay.
    pub fn clear_filter(&mut self) {
        self.filter = None;
        self.kept = 0;
        self.kept_by_resource.clear();
        self.kept_by_cluster.clear();
    }

    /// Takes a backend's answers.
    pub fn receive(&mut self, answers: Vec<(CellRef, CellPods)>) {
        for (cell, pods) in answers {
            let kept = self.filter.is_some_and(|filter| filter.keeps(&pods));
            self.unread += usize::from(pods.error.is_some());
            if let Some(before) = self.cells.insert(cell, pods) {
                self.unread -= usize::from(before.error.is_some());
                if self.filter.is_some_and(|filter| filter.keeps(&before)) {
                    self.count(cell, false);
                }
            }
            if kept {
                self.count(cell, true);
            }
        }
    }

    fn count(&mut self, cell: CellRef, add: bool) {
        self.kept = if add {
            self.kept + 1
        } else {
            self.kept.saturating_sub(1)
        };
        for (counts, key) in [
            (&mut self.kept_by_resource, cell.resource),
            (&mut self.kept_by_cluster, cell.cluster),
        ] {
            let count = counts.entry(key).or_default();
            *count = if add {
                *count + 1
            } else {
                count.saturating_sub(1)
            };
        }
    }

    /// How many of the asked cells have answered.
    pub fn answered(&self) -> usize {
        self.cells.len()
    }

    /// What the query read of a cell's pods, once it answered.
    pub fn of(&self, cell: CellRef) -> Option<&CellPods> {
        self.cells.get(&cell)
    }

    /// Whether a resource row stays when the rows are narrowed.
    pub fn keeps_resource(&self, resource: usize) -> bool {
        self.filter.is_none() || self.kept_by_resource.get(&(resource as u32)) > Some(&0)
    }

    /// Whether a cluster column stays when the rows are narrowed.
    pub fn keeps_cluster(&self, cluster: usize) -> bool {
        self.filter.is_none() || self.kept_by_cluster.get(&(cluster as u32)) > Some(&0)
    }

    /// The answers in a line: how many cells answered and how many are in the filter's
    /// trouble, from the counts kept as answers arrive (it is shown after every answer).
    pub fn progress(&self) -> String {
        let mut line = format!("pods read on {} of {} cells", self.answered(), self.asked);
        if let Some(filter) = self.filter {
            line.push_str(&format!("; {} kept ({})", self.kept, filter.label()));
        }
        if self.unread > 0 {
            line.push_str(&format!("; {} could not be read", self.unread));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pods(troubles: &[PodTrouble]) -> CellPods {
        CellPods {
            troubles: troubles.to_vec(),
            ..CellPods::default()
        }
    }

    fn cell(resource: u32, cluster: u32) -> CellRef {
        CellRef { resource, cluster }
    }

    #[test]
    fn rows_and_columns_stay_while_an_answered_cell_in_them_is_in_the_trouble() {
        let mut query = PodsQuery::default();
        query.start(Some(PodsFilter::Trouble(PodTrouble::OOMKilled)), 3);
        assert!(!query.keeps_resource(0) && !query.keeps_cluster(1));
        query.receive(vec![
            (
                cell(0, 1),
                pods(&[PodTrouble::CrashLoopBackOff, PodTrouble::OOMKilled]),
            ),
            (cell(2, 1), pods(&[])),
        ]);
        assert!(query.keeps_resource(0) && query.keeps_cluster(1));
        assert!(!query.keeps_resource(2));
        // A newer answer replaces the cell's: no longer in the trouble, no longer kept.
        query.receive(vec![(cell(0, 1), pods(&[PodTrouble::Pending]))]);
        assert!(!query.keeps_resource(0) && !query.keeps_cluster(1));
        assert_eq!(query.answered(), 2);
        query.receive(vec![(cell(3, 0), CellPods::unread("timed out".into()))]);
        assert_eq!(
            query.progress(),
            "pods read on 3 of 3 cells; 0 kept (pods: OOMKilled); 1 could not be read"
        );
        query.clear_filter();
        assert!(query.keeps_resource(2));
        assert!(query.of(cell(0, 1)).is_some());
    }
}
