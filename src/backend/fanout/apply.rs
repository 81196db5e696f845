//! Apply: server-side apply of every target's objects as field manager `flotilla`, phase by
//! phase inside a cluster (Namespaces, then CRDs, waiting for them to be Established, then
//! everything else), then deletion of the prune list the operator confirmed. After an error
//! that says the whole cluster cannot be worked on, nothing more is sent there. It must not
//! choose what to prune: the caller hands it a confirmed list. An object Karmada would refuse
//! to take over (`conflictResolution: Abort`, the member already holding it without flotilla's
//! or Karmada's label) is read first and, when unowned, refused as a conflict, never written;
//! under `Overwrite` such an object is taken over whole, its other managers' fields forced.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::Duration;

use futures::StreamExt;
use serde::Serialize;
use serde_json::Value;

use super::cluster_api::{ApiError, ApplyMode, ClusterApi, Guard};
use super::object::resource_of;
use super::planning::{REFUSED_ADOPTION, owned};
use super::targets::{Ignores, Options, Target, cluster_failure, fan_out};
use crate::model::ResourceRef;

/// Order of application inside a cluster: Namespaces, CRDs, then the rest.
fn phase(resource: &ResourceRef) -> u8 {
    match (resource.group(), resource.kind.as_str()) {
        ("", "Namespace") => 0,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => 1,
        _ => 2,
    }
}

/// What happened to one object in `apply`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Applied,
    Pruned,
    Conflict,
    Error,
    /// Not attempted because an earlier request on the cluster failed.
    Skipped,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Applied => "applied",
            Outcome::Pruned => "pruned",
            Outcome::Conflict => "conflict",
            Outcome::Error => "error",
            Outcome::Skipped => "skipped",
        }
    }

    pub fn is_failure(self) -> bool {
        !matches!(self, Outcome::Applied | Outcome::Pruned)
    }
}

/// One row of `apply -o json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApplyItem {
    pub cluster: String,
    pub resource: ResourceRef,
    pub result: Outcome,
    pub message: String,
}

/// Applies every target's objects (phase by phase) and deletes the confirmed prune list.
/// `prune` maps cluster name to the objects to delete there (from a plan the user confirmed).
pub async fn apply<A: ClusterApi>(
    targets: &[Target<A>],
    force: bool,
    prune: &BTreeMap<String, Vec<ResourceRef>>,
    options: Options,
    on_done: &(dyn Fn(usize, usize) + Sync),
) -> Vec<ApplyItem> {
    apply_with(targets, force, prune, options, &Ignores::default(), on_done).await
}

/// [`apply`] honouring what members keep: objects that have ignore rules or a retention are
/// read first, and their intent is what [`Ignores::intent`] makes of it.
pub async fn apply_with<A: ClusterApi>(
    targets: &[Target<A>],
    force: bool,
    prune: &BTreeMap<String, Vec<ResourceRef>>,
    options: Options,
    ignores: &Ignores,
    on_done: &(dyn Fn(usize, usize) + Sync),
) -> Vec<ApplyItem> {
    let per_cluster = fan_out(targets, options, on_done, |target, api| {
        apply_cluster(
            target,
            api,
            force,
            prune.get(&target.cluster).map(Vec::as_slice).unwrap_or(&[]),
            options,
            ignores,
        )
    })
    .await;
    let mut items = Vec::new();
    for (target, rows) in targets.iter().zip(per_cluster) {
        match rows {
            Some(rows) => items.extend(rows),
            None => {
                let err = cluster_failure(target, options);
                items.extend(target.objects.iter().map(|object| ApplyItem {
                    cluster: target.cluster.clone(),
                    resource: resource_of(object),
                    result: Outcome::Error,
                    message: err.to_string(),
                }));
                items.extend(apply_render_failures(target));
            }
        }
    }
    items
}

fn apply_render_failures<A>(target: &Target<A>) -> Vec<ApplyItem> {
    target
        .failed
        .iter()
        .map(|(resource, reason)| ApplyItem {
            cluster: target.cluster.clone(),
            resource: resource.clone(),
            result: Outcome::Error,
            message: reason.clone(),
        })
        .collect()
}

async fn apply_cluster<A: ClusterApi>(
    target: &Target<A>,
    api: &A,
    force: bool,
    prune: &[ResourceRef],
    options: Options,
    ignores: &Ignores,
) -> Vec<ApplyItem> {
    let guard = Guard::new(options.limits);
    let guard = &guard;
    let mode = ApplyMode {
        dry_run: false,
        force,
    };
    let mut rows: Vec<ApplyItem> = Vec::new();
    let mut stop: Option<String> = None;
    let mut failed_namespaces: BTreeSet<String> = BTreeSet::new();
    for current in 0..=2u8 {
        let batch: Vec<&Value> = target
            .objects
            .iter()
            .filter(|o| phase(&resource_of(o)) == current)
            .collect();
        let mut pending = Vec::new();
        for object in batch {
            let resource = resource_of(object);
            let blocked = stop.clone().or_else(|| {
                resource
                    .namespace
                    .as_ref()
                    .filter(|ns| failed_namespaces.contains(*ns))
                    .map(|ns| format!("namespace {ns} could not be applied"))
            });
            match blocked {
                Some(reason) => rows.push(ApplyItem {
                    cluster: target.cluster.clone(),
                    resource,
                    result: Outcome::Skipped,
                    message: format!("not attempted: {reason}"),
                }),
                None => pending.push((resource, object)),
            }
        }
        // The first error that says the whole cluster cannot be worked on stops the requests of
        // this phase not yet sent, as it stops the later phases.
        let halted: Mutex<Option<String>> = Mutex::new(stop.clone());
        let halted = &halted;
        let halt_on = |result: &Result<Value, ApiError>| {
            if let Err(err) = result
                && err.is_cluster_fatal()
                && let Ok(mut halted) = halted.lock()
                && halted.is_none()
            {
                *halted = Some(err.to_string());
            }
        };
        let halt_on = &halt_on;
        let requests: Vec<_> = pending
            .into_iter()
            .map(|(resource, object)| async move {
                if let Some(reason) = halted.lock().ok().and_then(|h| h.clone()) {
                    return (resource, Sent::No(reason));
                }
                let refuse = target.refuse_unowned.contains(&resource);
                let mut mode = mode;
                if refuse || target.take_over_unowned.contains(&resource) {
                    let (live, throttles) =
                        guard.call_counting_throttles(|| api.get(&resource)).await;
                    match live {
                        Ok(Some(live)) if !owned(&live) => {
                            if refuse {
                                return (resource, Sent::Refused);
                            }
                            mode.force = true;
                        }
                        Ok(_) => {}
                        Err(err) => {
                            let result = Err(err);
                            halt_on(&result);
                            return (resource, Sent::Yes(result, throttles));
                        }
                    }
                }
                if !ignores.reads_live(&target.cluster, object) {
                    let (result, throttles) = guard
                        .call_counting_throttles(|| api.apply(object, mode))
                        .await;
                    halt_on(&result);
                    return (resource, Sent::Yes(result, throttles));
                }
                let (live, read_throttles) =
                    guard.call_counting_throttles(|| api.get(&resource)).await;
                let adjusted = match live {
                    Ok(live) => match ignores.intent(&target.cluster, object, live.as_ref()) {
                        Ok(intent) => intent,
                        Err(error) => {
                            let result = Err(ApiError::Invalid {
                                message: error,
                                immutable: false,
                            });
                            return (resource, Sent::Yes(result, read_throttles));
                        }
                    },
                    Err(err) => {
                        let result = Err(err);
                        halt_on(&result);
                        return (resource, Sent::Yes(result, read_throttles));
                    }
                };
                let (result, throttles) = guard
                    .call_counting_throttles(|| api.apply(&adjusted, mode))
                    .await;
                halt_on(&result);
                (resource, Sent::Yes(result, read_throttles + throttles))
            })
            .collect();
        let results: Vec<(ResourceRef, Sent)> = futures::stream::iter(requests)
            .buffered(options.limits.in_flight.max(1))
            .collect()
            .await;
        for (resource, sent) in results {
            let (result, throttles) = match sent {
                Sent::Yes(result, throttles) => (result, throttles),
                Sent::Refused => {
                    rows.push(ApplyItem {
                        cluster: target.cluster.clone(),
                        resource,
                        result: Outcome::Conflict,
                        message: format!("not taken over: {REFUSED_ADOPTION}"),
                    });
                    continue;
                }
                Sent::No(reason) => {
                    rows.push(ApplyItem {
                        cluster: target.cluster.clone(),
                        resource,
                        result: Outcome::Skipped,
                        message: format!("not attempted: {reason}"),
                    });
                    continue;
                }
            };
            let (outcome, message) = match result {
                Ok(_) => (Outcome::Applied, applied_after(throttles)),
                Err(ApiError::Conflict { managers, message }) => (
                    Outcome::Conflict,
                    format!(
                        "conflict with {}: {message} (not overwritten; --force-conflicts takes the fields)",
                        managers.join(", ")
                    ),
                ),
                Err(err) => {
                    if err.is_cluster_fatal() && stop.is_none() {
                        stop = Some(err.to_string());
                    }
                    if resource.kind == "Namespace" {
                        failed_namespaces.insert(resource.name.clone());
                    }
                    (Outcome::Error, err.to_string())
                }
            };
            rows.push(ApplyItem {
                cluster: target.cluster.clone(),
                resource,
                result: outcome,
                message,
            });
        }
        if current == 1 && stop.is_none() {
            let crds: Vec<&ResourceRef> = rows
                .iter()
                .filter(|row| phase(&row.resource) == 1 && row.result == Outcome::Applied)
                .map(|row| &row.resource)
                .collect();
            wait_established(api, guard, &crds).await;
        }
    }
    rows.extend(apply_render_failures(target));
    // Deletion last, and never after a failure on this cluster.
    for resource in prune {
        let (result, message) = match &stop {
            Some(reason) => (Outcome::Skipped, format!("not attempted: {reason}")),
            None => match guard.call(|| api.delete(resource)).await {
                Ok(()) => (Outcome::Pruned, String::new()),
                Err(err) => (Outcome::Error, err.to_string()),
            },
        };
        rows.push(ApplyItem {
            cluster: target.cluster.clone(),
            resource: resource.clone(),
            result,
            message,
        });
    }
    rows
}

/// Whether an object's apply was sent (its answer, and how often the cluster throttled it
/// first), or why not.
enum Sent {
    Yes(Result<Value, ApiError>, u32),
    No(String),
    /// Unowned on the member under `conflictResolution: Abort`: not sent.
    Refused,
}

/// An applied row's message: empty, or how often the cluster throttled it first (it answered
/// and was busy, so the write came late but whole).
fn applied_after(throttles: u32) -> String {
    match throttles {
        0 => String::new(),
        1 => "throttled by the API server (429) once, then applied".to_string(),
        n => format!("throttled by the API server (429) {n} times, then applied"),
    }
}

/// How long custom resources wait for the CRDs applied just before them to be Established.
const ESTABLISH_WAIT: Duration = Duration::from_secs(15);

/// Waits until every CRD in `crds` reports `Established`, or [`ESTABLISH_WAIT`] has passed
/// (then the custom resources are tried anyway and fail with the server's own words).
async fn wait_established<A: ClusterApi>(api: &A, guard: &Guard, crds: &[&ResourceRef]) {
    let deadline = tokio::time::Instant::now() + ESTABLISH_WAIT;
    for crd in crds {
        loop {
            let established = match guard.call(|| api.get(crd)).await {
                Ok(Some(live)) => is_established(&live),
                Ok(None) | Err(_) => false,
            };
            if established || tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

fn is_established(crd: &Value) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|conditions| {
            conditions.iter().any(|condition| {
                condition["type"] == "Established" && condition["status"] == "True"
            })
        })
}
