//! `cargo xtask testenv up|down|status|stop|start|build`: a hub and N member clusters, each a
//! real upstream kube-apiserver on 127.0.0.1, sharing one etcd under separate key prefixes. The
//! hub runs a kube-controller-manager with only the namespace and garbage-collector
//! controllers; every member also runs the workload controllers, a kube-scheduler and KWOK
//! with one fake Node (`kwok.rs`), so its Deployments roll out and report real status;
//! with `--hub karmada` the hub is a Karmada control plane (see `karmada.rs`), with `--hub ocm`
//! an Open Cluster Management hub with one klusterlet agent per member (see `ocm.rs`), with
//! `--hub kubefed` a plain hub running KubeFed (see `kubefed.rs`).
//! It must only bind loopback addresses, only signal processes it recorded, and never write a
//! kubeconfig other than `target/testenv/kubeconfig` (plus its controller-managers' private
//! client configs under `target/testenv/run/`).

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::files::write_atomically;
use crate::gobuild::{self, Binaries, HubBinaries, HubBuild, Versions};
use crate::karmada;
use crate::kubeconfig;
use crate::kubectl;
use crate::kubefed;
use crate::kwok;
use crate::ocm;
use crate::paths;
use crate::pki::{self, PkiFiles};
use crate::procs::{self, Lock, ProcRec};
use crate::state::{Cluster, HubPlane, Owner, State};

/// How long a testenv command waits for another one (a cold build can take a while).
const LOCK_WAIT: Duration = Duration::from_secs(30 * 60);
/// How long an API server gets to become ready (a few seconds warm; more on a busy machine).
const READY_TIMEOUT: Duration = Duration::from_secs(120);
const ETCD_TIMEOUT: Duration = Duration::from_secs(30);
/// TERM grace before KILL.
const STOP_GRACE: Duration = Duration::from_secs(15);

const APISERVER_MEMLIMIT: &str = "600MiB";
const SMALL_MEMLIMIT: &str = "300MiB";

/// The read-only role every cluster gets, bound to the read-only user.
const RBAC_MANIFEST: &str = "\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: flotilla-testenv-readonly
  labels: {app.kubernetes.io/managed-by: flotilla-testenv}
rules:
- apiGroups: [\"*\"]
  resources: [\"*\"]
  verbs: [get, list, watch]
- nonResourceURLs: [\"*\"]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: flotilla-testenv-readonly
  labels: {app.kubernetes.io/managed-by: flotilla-testenv}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: flotilla-testenv-readonly
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: USER
";

/// Stops everything `s` recorded, phase by phase. With etcd already gone the API servers
/// cannot shut down gracefully, so they get a short grace only.
pub(crate) fn stop_env(s: &State) -> Result<()> {
    let etcd_alive = s.etcd.as_ref().is_some_and(procs::is_alive);
    let grace = if etcd_alive {
        STOP_GRACE
    } else {
        Duration::from_secs(2)
    };
    for phase in s.stop_phases() {
        procs::stop_all(&phase, grace)?;
    }
    Ok(())
}

pub(crate) fn lock() -> Result<Lock> {
    Lock::acquire(&paths::lock_file(), LOCK_WAIT)
}

fn cluster_names(members: usize) -> Vec<String> {
    std::iter::once("hub".to_string())
        .chain((1..=members).map(|k| format!("member-{k}")))
        .collect()
}

fn cluster_run_dir(name: &str) -> PathBuf {
    paths::run_dir().join(name)
}

/// `cargo xtask testenv build [--hub karmada|kubefed]`: only make sure the binaries are cached.
pub fn build(hub: Hub) -> Result<()> {
    let _lock = lock()?;
    let v = Versions::from_wrappers()?;
    let t = Instant::now();
    let bins = gobuild::ensure_built(&v)?;
    say!(
        "testenv: kube-apiserver, kube-controller-manager, kube-scheduler {}, etcd {} and kwok cached in {} ({:.1} s)",
        v.kubernetes,
        v.etcd,
        bins.kube_apiserver
            .parent()
            .map_or_else(String::new, |d| d.display().to_string()),
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let proxy = crate::testproxy::ensure_built(gobuild::Mode::Foreground)?;
    say!(
        "testenv: the test proxy cached as {} ({:.1} s)",
        proxy.display(),
        t.elapsed().as_secs_f64()
    );
    if let Some(build) = hub.build() {
        let t = Instant::now();
        let version = build.version()?;
        let hub_bins = build.ensure_built(&version)?;
        say!(
            "testenv: {} {version} {} cached in {} ({:.1} s)",
            build.name,
            build.cached,
            hub_bins.dir().display(),
            t.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// What the hub cluster is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hub {
    /// A plain kube-apiserver (the default).
    Plain,
    /// A Karmada control plane (`--hub karmada`).
    Karmada,
    /// An Open Cluster Management hub (`--hub ocm`).
    Ocm,
    /// A plain kube-apiserver running KubeFed's controller-manager (`--hub kubefed`).
    KubeFed,
}

impl Hub {
    fn of(s: &State) -> Self {
        match &s.hub_plane {
            None => Self::Plain,
            Some(HubPlane::Karmada(_)) => Self::Karmada,
            Some(HubPlane::Ocm(_)) => Self::Ocm,
            Some(HubPlane::KubeFed(_)) => Self::KubeFed,
        }
    }
    /// How its binaries and manifests are built (none for the plain hub).
    pub fn build(self) -> Option<&'static HubBuild> {
        match self {
            Self::Plain => None,
            Self::Karmada => Some(&gobuild::KARMADA),
            Self::Ocm => Some(&gobuild::OCM),
            Self::KubeFed => Some(&kubefed::BUILD),
        }
    }
    /// The `--hub` value that asks for it.
    fn flag(self) -> &'static str {
        match self {
            Self::Plain => "plain",
            Self::Karmada => "karmada",
            Self::Ocm => "ocm",
            Self::KubeFed => "kubefed",
        }
    }
    fn describe(self) -> &'static str {
        match self {
            Self::Plain => "a plain hub",
            Self::Karmada => "a Karmada hub",
            Self::Ocm => "an Open Cluster Management hub",
            Self::KubeFed => "a KubeFed hub",
        }
    }
}

/// How many members `up` accepts from an environment that is already running.
#[derive(Debug, Clone, Copy)]
pub enum Members {
    /// `testenv up --members N`: restart with N if a different count runs.
    Exactly(usize),
    /// `cargo xtask test`: reuse anything with at least N members, else start N.
    AtLeast(usize),
}

impl Members {
    fn count(self) -> usize {
        match self {
            Self::Exactly(n) | Self::AtLeast(n) => n,
        }
    }
    fn accepts(self, running: usize) -> bool {
        match self {
            Self::Exactly(n) => running == n,
            Self::AtLeast(n) => running >= n,
        }
    }
}

/// `cargo xtask testenv up`: reuse a running environment (restarting any cluster that is
/// down), or start a fresh one. Returns the environment's owner afterwards.
pub fn up(members: Members, hub: Hub, requester: Owner) -> Result<Owner> {
    let _lock = lock()?;
    kubectl::check_installed()?;
    let v = Versions::from_wrappers()?;
    let bins = gobuild::ensure_built(&v)?;
    let hub_bins = match hub.build() {
        Some(build) => {
            let version = build.version()?;
            let bins = build.ensure_built(&version)?;
            Some((version, bins))
        }
        None => None,
    };
    let started = Instant::now();

    let previous = match State::load(&paths::state_file()) {
        Ok(s) => s,
        Err(err) => {
            say!(
                "testenv: ignoring an unreadable {} ({err:#}); starting fresh",
                paths::display(&paths::state_file())
            );
            None
        }
    };
    let reuse = match previous {
        None => None,
        Some(s) => {
            let reason = if !s.etcd.as_ref().is_some_and(procs::is_alive) {
                Some("stale: its etcd is gone".to_string())
            } else if !s.complete {
                Some("its start was interrupted".to_string())
            } else if s.kubernetes != v.kubernetes || s.etcd_version != v.etcd {
                Some(format!(
                    "it runs Kubernetes {} / etcd {}, the wrappers now pin {} / {}",
                    s.kubernetes, s.etcd_version, v.kubernetes, v.etcd
                ))
            } else if Hub::of(&s) != hub {
                Some(format!(
                    "it has {}, {} asked for",
                    Hub::of(&s).describe(),
                    hub.describe()
                ))
            } else if let (Some(p), Some((pinned, _)), Some(build)) =
                (&s.hub_plane, &hub_bins, hub.build())
                && p.version() != pinned
            {
                Some(format!(
                    "it runs {} {}, the wrapper now pins {pinned}",
                    build.name,
                    p.version()
                ))
            } else if let Some(scale) = &s.scale {
                Some(format!(
                    "it is a scale environment (testenv up --scale {})",
                    scale.kind.flag()
                ))
            } else if let Some(HubPlane::Ocm(o)) = &s.hub_plane
                && o.work_port.is_none()
            {
                Some("its OCM hub predates the work manager".to_string())
            } else if !members.accepts(s.members) {
                Some(format!(
                    "it has {} members, {} asked for",
                    s.members,
                    members.count()
                ))
            } else {
                None
            };
            match reason {
                None => Some(s),
                Some(reason) => {
                    say!("testenv: replacing the previous environment ({reason})");
                    stop_env(&s)?;
                    None
                }
            }
        }
    };

    let state = match reuse {
        Some(mut s) => {
            s.owner = match (requester, s.owner) {
                (Owner::Manual, _) => Owner::Manual,
                // A test run adopts an environment left by a test run that died.
                (Owner::Test { pid }, Owner::Test { pid: old })
                    if !Path::new(&format!("/proc/{old}")).exists() =>
                {
                    Owner::Test { pid }
                }
                (_, owner) => owner,
            };
            s.save(&paths::state_file())?;
            let names: Vec<String> = s.clusters.iter().map(|c| c.name.clone()).collect();
            let mut restarted = 0;
            for name in names {
                if ensure_cluster_running(&mut s, &name, &bins)? {
                    restarted += 1;
                }
            }
            if let Some((_, hub_bins)) = &hub_bins
                && ensure_plane_running(&mut s, hub_bins)?
            {
                restarted += 1;
            }
            if restarted == 0 {
                say!("testenv: reusing the running environment");
            }
            s
        }
        None => match fresh_start(
            &v,
            &bins,
            hub,
            hub_bins.as_ref(),
            members.count(),
            requester,
        ) {
            Ok(s) => s,
            Err(err) => {
                // Leave nothing half-started behind.
                if let Ok(Some(s)) = State::load(&paths::state_file()) {
                    let _ = stop_env(&s);
                    let _ = fs::remove_file(paths::state_file());
                }
                return Err(err);
            }
        },
    };
    if hub == Hub::Plain {
        install_cluster_profile_crd()?;
    }
    print_summary(&state, started.elapsed());
    Ok(state.owner)
}

/// The plain tier's hub serves SIG Multicluster's ClusterProfiles (the upstream CRD at the
/// version `xtask/go/cluster-inventory/go.mod` pins), so `--inventory clusterprofiles:hub`
/// can be tested against a real API server. Applied on every `up`: a reused environment
/// gets it too.
fn install_cluster_profile_crd() -> Result<()> {
    let build = gobuild::CLUSTER_INVENTORY;
    let bins = build.ensure_built(&build.version()?)?;
    kubectl::install_crds("hub", &bins.manifests().join(gobuild::CLUSTER_PROFILE_CRD))
}

/// How messages name the hub: `hub`, `Karmada v1.18.2 hub`, `OCM v1.2.1 hub`,
/// `KubeFed v0.10.0 hub`.
fn hub_label(s: &State) -> String {
    match (&s.hub_plane, Hub::of(s).build()) {
        (Some(p), Some(build)) => format!("{} {} hub", build.name, p.version()),
        _ => "hub".to_string(),
    }
}

pub(crate) fn print_summary(s: &State, took: Duration) {
    let kubeconfig = paths::kubeconfig();
    let rel = paths::display(&kubeconfig);
    let hub = hub_label(s);
    say!(
        "testenv: {hub} + {} members up (Kubernetes {}, etcd {}) in {:.1} s",
        s.members,
        s.kubernetes,
        s.etcd_version,
        took.as_secs_f64()
    );
    say!("  kubeconfig  {}", kubeconfig.display());
    say!(
        "  contexts    hub, member-1 … member-{} (admin); <context>-readonly (get/list/watch only)",
        s.members
    );
    say!("  try         kubectl --kubeconfig {rel} --context member-2 version");
    match Hub::of(s) {
        Hub::Plain => {}
        Hub::Karmada => say!("              kubectl --kubeconfig {rel} --context hub get clusters"),
        Hub::Ocm => {
            say!("              kubectl --kubeconfig {rel} --context hub get managedclusters");
            say!(
                "              (Placements: namespace {} has the `global` ManagedClusterSet bound)",
                ocm::PLACEMENT_NAMESPACE
            );
        }
        Hub::KubeFed => say!(
            "              kubectl --kubeconfig {rel} --context hub -n {} get kubefedclusters",
            kubefed::NAMESPACE
        ),
    }
    say!("              cargo run -- --kubeconfig {rel} --context 'member-?' clusters");
    say!(
        "  tests       FLOTILLA_TESTENV_KUBECONFIG={} cargo test -- --ignored",
        kubeconfig.display()
    );
    say!("  stop        cargo xtask testenv down");
}

/// Removes everything a previous environment left in `target/testenv` except build logs.
pub(crate) fn clean_run_files() -> Result<()> {
    for dir in [paths::data_dir(), paths::run_dir(), paths::pki_dir()] {
        if dir.exists() {
            fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
        }
    }
    for file in [paths::kubeconfig(), paths::state_file()] {
        if file.exists() {
            fs::remove_file(&file).with_context(|| format!("removing {}", file.display()))?;
        }
    }
    if let Ok(entries) = fs::read_dir(paths::logs_dir()) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.ends_with(".log") && !name.starts_with("build-") {
                let _ = fs::remove_file(e.path());
            }
        }
    }
    Ok(())
}

fn fresh_start(
    v: &Versions,
    bins: &Binaries,
    hub: Hub,
    hub_bins: Option<&(String, HubBinaries)>,
    members: usize,
    owner: Owner,
) -> Result<State> {
    clean_run_files()?;
    fs::create_dir_all(paths::logs_dir())?;
    let names = cluster_names(members);
    let extra = match hub {
        Hub::Plain => 0,
        Hub::Karmada => karmada::PORTS,
        Hub::Ocm => ocm::ports(members),
        Hub::KubeFed => kubefed::PORTS,
    };
    // One call, so no two servers are handed the same port.
    let ports = procs::free_ports(2 + names.len() + extra)?;
    let pki = pki::generate().context("generating the test PKI")?;
    pki.write(&paths::pki_dir())?;
    let karmada_pki = match hub {
        Hub::Karmada => Some(pki.karmada().context("generating Karmada's certificates")?),
        _ => None,
    };
    let cluster_ports = &ports[2..2 + names.len()];

    let clusters: Vec<(String, u16)> = names
        .iter()
        .cloned()
        .zip(cluster_ports.iter().copied())
        .collect();
    let mut kubefed_token = None;
    match hub {
        Hub::Plain => {}
        Hub::Karmada => {
            if let Some(kpki) = &karmada_pki {
                karmada::write_files(&pki, kpki, cluster_ports[0])?;
            }
        }
        Hub::Ocm => ocm::write_files(&pki, &clusters)?,
        Hub::KubeFed => kubefed_token = Some(kubefed::write_files(&pki, cluster_ports[0])?),
    }
    write_atomically(&paths::kubeconfig(), &kubeconfig::render(&pki, &clusters))?;
    for (name, port) in &clusters {
        let dir = cluster_run_dir(name);
        fs::create_dir_all(&dir)?;
        write_atomically(
            &dir.join("controller-manager.kubeconfig"),
            &kubeconfig::render_controller_manager(&pki, *port),
        )?;
    }

    let plane_ports = &ports[2 + names.len()..];
    let mut s = State {
        kubernetes: v.kubernetes.clone(),
        etcd_version: v.etcd.clone(),
        members,
        owner,
        etcd: None,
        etcd_client_port: ports[0],
        etcd_peer_port: ports[1],
        clusters: clusters
            .iter()
            .map(|(name, port)| Cluster {
                name: name.clone(),
                port: *port,
                apiserver: None,
                controller_manager: None,
                scheduler: None,
                kwok: None,
                stopped: false,
            })
            .collect(),
        complete: false,
        scale: None,
        proxies: None,
        hub_plane: match (hub, hub_bins) {
            (Hub::Karmada, Some((kv, _))) => {
                Some(HubPlane::Karmada(karmada::plane(kv, plane_ports)?))
            }
            (Hub::Ocm, Some((ov, _))) => {
                Some(HubPlane::Ocm(ocm::plane(ov, plane_ports, &names[1..])?))
            }
            (Hub::KubeFed, Some((kv, _))) => {
                Some(HubPlane::KubeFed(kubefed::plane(kv, plane_ports)?))
            }
            _ => None,
        },
    };
    s.save(&paths::state_file())?;

    start_etcd(&mut s, bins)?;

    // All API servers start in parallel; readiness is awaited together.
    let mut starting = Vec::new();
    for name in &names {
        let pid = start_apiserver(&mut s, name, bins)?;
        starting.push((name.clone(), pid));
    }
    wait_apiservers_ready(&s, &mut starting)?;
    apply_rbac(&names)?;
    // Karmada and OCM install before the controller-managers (the hub's garbage collector then
    // discovers Karmada's aggregated cluster API from its start), KubeFed after them.
    let hub_bins = hub_bins.map(|(_, b)| b);
    match (hub_bins, &karmada_pki) {
        (Some(b), Some(_)) => karmada::install_and_start(&mut s, b, &pki)?,
        (Some(b), None) if hub == Hub::Ocm => ocm::install_and_start(&mut s, b)?,
        _ => {}
    }
    for name in &names {
        start_controller_manager(&mut s, name, bins)?;
        start_member_workloads(&mut s, name, bins)?;
    }
    wait_member_nodes(&s, &names)?;
    match (hub_bins, &karmada_pki, &kubefed_token) {
        (_, Some(kpki), _) => karmada::join_members(&s, &pki, kpki)?,
        (Some(b), _, Some(token)) => {
            kubefed::install_and_start(&mut s, b)?;
            kubefed::join_members(&s, &pki, token)?;
        }
        (Some(b), ..) if hub == Hub::Ocm => ocm::join_members(&mut s, b)?,
        _ => {}
    }
    s.complete = true;
    s.save(&paths::state_file())?;
    Ok(s)
}

/// Starts whatever of the hub plane is not running (see each plane's `ensure_running`);
/// returns whether anything was started.
fn ensure_plane_running(s: &mut State, bins: &HubBinaries) -> Result<bool> {
    match Hub::of(s) {
        Hub::Plain => Ok(false),
        Hub::Karmada => karmada::ensure_running(s, bins),
        Hub::Ocm => ocm::ensure_running(s, bins),
        Hub::KubeFed => kubefed::ensure_running(s, bins),
    }
}

/// etcd's backend quota for a scale environment: 200,000 Works with their status writes
/// pass the default 2 GiB before the API server's compaction catches up.
const SCALE_ETCD_QUOTA_BYTES: u64 = 8 << 30;
/// Soft memory limits of a scale hub's servers (they hold every object in their caches).
const SCALE_APISERVER_MEMLIMIT: &str = "8GiB";
const SCALE_ETCD_MEMLIMIT: &str = "4GiB";

pub(crate) fn start_etcd(s: &mut State, bins: &Binaries) -> Result<()> {
    let data = paths::etcd_data_dir();
    fs::create_dir_all(&data)?;
    // etcd warns unless its data directory is private.
    fs::set_permissions(&data, fs::Permissions::from_mode(0o700))?;
    let client = format!("http://127.0.0.1:{}", s.etcd_client_port);
    let peer = format!("http://127.0.0.1:{}", s.etcd_peer_port);
    let args = vec![
        "--name=flotilla-testenv".to_string(),
        format!("--data-dir={}", data.display()),
        format!("--listen-client-urls={client}"),
        format!("--advertise-client-urls={client}"),
        format!("--listen-peer-urls={peer}"),
        format!("--initial-advertise-peer-urls={peer}"),
        format!("--initial-cluster=flotilla-testenv={peer}"),
        "--initial-cluster-state=new".to_string(),
        "--unsafe-no-fsync".to_string(),
        "--log-level=warn".to_string(),
    ];
    let mut args = args;
    let mut memlimit = SMALL_MEMLIMIT;
    if s.scale.is_some() {
        args.push(format!("--quota-backend-bytes={SCALE_ETCD_QUOTA_BYTES}"));
        memlimit = SCALE_ETCD_MEMLIMIT;
    }
    let log = paths::log_file("etcd");
    let pid = procs::spawn(&bins.etcd, &args, &[("GOMEMLIMIT", memlimit)], &log)?;
    s.etcd = Some(ProcRec::new(pid, &bins.etcd));
    s.save(&paths::state_file())?;

    let deadline = Instant::now() + ETCD_TIMEOUT;
    loop {
        if let Some(status) = procs::exited(pid)? {
            bail!(
                "etcd exited during startup ({status}); last lines of {}:\n{}",
                log.display(),
                procs::tail(&log, 20)
            );
        }
        if let Ok((200, body)) = procs::http_get(s.etcd_client_port, "/health")
            && body.contains("\"health\":\"true\"")
        {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "etcd did not become healthy within {ETCD_TIMEOUT:?}; see {}",
                log.display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn apiserver_args(s: &State, c: &Cluster) -> Vec<String> {
    let pki = PkiFiles::new(&paths::pki_dir());
    let certs = cluster_run_dir(&c.name).join("certs");
    let port = c.port;
    let hub = Hub::of(s);
    let mut args = vec![
        format!("--etcd-servers=http://127.0.0.1:{}", s.etcd_client_port),
        format!("--etcd-prefix={}", c.etcd_prefix()),
        "--bind-address=127.0.0.1".to_string(),
        format!("--secure-port={port}"),
        // A loopback advertise address only passes validation with the endpoint reconciler
        // off; it also keeps the apiserver independent of a default route.
        "--advertise-address=127.0.0.1".to_string(),
        "--endpoint-reconciler-type=none".to_string(),
        format!("--cert-dir={}", certs.display()),
        format!("--tls-cert-file={}", pki.apiserver_cert.display()),
        format!("--tls-private-key-file={}", pki.apiserver_key.display()),
        format!("--client-ca-file={}", pki.ca_cert.display()),
        "--authorization-mode=RBAC".to_string(),
        format!("--service-account-issuer=https://127.0.0.1:{port}"),
        format!("--service-account-key-file={}", pki.sa_pub.display()),
        format!(
            "--service-account-signing-key-file={}",
            pki.sa_key.display()
        ),
        "--service-cluster-ip-range=10.0.0.0/24".to_string(),
        // No service-account controller runs, so pods must not require a default SA.
        if hub == Hub::Karmada && c.name == "hub" {
            karmada::HUB_DISABLED_ADMISSION.to_string()
        } else {
            "--disable-admission-plugins=ServiceAccount".to_string()
        },
        "--allow-privileged=true".to_string(),
        "--profiling=false".to_string(),
        // Cheaper on a 2-core machine, and no compaction shared across the clusters' prefixes.
        "--enable-priority-and-fairness=false".to_string(),
    ];
    // A scale hub is alone on its etcd, and its status churn needs compaction (the default
    // 5 minutes) to keep etcd inside its quota.
    if s.scale.is_none() {
        args.push("--etcd-compaction-interval=0".to_string());
    }
    match (hub, c.name == "hub") {
        (Hub::Karmada, true) => args.extend(karmada::hub_apiserver_args()),
        (Hub::Karmada, false) => args.extend(karmada::member_apiserver_args()),
        (Hub::KubeFed, false) => args.extend(kubefed::member_apiserver_args()),
        _ => {}
    }
    if c.name != "hub" {
        args.extend(kwok::member_apiserver_args(&pki));
    }
    args
}

/// Spawns one cluster's kube-apiserver and records it; readiness is the caller's business.
pub(crate) fn start_apiserver(s: &mut State, name: &str, bins: &Binaries) -> Result<u32> {
    let c = s
        .cluster(name)
        .with_context(|| format!("no cluster `{name}`"))?
        .clone();
    fs::create_dir_all(cluster_run_dir(name).join("certs"))?;
    let args = apiserver_args(s, &c);
    let memlimit = if s.scale.is_some() {
        SCALE_APISERVER_MEMLIMIT
    } else {
        APISERVER_MEMLIMIT
    };
    let pid = procs::spawn(
        &bins.kube_apiserver,
        &args,
        &[("GOMEMLIMIT", memlimit)],
        &paths::log_file(&format!("{name}-kube-apiserver")),
    )?;
    if let Some(c) = s.cluster_mut(name) {
        c.apiserver = Some(ProcRec::new(pid, &bins.kube_apiserver));
        c.stopped = false;
    }
    s.save(&paths::state_file())?;
    Ok(pid)
}

fn start_controller_manager(s: &mut State, name: &str, bins: &Binaries) -> Result<()> {
    let dir = cluster_run_dir(name);
    let mut args = vec![
        format!(
            "--kubeconfig={}",
            dir.join("controller-manager.kubeconfig").display()
        ),
        // The hub only deletes namespaces and cascades ownerReferences (its workloads are
        // templates for the members); members run the workload controllers too.
        if name == "hub" {
            "--controllers=namespace-controller,garbage-collector-controller".to_string()
        } else {
            format!("--controllers={}", kwok::MEMBER_CONTROLLERS)
        },
        "--leader-elect=false".to_string(),
        "--secure-port=0".to_string(),
        "--use-service-account-credentials=false".to_string(),
    ];
    if Hub::of(s) == Hub::Ocm && name == "hub" {
        ocm::extend_hub_controller_manager(&mut args);
    }
    let pid = procs::spawn(
        &bins.kube_controller_manager,
        &args,
        &[("GOMEMLIMIT", SMALL_MEMLIMIT)],
        &paths::log_file(&format!("{name}-kube-controller-manager")),
    )?;
    if let Some(c) = s.cluster_mut(name) {
        c.controller_manager = Some(ProcRec::new(pid, &bins.kube_controller_manager));
    }
    s.save(&paths::state_file())?;
    Ok(())
}

/// Starts what makes member `name` run pods and is not running yet: its fake Node, its
/// kube-scheduler and kwok. Returns whether it started anything (then its Node is awaited).
fn start_member_workloads(s: &mut State, name: &str, bins: &Binaries) -> Result<bool> {
    let Some(c) = s.cluster(name).filter(|_| name != "hub").cloned() else {
        return Ok(false);
    };
    let kubeconfig = cluster_run_dir(name).join("controller-manager.kubeconfig");
    let mut started = false;
    if !c.scheduler.as_ref().is_some_and(procs::is_alive) {
        let pid = procs::spawn(
            &bins.kube_scheduler,
            &kwok::scheduler_args(&kubeconfig),
            &[("GOMEMLIMIT", SMALL_MEMLIMIT)],
            &paths::log_file(&format!("{name}-kube-scheduler")),
        )?;
        if let Some(c) = s.cluster_mut(name) {
            c.scheduler = Some(ProcRec::new(pid, &bins.kube_scheduler));
        }
        s.save(&paths::state_file())?;
        started = true;
    }
    if !c.kwok.as_ref().is_some_and(procs::is_alive) {
        // A fresh port each start: the Node is told it before KWOK serves on it.
        let port = procs::free_ports(1)?[0];
        kwok::ensure_node(name, port)?;
        let simulation = kwok::write_simulation(&cluster_run_dir(name), name)?;
        let pid = procs::spawn(
            &bins.kwok,
            &kwok::args(
                &kubeconfig,
                &bins.kwok_stages,
                &simulation,
                port,
                &PkiFiles::new(&paths::pki_dir()),
            ),
            &[("GOMEMLIMIT", SMALL_MEMLIMIT)],
            &paths::log_file(&format!("{name}-kwok")),
        )?;
        if let Some(c) = s.cluster_mut(name) {
            c.kwok = Some(ProcRec::new(pid, &bins.kwok));
        }
        s.save(&paths::state_file())?;
        started = true;
    }
    Ok(started)
}

/// Waits until every member's fake Node is Ready (KWOK plays it).
fn wait_member_nodes(s: &State, names: &[String]) -> Result<()> {
    let t = Instant::now();
    for name in names.iter().filter(|n| n.as_str() != "hub") {
        kwok::wait_node_ready(name).with_context(|| {
            let kwok_alive = s
                .cluster(name)
                .and_then(|c| c.kwok.as_ref())
                .is_some_and(procs::is_alive);
            let log = paths::log_file(&format!("{name}-kwok"));
            format!(
                "{name}'s node did not turn Ready (kwok {}); last lines of {}:\n{}",
                if kwok_alive { "running" } else { "exited" },
                log.display(),
                procs::tail(&log, 25)
            )
        })?;
    }
    say!(
        "testenv: members' KWOK nodes Ready ({:.1} s)",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

fn readyz(context: &str) -> bool {
    kubectl::command(context)
        .args(["get", "--raw", "/readyz", "--request-timeout=5s"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "ok")
}

pub(crate) fn wait_apiservers_ready(s: &State, starting: &mut Vec<(String, u32)>) -> Result<()> {
    let t = Instant::now();
    let deadline = t + READY_TIMEOUT;
    while !starting.is_empty() {
        let mut i = 0;
        while i < starting.len() {
            let (name, pid) = &starting[i];
            let log = paths::log_file(&format!("{name}-kube-apiserver"));
            if let Some(status) = procs::exited(*pid)? {
                bail!(
                    "{name}'s kube-apiserver exited during startup ({status}); last lines of {}:\n{}",
                    log.display(),
                    procs::tail(&log, 25)
                );
            }
            let port = s.cluster(name).map_or(0, |c| c.port);
            if procs::port_open(port) && readyz(name) {
                say!(
                    "testenv: {name} ready on https://127.0.0.1:{port} ({:.1} s)",
                    t.elapsed().as_secs_f64()
                );
                starting.remove(i);
            } else {
                i += 1;
            }
        }
        if starting.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            let logs: Vec<String> = starting
                .iter()
                .map(|(n, _)| {
                    paths::log_file(&format!("{n}-kube-apiserver"))
                        .display()
                        .to_string()
                })
                .collect();
            bail!(
                "kube-apiserver not ready within {READY_TIMEOUT:?} (GET /readyz); see {}",
                logs.join(", ")
            );
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    Ok(())
}

/// Binds the read-only user to get/list/watch on every cluster (in parallel).
pub(crate) fn apply_rbac(names: &[String]) -> Result<()> {
    let manifest = RBAC_MANIFEST.replace("USER", pki::READONLY_USER);
    let mut running = Vec::new();
    for name in names {
        let mut child = kubectl::command(name)
            .args([
                "apply",
                "--server-side",
                "--field-manager=flotilla-testenv",
                "-f",
                "-",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("running kubectl (is it on PATH?)")?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(manifest.as_bytes())?;
        }
        running.push((name, child));
    }
    for (name, child) in running {
        let out = child.wait_with_output()?;
        if !out.status.success() {
            bail!(
                "creating the read-only RBAC on {name} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
    }
    Ok(())
}

/// Starts whatever of cluster `name` is not running (API server, then controller-manager).
/// Returns whether anything was started.
fn ensure_cluster_running(s: &mut State, name: &str, bins: &Binaries) -> Result<bool> {
    let c = s
        .cluster(name)
        .with_context(|| format!("no cluster `{name}`"))?
        .clone();
    let api_alive = c.apiserver.as_ref().is_some_and(procs::is_alive);
    let kcm_alive = c.controller_manager.as_ref().is_some_and(procs::is_alive);
    let member = name != "hub";
    let workloads_alive = !member
        || (c.scheduler.as_ref().is_some_and(procs::is_alive)
            && c.kwok.as_ref().is_some_and(procs::is_alive));
    if api_alive && kcm_alive && workloads_alive {
        return Ok(false);
    }
    if !api_alive {
        // A dead API server's controllers are restarted with it.
        let controllers = s
            .cluster_mut(name)
            .map(Cluster::take_controllers)
            .unwrap_or_default();
        s.save(&paths::state_file())?;
        procs::stop_all(&controllers, STOP_GRACE)?;
        say!("testenv: starting {name} on https://127.0.0.1:{}", c.port);
        let pid = start_apiserver(s, name, bins)?;
        wait_apiservers_ready(s, &mut vec![(name.to_string(), pid)])?;
        // Idempotent; covers a fresh start that was interrupted before the RBAC step.
        apply_rbac(&[name.to_string()])?;
    }
    if !(api_alive && kcm_alive) {
        start_controller_manager(s, name, bins)?;
    }
    if start_member_workloads(s, name, bins)? {
        wait_member_nodes(s, &[name.to_string()])?;
    }
    if let Some(c) = s.cluster_mut(name) {
        c.stopped = false;
    }
    s.save(&paths::state_file())?;
    Ok(true)
}

/// `cargo xtask testenv down`: stop everything recorded, verify it is gone, and remove the
/// run files (logs stay for post-mortems).
pub fn down() -> Result<()> {
    let _lock = lock()?;
    let s = State::load(&paths::state_file()).with_context(|| {
        format!(
            "cannot tell what is running; stop the processes by hand and remove {}",
            paths::state_file().display()
        )
    })?;
    let Some(s) = s else {
        say!(
            "testenv: nothing is running (no {})",
            paths::display(&paths::state_file())
        );
        return Ok(());
    };
    let alive = s
        .all_procs()
        .iter()
        .filter(|(_, p)| procs::is_alive(p))
        .count();
    stop_env(&s)?;
    clean_run_files()?;
    say!(
        "testenv: stopped {alive} processes; environment removed (logs kept in {})",
        paths::display(&paths::logs_dir())
    );
    Ok(())
}

/// `cargo xtask testenv status`: prints the environment; true when everything is up.
pub fn status() -> Result<bool> {
    let Some(s) = State::load(&paths::state_file())? else {
        say!("testenv: not running");
        return Ok(false);
    };
    let mut all_up = true;
    let etcd_up = s.etcd.as_ref().is_some_and(procs::is_alive);
    all_up &= etcd_up;
    let hub = hub_label(&s);
    say!(
        "testenv: Kubernetes {}, etcd {}, {hub} + {} members, owner {}",
        s.kubernetes,
        s.etcd_version,
        s.members,
        match s.owner {
            Owner::Manual => "testenv up".to_string(),
            Owner::Test { pid } => format!("cargo xtask test (pid {pid})"),
        }
    );
    say!(
        "  {:<12} {:<24} {}",
        "etcd",
        format!("127.0.0.1:{}", s.etcd_client_port),
        if etcd_up { "running" } else { "DOWN" }
    );
    for c in &s.clusters {
        let api = c.apiserver.as_ref().is_some_and(procs::is_alive);
        // A scale hub runs no controller-manager; members also run kube-scheduler and kwok.
        let alive = |p: &Option<ProcRec>| p.as_ref().is_some_and(procs::is_alive);
        let kcm = s.scale.is_some() || alive(&c.controller_manager);
        let workloads = c.name == "hub" || (alive(&c.scheduler) && alive(&c.kwok));
        let ready = api && readyz(&c.name);
        let what = if c.stopped && !api {
            "stopped (testenv stop)".to_string()
        } else if ready && kcm && workloads {
            "ready".to_string()
        } else {
            let up = |running: bool| if running { "running" } else { "down" };
            format!(
                "DEGRADED (kube-apiserver {}, kube-controller-manager {}{}; \
                 `cargo xtask testenv up` restarts what is down)",
                match (api, ready) {
                    (true, true) => "ready",
                    (true, false) => "running but not ready",
                    _ => "down",
                },
                up(kcm),
                if c.name == "hub" {
                    String::new()
                } else {
                    format!(
                        ", kube-scheduler {}, kwok {}",
                        up(alive(&c.scheduler)),
                        up(alive(&c.kwok))
                    )
                }
            )
        };
        all_up &= what == "ready";
        say!(
            "  {:<12} {:<24} {what}",
            c.name,
            format!("https://127.0.0.1:{}", c.port)
        );
    }
    if let Some(p) = &s.hub_plane {
        let lines = match p {
            // A scale hub runs only Karmada's aggregated API server (its Cluster API).
            HubPlane::Karmada(k) if s.scale.is_some() => {
                karmada::status_lines(k).into_iter().take(1).collect()
            }
            HubPlane::Karmada(k) => karmada::status_lines(k),
            HubPlane::Ocm(o) => ocm::status_lines(o),
            HubPlane::KubeFed(k) => kubefed::status_lines(k),
        };
        let flag = Hub::of(&s).flag();
        for (name, addr, up, cluster) in lines {
            let what = if up {
                "running".to_string()
            } else if s.cluster(&cluster).is_some_and(|c| c.stopped) {
                match p {
                    HubPlane::Ocm(_) => format!("stopped with {cluster}"),
                    _ => "stopped with the hub".to_string(),
                }
            } else {
                all_up = false;
                format!("DOWN (`cargo xtask testenv up --hub {flag}` restarts it)")
            };
            say!("  {name:<28} {addr:<32} {what}");
        }
    }
    say!("  kubeconfig   {}", paths::kubeconfig().display());
    Ok(all_up)
}

fn load_running() -> Result<State> {
    State::load(&paths::state_file())?
        .context("the test environment is not running: cargo xtask testenv up")
}

fn check_cluster(s: &State, name: &str) -> Result<()> {
    if s.scale.is_some() {
        bail!("a scale environment has only its hub; `testenv stop|start` is for the member tiers");
    }
    if s.cluster(name).is_none() {
        let names: Vec<&str> = s.clusters.iter().map(|c| c.name.as_str()).collect();
        bail!("no cluster `{name}` (clusters: {})", names.join(", "));
    }
    Ok(())
}

/// `cargo xtask testenv stop <cluster>`: an outage of one cluster (its API server and
/// controller-manager stop; its data stays in etcd; the port is kept for `start`).
pub fn stop_cluster(name: &str) -> Result<()> {
    let _lock = lock()?;
    let mut s = load_running()?;
    check_cluster(&s, name)?;
    // The hub plane's processes of this cluster go first, in the groups `down` uses; Karmada's
    // controllers take the hub's kube-controller-manager with them (see `State::stop_phases`).
    if let Some(p) = s.hub_plane.as_mut()
        && p.runs_with(name)
    {
        let (mut controllers, aggregated) = p.take_for_stop(name);
        if Hub::of(&s) == Hub::Karmada
            && let Some(p) = s
                .cluster_mut(name)
                .and_then(|c| c.controller_manager.take())
        {
            controllers.push((format!("{name} kube-controller-manager"), p));
        }
        s.save(&paths::state_file())?;
        procs::stop_all(&controllers, STOP_GRACE)?;
        procs::stop_all(&aggregated, STOP_GRACE)?;
    }
    let mut procs_ = Vec::new();
    if let Some(c) = s.cluster_mut(name) {
        procs_.extend(c.take_controllers());
        if let Some(p) = c.apiserver.take() {
            procs_.push((format!("{name} kube-apiserver"), p));
        }
        c.stopped = true;
    }
    procs::stop_all(&procs_, STOP_GRACE)?;
    s.save(&paths::state_file())?;
    say!("testenv: {name} stopped (start it again with `cargo xtask testenv start {name}`)");
    Ok(())
}

/// `cargo xtask testenv start <cluster>`: brings a stopped cluster back on the same port.
pub fn start_cluster(name: &str) -> Result<()> {
    let _lock = lock()?;
    let mut s = load_running()?;
    check_cluster(&s, name)?;
    kubectl::check_installed()?;
    if !s.etcd.as_ref().is_some_and(procs::is_alive) {
        bail!("etcd is not running (stale environment): run `cargo xtask testenv up`");
    }
    let v = Versions::from_wrappers()?;
    if v.kubernetes != s.kubernetes {
        bail!(
            "the environment runs {} but the wrappers pin {}: run `cargo xtask testenv down` and `up`",
            s.kubernetes,
            v.kubernetes
        );
    }
    let bins = gobuild::ensure_built(&v)?;
    let hub_bins = match (&s.hub_plane, Hub::of(&s).build()) {
        (Some(p), Some(build)) if p.runs_with(name) => Some(build.ensure_built(p.version())?),
        _ => None,
    };
    let t = Instant::now();
    let mut started = ensure_cluster_running(&mut s, name, &bins)?;
    if let Some(hub_bins) = &hub_bins {
        started |= ensure_plane_running(&mut s, hub_bins)?;
    }
    if started {
        say!(
            "testenv: {name} started in {:.1} s",
            t.elapsed().as_secs_f64()
        );
    } else {
        say!("testenv: {name} is already running");
    }
    Ok(())
}
