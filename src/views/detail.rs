//! The detail pane: what the selected cluster or resource is, and the cell behind its worst
//! state, so every roll-up can be traced to the pair that caused it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{ViewContext, inner, pane_block};
use crate::app::state::{Pane, State};

pub(super) fn render(frame: &mut Frame, area: Rect, state: &State, context: &ViewContext) {
    let theme = context.theme;
    frame.render_widget(pane_block("Detail", false, theme), area);
    let label = |text: &str| Span::styled(format!("{text:<10}"), theme.muted);
    let mut lines = Vec::new();
    match state.focus {
        Pane::Clusters => {
            let Some(row) = state.clusters.get(state.cluster_cursor) else {
                return;
            };
            let labels: Vec<String> = row
                .spec
                .labels
                .iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect();
            let taints: Vec<String> = row.spec.taints.iter().map(ToString::to_string).collect();
            lines.push(Line::from(vec![
                label("cluster"),
                Span::styled(row.spec.name.clone(), theme.title),
                Span::styled(format!("  context {}", row.spec.context), theme.muted),
            ]));
            lines.push(Line::from(vec![
                label("health"),
                Span::styled(
                    row.status.health.as_str(),
                    theme.health_style(row.status.health),
                ),
                Span::styled(format!("  {}", row.status.message), theme.text),
            ]));
            lines.push(Line::from(vec![
                label("place"),
                Span::raw(format!(
                    "provider {}  region {}  zones {}",
                    row.spec.provider.as_deref().unwrap_or("-"),
                    row.spec.region.as_deref().unwrap_or("-"),
                    if row.spec.zones.is_empty() {
                        "-".to_string()
                    } else {
                        row.spec.zones.join(",")
                    }
                )),
            ]));
            lines.push(Line::from(vec![
                label("labels"),
                Span::raw(labels.join(" ")),
            ]));
            lines.push(Line::from(vec![
                label("taints"),
                Span::raw(if taints.is_empty() {
                    "none".to_string()
                } else {
                    taints.join(" ")
                }),
            ]));
            if let Some(resource) = state.cells.cluster_cause(state.cluster_cursor) {
                lines.push(cause_line(state, context, resource, state.cluster_cursor));
            }
        }
        Pane::Resources => {
            let Some(row) = state.resources.get(state.resource_cursor) else {
                return;
            };
            lines.push(Line::from(vec![
                label("resource"),
                Span::styled(row.target.display_key(), theme.title),
                Span::styled(
                    format!("  {}  {}", row.target.api_version, row.dialect),
                    theme.muted,
                ),
            ]));
            lines.push(Line::from(vec![
                label("placement"),
                Span::raw(row.placement.clone()),
            ]));
            if let Some(cluster) = state.cells.resource_cause(state.resource_cursor) {
                lines.push(cause_line(state, context, state.resource_cursor, cluster));
            }
            if let Some(cluster) = state.clusters.get(state.cluster_cursor) {
                let status = state
                    .cells
                    .status(state.resource_cursor, state.cluster_cursor);
                lines.push(Line::from(vec![
                    label("on"),
                    Span::styled(format!("{}: ", cluster.spec.name), theme.text),
                    Span::styled(status.to_string(), theme.status_style(status.kind())),
                ]));
            }
        }
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), inner(area));
}

/// "worst: Drifted on prod-eu-west-1 — /spec/replicas changed by kubectl-scale".
fn cause_line<'a>(
    state: &'a State,
    context: &ViewContext,
    resource: usize,
    cluster: usize,
) -> Line<'a> {
    let theme = context.theme;
    let status = state.cells.status(resource, cluster);
    let cluster_name = state
        .clusters
        .get(cluster)
        .map_or("?", |row| row.spec.name.as_str());
    let resource_name = state
        .resources
        .get(resource)
        .map_or_else(String::new, |row| row.target.display_key());
    let mut spans = vec![
        Span::styled(format!("{:<10}", "worst"), theme.muted),
        Span::styled(
            format!("{} {}", status.kind().symbol(context.ascii), status),
            theme.status_style(status.kind()),
        ),
        Span::styled(format!("  {resource_name} on {cluster_name}"), theme.text),
    ];
    if let Some(message) = state.cells.message(resource, cluster) {
        spans.push(Span::styled(format!(" — {message}"), theme.muted));
    }
    Line::from(spans)
}
