//! What the hub console's unit tests start from: a Karmada hub in memory (members `a` and
//! `b`, binding `web` on both, a Work on each), a hub nothing answers at, and a view of
//! ConfigMap rows on one member. Test code only; it must not talk to a hub.

use kube::api::DynamicObject;
use serde_json::{Value, json};

use crate::backend::hub::cache::{CacheWriter, Caches};
use crate::backend::hub::connect::Hub;
use crate::backend::hub::karmada;
use crate::backend::hub::view::{HubRow, HubView};
use crate::backend::kube::kubeconfig::Timeouts;
use crate::model::{CellStatus, ClusterSpec, ClusterStatus, HubKind, ResourceRef};

/// The Works' place in Karmada's watched kinds.
pub const WORKS: usize = 3;

pub fn object(value: Value) -> DynamicObject {
    serde_json::from_value(value).expect("an object")
}

/// Binding `web`'s Work on `cluster`: Applied (`applied` "True") or failed, its ConfigMap's
/// `color`, at resourceVersion `version`.
pub fn work(cluster: &str, applied: &str, color: &str, version: &str) -> DynamicObject {
    object(
        json!({"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
        "metadata": {"name": "web-w", "namespace": format!("karmada-es-{cluster}"),
            "resourceVersion": version,
            "labels": {"resourcebinding.karmada.io/permanent-id": "id-web"}},
        "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "web", "namespace": "shop"}, "data": {"color": color}}]}},
        "status": {"conditions": [{"type": "Applied", "status": applied,
            "reason": "AppliedFailed", "message": "from the member"}]}}),
    )
}

/// A Karmada hub's stores: members `a` and `b` Ready, binding `web` on both, both Works
/// Applied with `color` blue; with the writers that change them as a watcher would.
pub fn karmada_caches() -> (Caches, Vec<CacheWriter>) {
    let cluster = |name: &str| {
        object(
            json!({"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": name},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
        )
    };
    Caches::in_memory(
        karmada::delta::kinds(),
        [
            (0, cluster("a")),
            (0, cluster("b")),
            (1, web_binding(None)),
            (WORKS, work("a", "True", "blue", "1")),
            (WORKS, work("b", "True", "blue", "1")),
        ],
    )
}

/// Binding `web` of ConfigMap `shop/web`, scheduled to `a` and `b`, with `status` if given.
pub fn web_binding(status: Option<Value>) -> DynamicObject {
    let mut binding = json!({"apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "web-configmap", "namespace": "shop",
            "labels": {"resourcebinding.karmada.io/permanent-id": "id-web"}},
        "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap",
            "namespace": "shop", "name": "web"},
            "clusters": [{"name": "a"}, {"name": "b"}]}});
    if let Some(status) = status {
        binding["status"] = status;
    }
    object(binding)
}

/// A Karmada hub nothing answers at: what is asked of it must not need it.
pub fn silent_hub() -> Hub {
    let config = kube::Config::new("http://127.0.0.1:1".parse().expect("a URL"));
    Hub {
        context: "hub".into(),
        kind: HubKind::Karmada,
        client: kube::Client::try_from(config).expect("a client"),
        kubeconfig: Default::default(),
        timeouts: Timeouts::default(),
    }
}

/// ConfigMap `shop/NAME`.
pub fn target(name: &str) -> ResourceRef {
    ResourceRef {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        namespace: Some("shop".into()),
        name: name.into(),
    }
}

/// A Karmada view of one member `m1` with a ConfigMap row for each `(name, object)`, its cell
/// InSync and its rendered object `object`.
pub fn view(rows: &[(&str, Option<Value>)]) -> HubView {
    let member = ClusterSpec {
        name: "m1".into(),
        ..ClusterSpec::default()
    };
    HubView {
        kind: HubKind::Karmada,
        clusters: vec![(member, ClusterStatus::default())],
        rows: rows
            .iter()
            .map(|(name, object)| HubRow {
                target: target(name),
                source: format!("ResourceBinding shop/{name}"),
                carrier: None,
                cells: [(
                    "m1".to_string(),
                    (CellStatus::InSync, Some("Work Applied".into())),
                )]
                .into(),
                not_placed: String::new(),
                objects: object
                    .iter()
                    .map(|o| ("m1".to_string(), o.clone()))
                    .collect(),
                health: Default::default(),
            })
            .collect(),
    }
}
