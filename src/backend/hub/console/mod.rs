//! The console's backend on a hub, driven by the console's backend loop
//! (`backend::console_loop`), given the `ViewSource` its view comes from (the hub's informer
//! caches, or whole reads of the hub where those cannot be had). It sends the first view, then
//! what changed — cluster health as the hub reports it, and one cell per (row, cluster) as the
//! hub's reader words it; rows the hub gains later are appended, so a shown row keeps its
//! index. With an effect channel it hands confirmed edits to `effects` (which follows each until
//! the hub has rendered, or decided, what its preview said) and answers the editors' previews
//! (`preview`). Either way it reads followed cells on their members for the object view
//! (`object_view`). Read-only, its channel lets only those reads through, so no code path can
//! write to the hub. It must not build or change the view itself (its source does) nor write
//! to the hub but through `effects`.

pub mod effects;
pub mod first_view;
#[cfg(test)]
mod fixtures;
pub mod view_changes;
pub mod view_source;

use std::sync::Arc;

use tokio::sync::mpsc;

use self::effects::{PlacementFollow, carry_out};
use self::first_view::{FirstView, KindLive};
use self::view_changes::{health_snapshot, snapshot};
use self::view_source::{CacheReads, Start, ViewSource, WholeReads};
use super::connect::Hub;
use super::member_health::Unsettled;
use super::object_view::ObjectReads;
use super::preview::dry_run;
use super::{karmada, kubefed_delta, ocm};
use crate::backend::console_loop::{self, ConsoleBackend};
use crate::backend::read_only::reads_only;
use crate::engine::Fleet;
use crate::messages::{BackendEvent, Effect};
use crate::model::HubKind;

/// Starts the backend on a hub and takes the console's effects; `first` is the view the
/// console's rows and columns were built from, `fleet` the hub's fleet where the engine could
/// load it.
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

/// Starts the backend on a hub without any way to write to it. The channel returned takes only
/// the object view's reads.
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

/// Runs the backend with the incremental view of the hub's kind.
fn start(
    hub: Hub,
    first: FirstView,
    fleet: Option<Arc<Fleet>>,
    events: mpsc::UnboundedSender<BackendEvent>,
    effects: mpsc::UnboundedReceiver<Effect>,
) {
    let following = ObjectReads::start(hub.clone(), fleet, events.clone());
    match hub.kind {
        HubKind::Karmada => {
            tokio::spawn(run::<karmada::delta::Live>(
                hub, first, events, effects, following,
            ));
        }
        HubKind::OpenClusterManagement => {
            tokio::spawn(run::<ocm::delta::Live>(
                hub, first, events, effects, following,
            ));
        }
        HubKind::KubeFed => {
            tokio::spawn(run::<kubefed_delta::Live>(
                hub, first, events, effects, following,
            ));
        }
    }
}

/// Sends the first view, then keeps it current from the hub's informer caches, or, where they
/// cannot be had, by reading the hub whole.
async fn run<L: KindLive>(
    hub: Hub,
    first: FirstView,
    events: mpsc::UnboundedSender<BackendEvent>,
    effects: mpsc::UnboundedReceiver<Effect>,
    following: ObjectReads,
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
    match CacheReads::<L>::start(&hub, first, cached, unsettled, &events).await {
        Start::Cached(source) => keep_current(hub, *source, events, effects, following).await,
        Start::ReadWhole(first) => {
            let source = WholeReads::start(&hub, first).await;
            keep_current(hub, source, events, effects, following).await;
        }
        Start::Ended => {}
    }
}

/// Keeps the view current from its source, carries out the console's effects, and sends what
/// the view's refresh after either changed. Ends when the console is gone.
async fn keep_current<S: ViewSource>(
    hub: Hub,
    source: S,
    events: mpsc::UnboundedSender<BackendEvent>,
    effects: mpsc::UnboundedReceiver<Effect>,
    following: ObjectReads,
) {
    let mut placements = PlacementFollow::default();
    placements.read(&hub, &events).await;
    let backend = OnHub {
        hub,
        source: Some(source),
        events: events.clone(),
        following,
        placements,
    };
    console_loop::run(backend, Some(effects), events).await;
}

/// The console's backend on a hub: the view's source, the reads the object view follows, and
/// the edits being followed until the hub has rendered them.
struct OnHub<S> {
    hub: Hub,
    /// Always there but while a refresh holds it.
    source: Option<S>,
    events: mpsc::UnboundedSender<BackendEvent>,
    following: ObjectReads,
    placements: PlacementFollow,
}

impl<S: ViewSource> OnHub<S> {
    /// Brings the view up to date with what `wake` says and sends what changed. False when the
    /// source cannot go on or the console has gone.
    async fn refresh(&mut self, wake: S::Wake) -> bool {
        if self.events.is_closed() {
            return false;
        }
        let Some(source) = self.source.take() else {
            return false;
        };
        let Some((next, news)) = source
            .refresh(wake, &self.hub, &mut self.placements, &self.events)
            .await
        else {
            return false;
        };
        let rendered = |row: usize, member: &str| next.rendered(row, member);
        self.following.view_changed(next.view(), &rendered, &news);
        self.source = Some(next);
        news.into_iter()
            .all(|event| self.events.send(event).is_ok())
    }
}

impl<S: ViewSource> ConsoleBackend for OnHub<S> {
    type Wake = S::Wake;

    async fn wait(&mut self) -> Option<S::Wake> {
        let source = self.source.as_mut()?;
        source.wait(&self.hub, &self.events).await
    }

    async fn woken(&mut self, wake: S::Wake) -> bool {
        self.refresh(wake).await
    }

    async fn effect(&mut self, effect: Effect) -> bool {
        let Some(source) = self.source.as_mut() else {
            return false;
        };
        let rendered = |row: usize, member: &str| source.rendered(row, member);
        match effect {
            Effect::OpenObjectView { cells } => {
                self.following.follow(source.view(), &rendered, cells);
            }
            Effect::CloseObjectView => {
                self.following.follow(source.view(), &rendered, Vec::new());
            }
            Effect::OpenLogs(open) => {
                super::log_stream::open(&self.hub, source.view(), open, &self.events);
            }
            Effect::ReadPods { cells } => {
                self.following.read_pods(
                    &self.hub,
                    (source.view(), &rendered),
                    &cells,
                    &self.events,
                );
            }
            Effect::UseFleet(fleet) => {
                self.following.use_fleet(source.view(), &rendered, fleet.0);
            }
            Effect::DryRun {
                fleet,
                cells,
                revision,
            } => match source.preview_view(&self.hub, &fleet.0, &cells).await {
                Ok(view) => {
                    dry_run(&self.hub, &view, &fleet.0, &cells, revision, &self.events).await
                }
                Err(err) => {
                    let _ = self
                        .events
                        .send(BackendEvent::Notice(format!("preview: {err}")));
                }
            },
            effect => {
                let (shown, expected) = source.edits();
                let after = carry_out(
                    &self.hub,
                    effect,
                    shown,
                    expected,
                    &mut self.placements,
                    &self.events,
                )
                .await;
                if let Some(wake) = source.after_effect(after) {
                    return self.refresh(wake).await;
                }
            }
        }
        !self.events.is_closed()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use kube::runtime::watcher;

    use super::fixtures::{WORKS, karmada_caches, silent_hub, work};
    use super::*;
    use crate::backend::hub::cache::Change;
    use crate::backend::hub::console::first_view::{BuiltLive, Cached};
    use crate::backend::hub::console::view_changes::whole_view;
    use crate::messages::{CellRef, CellUpdate, SharedFleet};
    use crate::model::CellStatus;

    async fn next(console: &mut mpsc::UnboundedReceiver<BackendEvent>) -> Option<BackendEvent> {
        tokio::time::timeout(Duration::from_secs(10), console.recv())
            .await
            .expect("the backend answers")
    }

    /// The event after those `skip` lets pass.
    async fn next_but(
        console: &mut mpsc::UnboundedReceiver<BackendEvent>,
        skip: impl Fn(&BackendEvent) -> bool,
    ) -> BackendEvent {
        loop {
            let event = next(console).await.expect("an event");
            if !skip(&event) {
                return event;
            }
        }
    }

    #[tokio::test]
    async fn a_cached_hub_sends_a_watched_change_as_its_cell_and_previews_from_its_stores() {
        let (caches, mut writers) = karmada_caches();
        let (view, live) = whole_view::<karmada::delta::Live>(
            HubKind::Karmada,
            &caches,
            &kube::config::Kubeconfig::default(),
        )
        .expect("the first view");
        let (changed, changes) = mpsc::channel(8);
        let first = FirstView {
            view,
            cached: Some(Cached {
                caches,
                live: BuiltLive::Karmada(live, changes),
            }),
        };
        let (events, mut console) = mpsc::unbounded_channel();
        let effects = spawn(silent_hub(), first, None, events);

        assert!(matches!(
            next(&mut console).await,
            Some(BackendEvent::Snapshot { .. })
        ));
        let synced = next_but(&mut console, |e| matches!(e, BackendEvent::Cluster { .. })).await;
        assert!(
            matches!(&synced, BackendEvent::Notice(text) if text.contains("caches synced")),
            "the first view's incremental view is gone on with: {synced:?}"
        );

        let failed = work("b", "False", "blue", "2");
        writers[WORKS].apply_watcher_event(&watcher::Event::Apply(failed.clone()));
        changed
            .send(Change::of(WORKS, &failed, false, karmada::delta::parse))
            .await
            .expect("the loop takes changes");
        let cells = next_but(&mut console, |e| {
            matches!(e, BackendEvent::Heartbeat { .. })
        })
        .await;
        let BackendEvent::Cells(cells) = cells else {
            panic!("the change's cell, not {cells:?}");
        };
        assert_eq!(
            cells,
            [CellUpdate {
                cell: CellRef {
                    resource: 0,
                    cluster: 1
                },
                status: CellStatus::Failed("AppliedFailed: from the member".into()),
                message: None,
            }]
        );

        effects
            .send(Effect::DryRun {
                fleet: SharedFleet(Arc::new(Fleet::default())),
                cells: Vec::new(),
                revision: 7,
            })
            .expect("the loop takes effects");
        let answer = next_but(&mut console, |e| {
            matches!(e, BackendEvent::Heartbeat { .. })
        })
        .await;
        assert!(
            matches!(&answer, BackendEvent::DryRun { revision: 7, items } if items.is_empty()),
            "answered from the stores, without reading the hub: {answer:?}"
        );

        drop(effects);
        while let Some(event) = next(&mut console).await {
            assert!(
                matches!(event, BackendEvent::Heartbeat { .. }),
                "nothing more but heartbeats: {event:?}"
            );
        }
    }
}
