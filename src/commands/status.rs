//! `flotilla status`: every (resource, cluster) cell of the fleet with its sync status (design
//! §4), health and reason, and a line per cluster — what the console's matrix and header show,
//! for scripts and for a look without opening the console. On live clusters and on the demo
//! alike it runs the passes `plan` and `drift` run: a read-only plan (with the prune candidates,
//! so orphans show) gives each cell's status through [`planning::cell_status`], and drift names
//! the field and the manager of a drifted cell. With `--resource`, the live objects read for
//! the named resources also give each its template status as Karmada would aggregate it (the
//! engine's interpreter; no read of its own). It only reads: no write, not even a dry run. It
//! must not work a status out by rules of its own.
//!
//! A one-shot read cannot remember: a placed object that is absent is `Pending` (never
//! applied, or deleted since; the console, which watches, tells `Missing` apart). What the
//! last apply did comes from the audit log (on the demo, from its world): an absent object
//! whose last apply was refused is `Failed` with the cluster's answer until the next apply, as
//! in the console.

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use super::hub;
use super::propagate::{plan_exit, progress};
use super::scope::{Clusters, InputError, Prepared, ResourceScope, input_error, prepare_clusters};
use crate::backend::audit::{self, LastFailure};
use crate::backend::cells::drift_summary;
use crate::backend::fanout::cluster_api::ClusterApi;
use crate::backend::fanout::drift;
use crate::backend::fanout::object_events::{LiveItem, read_live};
use crate::backend::fanout::planning::{self, PlanMode};
use crate::backend::fanout::targets::Options;
use crate::backend::hub::{member_health, object_view};
use crate::backend::sim::Scenario;
use crate::cli::{GlobalArgs, ScopeArgs, exit};
use crate::messages::{CellRef, LiveObject, ObjectEvent, PlanAction, PlanItem};
use crate::model::{CellHealth, CellStatus, HealthKind, ResourceRef, StatusKind};
use crate::output::{self, Table};

/// One row of `status -o json`: `{"cluster","resource","sync","health","reason","since"}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusItem {
    pub cluster: String,
    pub resource: ResourceRef,
    pub sync: StatusKind,
    /// Health beside sync: `Missing` for a placed object the cluster does not hold, `None` for
    /// kinds without health, `Unknown` where the cluster could not say or it is not assessed.
    pub health: &'static str,
    /// The rule that decided the health: `"apps/Deployment (built-in)"`,
    /// `"cert-manager.io/Certificate (argocd rules, PATH)"`; absent where none did (no
    /// health, or the hub's own report).
    #[serde(rename = "healthRule", skip_serializing_if = "Option::is_none")]
    pub health_rule: Option<String>,
    pub reason: String,
    /// When the state began, where the cluster says: a drifted field's managedFields time, or
    /// when a rollout passed its progress deadline.
    pub since: Option<String>,
    /// With `--resource`: the live object, Secret values masked (`null`: not held).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<Value>,
    /// With `--resource`: the cluster's recent Events for the object (and its pods'), newest
    /// first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<ObjectEvent>>,
    /// With `--resource`: why the live object or its Events could not be read.
    #[serde(rename = "liveError", skip_serializing_if = "Option::is_none")]
    pub live_error: Option<String>,
    /// With `--resource`: how the template became the object on the member, link by link,
    /// as the console's object view shows it (template, policy and override rules at their
    /// file and line; the policy, binding and Work Karmada marked the object with; the object,
    /// its pods, its Events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain: Option<Vec<crate::engine::chain::Link>>,
}

impl StatusItem {
    /// The cell's chain, once its member was read: `links` (the fleet's, or the hub's
    /// template) followed by what the read found.
    fn chained(
        mut self,
        links: Vec<crate::engine::chain::Link>,
        pods: &[crate::engine::health::pods::PodRow],
    ) -> StatusItem {
        let Some(live) = &self.live else {
            return self;
        };
        let health = HealthKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == self.health);
        let events = self.events.as_deref().unwrap_or_default();
        let chain = crate::engine::chain::whole(
            links,
            format!("{} on {}", self.resource.display_key(), self.cluster),
            Some(crate::engine::chain::ObjectRead {
                object: Some(live).filter(|live| !live.is_null()),
                concern: crate::model::Concern::of(self.sync, health),
                pods,
                events: events.len(),
                warnings: events.iter().filter(|e| e.is_warning()).count(),
            }),
        );
        self.chain = Some(chain);
        self
    }
}

/// `status -o json`: the cells, and their totals of sync and of health (placed cells only;
/// not-placed cells count under `sync.NotPlaced`); with `--resource`, each named resource's
/// template status as Karmada would aggregate it from the live objects read for its cells.
#[derive(Debug, Serialize)]
struct StatusList<'a> {
    items: &'a [StatusItem],
    totals: Totals,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    aggregated: &'a [AggregatedItem],
}

/// One resource's aggregated status in `status -o json` (`--resource` only: it comes from the
/// live objects that read, so it costs no read of its own).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AggregatedItem {
    pub resource: ResourceRef,
    /// The clusters whose live objects went into it.
    pub clusters: Vec<String>,
    /// The aggregated `.status`, the aggregating rule and the reflecting one; absent when the
    /// rule failed.
    #[serde(flatten)]
    pub aggregation: Option<crate::engine::interpreter::Aggregation>,
    /// Why the rule failed, naming it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// On a Karmada hub: the status the hub wrote into its template.
    #[serde(rename = "hubStatus", skip_serializing_if = "Option::is_none")]
    pub hub_status: Option<Value>,
    /// On a Karmada hub: whether the hub's status and flotilla's aggregation agree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agrees: Option<bool>,
    /// On a Karmada hub: its binding's per-member record (`aggregatedStatus`), each item beside
    /// what flotilla read on that member and where the two differ.
    #[serde(rename = "hubMembers", skip_serializing_if = "Vec::is_empty")]
    pub hub_members: Vec<crate::engine::interpreter::members::MemberCheck>,
}

/// Whether a cell's live read goes into its resource's aggregation: read (`--resource`) and
/// answered. A member that could not be read is left out, as in the console: Karmada would
/// still hold its last collected status, which a one-shot read does not know.
fn read_for_aggregation(item: &StatusItem) -> bool {
    match &item.live {
        None => false,
        Some(Value::Null) => item.live_error.is_none(),
        Some(_) => true,
    }
}

/// What one resource's aggregation is computed from: its placed cells whose live objects
/// were read, and each as `(cluster, live object)` (`None` where the member has none).
fn aggregation_inputs<'a>(
    items: &'a [StatusItem],
    resource: &ResourceRef,
) -> (Vec<&'a StatusItem>, Vec<(&'a str, Option<&'a Value>)>) {
    let cells: Vec<&StatusItem> = items
        .iter()
        .filter(|item| {
            &item.resource == resource
                && item.sync != StatusKind::NotPlaced
                && read_for_aggregation(item)
        })
        .collect();
    let members = cells
        .iter()
        .map(|item| {
            (
                item.cluster.as_str(),
                item.live.as_ref().filter(|live| !live.is_null()),
            )
        })
        .collect();
    (cells, members)
}

fn aggregated_item(
    resource: &ResourceRef,
    cells: &[&StatusItem],
    result: Result<
        crate::engine::interpreter::Aggregation,
        crate::engine::interpreter::InterpreterError,
    >,
) -> AggregatedItem {
    let (aggregation, error) = match result {
        Ok(aggregation) => (Some(aggregation), None),
        Err(error) => (None, Some(error.to_string())),
    };
    AggregatedItem {
        resource: resource.clone(),
        clusters: cells.iter().map(|item| item.cluster.clone()).collect(),
        aggregation,
        error,
        hub_status: None,
        agrees: None,
        hub_members: Vec::new(),
    }
}

/// Each resource's template status as Karmada would aggregate it from `items`' live objects
/// (placed cells read with `--resource`); resources no rule aggregates are left out.
fn aggregated_of(fleet: &crate::engine::Fleet, items: &[StatusItem]) -> Vec<AggregatedItem> {
    let mut out = Vec::new();
    for (index, resource) in fleet.resources.iter().enumerate() {
        let (cells, members) = aggregation_inputs(items, &resource.target);
        if cells.is_empty() {
            continue;
        }
        let Some(result) = fleet.aggregate_status(index, None, &members) else {
            continue;
        };
        out.push(aggregated_item(&resource.target, &cells, result));
    }
    out
}

#[derive(Debug, Default, Serialize)]
struct Totals {
    sync: BTreeMap<&'static str, usize>,
    health: BTreeMap<&'static str, usize>,
}

impl<'a> StatusList<'a> {
    fn of(items: &'a [StatusItem]) -> StatusList<'a> {
        StatusList {
            items,
            totals: Totals::of(items.iter()),
            aggregated: &[],
        }
    }
}

impl Totals {
    fn of<'a>(items: impl Iterator<Item = &'a StatusItem>) -> Totals {
        let mut totals = Totals::default();
        for item in items {
            *totals.sync.entry(item.sync.as_str()).or_default() += 1;
            if item.sync != StatusKind::NotPlaced && item.health != "None" {
                *totals.health.entry(item.health).or_default() += 1;
            }
        }
        totals
    }

    /// "3 Healthy, 1 Degraded": the health counts, healthiest first.
    fn health_line(&self) -> String {
        const ORDER: [&str; 6] = [
            "Healthy",
            "Suspended",
            "Progressing",
            "Degraded",
            "Missing",
            "Unknown",
        ];
        ORDER
            .iter()
            .filter_map(|kind| self.health.get(kind).map(|count| format!("{count} {kind}")))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `flotilla status`.
pub async fn run_status(
    global: &GlobalArgs,
    scope: &ScopeArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    if let (Some(context), false) = (&global.hub, global.uses_demo()) {
        return hub_status(global, scope, context, out).await;
    }
    let resources = match ResourceScope::parse(scope) {
        Ok(resources) => resources,
        Err(InputError(message)) => return Ok(input_error(&message)),
    };
    let (items, aggregated, code) = match prepare_clusters(global, scope, true).await {
        Err(InputError(message)) => return Ok(input_error(&message)),
        Ok(Clusters::Live(prepared)) => {
            let failures = audit::last_failures(&audit::read_entries());
            cells_of(prepared, &resources, &failures).await
        }
        Ok(Clusters::Simulated(prepared)) => {
            // The demo's world starts as if its failing applies were made and refused.
            let scenario = Scenario::for_demo(
                &prepared.fleet.clusters,
                global.demo_scale.is_some(),
                global.demo_seed,
            );
            let failures = scenario
                .failures
                .iter()
                .map(|failure| {
                    (
                        (failure.cluster.clone(), failure.resource.clone()),
                        LastFailure {
                            message: failure.message.clone(),
                            since: None,
                        },
                    )
                })
                .collect();
            cells_of(prepared, &resources, &failures).await
        }
    };
    let list = StatusList {
        aggregated: &aggregated,
        ..StatusList::of(&items)
    };
    output::write(out, &global.output, &list, || table(&items))?;
    Ok(code)
}

/// `flotilla --hub CONTEXT status`: every cell as the hub reports it — the propagation status
/// its controllers record and the health it aggregates from the members (Karmada's
/// `aggregatedStatus`, OCM's status feedback) — read once, as the console's first frame is;
/// with `--resource`, each named cell's live object and Events from its member too.
async fn hub_status(
    global: &GlobalArgs,
    scope: &ScopeArgs,
    context: &str,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let mut scope = match hub::check_scope(scope) {
        Ok(scope) => scope,
        Err(InputError(message)) => return Ok(input_error(&message)),
    };
    let (hub, view) = match hub::read_hub(global, context).await {
        Ok(read) => read,
        Err(err) => return Ok(hub::failed(err)),
    };
    if let Err(err) = scope.read_labels(&hub).await {
        return Ok(hub::failed(err));
    }
    // The members' own objects are judged by the interpreters the hub runs, over the fleet
    // directory's when there is one beside it.
    let interpreters = match hub.interpreters().await {
        Ok(interpreters) => {
            let files = crate::source::fleet_files(global).ok();
            let fleet = files
                .map(|files| crate::engine::load_fleet(&files))
                .filter(|(_, errors)| errors.is_empty())
                .map(|(fleet, _)| fleet);
            crate::engine::fleet::interpreted::use_hub_for_health(&interpreters, fleet.as_ref());
            interpreters
        }
        Err(err) => return Ok(hub::failed(err)),
    };
    // Where the hub says only "not healthy yet", the member says whether it is stuck, as in
    // the console; on a hub that reports no health, every placed cell in scope asks its member.
    let in_scope = |cell: &CellRef| {
        let (row, column) = (cell.resource as usize, cell.cluster as usize);
        scope.includes(&view.clusters[column].0.name, &view.rows[row].target)
    };
    let asked: Vec<CellRef> = member_health::placed_cells(&view)
        .into_iter()
        .filter(in_scope)
        .filter(|cell| {
            !hub.kind.reports_health()
                || view
                    .health(cell.resource as usize, cell.cluster as usize)
                    .is_some_and(|health| health.kind == HealthKind::Progressing)
        })
        .collect();
    // The live objects and their Events only for the resources asked for by name, read on
    // the members as the console's object view reads them.
    let named: Vec<CellRef> = member_health::placed_cells(&view)
        .into_iter()
        .filter(in_scope)
        .filter(|cell| scope.names(&view.rows[cell.resource as usize].target))
        .collect();
    let (refined, live) = futures::join!(
        member_health::refine(&hub, member_health::questions(&view, &asked)),
        object_view::read_once(&hub, &view, &named),
    );
    let refined: BTreeMap<CellRef, Option<CellHealth>> = refined
        .into_iter()
        .map(|update| (update.cell, update.health))
        .collect();
    let live: BTreeMap<CellRef, LiveObject> = live.into_iter().collect();
    let mut items = Vec::new();
    for (row, resource) in view.rows.iter().enumerate() {
        for (column, (spec, _)) in view.clusters.iter().enumerate() {
            if !scope.includes(&spec.name, &resource.target) {
                continue;
            }
            let (status, message) = view.cell(row, column);
            let cell = CellRef {
                resource: row as u32,
                cluster: column as u32,
            };
            let read = live.get(&cell);
            let health = match refined.get(&cell) {
                Some(refined) => refined.clone(),
                None => view.health(row, column),
            };
            let (reason, since) = match (&status, &health) {
                (CellStatus::NotPlaced(why), _) => (why.clone(), None),
                (_, Some(health)) if health.kind != HealthKind::Healthy => {
                    (health.reason.clone(), health.since.clone())
                }
                _ => (
                    message
                        .clone()
                        .or_else(|| status.detail().map(str::to_string))
                        .unwrap_or_default(),
                    None,
                ),
            };
            let item = StatusItem {
                cluster: spec.name.clone(),
                resource: resource.target.clone(),
                sync: status.kind(),
                health: match (&status, &health) {
                    (CellStatus::NotPlaced(_), _) => "None",
                    (_, Some(health)) => health.kind.as_str(),
                    (_, None) => "Unknown",
                },
                health_rule: match &status {
                    CellStatus::NotPlaced(_) => None,
                    _ => health.as_ref().and_then(|health| health.rule.clone()),
                },
                reason,
                since,
                live: read.map(|read| read.object.clone().unwrap_or(Value::Null)),
                events: read.map(|read| read.events.clone()),
                live_error: read.and_then(|read| read.error.clone()),
                chain: None,
            };
            // Without a fleet directory the chain starts at the hub's template.
            let template = crate::engine::chain::Link::new(
                "template",
                resource.target.display_key(),
                "on the hub",
            );
            items.push(match read {
                Some(read) => item.chained(vec![template], &read.pods),
                None => item,
            });
        }
    }
    let failed = items
        .iter()
        .any(|item| matches!(item.sync, StatusKind::Failed | StatusKind::Unreachable));
    let unsettled = items.iter().any(|item| {
        item.sync != StatusKind::NotPlaced
            && (item.sync != StatusKind::InSync
                || matches!(item.health, "Degraded" | "Progressing" | "Unknown"))
    });
    // Each named resource's aggregation, from its hub template (as Karmada starts from it)
    // and the members' objects read above, beside the status the hub wrote.
    let mut aggregated = Vec::new();
    for (row, resource) in view.rows.iter().enumerate() {
        let reads: Vec<&LiveObject> = live
            .iter()
            .filter(|(cell, _)| cell.resource as usize == row)
            .map(|(_, read)| read)
            .collect();
        let Some(template) = reads
            .iter()
            .find_map(|read| read.hub.as_ref()?.template.as_ref())
        else {
            continue;
        };
        let (cells, members) = aggregation_inputs(&items, &resource.target);
        if let Some(result) = interpreters.aggregate_members(template, &members) {
            let hub_status = template.get("status").cloned().unwrap_or(Value::Null);
            let mut item = aggregated_item(&resource.target, &cells, result);
            item.agrees = item.aggregation.as_ref().map(|ours| {
                crate::engine::interpreter::status::same_status(&ours.status, &hub_status)
            });
            item.hub_status = Some(hub_status);
            if let Some(hub) = reads.iter().find_map(|read| read.hub.as_ref()) {
                item.hub_members =
                    interpreters.check_members(&hub.items, &members, Default::default());
            }
            aggregated.push(item);
        }
    }
    let list = StatusList {
        aggregated: &aggregated,
        ..StatusList::of(&items)
    };
    output::write(out, &global.output, &list, || table(&items))?;
    Ok(if failed {
        exit::PARTIAL
    } else if unsettled {
        exit::CHANGES
    } else {
        exit::OK
    })
}

/// Every cell of the selected clusters and resources, the aggregated status of the resources
/// read live (`--resource`), and the exit code `plan` would give (3 a cluster or object
/// failed, 1 something not in sync, 0 all in sync).
async fn cells_of<A: ClusterApi>(
    prepared: Prepared<A>,
    resources: &ResourceScope,
    failures: &BTreeMap<(String, String), LastFailure>,
) -> (Vec<StatusItem>, Vec<AggregatedItem>, u8) {
    let options = Options::default();
    let on_done = progress("status");
    let quiet = |_: usize, _: usize| {};
    // The live objects and their Events only for the resources asked for by name: one
    // more read per cell, and Events are what one looks at for a few, not for a fleet.
    let selected = |resource: &ResourceRef| resources.names(resource);
    let (plan, (drifted, _), live) = futures::join!(
        planning::plan_with(
            &prepared.targets,
            PlanMode::ReadOnly,
            options,
            &prepared.ignores,
            &on_done,
        ),
        drift::drift_with(&prepared.targets, options, &prepared.ignores, &quiet),
        read_live(&prepared.targets, options, &selected),
    );
    let live_of: BTreeMap<(&str, &ResourceRef), &LiveItem> = live
        .iter()
        .map(|item| ((item.cluster.as_str(), &item.resource), item))
        .collect();
    let fleet = &prepared.fleet;
    let drift_of: BTreeMap<(&str, &ResourceRef), _> = drifted
        .iter()
        .map(|item| ((item.cluster.as_str(), &item.resource), &item.fields))
        .collect();
    let is_fleet_resource =
        |resource: &ResourceRef| fleet.resources.iter().any(|row| &row.target == resource);
    let unreachable: Vec<&str> = plan
        .iter()
        .filter(|row| planning::cell_status(row) == CellStatus::Unreachable)
        .map(|row| row.cluster.as_str())
        .collect();
    let mut items: Vec<StatusItem> = Vec::new();
    for row in &plan {
        // An unreachable cluster's cells say so already; its failed lists of prune
        // candidates (`Kind/*` rows) would only repeat it.
        if row.resource.name == "*" && unreachable.contains(&row.cluster.as_str()) {
            continue;
        }
        // The Namespaces the fleet implies come along with their resources; they are cells
        // of their own only when orphaned.
        if row.resource.kind == "Namespace"
            && row.action != PlanAction::Prune
            && !is_fleet_resource(&row.resource)
        {
            continue;
        }
        let status = after_last_write(
            planning::cell_status(row),
            failures.get(&(row.cluster.clone(), row.resource.display_key())),
        );
        let fields = drift_of.get(&(row.cluster.as_str(), &row.resource));
        let (reason, since) = match (&status, fields) {
            (CellStatus::Drifted, Some(fields)) => (
                drift_summary(fields).unwrap_or_default(),
                fields.iter().find_map(|f| f.time.clone()),
            ),
            (CellStatus::Pending, _) => ("not on the cluster: not applied yet".to_string(), None),
            (CellStatus::Failed(message), _) => (
                message.clone(),
                failures
                    .get(&(row.cluster.clone(), row.resource.display_key()))
                    .and_then(|failure| failure.since.clone()),
            ),
            _ => (row.message.clone(), None),
        };
        let cell_health = health(row, &status);
        // In sync but not healthy: why it is not is the reason worth reading, and since
        // when, where the object says (a progress deadline's passing).
        let (reason, since) = match &row.health {
            Some(live) if reason.is_empty() && live.kind != HealthKind::Healthy => {
                (live.reason.clone(), live.since.clone())
            }
            _ => (reason, since),
        };
        let read = live_of.get(&(row.cluster.as_str(), &row.resource));
        let health_rule = match status.kind() {
            StatusKind::Pending
            | StatusKind::Missing
            | StatusKind::Unreachable
            | StatusKind::Failed => None,
            _ => row.health.as_ref().and_then(|health| health.rule.clone()),
        };
        let item = StatusItem {
            cluster: row.cluster.clone(),
            health: cell_health,
            health_rule,
            sync: status.kind(),
            resource: row.resource.clone(),
            reason,
            since,
            live: read.map(|read| read.live.object.clone().unwrap_or(Value::Null)),
            events: read.map(|read| read.live.events.clone()),
            live_error: read.and_then(|read| read.live.error.clone()),
            chain: None,
        };
        items.push(match read {
            Some(read) => {
                let links = match (
                    fleet.resource_index(&row.resource, 0),
                    fleet.cluster_index(&row.cluster),
                ) {
                    (Some(resource), Some(cluster)) => fleet.chain(resource, cluster),
                    _ => Vec::new(),
                };
                item.chained(links, &read.live.pods)
            }
            None => item,
        });
    }
    for target in &prepared.targets {
        let Some(cluster) = fleet.cluster_index(&target.cluster) else {
            continue;
        };
        for (index, resource) in fleet.resources.iter().enumerate() {
            let selected = resources.selects(fleet, index);
            if let (true, Err(reason)) = (selected, fleet.placement(index, cluster)) {
                items.push(StatusItem {
                    cluster: target.cluster.clone(),
                    resource: resource.target.clone(),
                    sync: StatusKind::NotPlaced,
                    health: "None",
                    health_rule: None,
                    reason,
                    since: None,
                    live: None,
                    events: None,
                    live_error: None,
                    chain: None,
                });
            }
        }
    }
    let order = |item: &StatusItem| {
        (
            fleet
                .resources
                .iter()
                .position(|row| row.target == item.resource)
                .unwrap_or(usize::MAX),
            fleet.cluster_index(&item.cluster).unwrap_or(usize::MAX),
        )
    };
    items.sort_by_key(order);
    let unhealthy = items.iter().any(|item| {
        matches!(
            item.health,
            "Degraded" | "Progressing" | "Missing" | "Unknown"
        )
    });
    // A cell Failed by the last apply's record is a failure as much as one plan met.
    let failed = items
        .iter()
        .any(|item| matches!(item.sync, StatusKind::Failed | StatusKind::Unreachable));
    let code = match plan_exit(&plan) {
        _ if failed => exit::PARTIAL,
        exit::OK if unhealthy => exit::CHANGES,
        code => code,
    };
    let aggregated = aggregated_of(fleet, &items);
    (items, aggregated, code)
}

/// A cell's status once the last write flotilla made of it is known: as in the console
/// (`backend::cells`, whose live columns start from the same record), a placed object the
/// cluster does not hold after a refused apply is Failed with the cluster's answer until the
/// next apply; an object the cluster holds is judged by what it holds.
fn after_last_write(status: CellStatus, failure: Option<&LastFailure>) -> CellStatus {
    match (status, failure) {
        (CellStatus::Pending, Some(failure)) => CellStatus::Failed(failure.message.clone()),
        (status, _) => status,
    }
}

/// A cell's health as far as a read tells it: the live object's, assessed as the console
/// does; `Missing` for a placed object the cluster does not hold; `Unknown` where the
/// cluster could not say; `None` for kinds without health.
fn health(row: &PlanItem, status: &CellStatus) -> &'static str {
    match status.kind() {
        StatusKind::Pending | StatusKind::Missing => "Missing",
        StatusKind::Unreachable | StatusKind::Failed => "Unknown",
        _ => row
            .health
            .as_ref()
            .map_or("None", |live| live.kind.as_str()),
    }
}

/// "ProgressDeadlineExceeded: Deployment \"web\" has timed out progressing." for the newest
/// Warning Event of a cell read live; "-" when there is none.
fn latest_warning(item: &StatusItem) -> String {
    item.events
        .iter()
        .flatten()
        .find(|event| event.is_warning())
        .map_or_else(
            || "-".to_string(),
            |event| {
                crate::safe_text::printable(&format!("{}: {}", event.reason, event.message), false)
            },
        )
}

fn table(items: &[StatusItem]) -> Table {
    let listed: Vec<&StatusItem> = items
        .iter()
        .filter(|item| item.sync != StatusKind::NotPlaced)
        .collect();
    // Cells read live (`--resource`) also show their latest Warning Event.
    let with_events = listed.iter().any(|item| item.events.is_some());
    let mut headers = vec![
        "RESOURCE",
        "CLUSTER",
        "SYNC",
        "HEALTH",
        "SINCE",
        "API VERSION",
        "REASON",
    ];
    if with_events {
        headers.push("EVENT");
    }
    let mut table = Table::new(&headers).wide_only(&["SINCE", "API VERSION"]);
    for item in &listed {
        let key = item.resource.display_key();
        let mut cells = vec![
            key.clone(),
            item.cluster.clone(),
            item.sync.as_str().to_string(),
            item.health.to_string(),
            item.since.clone().unwrap_or_else(|| "-".into()),
            item.resource.api_version.clone(),
            item.reason.clone(),
        ];
        if with_events {
            cells.push(latest_warning(item));
        }
        table.row(key, cells);
    }
    table.footer("");
    let mut clusters: Vec<(&str, BTreeMap<StatusKind, usize>)> = Vec::new();
    for item in items {
        let index = match clusters.iter().position(|(name, _)| *name == item.cluster) {
            Some(index) => index,
            None => {
                clusters.push((&item.cluster, BTreeMap::new()));
                clusters.len() - 1
            }
        };
        *clusters[index].1.entry(item.sync).or_default() += 1;
    }
    clusters.sort_by_key(|(name, _)| *name);
    let mut per_cluster = Vec::new();
    for (name, counts) in &clusters {
        let parts: Vec<String> = counts
            .iter()
            .rev()
            .filter(|(kind, _)| **kind != StatusKind::NotPlaced)
            .map(|(kind, count)| format!("{count} {kind}"))
            .collect();
        let why = items
            .iter()
            .find(|i| &i.cluster == name && i.sync == StatusKind::Unreachable)
            .map(|i| format!("  ({})", i.reason))
            .unwrap_or_default();
        // Health beside sync, where any placed cell is less than Healthy.
        let health = Totals::of(items.iter().filter(|i| &i.cluster == name));
        let unwell = health
            .health
            .keys()
            .any(|kind| !matches!(*kind, "Healthy" | "None"));
        let health = if unwell {
            format!("; {}", health.health_line())
        } else {
            String::new()
        };
        per_cluster.push(vec![
            name.to_string(),
            format!("{}{health}{why}", parts.join(", ")),
        ]);
    }
    for line in output::aligned(&per_cluster) {
        table.footer(line);
    }
    let count = |kind: StatusKind| items.iter().filter(|i| i.sync == kind).count();
    let totals: Vec<String> = StatusKind::ALL
        .into_iter()
        .filter(|kind| *kind != StatusKind::NotPlaced && count(*kind) > 0)
        .map(|kind| format!("{} {kind}", count(kind)))
        .collect();
    let health = Totals::of(items.iter()).health_line();
    table.footer(format!(
        "Status: {} on {} clusters;{} {} not placed (-o json lists them).",
        if totals.is_empty() {
            "no cells".to_string()
        } else {
            totals.join(", ")
        },
        clusters.len(),
        if health.is_empty() {
            String::new()
        } else {
            format!(" health: {health};")
        },
        count(StatusKind::NotPlaced)
    ));
    table
}
