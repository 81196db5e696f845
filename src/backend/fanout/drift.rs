//! Drift: every placed object's intent against its live object, field by field, with the
//! manager that owns each live value, leaving out what the fleet's ignore rules cover and
//! comparing what the member retains (Karmada's `Retain`) with itself. An
//! object that does not exist yet is not drift (plan reports it as `create`). Only reads.

use futures::StreamExt;
use serde::Serialize;
use serde_json::Value;

use super::cluster_api::{ClusterApi, Guard};
use super::object::{FIELD_MANAGER, resource_of};
use super::targets::{Ignores, Options, Target, cluster_failure, fan_out};
use crate::engine::compare::ignore::{self, IgnoreRule};
use crate::engine::compare::{diff, secrets};
use crate::messages::DriftField;
use crate::model::ResourceRef;

/// One object of `drift -o json`: its drifted fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftItem {
    pub cluster: String,
    pub resource: ResourceRef,
    pub fields: Vec<DriftField>,
}

/// A (cluster, object) drift could not be computed for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftError {
    pub cluster: String,
    pub resource: ResourceRef,
    pub message: String,
}

/// Compares every placed object's intent with live. Objects that do not exist yet are not
/// drift (plan reports them as `create`).
pub async fn drift<A: ClusterApi>(
    targets: &[Target<A>],
    options: Options,
    on_done: &(dyn Fn(usize, usize) + Sync),
) -> (Vec<DriftItem>, Vec<DriftError>) {
    drift_with(targets, options, &Ignores::default(), on_done).await
}

/// [`drift`] without the fields ignore rules cover.
pub async fn drift_with<A: ClusterApi>(
    targets: &[Target<A>],
    options: Options,
    ignores: &Ignores,
    on_done: &(dyn Fn(usize, usize) + Sync),
) -> (Vec<DriftItem>, Vec<DriftError>) {
    let per_cluster = fan_out(targets, options, on_done, |target, api| {
        drift_cluster(target, api, options, ignores)
    })
    .await;
    let mut items = Vec::new();
    let mut errors = Vec::new();
    for (target, rows) in targets.iter().zip(per_cluster) {
        let Some(rows) = rows else {
            let err = cluster_failure(target, options);
            errors.extend(target.objects.iter().map(|object| DriftError {
                cluster: target.cluster.clone(),
                resource: resource_of(object),
                message: err.to_string(),
            }));
            continue;
        };
        for row in rows {
            match row {
                Ok(Some(item)) => items.push(item),
                Ok(None) => {}
                Err(error) => errors.push(error),
            }
        }
        errors.extend(target.failed.iter().map(|(resource, reason)| DriftError {
            cluster: target.cluster.clone(),
            resource: resource.clone(),
            message: reason.clone(),
        }));
    }
    (items, errors)
}

type DriftRow = Result<Option<DriftItem>, DriftError>;

async fn drift_cluster<A: ClusterApi>(
    target: &Target<A>,
    api: &A,
    options: Options,
    ignores: &Ignores,
) -> Vec<DriftRow> {
    let guard = Guard::new(options.limits);
    let guard = &guard;
    let rows: Vec<DriftRow> = futures::stream::iter(&target.objects)
        .map(|object| async move {
            let resource = resource_of(object);
            match guard.call(|| api.get(&resource)).await {
                Err(err) => Err(DriftError {
                    cluster: target.cluster.clone(),
                    resource,
                    message: err.to_string(),
                }),
                Ok(None) => Ok(None),
                Ok(Some(live)) => {
                    let rules = ignores.for_object(&target.cluster, &resource);
                    let intent = match ignores.retained(object, Some(&live)) {
                        Ok(intent) => intent,
                        Err(message) => {
                            return Err(DriftError {
                                cluster: target.cluster.clone(),
                                resource,
                                message,
                            });
                        }
                    };
                    let fields = drift_fields_ignoring(&intent, &live, &rules);
                    Ok((!fields.is_empty()).then(|| DriftItem {
                        cluster: target.cluster.clone(),
                        resource,
                        fields,
                    }))
                }
            }
        })
        .buffered(options.limits.in_flight.max(1))
        .collect()
        .await;
    rows
}

/// The drifted fields of one object with the manager that owns each live value.
pub fn drift_fields(desired: &Value, live: &Value) -> Vec<DriftField> {
    drift_fields_ignoring(desired, live, &[])
}

/// [`drift_fields`] without the fields `rules` ignore.
pub fn drift_fields_ignoring(
    desired: &Value,
    live: &Value,
    rules: &[&IgnoreRule],
) -> Vec<DriftField> {
    diff::drifted_fields(desired, live)
        .into_iter()
        .filter(|field| !ignore::is_ignored(rules, live, &field.path, FIELD_MANAGER))
        .map(|field| {
            let owner = diff::owner_of(live, &field.path, FIELD_MANAGER);
            let path = field.pointer();
            DriftField {
                secret: secrets::is_secret_value(desired, &path),
                path,
                desired: field.desired,
                live: field.live.unwrap_or(Value::Null),
                manager: owner.as_ref().map(|(manager, _)| manager.clone()),
                time: owner.and_then(|(_, time)| time),
            }
        })
        .collect()
}
