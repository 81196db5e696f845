//! What a simulated cluster answers the console's object view: the object it holds (Secret
//! values masked), its diff against the desired object and its fingerprint, and synthetic
//! Events a real cluster's controllers would have recorded — for a workload whose rollout the
//! scenario stalls, the Deployment's ProgressDeadlineExceeded and a pod's FailedScheduling;
//! for a settled workload, the scaling that created its pods. Ages run on the simulation's
//! clock. It must not touch real clusters or decide a cell's status.

use serde_json::{Value, json};

use super::scenario::SimPodState;
use super::stored::held_object;
use super::world::SimCore;
use crate::backend::fanout::object_events;
use crate::engine::Decision;
use crate::engine::health::pods::pod_row;
use crate::messages::{CellPods, CellRef, LiveObject, ObjectEvent};
use crate::model::Health;

/// One synthetic Event: what it is about, and how long before the demo started it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimEvent {
    pub event_type: &'static str,
    pub reason: &'static str,
    pub message: String,
    pub count: u32,
    pub about_kind: &'static str,
    pub about_name: String,
    pub seconds_before_start: u64,
}

const WORKLOADS: &[&str] = &["Deployment", "StatefulSet", "DaemonSet", "Job"];

/// The Events a simulated cluster holds about a fleet row's object and its pods, newest first.
pub fn events(core: &SimCore, resource: usize, cluster: usize) -> Vec<SimEvent> {
    let Some(row) = core.fleet().resources.get(resource) else {
        return Vec::new();
    };
    let kind = row.target.kind.as_str();
    let Some(about_kind) = WORKLOADS.iter().copied().find(|w| *w == kind) else {
        return Vec::new();
    };
    if core.held(resource, cluster).is_none() {
        return Vec::new();
    }
    let name = row.target.name.clone();
    let pods = super::pods::named_states(core, resource, cluster);
    let mut events = Vec::new();
    // What the scheduler and the kubelet say of the first pod in each trouble.
    let first = |wanted: SimPodState| {
        pods.iter()
            .find_map(|(pod, state)| state.filter(|(s, _)| *s == wanted).map(|(_, m)| (pod, m)))
    };
    if let Some((pod, message)) = first(SimPodState::Pending) {
        events.push(SimEvent {
            event_type: "Warning",
            reason: "FailedScheduling",
            message: message.to_string(),
            count: 14,
            about_kind: "Pod",
            about_name: pod.clone(),
            seconds_before_start: 20,
        });
    }
    if let Some((pod, _)) = first(SimPodState::CrashLoopBackOff) {
        events.push(SimEvent {
            event_type: "Warning",
            reason: "BackOff",
            message: format!(
                "Back-off restarting failed container {} in pod {pod}",
                container_of(core, resource, cluster)
            ),
            count: 31,
            about_kind: "Pod",
            about_name: pod.clone(),
            seconds_before_start: 10,
        });
    }
    if core.is_stalled(resource, cluster) {
        events.push(SimEvent {
            event_type: "Warning",
            reason: "ProgressDeadlineExceeded",
            message: format!("Deployment \"{name}\" has timed out progressing."),
            count: 1,
            about_kind,
            about_name: name.clone(),
            seconds_before_start: 240,
        });
    }
    events.push(SimEvent {
        event_type: "Normal",
        reason: if about_kind == "Deployment" {
            "ScalingReplicaSet"
        } else {
            "SuccessfulCreate"
        },
        message: if about_kind == "Deployment" {
            format!(
                "Scaled up replica set {name}-7d9c4b5f6 from 0 to {}",
                pods.len()
            )
        } else {
            format!(
                "create Pod {} in {about_kind} {name} successful",
                pods.first().map_or("", |(pod, _)| pod.as_str())
            )
        },
        count: 1,
        about_kind,
        about_name: name,
        seconds_before_start: 900,
    });
    events.sort_by_key(|event| event.seconds_before_start);
    events
}

/// What the pods query is told of one cell: its workload's pods on the simulated cluster.
pub fn cell_pods(core: &SimCore, cell: CellRef) -> CellPods {
    let (resource, cluster) = (cell.resource as usize, cell.cluster as usize);
    let status = core.cluster_status(cluster);
    if status.health == Health::Unreachable {
        return CellPods::unread(format!("cluster unreachable: {}", status.message));
    }
    let now = std::time::SystemTime::now();
    let now_seconds = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let rows: Vec<_> = super::pods::pods(core, resource, cluster, now)
        .iter()
        .map(|pod| pod_row(pod, now_seconds))
        .collect();
    let desired = match core.fleet().decide(resource, cluster) {
        Decision::Placed { object, .. } => Some(object),
        _ => None,
    };
    CellPods::of(
        &rows,
        desired.as_ref(),
        held_object(core, resource, cluster).as_ref(),
    )
}

/// The name of the first container of the workload's pod template on the cluster.
fn container_of(core: &SimCore, resource: usize, cluster: usize) -> String {
    held_object(core, resource, cluster)
        .and_then(|held| {
            held.pointer("/spec/template/spec/containers/0/name")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_default()
}

/// What the object view is told of one cell at `now_ms` into the simulation.
pub fn live_object(core: &SimCore, cell: CellRef, now_ms: u64) -> LiveObject {
    let (resource, cluster) = (cell.resource as usize, cell.cluster as usize);
    let status = core.cluster_status(cluster);
    if status.health == Health::Unreachable {
        return LiveObject {
            error: Some(format!("cluster unreachable: {}", status.message)),
            ..LiveObject::default()
        };
    }
    let held = held_object(core, resource, cluster);
    let desired = match core.fleet().decide(resource, cluster) {
        Decision::Placed { object, .. } => Some(object),
        _ => None,
    };
    let namespace = core.fleet().resources[resource]
        .target
        .namespace
        .clone()
        .unwrap_or_default();
    let events = events(core, resource, cluster)
        .into_iter()
        .map(|event| ObjectEvent {
            event_type: event.event_type.into(),
            reason: event.reason.into(),
            message: event.message,
            count: event.count,
            object: format!("{} {namespace}/{}", event.about_kind, event.about_name),
            last_seen: None,
            age_seconds: Some(event.seconds_before_start + now_ms / 1000),
        })
        .collect();
    // The pods as they are now, ages counted on the wall clock as a real cluster's are.
    let now = std::time::SystemTime::now();
    let now_seconds = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let pods = super::pods::pods(core, resource, cluster, now)
        .iter()
        .map(|pod| pod_row(pod, now_seconds))
        .collect();
    object_events::live_object(
        desired.as_ref(),
        held.as_ref(),
        object_events::EventsAndPods { events, pods },
        None,
    )
}

/// The synthetic Events as core/v1 Event objects (what `kubectl get events -o json` lists),
/// their times `now` minus their age.
pub fn event_objects(
    core: &SimCore,
    resource: usize,
    cluster: usize,
    now: std::time::SystemTime,
) -> Vec<Value> {
    let Some(row) = core.fleet().resources.get(resource) else {
        return Vec::new();
    };
    let namespace = row.target.namespace.clone().unwrap_or_default();
    events(core, resource, cluster)
        .into_iter()
        .enumerate()
        .map(|(index, event)| {
            let at = now - std::time::Duration::from_secs(event.seconds_before_start);
            let stamp = rfc3339(at);
            json!({
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": format!("{}.{index}", event.about_name), "namespace": namespace},
                "involvedObject": {
                    "apiVersion": if event.about_kind == "Pod" { "v1" } else { row.target.api_version.as_str() },
                    "kind": event.about_kind,
                    "name": event.about_name,
                    "namespace": namespace,
                },
                "type": event.event_type,
                "reason": event.reason,
                "message": event.message,
                "count": event.count,
                "lastTimestamp": stamp,
            })
        })
        .collect()
}

/// `at` as RFC 3339 (UTC, seconds).
fn rfc3339(at: std::time::SystemTime) -> String {
    let seconds = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    k8s_openapi::jiff::Timestamp::from_second(seconds)
        .map(|stamp| stamp.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::backend::sim::scenario::{Scenario, ScenarioCell};
    use crate::engine::load_fleet;

    /// The demo fleet with checkout's rollout on prod-eu-west-1 stalled, and no pod trouble.
    fn stalled_checkout() -> (SimCore, usize, usize) {
        let (fleet, errors) = load_fleet(&crate::fleet::demo::demo_files());
        assert!(errors.is_empty(), "{errors:?}");
        let mut scenario = Scenario::demo();
        scenario.pods.clear();
        scenario.degraded = vec![ScenarioCell {
            cluster: "prod-eu-west-1".into(),
            resource: "Deployment/shop/checkout".into(),
        }];
        let resource = fleet
            .resources
            .iter()
            .position(|r| r.target.display_key() == "Deployment/shop/checkout")
            .unwrap();
        let cluster = fleet.cluster_index("prod-eu-west-1").unwrap();
        (
            SimCore::new(Arc::new(fleet), &scenario, 7),
            resource,
            cluster,
        )
    }

    #[test]
    fn a_stalled_rollouts_pods_wait_for_a_node_and_its_events_name_one_that_waits() {
        let (core, resource, cluster) = stalled_checkout();
        let pods = super::super::pods::pods(&core, resource, cluster, std::time::SystemTime::now());
        let phases: Vec<&str> = pods
            .iter()
            .map(|pod| pod["status"]["phase"].as_str().unwrap())
            .collect();
        // One available, as the stalled status says; the rest Pending.
        assert_eq!(phases[0], "Running");
        assert!(
            phases.len() > 1 && phases[1..].iter().all(|p| *p == "Pending"),
            "{phases:?}"
        );
        let events = events(&core, resource, cluster);
        let scheduling = events
            .iter()
            .find(|e| e.reason == "FailedScheduling")
            .expect("the scheduler's warning");
        let named = pods
            .iter()
            .find(|pod| pod["metadata"]["name"] == scheduling.about_name.as_str())
            .expect("a pod of the workload");
        assert_eq!(named["status"]["phase"], "Pending");
        assert!(
            events
                .windows(2)
                .all(|w| w[0].seconds_before_start <= w[1].seconds_before_start),
            "newest first"
        );
    }
}
