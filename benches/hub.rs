//! Hub-mode read budgets: the CPU one read of a large hub costs flotilla once the hub's objects
//! are listed — parsing them, building the console's rows, aligning them with the rows shown,
//! and diffing the two views into cell events — for a Karmada hub of 1,000 bindings on 200
//! clusters (200,000 Works) and an OCM hub of 2,000 clusters with 100 manifests each
//! (2,000 ManifestWorks, 200,000 manifests). Listing itself (the API server's time and the
//! bytes on the wire) is not measured here.
//! Run: `cargo bench --bench hub`.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use flotilla::backend::hub::poll::{aligned, changes};
use flotilla::backend::hub::{karmada, ocm};
use flotilla::model::{ClusterSpec, ClusterStatus, Health};
use serde_json::{Value, json};

const KARMADA_BINDINGS: usize = 1_000;
const KARMADA_CLUSTERS: usize = 200;
const OCM_CLUSTERS: usize = 2_000;
const OCM_MANIFESTS: usize = 100;

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
    let clusters: Vec<Value> = (0..KARMADA_CLUSTERS)
        .map(|c| json!({"name": format!("member-{c:04}")}))
        .collect();
    let bindings = (0..KARMADA_BINDINGS)
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
    let works = (0..KARMADA_BINDINGS)
        .flat_map(|b| {
            (0..KARMADA_CLUSTERS).map(move |c| {
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
    karmada::view_of(ready_clusters(KARMADA_CLUSTERS), &bindings, &works)
}

/// One ManifestWork per cluster carrying `OCM_MANIFESTS` ConfigMaps, all reported Applied and
/// Available (`available` false: the first manifest is not Available).
fn ocm_objects(available: bool) -> Vec<Value> {
    (0..OCM_CLUSTERS)
        .map(|c| {
            let manifests: Vec<Value> = (0..OCM_MANIFESTS)
                .map(|m| config_map("shop", &format!("cm-{m}")))
                .collect();
            let statuses: Vec<Value> = (0..OCM_MANIFESTS)
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
    let clusters = ready_clusters(OCM_CLUSTERS);
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
            flotilla::backend::BackendEvent::Cells(cells) => cells.len(),
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

fn hub_reads(c: &mut Criterion) {
    let (bindings, works) = karmada_objects(true);
    let shown = karmada_view(&bindings, &works);
    let (_, failing) = karmada_objects(false);
    report("karmada, every Work turned Failed", &shown, || {
        karmada_view(&bindings, &failing)
    });
    report("karmada, nothing changed", &shown, || {
        karmada_view(&bindings, &works)
    });
    let ocm_works = ocm_objects(true);
    let ocm_shown = ocm_view(&ocm_works);
    let ocm_failing = ocm_objects(false);
    report(
        "ocm, one manifest unavailable everywhere",
        &ocm_shown,
        || ocm_view(&ocm_failing),
    );

    let mut group = c.benchmark_group("hub read");
    group.sample_size(10);
    group.warm_up_time(std::time::Duration::from_millis(100));
    group.bench_function("karmada 1,000 bindings x 200 clusters", |b| {
        b.iter(|| {
            let next = aligned(&shown, karmada_view(&bindings, &works));
            black_box(changes(&shown, &next))
        })
    });
    group.bench_function("ocm 2,000 clusters x 100 manifests", |b| {
        b.iter(|| {
            let next = aligned(&ocm_shown, ocm_view(&ocm_works));
            black_box(changes(&ocm_shown, &next))
        })
    });
    group.finish();
}

criterion_group!(benches, hub_reads);
criterion_main!(benches);
