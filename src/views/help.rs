//! The help overlay, generated from the key map in use so it always matches the bindings. It
//! must not list a key the map does not bind, nor change state.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::widgets::{ViewContext, pane_block, popup};
use crate::model::StatusKind;

pub(super) fn render(frame: &mut Frame, area: Rect, context: &ViewContext, readonly: bool) {
    let theme = context.theme;
    let entries = context.keymap.help_entries(readonly);
    let mut lines: Vec<Line> = entries
        .iter()
        .map(|(keys, description)| {
            Line::from(vec![
                Span::styled(format!(" {keys:<22}"), theme.title),
                Span::styled(description.to_string(), theme.text),
            ])
        })
        .collect();
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(" Cell symbols", theme.title)));
    for kind in StatusKind::ALL {
        lines.push(Line::from(vec![
            Span::styled(
                format!(" {:<3}", kind.symbol(context.ascii)),
                theme.status_style(kind),
            ),
            Span::styled(kind.as_str().to_string(), theme.text),
        ]));
    }
    let popup = popup(frame, area, 56, lines.len());
    let title = format!("Help — key map {}", context.keymap.name);
    let block = pane_block(&title, true, theme);
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}
