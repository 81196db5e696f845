//! The console's fleet-wide pods query on the demo, through the console's own key mapping and
//! the real `update` (the shared `harness::console` harness), answered as the demo's backend
//! answers it: `:pods crashloopbackoff` asks every placed workload cell for its pods, narrows
//! the matrix to the rows and clusters with a pod in that trouble, says so in the header, and
//! the selected cell's Detail names its pods; `:pods none` and esc bring every row back. The
//! demo's backend task itself answers the same query.

mod harness;

use std::time::Duration;

use flotilla::app::action::Action;
use flotilla::backend::sim::{self, Scenario, SimCore, object_view};
use flotilla::config::keymap::Keymap;
use flotilla::config::theme::Theme;
use flotilla::messages::{BackendEvent, CellRef, Effect};
use flotilla::views::{self, ViewContext};
use harness::console::Console;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// The demo console and the simulated fleet that answers it.
fn demo() -> (Console, SimCore) {
    let mut console = Console::demo();
    let mut scenario = Scenario::demo();
    scenario.drift_every_seconds = 0;
    let core = SimCore::new(console.state.fleet.clone(), &scenario, 7);
    console.act(Action::Backend(core.snapshot()));
    for cluster in 0..core.cluster_count() {
        console.act(Action::Backend(BackendEvent::Cluster {
            cluster: cluster as u32,
            status: core.cluster_status(cluster),
        }));
    }
    (console, core)
}

/// Presses keys and answers every pods query they send, as the demo's backend does.
fn keys(console: &mut Console, core: &SimCore, sequence: &str) -> Vec<CellRef> {
    let mut asked = Vec::new();
    for effect in console.keys(sequence) {
        if let Effect::ReadPods { cells } = effect {
            let answers = cells
                .iter()
                .map(|&cell| (cell, object_view::cell_pods(core, cell)))
                .collect();
            console.act(Action::Backend(BackendEvent::Pods(answers)));
            asked.extend(cells);
        }
    }
    asked
}

fn screen(console: &Console) -> String {
    let theme = Theme::load(None, true);
    let keymap = Keymap::built_in("default");
    let context = ViewContext {
        theme: &theme,
        keymap: &keymap,
        ascii: false,
    };
    let mut terminal = Terminal::new(TestBackend::new(200, 50)).expect("test terminal");
    terminal
        .draw(|frame| views::render(frame, &console.state, &context))
        .expect("draw");
    let buffer = terminal.backend().buffer();
    buffer
        .content()
        .chunks(200)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

fn visible_resources(console: &Console) -> Vec<String> {
    let state = &console.state;
    state
        .resource_view
        .visible
        .iter()
        .map(|&row| state.resources[row].target.display_key())
        .collect()
}

fn visible_clusters(console: &Console) -> Vec<String> {
    let state = &console.state;
    state
        .cluster_view
        .visible
        .iter()
        .map(|&column| state.clusters[column].spec.name.clone())
        .collect()
}

#[test]
fn pods_in_a_trouble_narrow_the_matrix_and_the_detail_names_them() {
    let (mut console, core) = demo();
    let (all_resources, all_clusters) = (visible_resources(&console), visible_clusters(&console));

    let asked = keys(&mut console, &core, ":pods crashloopbackoff<enter>");
    // Every placed workload cell on a reachable cluster is asked, and nothing else.
    let state = &console.state;
    assert!(!asked.is_empty());
    for cell in &asked {
        let row = &state.resources[cell.resource as usize];
        assert!(
            [
                "Deployment",
                "StatefulSet",
                "DaemonSet",
                "Job",
                "ReplicaSet"
            ]
            .contains(&row.target.kind.as_str()),
            "{} is no workload",
            row.target.display_key()
        );
    }
    let ledger = state
        .resources
        .iter()
        .position(|r| r.target.display_key() == "Deployment/payments/ledger")
        .expect("the ledger");
    let west2 = console.cluster("prod-eu-west-2");
    assert!(asked.contains(&CellRef {
        resource: ledger as u32,
        cluster: west2 as u32
    }));

    assert_eq!(visible_resources(&console), ["Deployment/payments/ledger"]);
    assert_eq!(visible_clusters(&console), ["prod-eu-west-2"]);
    let shown = screen(&console);
    assert!(shown.contains("pods: CrashLoopBackOff"), "{shown}");

    console.select("Deployment/payments/ledger");
    console.select_cluster("prod-eu-west-2");
    let shown = screen(&console);
    assert!(
        shown.contains("1/2 ready, 1 CrashLoopBackOff: exit 1"),
        "the Detail names the cell's pods: {shown}"
    );

    // Any trouble keeps the OOMKilled inventory and the Pending trainer too.
    keys(&mut console, &core, ":pods<enter>");
    let troubled = visible_resources(&console);
    for resource in [
        "Deployment/payments/ledger",
        "Deployment/shop/inventory",
        "Job/ml/trainer",
    ] {
        assert!(troubled.iter().any(|r| r == resource), "{troubled:?}");
    }
    assert!(troubled.len() < all_resources.len(), "{troubled:?}");

    keys(&mut console, &core, ":pods none<enter>");
    assert_eq!(visible_resources(&console).len(), all_resources.len());
    assert_eq!(visible_clusters(&console), all_clusters);

    keys(&mut console, &core, ":pods oomkilled<enter>");
    assert_eq!(visible_resources(&console), ["Deployment/shop/inventory"]);
    keys(&mut console, &core, "<esc>");
    assert_eq!(visible_resources(&console).len(), all_resources.len());
}

#[test]
fn an_unknown_pod_trouble_is_refused_with_the_ones_there_are() {
    let (mut console, core) = demo();
    let asked = keys(&mut console, &core, ":pods crashing<enter>");
    assert!(asked.is_empty());
    let shown = screen(&console);
    assert!(shown.contains("unknown pod trouble"), "{shown}");
    assert!(shown.contains("CrashLoopBackOff"), "{shown}");
}

#[tokio::test]
async fn the_demo_backend_answers_a_pods_query_with_each_cells_pods() {
    let (console, _) = demo();
    let fleet = console.state.fleet.clone();
    let ledger = fleet
        .resources
        .iter()
        .position(|r| r.target.display_key() == "Deployment/payments/ledger")
        .expect("the ledger") as u32;
    let west2 = console.cluster("prod-eu-west-2") as u32;
    let core = SimCore::new(fleet, &Scenario::demo(), 7);
    let (events, mut console_events) = tokio::sync::mpsc::unbounded_channel();
    let effects = sim::spawn(core, events);
    let cell = CellRef {
        resource: ledger,
        cluster: west2,
    };
    effects
        .send(Effect::ReadPods { cells: vec![cell] })
        .expect("the backend takes effects");
    let answer = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(event) = console_events.recv().await {
            if let BackendEvent::Pods(answers) = event {
                return answers;
            }
        }
        Vec::new()
    })
    .await
    .expect("the backend answers");
    assert_eq!(answer.len(), 1);
    assert_eq!(answer[0].0, cell);
    assert_eq!(answer[0].1.summary, "1/2 ready, 1 CrashLoopBackOff: exit 1");
}

/// `:images` keeps the workloads running other images than the fleet renders, and says so for
/// exactly the cells `flotilla images` calls skewed: one rule, two surfaces.
#[test]
fn images_not_as_desired_are_the_cells_flotilla_images_calls_skewed() {
    let (mut console, core) = demo();
    keys(&mut console, &core, ":images<enter>");
    let state = &console.state;
    let mut skewed_here: Vec<(String, String)> = Vec::new();
    for (resource, row) in state.resources.iter().enumerate() {
        for (cluster, column) in state.clusters.iter().enumerate() {
            let cell = CellRef {
                resource: resource as u32,
                cluster: cluster as u32,
            };
            if state
                .pods
                .of(cell)
                .is_some_and(|pods| !pods.skew.is_empty())
            {
                skewed_here.push((column.spec.name.clone(), row.target.display_key()));
            }
        }
    }
    skewed_here.sort();

    let dir = tempfile::tempdir().expect("temp dir");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["images", "--demo", "-o", "json"])
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .output()
        .expect("run flotilla");
    // One demo store is unreachable: some clusters failed, which outranks a skew.
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let listed: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let mut skewed_there: Vec<(String, String)> = listed["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|item| item["skew"] == true)
        .map(|item| {
            let resource = &item["resource"];
            (
                item["cluster"].as_str().unwrap_or("").to_string(),
                format!(
                    "{}/{}/{}",
                    resource["kind"].as_str().unwrap_or(""),
                    resource["namespace"].as_str().unwrap_or(""),
                    resource["name"].as_str().unwrap_or("")
                ),
            )
        })
        .collect();
    skewed_there.sort();
    skewed_there.dedup();
    assert!(!skewed_here.is_empty());
    assert_eq!(skewed_here, skewed_there);

    assert_eq!(visible_resources(&console), ["Deployment/shop/checkout"]);
    let clusters = visible_clusters(&console);
    assert_eq!(clusters.len(), 2, "{clusters:?}");
    let cluster = clusters[0].clone();
    console.select("Deployment/shop/checkout");
    console.select_cluster(&cluster);
    let shown = screen(&console);
    assert!(shown.contains("images: not as desired"), "{shown}");
    assert!(
        shown.contains(":2.3.0"),
        "the old tag in the Detail: {shown}"
    );
    assert!(shown.contains("(desired "), "{shown}");
}
