//! The cluster inventory: Karmada `Cluster` and KubeFed `KubeFedCluster` documents merged into
//! one sorted list of [`ClusterSpec`]. Merge rule for a name declared in both dialects: labels
//! are united (the Karmada value wins on a conflicting key); provider, region, zones and taints
//! come from the Karmada Cluster, falling back to the KubeFedCluster's status region/zones; the
//! context is the Karmada annotation, else the KubeFed one, else the name. It must not place.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::engine::document::parse::Doc;
use crate::engine::document::source::FleetError;
use crate::engine::place::selector::scalar_text;
use crate::model::{ClusterSpec, Taint};

pub const CONTEXT_ANNOTATION: &str = "flotilla.dev/context";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InventoryKind {
    Karmada,
    KubeFed,
}

fn labels_of(doc: &Doc) -> Result<BTreeMap<String, String>, FleetError> {
    let mut out = BTreeMap::new();
    match doc.value.pointer("/metadata/labels") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (k, v) in map {
                let text = scalar_text(v).ok_or_else(|| {
                    doc.error(
                        &format!(
                            "/metadata/labels/{}",
                            crate::engine::document::parse::escape_token(k)
                        ),
                        "a label value must be a string",
                        "quote the value",
                    )
                })?;
                out.insert(k.clone(), text);
            }
        }
        Some(_) => {
            return Err(doc.error(
                "/metadata/labels",
                "labels must be a mapping",
                "write `labels: {env: prod}`",
            ));
        }
    }
    Ok(out)
}

fn string_list(doc: &Doc, pointer: &str) -> Result<Vec<String>, FleetError> {
    match doc.value.pointer(pointer) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items.iter().filter_map(scalar_text).collect()),
        Some(_) => Err(doc.error(pointer, "must be a list of strings", "write `[a, b]`")),
    }
}

fn text_at(doc: &Doc, pointer: &str) -> Option<String> {
    doc.value
        .pointer(pointer)
        .and_then(scalar_text)
        .filter(|s| !s.is_empty())
}

/// Reads one inventory document into a partial cluster.
pub fn parse_cluster(doc: &Doc, kind: InventoryKind) -> Result<ClusterSpec, FleetError> {
    let name = doc.name().to_string();
    if name.is_empty() {
        return Err(doc.error(
            "/metadata/name",
            "a cluster needs a name",
            "add `metadata: {name: <cluster>}`",
        ));
    }
    let labels = labels_of(doc)?;
    let context = text_at(
        doc,
        &format!(
            "/metadata/annotations/{}",
            crate::engine::document::parse::escape_token(CONTEXT_ANNOTATION)
        ),
    )
    .unwrap_or_default();
    let mut spec = ClusterSpec {
        name,
        context,
        labels,
        ..Default::default()
    };
    match kind {
        InventoryKind::Karmada => {
            spec.provider = text_at(doc, "/spec/provider");
            spec.region = text_at(doc, "/spec/region");
            spec.zones = string_list(doc, "/spec/zones")?;
            if spec.zones.is_empty()
                && let Some(zone) = text_at(doc, "/spec/zone")
            {
                spec.zones.push(zone);
            }
            match doc.value.pointer("/spec/taints") {
                None | Some(Value::Null) => {}
                Some(Value::Array(items)) => {
                    for (i, item) in items.iter().enumerate() {
                        let p = format!("/spec/taints/{i}");
                        let key = item.get("key").and_then(scalar_text).unwrap_or_default();
                        let effect = item.get("effect").and_then(scalar_text).unwrap_or_default();
                        if key.is_empty() {
                            return Err(doc.error(
                                &format!("{p}/key"),
                                "a taint needs a key",
                                "add `key: ...`",
                            ));
                        }
                        if !matches!(
                            effect.as_str(),
                            "NoSchedule" | "PreferNoSchedule" | "NoExecute"
                        ) {
                            return Err(doc.error(
                                &format!("{p}/effect"),
                                format!("unknown taint effect `{effect}`"),
                                "use NoSchedule, PreferNoSchedule or NoExecute",
                            ));
                        }
                        spec.taints.push(Taint {
                            key,
                            value: item.get("value").and_then(scalar_text).unwrap_or_default(),
                            effect,
                        });
                    }
                }
                Some(_) => {
                    return Err(doc.error(
                        "/spec/taints",
                        "taints must be a list",
                        "write `- {key: k, value: v, effect: NoSchedule}`",
                    ));
                }
            }
        }
        InventoryKind::KubeFed => {
            spec.region = text_at(doc, "/status/region");
            spec.zones = string_list(doc, "/status/zones")?;
        }
    }
    Ok(spec)
}

/// Merges the parsed inventory documents (already in a deterministic order) into the sorted
/// inventory. A name declared twice in the same dialect is an error.
pub fn merge(
    entries: Vec<(&Doc, InventoryKind, ClusterSpec)>,
    errors: &mut Vec<FleetError>,
) -> Vec<ClusterSpec> {
    let mut karmada: BTreeMap<String, ClusterSpec> = BTreeMap::new();
    let mut kubefed: BTreeMap<String, ClusterSpec> = BTreeMap::new();
    let mut seen: BTreeMap<(String, bool), String> = BTreeMap::new();
    for (doc, kind, spec) in entries {
        let is_karmada = kind == InventoryKind::Karmada;
        let key = (spec.name.clone(), is_karmada);
        if let Some(first) = seen.get(&key) {
            errors.push(doc.error(
                "/metadata/name",
                format!("cluster {} is declared twice (first at {first})", spec.name),
                "remove or rename one of the two documents",
            ));
            continue;
        }
        seen.insert(key, doc.location("/metadata/name").to_string());
        if is_karmada {
            karmada.insert(spec.name.clone(), spec);
        } else {
            kubefed.insert(spec.name.clone(), spec);
        }
    }
    let mut out: BTreeMap<String, ClusterSpec> = BTreeMap::new();
    for (name, k) in kubefed {
        out.insert(name, k);
    }
    for (name, k) in karmada {
        match out.get_mut(&name) {
            None => {
                out.insert(name, k);
            }
            Some(existing) => {
                let mut labels = existing.labels.clone();
                labels.extend(k.labels);
                let context = if k.context.is_empty() {
                    existing.context.clone()
                } else {
                    k.context
                };
                *existing = ClusterSpec {
                    name: k.name,
                    context,
                    labels,
                    taints: k.taints,
                    provider: k.provider.or(existing.provider.take()),
                    region: k.region.or(existing.region.take()),
                    zones: if k.zones.is_empty() {
                        std::mem::take(&mut existing.zones)
                    } else {
                        k.zones
                    },
                };
            }
        }
    }
    out.into_values()
        .map(|mut c| {
            if c.context.is_empty() {
                c.context = c.name.clone();
            }
            c
        })
        .collect()
}
