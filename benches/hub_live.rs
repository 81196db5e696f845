//! The console's hub backend on a big Karmada or OCM hub of real API servers, as a user waits
//! on it: start → the first view (built from the informer caches once they synced, as the
//! console's launch builds it) → the backend following their watch events ("caches synced"),
//! and the backend's CPU until then, next to two floors on the same server: the list of every
//! Work in pages of 500 read as bytes (timed before the backend starts and again after it
//! stopped), and `kubectl get works -A -o json` (`manifestworks` on OCM) up to the size where
//! kubectl, which holds the whole list, still fits in memory; the same list through kube's
//! watcher alone, into a cache of the Works alone, and every other kind cached without the
//! Works (where a slow sync's time goes); then Work status changes written at a steady rate,
//! each timed from its write to the cell delta the backend hands the app, and apart from that,
//! from its write to the event a plain watch of the same API server receives (the server's
//! share of the wait); the backend's CPU under that load and its resident memory against the
//! JSON size of what it caches. Prints one table.
//!
//! Start the scale hub first (`cargo xtask testenv up --scale karmada|ocm --clusters N
//! --resources M`), then `FLOTILLA_TESTENV_KUBECONFIG=target/testenv/kubeconfig cargo bench
//! --bench hub_live`. Without a scale hub it says so and measures nothing.
//!
//! The backend runs in a child process of this binary, so its CPU and memory are its own; the
//! parent writes the changes and runs the plain watch. Each change sets a condition of one Work
//! (Karmada: `Applied` False; OCM: the ManifestWork's `Degraded` True) with a message carrying
//! the write's wall-clock time; the child prints, for each cell delta carrying such a message,
//! how long after the write it arrived (one clock: same machine).

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;
use serde_json::{Value, json};

use flotilla::backend::hub;
use flotilla::backend::kube::kubeconfig::Timeouts;
use flotilla::messages::BackendEvent;

/// Status changes written a second, and for how long.
const RATE: u64 = 200;
const CHURN_FOR: Duration = Duration::from_secs(30);
const IN_FLIGHT: usize = 16;
const CHILD: &str = "FLOTILLA_HUB_LIVE_CHILD";
const MARK: &str = "hub-live-sent-";

fn now_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

fn kubeconfig() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os("FLOTILLA_TESTENV_KUBECONFIG")?);
    Some(if path.is_relative() {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
    } else {
        path
    })
}

fn state() -> Option<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/testenv/state.json");
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

fn proc_field(pid: u32, field: &str) -> f64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix(field))?
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

/// utime + stime of `pid`, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the command name's closing parenthesis; utime and stime are 14th and 15th.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // 100 ticks a second on Linux.
    (ticks(11) + ticks(12)) / 100.0
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// The child: the hub backend the console runs, reporting what the parent times.
async fn child(kubeconfig: PathBuf) {
    let started = Instant::now();
    let hub = match hub::connect(Some(&kubeconfig), "hub", Timeouts::default()).await {
        Ok(hub) => hub,
        Err(err) => {
            println!("error {err}");
            return;
        }
    };
    let first = match hub::console::first_view::first_view(&hub).await {
        Ok(first) => first,
        Err(err) => {
            println!("error {err}");
            return;
        }
    };
    println!("first {}", started.elapsed().as_secs_f64());
    if let Some((objects, bytes)) = first.footprint() {
        println!("stores {objects} {bytes}");
    }
    let (events, mut received) = tokio::sync::mpsc::unbounded_channel();
    let _reads = hub::console::spawn_readonly(hub, first, None, events);
    let mut relists = hub::cache::relists();
    while let Some(event) = received.recv().await {
        if hub::cache::relists() > relists {
            relists = hub::cache::relists();
            println!("relist {}", started.elapsed().as_secs_f64());
        }
        match event {
            BackendEvent::Notice(text) if text.contains("caches synced") => {
                println!("synced {}", started.elapsed().as_secs_f64());
            }
            BackendEvent::Cells(cells) => {
                let arrived = now_nanos();
                for cell in cells {
                    let text = format!("{:?} {:?}", cell.status, cell.message);
                    if let Some(sent) = sent_at(&text) {
                        println!("delta {}", arrived.saturating_sub(sent));
                    }
                }
            }
            _ => {}
        }
    }
}

/// The JSON size of every object the backend caches (each kind the hub's backend watches):
/// (objects, bytes as the API server serves them, bytes without their managedFields, which
/// the caches drop).
async fn cached_json(kubeconfig: &std::path::Path) -> (usize, usize, usize) {
    let Ok(hub) = hub::connect(Some(kubeconfig), "hub", Timeouts::default()).await else {
        return (0, 0, 0);
    };
    let (mut objects, mut served, mut kept) = (0, 0, 0);
    for kind in hub.watched_kinds().await {
        let api: Api<DynamicObject> = Api::all_with(hub.client.clone(), &kind);
        let mut params = kube::api::ListParams::default().limit(500);
        loop {
            let Ok(page) = api.list(&params).await else {
                break;
            };
            for mut object in page.items {
                objects += 1;
                served += serde_json::to_vec(&object).map_or(0, |text| text.len());
                object.metadata.managed_fields = None;
                kept += serde_json::to_vec(&object).map_or(0, |text| text.len());
            }
            match page.metadata.continue_ {
                Some(token) if !token.is_empty() => params = params.continue_token(&token),
                _ => break,
            }
        }
    }
    (objects, served, kept)
}

/// Works past which kubectl's list is not run: it decodes and holds the whole list before it
/// prints, and at 200,000 Works it was killed at 13 GiB on a 24 GiB machine whose hub held 9.
const KUBECTL_UP_TO: usize = 120_000;
/// The page size of the paged floor: kubectl's default `--chunk-size`.
const PAGE: u32 = 500;

/// Every Work listed in pages as the API server serves them.
struct Paged {
    /// The time spent waiting on the pages alone.
    seconds: f64,
    bytes: usize,
    pages: usize,
    /// Each Work's (namespace, name), read from the pages after they were timed.
    names: Vec<(String, String)>,
}

/// The floor any client pays for the Works: each page of the list requested and read whole
/// as bytes, without decoding it; the names are picked out between pages, off the clock.
async fn paged_list(kubeconfig: &PathBuf, kind: Kind) -> Option<Paged> {
    #[derive(serde::Deserialize)]
    struct Names {
        #[serde(default)]
        namespace: String,
        name: String,
    }
    #[derive(serde::Deserialize)]
    struct Item {
        metadata: Names,
    }
    #[derive(serde::Deserialize)]
    struct ListMeta {
        #[serde(rename = "continue", default)]
        continue_: String,
    }
    #[derive(serde::Deserialize)]
    struct List {
        metadata: ListMeta,
        items: Vec<Item>,
    }
    let client = hub_client(kubeconfig).await?;
    let works = kind.works();
    let request = kube::core::Request::new(format!(
        "/apis/{}/{}/{}",
        works.group, works.version, works.plural
    ));
    let mut paged = Paged {
        seconds: 0.0,
        bytes: 0,
        pages: 0,
        names: Vec::new(),
    };
    let mut params = kube::api::ListParams::default().limit(PAGE);
    loop {
        let started = Instant::now();
        let text = client
            .request_text(request.list(&params).ok()?)
            .await
            .ok()?;
        paged.seconds += started.elapsed().as_secs_f64();
        paged.bytes += text.len();
        paged.pages += 1;
        let page: List = serde_json::from_str(&text).ok()?;
        paged.names.extend(
            page.items
                .into_iter()
                .map(|item| (item.metadata.namespace, item.metadata.name)),
        );
        if page.metadata.continue_.is_empty() {
            return Some(paged);
        }
        params = params.continue_token(&page.metadata.continue_);
    }
}

/// The Works listed as the backend's cache lists them, but alone (no other kind listed or
/// watched meanwhile) and dropped as they come: kube-rs's watcher, pages of the cache's size at
/// the latest version, until its first list is complete. The seconds it took.
async fn listed_alone(kubeconfig: &PathBuf, kind: Kind) -> f64 {
    use kube::runtime::watcher;
    let Some(client) = hub_client(kubeconfig).await else {
        return f64::NAN;
    };
    let started = Instant::now();
    let config = watcher::Config::default()
        .page_size(hub::cache::LIST_PAGE_SIZE)
        .list_semantic(watcher::ListSemantic::MostRecent);
    let api: Api<DynamicObject> = Api::all_with(client, &kind.works());
    let mut events = watcher::watcher(api, config).boxed();
    while let Some(event) = events.next().await {
        match event {
            Ok(watcher::Event::InitDone) => return started.elapsed().as_secs_f64(),
            Ok(_) => {}
            Err(_) => return f64::NAN,
        }
    }
    f64::NAN
}

/// The kinds the backend caches that `chosen` picks, into caches as the backend starts them
/// (its page sizes), no other kind listed meanwhile: the seconds until all are synced.
async fn cached_alone(kubeconfig: &std::path::Path, chosen: impl Fn(&ApiResource) -> bool) -> f64 {
    let Ok(hub) = hub::connect(Some(kubeconfig), "hub", Timeouts::default()).await else {
        return f64::NAN;
    };
    let mut kinds = hub.watched_kinds().await;
    kinds.retain(chosen);
    let started = Instant::now();
    let (caches, _changes) = hub::cache::Caches::start(
        &hub.client,
        kinds,
        |watched| hub.list_page_size(watched),
        Timeouts::default().read,
        // Only the sync is timed: no change is read.
        |_, _| (),
    );
    caches.ready().await;
    started.elapsed().as_secs_f64()
}

/// The kind of hub the scale tier runs: what its Works are and how a change marks one.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Karmada,
    Ocm,
}

impl Kind {
    fn works(self) -> ApiResource {
        match self {
            Kind::Karmada => ApiResource {
                group: "work.karmada.io".into(),
                version: "v1alpha1".into(),
                api_version: "work.karmada.io/v1alpha1".into(),
                kind: "Work".into(),
                plural: "works".into(),
            },
            Kind::Ocm => ApiResource {
                group: "work.open-cluster-management.io".into(),
                version: "v1".into(),
                api_version: "work.open-cluster-management.io/v1".into(),
                kind: "ManifestWork".into(),
                plural: "manifestworks".into(),
            },
        }
    }

    /// The status patch of one change, its message carrying the write's time.
    fn change(self) -> Value {
        let message = format!("{MARK}{}", now_nanos());
        let condition = match self {
            Kind::Karmada => json!({"type": "Applied", "status": "False",
                "reason": "AppliedFailed", "message": message,
                "lastTransitionTime": "2026-12-01T00:00:00Z"}),
            Kind::Ocm => json!({"type": "Degraded", "status": "True",
                "reason": "HubLiveBench", "message": message,
                "lastTransitionTime": "2026-12-01T00:00:00Z"}),
        };
        json!({"status": {"conditions": [condition]}})
    }
}

/// The write time a change's mark carries, in `text`.
fn sent_at(text: &str) -> Option<u128> {
    text.split(MARK)
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|digits| digits.parse::<u128>().ok())
}

async fn hub_client(kubeconfig: &PathBuf) -> Option<kube::Client> {
    let raw = Kubeconfig::read_from(kubeconfig).ok()?;
    let options = KubeConfigOptions {
        context: Some("hub".into()),
        ..KubeConfigOptions::default()
    };
    let config = kube::Config::from_custom_kubeconfig(raw, &options)
        .await
        .ok()?;
    kube::Client::try_from(config).ok()
}

/// A plain watch of every Work from now on: for each marked change it sees, how long after
/// the write the API server delivered it, in ms. Runs until `stop` is dropped.
async fn watch_marks(
    kubeconfig: PathBuf,
    kind: Kind,
    stop: tokio::sync::oneshot::Receiver<()>,
) -> Vec<f64> {
    use kube::api::{ListParams, WatchEvent, WatchParams};

    let Some(client) = hub_client(&kubeconfig).await else {
        return Vec::new();
    };
    let api: Api<DynamicObject> = Api::all_with(client, &kind.works());
    let Ok(listed) = api.list_metadata(&ListParams::default().limit(1)).await else {
        return Vec::new();
    };
    let version = listed.metadata.resource_version.unwrap_or_default();
    let Ok(stream) = api.watch(&WatchParams::default(), &version).await else {
        return Vec::new();
    };
    let mut stream = std::pin::pin!(stream);
    let mut stop = std::pin::pin!(stop);
    let mut seen = Vec::new();
    loop {
        let event = tokio::select! {
            _ = &mut stop => return seen,
            event = stream.next() => event,
        };
        let Some(Ok(WatchEvent::Modified(object))) = event else {
            if event.is_none() {
                return seen;
            }
            continue;
        };
        let arrived = now_nanos();
        let text = object.data["status"]["conditions"].to_string();
        if let Some(sent) = sent_at(&text) {
            seen.push(arrived.saturating_sub(sent) as f64 / 1e6);
        }
    }
}

/// Writes `RATE` Work status changes a second for `CHURN_FOR`, round-robin over `targets`.
async fn churn(kubeconfig: &PathBuf, kind: Kind, targets: &[(String, String)]) -> (u64, u64) {
    let Some(client) = hub_client(kubeconfig).await else {
        return (0, 0);
    };
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let ticks = CHURN_FOR.as_millis() as u64 / 100;
    let (mut written, mut failed) = (0u64, 0u64);
    let mut next = 0usize;
    for _ in 0..ticks {
        tick.tick().await;
        let batch: Vec<(String, String)> = (0..RATE / 10)
            .map(|_| {
                next = (next + 7919) % targets.len().max(1);
                targets[next].clone()
            })
            .collect();
        let results: Vec<bool> = futures::stream::iter(batch)
            .map(|(namespace, name)| {
                let api: Api<DynamicObject> =
                    Api::namespaced_with(client.clone(), &namespace, &kind.works());
                async move {
                    let patch = kind.change();
                    api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                        .await
                        .is_ok()
                }
            })
            .buffer_unordered(IN_FLIGHT)
            .collect()
            .await;
        for ok in results {
            if ok {
                written += 1;
            } else {
                failed += 1;
            }
        }
    }
    (written, failed)
}

fn main() {
    let Some(kubeconfig) = kubeconfig() else {
        println!(
            "hub_live: nothing measured: set FLOTILLA_TESTENV_KUBECONFIG=target/testenv/kubeconfig \
             and start `cargo xtask testenv up --scale karmada --clusters N --resources M`"
        );
        return;
    };
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    if std::env::var_os(CHILD).is_some() {
        // With FLOTILLA_LOG set, the backend logs (its watchers' lists and errors) to the
        // default log file, as the console does.
        let _log =
            std::env::var_os("FLOTILLA_LOG").and_then(|_| flotilla::logging::init(None).ok());
        runtime.block_on(child(kubeconfig));
        return;
    }
    let scale = state().and_then(|s| s.get("scale").cloned());
    let Some((scale, kind)) = scale.and_then(|s| match s["kind"].as_str() {
        Some("karmada") => Some((s, Kind::Karmada)),
        Some("ocm") => Some((s, Kind::Ocm)),
        _ => None,
    }) else {
        println!(
            "hub_live: nothing measured: no scale hub is up (`testenv up --scale karmada|ocm …`)"
        );
        return;
    };
    let (hub_name, plural) = match kind {
        Kind::Karmada => ("Karmada", "works"),
        Kind::Ocm => ("Open Cluster Management", "manifestworks"),
    };
    let size = format!(
        "{} clusters × {} resources",
        scale["clusters"], scale["resources"]
    );

    // The floors: the API server's own list of every Work in pages of 500 (kubectl's chunk
    // size) read as bytes, and `kubectl get` of the same list where kubectl fits in memory.
    let Some(paged) = runtime.block_on(paged_list(&kubeconfig, kind)) else {
        println!("hub_live: the hub's {plural} could not be listed");
        return;
    };
    let targets = paged.names;
    if targets.is_empty() {
        println!("hub_live: the hub has no {plural}");
        return;
    }
    let kubectl_floor = if targets.len() > KUBECTL_UP_TO {
        None
    } else {
        let started = Instant::now();
        let listed = Command::new("kubectl")
            .args(["--kubeconfig", &kubeconfig.display().to_string()])
            .args(["--context", "hub", "get", plural, "-A", "-o", "json"])
            .arg("--request-timeout=0")
            .output()
            .expect("kubectl runs");
        let seconds = started.elapsed().as_secs_f64();
        if !listed.status.success() {
            println!(
                "hub_live: kubectl could not list the {plural} ({}): {}",
                listed.status,
                String::from_utf8_lossy(&listed.stderr).trim()
            );
            return;
        }
        Some((seconds, listed.stdout.len()))
    };

    let (cached_objects, served_bytes, kept_bytes) = runtime.block_on(cached_json(&kubeconfig));

    let mut backend = Command::new(std::env::current_exe().expect("this binary"))
        .env(CHILD, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the backend process starts");
    let pid = backend.id();
    let (lines_to, lines) = mpsc::channel::<String>();
    let stdout = backend.stdout.take().expect("its stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_to.send(line).is_err() {
                break;
            }
        }
    });
    let (mut first, mut synced) = (f64::NAN, f64::NAN);
    let mut stores: Option<(usize, usize)> = None;
    while synced.is_nan() {
        let Ok(line) = lines.recv_timeout(Duration::from_secs(600)) else {
            println!("hub_live: the backend did not sync within 10 minutes");
            let _ = backend.kill();
            let _ = backend.wait();
            return;
        };
        match line.split_once(' ') {
            Some(("first", at)) => first = at.parse().unwrap_or(f64::NAN),
            Some(("synced", at)) => synced = at.parse().unwrap_or(f64::NAN),
            Some(("stores", figures)) => {
                stores = figures
                    .split_once(' ')
                    .and_then(|(n, b)| Some((n.parse().ok()?, b.parse().ok()?)));
            }
            Some(("error", why)) => {
                println!("hub_live: the backend failed: {why}");
                let _ = backend.wait();
                return;
            }
            _ => {}
        }
    }
    // The backend's own share of the sync: its CPU from start to synced.
    let cpu_syncing = cpu_seconds(pid);
    // Let the first deltas settle before sampling memory.
    std::thread::sleep(Duration::from_secs(5));
    while lines.try_recv().is_ok() {}
    let rss_synced = proc_field(pid, "VmRSS:");

    let (stop_watch, stopped) = tokio::sync::oneshot::channel();
    let watching = runtime.spawn(watch_marks(kubeconfig.clone(), kind, stopped));
    // The plain watch starts from the current version before the first write.
    std::thread::sleep(Duration::from_secs(2));
    let cpu_before = cpu_seconds(pid);
    let churn_started = Instant::now();
    let (written, failed) = runtime.block_on(churn(&kubeconfig, kind, &targets));
    let churned = churn_started.elapsed().as_secs_f64();
    let cpu = (cpu_seconds(pid) - cpu_before) / churned;
    // Deltas still in flight arrive within a few seconds.
    let mut latencies: Vec<f64> = Vec::new();
    let mut relists = 0;
    let drain_until = Instant::now() + Duration::from_secs(5);
    while let Some(left) = drain_until.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) => {
                relists += usize::from(line.starts_with("relist "));
                if let Some(nanos) = line
                    .strip_prefix("delta ")
                    .and_then(|n| n.parse::<f64>().ok())
                {
                    latencies.push(nanos / 1e6);
                }
            }
            Err(_) => break,
        }
    }
    let rss_after = proc_field(pid, "VmRSS:");
    let rss_peak = proc_field(pid, "VmHWM:");
    let _ = backend.kill();
    let _ = backend.wait();
    latencies.sort_by(f64::total_cmp);
    let _ = stop_watch.send(());
    let mut served = runtime.block_on(watching).unwrap_or_default();
    served.sort_by(f64::total_cmp);
    // Where the sync's time goes: the Works listed by kube-rs's watcher alone, then into a
    // cache alone, then every other kind the backend caches without them.
    let watcher_alone = runtime.block_on(listed_alone(&kubeconfig, kind));
    let works = kind.works();
    let cache_alone = runtime.block_on(cached_alone(&kubeconfig, |cached| *cached == works));
    let others = runtime.block_on(cached_alone(&kubeconfig, |cached| *cached != works));
    // The floor again on the server as the backend's run left it: a sync and a floor timed
    // minutes apart on a busy server can differ by the server's mood alone.
    let paged_after = runtime.block_on(paged_list(&kubeconfig, kind));

    let mib = |bytes: usize| bytes as f64 / 1_048_576.0;
    println!(
        "hub_live: {hub_name} scale hub, {size}, {} Works",
        targets.len()
    );
    println!();
    println!("| what | figure |");
    println!("|---|---|");
    match kubectl_floor {
        Some((seconds, bytes)) => println!(
            "| floor: `kubectl get {plural} -A -o json` | {seconds:.2} s, {:.0} MiB of JSON |",
            mib(bytes)
        ),
        None => println!(
            "| floor: `kubectl get {plural} -A -o json` | not run: kubectl holds the whole list in memory, and past {KUBECTL_UP_TO} {plural} it outgrows this machine |"
        ),
    }
    println!(
        "| floor: the same list, {} pages of {PAGE} read as bytes (kube-rs) | {:.2} s, {:.0} MiB of JSON |",
        paged.pages,
        paged.seconds,
        mib(paged.bytes)
    );
    let floor_after = paged_after.as_ref().map_or(f64::NAN, |after| after.seconds);
    println!("| floor: the same list again, after the backend's run | {floor_after:.2} s |");
    println!(
        "| the same list through kube-rs's watcher alone (the {plural} parsed, then dropped) | {watcher_alone:.2} s |"
    );
    println!(
        "| the same list into a cache of the {plural} alone (parsed and stored as the backend stores them) | {cache_alone:.2} s |"
    );
    println!(
        "| every other kind the backend caches, into caches of them alone (the {plural} not listed) | {others:.2} s |"
    );
    println!("| backend start → first view (from the synced caches) | {first:.2} s |");
    let to_kubectl = kubectl_floor.map_or(String::new(), |(seconds, _)| {
        format!("ratio to kubectl {:.2}, ", synced / seconds)
    });
    println!(
        "| backend start → caches synced | {synced:.2} s ({to_kubectl}to the pages {:.2} before, {:.2} after); the backend's CPU meanwhile {cpu_syncing:.1} s |",
        synced / paged.seconds,
        synced / floor_after
    );
    println!(
        "| Work status change → cell delta, {} changes written at {:.0}/s ({failed} failed) | p50 {:.1} ms, p99 {:.1} ms, max {:.0} ms, {} deltas seen; {relists} relist(s) meanwhile |",
        written,
        written as f64 / churned,
        percentile(&latencies, 50.0),
        percentile(&latencies, 99.0),
        latencies.last().copied().unwrap_or(f64::NAN),
        latencies.len()
    );
    println!(
        "| of which the API server: write → a plain watch's event | p50 {:.1} ms, p99 {:.1} ms, {} events seen |",
        percentile(&served, 50.0),
        percentile(&served, 99.0),
        served.len()
    );
    println!(
        "| backend CPU under that load | {:.1} % of one core |",
        cpu * 100.0
    );
    println!(
        "| what the backend caches: {cached_objects} objects of every watched kind | {:.0} MiB of JSON as served, {:.0} MiB without managedFields |",
        mib(served_bytes),
        mib(kept_bytes)
    );
    if let Some((objects, bytes)) = stores {
        println!(
            "| the stores' own bytes | {:.1} MiB for {objects} objects: {:.0} bytes an object, {:.2}× their JSON without managedFields |",
            mib(bytes),
            bytes as f64 / objects.max(1) as f64,
            bytes as f64 / kept_bytes.max(1) as f64
        );
    }
    let ratios = |rss: f64| {
        format!(
            "{rss:.0} MiB ({:.2}× / {:.2}×)",
            rss / mib(served_bytes),
            rss / mib(kept_bytes)
        )
    };
    println!(
        "| backend resident memory (× the cached objects' JSON as served / without managedFields): 5 s after the sync; after the changes; peak | {}; {}; {} |",
        ratios(rss_synced),
        ratios(rss_after),
        ratios(rss_peak)
    );
}
