//! The drilled-in view of one cell: a header with the cell's sync status, health and reason,
//! then one of its views — the object the engine renders for the cluster, the live object
//! there, their diff, the chain from the template to what runs and the cluster's recent Events
//! for it (a workload's pods above them, its
//! worst pod state first), or every placed cluster grouped by
//! identical live state: on a wide terminal each group's object in a column of its own, side by
//! side, else the list of groups with the highlighted group's object. Every text a cluster
//! sent is escaped before it is drawn. It must not change state.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::detail::cell_line;
use super::widgets::{ViewContext, fit, inner, pane_block};
use crate::app::state::State;
use crate::app::state::object_view::{LiveRead, ObjectTab};
use crate::config::keymap::{Section, ViewCommand};
use crate::engine::compare::live_state::{self, LiveGroup};
use crate::engine::health::pods;
use crate::messages::CellRef;
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
    // The worst pod state of a workload in trouble, beside the tabs on every one of them.
    let cell = CellRef {
        resource: resource as u32,
        cluster: cluster as u32,
    };
    if let Some(read) = state.live.reads.get(&cell)
        && pods::worst(&read.live.pods).is_some()
    {
        tabs.push(Span::styled(
            format!(
                " pods: {}",
                printable(&pods::summary(&read.live.pods), false)
            ),
            theme.status_style(crate::model::StatusKind::Failed),
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(tabs)), tabs_area);
    if tab == ObjectTab::Clusters && side_by_side(state, resource, body_area.width) {
        render_columns(frame, body_area, state, context, (resource, group, scroll));
        return;
    }
    let mut lines = Vec::new();
    let read = state.live.reads.get(&cell);
    let body: Vec<Line> = match tab {
        ObjectTab::Desired => yaml_lines(desired_yaml(state, resource, cluster), theme),
        ObjectTab::Clusters => clusters_lines(state, context, resource, group, scroll),
        _ => match read {
            None => vec![muted(&format!("# reading from {cluster_name}…"), theme)],
            Some(read) => live_lines(read, tab, cluster_name, state.now_ms, context),
        },
    };
    // The Events view starts at the top of the chain: how the template became what runs.
    let body = if tab == ObjectTab::Events {
        let mut all = chain_lines(state, context, (resource, cluster), read);
        all.extend(body);
        all
    } else {
        body
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
        ObjectTab::Events => {
            lines.extend(pod_lines(read, cluster, now_ms, context));
            lines.extend(event_lines(read, cluster, now_ms, context));
        }
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

/// A workload's pods on the cluster above its Events: the worst of them in one line, then a
/// line per pod as `flotilla pods` lists it, those in trouble in the danger colour.
fn pod_lines(
    read: &LiveRead,
    cluster: &str,
    now_ms: u64,
    context: &ViewContext,
) -> Vec<Line<'static>> {
    let pods = &read.live.pods;
    if pods.is_empty() {
        return Vec::new();
    }
    let theme = context.theme;
    let waited = now_ms.saturating_sub(read.received_ms) / 1000;
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "# pods on {cluster}: {}",
            printable(&pods::summary(pods), false)
        ),
        theme.title,
    ))];
    let last_of = |pod: &pods::PodRow| {
        pod.last_termination
            .as_ref()
            .map_or_else(String::new, |last| {
                let ago = last
                    .age_seconds
                    .map(|seconds| format!(" {} ago", age(seconds + waited)))
                    .unwrap_or_default();
                format!(
                    "{} (exit {}){ago}",
                    printable(&last.reason, false),
                    last.exit_code
                )
            })
    };
    let width = |text: &dyn Fn(&pods::PodRow) -> String| {
        pods.iter()
            .map(|pod| text(pod).chars().count())
            .max()
            .unwrap_or(0)
    };
    let name_width = width(&|pod| printable(&pod.name, false));
    let status_width = width(&|pod| printable(&pod.status, false));
    let last_width = width(&last_of);
    for pod in pods {
        let style = if pod.trouble.is_some() {
            theme.status_style(crate::model::StatusKind::Failed)
        } else {
            theme.text
        };
        lines.push(Line::from(Span::styled(
            format!(
                "{:<name_width$}  {:>3}  {:<status_width$}  {:>3}  {:<last_width$}  {}",
                printable(&pod.name, false),
                format!("{}/{}", pod.ready, pod.containers),
                printable(&pod.status, false),
                pod.restarts,
                last_of(pod),
                printable(pod.node.as_deref().unwrap_or("<none>"), false),
            )
            .trim_end()
            .to_string(),
            style,
        )));
    }
    lines.push(Line::from(""));
    lines
}

/// The chain for a cell, one link a line: the fleet's template, policy and overrides (each at
/// its file:line), the policy, binding and Work Karmada marked the member object with, the
/// object on the cluster with its cell's state, its pods and its Events.
fn chain_lines(
    state: &State,
    context: &ViewContext,
    (resource, cluster): (usize, usize),
    read: Option<&LiveRead>,
) -> Vec<Line<'static>> {
    use crate::engine::chain::{ObjectRead, whole};
    let theme = context.theme;
    let cluster_name = &state.clusters[cluster].spec.name;
    let fleet_links = state
        .explanation
        .as_ref()
        .filter(|e| e.resource == resource && e.cluster == cluster)
        .map(|e| e.chain.clone())
        .unwrap_or_default();
    let concern = state.cells.concern(resource, cluster);
    let links = whole(
        fleet_links,
        format!(
            "{} on {cluster_name}",
            state.resources[resource].target.display_key()
        ),
        read.map(|read| ObjectRead {
            object: read.live.object.as_ref(),
            concern,
            pods: &read.live.pods,
            events: read.live.events.len(),
            warnings: read.live.events.iter().filter(|e| e.is_warning()).count(),
        }),
    );
    let mut lines = vec![Line::from(Span::styled(
        format!("# chain: how the template became what runs on {cluster_name}"),
        theme.title,
    ))];
    for (index, link) in links.iter().enumerate() {
        let arrow = if index == 0 { "  " } else { "→ " };
        let at = link
            .at
            .as_ref()
            .map_or_else(String::new, |at| format!("  ({at})"));
        let style = match link.step {
            "object" => theme.status_style(concern.severity()),
            "pods" if pods::worst(read.map_or(&[][..], |r| &r.live.pods[..])).is_some() => {
                theme.status_style(crate::model::StatusKind::Failed)
            }
            _ => theme.muted,
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{arrow}{:<9}", link.step), theme.muted),
            Span::styled(printable(&link.name, false), theme.text),
            Span::styled(at, theme.muted),
            Span::styled(format!("  {}", printable(&link.status, false)), style),
        ]));
    }
    lines.push(Line::from(""));
    lines
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

/// How a group's live state compares: the first (largest) group is the reference.
fn verdict(index: usize, group: &LiveGroup<usize>, groups: usize) -> String {
    if !group.present {
        "does not hold it".to_string()
    } else if index == 0 {
        if groups == 1 {
            "identical".to_string()
        } else {
            "identical (the most clusters)".to_string()
        }
    } else if group.differs.is_empty() {
        "differs in a Secret value".to_string()
    } else {
        format!("differs in {}", group.differs.join(", "))
    }
}

/// The placed clusters that could not be read, and how many are still being read.
fn unread_lines(
    state: &State,
    resource: usize,
    groups: &[LiveGroup<usize>],
    theme: &crate::config::theme::Theme,
) -> Vec<Line<'static>> {
    let placed = state.placed_clusters(resource);
    let read: usize = groups.iter().map(|g| g.members.len()).sum();
    let mut unread = placed.len() - read.min(placed.len());
    let mut lines = Vec::new();
    for cluster in placed {
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
                    state.clusters[cluster].spec.name,
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
    lines
}

/// What the backend read on a group's first cluster.
fn group_read<'a>(
    state: &'a State,
    resource: usize,
    group: &LiveGroup<usize>,
) -> Option<&'a LiveRead> {
    let first = group.members.first()?;
    state.live.reads.get(&CellRef {
        resource: resource as u32,
        cluster: *first as u32,
    })
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
    let groups = state.live_groups(resource);
    let placed = state.placed_clusters(resource).len();
    let mut lines = vec![muted(
        &format!("# {placed} clusters placed, grouped by identical live state (↑↓ pick a group)"),
        theme,
    )];
    let name = |cluster: &usize| state.clusters[*cluster].spec.name.clone();
    for (index, each) in groups.iter().enumerate() {
        let members: Vec<String> = each.members.iter().map(name).collect();
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
                printable(&verdict(index, each, groups.len()), false)
            ),
            style,
        )));
    }
    lines.extend(unread_lines(state, resource, &groups, theme));
    lines.extend(aggregate_lines(state, resource, theme));
    if let Some(chosen) = groups.get(group.min(groups.len().saturating_sub(1)))
        && let Some(first) = chosen.members.first()
        && let Some(read) = group_read(state, resource, chosen)
    {
        lines.push(Line::from(""));
        lines.push(muted(&format!("# live on {}", name(first)), theme));
        if read.live.object.is_none() {
            lines.push(muted("# not held", theme));
        }
        lines.extend(yaml_lines(&read.yaml, theme).into_iter().skip(scroll));
    }
    lines
}

/// The template's status as Karmada would aggregate it from the clusters read, the rule that
/// decided, and the hub's own beside it where there is one (a disagreement flagged); then, on
/// a Karmada hub, its per-member record ([`hub_member_lines`]).
fn aggregate_lines(
    state: &State,
    resource: usize,
    theme: &crate::config::theme::Theme,
) -> Vec<Line<'static>> {
    let mut lines = aggregation_lines(state, resource, theme);
    lines.extend(hub_member_lines(state, resource, theme));
    lines
}

/// The template's status as Karmada would aggregate it, and the hub's beside it.
fn aggregation_lines(
    state: &State,
    resource: usize,
    theme: &crate::config::theme::Theme,
) -> Vec<Line<'static>> {
    let Some(aggregated) = state.live.aggregated.get(&resource) else {
        return Vec::new();
    };
    let mut lines = vec![Line::from("")];
    match &aggregated.flotilla {
        Ok(aggregation) => {
            lines.push(muted(
                &format!(
                    "# aggregated status of the {} cluster(s) read, by {}",
                    aggregated.members,
                    printable(&aggregation.rule, false)
                ),
                theme,
            ));
            lines.extend(yaml_lines(&status_yaml(&aggregation.status), theme));
        }
        Err(reason) => lines.push(Line::from(Span::styled(
            format!("# aggregated status: {}", printable(reason, false)),
            theme.status_style(crate::model::StatusKind::Failed),
        ))),
    }
    match (aggregated.agrees(), &aggregated.hub) {
        (Some(true), _) => lines.push(muted("# the hub aggregated the same", theme)),
        (_, Some(hub)) => {
            lines.push(Line::from(Span::styled(
                "# the hub aggregated otherwise:".to_string(),
                theme.status_style(crate::model::StatusKind::Drifted),
            )));
            lines.extend(yaml_lines(&status_yaml(hub), theme));
        }
        (_, None) => {}
    }
    lines
}

/// On a Karmada hub: each member as its binding's `aggregatedStatus` records it (applied,
/// health, the status Karmada collected), and whether that is what flotilla read on the
/// member; where they differ the member is flagged and each difference given, the hub's
/// record beside flotilla's read (a status field by field).
fn hub_member_lines(
    state: &State,
    resource: usize,
    theme: &crate::config::theme::Theme,
) -> Vec<Line<'static>> {
    let Some(members) = state.live.hub_members.get(&resource) else {
        return Vec::new();
    };
    let drifted = theme.status_style(crate::model::StatusKind::Drifted);
    let mut lines = vec![
        Line::from(""),
        muted(
            &format!(
                "# the hub's record of {} member(s) (its binding's aggregatedStatus):",
                members.checks.len()
            ),
            theme,
        ),
    ];
    let said = |text: String, style| Line::from(Span::styled(printable(&text, false), style));
    for check in &members.checks {
        let applied = match (check.applied, check.applied_message.is_empty()) {
            (true, _) => "applied".to_string(),
            (false, true) => "not applied".to_string(),
            (false, false) => format!("not applied ({})", check.applied_message),
        };
        let health = if check.health.is_empty() {
            "no health"
        } else {
            check.health.as_str()
        };
        let head = format!("  {}: {applied}, {health}", check.cluster);
        let Some(read) = &check.read else {
            lines.push(said(format!("{head} · not read by flotilla"), theme.text));
            if let Some(status) = &check.status {
                lines.push(muted(&format!("    status {status}"), theme));
            }
            continue;
        };
        if check.differs.is_empty() {
            lines.push(said(format!("{head} · as flotilla read it"), theme.text));
            continue;
        }
        lines.push(said(
            format!(
                "{head} · differs from flotilla's read ({}):",
                check.differs.join(", ")
            ),
            drifted,
        ));
        let yes = |flag: bool| if flag { "yes" } else { "no" };
        for field in &check.differs {
            match *field {
                "applied" => lines.push(said(
                    format!(
                        "    applied: the hub {} · flotilla {} (the member {} it)",
                        yes(check.applied),
                        yes(read.applied),
                        if read.applied {
                            "holds"
                        } else {
                            "does not hold"
                        }
                    ),
                    drifted,
                )),
                "health" => lines.push(said(
                    format!(
                        "    health: the hub {health} · flotilla {}",
                        read.health.unwrap_or("none")
                    ),
                    drifted,
                )),
                _ => {
                    for (key, hub, ours) in
                        status_differences(check.status.as_ref(), read.status.as_ref())
                    {
                        lines.push(said(
                            format!("    status.{key}: the hub {hub} · flotilla {ours}"),
                            drifted,
                        ));
                    }
                }
            }
        }
    }
    lines
}

/// The top-level fields two collected statuses give differently (a missing one as `—`), in
/// key order, each value as compact JSON.
fn status_differences(
    hub: Option<&serde_json::Value>,
    ours: Option<&serde_json::Value>,
) -> Vec<(String, String, String)> {
    let fields = |status: Option<&serde_json::Value>| -> std::collections::BTreeMap<String, serde_json::Value> {
        status
            .and_then(serde_json::Value::as_object)
            .map(|fields| {
                fields
                    .iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (hub, ours) = (fields(hub), fields(ours));
    let shown =
        |value: Option<&serde_json::Value>| value.map_or("—".to_string(), |v| v.to_string());
    let mut keys: Vec<&String> = hub.keys().chain(ours.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|key| {
            !crate::engine::interpreter::status::same_status(
                hub.get(*key).unwrap_or(&serde_json::Value::Null),
                ours.get(*key).unwrap_or(&serde_json::Value::Null),
            )
        })
        .map(|key| (key.clone(), shown(hub.get(key)), shown(ours.get(key))))
        .collect()
}

/// The aggregated status on one line, for the side-by-side view: the status as compact JSON,
/// the rule, and the hub's verdict.
fn aggregate_summary(
    state: &State,
    resource: usize,
    theme: &crate::config::theme::Theme,
) -> Vec<Line<'static>> {
    let mut lines = aggregation_summary(state, resource, theme);
    if let Some(members) = state.live.hub_members.get(&resource) {
        let each: Vec<String> = members
            .checks
            .iter()
            .map(|check| match (&check.read, check.differs.is_empty()) {
                (None, _) => format!("{} not read", check.cluster),
                (Some(_), true) => format!("{} as read", check.cluster),
                (Some(_), false) => {
                    format!("{} differs ({})", check.cluster, check.differs.join(", "))
                }
            })
            .collect();
        let style = if members.checks.iter().any(|c| !c.differs.is_empty()) {
            theme.status_style(crate::model::StatusKind::Drifted)
        } else {
            theme.muted
        };
        lines.push(Line::from(Span::styled(
            printable(
                &format!("# the hub's record per member: {}", each.join(" · ")),
                false,
            ),
            style,
        )));
    }
    lines
}

/// The aggregation alone on one line.
fn aggregation_summary(
    state: &State,
    resource: usize,
    theme: &crate::config::theme::Theme,
) -> Vec<Line<'static>> {
    let Some(aggregated) = state.live.aggregated.get(&resource) else {
        return Vec::new();
    };
    let hub = match aggregated.agrees() {
        Some(true) => " · the hub aggregated the same",
        Some(false) => " · the hub aggregated otherwise",
        None => "",
    };
    let (text, style) = match &aggregated.flotilla {
        Ok(aggregation) => (
            format!(
                "# aggregated status {} by {}{hub}",
                aggregation.status, aggregation.rule
            ),
            if aggregated.agrees() == Some(false) {
                theme.status_style(crate::model::StatusKind::Drifted)
            } else {
                theme.muted
            },
        ),
        Err(reason) => (
            format!("# aggregated status: {reason}"),
            theme.status_style(crate::model::StatusKind::Failed),
        ),
    };
    vec![Line::from(Span::styled(printable(&text, false), style))]
}

fn status_yaml(status: &serde_json::Value) -> String {
    crate::engine::compare::diff::to_yaml(&serde_json::json!({ "status": status }))
}

/// The narrowest column of the side-by-side clusters view.
const COLUMN_MIN: u16 = 44;

/// Between two columns: " │ ".
const COLUMN_GAP: u16 = 3;

/// The most lines a column's heading gives its clusters' names.
const HEADING_LINES: usize = 3;

/// How many groups stand side by side in `width`: `None` (the list) unless there are two
/// groups or more and two columns fit.
fn columns_fit(groups: usize, width: u16) -> Option<usize> {
    let fit = usize::from(width.saturating_add(COLUMN_GAP) / (COLUMN_MIN + COLUMN_GAP));
    (groups > 1 && fit > 1).then(|| fit.min(groups))
}

/// Whether the clusters view draws its groups side by side in an area this wide.
fn side_by_side(state: &State, resource: usize, width: u16) -> bool {
    columns_fit(state.live_groups(resource).len(), width).is_some()
}

/// Names joined by ", " in lines at most `width` wide, at most [`HEADING_LINES`] of them, the
/// last saying how many more there are when they do not all fit.
fn name_lines(names: &[&str], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for (index, name) in names.iter().enumerate() {
        let piece = if index + 1 < names.len() {
            format!("{name},")
        } else {
            (*name).to_string()
        };
        let wanted =
            current.chars().count() + usize::from(!current.is_empty()) + piece.chars().count();
        if !current.is_empty() && wanted > width {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(&piece);
    }
    if !current.is_empty() {
        lines.push(current);
    }
    if lines.len() > HEADING_LINES {
        let shown: usize = lines[..HEADING_LINES - 1]
            .iter()
            .map(|line| line.matches(',').count())
            .sum();
        lines.truncate(HEADING_LINES - 1);
        lines.push(format!("and {} more", names.len() - shown));
    }
    lines.into_iter().map(|line| fit(&line, width)).collect()
}

/// The clusters view on a wide terminal: each group's live object in a column of its own,
/// headed by the group's clusters and how it compares, the picked group's column among those
/// shown. Lines stand beside the first group's line they equal or change, and what the first
/// group does not have stands out.
fn render_columns(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    context: &ViewContext,
    (resource, group, scroll): (usize, usize, usize),
) {
    let theme = context.theme;
    let groups = state.live_groups(resource);
    let Some(count) = columns_fit(groups.len(), area.width) else {
        return;
    };
    let picked = group.min(groups.len() - 1);
    let first = (picked + 1).saturating_sub(count);
    let placed = state.placed_clusters(resource).len();
    let window = if count < groups.len() {
        format!(
            ", groups {}–{} of {}",
            first + 1,
            first + count,
            groups.len()
        )
    } else {
        String::new()
    };
    let mut top = vec![muted(
        &format!(
            "# {placed} clusters placed in {} groups of identical live state, side by side (↑↓ pick a group{window})",
            groups.len()
        ),
        theme,
    )];
    top.extend(unread_lines(state, resource, &groups, theme));
    top.extend(aggregate_summary(state, resource, theme));
    let [top_area, columns_area] =
        Layout::vertical([Constraint::Length(top.len() as u16), Constraint::Min(1)]).areas(area);
    frame.render_widget(Paragraph::new(top), top_area);
    let mut constraints = Vec::new();
    for index in 0..count {
        if index > 0 {
            constraints.push(Constraint::Length(COLUMN_GAP));
        }
        constraints.push(Constraint::Fill(1));
    }
    let areas = Layout::horizontal(constraints).split(columns_area);
    let shown = &groups[first..first + count];
    let headings: Vec<Vec<String>> = shown
        .iter()
        .zip(areas.iter().step_by(2))
        .map(|(each, column)| {
            let names: Vec<&str> = each
                .members
                .iter()
                .map(|cluster| state.clusters[*cluster].spec.name.as_str())
                .collect();
            name_lines(&names, usize::from(column.width).saturating_sub(2))
        })
        .collect();
    let heading_height = headings.iter().map(Vec::len).max().unwrap_or(1);
    // Each shown group's object beside the first group's, line beside line.
    let reference: Vec<&str> = groups
        .first()
        .and_then(|reference| group_read(state, resource, reference))
        .map(|read| read.yaml.lines().collect())
        .unwrap_or_default();
    let reads: Vec<Option<&LiveRead>> = shown
        .iter()
        .map(|each| group_read(state, resource, each))
        .collect();
    let texts: Vec<Vec<&str>> = reads
        .iter()
        .map(|read| read.map_or_else(Vec::new, |read| read.yaml.lines().collect()))
        .collect();
    let slices: Vec<&[&str]> = texts.iter().map(Vec::as_slice).collect();
    let laid = live_state::side_by_side(&reference, &slices);
    for (offset, (each, heading)) in shown.iter().zip(headings).enumerate() {
        let index = first + offset;
        let column = areas[offset * 2];
        let width = usize::from(column.width);
        let chosen = index == picked;
        let style = if chosen { theme.selection } else { theme.title };
        let mut lines: Vec<Line> = Vec::new();
        for (row, name) in heading.iter().enumerate() {
            let marker = match (row, chosen) {
                (0, true) => "▸ ",
                _ => "  ",
            };
            lines.push(Line::from(Span::styled(format!("{marker}{name}"), style)));
        }
        while lines.len() < heading_height {
            lines.push(Line::from(""));
        }
        lines.push(Line::from(Span::styled(
            fit(
                &format!(
                    "  {}",
                    printable(&verdict(index, each, groups.len()), false)
                ),
                width,
            ),
            theme.muted,
        )));
        lines.push(Line::from(Span::styled("─".repeat(width), theme.muted)));
        match reads[offset] {
            None => lines.push(muted("# reading…", theme)),
            Some(read) if read.live.object.is_none() => lines.push(muted("# not held", theme)),
            Some(_) => {
                // What the first group does not have stands out.
                for cell in laid[offset].iter().skip(scroll) {
                    lines.push(match cell {
                        None => Line::from(""),
                        Some((line, differs)) => Line::from(Span::styled(
                            fit(&printable(line, false), width),
                            if *differs {
                                theme.diff_added
                            } else {
                                theme.text
                            },
                        )),
                    });
                }
            }
        }
        frame.render_widget(Paragraph::new(lines), column);
    }
    for gap in areas.iter().skip(1).step_by(2) {
        let bars: Vec<Line> = (0..gap.height)
            .map(|_| Line::from(Span::styled(" │ ", theme.muted)))
            .collect();
        frame.render_widget(Paragraph::new(bars), *gap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_groups_heading_names_what_fits_and_counts_the_rest() {
        let names: Vec<String> = (1..=40).map(|n| format!("edge-store-{n:04}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let lines = name_lines(&names, 40);
        assert_eq!(lines.len(), HEADING_LINES, "{lines:?}");
        assert_eq!(lines[0], "edge-store-0001, edge-store-0002,");
        assert_eq!(lines[2], "and 36 more");
        assert_eq!(
            name_lines(&names[..2], 40),
            ["edge-store-0001, edge-store-0002"]
        );
        // Where even one name is too wide, it is cut, not lost.
        assert_eq!(
            name_lines(&["a-very-long-cluster-name"], 10),
            ["a-very-lo…"]
        );
        assert_eq!(columns_fit(6, 78), None, "one column is the list");
        assert_eq!(columns_fit(1, 198), None, "one group is the list");
        assert_eq!(columns_fit(6, 198), Some(4));
        assert_eq!(columns_fit(2, 198), Some(2));
    }
}
