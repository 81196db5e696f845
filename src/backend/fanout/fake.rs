//! An in-memory [`ClusterApi`] with injected latency, for unit tests and the fan-out
//! benchmark: a map of objects, the kinds it serves, and switches for an unreachable or
//! forbidden cluster and for fields owned by another manager. Every request sleeps one round
//! trip. It must not touch the network or real clusters.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::cluster_api::{ApiError, ApplyMode, ClusterApi, ListQuery};
use super::object::{FIELD_MANAGER, resource_of, selected_by};
use crate::engine::MANAGED_BY_LABEL;
use crate::model::ResourceRef;

/// A simulated cluster.
#[derive(Debug, Default)]
pub struct FakeCluster {
    /// One round trip, slept by every request.
    pub latency: Duration,
    /// (apiVersion, kind) pairs served; an empty set serves everything.
    pub served: BTreeSet<(String, String)>,
    /// Every request fails as unreachable.
    pub unreachable: bool,
    /// Every write is refused with 403.
    pub forbidden: bool,
    /// Objects another manager owns fields of: applying them without force conflicts.
    pub foreign: Mutex<BTreeMap<ResourceRef, String>>,
    pub objects: Mutex<BTreeMap<ResourceRef, Value>>,
    /// Requests received (all kinds).
    pub requests: AtomicU64,
    /// Last resourceVersion handed out.
    pub revision: AtomicU64,
}

impl FakeCluster {
    pub fn new(latency: Duration) -> FakeCluster {
        FakeCluster {
            latency,
            ..FakeCluster::default()
        }
    }

    async fn round_trip(&self) -> Result<(), ApiError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        if !self.latency.is_zero() {
            tokio::time::sleep(self.latency).await;
        }
        if self.unreachable {
            return Err(ApiError::Unreachable("connection refused".into()));
        }
        Ok(())
    }

    fn serves(&self, api_version: &str, kind: &str) -> bool {
        self.served.is_empty()
            || self
                .served
                .contains(&(api_version.to_string(), kind.to_string()))
    }

    fn check_served(&self, resource: &ResourceRef) -> Result<(), ApiError> {
        if self.serves(&resource.api_version, &resource.kind) {
            Ok(())
        } else {
            Err(ApiError::NotServed(format!(
                "{} {}",
                resource.api_version, resource.kind
            )))
        }
    }

    fn lock_objects(&self) -> std::sync::MutexGuard<'_, BTreeMap<ResourceRef, Value>> {
        self.objects
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl ClusterApi for FakeCluster {
    async fn discover(&self) -> Result<Vec<(String, String)>, ApiError> {
        self.round_trip().await?;
        Ok(self.served.iter().cloned().collect())
    }

    async fn get(&self, resource: &ResourceRef) -> Result<Option<Value>, ApiError> {
        self.round_trip().await?;
        self.check_served(resource)?;
        Ok(self.lock_objects().get(resource).cloned())
    }

    async fn apply(&self, object: &Value, mode: ApplyMode) -> Result<Value, ApiError> {
        self.round_trip().await?;
        let resource = resource_of(object);
        self.check_served(&resource)?;
        if self.forbidden {
            return Err(ApiError::Forbidden(format!(
                "cannot patch {}",
                resource.display_key()
            )));
        }
        if !mode.force
            && let Some(manager) = self
                .foreign
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get(&resource)
        {
            return Err(ApiError::Conflict {
                managers: vec![manager.clone()],
                message: "fields owned by another manager".into(),
            });
        }
        let mut objects = self.lock_objects();
        let mut stored = object.clone();
        // As the API server does: a Secret's stringData is stored as data, never returned.
        crate::engine::compare::secrets::fold_string_data(&mut stored);
        let previous = objects.get(&resource);
        let unchanged = previous.is_some_and(|p| crate::engine::compare::diff::same(p, &stored));
        let version = match (previous, unchanged) {
            (Some(p), true) => p
                .pointer("/metadata/resourceVersion")
                .cloned()
                .unwrap_or(Value::Null),
            _ => json!((self.revision.fetch_add(1, Ordering::Relaxed) + 1).to_string()),
        };
        if let Some(meta) = stored.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), version);
            meta.insert(
                "managedFields".into(),
                json!([{"manager": FIELD_MANAGER, "operation": "Apply"}]),
            );
        }
        if resource.kind == "CustomResourceDefinition"
            && let Some(map) = stored.as_object_mut()
        {
            // A real API server establishes a CRD moments after it is created.
            map.insert(
                "status".into(),
                json!({"conditions": [{"type": "Established", "status": "True"}]}),
            );
        }
        if !mode.dry_run {
            objects.insert(resource, stored.clone());
            if mode.force {
                self.foreign
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .remove(&resource_of(object));
            }
        }
        Ok(stored)
    }

    async fn delete(&self, resource: &ResourceRef) -> Result<(), ApiError> {
        self.round_trip().await?;
        if self.forbidden {
            return Err(ApiError::Forbidden("cannot delete".into()));
        }
        self.lock_objects().remove(resource);
        Ok(())
    }

    async fn list_managed(&self, api_version: &str, kind: &str) -> Result<Vec<Value>, ApiError> {
        self.round_trip().await?;
        if !self.serves(api_version, kind) {
            return Err(ApiError::NotServed(format!("{api_version} {kind}")));
        }
        Ok(self
            .lock_objects()
            .iter()
            .filter(|(r, o)| {
                r.api_version == api_version
                    && r.kind == kind
                    && o.pointer("/metadata/labels")
                        .and_then(|labels| labels.get(MANAGED_BY_LABEL))
                        .is_some()
            })
            .map(|(_, o)| o.clone())
            .collect())
    }

    async fn list(&self, query: &ListQuery) -> Result<Vec<Value>, ApiError> {
        self.round_trip().await?;
        Ok(self
            .lock_objects()
            .iter()
            .filter(|(r, o)| {
                r.api_version == query.api_version
                    && r.kind == query.kind
                    && r.namespace.as_deref() == Some(query.namespace.as_str())
                    && selected_by(o, &query.labels, &query.fields)
            })
            .map(|(_, o)| o.clone())
            .collect())
    }
}

/// Lets tests and benchmarks share one fake between targets and checks.
impl ClusterApi for std::sync::Arc<FakeCluster> {
    async fn discover(&self) -> Result<Vec<(String, String)>, ApiError> {
        self.as_ref().discover().await
    }
    async fn get(&self, resource: &ResourceRef) -> Result<Option<Value>, ApiError> {
        self.as_ref().get(resource).await
    }
    async fn apply(&self, object: &Value, mode: ApplyMode) -> Result<Value, ApiError> {
        self.as_ref().apply(object, mode).await
    }
    async fn delete(&self, resource: &ResourceRef) -> Result<(), ApiError> {
        self.as_ref().delete(resource).await
    }
    async fn list_managed(&self, api_version: &str, kind: &str) -> Result<Vec<Value>, ApiError> {
        self.as_ref().list_managed(api_version, kind).await
    }
    async fn list(&self, query: &ListQuery) -> Result<Vec<Value>, ApiError> {
        self.as_ref().list(query).await
    }
}

impl FakeCluster {
    /// The stored objects (for assertions).
    pub fn lock_objects_for_test(&self) -> std::sync::MutexGuard<'_, BTreeMap<ResourceRef, Value>> {
        self.lock_objects()
    }
}
