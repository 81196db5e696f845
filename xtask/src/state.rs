//! The test environment's record of what it started (`target/testenv/state.json`): versions,
//! ports, pids, who owns the run and, for a Karmada, OCM or KubeFed hub, its `HubPlane`. It
//! only reads and writes that file (atomically); it must not start or stop anything.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::procs::ProcRec;

const FORMAT: u64 = 1;

/// A recorded process with the name messages use for it.
pub type Named = (String, ProcRec);

/// Who started the environment: a person (`testenv up`, left running) or `cargo xtask test`
/// (stopped when that run ends; adopted by the next run if that one died).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Manual,
    Test { pid: u32 },
}

#[derive(Debug, Clone)]
pub struct Cluster {
    pub name: String,
    pub port: u16,
    pub apiserver: Option<ProcRec>,
    pub controller_manager: Option<ProcRec>,
    /// A member's kube-scheduler and kwok (`kwok.rs`); `None` on the hub.
    pub scheduler: Option<ProcRec>,
    pub kwok: Option<ProcRec>,
    /// Stopped on purpose with `testenv stop` (an outage), as opposed to crashed.
    pub stopped: bool,
}

impl Cluster {
    pub fn etcd_prefix(&self) -> String {
        format!("/flotilla-testenv/{}/registry", self.name)
    }

    /// The recorded processes that talk to this cluster's API server, named: kwok, the
    /// scheduler, the controller-manager.
    pub fn named_controllers(&self) -> Vec<Named> {
        [
            ("kwok", &self.kwok),
            ("kube-scheduler", &self.scheduler),
            ("kube-controller-manager", &self.controller_manager),
        ]
        .into_iter()
        .filter_map(|(what, p)| Some((format!("{} {what}", self.name), p.clone()?)))
        .collect()
    }

    /// Takes those processes out of the record (for a stop).
    pub fn take_controllers(&mut self) -> Vec<Named> {
        let named = self.named_controllers();
        self.kwok = None;
        self.scheduler = None;
        self.controller_manager = None;
        named
    }
}

/// The Karmada control plane of a `--hub karmada` environment: its release, the ports its
/// components listen on (all 127.0.0.1) and their processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Karmada {
    pub version: String,
    pub aggregated_apiserver_port: u16,
    pub webhook_port: u16,
    pub webhook_health_port: u16,
    pub webhook_metrics_port: u16,
    pub controller_manager_health_port: u16,
    pub controller_manager_metrics_port: u16,
    pub scheduler_health_port: u16,
    pub scheduler_metrics_port: u16,
    pub aggregated_apiserver: Option<ProcRec>,
    pub webhook: Option<ProcRec>,
    pub controller_manager: Option<ProcRec>,
    pub scheduler: Option<ProcRec>,
}

impl Karmada {
    /// The components, named, in start order.
    pub fn procs(&self) -> Vec<(String, Option<ProcRec>)> {
        vec![
            (
                "karmada-aggregated-apiserver".into(),
                self.aggregated_apiserver.clone(),
            ),
            ("karmada-webhook".into(), self.webhook.clone()),
            (
                "karmada-controller-manager".into(),
                self.controller_manager.clone(),
            ),
            ("karmada-scheduler".into(), self.scheduler.clone()),
        ]
    }

    /// The recorded components in two stop groups: the controllers (webhook,
    /// controller-manager, scheduler), then the aggregated API server.
    pub fn stop_groups(&self) -> (Vec<Named>, Vec<Named>) {
        let (aggregated, controllers): (Vec<_>, Vec<_>) = self
            .procs()
            .into_iter()
            .filter_map(|(name, p)| p.map(|p| (name, p)))
            .partition(|(name, _)| name == "karmada-aggregated-apiserver");
        (controllers, aggregated)
    }

    fn to_json(&self) -> Value {
        json!({
            "version": self.version,
            "aggregatedApiserverPort": self.aggregated_apiserver_port,
            "webhookPort": self.webhook_port,
            "webhookHealthPort": self.webhook_health_port,
            "webhookMetricsPort": self.webhook_metrics_port,
            "controllerManagerHealthPort": self.controller_manager_health_port,
            "controllerManagerMetricsPort": self.controller_manager_metrics_port,
            "schedulerHealthPort": self.scheduler_health_port,
            "schedulerMetricsPort": self.scheduler_metrics_port,
            "aggregatedApiserver": proc_json(self.aggregated_apiserver.as_ref()),
            "webhook": proc_json(self.webhook.as_ref()),
            "controllerManager": proc_json(self.controller_manager.as_ref()),
            "scheduler": proc_json(self.scheduler.as_ref()),
        })
    }

    fn from_json(v: &Value) -> Result<Self> {
        Ok(Self {
            version: str_from(v, "version")?,
            aggregated_apiserver_port: port_from(v, "aggregatedApiserverPort")?,
            webhook_port: port_from(v, "webhookPort")?,
            webhook_health_port: port_from(v, "webhookHealthPort")?,
            webhook_metrics_port: port_from(v, "webhookMetricsPort")?,
            controller_manager_health_port: port_from(v, "controllerManagerHealthPort")?,
            controller_manager_metrics_port: port_from(v, "controllerManagerMetricsPort")?,
            scheduler_health_port: port_from(v, "schedulerHealthPort")?,
            scheduler_metrics_port: port_from(v, "schedulerMetricsPort")?,
            aggregated_apiserver: v.get("aggregatedApiserver").and_then(proc_from),
            webhook: v.get("webhook").and_then(proc_from),
            controller_manager: v.get("controllerManager").and_then(proc_from),
            scheduler: v.get("scheduler").and_then(proc_from),
        })
    }
}

/// One klusterlet agent of an OCM hub: the member it runs for (its ManagedCluster has the
/// same name), its health port and its process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OcmAgent {
    pub cluster: String,
    pub port: u16,
    pub process: Option<ProcRec>,
}

/// The Open Cluster Management plane of a `--hub ocm` environment: its release, the hub
/// controllers' ports and processes, and one agent per member (all 127.0.0.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ocm {
    pub version: String,
    pub registration_port: u16,
    pub placement_port: u16,
    /// The work manager's port; `None` in a state written before the hub ran it (such an
    /// environment is replaced by the next `up`).
    pub work_port: Option<u16>,
    pub registration: Option<ProcRec>,
    pub placement: Option<ProcRec>,
    pub work: Option<ProcRec>,
    pub agents: Vec<OcmAgent>,
}

impl Ocm {
    /// The recorded processes, named: the agents, then the hub controllers.
    pub fn named(&self) -> Vec<Named> {
        let mut out: Vec<Named> = self
            .agents
            .iter()
            .filter_map(|a| {
                let p = a.process.clone()?;
                Some((format!("{} ocm-agent", a.cluster), p))
            })
            .collect();
        for (name, p) in [
            ("ocm-registration-controller", &self.registration),
            ("ocm-placement-controller", &self.placement),
            ("ocm-work-manager", &self.work),
        ] {
            if let Some(p) = p {
                out.push((name.to_string(), p.clone()));
            }
        }
        out
    }

    /// Takes the processes that stop with cluster `name` out of the record: the hub
    /// controllers with the hub, a member's agent with the member.
    fn take_for_stop(&mut self, name: &str) -> Vec<Named> {
        let mut out = Vec::new();
        if name == "hub" {
            for (what, slot) in [
                ("ocm-registration-controller", &mut self.registration),
                ("ocm-placement-controller", &mut self.placement),
                ("ocm-work-manager", &mut self.work),
            ] {
                if let Some(p) = slot.take() {
                    out.push((what.to_string(), p));
                }
            }
        } else if let Some(a) = self.agents.iter_mut().find(|a| a.cluster == name)
            && let Some(p) = a.process.take()
        {
            out.push((format!("{name} ocm-agent"), p));
        }
        out
    }

    fn to_json(&self) -> Value {
        let agents: Vec<Value> = self
            .agents
            .iter()
            .map(|a| json!({"cluster": a.cluster, "port": a.port, "process": proc_json(a.process.as_ref())}))
            .collect();
        json!({
            "version": self.version,
            "registrationPort": self.registration_port,
            "placementPort": self.placement_port,
            "workPort": self.work_port,
            "registration": proc_json(self.registration.as_ref()),
            "placement": proc_json(self.placement.as_ref()),
            "work": proc_json(self.work.as_ref()),
            "agents": agents,
        })
    }

    fn from_json(v: &Value) -> Result<Self> {
        let agents = v
            .get("agents")
            .and_then(Value::as_array)
            .context("state: missing `agents`")?
            .iter()
            .map(|a| {
                Ok(OcmAgent {
                    cluster: str_from(a, "cluster")?,
                    port: port_from(a, "port")?,
                    process: a.get("process").and_then(proc_from),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            version: str_from(v, "version")?,
            registration_port: port_from(v, "registrationPort")?,
            placement_port: port_from(v, "placementPort")?,
            work_port: match v.get("workPort") {
                None | Some(Value::Null) => None,
                Some(_) => Some(port_from(v, "workPort")?),
            },
            registration: v.get("registration").and_then(proc_from),
            placement: v.get("placement").and_then(proc_from),
            work: v.get("work").and_then(proc_from),
            agents,
        })
    }
}

/// The KubeFed control plane of a `--hub kubefed` environment: its release, the ports of its
/// controller-manager (all 127.0.0.1) and its process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeFed {
    pub version: String,
    pub health_port: u16,
    pub metrics_port: u16,
    pub controller_manager: Option<ProcRec>,
}

impl KubeFed {
    /// The recorded controller-manager, named.
    pub fn named(&self) -> Vec<Named> {
        self.controller_manager
            .iter()
            .map(|p| ("kubefed-controller-manager".to_string(), p.clone()))
            .collect()
    }

    fn to_json(&self) -> Value {
        json!({
            "version": self.version,
            "healthPort": self.health_port,
            "metricsPort": self.metrics_port,
            "controllerManager": proc_json(self.controller_manager.as_ref()),
        })
    }

    fn from_json(v: &Value) -> Result<Self> {
        Ok(Self {
            version: str_from(v, "version")?,
            health_port: port_from(v, "healthPort")?,
            metrics_port: port_from(v, "metricsPort")?,
            controller_manager: v.get("controllerManager").and_then(proc_from),
        })
    }
}

/// Which hub a scale environment imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleKind {
    Karmada,
    Ocm,
}

impl ScaleKind {
    /// The `--scale` value that asks for it.
    pub fn flag(self) -> &'static str {
        match self {
            Self::Karmada => "karmada",
            Self::Ocm => "ocm",
        }
    }

    pub fn from_flag(value: &str) -> Option<Self> {
        match value {
            "karmada" => Some(Self::Karmada),
            "ocm" => Some(Self::Ocm),
            _ => None,
        }
    }
}

/// The scale environment of `testenv up --scale`: a hub API server holding what a hub of
/// `clusters` clusters and `resources` resources holds, written by the loader, and the
/// background loader that changes `churn` Work statuses per second (when asked for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scale {
    pub kind: ScaleKind,
    pub clusters: usize,
    pub resources: usize,
    pub churn: Option<u32>,
    pub churn_loader: Option<ProcRec>,
}

impl Scale {
    fn to_json(&self) -> Value {
        json!({
            "kind": self.kind.flag(),
            "clusters": self.clusters,
            "resources": self.resources,
            "churn": self.churn,
            "churnLoader": proc_json(self.churn_loader.as_ref()),
        })
    }

    fn from_json(v: &Value) -> Result<Self> {
        let count = |key: &str| {
            v.get(key)
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
                .with_context(|| format!("state: missing or bad `scale.{key}`"))
        };
        Ok(Self {
            kind: ScaleKind::from_flag(&str_from(v, "kind")?).context("state: bad `scale.kind`")?,
            clusters: count("clusters")?,
            resources: count("resources")?,
            churn: v
                .get("churn")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok()),
            churn_loader: v.get("churnLoader").and_then(proc_from),
        })
    }
}

/// The raw-contexts tier of `testenv up --contexts N`: one toxiproxy server (its API on
/// `api_port`) holding `count` proxies, proxy `i` listening on `ports[i]` in front of the
/// members in turn, each with a latency toxic around `latency_ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proxies {
    pub count: usize,
    pub latency_ms: u32,
    pub api_port: u16,
    pub ports: Vec<u16>,
    pub server: Option<ProcRec>,
}

impl Proxies {
    fn to_json(&self) -> Value {
        json!({
            "count": self.count,
            "latencyMs": self.latency_ms,
            "apiPort": self.api_port,
            "ports": self.ports,
            "server": proc_json(self.server.as_ref()),
        })
    }

    fn from_json(v: &Value) -> Result<Self> {
        let ports = v
            .get("ports")
            .and_then(Value::as_array)
            .context("state: missing `proxies.ports`")?
            .iter()
            .map(|p| {
                p.as_u64()
                    .and_then(|p| u16::try_from(p).ok())
                    .context("state: bad port in `proxies.ports`")
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            count: v
                .get("count")
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
                .context("state: missing `proxies.count`")?,
            latency_ms: v
                .get("latencyMs")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .context("state: missing `proxies.latencyMs`")?,
            api_port: port_from(v, "apiPort")?,
            ports,
            server: v.get("server").and_then(proc_from),
        })
    }
}

/// The federation control plane of a hub that is not plain (at most one per environment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HubPlane {
    Karmada(Karmada),
    Ocm(Ocm),
    KubeFed(KubeFed),
}

/// The state file's key of each plane (one key per kind; the others are `null`).
const PLANE_KEYS: [&str; 3] = ["karmada", "ocm", "kubefed"];

impl HubPlane {
    /// The plane's release, e.g. `v1.18.2`.
    pub fn version(&self) -> &str {
        match self {
            Self::Karmada(k) => &k.version,
            Self::Ocm(o) => &o.version,
            Self::KubeFed(k) => &k.version,
        }
    }

    fn key(&self) -> &'static str {
        match self {
            Self::Karmada(_) => PLANE_KEYS[0],
            Self::Ocm(_) => PLANE_KEYS[1],
            Self::KubeFed(_) => PLANE_KEYS[2],
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Self::Karmada(k) => k.to_json(),
            Self::Ocm(o) => o.to_json(),
            Self::KubeFed(k) => k.to_json(),
        }
    }

    fn from_json(key: &str, v: &Value) -> Result<Self> {
        Ok(match key {
            "karmada" => Self::Karmada(Karmada::from_json(v)?),
            "ocm" => Self::Ocm(Ocm::from_json(v)?),
            _ => Self::KubeFed(KubeFed::from_json(v)?),
        })
    }

    /// The recorded processes in two stop groups: those that stop with the controllers, then
    /// Karmada's aggregated API server (see `State::stop_phases`).
    pub fn stop_groups(&self) -> (Vec<Named>, Vec<Named>) {
        match self {
            Self::Karmada(k) => k.stop_groups(),
            Self::Ocm(o) => (o.named(), Vec::new()),
            Self::KubeFed(k) => (k.named(), Vec::new()),
        }
    }

    /// Whether `testenv stop|start <cluster>` stops or starts processes of the plane: the hub
    /// always, a member under OCM (its klusterlet agent).
    pub fn runs_with(&self, cluster: &str) -> bool {
        match self {
            Self::Ocm(o) => cluster == "hub" || o.agents.iter().any(|a| a.cluster == cluster),
            _ => cluster == "hub",
        }
    }

    /// Takes the processes that stop with cluster `name` out of the record, in the groups of
    /// `stop_groups`: everything with the hub (the plane cannot work without its API
    /// server); under OCM a member's agent with the member (it stands for the klusterlet pod
    /// that would go down with its cluster, so the hub sees the lease stop).
    pub fn take_for_stop(&mut self, name: &str) -> (Vec<Named>, Vec<Named>) {
        let hub = name == "hub";
        match self {
            Self::Karmada(k) if hub => {
                let groups = k.stop_groups();
                k.aggregated_apiserver = None;
                k.webhook = None;
                k.controller_manager = None;
                k.scheduler = None;
                groups
            }
            Self::Ocm(o) => (o.take_for_stop(name), Vec::new()),
            Self::KubeFed(k) if hub => {
                let groups = (k.named(), Vec::new());
                k.controller_manager = None;
                groups
            }
            _ => Default::default(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct State {
    pub kubernetes: String,
    pub etcd_version: String,
    pub members: usize,
    pub owner: Owner,
    pub etcd: Option<ProcRec>,
    pub etcd_client_port: u16,
    pub etcd_peer_port: u16,
    pub clusters: Vec<Cluster>,
    /// The hub's federation control plane (`up --hub karmada|ocm|kubefed`); `None` for the
    /// plain hub.
    pub hub_plane: Option<HubPlane>,
    /// Set once a fresh start finished (RBAC applied, controller-managers started); an
    /// interrupted start leaves it false and the next `up` replaces the environment.
    pub complete: bool,
    /// `up --scale`: the loaded hub (no members, no controllers).
    pub scale: Option<Scale>,
    /// `up --contexts N`: the proxies in front of the members.
    pub proxies: Option<Proxies>,
}

fn proc_json(p: Option<&ProcRec>) -> Value {
    p.map_or(Value::Null, |p| json!({"pid": p.pid, "exe": p.exe}))
}

fn proc_from(v: &Value) -> Option<ProcRec> {
    Some(ProcRec {
        pid: u32::try_from(v.get("pid")?.as_u64()?).ok()?,
        exe: v.get("exe")?.as_str()?.to_string(),
    })
}

fn port_from(v: &Value, key: &str) -> Result<u16> {
    v.get(key)
        .and_then(Value::as_u64)
        .and_then(|p| u16::try_from(p).ok())
        .with_context(|| format!("state: missing or bad `{key}`"))
}

fn str_from(v: &Value, key: &str) -> Result<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .with_context(|| format!("state: missing `{key}`"))
}

impl State {
    pub fn cluster(&self, name: &str) -> Option<&Cluster> {
        self.clusters.iter().find(|c| c.name == name)
    }

    pub fn cluster_mut(&mut self, name: &str) -> Option<&mut Cluster> {
        self.clusters.iter_mut().find(|c| c.name == name)
    }

    pub fn karmada_mut(&mut self) -> Result<&mut Karmada> {
        match &mut self.hub_plane {
            Some(HubPlane::Karmada(k)) => Ok(k),
            _ => bail!("the environment has no Karmada hub"),
        }
    }

    pub fn ocm_mut(&mut self) -> Result<&mut Ocm> {
        match &mut self.hub_plane {
            Some(HubPlane::Ocm(o)) => Ok(o),
            _ => bail!("the environment has no OCM hub"),
        }
    }

    pub fn kubefed_mut(&mut self) -> Result<&mut KubeFed> {
        match &mut self.hub_plane {
            Some(HubPlane::KubeFed(k)) => Ok(k),
            _ => bail!("the environment has no KubeFed hub"),
        }
    }

    /// Every recorded process, named, in the order to stop them: the hub plane's controllers
    /// (Karmada's, OCM's, KubeFed's) and the controller-managers (they need the API servers), then Karmada's aggregated API
    /// server (the hub's garbage collector watches through it, which would hold up its
    /// graceful shutdown), then API servers (their graceful shutdown needs etcd), then etcd.
    pub fn stop_phases(&self) -> [Vec<(String, ProcRec)>; 4] {
        let (mut controllers, aggregated) = self
            .hub_plane
            .as_ref()
            .map(HubPlane::stop_groups)
            .unwrap_or_default();
        // The churn loader and the proxies talk to the API servers: they go first.
        if let Some(p) = self.scale.as_ref().and_then(|s| s.churn_loader.clone()) {
            controllers.insert(0, ("scale churn loader".to_string(), p));
        }
        if let Some(p) = self.proxies.as_ref().and_then(|x| x.server.clone()) {
            controllers.insert(0, ("toxiproxy".to_string(), p));
        }
        let mut apiservers = Vec::new();
        for c in &self.clusters {
            controllers.extend(c.named_controllers());
            if let Some(p) = &c.apiserver {
                apiservers.push((format!("{} kube-apiserver", c.name), p.clone()));
            }
        }
        let etcd = self
            .etcd
            .iter()
            .map(|p| ("etcd".to_string(), p.clone()))
            .collect();
        [controllers, aggregated, apiservers, etcd]
    }

    /// Every recorded process, named, in stop order.
    pub fn all_procs(&self) -> Vec<(String, ProcRec)> {
        self.stop_phases().into_iter().flatten().collect()
    }

    pub fn to_json(&self) -> Value {
        let owner = match self.owner {
            Owner::Manual => json!({"kind": "manual"}),
            Owner::Test { pid } => json!({"kind": "test", "pid": pid}),
        };
        let clusters: Vec<Value> = self
            .clusters
            .iter()
            .map(|c| {
                json!({
                    "name": c.name,
                    "port": c.port,
                    "etcdPrefix": c.etcd_prefix(),
                    "stopped": c.stopped,
                    "apiserver": proc_json(c.apiserver.as_ref()),
                    "controllerManager": proc_json(c.controller_manager.as_ref()),
                    "scheduler": proc_json(c.scheduler.as_ref()),
                    "kwok": proc_json(c.kwok.as_ref()),
                })
            })
            .collect();
        let mut v = json!({
            "format": FORMAT,
            "kubernetes": self.kubernetes,
            "etcdVersion": self.etcd_version,
            "members": self.members,
            "complete": self.complete,
            "owner": owner,
            "etcd": {
                "clientPort": self.etcd_client_port,
                "peerPort": self.etcd_peer_port,
                "process": proc_json(self.etcd.as_ref()),
            },
            "clusters": clusters,
        });
        // One key per kind of plane, the others `null`: the shape every version has written.
        for key in PLANE_KEYS {
            v[key] = Value::Null;
        }
        if let Some(p) = &self.hub_plane {
            v[p.key()] = p.to_json();
        }
        v["scale"] = self.scale.as_ref().map_or(Value::Null, Scale::to_json);
        v["proxies"] = self.proxies.as_ref().map_or(Value::Null, Proxies::to_json);
        v
    }

    pub fn from_json(v: &Value) -> Result<Self> {
        if v.get("format").and_then(Value::as_u64) != Some(FORMAT) {
            bail!("state: unknown format");
        }
        let owner = match v.pointer("/owner/kind").and_then(Value::as_str) {
            Some("test") => Owner::Test {
                pid: v
                    .pointer("/owner/pid")
                    .and_then(Value::as_u64)
                    .and_then(|p| u32::try_from(p).ok())
                    .unwrap_or(0),
            },
            _ => Owner::Manual,
        };
        let etcd = v.get("etcd").context("state: missing `etcd`")?;
        let clusters = v
            .get("clusters")
            .and_then(Value::as_array)
            .context("state: missing `clusters`")?
            .iter()
            .map(|c| {
                Ok(Cluster {
                    name: str_from(c, "name")?,
                    port: port_from(c, "port")?,
                    apiserver: c.get("apiserver").and_then(proc_from),
                    controller_manager: c.get("controllerManager").and_then(proc_from),
                    scheduler: c.get("scheduler").and_then(proc_from),
                    kwok: c.get("kwok").and_then(proc_from),
                    stopped: c.get("stopped").and_then(Value::as_bool).unwrap_or(false),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            kubernetes: str_from(v, "kubernetes")?,
            etcd_version: str_from(v, "etcdVersion")?,
            members: v
                .get("members")
                .and_then(Value::as_u64)
                .and_then(|m| usize::try_from(m).ok())
                .context("state: missing `members`")?,
            owner,
            complete: v.get("complete").and_then(Value::as_bool).unwrap_or(false),
            etcd: etcd.get("process").and_then(proc_from),
            etcd_client_port: port_from(etcd, "clientPort")?,
            etcd_peer_port: port_from(etcd, "peerPort")?,
            clusters,
            hub_plane: PLANE_KEYS
                .iter()
                .find_map(|&key| {
                    let p = v.get(key).filter(|p| !p.is_null())?;
                    Some(HubPlane::from_json(key, p).with_context(|| format!("state: bad `{key}`")))
                })
                .transpose()?,
            scale: v
                .get("scale")
                .filter(|x| !x.is_null())
                .map(Scale::from_json)
                .transpose()?,
            proxies: v
                .get("proxies")
                .filter(|x| !x.is_null())
                .map(Proxies::from_json)
                .transpose()?,
        })
    }

    /// Reads the state file; `Ok(None)` when there is none.
    pub fn load(path: &Path) -> Result<Option<Self>> {
        let text = match fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let v: Value =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        Self::from_json(&v)
            .map(Some)
            .with_context(|| format!("reading {}", path.display()))
    }

    /// Writes the state file atomically (temp file + rename).
    pub fn save(&self, path: &Path) -> Result<()> {
        let tmp = path.with_extension(format!("json.tmp-{}", std::process::id()));
        let text = serde_json::to_string_pretty(&self.to_json())?;
        fs::write(&tmp, text + "\n").with_context(|| format!("writing {}", tmp.display()))?;
        fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(pid: u32) -> Option<ProcRec> {
        Some(ProcRec {
            pid,
            exe: "/c/bin".into(),
        })
    }

    /// A one-member environment with `hub_plane`, nothing else running.
    fn with_plane(hub_plane: Option<HubPlane>) -> State {
        State {
            kubernetes: "v1.36.3".into(),
            etcd_version: "v3.6.8".into(),
            members: 1,
            owner: Owner::Manual,
            etcd: None,
            etcd_client_port: 1000,
            etcd_peer_port: 1001,
            clusters: vec![],
            complete: true,
            hub_plane,
            scale: None,
            proxies: None,
        }
    }

    /// Writes and reads back `s` and returns the names of the first two stop phases.
    fn round_trip(s: &State) -> (State, [Vec<String>; 2]) {
        let back = State::from_json(&s.to_json()).expect("parse");
        assert_eq!(back.hub_plane, s.hub_plane);
        let [first, second, ..] = back.stop_phases();
        let names = |phase: Vec<Named>| phase.into_iter().map(|(n, _)| n).collect();
        (back, [names(first), names(second)])
    }

    #[test]
    fn round_trips() {
        let mut s = with_plane(None);
        s.owner = Owner::Test { pid: 42 };
        s.etcd = rec(7);
        s.clusters = vec![Cluster {
            name: "member-1".into(),
            port: 2000,
            apiserver: None,
            controller_manager: rec(9),
            scheduler: rec(10),
            kwok: None,
            stopped: true,
        }];
        let (back, _) = round_trip(&s);
        assert_eq!(back.owner, Owner::Test { pid: 42 });
        assert_eq!(back.etcd_peer_port, 1001);
        assert_eq!(back.clusters[0].port, 2000);
        assert!(back.clusters[0].stopped);
        assert!(back.complete);
        assert!(back.clusters[0].apiserver.is_none());
        assert_eq!(back.clusters[0].scheduler, rec(10));
        let names: Vec<String> = back.all_procs().into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "member-1 kube-scheduler",
                "member-1 kube-controller-manager",
                "etcd"
            ]
        );
        // The file keeps one key per kind of plane.
        let v = s.to_json();
        assert!(PLANE_KEYS.iter().all(|k| v[k].is_null()), "{v}");
    }

    #[test]
    fn round_trips_a_scale_hub_and_proxies_and_stops_their_loaders_first() {
        let mut s = with_plane(Some(HubPlane::Karmada(karmada())));
        s.scale = Some(Scale {
            kind: ScaleKind::Ocm,
            clusters: 500,
            resources: 20,
            churn: Some(200),
            churn_loader: rec(21),
        });
        s.proxies = Some(Proxies {
            count: 2,
            latency_ms: 50,
            api_port: 4000,
            ports: vec![4001, 4002],
            server: rec(22),
        });
        let (back, [first, _]) = round_trip(&s);
        assert_eq!(back.scale, s.scale);
        assert_eq!(back.proxies, s.proxies);
        assert_eq!(
            &first[..2],
            ["toxiproxy", "scale churn loader"],
            "what talks to the API servers stops first"
        );
        let plain = State::from_json(&with_plane(None).to_json()).expect("parse");
        assert!(plain.scale.is_none() && plain.proxies.is_none());
    }

    fn karmada() -> Karmada {
        Karmada {
            version: "v1.18.2".into(),
            aggregated_apiserver_port: 3000,
            webhook_port: 3001,
            webhook_health_port: 3002,
            webhook_metrics_port: 3005,
            controller_manager_health_port: 3003,
            controller_manager_metrics_port: 3006,
            scheduler_health_port: 3004,
            scheduler_metrics_port: 3007,
            aggregated_apiserver: rec(11),
            webhook: None,
            controller_manager: rec(12),
            scheduler: None,
        }
    }

    fn ocm() -> Ocm {
        Ocm {
            version: "v1.2.1".into(),
            registration_port: 3000,
            placement_port: 3001,
            work_port: Some(3002),
            registration: rec(21),
            placement: None,
            work: rec(23),
            agents: vec![OcmAgent {
                cluster: "member-1".into(),
                port: 3003,
                process: rec(22),
            }],
        }
    }

    fn kubefed() -> KubeFed {
        KubeFed {
            version: "v0.10.0".into(),
            health_port: 3000,
            metrics_port: 3001,
            controller_manager: rec(13),
        }
    }

    #[test]
    fn round_trips_a_karmada_hub() {
        let (back, phases) = round_trip(&with_plane(Some(HubPlane::Karmada(karmada()))));
        // Karmada's controllers stop first, its aggregated API server after them.
        assert_eq!(
            phases,
            [
                vec!["karmada-controller-manager"],
                vec!["karmada-aggregated-apiserver"]
            ]
        );
        assert_eq!(back.to_json()["karmada"]["aggregatedApiserverPort"], 3000);
    }

    #[test]
    fn round_trips_an_ocm_hub_and_stops_its_processes_before_the_api_servers() {
        let (back, phases) = round_trip(&with_plane(Some(HubPlane::Ocm(ocm()))));
        assert_eq!(
            phases[0],
            [
                "member-1 ocm-agent",
                "ocm-registration-controller",
                "ocm-work-manager"
            ]
        );
        assert_eq!(back.to_json()["ocm"]["agents"][0]["port"], 3003);
    }

    #[test]
    fn round_trips_a_kubefed_hub() {
        let (back, phases) = round_trip(&with_plane(Some(HubPlane::KubeFed(kubefed()))));
        // The controller stops with the controllers, before any API server.
        assert_eq!(phases[0], ["kubefed-controller-manager"]);
        assert_eq!(back.to_json()["kubefed"]["healthPort"], 3000);
    }

    #[test]
    fn a_state_written_before_the_hub_plane_enum_still_reads() {
        // As the code with one optional field per plane wrote it: all three keys.
        let mut v = with_plane(None).to_json();
        v["karmada"] = Value::Null;
        v["ocm"] = Value::Null;
        v["kubefed"] = json!({
            "version": "v0.10.0", "healthPort": 3000, "metricsPort": 3001,
            "controllerManager": {"pid": 13, "exe": "/c/bin"},
        });
        let s = State::from_json(&v).expect("parse");
        assert_eq!(s.hub_plane, Some(HubPlane::KubeFed(kubefed())));
        // An even older one, without the keys of planes that came later.
        let obj = v.as_object_mut().expect("object");
        obj.remove("ocm");
        obj.remove("kubefed");
        assert_eq!(State::from_json(&v).expect("parse").hub_plane, None);
        v["karmada"] = json!({"version": "v1.18.2"});
        assert!(
            State::from_json(&v).is_err(),
            "a bad plane is still an error"
        );
    }

    #[test]
    fn a_stop_takes_only_the_processes_of_that_cluster() {
        let mut k = HubPlane::Karmada(karmada());
        assert_eq!(k.take_for_stop("member-1"), Default::default());
        let (first, second) = k.take_for_stop("hub");
        assert_eq!((first.len(), second.len()), (1, 1));
        assert_eq!(k.stop_groups(), Default::default());

        let mut o = HubPlane::Ocm(ocm());
        assert!(o.runs_with("member-1") && o.runs_with("hub") && !o.runs_with("member-2"));
        assert_eq!(o.take_for_stop("member-1").0[0].0, "member-1 ocm-agent");
        assert_eq!(o.stop_groups().0.len(), 2, "the hub controllers still run");
        assert_eq!(o.take_for_stop("hub").0.len(), 2);
        assert_eq!(o.stop_groups(), Default::default());

        let mut f = HubPlane::KubeFed(kubefed());
        assert!(!f.runs_with("member-1"));
        assert_eq!(f.take_for_stop("hub").0.len(), 1);
        assert_eq!(f.stop_groups(), Default::default());
    }

    #[test]
    fn an_ocm_state_from_before_the_work_manager_still_reads() {
        let mut v = json!({
            "version": "v1.2.1",
            "registrationPort": 3000,
            "placementPort": 3001,
            "registration": {"pid": 21, "exe": "/c/ocm"},
            "placement": null,
            "agents": [],
        });
        let o = Ocm::from_json(&v).expect("parse");
        assert_eq!(o.work_port, None);
        assert!(o.work.is_none());
        assert_eq!(o.named().len(), 1);
        v["workPort"] = json!(70000);
        assert!(Ocm::from_json(&v).is_err(), "a bad port is still an error");
    }
}
