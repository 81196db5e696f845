//! Hub mode: a federation control plane is the source of truth. [`detect`] tells which kind
//! of hub a context is from the API groups it serves; each kind has its own reader. Readers
//! here only read; they must not write to the hub or decide placement themselves.

pub mod karmada;
pub mod poll;

use kube::Client;

use super::kube::probe::short_error;

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
