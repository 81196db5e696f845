//! `flotilla placement set KIND/NS/NAME`: the console's placement editor as a command. The
//! flags change the same parts the editor does (explicit clusters, cluster label selector,
//! field selector, tolerations, replica scheduling), through the same engine functions
//! (`placement_source`, `PlacementSource::with`, `preview_placement`); the document is written
//! as the console saves it. It must not propagate: on a fleet directory `apply` does that, on
//! a hub its controllers do.

use std::collections::BTreeSet;
use std::io::Write;

use super::edits::{
    self, Affected, DocumentWrite, Report, document_diff, find_resource, input_error, object_diffs,
};
use crate::cli::{GlobalArgs, PlacementSetArgs};
use crate::engine::edit::placement::{
    EditablePlacement, PlacementPreview, parse_field_selector, parse_replicas, parse_selector,
    parse_tolerations, preview_placement,
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
            Err(super::scope::no_such(flag, name, "cluster", &known))
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
    preview: &PlacementPreview,
    target: &ResourceRef,
) -> Vec<String> {
    let Some(after) = &preview.fleet else {
        return Vec::new();
    };
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
            "{name} is named but still not placed: {reason}; add it to the cluster selector too, or give {} a policy of its own",
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
        report.leaving = crate::backend::hub::leaving(loaded.hub_kind());
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
        report.warnings.extend(unplaceable(args, &preview, target));
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
