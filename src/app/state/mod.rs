//! The console's state: plain data owned by the session and changed only by `update`, and the
//! pure reads views and `update` share (where keys go now, which clusters hold a resource).
//! Its parts live in rooms below it (the cells, the panes and their filters, each editor's own
//! data, the drift book, the rollout, the review rows), and none of them imports this file. It
//! must not hold clients, channels or terminal types, so views and tests can borrow it, nor
//! import anything that acts on the state.

pub mod cells;
pub mod drift;
pub mod edits;
pub mod exec;
pub mod filter;
pub mod history;
pub mod logs;
pub mod object_view;
pub mod ocm_placement;
pub mod override_editor;
pub mod panes;
pub mod placement_editor;
pub mod pods;
pub mod review;
pub mod rollout;

pub use cells::{CellDetail, CellGrid, HealthCounts, KindCounts};
pub use edits::{
    AfterSave, FileText, FleetChanged, FleetEdit, FleetSave, FleetWrite, Reopen, Saved,
};
pub use panes::{Pane, PaneView, SortKey};

use std::collections::BTreeMap;
use std::sync::Arc;

use fuzzy_matcher::skim::SkimMatcherV2;

use crate::config::keymap::Section;
use crate::engine::compare::live_state::LiveGroup;
use crate::engine::{Fleet, SourceFile};
use crate::messages::{CannotEdit, CellRef};
use crate::model::{ClusterSpec, ClusterStatus, Dialect, Health, ResourceRef, StatusKind};
use filter::{Candidate, kind_matches};
use panes::{Entry, Place};
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
        /// What `input` completes to (the whole line, a short description), best match
        /// first: kept by `update` as the text and what it lists change, drawn as it is.
        completions: Vec<(String, String)>,
    },
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
    /// `x`: what to run in the selected cell's pod, and a danger-class cluster's name.
    Exec(Box<exec::ExecPrompt>),
    /// `L`: the logs of the selected cell's (or row's) workload, streaming while it is open.
    Logs(Box<logs::LogPane>),
}

/// Where keys go now: to the main key map, to a view's own section, or typed into an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyContext {
    Commands,
    View(Section),
    /// A view's text field: characters are text, the other keys go through the view's section.
    Form(Section),
    Typing,
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
    /// Instead of writing: reload a fleet file that changed on disk under an edit, and reopen
    /// the editor on it.
    pub reload: Option<Reload>,
    /// A canary cluster first, the rest once it passes the wave gate (`state.wave_gate`: in
    /// sync, and by default Healthy) (tab toggles).
    pub waves: bool,
}

/// A fleet file to take as it is on disk now, and the editor to reopen on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reload {
    pub file: String,
    pub text: String,
    pub reopen: Option<Reopen>,
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
    /// The heat strip that counts the group's cells ([`CellGrid::strip`]).
    pub strip: usize,
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
    /// Why the fleet or hub loaded in the background could not be had, once that failed, and
    /// whether it was the user's input; the console ends.
    pub start_failed: Option<(String, bool)>,
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
    /// The fleet-wide pods query (`:pods STATE`): its answers, and the trouble rows are
    /// narrowed to.
    pub pods: pods::PodsQuery,
    /// Cluster label the clusters are grouped by (`region`, `provider`, any label).
    pub group_by: Option<String>,
    /// Groups of the visible clusters, when grouped.
    pub groups: Vec<ClusterGroup>,
    /// Every value the clusters are grouped by, sorted: a cluster's group, and the heat strip
    /// that counts its cells, is its value's index here.
    pub group_values: Vec<String>,
    /// Draw the matrix as one heat strip per group instead of one column per cluster.
    pub collapsed: bool,
    /// Cluster name globs that mark dangerous clusters (e.g. `prod-*`).
    pub danger_patterns: Vec<String>,
    pub mode: Mode,
    /// The help screen is open over the view `mode` holds, which stays as it was beneath it.
    pub help_open: bool,
    /// The Detail of the selection is shown full width over the panes (`i`); on a screen too
    /// short for the Detail pane, that is where it is.
    pub detail_open: bool,
    pub readonly: bool,
    /// How many times the log pane's streams were opened: each opening's number, so lines
    /// of a closed one are told apart.
    pub log_streams: u64,
    /// Why the source cannot take edits of this kind at all (a hub without the API), said
    /// instead of the generic read-only notice.
    pub cannot_edit: CannotEdit,
    /// The kind of federation hub the console is attached to (`Karmada` …), if any: its
    /// controllers propagate, so `a` asks the hub to reschedule instead of applying.
    pub hub: Option<crate::model::HubKind>,
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
    /// The wall clock at the last tick, in milliseconds since the Unix epoch: how long ago a
    /// time an object carries was (a progress deadline passed). None before the first tick.
    pub unix_ms: Option<u64>,
    /// The terminal size.
    pub viewport: (u16, u16),
    /// Clusters Unreachable or Unauthorized, kept as their statuses change.
    pub unreachable_clusters: usize,
    /// Since when (app clock, ms) each cluster has had the health it has, by cluster index:
    /// how long a cluster has been down.
    pub cluster_health_since: std::collections::HashMap<usize, u64>,
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
    /// A confirmed exec, for the console's loop to run once it has handed the terminal over.
    pub handoff: Option<exec::ExecHandoff>,
    /// Text the operator copied (`y` in the log pane), for the console's loop to hand the
    /// terminal's clipboard.
    pub clipboard: Option<String>,
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
    /// How the fleet got it there: template, policy, overrides, each with its file:line.
    pub chain: Vec<crate::engine::chain::Link>,
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
    /// Takes in what a connected hub is and allows: its label, kind, notice, the edits it
    /// cannot make, its Placements, and whether the console may only look.
    pub fn take_hub(&mut self, hub: crate::messages::HubTraits) {
        self.source = hub.label;
        self.hub = Some(hub.kind);
        self.readonly |= hub.readonly;
        self.notice = hub.notice;
        self.cannot_edit = hub.cannot_edit;
        self.placements = hub.placements;
    }

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
        self.cluster_health_since.clear();
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

    /// Every count the wall shows in large digits, as it is now; the wall's history samples
    /// the same, so a count and its sparkline never disagree.
    pub fn headlines(&self) -> history::Sample {
        use crate::model::HealthKind;
        use history::Headline;
        let clusters = |health: Health| {
            self.clusters
                .iter()
                .filter(|row| row.status.health == health)
                .count() as u32
        };
        let totals = self.cells.totals();
        let cells = |kind: StatusKind| totals.get(kind) as u32;
        let mut sample = history::Sample::default();
        for (headline, count) in [
            (Headline::Ready, clusters(Health::Ready)),
            (Headline::NotReady, clusters(Health::NotReady)),
            (Headline::Unreachable, self.unreachable_clusters as u32),
            (Headline::InSync, cells(StatusKind::InSync)),
            (Headline::Drifted, cells(StatusKind::Drifted)),
            (
                Headline::Failed,
                cells(StatusKind::Failed) + cells(StatusKind::Conflict),
            ),
            (Headline::Pending, cells(StatusKind::Pending)),
            (
                Headline::Healthy,
                self.cells.health_count(HealthKind::Healthy),
            ),
            (
                Headline::Degraded,
                self.cells.health_count(HealthKind::Degraded),
            ),
            (
                Headline::Progressing,
                self.cells.health_count(HealthKind::Progressing),
            ),
        ] {
            sample.set(headline, count);
        }
        sample
    }

    /// How many clusters are Ready.
    pub fn ready_clusters(&self) -> usize {
        self.clusters
            .iter()
            .filter(|row| row.status.health == Health::Ready)
            .count()
    }

    /// Where the object view is while it shows — open, or under the exec prompt asked from
    /// it — as (tab, scroll, group).
    pub fn object_view_place(&self) -> Option<(object_view::ObjectTab, usize, usize)> {
        match &self.mode {
            Mode::Object { scroll, tab, group } => Some((*tab, *scroll, *group)),
            Mode::Exec(prompt) => prompt.back,
            _ => None,
        }
    }

    /// The (resource, cluster) cell both cursors point at.
    pub fn selected_cell(&self) -> Option<(usize, usize)> {
        Some((self.selected_resource()?, self.selected_cluster()?))
    }

    /// Whether a cell the detail shows (the selected one, or the cause of the selected row's
    /// or column's worst state) has a health that counts from a time it carries ("progress
    /// deadline exceeded 4 m ago"), so what is drawn changes as the clock moves.
    pub fn shows_a_time(&self) -> bool {
        let resource = self.selected_resource();
        let cluster = self.selected_cluster();
        [
            resource.zip(cluster),
            resource.and_then(|r| Some((r, self.cells.resource_cause(r)?))),
            cluster.and_then(|c| Some((self.cells.cluster_cause(c)?, c))),
        ]
        .into_iter()
        .flatten()
        .any(|(r, c)| {
            self.cells
                .health(r, c)
                .is_some_and(|health| health.since.is_some())
        })
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
        self.hub != Some(crate::model::HubKind::OpenClusterManagement)
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

    /// Whether keys currently go to a text input rather than the key map.
    pub fn is_typing(&self) -> bool {
        matches!(
            self.mode,
            Mode::Filter { .. }
                | Mode::Palette { .. }
                | Mode::Confirm(_)
                | Mode::Placement(_)
                | Mode::OcmPlacement(_)
                | Mode::Overrides(_)
                | Mode::Drift(_)
                | Mode::Exec(_)
        ) || matches!(&self.mode, Mode::Logs(pane) if pane.typing.is_some())
    }

    /// Which [`KeyContext`] the state reads keys in: the main key map while the help screen
    /// is open, else as [`State::view_key_context`] says.
    pub fn key_context(&self) -> KeyContext {
        if self.help_open {
            return KeyContext::Commands;
        }
        self.view_key_context()
    }

    /// Which [`KeyContext`] the view in `self.mode` reads keys in: its section while it
    /// browses (a cell's object, the drift view's rows, the placement editor's clusters, the
    /// override editor's rules, an editor's review of changes, the OCM Placement editor's
    /// list) or while one of its text fields has the focus; typing while any other text input
    /// or a confirmation is open.
    pub fn view_key_context(&self) -> KeyContext {
        if self.wall.is_some() {
            return KeyContext::View(Section::Wall);
        }
        match &self.mode {
            Mode::Object { .. } => KeyContext::View(Section::Object),
            Mode::Logs(pane) if pane.typing.is_none() => KeyContext::View(Section::Logs),
            Mode::OcmPlacement(editor)
                if matches!(editor.stage, ocm_placement::OcmStage::Choosing { .. }) =>
            {
                KeyContext::View(Section::OcmPlacement)
            }
            Mode::OcmPlacement(_) => KeyContext::Form(Section::OcmPlacement),
            Mode::Drift(view) if matches!(view.stage, drift::Stage::Browsing) => {
                KeyContext::View(Section::Drift)
            }
            Mode::Placement(editor)
                if matches!(editor.stage, placement_editor::Stage::Reviewing { .. }) =>
            {
                KeyContext::View(Section::Editor)
            }
            Mode::Placement(editor) if editor.field == placement_editor::Field::Clusters => {
                KeyContext::View(Section::Placement)
            }
            Mode::Placement(_) => KeyContext::Form(Section::Placement),
            Mode::Overrides(editor)
                if matches!(editor.stage, override_editor::Stage::Reviewing { .. }) =>
            {
                KeyContext::View(Section::Editor)
            }
            Mode::Overrides(editor) if matches!(editor.stage, override_editor::Stage::List) => {
                KeyContext::View(Section::Overrides)
            }
            _ if self.is_typing() => KeyContext::Typing,
            _ => KeyContext::Commands,
        }
    }

    /// The clusters a resource is placed on (or that still hold it), in fleet order.
    pub fn placed_clusters(&self, resource: usize) -> Vec<usize> {
        (0..self.clusters.len())
            .filter(|&cluster| {
                self.fleet.is_placed(resource, cluster)
                    || self.cells.status(resource, cluster).kind() != StatusKind::NotPlaced
            })
            .collect()
    }

    /// The clusters a resource is placed on grouped by identical live state, largest first
    /// (clusters not read yet, or that could not be read, are left out).
    pub fn live_groups(&self, resource: usize) -> Vec<LiveGroup<usize>> {
        self.live.groups(resource, &self.placed_clusters(resource))
    }

    /// Whether a pane's filter or order depends on its rows' cells, so their changes can
    /// move its rows.
    fn follows_cells(&self, pane: Pane) -> bool {
        let view = self.view(pane);
        self.status_filter.is_some()
            || self.health_filter.is_some()
            || self.pods.filter.is_some()
            || view.filter.looks_at_cells()
            || view.sort == SortKey::Worst
    }

    /// Whether the matrix draws heat strips, so their counts are kept.
    fn keeps_strips(&self) -> bool {
        self.collapsed && self.group_by.is_some()
    }

    /// Recomputes both panes' visible rows (filter, status filter, sort, grouping) and the
    /// heat strips' members from scratch, keeping each cursor on the same row when it is
    /// still visible. Cell and cluster changes move only their rows instead
    /// ([`State::cells_changed`], [`State::cluster_status_changed`]).
    pub fn refresh_views(&mut self) {
        let matcher = SkimMatcherV2::default();
        let selected_cluster = self.selected_cluster();
        let selected_resource = self.selected_resource();
        self.order_clusters(&matcher);
        self.order_resources(&matcher);
        self.cluster_view.restore_cursor(selected_cluster);
        self.resource_view.restore_cursor(selected_resource);
    }

    /// Each cluster's group: its grouping value's index in `group_values`, filled here.
    fn group_clusters(&mut self) -> Vec<u32> {
        match &self.group_by {
            Some(key) => {
                let values: Vec<String> = self
                    .clusters
                    .iter()
                    .map(|row| group_value(&row.spec, key))
                    .collect();
                let mut distinct = values.clone();
                distinct.sort();
                distinct.dedup();
                let groups = values
                    .iter()
                    .map(|value| distinct.binary_search(value).unwrap_or(0) as u32)
                    .collect();
                self.group_values = distinct;
                groups
            }
            None => {
                self.group_values = Vec::new();
                vec![0; self.clusters.len()]
            }
        }
    }

    /// Filters, sorts and groups the clusters pane from scratch, and puts the clusters shown
    /// into their heat strips.
    fn order_clusters(&mut self, matcher: &SkimMatcherV2) {
        let cluster_groups = self.group_clusters();
        if self.keeps_strips() && self.group_values.len() > MAX_STRIPS {
            self.collapsed = false;
            self.notice = Some(format!(
                "{} groups are too many for heat strips (at most {MAX_STRIPS}); showing clusters",
                self.group_values.len()
            ));
        }
        let names = match self.cluster_view.sort {
            SortKey::Name => ranks(self.clusters.len(), |c| &self.clusters[c].spec.name),
            _ => Vec::new(),
        };
        let entries = (0..self.clusters.len())
            .map(|index| {
                let row = &self.clusters[index];
                let candidate = Candidate {
                    text: &row.spec.name,
                    labels: &row.spec.labels,
                };
                let matches_text = self.cluster_view.filter.matches(matcher, &candidate);
                let place = Place {
                    group: cluster_groups[index],
                    rank: names
                        .get(index)
                        .copied()
                        .unwrap_or_else(|| self.cluster_rank(index)),
                };
                Entry {
                    place,
                    matches_text,
                    shown: matches_text && self.cells_match(Pane::Clusters, index),
                }
            })
            .collect();
        self.cluster_view.rebuild(entries);
        self.regroup();
        let strips: Vec<Option<u32>> = (0..self.clusters.len())
            .map(|cluster| self.strip_of(cluster))
            .collect();
        let strip_count = if self.keeps_strips() {
            self.group_values.len()
        } else {
            0
        };
        self.cells.set_strips(&strips, strip_count);
    }

    /// Filters and sorts the resources pane from scratch.
    fn order_resources(&mut self, matcher: &SkimMatcherV2) {
        let rows = &self.resources;
        let ranked = match self.resource_view.sort {
            SortKey::Name => ranks(rows.len(), |r| &rows[r].target.name),
            SortKey::Kind => ranks(rows.len(), |r| (&rows[r].target.kind, &rows[r].target.name)),
            _ => Vec::new(),
        };
        let no_labels = std::collections::BTreeMap::new();
        let entries = (0..self.resources.len())
            .map(|index| {
                let row = &self.resources[index];
                let text = row.search_text();
                let candidate = Candidate {
                    text: &text,
                    labels: row.labels.as_ref().unwrap_or(&no_labels),
                };
                let matches_text = self.resource_view.filter.matches(matcher, &candidate)
                    && self
                        .kind_filter
                        .as_deref()
                        .is_none_or(|kind| kind_matches(&row.target.kind, kind));
                let place = Place {
                    group: 0,
                    rank: ranked
                        .get(index)
                        .copied()
                        .unwrap_or_else(|| self.resource_rank(index)),
                };
                Entry {
                    place,
                    matches_text,
                    shown: matches_text && self.cells_match(Pane::Resources, index),
                }
            })
            .collect();
        self.resource_view.rebuild(entries);
    }

    /// After these cells changed: moves the rows whose filter match or sort rank changed
    /// with them, and the clusters that came into view or left it into or out of their heat
    /// strips. Costs O(k log n) for k changed rows.
    pub fn cells_changed(&mut self, cells: &[CellRef]) {
        for pane in [Pane::Clusters, Pane::Resources] {
            if !self.follows_cells(pane) {
                continue;
            }
            let selected = self.view(pane).selected();
            let mut rows: Vec<usize> = cells
                .iter()
                .map(|cell| match pane {
                    Pane::Clusters => cell.cluster as usize,
                    Pane::Resources => cell.resource as usize,
                })
                .collect();
            rows.sort_unstable();
            rows.dedup();
            let mut came_or_left = Vec::new();
            for row in rows {
                let Some(old) = self.view(pane).entry(row) else {
                    continue;
                };
                let entry = Entry {
                    place: Place {
                        rank: self.changed_rank(pane, row, old.place.rank),
                        ..old.place
                    },
                    shown: old.matches_text && self.cells_match(pane, row),
                    ..old
                };
                if self.view_mut(pane).reposition(row, entry) && old.shown != entry.shown {
                    came_or_left.push(row);
                }
            }
            if pane == Pane::Clusters && !came_or_left.is_empty() {
                self.regroup();
                for cluster in came_or_left {
                    let strip = self.strip_of(cluster);
                    self.cells.move_to_strip(cluster, strip);
                }
            }
            self.view_mut(pane).restore_cursor(selected);
        }
    }

    /// After a cluster's connection status changed: moves it when the clusters are sorted
    /// by health or latency.
    pub fn cluster_status_changed(&mut self, cluster: usize) {
        if !matches!(self.cluster_view.sort, SortKey::Health | SortKey::Latency) {
            return;
        }
        let Some(old) = self.cluster_view.entry(cluster) else {
            return;
        };
        let selected = self.selected_cluster();
        let entry = Entry {
            place: Place {
                rank: self.cluster_rank(cluster),
                ..old.place
            },
            ..old
        };
        self.cluster_view.reposition(cluster, entry);
        self.cluster_view.restore_cursor(selected);
    }

    /// The groups of the visible clusters, from their order.
    fn regroup(&mut self) {
        self.groups = match self.group_by {
            Some(_) => self
                .cluster_view
                .group_runs(self.group_values.len() as u32)
                .into_iter()
                .map(|(group, members)| ClusterGroup {
                    name: self.group_values[group as usize].clone(),
                    members,
                    strip: group as usize,
                })
                .collect(),
            None => Vec::new(),
        };
    }

    /// The heat strip a cluster's cells count in: its group's, while it is visible and the
    /// matrix draws strips.
    fn strip_of(&self, cluster: usize) -> Option<u32> {
        let entry = self.cluster_view.entry(cluster)?;
        (self.keeps_strips() && entry.shown).then_some(entry.place.group)
    }

    /// Whether a row's cells pass the filters that look at cells.
    fn cells_match(&self, pane: Pane, row: usize) -> bool {
        let (statuses, healths) = match pane {
            Pane::Clusters => (
                self.cells.cluster_counts(row),
                self.cells.cluster_health(row),
            ),
            Pane::Resources => (
                self.cells.resource_counts(row),
                self.cells.resource_health(row),
            ),
        };
        let pods = match pane {
            Pane::Clusters => self.pods.keeps_cluster(row),
            Pane::Resources => self.pods.keeps_resource(row),
        };
        self.view(pane).filter.matches_cells(&statuses, &healths)
            && self.status_filter.is_none_or(|kind| statuses.get(kind) > 0)
            && self.health_filter.is_none_or(|kind| healths.get(kind) > 0)
            && pods
    }

    /// A row's rank after its cells changed: anew when it sorts by its cells, else as it was.
    fn changed_rank(&self, pane: Pane, row: usize, rank: u64) -> u64 {
        match (pane, self.view(pane).sort) {
            (Pane::Clusters, SortKey::Worst) => self.cluster_rank(row),
            (Pane::Resources, SortKey::Worst) => self.resource_rank(row),
            _ => rank,
        }
    }

    /// A cluster's rank under a sort key that needs no comparison with other clusters
    /// (every key but name): worst status, unhealthy and slowest first.
    fn cluster_rank(&self, cluster: usize) -> u64 {
        let row = &self.clusters[cluster];
        match self.cluster_view.sort {
            SortKey::Fleet | SortKey::Kind | SortKey::Name => 0,
            SortKey::Worst => worst_first(self.cells.cluster_concern(cluster).severity()),
            SortKey::Health => u64::from(u8::MAX - health_rank(row.status.health)),
            SortKey::Latency => u64::MAX - row.status.latency_ms.unwrap_or(u64::MAX),
        }
    }

    /// A resource's rank under a sort key that needs no comparison with other resources.
    fn resource_rank(&self, resource: usize) -> u64 {
        match self.resource_view.sort {
            SortKey::Worst => worst_first(self.cells.resource_concern(resource).severity()),
            _ => 0,
        }
    }
}

/// Groups beyond which the matrix draws clusters instead of heat strips: each strip keeps a
/// count per resource, and more strips than a screen shows are no summary.
const MAX_STRIPS: usize = 256;

/// Ranks that sort worse statuses first.
fn worst_first(kind: StatusKind) -> u64 {
    u64::from(u8::MAX - kind as u8)
}

/// Each of `count` rows' position when sorted by `key`, ties in fleet order.
fn ranks<K: Ord>(count: usize, key: impl Fn(usize) -> K) -> Vec<u64> {
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_by_key(|row| key(*row));
    let mut ranks = vec![0; count];
    for (rank, row) in order.into_iter().enumerate() {
        ranks[row] = rank as u64;
    }
    ranks
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

/// Whether a cluster's connection counts as unreachable on the wall.
pub fn is_unreachable(health: Health) -> bool {
    matches!(health, Health::Unreachable | Health::Unauthorized)
}

fn health_rank(health: Health) -> u8 {
    match health {
        Health::Ready => 0,
        Health::Unknown => 1,
        Health::NoAccess => 2,
        Health::NotReady => 2,
        Health::Unauthorized => 3,
        Health::Unreachable => 4,
    }
}

/// Test fixtures for the console's state: the demo fleet's state as the console starts on
/// it, and a cell selected as the cursor selects it. Unit tests only.
#[cfg(test)]
pub mod fixtures {
    use std::sync::Arc;

    use super::{State, state_for_fleet};

    /// The console's state on the demo fleet, before any cluster has answered.
    pub fn demo() -> State {
        let (fleet, errors) = crate::engine::load_fleet(&crate::fleet::demo::demo_files());
        assert!(errors.is_empty(), "{errors:?}");
        state_for_fleet(&Arc::new(fleet), "demo".into())
    }

    /// Moves the cursor to the cell of the `kind` resource named `name` on `cluster`.
    pub fn select(state: &mut State, kind: &str, name: &str, cluster: &str) {
        let resource = state
            .resources
            .iter()
            .position(|row| row.target.kind == kind && row.target.name == name)
            .unwrap_or_else(|| panic!("no {kind} {name} in the fleet"));
        let column = state
            .clusters
            .iter()
            .position(|row| row.spec.name == cluster)
            .unwrap_or_else(|| panic!("no cluster {cluster}"));
        state.resource_view.cursor = state
            .resource_view
            .position(resource)
            .expect("the resource is shown");
        state.cluster_view.cursor = state
            .cluster_view
            .position(column)
            .expect("the cluster is shown");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::filter::Filter;
    use super::*;
    use crate::model::{CellHealth, CellStatus, Concern, HealthKind};
    use proptest::prelude::*;

    const REGIONS: [&str; 3] = ["eu-west", "us-east", "ap-south"];

    /// Clusters with repeated names (so name order has ties) over three regions, the last
    /// without one; resources alternating two kinds.
    fn state(clusters: usize, resources: usize) -> State {
        let clusters = (0..clusters)
            .map(|index| {
                let mut spec = ClusterSpec {
                    name: format!("c{}", index % 5),
                    ..ClusterSpec::default()
                };
                if index + 1 < clusters {
                    let region = REGIONS[index % 3].to_string();
                    spec.labels.insert("region".into(), region.clone());
                    spec.region = Some(region);
                }
                ClusterRow {
                    spec,
                    status: ClusterStatus::default(),
                    last_seen_ms: None,
                }
            })
            .collect();
        let resources = (0..resources)
            .map(|index| ResourceRow {
                target: ResourceRef {
                    api_version: "v1".into(),
                    kind: ["ConfigMap", "Deployment"][index % 2].into(),
                    namespace: Some("ns".into()),
                    name: format!("r{}", index % 4),
                },
                dialect: Dialect::Karmada,
                placement: String::new(),
                labels: None,
            })
            .collect();
        State::new("test".into(), clusters, resources)
    }

    /// The rows a pane shows as they were computed before the order was kept by delta:
    /// every row filtered, sorted by the pane's key, clusters then grouped.
    fn plain_clusters(state: &State) -> (Vec<usize>, Vec<(String, std::ops::Range<usize>)>) {
        let matcher = SkimMatcherV2::default();
        let mut rows: Vec<usize> = (0..state.clusters.len())
            .filter(|&index| {
                let row = &state.clusters[index];
                let candidate = Candidate {
                    text: &row.spec.name,
                    labels: &row.spec.labels,
                };
                let statuses = state.cells.cluster_counts(index);
                let healths = state.cells.cluster_health(index);
                state.cluster_view.filter.matches(&matcher, &candidate)
                    && state.cluster_view.filter.matches_cells(&statuses, &healths)
                    && state
                        .status_filter
                        .is_none_or(|kind| statuses.get(kind) > 0)
                    && state.health_filter.is_none_or(|kind| healths.get(kind) > 0)
            })
            .collect();
        let clusters = &state.clusters;
        match state.cluster_view.sort {
            SortKey::Fleet | SortKey::Kind => {}
            SortKey::Name => {
                rows.sort_by(|a, b| clusters[*a].spec.name.cmp(&clusters[*b].spec.name))
            }
            SortKey::Worst => {
                rows.sort_by_key(|c| std::cmp::Reverse(state.cells.cluster_concern(*c).severity()))
            }
            SortKey::Health => {
                rows.sort_by_key(|c| std::cmp::Reverse(health_rank(clusters[*c].status.health)))
            }
            SortKey::Latency => rows.sort_by_key(|c| {
                std::cmp::Reverse(clusters[*c].status.latency_ms.unwrap_or(u64::MAX))
            }),
        }
        let mut groups: Vec<(String, std::ops::Range<usize>)> = Vec::new();
        if let Some(key) = &state.group_by {
            rows.sort_by_cached_key(|c| group_value(&clusters[*c].spec, key));
            for (position, cluster) in rows.iter().enumerate() {
                let name = group_value(&clusters[*cluster].spec, key);
                match groups.last_mut() {
                    Some((last, members)) if *last == name => members.end = position + 1,
                    _ => groups.push((name, position..position + 1)),
                }
            }
        }
        (rows, groups)
    }

    fn plain_resources(state: &State) -> Vec<usize> {
        let matcher = SkimMatcherV2::default();
        let no_labels = BTreeMap::new();
        let mut rows: Vec<usize> = (0..state.resources.len())
            .filter(|&index| {
                let row = &state.resources[index];
                let text = row.search_text();
                let candidate = Candidate {
                    text: &text,
                    labels: &no_labels,
                };
                let statuses = state.cells.resource_counts(index);
                let healths = state.cells.resource_health(index);
                state.resource_view.filter.matches(&matcher, &candidate)
                    && state
                        .resource_view
                        .filter
                        .matches_cells(&statuses, &healths)
                    && state
                        .kind_filter
                        .as_deref()
                        .is_none_or(|kind| kind_matches(&row.target.kind, kind))
                    && state
                        .status_filter
                        .is_none_or(|kind| statuses.get(kind) > 0)
                    && state.health_filter.is_none_or(|kind| healths.get(kind) > 0)
                    && state.pods.keeps_resource(index)
            })
            .collect();
        let resources = &state.resources;
        match state.resource_view.sort {
            SortKey::Fleet | SortKey::Health | SortKey::Latency => {}
            SortKey::Name => {
                rows.sort_by(|a, b| resources[*a].target.name.cmp(&resources[*b].target.name))
            }
            SortKey::Kind => rows.sort_by(|a, b| {
                (&resources[*a].target.kind, &resources[*a].target.name)
                    .cmp(&(&resources[*b].target.kind, &resources[*b].target.name))
            }),
            SortKey::Worst => {
                rows.sort_by_key(|r| std::cmp::Reverse(state.cells.resource_concern(*r).severity()))
            }
        }
        rows
    }

    /// A heat strip as the matrix drew it before strips were counted: its members' worst
    /// concern, and how many show it.
    fn plain_strip(state: &State, resource: usize, members: &[usize]) -> (Concern, u32) {
        let mut worst = Concern::Sync(StatusKind::NotPlaced);
        let mut count = 0;
        for cluster in members {
            let concern = state.cells.concern(resource, *cluster);
            if concern > worst {
                (worst, count) = (concern, 1);
            } else if concern == worst {
                count += 1;
            }
        }
        (worst, count)
    }

    /// The state shows what computing everything anew shows: rows, groups and strips.
    fn assert_same_as_plain(state: &State) -> Result<(), TestCaseError> {
        let (clusters, groups) = plain_clusters(state);
        prop_assert_eq!(&state.cluster_view.visible, &clusters);
        prop_assert_eq!(&state.resource_view.visible, &plain_resources(state));
        let shown: Vec<(String, std::ops::Range<usize>)> = state
            .groups
            .iter()
            .map(|group| (group.name.clone(), group.members.clone()))
            .collect();
        prop_assert_eq!(shown, groups);
        if state.collapsed {
            for group in &state.groups {
                let members = &state.cluster_view.visible[group.members.clone()];
                for resource in 0..state.resources.len() {
                    prop_assert_eq!(
                        state.cells.strip(resource, group.strip).worst(),
                        plain_strip(state, resource, members),
                        "resource {} in group {}",
                        resource,
                        &group.name
                    );
                }
            }
        }
        Ok(())
    }

    fn status_of(kind: usize) -> CellStatus {
        match kind % 6 {
            0 => CellStatus::InSync,
            1 => CellStatus::Drifted,
            2 => CellStatus::Failed("boom".into()),
            3 => CellStatus::Pending,
            4 => CellStatus::NotPlaced(String::new()),
            _ => CellStatus::Missing,
        }
    }

    fn health_of(kind: usize) -> Option<CellHealth> {
        [
            None,
            Some(HealthKind::Healthy),
            Some(HealthKind::Progressing),
            Some(HealthKind::Degraded),
            Some(HealthKind::Missing),
        ][kind % 5]
            .map(|kind| CellHealth {
                kind,
                reason: String::new(),
                since: None,
                rule: None,
            })
    }

    /// One backend event or key, as the state takes it.
    #[derive(Debug, Clone)]
    enum Step {
        Cells(Vec<(usize, usize, usize)>),
        Health(Vec<(usize, usize, usize)>),
        Cluster(usize, usize, Option<u64>),
        Cursor(usize, usize),
    }

    fn step() -> impl Strategy<Value = Step> {
        let cells = prop::collection::vec((0..8usize, 0..14usize, 0..6usize), 1..5);
        prop_oneof![
            3 => cells.clone().prop_map(Step::Cells),
            2 => cells.prop_map(Step::Health),
            1 => (0..14usize, 0..5usize, prop::option::of(0..200u64))
                .prop_map(|(cluster, health, latency)| Step::Cluster(cluster, health, latency)),
            1 => (0..14usize, 0..8usize).prop_map(|(cluster, resource)| Step::Cursor(cluster, resource)),
        ]
    }

    /// How the panes are filtered, sorted and grouped.
    #[derive(Debug, Clone)]
    struct Setup {
        cluster_sort: usize,
        resource_sort: usize,
        cluster_filter: &'static str,
        resource_filter: &'static str,
        status: Option<StatusKind>,
        health: Option<HealthKind>,
        kind: Option<&'static str>,
        grouped: bool,
        collapsed: bool,
    }

    fn setup() -> impl Strategy<Value = Setup> {
        (
            (0..5usize, 0..4usize),
            prop::sample::select(vec![
                "",
                "c1",
                "status=drifted",
                "health=degraded",
                "-l region=eu-west",
            ]),
            prop::sample::select(vec!["", "r1", "status=failed", "health=progressing"]),
            prop::sample::select(vec![
                None,
                Some(StatusKind::Drifted),
                Some(StatusKind::Failed),
            ]),
            prop::sample::select(vec![None, Some(HealthKind::Degraded)]),
            prop::sample::select(vec![None, Some("deploy")]),
            (any::<bool>(), any::<bool>()),
        )
            .prop_map(
                |(
                    (cluster_sort, resource_sort),
                    cluster_filter,
                    resource_filter,
                    status,
                    health,
                    kind,
                    (grouped, collapsed),
                )| Setup {
                    cluster_sort,
                    resource_sort,
                    cluster_filter,
                    resource_filter,
                    status,
                    health,
                    kind,
                    grouped,
                    collapsed,
                },
            )
    }

    fn apply(state: &mut State, step: &Step) {
        let (clusters, resources) = (state.clusters.len(), state.resources.len());
        let cell = |resource: usize, cluster: usize| CellRef {
            resource: (resource % resources) as u32,
            cluster: (cluster % clusters) as u32,
        };
        match step {
            Step::Cells(changes) => {
                let cells: Vec<CellRef> = changes.iter().map(|(r, c, _)| cell(*r, *c)).collect();
                for ((_, _, kind), cell) in changes.iter().zip(&cells) {
                    state.cells.set(*cell, status_of(*kind), None);
                }
                state.cells_changed(&cells);
            }
            Step::Health(changes) => {
                let cells: Vec<CellRef> = changes.iter().map(|(r, c, _)| cell(*r, *c)).collect();
                for ((_, _, kind), cell) in changes.iter().zip(&cells) {
                    state.cells.set_health(*cell, health_of(*kind));
                }
                state.cells_changed(&cells);
            }
            Step::Cluster(cluster, health, latency) => {
                let cluster = cluster % clusters;
                state.clusters[cluster].status.health = [
                    Health::Ready,
                    Health::NotReady,
                    Health::Unreachable,
                    Health::Unauthorized,
                    Health::Unknown,
                ][*health];
                state.clusters[cluster].status.latency_ms = *latency;
                state.cluster_status_changed(cluster);
            }
            Step::Cursor(cluster, resource) => {
                state.cluster_view.cursor = *cluster;
                state.resource_view.cursor = *resource;
                state.cluster_view.restore_cursor(None);
                state.resource_view.restore_cursor(None);
            }
        }
    }

    proptest! {
        #[test]
        fn rows_kept_by_delta_match_rows_computed_anew(
            (clusters, resources) in (1..14usize, 1..8usize),
            setup in setup(),
            steps in prop::collection::vec(step(), 1..40),
        ) {
            let mut state = state(clusters, resources);
            state.cluster_view.sort = SortKey::cycle(Pane::Clusters)[setup.cluster_sort];
            state.resource_view.sort = SortKey::cycle(Pane::Resources)[setup.resource_sort];
            state.cluster_view.filter = Filter::parse(setup.cluster_filter).unwrap();
            state.resource_view.filter = Filter::parse(setup.resource_filter).unwrap();
            state.status_filter = setup.status;
            state.health_filter = setup.health;
            state.kind_filter = setup.kind.map(str::to_string);
            state.group_by = setup.grouped.then(|| "region".to_string());
            state.collapsed = setup.collapsed;
            state.refresh_views();
            assert_same_as_plain(&state)?;
            for step in &steps {
                let selected = (state.selected_cluster(), state.selected_resource());
                let cursors = (state.cluster_view.cursor, state.resource_view.cursor);
                apply(&mut state, step);
                assert_same_as_plain(&state)?;
                if !matches!(step, Step::Cursor(..)) {
                    // The cursor stays on its row, or where it was when its row left.
                    for (view, selected, cursor) in [
                        (&state.cluster_view, selected.0, cursors.0),
                        (&state.resource_view, selected.1, cursors.1),
                    ] {
                        let expected = selected
                            .and_then(|row| view.visible.iter().position(|r| *r == row))
                            .unwrap_or(cursor.min(view.visible.len().saturating_sub(1)));
                        prop_assert_eq!(view.cursor, expected);
                    }
                }
            }
        }
    }

    #[test]
    fn too_many_groups_for_strips_show_clusters_and_say_why() {
        let mut state = state(MAX_STRIPS + 2, 1);
        for (index, row) in state.clusters.iter_mut().enumerate() {
            row.spec.labels.insert("store".into(), format!("s{index}"));
        }
        state.group_by = Some("store".into());
        state.collapsed = true;
        state.refresh_views();
        assert!(!state.collapsed);
        assert_eq!(state.groups.len(), MAX_STRIPS + 2, "still grouped");
        assert!(
            state
                .notice
                .as_deref()
                .is_some_and(|notice| notice.contains("too many for heat strips")),
            "{:?}",
            state.notice
        );
    }
}
