//! One fan-out's work and how it runs: a [`Target`] per cluster (its API, or why there is
//! none, and the objects it should have), the fleet's ignore rules per cluster, the fan-out
//! settings, and [`fan_out`], which runs one future per cluster with at most `concurrency` in
//! flight and each bounded by the cluster timeout. It must not decide what to do to an
//! object: plan, apply and drift hand it their per-cluster work.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

use super::cluster_api::{ApiError, ClusterApi, Limits};
use crate::engine::compare::ignore::{self, IgnoreRule};
use crate::model::{ClusterSpec, ResourceRef};

/// One cluster's work: its API (or why there is none) and the objects it should have.
pub struct Target<A> {
    pub cluster: String,
    pub api: Result<A, ApiError>,
    /// Desired objects, ownership marker included.
    pub objects: Vec<Value>,
    /// Objects that could not be rendered for this cluster, with the reason.
    pub failed: Vec<(ResourceRef, String)>,
    /// Kinds (apiVersion, kind) whose flotilla-labelled objects are prune candidates here;
    /// empty when pruning must not be considered (placement had errors, or a scope is set).
    pub prune_kinds: Vec<(String, String)>,
    /// Namespaces the fleet declares objects in: namespaced prune candidates outside them,
    /// and Namespaces not among them, are never touched (another fleet or a person may own
    /// them). Cluster-scoped kinds other than Namespace are not limited.
    pub prune_namespaces: BTreeSet<String>,
}

/// The fleet's drift ignore rules, per cluster (only the rules whose cluster part matches).
/// Plan, apply and drift honour them: an ignored field is not drift, not an update, and is
/// taken out of the applied intent as [`crate::engine::compare::ignore`] describes.
#[derive(Debug, Clone, Default)]
pub struct Ignores {
    by_cluster: BTreeMap<String, Vec<IgnoreRule>>,
}

impl Ignores {
    pub fn new(rules: &[IgnoreRule], clusters: &[ClusterSpec]) -> Ignores {
        let by_cluster = clusters
            .iter()
            .map(|cluster| {
                let rules: Vec<IgnoreRule> = rules
                    .iter()
                    .filter(|r| r.covers_cluster(cluster))
                    .cloned()
                    .collect();
                (cluster.name.clone(), rules)
            })
            .filter(|(_, rules)| !rules.is_empty())
            .collect();
        Ignores { by_cluster }
    }

    /// The rules about one object on one cluster.
    pub fn for_object(&self, cluster: &str, resource: &ResourceRef) -> Vec<&IgnoreRule> {
        self.by_cluster
            .get(cluster)
            .map(|rules| ignore::rules_for(rules, resource).collect())
            .unwrap_or_default()
    }

    pub fn is_empty(&self) -> bool {
        self.by_cluster.is_empty()
    }
}

/// Fan-out settings.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Clusters in flight at once.
    pub concurrency: usize,
    /// Time allowed for one cluster's whole work.
    pub cluster_timeout: Duration,
    pub limits: Limits,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            concurrency: 32,
            cluster_timeout: Duration::from_secs(60),
            limits: Limits::default(),
        }
    }
}

/// Runs `work` for every target, at most `concurrency` clusters at once, each bounded by the
/// cluster timeout; `on_done` is called as each cluster finishes (for progress). `None` for a
/// cluster without a client or out of time.
pub(super) async fn fan_out<'a, A, T, F, Fut>(
    targets: &'a [Target<A>],
    options: Options,
    on_done: &(dyn Fn(usize, usize) + Sync),
    work: F,
) -> Vec<Option<Vec<T>>>
where
    A: ClusterApi,
    F: Fn(&'a Target<A>, &'a A) -> Fut + 'a,
    Fut: std::future::Future<Output = Vec<T>> + 'a,
    T: 'a,
{
    let total = targets.len();
    let work = &work;
    let mut out: Vec<Option<Vec<T>>> = Vec::with_capacity(total);
    out.resize_with(total, || None);
    // The futures are collected before they are polled so no closure over borrowed targets
    // is held across an await: that keeps the fan-out `Send` (rustc cannot prove it through
    // such a closure), so it can run in a spawned task.
    let cluster_work: Vec<_> = targets
        .iter()
        .enumerate()
        .map(|(index, target)| async move {
            let rows = match &target.api {
                Err(_) => None,
                Ok(api) => tokio::time::timeout(options.cluster_timeout, work(target, api))
                    .await
                    .ok(),
            };
            (index, rows)
        })
        .collect();
    let mut stream =
        futures::stream::iter(cluster_work).buffer_unordered(options.concurrency.max(1));
    let mut done = 0;
    while let Some((index, rows)) = stream.next().await {
        done += 1;
        on_done(done, total);
        if let Some(slot) = out.get_mut(index) {
            *slot = rows;
        }
    }
    out
}

/// Why a whole cluster failed (no client, or the cluster timeout ran out), if it did.
pub(super) fn cluster_failure<A>(target: &Target<A>, options: Options) -> ApiError {
    match &target.api {
        Err(err) => err.clone(),
        Ok(_) => ApiError::Unreachable(format!(
            "cluster did not finish within {}s",
            options.cluster_timeout.as_secs()
        )),
    }
}
