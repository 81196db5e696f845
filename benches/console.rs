//! The path an operator waits on, at 2,000 × 1,000 and 10,000 × 1,000 in a 250×80 terminal:
//! the real console loop (`Console::drive`) on a test backend, started exactly as
//! `flotilla demo --demo-scale C,R` starts it (the simulated fleet is built and placed in the
//! background while the console draws), keys sent one at a time as a keyboard sends them, and
//! then a sustained flood of 2,000 cell changes a second from the backend with keys still
//! arriving — first on the fleet as it starts (grouped into heat strips), then with both
//! panes sorted by worst status and filtered to rows with a Drifted cell (`:sort worst`,
//! `:status drifted`), so every change can move, hide or show rows. Prints one table: first
//! frame, fleet shown, settled (no Pending cell), key → frame p50/p99 idle and under each
//! flood, event → frame p50/p99 under each flood, resident memory after settling. A
//! second table times the start on a fleet directory of the same sizes (the console path of
//! `flotilla --fleet DIR console`): first frame and the loaded fleet shown. Before both, a
//! table starts the real binary (`flotilla demo --demo-scale C,R`) in a 250×80 pseudo-terminal
//! and times process start → the first frame on its screen (first, while this process is
//! still small and quiet: forking it later, with two simulated fleets behind it, costs more
//! than the binary's own start). A criterion group then times one settled frame's draw.
//! Run: `cargo bench --bench console` (`cargo test` runs it on one small fleet, to check it
//! runs).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{Event, KeyCode};
use flotilla::app::state::SortKey;
use flotilla::app::{self, Action, update};
use flotilla::backend::sim::{Scenario, SimCore};
use flotilla::cli::Cli;
use flotilla::config::keymap::Keymap;
use flotilla::config::theme::Theme;
use flotilla::console::FrameDrawn;
use flotilla::engine::load_fleet;
use flotilla::messages::{BackendEvent, CellRef, CellUpdate};
use flotilla::model::{CellStatus, StatusKind};
use flotilla::views::{self, ViewContext};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc;

use frames::{KEY_GAP, key, ms, percentiles, press_keys, to_frames, wait_frame};

#[path = "support/frames.rs"]
mod frames;
#[path = "support/mode.rs"]
mod mode;
#[path = "support/pty.rs"]
mod pty;

/// The fleets measured, as (clusters, resources); a check runs one small fleet.
fn sizes() -> Vec<(usize, usize)> {
    mode::sized(vec![(2_000, 1_000), (10_000, 1_000)], vec![(200, 100)])
}

/// Cell changes a second during the flood, sent as batches every `FLOOD_TICK`.
const FLOOD_PER_SECOND: usize = 2_000;
const FLOOD_TICK: Duration = Duration::from_millis(10);
/// Keys pressed in each phase (a check presses a few).
fn keys_per_phase() -> usize {
    mode::sized(150, 10)
}

/// One frame as the loop reported it: when, what it covered, and whether the fleet had
/// settled (loaded, and no cell Pending).
#[derive(Clone, Copy)]
struct Seen {
    at: Instant,
    drawn: FrameDrawn,
    loaded: bool,
    settled: bool,
    /// Both panes sorted by worst status and only rows with a Drifted cell shown.
    sorted_filtered: bool,
    /// In the placement editor: the edit revision its preview shows.
    previewed: Option<u64>,
}

impl frames::Frame for Seen {
    fn at(&self) -> Instant {
        self.at
    }
    fn drawn(&self) -> FrameDrawn {
        self.drawn
    }
}

/// The revision the open placement editor's preview shows, if one is open and previewed.
fn previewed(state: &app::state::State) -> Option<u64> {
    match &state.mode {
        app::state::Mode::Placement(editor) if editor.preview.is_some() => Some(editor.previewed),
        _ => None,
    }
}

#[derive(Default)]
struct Row {
    first_frame: Duration,
    loaded: Duration,
    settled: Duration,
    key_idle: (Duration, Duration),
    key_flood: (Duration, Duration),
    event_flood: (Duration, Duration),
    key_sorted: (Duration, Duration),
    event_sorted: (Duration, Duration),
    resident_mib: f64,
}

fn resident_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

/// Types keys without timing them, and waits until a frame has handled them all.
fn type_keys(
    frames: &Mutex<Vec<Seen>>,
    keys: &futures::channel::mpsc::UnboundedSender<std::io::Result<Event>>,
    pressed: &mut u64,
    codes: impl IntoIterator<Item = KeyCode>,
) {
    for code in codes {
        if keys.unbounded_send(key(code)).is_err() {
            return;
        }
        *pressed += 1;
    }
    let wanted = *pressed;
    let _ = wait_frame(frames, Instant::now() + Duration::from_secs(30), |seen| {
        seen.drawn.inputs >= wanted
    });
}

/// The palette line `line`, typed and entered.
fn palette(line: &str) -> Vec<KeyCode> {
    std::iter::once(KeyCode::Char(':'))
        .chain(line.chars().map(KeyCode::Char))
        .chain([KeyCode::Enter])
        .collect()
}

/// The backend's flood: where its changes go, when each batch reached the loop, and where
/// its generator is, so a second flood goes on where the first stopped.
struct Flood {
    clusters: usize,
    resources: usize,
    seed: u64,
    to_loop: mpsc::UnboundedSender<BackendEvent>,
    sent: Arc<Mutex<Vec<(u64, Instant)>>>,
}

impl Flood {
    /// Sends `FLOOD_PER_SECOND` cell changes a second over placed-looking cells, statuses
    /// alternating so every change is a real one, while `keys_per_phase()` keys are pressed;
    /// returns key → frame and event → frame p50/p99 over that flood.
    fn run(
        &mut self,
        frames: &Mutex<Vec<Seen>>,
        keys: &futures::channel::mpsc::UnboundedSender<std::io::Result<Event>>,
        pressed: &mut u64,
    ) -> ((Duration, Duration), (Duration, Duration)) {
        if let Ok(mut log) = self.sent.lock() {
            log.clear();
        }
        let flooding = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let still = flooding.clone();
        let sender = self.to_loop.clone();
        let (clusters, resources, start) = (self.clusters, self.resources, self.seed);
        let flooder = std::thread::spawn(move || {
            let per_tick = FLOOD_PER_SECOND * FLOOD_TICK.as_millis() as usize / 1000;
            let mut n = start;
            while still.load(std::sync::atomic::Ordering::Relaxed) {
                let updates = (0..per_tick)
                    .map(|_| {
                        n = n
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let cell = CellRef {
                            resource: ((n >> 33) % resources as u64) as u32,
                            cluster: ((n >> 13) % clusters as u64) as u32,
                        };
                        let status = if n & 1 == 0 {
                            CellStatus::Drifted
                        } else {
                            CellStatus::InSync
                        };
                        CellUpdate {
                            cell,
                            status,
                            message: None,
                        }
                    })
                    .collect();
                if sender.send(BackendEvent::Cells(updates)).is_err() {
                    break;
                }
                std::thread::sleep(FLOOD_TICK);
            }
            n
        });
        std::thread::sleep(Duration::from_secs(1));
        let key_latencies = percentiles(press_keys(frames, keys, pressed, keys_per_phase()));
        flooding.store(false, std::sync::atomic::Ordering::Relaxed);
        self.seed = flooder.join().unwrap_or(start);
        std::thread::sleep(Duration::from_millis(200));
        let sent = self.sent.lock().map(|log| log.clone()).unwrap_or_default();
        let seen = frames
            .lock()
            .map(|frames| frames.clone())
            .unwrap_or_default();
        (key_latencies, percentiles(to_frames(&seen, &sent)))
    }
}

fn run_size(clusters: usize, resources: usize) -> Row {
    let mut row = Row::default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let scale = format!("{clusters},{resources}");
    let cli = Cli::parse_from(["flotilla", "--demo-scale", scale.as_str(), "demo"]);
    let frames: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let (keys, inputs) = futures::channel::mpsc::unbounded();
    let (flood_tx, mut flood_rx) = mpsc::unbounded_channel::<BackendEvent>();
    // Which forwarded event index each flood batch got, and when it was sent.
    let flood_sent: Arc<Mutex<Vec<(u64, Instant)>>> = Arc::default();
    let started = Instant::now();
    let recorder = frames.clone();
    let sent_log = flood_sent.clone();
    let looping = runtime.spawn(async move {
        let Ok(mut console) = flotilla::launch::console(&cli.global, None).await else {
            panic!("the demo console did not start");
        };
        // One channel in front of the loop, so flood batches are numbered in the order the
        // loop receives them, among the simulator's own events.
        let mut from_sim = std::mem::replace(&mut console.events, mpsc::unbounded_channel().1);
        let (to_loop, loop_events) = mpsc::unbounded_channel();
        console.events = loop_events;
        tokio::spawn(async move {
            let mut index = 0u64;
            loop {
                let (event, flood) = tokio::select! {
                    Some(event) = from_sim.recv() => (event, false),
                    Some(event) = flood_rx.recv() => (event, true),
                    else => break,
                };
                if flood && let Ok(mut log) = sent_log.lock() {
                    log.push((index, Instant::now()));
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
                let settled = loaded && state.cells.totals().get(StatusKind::Pending) == 0;
                let sorted_filtered = state.cluster_view.sort == SortKey::Worst
                    && state.resource_view.sort == SortKey::Worst
                    && state.status_filter == Some(StatusKind::Drifted);
                if let Ok(mut frames) = recorder.lock() {
                    frames.push(Seen {
                        at: Instant::now(),
                        drawn,
                        loaded,
                        settled,
                        sorted_filtered,
                        previewed: previewed(state),
                    });
                }
            })
            .await;
    });
    let deadline = started + Duration::from_secs(180);
    let first = wait_frame(&frames, deadline, |_| true).expect("a first frame");
    row.first_frame = first.at - started;
    if let Some(seen) = wait_frame(&frames, deadline, |seen| seen.loaded) {
        row.loaded = seen.at - started;
    }
    match wait_frame(&frames, deadline, |seen| seen.settled) {
        Some(seen) => row.settled = seen.at - started,
        None => eprintln!("{clusters}×{resources}: did not settle within 180 s"),
    }
    row.resident_mib = resident_mib();
    let mut pressed = 0;
    row.key_idle = percentiles(press_keys(&frames, &keys, &mut pressed, keys_per_phase()));

    let mut flood = Flood {
        clusters,
        resources,
        seed: 0,
        to_loop: flood_tx,
        sent: flood_sent,
    };
    (row.key_flood, row.event_flood) = flood.run(&frames, &keys, &mut pressed);

    // The same again with both panes sorted by worst status and filtered to Drifted rows.
    let mut view = palette("sort worst");
    view.push(KeyCode::Tab);
    view.extend(palette("sort worst"));
    view.push(KeyCode::Tab);
    view.extend(palette("status drifted"));
    type_keys(&frames, &keys, &mut pressed, view);
    if wait_frame(&frames, Instant::now() + Duration::from_secs(10), |seen| {
        seen.sorted_filtered
    })
    .is_none()
    {
        eprintln!("{clusters}×{resources}: the palette did not sort and filter the panes");
    }
    (row.key_sorted, row.event_sorted) = flood.run(&frames, &keys, &mut pressed);
    let _ = keys.unbounded_send(key(KeyCode::Char('q')));
    let _ = runtime.block_on(looping);
    runtime.shutdown_timeout(Duration::from_secs(1));
    row
}

/// Starts the console exactly as `flotilla --fleet DIR console` does on a fleet directory of
/// `clusters` × `resources` whose contexts all point at a closed port: when the first frame
/// was drawn and when the loaded fleet was shown, from the start of the console path.
fn live_start(clusters: usize, resources: usize) -> (Duration, Duration) {
    let dir = tempfile::tempdir().expect("temp dir");
    let fleet = dir.path().join("fleet");
    for file in flotilla::fleet::demo::synthetic_fleet(clusters, resources) {
        let path = fleet.join(&file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("fleet directory");
        }
        std::fs::write(&path, &file.text).expect("fleet file");
    }
    let mut kubeconfig = String::from(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: closed\n  cluster: {server: 'https://127.0.0.1:1'}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n",
    );
    for i in 0..clusters {
        kubeconfig.push_str(&format!(
            "- name: store-{i:05}\n  context: {{cluster: closed, user: u}}\n"
        ));
    }
    let kubeconfig_path = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig_path, kubeconfig).expect("kubeconfig");
    let started = Instant::now();
    let console = DirectoryConsole::start(&kubeconfig_path, &fleet);
    let frames = &console.frames;
    let deadline = started + Duration::from_secs(180);
    let first =
        wait_frame(frames, deadline, |_| true).map_or(Duration::MAX, |seen| seen.at - started);
    let shown = wait_frame(frames, deadline, |seen| seen.loaded)
        .map_or(Duration::MAX, |seen| seen.at - started);
    console.quit();
    (first, shown)
}

/// The console as `flotilla --kubeconfig K --fleet DIR console` starts it, in a 250×80 test
/// terminal, every frame recorded.
struct DirectoryConsole {
    runtime: tokio::runtime::Runtime,
    frames: Arc<Mutex<Vec<Seen>>>,
    keys: futures::channel::mpsc::UnboundedSender<std::io::Result<Event>>,
    looping: tokio::task::JoinHandle<()>,
}

impl DirectoryConsole {
    fn start(kubeconfig: &std::path::Path, fleet: &std::path::Path) -> DirectoryConsole {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let cli = Cli::parse_from([
            "flotilla".as_ref(),
            "--kubeconfig".as_ref(),
            kubeconfig.as_os_str(),
            "--fleet".as_ref(),
            fleet.as_os_str(),
            "console".as_ref(),
        ]);
        let frames: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let (keys, inputs) = futures::channel::mpsc::unbounded();
        let recorder = frames.clone();
        let looping = runtime.spawn(async move {
            let Ok(console) = flotilla::launch::console(&cli.global, None).await else {
                panic!("the console did not start on the fleet directory");
            };
            let mut terminal = Terminal::new(TestBackend::new(250, 80)).expect("terminal");
            let _ = console
                .drive(&mut terminal, inputs, None, |state, drawn| {
                    let loaded = state.loading.is_none() && !state.clusters.is_empty();
                    let settled = loaded && state.cells.totals().get(StatusKind::Pending) == 0;
                    if let Ok(mut frames) = recorder.lock() {
                        frames.push(Seen {
                            at: Instant::now(),
                            drawn,
                            loaded,
                            settled,
                            sorted_filtered: false,
                            previewed: previewed(state),
                        });
                    }
                })
                .await;
        });
        DirectoryConsole {
            runtime,
            frames,
            keys,
            looping,
        }
    }

    fn press(&self, code: KeyCode) {
        let _ = self.keys.unbounded_send(key(code));
    }

    fn quit(self) {
        self.press(KeyCode::Char('q'));
        let _ = self.runtime.block_on(self.looping);
        self.runtime.shutdown_timeout(Duration::from_secs(1));
    }
}

fn whole_path(_: &mut Criterion) {
    println!(
        "console whole path, 250x80, {FLOOD_PER_SECOND} cell changes/s in the flood, {} keys per phase",
        keys_per_phase()
    );
    println!(
        "{:<14} {:>12} {:>11} {:>11} {:>17} {:>17} {:>19} {:>17} {:>19} {:>10}",
        "fleet",
        "first frame",
        "fleet shown",
        "settled",
        "key→frame idle",
        "key→frame flood",
        "event→frame flood",
        "key→frame sorted",
        "event→frame sorted",
        "resident"
    );
    println!(
        "{:<14} {:>12} {:>11} {:>11} {:>17} {:>17} {:>19} {:>17} {:>19} {:>10}",
        "",
        "ms",
        "ms",
        "ms",
        "p50/p99 ms",
        "p50/p99 ms",
        "p50/p99 ms",
        "p50/p99 ms",
        "p50/p99 ms",
        "MiB"
    );
    for (clusters, resources) in sizes() {
        let row = run_size(clusters, resources);
        let pair = |(p50, p99): (Duration, Duration)| format!("{}/{}", ms(p50), ms(p99));
        println!(
            "{:<14} {:>12} {:>11} {:>11} {:>17} {:>17} {:>19} {:>17} {:>19} {:>10.0}",
            format!("{clusters}×{resources}"),
            ms(row.first_frame),
            ms(row.loaded),
            ms(row.settled),
            pair(row.key_idle),
            pair(row.key_flood),
            pair(row.event_flood),
            pair(row.key_sorted),
            pair(row.event_sorted),
            row.resident_mib,
        );
    }
}

fn live_directory(_: &mut Criterion) {
    println!("console start on a fleet directory (contexts unreachable), 250x80");
    println!(
        "{:<14} {:>12} {:>11}",
        "fleet", "first frame", "fleet shown"
    );
    println!("{:<14} {:>12} {:>11}", "", "ms", "ms");
    for (clusters, resources) in sizes() {
        let (first, shown) = live_start(clusters, resources);
        println!(
            "{:<14} {:>12} {:>11}",
            format!("{clusters}×{resources}"),
            ms(first),
            ms(shown)
        );
    }
}

fn settled_state(clusters: usize, resources: usize) -> app::state::State {
    let (fleet, errors) = load_fleet(&flotilla::fleet::demo::synthetic_fleet(clusters, resources));
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

fn frame(c: &mut Criterion) {
    let (clusters, resources) = sizes()[0];
    let large = settled_state(clusters, resources);
    let theme = Theme::load(None, false);
    let keymap = Keymap::built_in("default");
    let context = ViewContext {
        theme: &theme,
        keymap: &keymap,
        ascii: false,
    };
    let mut terminal = Terminal::new(TestBackend::new(250, 80)).expect("terminal");
    let mut group = c.benchmark_group("console_frame_250x80");
    group.bench_function(format!("{clusters}x{resources} settled draw"), |b| {
        b.iter(|| {
            terminal
                .draw(|frame| views::render(frame, &large, &context))
                .map(|_| ())
        })
    });
    group.finish();
}

/// Starts the real binary in a 250×80 pseudo-terminal and times spawn → the first frame on
/// its screen (its header, which names the fleet), then quits it with `q`.
fn process_start(clusters: usize, resources: usize) -> Duration {
    use std::io::{Read, Write};
    let scale = format!("{clusters},{resources}");
    let started = Instant::now();
    let mut console = pty::start(
        std::path::Path::new(env!("CARGO_BIN_EXE_flotilla")),
        &["demo", "--demo-scale", &scale],
    );
    let mut screen = pty::screen();
    let mut buffer = [0u8; 65536];
    let first = loop {
        let n = console.reader.read(&mut buffer).expect("read the pty");
        assert!(n > 0, "flotilla ended before drawing");
        screen.process(&buffer[..n]);
        if pty::asks_cursor_position(&buffer[..n]) {
            let _ = console.writer.write_all(pty::CURSOR_AT_HOME);
        }
        if screen.screen().contents().contains("demo-scale") {
            break started.elapsed();
        }
    };
    console.quit();
    first
}

fn from_process_start(_: &mut Criterion) {
    println!("the real binary in a 250x80 pseudo-terminal: process start → first frame");
    println!("{:<14} {:>12}", "fleet", "first frame");
    let repeats = mode::sized(5, 1);
    println!("{:<14} {:>12}", "", format!("ms (median of {repeats})"));
    for (clusters, resources) in sizes() {
        let mut runs: Vec<Duration> = (0..repeats)
            .map(|_| process_start(clusters, resources))
            .collect();
        runs.sort();
        println!(
            "{:<14} {:>12}",
            format!("{clusters}×{resources}"),
            ms(runs[runs.len() / 2])
        );
    }
}

/// The editors' fleets, as (clusters, templates under one shared PropagationPolicy).
fn editor_sizes() -> Vec<(usize, usize)> {
    mode::sized(vec![(1_000, 2_000), (1_000, 10_000)], vec![(20, 50)])
}

/// A fleet directory of `clusters` Karmada clusters (every tenth `env: dev`, the rest
/// `env: prod`, seven regions) and `templates` ConfigMaps that one PropagationPolicy places
/// on the prod clusters; a kubeconfig whose contexts (one a cluster) point at a closed port.
fn shared_policy_fleet(dir: &std::path::Path, clusters: usize, templates: usize) {
    let fleet = dir.join("fleet");
    std::fs::create_dir_all(&fleet).expect("fleet directory");
    let mut inventory = String::new();
    let mut kubeconfig = String::from(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: closed\n  cluster: {server: 'https://127.0.0.1:1'}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n",
    );
    for c in 0..clusters {
        let env = if c % 10 == 0 { "dev" } else { "prod" };
        inventory.push_str(&format!(
            "---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {{name: c{c:05}, labels: {{env: {env}, region: r{}}}}}\nspec: {{syncMode: Push}}\n",
            c % 7
        ));
        kubeconfig.push_str(&format!(
            "- name: c{c:05}\n  context: {{cluster: closed, user: u}}\n"
        ));
    }
    let mut objects = String::from(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: shared, namespace: ns}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]\n  placement:\n    clusterAffinity:\n      labelSelector: {matchLabels: {env: prod}}\n",
    );
    for t in 0..templates {
        objects.push_str(&format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{t}, namespace: ns}}\ndata: {{k: v{t}}}\n"
        ));
    }
    std::fs::write(fleet.join("clusters.yaml"), inventory).expect("inventory");
    std::fs::write(fleet.join("fleet.yaml"), objects).expect("templates");
    std::fs::write(dir.join("kubeconfig"), kubeconfig).expect("kubeconfig");
}

/// The placement editor on a shared-policy fleet, in the console on its fleet directory once
/// every cell has answered:
/// `e` → the first previewed frame, and each `space` (toggling the first cluster in the
/// policy's names, a new preview of every template it places) → the re-previewed frame.
fn editor_keys(dir: &std::path::Path) -> (Duration, (Duration, Duration)) {
    let console = DirectoryConsole::start(&dir.join("kubeconfig"), &dir.join("fleet"));
    let frames = &console.frames;
    let deadline = Instant::now() + Duration::from_secs(300);
    // Every cell answered (here: its cluster unreachable), so what is timed is the editor,
    // not the first pass over the fleet's cells.
    wait_frame(frames, deadline, |seen| seen.settled).expect("the fleet settles");
    std::thread::sleep(Duration::from_secs(1));
    let opened = Instant::now();
    console.press(KeyCode::Char('e'));
    let first = wait_frame(frames, deadline, |seen| seen.previewed.is_some())
        .expect("the editor opens with a preview");
    let open = first.at - opened;
    let mut revision = first.previewed.unwrap_or(0);
    let mut latencies = Vec::new();
    for _ in 0..mode::sized(30, 3) {
        std::thread::sleep(KEY_GAP);
        let sent = Instant::now();
        console.press(KeyCode::Char(' '));
        let seen = wait_frame(frames, deadline, |seen| {
            seen.at >= sent && seen.previewed.is_some_and(|p| p > revision)
        })
        .expect("a re-previewed frame");
        revision = seen.previewed.unwrap_or(revision);
        latencies.push(seen.at - sent);
    }
    console.press(KeyCode::Esc);
    console.quit();
    (open, percentiles(latencies))
}

/// `flotilla placement set --dry-run` on the shared policy, the real binary, start to exit:
/// excluding one region moves every template off that region's clusters.
fn placement_set(dir: &std::path::Path) -> Duration {
    let started = Instant::now();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--fleet")
        .arg(dir.join("fleet"))
        .args([
            "placement",
            "set",
            "ConfigMap/ns/cm1",
            "--cluster-selector",
            "env=prod,region!=r3",
            "--dry-run",
        ])
        .output()
        .expect("flotilla runs");
    let took = started.elapsed();
    assert_eq!(
        output.status.code(),
        Some(1),
        "a previewed change exits 1: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    took
}

fn editors(_: &mut Criterion) {
    println!(
        "placement editor and placement set on N templates under one shared policy, 250x80 \
         (console on the fleet directory, contexts unreachable)"
    );
    println!(
        "{:<16} {:>12} {:>20} {:>24}",
        "clusters×templates", "editor open", "key→re-preview", "placement set --dry-run"
    );
    let repeats = mode::sized(3, 1);
    println!(
        "{:<16} {:>12} {:>20} {:>24}",
        "",
        "ms",
        "p50/p99 ms",
        format!("ms (median of {repeats})")
    );
    for (clusters, templates) in editor_sizes() {
        let dir = tempfile::tempdir().expect("temp dir");
        shared_policy_fleet(dir.path(), clusters, templates);
        let (open, (p50, p99)) = editor_keys(dir.path());
        let mut runs: Vec<Duration> = (0..repeats).map(|_| placement_set(dir.path())).collect();
        runs.sort();
        println!(
            "{:<16} {:>12} {:>20} {:>24}",
            format!("{clusters}×{templates}"),
            ms(open),
            format!("{}/{}", ms(p50), ms(p99)),
            ms(runs[runs.len() / 2])
        );
    }
}

criterion_group!(
    benches,
    from_process_start,
    whole_path,
    live_directory,
    editors,
    frame
);
criterion_main!(benches);
