//! Previews on a hub: the engine's render of an (edited) fleet for each cell against what the
//! hub rendered for that cell now — the editors' previews in the console (`dry_run`) and
//! `plan --hub` ([`preview_items`]) — with what the member's live object says beside it; on a
//! hub that keeps no rendered objects (KubeFed), against the members' live objects instead. It
//! only reads the hub and its members: it must not write to either, and keeps nothing between
//! previews.

use std::collections::HashMap;

use serde_json::Value;
use tokio::sync::mpsc;

use super::cache::{Caches, IncrementalView};
use super::connect::Hub;
use super::error::HubError;
use super::objects::{delivered_form, drop_marks, is_flotilla_mark};
use super::view::HubView;
use crate::backend::fanout::cluster_api::ClusterApi;
use crate::backend::fanout::object::resource_of;
use crate::backend::kube::api::KubeCluster;
use crate::engine::compare::diff;
use crate::engine::{Decision, Fleet};
use crate::messages::{BackendEvent, CellRef};
use crate::messages::{PlanAction, PlanItem};

/// The rows a preview of `cells` compares against, with the objects the hub rendered for those
/// cells looked up in the stores.
pub(super) fn preview_view<L: IncrementalView>(
    live: &L,
    caches: &Caches,
    fleet: &Fleet,
    cells: &[CellRef],
) -> HubView {
    let view = live.view();
    let mut wanted: HashMap<usize, Vec<String>> = HashMap::new();
    for cell in cells {
        let (Some(resource), Some(cluster)) = (
            fleet.resources.get(cell.resource as usize),
            fleet.clusters.get(cell.cluster as usize),
        ) else {
            continue;
        };
        if let Some(row) = view.row_of(&resource.target) {
            wanted.entry(row).or_default().push(cluster.name.clone());
        }
    }
    let rows = wanted
        .into_iter()
        .map(|(row, clusters)| {
            let mut shown = view.rows[row].clone();
            for cluster in clusters {
                if let Some(object) = live.rendered(caches, row, &cluster) {
                    shown.objects.insert(cluster, object);
                }
            }
            shown
        })
        .collect();
    HubView {
        kind: view.kind,
        clusters: view.clusters.clone(),
        rows,
    }
}

/// Answers an editor's preview: the engine's render of the edited fleet against what the hub
/// rendered for each cell in `view` (or, on a hub that keeps none, the members' live objects).
pub(super) async fn dry_run(
    hub: &Hub,
    view: &HubView,
    fleet: &Fleet,
    cells: &[CellRef],
    revision: u64,
    events: &mpsc::UnboundedSender<BackendEvent>,
) {
    let items = if hub.kind.keeps_rendered_objects() {
        let mut items = preview_items(fleet, cells, view, Compare::Whole);
        note_member_state(hub, view, &mut items).await;
        items
    } else {
        against_members(hub, fleet, cells, view).await
    };
    let _ = events.send(BackendEvent::DryRun { revision, items });
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

    let mut clients: HashMap<String, Result<KubeCluster, HubError>> = HashMap::new();
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
                None => Err(HubError::Input("not a member of the hub".into())),
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
