//! Render benchmark: a retailer's store fleet of 1,000 federated resources × 1,500 clusters,
//! streamed as the render JSON into a sink. Reports time per (resource, cluster) pair.
//! Run: `cargo bench --bench render` (`cargo test` renders a tenth of it each way, to check it
//! runs). Peak memory of the real command:
//! `/usr/bin/time -v target/release/flotilla render --demo-scale 1500,1000 -o json > /dev/null`.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use flotilla::engine::{load_fleet, render};
use flotilla::fleet::demo::synthetic_fleet;

#[path = "support/mode.rs"]
mod mode;

fn render_store_fleet(c: &mut Criterion) {
    let (cluster_count, resource_count) = (mode::sized(1_500, 150), mode::sized(1_000, 100));
    let files = synthetic_fleet(cluster_count, resource_count);
    let started = Instant::now();
    let (fleet, errors) = load_fleet(&files);
    let load_time = started.elapsed();
    assert!(errors.is_empty(), "synthetic fleet has errors: {errors:?}");
    let clusters: Vec<usize> = (0..fleet.clusters.len()).collect();
    let pairs = (fleet.resources.len() * fleet.clusters.len()) as u64;
    let placed = (0..fleet.resources.len())
        .map(|r| clusters.iter().filter(|&&c| fleet.is_placed(r, c)).count())
        .sum::<usize>();

    let started = Instant::now();
    render::write_json(
        &fleet,
        &clusters,
        render::SecretValues::Masked,
        &mut std::io::sink(),
    )
    .unwrap_or_default();
    let once = started.elapsed();
    eprintln!(
        "store fleet: {} resources x {} clusters = {pairs} pairs ({placed} placed); load {:.2?}; one render {:.2?} = {:.3} us per pair; peak memory {} MiB",
        fleet.resources.len(),
        fleet.clusters.len(),
        load_time,
        once,
        once.as_secs_f64() * 1e6 / pairs as f64,
        peak_mib()
    );

    let mut group = c.benchmark_group("render");
    group.sample_size(10);
    group.throughput(Throughput::Elements(pairs));
    let name = format!("json_{resource_count}_resources_x_{cluster_count}_clusters");
    group.bench_function(name, |b| {
        b.iter(|| {
            render::write_json(
                black_box(&fleet),
                &clusters,
                render::SecretValues::Masked,
                &mut std::io::sink(),
            )
            .unwrap_or_default();
        })
    });
    group.finish();
}

/// The process's peak resident memory (VmHWM), in MiB.
fn peak_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmHWM:"))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|kib| kib.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib / 1024)
}

criterion_group!(benches, render_store_fleet);
criterion_main!(benches);
