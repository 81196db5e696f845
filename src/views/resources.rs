//! The federated resources pane with the propagation matrix: one row per resource and one
//! symbol per cluster — or, collapsed, one heat strip per cluster group — so every
//! (resource, cluster) pair reads at a glance. Only the rows and columns that fit are read; a
//! strip's worst state and count come from the counts the cells keep. It must not change
//! state.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::widgets::{
    ViewContext, fit, fit_middle, focused, inner, on_row, pane_block, row_style, scroll_offset,
};
use crate::app::state::{Pane, State};

/// A matrix column: one cluster, or a whole group drawn as a heat strip.
enum Column {
    Cluster { position: usize, cluster: usize },
    Group { index: usize },
}

pub(super) fn render(frame: &mut Frame, area: Rect, state: &State, context: &ViewContext) {
    let theme = context.theme;
    let is_focused = focused(state, Pane::Resources);
    let view = &state.resource_view;
    let title = if view.visible.len() == state.resources.len() {
        format!(
            "Federated resources ({}) × clusters · {}",
            state.resources.len(),
            view.sort.name()
        )
    } else {
        format!(
            "Federated resources ({} of {}) × clusters · {}",
            view.visible.len(),
            state.resources.len(),
            view.sort.name()
        )
    };
    frame.render_widget(pane_block(&title, is_focused, theme), area);
    let body = inner(area);
    if body.height < 3 {
        return;
    }
    let Geometry {
        name_width,
        show_dialect,
        fixed,
        collapsed,
        cell_width,
        capacity,
        total,
    } = geometry(state, body.width);
    let noun = if collapsed { "groups" } else { "clusters" };
    let columns = visible_columns(state, collapsed, capacity);

    let heading = if name_width >= 14 {
        "NAMESPACE/NAME"
    } else {
        "NS/NAME"
    };
    let mut header_top = format!("  {:<11} {:<name_width$} ", "KIND", heading);
    if show_dialect {
        header_top.push_str(&format!("{:<8} ", "DIALECT"));
    }
    let mut header_bottom = " ".repeat(fixed);
    for column in &columns {
        let (top, bottom) = match column {
            Column::Cluster { cluster, .. } => {
                let number = cluster + 1;
                let tens = if number >= 10 {
                    char::from(b'0' + ((number / 10) % 10) as u8)
                } else {
                    ' '
                };
                (
                    format!("{tens:<cell_width$}"),
                    format!("{:<cell_width$}", char::from(b'0' + (number % 10) as u8)),
                )
            }
            Column::Group { index } => {
                // Each strip's name and size in its own column, a space before the next:
                // shortened in the middle so `eu-west-1` and `eu-west-2` stay told apart.
                let group = &state.groups[*index];
                (
                    format!("{:<cell_width$}", fit_middle(&group.name, cell_width - 1)),
                    format!(
                        "{:<cell_width$}",
                        fit(&count_text(group.members.len()), cell_width - 1)
                    ),
                )
            }
        };
        header_top.push_str(&top);
        header_bottom.push_str(&bottom);
    }
    // Columns left out are said, under the names, with the way to them.
    let hidden = total.saturating_sub(columns.len());
    if hidden > 0 {
        let note = fit(&format!("+{hidden} {noun} → "), fixed);
        header_bottom = format!("{note:>fixed$}{}", &header_bottom[fixed..]);
    }
    let mut lines = vec![
        Line::from(Span::styled(header_top, theme.muted)),
        Line::from(Span::styled(header_bottom, theme.muted)),
    ];
    if view.visible.is_empty() {
        lines.push(Line::from(Span::styled(
            "  no resource matches the filter (esc clears it)",
            theme.muted,
        )));
    }
    let rows = usize::from(body.height).saturating_sub(2);
    let offset = scroll_offset(view.cursor, rows);
    let selected_position = state.cluster_view.cursor;
    for (position, &index) in view.visible.iter().enumerate().skip(offset).take(rows) {
        let row = &state.resources[index];
        let selected = position == view.cursor;
        let base = row_style(selected, is_focused, theme);
        let worst = state.cells.resource_concern(index);
        let name = match &row.target.namespace {
            Some(namespace) => format!("{namespace}/{}", row.target.name),
            None => row.target.name.clone(),
        };
        let mut spans = vec![
            Span::styled(
                format!("{} ", worst.symbol(context.ascii)),
                on_row(base, theme.status_style(worst.severity())),
            ),
            Span::styled(
                format!("{:<11} ", fit(&row.target.kind, 11)),
                on_row(base, theme.muted),
            ),
            Span::styled(
                format!("{:<name_width$} ", fit_middle(&name, name_width)),
                on_row(base, theme.text),
            ),
        ];
        if show_dialect {
            spans.push(Span::styled(
                format!("{:<8} ", row.dialect.as_str()),
                on_row(base, theme.muted),
            ));
        }
        for column in &columns {
            let mut strip_counts = None;
            // Coloured by the worse of sync and health; a strip's glyph is its worst too.
            let (worst, under_cursor) = match column {
                Column::Cluster { position, cluster } => (
                    state.cells.concern(index, *cluster),
                    *position == selected_position,
                ),
                Column::Group { index: group } => {
                    let group = &state.groups[*group];
                    let (worst, count) = state.cells.strip(index, group.strip).worst();
                    strip_counts = Some(count as usize);
                    (worst, group.members.contains(&selected_position))
                }
            };
            let mut style = theme.status_style(worst.severity());
            if selected && under_cursor {
                style = style.patch(theme.selection);
            }
            // One glyph per column, the cell's worse of sync and health, so a health mark
            // never sits between two clusters' columns nor beside a sync glyph it contradicts.
            let symbol = worst.symbol(context.ascii);
            let text = if collapsed {
                // The worst state and how many of the group's clusters are in it.
                let count = count_text(strip_counts.unwrap_or(0));
                let count = if count.chars().count() > cell_width - 2 {
                    "+".repeat(cell_width - 2)
                } else {
                    count
                };
                format!("{symbol}{count:<width$}", width = cell_width - 1)
            } else {
                format!("{symbol:<cell_width$}")
            };
            spans.push(Span::styled(text, style));
        }
        lines.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(lines), body);
}

/// The narrowest heat strip: a glyph, four digits and a space.
const STRIP_WIDTH: usize = 6;

/// A count in at most five characters: `2000`, `12k`, `3M`.
fn count_text(count: usize) -> String {
    match count {
        0..=9_999 => count.to_string(),
        10_000..=999_999 => format!("{}k", count / 1000),
        _ => format!("{}M", count / 1_000_000),
    }
}

/// How wide a heat strip is drawn, `room` columns being there for them: at least a glyph, a
/// four-digit count and a space; at most as wide as the longest group name. The widest that
/// shows every strip with the groups' names told apart; when none does, the narrowest that
/// tells them apart (the strips left out are said).
fn strip_width(state: &State, room: usize) -> usize {
    let longest = state
        .groups
        .iter()
        .map(|group| group.name.chars().count() + 1)
        .max()
        .unwrap_or(STRIP_WIDTH)
        .clamp(STRIP_WIDTH, 16);
    let distinct = |cell: usize| {
        let mut names: Vec<String> = state
            .groups
            .iter()
            .map(|group| fit_middle(&group.name, cell - 1))
            .collect();
        names.sort_unstable();
        names.windows(2).all(|pair| pair[0] != pair[1])
    };
    let total = state.groups.len();
    (STRIP_WIDTH..=longest)
        .rev()
        .find(|&cell| room / cell >= total && distinct(cell))
        .or_else(|| (STRIP_WIDTH..=longest).find(|&cell| distinct(cell)))
        .unwrap_or(longest)
}

/// How the pane's inner width is shared between the names and the matrix.
struct Geometry {
    name_width: usize,
    show_dialect: bool,
    /// Columns before the matrix.
    fixed: usize,
    collapsed: bool,
    cell_width: usize,
    /// Matrix columns that fit.
    capacity: usize,
    /// Matrix columns there are.
    total: usize,
}

/// The matrix's geometry: names a third of the width (10 to 40 columns) and the dialect
/// where there is room. Heat strips that do not all fit take room from the names first —
/// down to the longest name there is, then without the dialect, then down to 10 columns —
/// so every group shows where it can.
fn geometry(state: &State, width: u16) -> Geometry {
    let width = usize::from(width);
    let name_width = (width / 3).clamp(10, 40);
    let show_dialect = width >= 60 && state.shows_dialect();
    let first = layout(state, width, name_width, show_dialect);
    if !first.collapsed || first.capacity >= first.total {
        return first;
    }
    let longest = state
        .resources
        .iter()
        .map(|row| {
            row.target.name.chars().count()
                + row
                    .target
                    .namespace
                    .as_ref()
                    .map_or(0, |namespace| namespace.chars().count() + 1)
        })
        .max()
        .unwrap_or(10)
        .clamp(10, name_width);
    [(longest, show_dialect), (longest, false), (10, false)]
        .into_iter()
        .map(|(name_width, show_dialect)| layout(state, width, name_width, show_dialect))
        .find(|geometry| geometry.capacity >= geometry.total)
        .unwrap_or(first)
}

fn layout(state: &State, width: usize, name_width: usize, show_dialect: bool) -> Geometry {
    let fixed = 2 + 11 + 1 + name_width + 1 + if show_dialect { 9 } else { 0 };
    let collapsed = state.collapsed && !state.groups.is_empty();
    let total = if collapsed {
        state.groups.len()
    } else {
        state.cluster_view.visible.len()
    };
    let room = width.saturating_sub(fixed);
    let cell_width = if collapsed {
        strip_width(state, room)
    } else {
        2
    };
    Geometry {
        name_width,
        show_dialect,
        fixed,
        collapsed,
        cell_width,
        capacity: room / cell_width,
        total,
    }
}

/// Whether a pane `width` wide (borders included) shows every matrix column.
pub(super) fn shows_every_column(state: &State, width: u16) -> bool {
    let geometry = geometry(state, width.saturating_sub(2));
    geometry.capacity >= geometry.total
}

/// The columns that fit, scrolled so the selected cluster (or its group) stays visible.
fn visible_columns(state: &State, collapsed: bool, capacity: usize) -> Vec<Column> {
    if collapsed {
        let count = state.groups.len();
        let cursor = state
            .groups
            .iter()
            .position(|group| group.members.contains(&state.cluster_view.cursor))
            .unwrap_or(0);
        let take = capacity.min(count);
        let first = scroll_offset(cursor, take.max(1)).min(count - take);
        return (first..first + take)
            .map(|index| Column::Group { index })
            .collect();
    }
    let visible = &state.cluster_view.visible;
    let take = capacity.min(visible.len());
    let first = scroll_offset(state.cluster_view.cursor, take.max(1)).min(visible.len() - take);
    (first..first + take)
        .map(|position| Column::Cluster {
            position,
            cluster: visible[position],
        })
        .collect()
}
