//! The propagation matrix as the console keeps it: one status kind per (resource, cluster)
//! cell, a sparse map of details and of live health, running counts of both per row, per
//! column, per heat strip and over the fleet (kept by each cell's change, never recounted over
//! the fleet for a health change), and since when each problem cell has been in its state.
//! Plain data: it must not know about panes, modes or anything else in the state; which
//! strip a cluster's column counts in is handed to it.

use std::collections::{BTreeMap, HashMap};

use crate::messages::CellRef;
use crate::model::{CellHealth, CellStatus, Concern, HealthKind, StatusCounts, StatusKind};

/// Per-status cell counts for one row or column, kept up to date as cells change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindCounts([u32; StatusKind::ALL.len()]);

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

/// Per-health cell counts for one row, one column or the fleet, kept up to date as cells
/// change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HealthCounts([u32; HealthKind::ALL.len()]);

impl HealthCounts {
    fn add(&mut self, kind: HealthKind) {
        self.0[kind as usize] += 1;
    }

    fn remove(&mut self, kind: HealthKind) {
        let slot = &mut self.0[kind as usize];
        *slot = slot.saturating_sub(1);
    }

    pub fn get(&self, kind: HealthKind) -> u32 {
        self.0[kind as usize]
    }

    /// The health present that ranks worst (`None` when no cell has one).
    pub fn worst(&self) -> Option<HealthKind> {
        HealthKind::ALL
            .into_iter()
            .filter(|kind| self.get(*kind) > 0)
            .max_by_key(|kind| (kind.severity(), *kind))
    }
}

/// Cells counted by what they show (the worse of sync and health, [`Concern`]): a cell whose
/// health outranks its sync status counts under its health, every other cell under its sync
/// status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConcernCounts {
    sync: KindCounts,
    health: HealthCounts,
}

impl ConcernCounts {
    fn add(&mut self, concern: Concern) {
        match concern {
            Concern::Sync(kind) => self.sync.add(kind),
            Concern::Health(kind) => self.health.add(kind),
        }
    }

    fn remove(&mut self, concern: Concern) {
        match concern {
            Concern::Sync(kind) => self.sync.remove(kind),
            Concern::Health(kind) => self.health.remove(kind),
        }
    }

    /// What the worst of the cells shows and how many show it; NotPlaced and 0 when none.
    pub fn worst(&self) -> (Concern, u32) {
        let sync = Some(self.sync.worst()).filter(|kind| self.sync.get(*kind) > 0);
        match sync
            .map(Concern::Sync)
            .max(self.health.worst().map(Concern::Health))
        {
            Some(Concern::Sync(kind)) => (Concern::Sync(kind), self.sync.get(kind)),
            Some(Concern::Health(kind)) => (Concern::Health(kind), self.health.get(kind)),
            None => (Concern::Sync(StatusKind::NotPlaced), 0),
        }
    }
}

/// A cluster column counted in no heat strip.
const NO_STRIP: u32 = u32::MAX;

/// Heat strips: for each resource, the cells of each strip's clusters counted by what they
/// show, kept by each cell's change like the row and column counts.
#[derive(Debug, Clone, Default, PartialEq)]
struct Strips {
    /// The strip each cluster's column is counted in, or `NO_STRIP`.
    of_cluster: Vec<u32>,
    /// Strips per resource.
    count: usize,
    /// Resource-major: `resource * count + strip`.
    counts: Vec<ConcernCounts>,
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
    /// Every cell's kind counted, for the header and the wall's tiles.
    all: KindCounts,
    /// Live health of the cells a backend reported one for, sparse (most cells are healthy
    /// or have no health), with counts per health kind per row, per column and for the header.
    health: HashMap<CellRef, CellHealth>,
    health_per_resource: Vec<HealthCounts>,
    health_per_cluster: Vec<HealthCounts>,
    health_all: HealthCounts,
    /// Since when (app clock, ms) each cell with a live health has had its kind of health.
    health_since: HashMap<CellRef, u64>,
    strips: Strips,
    /// Problem cells and since when (app clock, ms) they have been in their state.
    problems: BTreeMap<CellRef, u64>,
    /// The app clock, stamped on problems as they appear.
    now_ms: u64,
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
            all: KindCounts::default(),
            health: HashMap::new(),
            health_per_resource: vec![HealthCounts::default(); resources],
            health_per_cluster: vec![HealthCounts::default(); clusters],
            health_all: HealthCounts::default(),
            health_since: HashMap::new(),
            strips: Strips::default(),
            problems: BTreeMap::new(),
            now_ms: 0,
        };
        grid.recount();
        grid
    }

    fn recount(&mut self) {
        self.per_resource = vec![KindCounts::default(); self.resources];
        self.per_cluster = vec![KindCounts::default(); self.clusters];
        self.all = KindCounts::default();
        let old_problems = std::mem::take(&mut self.problems);
        for (index, kind) in self.kinds.iter().enumerate() {
            let (resource, cluster) = (index / self.clusters.max(1), index % self.clusters.max(1));
            self.per_resource[resource].add(*kind);
            self.per_cluster[cluster].add(*kind);
            self.all.add(*kind);
            if kind.is_problem() {
                let cell = CellRef {
                    resource: resource as u32,
                    cluster: cluster as u32,
                };
                let since = old_problems.get(&cell).copied().unwrap_or(self.now_ms);
                self.problems.insert(cell, since);
            }
        }
        self.recount_strips();
    }

    /// Counts every strip anew from the cells of the clusters in it.
    fn recount_strips(&mut self) {
        let count = self.strips.count;
        let mut counts = vec![ConcernCounts::default(); self.resources * count];
        if count > 0 {
            let of_cluster = &self.strips.of_cluster;
            for (row, kinds) in self.kinds.chunks(self.clusters.max(1)).enumerate() {
                for (kind, strip) in kinds.iter().zip(of_cluster) {
                    if *strip != NO_STRIP {
                        counts[row * count + *strip as usize].sync.add(*kind);
                    }
                }
            }
            for (cell, health) in &self.health {
                let strip = of_cluster.get(cell.cluster as usize).copied();
                let Some(strip) = strip.filter(|strip| *strip != NO_STRIP) else {
                    continue;
                };
                let kind = self.kind(cell.resource as usize, cell.cluster as usize);
                let counted = &mut counts[cell.resource as usize * count + strip as usize];
                counted.sync.remove(kind);
                counted.add(Concern::of(kind, Some(health.kind)));
            }
        }
        self.strips.counts = counts;
    }

    /// Says which heat strip each cluster's column counts in (`None`: none), `count` strips
    /// a resource. Only the clusters whose strip changed are counted again, unless so many
    /// did that counting everything is quicker.
    pub fn set_strips(&mut self, of_cluster: &[Option<u32>], count: usize) {
        let wanted: Vec<u32> = (0..self.clusters)
            .map(|cluster| {
                of_cluster
                    .get(cluster)
                    .copied()
                    .flatten()
                    .filter(|strip| (*strip as usize) < count)
                    .unwrap_or(NO_STRIP)
            })
            .collect();
        if count != self.strips.count || self.strips.of_cluster.len() != self.clusters {
            self.strips = Strips {
                of_cluster: wanted,
                count,
                counts: Vec::new(),
            };
            self.recount_strips();
            return;
        }
        let moved: Vec<usize> = (0..self.clusters)
            .filter(|cluster| self.strips.of_cluster[*cluster] != wanted[*cluster])
            .collect();
        // A column read strides the whole grid; a few columns are still cheaper than all.
        if moved.len() * 4 > self.clusters {
            self.strips.of_cluster = wanted;
            self.recount_strips();
            return;
        }
        for cluster in moved {
            let strip = wanted[cluster];
            self.move_to_strip(cluster, (strip != NO_STRIP).then_some(strip));
        }
    }

    /// Moves one cluster's column into another strip (`None`: out of every strip).
    pub fn move_to_strip(&mut self, cluster: usize, strip: Option<u32>) {
        let Some(&old) = self.strips.of_cluster.get(cluster) else {
            return;
        };
        let new = strip
            .filter(|strip| (*strip as usize) < self.strips.count)
            .unwrap_or(NO_STRIP);
        if old == new {
            return;
        }
        let has_health = self.health_per_cluster[cluster] != HealthCounts::default();
        let count = self.strips.count;
        for resource in 0..self.resources {
            let concern = if has_health {
                self.concern(resource, cluster)
            } else {
                Concern::Sync(self.kinds[resource * self.clusters + cluster])
            };
            if old != NO_STRIP {
                self.strips.counts[resource * count + old as usize].remove(concern);
            }
            if new != NO_STRIP {
                self.strips.counts[resource * count + new as usize].add(concern);
            }
        }
        self.strips.of_cluster[cluster] = new;
    }

    /// A resource's cells in one heat strip, counted by what they show.
    pub fn strip(&self, resource: usize, strip: usize) -> ConcernCounts {
        if strip >= self.strips.count {
            return ConcernCounts::default();
        }
        self.strips
            .counts
            .get(resource * self.strips.count + strip)
            .copied()
            .unwrap_or_default()
    }

    /// The counts of the strip a cell's cluster is in, if it is in one.
    fn strip_of_cell(&mut self, cell: CellRef) -> Option<&mut ConcernCounts> {
        let strip = *self.strips.of_cluster.get(cell.cluster as usize)?;
        if strip == NO_STRIP {
            return None;
        }
        self.strips
            .counts
            .get_mut(cell.resource as usize * self.strips.count + strip as usize)
    }

    /// Appends `count` resource rows, every cell Pending until the backend reports.
    pub fn add_resources(&mut self, count: usize) {
        self.resources += count;
        self.health_per_resource
            .resize(self.resources, HealthCounts::default());
        self.kinds.extend(std::iter::repeat_n(
            StatusKind::Pending,
            count * self.clusters,
        ));
        self.recount();
    }

    /// Sets the clock that new problems are stamped with.
    pub fn set_now(&mut self, now_ms: u64) {
        self.now_ms = now_ms;
    }

    /// Problem cells with the time they entered their state, worst first, then oldest first.
    pub fn worst_problems(&self, limit: usize) -> Vec<(CellRef, StatusKind, u64)> {
        let mut problems: Vec<(CellRef, StatusKind, u64)> = self
            .problems
            .iter()
            .map(|(cell, since)| {
                (
                    *cell,
                    self.kind(cell.resource as usize, cell.cluster as usize),
                    *since,
                )
            })
            .collect();
        let limit = limit.min(problems.len());
        if limit == 0 {
            return Vec::new();
        }
        let order = |a: &(CellRef, StatusKind, u64), b: &(CellRef, StatusKind, u64)| {
            b.1.cmp(&a.1).then(a.2.cmp(&b.2)).then(a.0.cmp(&b.0))
        };
        problems.select_nth_unstable_by(limit - 1, order);
        problems.truncate(limit);
        problems.sort_by(order);
        problems
    }

    /// Since when (app clock, ms) a problem cell has been in its state.
    pub fn problem_since(&self, cell: CellRef) -> Option<u64> {
        self.problems.get(&cell).copied()
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
        if old != new {
            let health = self.health.get(&cell).map(|health| health.kind);
            if let Some(strip) = self.strip_of_cell(cell) {
                strip.remove(Concern::of(old, health));
                strip.add(Concern::of(new, health));
            }
        }
        self.per_resource[resource].remove(old);
        self.per_cluster[cluster].remove(old);
        self.per_resource[resource].add(new);
        self.per_cluster[cluster].add(new);
        self.all.remove(old);
        self.all.add(new);
        self.kinds[index] = new;
        if !new.is_problem() {
            self.problems.remove(&cell);
        } else if old != new || !self.problems.contains_key(&cell) {
            self.problems.insert(cell, self.now_ms);
        }
        if status.detail().is_some_and(|detail| !detail.is_empty()) || message.is_some() {
            self.details.insert(cell, CellDetail { status, message });
        } else {
            self.details.remove(&cell);
        }
        true
    }

    /// Records a cell's live health (`None`: none any more); a cell outside the grid is
    /// refused.
    pub fn set_health(&mut self, cell: CellRef, health: Option<CellHealth>) -> bool {
        if cell.resource as usize >= self.resources || cell.cluster as usize >= self.clusters {
            return false;
        }
        let (resource, cluster) = (cell.resource as usize, cell.cluster as usize);
        let kind = self.kind(resource, cluster);
        let before = Concern::of(kind, self.health.get(&cell).map(|health| health.kind));
        let after = Concern::of(kind, health.as_ref().map(|health| health.kind));
        if before != after
            && let Some(strip) = self.strip_of_cell(cell)
        {
            strip.remove(before);
            strip.add(after);
        }
        let changed = self.health.get(&cell).map(|old| old.kind) != health.as_ref().map(|h| h.kind);
        if health.is_none() {
            self.health_since.remove(&cell);
        } else if changed {
            self.health_since.insert(cell, self.now_ms);
        }
        if let Some(old) = self.health.remove(&cell) {
            self.health_all.remove(old.kind);
            self.health_per_resource[resource].remove(old.kind);
            self.health_per_cluster[cluster].remove(old.kind);
        }
        if let Some(health) = health {
            self.health_all.add(health.kind);
            self.health_per_resource[resource].add(health.kind);
            self.health_per_cluster[cluster].add(health.kind);
            self.health.insert(cell, health);
        }
        true
    }

    /// A cell's live health, if a backend reported one.
    pub fn health(&self, resource: usize, cluster: usize) -> Option<&CellHealth> {
        self.health.get(&CellRef {
            resource: resource as u32,
            cluster: cluster as u32,
        })
    }

    /// Cells whose live health is a problem (Degraded), with since when (app clock, ms).
    pub fn health_problems(&self) -> impl Iterator<Item = (CellRef, HealthKind, u64)> + '_ {
        self.health
            .iter()
            .filter(|(_, health)| health.kind.severity().is_problem())
            .map(|(cell, health)| {
                let since = self.health_since.get(cell).copied().unwrap_or(self.now_ms);
                (*cell, health.kind, since)
            })
    }

    /// How many cells have this live health.
    pub fn health_count(&self, kind: HealthKind) -> u32 {
        self.health_all.get(kind)
    }

    pub fn resource_health(&self, resource: usize) -> HealthCounts {
        self.health_per_resource
            .get(resource)
            .copied()
            .unwrap_or_default()
    }

    pub fn cluster_health(&self, cluster: usize) -> HealthCounts {
        self.health_per_cluster
            .get(cluster)
            .copied()
            .unwrap_or_default()
    }

    /// What a cell shows: the worse of its sync status and its live health.
    pub fn concern(&self, resource: usize, cluster: usize) -> Concern {
        Concern::of(
            self.kind(resource, cluster),
            self.health(resource, cluster).map(|health| health.kind),
        )
    }

    /// A resource's roll-up: the worse of its worst sync status and its worst health.
    pub fn resource_concern(&self, resource: usize) -> Concern {
        Concern::of(
            self.resource_counts(resource).worst(),
            self.resource_health(resource).worst(),
        )
    }

    /// A cluster's roll-up: the worse of its worst sync status and its worst health.
    pub fn cluster_concern(&self, cluster: usize) -> Concern {
        Concern::of(
            self.cluster_counts(cluster).worst(),
            self.cluster_health(cluster).worst(),
        )
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
            StatusKind::Suspended => CellStatus::Suspended(String::new()),
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

    /// The cluster whose cell causes a resource's roll-up (its trace).
    pub fn resource_cause(&self, resource: usize) -> Option<usize> {
        let worst = self.resource_concern(resource);
        (0..self.clusters).find(|&cluster| self.shows(resource, cluster, worst))
    }

    /// The resource whose cell causes a cluster's roll-up.
    pub fn cluster_cause(&self, cluster: usize) -> Option<usize> {
        let worst = self.cluster_concern(cluster);
        (0..self.resources).find(|&resource| self.shows(resource, cluster, worst))
    }

    /// Whether a cell holds the status or health a roll-up shows.
    fn shows(&self, resource: usize, cluster: usize, concern: Concern) -> bool {
        match concern {
            Concern::Sync(kind) => self.kind(resource, cluster) == kind,
            Concern::Health(kind) => self
                .health(resource, cluster)
                .is_some_and(|health| health.kind == kind),
        }
    }

    /// Counts of every cell by status, kept as cells change.
    pub fn totals(&self) -> StatusCounts {
        let mut totals = StatusCounts::default();
        for kind in StatusKind::ALL {
            totals.add_n(kind, self.all.get(kind) as usize);
        }
        totals
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
    fn health_is_counted_and_replaced_per_cell() {
        let mut grid = CellGrid::new(2, 2);
        let degraded = CellHealth {
            kind: HealthKind::Degraded,
            reason: "0/3 available".into(),
            since: None,
            rule: None,
        };
        assert!(grid.set_health(cell(0, 1), Some(degraded.clone())));
        assert_eq!(grid.health(0, 1), Some(&degraded));
        assert_eq!(grid.health_count(HealthKind::Degraded), 1);
        let healthy = CellHealth {
            kind: HealthKind::Healthy,
            reason: String::new(),
            since: None,
            rule: None,
        };
        grid.set_health(cell(0, 1), Some(healthy));
        assert_eq!(grid.health_count(HealthKind::Degraded), 0);
        assert_eq!(grid.health_count(HealthKind::Healthy), 1);
        grid.set_health(cell(0, 1), None);
        assert_eq!(grid.health_count(HealthKind::Healthy), 0);
        assert!(!grid.set_health(cell(9, 0), None));
    }

    #[test]
    fn roll_ups_show_the_worse_of_sync_and_health() {
        let mut grid = CellGrid::new(2, 2);
        for (r, c) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            grid.set(cell(r, c), CellStatus::InSync, None);
        }
        grid.set(cell(1, 1), CellStatus::Drifted, None);
        let degraded = CellHealth {
            kind: HealthKind::Degraded,
            reason: "progress deadline exceeded".into(),
            since: None,
            rule: None,
        };
        grid.set_health(cell(0, 1), Some(degraded.clone()));
        assert_eq!(
            grid.resource_concern(0),
            Concern::Health(HealthKind::Degraded)
        );
        assert_eq!(
            grid.cluster_concern(1),
            Concern::Health(HealthKind::Degraded)
        );
        assert_eq!(grid.resource_cause(0), Some(1));
        assert_eq!(grid.cluster_cause(1), Some(0), "Degraded outranks Drifted");
        assert_eq!(grid.cluster_concern(0), Concern::Sync(StatusKind::InSync));
        assert_eq!(grid.resource_health(0).get(HealthKind::Degraded), 1);
        // Progressing ranks as Pending: a Drifted row still shows Drifted.
        grid.set_health(
            cell(1, 1),
            Some(CellHealth {
                kind: HealthKind::Progressing,
                reason: String::new(),
                since: None,
                rule: None,
            }),
        );
        assert_eq!(grid.resource_concern(1), Concern::Sync(StatusKind::Drifted));
        grid.set_health(cell(0, 1), None);
        assert_eq!(grid.resource_concern(0), Concern::Sync(StatusKind::InSync));
        assert_eq!(grid.cluster_concern(1), Concern::Sync(StatusKind::Drifted));
        // Rows added later start with no health.
        grid.add_resources(1);
        assert!(grid.set_health(cell(2, 0), Some(degraded)));
        assert_eq!(
            grid.resource_concern(2),
            Concern::Health(HealthKind::Degraded)
        );
    }

    #[test]
    fn heat_strips_count_what_their_cells_show_as_cells_and_members_change() {
        let mut grid = CellGrid::new(2, 4);
        for (r, c) in [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1)] {
            grid.set(cell(r, c), CellStatus::InSync, None);
        }
        // Strip 0 holds clusters 0 and 1, strip 1 cluster 2; cluster 3 is in none.
        grid.set_strips(&[Some(0), Some(0), Some(1), None], 2);
        assert_eq!(
            grid.strip(0, 0).worst(),
            (Concern::Sync(StatusKind::InSync), 2)
        );
        assert_eq!(
            grid.strip(1, 1).worst(),
            (Concern::Sync(StatusKind::Pending), 1)
        );
        grid.set(cell(0, 1), CellStatus::Drifted, None);
        assert_eq!(
            grid.strip(0, 0).worst(),
            (Concern::Sync(StatusKind::Drifted), 1)
        );
        let degraded = CellHealth {
            kind: HealthKind::Degraded,
            reason: String::new(),
            since: None,
            rule: None,
        };
        grid.set_health(cell(0, 0), Some(degraded.clone()));
        assert_eq!(
            grid.strip(0, 0).worst(),
            (Concern::Health(HealthKind::Degraded), 1),
            "a cell counts under its health when that is worse"
        );
        grid.set(cell(0, 3), CellStatus::Failed("boom".into()), None);
        assert_eq!(
            grid.strip(0, 1).worst(),
            (Concern::Sync(StatusKind::InSync), 1),
            "a cluster in no strip counts nowhere"
        );
        grid.move_to_strip(3, Some(1));
        assert_eq!(
            grid.strip(0, 1).worst(),
            (Concern::Sync(StatusKind::Failed), 1)
        );
        grid.move_to_strip(0, None);
        assert_eq!(
            grid.strip(0, 0).worst(),
            (Concern::Sync(StatusKind::Drifted), 1)
        );
        grid.set_health(cell(0, 0), None);
        grid.move_to_strip(0, Some(0));
        assert_eq!(
            grid.strip(0, 0).worst(),
            (Concern::Sync(StatusKind::Drifted), 1),
            "health dropped while out of the strip is not counted back"
        );
        // Counting everything again agrees with the counts kept on the way.
        let kept = grid.clone();
        grid.set_strips(&[None; 4], 2);
        grid.set_strips(&[Some(0), Some(0), Some(1), Some(1)], 2);
        assert_eq!(grid, kept);
        assert_eq!(
            grid.strip(0, 5).worst(),
            (Concern::Sync(StatusKind::NotPlaced), 0)
        );
    }

    #[test]
    fn cells_outside_the_grid_are_refused() {
        let mut grid = CellGrid::new(1, 1);
        assert!(!grid.set(cell(5, 0), CellStatus::InSync, None));
        assert!(!grid.replace(vec![StatusKind::InSync; 3], Vec::new()));
    }
}
