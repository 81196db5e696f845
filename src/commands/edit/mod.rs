//! The editing commands (`placement set`, `override add|remove`, `ocm-placement set`, `undo`,
//! `reschedule`), one a file here, and what they share: the fleet they edit (a fleet directory, or
//! the fleet a Karmada or KubeFed hub holds), finding the named resource, the report of what an
//! edit changes (the clusters that gain, lose or see a changed object, each object's diff, the
//! file's diff) and its JSON shape, the dry run and confirmation rules (a change that removes an
//! object from a cluster deletes it there: asked on a terminal, refused without one unless
//! `--yes`), and writing one edited document as the console's session does (a fleet file with a
//! backup and its comments kept, or a server-side apply to the hub), recorded in the audit log and
//! the edit journal. It must not decide what an edit is: the engine's editors do.

pub mod ocm_placement;
pub mod overrides;
pub mod placement;
pub mod reschedule;
pub mod undo;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::backend::audit;
use crate::backend::hub::{self, Hub, HubError};
use crate::backend::kube::kubeconfig::Timeouts;
use crate::cli::{EditArgs, GlobalArgs, exit};
use crate::commands::scope::{confirm, matches_filter, resource_filter};
use crate::engine::compare::{diff, secrets};
use crate::engine::document::parse::parse_files;
use crate::engine::edit::placement::{ClusterNames, DiffGroup};
use crate::engine::edit::yaml_text;
use crate::engine::{Decision, Fleet, SourceFile, load_fleet};
use crate::fleet::save::{self, journal, journal::Change};
use crate::output::{self, Table};
use crate::safe_text::printable;

/// Where the edited fleet lives.
pub enum Store {
    /// A fleet directory (its absolute path).
    Dir(PathBuf),
    /// A Karmada or KubeFed hub.
    Hub(Box<Hub>),
}

/// A fleet to edit: where it lives, the fleet and the texts it was loaded from.
pub struct Loaded {
    pub store: Store,
    pub fleet: Fleet,
    pub files: Vec<SourceFile>,
}

impl Loaded {
    /// The hub the fleet is on (none: a fleet directory).
    pub fn hub_kind(&self) -> Option<crate::model::HubKind> {
        match &self.store {
            Store::Dir(_) => None,
            Store::Hub(hub) => Some(hub.kind),
        }
    }

    /// The journal's name for this fleet.
    pub fn key(&self) -> String {
        match &self.store {
            Store::Dir(dir) => dir.display().to_string(),
            Store::Hub(hub) => format!("hub:{}", hub.context),
        }
    }
}

/// The journal's name for the fleet the global flags name, without loading it.
pub fn fleet_key(global: &GlobalArgs) -> String {
    match &global.hub {
        Some(context) => format!("hub:{context}"),
        None => absolute(&global.fleet).display().to_string(),
    }
}

fn absolute(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// Prints an input error and returns its exit code.
pub fn input_error(message: &str) -> u8 {
    crate::commands::scope::input_error(message)
}

/// Prints a hub error and returns its exit code (3 when the hub did not answer).
pub fn hub_failed(err: &HubError) -> u8 {
    eprintln!("error: {}", printable(&err.to_string(), true));
    exit::of_hub(err)
}

/// Refuses what an editing command cannot do here: the demo (`--readonly` is refused for
/// every writing command at once, before it starts).
pub fn refuse_here(global: &GlobalArgs, command: &str) -> Option<u8> {
    if global.uses_demo() {
        return Some(input_error(&format!(
            "{command} edits a fleet directory (--fleet DIR) or a hub (--hub CONTEXT); the demo's fleet is built in\n  hint: try it in the console: flotilla demo"
        )));
    }
    None
}

/// Connects to the `--hub`.
pub async fn connect_hub(global: &GlobalArgs, context: &str) -> Result<Hub, u8> {
    hub::connect(global.kubeconfig.as_deref(), context, Timeouts::default())
        .await
        .map_err(|err| hub_failed(&err))
}

/// Loads the fleet the global flags name: the hub's with `--hub`, else the fleet directory.
pub async fn load(global: &GlobalArgs) -> Result<Loaded, u8> {
    if let Some(context) = &global.hub {
        let hub = connect_hub(global, context).await?;
        if hub.kind == hub::HubKind::OpenClusterManagement {
            return Err(input_error(&format!(
                "--hub {context} is an Open Cluster Management hub: it holds no placements or overrides of resources, only Placements\n  hint: flotilla --hub {context} ocm-placement set NS/NAME …"
            )));
        }
        let (fleet, files) = hub.fleet().await.map_err(|err| hub_failed(&err))?;
        return Ok(Loaded {
            store: Store::Hub(Box::new(hub)),
            fleet,
            files,
        });
    }
    let dir = &global.fleet;
    if !dir.is_dir() {
        return Err(input_error(&format!(
            "there is no fleet directory {}\n  hint: pass --fleet DIR, or --hub CONTEXT to edit a hub's policies",
            dir.display()
        )));
    }
    let files =
        crate::source::fleet_files(global).map_err(|message| input_error(&message.to_string()))?;
    let (fleet, errors) = load_fleet(&files);
    if !errors.is_empty() {
        for error in &errors {
            eprintln!("{}", printable(&error.to_string(), true));
        }
        return Err(input_error(&format!(
            "{} error(s) in the fleet; fix them before editing it",
            errors.len()
        )));
    }
    Ok(Loaded {
        store: Store::Dir(absolute(dir)),
        fleet,
        files,
    })
}

/// What a resource argument that is not `KIND/NS/NAME` gets told.
pub fn resource_usage(text: &str) -> String {
    format!("{text:?}: name the resource as KIND/NAMESPACE/NAME (KIND/NAME when cluster-scoped)")
}

/// The index of the federated resource `text` (`KIND/NS/NAME` or `KIND/NAME`) names.
pub fn find_resource(fleet: &Fleet, text: &str) -> Result<usize, String> {
    let filter = resource_filter(text).map_err(|_| resource_usage(text))?;
    let found: Vec<usize> = fleet
        .resources
        .iter()
        .enumerate()
        .filter(|(_, r)| matches_filter(&r.target, &filter))
        .map(|(index, _)| index)
        .collect();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => {
            let keys: Vec<String> = fleet
                .resources
                .iter()
                .map(|r| r.target.display_key())
                .collect();
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            let near = crate::engine::dialect::api_groups::closest(text, &keys)
                .map(|near| format!("; did you mean {near}?"))
                .unwrap_or_default();
            Err(format!(
                "no federated resource {text} in this fleet{near}\n  hint: `flotilla render -o name` lists the objects the fleet places"
            ))
        }
        _ => Err(format!(
            "{text} names {} resources of different API groups; that cannot be told apart here",
            found.len()
        )),
    }
}

/// The clusters whose copy of an object changes, and how.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ObjectDiff {
    pub resource: String,
    pub clusters: ClusterNames,
    pub diff: String,
}

/// What an edit changes, and whether it was written: the JSON shape of every editing command
/// (`-o json`; yaml the same).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The resource the edit is for (`KIND/NS/NAME`), or the Placement (`Placement/NS/NAME`).
    pub resource: String,
    /// The edited document, e.g. `PropagationPolicy shop/web`.
    pub edited: String,
    /// Where it is written: the fleet file, or `hub:CONTEXT/Kind/namespace/name`.
    pub file: String,
    /// Clusters that get the object (or enter the Placement's decision).
    pub gained: Vec<String>,
    /// Clusters that lose it.
    pub lost: Vec<String>,
    /// What a cluster in `lost` loses, as every surface words it (`model::leaving`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub leaving: String,
    /// Clusters that keep it with a changed rendered object.
    pub changed: Vec<String>,
    /// Every resource the edit changes, the edited one first, each with the clusters it
    /// gains, loses and changes on: the whole blast radius of a shared policy's edit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub affected: Vec<Affected>,
    /// Each changed object's diff, grouped across the clusters it is the same on.
    pub diffs: Vec<ObjectDiff>,
    /// The unified diff of the file (or the object on the hub).
    pub file_diff: String,
    pub dry_run: bool,
    pub written: bool,
    pub warnings: Vec<String>,
}

/// One resource an edit changes, in `Report::affected`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Affected {
    /// `KIND/NS/NAME`.
    pub resource: String,
    pub gained: ClusterNames,
    pub lost: ClusterNames,
    pub changed: ClusterNames,
}

impl Report {
    /// Whether the edit changes anything at all.
    pub fn changes(&self) -> bool {
        !self.file_diff.is_empty()
            || !self.gained.is_empty()
            || !self.lost.is_empty()
            || !self.changed.is_empty()
    }

    fn table(&self) -> Table {
        let mut table = Table::new(&["CLUSTER", "CHANGE"]);
        for cluster in &self.gained {
            table.row(cluster.clone(), vec![cluster.clone(), "gains".into()]);
        }
        for cluster in &self.lost {
            table.row(
                cluster.clone(),
                vec![cluster.clone(), format!("leaves: {}", self.leaving)],
            );
        }
        for cluster in &self.changed {
            table.row(cluster.clone(), vec![cluster.clone(), "changes".into()]);
        }
        // What else the edit changes: every other resource of a shared policy it touches.
        for other in self.affected.iter().skip(1) {
            table.footer(format!(
                "also {}: {}",
                other.resource,
                crate::engine::edit::placement::change_words(
                    &other.gained,
                    &other.lost,
                    &other.changed
                )
            ));
        }
        for group in &self.diffs {
            table.footer(format!(
                "{} on {}:",
                group.resource,
                group.clusters.join(", ")
            ));
            for line in group.diff.lines() {
                table.footer(format!("  {line}"));
            }
        }
        if !self.file_diff.is_empty() {
            table.footer(format!("{}:", self.file));
            for line in self.file_diff.lines() {
                table.footer(format!("  {line}"));
            }
        }
        for warning in &self.warnings {
            table.footer(format!("warning: {warning}"));
        }
        table.footer(if !self.changes() {
            format!("{}: nothing to change", self.edited)
        } else if self.written {
            format!("wrote {} to {}", self.edited, self.file)
        } else {
            format!("dry run: {} not written", self.edited)
        });
        table
    }

    /// Prints the report in the `-o` format.
    pub fn print(&self, global: &GlobalArgs, out: &mut dyn Write) -> anyhow::Result<()> {
        output::write(out, &global.output, self, || self.table())
    }
}

/// The diff groups of an engine preview in the report's form.
pub fn object_diffs(groups: &[DiffGroup]) -> Vec<ObjectDiff> {
    groups
        .iter()
        .map(|group| ObjectDiff {
            resource: group.resource.display_key(),
            clusters: group.clusters.clone(),
            diff: group.diff.clone(),
        })
        .collect()
}

/// Clusters in `groups` that are in neither `gained` nor `lost`, in first-seen order.
pub fn changed_clusters(groups: &[DiffGroup], gained: &[String], lost: &[String]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for cluster in groups.iter().flat_map(|g| g.clusters.iter()) {
        if !gained.contains(cluster) && !lost.contains(cluster) && seen.insert(cluster.clone()) {
            out.push(cluster.clone());
        }
    }
    out
}

/// The unified diff of a file's text, every Secret-shaped value in it masked (which keys
/// changed shows, never their values).
pub fn text_diff(file: &str, old: &str, new: &str) -> String {
    secrets::file_diff(file, old, new)
}

/// Where an edited document is written and the diff of that write, as saving writes it: on a
/// fleet directory the file with document `document` replaced (or appended); on a hub the
/// object's own "file" (a policy flotilla creates is an object of its own there).
pub fn document_diff(
    loaded: &Loaded,
    file: &str,
    document: usize,
    object: &Value,
) -> Result<(String, String), String> {
    let (file, document) = match &loaded.store {
        Store::Dir(_) => (file.to_string(), document),
        Store::Hub(hub) => (hub::path_of(&hub.context, object), 0),
    };
    let old = loaded
        .files
        .iter()
        .find(|f| f.path == file)
        .map(|f| f.text.clone())
        .unwrap_or_default();
    let new = yaml_text::replace_or_append(&file, &old, document, object)
        .map_err(|err| err.to_string())?
        .text;
    let diff = text_diff(&file, &old, &new);
    Ok((file, diff))
}

/// What happens next, once the report is known.
pub enum Gate {
    /// Write it.
    Go,
    /// Stop with this exit code (the report was printed, or the refusal said why).
    Stop(u8),
}

/// The dry-run and confirmation rules: a dry run prints the report and stops (1 when it
/// changes something); nothing to change prints so and stops with 0; a change that removes
/// the object from clusters is asked on a terminal and refused without one unless `--yes`.
pub fn gate(
    global: &GlobalArgs,
    args: &EditArgs,
    report: &mut Report,
    out: &mut dyn Write,
) -> anyhow::Result<Gate> {
    if args.dry_run || !report.changes() {
        report.dry_run = args.dry_run;
        report.print(global, out)?;
        let code = if report.changes() {
            exit::CHANGES
        } else {
            exit::OK
        };
        return Ok(Gate::Stop(code));
    }
    if report.lost.is_empty() || args.yes {
        return Ok(Gate::Go);
    }
    let what = format!(
        "{} deletes {} from {} ({})",
        report.edited,
        report.resource,
        plural(report.lost.len(), "cluster"),
        report.lost.join(", ")
    );
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !interactive {
        return Ok(Gate::Stop(input_error(&format!(
            "this edit of {what}; there is no terminal to confirm it on, so nothing was written\n  hint: pass --yes to write it without asking, or --dry-run to see the change"
        ))));
    }
    let question = format!("{}?", printable(&what, true));
    if confirm(&question) {
        Ok(Gate::Go)
    } else {
        eprintln!("nothing written");
        Ok(Gate::Stop(exit::OK))
    }
}

fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        format!("1 {word}")
    } else {
        format!("{count} {word}s")
    }
}

/// What a document write needs to know besides the document.
pub struct DocumentWrite<'a> {
    /// The command, for the journal: `placement set`.
    pub command: &'a str,
    /// The audit log's action: `save-placement`.
    pub action: &'a str,
    pub resource: &'a str,
    pub title: &'a str,
    pub file: &'a str,
    pub document: usize,
    /// The document as the editor found it (for a policy the editor creates, that policy
    /// without rules), what an undo on a hub writes back when the hub had no such object.
    pub previous: &'a Value,
}

/// The end every document edit shares: the dry run and confirmation rules, then the write,
/// then the report (and, on a fleet directory, that `apply` propagates it).
pub async fn gate_and_write(
    global: &GlobalArgs,
    args: &EditArgs,
    loaded: &Loaded,
    what: &DocumentWrite<'_>,
    object: &Value,
    mut report: Report,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    if let Gate::Stop(code) = gate(global, args, &mut report, out)? {
        return Ok(code);
    }
    match write_document(loaded, what, object).await {
        Ok(warnings) => report.warnings = warnings,
        Err(code) => return Ok(code),
    }
    report.written = true;
    report.print(global, out)?;
    if matches!(loaded.store, Store::Dir(_)) {
        eprintln!("note: the fleet directory changed; `flotilla apply` propagates it");
    }
    Ok(exit::OK)
}

/// Writes one edited document as the console's session does: into its fleet file (a backup
/// kept, comments kept) or to the hub (server-side apply as flotilla); then the audit log and
/// the journal. Returns the warnings of the write, or the exit code of a failure (printed).
pub async fn write_document(
    loaded: &Loaded,
    what: &DocumentWrite<'_>,
    object: &Value,
) -> Result<Vec<String>, u8> {
    let mut entry = audit::Entry::new(what.action);
    entry.objects = vec![what.title.to_string()];
    entry.files = vec![what.file.to_string()];
    match &loaded.store {
        Store::Dir(_) => {
            let path = Path::new(what.file);
            // The edit is made on the text the preview was computed from, then put into the
            // file as it is now, under the fleet directory's lock.
            let base = loaded
                .files
                .iter()
                .find(|f| f.path == what.file)
                .map(|f| f.text.as_str());
            let edited = save::document_edit(path, base, what.document, object)
                .map_err(|err| save_failed(&err))?;
            let note = save::Note {
                fleet: loaded.key(),
                command: what.command.to_string(),
                title: what.title.to_string(),
                resource: what.resource.to_string(),
            };
            save::commit_one(
                save::FileEdit {
                    path,
                    base,
                    new: &edited.text,
                },
                Some(&note),
            )
            .map_err(|err| save_failed(&err))?;
            audit::record_or_warn(&entry);
            Ok(edited.warnings)
        }
        Store::Hub(hub) => {
            // On a hub every object is a file of its own (a policy flotilla creates too).
            let file = hub::path_of(&hub.context, object);
            let before = document_object(&loaded.files, &file, 0);
            hub::write::write_object(&hub.client, object, before.as_ref())
                .await
                .map_err(|err| hub_write_failed(&hub.context, what.title, &err))?;
            let action = format!("hub-{}", what.action);
            entry.action = action;
            audit::record_or_warn(&entry);
            // The hub may default fields into what it stores: the journal keeps what it holds
            // now, so an undo can tell a later change by someone else from the hub's defaults.
            let after = match hub.fleet().await {
                Ok((_, files)) => document_object(&files, &file, 0),
                Err(_) => None,
            }
            .unwrap_or_else(|| object.clone());
            journal::record_or_warn(journal::Entry {
                id: String::new(),
                fleet: loaded.key(),
                at: journal::now(),
                command: what.command.to_string(),
                title: what.title.to_string(),
                resource: what.resource.to_string(),
                change: Change::HubObject {
                    file,
                    before: before.unwrap_or_else(|| what.previous.clone()),
                    after,
                },
            });
            Ok(Vec::new())
        }
    }
}

/// Prints why a fleet file was not saved and returns the exit code: 4 when the fleet changed
/// under the edit (run it again), else 2.
pub fn save_failed(err: &save::SaveError) -> u8 {
    eprintln!("error: {}", printable(&err.to_string(), true));
    if let save::SaveError::Changed(conflict) = err {
        for line in conflict.what_changed() {
            eprintln!("  {}", printable(&line, true));
        }
    }
    if err.is_conflict() {
        eprintln!(
            "  hint: nothing was written; run the command again to edit the fleet as it is now"
        );
        exit::FLEET_CHANGED
    } else {
        exit::INPUT
    }
}

/// Prints why the hub did not take an object and returns the exit code: 4 when it changed
/// under the edit, else 3 (the hub refused or did not answer).
pub fn hub_write_failed(context: &str, title: &str, err: &hub::write::WriteError) -> u8 {
    match err {
        hub::write::WriteError::Changed(why) => {
            eprintln!(
                "error: the fleet changed under the edit: {}\n  hint: nothing was written; run the command again to edit what hub {context} holds now",
                printable(why, true)
            );
            exit::FLEET_CHANGED
        }
        hub::write::WriteError::Failed(why) => {
            eprintln!(
                "error: hub {context} refused {title}: {}",
                printable(why, true)
            );
            exit::PARTIAL
        }
    }
}

/// The document `document` of `file` among `files`, parsed.
pub fn document_object(files: &[SourceFile], file: &str, document: usize) -> Option<Value> {
    let (docs, _) = parse_files(files);
    docs.into_iter()
        .find(|doc| doc.file == file && doc.index == document)
        .map(crate::engine::document::parse::Doc::into_value)
}

/// How every (resource, cluster) differs between two loads of a fleet: the clusters that gain
/// an object, lose one, or keep one that changes, and the diffs grouped across clusters.
pub fn compare_fleets(before: &Fleet, after: &Fleet) -> (Report, Vec<ObjectDiff>) {
    let mut report = Report::default();
    let mut gained = BTreeSet::new();
    let mut lost = BTreeSet::new();
    let mut changed = BTreeSet::new();
    let mut groups: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let object = |fleet: &Fleet, r: usize, c: usize| match fleet.decide(r, c) {
        Decision::Placed { object, .. } | Decision::Suspended { object, .. } => Some(object),
        Decision::NotPlaced { .. } => None,
    };
    let targets: BTreeSet<_> = before
        .resources
        .iter()
        .chain(&after.resources)
        .map(|r| r.target.clone())
        .collect();
    let clusters: BTreeSet<String> = before
        .clusters
        .iter()
        .chain(&after.clusters)
        .map(|c| c.name.clone())
        .collect();
    for target in &targets {
        let index = |fleet: &Fleet| fleet.resources.iter().position(|r| r.target == *target);
        for cluster in &clusters {
            let old = index(before)
                .zip(before.cluster_index(cluster))
                .and_then(|(r, c)| object(before, r, c));
            let new = index(after)
                .zip(after.cluster_index(cluster))
                .and_then(|(r, c)| object(after, r, c));
            let text = match (&old, &new) {
                (None, None) => continue,
                (Some(_), None) => {
                    lost.insert(cluster.clone());
                    continue;
                }
                (None, Some(new)) => {
                    gained.insert(cluster.clone());
                    diff::unified_edit(None, new, &target.display_key())
                }
                (Some(old), Some(new)) => {
                    let text = diff::unified_edit(Some(old), new, &target.display_key());
                    if !text.is_empty() {
                        changed.insert(cluster.clone());
                    }
                    text
                }
            };
            if !text.is_empty() {
                groups
                    .entry((target.display_key(), text))
                    .or_default()
                    .push(cluster.clone());
            }
        }
    }
    report.gained = gained.into_iter().collect();
    report.lost = lost.into_iter().collect();
    report.changed = changed
        .into_iter()
        .filter(|c| !report.gained.contains(c) && !report.lost.contains(c))
        .collect();
    let diffs = groups
        .into_iter()
        .map(|((resource, diff), clusters)| ObjectDiff {
            resource,
            clusters: clusters.into(),
            diff,
        })
        .collect();
    (report, diffs)
}
