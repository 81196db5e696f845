//! Output of `flotilla render`: the contract JSON written cluster by cluster to any writer
//! (objects are built one at a time and dropped), the same structure as YAML, and a
//! resources × clusters table. Secret values are masked (`***`) unless the caller asks to show
//! them. It must not place or override; it asks the [`Fleet`].

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;

use crate::engine::compare::secrets;
use crate::engine::fleet::decide::{Decision, Fleet};
use crate::model::ResourceRef;
use crate::safe_text::printable;

#[derive(Serialize)]
struct Item<'a> {
    cluster: &'a str,
    object: &'a Value,
}

#[derive(Serialize)]
struct Unplaced<'a> {
    cluster: &'a str,
    resource: &'a ResourceRef,
    reason: &'a str,
}

/// One entry of the render output.
enum Entry<'a> {
    Item(&'a str, &'a Value),
    Unplaced(&'a str, &'a ResourceRef, &'a str),
    /// Placed, but Karmada's `suspension` keeps it from the cluster.
    Suspended(&'a str, &'a ResourceRef, &'a str),
}

/// Visits every placed object (cluster by cluster: implied namespaces, then resources in
/// order), then every unplaced pair, then every suspended one. Objects that fail at render
/// time are reported as unplaced. Memory stays bounded by one object plus the (rare) render
/// failures.
fn visit(
    fleet: &Fleet,
    clusters: &[usize],
    mut emit: impl FnMut(Entry<'_>) -> io::Result<()>,
) -> io::Result<()> {
    let mut failures: Vec<(usize, usize, String)> = Vec::new();
    for &c in clusters {
        let Some(cluster) = fleet.clusters.get(c) else {
            continue;
        };
        for ns in fleet.implied_namespaces(c) {
            emit(Entry::Item(&cluster.name, &ns))?;
        }
        for r in 0..fleet.resources.len() {
            if !fleet.is_placed(r, c) || fleet.suspended_reason(r, c).is_some() {
                continue;
            }
            match fleet.decide(r, c) {
                Decision::Placed { object, .. } => emit(Entry::Item(&cluster.name, &object))?,
                Decision::Suspended { .. } => {}
                Decision::NotPlaced { reason } => failures.push((c, r, reason)),
            }
        }
    }
    for &c in clusters {
        let Some(cluster) = fleet.clusters.get(c) else {
            continue;
        };
        for (r, res) in fleet.resources.iter().enumerate() {
            if let Some(reason) = fleet.unplaced_reason(r, c) {
                emit(Entry::Unplaced(&cluster.name, &res.target, reason))?;
            } else if let Some((_, _, reason)) =
                failures.iter().find(|(fc, fr, _)| *fc == c && *fr == r)
            {
                emit(Entry::Unplaced(&cluster.name, &res.target, reason))?;
            }
        }
    }
    for &c in clusters {
        let Some(cluster) = fleet.clusters.get(c) else {
            continue;
        };
        for (r, res) in fleet.resources.iter().enumerate() {
            if let Some(reason) = fleet.suspended_reason(r, c) {
                emit(Entry::Suspended(&cluster.name, &res.target, reason))?;
            }
        }
    }
    Ok(())
}

/// The render held in memory, for a caller that reshapes it (a hub's render of its own
/// templates): every placed object with its cluster's name, then every unplaced and every
/// suspended (cluster, resource) pair with the reason, in the order the writers use.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    pub items: Vec<(String, Value)>,
    pub unplaced: Vec<(String, ResourceRef, String)>,
    pub suspended: Vec<(String, ResourceRef, String)>,
}

/// Renders `clusters` of `fleet` into memory, as [`write_json`] writes them (Secret values as
/// the fleet has them: the caller masks).
pub fn rendered(fleet: &Fleet, clusters: &[usize]) -> Rendered {
    let mut out = Rendered::default();
    let pair = |cluster: &str, resource: &ResourceRef, reason: &str| {
        (cluster.to_string(), resource.clone(), reason.to_string())
    };
    // Collecting into memory cannot fail: the visitor's only errors are the writer's.
    let _ = visit(fleet, clusters, |entry| {
        match entry {
            Entry::Item(cluster, object) => out.items.push((cluster.to_string(), object.clone())),
            Entry::Unplaced(cluster, resource, reason) => {
                out.unplaced.push(pair(cluster, resource, reason))
            }
            Entry::Suspended(cluster, resource, reason) => {
                out.suspended.push(pair(cluster, resource, reason))
            }
        }
        Ok(())
    });
    out
}

/// Whether Secret values are written as they are or masked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecretValues {
    /// `***` in place of every value of a Secret's `data` and `stringData` (the default).
    #[default]
    Masked,
    /// As the fleet has them (`render --show-secrets`).
    Shown,
}

impl SecretValues {
    fn apply(self, object: &Value) -> Cow<'_, Value> {
        match self {
            SecretValues::Masked if secrets::holds_secrets(object) => {
                Cow::Owned(secrets::mask(object))
            }
            _ => Cow::Borrowed(object),
        }
    }
}

/// One rendered variant of a resource: its (replicas, override set) key and its JSON bytes, or
/// the reason it failed to render.
type Variant = ((i32, u32), Result<Vec<u8>, String>);

/// Most distinct objects (replicas × override set) cached per resource while writing JSON.
const VARIANTS_PER_RESOURCE: usize = 64;

/// Writes the render contract as JSON, one item per line, streaming cluster by cluster. A
/// fleet with cells that Karmada's `suspension` holds back gets a third list, `suspended`
/// (cluster, resource, reason, like `unplaced`); those objects are not among the items, as
/// the clusters do not get them. Without such cells the document has only the two lists.
///
/// Cells of one resource that share replicas and override set render the same object, so
/// each such variant is serialized once and its bytes reused; the cache is bounded by
/// resources × [`VARIANTS_PER_RESOURCE`], never by clusters × resources. Secret values are
/// written as `secret_values` says.
pub fn write_json(
    fleet: &Fleet,
    clusters: &[usize],
    secret_values: SecretValues,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 16, out);
    let json = |v: &dyn erased::Ser| -> io::Result<Vec<u8>> { v.bytes() };
    let names: Vec<Vec<u8>> = fleet
        .clusters
        .iter()
        .map(|c| json(&c.name.as_str()))
        .collect::<io::Result<_>>()?;
    let mut cache: Vec<Vec<Variant>> = vec![Vec::new(); fleet.resources.len()];
    let mut failures: Vec<(usize, usize, String)> = Vec::new();
    let mut items = 0usize;
    let mut item =
        |out: &mut io::BufWriter<&mut dyn Write>, c: usize, object: &[u8]| -> io::Result<()> {
            out.write_all(if items == 0 {
                b"\n{\"cluster\":"
            } else {
                b",\n{\"cluster\":"
            })?;
            items += 1;
            out.write_all(&names[c])?;
            out.write_all(b",\"object\":")?;
            out.write_all(object)?;
            out.write_all(b"}")
        };
    out.write_all(b"{\"items\":[")?;
    for &c in clusters {
        if c >= fleet.clusters.len() {
            continue;
        }
        for ns in fleet.implied_namespaces(c) {
            let bytes = json(&ns)?;
            item(&mut out, c, &bytes)?;
        }
        for (r, slot) in cache.iter_mut().enumerate() {
            let Some(key) = fleet.variant(r, c) else {
                continue;
            };
            if fleet.suspended_reason(r, c).is_some() {
                continue;
            }
            let found = slot.iter().position(|(k, _)| *k == key);
            let rendered = match found {
                Some(i) => &slot[i].1,
                None => {
                    let value = match fleet.decide(r, c) {
                        Decision::Placed { object, .. } => {
                            Ok(json(secret_values.apply(&object).as_ref())?)
                        }
                        Decision::Suspended { reason, .. } | Decision::NotPlaced { reason } => {
                            Err(reason)
                        }
                    };
                    if slot.len() < VARIANTS_PER_RESOURCE {
                        slot.push((key, value));
                        &slot[slot.len() - 1].1
                    } else {
                        match value {
                            Ok(bytes) => {
                                item(&mut out, c, &bytes)?;
                                continue;
                            }
                            Err(reason) => {
                                failures.push((c, r, reason));
                                continue;
                            }
                        }
                    }
                }
            };
            match rendered {
                Ok(bytes) => item(&mut out, c, bytes)?,
                Err(reason) => failures.push((c, r, reason.clone())),
            }
        }
    }
    drop(cache);
    let refs: Vec<Vec<u8>> = fleet
        .resources
        .iter()
        .map(|r| json(&r.target))
        .collect::<io::Result<_>>()?;
    let mut unplaced = 0usize;
    for &c in clusters {
        if c >= fleet.clusters.len() {
            continue;
        }
        for (r, resource_json) in refs.iter().enumerate() {
            let reason = match fleet.unplaced_reason(r, c) {
                Some(reason) => reason,
                None => match failures.iter().find(|(fc, fr, _)| *fc == c && *fr == r) {
                    Some((_, _, reason)) => reason.as_str(),
                    None => continue,
                },
            };
            if unplaced == 0 {
                out.write_all(if items == 0 {
                    b"],\"unplaced\":[\n"
                } else {
                    b"\n],\"unplaced\":[\n"
                })?;
            } else {
                out.write_all(b",\n")?;
            }
            unplaced += 1;
            out.write_all(b"{\"cluster\":")?;
            out.write_all(&names[c])?;
            out.write_all(b",\"resource\":")?;
            out.write_all(resource_json)?;
            out.write_all(b",\"reason\":")?;
            serde_json::to_writer(&mut out, reason).map_err(io::Error::other)?;
            out.write_all(b"}")?;
        }
    }
    if unplaced == 0 {
        out.write_all(if items == 0 {
            b"],\"unplaced\":[]"
        } else {
            b"\n],\"unplaced\":[]"
        })?;
    } else {
        out.write_all(b"\n]")?;
    }
    let mut suspended = 0usize;
    for &c in clusters {
        if c >= fleet.clusters.len() {
            continue;
        }
        for (r, resource_json) in refs.iter().enumerate() {
            let Some(reason) = fleet.suspended_reason(r, c) else {
                continue;
            };
            out.write_all(if suspended == 0 {
                b",\"suspended\":[\n"
            } else {
                b",\n"
            })?;
            suspended += 1;
            out.write_all(b"{\"cluster\":")?;
            out.write_all(&names[c])?;
            out.write_all(b",\"resource\":")?;
            out.write_all(resource_json)?;
            out.write_all(b",\"reason\":")?;
            serde_json::to_writer(&mut out, reason).map_err(io::Error::other)?;
            out.write_all(b"}")?;
        }
    }
    out.write_all(if suspended == 0 { b"}\n" } else { b"\n]}\n" })?;
    out.flush()
}

/// Serializes anything to JSON bytes behind one signature (keeps the writer's closure simple).
mod erased {
    use std::io;

    pub trait Ser {
        fn bytes(&self) -> io::Result<Vec<u8>>;
    }

    impl<T: serde::Serialize + ?Sized> Ser for T {
        fn bytes(&self) -> io::Result<Vec<u8>> {
            serde_json::to_vec(self).map_err(io::Error::other)
        }
    }
}

fn yaml_entry<T: Serialize>(value: &T) -> io::Result<String> {
    serde_saphyr::to_string(&[value]).map_err(io::Error::other)
}

/// Writes the render contract as YAML (same structure as the JSON), streaming, with Secret
/// values as `secret_values` says.
pub fn write_yaml(
    fleet: &Fleet,
    clusters: &[usize],
    secret_values: SecretValues,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 16, out);
    out.write_all(b"items:")?;
    let mut items = 0usize;
    let mut unplaced = 0usize;
    let mut suspended = 0usize;
    visit(fleet, clusters, |entry| match entry {
        Entry::Item(cluster, object) => {
            if items == 0 {
                out.write_all(b"\n")?;
            }
            items += 1;
            let object = secret_values.apply(object);
            out.write_all(
                yaml_entry(&Item {
                    cluster,
                    object: object.as_ref(),
                })?
                .as_bytes(),
            )
        }
        Entry::Unplaced(cluster, resource, reason) => {
            if unplaced == 0 {
                out.write_all(if items == 0 {
                    b" []\nunplaced:\n"
                } else {
                    b"unplaced:\n"
                })?;
            }
            unplaced += 1;
            out.write_all(
                yaml_entry(&Unplaced {
                    cluster,
                    resource,
                    reason,
                })?
                .as_bytes(),
            )
        }
        Entry::Suspended(cluster, resource, reason) => {
            if suspended == 0 {
                if unplaced == 0 {
                    out.write_all(empty_unplaced(items))?;
                }
                out.write_all(b"suspended:\n")?;
            }
            suspended += 1;
            out.write_all(
                yaml_entry(&Unplaced {
                    cluster,
                    resource,
                    reason,
                })?
                .as_bytes(),
            )
        }
    })?;
    if suspended == 0 && unplaced == 0 {
        out.write_all(empty_unplaced(items))?;
    }
    out.flush()
}

/// The `unplaced` key with no entries, after `items` entries.
fn empty_unplaced(items: usize) -> &'static [u8] {
    if items == 0 {
        b" []\nunplaced: []\n"
    } else {
        b"unplaced: []\n"
    }
}

/// Replicas of a placed variant, or why it failed to render.
type Outcome = Result<Option<i64>, String>;

/// Counts one unplaced cell under its reason, keeping the first three as examples.
fn note(
    reasons: &mut BTreeMap<String, (usize, Vec<String>)>,
    reason: &str,
    example: impl FnOnce() -> String,
) {
    let entry = match reasons.get_mut(reason) {
        Some(entry) => entry,
        None => reasons.entry(reason.to_string()).or_default(),
    };
    entry.0 += 1;
    if entry.1.len() < 3 {
        entry.1.push(example());
    }
}

/// Above this many clusters the table shows counts instead of one column per cluster.
pub const MATRIX_MAX_CLUSTERS: usize = 16;

/// The placement column is cut to this many characters, so the table stays readable.
const PLACEMENT_WIDTH: usize = 36;

fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    text.chars().take(width - 1).chain(['…']).collect()
}

/// `render`'s table: a resources × clusters summary, as data for the command's table writer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub header: Vec<String>,
    /// One row per resource; its first cell is the resource's key.
    pub rows: Vec<Vec<String>>,
    /// Lines after the rows: the counts, the legend of cluster columns, the reasons.
    pub notes: Vec<String>,
}

/// A resources × clusters summary: one row per resource with its placement, how many
/// clusters it reaches and its replicas; one column per cluster when there are few; then the
/// reasons for unplaced cells, grouped. Names and reasons come from fleet data: their control
/// characters are escaped, so the table cannot drive the terminal.
pub fn summary(fleet: &Fleet, clusters: &[usize]) -> Summary {
    let matrix = clusters.len() <= MATRIX_MAX_CLUSTERS;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header = vec![
        "RESOURCE".to_string(),
        "DIALECT".into(),
        "PLACEMENT".into(),
        "PLACED".into(),
        "REPLICAS".into(),
    ];
    if matrix {
        header.extend((1..=clusters.len()).map(|i| i.to_string()));
    }
    // Reason → (cells, a few examples): bounded by the number of distinct reasons.
    let mut reasons: BTreeMap<String, (usize, Vec<String>)> = BTreeMap::new();
    let mut suspended: BTreeMap<String, (usize, Vec<String>)> = BTreeMap::new();
    for (r, res) in fleet.resources.iter().enumerate() {
        let mut placed = 0;
        let mut total_replicas: Option<i64> = None;
        let mut cells = Vec::new();
        // Replicas depend only on the (replicas, override set) variant: decide once per variant.
        let mut variants: Vec<((i32, u32), Outcome)> = Vec::new();
        for &c in clusters {
            let name = fleet.clusters.get(c).map(|x| x.name.as_str()).unwrap_or("");
            if let Some(reason) = fleet.unplaced_reason(r, c) {
                note(&mut reasons, reason, || format!("{}@{name}", res.target));
                cells.push("·".to_string());
                continue;
            }
            if let Some(reason) = fleet.suspended_reason(r, c) {
                note(&mut suspended, reason, || format!("{}@{name}", res.target));
                cells.push("‖".to_string());
                continue;
            }
            let key = fleet.variant(r, c).unwrap_or((-1, 0));
            let outcome = match variants.iter().find(|(k, _)| *k == key) {
                Some((_, outcome)) => outcome.clone(),
                None => {
                    let outcome = match fleet.decide(r, c) {
                        Decision::Placed { replicas, .. } => Ok(replicas),
                        Decision::Suspended { reason, .. } | Decision::NotPlaced { reason } => {
                            Err(reason)
                        }
                    };
                    if variants.len() < VARIANTS_PER_RESOURCE {
                        variants.push((key, outcome.clone()));
                    }
                    outcome
                }
            };
            match outcome {
                Ok(replicas) => {
                    placed += 1;
                    if let Some(n) = replicas {
                        *total_replicas.get_or_insert(0) += n;
                        cells.push(n.to_string());
                    } else {
                        cells.push("✓".into());
                    }
                }
                Err(reason) => {
                    note(&mut reasons, &reason, || format!("{}@{name}", res.target));
                    cells.push("!".into());
                }
            }
        }
        let mut row = vec![
            printable(&res.target.display_key(), false),
            res.dialect.to_string(),
            cut(
                &printable(&fleet.placement_summary(r), false),
                PLACEMENT_WIDTH,
            ),
            format!("{placed}/{}", clusters.len()),
            total_replicas
                .map(|n| n.to_string())
                .unwrap_or_else(|| "-".into()),
        ];
        if matrix {
            row.extend(cells);
        }
        rows.push(row);
    }
    let mut notes = vec![
        String::new(),
        format!(
            "{} resources × {} clusters",
            fleet.resources.len(),
            clusters.len()
        ),
    ];
    if matrix && !clusters.is_empty() {
        notes.push(format!(
            "clusters (columns; a number is the replicas placed there, ✓ placed, · not placed{}):",
            if suspended.is_empty() {
                ""
            } else {
                ", ‖ suspended"
            }
        ));
        for (i, &c) in clusters.iter().enumerate() {
            if let Some(cluster) = fleet.clusters.get(c) {
                let taints: Vec<String> = cluster.taints.iter().map(|t| t.to_string()).collect();
                notes.push(format!(
                    "  {:>2}  {}{}",
                    i + 1,
                    printable(&cluster.name, false),
                    if taints.is_empty() {
                        String::new()
                    } else {
                        printable(&format!("  (taint {})", taints.join(", ")), false)
                    }
                ));
            }
        }
    }
    for (title, reasons) in [
        ("not placed, by reason:", reasons),
        (
            "suspended (placed, held back from the cluster), by reason:",
            suspended,
        ),
    ] {
        if reasons.is_empty() {
            continue;
        }
        notes.push(title.to_string());
        let mut grouped: Vec<(String, (usize, Vec<String>))> = reasons.into_iter().collect();
        grouped.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(&b.0)));
        for (reason, (count, examples)) in grouped {
            let shown: Vec<String> = examples.iter().map(|e| printable(e, false)).collect();
            let more = if count > examples.len() {
                format!(", … {} more", count - examples.len())
            } else {
                String::new()
            };
            notes.push(format!("  {count:>5}  {}", printable(&reason, false)));
            notes.push(format!("         e.g. {}{more}", shown.join(", ")));
        }
    }
    Summary {
        header,
        rows,
        notes,
    }
}
