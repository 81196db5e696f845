//! Pure drawing: the console screen as a function of `&State`, the theme and the key map.
//! Views must not change state, talk to backends or see Kubernetes client types.

mod clusters;
mod detail;
mod drift;
mod editor;
mod help;
mod input;
mod ocm_placement;
mod overrides;
mod resources;
pub mod watch;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::app::state::{Mode, Pane, State};
use crate::config::keymap::{KeyCommand, Keymap};
use crate::config::theme::Theme;
use crate::model::StatusKind;

/// What every view needs besides the state.
pub struct ViewContext<'a> {
    pub theme: &'a Theme,
    pub keymap: &'a Keymap,
    /// Draw with ASCII symbols only.
    pub ascii: bool,
}

/// Draws the whole console (or the wall display, when the state is one).
pub fn render(frame: &mut Frame, state: &State, context: &ViewContext) {
    if state.wall.is_some() {
        watch::render(frame, state, context);
        return;
    }
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
    frame.render_widget(header_line(state, context), header);
    if matches!(state.mode, Mode::Filter { .. } | Mode::Palette { .. }) {
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
    let clusters_width = wanted.min(body.width / 2).max(24.min(body.width));
    let [left, right] =
        Layout::horizontal([Constraint::Length(clusters_width), Constraint::Min(10)]).areas(body);
    let detail_height = if right.height >= 40 {
        16
    } else if right.height >= 24 {
        10
    } else {
        0
    };
    let [resources_area, detail_area] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(detail_height)]).areas(right);
    clusters::render(frame, left, state, context);
    if let Mode::Object { scroll } = state.mode {
        detail::render_object(frame, right, state, context, scroll);
    } else if let Mode::Placement(placement) = &state.mode {
        editor::render(frame, right, state, placement, context);
    } else if let Mode::OcmPlacement(editor) = &state.mode {
        ocm_placement::render(frame, right, state, editor, context);
    } else if let Mode::Overrides(editor) = &state.mode {
        overrides::render(frame, right, state, editor, context);
    } else if let Mode::Drift(view) = &state.mode {
        drift::render(frame, right, state, view, context);
    } else {
        resources::render(frame, resources_area, state, context);
        if detail_height > 0 {
            detail::render(frame, detail_area, state, context);
        }
    }
    if state.mode == Mode::Help {
        help::render(frame, area, context, state.readonly);
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

/// A bordered block whose border shows whether its pane has the keyboard.
fn pane_block<'a>(title: &'a str, focused: bool, theme: &Theme) -> Block<'a> {
    let border = if focused {
        theme.border_focused
    } else {
        theme.border
    };
    Block::default()
        .borders(Borders::ALL)
        .border_style(border)
        .title(Span::styled(format!(" {title} "), theme.title))
}

fn header_line<'a>(state: &'a State, context: &ViewContext) -> Paragraph<'a> {
    let theme = context.theme;
    let mut spans = vec![
        Span::styled(" flotilla ", theme.title),
        Span::styled(format!("│ {} ", state.source), theme.header),
        Span::styled(
            format!(
                "│ clusters {}/{} Ready ",
                state.ready_clusters(),
                state.clusters.len()
            ),
            theme.header,
        ),
        Span::styled("│ cells ", theme.header),
    ];
    let totals = state.cells.totals();
    for kind in StatusKind::ALL {
        let count = totals.get(kind);
        if count == 0 || kind == StatusKind::NotPlaced {
            continue;
        }
        spans.push(Span::styled(
            format!("{}{} {} ", kind.symbol(context.ascii), count, kind.as_str()),
            theme.status_style(kind),
        ));
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
    if state
        .selected_cluster()
        .is_some_and(|cluster| state.is_dangerous(cluster))
    {
        spans.push(Span::styled(
            " ⚠ DANGER CLASS CLUSTER SELECTED ",
            theme.danger,
        ));
    }
    Paragraph::new(Line::from(spans)).style(theme.header)
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
        spans.push(Span::styled(
            format!(
                " propagating wave {}/{}: {} of {} in sync, {} failed, {} waiting ",
                rollout.current + 1,
                rollout.waves.len(),
                rollout.synced,
                rollout.total(),
                rollout.failed.len(),
                rollout.waiting.len()
            ),
            theme.title,
        ));
        spans.extend(hint(KeyCommand::Back, "cancel later waves"));
        return Paragraph::new(Line::from(spans));
    }
    let hints = [
        (KeyCommand::Quit, "quit"),
        (KeyCommand::Help, "help"),
        (KeyCommand::Filter, "filter"),
        (KeyCommand::Palette, "command"),
        (KeyCommand::FocusNext, "pane"),
        (KeyCommand::Sort, "sort"),
        (KeyCommand::Apply, "propagate"),
        (KeyCommand::EditPlacement, "edit placement"),
        (KeyCommand::EditOverrides, "overrides"),
        (KeyCommand::Drift, "drift"),
        (KeyCommand::Collapse, "heat strips"),
    ];
    for (command, label) in hints {
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

/// Truncates to `width` characters, marking the cut with an ellipsis.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The style for the row under the cursor in the focused pane.
fn row_style(selected: bool, focused: bool, theme: &Theme) -> Style {
    if selected && focused {
        theme.selection
    } else {
        Style::default()
    }
}

fn focused(state: &State, pane: Pane) -> bool {
    state.focus == pane
}

/// The first row to draw so the cursor stays visible in `rows` lines.
fn scroll_offset(cursor: usize, rows: usize) -> usize {
    cursor.saturating_sub(rows.saturating_sub(1))
}

/// A popup of `lines` text lines (plus borders) at most `width` wide, centred in `area`, with
/// whatever was under it cleared.
fn popup(frame: &mut Frame, area: Rect, width: u16, lines: usize) -> Rect {
    let height = (lines as u16).saturating_add(2).min(area.height);
    let width = width.min(area.width);
    let rect = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    frame.render_widget(ratatui::widgets::Clear, rect);
    rect
}

/// The inner area of a bordered block.
fn inner(area: Rect) -> Rect {
    Rect {
        x: area.x.saturating_add(1),
        y: area.y.saturating_add(1),
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    }
}
