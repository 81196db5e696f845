//! The console's state: plain data owned by the app loop and changed only by `update`.
//! It must not hold clients, channels or terminal types, so views and tests can borrow it.

use std::collections::HashMap;

use crate::backend::CellRef;
use crate::model::{
    CellStatus, ClusterSpec, ClusterStatus, Dialect, Health, ResourceRef, StatusCounts, StatusKind,
};

/// A cluster as the console shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterRow {
    pub spec: ClusterSpec,
    pub status: ClusterStatus,
}

/// A federated resource as the console shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceRow {
    pub target: ResourceRef,
    pub dialect: Dialect,
    /// Short placement description, e.g. "selector env=prod".
    pub placement: String,
}

/// Per-status cell counts for one row or column, kept up to date as cells change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindCounts([u32; 9]);

impl KindCounts {
    fn slot(kind: StatusKind) -> usize {
        kind as usize
    }

    fn add(&mut self, kind: StatusKind) {
        self.0[Self::slot(kind)] += 1;
    }

    fn remove(&mut self, kind: StatusKind) {
        let slot = &mut self.0[Self::slot(kind)];
        *slot = slot.saturating_sub(1);
    }

    pub fn get(&self, kind: StatusKind) -> u32 {
        self.0[Self::slot(kind)]
    }

    /// The worst status present (NotPlaced when there is none).
    pub fn worst(&self) -> StatusKind {
        StatusKind::ALL
            .into_iter()
            .filter(|kind| self.get(*kind) > 0)
            .max()
            .unwrap_or(StatusKind::NotPlaced)
    }
}

/// The propagation matrix: one status per (resource, cluster), with roll-ups per row and column.
/// Stored as one byte-sized kind per cell plus a sparse map of details, so 2,000 clusters ×
/// 1,000 resources stay small.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellGrid {
    clusters: usize,
    resources: usize,
    kinds: Vec<StatusKind>,
    details: HashMap<CellRef, CellDetail>,
    per_resource: Vec<KindCounts>,
    per_cluster: Vec<KindCounts>,
}

/// The parts of a cell's status that do not fit in its kind.
#[derive(Debug, Clone, PartialEq)]
pub struct CellDetail {
    pub status: CellStatus,
    pub message: Option<String>,
}

impl CellGrid {
    /// A grid where every cell is Pending until the backend reports.
    pub fn new(resources: usize, clusters: usize) -> CellGrid {
        let mut grid = CellGrid {
            clusters,
            resources,
            kinds: vec![StatusKind::Pending; resources * clusters],
            details: HashMap::new(),
            per_resource: vec![KindCounts::default(); resources],
            per_cluster: vec![KindCounts::default(); clusters],
        };
        grid.recount();
        grid
    }

    fn recount(&mut self) {
        self.per_resource = vec![KindCounts::default(); self.resources];
        self.per_cluster = vec![KindCounts::default(); self.clusters];
        for (index, kind) in self.kinds.iter().enumerate() {
            self.per_resource[index / self.clusters.max(1)].add(*kind);
            self.per_cluster[index % self.clusters.max(1)].add(*kind);
        }
    }

    /// Replaces every cell; `kinds` is resource-major. A wrong-sized snapshot is ignored.
    pub fn replace(&mut self, kinds: Vec<StatusKind>, details: Vec<(CellRef, CellDetail)>) -> bool {
        if kinds.len() != self.resources * self.clusters {
            return false;
        }
        self.kinds = kinds;
        self.details = details.into_iter().collect();
        self.recount();
        true
    }

    /// Sets one cell; returns false for a cell outside the grid.
    pub fn set(&mut self, cell: CellRef, status: CellStatus, message: Option<String>) -> bool {
        let (resource, cluster) = (cell.resource as usize, cell.cluster as usize);
        if resource >= self.resources || cluster >= self.clusters {
            return false;
        }
        let index = resource * self.clusters + cluster;
        let old = self.kinds[index];
        let new = status.kind();
        self.per_resource[resource].remove(old);
        self.per_cluster[cluster].remove(old);
        self.per_resource[resource].add(new);
        self.per_cluster[cluster].add(new);
        self.kinds[index] = new;
        if status.detail().is_some() || message.is_some() {
            self.details.insert(cell, CellDetail { status, message });
        } else {
            self.details.remove(&cell);
        }
        true
    }

    pub fn kind(&self, resource: usize, cluster: usize) -> StatusKind {
        self.kinds
            .get(resource * self.clusters + cluster)
            .copied()
            .unwrap_or(StatusKind::NotPlaced)
    }

    /// The full status of a cell, with its reason when it has one.
    pub fn status(&self, resource: usize, cluster: usize) -> CellStatus {
        let cell = CellRef {
            resource: resource as u32,
            cluster: cluster as u32,
        };
        if let Some(detail) = self.details.get(&cell) {
            return detail.status.clone();
        }
        match self.kind(resource, cluster) {
            StatusKind::InSync => CellStatus::InSync,
            StatusKind::Drifted => CellStatus::Drifted,
            StatusKind::Pending => CellStatus::Pending,
            StatusKind::Missing => CellStatus::Missing,
            StatusKind::Failed => CellStatus::Failed(String::new()),
            StatusKind::Conflict => CellStatus::Conflict(String::new()),
            StatusKind::Unreachable => CellStatus::Unreachable,
            StatusKind::NotPlaced => CellStatus::NotPlaced(String::new()),
            StatusKind::Orphaned => CellStatus::Orphaned,
        }
    }

    pub fn message(&self, resource: usize, cluster: usize) -> Option<&str> {
        let cell = CellRef {
            resource: resource as u32,
            cluster: cluster as u32,
        };
        self.details.get(&cell)?.message.as_deref()
    }

    pub fn resource_counts(&self, resource: usize) -> KindCounts {
        self.per_resource.get(resource).copied().unwrap_or_default()
    }

    pub fn cluster_counts(&self, cluster: usize) -> KindCounts {
        self.per_cluster.get(cluster).copied().unwrap_or_default()
    }

    /// The cluster whose cell causes a resource's worst status (the roll-up's trace).
    pub fn resource_cause(&self, resource: usize) -> Option<usize> {
        let worst = self.resource_counts(resource).worst();
        (0..self.clusters).find(|&cluster| self.kind(resource, cluster) == worst)
    }

    /// The resource whose cell causes a cluster's worst status.
    pub fn cluster_cause(&self, cluster: usize) -> Option<usize> {
        let worst = self.cluster_counts(cluster).worst();
        (0..self.resources).find(|&resource| self.kind(resource, cluster) == worst)
    }

    /// Counts of every cell by status.
    pub fn totals(&self) -> StatusCounts {
        let mut totals = StatusCounts::default();
        for counts in &self.per_cluster {
            for kind in StatusKind::ALL {
                totals.add_n(kind, counts.get(kind) as usize);
            }
        }
        totals
    }
}

/// Which pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pane {
    #[default]
    Clusters,
    Resources,
}

impl Pane {
    pub fn next(self) -> Pane {
        match self {
            Pane::Clusters => Pane::Resources,
            Pane::Resources => Pane::Clusters,
        }
    }
}

/// Everything the console shows.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Where the fleet comes from, e.g. "demo (simulated)" or "fleet ./fleet".
    pub source: String,
    pub clusters: Vec<ClusterRow>,
    pub resources: Vec<ResourceRow>,
    pub cells: CellGrid,
    pub focus: Pane,
    pub cluster_cursor: usize,
    pub resource_cursor: usize,
    pub show_help: bool,
    pub readonly: bool,
    pub should_quit: bool,
    /// The latest notice for the status line.
    pub notice: Option<String>,
    /// Rows a page-up/down moves, from the terminal height.
    pub page_rows: usize,
    /// Warnings from configuration, shown once at the bottom.
    pub warnings: Vec<String>,
}

impl State {
    pub fn new(source: String, clusters: Vec<ClusterRow>, resources: Vec<ResourceRow>) -> State {
        let cells = CellGrid::new(resources.len(), clusters.len());
        State {
            source,
            clusters,
            resources,
            cells,
            ..State::default()
        }
    }

    /// How many clusters are Ready.
    pub fn ready_clusters(&self) -> usize {
        self.clusters
            .iter()
            .filter(|row| row.status.health == Health::Ready)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(resource: u32, cluster: u32) -> CellRef {
        CellRef { resource, cluster }
    }

    #[test]
    fn roll_ups_follow_cell_changes() {
        let mut grid = CellGrid::new(2, 3);
        for r in 0..2 {
            for c in 0..3 {
                grid.set(cell(r, c), CellStatus::InSync, None);
            }
        }
        assert_eq!(grid.resource_counts(0).worst(), StatusKind::InSync);
        grid.set(cell(0, 2), CellStatus::Failed("boom".into()), None);
        assert_eq!(grid.resource_counts(0).worst(), StatusKind::Failed);
        assert_eq!(grid.cluster_counts(2).worst(), StatusKind::Failed);
        assert_eq!(grid.resource_cause(0), Some(2));
        assert_eq!(grid.cluster_cause(2), Some(0));
        assert_eq!(grid.resource_counts(1).worst(), StatusKind::InSync);
        assert_eq!(grid.status(0, 2), CellStatus::Failed("boom".into()));
        grid.set(cell(0, 2), CellStatus::InSync, None);
        assert_eq!(grid.resource_counts(0).worst(), StatusKind::InSync);
        assert_eq!(grid.totals().get(StatusKind::InSync), 6);
    }

    #[test]
    fn cells_outside_the_grid_are_refused() {
        let mut grid = CellGrid::new(1, 1);
        assert!(!grid.set(cell(5, 0), CellStatus::InSync, None));
        assert!(!grid.replace(vec![StatusKind::InSync; 3], Vec::new()));
    }
}
