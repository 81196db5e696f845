//! Hub-mode read budgets: the CPU one read of a large hub costs flotilla once the hub's objects
//! are listed — parsing them, building the console's rows, aligning them with the rows shown,
//! and diffing the two views into cell events — for a Karmada hub of 1,000 bindings on 200
//! clusters (200,000 Works) and an OCM hub of 2,000 clusters with 100 manifests each
//! (2,000 ManifestWorks, 200,000 manifests). Listing itself (the API server's time and the
//! bytes on the wire) is not measured here.
//!
//! Then the same Karmada hub on informer caches (in-memory reflector stores fed the objects
//! as a watcher would): the initial read of the view from the stores, one watch event — a
//! Work's status, a binding's clusters, a Cluster's Ready condition — to the cell delta the
//! console receives, and resident memory per cached Work (the store, then the view's index),
//! printed as one table next to the cost of the full read each event used to trigger.
//! Run: `cargo bench --bench hub` (`cargo test` runs it at a small size, to check it runs).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use flotilla::backend::hub::aligned;
use flotilla::backend::hub::cache::{CacheWriter, Caches, Change, IncrementalView};
use flotilla::backend::hub::console::view_changes::{Pass, changes};
use flotilla::backend::hub::karmada::delta::Live;
use flotilla::backend::hub::{karmada, ocm};
use flotilla::model::{ClusterSpec, ClusterStatus, Health};
use kube::api::DynamicObject;
use kube::runtime::watcher;
use serde_json::{Value, json};

#[path = "support/mode.rs"]
mod mode;

fn karmada_bindings() -> usize {
    mode::sized(1_000, 40)
}

fn karmada_clusters() -> usize {
    mode::sized(200, 20)
}

fn ocm_clusters() -> usize {
    mode::sized(2_000, 200)
}

fn ocm_manifests() -> usize {
    mode::sized(100, 10)
}

fn ready_clusters(count: usize) -> Vec<(ClusterSpec, ClusterStatus)> {
    (0..count)
        .map(|i| {
            (
                ClusterSpec {
                    name: format!("member-{i:04}"),
                    ..ClusterSpec::default()
                },
                ClusterStatus {
                    health: Health::Ready,
                    ..ClusterStatus::default()
                },
            )
        })
        .collect()
}

fn config_map(ns: &str, name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": ns}, "data": {"color": "blue"}})
}

/// Every binding scheduled to every cluster, each Work Applied (`applied` false: Failed).
fn karmada_objects(applied: bool) -> (Vec<Value>, Vec<Value>) {
    let clusters: Vec<Value> = (0..karmada_clusters())
        .map(|c| json!({"name": format!("member-{c:04}")}))
        .collect();
    let bindings = (0..karmada_bindings())
        .map(|b| {
            json!({"metadata": {"name": format!("cm-{b}-configmap"), "namespace": "shop",
                    "labels": {"resourcebinding.karmada.io/permanent-id": format!("id-{b}")}},
                   "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap",
                                         "namespace": "shop", "name": format!("cm-{b}")},
                            "clusters": clusters},
                   "status": {"conditions": [{"type": "Scheduled", "status": "True"}]}})
        })
        .collect();
    let status = if applied { "True" } else { "False" };
    let works = (0..karmada_bindings())
        .flat_map(|b| {
            (0..karmada_clusters()).map(move |c| {
                json!({"metadata": {"name": format!("cm-{b}"), "namespace": format!("karmada-es-member-{c:04}"),
                        "labels": {"resourcebinding.karmada.io/permanent-id": format!("id-{b}")}},
                       "spec": {"workload": {"manifests": [config_map("shop", &format!("cm-{b}"))]}},
                       "status": {"conditions": [{"type": "Applied", "status": status,
                                                  "reason": "AppliedSuccessful", "message": "Manifest has been successfully applied"}]}})
            })
        })
        .collect();
    (bindings, works)
}

fn karmada_view(bindings: &[Value], works: &[Value]) -> flotilla::backend::hub::HubView {
    let bindings: Vec<karmada::Binding> = bindings.iter().map(karmada::binding_of).collect();
    let works = karmada::works_by_binding(works.iter().filter_map(karmada::work_of).collect());
    karmada::view_of(ready_clusters(karmada_clusters()), &bindings, &works)
}

/// One ManifestWork per cluster carrying `ocm_manifests()` ConfigMaps, all reported Applied and
/// Available (`available` false: the first manifest is not Available).
fn ocm_objects(available: bool) -> Vec<Value> {
    (0..ocm_clusters())
        .map(|c| {
            let manifests: Vec<Value> = (0..ocm_manifests())
                .map(|m| config_map("shop", &format!("cm-{m}")))
                .collect();
            let statuses: Vec<Value> = (0..ocm_manifests())
                .map(|m| {
                    let up = if available || m > 0 { "True" } else { "False" };
                    json!({"resourceMeta": {"ordinal": m, "group": "", "version": "v1",
                              "kind": "ConfigMap", "namespace": "shop", "name": format!("cm-{m}")},
                           "conditions": [{"type": "Applied", "status": "True", "reason": "AppliedManifestComplete"},
                                          {"type": "Available", "status": up, "reason": "ResourceAvailable"}]})
                })
                .collect();
            json!({"metadata": {"name": "shop", "namespace": format!("member-{c:04}"), "generation": 1},
                   "spec": {"workload": {"manifests": manifests}},
                   "status": {"conditions": [{"type": "Applied", "status": "True", "observedGeneration": 1}],
                              "resourceStatus": {"manifests": statuses}}})
        })
        .collect()
}

fn ocm_view(works: &[Value]) -> flotilla::backend::hub::HubView {
    let works: Vec<ocm::ManifestWork> = works.iter().map(ocm::manifest_work_of).collect();
    let clusters = ready_clusters(ocm_clusters());
    flotilla::backend::hub::HubView {
        kind: flotilla::backend::hub::HubKind::OpenClusterManagement,
        rows: ocm::rows_of(&works, &clusters),
        clusters,
    }
}

/// Times one full read pass (`view` from the objects, aligned with `shown`, diffed) and prints it.
fn report(
    what: &str,
    shown: &flotilla::backend::hub::HubView,
    view: impl Fn() -> flotilla::backend::hub::HubView,
) {
    let started = Instant::now();
    let next = view();
    let built = started.elapsed();
    let next = aligned(shown, next);
    let aligned_at = started.elapsed();
    let events = changes(shown, &next);
    let total = started.elapsed();
    let cells: usize = events
        .iter()
        .map(|e| match e {
            flotilla::messages::BackendEvent::Cells(cells) => cells.len(),
            _ => 0,
        })
        .sum();
    eprintln!(
        "{what}: {} rows x {} clusters; one read {:.0?} (rows {:.0?}, align {:.0?}, diff {:.0?}); {cells} cell events",
        next.rows.len(),
        next.clusters.len(),
        total,
        built,
        aligned_at - built,
        total - aligned_at
    );
}

/// Resident memory of this process, in bytes (0 where /proc is not there).
fn resident() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|statm| statm.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn dynamic(value: Value) -> DynamicObject {
    serde_json::from_value(value).expect("a generated object is an object")
}

fn karmada_cluster(c: usize, ready: bool) -> DynamicObject {
    let status = if ready { "True" } else { "False" };
    dynamic(
        json!({"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": format!("member-{c:04}")},
        "spec": {"syncMode": "Push"},
        "status": {"conditions": [{"type": "Ready", "status": status, "reason": "ClusterReady"}]}}),
    )
}

fn karmada_work(b: usize, c: usize, applied: bool) -> Value {
    let status = if applied { "True" } else { "False" };
    json!({"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
        "metadata": {"name": format!("cm-{b}"), "namespace": format!("karmada-es-member-{c:04}"),
            "labels": {"resourcebinding.karmada.io/permanent-id": format!("id-{b}")}},
        "spec": {"workload": {"manifests": [config_map("shop", &format!("cm-{b}"))]}},
        "status": {"conditions": [{"type": "Applied", "status": status,
            "reason": "AppliedSuccessful", "message": "Manifest has been successfully applied"}]}})
}

/// The Karmada hub in reflector stores: Clusters and bindings, then every Work applied as a
/// watcher would; the resident memory the Works added, per Work.
fn karmada_caches(bindings: &[Value]) -> (Caches, Vec<CacheWriter>, f64) {
    let objects = (0..karmada_clusters())
        .map(|c| (0, karmada_cluster(c, true)))
        .chain(bindings.iter().map(|b| (1, dynamic(b.clone()))));
    let (caches, mut writers) = Caches::in_memory(karmada::delta::kinds(), objects);
    let before = resident();
    for b in 0..karmada_bindings() {
        for c in 0..karmada_clusters() {
            let work = dynamic(karmada_work(b, c, true));
            writers[3].apply_watcher_event(&watcher::Event::Apply(work));
        }
    }
    let works = (karmada_bindings() * karmada_clusters()) as f64;
    let per_work = resident().saturating_sub(before) as f64 / works;
    (caches, writers, per_work)
}

/// Times `events` watch events, each written to its store and taken in by the pass: the
/// median, the 99th percentile, and the cells sent per event.
fn time_events<L: IncrementalView>(
    pass: &mut Pass<L>,
    caches: &Caches,
    writers: &mut [CacheWriter],
    events: Vec<(usize, DynamicObject)>,
) -> (Duration, Duration, f64) {
    let mut took = Vec::new();
    let mut cells = 0;
    for (kind, object) in events {
        let started = Instant::now();
        writers[kind].apply_watcher_event(&watcher::Event::Apply(object.clone()));
        // The object parsed as a watcher's change is, from the text a store keeps.
        let news = pass.take_in(vec![Change::of(kind, &object, false, L::parse)], caches);
        took.push(started.elapsed());
        cells += news
            .iter()
            .map(|e| match e {
                flotilla::messages::BackendEvent::Cells(cells) => cells.len(),
                _ => 0,
            })
            .sum::<usize>();
    }
    took.sort();
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize];
    (at(0.5), at(0.99), cells as f64 / took.len().max(1) as f64)
}

/// The Karmada hub on informer caches, printed as one table.
fn karmada_cached(bindings: &[Value], works: &[Value]) {
    let shown = karmada_view(bindings, works);
    let started = Instant::now();
    black_box(changes(
        &shown,
        &aligned(&shown, karmada_view(bindings, works)),
    ));
    let full_read = started.elapsed();

    let (caches, mut writers, store_per_work) = karmada_caches(bindings);
    let before_index = resident();
    let started = Instant::now();
    let (mut pass, _) =
        Pass::<Live>::start(&shown, &caches, &Default::default()).expect("the generated hub reads");
    let initial = started.elapsed();
    let works_count = (karmada_bindings() * karmada_clusters()) as f64;
    let index_per_work = resident().saturating_sub(before_index) as f64 / works_count;
    let json_per_work = serde_json::to_vec(&karmada_work(0, 0, true)).map_or(0, |j| j.len());

    // Each event flips one Work's Applied condition (to False, then back on the next round).
    let work_events: Vec<(usize, DynamicObject)> = (0..2_000)
        .map(|i| {
            let (b, c) = ((i * 7) % karmada_bindings(), (i * 13) % karmada_clusters());
            (3, dynamic(karmada_work(b, c, i >= 1_000)))
        })
        .collect();
    let work = time_events(&mut pass, &caches, &mut writers, work_events);
    // Each binding loses its last cluster: one row, every cell compared, one cell changes.
    let fewer: Vec<Value> = (0..karmada_clusters() - 1)
        .map(|c| json!({"name": format!("member-{c:04}")}))
        .collect();
    let binding_events: Vec<(usize, DynamicObject)> = bindings
        .iter()
        .take(200)
        .map(|b| {
            let mut b = b.clone();
            b["spec"]["clusters"] = Value::from(fewer.clone());
            (1, dynamic(b))
        })
        .collect();
    let binding = time_events(&mut pass, &caches, &mut writers, binding_events);
    // Each Cluster turns not Ready: its column, every row's cell.
    let cluster_events: Vec<(usize, DynamicObject)> = (0..50.min(karmada_clusters()))
        .map(|c| (0, karmada_cluster(c, false)))
        .collect();
    let cluster = time_events(&mut pass, &caches, &mut writers, cluster_events);

    eprintln!();
    eprintln!(
        "karmada on informer caches: {} bindings x {} clusters ({} Works)",
        karmada_bindings(),
        karmada_clusters(),
        works_count as usize
    );
    eprintln!(
        "{:<44} {:>14} {:>12} {:>12} {:>10}",
        "", "before: a full read", "after p50", "after p99", "cells sent"
    );
    eprintln!(
        "{:<44} {:>14.2?} {:>12.2?} {:>12} {:>10}",
        "initial read (from the stores)", full_read, initial, "-", "all"
    );
    for (what, (p50, p99, cells)) in [
        ("one Work status event -> cell delta", work),
        ("one binding event (200 cells) -> row delta", binding),
        ("one Cluster event (1,000 cells) -> column delta", cluster),
    ] {
        eprintln!("{what:<44} {full_read:>14.2?} {p50:>12.2?} {p99:>12.2?} {cells:>10.1}");
    }
    eprintln!(
        "resident memory per cached Work: {store_per_work:.0} B in the reflector store (its JSON is {json_per_work} B), {index_per_work:.0} B in the view's index; manifests stored once"
    );
    eprintln!();
}

/// The OCM hub on informer caches: its initial read and one ManifestWork status event.
fn ocm_cached(works: &[Value], failing: &[Value]) {
    let shown = ocm_view(works);
    let started = Instant::now();
    black_box(changes(&shown, &aligned(&shown, ocm_view(works))));
    let full_read = started.elapsed();
    let managed = (0..ocm_clusters()).map(|c| {
        (
            0,
            dynamic(
                json!({"apiVersion": "cluster.open-cluster-management.io/v1",
                "kind": "ManagedCluster", "metadata": {"name": format!("member-{c:04}")},
                "spec": {"hubAcceptsClient": true},
                "status": {"conditions": [{"type": "ManagedClusterConditionAvailable",
                    "status": "True", "reason": "ManagedClusterAvailable"}]}}),
            ),
        )
    });
    let (caches, mut writers) = Caches::in_memory(ocm::delta::kinds(), managed);
    let before = resident();
    for work in works {
        writers[1].apply_watcher_event(&watcher::Event::Apply(dynamic(work.clone())));
    }
    let store_per_work = resident().saturating_sub(before) as f64 / works.len() as f64;
    let before_index = resident();
    let started = Instant::now();
    let (mut pass, _) = Pass::<ocm::delta::Live>::start(&shown, &caches, &Default::default())
        .expect("the generated hub reads");
    let initial = started.elapsed();
    let index_per_work = resident().saturating_sub(before_index) as f64 / works.len() as f64;
    let json_per_work = serde_json::to_vec(&works[0]).map_or(0, |j| j.len());
    let events: Vec<(usize, DynamicObject)> = (0..400)
        .map(|i| {
            // The second 200 events turn the first 200's clusters back.
            let c = ((i % 200) * 7) % ocm_clusters();
            let work = if i < 200 { &failing[c] } else { &works[c] };
            (1, dynamic(work.clone()))
        })
        .collect();
    let work = time_events(&mut pass, &caches, &mut writers, events);
    eprintln!(
        "ocm on informer caches: {} clusters x {} manifests ({} ManifestWorks)",
        ocm_clusters(),
        ocm_manifests(),
        ocm_clusters()
    );
    eprintln!(
        "{:<44} {:>14.2?} {:>12.2?} {:>12} {:>10}",
        "initial read (from the stores)", full_read, initial, "-", "all"
    );
    let (p50, p99, cells) = work;
    eprintln!(
        "{:<44} {full_read:>14.2?} {p50:>12.2?} {p99:>12.2?} {cells:>10.1}",
        "one ManifestWork status event (100 cells)"
    );
    eprintln!(
        "resident memory per cached ManifestWork ({} manifests): {store_per_work:.0} B in the reflector store (its JSON is {json_per_work} B), {index_per_work:.0} B in the view's index",
        ocm_manifests()
    );
    eprintln!();
}

fn hub_reads(c: &mut Criterion) {
    let (bindings, works) = karmada_objects(true);
    // First, while the process has freed little, so its resident memory counts the caches.
    karmada_cached(&bindings, &works);
    let shown = karmada_view(&bindings, &works);
    let (_, failing) = karmada_objects(false);
    report("karmada, every Work turned Failed", &shown, || {
        karmada_view(&bindings, &failing)
    });
    report("karmada, nothing changed", &shown, || {
        karmada_view(&bindings, &works)
    });
    let ocm_works = ocm_objects(true);
    let ocm_failing = ocm_objects(false);
    ocm_cached(&ocm_works, &ocm_failing);
    let ocm_shown = ocm_view(&ocm_works);
    report(
        "ocm, one manifest unavailable everywhere",
        &ocm_shown,
        || ocm_view(&ocm_failing),
    );

    let mut group = c.benchmark_group("hub read");
    group.sample_size(10);
    group.warm_up_time(std::time::Duration::from_millis(100));
    let karmada_size = format!(
        "karmada {} bindings x {} clusters",
        karmada_bindings(),
        karmada_clusters()
    );
    group.bench_function(karmada_size, |b| {
        b.iter(|| {
            let next = aligned(&shown, karmada_view(&bindings, &works));
            black_box(changes(&shown, &next))
        })
    });
    let ocm_size = format!(
        "ocm {} clusters x {} manifests",
        ocm_clusters(),
        ocm_manifests()
    );
    group.bench_function(ocm_size, |b| {
        b.iter(|| {
            let next = aligned(&ocm_shown, ocm_view(&ocm_works));
            black_box(changes(&ocm_shown, &next))
        })
    });
    group.finish();
}

criterion_group!(benches, hub_reads);
criterion_main!(benches);
