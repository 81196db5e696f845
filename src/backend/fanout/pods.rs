//! The pods of a workload on one cluster, found as its controllers own them: a Deployment's
//! through the ReplicaSets it owns, a StatefulSet's, DaemonSet's, Job's or ReplicaSet's
//! directly, by owner references (the workload's selector only narrows the list request).
//! [`read_pods`] does it for every target's workloads with bounded fan-out, for `flotilla
//! pods` and `flotilla images`. It only reads, and must not print, classify a pod (the engine's
//! `health::pods` does) or decide a cell's status.

use std::collections::BTreeSet;

use futures::StreamExt;
use serde_json::Value;

use super::cluster_api::{ApiError, ClusterApi, Guard, ListQuery};
use super::object::resource_of;
use super::targets::{Options, Target, cluster_failure, fan_out};
use crate::model::ResourceRef;

pub use crate::engine::health::pods::{WORKLOADS, template_images};

/// Whether pods of this kind of object are followed.
pub fn is_workload(resource: &ResourceRef) -> bool {
    WORKLOADS.contains(&resource.kind.as_str())
}

/// Whether `object` names an owner among `owners` (by uid; by kind and name where an owner
/// has no uid).
fn owned_by(object: &Value, owners: &[(String, String, String)]) -> bool {
    object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|reference| {
            let field = |key: &str| reference.get(key).and_then(Value::as_str).unwrap_or("");
            owners.iter().any(|(kind, name, uid)| {
                if uid.is_empty() {
                    field("kind") == kind && field("name") == name
                } else {
                    field("uid") == uid
                }
            })
        })
}

/// (kind, name, uid) of an object, as an owner reference names it.
fn owner_key(object: &Value) -> (String, String, String) {
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    (text("/kind"), text("/metadata/name"), text("/metadata/uid"))
}

/// The pods `workload` (a live object) owns on the cluster, directly or through its
/// ReplicaSets; `labels` (kubectl's `-l` syntax, may be empty) narrows them further.
pub async fn workload_pods<A: ClusterApi>(
    api: &A,
    guard: &Guard,
    workload: &Value,
    labels: &str,
) -> Result<Vec<Value>, ApiError> {
    let target = resource_of(workload);
    let namespace = target.namespace.clone().unwrap_or_else(|| "default".into());
    let selector = [
        label_selector(workload).unwrap_or_default(),
        labels.to_string(),
    ]
    .into_iter()
    .filter(|part| !part.is_empty())
    .collect::<Vec<_>>()
    .join(",");
    let mut owners = vec![owner_key(workload)];
    if target.kind == "Deployment" {
        let sets = ListQuery {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            namespace: namespace.clone(),
            labels: label_selector(workload).unwrap_or_default(),
            fields: String::new(),
        };
        owners = guard
            .call(|| api.list(&sets))
            .await?
            .iter()
            .filter(|set| owned_by(set, &owners))
            .map(owner_key)
            .collect();
        if owners.is_empty() {
            return Ok(Vec::new());
        }
    }
    let pods = ListQuery {
        api_version: "v1".into(),
        kind: "Pod".into(),
        namespace,
        labels: selector,
        fields: String::new(),
    };
    let mut pods: Vec<Value> = guard
        .call(|| api.list(&pods))
        .await?
        .into_iter()
        .filter(|pod| owned_by(pod, &owners))
        .collect();
    pods.sort_by(|a, b| {
        let name = |pod: &Value| {
            pod.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        name(a).cmp(&name(b))
    });
    Ok(pods)
}

/// A workload's `spec.selector` as a label selector string (`matchLabels` and
/// `matchExpressions`), if it has one.
pub fn label_selector(object: &Value) -> Option<String> {
    let selector = object.pointer("/spec/selector")?;
    let mut terms: Vec<String> = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(key, value)| value.as_str().map(|value| format!("{key}={value}")))
        .collect();
    for expression in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = expression.get("key").and_then(Value::as_str).unwrap_or("");
        let values: Vec<&str> = expression
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        match expression.get("operator").and_then(Value::as_str) {
            Some("In") => terms.push(format!("{key} in ({})", values.join(","))),
            Some("NotIn") => terms.push(format!("{key} notin ({})", values.join(","))),
            Some("Exists") => terms.push(key.to_string()),
            Some("DoesNotExist") => terms.push(format!("!{key}")),
            _ => {}
        }
    }
    (!terms.is_empty()).then(|| terms.join(","))
}

/// One workload on one cluster: the object the fleet renders for it there, the live object,
/// and the pods it owns — or why they could not be read.
#[derive(Debug, Clone)]
pub struct WorkloadPods {
    pub cluster: String,
    pub resource: ResourceRef,
    pub desired: Value,
    /// `None` when the cluster does not hold the workload (or could not be read).
    pub live: Option<Value>,
    pub pods: Vec<Value>,
    pub error: Option<String>,
}

/// The pods of every target workload `select` picks, on every cluster, with bounded fan-out
/// (clusters at `options.concurrency`, each cluster's requests at its `in_flight`); a cluster
/// that fails gives each of its picked workloads the error.
pub async fn read_pods<A: ClusterApi>(
    targets: &[Target<A>],
    options: Options,
    select: &(dyn Fn(&ResourceRef) -> bool + Sync),
    labels: &str,
) -> Vec<WorkloadPods> {
    read_pods_kept(targets, options, select, labels, &|workload| workload).await
}

/// [`read_pods`], each workload's read handed to `keep` as soon as it is complete and only
/// what `keep` returns held: a caller that needs a line per pod does not hold every pod
/// object of the fleet at once.
pub async fn read_pods_kept<A: ClusterApi, T>(
    targets: &[Target<A>],
    options: Options,
    select: &(dyn Fn(&ResourceRef) -> bool + Sync),
    labels: &str,
    keep: &(dyn Fn(WorkloadPods) -> T + Sync),
) -> Vec<T> {
    let quiet = |_: usize, _: usize| {};
    fn picked<'t, A>(
        target: &'t Target<A>,
        select: &(dyn Fn(&ResourceRef) -> bool + Sync),
    ) -> Vec<&'t Value> {
        target
            .objects
            .iter()
            .filter(|object| {
                let resource = resource_of(object);
                is_workload(&resource) && select(&resource)
            })
            .collect()
    }
    let per_cluster = fan_out(targets, options, &quiet, |target, api| async move {
        let guard = Guard::new(options.limits);
        let guard = &guard;
        futures::stream::iter(picked(target, select))
            .map(|desired| async move {
                let resource = resource_of(desired);
                let mut item = WorkloadPods {
                    cluster: target.cluster.clone(),
                    resource: resource.clone(),
                    desired: desired.clone(),
                    live: None,
                    pods: Vec::new(),
                    error: None,
                };
                match guard.call(|| api.get(&resource)).await {
                    Err(err) => item.error = Some(err.to_string()),
                    Ok(None) => {}
                    Ok(Some(live)) => {
                        match workload_pods(api, guard, &live, labels).await {
                            Ok(pods) => item.pods = pods,
                            Err(err) => item.error = Some(format!("cannot list pods: {err}")),
                        }
                        item.live = Some(live);
                    }
                }
                keep(item)
            })
            .buffered(options.limits.in_flight.max(1))
            .collect::<Vec<_>>()
            .await
    })
    .await;
    let mut items = Vec::new();
    for (target, rows) in targets.iter().zip(per_cluster) {
        match rows {
            Some(rows) => items.extend(rows),
            None => {
                let err = cluster_failure(target, options).to_string();
                items.extend(picked(target, select).into_iter().map(|desired| {
                    keep(WorkloadPods {
                        cluster: target.cluster.clone(),
                        resource: resource_of(desired),
                        desired: desired.clone(),
                        live: None,
                        pods: Vec::new(),
                        error: Some(err.clone()),
                    })
                }));
            }
        }
    }
    items
}

/// The distinct images pods run for one container, sorted.
pub fn running_images(pods: &[Value], container: &str) -> BTreeSet<String> {
    pods.iter()
        .flat_map(|pod| {
            pod.pointer("/spec/containers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter(|spec| spec.get("name").and_then(Value::as_str) == Some(container))
        .filter_map(|spec| spec.get("image").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::backend::fanout::fake::FakeCluster;
    use serde_json::json;

    #[test]
    fn a_workload_selector_reads_as_kubectl_writes_it() {
        let deployment = json!({"spec": {"selector": {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]},
                                 {"key": "canary", "operator": "DoesNotExist"}],
        }}});
        assert_eq!(
            label_selector(&deployment).as_deref(),
            Some("app=web,tier in (a,b),!canary")
        );
        assert_eq!(label_selector(&json!({"spec": {}})), None);
    }

    #[tokio::test]
    async fn a_deployments_pods_are_those_its_replicasets_own() {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "uid": "d1"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}}});
        let owned_set = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-1", "namespace": "shop", "uid": "r1", "labels": {"app": "web"},
                "ownerReferences": [{"kind": "Deployment", "name": "web", "uid": "d1"}]}});
        let stray_set = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-x", "namespace": "shop", "uid": "r2", "labels": {"app": "web"}}});
        let pod = |name: &str, owner: &str| {
            json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shop", "labels": {"app": "web"},
                "ownerReferences": [{"kind": "ReplicaSet", "name": "x", "uid": owner}]}})
        };
        let cluster = FakeCluster::default();
        for object in [
            &owned_set,
            &stray_set,
            &pod("web-1-b", "r1"),
            &pod("web-1-a", "r1"),
            &pod("web-x-a", "r2"),
        ] {
            cluster
                .lock_objects_for_test()
                .insert(resource_of(object), object.clone());
        }
        let guard = Guard::new(Default::default());
        let pods = workload_pods(&cluster, &guard, &deployment, "")
            .await
            .unwrap();
        let names: Vec<&str> = pods
            .iter()
            .map(|pod| pod["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["web-1-a", "web-1-b"]);
        let narrowed = workload_pods(&cluster, &guard, &deployment, "app=db")
            .await
            .unwrap();
        assert!(narrowed.is_empty());
    }
}
