//! `cargo xtask testenv up --scale karmada|ocm --clusters N --resources M [--churn R]`: a hub
//! alone (one real kube-apiserver on one etcd, plus Karmada's real aggregated API server for
//! its Cluster API) with the hub kind's real CRDs and no controllers, loaded through the API
//! server with what a real hub of N clusters and M resources holds (see `scale_load`); with
//! `--churn R` a background loader keeps changing R Work statuses a second until `testenv
//! down`. It must only bind 127.0.0.1, only write the test environment's own kubeconfig, and
//! only start or stop processes the state records.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::files::write_atomically;
use crate::gobuild::{self, HubBinaries, Versions};
use crate::karmada;
use crate::kubeconfig;
use crate::kubectl;
use crate::ocm;
use crate::paths;
use crate::pki;
use crate::procs::{self, ProcRec};
use crate::scale_load::{self, Size};
use crate::state::{Cluster, HubPlane, Owner, Scale, ScaleKind, State};
use crate::testenv;

/// The most clusters and resources a scale hub takes (2,000 × 100 is the benchmark's size).
const MAX_CLUSTERS: usize = 10_000;
const MAX_RESOURCES: usize = 1_000;
const MAX_CHURN: u32 = 5_000;

/// What `testenv up --scale` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScaleArgs {
    pub size: Size,
    pub churn: Option<u32>,
}

/// Checks the counts of `--clusters`, `--resources` and `--churn`.
pub fn checked(
    kind: ScaleKind,
    clusters: usize,
    resources: usize,
    churn: Option<u32>,
) -> Result<ScaleArgs> {
    if !(1..=MAX_CLUSTERS).contains(&clusters) {
        bail!("--clusters must be between 1 and {MAX_CLUSTERS}, got {clusters}");
    }
    if !(1..=MAX_RESOURCES).contains(&resources) {
        bail!("--resources must be between 1 and {MAX_RESOURCES}, got {resources}");
    }
    if let Some(rate) = churn
        && !(1..=MAX_CHURN).contains(&rate)
    {
        bail!("--churn must be between 1 and {MAX_CHURN} status changes per second, got {rate}");
    }
    Ok(ScaleArgs {
        size: Size {
            kind,
            clusters,
            resources,
        },
        churn,
    })
}

fn size_of(scale: &Scale) -> Size {
    Size {
        kind: scale.kind,
        clusters: scale.clusters,
        resources: scale.resources,
    }
}

fn hub_build(kind: ScaleKind) -> &'static gobuild::HubBuild {
    match kind {
        ScaleKind::Karmada => &gobuild::KARMADA,
        ScaleKind::Ocm => &gobuild::OCM,
    }
}

/// Whether every server of a scale environment runs (the churn loader aside).
fn servers_alive(s: &State) -> bool {
    let aggregated = match &s.hub_plane {
        Some(HubPlane::Karmada(k)) => k.aggregated_apiserver.as_ref().is_some_and(procs::is_alive),
        _ => true,
    };
    s.etcd.as_ref().is_some_and(procs::is_alive)
        && s.clusters
            .iter()
            .all(|c| c.apiserver.as_ref().is_some_and(procs::is_alive))
        && aggregated
}

/// `testenv up --scale …`: reuses a running scale environment of the same size (restarting
/// its churn loader at the new rate), else replaces whatever runs with a fresh one.
pub fn up(args: ScaleArgs, owner: Owner) -> Result<Owner> {
    let _lock = testenv::lock()?;
    kubectl::check_installed()?;
    let v = Versions::from_wrappers()?;
    let bins = gobuild::ensure_built(&v)?;
    let build = hub_build(args.size.kind);
    let hub_version = build.version()?;
    let hub_bins = build.ensure_built(&hub_version)?;
    let started = Instant::now();

    if let Ok(Some(mut s)) = State::load(&paths::state_file()) {
        let same = s.complete
            && servers_alive(&s)
            && s.scale.as_ref().is_some_and(|x| size_of(x) == args.size);
        if same {
            say!("testenv: reusing the running scale environment");
            set_churn(&mut s, args.churn)?;
            print_summary(&s, started.elapsed());
            return Ok(s.owner);
        }
        say!("testenv: replacing the previous environment with a scale hub");
        testenv::stop_env(&s)?;
    }
    match fresh_start(&v, &bins, &hub_version, &hub_bins, args, owner) {
        Ok(s) => {
            print_summary(&s, started.elapsed());
            Ok(s.owner)
        }
        Err(err) => {
            if let Ok(Some(s)) = State::load(&paths::state_file()) {
                let _ = testenv::stop_env(&s);
                let _ = fs::remove_file(paths::state_file());
            }
            Err(err)
        }
    }
}

fn fresh_start(
    v: &Versions,
    bins: &gobuild::Binaries,
    hub_version: &str,
    hub_bins: &HubBinaries,
    args: ScaleArgs,
    owner: Owner,
) -> Result<State> {
    testenv::clean_run_files()?;
    fs::create_dir_all(paths::logs_dir())?;
    let kind = args.size.kind;
    let plane_ports = match kind {
        ScaleKind::Karmada => karmada::PORTS,
        ScaleKind::Ocm => 0,
    };
    let ports = procs::free_ports(3 + plane_ports)?;
    let hub_port = ports[2];
    let pki = pki::generate().context("generating the test PKI")?;
    pki.write(&paths::pki_dir())?;
    if kind == ScaleKind::Karmada {
        let kpki = pki.karmada().context("generating Karmada's certificates")?;
        karmada::write_files(&pki, &kpki, hub_port)?;
    }
    write_atomically(
        &paths::kubeconfig(),
        &kubeconfig::render(&pki, &[("hub".to_string(), hub_port)]),
    )?;
    let mut s = State {
        kubernetes: v.kubernetes.clone(),
        etcd_version: v.etcd.clone(),
        members: 0,
        owner,
        etcd: None,
        etcd_client_port: ports[0],
        etcd_peer_port: ports[1],
        clusters: vec![Cluster {
            name: "hub".into(),
            port: hub_port,
            apiserver: None,
            controller_manager: None,
            scheduler: None,
            kwok: None,
            stopped: false,
        }],
        hub_plane: match kind {
            ScaleKind::Karmada => {
                Some(HubPlane::Karmada(karmada::plane(hub_version, &ports[3..])?))
            }
            ScaleKind::Ocm => None,
        },
        complete: false,
        scale: Some(Scale {
            kind,
            clusters: args.size.clusters,
            resources: args.size.resources,
            churn: None,
            churn_loader: None,
        }),
        proxies: None,
    };
    s.save(&paths::state_file())?;
    testenv::start_etcd(&mut s, bins)?;
    let pid = testenv::start_apiserver(&mut s, "hub", bins)?;
    testenv::wait_apiservers_ready(&s, &mut vec![("hub".to_string(), pid)])?;
    testenv::apply_rbac(&["hub".to_string()])?;
    match kind {
        ScaleKind::Karmada => karmada::install_cluster_api(&mut s, hub_bins, &pki)?,
        ScaleKind::Ocm => ocm::install_hub_crds(hub_bins)?,
    }
    say!(
        "testenv: loading {} clusters × {} resources into the {} scale hub",
        args.size.clusters,
        args.size.resources,
        kind.flag()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(scale_load::load(args.size))?;
    set_churn(&mut s, args.churn)?;
    s.complete = true;
    s.save(&paths::state_file())?;
    Ok(s)
}

/// Stops the churn loader that runs and, with `rate`, starts one at that rate.
fn set_churn(s: &mut State, rate: Option<u32>) -> Result<()> {
    let Some(scale) = s.scale.as_mut() else {
        bail!("not a scale environment");
    };
    if scale.churn == rate && scale.churn_loader.as_ref().is_some_and(procs::is_alive) {
        return Ok(());
    }
    if let Some(p) = scale.churn_loader.take() {
        procs::stop_all(&[("scale churn loader".into(), p)], Duration::from_secs(5))?;
    }
    scale.churn = rate;
    s.save(&paths::state_file())?;
    let Some(rate) = rate else {
        return Ok(());
    };
    let exe = std::env::current_exe().context("finding the xtask binary for the churn loader")?;
    let pid = procs::spawn(
        &exe,
        &["testenv".into(), "scale-churn".into()],
        &[],
        &paths::log_file("scale-churn"),
    )?;
    if let Some(scale) = s.scale.as_mut() {
        scale.churn_loader = Some(ProcRec::new(pid, &exe));
    }
    s.save(&paths::state_file())?;
    say!(
        "testenv: churn loader changing {rate} Work statuses a second (pid {pid}; log {})",
        paths::display(&paths::log_file("scale-churn"))
    );
    Ok(())
}

/// `testenv scale-churn` (started by `up --scale … --churn R`, not by hand): the churn loop
/// at the rate and size the state file records.
pub fn run_churn() -> Result<()> {
    let s = State::load(&paths::state_file())?.context("no test environment is recorded")?;
    let scale = s.scale.context("the test environment is not a scale hub")?;
    let rate = scale
        .churn
        .context("the scale hub was started without --churn")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(scale_load::churn(size_of(&scale), rate))
}

/// The resident memory of a recorded process, from /proc (`None` when it is gone).
pub fn rss_mib(p: &ProcRec) -> Option<f64> {
    let text =
        fs::read_to_string(Path::new("/proc").join(p.pid.to_string()).join("status")).ok()?;
    let kib: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib / 1024.0)
}

fn servers(s: &State) -> Vec<(String, ProcRec)> {
    let mut out: Vec<(String, ProcRec)> = Vec::new();
    if let Some(p) = &s.etcd {
        out.push(("etcd".into(), p.clone()));
    }
    for c in &s.clusters {
        if let Some(p) = &c.apiserver {
            out.push((format!("{} kube-apiserver", c.name), p.clone()));
        }
    }
    if let Some(HubPlane::Karmada(k)) = &s.hub_plane
        && let Some(p) = &k.aggregated_apiserver
    {
        out.push(("karmada-aggregated-apiserver".into(), p.clone()));
    }
    out
}

fn print_summary(s: &State, took: Duration) {
    let Some(scale) = &s.scale else { return };
    let rel = paths::display(&paths::kubeconfig());
    let (works, clusters_kind) = match scale.kind {
        ScaleKind::Karmada => ("works", "clusters"),
        ScaleKind::Ocm => ("manifestworks", "managedclusters"),
    };
    say!(
        "testenv: {} scale hub up with {} clusters × {} resources ({} {works}) in {:.1} s",
        scale.kind.flag(),
        scale.clusters,
        scale.resources,
        scale.clusters * scale.resources,
        took.as_secs_f64()
    );
    let memory: Vec<String> = servers(s)
        .iter()
        .filter_map(|(name, p)| Some(format!("{name} {:.0} MiB", rss_mib(p)?)))
        .collect();
    say!("  memory      {}", memory.join(", "));
    say!("  kubeconfig  {}", paths::kubeconfig().display());
    say!("  try         kubectl --kubeconfig {rel} --context hub get {clusters_kind}");
    say!("              cargo run -- --kubeconfig {rel} --hub hub clusters");
    if let Some(rate) = scale.churn {
        say!("  churn       {rate} {works} statuses a second (logs/scale-churn.log)");
    }
    say!("  stop        cargo xtask testenv down");
}

/// `testenv status` lines of a scale environment; whether all of it is up.
pub fn status_lines(s: &State) -> bool {
    let Some(scale) = &s.scale else { return true };
    say!(
        "  scale        {} hub, {} clusters × {} resources{}",
        scale.kind.flag(),
        scale.clusters,
        scale.resources,
        scale
            .churn
            .map(|r| format!(", churn {r}/s"))
            .unwrap_or_default()
    );
    for (name, p) in servers(s) {
        if let Some(mib) = rss_mib(&p) {
            say!("  {name:<28} {mib:.0} MiB resident");
        }
    }
    match (&scale.churn, &scale.churn_loader) {
        (None, _) => true,
        (Some(_), Some(p)) if procs::is_alive(p) => {
            say!("  {:<28} running (pid {})", "scale churn loader", p.pid);
            true
        }
        _ => {
            say!(
                "  {:<28} DOWN (`cargo xtask testenv up --scale …` restarts it)",
                "scale churn loader"
            );
            false
        }
    }
}
