//! A KubeFed hub's view kept current one object at a time, from the informer caches: a
//! Federated object change touches exactly its row; a change of what every row reads — a
//! KubeFedCluster (cluster selectors place by its labels), a FederatedTypeConfig, a
//! FederatedNamespace — rebuilds the rows from the stores in memory, with no request to the
//! hub. The per-object rules are the reader's (`kubefed.rs`); this file only indexes them.
//! KubeFed keeps no rendered objects, so there is none to look up. It must not talk to the hub.

use std::collections::{BTreeMap, HashMap};

use kube::config::Kubeconfig;
use serde_json::Value;

use super::cache::{Caches, IncrementalView, Touched};
use super::kubefed::{Context, FederatedType, clusters_of, context_of, row_of, type_of, view_of};
use super::view::{HubView, aligned};
use crate::backend::hub::error::HubError;
use crate::engine::dialect::kubefed::{KfPlacement, KindMap};
use crate::model::{ClusterSpec, ResourceRef};

/// KubeFedClusters come first in the watched kinds, the FederatedTypeConfigs last, the
/// Federated types between them.
const CLUSTERS: usize = 0;

/// The KubeFed view and what one Federated object's row is read with.
pub struct Live {
    view: HubView,
    kubeconfig: Kubeconfig,
    /// Per watched kind: the Federated type it serves (none for clusters and configs).
    types: Vec<Option<FederatedType>>,
    specs: Vec<ClusterSpec>,
    kinds: KindMap,
    namespaces: BTreeMap<String, KfPlacement>,
    rows: HashMap<ResourceRef, usize>,
    /// (kind, `namespace/name` of the Federated object) → its row.
    objects: HashMap<(usize, String), usize>,
}

/// A watched object as this view reads it, parsed once where it enters ([`parse`]): its
/// `namespace/name`, whether it is a FederatedNamespace, and its JSON for the reader's rows.
#[derive(Debug, Clone)]
pub struct Object {
    key: String,
    federated_namespace: bool,
    value: Value,
}

/// What the view reads of an object whose JSON is `text`.
pub fn parse(_kind: usize, text: &str) -> Object {
    let value: Value = serde_json::from_str(text).unwrap_or_default();
    let field = |pointer: &str| value.pointer(pointer).and_then(Value::as_str);
    Object {
        key: format!(
            "{}/{}",
            field("/metadata/namespace").unwrap_or_default(),
            field("/metadata/name").unwrap_or_default()
        ),
        federated_namespace: field("/apiVersion").is_some()
            && field("/kind") == Some("FederatedNamespace"),
        value,
    }
}

impl Live {
    fn configs(caches: &Caches) -> usize {
        caches.kinds.len().saturating_sub(1)
    }

    /// Rows, context and indexes from the stores, in the rows and columns of `shown`.
    fn build(shown: &HubView, caches: &Caches, kubeconfig: &Kubeconfig) -> Result<Live, HubError> {
        let configs = caches.values(Live::configs(caches));
        let declared: Vec<FederatedType> = configs.iter().filter_map(type_of).collect();
        let types: Vec<Option<FederatedType>> = caches
            .kinds
            .iter()
            .enumerate()
            .map(|(index, kind)| {
                if index == CLUSTERS || index == Live::configs(caches) {
                    return None;
                }
                declared.iter().find(|ty| ty.resource == *kind).cloned()
            })
            .collect();
        let objects: Vec<(FederatedType, Vec<Value>)> = types
            .iter()
            .enumerate()
            .filter_map(|(index, ty)| Some((ty.clone()?, caches.values(index))))
            .collect();
        let clusters = clusters_of(&caches.values(CLUSTERS), kubeconfig)?;
        let specs: Vec<ClusterSpec> = clusters.iter().map(|(spec, _)| spec.clone()).collect();
        let (kinds, namespaces) = context_of(&specs, &configs, &objects);
        let view = aligned(shown, view_of(clusters, &configs, &objects));
        let rows: HashMap<ResourceRef, usize> = view
            .rows
            .iter()
            .enumerate()
            .map(|(index, row)| (row.target.clone(), index))
            .collect();
        let mut live = Live {
            view,
            kubeconfig: kubeconfig.clone(),
            types,
            specs,
            kinds,
            namespaces,
            rows,
            objects: HashMap::new(),
        };
        for (index, ty) in live.types.clone().iter().enumerate() {
            let Some(ty) = ty else { continue };
            for object in caches.each_parsed(index, parse) {
                let target = live.row_for(&object.value, ty).target;
                if let Some(&row) = live.rows.get(&target) {
                    live.objects.insert((index, object.key), row);
                }
            }
        }
        Ok(live)
    }

    fn row_for(&self, value: &Value, ty: &FederatedType) -> crate::backend::hub::HubRow {
        let ctx = Context {
            clusters: &self.specs,
            kinds: &self.kinds,
            namespaces: &self.namespaces,
        };
        row_of(value, ty, &ctx)
    }

    /// Whether a change of this object changes what every row reads.
    fn moves_every_row(&self, kind: usize, object: &Object) -> bool {
        match self.types.get(kind) {
            Some(Some(_)) => object.federated_namespace,
            _ => true,
        }
    }
}

impl IncrementalView for Live {
    type Object = Object;

    fn parse(kind: usize, text: &str) -> Object {
        parse(kind, text)
    }

    fn read(shown: &HubView, caches: &Caches, kubeconfig: &Kubeconfig) -> Result<Live, HubError> {
        Live::build(shown, caches, kubeconfig)
    }

    fn members(
        caches: &Caches,
        kubeconfig: &Kubeconfig,
    ) -> Result<Vec<(crate::model::ClusterSpec, crate::model::ClusterStatus)>, HubError> {
        clusters_of(&caches.values(CLUSTERS), kubeconfig)
    }

    fn view(&self) -> &HubView {
        &self.view
    }

    fn view_mut(&mut self) -> &mut HubView {
        &mut self.view
    }

    fn touches(&self, kind: usize, object: &Object) -> Touched {
        if self.moves_every_row(kind, object) {
            return Touched::All;
        }
        match self.objects.get(&(kind, object.key.clone())) {
            Some(&row) => Touched::Row(row),
            None => Touched::Nothing,
        }
    }

    fn apply(&mut self, caches: &Caches, kind: usize, object: &Object, deleted: bool) -> Touched {
        if self.moves_every_row(kind, object) {
            // The stores already hold the change: read them again, in the rows shown.
            return match Live::build(&self.view, caches, &self.kubeconfig) {
                Ok(live) => {
                    *self = live;
                    Touched::All
                }
                Err(_) => Touched::Nothing,
            };
        }
        let Some(Some(ty)) = self.types.get(kind).cloned() else {
            return Touched::Nothing;
        };
        let key = (kind, object.key.clone());
        if deleted {
            let Some(row) = self.objects.remove(&key) else {
                return Touched::Nothing;
            };
            self.view.rows[row] = self.view.rows[row].gone();
            return Touched::Row(row);
        }
        let fresh = self.row_for(&object.value, &ty);
        let row = match self.rows.get(&fresh.target) {
            Some(&row) => {
                self.view.rows[row] = fresh;
                row
            }
            None => {
                let row = self.view.rows.len();
                self.rows.insert(fresh.target.clone(), row);
                self.view.rows.push(fresh);
                row
            }
        };
        self.objects.insert(key, row);
        Touched::Row(row)
    }

    fn rendered(&self, _caches: &Caches, _row: usize, _cluster: &str) -> Option<Value> {
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use kube::discovery::ApiResource;
    use kube::runtime::watcher;
    use serde_json::json;

    use super::*;
    use crate::model::CellStatus;

    fn object(value: Value) -> kube::api::DynamicObject {
        serde_json::from_value(value).unwrap()
    }

    fn resource(group: &str, kind: &str, plural: &str) -> ApiResource {
        ApiResource {
            group: group.into(),
            version: "v1beta1".into(),
            api_version: format!("{group}/v1beta1"),
            kind: kind.into(),
            plural: plural.into(),
        }
    }

    fn cluster(name: &str, region: &str) -> Value {
        json!({"apiVersion": "core.kubefed.io/v1beta1", "kind": "KubeFedCluster",
            "metadata": {"name": name, "namespace": "kube-federation-system",
                "labels": {"region": region}},
            "spec": {"apiEndpoint": "https://127.0.0.1:6443", "secretRef": {"name": "t"}},
            "status": {"conditions": [{"type": "Ready", "status": "True",
                "reason": "ClusterReady", "message": "ok"}]}})
    }

    fn config_map(placement: Value) -> Value {
        json!({"apiVersion": "types.kubefed.io/v1beta1", "kind": "FederatedConfigMap",
            "metadata": {"name": "colors", "namespace": "shop", "generation": 1},
            "spec": {"template": {"data": {"color": "blue"}}, "placement": placement},
            "status": {"observedGeneration": 1,
                "conditions": [{"type": "Propagation", "status": "True"}],
                "clusters": []}})
    }

    /// Members 1 (eu) and 2 (us), and FederatedConfigMap `colors` on member-1.
    fn hub() -> (Caches, Vec<crate::backend::hub::cache::CacheWriter>, Live) {
        let ftc = json!({"apiVersion": "core.kubefed.io/v1beta1", "kind": "FederatedTypeConfig",
            "metadata": {"name": "configmaps", "namespace": "kube-federation-system"},
            "spec": {"federatedType": {"group": "types.kubefed.io", "kind": "FederatedConfigMap",
                    "pluralName": "federatedconfigmaps", "scope": "Namespaced",
                    "version": "v1beta1"},
                "propagation": "Enabled",
                "targetType": {"kind": "ConfigMap", "pluralName": "configmaps",
                    "scope": "Namespaced", "version": "v1"}}});
        let namespaces = json!({"apiVersion": "core.kubefed.io/v1beta1",
            "kind": "FederatedTypeConfig",
            "metadata": {"name": "namespaces", "namespace": "kube-federation-system"},
            "spec": {"federatedType": {"group": "types.kubefed.io", "kind": "FederatedNamespace",
                    "pluralName": "federatednamespaces", "scope": "Namespaced",
                    "version": "v1beta1"},
                "propagation": "Enabled",
                "targetType": {"kind": "Namespace", "pluralName": "namespaces",
                    "scope": "Cluster", "version": "v1"}}});
        let shop = json!({"apiVersion": "types.kubefed.io/v1beta1", "kind": "FederatedNamespace",
            "metadata": {"name": "shop", "namespace": "shop", "generation": 1},
            "spec": {"placement": {"clusters": [{"name": "member-1"}, {"name": "member-2"}]}}});
        let kinds = vec![
            resource("core.kubefed.io", "KubeFedCluster", "kubefedclusters"),
            resource(
                "types.kubefed.io",
                "FederatedConfigMap",
                "federatedconfigmaps",
            ),
            resource(
                "types.kubefed.io",
                "FederatedNamespace",
                "federatednamespaces",
            ),
            resource(
                "core.kubefed.io",
                "FederatedTypeConfig",
                "federatedtypeconfigs",
            ),
        ];
        let (caches, writers) = Caches::in_memory(
            kinds,
            [
                (0, object(cluster("member-1", "eu"))),
                (0, object(cluster("member-2", "us"))),
                (
                    1,
                    object(config_map(json!({"clusters": [{"name": "member-1"}]}))),
                ),
                (2, object(shop)),
                (3, object(ftc)),
                (3, object(namespaces)),
            ],
        );
        let kubeconfig = Kubeconfig::default();
        let shown = HubView {
            kind: crate::model::HubKind::KubeFed,
            clusters: clusters_of(&caches.values(0), &kubeconfig).unwrap(),
            rows: Vec::new(),
        };
        let live = Live::build(&shown, &caches, &kubeconfig).unwrap();
        (caches, writers, live)
    }

    #[test]
    fn a_federated_object_change_touches_its_row_and_a_cluster_change_every_row() {
        let (caches, mut writers, mut live) = hub();
        let row = live
            .view
            .rows
            .iter()
            .position(|r| r.target.display_key() == "ConfigMap/shop/colors")
            .unwrap();
        assert!(matches!(live.view.cell(row, 1).0, CellStatus::NotPlaced(_)));

        let selected_value =
            config_map(json!({"clusterSelector": {"matchLabels": {"region": "us"}}}));
        let selected_text = selected_value.to_string();
        let selected = object(selected_value);
        writers[1].apply_watcher_event(&watcher::Event::Apply(selected.clone()));
        let parsed = parse(1, &selected_text);
        assert_eq!(live.touches(1, &parsed), Touched::Row(row));
        assert_eq!(live.apply(&caches, 1, &parsed, false), Touched::Row(row));
        assert!(
            !matches!(live.view.cell(row, 1).0, CellStatus::NotPlaced(_)),
            "the selector picks member-2: {:?}",
            live.view.cell(row, 1)
        );
        assert!(matches!(live.view.cell(row, 0).0, CellStatus::NotPlaced(_)));

        // member-1 moves to us: the selector now picks it too, read from the stores again.
        let moved_value = cluster("member-1", "us");
        let parsed = parse(0, &moved_value.to_string());
        writers[0].apply_watcher_event(&watcher::Event::Apply(object(moved_value)));
        assert_eq!(live.touches(0, &parsed), Touched::All);
        assert_eq!(live.apply(&caches, 0, &parsed, false), Touched::All);
        assert!(!matches!(
            live.view.cell(row, 0).0,
            CellStatus::NotPlaced(_)
        ));
    }
}
