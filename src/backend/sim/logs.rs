//! What the demo's containers print, through the same [`PodLogs`] live clusters serve: a line
//! every few seconds for as long as a container has run (the last hundred kept, as a rotated
//! log would), more as time goes on when followed; a crash-looping container's last run and,
//! with `--previous`, the run before, ending in its crash; an OOM-killed container's run before
//! the kill. Lines are a function of the pod, the container and the time, so two reads agree.
//! It must not touch real clusters; what a pod's state is comes from the simulated pod.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

use super::cluster_api::SimClusterApi;
use super::pods::pods;
use crate::backend::fanout::cluster_api::ApiError;
use crate::backend::fanout::logs::{LogRequest, LogStream, PodLogs};

/// Seconds between two lines of a running container.
const PERIOD: u64 = 3;
/// Lines a container's log keeps.
const KEPT: usize = 100;

fn unix(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn stamp(second: u64) -> String {
    Timestamp::from_second(second.min(i64::MAX as u64) as i64)
        .map(|at| at.to_string())
        .unwrap_or_default()
}

/// A small stable hash (FNV-1a) to vary the simulated lines.
fn hash(parts: &[&str], tick: u64) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for byte in parts
        .iter()
        .flat_map(|p| p.bytes().chain([0]))
        .chain(tick.to_le_bytes())
    {
        h ^= u64::from(byte);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// What a running container prints at `tick` (a multiple of [`PERIOD`]).
fn running_line(pod: &str, container: &str, tick: u64) -> String {
    let h = hash(&[pod, container], tick);
    let ms = 2 + h % 180;
    match h % 7 {
        0 => "GET /healthz 200 1ms".to_string(),
        1 => format!("POST /api/v1/{container} 201 {ms}ms"),
        2 => format!("cache refreshed: {} entries", 100 + h % 900),
        3 => format!("GET /api/v1/{container}/{} 404 {ms}ms", h % 10_000),
        _ => format!("GET /api/v1/{container} 200 {ms}ms"),
    }
}

/// The lines of a run from `from` to `to` (seconds), one every [`PERIOD`].
fn running(pod: &str, container: &str, from: u64, to: u64) -> Vec<(u64, String)> {
    let first = from.div_ceil(PERIOD) * PERIOD;
    (first..=to)
        .step_by(PERIOD as usize)
        .map(|tick| (tick, running_line(pod, container, tick)))
        .collect()
}

/// A run that ends in a crash at `end` (seconds) with `last` as its final words.
fn crashed(start: u64, end: u64, last: &str) -> Vec<(u64, String)> {
    vec![
        (start, "starting".to_string()),
        (
            start + 1,
            "connecting to postgres://ledger-db:5432".to_string(),
        ),
        (end.max(start + 2), last.to_string()),
    ]
}

fn seconds_field(value: &Value, pointer: &str) -> Option<u64> {
    let text = value.pointer(pointer)?.as_str()?;
    let at: Timestamp = text.parse().ok()?;
    u64::try_from(at.as_second()).ok()
}

/// A container's current or previous run, as (second, text) lines; an error as the kubelet
/// gives it where there is no such run.
fn history(
    pod: &Value,
    container: &str,
    previous: bool,
    now: u64,
) -> Result<Vec<(u64, String)>, String> {
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let status = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|s| s.get("name").and_then(Value::as_str) == Some(container))
        .ok_or_else(|| {
            format!(
                "container {container:?} in pod {name:?} is waiting to start: ContainerCreating"
            )
        })?;
    let waiting = status
        .pointer("/state/waiting/reason")
        .and_then(Value::as_str);
    let terminated = status.pointer("/lastState/terminated");
    let reason = terminated
        .and_then(|t| t.get("reason"))
        .and_then(Value::as_str);
    match (previous, waiting, reason) {
        (false, Some("CrashLoopBackOff"), _) | (true, Some("CrashLoopBackOff"), _) => {
            // The last run ended at lastState's finishedAt; the one before, a back-off earlier.
            let finished = terminated
                .and_then(|t| seconds_field(t, "/finishedAt"))
                .unwrap_or(now);
            let end = if previous {
                finished.saturating_sub(300)
            } else {
                finished
            };
            Ok(crashed(
                end.saturating_sub(5),
                end,
                "fatal: cannot reach postgres://ledger-db:5432: connection refused; exit 1",
            ))
        }
        (true, _, Some(reason)) => {
            let t = terminated.cloned().unwrap_or(Value::Null);
            let end = seconds_field(&t, "/finishedAt").unwrap_or(now);
            let start = seconds_field(&t, "/startedAt").unwrap_or(end.saturating_sub(60));
            let mut lines = running(name, container, start, end.saturating_sub(1));
            let last = if reason == "OOMKilled" {
                "fatal error: runtime: out of memory".to_string()
            } else {
                format!("exiting: {reason}")
            };
            lines.push((end, last));
            Ok(lines)
        }
        (true, _, None) => Err(format!(
            "previous terminated container {container:?} in pod {name:?} not found"
        )),
        (false, _, _) => {
            let started = seconds_field(status, "/state/running/startedAt").unwrap_or(now);
            Ok(running(name, container, started, now))
        }
    }
}

/// The lines `request` asks for, as the server sends them with timestamps.
fn selected(lines: Vec<(u64, String)>, request: &LogRequest, now: u64) -> Vec<String> {
    let mut lines: Vec<(u64, String)> = lines;
    let kept = lines.len().saturating_sub(KEPT);
    lines.drain(..kept);
    if let Some(since) = request.since_seconds {
        let from = now.saturating_sub(since);
        lines.retain(|(at, _)| *at >= from);
    }
    if let Some(tail) = request.tail_lines {
        let skip = lines
            .len()
            .saturating_sub(tail.min(usize::MAX as u64) as usize);
        lines.drain(..skip);
    }
    lines
        .into_iter()
        .map(|(at, text)| format!("{} {text}", stamp(at)))
        .collect()
}

impl PodLogs for SimClusterApi {
    async fn pod_logs(&self, request: &LogRequest) -> Result<LogStream, ApiError> {
        self.round_trip().await?;
        let now_time = SystemTime::now();
        let now = unix(now_time);
        let pod = self.read_cluster(|core, cluster| {
            (0..core.fleet().resources.len())
                .flat_map(|row| pods(core, row, cluster, now_time))
                .find(|pod| {
                    pod.pointer("/metadata/name").and_then(Value::as_str)
                        == Some(request.pod.as_str())
                        && pod.pointer("/metadata/namespace").and_then(Value::as_str)
                            == Some(request.namespace.as_str())
                })
        });
        let Some(pod) = pod else {
            return Err(ApiError::NotFound(format!(
                "pods {:?} not found",
                request.pod
            )));
        };
        let lines =
            history(&pod, &request.container, request.previous, now).map_err(ApiError::Other)?;
        let crash_looping = pod
            .pointer("/status/containerStatuses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|s| {
                s.get("name").and_then(Value::as_str) == Some(request.container.as_str())
                    && s.pointer("/state/waiting").is_some()
            });
        let past = futures::stream::iter(selected(lines, request, now).into_iter().map(Ok));
        if !request.follow || request.previous || crash_looping {
            return Ok(past.boxed());
        }
        // Following a running container: a new line every PERIOD, from the next tick on.
        let (pod_name, container) = (request.pod.clone(), request.container.clone());
        let next = (now / PERIOD + 1) * PERIOD;
        let more = futures::stream::unfold(next, move |tick| {
            let (pod_name, container) = (pod_name.clone(), container.clone());
            async move {
                let wait = tick.saturating_sub(unix(SystemTime::now()));
                tokio::time::sleep(Duration::from_secs(wait)).await;
                let line = format!(
                    "{} {}",
                    stamp(tick),
                    running_line(&pod_name, &container, tick)
                );
                Some((Ok(line), tick + PERIOD))
            }
        });
        Ok(past.chain(more).boxed())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(status: Value) -> Value {
        json!({"metadata": {"name": "web-1", "namespace": "shop"},
            "status": {"containerStatuses": [status]}})
    }

    #[test]
    fn a_running_container_prints_every_period_and_has_no_previous_run() {
        let now = 1_800_000_000;
        let running = pod(json!({"name": "web",
            "state": {"running": {"startedAt": stamp(now - 30)}}}));
        let lines = history(&running, "web", false, now).unwrap();
        assert_eq!(lines.len(), 11);
        assert!(lines.windows(2).all(|w| w[1].0 - w[0].0 == PERIOD));
        assert!(
            history(&running, "web", true, now)
                .unwrap_err()
                .contains("previous terminated container \"web\"")
        );
        let request = LogRequest {
            tail_lines: Some(2),
            ..LogRequest::default()
        };
        let tail = selected(lines.clone(), &request, now);
        assert_eq!(tail.len(), 2);
        let request = LogRequest {
            since_seconds: Some(6),
            ..LogRequest::default()
        };
        assert_eq!(selected(lines, &request, now).len(), 3);
    }

    #[test]
    fn a_crash_loop_prints_its_crash_now_and_before() {
        let now = 1_800_000_000;
        let crashing = pod(json!({"name": "web", "restartCount": 7,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"reason": "Error", "exitCode": 1,
                "finishedAt": stamp(now - 70)}}}));
        let current = history(&crashing, "web", false, now).unwrap();
        let previous = history(&crashing, "web", true, now).unwrap();
        assert!(current.last().unwrap().1.starts_with("fatal:"));
        assert!(previous.last().unwrap().1.starts_with("fatal:"));
        assert!(previous.last().unwrap().0 < current[0].0);
    }

    #[test]
    fn an_oom_killed_containers_previous_run_ends_out_of_memory() {
        let now = 1_800_000_000;
        let restarted = pod(json!({"name": "web", "restartCount": 2,
            "state": {"running": {"startedAt": stamp(now - 180)}},
            "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137,
                "startedAt": stamp(now - 600), "finishedAt": stamp(now - 180)}}}));
        let previous = history(&restarted, "web", true, now).unwrap();
        assert_eq!(
            previous.last().unwrap().1,
            "fatal error: runtime: out of memory"
        );
        assert_eq!(previous.last().unwrap().0, now - 180);
    }
}
