//! A propagation in progress, followed cell by cell from the backend's reports: which wave is
//! running, which cells have passed its gate, and when the next wave may start. With waves, a
//! canary cluster goes first and the rest follow only once every canary cell passes the gate:
//! in sync, or in sync and Healthy (for N seconds, when the gate says so; kinds without a
//! notion of health need only be in sync). A failure, or a Degraded cell of the running wave,
//! stops the rollout before the next wave. The operator can pause it (the next wave waits) and
//! resume it; Esc cancels the waves not yet started. Pure: it turns reports into effects and
//! never talks to a backend itself.

use super::state::State;
use super::state::rollout::{HealthWait, Rollout};
use crate::config::wave_gate::WaveGate;
use crate::messages::{CellRef, CellUpdate, Effect};
use crate::model::{HealthKind, StatusKind};

/// A wave that has not passed its gate within this long (plus the gate's hold) is reported
/// and the rollout stops.
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

/// Starts following `waves` under the state's gate; the caller sends the first wave. On a hub
/// the hub's controllers roll out, and health may come late or never (a ManifestWork without
/// status feedback, a KubeFed member flotilla cannot reach), so the gate is sync.
pub fn start(state: &mut State, waves: Vec<Vec<CellRef>>) {
    let waiting = waves
        .first()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .collect();
    let gate = if state.hub.is_some() {
        WaveGate::Sync
    } else {
        state.wave_gate
    };
    state.rollout = Some(Rollout {
        waves,
        current: 0,
        gate,
        waiting,
        wave_started_ms: state.now_ms,
        ..Rollout::default()
    });
}

/// Whether the gate waits for this cell's live health: its kind has one.
fn health_gated(state: &State, cell: CellRef) -> bool {
    state
        .resources
        .get(cell.resource as usize)
        .is_some_and(|row| {
            crate::engine::health::has_health(&row.target.api_version, &row.target.kind)
        })
}

/// Takes note of the backend's reports on cells of the current wave.
pub fn observe(state: &mut State, updates: &[CellUpdate]) {
    let Some(wants_health) = state
        .rollout
        .as_ref()
        .map(|rollout| rollout.gate.wants_health())
    else {
        return;
    };
    let gated: Vec<bool> = updates
        .iter()
        .map(|update| wants_health && health_gated(state, update.cell))
        .collect();
    let Some(rollout) = &mut state.rollout else {
        return;
    };
    for (update, gated) in updates.iter().zip(gated) {
        if !rollout.waiting.contains(&update.cell) {
            continue;
        }
        match update.status.kind() {
            StatusKind::InSync if gated => {
                rollout.awaiting_health.entry(update.cell).or_default();
            }
            StatusKind::InSync => {
                rollout.waiting.remove(&update.cell);
                rollout.passed.insert(update.cell);
                rollout.settled += 1;
            }
            kind @ (StatusKind::Failed | StatusKind::Conflict | StatusKind::Unreachable) => {
                rollout.waiting.remove(&update.cell);
                rollout.awaiting_health.remove(&update.cell);
                rollout.failed.push((update.cell, kind));
            }
            // Pending (being written), the old status, or out of sync again: not settled.
            _ => {
                rollout.awaiting_health.remove(&update.cell);
            }
        }
    }
}

/// `Deployment/shop/web on prod-eu-1`.
fn cell_name(state: &State, cell: CellRef) -> String {
    let resource = state.resources.get(cell.resource as usize).map_or_else(
        || format!("row {}", cell.resource),
        |row| row.target.display_key(),
    );
    let cluster = state
        .clusters
        .get(cell.cluster as usize)
        .map_or("?", |row| row.spec.name.as_str());
    format!("{resource} on {cluster}")
}

/// Reads the live health of the current wave's in-sync cells: those Healthy long enough pass
/// the gate; the first Degraded one is returned, with why.
fn check_health(state: &mut State) -> Option<(CellRef, String)> {
    let now = state.now_ms;
    let cells = &state.cells;
    let rollout = state.rollout.as_mut()?;
    let hold = match rollout.gate {
        WaveGate::Healthy { for_ms } => for_ms,
        WaveGate::Sync => return None,
    };
    let health = |cell: &CellRef| cells.health(cell.resource as usize, cell.cluster as usize);
    let degraded = |cell: &CellRef| {
        health(cell)
            .filter(|health| health.kind == HealthKind::Degraded)
            .map(|health| (*cell, health.reason.clone()))
    };
    if let Some(found) = rollout.passed.iter().find_map(degraded) {
        return Some(found);
    }
    let mut passed = Vec::new();
    for (cell, wait) in rollout.awaiting_health.iter_mut() {
        if !wait.current {
            *wait = HealthWait {
                current: true,
                healthy_since: None,
            };
            continue;
        }
        match health(cell).map(|health| health.kind) {
            Some(HealthKind::Degraded) => return degraded(cell),
            Some(HealthKind::Healthy) => {
                let since = *wait.healthy_since.get_or_insert(now);
                if now.saturating_sub(since) >= hold {
                    passed.push(*cell);
                }
            }
            _ => wait.healthy_since = None,
        }
    }
    for cell in passed {
        rollout.awaiting_health.remove(&cell);
        rollout.waiting.remove(&cell);
        rollout.passed.insert(cell);
        rollout.settled += 1;
    }
    None
}

/// Moves on when the current wave has passed its gate: the next wave's effect, or the end. A
/// Degraded cell of the running wave stops the rollout; a paused one holds the next wave.
pub fn advance(state: &mut State) -> Vec<Effect> {
    if state.rollout.is_none() {
        return Vec::new();
    }
    if let Some((cell, reason)) = check_health(state) {
        stop_on_degraded(state, cell, &reason);
        return Vec::new();
    }
    let Some(rollout) = &mut state.rollout else {
        return Vec::new();
    };
    if !rollout.waiting.is_empty() {
        return Vec::new();
    }
    let last = rollout.current + 1 >= rollout.waves.len();
    if !rollout.failed.is_empty() || last {
        let total = rollout.total();
        let not_started = rollout.not_started();
        let mut notice = format!(
            "propagation finished: {} of {total} {}, {} failed",
            rollout.settled,
            rollout.gate,
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
    if rollout.paused {
        // The footer says the next wave is held; the notice keeps what the operator last did.
        return Vec::new();
    }
    rollout.current += 1;
    let cells = rollout.waves[rollout.current].clone();
    rollout.waiting = cells.iter().copied().collect();
    rollout.awaiting_health.clear();
    rollout.passed.clear();
    rollout.wave_started_ms = state.now_ms;
    state.notice = Some(format!(
        "wave {} {}; propagating wave {} of {}",
        rollout.current,
        rollout.gate,
        rollout.current + 1,
        rollout.waves.len()
    ));
    vec![Effect::Apply { cells }]
}

fn stop_on_degraded(state: &mut State, cell: CellRef, reason: &str) {
    let Some(rollout) = state.rollout.take() else {
        return;
    };
    let why = if reason.is_empty() {
        String::new()
    } else {
        format!(" ({reason})")
    };
    state.notice = Some(format!(
        "propagation stopped: {} is Degraded{why}; {} cell(s) of later waves not propagated",
        cell_name(state, cell),
        rollout.not_started()
    ));
}

/// The pause key: holds the next wave back, or lets it start. Resuming a rollout whose wave
/// already passed its gate starts the next wave at once.
pub fn toggle_pause(state: &mut State) -> Vec<Effect> {
    let Some(rollout) = &mut state.rollout else {
        state.notice = Some("nothing is propagating: there is no wave to pause".into());
        return Vec::new();
    };
    rollout.paused = !rollout.paused;
    if rollout.paused {
        state.notice = Some(format!(
            "propagation paused: wave {} carries on, wave {} waits until resumed",
            rollout.current + 1,
            rollout.current + 2
        ));
        return Vec::new();
    }
    state.notice = Some("propagation resumed".into());
    advance(state)
}

/// Esc while propagating: the waves not started are dropped (writes in flight finish).
pub fn cancel(state: &mut State) -> bool {
    let Some(rollout) = state.rollout.take() else {
        return false;
    };
    state.notice = Some(format!(
        "propagation cancelled: {} cell(s) of later waves not propagated; {} already in flight",
        rollout.not_started(),
        rollout.waiting.len()
    ));
    true
}

/// The clock: a wave held by the gate's hold may pass it now; a wave that takes too long
/// stops the rollout, saying which cells never passed and why.
pub fn tick(state: &mut State) -> Vec<Effect> {
    let effects = advance(state);
    let Some(rollout) = &state.rollout else {
        return effects;
    };
    let hold = match rollout.gate {
        WaveGate::Healthy { for_ms } => for_ms,
        WaveGate::Sync => 0,
    };
    let limit = WAVE_TIMEOUT_MS + hold;
    if rollout.waiting.is_empty() || state.now_ms.saturating_sub(rollout.wave_started_ms) < limit {
        return effects;
    }
    let examples: Vec<String> = rollout
        .waiting
        .iter()
        .take(3)
        .map(|cell| {
            let status = state
                .cells
                .kind(cell.resource as usize, cell.cluster as usize);
            let health = state
                .cells
                .health(cell.resource as usize, cell.cluster as usize)
                .map_or_else(String::new, |health| format!(", {}", health.kind));
            format!("{} ({status}{health})", cell_name(state, *cell))
        })
        .collect();
    state.notice = Some(format!(
        "propagation stopped: {} cell(s) of wave {} not {} after {} s: {}",
        rollout.waiting.len(),
        rollout.current + 1,
        rollout.gate,
        limit / 1000,
        examples.join(", ")
    ));
    state.rollout = None;
    effects
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
        let mut state = State {
            wave_gate: WaveGate::Sync,
            ..State::default()
        };
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
                .contains("not in sync and Healthy after 120 s")
        );
    }

    /// A state with one Deployment row and two clusters, every cell Pending.
    fn deployment_state(gate: WaveGate) -> State {
        use crate::app::state::{ClusterRow, ResourceRow};
        use crate::model::{ClusterSpec, Dialect, ResourceRef};
        let clusters = ["canary", "rest"]
            .into_iter()
            .map(|name| ClusterRow {
                spec: ClusterSpec {
                    name: name.into(),
                    ..ClusterSpec::default()
                },
                status: Default::default(),
                last_seen_ms: None,
            })
            .collect();
        let resources = vec![ResourceRow {
            target: ResourceRef {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                namespace: Some("shop".into()),
                name: "web".into(),
            },
            dialect: Dialect::Karmada,
            placement: String::new(),
            labels: None,
        }];
        let mut state = State::new("test".into(), clusters, resources);
        state.wave_gate = gate;
        state
    }

    fn health(state: &mut State, cell: CellRef, kind: HealthKind) -> Vec<Effect> {
        state.cells.set_health(
            cell,
            Some(crate::model::CellHealth {
                kind,
                reason: String::new(),
                since: None,
                rule: None,
            }),
        );
        advance(state)
    }

    #[test]
    fn healthy_for_a_while_means_without_a_break() {
        let mut state = deployment_state(WaveGate::Healthy { for_ms: 30_000 });
        start(&mut state, waves(&[cell(0, 0), cell(0, 1)], true));
        observe(&mut state, &[report(cell(0, 0), CellStatus::InSync)]);
        assert!(health(&mut state, cell(0, 0), HealthKind::Healthy).is_empty());
        assert!(tick(&mut state).is_empty(), "Healthy since 0 s");
        state.now_ms = 20_000;
        assert!(tick(&mut state).is_empty(), "Healthy for 20 s of 30");
        assert!(health(&mut state, cell(0, 0), HealthKind::Progressing).is_empty());
        assert!(health(&mut state, cell(0, 0), HealthKind::Healthy).is_empty());
        state.now_ms = 40_000;
        assert!(
            tick(&mut state).is_empty(),
            "the break restarted the hold at 20 s"
        );
        state.now_ms = 50_000;
        assert_eq!(
            tick(&mut state),
            [Effect::Apply {
                cells: vec![cell(0, 1)]
            }]
        );
    }

    #[test]
    fn a_kind_without_health_passes_the_healthy_gate_when_in_sync() {
        let mut state = deployment_state(WaveGate::default());
        state.resources[0].target.kind = "ConfigMap".into();
        state.resources[0].target.api_version = "v1".into();
        start(&mut state, waves(&[cell(0, 0), cell(0, 1)], true));
        observe(&mut state, &[report(cell(0, 0), CellStatus::InSync)]);
        assert_eq!(advance(&mut state).len(), 1, "no health to wait for");
    }

    #[test]
    fn health_read_with_the_in_sync_report_is_not_trusted_yet() {
        let mut state = deployment_state(WaveGate::default());
        // Healthy from before the write.
        state.cells.set_health(
            cell(0, 0),
            Some(crate::model::CellHealth {
                kind: HealthKind::Healthy,
                reason: String::new(),
                since: None,
                rule: None,
            }),
        );
        start(&mut state, waves(&[cell(0, 0), cell(0, 1)], true));
        observe(&mut state, &[report(cell(0, 0), CellStatus::InSync)]);
        assert!(advance(&mut state).is_empty(), "same action as the report");
        assert!(health(&mut state, cell(0, 0), HealthKind::Progressing).is_empty());
        assert_eq!(health(&mut state, cell(0, 0), HealthKind::Healthy).len(), 1);
    }
}
