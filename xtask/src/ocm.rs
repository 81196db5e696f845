//! The Open Cluster Management hub of `cargo xtask testenv up --hub ocm`: OCM's hub CRDs and
//! its hub controllers — `registration controller`, `placement controller` and `work
//! manager` (the ManifestWorkReplicaSet controller, an alpha feature switched on with
//! `--feature-gates=ManifestWorkReplicaSet=true`; the registration controller runs with
//! `ClusterProfile=true`, so it writes SIG Multicluster ClusterProfiles) — next to the hub's kube-apiserver (whose
//! kube-controller-manager also signs the agents' client certificates with the hub's client
//! CA), one klusterlet `agent` per member registering it under the member's context name,
//! and the acceptance a hub admin would give (approve the CSR, `hubAcceptsClient: true`).
//! It must only bind 127.0.0.1, only talk to the test environment's own clusters, and only
//! start or stop processes the state records.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::files::write_atomically;
use crate::gobuild::HubBinaries;
use crate::kubeconfig;
use crate::kubectl::{self, apply};
use crate::paths;
use crate::pki::Pki;
use crate::procs::{self, ProcRec};
use crate::state::{Ocm, OcmAgent, State};

/// How long a component gets to answer after it starts (a busy 2-core machine is slow).
const COMPONENT_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the members get to register, be accepted and turn Available.
const JOIN_TIMEOUT: Duration = Duration::from_secs(180);
const COMPONENT_MEMLIMIT: &str = "300MiB";

const HUB: &str = "hub";
/// Where the hub controllers keep their events and leases.
const HUB_NAMESPACE: &str = "open-cluster-management-hub";
/// Where each agent keeps `hub-kubeconfig-secret` on its member (upstream's default).
const AGENT_NAMESPACE: &str = "open-cluster-management-agent";
/// The agent id every klusterlet uses (part of its certificate's common name); fixed so a
/// restarted agent is the same agent.
const AGENT_ID: &str = "flotilla-testenv";
/// The label OCM puts on a klusterlet's CSRs: the cluster it registers.
const CSR_CLUSTER_LABEL: &str = "open-cluster-management.io/cluster-name";
/// The lease every ManagedCluster gets on acceptance. OCM's default is 60 s and the hub
/// declares a cluster's lease stopped after five of them (5 minutes); 10 s makes an outage
/// show within about a minute.
pub const LEASE_DURATION_SECONDS: u32 = 10;
/// A namespace where the `global` ManagedClusterSet (every cluster) is bound, so Placements
/// created there can select any member.
pub const PLACEMENT_NAMESPACE: &str = "flotilla-ocm";

/// The feature gate that makes `work manager` run the ManifestWorkReplicaSet controller
/// (alpha, off by default in open-cluster-management.io/api's `DefaultHubWorkFeatureGates`;
/// without it the manager starts and does nothing). This is the flag the cluster-manager
/// operator passes when `workConfiguration.featureGates` enables it.
const WORK_FEATURE_GATES: &str = "--feature-gates=ManifestWorkReplicaSet=true";
const REGISTRATION_FEATURE_GATES: &str = "--feature-gates=ClusterProfile=true";
const AGENT_FEATURE_GATES: &str = "--feature-gates=RawFeedbackJsonString=true";

/// How many ports an OCM plane needs: three hub controllers and one agent per member.
pub fn ports(members: usize) -> usize {
    3 + members
}

/// A new plane's record from `ports(members.len())` free ports (nothing started yet).
pub fn plane(version: &str, ports: &[u16], members: &[String]) -> Result<Ocm> {
    let [
        registration_port,
        placement_port,
        work_port,
        agent_ports @ ..,
    ] = ports
    else {
        bail!("the OCM hub needs {} ports", self::ports(members.len()));
    };
    if agent_ports.len() != members.len() {
        bail!("the OCM hub needs {} ports", self::ports(members.len()));
    }
    Ok(Ocm {
        version: version.to_string(),
        registration_port: *registration_port,
        placement_port: *placement_port,
        work_port: Some(*work_port),
        registration: None,
        placement: None,
        work: None,
        agents: members
            .iter()
            .zip(agent_ports)
            .map(|(cluster, port)| OcmAgent {
                cluster: cluster.clone(),
                port: *port,
                process: None,
            })
            .collect(),
    })
}

fn run_dir() -> PathBuf {
    paths::run_dir().join("ocm")
}

/// The hub controllers' client config (the admin: OCM's own install gives them wide RBAC).
fn hub_kubeconfig() -> PathBuf {
    run_dir().join("hub.kubeconfig")
}

/// The identity a klusterlet registers with (what `clusteradm join` hands out as the
/// bootstrap kubeconfig); the hub admin here.
fn bootstrap_kubeconfig() -> PathBuf {
    run_dir().join("bootstrap-hub.kubeconfig")
}

fn agent_dir(cluster: &str) -> PathBuf {
    run_dir().join(cluster)
}

/// The member's admin config the agent applies work with.
fn spoke_kubeconfig(cluster: &str) -> PathBuf {
    agent_dir(cluster).join("spoke.kubeconfig")
}

/// Where the agent keeps its own hub credentials (`kubeconfig`, `tls.crt`, `tls.key`).
fn hub_kubeconfig_dir(cluster: &str) -> PathBuf {
    agent_dir(cluster).join("hub-kubeconfig")
}

/// Writes the hub controllers' and the agents' client configs (fresh start only).
pub fn write_files(pki: &Pki, clusters: &[(String, u16)]) -> Result<()> {
    let hub_port = clusters
        .iter()
        .find(|(name, _)| name == HUB)
        .map(|(_, port)| *port)
        .context("no hub cluster")?;
    fs::create_dir_all(run_dir())?;
    let hub_config = kubeconfig::render_private(pki, "ocm-hub", &pki.admin, hub_port);
    write_atomically(&hub_kubeconfig(), &hub_config)?;
    write_atomically(&bootstrap_kubeconfig(), &hub_config)?;
    for (name, port) in clusters.iter().filter(|(name, _)| name != HUB) {
        fs::create_dir_all(hub_kubeconfig_dir(name))?;
        write_atomically(
            &spoke_kubeconfig(name),
            &kubeconfig::render_private(pki, "ocm-agent", &pki.admin, *port),
        )?;
    }
    Ok(())
}

/// The hub's kube-controller-manager under OCM also runs the CSR signer, signing
/// `kubernetes.io/kube-apiserver-client` certificates with the CA the hub's kube-apiserver
/// trusts for clients: that is how an accepted agent gets its hub credential.
pub fn extend_hub_controller_manager(args: &mut Vec<String>) {
    for arg in args.iter_mut() {
        if let Some(list) = arg.strip_prefix("--controllers=") {
            *arg = format!("--controllers={list},certificatesigningrequest-signing-controller");
        }
    }
    let pki = paths::pki_dir();
    args.push(format!(
        "--cluster-signing-kube-apiserver-client-cert-file={}",
        pki.join("ca.crt").display()
    ));
    args.push(format!(
        "--cluster-signing-kube-apiserver-client-key-file={}",
        pki.join("ca.key").display()
    ));
}

/// One OCM process.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Registration,
    Placement,
    Work,
    Agent(String),
}

impl Part {
    fn name(&self) -> String {
        match self {
            Self::Registration => "ocm-registration-controller".into(),
            Self::Placement => "ocm-placement-controller".into(),
            Self::Work => "ocm-work-manager".into(),
            Self::Agent(cluster) => format!("{cluster}-ocm-agent"),
        }
    }

    /// The binary (a `gobuild::OCM` component) that runs it.
    fn binary(&self) -> &'static str {
        match self {
            Self::Registration => "ocm-registration",
            Self::Placement => "ocm-placement",
            Self::Work => "ocm-work",
            Self::Agent(_) => "ocm-registration-operator",
        }
    }

    fn port(&self, o: &Ocm) -> Option<u16> {
        match self {
            Self::Registration => Some(o.registration_port),
            Self::Placement => Some(o.placement_port),
            Self::Work => o.work_port,
            Self::Agent(cluster) => o
                .agents
                .iter()
                .find(|a| &a.cluster == cluster)
                .map(|a| a.port),
        }
    }

    fn slot<'a>(&self, o: &'a mut Ocm) -> Option<&'a mut Option<ProcRec>> {
        match self {
            Self::Registration => Some(&mut o.registration),
            Self::Placement => Some(&mut o.placement),
            Self::Work => Some(&mut o.work),
            Self::Agent(cluster) => o
                .agents
                .iter_mut()
                .find(|a| &a.cluster == cluster)
                .map(|a| &mut a.process),
        }
    }

    fn args(&self, port: u16) -> Vec<String> {
        let common = |namespace: &str, kubeconfig: &Path| {
            vec![
                format!("--kubeconfig={}", kubeconfig.display()),
                format!("--namespace={namespace}"),
                "--disable-leader-election".to_string(),
                // Every OCM process defaults to 0.0.0.0:8443.
                format!("--listen=127.0.0.1:{port}"),
            ]
        };
        match self {
            Self::Registration => {
                let mut args = vec!["controller".to_string()];
                args.extend(common(HUB_NAMESPACE, &hub_kubeconfig()));
                // SIG Multicluster ClusterProfiles for the managed clusters, in every namespace
                // a ManagedClusterSet is bound to (alpha in v1.2.1, default off).
                args.push(REGISTRATION_FEATURE_GATES.to_string());
                args
            }
            Self::Placement => {
                let mut args = vec!["controller".to_string()];
                args.extend(common(HUB_NAMESPACE, &hub_kubeconfig()));
                args
            }
            Self::Work => {
                let mut args = vec!["manager".to_string()];
                args.extend(common(HUB_NAMESPACE, &hub_kubeconfig()));
                // `--work-driver` stays `kube`: it writes ManifestWorks to the hub's API.
                args.push(WORK_FEATURE_GATES.to_string());
                args
            }
            Self::Agent(cluster) => {
                let hub_dir = hub_kubeconfig_dir(cluster);
                let mut args = vec!["agent".to_string()];
                args.extend(common(AGENT_NAMESPACE, &spoke_kubeconfig(cluster)));
                args.extend([
                    format!("--spoke-cluster-name={cluster}"),
                    format!("--agent-id={AGENT_ID}"),
                    format!(
                        "--bootstrap-kubeconfig={}",
                        bootstrap_kubeconfig().display()
                    ),
                    format!("--hub-kubeconfig-dir={}", hub_dir.display()),
                    "--workload-source-driver=kube".to_string(),
                    format!(
                        "--workload-source-config={}",
                        hub_dir.join("kubeconfig").display()
                    ),
                    // Faster than upstream's 60 s so tests see manifest status sooner.
                    "--status-sync-interval=5s".to_string(),
                    // A JSONPaths feedback rule may return a whole status (alpha, off by
                    // default), as long as a Deployment's with its conditions.
                    AGENT_FEATURE_GATES.to_string(),
                    "--max-json-raw-length=8192".to_string(),
                ]);
                args
            }
        }
    }
}

/// Spawns one OCM process and waits until its health server listens.
fn start_part(s: &mut State, part: &Part, bins: &HubBinaries) -> Result<()> {
    let o = s.ocm_mut()?.clone();
    let port = part
        .port(&o)
        .with_context(|| format!("no port recorded for {}", part.name()))?;
    let name = part.name();
    let exe = bins.exe(part.binary());
    let log = paths::log_file(&name);
    let args = part.args(port);
    let awaited = format!("listen on 127.0.0.1:{port}");
    let launch = procs::Launch {
        name: &name,
        exe: &exe,
        args: &args,
        env: &[("GOMEMLIMIT", COMPONENT_MEMLIMIT)],
        log: &log,
        timeout: COMPONENT_TIMEOUT,
        awaited: &awaited,
    };
    procs::start_and_wait(
        &launch,
        |rec| {
            if let Some(slot) = part.slot(s.ocm_mut()?) {
                *slot = Some(rec);
            }
            s.save(&paths::state_file())
        },
        || procs::port_open(port),
    )
}

/// `kubectl apply --server-side` of every CRD in `dir` on `context`, then waits until they
/// are established; returns how many there were.
fn install_crds(context: &str, dir: &Path) -> Result<usize> {
    kubectl::install_crds(context, dir)?;
    Ok(fs::read_dir(dir).map_or(0, Iterator::count))
}

/// OCM's hub namespace and CRDs, without its controllers (the scale hub runs only these).
pub fn install_hub_crds(bins: &HubBinaries) -> Result<()> {
    let t = Instant::now();
    apply(
        HUB,
        &format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {HUB_NAMESPACE}}}\n"),
    )?;
    let count = install_crds(HUB, &bins.manifests().join("hub-crds"))?;
    say!(
        "testenv: {count} OCM CRDs established on the hub ({:.1} s)",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Installs OCM on the hub and starts its controllers (fresh start): the hub namespace and
/// CRDs, then `registration controller`, `placement controller` and `work manager`.
pub fn install_and_start(s: &mut State, bins: &HubBinaries) -> Result<()> {
    install_hub_crds(bins)?;
    start_part(s, &Part::Registration, bins)?;
    start_part(s, &Part::Placement, bins)?;
    start_part(s, &Part::Work, bins)?;
    Ok(())
}

/// Registers every member: installs the klusterlet's CRDs and namespace on it, starts its
/// agent, then does what a hub admin does with `clusteradm accept` (approves the agent's CSR,
/// which the hub's kube-controller-manager then signs, and sets `hubAcceptsClient`) until
/// every ManagedCluster is Available; finally binds the `global` set into
/// `PLACEMENT_NAMESPACE`.
pub fn join_members(s: &mut State, bins: &HubBinaries) -> Result<()> {
    let t = Instant::now();
    let members: Vec<String> = (s.ocm_mut()?.agents.iter())
        .map(|a| a.cluster.clone())
        .collect();
    for m in &members {
        apply(
            m,
            &format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {AGENT_NAMESPACE}}}\n"),
        )?;
        install_crds(m, &bins.manifests().join("member-crds"))?;
    }
    for m in &members {
        start_part(s, &Part::Agent(m.clone()), bins)?;
    }
    let deadline = t + JOIN_TIMEOUT;
    loop {
        for m in &members {
            check_agent_alive(s, m)?;
        }
        approve_csrs(&members)?;
        let clusters = managed_clusters()?;
        accept(&members, &clusters)?;
        let waiting: Vec<&String> = members
            .iter()
            .filter(|m| !is_available(&clusters, m))
            .collect();
        if waiting.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            let names: Vec<&str> = waiting.iter().map(|m| m.as_str()).collect();
            bail!(
                "ManagedClusters {} not Available within {JOIN_TIMEOUT:?}; see logs/<member>-ocm-agent.log \
                 and logs/ocm-registration-controller.log",
                names.join(", ")
            );
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    say!(
        "testenv: {} members registered with OCM, accepted and Available ({:.1} s)",
        members.len(),
        t.elapsed().as_secs_f64()
    );
    apply(
        HUB,
        &format!(
            "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {PLACEMENT_NAMESPACE}}}\n---\n\
             apiVersion: cluster.open-cluster-management.io/v1beta2\nkind: ManagedClusterSetBinding\n\
             metadata: {{name: global, namespace: {PLACEMENT_NAMESPACE}}}\nspec: {{clusterSet: global}}\n"
        ),
    )?;
    Ok(())
}

fn check_agent_alive(s: &mut State, cluster: &str) -> Result<()> {
    let Some(agent) = s.ocm_mut()?.agents.iter().find(|a| a.cluster == cluster) else {
        bail!("no OCM agent recorded for {cluster}");
    };
    if let Some(p) = &agent.process
        && let Some(status) = procs::exited(p.pid)?
    {
        let log = paths::log_file(&Part::Agent(cluster.to_string()).name());
        bail!(
            "{cluster}'s OCM agent exited ({status}); last lines of {}:\n{}",
            log.display(),
            procs::tail(&log, 25)
        );
    }
    Ok(())
}

fn items(json: &str, what: &str) -> Result<Vec<Value>> {
    let v: Value = serde_json::from_str(json).with_context(|| format!("parsing {what}"))?;
    Ok(v.get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

fn condition_true(object: &Value, kind: &str) -> bool {
    object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == kind && c["status"] == "True")
        })
}

/// The CSRs of our members' agents that nobody has approved or denied yet.
fn pending_csrs(csrs: &[Value], members: &[String]) -> Vec<String> {
    csrs.iter()
        .filter(|csr| {
            csr.pointer("/metadata/labels")
                .and_then(|l| l.get(CSR_CLUSTER_LABEL))
                .and_then(Value::as_str)
                .is_some_and(|c| members.iter().any(|m| m == c))
        })
        .filter(|csr| {
            csr.pointer("/status/conditions")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty)
        })
        .filter_map(|csr| csr.pointer("/metadata/name").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

fn approve_csrs(members: &[String]) -> Result<()> {
    let csrs = items(
        &kubectl::run(
            HUB,
            &["get", "certificatesigningrequests", "-o", "json"],
            None,
        )?,
        "the hub's CSRs",
    )?;
    for name in pending_csrs(&csrs, members) {
        kubectl::run(HUB, &["certificate", "approve", &name], None)?;
        say!("testenv: approved the OCM agent's CSR {name}");
    }
    Ok(())
}

fn managed_clusters() -> Result<Vec<Value>> {
    items(
        &kubectl::run(HUB, &["get", "managedclusters", "-o", "json"], None)?,
        "the hub's ManagedClusters",
    )
}

fn named<'a>(clusters: &'a [Value], name: &str) -> Option<&'a Value> {
    clusters
        .iter()
        .find(|c| c.pointer("/metadata/name").and_then(Value::as_str) == Some(name))
}

fn is_available(clusters: &[Value], name: &str) -> bool {
    named(clusters, name).is_some_and(|c| condition_true(c, "ManagedClusterConditionAvailable"))
}

/// Accepts every member's ManagedCluster that is not accepted yet, with the short lease.
fn accept(members: &[String], clusters: &[Value]) -> Result<()> {
    for m in members {
        let Some(cluster) = named(clusters, m) else {
            continue;
        };
        if cluster.pointer("/spec/hubAcceptsClient") == Some(&Value::Bool(true)) {
            continue;
        }
        let patch = format!(
            "{{\"spec\":{{\"hubAcceptsClient\":true,\"leaseDurationSeconds\":{LEASE_DURATION_SECONDS}}}}}"
        );
        kubectl::run(
            HUB,
            &[
                "patch",
                "managedcluster",
                m,
                "--type=merge",
                "--field-manager=flotilla-testenv",
                "-p",
                &patch,
            ],
            None,
        )?;
        say!("testenv: accepted ManagedCluster {m}");
    }
    Ok(())
}

/// Starts whatever OCM process is not running, except those of a cluster stopped on purpose
/// (`testenv stop`): the hub controllers with the hub, each agent with its member. Returns
/// whether anything was started.
pub fn ensure_running(s: &mut State, bins: &HubBinaries) -> Result<bool> {
    let o = s.ocm_mut()?.clone();
    let stopped = |name: &str| s.cluster(name).is_none_or(|c| c.stopped);
    let mut parts = Vec::new();
    if !stopped(HUB) {
        parts.push((Part::Registration, o.registration.clone()));
        parts.push((Part::Placement, o.placement.clone()));
        parts.push((Part::Work, o.work.clone()));
    }
    for a in &o.agents {
        if !stopped(&a.cluster) {
            parts.push((Part::Agent(a.cluster.clone()), a.process.clone()));
        }
    }
    let mut started = false;
    for (part, rec) in parts {
        if !rec.is_some_and(|p| procs::is_alive(&p)) {
            say!("testenv: starting {}", part.name());
            start_part(s, &part, bins)?;
            started = true;
        }
    }
    Ok(started)
}

/// One status line per OCM process: name, address, whether it runs, the cluster it stops
/// with.
pub fn status_lines(o: &Ocm) -> Vec<(String, String, bool, String)> {
    let mut lines = vec![
        (
            Part::Registration.name(),
            o.registration_port,
            o.registration.as_ref(),
            HUB.to_string(),
        ),
        (
            Part::Placement.name(),
            o.placement_port,
            o.placement.as_ref(),
            HUB.to_string(),
        ),
    ];
    if let Some(port) = o.work_port {
        lines.push((Part::Work.name(), port, o.work.as_ref(), HUB.to_string()));
    }
    for a in &o.agents {
        lines.push((
            Part::Agent(a.cluster.clone()).name(),
            a.port,
            a.process.as_ref(),
            a.cluster.clone(),
        ));
    }
    lines
        .into_iter()
        .map(|(name, port, rec, cluster)| {
            let up = rec.is_some_and(procs::is_alive) && procs::port_open(port);
            (name, format!("https://127.0.0.1:{port}"), up, cluster)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn plane_takes_three_ports_and_one_per_member() {
        let members = vec!["member-1".to_string(), "member-2".to_string()];
        let ports: Vec<u16> = (4000..4000 + ports(2) as u16).collect();
        let o = plane("v1.2.1", &ports, &members).expect("plane");
        assert_eq!(o.registration_port, 4000);
        assert_eq!(o.placement_port, 4001);
        assert_eq!(o.work_port, Some(4002));
        assert_eq!(o.agents[0].port, 4003);
        assert_eq!(o.agents[1].cluster, "member-2");
        assert_eq!(o.agents[1].port, 4004);
        assert!(plane("v1.2.1", &ports[1..], &members).is_err());
    }

    #[test]
    fn every_process_listens_on_loopback_only() {
        for part in [
            Part::Registration,
            Part::Placement,
            Part::Work,
            Part::Agent("member-1".into()),
        ] {
            let args = part.args(4242);
            assert!(
                args.contains(&"--listen=127.0.0.1:4242".to_string()),
                "{args:?}"
            );
            assert!(args.contains(&"--disable-leader-election".to_string()));
            assert!(args.iter().any(|a| a.starts_with("--namespace=")));
        }
    }

    #[test]
    fn the_work_manager_runs_the_manifestworkreplicaset_controller() {
        let args = Part::Work.args(4242);
        assert_eq!(args[0], "manager");
        assert!(args.contains(&"--feature-gates=ManifestWorkReplicaSet=true".to_string()));
        assert!(
            args.contains(&format!("--kubeconfig={}", hub_kubeconfig().display())),
            "{args:?}"
        );
    }

    #[test]
    fn the_hub_controller_manager_also_signs_client_certificates() {
        let mut args = vec![
            "--controllers=namespace-controller,garbage-collector-controller".to_string(),
            "--leader-elect=false".to_string(),
        ];
        extend_hub_controller_manager(&mut args);
        assert_eq!(
            args[0],
            "--controllers=namespace-controller,garbage-collector-controller,\
             certificatesigningrequest-signing-controller"
        );
        assert!(
            args.iter()
                .any(|a| a.starts_with("--cluster-signing-kube-apiserver-client-key-file="))
        );
    }

    #[test]
    fn only_our_members_unanswered_csrs_are_approved() {
        let csr = |name: &str, cluster: &str, conditions: Value| {
            json!({"metadata": {"name": name, "labels": {CSR_CLUSTER_LABEL: cluster}},
                   "status": {"conditions": conditions}})
        };
        let csrs = vec![
            csr("a", "member-1", json!([])),
            csr(
                "b",
                "member-2",
                json!([{"type": "Approved", "status": "True"}]),
            ),
            csr("c", "elsewhere", json!([])),
            json!({"metadata": {"name": "d"}}),
        ];
        let members = vec!["member-1".to_string(), "member-2".to_string()];
        assert_eq!(pending_csrs(&csrs, &members), ["a"]);
    }
}
