//! Writing to an Open Cluster Management hub: an edited Placement, as the JSON patch the
//! editor made (guarded by the resourceVersion the edit started from), sent as field manager
//! `flotilla`. It must not write anything but the Placement it is given.

use kube::Client;
use kube::api::{Api, DynamicObject};
use serde_json::Value;

use super::types::{CLUSTER_GROUP, resource};
use crate::backend::fanout::object::FIELD_MANAGER;
use crate::backend::hub::error::HubError;
use crate::backend::kube::probe::short_error;

/// Writes an edited Placement: the JSON patch of the editor (guarded by the resourceVersion
/// the edit started from) as field manager `flotilla`.
pub async fn write_placement(
    client: &Client,
    namespace: &str,
    name: &str,
    ops: &[Value],
) -> Result<(), HubError> {
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &resource(CLUSTER_GROUP, "v1beta1", "Placement", "placements"),
    );
    let patch: json_patch::Patch = serde_json::from_value(Value::Array(ops.to_vec()))
        .map_err(|err| HubError::Unreadable(format!("the edit is not a JSON patch: {err}")))?;
    let params = kube::api::PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..Default::default()
    };
    let Err(err) = api
        .patch(name, &params, &kube::api::Patch::Json::<()>(patch))
        .await
    else {
        return Ok(());
    };
    // A failed resourceVersion test is a bare 422; tell it apart from a rejected spec.
    let expected = ops
        .iter()
        .find(|op| op["op"] == "test" && op["path"] == "/metadata/resourceVersion")
        .and_then(|op| op["value"].as_str());
    let current = api.get(name).await.ok();
    let moved = current
        .as_ref()
        .and_then(|object| object.metadata.resource_version.as_deref())
        != expected;
    if moved {
        return Err(HubError::Changed(format!(
            "Placement {namespace}/{name} changed on the hub since the editor opened; nothing was written (open the editor again)"
        )));
    }
    Err(HubError::Refused(short_error(&err)))
}
