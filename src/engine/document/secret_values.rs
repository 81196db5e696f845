//! Where Secret values stand in a document, and those values masked: the one notion every
//! printer uses (file and object diffs, previews, lists, JSON, errors, explanations). The
//! places are the `data` and `stringData` of a core/v1 Secret; the same maps in a KubeFed
//! `FederatedSecret`'s `spec.template`; the value of an override aimed at them (a KubeFed
//! override of a `FederatedSecret`, a Karmada plaintext, field or annotations overrider of a
//! policy that may select Secrets), or at an ancestor that holds them; the copy `kubectl apply`
//! keeps in its last-applied annotation of any object that holds such values; and the Secrets
//! a `List`, a Karmada Work or an OCM ManifestWork carries. A masked value is `***` (`***
//! (changed)` where it differs from the other side of a comparison); keys stay readable, so a
//! diff still says which keys change. It must not mask anything else.

use serde_json::Value;

/// What a Secret value is shown as.
pub const MASK: &str = "***";
/// What a Secret value that differs from the other side is shown as.
pub const MASK_CHANGED: &str = "*** (changed)";

/// Whether `object` is a core/v1 Secret.
pub fn is_secret(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("Secret")
        && object.get("apiVersion").and_then(Value::as_str) == Some("v1")
}

/// What a place that holds Secret values holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// Values, or a map (or list) of them: every scalar is masked, keys are kept.
    Values,
    /// `kubectl apply`'s copy of a whole object, as JSON text: masked as that object is, or
    /// whole where it does not read as one.
    Applied,
}

/// The annotation `kubectl apply` writes: the whole object it applied, as JSON text.
pub const LAST_APPLIED: &str =
    "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration";

/// Where a Secret keeps its values, relative to the Secret.
const SECRET_FIELDS: [(&str, Held); 3] = [
    ("/data", Held::Values),
    ("/stringData", Held::Values),
    (LAST_APPLIED, Held::Applied),
];

/// Whether `pointer` is `field` or below it.
fn under(pointer: &str, field: &str) -> bool {
    pointer
        .strip_prefix(field)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The places that hold Secret values in a value written at `path` of a Secret (an override's
/// value; `""` for the whole Secret), the value standing at `base` of the document: the whole
/// value when `path` is at or below one of the Secret's values, the parts of it that hold them
/// when `path` is above.
pub fn places_in_secret(base: &str, path: &str) -> Vec<(String, Held)> {
    let mut out = Vec::new();
    for (field, held) in SECRET_FIELDS {
        if under(path, field) {
            out.push((base.to_string(), held));
        } else if path.is_empty() || field.starts_with(&format!("{path}/")) {
            out.push((format!("{base}{}", &field[path.len()..]), held));
        }
    }
    out
}

/// Whether an object of `api_version`/`kind` is a KubeFed federated Secret.
fn is_federated_secret(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("FederatedSecret")
        && object
            .get("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|v| v.starts_with("types.kubefed.io/"))
}

/// Whether `object` is a Karmada override policy that may apply to a Secret: one that selects
/// Secrets, or every resource (no selectors).
fn is_secret_override_policy(object: &Value) -> bool {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    if !api_version.starts_with("policy.karmada.io/")
        || !matches!(kind, "OverridePolicy" | "ClusterOverridePolicy")
    {
        return false;
    }
    match object
        .pointer("/spec/resourceSelectors")
        .and_then(Value::as_array)
    {
        None => true,
        Some(selectors) if selectors.is_empty() => true,
        Some(selectors) => selectors.iter().any(|selector| {
            selector.get("kind").and_then(Value::as_str) == Some("Secret")
                && selector
                    .get("apiVersion")
                    .and_then(Value::as_str)
                    .is_none_or(|v| v == "v1")
        }),
    }
}

fn list_at<'a>(object: &'a Value, pointer: &str) -> impl Iterator<Item = (usize, &'a Value)> {
    object
        .pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
}

/// The places of a Karmada overriders map at `base` (`…/overriders`) that hold Secret values.
fn overrider_places(object: &Value, base: &str, out: &mut Vec<(String, Held)>) {
    for (j, entry) in list_at(object, &format!("{base}/plaintext")) {
        let path = entry.get("path").and_then(Value::as_str).unwrap_or("");
        out.extend(places_in_secret(
            &format!("{base}/plaintext/{j}/value"),
            path,
        ));
    }
    for (j, _) in list_at(object, &format!("{base}/annotationsOverrider")) {
        out.extend(places_in_secret(
            &format!("{base}/annotationsOverrider/{j}/value"),
            "/metadata/annotations",
        ));
    }
    for (j, entry) in list_at(object, &format!("{base}/fieldOverrider")) {
        let path = entry.get("fieldPath").and_then(Value::as_str).unwrap_or("");
        if !places_in_secret("", path).is_empty() {
            for format in ["json", "yaml"] {
                let ops = format!("{base}/fieldOverrider/{j}/{format}");
                for (k, _) in list_at(object, &ops) {
                    out.push((format!("{ops}/{k}/value"), Held::Values));
                }
            }
        }
    }
}

/// Where `object` holds Secret values, as JSON pointers into it (see the module's header for
/// which places those are). Empty for an object that holds none.
pub fn secret_places(object: &Value) -> Vec<(String, Held)> {
    let mut out = Vec::new();
    if is_secret(object) {
        out.extend(places_in_secret("", ""));
        return out;
    }
    if is_federated_secret(object) {
        out.extend(places_in_secret("/spec/template", ""));
        for (i, _) in list_at(object, "/spec/overrides") {
            let ops = format!("/spec/overrides/{i}/clusterOverrides");
            for (j, op) in list_at(object, &ops) {
                let path = op.get("path").and_then(Value::as_str).unwrap_or("");
                out.extend(places_in_secret(&format!("{ops}/{j}/value"), path));
            }
        }
    }
    if is_secret_override_policy(object) {
        for (i, _) in list_at(object, "/spec/overrideRules") {
            overrider_places(
                object,
                &format!("/spec/overrideRules/{i}/overriders"),
                &mut out,
            );
        }
        overrider_places(object, "/spec/overriders", &mut out);
    }
    // Objects carried whole: the items of a List, the manifests of a Work or ManifestWork.
    for list in ["/items", "/spec/workload/manifests"] {
        for (i, item) in list_at(object, list) {
            let base = format!("{list}/{i}");
            out.extend(
                secret_places(item)
                    .into_iter()
                    .map(|(pointer, held)| (format!("{base}{pointer}"), held)),
            );
        }
    }
    // What `kubectl apply` kept of an object holding Secret values holds them too.
    if let Some(applied) = object.pointer(LAST_APPLIED) {
        // Only a text that names one of the kinds holding Secret values (or escapes a
        // character) is parsed: live objects of every kind carry this annotation.
        let may_hold = |text: &&str| {
            [
                "Secret",
                "OverridePolicy",
                "\"items\"",
                "\"manifests\"",
                "\\u",
            ]
            .iter()
            .any(|word| text.contains(word))
        };
        let holds = !out.is_empty()
            || applied
                .as_str()
                .filter(may_hold)
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
                .is_some_and(|applied| holds_secrets(&applied));
        if holds && !out.iter().any(|(pointer, _)| pointer == LAST_APPLIED) {
            out.push((LAST_APPLIED.to_string(), Held::Applied));
        }
    }
    out
}

/// Whether a YAML document's text may hold Secret values, so a reader that only masks them
/// can skip parsing the rest: it names a kind that holds them, carries whole objects, or
/// escapes a character (which could spell any of those).
pub fn text_may_hold_secrets(text: &str) -> bool {
    [
        "Secret",
        "OverridePolicy",
        "items",
        "manifests",
        "last-applied-configuration",
        "\\",
    ]
    .iter()
    .any(|word| text.contains(word))
}

/// Whether `object` holds Secret values anywhere.
pub fn holds_secrets(object: &Value) -> bool {
    !secret_places(object).is_empty()
}

/// Whether a JSON pointer into `object` reaches Secret values: it points at (or into) a place
/// that holds them, or at an ancestor of one (the whole `data` map, the whole object).
pub fn is_secret_value(object: &Value, pointer: &str) -> bool {
    secret_places(object)
        .iter()
        .any(|(place, _)| under(pointer, place) || under(place, pointer))
}

/// Whether a JSON pointer into a Secret reaches its values: `/data`, `/stringData` or below.
pub fn is_value_pointer(pointer: &str) -> bool {
    ["/data", "/stringData"]
        .iter()
        .any(|field| under(pointer, field))
}

/// Whether the resource `api_version`/`kind` names is a core/v1 Secret.
pub fn is_secret_kind(api_version: &str, kind: &str) -> bool {
    api_version == "v1" && kind == "Secret"
}

/// A document with every Secret value masked, as written (nothing folded).
pub fn mask_document(object: &Value) -> Value {
    let mut out = object.clone();
    mask_places(&mut out, None);
    out
}

/// A document with every Secret value masked, a value that differs from the one at the same
/// place of `other` (or that `other` lacks) as `*** (changed)`.
pub fn mask_document_against(object: &Value, other: Option<&Value>) -> Value {
    let mut out = object.clone();
    mask_places(&mut out, other);
    out
}

/// An override's value written at `path` of a Secret, masked where it holds Secret values.
pub fn mask_written(path: &str, value: &Value) -> Value {
    let mut out = value.clone();
    for (pointer, held) in places_in_secret("", path) {
        if let Some(place) = out.pointer_mut(&pointer) {
            mask_held(place, held, None);
        }
    }
    out
}

/// Masks every place of `object` (`other`, when given, marks the values that differ).
fn mask_places(object: &mut Value, other: Option<&Value>) {
    for (pointer, held) in secret_places(object) {
        let against = other.map(|o| o.pointer(&pointer));
        if let Some(place) = object.pointer_mut(&pointer) {
            mask_held(place, held, against);
        }
    }
}

/// Masks one place. `against`: `Some(the other side's value at the same place)` when changes
/// are marked.
fn mask_held(place: &mut Value, held: Held, against: Option<Option<&Value>>) {
    match held {
        Held::Values => mask_scalars(place, against),
        Held::Applied => {
            let Value::String(text) = place else {
                mask_scalars(place, None);
                return;
            };
            let applied = serde_json::from_str::<Value>(text)
                .ok()
                .filter(holds_secrets);
            *text = match applied {
                Some(applied) => mask_document(&applied).to_string(),
                None => MASK.to_string(),
            };
        }
    }
}

/// Every scalar below `value` as `***` (or `*** (changed)` where it differs from `against`);
/// maps keep their keys, lists their length, `null` stays `null`.
fn mask_scalars(value: &mut Value, against: Option<Option<&Value>>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                let other = against.map(|a| a.and_then(|a| a.get(key)));
                mask_scalars(child, other);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter_mut().enumerate() {
                let other = against.map(|a| a.and_then(|a| a.get(i)));
                mask_scalars(child, other);
            }
        }
        Value::Null => {}
        scalar => {
            let changed = against.is_some_and(|other| other != Some(&*scalar));
            *scalar = Value::String(if changed { MASK_CHANGED } else { MASK }.into());
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_federated_secret_masks_its_template_its_overrides_and_its_applied_copy() {
        let mut fed = json!({
            "apiVersion": "types.kubefed.io/v1beta1", "kind": "FederatedSecret",
            "metadata": {"name": "db", "namespace": "shop"},
            "spec": {
                "template": {"data": {"token": "dG9rZW4tdmFsdWU="}, "stringData": {"pw": "hunter2"}},
                "placement": {"clusters": [{"name": "k1"}]},
                "overrides": [{"clusterName": "k1", "clusterOverrides": [
                    {"path": "/stringData/pw", "value": "k1-only-pw"},
                    {"op": "add", "path": "/data", "value": {"extra": "ZXh0cmE="}},
                    {"path": "/metadata/labels/tier", "value": "gold"}
                ]}]
            }
        });
        let copy = mask_document(&fed).to_string();
        fed["metadata"]["annotations"] = json!({
            "kubectl.kubernetes.io/last-applied-configuration": copy.replace("***", "hunter2"),
        });
        let masked = mask_document(&fed);
        let text = masked.to_string();
        for value in ["dG9rZW4tdmFsdWU=", "hunter2", "k1-only-pw", "ZXh0cmE="] {
            assert!(!text.contains(value), "{value}: {text}");
        }
        assert_eq!(
            masked["spec"]["template"]["stringData"],
            json!({"pw": MASK})
        );
        let ops = &masked["spec"]["overrides"][0]["clusterOverrides"];
        assert_eq!(
            ops[1]["value"],
            json!({"extra": MASK}),
            "the keys still show"
        );
        assert_eq!(ops[2]["value"], "gold", "a label is not a Secret value");
        assert_eq!(masked["spec"]["placement"], fed["spec"]["placement"]);
    }

    #[test]
    fn an_override_policy_masks_only_what_it_writes_into_a_secret() {
        let policy = |kind: &str| {
            json!({
                "apiVersion": "policy.karmada.io/v1alpha1", "kind": "OverridePolicy",
                "metadata": {"name": "p", "namespace": "shop"},
                "spec": {
                    "resourceSelectors": [{"apiVersion": "v1", "kind": kind, "name": "db"}],
                    "overrideRules": [{"overriders": {
                        "plaintext": [
                            {"path": "/stringData/pw", "operator": "replace", "value": "hunter2"},
                            {"path": "", "operator": "replace",
                             "value": {"kind": "Secret", "data": {"k": "c2VjcmV0"}}},
                            {"path": "/metadata/labels/x", "operator": "add", "value": "y"}
                        ],
                        "annotationsOverrider": [{"operator": "add", "value": {
                            "kubectl.kubernetes.io/last-applied-configuration": "{\"stringData\":{\"pw\":\"hunter2\"}}",
                            "team": "payments"}}]
                    }}]
                }
            })
        };
        let masked = mask_document(&policy("Secret"));
        let text = masked.to_string();
        assert!(
            !text.contains("hunter2") && !text.contains("c2VjcmV0"),
            "{text}"
        );
        let rule = &masked["spec"]["overrideRules"][0]["overriders"];
        assert_eq!(rule["plaintext"][0]["value"], MASK);
        assert_eq!(rule["plaintext"][1]["value"]["data"], json!({"k": MASK}));
        assert_eq!(rule["plaintext"][2]["value"], "y");
        assert_eq!(rule["annotationsOverrider"][0]["value"]["team"], "payments");
        assert!(is_secret_value(
            &policy("Secret"),
            "/spec/overrideRules/0/overriders/plaintext/0/value"
        ));
        // A policy that selects ConfigMaps only writes nothing into a Secret.
        assert_eq!(mask_document(&policy("ConfigMap")), policy("ConfigMap"));
        assert_eq!(mask_written("/data/k", &json!("c2VjcmV0")), json!(MASK));
        assert_eq!(mask_written("/metadata/labels/k", &json!("v")), json!("v"));
    }

    #[test]
    fn secrets_carried_in_lists_and_manifest_works_and_their_applied_copies_are_masked() {
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                            "stringData": {"pw": "hunter2"}});
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                            "data": {"plain": "visible"}});
        let list = json!({"apiVersion": "v1", "kind": "List", "items": [config, secret]});
        let work = json!({"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
                          "metadata": {"name": "w"}, "spec": {"workload": {"manifests": [secret]}}});
        for (carrier, place) in [
            (&list, "/items/1/stringData/pw"),
            (&work, "/spec/workload/manifests/0/stringData/pw"),
        ] {
            let masked = mask_document(carrier);
            assert_eq!(masked.pointer(place), Some(&json!(MASK)), "{masked}");
            assert!(!masked.to_string().contains("hunter2"));
        }
        assert_eq!(
            mask_document(&list)["items"][0],
            config,
            "the ConfigMap is no Secret"
        );
        // An object that holds no Secret value keeps its applied copy, unless that copy holds one.
        let mut annotated = config.clone();
        annotated["metadata"]["annotations"] =
            json!({"kubectl.kubernetes.io/last-applied-configuration": config.to_string()});
        assert_eq!(mask_document(&annotated), annotated);
        annotated["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] =
            json!(list.to_string());
        assert!(!mask_document(&annotated).to_string().contains("hunter2"));
        assert!(!holds_secrets(&config) && holds_secrets(&annotated));
    }
}
