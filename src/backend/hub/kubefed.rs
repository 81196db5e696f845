//! Reading a KubeFed hub: its KubeFedClusters (labels, region and zones through the same
//! inventory parser the fleet directory uses; health from KubeFed's Ready / Offline /
//! ConfigMalformed conditions with their reason and message; the version KubeFed probed), its
//! FederatedTypeConfigs (which Federated kinds exist and what they propagate), and every
//! Federated object as one row whose cells come from `status.clusters[]` and the Propagation
//! condition, with placement reasons for the clusters KubeFed leaves out; and, since KubeFed
//! keeps no per-cluster objects, `render --hub`'s objects as flotilla's engine renders the
//! Federated objects, labelled so. Only reads; it must not write to the hub.

use std::collections::BTreeMap;

use kube::Client;
use kube::config::Kubeconfig;
use kube::discovery::ApiResource;
use serde_json::Value;

use super::objects::{self, as_written, condition, path_of, reason_message, text};
use super::view::{HubRender, HubRow, HubView, RenderedObject, Unplaced, sort_rows};
use crate::backend::fanout::cluster_api::ApiError;
use crate::backend::hub::error::HubError;
use crate::engine::dialect::kubefed::{FederatedObject, KfPlacement, KindMap};
use crate::engine::document::parse::Doc;
use crate::engine::fleet::inventory::{InventoryKind, parse_cluster};
use crate::model::HubKind;
use crate::model::{CellStatus, ClusterSpec, ClusterStatus, Health, ResourceRef};

const CORE_GROUP: &str = "core.kubefed.io";
const CORE_VERSION: &str = "v1beta1";

fn core_resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: CORE_GROUP.into(),
        version: CORE_VERSION.into(),
        api_version: format!("{CORE_GROUP}/{CORE_VERSION}"),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// Lists every object of `resource` in all namespaces; a resource the hub does not serve
/// (a FederatedTypeConfig whose CRD is missing) lists as empty.
async fn list_values(client: &Client, resource: &ApiResource) -> Result<Vec<Value>, HubError> {
    match objects::list_objects(client, resource).await {
        Ok(values) => Ok(values),
        Err(ApiError::NotFound(_)) => Ok(Vec::new()),
        Err(err) => Err(HubError::Unreachable(format!(
            "listing {} on the hub: {err}",
            resource.kind
        ))),
    }
}

/// `namespace/name`, or `name` for a cluster-scoped object.
fn qualified(value: &Value) -> String {
    let namespace = text(value, "/metadata/namespace");
    let name = text(value, "/metadata/name");
    if namespace.is_empty() {
        name
    } else {
        format!("{namespace}/{name}")
    }
}

/// Every KubeFedCluster of the hub, in name order, with the health KubeFed reports for it. A
/// member reaches flotilla through the kubeconfig context of its name when there is one (or
/// the `flotilla.dev/context` annotation), else only through the hub.
pub async fn clusters(
    client: &Client,
    kubeconfig: &Kubeconfig,
) -> Result<Vec<(ClusterSpec, ClusterStatus)>, HubError> {
    let values = list_values(client, &core_resource("KubeFedCluster", "kubefedclusters")).await?;
    clusters_of(&values, kubeconfig)
}

/// KubeFedCluster objects as the console's columns, in name order.
pub fn clusters_of(
    values: &[Value],
    kubeconfig: &Kubeconfig,
) -> Result<Vec<(ClusterSpec, ClusterStatus)>, HubError> {
    let mut clusters = Vec::new();
    for value in values {
        let doc = Doc::from_value(
            &format!("hub KubeFedCluster/{}", qualified(value)),
            value.clone(),
        );
        let mut spec = parse_cluster(&doc, InventoryKind::KubeFed)
            .map_err(|e| HubError::Unreadable(e.to_string()))?;
        if spec.context.is_empty() && kubeconfig.contexts.iter().any(|c| c.name == spec.name) {
            spec.context = spec.name.clone();
        }
        clusters.push((spec, status_of(value)));
    }
    clusters.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    Ok(clusters)
}

/// A KubeFedCluster's health from KubeFed's conditions: `Offline` True is Unreachable,
/// `ConfigMalformed` True (KubeFed cannot build a client from the cluster's secret) and
/// `Ready` False are NotReady, `Ready` True is Ready; the condition's reason and message and
/// the version KubeFed probed go with it.
pub fn status_of(cluster: &Value) -> ClusterStatus {
    let is_true = |kind: &str| condition(cluster, kind).filter(|c| c["status"] == "True");
    let (health, deciding) = if let Some(c) = is_true("Offline") {
        (Health::Unreachable, Some(c))
    } else if let Some(c) = is_true("ConfigMalformed") {
        (Health::NotReady, Some(c))
    } else {
        match condition(cluster, "Ready") {
            Some(c) if c["status"] == "True" => (Health::Ready, Some(c)),
            Some(c) if c["status"] == "False" => (Health::NotReady, Some(c)),
            other => (Health::Unknown, other),
        }
    };
    let described = match deciding {
        None => "no status reported by KubeFed yet".to_string(),
        Some(c) => match reason_message(c) {
            said if said.is_empty() => format!("{} {}", text(c, "/type"), text(c, "/status")),
            said => said,
        },
    };
    ClusterStatus {
        health,
        version: cluster
            .pointer("/status/kubernetesVersion")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_string),
        latency_ms: None,
        message: format!("{described} (via the KubeFed hub)"),
    }
}

/// One federated type as a FederatedTypeConfig declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct FederatedType {
    /// The FederatedTypeConfig's `namespace/name`, for messages.
    pub config: String,
    /// Where the Federated objects are served.
    pub resource: ApiResource,
    /// `spec.propagation` is `Disabled`.
    pub disabled: bool,
}

/// A FederatedTypeConfig's federated type; `None` when it names no kind or plural.
pub fn type_of(ftc: &Value) -> Option<FederatedType> {
    let kind = text(ftc, "/spec/federatedType/kind");
    let plural = text(ftc, "/spec/federatedType/pluralName");
    if kind.is_empty() || plural.is_empty() {
        return None;
    }
    let group = Some(text(ftc, "/spec/federatedType/group"))
        .filter(|g| !g.is_empty())
        .unwrap_or_else(|| crate::engine::dialect::kubefed::TYPES_GROUP.to_string());
    let version = Some(text(ftc, "/spec/federatedType/version"))
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "v1beta1".to_string());
    Some(FederatedType {
        config: qualified(ftc),
        resource: ApiResource {
            api_version: format!("{group}/{version}"),
            group,
            version,
            kind,
            plural,
        },
        disabled: text(ftc, "/spec/propagation") == "Disabled",
    })
}

/// What a `status.clusters[].status` value means for the cell, in design §4's vocabulary,
/// with KubeFed's reason and what it says.
pub fn cell_of_status(reason: &str) -> (CellStatus, Option<String>) {
    let failed = |what: &str| (CellStatus::Failed(format!("{reason}: {what}")), None);
    match reason {
        "" => (
            CellStatus::InSync,
            Some("propagated (KubeFed reports no error)".into()),
        ),
        "ClusterNotReady" => (
            CellStatus::Unreachable,
            Some("ClusterNotReady: KubeFed cannot reach the cluster".into()),
        ),
        "WaitingForRemoval" => (
            CellStatus::Pending,
            Some("WaitingForRemoval: KubeFed is removing it from this cluster".into()),
        ),
        "CachedRetrievalFailed" => {
            failed("reading the cluster's object from KubeFed's cache failed")
        }
        "ComputeResourceFailed" => failed("KubeFed could not compute the object for this cluster"),
        "ApplyOverridesFailed" => failed("applying this cluster's overrides failed"),
        "CreationFailed" => failed("the cluster refused to create the object"),
        "UpdateFailed" => failed("the cluster refused the update"),
        "DeletionFailed" => failed("deleting the object from the cluster failed"),
        "LabelRemovalFailed" => failed("removing KubeFed's managed label failed"),
        "RetrievalFailed" => failed("reading the object from the cluster failed"),
        "AlreadyExists" => {
            failed("an object of that name already exists on the cluster and adoption is disabled")
        }
        "FieldRetentionFailed" => failed("keeping the cluster's retained fields failed"),
        "VersionRetrievalFailed" => failed("reading the propagated version failed"),
        "ClientRetrievalFailed" => failed("KubeFed has no client for the cluster"),
        "ManagedLabelFalse" => failed(
            "the object on the cluster is labelled kubefed.io/managed=false, so KubeFed leaves it alone",
        ),
        "CreationTimedOut" | "UpdateTimedOut" | "DeletionTimedOut" | "LabelRemovalTimedOut" => {
            failed("the cluster did not answer in time (KubeFed retries)")
        }
        _ => failed("reported by KubeFed"),
    }
}

/// The Propagation condition of a Federated object: `None` when it is True (or absent),
/// else its reason (`CheckClusters`, `NamespaceNotFederated`, …).
fn propagation_problem(object: &Value) -> Option<String> {
    let c = condition(object, "Propagation")?;
    if c["status"] == "True" {
        return None;
    }
    let reason = text(c, "/reason");
    Some(if reason.is_empty() {
        format!("Propagation {}", text(c, "/status"))
    } else {
        reason
    })
}

/// What a row needs to know about the hub besides its own object.
pub struct Context<'a> {
    pub clusters: &'a [ClusterSpec],
    pub kinds: &'a KindMap,
    /// Placement of each namespace's FederatedNamespace, by namespace.
    pub namespaces: &'a BTreeMap<String, KfPlacement>,
}

/// The console's row for one Federated object. Every hub cluster gets a cell: from
/// `status.clusters[]` when KubeFed reports the cluster (and has seen the current
/// generation), else NotPlaced with the placement's reason (the object's own placement, its
/// namespace's FederatedNamespace, a type with propagation disabled), else Pending.
pub fn row_of(object: &Value, ty: &FederatedType, ctx: &Context<'_>) -> HubRow {
    let kind = ty.resource.kind.clone();
    let source = format!("{kind} {}", qualified(object));
    let doc = Doc::from_value(&format!("hub {source}"), object.clone());
    let parsed = FederatedObject::parse(&doc, ctx.kinds, ctx.clusters);
    let target = match &parsed {
        Ok(parsed) => parsed.target.clone(),
        Err(_) => fallback_target(object, &kind),
    };
    let generation = object
        .pointer("/metadata/generation")
        .and_then(Value::as_i64);
    let observed = object
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64);
    let current = generation.is_none() || observed == generation;
    let problem = propagation_problem(object);
    let reported: BTreeMap<String, String> = object
        .pointer("/status/clusters")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|entry| (text(entry, "/name"), text(entry, "/status")))
                .collect()
        })
        .unwrap_or_default();
    let mut cells = BTreeMap::new();
    for cluster in ctx.clusters {
        let cell = match (&parsed, reported.get(&cluster.name)) {
            (_, Some(reason)) if current => cell_of_status(reason),
            (Err(err), _) => (
                CellStatus::Failed(format!("flotilla cannot read this {kind}: {}", err.message)),
                None,
            ),
            (Ok(parsed), _) => match not_placed_reason(parsed, ty, cluster, ctx) {
                Some(reason) => (CellStatus::NotPlaced(reason), None),
                None if !current => (
                    CellStatus::Pending,
                    Some(format!(
                        "placed; KubeFed has not processed generation {} yet",
                        generation.unwrap_or_default()
                    )),
                ),
                None => (
                    CellStatus::Pending,
                    Some(match &problem {
                        Some(reason) => format!("placed; KubeFed reports Propagation {reason}"),
                        None => "placed; KubeFed has not reported this cluster yet".into(),
                    }),
                ),
            },
        };
        cells.insert(cluster.name.clone(), cell);
    }
    let not_placed = match &problem {
        Some(reason) if reason != "CheckClusters" => {
            format!("KubeFed did not propagate {source}: {reason}")
        }
        _ => format!("KubeFed does not place {source} on this cluster"),
    };
    HubRow {
        target,
        source,
        carrier: Some(ResourceRef {
            api_version: ty.resource.api_version.clone(),
            kind,
            namespace: Some(text(object, "/metadata/namespace")).filter(|ns| !ns.is_empty()),
            name: text(object, "/metadata/name"),
        }),
        cells,
        not_placed,
        // KubeFed renders each member's object in memory and keeps no copy on the hub.
        objects: BTreeMap::new(),
        // KubeFed's status reports propagation only; health comes from the members' watch.
        health: BTreeMap::new(),
    }
}

/// Why KubeFed leaves `cluster` out for `object`, or `None` when it places it there.
fn not_placed_reason(
    object: &FederatedObject,
    ty: &FederatedType,
    cluster: &ClusterSpec,
    ctx: &Context<'_>,
) -> Option<String> {
    if ty.disabled {
        return Some(format!(
            "propagation is disabled by FederatedTypeConfig {}",
            ty.config
        ));
    }
    if let Some(why) = object.placement.mismatch(cluster) {
        return Some(why);
    }
    let namespace = object.target.namespace.as_deref()?;
    match ctx.namespaces.get(namespace) {
        None => Some(format!(
            "NamespaceNotFederated: namespace {namespace} has no FederatedNamespace, so KubeFed places nothing in it"
        )),
        Some(placement) => placement.mismatch(cluster).map(|why| {
            format!(
                "the FederatedNamespace of namespace {namespace} leaves this cluster out ({why})"
            )
        }),
    }
}

/// The member object a Federated object renders when flotilla cannot parse it: its name and
/// namespace under the kind the Federated kind wraps.
fn fallback_target(object: &Value, federated_kind: &str) -> ResourceRef {
    ResourceRef {
        api_version: String::new(),
        kind: federated_kind
            .strip_prefix("Federated")
            .unwrap_or(federated_kind)
            .to_string(),
        namespace: Some(text(object, "/metadata/namespace")).filter(|ns| !ns.is_empty()),
        name: text(object, "/metadata/name"),
    }
}

/// The fleet a KubeFed hub holds, as source texts the engine and the editors load like a fleet
/// directory: the KubeFedClusters as inventory (name, labels, endpoint), the
/// FederatedTypeConfigs, and every Federated object of every configured type, one "file" per
/// hub object. Only reads.
pub async fn fleet_files(
    client: &Client,
    context: &str,
    contexts: &std::collections::BTreeSet<String>,
) -> Result<Vec<crate::engine::SourceFile>, HubError> {
    let yaml = |value: &Value| {
        serde_saphyr::to_string(value)
            .map_err(|err| HubError::Unreadable(format!("cannot write YAML: {err}")))
    };
    let mut inventory = Vec::new();
    for cluster in list_values(client, &core_resource("KubeFedCluster", "kubefedclusters")).await? {
        let name = text(&cluster, "/metadata/name");
        let mut metadata = serde_json::json!({
            "name": name,
            "namespace": text(&cluster, "/metadata/namespace"),
        });
        if let Some(labels) = cluster.pointer("/metadata/labels") {
            metadata["labels"] = labels.clone();
        }
        if contexts.contains(&name) {
            metadata["annotations"] = serde_json::json!({ "flotilla.dev/context": name });
        }
        let doc = serde_json::json!({
            "apiVersion": "core.kubefed.io/v1beta1",
            "kind": "KubeFedCluster",
            "metadata": metadata,
            "spec": {"apiEndpoint": text(&cluster, "/spec/apiEndpoint")},
        });
        inventory.push(yaml(&doc)?);
    }
    let mut files = vec![crate::engine::SourceFile {
        path: format!("hub:{context}/clusters"),
        text: inventory.join("---\n"),
    }];
    let configs = list_values(
        client,
        &core_resource("FederatedTypeConfig", "federatedtypeconfigs"),
    )
    .await?;
    for config in &configs {
        let config = as_written(config);
        files.push(crate::engine::SourceFile {
            path: path_of(context, &config),
            text: yaml(&config)?,
        });
    }
    for ty in configs.iter().filter_map(type_of) {
        for object in list_values(client, &ty.resource).await? {
            let object = as_written(&object);
            files.push(crate::engine::SourceFile {
                path: path_of(context, &object),
                text: yaml(&object)?,
            });
        }
    }
    Ok(files)
}

/// What `render --hub` says of a KubeFed hub's objects: they are flotilla's rendering, since
/// KubeFed keeps none.
pub const RENDER_NOTE: &str = "flotilla's rendering of the hub's Federated objects (template, placement and overrides, by flotilla's engine): KubeFed keeps no rendered copies on the hub, its controller renders them in memory";

/// The per-cluster objects of a KubeFed hub's fleet (as [`fleet_files`] reads it), rendered by
/// the engine as the console renders its cells, without the marks flotilla adds when it
/// applies objects itself (KubeFed writes these), and labelled as flotilla's rendering; every
/// other (object, cluster) pair is unplaced with the engine's reason.
pub fn rendered(fleet: &crate::engine::Fleet) -> HubRender {
    let clusters: Vec<usize> = (0..fleet.clusters.len()).collect();
    let rendered = crate::engine::render::rendered(fleet, &clusters);
    let items = rendered
        .items
        .into_iter()
        .map(|(cluster, mut object)| {
            objects::drop_marks(&mut object, objects::is_flotilla_mark);
            RenderedObject { cluster, object }
        })
        .collect();
    // KubeFed suspends nothing: whatever the engine holds back is unplaced all the same.
    let unplaced = rendered
        .unplaced
        .into_iter()
        .chain(rendered.suspended)
        .map(|(cluster, resource, reason)| Unplaced {
            cluster,
            resource,
            reason,
        })
        .collect();
    HubRender {
        note: Some(RENDER_NOTE.to_string()),
        items,
        unplaced,
        errors: Vec::new(),
    }
}

/// What the console watches on a KubeFed hub: KubeFedClusters, FederatedTypeConfigs and the
/// Federated types configured when it starts (none when the configs cannot be read: the
/// console then re-reads on its timer).
pub async fn watched_kinds(client: &Client) -> Vec<ApiResource> {
    let configs = core_resource("FederatedTypeConfig", "federatedtypeconfigs");
    let mut kinds = vec![core_resource("KubeFedCluster", "kubefedclusters")];
    match list_values(client, &configs).await {
        Ok(listed) => kinds.extend(listed.iter().filter_map(type_of).map(|ty| ty.resource)),
        Err(_) => return Vec::new(),
    }
    kinds.push(configs);
    kinds
}

/// Reads the hub: KubeFedClusters, FederatedTypeConfigs, and one row per Federated object of
/// every configured type (sorted by the object it renders).
pub async fn read(client: &Client, kubeconfig: &Kubeconfig) -> Result<HubView, HubError> {
    let clusters = clusters(client, kubeconfig).await?;
    let configs = list_values(
        client,
        &core_resource("FederatedTypeConfig", "federatedtypeconfigs"),
    )
    .await?;
    let mut objects = Vec::new();
    for ty in configs.iter().filter_map(type_of) {
        let listed = list_values(client, &ty.resource).await?;
        objects.push((ty, listed));
    }
    Ok(view_of(clusters, &configs, &objects))
}

/// The view from what was read: the type map from the built-in kinds plus the hub's
/// FederatedTypeConfigs, the FederatedNamespaces' placements, then the rows.
pub fn view_of(
    clusters: Vec<(ClusterSpec, ClusterStatus)>,
    configs: &[Value],
    objects: &[(FederatedType, Vec<Value>)],
) -> HubView {
    let specs: Vec<ClusterSpec> = clusters.iter().map(|(spec, _)| spec.clone()).collect();
    let (kinds, namespaces) = context_of(&specs, configs, objects);
    let ctx = Context {
        clusters: &specs,
        kinds: &kinds,
        namespaces: &namespaces,
    };
    let mut rows: Vec<HubRow> = objects
        .iter()
        .flat_map(|(ty, values)| values.iter().map(|value| row_of(value, ty, &ctx)))
        .collect();
    sort_rows(&mut rows);
    HubView {
        kind: HubKind::KubeFed,
        clusters,
        rows,
    }
}

/// What every row reads besides its own object: the type map from the built-in kinds plus
/// the hub's FederatedTypeConfigs, and the FederatedNamespaces' placements by namespace.
pub fn context_of(
    specs: &[ClusterSpec],
    configs: &[Value],
    objects: &[(FederatedType, Vec<Value>)],
) -> (KindMap, BTreeMap<String, KfPlacement>) {
    let mut kinds = KindMap::builtin();
    for config in configs {
        let doc = Doc::from_value(
            &format!("hub FederatedTypeConfig {}", qualified(config)),
            config.clone(),
        );
        // A config flotilla cannot read keeps the built-in entry for its kind.
        let _ = kinds.add_type_config(&doc);
    }
    let mut namespaces = BTreeMap::new();
    for (ty, values) in objects {
        for value in values {
            let doc = Doc::from_value(&format!("hub {}", ty.resource.kind), value.clone());
            if let Ok(parsed) = FederatedObject::parse(&doc, &kinds, specs)
                && parsed.target_type.kind == "Namespace"
                && parsed.target_type.api_version == "v1"
            {
                namespaces.insert(parsed.target.name.clone(), parsed.placement);
            }
        }
    }
    (kinds, namespaces)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A KubeFedCluster as KubeFed v0.10.0 leaves it after a healthy probe.
    fn ready_cluster(name: &str, labels: Value) -> Value {
        json!({
            "apiVersion": "core.kubefed.io/v1beta1", "kind": "KubeFedCluster",
            "metadata": {"name": name, "namespace": "kube-federation-system", "labels": labels},
            "spec": {"apiEndpoint": "https://127.0.0.1:6443", "caBundle": "LS0t",
                "secretRef": {"name": format!("{name}-token")}},
            "status": {
                "conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady",
                    "message": "/healthz responded with ok",
                    "lastProbeTime": "2026-11-30T08:01:54Z",
                    "lastTransitionTime": "2026-11-30T08:01:54Z"}],
                "kubernetesVersion": "v1.36.3",
                "region": "eu-west", "zones": ["eu-west-1a"]
            }
        })
    }

    /// What KubeFed writes while the member's API server is down (only Offline is left).
    fn offline_cluster(name: &str) -> Value {
        json!({
            "metadata": {"name": name, "namespace": "kube-federation-system"},
            "spec": {"apiEndpoint": "https://127.0.0.1:44009", "secretRef": {"name": "x"}},
            "status": {"conditions": [{"type": "Offline", "status": "True",
                "reason": "ClusterNotReachable",
                "message": "cluster is not reachable: Get \"https://127.0.0.1:44009/healthz?timeout=3s\": dial tcp 127.0.0.1:44009: connect: connection refused",
                "lastProbeTime": "2026-11-30T08:03:04Z",
                "lastTransitionTime": "2026-11-30T08:02:33Z"}]}
        })
    }

    fn deployments_ftc() -> Value {
        json!({
            "apiVersion": "core.kubefed.io/v1beta1", "kind": "FederatedTypeConfig",
            "metadata": {"name": "deployments.apps", "namespace": "kube-federation-system"},
            "spec": {
                "federatedType": {"group": "types.kubefed.io", "kind": "FederatedDeployment",
                    "pluralName": "federateddeployments", "scope": "Namespaced", "version": "v1beta1"},
                "propagation": "Enabled",
                "targetType": {"group": "apps", "kind": "Deployment", "pluralName": "deployments",
                    "scope": "Namespaced", "version": "v1"}
            },
            "status": {"observedGeneration": 1, "propagationController": "Running",
                "statusController": "NotRunning"}
        })
    }

    fn namespaces_ftc() -> Value {
        json!({
            "metadata": {"name": "namespaces", "namespace": "kube-federation-system"},
            "spec": {
                "federatedType": {"group": "types.kubefed.io", "kind": "FederatedNamespace",
                    "pluralName": "federatednamespaces", "scope": "Namespaced", "version": "v1beta1"},
                "propagation": "Enabled",
                "targetType": {"kind": "Namespace", "pluralName": "namespaces",
                    "scope": "Cluster", "version": "v1"}
            }
        })
    }

    fn federated_namespace(ns: &str, clusters: &[&str]) -> Value {
        let list: Vec<Value> = clusters.iter().map(|c| json!({"name": c})).collect();
        json!({
            "apiVersion": "types.kubefed.io/v1beta1", "kind": "FederatedNamespace",
            "metadata": {"name": ns, "namespace": ns, "generation": 1},
            "spec": {"placement": {"clusters": list}},
            "status": {"observedGeneration": 1,
                "conditions": [{"type": "Propagation", "status": "True",
                    "lastTransitionTime": "2026-11-30T08:02:21Z",
                    "lastUpdateTime": "2026-11-30T08:02:21Z"}],
                "clusters": clusters.iter().map(|c| json!({"name": c})).collect::<Vec<_>>()}
        })
    }

    /// A FederatedDeployment placed on member-1 and member-2, member-2's copy refused.
    fn web(status: Value) -> Value {
        json!({
            "apiVersion": "types.kubefed.io/v1beta1", "kind": "FederatedDeployment",
            "metadata": {"name": "web", "namespace": "shop", "generation": 2},
            "spec": {
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}},
                            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}},
                "placement": {"clusters": [{"name": "member-1"}, {"name": "member-2"}]},
                "overrides": [{"clusterName": "member-2",
                    "clusterOverrides": [{"path": "/spec/replicas", "value": -1}]}]
            },
            "status": status
        })
    }

    fn kinds_ftcs() -> Vec<Value> {
        vec![deployments_ftc(), namespaces_ftc()]
    }

    fn view(web_status: Value, shop_on: &[&str]) -> HubView {
        let kubeconfig = Kubeconfig::default();
        let clusters = clusters_of(
            &[
                ready_cluster("member-1", json!({"region": "eu"})),
                ready_cluster("member-2", json!({"region": "us"})),
                ready_cluster("member-3", json!({})),
            ],
            &kubeconfig,
        )
        .unwrap();
        let configs = kinds_ftcs();
        let types: Vec<FederatedType> = configs.iter().filter_map(type_of).collect();
        let objects = vec![
            (types[0].clone(), vec![web(web_status)]),
            (types[1].clone(), vec![federated_namespace("shop", shop_on)]),
        ];
        view_of(clusters, &configs, &objects)
    }

    fn failing_status() -> Value {
        json!({
            "observedGeneration": 2,
            "conditions": [{"type": "Propagation", "status": "False", "reason": "CheckClusters",
                "lastTransitionTime": "2026-11-30T08:05:00Z", "lastUpdateTime": "2026-11-30T08:05:00Z"}],
            "clusters": [{"name": "member-1"}, {"name": "member-2", "status": "CreationFailed"}]
        })
    }

    #[test]
    fn cluster_health_follows_kubefeds_conditions() {
        let ready = status_of(&ready_cluster("member-1", json!({})));
        assert_eq!(ready.health, Health::Ready);
        assert_eq!(ready.version.as_deref(), Some("v1.36.3"));
        assert!(
            ready
                .message
                .contains("ClusterReady: /healthz responded with ok"),
            "{}",
            ready.message
        );
        let offline = status_of(&offline_cluster("member-2"));
        assert_eq!(offline.health, Health::Unreachable);
        assert!(
            offline
                .message
                .starts_with("ClusterNotReachable: cluster is not reachable"),
            "{}",
            offline.message
        );
        assert_eq!(offline.version, None);
        let malformed = json!({"status": {"conditions": [{"type": "ConfigMalformed",
            "status": "True", "reason": "ClusterConfigMalformed",
            "message": "cluster's configuration may be malformed"}]}});
        let malformed = status_of(&malformed);
        assert_eq!(malformed.health, Health::NotReady);
        assert!(malformed.message.contains("ClusterConfigMalformed"));
        let not_ok = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False", "reason": "ClusterNotReady",
             "message": "/healthz responded without ok"},
            {"type": "Offline", "status": "False", "reason": "ClusterReachable",
             "message": "cluster is reachable"}]}});
        assert_eq!(status_of(&not_ok).health, Health::NotReady);
        let fresh = status_of(&json!({"metadata": {"name": "new"}}));
        assert_eq!(fresh.health, Health::Unknown);
        assert!(fresh.message.contains("no status reported by KubeFed yet"));
    }

    #[test]
    fn clusters_carry_labels_region_and_zones_and_their_context() {
        let kubeconfig: Kubeconfig =
            serde_json::from_value(json!({"contexts": [{"name": "member-1"}]})).unwrap();
        let clusters = clusters_of(
            &[
                ready_cluster("member-2", json!({})),
                ready_cluster("member-1", json!({"region": "eu", "tier": "prod"})),
            ],
            &kubeconfig,
        )
        .unwrap();
        let (spec, _) = &clusters[0];
        assert_eq!(spec.name, "member-1");
        assert_eq!(spec.context, "member-1");
        assert_eq!(spec.labels["tier"], "prod");
        assert_eq!(spec.region.as_deref(), Some("eu-west"));
        assert_eq!(spec.zones, ["eu-west-1a"]);
        assert_eq!(clusters[1].0.context, "", "no context of that name");
    }

    #[test]
    fn a_type_config_names_where_its_federated_objects_live() {
        let ty = type_of(&deployments_ftc()).unwrap();
        assert_eq!(ty.resource.api_version, "types.kubefed.io/v1beta1");
        assert_eq!(ty.resource.plural, "federateddeployments");
        assert_eq!(ty.config, "kube-federation-system/deployments.apps");
        assert!(!ty.disabled);
        assert_eq!(type_of(&json!({"spec": {}})), None);
    }

    #[test]
    fn cells_come_from_status_clusters_with_kubefeds_reason() {
        let view = view(failing_status(), &["member-1", "member-2", "member-3"]);
        let row = view.row_of(&ResourceRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: Some("shop".into()),
            name: "web".into(),
        });
        let row = row.expect("the FederatedDeployment renders Deployment shop/web");
        assert_eq!(view.rows[row].source, "FederatedDeployment shop/web");
        assert_eq!(view.cell(row, 0).0, CellStatus::InSync);
        let CellStatus::Failed(reason) = view.cell(row, 1).0 else {
            panic!("member-2 refused the object: {:?}", view.cell(row, 1));
        };
        assert!(reason.starts_with("CreationFailed: "), "{reason}");
        let CellStatus::NotPlaced(reason) = view.cell(row, 2).0 else {
            panic!("member-3 is not in the placement");
        };
        assert_eq!(reason, "not in spec.placement.clusters");
    }

    #[test]
    fn an_unfederated_or_narrower_namespace_explains_the_missing_cluster() {
        // shop's FederatedNamespace only places on member-1.
        let status = json!({"observedGeneration": 2, "clusters": [{"name": "member-1"}]});
        let view = view(status, &["member-1"]);
        let row = view
            .rows
            .iter()
            .position(|r| r.target.kind == "Deployment")
            .unwrap();
        let CellStatus::NotPlaced(reason) = view.cell(row, 1).0 else {
            panic!("{:?}", view.cell(row, 1));
        };
        assert!(
            reason.contains("FederatedNamespace of namespace shop leaves this cluster out"),
            "{reason}"
        );
        // The namespace row renders the Namespace itself (cluster-scoped).
        let ns_row = view
            .rows
            .iter()
            .position(|r| r.target.kind == "Namespace")
            .unwrap();
        assert_eq!(view.rows[ns_row].target.namespace, None);
        assert_eq!(view.rows[ns_row].target.name, "shop");
        assert_eq!(view.cell(ns_row, 0).0, CellStatus::InSync);
    }

    #[test]
    fn no_federated_namespace_is_namespace_not_federated() {
        let kubeconfig = Kubeconfig::default();
        let clusters = clusters_of(&[ready_cluster("member-1", json!({}))], &kubeconfig).unwrap();
        let configs = kinds_ftcs();
        let ty = type_of(&configs[0]).unwrap();
        let status = json!({"observedGeneration": 2, "conditions": [{"type": "Propagation",
            "status": "False", "reason": "NamespaceNotFederated"}]});
        let view = view_of(clusters, &configs, &[(ty, vec![web(status)])]);
        let CellStatus::NotPlaced(reason) = view.cell(0, 0).0 else {
            panic!("{:?}", view.cell(0, 0));
        };
        assert!(reason.starts_with("NamespaceNotFederated"), "{reason}");
        assert!(
            view.rows[0].not_placed.ends_with(": NamespaceNotFederated"),
            "{}",
            view.rows[0].not_placed
        );
    }

    #[test]
    fn a_placed_cluster_kubefed_has_not_reported_is_pending() {
        // KubeFed has not seen generation 2 yet: its old status must not count.
        let stale = json!({"observedGeneration": 1, "clusters": [{"name": "member-1"}]});
        let view = view(stale, &["member-1", "member-2", "member-3"]);
        let row = view
            .rows
            .iter()
            .position(|r| r.target.kind == "Deployment")
            .unwrap();
        let (status, message) = view.cell(row, 0);
        assert_eq!(status, CellStatus::Pending);
        assert_eq!(
            message.as_deref(),
            Some("placed; KubeFed has not processed generation 2 yet")
        );
        let fresh = view_of(
            view.clusters.clone(),
            &kinds_ftcs(),
            &[
                (
                    type_of(&deployments_ftc()).unwrap(),
                    vec![web(
                        json!({"observedGeneration": 2, "clusters": [{"name": "member-1"}]}),
                    )],
                ),
                (
                    type_of(&namespaces_ftc()).unwrap(),
                    vec![federated_namespace("shop", &["member-1", "member-2"])],
                ),
            ],
        );
        // Current, but member-2 (placed) is not in status.clusters yet.
        let row = fresh
            .rows
            .iter()
            .position(|r| r.target.kind == "Deployment")
            .unwrap();
        assert_eq!(fresh.cell(row, 0).0, CellStatus::InSync);
        assert_eq!(
            fresh.cell(row, 1),
            (
                CellStatus::Pending,
                Some("placed; KubeFed has not reported this cluster yet".into())
            )
        );
    }

    #[test]
    fn an_offline_member_shows_unreachable_with_kubefeds_words() {
        let mut status = failing_status();
        status["clusters"][0]["status"] = json!("ClusterNotReady");
        let view = view(status, &["member-1", "member-2", "member-3"]);
        let row = view
            .rows
            .iter()
            .position(|r| r.target.kind == "Deployment")
            .unwrap();
        let (cell, message) = view.cell(row, 0);
        assert_eq!(cell, CellStatus::Unreachable);
        assert_eq!(
            message.as_deref(),
            Some("ClusterNotReady: KubeFed cannot reach the cluster")
        );
        // A cluster outside the placement stays not placed while it is down.
        let mut view = view;
        view.clusters[2].1.health = Health::Unreachable;
        assert_eq!(
            view.cell(row, 2).0,
            CellStatus::NotPlaced("not in spec.placement.clusters".into())
        );
    }

    #[test]
    fn a_disabled_type_places_nothing_and_says_which_config() {
        let mut ftc = deployments_ftc();
        ftc["spec"]["propagation"] = json!("Disabled");
        let kubeconfig = Kubeconfig::default();
        let clusters = clusters_of(&[ready_cluster("member-1", json!({}))], &kubeconfig).unwrap();
        let configs = vec![ftc.clone(), namespaces_ftc()];
        let ty = type_of(&ftc).unwrap();
        let nsty = type_of(&configs[1]).unwrap();
        let view = view_of(
            clusters,
            &configs,
            &[
                (ty, vec![web(json!({}))]),
                (nsty, vec![federated_namespace("shop", &["member-1"])]),
            ],
        );
        let row = view
            .rows
            .iter()
            .position(|r| r.target.kind == "Deployment")
            .unwrap();
        assert_eq!(
            view.cell(row, 0).0,
            CellStatus::NotPlaced(
                "propagation is disabled by FederatedTypeConfig kube-federation-system/deployments.apps"
                    .into()
            )
        );
    }

    #[test]
    fn every_known_status_maps_to_a_cell_that_names_it() {
        for reason in [
            "CachedRetrievalFailed",
            "ComputeResourceFailed",
            "ApplyOverridesFailed",
            "CreationFailed",
            "UpdateFailed",
            "DeletionFailed",
            "LabelRemovalFailed",
            "RetrievalFailed",
            "AlreadyExists",
            "FieldRetentionFailed",
            "VersionRetrievalFailed",
            "ClientRetrievalFailed",
            "ManagedLabelFalse",
            "CreationTimedOut",
            "UpdateTimedOut",
            "DeletionTimedOut",
            "LabelRemovalTimedOut",
            "SomethingNew",
        ] {
            let (cell, _) = cell_of_status(reason);
            let CellStatus::Failed(text) = cell else {
                panic!("{reason} is a failure");
            };
            assert!(text.starts_with(&format!("{reason}: ")), "{text}");
        }
        assert_eq!(cell_of_status("").0, CellStatus::InSync);
        assert_eq!(cell_of_status("WaitingForRemoval").0, CellStatus::Pending);
    }

    /// The hub's fleet as `fleet_files` reads it: three members, shop federated on member-1
    /// and member-2, and `web` on both with member-2's replicas overridden to 5.
    fn hub_fleet() -> crate::engine::Fleet {
        let members: Vec<String> = ["member-1", "member-2", "member-3"]
            .iter()
            .map(|name| {
                format!(
                    "apiVersion: core.kubefed.io/v1beta1\nkind: KubeFedCluster\nmetadata: {{name: {name}, namespace: kube-federation-system}}\nspec: {{apiEndpoint: 'https://127.0.0.1:6443'}}\n"
                )
            })
            .collect();
        let mut web = web(json!({}));
        web["spec"]["overrides"][0]["clusterOverrides"][0]["value"] = json!(5);
        let files = vec![
            crate::engine::SourceFile {
                path: "hub:hub/clusters".into(),
                text: members.join("---\n"),
            },
            crate::engine::SourceFile {
                path: "hub:hub/FederatedNamespace/shop/shop".into(),
                text: serde_saphyr::to_string(&as_written(&federated_namespace(
                    "shop",
                    &["member-1", "member-2"],
                )))
                .unwrap(),
            },
            crate::engine::SourceFile {
                path: "hub:hub/FederatedDeployment/shop/web".into(),
                text: serde_saphyr::to_string(&as_written(&web)).unwrap(),
            },
        ];
        let (fleet, errors) = crate::engine::load_fleet(&files);
        assert!(errors.is_empty(), "{errors:?}");
        fleet
    }

    #[test]
    fn render_on_the_hub_is_the_engines_render_of_the_federated_objects_labelled_so() {
        let render = rendered(&hub_fleet());
        assert_eq!(render.note.as_deref(), Some(RENDER_NOTE));
        assert!(RENDER_NOTE.starts_with("flotilla's rendering"));
        let deployment = |cluster: &str| {
            render
                .items
                .iter()
                .find(|item| item.cluster == cluster && item.object["kind"] == "Deployment")
                .map(|item| item.object.clone())
        };
        let (one, two) = (
            deployment("member-1").unwrap(),
            deployment("member-2").unwrap(),
        );
        assert_eq!(one["spec"]["replicas"], 2, "the template's replicas");
        assert_eq!(two["spec"]["replicas"], 5, "member-2's override");
        assert_eq!(two["metadata"]["namespace"], "shop");
        // As KubeFed writes it: its managed label, none of flotilla's own marks.
        assert_eq!(
            two["metadata"]["labels"],
            json!({"app": "web", "kubefed.io/managed": "true"})
        );
        assert_eq!(two["metadata"].get("annotations"), None);
        assert_eq!(deployment("member-3"), None);
        let out = render
            .unplaced
            .iter()
            .find(|u| u.cluster == "member-3" && u.resource.kind == "Deployment")
            .expect("member-3 is not placed, with the engine's reason");
        assert!(out.reason.contains("placement"), "{}", out.reason);
        let json = serde_json::to_value(&render).unwrap();
        assert!(json["note"].as_str().is_some(), "the JSON carries the note");
    }
}
