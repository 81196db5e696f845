//! What the console's effects do on a hub, and the edits that follow them: an edited policy or
//! Federated object written by server-side apply, an edited OCM Placement, a Karmada
//! reschedule; each written edit is then followed until the hub rendered (or, for a Placement,
//! decided) exactly what its preview said, its cells held Pending until then. Effects a hub does
//! not take are refused with a notice. It must not build or keep the hub's view of cells (the
//! backend's loop hands it the view whose cells it marks), and a read-only console never reaches
//! it: that console's channel lets no write through.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;

use crate::backend::hub::connect::Hub;
use crate::backend::hub::karmada::write::reschedule;
use crate::backend::hub::objects::delivered_form;
use crate::backend::hub::ocm::read::placement_world;
use crate::backend::hub::ocm::write::write_placement;
use crate::backend::hub::view::HubView;
use crate::backend::hub::write::{WriteError, write_object};
use crate::engine::edit::ocm_placement::PlacementWorld;
use crate::messages::{BackendEvent, CellRef, CellUpdate, Effect};
use crate::model::{CellStatus, HubKind};

/// How long an edit may take to show in the hub's rendered objects before flotilla says the
/// hub rendered something else than its preview.
pub const FOLLOW_FOR: Duration = Duration::from_secs(120);

/// An edit written to the hub, awaited in one cell: the engine's object in delivered form.
pub(super) struct Expectation {
    pub(super) object: Value,
    pub(super) title: String,
    pub(super) since: Instant,
}

/// What carrying out an effect did on the hub, for the view after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum After {
    /// Nothing was written: the hub refused, or the effect is not one a hub takes.
    Nothing,
    /// The hub was asked to move cells: an edited policy or Federated object written, or a
    /// reschedule.
    Cells,
    /// OCM took an edited Placement: its decision moves.
    Placement,
}

/// Carries out one effect that writes to the hub (the object view's follows and the previews
/// are the loop's): an edit's cells in `shown` held Pending and awaited in `expected`, an
/// edited Placement awaited in `placements`; anything else a hub does not take is refused
/// with a notice.
pub(super) async fn carry_out(
    hub: &Hub,
    effect: Effect,
    shown: &mut HubView,
    expected: &mut HashMap<CellRef, Expectation>,
    placements: &mut PlacementFollow,
    events: &mpsc::UnboundedSender<BackendEvent>,
) -> After {
    let notice = |text: String| {
        let _ = events.send(BackendEvent::Notice(text));
    };
    match effect {
        Effect::HubApply {
            object,
            base,
            title,
            expect,
        } => {
            match write_object(&hub.client, &object, base.as_ref()).await {
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
                    After::Cells
                }
                Err(WriteError::Changed(why)) => {
                    notice(format!(
                        "not written: {why} — the edit was made from what the hub held before; reopen the editor to edit what it holds now"
                    ));
                    After::Nothing
                }
                Err(err) => {
                    notice(format!("hub {} refused {title}: {err}", hub.context));
                    After::Nothing
                }
            }
        }
        Effect::WritePlacement {
            namespace,
            name,
            patch,
            expect,
        } => {
            if placements
                .write(hub, namespace, name, &patch, expect, events)
                .await
            {
                After::Placement
            } else {
                After::Nothing
            }
        }
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
            After::Cells
        }
        other => {
            notice(format!(
                "on a {} hub the hub propagates: edit its policies (e, o) instead ({} not sent)",
                hub.kind.as_str(),
                other.name()
            ));
            After::Nothing
        }
    }
}

/// Holds each awaited cell at Pending until the hub's rendered object equals the engine's;
/// drops what arrived, and what did not within [`FOLLOW_FOR`] (with a notice).
pub(super) fn follow(
    view: &mut HubView,
    expected: &mut HashMap<CellRef, Expectation>,
) -> Vec<String> {
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

/// An edited OCM Placement written to the hub, awaited in its PlacementDecisions.
struct DecisionExpectation {
    namespace: String,
    name: String,
    clusters: Vec<String>,
    since: Instant,
}

/// Placements, for the OCM placement editor: what changed since `shown` is sent, and each
/// written Placement is followed until OCM decided what its preview said (or time is up).
#[derive(Default)]
pub(super) struct PlacementFollow {
    shown: Option<std::sync::Arc<PlacementWorld>>,
    expected: Vec<DecisionExpectation>,
}

impl PlacementFollow {
    /// Whether a written Placement still awaits its decision.
    pub(super) fn awaits_decisions(&self) -> bool {
        !self.expected.is_empty()
    }

    /// Reads the hub's Placements (on OCM): notices for the followed decisions that arrived or
    /// are late, and the Placements themselves when they changed.
    pub(super) async fn read(&mut self, hub: &Hub, events: &mpsc::UnboundedSender<BackendEvent>) {
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

    /// Writes an edited Placement and follows its decision; `false` when the hub refused it.
    pub(super) async fn write(
        &mut self,
        hub: &Hub,
        namespace: String,
        name: String,
        patch: &[Value],
        expect: Vec<String>,
        events: &mpsc::UnboundedSender<BackendEvent>,
    ) -> bool {
        let title = format!("Placement {namespace}/{name}");
        match write_placement(&hub.client, &namespace, &name, patch).await {
            Ok(()) => {
                let _ = events.send(BackendEvent::Notice(format!(
                    "wrote {title} to hub {} (as flotilla); following its decision until OCM decides [{}]",
                    hub.context,
                    expect.join(", ")
                )));
                self.expected.push(DecisionExpectation {
                    namespace,
                    name,
                    clusters: expect,
                    since: Instant::now(),
                });
                true
            }
            Err(err) => {
                let _ = events.send(BackendEvent::Notice(format!(
                    "hub {} refused {title}: {err}",
                    hub.context
                )));
                false
            }
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::backend::hub::console::fixtures::view;

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
}
