//! The demo backend as a tokio task: probes the simulated clusters with their latency, sends a
//! snapshot, carries out applies and deletes with per-cluster latency, lets drift appear over
//! time, and sends the drift detail of drifted cells after every update. A read-only task has
//! no effect channel, so nothing a caller does can change the simulated clusters. It must not
//! touch real clusters, the terminal or the app's state.

use std::collections::BinaryHeap;
use std::time::Duration;

use tokio::sync::mpsc;

use super::world::{CONNECT_TIMEOUT_MS, SimCore};
use crate::messages::{BackendEvent, CellRef, Effect, by_cluster};
use crate::model::{CellStatus, Health};

/// Runs a [`SimCore`] as a tokio task: probes clusters with their latency, sends a snapshot,
/// applies with per-cluster latency, and lets drift appear over time.
pub fn spawn(
    core: SimCore,
    events: mpsc::UnboundedSender<BackendEvent>,
) -> mpsc::UnboundedSender<Effect> {
    let (effects_tx, effects_rx) = mpsc::unbounded_channel();
    tokio::spawn(run(core, events, Some(effects_rx)));
    effects_tx
}

/// Runs a [`SimCore`] taking effects from a channel made before it existed (the console
/// starts before the simulated fleet is built); `None` makes it one that can only be watched.
pub fn spawn_on(
    core: SimCore,
    events: mpsc::UnboundedSender<BackendEvent>,
    effects: Option<mpsc::UnboundedReceiver<Effect>>,
) {
    tokio::spawn(run(core, events, effects));
}

/// Runs a [`SimCore`] that can only be watched: there is no channel to send it effects, so
/// nothing a caller does can change the simulated clusters.
pub fn spawn_readonly(core: SimCore, events: mpsc::UnboundedSender<BackendEvent>) {
    tokio::spawn(run(core, events, None));
}

/// How often every answering cluster reports that it is alive.
const HEARTBEAT_MS: u64 = 5_000;

/// How long a simulated workload takes to roll out after it was written.
const ROLLOUT_MS: u64 = 1_500;

/// How often the cells the object view follows are read again.
const LIVE_REFRESH_MS: u64 = 2_000;

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Scheduled {
    Heartbeat,
    Probe {
        cluster: usize,
    },
    ApplyDone {
        cluster: usize,
        cells: Vec<CellRef>,
        /// A revert: the fields another manager owns are taken back.
        force: bool,
    },
    DeleteDone {
        cluster: usize,
        cells: Vec<CellRef>,
    },
    /// The controllers of a cluster finished rolling out what an apply wrote: its workloads
    /// report their settled health.
    RolledOut {
        cells: Vec<CellRef>,
    },
    /// Read the followed cells again, unless a newer follow replaced this one.
    LiveRefresh {
        follow: u64,
    },
    /// A cluster answers the pods query for its cells.
    PodsRead {
        cells: Vec<CellRef>,
    },
}

async fn run(
    mut core: SimCore,
    events: mpsc::UnboundedSender<BackendEvent>,
    mut effects: Option<mpsc::UnboundedReceiver<Effect>>,
) {
    let start = tokio::time::Instant::now();
    let elapsed_ms = || start.elapsed().as_millis() as u64;
    let mut queue: BinaryHeap<std::cmp::Reverse<(u64, u64, Scheduled)>> = BinaryHeap::new();
    let mut sequence = 0u64;
    let mut schedule = |queue: &mut BinaryHeap<_>, at: u64, item: Scheduled| {
        sequence += 1;
        queue.push(std::cmp::Reverse((at, sequence, item)));
    };
    if !send(&core, &events, core.snapshot()) {
        return;
    }
    for cluster in 0..core.cluster_count() {
        let at = core.probe_delay_ms(cluster);
        schedule(&mut queue, at, Scheduled::Probe { cluster });
    }
    schedule(&mut queue, HEARTBEAT_MS, Scheduled::Heartbeat);
    // The cells the object view follows, and which follow that is.
    let mut followed: Vec<CellRef> = Vec::new();
    let mut follow = 0u64;
    loop {
        let next_at = queue
            .peek()
            .map_or(u64::MAX, |item| item.0.0)
            .min(core.next_event_ms());
        let wait = Duration::from_millis(next_at.saturating_sub(elapsed_ms()).min(3_600_000));
        let next_effect = async {
            match effects.as_mut() {
                Some(receiver) => receiver.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            effect = next_effect => {
                let (cells, force) = match effect {
                    None => return,
                    Some(Effect::Apply { cells }) => (cells, false),
                    Some(Effect::OpenObjectView { cells }) => {
                        follow += 1;
                        followed = cells;
                        if !send_live(&core, &events, &followed, elapsed_ms()) {
                            return;
                        }
                        schedule(&mut queue, elapsed_ms() + LIVE_REFRESH_MS, Scheduled::LiveRefresh { follow });
                        continue;
                    }
                    Some(Effect::CloseObjectView) => {
                        follow += 1;
                        followed.clear();
                        continue;
                    }
                    Some(Effect::ReadPods { cells }) => {
                        for (cluster, cells) in per_cluster(cells) {
                            let delay = core.latency_ms(cluster);
                            schedule(&mut queue, elapsed_ms() + delay, Scheduled::PodsRead { cells });
                        }
                        continue;
                    }
                    Some(Effect::OpenLogs(open)) => {
                        super::log_stream::open(&core, &events, open);
                        continue;
                    }
                    Some(Effect::UseFleet(fleet)) => {
                        core.set_fleet(fleet.0);
                        if !send(&core, &events, core.snapshot()) {
                            return;
                        }
                        continue;
                    }
                    Some(Effect::Delete { cells }) => {
                        for (cluster, cells) in per_cluster(cells) {
                            let delay = core.latency_ms(cluster);
                            schedule(&mut queue, elapsed_ms() + delay, Scheduled::DeleteDone { cluster, cells });
                        }
                        continue;
                    }
                    // Simulated clusters have no API server: the editor shows its offline
                    // render diff for them.
                    Some(Effect::DryRun { .. }) => continue,
                    Some(Effect::WritePlacement { name, .. }) => {
                        tracing::warn!("Placement {name} is a hub write; the simulator has no hub");
                        continue;
                    }
                    Some(Effect::HubApply { title, .. }) => {
                        tracing::warn!("{title} is a hub write; the simulator has no hub");
                        continue;
                    }
                    // A simulated cell drifts in one field at most: reverting it is applying it.
                    Some(Effect::Revert { fields }) => {
                        let mut cells: Vec<CellRef> = fields.into_iter().map(|field| field.cell).collect();
                        cells.sort();
                        cells.dedup();
                        (cells, true)
                    }
                };
                for (cluster, cells) in per_cluster(cells) {
                    let delay = match core.cluster_status(cluster).health {
                        Health::Unreachable => CONNECT_TIMEOUT_MS,
                        _ => core.latency_ms(cluster) * (1 + cells.len() as u64 / 32),
                    };
                    schedule(&mut queue, elapsed_ms() + delay, Scheduled::ApplyDone { cluster, cells, force });
                }
            }
            () = tokio::time::sleep(wait) => {
                let now = elapsed_ms();
                while queue.peek().is_some_and(|item| item.0.0 <= now) {
                    let Some(std::cmp::Reverse((_, _, item))) = queue.pop() else { break };
                    let event = match item {
                        Scheduled::Heartbeat => {
                            schedule(&mut queue, now + HEARTBEAT_MS, Scheduled::Heartbeat);
                            BackendEvent::Heartbeat { clusters: core.answering_clusters() }
                        }
                        Scheduled::Probe { cluster } => BackendEvent::Cluster {
                            cluster: cluster as u32,
                            status: core.cluster_status(cluster),
                        },
                        Scheduled::ApplyDone { cluster, cells, force } => {
                            // Written: in sync at once, Healthy once the rollout is done.
                            let updates = core.apply(cluster, &cells, force);
                            let written: Vec<CellRef> = updates
                                .iter()
                                .filter(|update| update.status == CellStatus::InSync)
                                .map(|update| update.cell)
                                .collect();
                            if !send(&core, &events, BackendEvent::Cells(updates)) {
                                return;
                            }
                            let rolling = core.rolling_out(&written);
                            if rolling.is_empty() {
                                continue;
                            }
                            schedule(&mut queue, now + ROLLOUT_MS, Scheduled::RolledOut { cells: written });
                            BackendEvent::Health(rolling)
                        }
                        Scheduled::RolledOut { cells } => BackendEvent::Health(core.health_of(&cells)),
                        Scheduled::PodsRead { cells } => BackendEvent::Pods(
                            cells
                                .into_iter()
                                .map(|cell| (cell, super::object_view::cell_pods(&core, cell)))
                                .collect(),
                        ),
                        Scheduled::DeleteDone { cluster, cells } => BackendEvent::Cells(core.delete(cluster, &cells)),
                        Scheduled::LiveRefresh { follow: which } => {
                            if which != follow || followed.is_empty() {
                                continue;
                            }
                            if !send_live(&core, &events, &followed, now) {
                                return;
                            }
                            schedule(&mut queue, now + LIVE_REFRESH_MS, Scheduled::LiveRefresh { follow });
                            continue;
                        }
                    };
                    if !send(&core, &events, event) {
                        return;
                    }
                }
                let drifted = core.advance(now);
                if !drifted.is_empty() && !send(&core, &events, BackendEvent::Cells(drifted)) {
                    return;
                }
            }
        }
    }
}

/// What each followed cell's cluster holds for it. False when the app has gone.
fn send_live(
    core: &SimCore,
    events: &mpsc::UnboundedSender<BackendEvent>,
    cells: &[CellRef],
    now_ms: u64,
) -> bool {
    cells.iter().all(|cell| {
        let live = Box::new(super::object_view::live_object(core, *cell, now_ms));
        events
            .send(BackendEvent::LiveObject { cell: *cell, live })
            .is_ok()
    })
}

/// The cells of each cluster, by cluster index.
fn per_cluster(cells: Vec<CellRef>) -> impl Iterator<Item = (usize, Vec<CellRef>)> {
    by_cluster(cells.into_iter().map(|cell| (cell.cluster, cell)))
        .into_iter()
        .map(|(cluster, cells)| (cluster as usize, cells))
}

/// Sends an event and, after cell updates or a snapshot, the drift detail of the drifted
/// cells. False when the app has gone.
fn send(core: &SimCore, events: &mpsc::UnboundedSender<BackendEvent>, event: BackendEvent) -> bool {
    let drift = match &event {
        BackendEvent::Cells(updates) => core.drift_events(updates),
        BackendEvent::Snapshot { .. } => {
            let mut follow = core.all_drift_events();
            follow.extend(core.health_events());
            follow
        }
        _ => Vec::new(),
    };
    events.send(event).is_ok() && drift.into_iter().all(|event| events.send(event).is_ok())
}
