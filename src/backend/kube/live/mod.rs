//! The live raw-contexts backend behind the console and the wall: one task per cluster that
//! connects, probes, discovers which of the fleet's kinds the cluster serves and keeps a watch
//! cache of the objects flotilla manages there (selected by the ownership label), so cell
//! statuses come from events, not polling. Effects are routed to the clusters' tasks; writes go
//! through the same fan-out as `flotilla apply`. A read-only instance has no effect channel and
//! builds read-only clusters, so no code path sends a mutating request. A slow or dead cluster
//! holds up only its own task. It must not log credentials and never writes a kubeconfig.
//!
//! # Files, from the bottom up
//! - [`column`]: one cluster's column of cells, from the fleet's intent and the watch cache.
//! - [`watcher`]: discovery and watches.
//! - [`write`]: applies, deletes, reverts and dry runs through the fan-out.
//! - [`task`]: one cluster's task.
//! - [`log_stream`]: the log pane's streams, from the tasks' clients.

pub mod column;
mod log_stream;
mod task;
mod watcher;
mod write;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use kube::config::Kubeconfig;
use tokio::sync::{Semaphore, mpsc, watch};

pub use task::LiveOptions;

use crate::backend::cells::Reach;
use crate::backend::console_loop::{self, ConsoleBackend};
use crate::engine::Fleet;
use crate::messages::{BackendEvent, CellRef, Effect, by_cluster};
use crate::model::{Health, StatusKind};
use column::{ClusterCells, FleetIndex};
use task::{ClusterTask, FirstProbes, Shared, ToCluster, status};
use write::Write;

/// What the live backend needs: the fleet, how to reach its clusters, and which to connect.
pub struct LiveFleet {
    pub fleet: Arc<Fleet>,
    /// The fleet directory's texts, for the console's editors.
    pub files: Vec<crate::engine::SourceFile>,
    pub kubeconfig: Kubeconfig,
    /// Per fleet cluster: `None` to connect, or why it is not connected.
    pub skip: Vec<Option<String>>,
    /// What the ClusterProfiles of `--inventory` report, laid over each probe.
    pub profiles: Option<Arc<crate::backend::kube::profile_inventory::ProfileInventory>>,
    pub options: LiveOptions,
    /// The failures of the last applies made before this session, per (cluster,
    /// `Kind/namespace/name`), as the audit log records them (`audit::last_failures`).
    pub failures: std::collections::BTreeMap<(String, String), crate::backend::audit::LastFailure>,
}

/// Starts the backend; the returned sender takes apply effects.
pub fn spawn(
    live: LiveFleet,
    events: mpsc::UnboundedSender<BackendEvent>,
) -> mpsc::UnboundedSender<Effect> {
    let (effects_tx, effects_rx) = mpsc::unbounded_channel();
    spawn_on(live, events, effects_rx, false);
    effects_tx
}

/// Starts the backend on a channel made before the fleet was loaded (the console's progressive
/// start); `readonly` clusters refuse to send a mutating request, and `effects` is then the
/// receiving end of [`crate::backend::read_only::reads_only`].
pub fn spawn_on(
    live: LiveFleet,
    events: mpsc::UnboundedSender<BackendEvent>,
    effects: mpsc::UnboundedReceiver<Effect>,
    readonly: bool,
) {
    let unreached = (0..live.fleet.clusters.len())
        .map(|cluster| {
            let name = live.fleet.clusters[cluster].name.clone();
            (name, live.skip.get(cluster).cloned().flatten())
        })
        .collect();
    let clusters = start(live, events.clone(), readonly);
    tokio::spawn(console_loop::run(
        Dispatch {
            clusters,
            unreached,
            events: events.clone(),
        },
        Some(effects),
        events,
    ));
}

/// Starts a backend that can only watch: its channel takes only the object view's reads, and
/// its clusters refuse to send a mutating request.
pub fn spawn_readonly(
    live: LiveFleet,
    events: mpsc::UnboundedSender<BackendEvent>,
) -> mpsc::UnboundedSender<Effect> {
    let (reads, receiver) = crate::backend::read_only::reads_only();
    spawn_on(live, events, receiver, true);
    reads
}

/// Sends the first snapshot and starts one task per connected cluster.
fn start(
    live: LiveFleet,
    events: mpsc::UnboundedSender<BackendEvent>,
    readonly: bool,
) -> Vec<Option<mpsc::UnboundedSender<ToCluster>>> {
    let index = Arc::new(FleetIndex::new(&live.fleet));
    // A cell whose last apply was refused before this session starts Failed, as `status` says.
    let rows: HashMap<String, u32> = live
        .fleet
        .resources
        .iter()
        .enumerate()
        .map(|(row, resource)| (resource.target.display_key(), row as u32))
        .collect();
    let mut failed: Vec<Vec<(u32, String)>> = vec![Vec::new(); live.fleet.clusters.len()];
    for ((cluster, object), failure) in &live.failures {
        if let (Some(column), Some(row)) = (live.fleet.cluster_index(cluster), rows.get(object)) {
            failed[column].push((*row, failure.message.clone()));
        }
    }
    let columns: Vec<ClusterCells> = (0..live.fleet.clusters.len())
        .zip(failed)
        .map(|(cluster, failed)| {
            let reach = match live.skip.get(cluster).cloned().flatten() {
                Some(reason) => Reach::Down(reason),
                None => Reach::Connecting,
            };
            ClusterCells::new(live.fleet.clone(), index.clone(), cluster as u32, reach)
                .with_failures(failed)
        })
        .collect();
    let _ = events.send(snapshot(&columns, live.fleet.resources.len()));
    let connecting = columns
        .iter()
        .filter(|cells| !matches!(cells.reach(), Reach::Down(_)))
        .count();
    let shared = Arc::new(Shared {
        kubeconfig: live.kubeconfig,
        events,
        permits: Semaphore::new(live.options.concurrency.max(1)),
        // A fleet no bigger than the probes sent at once has no probe queued behind another
        // cluster's follow-ups, so it never waits.
        first_probes: watch::Sender::new(FirstProbes {
            unsent: connecting,
            unreported: if connecting > live.options.concurrency {
                connecting
            } else {
                0
            },
        }),
        apply_permits: Semaphore::new(live.options.apply.concurrency.max(1)),
        options: live.options,
        readonly,
        profiles: live.profiles,
    });
    columns
        .into_iter()
        .enumerate()
        .map(|(cluster, cells)| {
            if let Reach::Down(reason) = cells.reach().clone() {
                let _ = shared.events.send(BackendEvent::Cluster {
                    cluster: cluster as u32,
                    status: status(Health::Unknown, reason),
                });
                return None;
            }
            let (commands, receiver) = mpsc::unbounded_channel();
            tokio::spawn(ClusterTask::new(shared.clone(), cells).run(Some(receiver)));
            Some(commands)
        })
        .collect()
}

/// The whole matrix from every cluster's initial column.
fn snapshot(columns: &[ClusterCells], resources: usize) -> BackendEvent {
    let clusters = columns.len();
    let mut kinds = vec![StatusKind::NotPlaced; resources * clusters];
    let mut details = Vec::new();
    for (cluster, column) in columns.iter().enumerate() {
        let (column_kinds, column_details) = column.initial();
        for (resource, kind) in column_kinds.iter().enumerate() {
            kinds[resource * clusters + cluster] = *kind;
        }
        details.extend(column_details);
    }
    BackendEvent::Snapshot { kinds, details }
}

/// Routes effects to the clusters' tasks, each its own part; it has no happenings of its own
/// (each cluster's task sends its own).
struct Dispatch {
    clusters: Vec<Option<mpsc::UnboundedSender<ToCluster>>>,
    /// Each cluster's name, and why it has no task where it has none (its context could not
    /// be used): what the log pane says of a cluster it cannot read.
    unreached: Vec<(String, Option<String>)>,
    events: mpsc::UnboundedSender<BackendEvent>,
}

impl ConsoleBackend for Dispatch {
    type Wake = std::convert::Infallible;

    async fn wait(&mut self) -> Option<Self::Wake> {
        std::future::pending().await
    }

    async fn woken(&mut self, wake: Self::Wake) -> bool {
        match wake {}
    }

    async fn effect(&mut self, effect: Effect) -> bool {
        let clusters = &self.clusters;
        let rows =
            |cells: Vec<CellRef>| by_cluster(cells.into_iter().map(|c| (c.cluster, c.resource)));
        match effect {
            Effect::Apply { cells } => route(clusters, rows(cells), Some("apply"), |rows| {
                ToCluster::Write(Write::Apply(rows))
            }),
            Effect::Delete { cells } => route(clusters, rows(cells), None, |rows| {
                ToCluster::Write(Write::Delete(rows))
            }),
            Effect::DryRun {
                fleet,
                cells,
                revision,
            } => route(clusters, rows(cells), None, |rows| ToCluster::DryRun {
                fleet: fleet.0.clone(),
                rows,
                revision,
            }),
            Effect::Revert { fields } => {
                let fields = by_cluster(
                    fields
                        .into_iter()
                        .map(|f| (f.cell.cluster, (f.cell.resource, f.path))),
                );
                route(clusters, fields, Some("revert"), |fields| {
                    ToCluster::Write(Write::Revert(fields))
                })
            }
            Effect::OpenObjectView { cells } => {
                let mut rows = rows(cells);
                for (cluster, task) in clusters.iter().enumerate() {
                    if let Some(task) = task {
                        let followed = rows.remove(&(cluster as u32)).unwrap_or_default();
                        let _ = task.send(ToCluster::Follow(followed));
                    }
                }
            }
            Effect::ReadPods { cells } => route(clusters, rows(cells), None, ToCluster::ReadPods),
            Effect::OpenLogs(open) => log_stream::open(
                clusters,
                &self.unreached,
                &self.events,
                open,
                ToCluster::Logs,
            ),
            Effect::CloseObjectView => {
                for task in clusters.iter().flatten() {
                    let _ = task.send(ToCluster::Follow(Vec::new()));
                }
            }
            Effect::UseFleet(fleet) => {
                for task in clusters.iter().flatten() {
                    let _ = task.send(ToCluster::UseFleet(fleet.0.clone()));
                }
            }
            Effect::HubApply { title, .. } => {
                tracing::warn!("{title} is a hub write; these clusters have no hub")
            }
            Effect::WritePlacement { name, .. } => {
                tracing::warn!("Placement {name} is a hub write; these clusters have no hub")
            }
        }
        true
    }
}

/// Sends each cluster's task its part, made into a request; `warn` names the effect when a
/// part for a cluster that is not connected deserves a warning.
fn route<T>(
    clusters: &[Option<mpsc::UnboundedSender<ToCluster>>],
    parts: BTreeMap<u32, Vec<T>>,
    warn: Option<&str>,
    request: impl Fn(Vec<T>) -> ToCluster,
) {
    for (cluster, part) in parts {
        match (clusters.get(cluster as usize), warn) {
            (Some(Some(task)), _) => {
                let _ = task.send(request(part));
            }
            (_, Some(effect)) => {
                tracing::warn!(cluster, "{effect} for a cluster that is not connected")
            }
            (_, None) => {}
        }
    }
}
