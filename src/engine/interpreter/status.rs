//! Karmada's built-in status interpretation for the built-in kinds, as its
//! `default/native/reflectstatus.go` and `aggregatestatus.go` do it: which fields of a
//! member's live status are collected (`ReflectStatus`; every other kind's whole `.status`),
//! and how the collected statuses of the members are folded into the template's status
//! (`AggregateStatus`: sums for workloads, the worst phase for Pods and volumes, the union of
//! load-balancer ingresses, a Job's conditions). Statuses are JSON as Go's typed structs
//! marshal them (`omitempty` honoured field by field). Pure functions of the objects; it must
//! not run a script (customizations go through [`super::vm`]) nor read a cluster.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// The annotation Karmada's Works stamp on a member's object: the template's generation.
pub const TEMPLATE_GENERATION: &str = "resourcetemplate.karmada.io/generation";

/// One member's collected status, as Karmada's `AggregatedStatusItem` holds it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StatusItem {
    pub cluster: String,
    /// What reflection collected; `None` when nothing was (no object, no status).
    pub status: Option<Value>,
    pub applied: bool,
    pub applied_message: String,
    /// `Healthy`, `Unhealthy` or `Unknown`; empty when not assessed.
    pub health: String,
}

impl StatusItem {
    /// The item as Go marshals it for a script: `clusterName` always, the rest when set.
    pub fn to_json(&self) -> Value {
        let mut item = Map::new();
        item.insert("clusterName".into(), Value::String(self.cluster.clone()));
        if let Some(status) = &self.status {
            item.insert("status".into(), status.clone());
        }
        if self.applied {
            item.insert("applied".into(), Value::Bool(true));
        }
        if !self.applied_message.is_empty() {
            item.insert(
                "appliedMessage".into(),
                Value::String(self.applied_message.clone()),
            );
        }
        if !self.health.is_empty() {
            item.insert("health".into(), Value::String(self.health.clone()));
        }
        Value::Object(item)
    }

    /// An item read back from Go's JSON (`statusItems` of Karmada's tests, a binding's
    /// `status.aggregatedStatus`).
    pub fn from_json(value: &Value) -> StatusItem {
        let text = |field: &str| {
            value
                .get(field)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        StatusItem {
            cluster: text("clusterName"),
            status: value.get("status").filter(|s| !s.is_null()).cloned(),
            applied: value
                .get("applied")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            applied_message: text("appliedMessage"),
            health: text("health"),
        }
    }
}

/// The kinds Karmada reflects field by field; every other kind's whole status is collected.
fn group_version_kind(object: &Value) -> (&str, &str) {
    let text = |field: &str| object.get(field).and_then(Value::as_str).unwrap_or("");
    (text("apiVersion"), text("kind"))
}

/// Karmada's built-in `ReflectStatus` of a member's live `object`: the collected status, or
/// `None` when there is nothing to collect (no status; a Service that is not a LoadBalancer;
/// a workload whose collected status is empty). An error says which field would not convert.
///
/// One departure, on purpose: Karmada fails a workload whose object lacks the
/// `resourcetemplate.karmada.io/generation` annotation (its Works always stamp it); flotilla
/// reads a missing one as generation 0, so members flotilla applied reflect too. A malformed
/// one is an error, as in Karmada.
pub fn reflect(object: &Value) -> Result<Option<Value>, String> {
    let (api_version, kind) = group_version_kind(object);
    let status = match object.get("status") {
        None | Some(Value::Null) => None,
        Some(Value::Object(status)) => Some(status),
        Some(other) => {
            return Err(format!(
                "{kind}'s status is {}, not an object",
                type_name(other)
            ));
        }
    };
    let wrapped = |fields: &[(&str, Keep)]| -> Result<Option<Value>, String> {
        let Some(status) = status else {
            return Ok(None);
        };
        let mut out = Map::new();
        put_int(&mut out, "generation", generation(object)?, Keep::OmitZero);
        put_int(
            &mut out,
            "resourceTemplateGeneration",
            template_generation(object)?,
            Keep::OmitZero,
        );
        for (field, keep) in fields {
            put_int(&mut out, field, int(status, field, kind)?, *keep);
        }
        Ok(Some(Value::Object(out)))
    };
    use Keep::{Always, OmitZero};
    match (api_version, kind) {
        ("apps/v1", "Deployment") => {
            let reflected = wrapped(&[
                ("replicas", OmitZero),
                ("updatedReplicas", OmitZero),
                ("readyReplicas", OmitZero),
                ("availableReplicas", OmitZero),
                ("unavailableReplicas", OmitZero),
                ("observedGeneration", OmitZero),
            ])?;
            Ok(reflected.filter(|s| s.as_object().is_some_and(|m| !m.is_empty())))
        }
        ("apps/v1", "ReplicaSet") => {
            let reflected = wrapped(&[
                ("replicas", Always),
                ("readyReplicas", OmitZero),
                ("availableReplicas", OmitZero),
                ("observedGeneration", OmitZero),
            ])?;
            Ok(reflected.filter(|s| s.as_object().is_some_and(|m| !m.is_empty())))
        }
        ("apps/v1", "DaemonSet") => wrapped(&[
            ("currentNumberScheduled", Always),
            ("numberMisscheduled", Always),
            ("desiredNumberScheduled", Always),
            ("numberReady", Always),
            ("observedGeneration", OmitZero),
            ("updatedNumberScheduled", OmitZero),
            ("numberAvailable", OmitZero),
            ("numberUnavailable", OmitZero),
        ]),
        ("apps/v1", "StatefulSet") => wrapped(&[
            ("replicas", Always),
            ("readyReplicas", OmitZero),
            ("currentReplicas", OmitZero),
            ("updatedReplicas", OmitZero),
            ("availableReplicas", Always),
        ]),
        ("v1", "Service") => {
            if object.pointer("/spec/type").and_then(Value::as_str) != Some("LoadBalancer") {
                return Ok(None);
            }
            let Some(status) = status else {
                return Ok(None);
            };
            let ingress = status
                .get("loadBalancer")
                .and_then(|lb| lb.get("ingress"))
                .cloned()
                .filter(|i| i.as_array().is_some_and(|a| !a.is_empty()));
            let mut load_balancer = Map::new();
            if let Some(ingress) = ingress {
                load_balancer.insert("ingress".into(), ingress);
            }
            Ok(Some(json!({"loadBalancer": load_balancer})))
        }
        ("batch/v1", "Job") => {
            let Some(status) = status else {
                return Ok(None);
            };
            let mut out = Map::new();
            for field in ["conditions", "startTime", "completionTime"] {
                if let Some(value) = status.get(field).filter(|v| !is_empty(v)) {
                    out.insert(field.into(), value.clone());
                }
            }
            for field in ["active", "succeeded", "failed"] {
                put_int(&mut out, field, int(status, field, kind)?, OmitZero);
            }
            Ok(Some(Value::Object(out)))
        }
        ("policy/v1", "PodDisruptionBudget") => {
            let Some(status) = status else {
                return Ok(None);
            };
            let mut out = Map::new();
            if let Some(pods) = status.get("disruptedPods").filter(|v| !is_empty(v)) {
                out.insert("disruptedPods".into(), pods.clone());
            }
            for field in [
                "disruptionsAllowed",
                "currentHealthy",
                "desiredHealthy",
                "expectedPods",
            ] {
                put_int(&mut out, field, int(status, field, kind)?, Always);
            }
            Ok(Some(Value::Object(out)))
        }
        ("autoscaling/v2", "HorizontalPodAutoscaler") => {
            let Some(status) = status else {
                return Ok(None);
            };
            let mut out = Map::new();
            put_int(
                &mut out,
                "currentReplicas",
                int(status, "currentReplicas", kind)?,
                OmitZero,
            );
            put_int(
                &mut out,
                "desiredReplicas",
                int(status, "desiredReplicas", kind)?,
                Always,
            );
            Ok(Some(Value::Object(out)))
        }
        _ => Ok(status.map(|s| Value::Object(s.clone()))),
    }
}

/// Whether a kind has Karmada's built-in `AggregateStatus`.
pub fn aggregates(api_version: &str, kind: &str) -> bool {
    matches!(
        (api_version, kind),
        (
            "apps/v1",
            "Deployment" | "ReplicaSet" | "DaemonSet" | "StatefulSet"
        ) | (
            "v1",
            "Service" | "Pod" | "PersistentVolume" | "PersistentVolumeClaim"
        ) | ("networking.k8s.io/v1", "Ingress")
            | ("batch/v1", "Job" | "CronJob")
            | ("policy/v1", "PodDisruptionBudget")
            | ("autoscaling/v2", "HorizontalPodAutoscaler")
    )
}

/// Karmada's built-in `AggregateStatus`: the status `template` has once its members' collected
/// `items` are folded in; `None` for a kind it has none for. The template's own status is where
/// it starts (fields the aggregation does not own are kept, as Karmada keeps them).
pub fn aggregate(template: &Value, items: &[StatusItem]) -> Option<Result<Value, String>> {
    let (api_version, kind) = group_version_kind(template);
    if !aggregates(api_version, kind) {
        return None;
    }
    Some(aggregate_kind(api_version, kind, template, items))
}

fn aggregate_kind(
    api_version: &str,
    kind: &str,
    template: &Value,
    items: &[StatusItem],
) -> Result<Value, String> {
    let old = match template.get("status") {
        Some(Value::Object(status)) => status.clone(),
        None | Some(Value::Null) => Map::new(),
        Some(other) => {
            return Err(format!(
                "the template's status is {}, not an object",
                type_name(other)
            ));
        }
    };
    let statuses = || items.iter().filter_map(|item| item.status.as_ref());
    let member_map = |status: &Value| -> Result<Map<String, Value>, String> {
        match status {
            Value::Object(map) => Ok(map.clone()),
            other => Err(format!(
                "a member's collected status is {}, not an object",
                type_name(other)
            )),
        }
    };
    match (api_version, kind) {
        ("apps/v1", "Deployment" | "ReplicaSet" | "DaemonSet" | "StatefulSet") => {
            let fields: &[(&str, Keep)] = match kind {
                "Deployment" => &[
                    ("replicas", Keep::OmitZero),
                    ("readyReplicas", Keep::OmitZero),
                    ("updatedReplicas", Keep::OmitZero),
                    ("availableReplicas", Keep::OmitZero),
                    ("unavailableReplicas", Keep::OmitZero),
                ],
                "ReplicaSet" => &[
                    ("replicas", Keep::Always),
                    ("readyReplicas", Keep::OmitZero),
                    ("availableReplicas", Keep::OmitZero),
                ],
                "DaemonSet" => &[
                    ("currentNumberScheduled", Keep::Always),
                    ("desiredNumberScheduled", Keep::Always),
                    ("numberAvailable", Keep::OmitZero),
                    ("numberMisscheduled", Keep::Always),
                    ("numberReady", Keep::Always),
                    ("updatedNumberScheduled", Keep::OmitZero),
                    ("numberUnavailable", Keep::OmitZero),
                ],
                _ => &[
                    ("availableReplicas", Keep::Always),
                    ("currentReplicas", Keep::OmitZero),
                    ("readyReplicas", Keep::OmitZero),
                    ("replicas", Keep::Always),
                    ("updatedReplicas", Keep::OmitZero),
                ],
            };
            let template_generation = generation(template)?;
            let mut sums: BTreeMap<&str, i64> = BTreeMap::new();
            let mut observed_latest = 0usize;
            for status in statuses() {
                let member = member_map(status)?;
                let at = |field: &str| int(&member, field, kind);
                let (observed, generation, stamped) = (
                    at("observedGeneration")?,
                    at("generation")?,
                    at("resourceTemplateGeneration")?,
                );
                // Karmada's StatefulSet compares the stamp with the member's own generation.
                let against = if kind == "StatefulSet" {
                    generation
                } else {
                    template_generation
                };
                if observed >= generation && stamped >= against {
                    observed_latest += 1;
                }
                for (field, _) in fields {
                    *sums.entry(field).or_default() += i64::from(go_i32(at(field)?));
                }
            }
            let mut status = old.clone();
            let observed = if observed_latest == items.len() {
                template_generation
            } else {
                int(&old, "observedGeneration", kind)?
            };
            status.remove("observedGeneration");
            put_int(&mut status, "observedGeneration", observed, Keep::OmitZero);
            for (field, keep) in fields {
                status.remove(*field);
                let sum = i64::from(go_i32(sums.get(field).copied().unwrap_or(0)));
                put_int(&mut status, field, sum, *keep);
            }
            Ok(Value::Object(status))
        }
        ("v1", "Service") => {
            if template.pointer("/spec/type").and_then(Value::as_str) != Some("LoadBalancer") {
                return Ok(Value::Object(old));
            }
            let mut ingress = Vec::new();
            for status in statuses() {
                let member = member_map(status)?;
                ingress.extend(load_balancer_ingress(&member)?);
            }
            Ok(json!({"loadBalancer": ingress_value(dedupe_and_sort(ingress))}))
        }
        ("networking.k8s.io/v1", "Ingress") => {
            let mut ingress = Vec::new();
            for status in statuses() {
                let member = member_map(status)?;
                ingress.extend(load_balancer_ingress(&member)?);
            }
            Ok(json!({"loadBalancer": ingress_value(dedupe_and_sort(ingress))}))
        }
        ("batch/v1", "Job") => aggregate_job(&old, items),
        ("batch/v1", "CronJob") => {
            let mut active: Vec<Value> = Vec::new();
            let (mut scheduled, mut successful): (Option<String>, Option<String>) = (None, None);
            for status in statuses() {
                let member = member_map(status)?;
                if let Some(list) = member.get("active").and_then(Value::as_array) {
                    active.extend(list.iter().cloned());
                }
                let latest = |kept: &mut Option<String>, field: &str| {
                    if let Some(time) = member.get(field).and_then(Value::as_str)
                        && kept.as_deref().is_none_or(|k| k < time)
                    {
                        *kept = Some(time.to_string());
                    }
                };
                latest(&mut scheduled, "lastScheduleTime");
                latest(&mut successful, "lastSuccessfulTime");
            }
            let mut status = old.clone();
            for field in ["active", "lastScheduleTime", "lastSuccessfulTime"] {
                status.remove(field);
            }
            if !active.is_empty() {
                status.insert("active".into(), Value::Array(active));
            }
            if let Some(time) = scheduled {
                status.insert("lastScheduleTime".into(), Value::String(time));
            }
            if let Some(time) = successful {
                status.insert("lastSuccessfulTime".into(), Value::String(time));
            }
            Ok(Value::Object(status))
        }
        ("v1", "Pod") => {
            if items.is_empty() {
                return Ok(Value::Object(old));
            }
            let mut phases: Vec<String> = Vec::new();
            let (mut containers, mut init) = (Vec::new(), Vec::new());
            for item in items {
                let Some(status) = &item.status else {
                    // Not collected yet: Karmada assumes Pending.
                    phases.push("Pending".into());
                    continue;
                };
                let member = member_map(status)?;
                phases.push(
                    member
                        .get("phase")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                );
                let copy = |field: &str, into: &mut Vec<Value>| {
                    for container in member
                        .get(field)
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        into.push(json!({
                            "name": "",
                            "state": container.get("state").cloned().unwrap_or_else(|| json!({})),
                            "lastState": {},
                            "ready": container.get("ready").and_then(Value::as_bool).unwrap_or(false),
                            "restartCount": 0,
                            "image": "",
                            "imageID": "",
                        }));
                    }
                };
                copy("containerStatuses", &mut containers);
                copy("initContainerStatuses", &mut init);
            }
            let phase = ["Failed", "Pending", "Running", "Succeeded"]
                .into_iter()
                .find(|p| phases.iter().any(|seen| seen == p));
            let mut status = Map::new();
            if let Some(phase) = phase {
                status.insert("phase".into(), Value::String(phase.into()));
            }
            if !containers.is_empty() {
                status.insert("containerStatuses".into(), Value::Array(containers));
            }
            if !init.is_empty() {
                status.insert("initContainerStatuses".into(), Value::Array(init));
            }
            Ok(Value::Object(status))
        }
        ("v1", "PersistentVolume") => {
            let phases: Vec<String> = items
                .iter()
                .map(|item| match &item.status {
                    None => "Pending".to_string(),
                    Some(status) => status
                        .get("phase")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                })
                .collect();
            let phase = ["Failed", "Pending", "Available", "Bound", "Released"]
                .into_iter()
                .find(|p| phases.iter().any(|seen| seen == p));
            Ok(match phase {
                Some(phase) => json!({"phase": phase}),
                None => json!({}),
            })
        }
        ("v1", "PersistentVolumeClaim") => {
            let mut phase = "Bound".to_string();
            for status in statuses() {
                let member = member_map(status)?;
                let seen = member.get("phase").and_then(Value::as_str).unwrap_or("");
                if seen == "Lost" {
                    phase = "Lost".into();
                    break;
                }
                if seen != "Bound" {
                    phase = seen.to_string();
                }
            }
            Ok(if phase.is_empty() {
                json!({})
            } else {
                json!({"phase": phase})
            })
        }
        ("policy/v1", "PodDisruptionBudget") => {
            let mut sums: BTreeMap<&str, i64> = BTreeMap::new();
            let mut disrupted = Map::new();
            let fields = [
                "currentHealthy",
                "desiredHealthy",
                "expectedPods",
                "disruptionsAllowed",
            ];
            for item in items {
                let Some(status) = &item.status else { continue };
                let member = member_map(status)?;
                for field in fields {
                    *sums.entry(field).or_default() += int(&member, field, kind)?;
                }
                if let Some(Value::Object(pods)) = member.get("disruptedPods") {
                    for (pod, time) in pods {
                        disrupted.insert(format!("{}/{pod}", item.cluster), time.clone());
                    }
                }
            }
            let mut status = Map::new();
            if !disrupted.is_empty() {
                status.insert("disruptedPods".into(), Value::Object(disrupted));
            }
            for field in fields {
                let sum = i64::from(go_i32(sums.get(field).copied().unwrap_or(0)));
                put_int(&mut status, field, sum, Keep::Always);
            }
            Ok(Value::Object(status))
        }
        _ => {
            // autoscaling/v2 HorizontalPodAutoscaler.
            let (mut current, mut desired) = (0i64, 0i64);
            for status in statuses() {
                let member = member_map(status)?;
                current += int(&member, "currentReplicas", kind)?;
                desired += int(&member, "desiredReplicas", kind)?;
            }
            let mut status = Map::new();
            put_int(
                &mut status,
                "currentReplicas",
                i64::from(go_i32(current)),
                Keep::OmitZero,
            );
            put_int(
                &mut status,
                "desiredReplicas",
                i64::from(go_i32(desired)),
                Keep::Always,
            );
            Ok(Value::Object(status))
        }
    }
}

/// Karmada's `ParsingJobStatus`, left alone once the template's Job has finished. The
/// conditions Karmada stamps with the time it aggregates carry no times here.
fn aggregate_job(old: &Map<String, Value>, items: &[StatusItem]) -> Result<Value, String> {
    if finished(old).is_some() {
        return Ok(Value::Object(old.clone()));
    }
    let (mut active, mut succeeded, mut failed) = (0i64, 0i64, 0i64);
    let (mut successful, mut criteria_met, mut started, mut completed) = (0, 0, 0, 0);
    let mut failed_in: Vec<&str> = Vec::new();
    let (mut start, mut completion): (Option<Option<String>>, Option<String>) = (None, None);
    for item in items {
        let Some(status) = &item.status else { continue };
        let Value::Object(member) = status else {
            return Err("a member's collected Job status is not an object".into());
        };
        active += int(member, "active", "Job")?;
        succeeded += int(member, "succeeded", "Job")?;
        failed += int(member, "failed", "Job")?;
        match finished(member) {
            Some("Complete") => successful += 1,
            Some(_) => failed_in.push(&item.cluster),
            None => {}
        }
        if conditions(member).any(|(kind, status)| kind == "SuccessCriteriaMet" && status == "True")
        {
            criteria_met += 1;
        }
        let started_at = member
            .get("startTime")
            .and_then(Value::as_str)
            .map(str::to_string);
        if started_at.is_some() {
            started += 1;
        }
        // Go's `startTime == nil || temp.StartTime.Before(startTime)`: a member without one
        // (nil is before nothing) only takes the place while none is kept.
        match (&start, &started_at) {
            (None, _) => start = Some(started_at.clone()),
            (Some(Some(kept)), Some(time)) if time < kept => start = Some(Some(time.clone())),
            (Some(None), _) => start = Some(started_at.clone()),
            _ => {}
        }
        if let Some(time) = member.get("completionTime").and_then(Value::as_str) {
            completed += 1;
            if completion.as_deref().is_none_or(|kept| kept < time) {
                completion = Some(time.to_string());
            }
        }
    }
    let mut conditions = Vec::new();
    if !failed_in.is_empty() {
        conditions.push(
            json!({"type": "Failed", "status": "True", "reason": "JobFailed",
            "message": format!("Job executed failed in member clusters {}", failed_in.join(","))}),
        );
    }
    let total = items.len();
    if successful == total && successful > 0 {
        conditions.push(
            json!({"type": "Complete", "status": "True", "reason": "Completed",
            "message": "Job completed"}),
        );
        if criteria_met == total {
            conditions.push(json!({"type": "SuccessCriteriaMet", "status": "True",
                "reason": "CompletionsReached",
                "message": "All member clusters have met success criteria"}));
        }
    }
    let mut status = Map::new();
    if !conditions.is_empty() {
        status.insert("conditions".into(), Value::Array(conditions));
    }
    let start_time = match old.get("startTime").filter(|v| !v.is_null()) {
        Some(kept) => Some(kept.clone()),
        None if started == total && started > 0 => start.flatten().map(Value::String),
        None => None,
    };
    if let Some(time) = start_time {
        status.insert("startTime".into(), time);
    }
    if let Some(time) = completion.filter(|_| completed == total) {
        status.insert("completionTime".into(), Value::String(time));
    }
    put_int(&mut status, "active", active, Keep::OmitZero);
    put_int(&mut status, "succeeded", succeeded, Keep::OmitZero);
    put_int(&mut status, "failed", failed, Keep::OmitZero);
    Ok(Value::Object(status))
}

/// `Complete` or `Failed` when a Job status says it finished so.
fn finished(status: &Map<String, Value>) -> Option<&'static str> {
    conditions(status).find_map(|(kind, state)| match (kind, state) {
        ("Complete", "True") => Some("Complete"),
        ("Failed", "True") => Some("Failed"),
        _ => None,
    })
}

fn conditions(status: &Map<String, Value>) -> impl Iterator<Item = (&str, &str)> {
    status
        .get("conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let text = |f: &str| c.get(f).and_then(Value::as_str).unwrap_or("");
            (text("type"), text("status"))
        })
}

/// One load-balancer ingress, the fields Karmada keys and sorts by.
#[derive(Debug, Clone)]
struct LbIngress {
    value: Map<String, Value>,
}

impl LbIngress {
    fn text(&self, field: &str) -> &str {
        self.value.get(field).and_then(Value::as_str).unwrap_or("")
    }
    fn mode(&self) -> Option<&str> {
        self.value.get("ipMode").and_then(Value::as_str)
    }
}

fn load_balancer_ingress(status: &Map<String, Value>) -> Result<Vec<LbIngress>, String> {
    let Some(list) = status.get("loadBalancer").and_then(|lb| lb.get("ingress")) else {
        return Ok(Vec::new());
    };
    match list {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::Object(value) => Ok(LbIngress {
                    value: value.clone(),
                }),
                other => Err(format!(
                    "a load-balancer ingress is {}, not an object",
                    type_name(other)
                )),
            })
            .collect(),
        other => Err(format!(
            "status.loadBalancer.ingress is {}, not a list",
            type_name(other)
        )),
    }
}

/// Whether two statuses say the same, as Kubernetes stores them: fields that are `null`
/// (which the API server drops) left out of both.
pub fn same_status(a: &Value, b: &Value) -> bool {
    fn pruned(value: &Value) -> Value {
        match value {
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), pruned(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(pruned).collect()),
            other => other.clone(),
        }
    }
    pruned(a) == pruned(b)
}

/// Karmada's `DedupeAndSort…LoadBalancerIngress`: one entry per hostname, IP and IP mode with
/// the union of their ports (sorted by port, protocol, error), hostnames first in order, then
/// by IP, then entries without an IP mode last.
fn dedupe_and_sort(ingresses: Vec<LbIngress>) -> Vec<LbIngress> {
    let mut merged: BTreeMap<IngressKey, (LbIngress, Vec<Value>)> = BTreeMap::new();
    for ingress in ingresses {
        let key = (
            ingress.text("hostname").to_string(),
            ingress.text("ip").to_string(),
            ingress.mode().map(str::to_string),
        );
        let ports: Vec<Value> = ingress
            .value
            .get("ports")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let entry = merged
            .entry(key)
            .or_insert_with(|| (ingress.clone(), Vec::new()));
        for port in ports {
            if !entry.1.contains(&port) {
                entry.1.push(port);
            }
        }
    }
    let mut out: Vec<LbIngress> = merged
        .into_values()
        .map(|(mut ingress, mut ports)| {
            ports.sort_by(|a, b| {
                let port = |v: &Value| v.get("port").and_then(Value::as_i64).unwrap_or(0);
                let text = |v: &Value, f: &str| {
                    v.get(f)
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .unwrap_or_default()
                };
                port(a)
                    .cmp(&port(b))
                    .then_with(|| text(a, "protocol").cmp(&text(b, "protocol")))
                    .then_with(|| match (port_error(a), port_error(b)) {
                        (None, None) => std::cmp::Ordering::Equal,
                        (None, Some(_)) => std::cmp::Ordering::Less,
                        (Some(_), None) => std::cmp::Ordering::Greater,
                        (Some(x), Some(y)) => x.cmp(y),
                    })
            });
            ingress.value.remove("ports");
            if !ports.is_empty() {
                ingress.value.insert("ports".into(), Value::Array(ports));
            }
            ingress
        })
        .collect();
    out.sort_by(|a, b| {
        let (ha, hb) = (a.text("hostname"), b.text("hostname"));
        let hostnames = match (ha.is_empty(), hb.is_empty()) {
            _ if ha == hb => std::cmp::Ordering::Equal,
            (false, true) => std::cmp::Ordering::Less,
            (true, false) => std::cmp::Ordering::Greater,
            _ => ha.cmp(hb),
        };
        hostnames
            .then_with(|| a.text("ip").cmp(b.text("ip")))
            .then_with(|| match (a.mode(), b.mode()) {
                (None, None) => std::cmp::Ordering::Equal,
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some(x), Some(y)) => x.cmp(y),
            })
    });
    out
}

/// An ingress's hostname, IP and IP mode: what Karmada merges ingresses by.
type IngressKey = (String, String, Option<String>);

fn port_error(port: &Value) -> Option<&str> {
    port.get("error").and_then(Value::as_str)
}

fn ingress_value(ingresses: Vec<LbIngress>) -> Value {
    if ingresses.is_empty() {
        return json!({});
    }
    json!({"ingress": ingresses.into_iter().map(|i| Value::Object(i.value)).collect::<Vec<_>>()})
}

/// Whether a Go struct field is written when zero.
#[derive(Debug, Clone, Copy)]
enum Keep {
    Always,
    OmitZero,
}

fn put_int(out: &mut Map<String, Value>, field: &str, value: i64, keep: Keep) {
    if value != 0 || matches!(keep, Keep::Always) {
        out.insert(field.to_string(), Value::from(value));
    }
}

/// An integer field of a status (0 when absent), or why it does not convert as Go's typed
/// conversion would refuse it.
fn int(status: &Map<String, Value>, field: &str, kind: &str) -> Result<i64, String> {
    match status.get(field) {
        None | Some(Value::Null) => Ok(0),
        Some(Value::Number(number)) => number
            .as_i64()
            .or_else(|| {
                number
                    .as_f64()
                    .filter(|f| f.fract() == 0.0)
                    .map(|f| f as i64)
            })
            .ok_or_else(|| format!("{kind} status.{field} is {number}, not an integer")),
        Some(other) => Err(format!(
            "{kind} status.{field} is {}, not an integer",
            type_name(other)
        )),
    }
}

/// Go's wrapping `int32` sum.
fn go_i32(value: i64) -> i32 {
    value as i32
}

fn generation(object: &Value) -> Result<i64, String> {
    match object.pointer("/metadata/generation") {
        None | Some(Value::Null) => Ok(0),
        Some(value) => value
            .as_i64()
            .ok_or_else(|| format!("metadata.generation is {value}, not an integer")),
    }
}

fn template_generation(object: &Value) -> Result<i64, String> {
    let annotation = object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(TEMPLATE_GENERATION))
        .and_then(Value::as_str);
    match annotation {
        None => Ok(0),
        Some(text) => text.parse().map_err(|_| {
            format!("the annotation {TEMPLATE_GENERATION} is {text:?}, not a generation")
        }),
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
        Value::String(text) => text.is_empty(),
        _ => false,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    //! Cases from Karmada's own `aggregatestatus_test.go` and `reflectstatus_test.go`, and
    //! properties its Go code has.
    use super::*;
    use proptest::prelude::*;

    fn item(cluster: &str, status: Value) -> StatusItem {
        StatusItem {
            cluster: cluster.into(),
            status: Some(status),
            applied: true,
            ..StatusItem::default()
        }
    }

    fn deployment(status: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "status": status})
    }

    #[test]
    fn deployments_sum_their_members_and_drop_zero_counters() {
        // TestAggregateDeploymentStatus: two members of one ready replica each.
        let member = json!({"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1,
            "availableReplicas": 1, "unavailableReplicas": 0});
        let items = [item("member1", member.clone()), item("member2", member)];
        let want = json!({"replicas": 2, "readyReplicas": 2, "updatedReplicas": 2,
            "availableReplicas": 2});
        assert_eq!(
            aggregate(&deployment(json!({})), &items).unwrap(),
            Ok(want.clone())
        );
        // "ignore update deployment status as up to date": the same again.
        assert_eq!(
            aggregate(&deployment(want.clone()), &items).unwrap(),
            Ok(want)
        );
    }

    #[test]
    fn observed_generation_is_the_templates_once_every_member_caught_up() {
        let mut template = deployment(json!({"observedGeneration": 3}));
        template["metadata"]["generation"] = json!(4);
        let current = json!({"generation": 2, "resourceTemplateGeneration": 4,
            "observedGeneration": 2, "replicas": 1});
        let behind = json!({"generation": 2, "resourceTemplateGeneration": 3,
            "observedGeneration": 2, "replicas": 1});
        let all = [item("a", current.clone()), item("b", current.clone())];
        let status = aggregate(&template, &all).unwrap().unwrap();
        assert_eq!(status["observedGeneration"], json!(4));
        let one_behind = [item("a", current), item("b", behind)];
        let status = aggregate(&template, &one_behind).unwrap().unwrap();
        assert_eq!(status["observedGeneration"], json!(3));
        // A member not collected yet counts as not caught up.
        let missing = [
            item("a", json!({"replicas": 1})),
            StatusItem {
                cluster: "b".into(),
                ..StatusItem::default()
            },
        ];
        let status = aggregate(&template, &missing).unwrap().unwrap();
        assert_eq!(status["observedGeneration"], json!(3));
    }

    #[test]
    fn claims_take_lost_then_any_phase_but_bound() {
        // TestAggregatePVCStatus.
        let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim"});
        let phase = |p: &str| json!({"phase": p});
        let run = |a: &str, b: &str| {
            aggregate(&pvc, &[item("m1", phase(a)), item("m2", phase(b))])
                .unwrap()
                .unwrap()
        };
        assert_eq!(run("Bound", "Bound"), phase("Bound"));
        assert_eq!(run("Bound", "Lost"), phase("Lost"));
        assert_eq!(run("Bound", "Pending"), phase("Pending"));
    }

    #[test]
    fn pods_take_the_worst_phase_and_a_member_not_collected_is_pending() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod"});
        let run = |items: &[StatusItem]| aggregate(&pod, items).unwrap().unwrap();
        let running = json!({"phase": "Running", "containerStatuses": [
            {"name": "app", "ready": true, "state": {"running": {}}, "image": "x"}]});
        let status = run(&[
            item("a", running.clone()),
            item("b", json!({"phase": "Failed"})),
        ]);
        assert_eq!(status["phase"], "Failed");
        assert_eq!(
            status["containerStatuses"],
            json!([{"name": "", "state": {"running": {}}, "lastState": {}, "ready": true,
                "restartCount": 0, "image": "", "imageID": ""}])
        );
        let not_collected = StatusItem {
            cluster: "b".into(),
            ..StatusItem::default()
        };
        assert_eq!(
            run(&[item("a", running), not_collected])["phase"],
            "Pending"
        );
    }

    #[test]
    fn services_gather_load_balancer_ingress_only_for_load_balancers() {
        let service =
            |kind: &str| json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": kind}});
        let lb = |ip: &str| json!({"loadBalancer": {"ingress": [{"ip": ip}]}});
        let items = [
            item("a", lb("10.0.0.2")),
            item("b", lb("10.0.0.1")),
            item("c", lb("10.0.0.2")),
        ];
        assert_eq!(
            aggregate(&service("LoadBalancer"), &items).unwrap(),
            Ok(json!({"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}}))
        );
        assert_eq!(
            aggregate(&service("ClusterIP"), &items).unwrap(),
            Ok(json!({}))
        );
        // Reflection collects nothing of a ClusterIP Service.
        assert_eq!(reflect(&service("ClusterIP")), Ok(None));
    }

    #[test]
    fn jobs_complete_when_every_member_did_and_fail_naming_the_members() {
        let job = json!({"apiVersion": "batch/v1", "kind": "Job"});
        let done = json!({"succeeded": 1, "startTime": "2026-01-01T00:00:02Z",
            "completionTime": "2026-01-01T00:01:00Z",
            "conditions": [{"type": "Complete", "status": "True"}]});
        let failed = json!({"failed": 1, "startTime": "2026-01-01T00:00:01Z",
            "conditions": [{"type": "Failed", "status": "True"}]});
        let status = aggregate(&job, &[item("a", done.clone()), item("b", done.clone())])
            .unwrap()
            .unwrap();
        assert_eq!(status["conditions"][0]["type"], "Complete");
        assert_eq!(status["succeeded"], 2);
        assert_eq!(status["startTime"], "2026-01-01T00:00:02Z");
        assert_eq!(status["completionTime"], "2026-01-01T00:01:00Z");
        let status = aggregate(&job, &[item("a", done), item("b", failed)])
            .unwrap()
            .unwrap();
        assert_eq!(
            status["conditions"],
            json!([{"type": "Failed", "status": "True", "reason": "JobFailed",
                "message": "Job executed failed in member clusters b"}])
        );
        assert_eq!(status["startTime"], "2026-01-01T00:00:01Z");
        assert!(status.get("completionTime").is_none());
    }

    #[test]
    fn disrupted_pods_are_named_by_member() {
        let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget"});
        let member = json!({"currentHealthy": 2, "desiredHealthy": 3, "disruptionsAllowed": 1,
            "expectedPods": 3, "disruptedPods": {"pod1": "2026-01-01T00:00:00Z"}});
        let status = aggregate(&pdb, &[item("m1", member.clone()), item("m2", member)])
            .unwrap()
            .unwrap();
        assert_eq!(status["currentHealthy"], 4);
        assert_eq!(
            status["disruptedPods"],
            json!({"m1/pod1": "2026-01-01T00:00:00Z", "m2/pod1": "2026-01-01T00:00:00Z"})
        );
    }

    #[test]
    fn reflection_keeps_a_workloads_counters_and_its_generations() {
        let live = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"generation": 2, "annotations": {TEMPLATE_GENERATION: "5"}},
            "status": {"replicas": 2, "readyReplicas": 2, "observedGeneration": 2,
                "conditions": [{"type": "Available", "status": "True"}]}});
        assert_eq!(
            reflect(&live),
            Ok(Some(
                json!({"generation": 2, "resourceTemplateGeneration": 5,
                "replicas": 2, "readyReplicas": 2, "observedGeneration": 2})
            ))
        );
        let mut malformed = live.clone();
        malformed["metadata"]["annotations"][TEMPLATE_GENERATION] = json!("five");
        assert!(
            reflect(&malformed)
                .unwrap_err()
                .contains(TEMPLATE_GENERATION)
        );
        let mut text = live;
        text["status"]["replicas"] = json!("two");
        assert!(reflect(&text).is_err());
        // Any other kind: its whole status; none: nothing.
        let other = json!({"apiVersion": "x.io/v1", "kind": "W", "status": {"a": [1]}});
        assert_eq!(reflect(&other), Ok(Some(json!({"a": [1]}))));
        assert_eq!(reflect(&json!({"kind": "W"})), Ok(None));
    }

    proptest! {
        /// Karmada's sums do not depend on the order the members report in, and equal the
        /// members' sums.
        #[test]
        fn workload_sums_are_order_free(counts in proptest::collection::vec((0i64..50, 0i64..50), 0..6)) {
            let items: Vec<StatusItem> = counts.iter().enumerate()
                .map(|(i, (replicas, ready))| item(&format!("m{i}"),
                    json!({"replicas": replicas, "readyReplicas": ready})))
                .collect();
            let mut reversed = items.clone();
            reversed.reverse();
            let template = deployment(json!({}));
            let forward = aggregate(&template, &items).unwrap().unwrap();
            prop_assert_eq!(&forward, &aggregate(&template, &reversed).unwrap().unwrap());
            let replicas: i64 = counts.iter().map(|c| c.0).sum();
            prop_assert_eq!(forward.get("replicas").and_then(Value::as_i64).unwrap_or(0), replicas);
        }

        /// The worst phase wins whatever the order: Failed, then Pending, Running, Succeeded.
        #[test]
        fn pod_phase_is_the_worst(phases in proptest::collection::vec(
            prop_oneof![Just("Failed"), Just("Pending"), Just("Running"), Just("Succeeded")], 1..6)) {
            let pod = json!({"apiVersion": "v1", "kind": "Pod"});
            let items: Vec<StatusItem> = phases.iter()
                .map(|p| item("m", json!({"phase": p}))).collect();
            let status = aggregate(&pod, &items).unwrap().unwrap();
            let worst = ["Failed", "Pending", "Running", "Succeeded"].into_iter()
                .find(|p| phases.contains(p)).unwrap();
            prop_assert_eq!(status["phase"].as_str(), Some(worst));
        }
    }
}
