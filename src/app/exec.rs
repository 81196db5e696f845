//! `x` on a cell: ask what to run in the cell's workload on that cluster (default `sh`),
//! ask a danger-class cluster's name, then leave the confirmed exec in `state.handoff` for
//! the console's loop, which hands the terminal over, runs it and says how it ended
//! (`Action::ExecEnded`). Refused under `--readonly`, on the wall display and for a kind
//! without pods, each with a status line that says why. It must not run the command or
//! touch the terminal.

use super::action::InputKey;
use super::state::exec::{ExecHandoff, ExecPrompt, command_words};
use super::state::{Mode, State};
use super::text_input::edit_text;
use crate::backend::fanout::pods::is_workload;

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
    state.mode = Mode::Exec(Box::new(ExecPrompt {
        cluster: column.spec.name.clone(),
        workload: row.target.display_key(),
        input: "sh".into(),
        confirm: None,
        danger: state.is_dangerous(cluster),
    }));
}

/// A key typed into the prompt.
pub fn key(state: &mut State, mut prompt: Box<ExecPrompt>, key: InputKey) {
    match (key, prompt.confirm.take()) {
        (InputKey::Esc, _) => state.notice = Some("exec cancelled; nothing run".into()),
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
        }
        (InputKey::Enter, _) => {
            state.handoff = Some(ExecHandoff {
                cluster: prompt.cluster.clone(),
                workload: prompt.workload.clone(),
                command: command_words(&prompt.input),
            });
            state.notice = Some(format!(
                "exec {} on {}…",
                prompt.input.trim(),
                prompt.cluster
            ));
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
