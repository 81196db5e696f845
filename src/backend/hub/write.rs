//! Writing an edited object to a hub, whatever its kind: a policy, a template or a Federated
//! object, by server-side apply as field manager `flotilla`, taking over the fields others set
//! (the operator confirmed it), then making sure the hub holds exactly what was previewed. It
//! must not write anything but the object it is given; a read-only console never reaches it.

use kube::Client;
use serde_json::Value;

use crate::backend::fanout::cluster_api::{ApplyMode, ClusterApi};
use crate::backend::fanout::object::FIELD_MANAGER;
use crate::backend::kube::api::KubeCluster;
use crate::backend::kube::probe::short_error;

/// Writes `object` to the hub: server-side apply with force, then (when another manager kept
/// fields the edit removed) the spec replaced as the edit has it.
pub async fn write_object(client: &Client, object: &Value) -> Result<(), String> {
    let api = KubeCluster::new(client.clone(), false);
    let mode = ApplyMode {
        dry_run: false,
        force: true,
    };
    match api.apply(object, mode).await {
        Ok(stored) => drop_what_others_kept(client, object, &stored).await,
        Err(err) => Err(err.to_string()),
    }
}

/// Server-side apply drops a field the edit removed only when no other manager owns it; a
/// policy created with `kubectl apply` keeps such fields owned by kubectl. When the stored
/// spec still differs from the edited one, the spec is replaced (a JSON patch guarded by the
/// stored resourceVersion, as flotilla) so the hub holds exactly what was previewed.
async fn drop_what_others_kept(
    client: &Client,
    edited: &Value,
    stored: &Value,
) -> Result<(), String> {
    if stored.get("spec") == edited.get("spec") {
        return Ok(());
    }
    let text = |v: &Value, p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let gvk = kube::api::GroupVersionKind::try_from(&kube::api::TypeMeta {
        api_version: text(edited, "/apiVersion"),
        kind: text(edited, "/kind"),
    })
    .map_err(|err| err.to_string())?;
    let (resource, capabilities) = kube::discovery::pinned_kind(client, &gvk)
        .await
        .map_err(|err| err.to_string())?;
    let name = text(edited, "/metadata/name");
    let api: kube::Api<kube::api::DynamicObject> = match (
        capabilities.scope,
        edited
            .pointer("/metadata/namespace")
            .and_then(Value::as_str),
    ) {
        (kube::discovery::Scope::Namespaced, Some(namespace)) => {
            kube::Api::namespaced_with(client.clone(), namespace, &resource)
        }
        _ => kube::Api::all_with(client.clone(), &resource),
    };
    let patch: json_patch::Patch = serde_json::from_value(serde_json::json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": text(stored, "/metadata/resourceVersion")},
        {"op": "replace", "path": "/spec", "value": edited.get("spec").cloned().unwrap_or(Value::Null)},
    ]))
    .map_err(|err| err.to_string())?;
    let params = kube::api::PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..Default::default()
    };
    api.patch(&name, &params, &kube::api::Patch::Json::<()>(patch))
        .await
        .map(|_| ())
        .map_err(|err| {
            format!(
                "applied, but fields another manager keeps could not be removed ({}); the hub may differ from the preview",
                short_error(&err)
            )
        })
}
