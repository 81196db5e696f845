//! The drilled-in view of one cell: a header with the cell's sync status, health and reason,
//! then one of its views — the object the engine renders for the cluster, the live object
//! there, their diff, the cluster's recent Events for it, or every placed cluster grouped by
//! identical live state with the highlighted group's object. Every text a cluster sent is
//! escaped before it is drawn. It must not change state.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::detail::cell_line;
use super::widgets::{ViewContext, inner, pane_block};
use crate::app::object_view::live_groups;
use crate::app::state::State;
use crate::app::state::object_view::{LiveRead, ObjectTab};
use crate::backend::CellRef;
use crate::config::keymap::{Section, ViewCommand};
use crate::safe_text::printable;

pub(super) fn render(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    context: &ViewContext,
    (tab, scroll, group): (ObjectTab, usize, usize),
) {
    let theme = context.theme;
    let (Some(resource), Some(cluster)) = (state.selected_resource(), state.selected_cluster())
    else {
        return;
    };
    let cluster_name = &state.clusters[cluster].spec.name;
    let key = |command| context.keymap.view_hint(Section::Object, command);
    let title = format!(
        "{} on {} · {} next view · {}{} other cluster · {} back",
        state.resources[resource].target.display_key(),
        cluster_name,
        key(ViewCommand::NextView),
        key(ViewCommand::PrevCluster),
        key(ViewCommand::NextCluster),
        key(ViewCommand::Back),
    );
    frame.render_widget(pane_block(&title, true, theme), area);
    let mut tabs = vec![Span::raw(" ")];
    for each in ObjectTab::ALL {
        let style = if each == tab {
            theme.selection
        } else {
            theme.muted
        };
        tabs.push(Span::styled(format!(" {} ", each.name()), style));
        tabs.push(Span::raw(" "));
    }
    let area = inner(area);
    let header_height = if area.width >= 100 { 2 } else { 3 };
    let [header_area, tabs_area, body_area] = Layout::vertical([
        Constraint::Length(header_height),
        Constraint::Length(1),
        Constraint::Min(1),
    ])
    .areas(area);
    frame.render_widget(
        Paragraph::new(cell_line(state, context, "cell", resource, cluster))
            .wrap(Wrap { trim: false }),
        header_area,
    );
    frame.render_widget(Paragraph::new(Line::from(tabs)), tabs_area);
    let mut lines = Vec::new();
    let cell = CellRef {
        resource: resource as u32,
        cluster: cluster as u32,
    };
    let read = state.live.reads.get(&cell);
    let body: Vec<Line> = match tab {
        ObjectTab::Desired => yaml_lines(desired_yaml(state, resource, cluster), theme),
        ObjectTab::Clusters => clusters_lines(state, context, resource, group, scroll),
        _ => match read {
            None => vec![muted(&format!("# reading from {cluster_name}…"), theme)],
            Some(read) => live_lines(read, tab, cluster_name, state.now_ms, context),
        },
    };
    let skip = if tab == ObjectTab::Clusters {
        0
    } else {
        scroll
    };
    lines.extend(body.into_iter().skip(skip));
    let mut body = Paragraph::new(lines);
    // An Event's message is prose: it wraps where a YAML line is cut.
    if tab == ObjectTab::Events {
        body = body.wrap(Wrap { trim: false });
    }
    frame.render_widget(body, body_area);
}

fn muted(text: &str, theme: &crate::config::theme::Theme) -> Line<'static> {
    Line::from(Span::styled(text.to_string(), theme.muted))
}

fn desired_yaml(state: &State, resource: usize, cluster: usize) -> &str {
    state
        .explanation
        .as_ref()
        .filter(|e| e.resource == resource && e.cluster == cluster)
        .and_then(|e| e.object_yaml.as_deref())
        .unwrap_or("")
}

fn yaml_lines(text: &str, theme: &crate::config::theme::Theme) -> Vec<Line<'static>> {
    text.lines()
        .map(|line| {
            let style = if line.trim_start().starts_with('#') {
                theme.muted
            } else if line.contains("flotilla") {
                theme.title
            } else {
                theme.text
            };
            Line::from(Span::styled(printable(line, false), style))
        })
        .collect()
}

/// The live, diff or events view of one read.
fn live_lines(
    read: &LiveRead,
    tab: ObjectTab,
    cluster: &str,
    now_ms: u64,
    context: &ViewContext,
) -> Vec<Line<'static>> {
    let theme = context.theme;
    let mut lines = Vec::new();
    if let Some(error) = &read.live.error {
        lines.push(Line::from(Span::styled(
            format!("⚠ {}", printable(error, false)),
            theme.danger,
        )));
    }
    match tab {
        ObjectTab::Live if read.live.object.is_none() => {
            lines.push(muted(
                &format!("# {cluster} does not hold this object"),
                theme,
            ));
        }
        ObjectTab::Live => lines.extend(yaml_lines(&read.yaml, theme)),
        ObjectTab::Diff if read.live.diff.is_empty() && read.live.object.is_some() => {
            lines.push(muted(
                "# live matches the desired object in every field the fleet sets",
                theme,
            ));
        }
        ObjectTab::Diff => lines.extend(diff_lines(&read.live.diff, theme)),
        ObjectTab::Events => lines.extend(event_lines(read, cluster, now_ms, context)),
        ObjectTab::Desired | ObjectTab::Clusters => {}
    }
    lines
}

fn diff_lines(diff: &str, theme: &crate::config::theme::Theme) -> Vec<Line<'static>> {
    diff.lines()
        .map(|line| {
            let style: Style = if line.starts_with("+++") || line.starts_with("---") {
                theme.muted
            } else if line.starts_with('+') {
                theme.diff_added
            } else if line.starts_with('-') {
                theme.diff_removed
            } else if line.starts_with("@@") {
                theme.muted
            } else {
                theme.text
            };
            Line::from(Span::styled(printable(line, false), style))
        })
        .collect()
}

/// "45s", "4m", "3h", "2d": as kubectl shows an age.
fn age(seconds: u64) -> String {
    match seconds {
        s if s < 120 => format!("{s}s"),
        s if s < 2 * 3600 => format!("{}m", s / 60),
        s if s < 2 * 86400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

fn event_lines(
    read: &LiveRead,
    cluster: &str,
    now_ms: u64,
    context: &ViewContext,
) -> Vec<Line<'static>> {
    let theme = context.theme;
    if read.live.events.is_empty() {
        return vec![muted(
            &format!("# no recent Events for this object on {cluster}"),
            theme,
        )];
    }
    let waited = now_ms.saturating_sub(read.received_ms) / 1000;
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "{:<8} {:<26} {:>5} {:>6}  OBJECT",
            "TYPE", "REASON", "AGE", "COUNT"
        ),
        theme.title,
    ))];
    for event in &read.live.events {
        let style = if event.is_warning() {
            theme.status_style(crate::model::StatusKind::Failed)
        } else {
            theme.text
        };
        let shown_age = event
            .age_seconds
            .map_or_else(|| "-".to_string(), |seconds| age(seconds + waited));
        lines.push(Line::from(Span::styled(
            format!(
                "{:<8} {:<26} {:>5} {:>6}  {}",
                printable(&event.event_type, false),
                printable(&event.reason, false),
                shown_age,
                format!("×{}", event.count),
                printable(&event.object, false),
            ),
            style,
        )));
        lines.push(Line::from(Span::styled(
            format!(
                "         {}",
                printable(&event.message, false).replace('\n', " ")
            ),
            theme.text,
        )));
    }
    lines
}

/// Every placed cluster grouped by live state, then the highlighted group's object.
fn clusters_lines(
    state: &State,
    context: &ViewContext,
    resource: usize,
    group: usize,
    scroll: usize,
) -> Vec<Line<'static>> {
    let theme = context.theme;
    let groups = live_groups(state, resource);
    let placed = crate::app::object_view::placed_clusters(state, resource).len();
    let read: usize = groups.iter().map(|g| g.members.len()).sum();
    let mut lines = vec![muted(
        &format!("# {placed} clusters placed, grouped by identical live state (↑↓ pick a group)"),
        theme,
    )];
    let name = |cluster: &usize| state.clusters[*cluster].spec.name.clone();
    for (index, each) in groups.iter().enumerate() {
        let members: Vec<String> = each.members.iter().map(name).collect();
        let verdict = if !each.present {
            "does not hold it".to_string()
        } else if index == 0 {
            if groups.len() == 1 {
                "identical".to_string()
            } else {
                "identical (the most clusters)".to_string()
            }
        } else if each.differs.is_empty() {
            "differs in a Secret value".to_string()
        } else {
            format!("differs in {}", each.differs.join(", "))
        };
        let marker = if index == group { "▸ " } else { "  " };
        let style = if index == group {
            theme.selection
        } else {
            theme.text
        };
        lines.push(Line::from(Span::styled(
            format!(
                "{marker}{}: {}",
                members.join(", "),
                printable(&verdict, false)
            ),
            style,
        )));
    }
    let mut unread = placed - read.min(placed);
    for cluster in crate::app::object_view::placed_clusters(state, resource) {
        let cell = CellRef {
            resource: resource as u32,
            cluster: cluster as u32,
        };
        if let Some(read) = state.live.reads.get(&cell)
            && read.live.object.is_none()
            && let Some(error) = &read.live.error
        {
            unread = unread.saturating_sub(1);
            lines.push(Line::from(Span::styled(
                format!(
                    "  {}: not read: {}",
                    name(&cluster),
                    printable(error, false)
                ),
                theme.danger,
            )));
        }
    }
    if unread > 0 {
        lines.push(muted(
            &format!("  reading {unread} more cluster(s)…"),
            theme,
        ));
    }
    if let Some(chosen) = groups.get(group.min(groups.len().saturating_sub(1)))
        && let Some(first) = chosen.members.first()
    {
        let cell = CellRef {
            resource: resource as u32,
            cluster: *first as u32,
        };
        if let Some(read) = state.live.reads.get(&cell) {
            lines.push(Line::from(""));
            lines.push(muted(&format!("# live on {}", name(first)), theme));
            if read.live.object.is_none() {
                lines.push(muted("# not held", theme));
            }
            lines.extend(yaml_lines(&read.yaml, theme).into_iter().skip(scroll));
        }
    }
    lines
}
