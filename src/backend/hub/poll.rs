//! The console's backend on a hub: reads the hub whenever a watched hub object changes (and on
//! a slow timer besides; every few seconds for hubs without watched kinds) and reports what
//! changed — cluster health as the hub reports it, and one cell per (row, cluster) as the
//! hub's reader words it. Rows the hub gains later are appended, so a shown row keeps its
//! index. With an effect channel it also hands confirmed edits to the hub's writers (policies
//! and Federated objects; an OCM Placement; a Karmada reschedule), answers the editors' previews
//! with the engine's render against the hub's rendered objects, and follows each edit until the
//! hub has rendered (or, for a Placement, decided) exactly what the preview said. Either way it
//! reads followed cells on their members for the live view (`live_view`). Read-only, its channel
//! lets only those reads through, so no code path can write to the hub.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;

use super::cache::{Caches, Change, LiveView, Touched, cells_of, health_of};
use super::connect::Hub;
use super::effects::{Expectation, PlacementFollow, follow, handle};
use super::live_view::Following;
use super::member_health::{self, Unsettled};
use super::preview::{dry_run, preview_view};
pub use super::view::aligned;
use super::view::{HubRow, HubView};
use super::{karmada, kubefed_delta, ocm};
use crate::backend::messages::{
    AddedResource, BackendEvent, CellRef, CellUpdate, Effect, HealthUpdate, reads_only,
};
use crate::engine::Fleet;
use crate::model::Dialect;
use crate::model::HubKind;
use crate::model::{CellHealth, CellStatus, ClusterStatus, Health};

/// Time between reads of a hub whose changes are not watched.
pub const POLL_EVERY: Duration = Duration::from_secs(5);

/// Time between reads of a watched hub when nothing changed (health the hub recomputes, such
/// as a member's Ready condition, still arrives through the Cluster watch).
pub const REREAD_EVERY: Duration = Duration::from_secs(30);

/// Time between passes that ask members how their workloads are doing, where the hub's word
/// is not enough (`member_health`).
const ASK_MEMBERS_EVERY: Duration = Duration::from_secs(10);

/// How long to gather a burst of changes into one read.
const SETTLE: Duration = Duration::from_millis(200);

/// Starts one watch per kind; each change (or watch restart) sends a nudge.
async fn watch_changes(hub: &Hub) -> Option<mpsc::UnboundedReceiver<()>> {
    use futures::StreamExt;
    use kube::api::{Api, DynamicObject};
    use kube::runtime::{WatchStreamExt, watcher};

    let kinds = hub.watched_kinds().await;
    if kinds.is_empty() {
        return None;
    }
    let (nudge, nudges) = mpsc::unbounded_channel();
    for kind in kinds {
        let api: Api<DynamicObject> = Api::all_with(hub.client.clone(), &kind);
        let nudge = nudge.clone();
        tokio::spawn(async move {
            let config = watcher::Config::default().timeout(45);
            let mut stream = watcher::watcher(api, config).default_backoff().boxed();
            while let Some(event) = stream.next().await {
                let changed = !matches!(
                    event,
                    Ok(watcher::Event::Init | watcher::Event::InitApply(_))
                );
                if changed && nudge.send(()).is_err() {
                    return;
                }
            }
        });
    }
    Some(nudges)
}

async fn next_nudge(nudges: &mut Option<mpsc::UnboundedReceiver<()>>) {
    match nudges {
        Some(receiver) => {
            if receiver.recv().await.is_none() {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(SETTLE).await;
            while receiver.try_recv().is_ok() {}
        }
        None => std::future::pending().await,
    }
}

/// The first matrix of a hub view.
pub fn snapshot(view: &HubView) -> BackendEvent {
    BackendEvent::snapshot(view.rows.len(), view.clusters.len(), |row, column| {
        view.cell(row, column)
    })
}

/// The health the hub reports for every cell of a view that has one, as one event (`None`
/// when no cell has a health).
pub fn health_snapshot(view: &HubView) -> Option<BackendEvent> {
    let updates: Vec<HealthUpdate> = health_of(view, &Touched::All)
        .into_iter()
        .filter(|(_, health)| health.is_some())
        .map(|(cell, health)| HealthUpdate { cell, health })
        .collect();
    (!updates.is_empty()).then_some(BackendEvent::Health(updates))
}

/// Starts reading the hub without any way to write to it; `first` is the view the console's
/// rows and columns were built from. The channel returned takes only the live view's reads.
pub fn spawn_readonly(
    hub: Hub,
    first: FirstView,
    fleet: Option<Arc<Fleet>>,
    events: mpsc::UnboundedSender<BackendEvent>,
) -> mpsc::UnboundedSender<Effect> {
    let (reads, receiver) = reads_only();
    start(hub, first, fleet, events, receiver);
    reads
}

/// Runs the backend of the hub's kind: from informer caches where its reader keeps a live
/// view, else by reading the hub whenever a watched object changes.
fn start(
    hub: Hub,
    first: FirstView,
    fleet: Option<Arc<Fleet>>,
    events: mpsc::UnboundedSender<BackendEvent>,
    effects: mpsc::UnboundedReceiver<Effect>,
) {
    let following = Following::start(hub.clone(), fleet, events.clone());
    let effects = Some(effects);
    match hub.kind {
        HubKind::Karmada => {
            tokio::spawn(run_cached::<karmada::delta::Live>(
                hub, first, events, effects, following,
            ));
        }
        HubKind::OpenClusterManagement => {
            tokio::spawn(run_cached::<ocm::delta::Live>(
                hub, first, events, effects, following,
            ));
        }
        HubKind::KubeFed => {
            tokio::spawn(run_cached::<kubefed_delta::Live>(
                hub, first, events, effects, following,
            ));
        }
    }
}

/// Starts reading the hub and taking the console's effects; `fleet` is the hub's fleet where
/// the engine could load it.
pub fn spawn(
    hub: Hub,
    first: FirstView,
    fleet: Option<Arc<Fleet>>,
    events: mpsc::UnboundedSender<BackendEvent>,
) -> mpsc::UnboundedSender<Effect> {
    let (effects, receiver) = mpsc::unbounded_channel();
    start(hub, first, fleet, events, receiver);
    effects
}

async fn next_effect(effects: &mut Option<mpsc::UnboundedReceiver<Effect>>) -> Option<Effect> {
    match effects {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

async fn run(
    hub: Hub,
    first: HubView,
    events: mpsc::UnboundedSender<BackendEvent>,
    mut effects: Option<mpsc::UnboundedReceiver<Effect>>,
    mut following: Following,
) {
    let mut shown = first;
    let _ = events.send(snapshot(&shown));
    if let Some(health) = health_snapshot(&shown) {
        let _ = events.send(health);
    }
    for (index, (_, status)) in shown.clusters.iter().enumerate() {
        let _ = events.send(BackendEvent::Cluster {
            cluster: index as u32,
            status: status.clone(),
        });
    }
    let mut expected: HashMap<CellRef, Expectation> = HashMap::new();
    let mut placements = PlacementFollow::default();
    placements.read(&hub, &events).await;
    let mut nudges = watch_changes(&hub).await;
    let mut ticker = tokio::time::interval(if nudges.is_some() {
        REREAD_EVERY
    } else {
        POLL_EVERY
    });
    ticker.tick().await;
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = next_nudge(&mut nudges) => {}
            effect = next_effect(&mut effects) => match effect {
                Some(Effect::FollowObject { cells }) => {
                    following.follow(&shown, &rendered_in(&shown), cells);
                    continue;
                }
                Some(Effect::StopFollowing) => {
                    following.follow(&shown, &rendered_in(&shown), Vec::new());
                    continue;
                }
                Some(Effect::UseFleet(fleet)) => {
                    following.use_fleet(&shown, &rendered_in(&shown), fleet.0);
                    continue;
                }
                Some(Effect::WritePlacement { namespace, name, patch, expect }) => {
                    if !placements.write(&hub, namespace, name, &patch, expect, &events).await {
                        continue;
                    }
                }
                Some(effect) => {
                    if !handle(&hub, &mut shown, effect, &mut expected, &events).await {
                        continue;
                    }
                }
                None => return,
            },
        }
        if events.is_closed() {
            return;
        }
        FULL_READS.fetch_add(1, Ordering::Relaxed);
        let mut next = match hub.read().await {
            Ok(view) => {
                let next = aligned(&shown, view);
                for event in announced(&added_rows(&shown, &next)) {
                    let _ = events.send(event);
                }
                next
            }
            Err(err) => unreachable_hub(&shown, &err.to_string()),
        };
        for notice in follow(&mut next, &mut expected) {
            let _ = events.send(BackendEvent::Notice(notice));
        }
        placements.read(&hub, &events).await;
        let changed = changes(&shown, &next);
        shown = next;
        following.view_changed(&shown, &rendered_in(&shown), &changed);
        for event in changed {
            if events.send(event).is_err() {
                return;
            }
        }
    }
}

/// The view a hub's backend starts from: the console's first view, and, when it was built from
/// the hub's informer caches ([`first_view`]), those caches, which the backend goes on with.
pub struct FirstView {
    pub view: HubView,
    cached: Option<Cached>,
}

/// A first view's caches, their changes since, and the live view it was built as (the
/// kind's [`LiveView`], taken back by [`run_cached`] so the caches are not read whole again).
struct Cached {
    caches: Caches,
    changes: mpsc::Receiver<Change>,
    live: Box<dyn std::any::Any + Send>,
}

impl FirstView {
    /// A view read whole (`Hub::read`): the backend starts its caches after it.
    pub fn read(view: HubView) -> FirstView {
        FirstView { view, cached: None }
    }

    /// What the informer caches behind it hold: objects and bytes ([`Caches::footprint`]);
    /// `None` for a view read whole.
    pub fn footprint(&self) -> Option<(usize, usize)> {
        self.cached.as_ref().map(|cached| cached.caches.footprint())
    }
}

/// How long the caches may keep failing before their first lists, without listing a single
/// object more, before the first view is read whole instead (which then says what is wrong with
/// the hub). Caches that are still listing are waited for: a whole read of a big hub is one
/// response of every object, which may never complete.
const CACHES_FAILING_FOR: Duration = Duration::from_secs(15);

/// Whether caches that are still listing have stalled: failing, and not one object more
/// listed, for [`CACHES_FAILING_FOR`].
#[derive(Default)]
struct Stalled {
    since: Option<Instant>,
    listed: u64,
}

impl Stalled {
    /// Takes in how the caches stand at `now`; true once they have stalled.
    fn after(&mut self, failing: bool, listed: u64, now: Instant) -> bool {
        let progressed = std::mem::replace(&mut self.listed, listed) != listed;
        if !failing || progressed {
            self.since = None;
            return false;
        }
        let since = *self.since.get_or_insert(now);
        now.duration_since(since) >= CACHES_FAILING_FOR
    }
}

/// The console's first view of a hub, built from its informer caches: they are started and
/// synced here (each kind listed a page at a time), so no full read of every Work at once
/// comes before them, and the backend goes on with the same caches. A hub whose kind watches
/// nothing, or whose caches keep failing to list, is read whole.
pub async fn first_view(hub: &Hub) -> Result<FirstView, crate::backend::hub::HubError> {
    let kinds = hub.watched_kinds().await;
    if kinds.is_empty() {
        return Ok(FirstView::read(hub.read().await?));
    }
    let (caches, changes) = Caches::start(
        &hub.client,
        kinds,
        |kind| hub.list_page_size(kind),
        hub.timeouts.read,
    );
    let mut stalled = Stalled::default();
    loop {
        tokio::select! {
            () = caches.ready() => break,
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
        if stalled.after(caches.failing(), caches.listed(), Instant::now()) {
            drop(changes);
            return Ok(FirstView::read(hub.read().await?));
        }
    }
    let kind = hub.kind;
    let kubeconfig = hub.kubeconfig.clone();
    let stores = caches.clone();
    let built = tokio::task::spawn_blocking(move || match kind {
        HubKind::Karmada => whole_view::<karmada::delta::Live>(kind, &stores, &kubeconfig),
        HubKind::OpenClusterManagement => {
            whole_view::<ocm::delta::Live>(kind, &stores, &kubeconfig)
        }
        HubKind::KubeFed => whole_view::<kubefed_delta::Live>(kind, &stores, &kubeconfig),
    })
    .await;
    match built {
        Ok(Ok((view, live))) => Ok(FirstView {
            view,
            cached: Some(Cached {
                caches,
                changes,
                live,
            }),
        }),
        Ok(Err(reason)) => Err(hub.failed(reason)),
        Err(err) => Err(hub.failed(err.to_string())),
    }
}

/// The live view a first view was built as, to go on with — only while the console shows
/// its rows and columns as they are. A Karmada or KubeFed console shows the rows of the fleet
/// it edits, which may be others or in another order; a row the live view added would then
/// have another index than the console gives it, and its cells and health would go to
/// another row. Without it the caches are read again in the console's rows and columns.
fn resumable<L: LiveView>(live: Box<dyn std::any::Any + Send>, shown: &HubView) -> Option<Box<L>> {
    live.downcast::<L>()
        .ok()
        .filter(|live| live.view().same_layout(shown))
}

/// The whole view of the stores as the hub has it: every member, in name order, and every row;
/// with the live view it came from.
fn whole_view<L: LiveView>(
    kind: HubKind,
    caches: &Caches,
    kubeconfig: &kube::config::Kubeconfig,
) -> Result<(HubView, Box<dyn std::any::Any + Send>), String> {
    let mut clusters = L::members(caches, kubeconfig)?;
    clusters.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    let shown = HubView {
        kind,
        clusters,
        rows: Vec::new(),
    };
    FULL_READS.fetch_add(1, Ordering::Relaxed);
    let live = L::read(&shown, caches, kubeconfig)?;
    Ok((live.view().clone(), Box::new(live)))
}

/// The console's backend on a hub whose reader keeps a live view: the caches list each kind
/// once, then every watched change is taken in on a blocking thread and sent as the cells it
/// changed. The whole view is built only at the start and after a relist or a reconnect.
async fn run_cached<L: LiveView>(
    hub: Hub,
    first: FirstView,
    events: mpsc::UnboundedSender<BackendEvent>,
    mut effects: Option<mpsc::UnboundedReceiver<Effect>>,
    mut following: Following,
) {
    let FirstView {
        view: first,
        cached,
    } = first;
    let _ = events.send(snapshot(&first));
    let mut unsettled = Unsettled::default();
    if let Some(health) = health_snapshot(&first) {
        let mut health = [health];
        unsettled.note(&mut health);
        let [health] = health;
        let _ = events.send(health);
    }
    for (index, (_, status)) in first.clusters.iter().enumerate() {
        let _ = events.send(BackendEvent::Cluster {
            cluster: index as u32,
            status: status.clone(),
        });
    }
    let (caches, mut changes, built) = match cached {
        Some(Cached {
            caches,
            changes,
            live,
        }) => (caches, changes, resumable::<L>(live, &first)),
        None => {
            let kinds = hub.watched_kinds().await;
            if kinds.is_empty() {
                return run(hub, first, events, effects, following).await;
            }
            let (caches, changes) = Caches::start(
                &hub.client,
                kinds,
                |kind| hub.list_page_size(kind),
                hub.timeouts.read,
            );
            let _ = events.send(BackendEvent::Notice(format!(
                "hub {}: syncing the caches of {} kinds…",
                hub.context,
                caches.kinds.len()
            )));
            caches.ready().await;
            (caches, changes, None)
        }
    };
    let started = match built {
        // The first view was built from these caches as this live view: the changes queued
        // since are taken in below, so there is nothing to read again.
        Some(live) => Ok(Ok((
            Pass::new(*live, caches.kinds.len(), &hub.kubeconfig),
            Vec::new(),
        ))),
        None => {
            let caches = caches.clone();
            let kubeconfig = hub.kubeconfig.clone();
            tokio::task::spawn_blocking(move || {
                Pass::<L>::start(&first, &caches, &kubeconfig).map_err(|reason| (first, reason))
            })
            .await
        }
    };
    let mut pass = match started {
        Ok(Ok((pass, news))) => {
            let cached: usize = (0..caches.kinds.len()).map(|kind| caches.count(kind)).sum();
            let _ = events.send(BackendEvent::Notice(format!(
                "hub {}: caches synced ({cached} objects); following the hub's watch events",
                hub.context
            )));
            let mut news = news;
            unsettled.note(&mut news);
            for event in news {
                let _ = events.send(event);
            }
            pass
        }
        Ok(Err((first, reason))) => {
            let _ = events.send(BackendEvent::Notice(format!(
                "hub {}: reading the caches: {reason}; reading the hub on each change instead",
                hub.context
            )));
            drop(changes);
            return run(hub, first, events, effects, following).await;
        }
        Err(_) => return,
    };
    let mut placements = PlacementFollow::default();
    placements.read(&hub, &events).await;
    let mut ticker = tokio::time::interval(REREAD_EVERY);
    ticker.tick().await;
    let (answers_to, mut answers_from) = mpsc::unbounded_channel();
    let mut asking = false;
    let mut survey = member_health::Survey::default();
    let mut members_tick = tokio::time::interval(ASK_MEMBERS_EVERY);
    members_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let mut placements_moved = false;
        let batch = tokio::select! {
            change = changes.recv() => match change {
                Some(change) => {
                    let mut batch = vec![change];
                    while batch.len() < BATCH {
                        match changes.try_recv() {
                            Ok(change) => batch.push(change),
                            Err(_) => break,
                        }
                    }
                    batch
                }
                None => return,
            },
            _ = ticker.tick() => {
                if pass.failing.is_none() {
                    let alive: Vec<u32> = pass.live.view().clusters.iter().enumerate()
                        .filter(|(_, (_, status))| status.health != Health::Unknown)
                        .map(|(index, _)| index as u32)
                        .collect();
                    if !alive.is_empty() {
                        let _ = events.send(BackendEvent::Heartbeat { clusters: alive });
                    }
                }
                // Followed edits that never arrive are reported after their time is up.
                placements_moved = placements.awaits_decisions();
                Vec::new()
            }
            _ = members_tick.tick(), if !asking => {
                let asked = if hub.kind.reports_health() {
                    unsettled.cells()
                } else {
                    survey.cells(pass.live.view())
                };
                if !asked.is_empty() {
                    // Members are read apart from the loop: a slow one holds up nothing.
                    let questions = member_health::questions(pass.live.view(), &asked);
                    let (hub, answers) = (hub.clone(), answers_to.clone());
                    asking = true;
                    tokio::spawn(async move {
                        let _ = answers.send(member_health::refine(&hub, questions).await);
                    });
                }
                continue;
            }
            Some(answers) = answers_from.recv() => {
                asking = false;
                let changed = if hub.kind.reports_health() {
                    unsettled.take(answers)
                } else {
                    survey.take(answers)
                };
                if !changed.is_empty() {
                    let _ = events.send(BackendEvent::Health(changed));
                }
                continue;
            }
            effect = next_effect(&mut effects) => match effect {
                Some(Effect::FollowObject { cells }) => {
                    following.follow(pass.live.view(), &rendered_by(&pass.live, &caches), cells);
                    continue;
                }
                Some(Effect::StopFollowing) => {
                    following.follow(pass.live.view(), &|_, _| None, Vec::new());
                    continue;
                }
                Some(Effect::UseFleet(fleet)) => {
                    following.use_fleet(pass.live.view(), &rendered_by(&pass.live, &caches), fleet.0);
                    continue;
                }
                Some(Effect::WritePlacement { namespace, name, patch, expect }) => {
                    placements_moved =
                        placements.write(&hub, namespace, name, &patch, expect, &events).await;
                    Vec::new()
                }
                Some(Effect::DryRun { fleet, cells, revision }) => {
                    let view = preview_view(&pass.live, &caches, &fleet.0, &cells);
                    dry_run(&hub, &view, &fleet.0, &cells, revision, &events).await;
                    continue;
                }
                Some(effect) => {
                    handle(&hub, pass.live.view_mut(), effect, &mut pass.expected, &events).await;
                    Vec::new()
                }
                None => return,
            },
        };
        if events.is_closed() {
            return;
        }
        placements_moved |= batch.iter().any(|change| match change {
            Change::Applied { kind, .. } | Change::Deleted { kind, .. } => {
                pass.live.moves_placements(*kind)
            }
            Change::Listed { .. } | Change::Failed { .. } => false,
        });
        if placements_moved {
            placements.read(&hub, &events).await;
        }
        let stores = caches.clone();
        let taken = tokio::task::spawn_blocking(move || {
            let news = pass.take_in(batch, &stores);
            (pass, news)
        })
        .await;
        let Ok((taken, news)) = taken else {
            return;
        };
        pass = taken;
        let mut news = news;
        unsettled.note(&mut news);
        following.view_changed(pass.live.view(), &rendered_by(&pass.live, &caches), &news);
        for event in news {
            if events.send(event).is_err() {
                return;
            }
        }
    }
}

/// What a full read's view holds as rendered for a row on a member.
fn rendered_in(view: &HubView) -> impl Fn(usize, &str) -> Option<Value> + '_ {
    |row, member| view.rows.get(row)?.objects.get(member).cloned()
}

/// What the hub rendered for a row on a member, looked up in the caches' stores.
fn rendered_by<'a, L: LiveView>(
    live: &'a L,
    caches: &'a Caches,
) -> impl Fn(usize, &str) -> Option<Value> + 'a {
    move |row, member| live.rendered(caches, row, member)
}

/// Rows new to the console, as the backend announces them: a notice and the rows to append
/// (nothing when there are none).
fn announced(added: &[AddedResource]) -> Vec<BackendEvent> {
    if added.is_empty() {
        return Vec::new();
    }
    let keys: Vec<String> = added.iter().map(|a| a.target.display_key()).collect();
    vec![
        BackendEvent::Notice(format!(
            "new on the hub since the console started: {} (added at the bottom)",
            keys.join(", ")
        )),
        BackendEvent::ResourcesAdded(added.to_vec()),
    ]
}

/// How many times, in this process, a hub backend built its whole view: a cached backend
/// once at the start, then only after a relist or a reconnect; a reading one on every change.
/// The console's tests read it to tell a watched change from a full read.
static FULL_READS: AtomicU64 = AtomicU64::new(0);

/// How many whole views the hub backends of this process have built.
pub fn full_reads() -> u64 {
    FULL_READS.load(Ordering::Relaxed)
}

/// How many changes one blocking pass takes in at most, so effects are not held up by a burst.
const BATCH: usize = 10_000;

/// How long the caches' watches must keep failing before the hub is shown unreachable: a
/// watcher retries at once, and a single failed watch request loses nothing.
const UNREACHABLE_AFTER: Duration = Duration::from_secs(10);

/// What the cached backend owns between passes; handed to a blocking thread for each pass.
pub struct Pass<L> {
    pub live: L,
    expected: HashMap<CellRef, Expectation>,
    /// Per kind: whether its first list arrived (a later one is a relist).
    listed: Vec<bool>,
    /// Why the hub stopped answering, while it does not (and the view says so).
    failing: Option<String>,
    /// Since when the caches' watches have been failing, while not yet for long enough to
    /// call the hub unreachable: a watcher retries, and one failed watch request loses
    /// nothing (the watch goes on from where it was).
    failing_since: Option<Instant>,
    kubeconfig: kube::config::Kubeconfig,
}

impl<L: LiveView> Pass<L> {
    /// The first whole view from the caches, in the rows and columns of `shown`, and what it
    /// changes in them.
    pub fn start(
        shown: &HubView,
        caches: &Caches,
        kubeconfig: &kube::config::Kubeconfig,
    ) -> Result<(Pass<L>, Vec<BackendEvent>), String> {
        let (live, events) = whole_read::<L>(shown, caches, kubeconfig)?;
        Ok((Pass::new(live, caches.kinds.len(), kubeconfig), events))
    }

    /// Goes on from `live`, a whole view of caches watching `kinds` kinds.
    fn new(live: L, kinds: usize, kubeconfig: &kube::config::Kubeconfig) -> Pass<L> {
        Pass {
            live,
            expected: HashMap::new(),
            listed: vec![false; kinds],
            failing: None,
            failing_since: None,
            kubeconfig: kubeconfig.clone(),
        }
    }

    /// Takes in a batch of changes (already in the stores) and returns the events that carry
    /// what they changed: the touched cells whose value changed, the columns whose health
    /// changed, the rows new to the console; a relist (or the hub answering again) rebuilds
    /// the whole view instead.
    pub fn take_in(&mut self, batch: Vec<Change>, caches: &Caches) -> Vec<BackendEvent> {
        let mut whole = false;
        let mut before = Before {
            rows: self.live.view().rows.len(),
            ..Before::default()
        };
        for change in batch {
            if !matches!(change, Change::Failed { .. }) {
                self.failing_since = None;
                if self.failing.take().is_some() {
                    // The hub answers again: what was missed while it did not is in the stores.
                    whole = true;
                }
            }
            match change {
                Change::Listed { kind } => {
                    if let Some(listed) = self.listed.get_mut(kind) {
                        whole |= *listed;
                        *listed = true;
                    }
                }
                Change::Failed { reason } => {
                    let since = *self.failing_since.get_or_insert_with(Instant::now);
                    if self.failing.is_none() && since.elapsed() >= UNREACHABLE_AFTER {
                        let view = self.live.view_mut();
                        for column in 0..view.clusters.len() {
                            before.keep(view, &Touched::Column(column));
                        }
                        *view = unreachable_hub(view, &reason);
                        self.failing = Some(reason);
                    }
                }
                // A whole read follows: it reads these from the stores.
                Change::Applied { .. } | Change::Deleted { .. } if whole => {}
                Change::Applied { kind, object } => {
                    before.keep(self.live.view(), &self.live.touches(kind, &object));
                    self.live.apply(caches, kind, &object, false);
                }
                Change::Deleted { kind, object } => {
                    before.keep(self.live.view(), &self.live.touches(kind, &object));
                    self.live.apply(caches, kind, &object, true);
                }
            }
        }
        if whole {
            let mut events = match whole_read::<L>(self.live.view(), caches, &self.kubeconfig) {
                Ok((live, events)) => {
                    self.live = live;
                    events
                }
                Err(reason) => vec![BackendEvent::Notice(format!(
                    "reading the hub's caches: {reason}"
                ))],
            };
            let mut whole = Before {
                rows: self.live.view().rows.len(),
                ..Before::default()
            };
            events.extend(self.follow_edits(caches, &mut whole));
            events.extend(whole.delta(self.live.view()));
            return events;
        }
        let mut events = self.follow_edits(caches, &mut before);
        events.extend(before.delta(self.live.view()));
        events
    }

    /// Holds each cell awaiting an edit at Pending until the hub rendered the preview (the
    /// rendered objects looked up in the stores, for those cells only); notices for the edits
    /// that arrived otherwise.
    fn follow_edits(&mut self, caches: &Caches, before: &mut Before) -> Vec<BackendEvent> {
        if self.expected.is_empty() {
            return Vec::new();
        }
        let cells: Vec<CellRef> = self.expected.keys().copied().collect();
        for cell in &cells {
            let (row, column) = (cell.resource as usize, cell.cluster as usize);
            before.keep(self.live.view(), &Touched::Cell { row, column });
            let Some(cluster) = self
                .live
                .view()
                .clusters
                .get(column)
                .map(|(s, _)| s.name.clone())
            else {
                continue;
            };
            let rendered = self.live.rendered(caches, row, &cluster);
            if let Some(shown) = self.live.view_mut().rows.get_mut(row) {
                match rendered {
                    Some(object) => shown.objects.insert(cluster, object),
                    None => shown.objects.remove(&cluster),
                };
            }
        }
        follow(self.live.view_mut(), &mut self.expected)
            .into_iter()
            .map(BackendEvent::Notice)
            .collect()
    }
}

/// The cells and columns a pass touched, as they were before it, and the rows it added.
#[derive(Default)]
struct Before {
    cells: std::collections::BTreeMap<CellRef, (CellStatus, Option<String>)>,
    health: std::collections::BTreeMap<CellRef, Option<CellHealth>>,
    columns: std::collections::BTreeMap<usize, ClusterStatus>,
    /// How many rows the view had; those after them are new.
    rows: usize,
}

impl Before {
    /// Keeps what `touched` covers in `view` (the first value seen wins).
    fn keep(&mut self, view: &HubView, touched: &Touched) {
        let columns = match touched {
            Touched::Column(column) => *column..*column + 1,
            Touched::All => 0..view.clusters.len(),
            _ => 0..0,
        };
        for column in columns {
            if let Some((_, status)) = view.clusters.get(column) {
                self.columns.entry(column).or_insert_with(|| status.clone());
            }
        }
        for (cell, value) in cells_of(view, touched) {
            self.cells.entry(cell).or_insert(value);
        }
        for (cell, health) in health_of(view, touched) {
            self.health.entry(cell).or_insert(health);
        }
    }

    /// The events that bring the console from what was kept to `view`: new rows announced,
    /// then the columns and cells whose value changed, and every cell of a new row.
    fn delta(self, view: &HubView) -> Vec<BackendEvent> {
        let mut events = Vec::new();
        let first_new = self.rows.min(view.rows.len());
        let added: Vec<AddedResource> = view
            .rows
            .iter()
            .skip(first_new)
            .map(|row| added_row(view.kind, row))
            .collect();
        events.extend(announced(&added));
        for (column, old) in self.columns {
            if let Some((_, status)) = view.clusters.get(column)
                && *status != old
            {
                events.push(BackendEvent::Cluster {
                    cluster: column as u32,
                    status: status.clone(),
                });
            }
        }
        let mut cells = Vec::new();
        for (cell, old) in self.cells {
            let (row, column) = (cell.resource as usize, cell.cluster as usize);
            if row >= first_new {
                continue;
            }
            let new = view.cell(row, column);
            if new != old {
                cells.push(CellUpdate {
                    cell,
                    status: new.0,
                    message: new.1,
                });
            }
        }
        for row in first_new..view.rows.len() {
            for (cell, (status, message)) in cells_of(view, &Touched::Row(row)) {
                cells.push(CellUpdate {
                    cell,
                    status,
                    message,
                });
            }
        }
        if !cells.is_empty() {
            events.push(BackendEvent::Cells(cells));
        }
        let mut health: Vec<HealthUpdate> = self
            .health
            .into_iter()
            .filter(|(cell, _)| (cell.resource as usize) < first_new)
            .filter_map(|(cell, old)| {
                let new = view.health(cell.resource as usize, cell.cluster as usize);
                (new != old).then_some(HealthUpdate { cell, health: new })
            })
            .collect();
        for row in first_new..view.rows.len() {
            health.extend(
                health_of(view, &Touched::Row(row))
                    .into_iter()
                    .filter(|(_, health)| health.is_some())
                    .map(|(cell, health)| HealthUpdate { cell, health }),
            );
        }
        if !health.is_empty() {
            events.push(BackendEvent::Health(health));
        }
        events
    }
}

/// The whole view from the caches in the rows and columns of `shown`, and the events that
/// bring the console from `shown` to it.
fn whole_read<L: LiveView>(
    shown: &HubView,
    caches: &Caches,
    kubeconfig: &kube::config::Kubeconfig,
) -> Result<(L, Vec<BackendEvent>), String> {
    FULL_READS.fetch_add(1, Ordering::Relaxed);
    let live = L::read(shown, caches, kubeconfig)?;
    let mut events = announced(&added_rows(shown, live.view()));
    events.extend(changes(shown, live.view()));
    Ok((live, events))
}

/// The rows `next` has beyond `shown`'s, as the console appends them.
fn added_rows(shown: &HubView, next: &HubView) -> Vec<AddedResource> {
    next.rows
        .iter()
        .skip(shown.rows.len())
        .map(|row| added_row(next.kind, row))
        .collect()
}

/// A row as the console appends it.
fn added_row(kind: HubKind, row: &HubRow) -> AddedResource {
    let dialect = match kind {
        HubKind::KubeFed => Dialect::KubeFed,
        HubKind::Karmada | HubKind::OpenClusterManagement => Dialect::Karmada,
    };
    AddedResource {
        target: row.target.clone(),
        dialect,
        source: row.source.clone(),
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
    let mut health = Vec::new();
    for row in 0..after.rows.len() {
        for column in 0..after.clusters.len() {
            let old = before.cell(row, column);
            let new = after.cell(row, column);
            // A row new to the console starts Pending there: every cell of it is news.
            let cell = CellRef {
                resource: row as u32,
                cluster: column as u32,
            };
            if old != new || row >= before.rows.len() {
                cells.push(CellUpdate {
                    cell,
                    status: new.0,
                    message: new.1,
                });
            }
            let new_health = after.health(row, column);
            let old_health = (row < before.rows.len())
                .then(|| before.health(row, column))
                .flatten();
            if new_health != old_health {
                health.push(HealthUpdate {
                    cell,
                    health: new_health,
                });
            }
        }
    }
    if !cells.is_empty() {
        events.push(BackendEvent::Cells(cells));
    }
    if !health.is_empty() {
        events.push(BackendEvent::Health(health));
    }
    if !alive.is_empty() {
        events.push(BackendEvent::Heartbeat { clusters: alive });
    }
    events
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::backend::hub::objects::delivered_form;
    use crate::model::{ClusterSpec, ResourceRef};

    /// A Karmada hub in memory: members a and b, binding `web` on both, both Works Applied
    /// with `color` blue; the pass started from the view of the same objects.
    mod cached {
        use std::sync::Arc;

        use crate::backend::hub::cache::CacheWriter;
        use kube::api::DynamicObject;
        use kube::runtime::watcher;

        use super::*;
        use crate::backend::hub::karmada::delta::Live;

        const WORKS: usize = 3;

        fn object(value: Value) -> DynamicObject {
            serde_json::from_value(value).expect("an object")
        }

        fn work(cluster: &str, applied: &str, color: &str, version: &str) -> DynamicObject {
            object(
                json!({"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
                "metadata": {"name": "web-w", "namespace": format!("karmada-es-{cluster}"),
                    "resourceVersion": version,
                    "labels": {"resourcebinding.karmada.io/permanent-id": "id-web"}},
                "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "web", "namespace": "shop"}, "data": {"color": color}}]}},
                "status": {"conditions": [{"type": "Applied", "status": applied,
                    "reason": "AppliedFailed", "message": "from the member"}]}}),
            )
        }

        #[test]
        fn the_first_view_from_the_caches_has_every_member_in_name_order_and_every_cell() {
            let (caches, _, _) = hub();
            let kubeconfig = kube::config::Kubeconfig::default();
            let (view, live) =
                whole_view::<Live>(HubKind::Karmada, &caches, &kubeconfig).expect("the view");
            let live = live
                .downcast::<Live>()
                .expect("the live view the backend goes on with");
            assert_eq!(format!("{:?}", live.view()), format!("{view:?}"));
            let names: Vec<&str> = view.clusters.iter().map(|(s, _)| s.name.as_str()).collect();
            assert_eq!(names, ["a", "b"]);
            assert_eq!(view.rows.len(), 1);
            assert_eq!(view.rows[0].target.display_key(), "ConfigMap/shop/web");
            assert_eq!(view.cell(0, 0).0, CellStatus::InSync);
            assert_eq!(view.cell(0, 1).0, CellStatus::InSync);
        }

        #[test]
        fn a_console_showing_other_rows_gets_a_new_rows_cells_and_health_at_its_own_index() {
            let (caches, mut writers, _) = hub();
            let kubeconfig = kube::config::Kubeconfig::default();
            let (view, live) =
                whole_view::<Live>(HubKind::Karmada, &caches, &kubeconfig).expect("the view");
            // The fleet the console edits has a template the hub has not bound yet, first.
            let waiting = ResourceRef {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: Some("shop".into()),
                name: "unbound".into(),
            };
            let shown = crate::backend::hub::view::in_rows_of(
                &[waiting, view.rows[0].target.clone()],
                view,
            );
            assert!(
                resumable::<Live>(live, &shown).is_none(),
                "the live view has one row, the console two"
            );
            let (mut pass, _) = Pass::<Live>::start(&shown, &caches, &kubeconfig).expect("start");
            let binding = object(json!({"apiVersion": "work.karmada.io/v1alpha2",
                "kind": "ResourceBinding",
                "metadata": {"name": "api-configmap", "namespace": "shop",
                    "labels": {"resourcebinding.karmada.io/permanent-id": "id-api"}},
                "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap",
                    "namespace": "shop", "name": "api"}, "clusters": [{"name": "a"}]},
                "status": {"aggregatedStatus": [{"clusterName": "a", "applied": true,
                    "health": "Healthy"}]}}));
            writers[1].apply_watcher_event(&watcher::Event::Apply(binding.clone()));
            let news = pass.take_in(
                vec![Change::Applied {
                    kind: 1,
                    object: Arc::new(binding),
                }],
                &caches,
            );
            let added: Vec<String> = news
                .iter()
                .filter_map(|e| match e {
                    BackendEvent::ResourcesAdded(rows) => Some(rows.clone()),
                    _ => None,
                })
                .flatten()
                .map(|row| row.target.display_key())
                .collect();
            assert_eq!(added, ["ConfigMap/shop/api"], "{news:?}");
            let health: Vec<(u32, u32)> = news
                .iter()
                .filter_map(|e| match e {
                    BackendEvent::Health(updates) => Some(updates.clone()),
                    _ => None,
                })
                .flatten()
                .map(|u| (u.cell.resource, u.cell.cluster))
                .collect();
            assert_eq!(health, [(2, 0)], "the console's third row: {news:?}");
            assert!(
                cells(&news).iter().all(|u| u.cell.resource == 2),
                "{news:?}"
            );
        }

        fn hub() -> (Caches, Vec<CacheWriter>, Pass<Live>) {
            let cluster = |name: &str| {
                object(
                    json!({"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                    "metadata": {"name": name},
                    "status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
                )
            };
            let binding = object(json!({"apiVersion": "work.karmada.io/v1alpha2",
                "kind": "ResourceBinding",
                "metadata": {"name": "web-configmap", "namespace": "shop",
                    "labels": {"resourcebinding.karmada.io/permanent-id": "id-web"}},
                "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap",
                    "namespace": "shop", "name": "web"},
                    "clusters": [{"name": "a"}, {"name": "b"}]}}));
            let (caches, writers) = Caches::in_memory(
                crate::backend::hub::karmada::delta::kinds(),
                [
                    (0, cluster("a")),
                    (0, cluster("b")),
                    (1, binding),
                    (WORKS, work("a", "True", "blue", "1")),
                    (WORKS, work("b", "True", "blue", "1")),
                ],
            );
            let kubeconfig = kube::config::Kubeconfig::default();
            // The console's first view, as launch builds it from the caches.
            let (shown, _) =
                whole_view::<Live>(HubKind::Karmada, &caches, &kubeconfig).expect("view");
            let (mut pass, news) =
                Pass::<Live>::start(&shown, &caches, &kubeconfig).expect("start");
            assert!(
                news.iter()
                    .all(|e| matches!(e, BackendEvent::Heartbeat { .. })),
                "the same objects: no cell to send {news:?}"
            );
            for kind in 0..caches.kinds.len() {
                assert!(
                    pass.take_in(vec![Change::Listed { kind }], &caches)
                        .is_empty()
                );
            }
            (caches, writers, pass)
        }

        fn watched(writers: &mut [CacheWriter], object: DynamicObject) -> Change {
            writers[WORKS].apply_watcher_event(&watcher::Event::Apply(object.clone()));
            Change::Applied {
                kind: WORKS,
                object: Arc::new(object),
            }
        }

        fn cells(events: &[BackendEvent]) -> Vec<CellUpdate> {
            events
                .iter()
                .flat_map(|event| match event {
                    BackendEvent::Cells(cells) => cells.clone(),
                    _ => Vec::new(),
                })
                .collect()
        }

        #[test]
        fn a_work_status_change_reaches_the_console_as_exactly_its_cell() {
            let (caches, mut writers, mut pass) = hub();
            let reads = full_reads();
            let change = watched(&mut writers, work("b", "False", "blue", "2"));
            let events = pass.take_in(vec![change], &caches);
            assert_eq!(
                cells(&events),
                [CellUpdate {
                    cell: CellRef {
                        resource: 0,
                        cluster: 1
                    },
                    status: CellStatus::Failed("AppliedFailed: from the member".into()),
                    message: None,
                }]
            );
            assert_eq!(events.len(), 1, "{events:?}");
            let same = watched(&mut writers, work("b", "False", "blue", "3"));
            assert!(
                pass.take_in(vec![same], &caches).is_empty(),
                "a Work that changed nothing the cell shows sends nothing"
            );
            assert!(full_reads() >= reads, "never fewer");
        }

        #[test]
        fn karmadas_aggregated_health_reaches_the_console_as_that_cells_health_alone() {
            let (caches, mut writers, mut pass) = hub();
            let binding = object(json!({"apiVersion": "work.karmada.io/v1alpha2",
                "kind": "ResourceBinding",
                "metadata": {"name": "web-configmap", "namespace": "shop",
                    "labels": {"resourcebinding.karmada.io/permanent-id": "id-web"}},
                "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap",
                    "namespace": "shop", "name": "web"},
                    "clusters": [{"name": "a"}, {"name": "b"}]},
                "status": {"aggregatedStatus": [{"clusterName": "b", "applied": true,
                    "health": "Unhealthy"}]}}));
            writers[1].apply_watcher_event(&watcher::Event::Apply(binding.clone()));
            let events = pass.take_in(
                vec![Change::Applied {
                    kind: 1,
                    object: Arc::new(binding),
                }],
                &caches,
            );
            assert!(cells(&events).is_empty(), "the sync status did not move");
            let health: Vec<HealthUpdate> = events
                .iter()
                .flat_map(|event| match event {
                    BackendEvent::Health(updates) => updates.clone(),
                    _ => Vec::new(),
                })
                .collect();
            assert_eq!(
                health,
                [HealthUpdate {
                    cell: CellRef {
                        resource: 0,
                        cluster: 1
                    },
                    health: Some(CellHealth {
                        kind: crate::model::HealthKind::Progressing,
                        reason: "Karmada reports Unhealthy".into(),
                        since: None
                    }),
                }]
            );
        }

        #[test]
        fn a_failed_watch_request_leaves_the_view_alone_and_a_lasting_failure_marks_the_hub_unreachable()
         {
            let (caches, mut writers, mut pass) = hub();
            let failed = || Change::Failed {
                reason: "watch stream failed: timed out".into(),
            };
            assert!(
                pass.take_in(vec![failed()], &caches).is_empty(),
                "one failed watch request changes nothing on screen"
            );
            let change = watched(&mut writers, work("b", "False", "blue", "2"));
            let events = pass.take_in(vec![change], &caches);
            assert_eq!(cells(&events).len(), 1, "the watch went on: {events:?}");

            pass.take_in(vec![failed()], &caches);
            pass.failing_since = Some(Instant::now() - UNREACHABLE_AFTER);
            let events = pass.take_in(vec![failed()], &caches);
            let down: Vec<&ClusterStatus> = events
                .iter()
                .filter_map(|event| match event {
                    BackendEvent::Cluster { status, .. } => Some(status),
                    _ => None,
                })
                .collect();
            assert_eq!(down.len(), 2, "every cluster: {events:?}");
            assert!(down.iter().all(|status| status.health == Health::Unknown));
        }

        #[test]
        fn a_relist_rebuilds_the_whole_view_and_sends_what_it_changed() {
            let (caches, mut writers, mut pass) = hub();
            // The store relisted with a change the watch never delivered.
            writers[WORKS].apply_watcher_event(&watcher::Event::Init);
            writers[WORKS]
                .apply_watcher_event(&watcher::Event::InitApply(work("a", "False", "blue", "5")));
            writers[WORKS]
                .apply_watcher_event(&watcher::Event::InitApply(work("b", "True", "blue", "5")));
            writers[WORKS].apply_watcher_event(&watcher::Event::InitDone);
            let events = pass.take_in(vec![Change::Listed { kind: WORKS }], &caches);
            let changed: Vec<CellRef> = cells(&events).iter().map(|c| c.cell).collect();
            assert_eq!(
                changed,
                [CellRef {
                    resource: 0,
                    cluster: 0
                }]
            );
        }

        #[test]
        fn a_followed_edit_holds_its_cell_pending_until_the_stored_work_renders_it() {
            let (caches, mut writers, mut pass) = hub();
            let config_map = |color: &str| {
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "web", "namespace": "shop"}, "data": {"color": color}})
            };
            let cell = CellRef {
                resource: 0,
                cluster: 0,
            };
            pass.expected.insert(
                cell,
                Expectation {
                    object: delivered_form(&config_map("red")),
                    title: "OverridePolicy shop/web".into(),
                    since: Instant::now(),
                },
            );
            let events = pass.take_in(Vec::new(), &caches);
            assert_eq!(cells(&events)[0].status, CellStatus::Pending, "still blue");
            let change = watched(&mut writers, work("a", "True", "red", "7"));
            let events = pass.take_in(vec![change], &caches);
            assert_eq!(cells(&events)[0].status, CellStatus::InSync, "{events:?}");
            assert!(pass.expected.is_empty(), "arrived: no longer followed");
        }
    }

    fn target(name: &str) -> ResourceRef {
        ResourceRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("shop".into()),
            name: name.into(),
        }
    }

    fn view(rows: &[(&str, Option<Value>)]) -> HubView {
        let member = ClusterSpec {
            name: "m1".into(),
            ..ClusterSpec::default()
        };
        HubView {
            kind: HubKind::Karmada,
            clusters: vec![(member, ClusterStatus::default())],
            rows: rows
                .iter()
                .map(|(name, object)| HubRow {
                    target: target(name),
                    source: format!("ResourceBinding shop/{name}"),
                    carrier: None,
                    cells: [(
                        "m1".to_string(),
                        (CellStatus::InSync, Some("Work Applied".into())),
                    )]
                    .into(),
                    not_placed: String::new(),
                    objects: object
                        .iter()
                        .map(|o| ("m1".to_string(), o.clone()))
                        .collect(),
                    health: Default::default(),
                })
                .collect(),
        }
    }

    #[test]
    fn caches_that_fail_while_still_listing_are_waited_for() {
        let start = Instant::now();
        let at = |seconds| start + Duration::from_secs(seconds);
        let mut stalled = Stalled::default();
        // A watcher fails now and then while the big list goes on page by page.
        for second in 0..60 {
            assert!(!stalled.after(true, 500 * (second + 1), at(second)));
        }
        // The list stops getting anywhere: the caches have stalled 15 s later, not before.
        assert!(!stalled.after(true, 30_000, at(60)));
        assert!(!stalled.after(true, 30_000, at(74)));
        assert!(stalled.after(true, 30_000, at(75)));
        // A watcher that recovers starts the count again.
        assert!(!stalled.after(false, 30_000, at(76)));
        assert!(!stalled.after(true, 30_000, at(77)));
        assert!(!stalled.after(true, 30_000, at(91)));
        assert!(stalled.after(true, 30_000, at(92)));
    }

    #[test]
    fn bindings_that_appear_later_are_added_at_the_bottom_once() {
        let shown = view(&[("web", None), ("db", None)]);
        let later = view(&[("api", None), ("web", None)]);
        let next = aligned(&shown, later.clone());
        let keys: Vec<String> = next.rows.iter().map(|r| r.target.display_key()).collect();
        assert_eq!(
            keys,
            [
                "ConfigMap/shop/web",
                "ConfigMap/shop/db",
                "ConfigMap/shop/api"
            ],
            "shown rows keep their place (db stays, gone); the newcomer goes last"
        );
        let added = added_rows(&shown, &next);
        assert_eq!(added.len(), 1);
        assert_eq!(added[0].target.display_key(), "ConfigMap/shop/api");
        let updated: Vec<u32> = changes(&shown, &next)
            .into_iter()
            .flat_map(|event| match event {
                BackendEvent::Cells(cells) => cells.into_iter().map(|c| c.cell.resource).collect(),
                _ => Vec::new(),
            })
            .collect();
        assert!(
            updated.contains(&2),
            "the new row's cells are sent: {updated:?}"
        );
        assert!(
            added_rows(&next, &aligned(&next, later)).is_empty(),
            "added once"
        );
    }
}
