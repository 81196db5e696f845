//! Times the parts of a render separately (decide only, decide + JSON), to find hot spots:
//! `cargo run --release --example render_parts -- 1500 1000`.

use std::time::Instant;

use flotilla::demo_fleet::synthetic_fleet;
use flotilla::engine::{Decision, load_fleet};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let clusters = args.first().copied().unwrap_or(300);
    let resources = args.get(1).copied().unwrap_or(1_000);
    let (fleet, _) = load_fleet(&synthetic_fleet(clusters, resources));
    let pairs = (fleet.clusters.len() * fleet.resources.len()) as f64;
    let mut placed = 0usize;
    let started = Instant::now();
    for c in 0..fleet.clusters.len() {
        for r in 0..fleet.resources.len() {
            if fleet.is_placed(r, c) {
                placed += 1;
            }
        }
    }
    println!(
        "is_placed: {:.3} us/pair ({placed} placed)",
        started.elapsed().as_secs_f64() * 1e6 / pairs
    );
    let started = Instant::now();
    for c in 0..fleet.clusters.len() {
        let _ = fleet.implied_namespaces(c);
    }
    println!(
        "implied_namespaces: {:.3} us/pair",
        started.elapsed().as_secs_f64() * 1e6 / pairs
    );
    let started = Instant::now();
    let mut bytes = 0usize;
    for c in 0..fleet.clusters.len() {
        for r in 0..fleet.resources.len() {
            if let Decision::Placed { object, .. } = fleet.decide(r, c) {
                bytes += object.as_object().map(|o| o.len()).unwrap_or(0);
            }
        }
    }
    println!(
        "decide: {:.3} us/pair ({bytes})",
        started.elapsed().as_secs_f64() * 1e6 / pairs
    );
    let started = Instant::now();
    for c in 0..fleet.clusters.len() {
        for r in 0..fleet.resources.len() {
            if let Decision::Placed { object, .. } = fleet.decide(r, c) {
                bytes += serde_json::to_vec(&object).map(|v| v.len()).unwrap_or(0);
            }
        }
    }
    for r in [0usize, 1, 6, 8, 9] {
        let Some(c) = (0..fleet.clusters.len()).find(|&c| fleet.is_placed(r, c)) else {
            continue;
        };
        let started = Instant::now();
        let mut size = 0;
        for _ in 0..10_000 {
            if let Decision::Placed { object, .. } = fleet.decide(r, c) {
                size = serde_json::to_vec(&object).map(|v| v.len()).unwrap_or(0);
            }
        }
        println!(
            "  {} on {}: {:.3} us per decide ({size} bytes)",
            fleet.resources[r].target,
            fleet.clusters[c].name,
            started.elapsed().as_secs_f64() * 1e6 / 10_000.0
        );
    }
    if let Decision::Placed { object, .. } = fleet.decide(0, 2) {
        let started = Instant::now();
        let mut n = 0;
        for _ in 0..10_000 {
            let copy = object.clone();
            n += copy.as_object().map(|o| o.len()).unwrap_or(0);
        }
        let text = serde_json::to_string(&object).unwrap_or_default();
        let reparsed: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let started2 = Instant::now();
        for _ in 0..10_000 {
            let copy = reparsed.clone();
            n += copy.as_object().map(|o| o.len()).unwrap_or(0);
        }
        println!(
            "  clone of reparsed: {:.3} us",
            started2.elapsed().as_secs_f64() * 1e6 / 10_000.0
        );
        println!(
            "  clone alone: {:.3} us ({n})",
            started.elapsed().as_secs_f64() * 1e6 / 10_000.0
        );
    }
    println!(
        "decide+json: {:.3} us/pair ({bytes})",
        started.elapsed().as_secs_f64() * 1e6 / pairs
    );
}

#[allow(dead_code)]
fn unused() {}
