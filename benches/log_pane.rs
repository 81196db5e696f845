//! The console's log pane under a fleet-wide flood, on real API servers: the raw-contexts tier
//! (`cargo xtask testenv up --contexts N`, N ≥ 100), a fleet directory of its first 100
//! contexts with one Deployment of ten pods placed on every one (1,000 pods as the contexts
//! see them; the pods run on the members' KWOK Nodes, every context reaching one of the three
//! members through its proxy), and the real binary in a 250×80 pseudo-terminal: `z` collapses
//! the matrix and `L` opens the pane on the row, every cluster at once. With the pane open and
//! its streams quiet, `f` (follow off, on) is pressed as a person would, for the machine's own
//! noise; then lines are appended to each member's simulated container log (KWOK serves every
//! pod's log from it, following it as a kubelet follows a container's) at the rate that sends
//! 5,000 lines a second in total down the streams the pane follows, for a minute, with `f`
//! still being pressed. Prints one table: how many containers the pane follows and the
//! sockets it opened, lines sent and lines that reached the pane (kept and dropped, as its
//! status line counts them), key → frame p50/p99 quiet and while streaming (a key's write to
//! the terminal to the first screen whose status row shows it), the console's resident memory
//! before `L`, through the minute and at its peak, and its CPU over the minute. KWOK holds an
//! inotify instance per followed log, so the kernel's per-user cap
//! (`fs.inotify.max_user_instances`) must exceed the followed containers; the bench says so
//! and stops when it does not. Skipped, with a note, when the tier is not up. It writes only
//! the Deployment `default/fleet-scale-logs` (removed at the end) and the members' simulated
//! logs (their earlier contents put back at the end).
//!
//! `FLOTILLA_TESTENV_KUBECONFIG=target/testenv/kubeconfig cargo bench --bench log_pane`

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla::backend::log_pane::MAX_FOLLOWED;
use serde_json::Value;

#[path = "support/mode.rs"]
mod mode;
#[path = "support/procfs.rs"]
mod procfs;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/testenv.rs"]
mod testenv;

const WORKLOAD: &str = "fleet-scale-logs";

/// Contexts in the fleet, pods each sees, lines a second sent into the followed streams in
/// all, and how long they are sent; a check (`cargo test`) streams a small fleet briefly.
fn contexts() -> usize {
    mode::sized(100, 10)
}
fn replicas() -> usize {
    mode::sized(10, 2)
}
fn lines_per_second() -> f64 {
    mode::sized(5_000.0, 200.0)
}
fn streaming() -> Duration {
    mode::sized(Duration::from_secs(60), Duration::from_secs(6))
}
/// Keys pressed while streaming, the first after `WARM_UP`, one every `KEY_GAP`.
fn keys() -> usize {
    mode::sized(150, 4)
}
/// Keys pressed with the pane open before the lines are sent.
fn idle_keys() -> usize {
    mode::sized(50, 2)
}
const WARM_UP: Duration = Duration::from_secs(5);
const KEY_GAP: Duration = Duration::from_millis(300);
/// How often lines are appended to each member's log.
const WRITE_TICK: Duration = Duration::from_millis(100);

/// What the reader of the terminal last saw of the pane.
#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    /// Every cluster of the fleet answered its probe.
    ready: bool,
    /// The pane is open (its title names the workload).
    open: bool,
    /// The pane's status row: following, or scrolled back (follow off).
    following: Option<bool>,
    /// When `following` last changed.
    flipped: Option<Instant>,
    /// Lines the pane keeps, and lines it says it dropped.
    kept: usize,
    dropped: usize,
}

/// `D older lines dropped · following · N lines` → (following, N, D).
fn status_row(row: &str) -> Option<(bool, usize, usize)> {
    let following = if row.contains("follow off") {
        false
    } else if row.contains("following") {
        true
    } else {
        return None;
    };
    let mut kept = None;
    let mut dropped = 0;
    for part in row.split(" · ") {
        let part = part.trim_matches(|c: char| c == '│' || c.is_whitespace());
        if let Some(n) = part.strip_suffix(" lines").and_then(|n| n.parse().ok()) {
            kept = Some(n);
        }
        if let Some(n) = part
            .strip_suffix(" older lines dropped")
            .and_then(|n| n.parse().ok())
        {
            dropped = n;
        }
    }
    Some((following, kept?, dropped))
}

/// Reads the console's terminal until it closes, keeping `seen` up to date; answers the
/// console's cursor-position query.
fn read_screen(
    mut reader: Box<dyn Read + Send>,
    seen: Arc<Mutex<Seen>>,
    asked: Arc<AtomicBool>,
    clusters: usize,
) {
    let mut screen = pty::screen();
    let mut buffer = [0u8; 65536];
    let ready_mark = format!("clusters {clusters}/{clusters} Ready");
    let title = format!("logs of Deployment/default/{WORKLOAD}");
    // The status row's place, once found: only it is read on each chunk.
    let mut status_at: Option<usize> = None;
    while let Ok(n) = reader.read(&mut buffer) {
        if n == 0 {
            break;
        }
        screen.process(&buffer[..n]);
        if pty::asks_cursor_position(&buffer[..n]) {
            asked.store(true, Ordering::Relaxed);
        }
        let now = Instant::now();
        let Ok(mut seen) = seen.lock() else { break };
        if !seen.open {
            let contents = screen.screen().contents();
            seen.ready |= contents.contains(&ready_mark);
            seen.open = contents.contains(&title);
            if !seen.open {
                continue;
            }
        }
        // Only the rows down to the status row are read (it is near the top), so reading
        // keeps up with the console's frames and never holds up its writes.
        let status = status_at
            .and_then(|at| screen.screen().rows(0, pty::COLS).nth(at))
            .and_then(|row| status_row(&row))
            .or_else(|| {
                let (at, found) = screen
                    .screen()
                    .rows(0, pty::COLS)
                    .enumerate()
                    .find_map(|(at, row)| Some((at, status_row(&row)?)))?;
                status_at = Some(at);
                Some(found)
            });
        if let Some((following, kept, dropped)) = status {
            if seen.following != Some(following) {
                seen.following = Some(following);
                seen.flipped = Some(now);
            }
            seen.kept = kept;
            seen.dropped = dropped;
        }
    }
}

/// Appends lines to each member's log until `stop`: `per_file` a second to every file, in one
/// write a tick. Counts the lines each file was sent.
fn write_lines(files: Vec<PathBuf>, per_file: f64, stop: Arc<AtomicBool>, written: Arc<AtomicU64>) {
    let started = Instant::now();
    let mut sent = 0u64;
    let mut handles: Vec<std::fs::File> = files
        .iter()
        .filter_map(|path| {
            std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(|e| eprintln!("{}: {e}", path.display()))
                .ok()
        })
        .collect();
    while !stop.load(Ordering::Relaxed) {
        let due = (started.elapsed().as_secs_f64() * per_file) as u64;
        if due > sent {
            let mut chunk = String::new();
            for seq in sent..due {
                chunk.push_str(&testenv::cri_line(&format!(
                    "GET /api/v1/orders/{} 200 {}ms seq={seq} bytes=1834 agent=fleet-scale",
                    seq % 9_973,
                    seq % 37
                )));
            }
            for file in &mut handles {
                let _ = file.write_all(chunk.as_bytes());
            }
            sent = due;
            written.store(sent, Ordering::Relaxed);
        }
        std::thread::sleep(WRITE_TICK);
    }
}

fn percentiles(mut times: Vec<Duration>) -> (Duration, Duration) {
    if times.is_empty() {
        return (Duration::ZERO, Duration::ZERO);
    }
    times.sort();
    let at = |q: usize| times[(times.len() * q / 100).min(times.len() - 1)];
    (at(50), at(99))
}

fn ms(duration: Duration) -> String {
    format!("{:.1}", duration.as_secs_f64() * 1e3)
}

/// Waits until `done` holds of what the screen shows, or the deadline passes.
fn wait_for(seen: &Mutex<Seen>, deadline: Instant, done: impl Fn(&Seen) -> bool) -> bool {
    loop {
        if seen.lock().is_ok_and(|seen| done(&seen)) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

struct Figures {
    followed: usize,
    sockets_added: usize,
    per_file: f64,
    sent: u64,
    reached: usize,
    kept: usize,
    dropped: usize,
    key: (Duration, Duration),
    keys_seen: usize,
    keys_missed: usize,
    idle: (Duration, Duration),
    idle_seen: usize,
    idle_missed: usize,
    resident_before: f64,
    /// Resident MiB at times into the streaming.
    resident: Vec<(Duration, f64)>,
    peak: f64,
    cpu: f64,
}

fn run(kc: &Path, fleet: &Path, member_logs: Vec<PathBuf>, pods: usize) -> Option<Figures> {
    let flotilla = Path::new(env!("CARGO_BIN_EXE_flotilla"));
    let kc_arg = kc.display().to_string();
    let fleet_arg = fleet.display().to_string();
    let mut console = pty::start(
        flotilla,
        &["--kubeconfig", &kc_arg, "--fleet", &fleet_arg, "console"],
    );
    let pid = console.child.process_id().unwrap_or(0);
    let reader = std::mem::replace(&mut console.reader, Box::new(std::io::empty()));
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let asked: Arc<AtomicBool> = Arc::default();
    let reading = {
        let (seen, asked) = (seen.clone(), asked.clone());
        std::thread::spawn(move || read_screen(reader, seen, asked, contexts()))
    };
    // Answers the console's cursor query while the bench waits.
    let answer = |console: &mut pty::Console| {
        if asked.swap(false, Ordering::Relaxed) {
            let _ = console.writer.write_all(pty::CURSOR_AT_HOME);
        }
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut ready = false;
    while Instant::now() < deadline {
        answer(&mut console);
        if seen.lock().is_ok_and(|s| s.ready) {
            ready = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut figures = None;
    if ready {
        // The watches settle before the pane opens.
        std::thread::sleep(Duration::from_secs(3));
        let resident_before = procfs::status_mib(pid, "VmRSS:").unwrap_or(0.0);
        let (_, sockets_before) = procfs::fds(pid);
        let _ = console.writer.write_all(b"z");
        std::thread::sleep(Duration::from_millis(300));
        let _ = console.writer.write_all(b"L");
        let opened = wait_for(&seen, Instant::now() + Duration::from_secs(60), |s| {
            s.open && s.kept > 0
        });
        if opened {
            figures = Some(stream(
                &mut console,
                &seen,
                pid,
                member_logs,
                pods,
                resident_before,
                sockets_before,
            ));
        } else {
            eprintln!("log_pane: the pane did not open with lines within 60 s");
        }
        let _ = console.writer.write_all(b"\x1b");
        std::thread::sleep(Duration::from_millis(300));
    } else {
        eprintln!("log_pane: the fleet's clusters were not all Ready within 120 s");
    }
    console.quit();
    let _ = reading.join();
    figures
}

/// Presses `f` up to `count` times, one every `KEY_GAP`, until `until`; each key's latency is
/// from its write to the terminal to the first screen whose status row shows follow turned
/// the other way. Returns the latencies and how many keys were not shown within 5 s.
fn press_keys(
    console: &mut pty::Console,
    seen: &Mutex<Seen>,
    count: usize,
    until: Instant,
) -> (Vec<Duration>, usize) {
    let mut latencies = Vec::new();
    let mut missed = 0;
    for _ in 0..count {
        if Instant::now() + KEY_GAP >= until {
            break;
        }
        let Some(was) = seen.lock().ok().and_then(|s| s.following) else {
            break;
        };
        let sent = Instant::now();
        if console.writer.write_all(b"f").is_err() {
            break;
        }
        let shown = wait_for(seen, sent + Duration::from_secs(5), |s| {
            s.following == Some(!was) && s.flipped.is_some_and(|at| at >= sent)
        });
        match seen.lock().ok().and_then(|s| s.flipped).filter(|_| shown) {
            Some(at) => latencies.push(at.saturating_duration_since(sent)),
            None => missed += 1,
        }
        std::thread::sleep(KEY_GAP);
    }
    (latencies, missed)
}

fn stream(
    console: &mut pty::Console,
    seen: &Mutex<Seen>,
    pid: u32,
    member_logs: Vec<PathBuf>,
    pods: usize,
    resident_before: f64,
    sockets_before: usize,
) -> Figures {
    // The pane follows its first MAX_FOLLOWED containers; every member's log feeds the same
    // number of lines to each stream on it, so the files' rate sets the total.
    let followed = pods.min(MAX_FOLLOWED);
    let per_file = lines_per_second() / followed as f64;
    // The pane open and its streams quiet: the same keys give the machine's own noise.
    std::thread::sleep(Duration::from_secs(2));
    let (idle, idle_missed) = press_keys(
        console,
        seen,
        idle_keys(),
        Instant::now() + Duration::from_secs(60),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let writer = {
        let (stop, written) = (stop.clone(), written.clone());
        std::thread::spawn(move || write_lines(member_logs, per_file, stop, written))
    };
    let started = Instant::now();
    // Resident memory once a second while the lines come.
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                samples.push((
                    started.elapsed(),
                    procfs::status_mib(pid, "VmRSS:").unwrap_or(0.0),
                ));
                std::thread::sleep(Duration::from_secs(1));
            }
            samples
        })
    };
    let counted = |seen: &Mutex<Seen>| seen.lock().map_or(0, |s| s.kept + s.dropped);
    let cpu_start = procfs::cpu_seconds(pid);
    std::thread::sleep(WARM_UP);
    let counted_warm = counted(seen);
    let written_warm = written.load(Ordering::Relaxed);
    let (_, sockets) = procfs::fds(pid);
    let until = started + streaming();
    let (latencies, missed) = press_keys(console, seen, keys(), until);
    if let Some(rest) = streaming().checked_sub(started.elapsed()) {
        std::thread::sleep(rest);
    }
    let elapsed = started.elapsed();
    let counted_end = counted(seen);
    let written_end = written.load(Ordering::Relaxed);
    let peak = procfs::status_mib(pid, "VmHWM:").unwrap_or(0.0);
    let cpu = (procfs::cpu_seconds(pid) - cpu_start) / elapsed.as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let _ = writer.join();
    let samples = sampler.join().unwrap_or_default();
    // The samples nearest the warm-up's end, a third and two thirds of the way, and the end.
    let resident: Vec<(Duration, f64)> = [0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0]
        .iter()
        .filter_map(|share| {
            let at = WARM_UP + streaming().saturating_sub(WARM_UP).mul_f64(*share);
            samples.iter().min_by_key(|(t, _)| t.abs_diff(at)).copied()
        })
        .collect();
    // Lines sent past the warm-up, down every followed stream, against the lines the pane
    // counted over the same span (a stream's lines take a moment to arrive: the span's ends
    // are read the same way).
    let (kept, dropped) = seen.lock().map_or((0, 0), |s| (s.kept, s.dropped));
    Figures {
        followed,
        sockets_added: sockets.saturating_sub(sockets_before),
        per_file,
        sent: (written_end - written_warm) * followed as u64,
        reached: counted_end.saturating_sub(counted_warm),
        kept,
        dropped,
        key: percentiles(latencies.clone()),
        keys_seen: latencies.len(),
        keys_missed: missed,
        idle: percentiles(idle.clone()),
        idle_seen: idle.len(),
        idle_missed,
        resident_before,
        resident,
        peak,
        cpu,
    }
}

fn main() {
    let Some(kc) = testenv::kubeconfig() else {
        println!(
            "log_pane: skipped (set FLOTILLA_TESTENV_KUBECONFIG=target/testenv/kubeconfig and \
             start `cargo xtask testenv up --contexts 1000`)"
        );
        return;
    };
    let state = testenv::state().unwrap_or(Value::Null);
    let proxies = state["proxies"]["count"].as_u64().unwrap_or(0) as usize;
    if proxies < contexts() {
        println!(
            "log_pane: skipped (the raw-contexts tier is not up with {} contexts: `cargo xtask \
             testenv up --contexts 1000`)",
            contexts()
        );
        return;
    }
    let latency = match state["proxies"]["latencyMs"].as_u64() {
        Some(0) | None => "20–100 ms".to_string(),
        Some(ms) => format!("{ms} ms"),
    };
    let members = testenv::members(&state);
    let reaches = testenv::member_of_context(&members);
    let used: std::collections::BTreeSet<&str> = (0..contexts())
        .filter_map(|i| reaches.get(&format!("c{i:04}")).map(String::as_str))
        .collect();
    let pods = contexts() * replicas();
    // KWOK follows each log as a kubelet does, with an inotify instance per followed log; the
    // kernel's per-user cap on those (128 by default) would end the rest of the streams.
    let inotify: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_instances")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0);
    let followed = pods.min(MAX_FOLLOWED);
    if inotify < followed + 64 {
        println!(
            "log_pane: skipped (KWOK needs an inotify instance per followed log, {followed} of              them, but fs.inotify.max_user_instances is {inotify}: raise it, e.g. `sysctl -w              fs.inotify.max_user_instances=1024`)"
        );
        return;
    }
    if !testenv::place(&kc, &members, WORKLOAD, replicas()) {
        println!("log_pane: skipped (the Deployment's pods did not all run on the members)");
        testenv::remove(&kc, &members, WORKLOAD);
        return;
    }
    let fleet = testenv::deployment_everywhere(contexts(), WORKLOAD, replicas());
    let logs: Vec<PathBuf> = members
        .iter()
        .filter(|m| used.contains(m.name.as_str()))
        .map(|m| m.log.clone())
        .collect();
    let kept: Vec<(PathBuf, Option<Vec<u8>>)> = logs
        .iter()
        .map(|path| (path.clone(), std::fs::read(path).ok()))
        .collect();
    let figures = run(&kc, fleet.path(), logs, pods);
    for (path, text) in kept {
        if let Some(text) = text {
            let _ = std::fs::write(&path, text);
        }
    }
    testenv::remove(&kc, &members, WORKLOAD);
    let Some(f) = figures else {
        println!("log_pane: no figures (see above)");
        return;
    };
    let span = streaming().saturating_sub(WARM_UP).as_secs_f64();
    println!(
        "| log pane, {} contexts at {latency} ({} members), {pods} pods, 250x80 | figure |",
        contexts(),
        used.len()
    );
    println!("|---|---|");
    println!(
        "| containers the pane follows (at most {MAX_FOLLOWED}); sockets the console opened after L (the streams, and the reads that found the pods) | {} of {pods}; {} |",
        f.followed, f.sockets_added
    );
    println!(
        "| lines sent down the followed streams after a {} s warm-up ({:.1} a second into each member's log) | {} = {:.0} a second |",
        WARM_UP.as_secs(),
        f.per_file,
        f.sent,
        f.sent as f64 / span
    );
    println!(
        "| lines that reached the pane over the same span (kept + dropped, as its status counts them) | {} = {:.0} a second; at the end {} kept, {} dropped in all |",
        f.reached,
        f.reached as f64 / span,
        f.kept,
        f.dropped
    );
    let (p50, p99) = f.idle;
    println!(
        "| key → frame with the pane open, its streams quiet (`f`, {} keys, {} not shown within 5 s), p50/p99 ms | {}/{} |",
        f.idle_seen,
        f.idle_missed,
        ms(p50),
        ms(p99),
    );
    let (p50, p99) = f.key;
    println!(
        "| key → frame while streaming (`f`, {} keys, {} not shown within 5 s), p50/p99 ms | {}/{} (budget p99 ≤ 16 ms: {}) |",
        f.keys_seen,
        f.keys_missed,
        ms(p50),
        ms(p99),
        if p99 <= Duration::from_millis(16) && f.keys_missed == 0 {
            "met"
        } else {
            "not met"
        }
    );
    let over_time: Vec<String> = f
        .resident
        .iter()
        .map(|(at, mib)| format!("{mib:.0} at {} s", at.as_secs()))
        .collect();
    println!(
        "| console resident MiB: before L; while streaming; peak | {:.0}; {}; {:.0} |",
        f.resident_before,
        over_time.join(", "),
        f.peak
    );
    println!(
        "| console CPU while streaming, share of one core | {:.0} % |",
        f.cpu * 100.0
    );
}
