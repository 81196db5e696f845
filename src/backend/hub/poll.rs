//! The console's backend on a hub: reads the hub whenever a watched hub object changes (and on
//! a slow timer besides; every few seconds for hubs without watched kinds) and reports what
//! changed — cluster health as the hub reports it, and one cell per (row, cluster) as the
//! hub's reader words it. Rows the hub gains later are appended, so a shown row keeps its
//! index. With an effect channel it also hands confirmed edits to the hub's writers (policies
//! and Federated objects; an OCM Placement; a Karmada reschedule), answers the editors' previews
//! with the engine's render against the hub's rendered objects, and follows each edit until the
//! hub has rendered (or, for a Placement, decided) exactly what the preview said. Read-only, it has no effect channel, so
//! no code path can write to the hub.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;

use super::connect::Hub;
use super::karmada::write::reschedule;
use super::kind::HubKind;
use super::objects::{delivered_form, drop_marks, is_flotilla_mark};
use super::ocm::read::placement_world;
use super::ocm::write::write_placement;
use super::view::{HubRow, HubView, sort_rows};
use super::write::write_object;
use crate::backend::fanout::cluster_api::ClusterApi;
use crate::backend::fanout::object::resource_of;
use crate::backend::fanout::planning::{PlanAction, PlanItem};
use crate::backend::kube::api::KubeCluster;
use crate::backend::messages::{AddedResource, BackendEvent, CellRef, CellUpdate, Effect};
use crate::engine::compare::diff;
use crate::engine::edit::ocm_placement::PlacementWorld;
use crate::engine::{Decision, Fleet};
use crate::model::Dialect;
use crate::model::{CellStatus, ClusterStatus, Health};

/// How long an edit may take to show in the hub's rendered objects before flotilla says the
/// hub rendered something else than its preview.
pub const FOLLOW_FOR: Duration = Duration::from_secs(120);

/// Time between reads of a hub whose changes are not watched.
pub const POLL_EVERY: Duration = Duration::from_secs(5);

/// Time between reads of a watched hub when nothing changed (health the hub recomputes, such
/// as a member's Ready condition, still arrives through the Cluster watch).
pub const REREAD_EVERY: Duration = Duration::from_secs(30);

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

/// Starts reading the hub without any way to write to it; `first` is the view the console's
/// rows and columns were built from.
pub fn spawn_readonly(hub: Hub, first: HubView, events: mpsc::UnboundedSender<BackendEvent>) {
    tokio::spawn(run(hub, first, events, None));
}

/// Starts reading the hub and taking the console's effects.
pub fn spawn(
    hub: Hub,
    first: HubView,
    events: mpsc::UnboundedSender<BackendEvent>,
) -> mpsc::UnboundedSender<Effect> {
    let (effects, receiver) = mpsc::unbounded_channel();
    tokio::spawn(run(hub, first, events, Some(receiver)));
    effects
}

/// An edited OCM Placement written to the hub, awaited in its PlacementDecisions.
struct DecisionExpectation {
    namespace: String,
    name: String,
    clusters: Vec<String>,
    since: Instant,
}

/// Placements, for the OCM placement editor: what changed since `shown` is sent, and each
/// written Placement is followed until OCM decided what its preview said (or time is up).
struct PlacementFollow {
    shown: Option<std::sync::Arc<PlacementWorld>>,
    expected: Vec<DecisionExpectation>,
}

impl PlacementFollow {
    async fn read(&mut self, hub: &Hub, events: &mpsc::UnboundedSender<BackendEvent>) {
        if hub.kind != HubKind::OpenClusterManagement {
            return;
        }
        let world = match placement_world(&hub.client).await {
            Ok((world, _)) => world,
            // The next read tries again; the cells already say when the hub is unreachable.
            Err(_) => return,
        };
        for notice in follow_decisions(&world, &mut self.expected) {
            let _ = events.send(BackendEvent::Notice(notice));
        }
        if self.shown.as_deref() != Some(&world) {
            let world = std::sync::Arc::new(world);
            self.shown = Some(world.clone());
            let _ = events.send(BackendEvent::Placements(world));
        }
    }
}

/// Notices for written Placements whose decision arrived as previewed, or differs after
/// [`FOLLOW_FOR`]; both stop being followed.
fn follow_decisions(
    world: &PlacementWorld,
    expected: &mut Vec<DecisionExpectation>,
) -> Vec<String> {
    let mut notices = Vec::new();
    expected.retain(|wanted| {
        let decided = world
            .placements
            .iter()
            .find(|p| p.namespace() == wanted.namespace && p.name() == wanted.name)
            .map(|p| p.decided.clone())
            .unwrap_or_default();
        let title = format!("Placement {}/{}", wanted.namespace, wanted.name);
        if decided == wanted.clusters {
            notices.push(format!(
                "OCM decided [{}] for {title}, as previewed",
                wanted.clusters.join(", ")
            ));
            false
        } else if wanted.since.elapsed() >= FOLLOW_FOR {
            notices.push(format!(
                "OCM decided [{}] for {title}, not the preview's [{}]",
                decided.join(", "),
                wanted.clusters.join(", ")
            ));
            false
        } else {
            true
        }
    });
    notices
}

/// An edit written to the hub, awaited in one cell: the engine's object in delivered form.
struct Expectation {
    object: Value,
    title: String,
    since: Instant,
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
) {
    let mut shown = first;
    let _ = events.send(snapshot(&shown));
    for (index, (_, status)) in shown.clusters.iter().enumerate() {
        let _ = events.send(BackendEvent::Cluster {
            cluster: index as u32,
            status: status.clone(),
        });
    }
    let mut expected: HashMap<CellRef, Expectation> = HashMap::new();
    let mut placements = PlacementFollow {
        shown: None,
        expected: Vec::new(),
    };
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
                Some(Effect::WritePlacement { namespace, name, patch, expect }) => {
                    let title = format!("Placement {namespace}/{name}");
                    match write_placement(&hub.client, &namespace, &name, &patch).await {
                        Ok(()) => {
                            let _ = events.send(BackendEvent::Notice(format!(
                                "wrote {title} to hub {} (as flotilla); following its decision until OCM decides [{}]",
                                hub.context,
                                expect.join(", ")
                            )));
                            placements.expected.push(DecisionExpectation {
                                namespace,
                                name,
                                clusters: expect,
                                since: Instant::now(),
                            });
                        }
                        Err(err) => {
                            let _ = events.send(BackendEvent::Notice(format!(
                                "hub {} refused {title}: {err}",
                                hub.context
                            )));
                            continue;
                        }
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
        let mut next = match hub.read().await {
            Ok(view) => {
                let next = aligned(&shown, view);
                let added = added_rows(&shown, &next);
                if !added.is_empty() {
                    let keys: Vec<String> = added.iter().map(|a| a.target.display_key()).collect();
                    let _ = events.send(BackendEvent::Notice(format!(
                        "new on the hub since the console started: {} (added at the bottom)",
                        keys.join(", ")
                    )));
                    let _ = events.send(BackendEvent::ResourcesAdded(added));
                }
                next
            }
            Err(err) => unreachable_hub(&shown, &err.to_string()),
        };
        for notice in follow(&mut next, &mut expected) {
            let _ = events.send(BackendEvent::Notice(notice));
        }
        placements.read(&hub, &events).await;
        for event in changes(&shown, &next) {
            if events.send(event).is_err() {
                return;
            }
        }
        shown = next;
    }
}

/// Carries out one effect; `true` when the hub should be read again at once.
async fn handle(
    hub: &Hub,
    shown: &mut HubView,
    effect: Effect,
    expected: &mut HashMap<CellRef, Expectation>,
    events: &mpsc::UnboundedSender<BackendEvent>,
) -> bool {
    let notice = |text: String| {
        let _ = events.send(BackendEvent::Notice(text));
    };
    match effect {
        Effect::HubApply {
            object,
            title,
            expect,
        } => {
            match write_object(&hub.client, &object).await {
                Ok(()) => {
                    notice(format!(
                        "wrote {title} to hub {} (server-side apply as flotilla); following {} cell(s) until {} renders them",
                        hub.context,
                        expect.len(),
                        hub.kind.as_str()
                    ));
                    let since = Instant::now();
                    let waiting = format!("waiting for the hub to render {title}");
                    let mut pending = Vec::new();
                    for (cell, object) in expect {
                        let column = shown.clusters.get(cell.cluster as usize);
                        if let (Some(row), Some((spec, _))) =
                            (shown.rows.get_mut(cell.resource as usize), column)
                        {
                            let status = (CellStatus::Pending, Some(waiting.clone()));
                            row.cells.insert(spec.name.clone(), status);
                            pending.push(CellUpdate {
                                cell,
                                status: CellStatus::Pending,
                                message: Some(waiting.clone()),
                            });
                        }
                        expected.insert(
                            cell,
                            Expectation {
                                object: delivered_form(&object),
                                title: title.clone(),
                                since,
                            },
                        );
                    }
                    // The console sees each cell leave its old state, then arrive.
                    let _ = events.send(BackendEvent::Cells(pending));
                    true
                }
                Err(err) => {
                    notice(format!("hub {} refused {title}: {err}", hub.context));
                    false
                }
            }
        }
        Effect::DryRun {
            fleet,
            cells,
            revision,
        } => {
            let view = match hub.read().await {
                Ok(view) => view,
                Err(err) => {
                    notice(format!("preview: {err}"));
                    return false;
                }
            };
            let items = if hub.kind.keeps_rendered_objects() {
                let mut items = preview_items(&fleet.0, &cells, &view, Compare::Whole);
                note_member_state(hub, &view, &mut items).await;
                items
            } else {
                against_members(hub, &fleet.0, &cells, &view).await
            };
            let _ = events.send(BackendEvent::DryRun { revision, items });
            false
        }
        Effect::UseFleet(_) => false,
        Effect::Apply { cells } if hub.kind == HubKind::Karmada => {
            let rows: std::collections::BTreeSet<usize> =
                cells.iter().map(|cell| cell.resource as usize).collect();
            for row in rows.into_iter().filter_map(|row| shown.rows.get(row)) {
                notice(match &row.carrier {
                    Some(binding) => match reschedule(&hub.client, binding).await {
                        Ok(at) => format!(
                            "asked Karmada to reschedule {} {} (rescheduleTriggeredAt {at})",
                            binding.kind,
                            binding
                                .display_key()
                                .trim_start_matches(&format!("{}/", binding.kind))
                        ),
                        Err(err) => format!(
                            "hub {} refused to reschedule {}: {err}",
                            hub.context, row.source
                        ),
                    },
                    None => format!(
                        "{}: no binding on the hub to reschedule ({})",
                        row.target.display_key(),
                        row.not_placed
                    ),
                });
            }
            true
        }
        other => {
            notice(format!(
                "on a {} hub the hub propagates: edit its policies (e, o) instead ({} not sent)",
                hub.kind.as_str(),
                effect_name(&other)
            ));
            false
        }
    }
}

fn effect_name(effect: &Effect) -> &'static str {
    match effect {
        Effect::Apply { .. } => "apply",
        Effect::Delete { .. } => "delete",
        Effect::Revert { .. } => "revert",
        _ => "request",
    }
}

/// How [`preview_items`] compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// Whole objects: the fleet was read from the hub, server defaults included.
    Whole,
    /// Only the fields the fleet sets: a local fleet directory, whose templates lack the
    /// defaults the hub's API server filled in.
    FieldsSet,
}

/// The engine's render of the (edited) fleet for each cell against what the hub rendered for
/// that cell now: the preview of an edit on a hub, and `plan --hub`.
pub fn preview_items(
    fleet: &Fleet,
    cells: &[CellRef],
    view: &HubView,
    compare: Compare,
) -> Vec<PlanItem> {
    let mut items = Vec::new();
    for cell in cells {
        let (r, c) = (cell.resource as usize, cell.cluster as usize);
        let (Some(resource), Some(cluster)) = (fleet.resources.get(r), fleet.clusters.get(c))
        else {
            continue;
        };
        let Decision::Placed { object, .. } = fleet.decide(r, c) else {
            continue;
        };
        let current = view
            .row_of(&resource.target)
            .and_then(|row| view.rows[row].objects.get(&cluster.name));
        let desired = delivered_form(&object);
        let live = current.map(delivered_form).map(|live| match compare {
            Compare::Whole => live,
            Compare::FieldsSet => diff::project(&live, &desired),
        });
        let label = resource.target.display_key();
        let diff = diff::unified(live.as_ref(), &desired, &label);
        let (action, message) = match &live {
            None => (
                PlanAction::Create,
                format!(
                    "{} has rendered nothing for {} yet",
                    view.kind.as_str(),
                    cluster.name
                ),
            ),
            Some(_) if diff.is_empty() => (PlanAction::Unchanged, String::new()),
            Some(_) => (
                PlanAction::Update,
                format!(
                    "against the object {} rendered for {}",
                    view.kind.as_str(),
                    cluster.name
                ),
            ),
        };
        items.push(PlanItem {
            cluster: cluster.name.clone(),
            resource: resource_of(&object),
            action,
            diff,
            message,
            health: None,
        });
    }
    items
}

/// The preview on a hub that keeps no rendered objects (KubeFed): the engine's render of the
/// edited fleet against each member's live object, field by field as `plan --readonly`
/// compares, read through the member's kubeconfig context.
async fn against_members(
    hub: &Hub,
    fleet: &Fleet,
    cells: &[CellRef],
    view: &HubView,
) -> Vec<PlanItem> {
    use crate::backend::fanout::planning::{PlanMode, plan_with};
    use crate::backend::fanout::targets::{Ignores, Options};

    let mut by_cluster: std::collections::BTreeMap<usize, Vec<Value>> = Default::default();
    for cell in cells {
        if let Decision::Placed { object, .. } =
            fleet.decide(cell.resource as usize, cell.cluster as usize)
        {
            by_cluster
                .entry(cell.cluster as usize)
                .or_default()
                .push(without_flotilla_marks(object));
        }
    }
    let mut targets = Vec::new();
    for (cluster, objects) in by_cluster {
        let Some(spec) = fleet.clusters.get(cluster) else {
            continue;
        };
        let member = view
            .clusters
            .iter()
            .find(|(s, _)| s.name == spec.name)
            .map_or(spec, |(s, _)| s);
        targets.push(
            hub.read_only_target(member, spec.name.clone(), objects)
                .await,
        );
    }
    plan_with(
        &targets,
        PlanMode::ReadOnly,
        Options::default(),
        &Ignores::default(),
        &|_, _| {},
    )
    .await
}

/// The object without the ownership label and source annotation flotilla adds when it applies
/// objects itself: through a hub, the hub's controller writes the member objects.
fn without_flotilla_marks(mut object: Value) -> Value {
    drop_marks(&mut object, is_flotilla_mark);
    object
}

/// Adds to each preview item what the member's live object says against the hub's rendered
/// one: a preview of the Work is only as good as the member's agreement with it.
async fn note_member_state(hub: &Hub, view: &HubView, items: &mut [PlanItem]) {
    use crate::backend::kube::kubeconfig::Timeouts;

    let mut clients: HashMap<String, Result<KubeCluster, String>> = HashMap::new();
    for item in items.iter_mut() {
        let Some(rendered) = view
            .row_of(&item.resource)
            .and_then(|row| view.rows[row].objects.get(&item.cluster))
        else {
            continue;
        };
        if !clients.contains_key(&item.cluster) {
            let client = match view.clusters.iter().find(|(s, _)| s.name == item.cluster) {
                Some((spec, _)) => hub
                    .member_client(spec, Timeouts::default())
                    .await
                    .map(|client| KubeCluster::new(client, true)),
                None => Err("not a member of the hub".into()),
            };
            clients.insert(item.cluster.clone(), client);
        }
        let note = match &clients[&item.cluster] {
            Err(reason) => format!("member live state unavailable: {reason}"),
            Ok(api) => match api.get(&item.resource).await {
                Ok(None) => "the member does not have it yet".to_string(),
                Ok(Some(live)) => {
                    let drifted = diff::drifted_fields(rendered, &live);
                    if drifted.is_empty() {
                        "the member's live object matches the Work".to_string()
                    } else {
                        let paths: Vec<String> =
                            drifted.iter().take(3).map(|d| d.pointer()).collect();
                        format!(
                            "the member's live object differs from the Work at {}",
                            paths.join(", ")
                        )
                    }
                }
                Err(err) => format!("member live state unavailable: {err}"),
            },
        };
        item.message = if item.message.is_empty() {
            note
        } else {
            format!("{}; {note}", item.message)
        };
    }
}

/// Holds each awaited cell at Pending until the hub's rendered object equals the engine's;
/// drops what arrived, and what did not within [`FOLLOW_FOR`] (with a notice).
fn follow(view: &mut HubView, expected: &mut HashMap<CellRef, Expectation>) -> Vec<String> {
    let mut notices = Vec::new();
    expected.retain(|cell, expectation| {
        let (r, c) = (cell.resource as usize, cell.cluster as usize);
        let Some(cluster) = view.clusters.get(c).map(|(spec, _)| spec.name.clone()) else {
            return false;
        };
        let Some(row) = view.rows.get_mut(r) else {
            return false;
        };
        // A hub that keeps no rendered objects reports progress in its own status (KubeFed:
        // Pending until its status has seen the new generation): the reader's cell says it.
        if !view.kind.keeps_rendered_objects() {
            return false;
        }
        let rendered = row.objects.get(&cluster).map(delivered_form);
        if rendered.as_ref() == Some(&expectation.object) {
            let settled = matches!(row.cells.get(&cluster), Some((CellStatus::InSync, _)));
            return !settled;
        }
        if expectation.since.elapsed() > FOLLOW_FOR {
            notices.push(format!(
                "{} on {cluster}: the hub's rendered object still differs from the preview of {} after {} s",
                row.target.display_key(),
                expectation.title,
                FOLLOW_FOR.as_secs()
            ));
            return false;
        }
        row.cells.insert(
            cluster,
            (
                CellStatus::Pending,
                Some(format!("waiting for the hub to render {}", expectation.title)),
            ),
        );
        true
    });
    notices
}

/// The rows `next` has beyond `shown`'s, as the console appends them.
fn added_rows(shown: &HubView, next: &HubView) -> Vec<AddedResource> {
    let dialect = match next.kind {
        HubKind::KubeFed => Dialect::KubeFed,
        HubKind::Karmada | HubKind::OpenClusterManagement => Dialect::Karmada,
    };
    next.rows
        .iter()
        .skip(shown.rows.len())
        .map(|row| AddedResource {
            target: row.target.clone(),
            dialect,
            source: row.source.clone(),
        })
        .collect()
}

/// empty row saying so).
pub fn in_rows_of(targets: &[crate::model::ResourceRef], view: HubView) -> HubView {
    let rows = targets
        .iter()
        .map(|target| {
            view.rows
                .iter()
                .find(|row| row.target == *target)
                .cloned()
                .unwrap_or_else(|| HubRow {
                    target: target.clone(),
                    source: format!("{} template", view.kind.as_str()),
                    carrier: None,
                    cells: Default::default(),
                    not_placed: "no binding on the hub: no propagation policy claims it".into(),
                    objects: Default::default(),
                })
        })
        .collect();
    HubView { rows, ..view }
}

/// `view` in the rows and columns of `shown`: shown rows keep their index (a row that went
/// away reports as not placed), rows new on the hub follow them; clusters stay those shown.
pub fn aligned(shown: &HubView, view: HubView) -> HubView {
    let HubView {
        kind,
        clusters: read_clusters,
        rows: read_rows,
    } = view;
    let mut read_clusters: HashMap<String, ClusterStatus> = read_clusters
        .into_iter()
        .map(|(spec, status)| (spec.name, status))
        .collect();
    let clusters = shown
        .clusters
        .iter()
        .map(|(spec, _)| {
            let status = read_clusters
                .remove(&spec.name)
                .unwrap_or_else(|| ClusterStatus {
                    health: Health::Unknown,
                    message: "no longer a member of the hub".into(),
                    ..ClusterStatus::default()
                });
            (spec.clone(), status)
        })
        .collect();
    let mut read_rows: HashMap<crate::model::ResourceRef, HubRow> = read_rows
        .into_iter()
        .map(|row| (row.target.clone(), row))
        .collect();
    let mut rows: Vec<HubRow> = shown
        .rows
        .iter()
        .map(|row| {
            read_rows.remove(&row.target).unwrap_or_else(|| HubRow {
                cells: Default::default(),
                objects: Default::default(),
                not_placed: format!("{} is gone from the hub", row.source),
                ..row.clone()
            })
        })
        .collect();
    // New rows go last, in the hub's order, so every row the console shows keeps its index.
    let mut newcomers: Vec<HubRow> = read_rows.into_values().collect();
    sort_rows(&mut newcomers);
    rows.append(&mut newcomers);
    HubView {
        kind,
        clusters,
        rows,
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
    for row in 0..after.rows.len() {
        for column in 0..after.clusters.len() {
            let old = before.cell(row, column);
            let new = after.cell(row, column);
            // A row new to the console starts Pending there: every cell of it is news.
            if old != new || row >= before.rows.len() {
                cells.push(CellUpdate {
                    cell: CellRef {
                        resource: row as u32,
                        cluster: column as u32,
                    },
                    status: new.0,
                    message: new.1,
                });
            }
        }
    }
    if !cells.is_empty() {
        events.push(BackendEvent::Cells(cells));
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
    use crate::model::{ClusterSpec, ResourceRef};

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
                })
                .collect(),
        }
    }

    fn config_map(color: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "web", "namespace": "shop",
                "labels": {"karmada.io/managed": "true"}},
            "data": {"color": color}})
    }

    #[test]
    fn an_edit_holds_its_cell_pending_until_the_hub_rendered_exactly_the_preview() {
        let cell = CellRef {
            resource: 0,
            cluster: 0,
        };
        let mut expected = HashMap::from([(
            cell,
            Expectation {
                object: delivered_form(&config_map("blue")),
                title: "OverridePolicy shop/web".into(),
                since: Instant::now(),
            },
        )]);
        let mut old = view(&[("web", Some(config_map("red")))]);
        assert!(follow(&mut old, &mut expected).is_empty());
        assert_eq!(old.cell(0, 0).0, CellStatus::Pending, "still the old Work");
        assert_eq!(expected.len(), 1);

        let mut new = view(&[("web", Some(config_map("blue")))]);
        follow(&mut new, &mut expected);
        assert_eq!(new.cell(0, 0).0, CellStatus::InSync);
        assert!(expected.is_empty(), "arrived: no longer followed");
    }

    #[test]
    fn an_edit_the_hub_renders_otherwise_is_reported_after_the_follow_period() {
        let cell = CellRef {
            resource: 0,
            cluster: 0,
        };
        let mut expected = HashMap::from([(
            cell,
            Expectation {
                object: delivered_form(&config_map("blue")),
                title: "OverridePolicy shop/web".into(),
                since: Instant::now() - FOLLOW_FOR - Duration::from_secs(1),
            },
        )]);
        let mut other = view(&[("web", Some(config_map("green")))]);
        let notices = follow(&mut other, &mut expected);
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(
            notices[0].contains("still differs from the preview"),
            "{}",
            notices[0]
        );
        assert!(expected.is_empty());
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
