//! The live backend's writes to one cluster, all through the fan-out `flotilla apply` uses:
//! applying rows (with the namespaces they need), deleting rows the operator confirmed
//! (through apply's confirmed prune list, so deletion keeps apply's guards and ordering), and
//! taking back chosen drifted fields (the revert `flotilla repair --revert` does, which is a
//! forced apply). Each write is recorded in the audit log and ends with a result per row and a
//! notice. A dry run goes the same way and writes nothing. It must not touch rows, fields or
//! objects the operator did not choose; a read-only backend builds read-only clusters, so
//! nothing here can send a mutating request for it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use kube::Client;

use super::column::ApplyResult;
use crate::backend::audit;
use crate::backend::fanout::apply::{ApplyItem, Outcome, apply_with};
use crate::backend::fanout::cluster_api::conflict_managers;
use crate::backend::fanout::planning::{PlanMode, plan_with};
use crate::backend::fanout::revert::{Chosen, revert_fields};
use crate::backend::fanout::targets::{Ignores, Options, Target, desired};
use crate::backend::kube::api::KubeCluster;
use crate::engine::Fleet;
use crate::messages::PlanItem;
use crate::model::{CellStatus, ResourceRef};

/// A write the console asked of one cluster.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Write {
    /// Apply these rows' desired objects.
    Apply(Vec<u32>),
    /// Delete these rows' objects (confirmed by the operator).
    Delete(Vec<u32>),
    /// Take back these drifted fields (row, JSON pointer) with a forced apply.
    Revert(Vec<(u32, String)>),
}

impl Write {
    /// The rows the write touches, each once.
    pub(super) fn rows(&self) -> Vec<u32> {
        match self {
            Write::Apply(rows) | Write::Delete(rows) => rows.clone(),
            Write::Revert(fields) => fields
                .iter()
                .map(|(row, _)| *row)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
        }
    }
}

/// What a write or dry run on one cluster works with, moved into the task that runs it.
pub(super) struct Job {
    pub fleet: Arc<Fleet>,
    pub readonly: bool,
    pub cluster: u32,
    pub name: String,
    pub client: Client,
    pub options: Options,
}

/// Runs `write` through the fan-out, records it in the audit log, and gives each row's result
/// and a notice for the status bar.
pub(super) async fn run(job: Job, write: Write) -> (Vec<(u32, ApplyResult)>, String) {
    let rows = write.rows();
    let ignores = Ignores::new(&job.fleet.ignores, &job.fleet.clusters)
        .retaining(job.fleet.interpreters.clone());
    let (items, row_of) = match &write {
        Write::Apply(_) => {
            let (target, row_of) = apply_target(&job, &rows);
            let prune = BTreeMap::new();
            (apply(&job, target, &prune, &ignores).await, row_of)
        }
        Write::Delete(_) => {
            let (target, row_of, prune) = delete_target(&job, &rows);
            (apply(&job, target, &prune, &ignores).await, row_of)
        }
        Write::Revert(fields) => {
            let (target, row_of) = apply_target(&job, &rows);
            let chosen: BTreeSet<Chosen> = fields
                .iter()
                .filter_map(|(row, path)| {
                    let resource = job.fleet.resources.get(*row as usize)?;
                    Some((job.name.clone(), resource.target.clone(), path.clone()))
                })
                .collect();
            let items = revert_fields(vec![target], &chosen, &ignores, job.options).await;
            (items, row_of)
        }
    };
    record(&write, &items);
    let mut results = Vec::new();
    let (mut done, mut failed) = (0, 0);
    for item in &items {
        if item.result.is_failure() {
            failed += 1;
        } else if row_of.contains_key(&item.resource.display_key()) {
            done += 1;
        }
        let Some(row) = row_of.get(&item.resource.display_key()).copied() else {
            continue;
        };
        if item.result.is_failure() {
            let status = match item.result {
                Outcome::Conflict => CellStatus::Conflict(
                    conflict_managers(&item.message)
                        .into_iter()
                        .next()
                        .unwrap_or_else(|| "another manager".into()),
                ),
                _ => CellStatus::Failed(item.message.clone()),
            };
            results.push((row, Err((status, item.message.clone()))));
        } else {
            results.push((row, Ok(())));
        }
    }
    // Rows the write had nothing to send for are no longer being written either.
    for row in &rows {
        if !results.iter().any(|(r, _)| r == row) {
            results.push((*row, Ok(())));
        }
    }
    let name = &job.name;
    let notice = match (&write, failed) {
        (Write::Revert(fields), 0) => format!(
            "reverted {} field(s) on {name} ({done} object(s))",
            fields.len()
        ),
        (Write::Revert(_), _) => format!("reverted {done} object(s) on {name}; {failed} failed"),
        (Write::Apply(_), 0) => format!("applied {done} object(s) on {name}"),
        (Write::Delete(_), 0) => format!("deleted {done} object(s) on {name}"),
        (Write::Apply(_), _) => format!("applied {done} object(s) on {name}; {failed} failed"),
        (Write::Delete(_), _) => format!("deleted {done} object(s) on {name}; {failed} failed"),
    };
    (results, notice)
}

/// What the API server says the edited fleet's objects of `rows` would change. Dry runs are
/// PATCH requests with dryRun=All: a read-only backend's clusters refuse them unsent.
pub(super) async fn dry_run(job: Job, rows: &[u32]) -> Vec<PlanItem> {
    let (target, _) = apply_target(&job, rows);
    let ignores = Ignores::new(&job.fleet.ignores, &job.fleet.clusters)
        .retaining(job.fleet.interpreters.clone());
    plan_with(
        std::slice::from_ref(&target),
        PlanMode::DryRun,
        job.options,
        &ignores,
        &|_, _| {},
    )
    .await
}

async fn apply(
    job: &Job,
    target: Target<KubeCluster>,
    prune: &BTreeMap<String, Vec<ResourceRef>>,
    ignores: &Ignores,
) -> Vec<ApplyItem> {
    apply_with(
        std::slice::from_ref(&target),
        false,
        prune,
        job.options,
        ignores,
        &|_, _| {},
    )
    .await
}

/// The audit-log entry of a write: every revert (with its paths), and applies and deletes
/// that sent something.
fn record(write: &Write, items: &[ApplyItem]) {
    let action = match write {
        Write::Apply(_) => "apply",
        Write::Delete(_) => "undo-delete",
        Write::Revert(_) => "console-revert",
    };
    let mut entry = audit::Entry::from_apply(action, items);
    match write {
        Write::Revert(fields) => {
            entry.paths = fields
                .iter()
                .map(|(_, path)| path.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
        }
        Write::Apply(_) | Write::Delete(_) if items.is_empty() => return,
        Write::Apply(_) | Write::Delete(_) => {}
    }
    audit::record_or_warn(&entry);
}

/// A delete target, the row of each object by display key, and apply's prune list.
type DeleteWork = (
    Target<KubeCluster>,
    HashMap<String, u32>,
    BTreeMap<String, Vec<ResourceRef>>,
);

/// A target that writes nothing and deletes the objects of `rows` (through apply's confirmed
/// prune list, so deletion keeps apply's guards and ordering).
fn delete_target(job: &Job, rows: &[u32]) -> DeleteWork {
    let (fleet, name) = (&*job.fleet, job.name.as_str());
    let mut row_of = HashMap::new();
    let mut doomed = Vec::new();
    for row in rows {
        if let Some(federated) = fleet.resources.get(*row as usize) {
            row_of.insert(federated.target.display_key(), *row);
            doomed.push(federated.target.clone());
        }
    }
    let target = Target {
        cluster: name.to_string(),
        api: Ok(KubeCluster::new(job.client.clone(), job.readonly)),
        objects: Vec::new(),
        failed: Vec::new(),
        prune_kinds: Vec::new(),
        prune_namespaces: BTreeSet::new(),
        suspended: Vec::new(),
        refuse_unowned: BTreeSet::new(),
        take_over_unowned: BTreeSet::new(),
    };
    (target, row_of, BTreeMap::from([(name.to_string(), doomed)]))
}

/// The apply target for `rows` on one cluster, with the namespaces they need, and the row of
/// each object by its display key.
fn apply_target(job: &Job, rows: &[u32]) -> (Target<KubeCluster>, HashMap<String, u32>) {
    let (fleet, name) = (&*job.fleet, job.name.as_str());
    let rows = rows.iter().map(|row| *row as usize);
    let desired = desired(fleet, job.cluster as usize, rows, false);
    let row_of = desired
        .rows
        .iter()
        .map(|row| (fleet.resources[*row].target.display_key(), *row as u32))
        .collect();
    let target = Target {
        cluster: name.to_string(),
        api: Ok(KubeCluster::new(job.client.clone(), job.readonly)),
        objects: desired.objects,
        failed: desired.failed,
        prune_kinds: Vec::new(),
        prune_namespaces: BTreeSet::new(),
        suspended: desired.suspended,
        refuse_unowned: desired.refuse_unowned,
        take_over_unowned: desired.take_over_unowned,
    };
    (target, row_of)
}
