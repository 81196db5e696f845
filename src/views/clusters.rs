//! The clusters pane: one row per visible cluster with health, version, latency, place and
//! worst cell; group headings when grouped; danger-class clusters marked. It must not change
//! state.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::widgets::{
    DANGER_MARK, ViewContext, fit, fit_middle, focused, inner, on_row, pane_block, row_style,
    scroll_offset,
};
use crate::app::state::{Pane, State};

/// Columns the pane needs besides the name: number, health, version, latency, region, worst.
pub(super) const FIXED_COLUMNS: usize = 4 + 12 + 9 + 6 + 10 + 14;

pub(super) fn render(frame: &mut Frame, area: Rect, state: &State, context: &ViewContext) {
    let theme = context.theme;
    let is_focused = focused(state, Pane::Clusters);
    let view = &state.cluster_view;
    let title = if view.visible.len() == state.clusters.len() {
        format!("Clusters ({}) · {}", state.clusters.len(), view.sort.name())
    } else {
        format!(
            "Clusters ({} of {}) · {}",
            view.visible.len(),
            state.clusters.len(),
            view.sort.name()
        )
    };
    frame.render_widget(pane_block(&title, is_focused, theme), area);
    let body = inner(area);
    if body.height == 0 {
        return;
    }
    // Narrow panes drop the least important columns rather than cut names.
    let width = usize::from(body.width);
    let show_place = width >= 60;
    let show_version = width >= 48;
    let worst_words = width >= 60;
    let fixed = FIXED_COLUMNS
        - if show_place { 0 } else { 10 + 6 }
        - if show_version { 0 } else { 9 }
        - if worst_words { 0 } else { 12 };
    let name_width = width.saturating_sub(fixed).clamp(6, 32);
    let digits = state.clusters.len().to_string().len().max(3);
    let mut header = format!("{:>digits$} {:<name_width$} {:<11} ", "#", "NAME", "HEALTH");
    if show_version {
        header.push_str(&format!("{:<8} ", "VERSION"));
    }
    if show_place {
        header.push_str(&format!("{:>5} {:<9} ", "LAT", "REGION"));
    }
    header.push_str(if worst_words { "WORST" } else { "W" });
    let mut lines = vec![Line::from(Span::styled(header, theme.muted))];
    let rows = usize::from(body.height).saturating_sub(1);
    if view.visible.is_empty() {
        lines.push(Line::from(Span::styled(
            "  no cluster matches the filter (esc clears it)",
            theme.muted,
        )));
    }
    let offset = scroll_offset(
        view.cursor,
        rows.saturating_sub(state.groups.len().min(rows / 3)),
    );
    let mut drawn = 0;
    for (position, &index) in view.visible.iter().enumerate().skip(offset) {
        if drawn >= rows {
            break;
        }
        if let Some(group) = state
            .groups
            .iter()
            .find(|group| group.members.start == position)
        {
            lines.push(Line::from(Span::styled(
                format!(" ▸ {} ({})", group.name, group.members.len()),
                theme.title,
            )));
            drawn += 1;
            if drawn >= rows {
                break;
            }
        }
        let row = &state.clusters[index];
        let selected = position == view.cursor;
        let base = row_style(selected, is_focused, theme);
        let worst = state.cells.cluster_concern(index);
        // A danger-class cluster is marked and styled as a caution, not as a failure.
        let (name, name_style) = if state.is_dangerous(index) {
            (
                format!(
                    "{} {}",
                    DANGER_MARK.symbol(context.ascii),
                    fit_middle(&row.spec.name, name_width.saturating_sub(2))
                ),
                on_row(base, theme.danger),
            )
        } else {
            (
                fit_middle(&row.spec.name, name_width),
                on_row(base, theme.text),
            )
        };
        let mut spans = vec![
            Span::styled(
                format!("{:>digits$} ", index + 1),
                on_row(base, theme.muted),
            ),
            Span::styled(format!("{name:<name_width$}"), name_style),
            Span::styled(" ", base),
            Span::styled(
                format!("{:<11} ", row.status.health.as_str()),
                on_row(base, theme.health_style(row.status.health)),
            ),
        ];
        if show_version {
            let version = row.status.version.as_deref().unwrap_or("-");
            spans.push(Span::styled(format!("{:<8} ", fit(version, 8)), base));
        }
        if show_place {
            let latency = row
                .status
                .latency_ms
                .map_or_else(|| "-".to_string(), |ms| format!("{ms}ms"));
            let region = row.spec.region.as_deref().unwrap_or("-");
            spans.push(Span::styled(
                format!("{latency:>5} {:<9} ", fit(region, 9)),
                base,
            ));
        }
        let worst_text = if worst_words {
            format!("{} {}", worst.symbol(context.ascii), worst.as_str())
        } else {
            worst.symbol(context.ascii).to_string()
        };
        spans.push(Span::styled(
            worst_text,
            on_row(base, theme.status_style(worst.severity())),
        ));
        lines.push(Line::from(spans));
        drawn += 1;
    }
    frame.render_widget(Paragraph::new(lines), body);
}
