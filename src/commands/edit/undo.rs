//! `flotilla undo`: takes back the last edit an editing command wrote to this fleet (the fleet
//! directory, or the `--hub`), from the edit journal. A fleet file gets its whole previous text
//! back; a hub policy its previous form (server-side apply, as the editors write); an OCM
//! Placement its previous predicates, tolerations and numberOfClusters (the editor's undo).
//! It refuses when the file or object changed since flotilla wrote it, so it never overwrites
//! someone else's edit, and it confirms like the editors when the undo removes objects from
//! clusters. It must not undo anything the journal does not hold.

use std::io::Write;
use std::path::Path;

use serde_json::Value;

use super::ocm_placement::{decision_report, read_placement};
use super::{self as edits, Gate, Report, compare_fleets, input_error, text_diff};
use crate::backend::audit;
use crate::backend::hub;
use crate::cli::{GlobalArgs, UndoArgs, exit};
use crate::engine::compare::diff;
use crate::engine::edit::by_document::{self, DocChange};
use crate::engine::edit::ocm_placement::{editable, patch, preview, with_parts_of};
use crate::engine::edit::yaml_text;
use crate::engine::{SourceFile, load_fleet};
use crate::fleet::save;
use crate::fleet::save::journal::{self, Change};
use crate::safe_text::printable;

fn changed_since(entry: &journal::Entry, what: &str) -> u8 {
    input_error(&format!(
        "{what} changed since flotilla's {} of {} wrote it at {}; nothing was restored, so that change is kept\n  hint: look at it, and edit it back by hand if the undo is still wanted",
        entry.command, entry.title, entry.at
    ))
}

/// `flotilla undo`.
pub async fn run(global: &GlobalArgs, args: &UndoArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    if let Some(code) = edits::refuse_here(global, "undo") {
        return Ok(code);
    }
    let key = edits::fleet_key(global);
    let entries = match journal::newest_first(&key) {
        Ok(entries) => entries,
        Err(message) => return Ok(input_error(&message.to_string())),
    };
    // The newest entry whose edit is in the fleet: an entry written ahead of a write that
    // never happened (flotilla was killed in between) is passed over, and forgotten.
    let mut found = None;
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(message) => return Ok(input_error(&message.to_string())),
        };
        if never_landed(&entry) {
            let _ = journal::forget(&entry);
            continue;
        }
        found = Some(entry);
        break;
    }
    let Some(entry) = found else {
        eprintln!("nothing to undo: flotilla has written no edit to {key}");
        return Ok(exit::OK);
    };
    let mut report = Report {
        resource: entry.resource.clone(),
        edited: entry.title.clone(),
        ..Report::default()
    };
    let code = match &entry.change {
        Change::Documents { path, docs } => {
            undo_file(global, args, &entry, &mut report, (path, docs), out)?
        }
        Change::HubObject {
            file,
            before,
            after,
        } => {
            undo_hub_object(
                global,
                args,
                &entry,
                &mut report,
                (file, before, after),
                out,
            )
            .await?
        }
        Change::OcmPlacement {
            namespace,
            name,
            before,
            after,
        } => {
            undo_placement(
                global,
                args,
                &entry,
                &mut report,
                (namespace, name, before, after),
                out,
            )
            .await?
        }
    };
    if report.written
        && let Err(message) = journal::forget(&entry)
    {
        eprintln!("warning: the undo was written but stays in the edit journal: {message}");
    }
    Ok(code)
}

/// Writes `report` done, or the code `gate` stopped at.
fn finish(global: &GlobalArgs, report: &mut Report, out: &mut dyn Write) -> anyhow::Result<u8> {
    report.written = true;
    report.print(global, out)?;
    Ok(exit::OK)
}

/// Whether a file entry's edit is not in its file, while what it replaced still is: the
/// journal got the entry, the file never got the write.
fn never_landed(entry: &journal::Entry) -> bool {
    let Change::Documents { path, docs } = &entry.change else {
        return false;
    };
    // A write under way holds its directory's lock from the journal entry to the rename.
    let _held = save::hold_dir_of(Path::new(path));
    let current = std::fs::read_to_string(path).unwrap_or_default();
    by_document::apply(path, &current, &inverse(docs)).is_err()
        && by_document::apply(path, &current, docs).is_ok()
}

/// The changes that take `docs` back, last first.
fn inverse(docs: &[DocChange]) -> Vec<DocChange> {
    docs.iter().rev().map(DocChange::inverse).collect()
}

fn undo_file(
    global: &GlobalArgs,
    args: &UndoArgs,
    entry: &journal::Entry,
    report: &mut Report,
    (path, docs): (&str, &[DocChange]),
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    report.file = path.to_string();
    let current = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) => return Ok(input_error(&format!("{path}: {err}; nothing restored"))),
    };
    // Each document the edit changed goes back, found by what flotilla left there; what
    // others changed in the file's other documents stays.
    let before = match by_document::apply(path, &current, &inverse(docs)) {
        Ok(text) => text,
        Err(_) => return Ok(changed_since(entry, path)),
    };
    // What the undo does on the clusters: the fleet as it is against the fleet restored.
    let files = match crate::source::fleet_files(global) {
        Ok(files) => files,
        Err(message) => return Ok(input_error(&message.to_string())),
    };
    let canonical = |p: &str| std::fs::canonicalize(p).ok();
    let restored: Vec<SourceFile> = files
        .iter()
        .map(|file| SourceFile {
            path: file.path.clone(),
            text: if canonical(&file.path) == canonical(path) {
                before.clone()
            } else {
                file.text.clone()
            },
        })
        .collect();
    let (now, _) = load_fleet(&files);
    let (then, errors) = load_fleet(&restored);
    if let Some(error) = errors.first() {
        return Ok(input_error(&format!(
            "the fleet would not load with {path} restored ({error}); nothing restored"
        )));
    }
    let (change, diffs) = compare_fleets(&now, &then);
    report.gained = change.gained;
    report.lost = change.lost;
    report.changed = change.changed;
    report.diffs = diffs;
    report.file_diff = text_diff(path, &current, &before);
    match edits::gate(global, &args.edit, report, out)? {
        Gate::Stop(code) => return Ok(code),
        Gate::Go => {}
    }
    let edit = save::FileEdit {
        path: Path::new(path),
        base: Some(&current),
        new: &before,
    };
    if let Err(err) = save::commit_one(edit, None) {
        return Ok(edits::save_failed(&err));
    }
    let mut audit_entry = audit::Entry::new("undo");
    audit_entry.objects = vec![entry.title.clone()];
    audit_entry.files = vec![path.to_string()];
    audit::record_or_warn(&audit_entry);
    finish(global, report, out)
}

async fn undo_hub_object(
    global: &GlobalArgs,
    args: &UndoArgs,
    entry: &journal::Entry,
    report: &mut Report,
    (file, before, after): (&str, &Value, &Value),
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    report.file = file.to_string();
    let loaded = match edits::load(global).await {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    let edits::Store::Hub(hub) = &loaded.store else {
        return Ok(input_error("undo of a hub edit needs --hub"));
    };
    let current = edits::document_object(&loaded.files, file, 0);
    if !current
        .as_ref()
        .is_some_and(|c| hub::write::same_written(c, after))
    {
        return Ok(changed_since(entry, file));
    }
    let restored_text = match yaml_text::to_block_yaml(before) {
        Ok(text) => text,
        Err(message) => return Ok(input_error(&message.to_string())),
    };
    let current_text = loaded
        .files
        .iter()
        .find(|f| f.path == file)
        .map(|f| f.text.clone())
        .unwrap_or_default();
    let restored: Vec<SourceFile> = loaded
        .files
        .iter()
        .map(|f| SourceFile {
            path: f.path.clone(),
            text: if f.path == file {
                restored_text.clone()
            } else {
                f.text.clone()
            },
        })
        .collect();
    let (then, errors) = load_fleet(&restored);
    if let Some(error) = errors.first() {
        return Ok(input_error(&format!(
            "the hub's fleet would not load with {file} restored ({error}); nothing restored"
        )));
    }
    let (change, diffs) = compare_fleets(&loaded.fleet, &then);
    report.gained = change.gained;
    report.lost = change.lost;
    report.changed = change.changed;
    report.diffs = diffs;
    report.file_diff = text_diff(file, &current_text, &restored_text);
    match edits::gate(global, &args.edit, report, out)? {
        Gate::Stop(code) => return Ok(code),
        Gate::Go => {}
    }
    if let Err(err) = hub::write::write_object(&hub.client, before, current.as_ref()).await {
        return Ok(edits::hub_write_failed(&hub.context, &entry.title, &err));
    }
    let mut audit_entry = audit::Entry::new("hub-undo");
    audit_entry.objects = vec![entry.title.clone()];
    audit::record_or_warn(&audit_entry);
    finish(global, report, out)
}

async fn undo_placement(
    global: &GlobalArgs,
    args: &UndoArgs,
    entry: &journal::Entry,
    report: &mut Report,
    (namespace, name, before, after): (&str, &str, &Value, &Value),
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let Some(context) = &global.hub else {
        return Ok(input_error("undo of an OCM Placement edit needs --hub"));
    };
    report.file = format!("hub:{context}/Placement/{namespace}/{name}");
    let (hub, world, at) = match read_placement(global, context, namespace, name).await {
        Ok(read) => read,
        Err(code) => return Ok(code),
    };
    let current = &world.placements[at];
    if editable(&current.object) != editable(after) {
        return Ok(changed_since(entry, &report.file));
    }
    let restored = with_parts_of(&current.object, before);
    let decision = match preview(&world, current, &restored) {
        Ok(decision) => decision,
        Err(error) => return Ok(input_error(&format!("cannot undo: {error}"))),
    };
    decision_report(report, &decision);
    report.file_diff = text_diff(
        &report.file,
        &diff::to_yaml(&current.object),
        &diff::to_yaml(&restored),
    );
    match edits::gate(global, &args.edit, report, out)? {
        Gate::Stop(code) => return Ok(code),
        Gate::Go => {}
    }
    let ops = patch(&current.object, &restored);
    if let Err(err) = hub::ocm::write_placement(&hub.client, namespace, name, &ops).await {
        eprintln!(
            "error: hub {context} refused {}: {}",
            entry.title,
            printable(&err.to_string(), true)
        );
        return Ok(exit::PARTIAL);
    }
    let mut audit_entry = audit::Entry::new("hub-placement-undo");
    audit_entry.objects = vec![format!("Placement/{namespace}/{name}")];
    audit::record_or_warn(&audit_entry);
    finish(global, report, out)
}
