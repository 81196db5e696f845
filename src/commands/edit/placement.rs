//! `flotilla placement set KIND/NS/NAME`: the console's placement editor as a command. The
//! flags change the same parts the editor does (explicit clusters, cluster label selector,
//! field selector, tolerations, replica scheduling), through the same engine functions
//! (`placement_source`, `PlacementSource::with`, `preview_placement`); the document is written
//! as the console saves it. It must not propagate: on a fleet directory `apply` does that, on
//! a hub its controllers do.

use std::collections::BTreeSet;
use std::io::Write;

use super::{
    self as edits, Affected, DocumentWrite, Report, document_diff, find_resource, input_error,
    object_diffs,
};
use crate::cli::{GlobalArgs, PlacementSetArgs};
use crate::engine::edit::placement::{
    EditablePlacement, parse_field_selector, parse_replicas, parse_selector, parse_tolerations,
    preview_placement,
};
use crate::model::ResourceRef;

/// Joins repeated flag values with commas; `''` alone (or only empty values) clears.
fn joined(values: &[String]) -> String {
    values
        .iter()
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .collect::<Vec<_>>()
        .join(",")
}

/// The placement with the flags applied; an error names the flag and how to fix it.
fn edited(
    args: &PlacementSetArgs,
    current: &EditablePlacement,
    known: &BTreeSet<String>,
) -> Result<EditablePlacement, String> {
    let mut edit = current.clone();
    let check = |flag: &str, name: &str| {
        if known.contains(name) {
            Ok(())
        } else {
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            Err(crate::commands::scope::no_such(
                flag, name, "cluster", &known,
            ))
        }
    };
    if !args.clusters.is_empty() {
        edit.clusters = BTreeSet::new();
        for name in args
            .clusters
            .iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            check("--clusters", name)?;
            edit.clusters.insert(name.to_string());
        }
    }
    for name in &args.add_cluster {
        check("--add-cluster", name.trim())?;
        edit.clusters.insert(name.trim().to_string());
    }
    for name in &args.remove_cluster {
        if !edit.clusters.remove(name.trim()) {
            return Err(format!(
                "--remove-cluster {name}: `{name}` is not in the placement's cluster list ({})",
                if edit.clusters.is_empty() {
                    "it is empty".to_string()
                } else {
                    edit.clusters.iter().cloned().collect::<Vec<_>>().join(", ")
                }
            ));
        }
    }
    let hint = "  hint: kubectl's -l syntax: `env=prod,tier in (web,api),!legacy`; '' clears it";
    if !args.cluster_selector.is_empty() {
        edit.selector = joined(&args.cluster_selector);
        parse_selector(&edit.selector)
            .map_err(|err| format!("--cluster-selector {:?}: {err}\n{hint}", edit.selector))?;
    }
    if !args.field_selector.is_empty() {
        edit.fields = joined(&args.field_selector);
        parse_field_selector(&edit.fields).map_err(|err| {
            format!(
                "--field-selector {:?}: {err}\n  hint: e.g. `region in (eu,us),provider!=gcp`; '' clears it",
                edit.fields
            )
        })?;
    }
    if !args.tolerate.is_empty() {
        edit.tolerations = joined(&args.tolerate);
        parse_tolerations(&edit.tolerations).map_err(|err| {
            format!(
                "--tolerate {:?}: {err}\n  hint: key=value:Effect, key:Effect, key=value or *, Effect one of NoSchedule, PreferNoSchedule, NoExecute; '' clears them",
                edit.tolerations
            )
        })?;
    }
    if let Some(text) = &args.replica_scheduling {
        edit.replicas = text.trim().to_string();
        parse_replicas(&edit.replicas).map_err(|err| {
            format!(
                "--replica-scheduling {text:?}: {err}\n  hint: duplicated, divided, `divided a=3,b=1`, aggregated, or '' for none"
            )
        })?;
    }
    Ok(edit)
}

/// A warning for each cluster the flags add by name that the resource is still not placed
/// on after the edit (another term of the placement, such as its label selector, rules it
/// out), with the reason and the two ways out.
fn unplaceable(
    args: &PlacementSetArgs,
    after: &crate::engine::Fleet,
    target: &ResourceRef,
) -> Vec<String> {
    let Some(row) = after.resources.iter().position(|r| &r.target == target) else {
        return Vec::new();
    };
    let named = args
        .add_cluster
        .iter()
        .map(String::as_str)
        .chain(args.clusters.iter().flat_map(|list| list.split(',')))
        .map(str::trim)
        .filter(|name| !name.is_empty());
    let mut warnings = Vec::new();
    for name in named {
        let Some(column) = after.cluster_index(name) else {
            continue;
        };
        if after.is_placed(row, column) {
            continue;
        }
        let reason = after.unplaced_reason(row, column).unwrap_or("not placed");
        warnings.push(format!(
            "{name} is named but still not placed: {reason}; add it to the cluster selector too, or give {} a policy of its own (--own-policy)",
            target.display_key()
        ));
    }
    warnings
}

/// `flotilla placement set`.
pub async fn run_set(
    global: &GlobalArgs,
    args: &PlacementSetArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    if let Some(code) = edits::refuse_here(global, "placement set") {
        return Ok(code);
    }
    let nothing_asked = args.clusters.is_empty()
        && args.add_cluster.is_empty()
        && args.remove_cluster.is_empty()
        && args.cluster_selector.is_empty()
        && args.field_selector.is_empty()
        && args.tolerate.is_empty()
        && args.replica_scheduling.is_none();
    if nothing_asked {
        return Ok(input_error(
            "placement set: name what to change\n  hint: --clusters, --add-cluster, --remove-cluster, --cluster-selector, --field-selector, --tolerate or --replica-scheduling (see --help)",
        ));
    }
    let loaded = match edits::load(global).await {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    let (fleet, files) = (&loaded.fleet, &loaded.files);
    let resource = match find_resource(fleet, &args.resource) {
        Ok(resource) => resource,
        Err(message) => return Ok(input_error(&message)),
    };
    let key = fleet.resources[resource].target.display_key();
    let source = match fleet.placement_source(files, resource) {
        Ok(source) => source,
        Err(reason) => {
            return Ok(input_error(&format!(
                "cannot edit the placement of {key}: {reason}"
            )));
        }
    };
    let known: BTreeSet<String> = fleet.clusters.iter().map(|c| c.name.clone()).collect();
    let edit = match edited(args, &source.editable(), &known) {
        Ok(edit) => edit,
        Err(message) => return Ok(input_error(&message)),
    };
    let object = match source.with(&edit) {
        Ok(object) => object,
        Err(message) => return Ok(input_error(&format!("{}: {message}", source.title))),
    };
    if args.own_policy {
        return own_policy(global, args, &loaded, resource, &source, &object, out).await;
    }
    let mut report = Report {
        resource: key.clone(),
        edited: source.title.clone(),
        file: source.file.clone(),
        ..Report::default()
    };
    if object != source.object {
        let preview = preview_placement(fleet, files, &source, &object);
        if !preview.errors.is_empty() {
            for error in &preview.errors {
                eprintln!("{error}");
            }
            return Ok(input_error(&format!(
                "the edited {} would not load; nothing written",
                source.title
            )));
        }
        let target = &fleet.resources[resource].target;
        if let Some(own) = preview.change_of(target) {
            report.gained = own.gained.to_vec();
            report.lost = own.lost.to_vec();
            report.changed = own.changed.to_vec();
        }
        report.leaving = crate::model::leaving(loaded.hub_kind());
        report.affected = preview
            .change_of(target)
            .into_iter()
            .chain(preview.others(target))
            .map(|change| Affected {
                resource: change.resource.display_key(),
                gained: change.gained.clone(),
                lost: change.lost.clone(),
                changed: change.changed.clone(),
            })
            .collect();
        if preview.sharing > 1 {
            report.warnings.push(format!(
                "{} other resource(s) share {}: the edit changes {} of them",
                preview.sharing - 1,
                source.title,
                preview.others(target).count()
            ));
        }
        if let Some(after) = &preview.fleet {
            report.warnings.extend(unplaceable(args, after, target));
        }
        report.diffs = object_diffs(&preview.diffs);
        match document_diff(&loaded, &source.file, source.document, &object) {
            Ok((file, diff)) => (report.file, report.file_diff) = (file, diff),
            Err(message) => return Ok(input_error(&message)),
        }
    }
    let write = DocumentWrite {
        command: "placement set",
        action: "save-placement",
        resource: &key,
        title: &source.title,
        file: &source.file,
        document: source.document,
        previous: &source.object,
    };
    edits::gate_and_write(global, &args.edit, &loaded, &write, &object, report, out).await
}

/// `placement set --own-policy`: the edited placement goes into a new policy that selects only
/// `resource` (appended to the file of the policy it shares), so the other resources of that
/// policy keep theirs; the preview compares the whole fleet before and after.
async fn own_policy(
    global: &GlobalArgs,
    args: &PlacementSetArgs,
    loaded: &edits::Loaded,
    resource: usize,
    source: &crate::engine::edit::placement::PlacementSource,
    object: &serde_json::Value,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let (fleet, files) = (&loaded.fleet, &loaded.files);
    let target = &fleet.resources[resource].target;
    if !matches!(loaded.store, edits::Store::Dir(_)) {
        return Ok(input_error(
            "--own-policy edits a fleet directory; on a hub, create the policy with kubectl and flotilla shows it",
        ));
    }
    if fleet.resources_placed_by(files, source).len() <= 1 {
        return Ok(input_error(&format!(
            "{} places only {} already; edit it without --own-policy",
            source.title,
            target.display_key()
        )));
    }
    let policy = match crate::engine::edit::placement::own_policy(fleet, source, object, target) {
        Ok(policy) => policy,
        Err(message) => return Ok(input_error(&message.to_string())),
    };
    let name = policy["metadata"]["name"].as_str().unwrap_or_default();
    let title = match &target.namespace {
        Some(ns) => format!(
            "{} {ns}/{name}",
            policy["kind"].as_str().unwrap_or_default()
        ),
        None => format!("{} {name}", policy["kind"].as_str().unwrap_or_default()),
    };
    let document = files.iter().find(|f| f.path == source.file).map_or(0, |f| {
        crate::engine::document::parse::document_spans(&f.text).len()
    });
    let mut edited_files = files.clone();
    for file in edited_files.iter_mut().filter(|f| f.path == source.file) {
        match crate::engine::edit::yaml_text::append_document(&file.path, &file.text, &policy) {
            Ok(text) => file.text = text,
            Err(err) => return Ok(input_error(&err.to_string())),
        }
    }
    let (after, errors) = crate::engine::fleet::assemble::load_fleet(&edited_files);
    if !errors.is_empty() {
        for error in &errors {
            eprintln!("{error}");
        }
        return Ok(input_error(&format!(
            "the new {title} would not load; nothing written"
        )));
    }
    let (_, diffs) = edits::compare_fleets(fleet, &after);
    let mut report = Report {
        resource: target.display_key(),
        edited: title.clone(),
        file: source.file.clone(),
        ..Report::default()
    };
    report.affected = affected(fleet, &after, &diffs);
    if let Some(own) = report
        .affected
        .iter()
        .find(|a| a.resource == report.resource)
    {
        report.gained = own.gained.to_vec();
        report.lost = own.lost.to_vec();
        report.changed = own.changed.to_vec();
    }
    report.leaving = crate::model::leaving(loaded.hub_kind());
    report.diffs = diffs;
    report.warnings.push(format!(
        "{} gets {title} of its own (priority {}, preemption: Always); {} keeps placing its other resources as it does",
        report.resource,
        policy["spec"]["priority"],
        source.title
    ));
    report.warnings.extend(unplaceable(args, &after, target));
    match document_diff(loaded, &source.file, document, &policy) {
        Ok((file, diff)) => (report.file, report.file_diff) = (file, diff),
        Err(message) => return Ok(input_error(&message)),
    }
    let write = DocumentWrite {
        command: "placement set",
        action: "save-placement",
        resource: &report.resource.clone(),
        title: &title,
        file: &source.file,
        document,
        previous: &policy,
    };
    edits::gate_and_write(global, &args.edit, loaded, &write, &policy, report, out).await
}

/// Every resource whose clusters change between two loads of a fleet, with the clusters it
/// gains, loses and changes on (`changed` from the object diffs).
fn affected(
    before: &crate::engine::Fleet,
    after: &crate::engine::Fleet,
    diffs: &[edits::ObjectDiff],
) -> Vec<Affected> {
    let mut out = Vec::new();
    for (r, resource) in before.resources.iter().enumerate() {
        let Some(n) = after.resource_index(&resource.target, r) else {
            continue;
        };
        let key = resource.target.display_key();
        let (mut gained, mut lost) = (Vec::new(), Vec::new());
        for (c, cluster) in before.clusters.iter().enumerate() {
            let Some(nc) = after.cluster_index(&cluster.name) else {
                continue;
            };
            match (before.is_placed(r, c), after.is_placed(n, nc)) {
                (false, true) => gained.push(cluster.name.clone()),
                (true, false) => lost.push(cluster.name.clone()),
                _ => {}
            }
        }
        let changed: Vec<String> = diffs
            .iter()
            .filter(|d| d.resource == key)
            .flat_map(|d| d.clusters.iter())
            .filter(|c| !gained.contains(c))
            .cloned()
            .collect();
        if gained.is_empty() && lost.is_empty() && changed.is_empty() {
            continue;
        }
        out.push(Affected {
            resource: key,
            gained: gained.into(),
            lost: lost.into(),
            changed: changed.into(),
        });
    }
    out
}
