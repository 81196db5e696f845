//! What makes a member cluster run workloads beside its API server: the fake Node every
//! member gets
//! (a bounded `status.allocatable`, so asking for more than it holds leaves pods Pending), and
//! the kube-controller-manager controllers and the flags of the member's kube-scheduler and
//! kwok (KWOK, built with its stages by `gobuild::KWOK`). KWOK plays the kubelet: it marks the
//! Node Ready and the pods bound to it Running. It must only talk to the test environment's
//! own members and never serve on a port (`--server-address` stays unset).

use std::path::Path;

use anyhow::Result;

use crate::kubectl;

/// The annotation KWOK selects the Nodes it plays by.
pub const NODE_ANNOTATION: &str = "kwok.x-k8s.io/node";
/// The one Node of every member.
pub const NODE_NAME: &str = "kwok-node-1";
/// What the Node holds. A pod asking for one CPU makes four the most that run; `pods` bounds
/// pods without requests.
pub const NODE_CPU: &str = "4";
pub const NODE_MEMORY: &str = "8Gi";
pub const NODE_PODS: &str = "20";

/// The kube-controller-manager controllers a member runs: namespace deletion, ownerReference
/// cascades and the workload controllers (no service-account controllers: the members'
/// API servers do not require a service account of a pod).
pub const MEMBER_CONTROLLERS: &str = "namespace-controller,garbage-collector-controller,\
deployment-controller,replicaset-controller,statefulset-controller,daemonset-controller,\
job-controller,cronjob-controller";

/// The member's fake Node, without its status (set through the status subresource).
fn node_manifest() -> String {
    format!(
        "apiVersion: v1
kind: Node
metadata:
  name: {NODE_NAME}
  annotations:
    {NODE_ANNOTATION}: fake
  labels:
    type: kwok
    kubernetes.io/hostname: {NODE_NAME}
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
"
    )
}

fn node_status() -> String {
    let resources =
        format!(r#"{{"cpu":"{NODE_CPU}","memory":"{NODE_MEMORY}","pods":"{NODE_PODS}"}}"#);
    format!(r#"{{"status":{{"allocatable":{resources},"capacity":{resources}}}}}"#)
}

/// Creates (or keeps) `context`'s fake Node with its bounded capacity.
pub fn ensure_node(context: &str) -> Result<()> {
    kubectl::apply(context, &node_manifest())?;
    // The API server taints a new Node not-ready; the node lifecycle controller, which would
    // lift it once KWOK reports Ready, is not run (on a busy machine a late lease renewal
    // would make it taint the Node and evict its pods).
    kubectl::run(
        context,
        &[
            "patch",
            "node",
            NODE_NAME,
            "--type=merge",
            "-p",
            r#"{"spec":{"taints":null}}"#,
        ],
        None,
    )?;
    kubectl::run(
        context,
        &[
            "patch",
            "node",
            NODE_NAME,
            "--subresource=status",
            "--type=merge",
            "-p",
            &node_status(),
        ],
        None,
    )?;
    Ok(())
}

/// Waits until KWOK reports the Node Ready.
pub fn wait_node_ready(context: &str) -> Result<()> {
    kubectl::run(
        context,
        &[
            "wait",
            "--for=condition=Ready",
            "--timeout=60s",
            &format!("node/{NODE_NAME}"),
        ],
        None,
    )
    .map(|_| ())
}

/// kwok's flags for a member whose private client config is `kubeconfig`.
pub fn args(kubeconfig: &Path, stages: &Path) -> Vec<String> {
    vec![
        format!("--kubeconfig={}", kubeconfig.display()),
        "--manage-all-nodes=false".to_string(),
        format!("--manage-nodes-with-annotation-selector={NODE_ANNOTATION}=fake"),
        format!("--config={}", stages.display()),
        // Pod IPs, apart from the Service range.
        "--cidr=10.244.0.0/16".to_string(),
        "--node-ip=127.0.0.1".to_string(),
    ]
}

/// kube-scheduler's flags for a member whose private client config is `kubeconfig`.
pub fn scheduler_args(kubeconfig: &Path) -> Vec<String> {
    let kubeconfig = kubeconfig.display();
    vec![
        format!("--kubeconfig={kubeconfig}"),
        format!("--authentication-kubeconfig={kubeconfig}"),
        format!("--authorization-kubeconfig={kubeconfig}"),
        "--leader-elect=false".to_string(),
        // No serving port: nothing scrapes it, and nothing else may be bound.
        "--secure-port=0".to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_node_is_bounded_and_kwok_plays_only_it() {
        let status: serde_json::Value = serde_json::from_str(&node_status()).expect("json");
        assert_eq!(status["status"]["allocatable"]["cpu"], NODE_CPU);
        assert_eq!(status["status"]["capacity"]["pods"], NODE_PODS);
        assert!(node_manifest().contains(&format!("{NODE_ANNOTATION}: fake")));
        let args = args(Path::new("k"), Path::new("s"));
        assert!(args.contains(&"--manage-all-nodes=false".to_string()));
        assert!(!args.iter().any(|a| a.starts_with("--server-address")));
    }
}
