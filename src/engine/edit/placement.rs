//! Editing placements in memory: where a resource's placement is declared, the editable parts
//! of it (an explicit cluster list and a label selector, in either dialect), the fleet as it
//! would be with that declaration changed, and what the change does — clusters entering and
//! leaving, why every other cluster stays out, and how each rendered object differs, grouped
//! across clusters. Pure: it works on the fleet's source texts and never writes a file.

use std::collections::{BTreeMap, BTreeSet};

use foldhash::{HashMap, HashMapExt};

use serde_json::{Map, Value, json};

use crate::engine::compare::diff;
use crate::engine::document::parse::{Doc, split_documents};
use crate::engine::document::source::{FleetError, SourceFile};
use crate::engine::edit::EditError;
use crate::engine::fleet::decide::{Decision, Fleet};
use crate::engine::fleet::plan::Origin;
use crate::engine::fleet::reload::load_edit;
use crate::engine::place::selector::LabelSelector;
use crate::model::{Dialect, ResourceRef};

/// The document that declares where a resource goes.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementSource {
    pub file: String,
    /// Index of the document among its file's documents.
    pub document: usize,
    /// The line the document starts on, for messages.
    pub line: usize,
    /// The whole document as written.
    pub object: Value,
    /// e.g. `PropagationPolicy shop/web` or `FederatedDeployment shop/web`.
    pub title: String,
    pub dialect: Dialect,
}

/// The parts of a placement the editor changes; everything else in the document is kept.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EditablePlacement {
    /// Clusters named explicitly (Karmada `clusterAffinity.clusterNames`, KubeFed
    /// `placement.clusters`).
    pub clusters: BTreeSet<String>,
    /// The label selector in kubectl's `-l` syntax (`env=prod,tier in (web,api),!legacy`).
    pub selector: String,
    /// Karmada field selector over `provider`, `region` and `zone`, in the same syntax
    /// (`region in (eu-west,us-east),provider!=gcp`).
    pub fields: String,
    /// Karmada cluster tolerations: `key=value:Effect`, `key:Effect` (Exists), `key=value`
    /// (any effect), `*` (tolerate everything), separated by commas.
    pub tolerations: String,
    /// Karmada replica scheduling: empty (none), `duplicated`, `divided` (equal weights),
    /// `divided a=3,b=1` (static weights per cluster name), or `aggregated`.
    pub replicas: String,
}

impl Fleet {
    /// Where `resource`'s placement is declared, or why it cannot be edited here.
    pub fn placement_source(
        &self,
        files: &[SourceFile],
        resource: usize,
    ) -> Result<PlacementSource, EditError> {
        let federated = self
            .resources
            .get(resource)
            .ok_or_else(|| EditError::missing("no such resource"))?;
        let plan = self
            .plans
            .get(resource)
            .ok_or_else(|| EditError::missing("no such resource"))?;
        let (location, title) = match &plan.origin {
            Origin::Karmada {
                policy: Some(index),
            } => {
                let policy = self
                    .propagation
                    .get(*index)
                    .ok_or_else(|| EditError::missing("the policy is gone"))?;
                let (file, line) = policy.location.rsplit_once(':').ok_or_else(|| {
                    EditError::missing(format!("unknown location {}", policy.location))
                })?;
                let line = line
                    .parse::<usize>()
                    .map_err(|err| EditError::missing(err.to_string()))?;
                ((file.to_string(), line), policy.display_name())
            }
            Origin::Karmada { policy: None } => {
                return Err(EditError::unsupported(format!(
                    "no PropagationPolicy selects {}; add one to the fleet directory to place it",
                    federated.target
                )));
            }
            Origin::KubeFed { .. } => (
                (federated.source.file.clone(), federated.source.line),
                format!(
                    "Federated{} {}",
                    federated.target.kind,
                    target_name(&federated.target)
                ),
            ),
            Origin::Invalid => {
                return Err(EditError::unsupported(format!(
                    "{} could not be read; fix its file first",
                    federated.target
                )));
            }
        };
        let text = files
            .iter()
            .find(|f| f.path == location.0)
            .map(|f| f.text.as_str())
            .ok_or_else(|| {
                EditError::missing(format!("{} is not among the fleet's files", location.0))
            })?;
        let chunks = split_documents(text);
        let document = chunks
            .iter()
            .rposition(|(start, _)| *start <= location.1)
            .ok_or_else(|| {
                EditError::missing(format!("no document at {}:{}", location.0, location.1))
            })?;
        let object = parse_chunk(&chunks[document].1)?;
        Ok(PlacementSource {
            file: location.0,
            document,
            line: chunks[document].0,
            object,
            title,
            dialect: federated.dialect,
        })
    }

    /// Every resource whose placement `source` declares (a policy may select several).
    ///
    /// Each resource is matched by where its placement is declared (a file and line within
    /// `source`'s document), so the file is split once, not once per resource.
    pub fn resources_placed_by(
        &self,
        files: &[SourceFile],
        source: &PlacementSource,
    ) -> Vec<usize> {
        let Some(text) = files.iter().find(|f| f.path == source.file) else {
            return Vec::new();
        };
        // Where the next document of the file starts: from the documents the fleet read, or
        // (a fleet not read from files) from the file's text.
        let end = match &self.parsed {
            Some(parsed) => parsed
                .docs
                .iter()
                .filter(|doc| doc.index > source.document && doc.file == source.file)
                .map(|doc| doc.line)
                .min()
                .unwrap_or(usize::MAX),
            None => crate::engine::document::parse::document_spans(&text.text)
                .get(source.document + 1)
                .map_or(usize::MAX, |(line, _)| *line),
        };
        let declared_here =
            |file: &str, line: usize| file == source.file && (source.line..end).contains(&line);
        // Which Karmada policies the document declares, once each.
        let policies: Vec<bool> = self
            .propagation
            .iter()
            .map(|policy| {
                policy
                    .location
                    .rsplit_once(':')
                    .and_then(|(file, line)| Some((file, line.parse::<usize>().ok()?)))
                    .is_some_and(|(file, line)| declared_here(file, line))
            })
            .collect();
        (0..self.resources.len())
            .filter(|&r| match self.plans.get(r).map(|plan| &plan.origin) {
                Some(Origin::Karmada {
                    policy: Some(index),
                }) => policies.get(*index).copied().unwrap_or(false),
                Some(Origin::KubeFed { .. }) => {
                    let declared = &self.resources[r].source;
                    declared_here(&declared.file, declared.line)
                }
                _ => false,
            })
            .collect()
    }
}

fn target_name(target: &ResourceRef) -> String {
    match &target.namespace {
        Some(ns) => format!("{ns}/{}", target.name),
        None => target.name.clone(),
    }
}

fn parse_chunk(text: &str) -> Result<Value, EditError> {
    serde_saphyr::from_str::<Value>(text).map_err(|err| EditError::Unreadable(err.to_string()))
}

/// Where the editable parts live in a document of each dialect.
fn pointers(dialect: Dialect) -> (&'static str, &'static str) {
    match dialect {
        Dialect::Karmada => (
            "/spec/placement/clusterAffinity/clusterNames",
            "/spec/placement/clusterAffinity/labelSelector",
        ),
        Dialect::KubeFed => (
            "/spec/placement/clusters",
            "/spec/placement/clusterSelector",
        ),
    }
}

impl PlacementSource {
    /// The editable parts as the document has them now.
    pub fn editable(&self) -> EditablePlacement {
        let (names_at, selector_at) = pointers(self.dialect);
        let clusters = self
            .object
            .pointer(names_at)
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(|entry| match entry {
                        Value::String(name) => Some(name.clone()),
                        Value::Object(map) => {
                            map.get("name").and_then(Value::as_str).map(str::to_string)
                        }
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let selector = self
            .object
            .pointer(selector_at)
            .map(selector_text)
            .unwrap_or_default();
        let fields = match self.dialect {
            Dialect::Karmada => self
                .object
                .pointer(FIELDS)
                .map(selector_text)
                .unwrap_or_default(),
            Dialect::KubeFed => String::new(),
        };
        let (tolerations, replicas) = match self.dialect {
            Dialect::Karmada => (
                self.object
                    .pointer(TOLERATIONS)
                    .map(tolerations_text)
                    .unwrap_or_default(),
                self.object
                    .pointer(REPLICAS)
                    .map(replicas_text)
                    .unwrap_or_default(),
            ),
            Dialect::KubeFed => (String::new(), String::new()),
        };
        EditablePlacement {
            clusters,
            selector,
            fields,
            tolerations,
            replicas,
        }
    }

    /// The document with the editable parts replaced; an invalid selector is an error that
    /// names what is wrong.
    pub fn with(&self, edit: &EditablePlacement) -> Result<Value, EditError> {
        let (names_at, selector_at) = pointers(self.dialect);
        // A part the operator did not touch stays exactly as written, even where the editor's
        // text form cannot say everything the document does.
        let original = self.editable();
        let mut object = self.object.clone();
        if edit.clusters != original.clusters {
            let names: Vec<Value> = edit
                .clusters
                .iter()
                .map(|name| match self.dialect {
                    Dialect::Karmada => Value::String(name.clone()),
                    Dialect::KubeFed => json!({ "name": name }),
                })
                .collect();
            set_or_remove(
                &mut object,
                names_at,
                (!names.is_empty()).then_some(Value::Array(names)),
            );
        }
        if edit.selector != original.selector {
            set_or_remove(&mut object, selector_at, parse_selector(&edit.selector)?);
        }
        match self.dialect {
            Dialect::Karmada => {
                if edit.fields != original.fields {
                    set_or_remove(&mut object, FIELDS, parse_field_selector(&edit.fields)?);
                }
                if edit.tolerations != original.tolerations {
                    set_or_remove(
                        &mut object,
                        TOLERATIONS,
                        parse_tolerations(&edit.tolerations)?,
                    );
                }
                if edit.replicas != original.replicas {
                    set_or_remove(&mut object, REPLICAS, parse_replicas(&edit.replicas)?);
                }
            }
            Dialect::KubeFed => {
                if !edit.tolerations.trim().is_empty()
                    || !edit.replicas.trim().is_empty()
                    || !edit.fields.trim().is_empty()
                {
                    return Err(EditError::unsupported(
                        "KubeFed placements have no field selector, tolerations or \
                         replica scheduling (replicas are divided by a \
                         ReplicaSchedulingPreference)",
                    ));
                }
            }
        }
        Ok(object)
    }
}

const TOLERATIONS: &str = "/spec/placement/clusterTolerations";
const FIELDS: &str = "/spec/placement/clusterAffinity/fieldSelector";

/// Parses the `-l` syntax into match expressions only (`k=v` is `k In (v)`), for selectors
/// that have no `matchLabels` (Karmada's field selector, OCM's claim selector).
pub fn parse_expressions(text: &str) -> Result<Option<Vec<Value>>, EditError> {
    let Some(selector) = parse_selector(text)? else {
        return Ok(None);
    };
    let mut expressions: Vec<Value> = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(key, value)| json!({"key": key, "operator": "In", "values": [value]}))
        .collect();
    if let Some(more) = selector.get("matchExpressions").and_then(Value::as_array) {
        expressions.extend(more.iter().cloned());
    }
    Ok(Some(expressions))
}

/// Parses a Karmada field selector: the `-l` syntax over `provider`, `region` and `zone`,
/// as match expressions only (`k=v` is `k In (v)`), which is all Karmada's field selector has.
pub fn parse_field_selector(text: &str) -> Result<Option<Value>, EditError> {
    let Some(expressions) = parse_expressions(text)? else {
        return Ok(None);
    };
    for expression in &expressions {
        let key = expression["key"].as_str().unwrap_or_default();
        if !["provider", "region", "zone"].contains(&key) {
            return Err(EditError::input(format!(
                "`{key}`: a field selector matches only provider, region or zone"
            )));
        }
        let operator = expression["operator"].as_str().unwrap_or_default();
        if !["In", "NotIn"].contains(&operator) {
            return Err(EditError::input(format!(
                "`{key}`: a field selector takes only =, !=, in and notin"
            )));
        }
    }
    Ok(Some(json!({ "matchExpressions": expressions })))
}
const REPLICAS: &str = "/spec/placement/replicaScheduling";

/// Tolerations (Karmada's `clusterTolerations`, OCM's Placement `tolerations`) as the editor
/// shows them: `key=value:Effect`, `key:Effect` (Exists), `*` (everything), with ` for Ns`
/// when the toleration has `tolerationSeconds`.
pub fn tolerations_text(tolerations: &Value) -> String {
    let Some(items) = tolerations.as_array() else {
        return String::new();
    };
    items
        .iter()
        .map(|t| {
            let text = |field: &str| t.get(field).and_then(Value::as_str).unwrap_or_default();
            let (key, value, effect) = (text("key"), text("value"), text("effect"));
            let mut shown = match (key, text("operator")) {
                ("", _) => "*".to_string(),
                (key, "Exists") => key.to_string(),
                (key, _) => format!("{key}={value}"),
            };
            if !effect.is_empty() {
                shown.push(':');
                shown.push_str(effect);
            }
            if let Some(seconds) = t.get("tolerationSeconds").and_then(Value::as_i64) {
                shown.push_str(&format!(" for {seconds}s"));
            }
            shown
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The taint effects of Kubernetes and Karmada clusters.
pub use crate::engine::place::selector::TAINT_EFFECTS as KARMADA_EFFECTS;

/// Parses the editor's toleration syntax into Karmada `clusterTolerations`.
pub fn parse_tolerations(text: &str) -> Result<Option<Value>, EditError> {
    parse_tolerations_with(text, &KARMADA_EFFECTS)
}

/// Parses the editor's toleration syntax (see [`tolerations_text`]), accepting only `effects`.
pub fn parse_tolerations_with(text: &str, effects: &[&str]) -> Result<Option<Value>, EditError> {
    let mut items = Vec::new();
    for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let (rest, seconds) = match term.rsplit_once(" for ") {
            Some((rest, duration)) => {
                let seconds = duration
                    .trim()
                    .strip_suffix('s')
                    .and_then(|n| n.parse::<i64>().ok())
                    .ok_or_else(|| {
                        EditError::input(format!(
                            "`{term}`: write the time in seconds, e.g. `for 300s`"
                        ))
                    })?;
                (rest.trim(), Some(seconds))
            }
            None => (term, None),
        };
        let (base, effect) = match rest.rsplit_once(':') {
            Some((base, effect)) => (base.trim(), Some(effect.trim())),
            None => (rest, None),
        };
        if let Some(effect) = effect
            && !effects.contains(&effect)
        {
            return Err(EditError::input(format!(
                "`{term}`: `{effect}` is not a taint effect here ({})",
                effects.join(", ")
            )));
        }
        let mut toleration = serde_json::Map::new();
        match base.split_once('=') {
            _ if base == "*" => {
                toleration.insert("operator".into(), json!("Exists"));
            }
            Some((key, value)) => {
                toleration.insert("key".into(), json!(check_key(term, key.trim())?));
                toleration.insert("operator".into(), json!("Equal"));
                toleration.insert("value".into(), json!(check_value(term, value.trim())?));
            }
            None => {
                toleration.insert("key".into(), json!(check_key(term, base)?));
                toleration.insert("operator".into(), json!("Exists"));
            }
        }
        if let Some(effect) = effect {
            toleration.insert("effect".into(), json!(effect));
        }
        if let Some(seconds) = seconds {
            toleration.insert("tolerationSeconds".into(), json!(seconds));
        }
        items.push(Value::Object(toleration));
    }
    Ok((!items.is_empty()).then_some(Value::Array(items)))
}

/// Karmada replica scheduling as the editor shows it.
pub fn replicas_text(scheduling: &Value) -> String {
    let kind = scheduling
        .get("replicaSchedulingType")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if kind != "Divided" {
        return kind.to_ascii_lowercase();
    }
    if scheduling
        .get("replicaDivisionPreference")
        .and_then(Value::as_str)
        == Some("Aggregated")
    {
        return "aggregated".into();
    }
    let list = scheduling
        .pointer("/weightPreference/staticWeightList")
        .and_then(Value::as_array);
    let by_name_only = list.is_none_or(|list| {
        list.iter().all(|entry| {
            entry
                .get("targetCluster")
                .and_then(Value::as_object)
                .is_some_and(|target| target.keys().all(|key| key == "clusterNames"))
        })
    });
    if !by_name_only {
        return "divided (weights by label or field selector: keep, or replace with name=weight)"
            .into();
    }
    let weights: Vec<String> = list
        .map(|list| {
            list.iter()
                .flat_map(|entry| {
                    let weight = entry.get("weight").and_then(Value::as_i64).unwrap_or(1);
                    entry
                        .pointer("/targetCluster/clusterNames")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(move |name| format!("{name}={weight}"))
                })
                .collect()
        })
        .unwrap_or_default();
    if weights.is_empty() {
        "divided".into()
    } else {
        format!("divided {}", weights.join(","))
    }
}

/// Parses the editor's replica syntax into Karmada `replicaScheduling`.
pub fn parse_replicas(text: &str) -> Result<Option<Value>, EditError> {
    let text = text.trim();
    let (word, rest) = text.split_once(' ').unwrap_or((text, ""));
    match word.to_ascii_lowercase().as_str() {
        "" => Ok(None),
        "duplicated" if rest.trim().is_empty() => {
            Ok(Some(json!({"replicaSchedulingType": "Duplicated"})))
        }
        "aggregated" if rest.trim().is_empty() => Ok(Some(json!({
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Aggregated",
        }))),
        "divided" => {
            let mut list = Vec::new();
            for term in rest.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                let (name, weight) = term.split_once('=').ok_or_else(|| {
                    EditError::input(format!(
                        "`{term}`: write a weight per cluster as `name=weight`"
                    ))
                })?;
                let weight: i64 =
                    weight
                        .trim()
                        .parse()
                        .ok()
                        .filter(|w| *w > 0)
                        .ok_or_else(|| {
                            EditError::input(format!(
                                "`{term}`: the weight must be a whole number above 0"
                            ))
                        })?;
                list.push(json!({
                    "targetCluster": {"clusterNames": [name.trim()]},
                    "weight": weight,
                }));
            }
            let mut scheduling = json!({
                "replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Weighted",
            });
            if !list.is_empty() {
                scheduling["weightPreference"] = json!({"staticWeightList": list});
            }
            Ok(Some(scheduling))
        }
        _ => Err(EditError::input(format!(
            "`{text}`: write `duplicated`, `divided`, `divided a=3,b=1` or `aggregated`"
        ))),
    }
}

/// Sets the value at `pointer` (creating maps on the way), or removes it when `None`, pruning
/// maps the removal leaves empty below `/spec/placement`.
pub(crate) fn set_or_remove(object: &mut Value, pointer: &str, value: Option<Value>) {
    let tokens: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    let Some((last, parents)) = tokens.split_last() else {
        return;
    };
    match value {
        Some(value) => {
            let mut at = object;
            for token in parents {
                if !at.get(*token).is_some_and(Value::is_object)
                    && let Some(map) = at.as_object_mut()
                {
                    map.insert((*token).to_string(), Value::Object(Map::new()));
                }
                let Some(next) = at.get_mut(*token) else {
                    return;
                };
                at = next;
            }
            if let Some(map) = at.as_object_mut() {
                map.insert((*last).to_string(), value);
            }
        }
        None => {
            let parent = format!("/{}", parents.join("/"));
            if let Some(map) = object.pointer_mut(&parent).and_then(Value::as_object_mut) {
                map.remove(*last);
            }
            // Drop maps emptied by the removal, down to /spec/placement.
            for depth in (2..parents.len()).rev() {
                let path = format!("/{}", parents[..=depth].join("/"));
                let empty = object
                    .pointer(&path)
                    .and_then(Value::as_object)
                    .is_some_and(Map::is_empty);
                if empty {
                    let holder = format!("/{}", parents[..depth].join("/"));
                    if let Some(map) = object.pointer_mut(&holder).and_then(Value::as_object_mut) {
                        map.remove(parents[depth]);
                    }
                }
            }
        }
    }
}

/// A label selector object in kubectl's `-l` syntax.
pub fn selector_text(selector: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (key, value) in labels {
            parts.push(format!("{key}={}", value.as_str().unwrap_or_default()));
        }
    }
    if let Some(expressions) = selector.get("matchExpressions").and_then(Value::as_array) {
        for expression in expressions {
            let key = expression["key"].as_str().unwrap_or_default();
            let values: Vec<&str> = expression["values"]
                .as_array()
                .map(|v| v.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            parts.push(match expression["operator"].as_str().unwrap_or_default() {
                "In" => format!("{key} in ({})", values.join(",")),
                "NotIn" if values == [""] => format!("{key}!="),
                "NotIn" => format!("{key} notin ({})", values.join(",")),
                "Exists" => key.to_string(),
                "DoesNotExist" => format!("!{key}"),
                other => format!("{key} {other}"),
            });
        }
    }
    parts.join(",")
}

/// Parses kubectl's `-l` syntax into a label selector object: `k=v`, `k==v`, `k!=v`,
/// `k in (a,b)`, `k notin (a,b)`, `k` and `!k`, separated by commas. Empty means none.
pub fn parse_selector(text: &str) -> Result<Option<Value>, EditError> {
    let mut labels = Map::new();
    let mut expressions = Vec::new();
    for term in split_terms(text)? {
        let term = term.trim();
        if term.is_empty() {
            continue;
        }
        let lower = term.to_ascii_lowercase();
        let set_op = [(" notin ", "NotIn"), (" in ", "In")]
            .into_iter()
            .find_map(|(word, op)| lower.find(word).map(|at| (at, word.len(), op)));
        if let Some((at, len, operator)) = set_op {
            let key = term[..at].trim();
            let rest = term[at + len..].trim();
            let inner = rest
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| {
                    EditError::input(format!(
                        "`{term}`: the values go in parentheses, e.g. `{key} {} (a,b)`",
                        operator.to_ascii_lowercase()
                    ))
                })?;
            let values: Vec<Value> = inner
                .split(',')
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(|v| check_value(term, v).map(|v| Value::String(v.to_string())))
                .collect::<Result<_, _>>()?;
            if values.is_empty() {
                return Err(EditError::input(format!(
                    "`{term}`: name at least one value"
                )));
            }
            expressions.push(
                json!({"key": check_key(term, key)?, "operator": operator, "values": values}),
            );
        } else if let Some((key, value)) = term.split_once("!=") {
            expressions.push(json!({"key": check_key(term, key.trim())?, "operator": "NotIn", "values": [check_value(term, value.trim())?]}));
        } else if let Some((key, value)) = term.split_once('=') {
            let value = value.strip_prefix('=').unwrap_or(value);
            labels.insert(
                check_key(term, key.trim())?.to_string(),
                Value::String(check_value(term, value.trim())?.to_string()),
            );
        } else if let Some(key) = term.strip_prefix('!') {
            expressions
                .push(json!({"key": check_key(term, key.trim())?, "operator": "DoesNotExist"}));
        } else {
            expressions.push(json!({"key": check_key(term, term)?, "operator": "Exists"}));
        }
    }
    if labels.is_empty() && expressions.is_empty() {
        return Ok(None);
    }
    let mut selector = Map::new();
    if !labels.is_empty() {
        selector.insert("matchLabels".into(), Value::Object(labels));
    }
    if !expressions.is_empty() {
        selector.insert("matchExpressions".into(), Value::Array(expressions));
    }
    Ok(Some(Value::Object(selector)))
}

/// kubectl's `-l` syntax as a selector to match labels with (`None` for an empty text): the
/// form a list request's `labelSelector` takes, which the API server reads the same way.
pub fn label_selector_of(text: &str) -> Result<Option<LabelSelector>, EditError> {
    let Some(value) = parse_selector(text)? else {
        return Ok(None);
    };
    let doc = Doc::from_value("--selector", json!({ "selector": value }));
    LabelSelector::parse(&doc, "/selector")
        .map(Some)
        .map_err(|err| EditError::input(err.message))
}

/// Splits on commas outside parentheses.
fn split_terms(text: &str) -> Result<Vec<&str>, EditError> {
    let mut terms = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(EditError::input("a `)` without its `(`"));
        }
    }
    if depth != 0 {
        return Err(EditError::input("a `(` without its `)`"));
    }
    terms.push(&text[start..]);
    Ok(terms)
}

/// A label key: an optional DNS prefix and `/`, then a name of letters, digits, `-`, `_`, `.`.
fn check_key<'a>(term: &str, key: &'a str) -> Result<&'a str, EditError> {
    let name = key.rsplit_once('/').map_or(key, |(_, name)| name);
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    if ok {
        Ok(key)
    } else {
        Err(EditError::input(format!(
            "`{term}`: `{key}` is not a label key (letters, digits, `-`, `_`, `.`, optionally prefixed by a domain and `/`)"
        )))
    }
}

fn check_value<'a>(term: &str, value: &'a str) -> Result<&'a str, EditError> {
    let ok = value.len() <= 63
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok {
        Ok(value)
    } else {
        Err(EditError::input(format!(
            "`{term}`: `{value}` is not a label value (at most 63 letters, digits, `-`, `_`, `.`)"
        )))
    }
}

/// The fleet's files with one document replaced by `object`, the way saving will write it
/// (every other byte kept), so the preview loads exactly what would be saved. `fleet`, the
/// fleet read from `files`, knows where their documents lie.
pub fn replace_document(
    fleet: &Fleet,
    files: &[SourceFile],
    file: &str,
    document: usize,
    object: &Value,
) -> Result<Vec<SourceFile>, EditError> {
    files
        .iter()
        .map(|source| {
            if source.path != file {
                return Ok(source.clone());
            }
            let spans = match &fleet.parsed {
                Some(parsed) => parsed.spans.of(file, &source.text),
                None => crate::engine::document::parse::document_spans(&source.text).into(),
            };
            let edited = crate::engine::edit::yaml_text::replace_spanned_document(
                file,
                &source.text,
                &spans,
                document,
                object,
            )?;
            Ok(SourceFile {
                path: source.path.clone(),
                text: edited.text,
            })
        })
        .collect()
}

/// What happens to one cluster under the edited placement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Membership {
    Entering,
    Leaving { reason: String },
    Staying,
    Out { reason: String },
}

/// One cluster's row in the preview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterChange {
    pub cluster: String,
    pub membership: Membership,
    pub replicas_before: Option<i64>,
    pub replicas_after: Option<i64>,
}

/// The same change to one object on several clusters.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffGroup {
    pub resource: ResourceRef,
    pub clusters: ClusterNames,
    /// Unified diff of the rendered object, before → after (creation when there was none).
    pub diff: String,
    /// The object does not exist on these clusters yet (by the fleet's intent).
    pub created: bool,
}

/// What an edited placement does, computed before anything is written.
#[derive(Debug, Clone)]
pub struct PlacementPreview {
    /// The fleet as it would be; `None` when the edit breaks it (see `errors`).
    pub fleet: Option<std::sync::Arc<Fleet>>,
    pub errors: Vec<FleetError>,
    /// Per cluster, for the resources the edited document places (first of them).
    pub clusters: Vec<ClusterChange>,
    /// Every resource the edited document places whose rendering the edit changes, in the
    /// fleet's order: the whole blast radius of an edit to a shared policy.
    pub resources: Vec<ResourceChange>,
    /// How many resources the edited document places (the edited one included).
    pub sharing: usize,
    pub diffs: Vec<DiffGroup>,
    /// Objects that would be created, changed, and left behind (never deleted by a preview).
    pub created: usize,
    pub updated: usize,
    pub leaving: usize,
}

/// One resource whose rendering a placement edit changes: the clusters that gain it, lose it,
/// and keep it with another rendered object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceChange {
    pub resource: ResourceRef,
    pub gained: ClusterNames,
    pub lost: ClusterNames,
    pub changed: ClusterNames,
}

/// Cluster names in the fleet's order, shared: the resources of a policy mostly gain and lose
/// the same clusters, and a preview of thousands of them keeps one list of each.
pub type ClusterNames = std::sync::Arc<[String]>;

/// "gains on a; leaves b, c; changes on d": a resource's change in the one wording the
/// console's review and `placement set` use.
pub fn change_words(gained: &[String], lost: &[String], changed: &[String]) -> String {
    [
        ("gains on", gained),
        ("leaves", lost),
        ("changes on", changed),
    ]
    .into_iter()
    .filter(|(_, clusters)| !clusters.is_empty())
    .map(|(word, clusters)| format!("{word} {}", clusters.join(", ")))
    .collect::<Vec<_>>()
    .join("; ")
}

impl PlacementPreview {
    /// The change of `target`, if the edit changes it.
    pub fn change_of(&self, target: &ResourceRef) -> Option<&ResourceChange> {
        self.resources.iter().find(|c| &c.resource == target)
    }

    /// The changes of the resources other than `target`: what else the edit touches.
    pub fn others(&self, target: &ResourceRef) -> impl Iterator<Item = &ResourceChange> {
        self.resources.iter().filter(move |c| &c.resource != target)
    }

    pub fn entering(&self) -> impl Iterator<Item = &ClusterChange> {
        self.clusters
            .iter()
            .filter(|c| c.membership == Membership::Entering)
    }

    pub fn leaving(&self) -> impl Iterator<Item = &ClusterChange> {
        self.clusters
            .iter()
            .filter(|c| matches!(c.membership, Membership::Leaving { .. }))
    }
}

/// A pair of cell variants (before, after) and the clusters that have it.
type VariantPair = ((Option<(i32, u32)>, Option<(i32, u32)>), Vec<usize>);

/// The clusters of one resource whose object may change, grouped by pair of variants; a
/// cluster placed before and after with the same replicas and overrides of the same object
/// is left out.
fn variant_pairs(
    before: &Fleet,
    resource: usize,
    after: &Fleet,
    new_index: usize,
    cluster_map: &[Option<usize>],
    same_object: bool,
) -> Vec<VariantPair> {
    let (Some(old_plan), Some(new_plan)) = (before.plans.get(resource), after.plans.get(new_index))
    else {
        return Vec::new();
    };
    let mut pairs: Vec<VariantPair> = Vec::new();
    for (cluster, new_cluster) in cluster_map.iter().enumerate() {
        let Some(new_cluster) = *new_cluster else {
            continue;
        };
        let old_variant = before.variant(resource, cluster);
        let new_variant = after.variant(new_index, new_cluster);
        match (old_variant, new_variant) {
            (None, None) => continue,
            (Some((old_replicas, old_set)), Some((new_replicas, new_set)))
                if same_object
                    && old_replicas == new_replicas
                    && old_plan.sets.get(old_set as usize)
                        == new_plan.sets.get(new_set as usize) =>
            {
                continue;
            }
            _ => {}
        }
        let variants = (old_variant, new_variant);
        match pairs.iter_mut().find(|(pair, _)| *pair == variants) {
            Some((_, clusters)) => clusters.push(cluster),
            None => pairs.push((variants, vec![cluster])),
        }
    }
    pairs
}

/// Every cluster's membership under the edit, for the edited resource.
fn cluster_changes(
    before: &Fleet,
    resource: usize,
    after: &Fleet,
    new_index: usize,
    cluster_map: &[Option<usize>],
) -> Vec<ClusterChange> {
    let mut out = Vec::new();
    // Cells of one variant render the same object, so each variant's replicas (none where it
    // is held back) are read once.
    let mut replicas_of: HashMap<(bool, (i32, u32), bool), Option<i64>> = HashMap::new();
    let mut replicas = |side: bool, fleet: &Fleet, resource: usize, cluster: usize| {
        let Some(variant) = fleet.variant(resource, cluster) else {
            return fleet.replicas(resource, cluster);
        };
        let held = fleet.suspended_reason(resource, cluster).is_some();
        *replicas_of
            .entry((side, variant, held))
            .or_insert_with(|| fleet.replicas(resource, cluster))
    };
    for (cluster, spec) in before.clusters.iter().enumerate() {
        let Some(new_cluster) = cluster_map[cluster] else {
            continue;
        };
        let was = before.is_placed(resource, cluster);
        let is = after.is_placed(new_index, new_cluster);
        let reason = || {
            after
                .unplaced_reason(new_index, new_cluster)
                .unwrap_or_default()
                .to_string()
        };
        out.push(ClusterChange {
            cluster: spec.name.clone(),
            membership: match (was, is) {
                (false, true) => Membership::Entering,
                (true, false) => Membership::Leaving { reason: reason() },
                (true, true) => Membership::Staying,
                (false, false) => Membership::Out { reason: reason() },
            },
            replicas_before: was
                .then(|| replicas(false, before, resource, cluster))
                .flatten(),
            replicas_after: is
                .then(|| replicas(true, after, new_index, new_cluster))
                .flatten(),
        });
    }
    out
}

/// What a pair of variants' clusters see, without the rendered text: `group` is the first
/// pair with the same rendered change.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Shape {
    Same,
    Lost,
    Diff { created: bool, group: usize },
}

/// The cluster lists of one resource's change, shared by the resources whose variant pairs
/// and shape are the same.
#[derive(Debug, Clone)]
struct Lists {
    gained: ClusterNames,
    lost: ClusterNames,
    changed: ClusterNames,
    /// Per group of pairs with the same rendered change (its first pair): its clusters.
    groups: Vec<(usize, ClusterNames)>,
}

impl Lists {
    fn new(shape: &[Shape], pairs: &[VariantPair], before: &Fleet) -> Lists {
        let names = |mut clusters: Vec<usize>| -> ClusterNames {
            clusters.sort_unstable();
            clusters
                .iter()
                .map(|c| before.clusters[*c].name.clone())
                .collect()
        };
        let (mut gained, mut lost, mut changed) = (Vec::new(), Vec::new(), Vec::new());
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        for (shape, (_, clusters)) in shape.iter().zip(pairs) {
            match shape {
                Shape::Same => {}
                Shape::Lost => lost.extend(clusters.iter().copied()),
                Shape::Diff { created, group } => {
                    if *created {
                        gained.extend(clusters.iter().copied());
                    } else {
                        changed.extend(clusters.iter().copied());
                    }
                    match groups.iter_mut().find(|(g, _)| g == group) {
                        Some((_, members)) => members.extend(clusters.iter().copied()),
                        None => groups.push((*group, clusters.clone())),
                    }
                }
            }
        }
        Lists {
            gained: names(gained),
            lost: names(lost),
            changed: names(changed),
            groups: groups
                .into_iter()
                .map(|(group, clusters)| (group, names(clusters)))
                .collect(),
        }
    }
}

/// What one cluster's object does under an edit, computed once per pair of variants.
enum Outcome {
    Same,
    Lost,
    Diff { text: String, created: bool },
}

fn outcome(old: Decision, new: Decision, target: &ResourceRef) -> Outcome {
    let object = |decision: Decision| match decision {
        Decision::Placed { object, .. } | Decision::Suspended { object, .. } => Some(object),
        Decision::NotPlaced { .. } => None,
    };
    match (object(old), object(new)) {
        (old, Some(new)) => {
            let text = diff::unified_edit(old.as_ref(), &new, &target.display_key());
            if text.is_empty() {
                Outcome::Same
            } else {
                Outcome::Diff {
                    text,
                    created: old.is_none(),
                }
            }
        }
        (Some(_), None) => Outcome::Lost,
        (None, None) => Outcome::Same,
    }
}

/// A Karmada policy of `target`'s own: the edited policy `object` (its placement and
/// behaviour) selecting only `target`, one priority above the policy it leaves and taking the
/// template over on a hub (`preemption: Always`). Named after the resource, or with `-own`
/// (and a number) when the fleet has a policy of that name. Fails for KubeFed, whose
/// placement is the Federated object's own already.
pub fn own_policy(
    fleet: &Fleet,
    source: &PlacementSource,
    object: &Value,
    target: &ResourceRef,
) -> Result<Value, EditError> {
    if source.dialect != Dialect::Karmada {
        return Err(EditError::unsupported(format!(
            "{} is already {}'s own placement; edit it without --own-policy",
            source.title,
            target.display_key()
        )));
    }
    let kind = if target.namespace.is_some() {
        "PropagationPolicy"
    } else {
        "ClusterPropagationPolicy"
    };
    let taken = |name: &str| {
        fleet
            .propagation
            .iter()
            .any(|p| p.kind == kind && p.namespace == target.namespace && p.name == name)
    };
    let name = std::iter::once(target.name.clone())
        .chain((1..).map(|n| match n {
            1 => format!("{}-own", target.name),
            n => format!("{}-own-{n}", target.name),
        }))
        .find(|name| !taken(name))
        .unwrap_or_default();
    let mut spec = object.get("spec").cloned().unwrap_or_else(|| json!({}));
    let priority = spec.get("priority").and_then(Value::as_i64).unwrap_or(0);
    if let Some(fields) = spec.as_object_mut() {
        fields.insert(
            "resourceSelectors".into(),
            json!([{"apiVersion": target.api_version, "kind": target.kind, "name": target.name}]),
        );
        fields.insert("priority".into(), json!(priority + 1));
        fields.insert("preemption".into(), json!("Always"));
    }
    let mut metadata = json!({"name": name});
    if let Some(ns) = &target.namespace {
        metadata["namespace"] = json!(ns);
    }
    Ok(json!({
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": kind,
        "metadata": metadata,
        "spec": spec,
    }))
}

/// Loads the fleet with `source`'s document replaced by `object` and compares every resource
/// the document places, on every cluster, with `before`.
pub fn preview_placement(
    before: &Fleet,
    files: &[SourceFile],
    source: &PlacementSource,
    object: &Value,
) -> PlacementPreview {
    let mut preview = PlacementPreview {
        fleet: None,
        errors: Vec::new(),
        clusters: Vec::new(),
        resources: Vec::new(),
        sharing: 0,
        diffs: Vec::new(),
        created: 0,
        updated: 0,
        leaving: 0,
    };
    let edited = match replace_document(before, files, &source.file, source.document, object) {
        Ok(edited) => edited,
        Err(message) => {
            preview.errors.push(FleetError {
                location: crate::engine::document::source::SourceLocation {
                    file: source.file.clone(),
                    line: source.line,
                },
                field: "(yaml)".into(),
                message: message.to_string(),
                hint: "undo the last change".into(),
            });
            return preview;
        }
    };
    let (after, errors) = load_edit(before, files, &edited, &source.file, source.document);
    if !errors.is_empty() {
        preview.errors = errors;
        return preview;
    }
    let resources = before.resources_placed_by(files, source);
    preview.sharing = resources.len();
    // Clusters by index in both fleets (a placement edit keeps the inventory, so this is
    // usually the identity).
    let cluster_map: Vec<Option<usize>> = before
        .clusters
        .iter()
        .map(|spec| after.cluster_index(&spec.name))
        .collect();
    let same_clusters = before.clusters.len() == after.clusters.len()
        && cluster_map.iter().enumerate().all(|(c, m)| *m == Some(c));
    let mut groups: BTreeMap<(ResourceRef, String, bool), ClusterNames> = BTreeMap::new();
    let mut lists: HashMap<(usize, Vec<Shape>), Lists> = HashMap::new();
    let mut classified: HashMap<(usize, usize, bool), std::rc::Rc<Vec<VariantPair>>> =
        HashMap::new();
    let mut equal_cells: HashMap<(usize, usize), bool> = HashMap::new();
    for (index, resource) in resources.iter().enumerate() {
        let target = &before.resources[*resource].target;
        let Some(new_index) = after.resource_index(target, *resource) else {
            continue;
        };
        let (Some(old_plan), Some(new_plan)) =
            (before.plans.get(*resource), after.plans.get(new_index))
        else {
            continue;
        };
        let same_object = std::sync::Arc::ptr_eq(&old_plan.base, &new_plan.base)
            || old_plan.base == new_plan.base;
        // Plans placed alike share their cell vectors: each pair of vectors is compared once.
        let cells_key = (
            std::sync::Arc::as_ptr(&old_plan.cells) as usize,
            std::sync::Arc::as_ptr(&new_plan.cells) as usize,
        );
        let mut same_cells = || {
            *equal_cells
                .entry(cells_key)
                .or_insert_with(|| old_plan.cells == new_plan.cells)
        };
        // Nothing a cluster gets can differ: skip the resource without rendering anything.
        if index > 0
            && same_clusters
            && same_object
            && same_cells()
            && old_plan.sets == new_plan.sets
            && old_plan.suspended == new_plan.suspended
        {
            continue;
        }
        if index == 0 {
            preview.clusters = cluster_changes(before, *resource, &after, new_index, &cluster_map);
        }
        // Which clusters may see a change, by pair of variants. Resources a policy places
        // alike share their cell vectors, so this is worked out once per pair of vectors.
        let key = (
            std::sync::Arc::as_ptr(&old_plan.cells) as usize,
            std::sync::Arc::as_ptr(&new_plan.cells) as usize,
            same_object,
        );
        let trivial_sets = old_plan.sets.len() == 1 && new_plan.sets.len() == 1;
        let pairs = match classified.get(&key).filter(|_| trivial_sets) {
            Some(pairs) => pairs.clone(),
            None => {
                let pairs = std::rc::Rc::new(variant_pairs(
                    before,
                    *resource,
                    &after,
                    new_index,
                    &cluster_map,
                    same_object,
                ));
                if trivial_sets {
                    classified.insert(key, pairs.clone());
                }
                pairs
            }
        };
        // Two cells with the same (replicas, override set) render the same object, so each
        // pair of variants is rendered and diffed once per resource.
        let mut outcomes: Vec<Outcome> = pairs
            .iter()
            .map(|((old_variant, new_variant), clusters)| {
                let Some((first, new_first)) = clusters
                    .first()
                    .and_then(|&first| Some((first, cluster_map[first]?)))
                else {
                    return Outcome::Same;
                };
                // Placed before, not after: lost, without rendering what it was.
                if new_variant.is_none()
                    && old_variant.is_some_and(|(_, set)| before.renders_surely(*resource, set))
                {
                    return Outcome::Lost;
                }
                outcome(
                    before.decide(*resource, first),
                    after.decide(new_index, new_first),
                    target,
                )
            })
            .collect();
        // What each pair's clusters see; pairs with the same rendered change are one group.
        let shape: Vec<Shape> = outcomes
            .iter()
            .enumerate()
            .map(|(i, outcome)| match outcome {
                Outcome::Same => Shape::Same,
                Outcome::Lost => Shape::Lost,
                Outcome::Diff { text, created } => Shape::Diff {
                    created: *created,
                    group: outcomes[..i]
                        .iter()
                        .position(|o| matches!(o, Outcome::Diff { text: t, created: c } if t == text && c == created))
                        .unwrap_or(i),
                },
            })
            .collect();
        // The cluster lists depend only on the pairs and the shape: resources placed alike
        // share them.
        let lists = lists
            .entry((std::rc::Rc::as_ptr(&pairs) as usize, shape))
            .or_insert_with_key(|(_, shape)| Lists::new(shape, &pairs, before))
            .clone();
        preview.leaving += lists.lost.len();
        preview.created += lists.gained.len();
        preview.updated += lists.changed.len();
        // Each group is its first pair's outcome: its text moves into the group.
        for (group, names) in &lists.groups {
            if let Some(Outcome::Diff { text, created }) = outcomes.get_mut(*group) {
                groups.insert(
                    (target.clone(), std::mem::take(text), *created),
                    names.clone(),
                );
            }
        }
        let change = ResourceChange {
            resource: target.clone(),
            gained: lists.gained,
            lost: lists.lost,
            changed: lists.changed,
        };
        if !(change.gained.is_empty() && change.lost.is_empty() && change.changed.is_empty()) {
            preview.resources.push(change);
        }
    }
    preview.diffs = groups
        .into_iter()
        .map(|((resource, diff, created), clusters)| DiffGroup {
            resource,
            clusters,
            diff,
            created,
        })
        .collect();
    preview.fleet = Some(std::sync::Arc::new(after));
    preview
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::fleet::assemble::load_fleet;
    use crate::engine::fleet::reload::reload_document;

    const KARMADA: &str = r#"apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: east, labels: {env: prod}}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: west, labels: {env: prod}}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: lab, labels: {env: dev}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: colors, namespace: shop}
data: {color: blue}
---
# the policy
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: colors, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: colors}]
  placement:
    clusterAffinity:
      labelSelector: {matchLabels: {env: prod}}
"#;

    fn files(text: &str) -> Vec<SourceFile> {
        vec![SourceFile {
            path: "fleet.yaml".into(),
            text: text.into(),
        }]
    }

    fn fleet(files: &[SourceFile]) -> Fleet {
        let (fleet, errors) = load_fleet(files);
        assert!(errors.is_empty(), "{errors:?}");
        fleet
    }

    #[test]
    fn a_karmada_resource_is_edited_through_its_policy() {
        let files = files(KARMADA);
        let fleet = fleet(&files);
        let source = fleet.placement_source(&files, 0).unwrap();
        assert_eq!(source.title, "PropagationPolicy shop/colors");
        assert_eq!(source.document, 4);
        let editable = source.editable();
        assert_eq!(editable.selector, "env=prod");
        assert!(editable.clusters.is_empty());
    }

    #[test]
    fn widening_the_selector_previews_the_entering_cluster_and_its_object() {
        let files = files(KARMADA);
        let fleet = fleet(&files);
        let source = fleet.placement_source(&files, 0).unwrap();
        let edit = EditablePlacement {
            clusters: BTreeSet::new(),
            selector: "env in (prod,dev)".into(),
            ..Default::default()
        };
        let preview = preview_placement(&fleet, &files, &source, &source.with(&edit).unwrap());
        assert!(preview.errors.is_empty(), "{:?}", preview.errors);
        let entering: Vec<&str> = preview.entering().map(|c| c.cluster.as_str()).collect();
        assert_eq!(entering, ["lab"]);
        assert_eq!(preview.created, 1);
        assert_eq!(preview.updated, 0);
        assert_eq!(preview.diffs.len(), 1);
        assert_eq!(*preview.diffs[0].clusters, ["lab"]);
        assert!(
            preview.diffs[0].diff.contains("+  color: blue"),
            "{}",
            preview.diffs[0].diff
        );
    }

    #[test]
    fn narrowing_to_one_named_cluster_says_why_the_others_leave() {
        let files = files(KARMADA);
        let fleet = fleet(&files);
        let source = fleet.placement_source(&files, 0).unwrap();
        let edit = EditablePlacement {
            clusters: ["east".to_string()].into(),
            selector: String::new(),
            ..Default::default()
        };
        let object = source.with(&edit).unwrap();
        assert_eq!(
            object.pointer("/spec/placement/clusterAffinity"),
            Some(&json!({"clusterNames": ["east"]}))
        );
        let preview = preview_placement(&fleet, &files, &source, &object);
        let leaving: Vec<(&str, &Membership)> = preview
            .leaving()
            .map(|c| (c.cluster.as_str(), &c.membership))
            .collect();
        assert_eq!(leaving.len(), 1, "{leaving:?}");
        assert_eq!(leaving[0].0, "west");
        let Membership::Leaving { reason } = leaving[0].1 else {
            unreachable!()
        };
        assert!(reason.contains("clusterNames"), "{reason}");
        assert_eq!(preview.leaving, 1);
        assert!(preview.diffs.is_empty(), "east keeps the same object");
    }

    #[test]
    fn a_kubefed_placement_is_edited_in_the_federated_object() {
        let text = r#"apiVersion: core.kubefed.io/v1beta1
kind: KubeFedCluster
metadata: {name: a, namespace: kube-federation-system, labels: {env: prod}}
---
apiVersion: core.kubefed.io/v1beta1
kind: KubeFedCluster
metadata: {name: b, namespace: kube-federation-system}
---
apiVersion: types.kubefed.io/v1beta1
kind: FederatedNamespace
metadata: {name: shop, namespace: shop}
spec:
  placement: {clusters: [{name: a}, {name: b}]}
---
apiVersion: types.kubefed.io/v1beta1
kind: FederatedConfigMap
metadata: {name: colors, namespace: shop}
spec:
  template: {data: {color: blue}}
  placement:
    clusters: [{name: a}]
"#;
        let files = files(text);
        let fleet = fleet(&files);
        let colors = fleet
            .resources
            .iter()
            .position(|r| r.target.kind == "ConfigMap")
            .unwrap();
        let source = fleet.placement_source(&files, colors).unwrap();
        assert_eq!(source.title, "FederatedConfigMap shop/colors");
        let mut edit = source.editable();
        assert_eq!(edit.clusters, ["a".to_string()].into());
        edit.clusters.insert("b".into());
        let object = source.with(&edit).unwrap();
        assert_eq!(
            object.pointer("/spec/placement/clusters"),
            Some(&json!([{"name": "a"}, {"name": "b"}]))
        );
        let preview = preview_placement(&fleet, &files, &source, &object);
        let entering: Vec<&str> = preview.entering().map(|c| c.cluster.as_str()).collect();
        assert_eq!(entering, ["b"], "{preview:?}");
    }

    #[test]
    fn divided_weights_and_tolerations_reach_the_policy_and_the_preview() {
        let files = files(KARMADA);
        let fleet = fleet(&files);
        let source = fleet.placement_source(&files, 0).unwrap();
        let mut edit = source.editable();
        assert_eq!(edit.tolerations, "");
        assert_eq!(edit.replicas, "");
        edit.replicas = "divided east=3,west=1".into();
        edit.tolerations = "dedicated=gpu:NoSchedule,*".into();
        let object = source.with(&edit).unwrap();
        assert_eq!(
            object.pointer("/spec/placement/replicaScheduling/weightPreference/staticWeightList/0"),
            Some(&json!({"targetCluster": {"clusterNames": ["east"]}, "weight": 3}))
        );
        assert_eq!(
            object.pointer("/spec/placement/clusterTolerations"),
            Some(&json!([
                {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
                {"operator": "Exists"}
            ]))
        );
        let reread = PlacementSource {
            object: object.clone(),
            ..source.clone()
        }
        .editable();
        assert_eq!(reread.replicas, "divided east=3,west=1");
        assert_eq!(reread.tolerations, "dedicated=gpu:NoSchedule,*");
        let fields = parse_field_selector("region in (eu,us),provider=aws")
            .unwrap()
            .unwrap();
        assert_eq!(
            fields,
            json!({"matchExpressions": [
                {"key": "provider", "operator": "In", "values": ["aws"]},
                {"key": "region", "operator": "In", "values": ["eu", "us"]},
            ]})
        );
        let err = parse_field_selector("env=prod").unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("provider, region or zone")),
            "{err}"
        );
        let err = parse_replicas("divided east=0").unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("above 0")),
            "{err}"
        );
        let err = parse_tolerations("gpu:Sometimes").unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("taint effect")),
            "{err}"
        );
    }

    #[test]
    fn selectors_round_trip_and_bad_ones_say_what_is_wrong() {
        let text = "env=prod,tier in (web,api),!legacy,gpu,zone notin (z1)";
        let selector = parse_selector(text).unwrap().unwrap();
        assert_eq!(selector_text(&selector), text);
        assert_eq!(parse_selector("  ").unwrap(), None);
        let err = parse_selector("tier in web").unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("parentheses")),
            "{err}"
        );
        let err = parse_selector("env=pr od").unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("not a label value")),
            "{err}"
        );
        let err = parse_selector("tier in (web").unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("without its `)`")),
            "{err}"
        );
        let err = parse_selector("=x").unwrap_err();
        assert!(
            matches!(&err, EditError::Input(m) if m.contains("not a label key")),
            "{err}"
        );
    }

    /// The preview re-reads only the edited document: what it builds must be the fleet a
    /// whole read of the edited files gives, locations of the documents below it included.
    #[test]
    fn a_preview_builds_the_fleet_a_whole_read_of_the_edit_gives() {
        let text = r#"apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: east, labels: {env: prod}}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: lab, labels: {env: dev}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
  placement:
    clusterAffinity:
      labelSelector: {matchLabels: {env: prod}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: one, namespace: shop}
data: {k: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: two, namespace: shop}
data: {k: "2"}
"#;
        let files = files(text);
        let fleet = fleet(&files);
        let source = fleet.placement_source(&files, 0).unwrap();
        let edit = EditablePlacement {
            clusters: ["east".to_string(), "lab".to_string()].into(),
            selector: String::new(),
            ..Default::default()
        };
        let object = source.with(&edit).unwrap();
        let preview = preview_placement(&fleet, &files, &source, &object);
        assert!(preview.errors.is_empty(), "{:?}", preview.errors);
        let edited =
            replace_document(&fleet, &files, &source.file, source.document, &object).unwrap();
        assert_ne!(
            edited[0].text.lines().count(),
            text.lines().count(),
            "the edit must move the documents below it"
        );
        let (whole, errors) = load_fleet(&edited);
        assert!(errors.is_empty(), "{errors:?}");
        assert!(
            reload_document(&fleet, "fleet.yaml", source.document, text, &edited[0].text).is_some(),
            "the preview re-reads one document"
        );
        let previewed = preview.fleet.clone().unwrap();
        assert_eq!(previewed.resources, whole.resources);
        for r in 0..whole.resources.len() {
            for c in 0..whole.clusters.len() {
                assert_eq!(previewed.decide(r, c), whole.decide(r, c), "{r} on {c}");
            }
        }
        assert_eq!(preview.entering().count(), 1);
    }
}
