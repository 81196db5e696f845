//! `plan` and `drift` with `--hub`. The hub propagates, so `plan` compares the engine's render
//! of the local fleet directory with what the hub rendered for each member now (what applying
//! those files to the hub would change; only the fields the files set are compared, as the
//! hub's API server defaults the rest), and `drift` compares each member's live objects with
//! what the hub rendered for it. Both only read; neither writes to the hub or a member. `-l`
//! matches the local fleet's templates in `plan`, the hub's templates (or OCM's manifests)
//! elsewhere.

use std::io::Write;

use super::propagate::{Items, plan_exit, plan_table, progress, report_drift};
use super::scope::{InputError, Prepared, ResourceScope};
use crate::backend::fanout::drift;
use crate::backend::fanout::object::resource_of;
use crate::backend::fanout::targets::{Ignores, Options, Target};
use crate::backend::hub::preview::{Compare, preview_items};
use crate::backend::hub::{self, Hub, HubError, HubView, TemplateLabels};
use crate::backend::kube::api::KubeCluster;
use crate::backend::kube::kubeconfig::Timeouts;
use crate::cli::{GlobalArgs, PlanArgs, ScopeArgs, exit};
use crate::engine::{Fleet, load_fleet};
use crate::messages::{CellRef, PlanAction, PlanItem};
use crate::model::{HubKind, ResourceRef};
use crate::output;

/// A hub command's scope, parsed once: `--cluster`, and `--resource`, `-n` and `-l`; with `-l`,
/// the labels of the templates behind the hub's objects ([`HubScope::read_labels`]).
pub(super) struct HubScope<'a> {
    clusters: &'a [String],
    resources: ResourceScope,
    labels: TemplateLabels,
}

impl HubScope<'_> {
    /// Whether a `--resource` names `resource` (not merely `-n` letting it through).
    pub(super) fn names(&self, resource: &ResourceRef) -> bool {
        self.resources.names(resource)
    }

    /// Whether `resource` on `cluster` is in scope, `-l` matching the labels of its template on
    /// the hub.
    pub(super) fn includes(&self, cluster: &str, resource: &ResourceRef) -> bool {
        self.includes_labelled(cluster, resource, self.labels.of(resource))
    }

    /// Whether `resource` on `cluster`, whose template carries `labels`, is in scope.
    pub(super) fn includes_labelled(
        &self,
        cluster: &str,
        resource: &ResourceRef,
        labels: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> bool {
        (self.clusters.is_empty() || self.clusters.iter().any(|c| c == cluster))
            && self.resources.matches(resource, labels)
    }

    /// With `-l`, reads what it matches: the labels of the hub's templates (Karmada's
    /// resource templates, KubeFed's Federated templates, OCM's manifests).
    pub(super) async fn read_labels(&mut self, hub: &Hub) -> Result<(), HubError> {
        if self.resources.has_selector() {
            self.labels = hub.template_labels().await?;
        }
        Ok(())
    }
}

/// The scope, or its input errors on a hub: a bad `--resource`, `-n` or `-l`.
pub(super) fn check_scope(scope: &ScopeArgs) -> Result<HubScope<'_>, InputError> {
    Ok(HubScope {
        clusters: &scope.clusters,
        resources: ResourceScope::parse(scope)?,
        labels: TemplateLabels::default(),
    })
}

pub(super) async fn read_hub(
    global: &GlobalArgs,
    context: &str,
) -> Result<(Hub, HubView), HubError> {
    let hub = hub::connect(global.kubeconfig.as_deref(), context, Timeouts::default()).await?;
    let view = hub.read().await?;
    Ok((hub, view))
}

pub(super) fn failed(err: HubError) -> u8 {
    eprintln!("error: {err}");
    exit::of_hub(&err)
}

/// `flotilla --hub CONTEXT plan`: the local fleet's render against the hub's rendered objects.
pub async fn run_plan(
    global: &GlobalArgs,
    args: &PlanArgs,
    context: &str,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let scope = match check_scope(&args.scope) {
        Ok(scope) => scope,
        Err(err) => {
            eprintln!("error: {}", err.0);
            return Ok(exit::INPUT);
        }
    };
    let files = match crate::fleet::dir::read_fleet_dir(&global.fleet) {
        Ok(files) => files,
        Err(message) => {
            eprintln!(
                "error: {message}\n  hint: plan --hub compares a fleet directory (--fleet DIR) with what the hub rendered"
            );
            return Ok(exit::INPUT);
        }
    };
    let (fleet, errors) = load_fleet(&files);
    if !errors.is_empty() {
        for error in &errors {
            eprintln!("{error}");
        }
        eprintln!("{} error(s) in the fleet; nothing planned", errors.len());
        return Ok(exit::INPUT);
    }
    let (hub, view) = match read_hub(global, context).await {
        Ok(read) => read,
        Err(err) => return Ok(failed(err)),
    };
    if hub.kind == hub::HubKind::OpenClusterManagement {
        eprintln!(
            "error: plan --hub compares a fleet directory with what the hub rendered, but Open Cluster Management takes no templates or policies: a ManifestWork already is the per-cluster object (see them with `render --hub`, compare members with `drift --hub`)"
        );
        return Ok(exit::INPUT);
    }
    if hub.kind != hub::HubKind::Karmada {
        eprintln!(
            "error: plan --hub needs the objects the hub renders per member; {} hubs do not keep them (use plan on member contexts)",
            hub.kind.as_str()
        );
        return Ok(exit::INPUT);
    }
    for spec in &fleet.clusters {
        if !view
            .clusters
            .iter()
            .any(|(member, _)| member.name == spec.name)
        {
            eprintln!(
                "note: {} is in the fleet's inventory but not a member of hub {context}",
                spec.name
            );
        }
    }
    let items = plan_items(&fleet, &view, &scope);
    output::write(out, &global.output, &Items { items: &items }, || {
        plan_table(&items)
    })?;
    Ok(plan_exit(&items))
}

/// Every placed cell of the fleet against the hub's rendered object, and every object the hub
/// rendered for a fleet resource on a cluster the fleet no longer places it on (the hub will
/// remove it).
fn plan_items(fleet: &Fleet, view: &HubView, scope: &HubScope) -> Vec<PlanItem> {
    let mut cells = Vec::new();
    for (r, resource) in fleet.resources.iter().enumerate() {
        for (c, cluster) in fleet.clusters.iter().enumerate() {
            if fleet.is_placed(r, c)
                && scope.includes_labelled(
                    &cluster.name,
                    &resource.target,
                    fleet.template_labels(r),
                )
            {
                cells.push(CellRef {
                    resource: r as u32,
                    cluster: c as u32,
                });
            }
        }
    }
    let mut items = preview_items(fleet, &cells, view, Compare::FieldsSet);
    for (r, resource) in fleet.resources.iter().enumerate() {
        let Some(row) = view.row_of(&resource.target) else {
            continue;
        };
        for (cluster, object) in &view.rows[row].objects {
            let placed = fleet
                .cluster_index(cluster)
                .is_some_and(|c| fleet.is_placed(r, c));
            if !placed
                && scope.includes_labelled(cluster, &resource.target, fleet.template_labels(r))
            {
                items.push(PlanItem {
                    cluster: cluster.clone(),
                    resource: resource_of(object),
                    action: PlanAction::Prune,
                    diff: String::new(),
                    message: format!(
                        "{} removes it: the fleet no longer places it here",
                        view.kind.as_str()
                    ),
                    health: None,
                });
            }
        }
    }
    items.sort_by(|a, b| {
        (&a.cluster, a.resource.display_key()).cmp(&(&b.cluster, b.resource.display_key()))
    });
    items
}

/// What the hub rendered on each member `scope` selects, as read-only fan-out targets, each
/// member reached through its kubeconfig context or the hub's proxy to it (a member reached by
/// neither is an error row of its own); members with nothing in scope are left out. Refused,
/// with its exit code, on a hub that keeps no rendered objects.
async fn member_targets(
    hub: &Hub,
    view: &HubView,
    scope: &mut HubScope<'_>,
    command: &str,
) -> Result<Vec<Target<KubeCluster>>, u8> {
    if view.rows.iter().all(|row| row.objects.is_empty()) && !view.rows.is_empty() {
        eprintln!(
            "error: {command} --hub needs the objects the hub renders per member; {} hubs do not keep them",
            hub.kind.as_str()
        );
        return Err(exit::INPUT);
    }
    if let Err(err) = scope.read_labels(hub).await {
        return Err(failed(err));
    }
    let mut targets = Vec::new();
    for (spec, _) in &view.clusters {
        let objects: Vec<serde_json::Value> = view
            .rows
            .iter()
            .filter(|row| scope.includes(&spec.name, &row.target))
            .filter_map(|row| row.objects.get(&spec.name).cloned())
            .collect();
        if objects.is_empty() {
            continue;
        }
        targets.push(hub.read_only_target(spec, spec.name.clone(), objects).await);
    }
    Ok(targets)
}

/// The clusters `pods`, `images` and `logs` read on a hub: every member the scope selects with
/// what the hub rendered there, as [`Prepared`] for the fan-out; the exit code of a refusal.
pub(super) async fn prepared_members(
    global: &GlobalArgs,
    scope: &ScopeArgs,
    context: &str,
    command: &str,
) -> Result<Prepared<KubeCluster>, u8> {
    let mut hub_scope = check_scope(scope).map_err(|err| {
        eprintln!("error: {}", err.0);
        exit::INPUT
    })?;
    let (hub, view) = read_hub(global, context).await.map_err(failed)?;
    let targets = member_targets(&hub, &view, &mut hub_scope, command).await?;
    Ok(Prepared {
        targets,
        notes: Vec::new(),
        ignores: Ignores::default(),
        fleet: std::sync::Arc::new(Fleet::default()),
        files: Vec::new(),
    })
}

/// `flotilla --hub CONTEXT drift`: each member's live objects against what the hub rendered.
pub async fn run_drift(
    global: &GlobalArgs,
    scope: &ScopeArgs,
    context: &str,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let mut hub_scope = match check_scope(scope) {
        Ok(scope) => scope,
        Err(err) => {
            eprintln!("error: {}", err.0);
            return Ok(exit::INPUT);
        }
    };
    let (hub, view) = match read_hub(global, context).await {
        Ok(read) => read,
        Err(err) => return Ok(failed(err)),
    };
    let targets = match member_targets(&hub, &view, &mut hub_scope, "drift").await {
        Ok(targets) => targets,
        Err(code) => return Ok(code),
    };
    // What Karmada retains on its members (the hub's Retain scripts, else its built-in
    // retention) is compared with itself, as Karmada does not fight over it.
    let ignores = match hub.kind {
        HubKind::Karmada => match hub.interpreters().await {
            Ok(interpreters) => Ignores::default().retaining(std::sync::Arc::new(interpreters)),
            Err(err) => return Ok(failed(err)),
        },
        HubKind::OpenClusterManagement | HubKind::KubeFed => Ignores::default(),
    };
    let (items, errors) =
        drift::drift_with(&targets, Options::default(), &ignores, &progress("drift")).await;
    report_drift(global, &items, &errors, out)
}
