//! The federated resources pane with the propagation matrix: one row per resource, one
//! symbol per cluster, so the state of every (resource, cluster) pair reads at a glance.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{ViewContext, fit, focused, inner, pane_block, row_style, scroll_offset};
use crate::app::state::{Pane, State};

/// Columns the matrix gives each cluster.
const CELL_WIDTH: usize = 2;

pub(super) fn render(frame: &mut Frame, area: Rect, state: &State, context: &ViewContext) {
    let theme = context.theme;
    let is_focused = focused(state, Pane::Resources);
    let title = format!("Federated resources ({}) × clusters", state.resources.len());
    frame.render_widget(pane_block(&title, is_focused, theme), area);
    let body = inner(area);
    if body.height < 3 {
        return;
    }
    let width = usize::from(body.width);
    let name_width = (width / 3).clamp(12, 40);
    let fixed = 2 + 11 + 1 + name_width + 1 + 8 + 1;
    let matrix_width = width.saturating_sub(fixed);
    let visible_clusters = (matrix_width / CELL_WIDTH).min(state.clusters.len());
    // Keep the selected cluster's column on screen.
    let first_cluster = scroll_offset(state.cluster_cursor, visible_clusters.max(1))
        .min(state.clusters.len().saturating_sub(visible_clusters));
    let columns = first_cluster..first_cluster + visible_clusters;

    let prefix = " ".repeat(fixed);
    let digits = |place: usize| -> String {
        columns
            .clone()
            .map(|cluster| {
                let number = cluster + 1;
                let digit = (number / place) % 10;
                let shown = if number >= place || place == 1 {
                    char::from(b'0' + digit as u8)
                } else {
                    ' '
                };
                format!("{shown:<CELL_WIDTH$}")
            })
            .collect()
    };
    let mut lines = vec![
        Line::from(Span::styled(
            format!(
                "  {:<11} {:<name_width$} {:<8} {}",
                "KIND",
                "NAMESPACE/NAME",
                "DIALECT",
                digits(10)
            ),
            theme.muted,
        )),
        Line::from(Span::styled(format!("{prefix}{}", digits(1)), theme.muted)),
    ];
    let rows = usize::from(body.height).saturating_sub(2);
    let offset = scroll_offset(state.resource_cursor, rows);
    for (index, row) in state.resources.iter().enumerate().skip(offset).take(rows) {
        let selected = index == state.resource_cursor;
        let base = row_style(selected, is_focused, theme);
        let worst = state.cells.resource_counts(index).worst();
        let name = match &row.target.namespace {
            Some(namespace) => format!("{namespace}/{}", row.target.name),
            None => row.target.name.clone(),
        };
        let mut spans = vec![
            Span::styled(
                format!("{} ", worst.symbol(context.ascii)),
                base.patch(theme.status_style(worst)),
            ),
            Span::styled(
                format!("{:<11} ", fit(&row.target.kind, 11)),
                base.patch(theme.muted),
            ),
            Span::styled(
                format!("{:<name_width$} ", fit(&name, name_width)),
                base.patch(theme.text),
            ),
            Span::styled(
                format!("{:<8} ", row.dialect.as_str()),
                base.patch(theme.muted),
            ),
        ];
        for cluster in columns.clone() {
            let kind = state.cells.kind(index, cluster);
            let mut style = theme.status_style(kind);
            if selected && cluster == state.cluster_cursor {
                style = style.patch(theme.selection);
            }
            spans.push(Span::styled(
                format!("{:<CELL_WIDTH$}", kind.symbol(context.ascii)),
                style,
            ));
        }
        lines.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(lines), body);
}
