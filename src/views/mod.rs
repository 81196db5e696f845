//! Pure drawing: the console screen as a function of `&State`, the theme and the key map. This
//! file lays the screen out and draws the header and footer; each pane, editor and overlay has
//! its own file, and what they share is in `widgets`. Views must not change state, talk to
//! backends or see Kubernetes client types, nor import from `app` anything but `app::state`:
//! what they draw is in the state, or read from it there.

mod clusters;
mod detail;
mod digits;
mod drift;
mod help;
mod input;
mod logs;
mod object_view;
mod ocm_placement;
mod override_editor;
mod placement_editor;
mod resources;
pub mod wall;
mod widgets;

pub use widgets::{READABLE, ViewContext, contrast_ratio};

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::state::{Mode, State};
use crate::config::keymap::KeyCommand;
use crate::model::{HealthKind, StatusKind};

/// Draws the whole console (or the wall display, when the state is one). Under `--ascii` the
/// finished frame is made pure ASCII here, once for every view.
pub fn render(frame: &mut Frame, state: &State, context: &ViewContext) {
    if state.wall.is_some() {
        wall::render(frame, state, context);
    } else {
        render_console(frame, state, context);
    }
    if wall::ascii(context, state) {
        let area = frame.area();
        widgets::to_ascii(frame.buffer_mut(), area);
    }
}

fn render_console(frame: &mut Frame, state: &State, context: &ViewContext) {
    let area = frame.area();
    if area.width < 20 || area.height < 6 {
        let text = Paragraph::new("flotilla: terminal too small").style(context.theme.muted);
        frame.render_widget(text, area);
        return;
    }
    let [header, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    frame.render_widget(header_line(state, context, header.width), header);
    if matches!(
        state.mode,
        Mode::Filter { .. } | Mode::Palette { .. } | Mode::Exec(_)
    ) {
        input::render_line(frame, footer, state, context);
    } else {
        frame.render_widget(footer_line(state, context), footer);
    }

    let longest_name = state
        .clusters
        .iter()
        .map(|row| row.spec.name.chars().count())
        .max()
        .unwrap_or(4);
    let wanted = (clusters::FIXED_COLUMNS + longest_name.clamp(8, 32) + 2) as u16;
    // The clusters pane gives up its optional columns before the matrix hides clusters.
    let widest = wanted.min(body.width / 2).max(24.min(body.width));
    let narrowest = widest.min(34);
    let clusters_width = (narrowest..=widest)
        .rev()
        .find(|width| resources::shows_every_column(state, body.width - width))
        .unwrap_or(narrowest);
    let [left, right] =
        Layout::horizontal([Constraint::Length(clusters_width), Constraint::Min(10)]).areas(body);
    // The Detail pane on screens tall enough for one; on taller ones it takes the rows the
    // matrix leaves empty. Shorter screens show it over the panes (`detail_open`).
    let least = if right.height >= 40 {
        16
    } else if right.height >= 24 {
        10
    } else {
        0
    };
    let matrix_rows = (state.resource_view.visible.len() as u16).saturating_add(4);
    let detail_height = if least == 0 {
        0
    } else {
        right.height.saturating_sub(matrix_rows).max(least)
    };
    let [resources_area, detail_area] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(detail_height)]).areas(right);
    if let Mode::Logs(pane) = &state.mode {
        // Log lines read best at full width; each names its cluster.
        logs::render(frame, body, pane, context);
    } else if let Some((tab, scroll, group)) = state.object_view_place() {
        // A cell's object reads best at full width; its title names the cluster.
        object_view::render(frame, body, state, context, (tab, scroll, group));
    } else if let Mode::Drift(view) = &state.mode {
        // Each drift row names its cluster, and its columns widen with the terminal.
        drift::render(frame, body, state, view, context);
    } else {
        clusters::render(frame, left, state, context);
    }
    if matches!(
        state.mode,
        Mode::Object { .. } | Mode::Drift(_) | Mode::Logs(_)
    ) {
        // Drawn above.
    } else if let Mode::Placement(placement) = &state.mode {
        placement_editor::render(frame, right, state, placement, context);
    } else if let Mode::OcmPlacement(editor) = &state.mode {
        ocm_placement::render(frame, right, state, editor, context);
    } else if let Mode::Overrides(editor) = &state.mode {
        override_editor::render(frame, right, state, editor, context);
    } else {
        resources::render(frame, resources_area, state, context);
        if detail_height > 0 {
            detail::render(frame, detail_area, state, context);
        }
    }
    if state.detail_open && matches!(state.mode, Mode::Normal) {
        frame.render_widget(ratatui::widgets::Clear, body);
        detail::render(frame, body, state, context);
    }
    if state.help_open {
        help::render(frame, area, state, context);
    }
    if matches!(state.mode, Mode::Palette { .. }) {
        input::render_completions(frame, body, state, context);
    }
    if matches!(state.mode, Mode::Confirm(_)) {
        input::render_confirm(frame, area, state, context);
    }
    if let Mode::Drift(view) = &state.mode {
        drift::render_confirm(frame, area, view, context);
    }
}

/// The header: the source, clusters Ready, cells by sync status and by health (Degraded and
/// Progressing), the filters in force, and the read-only, paused and danger cues. When it does
/// not fit, it abbreviates rather than cuts: the counts' words shorten, then go, keeping their
/// glyphs; then the labels shorten. Every count stays.
fn header_line<'a>(state: &'a State, context: &ViewContext, width: u16) -> Paragraph<'a> {
    let levels = [
        (Words::Full, false),
        (Words::Short, false),
        (Words::None, false),
        (Words::None, true),
    ];
    let mut line = Line::default();
    for (words, compact) in levels {
        line = header_spans(state, context, words, compact);
        if line.width() <= usize::from(width) {
            break;
        }
    }
    Paragraph::new(line).style(context.theme.header)
}

/// How the header's counts are worded.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Words {
    /// `✓68 InSync`.
    Full,
    /// `✓68 InSy`, `▼3 Degr`.
    Short,
    /// `✓68`.
    None,
}

fn header_spans<'a>(
    state: &'a State,
    context: &ViewContext,
    words: Words,
    compact: bool,
) -> Line<'a> {
    let theme = context.theme;
    let word = |text: &str| match words {
        Words::Full => format!(" {text}"),
        Words::Short => format!(" {}", text.chars().take(4).collect::<String>()),
        Words::None => String::new(),
    };
    let source = if compact {
        widgets::fit_middle(&state.source, 16)
    } else {
        state.source.clone()
    };
    let mut spans = vec![
        Span::styled(" flotilla ", theme.title),
        Span::styled(format!("│ {source} "), theme.header),
    ];
    if let Some(loading) = &state.loading {
        spans.push(Span::styled(format!("│ {loading} "), theme.header));
    }
    let (ready, cells, health) = if compact {
        ("", "│ ", "│ ")
    } else {
        (" Ready", "│ cells ", "│ health ")
    };
    let clusters = if compact { "Ready" } else { "clusters" };
    spans.extend([
        Span::styled(
            format!(
                "│ {clusters} {}/{}{ready} ",
                state.ready_clusters(),
                state.clusters.len()
            ),
            theme.header,
        ),
        Span::styled(cells, theme.header),
    ]);
    let totals = state.cells.totals();
    for kind in StatusKind::ALL {
        let count = totals.get(kind);
        if count == 0 || kind == StatusKind::NotPlaced {
            continue;
        }
        spans.push(Span::styled(
            format!(
                "{}{}{} ",
                kind.symbol(context.ascii),
                count,
                word(kind.as_str())
            ),
            theme.status_style(kind),
        ));
    }
    let unwell: Vec<(HealthKind, u32)> = [HealthKind::Degraded, HealthKind::Progressing]
        .into_iter()
        .map(|kind| (kind, state.cells.health_count(kind)))
        .filter(|(_, count)| *count > 0)
        .collect();
    if !unwell.is_empty() {
        spans.push(Span::styled(health, theme.header));
        for (kind, count) in unwell {
            let style = theme.status_style(kind.severity());
            let symbol = kind.symbol(context.ascii).unwrap_or(' ');
            spans.push(Span::styled(
                format!("{symbol}{count}{} ", word(kind.as_str())),
                style,
            ));
        }
    }
    let mut filters = Vec::new();
    for (name, view) in [
        ("clusters", &state.cluster_view),
        ("resources", &state.resource_view),
    ] {
        if !view.filter.is_empty() {
            filters.push(format!("{name}: {}", view.filter.text()));
        }
    }
    if let Some(kind) = &state.kind_filter {
        filters.push(format!("kind: {kind}"));
    }
    if let Some(kind) = state.status_filter {
        filters.push(format!("status: {kind}"));
    }
    if let Some(kind) = state.health_filter {
        filters.push(format!("health: {kind}"));
    }
    if let Some(filter) = state.pods.filter {
        filters.push(filter.label());
    }
    if let Some(label) = &state.group_by {
        filters.push(format!("grouped by {label}"));
    }
    if !filters.is_empty() {
        spans.push(Span::styled(
            format!("│ {} ", filters.join(" · ")),
            theme.header,
        ));
    }
    if state.readonly {
        spans.push(Span::styled(" READ-ONLY ", theme.danger));
    }
    if state.rollout.as_ref().is_some_and(|rollout| rollout.paused) {
        spans.push(Span::styled(" PAUSED ", theme.danger));
    }
    if state
        .selected_cluster()
        .is_some_and(|cluster| state.is_dangerous(cluster))
    {
        let cue = if compact {
            format!(" {} DANGER ", widgets::DANGER_MARK.symbol(context.ascii))
        } else {
            format!(
                " {} DANGER CLASS CLUSTER SELECTED ",
                widgets::DANGER_MARK.symbol(context.ascii)
            )
        };
        spans.push(Span::styled(cue, theme.danger));
    }
    Line::from(spans)
}

fn footer_line<'a>(state: &'a State, context: &ViewContext) -> Paragraph<'a> {
    let theme = context.theme;
    let hint = |command: KeyCommand, label: &str| -> Vec<Span<'static>> {
        let keys = context.keymap.keys_for(command);
        match keys.first() {
            Some(key) => vec![
                Span::styled(format!(" {key}"), theme.title),
                Span::styled(format!(" {label} "), theme.muted),
            ],
            None => Vec::new(),
        }
    };
    let mut spans = Vec::new();
    if let Some(rollout) = &state.rollout {
        // While propagating, the footer is the progress line.
        let held = rollout.paused && rollout.waiting.is_empty();
        let wave = if held {
            format!(
                " PAUSED before wave {}/{}: ",
                rollout.current + 2,
                rollout.waves.len()
            )
        } else if rollout.paused {
            format!(
                " PAUSED after wave {}/{}: ",
                rollout.current + 1,
                rollout.waves.len()
            )
        } else {
            format!(
                " propagating wave {}/{}: ",
                rollout.current + 1,
                rollout.waves.len()
            )
        };
        let healthy_wait = rollout.awaiting_health.len();
        let mut progress = format!(
            "{} of {} {}, {} failed, {} waiting",
            rollout.settled,
            rollout.total(),
            rollout.gate,
            rollout.failed.len(),
            rollout.waiting.len()
        );
        if healthy_wait > 0 {
            progress.push_str(&format!(" ({healthy_wait} in sync, not yet Healthy)"));
        }
        let style = if rollout.paused {
            theme.danger
        } else {
            theme.title
        };
        spans.push(Span::styled(wave, style));
        spans.push(Span::styled(format!("{progress} "), theme.title));
        let pause = if rollout.paused { "resume" } else { "pause" };
        spans.extend(hint(KeyCommand::PauseRollout, pause));
        spans.extend(hint(KeyCommand::Back, "cancel later waves"));
        return Paragraph::new(Line::from(spans));
    }
    if matches!(state.mode, Mode::Logs(_)) {
        spans.extend(logs::footer_hints(context));
    }
    let hints = if matches!(state.mode, Mode::Logs(_)) {
        &[][..]
    } else {
        &[
            (KeyCommand::Quit, "quit"),
            (KeyCommand::Help, "help"),
            (KeyCommand::Detail, "detail"),
            (KeyCommand::Filter, "filter"),
            (KeyCommand::Palette, "command"),
            (KeyCommand::FocusNext, "pane"),
            (KeyCommand::Sort, "sort"),
            (KeyCommand::Apply, "propagate"),
            (KeyCommand::EditPlacement, "edit placement"),
            (KeyCommand::EditOverrides, "overrides"),
            (KeyCommand::Drift, "drift"),
            (KeyCommand::Collapse, "heat strips"),
        ][..]
    };
    for &(command, label) in hints {
        // A read-only console offers no way to write.
        if state.readonly && command.is_mutating() {
            continue;
        }
        spans.extend(hint(command, label));
    }
    // What just happened matters more than the key hints: it goes first, the hints after it.
    let lead = if let Some(warning) = state.warnings.first() {
        Some(Span::styled(
            format!(" ⚠ {warning} "),
            theme.status_style(StatusKind::Drifted),
        ))
    } else {
        state
            .notice
            .as_ref()
            .map(|notice| Span::styled(format!(" {notice} │"), theme.text))
    };
    if let Some(lead) = lead {
        spans.insert(0, lead);
    }
    Paragraph::new(Line::from(spans))
}
