//! Which kind of federation control plane a hub is: Karmada, Open Cluster Management or
//! KubeFed, told from the API groups it serves, what each kind lets the console do, and what
//! a cluster leaving a placement loses under it. It
//! only asks the API server for its groups; it must not read or write hub objects.

use kube::Client;

use crate::backend::kube::probe::short_error;

/// The federation control planes flotilla knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HubKind {
    Karmada,
    OpenClusterManagement,
    KubeFed,
}

/// What a cluster leaving a placement loses, in the one wording every surface uses: with no
/// hub flotilla propagates and deletes nothing until `flotilla apply --prune`; on a hub, its
/// controllers delete the objects they delivered there.
pub fn leaving(hub: Option<HubKind>) -> String {
    match hub {
        None => "its objects stay on it until `flotilla apply --prune`".to_string(),
        Some(HubKind::OpenClusterManagement) => {
            "it leaves the decision; what the Placement's consumers (ManifestWorkReplicaSets) delivered there is removed".to_string()
        }
        Some(kind) => format!("{} deletes its objects there", kind.as_str()),
    }
}

impl HubKind {
    /// The kind `as_str` names.
    pub fn named(name: &str) -> Option<HubKind> {
        [
            HubKind::Karmada,
            HubKind::OpenClusterManagement,
            HubKind::KubeFed,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == name)
    }

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

    /// Whether the hub reports how each member's workload is doing (Karmada's aggregated
    /// status, OCM's status feedback); KubeFed reports propagation only.
    pub fn reports_health(self) -> bool {
        !matches!(self, HubKind::KubeFed)
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
