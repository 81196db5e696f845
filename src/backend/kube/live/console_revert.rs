//! The live backend's half of the console's revert: route [`Effect::Revert`] fields to their
//! clusters' tasks, and on a cluster take back exactly those fields with a forced apply
//! through [`crate::backend::fanout::revert`], the same code `flotilla repair --revert` uses, with an
//! audit-log entry. It must not touch fields or objects the operator did not choose.

use std::collections::{BTreeMap, BTreeSet};

use tokio::sync::mpsc;

use super::{ClusterTask, Command, Message, apply_target};
use crate::backend::RevertField;
use crate::backend::audit;
use crate::backend::fanout::apply::Outcome;
use crate::backend::fanout::revert::{Chosen, revert_fields};
use crate::backend::fanout::targets::Ignores;
use crate::model::CellStatus;

/// Sends each cluster its fields.
pub(super) fn dispatch(
    fields: Vec<RevertField>,
    clusters: &[Option<mpsc::UnboundedSender<Command>>],
) {
    let mut by_cluster: BTreeMap<u32, Vec<(u32, String)>> = BTreeMap::new();
    for field in fields {
        by_cluster
            .entry(field.cell.cluster)
            .or_default()
            .push((field.cell.resource, field.path));
    }
    for (cluster, fields) in by_cluster {
        match clusters.get(cluster as usize) {
            Some(Some(task)) => {
                let _ = task.send(Command::Revert(fields));
            }
            _ => tracing::warn!(cluster, "revert for a cluster that is not connected"),
        }
    }
}

impl ClusterTask {
    /// Takes back `fields` (row, pointer) on this cluster in a task of its own.
    pub(super) fn revert(&mut self, fields: Vec<(u32, String)>) {
        let rows: Vec<u32> = fields
            .iter()
            .map(|(row, _)| *row)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let Some(client) = self.client.clone() else {
            let reason = "the cluster has not answered yet".to_string();
            let failed = rows
                .iter()
                .map(|row| {
                    (
                        *row,
                        Err((CellStatus::Failed(reason.clone()), reason.clone())),
                    )
                })
                .collect();
            let updates = self.cells.apply_finished(failed);
            self.send_cells(updates);
            return;
        };
        let updates = self.cells.apply_started(&rows);
        self.send_cells(updates);
        let shared = self.shared.clone();
        let fleet = self.cells.fleet().clone();
        let cluster = self.index();
        let name = self.name();
        let messages = self.messages_tx.clone();
        tokio::spawn(async move {
            let Ok(_permit) = shared.apply_permits.acquire().await else {
                return;
            };
            let (target, row_of) =
                apply_target(&fleet, shared.readonly, cluster, &name, client, &rows);
            let chosen: BTreeSet<Chosen> = fields
                .iter()
                .filter_map(|(row, path)| {
                    let resource = fleet.resources.get(*row as usize)?;
                    Some((name.clone(), resource.target.clone(), path.clone()))
                })
                .collect();
            let ignores = Ignores::new(&fleet.ignores, &fleet.clusters);
            let items = revert_fields(vec![target], &chosen, &ignores, shared.options.apply).await;
            let mut entry = audit::Entry::from_apply("console-revert", &items);
            entry.paths = fields
                .iter()
                .map(|(_, path)| path.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            audit::record_or_warn(&entry);
            let mut results = Vec::new();
            let (mut done, mut failed) = (0, 0);
            for item in &items {
                let Some(row) = row_of.get(&item.resource.display_key()).copied() else {
                    continue;
                };
                if item.result == Outcome::Applied {
                    done += 1;
                    results.push((row, Ok(())));
                } else {
                    failed += 1;
                    results.push((
                        row,
                        Err((
                            CellStatus::Failed(item.message.clone()),
                            item.message.clone(),
                        )),
                    ));
                }
            }
            // Rows the revert had nothing to write for are no longer being applied either.
            for row in &rows {
                if !results.iter().any(|(r, _)| r == row) {
                    results.push((*row, Ok(())));
                }
            }
            let notice = if failed == 0 {
                format!(
                    "reverted {} field(s) on {name} ({done} object(s))",
                    fields.len()
                )
            } else {
                format!("reverted {done} object(s) on {name}; {failed} failed")
            };
            let _ = messages.send(Message::Applied(results, notice));
        });
    }
}
