//! `flotilla pods` and `flotilla images`: what the fleet's workloads run, read live on every
//! placed cluster at once (the fan-out `status` and `plan` use, on live clusters and on the
//! demo alike). `pods` lists each workload's pods per cluster with kubectl's STATUS, ready
//! containers, restarts, the last termination, node and age, and names the worst trouble per
//! cell; `images` lists per workload and container the image the fleet renders for each
//! cluster beside the one its live workload asks for and the ones its pods run, and marks
//! where they differ. Both only read. How a pod is classified is the engine's
//! (`engine::health::pods`); which pods a workload owns is the backend's
//! (`backend::fanout::pods`); this file only asks, groups, prints and decides the exit code.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::time::SystemTime;

use serde::Serialize;

use super::scope::{
    Clusters, InputError, Prepared, input_error, prepare_clusters, resource_filter,
};
use crate::backend::fanout::cluster_api::ClusterApi;
use crate::backend::fanout::pods::{
    WORKLOADS, WorkloadPods, read_pods_kept, running_images, template_images,
};
use crate::backend::fanout::targets::Options;
use crate::cli::{GlobalArgs, ImagesArgs, PodsArgs, ScopeArgs, exit};
use crate::engine::health::pods::{
    PodRow, PodTrouble, image_differs, pod_row, short_duration, summary, worst,
};
use crate::model::ResourceRef;
use crate::output::{self, Table};

/// One workload on one cluster in `pods -o json`.
#[derive(Debug, Serialize)]
pub struct PodsItem {
    pub cluster: String,
    pub resource: ResourceRef,
    /// Whether the cluster holds the workload.
    pub held: bool,
    /// The worst of its pods in one line: `2/3 ready, 1 CrashLoopBackOff: exit 1`.
    pub summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst: Option<PodTrouble>,
    pub pods: Vec<PodRow>,
    /// Why the workload or its pods could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
struct PodsList<'a> {
    items: &'a [PodsItem],
}

/// The scope `pods` and `images` hand the fan-out: the clusters, the one workload (if named),
/// the namespace; never a template label selector (`-l` selects pods by their labels).
pub(super) fn scope_of(
    resource: Option<&str>,
    clusters: &[String],
    namespace: Option<&str>,
) -> Result<ScopeArgs, InputError> {
    if let Some(text) = resource {
        let (kind, _, _) = resource_filter(text)?;
        if !WORKLOADS
            .iter()
            .any(|workload| crate::model::names_kind(workload, &kind))
        {
            return Err(InputError(format!(
                "{text:?}: a {kind} has no pods of its own; pods are followed for {}",
                WORKLOADS.join(", ")
            )));
        }
    }
    Ok(ScopeArgs {
        clusters: clusters.to_vec(),
        resources: resource.into_iter().map(str::to_string).collect(),
        workload_argument: true,
        namespace: namespace.map(str::to_string),
        selector: None,
    })
}

/// What `keep` makes of every selected workload's pods on every selected cluster, live or on
/// the demo.
async fn read<T: Send>(
    global: &GlobalArgs,
    scope: &ScopeArgs,
    labels: &str,
    keep: &(dyn Fn(WorkloadPods) -> T + Sync),
) -> Result<Vec<T>, InputError> {
    async fn of<A: ClusterApi, T>(
        prepared: Prepared<A>,
        labels: &str,
        keep: &(dyn Fn(WorkloadPods) -> T + Sync),
    ) -> Vec<T> {
        read_pods_kept(
            &prepared.targets,
            Options::default(),
            &|_| true,
            labels,
            keep,
        )
        .await
    }
    Ok(match prepare_clusters(global, scope, false).await? {
        Clusters::Live(prepared) => of(prepared, labels, keep).await,
        Clusters::Simulated(prepared) => of(prepared, labels, keep).await,
    })
}

/// What `pods` and `images` both start with: the scope checked, then every selected workload's
/// pods read, on the fleet's clusters or a hub's members, each workload's read made into what
/// `keep` returns as it arrives (so the pod objects themselves are not all held at once); an
/// input error is printed and its exit code returned.
async fn read_workloads<T: Send>(
    global: &GlobalArgs,
    command: &str,
    resource: Option<&str>,
    clusters: &[String],
    namespace: Option<&str>,
    labels: &str,
    keep: &(dyn Fn(WorkloadPods) -> T + Sync),
) -> Result<Vec<T>, u8> {
    let scope = scope_of(resource, clusters, namespace).map_err(|InputError(m)| input_error(&m))?;
    if let Some(context) = hub_of(global) {
        let prepared = super::hub::prepared_members(global, &scope, context, command).await?;
        return Ok(read_pods_kept(
            &prepared.targets,
            Options::default(),
            &|_| true,
            labels,
            keep,
        )
        .await);
    }
    read(global, &scope, labels, keep)
        .await
        .map_err(|InputError(m)| input_error(&m))
}

/// The hub `pods`, `images` and `logs` read the members of (`--hub`, unless the demo is asked
/// for): each member through its kubeconfig context or the hub's proxy to it.
pub(super) fn hub_of(global: &GlobalArgs) -> Option<&str> {
    global.hub.as_deref().filter(|_| !global.uses_demo())
}

/// `flotilla pods`.
pub async fn run_pods(
    global: &GlobalArgs,
    args: &PodsArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    // Ages are counted when each workload's read completes, as its pods are made into lines.
    let keep = |workload: WorkloadPods| {
        let now = SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        pods_item(workload, now, args.state)
    };
    let items = match read_workloads(
        global,
        "pods",
        args.resource.as_deref(),
        &args.clusters,
        args.namespace.as_deref(),
        args.selector.as_deref().unwrap_or(""),
        &keep,
    )
    .await
    {
        Ok(items) => items,
        Err(code) => return Ok(code),
    };
    let mut items: Vec<PodsItem> = items
        .into_iter()
        .filter(|item| args.state.is_none() || !item.pods.is_empty() || item.error.is_some())
        .collect();
    items.sort_by(|a, b| {
        (&a.cluster, a.resource.display_key()).cmp(&(&b.cluster, b.resource.display_key()))
    });
    output::write(out, &global.output, &PodsList { items: &items }, || {
        pods_table(&items)
    })?;
    Ok(if items.iter().any(|item| item.error.is_some()) {
        exit::PARTIAL
    } else if items.iter().any(|item| item.worst.is_some()) {
        exit::CHANGES
    } else {
        exit::OK
    })
}

/// One workload's line of `pods`: its pods as rows (only those in `state` when one is asked
/// for), its cell's summary and worst state over all of them.
fn pods_item(workload: WorkloadPods, now: i64, state: Option<PodTrouble>) -> PodsItem {
    let mut pods: Vec<PodRow> = workload.pods.iter().map(|pod| pod_row(pod, now)).collect();
    // The cell's line and worst state are of all its pods, whatever `--state` shows.
    let (line, worst) = (summary(&pods), worst(&pods));
    if let Some(state) = state {
        pods.retain(|pod| pod.trouble == Some(state));
    }
    PodsItem {
        held: workload.live.is_some(),
        summary: match (&workload.error, workload.live.is_some()) {
            (Some(error), _) => error.clone(),
            (None, false) => "not on the cluster".into(),
            (None, true) => line,
        },
        worst,
        cluster: workload.cluster,
        resource: workload.resource,
        pods,
        error: workload.error,
    }
}

fn pods_table(items: &[PodsItem]) -> Table {
    let mut table = Table::new(&[
        "CLUSTER",
        "WORKLOAD",
        "POD",
        "READY",
        "STATUS",
        "RESTARTS",
        "LAST TERMINATION",
        "NODE",
        "AGE",
        "MESSAGE",
    ])
    .wide_only(&["MESSAGE"]);
    for item in items {
        let key = item.resource.display_key();
        for pod in &item.pods {
            let last = pod.last_termination.as_ref().map_or_else(
                || "-".to_string(),
                |last| {
                    let ago = last
                        .age_seconds
                        .map(|age| format!(" {} ago", short_duration(age)))
                        .unwrap_or_default();
                    format!("{} (exit {}){ago}", last.reason, last.exit_code)
                },
            );
            table.row(
                format!("pod/{}", pod.name),
                vec![
                    item.cluster.clone(),
                    key.clone(),
                    pod.name.clone(),
                    format!("{}/{}", pod.ready, pod.containers),
                    pod.status.clone(),
                    pod.restarts.to_string(),
                    last,
                    pod.node.clone().unwrap_or_else(|| "<none>".into()),
                    pod.age_seconds.map_or_else(|| "-".into(), short_duration),
                    pod.message.clone(),
                ],
            );
        }
    }
    // The cells worth a look, one line each, then the fleet's count.
    let troubled: Vec<Vec<String>> = items
        .iter()
        .filter(|item| item.worst.is_some() || item.error.is_some())
        .map(|item| {
            vec![
                item.cluster.clone(),
                item.resource.display_key(),
                item.summary.clone(),
            ]
        })
        .collect();
    if !troubled.is_empty() {
        table.footer("");
        for line in output::aligned(&troubled) {
            table.footer(line);
        }
    }
    let pods: Vec<&PodRow> = items.iter().flat_map(|item| &item.pods).collect();
    let clusters: BTreeSet<&str> = items.iter().map(|item| item.cluster.as_str()).collect();
    let mut counts: BTreeMap<PodTrouble, usize> = BTreeMap::new();
    for pod in &pods {
        if let Some(trouble) = pod.trouble {
            *counts.entry(trouble).or_default() += 1;
        }
    }
    let troubles: Vec<String> = counts
        .iter()
        .map(|(trouble, count)| format!("{count} {trouble}"))
        .collect();
    let failed: BTreeSet<&str> = items
        .iter()
        .filter(|item| item.error.is_some())
        .map(|item| item.cluster.as_str())
        .collect();
    table.footer(format!(
        "Pods: {} in {} workload cells on {} clusters{}{}.",
        pods.len(),
        items.len(),
        clusters.len(),
        if troubles.is_empty() {
            "; none in trouble".to_string()
        } else {
            format!("; {}", troubles.join(", "))
        },
        if failed.is_empty() {
            String::new()
        } else {
            format!(
                "; could not read {}",
                failed.into_iter().collect::<Vec<_>>().join(", ")
            )
        }
    ));
    table
}

/// One workload's container on one cluster in `images -o json`.
#[derive(Debug, Serialize)]
pub struct ImageItem {
    pub cluster: String,
    pub resource: ResourceRef,
    pub container: String,
    /// The image the fleet renders for this cluster.
    pub desired: String,
    /// The image the live workload's pod template asks for (`null`: not held, or unread).
    pub live: Option<String>,
    /// The images its pods run, sorted.
    pub running: Vec<String>,
    /// Whether the live template or a running pod differs from the desired image.
    pub skew: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
struct ImagesList<'a> {
    items: &'a [ImageItem],
}

/// `flotilla images`.
pub async fn run_images(
    global: &GlobalArgs,
    args: &ImagesArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let items = match read_workloads(
        global,
        "images",
        args.resource.as_deref(),
        &args.clusters,
        args.namespace.as_deref(),
        "",
        &image_items,
    )
    .await
    {
        Ok(items) => items,
        Err(code) => return Ok(code),
    };
    let mut items: Vec<ImageItem> = items.into_iter().flatten().collect();
    items.sort_by(|a, b| {
        (a.resource.display_key(), &a.container, &a.cluster).cmp(&(
            b.resource.display_key(),
            &b.container,
            &b.cluster,
        ))
    });
    output::write(out, &global.output, &ImagesList { items: &items }, || {
        images_table(&items)
    })?;
    Ok(if items.iter().any(|item| item.error.is_some()) {
        exit::PARTIAL
    } else if items.iter().any(|item| item.skew) {
        exit::CHANGES
    } else {
        exit::OK
    })
}

/// One workload's lines of `images`: per container of its template, the image the fleet
/// renders beside the one its live workload asks for and the ones its pods run.
fn image_items(workload: WorkloadPods) -> Vec<ImageItem> {
    let live: BTreeMap<String, String> = workload
        .live
        .as_ref()
        .map(template_images)
        .unwrap_or_default()
        .into_iter()
        .collect();
    template_images(&workload.desired)
        .into_iter()
        .map(|(container, desired)| {
            let running: Vec<String> = running_images(&workload.pods, &container)
                .into_iter()
                .collect();
            let live = live.get(&container).cloned();
            let running_now: Vec<&str> = running.iter().map(String::as_str).collect();
            let skew = image_differs(&desired, live.as_deref(), &running_now);
            ImageItem {
                cluster: workload.cluster.clone(),
                resource: workload.resource.clone(),
                container,
                desired,
                live,
                running,
                skew,
                error: workload.error.clone(),
            }
        })
        .collect()
}

fn images_table(items: &[ImageItem]) -> Table {
    let mut table = Table::new(&[
        "WORKLOAD",
        "CONTAINER",
        "CLUSTER",
        "DESIRED",
        "LIVE",
        "RUNNING",
        "SKEW",
    ])
    .wide_only(&["LIVE"]);
    for item in items {
        let key = item.resource.display_key();
        table.row(
            key.clone(),
            vec![
                key,
                item.container.clone(),
                item.cluster.clone(),
                item.desired.clone(),
                item.live.clone().unwrap_or_else(|| "-".into()),
                match (&item.error, item.running.is_empty()) {
                    (Some(error), _) => error.clone(),
                    (None, true) => "-".into(),
                    (None, false) => item.running.join(", "),
                },
                if item.skew { "yes" } else { "" }.into(),
            ],
        );
    }
    // Per workload and container: which clusters run something other than desired.
    let mut skewed: BTreeMap<(String, &str), Vec<&str>> = BTreeMap::new();
    for item in items.iter().filter(|item| item.skew) {
        skewed
            .entry((item.resource.display_key(), item.container.as_str()))
            .or_default()
            .push(item.cluster.as_str());
    }
    table.footer("");
    if skewed.is_empty() {
        table.footer("Images: every cluster runs the desired image.");
    } else {
        for ((key, container), clusters) in &skewed {
            table.footer(format!(
                "{key} {container}: {} run an image other than the desired one.",
                clusters.join(", ")
            ));
        }
    }
    table
}
