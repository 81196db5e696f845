//! ClusterProfiles (SIG Multicluster's cluster-inventory-api, `multicluster.x-k8s.io/v1alpha1`)
//! read from a hub context as the fleet's inventory. Each profile becomes an inventory document
//! for the engine (which turns its properties into labels); what its cluster manager reports —
//! the `ControlPlaneHealthy` condition and the Kubernetes version — is kept beside it for the
//! health column, all in a [`ProfileInventory`] (the kube backend's, which uses it). A profile
//! with no kubeconfig context of its name is reached through one of its access providers'
//! `cluster` (server, CA, and the `client.authentication.k8s.io/exec` extension handed to the
//! plugin), with the exec plugin that the consumer's provider file (upstream's
//! `pkg/credentials` format, `{"providers":[{"name","execConfig"}]}`) names for that provider,
//! chosen as upstream's `getClusterAccessorFromClusterProfile` does. Without one the member is
//! Unreachable and its message says which providers it offers and how to give flotilla
//! credentials. It only reads the hub; it must not write a kubeconfig file, and never shows or
//! logs a credential.

use std::collections::BTreeMap;
use std::path::Path;

use kube::api::{Api, DynamicObject, ListParams};
use kube::config::{Cluster, ExecConfig, ExecInteractiveMode, Kubeconfig};
use kube::discovery::ApiResource;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::backend::hub::HubError;
use crate::backend::kube::kubeconfig::{self, ClientError, Timeouts};
use crate::backend::kube::profile_inventory::{CONTROL_PLANE_HEALTHY, ProfileInventory, Report};
use crate::engine::{CONTEXT_ANNOTATION, SourceFile};
use crate::safe_text;

/// The accepted spelling of `--inventory`.
pub const INVENTORY_FORM: &str = "clusterprofiles:CONTEXT";

/// The consumer's access-provider configuration: which exec plugin gives credentials for the
/// access providers of that name.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ProviderFile {
    #[serde(default)]
    pub providers: Vec<Provider>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Provider {
    pub name: String,
    #[serde(rename = "execConfig")]
    pub exec_config: Option<ExecConfig>,
}

impl ProviderFile {
    /// Reads a provider file; an unreadable or malformed one is the operator's to fix.
    pub fn read(path: &Path) -> Result<ProviderFile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
        let file: ProviderFile = serde_json::from_str(&text).map_err(|err| {
            format!(
                "{}:{}: {}\n  hint: write {{\"providers\": [{{\"name\": \"<access provider>\", \"execConfig\": {{\"apiVersion\": \"client.authentication.k8s.io/v1\", \"command\": \"<plugin>\", \"provideClusterInfo\": true}}}}]}}",
                path.display(),
                err.line(),
                safe_text::redact(&err.to_string())
            )
        })?;
        for (i, provider) in file.providers.iter().enumerate() {
            let command = provider
                .exec_config
                .as_ref()
                .and_then(|exec| exec.command.as_deref());
            if provider.name.is_empty() || command.is_none_or(str::is_empty) {
                return Err(format!(
                    "{}: providers[{i}] needs a name and an execConfig with a command",
                    path.display()
                ));
            }
        }
        Ok(file)
    }
}

fn cluster_profiles() -> ApiResource {
    ApiResource {
        group: "multicluster.x-k8s.io".into(),
        version: "v1alpha1".into(),
        api_version: "multicluster.x-k8s.io/v1alpha1".into(),
        kind: "ClusterProfile".into(),
        plural: "clusterprofiles".into(),
    }
}

/// Lists every ClusterProfile the hub context `hub` serves, in every namespace.
pub async fn read(
    kubeconfig: &Kubeconfig,
    hub: &str,
    providers: &ProviderFile,
    timeouts: Timeouts,
) -> Result<ProfileInventory, HubError> {
    let client = kubeconfig::client_for(kubeconfig, hub, timeouts)
        .await
        .map_err(|reason| {
            HubError::Input(format!("--inventory clusterprofiles:{hub}: {reason}"))
        })?;
    let api: Api<DynamicObject> = Api::all_with(client, &cluster_profiles());
    let list = api.list(&ListParams::default()).await.map_err(|err| match err {
        kube::Error::Api(status) if status.code == 404 => HubError::Input(format!(
            "--inventory clusterprofiles:{hub}: the context serves no ClusterProfiles (multicluster.x-k8s.io/v1alpha1)\n  hint: install SIG Multicluster's cluster-inventory-api CRD there, or name the context of the cluster manager that writes them"
        )),
        kube::Error::Api(status) if matches!(status.code, 401 | 403) => HubError::Input(format!(
            "--inventory clusterprofiles:{hub}: listing ClusterProfiles was refused ({}): {}",
            status.code,
            safe_text::redact(&status.message)
        )),
        other => HubError::Unreachable(format!(
            "--inventory clusterprofiles:{hub}: {}",
            safe_text::redact(&other.to_string())
        )),
    })?;
    let items = list
        .items
        .into_iter()
        .filter_map(|object| serde_json::to_value(object).ok())
        .collect();
    let contexts = kubeconfig::context_names(kubeconfig);
    Ok(from_profiles(hub, items, &contexts, providers))
}

/// The inventory of `items` (ClusterProfile objects): `contexts` are the kubeconfig's context
/// names, which win over an access provider.
pub fn from_profiles(
    hub: &str,
    mut items: Vec<Value>,
    contexts: &[String],
    providers: &ProviderFile,
) -> ProfileInventory {
    let key = |item: &Value| {
        (
            item.pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            item.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        )
    };
    items.sort_by_key(key);
    let mut out = ProfileInventory::default();
    out.hub = hub.to_string();
    for item in items {
        let (namespace, name) = key(&item);
        let profile = format!("{namespace}/{name}");
        let mut document = json!({
            "apiVersion": "multicluster.x-k8s.io/v1alpha1",
            "kind": "ClusterProfile",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": item.pointer("/metadata/labels").cloned().unwrap_or(json!({})),
            },
            "spec": item.get("spec").cloned().unwrap_or(json!({})),
            "status": {
                "properties": item.pointer("/status/properties").cloned().unwrap_or(json!([])),
            },
        });
        let access = if contexts.contains(&name) {
            Ok(())
        } else {
            match way_in(&item, &name, &profile, providers) {
                Ok((cluster, exec)) => {
                    let context = format!("clusterprofile/{profile}");
                    out.add_context(&context, cluster, exec);
                    document["metadata"]["annotations"] = json!({ CONTEXT_ANNOTATION: context });
                    Ok(())
                }
                Err(reason) => Err(reason),
            }
        };
        let healthy = item
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(CONTROL_PLANE_HEALTHY))
            .map(|c| {
                let text = |field: &str| {
                    c.get(field)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                (text("status"), text("reason"), text("message"))
            });
        let version = item
            .pointer("/status/version/kubernetes")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_string);
        out.files.push(SourceFile {
            path: format!("clusterprofiles:{hub}/{profile}"),
            text: serde_json::to_string_pretty(&document).unwrap_or_default(),
        });
        out.reports.insert(
            name,
            Report {
                profile,
                healthy,
                version,
                access,
            },
        );
    }
    out
}

/// The cluster and exec plugin that reach `name` through its profile's access providers: the
/// first provider of the consumer's file the profile offers (the deprecated
/// `credentialProviders` first, `accessProviders` overriding a name they share).
fn way_in(
    item: &Value,
    name: &str,
    profile: &str,
    providers: &ProviderFile,
) -> Result<(Cluster, ExecConfig), ClientError> {
    let mut offered: BTreeMap<String, Value> = BTreeMap::new();
    let mut offered_names: Vec<String> = Vec::new();
    for field in ["credentialProviders", "accessProviders"] {
        for provider in item
            .pointer(&format!("/status/{field}"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(provider_name) = provider.get("name").and_then(Value::as_str) else {
                continue;
            };
            if !offered_names.iter().any(|n| n == provider_name) {
                offered_names.push(provider_name.to_string());
            }
            offered.insert(
                provider_name.to_string(),
                provider.get("cluster").cloned().unwrap_or(json!({})),
            );
        }
    }
    if offered.is_empty() {
        return Err(ClientError::NoAccess(format!(
            "no access: no kubeconfig context named {name:?}, and ClusterProfile {profile} lists no access providers\n  hint: add a context named {name} to the kubeconfig"
        )));
    }
    let Some((provider, cluster)) = providers.providers.iter().find_map(|provider| {
        offered
            .get(&provider.name)
            .map(|cluster| (provider, cluster.clone()))
    }) else {
        let list = offered_names.join(", ");
        return Err(ClientError::NoAccess(format!(
            "no access: no kubeconfig context named {name:?}, and no credentials for the access provider(s) {list} of ClusterProfile {profile}\n  hint: pass --clusterprofile-provider-file FILE with {{\"providers\": [{{\"name\": \"{first}\", \"execConfig\": {{...}}}}]}} (the cluster-inventory-api consumer format), or add a context named {name}",
            first = offered_names.first().map_or("", String::as_str),
        )));
    };
    let mut cluster: Cluster = serde_json::from_value(cluster).map_err(|err| {
        ClientError::Failed(format!(
            "ClusterProfile {profile}: access provider {} has a malformed cluster: {}",
            provider.name,
            safe_text::redact(&err.to_string())
        ))
    })?;
    // A path on the hub's side means nothing here.
    cluster.certificate_authority = None;
    if cluster.server.as_deref().is_none_or(str::is_empty) {
        return Err(ClientError::Failed(format!(
            "ClusterProfile {profile}: access provider {} names no server\n  hint: the cluster manager must fill status.accessProviders[].cluster.server",
            provider.name
        )));
    }
    let mut exec = provider.exec_config.clone().unwrap_or_default();
    exec.interactive_mode = Some(ExecInteractiveMode::Never);
    Ok((cluster, exec))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::{ClusterStatus, Health};

    fn profile(name: &str, healthy: &str, providers: Value) -> Value {
        json!({
            "apiVersion": "multicluster.x-k8s.io/v1alpha1",
            "kind": "ClusterProfile",
            "metadata": {"name": name, "namespace": "fleet", "labels": {"env": "prod"}},
            "spec": {"clusterManager": {"name": "ocm"}},
            "status": {
                "conditions": [{"type": "ControlPlaneHealthy", "status": healthy, "reason": "Probe", "message": "apiserver said so"}],
                "version": {"kubernetes": "v1.36.3"},
                "properties": [{"name": "region", "value": "eu"}],
                "accessProviders": providers,
            }
        })
    }

    fn providers(names: &[&str]) -> ProviderFile {
        ProviderFile {
            providers: names
                .iter()
                .map(|name| Provider {
                    name: (*name).to_string(),
                    exec_config: Some(ExecConfig {
                        command: Some(format!("/bin/{name}")),
                        provide_cluster_info: true,
                        ..ExecConfig::default()
                    }),
                })
                .collect(),
        }
    }

    fn probed(health: Health) -> ClusterStatus {
        ClusterStatus {
            health,
            version: None,
            latency_ms: Some(3),
            message: String::new(),
        }
    }

    /// Follows cluster-inventory-api `getClusterAccessorFromClusterProfile`: the consumer's
    /// providers in its order, the first the profile offers wins.
    #[test]
    fn the_first_provider_of_the_consumers_file_the_profile_offers_reaches_it() {
        let offered = json!([
            {"name": "token", "cluster": {"server": "https://a:1"}},
            {"name": "secretreader", "cluster": {
                "server": "https://b:2", "certificate-authority-data": "Q0E=",
                "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": {"clusterName": "m1"}}]}},
        ]);
        let inventory = from_profiles(
            "hub",
            vec![profile("m1", "True", offered)],
            &["hub".to_string()],
            &providers(&["secretreader", "token"]),
        );
        let mut kubeconfig = Kubeconfig::default();
        inventory.extend_kubeconfig(&mut kubeconfig);
        let cluster = kubeconfig.clusters[0].cluster.clone().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://b:2"));
        assert_eq!(
            cluster.extensions.unwrap()[0].extension["clusterName"],
            "m1"
        );
        let exec = kubeconfig.auth_infos[0]
            .auth_info
            .clone()
            .unwrap()
            .exec
            .unwrap();
        assert_eq!(exec.command.as_deref(), Some("/bin/secretreader"));
        assert!(matches!(
            exec.interactive_mode,
            Some(ExecInteractiveMode::Never)
        ));
        assert!(inventory.files[0].text.contains("clusterprofile/fleet/m1"));
        assert_eq!(inventory.reports["m1"].access, Ok(()));
    }

    #[test]
    fn a_context_of_the_profiles_name_wins_and_needs_no_provider() {
        let inventory = from_profiles(
            "hub",
            vec![profile("m1", "True", json!([]))],
            &["m1".to_string()],
            &ProviderFile::default(),
        );
        let mut kubeconfig = Kubeconfig::default();
        inventory.extend_kubeconfig(&mut kubeconfig);
        assert!(kubeconfig.contexts.is_empty());
        assert!(!inventory.files[0].text.contains(CONTEXT_ANNOTATION));
        let status = inventory.status("m1", probed(Health::Ready));
        assert_eq!(status.health, Health::Ready);
        assert_eq!(status.version.as_deref(), Some("v1.36.3"));
    }

    #[test]
    fn without_credentials_the_member_has_no_access_naming_the_provider_and_the_fix() {
        let offered = json!([{"name": "secretreader", "cluster": {"server": "https://b:2"}}]);
        let inventory = from_profiles(
            "hub",
            vec![profile("m1", "True", offered)],
            &[],
            &providers(&["token"]),
        );
        let status = inventory.status("m1", probed(Health::Unknown));
        assert_eq!(status.health, Health::NoAccess);
        assert!(
            status.message.contains("secretreader")
                && status.message.contains("fleet/m1")
                && status.message.contains("--clusterprofile-provider-file"),
            "{}",
            status.message
        );
        let none = from_profiles(
            "hub",
            vec![profile("m2", "True", json!([]))],
            &[],
            &providers(&[]),
        );
        assert!(
            none.status("m2", probed(Health::Unknown))
                .message
                .contains("lists no access providers")
        );
    }

    #[test]
    fn an_unhealthy_control_plane_is_not_ready_with_the_managers_reason() {
        let inventory = from_profiles(
            "hub",
            vec![profile("m1", "False", json!([]))],
            &["m1".to_string()],
            &ProviderFile::default(),
        );
        let status = inventory.status("m1", probed(Health::Ready));
        assert_eq!(status.health, Health::NotReady);
        assert!(
            status
                .message
                .contains("ClusterProfile fleet/m1 reports ControlPlaneHealthy=False (Probe): apiserver said so"),
            "{}",
            status.message
        );
        // An unanswering member keeps the probe's verdict.
        assert_eq!(
            inventory.status("m1", probed(Health::Unreachable)).health,
            Health::Unreachable
        );
    }

    #[test]
    fn a_provider_file_without_a_command_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.json");
        std::fs::write(&path, r#"{"providers": [{"name": "x", "execConfig": {}}]}"#).unwrap();
        assert!(
            ProviderFile::read(&path)
                .unwrap_err()
                .contains("providers[0]")
        );
        std::fs::write(&path, "{\n\"providers\": 3}").unwrap();
        assert!(ProviderFile::read(&path).unwrap_err().contains("p.json:2"));
    }
}
