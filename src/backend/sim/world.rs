//! The simulated fleet's live state: member clusters with health and latency, what each holds
//! for every cell, drift that appears over time, a propagation that fails, and applies and
//! deletes that really change it. Cell statuses follow the shared rules of
//! [`crate::backend::cells`], from what the simulation knows. Deterministic for a seed:
//! [`SimCore`] is plain data driven by explicit time. It must not touch real clusters, the
//! terminal or the app's state.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::live_status;
use super::scenario::{Scenario, SimPodState, SplitMix64};
use crate::backend::cells::{self, CellFacts, Reach};
use crate::engine::compare::secrets;
use crate::engine::{Decision, Fleet};
use crate::messages::{BackendEvent, CellRef, CellUpdate, DriftField, HealthUpdate};
use crate::model::{CellHealth, CellStatus, ClusterSpec, ClusterStatus, Health, HealthKind};

/// A field whose live value left the desired one.
#[derive(Debug, Clone, PartialEq)]
pub struct SimDrift {
    pub path: String,
    pub desired: Value,
    pub live: Value,
    pub manager: String,
    /// Simulated milliseconds since start when it appeared.
    pub since_ms: u64,
}

impl SimDrift {
    /// What a server-side apply that is not forced answers when it would set this field: the
    /// API server's words for a conflict with its manager.
    pub fn conflict(&self, api_version: &str) -> String {
        format!(
            "Apply failed with 1 conflict: conflict with \"{}\" using {api_version}: {}",
            self.manager,
            self.path.replace('/', ".")
        )
    }
}

/// What a simulated cluster holds for one cell.
#[derive(Debug, Clone, Default)]
struct SimCell {
    applied: bool,
    missing: bool,
    drift: Option<Box<SimDrift>>,
}

#[derive(Debug, Clone)]
struct SimCluster {
    health: Health,
    /// Down for an unreachable cluster, else answering.
    reach: Reach,
    version: String,
    latency_ms: u64,
    message: String,
}

/// The simulated fleet's live state, advanced by explicit time.
#[derive(Debug, Clone)]
pub struct SimCore {
    fleet: Arc<Fleet>,
    clusters: Vec<SimCluster>,
    /// Placement per cell, resource-major: `Ok` placed, `Err(index)` into `reasons`.
    placement: Vec<Result<(), u32>>,
    reasons: Vec<String>,
    cells: Vec<SimCell>,
    failures: HashMap<usize, String>,
    /// Cells whose last apply met a field another manager owns: the conflict it answered,
    /// until an apply takes the field back (forced) or the drift is gone.
    conflicts: HashMap<usize, (String, String)>,
    /// Cells whose workload's rollout stalled (live health Degraded).
    stalled: std::collections::HashSet<usize>,
    /// Cells one of whose workload's pods is in trouble, and the scheduler's words for it.
    pod_troubles: HashMap<usize, (SimPodState, String)>,
    /// Cells whose workload's pods run an older tag of their image.
    old_tags: HashMap<usize, String>,
    rng: SplitMix64,
    drift_every_ms: u64,
    next_drift_ms: u64,
}

/// Above this many cells the simulated clusters report the health of troubled workloads only,
/// not every settled one: a healthy cell's verdict is kept per cell, and at the scale demo's
/// sizes (10,000 clusters × 1,000 resources) that would outweigh the matrix itself.
const SETTLED_HEALTH_CELLS: usize = 200_000;

/// Milliseconds a silent cluster is given before it is reported Unreachable.
pub const CONNECT_TIMEOUT_MS: u64 = 3_000;

impl SimCore {
    pub fn new(fleet: Arc<Fleet>, scenario: &Scenario, seed: u64) -> SimCore {
        let mut rng = SplitMix64::new(seed);
        let clusters: Vec<SimCluster> = fleet
            .clusters
            .iter()
            .map(|spec| simulated_cluster(spec, scenario, &mut rng))
            .collect();
        let (placement, reasons) = placements(&fleet);
        let cells = placement
            .iter()
            .map(|placed| SimCell {
                applied: placed.is_ok(),
                ..SimCell::default()
            })
            .collect();
        let mut core = SimCore {
            fleet,
            clusters,
            placement,
            reasons,
            cells,
            failures: HashMap::new(),
            conflicts: HashMap::new(),
            stalled: Default::default(),
            pod_troubles: HashMap::new(),
            old_tags: HashMap::new(),
            rng,
            drift_every_ms: scenario.drift_every_seconds * 1000,
            next_drift_ms: 0,
        };
        core.next_drift_ms = core.next_drift_delay();
        core.apply_scenario(scenario);
        core
    }

    /// The fleet changed (an edited placement): cells newly placed wait to be applied, cells
    /// no longer placed but applied are orphaned. A fleet of another shape starts afresh.
    pub fn set_fleet(&mut self, fleet: Arc<Fleet>) {
        let same_shape = fleet.resources.len() == self.fleet.resources.len()
            && fleet.clusters.len() == self.clusters.len();
        let (placement, reasons) = placements(&fleet);
        if !same_shape {
            self.cells = placement
                .iter()
                .map(|placed| SimCell {
                    applied: placed.is_ok(),
                    ..SimCell::default()
                })
                .collect();
            self.failures.clear();
            self.conflicts.clear();
            self.pod_troubles.clear();
            self.old_tags.clear();
        }
        self.placement = placement;
        self.reasons = reasons;
        self.fleet = fleet;
    }

    fn apply_scenario(&mut self, scenario: &Scenario) {
        for key in &scenario.pending {
            if let Some(resource) = self.resource_index(key) {
                for cluster in 0..self.clusters.len() {
                    let index = self.index(resource, cluster);
                    self.cells[index].applied = false;
                }
            }
        }
        for failure in &scenario.failures {
            if let (Some(resource), Some(cluster)) = (
                self.resource_index(&failure.resource),
                self.cluster_index(&failure.cluster),
            ) {
                let index = self.index(resource, cluster);
                self.cells[index].applied = false;
                self.failures.insert(index, failure.message.clone());
            }
        }
        for cell in &scenario.degraded {
            if let (Some(resource), Some(cluster)) = (
                self.resource_index(&cell.resource),
                self.cluster_index(&cell.cluster),
            ) {
                let index = self.index(resource, cluster);
                self.stalled.insert(index);
            }
        }
        for pod in &scenario.pods {
            if let (Some(resource), Some(cluster)) = (
                self.resource_index(&pod.resource),
                self.cluster_index(&pod.cluster),
            ) {
                let index = self.index(resource, cluster);
                self.pod_troubles
                    .insert(index, (pod.state, pod.message.clone()));
            }
        }
        for image in &scenario.old_images {
            if let (Some(resource), Some(cluster)) = (
                self.resource_index(&image.resource),
                self.cluster_index(&image.cluster),
            ) {
                let index = self.index(resource, cluster);
                self.old_tags.insert(index, image.tag.clone());
            }
        }
        for drift in &scenario.drift {
            if let (Some(resource), Some(cluster)) = (
                self.resource_index(&drift.resource),
                self.cluster_index(&drift.cluster),
            ) {
                let desired = self.desired_value(resource, cluster, &drift.path);
                let index = self.index(resource, cluster);
                self.cells[index].drift = Some(Box::new(SimDrift {
                    path: drift.path.clone(),
                    desired: desired.unwrap_or(Value::Null),
                    live: drift.live.clone(),
                    manager: drift.manager.clone(),
                    since_ms: 0,
                }));
            }
        }
    }

    fn next_drift_delay(&mut self) -> u64 {
        if self.drift_every_ms == 0 {
            return u64::MAX;
        }
        // Uniform in [0.5, 1.5) × the mean interval.
        self.drift_every_ms / 2 + self.rng.below(self.drift_every_ms as usize) as u64
    }

    fn index(&self, resource: usize, cluster: usize) -> usize {
        resource * self.clusters.len() + cluster
    }

    fn resource_index(&self, key: &str) -> Option<usize> {
        self.fleet
            .resources
            .iter()
            .position(|resource| resource.target.display_key() == key)
    }

    fn cluster_index(&self, name: &str) -> Option<usize> {
        self.fleet
            .clusters
            .iter()
            .position(|cluster| cluster.name == name)
    }

    fn desired_value(&self, resource: usize, cluster: usize, path: &str) -> Option<Value> {
        match self.fleet.decide(resource, cluster) {
            Decision::Placed { object, .. } => object.pointer(path).cloned(),
            Decision::Suspended { .. } | Decision::NotPlaced { .. } => None,
        }
    }

    pub fn cluster_count(&self) -> usize {
        self.clusters.len()
    }

    /// Round-trip latency of a cluster, in milliseconds.
    pub fn latency_ms(&self, cluster: usize) -> u64 {
        self.clusters.get(cluster).map_or(0, |c| c.latency_ms)
    }

    /// What a probe of the cluster reports once it has answered (or timed out).
    pub fn cluster_status(&self, cluster: usize) -> ClusterStatus {
        let Some(sim) = self.clusters.get(cluster) else {
            return ClusterStatus::default();
        };
        let answered = sim.health != Health::Unreachable;
        ClusterStatus {
            health: sim.health,
            version: answered.then(|| sim.version.clone()),
            latency_ms: answered.then_some(sim.latency_ms),
            message: sim.message.clone(),
        }
    }

    /// Clusters that answer requests (everything but the unreachable ones).
    pub fn answering_clusters(&self) -> Vec<u32> {
        (0..self.clusters.len())
            .filter(|&cluster| self.clusters[cluster].health != Health::Unreachable)
            .map(|cluster| cluster as u32)
            .collect()
    }

    /// How long until the cluster's first probe completes.
    pub fn probe_delay_ms(&self, cluster: usize) -> u64 {
        match self.clusters.get(cluster) {
            Some(sim) if sim.health == Health::Unreachable => CONNECT_TIMEOUT_MS,
            Some(sim) => sim.latency_ms * 2,
            None => 0,
        }
    }

    /// The status of one cell as the simulated cluster reports it.
    pub fn status(&self, resource: usize, cluster: usize) -> CellStatus {
        cells::judge(&SimFacts {
            core: self,
            resource,
            cluster,
            index: self.index(resource, cluster),
        })
        .status()
    }

    /// Extra words about a cell for the detail pane.
    pub fn message(&self, resource: usize, cluster: usize) -> Option<String> {
        let index = self.index(resource, cluster);
        if self.drift(resource, cluster).is_some() {
            // The apply that met the other manager's field says so; else the drift does.
            if let Some((_, conflict)) = self.conflicts.get(&index) {
                return Some(conflict.clone());
            }
            return cells::drift_summary(&self.drift_fields(resource, cluster));
        }
        if self.cells[index].missing {
            return Some("deleted on the cluster outside flotilla".into());
        }
        None
    }

    /// The drifted field of a cell, if any (a field the fleet's ignore rules cover is not
    /// drift).
    pub fn drift(&self, resource: usize, cluster: usize) -> Option<&SimDrift> {
        let drift = self.cells[self.index(resource, cluster)].drift.as_deref()?;
        (!self.ignored(resource, cluster, drift)).then_some(drift)
    }

    fn ignored(&self, resource: usize, cluster: usize, drift: &SimDrift) -> bool {
        let (Some(target), Some(spec)) = (
            self.fleet.resources.get(resource),
            self.fleet.clusters.get(cluster),
        ) else {
            return false;
        };
        let path = pointer_segments(&drift.path);
        self.fleet.ignores.iter().any(|rule| {
            rule.covers_cluster(spec)
                && rule.covers_resource(&target.target)
                && rule.covers_field(&path, Some(&drift.manager))
        })
    }

    /// The drift of a cell as the console's drift view reads it, field by field.
    pub fn drift_fields(&self, resource: usize, cluster: usize) -> Vec<DriftField> {
        self.drift(resource, cluster)
            .map(|drift| DriftField {
                path: drift.path.clone(),
                desired: drift.desired.clone(),
                live: drift.live.clone(),
                manager: Some(drift.manager.clone()),
                time: Some(format!("{}s into the demo", drift.since_ms / 1000)),
                secret: self.fleet.resources.get(resource).is_some_and(|r| {
                    secrets::is_secret_kind(&r.target.api_version, &r.target.kind)
                        && secrets::is_value_pointer(&drift.path)
                }),
            })
            .into_iter()
            .collect()
    }

    /// Drift events for the drifted cells among `updates`.
    pub fn drift_events(&self, updates: &[CellUpdate]) -> Vec<BackendEvent> {
        cells::drift_events(updates, |cell| {
            self.drift_fields(cell.resource as usize, cell.cluster as usize)
        })
    }

    /// Drift events for every drifted cell, to follow a snapshot.
    pub fn all_drift_events(&self) -> Vec<BackendEvent> {
        let mut events = Vec::new();
        for resource in 0..self.fleet.resources.len() {
            for cluster in 0..self.clusters.len() {
                if self.status(resource, cluster) == CellStatus::Drifted {
                    events.push(BackendEvent::Drift {
                        cell: CellRef {
                            resource: resource as u32,
                            cluster: cluster as u32,
                        },
                        fields: self.drift_fields(resource, cluster),
                    });
                }
            }
        }
        events
    }

    /// Puts the status the cluster's controllers would report on an object it holds: settled,
    /// or a stalled rollout for a cell the scenario degrades.
    pub fn report_status(&self, resource: usize, cluster: usize, stored: &mut Value) {
        let status = if self.stalled.contains(&self.index(resource, cluster)) {
            Some(live_status::stalled(stored))
        } else {
            live_status::settled(stored)
        };
        if let Some(fields) = stored.as_object_mut() {
            if let Some(meta) = fields.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("generation".into(), Value::from(1));
            }
            if let Some(status) = status {
                fields.insert("status".into(), status);
            }
        }
    }

    /// The trouble the scenario puts one of this cell's workload's pods in, and the
    /// scheduler's words for it.
    pub fn pod_trouble(&self, resource: usize, cluster: usize) -> Option<(SimPodState, &str)> {
        self.pod_troubles
            .get(&self.index(resource, cluster))
            .map(|(state, message)| (*state, message.as_str()))
    }

    /// The older tag this cell's workload's pods run, if the scenario holds them back.
    pub fn old_tag(&self, resource: usize, cluster: usize) -> Option<&str> {
        self.old_tags
            .get(&self.index(resource, cluster))
            .map(String::as_str)
    }

    /// Whether the scenario stalled this cell's rollout (its live health is Degraded).
    pub fn is_stalled(&self, resource: usize, cluster: usize) -> bool {
        self.stalled.contains(&self.index(resource, cluster))
    }

    /// Live health the console is told of at the start, before any cluster is read: the held
    /// workloads whose rollout stalled. Each cluster's settled workloads follow with its
    /// first answer ([`SimCore::column_health`]).
    pub fn health_events(&self) -> Vec<BackendEvent> {
        let mut stalled: Vec<usize> = self.stalled.iter().copied().collect();
        stalled.sort_unstable();
        let clusters = self.clusters.len().max(1);
        let cells: Vec<CellRef> = stalled
            .into_iter()
            .map(|index| CellRef {
                resource: (index / clusters) as u32,
                cluster: (index % clusters) as u32,
            })
            .collect();
        let updates = self.health_of(&cells);
        if updates.is_empty() {
            Vec::new()
        } else {
            vec![BackendEvent::Health(updates)]
        }
    }

    /// What `cluster` says when it is first read: its status and, if it answers, the health of
    /// every workload it holds, as a live cluster's watch reports it ([`Self::column_health`];
    /// above [`SETTLED_HEALTH_CELLS`] cells only the troubled ones, sent at the start). The
    /// demo's task sends these in order; a test that replays the demo calls the same.
    pub fn probe(
        &self,
        cluster: usize,
        settled: &mut HashMap<(usize, (i32, u32)), Option<CellHealth>>,
    ) -> Vec<BackendEvent> {
        let status = self.cluster_status(cluster);
        let answers = !matches!(status.health, Health::Unreachable);
        let mut events = vec![BackendEvent::Cluster {
            cluster: cluster as u32,
            status,
        }];
        let cells = self.fleet.resources.len() * self.cluster_count();
        if answers && cells <= SETTLED_HEALTH_CELLS {
            let health = self.column_health(cluster, settled);
            if !health.is_empty() {
                events.push(BackendEvent::Health(health));
            }
        }
        events
    }

    /// The live health of every workload `cluster` holds, as its controllers report it when
    /// the cluster is read: settled and healthy, or stalled where the scenario degrades it.
    /// Cells of one (resource, variant) settle alike, so `settled` keeps each one's health
    /// across calls and a fleet of many clusters renders each variant once.
    pub fn column_health(
        &self,
        cluster: usize,
        settled: &mut HashMap<(usize, (i32, u32)), Option<CellHealth>>,
    ) -> Vec<HealthUpdate> {
        let mut updates = Vec::new();
        if cluster >= self.clusters.len() {
            return updates;
        }
        for resource in 0..self.fleet.resources.len() {
            let index = self.index(resource, cluster);
            if !self.cells[index].applied {
                continue;
            }
            let cell = CellRef {
                resource: resource as u32,
                cluster: cluster as u32,
            };
            let Some(variant) = self.fleet.variant(resource, cluster) else {
                continue;
            };
            if self.stalled.contains(&index) {
                updates.extend(self.health_of(&[cell]));
                continue;
            }
            let health = settled
                .entry((resource, variant))
                .or_insert_with(|| {
                    self.health_of(&[cell])
                        .into_iter()
                        .next()
                        .and_then(|update| update.health)
                })
                .clone();
            if let Some(health) = health {
                updates.push(HealthUpdate {
                    cell,
                    health: Some(health),
                });
            }
        }
        updates
    }

    /// The live health of these cells' objects as their clusters hold them: settled, or a
    /// stalled rollout where the scenario degrades it. Cells not held, and kinds without a
    /// notion of health, are left out.
    pub fn health_of(&self, cells: &[CellRef]) -> Vec<HealthUpdate> {
        let mut updates = Vec::new();
        for cell in cells {
            let (resource, cluster) = (cell.resource as usize, cell.cluster as usize);
            if resource >= self.fleet.resources.len() || cluster >= self.clusters.len() {
                continue;
            }
            if !self.cells[self.index(resource, cluster)].applied {
                continue;
            }
            let Decision::Placed { object, .. } = self.fleet.decide(resource, cluster) else {
                continue;
            };
            let mut stored = object;
            self.report_status(resource, cluster, &mut stored);
            if let Some(health) = crate::engine::health::assess(&stored) {
                updates.push(HealthUpdate {
                    cell: *cell,
                    health: Some(health),
                });
            }
        }
        updates
    }

    /// What a just-written workload's health reads until its controller has rolled it out:
    /// Progressing, for the cells of `cells` that are held and whose kind has a health.
    pub fn rolling_out(&self, cells: &[CellRef]) -> Vec<HealthUpdate> {
        self.health_of(cells)
            .into_iter()
            .map(|update| HealthUpdate {
                cell: update.cell,
                health: Some(CellHealth {
                    kind: HealthKind::Progressing,
                    reason: "waiting for the new pods to become available".into(),
                    since: None,
                    rule: None,
                }),
            })
            .collect()
    }

    /// The whole matrix as a snapshot event. A cell the fleet does not place and the cluster
    /// does not hold is NotPlaced without its reason: the console asks the fleet for it.
    pub fn snapshot(&self) -> BackendEvent {
        BackendEvent::snapshot(self.fleet.resources.len(), self.clusters.len(), |r, c| {
            let index = self.index(r, c);
            if self.placement[index].is_err() && !self.cells[index].applied {
                return (CellStatus::NotPlaced(String::new()), None);
            }
            (self.status(r, c), self.message(r, c))
        })
    }

    fn update(&self, resource: usize, cluster: usize) -> CellUpdate {
        CellUpdate {
            cell: CellRef {
                resource: resource as u32,
                cluster: cluster as u32,
            },
            status: self.status(resource, cluster),
            message: self.message(resource, cluster),
        }
    }

    /// Applies the desired objects of `cells` on one cluster: placed cells become InSync,
    /// unless the cluster is unreachable, the scenario makes the apply fail, or — as a
    /// server-side apply that is not `force`d answers — another manager owns a drifted field
    /// (the cell then shows the conflict, as `flotilla apply` reports it).
    pub fn apply(&mut self, cluster: usize, cells: &[CellRef], force: bool) -> Vec<CellUpdate> {
        let reachable = self.clusters[cluster].health != Health::Unreachable;
        let mut updates = Vec::new();
        for cell in cells.iter().filter(|cell| cell.cluster as usize == cluster) {
            let index = self.index(cell.resource as usize, cluster);
            if !reachable || self.failures.contains_key(&index) {
                updates.push(self.update(cell.resource as usize, cluster));
                continue;
            }
            if let (false, Some(drift)) = (force, &self.cells[index].drift) {
                let api_version = &self.fleet.resources[cell.resource as usize]
                    .target
                    .api_version;
                let conflict = (drift.manager.clone(), drift.conflict(api_version));
                self.conflicts.insert(index, conflict);
                updates.push(self.update(cell.resource as usize, cluster));
                continue;
            }
            self.conflicts.remove(&index);
            let sim = &mut self.cells[index];
            sim.applied = self.placement[index].is_ok();
            sim.missing = false;
            sim.drift = None;
            updates.push(self.update(cell.resource as usize, cluster));
        }
        updates
    }

    /// Deletes the objects of `cells` on one cluster (an unreachable one keeps them).
    pub fn delete(&mut self, cluster: usize, cells: &[CellRef]) -> Vec<CellUpdate> {
        let reachable = self.clusters[cluster].health != Health::Unreachable;
        let mut updates = Vec::new();
        for cell in cells.iter().filter(|cell| cell.cluster as usize == cluster) {
            let index = self.index(cell.resource as usize, cluster);
            if reachable {
                let sim = &mut self.cells[index];
                sim.applied = false;
                sim.missing = false;
                sim.drift = None;
            }
            updates.push(self.update(cell.resource as usize, cluster));
        }
        updates
    }

    /// Advances simulated time: drift appears on a random in-sync cell of a reachable cluster.
    pub fn advance(&mut self, now_ms: u64) -> Vec<CellUpdate> {
        let mut updates = Vec::new();
        while now_ms >= self.next_drift_ms {
            let at = self.next_drift_ms;
            self.next_drift_ms = at.saturating_add(self.next_drift_delay());
            if let Some(update) = self.drift_one(at) {
                updates.push(update);
            }
        }
        updates
    }

    /// Milliseconds of simulated time at which the next drift appears.
    pub fn next_event_ms(&self) -> u64 {
        self.next_drift_ms
    }

    fn drift_one(&mut self, now_ms: u64) -> Option<CellUpdate> {
        let count = self.cells.len();
        if count == 0 {
            return None;
        }
        let start = self.rng.below(count);
        let clusters = self.clusters.len();
        let candidate = (0..count)
            .map(|step| (start + step) % count)
            .find(|&index| {
                let cluster = index % clusters;
                self.placement[index].is_ok()
                    && self.clusters[cluster].health == Health::Ready
                    && self.cells[index].applied
                    && self.cells[index].drift.is_none()
                    && !self.cells[index].missing
                    && !self.failures.contains_key(&index)
            })?;
        let (resource, cluster) = (candidate / clusters, candidate % clusters);
        if self.rng.below(8) == 0 {
            self.cells[candidate].missing = true;
            return Some(self.update(resource, cluster));
        }
        let Decision::Placed { object, .. } = self.fleet.decide(resource, cluster) else {
            return None;
        };
        let (path, desired) = pick_leaf(&object, &mut self.rng)?;
        let (live, manager) = mutate(&desired, &mut self.rng);
        self.cells[candidate].drift = Some(Box::new(SimDrift {
            path,
            desired,
            live,
            manager,
            since_ms: now_ms,
        }));
        Some(self.update(resource, cluster))
    }
}

/// What the simulated clusters hold, read and written cell by cell, for the sim's
/// [`crate::backend::fanout::cluster_api::ClusterApi`] (`super::cluster_api`).
impl SimCore {
    /// The fleet the simulation renders its cells from.
    pub fn fleet(&self) -> &Arc<Fleet> {
        &self.fleet
    }

    /// Whether the cluster holds the cell's object: `None` when it does not (pending, failed
    /// or deleted outside flotilla), else the field another manager changed on it, if any. The
    /// drift is what the cluster holds, ignore rules or not.
    pub fn held(&self, resource: usize, cluster: usize) -> Option<Option<&SimDrift>> {
        let cell = self.cells.get(self.index(resource, cluster))?;
        (cell.applied && !cell.missing).then_some(cell.drift.as_deref())
    }

    /// The API error the scenario makes every apply of this cell fail with.
    pub fn apply_failure(&self, resource: usize, cluster: usize) -> Option<&str> {
        self.failures
            .get(&self.index(resource, cluster))
            .map(String::as_str)
    }

    /// The cluster now holds the cell's object, with `drift` the field another manager still
    /// owns a value of (`None` once every field is the applied one).
    pub fn store_applied(&mut self, resource: usize, cluster: usize, drift: Option<SimDrift>) {
        let index = self.index(resource, cluster);
        if let Some(cell) = self.cells.get_mut(index) {
            cell.applied = true;
            cell.missing = false;
            cell.drift = drift.map(Box::new);
        }
    }
}

/// What the simulation knows of one cell, for the shared cell rules: everything, so a cell
/// is never waiting for a list, and what a cluster holds is known even when it cannot be
/// reached.
struct SimFacts<'a> {
    core: &'a SimCore,
    resource: usize,
    cluster: usize,
    index: usize,
}

impl CellFacts for SimFacts<'_> {
    type Desired = ();

    fn placed(&self) -> bool {
        self.core.placement[self.index].is_ok()
    }

    fn not_placed_reason(&self) -> String {
        match self.core.placement[self.index] {
            Err(reason) => self.core.reasons[reason as usize].clone(),
            Ok(()) => String::new(),
        }
    }

    fn suspended(&self) -> Option<String> {
        self.core
            .fleet
            .suspended_reason(self.resource, self.cluster)
            .map(str::to_string)
    }

    fn present(&self) -> bool {
        let cell = &self.core.cells[self.index];
        cell.applied && !cell.missing
    }

    fn reach(&self) -> &Reach {
        &self.core.clusters[self.cluster].reach
    }

    fn unserved(&self) -> Option<(String, String)> {
        None
    }

    fn failure(&self) -> Option<(CellStatus, String)> {
        if let Some(message) = self.core.failures.get(&self.index) {
            return Some((CellStatus::Failed(message.clone()), message.clone()));
        }
        // A conflict stands while the other manager's field does.
        let (manager, message) = self.core.conflicts.get(&self.index)?;
        self.core.cells[self.index].drift.as_ref()?;
        Some((CellStatus::Conflict(manager.clone()), message.clone()))
    }

    fn applying(&self) -> bool {
        false
    }

    fn desired(&self) -> Result<(), String> {
        Ok(())
    }

    fn listed(&self) -> bool {
        true
    }

    fn seen(&self) -> bool {
        self.core.cells[self.index].missing
    }

    fn drift(&self, _: &()) -> Vec<DriftField> {
        self.core.drift_fields(self.resource, self.cluster)
    }
}

fn simulated_cluster(spec: &ClusterSpec, scenario: &Scenario, rng: &mut SplitMix64) -> SimCluster {
    let region = spec.region.as_deref().unwrap_or("default");
    let base = scenario
        .latency_ms_by_region
        .get(region)
        .or_else(|| scenario.latency_ms_by_region.get("default"))
        .copied()
        .unwrap_or(20 + (region.len() as u64 * 13) % 130);
    let latency_ms = (base + rng.below(10) as u64).clamp(20, 150);
    let version = scenario
        .versions
        .get(&spec.name)
        .or_else(|| scenario.versions.get("default"))
        .cloned()
        .unwrap_or_else(|| "v1.36.3".into());
    let (health, message) = if scenario.unreachable.contains(&spec.name) {
        (
            Health::Unreachable,
            format!(
                "dial tcp {}:6443: i/o timeout after {}s",
                spec.name,
                CONNECT_TIMEOUT_MS / 1000
            ),
        )
    } else if scenario.not_ready.contains(&spec.name) {
        (
            Health::NotReady,
            "readyz: [-]etcd failed: etcd cluster is unavailable or misconfigured".into(),
        )
    } else {
        (Health::Ready, String::new())
    };
    let reach = match health {
        Health::Unreachable => Reach::Down(message.clone()),
        _ => Reach::Answering,
    };
    SimCluster {
        health,
        reach,
        version,
        latency_ms,
        message,
    }
}

/// The segments of a JSON pointer, every token a field name.
fn pointer_segments(pointer: &str) -> Vec<crate::engine::compare::diff::Segment> {
    jsonptr::Pointer::parse(pointer)
        .map(|pointer| {
            pointer
                .tokens()
                .map(|token| {
                    crate::engine::compare::diff::Segment::Field(token.decoded().into_owned())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Picks a scalar inside `spec` or `data` (the operator's intent), deterministically.
fn pick_leaf(object: &Value, rng: &mut SplitMix64) -> Option<(String, Value)> {
    let mut leaves = Vec::new();
    for root in ["spec", "data"] {
        if let Some(value) = object.get(root) {
            collect_leaves(value, &format!("/{root}"), &mut leaves);
        }
    }
    if leaves.is_empty() {
        return None;
    }
    // Replicas are what people change most at 3 a.m.; prefer them when present.
    if let Some(replicas) = leaves.iter().find(|(path, _)| path == "/spec/replicas")
        && rng.below(2) == 0
    {
        return Some(replicas.clone());
    }
    let index = rng.below(leaves.len());
    Some(leaves.swap_remove(index))
}

fn collect_leaves(value: &Value, path: &str, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let escaped = crate::engine::document::parse::escape_token(key);
                collect_leaves(child, &format!("{path}/{escaped}"), out);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                collect_leaves(child, &format!("{path}/{index}"), out);
            }
        }
        scalar => out.push((path.to_string(), scalar.clone())),
    }
}

fn mutate(desired: &Value, rng: &mut SplitMix64) -> (Value, String) {
    match desired {
        Value::Number(number) => {
            let base = number.as_i64().unwrap_or(1);
            (
                Value::from(base + 1 + rng.below(3) as i64),
                "kubectl-scale".into(),
            )
        }
        Value::Bool(flag) => (Value::Bool(!flag), "kubectl-edit".into()),
        Value::String(text) => (
            Value::String(format!("{text}-hotfix")),
            "kubectl-edit".into(),
        ),
        other => (other.clone(), "kubectl-edit".into()),
    }
}

/// Placement of every cell, resource-major: `Ok` placed, `Err(index)` into the reasons.
fn placements(fleet: &Fleet) -> (Vec<Result<(), u32>>, Vec<String>) {
    let cluster_count = fleet.clusters.len();
    let mut reason_ids: HashMap<String, u32> = HashMap::new();
    let mut reasons = Vec::new();
    let mut placement = Vec::with_capacity(fleet.resources.len() * cluster_count);
    for resource in 0..fleet.resources.len() {
        for cluster in 0..cluster_count {
            placement.push(match fleet.placement(resource, cluster) {
                Ok(_) => Ok(()),
                Err(reason) => Err(*reason_ids.entry(reason.clone()).or_insert_with(|| {
                    reasons.push(reason);
                    (reasons.len() - 1) as u32
                })),
            });
        }
    }
    (placement, reasons)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::load_fleet;
    use crate::model::StatusKind;

    fn demo_core(seed: u64) -> SimCore {
        let (fleet, errors) = load_fleet(&crate::fleet::demo::demo_files());
        assert!(errors.is_empty(), "{errors:?}");
        SimCore::new(Arc::new(fleet), &Scenario::demo(), seed)
    }

    fn kinds(core: &SimCore) -> Vec<StatusKind> {
        match core.snapshot() {
            BackendEvent::Snapshot { kinds, .. } => kinds,
            other => panic!("expected a snapshot, got {other:?}"),
        }
    }

    #[test]
    fn an_edited_fleet_leaves_new_cells_pending_until_applied_and_old_ones_orphaned() {
        let files = crate::fleet::demo::demo_files();
        let mut core = demo_core(7);
        let fleet = core.fleet.clone();
        let cronjob = fleet
            .resources
            .iter()
            .position(|r| r.target.kind == "CronJob")
            .unwrap();
        let batch = fleet.cluster_index("batch-ap-south-1").unwrap();
        let dev = fleet.cluster_index("dev-eu-west-1").unwrap();
        assert_eq!(core.status(cronjob, batch), CellStatus::InSync);
        let source = fleet.placement_source(&files, cronjob).unwrap();
        let edit = crate::engine::edit::placement::EditablePlacement {
            clusters: Default::default(),
            selector: "env=dev".into(),
            ..Default::default()
        };
        let preview = crate::engine::edit::placement::preview_placement(
            &fleet,
            &files,
            &source,
            &source.with(&edit).unwrap(),
        );
        core.set_fleet(preview.fleet.unwrap());
        assert_eq!(core.status(cronjob, dev), CellStatus::Pending);
        assert_eq!(core.status(cronjob, batch), CellStatus::Orphaned);
        let cell = CellRef {
            resource: cronjob as u32,
            cluster: dev as u32,
        };
        core.apply(dev, &[cell], false);
        assert_eq!(core.status(cronjob, dev), CellStatus::InSync);
    }

    #[test]
    fn the_demo_has_unreachable_and_not_ready_clusters() {
        let core = demo_core(7);
        let healths: Vec<Health> = (0..core.cluster_count())
            .map(|c| core.cluster_status(c).health)
            .collect();
        assert!(healths.contains(&Health::Unreachable));
        assert!(healths.contains(&Health::NotReady));
        assert!(healths.iter().filter(|h| **h == Health::Ready).count() >= 10);
        for cluster in 0..core.cluster_count() {
            let status = core.cluster_status(cluster);
            if let Some(latency) = status.latency_ms {
                assert!(
                    (20..=150).contains(&latency),
                    "latency {latency} out of range"
                );
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_fleet_and_drift() {
        let mut first = demo_core(42);
        let mut second = demo_core(42);
        assert_eq!(kinds(&first), kinds(&second));
        let a = first.advance(600_000);
        let b = second.advance(600_000);
        assert!(!a.is_empty(), "ten simulated minutes produce drift");
        assert_eq!(a, b);
        let mut other = demo_core(43);
        assert_ne!(a, other.advance(600_000), "another seed drifts differently");
    }

    #[test]
    fn an_apply_that_is_not_forced_conflicts_with_the_manager_of_a_drifted_field() {
        let mut core = demo_core(7);
        let (index, drift) = core
            .cells
            .iter()
            .enumerate()
            .find_map(|(index, cell)| Some((index, cell.drift.clone()?)))
            .expect("the demo starts with drift");
        let clusters = core.cluster_count();
        let (resource, cluster) = (index / clusters, index % clusters);
        let cell = CellRef {
            resource: resource as u32,
            cluster: cluster as u32,
        };
        let api_version = core.fleet.resources[resource].target.api_version.clone();
        let updates = core.apply(cluster, &[cell], false);
        assert_eq!(
            updates[0].status,
            CellStatus::Conflict(drift.manager.clone()),
            "{updates:?}"
        );
        assert_eq!(
            updates[0].message.as_deref(),
            Some(drift.conflict(&api_version).as_str())
        );
        assert!(
            core.cells[index].drift.is_some(),
            "the other manager's field stays"
        );
        // A revert is forced: it takes the field back.
        let updates = core.apply(cluster, &[cell], true);
        assert_eq!(updates[0].status, CellStatus::InSync);
    }

    #[test]
    fn a_forced_apply_repairs_drift_and_pending_cells() {
        let mut core = demo_core(7);
        core.advance(600_000);
        let before = kinds(&core);
        let repairable: Vec<CellRef> = before
            .iter()
            .enumerate()
            .filter(|(_, kind)| {
                matches!(
                    kind,
                    StatusKind::Drifted | StatusKind::Missing | StatusKind::Pending
                )
            })
            .map(|(index, _)| CellRef {
                resource: (index / core.cluster_count()) as u32,
                cluster: (index % core.cluster_count()) as u32,
            })
            .collect();
        assert!(!repairable.is_empty());
        for cluster in 0..core.cluster_count() {
            core.apply(cluster, &repairable, true);
        }
        let after = kinds(&core);
        for cell in &repairable {
            let index = cell.resource as usize * core.cluster_count() + cell.cluster as usize;
            assert_eq!(
                after[index],
                StatusKind::InSync,
                "cell {cell:?} was applied"
            );
        }
    }

    #[test]
    fn a_scripted_failure_stays_failed_with_the_api_error() {
        let mut core = demo_core(7);
        let failure = &Scenario::demo().failures[0];
        let resource = core.resource_index(&failure.resource).unwrap();
        let cluster = core.cluster_index(&failure.cluster).unwrap();
        let cell = CellRef {
            resource: resource as u32,
            cluster: cluster as u32,
        };
        let updates = core.apply(cluster, &[cell], false);
        assert_eq!(
            updates[0].status,
            CellStatus::Failed(failure.message.clone())
        );
    }

    #[test]
    fn unreachable_clusters_show_unreachable_cells() {
        let core = demo_core(7);
        let cluster = core
            .cluster_index(&Scenario::demo().unreachable[0])
            .unwrap();
        let placed = (0..core.fleet.resources.len())
            .filter(|&r| core.placement[core.index(r, cluster)].is_ok())
            .collect::<Vec<_>>();
        assert!(!placed.is_empty());
        for resource in placed {
            assert_eq!(core.status(resource, cluster), CellStatus::Unreachable);
        }
    }
}
