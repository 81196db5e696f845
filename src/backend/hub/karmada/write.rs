//! Writing to a Karmada hub: asking the scheduler to place a binding afresh. Policies and
//! templates are written by [`crate::backend::hub::write`], like every hub's edited objects.
//! It must not touch anything but the binding it is given.

use kube::Client;
use kube::api::{Api, DynamicObject};

use super::types::binding_resources;
use crate::backend::hub::error::HubError;
use crate::backend::kube::probe::short_error;
use crate::model::ResourceRef;

/// Asks Karmada's scheduler to place a binding afresh: sets its `rescheduleTriggeredAt` to
/// now (later than its `lastScheduledTime`, which is what triggers a full reschedule).
/// Returns the time set.
pub async fn reschedule(client: &Client, binding: &ResourceRef) -> Result<String, HubError> {
    let [namespaced, cluster_scoped, _] = binding_resources();
    let api: Api<DynamicObject> = match &binding.namespace {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, &namespaced),
        None => Api::all_with(client.clone(), &cluster_scoped),
    };
    let at = k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let patch = serde_json::json!({"spec": {"rescheduleTriggeredAt": at}});
    api.patch(
        &binding.name,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&patch),
    )
    .await
    .map_err(|err| HubError::Refused(short_error(&err)))?;
    Ok(at)
}
