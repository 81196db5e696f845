//! The help overlay, generated from the key map in use so it always matches the bindings: the
//! section of the view it was opened from first, then the main view's keys; opened from the
//! main view (or a cell's object, which reads the main keys), the main keys and the cell
//! symbols. It must not list a key the map does not bind, nor change state.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::widgets::{ViewContext, pane_block, popup};
use crate::app::state::State;
use crate::app::update::{KeyContext, view_key_context};
use crate::config::keymap::{Section, ViewCommand};
use crate::model::StatusKind;

pub(super) fn render(frame: &mut Frame, area: Rect, state: &State, context: &ViewContext) {
    let theme = context.theme;
    let readonly = state.readonly;
    let entry = |(keys, description): &(String, &str)| {
        Line::from(vec![
            Span::styled(format!(" {keys:<22}"), theme.title),
            Span::styled(description.to_string(), theme.text),
        ])
    };
    let titled = |title: &str, entries: Vec<(String, &str)>| {
        let mut lines = vec![Line::from(Span::styled(format!(" {title}"), theme.title))];
        lines.extend(entries.iter().map(entry));
        lines
    };
    let main = titled(
        "In the main view (and a cell's object)",
        context.keymap.help_entries(readonly),
    );
    let section = match view_key_context(state) {
        KeyContext::View(section) | KeyContext::Form(section) => Some(section),
        KeyContext::Commands | KeyContext::Typing => None,
    };
    let (first, second) = match section {
        Some(section) => (
            titled(
                section.title(),
                context.keymap.section_help(section, readonly),
            ),
            main,
        ),
        None => {
            let mut symbols = vec![Line::from(Span::styled(" Cell symbols", theme.title))];
            for kind in StatusKind::ALL {
                symbols.push(Line::from(vec![
                    Span::styled(
                        format!(" {:<3}", kind.symbol(context.ascii)),
                        theme.status_style(kind),
                    ),
                    Span::styled(kind.as_str().to_string(), theme.text),
                ]));
            }
            symbols.push(Line::from(""));
            let help = context.keymap.view_hint(Section::Drift, ViewCommand::Help);
            for text in [
                " The drift view and the editors have keys of their own:".to_string(),
                format!(" {help} in one lists them first."),
            ] {
                symbols.push(Line::from(Span::styled(text, theme.muted)));
            }
            (main, symbols)
        }
    };
    let title = format!("Help — key map {}", context.keymap.name);
    let block = pane_block(&title, true, theme);
    // The two parts side by side when the terminal is wide enough, else one below the other.
    let side_by_side = area.width >= 2 * COLUMN + 2;
    if side_by_side {
        let popup = popup(frame, area, 2 * COLUMN + 2, first.len().max(second.len()));
        let inner = block.inner(popup);
        frame.render_widget(block, popup);
        let [left, right] =
            Layout::horizontal([Constraint::Length(COLUMN), Constraint::Fill(1)]).areas(inner);
        frame.render_widget(Paragraph::new(first), left);
        frame.render_widget(Paragraph::new(second), right);
    } else {
        let mut lines = first;
        lines.push(Line::from(""));
        lines.extend(second);
        let popup = popup(frame, area, COLUMN, lines.len());
        frame.render_widget(Paragraph::new(lines).block(block), popup);
    }
}

/// One column of the help: keys and what they do.
const COLUMN: u16 = 58;
