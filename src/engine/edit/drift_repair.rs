//! What the console's drift view writes to the fleet files, computed before anything is
//! written: adopting live values as overrides (through [`crate::engine::edit::adopt`]), new DriftIgnore
//! rules appended to the ignore file, and removing a rule's document. Pure: it returns the
//! new texts and must not write them, read a clock or talk to a cluster.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::engine::compare::ignore::IgnoreRule;
use crate::engine::document::parse::{document_spans, parse_files};
use crate::engine::document::source::SourceFile;
use crate::engine::edit::EditError;
use crate::engine::edit::adopt::{self, Field, FileChange, Workspace};
use crate::engine::edit::yaml_text;
use crate::engine::fleet::assemble::load_fleet;
use crate::engine::fleet::decide::{Decision, Fleet};
use crate::model::ResourceRef;

/// One drifted field to adopt or ignore: cluster, object, pointer and live value.
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen {
    pub cluster: String,
    pub resource: ResourceRef,
    pub path: String,
    pub live: Value,
}

/// The file new ignore rules go to, inside the fleet directory (as `flotilla repair` does).
pub const IGNORE_FILE: &str = "flotilla-ignore.yaml";

/// The fleet directory as the files' paths show it: the shortest parent among them.
pub fn fleet_dir(files: &[SourceFile]) -> String {
    files
        .iter()
        .filter_map(|f| {
            std::path::Path::new(&f.path)
                .parent()
                .map(|p| p.display().to_string())
        })
        .min_by_key(|dir| dir.len())
        .unwrap_or_default()
}

fn in_dir(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{}/{name}", dir.trim_end_matches('/'))
    }
}

/// The file changes that keep `chosen` live values as overrides for their clusters, checked
/// to load and to render the adopted values.
pub fn adopt_changes(
    fleet: &Fleet,
    files: &[SourceFile],
    chosen: &[Chosen],
) -> Result<Vec<FileChange>, EditError> {
    let fallback = in_dir(&fleet_dir(files), "flotilla-overrides.yaml");
    let mut work = Workspace::new(files.to_vec(), fallback);
    let mut groups: BTreeMap<(String, ResourceRef), Vec<&Chosen>> = BTreeMap::new();
    for c in chosen {
        groups
            .entry((c.cluster.clone(), c.resource.clone()))
            .or_default()
            .push(c);
    }
    let mut adopted = Vec::new();
    for ((cluster, resource), fields) in &groups {
        let row = fleet
            .resources
            .iter()
            .position(|r| &r.target == resource)
            .ok_or_else(|| {
                EditError::missing(format!("{} is not in the fleet", resource.display_key()))
            })?;
        let column = fleet
            .cluster_index(cluster)
            .ok_or_else(|| EditError::missing(format!("{cluster} is not in the fleet")))?;
        let desired = match fleet.decide(row, column) {
            Decision::Placed { object, .. } | Decision::Suspended { object, .. } => object,
            Decision::NotPlaced { reason } => return Err(EditError::NotPlaced(reason)),
        };
        let mut wanted = Vec::new();
        for field in fields {
            if desired.pointer(&field.path).is_none() {
                return Err(EditError::unsupported(format!(
                    "{} {}: not a field of the rendered object; use `flotilla repair --adopt`",
                    resource.display_key(),
                    field.path
                )));
            }
            wanted.push(Field {
                pointer: field.path.clone(),
                value: Some(field.live.clone()),
            });
        }
        adopt::adopt(&mut work, fleet, resource, cluster, &wanted)?;
        adopted.push((resource.clone(), cluster.clone(), wanted));
    }
    adopt::verify(&work, &adopted)?;
    Ok(work.changes())
}

/// A rule name not taken yet, from the first resource.
fn rule_name(fleet: &Fleet, taken: &mut BTreeSet<String>, resource: &ResourceRef) -> String {
    taken.extend(fleet.ignores.iter().map(|r| r.name.clone()));
    let base = format!(
        "ignore-{}-{}",
        resource.kind.to_ascii_lowercase(),
        resource.name
    );
    let mut name = base.clone();
    let mut n = 1;
    while taken.contains(&name) {
        n += 1;
        name = format!("{base}-{n}");
    }
    taken.insert(name.clone());
    name
}

/// New DriftIgnore rules for `chosen` appended to the ignore file: one rule per (object,
/// path) naming the clusters it drifted on, so a bulk ignore covers nothing more than was
/// chosen. Returns the change and the rules' names.
pub fn ignore_changes(
    fleet: &Fleet,
    files: &[SourceFile],
    chosen: &[Chosen],
) -> Result<(FileChange, Vec<String>), EditError> {
    let mut rules: BTreeMap<(ResourceRef, String), BTreeSet<String>> = BTreeMap::new();
    for c in chosen {
        rules
            .entry((c.resource.clone(), c.path.clone()))
            .or_default()
            .insert(c.cluster.clone());
    }
    if rules.is_empty() {
        return Err(EditError::no_op("nothing to ignore"));
    }
    let path = in_dir(&fleet_dir(files), IGNORE_FILE);
    let old = files
        .iter()
        .find(|f| f.path == path)
        .map(|f| f.text.clone());
    let mut text = old.clone().unwrap_or_default();
    let mut taken = BTreeSet::new();
    let mut names = Vec::new();
    for ((resource, pointer), clusters) in &rules {
        let name = rule_name(fleet, &mut taken, resource);
        let clusters: Vec<String> = clusters.iter().cloned().collect();
        let document = IgnoreRule::document(
            &name,
            &clusters,
            std::slice::from_ref(resource),
            std::slice::from_ref(pointer),
        );
        text = yaml_text::append_document(&path, &text, &document)?;
        names.push(name);
    }
    check_loads(files, &path, &text)?;
    Ok((
        FileChange {
            path,
            old,
            new: text,
            warnings: Vec::new(),
        },
        names,
    ))
}

/// The change that removes the ignore rule `name`'s document from its file.
pub fn remove_rule_change(
    fleet: &Fleet,
    files: &[SourceFile],
    name: &str,
) -> Result<FileChange, EditError> {
    let rule = fleet
        .ignores
        .iter()
        .find(|r| r.name == name)
        .ok_or_else(|| EditError::missing(format!("no ignore rule named {name}")))?;
    let file = files
        .iter()
        .find(|f| f.path == rule.source.file)
        .ok_or_else(|| {
            EditError::missing(format!(
                "{} is not one of the fleet's files",
                rule.source.file
            ))
        })?;
    let (docs, _) = parse_files(std::slice::from_ref(file));
    let doc = docs
        .iter()
        .find(|d| d.line == rule.source.line)
        .ok_or_else(|| EditError::missing(format!("rule {name} not found in {}", rule.source)))?;
    if doc.list_item.is_some() {
        return Err(EditError::unsupported(format!(
            "rule {name} is an item of a kind: List document at {}; remove it from the list by hand",
            rule.source
        )));
    }
    let spans = document_spans(&file.text);
    let (_, range) = spans
        .get(doc.index)
        .ok_or_else(|| EditError::missing(format!("rule {name} not found in {}", rule.source)))?;
    let mut text = file.text.clone();
    text.replace_range(range.clone(), "");
    check_loads(files, &file.path, &text)?;
    Ok(FileChange {
        path: file.path.clone(),
        old: Some(file.text.clone()),
        new: text,
        warnings: Vec::new(),
    })
}

fn check_loads(files: &[SourceFile], path: &str, text: &str) -> Result<(), EditError> {
    let mut edited = files.to_vec();
    match edited.iter_mut().find(|f| f.path == path) {
        Some(file) => file.text = text.to_string(),
        None => edited.push(SourceFile {
            path: path.to_string(),
            text: text.to_string(),
        }),
    }
    let (_, errors) = load_fleet(&edited);
    match errors.first() {
        Some(error) => Err(EditError::WouldNotLoad(Box::new(error.clone()))),
        None => Ok(()),
    }
}

/// The lines a change adds (`+ …`) and removes (`- …`), for a confirmation to list exactly
/// what is written.
pub fn changed_lines(change: &FileChange) -> Vec<String> {
    let old = change.old.as_deref().unwrap_or("");
    let diff = similar::TextDiff::from_lines(old, &change.new);
    diff.iter_all_changes()
        .filter_map(|line| {
            let sign = match line.tag() {
                similar::ChangeTag::Delete => "-",
                similar::ChangeTag::Insert => "+",
                similar::ChangeTag::Equal => return None,
            };
            Some(format!(
                "{sign} {}",
                line.value().trim_end_matches(['\n', '\r'])
            ))
        })
        .collect()
}
