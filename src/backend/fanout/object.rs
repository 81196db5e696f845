//! What fan-out knows of an object by itself: its identity, read from its own apiVersion, kind
//! and metadata, and the field manager flotilla applies with. The low end of the backend:
//! plan, apply and drift, the cluster APIs and the hub writers all use it, so it must not
//! import any of them.

use serde_json::Value;

use crate::model::ResourceRef;

/// The field manager flotilla applies with.
pub const FIELD_MANAGER: &str = "flotilla";

/// Identity of an object from its own apiVersion/kind/metadata.
pub fn resource_of(object: &Value) -> ResourceRef {
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    ResourceRef {
        api_version: text("/apiVersion"),
        kind: text("/kind"),
        namespace: object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(str::to_string),
        name: text("/metadata/name"),
    }
}
