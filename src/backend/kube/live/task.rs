//! One cluster's task in the live backend: it connects, probes `/readyz` and `/version` on a
//! schedule, asks which of the fleet's kinds the cluster serves and keeps a watch per kind,
//! feeds what it hears to the cluster's column of cells and sends the cells that changed, and
//! carries out the requests routed to it (writes and dry runs in tasks of their own, so the
//! watch keeps flowing). Connects, probes and writes are bounded across the fleet by shared
//! permits. It must not log credentials; a read-only task has no request channel.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::Client;
use kube::config::Kubeconfig;
use tokio::sync::{Semaphore, mpsc, watch};
use tokio::task::JoinHandle;

use super::column::{ApplyResult, ClusterCells, FleetIndex, UNSEEN_FOR, WatchChange};
use super::watcher::{discover, watch_kind};
use super::write::{self, Job, Write};
use crate::backend::cells::Reach;
use crate::backend::fanout::cluster_api::Guard;
use crate::backend::fanout::object_events::{EventsAndPods, live_object, object_events};
use crate::backend::fanout::pods::workload_pods;
use crate::backend::fanout::targets::Options;
use crate::backend::kube::api::KubeCluster;
use crate::backend::kube::kubeconfig::{self, Timeouts};
use crate::backend::kube::probe;
use crate::engine::health::pods::pod_row;
use crate::engine::{Decision, Fleet};
use crate::messages::{BackendEvent, CellPods, CellUpdate};
use crate::model::{CellStatus, ClusterStatus, Health};
use futures::StreamExt;
use serde_json::Value;

/// How the live backend paces itself.
#[derive(Debug, Clone, Copy)]
pub struct LiveOptions {
    pub timeouts: Timeouts,
    /// Time between health probes of one cluster.
    pub probe_every: Duration,
    /// Clusters connecting, probing or discovering at once across the fleet.
    pub concurrency: usize,
    /// Fan-out settings for applies.
    pub apply: Options,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            timeouts: Timeouts {
                connect: Duration::from_secs(5),
                // Watches are closed by the server well before this (see WATCH_TIMEOUT_SECS);
                // single requests have their own timeouts.
                read: Duration::from_secs(60),
            },
            probe_every: Duration::from_secs(10),
            concurrency: 64,
            apply: Options::default(),
        }
    }
}

/// A request to one cluster's task.
pub(super) enum ToCluster {
    /// Apply, delete or revert (confirmed by the operator).
    Write(Write),
    /// Dry-run these rows as an edited fleet renders them.
    DryRun {
        fleet: Arc<Fleet>,
        rows: Vec<u32>,
        revision: u64,
    },
    UseFleet(Arc<Fleet>),
    /// The object view follows these rows (none: it closed).
    Follow(Vec<u32>),
    /// Read these rows' workload pods once (the `:pods` query).
    ReadPods(Vec<u32>),
    /// The log pane asks for this cluster's client and rows.
    Logs(super::log_stream::LogPart),
}

/// How often the followed rows' Events are read again while the object view is open.
const LIVE_REFRESH: Duration = Duration::from_secs(3);

pub(super) struct Shared {
    pub kubeconfig: Kubeconfig,
    pub events: mpsc::UnboundedSender<BackendEvent>,
    pub permits: Semaphore,
    /// How far the fleet's first probes are, which every cluster's follow-ups wait on.
    pub first_probes: watch::Sender<FirstProbes>,
    pub apply_permits: Semaphore,
    pub options: LiveOptions,
    pub readonly: bool,
    pub profiles: Option<Arc<crate::backend::kube::profile_inventory::ProfileInventory>>,
}

/// How many clusters have yet to send their first probe, and how many have yet to hear its
/// outcome (an answer, an error or the probe's timeout).
#[derive(Debug, Clone, Copy)]
pub(super) struct FirstProbes {
    pub unsent: usize,
    pub unreported: usize,
}

/// How long a cluster's follow-ups wait, once the last first probe is sent, for the clusters
/// whose probes are still out: long enough for a wave in flight to land, short enough that a
/// cluster that never answers holds the others up for no more than this.
const FIRST_ANSWERS_GRACE: Duration = Duration::from_secs(1);

/// What a cluster's task hears from the tasks it started.
enum Message {
    Watch {
        generation: u64,
        kind: usize,
        change: WatchChange,
    },
    WatchError {
        generation: u64,
        message: String,
    },
    Applied(Vec<(u32, ApplyResult)>, String),
    /// A write's wait for the watch to bring it is over.
    UnseenOver,
    /// The Events read for the followed rows (`follow` says for which follow).
    EventsRead {
        follow: u64,
        events: Vec<(u32, Result<EventsAndPods, String>)>,
    },
}

/// The rows the object view follows on this cluster and the Events last read for them.
#[derive(Default)]
struct ObjectReads {
    rows: Vec<u32>,
    /// Bumped with every follow, so a late read for an old one is dropped.
    follow: u64,
    /// One Events read at a time per cluster.
    reading: bool,
    events: HashMap<u32, Result<EventsAndPods, String>>,
}

/// One cluster: its client, health, discovery, watches and cells.
pub(super) struct ClusterTask {
    shared: Arc<Shared>,
    cells: ClusterCells,
    client: Option<Client>,
    health: Option<ClusterStatus>,
    /// Bumped whenever the watches restart, so late events of old watches are dropped.
    generation: u64,
    watches: Vec<JoinHandle<()>>,
    served: Vec<bool>,
    messages_tx: mpsc::UnboundedSender<Message>,
    messages: mpsc::UnboundedReceiver<Message>,
    following: ObjectReads,
}

impl ClusterTask {
    pub(super) fn new(shared: Arc<Shared>, cells: ClusterCells) -> ClusterTask {
        let (messages_tx, messages) = mpsc::unbounded_channel();
        ClusterTask {
            shared,
            cells,
            client: None,
            health: None,
            generation: 0,
            watches: Vec::new(),
            served: Vec::new(),
            messages_tx,
            messages,
            following: ObjectReads::default(),
        }
    }

    fn index(&self) -> u32 {
        self.cells.cluster()
    }

    fn name(&self) -> String {
        self.cells
            .fleet()
            .clusters
            .get(self.index() as usize)
            .map(|spec| spec.name.clone())
            .unwrap_or_default()
    }

    /// Sends what changed: cell statuses (with the drift of drifted cells), then the live
    /// health of objects that changed, which moves while a cell stays in sync.
    fn send_cells(&mut self, updates: Vec<CellUpdate>) {
        if !updates.is_empty() {
            let drift = self.cells.drift_events(&updates);
            let _ = self.shared.events.send(BackendEvent::Cells(updates));
            for event in drift {
                let _ = self.shared.events.send(event);
            }
        }
        // Health rules run Lua here, on the task's worker: each call is bounded (instructions,
        // memory, a second) and cached per object version. Handing every watch event's call to
        // another thread (`block_in_place`) cost more than the rules: at 2,000 re-assessments a
        // second its thread churn starved the console's loop (benches/health.rs), and a
        // thousand clusters doing it held 500 threads and 700 MiB (benches/fleet_scale.rs).
        let health = self.cells.health_changes();
        if !health.is_empty() {
            let _ = self.shared.events.send(BackendEvent::Health(health));
        }
    }

    pub(super) async fn run(mut self, mut commands: Option<mpsc::UnboundedReceiver<ToCluster>>) {
        let _ = self.shared.events.send(BackendEvent::Cluster {
            cluster: self.index(),
            status: status(Health::Unknown, "connecting…".into()),
        });
        let mut probes = tokio::time::interval(self.shared.options.probe_every);
        probes.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut live_refresh = tokio::time::interval(LIVE_REFRESH);
        live_refresh.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = live_refresh.tick(), if !self.following.rows.is_empty() => self.refresh_live(),
                _ = probes.tick() => {
                    if self.shared.events.is_closed() {
                        break;
                    }
                    self.probe().await;
                }
                Some(message) = self.messages.recv() => self.on_message(message),
                Some(command) = next_command(&mut commands) => self.on_command(command).await,
            }
        }
        for watch in self.watches.drain(..) {
            watch.abort();
        }
    }

    async fn probe(&mut self) {
        let shared = self.shared.clone();
        let Ok(permit) = shared.permits.acquire().await else {
            return;
        };
        // A cluster has no health until its first probe has reported one: this is that probe.
        let first = self.health.is_none();
        if first {
            shared
                .first_probes
                .send_modify(|probes| probes.unsent = probes.unsent.saturating_sub(1));
        }
        let reported = || {
            if first {
                shared
                    .first_probes
                    .send_modify(|probes| probes.unreported = probes.unreported.saturating_sub(1));
            }
        };
        if self.client.is_none() {
            let context = self
                .cells
                .fleet()
                .clusters
                .get(self.index() as usize)
                .map(|spec| spec.context.clone())
                .unwrap_or_default();
            match kubeconfig::client_for(
                &self.shared.kubeconfig,
                &context,
                self.shared.options.timeouts,
            )
            .await
            {
                Ok(client) => self.client = Some(client),
                Err(reason) => {
                    reported();
                    self.report(status(reason.health(), reason.to_string()));
                    let updates = self.cells.set_reach(Reach::Down(reason.into()));
                    self.send_cells(updates);
                    return;
                }
            }
        }
        let Some(client) = self.client.clone() else {
            return;
        };
        let timeout = self.shared.options.timeouts.connect;
        let mut observed = probe::readiness(&client, timeout).await;
        reported();
        // The permits bound new connections: the version, discovery and the watches go over
        // the connection `/readyz` opened, and waiting for them would hold up the next
        // cluster's health answer.
        drop(permit);
        if observed.health == Health::Unauthorized {
            // Credentials from an exec plugin are resolved once per client: a rejected token
            // (expired, say) is resolved afresh by the next probe's new client.
            self.client = None;
        }
        let answering = probe::answered(&observed);
        if answering {
            if self
                .health
                .as_ref()
                .is_none_or(|shown| shown.version.is_none())
            {
                // A cluster's first answer is shown at once; its version follows.
                self.report(observed.clone());
            }
            // Every cluster's health comes first: the follow-ups (the version, discovery and
            // a connection per watch) load the servers and proxies the other clusters' probes
            // go through, so they wait until the last first probe is out and has landed.
            let mut probes = shared.first_probes.subscribe();
            let _ = probes.wait_for(|probes| probes.unsent == 0).await;
            let landed = probes.wait_for(|probes| probes.unreported == 0);
            let _ = tokio::time::timeout(FIRST_ANSWERS_GRACE, landed).await;
            probe::add_version(&client, timeout, &mut observed).await;
        }
        let was_answering = self.cells.reach() == &Reach::Answering;
        let reach = if answering {
            Reach::Answering
        } else {
            Reach::Down(format!(
                "{}: {}",
                observed.health.as_str(),
                observed.message
            ))
        };
        self.report(observed);
        if answering && (!was_answering || self.served.iter().any(|served| !served)) {
            self.discover_and_watch(&client, !was_answering).await;
        }
        if !answering {
            self.stop_watches();
        }
        let updates = self.cells.set_reach(reach);
        self.send_cells(updates);
    }

    /// Sends the cluster's status when it changed in a way an operator would notice, and a
    /// heartbeat otherwise.
    fn report(&mut self, observed: ClusterStatus) {
        let observed = match &self.shared.profiles {
            Some(profiles) => {
                let name = self
                    .cells
                    .fleet()
                    .clusters
                    .get(self.index() as usize)
                    .map(|spec| spec.name.clone())
                    .unwrap_or_default();
                profiles.status(&name, observed)
            }
            None => observed,
        };
        let changed = match &self.health {
            None => true,
            Some(before) => {
                before.health != observed.health
                    || before.version != observed.version
                    || before.message != observed.message
                    || latency_moved(before.latency_ms, observed.latency_ms)
            }
        };
        if changed {
            self.health = Some(observed.clone());
            let _ = self.shared.events.send(BackendEvent::Cluster {
                cluster: self.index(),
                status: observed,
            });
        } else {
            let _ = self.shared.events.send(BackendEvent::Heartbeat {
                clusters: vec![self.index()],
            });
        }
    }

    /// Which of the fleet's kinds the cluster serves; a watch per served kind (restarted when
    /// `restart`, else started only for kinds that became served).
    async fn discover_and_watch(&mut self, client: &Client, restart: bool) {
        let index = self.cells.index().clone();
        let resources = match discover(client, &index.kinds).await {
            Ok(resources) => resources,
            Err(message) => {
                tracing::warn!(cluster = %self.name(), "discovery failed: {message}");
                return;
            }
        };
        let served: Vec<bool> = resources.iter().map(Option::is_some).collect();
        if restart {
            self.stop_watches();
        }
        for (kind, resource) in resources.into_iter().enumerate() {
            let already = !restart && self.served.get(kind).copied().unwrap_or(false);
            if let Some(resource) = resource
                && !already
            {
                let (generation, messages) = (self.generation, self.messages_tx.clone());
                let heard = move |change: Result<WatchChange, String>| {
                    let message = match change {
                        Ok(change) => Message::Watch {
                            generation,
                            kind,
                            change,
                        },
                        Err(message) => Message::WatchError {
                            generation,
                            message,
                        },
                    };
                    messages.send(message).is_ok()
                };
                self.watches
                    .push(tokio::spawn(watch_kind(client.clone(), resource, heard)));
            }
        }
        self.served = served;
        let updates = self.cells.set_served(&self.served);
        self.send_cells(updates);
    }

    fn stop_watches(&mut self) {
        for watch in self.watches.drain(..) {
            watch.abort();
        }
        self.served.clear();
        self.generation += 1;
    }

    fn on_message(&mut self, message: Message) {
        match message {
            Message::Watch {
                generation,
                kind,
                change,
            } if generation == self.generation => {
                let updates = self.cells.watch(kind, change);
                self.send_cells(updates);
            }
            Message::WatchError {
                generation,
                message,
            } if generation == self.generation => {
                tracing::debug!(cluster = %self.name(), "watch error: {message}");
            }
            Message::Watch { .. } | Message::WatchError { .. } => {}
            Message::Applied(results, notice) => {
                let updates = self.cells.apply_finished(results, Instant::now());
                self.send_cells(updates);
                let _ = self.shared.events.send(BackendEvent::Notice(notice));
                if self.cells.awaits_watch() {
                    let messages = self.messages_tx.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(UNSEEN_FOR).await;
                        let _ = messages.send(Message::UnseenOver);
                    });
                }
            }
            Message::UnseenOver => {
                let updates = self.cells.unseen_expired(Instant::now());
                self.send_cells(updates);
            }
            Message::EventsRead { follow, events } => {
                if follow == self.following.follow {
                    self.following.reading = false;
                    self.following.events.extend(events);
                    self.send_live();
                }
            }
        }
    }

    async fn on_command(&mut self, command: ToCluster) {
        match command {
            ToCluster::Write(write) => self.write(write),
            ToCluster::DryRun {
                fleet,
                rows,
                revision,
            } => self.dry_run(fleet, rows, revision),
            ToCluster::Follow(rows) => {
                self.following.follow += 1;
                self.following.reading = false;
                self.following.events.retain(|row, _| rows.contains(row));
                self.following.rows = rows;
                self.refresh_live();
            }
            ToCluster::ReadPods(rows) => self.read_pods(rows),
            ToCluster::Logs(part) => part.answer(
                self.client.clone(),
                self.cells.fleet(),
                self.index(),
                &self.shared.events,
            ),
            ToCluster::UseFleet(fleet) => {
                let index = Arc::new(FleetIndex::new(&fleet));
                let kinds_changed = index.kinds != self.cells.index().kinds;
                let updates = self.cells.set_fleet(fleet, index);
                self.send_cells(updates);
                if kinds_changed && let Some(client) = self.client.clone() {
                    self.discover_and_watch(&client, true).await;
                }
            }
        }
    }

    /// Sends what the watch cache holds for the followed rows now, and starts a read of their
    /// Events unless one is in flight: in a task of its own, so the watch keeps flowing, and
    /// one at a time, so a slow cluster is asked no faster than it answers.
    fn refresh_live(&mut self) {
        self.send_live();
        if self.following.reading || self.following.rows.is_empty() {
            return;
        }
        let Some(client) = self.client.clone() else {
            return;
        };
        let objects: Vec<(u32, Value)> = self
            .following
            .rows
            .iter()
            .filter_map(|row| self.cells.live(*row).map(|object| (*row, object.clone())))
            .collect();
        if objects.is_empty() {
            return;
        }
        self.following.reading = true;
        let (follow, messages) = (self.following.follow, self.messages_tx.clone());
        let limits = self.shared.options.apply.limits;
        tokio::spawn(async move {
            // Only reads: a read-only API refuses anything else before it is sent.
            let api = KubeCluster::new(client, true);
            let guard = Guard::new(limits);
            let mut events = Vec::new();
            for (row, object) in objects {
                let read = object_events(&api, &guard, &object)
                    .await
                    .map_err(|err| err.to_string());
                events.push((row, read));
            }
            let _ = messages.send(Message::EventsRead { follow, events });
        });
    }

    /// Reads the pods of the rows' workloads as the watch cache holds them, in a task of its
    /// own (the watch keeps flowing), under the fan-out's bound on clusters written at once,
    /// and sends them together; a cluster not connected says why for each row.
    fn read_pods(&self, rows: Vec<u32>) {
        let cluster = self.index();
        let cell = move |resource: u32| crate::messages::CellRef { resource, cluster };
        let shared = self.shared.clone();
        let Some(client) = self.client.clone() else {
            let reason = match self.cells.reach() {
                Reach::Down(reason) => reason.clone(),
                _ => "not connected yet".to_string(),
            };
            let answers = rows
                .into_iter()
                .map(|row| (cell(row), CellPods::unread(reason.clone())))
                .collect();
            let _ = shared.events.send(BackendEvent::Pods(answers));
            return;
        };
        // What each row's object is here, and what the fleet renders for it.
        let objects: Vec<(u32, Option<Value>, Option<Value>)> = rows
            .into_iter()
            .map(|row| {
                let desired = match self.cells.fleet().decide(row as usize, cluster as usize) {
                    Decision::Placed { object, .. } => Some(object),
                    _ => None,
                };
                (row, self.cells.live(row).cloned(), desired)
            })
            .collect();
        tokio::spawn(async move {
            let Ok(_permit) = shared.apply_permits.acquire().await else {
                return;
            };
            // Only reads: a read-only API refuses anything else before it is sent.
            let api = KubeCluster::new(client, true);
            let guard = Guard::new(shared.options.apply.limits);
            let (api, guard) = (&api, &guard);
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64);
            let answers: Vec<_> = futures::stream::iter(objects)
                .map(|(row, object, desired)| async move {
                    let pods = match object {
                        // Not on the cluster: it runs no pods of it.
                        None => CellPods::of(&[], None, None),
                        Some(object) => match workload_pods(api, guard, &object, "").await {
                            Ok(pods) => CellPods::of(
                                &pods.iter().map(|pod| pod_row(pod, now)).collect::<Vec<_>>(),
                                desired.as_ref(),
                                Some(&object),
                            ),
                            Err(err) => CellPods::unread(err.to_string()),
                        },
                    };
                    (cell(row), pods)
                })
                .buffered(shared.options.apply.limits.in_flight.max(1))
                .collect()
                .await;
            let _ = shared.events.send(BackendEvent::Pods(answers));
        });
    }

    /// What this cluster holds for each followed row, with the Events last read for it.
    fn send_live(&self) {
        for row in &self.following.rows {
            let desired = match self
                .cells
                .fleet()
                .decide(*row as usize, self.index() as usize)
            {
                Decision::Placed { object, .. } => Some(object),
                _ => None,
            };
            let held = self.cells.live(*row);
            // Diffed as drift is judged: what the member retains compared with itself.
            let desired = match (desired, held) {
                (Some(desired), Some(held)) => Some(
                    self.cells
                        .fleet()
                        .interpreters
                        .retain(&desired, held)
                        .unwrap_or(desired),
                ),
                (desired, _) => desired,
            };
            let (events, error) = match self.following.events.get(row) {
                Some(Ok(events)) => (events.clone(), None),
                Some(Err(err)) => (
                    EventsAndPods::default(),
                    Some(format!("cannot read Events: {err}")),
                ),
                None => (EventsAndPods::default(), None),
            };
            let error = match self.cells.reach() {
                Reach::Down(reason) => Some(reason.clone()),
                _ => error,
            };
            let live = live_object(desired.as_ref(), held, events, error);
            let _ = self.shared.events.send(BackendEvent::LiveObject {
                cell: crate::messages::CellRef {
                    resource: *row,
                    cluster: self.index(),
                },
                live: Box::new(live),
            });
        }
    }

    /// Asks the API server what the edited fleet's objects of `rows` would change, in a task
    /// of its own; the answer goes straight to the app.
    fn dry_run(&mut self, fleet: Arc<Fleet>, rows: Vec<u32>, revision: u64) {
        let Some(client) = self.client.clone() else {
            return;
        };
        let shared = self.shared.clone();
        let job = Job {
            fleet,
            readonly: shared.readonly,
            cluster: self.index(),
            name: self.name(),
            client,
            options: shared.options.apply,
        };
        tokio::spawn(async move {
            let Ok(_permit) = shared.apply_permits.acquire().await else {
                return;
            };
            let items = write::dry_run(job, &rows).await;
            let _ = shared.events.send(BackendEvent::DryRun { revision, items });
        });
    }

    /// Carries out a write in a task of its own, so the cluster's watch keeps flowing
    /// meanwhile: its rows are Pending until it ends, then hold its result (a failure stays
    /// until the row is written again or changes on the cluster).
    fn write(&mut self, write: Write) {
        let rows = write.rows();
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
            let updates = self.cells.apply_finished(failed, Instant::now());
            self.send_cells(updates);
            return;
        };
        let updates = self.cells.apply_started(&rows);
        self.send_cells(updates);
        let shared = self.shared.clone();
        let job = Job {
            fleet: self.cells.fleet().clone(),
            readonly: shared.readonly,
            cluster: self.index(),
            name: self.name(),
            client,
            options: shared.options.apply,
        };
        let messages = self.messages_tx.clone();
        tokio::spawn(async move {
            let Ok(_permit) = shared.apply_permits.acquire().await else {
                return;
            };
            let (results, notice) = write::run(job, write).await;
            let _ = messages.send(Message::Applied(results, notice));
        });
    }
}

async fn next_command(
    commands: &mut Option<mpsc::UnboundedReceiver<ToCluster>>,
) -> Option<ToCluster> {
    match commands {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

/// Latency is worth a redraw when it moves by more than a fifth, and by more than 5 ms.
fn latency_moved(before: Option<u64>, now: Option<u64>) -> bool {
    match (before, now) {
        (Some(before), Some(now)) => before.abs_diff(now) > (before / 5).max(5),
        (before, now) => before.is_some() != now.is_some(),
    }
}

pub(super) fn status(health: Health, message: String) -> ClusterStatus {
    ClusterStatus {
        health,
        version: None,
        latency_ms: None,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_changes_below_a_fifth_are_not_news() {
        assert!(!latency_moved(Some(100), Some(110)));
        assert!(latency_moved(Some(100), Some(130)));
        assert!(!latency_moved(Some(2), Some(5)));
        assert!(latency_moved(None, Some(5)));
    }
}
