//! The text inputs: the filter / palette line at the bottom, the palette's completions and the
//! confirmation popup. It must not change state nor work out completions: what was typed, and
//! what it completes to, is already in it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::widgets::{ViewContext, pane_block, popup};
use crate::app::state::{Mode, Pane, State};
use crate::safe_text::printable;

pub(super) fn render_line(frame: &mut Frame, area: Rect, state: &State, context: &ViewContext) {
    let theme = context.theme;
    let (prompt, input, error) = match &state.mode {
        Mode::Filter { pane, input, error } => {
            let prompt = match pane {
                Pane::Clusters => "filter clusters /",
                Pane::Resources => "filter resources /",
            };
            (prompt, input.as_str(), error.as_deref())
        }
        Mode::Palette { input, error, .. } => (":", input.as_str(), error.as_deref()),
        Mode::Exec(prompt) => return render_exec(frame, area, prompt, context),
        _ => return,
    };
    let mut spans = vec![
        Span::styled(format!(" {prompt}"), theme.title),
        Span::styled(input.to_string(), theme.text),
        Span::styled("▏", theme.title),
    ];
    match error {
        Some(error) => spans.push(Span::styled(
            format!("   ✗ {error}"),
            theme.status_style(crate::model::StatusKind::Failed),
        )),
        None => spans.push(Span::styled("   enter apply · esc cancel", theme.muted)),
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// `x`'s line: the command to run and where, then (on a danger-class cluster) its name.
fn render_exec(
    frame: &mut Frame,
    area: Rect,
    prompt: &crate::app::state::exec::ExecPrompt,
    context: &ViewContext,
) {
    let theme = context.theme;
    let mut spans = match &prompt.confirm {
        None => vec![
            Span::styled(
                match prompt.chosen_pod() {
                    Some(pod) => format!(
                        " exec in pod {} of {} on {} $ ",
                        printable(pod, false),
                        prompt.workload,
                        prompt.cluster
                    ),
                    None => format!(" exec in {} on {} $ ", prompt.workload, prompt.cluster),
                },
                theme.title,
            ),
            Span::styled(prompt.input.clone(), theme.text),
        ],
        Some(typed) => vec![
            Span::styled(
                format!(
                    " {} is a danger-class cluster: type its name ",
                    prompt.cluster
                ),
                theme.danger,
            ),
            Span::styled(typed.clone(), theme.text),
        ],
    };
    spans.push(Span::styled("▏", theme.title));
    let hint = if prompt.pods.len() > 1 && prompt.confirm.is_none() {
        format!(
            "   tab next pod ({}/{}) · enter run · esc cancel",
            prompt.pod + 1,
            prompt.pods.len()
        )
    } else {
        "   enter run · esc cancel".to_string()
    };
    spans.push(Span::styled(hint, theme.muted));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

pub(super) fn render_completions(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    context: &ViewContext,
) {
    let Mode::Palette {
        selected,
        completions,
        ..
    } = &state.mode
    else {
        return;
    };
    let theme = context.theme;
    if completions.is_empty() || area.height < 4 {
        return;
    }
    let rows = completions
        .len()
        .min(usize::from(area.height.saturating_sub(2)).min(12));
    let first = selected.saturating_sub(rows.saturating_sub(1));
    let lines: Vec<Line> = completions
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(index, (line, description))| {
            let style = if index == *selected {
                theme.selection
            } else {
                theme.text
            };
            Line::from(vec![
                Span::styled(format!(" :{line:<36}"), style),
                Span::styled(format!(" {description}"), theme.muted),
            ])
        })
        .collect();
    let height = rows as u16 + 2;
    let width = 72.min(area.width);
    let popup = Rect {
        x: area.x,
        y: area.y + area.height - height,
        width,
        height,
    };
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(pane_block("tab complete · ↑↓ choose", true, theme)),
        popup,
    );
}

/// The confirmation before a write: what would change, and what to type.
pub(super) fn render_confirm(frame: &mut Frame, area: Rect, state: &State, context: &ViewContext) {
    let Mode::Confirm(pending) = &state.mode else {
        return;
    };
    let theme = context.theme;
    let mut lines: Vec<Line> = pending
        .summary
        .iter()
        .take(usize::from(area.height.saturating_sub(7)))
        .map(|line| Line::from(Span::styled(format!(" {line}"), theme.text)))
        .collect();
    let clusters: std::collections::BTreeSet<u32> =
        pending.cells.iter().map(|cell| cell.cluster).collect();
    // On a hub its controllers roll the change out: there are no waves to choose.
    let (verb, title) = match (&state.hub, &pending.save) {
        _ if pending.reload.is_some() => (
            "reload and edit again",
            "Changed on disk: nothing was written",
        ),
        _ if pending.placement.is_some() => (
            "write to the hub",
            "Write the Placement? Nothing is written until you confirm",
        ),
        (Some(_), None) => (
            "reschedule",
            "Reschedule? Nothing is written until you confirm",
        ),
        (Some(_), Some(_)) => (
            "write to the hub",
            "Write to the hub? Nothing is written until you confirm",
        ),
        (None, _) => (
            "propagate",
            "Propagate? Nothing is written until you confirm",
        ),
    };
    if clusters.len() > 1 && state.hub.is_none() {
        let canary = clusters
            .first()
            .and_then(|c| state.clusters.get(*c as usize))
            .map(|row| row.spec.name.as_str())
            .unwrap_or_default();
        if pending.waves {
            // What the gate waits for can be long: it gets a line of its own.
            lines.push(Line::from(Span::styled(
                format!(" waves: {canary} first,"),
                theme.text,
            )));
            lines.push(Line::from(Span::styled(
                format!(
                    "   then the rest once it is {} (tab: all at once)",
                    state.wave_gate
                ),
                theme.text,
            )));
        } else {
            lines.push(Line::from(Span::styled(
                format!(
                    " all {} clusters at once (tab: {canary} first as a canary)",
                    clusters.len()
                ),
                theme.text,
            )));
        }
    }
    lines.push(Line::from(""));
    if pending.confirm_word == "y" {
        lines.push(Line::from(Span::styled(
            format!(" y {verb} · n / esc cancel"),
            theme.title,
        )));
    } else {
        lines.push(Line::from(Span::styled(
            format!(" ⚠ {} is a danger-class cluster", pending.confirm_word),
            theme.danger,
        )));
        lines.push(Line::from(vec![
            Span::styled(
                format!(" type {} and enter to {verb}: ", pending.confirm_word),
                theme.title,
            ),
            Span::styled(pending.typed.clone(), theme.text),
            Span::styled("▏", theme.title),
        ]));
    }
    let popup = popup(frame, area, 80, lines.len());
    frame.render_widget(
        Paragraph::new(lines).block(pane_block(title, true, theme)),
        popup,
    );
}
