//! Peak memory of loading and rendering a synthetic store fleet:
//! `cargo run --release --example render_scale -- 1500 1000`. Prints VmHWM (Linux) after each
//! stage and the time per (resource, cluster) pair of a JSON render into a sink.

use std::time::Instant;

use flotilla::demo_fleet::synthetic_fleet;
use flotilla::engine::{load_fleet, render};

fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let clusters = args.first().copied().unwrap_or(1_500);
    let resources = args.get(1).copied().unwrap_or(1_000);
    let files = synthetic_fleet(clusters, resources);
    let bytes: usize = files.iter().map(|f| f.text.len()).sum();
    println!(
        "generated {clusters} clusters x {resources} resources ({} KiB of YAML); peak {} MiB",
        bytes / 1024,
        peak_kib() / 1024
    );
    let started = Instant::now();
    let (fleet, errors) = load_fleet(&files);
    drop(files);
    println!(
        "loaded in {:.2?} ({} errors); peak {} MiB",
        started.elapsed(),
        errors.len(),
        peak_kib() / 1024
    );
    let all: Vec<usize> = (0..fleet.clusters.len()).collect();
    let mut counter = Counter(0);
    let started = Instant::now();
    let _ = render::write_json(&fleet, &all, &mut counter);
    let took = started.elapsed();
    let pairs = (fleet.clusters.len() * fleet.resources.len()) as f64;
    println!(
        "rendered {} MiB of JSON in {:.2?} = {:.3} us per pair; peak {} MiB",
        counter.0 / (1024 * 1024),
        took,
        took.as_secs_f64() * 1e6 / pairs,
        peak_kib() / 1024
    );
}

/// Counts bytes and drops them, like a pipe to `wc -c`.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
