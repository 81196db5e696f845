//! Setting one entry of an object's `metadata.labels` or `metadata.annotations`, creating
//! (or replacing a non-map) `metadata` and the map on the way, as the API server's own
//! defaulting would leave them. It must not read or remove anything.

use serde_json::{Map, Value};

/// Sets `metadata.<map>.<key> = value` on `object` (a JSON object; anything else is left as
/// it is).
pub fn set_entry(object: &mut Value, map: &str, key: &str, value: &str) {
    let Some(root) = object.as_object_mut() else {
        return;
    };
    let meta = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    let slot = meta.entry(map).or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    if let Some(entries) = slot.as_object_mut() {
        entries.insert(key.to_string(), Value::String(value.to_string()));
    }
}
