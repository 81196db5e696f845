//! What fan-out knows of an object by itself: its identity, read from its own apiVersion, kind
//! and metadata, and the field manager flotilla applies with. The low end of the backend:
//! plan, apply and drift, the cluster APIs and the hub writers all use it, so it must not
//! import any of them.

use serde_json::Value;

use crate::engine::edit::placement::label_selector_of;
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

/// Whether an object is selected by a label selector and a field selector as the API server
/// reads them: labels in kubectl's whole `-l` syntax (`in (…)`, `notin (…)`, `!key` too),
/// fields as comma-separated `key=value`, `key==value` and `key!=value` terms (a field's key is
/// its dotted path, e.g. `involvedObject.name`); an empty selector selects everything. For the in-memory and simulated clusters; a real server does its own.
pub fn selected_by(object: &Value, labels: &str, fields: &str) -> bool {
    // A selector the server would refuse selects nothing here.
    let labels_hold = match label_selector_of(labels) {
        Ok(None) => true,
        Ok(Some(selector)) => selector.matches_map(
            object
                .pointer("/metadata/labels")
                .and_then(Value::as_object),
        ),
        Err(_) => false,
    };
    let field = |key: &str| {
        let pointer = format!("/{}", key.replace('.', "/"));
        object.pointer(&pointer).map(|value| match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
    };
    labels_hold && terms_hold(fields, field)
}

fn terms_hold(selector: &str, value_of: impl Fn(&str) -> Option<String>) -> bool {
    selector
        .split(',')
        .map(str::trim)
        .filter(|term| !term.is_empty())
        .all(|term| {
            if let Some((key, wanted)) = term.split_once("!=") {
                value_of(key.trim()).as_deref() != Some(wanted.trim())
            } else if let Some((key, wanted)) =
                term.split_once("==").or_else(|| term.split_once('='))
            {
                value_of(key.trim()).as_deref() == Some(wanted.trim())
            } else {
                value_of(term).is_some()
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_selectors_select_as_the_server_does() {
        let event = serde_json::json!({
            "metadata": {"labels": {"app": "web"}},
            "involvedObject": {"kind": "Pod", "name": "web-1"},
        });
        assert!(selected_by(&event, "", ""));
        assert!(selected_by(&event, "app=web", "involvedObject.kind=Pod"));
        assert!(selected_by(
            &event,
            "app==web",
            "involvedObject.name!=web-2"
        ));
        assert!(!selected_by(&event, "app=api", ""));
        assert!(!selected_by(&event, "", "involvedObject.kind=Deployment"));
        assert!(selected_by(&event, "app in (api, web)", ""));
        assert!(selected_by(&event, "app notin (api),!tier", ""));
        assert!(!selected_by(&event, "app in (api)", ""));
        assert!(!selected_by(&event, "tier", ""));
        assert!(
            !selected_by(&event, "app in api", ""),
            "refused by the server"
        );
    }
}
