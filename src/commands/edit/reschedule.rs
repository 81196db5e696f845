//! `flotilla --hub CONTEXT reschedule KIND/NS/NAME`: what `a` does in the console on a Karmada
//! hub — set `rescheduleTriggeredAt` on the resource's binding so Karmada's scheduler places
//! it afresh (through the same `karmada::reschedule`). The scheduler may move the resource off
//! clusters, so it is confirmed as a deletion is. It must not write anything but the binding.

use std::io::Write;

use serde::Serialize;

use super::{self as edits, input_error};
use crate::backend::audit;
use crate::backend::hub;
use crate::cli::{GlobalArgs, RescheduleArgs, exit};
use crate::commands::scope::{confirm, matches_filter, resource_filter};
use crate::model::HubKind;
use crate::output::{self, Table};
use crate::safe_text::printable;

/// `reschedule`'s JSON shape.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Rescheduled {
    resource: String,
    /// The binding asked, `ResourceBinding/NS/NAME`.
    binding: String,
    /// The clusters the binding places it on now.
    clusters: Vec<String>,
    /// The `rescheduleTriggeredAt` set; empty on a dry run.
    reschedule_triggered_at: String,
    dry_run: bool,
    written: bool,
}

/// `flotilla reschedule`.
pub async fn run(
    global: &GlobalArgs,
    args: &RescheduleArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    if let Some(code) = edits::refuse_here(global, "reschedule") {
        return Ok(code);
    }
    let Some(context) = &global.hub else {
        return Ok(input_error(
            "reschedule asks a Karmada hub's scheduler; pass --hub CONTEXT\n  hint: on a fleet directory, `flotilla apply` propagates",
        ));
    };
    let filter = match resource_filter(&args.resource) {
        Ok(filter) => filter,
        Err(_) => return Ok(input_error(&edits::resource_usage(&args.resource))),
    };
    let hub = match edits::connect_hub(global, context).await {
        Ok(hub) => hub,
        Err(code) => return Ok(code),
    };
    if hub.kind != HubKind::Karmada {
        let why = hub
            .kind
            .no_reschedule()
            .unwrap_or("only Karmada hubs reschedule");
        return Ok(input_error(&format!("--hub {context}: {why}")));
    }
    let view = match hub.read().await {
        Ok(view) => view,
        Err(err) => return Ok(edits::hub_failed(&err)),
    };
    let Some(row) = view
        .rows
        .iter()
        .find(|row| matches_filter(&row.target, &filter))
    else {
        return Ok(input_error(&format!(
            "no resource {} on hub {context}\n  hint: `flotilla --hub {context} status` lists them",
            args.resource
        )));
    };
    let Some(binding) = &row.carrier else {
        return Ok(input_error(&format!(
            "{}: no binding on the hub to reschedule ({})",
            row.target.display_key(),
            row.not_placed
        )));
    };
    let mut report = Rescheduled {
        resource: row.target.display_key(),
        binding: binding.display_key(),
        clusters: row.cells.keys().cloned().collect(),
        reschedule_triggered_at: String::new(),
        dry_run: args.edit.dry_run,
        written: false,
    };
    let table = |report: &Rescheduled| {
        let mut table = Table::new(&["RESOURCE", "BINDING", "CLUSTERS"]);
        table.row(
            report.resource.clone(),
            vec![
                report.resource.clone(),
                report.binding.clone(),
                report.clusters.join(","),
            ],
        );
        table.footer(if report.written {
            format!(
                "asked Karmada to reschedule {} (rescheduleTriggeredAt {})",
                report.binding, report.reschedule_triggered_at
            )
        } else {
            format!(
                "dry run: would set rescheduleTriggeredAt on {}; the scheduler places it afresh, and its clusters may change",
                report.binding
            )
        });
        table
    };
    if args.edit.dry_run {
        output::write(out, &global.output, &report, || table(&report))?;
        return Ok(exit::CHANGES);
    }
    if !args.edit.yes {
        use std::io::IsTerminal;
        let what = format!(
            "reschedule {} on hub {context}: the scheduler places it afresh and may remove it from {}",
            report.resource,
            if report.clusters.is_empty() {
                "its clusters".to_string()
            } else {
                report.clusters.join(", ")
            }
        );
        if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
            return Ok(input_error(&format!(
                "{what}; there is no terminal to confirm it on, so nothing was asked\n  hint: pass --yes to reschedule without asking"
            )));
        }
        if !confirm(&format!("{}?", printable(&what, true))) {
            eprintln!("nothing asked");
            return Ok(exit::OK);
        }
    }
    match hub::karmada::reschedule(&hub.client, binding).await {
        Ok(at) => report.reschedule_triggered_at = at,
        Err(err) => {
            eprintln!(
                "error: hub {context} refused to reschedule {}: {}",
                report.binding,
                printable(&err.to_string(), true)
            );
            return Ok(exit::PARTIAL);
        }
    }
    let mut entry = audit::Entry::new("hub-reschedule");
    entry.objects = vec![report.binding.clone()];
    entry.clusters = report.clusters.clone();
    audit::record_or_warn(&entry);
    report.written = true;
    output::write(out, &global.output, &report, || table(&report))?;
    Ok(exit::OK)
}
