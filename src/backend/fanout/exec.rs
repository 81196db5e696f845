//! Running a command in one pod of a workload on one cluster: which pod (a Running, ready one
//! of those the workload owns, or the one asked for) and which container (the one asked for,
//! else kubectl's `kubectl.kubernetes.io/default-container` annotation, else the first) are
//! chosen here as kubectl chooses them, and [`PodExec`] is what a cluster offers to run it
//! through `pods/exec` (kube-rs on a live cluster, the simulation on the demo). A running
//! command is an [`ExecSession`]: its stdin, stdout and stderr as byte streams, the terminal
//! size it is told, and its exit. It must not touch the local terminal, print, ask or audit:
//! the command (and the console) do that.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

use super::cluster_api::ApiError;

/// The annotation kubectl reads for the container to default to.
pub const DEFAULT_CONTAINER_ANNOTATION: &str = "kubectl.kubernetes.io/default-container";

/// What to run, where, and how it is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecRequest {
    pub namespace: String,
    pub pod: String,
    pub container: String,
    pub command: Vec<String>,
    /// Pass stdin to the command (`-i`).
    pub stdin: bool,
    /// Allocate a terminal for it (`-t`); its stderr then comes through stdout.
    pub tty: bool,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecExit {
    /// It ran and exited with this code (0 for success).
    Code(i32),
    /// The cluster could not run it, or lost it: the API server's words.
    Failed(String),
}

/// A terminal size, columns by rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermSize {
    pub width: u16,
    pub height: u16,
}

type Reader = Box<dyn AsyncRead + Send + Unpin>;
type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// A command running in a container.
pub struct ExecSession {
    /// Its stdin, when the request asked for it; shut it down for end of input.
    pub stdin: Option<Writer>,
    pub stdout: Option<Reader>,
    /// Its stderr; `None` with a terminal, whose stderr is its stdout.
    pub stderr: Option<Reader>,
    /// Tells its terminal a new size (with a terminal only).
    pub resize: Option<tokio::sync::mpsc::Sender<TermSize>>,
    /// Resolves when it ends.
    pub exit: Pin<Box<dyn Future<Output = ExecExit> + Send>>,
}

/// A cluster that can run a command in a pod's container (`pods/exec`). Reading and choosing
/// the pod is the caller's; this only starts the command.
pub trait PodExec: Send + Sync {
    fn exec(
        &self,
        request: &ExecRequest,
    ) -> impl Future<Output = Result<ExecSession, ApiError>> + Send;
}

/// Why no pod or container could be chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChoiceError {
    #[error("{workload} has no pods on {cluster}")]
    NoPods { workload: String, cluster: String },
    #[error(
        "{workload} has no Running, ready pod on {cluster} (its pods: {pods})\n  hint: `flotilla pods {workload} --cluster {cluster}` says why; --pod NAME picks one anyway"
    )]
    NoneReady {
        workload: String,
        cluster: String,
        pods: String,
    },
    #[error("--pod {pod}: not one of {workload}'s pods on {cluster}; its pods: {pods}")]
    NoSuchPod {
        pod: String,
        workload: String,
        cluster: String,
        pods: String,
    },
    #[error("-c {container}: pod {pod} has no such container; its containers: {containers}")]
    NoSuchContainer {
        container: String,
        pod: String,
        containers: String,
    },
    #[error("pod {pod} has no containers")]
    NoContainers { pod: String },
}

/// How the container was chosen, for the line that says which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainerChoice {
    /// `-c` named it.
    Named,
    /// The pod's `kubectl.kubernetes.io/default-container` annotation names it.
    Annotation,
    /// The pod's first container (the only one, or the first of several).
    First,
}

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// A pod's name.
pub fn pod_name(pod: &Value) -> &str {
    text(pod, "/metadata/name")
}

/// Whether a pod is Running with its Ready condition true: one a command can run in.
pub fn is_running_ready(pod: &Value) -> bool {
    text(pod, "/status/phase") == "Running"
        && text(pod, "/metadata/deletionTimestamp").is_empty()
        && pod
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|condition| {
                text(condition, "/type") == "Ready" && text(condition, "/status") == "True"
            })
}

fn names(pods: &[Value]) -> String {
    let names: Vec<&str> = pods.iter().map(pod_name).collect();
    names.join(", ")
}

/// The pod to run in: `wanted` among the workload's `pods` (any state: the operator asked for
/// it), else the first Running, ready one by name.
pub fn choose_pod<'p>(
    pods: &'p [Value],
    wanted: Option<&str>,
    workload: &str,
    cluster: &str,
) -> Result<&'p Value, ChoiceError> {
    if let Some(wanted) = wanted {
        return pods
            .iter()
            .find(|pod| pod_name(pod) == wanted)
            .ok_or_else(|| ChoiceError::NoSuchPod {
                pod: wanted.to_string(),
                workload: workload.to_string(),
                cluster: cluster.to_string(),
                pods: if pods.is_empty() {
                    "(none)".into()
                } else {
                    names(pods)
                },
            });
    }
    if pods.is_empty() {
        return Err(ChoiceError::NoPods {
            workload: workload.to_string(),
            cluster: cluster.to_string(),
        });
    }
    let mut ready: Vec<&Value> = pods.iter().filter(|pod| is_running_ready(pod)).collect();
    ready.sort_by_key(|pod| pod_name(pod));
    ready
        .first()
        .copied()
        .ok_or_else(|| ChoiceError::NoneReady {
            workload: workload.to_string(),
            cluster: cluster.to_string(),
            pods: names(pods),
        })
}

/// The pod's containers' names, in its spec's order.
pub fn container_names(pod: &Value) -> Vec<&str> {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|container| text(container, "/name"))
        .collect()
}

/// The container to run in, as kubectl chooses it: `wanted`, else the default-container
/// annotation's (when the pod has it), else the first.
pub fn choose_container(
    pod: &Value,
    wanted: Option<&str>,
) -> Result<(String, ContainerChoice), ChoiceError> {
    let containers = container_names(pod);
    let listed = || containers.join(", ");
    if let Some(wanted) = wanted {
        return if containers.contains(&wanted) {
            Ok((wanted.to_string(), ContainerChoice::Named))
        } else {
            Err(ChoiceError::NoSuchContainer {
                container: wanted.to_string(),
                pod: pod_name(pod).to_string(),
                containers: listed(),
            })
        };
    }
    let annotated = pod
        .pointer("/metadata/annotations")
        .and_then(|annotations| annotations.get(DEFAULT_CONTAINER_ANNOTATION))
        .and_then(Value::as_str)
        .filter(|name| containers.contains(name));
    match (annotated, containers.first()) {
        (Some(name), _) => Ok((name.to_string(), ContainerChoice::Annotation)),
        (None, Some(first)) => Ok((first.to_string(), ContainerChoice::First)),
        (None, None) => Err(ChoiceError::NoContainers {
            pod: pod_name(pod).to_string(),
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(name: &str, phase: &str, ready: bool) -> Value {
        json!({"metadata": {"name": name},
            "spec": {"containers": [{"name": "app"}, {"name": "proxy"}]},
            "status": {"phase": phase, "conditions": [
                {"type": "Ready", "status": if ready { "True" } else { "False" }}]}})
    }

    #[test]
    fn the_first_running_ready_pod_is_chosen_and_a_named_one_in_any_state() {
        let pods = [
            pod("web-c", "Running", true),
            pod("web-a", "Running", false),
            pod("web-b", "Running", true),
            pod("web-0", "Pending", false),
        ];
        let chosen = choose_pod(&pods, None, "Deployment/shop/web", "east").unwrap();
        assert_eq!(pod_name(chosen), "web-b");
        let named = choose_pod(&pods, Some("web-0"), "Deployment/shop/web", "east").unwrap();
        assert_eq!(pod_name(named), "web-0");
        let missing = choose_pod(&pods, Some("web-z"), "Deployment/shop/web", "east");
        assert!(
            matches!(&missing, Err(ChoiceError::NoSuchPod { pods, .. }) if pods.contains("web-a")),
            "{missing:?}"
        );
        let none = choose_pod(&pods[1..2], None, "Deployment/shop/web", "east");
        assert!(matches!(none, Err(ChoiceError::NoneReady { .. })));
        assert!(matches!(
            choose_pod(&[], None, "Deployment/shop/web", "east"),
            Err(ChoiceError::NoPods { .. })
        ));
    }

    #[test]
    fn the_container_is_the_named_then_the_annotated_then_the_first() {
        let mut web = pod("web", "Running", true);
        assert_eq!(
            choose_container(&web, None).unwrap(),
            ("app".into(), ContainerChoice::First)
        );
        web["metadata"]["annotations"] = json!({DEFAULT_CONTAINER_ANNOTATION: "proxy"});
        assert_eq!(
            choose_container(&web, None).unwrap(),
            ("proxy".into(), ContainerChoice::Annotation)
        );
        assert_eq!(
            choose_container(&web, Some("app")).unwrap(),
            ("app".into(), ContainerChoice::Named)
        );
        let wrong = choose_container(&web, Some("db")).unwrap_err();
        assert!(wrong.to_string().contains("app, proxy"), "{wrong}");
        // An annotation naming no container of the pod is passed over, as kubectl does.
        web["metadata"]["annotations"] = json!({DEFAULT_CONTAINER_ANNOTATION: "gone"});
        assert_eq!(choose_container(&web, None).unwrap().0, "app");
    }
}
