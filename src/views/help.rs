//! The help overlay, generated from the key map in use so it always matches the bindings: the
//! main view's keys, then each view's own section. It must not list a key the map does not
//! bind, nor change state.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::widgets::{ViewContext, pane_block, popup};
use crate::config::keymap::Section;
use crate::model::StatusKind;

pub(super) fn render(frame: &mut Frame, area: Rect, context: &ViewContext, readonly: bool) {
    let theme = context.theme;
    let entry = |(keys, description): &(String, &str)| {
        Line::from(vec![
            Span::styled(format!(" {keys:<22}"), theme.title),
            Span::styled(description.to_string(), theme.text),
        ])
    };
    let mut main: Vec<Line> = context
        .keymap
        .help_entries(readonly)
        .iter()
        .map(entry)
        .collect();
    main.push(Line::from(""));
    main.push(Line::from(Span::styled(" Cell symbols", theme.title)));
    for kind in StatusKind::ALL {
        main.push(Line::from(vec![
            Span::styled(
                format!(" {:<3}", kind.symbol(context.ascii)),
                theme.status_style(kind),
            ),
            Span::styled(kind.as_str().to_string(), theme.text),
        ]));
    }
    let mut views: Vec<Line> = Vec::new();
    for section in Section::ALL {
        if !views.is_empty() {
            views.push(Line::from(""));
        }
        views.push(Line::from(Span::styled(
            format!(" {}", section.title()),
            theme.title,
        )));
        views.extend(
            context
                .keymap
                .section_help(section, readonly)
                .iter()
                .map(entry),
        );
    }
    let title = format!("Help — key map {}", context.keymap.name);
    let block = pane_block(&title, true, theme);
    // The views' sections beside the main keys when the terminal is wide enough, else below.
    let side_by_side = area.width >= 2 * COLUMN + 2;
    if side_by_side {
        let popup = popup(frame, area, 2 * COLUMN + 2, main.len().max(views.len()));
        let inner = block.inner(popup);
        frame.render_widget(block, popup);
        let [left, right] =
            Layout::horizontal([Constraint::Length(COLUMN), Constraint::Fill(1)]).areas(inner);
        frame.render_widget(Paragraph::new(main), left);
        frame.render_widget(Paragraph::new(views), right);
    } else {
        main.push(Line::from(""));
        main.extend(views);
        let popup = popup(frame, area, COLUMN, main.len());
        frame.render_widget(Paragraph::new(main).block(block), popup);
    }
}

/// One column of the help: keys and what they do.
const COLUMN: u16 = 58;
