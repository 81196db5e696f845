//! The log pane on a hub: each read cell's member reached as the object view reaches it —
//! through the member's kubeconfig context, else the hub's proxy to it (Karmada's cluster
//! proxy) — and where neither exists, a note in the pane that says so for that member. The
//! streaming is the one every backend does (`backend::log_pane`). It only reads, with
//! read-only member APIs.

use serde_json::json;
use tokio::sync::mpsc;

use super::connect::Hub;
use super::view::HubView;
use crate::backend::fanout::cluster_api::ApiError;
use crate::backend::kube::api::KubeCluster;
use crate::backend::kube::kubeconfig::Timeouts;
use crate::backend::log_pane::{PaneCell, spawn};
use crate::messages::{BackendEvent, LogOpen};

/// Starts streaming the pane's logs in a task of its own; it ends with the pane's lease.
pub fn open(
    hub: &Hub,
    view: &HubView,
    open: LogOpen,
    events: &mpsc::UnboundedSender<BackendEvent>,
) {
    let wanted: Vec<_> = open
        .cells
        .iter()
        .filter_map(|cell| {
            let (member, _) = view.clusters.get(cell.cluster as usize)?;
            let row = view.rows.get(cell.resource as usize)?;
            Some((member.clone(), row.target.clone()))
        })
        .collect();
    let (hub, events) = (hub.clone(), events.clone());
    let cells = async move {
        let mut cells = Vec::with_capacity(wanted.len());
        for (member, target) in wanted {
            let api = match hub.member_client(&member, Timeouts::default()).await {
                Ok(client) => Ok(KubeCluster::new(client, true)),
                Err(reason) => Err(ApiError::Unreachable(format!(
                    "cannot reach {}: {reason}",
                    member.name
                ))),
            };
            // The workload's identity is all the pods' owner walk needs of it.
            let desired = json!({
                "apiVersion": target.api_version,
                "kind": target.kind,
                "metadata": {"name": target.name, "namespace": target.namespace},
            });
            cells.push(PaneCell {
                cluster: member.name.clone(),
                api,
                desired,
            });
        }
        cells
    };
    spawn(cells, open, events);
}
