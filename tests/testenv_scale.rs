//! Hub mode at fleet size, against the scale environment (`cargo xtask testenv up --scale
//! karmada|ocm --clusters 500 --resources 20`: a real kube-apiserver holding what a real hub
//! of 500 clusters and 20 resources holds, written by the loader with statuses, no
//! controllers). The user-visible outcomes: `flotilla --hub hub clusters -o json` lists every
//! cluster with the hub's labels and health; the console's cells on the hub are exactly the
//! statuses the hub's Works (ManifestWorks) hold, 10,000 of them; and a status changed on the
//! hub with kubectl (what a member's agent does) reaches its cell. `cargo xtask test` runs them
//! in the scale step (their names start with `scale_karmada_` and `scale_ocm_`, which the
//! other steps skip), each against its own hub kind.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use flotilla::model::StatusKind;
use serde_json::Value;

const KUBECONFIG_VAR: &str = "FLOTILLA_TESTENV_KUBECONFIG";
/// How long the console gets to see a status written on the hub.
const SEE_CHANGE: Duration = Duration::from_secs(180);

fn kubeconfig() -> PathBuf {
    let raw = std::env::var_os(KUBECONFIG_VAR).unwrap_or_else(|| {
        panic!(
            "these tests need the scale environment: `cargo xtask testenv up --scale karmada \
             --clusters 500 --resources 20` and {KUBECONFIG_VAR}=target/testenv/kubeconfig"
        )
    });
    let path = PathBuf::from(raw);
    if path.is_relative() {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
    } else {
        path
    }
}

fn kubectl(args: &[&str]) -> String {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig())
        .args(["--context", "hub", "--request-timeout=120s"])
        .args(args)
        .output()
        .expect("run kubectl");
    assert!(
        out.status.success(),
        "kubectl {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// Panics with instructions unless the hub serves `resource` (the scale hub's kind).
fn scale_hub(resource: &str, kind: &str) {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig())
        .args(["--context", "hub", "get", resource, "-l"])
        .arg("scale.flotilla.dev/loader=true")
        .args(["-o", "name", "--request-timeout=60s"])
        .output()
        .expect("run kubectl");
    assert!(
        out.status.success() && !out.stdout.is_empty(),
        "these tests need the {kind} scale environment: `cargo xtask testenv up --scale {kind} \
         --clusters 500 --resources 20` ({})",
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

/// `flotilla --hub hub clusters -o json`'s items.
fn flotilla_clusters() -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--kubeconfig")
        .arg(kubeconfig())
        .args(["--hub", "hub", "clusters", "-o", "json"])
        .env_remove("KUBECONFIG")
        .output()
        .expect("run flotilla");
    let value: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let items = value["items"].as_array().cloned().unwrap_or_default();
    // Exit 3 exactly when a member could not be reached or read.
    let failed = items
        .iter()
        .any(|item| item["health"] == "Unreachable" || item["health"] == "Unauthorized");
    assert_eq!(
        out.status.code(),
        Some(if failed { 3 } else { 0 }),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    items
}

/// The hub's clusters (`kubectl get <resource> -o json`) as name → labels.
fn hub_cluster_labels(resource: &str) -> BTreeMap<String, Value> {
    let list: Value =
        serde_json::from_str(&kubectl(&["get", resource, "-o", "json"])).expect("JSON");
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|c| {
            (
                c["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                c["metadata"]["labels"].clone(),
            )
        })
        .collect()
}

/// `flotilla --hub hub clusters` lists every cluster of the hub with its labels, Ready.
fn clusters_match_the_hub(resource: &str) -> usize {
    let hub = hub_cluster_labels(resource);
    let listed = flotilla_clusters();
    assert_eq!(listed.len(), hub.len(), "one line per cluster of the hub");
    for item in &listed {
        let name = item["name"].as_str().unwrap_or_default();
        let labels = hub
            .get(name)
            .unwrap_or_else(|| panic!("{name} is a cluster of the hub"));
        for key in ["region", "tier"] {
            assert_eq!(item["labels"][key], labels[key], "{name}'s {key}");
        }
        assert_eq!(item["health"], "Ready", "{name}: {item}");
    }
    hub.len()
}

/// The console's session on the hub and its backend's events.
struct HubConsole {
    runtime: tokio::runtime::Runtime,
    events: tokio::sync::mpsc::UnboundedReceiver<flotilla::messages::BackendEvent>,
    session: flotilla::app::Session,
}

impl HubConsole {
    fn start() -> HubConsole {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        let (events_tx, events) = tokio::sync::mpsc::unbounded_channel();
        let path = kubeconfig();
        let started = runtime
            .block_on(flotilla::launch::start_hub(
                Some(&path),
                "hub",
                true,
                events_tx,
            ))
            .expect("start the hub session");
        let state = flotilla::app::state_for_fleet(&started.fleet, started.traits.label.clone());
        let session = started.session(state);
        HubConsole {
            runtime,
            events,
            session,
        }
    }

    /// Every cell: (`Kind/ns/name`, cluster) → its status kind.
    fn cells(&self) -> BTreeMap<(String, String), StatusKind> {
        let state = &self.session.state;
        let mut cells = BTreeMap::new();
        for (r, row) in state.resources.iter().enumerate() {
            for (c, cluster) in state.fleet.clusters.iter().enumerate() {
                let kind = state.cells.kind(r, c);
                if kind != StatusKind::NotPlaced {
                    cells.insert((row.target.display_key(), cluster.name.clone()), kind);
                }
            }
        }
        cells
    }

    /// Whether the hub's first read reached the cells (the loader leaves no cell pending;
    /// before that read every cell is).
    fn synced(&self) -> bool {
        let cells = self.cells();
        !cells.is_empty() && cells.values().all(|k| *k != StatusKind::Pending)
    }

    /// Dispatches backend events until `done` holds; panics after `limit`.
    fn pump_until(&mut self, limit: Duration, done: &dyn Fn(&HubConsole) -> bool) {
        let deadline = Instant::now() + limit;
        while !done(self) {
            assert!(
                Instant::now() < deadline,
                "timed out; notice: {:?}",
                self.session.state.notice
            );
            let next = self.runtime.block_on(async {
                tokio::time::timeout(Duration::from_millis(500), self.events.recv()).await
            });
            match next {
                Ok(Some(event)) => self.session.dispatch(flotilla::app::Action::Backend(event)),
                Ok(None) => panic!("the hub backend stopped"),
                Err(_) => {}
            }
        }
    }
}

/// What the hub's Works say, from the API server's own table (`kubectl get works -A`):
/// (`Deployment/scale-apps/<template>`, cluster) → InSync when Applied, Failed when not.
fn karmada_work_states() -> BTreeMap<(String, String), StatusKind> {
    kubectl(&["get", "works", "-A", "--no-headers"])
        .lines()
        .filter_map(|line| {
            let [namespace, name, _kind, applied, ..] =
                line.split_whitespace().collect::<Vec<_>>()[..]
            else {
                return None;
            };
            let cluster = namespace.strip_prefix("karmada-es-")?;
            // `<template>-<hash>`: Karmada's Work name.
            let (template, _) = name.rsplit_once('-')?;
            let kind = match applied {
                "True" => StatusKind::InSync,
                "False" => StatusKind::Failed,
                _ => StatusKind::Pending,
            };
            Some((
                (
                    format!("Deployment/scale-apps/{template}"),
                    cluster.to_string(),
                ),
                kind,
            ))
        })
        .collect()
}

fn counts(cells: &BTreeMap<(String, String), StatusKind>) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for kind in cells.values() {
        *out.entry(format!("{kind:?}")).or_default() += 1;
    }
    out
}

#[test]
#[ignore = "needs `cargo xtask testenv up --scale karmada --clusters 500 --resources 20`"]
fn scale_karmada_hub_lists_every_cluster_and_shows_every_works_status() {
    scale_hub("clusters.cluster.karmada.io", "karmada");
    let clusters = clusters_match_the_hub("clusters.cluster.karmada.io");

    let mut console = HubConsole::start();
    console.pump_until(SEE_CHANGE, &HubConsole::synced);
    let hub = karmada_work_states();
    let cells = console.cells();
    assert_eq!(
        cells.len(),
        hub.len(),
        "a cell per Work ({} clusters): {:?}",
        clusters,
        counts(&cells)
    );
    assert_eq!(counts(&cells), counts(&hub), "the same statuses");
    assert_eq!(cells, hub, "each cell is its Work's status");
    assert!(
        hub.values().any(|k| *k == StatusKind::Failed),
        "the loader left some Works failed"
    );

    // What a member's execution controller writes when an apply fails.
    let ((row, cluster), _) = hub
        .iter()
        .find(|(_, k)| **k == StatusKind::InSync)
        .expect("an applied Work");
    let template = row.rsplit('/').next().expect("name");
    let namespace = format!("karmada-es-{cluster}");
    let work = kubectl(&["get", "works", "-n", &namespace, "-o", "name"])
        .lines()
        .find(|w| w.starts_with(&format!("work.work.karmada.io/{template}-")))
        .expect("the Work")
        .to_string();
    let patch = serde_json::json!({"status": {"conditions": [{
        "type": "Applied", "status": "False", "reason": "AppliedFailed",
        "message": "Failed to apply all manifests (0/1): changed by the scale test",
        "lastTransitionTime": "2026-12-01T00:00:00Z"}]}});
    kubectl(&[
        "patch",
        &work,
        "-n",
        &namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch.to_string(),
    ]);
    let key = (row.clone(), cluster.clone());
    console.pump_until(SEE_CHANGE, &|c| {
        c.cells().get(&key) == Some(&StatusKind::Failed)
    });
    let (r, c) = {
        let state = &console.session.state;
        let r = state
            .resources
            .iter()
            .position(|x| x.target.display_key() == *row)
            .expect("row");
        (r, state.fleet.cluster_index(cluster).expect("cluster"))
    };
    let flotilla::model::CellStatus::Failed(reason) = console.session.state.cells.status(r, c)
    else {
        panic!("the cell failed");
    };
    assert!(reason.contains("changed by the scale test"), "{reason}");
    let mut expected = hub.clone();
    expected.insert(key, StatusKind::Failed);
    assert_eq!(console.cells(), expected, "only that cell changed");
}

/// What the hub's ManifestWorks say: (`Deployment/scale-apps/<name>`, cluster) → InSync
/// when the manifest is Available, Missing when it is not.
fn ocm_work_states() -> BTreeMap<(String, String), StatusKind> {
    let list: Value = serde_json::from_str(&kubectl(&["get", "manifestworks", "-A", "-o", "json"]))
        .expect("JSON");
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|w| {
            let manifest = &w["spec"]["workload"]["manifests"][0];
            let available = w["status"]["resourceStatus"]["manifests"][0]["conditions"]
                .as_array()
                .and_then(|c| c.iter().find(|c| c["type"] == "Available"))
                .map(|c| c["status"].clone());
            (
                (
                    format!(
                        "Deployment/{}/{}",
                        manifest["metadata"]["namespace"]
                            .as_str()
                            .unwrap_or_default(),
                        manifest["metadata"]["name"].as_str().unwrap_or_default()
                    ),
                    w["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                ),
                match available.as_ref().and_then(Value::as_str) {
                    Some("True") => StatusKind::InSync,
                    Some("False") => StatusKind::Missing,
                    _ => StatusKind::Pending,
                },
            )
        })
        .collect()
}

#[test]
#[ignore = "needs `cargo xtask testenv up --scale ocm --clusters 500 --resources 20`"]
fn scale_ocm_hub_lists_every_cluster_and_shows_every_manifestworks_status() {
    scale_hub("managedclusters", "ocm");
    clusters_match_the_hub("managedclusters");

    let mut console = HubConsole::start();
    console.pump_until(SEE_CHANGE, &HubConsole::synced);
    let hub = ocm_work_states();
    let cells = console.cells();
    assert_eq!(counts(&cells), counts(&hub), "the same statuses");
    assert_eq!(cells, hub, "each cell is its ManifestWork's status");
    assert!(
        hub.values().any(|k| *k == StatusKind::Missing),
        "the loader left some manifests not Available"
    );

    // What a cluster's work agent writes when the Deployment stops being available.
    let ((row, cluster), _) = hub
        .iter()
        .find(|(_, k)| **k == StatusKind::InSync)
        .expect("an available ManifestWork");
    let name = format!("{}-work", row.rsplit('/').next().expect("name"));
    let mut status: Value = serde_json::from_str(&kubectl(&[
        "get",
        "manifestwork",
        &name,
        "-n",
        cluster,
        "-o",
        "json",
    ]))
    .expect("JSON");
    for condition in status["status"]["resourceStatus"]["manifests"][0]["conditions"]
        .as_array_mut()
        .expect("conditions")
    {
        if condition["type"] == "Available" {
            condition["status"] = "False".into();
            condition["reason"] = "ResourceNotAvailable".into();
            condition["message"] = "changed by the scale test".into();
        }
    }
    let patch = serde_json::json!({"status": status["status"]});
    kubectl(&[
        "patch",
        "manifestwork",
        &name,
        "-n",
        cluster,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch.to_string(),
    ]);
    let key = (row.clone(), cluster.clone());
    console.pump_until(SEE_CHANGE, &|c| {
        c.cells().get(&key) == Some(&StatusKind::Missing)
    });
    let mut expected = hub.clone();
    expected.insert(key, StatusKind::Missing);
    assert_eq!(console.cells(), expected, "only that cell changed");
}
