//! Hub mode: a federation control plane is the source of truth. [`detect`] tells which kind
//! of hub a context is from the API groups it serves; each kind has its own reader. Readers
//! here only read; they must not write to the hub or decide placement themselves.

pub mod karmada;
pub mod karmada_source;
pub mod kubefed;
pub mod ocm;
pub mod poll;

use std::collections::BTreeMap;
use std::path::Path;

use kube::Client;
use kube::config::Kubeconfig;
use serde::Serialize;

use super::kube::kubeconfig;
use super::kube::kubeconfig::Timeouts;
use super::kube::probe::short_error;
use crate::cli::exit;
use crate::model::{CellStatus, ClusterSpec, ClusterStatus, Health, ResourceRef};

/// The federation control planes flotilla knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HubKind {
    Karmada,
    OpenClusterManagement,
    KubeFed,
}

impl HubKind {
    pub fn as_str(self) -> &'static str {
        match self {
            HubKind::Karmada => "Karmada",
            HubKind::OpenClusterManagement => "Open Cluster Management",
            HubKind::KubeFed => "KubeFed",
        }
    }

    /// Why the console cannot edit overrides on this kind of hub, if it cannot.
    pub fn no_overrides(self) -> Option<&'static str> {
        match self {
            HubKind::OpenClusterManagement => Some(
                "Open Cluster Management has no override API: a ManifestWork is already per cluster (edit it in the cluster's namespace on the hub)",
            ),
            HubKind::Karmada | HubKind::KubeFed => None,
        }
    }

    /// Whether the hub stores the object it renders for each member (Karmada's Works, OCM's
    /// ManifestWorks); KubeFed renders in memory and keeps only a status.
    pub fn keeps_rendered_objects(self) -> bool {
        !matches!(self, HubKind::KubeFed)
    }

    /// Why `a` (reschedule on a hub) does nothing on this kind of hub, if it does not.
    pub fn no_reschedule(self) -> Option<&'static str> {
        match self {
            HubKind::OpenClusterManagement => Some(
                "Open Cluster Management's work agents apply each ManifestWork themselves and OCM re-decides Placements as clusters change: there is nothing to propagate or reschedule; edit a Placement (e) to move the ManifestWorks that follow it",
            ),
            HubKind::KubeFed => Some(
                "KubeFed's controller propagates each Federated object itself and has no reschedule: edit its placement (e) or overrides (o)",
            ),
            HubKind::Karmada => None,
        }
    }

    /// The API group whose presence identifies the hub.
    fn marker(self) -> &'static str {
        match self {
            HubKind::Karmada => "cluster.karmada.io",
            HubKind::OpenClusterManagement => "cluster.open-cluster-management.io",
            HubKind::KubeFed => "core.kubefed.io",
        }
    }
}

/// Which hub the cluster behind `client` is, from the API groups it serves; `None` when it
/// serves none of the known federation APIs.
pub async fn detect(client: &Client) -> Result<Option<HubKind>, String> {
    let groups = client
        .list_api_groups()
        .await
        .map_err(|err| short_error(&err))?;
    let served: Vec<&str> = groups.groups.iter().map(|g| g.name.as_str()).collect();
    Ok(kind_of(&served))
}

/// The hub kind the served API groups identify (Karmada first: its hub also serves
/// aggregated member APIs under other names).
pub fn kind_of(groups: &[&str]) -> Option<HubKind> {
    [
        HubKind::Karmada,
        HubKind::OpenClusterManagement,
        HubKind::KubeFed,
    ]
    .into_iter()
    .find(|kind| groups.contains(&kind.marker()))
}

/// A connected hub: the context it was named by, what kind of control plane it is, and a
/// client for it.
pub struct Hub {
    pub context: String,
    pub kind: HubKind,
    pub client: Client,
    pub kubeconfig: Kubeconfig,
}

/// Why a hub could not be used, with the exit code the command should end with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubError {
    pub code: u8,
    pub message: String,
}

impl HubError {
    fn input(message: String) -> Self {
        Self {
            code: exit::INPUT,
            message,
        }
    }
    fn unreachable(message: String) -> Self {
        Self {
            code: exit::PARTIAL,
            message,
        }
    }
}

impl std::fmt::Display for HubError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Connects to the hub behind kubeconfig context `context` and tells which kind it is.
pub async fn connect(
    kubeconfig_path: Option<&Path>,
    context: &str,
    timeouts: Timeouts,
) -> Result<Hub, HubError> {
    let kubeconfig =
        kubeconfig::load(kubeconfig_path).map_err(|err| HubError::input(err.to_string()))?;
    let client = kubeconfig::client_for(&kubeconfig, context, timeouts)
        .await
        .map_err(|reason| HubError::input(format!("--hub {context}: {reason}")))?;
    let kind = match detect(&client).await {
        Ok(Some(kind)) => kind,
        Ok(None) => {
            return Err(HubError::input(format!(
                "--hub {context} is not a federation hub: it serves none of the Karmada, Open Cluster Management or KubeFed APIs\n  hint: name the hub's context, or use --context GLOB for member clusters"
            )));
        }
        Err(reason) => {
            return Err(HubError::unreachable(format!(
                "--hub {context}: cannot reach the hub: {reason}"
            )));
        }
    };
    Ok(Hub {
        context: context.to_string(),
        kind,
        client,
        kubeconfig,
    })
}

impl Hub {
    /// The header's words for this hub: `hub CONTEXT · KIND`.
    pub fn label(&self) -> String {
        format!("hub {} · {}", self.context, self.kind.as_str())
    }

    /// The hub's member clusters in name order, with the health the hub reports for them.
    pub async fn clusters(&self) -> Result<Vec<(ClusterSpec, ClusterStatus)>, HubError> {
        let clusters = match self.kind {
            HubKind::Karmada => karmada::clusters(&self.client, &self.kubeconfig).await,
            HubKind::OpenClusterManagement => ocm::clusters(&self.client, &self.kubeconfig).await,
            HubKind::KubeFed => kubefed::clusters(&self.client, &self.kubeconfig).await,
        };
        clusters.map_err(|reason| self.failed(reason))
    }

    /// Everything the console shows of the hub at this moment.
    pub async fn read(&self) -> Result<HubView, HubError> {
        let view = match self.kind {
            HubKind::Karmada => karmada::read(&self.client, &self.kubeconfig).await,
            HubKind::OpenClusterManagement => ocm::read(&self.client, &self.kubeconfig).await,
            HubKind::KubeFed => kubefed::read(&self.client, &self.kubeconfig).await,
        };
        view.map_err(|reason| self.failed(reason))
    }

    /// The per-cluster objects the hub has rendered for its members (after overrides), and
    /// why the rest are not placed. Hubs that keep no per-cluster objects say so.
    pub async fn rendered(&self) -> Result<HubRender, HubError> {
        let rendered = match self.kind {
            HubKind::Karmada => karmada::rendered(&self.client, &self.kubeconfig).await,
            HubKind::OpenClusterManagement => ocm::rendered(&self.client, &self.kubeconfig).await,
            HubKind::KubeFed => {
                return Err(HubError::input(format!(
                    "--hub {}: KubeFed keeps no per-cluster objects on the hub (its controller renders them in memory)\n  hint: `flotilla render --fleet DIR` on the same Federated files gives them offline (checked against KubeFed v0.10.0)",
                    self.context
                )));
            }
        };
        rendered.map_err(|reason| self.failed(reason))
    }

    /// The hub kinds whose changes change the view: watched, so the console reads the hub
    /// again when one changes rather than on a timer.
    pub async fn watched_kinds(&self) -> Vec<kube::discovery::ApiResource> {
        match self.kind {
            HubKind::Karmada => karmada::watched_kinds(),
            HubKind::OpenClusterManagement => ocm::watched_kinds(),
            HubKind::KubeFed => kubefed::watched_kinds(&self.client).await,
        }
    }

    /// A client for a member: through its own kubeconfig context when the kubeconfig has one
    /// (`context`, else the member's name), otherwise through the hub's proxy to the member
    /// (Karmada's `clusters/NAME/proxy`) with the hub's credentials.
    pub async fn member_client(
        &self,
        member: &ClusterSpec,
        timeouts: Timeouts,
    ) -> Result<Client, String> {
        let context = if member.context.is_empty() {
            &member.name
        } else {
            &member.context
        };
        if self.kubeconfig.contexts.iter().any(|c| c.name == *context) {
            return kubeconfig::client_for(&self.kubeconfig, context, timeouts).await;
        }
        match self.kind {
            HubKind::Karmada => {
                let path = format!(
                    "/apis/cluster.karmada.io/v1alpha1/clusters/{}/proxy",
                    member.name
                );
                kubeconfig::proxied_client_for(&self.kubeconfig, &self.context, &path, timeouts)
                    .await
            }
            other => Err(format!(
                "no kubeconfig context for {} and {} hubs offer no proxy to their members",
                member.name,
                other.as_str()
            )),
        }
    }

    fn failed(&self, reason: String) -> HubError {
        HubError::unreachable(format!("--hub {}: {reason}", self.context))
    }
}

/// Everything the console shows of a hub at one moment: its members and one row per object
/// the hub delivers to them, each cell in the hub's own words.
#[derive(Debug, Clone)]
pub struct HubView {
    pub kind: HubKind,
    pub clusters: Vec<(ClusterSpec, ClusterStatus)>,
    pub rows: Vec<HubRow>,
}

/// One object the hub delivers, and what the hub says of it on each member.
#[derive(Debug, Clone, PartialEq)]
pub struct HubRow {
    /// The object as members see it (the Deployment, not the hub object that wraps it).
    pub target: ResourceRef,
    /// The hub object that carries it, for messages: `ResourceBinding shop/web-deployment`.
    pub source: String,
    /// That hub object, when the hub has one per row (actions such as reschedule act on it).
    pub carrier: Option<ResourceRef>,
    /// By cluster name; a cluster without a cell is not placed.
    pub cells: BTreeMap<String, (CellStatus, Option<String>)>,
    /// Why a cluster without a cell is not placed, in the hub's terms.
    pub not_placed: String,
    /// By cluster name: the object as the hub rendered it for that cluster (Karmada's Work
    /// manifest), where the hub keeps one.
    pub objects: BTreeMap<String, serde_json::Value>,
}

/// An object the hub rendered, without the labels and annotations the hub and flotilla add
/// for themselves, so it compares with the engine's render of the same intent.
pub fn delivered_form(object: &serde_json::Value) -> serde_json::Value {
    let mut out = object.clone();
    drop_marks(&mut out, |key, value| {
        key.contains("karmada.io") || is_flotilla_mark(key, value)
    });
    crate::engine::compare::diff::normalize(&out)
}

/// The string at `pointer` in `value`, empty when there is none.
pub(super) fn text(value: &serde_json::Value, pointer: &str) -> String {
    value
        .pointer(pointer)
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The `status.conditions` entry of type `kind`.
pub(super) fn condition<'a>(
    value: &'a serde_json::Value,
    kind: &str,
) -> Option<&'a serde_json::Value> {
    value
        .pointer("/status/conditions")
        .and_then(serde_json::Value::as_array)
        .and_then(|conditions| conditions.iter().find(|c| c["type"] == kind))
}

/// Every object of `resource` on the hub, in all namespaces, as JSON.
pub(super) async fn list_values(
    client: &Client,
    resource: &kube::discovery::ApiResource,
) -> Result<Vec<serde_json::Value>, String> {
    let api: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(client.clone(), resource);
    let list = api
        .list(&kube::api::ListParams::default())
        .await
        .map_err(|err| {
            format!(
                "listing {} on the hub: {}",
                resource.kind,
                short_error(&err)
            )
        })?;
    Ok(list
        .items
        .into_iter()
        .filter_map(|object| serde_json::to_value(object).ok())
        .collect())
}

/// Whether a label or annotation is one of flotilla's ownership marks.
pub fn is_flotilla_mark(key: &str, value: &serde_json::Value) -> bool {
    key.starts_with("flotilla.dev/")
        || (key == crate::engine::MANAGED_BY_LABEL && value == crate::engine::MANAGED_BY_VALUE)
}

/// Removes the labels and annotations `drop` picks from `object`'s metadata (and a map left
/// empty): the hubs' and flotilla's own marks, which no fleet file writes.
pub fn drop_marks(object: &mut serde_json::Value, drop: impl Fn(&str, &serde_json::Value) -> bool) {
    let Some(meta) = object
        .get_mut("metadata")
        .and_then(serde_json::Value::as_object_mut)
    else {
        return;
    };
    for map in ["labels", "annotations"] {
        if let Some(entries) = meta.get_mut(map).and_then(serde_json::Value::as_object_mut) {
            entries.retain(|key, value| !drop(key, value));
            if entries.is_empty() {
                meta.remove(map);
            }
        }
    }
}

impl HubView {
    /// One cell of the matrix: row `row` on cluster `column`, as design §4 names it. A placed
    /// cell on a member the hub cannot reach is Unreachable whatever the hub last recorded; a
    /// cell the reader marked NotPlaced (with a reason for that cluster) stays not placed.
    pub fn cell(&self, row: usize, column: usize) -> (CellStatus, Option<String>) {
        let (Some(row), Some((spec, status))) = (self.rows.get(row), self.clusters.get(column))
        else {
            return (CellStatus::NotPlaced("unknown".into()), None);
        };
        match row.cells.get(&spec.name) {
            None => (CellStatus::NotPlaced(row.not_placed.clone()), None),
            Some(cell @ (CellStatus::NotPlaced(_), _)) => cell.clone(),
            Some(_) if status.health == Health::Unreachable => {
                (CellStatus::Unreachable, Some(status.message.clone()))
            }
            Some(cell) => cell.clone(),
        }
    }

    /// The row showing `target`, if the hub delivers it.
    pub fn row_of(&self, target: &ResourceRef) -> Option<usize> {
        self.rows.iter().position(|row| row.target == *target)
    }
}

/// The per-cluster objects a hub stores, in `flotilla render`'s JSON shape (design §3).
#[derive(Debug, Clone, Default, Serialize)]
pub struct HubRender {
    pub items: Vec<RenderedObject>,
    pub unplaced: Vec<Unplaced>,
}

/// One object as the hub will write it to `cluster`.
#[derive(Debug, Clone, Serialize)]
pub struct RenderedObject {
    pub cluster: String,
    pub object: serde_json::Value,
}

/// A (cluster, object) pair the hub does not place, and the hub's reason.
#[derive(Debug, Clone, Serialize)]
pub struct Unplaced {
    pub cluster: String,
    pub resource: ResourceRef,
    pub reason: String,
}

impl HubView {
    /// Every (cluster, row) pair without a cell, with the row's reason.
    pub fn unplaced(&self) -> Vec<Unplaced> {
        let mut unplaced = Vec::new();
        for (spec, _) in &self.clusters {
            for row in &self.rows {
                if !row.cells.contains_key(&spec.name) {
                    unplaced.push(Unplaced {
                        cluster: spec.name.clone(),
                        resource: row.target.clone(),
                        reason: row.not_placed.clone(),
                    });
                }
            }
        }
        unplaced
    }
}

/// Rows in a stable order: by namespace, name, then kind of the object they show.
pub fn sort_rows(rows: &mut [HubRow]) {
    rows.sort_by(|a, b| {
        let key = |row: &HubRow| {
            (
                row.target.namespace.clone(),
                row.target.name.clone(),
                row.target.kind.clone(),
            )
        };
        key(a).cmp(&key(b))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hub_is_known_by_its_api_groups() {
        assert_eq!(
            kind_of(&["apps", "cluster.karmada.io", "work.karmada.io"]),
            Some(HubKind::Karmada)
        );
        assert_eq!(
            kind_of(&["cluster.open-cluster-management.io"]),
            Some(HubKind::OpenClusterManagement)
        );
        assert_eq!(kind_of(&["core.kubefed.io"]), Some(HubKind::KubeFed));
        assert_eq!(kind_of(&["apps", "batch"]), None);
    }
}
