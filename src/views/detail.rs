//! The detail pane: what the selected cluster or resource is, the selected cell, and the cell
//! behind the worst state, so every roll-up can be traced to the pair that caused it. It must
//! not change state.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::widgets::{ViewContext, inner, pane_block};
use crate::app::state::{Pane, State};
use crate::config::keymap::KeyCommand;

pub(super) fn render(frame: &mut Frame, area: Rect, state: &State, context: &ViewContext) {
    let theme = context.theme;
    // Over the panes it says how it closes.
    let title = match context.keymap.keys_for(KeyCommand::Detail).first() {
        Some(key) if state.detail_open => format!("Detail · {key} or esc closes"),
        _ => "Detail".to_string(),
    };
    frame.render_widget(pane_block(&title, false, theme), area);
    let label = |text: &str| Span::styled(format!("{text:<10}"), theme.muted);
    let mut lines = Vec::new();
    match state.focus {
        Pane::Clusters => {
            let Some(index) = state.selected_cluster() else {
                return;
            };
            let row = &state.clusters[index];
            let labels: Vec<String> = row
                .spec
                .labels
                .iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect();
            let taints: Vec<String> = row.spec.taints.iter().map(ToString::to_string).collect();
            let mut title = vec![
                label("cluster"),
                Span::styled(row.spec.name.clone(), theme.title),
                Span::styled(format!("  context {}", row.spec.context), theme.muted),
            ];
            if state.is_dangerous(index) {
                title.push(Span::styled("  DANGER CLASS", theme.danger));
            }
            lines.push(Line::from(title));
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
            if let Some(resource) = state.cells.cluster_cause(index) {
                lines.push(cell_line(state, context, "worst", resource, index));
            }
        }
        Pane::Resources => {
            let Some(index) = state.selected_resource() else {
                return;
            };
            let row = &state.resources[index];
            lines.push(Line::from(vec![
                label("resource"),
                Span::styled(row.target.display_key(), theme.title),
                Span::styled(
                    if state.shows_dialect() {
                        format!("  {}  {}", row.target.api_version, row.dialect)
                    } else {
                        format!("  {}", row.target.api_version)
                    },
                    theme.muted,
                ),
            ]));
            lines.push(Line::from(vec![
                label("placement"),
                Span::raw(row.placement.clone()),
            ]));
            if let Some(cluster) = state.selected_cluster() {
                lines.push(cell_line(state, context, "selected", index, cluster));
                // A health an operator's rule decided names the rule; the built-ins go unnamed.
                if let Some(rule) = state
                    .cells
                    .health(index, cluster)
                    .and_then(|health| health.rule.as_deref())
                    .filter(|rule| !rule.ends_with("(built-in)"))
                {
                    lines.push(Line::from(vec![
                        label("health by"),
                        Span::styled(crate::safe_text::printable(rule, false), theme.muted),
                    ]));
                }
                // What the last `:pods` query read of the cell's pods.
                if let Some(pods) = state.pods.of(crate::messages::CellRef {
                    resource: index as u32,
                    cluster: cluster as u32,
                }) {
                    let style = if pods.troubles.is_empty() && pods.error.is_none() {
                        theme.text
                    } else {
                        theme.status_style(crate::model::HealthKind::Degraded.severity())
                    };
                    lines.push(Line::from(vec![
                        label("pods"),
                        Span::styled(crate::safe_text::printable(&pods.line(), false), style),
                    ]));
                    let drifted = theme.status_style(crate::model::StatusKind::Drifted);
                    for skew in &pods.skew {
                        lines.push(Line::from(vec![
                            label("images"),
                            Span::styled(crate::safe_text::printable(skew, false), drifted),
                        ]));
                    }
                }
            }
            if let Some(cluster) = state.cells.resource_cause(index) {
                lines.push(cell_line(state, context, "worst", index, cluster));
            }
            if let Some(explanation) = state
                .explanation
                .as_ref()
                .filter(|e| e.resource == index && Some(e.cluster) == state.selected_cluster())
            {
                let verdict = if explanation.placed {
                    "placed"
                } else {
                    "not placed"
                };
                lines.push(Line::from(vec![
                    label("explain"),
                    Span::styled(format!("{verdict}: "), theme.title),
                    Span::styled(explanation.reason.clone(), theme.text),
                ]));
                for step in &explanation.steps {
                    lines.push(Line::from(vec![
                        Span::raw(" ".repeat(10)),
                        Span::styled(format!("· {step}"), theme.muted),
                    ]));
                }
            }
        }
    }
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }),
        inner(area),
    );
}

/// "worst  ~ Drifted  Deployment/shop/web on prod-eu-west-1 — /spec/replicas changed by …".
pub(super) fn cell_line<'a>(
    state: &'a State,
    context: &ViewContext,
    label: &str,
    resource: usize,
    cluster: usize,
) -> Line<'a> {
    let theme = context.theme;
    let status = state.cell_status(resource, cluster);
    // The line leads with the worse of sync and health, so a check never heads a problem.
    let concern = state.cells.concern(resource, cluster);
    let cluster_name = state
        .clusters
        .get(cluster)
        .map_or("?", |row| row.spec.name.as_str());
    let resource_name = state
        .resources
        .get(resource)
        .map_or_else(String::new, |row| row.target.display_key());
    let mut spans = vec![
        Span::styled(format!("{label:<10}"), theme.muted),
        Span::styled(
            format!("{} ", concern.symbol(context.ascii)),
            theme.status_style(concern.severity()),
        ),
        Span::styled(status.to_string(), theme.status_style(status.kind())),
        Span::styled(format!("  {resource_name} on {cluster_name}"), theme.text),
    ];
    if let Some(message) = state.cells.message(resource, cluster) {
        spans.push(Span::styled(format!(" — {message}"), theme.muted));
    }
    if let Some(health) = state.cells.health(resource, cluster) {
        // How long ago a deadline passed, by the wall clock of the last tick.
        let now = state.unix_ms.and_then(|ms| i64::try_from(ms / 1000).ok());
        let reason = if health.reason.is_empty() {
            String::new()
        } else {
            format!(": {}", crate::engine::health::reason_at(health, now))
        };
        spans.push(Span::styled("  · health ", theme.text));
        spans.push(Span::styled(
            health.kind.to_string(),
            theme.status_style(health.kind.severity()),
        ));
        spans.push(Span::styled(
            crate::safe_text::printable(&reason, false),
            theme.text,
        ));
    }
    Line::from(spans)
}
