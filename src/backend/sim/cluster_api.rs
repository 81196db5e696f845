//! The demo's simulated clusters behind the same [`ClusterApi`] live clusters implement, so
//! `plan`, `apply`, `drift`, `repair` and `status` on `--demo` run the very fan-out code they
//! run on real clusters. [`SimFleet`] shares one [`SimCore`] (seeded as the console's demo is)
//! between one [`SimClusterApi`] per cluster. Each request sleeps the cluster's simulated round
//! trip; an unreachable cluster answers every request as unreachable. A live object is the
//! rendered desired object with the cell's drift in it and the drift's manager in its
//! managedFields; an apply behaves as server-side apply does: a field another manager owns
//! conflicts unless forced, a dry run stores nothing, the scenario's failing cell is refused
//! with its API error. It must not decide what to apply (the fan-out does), and a read-only API
//! never changes the simulated fleet.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::Value;

use super::stored::{as_stored, held_object};
use super::world::SimCore;
use crate::backend::fanout::cluster_api::{ApiError, ApplyMode, ClusterApi, ListQuery};
use crate::backend::fanout::object::{resource_of, selected_by};
use crate::messages::CellRef;
use crate::model::{Health, ResourceRef};

/// The simulated fleet one command works on: one world, shared by its clusters' APIs.
#[derive(Debug, Clone)]
pub struct SimFleet {
    core: Arc<Mutex<SimCore>>,
}

impl SimFleet {
    pub fn new(core: SimCore) -> SimFleet {
        SimFleet {
            core: Arc::new(Mutex::new(core)),
        }
    }

    /// The API of the cluster of this name; `readonly` refuses every write without changing
    /// anything. `None` when the fleet has no such cluster.
    pub fn cluster(&self, name: &str, readonly: bool) -> Option<SimClusterApi> {
        let core = lock(&self.core);
        let index = core.fleet().cluster_index(name)?;
        let status = core.cluster_status(index);
        Some(SimClusterApi {
            core: self.core.clone(),
            cluster: index,
            round_trip: Duration::from_millis(core.latency_ms(index)),
            down: (status.health == Health::Unreachable).then_some(status.message),
            readonly,
        })
    }

    /// Reads the world as it is now (for health and the console's view of cells).
    pub fn read<T>(&self, read: impl FnOnce(&SimCore) -> T) -> T {
        read(&lock(&self.core))
    }
}

/// One simulated cluster's API.
#[derive(Debug, Clone)]
pub struct SimClusterApi {
    core: Arc<Mutex<SimCore>>,
    cluster: usize,
    round_trip: Duration,
    /// Why every request fails, for an unreachable cluster.
    down: Option<String>,
    readonly: bool,
}

fn lock(core: &Mutex<SimCore>) -> MutexGuard<'_, SimCore> {
    core.lock().unwrap_or_else(PoisonError::into_inner)
}

impl SimClusterApi {
    /// Reads the world with this cluster's index (the demo's pod logs read its pods).
    pub(super) fn read_cluster<T>(&self, read: impl FnOnce(&SimCore, usize) -> T) -> T {
        read(&lock(&self.core), self.cluster)
    }

    pub(super) async fn round_trip(&self) -> Result<(), ApiError> {
        tokio::time::sleep(self.round_trip).await;
        match &self.down {
            Some(message) => Err(ApiError::Unreachable(message.clone())),
            None => Ok(()),
        }
    }

    fn refuse_writes(&self) -> Result<(), ApiError> {
        if self.readonly {
            Err(ApiError::Readonly)
        } else {
            Ok(())
        }
    }

    /// The fleet row of a resource, if it is one of the fleet's federated resources.
    fn row_of(core: &SimCore, resource: &ResourceRef) -> Option<usize> {
        core.fleet()
            .resources
            .iter()
            .position(|row| &row.target == resource)
    }

    /// A Namespace the fleet implies on this cluster: it is always there, as rendered.
    fn implied_namespace(&self, core: &SimCore, resource: &ResourceRef) -> Option<Value> {
        if resource.kind != "Namespace" {
            return None;
        }
        core.fleet()
            .implied_namespaces(self.cluster)
            .into_iter()
            .find(|ns| &resource_of(ns) == resource)
            .map(|ns| as_stored(&ns, None))
    }

    /// The object the cluster holds for a fleet row, if it holds one.
    fn held_object(&self, core: &SimCore, row: usize) -> Option<Value> {
        held_object(core, row, self.cluster)
    }
}

impl ClusterApi for SimClusterApi {
    async fn discover(&self) -> Result<Vec<(String, String)>, ApiError> {
        self.round_trip().await?;
        let core = lock(&self.core);
        let mut kinds: Vec<(String, String)> = core
            .fleet()
            .resources
            .iter()
            .map(|row| (row.target.api_version.clone(), row.target.kind.clone()))
            .collect();
        kinds.push(("v1".into(), "Namespace".into()));
        kinds.sort();
        kinds.dedup();
        Ok(kinds)
    }

    async fn get(&self, resource: &ResourceRef) -> Result<Option<Value>, ApiError> {
        self.round_trip().await?;
        let core = lock(&self.core);
        Ok(match Self::row_of(&core, resource) {
            Some(row) => self.held_object(&core, row),
            None => self.implied_namespace(&core, resource),
        })
    }

    async fn apply(&self, object: &Value, mode: ApplyMode) -> Result<Value, ApiError> {
        self.refuse_writes()?;
        self.round_trip().await?;
        let resource = resource_of(object);
        let mut core = lock(&self.core);
        let Some(row) = Self::row_of(&core, &resource) else {
            // Objects the simulation does not follow (the fleet's Namespaces) are always there.
            return Ok(as_stored(object, None));
        };
        if let Some(message) = core.apply_failure(row, self.cluster) {
            return Err(ApiError::Other(message.to_string()));
        }
        let drift = core.held(row, self.cluster).flatten().cloned();
        // The other manager keeps its field unless this apply sets it to another value.
        let kept = match drift {
            Some(drift) => match object.pointer(&drift.path) {
                Some(value) if value != &drift.live && !mode.force => {
                    return Err(ApiError::Conflict {
                        managers: vec![drift.manager.clone()],
                        message: drift.conflict(&resource.api_version),
                    });
                }
                Some(value) if value != &drift.live => None,
                _ => Some(drift),
            },
            None => None,
        };
        let stored = as_stored(object, kept.as_ref());
        if !mode.dry_run {
            core.store_applied(row, self.cluster, kept);
        }
        Ok(stored)
    }

    async fn delete(&self, resource: &ResourceRef) -> Result<(), ApiError> {
        self.refuse_writes()?;
        self.round_trip().await?;
        let mut core = lock(&self.core);
        if let Some(row) = Self::row_of(&core, resource) {
            let cell = CellRef {
                resource: row as u32,
                cluster: self.cluster as u32,
            };
            core.delete(self.cluster, &[cell]);
        }
        Ok(())
    }

    async fn list_managed(&self, api_version: &str, kind: &str) -> Result<Vec<Value>, ApiError> {
        self.round_trip().await?;
        let core = lock(&self.core);
        let mut objects: Vec<Value> = (0..core.fleet().resources.len())
            .filter(|&row| {
                let target = &core.fleet().resources[row].target;
                target.api_version == api_version && target.kind == kind
            })
            .filter_map(|row| self.held_object(&core, row))
            .collect();
        if (api_version, kind) == ("v1", "Namespace") {
            objects.extend(
                core.fleet()
                    .implied_namespaces(self.cluster)
                    .iter()
                    .map(|ns| as_stored(ns, None)),
            );
        }
        Ok(objects)
    }

    /// The fleet's objects the cluster holds, the synthetic Events about them, and the pods
    /// (and a Deployment's ReplicaSets) each held workload runs, selected as the query says.
    async fn list(&self, query: &ListQuery) -> Result<Vec<Value>, ApiError> {
        self.round_trip().await?;
        let core = lock(&self.core);
        let in_namespace = |row: &usize| {
            core.fleet().resources[*row].target.namespace.as_deref()
                == Some(query.namespace.as_str())
        };
        let rows: Vec<usize> = (0..core.fleet().resources.len())
            .filter(in_namespace)
            .collect();
        let candidates: Vec<Value> = match (query.api_version.as_str(), query.kind.as_str()) {
            ("v1", "Event") => rows
                .iter()
                .flat_map(|row| {
                    super::object_view::event_objects(
                        &core,
                        *row,
                        self.cluster,
                        std::time::SystemTime::now(),
                    )
                })
                .collect(),
            ("v1", "Pod") => rows
                .iter()
                .flat_map(|row| {
                    super::pods::pods(&core, *row, self.cluster, std::time::SystemTime::now())
                })
                .collect(),
            ("apps/v1", "ReplicaSet") => rows
                .iter()
                .flat_map(|row| {
                    super::pods::replica_sets(
                        &core,
                        *row,
                        self.cluster,
                        std::time::SystemTime::now(),
                    )
                })
                .collect(),
            (api_version, kind) => rows
                .iter()
                .filter(|row| {
                    let target = &core.fleet().resources[**row].target;
                    target.api_version == api_version && target.kind == kind
                })
                .filter_map(|row| self.held_object(&core, *row))
                .collect(),
        };
        Ok(candidates
            .into_iter()
            .filter(|object| selected_by(object, &query.labels, &query.fields))
            .collect())
    }
}

/// `pods/exec` on a simulated cluster: the pod looked up as the API server would, the command
/// answered by the simulated shell (`super::exec`).
impl crate::backend::fanout::exec::PodExec for SimClusterApi {
    async fn exec(
        &self,
        request: &crate::backend::fanout::exec::ExecRequest,
    ) -> Result<crate::backend::fanout::exec::ExecSession, ApiError> {
        self.refuse_writes()?;
        let pods = self
            .list(&ListQuery {
                api_version: "v1".into(),
                kind: "Pod".into(),
                namespace: request.namespace.clone(),
                labels: String::new(),
                fields: String::new(),
            })
            .await?;
        let pod = pods
            .iter()
            .find(|pod| pod.pointer("/metadata/name").and_then(Value::as_str) == Some(&request.pod))
            .ok_or_else(|| ApiError::NotFound(format!("pods \"{}\" not found", request.pod)))?;
        super::exec::start(pod, request)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::backend::fanout::drift::drift_with;
    use crate::backend::fanout::planning::{PlanMode, plan_with};
    use crate::backend::fanout::targets::{Ignores, Options, Target, desired};
    use crate::backend::sim::scenario::Scenario;
    use crate::engine::Decision;
    use crate::engine::load_fleet;
    use crate::messages::{PlanAction, PlanItem};
    use serde_json::json;

    fn demo() -> SimFleet {
        let (fleet, errors) = load_fleet(&crate::fleet::demo::demo_files());
        assert!(errors.is_empty(), "{errors:?}");
        SimFleet::new(SimCore::new(Arc::new(fleet), &Scenario::demo(), 7))
    }

    fn targets(sim: &SimFleet, readonly: bool) -> Vec<Target<SimClusterApi>> {
        let fleet = sim.read(|core| core.fleet().clone());
        fleet
            .clusters
            .iter()
            .enumerate()
            .map(|(index, spec)| {
                let wanted = desired(&fleet, index, 0..fleet.resources.len(), true);
                Target {
                    cluster: spec.name.clone(),
                    api: Ok(sim.cluster(&spec.name, readonly).unwrap()),
                    objects: wanted.objects,
                    failed: wanted.failed,
                    prune_kinds: Vec::new(),
                    prune_namespaces: BTreeSet::new(),
                    suspended: wanted.suspended,
                    refuse_unowned: wanted.refuse_unowned,
                    take_over_unowned: wanted.take_over_unowned,
                }
            })
            .collect()
    }

    async fn dry_run(targets: &[Target<SimClusterApi>]) -> Vec<PlanItem> {
        let ignores = Ignores::default();
        plan_with(
            targets,
            PlanMode::DryRun,
            Options::default(),
            &ignores,
            &|_, _| {},
        )
        .await
    }

    #[tokio::test]
    async fn the_scenario_drift_carries_its_manager_and_conflicts_until_forced() {
        let sim = demo();
        let targets = targets(&sim, false);
        let ignores = Ignores::default();
        let (items, errors) = drift_with(&targets, Options::default(), &ignores, &|_, _| {}).await;
        let inventory = items
            .iter()
            .find(|i| i.cluster == "prod-us-east-2" && i.resource.name == "inventory")
            .unwrap();
        assert_eq!(inventory.fields[0].path, "/spec/replicas");
        assert_eq!(inventory.fields[0].live, json!(9));
        assert_eq!(
            inventory.fields[0].manager.as_deref(),
            Some("kubectl-scale")
        );
        assert!(
            errors.iter().all(|e| e.cluster == "edge-store-0003"),
            "only the unreachable cluster fails: {errors:?}"
        );

        let plan = dry_run(&targets).await;
        let row = |cluster: &str, key: &str| {
            plan.iter()
                .find(|i| i.cluster == cluster && i.resource.display_key() == key)
                .unwrap()
        };
        let conflict = row("prod-us-east-2", "Deployment/shop/inventory");
        assert_eq!(conflict.action, PlanAction::Conflict, "{conflict:?}");
        assert!(conflict.message.contains("kubectl-scale"), "{conflict:?}");
        let pending = row("prod-us-east-2", "Service/shop/checkout");
        assert_eq!(pending.action, PlanAction::Create);
        assert!(pending.diff.contains("+kind: Service"), "{}", pending.diff);
        let failing = row("prod-ap-south-1", "Deployment/shop/checkout");
        assert_eq!(failing.action, PlanAction::Error);
        assert!(failing.message.contains("admission webhook"), "{failing:?}");

        let forced = crate::backend::fanout::apply::apply_with(
            &targets,
            true,
            &Default::default(),
            Options::default(),
            &ignores,
            &|_, _| {},
        )
        .await;
        assert!(!forced.is_empty());
        let (after, _) = drift_with(&targets, Options::default(), &ignores, &|_, _| {}).await;
        assert!(
            after.is_empty(),
            "a forced apply took every field back: {after:?}"
        );
        let replanned = dry_run(&targets).await;
        assert!(
            replanned
                .iter()
                .filter(|i| i.cluster == "prod-us-east-2")
                .all(|i| i.action == PlanAction::Unchanged),
            "{replanned:?}"
        );
    }

    #[tokio::test]
    async fn a_read_only_api_refuses_writes_and_changes_nothing() {
        let sim = demo();
        let api = sim.cluster("prod-us-east-2", true).unwrap();
        let fleet = sim.read(|core| core.fleet().clone());
        let row = fleet
            .resources
            .iter()
            .position(|r| r.target.display_key() == "Service/shop/checkout")
            .unwrap();
        let cluster = fleet.cluster_index("prod-us-east-2").unwrap();
        let Decision::Placed { object, .. } = fleet.decide(row, cluster) else {
            panic!("the pending Service is placed on prod-us-east-2");
        };
        assert_eq!(
            api.apply(&object, ApplyMode::default()).await,
            Err(ApiError::Readonly)
        );
        assert_eq!(api.get(&resource_of(&object)).await, Ok(None));
    }

    #[tokio::test]
    async fn an_unreachable_cluster_answers_nothing() {
        let sim = demo();
        let api = sim.cluster("edge-store-0003", false).unwrap();
        assert!(matches!(
            api.discover().await,
            Err(ApiError::Unreachable(message)) if message.contains("i/o timeout")
        ));
    }
}
