//! The test environment as the benches on it see it: its kubeconfig (from
//! `FLOTILLA_TESTENV_KUBECONFIG`), its record (`target/testenv/state.json`), the raw-contexts
//! tier's members and which member each context `c0000`… reaches, each member's simulated
//! container log (the file KWOK serves every pod's log from), and a Deployment placed on every
//! member with kubectl (its pods run on KWOK's Node), waited for, and removed again. It only
//! touches the test environment's own members, and only the Deployment it names and the log
//! files it is asked to append to; it measures nothing.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `FLOTILLA_TESTENV_KUBECONFIG`, relative to the repository when it is relative.
pub fn kubeconfig() -> Option<PathBuf> {
    let raw = std::env::var_os("FLOTILLA_TESTENV_KUBECONFIG")?;
    let path = PathBuf::from(raw);
    Some(if path.is_relative() {
        root().join(path)
    } else {
        path
    })
}

/// The test environment's record (pids of its servers, scale size, proxies).
pub fn state() -> Option<Value> {
    let path = root().join("target/testenv/state.json");
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

/// One member of the plain tier: its name (also its kubeconfig context) and the simulated log
/// every pod on it prints.
#[derive(Debug, Clone)]
pub struct Member {
    pub name: String,
    pub port: u16,
    pub log: PathBuf,
}

/// The members the record names, in its order.
pub fn members(state: &Value) -> Vec<Member> {
    state["clusters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|cluster| {
            let name = cluster["name"].as_str()?;
            let port = u16::try_from(cluster["port"].as_u64()?).ok()?;
            name.starts_with("member-").then(|| Member {
                name: name.to_string(),
                port,
                log: root()
                    .join("target/testenv/run")
                    .join(name)
                    .join("kwok/current.log"),
            })
        })
        .collect()
}

/// For each of the raw-contexts tier's contexts (by name), the member its proxy forwards to,
/// as toxiproxy's own configuration says.
pub fn member_of_context(members: &[Member]) -> BTreeMap<String, String> {
    let path = root().join("target/testenv/run/toxiproxy/proxies.json");
    let proxies: Value = fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    proxies
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|proxy| {
            let name = proxy["name"].as_str()?;
            let port: u16 = proxy["upstream"]
                .as_str()?
                .rsplit(':')
                .next()?
                .parse()
                .ok()?;
            let member = members.iter().find(|m| m.port == port)?;
            Some((name.to_string(), member.name.clone()))
        })
        .collect()
}

fn kubectl(kubeconfig: &Path, context: &str, args: &[&str], stdin: Option<&str>) -> Option<String> {
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--context", context])
        .args(args)
        .env_remove("KUBECONFIG")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        std::io::Write::write_all(&mut pipe, text.as_bytes()).ok()?;
    }
    let output = child.wait_with_output().ok()?;
    if !output.status.success() {
        eprintln!(
            "kubectl {} on {context}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
        return None;
    }
    String::from_utf8(output.stdout).ok()
}

/// The Deployment `default/NAME` of `replicas` pods of one container `app`, as a fleet
/// directory's template and as it is applied to the members.
pub fn deployment_yaml(name: &str, replicas: usize) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: default}}\n\
         spec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n  \
         template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      \
         containers:\n      - {{name: app, image: registry.example/{name}:1}}\n"
    )
}

/// An inventory of the contexts `c0000`… (`clusters` of them), each a Karmada Cluster.
pub fn inventory(clusters: usize) -> String {
    (0..clusters)
        .map(|index| {
            format!(
                "---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {{name: c{index:04}}}\nspec: {{syncMode: Push}}\n"
            )
        })
        .collect()
}

/// A fleet directory whose inventory is the contexts `c0000`… (`clusters` of them) and whose
/// one template, the Deployment `default/NAME`, a PropagationPolicy places on every one.
pub fn deployment_everywhere(clusters: usize, name: &str, replicas: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::write(dir.path().join("clusters.yaml"), inventory(clusters)).expect("inventory");
    let policy = format!(
        "---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\n\
         metadata: {{name: {name}, namespace: default}}\nspec:\n  resourceSelectors:\n  \
         - {{apiVersion: apps/v1, kind: Deployment, name: {name}}}\n  placement: {{}}\n"
    );
    fs::write(
        dir.path().join("workload.yaml"),
        deployment_yaml(name, replicas) + &policy,
    )
    .expect("workload");
    dir
}

/// The pods of `default/NAME` on one member.
fn pods(kubeconfig: &Path, member: &str, name: &str) -> Vec<Value> {
    kubectl(
        kubeconfig,
        member,
        &[
            "get",
            "pods",
            "-n",
            "default",
            "-l",
            &format!("app={name}"),
            "-o",
            "json",
        ],
        None,
    )
    .and_then(|text| serde_json::from_str::<Value>(&text).ok())
    .and_then(|list| list["items"].as_array().cloned())
    .unwrap_or_default()
}

/// Applies `default/NAME` to every member and waits until each runs `replicas` Running pods.
/// False when they did not within two minutes.
pub fn place(kubeconfig: &Path, members: &[Member], name: &str, replicas: usize) -> bool {
    let manifest = deployment_yaml(name, replicas);
    for member in members {
        if kubectl(
            kubeconfig,
            &member.name,
            &["apply", "-f", "-"],
            Some(&manifest),
        )
        .is_none()
        {
            return false;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    for member in members {
        loop {
            let running = pods(kubeconfig, &member.name, name)
                .iter()
                .filter(|pod| {
                    pod["status"]["phase"] == "Running"
                        && pod["metadata"]["deletionTimestamp"].is_null()
                })
                .count();
            if running == replicas {
                break;
            }
            if Instant::now() > deadline {
                eprintln!(
                    "{}: {running} of {replicas} pods of {name} Running",
                    member.name
                );
                return false;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    true
}

/// Writes one pod of `default/NAME` on each member into a crash loop, as a kubelet reports
/// one (through the status subresource: KWOK's stages leave a running pod's status alone).
/// How many members have one.
pub fn crash_one_pod_each(kubeconfig: &Path, members: &[Member], name: &str) -> usize {
    let status = serde_json::json!({"status": {"containerStatuses": [{
        "name": "app", "image": format!("registry.example/{name}:1"), "imageID": "",
        "ready": false, "started": false, "restartCount": 5,
        "state": {"waiting": {"reason": "CrashLoopBackOff",
            "message": "back-off 2m40s restarting failed container"}},
        "lastState": {"terminated": {"reason": "Error", "exitCode": 1,
            "startedAt": "2026-01-01T00:00:00Z", "finishedAt": "2026-01-01T00:00:05Z"}},
    }]}})
    .to_string();
    members
        .iter()
        .filter(|member| {
            let mut names: Vec<String> = pods(kubeconfig, &member.name, name)
                .iter()
                .filter_map(|pod| pod["metadata"]["name"].as_str().map(str::to_string))
                .collect();
            names.sort();
            names.first().is_some_and(|pod| {
                kubectl(
                    kubeconfig,
                    &member.name,
                    &[
                        "patch",
                        "pod",
                        pod,
                        "-n",
                        "default",
                        "--subresource=status",
                        "--type=strategic",
                        "-p",
                        &status,
                    ],
                    None,
                )
                .is_some()
            })
        })
        .count()
}

/// Deletes `default/NAME` from every member and waits for its pods to go, so the members'
/// Nodes have their room back for what runs next.
pub fn remove(kubeconfig: &Path, members: &[Member], name: &str) {
    for member in members {
        let _ = kubectl(
            kubeconfig,
            &member.name,
            &[
                "delete",
                "deployment",
                name,
                "-n",
                "default",
                "--ignore-not-found",
                "--cascade=foreground",
                "--wait=true",
                "--timeout=120s",
            ],
            None,
        );
    }
}

/// A line of a container log as the kubelet stores it (CRI: time, stream, full-line tag), as
/// the test environment writes the members' simulated logs.
pub fn cri_line(text: &str) -> String {
    format!("{} stdout F {text}\n", k8s_openapi::jiff::Timestamp::now())
}
