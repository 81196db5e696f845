//! What the object view reads of one object on one cluster, over any [`ClusterApi`]: the
//! cluster's recent Events whose involvedObject is the object (and, for a workload, its pods'
//! Events: the pods it owns, through its ReplicaSets) newest first, those pods, and the [`LiveObject`] a person may
//! read (Secret values masked, the diff against the desired object as a read-only plan reads
//! it). [`read_live`] does it for every target's objects with bounded fan-out, for
//! `flotilla status`. It only reads, and must not print or decide cell statuses.

use std::collections::BTreeSet;
use std::time::SystemTime;

use futures::StreamExt;
use serde_json::Value;

use super::cluster_api::{ApiError, ClusterApi, Guard, ListQuery};
use super::object::resource_of;
use super::pods::{is_workload, workload_pods};
use super::targets::{Options, Target, cluster_failure, fan_out};
use crate::engine::compare::{live_state, secrets};
use crate::engine::health::pods::{PodRow, pod_row};
use crate::messages::{LiveObject, ObjectEvent};
use crate::model::ResourceRef;

/// The most Events kept per object, newest first.
pub const MAX_EVENTS: usize = 50;

/// What the object view reads about a live object besides itself: the cluster's recent Events
/// about it (and about its pods, for a workload), newest first, and a workload's pods.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventsAndPods {
    pub events: Vec<ObjectEvent>,
    pub pods: Vec<PodRow>,
}

/// The recent Events about `object` on the cluster (and its pods', for a workload: the pods it
/// owns, through its ReplicaSets), newest first, their ages counted to the moment the last list
/// answered; and those pods, read at the same moment.
pub async fn object_events<A: ClusterApi>(
    api: &A,
    guard: &Guard,
    object: &Value,
) -> Result<EventsAndPods, ApiError> {
    let target = resource_of(object);
    // Events about cluster-scoped objects are recorded in `default`.
    let namespace = target.namespace.clone().unwrap_or_else(|| "default".into());
    let events_where = |fields: String| ListQuery {
        api_version: "v1".into(),
        kind: "Event".into(),
        namespace: namespace.clone(),
        labels: String::new(),
        fields,
    };
    let own = events_where(format!(
        "involvedObject.kind={},involvedObject.name={}",
        target.kind, target.name
    ));
    let mut events = guard.call(|| api.list(&own)).await?;
    let pods = if is_workload(&target) {
        workload_pods(api, guard, object, "").await?
    } else {
        Vec::new()
    };
    let names: BTreeSet<&str> = pods
        .iter()
        .filter_map(|pod| pod.pointer("/metadata/name").and_then(Value::as_str))
        .collect();
    if !names.is_empty() {
        let of_pods = events_where("involvedObject.kind=Pod".into());
        events.extend(
            guard
                .call(|| api.list(&of_pods))
                .await?
                .into_iter()
                .filter(|event| {
                    event
                        .pointer("/involvedObject/name")
                        .and_then(Value::as_str)
                        .is_some_and(|name| names.contains(name))
                }),
        );
    }
    // Counted once every list has answered: an Event the cluster stamped while answering is
    // never younger than it is.
    let now = SystemTime::now();
    let mut rows: Vec<ObjectEvent> = events.iter().map(|event| event_row(event, now)).collect();
    rows.sort_by_key(|row| row.age_seconds.unwrap_or(u64::MAX));
    rows.truncate(MAX_EVENTS);
    let now_seconds = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    Ok(EventsAndPods {
        events: rows,
        pods: pods.iter().map(|pod| pod_row(pod, now_seconds)).collect(),
    })
}

/// One core/v1 (or events.k8s.io/v1) Event as the object view shows it.
pub fn event_row(event: &Value, now: SystemTime) -> ObjectEvent {
    let text = |pointer: &str| {
        event
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let regarding = if event.get("involvedObject").is_some() {
        "/involvedObject"
    } else {
        "/regarding"
    };
    let last_seen = [
        "/series/lastObservedTime",
        "/lastTimestamp",
        "/deprecatedLastTimestamp",
        "/eventTime",
        "/metadata/creationTimestamp",
    ]
    .iter()
    .find_map(|pointer| {
        event
            .pointer(pointer)
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
    })
    .map(str::to_string);
    let age_seconds = last_seen.as_deref().and_then(|stamp| {
        let at: k8s_openapi::jiff::Timestamp = stamp.parse().ok()?;
        let now = k8s_openapi::jiff::Timestamp::try_from(now).ok()?;
        Some(now.as_second().saturating_sub(at.as_second()).max(0) as u64)
    });
    let count = ["/series/count", "/count", "/deprecatedCount"]
        .iter()
        .find_map(|pointer| event.pointer(pointer).and_then(Value::as_u64))
        .unwrap_or(1);
    let message = match text("/message") {
        message if message.is_empty() => text("/note"),
        message => message,
    };
    let namespace = text(&format!("{regarding}/namespace"));
    let name = text(&format!("{regarding}/name"));
    ObjectEvent {
        event_type: text("/type"),
        reason: text("/reason"),
        message,
        count: u32::try_from(count).unwrap_or(u32::MAX),
        object: if namespace.is_empty() {
            format!("{} {name}", text(&format!("{regarding}/kind")))
        } else {
            format!("{} {namespace}/{name}", text(&format!("{regarding}/kind")))
        },
        last_seen,
        age_seconds,
    }
}

/// What the object view shows of one cell: the live object (Secret values masked), its diff
/// against `desired` and its fingerprint, and the Events and pods read for it.
pub fn live_object(
    desired: Option<&Value>,
    held: Option<&Value>,
    reads: EventsAndPods,
    error: Option<String>,
) -> LiveObject {
    let diff = match desired {
        Some(desired) => {
            live_state::diff_against_desired(held, desired, &resource_of(desired).display_key())
        }
        None => String::new(),
    };
    LiveObject {
        object: held.map(secrets::mask),
        diff,
        fingerprint: held.map(live_state::fingerprint),
        events: reads.events,
        pods: reads.pods,
        error,
        hub: None,
    }
}

/// One object's live read for `status`.
#[derive(Debug, Clone)]
pub struct LiveItem {
    pub cluster: String,
    pub resource: ResourceRef,
    pub live: LiveObject,
}

/// What one cluster holds of `resource` next to `desired`, with its recent Events; and
/// whether the cluster answered (a missing object is an answer, a failed read is not).
pub async fn live_one<A: ClusterApi>(
    api: &A,
    guard: &Guard,
    resource: &ResourceRef,
    desired: Option<&Value>,
) -> (LiveObject, bool) {
    match guard.call(|| api.get(resource)).await {
        Err(err) => (
            live_object(
                desired,
                None,
                EventsAndPods::default(),
                Some(err.to_string()),
            ),
            false,
        ),
        Ok(None) => (
            live_object(desired, None, EventsAndPods::default(), None),
            true,
        ),
        Ok(Some(held)) => match object_events(api, guard, &held).await {
            Ok(reads) => (live_object(desired, Some(&held), reads, None), true),
            Err(err) => (
                live_object(
                    desired,
                    Some(&held),
                    EventsAndPods::default(),
                    Some(format!("cannot read Events: {err}")),
                ),
                true,
            ),
        },
    }
}

/// The live object and recent Events of every target object `select` picks, with bounded
/// fan-out; a cluster that fails gives each of its picked objects the error.
pub async fn read_live<A: ClusterApi>(
    targets: &[Target<A>],
    options: Options,
    select: &(dyn Fn(&ResourceRef) -> bool + Sync),
) -> Vec<LiveItem> {
    let quiet = |_: usize, _: usize| {};
    fn picked<'t, A>(
        target: &'t Target<A>,
        select: &(dyn Fn(&ResourceRef) -> bool + Sync),
    ) -> Vec<&'t Value> {
        target
            .objects
            .iter()
            .filter(|object| select(&resource_of(object)))
            .collect()
    }
    let per_cluster = fan_out(targets, options, &quiet, |target, api| async move {
        let guard = Guard::new(options.limits);
        let guard = &guard;
        futures::stream::iter(picked(target, select))
            .map(|desired| async move {
                let resource = resource_of(desired);
                let (live, _) = live_one(api, guard, &resource, Some(desired)).await;
                LiveItem {
                    cluster: target.cluster.clone(),
                    resource,
                    live,
                }
            })
            .buffered(options.limits.in_flight.max(1))
            .collect::<Vec<_>>()
            .await
    })
    .await;
    let mut items = Vec::new();
    for (target, rows) in targets.iter().zip(per_cluster) {
        match rows {
            Some(rows) => items.extend(rows),
            None => {
                let err = cluster_failure(target, options).to_string();
                items.extend(picked(target, select).into_iter().map(|desired| LiveItem {
                    cluster: target.cluster.clone(),
                    resource: resource_of(desired),
                    live: LiveObject {
                        error: Some(err.clone()),
                        ..LiveObject::default()
                    },
                }));
            }
        }
    }
    items
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_of_either_api_read_alike() {
        let now: SystemTime = "2026-01-01T00:10:00Z"
            .parse::<k8s_openapi::jiff::Timestamp>()
            .unwrap()
            .into();
        let core = json!({"type": "Warning", "reason": "ProgressDeadlineExceeded",
            "message": "timed out", "count": 3, "lastTimestamp": "2026-01-01T00:06:00Z",
            "involvedObject": {"kind": "Deployment", "namespace": "shop", "name": "web"}});
        let row = event_row(&core, now);
        assert_eq!(row.age_seconds, Some(240));
        assert_eq!(row.count, 3);
        assert_eq!(row.object, "Deployment shop/web");
        let modern = json!({"type": "Normal", "reason": "Scheduled", "note": "assigned",
            "eventTime": "2026-01-01T00:09:30.000000Z", "series": {"count": 2, "lastObservedTime": "2026-01-01T00:09:50.000000Z"},
            "regarding": {"kind": "Pod", "namespace": "shop", "name": "web-1"}});
        let row = event_row(&modern, now);
        assert_eq!((row.age_seconds, row.count), (Some(10), 2));
        assert_eq!(row.message, "assigned");
        assert_eq!(row.object, "Pod shop/web-1");
    }
}
