//! `flotilla --hub CONTEXT ocm-placement set NS/NAME`: the console's Open Cluster Management
//! Placement editor as a command. The flags change the parts the editor does (the label and
//! claim selectors of its predicate, tolerations, numberOfClusters) through the same engine
//! functions (`editable`, `edited`, `preview`, `patch`), and the write is the editor's: a JSON
//! patch guarded by the resourceVersion read, as field manager flotilla. It must not touch
//! anything on the hub but that Placement.

use std::io::Write;

use super::{self as edits, Gate, Report, input_error, text_diff};
use crate::backend::audit;
use crate::backend::hub::{self, Hub};
use crate::cli::{GlobalArgs, OcmPlacementSetArgs, exit};
use crate::engine::compare::diff;
use crate::engine::edit::ocm_placement::{
    DecisionPreview, PlacementEdit, PlacementWorld, PredicateText, editable, edited, patch, preview,
};
use crate::engine::edit::{EditError, Part};
use crate::fleet::save::journal::{self, Change};
use crate::model::HubKind;
use crate::safe_text::printable;

/// The edit the flags ask for; an error names the flag.
fn edit_of(args: &OcmPlacementSetArgs, current: &PlacementEdit) -> Result<PlacementEdit, String> {
    let mut edit = current.clone();
    if args.cluster_selector.is_some() || args.claim_selector.is_some() {
        if edit.predicates.len() > 1 {
            return Err(format!(
                "the Placement has {} predicates (ORed); --cluster-selector and --claim-selector edit a Placement with at most one\n  hint: edit it in the console (flotilla --hub CONTEXT, then e) or with kubectl",
                edit.predicates.len()
            ));
        }
        if edit.predicates.is_empty() {
            edit.predicates.push(PredicateText::default());
        }
        let predicate = &mut edit.predicates[0];
        if let Some(text) = &args.cluster_selector {
            predicate.labels = text.trim().to_string();
        }
        if let Some(text) = &args.claim_selector {
            predicate.claims = text.trim().to_string();
        }
    }
    if !args.tolerate.is_empty() {
        edit.tolerations = args
            .tolerate
            .iter()
            .map(|t| t.trim())
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join(",");
    }
    if let Some(count) = &args.number_of_clusters {
        edit.count = count.trim().to_string();
    }
    Ok(edit)
}

/// The flag an engine error of `edited` is about, for the message.
fn flag_of(error: &EditError) -> &'static str {
    match error {
        EditError::InPart { part, .. } => match part {
            Part::Labels(_) => "--cluster-selector",
            Part::Claims(_) => "--claim-selector",
            Part::Tolerations => "--tolerate",
            Part::NumberOfClusters => "--number-of-clusters",
        },
        _ => "the edit",
    }
}

/// The report's cluster lists of a decision preview.
pub fn decision_report(report: &mut Report, decision: &DecisionPreview) {
    report.gained = decision.entering().map(str::to_string).collect();
    report.lost = decision.leaving().map(str::to_string).collect();
    report.leaving = crate::model::leaving(Some(crate::model::HubKind::OpenClusterManagement));
    if !decision.satisfied.0 {
        report.warnings.push(format!(
            "OCM will report PlacementSatisfied=False ({})",
            decision.satisfied.1
        ));
    }
    report.warnings.extend(decision.notes.iter().cloned());
}

/// Connects to the OCM hub `context` and reads its Placements: the hub, what they are decided
/// against, and the index of Placement `namespace/name` among them; or the exit code (printed).
pub async fn read_placement(
    global: &GlobalArgs,
    context: &str,
    namespace: &str,
    name: &str,
) -> Result<(Hub, PlacementWorld, usize), u8> {
    let hub = edits::connect_hub(global, context).await?;
    if hub.kind != HubKind::OpenClusterManagement {
        return Err(input_error(&format!(
            "--hub {context} is a {} hub, not Open Cluster Management\n  hint: placement set KIND/NS/NAME edits a {} policy",
            hub.kind.as_str(),
            hub.kind.as_str()
        )));
    }
    let world = match hub::ocm::placement_world(&hub.client).await {
        Ok((world, _)) => world,
        Err(reason) => {
            eprintln!(
                "error: --hub {context}: the Placements could not be read: {}",
                printable(&reason.to_string(), true)
            );
            return Err(exit::PARTIAL);
        }
    };
    let Some(at) = world
        .placements
        .iter()
        .position(|p| p.namespace() == namespace && p.name() == name)
    else {
        return Err(input_error(&format!(
            "no Placement {namespace}/{name} on hub {context}\n  hint: kubectl --context {context} get placements -A"
        )));
    };
    Ok((hub, world, at))
}

/// `flotilla ocm-placement set`.
pub async fn run_set(
    global: &GlobalArgs,
    args: &OcmPlacementSetArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    if let Some(code) = edits::refuse_here(global, "ocm-placement set") {
        return Ok(code);
    }
    let Some(context) = &global.hub else {
        return Ok(input_error(
            "ocm-placement set edits a Placement on an Open Cluster Management hub\n  hint: pass --hub CONTEXT",
        ));
    };
    let Some((namespace, name)) = args
        .placement
        .split_once('/')
        .filter(|(ns, name)| !ns.is_empty() && !name.is_empty() && !name.contains('/'))
    else {
        return Ok(input_error(&format!(
            "{:?}: name the Placement as NAMESPACE/NAME",
            args.placement
        )));
    };
    if args.cluster_selector.is_none()
        && args.claim_selector.is_none()
        && args.tolerate.is_empty()
        && args.number_of_clusters.is_none()
    {
        return Ok(input_error(
            "ocm-placement set: name what to change\n  hint: --cluster-selector, --claim-selector, --tolerate or --number-of-clusters (see --help)",
        ));
    }
    let (hub, world, at) = match read_placement(global, context, namespace, name).await {
        Ok(read) => read,
        Err(code) => return Ok(code),
    };
    let base = &world.placements[at];
    let edit = match edit_of(args, &editable(&base.object)) {
        Ok(edit) => edit,
        Err(message) => return Ok(input_error(&message)),
    };
    let after = match edited(&base.object, &edit) {
        Ok(after) => after,
        Err(error) => {
            return Ok(input_error(&format!(
                "{}: {error}\n  hint: selectors in kubectl's -l syntax (`env=prod,tier in (a,b)`), tolerations key=value:NoSelect, a whole number of clusters; '' clears a part",
                flag_of(&error)
            )));
        }
    };
    let title = base.title();
    let file = format!("hub:{context}/Placement/{namespace}/{name}");
    let mut report = Report {
        resource: format!("Placement/{namespace}/{name}"),
        edited: title.clone(),
        file: file.clone(),
        ..Report::default()
    };
    if after != base.object {
        let decision = match preview(&world, base, &after) {
            Ok(decision) => decision,
            Err(error) => return Ok(input_error(&error.to_string())),
        };
        decision_report(&mut report, &decision);
        report.file_diff = text_diff(&file, &diff::to_yaml(&base.object), &diff::to_yaml(&after));
    }
    match edits::gate(global, &args.edit, &mut report, out)? {
        Gate::Stop(code) => return Ok(code),
        Gate::Go => {}
    }
    let ops = patch(&base.object, &after);
    if let Err(err) = hub::ocm::write_placement(&hub.client, namespace, name, &ops).await {
        eprintln!(
            "error: hub {context} refused {title}: {}",
            printable(&err.to_string(), true)
        );
        return Ok(exit::of_hub(&err));
    }
    let mut entry = audit::Entry::new("hub-placement");
    entry.objects = vec![format!("Placement/{namespace}/{name}")];
    entry.clusters = report.gained.iter().chain(&report.lost).cloned().collect();
    audit::record_or_warn(&entry);
    // What the hub holds now (with its new resourceVersion), for undo to compare with.
    let stored = match hub::ocm::placement_world(&hub.client).await {
        Ok((world, _)) => world
            .placements
            .into_iter()
            .find(|p| p.namespace() == namespace && p.name() == name)
            .map(|p| p.object),
        Err(_) => None,
    };
    journal::record_or_warn(journal::Entry {
        id: String::new(),
        fleet: format!("hub:{context}"),
        at: journal::now(),
        command: "ocm-placement set".into(),
        title: title.clone(),
        resource: report.resource.clone(),
        change: Change::OcmPlacement {
            namespace: namespace.to_string(),
            name: name.to_string(),
            before: base.object.clone(),
            after: stored.unwrap_or(after),
        },
    });
    report.written = true;
    report.print(global, out)?;
    Ok(exit::OK)
}
