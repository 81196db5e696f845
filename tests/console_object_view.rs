//! The object view of a cell driven headless on the demo, through the console's own key mapping
//! and the real `update` (the shared `harness::console` harness): `enter` on a cell, `tab`
//! through desired → live → diff → events → clusters, with a simulated fleet (`SimCore`)
//! answering each follow as the demo's backend does. An operator sees the degraded
//! Deployment's ProgressDeadlineExceeded and its crashing pod's BackOff, a drifted field in the
//! diff and in the clusters grouped by live state, and a Secret's keys but never its values.

mod harness;

use flotilla::app::action::Action;
use flotilla::app::state::Mode;
use flotilla::app::state::object_view::ObjectTab;
use flotilla::backend::sim::{Scenario, SimCore, object_view};
use flotilla::config::keymap::Keymap;
use flotilla::config::theme::Theme;
use flotilla::messages::{BackendEvent, Effect};
use flotilla::views::{self, ViewContext};
use harness::console::{Console, user_keymap};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// The demo console with the simulated fleet that answers it.
struct Demo {
    console: Console,
    core: SimCore,
}

impl Demo {
    fn new() -> Demo {
        let mut console = Console::demo();
        let mut scenario = Scenario::demo();
        scenario.drift_every_seconds = 0;
        let core = SimCore::new(console.state.fleet.clone(), &scenario, 7);
        console.act(Action::Backend(core.snapshot()));
        for event in core
            .all_drift_events()
            .into_iter()
            .chain(core.health_events())
        {
            console.act(Action::Backend(event));
        }
        for cluster in 0..core.cluster_count() {
            console.act(Action::Backend(BackendEvent::Cluster {
                cluster: cluster as u32,
                status: core.cluster_status(cluster),
            }));
        }
        Demo { console, core }
    }

    /// Presses keys and answers every follow they ask for, as the demo's backend does.
    fn keys(&mut self, keys: &str) -> Vec<Effect> {
        let effects = self.console.keys(keys);
        for effect in &effects {
            if let Effect::OpenObjectView { cells } = effect {
                for cell in cells {
                    let live = Box::new(object_view::live_object(&self.core, *cell, 0));
                    self.console.act(Action::Backend(BackendEvent::LiveObject {
                        cell: *cell,
                        live,
                    }));
                }
            }
        }
        effects
    }

    /// Opens the object view on a cell.
    fn open(&mut self, resource: &str, cluster: &str) -> Vec<Effect> {
        self.console.select(resource);
        self.console.select_cluster(cluster);
        self.keys("<enter>")
    }

    fn tab(&self) -> Option<ObjectTab> {
        match self.console.state.mode {
            Mode::Object { tab, .. } => Some(tab),
            _ => None,
        }
    }

    fn draw(&self, width: u16, height: u16) -> Terminal<TestBackend> {
        self.draw_with(width, height, &Keymap::built_in("default"))
    }

    fn draw_with(&self, width: u16, height: u16, keymap: &Keymap) -> Terminal<TestBackend> {
        let theme = Theme::load(None, true);
        let context = ViewContext {
            theme: &theme,
            keymap,
            ascii: false,
        };
        let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
        terminal
            .draw(|frame| views::render(frame, &self.console.state, &context))
            .expect("draw");
        terminal
    }

    fn screen(&self) -> String {
        self.screen_at(200)
    }

    fn screen_with(&self, keymap: &Keymap) -> String {
        self.screen_of(200, keymap)
    }

    /// The screen this many columns wide, 50 rows high.
    fn screen_at(&self, width: u16) -> String {
        self.screen_of(width, &Keymap::built_in("default"))
    }

    fn screen_of(&self, width: u16, keymap: &Keymap) -> String {
        let terminal = self.draw_with(width, 50, keymap);
        let buffer = terminal.backend().buffer();
        let width = usize::from(buffer.area.width);
        let cells: Vec<&str> = buffer.content().iter().map(|c| c.symbol()).collect();
        cells
            .chunks(width)
            .map(|row| row.concat())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

const LEDGER: &str = "Deployment/payments/ledger";

#[test]
fn the_degraded_deployment_shows_its_health_live_status_and_warning_events() {
    let mut demo = Demo::new();
    let opened = demo.open(LEDGER, "prod-eu-west-2");
    assert!(
        opened
            .iter()
            .any(|effect| matches!(effect, Effect::OpenObjectView { cells } if cells.len() == 1)),
        "enter follows the cell: {opened:?}"
    );
    assert_eq!(demo.tab(), Some(ObjectTab::Desired));
    let screen = demo.screen();
    assert!(screen.contains("health Degraded"), "{screen}");
    assert!(
        screen.contains("ProgressDeadlineExceeded"),
        "the reason: {screen}"
    );

    demo.keys("<tab>");
    assert_eq!(demo.tab(), Some(ObjectTab::Live));
    let screen = demo.screen();
    assert!(screen.contains("availableReplicas: 1"), "{screen}");
    assert!(
        screen.contains("pods: 1/2 ready, 1 CrashLoopBackOff: exit 1"),
        "the worst pod state beside the tabs, on every tab: {screen}"
    );
    assert!(
        !screen.contains("managedFields"),
        "server bookkeeping is left out: {screen}"
    );

    demo.keys("<tab>");
    assert_eq!(demo.tab(), Some(ObjectTab::Diff));
    assert!(
        demo.screen().contains("live matches the desired object"),
        "{}",
        demo.screen()
    );

    demo.keys("<tab>");
    assert_eq!(demo.tab(), Some(ObjectTab::Events));
    let screen = demo.screen();
    let deadline = screen
        .find("ProgressDeadlineExceeded  ")
        .expect("the Deployment's warning");
    let backoff = screen.find("BackOff  ").expect("the pod's warning");
    let scaled = screen
        .find("ScalingReplicaSet")
        .expect("the older Normal event");
    assert!(
        backoff < deadline && deadline < scaled,
        "newest first: {screen}"
    );
    // Above the Events, its pods there: the worst of them named, then the one crashing.
    let pods = screen
        .find("# pods on prod-eu-west-2: 1/2 ready, 1 CrashLoopBackOff: exit 1")
        .expect("the pods' summary");
    let crashing = screen
        .find("CrashLoopBackOff    7  Error (exit 1)")
        .expect("the crashing pod, its restarts and last exit");
    assert!(pods < crashing && crashing < backoff, "{screen}");
    // The warning is about the pod that crashes, not one that runs; no pod waits for a node.
    let crashing_pod = screen
        .lines()
        .find(|line| line.contains("CrashLoopBackOff    7"))
        .and_then(|line| line.trim_start_matches('│').split_whitespace().next())
        .expect("the crashing pod's name");
    assert!(
        screen.contains(&format!("Pod payments/{crashing_pod}")),
        "{screen}"
    );
    assert!(!screen.contains("FailedScheduling"), "{screen}");

    let closed = demo.keys("<esc>");
    assert_eq!(closed, vec![Effect::CloseObjectView]);
    assert_eq!(demo.console.state.mode, Mode::Normal);
}

#[test]
fn a_drift_shows_in_the_diff_and_sets_its_cluster_apart() {
    let mut demo = Demo::new();
    demo.open("Deployment/shop/inventory", "prod-us-east-2");
    demo.keys("<tab><tab>");
    let screen = demo.screen();
    assert!(
        screen.contains("-  replicas: 9"),
        "the live value: {screen}"
    );
    assert!(
        screen.contains("+  replicas: "),
        "the desired value: {screen}"
    );

    let effects = demo.keys("<tab><tab>");
    assert_eq!(demo.tab(), Some(ObjectTab::Clusters));
    let placed = effects
        .iter()
        .find_map(|effect| match effect {
            Effect::OpenObjectView { cells } => Some(cells.len()),
            _ => None,
        })
        .expect("the clusters view follows every placed cluster");
    assert!(placed > 1, "{effects:?}");
    // On a narrow terminal the groups are a list.
    let screen = demo.screen_at(90);
    assert!(
        screen.contains("prod-us-east-2: differs in /spec/replicas"),
        "{screen}"
    );
    assert!(screen.contains("identical (the most clusters)"), "{screen}");
    // Picking the drifted cluster's group shows its object.
    for _ in 0..10 {
        if demo.screen_at(90).contains("▸ prod-us-east-2") {
            break;
        }
        demo.keys("j");
    }
    let screen = demo.screen_at(90);
    assert!(screen.contains("# live on prod-us-east-2"), "{screen}");
    assert!(screen.contains("replicas: 9"), "{screen}");
}

#[test]
fn on_a_wide_terminal_the_groups_stand_side_by_side_headed_by_their_clusters() {
    let mut demo = Demo::new();
    demo.open("Deployment/shop/inventory", "prod-us-east-2");
    demo.keys("<shift-tab>");
    assert_eq!(demo.tab(), Some(ObjectTab::Clusters));
    let resource = demo.console.state.selected_resource().expect("a row");
    let groups = demo.console.state.live_groups(resource);
    assert!(groups.len() > 4, "more groups than fit: {}", groups.len());
    let screen = demo.screen_at(200);
    assert!(screen.contains("side by side"), "{screen}");
    let rows: Vec<&str> = screen.lines().collect();
    // The largest group's clusters head the first column, the next group's the second, on
    // the same row.
    let heading = rows
        .iter()
        .find(|row| row.contains("▸ prod-eu-west-1, prod-eu-west-2"))
        .unwrap_or_else(|| panic!("the first group heads a column: {screen}"));
    assert!(heading.contains("edge-store-0001"), "{screen}");
    // Each column shows its group's object: the drifted replicas beside the desired ones.
    let replicas = rows
        .iter()
        .find(|row| row.contains("replicas: 3"))
        .unwrap_or_else(|| panic!("the first group's replicas: {screen}"));
    assert!(
        replicas.find("replicas: 3") < replicas.find(" │ "),
        "the first group on the left: {replicas}"
    );
    assert!(
        !screen.contains("prod-us-east-2: differs in"),
        "no list: {screen}"
    );
    // Picking a group beyond the shown columns moves them along.
    for _ in 0..groups.len() {
        demo.keys("j");
    }
    let screen = demo.screen_at(200);
    assert!(
        screen.contains(&format!("of {} groups", groups.len()))
            || screen.contains(&format!(" of {})", groups.len())),
        "{screen}"
    );
    assert!(screen.contains("▸ prod-us-east-2"), "{screen}");
    assert!(
        screen.contains("replicas: 9"),
        "the drifted group's object: {screen}"
    );
    assert!(
        !screen.contains("prod-eu-west-1, prod-eu-west-2"),
        "the first group scrolled out: {screen}"
    );
}

#[test]
fn a_secret_on_a_cluster_shows_its_keys_never_its_values() {
    let mut demo = Demo::new();
    demo.open("Secret/payments/ledger-db", "prod-eu-west-1");
    demo.keys("<tab>");
    let screen = demo.screen();
    assert!(
        screen.contains("password: '***'")
            || screen.contains("password: \"***\"")
            || screen.contains("password: ***"),
        "{screen}"
    );
    for leak in ["not-a-real-password", "bm90LWEtcmVhbC1wYXNzd29yZA=="] {
        assert!(!screen.contains(leak), "{screen}");
    }
    demo.keys("<tab>");
    assert!(!demo.screen().contains("not-a-real-password"));
}

#[test]
fn the_events_view_at_120x40() {
    let mut demo = Demo::new();
    demo.open(LEDGER, "prod-eu-west-2");
    demo.keys("<tab><tab><tab>");
    insta::assert_snapshot!(demo.draw(120, 40).backend());
}

#[test]
fn the_events_view_at_80x24() {
    let mut demo = Demo::new();
    demo.open(LEDGER, "prod-eu-west-2");
    demo.keys("<tab><tab><tab>");
    insta::assert_snapshot!(demo.draw(80, 24).backend());
}

#[test]
fn the_clusters_view_at_120x40() {
    let mut demo = Demo::new();
    demo.open("Deployment/shop/inventory", "prod-us-east-2");
    demo.keys("<shift-tab>");
    assert_eq!(demo.tab(), Some(ObjectTab::Clusters));
    insta::assert_snapshot!(demo.draw(120, 40).backend());
}

#[test]
fn a_user_key_map_moves_the_object_views_keys_and_its_help_lists_them() {
    let mut demo = Demo::new();
    let keymap = user_keymap("object:\n  next-view: [n]\n  next-cluster: [L]\n  back: [ctrl-g]\n");
    demo.console.use_keymap(keymap.clone());
    demo.open(LEDGER, "prod-eu-west-2");
    let cluster = demo.console.state.selected_cluster();
    demo.keys("<tab>");
    assert_eq!(demo.tab(), Some(ObjectTab::Desired), "tab moved to n");
    demo.keys("n");
    assert_eq!(demo.tab(), Some(ObjectTab::Live));
    demo.keys("l<right>");
    assert_eq!(
        demo.console.state.selected_cluster(),
        cluster,
        "l and → moved to L"
    );
    demo.keys("L");
    assert_ne!(
        demo.console.state.selected_cluster(),
        cluster,
        "L shows the next cluster"
    );
    demo.keys("<esc>");
    assert_eq!(demo.tab(), Some(ObjectTab::Live), "esc moved to ctrl-g");
    assert!(
        demo.screen_with(&keymap).contains("n next view"),
        "the title names the keys in use"
    );

    demo.keys("?");
    assert!(demo.console.state.help_open);
    let help = demo.screen_with(&keymap);
    assert!(help.contains("In a cell's object view"), "{help}");
    assert!(
        help.contains(&format!(" {:<22}next view: desired", "n")),
        "the moved key is listed with what it does: {help}"
    );
    demo.keys("<esc>");
    assert!(!demo.console.state.help_open);
    assert_eq!(
        demo.tab(),
        Some(ObjectTab::Live),
        "the view stays open under help"
    );

    demo.keys("<ctrl-g>");
    assert_eq!(demo.console.state.mode, Mode::Normal);
    demo.open(LEDGER, "prod-eu-west-2");
    demo.keys("q");
    assert!(
        demo.console.state.should_quit,
        "q still quits from the object view"
    );
}

#[test]
fn the_clusters_view_at_200x50() {
    let mut demo = Demo::new();
    demo.open("Deployment/shop/inventory", "prod-us-east-2");
    demo.keys("<shift-tab>");
    insta::assert_snapshot!(demo.draw(200, 50).backend());
}

#[test]
fn the_clusters_view_at_80x24() {
    let mut demo = Demo::new();
    demo.open("Deployment/shop/inventory", "prod-us-east-2");
    demo.keys("<shift-tab>");
    insta::assert_snapshot!(demo.draw(80, 24).backend());
}

#[test]
fn the_detail_says_how_long_ago_a_progress_deadline_passed_by_the_clock_of_the_last_tick() {
    use flotilla::messages::{CellRef, HealthUpdate};
    let mut demo = Demo::new();
    let resource = demo.console.select(LEDGER);
    let cluster = demo.console.select_cluster("prod-eu-west-2");
    // The live object as its cluster's deployment controller left it past its deadline.
    let stalled = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "ledger", "namespace": "payments", "generation": 1},
        "spec": {"replicas": 3},
        "status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 3,
            "availableReplicas": 1, "conditions": [{
                "type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                "message": "ReplicaSet \"ledger-7d9c4b5f6\" has timed out progressing.",
                "lastTransitionTime": "2026-12-01T18:51:15Z",
                "lastUpdateTime": "2026-12-01T18:51:15Z"}]},
    });
    demo.console
        .act(Action::Backend(BackendEvent::Health(vec![HealthUpdate {
            cell: CellRef {
                resource: resource as u32,
                cluster: cluster as u32,
            },
            health: flotilla::engine::health::assess(&stalled),
        }])));
    assert!(
        demo.console.state.shows_a_time(),
        "the console redraws as the clock moves"
    );
    let before_a_tick = demo.screen_at(400);
    assert!(
        before_a_tick.contains("1/3 available, progress deadline exceeded: ProgressDeadline"),
        "without a clock, the reason as it is: {before_a_tick}"
    );
    let at = |stamp: &str| {
        let time: k8s_openapi::jiff::Timestamp = stamp.parse().expect("a time");
        Action::Tick {
            now_ms: 1_000,
            unix_ms: u64::try_from(time.as_millisecond()).ok(),
        }
    };
    demo.console.act(at("2026-12-01T18:55:20Z"));
    let screen = demo.screen_at(400);
    assert!(
        screen.contains("1/3 available, progress deadline exceeded 4 m ago: ProgressDeadline"),
        "{screen}"
    );
    demo.console.act(at("2026-12-01T21:51:15Z"));
    assert!(
        demo.screen_at(400)
            .contains("progress deadline exceeded 3 h ago"),
        "{}",
        demo.screen_at(400)
    );
}

/// The Events view starts with the chain, top to bottom: the template and the policy that
/// placed it on the cluster, each at its file and line, the override rules applied there, the
/// object with its cell's state, its pods and its Events — the links in that order, the way
/// the template became what runs.
#[test]
fn the_chain_runs_from_the_template_to_the_pods_and_events() {
    let mut demo = Demo::new();
    demo.open(LEDGER, "prod-eu-west-2");
    demo.keys("<tab><tab><tab>");
    let screen = demo.screen_at(160);
    let line = |step: &str| {
        screen
            .lines()
            .position(|line| {
                line.contains(&format!("→ {step} ")) || line.contains(&format!("│  {step} "))
            })
            .unwrap_or_else(|| panic!("no {step} link\n{screen}"))
    };
    let links = [
        line("template"),
        line("policy"),
        line("object"),
        line("pods"),
        line("events"),
    ];
    assert!(links.windows(2).all(|w| w[0] < w[1]), "{links:?}\n{screen}");
    let at = |row: usize| screen.lines().nth(row).unwrap_or_default().to_string();
    let template = at(links[0]);
    assert!(
        template.contains(LEDGER) && template.contains(".yaml:"),
        "the template at its file and line: {template}"
    );
    let policy = at(links[1]);
    assert!(
        // A KubeFed template carries its own placement.
        policy.contains("FederatedDeployment/payments/ledger")
            && policy.contains(".yaml:")
            && policy.contains("placed here"),
        "{policy}"
    );
    assert!(at(links[2]).contains("Degraded"), "{}", at(links[2]));
    assert!(
        at(links[3]).contains("1/2 ready, 1 CrashLoopBackOff"),
        "{}",
        at(links[3])
    );
    assert!(at(links[4]).contains("warnings"), "{}", at(links[4]));
    // The chain ends where the pods and Events begin.
    let pods = screen
        .find("# pods on prod-eu-west-2")
        .expect("the pods section");
    let chain = screen.find("# chain:").expect("the chain");
    assert!(chain < pods, "{screen}");
}

/// A cell whose cluster rewrites the template shows each override rule applied there, at the
/// line of that rule in its file.
#[test]
fn the_chain_names_each_override_rule_at_its_line() {
    let mut demo = Demo::new();
    let overridden = (0..demo.console.state.resources.len())
        .flat_map(|resource| (0..demo.console.state.clusters.len()).map(move |c| (resource, c)))
        .find_map(|(resource, cluster)| {
            let links = demo.console.state.fleet.chain(resource, cluster);
            links
                .iter()
                .any(|link| link.step == "override" && link.name.contains(" rule "))
                .then_some((resource, cluster, links))
        })
        .expect("the demo overrides some cell");
    let (resource, cluster, links) = overridden;
    let key = demo.console.state.resources[resource].target.display_key();
    let name = demo.console.state.clusters[cluster].spec.name.clone();
    for link in links
        .iter()
        .filter(|link| link.step == "override" && link.name.contains(" rule "))
    {
        let at = link.at.as_deref().expect("an override's file:line");
        let (file, line) = at.rsplit_once(':').expect("file:line");
        let line: usize = line.parse().expect("a line number");
        let text = std::fs::read_to_string(
            std::path::Path::new("testdata/fleets/demo")
                .join(std::path::Path::new(file).file_name().expect("a file")),
        )
        .unwrap_or_else(|err| panic!("{file}: {err}"));
        let written = text.lines().nth(line - 1).unwrap_or_default();
        assert!(
            written.trim_start().starts_with('-')
                || written.contains("targetCluster")
                || written.contains("overriders"),
            "{at} is not an override rule: {written:?}"
        );
    }
    demo.open(&key, &name);
    demo.keys("<tab><tab><tab>");
    let screen = demo.screen_at(160);
    assert!(screen.contains("→ override"), "{screen}");
}

/// The clusters view gives the template's status as Karmada would aggregate it from the
/// members read: a Deployment's counters are the sums of what each placed cluster's live object
/// reports, named as Karmada's built-in; and a hub that aggregated otherwise is flagged.
#[test]
fn the_clusters_view_sums_the_members_status_as_karmada_would_and_flags_a_hub_that_differs() {
    let mut demo = Demo::new();
    demo.open("Deployment/shop/inventory", "prod-eu-west-1");
    let effects = demo.keys("<tab><tab><tab><tab>");
    assert_eq!(demo.tab(), Some(ObjectTab::Clusters));
    let cells = effects
        .iter()
        .find_map(|effect| match effect {
            Effect::OpenObjectView { cells } => Some(cells.clone()),
            _ => None,
        })
        .expect("the clusters view follows every placed cluster");
    // What the members report, read from the same answers the console got.
    let ready: i64 = cells
        .iter()
        .filter_map(|cell| object_view::live_object(&demo.core, *cell, 0).object)
        .filter_map(|object| object.pointer("/status/readyReplicas")?.as_i64())
        .sum();
    assert!(ready > 0);
    let screen = demo.screen_at(90);
    assert!(
        screen.contains("# aggregated status of") && screen.contains("apps/Deployment (built-in)"),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("  readyReplicas: {ready}")),
        "the sum of the members' readyReplicas, {ready}: {screen}"
    );
    assert!(!screen.contains("the hub"), "{screen}");

    // A hub whose template says otherwise (one replica short) is flagged, with its status.
    let cell = cells[0];
    let mut live = object_view::live_object(&demo.core, cell, 0);
    let mut template = live.object.clone().expect("held");
    template["status"] = serde_json::json!({"readyReplicas": ready - 1});
    live.hub = Some(flotilla::messages::HubAggregate {
        template: Some(template),
        ..Default::default()
    });
    demo.console.act(Action::Backend(BackendEvent::LiveObject {
        cell,
        live: Box::new(live),
    }));
    let screen = demo.screen_at(90);
    assert!(
        screen.contains("# the hub aggregated otherwise:"),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("  readyReplicas: {}", ready - 1)),
        "{screen}"
    );
}

/// The demo's inventory Deployment's clusters view, and the cells it follows.
fn inventory_clusters_view() -> (Demo, Vec<flotilla::messages::CellRef>) {
    let mut demo = Demo::new();
    demo.open("Deployment/shop/inventory", "prod-eu-west-1");
    let effects = demo.keys("<tab><tab><tab><tab>");
    let cells = effects
        .iter()
        .find_map(|effect| match effect {
            Effect::OpenObjectView { cells } => Some(cells.clone()),
            _ => None,
        })
        .expect("the clusters view follows every placed cluster");
    (demo, cells)
}

/// Injects a Karmada hub's per-member record for the followed inventory Deployment: the
/// first member as flotilla reads it, the second with the other health and a status one
/// replica short, and a member flotilla does not follow. Returns the members' names.
fn hub_record(demo: &mut Demo, cells: &[flotilla::messages::CellRef]) -> (String, String) {
    let interpreters = flotilla::engine::interpreter::Interpreters::default();
    let live = |cell| object_view::live_object(&demo.core, cell, 0);
    let name = |cell: flotilla::messages::CellRef| {
        demo.console.state.clusters[cell.cluster as usize]
            .spec
            .name
            .clone()
    };
    let (first, second) = (cells[0], cells[1]);
    let first_object = live(first).object.expect("held");
    let second_object = live(second).object.expect("held");
    let collected = |object: &serde_json::Value| {
        interpreters
            .reflect_status(object)
            .expect("collects")
            .expect("a status")
    };
    let word = |object: &serde_json::Value| match flotilla::engine::health::assess(object)
        .map(|h| h.kind)
    {
        Some(flotilla::model::HealthKind::Healthy) => "Healthy",
        _ => "Unhealthy",
    };
    let other = |word: &str| {
        if word == "Healthy" {
            "Unhealthy"
        } else {
            "Healthy"
        }
    };
    let mut short = collected(&second_object);
    let ready = short["readyReplicas"].as_i64().unwrap_or(1);
    short["readyReplicas"] = serde_json::json!(ready - 1);
    let items = vec![
        serde_json::json!({"clusterName": name(first), "applied": true,
            "health": word(&first_object), "status": collected(&first_object)}),
        serde_json::json!({"clusterName": name(second), "applied": true,
            "health": other(word(&second_object)), "status": short}),
        serde_json::json!({"clusterName": "far-away", "applied": false,
            "appliedMessage": "no such cluster in the fleet"}),
    ];
    let mut read = live(first);
    read.hub = Some(flotilla::messages::HubAggregate {
        template: None,
        items,
        error: None,
    });
    let names = (name(first), name(second));
    demo.console.act(Action::Backend(BackendEvent::LiveObject {
        cell: first,
        live: Box::new(read),
    }));
    names
}

/// On a Karmada hub the clusters view gives the binding's per-member record beside the
/// aggregation: each member's collected status, applied and health as Karmada recorded them,
/// and whether that is what flotilla read there; a member where they differ is flagged with
/// flotilla's read beside it, and a member flotilla does not follow says so.
#[test]
fn the_clusters_view_holds_the_hubs_record_of_each_member_against_what_flotilla_read() {
    let (mut demo, cells) = inventory_clusters_view();
    assert!(cells.len() >= 2, "two members at least");
    let screen = demo.screen_at(90);
    assert!(!screen.contains("the hub's record"), "off a hub: {screen}");
    let (first, second) = hub_record(&mut demo, &cells);
    let screen = demo.screen_at(90);
    assert!(
        screen.contains("# the hub's record of 3 member(s) (its binding's aggregatedStatus):"),
        "{screen}"
    );
    let healthy = |name: &str| {
        let cell = cells
            .iter()
            .find(|c| demo.console.state.clusters[c.cluster as usize].spec.name == name)
            .copied()
            .expect("a followed member");
        let object = object_view::live_object(&demo.core, cell, 0)
            .object
            .expect("held");
        flotilla::engine::health::assess(&object).map(|h| h.kind)
            == Some(flotilla::model::HealthKind::Healthy)
    };
    let word = |healthy: bool| if healthy { "Healthy" } else { "Unhealthy" };
    assert!(
        screen.contains(&format!(
            "  {first}: applied, {} · as flotilla read it",
            word(healthy(&first))
        )),
        "{screen}"
    );
    assert!(
        screen.contains(&format!(
            "  {second}: applied, {} · differs from flotilla's read (health, status):",
            word(!healthy(&second))
        )),
        "{screen}"
    );
    assert!(
        screen.contains(&format!(
            "    health: the hub {} · flotilla {}",
            word(!healthy(&second)),
            word(healthy(&second))
        )),
        "{screen}"
    );
    assert!(
        screen.contains("    status.readyReplicas: the hub "),
        "{screen}"
    );
    assert!(
        screen.contains("  far-away: not applied (no such cluster in the fleet), no health · not read by flotilla"),
        "{screen}"
    );
    // Side by side, one line.
    let wide = demo.screen_at(200);
    assert!(
        wide.contains(&format!(
            "# the hub's record per member: {first} as read · {second} differs (health, status) · far-away not read"
        )),
        "{wide}"
    );
}

#[test]
fn the_clusters_view_with_the_hubs_record_at_90x40() {
    let (mut demo, cells) = inventory_clusters_view();
    hub_record(&mut demo, &cells);
    insta::assert_snapshot!(demo.draw(90, 40).backend());
}
