//! The log pane on raw contexts: each read cell's cluster task is asked for its client and
//! the workload's desired object there (a [`LogPart`]), and once every task has answered the
//! streams run as on every backend (`backend::log_pane`), apart from the tasks, so a flood of
//! lines never slows a watch. A cluster not connected is a note in the pane. It only reads,
//! with read-only cluster APIs.

use kube::Client;
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use crate::backend::fanout::cluster_api::ApiError;
use crate::backend::kube::api::KubeCluster;
use crate::backend::log_pane::{PaneCell, spawn};
use crate::engine::{Decision, Fleet};
use crate::messages::{BackendEvent, LogOpen, by_cluster};

/// What one cluster's task is asked for the pane: its part of the cells, answered on `reply`.
pub(super) struct LogPart {
    rows: Vec<u32>,
    reply: oneshot::Sender<(
        Vec<PaneCell<KubeCluster>>,
        mpsc::UnboundedSender<BackendEvent>,
    )>,
}

impl LogPart {
    /// The task's answer: its client (or why there is none) and each row's desired object.
    pub(super) fn answer(
        self,
        client: Option<Client>,
        fleet: &Fleet,
        cluster: u32,
        events: &mpsc::UnboundedSender<BackendEvent>,
    ) {
        let name = fleet
            .clusters
            .get(cluster as usize)
            .map(|spec| spec.name.clone())
            .unwrap_or_default();
        let cells = self
            .rows
            .iter()
            .filter_map(|&row| {
                let target = &fleet.resources.get(row as usize)?.target;
                let desired = match fleet.decide(row as usize, cluster as usize) {
                    Decision::Placed { object, .. } => object,
                    _ => json!({
                        "apiVersion": target.api_version,
                        "kind": target.kind,
                        "metadata": {"name": target.name, "namespace": target.namespace},
                    }),
                };
                Some(PaneCell {
                    cluster: name.clone(),
                    api: client
                        .clone()
                        .map(|client| KubeCluster::new(client, true))
                        .ok_or_else(|| {
                            ApiError::Unreachable(format!(
                                "{name} is not connected (the clusters pane says why)"
                            ))
                        }),
                    desired,
                })
            })
            .collect();
        let _ = self.reply.send((cells, events.clone()));
    }
}

/// Asks each cell's cluster task for its part (`request` makes the task's request of it),
/// then streams them all, in a task of its own.
pub(super) fn open<T>(
    clusters: &[Option<mpsc::UnboundedSender<T>>],
    open: LogOpen,
    request: impl Fn(LogPart) -> T,
) {
    let mut replies = Vec::new();
    let parts = by_cluster(open.cells.iter().map(|cell| (cell.cluster, cell.resource)));
    for (cluster, rows) in parts {
        if let Some(Some(task)) = clusters.get(cluster as usize) {
            let (reply, answer) = oneshot::channel();
            if task.send(request(LogPart { rows, reply })).is_ok() {
                replies.push(answer);
            }
        }
    }
    tokio::spawn(async move {
        let mut cells = Vec::new();
        let mut events = None;
        for answer in replies {
            if let Ok((part, sender)) = answer.await {
                cells.extend(part);
                events = Some(sender);
            }
        }
        if let Some(events) = events {
            spawn(async move { cells }, open, events);
        }
    });
}
