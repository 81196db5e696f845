//! The scale hub's loader: writes the objects of `scale_objects` through the hub's API server
//! (context `hub` of `target/testenv/kubeconfig`) with a bounded number of requests in flight,
//! each object created and then given its status through the status subresource, printing a
//! progress line (objects/s) per phase and the total; and the churn loop that keeps changing
//! Work (ManifestWork) statuses at a set rate. It only talks to the test environment's hub.

use std::future::Future;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use futures::{StreamExt as _, TryStreamExt as _};
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;
use kube::{Client, Config};
use serde_json::{Value, json};

use crate::paths;
use crate::scale_objects::{
    self as objects, APPS_NAMESPACE, cluster_name, karmada, loaded_failed, ocm,
};
use crate::state::ScaleKind;

/// Requests in flight at once: enough to keep the API server's two cores busy, far below its
/// default 200 mutating requests in flight.
const IN_FLIGHT: usize = 48;
/// How often a phase prints its progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);
/// How many bindings are written at once: a binding to 2,000 clusters is close to 1 MB,
/// and many at once push the API server's writes past its 60 s timeout.
fn bindings_in_flight(clusters: usize) -> usize {
    (IN_FLIGHT * 50 / clusters.max(1)).clamp(1, IN_FLIGHT)
}
/// Attempts per request on a transient failure (timeout, 429, 5xx).
const ATTEMPTS: u32 = 6;

/// The loaded size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub kind: ScaleKind,
    pub clusters: usize,
    pub resources: usize,
}

/// What a load wrote, and how long it took.
#[derive(Debug, Clone, Copy, Default)]
pub struct Report {
    pub objects: u64,
    pub requests: u64,
    pub seconds: f64,
}

fn now() -> String {
    objects::rfc3339(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    )
}

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: if group.is_empty() {
            version.into()
        } else {
            format!("{group}/{version}")
        },
        kind: kind.into(),
        plural: plural.into(),
    }
}

fn namespaces() -> ApiResource {
    resource("", "v1", "Namespace", "namespaces")
}
fn deployments() -> ApiResource {
    resource("apps", "v1", "Deployment", "deployments")
}
fn karmada_clusters() -> ApiResource {
    resource("cluster.karmada.io", "v1alpha1", "Cluster", "clusters")
}
fn propagation_policies() -> ApiResource {
    resource(
        "policy.karmada.io",
        "v1alpha1",
        "PropagationPolicy",
        "propagationpolicies",
    )
}
fn resource_bindings() -> ApiResource {
    resource(
        "work.karmada.io",
        "v1alpha2",
        "ResourceBinding",
        "resourcebindings",
    )
}
fn works() -> ApiResource {
    resource("work.karmada.io", "v1alpha1", "Work", "works")
}
const OCM_CLUSTER: &str = "cluster.open-cluster-management.io";
fn managed_clusters() -> ApiResource {
    resource(OCM_CLUSTER, "v1", "ManagedCluster", "managedclusters")
}
fn cluster_sets() -> ApiResource {
    resource(
        OCM_CLUSTER,
        "v1beta2",
        "ManagedClusterSet",
        "managedclustersets",
    )
}
fn set_bindings() -> ApiResource {
    resource(
        OCM_CLUSTER,
        "v1beta2",
        "ManagedClusterSetBinding",
        "managedclustersetbindings",
    )
}
fn placements() -> ApiResource {
    resource(OCM_CLUSTER, "v1beta1", "Placement", "placements")
}
fn decisions() -> ApiResource {
    resource(
        OCM_CLUSTER,
        "v1beta1",
        "PlacementDecision",
        "placementdecisions",
    )
}
fn manifest_works() -> ApiResource {
    resource(
        "work.open-cluster-management.io",
        "v1",
        "ManifestWork",
        "manifestworks",
    )
}

/// A client for the hub context of the test environment's kubeconfig.
pub async fn hub_client() -> Result<Client> {
    let path = paths::kubeconfig();
    let kubeconfig =
        Kubeconfig::read_from(&path).with_context(|| format!("reading {}", path.display()))?;
    let options = KubeConfigOptions {
        context: Some("hub".into()),
        ..KubeConfigOptions::default()
    };
    let mut config = Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .context("the hub context of the test environment's kubeconfig")?;
    config.read_timeout = Some(Duration::from_secs(60));
    Client::try_from(config).context("a client for the hub")
}

fn api(client: &Client, ar: &ApiResource, namespace: Option<&str>) -> Api<DynamicObject> {
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, ar),
        None => Api::all_with(client.clone(), ar),
    }
}

/// Whether a failed request is worth another attempt.
fn transient(err: &kube::Error) -> bool {
    match err {
        kube::Error::Api(status) => status.code == 429 || status.code >= 500,
        _ => true,
    }
}

async fn with_retries<T, F, Fut>(what: &str, mut attempt: F) -> Result<T>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = std::result::Result<T, kube::Error>>,
{
    let mut delay = Duration::from_millis(200);
    for n in 1..=ATTEMPTS {
        match attempt(n).await {
            Ok(value) => return Ok(value),
            Err(err) if n < ATTEMPTS && transient(&err) => {
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(5));
            }
            Err(err) => return Err(anyhow::Error::new(err).context(what.to_string())),
        }
    }
    bail!("{what}: out of attempts")
}

/// Creates `body` (an object of `ar`), then, with `status`, writes its status through the
/// status subresource. Returns the created object's uid. A create retried after a timeout
/// may find the object there already: that counts as created.
async fn put(
    client: &Client,
    ar: ApiResource,
    body: Value,
    status: Option<Value>,
) -> Result<String> {
    let namespace = body["metadata"]["namespace"].as_str().map(str::to_string);
    let name = body["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let what = format!(
        "{} {}{name}",
        ar.kind,
        namespace
            .as_deref()
            .map(|ns| format!("{ns}/"))
            .unwrap_or_default()
    );
    let api = api(client, &ar, namespace.as_deref());
    let object: DynamicObject =
        serde_json::from_value(body).with_context(|| format!("{what}: not an object"))?;
    let created = with_retries(&format!("creating {what}"), |n| {
        let api = api.clone();
        let object = object.clone();
        let name = name.clone();
        async move {
            match api.create(&PostParams::default(), &object).await {
                Err(kube::Error::Api(status)) if n > 1 && status.is_already_exists() => {
                    api.get(&name).await
                }
                other => other,
            }
        }
    })
    .await?;
    if let Some(status) = status {
        let patch = json!({ "status": status });
        with_retries(&format!("writing the status of {what}"), |_| {
            let api = api.clone();
            let patch = patch.clone();
            let name = name.clone();
            async move {
                api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
            }
        })
        .await?;
    }
    Ok(created.metadata.uid.unwrap_or_default())
}

/// Writes `items` (each one object, `requests` requests) with at most `in_flight` objects
/// at once, printing progress; returns the per-item results in order.
async fn phase<T, R, F, Fut>(
    label: &str,
    items: Vec<T>,
    requests: u64,
    in_flight: usize,
    report: &mut Report,
    write: F,
) -> Result<Vec<R>>
where
    F: Fn(T) -> Fut,
    Fut: Future<Output = Result<R>>,
{
    let total = items.len();
    let started = Instant::now();
    let mut last = Instant::now();
    let mut done = 0usize;
    let mut results = Vec::with_capacity(total);
    // Each object's requests run one after the other: as many requests as objects in flight.
    let mut stream = futures::stream::iter(items.into_iter().map(&write)).buffered(in_flight);
    while let Some(result) = stream.try_next().await? {
        results.push(result);
        done += 1;
        if last.elapsed() >= PROGRESS_EVERY {
            last = Instant::now();
            let secs = started.elapsed().as_secs_f64();
            say!(
                "testenv: scale loader: {label} {done}/{total} ({:.0} objects/s)",
                done as f64 / secs
            );
        }
    }
    let secs = started.elapsed().as_secs_f64();
    say!(
        "testenv: scale loader: {total} {label} in {secs:.1} s ({:.0} objects/s)",
        total as f64 / secs.max(0.001)
    );
    report.objects += total as u64;
    report.requests += total as u64 * requests;
    Ok(results)
}

/// Loads a hub of `size` (the hub's APIs must be installed and the hub empty).
pub async fn load(size: Size) -> Result<Report> {
    let client = hub_client().await?;
    let started = Instant::now();
    let mut report = Report::default();
    let now = now();
    match size.kind {
        ScaleKind::Karmada => load_karmada(&client, size, &now, &mut report).await?,
        ScaleKind::Ocm => load_ocm(&client, size, &now, &mut report).await?,
    }
    report.seconds = started.elapsed().as_secs_f64();
    say!(
        "testenv: scale loader: {} objects ({} requests) in {:.1} s: {:.0} objects/s, {:.0} requests/s",
        report.objects,
        report.requests,
        report.seconds,
        report.objects as f64 / report.seconds.max(0.001),
        report.requests as f64 / report.seconds.max(0.001)
    );
    Ok(report)
}

/// Every (resource, cluster), resource by resource (as Karmada's binding controller and an
/// OCM user's tooling write them).
fn pairs(resources: usize, clusters: usize) -> Vec<(usize, usize)> {
    (0..resources)
        .flat_map(|r| (0..clusters).map(move |c| (r, c)))
        .collect()
}

async fn load_karmada(client: &Client, size: Size, now: &str, report: &mut Report) -> Result<()> {
    let Size {
        clusters,
        resources,
        ..
    } = size;
    let mut names = vec![APPS_NAMESPACE.to_string()];
    names.extend((0..clusters).map(karmada::member_namespace));
    phase("namespaces", names, 1, IN_FLIGHT, report, |name| {
        put(client, namespaces(), objects::namespace(&name), None)
    })
    .await?;
    phase(
        "Clusters",
        (0..clusters).collect(),
        2,
        IN_FLIGHT,
        report,
        |c| {
            put(
                client,
                karmada_clusters(),
                karmada::cluster(c),
                Some(karmada::cluster_status(now)),
            )
        },
    )
    .await?;
    let uids = phase(
        "templates (Deployments)",
        (0..resources).collect(),
        2,
        IN_FLIGHT,
        report,
        |r| {
            put(
                client,
                deployments(),
                karmada::template(r),
                Some(karmada::template_status(clusters)),
            )
        },
    )
    .await?;
    phase(
        "PropagationPolicies",
        (0..resources).collect(),
        1,
        IN_FLIGHT,
        report,
        |r| put(client, propagation_policies(), karmada::policy(r), None),
    )
    .await?;
    phase(
        "ResourceBindings",
        uids.into_iter().enumerate().collect(),
        2,
        bindings_in_flight(clusters),
        report,
        |(r, uid)| {
            put(
                client,
                resource_bindings(),
                karmada::binding(r, clusters, &uid),
                Some(karmada::binding_status(r, clusters, now)),
            )
        },
    )
    .await?;
    phase(
        "Works",
        pairs(resources, clusters),
        2,
        IN_FLIGHT,
        report,
        |(r, c)| {
            put(
                client,
                works(),
                karmada::work(r, c),
                Some(karmada::work_status(r, !loaded_failed(r, c), now)),
            )
        },
    )
    .await?;
    Ok(())
}

async fn load_ocm(client: &Client, size: Size, now: &str, report: &mut Report) -> Result<()> {
    let Size {
        clusters,
        resources,
        ..
    } = size;
    let mut names = vec![APPS_NAMESPACE.to_string()];
    names.extend((0..clusters).map(cluster_name));
    phase("namespaces", names, 1, IN_FLIGHT, report, |name| {
        put(client, namespaces(), objects::namespace(&name), None)
    })
    .await?;
    phase("ManagedClusterSets", vec![()], 2, IN_FLIGHT, report, |()| {
        put(
            client,
            cluster_sets(),
            ocm::cluster_set(),
            Some(ocm::cluster_set_status(now)),
        )
    })
    .await?;
    phase(
        "ManagedClusterSetBindings",
        vec![()],
        2,
        IN_FLIGHT,
        report,
        |()| {
            put(
                client,
                set_bindings(),
                ocm::set_binding(),
                Some(ocm::set_binding_status(now)),
            )
        },
    )
    .await?;
    phase(
        "ManagedClusters",
        (0..clusters).collect(),
        2,
        IN_FLIGHT,
        report,
        |c| {
            put(
                client,
                managed_clusters(),
                ocm::managed_cluster(c),
                Some(ocm::managed_cluster_status(c, now)),
            )
        },
    )
    .await?;
    phase(
        "Placements",
        (0..resources).collect(),
        2,
        IN_FLIGHT,
        report,
        |r| {
            put(
                client,
                placements(),
                ocm::placement(r),
                Some(ocm::placement_status(r, clusters, now)),
            )
        },
    )
    .await?;
    let groups: Vec<(usize, usize)> = (0..resources)
        .flat_map(|r| (1..=ocm::decision_objects(clusters)).map(move |g| (r, g)))
        .collect();
    phase(
        "PlacementDecisions",
        groups,
        2,
        IN_FLIGHT,
        report,
        |(r, g)| {
            put(
                client,
                decisions(),
                ocm::decision(r, g),
                Some(ocm::decision_status(g, clusters)),
            )
        },
    )
    .await?;
    phase(
        "ManifestWorks",
        pairs(resources, clusters),
        2,
        IN_FLIGHT,
        report,
        |(r, c)| {
            put(
                client,
                manifest_works(),
                ocm::manifest_work(r, c),
                Some(ocm::manifest_work_status(r, !loaded_failed(r, c), now)),
            )
        },
    )
    .await?;
    Ok(())
}

/// A small deterministic generator (xorshift64*): the churn picks Works at random but
/// repeatably.
struct Pick(u64);

impl Pick {
    fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % below.max(1)
    }
}

/// Changes `per_second` Work (ManifestWork) statuses a second, for ever: each change flips
/// one Work between its loaded state and the other (Applied ⇄ AppliedFailed for Karmada,
/// Available ⇄ not Available for OCM). Prints the achieved rate every 10 s.
pub async fn churn(size: Size, per_second: u32) -> Result<()> {
    let client = hub_client().await?;
    let mut flipped = std::collections::HashSet::new();
    let mut pick = Pick(0x9e37_79b9_7f4a_7c15);
    // Ten ticks a second, the rate spread over them.
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let (mut sent, mut failed, mut since) = (0u64, 0u64, Instant::now());
    let mut owed = 0u64;
    loop {
        tick.tick().await;
        owed += u64::from(per_second);
        let batch = owed / 10;
        owed %= 10;
        let now = now();
        let changes: Vec<(usize, usize, bool)> = (0..batch)
            .map(|_| {
                let (r, c) = (pick.next(size.resources), pick.next(size.clusters));
                if !flipped.remove(&(r, c)) {
                    flipped.insert((r, c));
                }
                // Good when loaded good and not flipped, or loaded failed and flipped.
                let good = loaded_failed(r, c) == flipped.contains(&(r, c));
                (r, c, good)
            })
            .collect();
        let results: Vec<Result<()>> = futures::stream::iter(changes)
            .map(|(r, c, good)| {
                let client = client.clone();
                let now = now.clone();
                async move { write_churn(&client, size.kind, r, c, good, &now).await }
            })
            .buffer_unordered(IN_FLIGHT)
            .collect()
            .await;
        for result in results {
            match result {
                Ok(()) => sent += 1,
                Err(err) => {
                    failed += 1;
                    if failed <= 10 {
                        say!("scale churn: {err:#}");
                    }
                }
            }
        }
        if since.elapsed() >= Duration::from_secs(10) {
            say!(
                "scale churn: {:.0} status changes/s (asked {per_second}), {failed} failed so far",
                sent as f64 / since.elapsed().as_secs_f64()
            );
            sent = 0;
            since = Instant::now();
        }
    }
}

async fn write_churn(
    client: &Client,
    kind: ScaleKind,
    resource: usize,
    cluster: usize,
    good: bool,
    now: &str,
) -> Result<()> {
    let (ar, namespace, name, status) = match kind {
        ScaleKind::Karmada => (
            works(),
            karmada::member_namespace(cluster),
            karmada::work_name(resource),
            karmada::work_status(resource, good, now),
        ),
        ScaleKind::Ocm => (
            manifest_works(),
            cluster_name(cluster),
            ocm::work_name(resource),
            ocm::manifest_work_status(resource, good, now),
        ),
    };
    let api = api(client, &ar, Some(&namespace));
    let patch = json!({ "status": status });
    with_retries(&format!("{} {namespace}/{name}", ar.kind), |_| {
        let api = api.clone();
        let patch = patch.clone();
        let name = name.clone();
        async move {
            api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
        }
    })
    .await
    .map(|_| ())
}
