//! Where the console's backend on a hub gets its view, and how the view is kept current: from
//! the hub's informer caches, each watched change taken in as the cells it touches
//! (`CacheReads`, the main path), or, for a hub whose kind watches nothing or whose caches
//! cannot be read, by reading the hub whole whenever a watched object changes and on a timer
//! (`WholeReads`, the fallback). Either is the `ViewSource` the backend's loop is given.
//! A source says what woke the loop and brings the view up to date; it must not carry out the
//! console's effects (the loop hands them to `effects`) nor write to the hub.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::{Interval, MissedTickBehavior};

use super::effects::{After, Expectation, PlacementFollow, follow};
use super::first_view::{Cached, KindLive, resumable};
use super::view_changes::{Pass, added_rows, announced, changes, count_full_read, unreachable_hub};
use crate::backend::hub::cache::{Caches, Change, IncrementalView, value_of};
use crate::backend::hub::connect::Hub;
use crate::backend::hub::error::HubError;
use crate::backend::hub::member_health::{self, Survey, Unsettled};
use crate::backend::hub::preview::preview_view;
use crate::backend::hub::view::{HubView, aligned};
use crate::engine::Fleet;
use crate::engine::fleet::interpreted::use_hub_for_health;
use crate::messages::{BackendEvent, CellRef, HealthUpdate};
use crate::model::Health;

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

/// How many changes one blocking pass takes in at most, so effects are not held up by a burst.
const BATCH: usize = 10_000;

/// Where the backend's view of a hub comes from: what wakes its loop besides an effect, and
/// how the view is brought up to date after that.
pub(super) trait ViewSource: Send + Sized {
    /// What woke the loop, or what an effect asks of the view: taken in by
    /// [`ViewSource::refresh`].
    type Wake: Send;

    /// The view as the console was last sent it.
    fn view(&self) -> &HubView;

    /// The view and the cells awaiting a written edit, for an effect to mark.
    fn edits(&mut self) -> (&mut HubView, &mut HashMap<CellRef, Expectation>);

    /// What the hub rendered for row `row` on the named member, where it keeps one.
    fn rendered(&self, row: usize, member: &str) -> Option<Value>;

    /// Waits until something may have changed the view; `None` once the source has ended.
    fn wait(
        &mut self,
        hub: &Hub,
        events: &mpsc::UnboundedSender<BackendEvent>,
    ) -> impl Future<Output = Option<Self::Wake>> + Send;

    /// What the view needs after an effect that did `after` on the hub; `None`: nothing.
    fn after_effect(&self, after: After) -> Option<Self::Wake>;

    /// Brings the view up to date with what `wake` says; with the events that carry what
    /// changed, `None` when the source cannot go on.
    fn refresh(
        self,
        wake: Self::Wake,
        hub: &Hub,
        placements: &mut PlacementFollow,
        events: &mpsc::UnboundedSender<BackendEvent>,
    ) -> impl Future<Output = Option<(Self, Vec<BackendEvent>)>> + Send;

    /// The view a preview of `cells` compares against, with what the hub rendered for them now.
    fn preview_view(
        &self,
        hub: &Hub,
        fleet: &Fleet,
        cells: &[CellRef],
    ) -> impl Future<Output = Result<HubView, HubError>> + Send;
}

/// The fallback: the hub read whole whenever a watched object changes, and on a timer besides
/// (every few seconds for a hub whose changes are not watched).
pub(super) struct WholeReads {
    shown: HubView,
    expected: HashMap<CellRef, Expectation>,
    nudges: Option<mpsc::UnboundedReceiver<()>>,
    ticker: Interval,
}

impl WholeReads {
    /// Goes on from `first`, the view the console was sent.
    pub(super) async fn start(hub: &Hub, first: HubView) -> WholeReads {
        let nudges = watch_changes(hub).await;
        let mut ticker = tokio::time::interval(if nudges.is_some() {
            REREAD_EVERY
        } else {
            POLL_EVERY
        });
        ticker.tick().await;
        WholeReads {
            shown: first,
            expected: HashMap::new(),
            nudges,
            ticker,
        }
    }
}

impl ViewSource for WholeReads {
    /// A watched change or the timer: either reads the hub again.
    type Wake = ();

    fn view(&self) -> &HubView {
        &self.shown
    }

    fn edits(&mut self) -> (&mut HubView, &mut HashMap<CellRef, Expectation>) {
        (&mut self.shown, &mut self.expected)
    }

    fn rendered(&self, row: usize, member: &str) -> Option<Value> {
        self.shown.rows.get(row)?.objects.get(member).cloned()
    }

    async fn wait(
        &mut self,
        _hub: &Hub,
        _events: &mpsc::UnboundedSender<BackendEvent>,
    ) -> Option<()> {
        tokio::select! {
            _ = self.ticker.tick() => {}
            _ = next_nudge(&mut self.nudges) => {}
        }
        Some(())
    }

    /// Only a write changes what the next read would show.
    fn after_effect(&self, after: After) -> Option<()> {
        (after != After::Nothing).then_some(())
    }

    async fn refresh(
        mut self,
        (): (),
        hub: &Hub,
        placements: &mut PlacementFollow,
        events: &mpsc::UnboundedSender<BackendEvent>,
    ) -> Option<(Self, Vec<BackendEvent>)> {
        count_full_read();
        // The hub's interpreters may have changed with the rest: the members' objects are
        // judged by the ones it runs now.
        if let Ok(interpreters) = hub.interpreters().await {
            use_hub_for_health(&interpreters, None);
        }
        let mut next = match hub.read().await {
            Ok(view) => {
                let next = aligned(&self.shown, view);
                for event in announced(&added_rows(&self.shown, &next)) {
                    let _ = events.send(event);
                }
                next
            }
            Err(err) => unreachable_hub(&self.shown, &err.to_string()),
        };
        for notice in follow(&mut next, &mut self.expected) {
            let _ = events.send(BackendEvent::Notice(notice));
        }
        placements.read(hub, events).await;
        let changed = changes(&self.shown, &next);
        self.shown = next;
        Some((self, changed))
    }

    /// A whole read: the hub's rendered objects for every cell.
    async fn preview_view(
        &self,
        hub: &Hub,
        _fleet: &Fleet,
        _cells: &[CellRef],
    ) -> Result<HubView, HubError> {
        hub.read().await
    }
}

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

/// The main path, for a hub whose reader keeps an incremental view: the caches list each kind once,
/// then every watched change is taken in on a blocking thread and sent as the cells it
/// changed. The whole view is built only at the start and after a relist or a reconnect.
/// Members are asked how their workloads are doing where the hub's word is not enough.
pub(super) struct CacheReads<L: IncrementalView> {
    pass: Pass<L>,
    caches: Caches,
    changes: mpsc::Receiver<Change<L::Object>>,
    ticker: Interval,
    unsettled: Unsettled,
    survey: Survey,
    members_tick: Interval,
    /// Whether members are being asked now (one pass at a time).
    asking: bool,
    answers_to: mpsc::UnboundedSender<Vec<HealthUpdate>>,
    answers_from: mpsc::UnboundedReceiver<Vec<HealthUpdate>>,
}

/// How a [`CacheReads`] started.
pub(super) enum Start<L: IncrementalView> {
    /// It follows the caches.
    Cached(Box<CacheReads<L>>),
    /// The hub's caches cannot be read: the hub is read whole instead, from this view.
    ReadWhole(HubView),
    /// Building its view failed outright: the backend ends.
    Ended,
}

/// What woke a [`CacheReads`] loop.
pub(super) enum CacheWake<O> {
    /// A batch of the caches' changes.
    Changes(Vec<Change<O>>),
    /// The slow timer.
    Tick,
    /// An effect was carried out (`placement`: OCM took an edited Placement).
    Effect { placement: bool },
}

impl<L: KindLive> CacheReads<L> {
    /// Goes on from `first`, the view the console was sent (`unsettled` has noted its health):
    /// with the first view's caches, and the incremental view it was built as while the console
    /// shows its rows and columns, or with caches started and synced here.
    pub(super) async fn start(
        hub: &Hub,
        first: HubView,
        cached: Option<Cached>,
        mut unsettled: Unsettled,
        events: &mpsc::UnboundedSender<BackendEvent>,
    ) -> Start<L> {
        let resumed = cached.and_then(|Cached { caches, live }| {
            let (live, changes) = L::from_built(live)?;
            Some((caches, changes, resumable(live, &first)))
        });
        let (caches, changes, built) = match resumed {
            Some(resumed) => resumed,
            None => {
                let kinds = hub.watched_kinds().await;
                if kinds.is_empty() {
                    return Start::ReadWhole(first);
                }
                let (caches, changes) = Caches::start(
                    &hub.client,
                    kinds,
                    |kind| hub.list_page_size(kind),
                    hub.timeouts.read,
                    L::parse,
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
            // The first view was built from these caches as this incremental view: the changes queued
            // since are the loop's first passes, so there is nothing to read again.
            Some(live) => Ok(Ok((
                Pass::new(live, caches.kinds.len(), &hub.kubeconfig),
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
        let pass = match started {
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
                return Start::ReadWhole(first);
            }
            Err(_) => return Start::Ended,
        };
        let mut ticker = tokio::time::interval(REREAD_EVERY);
        ticker.tick().await;
        let (answers_to, answers_from) = mpsc::unbounded_channel();
        let mut members_tick = tokio::time::interval(ASK_MEMBERS_EVERY);
        members_tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        Start::Cached(Box::new(CacheReads {
            pass,
            caches,
            changes,
            ticker,
            unsettled,
            survey: Survey::default(),
            members_tick,
            asking: false,
            answers_to,
            answers_from,
        }))
    }

    /// Asks the members about the cells whose health the hub's word does not settle.
    fn ask_members(&mut self, hub: &Hub) {
        let asked = if hub.kind.reports_health() {
            self.unsettled.cells()
        } else {
            self.survey.cells(self.pass.live.view())
        };
        if !asked.is_empty() {
            // Members are read apart from the loop: a slow one holds up nothing.
            let questions = member_health::questions(self.pass.live.view(), &asked);
            let (hub, answers) = (hub.clone(), self.answers_to.clone());
            self.asking = true;
            tokio::spawn(async move {
                let _ = answers.send(member_health::refine(&hub, questions).await);
            });
        }
    }

    /// The hub's resource interpreter customizations (held in the caches' kind `kind`)
    /// changed: the members' objects are judged by them from now on, and the members are asked
    /// again at once about the cells the hub's word does not settle.
    fn interpreters_changed(
        &mut self,
        kind: usize,
        hub: &Hub,
        events: &mpsc::UnboundedSender<BackendEvent>,
    ) {
        let held: Vec<Value> = self
            .caches
            .each_object(kind)
            .map(|o| value_of(&o))
            .collect();
        use_hub_for_health(&hub.interpreters_held(&held), None);
        let _ = events.send(BackendEvent::Notice(format!(
            "hub {}: its resource interpreter customizations changed ({} now); the members' objects are judged by them",
            hub.context,
            held.len()
        )));
        self.members_tick.reset_immediately();
    }

    /// Takes in the members' answers: the health updates that change what the console shows.
    fn answered(
        &mut self,
        hub: &Hub,
        answers: Vec<HealthUpdate>,
        events: &mpsc::UnboundedSender<BackendEvent>,
    ) {
        self.asking = false;
        let changed = if hub.kind.reports_health() {
            self.unsettled.take(answers)
        } else {
            self.survey.take(answers)
        };
        if !changed.is_empty() {
            let _ = events.send(BackendEvent::Health(changed));
        }
    }

    /// The clusters whose health was read, unless the hub has stopped answering.
    fn heartbeat(&self, events: &mpsc::UnboundedSender<BackendEvent>) {
        if self.pass.hub_failing() {
            return;
        }
        let view = self.pass.live.view();
        let alive: Vec<u32> = view
            .clusters
            .iter()
            .enumerate()
            .filter(|(_, (_, status))| status.health != Health::Unknown)
            .map(|(index, _)| index as u32)
            .collect();
        if !alive.is_empty() {
            let _ = events.send(BackendEvent::Heartbeat { clusters: alive });
        }
    }
}

impl<L: KindLive> ViewSource for CacheReads<L> {
    type Wake = CacheWake<L::Object>;

    fn view(&self) -> &HubView {
        self.pass.live.view()
    }

    fn edits(&mut self) -> (&mut HubView, &mut HashMap<CellRef, Expectation>) {
        (self.pass.live.view_mut(), &mut self.pass.expected)
    }

    fn rendered(&self, row: usize, member: &str) -> Option<Value> {
        self.pass.live.rendered(&self.caches, row, member)
    }

    async fn wait(
        &mut self,
        hub: &Hub,
        events: &mpsc::UnboundedSender<BackendEvent>,
    ) -> Option<CacheWake<L::Object>> {
        loop {
            tokio::select! {
                change = self.changes.recv() => {
                    let mut batch = vec![change?];
                    while batch.len() < BATCH {
                        match self.changes.try_recv() {
                            Ok(change) => batch.push(change),
                            Err(_) => break,
                        }
                    }
                    return Some(CacheWake::Changes(batch));
                }
                _ = self.ticker.tick() => {
                    self.heartbeat(events);
                    return Some(CacheWake::Tick);
                }
                _ = self.members_tick.tick(), if !self.asking => self.ask_members(hub),
                Some(answers) = self.answers_from.recv() => self.answered(hub, answers, events),
            }
        }
    }

    /// Every effect goes through a pass: the cells awaiting an edit are looked up again.
    fn after_effect(&self, after: After) -> Option<CacheWake<L::Object>> {
        Some(CacheWake::Effect {
            placement: after == After::Placement,
        })
    }

    async fn refresh(
        mut self,
        wake: CacheWake<L::Object>,
        hub: &Hub,
        placements: &mut PlacementFollow,
        events: &mpsc::UnboundedSender<BackendEvent>,
    ) -> Option<(Self, Vec<BackendEvent>)> {
        let (batch, placements_moved) = match wake {
            CacheWake::Changes(batch) => {
                let moved = batch.iter().any(|change| match change {
                    Change::Applied { kind, .. } | Change::Deleted { kind, .. } => {
                        self.pass.live.moves_placements(*kind)
                    }
                    Change::Listed { .. } | Change::Failed { .. } => false,
                });
                (batch, moved)
            }
            // Followed edits that never arrive are reported after their time is up.
            CacheWake::Tick => (Vec::new(), placements.awaits_decisions()),
            CacheWake::Effect { placement } => (Vec::new(), placement),
        };
        if placements_moved {
            placements.read(hub, events).await;
        }
        if let Some(kind) = L::interpreters_kind()
            && batch.iter().any(|change| change.kind() == Some(kind))
        {
            self.interpreters_changed(kind, hub, events);
        }
        let mut pass = self.pass;
        let stores = self.caches.clone();
        let taken = tokio::task::spawn_blocking(move || {
            let news = pass.take_in(batch, &stores);
            (pass, news)
        })
        .await;
        let (pass, mut news) = taken.ok()?;
        self.pass = pass;
        self.unsettled.note(&mut news);
        Some((self, news))
    }

    /// The rows of `cells`, with the objects the hub rendered for them looked up in the stores
    /// (at once: the incremental view is not shared across threads, so nothing waits on it).
    fn preview_view(
        &self,
        _hub: &Hub,
        fleet: &Fleet,
        cells: &[CellRef],
    ) -> impl Future<Output = Result<HubView, HubError>> + Send {
        std::future::ready(Ok(preview_view(
            &self.pass.live,
            &self.caches,
            fleet,
            cells,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::hub::console::fixtures::silent_hub;
    use crate::backend::hub::view::HubRow;
    use crate::model::{ClusterSpec, ClusterStatus, HubKind, ResourceRef};

    fn shown() -> HubView {
        let member = ClusterSpec {
            name: "a".into(),
            ..ClusterSpec::default()
        };
        let ready = ClusterStatus {
            health: Health::Ready,
            ..ClusterStatus::default()
        };
        HubView {
            kind: HubKind::Karmada,
            clusters: vec![(member, ready)],
            rows: vec![HubRow {
                target: ResourceRef {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    namespace: Some("shop".into()),
                    name: "web".into(),
                },
                source: "ResourceBinding shop/web-configmap".into(),
                carrier: None,
                cells: Default::default(),
                not_placed: String::new(),
                objects: Default::default(),
                health: Default::default(),
            }],
        }
    }

    #[tokio::test]
    async fn reading_whole_only_a_write_reads_again_and_a_silent_hub_shows_its_clusters_unknown() {
        let source = WholeReads {
            shown: shown(),
            expected: HashMap::new(),
            nudges: None,
            ticker: tokio::time::interval(POLL_EVERY),
        };
        assert_eq!(source.after_effect(After::Nothing), None, "nothing written");
        assert_eq!(source.after_effect(After::Cells), Some(()));
        assert_eq!(source.after_effect(After::Placement), Some(()));

        let (events, _console) = mpsc::unbounded_channel();
        let mut placements = PlacementFollow::default();
        let (source, news) = source
            .refresh((), &silent_hub(), &mut placements, &events)
            .await
            .expect("a whole read goes on");
        let down: Vec<(u32, Health)> = news
            .iter()
            .filter_map(|event| match event {
                BackendEvent::Cluster { cluster, status } => Some((*cluster, status.health)),
                _ => None,
            })
            .collect();
        assert_eq!(down, [(0, Health::Unknown)], "{news:?}");
        assert_eq!(source.view().clusters[0].1.health, Health::Unknown);
        assert_eq!(source.view().rows.len(), 1, "the shown row stays");
    }
}
