//! Plan, apply and drift across a fleet: bounded fan-out over clusters (at most `concurrency`
//! in flight, each with its own timeout and [`Guard`]), and per cluster the requests in the
//! right order (Namespaces, then CRDs, then everything else). Results are per (cluster,
//! object) rows; a dead or slow cluster yields error rows and never blocks the others. It
//! must not read files or print: commands turn rows into output and exit codes.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures::StreamExt;
use serde::Serialize;
use serde_json::Value;

use super::cluster::{ApiError, ApplyMode, ClusterApi, Guard, Limits};
use crate::engine::compare::diff;
use crate::engine::compare::ignore::{self, IgnoreRule};
use crate::model::{CellStatus, ClusterSpec, ResourceRef};

/// The field manager flotilla applies with.
pub const FIELD_MANAGER: &str = "flotilla";

/// One cluster's work: its API (or why there is none) and the objects it should have.
pub struct Target<A> {
    pub cluster: String,
    pub api: Result<A, ApiError>,
    /// Desired objects, ownership marker included.
    pub objects: Vec<Value>,
    /// Objects that could not be rendered for this cluster, with the reason.
    pub failed: Vec<(ResourceRef, String)>,
    /// Kinds (apiVersion, kind) whose flotilla-labelled objects are prune candidates here;
    /// empty when pruning must not be considered (placement had errors, or a scope is set).
    pub prune_kinds: Vec<(String, String)>,
    /// Namespaces the fleet declares objects in: namespaced prune candidates outside them,
    /// and Namespaces not among them, are never touched (another fleet or a person may own
    /// them). Cluster-scoped kinds other than Namespace are not limited.
    pub prune_namespaces: BTreeSet<String>,
}

/// The fleet's drift ignore rules, per cluster (only the rules whose cluster part matches).
/// Plan, apply and drift honour them: an ignored field is not drift, not an update, and is
/// taken out of the applied intent as [`crate::engine::compare::ignore`] describes.
#[derive(Debug, Clone, Default)]
pub struct Ignores {
    by_cluster: BTreeMap<String, Vec<IgnoreRule>>,
}

impl Ignores {
    pub fn new(rules: &[IgnoreRule], clusters: &[ClusterSpec]) -> Ignores {
        let by_cluster = clusters
            .iter()
            .map(|cluster| {
                let rules: Vec<IgnoreRule> = rules
                    .iter()
                    .filter(|r| r.covers_cluster(cluster))
                    .cloned()
                    .collect();
                (cluster.name.clone(), rules)
            })
            .filter(|(_, rules)| !rules.is_empty())
            .collect();
        Ignores { by_cluster }
    }

    /// The rules about one object on one cluster.
    pub fn for_object(&self, cluster: &str, resource: &ResourceRef) -> Vec<&IgnoreRule> {
        self.by_cluster
            .get(cluster)
            .map(|rules| ignore::rules_for(rules, resource).collect())
            .unwrap_or_default()
    }

    pub fn is_empty(&self) -> bool {
        self.by_cluster.is_empty()
    }
}

/// Fan-out settings.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Clusters in flight at once.
    pub concurrency: usize,
    /// Time allowed for one cluster's whole work.
    pub cluster_timeout: Duration,
    pub limits: Limits,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            concurrency: 32,
            cluster_timeout: Duration::from_secs(60),
            limits: Limits::default(),
        }
    }
}

/// Identity of an object from its own apiVersion/kind/metadata.
pub fn resource_of(object: &Value) -> ResourceRef {
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    ResourceRef {
        api_version: text("/apiVersion"),
        kind: text("/kind"),
        namespace: object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(str::to_string),
        name: text("/metadata/name"),
    }
}

/// Order of application inside a cluster: Namespaces, CRDs, then the rest.
fn phase(resource: &ResourceRef) -> u8 {
    match (resource.group(), resource.kind.as_str()) {
        ("", "Namespace") => 0,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => 1,
        _ => 2,
    }
}

/// What a plan would do to one object on one cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Create,
    Update,
    Unchanged,
    Prune,
    Conflict,
    Error,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Unchanged => "unchanged",
            Action::Prune => "prune",
            Action::Conflict => "conflict",
            Action::Error => "error",
        }
    }
}

/// One row of `plan -o json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanItem {
    pub cluster: String,
    pub resource: ResourceRef,
    pub action: Action,
    pub diff: String,
    pub message: String,
}

/// How plan compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanMode {
    /// Server-side dry-run apply, diffed against live.
    DryRun,
    /// Read-only credentials: the rendered intent against live, field by field (no request
    /// that RBAC counts as a write; dry-run is still a PATCH).
    ReadOnly,
}

/// Runs `work` for every target, at most `concurrency` clusters at once, each bounded by the
/// cluster timeout; `on_done` is called as each cluster finishes (for progress). `None` for a
/// cluster without a client or out of time.
async fn fan_out<'a, A, T, F, Fut>(
    targets: &'a [Target<A>],
    options: Options,
    on_done: &(dyn Fn(usize, usize) + Sync),
    work: F,
) -> Vec<Option<Vec<T>>>
where
    A: ClusterApi,
    F: Fn(&'a Target<A>, &'a A) -> Fut + 'a,
    Fut: std::future::Future<Output = Vec<T>> + 'a,
    T: 'a,
{
    let total = targets.len();
    let work = &work;
    let mut out: Vec<Option<Vec<T>>> = Vec::with_capacity(total);
    out.resize_with(total, || None);
    // The futures are collected before they are polled so no closure over borrowed targets
    // is held across an await: that keeps the fan-out `Send` (rustc cannot prove it through
    // such a closure), so it can run in a spawned task.
    let cluster_work: Vec<_> = targets
        .iter()
        .enumerate()
        .map(|(index, target)| async move {
            let rows = match &target.api {
                Err(_) => None,
                Ok(api) => tokio::time::timeout(options.cluster_timeout, work(target, api))
                    .await
                    .ok(),
            };
            (index, rows)
        })
        .collect();
    let mut stream =
        futures::stream::iter(cluster_work).buffer_unordered(options.concurrency.max(1));
    let mut done = 0;
    while let Some((index, rows)) = stream.next().await {
        done += 1;
        on_done(done, total);
        if let Some(slot) = out.get_mut(index) {
            *slot = rows;
        }
    }
    out
}

/// Why a whole cluster failed (no client, or the cluster timeout ran out), if it did.
fn cluster_failure<A>(target: &Target<A>, options: Options) -> ApiError {
    match &target.api {
        Err(err) => err.clone(),
        Ok(_) => ApiError::Unreachable(format!(
            "cluster did not finish within {}s",
            options.cluster_timeout.as_secs()
        )),
    }
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
            action: Action::Error,
            diff: String::new(),
            message: err.to_string(),
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
            action: Action::Error,
            diff: String::new(),
            message: reason.clone(),
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
            let rules = ignores.for_object(&target.cluster, &resource_of(object));
            (
                index,
                plan_object(&target.cluster, api, guard, object, mode, &rules).await,
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
        .filter(|row| row.action == Action::Create && row.resource.kind == "Namespace")
        .map(|row| row.resource.name.clone())
        .collect();
    for (row, object) in rows.iter_mut().zip(&target.objects) {
        if row.action == Action::Error
            && row.message.starts_with("not found")
            && row
                .resource
                .namespace
                .as_ref()
                .is_some_and(|ns| created_namespaces.contains(ns))
        {
            row.action = Action::Create;
            row.diff = diff::unified(None, object, &row.resource.display_key());
            row.message = "namespace is created first; diff of the rendered object".into();
        }
    }
    rows.extend(render_failures(target));
    if !target.prune_kinds.is_empty() {
        rows.extend(prune_rows(target, api, guard).await);
    }
    rows
}

async fn plan_object<A: ClusterApi>(
    cluster: &str,
    api: &A,
    guard: &Guard,
    object: &Value,
    mode: PlanMode,
    rules: &[&IgnoreRule],
) -> PlanItem {
    let resource = resource_of(object);
    let label = resource.display_key();
    let row = |action: Action, diff: String, message: String| PlanItem {
        cluster: cluster.to_string(),
        resource: resource.clone(),
        action,
        diff,
        message,
    };
    let dry_run = ApplyMode {
        dry_run: true,
        force: false,
    };
    // With ignore rules the intent depends on live: read it first, then dry-run the intent
    // without the ignored fields.
    let adjusted;
    let (object, live, predicted) = if !rules.is_empty() {
        let live = guard.call(|| api.get(&resource)).await;
        adjusted = match &live {
            Ok(live) => ignore::adjust_intent(object, live.as_ref(), rules, FIELD_MANAGER),
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
        Err(err) => return row(Action::Error, String::new(), err.to_string()),
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
            None => row(Action::Create, diff::unified(None, object, &label), note),
            Some(live) => {
                if diff::drifted_fields(object, &live).is_empty() {
                    row(Action::Unchanged, String::new(), String::new())
                } else {
                    let projected = diff::project(&live, object);
                    row(
                        Action::Update,
                        diff::unified(Some(&projected), object, &label),
                        note,
                    )
                }
            }
        },
        Some(Err(ApiError::Conflict { managers, message })) => row(
            Action::Conflict,
            String::new(),
            format!("conflict with {}: {message}", managers.join(", ")),
        ),
        Some(Err(err)) => row(Action::Error, String::new(), err.to_string()),
        Some(Ok(predicted)) => match live {
            None => row(
                Action::Create,
                diff::unified(None, &predicted, &label),
                String::new(),
            ),
            Some(live) if diff::same(&live, &predicted) => {
                row(Action::Unchanged, String::new(), String::new())
            }
            Some(live) => row(
                Action::Update,
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
    let wanted: BTreeSet<ResourceRef> = target.objects.iter().map(resource_of).collect();
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
                    let text = diff::to_yaml(&diff::normalize(&object));
                    let removed: String = text.lines().map(|l| format!("-{l}\n")).collect();
                    rows.push(PlanItem {
                        cluster: target.cluster.clone(),
                        resource,
                        action: Action::Prune,
                        diff: removed,
                        message: "carries flotilla's marker but is no longer placed".into(),
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
                action: Action::Error,
                diff: String::new(),
                message: format!("listing prune candidates: {err}"),
            }),
        }
    }
    rows
}

impl PlanItem {
    /// The design §4 status of this (resource, cluster) cell as the plan sees it: create is
    /// Pending, update Drifted, unchanged InSync, prune Orphaned, a conflict names the other
    /// manager, an unreachable or unauthorized cluster is Unreachable, other errors Failed.
    pub fn cell_status(&self) -> CellStatus {
        match self.action {
            Action::Create => CellStatus::Pending,
            Action::Update => CellStatus::Drifted,
            Action::Unchanged => CellStatus::InSync,
            Action::Prune => CellStatus::Orphaned,
            Action::Conflict => CellStatus::Conflict(
                super::kube::api::conflict_managers(&self.message)
                    .into_iter()
                    .next()
                    .unwrap_or_else(|| "another manager".into()),
            ),
            Action::Error
                if self.message.starts_with("unreachable")
                    || self.message.starts_with("unauthorized") =>
            {
                CellStatus::Unreachable
            }
            Action::Error => CellStatus::Failed(self.message.clone()),
        }
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

/// [`apply`] honouring drift ignore rules: objects that have some are read first, and their
/// ignored fields are taken out of the intent ([`ignore::adjust_intent`]).
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
        let requests: Vec<_> = pending
            .into_iter()
            .map(|(resource, object)| async move {
                let rules = ignores.for_object(&target.cluster, &resource);
                if rules.is_empty() {
                    return (resource, guard.call(|| api.apply(object, mode)).await);
                }
                let adjusted = match guard.call(|| api.get(&resource)).await {
                    Ok(live) => ignore::adjust_intent(object, live.as_ref(), &rules, FIELD_MANAGER),
                    Err(err) => return (resource, Err(err)),
                };
                (resource, guard.call(|| api.apply(&adjusted, mode)).await)
            })
            .collect();
        let results: Vec<(ResourceRef, Result<Value, ApiError>)> = futures::stream::iter(requests)
            .buffered(options.limits.in_flight.max(1))
            .collect()
            .await;
        for (resource, result) in results {
            let (outcome, message) = match result {
                Ok(_) => (Outcome::Applied, String::new()),
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

/// One drifted field of `drift -o json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftField {
    pub path: String,
    pub desired: Value,
    pub live: Value,
    pub manager: Option<String>,
    /// When that manager's managedFields entry was last written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
}

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
                    let fields = drift_fields_ignoring(object, &live, &rules);
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
            DriftField {
                path: field.pointer(),
                desired: field.desired,
                live: field.live.unwrap_or(Value::Null),
                manager: owner.as_ref().map(|(manager, _)| manager.clone()),
                time: owner.and_then(|(_, time)| time),
            }
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    use serde_json::json;

    use super::*;
    use crate::backend::fake::FakeCluster;

    fn config_map(name: &str, ns: &str, color: &str) -> Value {
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns,
                "labels": {"app.kubernetes.io/managed-by": "flotilla"}},
            "data": {"color": color},
        })
    }

    fn namespace(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name,
            "labels": {"app.kubernetes.io/managed-by": "flotilla"}}})
    }

    fn target(
        name: &str,
        fake: &Arc<FakeCluster>,
        objects: Vec<Value>,
    ) -> Target<Arc<FakeCluster>> {
        Target {
            cluster: name.into(),
            api: Ok(fake.clone()),
            objects,
            failed: Vec::new(),
            prune_kinds: Vec::new(),
            prune_namespaces: BTreeSet::new(),
        }
    }

    fn quiet(_: usize, _: usize) {}

    #[tokio::test]
    async fn plan_apply_plan_converges_and_a_dead_cluster_only_fails_itself() {
        let good = Arc::new(FakeCluster::new(Duration::ZERO));
        let dead = Arc::new(FakeCluster {
            unreachable: true,
            ..FakeCluster::default()
        });
        let objects = vec![namespace("shop"), config_map("a", "shop", "blue")];
        let targets = vec![
            target("good", &good, objects.clone()),
            target("dead", &dead, objects),
        ];
        let options = Options::default();
        let plan1 = plan(&targets, PlanMode::DryRun, options, &quiet).await;
        let actions: Vec<(&str, Action)> = plan1
            .iter()
            .map(|i| (i.cluster.as_str(), i.action))
            .collect();
        assert_eq!(
            actions,
            [
                ("good", Action::Create),
                ("good", Action::Create),
                ("dead", Action::Error),
                ("dead", Action::Error)
            ]
        );
        let applied = apply(&targets, false, &BTreeMap::new(), options, &quiet).await;
        assert_eq!(applied[0].result, Outcome::Applied);
        assert_eq!(applied[1].result, Outcome::Applied);
        assert!(applied[2..].iter().all(|i| i.result.is_failure()));
        let plan2 = plan(&targets[..1], PlanMode::DryRun, options, &quiet).await;
        assert!(
            plan2.iter().all(|i| i.action == Action::Unchanged),
            "{plan2:?}"
        );
        let (drift_items, errors) = drift(&targets[..1], options, &quiet).await;
        assert!(drift_items.is_empty() && errors.is_empty());
    }

    #[tokio::test]
    async fn conflicts_unserved_kinds_and_forbidden_clusters_are_per_cluster() {
        let conflicted = Arc::new(FakeCluster::default());
        let cm = config_map("a", "shop", "blue");
        conflicted
            .foreign
            .lock()
            .unwrap()
            .insert(resource_of(&cm), "payments-team".into());
        let mut served = BTreeSet::new();
        served.insert(("v1".to_string(), "Namespace".to_string()));
        let no_configmaps = Arc::new(FakeCluster {
            served,
            ..FakeCluster::default()
        });
        let forbidden = Arc::new(FakeCluster {
            forbidden: true,
            ..FakeCluster::default()
        });
        let objects = vec![namespace("shop"), cm.clone()];
        let targets = vec![
            target("conflicted", &conflicted, objects.clone()),
            target("old", &no_configmaps, objects.clone()),
            target("forbidden", &forbidden, objects),
        ];
        let options = Options::default();
        let items = apply(&targets, false, &BTreeMap::new(), options, &quiet).await;
        let find = |cluster: &str, kind: &str| {
            items
                .iter()
                .find(|i| i.cluster == cluster && i.resource.kind == kind)
                .unwrap()
                .clone()
        };
        let conflict = find("conflicted", "ConfigMap");
        assert_eq!(conflict.result, Outcome::Conflict);
        assert!(conflict.message.contains("payments-team"));
        assert!(
            conflicted
                .lock_objects_for_test()
                .get(&resource_of(&cm))
                .is_none()
        );
        let old = find("old", "ConfigMap");
        assert_eq!(old.result, Outcome::Error);
        assert!(old.message.contains("kind not served"), "{old:?}");
        assert_eq!(find("old", "Namespace").result, Outcome::Applied);
        // The namespace is refused, so nothing else is attempted there.
        assert_eq!(find("forbidden", "Namespace").result, Outcome::Error);
        assert_eq!(find("forbidden", "ConfigMap").result, Outcome::Skipped);
        // Forcing takes the fields.
        let forced = apply(&targets[..1], true, &BTreeMap::new(), options, &quiet).await;
        assert!(
            forced.iter().all(|i| i.result == Outcome::Applied),
            "{forced:?}"
        );
    }

    #[tokio::test]
    async fn prune_lists_only_marked_objects_no_longer_placed() {
        let fake = Arc::new(FakeCluster::default());
        let options = Options::default();
        let old = vec![
            config_map("a", "shop", "blue"),
            config_map("b", "shop", "red"),
        ];
        apply(
            &[target("c", &fake, old)],
            false,
            &BTreeMap::new(),
            options,
            &quiet,
        )
        .await;
        let mut now = target("c", &fake, vec![config_map("a", "shop", "blue")]);
        now.prune_kinds = vec![("v1".into(), "ConfigMap".into())];
        now.prune_namespaces.insert("shop".into());
        let items = plan(
            std::slice::from_ref(&now),
            PlanMode::DryRun,
            options,
            &quiet,
        )
        .await;
        let pruned: Vec<&str> = items
            .iter()
            .filter(|i| i.action == Action::Prune)
            .map(|i| i.resource.name.as_str())
            .collect();
        assert_eq!(pruned, ["b"]);
        let mut confirmed = BTreeMap::new();
        confirmed.insert(
            "c".to_string(),
            vec![resource_of(&config_map("b", "shop", "red"))],
        );
        let applied = apply(
            std::slice::from_ref(&now),
            false,
            &confirmed,
            options,
            &quiet,
        )
        .await;
        assert!(applied.iter().any(|i| i.result == Outcome::Pruned));
        assert_eq!(fake.lock_objects_for_test().len(), 1);
    }

    #[test]
    fn plan_rows_map_to_cell_statuses() {
        let row = |action: Action, message: &str| PlanItem {
            cluster: "c".into(),
            resource: resource_of(&config_map("a", "ns", "x")),
            action,
            diff: String::new(),
            message: message.into(),
        };
        assert_eq!(row(Action::Create, "").cell_status(), CellStatus::Pending);
        assert_eq!(row(Action::Unchanged, "").cell_status(), CellStatus::InSync);
        assert_eq!(
            row(
                Action::Conflict,
                "conflict with kubectl: Apply failed: conflict with \"kubectl\" using v1"
            )
            .cell_status(),
            CellStatus::Conflict("kubectl".into())
        );
        assert_eq!(
            row(Action::Error, "unreachable: connection refused").cell_status(),
            CellStatus::Unreachable
        );
        assert_eq!(
            row(Action::Error, "kind not served: x/v1 W").cell_status(),
            CellStatus::Failed("kind not served: x/v1 W".into())
        );
    }

    #[tokio::test(start_paused = true)]
    async fn fan_out_is_bounded_and_a_slow_cluster_times_out_alone() {
        let rtt = Duration::from_millis(50);
        let mut targets: Vec<Target<Arc<FakeCluster>>> = (0..64)
            .map(|i| {
                target(
                    &format!("m{i}"),
                    &Arc::new(FakeCluster::new(rtt)),
                    vec![config_map("a", "default", "x")],
                )
            })
            .collect();
        let slow = Arc::new(FakeCluster::new(Duration::from_secs(3600)));
        targets.push(target("slow", &slow, vec![config_map("a", "default", "x")]));
        let options = Options {
            concurrency: 16,
            cluster_timeout: Duration::from_secs(5),
            ..Options::default()
        };
        let started = tokio::time::Instant::now();
        let items = apply(&targets, false, &BTreeMap::new(), options, &quiet).await;
        let took = started.elapsed();
        // 65 clusters / 16 at a time = 5 rounds of 50 ms, with the slow one's 5 s overlapping.
        assert!(took <= Duration::from_millis(5_300), "{took:?}");
        assert_eq!(
            items
                .iter()
                .filter(|i| i.result == Outcome::Applied)
                .count(),
            64
        );
        let slow_item = items.iter().find(|i| i.cluster == "slow").unwrap();
        assert!(slow_item.message.contains("unreachable"), "{slow_item:?}");
        assert_eq!(slow.requests.load(Ordering::Relaxed), 1);
    }

    #[tokio::test]
    async fn ignored_fields_are_not_drift_not_updates_and_not_reverted() {
        let fake = Arc::new(FakeCluster::new(Duration::ZERO));
        let desired = config_map("a", "shop", "blue");
        let targets = vec![target("east", &fake, vec![desired.clone()])];
        let options = Options::default();
        let applied = apply(&targets, false, &BTreeMap::new(), options, &quiet).await;
        assert!(applied.iter().all(|i| i.result == Outcome::Applied));
        // Someone changes the colour on the cluster.
        let resource = resource_of(&desired);
        *fake
            .lock_objects_for_test()
            .get_mut(&resource)
            .unwrap()
            .pointer_mut("/data/color")
            .unwrap() = json!("red");
        let (drifted, _) = drift(&targets, options, &quiet).await;
        assert_eq!(drifted.len(), 1, "without a rule the change is drift");

        let rule_text = "apiVersion: flotilla.dev/v1alpha1\nkind: DriftIgnore\nmetadata: {name: colour}\nspec:\n  resources: [{kind: ConfigMap, namespace: shop, name: a}]\n  paths: [/data/color]\n";
        let (docs, _) = crate::engine::document::parse::parse_files(&[crate::engine::SourceFile {
            path: "i.yaml".into(),
            text: rule_text.into(),
        }]);
        let rule = IgnoreRule::parse(&docs[0], &[]).unwrap();
        let east = ClusterSpec {
            name: "east".into(),
            ..ClusterSpec::default()
        };
        let ignores = Ignores::new(&[rule], &[east]);
        let (drifted, errors) = drift_with(&targets, options, &ignores, &quiet).await;
        assert!(drifted.is_empty() && errors.is_empty(), "{drifted:?}");
        let planned = plan_with(&targets, PlanMode::DryRun, options, &ignores, &quiet).await;
        assert_eq!(planned[0].action, Action::Unchanged, "{planned:?}");
        let planned = plan(&targets, PlanMode::DryRun, options, &quiet).await;
        assert_eq!(
            planned[0].action,
            Action::Update,
            "without the rule: {planned:?}"
        );
        let applied =
            apply_with(&targets, false, &BTreeMap::new(), options, &ignores, &quiet).await;
        assert!(applied.iter().all(|i| i.result == Outcome::Applied));
        let objects = fake.lock_objects_for_test();
        assert_eq!(
            objects[&resource]["data"]["color"], "red",
            "apply must not revert it"
        );
    }
}
