//! The console's state: plain data owned by the session and changed only by `update` and the
//! engine work the session runs. Its parts live in rooms below it (the cells, each editor's
//! own data, the drift book, the rollout, the review rows), and none of them imports this
//! file. It must not hold clients, channels or terminal types, so views and tests can borrow
//! it, nor import anything that acts on the state.

pub mod cells;
pub mod drift;
pub mod edits;
pub mod history;
pub mod object_view;
pub mod ocm_placement;
pub mod override_editor;
pub mod panes;
pub mod placement_editor;
pub mod review;
pub mod rollout;

pub use cells::{CellDetail, CellGrid, HealthCounts, KindCounts};
pub use edits::{FileText, FleetEdit, FleetSave, FleetWrite};
pub use panes::{Pane, PaneView, SortKey};

use std::collections::BTreeMap;
use std::sync::Arc;

use fuzzy_matcher::skim::SkimMatcherV2;

use super::filter::{Candidate, kind_matches};
use crate::backend::CellRef;
use crate::engine::{Fleet, SourceFile};
use crate::model::{ClusterSpec, ClusterStatus, Dialect, Health, ResourceRef, StatusKind};
/// A cluster as the console shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterRow {
    pub spec: ClusterSpec,
    pub status: ClusterStatus,
    /// When the backend last said anything about this cluster (app clock, ms).
    pub last_seen_ms: Option<u64>,
}

/// A federated resource as the console shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceRow {
    pub target: ResourceRef,
    pub dialect: Dialect,
    /// Short placement description, e.g. "selector env=prod".
    pub placement: String,
    /// The template's labels, for `-l` filters.
    pub labels: Option<BTreeMap<String, String>>,
}

impl ResourceRow {
    /// What fuzzy filters match: "Deployment shop/web".
    pub fn search_text(&self) -> String {
        match &self.target.namespace {
            Some(namespace) => format!("{} {namespace}/{}", self.target.kind, self.target.name),
            None => format!("{} {}", self.target.kind, self.target.name),
        }
    }
}

/// What the keyboard is doing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Mode {
    #[default]
    Normal,
    /// Typing a filter for a pane.
    Filter {
        pane: Pane,
        input: String,
        error: Option<String>,
    },
    /// Typing a `:` command.
    Palette {
        input: String,
        /// Index of the highlighted completion.
        selected: usize,
        error: Option<String>,
    },
    Help,
    /// Asking before a write: what would change, and what the operator must type to go ahead.
    Confirm(Box<PendingApply>),
    /// Drilled into the selected cell: one of its views (`tab`), scrolled by `scroll` lines;
    /// `group` is the highlighted group of the clusters view.
    Object {
        scroll: usize,
        tab: object_view::ObjectTab,
        group: usize,
    },
    /// Editing the selected resource's placement.
    Placement(Box<placement_editor::PlacementEditor>),
    /// Editing one of an Open Cluster Management hub's Placements.
    OcmPlacement(Box<ocm_placement::OcmPlacementEditor>),
    /// Editing the override rules of the selected resource × cluster cell.
    Overrides(Box<override_editor::OverrideEditor>),
    /// The drift view: every drifted field, and its repair.
    Drift(Box<drift::DriftView>),
}

/// An edited OCM Placement, ready to write: the patch, and the decision the preview expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacementWrite {
    pub namespace: String,
    pub name: String,
    /// JSON patch ops, the first testing the resourceVersion the edit started from.
    pub patch: Vec<serde_json::Value>,
    pub expect: Vec<String>,
    /// The Placement as it was before this write, for `u`; `None` for an undo itself.
    pub previous: Option<serde_json::Value>,
}

/// A propagation waiting for the operator's confirmation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PendingApply {
    pub cells: Vec<CellRef>,
    /// One line per cluster: "prod-eu-west-1: Deployment/shop/web (Drifted)".
    pub summary: Vec<String>,
    /// What must be typed to confirm: `y` normally, the cluster's name for a danger-class one.
    pub confirm_word: String,
    pub typed: String,
    /// An edited fleet document saved before the cells are propagated.
    pub save: Option<FleetSave>,
    /// An edited OCM Placement to write to the hub instead of propagating cells.
    pub placement: Option<PlacementWrite>,
    /// Objects deleted after the apply (an undo of what a change created).
    pub delete: Vec<CellRef>,
    /// How to take this change back, remembered once it is confirmed.
    pub undo: Option<LastChange>,
    /// A canary cluster first, the rest once it is in sync (tab toggles).
    pub waves: bool,
}

/// How to undo the last confirmed placement change: put the document back, re-apply the
/// objects it changed as they were, and delete what it created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastChange {
    /// e.g. `PropagationPolicy shop/web`.
    pub title: String,
    /// The document as it was before the change.
    pub previous: FleetSave,
    pub reapply: Vec<CellRef>,
    pub created: Vec<CellRef>,
}

/// A run of adjacent clusters sharing a grouping label value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterGroup {
    pub name: String,
    /// Positions in the clusters pane's `visible` list.
    pub members: std::ops::Range<usize>,
}

/// Everything the console shows.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Where the fleet comes from, e.g. "demo (simulated)" or "fleet ./fleet".
    pub source: String,
    /// The fleet as last loaded or saved; the engine's answers for the selected cell and the
    /// editors' previews are derived from it.
    pub fleet: Arc<Fleet>,
    /// The texts the fleet was loaded from, for the editors.
    pub files: Arc<Vec<SourceFile>>,
    /// What is still being loaded in the background, for the header ("loading the fleet…").
    pub loading: Option<String>,
    /// Confirmed edits of the fleet's files, in order, for the session to write.
    pub edits: Vec<FleetEdit>,
    pub clusters: Vec<ClusterRow>,
    pub resources: Vec<ResourceRow>,
    pub cells: CellGrid,
    pub focus: Pane,
    pub cluster_view: PaneView,
    pub resource_view: PaneView,
    /// Only resources of this kind (`:kind deploy`).
    pub kind_filter: Option<String>,
    /// Only rows with at least one cell in this status (`:status drifted`).
    pub status_filter: Option<StatusKind>,
    /// Keep only rows with a cell of this live health.
    pub health_filter: Option<crate::model::HealthKind>,
    /// Cluster label the clusters are grouped by (`region`, `provider`, any label).
    pub group_by: Option<String>,
    /// Groups of the visible clusters, when grouped.
    pub groups: Vec<ClusterGroup>,
    /// Draw the matrix as one heat strip per group instead of one column per cluster.
    pub collapsed: bool,
    /// Cluster name globs that mark dangerous clusters (e.g. `prod-*`).
    pub danger_patterns: Vec<String>,
    pub mode: Mode,
    pub readonly: bool,
    /// Why the source cannot take edits of this kind at all (a hub without the API), said
    /// instead of the generic read-only notice.
    pub cannot_edit: CannotEdit,
    /// The kind of federation hub the console is attached to (`Karmada` …), if any: its
    /// controllers propagate, so `a` asks the hub to reschedule instead of applying.
    pub hub: Option<String>,
    /// On an Open Cluster Management hub: its Placements and what they are decided against.
    pub placements: Option<std::sync::Arc<crate::engine::edit::ocm_placement::PlacementWorld>>,
    pub should_quit: bool,
    /// The latest notice for the status line.
    pub notice: Option<String>,
    /// Rows a page-up/down moves, from the terminal height.
    pub page_rows: usize,
    /// Warnings from configuration, shown once at the bottom.
    pub warnings: Vec<String>,
    /// The app clock in milliseconds since start, advanced by ticks.
    pub now_ms: u64,
    /// The terminal size.
    pub viewport: (u16, u16),
    /// Clusters Unreachable or Unauthorized, kept as their statuses change.
    pub unreachable_clusters: usize,
    /// Set when this is the read-only wall display.
    pub wall: Option<Wall>,
    /// Why the selected resource is or is not on the selected cluster, from the engine.
    pub explanation: Option<CellExplanation>,
    /// The last confirmed placement change, for undo.
    pub last_change: Option<LastChange>,
    /// The last OCM Placement written from the editor, as it was before: (namespace, name,
    /// object), for undo.
    pub last_placement: Option<(String, String, serde_json::Value)>,
    /// The propagation in progress, if any.
    pub rollout: Option<rollout::Rollout>,
    /// When a propagation's next wave may start (`waveGate` in `config.yaml`).
    pub wave_gate: crate::config::wave_gate::WaveGate,
    /// The drift the backend reported, field by field.
    pub drift: drift::DriftBook,
    /// What the object view follows on the clusters, and what they answered.
    pub live: object_view::LiveBook,
}

/// The engine's explanation of one cell, as lines for the detail pane.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CellExplanation {
    pub resource: usize,
    pub cluster: usize,
    pub placed: bool,
    pub reason: String,
    pub steps: Vec<String>,
    /// The rendered object as YAML, filled in only while drilled into the cell.
    pub object_yaml: Option<String>,
}

/// The wall display's own state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wall {
    /// Page number; the view takes it modulo the page count, so it may wrap freely.
    pub page: i64,
    /// Milliseconds between automatic page turns.
    pub page_every_ms: u64,
    /// When the page last turned.
    pub page_turned_ms: u64,
    /// A cluster with no event for this long is shown as stale.
    pub stale_after_ms: u64,
    /// Draw with ASCII only.
    pub ascii: bool,
    /// The last hour of Degraded, Drifted and Unreachable counts, for the tiles' sparklines.
    pub history: history::History,
}

/// Edits a source does not support, each with the reason the console gives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CannotEdit {
    pub overrides: Option<String>,
    pub placements: Option<String>,
    /// Why `a` has nothing to ask of this hub.
    pub reschedule: Option<String>,
}

/// The initial state for a fleet: its clusters (health unknown until probed) and resources.
pub fn state_for_fleet(fleet: &Arc<Fleet>, source: String) -> State {
    let mut state = State {
        source,
        page_rows: 10,
        ..State::default()
    };
    state.take_fleet(fleet.clone());
    state
}

impl State {
    /// Shows this fleet: its clusters (health unknown until probed) and resources, every cell
    /// Pending until the backend reports. A large fleet starts as one heat strip per region
    /// unless the operator already grouped it.
    pub fn take_fleet(&mut self, fleet: Arc<Fleet>) {
        self.clusters = fleet
            .clusters
            .iter()
            .map(|spec| ClusterRow {
                spec: spec.clone(),
                status: Default::default(),
                last_seen_ms: None,
            })
            .collect();
        self.resources = fleet
            .resources
            .iter()
            .enumerate()
            .map(|(index, resource)| ResourceRow {
                target: resource.target.clone(),
                dialect: resource.dialect,
                placement: fleet.placement_summary(index),
                labels: None,
            })
            .collect();
        self.cells = CellGrid::new(self.resources.len(), self.clusters.len());
        self.unreachable_clusters = 0;
        self.fleet = fleet;
        self.explanation = None;
        if self.clusters.len() > LARGE_FLEET && self.group_by.is_none() {
            self.group_by = Some("region".into());
            self.collapsed = true;
        }
        self.refresh_views();
        self.cluster_view.cursor = 0;
    }
}

/// Clusters beyond which the matrix starts collapsed into heat strips.
const LARGE_FLEET: usize = 200;

impl State {
    pub fn new(source: String, clusters: Vec<ClusterRow>, resources: Vec<ResourceRow>) -> State {
        let cells = CellGrid::new(resources.len(), clusters.len());
        let unreachable_clusters = clusters
            .iter()
            .filter(|row| is_unreachable(row.status.health))
            .count();
        let mut state = State {
            source,
            unreachable_clusters,
            clusters,
            resources,
            cells,
            page_rows: 10,
            ..State::default()
        };
        state.refresh_views();
        state
    }

    /// A cell's status with its reason; a cell reported NotPlaced without one takes the
    /// fleet's reason.
    pub fn cell_status(&self, resource: usize, cluster: usize) -> crate::model::CellStatus {
        use crate::model::CellStatus;
        match self.cells.status(resource, cluster) {
            CellStatus::NotPlaced(reason) if reason.is_empty() => CellStatus::NotPlaced(
                self.fleet
                    .unplaced_reason(resource, cluster)
                    .unwrap_or("not placed")
                    .to_string(),
            ),
            status => status,
        }
    }

    /// Whether a cluster has been silent for longer than the wall's staleness threshold.
    pub fn is_stale(&self, cluster: usize) -> bool {
        let Some(wall) = &self.wall else {
            return false;
        };
        self.clusters.get(cluster).is_some_and(|row| {
            let seen = row.last_seen_ms.unwrap_or(0);
            self.now_ms.saturating_sub(seen) > wall.stale_after_ms
        })
    }

    /// How many clusters are Ready.
    pub fn ready_clusters(&self) -> usize {
        self.clusters
            .iter()
            .filter(|row| row.status.health == Health::Ready)
            .count()
    }

    /// The (resource, cluster) cell both cursors point at.
    pub fn selected_cell(&self) -> Option<(usize, usize)> {
        Some((self.selected_resource()?, self.selected_cluster()?))
    }

    /// Moves the clusters pane's cursor one cluster on (or back), clamped: the matrix
    /// column, and the cluster an open object view shows.
    pub fn step_cluster(&mut self, forward: bool) {
        let view = &mut self.cluster_view;
        let len = view.visible.len();
        view.cursor = if forward {
            (view.cursor + 1).min(len.saturating_sub(1))
        } else {
            view.cursor.saturating_sub(1)
        };
    }

    /// The cluster under the clusters pane's cursor.
    pub fn selected_cluster(&self) -> Option<usize> {
        self.cluster_view.selected()
    }

    /// The resource under the resources pane's cursor.
    /// Appends rows (a hub's new bindings or objects); existing rows keep their indexes, so
    /// open editors and cell references stay valid.
    pub fn add_resources(&mut self, rows: Vec<ResourceRow>) {
        if rows.is_empty() {
            return;
        }
        self.cells.add_resources(rows.len());
        self.resources.extend(rows);
        self.refresh_views();
    }

    /// Whether the rows' federation dialect means anything: not on an OCM hub, whose rows are
    /// the objects its ManifestWorks carry.
    pub fn shows_dialect(&self) -> bool {
        self.hub.as_deref() != Some(crate::backend::hub::HubKind::OpenClusterManagement.as_str())
    }

    pub fn selected_resource(&self) -> Option<usize> {
        self.resource_view.selected()
    }

    pub fn view(&self, pane: Pane) -> &PaneView {
        match pane {
            Pane::Clusters => &self.cluster_view,
            Pane::Resources => &self.resource_view,
        }
    }

    pub fn view_mut(&mut self, pane: Pane) -> &mut PaneView {
        match pane {
            Pane::Clusters => &mut self.cluster_view,
            Pane::Resources => &mut self.resource_view,
        }
    }

    /// Whether a cluster belongs to the danger class.
    pub fn is_dangerous(&self, cluster: usize) -> bool {
        self.clusters.get(cluster).is_some_and(|row| {
            self.danger_patterns
                .iter()
                .any(|pattern| crate::glob::glob_match(pattern, &row.spec.name))
        })
    }

    /// Whether the state depends on cell statuses for its row order or filtering, so cell
    /// changes must recompute the visible rows.
    pub fn views_follow_cells(&self) -> bool {
        self.status_filter.is_some()
            || self.health_filter.is_some()
            || self.cluster_view.filter.looks_at_cells()
            || self.resource_view.filter.looks_at_cells()
            || self.cluster_view.sort == SortKey::Worst
            || self.resource_view.sort == SortKey::Worst
    }

    /// Recomputes both panes' visible rows (filter, status filter, sort, grouping), keeping
    /// each cursor on the same row when it is still visible.
    pub fn refresh_views(&mut self) {
        let matcher = SkimMatcherV2::default();
        let selected_cluster = self.selected_cluster();
        let selected_resource = self.selected_resource();

        let mut clusters: Vec<usize> = (0..self.clusters.len())
            .filter(|&index| {
                let row = &self.clusters[index];
                let candidate = Candidate {
                    text: &row.spec.name,
                    labels: &row.spec.labels,
                };
                let (statuses, healths) = (
                    self.cells.cluster_counts(index),
                    self.cells.cluster_health(index),
                );
                self.cluster_view.filter.matches(&matcher, &candidate)
                    && self.cluster_view.filter.matches_cells(&statuses, &healths)
                    && self.status_filter.is_none_or(|kind| statuses.get(kind) > 0)
                    && self.health_filter.is_none_or(|kind| healths.get(kind) > 0)
            })
            .collect();
        sort_clusters(self, &mut clusters);
        self.groups = match &self.group_by {
            Some(key) => {
                let value = |index: usize| group_value(&self.clusters[index].spec, key);
                clusters.sort_by_cached_key(|cluster| value(*cluster));
                group_runs(&clusters, value)
            }
            None => Vec::new(),
        };
        self.cluster_view.visible = clusters;

        let no_labels = std::collections::BTreeMap::new();
        let mut resources: Vec<usize> = (0..self.resources.len())
            .filter(|&index| {
                let row = &self.resources[index];
                let text = row.search_text();
                let candidate = Candidate {
                    text: &text,
                    labels: row.labels.as_ref().unwrap_or(&no_labels),
                };
                let (statuses, healths) = (
                    self.cells.resource_counts(index),
                    self.cells.resource_health(index),
                );
                self.resource_view.filter.matches(&matcher, &candidate)
                    && self.resource_view.filter.matches_cells(&statuses, &healths)
                    && self
                        .kind_filter
                        .as_deref()
                        .is_none_or(|kind| kind_matches(&row.target.kind, kind))
                    && self.status_filter.is_none_or(|kind| statuses.get(kind) > 0)
                    && self.health_filter.is_none_or(|kind| healths.get(kind) > 0)
            })
            .collect();
        sort_resources(self, &mut resources);
        self.resource_view.visible = resources;

        restore_cursor(&mut self.cluster_view, selected_cluster);
        restore_cursor(&mut self.resource_view, selected_resource);
    }
}

fn restore_cursor(view: &mut PaneView, selected: Option<usize>) {
    if let Some(position) = selected.and_then(|row| view.visible.iter().position(|r| *r == row)) {
        view.cursor = position;
    }
    view.cursor = view.cursor.min(view.visible.len().saturating_sub(1));
}

/// The value a cluster is grouped under: a label, or provider/region/zone from the inventory.
pub fn group_value(spec: &ClusterSpec, key: &str) -> String {
    let value = match key {
        "provider" => spec
            .provider
            .clone()
            .or_else(|| spec.labels.get(key).cloned()),
        "region" => spec
            .region
            .clone()
            .or_else(|| spec.labels.get(key).cloned()),
        "zone" => spec.zones.first().cloned(),
        _ => spec.labels.get(key).cloned(),
    };
    value.unwrap_or_else(|| format!("(no {key})"))
}

fn group_runs(clusters: &[usize], value: impl Fn(usize) -> String) -> Vec<ClusterGroup> {
    let mut groups: Vec<ClusterGroup> = Vec::new();
    for (position, &cluster) in clusters.iter().enumerate() {
        let name = value(cluster);
        match groups.last_mut() {
            Some(group) if group.name == name => group.members.end = position + 1,
            _ => groups.push(ClusterGroup {
                name,
                members: position..position + 1,
            }),
        }
    }
    groups
}

fn sort_clusters(state: &State, clusters: &mut [usize]) {
    let rows = &state.clusters;
    match state.cluster_view.sort {
        SortKey::Fleet | SortKey::Kind => {}
        SortKey::Name => clusters.sort_by(|a, b| rows[*a].spec.name.cmp(&rows[*b].spec.name)),
        SortKey::Worst => {
            clusters.sort_by_key(|c| std::cmp::Reverse(state.cells.cluster_concern(*c).severity()))
        }
        SortKey::Health => {
            clusters.sort_by_key(|c| std::cmp::Reverse(health_rank(rows[*c].status.health)))
        }
        SortKey::Latency => clusters
            .sort_by_key(|c| std::cmp::Reverse(rows[*c].status.latency_ms.unwrap_or(u64::MAX))),
    }
}

/// Whether a cluster's connection counts as unreachable on the wall.
pub fn is_unreachable(health: Health) -> bool {
    matches!(health, Health::Unreachable | Health::Unauthorized)
}

fn health_rank(health: Health) -> u8 {
    match health {
        Health::Ready => 0,
        Health::Unknown => 1,
        Health::NotReady => 2,
        Health::Unauthorized => 3,
        Health::Unreachable => 4,
    }
}

fn sort_resources(state: &State, resources: &mut [usize]) {
    let rows = &state.resources;
    match state.resource_view.sort {
        SortKey::Fleet | SortKey::Health | SortKey::Latency => {}
        SortKey::Name => resources.sort_by(|a, b| rows[*a].target.name.cmp(&rows[*b].target.name)),
        SortKey::Kind => resources.sort_by(|a, b| {
            (&rows[*a].target.kind, &rows[*a].target.name)
                .cmp(&(&rows[*b].target.kind, &rows[*b].target.name))
        }),
        SortKey::Worst => resources
            .sort_by_key(|r| std::cmp::Reverse(state.cells.resource_concern(*r).severity())),
    }
}
