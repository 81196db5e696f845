//! The drift view driven headless on the demo, as the console loop drives it (the shared
//! `harness::console` harness, running its effects): a session fed by a simulated fleet
//! (`SimCore`) whose effects are played back synchronously. The scenario's drift shows field
//! by field, identical drifts on two clusters group, revert / adopt / ignore each ask first
//! and produce exactly their effect, ignore rules can be removed, owner fights are flagged,
//! and a read-only console refuses every repair key.

mod harness;

use std::ops::{Deref, DerefMut};

use flotilla::app::action::Action;
use flotilla::app::drift;
use flotilla::app::state::drift::{DriftView, Group, Plan, Row, Stage, rows};
use flotilla::app::state::{Mode, State};
use flotilla::backend::sim::{Scenario, ScenarioDrift, SimCore};
use flotilla::engine::Decision;
use flotilla::messages::{BackendEvent, CellRef, DriftField, Effect};
use harness::console::{Console, user_keymap};
use serde_json::Value;

/// The shared headless console, running its effects, with the simulated fleet behind it.
struct Demo {
    console: Console,
    core: SimCore,
}

impl Deref for Demo {
    type Target = Console;

    fn deref(&self) -> &Console {
        &self.console
    }
}

impl DerefMut for Demo {
    fn deref_mut(&mut self) -> &mut Console {
        &mut self.console
    }
}

const INVENTORY: &str = "Deployment/shop/inventory";

impl Demo {
    fn new(scenario: Scenario) -> Demo {
        let console = Console::demo().running_effects();
        let mut scenario = scenario;
        scenario.drift_every_seconds = 0;
        let core = SimCore::new(console.state.fleet.clone(), &scenario, 7);
        let mut demo = Demo { console, core };
        demo.snapshot();
        demo
    }

    fn snapshot(&mut self) {
        self.console.act(Action::Backend(self.core.snapshot()));
        for event in self.core.all_drift_events() {
            self.console.act(Action::Backend(event));
        }
    }

    /// Plays effects on the simulated clusters as the sim's task would, and feeds back events.
    fn play(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            // A revert takes the other manager's field back (forced); an apply does not.
            let (cells, force) = match effect {
                Effect::Apply { cells } => (cells, false),
                Effect::Revert { fields } => (fields.into_iter().map(|f| f.cell).collect(), true),
                Effect::UseFleet(fleet) => {
                    self.core.set_fleet(fleet.0);
                    self.snapshot();
                    continue;
                }
                other => panic!("the console loop should have handled {other:?}"),
            };
            for cluster in 0..self.core.cluster_count() {
                let updates = self.core.apply(cluster, &cells, force);
                if updates.is_empty() {
                    continue;
                }
                let drift = self.core.drift_events(&updates);
                self.console
                    .act(Action::Backend(BackendEvent::Cells(updates)));
                for event in drift {
                    self.console.act(Action::Backend(event));
                }
            }
        }
    }

    fn view(&self) -> &DriftView {
        match &self.session.state.mode {
            Mode::Drift(view) => view,
            other => panic!("not in the drift view: {other:?}"),
        }
    }

    fn plan(&self) -> &Plan {
        match &self.view().stage {
            Stage::Confirming(plan) => plan,
            other => panic!("no confirmation: {other:?}"),
        }
    }

    fn cell(&self, resource: &str, cluster: &str) -> CellRef {
        let fleet = &self.session.state.fleet;
        CellRef {
            resource: fleet
                .resources
                .iter()
                .position(|r| r.target.display_key() == resource)
                .expect("a demo resource") as u32,
            cluster: fleet.cluster_index(cluster).expect("a demo cluster") as u32,
        }
    }

    fn desired(&self, cell: CellRef, pointer: &str) -> Value {
        match self
            .session
            .state
            .fleet
            .decide(cell.resource as usize, cell.cluster as usize)
        {
            Decision::Placed { object, .. } => object.pointer(pointer).cloned().unwrap_or_default(),
            Decision::Suspended { reason, .. } | Decision::NotPlaced { reason } => {
                panic!("not delivered: {reason}")
            }
        }
    }

    fn drifted(&self, cell: CellRef) -> bool {
        self.session
            .state
            .cells
            .kind(cell.resource as usize, cell.cluster as usize)
            == flotilla::model::StatusKind::Drifted
    }

    /// Puts the drift view's cursor on the row showing `cluster` (a member row, or the group
    /// of one).
    fn cursor_to(&mut self, cluster: &str) {
        let groups = drift_groups(&self.session.state);
        let rows = rows(&groups);
        let index = self
            .session
            .state
            .fleet
            .cluster_index(cluster)
            .expect("cluster") as u32;
        let at = rows
            .iter()
            .position(|row| match *row {
                Row::Member(g, m) => groups[g].members[m].cell.cluster == index,
                Row::Group(g) => {
                    groups[g].members.len() == 1 && groups[g].members[0].cell.cluster == index
                }
            })
            .expect("a row for the cluster");
        let Mode::Drift(view) = &mut self.session.state.mode else {
            panic!("not in the drift view");
        };
        view.cursor = at;
    }
}

/// The demo scenario plus the same replicas drift on a second cluster where inventory
/// renders the same desired value.
/// Every drift the console's state holds, grouped as the drift view lists it.
fn drift_groups(state: &State) -> Vec<Group> {
    state.drift.groups(&state.cells)
}

fn two_identical() -> (Scenario, String) {
    let demo = Demo::new(Scenario::demo());
    let first = demo.cell(INVENTORY, "prod-us-east-2");
    let want = demo.desired(first, "/spec/replicas");
    let second = demo
        .session
        .state
        .fleet
        .clusters
        .iter()
        .map(|c| c.name.clone())
        .filter(|name| name != "prod-us-east-2" && name.starts_with("prod-"))
        .find(|name| {
            let cell = demo.cell(INVENTORY, name);
            demo.session
                .state
                .fleet
                .is_placed(cell.resource as usize, cell.cluster as usize)
                && demo.desired(cell, "/spec/replicas") == want
                && demo
                    .core
                    .status(cell.resource as usize, cell.cluster as usize)
                    == flotilla::model::CellStatus::InSync
        })
        .expect("a second prod cluster with the same replicas");
    let mut scenario = Scenario::demo();
    scenario.drift.push(ScenarioDrift {
        cluster: second.clone(),
        resource: INVENTORY.into(),
        path: "/spec/replicas".into(),
        live: Value::from(9),
        manager: "kubectl-scale".into(),
    });
    (scenario, second)
}

#[test]
fn the_scenario_drift_shows_with_desired_live_and_manager() {
    let mut demo = Demo::new(Scenario::demo());
    demo.keys("D");
    let groups = drift_groups(&demo.session.state);
    let cell = demo.cell(INVENTORY, "prod-us-east-2");
    let group = groups
        .iter()
        .find(|g| g.members.iter().any(|m| m.cell == cell))
        .expect("the scenario's drift is listed");
    assert_eq!(group.path, "/spec/replicas");
    assert_eq!(group.live, Value::from(9));
    assert_eq!(group.desired, demo.desired(cell, "/spec/replicas"));
    assert_ne!(group.desired, group.live);
    assert_eq!(group.members[0].manager.as_deref(), Some("kubectl-scale"));
    assert!(group.members[0].since_ms.is_some(), "since when it drifts");

    // The screen says so too.
    let backend = ratatui::backend::TestBackend::new(200, 40);
    let mut terminal = ratatui::Terminal::new(backend).expect("a test terminal");
    let theme = flotilla::config::theme::Theme::load(None, true);
    let keymap = flotilla::config::keymap::Keymap::load("default", None);
    let context = flotilla::views::ViewContext {
        theme: &theme,
        keymap: &keymap,
        ascii: false,
    };
    terminal
        .draw(|frame| flotilla::views::render(frame, &demo.session.state, &context))
        .expect("drawn");
    let screen: String = terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert!(
        screen.contains("Deployment/shop/inventory  /spec/replicas"),
        "{screen}"
    );
    assert!(screen.contains("live 9"), "{screen}");
    assert!(screen.contains("by kubectl-scale"), "{screen}");
}

#[test]
fn the_same_drift_on_two_clusters_is_one_group() {
    let (scenario, second) = two_identical();
    let mut demo = Demo::new(scenario);
    demo.keys("D");
    let groups = drift_groups(&demo.session.state);
    let group = groups
        .iter()
        .find(|g| g.path == "/spec/replicas" && g.live == 9)
        .expect("the replicas drift");
    let clusters: Vec<u32> = group.members.iter().map(|m| m.cell.cluster).collect();
    assert_eq!(
        clusters.len(),
        2,
        "prod-us-east-2 and {second} in one group: {groups:?}"
    );
    assert_eq!(
        rows(&groups)
            .iter()
            .filter(|r| matches!(r, Row::Member(..)))
            .count(),
        2,
        "one row per cluster under the group"
    );
}

#[test]
fn revert_asks_first_then_takes_back_exactly_the_chosen_field() {
    let (scenario, second) = two_identical();
    let mut demo = Demo::new(scenario);
    demo.session.state.danger_patterns = vec!["prod*".into()];
    let first = demo.cell(INVENTORY, "prod-us-east-2");
    let other = demo.cell(INVENTORY, &second);
    demo.keys("D");
    demo.cursor_to("prod-us-east-2");
    demo.keys("r");
    let plan = demo.plan();
    assert_eq!(
        plan.confirm_word, "prod-us-east-2",
        "a danger-class cluster"
    );
    assert!(
        plan.lines.iter().any(|l| l.contains("prod-us-east-2")
            && l.contains("/spec/replicas")
            && l.contains("live 9")),
        "{:?}",
        plan.lines
    );
    assert!(
        !plan.lines.iter().any(|l| l.contains(&second)),
        "only the chosen cluster"
    );
    assert!(demo.sent().is_empty(), "nothing before confirmation");
    demo.keys("y");
    assert!(demo.sent().is_empty(), "y is not the cluster's name");
    demo.keys("<esc>");
    assert!(demo.sent().is_empty(), "cancelled");
    assert_eq!(demo.view().stage, Stage::Browsing);

    demo.keys("r");
    demo.type_text("prod-us-east-2");
    demo.keys("<enter>");
    let sent = demo.sent();
    assert_eq!(
        sent,
        vec![Effect::Revert {
            fields: vec![flotilla::messages::RevertField {
                cell: first,
                path: "/spec/replicas".into()
            }]
        }]
    );
    demo.play(sent);
    assert!(!demo.drifted(first), "reverted");
    assert!(demo.drifted(other), "the other cluster keeps its drift");
    assert_eq!(drift_groups(&demo.session.state).len(), 1);
}

#[test]
fn adopt_saves_an_override_and_the_matrix_follows() {
    let mut demo = Demo::new(Scenario::demo());
    let cell = demo.cell(INVENTORY, "prod-us-east-2");
    demo.keys("D");
    demo.cursor_to("prod-us-east-2");
    demo.keys("a");
    let plan = demo.plan();
    assert!(
        plan.lines.iter().any(|l| l.starts_with("write ")),
        "{:?}",
        plan.lines
    );
    assert!(
        plan.lines
            .iter()
            .any(|l| l.trim_start().starts_with("+ ") && l.contains('9')),
        "the override's lines: {:?}",
        plan.lines
    );
    assert!(demo.sent().is_empty(), "nothing before confirmation");
    let before = demo.session.state.files.clone();
    demo.keys("y");
    assert_ne!(
        demo.session.state.files, before,
        "the fleet files changed (in memory)"
    );
    assert_eq!(
        demo.desired(cell, "/spec/replicas"),
        Value::from(9),
        "the override renders"
    );
    let sent = demo.sent();
    assert!(
        matches!(sent.first(), Some(Effect::UseFleet(_))),
        "{sent:?}"
    );
    assert!(
        sent.contains(&Effect::Apply { cells: vec![cell] }),
        "{sent:?}"
    );
    demo.play(sent);
    assert!(!demo.drifted(cell));
}

#[test]
fn ignore_persists_a_rule_that_can_be_listed_and_removed() {
    let mut demo = Demo::new(Scenario::demo());
    let cell = demo.cell(INVENTORY, "prod-us-east-2");
    demo.keys("D");
    let rules_before = demo.view().rules.len();
    demo.cursor_to("prod-us-east-2");
    demo.keys("i");
    let plan = demo.plan();
    assert!(
        plan.lines.iter().any(|l| l.contains("kind: DriftIgnore")),
        "{:?}",
        plan.lines
    );
    assert!(demo.sent().is_empty());
    demo.keys("y");
    assert!(
        demo.session
            .state
            .files
            .iter()
            .any(|f| f.path.ends_with("flotilla-ignore.yaml") && f.text.contains("/spec/replicas"))
    );
    let sent = demo.sent();
    assert!(
        sent.iter().all(|e| matches!(e, Effect::UseFleet(_))),
        "an ignore applies nothing: {sent:?}"
    );
    demo.play(sent);
    assert!(!demo.drifted(cell), "ignored drift is not drift");
    assert_eq!(demo.view().rules.len(), rules_before + 1);

    // Remove it again: tab to the rules, d, confirm.
    demo.keys("<tab>");
    let Mode::Drift(view) = &mut demo.session.state.mode else {
        panic!()
    };
    view.rule_cursor = view
        .rules
        .iter()
        .position(|r| r.name == "ignore-deployment-inventory")
        .expect("the new rule is listed");
    demo.keys("d");
    assert!(demo.plan().lines[0].contains("remove ignore rule"));
    assert!(demo.sent().is_empty());
    demo.keys("y");
    let sent = demo.sent();
    demo.play(sent);
    assert!(demo.drifted(cell), "the drift counts again");
    assert_eq!(demo.view().rules.len(), rules_before);
}

#[test]
fn marked_fields_are_repaired_in_one_confirmed_step() {
    let (scenario, second) = two_identical();
    let mut demo = Demo::new(scenario);
    let cells = [
        demo.cell(INVENTORY, "prod-us-east-2"),
        demo.cell(INVENTORY, &second),
    ];
    demo.keys("D");
    demo.cursor_to("prod-us-east-2");
    demo.keys(" ");
    demo.cursor_to(&second);
    demo.keys(" ");
    assert_eq!(demo.view().marked.len(), 2);
    demo.keys("r");
    assert_eq!(demo.plan().fields, 2);
    demo.keys("y");
    let sent = demo.sent();
    assert_eq!(sent.len(), 1, "one step: {sent:?}");
    demo.play(sent);
    assert!(cells.iter().all(|cell| !demo.drifted(*cell)));
    let batch = demo
        .session
        .state
        .drift
        .last_batch
        .clone()
        .expect("a batch");
    assert_eq!(batch.cells.len(), 2);
}

#[test]
fn a_field_changed_again_by_the_same_manager_after_a_revert_is_an_owner_fight() {
    let mut demo = Demo::new(Scenario::demo());
    let cell = demo.cell(INVENTORY, "prod-us-east-2");
    demo.keys("D");
    demo.cursor_to("prod-us-east-2");
    demo.keys("r");
    demo.keys("y");
    let sent = demo.sent();
    demo.play(sent);
    assert!(!demo.drifted(cell));
    // The autoscaler scales it again.
    demo.session
        .dispatch(Action::Backend(BackendEvent::Cells(vec![
            flotilla::messages::CellUpdate {
                cell,
                status: flotilla::model::CellStatus::Drifted,
                message: None,
            },
        ])));
    demo.session.dispatch(Action::Backend(BackendEvent::Drift {
        cell,
        fields: vec![DriftField {
            path: "/spec/replicas".into(),
            desired: Value::from(3),
            live: Value::from(7),
            manager: Some("kubectl-scale".into()),
            time: None,
            secret: false,
        }],
    }));
    let groups = drift_groups(&demo.session.state);
    assert_eq!(groups[0].members[0].fight.as_deref(), Some("kubectl-scale"));
}

#[test]
fn read_only_consoles_may_look_but_every_repair_key_is_refused() {
    let mut demo = Demo::new(Scenario::demo());
    demo.session.state.readonly = true;
    demo.keys("D");
    assert!(
        !drift_groups(&demo.session.state).is_empty(),
        "the drift shows"
    );
    demo.cursor_to("prod-us-east-2");
    for key in ['r', 'a', 'i'] {
        demo.keys(&key.to_string());
        assert_eq!(demo.view().stage, Stage::Browsing, "{key} asks nothing");
        assert!(
            demo.session
                .state
                .notice
                .as_deref()
                .is_some_and(|n| n.contains("read-only")),
            "{key}"
        );
    }
    demo.keys("<tab>");
    demo.keys("d");
    assert_eq!(demo.view().stage, Stage::Browsing);
    assert!(demo.sent().is_empty());
}

#[test]
fn a_revert_the_audit_log_remembers_makes_new_drift_of_that_field_an_owner_fight() {
    let mut demo = Demo::new(Scenario::demo());
    let cell = demo.cell(INVENTORY, "prod-us-east-2");
    let entries = vec![serde_json::json!({
        "action": "repair-revert",
        "clusters": ["prod-us-east-2"],
        "objects": [INVENTORY],
        "paths": ["/spec/replicas"],
    })];
    drift::remember_reverts(&mut demo.session.state, &entries);
    // Nothing is flagged until the field is reported drifted again.
    assert_eq!(drift_groups(&demo.session.state)[0].members[0].fight, None);
    demo.session.dispatch(Action::Backend(BackendEvent::Drift {
        cell,
        fields: vec![DriftField {
            path: "/spec/replicas".into(),
            desired: Value::from(3),
            live: Value::from(9),
            manager: Some("hpa-controller".into()),
            time: None,
            secret: false,
        }],
    }));
    let groups = drift_groups(&demo.session.state);
    assert_eq!(
        groups[0].members[0].fight.as_deref(),
        Some("hpa-controller")
    );
    // Another path of the same object is not a fight.
    assert!(
        !demo
            .session
            .state
            .drift
            .fights
            .keys()
            .any(|(c, path)| *c == cell && path != "/spec/replicas")
    );
}

#[test]
fn the_drift_views_keys_work_as_shipped_through_the_console_key_mapping() {
    let mut demo = Demo::new(Scenario::demo());
    demo.keys("D");
    demo.cursor_to("prod-us-east-2");
    demo.keys("r");
    assert!(!demo.plan().lines.is_empty(), "r asks to revert");
    assert!(demo.sent().is_empty(), "nothing before confirmation");
    demo.keys("<esc>");
    assert_eq!(demo.view().stage, Stage::Browsing);
    demo.keys("<esc>");
    assert!(
        matches!(demo.session.state.mode, Mode::Normal),
        "esc leaves the view"
    );
}

#[test]
fn a_remapped_drift_key_reverts_and_the_key_it_replaced_does_nothing() {
    let mut demo = Demo::new(Scenario::demo());
    demo.use_keymap(user_keymap("drift:\n  revert: [R]\n  back: [ctrl-g]\n"));
    demo.session.state.danger_patterns = vec!["prod*".into()];
    let cell = demo.cell(INVENTORY, "prod-us-east-2");
    demo.keys("D");
    demo.cursor_to("prod-us-east-2");
    demo.keys("r");
    assert_eq!(demo.view().stage, Stage::Browsing, "r no longer reverts");
    demo.keys("<esc>");
    assert!(
        matches!(demo.session.state.mode, Mode::Drift(_)),
        "esc no longer leaves"
    );
    demo.keys("R");
    assert!(
        demo.plan()
            .lines
            .iter()
            .any(|l| l.contains("/spec/replicas")),
        "R asks to revert: {:?}",
        demo.plan().lines
    );
    assert_eq!(demo.plan().confirm_word, "prod-us-east-2");
    demo.type_text("prod-us-east-2");
    demo.keys("<enter>");
    let sent = demo.sent();
    assert!(
        matches!(sent.as_slice(), [Effect::Revert { fields }] if fields.iter().all(|f| f.cell == cell)),
        "{sent:?}"
    );
    demo.play(sent);
    assert!(!demo.drifted(cell), "reverted");
    demo.keys("<ctrl-g>");
    assert!(
        matches!(demo.session.state.mode, Mode::Normal),
        "ctrl-g leaves the view"
    );
}

#[test]
fn a_remapped_help_key_opens_the_help_and_a_question_mark_bound_elsewhere_does_that() {
    let mut demo = Demo::new(Scenario::demo());
    demo.use_keymap(user_keymap("drift:\n  help: [h]\n  mark: [\"?\"]\n"));
    demo.keys("D");
    demo.keys("?");
    assert!(!demo.session.state.help_open, "? marks now");
    assert_eq!(demo.view().marked.len(), 1, "? marked the field");
    demo.keys("h");
    assert!(demo.session.state.help_open, "h opens the help");
    demo.keys("<esc>");
    assert!(!demo.session.state.help_open);
    assert!(matches!(demo.session.state.mode, Mode::Drift(_)));
}

#[test]
fn help_opens_over_the_drift_view_and_closes_back_to_it_as_it_was() {
    let mut demo = Demo::new(Scenario::demo());
    demo.keys("D");
    demo.cursor_to("prod-us-east-2");
    demo.keys("<space>");
    assert_eq!(demo.view().marked.len(), 1);
    demo.help_and_back("jr<space>");
    assert_eq!(demo.view().marked.len(), 1);
    assert!(demo.sent().is_empty(), "nothing was asked of the clusters");
}
