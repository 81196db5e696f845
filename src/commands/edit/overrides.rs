//! `flotilla override add|remove|list KIND/NS/NAME`: the console's override editor as
//! commands. The rules are the editor's (every Karmada override policy selecting the resource,
//! in application order, or the KubeFed object's `spec.overrides`), numbered as listed; a new
//! rule goes where the editor puts it (flotilla's own policy, created when missing), made
//! with the same engine functions (`override_docs`, `parse_target`, `check_patch`,
//! `apply_edit`, `preview_overrides`). It must not propagate.

use std::io::Write;

use serde::Serialize;
use serde_json::{Value, json};

use super::{
    self as edits, DocumentWrite, Loaded, Report, document_diff, find_resource, input_error,
    object_diffs,
};
use crate::cli::{GlobalArgs, OverrideAddArgs, OverrideListArgs, OverrideRemoveArgs, exit};
use crate::engine::Decision;
use crate::engine::edit::override_rules::{
    Item, OverrideDoc, RuleEdit, RuleView, apply_edit, check_patch, image_paths, key_value_item,
    override_docs, parse_target, preview_overrides,
};
use crate::engine::overrides::overriders::ImageComponent;
use crate::engine::overrides::patch::OpKind;
use crate::engine::render::SecretValues;
use crate::output::{self, Table};

/// The resource's override documents and a rendered object of it (the first cluster it is
/// placed on), which patches are checked against.
struct Opened {
    key: String,
    docs: Vec<OverrideDoc>,
    rendered: Value,
}

fn open(loaded: &Loaded, text: &str) -> Result<Opened, String> {
    let fleet = &loaded.fleet;
    let resource = find_resource(fleet, text)?;
    let key = fleet.resources[resource].target.display_key();
    let rendered = (0..fleet.clusters.len())
        .find_map(|cluster| match fleet.decide(resource, cluster) {
            Decision::Placed { object, .. } | Decision::Suspended { object, .. } => Some(object),
            Decision::NotPlaced { .. } => None,
        })
        .ok_or_else(|| {
            format!("cannot edit the overrides of {key}: it is not placed on any cluster")
        })?;
    let docs = override_docs(fleet, &loaded.files, resource)
        .map_err(|reason| format!("cannot edit the overrides of {key}: {reason}"))?;
    Ok(Opened {
        key,
        docs,
        rendered,
    })
}

/// Every rule of every document, numbered from 1 as `override list` shows them, the values
/// rules write into a Secret as `values` says.
fn rows(loaded: &Loaded, opened: &Opened, values: SecretValues) -> Vec<(usize, RuleView)> {
    opened
        .docs
        .iter()
        .enumerate()
        .flat_map(|(d, doc)| {
            doc.rules_with(&doc.object, &loaded.fleet.clusters, values)
                .into_iter()
                .map(move |rule| (d, rule))
        })
        .collect()
}

#[derive(Serialize)]
struct ListItem {
    rule: usize,
    policy: String,
    file: String,
    target: String,
    clusters: Vec<String>,
    /// Each overrider in full (no value cut), values written into a Secret masked.
    overriders: Vec<String>,
    /// The same, as the table shows them (long values cut).
    #[serde(skip)]
    short: Vec<String>,
}

#[derive(Serialize)]
struct Items<'a> {
    items: &'a [ListItem],
}

/// `flotilla override list`.
pub async fn run_list(
    global: &GlobalArgs,
    args: &OverrideListArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let loaded = match edits::load(global).await {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    let opened = match open(&loaded, &args.resource) {
        Ok(opened) => opened,
        Err(message) => return Ok(input_error(&message)),
    };
    let values = if args.show_secrets {
        SecretValues::Shown
    } else {
        SecretValues::Masked
    };
    let items: Vec<ListItem> = rows(&loaded, &opened, values)
        .into_iter()
        .enumerate()
        .map(|(at, (d, rule))| ListItem {
            rule: at + 1,
            policy: opened.docs[d].title.clone(),
            file: opened.docs[d].file.clone(),
            target: rule.target,
            clusters: rule.clusters,
            overriders: rule.full,
            short: rule.items,
        })
        .collect();
    output::write(out, &global.output, &Items { items: &items }, || {
        let mut table = Table::new(&["RULE", "POLICY", "TARGET", "CLUSTERS", "OVERRIDERS"])
            .wide_only(&["CLUSTERS"]);
        for item in &items {
            table.row(
                item.rule.to_string(),
                vec![
                    item.rule.to_string(),
                    item.policy.clone(),
                    item.target.clone(),
                    item.clusters.join(","),
                    item.short.join("; "),
                ],
            );
        }
        if items.is_empty() {
            table.footer(format!("no override rule varies {}", opened.key));
        }
        table
    })?;
    Ok(exit::OK)
}

/// The overrider the flags ask for, checked against the rendered object as the editor's forms
/// check it; an error names the flag.
fn item(args: &OverrideAddArgs, rendered: &Value) -> Result<Item, String> {
    let first_image = || {
        image_paths(rendered)
            .into_iter()
            .next()
            .ok_or_else(|| "the object has no container image".to_string())
    };
    let image = |flag: &str, component: ImageComponent, value: &str| {
        let value = value.trim();
        if value.is_empty() || value.contains(char::is_whitespace) {
            return Err(format!("{flag}: give the new value (no spaces)"));
        }
        Ok(Item::Image {
            component,
            value: value.to_string(),
            path: first_image().map_err(|why| format!("{flag}: {why}"))?,
        })
    };
    let patch = |flag: &str, op: OpKind, path: &str, value: &str| {
        check_patch(rendered, op, path, value)
            .map(|value| Item::Patch {
                op,
                path: path.to_string(),
                value,
            })
            .map_err(|err| format!("{flag}: {err}"))
    };
    if let Some(value) = &args.image_registry {
        return image("--image-registry", ImageComponent::Registry, value);
    }
    if let Some(value) = &args.image_repository {
        return image("--image-repository", ImageComponent::Repository, value);
    }
    if let Some(value) = &args.image_tag {
        return image("--image-tag", ImageComponent::Tag, value);
    }
    if let Some(replicas) = args.replicas {
        return patch(
            "--replicas",
            OpKind::Replace,
            "/spec/replicas",
            &replicas.to_string(),
        );
    }
    if let Some(text) = &args.label {
        return key_value_item(text, true).map_err(|err| format!("--label {text:?}: {err}"));
    }
    if let Some(text) = &args.annotation {
        return key_value_item(text, false).map_err(|err| format!("--annotation {text:?}: {err}"));
    }
    if let Some(text) = &args.env {
        let (name, value) = text
            .split_once('=')
            .filter(|(name, _)| !name.trim().is_empty())
            .ok_or_else(|| format!("--env {text:?}: write NAME=VALUE"))?;
        let container = first_image()
            .map_err(|why| format!("--env: {why}"))?
            .trim_end_matches("/image")
            .to_string();
        let entry = json!({"name": name.trim(), "value": value});
        let env = format!("{container}/env");
        return if rendered.pointer(&env).is_some_and(Value::is_array) {
            patch(
                "--env",
                OpKind::Add,
                &format!("{env}/-"),
                &entry.to_string(),
            )
        } else {
            patch("--env", OpKind::Add, &env, &json!([entry]).to_string())
        };
    }
    if let Some(text) = &args.json_patch {
        let hint = "  hint: one operation, e.g. '{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":3}'";
        let op: Value = serde_json::from_str(text)
            .map_err(|err| format!("--json-patch: not JSON ({err})\n{hint}"))?;
        let op = match op {
            Value::Array(mut list) if list.len() == 1 => list.remove(0),
            other => other,
        };
        let kind = match op.get("op").and_then(Value::as_str) {
            Some("add") => OpKind::Add,
            Some("replace") => OpKind::Replace,
            Some("remove") => OpKind::Remove,
            other => {
                return Err(format!(
                    "--json-patch: op {} is not one the overrides take (add, replace, remove)\n{hint}",
                    other.map_or("(missing)".to_string(), |o| format!("`{o}`"))
                ));
            }
        };
        let path = op
            .get("path")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("--json-patch: the operation has no \"path\"\n{hint}"))?;
        let value = match (kind, op.get("value")) {
            (OpKind::Remove, _) => String::new(),
            (_, Some(value)) => value.to_string(),
            (_, None) => {
                return Err(format!(
                    "--json-patch: {} needs a \"value\"\n{hint}",
                    kind.as_str()
                ));
            }
        };
        return patch("--json-patch", kind, path, &value);
    }
    Err("name the override: --json-patch, --image-registry, --image-repository, --image-tag, --replicas, --label, --annotation or --env".into())
}

/// One rule edit asked for: of which document, by which command, with which flags.
struct Asked<'a> {
    doc: usize,
    edit: RuleEdit,
    flags: &'a crate::cli::EditArgs,
    command: &'a str,
}

/// Previews, gates and writes one rule edit.
async fn edit_and_write(
    global: &GlobalArgs,
    loaded: &Loaded,
    opened: &Opened,
    asked: Asked<'_>,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let Asked {
        doc: d,
        edit,
        flags: edit_args,
        command,
    } = asked;
    let edit = &edit;
    let doc = &opened.docs[d];
    let object = match apply_edit(doc, &doc.object, edit, &opened.rendered) {
        Ok(object) => object,
        Err(message) => return Ok(input_error(&format!("{}: {message}", doc.title))),
    };
    let mut report = Report {
        resource: opened.key.clone(),
        edited: doc.title.clone(),
        file: doc.file.clone(),
        ..Report::default()
    };
    if object != doc.object {
        let preview = preview_overrides(&loaded.fleet, &loaded.files, doc, &object);
        if let Some(error) = preview.errors.first() {
            return Ok(input_error(&format!(
                "the edited {} would not work, nothing written: {error}",
                doc.title
            )));
        }
        report.changed = preview.clusters.clone();
        report.diffs = object_diffs(&preview.diffs);
        match document_diff(loaded, &doc.file, doc.document, &object) {
            Ok((file, diff)) => (report.file, report.file_diff) = (file, diff),
            Err(message) => return Ok(input_error(&message)),
        }
    }
    let write = DocumentWrite {
        command,
        action: "save-overrides",
        resource: &opened.key,
        title: &doc.title,
        file: &doc.file,
        document: doc.document,
        previous: &doc.object,
    };
    edits::gate_and_write(global, edit_args, loaded, &write, &object, report, out).await
}

/// What an editing override command starts with: refusing the demo, then the
/// fleet and the resource's override documents.
async fn prepare(
    global: &GlobalArgs,
    command: &str,
    resource: &str,
) -> Result<(Loaded, Opened), u8> {
    if let Some(code) = edits::refuse_here(global, command) {
        return Err(code);
    }
    let loaded = edits::load(global).await?;
    let opened = open(&loaded, resource).map_err(|message| input_error(&message))?;
    Ok((loaded, opened))
}

/// `flotilla override add`.
pub async fn run_add(
    global: &GlobalArgs,
    args: &OverrideAddArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let (loaded, opened) = match prepare(global, "override add", &args.resource).await {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let Some(d) = opened.docs.iter().position(|doc| doc.owned) else {
        return Ok(input_error(&format!(
            "no document can take a new override rule for {}",
            opened.key
        )));
    };
    let dialect = opened.docs[d].dialect;
    let (flag, text) = match &args.cluster_selector {
        Some(selector) => ("--cluster-selector", selector.clone()),
        None => ("--cluster", args.cluster.join(",")),
    };
    let target = match parse_target(&text, dialect, &loaded.fleet.clusters) {
        Ok(target) => target,
        Err(message) => return Ok(input_error(&format!("{flag} {text:?}: {message}"))),
    };
    if args.cluster_selector.is_some()
        && !matches!(
            target,
            crate::engine::edit::override_rules::Target::Selector(_)
        )
    {
        return Ok(input_error(&format!(
            "--cluster-selector {text:?}: not a selector (write key=value, key in (a,b), …); to name clusters use --cluster"
        )));
    }
    let item = match item(args, &opened.rendered) {
        Ok(item) => item,
        Err(message) => return Ok(input_error(&message)),
    };
    edit_and_write(
        global,
        &loaded,
        &opened,
        Asked {
            doc: d,
            edit: RuleEdit::Add(target, item),
            flags: &args.edit,
            command: "override add",
        },
        out,
    )
    .await
}

/// `flotilla override remove`.
pub async fn run_remove(
    global: &GlobalArgs,
    args: &OverrideRemoveArgs,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let (loaded, opened) = match prepare(global, "override remove", &args.resource).await {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let rows = rows(&loaded, &opened, SecretValues::Masked);
    let Some((d, rule)) = args.rule.checked_sub(1).and_then(|at| rows.get(at)) else {
        return Ok(input_error(&format!(
            "--rule {}: {} has {} override rule(s), numbered from 1\n  hint: flotilla override list {}",
            args.rule,
            opened.key,
            rows.len(),
            args.resource
        )));
    };
    edit_and_write(
        global,
        &loaded,
        &opened,
        Asked {
            doc: *d,
            edit: RuleEdit::Delete(rule.index),
            flags: &args.edit,
            command: "override remove",
        },
        out,
    )
    .await
}
