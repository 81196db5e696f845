//! Workload health on real members, where kube-controller-manager, kube-scheduler and KWOK's
//! fake Node roll Deployments out for real: a Deployment `flotilla apply` places on every
//! member turns Progressing, then Healthy, in the console's model (its live backend driven
//! headless), in `flotilla status -o json` and by kubectl's `availableReplicas`. Overrides
//! then roll one member onto a new image with more replicas than its Node's CPUs hold: that
//! member's cell alone
//! turns Degraded with the progress deadline and how many replicas are available, the others
//! stay Healthy, and the three views agree again.

mod harness;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use flotilla::app;
use flotilla::app::state::State;
use flotilla::backend::kube::live;
use flotilla::messages::BackendEvent;
use flotilla::model::HealthKind;
use serde_json::Value;
use tokio::sync::mpsc;

use harness::{
    FleetDir, TestNamespace, apply_fleet, env, flotilla, json, output_text, prod_inventory,
};

/// Replicas everywhere before the override, and on the overloaded member after it. Each
/// replica asks for one CPU; a member's KWOK Node holds four.
const REPLICAS: u32 = 2;
const OVERLOADED_REPLICAS: u32 = 6;
const NODE_CPUS: u32 = 4;
/// Long enough for each state to be seen, short enough for the test to be quick.
const PROGRESS_DEADLINE_SECONDS: u32 = 15;
const MIN_READY_SECONDS: u32 = 5;
/// A rollout on a busy 2-core machine, plus the progress deadline, fits well inside this.
const DEADLINE: Duration = Duration::from_secs(240);

fn fleet(ns: &str, members: &[String]) -> FleetDir {
    let mut text = prod_inventory(members);
    // `minReadySeconds` holds every new pod unavailable for a while, so Progressing lasts long
    // enough to be seen however the watch batches its events.
    text.push_str(&format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {ns}}}
spec:
  replicas: {REPLICAS}
  minReadySeconds: {MIN_READY_SECONDS}
  progressDeadlineSeconds: {PROGRESS_DEADLINE_SECONDS}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources: {{requests: {{cpu: "1"}}}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: everything, namespace: {ns}}}
spec:
  resourceSelectors:
  - {{apiVersion: apps/v1, kind: Deployment, name: web}}
  placement:
    clusterAffinity: {{labelSelector: {{matchLabels: {{env: prod}}}}}}
"#
    ));
    FleetDir::new().fleet(text)
}

/// (health, reason) per member, as the console's model holds them for the Deployment row.
type Healths = BTreeMap<String, (HealthKind, String)>;

/// The console's live backend on the fleet as the directory now holds it, driven headless
/// through the real `update`.
struct Console {
    state: State,
    events: mpsc::UnboundedReceiver<BackendEvent>,
    row: usize,
    columns: Vec<(String, usize)>,
    _effects: mpsc::UnboundedSender<flotilla::messages::Effect>,
}

impl Console {
    /// Starts it; must run inside the tokio runtime.
    fn start(dir: &Path, members: &[String]) -> Self {
        let live_fleet = harness::live_fleet(dir, &[]);
        let fleet = live_fleet.fleet.clone();
        let row = fleet
            .resources
            .iter()
            .position(|r| r.target.kind == "Deployment")
            .expect("the Deployment row");
        let columns = members
            .iter()
            .map(|m| (m.clone(), fleet.cluster_index(m).expect("a member column")))
            .collect();
        let (events_tx, events) = mpsc::unbounded_channel();
        let effects = live::spawn(live_fleet, events_tx);
        Self {
            state: app::state_for_fleet(&fleet, "test".into()),
            events,
            row,
            columns,
            _effects: effects,
        }
    }

    /// Feeds backend events into the state until `done` holds for the Deployment's healths;
    /// every (member, health) seen on the way is handed to `seen`.
    async fn until(
        &mut self,
        what: &str,
        mut seen: impl FnMut(&Healths),
        done: impl Fn(&Healths) -> bool,
    ) -> Healths {
        let (row, columns) = (self.row, &self.columns);
        let mut last = Healths::new();
        let held = harness::run_within(&mut self.state, &mut self.events, DEADLINE, what, |s| {
            let healths = healths(s, row, columns);
            seen(&healths);
            let held = done(&healths);
            last = healths;
            held
        })
        .await;
        assert!(
            held,
            "timed out waiting for {what}; the console holds {last:?}"
        );
        last
    }
}

/// The Deployment's (row `row`) health per member, as the console's model holds it.
fn healths(state: &State, row: usize, columns: &[(String, usize)]) -> Healths {
    columns
        .iter()
        .filter_map(|(member, column)| {
            let health = state.cells.health(row, *column)?;
            Some((member.clone(), (health.kind, health.reason.clone())))
        })
        .collect()
}

/// The Deployment's cell per member in `flotilla status -o json`: (health, reason).
fn status_cells(dir: &Path) -> (BTreeMap<String, (String, String)>, String) {
    let out = flotilla(dir, &["status", "-o", "json"]);
    let text = output_text(&out);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "status answers 0 (all healthy) or 1: {text}"
    );
    let parsed: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("status printed no JSON ({e}): {text}"));
    let cells = parsed["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["resource"]["kind"] == "Deployment")
        .map(|item| {
            let field = |key: &str| item[key].as_str().unwrap_or_default().to_string();
            (field("cluster"), (field("health"), field("reason")))
        })
        .collect();
    (cells, text)
}

/// Polls `status -o json` until `done` holds for its Deployment cells.
fn status_until(
    dir: &Path,
    what: &str,
    done: impl Fn(&BTreeMap<String, (String, String)>) -> bool,
) -> BTreeMap<String, (String, String)> {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let (cells, text) = status_cells(dir);
        if done(&cells) {
            return cells;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; status said {text}"
        );
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// kubectl's view of the Deployment on `member`: its status.
fn kubectl_status(member: &str, ns: &str) -> Value {
    json(member, &["get", "deployment", "web", "-n", ns])["status"].clone()
}

fn available(status: &Value) -> u64 {
    status["availableReplicas"].as_u64().unwrap_or(0)
}

fn progressing_reason(status: &Value) -> String {
    status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Progressing")
        .and_then(|c| c["reason"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn a_deployment_rolls_out_healthy_everywhere_and_only_the_overloaded_member_turns_degraded() {
    let members: Vec<String> = env().members.iter().take(3).cloned().collect();
    assert!(members.len() >= 2, "the test environment needs 2 members");
    let ns = TestNamespace::on("health", &members);
    let dir = fleet(&ns.name, &members);
    let healthy = format!("{REPLICAS}/{REPLICAS} available");

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let mut console = Console::start(dir.path(), &members);
        apply_fleet(dir.path());

        let mut progressed: BTreeMap<String, String> = BTreeMap::new();
        console
            .until(
                "the Deployment Healthy on every member, after Progressing",
                |healths| {
                    for (member, (kind, reason)) in healths {
                        if *kind == HealthKind::Progressing {
                            progressed.insert(member.clone(), reason.clone());
                        }
                    }
                },
                |healths| {
                    members
                        .iter()
                        .all(|m| healths.get(m) == Some(&(HealthKind::Healthy, healthy.clone())))
                },
            )
            .await;
        assert_eq!(
            progressed.keys().collect::<Vec<_>>(),
            members.iter().collect::<Vec<_>>(),
            "every member's cell was Progressing before it turned Healthy: {progressed:?}"
        );
    });

    status_until(dir.path(), "every member Healthy in status", |cells| {
        members
            .iter()
            .all(|m| cells.get(m).is_some_and(|(health, _)| health == "Healthy"))
    });
    for member in &members {
        let status = kubectl_status(member, &ns.name);
        assert_eq!(
            available(&status),
            u64::from(REPLICAS),
            "{member}: {status}"
        );
    }

    // One member rolls out a new image with more replicas than its Node's CPUs hold. (A bare
    // scale would not do: the controller keeps a complete rollout's Progressing condition, so
    // the deadline never passes and the Deployment stays Progressing, below availability.)
    let overloaded = members[1].clone();
    let deployment = format!("Deployment/{}/web", ns.name);
    let replicas = OVERLOADED_REPLICAS.to_string();
    for rule in [["--replicas", replicas.as_str()], ["--image-tag", "1.28"]] {
        let mut args = vec!["override", "add", &deployment, "--cluster", &overloaded];
        args.extend(rule);
        let added = flotilla(dir.path(), &args);
        assert_eq!(added.status.code(), Some(0), "{}", output_text(&added));
    }
    apply_fleet(dir.path());

    let fits = format!("{NODE_CPUS}/{OVERLOADED_REPLICAS} available");
    let degraded = |kind: &HealthKind, reason: &str| {
        *kind == HealthKind::Degraded
            && reason.contains("progress deadline exceeded")
            && reason.contains(&fits)
    };
    runtime.block_on(async {
        let mut console = Console::start(dir.path(), &members);
        let healths = console
            .until(
                "the overloaded member Degraded, the others Healthy",
                |_| {},
                |healths| {
                    members.iter().all(|m| match healths.get(m) {
                        Some((kind, reason)) if *m == overloaded => degraded(kind, reason),
                        Some(health) => *health == (HealthKind::Healthy, healthy.clone()),
                        None => false,
                    })
                },
            )
            .await;
        assert_eq!(
            console.state.cells.health_count(HealthKind::Degraded),
            1,
            "{healths:?}"
        );
    });

    let cells = status_until(
        dir.path(),
        "the overloaded member Degraded in status",
        |cells| {
            cells
                .get(&overloaded)
                .is_some_and(|(health, _)| health == "Degraded")
        },
    );
    for member in &members {
        // status gives the reason of what is not healthy.
        let (health, reason) = &cells[member];
        let status = kubectl_status(member, &ns.name);
        if *member == overloaded {
            assert!(
                degraded(&HealthKind::Degraded, reason) && health == "Degraded",
                "{member} in status: {cells:?}"
            );
            assert_eq!(
                available(&status),
                u64::from(NODE_CPUS),
                "{member}: {status}"
            );
            let spec = json(member, &["get", "deployment", "web", "-n", &ns.name])["spec"].clone();
            assert_eq!(
                spec["replicas"].as_u64(),
                Some(u64::from(OVERLOADED_REPLICAS)),
                "{member}: the override reached it: {spec}"
            );
            assert!(
                status["unavailableReplicas"].as_u64() > Some(0),
                "{member}: {status}"
            );
            assert_eq!(
                progressing_reason(&status),
                "ProgressDeadlineExceeded",
                "{member}: {status}"
            );
        } else {
            assert_eq!(health, "Healthy", "{member} in status: {cells:?}");
            assert_eq!(
                available(&status),
                u64::from(REPLICAS),
                "{member}: {status}"
            );
        }
    }
}
