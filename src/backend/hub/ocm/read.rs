//! Reading an Open Cluster Management hub: ManagedClusters (labels with the cluster's claims
//! merged in where no label of that name exists, taints, health from the
//! `ManagedClusterConditionAvailable` condition with OCM's reason and message, the Kubernetes
//! version the agent reports), ManagedClusterSets and their bindings, Placements with their
//! PlacementDecisions, and ManifestWorks with the per-manifest status the work agents write
//! back. The console's rows are the distinct manifests across ManifestWorks, one cell per
//! cluster from the ManifestWork in that cluster's namespace. ManagedClusters are parsed by the
//! engine's OCM dialect, the same parser the placement preview uses. Only reads; it must not
//! write to the hub.

use std::collections::{BTreeMap, HashMap};

use kube::Client;
use kube::config::Kubeconfig;
use kube::discovery::ApiResource;
use serde_json::Value;

use super::types::{CLUSTER_GROUP, WORK_GROUP, resource};
use crate::backend::hub::error::HubError;
use crate::backend::hub::objects::{condition, list_values, reason_message, text};
use crate::backend::hub::view::{HubRender, HubRow, HubView, RenderedObject, sort_rows};
use crate::engine::dialect::ocm::{OcmCluster, OcmClusterSet};
use crate::engine::edit::ocm_placement::{HubPlacement, PlacementWorld, ReplicaSetRef};
use crate::model::HubKind;
use crate::model::{CellHealth, CellStatus, ClusterSpec, ClusterStatus, Health, ResourceRef};

/// The condition the hub keeps from the agent's lease and health checks.
const AVAILABLE: &str = "ManagedClusterConditionAvailable";
/// Claims that name a cluster's provider and region (what `clusteradm` and the agent set).
const PLATFORM_CLAIM: &str = "platform.open-cluster-management.io";
const REGION_CLAIM: &str = "region.open-cluster-management.io";

/// Every ManagedCluster of the hub, in name order, with the health OCM reports for it. A
/// member reaches flotilla through the kubeconfig context of its name when there is one,
/// else only through the hub.
pub async fn clusters(
    client: &Client,
    kubeconfig: &Kubeconfig,
) -> Result<Vec<(ClusterSpec, ClusterStatus)>, HubError> {
    let items = list_values(
        client,
        &resource(CLUSTER_GROUP, "v1", "ManagedCluster", "managedclusters"),
    )
    .await?;
    let mut clusters: Vec<_> = items
        .iter()
        .map(|value| member_of(value, kubeconfig))
        .collect();
    clusters.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    Ok(clusters)
}

/// One ManagedCluster as the console's column: its spec and the health OCM reports.
pub fn member_of(value: &Value, kubeconfig: &Kubeconfig) -> (ClusterSpec, ClusterStatus) {
    let mut spec = spec_of(value);
    if kubeconfig.contexts.iter().any(|c| c.name == spec.name) {
        spec.context = spec.name.clone();
    }
    (spec, status_of(value))
}

/// A ManagedCluster as flotilla's cluster. The engine reads the object as a Placement sees it
/// (labels, claims, taints); flotilla's cluster has those labels and the claims where no label
/// has the claim's name, its taints, and provider and region from the well-known claims or
/// labels.
pub fn spec_of(cluster: &Value) -> ClusterSpec {
    let OcmCluster {
        name,
        mut labels,
        claims,
        taints,
    } = OcmCluster::from_managed_cluster(cluster);
    let provider = claims.get(PLATFORM_CLAIM).cloned();
    let region = claims
        .get(REGION_CLAIM)
        .or_else(|| labels.get("topology.kubernetes.io/region"))
        .or_else(|| labels.get("region"))
        .cloned();
    for (claim, value) in claims {
        labels.entry(claim).or_insert(value);
    }
    ClusterSpec {
        name,
        context: String::new(),
        labels,
        taints,
        provider,
        region,
        zones: Vec::new(),
    }
}

/// A ManagedCluster's health as OCM reports it: Available=True is Ready; Available=False
/// (the agent reports its cluster's API server failing) is NotReady; Available=Unknown (the
/// agent's lease stopped: the hub hears nothing) is Unreachable; a cluster the hub has not
/// accepted is Unauthorized; one that never reported is Unknown. The message carries OCM's
/// reason and message.
pub fn status_of(cluster: &Value) -> ClusterStatus {
    let accepted = cluster.pointer("/spec/hubAcceptsClient") == Some(&Value::Bool(true));
    let available = condition(cluster, AVAILABLE);
    let said = |c: &Value| {
        let said = reason_message(c);
        if said.is_empty() {
            "OCM gave no reason".to_string()
        } else {
            said
        }
    };
    let (health, described) = match available {
        _ if !accepted => (
            Health::Unauthorized,
            match condition(cluster, "HubAcceptedManagedCluster").map(reason_message) {
                Some(m) if !m.is_empty() => format!("the hub does not accept this cluster: {m}"),
                _ => "the hub has not accepted this cluster (spec.hubAcceptsClient is not true)"
                    .to_string(),
            },
        ),
        Some(c) if c["status"] == "True" => (Health::Ready, said(c)),
        Some(c) if c["status"] == "False" => (Health::NotReady, said(c)),
        Some(c) => (Health::Unreachable, said(c)),
        None => (
            Health::Unknown,
            match condition(cluster, "ManagedClusterJoined") {
                Some(joined) if joined["status"] == "True" => {
                    "joined; no availability reported by OCM yet".to_string()
                }
                _ => "accepted; waiting for the cluster's agent to join".to_string(),
            },
        ),
    };
    ClusterStatus {
        health,
        version: cluster
            .pointer("/status/version/kubernetes")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_string),
        latency_ms: None,
        message: format!("{described} (via the Open Cluster Management hub)"),
    }
}

/// A ManagedClusterSet: its name and how it selects clusters.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterSet {
    pub name: String,
    /// `ExclusiveClusterSetLabel` (the default) or `LabelSelector`.
    pub selector_type: String,
    /// The set's `ClusterSetEmpty` condition, `Reason: message`, when it has one.
    pub empty: Option<String>,
}

pub fn cluster_set_of(value: &Value) -> ClusterSet {
    let selector_type = text(value, "/spec/clusterSelector/selectorType");
    ClusterSet {
        name: text(value, "/metadata/name"),
        selector_type: if selector_type.is_empty() {
            "ExclusiveClusterSetLabel".into()
        } else {
            selector_type
        },
        empty: condition(value, "ClusterSetEmpty")
            .filter(|c| c["status"] == "True")
            .map(reason_message),
    }
}

/// A ManagedClusterSetBinding: a set made visible to Placements of one namespace.
#[derive(Debug, Clone, PartialEq)]
pub struct SetBinding {
    pub namespace: String,
    pub cluster_set: String,
    /// Whether OCM reports it Bound; `Reason: message` when it is not.
    pub bound: Result<(), String>,
}

pub fn binding_of(value: &Value) -> SetBinding {
    let bound = match condition(value, "Bound") {
        Some(c) if c["status"] == "True" => Ok(()),
        Some(c) => Err(reason_message(c)),
        None => Err("not reported Bound by OCM yet".to_string()),
    };
    SetBinding {
        namespace: text(value, "/metadata/namespace"),
        cluster_set: text(value, "/spec/clusterSet"),
        bound,
    }
}

/// A Placement with the clusters its PlacementDecisions chose.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub namespace: String,
    pub name: String,
    /// The object as stored (with its resourceVersion), for the placement editor.
    pub object: Value,
    /// `status.numberOfSelectedClusters`.
    pub selected: i64,
    /// The `PlacementSatisfied` condition: whether it is True, and `Reason: message`.
    pub satisfied: Option<(bool, String)>,
    /// The decided clusters, in decision order, with the PlacementDecision naming each.
    pub decisions: Vec<Decision>,
}

/// One cluster a PlacementDecision chose.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub cluster: String,
    /// The PlacementDecision object, `namespace/name`.
    pub source: String,
    pub reason: String,
}

/// The decisions of one PlacementDecision object, labelled with its Placement's name.
fn decisions_of(value: &Value) -> (String, String, Vec<Decision>) {
    let namespace = text(value, "/metadata/namespace");
    let source = format!("{namespace}/{}", text(value, "/metadata/name"));
    let placement = text(
        value,
        "/metadata/labels/cluster.open-cluster-management.io~1placement",
    );
    let decisions = value
        .pointer("/status/decisions")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|d| Decision {
                    cluster: text(d, "/clusterName"),
                    source: source.clone(),
                    reason: text(d, "/reason"),
                })
                // An empty name is an unfilled slot.
                .filter(|d| !d.cluster.is_empty())
                .collect()
        })
        .unwrap_or_default();
    (namespace, placement, decisions)
}

/// Placements joined with their PlacementDecisions (by namespace and the
/// `cluster.open-cluster-management.io/placement` label), in namespace/name order.
pub fn placements_of(placements: &[Value], decisions: &[Value]) -> Vec<Placement> {
    let decided: Vec<_> = decisions.iter().map(decisions_of).collect();
    let mut out: Vec<Placement> = placements
        .iter()
        .map(|p| {
            let namespace = text(p, "/metadata/namespace");
            let name = text(p, "/metadata/name");
            let mut decisions: Vec<Decision> = decided
                .iter()
                .filter(|(ns, placement, _)| *ns == namespace && *placement == name)
                .flat_map(|(_, _, d)| d.iter().cloned())
                .collect();
            decisions.sort_by(|a, b| (&a.source, &a.cluster).cmp(&(&b.source, &b.cluster)));
            Placement {
                object: p.clone(),
                selected: p
                    .pointer("/status/numberOfSelectedClusters")
                    .and_then(Value::as_i64)
                    .unwrap_or(0),
                satisfied: condition(p, "PlacementSatisfied")
                    .map(|c| (c["status"] == "True", reason_message(c))),
                decisions,
                namespace,
                name,
            }
        })
        .collect();
    out.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    out
}

impl Placement {
    /// The decided cluster names.
    pub fn clusters(&self) -> Vec<&str> {
        self.decisions.iter().map(|d| d.cluster.as_str()).collect()
    }
}

/// The hub's placement objects: cluster sets, their bindings, Placements with decisions.
#[derive(Debug, Clone, Default)]
pub struct PlacementState {
    pub sets: Vec<ClusterSet>,
    pub bindings: Vec<SetBinding>,
    pub placements: Vec<Placement>,
}

/// The hub's placement objects as served: sets, set bindings, Placements, PlacementDecisions.
struct PlacementObjects {
    sets: Vec<Value>,
    bindings: Vec<Value>,
    placements: Vec<Value>,
    decisions: Vec<Value>,
}

async fn placement_objects(client: &Client) -> Result<PlacementObjects, HubError> {
    let list = |version: &'static str, kind: &'static str, plural: &'static str| {
        let resource = resource(CLUSTER_GROUP, version, kind, plural);
        async move { list_values(client, &resource).await }
    };
    Ok(PlacementObjects {
        sets: list("v1beta2", "ManagedClusterSet", "managedclustersets").await?,
        bindings: list(
            "v1beta2",
            "ManagedClusterSetBinding",
            "managedclustersetbindings",
        )
        .await?,
        placements: list("v1beta1", "Placement", "placements").await?,
        decisions: list("v1beta1", "PlacementDecision", "placementdecisions").await?,
    })
}

/// Reads ManagedClusterSets, ManagedClusterSetBindings, Placements and PlacementDecisions.
pub async fn placement_state(client: &Client) -> Result<PlacementState, HubError> {
    let objects = placement_objects(client).await?;
    let mut sets: Vec<ClusterSet> = objects.sets.iter().map(cluster_set_of).collect();
    sets.sort_by(|a, b| a.name.cmp(&b.name));
    let mut bindings: Vec<SetBinding> = objects.bindings.iter().map(binding_of).collect();
    bindings.sort_by(|a, b| (&a.namespace, &a.cluster_set).cmp(&(&b.namespace, &b.cluster_set)));
    Ok(PlacementState {
        sets,
        bindings,
        placements: placements_of(&objects.placements, &objects.decisions),
    })
}

/// What the placement editor decides Placements against: the ManagedClusters with their
/// claims and taints, the sets (a set whose selector flotilla cannot read is left out, and
/// said so), the bindings OCM reports Bound, every Placement with its decision, and the
/// ManifestWorkReplicaSets that follow Placements (none when the hub has no such API).
pub async fn placement_world(client: &Client) -> Result<(PlacementWorld, Vec<String>), HubError> {
    let managed = list_values(
        client,
        &resource(CLUSTER_GROUP, "v1", "ManagedCluster", "managedclusters"),
    )
    .await?;
    let objects = placement_objects(client).await?;
    let replica_sets = list_values(
        client,
        &resource(
            WORK_GROUP,
            "v1alpha1",
            "ManifestWorkReplicaSet",
            "manifestworkreplicasets",
        ),
    )
    .await
    .unwrap_or_default();
    let mut problems = Vec::new();
    let sets = objects
        .sets
        .iter()
        .filter_map(|set| match OcmClusterSet::from_value(set) {
            Ok(set) => Some(set),
            Err(err) => {
                problems.push(err.to_string());
                None
            }
        })
        .collect();
    let bindings = objects
        .bindings
        .iter()
        .map(binding_of)
        .filter(|b| b.bound.is_ok())
        .map(|b| (b.namespace, b.cluster_set))
        .collect();
    let placements = placements_of(&objects.placements, &objects.decisions)
        .into_iter()
        .map(|p| {
            let mut decided: Vec<String> = p.clusters().into_iter().map(str::to_string).collect();
            decided.sort();
            decided.dedup();
            HubPlacement {
                object: p.object,
                decided,
                satisfied: p.satisfied,
            }
        })
        .collect();
    let mut clusters: Vec<OcmCluster> = managed
        .iter()
        .map(OcmCluster::from_managed_cluster)
        .collect();
    clusters.sort_by(|a, b| a.name.cmp(&b.name));
    let mut replica_sets: Vec<ReplicaSetRef> = replica_sets
        .iter()
        .map(|set| ReplicaSetRef {
            namespace: text(set, "/metadata/namespace"),
            name: text(set, "/metadata/name"),
            placements: set
                .pointer("/spec/placementRefs")
                .and_then(Value::as_array)
                .map(|refs| refs.iter().map(|r| text(r, "/name")).collect())
                .unwrap_or_default(),
            objects: set
                .pointer("/spec/manifestWorkTemplate/workload/manifests")
                .and_then(Value::as_array)
                .map(|list| list.iter().map(|m| manifest_ref(m).display_key()).collect())
                .unwrap_or_default(),
        })
        .collect();
    replica_sets.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    Ok((
        PlacementWorld {
            clusters,
            sets,
            bindings,
            placements,
            replica_sets,
        },
        problems,
    ))
}

/// What the work agent reported for one manifest of a ManifestWork.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ManifestState {
    /// The per-manifest conditions by type: (status, `Reason: message`).
    pub conditions: BTreeMap<String, (String, String)>,
    /// Status feedback values, `name=value`.
    pub feedback: Vec<String>,
    /// Whether the object is doing its job on the cluster, from the status feedback.
    pub health: Option<CellHealth>,
}

/// One manifest of a ManifestWork: the object, what it is, and what the agent reported for
/// it (nothing yet: `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub target: ResourceRef,
    pub object: Value,
    pub state: Option<ManifestState>,
}

/// One ManifestWork: the cluster it is for (its namespace), its manifests and their status.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestWork {
    pub cluster: String,
    pub name: String,
    /// Every manifest, in order, with what the agent reported for it.
    pub manifests: Vec<Manifest>,
    /// Work-level conditions by type: (status, `Reason: message`).
    pub conditions: BTreeMap<String, (String, String)>,
    /// Whether the agent has seen the current spec: the work's Applied condition's
    /// `observedGeneration` is the object's generation (true when either is absent).
    pub current: bool,
    /// `ManifestWorkReplicaSet ns/name` when one generated it.
    pub owner: Option<String>,
}

fn conditions_by_type(list: Option<&Value>) -> BTreeMap<String, (String, String)> {
    list.and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|c| (text(c, "/type"), (text(c, "/status"), reason_message(c))))
                .filter(|(kind, _)| !kind.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

fn feedback_value(value: &Value) -> String {
    let field = value.get("fieldValue").cloned().unwrap_or(Value::Null);
    let shown = match text(&field, "/type").as_str() {
        "Integer" => field.get("integer").map(Value::to_string),
        "Boolean" => field.get("boolean").map(Value::to_string),
        "String" => field
            .get("string")
            .and_then(Value::as_str)
            .map(str::to_string),
        "JsonRaw" => field
            .get("jsonRaw")
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    };
    format!(
        "{}={}",
        text(value, "/name"),
        shown.unwrap_or_else(|| "?".to_string())
    )
}

/// A status feedback value as JSON: a scalar as itself, a raw JSON string (the work agent's
/// `RawFeedbackJsonString`) parsed.
fn feedback_json(value: &Value) -> Option<(&str, Value)> {
    let name = value.get("name").and_then(Value::as_str)?;
    let field = value.get("fieldValue")?;
    let json = match field.get("type").and_then(Value::as_str)? {
        "Integer" => field.get("integer")?.clone(),
        "Boolean" => field.get("boolean")?.clone(),
        "String" => field.get("string")?.clone(),
        "JsonRaw" => serde_json::from_str(field.get("jsonRaw")?.as_str()?).ok()?,
        _ => return None,
    };
    Some((name, json))
}

/// The health of `manifest` on its cluster from the status feedback the work agent returned
/// for it, judged by the same rules as a live object: the whole `status` when a JSONPaths
/// rule named `status` returns it raw (conditions and all), else the status OCM's
/// `WellKnownStatus` rule reflects for Deployments, DaemonSets, Jobs and Pods. `None` when the
/// feedback says nothing of it.
fn feedback_health(manifest: &Value, values: &[Value]) -> Option<CellHealth> {
    let values: BTreeMap<&str, Value> = values.iter().filter_map(feedback_json).collect();
    let status = match values.get("status") {
        Some(status @ Value::Object(_)) => status.clone(),
        _ => well_known_status(manifest, &values)?,
    };
    let mut object = manifest.clone();
    object["status"] = status;
    // The member's generation is not the hub's: the feedback alone says what was observed.
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("generation");
    }
    let assessed = crate::engine::health::assess(&object)?;
    Some(CellHealth {
        kind: assessed.kind,
        reason: format!("status feedback: {}", assessed.reason),
        since: assessed.since,
        rule: assessed.rule,
    })
}

/// The status OCM's `WellKnownStatus` feedback reflects, in the object's own field names. It
/// has no updated counts, so every replica counts as updated.
fn well_known_status(manifest: &Value, values: &BTreeMap<&str, Value>) -> Option<Value> {
    let get = |name: &str| values.get(name).cloned();
    let status = match text(manifest, "/kind").as_str() {
        "Deployment" => {
            let replicas = get("Replicas")?;
            serde_json::json!({
                "replicas": replicas,
                "updatedReplicas": replicas,
                "readyReplicas": get("ReadyReplicas").unwrap_or(Value::from(0)),
                "availableReplicas": get("AvailableReplicas").unwrap_or(Value::from(0)),
            })
        }
        "DaemonSet" => {
            let desired = get("DesiredNumberScheduled")?;
            serde_json::json!({
                "desiredNumberScheduled": desired,
                "updatedNumberScheduled": desired,
                "numberReady": get("NumberReady").unwrap_or(Value::from(0)),
                "numberAvailable": get("NumberAvailable").unwrap_or(Value::from(0)),
            })
        }
        "Job" => {
            let complete = get("JobComplete");
            let succeeded = get("JobSucceeded");
            if complete.is_none() && succeeded.is_none() {
                return None;
            }
            let mut status = serde_json::json!({});
            if let Some(succeeded) = succeeded {
                status["succeeded"] = succeeded;
            }
            if let Some(complete) = complete {
                status["conditions"] =
                    serde_json::json!([{"type": "Complete", "status": complete}]);
            }
            status
        }
        "Pod" => {
            let phase = get("PodPhase")?;
            let mut status = serde_json::json!({"phase": phase});
            if let Some(ready) = get("PodReady") {
                status["conditions"] = serde_json::json!([{"type": "Ready", "status": ready}]);
            }
            status
        }
        _ => return None,
    };
    Some(status)
}

/// What a manifest is: its apiVersion, kind, namespace and name.
pub fn manifest_ref(manifest: &Value) -> ResourceRef {
    ResourceRef {
        api_version: text(manifest, "/apiVersion"),
        kind: text(manifest, "/kind"),
        namespace: Some(text(manifest, "/metadata/namespace")).filter(|ns| !ns.is_empty()),
        name: text(manifest, "/metadata/name"),
    }
}

/// The API group of an `apiVersion` (`""` for the core group).
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// The reported status of manifest `ordinal`/`target`: by ordinal (through `by_ordinal`, an
/// index of `statuses`), else by identity.
fn status_for<'a>(
    statuses: &'a [Value],
    by_ordinal: &HashMap<u64, &'a Value>,
    ordinal: usize,
    target: &ResourceRef,
) -> Option<&'a Value> {
    by_ordinal.get(&(ordinal as u64)).copied().or_else(|| {
        statuses.iter().find(|s| {
            let meta = s.get("resourceMeta").cloned().unwrap_or(Value::Null);
            text(&meta, "/kind") == target.kind
                && text(&meta, "/group") == group_of(&target.api_version)
                && text(&meta, "/name") == target.name
                && Some(text(&meta, "/namespace")).filter(|ns| !ns.is_empty()) == target.namespace
        })
    })
}

pub fn manifest_work_of(value: &Value) -> ManifestWork {
    let statuses: &[Value] = value
        .pointer("/status/resourceStatus/manifests")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let by_ordinal: HashMap<u64, &Value> = statuses
        .iter()
        .filter_map(|s| Some((s.pointer("/resourceMeta/ordinal")?.as_u64()?, s)))
        .collect();
    let manifests = value
        .pointer("/spec/workload/manifests")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .enumerate()
                .map(|(ordinal, manifest)| {
                    let target = manifest_ref(manifest);
                    let state = status_for(statuses, &by_ordinal, ordinal, &target).map(|s| {
                        let values = s
                            .pointer("/statusFeedback/values")
                            .and_then(Value::as_array)
                            .map_or(&[][..], Vec::as_slice);
                        ManifestState {
                            conditions: conditions_by_type(s.get("conditions")),
                            feedback: values.iter().map(feedback_value).collect(),
                            health: feedback_health(manifest, values),
                        }
                    });
                    Manifest {
                        target,
                        object: manifest.clone(),
                        state,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let generation = value
        .pointer("/metadata/generation")
        .and_then(Value::as_i64);
    let observed = condition(value, "Applied")
        .and_then(|c| c.get("observedGeneration"))
        .and_then(Value::as_i64);
    let owner = value
        .pointer("/metadata/labels/work.open-cluster-management.io~1manifestworkreplicaset")
        .and_then(Value::as_str)
        .map(|set| format!("ManifestWorkReplicaSet {}", set.replacen('.', "/", 1)));
    ManifestWork {
        cluster: text(value, "/metadata/namespace"),
        name: text(value, "/metadata/name"),
        manifests,
        conditions: conditions_by_type(value.pointer("/status/conditions")),
        current: match (generation, observed) {
            (Some(generation), Some(observed)) => observed >= generation,
            _ => true,
        },
        owner,
    }
}

/// One cell: what `work` says of `state` (its manifest's reported status), in design §4's
/// words with OCM's reason text.
pub fn manifest_cell(
    work: &ManifestWork,
    state: Option<&ManifestState>,
) -> (CellStatus, Option<String>) {
    let on = format!("ManifestWork {}", work.name);
    let get = |map: &BTreeMap<String, (String, String)>, kind: &str| map.get(kind).cloned();
    if let Some((status, why)) = get(&work.conditions, "Deleting")
        && status == "True"
    {
        return (
            CellStatus::Pending,
            Some(format!("{on} is being deleted: {why}")),
        );
    }
    if !work.current {
        return (
            CellStatus::Pending,
            Some(format!(
                "{on}: the agent has not applied its latest spec yet"
            )),
        );
    }
    let Some(state) = state else {
        // No per-manifest status: the work as a whole may have failed, else it is waiting.
        if let Some((status, why)) = get(&work.conditions, "Applied")
            && status == "False"
        {
            return (CellStatus::Failed(why), None);
        }
        return (
            CellStatus::Pending,
            Some(format!("{on}: no status from the work agent yet")),
        );
    };
    let applied = get(&state.conditions, "Applied");
    let available = get(&state.conditions, "Available");
    let degraded = get(&state.conditions, "Degraded")
        .filter(|(status, _)| status == "True")
        .or_else(|| get(&work.conditions, "Degraded").filter(|(status, _)| status == "True"));
    let feedback = if state.feedback.is_empty() {
        String::new()
    } else {
        format!("; {}", state.feedback.join(", "))
    };
    match (applied, available, degraded) {
        (Some((status, why)), _, _) if status == "False" => (CellStatus::Failed(why), None),
        (_, _, Some((_, why))) => (CellStatus::Failed(format!("Degraded: {why}")), None),
        (Some((applied, _)), Some((available, why)), None) if applied == "True" => {
            match available.as_str() {
                "True" => (
                    CellStatus::InSync,
                    Some(format!("{on}: Applied, Available{feedback}")),
                ),
                "False" => (CellStatus::Missing, Some(format!("{on}: {why}{feedback}"))),
                _ => (
                    CellStatus::Pending,
                    Some(format!("{on}: Applied; availability unknown: {why}")),
                ),
            }
        }
        (Some((applied, _)), None, None) if applied == "True" => (
            CellStatus::Pending,
            Some(format!("{on}: Applied; availability not reported yet")),
        ),
        _ => (CellStatus::Pending, Some(format!("{on}: not applied yet"))),
    }
}

/// A row for `target` before any cell: not placed where no ManifestWork carries it.
pub fn row_for(target: &ResourceRef) -> HubRow {
    HubRow {
        target: target.clone(),
        source: String::new(),
        carrier: None,
        cells: BTreeMap::new(),
        not_placed: format!(
            "no ManifestWork in this cluster's namespace carries {}",
            target.display_key()
        ),
        objects: BTreeMap::new(),
        health: BTreeMap::new(),
    }
}

/// The console's rows: one per distinct manifest (apiVersion, kind, namespace, name) across
/// every ManifestWork, with a cell for each cluster whose namespace holds a ManifestWork
/// carrying it. On a cluster that is not Available the cell is Unreachable, whatever the
/// agent last reported.
pub fn rows_of(works: &[ManifestWork], clusters: &[(ClusterSpec, ClusterStatus)]) -> Vec<HubRow> {
    let mut rows: Vec<HubRow> = Vec::new();
    let mut sources: Vec<std::collections::BTreeSet<String>> = Vec::new();
    // The ManifestWorks carrying each row, `(cluster, name)`.
    let mut carriers: Vec<std::collections::BTreeSet<(String, String)>> = Vec::new();
    // Indexes, so a read costs the manifests once however many clusters and rows there are.
    let mut row_index: std::collections::HashMap<ResourceRef, usize> = Default::default();
    let statuses: std::collections::HashMap<&str, &ClusterStatus> = clusters
        .iter()
        .map(|(spec, status)| (spec.name.as_str(), status))
        .collect();
    for work in works {
        let status = statuses.get(work.cluster.as_str());
        let label = match &work.owner {
            Some(owner) => format!("{} ({owner})", work.name),
            None => work.name.clone(),
        };
        for Manifest {
            target,
            object,
            state,
        } in &work.manifests
        {
            let index = match row_index.get(target) {
                Some(index) => *index,
                None => {
                    row_index.insert(target.clone(), rows.len());
                    rows.push(row_for(target));
                    sources.push(Default::default());
                    carriers.push(Default::default());
                    rows.len() - 1
                }
            };
            if !sources[index].contains(&label) {
                sources[index].insert(label.clone());
            }
            carriers[index].insert((work.cluster.clone(), work.name.clone()));
            let cell = match status {
                Some(status) if status.health != Health::Ready => {
                    (CellStatus::Unreachable, Some(status.message.clone()))
                }
                _ => manifest_cell(work, state.as_ref()),
            };
            let row = &mut rows[index];
            match row.cells.get(&work.cluster) {
                // Two ManifestWorks deliver the same object to one cluster: the worse wins.
                Some((existing, _)) if existing.kind() >= cell.0.kind() => {}
                _ => {
                    row.cells.insert(work.cluster.clone(), cell);
                    row.objects.insert(work.cluster.clone(), object.clone());
                    match state.as_ref().and_then(|state| state.health.clone()) {
                        Some(health) => row.health.insert(work.cluster.clone(), health),
                        None => row.health.remove(&work.cluster),
                    };
                }
            }
        }
    }
    for ((row, names), works) in rows.iter_mut().zip(sources).zip(carriers) {
        // Only a row one ManifestWork carries has a hub object to act on.
        if works.len() == 1
            && let Some((cluster, name)) = works.first()
        {
            row.carrier = Some(ResourceRef {
                api_version: format!("{WORK_GROUP}/v1"),
                kind: "ManifestWork".into(),
                namespace: Some(cluster.clone()),
                name: name.clone(),
            });
        }
        let names: Vec<String> = names.into_iter().collect();
        row.source = format!(
            "{} {}",
            if names.len() == 1 {
                "ManifestWork"
            } else {
                "ManifestWorks"
            },
            names.join(", ")
        );
    }
    sort_rows(&mut rows);
    rows
}

/// Objects per list page when the console's caches list a kind: ManifestWorks come
/// [`WORK_PAGE_SIZE`](crate::backend::hub::cache::WORK_PAGE_SIZE) a page, the other kinds as
/// every cache lists them.
pub fn list_page_size(kind: &ApiResource) -> u32 {
    if *kind == resource(WORK_GROUP, "v1", "ManifestWork", "manifestworks") {
        crate::backend::hub::cache::WORK_PAGE_SIZE
    } else {
        crate::backend::hub::cache::LIST_PAGE_SIZE
    }
}

/// What the console watches on an OCM hub: ManagedClusters (health) and ManifestWorks (rows
/// and their status).
pub fn watched_kinds() -> Vec<ApiResource> {
    vec![
        resource(CLUSTER_GROUP, "v1", "ManagedCluster", "managedclusters"),
        resource(WORK_GROUP, "v1", "ManifestWork", "manifestworks"),
        resource(CLUSTER_GROUP, "v1beta1", "Placement", "placements"),
        resource(
            CLUSTER_GROUP,
            "v1beta1",
            "PlacementDecision",
            "placementdecisions",
        ),
    ]
}

/// Every ManifestWork on the hub.
pub async fn manifest_works(client: &Client) -> Result<Vec<ManifestWork>, HubError> {
    let items = list_values(
        client,
        &resource(WORK_GROUP, "v1", "ManifestWork", "manifestworks"),
    )
    .await?;
    Ok(items.iter().map(manifest_work_of).collect())
}

/// Reads the hub: its clusters, and one row per manifest its ManifestWorks deliver.
pub async fn read(client: &Client, kubeconfig: &Kubeconfig) -> Result<HubView, HubError> {
    let clusters = clusters(client, kubeconfig).await?;
    let works = manifest_works(client).await?;
    let rows = rows_of(&works, &clusters);
    Ok(HubView {
        kind: HubKind::OpenClusterManagement,
        clusters,
        rows,
    })
}

/// The objects the ManifestWorks carry, cluster by cluster (clusters in name order, objects
/// in row order): a ManifestWork already is OCM's per-cluster rendering. Every other
/// (object, cluster) pair is unplaced, with the reason.
pub async fn rendered(client: &Client, kubeconfig: &Kubeconfig) -> Result<HubRender, HubError> {
    Ok(render_of(&read(client, kubeconfig).await?))
}

pub fn render_of(view: &HubView) -> HubRender {
    let mut items = Vec::new();
    for (spec, _) in &view.clusters {
        for row in &view.rows {
            if let Some(object) = row.objects.get(&spec.name) {
                items.push(RenderedObject {
                    cluster: spec.name.clone(),
                    object: object.clone(),
                });
            }
        }
    }
    HubRender {
        note: None,
        items,
        unplaced: view.unplaced(),
        errors: Vec::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::HealthKind;

    /// A ManagedCluster as OCM v1.2 writes it once accepted, joined and available.
    fn managed_cluster(name: &str, available: Value) -> Value {
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1",
            "kind": "ManagedCluster",
            "metadata": {"name": name, "labels": {
                "cluster.open-cluster-management.io/clusterset": "default",
                "env": "prod"}},
            "spec": {"hubAcceptsClient": true, "leaseDurationSeconds": 10,
                "managedClusterClientConfigs": [{"url": "https://127.0.0.1:6443"}],
                "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSelect",
                    "timeAdded": "2026-11-30T08:00:00Z"}]},
            "status": {
                "conditions": [
                    {"type": "HubAcceptedManagedCluster", "status": "True",
                     "reason": "HubClusterAdminAccepted", "message": "Accepted by hub cluster admin"},
                    {"type": "ManagedClusterJoined", "status": "True",
                     "reason": "ManagedClusterJoined", "message": "Managed cluster joined"},
                    available,
                ],
                "version": {"kubernetes": "v1.36.3"},
                "clusterClaims": [
                    {"name": "id.k8s.io", "value": "3f0c"},
                    {"name": "platform.open-cluster-management.io", "value": "AWS"},
                    {"name": "region.open-cluster-management.io", "value": "eu-west-1"},
                    {"name": "env", "value": "claimed-not-labelled"},
                ],
            }
        })
    }

    fn available(status: &str, reason: &str, message: &str) -> Value {
        json!({"type": AVAILABLE, "status": status, "reason": reason, "message": message,
               "lastTransitionTime": "2026-11-30T08:00:00Z"})
    }

    #[test]
    fn a_managed_cluster_becomes_a_cluster_with_labels_claims_and_taints() {
        let value = managed_cluster(
            "member-1",
            available(
                "True",
                "ManagedClusterAvailable",
                "Managed cluster is available",
            ),
        );
        let spec = spec_of(&value);
        assert_eq!(spec.name, "member-1");
        assert_eq!(spec.labels["env"], "prod", "a label wins over a claim");
        assert_eq!(spec.labels["id.k8s.io"], "3f0c");
        assert_eq!(spec.provider.as_deref(), Some("AWS"));
        assert_eq!(spec.region.as_deref(), Some("eu-west-1"));
        assert_eq!(spec.taints[0].to_string(), "dedicated=gpu:NoSelect");
        let status = status_of(&value);
        assert_eq!(status.health, Health::Ready);
        assert_eq!(status.version.as_deref(), Some("v1.36.3"));
        assert!(
            status
                .message
                .starts_with("ManagedClusterAvailable: Managed cluster is available"),
            "{}",
            status.message
        );
    }

    #[test]
    fn health_follows_the_available_condition_with_ocms_reason() {
        let stopped = status_of(&managed_cluster(
            "member-2",
            available(
                "Unknown",
                "ManagedClusterLeaseUpdateStopped",
                "Registration agent stopped updating its lease.",
            ),
        ));
        assert_eq!(stopped.health, Health::Unreachable);
        assert!(
            stopped
                .message
                .contains("ManagedClusterLeaseUpdateStopped: Registration agent stopped"),
            "{}",
            stopped.message
        );
        let failing = status_of(&managed_cluster(
            "member-2",
            available(
                "False",
                "ManagedClusterKubeAPIServerUnavailable",
                "The kube-apiserver is not ok, status code: 503",
            ),
        ));
        assert_eq!(failing.health, Health::NotReady);
        assert!(failing.message.contains("status code: 503"));

        let mut unaccepted = managed_cluster("new", json!({}));
        unaccepted["spec"]["hubAcceptsClient"] = json!(false);
        unaccepted["status"] = json!({});
        let status = status_of(&unaccepted);
        assert_eq!(status.health, Health::Unauthorized);
        assert!(
            status.message.contains("hubAcceptsClient"),
            "{}",
            status.message
        );

        let mut joining = managed_cluster("new", json!({}));
        joining["status"] = json!({});
        assert_eq!(status_of(&joining).health, Health::Unknown);
        assert_eq!(status_of(&json!({})).health, Health::Unauthorized);
    }

    /// A ManifestWork carrying a Deployment and a ConfigMap, as the hub stores it after the
    /// agent reported: the ConfigMap is fine, the Deployment failed to apply.
    fn manifest_work(cluster: &str, deployment_applied: Value) -> Value {
        json!({
            "apiVersion": "work.open-cluster-management.io/v1",
            "kind": "ManifestWork",
            "metadata": {"name": "web", "namespace": cluster, "generation": 1},
            "spec": {"workload": {"manifests": [
                {"apiVersion": "apps/v1", "kind": "Deployment",
                 "metadata": {"name": "web", "namespace": "shop"}, "spec": {}},
                {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "web-config", "namespace": "shop"}, "data": {"a": "b"}},
            ]}},
            "status": {
                "conditions": [
                    {"type": "Applied", "status": "True", "observedGeneration": 1,
                     "reason": "AppliedManifestWorkComplete", "message": "Apply manifest work complete"},
                    {"type": "Available", "status": "True", "observedGeneration": 1,
                     "reason": "ResourcesAvailable", "message": "All resources are available"},
                ],
                "resourceStatus": {"manifests": [
                    {"resourceMeta": {"ordinal": 0, "group": "apps", "version": "v1",
                        "kind": "Deployment", "resource": "deployments",
                        "namespace": "shop", "name": "web"},
                     "conditions": [
                        deployment_applied,
                        {"type": "Available", "status": "True", "reason": "ResourceAvailable",
                         "message": "Resource is available"},
                        {"type": "StatusFeedbackSynced", "status": "True",
                         "reason": "StatusFeedbackSynced", "message": ""}],
                     "statusFeedback": {"values": [
                        {"name": "ReadyReplicas", "fieldValue": {"type": "Integer", "integer": 0}},
                        {"name": "Replicas", "fieldValue": {"type": "Integer", "integer": 2}}]}},
                    {"resourceMeta": {"ordinal": 1, "group": "", "version": "v1",
                        "kind": "ConfigMap", "resource": "configmaps",
                        "namespace": "shop", "name": "web-config"},
                     "conditions": [
                        {"type": "Applied", "status": "True", "reason": "AppliedManifestComplete",
                         "message": "Apply manifest complete"},
                        {"type": "Available", "status": "True", "reason": "ResourceAvailable",
                         "message": "Resource is available"}]},
                ]},
            }
        })
    }

    fn ready(name: &str) -> (ClusterSpec, ClusterStatus) {
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
    }

    fn applied_ok() -> Value {
        json!({"type": "Applied", "status": "True", "reason": "AppliedManifestComplete",
               "message": "Apply manifest complete"})
    }

    #[test]
    fn one_row_per_manifest_with_a_cell_per_clusters_manifestwork() {
        let works = [
            manifest_work_of(&manifest_work("member-1", applied_ok())),
            manifest_work_of(&manifest_work(
                "member-2",
                json!({"type": "Applied", "status": "False", "reason": "AppliedManifestFailed",
                       "message": "Failed to apply manifest: deployments.apps \"web\" is forbidden"}),
            )),
        ];
        let clusters = vec![ready("member-1"), ready("member-2"), ready("member-3")];
        let view = HubView {
            kind: HubKind::OpenClusterManagement,
            rows: rows_of(&works, &clusters),
            clusters,
        };
        let keys: Vec<String> = view.rows.iter().map(|r| r.target.display_key()).collect();
        assert_eq!(keys, ["Deployment/shop/web", "ConfigMap/shop/web-config"]);
        assert_eq!(view.rows[0].source, "ManifestWork web");
        assert_eq!(view.rows[0].carrier, None, "two ManifestWorks carry it");

        let (status, message) = view.cell(0, 0);
        assert_eq!(status, CellStatus::InSync);
        assert_eq!(
            message.as_deref(),
            Some("ManifestWork web: Applied, Available; ReadyReplicas=0, Replicas=2")
        );
        assert_eq!(
            view.cell(0, 1).0,
            CellStatus::Failed(
                "AppliedManifestFailed: Failed to apply manifest: deployments.apps \"web\" is forbidden"
                    .into()
            )
        );
        assert_eq!(
            view.cell(1, 1).0,
            CellStatus::InSync,
            "the ConfigMap applied"
        );
        let render = render_of(&view);
        let placed: Vec<(String, String)> = render
            .items
            .iter()
            .map(|i| (i.cluster.clone(), text(&i.object, "/kind")))
            .collect();
        assert_eq!(
            placed,
            [
                ("member-1".to_string(), "Deployment".to_string()),
                ("member-1".to_string(), "ConfigMap".to_string()),
                ("member-2".to_string(), "Deployment".to_string()),
                ("member-2".to_string(), "ConfigMap".to_string()),
            ]
        );
        assert_eq!(render.unplaced.len(), 2, "member-3 gets neither");
        let CellStatus::NotPlaced(reason) = view.cell(0, 2).0 else {
            panic!("member-3 has no ManifestWork");
        };
        assert!(reason.contains("no ManifestWork"), "{reason}");
    }

    #[test]
    fn before_the_agent_reports_the_cell_is_pending_and_a_new_generation_waits() {
        let mut fresh = manifest_work("member-1", applied_ok());
        fresh["status"] = json!({});
        let work = manifest_work_of(&fresh);
        let (status, message) = manifest_cell(&work, work.manifests[0].state.as_ref());
        assert_eq!(status, CellStatus::Pending);
        assert!(message.unwrap_or_default().contains("no status"));

        let mut edited = manifest_work("member-1", applied_ok());
        edited["metadata"]["generation"] = json!(2);
        let work = manifest_work_of(&edited);
        assert_eq!(
            manifest_cell(&work, work.manifests[0].state.as_ref()).0,
            CellStatus::Pending
        );
    }

    #[test]
    fn degraded_and_gone_manifests_say_so() {
        let mut degraded = manifest_work("member-1", applied_ok());
        degraded["status"]["resourceStatus"]["manifests"][0]["conditions"]
            .as_array_mut()
            .unwrap()
            .push(
                json!({"type": "Degraded", "status": "True", "reason": "ConditionRuleEvaluated",
                         "message": "replicas unavailable"}),
            );
        let work = manifest_work_of(&degraded);
        assert_eq!(
            manifest_cell(&work, work.manifests[0].state.as_ref()).0,
            CellStatus::Failed("Degraded: ConditionRuleEvaluated: replicas unavailable".into())
        );

        let mut gone = manifest_work("member-1", applied_ok());
        gone["status"]["resourceStatus"]["manifests"][1]["conditions"][1] = json!({
            "type": "Available", "status": "False", "reason": "ResourceNotAvailable",
            "message": "Resource is not available"});
        let work = manifest_work_of(&gone);
        let (status, message) = manifest_cell(&work, work.manifests[1].state.as_ref());
        assert_eq!(status, CellStatus::Missing);
        assert!(
            message
                .unwrap_or_default()
                .contains("ResourceNotAvailable: Resource is not available")
        );
    }

    #[test]
    fn a_cluster_that_is_not_available_makes_its_cells_unreachable() {
        let works = [manifest_work_of(&manifest_work("member-1", applied_ok()))];
        let mut down = ready("member-1");
        down.1 = status_of(&managed_cluster(
            "member-1",
            available(
                "Unknown",
                "ManagedClusterLeaseUpdateStopped",
                "Registration agent stopped updating its lease.",
            ),
        ));
        let rows = rows_of(&works, &[down]);
        assert_eq!(
            rows[0].carrier.as_ref().map(ResourceRef::display_key),
            Some("ManifestWork/member-1/web".to_string())
        );
        let (status, message) = rows[0].cells["member-1"].clone();
        assert_eq!(status, CellStatus::Unreachable);
        assert!(
            message
                .unwrap_or_default()
                .contains("ManagedClusterLeaseUpdateStopped")
        );
    }

    #[test]
    fn placements_join_their_decisions_and_conditions() {
        let placement = json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
            "metadata": {"name": "web", "namespace": "flotilla-ocm"},
            "spec": {"numberOfClusters": 1, "clusterSets": ["global"]},
            "status": {"numberOfSelectedClusters": 1, "conditions": [
                {"type": "PlacementMisconfigured", "status": "False", "reason": "Succeedconfigured",
                 "message": "Placement configurations check pass"},
                {"type": "PlacementSatisfied", "status": "True", "reason": "AllDecisionsScheduled",
                 "message": "All cluster decisions scheduled"}]}
        });
        let decision = json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "PlacementDecision",
            "metadata": {"name": "web-decision-1", "namespace": "flotilla-ocm",
                "labels": {"cluster.open-cluster-management.io/placement": "web",
                           "cluster.open-cluster-management.io/decision-group-index": "0"}},
            "status": {"decisions": [{"clusterName": "member-2", "reason": ""},
                                      {"clusterName": "", "reason": ""}]}
        });
        let other = json!({
            "metadata": {"name": "db-decision-1", "namespace": "flotilla-ocm",
                "labels": {"cluster.open-cluster-management.io/placement": "db"}},
            "status": {"decisions": [{"clusterName": "member-1"}]}
        });
        let placements = placements_of(&[placement], &[decision, other]);
        assert_eq!(placements.len(), 1);
        let p = &placements[0];
        assert_eq!(p.clusters(), ["member-2"]);
        assert_eq!(p.decisions[0].source, "flotilla-ocm/web-decision-1");
        assert_eq!(p.selected, 1);
        assert_eq!(
            p.satisfied,
            Some((
                true,
                "AllDecisionsScheduled: All cluster decisions scheduled".into()
            ))
        );
        assert_eq!(p.object["spec"]["numberOfClusters"], 1);
    }

    #[test]
    fn sets_and_bindings_report_their_conditions() {
        let set = cluster_set_of(&json!({
            "metadata": {"name": "global"},
            "spec": {"clusterSelector": {"selectorType": "LabelSelector", "labelSelector": {}}},
            "status": {"conditions": [{"type": "ClusterSetEmpty", "status": "False",
                "reason": "ClustersSelected", "message": "2 ManagedClusters selected"}]}
        }));
        assert_eq!(set.selector_type, "LabelSelector");
        assert_eq!(set.empty, None);
        let bound = binding_of(&json!({
            "metadata": {"name": "global", "namespace": "flotilla-ocm"},
            "spec": {"clusterSet": "global"},
            "status": {"conditions": [{"type": "Bound", "status": "True", "reason": "ClusterSetBound"}]}
        }));
        assert_eq!(bound.bound, Ok(()));
        let missing = binding_of(&json!({
            "metadata": {"name": "nope", "namespace": "x"}, "spec": {"clusterSet": "nope"},
            "status": {"conditions": [{"type": "Bound", "status": "False",
                "reason": "ClusterSetNotFound", "message": "Failed to find clusterset"}]}
        }));
        assert_eq!(
            missing.bound,
            Err("ClusterSetNotFound: Failed to find clusterset".into())
        );
    }

    /// A ManifestWork carrying a 3-replica Deployment, with this status feedback for it.
    fn work_with_feedback(values: Value) -> ManifestWork {
        manifest_work_of(&json!({
            "metadata": {"name": "web", "namespace": "member-1"},
            "spec": {"workload": {"manifests": [{"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "shop", "generation": 4},
                "spec": {"replicas": 3, "progressDeadlineSeconds": 30}}]}},
            "status": {"resourceStatus": {"manifests": [{
                "resourceMeta": {"ordinal": 0, "group": "apps", "kind": "Deployment",
                    "name": "web", "namespace": "shop"},
                "conditions": [{"type": "Applied", "status": "True"},
                    {"type": "Available", "status": "True"}],
                "statusFeedback": {"values": values}}]}},
        }))
    }

    fn feedback_health_of(values: Value) -> Option<CellHealth> {
        work_with_feedback(values).manifests[0]
            .state
            .as_ref()
            .and_then(|state| state.health.clone())
    }

    fn integer(name: &str, value: i64) -> Value {
        json!({"name": name, "fieldValue": {"type": "Integer", "integer": value}})
    }

    #[test]
    fn well_known_feedback_tells_a_deployment_progressing_until_every_replica_is_available() {
        let progressing = feedback_health_of(json!([
            integer("ReadyReplicas", 1),
            integer("Replicas", 3),
            integer("AvailableReplicas", 1)
        ]))
        .unwrap();
        assert_eq!(progressing.kind, HealthKind::Progressing);
        assert_eq!(progressing.reason, "status feedback: 1/3 available");
        let healthy = feedback_health_of(json!([
            integer("ReadyReplicas", 3),
            integer("Replicas", 3),
            integer("AvailableReplicas", 3)
        ]))
        .unwrap();
        assert_eq!(healthy.kind, HealthKind::Healthy, "{}", healthy.reason);
        assert_eq!(
            feedback_health_of(json!([])),
            None,
            "no feedback, no health"
        );
    }

    #[test]
    fn a_raw_status_feedback_carries_the_members_progress_deadline_verdict() {
        let status = json!({"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3,
            "readyReplicas": 1, "availableReplicas": 1, "conditions": [
                {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                 "message": "ReplicaSet \"web-7d\" has timed out progressing."}]});
        let degraded = feedback_health_of(json!([{"name": "status", "fieldValue": {
            "type": "JsonRaw", "jsonRaw": status.to_string()}}]))
        .unwrap();
        assert_eq!(degraded.kind, HealthKind::Degraded);
        assert!(
            degraded.reason.contains("ProgressDeadlineExceeded")
                && degraded.reason.contains("has timed out progressing"),
            "{}",
            degraded.reason
        );
        let view = HubView {
            kind: HubKind::OpenClusterManagement,
            rows: rows_of(
                &[work_with_feedback(
                    json!([{"name": "status", "fieldValue": {
                    "type": "JsonRaw", "jsonRaw": status.to_string()}}]),
                )],
                &[],
            ),
            clusters: vec![(
                ClusterSpec {
                    name: "member-1".into(),
                    ..ClusterSpec::default()
                },
                ClusterStatus {
                    health: Health::Ready,
                    ..ClusterStatus::default()
                },
            )],
        };
        assert_eq!(
            view.health(0, 0).map(|h| h.kind),
            Some(HealthKind::Degraded)
        );
    }
}
