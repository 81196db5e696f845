//! Reading a Karmada hub: its member Clusters (labels, provider, region, zones and taints
//! through the same inventory parser the fleet directory uses; health from the Ready
//! condition Karmada keeps, with its reason and message; the Kubernetes version it reports),
//! and one console row per ResourceBinding with a cell per scheduled member from that member's
//! Work. Only reads; it must not write to the hub.

use kube::Client;
use kube::config::Kubeconfig;
use kube::discovery::ApiResource;
use serde_json::Value;

use super::types::{binding_resources, cluster_resource, interpreter_resource, policy_resources};
use crate::backend::hub::error::HubError;
use crate::backend::hub::objects::{condition, list_values, reason_message, text};
use crate::backend::hub::view::{HubRender, HubRow, HubView, RenderedObject, sort_rows};
use crate::engine::document::parse::Doc;
use crate::engine::fleet::inventory::{InventoryKind, parse_cluster};
use crate::model::HubKind;
use crate::model::{
    CellHealth, CellStatus, ClusterSpec, ClusterStatus, Health, HealthKind, ResourceRef,
};

/// Every member Cluster of the hub, in name order, with the health Karmada reports for it.
/// A member reaches flotilla through the kubeconfig context of its name when there is one
/// (or the `flotilla.dev/context` annotation), else only through the hub.
pub async fn clusters(
    client: &Client,
    kubeconfig: &Kubeconfig,
) -> Result<Vec<(ClusterSpec, ClusterStatus)>, HubError> {
    let mut clusters = Vec::new();
    for value in list_values(client, &cluster_resource()).await? {
        clusters.push(member_of(&value, kubeconfig)?);
    }
    clusters.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    Ok(clusters)
}

/// One member Cluster object as the console's column: its spec and the health Karmada reports.
pub fn member_of(
    value: &Value,
    kubeconfig: &Kubeconfig,
) -> Result<(ClusterSpec, ClusterStatus), HubError> {
    let name = text(value, "/metadata/name");
    let doc = Doc::from_value(&format!("hub Cluster/{name}"), value.clone());
    let mut spec = parse_cluster(&doc, InventoryKind::Karmada)
        .map_err(|e| HubError::Unreadable(e.to_string()))?;
    if spec.context.is_empty() && kubeconfig.contexts.iter().any(|c| c.name == spec.name) {
        spec.context = spec.name.clone();
    }
    Ok((spec, status_of(value)))
}

/// A Karmada Cluster's health: its Ready condition (an unreachable member is Unreachable, any
/// other False is NotReady), the condition's reason and message, and the version it reports.
pub fn status_of(cluster: &Value) -> ClusterStatus {
    let ready = condition(cluster, "Ready");
    let field = |pointer: &str| ready.map(|c| text(c, pointer)).unwrap_or_default();
    let health = match field("/status").as_str() {
        "True" => Health::Ready,
        "False" if field("/reason") == "ClusterNotReachable" => Health::Unreachable,
        "False" => Health::NotReady,
        _ => Health::Unknown,
    };
    let sync_mode = cluster
        .pointer("/spec/syncMode")
        .and_then(Value::as_str)
        .unwrap_or("Push");
    let described = ready
        .map(reason_message)
        .filter(|said| !said.is_empty())
        .unwrap_or_else(|| "no Ready condition reported by Karmada yet".to_string());
    ClusterStatus {
        health,
        version: cluster
            .pointer("/status/kubernetesVersion")
            .and_then(Value::as_str)
            .map(str::to_string),
        latency_ms: None,
        message: format!(
            "{described} ({sync_mode} mode, via the Karmada hub{})",
            summary_of(cluster)
        ),
    }
}

/// What Karmada's Cluster status says of the member's size and APIs: nodes ready, allocatable
/// resources and how many API group versions it serves (empty when Karmada reported none).
fn summary_of(cluster: &Value) -> String {
    let mut parts = Vec::new();
    if let (Some(ready), Some(total)) = (
        cluster
            .pointer("/status/nodeSummary/readyNum")
            .and_then(Value::as_i64),
        cluster
            .pointer("/status/nodeSummary/totalNum")
            .and_then(Value::as_i64),
    ) {
        parts.push(format!("{ready}/{total} nodes ready"));
    }
    if let Some(allocatable) = cluster
        .pointer("/status/resourceSummary/allocatable")
        .and_then(Value::as_object)
    {
        let amounts: Vec<String> = ["cpu", "memory", "pods"]
            .into_iter()
            .filter_map(|name| Some(format!("{name} {}", allocatable.get(name)?.as_str()?)))
            .collect();
        if !amounts.is_empty() {
            parts.push(format!("allocatable {}", amounts.join(", ")));
        }
    }
    if let Some(apis) = cluster
        .pointer("/status/apiEnablements")
        .and_then(Value::as_array)
    {
        parts.push(format!("{} API group versions", apis.len()));
    }
    parts.iter().map(|part| format!("; {part}")).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn health_comes_from_karmadas_ready_condition() {
        let ready = json!({
            "spec": {"syncMode": "Push"},
            "status": {"kubernetesVersion": "v1.36.3",
                "nodeSummary": {"readyNum": 2, "totalNum": 3},
                "resourceSummary": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "220"}},
                "apiEnablements": [{"groupVersion": "v1"}, {"groupVersion": "apps/v1"}],
                "conditions": [
                {"type": "Ready", "status": "True", "reason": "ClusterReady",
                 "message": "cluster is healthy and ready to accept workloads"}]}
        });
        let status = status_of(&ready);
        assert_eq!(status.health, Health::Ready);
        assert_eq!(status.version.as_deref(), Some("v1.36.3"));
        assert_eq!(
            status.message,
            "ClusterReady: cluster is healthy and ready to accept workloads (Push mode, via the \
             Karmada hub; 2/3 nodes ready; allocatable cpu 16, memory 64Gi, pods 220; 2 API group \
             versions)"
        );
        let gone = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False", "reason": "ClusterNotReachable",
             "message": "cluster is not reachable"}]}});
        assert_eq!(status_of(&gone).health, Health::Unreachable);
        assert_eq!(status_of(&json!({})).health, Health::Unknown);
    }
}

/// A ResourceBinding (or ClusterResourceBinding): the template it binds and where Karmada
/// scheduled it.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    /// `namespace/name` of the binding, for messages.
    pub name: String,
    pub target: ResourceRef,
    /// `resourcebinding.karmada.io/permanent-id`, which its Works carry.
    pub id: String,
    /// Scheduled clusters with their replicas, when divided.
    pub clusters: Vec<(String, Option<i64>)>,
    /// The Scheduled condition's status and message, when it is not True.
    pub unscheduled: Option<String>,
    /// The object's health on each cluster, from the binding's `aggregatedStatus`.
    pub health: Vec<(String, CellHealth)>,
    /// `spec.suspension`, copied by Karmada from the policy.
    pub suspension: Suspension,
}

/// A binding's `spec.suspension`: dispatching held back everywhere, or on these clusters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Suspension {
    pub dispatching: bool,
    pub on_clusters: Vec<String>,
}

/// What a Work says about its manifests on one cluster.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkState {
    /// The Applied condition: `None` when Karmada has not reported it yet.
    pub applied: Option<bool>,
    pub reason: String,
    pub message: String,
}

/// A Work: the binding it belongs to, its cluster, its state and the manifests Karmada wrote
/// into it (the per-cluster objects after overrides).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Work {
    pub binding_id: String,
    pub cluster: String,
    pub state: WorkState,
    /// `spec.suspendDispatching`, or a Dispatching condition Karmada set False for it.
    pub suspended: bool,
    pub manifests: Vec<Value>,
}

/// A binding object as the console needs it.
pub fn binding_of(value: &Value) -> Binding {
    let namespace = text(value, "/metadata/namespace");
    let name = text(value, "/metadata/name");
    let resource = value.pointer("/spec/resource").cloned().unwrap_or_default();
    let target = ResourceRef {
        api_version: text(&resource, "/apiVersion"),
        kind: text(&resource, "/kind"),
        namespace: Some(text(&resource, "/namespace")).filter(|ns| !ns.is_empty()),
        name: text(&resource, "/name"),
    };
    let clusters = value
        .pointer("/spec/clusters")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|c| (text(c, "/name"), c.get("replicas").and_then(Value::as_i64)))
                .collect()
        })
        .unwrap_or_default();
    let unscheduled = condition(value, "Scheduled")
        .filter(|c| c["status"] != "True")
        .map(|c| format!("{}: {}", text(c, "/reason"), text(c, "/message")));
    let health = value
        .pointer("/status/aggregatedStatus")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|item| Some((text(item, "/clusterName"), aggregated_health(item)?)))
                .filter(|(cluster, _)| !cluster.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let suspension = Suspension {
        dispatching: value
            .pointer("/spec/suspension/dispatching")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        on_clusters: value
            .pointer("/spec/suspension/dispatchingOnClusters/clusterNames")
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
    };
    Binding {
        health,
        suspension,
        name: if namespace.is_empty() {
            name
        } else {
            format!("{namespace}/{name}")
        },
        target,
        id: text(
            value,
            "/metadata/labels/resourcebinding.karmada.io~1permanent-id",
        ),
        clusters,
        unscheduled,
    }
}

/// What one `aggregatedStatus` entry says of the object's health on its cluster: Karmada's
/// verdict (its interpreter's `Healthy`, `Unhealthy` or `Unknown`) with the replica counts it
/// reflected from the member. Karmada calls a rollout still under way Unhealthy, so that is
/// Progressing here; the hub backend turns one stuck past its progress deadline Degraded.
/// `None` where Karmada has not applied the object or gives no verdict.
pub fn aggregated_health(item: &Value) -> Option<CellHealth> {
    if item.get("applied").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let verdict = text(item, "/health");
    let kind = match verdict.as_str() {
        "Healthy" => HealthKind::Healthy,
        "Unhealthy" => HealthKind::Progressing,
        "Unknown" => HealthKind::Unknown,
        _ => return None,
    };
    let count = |field: &str| {
        item.pointer(&format!("/status/{field}"))
            .and_then(Value::as_i64)
    };
    let counts = match (count("replicas"), count("availableReplicas")) {
        (Some(replicas), available) => format!(
            " ({}/{replicas} available{})",
            available.unwrap_or(0),
            count("updatedReplicas")
                .filter(|updated| *updated != replicas)
                .map(|updated| format!(", {updated} updated"))
                .unwrap_or_default()
        ),
        (None, _) => String::new(),
    };
    Some(CellHealth {
        kind,
        reason: format!("Karmada reports {verdict}{counts}"),
        since: None,
        rule: None,
    })
}

/// A Work object; `None` when it belongs to no binding or to no member namespace.
pub fn work_of(value: &Value) -> Option<Work> {
    let manifests = value
        .pointer("/spec/workload/manifests")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    work_in(
        &value["metadata"],
        value.pointer("/spec/suspendDispatching"),
        &value["status"],
        manifests,
    )
}

/// A Work as the incremental view reads it, parsed from its JSON in one pass: its name and
/// metadata, `spec.suspendDispatching` and status; its manifests are skipped unparsed (the
/// store keeps them).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub struct WorkParts {
    metadata: Value,
    spec: WorkSpecParts,
    status: Value,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct WorkSpecParts {
    #[serde(rename = "suspendDispatching")]
    suspend_dispatching: Option<Value>,
}

impl WorkParts {
    /// The Work's name.
    pub fn name(&self) -> String {
        text(&self.metadata, "/name")
    }

    /// The Work without its manifests, as [`work_of`] reads it.
    pub fn work(&self) -> Option<Work> {
        work_in(
            &self.metadata,
            self.spec.suspend_dispatching.as_ref(),
            &self.status,
            Vec::new(),
        )
    }
}

/// A Work from its `metadata`, `spec.suspendDispatching`, `status` and manifests; `None` when
/// it belongs to no binding or to no member namespace.
fn work_in(
    metadata: &Value,
    suspend_dispatching: Option<&Value>,
    status: &Value,
    manifests: Vec<Value>,
) -> Option<Work> {
    let binding_id = text(metadata, "/labels/resourcebinding.karmada.io~1permanent-id");
    let cluster = text(metadata, "/namespace")
        .strip_prefix("karmada-es-")?
        .to_string();
    if binding_id.is_empty() {
        return None;
    }
    let condition = |kind: &str| {
        status
            .get("conditions")
            .and_then(Value::as_array)
            .and_then(|conditions| conditions.iter().find(|c| c["type"] == kind))
    };
    let applied = condition("Applied");
    let suspended = suspend_dispatching
        .and_then(Value::as_bool)
        .unwrap_or(false)
        || condition("Dispatching")
            .is_some_and(|c| c["status"] == "False" && c["reason"] == "SuspendDispatching");
    Some(Work {
        binding_id,
        cluster,
        suspended,
        state: WorkState {
            applied: applied.map(|c| c["status"] == "True"),
            reason: applied.map(|c| text(c, "/reason")).unwrap_or_default(),
            message: applied.map(|c| text(c, "/message")).unwrap_or_default(),
        },
        manifests,
    })
}

/// Whether a Work's manifest is the binding's template.
pub fn is_target(manifest: &Value, target: &ResourceRef) -> bool {
    text(manifest, "/kind") == target.kind
        && text(manifest, "/metadata/name") == target.name
        && text(manifest, "/metadata/namespace") == target.namespace.clone().unwrap_or_default()
}

/// Why Karmada holds back dispatching to `cluster`, if it does: the Work's
/// `spec.suspendDispatching` (upstream's `IsWorkSuspendDispatching`) or, before the Work
/// says so, the binding's suspension (upstream's `shouldSuspendDispatching`). A suspended
/// Work may still say Applied (karmada#6542): suspension is what the cell shows.
///
/// `work_suspended` is whether the cluster's Work is suspended (`None`: there is no Work yet).
pub fn suspended(binding: &Binding, work_suspended: Option<bool>, cluster: &str) -> Option<String> {
    let on_binding = binding.suspension.dispatching
        || binding.suspension.on_clusters.iter().any(|c| c == cluster);
    if !on_binding && work_suspended != Some(true) {
        return None;
    }
    let scope = if binding.suspension.dispatching {
        "everywhere".to_string()
    } else if on_binding {
        format!("on {}", binding.suspension.on_clusters.join(", "))
    } else {
        format!("on {cluster}")
    };
    Some(format!(
        "Karmada holds back dispatching {scope} (ResourceBinding {} suspension); the Work {}",
        binding.name,
        match work_suspended {
            Some(true) => "is suspended",
            Some(false) => "is not yet marked suspended",
            None => "is not written yet",
        }
    ))
}

/// The cell of `binding` on `cluster`, where Karmada scheduled it (with `replicas` when
/// divided), from that cluster's Work: its state and whether it is suspended (`None`: there
/// is no Work for the cluster yet). A row's cells are this, cluster by cluster.
pub fn cell_on(
    binding: &Binding,
    cluster: &str,
    replicas: Option<i64>,
    work: Option<(&WorkState, bool)>,
) -> (CellStatus, Option<String>) {
    let replicas = replicas
        .map(|r| format!(" ({r} replicas)"))
        .unwrap_or_default();
    if let Some(why) = suspended(binding, work.map(|(_, suspended)| suspended), cluster) {
        return (CellStatus::Suspended(why), None);
    }
    match work.map(|(state, _)| state) {
        None => (
            CellStatus::Pending,
            Some(format!("scheduled{replicas}; no Work for {cluster} yet")),
        ),
        Some(WorkState {
            applied: Some(true),
            ..
        }) => (CellStatus::InSync, Some(format!("Work Applied{replicas}"))),
        Some(WorkState {
            applied: Some(false),
            reason,
            message,
        }) => (CellStatus::Failed(format!("{reason}: {message}")), None),
        Some(WorkState { applied: None, .. }) => (
            CellStatus::Pending,
            Some(format!("Work not applied yet{replicas}")),
        ),
    }
}

/// The console's row for a binding: a cell for every cluster Karmada scheduled it to, from
/// that cluster's Work. `works` may hold other bindings' Works too; only this binding's count.
pub fn row_of(binding: &Binding, works: &[Work]) -> HubRow {
    let by_cluster: std::collections::HashMap<&str, &Work> = works
        .iter()
        .filter(|w| w.binding_id == binding.id)
        .map(|w| (w.cluster.as_str(), w))
        .collect();
    let cells = binding
        .clusters
        .iter()
        .map(|(cluster, replicas)| {
            let work = by_cluster.get(cluster.as_str());
            let cell = cell_on(
                binding,
                cluster,
                *replicas,
                work.map(|w| (&w.state, w.suspended)),
            );
            (cluster.clone(), cell)
        })
        .collect();
    let not_placed = match &binding.unscheduled {
        Some(why) => format!("ResourceBinding {} not scheduled: {why}", binding.name),
        None => format!(
            "Karmada did not schedule ResourceBinding {} to this cluster",
            binding.name
        ),
    };
    let objects = by_cluster
        .values()
        .filter_map(|w| {
            let object = w.manifests.iter().find(|m| is_target(m, &binding.target))?;
            Some((w.cluster.clone(), object.clone()))
        })
        .collect();
    let (namespace, name) = match binding.name.split_once('/') {
        Some((namespace, name)) => (Some(namespace.to_string()), name.to_string()),
        None => (None, binding.name.clone()),
    };
    let carrier = ResourceRef {
        api_version: "work.karmada.io/v1alpha2".into(),
        kind: if namespace.is_some() {
            "ResourceBinding"
        } else {
            "ClusterResourceBinding"
        }
        .into(),
        namespace,
        name,
    };
    let health = binding
        .health
        .iter()
        .filter(|(cluster, _)| binding.clusters.iter().any(|(c, _)| c == cluster))
        .cloned()
        .collect();
    HubRow {
        target: binding.target.clone(),
        source: format!("ResourceBinding {}", binding.name),
        carrier: Some(carrier),
        cells,
        not_placed,
        objects,
        health,
    }
}

/// What the console watches on a Karmada hub: Clusters, bindings, Works, the policies and the
/// resource interpreter customizations.
pub fn watched_kinds() -> Vec<ApiResource> {
    let mut kinds = vec![cluster_resource()];
    kinds.extend(binding_resources());
    kinds.extend(policy_resources());
    kinds.push(interpreter_resource());
    kinds
}

/// Objects per list page when the console's caches list a kind. A binding carries an entry per
/// member cluster in its spec and in its status (about 0.4 MB on a hub of 2,000 clusters), so
/// a page of them is held whole while its objects' metadata is parsed; but each page also costs
/// the API server a time of its own (100 such bindings: 18 s in pages of 10, 1.5–7 s in one),
/// so bindings come 100 a page, fewer than the other kinds; Works come
/// [`WORK_PAGE_SIZE`](crate::backend::hub::cache::WORK_PAGE_SIZE) a page.
pub fn list_page_size(kind: &ApiResource) -> u32 {
    let [bindings, cluster_bindings, works] = binding_resources();
    if *kind == bindings || *kind == cluster_bindings {
        100
    } else if *kind == works {
        crate::backend::hub::cache::WORK_PAGE_SIZE
    } else {
        crate::backend::hub::cache::LIST_PAGE_SIZE
    }
}

/// The hub's bindings and Works as they are now.
pub async fn bindings_and_works(client: &Client) -> Result<(Vec<Binding>, Vec<Work>), HubError> {
    let bindings = bindings(client).await?;
    let [_, _, works] = binding_resources();
    let works = list_values(client, &works)
        .await?
        .iter()
        .filter_map(work_of)
        .collect();
    Ok((bindings, works))
}

/// Every ResourceBinding and ClusterResourceBinding on the hub (not their Works).
pub async fn bindings(client: &Client) -> Result<Vec<Binding>, HubError> {
    let [bindings, cluster_bindings, _] = binding_resources();
    Ok(list_values(client, &bindings)
        .await?
        .iter()
        .chain(list_values(client, &cluster_bindings).await?.iter())
        .map(binding_of)
        .collect())
}

/// Reads the hub: clusters, and one row per binding (sorted by their template) with its Works.
pub async fn read(client: &Client, kubeconfig: &Kubeconfig) -> Result<HubView, HubError> {
    let (view, _, _) = read_with_sources(client, kubeconfig).await?;
    Ok(view)
}

/// Works grouped by the binding they belong to: a read's rows then cost the Works once,
/// not once per binding (a thousand bindings on two hundred clusters are 200,000 Works).
pub fn works_by_binding(works: Vec<Work>) -> std::collections::HashMap<String, Vec<Work>> {
    let mut grouped: std::collections::HashMap<String, Vec<Work>> = Default::default();
    for work in works {
        grouped
            .entry(work.binding_id.clone())
            .or_default()
            .push(work);
    }
    grouped
}

/// The hub view, with the bindings and (grouped) Works it was made from.
async fn read_with_sources(
    client: &Client,
    kubeconfig: &Kubeconfig,
) -> Result<
    (
        HubView,
        Vec<Binding>,
        std::collections::HashMap<String, Vec<Work>>,
    ),
    HubError,
> {
    let clusters = clusters(client, kubeconfig).await?;
    let (bindings, works) = bindings_and_works(client).await?;
    let works = works_by_binding(works);
    let view = view_of(clusters, &bindings, &works);
    Ok((view, bindings, works))
}

/// The hub view of bindings and their (grouped) Works: one row per binding.
pub fn view_of(
    clusters: Vec<(ClusterSpec, ClusterStatus)>,
    bindings: &[Binding],
    works: &std::collections::HashMap<String, Vec<Work>>,
) -> HubView {
    let mut rows: Vec<HubRow> = bindings
        .iter()
        .map(|b| row_of(b, works.get(&b.id).map_or(&[], Vec::as_slice)))
        .collect();
    sort_rows(&mut rows);
    HubView {
        kind: HubKind::Karmada,
        clusters,
        rows,
    }
}

/// The objects Karmada wrote into the Works, cluster by cluster (clusters in name order,
/// objects in template order), and the bindings' unplaced clusters.
pub async fn rendered(client: &Client, kubeconfig: &Kubeconfig) -> Result<HubRender, HubError> {
    let (view, bindings, works) = read_with_sources(client, kubeconfig).await?;
    let by_target: std::collections::HashMap<&ResourceRef, &Binding> =
        bindings.iter().map(|b| (&b.target, b)).collect();
    let mut items = Vec::new();
    for (spec, _) in &view.clusters {
        for row in &view.rows {
            let Some(binding) = by_target.get(&row.target) else {
                continue;
            };
            let manifests = works
                .get(&binding.id)
                .into_iter()
                .flatten()
                .filter(|w| w.cluster == spec.name)
                .flat_map(|w| w.manifests.iter());
            items.extend(manifests.map(|object| RenderedObject {
                cluster: spec.name.clone(),
                object: object.clone(),
            }));
        }
    }
    Ok(HubRender {
        note: None,
        items,
        unplaced: view.unplaced(),
        errors: Vec::new(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod view_tests {
    use serde_json::json;

    use super::*;

    fn view_binding() -> Binding {
        binding_of(&json!({
            "metadata": {"name": "web-deployment", "namespace": "shop",
                "labels": {"resourcebinding.karmada.io/permanent-id": "b1"}},
            "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment",
                "namespace": "shop", "name": "web"},
                "clusters": [{"name": "a", "replicas": 2}, {"name": "b", "replicas": 1}]},
            "status": {"aggregatedStatus": [{"clusterName": "a", "applied": true,
                "health": "Unhealthy", "status": {"replicas": 2, "updatedReplicas": 2,
                "readyReplicas": 1, "availableReplicas": 1}}]},
        }))
    }

    fn view() -> HubView {
        let binding = view_binding();
        let work = |cluster: &str, status: &str, reason: &str| {
            work_of(&json!({
                "metadata": {"namespace": format!("karmada-es-{cluster}"),
                    "labels": {"resourcebinding.karmada.io/permanent-id": "b1"}},
                "status": {"conditions": [{"type": "Applied", "status": status,
                    "reason": reason, "message": "admission webhook denied"}]},
            }))
            .unwrap()
        };
        let ready = |name: &str| {
            (
                ClusterSpec {
                    name: name.into(),
                    ..ClusterSpec::default()
                },
                ClusterStatus {
                    health: Health::Ready,
                    ..ClusterStatus::default()
                },
            )
        };
        let works = [
            work("a", "True", "AppliedSuccessful"),
            work("b", "False", "AppliedFailed"),
        ];
        HubView {
            kind: HubKind::Karmada,
            clusters: vec![ready("a"), ready("b"), ready("c")],
            rows: vec![row_of(&binding, &works)],
        }
    }

    #[test]
    fn cells_follow_the_binding_and_each_works_applied_condition() {
        let view = view();
        assert_eq!(view.rows[0].target.display_key(), "Deployment/shop/web");
        let (status, message) = view.cell(0, 0);
        assert_eq!(status, CellStatus::InSync);
        assert_eq!(
            message.as_deref(),
            Some("Work Applied (2 replicas)"),
            "the schedule's replicas"
        );
        assert_eq!(
            view.health(0, 0),
            Some(CellHealth {
                kind: HealthKind::Progressing,
                reason: "Karmada reports Unhealthy (1/2 available)".into(),
                since: None,
                rule: None,
            }),
            "Karmada's verdict with the counts it reflected from the member"
        );
        assert_eq!(view.health(0, 1), None, "no aggregated status for b");
        assert_eq!(
            view.cell(0, 1).0,
            CellStatus::Failed("AppliedFailed: admission webhook denied".into())
        );
        let CellStatus::NotPlaced(reason) = view.cell(0, 2).0 else {
            panic!("c is not scheduled");
        };
        assert!(
            reason.contains("did not schedule ResourceBinding shop/web-deployment to this cluster"),
            "{reason}"
        );
    }

    #[test]
    fn karmadas_verdict_is_the_health_and_an_unhealthy_rollout_is_progressing() {
        let item = |health: &str, applied: bool| {
            json!({"clusterName": "a", "applied": applied, "health": health,
                "status": {"replicas": 3, "updatedReplicas": 3, "availableReplicas": 3}})
        };
        assert_eq!(
            aggregated_health(&item("Healthy", true)),
            Some(CellHealth {
                kind: HealthKind::Healthy,
                reason: "Karmada reports Healthy (3/3 available)".into(),
                since: None,
                rule: None,
            })
        );
        assert_eq!(
            aggregated_health(&item("Unhealthy", true)).map(|h| h.kind),
            Some(HealthKind::Progressing)
        );
        assert_eq!(
            aggregated_health(&item("Unknown", true)).map(|h| h.kind),
            Some(HealthKind::Unknown)
        );
        assert_eq!(
            aggregated_health(&item("Healthy", false)),
            None,
            "not applied: nothing to judge"
        );
        let mut view = view();
        view.clusters[0].1.health = Health::Unreachable;
        assert_eq!(
            view.health(0, 0).map(|h| h.kind),
            Some(HealthKind::Unknown),
            "an unreachable member's last verdict is not current"
        );
    }

    #[test]
    fn an_unreachable_member_makes_its_scheduled_cells_unreachable() {
        let mut view = view();
        view.clusters[0].1.health = Health::Unreachable;
        assert_eq!(view.cell(0, 0).0, CellStatus::Unreachable);
        assert!(matches!(view.cell(0, 2).0, CellStatus::NotPlaced(_)));
    }

    #[test]
    fn a_scheduled_cluster_without_its_work_is_pending() {
        let binding = &view_binding();
        let row = row_of(binding, &[]);
        assert_eq!(row.cells["a"].0, CellStatus::Pending);
        assert_eq!(
            row.cells["a"].1.as_deref(),
            Some("scheduled (2 replicas); no Work for a yet")
        );
    }

    #[test]
    fn suspended_dispatching_shows_suspended_whatever_the_work_last_applied() {
        let mut binding = view_binding();
        binding.suspension.on_clusters = vec!["a".into()];
        let work = |cluster: &str, spec: Value| {
            work_of(&json!({
                "metadata": {"namespace": format!("karmada-es-{cluster}"),
                    "labels": {"resourcebinding.karmada.io/permanent-id": "b1"}},
                "spec": spec,
                "status": {"conditions": [
                    {"type": "Applied", "status": "True", "reason": "AppliedSuccessful"},
                    {"type": "Dispatching", "status": "False", "reason": "SuspendDispatching"}]},
            }))
            .unwrap()
        };
        let works = [
            work("a", json!({"suspendDispatching": true})),
            work("b", json!({})),
        ];
        let row = row_of(&binding, &works);
        let CellStatus::Suspended(why) = &row.cells["a"].0 else {
            panic!("a is suspended: {:?}", row.cells["a"]);
        };
        assert!(
            why.contains("on a") && why.contains("is suspended"),
            "{why}"
        );
        // The Work's own mark counts even where the binding names other clusters.
        assert!(matches!(row.cells["b"].0, CellStatus::Suspended(_)));
        binding.suspension = Suspension::default();
        assert_eq!(
            row_of(&binding, &[work("b", json!({}))]).cells["b"].0,
            CellStatus::Suspended("Karmada holds back dispatching on b (ResourceBinding shop/web-deployment suspension); the Work is suspended".into())
        );
        let all = Suspension {
            dispatching: true,
            on_clusters: Vec::new(),
        };
        binding.suspension = all;
        let row = row_of(&binding, &[]);
        let CellStatus::Suspended(why) = &row.cells["b"].0 else {
            panic!("b is suspended");
        };
        assert!(
            why.contains("everywhere") && why.contains("not written yet"),
            "{why}"
        );
    }
}
