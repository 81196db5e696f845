//! Whole flotilla commands on big fleets of real API servers, printed as one table: on the
//! scale hub (`cargo xtask testenv up --scale karmada|ocm --clusters 2000 --resources 100`)
//! the floor `kubectl get works -A -o json` (`manifestworks` on OCM) next to `flotilla --hub
//! hub clusters` and `flotilla --hub hub render` (a full read of every binding and Work), and
//! the hub's own servers' memory; on the raw-contexts tier (`cargo xtask testenv up --contexts
//! 1000`) `flotilla --context 'c*' clusters` from start until every cluster has a health
//! answer, then `plan` and `apply --yes` of one ConfigMap placed on every one of them, each
//! with the peak of its open file descriptors, sockets and resident memory, and the proxy's;
//! next to each, its floor: the same requests sent by kube-rs alone, as many contexts at a
//! time as flotilla connects (the probe's, `/readyz` alone, is the console's every-cluster-Ready
//! floor; a connect and TLS handshake alone is that budget's connect cost). Each command runs
//! as its own process; peaks are sampled from /proc every 10 ms. On the same tier, `flotilla
//! --context 'c*' pods --state CrashLoopBackOff -o json` on a fleet that places a Deployment of
//! ten pods on every context (applied to the members with kubectl, one pod on each member
//! written into a crash loop through its status), next to its floor: the same reads of the
//! Deployment, its ReplicaSets and its pods from kube-rs alone, 32 contexts at a time.
//! Environments that are not up are skipped with a note. It only reads the clusters, but for
//! that one ConfigMap (`default/fleet-scale-probe`) and that Deployment
//! (`default/fleet-scale-pods`, removed again at the end).
//!
//! `FLOTILLA_TESTENV_KUBECONFIG=target/testenv/kubeconfig cargo bench --bench fleet_scale`

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "support/procfs.rs"]
mod procfs;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/testenv.rs"]
mod testenv;

/// The Deployment `pods` is timed on, and its pods on each member.
const PODS_WORKLOAD: &str = "fleet-scale-pods";
const PODS_REPLICAS: usize = 10;

/// What one run of a command cost.
#[derive(Debug, Default, Clone, Copy)]
struct Cost {
    seconds: f64,
    peak_rss_mib: f64,
    peak_fds: usize,
    peak_sockets: usize,
    exit: i32,
    stdout_bytes: usize,
}

/// Runs `program args`, sampling its memory and descriptors until it exits.
fn measure(program: &Path, args: &[&str]) -> Cost {
    measure_output(program, args).0
}

/// [`measure`], keeping what the command printed.
fn measure_output(program: &Path, args: &[&str]) -> (Cost, Vec<u8>) {
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("run {}: {e}", program.display()));
    let pid = child.id();
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut buf);
        buf
    });
    let mut cost = Cost::default();
    let status = loop {
        if let Some(hwm) = procfs::status_mib(pid, "VmHWM:") {
            cost.peak_rss_mib = cost.peak_rss_mib.max(hwm);
        }
        let (total, sockets) = procfs::fds(pid);
        cost.peak_fds = cost.peak_fds.max(total);
        cost.peak_sockets = cost.peak_sockets.max(sockets);
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("wait: {e}"),
        }
    };
    cost.seconds = started.elapsed().as_secs_f64();
    cost.exit = status.code().unwrap_or(-1);
    let printed = reader.join().unwrap_or_default();
    cost.stdout_bytes = printed.len();
    (cost, printed)
}

fn row(what: &str, cost: &Cost) {
    println!(
        "| {what} | {:.2} | {:.0} | {} | {} | {} | {:.1} |",
        cost.seconds,
        cost.peak_rss_mib,
        cost.peak_fds,
        cost.peak_sockets,
        cost.exit,
        cost.stdout_bytes as f64 / 1_048_576.0
    );
}

fn pid_of(v: &Value) -> Option<u32> {
    v.get("pid")?.as_u64().and_then(|p| u32::try_from(p).ok())
}

fn server_memory(state: &Value) {
    let mut servers: Vec<(String, u32)> = Vec::new();
    if let Some(pid) = state.pointer("/etcd/process").and_then(pid_of) {
        servers.push(("etcd".into(), pid));
    }
    for c in state["clusters"].as_array().into_iter().flatten() {
        if let Some(pid) = c.get("apiserver").and_then(pid_of) {
            servers.push((
                format!("{} kube-apiserver", c["name"].as_str().unwrap_or("?")),
                pid,
            ));
        }
    }
    if let Some(pid) = state
        .pointer("/karmada/aggregatedApiserver")
        .and_then(pid_of)
    {
        servers.push(("karmada-aggregated-apiserver".into(), pid));
    }
    if let Some(pid) = state.pointer("/proxies/server").and_then(pid_of) {
        servers.push(("toxiproxy".into(), pid));
    }
    println!();
    println!("| server | resident MiB | peak resident MiB | open fds | sockets |");
    println!("|---|---|---|---|---|");
    for (name, pid) in servers {
        let (total, sockets) = procfs::fds(pid);
        println!(
            "| {name} | {:.0} | {:.0} | {total} | {sockets} |",
            procfs::status_mib(pid, "VmRSS:").unwrap_or(0.0),
            procfs::status_mib(pid, "VmHWM:").unwrap_or(0.0),
        );
    }
}

/// A fleet directory whose inventory is the tier's contexts `c0000`… and whose one resource,
/// a ConfigMap, a PropagationPolicy places on every cluster.
fn one_resource_everywhere(clusters: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::write(
        dir.path().join("clusters.yaml"),
        testenv::inventory(clusters),
    )
    .expect("inventory");
    fs::write(
        dir.path().join("probe.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fleet-scale-probe, namespace: default}\n\
         data: {purpose: one object on every cluster}\n---\n\
         apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\n\
         metadata: {name: everywhere, namespace: default}\nspec:\n  resourceSelectors:\n  \
         - {apiVersion: v1, kind: ConfigMap, name: fleet-scale-probe}\n  placement: {}\n",
    )
    .expect("resource");
    dir
}

/// The console as a person starts it, in a 250×80 pseudo-terminal: from process start to the
/// first frame, to every cluster answering its probe (`clusters N/N Ready` in the header), and
/// to every cell in sync (`N InSync`: its watch listed the object), then watched for
/// `WATCH_FOR` more; peaks of memory, descriptors and sockets over the whole run.
fn console(program: &Path, args: &[&str], count: usize) -> (Cost, [Option<f64>; 3]) {
    use std::io::{Read, Write};
    use std::sync::{Arc, Mutex};
    const WATCH_FOR: Duration = Duration::from_secs(10);
    let started = Instant::now();
    let mut console = pty::start(program, args);
    let pid = console.child.process_id().unwrap_or(0);
    let mut reader = std::mem::replace(&mut console.reader, Box::new(std::io::empty()));
    let marks = [
        " flotilla ".to_string(),
        format!("clusters {count}/{count} Ready"),
        format!("{count} InSync"),
    ];
    let seen: Arc<Mutex<[Option<f64>; 3]>> = Arc::default();
    let asked: Arc<Mutex<bool>> = Arc::default();
    let reading = {
        let seen = seen.clone();
        let asked = asked.clone();
        std::thread::spawn(move || {
            let mut screen = pty::screen();
            let mut buffer = [0u8; 65536];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                screen.process(&buffer[..n]);
                if pty::asks_cursor_position(&buffer[..n])
                    && let Ok(mut asked) = asked.lock()
                {
                    *asked = true;
                }
                let contents = screen.screen().contents();
                if let Ok(mut seen) = seen.lock() {
                    for (mark, at) in marks.iter().zip(seen.iter_mut()) {
                        if at.is_none() && contents.contains(mark.as_str()) {
                            *at = Some(started.elapsed().as_secs_f64());
                        }
                    }
                }
            }
        })
    };
    let mut cost = Cost::default();
    let deadline = started + Duration::from_secs(180);
    let mut watched_until: Option<Instant> = None;
    loop {
        if let Ok(mut asked) = asked.lock()
            && *asked
        {
            let _ = console.writer.write_all(pty::CURSOR_AT_HOME);
            *asked = false;
        }
        if let Some(hwm) = procfs::status_mib(pid, "VmHWM:") {
            cost.peak_rss_mib = cost.peak_rss_mib.max(hwm);
        }
        let (total, sockets) = procfs::fds(pid);
        cost.peak_fds = cost.peak_fds.max(total);
        cost.peak_sockets = cost.peak_sockets.max(sockets);
        let all_seen = seen
            .lock()
            .map(|s| s.iter().all(Option::is_some))
            .unwrap_or(true);
        let now = Instant::now();
        if all_seen && watched_until.is_none() {
            watched_until = Some(now + WATCH_FOR);
        }
        if watched_until.is_some_and(|until| now >= until) || now >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let exit = console.quit();
    cost.seconds = started.elapsed().as_secs_f64();
    cost.exit = exit.map_or(-1, |code| code as i32);
    let _ = reading.join();
    let seen = seen.lock().map(|s| *s).unwrap_or_default();
    (cost, seen)
}

/// What a floor stands for: the requests flotilla's command needs, without flotilla.
#[derive(Clone, Copy, PartialEq)]
enum Floor {
    /// Server-side apply of the Namespace, a read of the ConfigMap, then its server-side
    /// apply: the read is Karmada's `conflictResolution: Abort` (the default), which takes
    /// over no object that is there without its owner's label.
    Apply,
    /// A read and a dry-run server-side apply of each of the two, all four at once.
    Plan,
    /// A TCP connect and TLS handshake through kube-rs's own connector, and no request: the
    /// connect cost in the console's every-cluster-Ready budget.
    Connect,
    /// `GET /readyz` alone: the console's health answer.
    Readiness,
    /// `GET /readyz`, then `GET /version`: the health answer `clusters` prints.
    Probe,
    /// What `pods` reads of a Deployment, one after another: the Deployment, the ReplicaSets
    /// its selector names, then the pods it names (each list one page of at most 500).
    Pods,
}

/// The floor for `apply` or `plan`: what any client pays for the same requests — one kube-rs
/// client per context, `concurrency` contexts at a time, from reading the kubeconfig to the
/// last answer. Returns the seconds and how many contexts answered every request.
fn floor(kubeconfig: &Path, count: usize, concurrency: usize, what: Floor) -> (f64, usize) {
    use futures::StreamExt;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube::api::{Api, Patch, PatchParams};
    use kube::config::{KubeConfigOptions, Kubeconfig};
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async {
        let started = Instant::now();
        let Ok(file) = Kubeconfig::read_from(kubeconfig) else {
            return (f64::NAN, 0);
        };
        let file = &file;
        let answered = futures::stream::iter(0..count)
            .map(|index| async move {
                let context = format!("c{index:04}");
                let named = file.contexts.iter().find(|c| c.name == context)?.clone();
                let uses = named.context.clone()?;
                let one = Kubeconfig {
                    clusters: file
                        .clusters
                        .iter()
                        .filter(|c| c.name == uses.cluster)
                        .cloned()
                        .collect(),
                    auth_infos: file
                        .auth_infos
                        .iter()
                        .filter(|u| Some(&u.name) == uses.user.as_ref())
                        .cloned()
                        .collect(),
                    contexts: vec![named],
                    ..Kubeconfig::default()
                };
                let options = KubeConfigOptions {
                    context: Some(context),
                    ..KubeConfigOptions::default()
                };
                let config = kube::Config::from_custom_kubeconfig(one, &options)
                    .await
                    .ok()?;
                if what == Floor::Connect {
                    use kube::client::ConfigExt;
                    use tower::ServiceExt;
                    let connector = config.rustls_https_connector().ok()?;
                    let stream = connector.oneshot(config.cluster_url.clone()).await.ok()?;
                    drop(stream);
                    return Some(());
                }
                let client = kube::Client::try_from(config).ok()?;
                let namespaces = Api::<Namespace>::all(client.clone());
                let maps = Api::<ConfigMap>::namespaced(client.clone(), "default");
                let namespace = serde_json::json!({
                    "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}
                });
                let map = serde_json::json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "fleet-scale-floor", "namespace": "default"},
                    "data": {"purpose": "the floor of one object on every cluster"}
                });
                match what {
                    Floor::Apply => {
                        let params = PatchParams::apply("fleet-scale-floor");
                        namespaces
                            .patch("default", &params, &Patch::Apply(namespace))
                            .await
                            .ok()?;
                        maps.get_opt("fleet-scale-floor").await.ok()?;
                        maps.patch("fleet-scale-floor", &params, &Patch::Apply(map))
                            .await
                            .ok()?;
                    }
                    Floor::Plan => {
                        let params = PatchParams::apply("fleet-scale-floor").dry_run();
                        let (namespace, map) = (Patch::Apply(namespace), Patch::Apply(map));
                        let (a, b, c, d) = futures::join!(
                            namespaces.get_opt("default"),
                            namespaces.patch("default", &params, &namespace),
                            maps.get_opt("fleet-scale-floor"),
                            maps.patch("fleet-scale-floor", &params, &map),
                        );
                        (a.is_ok() && b.is_ok() && c.is_ok() && d.is_ok()).then_some(())?;
                    }
                    Floor::Connect => {}
                    Floor::Pods => {
                        use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
                        use k8s_openapi::api::core::v1::Pod;
                        use kube::api::ListParams;
                        let selected = ListParams::default()
                            .labels(&format!("app={PODS_WORKLOAD}"))
                            .limit(500);
                        Api::<Deployment>::namespaced(client.clone(), "default")
                            .get(PODS_WORKLOAD)
                            .await
                            .ok()?;
                        Api::<ReplicaSet>::namespaced(client.clone(), "default")
                            .list(&selected)
                            .await
                            .ok()?;
                        Api::<Pod>::namespaced(client.clone(), "default")
                            .list(&selected)
                            .await
                            .ok()?;
                    }
                    Floor::Readiness | Floor::Probe => {
                        let readyz = http::Request::get("/readyz").body(Vec::new()).ok()?;
                        client.request_text(readyz).await.ok()?;
                        if what == Floor::Probe {
                            client.apiserver_version().await.ok()?;
                        }
                    }
                }
                Some(())
            })
            .buffer_unordered(concurrency)
            .filter(|answered| std::future::ready(answered.is_some()))
            .count()
            .await;
        (started.elapsed().as_secs_f64(), answered)
    })
}

fn main() {
    // `cargo bench` passes `--bench`; nothing here takes arguments.
    let flotilla = PathBuf::from(env!("CARGO_BIN_EXE_flotilla"));
    let Some(kc) = testenv::kubeconfig() else {
        println!(
            "fleet_scale: skipped (set FLOTILLA_TESTENV_KUBECONFIG=target/testenv/kubeconfig and \
             start `cargo xtask testenv up --scale …` or `--contexts 1000`)"
        );
        return;
    };
    let kc_arg = kc.display().to_string();
    let state = testenv::state().unwrap_or(Value::Null);
    let kubectl = PathBuf::from("kubectl");
    println!("| command | wall s | peak RSS MiB | peak fds | peak sockets | exit | stdout MiB |");
    println!("|---|---|---|---|---|---|---|");
    if let Some(scale) = state.get("scale").filter(|s| !s.is_null()) {
        let works = if scale["kind"] == "ocm" {
            "manifestworks"
        } else {
            "works"
        };
        let size = format!(
            "{} {}×{}",
            scale["kind"].as_str().unwrap_or("?"),
            scale["clusters"],
            scale["resources"]
        );
        let floor = measure(
            &kubectl,
            &[
                "--kubeconfig",
                &kc_arg,
                "--context",
                "hub",
                "get",
                works,
                "-A",
                "-o",
                "json",
                "--request-timeout=0",
            ],
        );
        row(
            &format!("{size}: kubectl get {works} -A -o json (floor)"),
            &floor,
        );
        let clusters = measure(
            &flotilla,
            &[
                "--kubeconfig",
                &kc_arg,
                "--hub",
                "hub",
                "clusters",
                "-o",
                "json",
            ],
        );
        row(
            &format!("{size}: flotilla --hub hub clusters -o json"),
            &clusters,
        );
        let render = measure(
            &flotilla,
            &[
                "--kubeconfig",
                &kc_arg,
                "--hub",
                "hub",
                "render",
                "-o",
                "json",
            ],
        );
        row(
            &format!("{size}: flotilla --hub hub render -o json (every binding and Work)"),
            &render,
        );
    } else {
        println!("| scale hub not up (`cargo xtask testenv up --scale …`): skipped | | | | | | |");
    }
    if let Some(proxies) = state.get("proxies").filter(|p| !p.is_null()) {
        let count = proxies["count"].as_u64().unwrap_or(0);
        let latency = match proxies["latencyMs"].as_u64() {
            Some(0) | None => "20–100 ms".to_string(),
            Some(ms) => format!("{ms} ms"),
        };
        let probe = measure(
            &flotilla,
            &[
                "--kubeconfig",
                &kc_arg,
                "--context",
                "c*",
                "clusters",
                "-o",
                "json",
            ],
        );
        row(
            &format!(
                "{count} contexts at {latency}: flotilla --context 'c*' clusters (start → every cluster probed)"
            ),
            &probe,
        );
        let fleet = one_resource_everywhere(count as usize);
        let fleet_arg = fleet.path().display().to_string();
        let common = [
            "--kubeconfig",
            kc_arg.as_str(),
            "--fleet",
            fleet_arg.as_str(),
        ];
        let plan = measure(&flotilla, &[&common[..], &["plan", "-o", "json"]].concat());
        row(
            &format!("{count} contexts at {latency}: flotilla plan of one ConfigMap on all"),
            &plan,
        );
        let apply = measure(
            &flotilla,
            &[&common[..], &["apply", "--yes", "-o", "json"]].concat(),
        );
        row(
            &format!("{count} contexts at {latency}: flotilla apply of one ConfigMap to all"),
            &apply,
        );
        let members = testenv::members(&state);
        let workload = testenv::deployment_everywhere(count as usize, PODS_WORKLOAD, PODS_REPLICAS);
        let workload_arg = workload.path().display().to_string();
        if testenv::place(&kc, &members, PODS_WORKLOAD, PODS_REPLICAS) {
            let crashing = testenv::crash_one_pod_each(&kc, &members, PODS_WORKLOAD);
            let (pods, printed) = measure_output(
                &flotilla,
                &[
                    "--kubeconfig",
                    &kc_arg,
                    "--fleet",
                    &workload_arg,
                    "--context",
                    "c*",
                    "pods",
                    "--state",
                    "CrashLoopBackOff",
                    "-o",
                    "json",
                ],
            );
            let found: Value = serde_json::from_slice(&printed).unwrap_or(Value::Null);
            let items = found["items"].as_array().map_or(0, Vec::len);
            let listed: usize = found["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|item| item["pods"].as_array().map(Vec::len))
                .sum();
            row(
                &format!(
                    "{count} contexts at {latency}: flotilla --context 'c*' pods --state CrashLoopBackOff -o json ({PODS_REPLICAS} pods a context, one crash-looping on each of {crashing} members: {items} cells, {listed} pods printed)"
                ),
                &pods,
            );
            let (seconds, answered) = floor(&kc, count as usize, 32, Floor::Pods);
            let ratio = pods.seconds / seconds;
            println!(
                "| {count} contexts at {latency}: floor for pods: GET the Deployment, then list its ReplicaSets, then its pods (by its selector), from kube-rs alone, 32 contexts at a time ({answered} of {count} answered); pods took {ratio:.2} × this (budget 1.3 ×: {}) | {seconds:.2} | | | | | |",
                if ratio <= 1.3 { "met" } else { "not met" }
            );
        } else {
            println!(
                "| {count} contexts at {latency}: pods skipped: the Deployment's pods did not all run on the members | | | | | | |"
            );
        }
        testenv::remove(&kc, &members, PODS_WORKLOAD);
        for (what, name, requests, concurrency) in [
            (
                Floor::Probe,
                "clusters",
                "GET /readyz, then GET /version",
                64,
            ),
            (
                Floor::Connect,
                "a connect (the console's every cluster Ready budget: 1.5 × ceil(count / 64) × RTT + this)",
                "a TCP connect and TLS handshake, no request",
                64,
            ),
            (
                Floor::Readiness,
                "the console's every cluster Ready",
                "GET /readyz",
                64,
            ),
            (
                Floor::Plan,
                "plan",
                "a read and a dry run of the Namespace and the ConfigMap, all four at once",
                32,
            ),
            (
                Floor::Apply,
                "apply",
                "server-side apply of the Namespace, a read of the ConfigMap (Karmada's default conflictResolution, Abort), then its server-side apply",
                32,
            ),
        ] {
            let (seconds, answered) = floor(&kc, count as usize, concurrency, what);
            println!(
                "| {count} contexts at {latency}: floor for {name}: {requests}, from kube-rs alone, {concurrency} contexts at a time ({answered} of {count} answered) | {seconds:.2} | | | | | |"
            );
        }
        let (console_cost, marks) = console(
            &flotilla,
            &[&common[..], &["console"]].concat(),
            count as usize,
        );
        let at = |mark: Option<f64>| mark.map_or("never".to_string(), |s| format!("{s:.2} s"));
        row(
            &format!(
                "{count} contexts at {latency}: flotilla console (first frame {}, every cluster Ready {}, every cell InSync {}, then watched 10 s)",
                at(marks[0]),
                at(marks[1]),
                at(marks[2])
            ),
            &console_cost,
        );
    } else {
        println!(
            "| raw-contexts tier not up (`cargo xtask testenv up --contexts 1000`): skipped | | | | | | |"
        );
    }
    server_memory(&state);
}
