//! Fan-out budget: plan and apply across 1,500 simulated clusters × 1 object with a 50 ms
//! round trip per request, at the default concurrency of 32 clusters in flight. The floor is
//! ceil(1500 / 32) × 50 ms = 2.35 s (one round trip per cluster: plan's GET and dry-run go out
//! together); the budget is 1.5× the floor. Prints the measured ratio, then runs criterion.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use serde_json::json;

use flotilla::backend::fanout::apply;
use flotilla::backend::fanout::fake::FakeCluster;
use flotilla::backend::fanout::planning::{self, PlanMode};
use flotilla::backend::fanout::targets::{Options, Target};

const CLUSTERS: usize = 1500;
const RTT: Duration = Duration::from_millis(50);

fn targets() -> Vec<Target<Arc<FakeCluster>>> {
    (0..CLUSTERS)
        .map(|i| Target {
            cluster: format!("member-{i:04}"),
            api: Ok(Arc::new(FakeCluster::new(RTT))),
            objects: vec![json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": "settings",
                    "namespace": "default",
                    "labels": {"app.kubernetes.io/managed-by": "flotilla"},
                    "annotations": {"flotilla.dev/source": "ConfigMap/default/settings"},
                },
                "data": {"cluster": format!("member-{i:04}")},
            })],
            failed: Vec::new(),
            prune_kinds: Vec::new(),
            prune_namespaces: Default::default(),
            suspended: Vec::new(),
            refuse_unowned: Default::default(),
            take_over_unowned: Default::default(),
        })
        .collect()
}

fn floor(options: &Options) -> Duration {
    RTT * CLUSTERS.div_ceil(options.concurrency) as u32
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let options = Options::default();
    let targets = targets();
    let quiet = |_: usize, _: usize| {};
    let floor = floor(&options);

    let started = Instant::now();
    let items = runtime.block_on(planning::plan(&targets, PlanMode::DryRun, options, &quiet));
    let plan_time = started.elapsed();
    assert_eq!(items.len(), CLUSTERS);
    let started = Instant::now();
    let applied = runtime.block_on(apply::apply(
        &targets,
        false,
        &Default::default(),
        options,
        &quiet,
    ));
    let apply_time = started.elapsed();
    assert_eq!(applied.len(), CLUSTERS);
    for (what, took) in [("plan", plan_time), ("apply", apply_time)] {
        println!(
            "fanout {what}: {CLUSTERS} clusters × 1 object at {} ms RTT, concurrency {}: {:.3} s; floor {:.3} s; ratio {:.3} (budget 1.5)",
            RTT.as_millis(),
            options.concurrency,
            took.as_secs_f64(),
            floor.as_secs_f64(),
            took.as_secs_f64() / floor.as_secs_f64()
        );
    }

    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(25))
        .configure_from_args();
    let mut group = criterion.benchmark_group("fanout_1500x1_50ms");
    group.bench_function("plan", |b| {
        b.iter(|| runtime.block_on(planning::plan(&targets, PlanMode::DryRun, options, &quiet)))
    });
    group.bench_function("apply", |b| {
        b.iter(|| {
            runtime.block_on(apply::apply(
                &targets,
                false,
                &Default::default(),
                options,
                &quiet,
            ))
        })
    });
    group.finish();
    criterion.final_summary();
}
