//! The logs of workloads' pods on many clusters at once: which containers to read (from the
//! pods `fanout::pods` found), one stream per container opened through the cluster's
//! `pods/log` (at most `opening` being opened at once),
//! each into its own bounded channel, and the lines handed on in time order as the engine's
//! [`Interleave`] decides. A slow or quiet stream holds back no other beyond its channel and,
//! when following, a short grace. It only reads, and must not print or decide an exit code.

use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;
use tokio::sync::{Notify, Semaphore, mpsc};

use super::cluster_api::ApiError;
use super::pods::WorkloadPods;
use crate::engine::logs::{Interleave, LogLine, split_timestamp};

/// What one `pods/log` request asks for (the server is always asked for timestamps).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogRequest {
    pub namespace: String,
    pub pod: String,
    pub container: String,
    pub since_seconds: Option<u64>,
    pub tail_lines: Option<u64>,
    pub follow: bool,
    pub previous: bool,
}

/// A container's lines as the server sends them, one string a line without its newline.
pub type LogStream = BoxStream<'static, Result<String, ApiError>>;

/// A cluster whose pods' logs can be read.
pub trait PodLogs: Send + Sync {
    /// Opens one container's log; an error here is the server's refusal (no such container,
    /// no previous container, the pod is not running yet).
    fn pod_logs(
        &self,
        request: &LogRequest,
    ) -> impl Future<Output = Result<LogStream, ApiError>> + Send;
}

/// One container to read on one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSource {
    pub cluster: String,
    pub request: LogRequest,
}

/// Why something was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogProblem {
    pub cluster: String,
    /// `pod/NAME` or `pod/NAME/CONTAINER`, or the workload's key when its pods could not be
    /// listed.
    pub what: String,
    pub reason: String,
    /// A failure (the exit code says so) rather than a note (a pod not scheduled yet).
    pub failed: bool,
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// The containers to read: of every found pod, `container` where given (a pod without it is a
/// problem), else every container (as stern shows them all). A pod on no node has no logs yet
/// (a note); a workload whose pods could not be read is a failure.
pub fn log_sources(
    workloads: &[WorkloadPods],
    container: Option<&str>,
    base: &LogRequest,
) -> (Vec<LogSource>, Vec<LogProblem>) {
    let mut sources = Vec::new();
    let mut problems = Vec::new();
    for workload in workloads {
        if let Some(error) = &workload.error {
            problems.push(LogProblem {
                cluster: workload.cluster.clone(),
                what: workload.resource.display_key(),
                reason: error.clone(),
                failed: true,
            });
            continue;
        }
        for pod in &workload.pods {
            let name = text(pod, "/metadata/name");
            if text(pod, "/spec/nodeName").is_empty() {
                problems.push(LogProblem {
                    cluster: workload.cluster.clone(),
                    what: format!("pod/{name}"),
                    reason: format!(
                        "{} and on no node yet: no logs",
                        match text(pod, "/status/phase") {
                            "" => "Pending",
                            phase => phase,
                        }
                    ),
                    failed: false,
                });
                continue;
            }
            let names: Vec<&str> = pod
                .pointer("/spec/containers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| text(c, "/name"))
                .collect();
            let chosen: Vec<&str> = match container {
                Some(wanted) if names.contains(&wanted) => vec![wanted],
                Some(wanted) => {
                    problems.push(LogProblem {
                        cluster: workload.cluster.clone(),
                        what: format!("pod/{name}"),
                        reason: format!(
                            "has no container {wanted:?} (it has {})",
                            names.join(", ")
                        ),
                        failed: true,
                    });
                    continue;
                }
                None => names,
            };
            for chosen in chosen {
                // Only a container that ran before has a previous run to read (the kubelet
                // keeps the one before a restart); the others are a note, not a failure.
                if base.previous && !restarted(pod, chosen) {
                    problems.push(LogProblem {
                        cluster: workload.cluster.clone(),
                        what: format!("pod/{name}/{chosen}"),
                        reason: "no previous run (never restarted)".into(),
                        failed: false,
                    });
                    continue;
                }
                sources.push(LogSource {
                    cluster: workload.cluster.clone(),
                    request: LogRequest {
                        namespace: text(pod, "/metadata/namespace").to_string(),
                        pod: name.to_string(),
                        container: chosen.to_string(),
                        ..base.clone()
                    },
                });
            }
        }
    }
    (sources, problems)
}

/// Whether `container` of `pod` has ended a run before the current one.
fn restarted(pod: &Value, container: &str) -> bool {
    pod.pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|status| text(status, "/name") == container)
        .is_some_and(|status| {
            status.pointer("/lastState/terminated").is_some()
                || status
                    .get("restartCount")
                    .and_then(Value::as_u64)
                    .is_some_and(|n| n > 0)
        })
}

/// How hard the streams may pull.
#[derive(Debug, Clone, Copy)]
pub struct StreamLimits {
    /// Lines one stream may hold unread before its reading waits.
    pub per_stream: usize,
    /// Requests being opened at once.
    pub opening: usize,
    /// How long, when following, a line waits for a quiet stream before it is written.
    pub grace: Duration,
}

impl Default for StreamLimits {
    fn default() -> Self {
        StreamLimits {
            per_stream: 256,
            opening: 16,
            grace: Duration::from_millis(200),
        }
    }
}

/// What the streams produce, in the order to write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEvent {
    Line(LogLine),
    Problem(LogProblem),
}

enum Item {
    Line(LogLine),
    Failed(String),
}

/// Reads every source on its cluster's API (`api_of` by cluster name) and hands each line and
/// each failure to `emit` as they come, lines interleaved by time. Returns when every stream
/// has ended (never, while following a live container, unless the caller stops).
pub async fn stream_logs<'a, A: PodLogs>(
    api_of: &(dyn Fn(&str) -> Option<&'a A> + Sync),
    sources: &[LogSource],
    limits: StreamLimits,
    emit: &mut (dyn FnMut(LogEvent) + Send),
) {
    let follow = sources.iter().any(|source| source.request.follow);
    let opening = Semaphore::new(limits.opening.max(1));
    let notify = Notify::new();
    let mut merge = Interleave::default();
    let mut receivers = Vec::with_capacity(sources.len());
    let mut readers = Vec::with_capacity(sources.len());
    for source in sources {
        merge.add_stream();
        let (tx, rx) = mpsc::channel::<Item>(limits.per_stream.max(1));
        receivers.push(rx);
        let (opening, notify) = (&opening, &notify);
        readers.push(async move {
            let permit = opening.acquire().await.ok();
            let request = &source.request;
            let line = |time, text: &str| LogLine {
                cluster: source.cluster.clone(),
                namespace: request.namespace.clone(),
                pod: request.pod.clone(),
                container: request.container.clone(),
                time,
                text: text.to_string(),
            };
            let opened = match api_of(&source.cluster) {
                Some(api) => api.pod_logs(request).await,
                None => Err(ApiError::Unreachable("no connection to the cluster".into())),
            };
            match opened {
                Err(err) => {
                    let _ = tx.send(Item::Failed(err.to_string())).await;
                }
                Ok(mut stream) => {
                    // An open stream waits on the order of the others: holding the permit
                    // while it reads would let a full channel keep the rest from opening.
                    drop(permit);
                    while let Some(next) = stream.next().await {
                        let item = match next {
                            Ok(raw) => {
                                let (time, text) = split_timestamp(&raw);
                                Item::Line(line(time, text))
                            }
                            Err(err) => Item::Failed(err.to_string()),
                        };
                        let failed = matches!(item, Item::Failed(_));
                        if tx.send(item).await.is_err() {
                            break;
                        }
                        notify.notify_one();
                        if failed {
                            break;
                        }
                    }
                }
            }
            drop(tx);
            notify.notify_one();
        });
    }
    let merger = async {
        loop {
            for (index, rx) in receivers.iter_mut().enumerate() {
                while merge.wants(index) {
                    match rx.try_recv() {
                        Ok(Item::Line(line)) => merge.offer(index, line),
                        Ok(Item::Failed(reason)) => {
                            let source = &sources[index];
                            emit(LogEvent::Problem(LogProblem {
                                cluster: source.cluster.clone(),
                                what: format!(
                                    "pod/{}/{}",
                                    source.request.pod, source.request.container
                                ),
                                reason,
                                failed: true,
                            }));
                        }
                        Err(mpsc::error::TryRecvError::Empty) => break,
                        Err(mpsc::error::TryRecvError::Disconnected) => merge.close(index),
                    }
                }
            }
            if let Some(line) = merge.next_in_order() {
                emit(LogEvent::Line(line));
                continue;
            }
            if merge.finished() {
                break;
            }
            if follow {
                if tokio::time::timeout(limits.grace, notify.notified())
                    .await
                    .is_err()
                {
                    while let Some(line) = merge.take_earliest() {
                        emit(LogEvent::Line(line));
                    }
                }
            } else {
                notify.notified().await;
            }
        }
    };
    tokio::join!(futures::future::join_all(readers), merger);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::ResourceRef;
    use serde_json::json;
    use std::collections::BTreeMap;

    /// A cluster whose every container prints the given lines, or refuses.
    struct Canned {
        lines: Vec<String>,
        refuse: Option<String>,
    }

    impl PodLogs for Canned {
        async fn pod_logs(&self, request: &LogRequest) -> Result<LogStream, ApiError> {
            if let Some(reason) = &self.refuse {
                return Err(ApiError::NotFound(reason.clone()));
            }
            let lines: Vec<Result<String, ApiError>> = self
                .lines
                .iter()
                .map(|l| Ok(format!("{l} {}", request.pod)))
                .collect();
            Ok(futures::stream::iter(lines).boxed())
        }
    }

    fn workload(cluster: &str, pods: Vec<Value>) -> WorkloadPods {
        WorkloadPods {
            cluster: cluster.into(),
            resource: ResourceRef {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                namespace: Some("shop".into()),
                name: "web".into(),
            },
            desired: json!({}),
            live: Some(json!({})),
            pods,
            error: None,
        }
    }

    fn pod(name: &str, node: Option<&str>, containers: &[&str]) -> Value {
        let containers: Vec<Value> = containers.iter().map(|c| json!({"name": c})).collect();
        let mut pod = json!({"metadata": {"name": name, "namespace": "shop"},
            "spec": {"containers": containers}, "status": {"phase": "Pending"}});
        if let Some(node) = node {
            pod["spec"]["nodeName"] = json!(node);
        }
        pod
    }

    #[test]
    fn every_container_of_every_scheduled_pod_is_read_and_a_pending_pod_is_a_note() {
        let workloads = vec![
            workload(
                "a",
                vec![
                    pod("web-1", Some("n"), &["web", "proxy"]),
                    pod("web-2", None, &["web"]),
                ],
            ),
            WorkloadPods {
                error: Some("unreachable: down".into()),
                ..workload("b", vec![])
            },
        ];
        let base = LogRequest {
            tail_lines: Some(3),
            ..LogRequest::default()
        };
        let (sources, problems) = log_sources(&workloads, None, &base);
        let read: Vec<(&str, &str)> = sources
            .iter()
            .map(|s| (s.request.pod.as_str(), s.request.container.as_str()))
            .collect();
        assert_eq!(read, [("web-1", "web"), ("web-1", "proxy")]);
        assert!(sources.iter().all(|s| s.request.tail_lines == Some(3)));
        assert_eq!(problems.len(), 2);
        assert!(!problems[0].failed && problems[0].reason.contains("no node"));
        assert!(problems[1].failed && problems[1].cluster == "b");

        let previous = LogRequest {
            previous: true,
            ..LogRequest::default()
        };
        let mut restarted = pod("web-3", Some("n"), &["web"]);
        restarted["status"]["containerStatuses"] = json!([{"name": "web", "restartCount": 2}]);
        let with_restart = vec![workload("a", vec![restarted, workloads[0].pods[0].clone()])];
        let (sources, problems) = log_sources(&with_restart, None, &previous);
        assert_eq!(sources.len(), 1);
        assert_eq!(sources[0].request.pod, "web-3");
        assert!(sources[0].request.previous);
        assert_eq!(problems.len(), 2);
        assert!(
            problems
                .iter()
                .all(|p| !p.failed && p.reason.contains("no previous run"))
        );

        let (sources, problems) = log_sources(&workloads[..1], Some("sidecar"), &base);
        assert!(sources.is_empty());
        assert!(problems[0].reason.contains("no container \"sidecar\""));
    }

    #[tokio::test]
    async fn lines_of_many_clusters_come_out_in_time_order_and_a_refusal_is_reported() {
        let mut apis = BTreeMap::new();
        apis.insert(
            "a",
            Canned {
                lines: vec![
                    "2026-01-01T00:00:01Z a1".into(),
                    "2026-01-01T00:00:04Z a4".into(),
                ],
                refuse: None,
            },
        );
        apis.insert(
            "b",
            Canned {
                lines: vec![
                    "2026-01-01T00:00:02Z b2".into(),
                    "2026-01-01T00:00:03Z b3".into(),
                ],
                refuse: None,
            },
        );
        apis.insert(
            "c",
            Canned {
                lines: vec![],
                refuse: Some("previous terminated container not found".into()),
            },
        );
        let source = |cluster: &str| LogSource {
            cluster: cluster.into(),
            request: LogRequest {
                pod: format!("{cluster}-pod"),
                container: "web".into(),
                ..LogRequest::default()
            },
        };
        let sources = [source("a"), source("b"), source("c")];
        let mut events = Vec::new();
        let limits = StreamLimits {
            per_stream: 1,
            opening: 1,
            ..StreamLimits::default()
        };
        stream_logs(&|name| apis.get(name), &sources, limits, &mut |event| {
            events.push(event)
        })
        .await;
        let lines: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                LogEvent::Line(line) => Some(line.text.clone()),
                LogEvent::Problem(_) => None,
            })
            .collect();
        assert_eq!(lines, ["a1 a-pod", "b2 b-pod", "b3 b-pod", "a4 a-pod"]);
        let problems: Vec<&LogProblem> = events
            .iter()
            .filter_map(|e| match e {
                LogEvent::Problem(p) => Some(p),
                LogEvent::Line(_) => None,
            })
            .collect();
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].cluster, "c");
        assert_eq!(problems[0].what, "pod/c-pod/web");
    }
}
