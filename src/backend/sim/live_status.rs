//! The status a simulated cluster's controllers would report for an object it holds: settled
//! (every replica of the live spec updated and available, a Job complete, a claim bound, a
//! load balancer assigned) or, for a workload the scenario degrades, a stalled rollout. The
//! console's health and `status` both assess these objects, so they agree. It must not decide
//! health itself (that is `engine::health`).

use serde_json::{Value, json};

/// The status a settled object reports; `None` for kinds without one worth simulating.
pub fn settled(stored: &Value) -> Option<Value> {
    let kind = stored.get("kind").and_then(Value::as_str)?;
    let replicas = replicas(stored);
    Some(match kind {
        "Deployment" | "StatefulSet" | "ReplicaSet" => json!({
            "observedGeneration": 1,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
        }),
        "DaemonSet" => json!({
            "observedGeneration": 1,
            "desiredNumberScheduled": 3,
            "updatedNumberScheduled": 3,
            "numberAvailable": 3,
        }),
        "Job" => json!({"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}),
        "PersistentVolumeClaim" => json!({"phase": "Bound"}),
        "Service" | "Ingress" => json!({"loadBalancer": {"ingress": [{"ip": "198.51.100.10"}]}}),
        _ => return None,
    })
}

/// The status of a rollout that stalled: one replica available, the deadline exceeded.
pub fn stalled(stored: &Value) -> Value {
    let replicas = replicas(stored);
    json!({
        "observedGeneration": 1,
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": 1,
        "availableReplicas": 1,
        "unavailableReplicas": (replicas - 1).max(0),
        "conditions": [{
            "type": "Progressing",
            "status": "False",
            "reason": "ProgressDeadlineExceeded",
            // As the deployment controller words it (it names the ReplicaSet only).
            "message": format!("ReplicaSet \"{}-7d9c4b5f6\" has timed out progressing.", name(stored)),
        }],
    })
}

fn name(stored: &Value) -> &str {
    stored
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("workload")
}

fn replicas(stored: &Value) -> i64 {
    stored
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}
