//! One cluster's column of the matrix, worked out from the fleet's intent and the objects a
//! watch cache holds, by the shared cell rules of [`crate::backend::cells`] (placed, present
//! and matching is InSync; a field of the intent with another live value is Drifted; placed
//! and absent is Pending, or Missing once it was seen and then deleted; present with
//! flotilla's marker but no longer placed is Orphaned). Pure: no I/O and no clock. The live
//! backend feeds it watch events and sends what it returns; only cells whose status or detail
//! changed are returned, so a quiet cluster costs nothing.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::backend::cells::{self, CellFacts, Reach};
use crate::backend::fanout::drift::drift_fields_ignoring;
use crate::backend::fanout::object::resource_of;
use crate::engine::{Decision, Fleet, health};
use crate::messages::{BackendEvent, CellRef, CellUpdate, DriftField, HealthUpdate};
use crate::model::{CellHealth, CellStatus, ResourceRef, StatusKind};

/// The rows of a fleet grouped by the kind a watch serves them from.
#[derive(Debug, Default)]
pub struct FleetIndex {
    /// Every (apiVersion, kind) among the fleet's resources, in first-seen order.
    pub kinds: Vec<(String, String)>,
    /// Kind index of every row.
    row_kind: Vec<usize>,
    /// Row of every resource identity.
    rows: HashMap<ResourceRef, u32>,
}

impl FleetIndex {
    pub fn new(fleet: &Fleet) -> FleetIndex {
        let mut index = FleetIndex::default();
        for (row, resource) in fleet.resources.iter().enumerate() {
            let key = (
                resource.target.api_version.clone(),
                resource.target.kind.clone(),
            );
            let kind = match index.kinds.iter().position(|known| *known == key) {
                Some(found) => found,
                None => {
                    index.kinds.push(key);
                    index.kinds.len() - 1
                }
            };
            index.row_kind.push(kind);
            index.rows.insert(resource.target.clone(), row as u32);
        }
        index
    }

    /// The row an object of the cluster belongs to, if the fleet has it.
    pub fn row_of(&self, object: &Value) -> Option<u32> {
        self.rows.get(&resource_of(object)).copied()
    }

    pub fn kind_of(&self, row: u32) -> usize {
        self.row_kind
            .get(row as usize)
            .copied()
            .unwrap_or(usize::MAX)
    }

    fn rows_of_kind(&self, kind: usize) -> impl Iterator<Item = u32> + '_ {
        self.row_kind
            .iter()
            .enumerate()
            .filter(move |(_, k)| **k == kind)
            .map(|(row, _)| row as u32)
    }
}

/// A watch event for one kind, already reduced to what the cache needs.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchChange {
    /// A (re)list started: objects until `ListDone` replace this kind's cache.
    ListStarted,
    Listed(Value),
    ListDone,
    Applied(Value),
    Deleted(Value),
}

/// How one row's apply ended: written, or the status and message of its failure.
pub type ApplyResult = Result<(), (CellStatus, String)>;

/// How long a written row waits for the watch to bring its write before it is judged on the
/// object the watch has.
pub const UNSEEN_FOR: Duration = Duration::from_secs(3);

/// Where a row's write stands.
#[derive(Debug)]
enum Writing {
    /// Sent; the resourceVersion its live object had then.
    Sent(Option<String>),
    /// Written, and the watch has not brought the write yet.
    Unseen { until: Instant },
}

/// One cluster's cells and the cache they come from.
pub struct ClusterCells {
    fleet: Arc<Fleet>,
    index: Arc<FleetIndex>,
    cluster: u32,
    reach: Reach,
    live: HashMap<u32, Value>,
    /// Rows seen present during this session, so a later absence is Missing, not Pending.
    seen: HashSet<u32>,
    /// Kinds whose first list has completed.
    listed: HashSet<usize>,
    /// Kinds the cluster does not serve.
    unserved: HashSet<usize>,
    /// Objects of a list in progress, per kind.
    listing: HashMap<usize, HashMap<u32, Value>>,
    /// Rows being written: in flight, or written but not yet seen by the watch.
    applying: HashMap<u32, Writing>,
    /// The last apply's failure per row, until the row is applied again or changes live.
    failures: HashMap<u32, (CellStatus, String)>,
    /// What was last reported per row: its kind, and the detail when there is one.
    sent_kind: Vec<StatusKind>,
    sent_detail: HashMap<u32, (CellStatus, Option<String>)>,
    /// Health last reported per row (absent: not held, or a kind without health).
    sent_health: HashMap<u32, CellHealth>,
    /// Rows whose live object changed since health was last reported.
    touched: Vec<u32>,
}

impl ClusterCells {
    /// A cluster not probed yet; `initial()` gives its column for the first snapshot.
    pub fn new(fleet: Arc<Fleet>, index: Arc<FleetIndex>, cluster: u32, reach: Reach) -> Self {
        let rows = fleet.resources.len();
        let mut cells = ClusterCells {
            fleet,
            index,
            cluster,
            reach,
            live: HashMap::new(),
            seen: HashSet::new(),
            listed: HashSet::new(),
            unserved: HashSet::new(),
            listing: HashMap::new(),
            applying: HashMap::new(),
            failures: HashMap::new(),
            sent_kind: vec![StatusKind::NotPlaced; rows],
            sent_detail: HashMap::new(),
            sent_health: HashMap::new(),
            touched: Vec::new(),
        };
        for row in 0..rows as u32 {
            let (status, message) = cells.status(row);
            cells.remember(row, status, message);
        }
        cells
    }

    /// Starts from the failures of applies made before this session, per row: each stands
    /// until the row is applied again or the cluster lists an object for it.
    pub fn with_failures(mut self, failures: Vec<(u32, String)>) -> Self {
        for (row, message) in failures {
            self.failures
                .insert(row, (CellStatus::Failed(message.clone()), message));
            let (status, message) = self.status(row);
            self.remember(row, status, message);
        }
        self
    }

    /// The column as last reported: one kind per row, and the rows with detail.
    pub fn initial(&self) -> (&[StatusKind], Vec<CellUpdate>) {
        let details = self
            .sent_detail
            .iter()
            .map(|(row, (status, message))| CellUpdate {
                cell: self.cell(*row),
                status: status.clone(),
                message: message.clone(),
            })
            .collect();
        (&self.sent_kind, details)
    }

    pub fn fleet(&self) -> &Arc<Fleet> {
        &self.fleet
    }

    pub fn index(&self) -> &Arc<FleetIndex> {
        &self.index
    }

    /// The fleet was edited (same resources and clusters): every row may change, and every
    /// held object's health is assessed again (the fleet's own interpreters may judge it).
    pub fn set_fleet(&mut self, fleet: Arc<Fleet>, index: Arc<FleetIndex>) -> Vec<CellUpdate> {
        self.fleet = fleet;
        self.index = index;
        self.touched.extend(self.live.keys().copied());
        self.changes(0..self.fleet.resources.len() as u32)
    }

    pub fn cluster(&self) -> u32 {
        self.cluster
    }

    pub fn reach(&self) -> &Reach {
        &self.reach
    }

    /// The cluster's reachability changed; every row may change.
    pub fn set_reach(&mut self, reach: Reach) -> Vec<CellUpdate> {
        if self.reach == reach {
            return Vec::new();
        }
        self.reach = reach;
        self.changes(0..self.fleet.resources.len() as u32)
    }

    /// Discovery's verdict: which kinds the cluster serves.
    pub fn set_served(&mut self, served: &[bool]) -> Vec<CellUpdate> {
        let unserved: HashSet<usize> = served
            .iter()
            .enumerate()
            .filter(|(_, served)| !**served)
            .map(|(kind, _)| kind)
            .collect();
        if unserved == self.unserved {
            return Vec::new();
        }
        let touched: HashSet<usize> = unserved
            .symmetric_difference(&self.unserved)
            .copied()
            .collect();
        self.unserved = unserved;
        let rows: Vec<u32> = touched
            .into_iter()
            .flat_map(|kind| self.index.rows_of_kind(kind).collect::<Vec<_>>())
            .collect();
        self.changes(rows)
    }

    /// A watch of `kind` saw something.
    pub fn watch(&mut self, kind: usize, change: WatchChange) -> Vec<CellUpdate> {
        match change {
            WatchChange::ListStarted => {
                self.listing.insert(kind, HashMap::new());
                Vec::new()
            }
            WatchChange::Listed(object) => {
                if let Some(row) = self.index.row_of(&object)
                    && let Some(listing) = self.listing.get_mut(&kind)
                {
                    listing.insert(row, object);
                }
                Vec::new()
            }
            WatchChange::ListDone => {
                let listed = self.listing.remove(&kind).unwrap_or_default();
                let rows: Vec<u32> = self.index.rows_of_kind(kind).collect();
                for row in &rows {
                    match listed.get(row) {
                        Some(object) => self.store(*row, object.clone()),
                        None => self.unstore(*row),
                    }
                }
                self.listed.insert(kind);
                self.changes(rows)
            }
            WatchChange::Applied(object) => match self.index.row_of(&object) {
                Some(row) => {
                    self.store(row, object);
                    self.changes([row])
                }
                None => Vec::new(),
            },
            WatchChange::Deleted(object) => match self.index.row_of(&object) {
                Some(row) => {
                    self.unstore(row);
                    self.failures.remove(&row);
                    self.changes([row])
                }
                None => Vec::new(),
            },
        }
    }

    fn store(&mut self, row: u32, object: Value) {
        if self.live.get(&row) != Some(&object) {
            self.failures.remove(&row);
        }
        self.seen.insert(row);
        self.live.insert(row, object);
        self.touched.push(row);
        self.watched(row);
    }

    /// The watch says row `row`'s object is gone from the cluster.
    fn unstore(&mut self, row: u32) {
        self.live.remove(&row);
        self.touched.push(row);
        self.watched(row);
    }

    /// The live health of every row whose object changed since the last call, where it
    /// changed: a rollout's progress reaches the console though the cell stays in sync.
    pub fn health_changes(&mut self) -> Vec<HealthUpdate> {
        let mut touched = std::mem::take(&mut self.touched);
        touched.sort_unstable();
        touched.dedup();
        let mut changes = Vec::new();
        for row in touched {
            let now = self.live.get(&row).and_then(health::assess);
            if now.as_ref() == self.sent_health.get(&row) {
                continue;
            }
            match &now {
                Some(health) => self.sent_health.insert(row, health.clone()),
                None => self.sent_health.remove(&row),
            };
            changes.push(HealthUpdate {
                cell: self.cell(row),
                health: now,
            });
        }
        changes
    }

    /// An apply of these rows started.
    pub fn apply_started(&mut self, rows: &[u32]) -> Vec<CellUpdate> {
        for row in rows {
            let version = self.live_version(*row);
            self.applying.insert(*row, Writing::Sent(version));
            self.failures.remove(row);
        }
        self.changes(rows.iter().copied())
    }

    /// An apply finished: `Ok` rows were written (the watch brings their new state),
    /// `Err` rows keep the failure until they are applied again or change on the cluster.
    /// A written row whose watch has not yet brought the write, and whose old object is not
    /// in sync, stays applying until the watch does or `now` + [`UNSEEN_FOR`] passes: judged
    /// on the old object it would show the drift just repaired, and could be repaired again.
    pub fn apply_finished(
        &mut self,
        results: Vec<(u32, ApplyResult)>,
        now: Instant,
    ) -> Vec<CellUpdate> {
        let mut rows = Vec::with_capacity(results.len());
        for (row, result) in results {
            let sent = self.applying.remove(&row);
            match result {
                Err(failure) => {
                    self.failures.insert(row, failure);
                }
                Ok(()) => {
                    let unseen = matches!(&sent, Some(Writing::Sent(version))
                        if *version == self.live_version(row))
                        && self.status(row).0.kind() != StatusKind::InSync;
                    if unseen {
                        let until = now + UNSEEN_FOR;
                        self.applying.insert(row, Writing::Unseen { until });
                    }
                }
            }
            rows.push(row);
        }
        self.changes(rows)
    }

    /// Whether a written row is waiting for the watch to bring its write.
    pub fn awaits_watch(&self) -> bool {
        self.applying
            .values()
            .any(|writing| matches!(writing, Writing::Unseen { .. }))
    }

    /// Rows the watch has not brought a write for by `now` are judged on what it has.
    pub fn unseen_expired(&mut self, now: Instant) -> Vec<CellUpdate> {
        let expired: Vec<u32> = self
            .applying
            .iter()
            .filter(|(_, writing)| matches!(writing, Writing::Unseen { until } if *until <= now))
            .map(|(row, _)| *row)
            .collect();
        for row in &expired {
            self.applying.remove(row);
        }
        self.changes(expired)
    }

    fn live_version(&self, row: u32) -> Option<String> {
        let object = self.live.get(&row)?;
        object["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_string)
    }

    /// The watch brought row `row`: a write waiting for it is seen.
    fn watched(&mut self, row: u32) {
        if matches!(self.applying.get(&row), Some(Writing::Unseen { .. })) {
            self.applying.remove(&row);
        }
    }

    /// The live object of a row, if the cache has it.
    pub fn live(&self, row: u32) -> Option<&Value> {
        self.live.get(&row)
    }

    /// The rows the fleet places on this cluster.
    pub fn placed_rows(&self) -> Vec<u32> {
        (0..self.fleet.resources.len())
            .filter(|row| self.fleet.is_placed(*row, self.cluster as usize))
            .map(|row| row as u32)
            .collect()
    }

    fn cell(&self, row: u32) -> CellRef {
        CellRef {
            resource: row,
            cluster: self.cluster,
        }
    }

    /// Recomputes `rows` and returns those whose status or detail differs from what was sent.
    fn changes(&mut self, rows: impl IntoIterator<Item = u32>) -> Vec<CellUpdate> {
        let mut updates = Vec::new();
        for row in rows {
            let (status, message) = self.status(row);
            let kind = status.kind();
            let has_detail = status.detail().is_some() || message.is_some();
            let before_kind = self.sent_kind.get(row as usize).copied();
            let same = before_kind == Some(kind)
                && match self.sent_detail.get(&row) {
                    Some((old_status, old_message)) => {
                        has_detail && *old_status == status && *old_message == message
                    }
                    None => !has_detail,
                };
            if same {
                continue;
            }
            self.remember(row, status.clone(), message.clone());
            updates.push(CellUpdate {
                cell: self.cell(row),
                status,
                message,
            });
        }
        updates
    }

    fn remember(&mut self, row: u32, status: CellStatus, message: Option<String>) {
        if let Some(slot) = self.sent_kind.get_mut(row as usize) {
            *slot = status.kind();
        }
        if status.detail().is_some() || message.is_some() {
            self.sent_detail.insert(row, (status, message));
        } else {
            self.sent_detail.remove(&row);
        }
    }

    /// The drifted fields of a row, field by field, after the fleet's ignore rules; empty when
    /// the row is not placed, not live or in sync.
    pub fn drift_detail(&self, row: u32) -> Vec<DriftField> {
        let (resource, cluster) = (row as usize, self.cluster as usize);
        let Some(live) = self.live.get(&row) else {
            return Vec::new();
        };
        match self.fleet.decide(resource, cluster) {
            Decision::Placed { object, .. } => self.drift_of(&object, row, live),
            Decision::Suspended { .. } | Decision::NotPlaced { .. } => Vec::new(),
        }
    }

    fn drift_of(&self, desired: &Value, row: u32, live: &Value) -> Vec<DriftField> {
        let cluster = self.fleet.clusters.get(self.cluster as usize);
        let resource = self.fleet.resources.get(row as usize);
        let rules: Vec<&crate::engine::compare::ignore::IgnoreRule> = match (cluster, resource) {
            (Some(cluster), Some(resource)) => self
                .fleet
                .ignores
                .iter()
                .filter(|rule| {
                    rule.covers_cluster(cluster) && rule.covers_resource(&resource.target)
                })
                .collect(),
            _ => Vec::new(),
        };
        // What the member retains (Karmada's `Retain`) is compared with itself; a failing
        // script leaves the intent as it is, so the fields it would keep show as drift.
        let retained = self.fleet.interpreters.retain(desired, live).ok();
        drift_fields_ignoring(retained.as_ref().unwrap_or(desired), live, &rules)
    }

    /// Drift events for the drifted cells among `updates`, field by field.
    pub fn drift_events(&self, updates: &[CellUpdate]) -> Vec<BackendEvent> {
        cells::drift_events(updates, |cell| self.drift_detail(cell.resource))
    }

    /// The status of one row on this cluster, with a line for the detail pane.
    pub fn status(&self, row: u32) -> (CellStatus, Option<String>) {
        cells::judge(&RowFacts { cells: self, row }).status_and_detail()
    }
}

/// What a cluster's column knows of one row, for the shared cell rules.
struct RowFacts<'a> {
    cells: &'a ClusterCells,
    row: u32,
}

impl RowFacts<'_> {
    fn live(&self) -> Option<&Value> {
        self.cells.live.get(&self.row)
    }

    fn kind(&self) -> usize {
        self.cells.index.kind_of(self.row)
    }
}

impl CellFacts for RowFacts<'_> {
    type Desired = Value;

    fn placed(&self) -> bool {
        let cells = self.cells;
        cells
            .fleet
            .is_placed(self.row as usize, cells.cluster as usize)
    }

    fn not_placed_reason(&self) -> String {
        let cells = self.cells;
        cells
            .fleet
            .placement(self.row as usize, cells.cluster as usize)
            .err()
            .unwrap_or_default()
    }

    fn suspended(&self) -> Option<String> {
        let cells = self.cells;
        cells
            .fleet
            .suspended_reason(self.row as usize, cells.cluster as usize)
            .map(str::to_string)
    }

    /// The cache says so only while the cluster answers.
    fn present(&self) -> bool {
        self.live().is_some() && self.cells.reach == Reach::Answering
    }

    fn reach(&self) -> &Reach {
        &self.cells.reach
    }

    fn unserved(&self) -> Option<(String, String)> {
        let kind = self.kind();
        self.cells.unserved.contains(&kind).then(|| {
            self.cells
                .index
                .kinds
                .get(kind)
                .cloned()
                .unwrap_or_default()
        })
    }

    fn failure(&self) -> Option<(CellStatus, String)> {
        self.cells.failures.get(&self.row).cloned()
    }

    fn applying(&self) -> bool {
        self.cells.applying.contains_key(&self.row)
    }

    fn desired(&self) -> Result<Value, String> {
        let cells = self.cells;
        match cells
            .fleet
            .decide(self.row as usize, cells.cluster as usize)
        {
            Decision::Placed { object, .. } => Ok(object),
            Decision::Suspended { reason, .. } | Decision::NotPlaced { reason } => Err(reason),
        }
    }

    fn listed(&self) -> bool {
        self.cells.listed.contains(&self.kind())
    }

    fn seen(&self) -> bool {
        self.cells.seen.contains(&self.row)
    }

    fn drift(&self, desired: &Value) -> Vec<DriftField> {
        match self.live() {
            Some(live) => self.cells.drift_of(desired, self.row, live),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::engine::{SourceFile, load_fleet};

    const FLEET: &str = r#"
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: a, labels: {tier: web}}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: b}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: colors, namespace: shop}
data: {color: blue}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: colors, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: colors}]
  placement:
    clusterAffinity: {labelSelector: {matchLabels: {tier: web}}}
"#;

    fn fleet() -> Arc<Fleet> {
        let (fleet, errors) = load_fleet(&[SourceFile {
            path: "fleet.yaml".into(),
            text: FLEET.into(),
        }]);
        assert!(errors.is_empty(), "{errors:?}");
        Arc::new(fleet)
    }

    fn cells(cluster: &str) -> ClusterCells {
        let fleet = fleet();
        let index = Arc::new(FleetIndex::new(&fleet));
        let cluster = fleet.cluster_index(cluster).unwrap() as u32;
        ClusterCells::new(fleet, index, cluster, Reach::Connecting)
    }

    fn desired(cells: &ClusterCells) -> Value {
        match cells.fleet.decide(0, cells.cluster as usize) {
            Decision::Placed { object, .. } => object,
            Decision::Suspended { reason, .. } | Decision::NotPlaced { reason } => {
                panic!("{reason}")
            }
        }
    }

    use crate::model::HealthKind;

    fn kinds(updates: &[CellUpdate]) -> Vec<StatusKind> {
        updates.iter().map(|u| u.status.kind()).collect()
    }

    #[test]
    fn a_rollout_reaches_the_console_as_health_while_the_cell_stays_in_sync() {
        let fleet = r#"
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: a}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "web:1"}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [a]}}
"#;
        let (fleet, errors) = load_fleet(&[SourceFile {
            path: "fleet.yaml".into(),
            text: fleet.into(),
        }]);
        assert!(errors.is_empty(), "{errors:?}");
        let fleet = Arc::new(fleet);
        let index = Arc::new(FleetIndex::new(&fleet));
        let mut cells = ClusterCells::new(fleet, index, 0, Reach::Connecting);
        cells.set_reach(Reach::Answering);
        let mut live = desired(&cells);
        live["metadata"]["generation"] = json!(2);
        live["status"] = json!({"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 1});
        cells.watch(0, WatchChange::ListStarted);
        cells.watch(0, WatchChange::Listed(live.clone()));
        let updates = cells.watch(0, WatchChange::ListDone);
        assert_eq!(kinds(&updates), [StatusKind::InSync]);
        let health = cells.health_changes();
        assert_eq!(health.len(), 1, "{health:?}");
        let progressing = health[0].health.clone().expect("a Deployment has health");
        assert_eq!(progressing.kind, HealthKind::Progressing);
        assert_eq!(progressing.reason, "1/3 available");

        live["status"]["availableReplicas"] = json!(3);
        let updates = cells.watch(0, WatchChange::Applied(live.clone()));
        assert!(
            updates.is_empty(),
            "the sync status did not change: {updates:?}"
        );
        let health = cells.health_changes();
        assert_eq!(
            health[0].health.as_ref().map(|h| h.kind),
            Some(HealthKind::Healthy)
        );
        cells.watch(0, WatchChange::Applied(live.clone()));
        assert!(
            cells.health_changes().is_empty(),
            "unchanged health is not sent again"
        );

        cells.watch(0, WatchChange::Deleted(live));
        assert_eq!(cells.health_changes()[0].health, None, "gone: no health");
    }

    #[test]
    fn drift_is_reported_field_by_field_and_an_ignore_rule_settles_it() {
        let mut cells = cells("a");
        cells.set_reach(Reach::Answering);
        let object = desired(&cells);
        cells.watch(0, WatchChange::ListStarted);
        cells.watch(0, WatchChange::ListDone);
        let mut edited = object.clone();
        edited["data"]["color"] = json!("red");
        let updates = cells.watch(0, WatchChange::Applied(edited));
        let events = cells.drift_events(&updates);
        let [BackendEvent::Drift { cell, fields }] = events.as_slice() else {
            panic!("one drift event: {events:?}");
        };
        assert_eq!(*cell, updates[0].cell);
        assert_eq!(fields.len(), 1);
        assert_eq!(fields[0].path, "/data/color");
        assert_eq!(
            (&fields[0].desired, &fields[0].live),
            (&json!("blue"), &json!("red"))
        );

        let ignoring = format!(
            "{FLEET}---\napiVersion: {}\nkind: {}\nmetadata: {{name: colors}}\nspec:\n  resources: [{{kind: ConfigMap, namespace: shop, name: colors}}]\n  paths: [/data/color]\n",
            crate::engine::compare::ignore::API_VERSION,
            crate::engine::compare::ignore::KIND
        );
        let (fleet, errors) = load_fleet(&[SourceFile {
            path: "fleet.yaml".into(),
            text: ignoring,
        }]);
        assert!(errors.is_empty(), "{errors:?}");
        let fleet = Arc::new(fleet);
        let index = Arc::new(FleetIndex::new(&fleet));
        let updates = cells.set_fleet(fleet, index);
        assert_eq!(
            kinds(&updates),
            [StatusKind::InSync],
            "ignored drift is not drift"
        );
        assert!(cells.drift_events(&updates).is_empty());
        assert!(cells.drift_detail(0).is_empty());
    }

    #[test]
    fn a_listed_object_matching_the_intent_is_in_sync_and_an_edit_makes_it_drift() {
        let mut cells = cells("a");
        assert_eq!(cells.status(0).0, CellStatus::Pending);
        let waiting = cells.set_reach(Reach::Answering);
        assert_eq!(kinds(&waiting), [StatusKind::Pending]);
        assert_eq!(
            waiting[0].message.as_deref(),
            Some("waiting for the cluster's first list")
        );
        let object = desired(&cells);
        cells.watch(0, WatchChange::ListStarted);
        cells.watch(0, WatchChange::Listed(object.clone()));
        assert_eq!(
            kinds(&cells.watch(0, WatchChange::ListDone)),
            [StatusKind::InSync]
        );

        let mut edited = object.clone();
        edited["data"]["color"] = json!("red");
        let updates = cells.watch(0, WatchChange::Applied(edited));
        assert_eq!(kinds(&updates), [StatusKind::Drifted]);
        let message = updates[0].message.clone().unwrap();
        assert!(message.contains("/data/color"), "{message}");
        assert!(message.contains("\"red\""), "{message}");
        // The same object again changes nothing, so nothing is sent.
        let mut again = object.clone();
        again["data"]["color"] = json!("red");
        assert!(cells.watch(0, WatchChange::Applied(again)).is_empty());
    }

    #[test]
    fn absent_is_pending_until_seen_then_missing_and_down_is_unreachable() {
        let mut cells = cells("a");
        cells.set_reach(Reach::Answering);
        cells.watch(0, WatchChange::ListStarted);
        let updates = cells.watch(0, WatchChange::ListDone);
        assert_eq!(
            updates[0].message.as_deref(),
            Some("not applied yet"),
            "{updates:?}"
        );
        let object = desired(&cells);
        cells.watch(0, WatchChange::Applied(object.clone()));
        let gone = cells.watch(0, WatchChange::Deleted(object));
        assert_eq!(kinds(&gone), [StatusKind::Missing]);
        let down = cells.set_reach(Reach::Down("connection refused".into()));
        assert_eq!(kinds(&down), [StatusKind::Unreachable]);
        assert_eq!(down[0].message.as_deref(), Some("connection refused"));
    }

    #[test]
    fn an_unplaced_object_with_the_marker_is_orphaned_and_an_unserved_kind_fails() {
        let mut other = cells("b");
        assert!(matches!(other.status(0).0, CellStatus::NotPlaced(_)));
        other.set_reach(Reach::Answering);
        let mut object = desired(&cells("a"));
        object["metadata"]["name"] = json!("colors");
        let updates = other.watch(0, WatchChange::Applied(object));
        assert_eq!(kinds(&updates), [StatusKind::Orphaned]);

        let mut placed = cells("a");
        placed.set_reach(Reach::Answering);
        let updates = placed.set_served(&[false]);
        assert_eq!(
            updates[0].status,
            CellStatus::Failed("kind not served: v1 ConfigMap".into())
        );
    }

    #[test]
    fn an_apply_failure_sticks_until_the_next_apply_and_a_relist_drops_vanished_objects() {
        let mut cells = cells("a");
        cells.set_reach(Reach::Answering);
        cells.set_served(&[true]);
        let object = desired(&cells);
        cells.watch(0, WatchChange::ListStarted);
        cells.watch(0, WatchChange::Listed(object));
        cells.watch(0, WatchChange::ListDone);
        assert_eq!(kinds(&cells.apply_started(&[0])), [StatusKind::Pending]);
        let failed = cells.apply_finished(
            vec![(
                0,
                Err((CellStatus::Conflict("kubectl".into()), "conflict".into())),
            )],
            Instant::now(),
        );
        assert_eq!(kinds(&failed), [StatusKind::Conflict]);
        cells.apply_started(&[0]);
        let ok = cells.apply_finished(vec![(0, Ok(()))], Instant::now());
        assert_eq!(kinds(&ok), [StatusKind::InSync]);
        // A relist without the object means it is gone.
        cells.watch(0, WatchChange::ListStarted);
        let relisted = cells.watch(0, WatchChange::ListDone);
        assert_eq!(kinds(&relisted), [StatusKind::Missing]);
    }

    #[test]
    fn a_repair_written_before_the_watch_brings_it_stays_applying_until_the_watch_does() {
        let mut cells = cells("a");
        cells.set_reach(Reach::Answering);
        cells.set_served(&[true]);
        let mut drifted = desired(&cells);
        drifted["data"]["color"] = json!("red");
        drifted["metadata"]["resourceVersion"] = json!("10");
        cells.watch(0, WatchChange::ListStarted);
        cells.watch(0, WatchChange::Listed(drifted.clone()));
        assert_eq!(
            kinds(&cells.watch(0, WatchChange::ListDone)),
            [StatusKind::Drifted]
        );

        // The write's answer comes before its watch event: the cell is not drifted again.
        let start = Instant::now();
        cells.apply_started(&[0]);
        let finished = cells.apply_finished(vec![(0, Ok(()))], start);
        assert!(finished.is_empty(), "still applying: {finished:?}");
        assert!(cells.awaits_watch());
        let mut repaired = desired(&cells);
        repaired["metadata"]["resourceVersion"] = json!("11");
        let seen = cells.watch(0, WatchChange::Applied(repaired));
        assert_eq!(kinds(&seen), [StatusKind::InSync]);
        assert!(!cells.awaits_watch());

        // A write the watch never shows (someone else put the old value back at once) is
        // judged on what the watch has once the wait is over.
        cells.watch(0, WatchChange::Applied(drifted));
        cells.apply_started(&[0]);
        assert!(cells.apply_finished(vec![(0, Ok(()))], start).is_empty());
        assert!(cells.unseen_expired(start + UNSEEN_FOR / 2).is_empty());
        let expired = cells.unseen_expired(start + UNSEEN_FOR);
        assert_eq!(kinds(&expired), [StatusKind::Drifted]);
    }
}
