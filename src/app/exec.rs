//! `x` on a cell: ask what to run in the cell's workload on that cluster (default `sh`),
//! ask a danger-class cluster's name, then leave the confirmed exec in `state.handoff` for
//! the console's loop, which hands the terminal over, runs it and says how it ended
//! (`Action::ExecEnded`). From the object view the prompt also picks the pod among those the
//! view lists (the first running one in trouble to start with), and returns to the view. Refused under `--readonly`, on the wall display and for a kind
//! without pods, each with a status line that says why. It must not run the command or
//! touch the terminal.

use super::action::InputKey;
use super::state::exec::{ExecHandoff, ExecPrompt, command_words};
use super::state::object_view::ObjectTab;
use super::state::{Mode, State};
use super::text_input::edit_text;
use crate::backend::fanout::pods::is_workload;
use crate::engine::health::pods::PodRow;
use crate::messages::CellRef;

/// `x`: opens the prompt for the selected cell, or says why not.
pub fn ask(state: &mut State) {
    if state.wall.is_some() {
        state.notice = Some("x: the wall display only reads; exec is refused here".into());
        return;
    }
    if state.readonly {
        state.notice =
            Some("read-only: exec runs a command inside a pod, which --readonly forbids".into());
        return;
    }
    let Some((resource, cluster)) = state.selected_cell() else {
        state.notice = Some("x: select a workload's cell to run a command in its pod".into());
        return;
    };
    let (Some(row), Some(column)) = (state.resources.get(resource), state.clusters.get(cluster))
    else {
        return;
    };
    if !is_workload(&row.target) {
        state.notice = Some(format!(
            "x: a {} has no pods of its own; exec runs in a workload's pods",
            row.target.kind
        ));
        return;
    }
    let pods: Vec<&PodRow> = if state.object_view_place().is_some() {
        let cell = CellRef {
            resource: resource as u32,
            cluster: cluster as u32,
        };
        state
            .live
            .reads
            .get(&cell)
            .map(|read| read.live.pods.iter().collect())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let prompt = ExecPrompt {
        cluster: column.spec.name.clone(),
        workload: row.target.display_key(),
        input: "sh".into(),
        confirm: None,
        danger: state.is_dangerous(cluster),
        pod: first_choice(&pods),
        pods: pods.iter().map(|pod| pod.name.clone()).collect(),
        back: state.object_view_place(),
    };
    state.mode = Mode::Exec(Box::new(prompt));
}

/// The pod the prompt starts at: the first running one in trouble (what the operator came
/// to look into, and a running container can take a command), else the first running one,
/// else the first.
fn first_choice(pods: &[&PodRow]) -> usize {
    let running = |pod: &&&PodRow| pod.phase == "Running";
    pods.iter()
        .position(|pod| running(&pod) && pod.trouble.is_some())
        .or_else(|| pods.iter().position(|pod| running(&pod)))
        .unwrap_or(0)
}

/// Leaves the prompt: back to the view it was asked from, or the main view.
fn close(state: &mut State, back: Option<(ObjectTab, usize, usize)>) {
    state.mode = match back {
        Some((tab, scroll, group)) => Mode::Object { scroll, tab, group },
        None => Mode::Normal,
    };
}

/// A key typed into the prompt.
pub fn key(state: &mut State, mut prompt: Box<ExecPrompt>, key: InputKey) {
    match (key, prompt.confirm.take()) {
        (InputKey::Esc, _) => {
            state.notice = Some("exec cancelled; nothing run".into());
            close(state, prompt.back);
        }
        // From the object view: tab and ↓ choose the next pod, ↑ the previous.
        (InputKey::Tab | InputKey::Down, None) if !prompt.pods.is_empty() => {
            prompt.pod = (prompt.pod + 1) % prompt.pods.len();
            state.mode = Mode::Exec(prompt);
        }
        (InputKey::Up, None) if !prompt.pods.is_empty() => {
            prompt.pod = (prompt.pod + prompt.pods.len() - 1) % prompt.pods.len();
            state.mode = Mode::Exec(prompt);
        }
        (InputKey::Enter, None) if command_words(&prompt.input).is_empty() => {
            state.mode = Mode::Exec(prompt);
        }
        (InputKey::Enter, None) if prompt.danger => {
            prompt.confirm = Some(String::new());
            state.mode = Mode::Exec(prompt);
        }
        (InputKey::Enter, Some(typed)) if typed != prompt.cluster => {
            state.notice = Some(format!(
                "exec cancelled: {typed:?} is not {}; nothing run",
                prompt.cluster
            ));
            close(state, prompt.back);
        }
        (InputKey::Enter, _) => {
            state.handoff = Some(ExecHandoff {
                cluster: prompt.cluster.clone(),
                workload: prompt.workload.clone(),
                pod: prompt.chosen_pod().map(str::to_string),
                command: command_words(&prompt.input),
            });
            state.notice = Some(format!(
                "exec {} on {}…",
                prompt.input.trim(),
                prompt.cluster
            ));
            close(state, prompt.back);
        }
        (other, Some(mut typed)) => {
            edit_text(&mut typed, other);
            prompt.confirm = Some(typed);
            state.mode = Mode::Exec(prompt);
        }
        (other, None) => {
            edit_text(&mut prompt.input, other);
            state.mode = Mode::Exec(prompt);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::app::state::fixtures::{self, select};

    /// The demo, its prod clusters danger-class.
    fn demo() -> State {
        let mut state = fixtures::demo();
        state.danger_patterns = vec!["prod*".into()];
        state
    }

    fn typed(state: &mut State, text: &str) {
        for c in text.chars() {
            let Mode::Exec(prompt) = std::mem::take(&mut state.mode) else {
                panic!("the prompt is open");
            };
            key(state, prompt, InputKey::Char(c));
        }
    }

    fn enter(state: &mut State) {
        let Mode::Exec(prompt) = std::mem::take(&mut state.mode) else {
            panic!("the prompt is open");
        };
        key(state, prompt, InputKey::Enter);
    }

    #[test]
    fn a_danger_class_cluster_runs_only_once_its_name_is_typed() {
        let mut state = demo();
        select(&mut state, "Deployment", "checkout", "prod-eu-west-1");
        ask(&mut state);
        enter(&mut state);
        assert!(state.handoff.is_none(), "asks for the name first");
        typed(&mut state, "prod-eu-west-1");
        enter(&mut state);
        let handoff = state.handoff.take().unwrap();
        assert_eq!(handoff.command, ["sh"]);
        assert_eq!(handoff.workload, "Deployment/shop/checkout");
        assert_eq!(handoff.cluster, "prod-eu-west-1");

        ask(&mut state);
        enter(&mut state);
        typed(&mut state, "prod");
        enter(&mut state);
        assert!(state.handoff.is_none());
        assert!(state.notice.as_deref().unwrap().contains("nothing run"));
    }

    /// A pod as the API server serves it: running, or crash-looping.
    fn pod(name: &str, crashing: bool) -> PodRow {
        let state = if crashing {
            serde_json::json!({"waiting": {"reason": "CrashLoopBackOff"}})
        } else {
            serde_json::json!({"running": {}})
        };
        let pod = serde_json::json!({
            "metadata": {"name": name, "namespace": "shop"},
            "spec": {"containers": [{"name": "web"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "web", "ready": !crashing, "restartCount": if crashing { 3 } else { 0 }, "state": state}
            ]}
        });
        crate::engine::health::pods::pod_row(&pod, 0)
    }

    #[test]
    fn from_the_object_view_x_picks_a_pod_starting_at_the_troubled_one_and_returns_there() {
        let mut state = demo();
        select(&mut state, "Deployment", "inventory", "edge-store-0001");
        let (resource, cluster) = state.selected_cell().unwrap();
        state.mode = Mode::Object {
            scroll: 2,
            tab: crate::app::state::object_view::ObjectTab::Events,
            group: 0,
        };
        let cell = CellRef {
            resource: resource as u32,
            cluster: cluster as u32,
        };
        let live = crate::messages::LiveObject {
            pods: vec![pod("inventory-a", false), pod("inventory-b", true)],
            ..Default::default()
        };
        state.live.followed = vec![cell];
        state.live.reads.insert(
            cell,
            crate::app::state::object_view::LiveRead {
                live,
                received_ms: 0,
                yaml: String::new(),
            },
        );
        let shown = state.object_view_place();
        assert!(shown.is_some());

        ask(&mut state);
        let Mode::Exec(prompt) = &state.mode else {
            panic!("the prompt opens from the object view");
        };
        assert_eq!(prompt.pods, ["inventory-a", "inventory-b"]);
        assert_eq!(prompt.chosen_pod(), Some("inventory-b"), "the crashing one");
        assert_eq!(
            state.object_view_place(),
            shown,
            "the view stays under the prompt"
        );

        let Mode::Exec(prompt) = std::mem::take(&mut state.mode) else {
            unreachable!()
        };
        key(&mut state, prompt, InputKey::Tab);
        enter(&mut state);
        let handoff = state.handoff.take().unwrap();
        assert_eq!(
            handoff.pod.as_deref(),
            Some("inventory-a"),
            "tab chose the next"
        );
        assert_eq!(handoff.cluster, "edge-store-0001");
        assert!(
            matches!(state.mode, Mode::Object { scroll: 2, .. }),
            "back where it was asked"
        );

        // From the main view there is no choice: the workload's first ready pod.
        state.mode = Mode::Normal;
        ask(&mut state);
        enter(&mut state);
        assert_eq!(state.handoff.take().unwrap().pod, None);
        assert!(matches!(state.mode, Mode::Normal));
    }

    #[test]
    fn readonly_the_wall_and_kinds_without_pods_are_refused() {
        let mut state = demo();
        select(&mut state, "Deployment", "checkout", "prod-eu-west-1");
        state.readonly = true;
        ask(&mut state);
        assert!(matches!(state.mode, Mode::Normal));
        assert!(state.notice.as_deref().unwrap().contains("--readonly"));
        state.readonly = false;
        state.wall = Some(Default::default());
        ask(&mut state);
        assert!(matches!(state.mode, Mode::Normal));
        assert!(state.notice.as_deref().unwrap().contains("wall display"));
        state.wall = None;
        let service = state
            .resources
            .iter()
            .find(|row| !is_workload(&row.target))
            .map(|row| (row.target.kind.clone(), row.target.name.clone()))
            .unwrap();
        select(&mut state, &service.0, &service.1, "prod-eu-west-1");
        ask(&mut state);
        assert!(matches!(state.mode, Mode::Normal));
        assert!(
            state
                .notice
                .as_deref()
                .unwrap()
                .contains("no pods of its own")
        );
    }
}
