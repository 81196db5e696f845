//! The help overlay, generated from the key map in use so it always matches the bindings: the
//! section of the view it was opened from first (a cell's object, the drift view, an editor),
//! then the main view's keys; opened from the main view, the main keys and the cell symbols.
//! It must not list a key the map does not bind, nor change state.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::widgets::{DANGER_MARK, ViewContext, pane_block, popup};
use crate::app::state::{KeyContext, State};
use crate::config::keymap::{Section, ViewCommand};
use crate::model::{HealthKind, StatusKind};

pub(super) fn render(frame: &mut Frame, area: Rect, state: &State, context: &ViewContext) {
    let theme = context.theme;
    let readonly = state.readonly;
    let section = match state.view_key_context() {
        KeyContext::View(section) | KeyContext::Form(section) => Some(section),
        KeyContext::Commands | KeyContext::Typing => None,
    };
    // Two parts side by side: a view's keys and the main keys in halves, or the main keys and
    // the narrow cell symbols; one below the other where a half leaves a description less
    // than 20 columns. A description longer than its room goes on below its first line.
    let inner = area.width.saturating_sub(2);
    let (left, right) = match section {
        Some(_) => (inner / 2, inner - inner / 2),
        None => (inner.saturating_sub(SYMBOLS_COLUMN), SYMBOLS_COLUMN),
    };
    let needs = KEYS_COLUMN + 20;
    let side_by_side = left >= needs && (section.is_none() || right >= needs);
    let (left, right) = if side_by_side {
        (left, right)
    } else {
        (inner, inner)
    };
    let entry = |room: u16, (keys, description): &(String, &str)| {
        let width = usize::from(room.saturating_sub(KEYS_COLUMN + 1).max(20));
        wrapped(description, width)
            .into_iter()
            .enumerate()
            .map(|(index, part)| {
                let keys = if index == 0 { keys.as_str() } else { "" };
                Line::from(vec![
                    Span::styled(format!(" {keys:<22}"), theme.title),
                    Span::styled(part, theme.text),
                ])
            })
            .collect::<Vec<_>>()
    };
    let titled = |title: &str, entries: Vec<(String, &str)>, room: u16| {
        let mut lines = vec![Line::from(Span::styled(format!(" {title}"), theme.title))];
        lines.extend(entries.iter().flat_map(|item| entry(room, item)));
        lines
    };
    let main = |room: u16| {
        titled(
            "In the main view",
            context.keymap.help_entries(readonly),
            room,
        )
    };
    let (first, second) = match section {
        Some(section) => (
            titled(
                section.title(),
                context.keymap.section_help(section, readonly),
                left,
            ),
            main(right),
        ),
        None => {
            let mut symbols = vec![Line::from(Span::styled(" Cell symbols", theme.title))];
            // Every glyph the screen can show, from the tables the panes draw them from: the
            // sync statuses, the healths a cell shows instead when they are worse, the danger
            // mark.
            for kind in StatusKind::ALL {
                symbols.push(Line::from(vec![
                    Span::styled(
                        format!(" {:<3}", kind.symbol(context.ascii)),
                        theme.status_style(kind),
                    ),
                    Span::styled(kind.as_str().to_string(), theme.text),
                ]));
            }
            for kind in HealthKind::ALL {
                if let Some(symbol) = kind.symbol(context.ascii) {
                    symbols.push(Line::from(vec![
                        Span::styled(format!(" {symbol:<3}"), theme.status_style(kind.severity())),
                        Span::styled(format!("health {kind}"), theme.text),
                    ]));
                }
            }
            symbols.push(Line::from(vec![
                Span::styled(
                    format!(" {:<3}", DANGER_MARK.symbol(context.ascii)),
                    theme.danger,
                ),
                Span::styled(DANGER_MARK.meaning, theme.text),
            ]));
            symbols.push(Line::from(""));
            let help = context.keymap.view_hint(Section::Drift, ViewCommand::Help);
            for text in [
                " A cell's object, drift view".to_string(),
                " and editors have keys of their".to_string(),
                format!(" own: {help} in one lists them."),
            ] {
                symbols.push(Line::from(Span::styled(text, theme.muted)));
            }
            (main(left), symbols)
        }
    };
    let title = format!("Help — key map {}", context.keymap.name);
    let block = pane_block(&title, true, theme);
    let widest = |lines: &[Line]| lines.iter().map(Line::width).max().unwrap_or(0) as u16 + 1;
    let (left_width, right_width) = (widest(&first), widest(&second));
    if side_by_side {
        let popup = popup(
            frame,
            area,
            left_width + right_width + 2,
            first.len().max(second.len()),
        );
        let inner = block.inner(popup);
        frame.render_widget(block, popup);
        let [left, right] =
            Layout::horizontal([Constraint::Length(left_width), Constraint::Fill(1)]).areas(inner);
        frame.render_widget(Paragraph::new(first), left);
        frame.render_widget(Paragraph::new(second), right);
    } else {
        let width = left_width.max(right_width) + 2;
        let mut lines = first;
        lines.push(Line::from(""));
        lines.extend(second);
        let popup = popup(frame, area, width, lines.len());
        frame.render_widget(Paragraph::new(lines).block(block), popup);
    }
}

/// How wide the keys of an entry are shown (with the space before them).
const KEYS_COLUMN: u16 = 23;

/// How wide the part beside the keys is (the cell symbols, or the main view's keys).
const SYMBOLS_COLUMN: u16 = 34;

/// `text` in lines of at most `width` columns, broken between words (a word longer than a
/// line gets a line of its own).
fn wrapped(text: &str, width: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthStr;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.width() + 1 + word.width() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}
