//! Writing an edited object to a hub, whatever its kind: a policy, a template or a Federated
//! object, compare-and-swap. The object is read back first and must still be what the edit
//! was computed from (its spec, labels and annotations as an author wrote them, or absent for
//! an object the edit creates); the write then carries the resourceVersion it was read at, so
//! a change that lands in between is refused by the API server, never overwritten. It is a
//! server-side apply as field manager `flotilla` (taking over fields others set: the operator
//! confirmed exactly this object), then, when another manager kept fields the edit removed, the
//! spec replaced guarded by the version just written. It must not write anything but the
//! object it is given; a read-only console never reaches it.

use kube::Client;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::Value;

use crate::backend::fanout::object::FIELD_MANAGER;
use crate::backend::hub::objects::as_written;
use crate::backend::kube::probe::short_error;

/// Why an object was not written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// The object on the hub is no longer what the edit was computed from: nothing written.
    #[error("{0}; nothing was written")]
    Changed(String),
    /// The hub refused or did not answer.
    #[error("{0}")]
    Failed(String),
}

/// Whether two objects, as an author wrote them, say the same: spec, labels, annotations.
pub fn same_written(a: &Value, b: &Value) -> bool {
    let (a, b) = (as_written(a), as_written(b));
    a.get("spec") == b.get("spec")
        && a.pointer("/metadata/labels") == b.pointer("/metadata/labels")
        && a.pointer("/metadata/annotations") == b.pointer("/metadata/annotations")
}

fn text(value: &Value, pointer: &str) -> String {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The dynamic API of `object`'s kind, in its namespace when the kind is namespaced.
async fn api_for(client: &Client, object: &Value) -> Result<Api<DynamicObject>, WriteError> {
    let failed = |err: &dyn std::fmt::Display| WriteError::Failed(err.to_string());
    let gvk = kube::api::GroupVersionKind::try_from(&kube::api::TypeMeta {
        api_version: text(object, "/apiVersion"),
        kind: text(object, "/kind"),
    })
    .map_err(|err| failed(&err))?;
    let (resource, capabilities) = kube::discovery::pinned_kind(client, &gvk)
        .await
        .map_err(|err| failed(&short_error(&err)))?;
    Ok(
        match (
            capabilities.scope,
            object
                .pointer("/metadata/namespace")
                .and_then(Value::as_str),
        ) {
            (kube::discovery::Scope::Namespaced, Some(namespace)) => {
                Api::namespaced_with(client.clone(), namespace, &resource)
            }
            _ => Api::all_with(client.clone(), &resource),
        },
    )
}

fn is_conflict(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(response) if response.code == 409)
}

/// Writes `object` to the hub if the hub still holds `base` (`None`: no such object yet).
pub async fn write_object(
    client: &Client,
    object: &Value,
    base: Option<&Value>,
) -> Result<(), WriteError> {
    let api = api_for(client, object).await?;
    let name = text(object, "/metadata/name");
    let what = format!(
        "{} {}",
        text(object, "/kind"),
        match text(object, "/metadata/namespace").as_str() {
            "" => name.clone(),
            namespace => format!("{namespace}/{name}"),
        }
    );
    let current = api
        .get_opt(&name)
        .await
        .map_err(|err| WriteError::Failed(short_error(&err)))?
        .map(|stored| serde_json::to_value(stored).unwrap_or(Value::Null));
    let raced = || {
        WriteError::Changed(format!(
            "{what} changed on the hub while it was being written"
        ))
    };
    let stored = match (base, current) {
        (None, Some(_)) => {
            return Err(WriteError::Changed(format!(
                "{what} was created on the hub by someone else since the edit was prepared"
            )));
        }
        (Some(_), None) => {
            return Err(WriteError::Changed(format!(
                "{what} was deleted from the hub since the edit was prepared"
            )));
        }
        (Some(base), Some(current)) if !same_written(base, &current) => {
            return Err(WriteError::Changed(format!(
                "{what} changed on the hub since the edit was prepared ({})",
                changed_parts(base, &current)
            )));
        }
        (None, None) => {
            let new: DynamicObject = serde_json::from_value(as_written(object))
                .map_err(|err| WriteError::Failed(err.to_string()))?;
            let params = PostParams {
                field_manager: Some(FIELD_MANAGER.to_string()),
                ..Default::default()
            };
            match api.create(&params, &new).await {
                Ok(stored) => stored,
                Err(err) if is_conflict(&err) => {
                    return Err(WriteError::Changed(format!(
                        "{what} was created on the hub by someone else while it was being written"
                    )));
                }
                Err(err) => return Err(WriteError::Failed(short_error(&err))),
            }
        }
        (Some(_), Some(current)) => {
            let mut applied = as_written(object);
            if let Some(meta) = applied.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert(
                    "resourceVersion".into(),
                    Value::String(text(&current, "/metadata/resourceVersion")),
                );
            }
            let params = PatchParams::apply(FIELD_MANAGER).force();
            match api.patch(&name, &params, &Patch::Apply(&applied)).await {
                Ok(stored) => stored,
                Err(err) if is_conflict(&err) => return Err(raced()),
                Err(err) => return Err(WriteError::Failed(short_error(&err))),
            }
        }
    };
    let stored = serde_json::to_value(stored).unwrap_or(Value::Null);
    drop_what_others_kept(&api, &name, object, &stored).await
}

/// Which of spec, labels and annotations differ, for the refusal.
fn changed_parts(base: &Value, current: &Value) -> String {
    let (a, b) = (as_written(base), as_written(current));
    let parts: Vec<&str> = [
        ("spec", "/spec"),
        ("labels", "/metadata/labels"),
        ("annotations", "/metadata/annotations"),
    ]
    .into_iter()
    .filter(|(_, pointer)| a.pointer(pointer) != b.pointer(pointer))
    .map(|(name, _)| name)
    .collect();
    format!("its {} differ", parts.join(" and "))
}

/// Server-side apply drops a field the edit removed only when no other manager owns it; a
/// policy created with `kubectl apply` keeps such fields owned by kubectl. When the stored
/// spec still differs from the edited one, the spec is replaced (a JSON patch guarded by the
/// resourceVersion flotilla's own write left) so the hub holds exactly what was previewed.
async fn drop_what_others_kept(
    api: &Api<DynamicObject>,
    name: &str,
    edited: &Value,
    stored: &Value,
) -> Result<(), WriteError> {
    if stored.get("spec") == edited.get("spec") {
        return Ok(());
    }
    let patch: json_patch::Patch = serde_json::from_value(serde_json::json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": text(stored, "/metadata/resourceVersion")},
        {"op": "replace", "path": "/spec", "value": edited.get("spec").cloned().unwrap_or(Value::Null)},
    ]))
    .map_err(|err| WriteError::Failed(err.to_string()))?;
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..Default::default()
    };
    api.patch(name, &params, &Patch::Json::<()>(patch))
        .await
        .map(|_| ())
        .map_err(|err| {
            WriteError::Failed(format!(
                "applied, but fields another manager keeps could not be removed ({}); the hub may differ from the preview",
                short_error(&err)
            ))
        })
}
