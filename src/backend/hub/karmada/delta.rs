//! A Karmada hub's view kept current one object at a time, from the informer caches: a Work
//! change touches exactly its (binding's row, member's column) cell, a (Cluster)ResourceBinding
//! change its row (a new binding adds one at the bottom), a member Cluster change its column,
//! and a policy change nothing by itself (Karmada re-renders the bindings and Works, whose own
//! changes follow). The per-object rules are the reader's (`read.rs`); this file only indexes
//! them. It keeps no Work manifest: the reflector store holds each Work once, and the rendered
//! object of a cell is looked up there when a preview or a followed edit needs it. It must not
//! talk to the hub.

use std::collections::HashMap;

use kube::config::Kubeconfig;
use kube::discovery::ApiResource;
use serde_json::Value;

use super::read::{
    Binding, Work, WorkParts, WorkState, binding_of, cell_on, is_target, member_of, row_of,
    view_of, works_by_binding,
};
use crate::backend::hub::cache::{Caches, IncrementalView, Touched, value_of};
use crate::backend::hub::error::HubError;
use crate::backend::hub::view::{HubView, aligned};
use crate::model::{ClusterStatus, Health, ResourceRef};

/// The kinds' places in [`kinds`]: Clusters, ResourceBindings, ClusterResourceBindings, Works;
/// the four policy kinds follow, then the resource interpreter customizations.
const CLUSTERS: usize = 0;
const BINDINGS: usize = 1;
const CLUSTER_BINDINGS: usize = 2;
const WORKS: usize = 3;
const INTERPRETERS: usize = WORKS + 5;

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

/// A watched object as this view reads it, parsed once where it enters ([`parse`]).
#[derive(Debug, Clone)]
pub enum Object {
    /// A member Cluster: its name, and its JSON for the inventory parser.
    Cluster { name: String, value: Value },
    /// A ResourceBinding or ClusterResourceBinding.
    Binding(Binding),
    /// A Work: its name, and the Work without its manifests (`None`: it belongs to no binding
    /// or to no member namespace).
    Work { name: String, work: Option<Work> },
    /// A policy: it touches nothing by itself.
    Other,
}

/// What the view reads of an object of kind `kind` whose JSON is `text`: a Work's manifests
/// are skipped unparsed, every other kind is parsed once into the reader's form.
pub fn parse(kind: usize, text: &str) -> Object {
    match kind {
        CLUSTERS => {
            let value = json_of(text);
            Object::Cluster {
                name: crate::backend::hub::objects::text(&value, "/metadata/name"),
                value,
            }
        }
        BINDINGS | CLUSTER_BINDINGS => Object::Binding(binding_of(&json_of(text))),
        WORKS => {
            let parts = work_parts(text);
            Object::Work {
                name: parts.name(),
                work: parts.work(),
            }
        }
        _ => Object::Other,
    }
}

/// `text` as JSON (null if it is none: the API server sent it, so it always is).
fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_default()
}

/// What the view reads of a Work whose JSON is `text`.
fn work_parts(text: &str) -> WorkParts {
    serde_json::from_str(text).unwrap_or_default()
}

impl Live {
    /// The view of these objects (Works as [`parse`] reads them) in the rows and columns of
    /// `shown`, with its indexes.
    ///
    /// The objects are taken one at a time, so a big hub's are never all parsed at once.
    pub fn from_objects(
        shown: &HubView,
        clusters: impl IntoIterator<Item = Value>,
        bindings: impl IntoIterator<Item = Binding>,
        works: impl IntoIterator<Item = WorkParts>,
        kubeconfig: &Kubeconfig,
    ) -> Result<Live, HubError> {
        let mut members = clusters
            .into_iter()
            .map(|cluster| member_of(&cluster, kubeconfig))
            .collect::<Result<Vec<_>, HubError>>()?;
        members.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        let bindings: Vec<Binding> = bindings.into_iter().collect();
        let mut index: HashMap<String, HashMap<String, WorkEntry>> = HashMap::new();
        let works: Vec<Work> = works
            .into_iter()
            .filter_map(|parts| {
                let work = parts.work()?;
                index.entry(work.binding_id.clone()).or_default().insert(
                    work.cluster.clone(),
                    WorkEntry {
                        name: parts.name(),
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

    /// Where `work`'s cell is shown — its binding, the replicas scheduled to its cluster, its
    /// row and column — when its binding is scheduled there.
    fn work_cell(&self, work: &Work) -> Option<(&Binding, Option<i64>, usize, usize)> {
        let binding = self.bindings.get(&work.binding_id)?;
        let (_, replicas) = binding.clusters.iter().find(|(c, _)| *c == work.cluster)?;
        Some((
            binding,
            *replicas,
            *self.rows.get(&binding.target)?,
            *self.columns.get(&work.cluster)?,
        ))
    }

    fn binding_changed(&mut self, binding: &Binding, deleted: bool) -> Touched {
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
        let fresh = row_of(binding, &self.works_of(&binding.id));
        let id = binding.id.clone();
        self.bindings.insert(id.clone(), binding.clone());
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

    fn work_changed(&mut self, name: &str, work: &Work, deleted: bool) -> Touched {
        let works = self.works.entry(work.binding_id.clone()).or_default();
        let entry = if deleted {
            works.remove(&work.cluster);
            None
        } else {
            let entry = WorkEntry {
                name: name.to_string(),
                state: work.state.clone(),
                suspended: work.suspended,
            };
            works.insert(work.cluster.clone(), entry.clone());
            Some(entry)
        };
        let Some((binding, replicas, row, column)) = self.work_cell(work) else {
            return Touched::Nothing;
        };
        let cell = cell_on(
            binding,
            &work.cluster,
            replicas,
            entry.as_ref().map(|e| (&e.state, e.suspended)),
        );
        self.view.rows[row].cells.insert(work.cluster.clone(), cell);
        Touched::Cell { row, column }
    }

    fn cluster_changed(&mut self, name: &str, value: &Value, deleted: bool) -> Touched {
        let Some(&column) = self.columns.get(name) else {
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
    pub fn touches(&self, object: &Object) -> Touched {
        match object {
            Object::Cluster { name, .. } => self
                .columns
                .get(name)
                .map_or(Touched::Nothing, |&column| Touched::Column(column)),
            Object::Binding(binding) => match self.rows.get(&binding.target) {
                Some(&row) => Touched::Row(row),
                None => Touched::NewRow(self.view.rows.len()),
            },
            Object::Work {
                work: Some(work), ..
            } => self
                .work_cell(work)
                .map_or(Touched::Nothing, |(_, _, row, column)| Touched::Cell {
                    row,
                    column,
                }),
            Object::Work { work: None, .. } | Object::Other => Touched::Nothing,
        }
    }
}

impl IncrementalView for Live {
    type Object = Object;

    fn parse(kind: usize, text: &str) -> Object {
        parse(kind, text)
    }

    fn read(shown: &HubView, caches: &Caches, kubeconfig: &Kubeconfig) -> Result<Live, HubError> {
        let binding = |_: usize, text: &str| binding_of(&json_of(text));
        let bindings = caches
            .each_parsed(BINDINGS, binding)
            .chain(caches.each_parsed(CLUSTER_BINDINGS, binding));
        let works = caches.each_parsed(WORKS, |_, text| work_parts(text));
        let clusters = caches.each_parsed(CLUSTERS, |_, text| json_of(text));
        Live::from_objects(shown, clusters, bindings, works, kubeconfig)
    }

    fn members(
        caches: &Caches,
        kubeconfig: &Kubeconfig,
    ) -> Result<Vec<(crate::model::ClusterSpec, ClusterStatus)>, HubError> {
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

    fn touches(&self, _kind: usize, object: &Object) -> Touched {
        Live::touches(self, object)
    }

    fn interpreters_kind() -> Option<usize> {
        Some(INTERPRETERS)
    }

    fn apply(&mut self, _caches: &Caches, _kind: usize, object: &Object, deleted: bool) -> Touched {
        match object {
            Object::Cluster { name, value } => self.cluster_changed(name, value, deleted),
            Object::Binding(binding) => self.binding_changed(binding, deleted),
            Object::Work {
                name,
                work: Some(work),
            } => self.work_changed(name, work, deleted),
            Object::Work { work: None, .. } | Object::Other => Touched::Nothing,
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
    use serde_json::json;

    use super::*;
    use crate::model::CellStatus;

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
        let works: Vec<WorkParts> = [
            work("web", "a", "True", "blue"),
            work("web", "b", "True", "blue"),
            work("db", "b", "True", "blue"),
        ]
        .iter()
        .map(|w| work_parts(&w.to_string()))
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
            bindings.iter().map(binding_of),
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
        let object = parse(kind, &value.to_string());
        let before = live.touches(&object);
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
    fn the_interpreters_kind_is_the_customizations() {
        let kinds = kinds();
        assert_eq!(
            kinds[INTERPRETERS],
            crate::backend::hub::karmada::types::interpreter_resource()
        );
        assert_eq!(kinds.len(), INTERPRETERS + 1);
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
        let works: Vec<WorkParts> = [
            work("web", "a", "True", "blue"),
            work("web", "b", "False", "blue"),
            work("db", "b", "True", "blue"),
        ]
        .iter()
        .map(|w| work_parts(&w.to_string()))
        .collect();
        let whole = Live::from_objects(
            &live.view,
            clusters,
            bindings.iter().map(binding_of),
            works,
            &Kubeconfig::default(),
        )
        .unwrap();
        assert_eq!(whole.view.rows, live.view.rows);
    }
}
