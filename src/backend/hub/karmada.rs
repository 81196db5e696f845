//! Reading a Karmada hub: its member Clusters (labels, provider, region, zones and taints
//! through the same inventory parser the fleet directory uses; health from the Ready
//! condition Karmada keeps, with its reason and message; the Kubernetes version it reports).
//! Only reads; it must not write to the hub.

use kube::Client;
use kube::api::{Api, DynamicObject, ListParams};
use kube::config::Kubeconfig;
use kube::discovery::ApiResource;
use serde_json::Value;

use crate::backend::kube::probe::short_error;
use crate::engine::inventory::{InventoryKind, parse_cluster};
use crate::engine::load::Doc;
use crate::model::{ClusterSpec, ClusterStatus, Health};

fn cluster_resource() -> ApiResource {
    ApiResource {
        group: "cluster.karmada.io".into(),
        version: "v1alpha1".into(),
        api_version: "cluster.karmada.io/v1alpha1".into(),
        kind: "Cluster".into(),
        plural: "clusters".into(),
    }
}

/// Every member Cluster of the hub, in name order, with the health Karmada reports for it.
/// A member reaches flotilla through the kubeconfig context of its name when there is one
/// (or the `flotilla.dev/context` annotation), else only through the hub.
pub async fn clusters(
    client: &Client,
    kubeconfig: &Kubeconfig,
) -> Result<Vec<(ClusterSpec, ClusterStatus)>, String> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &cluster_resource());
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(|err| format!("listing Karmada Clusters on the hub: {}", short_error(&err)))?;
    let mut clusters = Vec::new();
    for object in list.items {
        let value = serde_json::to_value(&object).map_err(|err| err.to_string())?;
        let name = object.metadata.name.clone().unwrap_or_default();
        let doc = Doc::from_value(&format!("hub Cluster/{name}"), value.clone());
        let mut spec = parse_cluster(&doc, InventoryKind::Karmada).map_err(|e| e.to_string())?;
        if spec.context.is_empty() && kubeconfig.contexts.iter().any(|c| c.name == spec.name) {
            spec.context = spec.name.clone();
        }
        clusters.push((spec, status_of(&value)));
    }
    clusters.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    Ok(clusters)
}

/// A Karmada Cluster's health: its Ready condition (an unreachable member is Unreachable, any
/// other False is NotReady), the condition's reason and message, and the version it reports.
pub fn status_of(cluster: &Value) -> ClusterStatus {
    let ready = cluster
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|conditions| conditions.iter().find(|c| c["type"] == "Ready"));
    let text = |value: Option<&Value>, field: &str| {
        value
            .and_then(|v| v.get(field))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let reason = text(ready, "reason");
    let message = text(ready, "message");
    let health = match text(ready, "status").as_str() {
        "True" => Health::Ready,
        "False" if reason == "ClusterNotReachable" => Health::Unreachable,
        "False" => Health::NotReady,
        _ => Health::Unknown,
    };
    let sync_mode = cluster
        .pointer("/spec/syncMode")
        .and_then(Value::as_str)
        .unwrap_or("Push");
    let described = match (reason.is_empty(), message.is_empty()) {
        (true, true) => "no Ready condition reported by Karmada yet".to_string(),
        (false, true) => reason,
        (true, false) => message,
        (false, false) => format!("{reason}: {message}"),
    };
    ClusterStatus {
        health,
        version: cluster
            .pointer("/status/kubernetesVersion")
            .and_then(Value::as_str)
            .map(str::to_string),
        latency_ms: None,
        message: format!("{described} ({sync_mode} mode, via the Karmada hub)"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn health_comes_from_karmadas_ready_condition() {
        let ready = json!({
            "spec": {"syncMode": "Push"},
            "status": {"kubernetesVersion": "v1.36.3", "conditions": [
                {"type": "Ready", "status": "True", "reason": "ClusterReady",
                 "message": "cluster is healthy and ready to accept workloads"}]}
        });
        let status = status_of(&ready);
        assert_eq!(status.health, Health::Ready);
        assert_eq!(status.version.as_deref(), Some("v1.36.3"));
        assert!(
            status.message.contains("cluster is healthy"),
            "{}",
            status.message
        );
        let gone = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False", "reason": "ClusterNotReachable",
             "message": "cluster is not reachable"}]}});
        assert_eq!(status_of(&gone).health, Health::Unreachable);
        assert_eq!(status_of(&json!({})).health, Health::Unknown);
    }
}
