//! Explains one (resource, cluster) cell in words: which policy or placement decided, the
//! filter that kept the cluster out (affinity, taint, namespace), replicas and the overrides
//! applied in order. It must not change placement; it only reads the plan.

use serde_json::Value;

use crate::engine::fleet::decide::Fleet;
use crate::engine::fleet::plan::{Cell, Origin};
use crate::engine::place::selector::untolerated_taint;
use crate::model::Dialect;

/// Why a resource is (or is not) on a cluster, for people.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Explanation {
    pub placed: bool,
    /// The NotPlaced reason, or a one-line summary of why it is placed.
    pub reason: String,
    pub steps: Vec<String>,
}

impl Fleet {
    /// Explains `resource` on `cluster`.
    pub fn explain(&self, resource: usize, cluster: usize) -> Explanation {
        let (Some(plan), Some(res), Some(c)) = (
            self.plans.get(resource),
            self.resources.get(resource),
            self.clusters.get(cluster),
        ) else {
            return Explanation {
                placed: false,
                reason: "no such resource or cluster".into(),
                steps: Vec::new(),
            };
        };
        let mut steps = vec![format!(
            "{} ({} dialect, {}) on cluster {}",
            res.target, res.dialect, res.source, c.name
        )];
        steps.extend(
            plan.shared_steps
                .iter()
                .flat_map(|s| s.iter())
                .chain(&plan.steps)
                .cloned(),
        );
        if let Origin::Karmada { policy: Some(p) } = &plan.origin
            && let Some(policy) = self.propagation.get(*p)
        {
            if !c.taints.is_empty() {
                match untolerated_taint(c, &policy.placement.tolerations) {
                    Some(t) => steps.push(format!(
                        "taint {t} is not tolerated by {}",
                        policy.display_name()
                    )),
                    None => {
                        let taints: Vec<String> = c.taints.iter().map(|t| t.to_string()).collect();
                        steps.push(format!(
                            "taints {} are tolerated (or only PreferNoSchedule)",
                            taints.join(", ")
                        ));
                    }
                }
            }
            if let Some(w) = plan.weights.get(cluster).filter(|w| **w > 0) {
                let sum: i64 = plan.weights.iter().sum();
                steps.push(format!("static weight of this cluster: {w} of {sum}"));
            }
        }
        let needed_by = plan.required_on(cluster);
        let (scripted, found): (Vec<_>, Vec<_>) = plan
            .requirements_on(cluster)
            .partition(|r| r.script.is_some());
        if !found.is_empty() {
            let names: Vec<&str> = found.iter().map(|r| r.workload.as_str()).collect();
            steps.push(format!(
                "needed here by {} (propagateDeps): Karmada's default interpreter finds it in the pod template",
                names.join(", ")
            ));
        }
        for r in scripted {
            steps.push(format!(
                "needed here by {} (propagateDeps): its GetDependencies ({}) names it",
                r.workload,
                r.script.as_deref().unwrap_or_default()
            ));
        }
        if let Some(resolution) = plan.conflict_resolution {
            steps.push(resolution.describe());
        }
        if res.dialect == Dialect::Karmada || plan.follows_namespace {
            steps.push("flotilla treats every inventory cluster as joined and Ready; upstream would also skip NotReady clusters through automatic taints".into());
        }
        match plan.cells.get(cluster) {
            Some(Cell::NotPlaced(i)) => {
                let reason = plan
                    .reasons
                    .get(*i as usize)
                    .cloned()
                    .unwrap_or_else(|| "not placed".into());
                steps.push(format!("not placed: {reason}"));
                Explanation {
                    placed: false,
                    reason,
                    steps,
                }
            }
            Some(Cell::Placed { replicas, set }) => {
                let mut trace = Vec::new();
                let result = self.render(plan, *replicas, *set, Some(&mut trace));
                if *replicas >= 0 && plan.replica_path.is_some() {
                    steps.push(format!("replicas before overrides: {replicas}"));
                }
                if trace.is_empty() {
                    steps.push("no override applies to this cluster".into());
                } else {
                    steps.push(format!("{} override step(s), in order:", trace.len()));
                    steps.extend(trace.into_iter().map(|t| format!("  {t}")));
                }
                match result {
                    Ok(obj) => {
                        if let Some(r) = plan
                            .replica_path
                            .and_then(|p| obj.pointer(p))
                            .and_then(Value::as_i64)
                        {
                            steps.push(format!("replicas on this cluster: {r}"));
                        }
                        let dependency_only =
                            plan.dependency_only.get(cluster).copied().unwrap_or(false);
                        let reason = match &plan.origin {
                            _ if plan.suspended(cluster) => plan.suspended_reason.clone(),
                            _ if dependency_only && !needed_by.is_empty() => format!(
                                "placed as a dependency of {} (propagateDeps)",
                                needed_by.join(", ")
                            ),
                            Origin::Karmada { policy: Some(p) } => format!(
                                "placed by {}",
                                self.propagation
                                    .get(*p)
                                    .map(|p| p.display_name())
                                    .unwrap_or_default()
                            ),
                            Origin::Karmada { policy: None } => {
                                "placed: objects of this namespace are placed here".into()
                            }
                            _ => format!("placed by {}", plan.source_key),
                        };
                        if plan.suspended(cluster) {
                            steps.push(format!(
                                "{}; the Work keeps the object below, and the cluster does not get it until the suspension is lifted",
                                plan.suspended_reason
                            ));
                        }
                        Explanation {
                            placed: true,
                            reason,
                            steps,
                        }
                    }
                    Err(reason) => {
                        steps.push(format!("not placed: {reason}"));
                        Explanation {
                            placed: false,
                            reason,
                            steps,
                        }
                    }
                }
            }
            None => Explanation {
                placed: false,
                reason: "no such cluster".into(),
                steps,
            },
        }
    }
}
