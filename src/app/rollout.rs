//! A propagation in progress, followed cell by cell from the backend's reports: which wave is
//! running, which cells have settled (in sync, or failed and why), and when the next wave may
//! start. With waves, a canary cluster goes first and the rest follow only once every canary
//! cell is in sync; a failure stops the rollout before the next wave. Esc cancels the waves
//! not yet started. Pure: it turns reports into effects and never talks to a backend itself.

use super::state::State;
use super::state::rollout::Rollout;
use crate::backend::{CellRef, CellUpdate, Effect};
use crate::model::StatusKind;

/// A wave that has not settled within this long is reported and the rollout stops.
pub const WAVE_TIMEOUT_MS: u64 = 120_000;

/// Splits `cells` into waves: with `canary`, the first cluster's cells, then everything else.
pub fn waves(cells: &[CellRef], canary: bool) -> Vec<Vec<CellRef>> {
    let first = cells.iter().map(|cell| cell.cluster).min();
    match first {
        Some(first) if canary && cells.iter().any(|cell| cell.cluster != first) => {
            let (head, rest): (Vec<CellRef>, Vec<CellRef>) =
                cells.iter().partition(|cell| cell.cluster == first);
            vec![head, rest]
        }
        _ => vec![cells.to_vec()],
    }
}

/// Starts following `waves`; the caller sends the first wave.
pub fn start(state: &mut State, waves: Vec<Vec<CellRef>>) {
    let waiting = waves
        .first()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .collect();
    state.rollout = Some(Rollout {
        waves,
        current: 0,
        waiting,
        wave_started_ms: state.now_ms,
        ..Rollout::default()
    });
}

/// Takes note of the backend's reports on cells of the current wave.
pub fn observe(state: &mut State, updates: &[CellUpdate]) {
    let Some(rollout) = &mut state.rollout else {
        return;
    };
    for update in updates {
        if !rollout.waiting.contains(&update.cell) {
            continue;
        }
        rollout.fresh.insert(update.cell);
        match update.status.kind() {
            StatusKind::InSync => {
                rollout.waiting.remove(&update.cell);
                rollout.synced += 1;
            }
            kind @ (StatusKind::Failed | StatusKind::Conflict | StatusKind::Unreachable) => {
                rollout.waiting.remove(&update.cell);
                rollout.failed.push((update.cell, kind));
            }
            // Pending (being written) or the old status: not settled yet.
            _ => {}
        }
    }
}

/// Moves on when the current wave has settled: the next wave's effect, or the end.
pub fn advance(state: &mut State) -> Vec<Effect> {
    let Some(rollout) = &mut state.rollout else {
        return Vec::new();
    };
    if !rollout.waiting.is_empty() {
        return Vec::new();
    }
    let last = rollout.current + 1 >= rollout.waves.len();
    if !rollout.failed.is_empty() || last {
        let total = rollout.total();
        let not_started: usize = rollout.waves[rollout.current + 1..]
            .iter()
            .map(Vec::len)
            .sum();
        let mut notice = format!(
            "propagation finished: {} of {total} in sync, {} failed",
            rollout.synced,
            rollout.failed.len()
        );
        if not_started > 0 {
            notice.push_str(&format!(
                "; stopped before wave {} ({not_started} not propagated)",
                rollout.current + 2
            ));
        }
        state.notice = Some(notice);
        state.rollout = None;
        return Vec::new();
    }
    rollout.current += 1;
    let cells = rollout.waves[rollout.current].clone();
    rollout.waiting = cells.iter().copied().collect();
    rollout.fresh.clear();
    rollout.wave_started_ms = state.now_ms;
    state.notice = Some(format!(
        "wave {} in sync; propagating wave {} of {}",
        rollout.current,
        rollout.current + 1,
        rollout.waves.len()
    ));
    vec![Effect::Apply { cells }]
}

/// Esc while propagating: the waves not started are dropped (writes in flight finish).
pub fn cancel(state: &mut State) -> bool {
    let Some(rollout) = state.rollout.take() else {
        return false;
    };
    let dropped: usize = rollout.waves[rollout.current + 1..]
        .iter()
        .map(Vec::len)
        .sum();
    state.notice = Some(format!(
        "propagation cancelled: {dropped} cell(s) of later waves not propagated; {} already in flight",
        rollout.waiting.len()
    ));
    true
}

/// The clock: a wave that takes too long stops the rollout, saying which cells never settled.
pub fn tick(state: &mut State) {
    let Some(rollout) = &state.rollout else {
        return;
    };
    if state.now_ms.saturating_sub(rollout.wave_started_ms) < WAVE_TIMEOUT_MS {
        return;
    }
    state.notice = Some(format!(
        "propagation stopped: {} cell(s) of wave {} not in sync after {} s",
        rollout.waiting.len(),
        rollout.current + 1,
        WAVE_TIMEOUT_MS / 1000
    ));
    state.rollout = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CellStatus;

    fn cell(resource: u32, cluster: u32) -> CellRef {
        CellRef { resource, cluster }
    }

    fn report(cell: CellRef, status: CellStatus) -> CellUpdate {
        CellUpdate {
            cell,
            status,
            message: None,
        }
    }

    #[test]
    fn the_canary_goes_first_and_the_rest_follow_once_it_is_in_sync() {
        let cells = [cell(0, 2), cell(0, 1), cell(1, 1), cell(0, 3)];
        let waves = waves(&cells, true);
        assert_eq!(
            waves,
            [vec![cell(0, 1), cell(1, 1)], vec![cell(0, 2), cell(0, 3)]]
        );
        let mut state = State::default();
        start(&mut state, waves);
        observe(&mut state, &[report(cell(0, 1), CellStatus::Pending)]);
        observe(&mut state, &[report(cell(0, 1), CellStatus::InSync)]);
        assert!(
            advance(&mut state).is_empty(),
            "one canary cell still waits"
        );
        observe(&mut state, &[report(cell(1, 1), CellStatus::InSync)]);
        assert_eq!(
            advance(&mut state),
            [Effect::Apply {
                cells: vec![cell(0, 2), cell(0, 3)]
            }]
        );
        observe(
            &mut state,
            &[
                report(cell(0, 2), CellStatus::InSync),
                report(cell(0, 3), CellStatus::InSync),
            ],
        );
        assert!(advance(&mut state).is_empty());
        assert!(state.rollout.is_none());
        let notice = state.notice.unwrap_or_default();
        assert!(notice.contains("4 of 4 in sync, 0 failed"), "{notice}");
    }

    #[test]
    fn a_failed_canary_stops_the_rollout_and_esc_drops_later_waves() {
        let cells = [cell(0, 1), cell(0, 2)];
        let mut state = State::default();
        start(&mut state, waves(&cells, true));
        observe(
            &mut state,
            &[report(cell(0, 1), CellStatus::Failed("denied".into()))],
        );
        assert!(
            advance(&mut state).is_empty(),
            "nothing after a failed canary"
        );
        let notice = state.notice.clone().unwrap_or_default();
        assert!(
            notice.contains("stopped before wave 2 (1 not propagated)"),
            "{notice}"
        );

        start(&mut state, waves(&cells, true));
        assert!(cancel(&mut state));
        assert!(state.rollout.is_none());
        assert!(!cancel(&mut state), "nothing left to cancel");
    }

    #[test]
    fn a_wave_that_never_settles_times_out() {
        let mut state = State::default();
        start(&mut state, waves(&[cell(0, 0)], false));
        state.now_ms = WAVE_TIMEOUT_MS + 1;
        tick(&mut state);
        assert!(state.rollout.is_none());
        assert!(
            state
                .notice
                .unwrap_or_default()
                .contains("not in sync after 120 s")
        );
    }
}
