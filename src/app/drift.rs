//! The drift view's keys and repairs (its data, and the book grouped as the view lists it, are
//! `state::drift`): every drifted field across the fleet as the backend reported it, grouped
//! when the same drift (object, path, desired, live) is on several clusters, with owner fights
//! flagged; and the keys that repair it —
//! revert, adopt, ignore, one field, one group or everything marked — each through a
//! confirmation listing exactly what will be written.
//! The `drift` section's commands go through [`command`] and a confirmation's typed keys
//! through [`key`] (both pure); the fleet-file changes adopt and ignore need are computed
//! in [`refresh`], outside `update`, because they need the fleet's files. It must not write a
//! file or talk to a cluster: writes are effects the operator confirmed.

use std::collections::BTreeSet;

use serde_json::Value;

use super::action::InputKey;
use super::state::drift::{
    Batch, DriftView, FieldKey, Group, Pane, Plan, PlanEffect, Row, RuleRow, Stage, Target, Verb,
    rows,
};
use super::state::{FileText, FleetEdit, FleetWrite};
use super::state::{Mode, State};
use super::text_input::edit_text;
use crate::backend::fanout::object::FIELD_MANAGER;
use crate::config::keymap::ViewCommand;
use crate::engine::compare::secrets;
use crate::engine::edit::drift_repair::{self, Chosen};
use crate::engine::{Fleet, SourceFile};
use crate::messages::{CellRef, DriftField, Effect, RevertField};
use crate::model::StatusKind;

/// A backend report of one cell's drift.
pub fn record(state: &mut State, cell: CellRef, fields: Vec<DriftField>) {
    let book = &mut state.drift;
    for field in &fields {
        let key = (cell, field.path.clone());
        let again = book.reverted.get(&key).is_some_and(|before| {
            field.manager.as_deref().is_some_and(|manager| {
                manager != FIELD_MANAGER && (before.is_empty() || manager == before)
            })
        });
        if again && let Some(manager) = &field.manager {
            book.fights.insert(key, manager.clone());
        }
    }
    if fields.is_empty() {
        book.fields.remove(&cell);
    } else {
        book.fields.insert(cell, fields);
    }
}

/// Remembers the reverts the audit log records (`repair --revert`, the console's revert), so a
/// field drifted again is flagged as an owner fight in a later session too. An entry names
/// clusters, objects and paths; every combination that is a cell of this fleet counts.
pub fn remember_reverts(state: &mut State, entries: &[Value]) {
    let strings = |entry: &Value, key: &str| -> Vec<String> {
        entry[key]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| item.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    for entry in entries {
        if !matches!(
            entry["action"].as_str(),
            Some("repair-revert" | "console-revert")
        ) {
            continue;
        }
        let paths = strings(entry, "paths");
        for cluster in strings(entry, "clusters") {
            let Some(c) = state.clusters.iter().position(|r| r.spec.name == cluster) else {
                continue;
            };
            for object in strings(entry, "objects") {
                let Some(r) = state
                    .resources
                    .iter()
                    .position(|row| row.target.display_key() == object)
                else {
                    continue;
                };
                let cell = CellRef {
                    resource: r as u32,
                    cluster: c as u32,
                };
                for path in &paths {
                    state
                        .drift
                        .reverted
                        .entry((cell, path.clone()))
                        .or_default();
                }
            }
        }
    }
}

/// Forgets the drift of cells that are no longer Drifted (after cell updates).
pub fn forget_settled(state: &mut State) {
    let cells = &state.cells;
    state.drift.fields.retain(|cell, _| {
        cells.kind(cell.resource as usize, cell.cluster as usize) == StatusKind::Drifted
    });
}

/// The fields a row stands for.
fn row_fields(groups: &[Group], row: Row) -> Vec<FieldKey> {
    match row {
        Row::Group(g) => groups[g]
            .members
            .iter()
            .map(|m| (m.cell, groups[g].path.clone()))
            .collect(),
        Row::Member(g, m) => vec![(groups[g].members[m].cell, groups[g].path.clone())],
    }
}

/// Opens the drift view (read-only consoles may look).
pub fn open(state: &mut State) {
    state.mode = Mode::Drift(Box::default());
    if state.drift.fields.is_empty() {
        state.notice = Some("no drift reported".into());
    }
}

/// A key typed while a repair is being prepared or confirmed (browsing takes commands).
pub fn key(state: &mut State, mut view: Box<DriftView>, key: InputKey) -> Vec<Effect> {
    match std::mem::take(&mut view.stage) {
        Stage::Confirming(plan) => return confirm(state, view, plan, key),
        // Still being prepared; esc gives up.
        Stage::Preparing { .. } if key == InputKey::Esc => {}
        stage => view.stage = stage,
    }
    state.mode = Mode::Drift(view);
    Vec::new()
}

/// A command of the `drift` key map section while the view browses.
pub fn command(state: &mut State, mut view: Box<DriftView>, command: ViewCommand) -> Vec<Effect> {
    if !matches!(view.stage, Stage::Browsing) {
        state.mode = Mode::Drift(view);
        return Vec::new();
    }
    let groups = state.drift.groups(&state.cells);
    let rows = rows(&groups);
    view.cursor = view.cursor.min(rows.len().saturating_sub(1));
    let len = match view.pane {
        Pane::Fields => rows.len(),
        Pane::Rules => view.rules.len(),
    };
    let cursor = match view.pane {
        Pane::Fields => &mut view.cursor,
        Pane::Rules => &mut view.rule_cursor,
    };
    match command {
        ViewCommand::Back => return Vec::new(),
        ViewCommand::Up => *cursor = cursor.saturating_sub(1),
        ViewCommand::Down => *cursor = (*cursor + 1).min(len.saturating_sub(1)),
        ViewCommand::Top => *cursor = 0,
        ViewCommand::Bottom => *cursor = len.saturating_sub(1),
        ViewCommand::SwitchPane => {
            view.pane = match view.pane {
                Pane::Fields => Pane::Rules,
                Pane::Rules => Pane::Fields,
            }
        }
        ViewCommand::Mark if view.pane == Pane::Fields => {
            if let Some(row) = rows.get(view.cursor) {
                let fields = row_fields(&groups, *row);
                if fields.iter().all(|f| view.marked.contains(f)) {
                    for f in &fields {
                        view.marked.remove(f);
                    }
                } else {
                    view.marked.extend(fields);
                }
                view.cursor = (view.cursor + 1).min(rows.len().saturating_sub(1));
            }
        }
        command @ (ViewCommand::Revert | ViewCommand::Adopt | ViewCommand::Ignore)
            if view.pane == Pane::Fields =>
        {
            let verb = match command {
                ViewCommand::Revert => Verb::Revert,
                ViewCommand::Adopt => Verb::Adopt,
                _ => Verb::Ignore,
            };
            if state.readonly {
                state.notice = Some(format!("read-only: drift cannot be {}ed here", verb.name()));
            } else {
                let targets = chosen(state, &view, &groups, &rows);
                if targets.is_empty() {
                    state.notice = Some("no drifted field selected".into());
                } else if verb == Verb::Revert {
                    view.stage = Stage::Confirming(Box::new(revert_plan(state, &targets)));
                } else {
                    view.stage = Stage::Preparing {
                        verb,
                        targets,
                        rule: None,
                    };
                }
            }
        }
        ViewCommand::RemoveRule if view.pane == Pane::Rules => {
            if state.readonly {
                state.notice = Some("read-only: ignore rules cannot be removed here".into());
            } else if let Some(rule) = view.rules.get(view.rule_cursor) {
                view.stage = Stage::Preparing {
                    verb: Verb::RemoveRule,
                    targets: Vec::new(),
                    rule: Some(rule.name.clone()),
                };
            }
        }
        _ => {}
    }
    state.mode = Mode::Drift(view);
    Vec::new()
}

/// The marked fields, or the row under the cursor when nothing is marked.
fn chosen(state: &State, view: &DriftView, groups: &[Group], rows: &[Row]) -> Vec<Target> {
    let keys: Vec<FieldKey> = if view.marked.is_empty() {
        rows.get(view.cursor)
            .map(|row| row_fields(groups, *row))
            .unwrap_or_default()
    } else {
        view.marked.iter().cloned().collect()
    };
    keys.into_iter()
        .filter_map(|(cell, path)| {
            let field = state
                .drift
                .fields
                .get(&cell)?
                .iter()
                .find(|f| f.path == path)?;
            Some(Target {
                cell,
                path,
                desired: field.desired.clone(),
                live: field.live.clone(),
                manager: field.manager.clone(),
                secret: field.secret,
            })
        })
        .collect()
}

/// A chosen field's desired and live values as the confirmation shows them: a Secret's masked.
fn shown(t: &Target) -> (Value, Value) {
    if t.secret {
        secrets::mask_field(&t.desired, &t.live)
    } else {
        (t.desired.clone(), t.live.clone())
    }
}

fn names(state: &State, cell: CellRef) -> (String, String) {
    let cluster = state
        .clusters
        .get(cell.cluster as usize)
        .map(|c| c.spec.name.clone())
        .unwrap_or_default();
    let resource = state
        .resources
        .get(cell.resource as usize)
        .map(|r| r.target.display_key())
        .unwrap_or_default();
    (cluster, resource)
}

fn confirm_word(state: &State, targets: &[Target]) -> String {
    targets
        .iter()
        .map(|t| t.cell.cluster as usize)
        .find(|cluster| state.is_dangerous(*cluster))
        .and_then(|cluster| state.clusters.get(cluster))
        .map_or_else(|| "y".into(), |row| row.spec.name.clone())
}

fn revert_plan(state: &State, targets: &[Target]) -> Plan {
    let mut lines = vec![format!(
        "force-apply the desired value of {} field(s); other fields stay as they are:",
        targets.len()
    )];
    for t in targets {
        let (cluster, resource) = names(state, t.cell);
        let (desired, live) = shown(t);
        lines.push(format!(
            "{cluster}  {resource}  {}: live {live} → desired {desired} (taken back from {})",
            t.path,
            t.manager.as_deref().unwrap_or("another manager")
        ));
    }
    Plan {
        verb: Verb::Revert,
        lines,
        confirm_word: confirm_word(state, targets),
        typed: String::new(),
        effect: PlanEffect::Revert(
            targets
                .iter()
                .map(|t| RevertField {
                    cell: t.cell,
                    path: t.path.clone(),
                })
                .collect(),
        ),
        fields: targets.len(),
    }
}

fn confirm(
    state: &mut State,
    mut view: Box<DriftView>,
    mut plan: Box<Plan>,
    key: InputKey,
) -> Vec<Effect> {
    let single_key = plan.confirm_word == "y";
    let go = match key {
        InputKey::Esc => false,
        InputKey::Char('n') if single_key => false,
        InputKey::Char('y') if single_key => true,
        InputKey::Enter if !single_key && plan.typed == plan.confirm_word => true,
        other => {
            if !single_key {
                edit_text(&mut plan.typed, other);
            }
            view.stage = Stage::Confirming(plan);
            state.mode = Mode::Drift(view);
            return Vec::new();
        }
    };
    if !go {
        state.notice = Some(format!("{} cancelled; nothing written", plan.verb.name()));
        state.mode = Mode::Drift(view);
        return Vec::new();
    }
    view.marked.clear();
    let verb = plan.verb;
    let effect = match plan.effect {
        PlanEffect::Revert(fields) => {
            for field in &fields {
                let key = (field.cell, field.path.clone());
                let manager = state
                    .drift
                    .fields
                    .get(&field.cell)
                    .and_then(|fs| fs.iter().find(|f| f.path == field.path))
                    .and_then(|f| f.manager.clone())
                    .filter(|m| m != FIELD_MANAGER);
                if let Some(manager) = manager {
                    state.drift.reverted.insert(key.clone(), manager);
                }
                state.drift.fights.remove(&key);
            }
            state.drift.last_batch = Some(Batch {
                verb,
                cells: cells_of(fields.iter().map(|f| f.cell)),
                fields: fields.len(),
            });
            Some(Effect::Revert { fields })
        }
        PlanEffect::Write(write) => {
            state.drift.last_batch = Some(Batch {
                verb,
                cells: write.apply.clone(),
                fields: plan.fields,
            });
            state.edits.push(FleetEdit::Files(write));
            None
        }
    };
    state.notice = Some(format!("{}: {} field(s)…", verb.name(), plan.fields));
    state.mode = Mode::Drift(view);
    effect.into_iter().collect()
}

fn cells_of(cells: impl Iterator<Item = CellRef>) -> Vec<CellRef> {
    cells.collect::<BTreeSet<_>>().into_iter().collect()
}

/// Fills in the rules list and prepares a requested adopt, ignore or rule removal with the
/// engine. Returns whether anything changed.
pub fn refresh(state: &mut State, fleet: &Fleet, files: &[SourceFile]) -> bool {
    let Mode::Drift(view) = &mut state.mode else {
        return false;
    };
    let rules: Vec<RuleRow> = fleet
        .ignores
        .iter()
        .map(|rule| RuleRow {
            name: rule.name.clone(),
            location: rule.source.to_string(),
            summary: format!(
                "{} on {} for {}",
                rule.paths
                    .iter()
                    .map(|p| p.text.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
                if rule.clusters.is_empty() {
                    "every cluster".to_string()
                } else {
                    rule.clusters.join(", ")
                },
                rule.resources
                    .iter()
                    .map(|r| format!(
                        "{}/{}{}",
                        r.kind,
                        r.namespace
                            .as_deref()
                            .map(|ns| format!("{ns}/"))
                            .unwrap_or_default(),
                        r.name
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
        .collect();
    let mut changed = false;
    if view.rules != rules {
        view.rule_cursor = view.rule_cursor.min(rules.len().saturating_sub(1));
        view.rules = rules;
        changed = true;
    }
    let Stage::Preparing {
        verb,
        targets,
        rule,
    } = &view.stage
    else {
        return changed;
    };
    let (verb, targets, rule) = (*verb, targets.clone(), rule.clone());
    let plan = prepare(state, fleet, files, verb, &targets, rule.as_deref());
    let Mode::Drift(view) = &mut state.mode else {
        return true;
    };
    match plan {
        Ok(plan) => view.stage = Stage::Confirming(Box::new(plan)),
        Err(error) => {
            view.stage = Stage::Browsing;
            state.notice = Some(format!("cannot {}: {error}; nothing written", verb.name()));
        }
    }
    true
}

fn prepare(
    state: &State,
    fleet: &Fleet,
    files: &[SourceFile],
    verb: Verb,
    targets: &[Target],
    rule: Option<&str>,
) -> Result<Plan, String> {
    let chosen: Vec<Chosen> = targets
        .iter()
        .map(|t| {
            let (cluster, _) = names(state, t.cell);
            Chosen {
                cluster,
                resource: state
                    .resources
                    .get(t.cell.resource as usize)
                    .map(|r| r.target.clone())
                    .unwrap_or_else(|| crate::model::ResourceRef {
                        api_version: String::new(),
                        kind: String::new(),
                        namespace: None,
                        name: String::new(),
                    }),
                path: t.path.clone(),
                live: t.live.clone(),
            }
        })
        .collect();
    let (changes, mut lines, apply, action, title) = match verb {
        Verb::Adopt => {
            let changes = drift_repair::adopt_changes(fleet, files, &chosen)
                .map_err(|err| err.to_string())?;
            let mut lines = vec![format!(
                "keep the live value of {} field(s) as overrides for their clusters:",
                targets.len()
            )];
            for t in targets {
                let (cluster, resource) = names(state, t.cell);
                let (desired, live) = shown(t);
                lines.push(format!(
                    "{cluster}  {resource}  {}: {live} (desired was {desired})",
                    t.path
                ));
            }
            (
                changes,
                lines,
                cells_of(targets.iter().map(|t| t.cell)),
                "console-adopt",
                format!("adopted {} field(s)", targets.len()),
            )
        }
        Verb::Ignore => {
            let (change, names_) = drift_repair::ignore_changes(fleet, files, &chosen)
                .map_err(|err| err.to_string())?;
            let mut lines = vec![format!(
                "stop counting {} field(s) as drift (never reverted by apply): rule(s) {}",
                targets.len(),
                names_.join(", ")
            )];
            for t in targets {
                let (cluster, resource) = names(state, t.cell);
                let (desired, live) = shown(t);
                lines.push(format!(
                    "{cluster}  {resource}  {}: live {live}, desired {desired}",
                    t.path
                ));
            }
            (
                vec![change],
                lines,
                Vec::new(),
                "console-ignore",
                format!("ignore rule(s) {}", names_.join(", ")),
            )
        }
        Verb::RemoveRule => {
            let name = rule.ok_or("no rule chosen")?;
            let change = drift_repair::remove_rule_change(fleet, files, name)
                .map_err(|err| err.to_string())?;
            (
                vec![change],
                vec![format!(
                    "remove ignore rule {name}: its fields count as drift again"
                )],
                Vec::new(),
                "console-remove-ignore",
                format!("removed ignore rule {name}"),
            )
        }
        Verb::Revert => return Ok(revert_plan(state, targets)),
    };
    for change in &changes {
        lines.push(format!(
            "write {}{}:",
            change.path,
            if change.old.is_none() {
                " (new file)"
            } else {
                ""
            }
        ));
        lines.extend(
            drift_repair::changed_lines(change)
                .into_iter()
                .map(|line| format!("  {line}")),
        );
    }
    let mut clusters = BTreeSet::new();
    let mut objects = BTreeSet::new();
    let mut paths = BTreeSet::new();
    for c in &chosen {
        clusters.insert(c.cluster.clone());
        objects.insert(c.resource.display_key());
        paths.insert(c.path.clone());
    }
    let confirm_word = if verb == Verb::RemoveRule {
        "y".into()
    } else {
        confirm_word(state, targets)
    };
    Ok(Plan {
        verb,
        lines,
        confirm_word,
        typed: String::new(),
        effect: PlanEffect::Write(FleetWrite {
            title,
            action: action.into(),
            files: changes
                .into_iter()
                .map(|c| FileText {
                    path: c.path,
                    old: c.old,
                    new: c.new,
                })
                .collect(),
            apply,
            clusters: clusters.into_iter().collect(),
            objects: objects.into_iter().collect(),
            paths: paths.into_iter().collect(),
        }),
        fields: targets.len(),
    })
}
