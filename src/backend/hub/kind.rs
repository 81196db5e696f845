//! Which kind of federation control plane a hub is, told from the API groups it serves
//! ([`HubKind`] itself, and what each kind lets the console do, is the model's). It only asks
//! the API server for its groups; it must not read or write hub objects.

use kube::Client;

use crate::backend::hub::error::HubError;
use crate::backend::kube::probe::short_error;
use crate::model::HubKind;

/// Which hub the cluster behind `client` is, from the API groups it serves; `None` when it
/// serves none of the known federation APIs.
pub async fn detect(client: &Client) -> Result<Option<HubKind>, HubError> {
    let groups = client
        .list_api_groups()
        .await
        .map_err(|err| short_error(&err))?;
    let served: Vec<&str> = groups.groups.iter().map(|g| g.name.as_str()).collect();
    Ok(HubKind::of_groups(&served))
}

#[cfg(test)]
mod tests {
    use crate::model::HubKind;

    #[test]
    fn a_hub_is_known_by_its_api_groups() {
        assert_eq!(
            HubKind::of_groups(&["apps", "cluster.karmada.io", "work.karmada.io"]),
            Some(HubKind::Karmada)
        );
        assert_eq!(
            HubKind::of_groups(&["cluster.open-cluster-management.io"]),
            Some(HubKind::OpenClusterManagement)
        );
        assert_eq!(
            HubKind::of_groups(&["core.kubefed.io"]),
            Some(HubKind::KubeFed)
        );
        assert_eq!(HubKind::of_groups(&["apps", "batch"]), None);
    }
}
