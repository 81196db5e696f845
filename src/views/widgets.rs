//! What every view shares: the context it draws with (theme, key map, ASCII) and the small
//! building blocks — the frame made pure ASCII, a pane's bordered block, a centred popup, text
//! cut to fit (at the end or in the middle), the selected row's style,
//! scrolling that keeps the cursor visible. Pure drawing
//! helpers: they must not read the state beyond what they are handed, nor import a view.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders};

use crate::app::state::{Pane, State};
use crate::config::keymap::Keymap;
use crate::config::theme::Theme;

/// What every view needs besides the state.
pub struct ViewContext<'a> {
    pub theme: &'a Theme,
    pub keymap: &'a Keymap,
    /// Draw with ASCII symbols only.
    pub ascii: bool,
}

/// A glyph the screen draws beside a name, with what it means (for the help's legend).
pub(super) struct Mark {
    unicode: char,
    ascii: char,
    pub meaning: &'static str,
}

impl Mark {
    pub fn symbol(&self, ascii: bool) -> char {
        if ascii { self.ascii } else { self.unicode }
    }
}

/// Before a danger-class cluster's name: a caution, never a failure.
pub(super) const DANGER_MARK: Mark = Mark {
    unicode: '⚠',
    ascii: '!',
    meaning: "danger-class cluster",
};

/// `--ascii` is pure ASCII, byte for byte, whatever a view, a widget or a cluster's name drew:
/// box lines become `+`, `-` and `|`, an ellipsis or a middle dot `.`, arrows `<` `>` `^` `v`,
/// a caution `!`, a block `#`, and any other character outside ASCII `?`. The views choose
/// their own ASCII glyphs where one means something (`StatusKind::symbol`); this is the one
/// place that guarantees the rest.
pub(super) fn to_ascii(buffer: &mut Buffer, area: Rect) {
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            let Some(cell) = buffer.cell_mut((x, y)) else {
                continue;
            };
            if cell.symbol().is_ascii() {
                continue;
            }
            let plain = match cell.symbol().chars().next().unwrap_or(' ') {
                '─' | '━' | '═' | '╌' | '┄' => "-",
                '│' | '┃' | '║' | '╎' | '┆' => "|",
                '┌' | '┐' | '└' | '┘' | '├' | '┤' | '┬' | '┴' | '┼' | '╭' | '╮' | '╯' | '╰'
                | '╔' | '╗' | '╚' | '╝' | '┏' | '┓' | '┗' | '┛' => "+",
                '…' | '·' | '•' => ".",
                '▶' | '→' | '›' | '»' => ">",
                '◀' | '←' | '‹' | '«' => "<",
                '↑' | '▲' => "^",
                '↓' | '▼' => "v",
                '⚠' => "!",
                '█' => "#",
                _ => "?",
            };
            cell.set_symbol(plain);
        }
    }
}

/// A bordered block whose border shows whether its pane has the keyboard.
pub(super) fn pane_block<'a>(title: &'a str, focused: bool, theme: &Theme) -> Block<'a> {
    let border = if focused {
        theme.border_focused
    } else {
        theme.border
    };
    Block::default()
        .borders(Borders::ALL)
        .border_style(border)
        .title(Span::styled(format!(" {title} "), theme.title))
}

/// Truncates to `width` characters, marking the cut with an ellipsis.
pub(super) fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Shortens to `width` characters by cutting the middle, so names that share a beginning
/// (`payments/ledger`, `payments/ledger-config`) stay told apart by their ends:
/// `payments/l…dger`, `payments/l…nfig`. The start keeps the extra character of an odd cut.
pub(super) fn fit_middle(text: &str, width: usize) -> String {
    let count = text.chars().count();
    if count <= width {
        return text.to_string();
    }
    if width < 4 {
        return fit(text, width);
    }
    let tail = (width - 1) / 2;
    let head = width - 1 - tail;
    let mut cut: String = text.chars().take(head).collect();
    cut.push('…');
    cut.extend(text.chars().skip(count - tail));
    cut
}

/// The style for the row under the cursor in the focused pane.
pub(super) fn row_style(selected: bool, focused: bool, theme: &Theme) -> Style {
    if selected && focused {
        theme.selection
    } else {
        Style::default()
    }
}

pub(super) fn focused(state: &State, pane: Pane) -> bool {
    state.focus == pane
}

/// The first row to draw so the cursor stays visible in `rows` lines.
pub(super) fn scroll_offset(cursor: usize, rows: usize) -> usize {
    cursor.saturating_sub(rows.saturating_sub(1))
}

/// A popup of `lines` text lines (plus borders) at most `width` wide, centred in `area`, with
/// whatever was under it cleared.
pub(super) fn popup(frame: &mut Frame, area: Rect, width: u16, lines: usize) -> Rect {
    let height = (lines as u16).saturating_add(2).min(area.height);
    let width = width.min(area.width);
    let rect = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    frame.render_widget(ratatui::widgets::Clear, rect);
    rect
}

/// The inner area of a bordered block.
pub(super) fn inner(area: Rect) -> Rect {
    Rect {
        x: area.x.saturating_add(1),
        y: area.y.saturating_add(1),
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    }
}

/// The editors' review hint line, with the keys the map in use binds; `back` says where esc
/// goes (`back`, `edit`).
pub(super) fn review_hint(keymap: &Keymap, back: &str) -> String {
    use crate::config::keymap::{Section, ViewCommand};
    let key = |command| keymap.view_hint(Section::Editor, command);
    format!(
        " {} save and propagate (asks first) · {}/{} next/previous hunk · {} side by side · {}{} scroll · {} {back} · {} help",
        key(ViewCommand::Save),
        key(ViewCommand::NextChange),
        key(ViewCommand::PrevChange),
        key(ViewCommand::SideBySide),
        key(ViewCommand::Up),
        key(ViewCommand::Down),
        key(ViewCommand::Back),
        key(ViewCommand::Help),
    )
}

#[cfg(test)]
mod tests {
    use super::fit_middle;

    #[test]
    fn names_cut_in_the_middle_stay_distinct_and_fit() {
        let names = [
            "payments/ledger",
            "payments/ledger-config",
            "payments/ledger-db",
        ];
        let cut: Vec<String> = names.iter().map(|name| fit_middle(name, 12)).collect();
        for (name, short) in names.iter().zip(&cut) {
            assert!(short.chars().count() <= 12, "{short}");
            assert_eq!(short.chars().next(), name.chars().next());
            assert_eq!(short.chars().last(), name.chars().last());
        }
        assert_eq!(cut[1], "paymen…onfig");
        assert_ne!(cut[1], cut[2]);
        assert_eq!(fit_middle("short", 12), "short");
        assert_eq!(fit_middle("abcdef", 3), "ab…");
    }
}
