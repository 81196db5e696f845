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
use crate::messages::{BackendEvent, LogItem, LogOpen, by_cluster};

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
/// then streams them all, in a task of its own. A cluster without a task (`unreached`: its
/// name, and why it has none) or whose task has ended is a note in the pane, not left out.
pub(super) fn open<T>(
    clusters: &[Option<mpsc::UnboundedSender<T>>],
    unreached: &[(String, Option<String>)],
    events: &mpsc::UnboundedSender<BackendEvent>,
    open: LogOpen,
    request: impl Fn(LogPart) -> T,
) {
    let mut replies = Vec::new();
    let mut notes = Vec::new();
    let parts = by_cluster(open.cells.iter().map(|cell| (cell.cluster, cell.resource)));
    for (cluster, rows) in parts {
        let asked = clusters
            .get(cluster as usize)
            .and_then(Option::as_ref)
            .and_then(|task| {
                let (reply, answer) = oneshot::channel();
                task.send(request(LogPart { rows, reply })).ok()?;
                Some(answer)
            });
        match asked {
            Some(answer) => replies.push(answer),
            None => notes.push(not_read(unreached.get(cluster as usize))),
        }
    }
    if !notes.is_empty() {
        let _ = events.send(BackendEvent::Logs {
            stream: open.stream,
            items: notes,
            skipped: 0,
        });
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

/// The pane's note for a cluster whose logs cannot be asked for: `unreached` is its name and
/// why it has no task (none: its task has ended).
fn not_read(unreached: Option<&(String, Option<String>)>) -> LogItem {
    let (cluster, why) = unreached.cloned().unwrap_or_default();
    LogItem::Note {
        text: match why {
            Some(why) => format!("not connected: {why}"),
            None => "not connected (its connection has ended)".to_string(),
        },
        cluster,
        failed: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{CellRef, LogLease};

    #[tokio::test]
    async fn a_cluster_without_a_task_is_a_note_in_the_pane_not_left_out() {
        let (events, mut heard) = mpsc::unbounded_channel();
        let (task, _asked) = mpsc::unbounded_channel::<LogPart>();
        let clusters = vec![None, Some(task)];
        let unreached = vec![
            (
                "eu-1".to_string(),
                Some("context eu-1 has no user".to_string()),
            ),
            ("us-1".to_string(), None),
        ];
        let cells = [0, 1]
            .map(|cluster| CellRef {
                resource: 0,
                cluster,
            })
            .to_vec();
        let (_lease, watch) = LogLease::new();
        let opened = LogOpen {
            stream: 7,
            cells,
            previous: false,
            tail: 10,
            watch,
        };
        open(&clusters, &unreached, &events, opened, |part| part);
        let Some(BackendEvent::Logs { stream, items, .. }) = heard.recv().await else {
            panic!("the pane hears of eu-1");
        };
        assert_eq!(stream, 7);
        assert_eq!(
            items,
            [LogItem::Note {
                cluster: "eu-1".into(),
                text: "not connected: context eu-1 has no user".into(),
                failed: true,
            }],
            "us-1's task was asked; eu-1, which has none, is named with why"
        );
    }
}
