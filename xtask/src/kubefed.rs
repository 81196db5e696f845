//! The KubeFed hub of `cargo xtask testenv up --hub kubefed`: building KubeFed's last release
//! (v0.10.0, archived) through the pinned wrapper module `xtask/go/kubefed` with a copy of the
//! module's CRDs and FederatedTypeConfigs, the static bearer token the members accept, the
//! install on the plain hub (CRDs, a complete KubeFedConfig, the type configs), the one
//! `kubefed-controller-manager` process, and the join of every member as a KubeFedCluster named
//! after its context. It must only bind 127.0.0.1, only talk to the test environment's own
//! clusters, and only start or stop the process the state records.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::files::write_atomically;
use crate::gobuild::{self, Component, HubBinaries, HubBuild};
use crate::kubeconfig;
use crate::kubectl::{self, apply};
use crate::paths;
use crate::pki::{self, Pki};
use crate::procs;
use crate::state::{KubeFed, State};

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

/// KubeFed's controller-manager, with `MANIFESTS` as manifests.
pub const BUILD: HubBuild = HubBuild {
    name: "KubeFed",
    cached: "controller-manager and manifests",
    wrapper: WRAPPER,
    module: MODULE,
    components,
    manifests_format: &[],
    manifests_files: &[MANIFESTS[0].0, MANIFESTS[1].0, MANIFESTS[2].0],
    copy_manifests,
};

fn components(kv: &str) -> Vec<Component> {
    vec![Component {
        name: BINARY,
        module: WRAPPER,
        package: "sigs.k8s.io/kubefed/cmd/controller-manager",
        ldflags: format!("-s -w -X {MODULE}/pkg/version.version={kv}"),
        // `--version` prints `KubeFed controller-manager version: version.Info{Version:"v0.10.0", …`.
        expect_version: format!("Version:\"{kv}\""),
        version_args: &["--version"],
        version: kv.to_string(),
        estimate: "about 7 minutes on 2 cores",
    }]
}

/// Copies `MANIFESTS` from the module.
fn copy_manifests(src: &Path, partial: &Path, kv: &str) -> Result<(String, String)> {
    for (name, rel) in MANIFESTS {
        gobuild::copy_file(&src.join(rel), &partial.join(name))?;
    }
    Ok((
        String::new(),
        format!("copied KubeFed's CRDs and FederatedTypeConfigs from {MODULE}@{kv}"),
    ))
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
fn start(s: &mut State, bins: &HubBinaries) -> Result<()> {
    let k = s.kubefed_mut()?.clone();
    let log = paths::log_file(BINARY);
    let exe = bins.exe(BINARY);
    let args = args(&k);
    let launch = procs::Launch {
        name: BINARY,
        exe: &exe,
        args: &args,
        env: &[("GOMEMLIMIT", MEMLIMIT)],
        log: &log,
        timeout: START_TIMEOUT,
        awaited: "answer",
    };
    procs::start_and_wait(
        &launch,
        |rec| {
            s.kubefed_mut()?.controller_manager = Some(rec);
            s.save(&paths::state_file())
        },
        || answers(&k),
    )
}

/// Installs KubeFed on the hub and starts its controller-manager (fresh start): the
/// namespace, the CRDs, the KubeFedConfig, the FederatedTypeConfigs, then the process.
pub fn install_and_start(s: &mut State, bins: &HubBinaries) -> Result<()> {
    let t = Instant::now();
    apply(
        HUB,
        &format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {NAMESPACE}}}\n"),
    )?;
    let crds: Vec<String> = MANIFESTS[..2]
        .iter()
        .map(|(name, _)| bins.manifests().join(name).display().to_string())
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
    kubectl::run(HUB, &apply_crds, None)?;
    kubectl::run(HUB, &wait, None)?;
    say!(
        "testenv: KubeFed CRDs established on the hub ({:.1} s)",
        t.elapsed().as_secs_f64()
    );
    apply(HUB, &kubefed_config())?;
    // Upstream's type configs carry no namespace: they go into KubeFed's.
    let ftcs = bins.manifests().join(MANIFESTS[2].0).display().to_string();
    kubectl::run(
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
        s.kubefed_mut()?.version,
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
    kubectl::run(
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
            paths::display(&paths::log_file(BINARY))
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
pub fn ensure_running(s: &mut State, bins: &HubBinaries) -> Result<bool> {
    let alive = (s.kubefed_mut()?.controller_manager.as_ref()).is_some_and(procs::is_alive);
    if alive {
        return Ok(false);
    }
    say!("testenv: starting {BINARY}");
    start(s, bins)?;
    Ok(true)
}

/// The status line of the controller-manager: name, address, whether it answers, the
/// cluster it stops with (the hub).
pub fn status_lines(k: &KubeFed) -> Vec<(String, String, bool, String)> {
    let up = k.controller_manager.as_ref().is_some_and(procs::is_alive) && answers(k);
    vec![(
        BINARY.to_string(),
        format!("127.0.0.1:{} (health)", k.health_port),
        up,
        HUB.to_string(),
    )]
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
        assert!(BUILD.version().expect("pinned").starts_with("v0."));
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
