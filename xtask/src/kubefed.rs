//! The KubeFed hub of `cargo xtask testenv up --hub kubefed`: building KubeFed's last release
//! (v0.10.0, archived) through the pinned wrapper module `xtask/go/kubefed` with a copy of the
//! module's CRDs and FederatedTypeConfigs, the static bearer token the members accept, the
//! install on the plain hub (CRDs, a complete KubeFedConfig, the type configs), the one
//! `kubefed-controller-manager` process, and the join of every member as a KubeFedCluster named
//! after its context. It must only bind 127.0.0.1, only talk to the test environment's own
//! clusters, and only start or stop the process the state records.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::gobuild::{self, Component};
use crate::karmada::{apply, kubectl_run};
use crate::kubeconfig;
use crate::paths;
use crate::pki::{self, Pki};
use crate::procs::{self, ProcRec};
use crate::state::{KubeFed, Named, State};
use crate::testenv::{exe_string, log_path, write_atomically};

/// The KubeFed module; its release is pinned by `xtask/go/kubefed/go.mod`.
pub const MODULE: &str = "sigs.k8s.io/kubefed";
/// The wrapper module's directory name under `xtask/go/`.
const WRAPPER: &str = "kubefed";
/// The cached binary's name (upstream's is the generic `controller-manager`).
const BINARY: &str = "kubefed-controller-manager";
/// Where KubeFed keeps its configuration, clusters and their secrets on the hub.
pub const NAMESPACE: &str = "kube-federation-system";
/// How many ports the plane needs: the controller-manager's health and metrics endpoints.
pub const PORTS: usize = 2;

/// The hub's context.
const HUB: &str = "hub";
const MEMLIMIT: &str = "400MiB";
/// How long the controller-manager gets to answer on its health port after it starts.
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the members get to turn Ready after they join.
const JOIN_TIMEOUT: Duration = Duration::from_secs(120);
/// The user behind the bearer token KubeFed presents to members (a superuser there).
const MEMBER_TOKEN_USER: &str = "flotilla-testenv-kubefed-member";

/// The manifests copied from the module, by file name in the cache: CRDs first (the control
/// plane's, then the Federated types'), then the FederatedTypeConfigs.
const MANIFESTS: [(&str, &str); 3] = [
    (
        "core-crds.yaml",
        "charts/kubefed/charts/controllermanager/crds/crds.yaml",
    ),
    ("federated-crds.yaml", "charts/kubefed/crds/crds.yaml"),
    (
        "federatedtypeconfigs.yaml",
        "charts/kubefed/templates/federatedtypeconfig.yaml",
    ),
];

/// The KubeFedConfig the controller-manager reads at start. Upstream's Helm chart fills it
/// through a mutating webhook we do not run; without it the controller creates a bare one and
/// its validation fatals. Values are the chart's defaults except a 5 s health-check period
/// (upstream 10 s), so an outage shows within ~15 s (3 failed probes).
fn kubefed_config() -> String {
    format!(
        "apiVersion: core.kubefed.io/v1beta1
kind: KubeFedConfig
metadata: {{name: kubefed, namespace: {NAMESPACE}}}
spec:
  scope: Cluster
  controllerDuration: {{availableDelay: 20s, unavailableDelay: 60s, cacheSyncTimeout: 5m}}
  leaderElect: {{leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 5s, resourceLock: configmaps}}
  clusterHealthCheck: {{period: 5s, failureThreshold: 3, successThreshold: 1, timeout: 3s}}
  syncController: {{maxConcurrentReconciles: 1, adoptResources: Enabled}}
  statusController: {{maxConcurrentReconciles: 1}}
  featureGates:
  - {{name: PushReconciler, configuration: Enabled}}
  - {{name: SchedulerPreferences, configuration: Enabled}}
"
    )
}

/// The pinned KubeFed release, e.g. `v0.10.0`.
pub fn version() -> Result<String> {
    gobuild::require_version(&paths::go_module_dir(WRAPPER).join("go.mod"), MODULE)
}

/// The cached controller-manager and manifests of one release.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub controller_manager: PathBuf,
    /// The files of `MANIFESTS`.
    pub manifests: PathBuf,
}

fn component(kv: &str) -> Component {
    Component {
        name: BINARY,
        module: WRAPPER,
        package: "sigs.k8s.io/kubefed/cmd/controller-manager",
        ldflags: format!("-s -w -X {MODULE}/pkg/version.version={kv}"),
        // `--version` prints `KubeFed controller-manager version: version.Info{Version:"v0.10.0", …`.
        expect_version: format!("Version:\"{kv}\""),
        version_args: &["--version"],
        version: kv.to_string(),
        estimate: "about 7 minutes on 2 cores",
    }
}

fn cache_dir(kv: &str) -> Result<PathBuf> {
    paths::cache_dir(&format!("kubefed-{kv}"))
}

/// True when the pinned release's binary and manifests are cached (no Go needed).
pub fn cache_is_complete() -> Result<bool> {
    let kv = version()?;
    let dir = cache_dir(&kv)?;
    let c = component(&kv);
    let hash = gobuild::inputs_hash(&c)?;
    Ok(gobuild::stamp_matches(&dir, &c, &hash) && manifests_stamp_matches(&dir, &kv))
}

/// Makes sure the controller-manager of release `kv` and its manifests are cached in
/// `~/.cache/flotilla/testenv/kubefed-<kv>/`.
pub fn ensure_built(kv: &str) -> Result<Binaries> {
    let dir = cache_dir(kv)?;
    gobuild::ensure_components(&dir, &[component(kv)])?;
    if !manifests_stamp_matches(&dir, kv) {
        gobuild::check_go()?;
        copy_manifests(&dir, kv)?;
    }
    Ok(Binaries {
        controller_manager: dir.join(BINARY),
        manifests: dir.join("manifests"),
    })
}

fn manifests_stamp_matches(dir: &Path, kv: &str) -> bool {
    fs::read_to_string(gobuild::stamp_path(dir, "manifests"))
        .is_ok_and(|t| t.lines().any(|l| l == format!("version={kv}")))
        && MANIFESTS
            .iter()
            .all(|(name, _)| dir.join("manifests").join(name).is_file())
}

/// The module's source directory in the module cache (downloading it if needed).
fn module_source(kv: &str) -> Result<PathBuf> {
    let out = Command::new("go")
        .args(["mod", "download", "-json", &format!("{MODULE}@{kv}")])
        .current_dir(paths::go_module_dir(WRAPPER))
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", gobuild::goflags())
        .stdin(Stdio::null())
        .output()
        .context("running `go mod download`")?;
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "`go mod download -json {MODULE}@{kv}` printed no JSON: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })?;
    if let Some(err) = info.get("Error").and_then(serde_json::Value::as_str) {
        bail!("downloading {MODULE}@{kv}: {err}");
    }
    info.get("Dir")
        .and_then(serde_json::Value::as_str)
        .map(PathBuf::from)
        .with_context(|| format!("`go mod download` gave no directory for {MODULE}@{kv}"))
}

/// Copies `MANIFESTS` from the module into `dir/manifests` (atomically, then a stamp).
fn copy_manifests(dir: &Path, kv: &str) -> Result<()> {
    let src = module_source(kv)?;
    let partial = dir.join(format!(".manifests.partial-{}", std::process::id()));
    if partial.exists() {
        fs::remove_dir_all(&partial)?;
    }
    fs::create_dir_all(&partial)?;
    for (name, rel) in MANIFESTS {
        let from = src.join(rel);
        // Read and write (not `fs::copy`): module-cache files are read-only.
        let text = fs::read(&from).with_context(|| format!("reading {}", from.display()))?;
        fs::write(partial.join(name), text)
            .with_context(|| format!("writing {}", partial.join(name).display()))?;
    }
    let target = dir.join("manifests");
    if target.exists() {
        fs::remove_dir_all(&target)?;
    }
    fs::rename(&partial, &target)?;
    fs::write(
        gobuild::stamp_path(dir, "manifests"),
        format!("component=manifests\nversion={kv}\n"),
    )?;
    say!("testenv: copied KubeFed's CRDs and FederatedTypeConfigs from {MODULE}@{kv}");
    Ok(())
}

/// A new plane's record from `PORTS` free ports (nothing started yet).
pub fn plane(version: &str, ports: &[u16]) -> Result<KubeFed> {
    let [health_port, metrics_port] =
        <[u16; PORTS]>::try_from(ports).context("the KubeFed hub needs exactly 2 ports")?;
    Ok(KubeFed {
        version: version.to_string(),
        health_port,
        metrics_port,
        controller_manager: None,
    })
}

fn run_dir() -> PathBuf {
    paths::run_dir().join("kubefed")
}

/// The controller-manager's client config for the hub (the admin identity, a superuser as
/// upstream's install makes it).
fn components_kubeconfig() -> PathBuf {
    run_dir().join("kubefed.kubeconfig")
}

/// The members' `--token-auth-file`.
fn member_tokens_file() -> PathBuf {
    paths::pki_dir().join("kubefed-member-tokens.csv")
}

/// Writes the controller-manager's kubeconfig and the members' token file (fresh start
/// only); returns the bearer token the members accept.
pub fn write_files(pki: &Pki, hub_port: u16) -> Result<String> {
    fs::create_dir_all(run_dir())?;
    write_atomically(
        &components_kubeconfig(),
        &kubeconfig::render_private(pki, "kubefed", &pki.admin, hub_port),
    )?;
    let token = pki::random_token()?;
    fs::create_dir_all(paths::pki_dir())?;
    write_atomically(
        &member_tokens_file(),
        &format!("{token},{MEMBER_TOKEN_USER},{MEMBER_TOKEN_USER},\"system:masters\"\n"),
    )?;
    Ok(token)
}

/// Extra kube-apiserver flags of a member under a KubeFed hub: the static bearer token its
/// KubeFedCluster secret carries (KubeFed authenticates to members with a token only).
pub fn member_apiserver_args() -> Vec<String> {
    vec![format!(
        "--token-auth-file={}",
        member_tokens_file().display()
    )]
}

fn args(k: &KubeFed) -> Vec<String> {
    vec![
        format!("--kubeconfig={}", components_kubeconfig().display()),
        // Mandatory out of a cluster (it would read the pod's service-account namespace).
        format!("--kubefed-namespace={NAMESPACE}"),
        format!("--healthz-addr=127.0.0.1:{}", k.health_port),
        format!("--metrics-addr=127.0.0.1:{}", k.metrics_port),
        "-v=2".to_string(),
    ]
}

fn answers(k: &KubeFed) -> bool {
    matches!(procs::http_get(k.health_port, "/healthz"), Ok((200, _)))
}

/// Spawns the controller-manager and waits until its health endpoint answers.
fn start(s: &mut State, bins: &Binaries) -> Result<()> {
    let k = s
        .kubefed
        .clone()
        .context("the environment has no KubeFed hub")?;
    let log = log_path(BINARY);
    let exe = &bins.controller_manager;
    let pid = procs::spawn(exe, &args(&k), &[("GOMEMLIMIT", MEMLIMIT)], &log)?;
    if let Some(k) = s.kubefed.as_mut() {
        k.controller_manager = Some(ProcRec {
            pid,
            exe: exe_string(exe),
        });
    }
    s.save(&paths::state_file())?;
    let t = Instant::now();
    loop {
        if let Some(status) = procs::exited(pid)? {
            bail!(
                "{BINARY} exited during startup ({status}); last lines of {}:\n{}",
                log.display(),
                procs::tail(&log, 25)
            );
        }
        if answers(&k) {
            say!("testenv: {BINARY} up ({:.1} s)", t.elapsed().as_secs_f64());
            return Ok(());
        }
        if t.elapsed() >= START_TIMEOUT {
            bail!(
                "{BINARY} did not answer within {START_TIMEOUT:?}; see {}",
                log.display()
            );
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Installs KubeFed on the hub and starts its controller-manager (fresh start): the
/// namespace, the CRDs, the KubeFedConfig, the FederatedTypeConfigs, then the process.
pub fn install_and_start(s: &mut State, bins: &Binaries) -> Result<()> {
    let t = Instant::now();
    apply(
        HUB,
        &format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {NAMESPACE}}}\n"),
    )?;
    let crds: Vec<String> = MANIFESTS[..2]
        .iter()
        .map(|(name, _)| bins.manifests.join(name).display().to_string())
        .collect();
    let mut apply_crds = vec![
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=flotilla-testenv",
    ];
    let mut wait = vec!["wait", "--for=condition=Established", "--timeout=90s"];
    for file in &crds {
        apply_crds.extend(["-f", file.as_str()]);
        wait.extend(["-f", file.as_str()]);
    }
    kubectl_run(HUB, &apply_crds, None)?;
    kubectl_run(HUB, &wait, None)?;
    say!(
        "testenv: KubeFed CRDs established on the hub ({:.1} s)",
        t.elapsed().as_secs_f64()
    );
    apply(HUB, &kubefed_config())?;
    // Upstream's type configs carry no namespace: they go into KubeFed's.
    let ftcs = bins.manifests.join(MANIFESTS[2].0).display().to_string();
    kubectl_run(
        HUB,
        &[
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=flotilla-testenv",
            "-n",
            NAMESPACE,
            "-f",
            &ftcs,
        ],
        None,
    )?;
    start(s, bins)?;
    say!(
        "testenv: KubeFed {} installed on the hub in {:.1} s",
        s.kubefed.as_ref().map_or("", |k| k.version.as_str()),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Joins every member as a KubeFedCluster named after its context (a Secret with the bearer
/// token, the cluster with the endpoint and CA), as `kubefedctl join` would minus its
/// service-account dance; then waits until KubeFed reports every cluster Ready.
pub fn join_members(s: &State, pki: &Pki, token: &str) -> Result<()> {
    let t = Instant::now();
    let token = kubeconfig::b64(token);
    let ca = kubeconfig::b64(&pki.ca.cert);
    let members: Vec<_> = s.clusters.iter().filter(|c| c.name != HUB).collect();
    for m in &members {
        let name = &m.name;
        apply(
            HUB,
            &format!(
                "apiVersion: v1\nkind: Secret\nmetadata: {{name: {name}-token, namespace: {NAMESPACE}}}\n\
                 type: Opaque\ndata: {{token: {token}}}\n---\n\
                 apiVersion: core.kubefed.io/v1beta1\nkind: KubeFedCluster\n\
                 metadata: {{name: {name}, namespace: {NAMESPACE}}}\n\
                 spec:\n  apiEndpoint: https://127.0.0.1:{port}\n  caBundle: {ca}\n  \
                 secretRef: {{name: {name}-token}}\n",
                port = m.port,
            ),
        )?;
    }
    kubectl_run(
        HUB,
        &[
            "wait",
            "-n",
            NAMESPACE,
            "--for=condition=Ready",
            &format!("--timeout={}s", JOIN_TIMEOUT.as_secs()),
            "kubefedclusters",
            "--all",
        ],
        None,
    )
    .with_context(|| {
        format!(
            "the members did not turn Ready in KubeFed (see {})",
            paths::display(&log_path(BINARY))
        )
    })?;
    say!(
        "testenv: {} members joined KubeFed and Ready ({:.1} s)",
        members.len(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Starts the controller-manager if it is not running (after a `stop hub`, a crash, or an
/// interrupted start). Returns whether it was started.
pub fn ensure_running(s: &mut State, bins: &Binaries) -> Result<bool> {
    let alive = s
        .kubefed
        .as_ref()
        .and_then(|k| k.controller_manager.as_ref())
        .is_some_and(procs::is_alive);
    if alive {
        return Ok(false);
    }
    say!("testenv: starting {BINARY}");
    start(s, bins)?;
    Ok(true)
}

/// Takes the controller-manager out of the state to stop it with the hub (`testenv stop hub`).
pub fn take_for_stop(s: &mut State) -> Vec<Named> {
    s.kubefed
        .as_mut()
        .and_then(|k| k.controller_manager.take())
        .map(|p| (BINARY.to_string(), p))
        .into_iter()
        .collect()
}

/// The status line of the controller-manager: name, address, whether it answers.
pub fn status_line(k: &KubeFed) -> (String, String, bool) {
    let up = k.controller_manager.as_ref().is_some_and(procs::is_alive) && answers(k);
    (
        BINARY.to_string(),
        format!("127.0.0.1:{} (health)", k.health_port),
        up,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plane_takes_exactly_its_ports() {
        let k = plane("v0.10.0", &[4000, 4001]).expect("plane");
        assert_eq!((k.health_port, k.metrics_port), (4000, 4001));
        assert!(plane("v0.10.0", &[4000]).is_err());
    }

    #[test]
    fn the_controller_binds_loopback_and_names_its_namespace() {
        let k = plane("v0.10.0", &[4000, 4001]).expect("plane");
        let args = args(&k);
        for arg in args.iter().filter(|a| a.contains("-addr=")) {
            assert!(arg.contains("=127.0.0.1:"), "{arg}");
        }
        assert!(args.contains(&format!("--kubefed-namespace={NAMESPACE}")));
    }

    #[test]
    fn the_release_comes_from_the_wrapper() {
        assert!(version().expect("pinned").starts_with("v0."));
    }

    #[test]
    fn the_config_has_what_validation_requires() {
        // ValidateKubeFedConfig fatals without these (no webhook fills them in).
        let c = kubefed_config();
        for key in [
            "controllerDuration:",
            "leaderElect:",
            "clusterHealthCheck:",
            "scope:",
        ] {
            assert!(c.contains(key), "{key}");
        }
    }
}
