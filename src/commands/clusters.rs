//! `flotilla clusters`: every inventory cluster with its health, in the contract shape; exit 3
//! when any of them could not be reached or read.

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;

use crate::backend::kube::{self, kubeconfig::Timeouts};
use crate::backend::sim::{Scenario, SimCore};
use crate::cli::{GlobalArgs, exit};
use crate::model::{ClusterSpec, ClusterStatus, Health, Taint};
use crate::output::{self, Table};
use crate::source::{LiveInventory, LoadedFleet};

/// One row of `clusters -o json`: `{"name","context","labels","taints","provider","region",
/// "health","version","latencyMs","message"}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterItem {
    pub name: String,
    pub context: String,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    pub provider: Option<String>,
    pub region: Option<String>,
    pub health: Health,
    pub version: Option<String>,
    pub latency_ms: Option<u64>,
    pub message: String,
}

impl ClusterItem {
    pub fn new(spec: &ClusterSpec, status: ClusterStatus) -> ClusterItem {
        ClusterItem {
            name: spec.name.clone(),
            context: spec.context.clone(),
            labels: spec.labels.clone(),
            taints: spec.taints.clone(),
            provider: spec.provider.clone(),
            region: spec.region.clone(),
            health: status.health,
            version: status.version,
            latency_ms: status.latency_ms,
            message: status.message,
        }
    }
}

#[derive(Debug, Serialize)]
struct ClusterList {
    items: Vec<ClusterItem>,
}

impl ClusterList {
    /// Writes the list; its exit code is 3 when any cluster could not be reached or read
    /// (Unreachable, Unauthorized, or NoAccess: no context or access provider reaches it), else 0, whichever way the clusters were listed.
    fn write(&self, global: &GlobalArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
        output::write(out, &global.output, self, || table(&self.items))?;
        let failed = self.items.iter().any(|item| {
            matches!(
                item.health,
                Health::Unreachable | Health::Unauthorized | Health::NoAccess
            )
        });
        Ok(if failed { exit::PARTIAL } else { exit::OK })
    }
}

/// Probes every live cluster (bounded, each with its own timeout) and lists them.
pub async fn run_live(
    global: &GlobalArgs,
    inventory: LiveInventory,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let timeouts = Timeouts::default();
    let members = kube::connect(&inventory.kubeconfig, inventory.clusters, timeouts).await;
    let statuses = kube::probe_all(&members, PROBE_CONCURRENCY, timeouts.connect).await;
    let items: Vec<ClusterItem> = members
        .iter()
        .zip(statuses)
        .map(|(member, status)| {
            let status = match &global.profiles {
                Some(profiles) => profiles.status(&member.spec.name, status),
                None => status,
            };
            ClusterItem::new(&member.spec, status)
        })
        .collect();
    ClusterList { items }.write(global, out)
}

/// Lists a federation hub's member clusters with the health the hub reports for them.
pub async fn run_hub(global: &GlobalArgs, hub: &str, out: &mut dyn Write) -> anyhow::Result<u8> {
    let listed =
        match crate::backend::hub::connect(global.kubeconfig.as_deref(), hub, Timeouts::default())
            .await
        {
            Ok(hub) => hub.clusters().await,
            Err(err) => Err(err),
        };
    let clusters = match listed {
        Ok(clusters) => clusters,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(exit::of_hub(&err));
        }
    };
    let items: Vec<ClusterItem> = clusters
        .into_iter()
        .map(|(spec, status)| ClusterItem::new(&spec, status))
        .collect();
    ClusterList { items }.write(global, out)
}

/// Clusters probed at once.
const PROBE_CONCURRENCY: usize = 64;

/// Lists the clusters of a simulated fleet.
pub fn run_demo(
    global: &GlobalArgs,
    loaded: &LoadedFleet,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let scenario = Scenario::for_demo(
        &loaded.fleet.clusters,
        global.demo_scale.is_some(),
        global.demo_seed,
    );
    let core = SimCore::new(loaded.fleet.clone(), &scenario, global.demo_seed);
    let items: Vec<ClusterItem> = loaded
        .fleet
        .clusters
        .iter()
        .enumerate()
        .map(|(index, spec)| ClusterItem::new(spec, core.cluster_status(index)))
        .collect();
    ClusterList { items }.write(global, out)
}

fn table(items: &[ClusterItem]) -> Table {
    let mut table = Table::new(&[
        "NAME", "CONTEXT", "HEALTH", "VERSION", "LATENCY", "REGION", "PROVIDER", "TAINTS",
        "LABELS", "MESSAGE",
    ])
    .wide_only(&["CONTEXT", "LABELS"]);
    let or_dash = |list: Vec<String>| {
        if list.is_empty() {
            "-".to_string()
        } else {
            list.join(",")
        }
    };
    for item in items {
        let labels = item.labels.iter().map(|(k, v)| format!("{k}={v}"));
        table.row(
            item.name.clone(),
            vec![
                item.name.clone(),
                item.context.clone(),
                item.health.as_str().to_string(),
                item.version.clone().unwrap_or_else(|| "-".into()),
                item.latency_ms
                    .map_or_else(|| "-".to_string(), |ms| format!("{ms}ms")),
                item.region.clone().unwrap_or_else(|| "-".into()),
                item.provider.clone().unwrap_or_else(|| "-".into()),
                or_dash(item.taints.iter().map(ToString::to_string).collect()),
                or_dash(labels.collect()),
                item.message.clone(),
            ],
        );
    }
    table
}
