//! Normalising Kubernetes objects and comparing them: strips what the server owns
//! (managedFields, resourceVersion, uid, generation, creationTimestamp, status, bookkeeping
//! annotations), orders keyed lists by their key so containers, ports, env, volumes and mounts
//! compare by key and not by index, renders key-sorted YAML and a unified diff of two objects,
//! and lists the leaves of an intent whose live value differs (drift). It must not do I/O, read
//! a clock or know about clients: callers hand it JSON values.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::secrets;

/// Metadata fields the API server owns; never part of a comparison.
const SERVER_METADATA: &[&str] = &[
    "managedFields",
    "resourceVersion",
    "uid",
    "generation",
    "creationTimestamp",
    "selfLink",
];

/// Annotations written by tools or controllers, not by the fleet.
const BOOKKEEPING_ANNOTATIONS: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision",
];

/// The key fields of a keyed (`listType=map`) list, by the name of the field holding it.
/// `None` means the field is not a keyed list.
pub fn list_keys(field: &str) -> Option<&'static [&'static str]> {
    match field {
        "containers" | "initContainers" | "ephemeralContainers" | "env" | "volumes" => {
            Some(&["name"])
        }
        "volumeMounts" | "volumeDevices" => Some(&["mountPath"]),
        "ports" => Some(&["containerPort", "port", "protocol"]),
        _ => None,
    }
}

/// The key of one item of a keyed list: the values of its key fields (missing ones as null;
/// a port without a protocol means TCP, as the server defaults it).
fn item_key(field: &str, keys: &[&str], item: &Value) -> Vec<Value> {
    keys.iter()
        .map(|k| match item.get(*k) {
            Some(v) => v.clone(),
            None if field == "ports" && *k == "protocol" => Value::String("TCP".into()),
            None => Value::Null,
        })
        .collect()
}

fn key_text(key: &[Value]) -> String {
    serde_json::to_string(key).unwrap_or_default()
}

/// The object with everything the server owns removed and keyed lists ordered by key, keys of
/// every map sorted. Two objects that mean the same intent normalise to the same value.
pub fn normalize(object: &Value) -> Value {
    let mut out = object.clone();
    secrets::fold_string_data(&mut out);
    if let Some(root) = out.as_object_mut() {
        root.remove("status");
        if let Some(meta) = root.get_mut("metadata").and_then(Value::as_object_mut) {
            for field in SERVER_METADATA {
                meta.remove(*field);
            }
            for map in ["annotations", "labels"] {
                if let Some(entries) = meta.get_mut(map).and_then(Value::as_object_mut) {
                    for annotation in BOOKKEEPING_ANNOTATIONS {
                        entries.remove(*annotation);
                    }
                }
                if meta
                    .get(map)
                    .is_some_and(|v| v.as_object().is_some_and(Map::is_empty) || v.is_null())
                {
                    meta.remove(map);
                }
            }
        }
    }
    canonical(&out, None)
}

/// Sorts map keys and orders keyed lists by key, recursively.
fn canonical(value: &Value, field: Option<&str>) -> Value {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            Value::Object(
                sorted
                    .into_iter()
                    .map(|(k, v)| (k.clone(), canonical(v, Some(k))))
                    .collect(),
            )
        }
        Value::Array(items) => {
            let mut items: Vec<Value> = items.iter().map(|v| canonical(v, None)).collect();
            if let Some(name) = field
                && let Some(keys) = list_keys(name)
                && items.iter().all(Value::is_object)
                && unique_keys(name, &items)
            {
                items.sort_by_cached_key(|item| key_text(&item_key(name, keys, item)));
            }
            Value::Array(items)
        }
        other => other.clone(),
    }
}

/// Key-sorted YAML of a normalised object (the text the diff is computed on).
pub fn to_yaml(object: &Value) -> String {
    serde_saphyr::to_string(object).unwrap_or_else(|_| {
        // JSON is valid YAML: fall back to it rather than lose the object.
        serde_json::to_string_pretty(object).unwrap_or_default()
    })
}

/// A unified diff of `live` → `desired` after normalising both; empty when they are equal.
/// `None` for `live` means the object does not exist yet (every line is added).
/// Secret values are masked (`***`, `*** (changed)`); the diff still shows which keys change.
pub fn unified(live: Option<&Value>, desired: &Value, label: &str) -> String {
    unified_sides(live, desired, label, ("live", "desired"))
}

/// The diff of an object as an edit of the fleet's files changes it: both sides rendered from
/// files, labelled `before/` and `after/` (nothing here was read from a cluster).
pub fn unified_edit(before: Option<&Value>, after: &Value, label: &str) -> String {
    unified_sides(before, after, label, ("before", "after"))
}

fn unified_sides(
    live: Option<&Value>,
    desired: &Value,
    label: &str,
    sides: (&str, &str),
) -> String {
    if live.is_some_and(|l| normalize(l) == normalize(desired)) {
        return String::new();
    }
    let (desired, live) = secrets::mask_pair(desired, live);
    let new = normalize(&desired);
    let old = live.as_ref().map(normalize);
    let old_text = old.as_ref().map(to_yaml).unwrap_or_default();
    let new_text = to_yaml(&new);
    let diff = similar::TextDiff::from_lines(&old_text, &new_text);
    diff.unified_diff()
        .context_radius(3)
        .header(
            &format!("{}/{label}", sides.0),
            &format!("{}/{label}", sides.1),
        )
        .to_string()
}

/// Whether two objects are the same after normalisation.
pub fn same(a: &Value, b: &Value) -> bool {
    normalize(a) == normalize(b)
}

/// The part of `live` that `desired` has an opinion about: the same fields (keyed list items
/// matched by key, other lists whole). Used to diff without a dry-run, where the server's
/// defaults would otherwise show as changes.
pub fn project(live: &Value, desired: &Value) -> Value {
    project_field(live, desired, "")
}

fn project_field(live: &Value, desired: &Value, field: &str) -> Value {
    match (live, desired) {
        (Value::Object(l), Value::Object(d)) => Value::Object(
            d.iter()
                .filter_map(|(k, dv)| l.get(k).map(|lv| (k.clone(), project_field(lv, dv, k))))
                .collect(),
        ),
        (Value::Array(l), Value::Array(d)) if list_keys(field).is_some() => {
            let keys = list_keys(field).unwrap_or(&[]);
            Value::Array(
                l.iter()
                    .filter_map(|li| {
                        let key = item_key(field, keys, li);
                        d.iter()
                            .find(|di| item_key(field, keys, di) == key)
                            .map(|di| project_field(li, di, ""))
                    })
                    .collect(),
            )
        }
        (l, _) => l.clone(),
    }
}

/// One segment of a path through an object: a map key, or a keyed-list item identified by
/// its key (and the index it has in the live list, for the JSON pointer), or a plain index.
#[derive(Debug, Clone, PartialEq)]
pub enum Segment {
    Field(String),
    /// An item of a keyed list: its key fields and values, and its index in the live list.
    Keyed {
        key: Map<String, Value>,
        index: usize,
    },
}

/// A leaf of the intent whose live value differs.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldDrift {
    pub path: Vec<Segment>,
    pub desired: Value,
    /// `None` when the live object lacks the field.
    pub live: Option<Value>,
}

impl FieldDrift {
    /// The path as an RFC 6901 JSON pointer into the live object.
    pub fn pointer(&self) -> String {
        jsonptr::PointerBuf::from_tokens(self.path.iter().map(|segment| match segment {
            Segment::Field(name) => jsonptr::Token::new(name.as_str()),
            Segment::Keyed { index, .. } => jsonptr::Token::new(index.to_string()),
        }))
        .to_string()
    }
}

/// Every leaf of `desired` (flotilla's intent; `status` skipped) whose value at the same path
/// in `live` differs. Keyed lists are matched by key; other lists compare as a whole, as the
/// server treats them as atomic. Fields only `live` has are not drift (other managers may add
/// fields; server-side apply leaves them alone).
pub fn drifted_fields(desired: &Value, live: &Value) -> Vec<FieldDrift> {
    let mut out = Vec::new();
    let mut path = Vec::new();
    // The server never returns `stringData`: compare it as the `data` it becomes.
    let folded;
    let desired = if secrets::is_secret(desired) && desired.get("stringData").is_some() {
        let mut copy = desired.clone();
        secrets::fold_string_data(&mut copy);
        folded = copy;
        &folded
    } else {
        desired
    };
    if let (Some(d), Some(l)) = (desired.as_object(), live.as_object()) {
        for (key, value) in d {
            if key == "status" {
                continue;
            }
            path.push(Segment::Field(key.clone()));
            walk(value, l.get(key), key, &mut path, &mut out);
            path.pop();
        }
    }
    out
}

fn walk(
    desired: &Value,
    live: Option<&Value>,
    field: &str,
    path: &mut Vec<Segment>,
    out: &mut Vec<FieldDrift>,
) {
    match (desired, live) {
        (Value::Object(d), Some(Value::Object(l))) => {
            for (key, value) in d {
                path.push(Segment::Field(key.clone()));
                walk(value, l.get(key), key, path, out);
                path.pop();
            }
        }
        (Value::Array(d), Some(Value::Array(l)))
            if list_keys(field).is_some()
                && d.iter().chain(l).all(Value::is_object)
                && unique_keys(field, d)
                && unique_keys(field, l) =>
        {
            let keys = list_keys(field).unwrap_or(&[]);
            for item in d {
                let key = item_key(field, keys, item);
                let found = l
                    .iter()
                    .enumerate()
                    .find(|(_, candidate)| item_key(field, keys, candidate) == key);
                match found {
                    Some((index, live_item)) => {
                        let key_map = keys
                            .iter()
                            .zip(&key)
                            .filter(|(_, v)| !v.is_null())
                            .map(|(k, v)| ((*k).to_string(), v.clone()))
                            .collect();
                        path.push(Segment::Keyed {
                            key: key_map,
                            index,
                        });
                        walk(item, Some(live_item), "", path, out);
                        path.pop();
                    }
                    None => {
                        // The whole item is missing: report it at the list.
                        out.push(FieldDrift {
                            path: path.clone(),
                            desired: desired.clone(),
                            live: Some(Value::Array(l.clone())),
                        });
                        return;
                    }
                }
            }
        }
        (d, Some(l)) if values_equal(d, l) => {}
        (Value::Object(d), None) if d.is_empty() => {}
        (d, l) => out.push(FieldDrift {
            path: path.clone(),
            desired: d.clone(),
            live: l.cloned(),
        }),
    }
}

/// Whether every item of a keyed list has its own key (else the list compares as a whole).
fn unique_keys(field: &str, items: &[Value]) -> bool {
    let keys = list_keys(field).unwrap_or(&[]);
    let mut seen = std::collections::BTreeSet::new();
    items
        .iter()
        .all(|item| seen.insert(key_text(&item_key(field, keys, item))))
}

/// Equality as the API server would store it: numbers by value, lists by normalised content.
fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => canonical(a, None) == canonical(b, None),
    }
}

/// One `metadata.managedFields` entry, reduced to what drift needs.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagedEntry {
    pub manager: String,
    pub operation: String,
    pub time: Option<String>,
    pub fields: Value,
}

/// The managedFields entries of a live object.
pub fn managed_entries(live: &Value) -> Vec<ManagedEntry> {
    live.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .map(|e| ManagedEntry {
                    manager: e
                        .get("manager")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .into(),
                    operation: e
                        .get("operation")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .into(),
                    time: e.get("time").and_then(Value::as_str).map(str::to_string),
                    fields: e.get("fieldsV1").cloned().unwrap_or(Value::Null),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a FieldsV1 set covers `path`: every segment is present (`f:name`, or `k:{...}` for
/// a keyed item), or an ancestor is owned as a whole (an empty set, as for atomic lists).
pub fn fields_cover(fields: &Value, path: &[Segment]) -> bool {
    let mut node = fields;
    for segment in path {
        let Some(map) = node.as_object() else {
            return false;
        };
        if map.is_empty() {
            // Owned as a whole (atomic).
            return true;
        }
        let next = match segment {
            Segment::Field(name) => map.get(&format!("f:{name}")),
            Segment::Keyed { key, .. } => map.iter().find_map(|(k, v)| {
                let text = k.strip_prefix("k:")?;
                let parsed: Map<String, Value> = serde_json::from_str(text).ok()?;
                keyed_match(&parsed, key).then_some(v)
            }),
        };
        match next {
            Some(child) => node = child,
            None => return false,
        }
    }
    true
}

/// A managedFields key matches an item key when every field both name agrees (numbers by
/// value; a port key may leave out the defaulted protocol).
fn keyed_match(managed: &Map<String, Value>, key: &Map<String, Value>) -> bool {
    managed.iter().all(|(k, v)| match key.get(k) {
        Some(other) => values_equal(v, other),
        None => k == "protocol" && v == "TCP",
    })
}

/// The manager that owns `path` in the live object, preferring another manager over
/// `ourselves` (the one that changed it), and the latest entry among several: its name and
/// the time of its entry.
pub fn owner_of(
    live: &Value,
    path: &[Segment],
    ourselves: &str,
) -> Option<(String, Option<String>)> {
    let entries = managed_entries(live);
    let mut owners: Vec<&ManagedEntry> = entries
        .iter()
        .filter(|e| fields_cover(&e.fields, path))
        .collect();
    owners.sort_by(|a, b| {
        (a.manager == ourselves, std::cmp::Reverse(&a.time))
            .cmp(&(b.manager == ourselves, std::cmp::Reverse(&b.time)))
    });
    owners.first().map(|e| (e.manager.clone(), e.time.clone()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
            "spec": {
                "replicas": 3,
                "template": {"spec": {"containers": [
                    {"name": "web", "image": "nginx:1", "ports": [{"containerPort": 80}],
                     "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                    {"name": "side", "image": "envoy:1"}
                ]}}
            }
        })
    }

    #[test]
    fn server_owned_fields_and_order_do_not_count() {
        let desired = deployment();
        let mut live = deployment();
        live["metadata"]["uid"] = json!("123");
        live["metadata"]["resourceVersion"] = json!("9");
        live["metadata"]["generation"] = json!(2);
        live["metadata"]["managedFields"] = json!([{"manager": "x"}]);
        live["metadata"]["annotations"] = json!({"deployment.kubernetes.io/revision": "1"});
        live["status"] = json!({"replicas": 3});
        // Containers and env in another order.
        let containers = live["spec"]["template"]["spec"]["containers"]
            .as_array_mut()
            .unwrap();
        containers.reverse();
        containers[1]["env"].as_array_mut().unwrap().reverse();
        assert!(same(&desired, &live));
        assert_eq!(unified(Some(&live), &desired, "x"), "");
    }

    #[test]
    fn a_changed_field_shows_in_the_diff() {
        let desired = deployment();
        let mut live = deployment();
        live["spec"]["replicas"] = json!(5);
        let text = unified(Some(&live), &desired, "Deployment/shop/web");
        assert!(text.contains("-  replicas: 5"), "{text}");
        assert!(text.contains("+  replicas: 3"), "{text}");
        let created = unified(None, &desired, "x");
        assert!(created.contains("+kind: Deployment"), "{created}");
    }

    #[test]
    fn drift_names_leaves_by_key_and_ignores_extra_live_fields() {
        let desired = deployment();
        let mut live = deployment();
        live["spec"]["replicas"] = json!(7);
        live["metadata"]["labels"]["extra"] = json!("x");
        let containers = live["spec"]["template"]["spec"]["containers"]
            .as_array_mut()
            .unwrap();
        containers.reverse(); // web is now at index 1
        containers[1]["image"] = json!("nginx:2");
        let drift = drifted_fields(&desired, &live);
        let pointers: Vec<String> = drift.iter().map(FieldDrift::pointer).collect();
        assert_eq!(
            pointers,
            ["/spec/replicas", "/spec/template/spec/containers/1/image"]
        );
        assert_eq!(drift[0].live, Some(json!(7)));
        assert!(drifted_fields(&desired, &deployment()).is_empty());
    }

    #[test]
    fn managed_fields_name_the_owner_of_a_path() {
        let mut live = deployment();
        live["spec"]["replicas"] = json!(7);
        live["metadata"]["managedFields"] = json!([
            {"manager": "flotilla", "operation": "Apply", "time": "2026-01-01T00:00:00Z",
             "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
                 "k:{\"name\":\"web\"}": {".": {}, "f:image": {}}}}}}}},
            {"manager": "kubectl", "operation": "Update", "subresource": "scale",
             "time": "2026-01-02T00:00:00Z", "fieldsV1": {"f:spec": {"f:replicas": {}}}}
        ]);
        let drift = drifted_fields(&deployment(), &live);
        assert_eq!(drift.len(), 1);
        let owner = owner_of(&live, &drift[0].path, "flotilla").unwrap();
        assert_eq!(owner.0, "kubectl");
        assert_eq!(owner.1.as_deref(), Some("2026-01-02T00:00:00Z"));
        let image = vec![
            Segment::Field("spec".into()),
            Segment::Field("template".into()),
            Segment::Field("spec".into()),
            Segment::Field("containers".into()),
            Segment::Keyed {
                key: [("name".to_string(), json!("web"))].into_iter().collect(),
                index: 0,
            },
            Segment::Field("image".into()),
        ];
        assert_eq!(owner_of(&live, &image, "flotilla").unwrap().0, "flotilla");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Arbitrary JSON objects a few levels deep, with keyed lists of containers.
        fn value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                any::<bool>().prop_map(Value::from),
                any::<i32>().prop_map(Value::from),
                "[a-z]{0,6}".prop_map(Value::from),
            ];
            leaf.prop_recursive(3, 24, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                    prop::collection::btree_map("[a-z]{1,5}", inner, 0..4)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        fn containers() -> impl Strategy<Value = Vec<Value>> {
            prop::collection::btree_map("[a-z]{1,4}", "[a-z]{1,4}", 0..5).prop_map(|m| {
                m.into_iter()
                    .map(|(name, image)| json!({"name": name, "image": image}))
                    .collect()
            })
        }

        /// The same object with every map's keys in reverse order.
        fn reversed(value: &Value) -> Value {
            match value {
                Value::Object(map) => {
                    let mut pairs: Vec<(&String, &Value)> = map.iter().collect();
                    pairs.reverse();
                    Value::Object(
                        pairs
                            .into_iter()
                            .map(|(k, v)| (k.clone(), reversed(v)))
                            .collect(),
                    )
                }
                Value::Array(items) => Value::Array(items.iter().map(reversed).collect()),
                other => other.clone(),
            }
        }

        proptest! {
            #[test]
            fn an_object_never_differs_from_itself(spec in value(), list in containers()) {
                let object = json!({"apiVersion": "v1", "kind": "X",
                    "metadata": {"name": "n"}, "spec": spec, "containers": list});
                prop_assert_eq!(unified(Some(&object), &object, "x"), "");
                prop_assert!(drifted_fields(&object, &object).is_empty());
            }

            #[test]
            fn key_order_and_keyed_list_order_do_not_matter(spec in value(), list in containers()) {
                let object = json!({"apiVersion": "v1", "kind": "X",
                    "metadata": {"name": "n"}, "spec": spec, "containers": list.clone()});
                let mut other = reversed(&object);
                let mut shuffled = list;
                shuffled.reverse();
                other["containers"] = Value::Array(shuffled);
                prop_assert!(same(&object, &other));
                prop_assert_eq!(unified(Some(&other), &object, "x"), "");
                prop_assert!(drifted_fields(&object, &other).is_empty());
            }
        }
    }

    #[test]
    fn a_secret_diff_names_the_changed_key_without_its_value() {
        let desired = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
            "stringData": {"password": "hunter2"}, "data": {"user": "YWRtaW4="}});
        let live = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
            "data": {"user": "YWRtaW4=", "password": "b2xk"}});
        let text = unified(Some(&live), &desired, "v1/Secret/db");
        let changed: Vec<&str> = text
            .lines()
            .filter(|l| {
                (l.starts_with('-') || l.starts_with('+'))
                    && !l.starts_with("---")
                    && !l.starts_with("+++")
            })
            .collect();
        assert_eq!(changed.len(), 2, "{text}");
        assert!(
            changed[0].starts_with("-  password: ")
                && changed[0].contains("***")
                && !changed[0].contains("changed"),
            "{text}"
        );
        assert!(
            changed[1].starts_with("+  password: ") && changed[1].contains("*** (changed)"),
            "{text}"
        );
        assert!(
            !text.contains("hunter2")
                && !text.contains("b2xk")
                && !text.contains("aHVudGVyMg")
                && !text.contains("YWRtaW4"),
            "{text}"
        );
    }

    #[test]
    fn string_data_is_compared_as_the_data_the_server_returns() {
        let desired = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
            "stringData": {"password": "hunter2"}});
        let live = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
            "data": {"password": "aHVudGVyMg=="}});
        assert!(drifted_fields(&desired, &live).is_empty());
        assert_eq!(unified(Some(&live), &desired, "s"), "");
    }
}
