//! The drift view, over the whole width below the header (its rows are long): every drifted field, grouped across clusters, with
//! desired and live values, the manager that changed it and when, since when it drifts, owner
//! fights, marks, the last repair's progress, and the fleet's ignore rules; plus the
//! confirmation popup listing what a repair writes. It must not change state.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::widgets::{ViewContext, fit, fit_middle, pane_block, popup, scroll_offset};
use crate::app::state::State;
use crate::app::state::drift::{DriftView, Group, Pane, Row, Stage, rows};
use crate::config::keymap::{Section, ViewCommand};
use crate::engine::compare::secrets;
use crate::model::StatusKind;

/// A group's desired and live values as drawn: a Secret's masked.
fn shown(group: &Group) -> (serde_json::Value, serde_json::Value) {
    if group.secret {
        secrets::mask_field(&group.desired, &group.live)
    } else {
        (group.desired.clone(), group.live.clone())
    }
}

/// A field's row cut to `width`: who changed it and when (`tail`) stays whole longest; the
/// desired and live values give way first, each cut in the middle, and only then the row's end.
fn fit_row(head: &str, (desired, live): (&str, &str), tail: &str, width: usize) -> String {
    let row = |desired: &str, live: &str| format!("{head}  desired {desired}  live {live}  {tail}");
    let whole = row(desired, live);
    if whole.chars().count() <= width {
        return whole;
    }
    let fixed = row("", "").chars().count();
    let room = width.saturating_sub(fixed).max(8);
    let each = room / 2;
    fit(
        &row(&fit_middle(desired, each), &fit_middle(live, room - each)),
        width,
    )
}

fn age(state: &State, since_ms: Option<u64>) -> String {
    match since_ms {
        Some(since) => {
            let secs = state.now_ms.saturating_sub(since) / 1000;
            if secs >= 3600 {
                format!("{}h{}m", secs / 3600, secs % 3600 / 60)
            } else if secs >= 60 {
                format!("{}m{}s", secs / 60, secs % 60)
            } else {
                format!("{secs}s")
            }
        }
        None => "?".into(),
    }
}

pub(super) fn render(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    view: &DriftView,
    context: &ViewContext,
) {
    let theme = context.theme;
    let groups = state.drift.groups(&state.cells);
    let rows = rows(&groups);
    let width = usize::from(area.width.saturating_sub(2));
    let fields: usize = groups.iter().map(|g| g.members.len()).sum();
    let title = format!(
        "Drift · {fields} field(s) in {} group(s) · {} marked",
        groups.len(),
        view.marked.len()
    );
    let mut lines: Vec<Line> = Vec::new();
    let key = |command| context.keymap.view_hint(Section::Drift, command);
    let moves = format!(
        "{}/{} move · {} rules",
        key(ViewCommand::Down),
        key(ViewCommand::Up),
        key(ViewCommand::SwitchPane)
    );
    let keys = if state.readonly {
        format!(
            "read-only: look only · {moves} · {} back · {} help",
            key(ViewCommand::Back),
            key(ViewCommand::Help)
        )
    } else {
        format!(
            "{} · {} mark · {} revert · {} adopt · {} ignore · ({} removes a rule) · {} back · {} help",
            moves,
            key(ViewCommand::Mark),
            key(ViewCommand::Revert),
            key(ViewCommand::Adopt),
            key(ViewCommand::Ignore),
            key(ViewCommand::RemoveRule),
            key(ViewCommand::Back),
            key(ViewCommand::Help)
        )
    };
    lines.push(Line::from(Span::styled(fit(&keys, width), theme.muted)));
    if let Some(batch) = &state.drift.last_batch {
        let mut settled = [0usize; 3];
        for cell in &batch.cells {
            match state
                .cells
                .kind(cell.resource as usize, cell.cluster as usize)
            {
                StatusKind::InSync => settled[0] += 1,
                StatusKind::Pending => settled[1] += 1,
                _ => settled[2] += 1,
            }
        }
        lines.push(Line::from(Span::styled(
            fit(
                &format!(
                    "last {}: {} field(s) on {} cell(s): {} in sync · {} in progress · {} other",
                    batch.verb.name(),
                    batch.fields,
                    batch.cells.len(),
                    settled[0],
                    settled[1],
                    settled[2]
                ),
                width,
            ),
            theme.text,
        )));
    }
    lines.push(Line::from(""));
    let rules_height = (view.rules.len() + 2).min(8);
    let list_rows = usize::from(area.height.saturating_sub(2))
        .saturating_sub(lines.len() + rules_height)
        .max(1);
    if rows.is_empty() {
        lines.push(Line::from(Span::styled(
            "no drift: every reported cell matches its desired state",
            theme.muted,
        )));
    }
    let first = scroll_offset(view.cursor, list_rows);
    for (index, row) in rows.iter().enumerate().skip(first).take(list_rows) {
        let selected = index == view.cursor && view.pane == Pane::Fields;
        let style = if selected {
            theme.selection
        } else {
            theme.text
        };
        let text = match *row {
            Row::Group(g) => {
                let group = &groups[g];
                let resource = state
                    .resources
                    .get(group.resource)
                    .map(|r| r.target.display_key())
                    .unwrap_or_default();
                let all_marked = group
                    .members
                    .iter()
                    .all(|m| view.marked.contains(&(m.cell, group.path.clone())));
                let mark = if all_marked { "[x]" } else { "[ ]" };
                let (desired, live) = shown(group);
                if let [m] = group.members.as_slice() {
                    let cluster = state
                        .clusters
                        .get(m.cell.cluster as usize)
                        .map(|c| c.spec.name.as_str())
                        .unwrap_or("?");
                    fit_row(
                        &format!("{mark} {cluster}  {resource}  {}", group.path),
                        (&desired.to_string(), &live.to_string()),
                        &format!(
                            "by {} changed {} · drifted {}{}",
                            m.manager.as_deref().unwrap_or("?"),
                            m.changed.as_deref().unwrap_or("?"),
                            age(state, m.since_ms),
                            fight_note(m.fight.as_deref())
                        ),
                        width,
                    )
                } else {
                    fit_row(
                        &format!(
                            "{mark} {} clusters  {resource}  {}",
                            group.members.len(),
                            group.path
                        ),
                        (&desired.to_string(), &live.to_string()),
                        "(grouped)",
                        width,
                    )
                }
            }
            Row::Member(g, m) => {
                let group = &groups[g];
                let member = &group.members[m];
                let cluster = state
                    .clusters
                    .get(member.cell.cluster as usize)
                    .map(|c| c.spec.name.as_str())
                    .unwrap_or("?");
                let mark = if view.marked.contains(&(member.cell, group.path.clone())) {
                    "[x]"
                } else {
                    "[ ]"
                };
                format!(
                    "    {mark} {cluster}  by {} changed {} · drifted {}{}",
                    member.manager.as_deref().unwrap_or("?"),
                    member.changed.as_deref().unwrap_or("?"),
                    age(state, member.since_ms),
                    fight_note(member.fight.as_deref())
                )
            }
        };
        let style = if text.contains("owner fight") && !selected {
            theme.status_style(StatusKind::Conflict)
        } else {
            style
        };
        lines.push(Line::from(Span::styled(fit(&text, width), style)));
    }
    while lines.len() < usize::from(area.height.saturating_sub(2)).saturating_sub(rules_height) {
        lines.push(Line::from(""));
    }
    let rules_title = format!(
        "Ignore rules ({}){}",
        view.rules.len(),
        if view.pane == Pane::Rules {
            " · d remove (asks first)"
        } else {
            ""
        }
    );
    lines.push(Line::from(Span::styled(rules_title, theme.title)));
    if view.rules.is_empty() {
        lines.push(Line::from(Span::styled("none", theme.muted)));
    }
    for (index, rule) in view
        .rules
        .iter()
        .enumerate()
        .take(rules_height.saturating_sub(1))
    {
        let selected = index == view.rule_cursor && view.pane == Pane::Rules;
        lines.push(Line::from(Span::styled(
            fit(
                &format!("{}  {}  ({})", rule.name, rule.summary, rule.location),
                width,
            ),
            if selected {
                theme.selection
            } else {
                theme.text
            },
        )));
    }
    frame.render_widget(
        Paragraph::new(lines).block(pane_block(&title, true, theme)),
        area,
    );
}

fn fight_note(fight: Option<&str>) -> String {
    match fight {
        Some(manager) => format!(
            " · ⚔ owner fight with {manager}: it changed the field again after a revert; i ignores it"
        ),
        None => String::new(),
    }
}

/// The confirmation popup of a repair.
pub(super) fn render_confirm(
    frame: &mut Frame,
    area: Rect,
    view: &DriftView,
    context: &ViewContext,
) {
    let Stage::Confirming(plan) = &view.stage else {
        return;
    };
    let theme = context.theme;
    let width = area.width.saturating_sub(4).min(110);
    let inner = usize::from(width.saturating_sub(3));
    let mut lines: Vec<Line> = plan
        .lines
        .iter()
        .take(usize::from(area.height.saturating_sub(7)))
        .map(|line| {
            let style = if line.trim_start().starts_with("+ ") {
                theme.status_style(StatusKind::InSync)
            } else if line.trim_start().starts_with("- ") {
                theme.status_style(StatusKind::Failed)
            } else {
                theme.text
            };
            Line::from(Span::styled(format!(" {}", fit(line, inner)), style))
        })
        .collect();
    if plan.lines.len() > lines.len() {
        lines.push(Line::from(Span::styled(
            format!(" … {} more line(s)", plan.lines.len() - lines.len()),
            theme.muted,
        )));
    }
    lines.push(Line::from(""));
    let verb = plan.verb.name();
    if plan.confirm_word == "y" {
        lines.push(Line::from(Span::styled(
            format!(" y {verb} · n / esc cancel"),
            theme.title,
        )));
    } else {
        lines.push(Line::from(Span::styled(
            format!(" ⚠ {} is a danger-class cluster", plan.confirm_word),
            theme.danger,
        )));
        lines.push(Line::from(vec![
            Span::styled(
                format!(" type {} and enter to {verb}: ", plan.confirm_word),
                theme.title,
            ),
            Span::styled(plan.typed.clone(), theme.text),
            Span::styled("▏", theme.title),
        ]));
    }
    let title = format!(
        "{}? Nothing is written until you confirm",
        capitalised(verb)
    );
    let rect = popup(frame, area, width, lines.len());
    frame.render_widget(
        Paragraph::new(lines).block(pane_block(&title, true, theme)),
        rect,
    );
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
