//! Console frame cost: one full frame of a settled synthetic fleet drawn into a 250×80 buffer,
//! at 2,000 clusters × 1,000 resources and at 10 × 10, plus the process's resident memory
//! after building the large fleet. Run: `cargo bench --bench console`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use flotilla::app::{self, Action, update};
use flotilla::backend::BackendEvent;
use flotilla::backend::sim::{Scenario, SimCore};
use flotilla::config::keymap::Keymap;
use flotilla::config::theme::Theme;
use flotilla::engine::load_fleet;
use flotilla::views::{self, ViewContext};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn settled_state(clusters: usize, resources: usize) -> app::state::State {
    let (fleet, errors) = load_fleet(&flotilla::demo_fleet::synthetic_fleet(clusters, resources));
    assert!(errors.is_empty(), "{errors:?}");
    let fleet = Arc::new(fleet);
    let core = SimCore::new(fleet.clone(), &Scenario::synthetic(&fleet.clusters, 7), 7);
    let mut state = app::state_for_fleet(&fleet, format!("demo-scale {clusters}×{resources}"));
    update(&mut state, Action::Backend(core.snapshot()));
    for cluster in 0..core.cluster_count() {
        let status = core.cluster_status(cluster);
        update(
            &mut state,
            Action::Backend(BackendEvent::Cluster {
                cluster: cluster as u32,
                status,
            }),
        );
    }
    state
}

fn resident_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn percentiles(state: &app::state::State, frames: usize) -> (Duration, Duration) {
    let theme = Theme::load(None, false);
    let keymap = Keymap::built_in("default");
    let context = ViewContext {
        theme: &theme,
        keymap: &keymap,
        ascii: false,
    };
    let mut terminal = Terminal::new(TestBackend::new(250, 80)).expect("terminal");
    let mut times: Vec<Duration> = (0..frames)
        .map(|_| {
            let started = Instant::now();
            terminal
                .draw(|frame| views::render(frame, state, &context))
                .expect("draw");
            started.elapsed()
        })
        .collect();
    times.sort();
    (times[frames / 2], times[frames * 99 / 100])
}

fn frame(c: &mut Criterion) {
    let small = settled_state(10, 10);
    let before = resident_mib().unwrap_or(0.0);
    let large = settled_state(2000, 1000);
    let after = resident_mib().unwrap_or(0.0);
    let (small_p50, small_p99) = percentiles(&small, 400);
    let (large_p50, large_p99) = percentiles(&large, 400);
    println!(
        "console frame 250x80: 10x10 p50 {:.2} ms p99 {:.2} ms; 2000x1000 p50 {:.2} ms p99 {:.2} ms; ratio p99 {:.2}; resident {:.0} MiB (fleet, sim and state for 2000x1000 add {:.0} MiB)",
        small_p50.as_secs_f64() * 1e3,
        small_p99.as_secs_f64() * 1e3,
        large_p50.as_secs_f64() * 1e3,
        large_p99.as_secs_f64() * 1e3,
        large_p99.as_secs_f64() / small_p99.as_secs_f64(),
        after,
        after - before,
    );
    let theme = Theme::load(None, false);
    let keymap = Keymap::built_in("default");
    let context = ViewContext {
        theme: &theme,
        keymap: &keymap,
        ascii: false,
    };
    let mut terminal = Terminal::new(TestBackend::new(250, 80)).expect("terminal");
    let mut group = c.benchmark_group("console_frame_250x80");
    group.bench_function("10x10", |b| {
        b.iter(|| {
            terminal
                .draw(|frame| views::render(frame, &small, &context))
                .map(|_| ())
        })
    });
    group.bench_function("2000x1000", |b| {
        b.iter(|| {
            terminal
                .draw(|frame| views::render(frame, &large, &context))
                .map(|_| ())
        })
    });
    group.finish();
}

criterion_group!(benches, frame);
criterion_main!(benches);
