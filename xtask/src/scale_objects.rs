//! The objects a scale hub holds, shaped as the real hubs write them: for Karmada (v1.18) the
//! member Clusters with their status, the Deployment templates with their PropagationPolicies,
//! one ResourceBinding per template scheduled to every cluster, and one Work per (template,
//! cluster) in `karmada-es-<cluster>`; for OCM (v1.2) the ManagedClusters, the cluster set
//! and its binding, one Placement per resource with its PlacementDecisions (100 clusters an
//! object, as OCM splits them), and one ManifestWork per (resource, cluster) in the cluster's
//! namespace. Also the status the churn loader flips. Pure: it builds JSON and names, and must
//! not talk to a server.

use serde_json::{Value, json};

/// The namespace of the templates (Karmada) and Placements (OCM).
pub const APPS_NAMESPACE: &str = "scale-apps";
/// Marks everything the loader wrote.
pub const LOADER_LABEL: &str = "scale.flotilla.dev/loader";
/// The Kubernetes version the clusters report.
const MEMBER_VERSION: &str = "v1.36.3";
/// Replicas of every template (Karmada schedules them Duplicated: each cluster runs them all).
const REPLICAS: i64 = 2;
/// One Work in this many is loaded failed (and one ManifestWork not Available), so a read has
/// more than one status to tell apart.
pub const FAILED_EVERY: usize = 37;
/// OCM writes at most this many decisions into one PlacementDecision.
const DECISIONS_PER_OBJECT: usize = 100;

const REGIONS: [&str; 4] = ["eu-west-1", "us-east-1", "ap-south-1", "sa-east-1"];
const TIERS: [&str; 3] = ["prod", "staging", "dev"];

/// `cluster-0001` … (1-based, four digits at least).
pub fn cluster_name(index: usize) -> String {
    format!("cluster-{:04}", index + 1)
}

/// `app-0001` … (1-based).
pub fn resource_name(index: usize) -> String {
    format!("app-{:04}", index + 1)
}

/// The region and tier labels of cluster `index`.
pub fn region_tier(index: usize) -> (&'static str, &'static str) {
    (
        REGIONS[index % REGIONS.len()],
        TIERS[(index / REGIONS.len()) % TIERS.len()],
    )
}

/// Whether the Work (ManifestWork) of `resource` on `cluster` is loaded failed.
pub fn loaded_failed(resource: usize, cluster: usize) -> bool {
    (resource * 7919 + cluster).is_multiple_of(FAILED_EVERY)
}

/// FNV-1a 64 of the parts, for stable ids and name hashes.
fn fnv(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0]) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// A stable UUID-shaped id (Karmada's permanent ids are UUIDs).
pub fn permanent_id(parts: &[&str]) -> String {
    let a = fnv(parts);
    let b = fnv(&[&a.to_string(), "second half"]);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        (b >> 48) & 0xfff,
        b & 0xffff_ffff_ffff
    )
}

/// A condition as metav1.Condition requires it (every field set).
pub fn condition(kind: &str, status: bool, reason: &str, message: &str, now: &str) -> Value {
    json!({
        "type": kind,
        "status": if status { "True" } else { "False" },
        "reason": reason,
        "message": message,
        "lastTransitionTime": now,
    })
}

fn loader_labels(extra: &[(&str, &str)]) -> Value {
    let mut labels = serde_json::Map::new();
    labels.insert(LOADER_LABEL.into(), "true".into());
    for (k, v) in extra {
        labels.insert((*k).into(), (*v).into());
    }
    Value::Object(labels)
}

pub fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "labels": loader_labels(&[])}})
}

/// The Deployment every resource is (the template on a Karmada hub, the manifest in OCM).
pub fn deployment(resource: usize) -> Value {
    let name = resource_name(resource);
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": APPS_NAMESPACE, "labels": {"app": name}},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{
                    "name": "app",
                    "image": format!("registry.example.com/scale/{name}:1.0.{}", resource % 10),
                    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                }]},
            },
        },
    })
}

/// What Karmada aggregates into a template's status, and a member reports of its Deployment.
fn deployment_status(replicas: i64, ready: i64) -> Value {
    json!({
        "observedGeneration": 1,
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": ready,
        "availableReplicas": ready,
    })
}

// ---------------------------------------------------------------- Karmada

pub mod karmada {
    use super::*;

    pub fn member_namespace(cluster: usize) -> String {
        format!("karmada-es-{}", cluster_name(cluster))
    }

    /// A member Cluster as `karmadactl join` writes it (Push mode), labelled region/tier.
    pub fn cluster(index: usize) -> Value {
        let name = cluster_name(index);
        let (region, tier) = region_tier(index);
        json!({
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "Cluster",
            "metadata": {"name": name, "labels": loader_labels(&[("region", region), ("tier", tier)])},
            "spec": {
                "id": permanent_id(&["cluster", &name]),
                "syncMode": "Push",
                "apiEndpoint": format!("https://{name}.scale.invalid:6443"),
                "secretRef": {"namespace": "karmada-cluster", "name": name},
                "impersonatorSecretRef": {"namespace": "karmada-cluster", "name": format!("{name}-impersonator")},
                "provider": "scale-cloud",
                "region": region,
                "zones": [format!("{region}a"), format!("{region}b")],
                "resourceModels": [],
            },
        })
    }

    /// What karmada-controller-manager's cluster status controller reports for a healthy member.
    pub fn cluster_status(now: &str) -> Value {
        json!({
            "kubernetesVersion": MEMBER_VERSION,
            "apiEnablements": [
                {"groupVersion": "v1", "resources": [
                    {"name": "pods", "kind": "Pod"}, {"name": "services", "kind": "Service"},
                    {"name": "configmaps", "kind": "ConfigMap"}]},
                {"groupVersion": "apps/v1", "resources": [
                    {"name": "deployments", "kind": "Deployment"},
                    {"name": "statefulsets", "kind": "StatefulSet"}]},
            ],
            "conditions": [condition("Ready", true, "ClusterReady",
                "cluster is healthy and ready to accept workloads", now)],
            "nodeSummary": {"totalNum": 3, "readyNum": 3},
            "resourceSummary": {
                "allocatable": {"cpu": "48", "memory": "192Gi", "pods": "330"},
                "allocated": {"cpu": "12", "memory": "40Gi", "pods": "90"},
            },
        })
    }

    fn policy_id(resource: usize) -> String {
        permanent_id(&["propagationpolicy", &resource_name(resource)])
    }

    pub fn binding_id(resource: usize) -> String {
        permanent_id(&["resourcebinding", &resource_name(resource)])
    }

    /// The template as the hub holds it once Karmada's detector claimed it for its policy.
    pub fn template(resource: usize) -> Value {
        let mut d = deployment(resource);
        let name = resource_name(resource);
        d["metadata"]["labels"]["propagationpolicy.karmada.io/permanent-id"] =
            policy_id(resource).into();
        d["metadata"]["labels"][LOADER_LABEL] = "true".into();
        d["metadata"]["annotations"] = json!({
            "propagationpolicy.karmada.io/name": name,
            "propagationpolicy.karmada.io/namespace": APPS_NAMESPACE,
        });
        d
    }

    /// The template's status as Karmada aggregates it from `clusters` members.
    pub fn template_status(clusters: usize) -> Value {
        let total = REPLICAS * clusters as i64;
        deployment_status(total, total)
    }

    /// The resource's PropagationPolicy: every loaded cluster, Duplicated.
    pub fn policy(resource: usize) -> Value {
        let name = resource_name(resource);
        json!({
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "PropagationPolicy",
            "metadata": {"name": name, "namespace": APPS_NAMESPACE,
                "labels": loader_labels(&[("propagationpolicy.karmada.io/permanent-id", &policy_id(resource))])},
            "spec": {
                "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
                "placement": {
                    "clusterAffinity": {"labelSelector": {"matchLabels": {LOADER_LABEL: "true"}}},
                    "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
                },
                "conflictResolution": "Abort",
                "priority": 0,
            },
        })
    }

    /// The ResourceBinding of a template, scheduled to all `clusters` (`uid`: the template's).
    pub fn binding(resource: usize, clusters: usize, uid: &str) -> Value {
        let name = resource_name(resource);
        let targets: Vec<Value> = (0..clusters)
            .map(|c| json!({"name": cluster_name(c), "replicas": REPLICAS}))
            .collect();
        json!({
            "apiVersion": "work.karmada.io/v1alpha2",
            "kind": "ResourceBinding",
            "metadata": {
                "name": format!("{name}-deployment"),
                "namespace": APPS_NAMESPACE,
                "labels": loader_labels(&[
                    ("propagationpolicy.karmada.io/permanent-id", &policy_id(resource)),
                    ("resourcebinding.karmada.io/permanent-id", &binding_id(resource)),
                ]),
                "annotations": {
                    "propagationpolicy.karmada.io/name": name,
                    "propagationpolicy.karmada.io/namespace": APPS_NAMESPACE,
                },
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name,
                    "uid": uid, "controller": true, "blockOwnerDeletion": true}],
            },
            "spec": {
                "resource": {"apiVersion": "apps/v1", "kind": "Deployment",
                    "namespace": APPS_NAMESPACE, "name": name, "uid": uid},
                "replicas": REPLICAS,
                "replicaRequirements": {"resourceRequest": {"cpu": "100m", "memory": "128Mi"}},
                "clusters": targets,
                "placement": {
                    "clusterAffinity": {"labelSelector": {"matchLabels": {LOADER_LABEL: "true"}}},
                    "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
                },
                "conflictResolution": "Abort",
                "schedulerName": "default-scheduler",
            },
        })
    }

    /// The binding's status: scheduled, and every member's applied state and health.
    pub fn binding_status(resource: usize, clusters: usize, now: &str) -> Value {
        let aggregated: Vec<Value> = (0..clusters)
            .map(|c| {
                let failed = loaded_failed(resource, c);
                let mut item = json!({
                    "clusterName": cluster_name(c),
                    "applied": !failed,
                    "health": if failed { "Unknown" } else { "Healthy" },
                });
                if failed {
                    item["appliedMessage"] = work_failure_message().into();
                } else {
                    item["status"] = deployment_status(REPLICAS, REPLICAS);
                }
                item
            })
            .collect();
        let all_applied = (0..clusters).all(|c| !loaded_failed(resource, c));
        json!({
            "schedulerObservedGeneration": 1,
            "lastScheduledTime": now,
            "conditions": [
                condition("Scheduled", true, "Success", "Binding has been scheduled successfully.", now),
                if all_applied {
                    condition("FullyApplied", true, "FullyAppliedSuccess", "All works have been successfully applied", now)
                } else {
                    condition("FullyApplied", false, "FullyAppliedFailed", "Failed to apply all works, see status.aggregatedStatus for details", now)
                },
            ],
            "aggregatedStatus": aggregated,
        })
    }

    fn work_failure_message() -> &'static str {
        "Failed to apply all manifests (0/1): admission webhook \"validate.scale.example.com\" denied the request: quota exceeded"
    }

    /// What Karmada names a Work: `<template>-<hash of kind, namespace and name>`.
    pub fn work_name(resource: usize) -> String {
        let name = resource_name(resource);
        let hash = fnv(&["Deployment", APPS_NAMESPACE, &name]) & 0xff_ffff_ffff;
        format!("{name}-{hash:010x}")
    }

    /// The Work of `resource` on `cluster`: the template as the member gets it.
    pub fn work(resource: usize, cluster: usize) -> Value {
        let name = resource_name(resource);
        let work_name = work_name(resource);
        let namespace = member_namespace(cluster);
        let work_id = permanent_id(&["work", &name, &cluster_name(cluster)]);
        let mut manifest = deployment(resource);
        manifest["metadata"]["labels"] = json!({
            "app": name,
            "propagationpolicy.karmada.io/permanent-id": policy_id(resource),
            "work.karmada.io/permanent-id": work_id,
            "karmada.io/managed": "true",
        });
        manifest["metadata"]["annotations"] = json!({
            "propagationpolicy.karmada.io/name": name,
            "propagationpolicy.karmada.io/namespace": APPS_NAMESPACE,
            "resourcebinding.karmada.io/name": format!("{name}-deployment"),
            "resourcebinding.karmada.io/namespace": APPS_NAMESPACE,
            "resourcetemplate.karmada.io/managed-annotations": "propagationpolicy.karmada.io/name,propagationpolicy.karmada.io/namespace",
            "work.karmada.io/conflict-resolution": "abort",
            "work.karmada.io/name": work_name,
            "work.karmada.io/namespace": namespace,
        });
        json!({
            "apiVersion": "work.karmada.io/v1alpha1",
            "kind": "Work",
            "metadata": {
                "name": work_name,
                "namespace": namespace,
                "labels": loader_labels(&[
                    ("resourcebinding.karmada.io/permanent-id", &binding_id(resource)),
                    ("work.karmada.io/permanent-id", &work_id),
                    ("karmada.io/managed", "true"),
                ]),
                "annotations": {
                    "resourcebinding.karmada.io/name": format!("{name}-deployment"),
                    "resourcebinding.karmada.io/namespace": APPS_NAMESPACE,
                },
            },
            "spec": {"workload": {"manifests": [manifest]}},
        })
    }

    /// A Work's status: Applied (or not), with the member's Deployment status and health.
    pub fn work_status(resource: usize, applied: bool, now: &str) -> Value {
        let name = resource_name(resource);
        let applied_condition = if applied {
            condition(
                "Applied",
                true,
                "AppliedSuccessful",
                "Manifest has been successfully applied",
                now,
            )
        } else {
            condition(
                "Applied",
                false,
                "AppliedFailed",
                work_failure_message(),
                now,
            )
        };
        let mut manifest_status = json!({
            "identifier": {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
                "resource": "deployments", "namespace": APPS_NAMESPACE, "name": name},
            "health": if applied { "Healthy" } else { "Unknown" },
        });
        if applied {
            manifest_status["status"] = deployment_status(REPLICAS, REPLICAS);
        }
        json!({"conditions": [applied_condition], "manifestStatuses": [manifest_status]})
    }
}

// ---------------------------------------------------------------- OCM

pub mod ocm {
    use super::*;

    /// The cluster set every loaded cluster is in (as OCM's `default` set is).
    pub const CLUSTER_SET: &str = "default";

    /// A ManagedCluster as the registration agent and a hub admin leave it: accepted, with
    /// the set, region and tier labels.
    pub fn managed_cluster(index: usize) -> Value {
        let name = cluster_name(index);
        let (region, tier) = region_tier(index);
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1",
            "kind": "ManagedCluster",
            "metadata": {"name": name, "labels": loader_labels(&[
                ("cluster.open-cluster-management.io/clusterset", CLUSTER_SET),
                ("name", &name), ("region", region), ("tier", tier),
                ("feature.open-cluster-management.io/addon-work-manager", "available"),
            ])},
            "spec": {
                "hubAcceptsClient": true,
                "leaseDurationSeconds": 60,
                "managedClusterClientConfigs": [{"url": format!("https://{name}.scale.invalid:6443")}],
            },
        })
    }

    /// What the registration agent reports for a healthy cluster.
    pub fn managed_cluster_status(index: usize, now: &str) -> Value {
        let name = cluster_name(index);
        let (region, _) = region_tier(index);
        json!({
            "conditions": [
                condition("HubAcceptedManagedCluster", true, "HubClusterAdminAccepted", "Accepted by hub cluster admin", now),
                condition("ManagedClusterJoined", true, "ManagedClusterJoined", "Managed cluster joined", now),
                condition("ManagedClusterConditionAvailable", true, "ManagedClusterAvailable", "Managed cluster is available", now),
                condition("ManagedClusterConditionClockSynced", true, "ManagedClusterClockSynced", "The clock of the managed cluster is synced with the hub.", now),
            ],
            "version": {"kubernetes": MEMBER_VERSION},
            "capacity": {"cpu": "48", "memory": "192Gi", "pods": "330"},
            "allocatable": {"cpu": "46", "memory": "180Gi", "pods": "330"},
            "clusterClaims": [
                {"name": "id.k8s.io", "value": permanent_id(&["cluster", &name])},
                {"name": "region.open-cluster-management.io", "value": region},
            ],
        })
    }

    pub fn cluster_set() -> Value {
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta2",
            "kind": "ManagedClusterSet",
            "metadata": {"name": CLUSTER_SET, "labels": loader_labels(&[])},
            "spec": {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}},
        })
    }

    pub fn cluster_set_status(now: &str) -> Value {
        json!({"conditions": [condition("ClusterSetEmpty", false, "ClustersSelected", "clusters are selected", now)]})
    }

    pub fn set_binding() -> Value {
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta2",
            "kind": "ManagedClusterSetBinding",
            "metadata": {"name": CLUSTER_SET, "namespace": APPS_NAMESPACE, "labels": loader_labels(&[])},
            "spec": {"clusterSet": CLUSTER_SET},
        })
    }

    pub fn set_binding_status(now: &str) -> Value {
        json!({"conditions": [condition("Bound", true, "ClusterSetBound", "", now)]})
    }

    /// The resource's Placement: every cluster of the set.
    pub fn placement(resource: usize) -> Value {
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1",
            "kind": "Placement",
            "metadata": {"name": resource_name(resource), "namespace": APPS_NAMESPACE, "labels": loader_labels(&[])},
            "spec": {
                "clusterSets": [CLUSTER_SET],
                "predicates": [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {LOADER_LABEL: "true"}}}}],
            },
        })
    }

    pub fn placement_status(resource: usize, clusters: usize, now: &str) -> Value {
        let placement = resource_name(resource);
        let groups = clusters.div_ceil(DECISIONS_PER_OBJECT);
        json!({
            "numberOfSelectedClusters": clusters,
            "decisionGroups": [{"decisionGroupIndex": 0, "decisionGroupName": "",
                "decisions": (1..=groups).map(|g| format!("{placement}-decision-{g}")).collect::<Vec<_>>(),
                "clustersCount": clusters}],
            "conditions": [
                condition("PlacementMisconfigured", false, "Succeedconfigured", "Placement configurations check pass", now),
                condition("PlacementSatisfied", true, "AllDecisionsScheduled", "All cluster decisions scheduled", now),
            ],
        })
    }

    /// How many PlacementDecisions a Placement over `clusters` has.
    pub fn decision_objects(clusters: usize) -> usize {
        clusters.div_ceil(DECISIONS_PER_OBJECT)
    }

    /// PlacementDecision `group` (1-based) of `resource`'s Placement.
    pub fn decision(resource: usize, group: usize) -> Value {
        let placement = resource_name(resource);
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1",
            "kind": "PlacementDecision",
            "metadata": {
                "name": format!("{placement}-decision-{group}"),
                "namespace": APPS_NAMESPACE,
                "labels": loader_labels(&[
                    ("cluster.open-cluster-management.io/placement", &placement),
                    ("cluster.open-cluster-management.io/decision-group-index", "0"),
                    ("cluster.open-cluster-management.io/decision-group-name", ""),
                ]),
            },
        })
    }

    pub fn decision_status(group: usize, clusters: usize) -> Value {
        let first = (group - 1) * DECISIONS_PER_OBJECT;
        let last = (first + DECISIONS_PER_OBJECT).min(clusters);
        let decisions: Vec<Value> = (first..last)
            .map(|c| json!({"clusterName": cluster_name(c), "reason": ""}))
            .collect();
        json!({"decisions": decisions})
    }

    /// What a ManifestWork delivering `resource` is named (one per cluster namespace).
    pub fn work_name(resource: usize) -> String {
        format!("{}-work", resource_name(resource))
    }

    /// The ManifestWork of `resource` for `cluster`, with status feedback asked for.
    pub fn manifest_work(resource: usize, cluster: usize) -> Value {
        let name = resource_name(resource);
        json!({
            "apiVersion": "work.open-cluster-management.io/v1",
            "kind": "ManifestWork",
            "metadata": {
                "name": work_name(resource),
                "namespace": cluster_name(cluster),
                "labels": loader_labels(&[("app", &name)]),
            },
            "spec": {
                "workload": {"manifests": [deployment(resource)]},
                "deleteOption": {"propagationPolicy": "Foreground"},
                "manifestConfigs": [{
                    "resourceIdentifier": {"group": "apps", "resource": "deployments",
                        "namespace": APPS_NAMESPACE, "name": name},
                    "feedbackRules": [{"type": "WellKnownStatus"}],
                }],
            },
        })
    }

    /// What the work agent reports: Applied, and Available (or not) with feedback.
    pub fn manifest_work_status(resource: usize, available: bool, now: &str) -> Value {
        let name = resource_name(resource);
        let ready = if available { REPLICAS } else { 0 };
        let integer = |n: i64| json!({"type": "Integer", "integer": n});
        let manifest_available = if available {
            condition(
                "Available",
                true,
                "ResourceAvailable",
                "Resource is available",
                now,
            )
        } else {
            condition(
                "Available",
                false,
                "ResourceNotAvailable",
                "Resource is not available",
                now,
            )
        };
        let work_available = if available {
            condition(
                "Available",
                true,
                "ResourcesAvailable",
                "All resources are available",
                now,
            )
        } else {
            condition(
                "Available",
                false,
                "ResourcesNotAvailable",
                "1 of 1 resources are not available",
                now,
            )
        };
        let mut applied = condition(
            "Applied",
            true,
            "AppliedManifestWorkComplete",
            "Apply manifest work complete",
            now,
        );
        applied["observedGeneration"] = 1.into();
        json!({
            "conditions": [applied, work_available],
            "resourceStatus": {"manifests": [{
                "resourceMeta": {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
                    "resource": "deployments", "namespace": APPS_NAMESPACE, "name": name},
                "statusFeedback": {"values": [
                    {"name": "ReadyReplicas", "fieldValue": integer(ready)},
                    {"name": "Replicas", "fieldValue": integer(REPLICAS)},
                    {"name": "AvailableReplicas", "fieldValue": integer(ready)},
                ]},
                "conditions": [
                    condition("Applied", true, "AppliedManifestComplete", "Apply manifest complete", now),
                    manifest_available,
                    condition("StatusFeedbackSynced", true, "StatusFeedbackSynced", "", now),
                ],
            }]},
        })
    }
}

/// `now` as RFC 3339 UTC with seconds (what metav1.Time serialises).
pub fn rfc3339(unix_seconds: u64) -> String {
    let days = unix_seconds / 86_400;
    let secs = unix_seconds % 86_400;
    // Howard Hinnant's civil-from-days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_796_083_200), "2026-12-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400 + 3661), "2000-02-29T01:01:01Z");
    }

    #[test]
    fn karmada_work_carries_its_binding_id_and_lands_in_the_member_namespace() {
        let work = karmada::work(3, 41);
        assert_eq!(work["metadata"]["namespace"], "karmada-es-cluster-0042");
        assert_eq!(
            work["metadata"]["labels"]["resourcebinding.karmada.io/permanent-id"],
            karmada::binding_id(3)
        );
        let manifest = &work["spec"]["workload"]["manifests"][0];
        assert_eq!(manifest["metadata"]["name"], "app-0004");
        assert_eq!(manifest["metadata"]["namespace"], APPS_NAMESPACE);
        let binding = karmada::binding(3, 50, "uid-1");
        assert_eq!(
            binding["spec"]["clusters"].as_array().map(Vec::len),
            Some(50)
        );
        assert_eq!(binding["spec"]["resource"]["name"], "app-0004");
    }

    #[test]
    fn ids_are_stable_and_distinct() {
        assert_eq!(karmada::binding_id(1), karmada::binding_id(1));
        assert_ne!(karmada::binding_id(1), karmada::binding_id(2));
        assert_eq!(karmada::binding_id(1).len(), 36);
    }

    #[test]
    fn ocm_decisions_hold_at_most_a_hundred_clusters() {
        assert_eq!(ocm::decision_objects(500), 5);
        assert_eq!(ocm::decision_objects(2001), 21);
        let last = ocm::decision_status(21, 2001);
        assert_eq!(last["decisions"].as_array().map(Vec::len), Some(1));
        assert_eq!(last["decisions"][0]["clusterName"], "cluster-2001");
    }

    #[test]
    fn some_works_load_failed_but_most_do_not() {
        let failed = (0..20)
            .flat_map(|r| (0..500).map(move |c| (r, c)))
            .filter(|&(r, c)| loaded_failed(r, c))
            .count();
        assert!((200..=400).contains(&failed), "{failed} of 10,000");
    }
}
