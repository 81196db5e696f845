//! Whether a live object of a built-in kind is doing its job, with the meanings operators know
//! from Argo CD: workloads by their observed generation, updated, ready and available replicas
//! and the Progressing condition's deadline; Jobs and CronJobs by suspension and their
//! conditions; Pods by phase and container states; a LoadBalancer Service or an Ingress by
//! its assigned address; a claim by being Bound; an autoscaler by its conditions. Kinds
//! without a notion of health get none. It reads only the object handed to it: it must not
//! know where the object came from, nor decide that an absent object is Missing (the caller
//! knows that), nor know of rules (which [`super::rules`] puts before it).

use serde_json::Value;

use crate::model::{CellHealth, HealthKind};

/// How one kind's objects are assessed.
type Assess = fn(&Value) -> CellHealth;

/// The kinds with a notion of health, by API group and kind, and how each is assessed.
const ASSESSED: [(&str, &str, Assess); 14] = [
    ("apps", "Deployment", deployment),
    ("apps", "StatefulSet", stateful_set),
    ("apps", "DaemonSet", daemon_set),
    ("apps", "ReplicaSet", replica_set),
    ("batch", "Job", job),
    ("batch", "CronJob", cron_job),
    ("", "Pod", pod),
    ("", "Service", service),
    ("", "PersistentVolumeClaim", claim),
    ("networking.k8s.io", "Ingress", ingress),
    ("extensions", "Ingress", ingress),
    ("autoscaling", "HorizontalPodAutoscaler", autoscaler),
    ("apiregistration.k8s.io", "APIService", api_service),
    ("argoproj.io", "Workflow", workflow),
];

fn assessor(api_version: &str, kind: &str) -> Option<Assess> {
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    ASSESSED
        .iter()
        .find(|(g, k, _)| *g == group && *k == kind)
        .map(|(_, _, assess)| *assess)
}

/// Whether objects of this API version and kind have a built-in health (a Deployment does,
/// a ConfigMap does not).
pub fn has_health(api_version: &str, kind: &str) -> bool {
    assessor(api_version, kind).is_some()
}

/// The built-in health of a live object, or `None` for a kind without one (a ConfigMap, a
/// Role).
pub fn assess(object: &Value) -> Option<CellHealth> {
    let version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    assessor(version, kind).map(|assess| assess(object))
}

fn health(kind: HealthKind, reason: impl Into<String>) -> CellHealth {
    CellHealth {
        kind,
        reason: reason.into(),
        since: None,
        rule: None,
    }
}

/// How a reason says that a rollout passed its progress deadline; [`reason_at`] puts how
/// long ago right after it.
pub const DEADLINE_EXCEEDED: &str = "progress deadline exceeded";

/// `health`'s reason as of `now` (seconds since the Unix epoch, from the caller's clock):
/// where it says a progress deadline was exceeded and the health carries when, how long ago
/// follows — "1/3 available, progress deadline exceeded 4 m ago: …". Without a clock or a
/// time it reads, the reason as it is.
pub fn reason_at(health: &CellHealth, now: Option<i64>) -> String {
    let passed = health
        .since
        .as_deref()
        .and_then(|since| since.parse::<k8s_openapi::jiff::Timestamp>().ok());
    let (Some(passed), Some(now)) = (passed, now) else {
        return health.reason.clone();
    };
    let Some(at) = health.reason.find(DEADLINE_EXCEEDED) else {
        return health.reason.clone();
    };
    let end = at + DEADLINE_EXCEEDED.len();
    let ago = ago(now.saturating_sub(passed.as_second()));
    format!("{} {ago}{}", &health.reason[..end], &health.reason[end..])
}

/// "45 s ago", "4 m ago", "3 h ago", "2 d ago"; a time ahead of the clock is "just now".
fn ago(seconds: i64) -> String {
    match seconds {
        s if s < 1 => "just now".to_string(),
        s if s < 60 => format!("{s} s ago"),
        s if s < 2 * 3600 => format!("{} m ago", s / 60),
        s if s < 2 * 86_400 => format!("{} h ago", s / 3600),
        s => format!("{} d ago", s / 86_400),
    }
}

fn int(object: &Value, pointer: &str) -> Option<i64> {
    object.pointer(pointer).and_then(Value::as_i64)
}

fn text<'a>(object: &'a Value, pointer: &str) -> Option<&'a str> {
    object.pointer(pointer).and_then(Value::as_str)
}

fn flag(object: &Value, pointer: &str) -> bool {
    object
        .pointer(pointer)
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The status condition of this type, if the object reports one.
fn condition<'a>(object: &'a Value, kind: &str) -> Option<&'a Value> {
    object
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|condition| condition.get("type").and_then(Value::as_str) == Some(kind))
}

fn is_true(condition: &Value) -> bool {
    condition.get("status").and_then(Value::as_str) == Some("True")
}

fn condition_words(condition: &Value) -> String {
    let reason = condition
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("");
    let message = condition
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("");
    match (reason.is_empty(), message.is_empty()) {
        (false, false) => format!("{reason}: {message}"),
        (false, true) => reason.to_string(),
        (true, false) => message.to_string(),
        (true, true) => String::new(),
    }
}

/// The controller has not yet seen the latest spec.
fn unobserved(object: &Value) -> Option<CellHealth> {
    let generation = int(object, "/metadata/generation")?;
    let observed = int(object, "/status/observedGeneration").unwrap_or(0);
    (observed < generation).then(|| {
        health(
            HealthKind::Progressing,
            format!("waiting for the controller to observe generation {generation}"),
        )
    })
}

fn deployment(object: &Value) -> CellHealth {
    if flag(object, "/spec/paused") {
        return health(HealthKind::Suspended, "the rollout is paused");
    }
    if let Some(waiting) = unobserved(object) {
        return waiting;
    }
    let desired = int(object, "/spec/replicas").unwrap_or(1);
    let updated = int(object, "/status/updatedReplicas").unwrap_or(0);
    let current = int(object, "/status/replicas").unwrap_or(0);
    let available = int(object, "/status/availableReplicas").unwrap_or(0);
    if let Some(progressing) = condition(object, "Progressing")
        && progressing.get("reason").and_then(Value::as_str) == Some("ProgressDeadlineExceeded")
    {
        // The controller's message names only the ReplicaSet; how far it got is the counts.
        // It writes the condition's times when its reason turns ProgressDeadlineExceeded, and
        // the update time moves with a new reason even where the status stays False.
        let since = ["lastUpdateTime", "lastTransitionTime"]
            .iter()
            .find_map(|field| progressing.get(*field).and_then(Value::as_str))
            .filter(|time| !time.is_empty())
            .map(str::to_string);
        return CellHealth {
            since,
            ..health(
                HealthKind::Degraded,
                format!(
                    "{available}/{desired} available, {DEADLINE_EXCEEDED}: {}",
                    condition_words(progressing)
                ),
            )
        };
    }
    if updated < desired {
        return health(
            HealthKind::Progressing,
            format!("{updated}/{desired} replicas updated"),
        );
    }
    if current > updated {
        return health(
            HealthKind::Progressing,
            format!("{} old replica(s) pending termination", current - updated),
        );
    }
    if available < updated {
        return health(
            HealthKind::Progressing,
            format!("{available}/{desired} available"),
        );
    }
    health(
        HealthKind::Healthy,
        format!("{available}/{desired} available"),
    )
}

fn stateful_set(object: &Value) -> CellHealth {
    if let Some(waiting) = unobserved(object) {
        return waiting;
    }
    let desired = int(object, "/spec/replicas").unwrap_or(1);
    let ready = int(object, "/status/readyReplicas").unwrap_or(0);
    if ready < desired {
        return health(HealthKind::Progressing, format!("{ready}/{desired} ready"));
    }
    if text(object, "/spec/updateStrategy/type") == Some("OnDelete") {
        return health(
            HealthKind::Healthy,
            format!("{ready}/{desired} ready (OnDelete)"),
        );
    }
    let partition = int(object, "/spec/updateStrategy/rollingUpdate/partition").unwrap_or(0);
    let updated = int(object, "/status/updatedReplicas").unwrap_or(0);
    if partition > 0 {
        let wanted = (desired - partition).max(0);
        if updated < wanted {
            return health(
                HealthKind::Progressing,
                format!("{updated}/{wanted} replicas above the partition updated"),
            );
        }
        return health(
            HealthKind::Healthy,
            format!("partitioned rollout at {partition}"),
        );
    }
    let current_revision = text(object, "/status/currentRevision");
    let update_revision = text(object, "/status/updateRevision");
    if update_revision.is_some() && current_revision != update_revision {
        return health(
            HealthKind::Progressing,
            format!("{updated}/{desired} replicas updated"),
        );
    }
    health(HealthKind::Healthy, format!("{ready}/{desired} ready"))
}

fn daemon_set(object: &Value) -> CellHealth {
    if let Some(waiting) = unobserved(object) {
        return waiting;
    }
    let desired = int(object, "/status/desiredNumberScheduled").unwrap_or(0);
    if text(object, "/spec/updateStrategy/type") == Some("OnDelete") {
        return health(HealthKind::Healthy, "OnDelete: pods update when deleted");
    }
    let updated = int(object, "/status/updatedNumberScheduled").unwrap_or(0);
    if updated < desired {
        return health(
            HealthKind::Progressing,
            format!("{updated}/{desired} nodes updated"),
        );
    }
    let available = int(object, "/status/numberAvailable").unwrap_or(0);
    if available < desired {
        return health(
            HealthKind::Progressing,
            format!("{available}/{desired} nodes available"),
        );
    }
    health(
        HealthKind::Healthy,
        format!("{available}/{desired} nodes available"),
    )
}

fn replica_set(object: &Value) -> CellHealth {
    if let Some(waiting) = unobserved(object) {
        return waiting;
    }
    if let Some(failure) = condition(object, "ReplicaFailure")
        && is_true(failure)
    {
        return health(HealthKind::Degraded, condition_words(failure));
    }
    let desired = int(object, "/spec/replicas").unwrap_or(1);
    let available = int(object, "/status/availableReplicas").unwrap_or(0);
    if available < desired {
        return health(
            HealthKind::Progressing,
            format!("{available}/{desired} available"),
        );
    }
    health(
        HealthKind::Healthy,
        format!("{available}/{desired} available"),
    )
}

fn job(object: &Value) -> CellHealth {
    if let Some(failed) = condition(object, "Failed")
        && is_true(failed)
    {
        return health(HealthKind::Degraded, condition_words(failed));
    }
    if let Some(complete) = condition(object, "Complete")
        && is_true(complete)
    {
        return health(HealthKind::Healthy, "complete");
    }
    if let Some(suspended) = condition(object, "Suspended")
        && is_true(suspended)
    {
        let message = suspended
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("");
        return health(HealthKind::Suspended, or(message, "Job suspended"));
    }
    if flag(object, "/spec/suspend") {
        return health(HealthKind::Suspended, "the job is suspended");
    }
    let active = int(object, "/status/active").unwrap_or(0);
    health(HealthKind::Progressing, format!("{active} pod(s) active"))
}

fn cron_job(object: &Value) -> CellHealth {
    if flag(object, "/spec/suspend") {
        return health(HealthKind::Suspended, "the schedule is suspended");
    }
    match text(object, "/status/lastScheduleTime") {
        Some(last) => health(HealthKind::Healthy, format!("last scheduled {last}")),
        None => health(HealthKind::Healthy, "not scheduled yet"),
    }
}

/// Whether a container's waiting reason will not get better by waiting, as Argo CD reads it:
/// `Err…`, `…Error` and `…BackOff` (ErrImagePull, CreateContainerConfigError,
/// CrashLoopBackOff, ImagePullBackOff).
fn stuck(reason: &str) -> bool {
    reason.starts_with("Err") || reason.ends_with("Error") || reason.ends_with("BackOff")
}

/// Argo CD's annotation that judges a Pod with restartPolicy Never or OnFailure as if it
/// restarted Always (unless the Pod is a sync hook).
const IGNORE_RESTART_POLICY: &str = "argocd.argoproj.io/ignore-restart-policy";

/// Whether a Pod is a sync hook, as Argo CD tells: an `argocd.argoproj.io/hook` annotation
/// that is not `Skip` alone, or a Helm hook other than `crd-install`.
fn is_hook(object: &Value) -> bool {
    let annotation = |name: &str| {
        object
            .pointer("/metadata/annotations")
            .and_then(|annotations| annotations.get(name))
            .and_then(Value::as_str)
    };
    if let Some(hooks) = annotation("argocd.argoproj.io/hook") {
        let kinds: Vec<&str> = hooks
            .split(',')
            .map(str::trim)
            .filter(|kind| !kind.is_empty())
            .collect();
        return kinds != ["Skip"];
    }
    annotation("helm.sh/hook").is_some_and(|value| value != "crd-install")
}

/// A Pod as Argo CD judges it: a pod that restarts its containers (restartPolicy Always, the
/// API's default) is Degraded by a container stuck waiting and, while Running, Healthy once
/// Ready, Degraded if a container has already terminated once, else Progressing; one that does
/// not (Never, OnFailure) is Progressing while Running, since only its end tells. Succeeded
/// is Healthy; Failed is Degraded with the pod's message or its first failed container's.
fn pod(object: &Value) -> CellHealth {
    let policy = text(object, "/spec/restartPolicy").unwrap_or("Always");
    let ignore_policy = text(
        object,
        &format!(
            "/metadata/annotations/{}",
            crate::engine::document::parse::escape_token(IGNORE_RESTART_POLICY)
        ),
    ) == Some("true");
    let restarts = policy == "Always" || (ignore_policy && !is_hook(object));
    let containers: Vec<&Value> = object
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let message = text(object, "/status/message").unwrap_or("");
    if restarts {
        let stuck: Vec<String> = containers
            .iter()
            .filter_map(|status| {
                let waiting = status.pointer("/state/waiting")?;
                let reason = waiting.get("reason").and_then(Value::as_str)?;
                stuck(reason).then(|| {
                    let name = status.get("name").and_then(Value::as_str).unwrap_or("?");
                    match waiting.get("message").and_then(Value::as_str) {
                        Some(message) if !message.is_empty() => {
                            format!("container {name}: {reason}: {message}")
                        }
                        _ => format!("container {name}: {reason}"),
                    }
                })
            })
            .collect();
        if !stuck.is_empty() {
            return health(HealthKind::Degraded, stuck.join(", "));
        }
    }
    match text(object, "/status/phase") {
        Some("Pending") => health(HealthKind::Progressing, or(message, "pending")),
        Some("Succeeded") => health(HealthKind::Healthy, or(message, "succeeded")),
        Some("Failed") => {
            if !message.is_empty() {
                return health(HealthKind::Degraded, message);
            }
            let all = ["/status/initContainerStatuses", "/status/containerStatuses"]
                .iter()
                .filter_map(|pointer| object.pointer(pointer)?.as_array())
                .flatten();
            let failure = all.into_iter().find_map(failed_container);
            health(
                HealthKind::Degraded,
                failure.unwrap_or_else(|| "failed".into()),
            )
        }
        Some("Running") if restarts => {
            if condition(object, "Ready").is_some_and(is_true) {
                return health(HealthKind::Healthy, or(message, "running and ready"));
            }
            let restarted = containers
                .iter()
                .find(|status| status.pointer("/lastState/terminated").is_some());
            match restarted {
                Some(status) => {
                    let name = status.get("name").and_then(Value::as_str).unwrap_or("?");
                    health(
                        HealthKind::Degraded,
                        or(
                            message,
                            &format!("running, not ready: container {name} terminated before"),
                        ),
                    )
                }
                None => health(HealthKind::Progressing, or(message, "running, not ready")),
            }
        }
        Some("Running") => health(
            HealthKind::Progressing,
            or(
                message,
                &format!("running (restartPolicy {policy}: done when it ends)"),
            ),
        ),
        _ => health(HealthKind::Unknown, or(message, "no phase reported")),
    }
}

/// Why a container of a failed Pod failed, as Argo CD words it.
fn failed_container(status: &Value) -> Option<String> {
    let terminated = status.pointer("/state/terminated")?;
    if let Some(message) = terminated.get("message").and_then(Value::as_str)
        && !message.is_empty()
    {
        return Some(message.to_string());
    }
    if terminated.get("reason").and_then(Value::as_str) == Some("OOMKilled") {
        return Some("OOMKilled".to_string());
    }
    let code = terminated
        .get("exitCode")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let name = status.get("name").and_then(Value::as_str).unwrap_or("?");
    (code != 0).then(|| format!("container {name:?} failed with exit code {code}"))
}

/// `text`, or `otherwise` where it is empty.
fn or(text: &str, otherwise: &str) -> String {
    if text.is_empty() {
        otherwise.to_string()
    } else {
        text.to_string()
    }
}

fn has_ingress(object: &Value) -> bool {
    object
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .is_some_and(|ingress| !ingress.is_empty())
}

fn service(object: &Value) -> CellHealth {
    if text(object, "/spec/type") != Some("LoadBalancer") {
        return health(HealthKind::Healthy, "");
    }
    if has_ingress(object) {
        health(HealthKind::Healthy, "load balancer assigned")
    } else {
        health(HealthKind::Progressing, "waiting for a load balancer")
    }
}

fn ingress(object: &Value) -> CellHealth {
    if has_ingress(object) {
        health(HealthKind::Healthy, "address assigned")
    } else {
        health(HealthKind::Progressing, "waiting for an address")
    }
}

fn claim(object: &Value) -> CellHealth {
    match text(object, "/status/phase") {
        Some("Bound") => health(HealthKind::Healthy, "bound"),
        Some("Lost") => health(HealthKind::Degraded, "the bound volume is lost"),
        Some("Pending") => health(HealthKind::Progressing, "pending"),
        Some(phase) => health(HealthKind::Unknown, format!("phase {phase}")),
        None => health(HealthKind::Unknown, "no phase reported"),
    }
}

/// Conditions that say an autoscaler cannot work, by type and reason (Argo CD's list).
const AUTOSCALER_FAILURES: [(&str, &str); 8] = [
    ("AbleToScale", "FailedGetScale"),
    ("AbleToScale", "FailedUpdateScale"),
    ("ScalingActive", "FailedGetResourceMetric"),
    ("ScalingActive", "FailedGetObjectMetric"),
    ("ScalingActive", "FailedGetPodsMetric"),
    ("ScalingActive", "FailedGetExternalMetric"),
    ("ScalingActive", "FailedComputeMetricsReplicas"),
    ("ScalingActive", "InvalidSelector"),
];

/// An autoscaler of any API version, by its conditions (`autoscaling/v1` keeps them in the
/// annotation `autoscaling.alpha.kubernetes.io/conditions`): Degraded by a failing
/// condition, Healthy once AbleToScale or ScalingLimited is True, else Progressing.
fn autoscaler(object: &Value) -> CellHealth {
    let waiting = || health(HealthKind::Progressing, "Waiting to Autoscale");
    let conditions: Vec<Value> =
        if object.get("apiVersion").and_then(Value::as_str) == Some("autoscaling/v1") {
            let Some(annotation) = text(
                object,
                "/metadata/annotations/autoscaling.alpha.kubernetes.io~1conditions",
            ) else {
                return waiting();
            };
            match serde_json::from_str::<Vec<Value>>(annotation) {
                Ok(conditions) => conditions,
                Err(error) => {
                    return health(
                        HealthKind::Unknown,
                        format!("the conditions annotation is not a list of conditions: {error}"),
                    );
                }
            }
        } else {
            object
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
    let field = |condition: &Value, name: &str| {
        condition
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    if let Some(failed) = conditions.iter().find(|condition| {
        AUTOSCALER_FAILURES.contains(&(&field(condition, "type"), &field(condition, "reason")))
    }) {
        return health(HealthKind::Degraded, condition_words(failed));
    }
    if let Some(able) = conditions.iter().find(|condition| {
        matches!(
            field(condition, "type").as_str(),
            "AbleToScale" | "ScalingLimited"
        ) && field(condition, "status") == "True"
    }) {
        return health(HealthKind::Healthy, condition_words(able));
    }
    waiting()
}

/// An APIService by its Available condition: Healthy when True, else Progressing.
fn api_service(object: &Value) -> CellHealth {
    match condition(object, "Available") {
        Some(available) if is_true(available) => {
            health(HealthKind::Healthy, condition_words(available))
        }
        Some(available) => health(HealthKind::Progressing, condition_words(available)),
        None => health(HealthKind::Progressing, "Waiting to be processed"),
    }
}

/// An Argo Workflow by its phase, as Argo CD's engine reads it.
fn workflow(object: &Value) -> CellHealth {
    let message = text(object, "/status/message").unwrap_or("");
    match text(object, "/status/phase").unwrap_or("") {
        "" | "Pending" | "Running" => health(HealthKind::Progressing, message),
        "Succeeded" => health(HealthKind::Healthy, message),
        "Failed" | "Error" => health(HealthKind::Degraded, message),
        phase => health(HealthKind::Unknown, or(message, &format!("phase {phase}"))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// One case of a fixture file: a live object as a cluster returns it, its health, and
    /// for a health that carries a time, that time and the reason as shown at a given moment.
    #[derive(serde::Deserialize)]
    struct Case {
        name: String,
        health: Option<HealthKind>,
        #[serde(default)]
        reason: String,
        #[serde(default)]
        since: Option<String>,
        #[serde(default)]
        shown: Vec<Shown>,
        object: Value,
    }

    /// The reason as [`reason_at`] words it at `at`.
    #[derive(serde::Deserialize)]
    struct Shown {
        at: String,
        reason: String,
    }

    fn cases(text: &str) -> Vec<Case> {
        serde_saphyr::from_str(text).unwrap()
    }

    #[test]
    fn every_fixture_case_has_the_health_it_names() {
        let files = [
            include_str!("../../../testdata/health/workloads.yaml"),
            include_str!("../../../testdata/health/jobs-and-pods.yaml"),
            include_str!("../../../testdata/health/networking-and-storage.yaml"),
            include_str!("../../../testdata/health/captured.yaml"),
        ];
        let mut checked = 0;
        for file in files {
            for case in cases(file) {
                let got = assess(&case.object);
                assert_eq!(
                    got.as_ref().map(|health| health.kind),
                    case.health,
                    "{}: {got:?}",
                    case.name
                );
                if let Some(got) = got {
                    assert!(
                        got.reason.contains(&case.reason),
                        "{}: the reason {:?} should contain {:?}",
                        case.name,
                        got.reason,
                        case.reason
                    );
                    assert_eq!(got.since, case.since, "{}: since", case.name);
                    for shown in &case.shown {
                        let at: k8s_openapi::jiff::Timestamp = shown.at.parse().unwrap();
                        assert_eq!(
                            reason_at(&got, Some(at.as_second())),
                            shown.reason,
                            "{} at {}",
                            case.name,
                            shown.at
                        );
                    }
                    assert_eq!(reason_at(&got, None), got.reason, "{}", case.name);
                }
                checked += 1;
            }
        }
        assert!(checked >= 20, "only {checked} cases");
    }

    #[test]
    fn health_names_parse_loosely_and_order_by_severity() {
        assert_eq!(HealthKind::parse("degraded"), Some(HealthKind::Degraded));
        assert_eq!(
            HealthKind::parse("Progressing"),
            Some(HealthKind::Progressing)
        );
        assert_eq!(HealthKind::parse("sick"), None);
        assert!(HealthKind::Degraded > HealthKind::Progressing);
        assert!(HealthKind::Progressing > HealthKind::Healthy);
    }
}
