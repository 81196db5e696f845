//! [`ClusterApi`] for a real cluster through kube-rs: dynamic objects, server-side apply with
//! field manager `flotilla` (`dryRun=All` for plans, `force` only when asked), and kube errors
//! mapped to [`ApiError`]. Kinds resolve to API resources by kube's plural rule first, and by
//! discovery only when the server answers that the resource type does not exist, so the usual
//! object costs one round trip. A read-only instance has no code path that sends a mutating
//! request. It must not log credentials or write a kubeconfig.

use std::collections::HashMap;
use std::sync::Mutex;

use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Discovery};
use kube::{Client, Error};
use serde_json::Value;

use super::probe::short_error;
use crate::backend::fanout::cluster_api::{ApiError, ApplyMode, ClusterApi, conflict_managers};
use crate::backend::fanout::object::{FIELD_MANAGER, resource_of};
use crate::engine::{MANAGED_BY_LABEL, MANAGED_BY_VALUE};
use crate::model::ResourceRef;

/// One cluster reached through kube-rs.
pub struct KubeCluster {
    client: Client,
    readonly: bool,
    resources: Mutex<HashMap<(String, String), ApiResource>>,
}

impl KubeCluster {
    /// With `readonly`, apply (dry-run included, as it is a PATCH) and delete are refused
    /// before anything is sent.
    pub fn new(client: Client, readonly: bool) -> KubeCluster {
        KubeCluster {
            client,
            readonly,
            resources: Mutex::new(HashMap::new()),
        }
    }

    fn gvk(api_version: &str, kind: &str) -> GroupVersionKind {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        GroupVersionKind::gvk(group, version, kind)
    }

    /// The API resource for a kind: from the cache, else kube's plural guess.
    fn resource(&self, api_version: &str, kind: &str) -> ApiResource {
        let key = (api_version.to_string(), kind.to_string());
        if let Ok(cache) = self.resources.lock()
            && let Some(found) = cache.get(&key)
        {
            return found.clone();
        }
        ApiResource::from_gvk(&Self::gvk(api_version, kind))
    }

    /// After a "no such resource type" answer: asks discovery. `Ok(true)` when discovery
    /// found a different resource for the kind (retry), `Err(NotServed)` when it is not served.
    async fn rediscover(&self, api_version: &str, kind: &str) -> Result<bool, ApiError> {
        let guessed = self.resource(api_version, kind);
        let gvk = Self::gvk(api_version, kind);
        match kube::discovery::pinned_kind(&self.client, &gvk).await {
            Ok((found, _)) => {
                let differs = found.plural != guessed.plural;
                if let Ok(mut cache) = self.resources.lock() {
                    cache.insert((api_version.to_string(), kind.to_string()), found);
                }
                Ok(differs)
            }
            Err(Error::Api(status)) if status.code == 404 => {
                Err(ApiError::NotServed(format!("{api_version} {kind}")))
            }
            Err(Error::Discovery(_)) => Err(ApiError::NotServed(format!("{api_version} {kind}"))),
            Err(err) => Err(map_error(err)),
        }
    }

    fn api(&self, resource: &ResourceRef) -> Api<DynamicObject> {
        let ar = self.resource(&resource.api_version, &resource.kind);
        match &resource.namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        }
    }

    /// Runs `call` once, and again after discovery when the resource type was not found.
    async fn with_resolution<T, F, Fut>(
        &self,
        resource: &ResourceRef,
        call: F,
    ) -> Result<T, ApiError>
    where
        F: Fn(Api<DynamicObject>) -> Fut,
        Fut: std::future::Future<Output = Result<T, Error>>,
    {
        match call(self.api(resource)).await {
            Err(Error::Api(status)) if status.code == 404 && is_type_missing(&status) => {
                if self
                    .rediscover(&resource.api_version, &resource.kind)
                    .await?
                {
                    call(self.api(resource)).await.map_err(map_error)
                } else {
                    Err(ApiError::NotServed(format!(
                        "{} {}",
                        resource.api_version, resource.kind
                    )))
                }
            }
            other => other.map_err(map_error),
        }
    }
}

/// A 404 about the resource type itself (no details naming an object).
fn is_type_missing(status: &kube::core::Status) -> bool {
    status.details.as_ref().is_none_or(|d| d.name.is_empty())
}

/// Maps a kube-rs error to the cluster's answer.
pub fn map_error(err: Error) -> ApiError {
    match err {
        Error::Api(status) => {
            let message = status.message.clone();
            match status.code {
                401 => ApiError::Unauthorized(message),
                403 => ApiError::Forbidden(message),
                404 => ApiError::NotFound(message),
                409 if message.contains("conflict") => ApiError::Conflict {
                    managers: conflict_managers(&message),
                    message,
                },
                422 => ApiError::Invalid {
                    immutable: message.contains("immutable"),
                    message,
                },
                429 | 500..=599 => ApiError::Retryable(format!("{} {}", status.code, message)),
                code => ApiError::Other(format!("{code} {message}")),
            }
        }
        other => ApiError::Unreachable(short_error(&other)),
    }
}

impl ClusterApi for KubeCluster {
    async fn discover(&self) -> Result<Vec<(String, String)>, ApiError> {
        let discovery = Discovery::new(self.client.clone())
            .run_aggregated()
            .await
            .map_err(map_error)?;
        let mut out = Vec::new();
        for group in discovery.groups() {
            for version in group.versions() {
                for (ar, _) in group.versioned_resources(version) {
                    out.push((ar.api_version.clone(), ar.kind.clone()));
                }
            }
        }
        Ok(out)
    }

    async fn get(&self, resource: &ResourceRef) -> Result<Option<Value>, ApiError> {
        let name = resource.name.clone();
        let found = self
            .with_resolution(resource, |api| {
                let name = name.clone();
                async move {
                    match api.get(&name).await {
                        Ok(object) => Ok(Some(object)),
                        Err(Error::Api(status))
                            if status.code == 404 && !is_type_missing(&status) =>
                        {
                            Ok(None)
                        }
                        Err(err) => Err(err),
                    }
                }
            })
            .await?;
        found
            .map(|object| serde_json::to_value(object).map_err(|e| ApiError::Other(e.to_string())))
            .transpose()
    }

    async fn apply(&self, object: &Value, mode: ApplyMode) -> Result<Value, ApiError> {
        if self.readonly {
            return Err(ApiError::Readonly);
        }
        let resource = resource_of(object);
        let mut params = PatchParams::apply(FIELD_MANAGER);
        if mode.dry_run {
            params = params.dry_run();
        }
        if mode.force {
            params = params.force();
        }
        let name = resource.name.clone();
        let params = &params;
        let applied = self
            .with_resolution(&resource, |api| {
                let name = name.clone();
                async move { api.patch(&name, params, &Patch::Apply(object)).await }
            })
            .await?;
        serde_json::to_value(applied).map_err(|e| ApiError::Other(e.to_string()))
    }

    async fn delete(&self, resource: &ResourceRef) -> Result<(), ApiError> {
        if self.readonly {
            return Err(ApiError::Readonly);
        }
        let name = resource.name.clone();
        self.with_resolution(resource, |api| {
            let name = name.clone();
            async move {
                match api.delete(&name, &DeleteParams::background()).await {
                    Ok(_) => Ok(()),
                    Err(Error::Api(status)) if status.code == 404 && !is_type_missing(&status) => {
                        Ok(())
                    }
                    Err(err) => Err(err),
                }
            }
        })
        .await
    }

    async fn list_managed(&self, api_version: &str, kind: &str) -> Result<Vec<Value>, ApiError> {
        let probe = ResourceRef {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            namespace: None,
            name: String::new(),
        };
        let selector = format!("{MANAGED_BY_LABEL}={MANAGED_BY_VALUE}");
        let list = self
            .with_resolution(&probe, |api| {
                let params = ListParams::default().labels(&selector);
                async move { api.list(&params).await }
            })
            .await?;
        list.items
            .into_iter()
            .map(|object| {
                let mut value =
                    serde_json::to_value(object).map_err(|e| ApiError::Other(e.to_string()))?;
                // Lists omit apiVersion/kind on items.
                if let Some(map) = value.as_object_mut() {
                    map.insert("apiVersion".into(), Value::String(api_version.to_string()));
                    map.insert("kind".into(), Value::String(kind.to_string()));
                }
                Ok(value)
            })
            .collect()
    }
}
