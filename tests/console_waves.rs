//! Propagation in waves driven headless on the demo, as an operator drives it: `a`, `tab` for
//! a canary wave, `y`; the simulated fleet (`SimCore`) writes what the console sent and
//! reports back as the demo's backend does (the cell in sync at once, its workload
//! Progressing, then its settled health). What the console sends to the backend is read from
//! the session's effect channel. With the healthy gate the second wave waits for the canary
//! to be Healthy; a Degraded canary stops the rollout and nothing more is sent; `p` holds the
//! next wave and releases it; the sync gate moves on as soon as the canary is in sync.

mod harness;

use flotilla::app::action::Action;
use flotilla::app::state::Mode;
use flotilla::backend::sim::scenario::ScenarioCell;
use flotilla::backend::sim::{Scenario, SimCore};
use flotilla::config::wave_gate::WaveGate;
use flotilla::messages::{BackendEvent, CellRef, Effect};
use flotilla::model::{CellStatus, HealthKind};
use harness::console::Console;

const CHECKOUT: &str = "Deployment/shop/checkout";

/// The headless console, running its effects, with the simulated fleet behind it.
struct Demo {
    console: Console,
    core: SimCore,
    /// The cluster the canary wave goes to: the first one the Deployment is placed on.
    canary: u32,
}

impl Demo {
    /// The demo with the checkout Deployment not yet applied anywhere; `degrade_canary` makes
    /// its rollout stall on the canary cluster.
    fn new(gate: WaveGate, degrade_canary: bool) -> Demo {
        let mut console = Console::demo().running_effects();
        console.session.state.wave_gate = gate;
        let fleet = console.state.fleet.clone();
        let row = fleet
            .resources
            .iter()
            .position(|r| r.target.display_key() == CHECKOUT)
            .expect("the demo has the checkout Deployment");
        let canary = (0..fleet.clusters.len())
            .find(|c| fleet.is_placed(row, *c))
            .expect("placed somewhere");
        let mut scenario = Scenario::demo();
        scenario.drift_every_seconds = 0;
        scenario.pending.push(CHECKOUT.into());
        // Every cluster takes the write: what stops a rollout here is health, not a failure.
        scenario.failures.clear();
        if degrade_canary {
            scenario.degraded.push(ScenarioCell {
                cluster: fleet.clusters[canary].name.clone(),
                resource: CHECKOUT.into(),
            });
        }
        let core = SimCore::new(fleet, &scenario, 7);
        console.act(Action::Backend(core.snapshot()));
        Demo {
            console,
            core,
            canary: canary as u32,
        }
    }

    /// `a`, `tab` (a canary first), `y`: the first wave's cells as sent to the backend.
    fn propagate_in_waves(&mut self) -> Vec<CellRef> {
        self.console.select(CHECKOUT);
        self.console.keys("a");
        assert!(
            matches!(self.console.state.mode, Mode::Confirm(_)),
            "a asks first: {:?}",
            self.console.state.mode
        );
        self.console.keys("<tab>y");
        let sent = self.console.sent();
        let [Effect::Apply { cells }] = sent.as_slice() else {
            panic!("expected the canary wave, got {sent:?}");
        };
        assert!(
            cells.iter().all(|cell| cell.cluster == self.canary),
            "{cells:?}"
        );
        cells.clone()
    }

    fn report(&mut self, event: BackendEvent) {
        self.console.act(Action::Backend(event));
    }

    /// The simulated clusters write `cells` and say so: the cells' statuses, then their
    /// workloads Progressing. Returns the cells now in sync.
    fn write(&mut self, cells: &[CellRef]) -> Vec<CellRef> {
        let mut written = Vec::new();
        for cluster in 0..self.core.cluster_count() {
            let updates = self.core.apply(cluster, cells, false);
            if updates.is_empty() {
                continue;
            }
            written.extend(
                updates
                    .iter()
                    .filter(|update| update.status == CellStatus::InSync)
                    .map(|update| update.cell),
            );
            self.report(BackendEvent::Cells(updates));
        }
        let rolling = self.core.rolling_out(&written);
        assert!(!rolling.is_empty(), "a Deployment has a health");
        self.report(BackendEvent::Health(rolling));
        written
    }

    /// The written workloads finished rolling out: their settled health, as the sim reports it.
    fn rolled_out(&mut self, cells: &[CellRef]) {
        let settled = self.core.health_of(cells);
        self.report(BackendEvent::Health(settled));
    }

    fn tick(&mut self, now_ms: u64) {
        self.console.act(Action::Tick {
            now_ms,
            unix_ms: None,
        });
    }

    /// The screen as the operator sees it, one string per row.
    fn screen(&self) -> String {
        let theme = flotilla::config::theme::Theme::load(None, true);
        let keymap = flotilla::config::keymap::Keymap::built_in("default");
        let context = flotilla::views::ViewContext {
            theme: &theme,
            keymap: &keymap,
            ascii: false,
        };
        let backend = ratatui::backend::TestBackend::new(160, 30);
        let mut terminal = ratatui::Terminal::new(backend).expect("test terminal");
        terminal
            .draw(|frame| flotilla::views::render(frame, &self.console.state, &context))
            .expect("draw");
        format!("{}", terminal.backend())
    }

    fn notice(&self) -> String {
        self.console.state.notice.clone().unwrap_or_default()
    }
}

#[test]
fn with_the_healthy_gate_the_second_wave_waits_while_the_canary_is_progressing() {
    let mut demo = Demo::new(WaveGate::default(), false);
    let canary = demo.propagate_in_waves();
    let written = demo.write(&canary);
    assert_eq!(written.len(), canary.len(), "the canary is in sync");
    demo.tick(1_000);
    assert_eq!(
        demo.console.sent(),
        [],
        "in sync but Progressing: the second wave waits"
    );
    let rollout = demo.console.state.rollout.clone().expect("still on wave 1");
    assert_eq!(rollout.current, 0);
    assert_eq!(rollout.awaiting_health.len(), canary.len());

    demo.rolled_out(&written);
    let sent = demo.console.sent();
    let [Effect::Apply { cells: rest }] = sent.as_slice() else {
        panic!("expected the second wave once the canary is Healthy, got {sent:?}");
    };
    assert!(!rest.is_empty());
    assert!(
        rest.iter().all(|cell| cell.cluster != demo.canary),
        "{rest:?}"
    );

    let written = demo.write(rest);
    demo.rolled_out(&written);
    assert!(demo.console.state.rollout.is_none(), "finished");
    let notice = demo.notice();
    assert!(
        notice.contains(&format!(
            "{} of {} in sync and Healthy, 0 failed",
            canary.len() + rest.len(),
            canary.len() + rest.len()
        )),
        "{notice}"
    );
}

#[test]
fn a_degraded_canary_stops_the_rollout_and_nothing_more_is_sent() {
    let mut demo = Demo::new(WaveGate::default(), true);
    let canary = demo.propagate_in_waves();
    let written = demo.write(&canary);
    demo.rolled_out(&written);
    assert!(demo.console.state.rollout.is_none(), "the rollout stopped");
    let notice = demo.notice();
    let canary_name = &demo.console.state.clusters[demo.canary as usize].spec.name;
    assert!(
        notice.contains(&format!("{CHECKOUT} on {canary_name} is Degraded")),
        "{notice}"
    );
    assert!(notice.contains("progress deadline exceeded"), "{notice}");
    assert!(notice.contains("not propagated"), "{notice}");

    // Whatever comes after, no later wave goes out.
    demo.rolled_out(&written);
    for now_ms in [5_000, 60_000, 600_000] {
        demo.tick(now_ms);
    }
    demo.console.keys("p");
    assert_eq!(demo.console.sent(), [], "nothing is sent after the stop");
}

#[test]
fn pause_holds_the_next_wave_and_resume_releases_it() {
    let mut demo = Demo::new(WaveGate::default(), false);
    let canary = demo.propagate_in_waves();
    demo.console.keys("p");
    assert!(
        demo.console
            .state
            .rollout
            .as_ref()
            .is_some_and(|r| r.paused)
    );
    let written = demo.write(&canary);
    demo.rolled_out(&written);
    demo.tick(10_000);
    assert_eq!(demo.console.sent(), [], "paused: wave 2 does not start");
    let rollout = demo
        .console
        .state
        .rollout
        .clone()
        .expect("held, not finished");
    assert!(rollout.waiting.is_empty(), "the canary passed its gate");
    assert_eq!(rollout.current, 0);
    let screen = demo.screen();
    let mut rows = screen.lines();
    assert!(
        rows.next().is_some_and(|header| header.contains("PAUSED")),
        "{screen}"
    );
    assert!(
        screen.contains("PAUSED before wave 2/2") && screen.contains("p resume"),
        "{screen}"
    );

    demo.console.keys("p");
    let sent = demo.console.sent();
    let [Effect::Apply { cells: rest }] = sent.as_slice() else {
        panic!("expected the second wave on resume, got {sent:?}");
    };
    assert!(
        rest.iter().all(|cell| cell.cluster != demo.canary),
        "{rest:?}"
    );
    assert!(
        demo.notice().contains("propagating wave 2 of 2"),
        "{}",
        demo.notice()
    );
    assert!(!demo.screen().contains("PAUSED"));
}

#[test]
fn the_sync_gate_moves_on_as_soon_as_the_canary_is_in_sync() {
    let mut demo = Demo::new(WaveGate::Sync, true);
    let canary = demo.propagate_in_waves();
    let mut written = Vec::new();
    for cluster in 0..demo.core.cluster_count() {
        let updates = demo.core.apply(cluster, &canary, false);
        written.extend(updates.iter().map(|update| update.cell));
        if !updates.is_empty() {
            demo.report(BackendEvent::Cells(updates));
        }
    }
    let sent = demo.console.sent();
    let [Effect::Apply { cells: rest }] = sent.as_slice() else {
        panic!("expected the second wave once the canary is in sync, got {sent:?}");
    };
    assert!(
        rest.iter().all(|cell| cell.cluster != demo.canary),
        "{rest:?}"
    );
    // Health is not the sync gate's business: a Degraded canary does not stop it.
    demo.rolled_out(&written);
    let degraded = demo
        .console
        .state
        .cells
        .health(canary[0].resource as usize, canary[0].cluster as usize)
        .map(|health| health.kind);
    assert_eq!(degraded, Some(HealthKind::Degraded));
    assert!(demo.console.state.rollout.is_some(), "wave 2 carries on");
}

#[test]
fn the_confirmation_says_what_the_gate_waits_for_before_the_rest() {
    for (gate, says) in [
        (
            WaveGate::default(),
            "the rest once it is in sync and Healthy (tab",
        ),
        (
            WaveGate::Healthy { for_ms: 30_000 },
            "the rest once it is in sync and Healthy for 30 s (tab",
        ),
        (WaveGate::Sync, "the rest once it is in sync (tab"),
    ] {
        let mut demo = Demo::new(gate, false);
        demo.console.select(CHECKOUT);
        demo.console.keys("a<tab>");
        let screen = demo.screen();
        let canary = &demo.console.state.clusters[demo.canary as usize].spec.name;
        assert!(
            screen.contains(&format!("waves: {canary} first,")) && screen.contains(says),
            "{gate}: {screen}"
        );
    }
}
