//! The fleet a Karmada hub holds, as source texts the engine and the editors load exactly like
//! a fleet directory: the member Clusters as inventory, the resource templates its bindings
//! name, every PropagationPolicy, ClusterPropagationPolicy, OverridePolicy and
//! ClusterOverridePolicy, and every ResourceInterpreterCustomization, one "file" per hub object (`hub:CONTEXT/Kind/namespace/name`). What
//! the API server owns (status, uid, managed fields …) and Karmada's own marks are left out;
//! defaults the server filled into templates stay, so the engine renders what Karmada will.
//! Only reads; it must not write to the hub.

use std::collections::BTreeSet;

use kube::Client;
use serde_json::{Map, Value};

use super::read::Binding;
use super::types::{cluster_resource, interpreter_resource, policy_resources};
use crate::backend::fanout::cluster_api::ClusterApi;
use crate::backend::hub::error::HubError;
use crate::backend::hub::objects::{as_written, list_values, path_of};
use crate::backend::kube::api::KubeCluster;
use crate::engine::SourceFile;
use crate::model::ResourceRef;

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

fn yaml(value: &Value) -> Result<String, HubError> {
    serde_saphyr::to_string(value)
        .map_err(|err| HubError::Unreadable(format!("cannot write YAML: {err}")))
}

/// Reads the hub's fleet: an inventory file of its Clusters, one file per policy, and one per
/// template a binding names (templates that are gone are skipped).
pub async fn fleet_files(
    client: &Client,
    context: &str,
    contexts: &BTreeSet<String>,
    bindings: &[Binding],
) -> Result<Vec<SourceFile>, HubError> {
    let mut inventory: Vec<String> = Vec::new();
    for cluster in list_values(client, &cluster_resource()).await? {
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
    files.extend(interpreter_files(client, context).await?);
    let api = KubeCluster::new(client.clone(), true);
    let mut seen: BTreeSet<&ResourceRef> = BTreeSet::new();
    for binding in bindings {
        if !seen.insert(&binding.target) {
            continue;
        }
        let template = api.get(&binding.target).await.map_err(|err| {
            HubError::Unreachable(format!("reading {} on the hub: {err}", binding.target))
        })?;
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

/// The hub's `ResourceInterpreterCustomization`s, one file each (none on a hub that does not
/// serve the kind).
pub async fn interpreter_files(
    client: &Client,
    context: &str,
) -> Result<Vec<SourceFile>, HubError> {
    let customizations = match list_values(client, &interpreter_resource()).await {
        Ok(values) => values,
        Err(HubError::MissingKind(_)) => Vec::new(),
        Err(other) => return Err(other),
    };
    customization_files(&customizations, context)
}

/// The hub's `ResourceInterpreterCustomization`s `customizations` (as the API server sent
/// them: listed, or held in a watch's cache) as one file each.
pub fn customization_files(
    customizations: &[Value],
    context: &str,
) -> Result<Vec<SourceFile>, HubError> {
    customizations
        .iter()
        .map(|customization| {
            let customization = as_written(customization);
            Ok(SourceFile {
                path: path_of(context, &customization),
                text: yaml(&customization)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
