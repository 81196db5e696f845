//! `flotilla plan`, `apply` and `drift` against live clusters in raw-contexts mode: builds one
//! target per inventory cluster (its client and the objects the engine renders for it),
//! runs the fan-out of [`crate::backend::fanout`], and writes the contract shapes with
//! their exit codes. Confirmation for apply lives here. It must not talk to a cluster except
//! through the [`ClusterApi`] it builds, and never prunes without `--prune` and confirmation.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use serde::Serialize;

use crate::backend::audit;
use crate::backend::fanout::apply::{self, ApplyItem, Outcome};
use crate::backend::fanout::cluster_api::{ApiError, ClusterApi};
use crate::backend::fanout::drift::{self, DriftError, DriftItem};
use crate::backend::fanout::object::resource_of;
use crate::backend::fanout::planning::{self, PlanAction, PlanItem, PlanMode};
use crate::backend::fanout::targets::{Ignores, Options, Target};
use crate::backend::kube::api::KubeCluster;
use crate::backend::kube::{self, kubeconfig::Timeouts};
use crate::cli::{ApplyArgs, GlobalArgs, PlanArgs, ScopeArgs, exit};
use crate::engine::{Decision, Fleet};
use crate::model::ResourceRef;
use crate::{output, source};

/// An input error: printed with `error:` and exit 2.
pub struct InputError(pub String);

/// Parses `--resource KIND/NS/NAME` or `KIND/NAME`.
pub fn resource_filter(text: &str) -> Result<(String, Option<String>, String), InputError> {
    let parts: Vec<&str> = text.split('/').collect();
    match parts.as_slice() {
        [kind, name] if !kind.is_empty() && !name.is_empty() => {
            Ok((kind.to_string(), None, name.to_string()))
        }
        [kind, ns, name] if !kind.is_empty() && !ns.is_empty() && !name.is_empty() => {
            Ok((kind.to_string(), Some(ns.to_string()), name.to_string()))
        }
        _ => Err(InputError(format!(
            "--resource {text:?}: expected KIND/NAMESPACE/NAME or KIND/NAME"
        ))),
    }
}

pub fn matches_filter(resource: &ResourceRef, filter: &(String, Option<String>, String)) -> bool {
    resource.kind.eq_ignore_ascii_case(&filter.0)
        && resource.name == filter.2
        && (filter.1.is_none() || resource.namespace == filter.1)
}

/// The desired objects of one fleet cluster, restricted to the resource filters.
struct Desired {
    objects: Vec<serde_json::Value>,
    failed: Vec<(ResourceRef, String)>,
}

fn desired_for(
    fleet: &Fleet,
    cluster: usize,
    filters: &[(String, Option<String>, String)],
) -> Desired {
    let mut objects = Vec::new();
    let mut failed = Vec::new();
    let selected =
        |r: &ResourceRef| filters.is_empty() || filters.iter().any(|f| matches_filter(r, f));
    let mut namespaces: BTreeSet<String> = BTreeSet::new();
    for (r, resource) in fleet.resources.iter().enumerate() {
        if !fleet.is_placed(r, cluster) || !selected(&resource.target) {
            continue;
        }
        match fleet.decide(r, cluster) {
            Decision::Placed { object, .. } => {
                if let Some(ns) = &resource.target.namespace {
                    namespaces.insert(ns.clone());
                }
                objects.push(object);
            }
            Decision::NotPlaced { reason } => failed.push((resource.target.clone(), reason)),
        }
    }
    let mut implied: Vec<serde_json::Value> = fleet
        .implied_namespaces(cluster)
        .into_iter()
        .filter(|ns| {
            let name = resource_of(ns).name;
            filters.is_empty() || namespaces.contains(&name)
        })
        .collect();
    implied.extend(objects);
    Desired {
        objects: implied,
        failed,
    }
}

/// What a command works on: one target per selected cluster, notes for stderr, the fleet's
/// ignore rules per cluster, and the loaded fleet.
pub struct Prepared {
    pub targets: Vec<Target<KubeCluster>>,
    pub notes: Vec<String>,
    pub ignores: Ignores,
    pub fleet: Arc<Fleet>,
}

/// Loads the fleet and inventory, connects, and builds one target per selected cluster.
async fn targets(
    global: &GlobalArgs,
    scope: &ScopeArgs,
    prune: bool,
) -> Result<(Vec<Target<KubeCluster>>, Vec<String>, Ignores), InputError> {
    let prepared = prepare(global, scope, prune).await?;
    Ok((prepared.targets, prepared.notes, prepared.ignores))
}

/// [`targets`] with the fleet it was built from.
pub async fn prepare(
    global: &GlobalArgs,
    scope: &ScopeArgs,
    prune: bool,
) -> Result<Prepared, InputError> {
    let inventory = source::live_inventory(global).map_err(|e| InputError(e.to_string()))?;
    let Some(fleet) = inventory.fleet.clone() else {
        return Err(InputError(format!(
            "there is no fleet directory {}: plan, apply and drift need the desired state\n  hint: pass --fleet DIR",
            global.fleet.display()
        )));
    };
    let filters = scope
        .resources
        .iter()
        .map(|text| resource_filter(text))
        .collect::<Result<Vec<_>, _>>()?;
    for (filter, text) in filters.iter().zip(&scope.resources) {
        if !fleet
            .resources
            .iter()
            .any(|r| matches_filter(&r.target, filter))
        {
            return Err(InputError(format!(
                "--resource {text}: no such resource in the fleet"
            )));
        }
    }
    let mut specs = inventory.clusters.clone();
    for name in &scope.clusters {
        if !specs.iter().any(|spec| &spec.name == name) {
            let known: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
            return Err(InputError(format!(
                "--cluster {name}: no such cluster in the fleet; known: {}",
                known.join(", ")
            )));
        }
    }
    if !scope.clusters.is_empty() {
        specs.retain(|spec| scope.clusters.contains(&spec.name));
    }
    let mut notes = Vec::new();
    let desired: Vec<Desired> = specs
        .iter()
        .map(|spec| match fleet.cluster_index(&spec.name) {
            Some(c) => desired_for(&fleet, c, &filters),
            None => Desired {
                objects: Vec::new(),
                failed: Vec::new(),
            },
        })
        .collect();
    let placement_failed = desired.iter().any(|d| !d.failed.is_empty());
    let mut prune_kinds: Vec<(String, String)> = Vec::new();
    if prune {
        if placement_failed {
            notes.push(
                "not pruning: some objects could not be rendered (placement had errors)".into(),
            );
        } else if !filters.is_empty() {
            notes.push("not pruning: --resource limits the scope".into());
        } else {
            let mut kinds: BTreeSet<(String, String)> = fleet
                .resources
                .iter()
                .map(|r| (r.target.api_version.clone(), r.target.kind.clone()))
                .collect();
            kinds.insert(("v1".into(), "Namespace".into()));
            prune_kinds = kinds.into_iter().collect();
        }
    }
    let prune_namespaces: BTreeSet<String> = fleet
        .resources
        .iter()
        .filter_map(|r| r.target.namespace.clone())
        .collect();
    let ignores = Ignores::new(&fleet.ignores, &specs);
    let members = kube::connect(&inventory.kubeconfig, specs, Timeouts::default()).await;
    let targets = members
        .into_iter()
        .zip(desired)
        .map(|(member, desired)| Target {
            cluster: member.spec.name.clone(),
            api: member
                .client
                .map(|client| KubeCluster::new(client, global.readonly))
                .map_err(ApiError::Other),
            objects: desired.objects,
            failed: desired.failed,
            prune_kinds: prune_kinds.clone(),
            prune_namespaces: prune_namespaces.clone(),
        })
        .collect();
    Ok(Prepared {
        targets,
        notes,
        ignores,
        fleet,
    })
}

/// Progress on stderr when it is a terminal: "plan: 3/10 clusters".
pub(crate) fn progress(verb: &'static str) -> impl Fn(usize, usize) + Sync {
    let tty = std::io::stderr().is_terminal();
    move |done, total| {
        if tty {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{verb}: {done}/{total} clusters");
            if done == total {
                let _ = writeln!(err);
            }
        }
    }
}

#[derive(Serialize)]
pub(crate) struct Items<'a, T> {
    pub(crate) items: &'a [T],
}

/// Exit code of a plan: 3 when a cluster or object failed, 1 with changes, else 0.
pub fn plan_exit(items: &[PlanItem]) -> u8 {
    if items.iter().any(|i| i.action == PlanAction::Error) {
        exit::PARTIAL
    } else if items.iter().any(|i| i.action != PlanAction::Unchanged) {
        exit::CHANGES
    } else {
        exit::OK
    }
}

/// `flotilla plan`.
pub async fn run_plan(
    global: &GlobalArgs,
    args: &PlanArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let (targets, notes, ignores) = match targets(global, &args.scope, args.prune).await {
        Ok(found) => found,
        Err(InputError(message)) => return Ok(input_error(&message)),
    };
    for note in &notes {
        eprintln!("note: {note}");
    }
    let mode = if global.readonly {
        PlanMode::ReadOnly
    } else {
        PlanMode::DryRun
    };
    let items = planning::plan_with(
        &targets,
        mode,
        Options::default(),
        &ignores,
        &progress("plan"),
    )
    .await;
    output::write(out, global.output, &Items { items: &items }, |out| {
        plan_table(out, &items)
    })?;
    Ok(plan_exit(&items))
}

/// The plan as a table: rows with the same resource, action, diff and message on several
/// clusters are printed once ("member-1, member-2: identical").
pub fn plan_table(out: &mut dyn Write, items: &[PlanItem]) -> std::io::Result<()> {
    let mut groups: Vec<(&PlanItem, Vec<&str>)> = Vec::new();
    for item in items {
        match groups.iter_mut().find(|(first, _)| {
            first.resource == item.resource
                && first.action == item.action
                && first.diff == item.diff
                && first.message == item.message
        }) {
            Some((_, clusters)) => clusters.push(&item.cluster),
            None => groups.push((item, vec![&item.cluster])),
        }
    }
    for (item, clusters) in &groups {
        let who = if clusters.len() > 1 {
            format!("{}: identical", clusters.join(", "))
        } else {
            clusters.join(", ")
        };
        write!(
            out,
            "{:<9} {}  on {who}",
            item.action.as_str(),
            item.resource.display_key()
        )?;
        if !item.message.is_empty() {
            write!(out, "  ({})", item.message)?;
        }
        writeln!(out)?;
        if item.action != PlanAction::Unchanged {
            for line in item.diff.lines() {
                writeln!(out, "    {line}")?;
            }
        }
    }
    let count = |action: PlanAction| items.iter().filter(|i| i.action == action).count();
    let clusters: BTreeSet<&str> = items.iter().map(|i| i.cluster.as_str()).collect();
    writeln!(
        out,
        "Plan: {} to create, {} to update, {} unchanged, {} to prune, {} conflicts, {} errors, on {} clusters.",
        count(PlanAction::Create),
        count(PlanAction::Update),
        count(PlanAction::Unchanged),
        count(PlanAction::Prune),
        count(PlanAction::Conflict),
        count(PlanAction::Error),
        clusters.len()
    )
}

fn input_error(message: &str) -> u8 {
    eprintln!("error: {message}");
    exit::INPUT
}

/// Asks a yes/no question on the terminal.
pub(crate) fn confirm(question: &str) -> bool {
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes")
}

/// `flotilla apply`.
pub async fn run_apply(
    global: &GlobalArgs,
    args: &ApplyArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    if global.readonly {
        return Ok(input_error(
            "apply sends writes and --readonly forbids them\n  hint: use `flotilla plan --readonly` to preview",
        ));
    }
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !args.yes && !interactive {
        return Ok(input_error(
            "apply needs confirmation and there is no terminal to ask on\n  hint: pass --yes to apply without asking",
        ));
    }
    let (targets, notes, ignores) = match targets(global, &args.scope, args.prune).await {
        Ok(found) => found,
        Err(InputError(message)) => return Ok(input_error(&message)),
    };
    for note in &notes {
        eprintln!("note: {note}");
    }
    let options = Options {
        concurrency: args.concurrency.max(1),
        ..Options::default()
    };
    let mut prune: BTreeMap<String, Vec<ResourceRef>> = BTreeMap::new();
    let pruning = args.prune && targets.iter().any(|t| !t.prune_kinds.is_empty());
    if !args.yes || pruning {
        // Show what will happen (and find the prune candidates) before asking.
        let items = planning::plan_with(
            &targets,
            PlanMode::DryRun,
            options,
            &ignores,
            &progress("plan"),
        )
        .await;
        for item in items.iter().filter(|i| i.action == PlanAction::Prune) {
            prune
                .entry(item.cluster.clone())
                .or_default()
                .push(item.resource.clone());
        }
        if !args.yes {
            plan_table(&mut std::io::stderr().lock(), &items)?;
            let clusters = targets.len();
            if !confirm(&format!("Apply to {clusters} cluster(s)?")) {
                eprintln!("nothing applied");
                return Ok(exit::INPUT);
            }
            let deletions: usize = prune.values().map(Vec::len).sum();
            if deletions > 0 && !confirm(&format!("Delete {deletions} object(s) no longer placed?"))
            {
                prune.clear();
            }
        }
    }
    let items = apply::apply_with(
        &targets,
        args.force_conflicts,
        &prune,
        options,
        &ignores,
        &progress("apply"),
    )
    .await;
    if !items.is_empty() {
        let pruned = prune.values().any(|list| !list.is_empty());
        audit::record_or_warn(&audit::Entry::from_apply(
            if pruned { "apply+prune" } else { "apply" },
            &items,
        ));
    }
    output::write(out, global.output, &Items { items: &items }, |out| {
        apply_table(out, &items)
    })?;
    Ok(if items.iter().any(|i| i.result.is_failure()) {
        exit::PARTIAL
    } else {
        exit::OK
    })
}

fn apply_table(out: &mut dyn Write, items: &[ApplyItem]) -> std::io::Result<()> {
    let mut groups: Vec<(&ApplyItem, Vec<&str>)> = Vec::new();
    for item in items {
        match groups.iter_mut().find(|(first, _)| {
            first.resource == item.resource
                && first.result == item.result
                && first.message == item.message
        }) {
            Some((_, clusters)) => clusters.push(&item.cluster),
            None => groups.push((item, vec![&item.cluster])),
        }
    }
    for (item, clusters) in &groups {
        write!(
            out,
            "{:<9} {}  on {}",
            item.result.as_str(),
            item.resource.display_key(),
            clusters.join(", ")
        )?;
        if !item.message.is_empty() {
            write!(out, "  ({})", item.message)?;
        }
        writeln!(out)?;
    }
    let failed: BTreeSet<&str> = items
        .iter()
        .filter(|i| i.result.is_failure())
        .map(|i| i.cluster.as_str())
        .collect();
    let all: BTreeSet<&str> = items.iter().map(|i| i.cluster.as_str()).collect();
    writeln!(
        out,
        "Apply: {} applied, {} pruned, {} failed; {} of {} clusters complete.",
        items
            .iter()
            .filter(|i| i.result == Outcome::Applied)
            .count(),
        items.iter().filter(|i| i.result == Outcome::Pruned).count(),
        items.iter().filter(|i| i.result.is_failure()).count(),
        all.len() - failed.len(),
        all.len()
    )
}

/// `flotilla drift`.
pub async fn run_drift(
    global: &GlobalArgs,
    scope: &ScopeArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let (targets, _, ignores) = match targets(global, scope, false).await {
        Ok(found) => found,
        Err(InputError(message)) => return Ok(input_error(&message)),
    };
    let (items, errors) =
        drift::drift_with(&targets, Options::default(), &ignores, &progress("drift")).await;
    for note in super::repair::owner_fights(&items, &audit::read_entries()) {
        eprintln!("note: {note}");
    }
    report_drift(global, &items, &errors, out)
}

/// Writes drift results and picks the exit code: 3 errors, 1 drift, 0 none.
pub fn report_drift(
    global: &GlobalArgs,
    items: &[DriftItem],
    errors: &[DriftError],
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    for error in errors {
        eprintln!(
            "error: {}: {}: {}",
            error.cluster,
            error.resource.display_key(),
            error.message
        );
    }
    output::write(out, global.output, &Items { items }, |out| {
        for item in items {
            for field in &item.fields {
                writeln!(
                    out,
                    "{}  {}  {}  desired {}  live {}  changed by {}{}",
                    item.cluster,
                    item.resource.display_key(),
                    field.path,
                    field.desired,
                    field.live,
                    field.manager.as_deref().unwrap_or("(unknown)"),
                    field
                        .time
                        .as_deref()
                        .map(|t| format!(" at {t}"))
                        .unwrap_or_default()
                )?;
            }
        }
        let fields: usize = items.iter().map(|i| i.fields.len()).sum();
        writeln!(
            out,
            "Drift: {fields} field(s) in {} object(s); {} error(s).",
            items.len(),
            errors.len()
        )
    })?;
    Ok(if !errors.is_empty() {
        exit::PARTIAL
    } else if !items.is_empty() {
        exit::CHANGES
    } else {
        exit::OK
    })
}

/// Whether a target list reaches at least one cluster (used by tests and the console).
pub fn any_reachable<A: ClusterApi>(targets: &[Target<A>]) -> bool {
    targets.iter().any(|t| t.api.is_ok())
}
