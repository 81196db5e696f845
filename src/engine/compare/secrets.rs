//! Secret values, wherever a person reads them: masked as `***` (a value that differs between
//! the two sides of a comparison as `*** (changed)`, as `kubectl diff` marks it), and
//! `stringData` folded into `data` (base64) before anything is compared, because the API
//! server stores only `data` and never returns `stringData`. It must not mask anything but
//! the values of a core/v1 Secret's `data` and `stringData`, wherever they stand: in the
//! Secret itself and in the copy `kubectl apply` keeps in its last-applied annotation.

use base64::Engine as _;
use serde_json::{Map, Value};

/// What a Secret value is shown as.
pub const MASK: &str = "***";
/// What a Secret value that differs from the other side is shown as.
pub const MASK_CHANGED: &str = "*** (changed)";

/// Whether `object` is a core/v1 Secret.
pub fn is_secret(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("Secret")
        && object.get("apiVersion").and_then(Value::as_str) == Some("v1")
}

/// Moves a Secret's `stringData` into `data` (base64), as the API server does on write;
/// `stringData` wins over `data` for the same key, as upstream. Other objects are untouched.
pub fn fold_string_data(object: &mut Value) {
    if !is_secret(object) {
        return;
    }
    let Some(root) = object.as_object_mut() else {
        return;
    };
    let Some(Value::Object(string_data)) = root.remove("stringData") else {
        return;
    };
    let data = root
        .entry("data")
        .or_insert_with(|| Value::Object(Map::new()));
    if !data.is_object() {
        *data = Value::Object(Map::new());
    }
    if let Some(data) = data.as_object_mut() {
        for (key, value) in string_data {
            let text = match value {
                Value::String(s) => s,
                other => other.to_string(),
            };
            let encoded = base64::engine::general_purpose::STANDARD.encode(text);
            data.insert(key, Value::String(encoded));
        }
    }
}

/// `object` with every Secret value masked (objects of other kinds as they are).
pub fn mask(object: &Value) -> Value {
    let mut out = object.clone();
    if is_secret(&out) {
        fold_string_data(&mut out);
        for_each_value(&mut out, |_, value| *value = Value::String(MASK.into()));
        mask_last_applied(&mut out);
    }
    out
}

/// The annotation `kubectl apply` writes: the whole object it applied, as JSON text.
const LAST_APPLIED: &str =
    "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration";

/// A Secret's last-applied annotation with the values its copy holds masked (keys kept), or
/// the whole text masked where it does not read as a Secret. A hub that propagates a Secret
/// applied with kubectl copies the annotation to every member.
fn mask_last_applied(object: &mut Value) {
    let Some(text) = object.pointer_mut(LAST_APPLIED) else {
        return;
    };
    let applied = text
        .as_str()
        .and_then(|text| serde_json::from_str::<Value>(text).ok());
    let masked = match applied {
        Some(mut applied) if is_secret(&applied) => {
            for_each_value(&mut applied, |_, value| *value = Value::String(MASK.into()));
            applied.to_string()
        }
        _ => MASK.to_string(),
    };
    *text = Value::String(masked);
}

/// Both sides of a comparison with Secret values masked: on the desired side a key whose value
/// differs from the live one (or that the live object lacks) shows as `*** (changed)`, every
/// other value as `***`, so a diff still says which keys change without saying what they hold.
pub fn mask_pair(desired: &Value, live: Option<&Value>) -> (Value, Option<Value>) {
    if !is_secret(desired) && !live.is_some_and(is_secret) {
        return (desired.clone(), live.cloned());
    }
    let mut desired = desired.clone();
    let mut live = live.cloned();
    fold_string_data(&mut desired);
    if let Some(live) = live.as_mut() {
        fold_string_data(live);
    }
    let data_of = |object: &Value| object.get("data").and_then(Value::as_object).cloned();
    let live_data = live.as_ref().map(|l| data_of(l).unwrap_or_default());
    let marker = |key: &str, value: &Value, other: Option<&Map<String, Value>>| -> Value {
        let changed = other.is_some_and(|o| o.get(key) != Some(value));
        Value::String(if changed { MASK_CHANGED } else { MASK }.into())
    };
    for_each_value(&mut desired, |key, value| {
        *value = marker(key, value, live_data.as_ref())
    });
    if let Some(live) = live.as_mut() {
        for_each_value(live, |_, value| *value = Value::String(MASK.into()));
        mask_last_applied(live);
    }
    if is_secret(&desired) {
        mask_last_applied(&mut desired);
    }
    (desired, live)
}

/// Whether a JSON pointer into a Secret points at (or into) one of its values, or at the
/// whole `data` / `stringData` map that holds them.
pub fn is_secret_value(object: &Value, pointer: &str) -> bool {
    is_secret(object) && is_value_pointer(pointer)
}

/// Whether a JSON pointer into a Secret reaches its values: `/data`, `/stringData` or below.
pub fn is_value_pointer(pointer: &str) -> bool {
    ["/data", "/stringData"].iter().any(|field| {
        pointer
            .strip_prefix(field)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// Whether the resource `api_version`/`kind` names is a core/v1 Secret.
pub fn is_secret_kind(api_version: &str, kind: &str) -> bool {
    api_version == "v1" && kind == "Secret"
}

/// A drifted Secret value's two sides as a person may read them: the desired one (which by
/// definition differs from live) as `*** (changed)`, the live one as `***`. An absent side
/// (`null`) stays `null`, which says only that it is absent.
pub fn mask_field(desired: &Value, live: &Value) -> (Value, Value) {
    let masked = |value: &Value, text: &str| match value {
        Value::Null => Value::Null,
        _ => Value::String(text.into()),
    };
    (masked(desired, MASK_CHANGED), masked(live, MASK))
}

fn for_each_value(object: &mut Value, mut f: impl FnMut(&str, &mut Value)) {
    for field in ["data", "stringData"] {
        if let Some(map) = object.get_mut(field).and_then(Value::as_object_mut) {
            for (key, value) in map.iter_mut() {
                f(key, value);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn secret(data: Value, string_data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
               "data": data, "stringData": string_data})
    }

    #[test]
    fn string_data_becomes_base64_data_and_wins_over_data() {
        let mut s = secret(json!({"a": "eA==", "b": "eQ=="}), json!({"b": "hello"}));
        fold_string_data(&mut s);
        assert_eq!(s["data"], json!({"a": "eA==", "b": "aGVsbG8="}));
        assert!(s.get("stringData").is_none());
    }

    #[test]
    fn masked_values_say_only_whether_they_changed() {
        let desired = secret(
            json!({"same": "eA==", "new": "eQ=="}),
            json!({"pw": "hunter2"}),
        );
        let live = secret(
            json!({"same": "eA==", "new": "eg==", "pw": "aHVudGVyMg=="}),
            json!({}),
        );
        let (d, l) = mask_pair(&desired, Some(&live));
        let l = l.unwrap();
        assert_eq!(
            d["data"],
            json!({"same": MASK, "new": MASK_CHANGED, "pw": MASK})
        );
        assert_eq!(l["data"], json!({"same": MASK, "new": MASK, "pw": MASK}));
        let text = format!("{d}{l}");
        assert!(
            !text.contains("hunter2") && !text.contains("eQ==") && !text.contains("aHVudGVyMg==")
        );
    }

    #[test]
    fn the_copy_kubectl_apply_keeps_in_an_annotation_is_masked_too() {
        let applied = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "annotations": {}},
            "stringData": {"password": "not-a-real-password"}});
        let mut live = secret(
            json!({"password": "bm90LWEtcmVhbC1wYXNzd29yZA=="}),
            json!(null),
        );
        live["metadata"]["annotations"] = json!({
            "kubectl.kubernetes.io/last-applied-configuration": format!("{applied}\n"),
            "team": "payments",
        });
        for shown in [mask(&live), mask_pair(&live, Some(&live)).1.unwrap()] {
            let text = shown.to_string();
            assert!(!text.contains("not-a-real-password"), "{text}");
            assert!(!text.contains("bm90LWEtcmVhbC1wYXNzd29yZA"), "{text}");
            let kept: Value = serde_json::from_str(
                shown["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
                    .as_str()
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(
                kept["stringData"],
                json!({"password": MASK}),
                "the key still shows"
            );
            assert_eq!(shown["metadata"]["annotations"]["team"], "payments");
        }
        // Text that does not read as a Secret is masked whole.
        live["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] =
            json!("{not json: not-a-real-password");
        assert_eq!(
            mask(&live)["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"],
            MASK
        );
    }

    #[test]
    fn other_kinds_are_never_masked() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}});
        assert_eq!(mask(&cm), cm);
        assert_eq!(mask_pair(&cm, None).0, cm);
        assert!(!is_secret_value(&cm, "/data/a"));
        let s = secret(json!({"a": "eA=="}), json!(null));
        assert_eq!(mask(&s)["data"]["a"], MASK);
        assert!(is_secret_value(&s, "/data/a"));
        assert!(is_secret_value(&s, "/data") && is_secret_value(&s, "/stringData/b"));
        assert!(!is_secret_value(&s, "/dataset") && !is_secret_value(&s, "/metadata/name"));
    }

    #[test]
    fn a_drifted_value_says_only_that_it_changed() {
        assert_eq!(
            mask_field(&json!("aHVudGVyMg=="), &json!("eA==")),
            (json!(MASK_CHANGED), json!(MASK))
        );
        assert_eq!(
            mask_field(&json!({"pw": "eA=="}), &Value::Null),
            (json!(MASK_CHANGED), Value::Null)
        );
    }
}
