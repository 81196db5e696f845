//! `flotilla repair`: resolve drift in one of three ways, scoped by cluster, resource and path.
//! `--revert` re-applies the desired value, forcing ownership of exactly the chosen fields
//! back from whoever changed them; `--adopt` turns the live value into an override for that
//! cluster, saved in the fleet directory in the resource's dialect; `--ignore` saves a
//! DriftIgnore rule. It shows what it will do and asks first (never mutates without `--yes`
//! when there is no terminal), writes an audit-log entry for every write, and must not touch
//! anything outside the drift it found (or, for `--ignore --path`, the scope it was given).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::backend::audit::{self, ClusterResult, Entry};
use crate::backend::fanout::apply::Outcome;
use crate::backend::fanout::cluster_api::ClusterApi;
use crate::backend::fanout::drift::{self, DriftItem};
use crate::backend::fanout::object::{FIELD_MANAGER, resource_of};
use crate::backend::fanout::revert::{Chosen, revert_fields};
use crate::backend::fanout::targets::{Ignores, Options, Target};
use crate::cli::{GlobalArgs, RepairArgs, exit};
use crate::engine::compare::diff::{self, Segment};
use crate::engine::compare::ignore::{self, IgnoreRule, PathPattern};
use crate::engine::compare::secrets;
use crate::engine::edit::adopt::{self, Field, Workspace};
use crate::engine::{Fleet, SourceFile, load_fleet};
use crate::fleet::save;
use crate::model::ResourceRef;
use crate::output::{self, Table};
use crate::safe_text::printable;

use super::propagate::DEMO_WRITES_NOTE;
use super::scope::{
    Clusters, InputError, Prepared, ResourceScope, confirm, input_error, matches_filter,
    prepare_clusters, resource_filter,
};

/// File new ignore rules go to, inside the fleet directory.
pub const IGNORE_FILE: &str = "flotilla-ignore.yaml";

/// How the drift is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Way {
    Revert,
    Adopt,
    Ignore,
}

impl Way {
    fn verb(self) -> &'static str {
        match self {
            Way::Revert => "revert",
            Way::Adopt => "adopt",
            Way::Ignore => "ignore",
        }
    }
}

/// One row of `repair -o json`: a field and what happened to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepairItem {
    pub cluster: String,
    pub resource: ResourceRef,
    pub path: String,
    pub action: Way,
    pub desired: Value,
    pub live: Value,
    pub manager: Option<String>,
    /// `done` or `failed`.
    pub result: String,
    pub message: String,
}

#[derive(Serialize)]
struct Report<'a> {
    items: &'a [RepairItem],
    /// Fleet files written (adopt, ignore).
    files: &'a [String],
    warnings: &'a [String],
}

/// One drifted field with what repair needs: its path segments and the live object.
struct Found {
    cluster: String,
    resource: ResourceRef,
    segments: Vec<Segment>,
    pointer: String,
    desired: Value,
    live: Option<Value>,
    manager: Option<String>,
    /// Whether the values are a Secret's: shown and reported masked.
    secret: bool,
}

impl Found {
    /// The desired and live (`null` when absent) values as a person may read them.
    fn shown(&self) -> (Value, Value) {
        let live = self.live.clone().unwrap_or(Value::Null);
        if self.secret {
            secrets::mask_field(&self.desired, &live)
        } else {
            (self.desired.clone(), live)
        }
    }
}

/// `flotilla repair`.
pub async fn run_repair(
    global: &GlobalArgs,
    args: &RepairArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let way = match (args.revert, args.adopt, args.ignore) {
        (true, false, false) => Way::Revert,
        (false, true, false) => Way::Adopt,
        (false, false, true) => Way::Ignore,
        _ => {
            return Ok(input_error(
                "choose exactly one of --revert, --adopt, --ignore",
            ));
        }
    };
    let path = match args.path.as_deref().map(PathPattern::parse).transpose() {
        Ok(path) => path,
        Err(message) => return Ok(input_error(&format!("--path {message}"))),
    };
    if let Err(InputError(message)) = ResourceScope::parse(&args.scope) {
        return Ok(input_error(&message));
    }
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !args.yes && !interactive {
        return Ok(input_error(
            "repair needs confirmation and there is no terminal to ask on; nothing was changed\n  hint: pass --yes to repair without asking",
        ));
    }
    match prepare_clusters(global, &args.scope, false).await {
        Err(InputError(message)) => Ok(input_error(&message)),
        Ok(Clusters::Live(prepared)) => repair_on(global, args, way, path, prepared, out).await,
        Ok(Clusters::Simulated(prepared)) => {
            repair_on(global, args, way, path, prepared, out).await
        }
    }
}

async fn repair_on<A: ClusterApi>(
    global: &GlobalArgs,
    args: &RepairArgs,
    way: Way,
    path: Option<PathPattern>,
    prepared: Prepared<A>,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let store = FleetStore::of(global, prepared.files);
    let options = Options::default();
    let (drifted, errors) =
        drift::drift_with(&prepared.targets, options, &prepared.ignores, &|_, _| {}).await;
    for line in super::propagate::error_lines(&errors) {
        eprintln!("{}", printable(&line, false));
    }
    let found = details(
        &prepared.targets,
        &prepared.ignores,
        &drifted,
        path.as_ref(),
    )
    .await;
    let failed_clusters = !errors.is_empty();

    let mut items: Vec<RepairItem> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let nothing = found.is_empty();
    // `--ignore --path` may be written ahead of any drift for an explicit scope.
    let ignore_ahead =
        way == Way::Ignore && nothing && path.is_some() && !args.scope.resources.is_empty();
    if nothing && !ignore_ahead {
        eprintln!("nothing to repair: no drift matches the scope");
        write_report(global, out, &items, &files, &warnings)?;
        return Ok(if failed_clusters {
            exit::PARTIAL
        } else {
            exit::OK
        });
    }

    if !args.yes {
        preview(way, &found, ignore_ahead, args);
        let question = format!(
            "{} {} field(s) on {} cluster(s)?",
            capitalised(way.verb()),
            found.len(),
            found
                .iter()
                .map(|f| &f.cluster)
                .collect::<BTreeSet<_>>()
                .len()
        );
        let question = if ignore_ahead {
            format!(
                "Write an ignore rule for {}?",
                args.path.as_deref().unwrap_or("")
            )
        } else {
            question
        };
        if !confirm(&question) {
            eprintln!("nothing changed");
            return Ok(exit::INPUT);
        }
    }

    let result = match way {
        Way::Revert => {
            let (rows, entry) = revert(prepared.targets, &prepared.ignores, &found, options).await;
            if store.builtin {
                // The simulated fleet is no one's: its writes are not audited.
                eprintln!("note: {DEMO_WRITES_NOTE}");
            } else {
                audit::record_or_warn(&entry);
            }
            items = rows;
            Ok(())
        }
        Way::Adopt => adopt_found(
            &store,
            &prepared.fleet,
            &found,
            &mut items,
            &mut files,
            &mut warnings,
        ),
        Way::Ignore => write_ignore(
            &store,
            &prepared.fleet,
            args,
            path.as_ref(),
            &found,
            &mut items,
            &mut files,
        ),
    };
    match result {
        Ok(()) => {}
        Err(Refused::Input(message)) => return Ok(input_error(&message)),
        Err(Refused::Save(err)) => return Ok(super::edit::save_failed(&err)),
    }
    if store.builtin && way != Way::Revert {
        warnings.push(BUILTIN_FLEET_WARNING.into());
    }
    for warning in &warnings {
        eprintln!("warning: {}", printable(warning, false));
    }
    write_report(global, out, &items, &files, &warnings)?;
    let some_failed = items.iter().any(|i| i.result == "failed");
    Ok(if some_failed || failed_clusters {
        exit::PARTIAL
    } else {
        exit::OK
    })
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Re-reads each drifted object and lists its drifted fields (after ignore rules) that the
/// path selects, with segments and the live object.
async fn details<A: ClusterApi>(
    targets: &[Target<A>],
    ignores: &Ignores,
    drifted: &[DriftItem],
    path: Option<&PathPattern>,
) -> Vec<Found> {
    let mut found = Vec::new();
    for item in drifted {
        let Some(target) = targets.iter().find(|t| t.cluster == item.cluster) else {
            continue;
        };
        let Ok(api) = &target.api else {
            continue;
        };
        let Some(desired) = target
            .objects
            .iter()
            .find(|o| resource_of(o) == item.resource)
        else {
            continue;
        };
        let Ok(Some(live)) = api.get(&item.resource).await else {
            continue;
        };
        let rules = ignores.for_object(&item.cluster, &item.resource);
        for field in diff::drifted_fields(desired, &live) {
            if ignore::is_ignored(&rules, &live, &field.path, FIELD_MANAGER) {
                continue;
            }
            if path.is_some_and(|p| !p.covers(&field.path)) {
                continue;
            }
            let manager = diff::owner_of(&live, &field.path, FIELD_MANAGER).map(|(m, _)| m);
            let pointer = field.pointer();
            found.push(Found {
                cluster: item.cluster.clone(),
                resource: item.resource.clone(),
                secret: secrets::is_secret_value(desired, &pointer),
                pointer,
                segments: field.path,
                desired: field.desired,
                live: field.live.clone(),
                manager,
            });
        }
    }
    found
}

fn preview(way: Way, found: &[Found], ignore_ahead: bool, args: &RepairArgs) {
    let mut err = std::io::stderr().lock();
    if ignore_ahead {
        let _ = writeln!(
            err,
            "ignore {} on {} for {} (no drift there yet)",
            args.path.as_deref().unwrap_or(""),
            if args.scope.clusters.is_empty() {
                "every cluster".to_string()
            } else {
                args.scope.clusters.join(", ")
            },
            args.scope.resources.join(", ")
        );
        return;
    }
    for f in found {
        let (desired, live) = f.shown();
        let live = match f.live {
            Some(_) => live.to_string(),
            None => "(absent)".into(),
        };
        let what = match way {
            Way::Revert => format!("live {live} -> desired {desired}"),
            Way::Adopt => format!("keep live {live} as an override (desired was {desired})"),
            Way::Ignore => format!("stop reporting (live {live}, desired {desired})"),
        };
        let line = format!(
            "{} {}  {}  {}  {what}  (changed by {})",
            way.verb(),
            f.cluster,
            f.resource.display_key(),
            f.pointer,
            f.manager.as_deref().unwrap_or("(unknown)")
        );
        let _ = writeln!(err, "{}", printable(&line, false));
    }
}

/// The report's row for a field; a Secret's values masked, as everything the report shows.
fn item(f: &Found, way: Way, result: &str, message: String) -> RepairItem {
    let (desired, live) = f.shown();
    RepairItem {
        cluster: f.cluster.clone(),
        resource: f.resource.clone(),
        path: f.pointer.clone(),
        action: way,
        desired,
        live,
        manager: f.manager.clone(),
        result: result.into(),
        message,
    }
}

/// Re-applies the desired objects with force, but with every drifted field that was *not*
/// chosen set to its live value, so only the chosen fields change (and change owner).
/// Returns the rows and the audit entry for the caller to record.
async fn revert<A: ClusterApi>(
    targets: Vec<Target<A>>,
    ignores: &Ignores,
    found: &[Found],
    options: Options,
) -> (Vec<RepairItem>, Entry) {
    let chosen: BTreeSet<Chosen> = found
        .iter()
        .map(|f| (f.cluster.clone(), f.resource.clone(), f.pointer.clone()))
        .collect();
    let results = revert_fields(targets, &chosen, ignores, options).await;
    let rows: Vec<RepairItem> = found
        .iter()
        .map(|f| {
            match results
                .iter()
                .find(|r| r.cluster == f.cluster && r.resource == f.resource)
            {
                Some(r) if r.result == Outcome::Applied => {
                    item(f, Way::Revert, "done", String::new())
                }
                Some(r) => item(f, Way::Revert, "failed", r.message.clone()),
                None => item(f, Way::Revert, "failed", "not applied".into()),
            }
        })
        .collect();
    let mut entry = Entry::from_apply("repair-revert", &results);
    entry.paths = found
        .iter()
        .map(|f| f.pointer.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    (rows, entry)
}

/// Where adopt and ignore keep the fleet's files: the fleet directory, or, on the demo, the
/// fleet built into the binary, which is never written (what would change is only reported).
struct FleetStore {
    /// The directory new files go to (`demo` names the built-in fleet's).
    base: PathBuf,
    builtin: bool,
    /// The fleet's files as the command loaded them.
    sources: Vec<SourceFile>,
    /// The journal's name for the fleet.
    key: String,
}

impl FleetStore {
    fn of(global: &GlobalArgs, sources: Vec<SourceFile>) -> FleetStore {
        let builtin = global.uses_demo();
        FleetStore {
            base: if builtin {
                PathBuf::from("demo")
            } else {
                global.fleet.clone()
            },
            builtin,
            sources,
            key: super::edit::fleet_key(global),
        }
    }
}

/// The warning when adopt or ignore would have written the demo's built-in fleet.
const BUILTIN_FLEET_WARNING: &str =
    "the demo fleet is built into flotilla and is never written: nothing was saved";

/// Why adopting or ignoring wrote nothing: bad input (exit 2), or a save the fleet refused
/// (exit 4 when it changed under the edit).
enum Refused {
    Input(String),
    Save(save::SaveError),
}

impl From<String> for Refused {
    fn from(message: String) -> Refused {
        Refused::Input(message)
    }
}

impl From<crate::engine::edit::EditError> for Refused {
    fn from(error: crate::engine::edit::EditError) -> Refused {
        Refused::Input(error.to_string())
    }
}

impl From<&str> for Refused {
    fn from(message: &str) -> Refused {
        Refused::Input(message.to_string())
    }
}

/// Writes changed files compare-and-swap (each change put into the file as it is now, under
/// the fleet directory's lock, journalled for `flotilla undo`) and returns their paths.
fn save(
    store: &FleetStore,
    what: &str,
    changes: &[adopt::FileChange],
    warnings: &mut Vec<String>,
) -> Result<Vec<String>, Refused> {
    let edits: Vec<save::FileEdit<'_>> = changes
        .iter()
        .map(|change| save::FileEdit {
            path: Path::new(&change.path),
            base: change.old.as_deref(),
            new: &change.new,
        })
        .collect();
    let note = save::Note {
        fleet: store.key.clone(),
        command: what.to_string(),
        title: what.to_string(),
        resource: String::new(),
    };
    let saved = save::commit(&edits, Some(&note)).map_err(Refused::Save)?;
    for change in changes {
        warnings.extend(
            change
                .warnings
                .iter()
                .map(|w| format!("{}: {w}", change.path)),
        );
    }
    Ok(saved
        .iter()
        .map(|saved| saved.path.display().to_string())
        .collect())
}

fn file_entry(action: &str, found: &[Found], files: &[String], ok: bool, message: &str) -> Entry {
    let mut entry = Entry::new(action);
    let clusters: BTreeSet<&str> = found.iter().map(|f| f.cluster.as_str()).collect();
    entry.clusters = clusters.iter().map(|c| c.to_string()).collect();
    entry.objects = found
        .iter()
        .map(|f| f.resource.display_key())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    entry.paths = found
        .iter()
        .map(|f| f.pointer.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    entry.files = files.to_vec();
    entry.results = clusters
        .iter()
        .map(|c| {
            let n = found.iter().filter(|f| f.cluster == *c).count();
            ClusterResult {
                cluster: c.to_string(),
                result: if ok { "ok" } else { "failed" }.into(),
                done: if ok { n } else { 0 },
                failed: if ok { 0 } else { n },
                message: message.to_string(),
            }
        })
        .collect();
    entry
}

fn adopt_found(
    store: &FleetStore,
    fleet: &Fleet,
    found: &[Found],
    items: &mut Vec<RepairItem>,
    files: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Result<(), Refused> {
    let fallback = store
        .base
        .join("flotilla-overrides.yaml")
        .display()
        .to_string();
    let mut work = Workspace::new(store.sources.clone(), fallback);
    let mut groups: BTreeMap<(String, ResourceRef), Vec<&Found>> = BTreeMap::new();
    for f in found {
        groups
            .entry((f.cluster.clone(), f.resource.clone()))
            .or_default()
            .push(f);
    }
    let mut adopted = Vec::new();
    for ((cluster, resource), fields) in &groups {
        let Some(r) = fleet.resources.iter().position(|x| &x.target == resource) else {
            continue;
        };
        let Some(c) = fleet.cluster_index(cluster) else {
            continue;
        };
        let desired = match fleet.decide(r, c) {
            crate::engine::Decision::Placed { object, .. } => object,
            crate::engine::Decision::Suspended { reason, .. }
            | crate::engine::Decision::NotPlaced { reason } => return Err(reason.into()),
        };
        let mut wanted = Vec::new();
        for f in fields {
            let pointer = adopt::desired_pointer(&desired, &f.segments).ok_or_else(|| {
                format!(
                    "{} {}: the field is not in the rendered object",
                    resource.display_key(),
                    f.pointer
                )
            })?;
            wanted.push(Field {
                pointer,
                value: f.live.clone(),
            });
        }
        adopt::adopt(&mut work, fleet, resource, cluster, &wanted)?;
        adopted.push((resource.clone(), cluster.clone(), wanted));
    }
    if let Err(error) = adopt::verify(&work, &adopted) {
        let message = error.to_string();
        if !store.builtin {
            audit::record_or_warn(&file_entry("repair-adopt", found, &[], false, &message));
        }
        return Err(format!("nothing saved: {message}").into());
    }
    if store.builtin {
        let would: Vec<String> = work.changes().iter().map(|c| c.path.clone()).collect();
        items.extend(found.iter().map(|f| {
            item(
                f,
                Way::Adopt,
                "skipped",
                format!("the override would be saved in {}", would.join(", ")),
            )
        }));
        return Ok(());
    }
    let written = save(store, "repair --adopt", &work.changes(), warnings)?;
    audit::record_or_warn(&file_entry("repair-adopt", found, &written, true, ""));
    items.extend(found.iter().map(|f| {
        item(
            f,
            Way::Adopt,
            "done",
            format!("override saved in {}", written.join(", ")),
        )
    }));
    files.extend(written);
    Ok(())
}

fn write_ignore(
    store: &FleetStore,
    fleet: &Fleet,
    args: &RepairArgs,
    path: Option<&PathPattern>,
    found: &[Found],
    items: &mut Vec<RepairItem>,
    files: &mut Vec<String>,
) -> Result<(), Refused> {
    let mut resources: BTreeSet<ResourceRef> = found.iter().map(|f| f.resource.clone()).collect();
    if found.is_empty() {
        for text in &args.scope.resources {
            let filter = resource_filter(text).map_err(|InputError(m)| m)?;
            resources.extend(
                fleet
                    .resources
                    .iter()
                    .filter(|r| matches_filter(&r.target, &filter))
                    .map(|r| r.target.clone()),
            );
        }
    }
    let paths: Vec<String> = match path {
        Some(p) => vec![p.text.clone()],
        None => found
            .iter()
            .map(|f| ignore::stable_pointer(&f.segments))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
    };
    let resources: Vec<ResourceRef> = resources.into_iter().collect();
    let first = resources.first().ok_or("no resource to ignore")?;
    let taken: BTreeSet<&str> = fleet.ignores.iter().map(|r| r.name.as_str()).collect();
    let base = format!("ignore-{}-{}", first.kind.to_ascii_lowercase(), first.name);
    let mut name = base.clone();
    let mut n = 1;
    while taken.contains(name.as_str()) {
        n += 1;
        name = format!("{base}-{n}");
    }
    let document = IgnoreRule::document(&name, &args.scope.clusters, &resources, &paths);
    let file: PathBuf = store.base.join(IGNORE_FILE);
    // Check the rule loads before writing it.
    let mut sources = store.sources.clone();
    let key = file.display().to_string();
    let old = sources
        .iter()
        .find(|s| s.path == key)
        .map(|s| s.text.clone());
    let text = crate::engine::edit::yaml_text::append_document(
        &key,
        old.as_deref().unwrap_or(""),
        &document,
    )
    .map_err(|e| e.to_string())?;
    match sources.iter_mut().find(|s| s.path == key) {
        Some(source) => source.text = text.clone(),
        None => sources.push(SourceFile {
            path: key.clone(),
            text: text.clone(),
        }),
    }
    let (_, errors) = load_fleet(&sources);
    if let Some(error) = errors.first() {
        return Err(format!("nothing saved: the new ignore rule would not load: {error}").into());
    }
    if store.builtin {
        items.extend(found.iter().map(|f| {
            item(
                f,
                Way::Ignore,
                "skipped",
                format!("rule {name} would be saved in {key}"),
            )
        }));
        return Ok(());
    }
    let change = adopt::FileChange {
        path: key.clone(),
        old: old.clone(),
        new: text.clone(),
        warnings: Vec::new(),
    };
    let written = save(store, "repair --ignore", &[change], &mut Vec::new())?;
    let mut entry = file_entry("repair-ignore", found, &written, true, "");
    if found.is_empty() {
        entry.clusters = args.scope.clusters.clone();
        entry.objects = resources.iter().map(ResourceRef::display_key).collect();
        entry.paths = paths.clone();
    }
    audit::record_or_warn(&entry);
    items.extend(found.iter().map(|f| {
        item(
            f,
            Way::Ignore,
            "done",
            format!("rule {name} saved in {key}"),
        )
    }));
    files.extend(written);
    Ok(())
}

fn write_report(
    global: &GlobalArgs,
    out: &mut dyn Write,
    items: &[RepairItem],
    files: &[String],
    warnings: &[String],
) -> anyhow::Result<()> {
    output::write(
        out,
        &global.output,
        &Report {
            items,
            files,
            warnings,
        },
        || {
            let mut table = Table::new(&[
                "RESULT", "ACTION", "CLUSTER", "RESOURCE", "PATH", "VALUE", "MESSAGE",
            ]);
            for i in items {
                let key = i.resource.display_key();
                table.row(
                    key.clone(),
                    vec![
                        i.result.to_string(),
                        i.action.verb().to_string(),
                        i.cluster.clone(),
                        key,
                        i.path.clone(),
                        match i.action {
                            Way::Revert => format!("-> {}", i.desired),
                            Way::Adopt => format!("keeps {}", i.live),
                            Way::Ignore => "ignored".to_string(),
                        },
                        i.message.clone(),
                    ],
                );
            }
            for file in files {
                table.footer(format!("saved {file}"));
            }
            let count = |result: &str| items.iter().filter(|i| i.result == result).count();
            let skipped = count("skipped");
            let skipped = if skipped > 0 {
                format!("{skipped} skipped, ")
            } else {
                String::new()
            };
            table.footer(format!(
                "Repair: {} done, {skipped}{} failed.",
                count("done"),
                count("failed")
            ));
            table
        },
    )?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn revert_takes_back_only_the_chosen_field() {
        use crate::backend::fanout::cluster_api::ApplyMode;
        use crate::backend::fanout::fake::FakeCluster;
        use std::sync::Arc;
        let desired = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "shop"},
            "data": {"color": "blue", "size": "s"}});
        let fake = Arc::new(FakeCluster::default());
        let mut live = desired.clone();
        live["data"] = json!({"color": "red", "size": "xl"});
        fake.apply(&live, ApplyMode::default()).await.unwrap();
        let resource = resource_of(&desired);
        let stored = fake.get(&resource).await.unwrap().unwrap();
        let fields = diff::drifted_fields(&desired, &stored);
        assert_eq!(fields.len(), 2);
        let color = fields
            .iter()
            .find(|f| f.pointer() == "/data/color")
            .unwrap();
        let found = vec![Found {
            cluster: "east".into(),
            resource: resource.clone(),
            segments: color.path.clone(),
            pointer: color.pointer(),
            desired: color.desired.clone(),
            live: color.live.clone(),
            manager: Some("kubectl".into()),
            secret: false,
        }];
        let target = Target {
            cluster: "east".into(),
            api: Ok(fake.clone()),
            objects: vec![desired],
            failed: Vec::new(),
            prune_kinds: Vec::new(),
            prune_namespaces: BTreeSet::new(),
            suspended: Vec::new(),
            refuse_unowned: BTreeSet::new(),
            take_over_unowned: BTreeSet::new(),
        };
        let (rows, entry) = revert(
            vec![target],
            &Ignores::default(),
            &found,
            Options::default(),
        )
        .await;
        assert_eq!(entry.action, "repair-revert");
        assert_eq!(entry.paths, ["/data/color"]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].result, "done", "{rows:?}");
        let after = fake.get(&resource).await.unwrap().unwrap();
        assert_eq!(
            after["data"]["color"], "blue",
            "the chosen field is reverted"
        );
        assert_eq!(
            after["data"]["size"], "xl",
            "the other drifted field keeps its live value"
        );
    }
}
