//! The cluster inventory: Karmada `Cluster`, KubeFed `KubeFedCluster` and SIG Multicluster
//! `ClusterProfile` documents merged into one sorted list of [`ClusterSpec`]. A ClusterProfile's
//! labels are its own, its cluster manager (`x-k8s.io/cluster-manager`, upstream's label for
//! it) and its `status.properties` as `name: value`. Merge rule for a name declared in more
//! than one dialect, from weakest to strongest (ClusterProfile, KubeFed, Karmada): labels are
//! united (the stronger value wins on a conflicting key); provider, region, zones and taints
//! come from the strongest that has them; the context is the strongest annotation, else the
//! name. It must not place.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::engine::document::parse::Doc;
use crate::engine::document::source::{FleetError, SourceFile};
use crate::engine::place::selector::scalar_text;
use crate::model::{ClusterSpec, Taint};

pub const CONTEXT_ANNOTATION: &str = "flotilla.dev/context";

/// How the path of the inventory [`contexts_file`] writes begins: its clusters are the fleet's
/// only when no other document declares a cluster.
pub const CONTEXTS_SOURCE: &str = "contexts:";

/// The kubeconfig contexts `--context` selected, as an inventory: one cluster per context,
/// named after it, with no labels. The engine takes it only for a fleet that declares no
/// clusters of its own ([`from_contexts`]); otherwise `--context` filters that inventory.
pub fn contexts_file(patterns: &[String], contexts: &[String]) -> SourceFile {
    let documents: Vec<String> = contexts
        .iter()
        .map(|context| {
            serde_json::json!({
                "apiVersion": "cluster.karmada.io/v1alpha1",
                "kind": "Cluster",
                "metadata": {"name": context, "annotations": {CONTEXT_ANNOTATION: context}},
            })
            .to_string()
        })
        .collect();
    SourceFile {
        path: format!("{CONTEXTS_SOURCE}--context {}", patterns.join(",")),
        text: documents.join("\n---\n"),
    }
}

/// Whether a document came from [`contexts_file`].
pub fn from_contexts(doc: &Doc) -> bool {
    doc.file.starts_with(CONTEXTS_SOURCE)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InventoryKind {
    Karmada,
    KubeFed,
    ClusterProfile,
}

/// The label upstream asks every cluster manager to set on its ClusterProfiles
/// (cluster-inventory-api `LabelClusterManagerKey`).
pub const CLUSTER_MANAGER_LABEL: &str = "x-k8s.io/cluster-manager";

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
/// [`parse_cluster`], remembered with the document once it parses: a fleet re-read after an
/// edit elsewhere does not read its inventory again.
pub fn parse_cluster_once(doc: &Doc, kind: InventoryKind) -> Result<ClusterSpec, FleetError> {
    if let Some((known, spec)) = doc.memo.cluster.get()
        && *known == kind as u8
    {
        return Ok(spec.clone());
    }
    let spec = parse_cluster(doc, kind)?;
    let _ = doc.memo.cluster.set((kind as u8, spec.clone()));
    Ok(spec)
}

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
        InventoryKind::ClusterProfile => profile_labels(doc, &mut spec.labels)?,
    }
    Ok(spec)
}

/// A ClusterProfile's cluster manager and properties as labels: a property is a fact about the
/// cluster its manager reports, which placement selects on as it would on a label.
fn profile_labels(doc: &Doc, labels: &mut BTreeMap<String, String>) -> Result<(), FleetError> {
    if let Some(manager) = text_at(doc, "/spec/clusterManager/name") {
        labels
            .entry(CLUSTER_MANAGER_LABEL.to_string())
            .or_insert(manager);
    }
    let items = match doc.value.pointer("/status/properties") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(doc.error(
                "/status/properties",
                "properties must be a list",
                "write `- {name: region, value: eu}`",
            ));
        }
    };
    for (i, item) in items.iter().enumerate() {
        let name = item.get("name").and_then(scalar_text).unwrap_or_default();
        let Some(value) = item.get("value").and_then(scalar_text) else {
            return Err(doc.error(
                &format!("/status/properties/{i}/value"),
                "a property needs a string value",
                "write `{name: region, value: eu}`",
            ));
        };
        if name.is_empty() {
            return Err(doc.error(
                &format!("/status/properties/{i}/name"),
                "a property needs a name",
                "write `{name: region, value: eu}`",
            ));
        }
        labels.insert(name, value);
    }
    Ok(())
}

/// Merges the parsed inventory documents (already in a deterministic order) into the sorted
/// inventory. A name declared twice in the same dialect is an error.
pub fn merge(
    entries: Vec<(&Doc, InventoryKind, ClusterSpec)>,
    errors: &mut Vec<FleetError>,
) -> Vec<ClusterSpec> {
    // Weakest first: each later dialect is laid over the ones before it.
    const ORDER: [InventoryKind; 3] = [
        InventoryKind::ClusterProfile,
        InventoryKind::KubeFed,
        InventoryKind::Karmada,
    ];
    let mut by_kind: [BTreeMap<String, ClusterSpec>; 3] = Default::default();
    let mut seen: BTreeMap<(String, usize), String> = BTreeMap::new();
    for (doc, kind, spec) in entries {
        let rank = ORDER.iter().position(|k| *k == kind).unwrap_or(0);
        let key = (spec.name.clone(), rank);
        if let Some(first) = seen.get(&key) {
            errors.push(doc.error(
                "/metadata/name",
                format!("cluster {} is declared twice (first at {first})", spec.name),
                "remove or rename one of the two documents",
            ));
            continue;
        }
        seen.insert(key, doc.location("/metadata/name").to_string());
        by_kind[rank].insert(spec.name.clone(), spec);
    }
    let mut out: BTreeMap<String, ClusterSpec> = BTreeMap::new();
    for dialect in by_kind {
        for (name, k) in dialect {
            match out.get_mut(&name) {
                None => {
                    out.insert(name, k);
                }
                Some(existing) => lay_over(existing, k),
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

/// `stronger`'s declaration of the same cluster laid over `existing`.
fn lay_over(existing: &mut ClusterSpec, stronger: ClusterSpec) {
    existing.labels.extend(stronger.labels);
    if !stronger.context.is_empty() {
        existing.context = stronger.context;
    }
    if !stronger.taints.is_empty() {
        existing.taints = stronger.taints;
    }
    if stronger.provider.is_some() {
        existing.provider = stronger.provider;
    }
    if stronger.region.is_some() {
        existing.region = stronger.region;
    }
    if !stronger.zones.is_empty() {
        existing.zones = stronger.zones;
    }
}
