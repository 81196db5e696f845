//! `update`: the one place the console's state changes, at the top of the app. A plain
//! function of the state and an action that returns the effects to run: it handles the
//! panes, filters and confirmations itself and hands a view's commands and typed keys, palette
//! commands and rollout reports to the files that own them. It must not do I/O, sleep or read
//! a clock, and no file in the app but the session calls it.

use super::action::{Action, InputKey};
use super::palette::{self, PaletteCommand};
use super::state::filter::Filter;
use super::state::pods::PodsFilter;
use super::state::{
    AfterSave, CellDetail, FleetChanged, FleetEdit, KeyContext, Mode, Pane, PendingApply, Reload,
    Reopen, ResourceRow, Saved, SortKey, State, is_unreachable,
};
use super::text_input::edit_text;
use super::{
    drift, explanation, object_view, ocm_placement, override_editor, placement_editor, review,
    rollout,
};
use crate::config::keymap::{KeyCommand, Section, ViewCommand};
use crate::engine::health::pods::WORKLOADS;
use crate::messages::CellRef;
use crate::messages::{BackendEvent, Effect, SharedFleet};
use crate::model::{HubKind, StatusKind};

/// Applies one action to the state and returns what the backend should do. What the state
/// derives from its inputs (the selected cell's explanation, the editors' previews, the drift
/// view's prepared repairs) is brought up to date before it returns, each part only when its
/// inputs changed; the open palette's completions are, after every action.
pub fn update(state: &mut State, action: Action) -> Vec<Effect> {
    let mut effects = apply(state, action);
    derive(state);
    effects.extend(object_view::follow(state));
    effects
}

/// Recomputes what depends on the fleet, the selection and the open editor (cheap when none of
/// them changed), and the open palette's completions.
fn derive(state: &mut State) {
    explanation::follow_selection(state);
    let fleet = state.fleet.clone();
    let files = state.files.clone();
    placement_editor::refresh(state, &fleet, &files);
    override_editor::refresh(state, &fleet, &files);
    ocm_placement::refresh(state);
    drift::refresh(state, &fleet, &files);
    palette::refresh(state);
}

fn apply(state: &mut State, action: Action) -> Vec<Effect> {
    match action {
        Action::Command(command) => run_command(state, command),
        Action::View(section, command) => run_view_command(state, section, command),
        Action::Input(key) => edit(state, key),
        Action::Backend(event) => {
            if let BackendEvent::Cells(updates) = &event {
                rollout::observe(state, updates);
            }
            apply_backend_event(state, event);
            rollout::advance(state)
        }
        Action::Resize { width, height } => {
            state.page_rows = usize::from(height.saturating_sub(8)).max(1);
            state.viewport = (width, height);
            Vec::new()
        }
        Action::Tick { now_ms, unix_ms } => tick(state, now_ms, unix_ms),
        Action::Terminate => {
            state.should_quit = true;
            Vec::new()
        }
        Action::Saved(saved) => take_saved(state, saved),
        Action::ExecEnded(message) => {
            state.notice = Some(message);
            Vec::new()
        }
    }
}

/// Takes what the session's write of a confirmed edit did: the new texts, the fleet reloaded
/// from them, the notice, and the effects that follow (the backend's new fleet and the cells
/// to propagate, or the policy to write to the hub).
fn take_saved(state: &mut State, saved: Saved) -> Vec<Effect> {
    let (files, outcome) = match saved {
        Saved::Written {
            files,
            notice,
            then,
        } => (files, Ok((notice, then))),
        Saved::NotWritten { files, notice } => (files, Err(notice)),
        Saved::Changed(changed) => {
            offer_reload(state, changed);
            return Vec::new();
        }
    };
    let texts = std::sync::Arc::make_mut(&mut state.files);
    for file in files {
        match texts.iter_mut().find(|known| known.path == file.path) {
            Some(known) => known.text = file.text,
            None => texts.push(file),
        }
    }
    let (notice, then) = match outcome {
        Ok(written) => written,
        Err(notice) => {
            refuse_save(state, notice);
            return Vec::new();
        }
    };
    let (fleet, errors) = crate::engine::load_fleet(&state.files);
    if let Some(error) = errors.first() {
        refuse_save(
            state,
            format!(
                "saved, but the fleet no longer loads: {error}; nothing was propagated (the file's previous version is kept beside it, ending in .flotilla-bak)"
            ),
        );
        return Vec::new();
    }
    let fleet = std::sync::Arc::new(fleet);
    use_fleet(state, fleet.clone());
    match then {
        AfterSave::Propagate { apply, delete } => {
            state.notice = Some(notice);
            let mut effects = vec![Effect::UseFleet(SharedFleet(fleet))];
            if !apply.is_empty() {
                effects.push(Effect::Apply { cells: apply });
            }
            if !delete.is_empty() {
                effects.push(Effect::Delete { cells: delete });
            }
            effects
        }
        AfterSave::WriteToHub {
            object,
            base,
            title,
            cells,
        } => {
            let expect: Vec<(CellRef, serde_json::Value)> = cells
                .iter()
                .filter_map(|cell| {
                    match fleet.decide(cell.resource as usize, cell.cluster as usize) {
                        crate::engine::Decision::Placed { object, .. } => Some((*cell, object)),
                        crate::engine::Decision::Suspended { .. }
                        | crate::engine::Decision::NotPlaced { .. } => None,
                    }
                })
                .collect();
            state.notice = Some(format!(
                "writing {title} to the hub; {} cell(s) will follow",
                expect.len()
            ));
            vec![Effect::HubApply {
                object,
                base,
                title,
                expect,
            }]
        }
    }
}

/// A save that did not happen (or not whole): say so, forget the undo it would have
/// offered, and start no wave of it.
fn refuse_save(state: &mut State, notice: String) {
    tracing::warn!("{notice}");
    state.notice = Some(notice);
    state.last_change = None;
    state.rollout = None;
}

/// The file changed on disk under a confirmed edit: nothing was written. Says what changed
/// there and offers to reload the file and reopen the editor on it.
fn offer_reload(state: &mut State, changed: FleetChanged) {
    refuse_save(state, changed.reason.clone());
    let Some(text) = changed.disk else {
        return;
    };
    let mut summary = vec![
        format!(
            "not saved: {} changed on disk since the editor opened",
            changed.title
        ),
        format!("({}); nothing was written. On disk now:", changed.file),
    ];
    const SHOWN: usize = 12;
    summary.extend(
        changed
            .lines
            .iter()
            .take(SHOWN)
            .map(|line| format!("  {line}")),
    );
    if changed.lines.len() > SHOWN {
        summary.push(format!("  … {} more line(s)", changed.lines.len() - SHOWN));
    }
    summary.push("esc keeps the fleet as it was loaded".into());
    state.mode = Mode::Confirm(Box::new(PendingApply {
        summary,
        confirm_word: "y".into(),
        reload: Some(Reload {
            file: changed.file,
            text,
            reopen: changed.reopen,
        }),
        ..PendingApply::default()
    }));
}

/// Takes a fleet file as it is on disk now (the operator chose to, after an edit of it was
/// refused), reloads the fleet from it and reopens the editor that was refused.
fn reload(state: &mut State, reload: Reload) -> Vec<Effect> {
    let mut files = (*state.files).clone();
    match files.iter_mut().find(|known| known.path == reload.file) {
        Some(known) => known.text = reload.text,
        None => files.push(crate::engine::SourceFile {
            path: reload.file.clone(),
            text: reload.text,
        }),
    }
    let (fleet, errors) = crate::engine::load_fleet(&files);
    if let Some(error) = errors.first() {
        state.notice = Some(format!(
            "{} as it is on disk does not load ({error}); the fleet stays as it was loaded",
            reload.file
        ));
        return Vec::new();
    }
    state.files = std::sync::Arc::new(files);
    let fleet = std::sync::Arc::new(fleet);
    use_fleet(state, fleet.clone());
    state.notice = Some(format!("reloaded {} from disk", reload.file));
    match reload.reopen {
        Some(Reopen::Placement) => placement_editor::open(state),
        Some(Reopen::Overrides) => override_editor::open(state),
        None => {}
    }
    vec![Effect::UseFleet(SharedFleet(fleet))]
}

/// Works from a fleet saved after an edit: same clusters and resources, new placements.
fn use_fleet(state: &mut State, fleet: std::sync::Arc<crate::engine::Fleet>) {
    for (row, resource) in state.resources.iter_mut().enumerate() {
        resource.placement = fleet.placement_summary(row);
    }
    state.fleet = fleet;
    state.explanation = None;
}

/// Advances the app clock and takes the wall clock's time; turns the wall's page when its
/// interval has passed. A rollout held by its gate's hold may start its next wave.
fn tick(state: &mut State, now_ms: u64, unix_ms: Option<u64>) -> Vec<Effect> {
    state.now_ms = state.now_ms.max(now_ms);
    if unix_ms.is_some() {
        state.unix_ms = unix_ms;
    }
    state.cells.set_now(state.now_ms);
    let effects = rollout::tick(state);
    let headlines = state.headlines();
    if let Some(wall) = &mut state.wall {
        wall.history.record(state.now_ms, headlines);
    }
    if let Some(wall) = &mut state.wall
        && wall.page_every_ms > 0
        && state.now_ms.saturating_sub(wall.page_turned_ms) >= wall.page_every_ms
    {
        wall.page += 1;
        wall.page_turned_ms = state.now_ms;
    }
    effects
}

/// The wall display obeys only quit of the main view's commands (its pages turn by its own
/// section's); everything else does nothing.
fn run_wall_command(state: &mut State, command: KeyCommand) {
    if command == KeyCommand::Quit {
        state.should_quit = true;
    }
}

/// A page of the wall's heat map turned by a key (the next automatic turn waits a full
/// interval from now).
fn turn_wall_page(state: &mut State, command: ViewCommand) {
    let Some(wall) = &mut state.wall else {
        return;
    };
    match command {
        ViewCommand::PageDown => wall.page += 1,
        ViewCommand::PageUp => wall.page -= 1,
        _ => return,
    }
    wall.page_turned_ms = state.now_ms;
}

fn run_command(state: &mut State, command: KeyCommand) -> Vec<Effect> {
    if command == KeyCommand::Exec && !state.help_open && matches!(state.mode, Mode::Normal) {
        super::exec::ask(state);
        return Vec::new();
    }
    if command == KeyCommand::Logs && !state.help_open && matches!(state.mode, Mode::Normal) {
        return super::logs::open(state);
    }
    if state.wall.is_some() {
        run_wall_command(state, command);
        return Vec::new();
    }
    if state.help_open {
        match command {
            KeyCommand::Quit => state.should_quit = true,
            KeyCommand::Help | KeyCommand::Back => state.help_open = false,
            _ => {}
        }
        return Vec::new();
    }
    if command == KeyCommand::Help {
        state.help_open = true;
        return Vec::new();
    }
    if matches!(state.mode, Mode::Object { .. }) {
        object_view::run_command(state, command);
        return Vec::new();
    }
    let page = state.page_rows.max(1);
    match command {
        KeyCommand::Quit => state.should_quit = true,
        KeyCommand::Help => {}
        KeyCommand::Back if state.detail_open => state.detail_open = false,
        KeyCommand::Back => {
            if !rollout::cancel(state) {
                clear_focused_filter(state);
            }
        }
        KeyCommand::FocusNext | KeyCommand::FocusPrev => state.focus = state.focus.next(),
        KeyCommand::Up => move_cursor(state, |cursor, _| cursor.saturating_sub(1)),
        KeyCommand::Down => move_cursor(state, |cursor, _| cursor + 1),
        KeyCommand::PageUp => move_cursor(state, |cursor, _| cursor.saturating_sub(page)),
        KeyCommand::PageDown => move_cursor(state, |cursor, _| cursor + page),
        KeyCommand::Top => move_cursor(state, |_, _| 0),
        KeyCommand::Bottom => move_cursor(state, |_, len| len),
        KeyCommand::Left => state.step_cluster(false),
        KeyCommand::Right => state.step_cluster(true),
        KeyCommand::Filter => {
            let pane = state.focus;
            state.mode = Mode::Filter {
                pane,
                input: state.view(pane).filter.text().to_string(),
                error: None,
            };
        }
        KeyCommand::Palette => {
            state.mode = Mode::Palette {
                input: String::new(),
                selected: 0,
                error: None,
                completions: Vec::new(),
            };
        }
        KeyCommand::Sort => {
            let pane = state.focus;
            let keys = SortKey::cycle(pane);
            let current = state.view(pane).sort;
            let next = keys
                .iter()
                .position(|key| *key == current)
                .map_or(keys[0], |index| keys[(index + 1) % keys.len()]);
            state.view_mut(pane).sort = next;
            state.refresh_views();
            state.notice = Some(format!("sorted by {}", next.name()));
        }
        KeyCommand::Apply => return ask_to_apply(state),
        KeyCommand::PauseRollout => return rollout::toggle_pause(state),
        KeyCommand::Exec => super::exec::ask(state),
        KeyCommand::Logs => return super::logs::open(state),
        KeyCommand::EditPlacement => placement_editor::open(state),
        KeyCommand::EditOverrides => override_editor::open(state),
        KeyCommand::Undo => placement_editor::ask_to_undo(state),
        KeyCommand::Drift => drift::open(state),
        KeyCommand::Select => match state.focus {
            // Enter on a cluster takes you to its column in the matrix.
            Pane::Clusters => state.focus = Pane::Resources,
            Pane::Resources if state.selected_cell().is_some() => object_view::open(state),
            Pane::Resources => {}
        },
        KeyCommand::Detail => state.detail_open = !state.detail_open,
        KeyCommand::Collapse => {
            if state.group_by.is_none() {
                state.group_by = Some("region".into());
            }
            state.collapsed = !state.collapsed;
            state.refresh_views();
        }
    }
    Vec::new()
}

/// Esc in normal mode: clear the focused pane's filter (and the status, health and pods filters),
/// like k9s.
fn clear_focused_filter(state: &mut State) {
    let pane = state.focus;
    if !state.view(pane).filter.is_empty()
        || state.status_filter.is_some()
        || state.health_filter.is_some()
        || state.pods.filter.is_some()
    {
        state.view_mut(pane).filter = Filter::default();
        if pane == Pane::Resources {
            state.kind_filter = None;
        }
        state.status_filter = None;
        state.health_filter = None;
        state.pods.clear_filter();
        state.refresh_views();
    }
}

/// Moves the focused pane's cursor, clamped to its visible rows.
fn move_cursor(state: &mut State, step: impl Fn(usize, usize) -> usize) {
    let view = state.view_mut(state.focus);
    let len = view.visible.len();
    view.cursor = step(view.cursor, len).min(len.saturating_sub(1));
}

/// Cells of the selected resource that propagation would fix: placed but not in sync.
fn repairable(kind: StatusKind) -> bool {
    matches!(
        kind,
        StatusKind::Pending | StatusKind::Drifted | StatusKind::Missing | StatusKind::Failed
    )
}

/// `a`: propose propagating the selected resource where it is not in sync; writes nothing
/// until the operator confirms.
fn ask_to_apply(state: &mut State) -> Vec<Effect> {
    if state.readonly {
        state.notice = Some("read-only: propagation is disabled".into());
        return Vec::new();
    }
    let Some(resource) = state.selected_resource() else {
        state.notice = Some("select a resource to propagate".into());
        return Vec::new();
    };
    if let Some(why) = &state.cannot_edit.reschedule {
        state.notice = Some(why.clone());
        return Vec::new();
    }
    if let Some(hub) = state.hub {
        return ask_to_reschedule(state, resource, hub);
    }
    let mut cells = Vec::new();
    let mut summary = Vec::new();
    let mut danger: Option<String> = None;
    for &cluster in &state.cluster_view.visible {
        let kind = state.cells.kind(resource, cluster);
        if !repairable(kind) {
            continue;
        }
        cells.push(CellRef {
            resource: resource as u32,
            cluster: cluster as u32,
        });
        let name = &state.clusters[cluster].spec.name;
        if danger.is_none() && state.is_dangerous(cluster) {
            danger = Some(name.clone());
        }
        summary.push(format!("{name}: {kind}"));
    }
    if cells.is_empty() {
        state.notice = Some(format!(
            "{} is in sync on every visible cluster; nothing to propagate",
            state.resources[resource].target.display_key()
        ));
        return Vec::new();
    }
    summary.insert(
        0,
        format!(
            "propagate {} to {} cluster(s):",
            state.resources[resource].target.display_key(),
            cells.len()
        ),
    );
    state.mode = Mode::Confirm(Box::new(PendingApply {
        cells,
        summary,
        confirm_word: danger.unwrap_or_else(|| "y".into()),
        ..PendingApply::default()
    }));
    Vec::new()
}

/// Keys while a confirmation is open: the confirm word and enter go ahead; esc or `n` cancel.
/// On a hub, `a` asks the hub's scheduler to place the resource afresh (its controllers do
/// the propagating); the backend sets the binding's reschedule trigger.
fn ask_to_reschedule(state: &mut State, resource: usize, hub: HubKind) -> Vec<Effect> {
    let cells: Vec<CellRef> = (0..state.clusters.len())
        .map(|cluster| CellRef {
            resource: resource as u32,
            cluster: cluster as u32,
        })
        .collect();
    let key = state.resources[resource].target.display_key();
    state.mode = Mode::Confirm(Box::new(PendingApply {
        cells,
        summary: vec![
            format!("reschedule {key} on the {hub} hub:"),
            "sets rescheduleTriggeredAt on its binding;".into(),
            "the scheduler places it afresh, and its clusters may change".into(),
        ],
        confirm_word: "y".into(),
        ..PendingApply::default()
    }));
    Vec::new()
}

fn confirm(state: &mut State, mut pending: Box<PendingApply>, key: InputKey) -> Vec<Effect> {
    let single_key = pending.confirm_word == "y";
    match key {
        InputKey::Esc if pending.reload.is_some() => {
            state.notice = Some("the fleet stays as it was loaded; nothing written".into())
        }
        InputKey::Esc => state.notice = Some("propagation cancelled; nothing written".into()),
        InputKey::Char('n') if single_key => {
            state.notice = Some("propagation cancelled; nothing written".into())
        }
        InputKey::Char('y') if single_key => return start_apply(state, pending),
        InputKey::Tab => {
            // A hub's controllers roll a change out themselves: no waves there.
            pending.waves = !pending.waves && state.hub.is_none();
            state.mode = Mode::Confirm(pending);
        }
        InputKey::Enter if !single_key && pending.typed == pending.confirm_word => {
            return start_apply(state, pending);
        }
        other => {
            if !single_key {
                edit_text(&mut pending.typed, other);
            }
            state.mode = Mode::Confirm(pending);
        }
    }
    Vec::new()
}

fn start_apply(state: &mut State, mut pending: Box<PendingApply>) -> Vec<Effect> {
    if let Some(file) = pending.reload.take() {
        return reload(state, file);
    }
    if let Some(write) = pending.placement {
        if let Some(previous) = write.previous {
            state.last_placement = Some((write.namespace.clone(), write.name.clone(), previous));
        } else {
            state.last_placement = None;
        }
        state.notice = Some(format!(
            "writing Placement {}/{} to the hub…",
            write.namespace, write.name
        ));
        return vec![Effect::WritePlacement {
            namespace: write.namespace,
            name: write.name,
            patch: write.patch,
            expect: write.expect,
        }];
    }
    if state.hub.is_some() && pending.save.is_none() {
        state.notice = Some("asking the hub to reschedule…".into());
        return vec![Effect::Apply {
            cells: pending.cells,
        }];
    }
    state.notice = Some(format!(
        "propagating to {} cluster(s)…",
        pending.cells.len()
    ));
    // A saved change can be undone; saving the undo itself leaves nothing to undo.
    if pending.save.is_some() {
        state.last_change = pending.undo;
    }
    let waves = rollout::waves(&pending.cells, pending.waves);
    let first = waves.first().cloned().unwrap_or_default();
    if !pending.cells.is_empty() {
        rollout::start(state, waves);
    }
    match pending.save {
        Some(save) => {
            state.edits.push(FleetEdit::Document {
                save,
                cells: first,
                delete: pending.delete,
            });
            Vec::new()
        }
        None => vec![Effect::Apply { cells: first }],
    }
}

/// A command of a view's own section, named by the key map in use (`console::keys`). One for
/// a section no longer in focus (the view moved on, or the help opened, since the key was
/// read) does nothing. Help opens over a view that browses, not over one of its text fields.
fn run_view_command(state: &mut State, section: Section, command: ViewCommand) -> Vec<Effect> {
    match state.key_context() {
        KeyContext::View(focused) if focused == section => {
            if command == ViewCommand::Help {
                state.help_open = true;
                return Vec::new();
            }
        }
        KeyContext::Form(focused) if focused == section => {}
        _ => return Vec::new(),
    }
    if section == Section::Wall {
        turn_wall_page(state, command);
        return Vec::new();
    }
    match std::mem::take(&mut state.mode) {
        Mode::Placement(editor) => placement_editor::command(state, editor, command),
        Mode::OcmPlacement(editor) => ocm_placement::command(state, editor, command),
        Mode::Overrides(editor) => override_editor::command(state, editor, command),
        Mode::Drift(view) => drift::command(state, view, command),
        Mode::Logs(pane) => super::logs::command(state, pane, command),
        mode @ Mode::Object { .. } => {
            state.mode = mode;
            object_view::command(state, command);
            Vec::new()
        }
        other => {
            state.mode = other;
            Vec::new()
        }
    }
}

/// A key typed into the open input: a filter, the palette, a confirmation, or an editor's
/// text field, form or confirmation.
fn edit(state: &mut State, key: InputKey) -> Vec<Effect> {
    if state.help_open {
        return Vec::new();
    }
    match std::mem::take(&mut state.mode) {
        Mode::Confirm(pending) => return confirm(state, pending, key),
        Mode::Placement(placement) => return placement_editor::key(state, placement, key),
        Mode::OcmPlacement(placement) => {
            return ocm_placement::key(state, placement, key);
        }
        Mode::Overrides(overrides) => return override_editor::key(state, overrides, key),
        Mode::Drift(view) => return drift::key(state, view, key),
        Mode::Exec(prompt) => super::exec::key(state, prompt, key),
        Mode::Logs(pane) => super::logs::key(state, pane, key),
        Mode::Filter {
            pane,
            mut input,
            error,
        } => match key {
            InputKey::Esc => {}
            InputKey::Enter => match Filter::parse(&input) {
                Ok(filter) => {
                    state.view_mut(pane).filter = filter;
                    state.view_mut(pane).cursor = 0;
                    state.refresh_views();
                }
                Err(error) => {
                    state.mode = Mode::Filter {
                        pane,
                        input,
                        error: Some(error),
                    }
                }
            },
            other => {
                let changed = edit_text(&mut input, other);
                // Filter as you type, when the text so far parses.
                if changed && let Ok(filter) = Filter::parse(&input) {
                    state.view_mut(pane).filter = filter;
                    state.view_mut(pane).cursor = 0;
                    state.refresh_views();
                }
                state.mode = Mode::Filter {
                    pane,
                    input,
                    error: if changed { None } else { error },
                };
            }
        },
        Mode::Palette {
            mut input,
            mut selected,
            error,
            completions,
        } => match key {
            InputKey::Esc => {}
            InputKey::Enter => {
                let line = if palette::parse(&input).is_err() {
                    completions
                        .get(selected)
                        .map_or(input.clone(), |(line, _)| line.clone())
                } else {
                    input.clone()
                };
                match palette::parse(&line) {
                    Ok(command) => return run_palette(state, command),
                    Err(error) => {
                        state.mode = Mode::Palette {
                            input,
                            selected,
                            error: Some(error),
                            completions,
                        }
                    }
                }
            }
            InputKey::Tab => {
                if let Some((line, _)) = completions.get(selected) {
                    input = line.clone();
                    selected = 0;
                }
                state.mode = Mode::Palette {
                    input,
                    selected,
                    error: None,
                    completions,
                };
            }
            InputKey::Up => {
                state.mode = Mode::Palette {
                    input,
                    selected: selected.saturating_sub(1),
                    error,
                    completions,
                }
            }
            InputKey::Down => {
                state.mode = Mode::Palette {
                    input,
                    selected: (selected + 1).min(completions.len().saturating_sub(1)),
                    error,
                    completions,
                };
            }
            other => {
                let changed = edit_text(&mut input, other);
                state.mode = Mode::Palette {
                    input,
                    selected: if changed { 0 } else { selected },
                    error: if changed { None } else { error },
                    completions,
                };
            }
        },
        other => state.mode = other,
    }
    Vec::new()
}

fn run_palette(state: &mut State, command: PaletteCommand) -> Vec<Effect> {
    let parse_into = |state: &mut State, pane: Pane, text: &str| match Filter::parse(text) {
        Ok(filter) => {
            state.view_mut(pane).filter = filter;
            state.view_mut(pane).cursor = 0;
            state.focus = pane;
            true
        }
        Err(error) => {
            state.notice = Some(error);
            false
        }
    };
    match command {
        PaletteCommand::Cluster(text) => {
            parse_into(state, Pane::Clusters, &text);
        }
        PaletteCommand::Resource(text) => {
            parse_into(state, Pane::Resources, &text);
        }
        PaletteCommand::Kind(kind) => {
            state.kind_filter = Some(kind);
            state.resource_view.cursor = 0;
            state.focus = Pane::Resources;
        }
        PaletteCommand::Status(kind) => state.status_filter = kind,
        PaletteCommand::Health(kind) => state.health_filter = kind,
        PaletteCommand::Group(label) => {
            state.collapsed = state.collapsed && label.is_some();
            state.group_by = label;
        }
        PaletteCommand::Sort(key) => state.view_mut(state.focus).sort = key,
        PaletteCommand::Clear => {
            state.cluster_view.filter = Filter::default();
            state.resource_view.filter = Filter::default();
            state.kind_filter = None;
            state.status_filter = None;
            state.health_filter = None;
            state.pods.clear_filter();
        }
        PaletteCommand::Help => state.help_open = true,
        PaletteCommand::Quit => state.should_quit = true,
        PaletteCommand::Drift => drift::open(state),
        PaletteCommand::Pods(None) => state.pods.clear_filter(),
        PaletteCommand::Pods(Some(filter)) => {
            let effects = ask_pods(state, filter);
            state.refresh_views();
            return effects;
        }
    }
    state.refresh_views();
    Vec::new()
}

/// Most cells one `:pods` query asks about; a larger fleet is asked about its first rows.
const MOST_PODS_CELLS: usize = 100_000;

/// Starts a pods query over every placed workload cell, narrowing the rows to `filter`.
fn ask_pods(state: &mut State, filter: PodsFilter) -> Vec<Effect> {
    let clusters = state.clusters.len();
    let cells: Vec<CellRef> = state
        .resources
        .iter()
        .enumerate()
        .filter(|(_, row)| WORKLOADS.contains(&row.target.kind.as_str()))
        .flat_map(|(resource, _)| (0..clusters).map(move |cluster| (resource, cluster)))
        .filter(|&(resource, cluster)| {
            !matches!(
                state.cells.kind(resource, cluster),
                StatusKind::NotPlaced | StatusKind::Unreachable
            )
        })
        .take(MOST_PODS_CELLS)
        .map(|(resource, cluster)| CellRef {
            resource: resource as u32,
            cluster: cluster as u32,
        })
        .collect();
    state.pods.start(Some(filter), cells.len());
    state.notice = Some(if cells.is_empty() {
        "pods: no workload is placed on a reachable cluster".to_string()
    } else {
        format!(
            "reading the pods of {} workload cell(s) ({}; :pods none clears)",
            cells.len(),
            filter.label()
        )
    });
    if cells.is_empty() {
        return Vec::new();
    }
    vec![Effect::ReadPods { cells }]
}

fn apply_backend_event(state: &mut State, event: BackendEvent) {
    match event {
        BackendEvent::LiveObject { cell, live } => object_view::receive(state, cell, *live),
        BackendEvent::Logs {
            stream,
            items,
            skipped,
        } => super::logs::receive(state, stream, items, skipped),
        BackendEvent::Pods(answers) => {
            state.pods.receive(answers);
            if state.pods.filter.is_some() {
                state.notice = Some(state.pods.progress());
                state.refresh_views();
            }
        }
        BackendEvent::FleetLoaded {
            fleet,
            files,
            audit,
        } => {
            state.files = files;
            state.take_fleet(fleet.0);
            drift::remember_reverts(state, &audit);
            state.loading = None;
        }
        BackendEvent::HubLoaded { fleet, files, hub } => {
            state.files = files;
            state.take_fleet(fleet.0);
            state.take_hub(*hub);
            state.loading = None;
        }
        BackendEvent::StartFailed { error, input } => {
            state.start_failed = Some((error, input));
            state.should_quit = true;
        }
        BackendEvent::Snapshot { kinds, details } => {
            let details = details
                .into_iter()
                .map(|update| {
                    (
                        update.cell,
                        CellDetail {
                            status: update.status,
                            message: update.message,
                        },
                    )
                })
                .collect();
            if state.cells.replace(kinds, details) {
                state.refresh_views();
                drift::forget_settled(state);
            } else {
                tracing::warn!("ignored a snapshot whose size does not match the fleet");
            }
        }
        BackendEvent::Cluster { cluster, status } => {
            if let Some(row) = state.clusters.get_mut(cluster as usize) {
                let was = is_unreachable(row.status.health);
                let now = is_unreachable(status.health);
                state.unreachable_clusters = (state.unreachable_clusters + usize::from(now))
                    .saturating_sub(usize::from(was));
                if row.status.health != status.health || row.last_seen_ms.is_none() {
                    state
                        .cluster_health_since
                        .insert(cluster as usize, state.now_ms);
                }
                row.status = status;
                row.last_seen_ms = Some(state.now_ms);
                state.cluster_status_changed(cluster as usize);
            }
        }
        BackendEvent::Heartbeat { clusters } => {
            for cluster in clusters {
                if let Some(row) = state.clusters.get_mut(cluster as usize) {
                    row.last_seen_ms = Some(state.now_ms);
                }
            }
        }
        BackendEvent::DryRun { revision, items } => {
            review::dry_run_answered(state, revision, items);
        }
        BackendEvent::Cells(updates) => {
            let changed: Vec<CellRef> = updates.iter().map(|update| update.cell).collect();
            for update in updates {
                if let Some(row) = state.clusters.get_mut(update.cell.cluster as usize) {
                    row.last_seen_ms = Some(state.now_ms);
                }
                state.cells.set(update.cell, update.status, update.message);
            }
            state.cells_changed(&changed);
            drift::forget_settled(state);
        }
        BackendEvent::Notice(text) => state.notice = Some(text),
        BackendEvent::Placements(world) => ocm_placement::world_changed(state, world),
        BackendEvent::ResourcesAdded(added) => state.add_resources(
            added
                .into_iter()
                .map(|added| ResourceRow {
                    target: added.target,
                    dialect: added.dialect,
                    placement: added.source,
                    labels: None,
                })
                .collect(),
        ),
        BackendEvent::Drift { cell, fields } => drift::record(state, cell, fields),
        BackendEvent::Health(updates) => {
            let changed: Vec<CellRef> = updates.iter().map(|update| update.cell).collect();
            for update in updates {
                state.cells.set_health(update.cell, update.health);
            }
            state.cells_changed(&changed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::state::object_view::ObjectTab;
    use crate::app::state::{ClusterRow, ResourceRow};
    use crate::messages::{CellRef, CellUpdate};
    use crate::model::{
        CellStatus, ClusterSpec, ClusterStatus, Dialect, Health, ResourceRef, StatusKind,
    };

    fn state(clusters: usize, resources: usize) -> State {
        let regions = ["eu-west", "us-east", "ap-south"];
        let clusters = (0..clusters)
            .map(|index| ClusterRow {
                spec: ClusterSpec {
                    name: format!("c{index}"),
                    region: Some(regions[index % 3].to_string()),
                    labels: [("region".to_string(), regions[index % 3].to_string())].into(),
                    ..ClusterSpec::default()
                },
                status: ClusterStatus::default(),
                last_seen_ms: None,
            })
            .collect();
        let resources = (0..resources)
            .map(|index| ResourceRow {
                target: ResourceRef {
                    api_version: "v1".into(),
                    kind: if index % 2 == 0 {
                        "ConfigMap"
                    } else {
                        "Deployment"
                    }
                    .into(),
                    namespace: Some("ns".into()),
                    name: format!("r{index}"),
                },
                dialect: Dialect::Karmada,
                placement: "all".into(),
                labels: None,
            })
            .collect();
        State::new("test".into(), clusters, resources)
    }

    fn command(state: &mut State, command: KeyCommand) {
        update(state, Action::Command(command));
    }

    /// A command of the object view's section, as the console hands it on.
    fn in_object(state: &mut State, command: ViewCommand) -> Vec<Effect> {
        update(state, Action::View(Section::Object, command))
    }

    fn type_text(state: &mut State, text: &str) {
        for c in text.chars() {
            update(state, Action::Input(InputKey::Char(c)));
        }
    }

    #[test]
    fn cursors_move_within_their_pane_and_clamp() {
        let mut state = state(3, 5);
        command(&mut state, KeyCommand::Down);
        command(&mut state, KeyCommand::Down);
        command(&mut state, KeyCommand::Down);
        assert_eq!(
            state.selected_cluster(),
            Some(2),
            "clamped to the last cluster"
        );
        command(&mut state, KeyCommand::FocusNext);
        command(&mut state, KeyCommand::Bottom);
        assert_eq!(state.selected_resource(), Some(4));
        assert_eq!(
            state.selected_cluster(),
            Some(2),
            "the other pane keeps its cursor"
        );
        command(&mut state, KeyCommand::Top);
        assert_eq!(state.selected_resource(), Some(0));
        command(&mut state, KeyCommand::Up);
        assert_eq!(state.selected_resource(), Some(0));
        command(&mut state, KeyCommand::Right);
        assert_eq!(
            state.selected_cluster(),
            Some(2),
            "right stops at the last column"
        );
        command(&mut state, KeyCommand::Left);
        assert_eq!(state.selected_cluster(), Some(1));
    }

    #[test]
    fn help_opens_and_closes_and_quit_quits() {
        let mut state = state(3, 1);
        command(&mut state, KeyCommand::Help);
        assert!(state.help_open);
        command(&mut state, KeyCommand::Down);
        assert_eq!(
            state.cluster_view.cursor, 0,
            "other keys do nothing under help"
        );
        command(&mut state, KeyCommand::Back);
        assert!(!state.help_open);
        assert_eq!(state.mode, Mode::Normal);
        command(&mut state, KeyCommand::Quit);
        assert!(state.should_quit);
    }

    #[test]
    fn help_opens_over_a_cells_object_and_closes_back_to_it_as_it_was() {
        let mut state = state(3, 2);
        command(&mut state, KeyCommand::FocusNext);
        update(&mut state, Action::Command(KeyCommand::Select));
        in_object(&mut state, ViewCommand::NextView);
        in_object(&mut state, ViewCommand::Down);
        let object = state.mode.clone();
        let followed = state.live.followed.clone();
        assert!(
            matches!(object, Mode::Object { scroll: 1, .. }),
            "{object:?}"
        );
        let opened = update(&mut state, Action::Command(KeyCommand::Help));
        assert!(state.help_open);
        assert!(
            opened.is_empty(),
            "the object stays followed under help: {opened:?}"
        );
        for key in [KeyCommand::Down, KeyCommand::Right, KeyCommand::FocusNext] {
            assert!(update(&mut state, Action::Command(key)).is_empty());
        }
        assert_eq!(state.mode, object, "keys under help leave the view alone");
        assert_eq!(state.selected_cluster(), Some(0));
        update(&mut state, Action::Command(KeyCommand::Help));
        assert!(!state.help_open, "? closes it too");
        assert_eq!(state.mode, object);
        assert_eq!(state.live.followed, followed);
        command(&mut state, KeyCommand::Help);
        command(&mut state, KeyCommand::Back);
        assert_eq!(state.mode, object, "esc closes the help, not the view");
        in_object(&mut state, ViewCommand::Back);
        assert_eq!(state.mode, Mode::Normal);
    }

    #[test]
    fn filtering_narrows_the_focused_pane_as_you_type() {
        let mut state = state(12, 4);
        command(&mut state, KeyCommand::Filter);
        assert!(state.is_typing());
        type_text(&mut state, "c1");
        // c1, c10, c11 match "c1".
        assert_eq!(state.cluster_view.visible, vec![1, 10, 11]);
        update(&mut state, Action::Input(InputKey::Enter));
        assert_eq!(state.mode, Mode::Normal);
        assert_eq!(
            state.resource_view.visible.len(),
            4,
            "the other pane is untouched"
        );
        command(&mut state, KeyCommand::Back);
        assert_eq!(
            state.cluster_view.visible.len(),
            12,
            "esc clears the filter"
        );
    }

    #[test]
    fn label_filters_and_negation_work_on_clusters() {
        let mut state = state(9, 1);
        command(&mut state, KeyCommand::Filter);
        type_text(&mut state, "-l region=eu-west !c6");
        update(&mut state, Action::Input(InputKey::Enter));
        assert_eq!(state.cluster_view.visible, vec![0, 3]);
    }

    #[test]
    fn a_bad_filter_shows_an_error_and_keeps_the_text() {
        let mut state = state(3, 1);
        command(&mut state, KeyCommand::Filter);
        type_text(&mut state, "-l");
        update(&mut state, Action::Input(InputKey::Enter));
        match &state.mode {
            Mode::Filter { input, error, .. } => {
                assert_eq!(input, "-l");
                assert!(error.as_deref().is_some_and(|e| e.contains("-l needs")));
            }
            other => panic!("expected the filter to stay open, got {other:?}"),
        }
        update(&mut state, Action::Input(InputKey::Esc));
        assert_eq!(state.mode, Mode::Normal);
    }

    #[test]
    fn the_health_filter_keeps_rows_with_a_cell_of_that_health_and_follows_it() {
        let mut state = state(6, 4);
        let degraded = |resource, cluster| {
            Action::Backend(BackendEvent::Health(vec![crate::messages::HealthUpdate {
                cell: CellRef { resource, cluster },
                health: Some(crate::model::CellHealth {
                    kind: crate::model::HealthKind::Degraded,
                    reason: "0/3 available".into(),
                    since: None,
                    rule: None,
                }),
            }]))
        };
        update(&mut state, degraded(2, 5));
        command(&mut state, KeyCommand::Palette);
        type_text(&mut state, "health degraded");
        update(&mut state, Action::Input(InputKey::Enter));
        assert_eq!(state.resource_view.visible, vec![2]);
        assert_eq!(state.cluster_view.visible, vec![5]);
        update(&mut state, degraded(0, 1));
        assert_eq!(
            state.resource_view.visible,
            vec![0, 2],
            "it follows new reports"
        );
        command(&mut state, KeyCommand::Back);
        assert_eq!(state.resource_view.visible.len(), 4, "esc clears it");
    }

    #[test]
    fn the_palette_filters_kinds_statuses_and_groups() {
        let mut state = state(6, 4);
        command(&mut state, KeyCommand::Palette);
        type_text(&mut state, "kind deploy");
        update(&mut state, Action::Input(InputKey::Enter));
        assert_eq!(state.resource_view.visible, vec![1, 3]);
        assert_eq!(state.focus, Pane::Resources);

        update(
            &mut state,
            Action::Backend(BackendEvent::Cells(vec![CellUpdate {
                cell: CellRef {
                    resource: 3,
                    cluster: 4,
                },
                status: CellStatus::Drifted,
                message: None,
            }])),
        );
        command(&mut state, KeyCommand::Palette);
        type_text(&mut state, "status drifted");
        update(&mut state, Action::Input(InputKey::Enter));
        assert_eq!(state.resource_view.visible, vec![3]);
        assert_eq!(state.cluster_view.visible, vec![4]);

        command(&mut state, KeyCommand::Palette);
        type_text(&mut state, "clear");
        update(&mut state, Action::Input(InputKey::Enter));
        command(&mut state, KeyCommand::Palette);
        type_text(&mut state, "group region");
        update(&mut state, Action::Input(InputKey::Enter));
        let names: Vec<&str> = state.groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, vec!["ap-south", "eu-west", "us-east"]);
        assert_eq!(state.groups[0].members, 0..2);
    }

    #[test]
    fn palette_completion_fills_the_line() {
        let mut state = state(3, 1);
        command(&mut state, KeyCommand::Palette);
        type_text(&mut state, "clu");
        update(&mut state, Action::Input(InputKey::Tab));
        match &state.mode {
            Mode::Palette { input, .. } => assert_eq!(input, "cluster "),
            other => panic!("{other:?}"),
        }
        type_text(&mut state, "c2");
        update(&mut state, Action::Input(InputKey::Enter));
        assert_eq!(state.cluster_view.visible, vec![2]);
    }

    #[test]
    fn the_palettes_completions_follow_the_text_and_the_cells_while_it_is_open() {
        let mut state = state(3, 2);
        command(&mut state, KeyCommand::Palette);
        type_text(&mut state, "status drif");
        let drifted = |state: &State| match &state.mode {
            Mode::Palette { completions, .. } => completions
                .iter()
                .find(|(line, _)| line == "status Drifted")
                .map(|(_, description)| description.clone()),
            other => panic!("{other:?}"),
        };
        assert_eq!(drifted(&state).as_deref(), Some("0 cells"));
        update(
            &mut state,
            Action::Backend(BackendEvent::Cells(vec![CellUpdate {
                cell: CellRef {
                    resource: 1,
                    cluster: 2,
                },
                status: CellStatus::Drifted,
                message: None,
            }])),
        );
        assert_eq!(drifted(&state).as_deref(), Some("1 cells"));
        match &state.mode {
            Mode::Palette {
                input, completions, ..
            } => assert_eq!(completions, &palette::complete(&state, input)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unknown_palette_command_is_an_inline_error() {
        let mut state = state(3, 1);
        command(&mut state, KeyCommand::Palette);
        type_text(&mut state, "zzzz");
        update(&mut state, Action::Input(InputKey::Enter));
        assert!(matches!(&state.mode, Mode::Palette { error: Some(_), .. }));
    }

    #[test]
    fn sorting_cycles_and_keeps_the_selected_row() {
        let mut state = state(3, 1);
        command(&mut state, KeyCommand::Down);
        update(
            &mut state,
            Action::Backend(BackendEvent::Cells(vec![CellUpdate {
                cell: CellRef {
                    resource: 0,
                    cluster: 2,
                },
                status: CellStatus::Failed("boom".into()),
                message: None,
            }])),
        );
        command(&mut state, KeyCommand::Sort); // name
        command(&mut state, KeyCommand::Sort); // worst
        assert_eq!(state.cluster_view.sort, SortKey::Worst);
        assert_eq!(
            state.cluster_view.visible[0], 2,
            "the failing cluster sorts first"
        );
        assert_eq!(
            state.selected_cluster(),
            Some(1),
            "the cursor follows its row"
        );
    }

    fn fail_cell(state: &mut State, resource: u32, cluster: u32, status: CellStatus) {
        update(
            state,
            Action::Backend(BackendEvent::Cells(vec![CellUpdate {
                cell: CellRef { resource, cluster },
                status,
                message: None,
            }])),
        );
    }

    #[test]
    fn rows_a_hub_gains_are_appended_and_existing_cells_keep_their_place() {
        let mut state = state(3, 2);
        fail_cell(&mut state, 1, 2, CellStatus::Drifted);
        update(
            &mut state,
            Action::Backend(BackendEvent::ResourcesAdded(vec![
                crate::messages::AddedResource {
                    target: ResourceRef {
                        api_version: "apps/v1".into(),
                        kind: "Deployment".into(),
                        namespace: Some("shop".into()),
                        name: "api".into(),
                    },
                    dialect: Dialect::Karmada,
                    source: "ResourceBinding shop/api-deployment".into(),
                },
            ])),
        );
        assert_eq!(state.resources.len(), 3);
        assert_eq!(
            state.resource_view.visible.len(),
            3,
            "the new row is visible"
        );
        assert_eq!(
            state.cells.kind(1, 2),
            StatusKind::Drifted,
            "old cells stay put"
        );
        assert_eq!(state.cells.kind(2, 0), StatusKind::Pending);
        assert_eq!(
            state.resources[2].placement,
            "ResourceBinding shop/api-deployment"
        );
        fail_cell(&mut state, 2, 1, CellStatus::Failed("quota".into()));
        assert_eq!(state.cells.resource_counts(2).get(StatusKind::Failed), 1);
        assert_eq!(state.cells.cluster_counts(1).get(StatusKind::Failed), 1);
        assert_eq!(state.cells.cluster_counts(0).get(StatusKind::Pending), 3);
    }

    #[test]
    fn enter_drills_into_a_cell_and_esc_comes_back() {
        let mut state = state(3, 2);
        command(&mut state, KeyCommand::Down);
        command(&mut state, KeyCommand::Select);
        assert_eq!(
            state.focus,
            Pane::Resources,
            "enter on a cluster goes to its column"
        );
        command(&mut state, KeyCommand::Select);
        let at = |scroll, tab| Mode::Object {
            scroll,
            tab,
            group: 0,
        };
        assert_eq!(state.mode, at(0, ObjectTab::Desired));
        in_object(&mut state, ViewCommand::Down);
        in_object(&mut state, ViewCommand::NextCluster);
        assert_eq!(state.mode, at(1, ObjectTab::Desired));
        assert_eq!(
            state.selected_cluster(),
            Some(2),
            "right shows the next cluster's object"
        );
        in_object(&mut state, ViewCommand::PageDown);
        assert_eq!(state.mode, at(1 + state.page_rows, ObjectTab::Desired));
        in_object(&mut state, ViewCommand::PrevView);
        assert_eq!(
            state.mode,
            at(0, ObjectTab::Clusters),
            "shift-tab: the view before"
        );
        command(&mut state, KeyCommand::Quit);
        assert!(state.should_quit, "quit still quits");
        in_object(&mut state, ViewCommand::Back);
        assert_eq!(state.mode, Mode::Normal);
    }

    #[test]
    fn a_read_only_console_asks_its_backend_only_to_read_when_a_cell_opens() {
        let mut state = state(3, 2);
        state.readonly = true;
        update(&mut state, Action::Command(KeyCommand::FocusNext));
        let opened = update(&mut state, Action::Command(KeyCommand::Select));
        assert!(matches!(state.mode, Mode::Object { .. }));
        assert!(!opened.is_empty(), "the object view reads its cell");
        assert!(opened.iter().all(Effect::only_reads), "{opened:?}");
    }

    #[test]
    fn the_object_view_follows_its_cell_while_open_and_stops_when_it_closes() {
        let mut state = state(3, 2);
        update(&mut state, Action::Command(KeyCommand::FocusNext));
        let opened = update(&mut state, Action::Command(KeyCommand::Select));
        let cell = CellRef {
            resource: 0,
            cluster: 0,
        };
        assert_eq!(opened, vec![Effect::OpenObjectView { cells: vec![cell] }]);
        let tabbed = in_object(&mut state, ViewCommand::NextView);
        assert!(
            tabbed.is_empty(),
            "the same cell stays followed: {tabbed:?}"
        );
        assert!(matches!(
            state.mode,
            Mode::Object {
                tab: ObjectTab::Live,
                ..
            }
        ));
        let moved = in_object(&mut state, ViewCommand::NextCluster);
        let next = CellRef {
            resource: 0,
            cluster: 1,
        };
        assert_eq!(moved, vec![Effect::OpenObjectView { cells: vec![next] }]);
        // A read for a cell no longer followed is dropped; the followed one is kept.
        let read = |cell| {
            Action::Backend(BackendEvent::LiveObject {
                cell,
                live: Box::default(),
            })
        };
        update(&mut state, read(cell));
        update(&mut state, read(next));
        assert!(state.live.reads.contains_key(&next));
        assert!(!state.live.reads.contains_key(&cell));
        let closed = in_object(&mut state, ViewCommand::Back);
        assert_eq!(closed, vec![Effect::CloseObjectView]);
        assert!(state.live.reads.is_empty());
    }

    #[test]
    fn propagation_asks_first_and_cancelling_writes_nothing() {
        let mut state = state(3, 2);
        for cluster in 0..3 {
            fail_cell(&mut state, 0, cluster, CellStatus::InSync);
        }
        fail_cell(&mut state, 0, 2, CellStatus::Drifted);
        command(&mut state, KeyCommand::FocusNext);
        let effects = update(&mut state, Action::Command(KeyCommand::Apply));
        assert!(effects.is_empty(), "nothing is written before confirmation");
        assert!(matches!(&state.mode, Mode::Confirm(p) if p.cells.len() == 1));
        let effects = update(&mut state, Action::Input(InputKey::Esc));
        assert!(effects.is_empty());
        assert_eq!(state.mode, Mode::Normal);

        update(&mut state, Action::Command(KeyCommand::Apply));
        let effects = update(&mut state, Action::Input(InputKey::Char('y')));
        assert_eq!(
            effects,
            vec![Effect::Apply {
                cells: vec![CellRef {
                    resource: 0,
                    cluster: 2
                }]
            }]
        );
    }

    #[test]
    fn danger_class_clusters_need_their_name_typed() {
        let mut state = state(2, 1);
        state.danger_patterns = vec!["c1".into()];
        fail_cell(&mut state, 0, 1, CellStatus::Drifted);
        command(&mut state, KeyCommand::FocusNext);
        update(&mut state, Action::Command(KeyCommand::Apply));
        assert!(
            update(&mut state, Action::Input(InputKey::Char('y'))).is_empty(),
            "y is not enough"
        );
        update(&mut state, Action::Input(InputKey::Backspace));
        type_text(&mut state, "c1");
        let effects = update(&mut state, Action::Input(InputKey::Enter));
        assert_eq!(effects.len(), 1);
    }

    #[test]
    fn read_only_refuses_to_propagate() {
        let mut state = state(2, 1);
        state.readonly = true;
        fail_cell(&mut state, 0, 1, CellStatus::Drifted);
        command(&mut state, KeyCommand::FocusNext);
        assert!(update(&mut state, Action::Command(KeyCommand::Apply)).is_empty());
        assert_eq!(state.mode, Mode::Normal);
        assert!(
            state
                .notice
                .as_deref()
                .is_some_and(|n| n.contains("read-only"))
        );
    }

    #[test]
    fn the_wall_obeys_only_quit_and_paging() {
        let mut state = state(4, 4);
        state.wall = Some(crate::app::state::Wall {
            page_every_ms: 10_000,
            stale_after_ms: 60_000,
            ..Default::default()
        });
        for command in [
            KeyCommand::Filter,
            KeyCommand::Palette,
            KeyCommand::Sort,
            KeyCommand::Help,
            KeyCommand::Collapse,
        ] {
            command_is_inert(&mut state, command);
        }
        command_is_inert(&mut state, KeyCommand::PageDown);
        update(
            &mut state,
            Action::View(Section::Wall, ViewCommand::PageDown),
        );
        assert_eq!(state.wall.as_ref().map(|w| w.page), Some(1));
        for _ in 0..2 {
            update(&mut state, Action::View(Section::Wall, ViewCommand::PageUp));
        }
        assert_eq!(
            state.wall.as_ref().map(|w| w.page),
            Some(-1),
            "paging wraps in the view"
        );
        update(
            &mut state,
            Action::Tick {
                now_ms: 10_000,
                unix_ms: None,
            },
        );
        assert_eq!(
            state.wall.as_ref().map(|w| w.page),
            Some(0),
            "pages turn by themselves"
        );
        command(&mut state, KeyCommand::Quit);
        assert!(state.should_quit);
    }

    fn command_is_inert(state: &mut State, which: KeyCommand) {
        let before = (
            state.mode.clone(),
            state.cluster_view.visible.clone(),
            state.collapsed,
        );
        let effects = update(state, Action::Command(which));
        assert!(effects.is_empty());
        assert_eq!(
            (
                state.mode.clone(),
                state.cluster_view.visible.clone(),
                state.collapsed
            ),
            before,
            "{which:?} changed the wall"
        );
    }

    #[test]
    fn silent_clusters_become_stale_and_heartbeats_refresh_them() {
        let mut state = state(2, 1);
        state.wall = Some(crate::app::state::Wall {
            stale_after_ms: 60_000,
            ..Default::default()
        });
        update(
            &mut state,
            Action::Backend(BackendEvent::Heartbeat {
                clusters: vec![0, 1],
            }),
        );
        update(
            &mut state,
            Action::Tick {
                now_ms: 50_000,
                unix_ms: None,
            },
        );
        update(
            &mut state,
            Action::Backend(BackendEvent::Heartbeat { clusters: vec![1] }),
        );
        update(
            &mut state,
            Action::Tick {
                now_ms: 70_000,
                unix_ms: None,
            },
        );
        assert!(state.is_stale(0), "no event for 70 s");
        assert!(!state.is_stale(1), "heard from 20 s ago");
    }

    #[test]
    fn problems_remember_when_they_started() {
        let mut state = state(2, 2);
        update(
            &mut state,
            Action::Tick {
                now_ms: 1_000,
                unix_ms: None,
            },
        );
        let drift = |state: &mut State, cluster| {
            update(
                state,
                Action::Backend(BackendEvent::Cells(vec![CellUpdate {
                    cell: CellRef {
                        resource: 0,
                        cluster,
                    },
                    status: CellStatus::Drifted,
                    message: None,
                }])),
            );
        };
        drift(&mut state, 0);
        update(
            &mut state,
            Action::Tick {
                now_ms: 5_000,
                unix_ms: None,
            },
        );
        drift(&mut state, 0);
        drift(&mut state, 1);
        let problems = state.cells.worst_problems(10);
        let since: Vec<(u32, u64)> = problems
            .iter()
            .map(|(cell, _, since)| (cell.cluster, *since))
            .collect();
        // Pending cells from the start are problems-free; drifted ones keep their first time.
        assert!(since.contains(&(0, 1_000)), "{since:?}");
        assert!(since.contains(&(1, 5_000)), "{since:?}");
    }

    #[test]
    fn backend_events_update_clusters_and_cells() {
        let mut state = state(2, 2);
        update(
            &mut state,
            Action::Backend(BackendEvent::Cluster {
                cluster: 1,
                status: ClusterStatus {
                    health: Health::Unreachable,
                    version: None,
                    latency_ms: None,
                    message: "timeout".into(),
                },
            }),
        );
        assert_eq!(state.clusters[1].status.health, Health::Unreachable);
        update(
            &mut state,
            Action::Backend(BackendEvent::Cells(vec![CellUpdate {
                cell: CellRef {
                    resource: 0,
                    cluster: 1,
                },
                status: CellStatus::Drifted,
                message: Some("/spec/replicas".into()),
            }])),
        );
        assert_eq!(state.cells.kind(0, 1), StatusKind::Drifted);
        assert_eq!(state.cells.message(0, 1), Some("/spec/replicas"));
        // Unknown clusters from a confused backend are ignored, not a panic.
        update(
            &mut state,
            Action::Backend(BackendEvent::Cluster {
                cluster: 99,
                status: ClusterStatus::default(),
            }),
        );
    }
}
