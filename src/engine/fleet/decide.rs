//! The loaded [`Fleet`] and what it decides for one (resource, cluster) cell: the exact
//! object (base, per-cluster replicas, overrides in order, ownership marker) or why there is
//! none. Placement itself is computed once, when the fleet is assembled; this only builds.

use serde_json::Value;

use super::plan;
use crate::engine::dialect::{karmada, kubefed};
use crate::engine::document::SourceLocation;
use crate::model::{ClusterSpec, Dialect, ResourceRef};

/// A federated resource: one object the fleet wants on some clusters, in either dialect.
#[derive(Debug, Clone, PartialEq)]
pub struct FederatedResource {
    /// Identity of the object as it lands on member clusters.
    pub target: ResourceRef,
    pub dialect: Dialect,
    pub source: SourceLocation,
}

/// The loaded fleet: inventory, federated resources and the policies that place and vary them.
///
/// `clusters` are sorted by name; `resources` by (Namespaces first, namespace, name, kind).
/// Placement is computed once, in [`load_fleet`](super::assemble::load_fleet); [`Fleet::decide`] only builds the object.
#[derive(Debug, Clone, Default)]
pub struct Fleet {
    pub clusters: Vec<ClusterSpec>,
    pub resources: Vec<FederatedResource>,
    pub(in crate::engine) plans: Vec<plan::Plan>,
    pub(in crate::engine) propagation: Vec<karmada::PropagationPolicy>,
    pub(in crate::engine) overrides: Vec<karmada::OverridePolicy>,
    pub(in crate::engine) namespaces: Vec<plan::ImpliedNamespace>,
    /// Drift ignore rules (`flotilla.dev/v1alpha1 DriftIgnore`), in (namespace, name) order.
    pub ignores: Vec<crate::engine::compare::ignore::IgnoreRule>,
    /// The documents it was built from (`None` for a fleet not read from files).
    pub(in crate::engine) parsed:
        Option<std::sync::Arc<crate::engine::document::parse::ParsedDocs>>,
    /// Which document each plan came from, for a fleet assembled from `parsed` without errors.
    pub(in crate::engine) provenance: Option<std::sync::Arc<plan::Provenance>>,
    /// The fleet's Karmada `ResourceInterpreterCustomization`s, merged per target.
    pub interpreters: std::sync::Arc<crate::engine::interpreter::Interpreters>,
}

impl Fleet {
    /// Index of the cluster named `name`.
    pub fn cluster_index(&self, name: &str) -> Option<usize> {
        self.clusters
            .binary_search_by(|c| c.name.as_str().cmp(name))
            .ok()
    }

    /// Index of the resource `target`, looked for at `hint` first (its index in a fleet this
    /// one was built from by an edit, where resources seldom move).
    pub fn resource_index(&self, target: &ResourceRef, hint: usize) -> Option<usize> {
        if self.resources.get(hint).map(|r| &r.target) == Some(target) {
            return Some(hint);
        }
        self.resources.iter().position(|r| r.target == *target)
    }

    /// The labels of the resource's template as the fleet's files write them.
    pub fn template_labels(&self, resource: usize) -> Option<&serde_json::Map<String, Value>> {
        self.plans
            .get(resource)?
            .base
            .pointer("/metadata/labels")?
            .as_object()
    }

    /// The resource's template as the fleet's files write it (before placement and overrides).
    pub fn template(&self, resource: usize) -> Option<&Value> {
        self.plans.get(resource).map(|plan| plan.base.as_ref())
    }

    /// The template's status as Karmada would aggregate it from the members' live objects
    /// (`None`: the member does not hold it), by the fleet's `statusReflection` and
    /// `statusAggregation` scripts or Karmada's built-ins; `hub_template` stands in for the
    /// fleet's template where a hub holds one (its generation and status are what Karmada
    /// starts from). `None` when no rule aggregates the kind.
    pub fn aggregate_status(
        &self,
        resource: usize,
        hub_template: Option<&Value>,
        members: &[(&str, Option<&Value>)],
    ) -> Option<
        Result<
            crate::engine::interpreter::Aggregation,
            crate::engine::interpreter::InterpreterError,
        >,
    > {
        let template = hub_template.or_else(|| self.template(resource))?;
        self.interpreters.aggregate_members(template, members)
    }

    /// The fleet cut down to the resources `keep` selects, for a command scoped by
    /// `--resource`, `-n` or `-l`. Implied Namespace objects are left out: a scoped command
    /// renders what it names, not the namespaces beside it.
    pub fn narrowed(&self, keep: impl Fn(usize) -> bool) -> Fleet {
        let rows: Vec<usize> = (0..self.resources.len()).filter(|&r| keep(r)).collect();
        Fleet {
            clusters: self.clusters.clone(),
            resources: rows.iter().map(|&r| self.resources[r].clone()).collect(),
            plans: rows
                .iter()
                .filter_map(|&r| self.plans.get(r).cloned())
                .collect(),
            propagation: self.propagation.clone(),
            overrides: self.overrides.clone(),
            namespaces: Vec::new(),
            ignores: self.ignores.clone(),
            parsed: None,
            provenance: None,
            interpreters: self.interpreters.clone(),
        }
    }

    /// Whether this engine placed `resource` (false for a resource read from a hub, whose
    /// scheduler decides instead).
    pub fn plans(&self, resource: usize) -> bool {
        self.plans.get(resource).is_some()
    }

    /// Whether `resource` is placed on `cluster` (cheap: no object is built).
    pub fn is_placed(&self, resource: usize, cluster: usize) -> bool {
        self.plans.get(resource).is_some_and(|p| p.placed(cluster))
    }

    /// Why `resource` is not on `cluster`, or `None` when it is placed (cheap).
    pub fn unplaced_reason(&self, resource: usize, cluster: usize) -> Option<&str> {
        let plan = self.plans.get(resource)?;
        match plan.cells.get(cluster) {
            Some(plan::Cell::NotPlaced(i)) => Some(
                plan.reasons
                    .get(*i as usize)
                    .map(String::as_str)
                    .unwrap_or("not placed"),
            ),
            Some(plan::Cell::Placed { .. }) => None,
            None => Some("no such cluster"),
        }
    }

    /// Whether `resource` is placed on `cluster`, without rendering it: `Ok(replicas)` as
    /// scheduled (before overrides; `None` for kinds without replicas), or `Err(reason)`.
    /// [`Fleet::replicas`] gives the value after overrides.
    pub fn placement(&self, resource: usize, cluster: usize) -> Result<Option<i64>, String> {
        let plan = self
            .plans
            .get(resource)
            .ok_or_else(|| "no such resource".to_string())?;
        match plan.cells.get(cluster) {
            Some(plan::Cell::Placed { replicas, .. }) => Ok(match plan.replica_path {
                None if plan.interpreted.is_some() && *replicas >= 0 => Some(i64::from(*replicas)),
                None => None,
                Some(_) if *replicas >= 0 => Some(i64::from(*replicas)),
                Some(path) => plan.base.pointer(path).and_then(Value::as_i64),
            }),
            Some(plan::Cell::NotPlaced(i)) => Err(plan
                .reasons
                .get(*i as usize)
                .cloned()
                .unwrap_or_else(|| "not placed".into())),
            None => Err("no such cluster".into()),
        }
    }

    /// The (replicas, override set) variant of a placed cell: two cells with the same variant
    /// render the same object, so writers may serialize each variant once.
    pub(crate) fn variant(&self, resource: usize, cluster: usize) -> Option<(i32, u32)> {
        match self.plans.get(resource)?.cells.get(cluster)? {
            plan::Cell::Placed { replicas, set } => Some((*replicas, *set)),
            plan::Cell::NotPlaced(_) => None,
        }
    }

    /// The exact object `cluster` should have for `resource`, or why it has none.
    pub fn decide(&self, resource: usize, cluster: usize) -> Decision {
        let Some(plan) = self.plans.get(resource) else {
            return Decision::NotPlaced {
                reason: "no such resource".into(),
            };
        };
        match plan.cells.get(cluster) {
            None => Decision::NotPlaced {
                reason: "no such cluster".into(),
            },
            Some(plan::Cell::NotPlaced(i)) => Decision::NotPlaced {
                reason: plan
                    .reasons
                    .get(*i as usize)
                    .cloned()
                    .unwrap_or_else(|| "not placed".into()),
            },
            Some(plan::Cell::Placed { replicas, set }) => {
                match self.render(plan, *replicas, *set, None) {
                    Ok(object) => {
                        let replicas = plan
                            .replica_path
                            .and_then(|p| object.pointer(p))
                            .and_then(Value::as_i64)
                            .or_else(|| {
                                (plan.interpreted.is_some() && *replicas >= 0)
                                    .then(|| i64::from(*replicas))
                            });
                        if plan.suspended(cluster) {
                            Decision::Suspended {
                                object,
                                replicas,
                                reason: plan.suspended_reason.clone(),
                            }
                        } else {
                            Decision::Placed { object, replicas }
                        }
                    }
                    Err(reason) => Decision::NotPlaced { reason },
                }
            }
        }
    }

    /// Whether rendering `resource` with override set `set` cannot fail: a Karmada template
    /// with no overrides is its base and replicas.
    pub fn renders_surely(&self, resource: usize, set: u32) -> bool {
        self.plans.get(resource).is_some_and(|plan| {
            matches!(plan.origin, plan::Origin::Karmada { .. })
                && matches!(plan.interpreted, None | Some(None))
                && matches!(
                    plan.sets.get(set as usize),
                    None | Some(plan::OverrideSet::None)
                )
        })
    }

    /// Builds one placed object: base, replicas, overrides, marker.
    pub(super) fn render(
        &self,
        plan: &plan::Plan,
        replicas: i32,
        set: u32,
        mut trace: Option<&mut Vec<String>>,
    ) -> Result<Value, String> {
        let mut obj = Value::clone(&plan.base);
        if replicas >= 0
            && let Some(path) = plan.replica_path
        {
            plan::set_path(&mut obj, path, Value::from(replicas));
        }
        if replicas >= 0
            && let Some(Some(script)) = &plan.interpreted
        {
            obj = crate::engine::interpreter::vm::revise_replica(
                &script.origin,
                &script.text,
                &obj,
                i64::from(replicas),
                crate::engine::health::lua::Limits::default(),
            )
            .map_err(|error| format!("ReviseReplica ({}) failed: {error}", script.origin))?;
        }
        let kubefed = matches!(plan.origin, plan::Origin::KubeFed { .. });
        match plan.sets.get(set as usize) {
            // A Karmada base is marked already; a KubeFed one gets its label and mark below.
            None | Some(plan::OverrideSet::None) if !kubefed => return Ok(obj),
            None | Some(plan::OverrideSet::None) => {}
            Some(plan::OverrideSet::Karmada(seq)) => {
                for &(p, r) in seq {
                    let Some(policy) = self.overrides.get(p as usize) else {
                        continue;
                    };
                    let Some(rule) = policy.rules.get(r as usize) else {
                        continue;
                    };
                    let mut lines = Vec::new();
                    let result = rule
                        .overriders
                        .apply(&mut obj, trace.as_ref().map(|_| &mut lines));
                    if let Some(t) = trace.as_deref_mut() {
                        for line in lines {
                            t.push(format!("{} rule {r}: {line}", policy.display_name()));
                        }
                    }
                    if let Err(failure) = result {
                        return Err(format!(
                            "override failed: {} {}: {}",
                            policy.display_name(),
                            failure.field,
                            failure.message
                        ));
                    }
                }
            }
            Some(plan::OverrideSet::KubeFed(o)) => {
                if let plan::Origin::KubeFed { overrides, rsp } = &plan.origin
                    && let Some(entry) = overrides.get(*o)
                {
                    for op in &entry.ops {
                        if *rsp && op.item.path == "/spec/replicas" {
                            if let Some(t) = trace.as_deref_mut() {
                                t.push(format!(
                                    "{}: {} skipped (the ReplicaSchedulingPreference owns replicas)",
                                    op.field, op.item
                                ));
                            }
                            continue;
                        }
                        kubefed::apply_override(&op.item, &mut obj)
                            .map_err(|m| format!("ApplyOverridesFailed: {}: {m}", op.field))?;
                        if let Some(t) = trace.as_deref_mut() {
                            t.push(format!(
                                "spec.overrides (cluster {}): {}: {}",
                                entry.cluster,
                                op.field,
                                op.item
                                    .shown(crate::engine::compare::secrets::is_secret(&obj))
                            ));
                        }
                    }
                }
            }
        }
        if kubefed {
            kubefed::add_managed_label(&mut obj);
        }
        plan::mark(&mut obj, &plan.source_key);
        Ok(obj)
    }

    /// Replicas `cluster` runs for `resource` after overrides, when the kind has replicas and
    /// the resource is placed there.
    pub fn replicas(&self, resource: usize, cluster: usize) -> Option<i64> {
        let plan = self.plans.get(resource)?;
        // A kind without replicas has none wherever it is placed: nothing to render.
        if plan.replica_path.is_none() && plan.interpreted.is_none() {
            return None;
        }
        match self.decide(resource, cluster) {
            Decision::Placed { replicas, .. } => replicas,
            Decision::Suspended { .. } | Decision::NotPlaced { .. } => None,
        }
    }

    /// Why Karmada holds `resource` back from `cluster` (`suspension`), when it is placed
    /// there but not delivered (cheap: no object is built).
    pub fn suspended_reason(&self, resource: usize, cluster: usize) -> Option<&str> {
        let plan = self.plans.get(resource)?;
        plan.suspended(cluster)
            .then_some(plan.suspended_reason.as_str())
    }

    /// What Karmada does with `resource` where the member already has an object of that name
    /// without Karmada's label (`None`: not a Karmada template).
    pub fn conflict_resolution(
        &self,
        resource: usize,
    ) -> Option<crate::engine::dialect::karmada_behaviour::ConflictResolution> {
        self.plans.get(resource)?.conflict_resolution
    }

    /// Short placement description for tables: `all`, `3 clusters`, `selector env=prod`.
    pub fn placement_summary(&self, resource: usize) -> String {
        match self.plans.get(resource) {
            Some(plan) => plan.summary.to_string(),
            // A hub's row without a plan here: what carries it on the hub.
            None => self
                .resources
                .get(resource)
                .map(|r| r.source.file.clone())
                .unwrap_or_default(),
        }
    }

    /// Namespace objects Karmada would create on `cluster` for the namespaced templates it
    /// places there, unless a Namespace resource of the fleet renders them already.
    pub fn implied_namespaces(&self, cluster: usize) -> Vec<Value> {
        let mut out = Vec::new();
        for ns in &self.namespaces {
            if !ns.renderers.is_empty() && ns.renderers.iter().any(|&r| self.is_placed(r, cluster))
            {
                continue;
            }
            if ns
                .renderers
                .iter()
                .any(|&r| self.plans[r].follows_namespace)
            {
                continue;
            }
            if ns.members.iter().any(|&m| self.is_placed(m, cluster)) {
                let mut obj = serde_json::json!({
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"name": ns.name},
                });
                plan::mark(&mut obj, &format!("Namespace/{}", ns.name));
                out.push(obj);
            }
        }
        out
    }
}

/// What the engine decided for one (resource, cluster) pair.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Placed {
        /// The exact object the cluster should have, ownership marker included.
        object: Value,
        /// Replicas computed for this cluster when the resource has replicas.
        replicas: Option<i64>,
    },
    /// Placed, but Karmada's `suspension` holds the Work back: the object it keeps on the
    /// hub, which the cluster does not get.
    Suspended {
        object: Value,
        replicas: Option<i64>,
        /// Which policy suspends it, and for which clusters.
        reason: String,
    },
    NotPlaced {
        reason: String,
    },
}
