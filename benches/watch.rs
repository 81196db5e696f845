//! Wall-display budgets: idle CPU of the real `flotilla watch --demo` over a minute in a
//! pseudo-terminal, and a soak of 10,000 status events per simulated minute for ten simulated
//! minutes through `update`, with resident memory sampled each minute (it must stay flat).
//! Run: `cargo bench --bench watch` (takes a little over a minute; `cargo test` runs it for a
//! few seconds, to check it runs).

use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use flotilla::app::{self, Action, update};
use flotilla::backend::sim::{Scenario, SimCore, SplitMix64};
use flotilla::engine::load_fleet;
use flotilla::messages::{BackendEvent, CellRef, CellUpdate};
use flotilla::model::CellStatus;
use portable_pty::{CommandBuilder, PtySize, native_pty_system};

#[path = "support/mode.rs"]
mod mode;

fn resident_kib(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmRSS:"))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|kib| kib.parse().ok())
        })
        .unwrap_or(0)
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |index: usize| {
        fields
            .get(index)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // After the name: state is field 0, utime is 11, stime is 12.
    field(11) + field(12)
}

fn idle_cpu() {
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: 50,
            cols: 200,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("pty");
    let state = tempfile::tempdir().expect("temp dir");
    let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_flotilla"));
    command.args(["watch", "--demo"]);
    command.env("TERM", "xterm-256color");
    command.env("XDG_STATE_HOME", state.path());
    command.env("XDG_CONFIG_HOME", state.path());
    let mut child = pty.slave.spawn_command(command).expect("spawn");
    let mut reader = pty.master.try_clone_reader().expect("reader");
    std::thread::spawn(move || {
        let mut sink = [0u8; 65536];
        while matches!(reader.read(&mut sink), Ok(n) if n > 0) {}
    });
    let pid = child.process_id().expect("pid");
    std::thread::sleep(Duration::from_secs(mode::sized(5, 1)));
    let ticks_per_second = 100.0; // USER_HZ on Linux
    let (start_ticks, started) = (cpu_ticks(pid), Instant::now());
    std::thread::sleep(Duration::from_secs(mode::sized(60, 2)));
    let used = (cpu_ticks(pid) - start_ticks) as f64 / ticks_per_second;
    let share = used / started.elapsed().as_secs_f64() * 100.0;
    println!(
        "watch --demo idle: {used:.2} s of CPU over {:.0} s = {share:.2}% of one core (budget 2%); resident {} MiB",
        started.elapsed().as_secs_f64(),
        resident_kib(&pid.to_string()) / 1024
    );
    let _ = child.kill();
}

fn soak() {
    let (fleet, errors) = load_fleet(&flotilla::fleet::demo::synthetic_fleet(500, 200));
    assert!(errors.is_empty(), "{errors:?}");
    let fleet = Arc::new(fleet);
    let core = SimCore::new(fleet.clone(), &Scenario::synthetic(&fleet.clusters, 3), 3);
    let mut state = app::state_for_fleet(&fleet, "soak".into());
    state.wall = Some(app::state::Wall {
        stale_after_ms: 60_000,
        ..Default::default()
    });
    update(&mut state, Action::Backend(core.snapshot()));
    let mut rng = SplitMix64::new(99);
    let statuses = [
        CellStatus::InSync,
        CellStatus::Drifted,
        CellStatus::Failed("admission webhook denied the request".into()),
        CellStatus::Pending,
        CellStatus::Conflict("kubectl-edit".into()),
    ];
    let mut samples = Vec::new();
    let started = Instant::now();
    let minutes = mode::sized(10u64, 2);
    for minute in 0..minutes {
        for event in 0..10_000u64 {
            let cell = CellRef {
                resource: rng.below(fleet.resources.len()) as u32,
                cluster: rng.below(fleet.clusters.len()) as u32,
            };
            let status = statuses[rng.below(statuses.len())].clone();
            let message =
                matches!(status, CellStatus::Drifted).then(|| "/spec/replicas changed".to_string());
            update(
                &mut state,
                Action::Tick {
                    now_ms: minute * 60_000 + event * 6,
                    unix_ms: None,
                },
            );
            update(
                &mut state,
                Action::Backend(BackendEvent::Cells(vec![CellUpdate {
                    cell,
                    status,
                    message,
                }])),
            );
        }
        samples.push(resident_kib("self"));
    }
    let first = samples[0] as f64 / 1024.0;
    let last = samples[samples.len() - 1] as f64 / 1024.0;
    println!(
        "watch soak: {} status events over {minutes} simulated minutes in {:.2?}; resident per minute (MiB): {}; growth from minute 1 to {minutes}: {:+.1} MiB",
        minutes * 10_000,
        started.elapsed(),
        samples
            .iter()
            .map(|kib| format!("{:.1}", *kib as f64 / 1024.0))
            .collect::<Vec<_>>()
            .join(" "),
        last - first
    );
}

fn budgets(c: &mut Criterion) {
    soak();
    idle_cpu();
    // A criterion figure too, so `cargo bench` comparisons cover the soak path.
    let (fleet, _) = load_fleet(&flotilla::fleet::demo::synthetic_fleet(500, 200));
    let fleet = Arc::new(fleet);
    let mut state = app::state_for_fleet(&fleet, "soak".into());
    let mut rng = SplitMix64::new(5);
    c.bench_function("update_one_status_event", |b| {
        b.iter(|| {
            let cell = CellRef {
                resource: rng.below(fleet.resources.len()) as u32,
                cluster: rng.below(fleet.clusters.len()) as u32,
            };
            update(
                &mut state,
                Action::Backend(BackendEvent::Cells(vec![CellUpdate {
                    cell,
                    status: CellStatus::Drifted,
                    message: None,
                }])),
            )
        })
    });
}

criterion_group!(benches, budgets);
criterion_main!(benches);
