//! The live raw-contexts backend behind the console and the wall: one task per cluster that
//! connects, probes `/version` and `/readyz` on a schedule, asks aggregated discovery which of
//! the fleet's kinds the cluster serves, and keeps a watch cache of the objects flotilla
//! manages there (selected by the ownership label), so cell statuses come from events, not
//! polling. Apply effects reach a cluster's task and go through the same fan-out as
//! `flotilla apply`. A read-only instance has no effect channel and builds read-only
//! clusters, so no code path sends a mutating request. A slow or dead cluster holds up only
//! its own task; connects, probes and applies are bounded across the fleet. It must not log
//! credentials and never writes a kubeconfig.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::config::Kubeconfig;
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Discovery};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, ResourceExt};
use serde_json::Value;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;

mod console_revert;

use super::kubeconfig::{self, Timeouts};
use super::probe;
use crate::backend::audit;
use crate::backend::fanout::apply::{Outcome, apply_with};
use crate::backend::fanout::cluster_api::conflict_managers;
use crate::backend::fanout::object::resource_of;
use crate::backend::fanout::planning::{PlanMode, plan_with};
use crate::backend::fanout::targets::{Ignores, Options, Target};
use crate::backend::kube::api::KubeCluster;
use crate::backend::live_cells::{ApplyResult, ClusterCells, FleetIndex, Reach, WatchChange};
use crate::backend::{BackendEvent, CellUpdate, Effect};
use crate::engine::{Decision, Fleet, MANAGED_BY_LABEL, MANAGED_BY_VALUE};
use crate::model::{CellStatus, ClusterStatus, Health, StatusKind};

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

/// Seconds after which the server ends a quiet watch; the watcher resumes from the last
/// resourceVersion, so this costs one request, not a relist.
const WATCH_TIMEOUT_SECS: u32 = 45;

/// What the live backend needs: the fleet, how to reach its clusters, and which to connect.
pub struct LiveFleet {
    pub fleet: Arc<Fleet>,
    /// The fleet directory's texts, for the console's editors.
    pub files: Vec<crate::engine::SourceFile>,
    pub kubeconfig: Kubeconfig,
    /// Per fleet cluster: `None` to connect, or why it is not connected.
    pub skip: Vec<Option<String>>,
    pub options: LiveOptions,
}

/// Starts the backend; the returned sender takes apply effects.
pub fn spawn(
    live: LiveFleet,
    events: mpsc::UnboundedSender<BackendEvent>,
) -> mpsc::UnboundedSender<Effect> {
    let (effects_tx, effects_rx) = mpsc::unbounded_channel();
    let commands = start(live, events, false);
    tokio::spawn(dispatch(effects_rx, commands));
    effects_tx
}

/// Starts a backend that can only watch: there is no way to hand it an effect, and its
/// clusters refuse to send a mutating request.
pub fn spawn_readonly(live: LiveFleet, events: mpsc::UnboundedSender<BackendEvent>) {
    drop(start(live, events, true));
}

/// A request to one cluster's task.
enum Command {
    Apply(Vec<u32>),
    /// Delete these rows' objects (confirmed by the operator).
    Delete(Vec<u32>),
    /// Dry-run these rows as an edited fleet renders them.
    DryRun {
        fleet: Arc<Fleet>,
        rows: Vec<u32>,
        revision: u64,
    },
    UseFleet(Arc<Fleet>),
    /// Take back these drifted fields (row, JSON pointer) with a forced apply.
    Revert(Vec<(u32, String)>),
}

struct Shared {
    kubeconfig: Kubeconfig,
    events: mpsc::UnboundedSender<BackendEvent>,
    permits: Semaphore,
    apply_permits: Semaphore,
    options: LiveOptions,
    readonly: bool,
}

/// Sends the first snapshot and starts one task per connected cluster. In a read-only
/// backend the clusters get no command channel at all.
fn start(
    live: LiveFleet,
    events: mpsc::UnboundedSender<BackendEvent>,
    readonly: bool,
) -> Vec<Option<mpsc::UnboundedSender<Command>>> {
    let index = Arc::new(FleetIndex::new(&live.fleet));
    let columns: Vec<ClusterCells> = (0..live.fleet.clusters.len())
        .map(|cluster| {
            let reach = match live.skip.get(cluster).cloned().flatten() {
                Some(reason) => Reach::Down(reason),
                None => Reach::Connecting,
            };
            ClusterCells::new(live.fleet.clone(), index.clone(), cluster as u32, reach)
        })
        .collect();
    let _ = events.send(snapshot(&columns, live.fleet.resources.len()));
    let shared = Arc::new(Shared {
        kubeconfig: live.kubeconfig,
        events,
        permits: Semaphore::new(live.options.concurrency.max(1)),
        apply_permits: Semaphore::new(live.options.apply.concurrency.max(1)),
        options: live.options,
        readonly,
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
            let (commands, receiver) = if readonly {
                (None, None)
            } else {
                let (tx, rx) = mpsc::unbounded_channel();
                (Some(tx), Some(rx))
            };
            tokio::spawn(ClusterTask::new(shared.clone(), cells).run(receiver));
            commands
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

fn status(health: Health, message: String) -> ClusterStatus {
    ClusterStatus {
        health,
        version: None,
        latency_ms: None,
        message,
    }
}

/// Routes apply effects to the clusters' tasks.
async fn dispatch(
    mut effects: mpsc::UnboundedReceiver<Effect>,
    clusters: Vec<Option<mpsc::UnboundedSender<Command>>>,
) {
    while let Some(effect) = effects.recv().await {
        match effect {
            Effect::Apply { cells } => {
                let mut by_cluster: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
                for cell in cells {
                    by_cluster
                        .entry(cell.cluster)
                        .or_default()
                        .push(cell.resource);
                }
                for (cluster, rows) in by_cluster {
                    match clusters.get(cluster as usize) {
                        Some(Some(task)) => {
                            let _ = task.send(Command::Apply(rows));
                        }
                        _ => tracing::warn!(cluster, "apply for a cluster that is not connected"),
                    }
                }
            }
            Effect::Delete { cells } => {
                let mut by_cluster: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
                for cell in cells {
                    by_cluster
                        .entry(cell.cluster)
                        .or_default()
                        .push(cell.resource);
                }
                for (cluster, rows) in by_cluster {
                    if let Some(Some(task)) = clusters.get(cluster as usize) {
                        let _ = task.send(Command::Delete(rows));
                    }
                }
            }
            Effect::DryRun {
                fleet,
                cells,
                revision,
            } => {
                let mut by_cluster: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
                for cell in cells {
                    by_cluster
                        .entry(cell.cluster)
                        .or_default()
                        .push(cell.resource);
                }
                for (cluster, rows) in by_cluster {
                    if let Some(Some(task)) = clusters.get(cluster as usize) {
                        let _ = task.send(Command::DryRun {
                            fleet: fleet.0.clone(),
                            rows,
                            revision,
                        });
                    }
                }
            }
            Effect::UseFleet(fleet) => {
                for task in clusters.iter().flatten() {
                    let _ = task.send(Command::UseFleet(fleet.0.clone()));
                }
            }
            Effect::SaveAndApply { save, .. } => {
                tracing::warn!(
                    "{} reached the backend unsaved; the console saves edits",
                    save.title
                )
            }
            Effect::Revert { fields } => console_revert::dispatch(fields, &clusters),
            Effect::WriteFleet(write) => {
                tracing::warn!(
                    "{} reached the backend unsaved; the console saves edits",
                    write.title
                )
            }
            Effect::HubApply { title, .. } => {
                tracing::warn!("{title} is a hub write; these clusters have no hub")
            }
            Effect::WritePlacement { name, .. } => {
                tracing::warn!("Placement {name} is a hub write; these clusters have no hub")
            }
        }
    }
}

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
}

/// One cluster: its client, health, discovery, watches and cells.
struct ClusterTask {
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
}

impl ClusterTask {
    fn new(shared: Arc<Shared>, cells: ClusterCells) -> ClusterTask {
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

    fn send_cells(&self, updates: Vec<CellUpdate>) {
        if !updates.is_empty() {
            let drift = self.cells.drift_events(&updates);
            let _ = self.shared.events.send(BackendEvent::Cells(updates));
            for event in drift {
                let _ = self.shared.events.send(event);
            }
        }
    }

    async fn run(mut self, mut commands: Option<mpsc::UnboundedReceiver<Command>>) {
        let _ = self.shared.events.send(BackendEvent::Cluster {
            cluster: self.index(),
            status: status(Health::Unknown, "connecting…".into()),
        });
        let mut probes = tokio::time::interval(self.shared.options.probe_every);
        probes.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
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
        let Ok(_permit) = shared.permits.acquire().await else {
            return;
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
                    self.report(status(Health::Unknown, reason.clone()));
                    let updates = self.cells.set_reach(Reach::Down(reason));
                    self.send_cells(updates);
                    return;
                }
            }
        }
        let Some(client) = self.client.clone() else {
            return;
        };
        let observed = probe::probe(&client, self.shared.options.timeouts.connect).await;
        let answering = matches!(observed.health, Health::Ready | Health::NotReady);
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
                self.watches.push(tokio::spawn(watch_kind(
                    client.clone(),
                    resource,
                    kind,
                    self.generation,
                    self.messages_tx.clone(),
                )));
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
                let updates = self.cells.apply_finished(results);
                self.send_cells(updates);
                let _ = self.shared.events.send(BackendEvent::Notice(notice));
            }
        }
    }

    async fn on_command(&mut self, command: Command) {
        match command {
            Command::Apply(rows) => self.apply(rows, false),
            Command::Delete(rows) => self.apply(rows, true),
            Command::DryRun {
                fleet,
                rows,
                revision,
            } => self.dry_run(fleet, rows, revision),
            Command::Revert(fields) => self.revert(fields),
            Command::UseFleet(fleet) => {
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

    /// Asks the API server what the edited fleet's objects of `rows` would change, in a task
    /// of its own; the answer goes straight to the app.
    fn dry_run(&mut self, fleet: Arc<Fleet>, rows: Vec<u32>, revision: u64) {
        let Some(client) = self.client.clone() else {
            return;
        };
        let shared = self.shared.clone();
        let cluster = self.index();
        let name = self.name();
        tokio::spawn(async move {
            let Ok(_permit) = shared.apply_permits.acquire().await else {
                return;
            };
            // Dry runs are PATCH requests with dryRun=All: never sent by a read-only backend.
            let (target, _) = apply_target(&fleet, shared.readonly, cluster, &name, client, &rows);
            let ignores = Ignores::new(&fleet.ignores, &fleet.clusters);
            let items = plan_with(
                std::slice::from_ref(&target),
                PlanMode::DryRun,
                shared.options.apply,
                &ignores,
                &|_, _| {},
            )
            .await;
            let _ = shared.events.send(BackendEvent::DryRun { revision, items });
        });
    }

    /// Applies the desired objects of `rows` (and the namespaces they need) in a task of its
    /// own, so the cluster's watch keeps flowing meanwhile.
    fn apply(&mut self, rows: Vec<u32>, delete: bool) {
        let Some(client) = self.client.clone() else {
            let failed = rows
                .iter()
                .map(|row| {
                    let reason = "the cluster has not answered yet".to_string();
                    (*row, Err((CellStatus::Failed(reason.clone()), reason)))
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
            let (target, row_of, prune) = if delete {
                delete_target(&fleet, shared.readonly, &name, client, &rows)
            } else {
                let (target, row_of) =
                    apply_target(&fleet, shared.readonly, cluster, &name, client, &rows);
                (target, row_of, BTreeMap::new())
            };
            let ignores = Ignores::new(&fleet.ignores, &fleet.clusters);
            let items = apply_with(
                std::slice::from_ref(&target),
                false,
                &prune,
                shared.options.apply,
                &ignores,
                &|_, _| {},
            )
            .await;
            if !items.is_empty() {
                let action = if delete { "undo-delete" } else { "apply" };
                audit::record_or_warn(&audit::Entry::from_apply(action, &items));
            }
            let mut results = Vec::new();
            let mut applied = 0;
            let mut failed = 0;
            for item in &items {
                let Some(row) = row_of.get(&item.resource.display_key()).copied() else {
                    if item.result.is_failure() {
                        failed += 1;
                    }
                    continue;
                };
                if item.result.is_failure() {
                    failed += 1;
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
                    applied += 1;
                    results.push((row, Ok(())));
                }
            }
            let verb = if delete { "deleted" } else { "applied" };
            let notice = if failed == 0 {
                format!("{verb} {applied} object(s) on {name}")
            } else {
                format!("{verb} {applied} object(s) on {name}; {failed} failed")
            };
            let _ = messages.send(Message::Applied(results, notice));
        });
    }
}

async fn next_command(commands: &mut Option<mpsc::UnboundedReceiver<Command>>) -> Option<Command> {
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

/// The API resource of each kind, or `None` when the cluster does not serve it. Aggregated
/// discovery costs two requests; servers without it get the classic walk of the groups.
async fn discover(
    client: &Client,
    kinds: &[(String, String)],
) -> Result<Vec<Option<ApiResource>>, String> {
    let groups: BTreeSet<String> = kinds
        .iter()
        .map(|(api_version, _)| group_of(api_version).to_string())
        .collect();
    let groups: Vec<&str> = groups.iter().map(String::as_str).collect();
    let discovery = match Discovery::new(client.clone())
        .filter(&groups)
        .run_aggregated()
        .await
    {
        Ok(discovery) => discovery,
        Err(_) => Discovery::new(client.clone())
            .filter(&groups)
            .run()
            .await
            .map_err(|err| probe::short_error(&err))?,
    };
    Ok(kinds
        .iter()
        .map(|(api_version, kind)| {
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            discovery
                .resolve_gvk(&GroupVersionKind::gvk(group, version, kind))
                .map(|(resource, _)| resource)
        })
        .collect())
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// Watches every object of one kind that carries flotilla's ownership label, reconnecting with
/// backoff, and hands each change to the cluster's task.
async fn watch_kind(
    client: Client,
    resource: ApiResource,
    kind: usize,
    generation: u64,
    messages: mpsc::UnboundedSender<Message>,
) {
    let api: Api<DynamicObject> = Api::all_with(client, &resource);
    let config = watcher::Config::default()
        .labels(&format!("{MANAGED_BY_LABEL}={MANAGED_BY_VALUE}"))
        .timeout(WATCH_TIMEOUT_SECS);
    let mut stream = watcher::watcher(api, config).default_backoff().boxed();
    while let Some(event) = stream.next().await {
        let message = match event {
            Ok(event) => {
                let change = match event {
                    Event::Init => WatchChange::ListStarted,
                    Event::InitApply(object) => WatchChange::Listed(to_value(object, &resource)),
                    Event::InitDone => WatchChange::ListDone,
                    Event::Apply(object) => WatchChange::Applied(to_value(object, &resource)),
                    Event::Delete(object) => WatchChange::Deleted(to_value(object, &resource)),
                };
                Message::Watch {
                    generation,
                    kind,
                    change,
                }
            }
            Err(err) => Message::WatchError {
                generation,
                message: probe::short_error(&err),
            },
        };
        if messages.send(message).is_err() {
            return;
        }
    }
}

/// A watched object as plain JSON, with the apiVersion and kind a list item may omit.
fn to_value(object: DynamicObject, resource: &ApiResource) -> Value {
    let name = object.name_any();
    let mut value = serde_json::to_value(object).unwrap_or_else(|err| {
        tracing::warn!("cannot read watched object {name}: {err}");
        Value::Null
    });
    if let Some(map) = value.as_object_mut() {
        map.insert(
            "apiVersion".into(),
            Value::String(resource.api_version.clone()),
        );
        map.insert("kind".into(), Value::String(resource.kind.clone()));
    }
    value
}

/// A delete target, the row of each object by display key, and apply's prune list.
type DeleteWork = (
    Target<KubeCluster>,
    HashMap<String, u32>,
    BTreeMap<String, Vec<crate::model::ResourceRef>>,
);

/// A target that writes nothing and deletes the objects of `rows` (through apply's confirmed
/// prune list, so deletion keeps apply's guards and ordering).
fn delete_target(
    fleet: &Fleet,
    readonly: bool,
    name: &str,
    client: Client,
    rows: &[u32],
) -> DeleteWork {
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
        api: Ok(KubeCluster::new(client, readonly)),
        objects: Vec::new(),
        failed: Vec::new(),
        prune_kinds: Vec::new(),
        prune_namespaces: BTreeSet::new(),
    };
    (target, row_of, BTreeMap::from([(name.to_string(), doomed)]))
}

/// The apply target for `rows` on one cluster, with the namespaces they need, and the row of
/// each object by its display key.
fn apply_target(
    fleet: &Fleet,
    readonly: bool,
    cluster: u32,
    name: &str,
    client: Client,
    rows: &[u32],
) -> (Target<KubeCluster>, HashMap<String, u32>) {
    let cluster = cluster as usize;
    let mut objects = Vec::new();
    let mut failed = Vec::new();
    let mut namespaces = BTreeSet::new();
    let mut row_of = HashMap::new();
    for row in rows {
        let resource = *row as usize;
        let Some(federated) = fleet.resources.get(resource) else {
            continue;
        };
        if !fleet.is_placed(resource, cluster) {
            continue;
        }
        row_of.insert(federated.target.display_key(), *row);
        match fleet.decide(resource, cluster) {
            Decision::Placed { object, .. } => {
                if let Some(ns) = &federated.target.namespace {
                    namespaces.insert(ns.clone());
                }
                objects.push(object);
            }
            Decision::NotPlaced { reason } => failed.push((federated.target.clone(), reason)),
        }
    }
    let mut all: Vec<Value> = fleet
        .implied_namespaces(cluster)
        .into_iter()
        .filter(|ns| namespaces.contains(&resource_of(ns).name))
        .collect();
    all.extend(objects);
    let target = Target {
        cluster: name.to_string(),
        api: Ok(KubeCluster::new(client, readonly)),
        objects: all,
        failed,
        prune_kinds: Vec::new(),
        prune_namespaces: BTreeSet::new(),
    };
    (target, row_of)
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

    #[test]
    fn kinds_map_to_their_api_group() {
        assert_eq!(group_of("v1"), "");
        assert_eq!(group_of("apps/v1"), "apps");
        assert_eq!(group_of("example.com/v1alpha1"), "example.com");
    }
}
