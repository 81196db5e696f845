//! What makes a member cluster run workloads beside its API server: the fake Node every
//! member gets
//! (a bounded `status.allocatable`, so asking for more than it holds leaves pods Pending), and
//! the kube-controller-manager controllers and the flags of the member's kube-scheduler and
//! kwok (KWOK, built with its stages by `gobuild::KWOK`). KWOK plays the kubelet: it marks the
//! Node Ready and the pods bound to it Running, and serves the kubelet API the member's
//! kube-apiserver calls for `pods/log` and `pods/exec` (as kwokctl wires it): KWOK listens on
//! 127.0.0.1 with the API server's certificate, the Node advertises that address and port, and
//! the API server checks the certificate against the test CA. What a container "prints" comes
//! from CRI-format files this module writes per member (`ClusterLogs`), and exec runs a local
//! command in the member's exec directory (`ClusterExec`). It must only talk to the test
//! environment's own members and serve on loopback only.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use k8s_openapi::jiff::Timestamp;

use crate::kubectl;
use crate::pki::PkiFiles;

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

/// A member's simulated container output, under its run directory: the current and previous
/// container logs every pod on the member prints (CRI format, so `--since`, `--tail` and
/// `--timestamps` behave as on a kubelet), the directory exec runs in, and the KWOK
/// configuration that names them.
pub const SIM_DIR: &str = "kwok";
pub const LOGS_FILE: &str = "current.log";
pub const PREVIOUS_LOGS_FILE: &str = "previous.log";
pub const EXEC_DIR: &str = "exec";
const SIM_CONFIG: &str = "simulation.yaml";
/// The variable every exec on a member sees, naming the member (so a test can tell which
/// member answered).
pub const EXEC_MEMBER_VAR: &str = "FLOTILLA_MEMBER";

/// One line of a container log as the kubelet stores it (CRI: time, stream, full-line tag).
pub fn cri_line(at: Timestamp, stream: &str, text: &str) -> String {
    format!("{at} {stream} F {text}\n")
}

/// The lines a member's containers start with, one second apart and ending `now`.
fn first_lines(member: &str, now: Timestamp) -> (String, String) {
    let at = |back: u64| now - Duration::from_secs(back);
    let current = [
        (3, "stdout", format!("{member}: starting")),
        (2, "stdout", format!("{member}: listening on :8080")),
        (1, "stderr", format!("{member}: warning: cache cold")),
        (0, "stdout", format!("{member}: ready")),
    ];
    let previous = [
        (60, "stdout", format!("{member}: starting")),
        (59, "stderr", format!("{member}: panic: out of memory")),
    ];
    let render = |lines: &[(u64, &str, String)]| {
        lines
            .iter()
            .map(|(back, stream, text)| cri_line(at(*back), stream, text))
            .collect::<String>()
    };
    (render(&current), render(&previous))
}

/// KWOK's `ClusterLogs` and `ClusterExec` for every pod on the member.
fn sim_config(dir: &Path, member: &str) -> String {
    let logs = dir.join(LOGS_FILE);
    let previous = dir.join(PREVIOUS_LOGS_FILE);
    let exec = dir.join(EXEC_DIR);
    format!(
        "apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: flotilla-testenv-logs
spec:
  logs:
  - logsFile: {logs:?}
    previousLogsFile: {previous:?}
    follow: true
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata:
  name: flotilla-testenv-exec
spec:
  execs:
  - local:
      workDir: {exec:?}
      envs:
      - name: {EXEC_MEMBER_VAR}
        value: {member:?}
"
    )
}

/// Writes member `member`'s simulated output under `run_dir` (keeping logs already there, so a
/// restarted member's pods keep their history) and returns KWOK's configuration file.
pub fn write_simulation(run_dir: &Path, member: &str) -> Result<PathBuf> {
    let dir = run_dir.join(SIM_DIR);
    fs::create_dir_all(dir.join(EXEC_DIR))
        .with_context(|| format!("creating {}", dir.display()))?;
    let (current, previous) = first_lines(member, Timestamp::now());
    for (name, text) in [(LOGS_FILE, current), (PREVIOUS_LOGS_FILE, previous)] {
        let path = dir.join(name);
        if !path.exists() {
            fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    let config = dir.join(SIM_CONFIG);
    fs::write(&config, sim_config(&dir, member))
        .with_context(|| format!("writing {}", config.display()))?;
    Ok(config)
}

/// The kube-apiserver flags of a member whose Node is played by KWOK: reach the Node at its
/// InternalIP (its name does not resolve) and check KWOK's certificate against the test CA.
pub fn member_apiserver_args(pki: &PkiFiles) -> Vec<String> {
    vec![
        "--kubelet-preferred-address-types=InternalIP".to_string(),
        format!("--kubelet-certificate-authority={}", pki.ca_cert.display()),
    ]
}

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

/// The Node's status: its capacity, and where its kubelet (KWOK's server on `port`) answers.
/// Both addresses are given: KWOK's first stage rewrites the list when either is missing.
fn node_status(port: u16) -> String {
    let resources =
        format!(r#"{{"cpu":"{NODE_CPU}","memory":"{NODE_MEMORY}","pods":"{NODE_PODS}"}}"#);
    format!(
        r#"{{"status":{{"allocatable":{resources},"capacity":{resources},"addresses":[{{"type":"InternalIP","address":"127.0.0.1"}},{{"type":"Hostname","address":"{NODE_NAME}"}}],"daemonEndpoints":{{"kubeletEndpoint":{{"Port":{port}}}}}}}}}"#
    )
}

/// Creates (or keeps) `context`'s fake Node with its bounded capacity, its kubelet on `port`.
pub fn ensure_node(context: &str, port: u16) -> Result<()> {
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
            &node_status(port),
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

/// kwok's flags for a member whose private client config is `kubeconfig`, its stages and
/// simulation configuration, serving the kubelet API on 127.0.0.1:`port`.
pub fn args(
    kubeconfig: &Path,
    stages: &Path,
    simulation: &Path,
    port: u16,
    pki: &PkiFiles,
) -> Vec<String> {
    vec![
        format!("--kubeconfig={}", kubeconfig.display()),
        "--manage-all-nodes=false".to_string(),
        format!("--manage-nodes-with-annotation-selector={NODE_ANNOTATION}=fake"),
        format!("--config={}", stages.display()),
        format!("--config={}", simulation.display()),
        // Pod IPs, apart from the Service range.
        "--cidr=10.244.0.0/16".to_string(),
        "--node-ip=127.0.0.1".to_string(),
        format!("--node-port={port}"),
        format!("--server-address=127.0.0.1:{port}"),
        format!("--tls-cert-file={}", pki.apiserver_cert.display()),
        format!("--tls-private-key-file={}", pki.apiserver_key.display()),
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
        let status: serde_json::Value = serde_json::from_str(&node_status(4242)).expect("json");
        assert_eq!(status["status"]["allocatable"]["cpu"], NODE_CPU);
        assert_eq!(status["status"]["capacity"]["pods"], NODE_PODS);
        assert_eq!(
            status["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"],
            4242
        );
        assert!(node_manifest().contains(&format!("{NODE_ANNOTATION}: fake")));
        let pki = PkiFiles::new(Path::new("pki"));
        let args = args(Path::new("k"), Path::new("s"), Path::new("c"), 4242, &pki);
        assert!(args.contains(&"--manage-all-nodes=false".to_string()));
        // The kubelet API answers on loopback only.
        assert!(args.contains(&"--server-address=127.0.0.1:4242".to_string()));
    }

    #[test]
    fn the_simulated_logs_are_cri_lines_in_time_order() {
        let now: Timestamp = "2026-01-02T03:04:05.5Z".parse().expect("time");
        let (current, previous) = first_lines("member-1", now);
        let times: Vec<Timestamp> = current
            .lines()
            .map(|l| {
                let mut fields = l.splitn(4, ' ');
                let at = fields.next().expect("time").parse().expect("rfc3339");
                assert!(matches!(fields.next(), Some("stdout" | "stderr")), "{l}");
                assert_eq!(fields.next(), Some("F"), "{l}");
                assert!(fields.next().is_some_and(|t| t.starts_with("member-1: ")));
                at
            })
            .collect();
        assert!(times.is_sorted());
        assert_eq!(times.last(), Some(&now));
        assert!(
            current
                .lines()
                .next()
                .is_some_and(|l| l.starts_with("2026-01-02T03:04:02.5"))
        );
        assert_eq!(previous.lines().count(), 2);
    }

    #[test]
    fn the_simulation_names_its_files_and_keeps_old_logs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = write_simulation(dir.path(), "member-2").expect("write");
        let text = fs::read_to_string(&config).expect("config");
        let logs = dir.path().join(SIM_DIR).join(LOGS_FILE);
        assert!(text.contains(&format!("logsFile: {logs:?}")), "{text}");
        assert!(text.contains("kind: ClusterExec"), "{text}");
        fs::write(&logs, "kept").expect("write");
        write_simulation(dir.path(), "member-2").expect("rewrite");
        assert_eq!(fs::read_to_string(&logs).expect("logs"), "kept");
    }
}
