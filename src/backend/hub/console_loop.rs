//! The console's backend on a hub: one loop, given the [`ViewSource`] its view comes from (the
//! hub's informer caches, or whole reads of the hub where those cannot be had). It sends the
//! first view, then what changed — cluster health as the hub reports it, and one cell per (row,
//! cluster) as the hub's reader words it; rows the hub gains later are appended, so a shown row
//! keeps its index. With an effect channel it hands confirmed edits to `effects` (which follows
//! each until the hub has rendered, or decided, what its preview said) and answers the editors'
//! previews (`preview`). Either way it reads followed cells on their members for the live view
//! (`live_view`). Read-only, its channel lets only those reads through, so no code path can
//! write to the hub. It must not build or change the view itself (its source does) nor write
//! to the hub but through `effects`.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::connect::Hub;
use super::effects::{PlacementFollow, carry_out};
use super::first_view::{FirstView, KindLive};
use super::live_view::Following;
use super::member_health::Unsettled;
use super::preview::dry_run;
use super::view_changes::{health_snapshot, snapshot};
use super::view_source::{CacheReads, Start, ViewSource, WholeReads};
use super::{karmada, kubefed_delta, ocm};
use crate::backend::messages::{BackendEvent, Effect, reads_only};
use crate::engine::Fleet;
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
/// the live view's reads.
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

/// Runs the backend with the live view of the hub's kind.
fn start(
    hub: Hub,
    first: FirstView,
    fleet: Option<Arc<Fleet>>,
    events: mpsc::UnboundedSender<BackendEvent>,
    effects: mpsc::UnboundedReceiver<Effect>,
) {
    let following = Following::start(hub.clone(), fleet, events.clone());
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
    following: Following,
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

/// The loop: waits for its source or an effect, carries the effect out, and sends what the
/// view's refresh after either changed. Ends when the console is gone.
async fn keep_current<S: ViewSource>(
    hub: Hub,
    mut source: S,
    events: mpsc::UnboundedSender<BackendEvent>,
    mut effects: mpsc::UnboundedReceiver<Effect>,
    mut following: Following,
) {
    let mut placements = PlacementFollow::default();
    placements.read(&hub, &events).await;
    loop {
        let wake = tokio::select! {
            wake = source.wait(&hub, &events) => match wake {
                Some(wake) => wake,
                None => return,
            },
            effect = effects.recv() => match effect {
                Some(Effect::FollowObject { cells }) => {
                    let rendered = |row: usize, member: &str| source.rendered(row, member);
                    following.follow(source.view(), &rendered, cells);
                    continue;
                }
                Some(Effect::StopFollowing) => {
                    let rendered = |row: usize, member: &str| source.rendered(row, member);
                    following.follow(source.view(), &rendered, Vec::new());
                    continue;
                }
                Some(Effect::UseFleet(fleet)) => {
                    let rendered = |row: usize, member: &str| source.rendered(row, member);
                    following.use_fleet(source.view(), &rendered, fleet.0);
                    continue;
                }
                Some(Effect::DryRun { fleet, cells, revision }) => {
                    match source.preview_view(&hub, &fleet.0, &cells).await {
                        Ok(view) => dry_run(&hub, &view, &fleet.0, &cells, revision, &events).await,
                        Err(err) => {
                            let _ = events.send(BackendEvent::Notice(format!("preview: {err}")));
                        }
                    }
                    continue;
                }
                Some(effect) => {
                    let (shown, expected) = source.edits();
                    let after =
                        carry_out(&hub, effect, shown, expected, &mut placements, &events).await;
                    match source.after_effect(after) {
                        Some(wake) => wake,
                        None => continue,
                    }
                }
                None => return,
            },
        };
        if events.is_closed() {
            return;
        }
        let Some((next, news)) = source.refresh(wake, &hub, &mut placements, &events).await else {
            return;
        };
        source = next;
        let rendered = |row: usize, member: &str| source.rendered(row, member);
        following.view_changed(source.view(), &rendered, &news);
        for event in news {
            if events.send(event).is_err() {
                return;
            }
        }
    }
}

