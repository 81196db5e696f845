//! What the console shows of a hub at one moment, whatever its kind: the members with the
//! health the hub reports, one row per object the hub delivers with a cell per member in the
//! hub's own words, and the per-cluster objects the hub stores in `flotilla render`'s shape.
//! Plain data and the rules that read it; it must not talk to a hub.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::model::HubKind;
use crate::model::{
    CellHealth, CellStatus, ClusterSpec, ClusterStatus, Health, HealthKind, ResourceRef,
};

/// Everything the console shows of a hub at one moment: its members and one row per object
/// the hub delivers to them, each cell in the hub's own words.
#[derive(Debug, Clone)]
pub struct HubView {
    pub kind: HubKind,
    pub clusters: Vec<(ClusterSpec, ClusterStatus)>,
    pub rows: Vec<HubRow>,
}

/// One object the hub delivers, and what the hub says of it on each member.
#[derive(Debug, Clone, PartialEq)]
pub struct HubRow {
    /// The object as members see it (the Deployment, not the hub object that wraps it).
    pub target: ResourceRef,
    /// The hub object that carries it, for messages: `ResourceBinding shop/web-deployment`.
    pub source: String,
    /// That hub object, when the hub has one per row (actions such as reschedule act on it).
    pub carrier: Option<ResourceRef>,
    /// By cluster name; a cluster without a cell is not placed.
    pub cells: BTreeMap<String, (CellStatus, Option<String>)>,
    /// Why a cluster without a cell is not placed, in the hub's terms.
    pub not_placed: String,
    /// By cluster name: the object as the hub rendered it for that cluster (Karmada's Work
    /// manifest), where the hub keeps one.
    pub objects: BTreeMap<String, serde_json::Value>,
    /// By cluster name: whether the object is doing its job there, as the hub reports it
    /// (Karmada's aggregated status, OCM's status feedback); absent where the hub says nothing.
    pub health: BTreeMap<String, CellHealth>,
}

impl HubRow {
    /// The row once the hub object behind it is gone: no cells, no objects, and why.
    pub fn gone(&self) -> HubRow {
        HubRow {
            cells: Default::default(),
            objects: Default::default(),
            health: Default::default(),
            not_placed: format!("{} is gone from the hub", self.source),
            ..self.clone()
        }
    }
}

impl HubView {
    /// One cell of the matrix: row `row` on cluster `column`, as design §4 names it. A placed
    /// cell on a member the hub cannot reach is Unreachable whatever the hub last recorded; a
    /// cell the reader marked NotPlaced (with a reason for that cluster) stays not placed.
    pub fn cell(&self, row: usize, column: usize) -> (CellStatus, Option<String>) {
        let (Some(row), Some((spec, status))) = (self.rows.get(row), self.clusters.get(column))
        else {
            return (CellStatus::NotPlaced("unknown".into()), None);
        };
        match row.cells.get(&spec.name) {
            None => (CellStatus::NotPlaced(row.not_placed.clone()), None),
            Some(cell @ (CellStatus::NotPlaced(_), _)) => cell.clone(),
            Some(_) if status.health == Health::Unreachable => {
                (CellStatus::Unreachable, Some(status.message.clone()))
            }
            Some(cell) => cell.clone(),
        }
    }

    /// The workload health the hub reports for row `row` on cluster `column`: none for a cell
    /// that is not placed, and Unknown on a member the hub cannot reach.
    pub fn health(&self, row: usize, column: usize) -> Option<CellHealth> {
        let (row, (spec, status)) = (self.rows.get(row)?, self.clusters.get(column)?);
        let health = row.health.get(&spec.name)?;
        match row.cells.get(&spec.name) {
            None | Some((CellStatus::NotPlaced(_), _)) => None,
            Some(_) if status.health == Health::Unreachable => Some(CellHealth {
                kind: HealthKind::Unknown,
                reason: format!("last reported {}; {}", health.kind.as_str(), status.message),
                since: None,
                rule: None,
            }),
            Some(_) => Some(health.clone()),
        }
    }

    /// The row showing `target`, if the hub delivers it.
    pub fn row_of(&self, target: &ResourceRef) -> Option<usize> {
        self.rows.iter().position(|row| row.target == *target)
    }

    /// Whether `other` has the same rows and columns, in the same order.
    pub fn same_layout(&self, other: &HubView) -> bool {
        self.rows.len() == other.rows.len()
            && self.clusters.len() == other.clusters.len()
            && self
                .rows
                .iter()
                .zip(&other.rows)
                .all(|(a, b)| a.target == b.target)
            && self
                .clusters
                .iter()
                .zip(&other.clusters)
                .all(|(a, b)| a.0.name == b.0.name)
    }
}

/// The per-cluster objects a hub stores, in `flotilla render`'s JSON shape (design §3). A hub
/// that keeps none (KubeFed) gets flotilla's render of its templates instead, and `note` says
/// so.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HubRender {
    /// Whose rendering the objects are, when they are not the hub's own copies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub items: Vec<RenderedObject>,
    pub unplaced: Vec<Unplaced>,
    /// What flotilla could not render of the hub's objects, in the engine's words
    /// (`file:line: field: message`), reported apart from the objects.
    #[serde(skip)]
    pub errors: Vec<String>,
}

/// One object as the hub will write it to `cluster`.
#[derive(Debug, Clone, Serialize)]
pub struct RenderedObject {
    pub cluster: String,
    pub object: serde_json::Value,
}

/// A (cluster, object) pair the hub does not place, and the hub's reason.
#[derive(Debug, Clone, Serialize)]
pub struct Unplaced {
    pub cluster: String,
    pub resource: ResourceRef,
    pub reason: String,
}

impl HubView {
    /// Every (cluster, row) pair without a cell, with the row's reason.
    pub fn unplaced(&self) -> Vec<Unplaced> {
        let mut unplaced = Vec::new();
        for (spec, _) in &self.clusters {
            for row in &self.rows {
                if !row.cells.contains_key(&spec.name) {
                    unplaced.push(Unplaced {
                        cluster: spec.name.clone(),
                        resource: row.target.clone(),
                        reason: row.not_placed.clone(),
                    });
                }
            }
        }
        unplaced
    }
}

/// The labels of the template behind each object a hub delivers, for `-l`: by kind, namespace
/// and name (a hub and the engine may spell an object's API version differently).
#[derive(Debug, Clone, Default)]
pub struct TemplateLabels(
    std::collections::HashMap<(String, Option<String>, String), serde_json::Map<String, Value>>,
);

impl TemplateLabels {
    pub fn insert(&mut self, resource: &ResourceRef, labels: serde_json::Map<String, Value>) {
        self.0.insert(key_of(resource), labels);
    }

    /// The labels of `resource`'s template; `None` when it has none (or none is known).
    pub fn of(&self, resource: &ResourceRef) -> Option<&serde_json::Map<String, Value>> {
        self.0.get(&key_of(resource))
    }
}

fn key_of(resource: &ResourceRef) -> (String, Option<String>, String) {
    (
        resource.kind.clone(),
        resource.namespace.clone(),
        resource.name.clone(),
    )
}

/// `view` in the rows and columns of `shown`: shown rows keep their index (a row that went
/// away reports as not placed), rows new on the hub follow them; clusters stay those shown.
pub fn aligned(shown: &HubView, view: HubView) -> HubView {
    let HubView {
        kind,
        clusters: read_clusters,
        rows: read_rows,
    } = view;
    let mut read_clusters: std::collections::HashMap<String, ClusterStatus> = read_clusters
        .into_iter()
        .map(|(spec, status)| (spec.name, status))
        .collect();
    let clusters = shown
        .clusters
        .iter()
        .map(|(spec, _)| {
            let status = read_clusters
                .remove(&spec.name)
                .unwrap_or_else(|| ClusterStatus {
                    health: Health::Unknown,
                    message: "no longer a member of the hub".into(),
                    ..ClusterStatus::default()
                });
            (spec.clone(), status)
        })
        .collect();
    let mut read_rows: std::collections::HashMap<ResourceRef, HubRow> = read_rows
        .into_iter()
        .map(|row| (row.target.clone(), row))
        .collect();
    let mut rows: Vec<HubRow> = shown
        .rows
        .iter()
        .map(|row| read_rows.remove(&row.target).unwrap_or_else(|| row.gone()))
        .collect();
    // New rows go last, in the hub's order, so every row the console shows keeps its index.
    let mut newcomers: Vec<HubRow> = read_rows.into_values().collect();
    sort_rows(&mut newcomers);
    rows.append(&mut newcomers);
    HubView {
        kind,
        clusters,
        rows,
    }
}

/// `view` with one row per target, in that order (a target the hub delivers nowhere gets an
/// empty row saying so).
pub fn in_rows_of(targets: &[ResourceRef], view: HubView) -> HubView {
    let rows = targets
        .iter()
        .map(|target| {
            view.rows
                .iter()
                .find(|row| row.target == *target)
                .cloned()
                .unwrap_or_else(|| HubRow {
                    target: target.clone(),
                    source: format!("{} template", view.kind.as_str()),
                    carrier: None,
                    cells: Default::default(),
                    not_placed: "no binding on the hub: no propagation policy claims it".into(),
                    objects: Default::default(),
                    health: Default::default(),
                })
        })
        .collect();
    HubView { rows, ..view }
}

/// Where a row showing `target` sorts: by namespace, name, then kind.
pub fn row_order(target: &ResourceRef) -> (&Option<String>, &str, &str) {
    (&target.namespace, &target.name, &target.kind)
}

/// Rows in a stable order (see [`row_order`]).
pub fn sort_rows(rows: &mut [HubRow]) {
    rows.sort_by(|a, b| row_order(&a.target).cmp(&row_order(&b.target)));
}
