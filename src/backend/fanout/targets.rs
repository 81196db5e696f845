//! One fan-out's work and how it runs: a [`Target`] per cluster (its API, or why there is
//! none, and the objects it should have, as [`desired`] renders them from the fleet), the
//! fleet's ignore rules per cluster, the fan-out
//! settings, and [`fan_out`], which runs one future per cluster with at most `concurrency` in
//! flight and each bounded by the cluster timeout. It must not decide what to do to an
//! object: plan, apply and drift hand it their per-cluster work.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

use super::cluster_api::{ApiError, ClusterApi, Limits};
use super::object::{FIELD_MANAGER, resource_of};
use crate::engine::compare::ignore::{self, IgnoreRule};
use crate::engine::dialect::karmada_behaviour::ConflictResolution;
use crate::engine::interpreter::Interpreters;
use crate::engine::{Decision, Fleet};
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
    /// Objects placed here that Karmada's `suspension` holds back, with the reason: never
    /// applied, never prune candidates, listed by plan as unchanged with the reason.
    pub suspended: Vec<(ResourceRef, String)>,
    /// Objects Karmada would refuse to take over when the cluster already has one of that
    /// name without flotilla's or Karmada's ownership label (`conflictResolution: Abort`).
    pub refuse_unowned: BTreeSet<ResourceRef>,
    /// Objects Karmada would take over whole (`conflictResolution: Overwrite`) when the member
    /// has one unowned: apply forces the fields another manager holds on them, as Karmada's
    /// update replaces the object.
    pub take_over_unowned: BTreeSet<ResourceRef>,
}

/// What one cluster should have for some of the fleet's rows: see [`desired`].
#[derive(Debug, Clone, Default)]
pub struct Desired {
    /// The rendered objects, the Namespaces they need first.
    pub objects: Vec<Value>,
    /// Rows placed on the cluster whose object could not be rendered, with the reason.
    pub failed: Vec<(ResourceRef, String)>,
    /// Rows placed on the cluster that Karmada's `suspension` holds back, with the reason.
    pub suspended: Vec<(ResourceRef, String)>,
    /// Rows whose Karmada `conflictResolution` is Abort (see [`Target::refuse_unowned`]).
    pub refuse_unowned: BTreeSet<ResourceRef>,
    /// Rows whose Karmada `conflictResolution` is Overwrite (see [`Target::take_over_unowned`]).
    pub take_over_unowned: BTreeSet<ResourceRef>,
    /// The rows placed on the cluster, in the order given.
    pub rows: Vec<usize>,
}

/// The objects cluster `cluster` of the fleet should have for `rows` (those placed there):
/// each rendered object, after the Namespaces the fleet implies for them there. With
/// `every_namespace`, every Namespace the fleet implies on the cluster comes along, not only
/// those the rows need.
pub fn desired(
    fleet: &Fleet,
    cluster: usize,
    rows: impl IntoIterator<Item = usize>,
    every_namespace: bool,
) -> Desired {
    let mut desired = Desired::default();
    let mut objects = Vec::new();
    let mut namespaces: BTreeSet<String> = BTreeSet::new();
    for row in rows {
        let Some(resource) = fleet.resources.get(row) else {
            continue;
        };
        if !fleet.is_placed(row, cluster) {
            continue;
        }
        desired.rows.push(row);
        match fleet.conflict_resolution(row) {
            Some(ConflictResolution::Abort) => {
                desired.refuse_unowned.insert(resource.target.clone());
            }
            Some(ConflictResolution::Overwrite) => {
                desired.take_over_unowned.insert(resource.target.clone());
            }
            None => {}
        }
        match fleet.decide(row, cluster) {
            Decision::Placed { object, .. } => {
                if let Some(ns) = &resource.target.namespace {
                    namespaces.insert(ns.clone());
                }
                objects.push(object);
            }
            Decision::Suspended { reason, .. } => {
                desired.suspended.push((resource.target.clone(), reason));
            }
            Decision::NotPlaced { reason } => {
                desired.failed.push((resource.target.clone(), reason));
            }
        }
    }
    desired.objects = fleet
        .implied_namespaces(cluster)
        .into_iter()
        .filter(|ns| every_namespace || namespaces.contains(&resource_of(ns).name))
        .collect();
    desired.objects.extend(objects);
    desired
}

/// What a member keeps of its objects: the fleet's drift ignore rules, per cluster (only the
/// rules whose cluster part matches), and its Karmada interpreters' retention (a kind's
/// `Retain` script or Karmada's built-in one). Plan, apply and drift honour both, through
/// [`Ignores::intent`]: an ignored or retained field is not drift, not an update, and is
/// taken out of (ignored) or kept in (retained) the applied intent as
/// [`crate::engine::compare::ignore`] and [`crate::engine::interpreter::retain`] describe.
#[derive(Debug, Clone, Default)]
pub struct Ignores {
    by_cluster: BTreeMap<String, Vec<IgnoreRule>>,
    /// Whose retention applies; `None`: none (a hub's own writes, tests).
    retention: Option<Arc<Interpreters>>,
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
        Ignores {
            by_cluster,
            retention: None,
        }
    }

    /// These rules, with `interpreters`' retention (and Karmada's built-in one) applied to
    /// each intent before it is compared with or applied to a member's object.
    pub fn retaining(self, interpreters: Arc<Interpreters>) -> Ignores {
        Ignores {
            retention: Some(interpreters),
            ..self
        }
    }

    /// Whether the intent `object` on `cluster` depends on the member's object, which must
    /// then be read before it is applied or dry-run.
    pub fn reads_live(&self, cluster: &str, object: &Value) -> bool {
        self.retention.as_ref().is_some_and(|r| r.retains(object))
            || !self.for_object(cluster, &resource_of(object)).is_empty()
    }

    /// `object`'s intent against `live` (the member's object, `None` when it has none): what
    /// the member retains kept from `live`, then what the ignore rules cover taken care of.
    /// A failing `Retain` script is an error naming the script: Karmada does not update the
    /// object then.
    pub fn intent(
        &self,
        cluster: &str,
        object: &Value,
        live: Option<&Value>,
    ) -> Result<Value, String> {
        let retained = self.retained(object, live)?;
        let rules = self.for_object(cluster, &resource_of(object));
        Ok(ignore::adjust_intent(
            &retained,
            live,
            &rules,
            FIELD_MANAGER,
        ))
    }

    /// `object` with what `live` retains (unchanged when there is no live object).
    pub fn retained(&self, object: &Value, live: Option<&Value>) -> Result<Value, String> {
        match (&self.retention, live) {
            (Some(interpreters), Some(live)) => interpreters
                .retain(object, live)
                .map_err(|error| error.to_string()),
            _ => Ok(object.clone()),
        }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::{SourceFile, load_fleet};

    const FLEET: &str = r#"
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: a, labels: {tier: web}}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: b}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: colors, namespace: shop}
data: {color: blue}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: colors, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: colors}]
  placement:
    clusterAffinity: {labelSelector: {matchLabels: {tier: web}}}
"#;

    #[test]
    fn a_cluster_gets_its_placed_rows_after_the_namespaces_they_need() {
        let (fleet, errors) = load_fleet(&[SourceFile {
            path: "fleet.yaml".into(),
            text: FLEET.into(),
        }]);
        assert!(errors.is_empty(), "{errors:?}");
        let (a, b) = (
            fleet.cluster_index("a").unwrap(),
            fleet.cluster_index("b").unwrap(),
        );
        let keys = |desired: &Desired| -> Vec<String> {
            desired
                .objects
                .iter()
                .map(|o| resource_of(o).display_key())
                .collect()
        };
        let on_a = desired(&fleet, a, [0], false);
        assert_eq!(keys(&on_a), ["Namespace/shop", "ConfigMap/shop/colors"]);
        assert_eq!(on_a.rows, [0]);
        assert!(on_a.failed.is_empty());
        let nothing = desired(&fleet, a, [], false);
        assert!(nothing.objects.is_empty(), "no row needs the namespace");
        let namespaces = desired(&fleet, a, [], true);
        assert_eq!(keys(&namespaces), ["Namespace/shop"]);
        let on_b = desired(&fleet, b, [0], true);
        assert!(
            on_b.objects.is_empty() && on_b.rows.is_empty(),
            "not placed on b"
        );
    }
}
