//! Editing per-cluster overrides in memory, in either dialect: which documents vary a resource
//! (Karmada: every OverridePolicy/ClusterOverridePolicy selecting it, in application order,
//! plus flotilla's own policy — created when missing; KubeFed: the Federated object's
//! `spec.overrides`), the rules each holds, adding, replacing, moving and deleting one rule,
//! JSON-pointer completion and value checks against the rendered object, and what an edit
//! changes on every cluster, grouped across clusters. Pure: it takes file texts and values and
//! never writes a file.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::engine::compare::{diff, secrets};
use crate::engine::dialect::karmada::OverridePolicy;
use crate::engine::document::parse::{Doc, document_spans, escape_token, parse_files};
use crate::engine::document::source::{FleetError, SourceFile};
use crate::engine::edit::EditError;
use crate::engine::edit::adopt::{new_policy, owned_policy};
use crate::engine::edit::placement::{DiffGroup, parse_selector, selector_text};
use crate::engine::edit::yaml_text;
use crate::engine::fleet::decide::{Decision, Fleet};
use crate::engine::fleet::reload::load_edit;
use crate::engine::overrides::overriders::{ImageComponent, ImageOverrider, override_image};
use crate::engine::overrides::patch::OpKind;
use crate::engine::render::SecretValues;
use crate::model::{ClusterSpec, Dialect, ResourceRef};

/// One document that holds override rules for the resource being edited.
#[derive(Debug, Clone, PartialEq)]
pub struct OverrideDoc {
    pub file: String,
    /// Index of the document in its file; for a document not written yet, the file's
    /// document count (saving appends it).
    pub document: usize,
    /// Line of the document's first field, for messages (0 for a new document).
    pub line: usize,
    /// The document as written (or as it will be created).
    pub object: Value,
    /// e.g. `OverridePolicy shop/regional-registry` or `FederatedDeployment payments/ledger`.
    pub title: String,
    pub dialect: Dialect,
    /// The document does not exist yet: flotilla creates it when the first rule is saved.
    pub created: bool,
    /// Where new rules go (flotilla's own policy; the Federated object in KubeFed).
    pub owned: bool,
}

/// Where an override rule applies.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Clusters(Vec<String>),
    /// A Karmada label selector (kubectl `-l` syntax, parsed).
    Selector(Value),
}

/// One change an override makes, as the editor's forms write it.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// JSON patch (Karmada `plaintext`; KubeFed `clusterOverrides`).
    Patch {
        op: OpKind,
        path: String,
        value: Option<Value>,
    },
    /// An image component (Karmada `imageOverrider`; in KubeFed a replace of the container's
    /// image with the component changed, computed from the rendered object).
    Image {
        component: ImageComponent,
        value: String,
        /// The container image path (KubeFed; Karmada uses the built-in workload paths).
        path: String,
    },
    /// Add (or replace) one label (Karmada `labelsOverrider`; KubeFed a JSON patch add).
    Label { key: String, value: String },
    /// Add (or replace) one annotation, the same way.
    Annotation { key: String, value: String },
}

/// One rule of a document as the editor lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleView {
    /// Index in the document: `overrideRules[i]` (Karmada), or the i-th operation over all
    /// `spec.overrides[].clusterOverrides[]` in order (KubeFed).
    pub index: usize,
    /// `clusterNames [a, b]`, `labels env=prod`, `cluster a`, `every cluster`.
    pub target: String,
    /// One line per overrider / operation, long values cut, Secret values masked.
    pub items: Vec<String>,
    /// The same lines with no value cut (Secret values still masked), for JSON.
    pub full: Vec<String>,
    /// The rule writes Secret values (masked in `items` and `full` unless asked to show them).
    pub secret: bool,
    /// Inventory clusters it targets (in fleet order).
    pub clusters: Vec<String>,
    /// The form for editing it, when the editor can show it as one (`None`: multi-item rules
    /// and overriders without a form can be moved and deleted, not edited).
    pub form: Option<(Target, Item)>,
}

impl OverrideDoc {
    /// The rules the document holds now, the values they write into a Secret masked.
    pub fn rules(&self, object: &Value, clusters: &[ClusterSpec]) -> Vec<RuleView> {
        self.rules_with(object, clusters, SecretValues::Masked)
    }

    /// The rules the document holds now, Secret values as `values` says.
    pub fn rules_with(
        &self,
        object: &Value,
        clusters: &[ClusterSpec],
        values: SecretValues,
    ) -> Vec<RuleView> {
        let masked = secrets::mask_document(object);
        let shown = match values {
            SecretValues::Masked => &masked,
            SecretValues::Shown => object,
        };
        match self.dialect {
            Dialect::Karmada => karmada_rules(object, (&masked, shown), clusters),
            Dialect::KubeFed => kubefed_ops(object)
                .into_iter()
                .zip(kubefed_ops(&masked).into_iter().zip(kubefed_ops(shown)))
                .enumerate()
                .map(
                    |(index, ((cluster, op), ((_, masked), (_, shown))))| RuleView {
                        index,
                        target: format!("cluster {cluster}"),
                        items: vec![op_text(&shown, true)],
                        full: vec![op_text(&shown, false)],
                        secret: masked != op,
                        clusters: clusters
                            .iter()
                            .filter(|c| c.name == cluster)
                            .map(|c| c.name.clone())
                            .collect(),
                        form: patch_form(&op, "op")
                            .map(|item| (Target::Clusters(vec![cluster]), item)),
                    },
                )
                .collect(),
        }
    }
}

fn op_text(op: &Value, cut: bool) -> String {
    let kind = op
        .get("op")
        .or_else(|| op.get("operator"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("replace");
    let path = op.get("path").and_then(Value::as_str).unwrap_or("?");
    match op.get("value") {
        Some(value) if kind != "remove" => format!("{kind} {path} = {}", value_text(value, cut)),
        _ => format!("{kind} {path}"),
    }
}

/// A value as JSON, cut to about 60 characters when `cut`.
fn value_text(value: &Value, cut: bool) -> String {
    if cut {
        compact(value)
    } else {
        value.to_string()
    }
}

fn compact(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

fn op_kind(text: &str) -> Option<OpKind> {
    match text {
        "add" => Some(OpKind::Add),
        "remove" => Some(OpKind::Remove),
        "replace" | "" => Some(OpKind::Replace),
        _ => None,
    }
}

fn patch_form(op: &Value, op_key: &str) -> Option<Item> {
    let kind = op_kind(op.get(op_key).and_then(Value::as_str).unwrap_or(""))?;
    Some(Item::Patch {
        op: kind,
        path: op.get("path")?.as_str()?.to_string(),
        value: op.get("value").cloned(),
    })
}

/// Every KubeFed override operation in order, with its cluster.
fn kubefed_ops(object: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for entry in object
        .pointer("/spec/overrides")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let cluster = entry
            .get("clusterName")
            .and_then(Value::as_str)
            .unwrap_or_default();
        for op in entry
            .get("clusterOverrides")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.push((cluster.to_string(), op.clone()));
        }
    }
    out
}

/// Writes `ops` back as `spec.overrides`, one entry per cluster in first-seen order.
fn set_kubefed_ops(object: &mut Value, ops: Vec<(String, Value)>) -> Result<(), EditError> {
    let mut entries: Vec<(String, Vec<Value>)> = Vec::new();
    for (cluster, op) in ops {
        match entries.iter_mut().find(|(c, _)| *c == cluster) {
            Some((_, list)) => list.push(op),
            None => entries.push((cluster, vec![op])),
        }
    }
    let spec = object
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| EditError::unsupported("the Federated object has no spec"))?;
    if entries.is_empty() {
        spec.remove("overrides");
        return Ok(());
    }
    let list = entries
        .into_iter()
        .map(|(cluster, ops)| json!({"clusterName": cluster, "clusterOverrides": ops}))
        .collect();
    spec.insert("overrides".into(), Value::Array(list));
    Ok(())
}

/// Parses a policy value the way the loader does, for its rules' targets.
fn parse_policy(object: &Value, clusters: &[ClusterSpec]) -> Option<OverridePolicy> {
    let text = yaml_text::to_block_yaml(object).ok()?;
    let (docs, _) = parse_files(&[SourceFile {
        path: "(edited)".into(),
        text,
    }]);
    OverridePolicy::parse(docs.first()?, clusters).ok()
}

/// `masked` is `object` with its Secret values masked, `shown` as its values may be shown.
fn karmada_rules(
    object: &Value,
    (masked, shown): (&Value, &Value),
    clusters: &[ClusterSpec],
) -> Vec<RuleView> {
    let parsed = parse_policy(object, clusters);
    let rules_of = |object: &Value| {
        object
            .pointer("/spec/overrideRules")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let rules = rules_of(object);
    let masked_rules = rules_of(masked);
    let shown_rules = rules_of(shown);
    rules
        .iter()
        .enumerate()
        .map(|(index, rule)| {
            let shown = shown_rules.get(index).unwrap_or(rule);
            let parsed = parsed.as_ref().and_then(|p| p.rules.get(index));
            let target = match parsed.and_then(|r| r.target.as_ref()) {
                Some(affinity) => affinity.summary(),
                None => "every cluster".into(),
            };
            let targeted = parsed
                .map(|r| {
                    clusters
                        .iter()
                        .zip(&r.clusters)
                        .filter(|(_, on)| **on)
                        .map(|(c, _)| c.name.clone())
                        .collect()
                })
                .unwrap_or_default();
            let mut items = Vec::new();
            let mut full = Vec::new();
            let mut forms = Vec::new();
            if let Some(overriders) = rule.get("overriders").and_then(Value::as_object) {
                for (kind, list) in overriders {
                    for entry in list.as_array().into_iter().flatten() {
                        forms.push(karmada_form(kind, entry));
                    }
                }
            }
            if let Some(overriders) = shown.get("overriders").and_then(Value::as_object) {
                for (kind, list) in overriders {
                    for entry in list.as_array().into_iter().flatten() {
                        items.push(format!("{kind}: {}", value_text(entry, true)));
                        full.push(format!("{kind}: {}", value_text(entry, false)));
                    }
                }
            }
            let form = match (forms.as_slice(), karmada_target(rule)) {
                ([Some(item)], Some(target)) => Some((target, item.clone())),
                _ => None,
            };
            RuleView {
                index,
                target,
                items,
                full,
                secret: masked_rules.get(index).is_some_and(|masked| masked != rule),
                clusters: targeted,
                form,
            }
        })
        .collect()
}

fn karmada_target(rule: &Value) -> Option<Target> {
    let target = rule.get("targetCluster")?.as_object()?;
    let keys: Vec<&str> = target.keys().map(String::as_str).collect();
    match keys.as_slice() {
        ["clusterNames"] => Some(Target::Clusters(
            target
                .get("clusterNames")?
                .as_array()?
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
        )),
        ["labelSelector"] => Some(Target::Selector(target.get("labelSelector")?.clone())),
        _ => None,
    }
}

fn karmada_form(kind: &str, entry: &Value) -> Option<Item> {
    match kind {
        "plaintext" => patch_form(entry, "operator"),
        "imageOverrider" => {
            if entry.get("operator").and_then(Value::as_str) != Some("replace") {
                return None;
            }
            let component = match entry.get("component")?.as_str()? {
                "Registry" => ImageComponent::Registry,
                "Repository" => ImageComponent::Repository,
                "Tag" => ImageComponent::Tag,
                _ => return None,
            };
            Some(Item::Image {
                component,
                value: entry.get("value")?.as_str()?.to_string(),
                path: entry
                    .pointer("/predicate/path")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            })
        }
        "labelsOverrider" | "annotationsOverrider" => {
            let map = entry.get("value")?.as_object()?;
            if map.len() != 1 || entry.get("operator").and_then(Value::as_str) != Some("add") {
                return None;
            }
            let (key, value) = map.iter().next()?;
            let (key, value) = (key.clone(), value.as_str()?.to_string());
            Some(if kind == "labelsOverrider" {
                Item::Label { key, value }
            } else {
                Item::Annotation { key, value }
            })
        }
        _ => None,
    }
}

/// Parses a target as typed: comma-separated cluster names, or (Karmada only) a label
/// selector in kubectl's `-l` syntax.
pub fn parse_target(
    text: &str,
    dialect: Dialect,
    clusters: &[ClusterSpec],
) -> Result<Target, EditError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(EditError::input(
            "name the clusters (a, b) or a label selector (env=prod)",
        ));
    }
    let is_selector = text.contains('=')
        || text.contains('!')
        || text.contains(" in ")
        || text.contains(" notin ");
    if is_selector {
        if dialect == Dialect::KubeFed {
            return Err(EditError::input(
                "KubeFed overrides name clusters one by one; list the cluster names",
            ));
        }
        return parse_selector(text)?
            .map(Target::Selector)
            .ok_or_else(|| EditError::input("the selector is empty"));
    }
    let names: Vec<String> = text
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    if let Some(unknown) = names
        .iter()
        .find(|n| !clusters.iter().any(|c| &c.name == *n))
    {
        let known: Vec<&str> = clusters.iter().map(|c| c.name.as_str()).collect();
        let near = crate::engine::dialect::api_groups::closest(unknown, &known)
            .map(|near| format!("; did you mean {near}?"))
            .unwrap_or_default();
        return Err(EditError::input(format!(
            "no cluster named `{unknown}` in the inventory{near}"
        )));
    }
    Ok(Target::Clusters(names))
}

/// A label (`label`) or an annotation as the editor's form takes it, `key=value`: the key of
/// letters, digits, `-`, `_`, `.` and `/`; a label's value at most 63 of letters, digits, `-`,
/// `_`, `.`. An error says what is wrong.
pub fn key_value_item(text: &str, label: bool) -> Result<Item, EditError> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| EditError::input("write key=value"))?;
    let (key, value) = (key.trim().to_string(), value.trim().to_string());
    let key_ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    if !key_ok {
        return Err(EditError::input(format!(
            "`{key}` is not a key (letters, digits, -, _, ., /)"
        )));
    }
    if label
        && (value.len() > 63
            || !value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)))
    {
        return Err(EditError::input(format!(
            "`{value}` is not a label value (at most 63 letters, digits, -, _, .)"
        )));
    }
    Ok(if label {
        Item::Label { key, value }
    } else {
        Item::Annotation { key, value }
    })
}

/// A target as the editor shows it in its input.
pub fn target_text(target: &Target) -> String {
    match target {
        Target::Clusters(names) => names.join(","),
        Target::Selector(selector) => selector_text(selector),
    }
}

/// Checks a JSON patch against the rendered object and parses its value (YAML or JSON): the
/// path must exist for replace and remove (its parent for add), and a value replacing an
/// existing one must have the same type. Returns the parsed value.
pub fn check_patch(
    rendered: &Value,
    op: OpKind,
    path: &str,
    value_text: &str,
) -> Result<Option<Value>, EditError> {
    if !path.starts_with('/') {
        return Err(EditError::input(format!(
            "`{path}` is not a JSON pointer (it starts with `/`)"
        )));
    }
    if [
        "/metadata/name",
        "/metadata/namespace",
        "/metadata/generateName",
        "/kind",
    ]
    .contains(&path)
    {
        return Err(EditError::input(format!("{path} cannot be overridden")));
    }
    let mut escapes = path.split('~').skip(1);
    if escapes.any(|after| !after.starts_with(['0', '1'])) {
        return Err(EditError::input(format!(
            "{path} is not a JSON pointer: write `~` inside a key as ~0 and `/` as ~1"
        )));
    }
    let existing = rendered.pointer(path);
    let (parent, last) = path.rsplit_once('/').unwrap_or(("", path));
    let parent_node = if parent.is_empty() {
        Some(rendered)
    } else {
        rendered.pointer(parent)
    };
    match op {
        OpKind::Replace | OpKind::Remove if existing.is_none() => {
            return Err(EditError::input(format!(
                "{path} does not exist in the rendered object ({} needs it; use add to create it)",
                op.as_str()
            )));
        }
        OpKind::Add => match parent_node {
            None => {
                return Err(EditError::input(format!(
                    "{parent} does not exist in the rendered object"
                )));
            }
            Some(Value::Array(items)) => {
                // RFC 6901 list indices: `0`, or digits without a leading zero or sign.
                let index = (last == "0"
                    || (!last.starts_with('0') && last.bytes().all(|b| b.is_ascii_digit())))
                .then(|| last.parse::<usize>().ok())
                .flatten();
                if last != "-" && index.is_none_or(|i| i > items.len()) {
                    return Err(EditError::input(format!(
                        "{parent} is a list of {}: add at an index up to that, or `-` to append",
                        items.len()
                    )));
                }
            }
            Some(Value::Object(_)) => {}
            Some(_) => {
                return Err(EditError::input(format!(
                    "{parent} is a scalar; nothing can be added in it"
                )));
            }
        },
        _ => {}
    }
    if op == OpKind::Remove {
        return Ok(None);
    }
    if value_text.trim().is_empty() {
        return Err(EditError::input("type a value (YAML or JSON)"));
    }
    // A Secret's values are never quoted back, neither the one there nor the one typed.
    let secret = secrets::is_secret_value(rendered, path);
    let value: Value = serde_saphyr::from_str(value_text).map_err(|err| {
        EditError::input(if secret {
            "the value is not YAML/JSON (it is a Secret's value, so it is not quoted here)"
                .to_string()
        } else {
            format!(
                "the value is not YAML/JSON: {}",
                first_line(&err.to_string())
            )
        })
    })?;
    if let Some(existing) = existing
        && type_name(existing) != type_name(&value)
        && !existing.is_null()
    {
        let held = if secret {
            String::new()
        } else {
            format!(" ({})", compact(existing))
        };
        return Err(EditError::input(format!(
            "{path} holds {}{held}; the value is {}",
            type_name(existing),
            type_name(&value)
        )));
    }
    Ok(Some(value))
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// JSON pointers in `rendered` that complete `prefix`: the members (or indices) of the node
/// the prefix's last `/` points into whose name starts with what follows it.
pub fn complete_path(rendered: &Value, prefix: &str) -> Vec<String> {
    let (parent, partial) = match prefix.rsplit_once('/') {
        Some(split) => split,
        None => ("", prefix),
    };
    let node = if parent.is_empty() {
        Some(rendered)
    } else {
        rendered.pointer(parent)
    };
    match node {
        Some(Value::Object(map)) => map
            .keys()
            .map(|k| escape_token(k))
            .filter(|k| k.starts_with(partial))
            .map(|k| format!("{parent}/{k}"))
            .collect(),
        Some(Value::Array(items)) => (0..items.len())
            .map(|i| i.to_string())
            .filter(|i| i.starts_with(partial))
            .map(|i| format!("{parent}/{i}"))
            .collect(),
        _ => Vec::new(),
    }
}

/// The container image paths of a rendered workload, first container first.
pub fn image_paths(rendered: &Value) -> Vec<String> {
    [
        "/spec/template/spec",
        "/spec/jobTemplate/spec/template/spec",
        "/spec",
    ]
    .iter()
    .filter_map(|prefix| {
        let containers = rendered
            .pointer(&format!("{prefix}/containers"))?
            .as_array()?;
        Some(
            (0..containers.len())
                .map(|i| format!("{prefix}/containers/{i}/image"))
                .collect::<Vec<_>>(),
        )
    })
    .next()
    .unwrap_or_default()
}

/// One item in a dialect's words: Karmada `(overrider kind, entry)`; KubeFed an operation.
fn karmada_entry(item: &Item) -> (&'static str, Value) {
    match item {
        Item::Patch { op, path, value } => (
            "plaintext",
            match value {
                Some(value) if *op != OpKind::Remove => {
                    json!({"path": path, "operator": op.as_str(), "value": value})
                }
                _ => json!({"path": path, "operator": op.as_str()}),
            },
        ),
        Item::Image {
            component, value, ..
        } => (
            "imageOverrider",
            json!({"component": component_name(*component), "operator": "replace", "value": value}),
        ),
        Item::Label { key, value } => (
            "labelsOverrider",
            json!({"operator": "add", "value": {key.clone(): value}}),
        ),
        Item::Annotation { key, value } => (
            "annotationsOverrider",
            json!({"operator": "add", "value": {key.clone(): value}}),
        ),
    }
}

pub fn component_name(component: ImageComponent) -> &'static str {
    match component {
        ImageComponent::Registry => "Registry",
        ImageComponent::Repository => "Repository",
        ImageComponent::Tag => "Tag",
    }
}

/// The KubeFed operation for an item on a cluster whose rendered object is `rendered`.
/// KubeFed applies overrides to the Federated object's `template` before it adds its own
/// labels and annotations, so whether a label or annotation map exists is the template's
/// question (`template`, when the object has one), not the rendered object's.
fn kubefed_op(item: &Item, rendered: &Value, template: Option<&Value>) -> Result<Value, EditError> {
    Ok(match item {
        Item::Patch { op, path, value } => match value {
            Some(value) if *op != OpKind::Remove => {
                json!({"op": op.as_str(), "path": path, "value": value})
            }
            _ => json!({"op": op.as_str(), "path": path}),
        },
        Item::Image {
            component,
            value,
            path,
        } => {
            let current = rendered
                .pointer(path)
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    EditError::input(format!("{path} is not an image in the rendered object"))
                })?;
            let image = override_image(
                current,
                &ImageOverrider {
                    component: *component,
                    operator: OpKind::Replace,
                    value: value.clone(),
                    predicate: None,
                },
            );
            json!({"op": "replace", "path": path, "value": image})
        }
        Item::Label { key, value } | Item::Annotation { key, value } => {
            let map = if matches!(item, Item::Label { .. }) {
                "/metadata/labels"
            } else {
                "/metadata/annotations"
            };
            if template
                .unwrap_or(rendered)
                .pointer(map)
                .is_some_and(Value::is_object)
            {
                json!({"op": "add", "path": format!("{map}/{}", escape_token(key)), "value": value})
            } else {
                json!({"op": "add", "path": map, "value": {key.clone(): value}})
            }
        }
    })
}

/// What one edit does to a document's rules.
#[derive(Debug, Clone, PartialEq)]
pub enum RuleEdit {
    /// A new rule at the end.
    Add(Target, Item),
    /// Rule `index` becomes this.
    Replace(usize, Target, Item),
    Delete(usize),
    /// Rule `index` swaps with the one before (`up`) or after it.
    Move(usize, bool),
}

/// The document with one edit made. `rendered` is the selected cell's object, for KubeFed
/// operations computed from it (image, labels).
pub fn apply_edit(
    doc: &OverrideDoc,
    object: &Value,
    edit: &RuleEdit,
    rendered: &Value,
) -> Result<Value, EditError> {
    let mut object = object.clone();
    match doc.dialect {
        Dialect::Karmada => {
            if object
                .pointer("/spec/overriders")
                .is_some_and(|v| !(v.is_null() || v.as_object().is_some_and(|o| o.is_empty())))
            {
                return Err(EditError::unsupported(format!(
                    "{} uses the deprecated targetCluster/overriders form; edit it in its file",
                    doc.title
                )));
            }
            let spec = object
                .get_mut("spec")
                .and_then(Value::as_object_mut)
                .ok_or_else(|| EditError::unsupported("the policy has no spec"))?;
            let rules = spec
                .entry("overrideRules")
                .or_insert_with(|| Value::Array(Vec::new()));
            if rules.is_null() {
                *rules = Value::Array(Vec::new());
            }
            let rules = rules
                .as_array_mut()
                .ok_or_else(|| EditError::unsupported("spec.overrideRules is not a list"))?;
            let rule = |target: &Target, item: &Item| {
                let target = match target {
                    Target::Clusters(names) => json!({"clusterNames": names}),
                    Target::Selector(selector) => json!({"labelSelector": selector}),
                };
                let (kind, entry) = karmada_entry(item);
                let mut overriders = Map::new();
                overriders.insert(kind.into(), json!([entry]));
                json!({"targetCluster": target, "overriders": overriders})
            };
            match edit {
                RuleEdit::Add(target, item) => rules.push(rule(target, item)),
                RuleEdit::Replace(index, target, item) => {
                    *rules
                        .get_mut(*index)
                        .ok_or_else(|| EditError::missing("no such rule"))? = rule(target, item)
                }
                RuleEdit::Delete(index) => {
                    if *index >= rules.len() {
                        return Err(EditError::missing("no such rule"));
                    }
                    rules.remove(*index);
                }
                RuleEdit::Move(index, up) => swap(rules, *index, *up)?,
            }
        }
        Dialect::KubeFed => {
            let mut ops = kubefed_ops(&object);
            let template = object.pointer("/spec/template").cloned();
            let make = |target: &Target, item: &Item| -> Result<Vec<(String, Value)>, EditError> {
                let Target::Clusters(names) = target else {
                    return Err(EditError::unsupported(
                        "KubeFed overrides name clusters one by one",
                    ));
                };
                let op = kubefed_op(item, rendered, template.as_ref())?;
                Ok(names.iter().map(|n| (n.clone(), op.clone())).collect())
            };
            match edit {
                RuleEdit::Add(target, item) => ops.extend(make(target, item)?),
                RuleEdit::Replace(index, target, item) => {
                    if *index >= ops.len() {
                        return Err(EditError::missing("no such rule"));
                    }
                    let new = make(target, item)?;
                    ops.splice(*index..=*index, new);
                }
                RuleEdit::Delete(index) => {
                    if *index >= ops.len() {
                        return Err(EditError::missing("no such rule"));
                    }
                    ops.remove(*index);
                }
                RuleEdit::Move(index, up) => {
                    // Order matters only among one cluster's operations: move past the
                    // nearest operation of the same cluster.
                    let cluster = ops
                        .get(*index)
                        .map(|(c, _)| c.clone())
                        .ok_or_else(|| EditError::missing("no such rule"))?;
                    let other = if *up {
                        ops[..*index].iter().rposition(|(c, _)| *c == cluster)
                    } else {
                        ops[*index + 1..]
                            .iter()
                            .position(|(c, _)| *c == cluster)
                            .map(|at| at + index + 1)
                    };
                    let other = other.ok_or_else(|| {
                        EditError::no_op("it is already at that end of its cluster's list")
                    })?;
                    ops.swap(*index, other);
                }
            }
            // A cluster named twice, or the same path twice for one cluster, breaks the object.
            let mut seen = BTreeMap::new();
            for (cluster, op) in &ops {
                let path = op.get("path").and_then(Value::as_str).unwrap_or_default();
                if seen
                    .insert((cluster.clone(), path.to_string()), ())
                    .is_some()
                {
                    return Err(EditError::input(format!(
                        "cluster {cluster} already has an override of {path}; edit that one"
                    )));
                }
            }
            set_kubefed_ops(&mut object, ops)?;
        }
    }
    Ok(object)
}

fn swap(list: &mut [Value], index: usize, up: bool) -> Result<(), EditError> {
    let other = if up {
        index.checked_sub(1)
    } else {
        Some(index + 1).filter(|i| *i < list.len())
    };
    match other {
        Some(other) if index < list.len() => {
            list.swap(index, other);
            Ok(())
        }
        _ => Err(EditError::no_op("it is already at that end of the list")),
    }
}

/// The documents whose rules vary `resource`: Karmada policies selecting it in application
/// order (cluster-wide first, then by precision and name), then flotilla's own policy —
/// described as created when it does not exist yet; KubeFed the Federated object.
pub fn override_docs(
    fleet: &Fleet,
    files: &[SourceFile],
    resource: usize,
) -> Result<Vec<OverrideDoc>, EditError> {
    let federated = fleet
        .resources
        .get(resource)
        .ok_or_else(|| EditError::missing("no such resource"))?;
    let (docs, _) = parse_files(files);
    let source = docs
        .iter()
        .find(|d| d.file == federated.source.file && d.line == federated.source.line)
        .ok_or_else(|| {
            EditError::missing(format!(
                "{}: the resource's document is gone",
                federated.source
            ))
        })?;
    let to_doc = |doc: &Doc, title: String, owned: bool| OverrideDoc {
        file: doc.file.clone(),
        document: doc.index,
        line: doc.line,
        object: Value::clone(&doc.value),
        title,
        dialect: federated.dialect,
        created: false,
        owned,
    };
    if federated.dialect == Dialect::KubeFed {
        let title = format!("{} {}", source.kind(), name_of(&federated.target));
        return Ok(vec![to_doc(source, title, true)]);
    }
    let target = &federated.target;
    let labels = source
        .value
        .pointer("/metadata/labels")
        .and_then(Value::as_object);
    let mut found: Vec<(OverridePolicy, &Doc)> = docs
        .iter()
        .filter(|d| {
            d.group() == "policy.karmada.io"
                && matches!(d.kind(), "OverridePolicy" | "ClusterOverridePolicy")
        })
        .filter_map(|d| {
            OverridePolicy::parse(d, &fleet.clusters)
                .ok()
                .map(|p| (p, d))
        })
        .filter(|(p, _)| p.matches(target, labels).is_some())
        .collect();
    found.sort_by(|(x, _), (y, _)| {
        (x.namespace.is_some())
            .cmp(&y.namespace.is_some())
            .then(x.matches(target, labels).cmp(&y.matches(target, labels)))
            .then(x.name.cmp(&y.name))
    });
    let owned = owned_policy(&docs, target);
    let mut out: Vec<OverrideDoc> = found
        .iter()
        .map(|(p, d)| {
            let is_owned = owned.is_some_and(|o| o.file == d.file && o.index == d.index);
            to_doc(d, p.display_name(), is_owned)
        })
        .collect();
    if owned.is_none() {
        let object = new_policy(&docs, target, Vec::new());
        let text = files
            .iter()
            .find(|f| f.path == federated.source.file)
            .map(|f| f.text.as_str())
            .unwrap_or_default();
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let title = match &target.namespace {
            Some(ns) => format!("{kind} {ns}/{name}"),
            None => format!("{kind} {name}"),
        };
        out.push(OverrideDoc {
            file: federated.source.file.clone(),
            document: document_spans(text).len(),
            line: 0,
            object,
            title,
            dialect: Dialect::Karmada,
            created: true,
            owned: true,
        });
    }
    Ok(out)
}

fn name_of(target: &ResourceRef) -> String {
    match &target.namespace {
        Some(ns) => format!("{ns}/{}", target.name),
        None => target.name.clone(),
    }
}

/// The fleet's files with `doc` written as `object`, the way saving will write it.
pub fn edited_files(
    files: &[SourceFile],
    doc: &OverrideDoc,
    object: &Value,
) -> Result<Vec<SourceFile>, EditError> {
    let mut out = files.to_vec();
    match out.iter_mut().find(|f| f.path == doc.file) {
        Some(file) => {
            file.text =
                yaml_text::replace_or_append(&doc.file, &file.text, doc.document, object)?.text;
        }
        None => out.push(SourceFile {
            path: doc.file.clone(),
            text: yaml_text::append_document(&doc.file, "", object)?,
        }),
    }
    Ok(out)
}

/// What an override edit does, computed before anything is written.
#[derive(Debug, Clone, Default)]
pub struct OverridePreview {
    /// The fleet as it would be; `None` when the edit breaks it.
    pub fleet: Option<Arc<Fleet>>,
    /// Why the edit cannot be saved: the fleet would not load, or an override would fail.
    pub errors: Vec<String>,
    pub diffs: Vec<DiffGroup>,
    /// Clusters with at least one changed object, in fleet order.
    pub clusters: Vec<String>,
    /// Objects whose rendered form changes.
    pub updated: usize,
}

/// Loads the fleet with `doc` written as `object` and compares every placed object on every
/// cluster with `before`.
pub fn preview_overrides(
    before: &Fleet,
    files: &[SourceFile],
    doc: &OverrideDoc,
    object: &Value,
) -> OverridePreview {
    let mut preview = OverridePreview::default();
    let edited = match edited_files(files, doc, object) {
        Ok(edited) => edited,
        Err(error) => {
            preview.errors.push(error.to_string());
            return preview;
        }
    };
    let (after, errors) = load_edit(before, files, &edited, &doc.file, doc.document);
    if !errors.is_empty() {
        preview.errors = errors.iter().map(FleetError::to_string).collect();
        return preview;
    }
    let mut groups: BTreeMap<(ResourceRef, String), Vec<String>> = BTreeMap::new();
    let mut touched = vec![false; before.clusters.len()];
    for (resource, federated) in before.resources.iter().enumerate() {
        let Some(new_index) = after.resource_index(&federated.target, resource) else {
            continue;
        };
        for (cluster, spec) in before.clusters.iter().enumerate() {
            if !before.is_placed(resource, cluster) {
                continue;
            }
            let Some(new_cluster) = after.cluster_index(&spec.name) else {
                continue;
            };
            let old = match before.decide(resource, cluster) {
                Decision::Placed { object, .. } | Decision::Suspended { object, .. } => {
                    Some(object)
                }
                Decision::NotPlaced { .. } => None,
            };
            let new = match after.decide(new_index, new_cluster) {
                Decision::Placed { object, .. } | Decision::Suspended { object, .. } => object,
                Decision::NotPlaced { reason } => {
                    preview.errors.push(format!(
                        "{} on {}: {reason}",
                        federated.target.display_key(),
                        spec.name
                    ));
                    continue;
                }
            };
            let text = diff::unified_edit(old.as_ref(), &new, &federated.target.display_key());
            if text.is_empty() {
                continue;
            }
            preview.updated += 1;
            touched[cluster] = true;
            groups
                .entry((federated.target.clone(), text))
                .or_default()
                .push(spec.name.clone());
        }
    }
    preview.clusters = before
        .clusters
        .iter()
        .zip(&touched)
        .filter(|(_, t)| **t)
        .map(|(c, _)| c.name.clone())
        .collect();
    preview.diffs = groups
        .into_iter()
        .map(|((resource, diff), clusters)| DiffGroup {
            resource,
            clusters: clusters.into(),
            diff,
            created: false,
        })
        .collect();
    if preview.errors.is_empty() {
        preview.fleet = Some(Arc::new(after));
    }
    preview
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::fleet::assemble::load_fleet;

    #[test]
    fn rules_writing_into_a_secret_list_masked_and_uncut_values_in_full() {
        let long = "x".repeat(80);
        let object = json!({
            "apiVersion": "types.kubefed.io/v1beta1", "kind": "FederatedSecret",
            "metadata": {"name": "db", "namespace": "shop"},
            "spec": {"template": {"stringData": {"pw": "a"}}, "overrides": [
                {"clusterName": "k1", "clusterOverrides": [
                    {"path": "/stringData/pw", "value": "hunter2"},
                    {"path": "/metadata/labels", "value": {"note": long}}
                ]}
            ]}
        });
        let doc = OverrideDoc {
            file: "f.yaml".into(),
            document: 0,
            line: 1,
            object: object.clone(),
            title: "FederatedSecret shop/db".into(),
            dialect: Dialect::KubeFed,
            created: false,
            owned: true,
        };
        let clusters = [ClusterSpec {
            name: "k1".into(),
            ..ClusterSpec::default()
        }];
        let rules = doc.rules(&object, &clusters);
        assert_eq!(rules[0].items, ["replace /stringData/pw = \"***\""]);
        assert!(rules[0].secret && !rules[1].secret);
        assert!(rules[1].items[0].ends_with("..."), "{:?}", rules[1].items);
        assert!(rules[1].full[0].contains(&long), "{:?}", rules[1].full);
        let shown = doc.rules_with(&object, &clusters, SecretValues::Shown);
        assert_eq!(shown[0].full, ["replace /stringData/pw = \"hunter2\""]);
        assert!(shown[0].secret, "still known to write into a Secret");
    }

    const FLEET: &str = r#"apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: east, labels: {env: prod}}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: west, labels: {env: prod}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - {name: web, image: reg.io/shop/web:1.0}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: all-deployments, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  overrideRules:
  - targetCluster: {labelSelector: {matchLabels: {env: prod}}}
    overriders:
      labelsOverrider: [{operator: add, value: {tier: web}}]
"#;

    fn files() -> Vec<SourceFile> {
        vec![SourceFile {
            path: "fleet.yaml".into(),
            text: FLEET.into(),
        }]
    }

    fn setup() -> (Fleet, Vec<SourceFile>, Vec<OverrideDoc>, Value) {
        let files = files();
        let (fleet, errors) = load_fleet(&files);
        assert!(errors.is_empty(), "{errors:?}");
        let docs = override_docs(&fleet, &files, 0).unwrap();
        let rendered = match fleet.decide(0, 0) {
            Decision::Placed { object, .. } | Decision::Suspended { object, .. } => object,
            other => panic!("{other:?}"),
        };
        (fleet, files, docs, rendered)
    }

    #[test]
    fn the_policies_selecting_a_resource_come_first_then_flotillas_new_one() {
        let (fleet, _, docs, _) = setup();
        let titles: Vec<&str> = docs.iter().map(|d| d.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "OverridePolicy shop/all-deployments",
                "OverridePolicy shop/flotilla-adopt-deployment-web"
            ]
        );
        assert!(!docs[0].owned && docs[1].owned && docs[1].created);
        assert_eq!(
            docs[1].document, 5,
            "appended after the file's five documents"
        );
        let rules = docs[0].rules(&docs[0].object, &fleet.clusters);
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].clusters, ["east", "west"]);
        assert_eq!(
            rules[0].form,
            Some((
                Target::Selector(json!({"matchLabels": {"env": "prod"}})),
                Item::Label {
                    key: "tier".into(),
                    value: "web".into()
                }
            ))
        );
    }

    #[test]
    fn patches_are_checked_against_the_rendered_object() {
        let (_, _, _, rendered) = setup();
        assert_eq!(
            check_patch(&rendered, OpKind::Replace, "/spec/replicas", "3").unwrap(),
            Some(json!(3))
        );
        let err = check_patch(&rendered, OpKind::Replace, "/spec/replica", "3").unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("does not exist")),
            "{err}"
        );
        let err = check_patch(&rendered, OpKind::Replace, "/spec/replicas", "three").unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("a number") && m.contains("a string")),
            "{err}"
        );
        let err = check_patch(&rendered, OpKind::Add, "/spec/nope/x", "1").unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("/spec/nope does not exist")),
            "{err}"
        );
        let err = check_patch(&rendered, OpKind::Replace, "/metadata/name", "\"x\"").unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("cannot be overridden")),
            "{err}"
        );
        let err = check_patch(&rendered, OpKind::Add, "/spec/paused", "{a: [").unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("not YAML/JSON")),
            "{err}"
        );
        assert_eq!(
            check_patch(
                &rendered,
                OpKind::Add,
                "/spec/template/spec/containers/0/env",
                "[{name: A, value: \"1\"}]"
            )
            .unwrap(),
            Some(json!([{"name": "A", "value": "1"}]))
        );
        assert_eq!(
            check_patch(&rendered, OpKind::Remove, "/spec/replicas", "").unwrap(),
            None
        );
    }

    #[test]
    fn completion_lists_members_and_indices() {
        let (_, _, _, rendered) = setup();
        assert_eq!(complete_path(&rendered, "/spec/re"), ["/spec/replicas"]);
        assert_eq!(
            complete_path(&rendered, "/spec/template/spec/containers/"),
            ["/spec/template/spec/containers/0"]
        );
        assert!(complete_path(&rendered, "/metadata/").contains(&"/metadata/name".to_string()));
        assert!(complete_path(&rendered, "/nothing/").is_empty());
    }

    #[test]
    fn karmada_rules_are_added_moved_and_deleted_and_the_preview_follows() {
        let (fleet, files, docs, rendered) = setup();
        let doc = &docs[1];
        let east = Target::Clusters(vec!["east".into()]);
        let tag = |value: &str| Item::Image {
            component: ImageComponent::Tag,
            value: value.into(),
            path: String::new(),
        };
        let one = apply_edit(
            doc,
            &doc.object,
            &RuleEdit::Add(east.clone(), tag("2.0")),
            &rendered,
        )
        .unwrap();
        let two = apply_edit(
            doc,
            &one,
            &RuleEdit::Add(east.clone(), tag("3.0")),
            &rendered,
        )
        .unwrap();
        let preview = preview_overrides(&fleet, &files, doc, &two);
        assert!(preview.errors.is_empty(), "{:?}", preview.errors);
        assert_eq!(preview.clusters, ["east"]);
        assert!(
            preview.diffs[0].diff.contains("web:3.0"),
            "{}",
            preview.diffs[0].diff
        );
        let moved = apply_edit(doc, &two, &RuleEdit::Move(1, true), &rendered).unwrap();
        let preview = preview_overrides(&fleet, &files, doc, &moved);
        assert!(
            preview.diffs[0].diff.contains("web:2.0"),
            "{}",
            preview.diffs[0].diff
        );
        assert!(apply_edit(doc, &moved, &RuleEdit::Move(0, true), &rendered).is_err());
        let deleted = apply_edit(doc, &moved, &RuleEdit::Delete(1), &rendered).unwrap();
        let preview = preview_overrides(&fleet, &files, doc, &deleted);
        assert!(
            preview.diffs[0].diff.contains("web:3.0"),
            "{}",
            preview.diffs[0].diff
        );
        // A selector target writes a labelSelector.
        let selector = parse_target("env=prod", Dialect::Karmada, &fleet.clusters).unwrap();
        let all = apply_edit(
            doc,
            &doc.object,
            &RuleEdit::Add(selector, tag("4.0")),
            &rendered,
        )
        .unwrap();
        assert_eq!(
            all.pointer("/spec/overrideRules/0/targetCluster"),
            Some(&json!({"labelSelector": {"matchLabels": {"env": "prod"}}}))
        );
        let preview = preview_overrides(&fleet, &files, doc, &all);
        assert_eq!(preview.clusters, ["east", "west"]);
        assert_eq!(preview.diffs.len(), 1, "identical diffs are grouped");
    }

    #[test]
    fn targets_name_known_clusters_and_kubefed_refuses_selectors() {
        let (fleet, ..) = setup();
        assert_eq!(
            parse_target("east, west", Dialect::KubeFed, &fleet.clusters).unwrap(),
            Target::Clusters(vec!["east".into(), "west".into()])
        );
        let err = parse_target("north", Dialect::Karmada, &fleet.clusters).unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("no cluster named `north`")),
            "{err}"
        );
        let err = parse_target("env=prod", Dialect::KubeFed, &fleet.clusters).unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("KubeFed")),
            "{err}"
        );
        assert!(parse_target(" ", Dialect::Karmada, &fleet.clusters).is_err());
    }

    #[test]
    fn kubefed_operations_are_written_per_cluster_and_moved_within_one() {
        let doc = OverrideDoc {
            file: "f.yaml".into(),
            document: 0,
            line: 1,
            object: json!({"spec": {"overrides": [
                {"clusterName": "a", "clusterOverrides": [{"path": "/spec/replicas", "value": 1}]},
                {"clusterName": "b", "clusterOverrides": [{"path": "/spec/replicas", "value": 2}]},
            ]}}),
            title: "FederatedDeployment ns/x".into(),
            dialect: Dialect::KubeFed,
            created: false,
            owned: true,
        };
        let rendered = json!({"metadata": {"labels": {"app": "x"}}, "spec": {"replicas": 3,
            "template": {"spec": {"containers": [{"name": "x", "image": "r.io/x:1"}]}}}});
        let label = Item::Label {
            key: "team".into(),
            value: "pay".into(),
        };
        let target = Target::Clusters(vec!["a".into(), "c".into()]);
        let added =
            apply_edit(&doc, &doc.object, &RuleEdit::Add(target, label), &rendered).unwrap();
        assert_eq!(
            added.pointer("/spec/overrides/0/clusterOverrides/1"),
            Some(&json!({"op": "add", "path": "/metadata/labels/team", "value": "pay"}))
        );
        assert_eq!(
            added.pointer("/spec/overrides/2"),
            Some(&json!({"clusterName": "c", "clusterOverrides": [
                {"op": "add", "path": "/metadata/labels/team", "value": "pay"}
            ]}))
        );
        // A template without labels gets the whole map: KubeFed's own label comes later.
        let bare = json!({"spec": {"template": {"spec": {"replicas": 3}}}});
        let label_of = |object: &Value| {
            let item = Item::Label {
                key: "team".into(),
                value: "pay".into(),
            };
            let target = Target::Clusters(vec!["a".into()]);
            apply_edit(&doc, object, &RuleEdit::Add(target, item), &rendered)
                .unwrap()
                .pointer("/spec/overrides/0/clusterOverrides")
                .and_then(|ops| ops.as_array()?.last().cloned())
        };
        assert_eq!(
            label_of(&bare),
            Some(json!({"op": "add", "path": "/metadata/labels", "value": {"team": "pay"}}))
        );
        // Rule 2 is b's only operation: it cannot move; rule 1 (a's second) moves above a's first.
        assert!(apply_edit(&doc, &added, &RuleEdit::Move(2, true), &rendered).is_err());
        let moved = apply_edit(&doc, &added, &RuleEdit::Move(1, true), &rendered).unwrap();
        assert_eq!(
            moved.pointer("/spec/overrides/0/clusterOverrides/0/path"),
            Some(&json!("/metadata/labels/team"))
        );
        let image = Item::Image {
            component: ImageComponent::Registry,
            value: "eu.io".into(),
            path: "/spec/template/spec/containers/0/image".into(),
        };
        let replaced = apply_edit(
            &doc,
            &doc.object,
            &RuleEdit::Replace(1, Target::Clusters(vec!["b".into()]), image),
            &rendered,
        )
        .unwrap();
        assert_eq!(
            replaced.pointer("/spec/overrides/1/clusterOverrides/0"),
            Some(
                &json!({"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "eu.io/x:1"})
            )
        );
        let err = apply_edit(
            &doc,
            &doc.object,
            &RuleEdit::Add(
                Target::Clusters(vec!["a".into()]),
                Item::Patch {
                    op: OpKind::Replace,
                    path: "/spec/replicas".into(),
                    value: Some(json!(9)),
                },
            ),
            &rendered,
        )
        .unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("already has an override of /spec/replicas")),
            "{err}"
        );
        let emptied = apply_edit(&doc, &doc.object, &RuleEdit::Delete(0), &rendered).unwrap();
        let emptied = apply_edit(&doc, &emptied, &RuleEdit::Delete(0), &rendered).unwrap();
        assert_eq!(emptied, json!({"spec": {}}));
    }
}
