//! The demo backend as a tokio task, driven by the console's backend loop
//! (`backend::console_loop`): probes the simulated clusters with their latency, sends a
//! snapshot, carries out applies and deletes with per-cluster latency, lets drift appear over
//! time, and sends the drift detail of drifted cells after every update. A read-only task has
//! no effect channel, so nothing a caller does can change the simulated clusters. It must not
//! touch real clusters, the terminal or the app's state.

use std::collections::{BinaryHeap, HashMap};
use std::time::Duration;

use tokio::sync::mpsc;

use super::world::{CONNECT_TIMEOUT_MS, SimCore};
use crate::backend::console_loop::{self, ConsoleBackend};
use crate::messages::{BackendEvent, CellRef, Effect, by_cluster};
use crate::model::{CellHealth, CellStatus, Health};

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
    core: SimCore,
    events: mpsc::UnboundedSender<BackendEvent>,
    effects: Option<mpsc::UnboundedReceiver<Effect>>,
) {
    let mut sim = Sim {
        core,
        events: events.clone(),
        start: tokio::time::Instant::now(),
        queue: BinaryHeap::new(),
        sequence: 0,
        followed: Vec::new(),
        follow: 0,
        settled: HashMap::new(),
    };
    if !send(&sim.core, &events, sim.core.snapshot()) {
        return;
    }
    for cluster in 0..sim.core.cluster_count() {
        let at = sim.core.probe_delay_ms(cluster);
        sim.schedule(at, Scheduled::Probe { cluster });
    }
    sim.schedule(HEARTBEAT_MS, Scheduled::Heartbeat);
    console_loop::run(sim, effects, events).await;
}

/// The simulated clusters and what is scheduled to happen on them.
struct Sim {
    core: SimCore,
    events: mpsc::UnboundedSender<BackendEvent>,
    start: tokio::time::Instant,
    /// What happens when, in order: (at, sequence, what).
    queue: BinaryHeap<std::cmp::Reverse<(u64, u64, Scheduled)>>,
    sequence: u64,
    /// The cells the object view follows.
    followed: Vec<CellRef>,
    /// Which follow that is.
    follow: u64,
    /// The settled health of each (resource, variant), read once for every cluster.
    settled: HashMap<(usize, (i32, u32)), Option<CellHealth>>,
}

impl Sim {
    fn elapsed_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn schedule(&mut self, at: u64, item: Scheduled) {
        self.sequence += 1;
        self.queue
            .push(std::cmp::Reverse((at, self.sequence, item)));
    }

    /// Schedules each cluster's part of `cells` to be written after its latency.
    fn write(&mut self, cells: Vec<CellRef>, force: bool) {
        let now = self.elapsed_ms();
        for (cluster, cells) in per_cluster(cells) {
            let delay = match self.core.cluster_status(cluster).health {
                Health::Unreachable => CONNECT_TIMEOUT_MS,
                _ => self.core.latency_ms(cluster) * (1 + cells.len() as u64 / 32),
            };
            self.schedule(
                now + delay,
                Scheduled::ApplyDone {
                    cluster,
                    cells,
                    force,
                },
            );
        }
    }

    /// What a scheduled item sends, scheduling what follows from it; `None`: nothing (yet).
    /// `Gone` when the app has gone.
    fn happen(&mut self, item: Scheduled, now: u64) -> Result<Option<BackendEvent>, Gone> {
        Ok(Some(match item {
            Scheduled::Heartbeat => {
                self.schedule(now + HEARTBEAT_MS, Scheduled::Heartbeat);
                BackendEvent::Heartbeat {
                    clusters: self.core.answering_clusters(),
                }
            }
            Scheduled::Probe { cluster } => {
                let mut answer = self.core.probe(cluster, &mut self.settled);
                let last = answer.pop();
                for event in answer {
                    if !send(&self.core, &self.events, event) {
                        return Err(Gone);
                    }
                }
                return Ok(last);
            }
            Scheduled::ApplyDone {
                cluster,
                cells,
                force,
            } => {
                // Written: in sync at once, Healthy once the rollout is done.
                let updates = self.core.apply(cluster, &cells, force);
                let written: Vec<CellRef> = updates
                    .iter()
                    .filter(|update| update.status == CellStatus::InSync)
                    .map(|update| update.cell)
                    .collect();
                if !send(&self.core, &self.events, BackendEvent::Cells(updates)) {
                    return Err(Gone);
                }
                let rolling = self.core.rolling_out(&written);
                if rolling.is_empty() {
                    return Ok(None);
                }
                self.schedule(now + ROLLOUT_MS, Scheduled::RolledOut { cells: written });
                BackendEvent::Health(rolling)
            }
            Scheduled::RolledOut { cells } => BackendEvent::Health(self.core.health_of(&cells)),
            Scheduled::PodsRead { cells } => BackendEvent::Pods(
                cells
                    .into_iter()
                    .map(|cell| (cell, super::object_view::cell_pods(&self.core, cell)))
                    .collect(),
            ),
            Scheduled::DeleteDone { cluster, cells } => {
                BackendEvent::Cells(self.core.delete(cluster, &cells))
            }
            Scheduled::LiveRefresh { follow } => {
                if follow != self.follow || self.followed.is_empty() {
                    return Ok(None);
                }
                if !send_live(&self.core, &self.events, &self.followed, now) {
                    return Err(Gone);
                }
                self.schedule(now + LIVE_REFRESH_MS, Scheduled::LiveRefresh { follow });
                return Ok(None);
            }
        }))
    }
}

/// The console has gone: nobody hears what the backend sends.
struct Gone;

impl ConsoleBackend for Sim {
    type Wake = ();

    /// Until the next scheduled item or the world's next change is due.
    async fn wait(&mut self) -> Option<()> {
        let next_at = self
            .queue
            .peek()
            .map_or(u64::MAX, |item| item.0.0)
            .min(self.core.next_event_ms());
        let wait = next_at.saturating_sub(self.elapsed_ms()).min(3_600_000);
        tokio::time::sleep(Duration::from_millis(wait)).await;
        Some(())
    }

    async fn woken(&mut self, (): ()) -> bool {
        let now = self.elapsed_ms();
        while self.queue.peek().is_some_and(|item| item.0.0 <= now) {
            let Some(std::cmp::Reverse((_, _, item))) = self.queue.pop() else {
                break;
            };
            match self.happen(item, now) {
                Err(Gone) => return false,
                Ok(None) => {}
                Ok(Some(event)) => {
                    if !send(&self.core, &self.events, event) {
                        return false;
                    }
                }
            }
        }
        let drifted = self.core.advance(now);
        drifted.is_empty() || send(&self.core, &self.events, BackendEvent::Cells(drifted))
    }

    async fn effect(&mut self, effect: Effect) -> bool {
        let now = self.elapsed_ms();
        match effect {
            Effect::Apply { cells } => self.write(cells, false),
            // A simulated cell drifts in one field at most: reverting it is applying it.
            Effect::Revert { fields } => {
                let mut cells: Vec<CellRef> = fields.into_iter().map(|field| field.cell).collect();
                cells.sort();
                cells.dedup();
                self.write(cells, true);
            }
            Effect::OpenObjectView { cells } => {
                self.follow += 1;
                self.followed = cells;
                if !send_live(&self.core, &self.events, &self.followed, now) {
                    return false;
                }
                let follow = self.follow;
                self.schedule(now + LIVE_REFRESH_MS, Scheduled::LiveRefresh { follow });
            }
            Effect::CloseObjectView => {
                self.follow += 1;
                self.followed.clear();
            }
            Effect::ReadPods { cells } => {
                for (cluster, cells) in per_cluster(cells) {
                    let delay = self.core.latency_ms(cluster);
                    self.schedule(now + delay, Scheduled::PodsRead { cells });
                }
            }
            Effect::OpenLogs(open) => {
                super::log_stream::open(&self.core, &self.events, open);
            }
            Effect::UseFleet(fleet) => {
                self.settled.clear();
                self.core.set_fleet(fleet.0);
                return send(&self.core, &self.events, self.core.snapshot());
            }
            Effect::Delete { cells } => {
                for (cluster, cells) in per_cluster(cells) {
                    let delay = self.core.latency_ms(cluster);
                    self.schedule(now + delay, Scheduled::DeleteDone { cluster, cells });
                }
            }
            // Simulated clusters have no API server: the editor shows its offline render diff
            // for them.
            Effect::DryRun { .. } => {}
            Effect::WritePlacement { name, .. } => {
                tracing::warn!("Placement {name} is a hub write; the simulator has no hub");
            }
            Effect::HubApply { title, .. } => {
                tracing::warn!("{title} is a hub write; the simulator has no hub");
            }
        }
        true
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
