//! What every Karmada template of a fleet is planned against — its policies, interpreters,
//! override policies and clusters — and the work shared between templates: each policy's
//! schedule per replica count and each set of candidate policies' claim, worked out once. It
//! must not read documents or build plans (that is `assemble`).

use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};

use crate::engine::dialect::karmada::{OverridePolicy, Precision, PropagationPolicy};
use crate::engine::fleet::plan::{Cell, Plan};
use crate::engine::interpreter::Interpreters;
use crate::model::ClusterSpec;

/// What every Karmada template is planned against, and the schedules already computed: a
/// policy places every template with the same replica count the same way, so a policy shared
/// by 10,000 templates is scheduled once per distinct replica count, not once per template.
pub(super) struct KarmadaInputs<'a> {
    pub(super) policies: &'a [PropagationPolicy],
    pub(super) interpreters: &'a Interpreters,
    pub(super) overrides: &'a [(OverridePolicy, String)],
    pub(super) clusters: &'a [ClusterSpec],
    pub(super) schedules: std::cell::RefCell<HashMap<ScheduleKey, std::rc::Rc<Scheduled>>>,
    /// [`Plan::nowhere`] for these clusters.
    pub(super) nowhere: Arc<Vec<Cell>>,
    /// [`KarmadaInputs::claim_steps`] by candidates.
    pub(super) claims: std::cell::RefCell<HashMap<Candidates, Steps>>,
    /// [`KarmadaInputs::planned_steps`] by (claim steps, schedule), as pointers to the two
    /// (both kept above for as long as these inputs live).
    pub(super) joined: std::cell::RefCell<HashMap<(usize, usize), Steps>>,
}

/// Steps of an explanation, shared between plans.
type Steps = Arc<[String]>;

/// The policies (by index) that match a template, the chosen one first, with how precisely.
type Candidates = Vec<(usize, Precision)>;

/// A policy (by index) and a template's replica count.
type ScheduleKey = (usize, Option<i64>);

/// A policy's schedule in the plan's compact form: per cluster, placed (with replicas, no
/// override set yet) or the index of its reason.
pub(super) struct Scheduled {
    pub(super) cells: Arc<Vec<Cell>>,
    pub(super) reasons: Arc<Vec<String>>,
    pub(super) steps: Vec<String>,
    pub(super) weights: Vec<i64>,
    /// The policy's summary with this schedule's group.
    pub(super) summary: Arc<str>,
}

/// Per-cluster placements as plan cells and their distinct reasons.
pub(super) fn compact(cells: Vec<Result<Option<i64>, String>>) -> (Vec<Cell>, Vec<String>) {
    let mut reasons: Vec<String> = Vec::new();
    let mut index: HashMap<String, u32> = HashMap::new();
    let cells = cells
        .into_iter()
        .map(|cell| match cell {
            Ok(replicas) => Cell::Placed {
                replicas: replicas
                    .map(|r| i32::try_from(r).unwrap_or(i32::MAX))
                    .unwrap_or(-1),
                set: 0,
            },
            Err(reason) => Cell::NotPlaced(*index.entry(reason).or_insert_with_key(|reason| {
                reasons.push(reason.clone());
                (reasons.len() - 1) as u32
            })),
        })
        .collect();
    (cells, reasons)
}

impl<'a> KarmadaInputs<'a> {
    /// The inputs for templates placed by `policies` on `clusters`, nothing scheduled yet.
    pub(super) fn new(
        policies: &'a [PropagationPolicy],
        interpreters: &'a Interpreters,
        overrides: &'a [(OverridePolicy, String)],
        clusters: &'a [ClusterSpec],
    ) -> Self {
        KarmadaInputs {
            policies,
            interpreters,
            overrides,
            clusters,
            schedules: Default::default(),
            nowhere: Plan::nowhere(clusters.len()),
            claims: Default::default(),
            joined: Default::default(),
        }
    }

    /// The first steps of the explanation of every template claimed with `claim` and placed by
    /// `schedule`: the claim's, then the schedule's, joined once.
    pub(super) fn planned_steps(
        &self,
        claim: &Arc<[String]>,
        schedule: &std::rc::Rc<Scheduled>,
    ) -> Arc<[String]> {
        let key = (
            Arc::as_ptr(claim).cast::<String>() as usize,
            std::rc::Rc::as_ptr(schedule) as usize,
        );
        if let Some(done) = self.joined.borrow().get(&key) {
            return done.clone();
        }
        let steps: Arc<[String]> = claim.iter().chain(&schedule.steps).cloned().collect();
        self.joined.borrow_mut().insert(key, steps.clone());
        steps
    }

    /// The schedule of `policy` for a template with `replicas`, computed once.
    /// How a template came to its policy, given the policies that match it (the chosen one
    /// first): the same for every template with the same candidates, so worked out once.
    pub(super) fn claim_steps(&self, candidates: &[(usize, Precision)]) -> Arc<[String]> {
        if let Some(done) = self.claims.borrow().get(candidates) {
            return done.clone();
        }
        let policies = self.policies;
        let mut steps: Vec<String> = Vec::new();
        let Some(&(chosen, precision)) = candidates.first() else {
            return steps.into();
        };
        let policy = &policies[chosen];
        steps.push(format!(
            "claimed by {} (priority {}, matched by {precision}){}",
            policy.display_name(),
            policy.priority,
            if candidates.len() > 1 {
                ""
            } else {
                ", the only matching policy"
            }
        ));
        for &(other, prec) in candidates.iter().skip(1) {
            let o = &policies[other];
            let why = if policy.namespace.is_some() && o.namespace.is_none() {
                "a PropagationPolicy in the template's namespace always wins over ClusterPropagationPolicies".to_string()
            } else if o.priority != policy.priority {
                format!("lower priority {}", o.priority)
            } else if prec != precision {
                format!("less precise match ({prec})")
            } else {
                "same priority and precision; names sort after".to_string()
            };
            steps.push(format!(
                "also matched {}: not chosen ({why})",
                o.display_name()
            ));
        }
        steps.extend(policy.behaviour.preemption_note(candidates.len() > 1));
        steps.extend(policy.behaviour.notes.iter().cloned());
        steps.extend(policy.placement.notes.iter().cloned());
        let steps: Arc<[String]> = steps.into();
        self.claims
            .borrow_mut()
            .insert(candidates.to_vec(), steps.clone());
        steps
    }

    pub(super) fn schedule(&self, policy: usize, replicas: Option<i64>) -> std::rc::Rc<Scheduled> {
        if let Some(done) = self.schedules.borrow().get(&(policy, replicas)) {
            return done.clone();
        }
        let schedule = self.policies[policy]
            .placement
            .schedule(self.clusters, replicas);
        let (cells, reasons) = compact(schedule.cells);
        let scheduled = std::rc::Rc::new(Scheduled {
            cells: Arc::new(cells),
            reasons: Arc::new(reasons),
            steps: schedule.steps,
            weights: schedule.weights,
            summary: self.policies[policy].summary(schedule.group).into(),
        });
        self.schedules
            .borrow_mut()
            .insert((policy, replicas), scheduled.clone());
        scheduled
    }
}
