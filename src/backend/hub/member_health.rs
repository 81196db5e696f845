//! Where a hub's verdict stops at "not healthy yet" — Karmada calls every unfinished rollout
//! Unhealthy and reflects no conditions — the member's own object says whether the workload is
//! still progressing or stuck past its progress deadline; where the hub says nothing about
//! health (KubeFed reports propagation only), the member's object is the only word. Reads go
//! to the cells the hub reports Progressing ([`Unsettled`]), or on a hub without health to
//! every placed cell in turn ([`Survey`]), on members flotilla can reach (their kubeconfig
//! context or Karmada's proxy), a few at a time; a member that cannot be read keeps the hub's
//! word. It only reads, and judges with the same rules as a live object.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use futures::StreamExt;

use super::connect::Hub;
use super::view::HubView;
use crate::backend::fanout::cluster_api::ClusterApi;
use crate::backend::kube::api::KubeCluster;
use crate::backend::kube::kubeconfig::Timeouts;
use crate::messages::{BackendEvent, CellRef, HealthUpdate};
use crate::model::{CellHealth, ClusterSpec, HealthKind, ResourceRef, StatusKind};

/// Members read at once.
const AT_ONCE: usize = 8;

/// Cells looked at in one pass; the rest wait for the next.
pub const PER_PASS: usize = 256;

/// One cell to ask its member about: where it is, what it shows, and the hub's verdict.
#[derive(Debug, Clone)]
pub struct Question {
    cell: CellRef,
    member: ClusterSpec,
    target: ResourceRef,
    hub_says: Option<CellHealth>,
}

/// The questions for `cells` of `view`, owned, so the reads can run apart from the view.
pub fn questions(view: &HubView, cells: &[CellRef]) -> Vec<Question> {
    cells
        .iter()
        .filter_map(|&cell| {
            let (row, column) = (cell.resource as usize, cell.cluster as usize);
            Some(Question {
                cell,
                member: view.clusters.get(column)?.0.clone(),
                target: view.rows.get(row)?.target.clone(),
                hub_says: view.health(row, column),
            })
        })
        .collect()
}

/// For each question, the health to show: the member's verdict where it is Degraded (with
/// the hub's words and the member's reason), else the hub's own.
pub async fn refine(hub: &Hub, questions: Vec<Question>) -> Vec<HealthUpdate> {
    let mut clients: HashMap<String, Option<KubeCluster>> = HashMap::new();
    for question in &questions {
        if clients.contains_key(&question.member.name) {
            continue;
        }
        let client = hub
            .member_client(&question.member, Timeouts::default())
            .await
            .ok()
            .map(|client| KubeCluster::new(client, true));
        clients.insert(question.member.name.clone(), client);
    }
    let clients = &clients;
    futures::stream::iter(questions)
        .map(|question| async move {
            let member_says = match clients.get(&question.member.name).and_then(Option::as_ref) {
                Some(api) => match api.get(&question.target).await {
                    Ok(Some(live)) => crate::engine::health::assess(&live),
                    _ => None,
                },
                None => None,
            };
            HealthUpdate {
                cell: question.cell,
                health: judged(question.hub_says, member_says),
            }
        })
        .buffer_unordered(AT_ONCE)
        .collect()
        .await
}

/// The cells whose hub verdict is Progressing, and those among them a member showed stuck.
#[derive(Debug, Default)]
pub struct Unsettled {
    progressing: BTreeSet<CellRef>,
    stuck: BTreeMap<CellRef, CellHealth>,
}

impl Unsettled {
    /// Notes the hub's health updates in `events` on their way to the console. A cell a member
    /// showed stuck stays Degraded while the hub keeps calling it Progressing (the next pass
    /// asks the member again).
    pub fn note(&mut self, events: &mut [BackendEvent]) {
        for event in events {
            let BackendEvent::Health(updates) = event else {
                continue;
            };
            for update in updates {
                let progressing = update
                    .health
                    .as_ref()
                    .is_some_and(|health| health.kind == HealthKind::Progressing);
                if !progressing {
                    self.progressing.remove(&update.cell);
                    self.stuck.remove(&update.cell);
                    continue;
                }
                self.progressing.insert(update.cell);
                if let Some(stuck) = self.stuck.get(&update.cell) {
                    update.health = Some(stuck.clone());
                }
            }
        }
    }

    /// The cells to ask their members about, at most [`PER_PASS`].
    pub fn cells(&self) -> Vec<CellRef> {
        self.progressing.iter().take(PER_PASS).copied().collect()
    }

    /// A pass's answers ([`refine`]): the updates that change what the console shows.
    pub fn take(&mut self, answers: Vec<HealthUpdate>) -> Vec<HealthUpdate> {
        answers
            .into_iter()
            .filter(|answer| {
                match answer
                    .health
                    .as_ref()
                    .filter(|h| h.kind == HealthKind::Degraded)
                {
                    Some(degraded) => {
                        self.stuck.insert(answer.cell, degraded.clone()) != Some(degraded.clone())
                    }
                    None => self.stuck.remove(&answer.cell).is_some(),
                }
            })
            .collect()
    }
}

/// The hub's verdict, unless the member itself reports the workload Degraded; the member's
/// where the hub says nothing.
fn judged(hub_says: Option<CellHealth>, member_says: Option<CellHealth>) -> Option<CellHealth> {
    match (hub_says, member_says) {
        (Some(hub), Some(member)) if member.kind == HealthKind::Degraded => Some(CellHealth {
            kind: HealthKind::Degraded,
            reason: format!("{}; on the member: {}", hub.reason, member.reason),
            since: member.since,
            rule: member.rule,
        }),
        (None, member) => member,
        (hub, _) => hub,
    }
}

/// The placed cells of `view`, row by row: those a member should hold.
pub fn placed_cells(view: &HubView) -> Vec<CellRef> {
    let mut cells = Vec::new();
    for row in 0..view.rows.len() {
        for column in 0..view.clusters.len() {
            if view.cell(row, column).0.kind() != StatusKind::NotPlaced {
                cells.push(CellRef {
                    resource: row as u32,
                    cluster: column as u32,
                });
            }
        }
    }
    cells
}

/// Health on a hub that reports none: every placed cell is asked its member in turn, at most
/// [`PER_PASS`] a pass, cells not yet Healthy first, so a rollout's progress shows soon.
#[derive(Debug, Default)]
pub struct Survey {
    /// Where the next pass goes on in the placed cells.
    cursor: usize,
    shown: BTreeMap<CellRef, Option<CellHealth>>,
}

impl Survey {
    /// The cells to ask about in the next pass.
    pub fn cells(&mut self, view: &HubView) -> Vec<CellRef> {
        let placed = placed_cells(view);
        self.shown
            .retain(|cell, _| placed.binary_search(cell).is_ok());
        let mut asked: Vec<CellRef> = self
            .shown
            .iter()
            .filter(|(_, health)| {
                health
                    .as_ref()
                    .is_none_or(|health| health.kind != HealthKind::Healthy)
            })
            .map(|(cell, _)| *cell)
            .take(PER_PASS)
            .collect();
        let start = self.cursor.min(placed.len());
        for cell in placed[start..].iter().chain(&placed[..start]) {
            if asked.len() >= PER_PASS.min(placed.len()) {
                break;
            }
            self.cursor = (self.cursor + 1) % placed.len().max(1);
            if !asked.contains(cell) {
                asked.push(*cell);
            }
        }
        asked
    }

    /// A pass's answers ([`refine`]): the updates that change what the console shows.
    pub fn take(&mut self, answers: Vec<HealthUpdate>) -> Vec<HealthUpdate> {
        answers
            .into_iter()
            .filter(|answer| {
                self.shown.insert(answer.cell, answer.health.clone()) != Some(answer.health.clone())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn health(kind: HealthKind, reason: &str) -> CellHealth {
        CellHealth {
            kind,
            reason: reason.into(),
            since: None,
            rule: None,
        }
    }

    #[test]
    fn a_stuck_cell_stays_degraded_until_its_member_or_the_hub_says_otherwise() {
        let cell = CellRef {
            resource: 0,
            cluster: 1,
        };
        let update = |health: CellHealth| HealthUpdate {
            cell,
            health: Some(health),
        };
        let progressing = health(HealthKind::Progressing, "Karmada reports Unhealthy");
        let degraded = health(
            HealthKind::Degraded,
            "Karmada reports Unhealthy; on the member: x",
        );
        let mut unsettled = Unsettled::default();
        unsettled.note(&mut [BackendEvent::Health(vec![update(progressing.clone())])]);
        assert_eq!(unsettled.cells(), [cell]);
        assert_eq!(
            unsettled.take(vec![update(degraded.clone())]),
            [update(degraded.clone())]
        );
        assert!(
            unsettled.take(vec![update(degraded.clone())]).is_empty(),
            "the same answer again changes nothing"
        );
        let mut again = [BackendEvent::Health(vec![update(progressing.clone())])];
        unsettled.note(&mut again);
        let BackendEvent::Health(shown) = &again[0] else {
            unreachable!()
        };
        assert_eq!(
            shown,
            &[update(degraded.clone())],
            "no flicker back to Progressing"
        );
        assert_eq!(
            unsettled.take(vec![update(progressing.clone())]),
            [update(progressing)],
            "the member recovered: the hub's word again"
        );
        unsettled.note(&mut [BackendEvent::Health(vec![update(health(
            HealthKind::Healthy,
            "Karmada reports Healthy",
        ))])]);
        assert!(unsettled.cells().is_empty());
    }

    #[test]
    fn only_a_degraded_member_overrides_the_hubs_verdict() {
        let hub = health(
            HealthKind::Progressing,
            "Karmada reports Unhealthy (1/3 available)",
        );
        // When the member's deadline passed comes along, so the console can say how long ago.
        let since = Some("2026-12-01T18:51:15Z".to_string());
        assert_eq!(
            judged(
                Some(hub.clone()),
                Some(CellHealth {
                    since: since.clone(),
                    ..health(
                        HealthKind::Degraded,
                        "1/3 available, progress deadline exceeded: ProgressDeadlineExceeded: ReplicaSet \"web-7d\" has timed out progressing."
                    )
                })
            ),
            Some(CellHealth {
                since,
                ..health(
                    HealthKind::Degraded,
                    "Karmada reports Unhealthy (1/3 available); on the member: 1/3 available, progress deadline exceeded: ProgressDeadlineExceeded: ReplicaSet \"web-7d\" has timed out progressing."
                )
            })
        );
        assert_eq!(
            judged(
                Some(hub.clone()),
                Some(health(HealthKind::Progressing, "1/3 available"))
            ),
            Some(hub.clone()),
            "still progressing: the hub's word stands"
        );
        assert_eq!(judged(Some(hub.clone()), None), Some(hub), "member unread");
    }

    fn view(rows: usize, clusters: usize) -> HubView {
        use crate::backend::hub::view::HubRow;
        use crate::model::{CellStatus, ClusterStatus, Health};
        let specs: Vec<(ClusterSpec, ClusterStatus)> = (0..clusters)
            .map(|c| {
                let spec = ClusterSpec {
                    name: format!("member-{c}"),
                    ..ClusterSpec::default()
                };
                let status = ClusterStatus {
                    health: Health::Ready,
                    ..ClusterStatus::default()
                };
                (spec, status)
            })
            .collect();
        let rows = (0..rows)
            .map(|r| HubRow {
                target: ResourceRef {
                    api_version: "apps/v1".into(),
                    kind: "Deployment".into(),
                    namespace: Some("shop".into()),
                    name: format!("web-{r}"),
                },
                source: String::new(),
                carrier: None,
                // Member 0 is left out of every row.
                cells: (1..clusters)
                    .map(|c| (format!("member-{c}"), (CellStatus::InSync, None)))
                    .collect(),
                not_placed: "not placed".into(),
                objects: Default::default(),
                health: Default::default(),
            })
            .collect();
        HubView {
            kind: crate::model::HubKind::KubeFed,
            rows,
            clusters: specs,
        }
    }

    #[test]
    fn where_the_hub_says_nothing_the_member_is_the_word() {
        let member = health(HealthKind::Progressing, "1/2 available");
        assert_eq!(judged(None, Some(member.clone())), Some(member));
        assert_eq!(judged(None, None), None);
    }

    #[test]
    fn a_survey_asks_about_every_placed_cell_in_turn_and_the_unsettled_ones_each_pass() {
        // 300 rows on members 1 and 2: 600 placed cells, more than one pass asks.
        let view = view(300, 3);
        assert_eq!(placed_cells(&view).len(), 600);
        assert!(placed_cells(&view).iter().all(|cell| cell.cluster != 0));
        let mut survey = Survey::default();
        let first = survey.cells(&view);
        assert_eq!(first.len(), PER_PASS);
        let answer = |cell: CellRef, kind| HealthUpdate {
            cell,
            health: Some(health(kind, "x")),
        };
        let stuck = first[7];
        let answers: Vec<HealthUpdate> = first
            .iter()
            .map(|&cell| {
                let kind = if cell == stuck {
                    HealthKind::Progressing
                } else {
                    HealthKind::Healthy
                };
                answer(cell, kind)
            })
            .collect();
        assert_eq!(survey.take(answers.clone()).len(), PER_PASS, "all new");
        assert!(
            survey.take(answers).is_empty(),
            "the same answers change nothing"
        );
        let second = survey.cells(&view);
        assert_eq!(second[0], stuck, "the unsettled cell is asked again first");
        assert!(
            second[1..].iter().all(|cell| !first.contains(cell)),
            "then the cells not asked yet"
        );
        let mut seen: BTreeSet<CellRef> = first.iter().chain(&second).copied().collect();
        seen.extend(survey.cells(&view));
        assert_eq!(seen.len(), 600, "three passes reach every placed cell");
    }
}
