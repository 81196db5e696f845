//! An OCM hub's view kept current one object at a time, from the informer caches: a
//! ManifestWork change touches exactly the cells of the manifests it carried or carries, on its
//! cluster (a manifest new to the hub adds a row at the bottom); a ManagedCluster change its
//! column; Placements and PlacementDecisions no cell (they move the placement editor's world,
//! which the backend reads again). The per-object rules are the reader's (`read.rs`); this file
//! only indexes them. It keeps no manifest object: the reflector store holds each ManifestWork
//! once, and the rendered object of a cell is looked up there when a preview or a followed
//! edit needs it. It must not talk to the hub.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use kube::config::Kubeconfig;
use kube::discovery::ApiResource;
use serde_json::Value;

use super::read::{
    ManifestWork, manifest_cell, manifest_ref, manifest_work_of, member_of, row_for,
};
use super::types::WORK_GROUP;
use crate::backend::hub::cache::{Caches, IncrementalView, Touched};
use crate::backend::hub::error::HubError;
use crate::backend::hub::view::{HubRow, HubView, aligned, row_order};
use crate::model::HubKind;
use crate::model::{CellHealth, CellStatus, ClusterStatus, Health, ResourceRef};

/// The kinds' places in [`kinds`].
const CLUSTERS: usize = 0;
const WORKS: usize = 1;
const PLACEMENTS: usize = 2;
const DECISIONS: usize = 3;

/// What the console watches and caches on an OCM hub, in the order [`Live`] names them.
pub fn kinds() -> Vec<ApiResource> {
    super::read::watched_kinds()
}

/// A ManifestWork is known by its cluster (namespace) and name.
type WorkKey = (String, String);

/// What the index keeps of one manifest a ManifestWork carries: its row, and the cell and
/// health the agent's report makes of it on a cluster that is Available.
struct Carried {
    row: usize,
    cell: (CellStatus, Option<String>),
    health: Option<CellHealth>,
}

/// What the index keeps of a ManifestWork: enough to name its rows and give their cells,
/// nothing of its objects or conditions.
struct Kept {
    /// The label rows name it by (see [`label_of`]).
    label: String,
    manifests: Vec<Carried>,
}

/// The OCM view and the indexes that find what one object touches.
pub struct Live {
    view: HubView,
    kubeconfig: Kubeconfig,
    /// Every ManifestWork, as far as its cells go.
    works: HashMap<WorkKey, Kept>,
    /// Cluster → the names of the ManifestWorks in its namespace.
    by_cluster: HashMap<String, BTreeSet<String>>,
    rows: HashMap<ResourceRef, usize>,
    /// Row → the ManifestWorks carrying it, and how many carry each source label.
    carriers: Vec<BTreeSet<WorkKey>>,
    labels: Vec<BTreeMap<String, usize>>,
    columns: HashMap<String, usize>,
}

/// The label a row's source names a ManifestWork by.
fn label_of(work: &ManifestWork) -> String {
    match &work.owner {
        Some(owner) => format!("{} ({owner})", work.name),
        None => work.name.clone(),
    }
}

/// A watched object as this view reads it, parsed once where it enters ([`parse`]).
#[derive(Debug, Clone)]
pub enum Object {
    /// A ManagedCluster: its name, and its JSON for the inventory parser.
    Cluster { name: String, value: Value },
    /// A ManifestWork, in the reader's form.
    Work(ManifestWork),
    /// A Placement or PlacementDecision: no cell reads it.
    Other,
}

/// What the view reads of an object of kind `kind` whose JSON is `text`.
pub fn parse(kind: usize, text: &str) -> Object {
    match kind {
        CLUSTERS => {
            let value: Value = serde_json::from_str(text).unwrap_or_default();
            Object::Cluster {
                name: crate::backend::hub::objects::text(&value, "/metadata/name"),
                value,
            }
        }
        WORKS => Object::Work(manifest_work_of(
            &serde_json::from_str(text).unwrap_or_default(),
        )),
        _ => Object::Other,
    }
}

fn key_of(work: &ManifestWork) -> WorkKey {
    (work.cluster.clone(), work.name.clone())
}

/// Offers `manifest`'s cell on `cluster` (of `status`) to `row`, as the reader does: the worse
/// of two ManifestWorks delivering one object wins, the first on a tie; on a cluster that is
/// not Available the cell is Unreachable, whatever the agent last reported.
fn offer(row: &mut HubRow, cluster: &str, status: Option<&ClusterStatus>, manifest: &Carried) {
    let cell = match status {
        Some(status) if status.health != Health::Ready => {
            (CellStatus::Unreachable, Some(status.message.clone()))
        }
        _ => manifest.cell.clone(),
    };
    if row
        .cells
        .get(cluster)
        .is_some_and(|(shown, _)| shown.kind() >= cell.0.kind())
    {
        return;
    }
    row.cells.insert(cluster.to_string(), cell);
    match &manifest.health {
        Some(health) => row.health.insert(cluster.to_string(), health.clone()),
        None => row.health.remove(cluster),
    };
}

impl Live {
    /// The view of these ManagedClusters and ManifestWorks in the rows and columns of `shown`,
    /// with its indexes.
    pub fn from_objects(
        shown: &HubView,
        clusters: &[Value],
        works: &[Value],
        kubeconfig: &Kubeconfig,
    ) -> Live {
        Live::from_works(
            shown,
            clusters,
            works.iter().map(manifest_work_of),
            kubeconfig,
        )
    }

    /// [`Live::from_objects`] reading one ManifestWork at a time, so that no more than one is
    /// ever parsed whole: the rows `shown` has keep their places, rows new to it follow in
    /// the reader's order, and each cell is what a full read (`rows_of`) makes of it.
    fn from_works(
        shown: &HubView,
        clusters: &[Value],
        works: impl Iterator<Item = ManifestWork>,
        kubeconfig: &Kubeconfig,
    ) -> Live {
        let mut members: Vec<_> = clusters.iter().map(|c| member_of(c, kubeconfig)).collect();
        members.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        let view = aligned(
            shown,
            HubView {
                kind: HubKind::OpenClusterManagement,
                clusters: members,
                rows: Vec::new(),
            },
        );
        let known = view.rows.len();
        let mut live = Live {
            rows: view
                .rows
                .iter()
                .enumerate()
                .map(|(index, row)| (row.target.clone(), index))
                .collect(),
            carriers: vec![BTreeSet::new(); known],
            labels: vec![BTreeMap::new(); known],
            columns: view
                .clusters
                .iter()
                .enumerate()
                .map(|(index, (spec, _))| (spec.name.clone(), index))
                .collect(),
            view,
            kubeconfig: kubeconfig.clone(),
            works: HashMap::new(),
            by_cluster: HashMap::new(),
        };
        for work in works {
            for manifest in &work.manifests {
                // A row `shown` had is read again from scratch once a ManifestWork carries it.
                if let Some(&row) = live.rows.get(&manifest.target)
                    && row < known
                    && live.carriers[row].is_empty()
                {
                    live.view.rows[row] = row_for(&manifest.target);
                }
            }
            live.insert(&work);
            live.show(&(work.cluster, work.name));
        }
        live.sort_newcomers(known);
        for row in 0..live.view.rows.len() {
            live.name_row(row);
        }
        live
    }

    /// Rows from `first` on in [`row_order`], as a full read gives rows `shown` did
    /// not have, with every index that points at them moved along.
    fn sort_newcomers(&mut self, first: usize) {
        let mut order: Vec<usize> = (first..self.view.rows.len()).collect();
        order.sort_by(|&a, &b| {
            row_order(&self.view.rows[a].target).cmp(&row_order(&self.view.rows[b].target))
        });
        let mut moved: Vec<usize> = (0..self.view.rows.len()).collect();
        for (place, &row) in order.iter().enumerate() {
            moved[row] = first + place;
        }
        let mut rows: Vec<Option<HubRow>> = self.view.rows.drain(first..).map(Some).collect();
        let mut carriers: Vec<_> = self.carriers.drain(first..).map(Some).collect();
        let mut labels: Vec<_> = self.labels.drain(first..).map(Some).collect();
        for &row in &order {
            let at = row - first;
            self.view.rows.extend(rows[at].take());
            self.carriers.extend(carriers[at].take());
            self.labels.extend(labels[at].take());
        }
        for row in self.rows.values_mut() {
            *row = moved[*row];
        }
        for kept in self.works.values_mut() {
            for manifest in &mut kept.manifests {
                manifest.row = moved[manifest.row];
            }
        }
    }

    /// Indexes `work` (the reader's form of it): its rows, which a manifest new to the hub
    /// adds at the bottom, and what its cells would be.
    fn insert(&mut self, work: &ManifestWork) {
        let manifests = work
            .manifests
            .iter()
            .map(|manifest| Carried {
                row: self
                    .rows
                    .get(&manifest.target)
                    .copied()
                    .unwrap_or_else(|| self.add_row(&manifest.target)),
                cell: manifest_cell(work, manifest.state.as_ref()),
                health: manifest.state.as_ref().and_then(|s| s.health.clone()),
            })
            .collect();
        let key = (work.cluster.clone(), work.name.clone());
        let kept = Kept {
            label: label_of(work),
            manifests,
        };
        self.carry(&key, &kept, 1);
        self.by_cluster
            .entry(work.cluster.clone())
            .or_default()
            .insert(work.name.clone());
        self.works.insert(key, kept);
    }

    /// Counts the ManifestWork `key` in (`1`) or out (`-1`) of the rows it carries.
    fn carry(&mut self, key: &WorkKey, kept: &Kept, sign: i8) {
        for manifest in &kept.manifests {
            let row = manifest.row;
            if sign > 0 {
                self.carriers[row].insert(key.clone());
                *self.labels[row].entry(kept.label.clone()).or_default() += 1;
            } else {
                self.carriers[row].remove(key);
                if let Some(count) = self.labels[row].get_mut(&kept.label) {
                    *count -= 1;
                    if *count == 0 {
                        self.labels[row].remove(&kept.label);
                    }
                }
            }
        }
    }

    fn add_row(&mut self, target: &ResourceRef) -> usize {
        let row = self.view.rows.len();
        self.view.rows.push(row_for(target));
        self.rows.insert(target.clone(), row);
        self.carriers.push(BTreeSet::new());
        self.labels.push(BTreeMap::new());
        row
    }

    /// Row `row`'s source and carrier from the ManifestWorks carrying it, as the reader words
    /// them (a row no ManifestWork carries any more keeps its last words).
    fn name_row(&mut self, row: usize) {
        let labels: Vec<&str> = self.labels[row].keys().map(String::as_str).collect();
        if labels.is_empty() {
            return;
        }
        let shown = &mut self.view.rows[row];
        shown.source = format!(
            "{} {}",
            if labels.len() == 1 {
                "ManifestWork"
            } else {
                "ManifestWorks"
            },
            labels.join(", ")
        );
        shown.carrier = match self.carriers[row].iter().collect::<Vec<_>>().as_slice() {
            [(cluster, name)] => Some(ResourceRef {
                api_version: format!("{WORK_GROUP}/v1"),
                kind: "ManifestWork".into(),
                namespace: Some(cluster.clone()),
                name: name.clone(),
            }),
            _ => None,
        };
    }

    /// Offers the cells of ManifestWork `key`'s manifests, each to its row on the
    /// ManifestWork's cluster.
    fn show(&mut self, key: &WorkKey) {
        let Some(kept) = self.works.get(key) else {
            return;
        };
        let status = self
            .columns
            .get(&key.0)
            .map(|&column| &self.view.clusters[column].1);
        for manifest in &kept.manifests {
            offer(&mut self.view.rows[manifest.row], &key.0, status, manifest);
        }
    }

    /// Cell (`row`, `cluster`) again from the ManifestWorks in the cluster's namespace; no
    /// cell where none carries it.
    fn recompute(&mut self, row: usize, cluster: &str) {
        let shown = &mut self.view.rows[row];
        shown.cells.remove(cluster);
        shown.health.remove(cluster);
        let status = self
            .columns
            .get(cluster)
            .map(|&column| &self.view.clusters[column].1);
        for name in self.by_cluster.get(cluster).into_iter().flatten() {
            let Some(kept) = self.works.get(&(cluster.to_string(), name.clone())) else {
                continue;
            };
            for manifest in kept.manifests.iter().filter(|m| m.row == row) {
                offer(&mut self.view.rows[row], cluster, status, manifest);
            }
        }
    }

    fn work_changed(&mut self, work: &ManifestWork, deleted: bool) -> Touched {
        let key = key_of(work);
        let mut rows: BTreeSet<usize> = BTreeSet::new();
        if let Some(old) = self.works.remove(&key) {
            rows.extend(old.manifests.iter().map(|m| m.row));
            self.carry(&key, &old, -1);
        }
        if deleted {
            if let Some(names) = self.by_cluster.get_mut(&key.0) {
                names.remove(&key.1);
            }
        } else {
            self.insert(work);
            rows.extend(
                self.works
                    .get(&key)
                    .into_iter()
                    .flat_map(|kept| kept.manifests.iter().map(|m| m.row)),
            );
        }
        for &row in &rows {
            self.recompute(row, &key.0);
            self.name_row(row);
        }
        match self.columns.get(&key.0) {
            Some(&column) => Touched::Cells(rows.into_iter().map(|row| (row, column)).collect()),
            None => Touched::Nothing,
        }
    }

    fn cluster_changed(&mut self, name: &str, value: &Value, deleted: bool) -> Touched {
        let Some(&column) = self.columns.get(name) else {
            // Columns stay those the console started with, as a full read keeps them.
            return Touched::Nothing;
        };
        self.view.clusters[column] = if deleted {
            let spec = self.view.clusters[column].0.clone();
            (
                spec,
                crate::model::ClusterStatus {
                    health: Health::Unknown,
                    message: "no longer a member of the hub".into(),
                    ..Default::default()
                },
            )
        } else {
            member_of(value, &self.kubeconfig)
        };
        let rows: BTreeSet<usize> = self
            .by_cluster
            .get(name)
            .into_iter()
            .flatten()
            .filter_map(|work| self.works.get(&(name.to_string(), work.clone())))
            .flat_map(|kept| kept.manifests.iter().map(|m| m.row))
            .collect();
        for row in rows {
            self.recompute(row, name);
        }
        Touched::Column(column)
    }
}

impl IncrementalView for Live {
    type Object = Object;

    fn parse(kind: usize, text: &str) -> Object {
        parse(kind, text)
    }

    fn read(shown: &HubView, caches: &Caches, kubeconfig: &Kubeconfig) -> Result<Live, HubError> {
        Ok(Live::from_works(
            shown,
            &caches.values(CLUSTERS),
            caches.each_parsed(WORKS, |_, text| {
                manifest_work_of(&serde_json::from_str(text).unwrap_or_default())
            }),
            kubeconfig,
        ))
    }

    fn members(
        caches: &Caches,
        kubeconfig: &Kubeconfig,
    ) -> Result<Vec<(crate::model::ClusterSpec, crate::model::ClusterStatus)>, HubError> {
        Ok(caches
            .values(CLUSTERS)
            .iter()
            .map(|cluster| member_of(cluster, kubeconfig))
            .collect())
    }

    fn view(&self) -> &HubView {
        &self.view
    }

    fn view_mut(&mut self) -> &mut HubView {
        &mut self.view
    }

    fn touches(&self, _kind: usize, object: &Object) -> Touched {
        match object {
            Object::Cluster { name, .. } => self
                .columns
                .get(name)
                .map_or(Touched::Nothing, |&column| Touched::Column(column)),
            Object::Work(work) => {
                let key = key_of(work);
                let Some(&column) = self.columns.get(&key.0) else {
                    return Touched::Nothing;
                };
                let old = self
                    .works
                    .get(&key)
                    .into_iter()
                    .flat_map(|kept| kept.manifests.iter().map(|m| m.row));
                let rows: BTreeSet<usize> = work
                    .manifests
                    .iter()
                    .filter_map(|manifest| self.rows.get(&manifest.target).copied())
                    .chain(old)
                    .collect();
                Touched::Cells(rows.into_iter().map(|row| (row, column)).collect())
            }
            Object::Other => Touched::Nothing,
        }
    }

    fn apply(&mut self, _caches: &Caches, _kind: usize, object: &Object, deleted: bool) -> Touched {
        match object {
            Object::Cluster { name, value } => self.cluster_changed(name, value, deleted),
            Object::Work(work) => self.work_changed(work, deleted),
            Object::Other => Touched::Nothing,
        }
    }

    fn moves_placements(&self, kind: usize) -> bool {
        matches!(kind, CLUSTERS | PLACEMENTS | DECISIONS)
    }

    fn rendered(&self, caches: &Caches, row: usize, cluster: &str) -> Option<Value> {
        let target = &self.view.rows.get(row)?.target;
        self.carriers
            .get(row)?
            .iter()
            .filter(|(c, _)| c == cluster)
            .filter_map(|(c, name)| caches.get(WORKS, Some(c), name))
            .find_map(|work| {
                work.data
                    .pointer("/spec/workload/manifests")
                    .and_then(Value::as_array)?
                    .iter()
                    .find(|m| manifest_ref(m) == *target)
                    .cloned()
            })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cluster(name: &str, available: &str) -> Value {
        json!({"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": name},
            "spec": {"hubAcceptsClient": true},
            "status": {"conditions": [{"type": "ManagedClusterConditionAvailable",
                "status": available, "reason": "ManagedClusterAvailable", "message": "lease"}]}})
    }

    /// ManifestWork `shop` on `cluster` carrying ConfigMaps `names`, the first `Available`
    /// as given, the rest Available.
    fn work(cluster: &str, names: &[&str], first: &str) -> Value {
        let manifests: Vec<Value> = names
            .iter()
            .map(|n| {
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": n, "namespace": "shop"}, "data": {"color": "blue"}})
            })
            .collect();
        let statuses: Vec<Value> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let up = if i == 0 { first } else { "True" };
                json!({"resourceMeta": {"ordinal": i, "group": "", "version": "v1",
                    "kind": "ConfigMap", "namespace": "shop", "name": n},
                    "conditions": [{"type": "Applied", "status": "True", "reason": "Done"},
                        {"type": "Available", "status": up, "reason": "ResourceAvailable"}]})
            })
            .collect();
        json!({"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"name": "shop", "namespace": cluster},
            "spec": {"workload": {"manifests": manifests}},
            "status": {"conditions": [{"type": "Applied", "status": "True"}],
                "resourceStatus": {"manifests": statuses}}})
    }

    /// Clusters a and b, each with ManifestWork `shop` carrying `db` and `web`.
    fn live() -> Live {
        let clusters = [cluster("a", "True"), cluster("b", "True")];
        let shown = HubView {
            kind: HubKind::OpenClusterManagement,
            clusters: clusters
                .iter()
                .map(|c| member_of(c, &Kubeconfig::default()))
                .collect(),
            rows: Vec::new(),
        };
        let works = [
            work("a", &["db", "web"], "True"),
            work("b", &["db", "web"], "True"),
        ];
        Live::from_objects(&shown, &clusters, &works, &Kubeconfig::default())
    }

    /// The stores these changes go through (this view reads none of them as it changes).
    fn empty_caches() -> Caches {
        Caches::in_memory(kinds(), []).0
    }

    fn change(live: &mut Live, kind: usize, value: Value, deleted: bool) -> (Touched, Touched) {
        let object = parse(kind, &value.to_string());
        let before = live.touches(kind, &object);
        (before, live.apply(&empty_caches(), kind, &object, deleted))
    }

    #[test]
    fn a_manifestwork_status_change_touches_its_manifests_cells_on_its_cluster_only() {
        let mut live = live();
        assert_eq!(live.view.rows[0].target.name, "db");
        let (expected, touched) =
            change(&mut live, WORKS, work("b", &["db", "web"], "False"), false);
        assert_eq!(touched, Touched::Cells(vec![(0, 1), (1, 1)]));
        assert_eq!(expected, touched, "known before the change is applied");
        assert_eq!(
            live.view.cell(0, 1).0,
            CellStatus::Missing,
            "db on b not Available"
        );
        assert_eq!(live.view.cell(1, 1).0, CellStatus::InSync);
        assert_eq!(live.view.cell(0, 0).0, CellStatus::InSync, "a untouched");
    }

    #[test]
    fn a_manifest_new_to_the_hub_adds_a_row_and_a_dropped_one_leaves_its_cell() {
        let mut live = live();
        let (_, touched) = change(&mut live, WORKS, work("a", &["web", "api"], "True"), false);
        assert_eq!(live.view.rows.len(), 3);
        assert_eq!(live.view.rows[2].target.name, "api", "added at the bottom");
        assert_eq!(touched, Touched::Cells(vec![(0, 0), (1, 0), (2, 0)]));
        assert!(
            matches!(live.view.cell(0, 0).0, CellStatus::NotPlaced(_)),
            "db left a"
        );
        assert_eq!(live.view.cell(0, 1).0, CellStatus::InSync, "db stays on b");
        assert_eq!(live.view.cell(2, 0).0, CellStatus::InSync);
        assert_eq!(live.view.rows[2].source, "ManifestWork shop");
        assert_eq!(
            live.view.rows[2].carrier.as_ref().map(|c| c.display_key()),
            Some("ManifestWork/a/shop".into()),
            "one ManifestWork carries it"
        );
        assert_eq!(live.view.rows[1].carrier, None, "two carry web");
        let (_, gone) = change(&mut live, WORKS, work("b", &[], "True"), true);
        assert_eq!(gone, Touched::Cells(vec![(0, 1), (1, 1)]));
        assert!(matches!(live.view.cell(1, 1).0, CellStatus::NotPlaced(_)));
    }

    #[test]
    fn a_cluster_change_touches_its_column() {
        let mut live = live();
        let (expected, touched) = change(&mut live, CLUSTERS, cluster("a", "Unknown"), false);
        assert_eq!(touched, Touched::Column(0));
        assert_eq!(expected, touched);
        assert_eq!(live.view.cell(0, 0).0, CellStatus::Unreachable);
        assert_eq!(live.view.cell(0, 1).0, CellStatus::InSync);
        change(&mut live, CLUSTERS, cluster("a", "True"), false);
        assert_eq!(live.view.cell(1, 0).0, CellStatus::InSync, "back");
    }

    #[test]
    fn the_view_built_a_manifestwork_at_a_time_is_the_readers() {
        let clusters = [cluster("a", "True"), cluster("b", "Unknown")];
        let works = [
            work("a", &["web", "db"], "False"),
            work("b", &["web", "api"], "True"),
        ];
        let members: Vec<_> = clusters
            .iter()
            .map(|c| member_of(c, &Kubeconfig::default()))
            .collect();
        let empty = HubView {
            kind: HubKind::OpenClusterManagement,
            clusters: members.clone(),
            rows: Vec::new(),
        };
        let parsed: Vec<ManifestWork> = works.iter().map(manifest_work_of).collect();
        let mut read = super::super::read::rows_of(&parsed, &members);
        for row in &mut read {
            row.objects.clear();
        }
        let live = Live::from_objects(&empty, &clusters, &works, &Kubeconfig::default());
        assert_eq!(live.view.rows, read, "rows in the reader's order and words");
        let names: Vec<&str> = read.iter().map(|r| r.target.name.as_str()).collect();
        assert_eq!(names, ["api", "db", "web"]);

        // Rows the console shows keep their places; one no ManifestWork carries is gone.
        let mut shown = empty;
        shown.rows = vec![
            read[2].clone(),
            row_for(&ResourceRef {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: Some("shop".into()),
                name: "old".into(),
            }),
        ];
        let live = Live::from_objects(&shown, &clusters, &works, &Kubeconfig::default());
        let names: Vec<&str> = live
            .view
            .rows
            .iter()
            .map(|r| r.target.name.as_str())
            .collect();
        assert_eq!(names, ["web", "old", "api", "db"]);
        assert_eq!(live.view.rows[0], read[2]);
        assert_eq!(live.view.rows[2], read[0]);
        assert!(live.view.rows[1].cells.is_empty());
        let (touched, _) = {
            let mut live = live;
            change(&mut live, WORKS, work("a", &["web", "db"], "True"), false)
        };
        assert_eq!(
            touched,
            Touched::Cells(vec![(0, 0), (3, 0)]),
            "indexes follow the sort"
        );
    }

    #[test]
    fn changes_agree_with_a_full_read_of_the_same_objects() {
        let mut live = live();
        change(&mut live, WORKS, work("b", &["db", "web"], "False"), false);
        change(&mut live, WORKS, work("a", &["web", "api"], "True"), false);
        let clusters = [cluster("a", "True"), cluster("b", "True")];
        let works = [
            work("a", &["web", "api"], "True"),
            work("b", &["db", "web"], "False"),
        ];
        let whole = Live::from_objects(&live.view, &clusters, &works, &Kubeconfig::default());
        assert_eq!(whole.view.rows, live.view.rows);
    }
}
