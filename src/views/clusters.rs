//! The clusters pane: one row per cluster with health, version, latency, place and worst cell.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{ViewContext, fit, focused, inner, pane_block, row_style, scroll_offset};
use crate::app::state::{Pane, State};

/// Columns the pane needs besides the name: number, health, version, latency, region, worst.
pub(super) const FIXED_COLUMNS: usize = 4 + 12 + 9 + 6 + 10 + 14;

pub(super) fn render(frame: &mut Frame, area: Rect, state: &State, context: &ViewContext) {
    let theme = context.theme;
    let is_focused = focused(state, Pane::Clusters);
    let title = format!("Clusters ({})", state.clusters.len());
    frame.render_widget(pane_block(&title, is_focused, theme), area);
    let body = inner(area);
    if body.height == 0 {
        return;
    }
    let name_width = usize::from(body.width)
        .saturating_sub(FIXED_COLUMNS)
        .clamp(8, 32);
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "{:>3} {:<name_width$} {:<11} {:<8} {:>5} {:<9} {}",
            "#", "NAME", "HEALTH", "VERSION", "LAT", "REGION", "WORST"
        ),
        theme.muted,
    ))];
    let rows = usize::from(body.height).saturating_sub(1);
    let offset = scroll_offset(state.cluster_cursor, rows);
    for (index, row) in state.clusters.iter().enumerate().skip(offset).take(rows) {
        let selected = index == state.cluster_cursor;
        let base = row_style(selected, is_focused, theme);
        let worst = state.cells.cluster_counts(index).worst();
        let latency = row
            .status
            .latency_ms
            .map_or_else(|| "-".to_string(), |ms| format!("{ms}ms"));
        let version = row.status.version.as_deref().unwrap_or("-");
        let region = row.spec.region.as_deref().unwrap_or("-");
        lines.push(Line::from(vec![
            Span::styled(format!("{:>3} ", index + 1), base.patch(theme.muted)),
            Span::styled(
                format!("{:<name_width$} ", fit(&row.spec.name, name_width)),
                base.patch(theme.text),
            ),
            Span::styled(
                format!("{:<11} ", row.status.health.as_str()),
                base.patch(theme.health_style(row.status.health)),
            ),
            Span::styled(format!("{:<8} ", fit(version, 8)), base),
            Span::styled(format!("{latency:>5} "), base),
            Span::styled(format!("{:<9} ", fit(region, 9)), base),
            Span::styled(
                format!("{} {}", worst.symbol(context.ascii), worst.as_str()),
                base.patch(theme.status_style(worst)),
            ),
        ]));
    }
    frame.render_widget(Paragraph::new(lines), body);
}
