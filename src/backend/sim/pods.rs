//! The pods a simulated cluster runs for the workloads it holds, and the ReplicaSets between a
//! Deployment and its pods, as a real cluster's controllers would have made them: owner
//! references by uid, the template's labels and images, a node each, and a status the kubelet
//! would report — settled and ready, or the trouble the scenario names (a crash loop, a restart
//! after an OOM kill, a pod the scheduler cannot place) and an older image where the scenario
//! holds a rollout back. Times run back from `now`. It must not touch real clusters or decide
//! what a pod's trouble is (the engine reads that from the status written here).

use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::scenario::SimPodState;
use super::stored::{held_object, uid};
use super::world::SimCore;

/// The hash of the ReplicaSet a Deployment's synthetic Events name, and of the one an older
/// image's pods belong to.
const CURRENT_HASH: &str = "7d9c4b5f6";
const OLD_HASH: &str = "5b8f7c6d4";

/// Most pods simulated for one workload on one cluster.
const MAX_PODS: usize = 20;

/// Five characters as a controller's generated names end.
fn suffix(parts: &[&str]) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let id = uid(parts);
    let mut n = u64::from_str_radix(&id[0..8], 16).unwrap_or(0);
    (0..5)
        .map(|_| {
            let c = ALPHABET[(n % ALPHABET.len() as u64) as usize] as char;
            n /= ALPHABET.len() as u64;
            c
        })
        .collect()
}

fn rfc3339(at: SystemTime) -> String {
    let seconds = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    k8s_openapi::jiff::Timestamp::from_second(seconds)
        .map(|stamp| stamp.to_string())
        .unwrap_or_default()
}

fn ago(now: SystemTime, seconds: u64) -> String {
    rfc3339(now.checked_sub(Duration::from_secs(seconds)).unwrap_or(now))
}

/// The ReplicaSet that owns a Deployment's pods, and whether its pods run an older tag.
fn owning_set(core: &SimCore, resource: usize, cluster: usize) -> Option<(String, Option<&str>)> {
    let row = core.fleet().resources.get(resource)?;
    if row.target.kind != "Deployment" {
        return None;
    }
    let old = core.old_tag(resource, cluster);
    let hash = if old.is_some() {
        OLD_HASH
    } else {
        CURRENT_HASH
    };
    Some((format!("{}-{hash}", row.target.name), old))
}

/// The ReplicaSets a held Deployment owns on the cluster: the current one, and the older one
/// still running its pods where the scenario holds the rollout back.
pub fn replica_sets(
    core: &SimCore,
    resource: usize,
    cluster: usize,
    now: SystemTime,
) -> Vec<Value> {
    let Some(held) = held_object(core, resource, cluster) else {
        return Vec::new();
    };
    let Some((owning, old)) = owning_set(core, resource, cluster) else {
        return Vec::new();
    };
    let name = text(&held, "/metadata/name");
    let current = format!("{name}-{CURRENT_HASH}");
    let mut names = vec![current];
    if old.is_some() {
        names.push(owning);
    }
    let cluster_name = &core.fleet().clusters[cluster].name;
    names
        .into_iter()
        .map(|set| {
            json!({
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": set,
                    "namespace": held.pointer("/metadata/namespace"),
                    "uid": uid(&[cluster_name, "ReplicaSet", &set]),
                    "labels": held.pointer("/spec/selector/matchLabels").cloned().unwrap_or_else(|| json!({})),
                    "creationTimestamp": ago(now, 900),
                    "ownerReferences": [owner(&held)],
                },
            })
        })
        .collect()
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn owner(object: &Value) -> Value {
    json!({
        "apiVersion": object.get("apiVersion"),
        "kind": object.get("kind"),
        "name": object.pointer("/metadata/name"),
        "uid": object.pointer("/metadata/uid"),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// How many pods a held workload runs on a simulated cluster.
fn pod_count(held: &Value) -> usize {
    let number = |pointer: &str| held.pointer(pointer).and_then(Value::as_u64);
    let count = match text(held, "/kind") {
        "Deployment" | "StatefulSet" | "ReplicaSet" => number("/spec/replicas").unwrap_or(1),
        "DaemonSet" => 2,
        "Job" => number("/spec/parallelism").unwrap_or(1),
        _ => 0,
    };
    (count as usize).min(MAX_PODS)
}

/// The pods a held workload runs on the cluster; the last of them in the scenario's trouble.
pub fn pods(core: &SimCore, resource: usize, cluster: usize, now: SystemTime) -> Vec<Value> {
    let Some(held) = held_object(core, resource, cluster) else {
        return Vec::new();
    };
    let kind = text(&held, "/kind").to_string();
    if !crate::backend::fanout::pods::WORKLOADS.contains(&kind.as_str()) {
        return Vec::new();
    }
    let name = text(&held, "/metadata/name").to_string();
    let cluster_name = core.fleet().clusters[cluster].name.clone();
    let count = pod_count(&held);
    let (parent, tag) = match owning_set(core, resource, cluster) {
        Some((set, tag)) => {
            let set_uid = uid(&[&cluster_name, "ReplicaSet", &set]);
            let reference = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": set,
                "uid": set_uid, "controller": true, "blockOwnerDeletion": true});
            ((set, reference), tag)
        }
        None => ((name.clone(), owner(&held)), None),
    };
    let labels = held
        .pointer("/spec/template/metadata/labels")
        .or_else(|| held.pointer("/spec/selector/matchLabels"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    let containers: Vec<Value> = held
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|container| {
            let image = text(container, "/image");
            let image = match (tag, image.rsplit_once(':')) {
                (Some(tag), Some((repository, _))) => format!("{repository}:{tag}"),
                _ => image.to_string(),
            };
            let mut spec = json!({"name": container.get("name"), "image": image});
            if let Some(env) = container.get("env") {
                spec["env"] = env.clone();
            }
            spec
        })
        .collect();
    pod_names(&kind, &name, &parent.0, &cluster_name, count)
        .into_iter()
        .zip(states(core, resource, cluster, count))
        .enumerate()
        .map(|(index, (pod_name, state))| {
            pod(PodParts {
                name: &pod_name,
                namespace: text(&held, "/metadata/namespace"),
                uid: uid(&[&cluster_name, "Pod", &pod_name]),
                labels: &labels,
                owner: &parent.1,
                containers: &containers,
                node: format!("{cluster_name}-node-{}", index % 3),
                state,
                now,
            })
        })
        .collect()
}

/// What the scheduler says of a stalled rollout's pods that wait for room on a node.
pub const UNSCHEDULABLE: &str = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";

/// The names of the `count` pods a workload `kind`/`name` runs on `cluster`, in order, as its
/// controller names them: a StatefulSet's by ordinal, a Deployment's after its ReplicaSet
/// (`parent`), a DaemonSet's or Job's after the workload, each with a generated suffix.
fn pod_names(kind: &str, name: &str, parent: &str, cluster: &str, count: usize) -> Vec<String> {
    (0..count)
        .map(|index| match kind {
            "StatefulSet" => format!("{name}-{index}"),
            _ => format!(
                "{parent}-{}",
                suffix(&[cluster, parent, &index.to_string()])
            ),
        })
        .collect()
}

/// Each of `count` pods' trouble, in order: the scenario's on the last pod; past the first, a
/// stalled rollout's pods wait for room on a node (one available, as its status says).
fn states(
    core: &SimCore,
    resource: usize,
    cluster: usize,
    count: usize,
) -> Vec<Option<(SimPodState, &str)>> {
    let trouble = core.pod_trouble(resource, cluster);
    let stalled = core.is_stalled(resource, cluster);
    (0..count)
        .map(|index| match trouble {
            Some(trouble) if index + 1 == count => Some(trouble),
            _ if stalled && index > 0 => Some((SimPodState::Pending, UNSCHEDULABLE)),
            _ => None,
        })
        .collect()
}

/// The pods a held workload runs on the cluster, by name with their trouble, in the order
/// [`pods`] lists them: what its Events speak of.
pub fn named_states(
    core: &SimCore,
    resource: usize,
    cluster: usize,
) -> Vec<(String, Option<(SimPodState, &str)>)> {
    let Some(held) = held_object(core, resource, cluster) else {
        return Vec::new();
    };
    let name = text(&held, "/metadata/name");
    let parent =
        owning_set(core, resource, cluster).map_or_else(|| name.to_string(), |(set, _)| set);
    let count = pod_count(&held);
    pod_names(
        text(&held, "/kind"),
        name,
        &parent,
        &core.fleet().clusters[cluster].name,
        count,
    )
    .into_iter()
    .zip(states(core, resource, cluster, count))
    .collect()
}

struct PodParts<'a> {
    name: &'a str,
    namespace: &'a str,
    uid: String,
    labels: &'a Value,
    owner: &'a Value,
    containers: &'a [Value],
    node: String,
    state: Option<(SimPodState, &'a str)>,
    now: SystemTime,
}

fn pod(parts: PodParts<'_>) -> Value {
    let now = parts.now;
    let started = ago(now, 900);
    let condition = |kind: &str, status: bool| {
        json!({"type": kind, "status": if status { "True" } else { "False" },
            "lastTransitionTime": started})
    };
    let running = |container: &Value, restarts: u32, last: Option<Value>| {
        let mut status = json!({"name": container.get("name"), "image": container.get("image"),
            "imageID": "", "ready": true, "started": true, "restartCount": restarts,
            "state": {"running": {"startedAt": if restarts > 0 { ago(now, 180) } else { started.clone() }}}});
        if let Some(last) = last {
            status["lastState"] = last;
        }
        status
    };
    // A scheduled, initialized pod's conditions, ready or not.
    let scheduled = |ready: bool| {
        vec![
            condition("PodScheduled", true),
            condition("Initialized", true),
            condition("ContainersReady", ready),
            condition("Ready", ready),
        ]
    };
    let mut node = Some(parts.node);
    let (phase, conditions, statuses) = match parts.state {
        None => (
            "Running",
            scheduled(true),
            parts
                .containers
                .iter()
                .map(|c| running(c, 0, None))
                .collect::<Vec<_>>(),
        ),
        Some((SimPodState::OOMKilled, _)) => (
            "Running",
            scheduled(true),
            parts
                .containers
                .iter()
                .enumerate()
                .map(|(index, c)| {
                    let last = (index == 0).then(|| json!({"terminated": {"reason": "OOMKilled",
                        "exitCode": 137, "startedAt": ago(now, 600), "finishedAt": ago(now, 180)}}));
                    running(c, if index == 0 { 2 } else { 0 }, last)
                })
                .collect(),
        ),
        Some((SimPodState::CrashLoopBackOff, _)) => (
            "Running",
            scheduled(false),
            parts
                .containers
                .iter()
                .enumerate()
                .map(|(index, c)| {
                    if index > 0 {
                        return running(c, 0, None);
                    }
                    json!({"name": c.get("name"), "image": c.get("image"), "imageID": "",
                        "ready": false, "started": false, "restartCount": 7,
                        "state": {"waiting": {"reason": "CrashLoopBackOff",
                            "message": format!("back-off 5m0s restarting failed container={} pod={}",
                                text(c, "/name"), parts.name)}},
                        "lastState": {"terminated": {"reason": "Error", "exitCode": 1,
                            "startedAt": ago(now, 75), "finishedAt": ago(now, 70)}}})
                })
                .collect(),
        ),
        Some((SimPodState::Pending, message)) => {
            node = None;
            let mut unscheduled = condition("PodScheduled", false);
            unscheduled["reason"] = json!("Unschedulable");
            unscheduled["message"] = json!(message);
            ("Pending", vec![unscheduled], Vec::new())
        }
    };
    let mut spec = json!({"containers": parts.containers, "restartPolicy": "Always"});
    if let Some(node) = node {
        spec["nodeName"] = json!(node);
    }
    let mut status = json!({"phase": phase, "conditions": conditions, "qosClass": "Burstable"});
    if !statuses.is_empty() {
        status["containerStatuses"] = json!(statuses);
        status["startTime"] = json!(started);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": parts.name,
            "namespace": parts.namespace,
            "uid": parts.uid,
            "labels": parts.labels,
            "creationTimestamp": started,
            "ownerReferences": [parts.owner],
        },
        "spec": spec,
        "status": status,
    })
}
