//! `L`: opens the log pane on the selected cell's workload (on a collapsed matrix, or with
//! `a` in the pane, on every cluster it is placed on), asks the backend to stream its pods'
//! logs ([`Effect::OpenLogs`]), takes the lines it sends, and carries out the pane's keys:
//! scrolling, follow, pause, search, wrap, timestamps, narrowing to a cluster or a container,
//! the previous container, and copying a line (left in `state.clipboard` for the console's
//! loop to hand the terminal). Closing the pane drops its lease, which stops the streams. Logs
//! are reads, so the pane opens under `--readonly`; the wall display has no cell to open it on
//! and says so. Kinds without pods are refused with a status line. It must not read a log or
//! touch a terminal.

use super::action::InputKey;
use super::state::logs::LogPane;
use super::state::{Mode, State};
use super::text_input::edit_text;
use crate::backend::fanout::pods::is_workload;
use crate::config::keymap::ViewCommand;
use crate::messages::{CellRef, Effect, LogItem, LogLease, LogOpen};

/// Lines of the past each container sends when the pane opens.
pub const TAIL: u64 = 200;

/// The longest line `y` copies, in bytes: one key must not write megabytes to the terminal.
pub const MAX_COPY: usize = 1 << 20;

/// `L`: opens the pane, or says why not.
pub fn open(state: &mut State) -> Vec<Effect> {
    if state.wall.is_some() {
        state.notice =
            Some("L: the wall display shows no cell to read logs of; use flotilla logs".into());
        return Vec::new();
    }
    let Some((resource, cluster)) = state.selected_cell() else {
        state.notice = Some("L: select a workload's cell to read its pods' logs".into());
        return Vec::new();
    };
    let Some(row) = state.resources.get(resource) else {
        return Vec::new();
    };
    if !is_workload(&row.target) {
        state.notice = Some(format!(
            "L: a {} has no pods of its own; logs are a workload's pods'",
            row.target.kind
        ));
        return Vec::new();
    }
    let placed = state.placed_clusters(resource);
    let clusters = if state.collapsed {
        placed
    } else if placed.contains(&cluster) {
        vec![cluster]
    } else {
        state.notice = Some(format!(
            "L: {} is not placed on {}; it runs no pods there",
            row.target.display_key(),
            state
                .clusters
                .get(cluster)
                .map_or("", |c| c.spec.name.as_str())
        ));
        return Vec::new();
    };
    if clusters.is_empty() {
        state.notice = Some(format!(
            "L: {} is placed on no cluster",
            row.target.display_key()
        ));
        return Vec::new();
    }
    let cells = clusters
        .into_iter()
        .map(|cluster| CellRef {
            resource: resource as u32,
            cluster: cluster as u32,
        })
        .collect();
    start(state, cells, false)
}

/// Opens the pane's streams on `cells` (replacing any open pane, whose streams stop).
fn start(state: &mut State, cells: Vec<CellRef>, previous: bool) -> Vec<Effect> {
    let Some(first) = cells.first() else {
        return Vec::new();
    };
    let workload = state
        .resources
        .get(first.resource as usize)
        .map(|row| row.target.display_key())
        .unwrap_or_default();
    let clusters = cells
        .iter()
        .filter_map(|cell| {
            let column = state.clusters.get(cell.cluster as usize)?;
            Some((cell.cluster as usize, column.spec.name.clone()))
        })
        .collect();
    state.log_streams += 1;
    let stream = state.log_streams;
    let (lease, watch) = LogLease::new();
    state.notice = Some(format!(
        "logs of {workload}{}",
        if previous { " (previous run)" } else { "" }
    ));
    state.mode = Mode::Logs(Box::new(LogPane::new(
        stream,
        workload,
        cells.clone(),
        clusters,
        previous,
        lease,
    )));
    vec![Effect::OpenLogs(LogOpen {
        stream,
        cells,
        previous,
        tail: TAIL,
        watch,
    })]
}

/// Lines the streams of pane `stream` sent; those of a closed pane are dropped.
pub fn receive(state: &mut State, stream: u64, items: Vec<LogItem>, skipped: usize) {
    if let Mode::Logs(pane) = &mut state.mode
        && pane.stream == stream
    {
        pane.receive(items, skipped);
    }
}

/// A key of the pane's section.
pub fn command(state: &mut State, mut pane: Box<LogPane>, command: ViewCommand) -> Vec<Effect> {
    let page = state.page_rows.max(1);
    match command {
        ViewCommand::Back => {
            state.notice = Some(format!("closed the logs of {}", pane.workload));
            // The pane and its lease go: its streams stop.
            return Vec::new();
        }
        ViewCommand::Up => pane.scroll_up(1),
        ViewCommand::Down => pane.scroll_down(1),
        ViewCommand::PageUp => pane.scroll_up(page),
        ViewCommand::PageDown => pane.scroll_down(page),
        ViewCommand::Top => pane.top(),
        ViewCommand::Bottom => pane.bottom(),
        ViewCommand::Follow => pane.toggle_follow(),
        ViewCommand::Pause => pane.toggle_pause(),
        ViewCommand::Search => pane.typing = Some(String::new()),
        ViewCommand::NextMatch | ViewCommand::PrevMatch => {
            let older = command == ViewCommand::NextMatch;
            if pane.search.is_none() {
                state.notice = Some("no search yet: / searches the lines".into());
            } else if !pane.find(older) {
                state.notice = Some(format!(
                    "no {} match of {:?}",
                    if older { "older" } else { "newer" },
                    pane.search.as_deref().unwrap_or("")
                ));
            }
        }
        ViewCommand::Wrap => pane.wrap = !pane.wrap,
        // Every line keeps the time it was printed at: nothing is read again.
        ViewCommand::Timestamps => pane.timestamps = !pane.timestamps,
        ViewCommand::NextContainer | ViewCommand::PrevContainer => {
            pane.cycle_container(command == ViewCommand::NextContainer);
            state.notice = Some(match pane.only_container_name() {
                Some(name) => format!("logs: only container {name}"),
                None if pane.containers.is_empty() => {
                    "logs: no container's line yet to narrow to".into()
                }
                None => "logs: every container".into(),
            });
        }
        ViewCommand::Copy => copy(state, &pane),
        ViewCommand::NextCluster | ViewCommand::PrevCluster => {
            pane.cycle_cluster(command == ViewCommand::NextCluster);
            state.notice = Some(match pane.only.and_then(|at| pane.clusters.get(at)) {
                Some((_, name)) => format!("logs: only {name}"),
                None if pane.clusters.len() < 2 => {
                    "logs: one cluster is read; a reads every placed cluster".into()
                }
                None => "logs: every cluster".into(),
            });
        }
        ViewCommand::Previous => {
            let previous = !pane.previous;
            return start(state, pane.cells.clone(), previous);
        }
        ViewCommand::AllClusters => {
            let resource = pane.cells.first().map_or(0, |cell| cell.resource);
            let cells: Vec<CellRef> = state
                .placed_clusters(resource as usize)
                .into_iter()
                .map(|cluster| CellRef {
                    resource,
                    cluster: cluster as u32,
                })
                .collect();
            let previous = pane.previous;
            return start(state, cells, previous);
        }
        _ => {}
    }
    state.mode = Mode::Logs(pane);
    Vec::new()
}

/// `y`: the search's match, else the newest line in view, for the terminal's clipboard.
fn copy(state: &mut State, pane: &LogPane) {
    state.notice = Some(match pane.line_to_copy() {
        None => "nothing to copy: no line in view".into(),
        Some(line) if line.len() > MAX_COPY => format!(
            "not copied: the line is {} bytes, more than the {MAX_COPY} one copy takes",
            line.len()
        ),
        Some(line) => {
            let said = format!("copied 1 line ({} bytes)", line.len());
            state.clipboard = Some(line);
            said
        }
    });
}

/// A key typed into the pane's search.
pub fn key(state: &mut State, mut pane: Box<LogPane>, key: InputKey) {
    let mut typed = pane.typing.take().unwrap_or_default();
    match key {
        InputKey::Esc => {}
        InputKey::Enter => {
            if !pane.search_for(typed.clone()) && !typed.is_empty() {
                state.notice = Some(format!("no line matches {typed:?}"));
            }
        }
        other => {
            edit_text(&mut typed, other);
            pane.typing = Some(typed);
        }
    }
    state.mode = Mode::Logs(pane);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::app::state::fixtures::{demo, select};

    fn watch_of(effects: &[Effect]) -> crate::messages::LogWatch {
        match effects {
            [Effect::OpenLogs(open)] => open.watch.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn l_streams_the_cell_and_closing_the_pane_stops_it_even_read_only() {
        let mut state = demo();
        state.readonly = true;
        select(&mut state, "Deployment", "checkout", "prod-eu-west-1");
        let effects = open(&mut state);
        let Effect::OpenLogs(opened) = &effects[0] else {
            panic!();
        };
        assert_eq!(opened.cells.len(), 1);
        assert!(effects[0].only_reads());
        let watch = watch_of(&effects);
        let Mode::Logs(pane) = std::mem::take(&mut state.mode) else {
            panic!("the pane is open");
        };
        assert_eq!(pane.clusters[0].1, "prod-eu-west-1");
        assert!(!watch.is_ended());
        command(&mut state, pane, ViewCommand::Back);
        assert!(matches!(state.mode, Mode::Normal));
        assert!(watch.is_ended(), "the streams stop with the pane");
    }

    #[test]
    fn previous_and_every_cluster_reopen_and_stop_the_old_streams() {
        let mut state = demo();
        select(&mut state, "Deployment", "checkout", "prod-eu-west-1");
        let first = watch_of(&open(&mut state));
        let Mode::Logs(pane) = std::mem::take(&mut state.mode) else {
            panic!();
        };
        let again = command(&mut state, pane, ViewCommand::Previous);
        assert!(first.is_ended());
        let Effect::OpenLogs(opened) = &again[0] else {
            panic!();
        };
        assert!(opened.previous);
        let Mode::Logs(pane) = std::mem::take(&mut state.mode) else {
            panic!();
        };
        let wide = command(&mut state, pane, ViewCommand::AllClusters);
        let Effect::OpenLogs(opened) = &wide[0] else {
            panic!();
        };
        assert!(opened.cells.len() > 1, "{:?}", opened.cells);
        // Lines of a closed stream are not the pane's.
        receive(&mut state, opened.stream - 1, Vec::new(), 3);
        let Mode::Logs(pane) = &state.mode else {
            panic!();
        };
        assert_eq!(pane.dropped, 0);
    }

    #[test]
    fn kinds_without_pods_and_unplaced_cells_are_refused() {
        let mut state = demo();
        let service = state
            .resources
            .iter()
            .find(|row| !is_workload(&row.target))
            .map(|row| (row.target.kind.clone(), row.target.name.clone()))
            .unwrap();
        select(&mut state, &service.0, &service.1, "prod-eu-west-1");
        assert!(open(&mut state).is_empty());
        assert!(matches!(state.mode, Mode::Normal));
        assert!(
            state
                .notice
                .as_deref()
                .unwrap()
                .contains("no pods of its own")
        );
        state.wall = Some(Default::default());
        assert!(open(&mut state).is_empty());
        assert!(state.notice.as_deref().unwrap().contains("wall display"));
    }

    /// The demo's pane on checkout, holding `items`.
    fn pane_with(state: &mut State, items: Vec<LogItem>) -> Box<LogPane> {
        select(state, "Deployment", "checkout", "prod-eu-west-1");
        let effects = open(state);
        let Effect::OpenLogs(opened) = &effects[0] else {
            panic!("{effects:?}");
        };
        receive(state, opened.stream, items, 0);
        let Mode::Logs(pane) = std::mem::take(&mut state.mode) else {
            panic!("the pane is open");
        };
        pane
    }

    fn line(container: &str, second: i64, text: &str) -> LogItem {
        LogItem::Line(crate::engine::logs::LogLine {
            cluster: "prod-eu-west-1".into(),
            namespace: "shop".into(),
            pod: "checkout-1".into(),
            container: container.into(),
            time: k8s_openapi::jiff::Timestamp::from_second(second).ok(),
            text: text.into(),
        })
    }

    fn reopen(state: &mut State) -> Box<LogPane> {
        let Mode::Logs(pane) = std::mem::take(&mut state.mode) else {
            panic!("the pane is open");
        };
        pane
    }

    #[test]
    fn timestamps_and_containers_narrow_what_is_held_without_reading_again() {
        let mut state = demo();
        let pane = pane_with(
            &mut state,
            vec![
                line("checkout", 60, "GET /"),
                line("proxy", 61, "upstream ok"),
            ],
        );
        assert!(
            command(&mut state, pane, ViewCommand::Timestamps).is_empty(),
            "the time is held: nothing is read again"
        );
        let pane = reopen(&mut state);
        assert!(pane.timestamps);
        assert!(command(&mut state, pane, ViewCommand::NextContainer).is_empty());
        assert_eq!(
            state.notice.as_deref(),
            Some("logs: only container checkout")
        );
        let pane = reopen(&mut state);
        assert_eq!(pane.shown_len(), 1);
        command(&mut state, pane, ViewCommand::PrevContainer);
        assert_eq!(state.notice.as_deref(), Some("logs: every container"));
        let pane = reopen(&mut state);
        command(&mut state, pane, ViewCommand::PrevContainer);
        assert_eq!(state.notice.as_deref(), Some("logs: only container proxy"));
        let mut empty = demo();
        let pane = pane_with(&mut empty, Vec::new());
        command(&mut empty, pane, ViewCommand::NextContainer);
        assert!(
            empty
                .notice
                .as_deref()
                .unwrap()
                .contains("no container's line yet")
        );
    }

    #[test]
    fn y_leaves_the_line_for_the_terminal_and_says_what_was_copied() {
        let mut state = demo();
        let pane = pane_with(&mut state, Vec::new());
        assert!(command(&mut state, pane, ViewCommand::Copy).is_empty());
        assert_eq!(state.clipboard, None);
        assert!(
            state
                .notice
                .as_deref()
                .unwrap()
                .starts_with("nothing to copy")
        );

        let mut state = demo();
        state.readonly = true;
        let pane = pane_with(
            &mut state,
            vec![line("checkout", 60, "GET / 200"), line("proxy", 61, "ok")],
        );
        assert!(command(&mut state, pane, ViewCommand::Copy).is_empty());
        let copied = state.clipboard.take().unwrap();
        assert_eq!(copied, "prod-eu-west-1 checkout-1 proxy ok");
        assert_eq!(
            state.notice.as_deref(),
            Some(format!("copied 1 line ({} bytes)", copied.len()).as_str())
        );
        // The match, with its time when times are shown.
        let mut pane = reopen(&mut state);
        assert!(pane.search_for("get".into()));
        pane.timestamps = true;
        command(&mut state, pane, ViewCommand::Copy);
        assert_eq!(
            state.clipboard.take().unwrap(),
            "prod-eu-west-1 checkout-1 checkout 1970-01-01T00:01:00.000000000Z GET / 200"
        );
        // A line longer than one copy takes is refused, and said.
        let mut state = demo();
        let long = "x".repeat(MAX_COPY);
        let pane = pane_with(&mut state, vec![line("checkout", 1, &long)]);
        command(&mut state, pane, ViewCommand::Copy);
        assert_eq!(state.clipboard, None);
        assert!(state.notice.as_deref().unwrap().starts_with("not copied"));
    }
}
