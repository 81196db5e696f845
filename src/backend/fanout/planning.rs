//! Plan: what applying the fleet would do to each (cluster, object), without writing. Per
//! cluster the objects are dry-run with server-side apply and diffed against live (or, with
//! read-only credentials, the rendered intent is compared with live field by field), and the
//! objects carrying flotilla's marker that are no longer placed are listed as prune
//! candidates. Objects Karmada's `suspension` holds back are listed as unchanged, with why;
//! an object the member already has without flotilla's or Karmada's ownership label is a
//! conflict where Karmada's `conflictResolution` is Abort. It must not write: a dry run is
//! the only PATCH it sends, and never in read-only mode.

use std::collections::BTreeSet;

use futures::StreamExt;
use serde_json::Value;

use super::cluster_api::{ApiError, ApplyMode, ClusterApi, Guard, conflict_managers};
use super::object::resource_of;
use super::targets::{Ignores, Options, Target, cluster_failure, fan_out};
use crate::engine::compare::{diff, secrets};
use crate::engine::dialect::karmada_behaviour::KARMADA_MANAGED_LABEL;
use crate::engine::{MANAGED_BY_LABEL, MANAGED_BY_VALUE};
use crate::messages::{PlanAction, PlanItem};
use crate::model::{CellStatus, ResourceRef};

/// How plan compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanMode {
    /// Server-side dry-run apply, diffed against live.
    DryRun,
    /// Read-only credentials: the rendered intent against live, field by field (no request
    /// that RBAC counts as a write; dry-run is still a PATCH).
    ReadOnly,
}

/// Plans every target: one row per desired object (and per prune candidate).
pub async fn plan<A: ClusterApi>(
    targets: &[Target<A>],
    mode: PlanMode,
    options: Options,
    on_done: &(dyn Fn(usize, usize) + Sync),
) -> Vec<PlanItem> {
    plan_with(targets, mode, options, &Ignores::default(), on_done).await
}

/// [`plan`] honouring drift ignore rules.
pub async fn plan_with<A: ClusterApi>(
    targets: &[Target<A>],
    mode: PlanMode,
    options: Options,
    ignores: &Ignores,
    on_done: &(dyn Fn(usize, usize) + Sync),
) -> Vec<PlanItem> {
    let per_cluster = fan_out(targets, options, on_done, |target, api| {
        plan_cluster(target, api, mode, options, ignores)
    })
    .await;
    let mut items = Vec::new();
    for (target, rows) in targets.iter().zip(per_cluster) {
        match rows {
            Some(rows) => items.extend(rows),
            None => items.extend(error_rows(target, &cluster_failure(target, options))),
        }
    }
    items
}

fn error_rows<A>(target: &Target<A>, err: &ApiError) -> Vec<PlanItem> {
    let mut rows: Vec<PlanItem> = target
        .objects
        .iter()
        .map(|object| PlanItem {
            cluster: target.cluster.clone(),
            resource: resource_of(object),
            action: PlanAction::Error,
            diff: String::new(),
            message: err.to_string(),
            health: None,
        })
        .collect();
    rows.extend(render_failures(target));
    rows
}

fn render_failures<A>(target: &Target<A>) -> Vec<PlanItem> {
    target
        .failed
        .iter()
        .map(|(resource, reason)| PlanItem {
            cluster: target.cluster.clone(),
            resource: resource.clone(),
            action: PlanAction::Error,
            diff: String::new(),
            message: reason.clone(),
            health: None,
        })
        .collect()
}

async fn plan_cluster<A: ClusterApi>(
    target: &Target<A>,
    api: &A,
    mode: PlanMode,
    options: Options,
    ignores: &Ignores,
) -> Vec<PlanItem> {
    let guard = Guard::new(options.limits);
    let guard = &guard;
    // Collected before polling so the plan stays `Send` (see `fan_out`).
    let requests: Vec<_> = target
        .objects
        .iter()
        .enumerate()
        .map(|(index, object)| async move {
            let resource = resource_of(object);
            let unowned = if target.refuse_unowned.contains(&resource) {
                Unowned::Refuse
            } else if target.take_over_unowned.contains(&resource) {
                Unowned::TakeOver
            } else {
                Unowned::AsAny
            };
            (
                index,
                plan_object(&target.cluster, api, guard, object, mode, ignores, unowned).await,
            )
        })
        .collect();
    let mut rows: Vec<(usize, PlanItem)> = futures::stream::iter(requests)
        .buffer_unordered(options.limits.in_flight.max(1))
        .collect()
        .await;
    rows.sort_by_key(|(index, _)| *index);
    let mut rows: Vec<PlanItem> = rows.into_iter().map(|(_, row)| row).collect();
    // A namespaced object whose namespace this plan creates cannot be dry-run yet: it will be
    // created with the rendered object.
    let created_namespaces: BTreeSet<String> = rows
        .iter()
        .filter(|row| row.action == PlanAction::Create && row.resource.kind == "Namespace")
        .map(|row| row.resource.name.clone())
        .collect();
    for (row, object) in rows.iter_mut().zip(&target.objects) {
        if row.action == PlanAction::Error
            && row.message.starts_with("not found")
            && row
                .resource
                .namespace
                .as_ref()
                .is_some_and(|ns| created_namespaces.contains(ns))
        {
            row.action = PlanAction::Create;
            row.diff = diff::unified(None, object, &row.resource.display_key());
            row.message = "namespace is created first; diff of the rendered object".into();
        }
    }
    rows.extend(render_failures(target));
    rows.extend(suspended_rows(target));
    if !target.prune_kinds.is_empty() {
        rows.extend(prune_rows(target, api, guard).await);
    }
    rows
}

/// The objects Karmada's `suspension` holds back from the cluster: nothing is sent.
fn suspended_rows<A>(target: &Target<A>) -> Vec<PlanItem> {
    target
        .suspended
        .iter()
        .map(|(resource, reason)| PlanItem {
            cluster: target.cluster.clone(),
            resource: resource.clone(),
            action: PlanAction::Unchanged,
            diff: String::new(),
            message: reason.clone(),
            health: None,
        })
        .collect()
}

/// Whether a live object carries flotilla's or Karmada's ownership label.
pub(super) fn owned(live: &Value) -> bool {
    let labels = live.pointer("/metadata/labels");
    let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
    label(MANAGED_BY_LABEL) == Some(MANAGED_BY_VALUE)
        || label(KARMADA_MANAGED_LABEL) == Some("true")
}

/// What Karmada's `conflictResolution` makes of an object the member already has without
/// flotilla's or Karmada's label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unowned {
    /// No Karmada policy speaks for it: planned as any object.
    AsAny,
    /// Abort: refused.
    Refuse,
    /// Overwrite: taken over whole.
    TakeOver,
}

/// What plan says of an unowned object under `conflictResolution: Abort`.
pub const REFUSED_ADOPTION: &str = "Karmada would refuse to adopt it (conflictResolution: Abort): the member already has it without flotilla's or Karmada's ownership label; set conflictResolution: Overwrite (or the template annotation work.karmada.io/conflict-resolution: overwrite) to take it over";

async fn plan_object<A: ClusterApi>(
    cluster: &str,
    api: &A,
    guard: &Guard,
    object: &Value,
    mode: PlanMode,
    ignores: &Ignores,
    unowned: Unowned,
) -> PlanItem {
    let resource = resource_of(object);
    let label = resource.display_key();
    // Known once live is read; every row made after that carries it.
    let health = std::sync::OnceLock::new();
    let row = |action: PlanAction, diff: String, message: String| PlanItem {
        cluster: cluster.to_string(),
        resource: resource.clone(),
        action,
        diff,
        message,
        health: health.get().cloned().flatten(),
    };
    let dry_run = ApplyMode {
        dry_run: true,
        force: false,
    };
    // With ignore rules or a retention the intent depends on live: read it first, then
    // dry-run the intent without the ignored fields and with the retained ones.
    let adjusted;
    let (object, live, predicted) = if ignores.reads_live(cluster, object) {
        let live = guard.call(|| api.get(&resource)).await;
        adjusted = match &live {
            Ok(live) => match ignores.intent(cluster, object, live.as_ref()) {
                Ok(intent) => intent,
                Err(error) => return row(PlanAction::Error, String::new(), error),
            },
            Err(_) => object.clone(),
        };
        let predicted = match (mode, &live) {
            (PlanMode::DryRun, Ok(_)) => Some(guard.call(|| api.apply(&adjusted, dry_run)).await),
            _ => None,
        };
        (&adjusted, live, predicted)
    } else {
        let (live, predicted) = plan_requests(api, guard, object, &resource, mode, dry_run).await;
        (object, live, predicted)
    };
    let live = match live {
        Ok(live) => live,
        Err(err) => return row(PlanAction::Error, String::new(), err.to_string()),
    };
    let _ = health.set(live.as_ref().and_then(crate::engine::health::assess));
    let is_unowned = live.as_ref().is_some_and(|live| !owned(live));
    if unowned == Unowned::Refuse && is_unowned {
        return row(
            PlanAction::Conflict,
            String::new(),
            REFUSED_ADOPTION.to_string(),
        );
    }
    // Taken over whole, as apply does: other managers' fields are forced.
    let predicted = match predicted {
        Some(Err(ApiError::Conflict { .. })) if unowned == Unowned::TakeOver && is_unowned => {
            let force = ApplyMode {
                dry_run: true,
                force: true,
            };
            Some(guard.call(|| api.apply(object, force)).await)
        }
        other => other,
    };
    // Credentials that may read but not patch cannot dry-run: compare read-only instead.
    let (predicted, note) = match predicted {
        Some(Err(ApiError::Forbidden(reason))) => (
            None,
            format!("dry-run forbidden ({reason}); rendered intent against live, read-only"),
        ),
        other => (
            other,
            "read-only: rendered intent against live (no dry-run)".to_string(),
        ),
    };
    match predicted {
        None => match live {
            None => row(
                PlanAction::Create,
                diff::unified(None, object, &label),
                note,
            ),
            Some(live) => {
                if diff::drifted_fields(object, &live).is_empty() {
                    row(PlanAction::Unchanged, String::new(), String::new())
                } else {
                    let projected = diff::project(&live, object);
                    row(
                        PlanAction::Update,
                        diff::unified(Some(&projected), object, &label),
                        note,
                    )
                }
            }
        },
        Some(Err(ApiError::Conflict { managers, message })) => row(
            PlanAction::Conflict,
            String::new(),
            format!("conflict with {}: {message}", managers.join(", ")),
        ),
        Some(Err(err)) => row(PlanAction::Error, String::new(), err.to_string()),
        Some(Ok(predicted)) => match live {
            None => row(
                PlanAction::Create,
                diff::unified(None, &predicted, &label),
                String::new(),
            ),
            Some(live) if diff::same(&live, &predicted) => {
                row(PlanAction::Unchanged, String::new(), String::new())
            }
            Some(live) => row(
                PlanAction::Update,
                diff::unified(Some(&live), &predicted, &label),
                String::new(),
            ),
        },
    }
}

/// The live object and (in dry-run mode) the predicted one, requested together.
async fn plan_requests<A: ClusterApi>(
    api: &A,
    guard: &Guard,
    object: &Value,
    resource: &ResourceRef,
    mode: PlanMode,
    dry_run: ApplyMode,
) -> (
    Result<Option<Value>, ApiError>,
    Option<Result<Value, ApiError>>,
) {
    match mode {
        PlanMode::DryRun => {
            let (live, predicted) = futures::join!(
                guard.call(|| api.get(resource)),
                guard.call(|| api.apply(object, dry_run))
            );
            (live, Some(predicted))
        }
        PlanMode::ReadOnly => (guard.call(|| api.get(resource)).await, None),
    }
}

/// Objects with flotilla's label, of the fleet's kinds, that this cluster should not have.
async fn prune_rows<A: ClusterApi>(target: &Target<A>, api: &A, guard: &Guard) -> Vec<PlanItem> {
    let mut wanted: BTreeSet<ResourceRef> = target.objects.iter().map(resource_of).collect();
    wanted.extend(
        target
            .suspended
            .iter()
            .map(|(resource, _)| resource.clone()),
    );
    let mut rows = Vec::new();
    for (api_version, kind) in &target.prune_kinds {
        match guard.call(|| api.list_managed(api_version, kind)).await {
            Ok(objects) => {
                for object in objects {
                    let resource = resource_of(&object);
                    let in_scope = match (&resource.namespace, resource.kind.as_str()) {
                        (Some(ns), _) => target.prune_namespaces.contains(ns),
                        (None, "Namespace") => target.prune_namespaces.contains(&resource.name),
                        (None, _) => true,
                    };
                    if wanted.contains(&resource) || !in_scope {
                        continue;
                    }
                    let text = diff::to_yaml(&diff::normalize(&secrets::mask(&object)));
                    let removed: String = text.lines().map(|l| format!("-{l}\n")).collect();
                    rows.push(PlanItem {
                        cluster: target.cluster.clone(),
                        resource,
                        action: PlanAction::Prune,
                        diff: removed,
                        message: "carries flotilla's marker but is no longer placed".into(),
                        health: None,
                    });
                }
            }
            Err(ApiError::NotServed(_)) => {}
            Err(err) => rows.push(PlanItem {
                cluster: target.cluster.clone(),
                resource: ResourceRef {
                    api_version: api_version.clone(),
                    kind: kind.clone(),
                    namespace: None,
                    name: "*".into(),
                },
                action: PlanAction::Error,
                diff: String::new(),
                message: format!("listing prune candidates: {err}"),
                health: None,
            }),
        }
    }
    rows
}

/// The design §4 status of a plan row's (resource, cluster) cell as the plan sees it: create
/// is Pending, update Drifted, unchanged InSync, prune Orphaned, a conflict names the other
/// manager, an unreachable or unauthorized cluster is Unreachable, other errors Failed.
pub fn cell_status(row: &PlanItem) -> CellStatus {
    match row.action {
        PlanAction::Create => CellStatus::Pending,
        PlanAction::Update => CellStatus::Drifted,
        PlanAction::Unchanged if row.message.starts_with("suspended: ") => {
            CellStatus::Suspended(row.message.clone())
        }
        PlanAction::Unchanged => CellStatus::InSync,
        PlanAction::Prune => CellStatus::Orphaned,
        PlanAction::Conflict => CellStatus::Conflict(
            conflict_managers(&row.message)
                .into_iter()
                .next()
                .unwrap_or_else(|| "another manager".into()),
        ),
        PlanAction::Error
            if row.message.starts_with("unreachable")
                || row.message.starts_with("unauthorized") =>
        {
            CellStatus::Unreachable
        }
        PlanAction::Error => CellStatus::Failed(row.message.clone()),
    }
}
