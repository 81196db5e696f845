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
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use super::cache::{Caches, Change, LiveView};
use super::connect::Hub;
use super::effects::{Expectation, PlacementFollow, follow, handle};
use super::first_view::{Cached, FirstView, KindLive, resumable};
use super::live_view::Following;
use super::member_health::{self, Unsettled};
use super::preview::{dry_run, preview_view};
use super::view::{HubView, aligned};
use super::view_changes::{
    Pass, added_rows, announced, changes, count_full_read, health_snapshot, snapshot,
    unreachable_hub,
};
use super::{karmada, kubefed_delta, ocm};
use crate::backend::messages::{BackendEvent, CellRef, Effect, reads_only};
use crate::engine::Fleet;
use crate::model::{Health, HubKind};

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
        count_full_read();
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

/// The console's backend on a hub whose reader keeps a live view: the caches list each kind
/// once, then every watched change is taken in on a blocking thread and sent as the cells it
/// changed. The whole view is built only at the start and after a relist or a reconnect.
async fn run_cached<L: KindLive>(
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
                if !pass.hub_failing() {
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

/// How many changes one blocking pass takes in at most, so effects are not held up by a burst.
const BATCH: usize = 10_000;
