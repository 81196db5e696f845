//! The console's backend on a hub: reads the hub every few seconds and reports what changed —
//! cluster health as the hub reports it, and one cell per (row, cluster) as the hub's reader
//! words it. The rows are the ones that existed at start. It only reads: there is no effect channel, so no
//! code path can write to the hub.

use std::time::Duration;

use tokio::sync::mpsc;

use super::{Hub, HubRow, HubView};
use crate::backend::{BackendEvent, CellRef, CellUpdate};
use crate::model::{ClusterStatus, Health, StatusKind};

/// Time between reads of the hub.
pub const POLL_EVERY: Duration = Duration::from_secs(5);

/// The first matrix of a hub view.
pub fn snapshot(view: &HubView) -> BackendEvent {
    let clusters = view.clusters.len();
    let mut kinds = vec![StatusKind::NotPlaced; view.rows.len() * clusters];
    let mut details = Vec::new();
    for row in 0..view.rows.len() {
        for column in 0..clusters {
            let (status, message) = view.cell(row, column);
            kinds[row * clusters + column] = status.kind();
            if status.detail().is_some() || message.is_some() {
                details.push(CellUpdate {
                    cell: CellRef {
                        resource: row as u32,
                        cluster: column as u32,
                    },
                    status,
                    message,
                });
            }
        }
    }
    BackendEvent::Snapshot { kinds, details }
}

/// Starts polling; `first` is the view the console's rows and columns were built from.
pub fn spawn_readonly(hub: Hub, first: HubView, events: mpsc::UnboundedSender<BackendEvent>) {
    tokio::spawn(run(hub, first, events));
}

async fn run(hub: Hub, first: HubView, events: mpsc::UnboundedSender<BackendEvent>) {
    let mut shown = first;
    let _ = events.send(snapshot(&shown));
    for (index, (_, status)) in shown.clusters.iter().enumerate() {
        let _ = events.send(BackendEvent::Cluster {
            cluster: index as u32,
            status: status.clone(),
        });
    }
    let mut ticker = tokio::time::interval(POLL_EVERY);
    ticker.tick().await;
    loop {
        ticker.tick().await;
        if events.is_closed() {
            return;
        }
        let next = match hub.read().await {
            Ok(view) => aligned(&shown, view),
            Err(err) => unreachable_hub(&shown, &err.message),
        };
        for event in changes(&shown, &next) {
            if events.send(event).is_err() {
                return;
            }
        }
        shown = next;
    }
}

/// `view` in the rows and columns of `shown` (rows and clusters that appeared since start are
/// left out; rows that went away report as not placed).
fn aligned(shown: &HubView, view: HubView) -> HubView {
    let clusters = shown
        .clusters
        .iter()
        .map(|(spec, _)| {
            view.clusters
                .iter()
                .find(|(other, _)| other.name == spec.name)
                .cloned()
                .unwrap_or_else(|| {
                    (
                        spec.clone(),
                        ClusterStatus {
                            health: Health::Unknown,
                            message: "no longer a member of the hub".into(),
                            ..ClusterStatus::default()
                        },
                    )
                })
        })
        .collect();
    let rows = shown
        .rows
        .iter()
        .map(|row| {
            view.rows
                .iter()
                .find(|other| other.target == row.target)
                .cloned()
                .unwrap_or_else(|| HubRow {
                    cells: Default::default(),
                    not_placed: format!("{} is gone from the hub", row.source),
                    ..row.clone()
                })
        })
        .collect();
    HubView {
        kind: view.kind,
        clusters,
        rows,
    }
}

/// The hub did not answer: every cluster's health is unknown, with the reason.
fn unreachable_hub(shown: &HubView, reason: &str) -> HubView {
    let mut view = shown.clone();
    for (_, status) in &mut view.clusters {
        *status = ClusterStatus {
            health: Health::Unknown,
            message: format!("the hub did not answer: {reason}"),
            ..ClusterStatus::default()
        };
    }
    view
}

/// What differs between two views of the same shape, as backend events (a heartbeat for the
/// clusters whose health was read even when nothing changed).
pub fn changes(before: &HubView, after: &HubView) -> Vec<BackendEvent> {
    let mut events = Vec::new();
    let mut alive = Vec::new();
    for (index, ((_, old), (_, new))) in before.clusters.iter().zip(&after.clusters).enumerate() {
        if old != new {
            events.push(BackendEvent::Cluster {
                cluster: index as u32,
                status: new.clone(),
            });
        } else if new.health != Health::Unknown {
            alive.push(index as u32);
        }
    }
    let mut cells = Vec::new();
    for row in 0..after.rows.len() {
        for column in 0..after.clusters.len() {
            let old = before.cell(row, column);
            let new = after.cell(row, column);
            if old != new {
                cells.push(CellUpdate {
                    cell: CellRef {
                        resource: row as u32,
                        cluster: column as u32,
                    },
                    status: new.0,
                    message: new.1,
                });
            }
        }
    }
    if !cells.is_empty() {
        events.push(BackendEvent::Cells(cells));
    }
    if !alive.is_empty() {
        events.push(BackendEvent::Heartbeat { clusters: alive });
    }
    events
}
