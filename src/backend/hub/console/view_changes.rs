//! What the console is sent of a hub's view: the first matrix, then only what changed. Between
//! two whole views that is [`changes`]; on the main path, a [`Pass`] takes each batch of the
//! informer caches' changes into the kind's incremental view, keeping the old values of what they
//! touch (`Before`) to send the cells, columns and health that moved and the rows that are
//! new, and builds the whole view again after a relist or when the hub answers again. It reads
//! the caches' stores only: it must not talk to the hub, and a pass must not wait (it runs on a
//! blocking thread).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::effects::{Expectation, follow};
use crate::backend::hub::cache::{Caches, Change, IncrementalView, Touched, cells_of, health_of};
use crate::backend::hub::error::HubError;
use crate::backend::hub::view::{HubRow, HubView};
use crate::messages::{AddedResource, BackendEvent, CellRef, CellUpdate, HealthUpdate};
use crate::model::{CellHealth, CellStatus, ClusterStatus, Dialect, Health, HubKind};

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

/// How many times, in this process, a hub backend built its whole view: a cached backend
/// once at the start, then only after a relist or a reconnect; a reading one on every change.
/// The console's tests read it to tell a watched change from a full read.
static FULL_READS: AtomicU64 = AtomicU64::new(0);

/// How many whole views the hub backends of this process have built.
pub fn full_reads() -> u64 {
    FULL_READS.load(Ordering::Relaxed)
}

/// Counts one whole view built: a whole read of the hub, or of the caches.
pub(super) fn count_full_read() {
    FULL_READS.fetch_add(1, Ordering::Relaxed);
}

/// How long the caches' watches must keep failing before the hub is shown unreachable: a
/// watcher retries at once, and a single failed watch request loses nothing.
const UNREACHABLE_AFTER: Duration = Duration::from_secs(10);

/// What the cached backend owns between passes; handed to a blocking thread for each pass.
pub struct Pass<L> {
    pub live: L,
    pub(super) expected: HashMap<CellRef, Expectation>,
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

impl<L: IncrementalView> Pass<L> {
    /// The first whole view from the caches, in the rows and columns of `shown`, and what it
    /// changes in them.
    pub fn start(
        shown: &HubView,
        caches: &Caches,
        kubeconfig: &kube::config::Kubeconfig,
    ) -> Result<(Pass<L>, Vec<BackendEvent>), HubError> {
        let (live, events) = whole_read::<L>(shown, caches, kubeconfig)?;
        Ok((Pass::new(live, caches.kinds.len(), kubeconfig), events))
    }

    /// Goes on from `live`, a whole view of caches watching `kinds` kinds.
    pub(super) fn new(live: L, kinds: usize, kubeconfig: &kube::config::Kubeconfig) -> Pass<L> {
        Pass {
            live,
            expected: HashMap::new(),
            listed: vec![false; kinds],
            failing: None,
            failing_since: None,
            kubeconfig: kubeconfig.clone(),
        }
    }

    /// Whether the hub stopped answering (and the view says so).
    pub fn hub_failing(&self) -> bool {
        self.failing.is_some()
    }

    /// Takes in a batch of changes (already in the stores) and returns the events that carry
    /// what they changed: the touched cells whose value changed, the columns whose health
    /// changed, the rows new to the console; a relist (or the hub answering again) rebuilds
    /// the whole view instead.
    pub fn take_in(&mut self, batch: Vec<Change<L::Object>>, caches: &Caches) -> Vec<BackendEvent> {
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
fn whole_read<L: IncrementalView>(
    shown: &HubView,
    caches: &Caches,
    kubeconfig: &kube::config::Kubeconfig,
) -> Result<(L, Vec<BackendEvent>), HubError> {
    count_full_read();
    let live = L::read(shown, caches, kubeconfig)?;
    let mut events = announced(&added_rows(shown, live.view()));
    events.extend(changes(shown, live.view()));
    Ok((live, events))
}

/// The whole view of the stores as the hub has it: every member, in name order, and every row;
/// with the incremental view it came from.
pub(super) fn whole_view<L: IncrementalView>(
    kind: HubKind,
    caches: &Caches,
    kubeconfig: &kube::config::Kubeconfig,
) -> Result<(HubView, L), HubError> {
    let mut clusters = L::members(caches, kubeconfig)?;
    clusters.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    let shown = HubView {
        kind,
        clusters,
        rows: Vec::new(),
    };
    count_full_read();
    let live = L::read(&shown, caches, kubeconfig)?;
    Ok((live.view().clone(), live))
}

/// The rows `next` has beyond `shown`'s, as the console appends them.
pub(super) fn added_rows(shown: &HubView, next: &HubView) -> Vec<AddedResource> {
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

/// Rows new to the console, as the backend announces them: a notice and the rows to append
/// (nothing when there are none).
pub(super) fn announced(added: &[AddedResource]) -> Vec<BackendEvent> {
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

/// The hub did not answer: every cluster's health is unknown, with the reason.
pub(super) fn unreachable_hub(shown: &HubView, reason: &str) -> HubView {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::backend::hub::console::fixtures::view;
    use crate::backend::hub::objects::delivered_form;
    use crate::backend::hub::view::{aligned, in_rows_of};
    use crate::model::ResourceRef;

    /// A Karmada hub in memory: members a and b, binding `web` on both, both Works Applied
    /// with `color` blue; the pass started from the view of the same objects.
    mod cached {
        use crate::backend::hub::cache::CacheWriter;
        use kube::api::DynamicObject;
        use kube::runtime::watcher;

        use super::*;
        use crate::backend::hub::console::fixtures::{
            WORKS, karmada_caches, object, web_binding, work,
        };
        use crate::backend::hub::karmada::delta::Live;

        #[test]
        fn the_first_view_from_the_caches_has_every_member_in_name_order_and_every_cell() {
            let (caches, _, _) = hub();
            let kubeconfig = kube::config::Kubeconfig::default();
            let (view, live) =
                whole_view::<Live>(HubKind::Karmada, &caches, &kubeconfig).expect("the view");
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
            let shown = in_rows_of(&[waiting, view.rows[0].target.clone()], view);
            assert!(
                !live.view().same_layout(&shown),
                "the incremental view has one row, the console two"
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
                vec![Change::of(
                    1,
                    &binding,
                    false,
                    crate::backend::hub::karmada::delta::parse,
                )],
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
            let (caches, writers) = karmada_caches();
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

        fn watched(
            writers: &mut [CacheWriter],
            object: DynamicObject,
        ) -> Change<crate::backend::hub::karmada::delta::Object> {
            writers[WORKS].apply_watcher_event(&watcher::Event::Apply(object.clone()));
            Change::of(
                WORKS,
                &object,
                false,
                crate::backend::hub::karmada::delta::parse,
            )
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
            let binding = web_binding(Some(json!({"aggregatedStatus": [{"clusterName": "b",
                "applied": true, "health": "Unhealthy"}]})));
            writers[1].apply_watcher_event(&watcher::Event::Apply(binding.clone()));
            let events = pass.take_in(
                vec![Change::of(
                    1,
                    &binding,
                    false,
                    crate::backend::hub::karmada::delta::parse,
                )],
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
                        since: None,
                        rule: None,
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
