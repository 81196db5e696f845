//! `update`: the one place the console's state changes. A plain function of the state and an
//! action that returns the effects to run; it must not do I/O, sleep or read a clock.

use super::action::Action;
use super::state::{Pane, State};
use crate::backend::{BackendEvent, Effect};
use crate::config::keymap::Command;

/// Applies one action to the state and returns what the backend should do.
pub fn update(state: &mut State, action: Action) -> Vec<Effect> {
    match action {
        Action::Command(command) => run_command(state, command),
        Action::Backend(event) => {
            apply_backend_event(state, event);
            Vec::new()
        }
        Action::Resize { height, .. } => {
            state.page_rows = usize::from(height.saturating_sub(8)).max(1);
            Vec::new()
        }
        Action::Terminate => {
            state.should_quit = true;
            Vec::new()
        }
    }
}

fn run_command(state: &mut State, command: Command) -> Vec<Effect> {
    if state.show_help && matches!(command, Command::Help | Command::Back) {
        state.show_help = false;
        return Vec::new();
    }
    let page = state.page_rows.max(1);
    match command {
        Command::Quit => state.should_quit = true,
        Command::Help => state.show_help = true,
        Command::Back => {}
        Command::FocusNext | Command::FocusPrev => state.focus = state.focus.next(),
        Command::Up => move_cursor(state, |cursor, _| cursor.saturating_sub(1)),
        Command::Down => move_cursor(state, |cursor, _| cursor + 1),
        Command::PageUp => move_cursor(state, |cursor, _| cursor.saturating_sub(page)),
        Command::PageDown => move_cursor(state, |cursor, _| cursor + page),
        Command::Top => move_cursor(state, |_, _| 0),
        Command::Bottom => move_cursor(state, |_, len| len),
    }
    Vec::new()
}

/// Moves the focused pane's cursor, clamped to its rows.
fn move_cursor(state: &mut State, step: impl Fn(usize, usize) -> usize) {
    let (cursor, len) = match state.focus {
        Pane::Clusters => (&mut state.cluster_cursor, state.clusters.len()),
        Pane::Resources => (&mut state.resource_cursor, state.resources.len()),
    };
    *cursor = step(*cursor, len).min(len.saturating_sub(1));
}

fn apply_backend_event(state: &mut State, event: BackendEvent) {
    match event {
        BackendEvent::Snapshot { kinds, details } => {
            let details = details
                .into_iter()
                .map(|update| {
                    (
                        update.cell,
                        super::state::CellDetail {
                            status: update.status,
                            message: update.message,
                        },
                    )
                })
                .collect();
            if !state.cells.replace(kinds, details) {
                tracing::warn!("ignored a snapshot whose size does not match the fleet");
            }
        }
        BackendEvent::Cluster { cluster, status } => {
            if let Some(row) = state.clusters.get_mut(cluster as usize) {
                row.status = status;
            }
        }
        BackendEvent::Cells(updates) => {
            for update in updates {
                state.cells.set(update.cell, update.status, update.message);
            }
        }
        BackendEvent::Notice(text) => state.notice = Some(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::state::{ClusterRow, ResourceRow};
    use crate::backend::{CellRef, CellUpdate};
    use crate::model::{
        CellStatus, ClusterSpec, ClusterStatus, Dialect, Health, ResourceRef, StatusKind,
    };

    fn state(clusters: usize, resources: usize) -> State {
        let clusters = (0..clusters)
            .map(|index| ClusterRow {
                spec: ClusterSpec {
                    name: format!("c{index}"),
                    ..ClusterSpec::default()
                },
                status: ClusterStatus::default(),
            })
            .collect();
        let resources = (0..resources)
            .map(|index| ResourceRow {
                target: ResourceRef {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    namespace: Some("ns".into()),
                    name: format!("r{index}"),
                },
                dialect: Dialect::Karmada,
                placement: "all".into(),
            })
            .collect();
        State::new("test".into(), clusters, resources)
    }

    #[test]
    fn cursors_move_within_their_pane_and_clamp() {
        let mut state = state(3, 5);
        update(&mut state, Action::Command(Command::Down));
        update(&mut state, Action::Command(Command::Down));
        update(&mut state, Action::Command(Command::Down));
        assert_eq!(state.cluster_cursor, 2, "clamped to the last cluster");
        update(&mut state, Action::Command(Command::FocusNext));
        update(&mut state, Action::Command(Command::Bottom));
        assert_eq!(state.resource_cursor, 4);
        assert_eq!(state.cluster_cursor, 2, "the other pane keeps its cursor");
        update(&mut state, Action::Command(Command::Top));
        assert_eq!(state.resource_cursor, 0);
        update(&mut state, Action::Command(Command::Up));
        assert_eq!(state.resource_cursor, 0);
    }

    #[test]
    fn help_opens_and_closes_and_quit_quits() {
        let mut state = state(1, 1);
        update(&mut state, Action::Command(Command::Help));
        assert!(state.show_help);
        update(&mut state, Action::Command(Command::Back));
        assert!(!state.show_help);
        update(&mut state, Action::Command(Command::Quit));
        assert!(state.should_quit);
    }

    #[test]
    fn backend_events_update_clusters_and_cells() {
        let mut state = state(2, 2);
        update(
            &mut state,
            Action::Backend(BackendEvent::Cluster {
                cluster: 1,
                status: ClusterStatus {
                    health: Health::Unreachable,
                    version: None,
                    latency_ms: None,
                    message: "timeout".into(),
                },
            }),
        );
        assert_eq!(state.clusters[1].status.health, Health::Unreachable);
        update(
            &mut state,
            Action::Backend(BackendEvent::Cells(vec![CellUpdate {
                cell: CellRef {
                    resource: 0,
                    cluster: 1,
                },
                status: CellStatus::Drifted,
                message: Some("/spec/replicas".into()),
            }])),
        );
        assert_eq!(state.cells.kind(0, 1), StatusKind::Drifted);
        assert_eq!(state.cells.message(0, 1), Some("/spec/replicas"));
        // Unknown clusters from a confused backend are ignored, not a panic.
        update(
            &mut state,
            Action::Backend(BackendEvent::Cluster {
                cluster: 99,
                status: ClusterStatus::default(),
            }),
        );
    }
}
