//! The fleet a Karmada hub holds, as source texts the engine and the editors load exactly like
//! a fleet directory: the member Clusters as inventory, the resource templates its bindings
//! name, and every PropagationPolicy, ClusterPropagationPolicy, OverridePolicy and
//! ClusterOverridePolicy, one "file" per hub object (`hub:CONTEXT/Kind/namespace/name`). What
//! the API server owns (status, uid, managed fields …) and Karmada's own marks are left out;
//! defaults the server filled into templates stay, so the engine renders what Karmada will.
//! Only reads; it must not write to the hub.

use std::collections::BTreeSet;

use kube::Client;
use serde_json::{Map, Value};

use super::karmada::Binding;
use super::list_values;
use crate::backend::fanout::cluster_api::ClusterApi;
use crate::backend::kube::api::KubeCluster;
use crate::engine::SourceFile;
use crate::model::ResourceRef;

/// Metadata the API server or kubectl keeps for itself.
const SERVER_METADATA: [&str; 8] = [
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// The path a hub object is known by in messages and saves.
pub fn path_of(context: &str, object: &Value) -> String {
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let namespace = text("/metadata/namespace");
    let kind = text("/kind");
    let name = text("/metadata/name");
    if namespace.is_empty() {
        format!("hub:{context}/{kind}/{name}")
    } else {
        format!("hub:{context}/{kind}/{namespace}/{name}")
    }
}

/// The object as an author would have written it: without status, server metadata, the
/// last-applied annotation or Karmada's own labels and annotations.
pub fn as_written(object: &Value) -> Value {
    let mut out = object.clone();
    let Some(root) = out.as_object_mut() else {
        return out;
    };
    root.remove("status");
    if let Some(meta) = root.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in SERVER_METADATA {
            meta.remove(field);
        }
    }
    super::drop_marks(&mut out, |key, _| {
        key.contains("karmada.io") || key == "kubectl.kubernetes.io/last-applied-configuration"
    });
    out
}

/// A hub Cluster as an inventory document: name, labels, the placement-relevant spec, and the
/// kubeconfig context of the same name when there is one.
fn inventory_doc(cluster: &Value, contexts: &BTreeSet<String>) -> Value {
    let name = cluster
        .pointer("/metadata/name")
        .cloned()
        .unwrap_or_default();
    let mut metadata = Map::new();
    metadata.insert("name".into(), name.clone());
    if let Some(labels) = cluster.pointer("/metadata/labels") {
        metadata.insert("labels".into(), labels.clone());
    }
    if let Some(name) = name.as_str()
        && contexts.contains(name)
    {
        metadata.insert(
            "annotations".into(),
            serde_json::json!({ "flotilla.dev/context": name }),
        );
    }
    let mut spec = Map::new();
    for field in ["syncMode", "provider", "region", "zone", "zones", "taints"] {
        if let Some(value) = cluster.pointer(&format!("/spec/{field}")) {
            spec.insert(field.into(), value.clone());
        }
    }
    if let Some(taints) = spec.get_mut("taints").and_then(Value::as_array_mut) {
        for taint in taints.iter_mut().filter_map(Value::as_object_mut) {
            taint.remove("timeAdded");
        }
    }
    serde_json::json!({
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": metadata,
        "spec": spec,
    })
}

fn yaml(value: &Value) -> Result<String, String> {
    serde_saphyr::to_string(value).map_err(|err| format!("cannot write YAML: {err}"))
}

pub(super) fn policy_resources() -> Vec<kube::discovery::ApiResource> {
    [
        ("PropagationPolicy", "propagationpolicies"),
        ("ClusterPropagationPolicy", "clusterpropagationpolicies"),
        ("OverridePolicy", "overridepolicies"),
        ("ClusterOverridePolicy", "clusteroverridepolicies"),
    ]
    .into_iter()
    .map(|(kind, plural)| kube::discovery::ApiResource {
        group: "policy.karmada.io".into(),
        version: "v1alpha1".into(),
        api_version: "policy.karmada.io/v1alpha1".into(),
        kind: kind.into(),
        plural: plural.into(),
    })
    .collect()
}

/// Reads the hub's fleet: an inventory file of its Clusters, one file per policy, and one per
/// template a binding names (templates that are gone are skipped).
pub async fn fleet_files(
    client: &Client,
    context: &str,
    contexts: &BTreeSet<String>,
    bindings: &[Binding],
) -> Result<Vec<SourceFile>, String> {
    let cluster_resource = super::karmada::cluster_resource();
    let mut inventory: Vec<String> = Vec::new();
    for cluster in list_values(client, &cluster_resource).await? {
        inventory.push(yaml(&inventory_doc(&cluster, contexts))?);
    }
    let mut files = vec![SourceFile {
        path: format!("hub:{context}/clusters"),
        text: inventory.join("---\n"),
    }];
    for resource in policy_resources() {
        for policy in list_values(client, &resource).await? {
            let policy = as_written(&policy);
            files.push(SourceFile {
                path: path_of(context, &policy),
                text: yaml(&policy)?,
            });
        }
    }
    let api = KubeCluster::new(client.clone(), true);
    let mut seen: BTreeSet<&ResourceRef> = BTreeSet::new();
    for binding in bindings {
        if !seen.insert(&binding.target) {
            continue;
        }
        let template = api
            .get(&binding.target)
            .await
            .map_err(|err| format!("reading {} on the hub: {err}", binding.target))?;
        if let Some(template) = template {
            let template = as_written(&template);
            files.push(SourceFile {
                path: path_of(context, &template),
                text: yaml(&template)?,
            });
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_stored_object_reads_back_as_written_without_server_or_karmada_marks() {
        let stored = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "uid": "u", "resourceVersion": "7",
                "generation": 2, "managedFields": [], "creationTimestamp": "t",
                "labels": {"app": "web", "propagationpolicy.karmada.io/permanent-id": "x"},
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": {"replicas": 2, "progressDeadlineSeconds": 600},
            "status": {"replicas": 2},
        });
        assert_eq!(
            as_written(&stored),
            json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
                "spec": {"replicas": 2, "progressDeadlineSeconds": 600},
            })
        );
        assert_eq!(path_of("hub", &stored), "hub:hub/Deployment/shop/web");
    }

    #[test]
    fn a_hub_cluster_becomes_an_inventory_document_with_its_context() {
        let cluster = json!({
            "metadata": {"name": "member-1", "labels": {"env": "prod"}},
            "spec": {"syncMode": "Push", "apiEndpoint": "https://127.0.0.1:1",
                "taints": [{"key": "k", "effect": "NoSchedule", "timeAdded": "t"}]},
        });
        let contexts = BTreeSet::from(["member-1".to_string()]);
        assert_eq!(
            inventory_doc(&cluster, &contexts),
            json!({
                "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                "metadata": {"name": "member-1", "labels": {"env": "prod"},
                    "annotations": {"flotilla.dev/context": "member-1"}},
                "spec": {"syncMode": "Push", "taints": [{"key": "k", "effect": "NoSchedule"}]},
            })
        );
    }
}
