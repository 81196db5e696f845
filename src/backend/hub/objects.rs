//! Hub objects as JSON, shared by every reader and writer: reading fields and conditions,
//! listing a kind on the hub, flotilla's and the hubs' own marks, the form a rendered object is
//! compared in, and the form a stored object reads back as written (for the hub's fleet
//! files). It must not decide what a hub means by its objects: each kind's reader does.

use std::time::Duration;

use kube::Client;
use serde_json::Value;

use super::error::HubError;
use crate::backend::fanout::cluster_api::{ApiError, Guard, Limits};
use crate::backend::kube::api::map_error;

/// An object the hub rendered, without the labels and annotations the hub and flotilla add
/// for themselves, so it compares with the engine's render of the same intent.
pub fn delivered_form(object: &Value) -> Value {
    let mut out = object.clone();
    drop_marks(&mut out, |key, value| {
        key.contains("karmada.io") || is_flotilla_mark(key, value)
    });
    crate::engine::compare::diff::normalize(&out)
}

/// The string at `pointer` in `value`, empty when there is none.
pub(super) fn text(value: &Value, pointer: &str) -> String {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The `status.conditions` entry of type `kind`.
pub(super) fn condition<'a>(value: &'a Value, kind: &str) -> Option<&'a Value> {
    value
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|conditions| conditions.iter().find(|c| c["type"] == kind))
}

/// `Reason: message`, or whichever of the two there is.
pub(super) fn reason_message(condition: &Value) -> String {
    let reason = text(condition, "/reason");
    let message = text(condition, "/message");
    match (reason.is_empty(), message.is_empty()) {
        (true, true) => String::new(),
        (false, true) => reason,
        (true, false) => message,
        (false, false) => format!("{reason}: {message}"),
    }
}

/// Every object of `resource` on the hub, in all namespaces, as JSON.
pub(super) async fn list_values(
    client: &Client,
    resource: &kube::discovery::ApiResource,
) -> Result<Vec<Value>, HubError> {
    list_objects(client, resource).await.map_err(|err| {
        let message = format!("listing {} on the hub: {err}", resource.kind);
        match err {
            ApiError::NotServed(_) | ApiError::NotFound(_) => HubError::MissingKind(message),
            _ => HubError::Unreachable(message),
        }
    })
}

/// How long a hub read keeps retrying: a large list takes seconds, and a hub whose storage is
/// still initialising answers 429 until it is done.
fn hub_read_limits() -> Limits {
    Limits {
        request_timeout: Duration::from_secs(60),
        retry_budget: Duration::from_secs(60),
        ..Limits::default()
    }
}

/// [`list_values`], with the error kept typed (a kind the hub does not serve is `NotFound`).
/// Answers the API server asks to have retried (429 with its `Retry-After`, 503, other 5xx)
/// are retried through the same guard member requests use.
pub(super) async fn list_objects(
    client: &Client,
    resource: &kube::discovery::ApiResource,
) -> Result<Vec<Value>, ApiError> {
    let api: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(client.clone(), resource);
    let list = Guard::new(hub_read_limits())
        .call(|| async {
            api.list(&kube::api::ListParams::default())
                .await
                .map_err(map_error)
        })
        .await?;
    Ok(list
        .items
        .into_iter()
        .filter_map(|object| serde_json::to_value(object).ok())
        .collect())
}

/// Whether a label or annotation is one of flotilla's ownership marks.
pub fn is_flotilla_mark(key: &str, value: &Value) -> bool {
    key.starts_with("flotilla.dev/")
        || (key == crate::engine::MANAGED_BY_LABEL && value == crate::engine::MANAGED_BY_VALUE)
}

/// Removes the labels and annotations `drop` picks from `object`'s metadata (and a map left
/// empty): the hubs' and flotilla's own marks, which no fleet file writes.
pub fn drop_marks(object: &mut Value, drop: impl Fn(&str, &Value) -> bool) {
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    for map in ["labels", "annotations"] {
        if let Some(entries) = meta.get_mut(map).and_then(Value::as_object_mut) {
            entries.retain(|key, value| !drop(key, value));
            if entries.is_empty() {
                meta.remove(map);
            }
        }
    }
}

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
    drop_marks(&mut out, |key, _| {
        key.contains("karmada.io") || key == "kubectl.kubernetes.io/last-applied-configuration"
    });
    out
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
}
