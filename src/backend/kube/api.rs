//! [`ClusterApi`] for a real cluster through kube-rs: dynamic objects, server-side apply with
//! field manager `flotilla` (`dryRun=All` for plans, `force` only when asked), and kube errors
//! mapped to [`ApiError`]. Kinds resolve to API resources by kube's plural rule first, and by
//! discovery only when the server answers that the resource type does not exist, so the usual
//! object costs one round trip. A read-only instance has no code path that sends a mutating
//! request. It must not log credentials or write a kubeconfig.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::sync::Mutex;
use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Discovery};
use kube::{Client, Error};
use serde_json::Value;

use super::probe::short_error;
use super::retry_after::RetryAfter;
use crate::backend::fanout::cluster_api::{
    ApiError, ApplyMode, ClusterApi, ListQuery, conflict_managers,
};
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

    /// The cluster's client, for the subresources outside [`ClusterApi`] (pod logs,
    /// `pods/exec`).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Whether this instance refuses every mutating request.
    pub fn is_readonly(&self) -> bool {
        self.readonly
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
                429 | 500 | 502..=599 => ApiError::Retryable {
                    status: Some(status.code),
                    message: format!("{} {}", status.code, message),
                    retry_after: retry_after(&status),
                },
                code => ApiError::Other(format!("{code} {message}")),
            }
        }
        Error::Service(err) if err.is::<RetryAfter>() => match err.downcast::<RetryAfter>() {
            Ok(answer) => ApiError::Retryable {
                status: Some(answer.code),
                message: answer.to_string(),
                retry_after: Some(answer.wait),
            },
            Err(err) => ApiError::Unreachable(short_error(&*err)),
        },
        other if is_transient(&other) => ApiError::Retryable {
            status: None,
            message: short_error(&other),
            retry_after: None,
        },
        other => ApiError::Unreachable(short_error(&other)),
    }
}

/// The wait a 429 or 503 Status asks for (`details.retryAfterSeconds`), if any.
fn retry_after(status: &kube::core::Status) -> Option<Duration> {
    if !matches!(status.code, 429 | 503) {
        return None;
    }
    status
        .details
        .as_ref()
        .map(|details| details.retry_after_seconds)
        .filter(|&secs| secs > 0)
        .map(|secs| Duration::from_secs(u64::from(secs)))
}

/// A connection that broke or went quiet (reset, aborted, broken pipe, cut off, timed out):
/// worth another attempt, where a refused connection or a TLS failure is not.
fn is_transient(err: &Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::BrokenPipe
                    | ErrorKind::UnexpectedEof
                    | ErrorKind::TimedOut
            );
        }
        if cause
            .to_string()
            .contains("connection closed before message completed")
        {
            return true;
        }
        source = cause.source();
    }
    false
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

    async fn list(&self, query: &ListQuery) -> Result<Vec<Value>, ApiError> {
        let scope = ResourceRef {
            api_version: query.api_version.clone(),
            kind: query.kind.clone(),
            namespace: Some(query.namespace.clone()),
            name: String::new(),
        };
        let list = self
            .with_resolution(&scope, |api| {
                let mut params = ListParams::default().limit(LIST_LIMIT);
                if !query.labels.is_empty() {
                    params = params.labels(&query.labels);
                }
                if !query.fields.is_empty() {
                    params = params.fields(&query.fields);
                }
                async move { api.list(&params).await }
            })
            .await?;
        list.items
            .into_iter()
            .map(|object| serde_json::to_value(object).map_err(|e| ApiError::Other(e.to_string())))
            .collect()
    }
}

/// The most objects one [`ClusterApi::list`] reads (one page): the object view wants the recent
/// ones, not a namespace's history.
const LIST_LIMIT: u32 = 500;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// An answer as the API server sends it: `Retry-After` also in the Status details.
    fn answer(code: u16, retry_after_seconds: Option<u32>) -> Error {
        let mut status = serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "busy", "reason": "TooManyRequests", "code": code,
        });
        if let Some(secs) = retry_after_seconds {
            status["details"] = serde_json::json!({ "retryAfterSeconds": secs });
        }
        let status: kube::core::Status = serde_json::from_value(status).unwrap();
        Error::Api(status.boxed())
    }

    #[test]
    fn throttling_and_server_errors_are_retryable_with_the_wait_asked() {
        let ApiError::Retryable {
            status,
            retry_after,
            ..
        } = map_error(answer(429, Some(3)))
        else {
            panic!("429 must be retryable");
        };
        assert_eq!(status, Some(429));
        assert_eq!(retry_after, Some(Duration::from_secs(3)));
        for code in [500, 502, 503, 504] {
            assert!(
                matches!(map_error(answer(code, None)), ApiError::Retryable { .. }),
                "{code}"
            );
        }
        // A 500's retryAfterSeconds is not a Retry-After the policy honours.
        assert!(matches!(
            map_error(answer(500, Some(9))),
            ApiError::Retryable {
                retry_after: None,
                ..
            }
        ));
    }

    #[test]
    fn client_errors_and_501_are_not_retryable() {
        assert!(matches!(map_error(answer(501, None)), ApiError::Other(_)));
        assert!(matches!(map_error(answer(400, None)), ApiError::Other(_)));
        assert!(matches!(
            map_error(answer(403, None)),
            ApiError::Forbidden(_)
        ));
        assert!(matches!(
            map_error(answer(404, None)),
            ApiError::NotFound(_)
        ));
    }

    #[test]
    fn a_kept_retry_after_header_is_the_wait() {
        let kept = RetryAfter {
            code: 503,
            wait: Duration::from_secs(12),
            message: "upstream busy".into(),
        };
        let mapped = map_error(Error::Service(Box::new(kept)));
        assert_eq!(
            mapped,
            ApiError::Retryable {
                status: Some(503),
                message: "503 upstream busy".into(),
                retry_after: Some(Duration::from_secs(12)),
            }
        );
    }

    #[test]
    fn a_reset_connection_is_retryable_and_a_refused_one_is_not() {
        let reset = Error::Service(Box::new(std::io::Error::from(ErrorKind::ConnectionReset)));
        assert!(matches!(
            map_error(reset),
            ApiError::Retryable { status: None, .. }
        ));
        let refused = Error::Service(Box::new(std::io::Error::from(ErrorKind::ConnectionRefused)));
        assert!(matches!(map_error(refused), ApiError::Unreachable(_)));
    }
}
