//! The Karmada hub of `cargo xtask testenv up --hub karmada`: the extra flags of the hub's
//! kube-apiserver (aggregation layer) and of the members' (a bearer token for Karmada), the
//! install of Karmada's CRDs, APIService and webhook configurations on the hub, the four
//! Karmada processes (aggregated-apiserver, webhook, controller-manager, scheduler), and the
//! Push-mode join of every member with fake Nodes. It must only bind 127.0.0.1, only talk to
//! the test environment's own clusters, and only start or stop processes the state records.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::files::write_atomically;
use crate::gobuild::HubBinaries;
use crate::kubeconfig;
use crate::kubectl::{self, apply};
use crate::paths;
use crate::pki::{KarmadaPki, KarmadaPkiFiles, Pki, PkiFiles};
use crate::procs::{self, ProcRec};
use crate::state::{Karmada, State};

/// How many ports a Karmada plane needs (see `plane`).
pub const PORTS: usize = 8;
/// How long a component gets to answer after it starts (a busy 2-core machine is slow).
const COMPONENT_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the members get to turn Ready after they join.
const JOIN_TIMEOUT: Duration = Duration::from_secs(120);
const COMPONENT_MEMLIMIT: &str = "400MiB";

/// The hub's context (the karmada-apiserver).
const HUB: &str = "hub";
/// The aggregated API that serves `Cluster` objects.
const APISERVICE: &str = "v1alpha1.cluster.karmada.io";
/// Where the Cluster secrets live on the hub (what `karmadactl join` uses).
const CLUSTER_SECRETS_NAMESPACE: &str = "karmada-cluster";
/// The URL prefix upstream's webhook configuration points at (rewritten to 127.0.0.1).
const UPSTREAM_WEBHOOK_URL: &str = "https://karmada-webhook.karmada-system.svc:443/";
/// The conversion-webhook URL in upstream's CRD patches (rewritten to 127.0.0.1).
const UPSTREAM_CONVERSION_URL: &str = "https://{{name}}.{{namespace}}.svc:443/";

/// Every fake Node a member gets: enough allocatable capacity for Divided scheduling.
const FAKE_NODES: [&str; 2] = ["fake-node-1", "fake-node-2"];
const FAKE_NODE_CPU: &str = "8";
const FAKE_NODE_MEMORY: &str = "32Gi";
const FAKE_NODE_PODS: &str = "110";

/// A new plane's record from `PORTS` free ports (nothing started yet).
pub fn plane(version: &str, ports: &[u16]) -> Result<Karmada> {
    let [
        aa,
        wh,
        wh_health,
        wh_metrics,
        cm_health,
        cm_metrics,
        sched_health,
        sched_metrics,
    ] = <[u16; PORTS]>::try_from(ports).context("the Karmada hub needs exactly 8 ports")?;
    Ok(Karmada {
        version: version.to_string(),
        aggregated_apiserver_port: aa,
        webhook_port: wh,
        webhook_health_port: wh_health,
        webhook_metrics_port: wh_metrics,
        controller_manager_health_port: cm_health,
        controller_manager_metrics_port: cm_metrics,
        scheduler_health_port: sched_health,
        scheduler_metrics_port: sched_metrics,
        aggregated_apiserver: None,
        webhook: None,
        controller_manager: None,
        scheduler: None,
    })
}

fn run_dir() -> PathBuf {
    paths::run_dir().join("karmada")
}

/// The components' client config for the hub (superuser).
fn components_kubeconfig() -> PathBuf {
    run_dir().join("karmada.kubeconfig")
}

/// Writes the Karmada credentials and the components' kubeconfig (fresh start only).
pub fn write_files(pki: &Pki, kpki: &KarmadaPki, hub_port: u16) -> Result<()> {
    kpki.write(&paths::pki_dir())?;
    fs::create_dir_all(run_dir())?;
    write_atomically(
        &components_kubeconfig(),
        &kubeconfig::render_private(pki, "karmada", &kpki.components, hub_port),
    )
}

/// Extra kube-apiserver flags of a Karmada hub: the aggregation layer (front-proxy client
/// cert and the request-header authentication the aggregated API server relies on).
pub fn hub_apiserver_args() -> Vec<String> {
    let pki = PkiFiles::new(&paths::pki_dir());
    let kpki = KarmadaPkiFiles::new(&paths::pki_dir());
    vec![
        format!("--requestheader-client-ca-file={}", pki.ca_cert.display()),
        "--requestheader-allowed-names=front-proxy-client".to_string(),
        "--requestheader-username-headers=X-Remote-User".to_string(),
        "--requestheader-group-headers=X-Remote-Group".to_string(),
        "--requestheader-extra-headers-prefix=X-Remote-Extra-".to_string(),
        format!(
            "--proxy-client-cert-file={}",
            kpki.front_proxy_client_cert.display()
        ),
        format!(
            "--proxy-client-key-file={}",
            kpki.front_proxy_client_key.display()
        ),
    ]
}

/// The admission plugins a Karmada hub disables: no service-account controller runs, and
/// PVC/PV templates must not get protection finalizers (upstream's karmada-apiserver does
/// the same).
pub const HUB_DISABLED_ADMISSION: &str =
    "--disable-admission-plugins=StorageObjectInUseProtection,ServiceAccount";

/// Extra kube-apiserver flags of a member under a Karmada hub: the static bearer token
/// Karmada's Cluster secrets carry.
pub fn member_apiserver_args() -> Vec<String> {
    let kpki = KarmadaPkiFiles::new(&paths::pki_dir());
    vec![format!(
        "--token-auth-file={}",
        kpki.member_tokens.display()
    )]
}

/// Karmada's processes, in start order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    AggregatedApiserver,
    Webhook,
    ControllerManager,
    Scheduler,
}

const PARTS: [Part; 4] = [
    Part::AggregatedApiserver,
    Part::Webhook,
    Part::ControllerManager,
    Part::Scheduler,
];

impl Part {
    fn name(self) -> &'static str {
        match self {
            Self::AggregatedApiserver => "karmada-aggregated-apiserver",
            Self::Webhook => "karmada-webhook",
            Self::ControllerManager => "karmada-controller-manager",
            Self::Scheduler => "karmada-scheduler",
        }
    }

    fn slot(self, k: &mut Karmada) -> &mut Option<ProcRec> {
        match self {
            Self::AggregatedApiserver => &mut k.aggregated_apiserver,
            Self::Webhook => &mut k.webhook,
            Self::ControllerManager => &mut k.controller_manager,
            Self::Scheduler => &mut k.scheduler,
        }
    }

    fn args(self, s: &State, k: &Karmada) -> Vec<String> {
        let kc = components_kubeconfig().display().to_string();
        let kpki = KarmadaPkiFiles::new(&paths::pki_dir());
        let lo = |port: u16| format!("127.0.0.1:{port}");
        match self {
            Self::AggregatedApiserver => vec![
                format!("--kubeconfig={kc}"),
                format!("--authentication-kubeconfig={kc}"),
                format!("--authorization-kubeconfig={kc}"),
                format!("--etcd-servers=http://127.0.0.1:{}", s.etcd_client_port),
                // Its own prefix in the shared etcd (its default is `/registry`).
                "--etcd-prefix=/flotilla-testenv/karmada-aggregated-apiserver/registry".to_string(),
                "--etcd-compaction-interval=0".to_string(),
                "--bind-address=127.0.0.1".to_string(),
                format!("--secure-port={}", k.aggregated_apiserver_port),
                format!(
                    "--tls-cert-file={}",
                    kpki.aggregated_apiserver_cert.display()
                ),
                format!(
                    "--tls-private-key-file={}",
                    kpki.aggregated_apiserver_key.display()
                ),
                // Never its relative default (the working directory is the repository).
                format!("--cert-dir={}", run_dir().join("aa-certs").display()),
            ],
            Self::Webhook => vec![
                format!("--kubeconfig={kc}"),
                "--bind-address=127.0.0.1".to_string(),
                format!("--secure-port={}", k.webhook_port),
                format!("--cert-dir={}", kpki.webhook_cert_dir.display()),
                format!("--metrics-bind-address={}", lo(k.webhook_metrics_port)),
                format!("--health-probe-bind-address={}", lo(k.webhook_health_port)),
            ],
            Self::ControllerManager => vec![
                format!("--kubeconfig={kc}"),
                "--leader-elect=false".to_string(),
                format!(
                    "--metrics-bind-address={}",
                    lo(k.controller_manager_metrics_port)
                ),
                format!(
                    "--health-probe-bind-address={}",
                    lo(k.controller_manager_health_port)
                ),
                // Faster than upstream's 10 s so tests see outages and recoveries sooner.
                "--cluster-status-update-frequency=5s".to_string(),
            ],
            Self::Scheduler => vec![
                format!("--kubeconfig={kc}"),
                "--leader-elect=false".to_string(),
                format!("--metrics-bind-address={}", lo(k.scheduler_metrics_port)),
                format!(
                    "--health-probe-bind-address={}",
                    lo(k.scheduler_health_port)
                ),
            ],
        }
    }

    /// Whether the component answers: the controller-manager and the scheduler on their
    /// plain-HTTP `/healthz`; the TLS servers (the aggregated API server, whose APIService
    /// check follows, and the webhook, which registers no health endpoint) once they listen.
    fn answers(self, k: &Karmada) -> bool {
        let health = |port: u16| matches!(procs::http_get(port, "/healthz"), Ok((200, _)));
        match self {
            Self::AggregatedApiserver => procs::port_open(k.aggregated_apiserver_port),
            Self::Webhook => {
                procs::port_open(k.webhook_port) && procs::port_open(k.webhook_health_port)
            }
            Self::ControllerManager => health(k.controller_manager_health_port),
            Self::Scheduler => health(k.scheduler_health_port),
        }
    }
}

/// Spawns one component and waits until it answers.
fn start_part(s: &mut State, part: Part, bins: &HubBinaries) -> Result<()> {
    let k = s.karmada_mut()?.clone();
    let args = part.args(s, &k);
    let exe = bins.exe(part.name());
    let log = paths::log_file(part.name());
    let launch = procs::Launch {
        name: part.name(),
        exe: &exe,
        args: &args,
        env: &[("GOMEMLIMIT", COMPONENT_MEMLIMIT)],
        log: &log,
        timeout: COMPONENT_TIMEOUT,
        awaited: "answer",
    };
    procs::start_and_wait(
        &launch,
        |rec| {
            *part.slot(s.karmada_mut()?) = Some(rec);
            s.save(&paths::state_file())
        },
        || part.answers(&k),
    )
}

/// Karmada's APIs on the hub without its controllers (the scale hub runs only these):
/// namespaces and CRDs, the aggregated API server and its APIService.
pub fn install_cluster_api(s: &mut State, bins: &HubBinaries, pki: &Pki) -> Result<()> {
    let t = Instant::now();
    let k = s.karmada_mut()?.clone();
    let ca = kubeconfig::b64(&pki.ca.cert);

    apply(
        HUB,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: karmada-system}\n---\n\
         apiVersion: v1\nkind: Namespace\nmetadata: {name: karmada-cluster}\n",
    )?;
    let crds = bins.manifests().join("crds");
    let crds_arg = crds.display().to_string();
    kubectl::run(
        HUB,
        &[
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=flotilla-testenv",
            "-f",
            &crds_arg,
        ],
        None,
    )?;
    kubectl::run(
        HUB,
        &[
            "wait",
            "--for=condition=Established",
            "--timeout=90s",
            "-f",
            &crds_arg,
        ],
        None,
    )?;
    let count = fs::read_dir(&crds).map_or(0, Iterator::count);
    say!(
        "testenv: {count} Karmada CRDs established on the hub ({:.1} s)",
        t.elapsed().as_secs_f64()
    );

    start_part(s, Part::AggregatedApiserver, bins)?;
    // An ExternalName Service: the aggregator then dials https://localhost:<port>, verifying
    // the server name `<service>.<namespace>.svc` against the caBundle.
    apply(
        HUB,
        &format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: karmada-aggregated-apiserver, namespace: karmada-system}}\n\
             spec: {{type: ExternalName, externalName: localhost}}\n---\n\
             apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {{name: {APISERVICE}}}\n\
             spec:\n  group: cluster.karmada.io\n  version: v1alpha1\n  groupPriorityMinimum: 2000\n  versionPriority: 10\n  \
             caBundle: {ca}\n  service: {{name: karmada-aggregated-apiserver, namespace: karmada-system, port: {}}}\n",
            k.aggregated_apiserver_port
        ),
    )?;
    kubectl::run(
        HUB,
        &[
            "wait",
            "--for=condition=Available",
            "--timeout=90s",
            &format!("apiservice/{APISERVICE}"),
        ],
        None,
    )
    .context("the Karmada cluster API did not become available")?;
    say!(
        "testenv: APIService {APISERVICE} available ({:.1} s)",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Installs Karmada on the hub and starts its four processes (fresh start): namespaces and
/// CRDs, the aggregated API server and its APIService, the webhook and its configurations
/// (URLs rewritten to 127.0.0.1), then the controller-manager and the scheduler.
pub fn install_and_start(s: &mut State, bins: &HubBinaries, pki: &Pki) -> Result<()> {
    let t = Instant::now();
    install_cluster_api(s, bins, pki)?;
    let k = s.karmada_mut()?.clone();
    let ca = kubeconfig::b64(&pki.ca.cert);

    start_part(s, Part::Webhook, bins)?;
    let local_url = format!("https://127.0.0.1:{}/", k.webhook_port);
    let webhooks = fs::read_to_string(bins.manifests().join("webhook-configuration.yaml"))
        .context("reading the cached webhook configuration")?
        .replace(UPSTREAM_WEBHOOK_URL, &local_url)
        .replace("{{caBundle}}", &ca);
    if webhooks.contains("{{") || webhooks.contains(".svc:443") {
        bail!("upstream's webhook-configuration.yaml changed shape: unreplaced placeholders");
    }
    apply(HUB, &webhooks)?;
    convert_through_webhook(bins, &local_url, &ca)?;

    start_part(s, Part::ControllerManager, bins)?;
    start_part(s, Part::Scheduler, bins)?;
    say!(
        "testenv: Karmada {} installed on the hub in {:.1} s",
        k.version,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Applies upstream's CRD patches that route (Cluster)ResourceBinding version conversion
/// through the webhook, pointed at 127.0.0.1.
fn convert_through_webhook(bins: &HubBinaries, local_url: &str, ca: &str) -> Result<()> {
    let dir = bins.manifests().join("crd-patches");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    for file in files {
        let text = fs::read_to_string(&file)?
            .replace(UPSTREAM_CONVERSION_URL, local_url)
            .replace("{{caBundle}}", ca);
        if text.contains("{{") {
            bail!("{}: unreplaced placeholders", file.display());
        }
        let crd = text
            .lines()
            .find_map(|l| l.strip_prefix("  name: "))
            .map(str::trim)
            .with_context(|| format!("{}: no metadata.name", file.display()))?
            .to_string();
        kubectl::run(
            HUB,
            &[
                "patch",
                "crd",
                &crd,
                "--type=merge",
                "--field-manager=flotilla-testenv",
                "--patch-file",
                &file_with(&text, &file)?,
            ],
            None,
        )?;
    }
    Ok(())
}

/// Writes `text` next to the run files (kubectl's `--patch-file` wants a path).
fn file_with(text: &str, like: &Path) -> Result<String> {
    let name = like
        .file_name()
        .map_or_else(|| "patch.yaml".into(), |n| n.to_string_lossy().to_string());
    let path = run_dir().join(name);
    write_atomically(&path, text)?;
    Ok(path.display().to_string())
}

/// Joins every member in Push mode under its context's name (a Secret with the bearer
/// token and CA, one for impersonation, and the Cluster), after giving it fake Nodes;
/// then waits until Karmada reports every Cluster Ready.
pub fn join_members(s: &State, pki: &Pki, kpki: &KarmadaPki) -> Result<()> {
    let t = Instant::now();
    let token = kubeconfig::b64(&kpki.member_token);
    let ca = kubeconfig::b64(&pki.ca.cert);
    let members: Vec<_> = s.clusters.iter().filter(|c| c.name != HUB).collect();
    for m in &members {
        add_fake_nodes(&m.name)?;
        // What `karmadactl join` records as the cluster's id.
        let id = kubectl::run(
            &m.name,
            &[
                "get",
                "namespace",
                "kube-system",
                "-o",
                "jsonpath={.metadata.uid}",
            ],
            None,
        )?;
        let name = &m.name;
        let ns = CLUSTER_SECRETS_NAMESPACE;
        apply(
            HUB,
            &format!(
                "apiVersion: v1\nkind: Secret\nmetadata: {{name: {name}, namespace: {ns}}}\n\
                 type: Opaque\ndata: {{token: {token}, caBundle: {ca}}}\n---\n\
                 apiVersion: v1\nkind: Secret\nmetadata: {{name: {name}-impersonator, namespace: {ns}}}\n\
                 type: Opaque\ndata: {{token: {token}}}\n---\n\
                 apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {{name: {name}}}\n\
                 spec:\n  id: \"{id}\"\n  syncMode: Push\n  apiEndpoint: https://127.0.0.1:{port}\n  \
                 secretRef: {{namespace: {ns}, name: {name}}}\n  \
                 impersonatorSecretRef: {{namespace: {ns}, name: {name}-impersonator}}\n",
                id = id.trim(),
                port = m.port,
            ),
        )?;
    }
    kubectl::run(
        HUB,
        &[
            "wait",
            "--for=condition=Ready",
            &format!("--timeout={}s", JOIN_TIMEOUT.as_secs()),
            "clusters",
            "--all",
        ],
        None,
    )
    .context(
        "the members did not turn Ready in Karmada (see logs/karmada-controller-manager.log)",
    )?;
    say!(
        "testenv: {} members joined Karmada in Push mode and Ready ({:.1} s)",
        members.len(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Fake Nodes with allocatable capacity (status set through the status subresource; no
/// kubelet ever updates them), so Karmada's resource summary is not empty.
fn add_fake_nodes(member: &str) -> Result<()> {
    for node in FAKE_NODES {
        apply(
            member,
            &format!(
                "apiVersion: v1\nkind: Node\nmetadata:\n  name: {node}\n  labels:\n    \
                 kubernetes.io/hostname: {node}\n    app.kubernetes.io/managed-by: flotilla-testenv\n"
            ),
        )?;
        let resources = format!(
            "{{\"cpu\":\"{FAKE_NODE_CPU}\",\"memory\":\"{FAKE_NODE_MEMORY}\",\"pods\":\"{FAKE_NODE_PODS}\"}}"
        );
        let status = format!(
            "{{\"status\":{{\"capacity\":{resources},\"allocatable\":{resources},\
             \"conditions\":[{{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"FlotillaTestenv\",\
             \"message\":\"fake node of the flotilla test environment\"}}]}}}}"
        );
        kubectl::run(
            member,
            &[
                "patch",
                "node",
                node,
                "--subresource=status",
                "--type=merge",
                "-p",
                &status,
            ],
            None,
        )?;
    }
    Ok(())
}

/// Starts whatever Karmada component is not running (after a `stop hub`, a crash, or an
/// interrupted start). Returns whether anything was started.
pub fn ensure_running(s: &mut State, bins: &HubBinaries) -> Result<bool> {
    let mut started = false;
    for part in PARTS {
        let alive = part
            .slot(s.karmada_mut()?)
            .as_ref()
            .is_some_and(procs::is_alive);
        if !alive {
            say!("testenv: starting {}", part.name());
            start_part(s, part, bins)?;
            started = true;
        }
    }
    Ok(started)
}

/// One status line per component: name, address, whether it answers, the cluster it stops
/// with (the hub).
pub fn status_lines(k: &Karmada) -> Vec<(String, String, bool, String)> {
    PARTS
        .iter()
        .map(|&part| {
            let rec = match part {
                Part::AggregatedApiserver => &k.aggregated_apiserver,
                Part::Webhook => &k.webhook,
                Part::ControllerManager => &k.controller_manager,
                Part::Scheduler => &k.scheduler,
            };
            let alive = rec.as_ref().is_some_and(procs::is_alive);
            let up = alive && part.answers(k);
            let port = match part {
                Part::AggregatedApiserver => {
                    format!("https://127.0.0.1:{}", k.aggregated_apiserver_port)
                }
                Part::Webhook => format!("https://127.0.0.1:{}", k.webhook_port),
                Part::ControllerManager => {
                    format!("127.0.0.1:{} (health)", k.controller_manager_health_port)
                }
                Part::Scheduler => format!("127.0.0.1:{} (health)", k.scheduler_health_port),
            };
            (part.name().to_string(), port, up, HUB.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plane_takes_exactly_its_ports() {
        let ports: Vec<u16> = (4000..4000 + PORTS as u16).collect();
        let k = plane("v1.18.2", &ports).expect("plane");
        assert_eq!(k.aggregated_apiserver_port, 4000);
        assert_eq!(k.scheduler_metrics_port, 4007);
        assert!(plane("v1.18.2", &ports[1..]).is_err());
    }

    #[test]
    fn every_component_binds_loopback_only() {
        let ports: Vec<u16> = (4000..4000 + PORTS as u16).collect();
        let k = plane("v1.18.2", &ports).expect("plane");
        let s = State {
            kubernetes: "v1.36.3".into(),
            etcd_version: "v3.6.8".into(),
            members: 1,
            owner: crate::state::Owner::Manual,
            etcd: None,
            etcd_client_port: 1,
            etcd_peer_port: 2,
            clusters: vec![],
            complete: false,
            hub_plane: Some(crate::state::HubPlane::Karmada(k.clone())),
            scale: None,
            proxies: None,
        };
        for part in PARTS {
            for arg in part.args(&s, &k) {
                if arg.contains("bind-address=") {
                    assert!(arg.contains("127.0.0.1"), "{} binds {arg}", part.name());
                }
            }
        }
    }
}
