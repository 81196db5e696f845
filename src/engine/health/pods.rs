//! A pod as an operator reads it: kubectl's STATUS column (`status_reason`, the rule of
//! kubectl's `printPod`, which the API server also prints its pod tables with), its ready
//! containers and restarts counted the same way, the last termination of a container, and
//! the one trouble it is in ([`PodTrouble`]); and, for the pods of one workload on one cluster,
//! the line that names the worst of them ([`summary`]), and where they run other images than
//! the fleet renders ([`image_skew`]). It reads only the pods and templates handed to it and
//! the time it is told: it must not list pods, know which workload owns one, or read a clock.

use serde::Serialize;
use serde_json::Value;

/// Kinds whose pods flotilla follows (by owner references, a Deployment's through its
/// ReplicaSets).
pub const WORKLOADS: &[&str] = &[
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "ReplicaSet",
];

/// The trouble a pod is in, worst first (the order [`summary`] names them in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum PodTrouble {
    /// A container keeps failing and the kubelet waits before starting it again.
    CrashLoopBackOff,
    /// An image cannot be pulled (`ImagePullBackOff`, `ErrImagePull`, `InvalidImageName`).
    ImagePullBackOff,
    /// The pod's phase is Failed (a Job's pod that exited with an error, an evicted pod).
    Failed,
    /// A container was killed for using more memory than its limit (now or last time).
    OOMKilled,
    /// Not running yet: not scheduled, or its containers are being created or initialised.
    Pending,
    /// Running, but not every container is ready (or the node stopped answering).
    NotReady,
    /// Running and ready, but its containers have restarted.
    Restarting,
}

impl PodTrouble {
    pub const ALL: [PodTrouble; 7] = [
        PodTrouble::CrashLoopBackOff,
        PodTrouble::ImagePullBackOff,
        PodTrouble::Failed,
        PodTrouble::OOMKilled,
        PodTrouble::Pending,
        PodTrouble::NotReady,
        PodTrouble::Restarting,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PodTrouble::CrashLoopBackOff => "CrashLoopBackOff",
            PodTrouble::ImagePullBackOff => "ImagePullBackOff",
            PodTrouble::Failed => "Failed",
            PodTrouble::OOMKilled => "OOMKilled",
            PodTrouble::Pending => "Pending",
            PodTrouble::NotReady => "NotReady",
            PodTrouble::Restarting => "Restarting",
        }
    }

    /// The trouble of this name, as `--state` takes it (any case; `ErrImagePull` is
    /// `ImagePullBackOff`).
    pub fn parse(text: &str) -> Option<PodTrouble> {
        if text.eq_ignore_ascii_case("ErrImagePull") {
            return Some(PodTrouble::ImagePullBackOff);
        }
        PodTrouble::ALL
            .into_iter()
            .find(|trouble| trouble.as_str().eq_ignore_ascii_case(text))
    }
}

impl std::fmt::Display for PodTrouble {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a container last ended: its reason (or `Error`), exit code and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Termination {
    pub container: String,
    pub reason: String,
    #[serde(rename = "exitCode")]
    pub exit_code: i64,
    #[serde(rename = "finishedAt", skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Seconds from its end to the time the pod was read.
    #[serde(rename = "ageSeconds", skip_serializing_if = "Option::is_none")]
    pub age_seconds: Option<u64>,
}

/// A container and the image its pod asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContainerImage {
    pub container: String,
    pub image: String,
}

/// One pod as `flotilla pods` and the object view show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PodRow {
    pub name: String,
    pub namespace: String,
    pub phase: String,
    /// kubectl's STATUS column.
    pub status: String,
    /// Ready containers and containers, as kubectl's READY column counts them.
    pub ready: u32,
    pub containers: u32,
    pub restarts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trouble: Option<PodTrouble>,
    /// The most recent end of any of its containers (`lastState`, or the state itself when
    /// the container is terminated now).
    #[serde(rename = "lastTermination", skip_serializing_if = "Option::is_none")]
    pub last_termination: Option<Termination>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(rename = "ageSeconds", skip_serializing_if = "Option::is_none")]
    pub age_seconds: Option<u64>,
    /// Why it is not scheduled, or a waiting container's message, when it says.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    pub images: Vec<ContainerImage>,
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn list<'a>(value: &'a Value, pointer: &str) -> &'a [Value] {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn count(value: &Value, pointer: &str) -> i64 {
    value.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// A terminated state's words in kubectl's STATUS: its reason, else the signal or exit code.
fn terminated_reason(terminated: &Value, prefix: &str) -> String {
    let reason = text(terminated, "/reason");
    if !reason.is_empty() {
        return format!("{prefix}{reason}");
    }
    match count(terminated, "/signal") {
        0 => format!("{prefix}ExitCode:{}", count(terminated, "/exitCode")),
        signal => format!("{prefix}Signal:{signal}"),
    }
}

/// What kubectl counts of a pod: its STATUS, ready containers, containers and restarts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Printed {
    pub status: String,
    pub ready: u32,
    pub containers: u32,
    pub restarts: u32,
}

/// A pod as kubectl's `printPod` prints it (STATUS, READY, RESTARTS), sidecar init containers
/// (`restartPolicy: Always`) included as kubectl counts them: the rule of Kubernetes v1.36's
/// `pkg/printers/internalversion/printers.go`, which the API server prints pod tables with
/// (`tests/testenv_pods.rs` holds generated statuses to what a real one prints).
pub fn printed(pod: &Value) -> Printed {
    let phase = text(pod, "/status/phase");
    let mut reason = match text(pod, "/status/reason") {
        "" => phase.to_string(),
        reason => reason.to_string(),
    };
    if list(pod, "/status/conditions").iter().any(|condition| {
        text(condition, "/type") == "PodScheduled"
            && text(condition, "/reason") == "SchedulingGated"
    }) {
        reason = "SchedulingGated".into();
    }
    let init_specs = list(pod, "/spec/initContainers");
    let sidecar = |name: &str| {
        init_specs
            .iter()
            .any(|spec| text(spec, "/name") == name && text(spec, "/restartPolicy") == "Always")
    };
    let mut containers = list(pod, "/spec/containers").len() as i64;
    containers += init_specs
        .iter()
        .filter(|spec| text(spec, "/restartPolicy") == "Always")
        .count() as i64;
    let mut ready = 0i64;
    let mut restarts = 0i64;
    let mut sidecar_restarts = 0i64;
    let mut initializing = false;
    for (index, status) in list(pod, "/status/initContainerStatuses")
        .iter()
        .enumerate()
    {
        let name = text(status, "/name");
        restarts += count(status, "/restartCount");
        if sidecar(name) {
            sidecar_restarts += count(status, "/restartCount");
        }
        let terminated = status.pointer("/state/terminated");
        let waiting_reason = text(status, "/state/waiting/reason");
        if terminated.is_some_and(|t| count(t, "/exitCode") == 0) {
            continue;
        }
        if sidecar(name) && status.get("started").and_then(Value::as_bool) == Some(true) {
            if status.get("ready").and_then(Value::as_bool) == Some(true) {
                ready += 1;
            }
            continue;
        }
        if let Some(terminated) = terminated {
            reason = terminated_reason(terminated, "Init:");
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            reason = format!("Init:{waiting_reason}");
        } else {
            reason = format!("Init:{index}/{}", init_specs.len());
        }
        initializing = true;
        break;
    }
    let initialized = list(pod, "/status/conditions").iter().any(|condition| {
        text(condition, "/type") == "Initialized" && text(condition, "/status") == "True"
    });
    if !initializing || initialized {
        restarts = sidecar_restarts;
        let mut has_running = false;
        // The first container (in the spec's order) that ended with an error.
        let mut error_reason = String::new();
        for status in list(pod, "/status/containerStatuses").iter().rev() {
            restarts += count(status, "/restartCount");
            let waiting_reason = text(status, "/state/waiting/reason");
            if !waiting_reason.is_empty() {
                reason = waiting_reason.to_string();
            } else if let Some(terminated) = status.pointer("/state/terminated") {
                reason = terminated_reason(terminated, "");
                if count(terminated, "/exitCode") != 0 {
                    error_reason = reason.clone();
                }
            } else if status.get("ready").and_then(Value::as_bool) == Some(true)
                && status.pointer("/state/running").is_some()
            {
                has_running = true;
                ready += 1;
            }
        }
        // A completed container beside others: the pod is running, or one of the others failed.
        if reason == "Completed" {
            let pod_ready = list(pod, "/status/conditions").iter().any(|condition| {
                text(condition, "/type") == "Ready" && text(condition, "/status") == "True"
            });
            if has_running && pod_ready {
                reason = "Running".into();
            } else if !error_reason.is_empty() {
                reason = error_reason;
            } else if has_running {
                reason = "NotReady".into();
            }
        }
    }
    if pod.pointer("/metadata/deletionTimestamp").is_some() {
        if text(pod, "/status/reason") == "NodeLost" {
            reason = "Unknown".into();
        } else if !matches!(phase, "Succeeded" | "Failed") {
            reason = "Terminating".into();
        }
    }
    let clamp = |n: i64| u32::try_from(n.max(0)).unwrap_or(u32::MAX);
    Printed {
        status: reason,
        ready: clamp(ready),
        containers: clamp(containers),
        restarts: clamp(restarts),
    }
}

/// The most recent end of any container of the pod (init containers included).
pub fn last_termination(pod: &Value, now_seconds: i64) -> Option<Termination> {
    let statuses = list(pod, "/status/initContainerStatuses")
        .iter()
        .chain(list(pod, "/status/containerStatuses"));
    let mut latest: Option<(String, Termination)> = None;
    for status in statuses {
        for pointer in ["/state/terminated", "/lastState/terminated"] {
            let Some(terminated) = status.pointer(pointer) else {
                continue;
            };
            // A sidecar or init container that finished its work did not fail.
            if pointer == "/state/terminated" && count(terminated, "/exitCode") == 0 {
                continue;
            }
            let finished = text(terminated, "/finishedAt").to_string();
            let age_seconds = finished
                .parse::<k8s_openapi::jiff::Timestamp>()
                .ok()
                .map(|at| now_seconds.saturating_sub(at.as_second()).max(0) as u64);
            let termination = Termination {
                container: text(status, "/name").to_string(),
                reason: match text(terminated, "/reason") {
                    "" => "Error".to_string(),
                    reason => reason.to_string(),
                },
                exit_code: count(terminated, "/exitCode"),
                finished_at: (!finished.is_empty()).then(|| finished.clone()),
                age_seconds,
            };
            // RFC 3339 times in UTC sort as text; an end without a time sorts first.
            if latest.as_ref().is_none_or(|(at, _)| finished > *at) {
                latest = Some((finished, termination));
            }
        }
    }
    latest.map(|(_, termination)| termination)
}

/// The trouble a pod is in, from kubectl's STATUS and its last termination; `None` for a pod
/// that is running with every container ready and never restarted, or that completed.
pub fn trouble(pod: &Value, printed: &Printed, last: Option<&Termination>) -> Option<PodTrouble> {
    let status = printed
        .status
        .strip_prefix("Init:")
        .unwrap_or(&printed.status);
    let phase = text(pod, "/status/phase");
    if status == "CrashLoopBackOff" {
        return Some(PodTrouble::CrashLoopBackOff);
    }
    if matches!(
        status,
        "ImagePullBackOff" | "ErrImagePull" | "InvalidImageName"
    ) {
        return Some(PodTrouble::ImagePullBackOff);
    }
    if phase == "Failed" {
        return Some(PodTrouble::Failed);
    }
    if status == "OOMKilled" || last.is_some_and(|last| last.reason == "OOMKilled") {
        return Some(PodTrouble::OOMKilled);
    }
    if matches!(phase, "Succeeded") || status == "Terminating" {
        return None;
    }
    if phase == "Pending" || phase.is_empty() {
        return Some(PodTrouble::Pending);
    }
    if phase == "Unknown" || printed.ready < printed.containers || status != "Running" {
        return Some(PodTrouble::NotReady);
    }
    if printed.restarts > 0 {
        return Some(PodTrouble::Restarting);
    }
    None
}

/// Why a pod is where it is, when it says: an unscheduled pod's condition message, or a
/// waiting container's message.
fn message(pod: &Value) -> String {
    let unscheduled = list(pod, "/status/conditions").iter().find(|condition| {
        text(condition, "/type") == "PodScheduled" && text(condition, "/status") == "False"
    });
    if let Some(condition) = unscheduled {
        return text(condition, "/message").to_string();
    }
    list(pod, "/status/containerStatuses")
        .iter()
        .map(|status| text(status, "/state/waiting/message"))
        .find(|message| !message.is_empty())
        .unwrap_or("")
        .to_string()
}

/// One pod read at `now_seconds` (seconds since the epoch).
pub fn pod_row(pod: &Value, now_seconds: i64) -> PodRow {
    let printed = printed(pod);
    let last = last_termination(pod, now_seconds);
    let trouble = trouble(pod, &printed, last.as_ref());
    let age_seconds = text(pod, "/metadata/creationTimestamp")
        .parse::<k8s_openapi::jiff::Timestamp>()
        .ok()
        .map(|at| now_seconds.saturating_sub(at.as_second()).max(0) as u64);
    PodRow {
        name: text(pod, "/metadata/name").to_string(),
        namespace: text(pod, "/metadata/namespace").to_string(),
        phase: text(pod, "/status/phase").to_string(),
        status: printed.status,
        ready: printed.ready,
        containers: printed.containers,
        restarts: printed.restarts,
        trouble,
        last_termination: last,
        node: Some(text(pod, "/spec/nodeName"))
            .filter(|node| !node.is_empty())
            .map(str::to_string),
        age_seconds,
        message: message(pod),
        images: list(pod, "/spec/containers")
            .iter()
            .map(|container| ContainerImage {
                container: text(container, "/name").to_string(),
                image: text(container, "/image").to_string(),
            })
            .collect(),
    }
}

/// A duration as kubectl's AGE column writes it: `45s`, `3m`, `2h`, `5d`, `2y`.
pub fn short_duration(seconds: u64) -> String {
    match seconds {
        s if s < 120 => format!("{s}s"),
        s if s < 3 * 3600 => format!("{}m", s / 60),
        s if s < 2 * 86400 => format!("{}h", s / 3600),
        s if s < 2 * 365 * 86400 => format!("{}d", s / 86400),
        s => format!("{}y", s / (365 * 86400)),
    }
}

/// The worst pod state of one workload's pods on one cluster in one line: `2/3 ready,
/// 1 CrashLoopBackOff: exit 1, 1 OOMKilled 3m ago`; `no pods` when there are none.
pub fn summary(pods: &[PodRow]) -> String {
    if pods.is_empty() {
        return "no pods".into();
    }
    let ready = pods
        .iter()
        .filter(|pod| pod.containers > 0 && pod.ready == pod.containers)
        .count();
    let mut parts = vec![format!("{ready}/{} ready", pods.len())];
    for trouble in PodTrouble::ALL {
        let with: Vec<&PodRow> = pods
            .iter()
            .filter(|pod| pod.trouble == Some(trouble))
            .collect();
        let Some(first) = with.first() else {
            continue;
        };
        let detail = match (trouble, &first.last_termination) {
            (PodTrouble::CrashLoopBackOff | PodTrouble::Failed, Some(last)) => {
                format!(": exit {}", last.exit_code)
            }
            (PodTrouble::OOMKilled | PodTrouble::Restarting, Some(last)) => last
                .age_seconds
                .map(|age| format!(" {} ago", short_duration(age)))
                .unwrap_or_default(),
            (PodTrouble::Pending, _) if !first.message.is_empty() => {
                format!(": {}", first.message)
            }
            _ => String::new(),
        };
        parts.push(format!("{} {trouble}{detail}", with.len()));
    }
    parts.join(", ")
}

/// The worst trouble among pods, if any is in trouble.
pub fn worst(pods: &[PodRow]) -> Option<PodTrouble> {
    pods.iter().filter_map(|pod| pod.trouble).min()
}

/// Each container of a workload's pod template and its image, in the template's order
/// (`spec.template.spec.containers`; a CronJob's through its job template).
pub fn template_images(workload: &Value) -> Vec<(String, String)> {
    let containers = workload
        .pointer("/spec/template/spec/containers")
        .or_else(|| workload.pointer("/spec/jobTemplate/spec/template/spec/containers"))
        .and_then(Value::as_array);
    containers
        .into_iter()
        .flatten()
        .map(|container| {
            let text = |key: &str| {
                container
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            (text("name"), text("image"))
        })
        .collect()
}

/// Whether a container runs other than the image the fleet renders for it: its live
/// template asks for another, or a pod runs another (`flotilla images`'s skew).
pub fn image_differs(desired: &str, live: Option<&str>, running: &[&str]) -> bool {
    live.is_some_and(|live| live != desired) || running.iter().any(|image| *image != desired)
}

/// Where one cluster's workload runs other images than the fleet renders for it, one line per
/// container that differs: `web: nginx:1.26 (desired nginx:1.27)`.
pub fn image_skew(desired: &Value, live: Option<&Value>, pods: &[PodRow]) -> Vec<String> {
    let live: Vec<(String, String)> = live.map(template_images).unwrap_or_default();
    template_images(desired)
        .into_iter()
        .filter_map(|(container, wanted)| {
            let mut running: Vec<&str> = pods
                .iter()
                .flat_map(|pod| &pod.images)
                .filter(|image| image.container == container)
                .map(|image| image.image.as_str())
                .collect();
            running.sort_unstable();
            running.dedup();
            let live = live
                .iter()
                .find(|(name, _)| *name == container)
                .map(|(_, image)| image.as_str());
            if !image_differs(&wanted, live, &running) {
                return None;
            }
            let mut other: Vec<&str> = running.into_iter().filter(|i| *i != wanted).collect();
            if let Some(live) = live.filter(|l| *l != wanted && !other.contains(l)) {
                other.push(live);
            }
            Some(format!(
                "{container}: {} (desired {wanted})",
                other.join(", ")
            ))
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: &str = "2026-01-01T00:10:00Z";

    fn now() -> i64 {
        NOW.parse::<k8s_openapi::jiff::Timestamp>()
            .unwrap()
            .as_second()
    }

    fn pod(phase: &str, statuses: Value) -> Value {
        json!({
            "metadata": {"name": "web-1", "namespace": "shop", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"nodeName": "n1", "containers": [{"name": "web", "image": "web:1"}, {"name": "side", "image": "side:1"}]},
            "status": {"phase": phase, "containerStatuses": statuses},
        })
    }

    #[test]
    fn kubectl_words_and_the_trouble_they_mean() {
        let running = json!({"running": {}});
        let crash = pod(
            "Running",
            json!([
                {"name": "web", "ready": false, "restartCount": 7, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                 "lastState": {"terminated": {"reason": "Error", "exitCode": 1, "finishedAt": "2026-01-01T00:08:00Z"}}},
                {"name": "side", "ready": true, "restartCount": 0, "state": running},
            ]),
        );
        let row = pod_row(&crash, now());
        assert_eq!(
            (row.status.as_str(), row.ready, row.containers, row.restarts),
            ("CrashLoopBackOff", 1, 2, 7)
        );
        assert_eq!(row.trouble, Some(PodTrouble::CrashLoopBackOff));
        let last = row.last_termination.clone().unwrap();
        assert_eq!((last.exit_code, last.age_seconds), (1, Some(120)));

        let oom = pod(
            "Running",
            json!([
                {"name": "web", "ready": true, "restartCount": 2, "state": running,
                 "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137, "finishedAt": "2026-01-01T00:07:00Z"}}},
                {"name": "side", "ready": true, "restartCount": 0, "state": running},
            ]),
        );
        let oom = pod_row(&oom, now());
        assert_eq!(oom.status, "Running");
        assert_eq!(oom.trouble, Some(PodTrouble::OOMKilled));

        let pending = json!({"metadata": {"name": "t"}, "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                "reason": "Unschedulable", "message": "0/2 nodes are available: 2 node(s) had untolerated taint."}]}});
        let pending = pod_row(&pending, now());
        assert_eq!(
            (pending.status.as_str(), pending.trouble),
            ("Pending", Some(PodTrouble::Pending))
        );

        let pull = pod(
            "Pending",
            json!([{"name": "web", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ErrImagePull"}}}]),
        );
        assert_eq!(
            pod_row(&pull, now()).trouble,
            Some(PodTrouble::ImagePullBackOff)
        );

        assert_eq!(
            summary(&[
                row.clone(),
                oom.clone(),
                pod_row(
                    &pod(
                        "Running",
                        json!([
                {"name": "web", "ready": true, "restartCount": 0, "state": running},
                {"name": "side", "ready": true, "restartCount": 0, "state": running}])
                    ),
                    now()
                )
            ]),
            "2/3 ready, 1 CrashLoopBackOff: exit 1, 1 OOMKilled 3m ago"
        );
        assert_eq!(worst(&[oom, row]), Some(PodTrouble::CrashLoopBackOff));
    }

    #[test]
    fn init_containers_read_as_kubectl_reads_them() {
        let pod = json!({
            "spec": {"initContainers": [{"name": "migrate"}, {"name": "proxy", "restartPolicy": "Always"}],
                     "containers": [{"name": "web"}]},
            "status": {"phase": "Pending", "initContainerStatuses": [
                {"name": "migrate", "restartCount": 3, "state": {"terminated": {"exitCode": 2}}},
                {"name": "proxy", "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}},
            ], "containerStatuses": [{"name": "web", "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}}]},
        });
        let printed = printed(&pod);
        assert_eq!(printed.status, "Init:ExitCode:2");
        assert_eq!((printed.containers, printed.restarts), (2, 3));
    }

    #[test]
    fn every_trouble_reads_back_from_its_name() {
        for trouble in PodTrouble::ALL {
            assert_eq!(PodTrouble::parse(trouble.as_str()), Some(trouble));
            assert_eq!(
                PodTrouble::parse(&trouble.as_str().to_lowercase()),
                Some(trouble)
            );
        }
        assert_eq!(
            PodTrouble::parse("ErrImagePull"),
            Some(PodTrouble::ImagePullBackOff)
        );
        assert_eq!(PodTrouble::parse("Sleepy"), None);
    }
}
