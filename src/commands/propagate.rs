//! `flotilla plan`, `apply` and `drift` in raw-contexts mode and on the demo: runs the fan-out
//! of [`crate::backend::fanout`] over the targets [`super::scope`] builds (one per inventory
//! cluster, live or simulated: its API and the objects the engine renders for it), and writes
//! the contract shapes with their exit codes. Confirmation for apply lives here. It must not
//! talk to a cluster except through the [`ClusterApi`] it is given, and never prunes without
//! `--prune` and confirmation.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal, Write};

use serde::Serialize;

use super::scope::{
    Clusters, InputError, Prepared, confirm, input_error, owner_fights, prepare_clusters,
};
use crate::backend::audit;
use crate::backend::fanout::apply::{self, ApplyItem, Outcome};
use crate::backend::fanout::cluster_api::ClusterApi;
use crate::backend::fanout::drift::{self, DriftError, DriftItem};
use crate::backend::fanout::object::resource_of;
use crate::backend::fanout::planning::{self, PlanMode};
use crate::backend::fanout::targets::{Options, Target};
use crate::cli::{ApplyArgs, GlobalArgs, PlanArgs, ScopeArgs, exit};
use crate::messages::{PlanAction, PlanItem};
use crate::model::ResourceRef;
use crate::output::{self, Table};
use crate::safe_text::printable;

/// Said on stderr after a write to the simulated fleet: what changed lasts as long as the run.
pub(crate) const DEMO_WRITES_NOTE: &str = "the simulated fleet starts afresh from --demo-seed in every run: this changed it for this run only (the console keeps changes for its session)";

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
    match prepare_clusters(global, &args.scope, args.prune).await {
        Err(InputError(message)) => Ok(input_error(&message)),
        Ok(Clusters::Live(prepared)) => plan_on(global, prepared, out).await,
        Ok(Clusters::Simulated(prepared)) => plan_on(global, prepared, out).await,
    }
}

async fn plan_on<A: ClusterApi>(
    global: &GlobalArgs,
    prepared: Prepared<A>,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    for note in &prepared.notes {
        eprintln!("note: {}", printable(note, false));
    }
    let mode = if global.readonly {
        PlanMode::ReadOnly
    } else {
        PlanMode::DryRun
    };
    let items = planning::plan_with(
        &prepared.targets,
        mode,
        Options::default(),
        &prepared.ignores,
        &progress("plan"),
    )
    .await;
    output::write(out, &global.output, &Items { items: &items }, || {
        plan_table(&items)
    })?;
    Ok(plan_exit(&items))
}

/// The plan as a table: rows with the same resource, action, diff and message on several
/// clusters are printed once ("member-1, member-2: identical").
pub fn plan_table(items: &[PlanItem]) -> Table {
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
    let mut table =
        Table::new(&["ACTION", "RESOURCE", "API VERSION", "CLUSTERS"]).wide_only(&["API VERSION"]);
    for (item, clusters) in &groups {
        let who = if clusters.len() > 1 {
            format!("{}: identical", clusters.join(", "))
        } else {
            clusters.join(", ")
        };
        let key = item.resource.display_key();
        table.row(
            key.clone(),
            vec![
                item.action.as_str().to_string(),
                key,
                item.resource.api_version.clone(),
                with_message(who, &item.message),
            ],
        );
        if item.action != PlanAction::Unchanged {
            table.details(item.diff.lines().map(String::from));
        }
    }
    let count = |action: PlanAction| items.iter().filter(|i| i.action == action).count();
    let clusters: BTreeSet<&str> = items.iter().map(|i| i.cluster.as_str()).collect();
    table.footer(format!(
        "Plan: {} to create, {} to update, {} unchanged, {} to prune, {} conflicts, {} errors, on {} clusters.",
        count(PlanAction::Create),
        count(PlanAction::Update),
        count(PlanAction::Unchanged),
        count(PlanAction::Prune),
        count(PlanAction::Conflict),
        count(PlanAction::Error),
        clusters.len()
    ));
    table
}

/// The clusters of a plan or apply row, then its message in parentheses when it has one.
fn with_message(clusters: String, message: &str) -> String {
    if message.is_empty() {
        clusters
    } else {
        format!("{clusters}  ({message})")
    }
}

/// `flotilla apply`.
pub async fn run_apply(
    global: &GlobalArgs,
    args: &ApplyArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !args.yes && !interactive {
        return Ok(input_error(
            "apply needs confirmation and there is no terminal to ask on\n  hint: pass --yes to apply without asking",
        ));
    }
    match prepare_clusters(global, &args.scope, args.prune).await {
        Err(InputError(message)) => Ok(input_error(&message)),
        Ok(Clusters::Live(prepared)) => apply_on(global, args, prepared, out).await,
        Ok(Clusters::Simulated(prepared)) => apply_on(global, args, prepared, out).await,
    }
}

async fn apply_on<A: ClusterApi>(
    global: &GlobalArgs,
    args: &ApplyArgs,
    prepared: Prepared<A>,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let Prepared {
        targets,
        notes,
        ignores,
        ..
    } = prepared;
    for note in &notes {
        eprintln!("note: {}", printable(note, false));
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
            plan_table(&items).write(&mut std::io::stderr().lock(), false)?;
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
    let action = if prune.values().any(|list| !list.is_empty()) {
        "apply+prune"
    } else {
        "apply"
    };
    let mut planned = audit::Entry::new(action);
    planned.clusters = targets.iter().map(|t| t.cluster.clone()).collect();
    planned.objects = targets
        .iter()
        .flat_map(|t| t.objects.iter().map(|o| resource_of(o).display_key()))
        .chain(prune.values().flatten().map(ResourceRef::display_key))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // The simulated fleet is no one's: an interrupted demo apply is not audited either.
    let in_flight = (!global.uses_demo()).then(|| audit::in_flight(planned));
    let items = apply::apply_with(
        &targets,
        args.force_conflicts,
        &prune,
        options,
        &ignores,
        &progress("apply"),
    )
    .await;
    drop(in_flight);
    if global.uses_demo() {
        // The simulated fleet is no one's: its writes are not audited.
        eprintln!("note: {DEMO_WRITES_NOTE}");
    } else if !items.is_empty() {
        audit::record_or_warn(&audit::Entry::from_apply(action, &items));
    }
    output::write(out, &global.output, &Items { items: &items }, || {
        apply_table(&items)
    })?;
    Ok(if items.iter().any(|i| i.result.is_failure()) {
        exit::PARTIAL
    } else {
        exit::OK
    })
}

fn apply_table(items: &[ApplyItem]) -> Table {
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
    let mut table =
        Table::new(&["RESULT", "RESOURCE", "API VERSION", "CLUSTERS"]).wide_only(&["API VERSION"]);
    for (item, clusters) in &groups {
        let key = item.resource.display_key();
        table.row(
            key.clone(),
            vec![
                item.result.as_str().to_string(),
                key,
                item.resource.api_version.clone(),
                with_message(clusters.join(", "), &item.message),
            ],
        );
    }
    let failed: BTreeSet<&str> = items
        .iter()
        .filter(|i| i.result.is_failure())
        .map(|i| i.cluster.as_str())
        .collect();
    let all: BTreeSet<&str> = items.iter().map(|i| i.cluster.as_str()).collect();
    table.footer(format!(
        "Apply: {} applied, {} pruned, {} failed; {} of {} clusters complete.",
        items
            .iter()
            .filter(|i| i.result == Outcome::Applied)
            .count(),
        items.iter().filter(|i| i.result == Outcome::Pruned).count(),
        items.iter().filter(|i| i.result.is_failure()).count(),
        all.len() - failed.len(),
        all.len()
    ));
    table
}

/// `flotilla drift`.
pub async fn run_drift(
    global: &GlobalArgs,
    scope: &ScopeArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    match prepare_clusters(global, scope, false).await {
        Err(InputError(message)) => Ok(input_error(&message)),
        Ok(Clusters::Live(prepared)) => drift_on(global, prepared, out).await,
        Ok(Clusters::Simulated(prepared)) => drift_on(global, prepared, out).await,
    }
}

async fn drift_on<A: ClusterApi>(
    global: &GlobalArgs,
    prepared: Prepared<A>,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let (items, errors) = drift::drift_with(
        &prepared.targets,
        Options::default(),
        &prepared.ignores,
        &progress("drift"),
    )
    .await;
    if !global.uses_demo() {
        for note in owner_fights(&items, &audit::read_entries()) {
            eprintln!("note: {}", printable(&note, false));
        }
    }
    report_drift(global, &items, &errors, out)
}

/// The `error:` lines for drift's errors: one per cluster for a failure every object there
/// shares (an unreachable cluster), else one per object.
pub fn error_lines(errors: &[DriftError]) -> Vec<String> {
    let mut shared: BTreeMap<(&str, &str), Vec<&DriftError>> = BTreeMap::new();
    for error in errors {
        shared
            .entry((error.cluster.as_str(), error.message.as_str()))
            .or_default()
            .push(error);
    }
    shared
        .into_iter()
        .map(|((cluster, message), errors)| match errors.as_slice() {
            [one] => format!(
                "error: {cluster}: {}: {message}",
                one.resource.display_key()
            ),
            many => format!("error: {cluster}: {message} ({} objects)", many.len()),
        })
        .collect()
}

/// Writes drift results and picks the exit code: 3 errors, 1 drift, 0 none.
pub fn report_drift(
    global: &GlobalArgs,
    items: &[DriftItem],
    errors: &[DriftError],
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    for line in error_lines(errors) {
        eprintln!("{}", printable(&line, false));
    }
    output::write(out, &global.output, &Items { items }, || {
        let mut table = Table::new(&[
            "CLUSTER",
            "RESOURCE",
            "PATH",
            "DESIRED",
            "LIVE",
            "CHANGED BY",
            "CHANGED AT",
            "API VERSION",
        ])
        .wide_only(&["CHANGED AT", "API VERSION"]);
        for item in items {
            let key = item.resource.display_key();
            for field in &item.fields {
                let (desired, live) = field.shown();
                table.row(
                    key.clone(),
                    vec![
                        item.cluster.clone(),
                        key.clone(),
                        field.path.clone(),
                        desired.to_string(),
                        live.to_string(),
                        field.manager.clone().unwrap_or_else(|| "(unknown)".into()),
                        field.time.clone().unwrap_or_else(|| "-".into()),
                        item.resource.api_version.clone(),
                    ],
                );
            }
        }
        let fields: usize = items.iter().map(|i| i.fields.len()).sum();
        table.footer(format!(
            "Drift: {fields} field(s) in {} object(s); {} error(s).",
            items.len(),
            errors.len()
        ));
        table
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
