//! The fields of a Karmada (Cluster)PropagationPolicy beyond its selectors and placement:
//! those the files decide (`propagateDeps`, `suspension`, `conflictResolution`,
//! `dependentOverrides`) as data the fleet applies, and those that depend on the hub's live
//! state or history (`failover`, `preemption`, `activationPreference`, `schedulePriority`,
//! `schedulerName`, `preserveResourcesOnDeletion`, `association`) as the note explain shows,
//! so no field is dropped silently. It parses one policy document; it must not place,
//! render or look at other documents.

use std::fmt;

use serde_json::Value;

use crate::engine::document::parse::Doc;
use crate::engine::document::source::FleetError;
use crate::engine::place::selector::scalar_text;

/// The annotation on a template that overrides its policy's `conflictResolution`, and that
/// Karmada writes on every manifest of a Work (`work.karmada.io/conflict-resolution`).
pub const CONFLICT_RESOLUTION_ANNOTATION: &str = "work.karmada.io/conflict-resolution";

/// The label Karmada puts on every object it applies to a member (`karmada.io/managed`).
pub const KARMADA_MANAGED_LABEL: &str = "karmada.io/managed";

/// What Karmada does with an object that already exists on a member without its label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConflictResolution {
    /// Refuse to take it over; the Work fails to apply (the default).
    #[default]
    Abort,
    /// Take it over with the template's content.
    Overwrite,
}

impl fmt::Display for ConflictResolution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ConflictResolution::Abort => "Abort",
            ConflictResolution::Overwrite => "Overwrite",
        })
    }
}

impl ConflictResolution {
    /// The template's own annotation when it is `overwrite` or `abort` (upstream ignores any
    /// other value), else the policy's (`mergeConflictResolution` upstream).
    pub fn for_template(policy: ConflictResolution, template: &Value) -> ConflictResolution {
        use crate::engine::document::parse::get;
        match get(template, "metadata")
            .and_then(|m| get(m, "annotations"))
            .and_then(|a| get(a, CONFLICT_RESOLUTION_ANNOTATION))
            .and_then(Value::as_str)
        {
            Some("overwrite") => ConflictResolution::Overwrite,
            Some("abort") => ConflictResolution::Abort,
            _ => policy,
        }
    }

    /// One explanation line.
    pub fn describe(self) -> String {
        match self {
            ConflictResolution::Abort => "conflictResolution: Abort (the default): Karmada will not take over an object that already exists on the member without its karmada.io/managed label; that Work fails to apply".into(),
            ConflictResolution::Overwrite => "conflictResolution: Overwrite: Karmada takes over an object that already exists on the member and replaces it with this one".into(),
        }
    }
}

/// `spec.suspension`: which clusters Karmada stops delivering to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Suspension {
    /// `dispatching: true`: every cluster.
    pub all: bool,
    /// `dispatchingOnClusters.clusterNames`.
    pub clusters: Vec<String>,
}

impl Suspension {
    pub fn is_empty(&self) -> bool {
        !self.all && self.clusters.is_empty()
    }

    /// Whether delivery to `cluster` is suspended (`shouldSuspendDispatching` upstream).
    pub fn covers(&self, cluster: &str) -> bool {
        self.all || self.clusters.iter().any(|c| c == cluster)
    }

    /// The reason a suspended cell carries.
    pub fn reason(&self, policy: &str) -> String {
        if self.all {
            format!(
                "suspended: {policy} sets suspension.dispatching, so Karmada holds the Work and delivers to no cluster"
            )
        } else {
            format!(
                "suspended: {policy} sets suspension.dispatchingOnClusters [{}], so Karmada holds the Work for this cluster",
                self.clusters.join(", ")
            )
        }
    }
}

/// The policy fields beyond selectors and placement.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Behaviour {
    pub propagate_deps: bool,
    pub conflict_resolution: ConflictResolution,
    pub suspension: Suspension,
    /// OverridePolicies (in the policy's namespace) Karmada waits for before propagating.
    pub dependent_overrides: Vec<String>,
    /// `preemption`: `Some(true)` Always, `Some(false)` Never, `None` unset (Never).
    pub preempts: Option<bool>,
    /// What the fields flotilla cannot decide from the files would do, one line each.
    pub notes: Vec<String>,
}

fn text(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(scalar_text)
        .filter(|s| !s.is_empty())
}

fn names(doc: &Doc, pointer: &str, what: &str) -> Result<Vec<String>, FleetError> {
    match doc.value.pointer(pointer) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items
            .iter()
            .filter_map(scalar_text)
            .filter(|s| !s.is_empty())
            .collect()),
        Some(_) => Err(doc.error(
            pointer,
            format!("{what} must be a list of names"),
            "write e.g. `[member-1, member-2]`",
        )),
    }
}

fn flag(doc: &Doc, pointer: &str) -> Result<bool, FleetError> {
    match doc.value.pointer(pointer) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(doc.error(pointer, "must be true or false", "write `true` or `false`")),
    }
}

impl Behaviour {
    /// Reads the fields from a (Cluster)PropagationPolicy; `spec` is the pointer to its spec.
    pub fn parse(doc: &Doc, spec: &str) -> Result<Behaviour, FleetError> {
        let value = doc.value.pointer(spec).cloned().unwrap_or(Value::Null);
        let at = |field: &str| format!("{spec}/{field}");
        let mut notes = Vec::new();
        let propagate_deps = flag(doc, &at("propagateDeps"))?;
        if flag(doc, &at("association"))? {
            notes.push("association is deprecated in favour of propagateDeps, and current Karmada ignores it; flotilla does too".into());
        }
        let conflict_resolution = match text(&value, "conflictResolution").as_deref() {
            None | Some("Abort") => ConflictResolution::Abort,
            Some("Overwrite") => ConflictResolution::Overwrite,
            Some(other) => {
                return Err(doc.error(
                    &at("conflictResolution"),
                    format!("unknown conflictResolution `{other}`"),
                    "use Abort (the default) or Overwrite",
                ));
            }
        };
        let suspension = Suspension {
            all: flag(doc, &at("suspension/dispatching"))?,
            clusters: names(
                doc,
                &at("suspension/dispatchingOnClusters/clusterNames"),
                "suspension.dispatchingOnClusters.clusterNames",
            )?,
        };
        let dependent_overrides = names(doc, &at("dependentOverrides"), "dependentOverrides")?;
        let preempts = match text(&value, "preemption").as_deref() {
            None => None,
            Some("Never") => Some(false),
            Some("Always") => Some(true),
            Some(other) => {
                return Err(doc.error(
                    &at("preemption"),
                    format!("unknown preemption `{other}`"),
                    "use Never (the default) or Always",
                ));
            }
        };
        match text(&value, "activationPreference").as_deref() {
            None => {}
            Some("Lazy") => notes.push("activationPreference: Lazy: on a hub, a change to this policy reaches a template only when the template itself next changes; flotilla renders the policy as it is now".into()),
            Some(other) => {
                return Err(doc.error(
                    &at("activationPreference"),
                    format!("unknown activationPreference `{other}`"),
                    "the only value is Lazy (or leave it out)",
                ));
            }
        }
        if let Some(name) = text(&value, "schedulerName").filter(|n| n != "default-scheduler") {
            notes.push(format!("schedulerName {name}: that scheduler, not Karmada's default one, places the template on a hub; flotilla shows what the default scheduler would decide"));
        }
        if let Some(priority) = value.get("schedulePriority").filter(|v| !v.is_null()) {
            let source = text(priority, "priorityClassSource").unwrap_or_default();
            let class = text(priority, "priorityClassName").unwrap_or_default();
            notes.push(format!("schedulePriority ({source} {class}): orders the scheduler's queue on a hub and does not change where the template goes; flotilla places every template at once"));
        }
        if let Some(failover) = value.get("failover").filter(|v| !v.is_null()) {
            notes.push(failover_note(failover));
        }
        if flag(doc, &at("preserveResourcesOnDeletion"))? {
            notes.push("preserveResourcesOnDeletion: Karmada leaves the objects on the members when the template is deleted from the hub".into());
        }
        Ok(Behaviour {
            propagate_deps,
            conflict_resolution,
            suspension,
            dependent_overrides,
            preempts,
            notes,
        })
    }

    /// The `preemption` line: shown when the policy sets it, or when other policies also
    /// match the template (`contested`), where the hub's history could claim it otherwise.
    pub fn preemption_note(&self, contested: bool) -> Option<String> {
        match self.preempts {
            Some(true) => Some("preemption: Always: this policy takes templates over from policies of lower priority, as flotilla's claim from the files assumes".into()),
            Some(false) | None if contested || self.preempts.is_some() => Some("preemption: Never (the default): on a hub, a template claimed by another policy stays with it; flotilla recomputes claims from the files as if every policy had existed from the start".into()),
            _ => None,
        }
    }
}

fn failover_note(failover: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(app) = failover.get("application").filter(|v| !v.is_null()) {
        let seconds = app
            .pointer("/decisionConditions/tolerationSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(300);
        let purge = text(app, "purgeMode").unwrap_or_else(|| "Gracefully".into());
        let mut part =
            format!("application failover after {seconds}s unhealthy, purgeMode {purge}");
        if let Some(grace) = app.get("gracePeriodSeconds").and_then(Value::as_i64) {
            part.push_str(&format!(", graceful eviction within {grace}s"));
        }
        if app.get("statePreservation").is_some_and(|v| !v.is_null()) {
            part.push_str(", state preserved as labels");
        }
        parts.push(part);
    }
    if let Some(cluster) = failover.get("cluster").filter(|v| !v.is_null()) {
        let purge = text(cluster, "purgeMode").unwrap_or_else(|| "Gracefully".into());
        parts.push(format!("cluster failover, purgeMode {purge}"));
    }
    if parts.is_empty() {
        parts.push("failover with no behaviour set".into());
    }
    format!(
        "failover ({}): Karmada moves replicas away from an unhealthy application or cluster at run time; flotilla treats every cluster as Ready and healthy, so nothing moves offline (the console shows live health)",
        parts.join("; ")
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::document::parse::Doc;

    fn spec(text: &str) -> Result<Behaviour, FleetError> {
        let value: Value = serde_saphyr::from_str(text).unwrap();
        Behaviour::parse(
            &Doc::from_value("p.yaml", serde_json::json!({"spec": value})),
            "/spec",
        )
    }

    /// Follows `shouldSuspendDispatching` and `mergeConflictResolution` upstream.
    #[test]
    fn suspension_and_conflict_resolution_read_as_upstream_applies_them() {
        let b = spec("suspension: {dispatchingOnClusters: {clusterNames: [m1]}}\nconflictResolution: Overwrite\n").unwrap();
        assert!(b.suspension.covers("m1") && !b.suspension.covers("m2"));
        assert_eq!(b.conflict_resolution, ConflictResolution::Overwrite);
        let all = spec("suspension: {dispatching: true}\n").unwrap();
        assert!(all.suspension.covers("any"));
        assert_eq!(all.conflict_resolution, ConflictResolution::Abort);
        assert!(spec("{}").unwrap().suspension.is_empty());
        let annotated = serde_json::json!({"metadata": {"annotations": {CONFLICT_RESOLUTION_ANNOTATION: "overwrite"}}});
        assert_eq!(
            ConflictResolution::for_template(ConflictResolution::Abort, &annotated),
            ConflictResolution::Overwrite
        );
        let odd = serde_json::json!({"metadata": {"annotations": {CONFLICT_RESOLUTION_ANNOTATION: "maybe"}}});
        assert_eq!(
            ConflictResolution::for_template(ConflictResolution::Overwrite, &odd),
            ConflictResolution::Overwrite
        );
        assert!(spec("conflictResolution: Merge\n").is_err());
    }

    #[test]
    fn fields_that_need_the_hub_are_stated_never_dropped() {
        let b = spec(
            "preemption: Always\nactivationPreference: Lazy\nschedulerName: custom\n\
             schedulePriority: {priorityClassSource: KubePriorityClass, priorityClassName: high}\n\
             failover: {application: {decisionConditions: {tolerationSeconds: 60}, purgeMode: Directly}}\n\
             preserveResourcesOnDeletion: true\nassociation: true\n",
        )
        .unwrap();
        let mut all = b.notes.join("\n");
        all.push_str(&b.preemption_note(false).unwrap_or_default());
        for needle in [
            "preemption: Always",
            "activationPreference: Lazy",
            "schedulerName custom",
            "schedulePriority (KubePriorityClass high)",
            "application failover after 60s unhealthy, purgeMode Directly",
            "preserveResourcesOnDeletion",
            "association is deprecated",
        ] {
            assert!(all.contains(needle), "{needle} in {all}");
        }
        assert!(spec("activationPreference: Eager\n").is_err());
    }
}
