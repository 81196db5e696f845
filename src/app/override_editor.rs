//! The override editor's keys and engine work (its data is `state::override_editor`): the
//! per-cluster override rules that vary the selected resource (every Karmada override policy
//! selecting it, or the KubeFed object's `spec.overrides`), added, edited, moved and deleted
//! through small forms — a JSON patch with path completion from the selected cell's rendered
//! object, or a shortcut for an image component, replicas, a label, an annotation or a
//! container env var — with a live preview of the clusters whose objects change, then a review
//! of the diffs before the same confirmation the placement editor uses.
//! The list's and the review's commands (the `overrides` and `editor` sections) go through
//! [`command`] and a form's keys through [`key`] (both pure); engine work happens in
//! [`refresh`], outside `update`. It must not write a file or talk to a cluster: saving and
//! propagating are a confirmed effect.

use serde_json::Value;

use super::action::InputKey;
use super::review::{NEW_SINCE_START, cells_of, dry_run_of, not_ready};
use super::state::FleetSave;
use super::state::override_editor::{
    Form, FormField, FormKind, OverrideEditor, Stage, review_rows,
};
use super::state::review::jump;
use super::state::{LastChange, Mode, PendingApply, Reopen, State};
use crate::config::keymap::ViewCommand;
use crate::engine::edit::override_rules::{
    Item, RuleEdit, apply_edit, check_patch, complete_path, image_paths, key_value_item,
    override_docs, parse_target, preview_overrides, target_text,
};
use crate::engine::overrides::overriders::ImageComponent;
use crate::engine::overrides::patch::OpKind;
use crate::engine::{Decision, Fleet, SourceFile};
use crate::messages::Effect;
use crate::model::ClusterSpec;

/// Opens the editor on the selected cell (the engine fills it in on the next refresh).
pub fn open(state: &mut State) {
    if let Some(why) = &state.cannot_edit.overrides {
        state.notice = Some(why.clone());
        return;
    }
    if state.readonly {
        state.notice = Some("read-only: overrides cannot be edited".into());
        return;
    }
    let Some((resource, cluster)) = state.selected_cell() else {
        state.notice = Some("select a resource × cluster cell to edit its overrides".into());
        return;
    };
    state.mode = Mode::Overrides(Box::new(OverrideEditor::new(resource, cluster)));
}

/// Loads the documents and the rendered object, and recomputes a stale preview. Returns
/// whether anything changed; cheap when nothing did.
pub fn refresh(state: &mut State, fleet: &Fleet, files: &[SourceFile]) -> bool {
    let Mode::Overrides(editor) = &mut state.mode else {
        return false;
    };
    if !editor.loaded && editor.resource >= fleet.resources.len() {
        state.mode = Mode::Normal;
        state.notice = Some(NEW_SINCE_START.into());
        return true;
    }
    if !editor.loaded {
        let placed = |cluster: usize| match fleet.decide(editor.resource, cluster) {
            Decision::Placed { object, .. } | Decision::Suspended { object, .. } => Some(object),
            Decision::NotPlaced { .. } => None,
        };
        let rendered = placed(editor.cluster).or_else(|| {
            (0..fleet.clusters.len()).find_map(|c| {
                let object = placed(c)?;
                editor.cluster = c;
                Some(object)
            })
        });
        let docs = override_docs(fleet, files, editor.resource);
        match (rendered, docs) {
            (Some(rendered), Ok(docs)) => {
                editor.objects = docs.iter().map(|d| d.object.clone()).collect();
                editor.docs = docs;
                editor.rendered = rendered;
                editor.loaded = true;
            }
            (None, _) => {
                state.mode = Mode::Normal;
                state.notice =
                    Some("cannot edit overrides: the resource is not placed on any cluster".into());
                return true;
            }
            (_, Err(reason)) => {
                state.mode = Mode::Normal;
                state.notice = Some(format!("cannot edit overrides: {reason}"));
                return true;
            }
        }
    }
    if editor.previewed == editor.revision {
        return false;
    }
    editor.previewed = editor.revision;
    editor.rows = editor
        .docs
        .iter()
        .zip(&editor.objects)
        .enumerate()
        .flat_map(|(d, (doc, object))| {
            doc.rules(object, &fleet.clusters)
                .into_iter()
                .map(move |rule| (d, rule))
        })
        .collect();
    editor.cursor = editor.cursor.min(editor.rows.len().saturating_sub(1));
    match editor.dirty {
        Some(d) => {
            let preview = preview_overrides(fleet, files, &editor.docs[d], &editor.objects[d]);
            editor.error = preview.errors.first().cloned();
            editor.preview = Some(preview);
        }
        None => {
            editor.error = None;
            editor.preview = None;
        }
    }
    true
}

/// A command of the review's section (`editor`) or of the list's (`overrides`); a rule's form
/// takes typed keys only.
pub fn command(
    state: &mut State,
    mut editor: Box<OverrideEditor>,
    command: ViewCommand,
) -> Vec<Effect> {
    match std::mem::take(&mut editor.stage) {
        Stage::Reviewing {
            scroll,
            side_by_side,
        } => {
            let rows = review_rows(&editor);
            let last = rows.len().saturating_sub(1);
            let scroll = match command {
                ViewCommand::Back => {
                    state.mode = Mode::Overrides(editor);
                    return Vec::new();
                }
                ViewCommand::Save => return propose(state, editor),
                ViewCommand::Up => scroll.saturating_sub(1),
                ViewCommand::Down => (scroll + 1).min(last),
                ViewCommand::NextChange => jump(&rows, scroll, true),
                ViewCommand::PrevChange => jump(&rows, scroll, false),
                _ => scroll,
            };
            let side_by_side = side_by_side ^ (command == ViewCommand::SideBySide);
            editor.stage = Stage::Reviewing {
                scroll,
                side_by_side,
            };
        }
        form @ Stage::Form(_) => editor.stage = form,
        Stage::List => {
            if list_command(state, &mut editor, command) {
                return Vec::new();
            }
            if matches!(editor.stage, Stage::Reviewing { .. }) {
                let effects = ask_for_dry_run(state, &mut editor);
                state.mode = Mode::Overrides(editor);
                return effects;
            }
        }
    }
    state.mode = Mode::Overrides(editor);
    Vec::new()
}

/// A key typed into a rule's form (the list and the review take commands).
pub fn key(state: &mut State, mut editor: Box<OverrideEditor>, key: InputKey) -> Vec<Effect> {
    match std::mem::take(&mut editor.stage) {
        Stage::Form(form) => form_key(state, &mut editor, form, key),
        stage => editor.stage = stage,
    }
    state.mode = Mode::Overrides(editor);
    Vec::new()
}

/// A command of the list of rules; returns true when the editor closed.
fn list_command(state: &mut State, editor: &mut OverrideEditor, command: ViewCommand) -> bool {
    let cluster_name = state
        .clusters
        .get(editor.cluster)
        .map(|c| c.spec.name.clone())
        .unwrap_or_default();
    let form = |kind: FormKind| Form::new(kind, cluster_name.clone());
    match command {
        ViewCommand::Back => {
            state.notice = Some("override edit cancelled; nothing written".into());
            state.mode = Mode::Normal;
            return true;
        }
        ViewCommand::Up => editor.cursor = editor.cursor.saturating_sub(1),
        ViewCommand::Down => {
            editor.cursor = (editor.cursor + 1).min(editor.rows.len().saturating_sub(1))
        }
        ViewCommand::Patch => {
            let mut form = form(FormKind::Patch);
            form.field = FormField::Path;
            editor.stage = Stage::Form(Box::new(form));
        }
        ViewCommand::Image => {
            let mut form = form(FormKind::Image);
            form.path = image_paths(&editor.rendered)
                .into_iter()
                .next()
                .unwrap_or_default();
            if form.path.is_empty() {
                state.notice = Some("this object has no container image".into());
                return false;
            }
            editor.stage = Stage::Form(Box::new(form));
        }
        ViewCommand::Replicas => {
            let Some(current) = editor.rendered.pointer("/spec/replicas") else {
                state.notice = Some("this object has no /spec/replicas".into());
                return false;
            };
            let mut form = form(FormKind::Patch);
            form.path = "/spec/replicas".into();
            form.value = current.to_string();
            form.prefilled = true;
            editor.stage = Stage::Form(Box::new(form));
        }
        ViewCommand::Label => editor.stage = Stage::Form(Box::new(form(FormKind::Label))),
        ViewCommand::Annotation => editor.stage = Stage::Form(Box::new(form(FormKind::Annotation))),
        ViewCommand::Env => {
            let Some(image) = image_paths(&editor.rendered).into_iter().next() else {
                state.notice = Some("this object has no container".into());
                return false;
            };
            let container = image.trim_end_matches("/image").to_string();
            let mut form = form(FormKind::Patch);
            form.op = OpKind::Add;
            if editor
                .rendered
                .pointer(&format!("{container}/env"))
                .is_some_and(Value::is_array)
            {
                form.path = format!("{container}/env/-");
                form.value = "{name: NAME, value: \"VALUE\"}".into();
            } else {
                form.path = format!("{container}/env");
                form.value = "[{name: NAME, value: \"VALUE\"}]".into();
            }
            editor.stage = Stage::Form(Box::new(form));
        }
        ViewCommand::EditRule => {
            let Some((doc, rule)) = editor.rows.get(editor.cursor) else {
                return false;
            };
            let Some((target, item)) = &rule.form else {
                state.notice = Some(
                    "this rule has several overriders or one without a form; move or delete it here, edit it in its file"
                        .into(),
                );
                return false;
            };
            let mut form = form(FormKind::Patch);
            form.editing = Some((*doc, rule.index));
            form.target = target_text(target);
            // A value the rule writes into a Secret is not put back on screen: it is typed anew.
            if rule.secret {
                state.notice = Some(
                    "the value this rule writes into a Secret is not shown: type the new one"
                        .into(),
                );
            }
            match item {
                Item::Patch { op, path, value } => {
                    form.op = *op;
                    form.path = path.clone();
                    form.value = match value {
                        Some(_) if rule.secret => String::new(),
                        value => value.as_ref().map(Value::to_string).unwrap_or_default(),
                    };
                }
                Item::Image {
                    component, value, ..
                } => {
                    form.kind = FormKind::Image;
                    form.component = *component;
                    form.value = value.clone();
                    form.path = image_paths(&editor.rendered)
                        .into_iter()
                        .next()
                        .unwrap_or_default();
                }
                Item::Label { key, value } | Item::Annotation { key, value } => {
                    form.kind = if matches!(item, Item::Label { .. }) {
                        FormKind::Label
                    } else {
                        FormKind::Annotation
                    };
                    form.value = if rule.secret {
                        format!("{key}=")
                    } else {
                        format!("{key}={value}")
                    };
                }
            }
            editor.stage = Stage::Form(Box::new(form));
        }
        ViewCommand::DeleteRule => {
            if let Some((doc, rule)) = editor.rows.get(editor.cursor) {
                let (doc, index) = (*doc, rule.index);
                if let Err(error) = change(editor, doc, &RuleEdit::Delete(index)) {
                    state.notice = Some(error);
                }
            }
        }
        ViewCommand::MoveUp | ViewCommand::MoveDown => {
            if let Some((doc, rule)) = editor.rows.get(editor.cursor) {
                let (doc, index) = (*doc, rule.index);
                let up = command == ViewCommand::MoveUp;
                match change(editor, doc, &RuleEdit::Move(index, up)) {
                    Ok(()) => {
                        // Follow the moved rule (Karmada rules are adjacent; KubeFed moves
                        // within one cluster, found again on refresh).
                        editor.cursor = if up {
                            editor.cursor.saturating_sub(1)
                        } else {
                            editor.cursor + 1
                        };
                    }
                    Err(error) => state.notice = Some(error),
                }
            }
        }
        ViewCommand::Review => {
            let not_ready = not_ready(
                "overrides",
                editor.error.as_ref(),
                editor.dirty.is_some(),
                editor.preview_is_current(),
            );
            match not_ready {
                Some(notice) => state.notice = Some(notice),
                None => {
                    editor.stage = Stage::Reviewing {
                        scroll: 0,
                        side_by_side: false,
                    }
                }
            }
        }
        _ => {}
    }
    false
}

/// Makes one edit to document `doc`, refusing a second document while one is changed.
fn change(editor: &mut OverrideEditor, doc: usize, edit: &RuleEdit) -> Result<(), String> {
    if let Some(dirty) = editor.dirty
        && dirty != doc
    {
        return Err(format!(
            "one policy per save: review and save the change to {} first, or esc to drop it",
            editor.docs[dirty].title
        ));
    }
    let document = editor.docs.get(doc).ok_or("no such document")?;
    let object = apply_edit(document, &editor.objects[doc], edit, &editor.rendered)
        .map_err(|err| err.to_string())?;
    editor.dirty = (object != document.object).then_some(doc);
    editor.objects[doc] = object;
    editor.revision += 1;
    Ok(())
}

fn form_key(state: &mut State, editor: &mut OverrideEditor, mut form: Box<Form>, key: InputKey) {
    let fields = form.fields();
    let at = fields.iter().position(|f| *f == form.field).unwrap_or(0);
    match key {
        InputKey::Esc => return,
        InputKey::Up => form.field = fields[at.saturating_sub(1)],
        InputKey::Down => form.field = fields[(at + 1).min(fields.len() - 1)],
        InputKey::Tab if form.field == FormField::Path => {
            if form.completions.is_empty() {
                form.completions = complete_path(&editor.rendered, &form.path);
                form.completion = 0;
            } else {
                form.completion = (form.completion + 1) % form.completions.len();
            }
            match form.completions.get(form.completion) {
                Some(path) => form.path = path.clone(),
                None => {
                    form.error = Some(format!("nothing in the object completes {}", form.path));
                    editor.stage = Stage::Form(form);
                    return;
                }
            }
        }
        InputKey::Tab => form.field = fields[(at + 1) % fields.len()],
        InputKey::Enter => match build(state, editor, &form) {
            Ok((doc, edit)) => match change(editor, doc, &edit) {
                Ok(()) => {
                    editor.cursor = row_after(editor, doc, &edit);
                    return;
                }
                Err(error) => form.error = Some(error),
            },
            Err(error) => form.error = Some(error),
        },
        InputKey::Char(' ') if form.field == FormField::Op => {
            if form.kind == FormKind::Image {
                form.component = match form.component {
                    ImageComponent::Tag => ImageComponent::Registry,
                    ImageComponent::Registry => ImageComponent::Repository,
                    ImageComponent::Repository => ImageComponent::Tag,
                };
            } else {
                form.op = match form.op {
                    OpKind::Replace => OpKind::Add,
                    OpKind::Add => OpKind::Remove,
                    OpKind::Remove => OpKind::Replace,
                };
            }
        }
        InputKey::Char(_) | InputKey::Backspace | InputKey::ClearLine => {
            let text = match form.field {
                FormField::Target => &mut form.target,
                FormField::Path => &mut form.path,
                FormField::Value => &mut form.value,
                FormField::Op => {
                    editor.stage = Stage::Form(form);
                    return;
                }
            };
            if std::mem::take(&mut form.prefilled) && form.field == FormField::Value {
                text.clear();
            }
            match key {
                InputKey::Char(c) => text.push(c),
                InputKey::Backspace => {
                    text.pop();
                }
                _ => text.clear(),
            }
            form.completions.clear();
            form.error = None;
        }
    }
    // Check as the operator types, so a bad path or value shows at once.
    if !matches!(key, InputKey::Enter) {
        form.error = None;
        if form.kind == FormKind::Patch && !form.path.is_empty() {
            form.error = check_patch(&editor.rendered, form.op, &form.path, &form.value)
                .err()
                .filter(|_| !form.value.is_empty() || form.op == OpKind::Remove)
                .map(|err| err.to_string());
        }
    }
    editor.stage = Stage::Form(form);
}

/// The row the cursor goes to after an edit: the new rule (last of its document) or the one
/// edited.
fn row_after(editor: &OverrideEditor, doc: usize, edit: &RuleEdit) -> usize {
    let clusters: Vec<ClusterSpec> = Vec::new();
    let before: usize = editor.docs[..doc]
        .iter()
        .zip(&editor.objects)
        .map(|(d, o)| d.rules(o, &clusters).len())
        .sum();
    match edit {
        RuleEdit::Replace(index, ..) => before + index,
        _ => {
            let count = editor.docs[doc]
                .rules(&editor.objects[doc], &clusters)
                .len();
            before + count.saturating_sub(1)
        }
    }
}

/// The form as an edit of one document, or what is wrong with it.
fn build(state: &State, editor: &OverrideEditor, form: &Form) -> Result<(usize, RuleEdit), String> {
    let doc = match form.editing {
        Some((doc, _)) => doc,
        None => editor.owned().ok_or("no document can take a new rule")?,
    };
    let dialect = editor.docs.get(doc).ok_or("no such document")?.dialect;
    let specs: Vec<ClusterSpec> = state.clusters.iter().map(|row| row.spec.clone()).collect();
    let target = parse_target(&form.target, dialect, &specs).map_err(|err| err.to_string())?;
    let item = match form.kind {
        FormKind::Patch => Item::Patch {
            op: form.op,
            path: form.path.clone(),
            value: check_patch(&editor.rendered, form.op, &form.path, &form.value)
                .map_err(|err| err.to_string())?,
        },
        FormKind::Image => {
            let value = form.value.trim();
            if value.is_empty() || value.contains(char::is_whitespace) {
                return Err("type the new image component (no spaces)".into());
            }
            Item::Image {
                component: form.component,
                value: value.to_string(),
                path: form.path.clone(),
            }
        }
        FormKind::Label | FormKind::Annotation => {
            key_value_item(&form.value, form.kind == FormKind::Label)
                .map_err(|err| err.to_string())?
        }
    };
    let edit = match form.editing {
        Some((_, index)) => RuleEdit::Replace(index, target, item),
        None => RuleEdit::Add(target, item),
    };
    Ok((doc, edit))
}

/// Asks the backend to dry-run the edited objects on their clusters.
fn ask_for_dry_run(state: &State, editor: &mut OverrideEditor) -> Vec<Effect> {
    editor.dry_run.clear();
    let Some(preview) = &editor.preview else {
        return Vec::new();
    };
    let (asked, effects) = dry_run_of(
        state,
        preview.fleet.as_ref(),
        &preview.diffs,
        editor.revision,
    );
    editor.dry_run_clusters = asked;
    effects
}

/// From the review to the confirmation: the same popup as `a`, carrying the document to save.
fn propose(state: &mut State, editor: Box<OverrideEditor>) -> Vec<Effect> {
    let (Some(d), Some(preview)) = (editor.dirty, &editor.preview) else {
        state.mode = Mode::Overrides(editor);
        return Vec::new();
    };
    let doc = &editor.docs[d];
    let cells = cells_of(state, &preview.diffs, |_| true);
    let verb = if doc.created { "create" } else { "save" };
    let mut summary = vec![if doc.created {
        format!("{verb} {} (appended to {})", doc.title, doc.file)
    } else {
        format!("{verb} {} ({}:{})", doc.title, doc.file, doc.line)
    }];
    summary.push(format!(
        "{} object(s) change on {}",
        preview.updated,
        if preview.clusters.is_empty() {
            "no cluster".into()
        } else {
            preview.clusters.join(", ")
        }
    ));
    let danger = cells
        .iter()
        .map(|cell| cell.cluster as usize)
        .find(|cluster| state.is_dangerous(*cluster))
        .and_then(|cluster| state.clusters.get(cluster))
        .map(|row| row.spec.name.clone());
    let save = |object: &Value| FleetSave {
        file: doc.file.clone(),
        document: doc.document,
        object: object.clone(),
        title: doc.title.clone(),
        reopen: Some(Reopen::Overrides),
    };
    state.mode = Mode::Confirm(Box::new(PendingApply {
        cells: cells.clone(),
        summary,
        confirm_word: danger.unwrap_or_else(|| "y".into()),
        typed: String::new(),
        save: Some(save(&editor.objects[d])),
        delete: Vec::new(),
        // Undo puts the document back as it was (a created policy stays, with no rules) and
        // re-applies the objects as they were.
        undo: Some(LastChange {
            title: doc.title.clone(),
            previous: save(&doc.object),
            reapply: cells,
            created: Vec::new(),
        }),
        placement: None,
        reload: None,
        waves: false,
    }));
    Vec::new()
}
