//! The log pane (`L`), full width over the panes: the workload and the clusters read in its
//! title, its keys in the footer, its state (following, scrolled back, paused with how many lines
//! are held or dropped, narrowed to a cluster or a container, timestamps, the previous run), the
//! lines ending at the view's place, each `CLUSTER POD CONTAINER` in the cluster's colour (none
//! under `NO_COLOR`) and, with timestamps, the time it was printed, the search's match
//! highlighted, and the search being typed on its last row. It must not change the pane, nor
//! show a line's text other than as the pane keeps it (already escaped).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use unicode_width::UnicodeWidthStr;

use super::widgets::{ViewContext, inner, pane_block};
use crate::app::state::logs::{LogPane, PaneLine};
use crate::config::keymap::{Section, ViewCommand};
use crate::engine::logs::cluster_colour;

pub(super) fn render(frame: &mut Frame, area: Rect, pane: &LogPane, context: &ViewContext) {
    let theme = context.theme;
    let clusters: Vec<&str> = pane
        .clusters
        .iter()
        .map(|(_, name)| name.as_str())
        .collect();
    // The pane's keys are in the footer.
    let title = format!(
        "logs of {}{} on {}",
        pane.workload,
        if pane.previous { " (previous run)" } else { "" },
        clusters.join(", "),
    );
    frame.render_widget(pane_block(&title, true, theme), area);
    let area = inner(area);
    let [status_area, lines_area] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    frame.render_widget(Paragraph::new(status_line(pane, context)), status_area);
    let (lines_area, search_area) = match &pane.typing {
        Some(_) if lines_area.height > 1 => {
            let [lines, search] =
                Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(lines_area);
            (lines, Some(search))
        }
        _ => (lines_area, None),
    };
    if let (Some(search_area), Some(typed)) = (search_area, &pane.typing) {
        frame.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled("search: /", theme.title),
                Span::raw(typed.clone()),
                Span::styled("▏", theme.muted),
            ])),
            search_area,
        );
    }
    let width = usize::from(lines_area.width.max(1));
    let height = usize::from(lines_area.height);
    // The lines ending at the view's place, as many as fill the area.
    let shown: Vec<&PaneLine> = pane.shown().collect();
    let end = shown.len().saturating_sub(pane.scroll);
    let mut rows = 0;
    let mut start = end;
    while start > 0 && rows < height {
        start -= 1;
        rows += if pane.wrap {
            let line = shown[start];
            let stamp = if pane.timestamps {
                line.stamp().width()
            } else {
                0
            };
            (line.prefix().width() + stamp + line.body().width())
                .div_ceil(width)
                .max(1)
        } else {
            1
        };
    }
    let lines: Vec<Line> = shown[start..end]
        .iter()
        .map(|line| styled(line, pane, context))
        .collect();
    if lines.is_empty() {
        let waiting = if pane.paused {
            "paused: nothing is read into the pane"
        } else {
            "waiting for lines…"
        };
        frame.render_widget(
            Paragraph::new(Span::styled(waiting, theme.muted)),
            lines_area,
        );
        return;
    }
    let mut paragraph = Paragraph::new(lines);
    if pane.wrap {
        // The first line shown may wrap above the area: its first rows are left out.
        let over = rows.saturating_sub(height);
        paragraph = paragraph
            .wrap(Wrap { trim: false })
            .scroll((over.min(usize::from(u16::MAX)) as u16, 0));
    }
    frame.render_widget(paragraph, lines_area);
}

/// The pane's keys for the footer, from the key map in use.
pub(super) fn footer_hints(context: &ViewContext) -> Vec<Span<'static>> {
    let theme = context.theme;
    [
        (ViewCommand::Back, "close"),
        (ViewCommand::Pause, "pause"),
        (ViewCommand::Follow, "follow"),
        (ViewCommand::Search, "search"),
        (ViewCommand::NextMatch, "older match"),
        (ViewCommand::Wrap, "wrap"),
        (ViewCommand::Timestamps, "timestamps"),
        (ViewCommand::NextCluster, "cluster"),
        (ViewCommand::NextContainer, "container"),
        (ViewCommand::Copy, "copy"),
        (ViewCommand::Previous, "previous"),
        (ViewCommand::AllClusters, "all clusters"),
        (ViewCommand::Help, "help"),
    ]
    .into_iter()
    .filter_map(|(command, label)| {
        let key = context
            .keymap
            .view_keys(Section::Logs, command)
            .into_iter()
            .next()?;
        Some([
            Span::styled(format!(" {key}"), theme.title),
            Span::styled(format!(" {label} "), theme.muted),
        ])
    })
    .flatten()
    .collect()
}

/// The pane's state: following or scrolled back, paused, narrowed, wrapping, the search.
fn status_line<'a>(pane: &'a LogPane, context: &ViewContext) -> Line<'a> {
    let theme = context.theme;
    let mut parts: Vec<Span> = Vec::new();
    let mut say = |text: String, style: Style| {
        if !parts.is_empty() {
            parts.push(Span::styled(" · ", theme.muted));
        }
        parts.push(Span::styled(text, style));
    };
    if let Some(marker) = pane.marker() {
        let style = if pane.paused {
            theme.danger
        } else {
            theme.muted
        };
        say(marker, style.add_modifier(Modifier::BOLD));
    }
    if pane.follow {
        say("following".into(), theme.text);
    } else {
        say(
            format!("scrolled back {} lines (follow off)", pane.scroll),
            theme.text,
        );
    }
    say(format!("{} lines", pane.shown_len()), theme.muted);
    if let Some((_, name)) = pane.only.and_then(|at| pane.clusters.get(at)) {
        say(format!("only {name}"), theme.title);
    }
    if let Some(name) = pane.only_container_name() {
        say(format!("only container {name}"), theme.title);
    }
    if pane.timestamps {
        say("timestamps".into(), theme.muted);
    }
    if pane.wrap {
        say("wrap".into(), theme.muted);
    }
    if let Some(search) = &pane.search {
        say(format!("/{search}"), theme.muted);
    }
    Line::from(parts)
}

/// ANSI foreground codes of the engine's cluster palette as the terminal's named colours.
fn colour_of(code: u8) -> Color {
    match code {
        31 => Color::Red,
        32 => Color::Green,
        33 => Color::Yellow,
        34 => Color::Blue,
        35 => Color::Magenta,
        _ => Color::Cyan,
    }
}

fn styled<'a>(line: &'a PaneLine, pane: &LogPane, context: &ViewContext) -> Line<'a> {
    let theme = context.theme;
    let found = pane.found == Some(line.seq);
    // The search's match stands out as the selection does elsewhere.
    let mark = |style: Style| if found { theme.selection } else { style };
    if line.note {
        return Line::from(Span::styled(line.text.as_str(), mark(theme.danger)));
    }
    let prefix_style = match pane.clusters.get(line.cluster) {
        Some((position, _)) if theme.colour => {
            Style::default().fg(colour_of(cluster_colour(*position)))
        }
        _ => theme.muted,
    };
    let mut spans = vec![Span::styled(line.prefix(), mark(prefix_style))];
    if pane.timestamps && line.stamp > 0 {
        spans.push(Span::styled(line.stamp(), mark(theme.muted)));
    }
    spans.push(Span::styled(line.body(), mark(theme.text)));
    Line::from(spans)
}
