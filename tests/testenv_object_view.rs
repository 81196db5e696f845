//! The object view of a cell on real member API servers: a Deployment applied by `flotilla
//! apply` that asks for more CPU than a member's Node holds, an Event kubectl creates for it
//! and the stalled status the members' controllers write,
//! seen by the console's live backend (driven headless through the real `update`, its effects
//! sent to the backend) in the live, diff and events views; a `kubectl scale` shows in the
//! diff; and `flotilla status --resource … -o json` carries the Event and the live object with
//! a Secret's values masked. A read-only console reads the same live object and diff, and
//! the writes sent down its channel never reach the member. kubectl checks the end states.

mod harness;

use std::path::Path;

use flotilla::app::state::State;
use flotilla::app::{self, Action};
use flotilla::backend::kube::live;
use flotilla::config::keymap::Keymap;
use flotilla::config::theme::Theme;
use flotilla::messages::{BackendEvent, CellRef, Effect};
use flotilla::model::StatusKind;
use tokio::sync::mpsc;

use harness::{
    FleetDir, TestNamespace, apply_fleet, env, flotilla, jsonpath, kubectl_ok, kubectl_stdin,
    output_text, prod_inventory,
};

/// The fleet (a Deployment too big for one Node, and a Secret, on `members`), applied.
fn applied_fleet(ns: &str, members: &[String]) -> FleetDir {
    let mut text = prod_inventory(members);
    text.push_str(&format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {ns}}}
spec:
  replicas: 2
  progressDeadlineSeconds: 5
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources: {{requests: {{cpu: "3"}}}}
---
apiVersion: v1
kind: Secret
metadata: {{name: db, namespace: {ns}}}
stringData: {{password: hunter2}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: everything, namespace: {ns}}}
spec:
  resourceSelectors:
  - {{apiVersion: apps/v1, kind: Deployment, name: web}}
  - {{apiVersion: v1, kind: Secret, name: db}}
  placement:
    clusterAffinity: {{labelSelector: {{matchLabels: {{env: prod}}}}}}
"#
    ));
    let fleet = FleetDir::new().fleet(text);
    apply_fleet(fleet.path());
    fleet
}

/// The live fleet of the fleet directory `dir` (with `flags` besides `--kubeconfig` and
/// `--fleet`) and the cell of its Deployment on `member`.
fn deployment_cell(dir: &Path, member: &str, flags: &[&str]) -> (live::LiveFleet, CellRef) {
    let live_fleet = harness::live_fleet(dir, flags);
    let row = live_fleet
        .fleet
        .resources
        .iter()
        .position(|r| r.target.kind == "Deployment")
        .expect("the Deployment row");
    let column = live_fleet
        .fleet
        .cluster_index(member)
        .expect("the member's column");
    let cell = CellRef {
        resource: row as u32,
        cluster: column as u32,
    };
    (live_fleet, cell)
}

/// Opens the object view on `cell`: the matrix, the cell, enter.
fn open_cell(state: &mut State, effects: &mpsc::UnboundedSender<Effect>, cell: CellRef) {
    press(state, effects, "<tab>");
    harness::console::put_cursor_on(state, cell.resource as usize);
    harness::console::put_cluster_cursor_on(state, cell.cluster as usize);
    press(state, effects, "<enter>");
}

/// Keys through the console's key mapping into the real `update`; their effects go to the
/// backend, as the session sends them.
fn press(state: &mut State, effects: &mpsc::UnboundedSender<Effect>, keys: &str) {
    for effect in harness::console::press(state, keys) {
        effects.send(effect).expect("the backend takes effects");
    }
}

fn screen(state: &State) -> String {
    let theme = Theme::load(None, true);
    let keymap = Keymap::built_in("default");
    let context = flotilla::views::ViewContext {
        theme: &theme,
        keymap: &keymap,
        ascii: false,
    };
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(160, 50)).expect("terminal");
    terminal
        .draw(|frame| flotilla::views::render(frame, state, &context))
        .expect("draw");
    let buffer = terminal.backend().buffer();
    let cells: Vec<&str> = buffer.content().iter().map(|c| c.symbol()).collect();
    cells
        .chunks(usize::from(buffer.area.width))
        .map(|row| row.concat())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn the_live_view_shows_live_status_the_diff_after_a_scale_and_the_clusters_events() {
    let members: Vec<String> = env().members.iter().take(2).cloned().collect();
    let ns = TestNamespace::on("object-view", &members);
    let dir = applied_fleet(&ns.name, &members);
    let member = &members[0];

    // A member's KWOK Node holds four CPUs: one of the two replicas asking for three runs,
    // and the rollout passes its deadline (the controllers write that status). kubectl adds a
    // Warning Event about it.
    let now = k8s_openapi::jiff::Timestamp::now().to_string();
    let event = format!(
        r#"apiVersion: v1
kind: Event
metadata: {{name: web.deadline, namespace: {ns}}}
involvedObject: {{apiVersion: apps/v1, kind: Deployment, name: web, namespace: {ns}}}
type: Warning
reason: ProgressDeadlineExceeded
message: Deployment "web" has timed out progressing on the testenv.
count: 2
firstTimestamp: "{now}"
lastTimestamp: "{now}"
source: {{component: deployment-controller}}
"#,
        ns = ns.name
    );
    let created = kubectl_stdin(member, &["create", "-f", "-"], &event);
    assert!(created.status.success(), "{}", output_text(&created));

    let (live_fleet, cell) = deployment_cell(dir.path(), member, &[]);
    let fleet = live_fleet.fleet.clone();
    let (row, column) = (cell.resource as usize, cell.cluster as usize);

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let shown = runtime.block_on(async {
        let (events_tx, mut events) = mpsc::unbounded_channel();
        let effects = live::spawn(live_fleet, events_tx);
        let mut state = app::state_for_fleet(&fleet, "test".into());
        harness::run_until(&mut state, &mut events, "the Deployment in sync", |s| {
            s.cells.kind(row, column) == StatusKind::InSync
        })
        .await;
        open_cell(&mut state, &effects, cell);
        harness::run_until(
            &mut state,
            &mut events,
            "the live object and its Event",
            |s| {
                s.live.reads.get(&cell).is_some_and(|read| {
                    read.yaml.contains("availableReplicas: 1")
                        && read.yaml.contains("reason: ProgressDeadlineExceeded")
                        && read
                            .live
                            .events
                            .iter()
                            .any(|e| e.message.contains("on the testenv"))
                })
            },
        )
        .await;
        press(&mut state, &effects, "<tab>");
        let live = screen(&state);
        assert!(live.contains("availableReplicas: 1"), "{live}");
        assert!(live.contains("health Degraded"), "{live}");
        assert!(!live.contains("managedFields"), "{live}");

        kubectl_ok(
            member,
            &["scale", "deployment", "web", "-n", &ns.name, "--replicas=5"],
        );
        harness::run_until(&mut state, &mut events, "the scale in the diff", |s| {
            s.live
                .reads
                .get(&cell)
                .is_some_and(|read| read.live.diff.contains("-  replicas: 5"))
        })
        .await;
        press(&mut state, &effects, "<tab>");
        let diff = screen(&state);
        assert!(diff.contains("-  replicas: 5"), "{diff}");
        assert!(diff.contains("+  replicas: 2"), "{diff}");

        press(&mut state, &effects, "<tab>");
        let shown = screen(&state);
        assert!(shown.contains("ProgressDeadlineExceeded"), "{shown}");
        assert!(
            shown.contains("Deployment \"web\" has timed out progressing on the testenv."),
            "{shown}"
        );
        assert!(shown.contains("×2"), "{shown}");
        assert!(shown.contains("# chain:"), "{shown}");

        let closed = harness::console::press(&mut state, "<esc>");
        assert_eq!(closed, vec![Effect::CloseObjectView]);
        shown
    });
    assert_eq!(
        jsonpath(member, "deployment/web", &ns.name, "{.spec.replicas}"),
        "5"
    );

    let status = |resource: &str| {
        let out = flotilla(
            dir.path(),
            &[
                "status",
                "--resource",
                resource,
                "--cluster",
                member,
                "-o",
                "json",
            ],
        );
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let value: serde_json::Value = serde_json::from_str(&text).expect("status JSON");
        (text, value)
    };
    let (text, value) = status(&format!("Deployment/{}/web", ns.name));
    let item = &value["items"][0];
    assert_eq!(item["live"]["spec"]["replicas"], 5, "{text}");
    assert!(
        item["events"]
            .as_array()
            .is_some_and(|events| events.iter().any(|e| {
                e["reason"] == "ProgressDeadlineExceeded"
                    && e["count"] == 2
                    && e["type"] == "Warning"
            })),
        "{text}"
    );
    // The chain, as the console's object view drew it above: the template and its policy at
    // their file and line, then the object on the member with its state, then its Events.
    let chain = item["chain"]
        .as_array()
        .expect("status --resource has a chain");
    let steps: Vec<&str> = chain.iter().filter_map(|l| l["step"].as_str()).collect();
    assert_eq!(steps.first(), Some(&"template"), "{text}");
    assert_eq!(steps.get(1), Some(&"policy"), "{text}");
    assert!(
        steps.contains(&"object") && steps.last() == Some(&"events"),
        "{text}"
    );
    for link in &chain[..2] {
        let at = link["at"]
            .as_str()
            .expect("a fleet link says where it is written");
        assert!(at.contains(".yaml:"), "{at}");
        let name = link["name"].as_str().unwrap_or_default();
        assert!(shown.contains(name), "the console names {name}: {shown}");
    }
    let object = chain
        .iter()
        .find(|l| l["step"] == "object")
        .expect("object");
    assert!(
        object["status"] == item["sync"] || object["status"] == item["health"],
        "the object's state is its cell's, the worse of sync and health: {text}"
    );
    let (text, value) = status(&format!("Secret/{}/db", ns.name));
    assert_eq!(
        value["items"][0]["live"]["data"]["password"], "***",
        "{text}"
    );
    assert!(
        !text.contains("hunter2") && !text.contains("aHVudGVyMg=="),
        "{text}"
    );
    // The Secret on the cluster still holds its value: masking is only in what is shown.
    assert_eq!(
        jsonpath(member, "secret/db", &ns.name, "{.data.password}"),
        "aHVudGVyMg=="
    );
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn a_read_only_console_shows_the_live_object_and_its_channel_lets_no_write_through() {
    let members: Vec<String> = env().members.iter().take(1).cloned().collect();
    let ns = TestNamespace::on("object-view-ro", &members);
    let dir = applied_fleet(&ns.name, &members);
    let member = &members[0];
    kubectl_ok(
        member,
        &["scale", "deployment", "web", "-n", &ns.name, "--replicas=5"],
    );

    let (live_fleet, cell) = deployment_cell(dir.path(), member, &["--readonly"]);
    let fleet = live_fleet.fleet.clone();
    let (row, column) = (cell.resource as usize, cell.cluster as usize);

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let (events_tx, mut events) = mpsc::unbounded_channel();
        let reads = live::spawn_readonly(live_fleet, events_tx);
        let mut state = app::state_for_fleet(&fleet, "test".into());
        state.readonly = true;
        harness::run_until(
            &mut state,
            &mut events,
            "the scaled Deployment drifted",
            |s| s.cells.kind(row, column) == StatusKind::Drifted,
        )
        .await;
        open_cell(&mut state, &reads, cell);
        harness::run_until(
            &mut state,
            &mut events,
            "the live object and its diff",
            |s| {
                s.live.reads.get(&cell).is_some_and(|read| {
                    read.yaml.contains("replicas: 5") && read.live.diff.contains("-  replicas: 5")
                })
            },
        )
        .await;
        press(&mut state, &reads, "<tab>");
        press(&mut state, &reads, "<tab>");
        let diff = screen(&state);
        assert!(diff.contains("-  replicas: 5"), "{diff}");
        assert!(diff.contains("+  replicas: 2"), "{diff}");

        // Writes sent down a read-only console's channel are refused; the object view goes on
        // reading the member, which keeps its five replicas.
        for write in [
            Effect::Apply { cells: vec![cell] },
            Effect::Delete { cells: vec![cell] },
        ] {
            reads.send(write).expect("the channel takes it");
        }
        let mut answers = 0;
        let deadline = tokio::time::Instant::now() + harness::wait_limit();
        while answers < 3 {
            match tokio::time::timeout_at(deadline, events.recv()).await {
                Ok(Some(event)) => {
                    if matches!(&event, BackendEvent::LiveObject { cell: c, .. } if *c == cell) {
                        answers += 1;
                    }
                    app::update(&mut state, Action::Backend(event));
                }
                Ok(None) => panic!("the backend stopped"),
                Err(_) => panic!("timed out waiting for the object view's refreshes"),
            }
        }
        let read = &state.live.reads[&cell];
        assert!(read.yaml.contains("replicas: 5"), "{}", read.yaml);
    });
    assert_eq!(
        jsonpath(member, "deployment/web", &ns.name, "{.spec.replicas}"),
        "5",
        "kubectl: nothing was applied"
    );
    assert!(
        !jsonpath(member, "deployment/web", &ns.name, "{.metadata.name}").is_empty(),
        "kubectl: nothing was deleted"
    );
}
