//! A Karmada hub's view kept current one object at a time, from the informer caches: a Work
//! change touches exactly its (binding's row, member's column) cell, a (Cluster)ResourceBinding
//! change its row (a new binding adds one at the bottom), a member Cluster change its column,
//! and a policy change nothing by itself (Karmada re-renders the bindings and Works, whose own
//! changes follow). The per-object rules are the reader's (`read.rs`); this file only indexes
//! them. It keeps no Work manifest: the reflector store holds each Work once, and the rendered
//! object of a cell is looked up there when a preview or a followed edit needs it. It must not
//! talk to the hub.

use std::collections::HashMap;

use kube::api::DynamicObject;
use kube::config::Kubeconfig;
use kube::discovery::ApiResource;
use serde_json::{Value, json};

use super::read::{
    Binding, Work, WorkState, binding_of, is_target, member_of, row_of, view_of, work_of,
    works_by_binding,
};
use crate::backend::hub::cache::{Caches, IncrementalView, Touched, value_of};
use crate::backend::hub::objects::text;
use crate::backend::hub::view::{HubView, aligned};
use crate::model::{ClusterStatus, Health, ResourceRef};

/// The kinds' places in [`kinds`]: Clusters, ResourceBindings, ClusterResourceBindings, Works;
/// the policies follow.
const CLUSTERS: usize = 0;
const BINDINGS: usize = 1;
const CLUSTER_BINDINGS: usize = 2;
const WORKS: usize = 3;

/// What the console watches and caches on a Karmada hub, in the order [`Live`] names them.
pub fn kinds() -> Vec<ApiResource> {
    super::read::watched_kinds()
}

/// A Work as the index keeps it: its name (its namespace is `karmada-es-CLUSTER`) and state.
#[derive(Debug, Clone, PartialEq)]
struct WorkEntry {
    name: String,
    state: WorkState,
    suspended: bool,
}

/// The Karmada view and the indexes that find what one object touches.
pub struct Live {
    view: HubView,
    kubeconfig: Kubeconfig,
    /// By `resourcebinding.karmada.io/permanent-id`.
    bindings: HashMap<String, Binding>,
    /// Binding id → member → its Work.
    works: HashMap<String, HashMap<String, WorkEntry>>,
    rows: HashMap<ResourceRef, usize>,
    /// Row → the id of the binding shown there (none: gone from the hub).
    row_binding: Vec<Option<String>>,
    columns: HashMap<String, usize>,
}

/// The parts of a Work the view reads — its name, namespace, labels and status — without its
/// manifests, which only the store keeps.
pub fn work_value(object: &DynamicObject) -> Value {
    json!({
        "metadata": {
            "name": object.metadata.name,
            "namespace": object.metadata.namespace,
            "labels": object.metadata.labels,
        },
        "status": object.data.get("status").cloned().unwrap_or(Value::Null),
    })
}

impl Live {
    /// The view of these objects (Work values as [`work_value`] gives them) in the rows and
    /// columns of `shown`, with its indexes.
    ///
    /// The objects are taken one at a time, so a big hub's are never all parsed at once.
    pub fn from_objects(
        shown: &HubView,
        clusters: impl IntoIterator<Item = Value>,
        bindings: impl IntoIterator<Item = Value>,
        works: impl IntoIterator<Item = Value>,
        kubeconfig: &Kubeconfig,
    ) -> Result<Live, String> {
        let mut members = clusters
            .into_iter()
            .map(|cluster| member_of(&cluster, kubeconfig))
            .collect::<Result<Vec<_>, String>>()?;
        members.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        let bindings: Vec<Binding> = bindings
            .into_iter()
            .map(|binding| binding_of(&binding))
            .collect();
        let mut index: HashMap<String, HashMap<String, WorkEntry>> = HashMap::new();
        let works: Vec<Work> = works
            .into_iter()
            .filter_map(|value| {
                let work = work_of(&value)?;
                index.entry(work.binding_id.clone()).or_default().insert(
                    work.cluster.clone(),
                    WorkEntry {
                        name: text(&value, "/metadata/name"),
                        state: work.state.clone(),
                        suspended: work.suspended,
                    },
                );
                Some(work)
            })
            .collect();
        let view = aligned(shown, view_of(members, &bindings, &works_by_binding(works)));
        let by_target: HashMap<&ResourceRef, &str> = bindings
            .iter()
            .map(|b| (&b.target, b.id.as_str()))
            .collect();
        let row_binding = view
            .rows
            .iter()
            .map(|row| by_target.get(&row.target).map(|id| id.to_string()))
            .collect();
        let rows = view
            .rows
            .iter()
            .enumerate()
            .map(|(index, row)| (row.target.clone(), index))
            .collect();
        let columns = view
            .clusters
            .iter()
            .enumerate()
            .map(|(index, (spec, _))| (spec.name.clone(), index))
            .collect();
        Ok(Live {
            view,
            kubeconfig: kubeconfig.clone(),
            bindings: bindings.into_iter().map(|b| (b.id.clone(), b)).collect(),
            works: index,
            rows,
            row_binding,
            columns,
        })
    }

    /// The Works of a binding, as the reader's row rules take them.
    fn works_of(&self, id: &str) -> Vec<Work> {
        self.works
            .get(id)
            .into_iter()
            .flatten()
            .map(|(cluster, entry)| Work {
                binding_id: id.to_string(),
                cluster: cluster.clone(),
                state: entry.state.clone(),
                manifests: Vec::new(),
                suspended: entry.suspended,
            })
            .collect()
    }

    /// The cell of `binding` on `cluster`, by the reader's row rules applied to that cluster
    /// alone (so one Work costs one cell, whatever the binding's number of clusters).
    fn cell_of(
        &self,
        binding: &Binding,
        cluster: &str,
    ) -> Option<(crate::model::CellStatus, Option<String>)> {
        let scheduled = binding.clusters.iter().find(|(c, _)| c == cluster)?;
        let alone = Binding {
            name: binding.name.clone(),
            target: binding.target.clone(),
            id: binding.id.clone(),
            clusters: vec![scheduled.clone()],
            unscheduled: None,
            suspension: binding.suspension.clone(),
            health: binding
                .health
                .iter()
                .filter(|(c, _)| c == cluster)
                .cloned()
                .collect(),
        };
        let work = self.works.get(&binding.id).and_then(|w| w.get(cluster));
        let works: Vec<Work> = work
            .map(|entry| Work {
                binding_id: binding.id.clone(),
                cluster: cluster.to_string(),
                state: entry.state.clone(),
                manifests: Vec::new(),
                suspended: entry.suspended,
            })
            .into_iter()
            .collect();
        row_of(&alone, &works).cells.remove(cluster)
    }

    /// The row and column a Work's labels and namespace point at.
    fn work_cell(&self, object: &DynamicObject) -> Option<(usize, usize)> {
        let id = object
            .metadata
            .labels
            .as_ref()?
            .get("resourcebinding.karmada.io/permanent-id")?;
        let cluster = object
            .metadata
            .namespace
            .as_deref()?
            .strip_prefix("karmada-es-")?;
        let binding = self.bindings.get(id)?;
        binding.clusters.iter().find(|(c, _)| c == cluster)?;
        Some((
            *self.rows.get(&binding.target)?,
            *self.columns.get(cluster)?,
        ))
    }

    fn binding_changed(&mut self, value: &Value, deleted: bool) -> Touched {
        let binding = binding_of(value);
        let row = self.rows.get(&binding.target).copied();
        if deleted {
            self.bindings.remove(&binding.id);
            let Some(row) = row else {
                return Touched::Nothing;
            };
            self.view.rows[row] = self.view.rows[row].gone();
            self.row_binding[row] = None;
            return Touched::Row(row);
        }
        let fresh = row_of(&binding, &self.works_of(&binding.id));
        let id = binding.id.clone();
        self.bindings.insert(id.clone(), binding);
        match row {
            Some(row) => {
                self.view.rows[row] = fresh;
                self.row_binding[row] = Some(id);
                Touched::Row(row)
            }
            None => {
                let row = self.view.rows.len();
                self.rows.insert(fresh.target.clone(), row);
                self.view.rows.push(fresh);
                self.row_binding.push(Some(id));
                Touched::NewRow(row)
            }
        }
    }

    fn work_changed(&mut self, object: &DynamicObject, deleted: bool) -> Touched {
        let value = work_value(object);
        let Some(work) = work_of(&value) else {
            return Touched::Nothing;
        };
        let works = self.works.entry(work.binding_id.clone()).or_default();
        if deleted {
            works.remove(&work.cluster);
        } else {
            works.insert(
                work.cluster.clone(),
                WorkEntry {
                    name: text(&value, "/metadata/name"),
                    state: work.state,
                    suspended: work.suspended,
                },
            );
        }
        let Some((row, column)) = self.work_cell(object) else {
            return Touched::Nothing;
        };
        let Some(binding) = self.bindings.get(&work.binding_id) else {
            return Touched::Nothing;
        };
        let Some(cell) = self.cell_of(binding, &work.cluster) else {
            return Touched::Nothing;
        };
        self.view.rows[row].cells.insert(work.cluster, cell);
        Touched::Cell { row, column }
    }

    fn cluster_changed(&mut self, value: &Value, deleted: bool) -> Touched {
        let name = text(value, "/metadata/name");
        let Some(&column) = self.columns.get(&name) else {
            // Columns stay those the console started with, as a full read keeps them.
            return Touched::Nothing;
        };
        if deleted {
            self.view.clusters[column].1 = ClusterStatus {
                health: Health::Unknown,
                message: "no longer a member of the hub".into(),
                ..ClusterStatus::default()
            };
            return Touched::Column(column);
        }
        match member_of(value, &self.kubeconfig) {
            Ok(member) => {
                self.view.clusters[column] = member;
                Touched::Column(column)
            }
            // A Cluster the inventory parser refuses keeps its last column; a full read
            // reports why.
            Err(_) => Touched::Nothing,
        }
    }

    /// What a change of this object would touch, before it is applied.
    pub fn touches(&self, kind: usize, object: &DynamicObject) -> Touched {
        match kind {
            CLUSTERS => object
                .metadata
                .name
                .as_ref()
                .and_then(|name| self.columns.get(name))
                .map_or(Touched::Nothing, |&column| Touched::Column(column)),
            BINDINGS | CLUSTER_BINDINGS => {
                let target = binding_of(&value_of(object)).target;
                match self.rows.get(&target) {
                    Some(&row) => Touched::Row(row),
                    None => Touched::NewRow(self.view.rows.len()),
                }
            }
            WORKS => self
                .work_cell(object)
                .map_or(Touched::Nothing, |(row, column)| Touched::Cell {
                    row,
                    column,
                }),
            _ => Touched::Nothing,
        }
    }
}

impl IncrementalView for Live {
    fn read(shown: &HubView, caches: &Caches, kubeconfig: &Kubeconfig) -> Result<Live, String> {
        let bindings = caches
            .each_object(BINDINGS)
            .chain(caches.each_object(CLUSTER_BINDINGS))
            .map(|binding| value_of(&binding));
        let works = caches.each_object(WORKS).map(|work| work_value(&work));
        let clusters = caches
            .each_object(CLUSTERS)
            .map(|cluster| value_of(&cluster));
        Live::from_objects(shown, clusters, bindings, works, kubeconfig)
    }

    fn members(
        caches: &Caches,
        kubeconfig: &Kubeconfig,
    ) -> Result<Vec<(crate::model::ClusterSpec, ClusterStatus)>, String> {
        caches
            .each_object(CLUSTERS)
            .map(|cluster| member_of(&value_of(&cluster), kubeconfig))
            .collect()
    }

    fn view(&self) -> &HubView {
        &self.view
    }

    fn view_mut(&mut self) -> &mut HubView {
        &mut self.view
    }

    fn touches(&self, kind: usize, object: &DynamicObject) -> Touched {
        Live::touches(self, kind, object)
    }

    fn apply(
        &mut self,
        _caches: &Caches,
        kind: usize,
        object: &DynamicObject,
        deleted: bool,
    ) -> Touched {
        match kind {
            CLUSTERS => self.cluster_changed(&value_of(object), deleted),
            BINDINGS | CLUSTER_BINDINGS => self.binding_changed(&value_of(object), deleted),
            WORKS => self.work_changed(object, deleted),
            _ => Touched::Nothing,
        }
    }

    fn rendered(&self, caches: &Caches, row: usize, cluster: &str) -> Option<Value> {
        let id = self.row_binding.get(row)?.as_ref()?;
        let binding = self.bindings.get(id)?;
        let entry = self.works.get(id)?.get(cluster)?;
        let work = caches.get(WORKS, Some(&format!("karmada-es-{cluster}")), &entry.name)?;
        work.data
            .pointer("/spec/workload/manifests")
            .and_then(Value::as_array)?
            .iter()
            .find(|manifest| is_target(manifest, &binding.target))
            .cloned()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::CellStatus;

    fn object(value: Value) -> DynamicObject {
        serde_json::from_value(value).unwrap()
    }

    fn cluster(name: &str, ready: &str) -> Value {
        json!({"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": name},
            "spec": {"syncMode": "Push"},
            "status": {"conditions": [{"type": "Ready", "status": ready,
                "reason": if ready == "True" { "ClusterReady" } else { "ClusterNotReachable" },
                "message": "as Karmada says"}]}})
    }

    fn binding(name: &str, clusters: &[&str]) -> Value {
        let clusters: Vec<Value> = clusters.iter().map(|c| json!({"name": c})).collect();
        json!({"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
            "metadata": {"name": format!("{name}-configmap"), "namespace": "shop",
                "labels": {"resourcebinding.karmada.io/permanent-id": format!("id-{name}")}},
            "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap",
                "namespace": "shop", "name": name}, "clusters": clusters},
            "status": {"conditions": [{"type": "Scheduled", "status": "True"}]}})
    }

    fn work(name: &str, cluster: &str, applied: &str, color: &str) -> Value {
        json!({"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
            "metadata": {"name": format!("{name}-w"), "namespace": format!("karmada-es-{cluster}"),
                "labels": {"resourcebinding.karmada.io/permanent-id": format!("id-{name}")}},
            "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "shop"}, "data": {"color": color}}]}},
            "status": {"conditions": [{"type": "Applied", "status": applied,
                "reason": if applied == "True" { "AppliedSuccessful" } else { "AppliedFailed" },
                "message": "from the member"}]}})
    }

    fn empty() -> HubView {
        HubView {
            kind: crate::model::HubKind::Karmada,
            clusters: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// Two members, bindings `web` (on both) and `db` (on b), every Work Applied.
    fn live() -> Live {
        let clusters = [cluster("a", "True"), cluster("b", "True")];
        let bindings = [binding("web", &["a", "b"]), binding("db", &["b"])];
        let works: Vec<Value> = [
            work("web", "a", "True", "blue"),
            work("web", "b", "True", "blue"),
            work("db", "b", "True", "blue"),
        ]
        .iter()
        .map(|w| work_value(&object(w.clone())))
        .collect();
        // The console's columns come from its first read; a full read keeps them.
        let shown = HubView {
            clusters: clusters
                .iter()
                .map(|c| member_of(c, &Kubeconfig::default()).unwrap())
                .collect(),
            ..empty()
        };
        Live::from_objects(
            &shown,
            clusters.clone(),
            bindings,
            works,
            &Kubeconfig::default(),
        )
        .unwrap()
    }

    /// The stores these changes go through (this view reads none of them as it changes).
    fn empty_caches() -> Caches {
        Caches::in_memory(kinds(), []).0
    }

    fn change(live: &mut Live, kind: usize, value: Value, deleted: bool) -> (Touched, Touched) {
        let object = object(value);
        let before = live.touches(kind, &object);
        (before, live.apply(&empty_caches(), kind, &object, deleted))
    }

    #[test]
    fn a_work_status_change_touches_exactly_its_cell() {
        let mut live = live();
        let web = live.view.row_of(&live.view.rows[1].target.clone()).unwrap();
        assert_eq!(
            live.view.rows[web].target.name, "web",
            "rows sorted: db, web"
        );
        let (expected, touched) =
            change(&mut live, WORKS, work("web", "b", "False", "blue"), false);
        assert_eq!(touched, Touched::Cell { row: 1, column: 1 });
        assert_eq!(expected, touched, "known before the change is applied");
        assert_eq!(
            live.view.cell(1, 1).0,
            CellStatus::Failed("AppliedFailed: from the member".into())
        );
        assert_eq!(
            live.view.cell(1, 0).0,
            CellStatus::InSync,
            "web on a untouched"
        );
        assert_eq!(
            live.view.cell(0, 1).0,
            CellStatus::InSync,
            "db on b untouched"
        );
    }

    #[test]
    fn a_deleted_work_leaves_its_cell_pending_and_a_stray_work_touches_nothing() {
        let mut live = live();
        let (_, touched) = change(&mut live, WORKS, work("db", "b", "True", "blue"), true);
        assert_eq!(touched, Touched::Cell { row: 0, column: 1 });
        let (status, message) = live.view.cell(0, 1);
        assert_eq!(status, CellStatus::Pending);
        assert!(message.unwrap().contains("no Work for b yet"));
        let (_, stray) = change(&mut live, WORKS, work("db", "a", "True", "blue"), false);
        assert_eq!(stray, Touched::Nothing, "db is not scheduled to a");
        assert!(matches!(live.view.cell(0, 0).0, CellStatus::NotPlaced(_)));
    }

    #[test]
    fn a_binding_change_touches_its_row_and_a_new_binding_adds_one_at_the_bottom() {
        let mut live = live();
        let (_, touched) = change(&mut live, BINDINGS, binding("db", &["a", "b"]), false);
        assert_eq!(touched, Touched::Row(0));
        let (status, message) = live.view.cell(0, 0);
        assert_eq!(
            status,
            CellStatus::Pending,
            "newly scheduled to a, no Work yet"
        );
        assert!(message.unwrap().contains("no Work for a yet"));
        assert_eq!(
            live.view.cell(0, 1).0,
            CellStatus::InSync,
            "its Work on b is kept"
        );

        let (expected, added) = change(&mut live, BINDINGS, binding("api", &["a"]), false);
        assert_eq!(added, Touched::NewRow(2));
        assert_eq!(expected, added);
        assert_eq!(live.view.rows[2].target.name, "api");
        let (_, work) = change(&mut live, WORKS, work("api", "a", "True", "blue"), false);
        assert_eq!(work, Touched::Cell { row: 2, column: 0 });
        assert_eq!(live.view.cell(2, 0).0, CellStatus::InSync);

        let (_, gone) = change(&mut live, BINDINGS, binding("web", &["a", "b"]), true);
        assert_eq!(gone, Touched::Row(1));
        let CellStatus::NotPlaced(reason) = live.view.cell(1, 0).0 else {
            panic!("web is gone");
        };
        assert!(reason.contains("is gone from the hub"), "{reason}");
    }

    #[test]
    fn a_cluster_change_touches_its_column_and_unreachable_overrides_its_cells() {
        let mut live = live();
        let (expected, touched) = change(&mut live, CLUSTERS, cluster("b", "False"), false);
        assert_eq!(touched, Touched::Column(1));
        assert_eq!(expected, touched);
        assert_eq!(live.view.clusters[1].1.health, Health::Unreachable);
        assert_eq!(live.view.cell(0, 1).0, CellStatus::Unreachable);
        assert_eq!(live.view.cell(1, 0).0, CellStatus::InSync);
        let (_, unknown) = change(&mut live, CLUSTERS, cluster("z", "True"), false);
        assert_eq!(unknown, Touched::Nothing, "columns stay those shown");
    }

    #[test]
    fn a_policy_change_touches_nothing_by_itself() {
        let mut live = live();
        let policy = json!({"apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "PropagationPolicy", "metadata": {"name": "p", "namespace": "shop"}});
        assert_eq!(
            change(&mut live, WORKS + 1, policy, false).1,
            Touched::Nothing
        );
    }

    #[test]
    fn the_index_keeps_no_manifest_and_a_full_read_agrees_with_the_changes() {
        let mut live = live();
        assert!(live.view.rows.iter().all(|row| row.objects.is_empty()));
        change(&mut live, WORKS, work("web", "b", "False", "blue"), false);
        change(&mut live, BINDINGS, binding("db", &["a", "b"]), false);
        let clusters = [cluster("a", "True"), cluster("b", "True")];
        let bindings = [binding("web", &["a", "b"]), binding("db", &["a", "b"])];
        let works: Vec<Value> = [
            work("web", "a", "True", "blue"),
            work("web", "b", "False", "blue"),
            work("db", "b", "True", "blue"),
        ]
        .iter()
        .map(|w| work_value(&object(w.clone())))
        .collect();
        let whole = Live::from_objects(
            &live.view,
            clusters,
            bindings,
            works,
            &Kubeconfig::default(),
        )
        .unwrap();
        assert_eq!(whole.view.rows, live.view.rows);
    }
}
