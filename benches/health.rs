//! Health through Lua rules, in two tables.
//!
//! First, the engine alone: 100,000 distinct live objects of a custom kind (a certificate with
//! conditions, as operators' rules read them) assessed once each through an Argo CD-style
//! rule, each call a fresh sandboxed Lua state, then the same objects again from the cache
//! kept per object version, and the built-in Deployment health beside them for scale; the
//! time per object.
//!
//! Second, the console while cells are re-assessed through rules, on the path health takes in
//! the product: the rule is installed from a `--health-rules` directory as `flotilla` installs
//! it, the fleet directory carries a `ResourceInterpreterCustomization` whose `InterpretHealth`
//! judges a custom Widget, and the console is started on that directory and a kubeconfig as
//! `flotilla --fleet DIR console` starts it (`launch::console`, the live backend, the real
//! loop `Console::drive` in a 250×80 test terminal). Its clusters' API servers are served in
//! this process (`support/apiserver.rs`), so the backend's own kube-rs clients probe, discover,
//! list and watch them. Once every cell has its health, keys are sent one at a time; then the
//! servers change 2,000 objects a second (Certificates' Ready condition and message, Widgets'
//! `status.ready`), each a new object version that the backend's cluster tasks hear on their
//! watches and assess again through the rule (off the async workers, as they always do), the
//! changed health reaching the loop as backend events, while keys are still sent. Prints key →
//! frame p50/p99 idle and under the changes, health event → frame (from the event reaching
//! the loop) and change → frame (from the server's write), and how many re-assessed healths a
//! second reached the console, per rule family.
//!
//! Run: `cargo bench --bench health` (`cargo test` runs both small, to check they run).

use std::collections::HashMap;
use std::hint::black_box;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::KeyCode;
use flotilla::cli::Cli;
use flotilla::console::FrameDrawn;
use flotilla::engine::Decision;
use flotilla::engine::health::Rules;
use flotilla::engine::health::rules::Layer;
use flotilla::messages::BackendEvent;
use flotilla::model::{HealthKind, StatusKind};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};
use tokio::sync::mpsc;

#[path = "support/apiserver.rs"]
mod apiserver;
#[path = "support/frames.rs"]
mod frames;
#[path = "support/mode.rs"]
mod mode;

use apiserver::ApiServers;
use frames::{key, ms, percentiles, press_keys, to_frames, wait_frame};

/// A rule in the shape Argo CD's community rules take: walk the conditions, say why.
const RULE: &str = r#"
local hs = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  for i, condition in ipairs(obj.status.conditions) do
    if condition.type == "Ready" and condition.status == "False" then
      hs.status = "Degraded"
      hs.message = condition.message
      return hs
    end
    if condition.type == "Ready" and condition.status == "True" then
      hs.status = "Healthy"
      hs.message = condition.message
      return hs
    end
  end
end
hs.status = "Progressing"
hs.message = "Waiting for certificate"
return hs
"#;

fn certificate(index: usize) -> Value {
    let ready = if index.is_multiple_of(10) {
        "False"
    } else {
        "True"
    };
    json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {
            "name": format!("cert-{index}"),
            "namespace": "shop",
            "uid": format!("uid-{index}"),
            "resourceVersion": "1",
            "labels": {"app": "shop", "tier": "edge"},
        },
        "spec": {
            "secretName": format!("cert-{index}-tls"),
            "dnsNames": [format!("shop-{index}.example.com"), "www.example.com"],
            "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"},
        },
        "status": {
            "conditions": [
                {"type": "Issuing", "status": "False", "reason": "Done"},
                {"type": "Ready", "status": ready, "reason": "Ready",
                 "message": "Certificate is up to date and has not expired",
                 "lastTransitionTime": "2026-12-01T10:00:00Z"},
            ],
            "notAfter": "2027-03-01T10:00:00Z",
            "revision": 3,
        },
    })
}

fn deployment(index: usize) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": format!("web-{index}"), "generation": 2},
        "spec": {"replicas": 3},
        "status": {"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 3},
    })
}

fn health_through_rules(c: &mut Criterion) {
    let count = mode::sized(100_000, 1_000);
    let objects: Vec<Value> = (0..count).map(certificate).collect();
    let rules = || {
        let layer = Layer::directory(
            "bench",
            &[(
                "cert-manager.io/Certificate/health.lua".to_string(),
                RULE.to_string(),
            )],
        )
        .expect("the rule loads");
        Rules::with_layers(vec![layer])
    };

    let cold = rules();
    let started = Instant::now();
    let degraded = objects
        .iter()
        .filter(|object| cold.assess(object).map(|h| h.kind) == Some(HealthKind::Degraded))
        .count();
    let first = started.elapsed();
    assert_eq!(degraded, count / 10, "every tenth certificate is not ready");
    let started = Instant::now();
    for object in &objects {
        black_box(cold.assess(object));
    }
    let again = started.elapsed();
    let builtin = Rules::builtin();
    let deployments: Vec<Value> = (0..count).map(deployment).collect();
    let started = Instant::now();
    for object in &deployments {
        black_box(builtin.assess(object));
    }
    let built_in = started.elapsed();
    let per = |elapsed: std::time::Duration| elapsed.as_secs_f64() * 1e6 / count as f64;
    eprintln!(
        "health of {count} objects: through a Lua rule {first:.2?} = {:.1} us per object; \
         again from the cache {again:.2?} = {:.2} us; built-in Deployments {built_in:.2?} = {:.2} us",
        per(first),
        per(again),
        per(built_in),
    );

    let mut group = c.benchmark_group("health");
    group.sample_size(10);
    let mut next = 0;
    let mut fresh = rules();
    group.bench_function("lua_rule_per_object", |b| {
        b.iter(|| {
            next = (next + 1) % count;
            if next == 0 {
                fresh = rules();
            }
            black_box(fresh.assess(black_box(&objects[next])))
        })
    });
    group.bench_function("cached_per_object", |b| {
        b.iter(|| {
            next = (next + 1) % count;
            black_box(cold.assess(black_box(&objects[next])))
        })
    });
    group.finish();
}

/// The console fleets, as (clusters, Certificates and as many Widgets on each); a check runs
/// one small fleet.
fn console_sizes() -> Vec<(usize, usize)> {
    mode::sized(vec![(100, 50)], vec![(3, 4)])
}

/// Objects changed a second on the servers, as batches every `CHANGE_TICK`.
fn changes_per_second() -> usize {
    mode::sized(2_000, 200)
}
const CHANGE_TICK: Duration = Duration::from_millis(10);

/// Keys timed in each phase.
fn keys_per_phase() -> usize {
    mode::sized(150, 5)
}

/// The Widget's Karmada customization: healthy while `status.ready` is true.
const WIDGET_CUSTOMIZATION: &str = r#"apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: widget
spec:
  target:
    apiVersion: example.com/v1
    kind: Widget
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observedObj)
          return observedObj.status ~= nil and observedObj.status.ready == true
        end
"#;

/// Writes the rules directory (`RULE` as `cert-manager.io/Certificate/health.lua`) and the
/// fleet directory: `clusters` Karmada clusters, `per_kind` Certificates and as many Widgets
/// in `shop`, a PropagationPolicy placing them all on every cluster, and the Widget's
/// customization. Returns the clusters' names (their contexts').
fn write_fleet(dir: &Path, clusters: usize, per_kind: usize) -> Vec<String> {
    let rule = dir.join("rules/cert-manager.io/Certificate");
    std::fs::create_dir_all(&rule).expect("rules directory");
    std::fs::write(rule.join("health.lua"), RULE).expect("health.lua");
    let fleet = dir.join("fleet");
    std::fs::create_dir_all(&fleet).expect("fleet directory");
    let names: Vec<String> = (0..clusters).map(|c| format!("c{c:04}")).collect();
    let mut inventory = String::new();
    for name in &names {
        inventory.push_str(&format!(
            "---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {{name: {name}, labels: {{env: prod}}}}\nspec: {{syncMode: Push}}\n"
        ));
    }
    let mut objects = String::from(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: everywhere, namespace: shop}\nspec:\n  resourceSelectors:\n  - {apiVersion: cert-manager.io/v1, kind: Certificate}\n  - {apiVersion: example.com/v1, kind: Widget}\n  placement:\n    clusterAffinity: {labelSelector: {matchLabels: {env: prod}}}\n",
    );
    for i in 0..per_kind {
        objects.push_str(&format!(
            "---\napiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {{name: cert-{i}, namespace: shop}}\nspec: {{secretName: cert-{i}-tls, dnsNames: [shop-{i}.example.com], issuerRef: {{name: letsencrypt, kind: ClusterIssuer}}}}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {{name: dial-{i}, namespace: shop}}\nspec: {{size: 3}}\n"
        ));
    }
    std::fs::write(fleet.join("clusters.yaml"), inventory).expect("inventory");
    std::fs::write(fleet.join("fleet.yaml"), objects).expect("objects");
    std::fs::write(fleet.join("interpreters.yaml"), WIDGET_CUSTOMIZATION).expect("customization");
    names
}

/// Sets a live object's status for its `n`th change: a Certificate Ready or not (every other
/// change) with a message naming the change, a Widget ready or not.
fn set_status(object: &mut Value, n: u64) {
    let good = n.is_multiple_of(2);
    if object["kind"] == "Certificate" {
        object["status"] = json!({"conditions": [
            {"type": "Issuing", "status": "False", "reason": "Done"},
            {"type": "Ready", "status": if good { "True" } else { "False" },
             "reason": if good { "Ready" } else { "Failed" },
             "message": format!("change {n}"),
             "lastTransitionTime": "2026-12-01T10:00:00Z"},
        ]});
    } else {
        object["status"] = json!({"ready": good, "observedGeneration": 1});
    }
}

/// A live object the servers hold for one cell: where, which row, and how often it changed.
struct Slot {
    cluster: usize,
    /// Its place among the cluster's objects.
    place: usize,
    row: u32,
    changes: u64,
}

/// The objects each cluster's servers hold (every placed cell's object as the fleet renders it,
/// with a healthy status), and their slots.
fn live_objects(cli: &Cli) -> (Vec<Vec<Value>>, Vec<Slot>) {
    let loaded = flotilla::source::load(&cli.global).expect("the fleet loads");
    let fleet = loaded.fleet;
    let mut objects = vec![Vec::new(); fleet.clusters.len()];
    let mut slots = Vec::new();
    for (cluster, held) in objects.iter_mut().enumerate() {
        for row in 0..fleet.resources.len() {
            if let Decision::Placed { mut object, .. } = fleet.decide(row, cluster) {
                object["metadata"]["uid"] = json!(format!("uid-{cluster}-{row}"));
                set_status(&mut object, 0);
                slots.push(Slot {
                    cluster,
                    place: held.len(),
                    row: row as u32,
                    changes: 0,
                });
                held.push(object);
            }
        }
    }
    (objects, slots)
}

/// One frame as the loop reported it.
#[derive(Clone, Copy)]
struct Drawn {
    at: Instant,
    drawn: FrameDrawn,
    /// Loaded, and no cell Pending.
    settled: bool,
    /// Cells in sync.
    in_sync: usize,
}

impl frames::Frame for Drawn {
    fn at(&self) -> Instant {
        self.at
    }
    fn drawn(&self) -> FrameDrawn {
        self.drawn
    }
}

/// What reached the loop of the backend's health events.
#[derive(Default)]
struct Heard {
    /// Health updates received, all told.
    updates: usize,
    /// Health events: their index among the loop's events and when they reached it.
    events: Vec<(u64, Instant)>,
    /// Changes written by the servers and whose health reached the loop: the write's time and
    /// the index of the event that carried it.
    changes: Vec<(u64, Instant)>,
    /// Updates decided by an Argo CD rule and by a Karmada interpreter.
    argo: usize,
    karmada: usize,
}

#[derive(Default)]
struct ConsoleRow {
    cells: usize,
    /// Cells in sync once the changes stopped (their objects are as the fleet renders them).
    in_sync: usize,
    settled: Duration,
    written_per_second: f64,
    assessed_per_second: f64,
    key_idle: (Duration, Duration),
    key_changing: (Duration, Duration),
    event_frame: (Duration, Duration),
    change_frame: (Duration, Duration),
    argo: usize,
    karmada: usize,
}

fn console_run(clusters: usize, per_kind: usize) -> ConsoleRow {
    let dir = tempfile::tempdir().expect("temp dir");
    let names = write_fleet(dir.path(), clusters, per_kind);
    let kubeconfig = dir.path().join("kubeconfig");
    let cli = Cli::parse_from([
        "flotilla".as_ref(),
        "--kubeconfig".as_ref(),
        kubeconfig.as_os_str(),
        "--fleet".as_ref(),
        dir.path().join("fleet").as_os_str(),
        "--health-rules".as_ref(),
        dir.path().join("rules").as_os_str(),
        "console".as_ref(),
    ]);
    // As `flotilla` does before any command: the rules are in place before the fleet is read.
    flotilla::source::install_health_rules(&cli.global).expect("the rules load");
    let (objects, mut slots) = live_objects(&cli);
    let cells = slots.len();
    let servers = ApiServers::start(objects);
    std::fs::write(&kubeconfig, servers.kubeconfig(&names)).expect("kubeconfig");

    // When each (row, cluster) cell's object was last written, until its health arrives.
    let written: Arc<Mutex<HashMap<(u32, u32), Instant>>> = Arc::default();
    let heard: Arc<Mutex<Heard>> = Arc::default();
    let frames: Arc<Mutex<Vec<Drawn>>> = Arc::default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (keys, inputs) = futures::channel::mpsc::unbounded();
    let started = Instant::now();
    let (recorder, listener, writes) = (frames.clone(), heard.clone(), written.clone());
    // As `flotilla` runs it: the loop on a thread of its own that blocks on the runtime (the
    // process's main thread), the backend's tasks on the runtime's workers.
    let handle = runtime.handle().clone();
    let looping = std::thread::Builder::new()
        .name("console-loop".into())
        .spawn(move || {
            handle.block_on(async move {
                let Ok(mut console) = flotilla::launch::console(&cli.global, None).await else {
                    panic!("the console did not start on the fleet directory");
                };
                // One channel in front of the loop, so each health event is numbered as the loop
                // receives it.
                let mut from_backend =
                    std::mem::replace(&mut console.events, mpsc::unbounded_channel().1);
                let (to_loop, loop_events) = mpsc::unbounded_channel();
                console.events = loop_events;
                tokio::spawn(async move {
                    let mut index = 0u64;
                    while let Some(event) = from_backend.recv().await {
                        if let BackendEvent::Health(updates) = &event {
                            let now = Instant::now();
                            let mut heard = listener.lock().unwrap_or_else(|e| e.into_inner());
                            let mut writes = writes.lock().unwrap_or_else(|e| e.into_inner());
                            heard.updates += updates.len();
                            heard.events.push((index, now));
                            for update in updates {
                                let cell = (update.cell.resource, update.cell.cluster);
                                if let Some(at) = writes.remove(&cell) {
                                    heard.changes.push((index, at));
                                    let rule =
                                        update.health.as_ref().and_then(|h| h.rule.as_deref());
                                    match rule {
                                        Some(rule) if rule.contains("(argocd rules, ") => {
                                            heard.argo += 1
                                        }
                                        Some(rule) if rule.contains("(karmada interpreter, ") => {
                                            heard.karmada += 1
                                        }
                                        _ => {}
                                    }
                                }
                            }
                        }
                        index += 1;
                        if to_loop.send(event).is_err() {
                            break;
                        }
                    }
                });
                let mut terminal = Terminal::new(TestBackend::new(250, 80)).expect("terminal");
                let _ = console
                    .drive(&mut terminal, inputs, None, |state, drawn| {
                        let loaded = state.loading.is_none() && !state.clusters.is_empty();
                        let totals = state.cells.totals();
                        let settled = loaded && totals.get(StatusKind::Pending) == 0;
                        let in_sync = totals.get(StatusKind::InSync);
                        if let Ok(mut frames) = recorder.lock() {
                            frames.push(Drawn {
                                at: Instant::now(),
                                drawn,
                                settled,
                                in_sync,
                            });
                        }
                    })
                    .await;
            })
        })
        .expect("the console's thread");

    let mut row = ConsoleRow {
        cells,
        ..ConsoleRow::default()
    };
    let deadline = started + Duration::from_secs(300);
    match wait_frame(&frames, deadline, |seen| seen.settled) {
        Some(seen) => row.settled = seen.at - started,
        None => eprintln!("{clusters} clusters: did not settle within 300 s"),
    }
    // Every cell's first health, from the watches' first lists.
    while heard.lock().map_or(0, |h| h.updates) < cells && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_secs(1));
    let mut pressed = 0;
    row.key_idle = percentiles(press_keys(&frames, &keys, &mut pressed, keys_per_phase()));

    if let Ok(mut heard) = heard.lock() {
        *heard = Heard::default();
    }
    let changing = AtomicBool::new(true);
    let (changed_for, written_count) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let per_tick = changes_per_second() * CHANGE_TICK.as_millis() as usize / 1000;
            let began = Instant::now();
            let mut next = began;
            let mut n: u64 = 7;
            let mut count = 0usize;
            while changing.load(Ordering::Relaxed) {
                for _ in 0..per_tick {
                    n = n
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let index = ((n >> 33) % slots.len() as u64) as usize;
                    let slot = &mut slots[index];
                    slot.changes += 1;
                    let (cluster, place, row) = (slot.cluster, slot.place, slot.row);
                    let change = slot.changes;
                    if let Ok(mut written) = written.lock() {
                        written.insert((row, cluster as u32), Instant::now());
                    }
                    servers.modify(cluster, place, |object| set_status(object, change));
                    count += 1;
                }
                next += CHANGE_TICK;
                if let Some(wait) = next.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
            (began.elapsed(), count)
        });
        std::thread::sleep(Duration::from_secs(1));
        row.key_changing = percentiles(press_keys(&frames, &keys, &mut pressed, keys_per_phase()));
        changing.store(false, Ordering::Relaxed);
        writer.join().unwrap_or_default()
    });
    // The last changes' health on its way.
    std::thread::sleep(Duration::from_millis(500));
    let seen = frames.lock().map(|f| f.clone()).unwrap_or_default();
    row.in_sync = seen.last().map_or(0, |last| last.in_sync);
    if let Ok(heard) = heard.lock() {
        row.event_frame = percentiles(to_frames(&seen, &heard.events));
        row.change_frame = percentiles(to_frames(&seen, &heard.changes));
        let seconds = changed_for.as_secs_f64().max(1e-9);
        row.written_per_second = written_count as f64 / seconds;
        row.assessed_per_second = heard.changes.len() as f64 / seconds;
        (row.argo, row.karmada) = (heard.argo, heard.karmada);
    }
    let _ = keys.unbounded_send(key(KeyCode::Char('q')));
    let _ = looping.join();
    runtime.shutdown_timeout(Duration::from_secs(1));
    drop(servers);
    row
}

fn console_under_rules(_: &mut Criterion) {
    println!(
        "console re-assessing health through rules, 250x80: live backend on in-process API servers, \
         {} object changes/s, {} keys per phase",
        changes_per_second(),
        keys_per_phase()
    );
    println!(
        "{:<14} {:>7} {:>8} {:>9} {:>10} {:>12} {:>15} {:>17} {:>19} {:>15} {:>15}",
        "fleet",
        "cells",
        "in sync",
        "settled",
        "changes/s",
        "re-assessed",
        "key→frame idle",
        "key→frame rules",
        "health event→frame",
        "change→frame",
        "by rule family"
    );
    println!(
        "{:<14} {:>7} {:>8} {:>9} {:>10} {:>12} {:>15} {:>17} {:>19} {:>15} {:>15}",
        "",
        "",
        "",
        "ms",
        "written",
        "per s",
        "p50/p99 ms",
        "p50/p99 ms",
        "p50/p99 ms",
        "p50/p99 ms",
        "argocd/karmada"
    );
    for (clusters, per_kind) in console_sizes() {
        let row = console_run(clusters, per_kind);
        assert!(
            row.argo > 0 && row.karmada > 0,
            "both rule families judged the changed objects ({} argocd, {} karmada)",
            row.argo,
            row.karmada
        );
        let pair = |(p50, p99): (Duration, Duration)| format!("{}/{}", ms(p50), ms(p99));
        println!(
            "{:<14} {:>7} {:>8} {:>9} {:>10.0} {:>12.0} {:>15} {:>17} {:>19} {:>15} {:>15}",
            format!("{clusters}×{}", 2 * per_kind),
            row.cells,
            row.in_sync,
            ms(row.settled),
            row.written_per_second,
            row.assessed_per_second,
            pair(row.key_idle),
            pair(row.key_changing),
            pair(row.event_frame),
            pair(row.change_frame),
            format!("{}/{}", row.argo, row.karmada),
        );
    }
}

criterion_group!(benches, health_through_rules, console_under_rules);
criterion_main!(benches);
