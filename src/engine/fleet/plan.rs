//! A resource's plan, computed once when the fleet is assembled: placement per cluster
//! (compactly), the reasons for clusters left out, the distinct override sequences, where
//! replicas live for its kind, and the ownership marker every rendered object carries. It
//! holds data and small helpers only; it must not parse documents or decide placement.

use crate::engine::dialect::karmada_behaviour::ConflictResolution;
use crate::engine::document::metadata;
use serde_json::{Map, Value};

pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
pub const MANAGED_BY_VALUE: &str = "flotilla";
pub const SOURCE_ANNOTATION: &str = "flotilla.dev/source";

/// Placement of one resource on one cluster, compactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cell {
    /// `replicas` < 0 means the kind has none (or they are left as the template says).
    Placed {
        replicas: i32,
        set: u32,
    },
    NotPlaced(u32),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum OverrideSet {
    None,
    /// (override policy, rule) pairs in application order.
    Karmada(Vec<(u32, u32)>),
    /// Index into the plan's KubeFed overrides.
    KubeFed(usize),
}

#[derive(Debug, Clone)]
pub(crate) enum Origin {
    Karmada {
        /// Index into the fleet's propagation policies; `None` when unclaimed.
        policy: Option<usize>,
    },
    KubeFed {
        overrides: Vec<crate::engine::dialect::kubefed::ClusterOverride>,
        /// A ReplicaSchedulingPreference owns `/spec/replicas`.
        rsp: bool,
    },
    /// A resource that could not be read; every cell says why.
    Invalid,
}

/// Everything needed to render one resource on any cluster.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The member object before per-cluster replicas and overrides; marker included. Shared
    /// with the document's memo, so re-reading an unchanged template copies nothing.
    pub base: std::sync::Arc<Value>,
    /// Per cluster; shared between plans that place alike (a policy's templates without
    /// overrides), written through `Arc::make_mut`.
    pub cells: std::sync::Arc<Vec<Cell>>,
    /// Why cells are not placed, by index; shared between the plans a policy places alike.
    pub reasons: std::sync::Arc<Vec<String>>,
    pub sets: Vec<OverrideSet>,
    /// The explanation's first steps, shared by every template with the same candidate
    /// policies and schedule; [`Plan::steps`] follow them.
    pub shared_steps: Option<std::sync::Arc<[String]>>,
    /// The explanation's steps of this plan alone.
    pub steps: Vec<String>,
    pub summary: std::sync::Arc<str>,
    pub replica_path: Option<&'static str>,
    /// A custom kind whose replicas a fleet's Karmada interpreter reads (`GetReplicas`):
    /// its `ReviseReplica` script, if any, sets each cluster's share.
    pub interpreted: Option<Option<crate::engine::interpreter::Script>>,
    /// Karmada static weights per cluster when replicas were divided.
    pub weights: Vec<i64>,
    pub origin: Origin,
    pub source_key: String,
    /// A Karmada Namespace template no policy claims: placed where its objects are.
    pub follows_namespace: bool,
    /// Karmada: what happens to an object already on a member without Karmada's label.
    pub conflict_resolution: Option<ConflictResolution>,
    /// Karmada `suspension`: per cluster, whether a placed cell is held back (empty: none).
    pub suspended: Vec<bool>,
    /// Why the suspended cells are held back.
    pub suspended_reason: String,
    /// Karmada `propagateDeps`: the workloads that pull this object along, and where.
    pub required_by: Vec<RequiredBy>,
    /// Per cluster, whether the cell is placed only because a workload needs it (empty: none).
    pub dependency_only: Vec<bool>,
}

/// One workload whose policy has `propagateDeps: true` and that references this object.
#[derive(Debug, Clone, PartialEq)]
pub struct RequiredBy {
    /// e.g. `Deployment shop/web`.
    pub workload: String,
    /// The clusters the workload is scheduled to.
    pub clusters: Vec<bool>,
    pub conflict_resolution: ConflictResolution,
    /// The `GetDependencies` script that named this object (its origin, `file:line`); `None`
    /// when Karmada's default interpreter found it in the workload's pod template.
    pub script: Option<String>,
}

impl Plan {
    /// The cells of a plan that places nowhere, for `clusters` clusters: made once per
    /// fleet and shared until a plan writes its own.
    pub(super) fn nowhere(clusters: usize) -> std::sync::Arc<Vec<Cell>> {
        std::sync::Arc::new(vec![Cell::NotPlaced(0); clusters])
    }

    /// A plan placing nowhere yet: `nowhere` is a shared vector of `NotPlaced(0)` cells, one
    /// per cluster (see [`Plan::nowhere`]).
    pub(super) fn new(
        base: impl Into<std::sync::Arc<Value>>,
        nowhere: &std::sync::Arc<Vec<Cell>>,
        origin: Origin,
        source_key: String,
    ) -> Plan {
        Plan {
            base: base.into(),
            cells: nowhere.clone(),
            reasons: Default::default(),
            sets: vec![OverrideSet::None],
            shared_steps: None,
            steps: Vec::new(),
            summary: "".into(),
            replica_path: None,
            interpreted: None,
            weights: Vec::new(),
            origin,
            source_key,
            follows_namespace: false,
            conflict_resolution: None,
            suspended: Vec::new(),
            suspended_reason: String::new(),
            required_by: Vec::new(),
            dependency_only: Vec::new(),
        }
    }

    pub(super) fn reason(&mut self, text: String) -> u32 {
        if let Some(pos) = self.reasons.iter().position(|r| *r == text) {
            return pos as u32;
        }
        std::sync::Arc::make_mut(&mut self.reasons).push(text);
        (self.reasons.len() - 1) as u32
    }

    pub(super) fn not_placed_everywhere(&mut self, text: String) {
        let idx = self.reason(text);
        for cell in std::sync::Arc::make_mut(&mut self.cells) {
            *cell = Cell::NotPlaced(idx);
        }
    }

    pub fn placed(&self, cluster: usize) -> bool {
        matches!(self.cells.get(cluster), Some(Cell::Placed { .. }))
    }

    /// Whether a placed cell is held back by Karmada's `suspension`.
    pub fn suspended(&self, cluster: usize) -> bool {
        self.suspended.get(cluster).copied().unwrap_or(false) && self.placed(cluster)
    }

    /// The workloads that need this object on `cluster` (propagateDeps), by name.
    pub fn required_on(&self, cluster: usize) -> Vec<&str> {
        self.requirements_on(cluster)
            .map(|r| r.workload.as_str())
            .collect()
    }

    /// The workloads that need this object on `cluster` (propagateDeps).
    pub fn requirements_on(&self, cluster: usize) -> impl Iterator<Item = &RequiredBy> {
        self.required_by
            .iter()
            .filter(move |r| r.clusters.get(cluster).copied().unwrap_or(false))
    }
}

/// Which field holds replicas for a kind, as Karmada's default interpreter reads it.
pub(crate) fn replica_path(kind: &str) -> Option<&'static str> {
    match kind {
        "Deployment" | "StatefulSet" | "ReplicaSet" => Some("/spec/replicas"),
        "Job" => Some("/spec/parallelism"),
        _ => None,
    }
}

/// Sets a value at a pointer, creating missing objects on the way; nothing at a string that
/// is not a JSON pointer.
pub(crate) fn set_path(obj: &mut Value, pointer: &str, value: Value) {
    let mut current = obj;
    let Ok(pointer) = jsonptr::Pointer::parse(pointer) else {
        return;
    };
    let tokens: Vec<String> = pointer
        .tokens()
        .map(|token| token.decoded().into_owned())
        .collect();
    for (i, token) in tokens.iter().enumerate() {
        let Some(map) = current.as_object_mut() else {
            return;
        };
        if i + 1 == tokens.len() {
            map.insert(token.clone(), value);
            return;
        }
        current = map
            .entry(token.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        if current.is_null() {
            *current = Value::Object(Map::new());
        }
    }
}

/// Adds the ownership marker (design §4).
pub(crate) fn mark(obj: &mut Value, source: &str) {
    metadata::set_entry(obj, "labels", MANAGED_BY_LABEL, MANAGED_BY_VALUE);
    metadata::set_entry(obj, "annotations", SOURCE_ANNOTATION, source);
}

/// Where the plans of a fleet assembled without errors came from, so an edit of one policy
/// can be assembled from it (see `fleet::reload`): positions are in the fleet's parsed
/// documents.
#[derive(Debug)]
pub(crate) struct Provenance {
    /// Per resource, the document of a Karmada template (`None` for anything else).
    pub template_docs: Vec<Option<u32>>,
    /// Per PropagationPolicy, in the fleet's order, its document.
    pub policy_docs: Vec<Option<u32>>,
    /// Per override policy, in the fleet's order, the file that declares it.
    pub override_files: Vec<String>,
}

/// Namespaces Karmada would create on member clusters for the namespaced templates it places.
#[derive(Debug, Clone)]
pub(crate) struct ImpliedNamespace {
    pub name: String,
    pub members: Vec<usize>,
    /// Resources that render this Namespace themselves (a template or a FederatedNamespace).
    pub renderers: Vec<usize>,
}
