//! What every view shares: the context it draws with (theme, key map, ASCII) and the small
//! building blocks — the frame made pure ASCII, a pane's bordered block, a centred popup, text
//! cut to fit (at the end or in the middle), the selected row's style and a span's style on it
//! (kept readable: WCAG contrast), a filled card's colours, scrolling that keeps the cursor visible. Pure drawing
//! helpers: they must not read the state beyond what they are handed, nor import a view.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
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

/// A span's style on a row: its slot over the row's `base`. On a row with a background of its
/// own (the selected row) the slot's colour stays only where it reads against that background
/// (WCAG contrast of at least 4.5:1); elsewhere the row's own foreground takes its place, and
/// the span's glyph and words still say what it is.
pub(super) fn on_row(base: Style, slot: Style) -> Style {
    let style = base.patch(slot);
    match (slot.fg, slot.bg, base.bg, base.fg) {
        (Some(fg), None, Some(bg), Some(own))
            if contrast_ratio(fg, bg).is_none_or(|ratio| ratio < READABLE) =>
        {
            style.fg(own)
        }
        _ => style,
    }
}

/// A filled block (a wall tile) in a slot's colour: the slot's colour as the background and
/// black or white text, whichever contrasts more — never the terminal's own default, whose
/// colour is not known. Any colour reads against one of the two (the better is at least
/// √21 ≈ 4.6:1). Without colour (NO_COLOR, or a slot with none) the block is reversed.
pub(super) fn card(slot: Style) -> Style {
    // The slot's bold is left out: many terminals draw bold dark text brighter, which would
    // grey it on the fill. Whoever draws on the card makes what matters bold.
    let Some(fill) = slot.fg.filter(|colour| rgb(*colour).is_some()) else {
        return Style::default().add_modifier(Modifier::REVERSED);
    };
    // Black and white of the 256-colour cube, which terminal colour schemes leave as they
    // are (the 16 named colours are often re-tinted: a "black" that is dark grey).
    let text = [Color::Indexed(16), Color::Indexed(231)]
        .into_iter()
        .max_by(|a, b| {
            let ratio = |c| contrast_ratio(c, fill).unwrap_or(0.0);
            ratio(*a).total_cmp(&ratio(*b))
        })
        .unwrap_or(Color::Indexed(16));
    Style::default().fg(text).bg(fill)
}

/// WCAG 2's least contrast for ordinary text.
pub const READABLE: f64 = 4.5;

/// WCAG 2's contrast ratio of two colours (1 to 21), named and indexed colours taken at
/// xterm's defaults; `None` for the terminal's own default colour, which is not known.
pub fn contrast_ratio(a: Color, b: Color) -> Option<f64> {
    let (a, b) = (luminance(a)?, luminance(b)?);
    let (light, dark) = if a > b { (a, b) } else { (b, a) };
    Some((light + 0.05) / (dark + 0.05))
}

/// Relative luminance (WCAG 2) of a colour.
fn luminance(colour: Color) -> Option<f64> {
    let (r, g, b) = rgb(colour)?;
    let linear = |channel: u8| {
        let c = f64::from(channel) / 255.0;
        if c <= 0.03928 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    Some(0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b))
}

/// A colour's red, green and blue: xterm's defaults for the 16 named colours and the 256-colour
/// cube and grey ramp.
fn rgb(colour: Color) -> Option<(u8, u8, u8)> {
    const NAMED: [(u8, u8, u8); 16] = [
        (0x00, 0x00, 0x00),
        (0xcd, 0x00, 0x00),
        (0x00, 0xcd, 0x00),
        (0xcd, 0xcd, 0x00),
        (0x00, 0x00, 0xee),
        (0xcd, 0x00, 0xcd),
        (0x00, 0xcd, 0xcd),
        (0xe5, 0xe5, 0xe5),
        (0x7f, 0x7f, 0x7f),
        (0xff, 0x00, 0x00),
        (0x00, 0xff, 0x00),
        (0xff, 0xff, 0x00),
        (0x5c, 0x5c, 0xff),
        (0xff, 0x00, 0xff),
        (0x00, 0xff, 0xff),
        (0xff, 0xff, 0xff),
    ];
    let index = match colour {
        Color::Reset => return None,
        Color::Rgb(r, g, b) => return Some((r, g, b)),
        Color::Indexed(index) => index,
        Color::Black => 0,
        Color::Red => 1,
        Color::Green => 2,
        Color::Yellow => 3,
        Color::Blue => 4,
        Color::Magenta => 5,
        Color::Cyan => 6,
        Color::Gray => 7,
        Color::DarkGray => 8,
        Color::LightRed => 9,
        Color::LightGreen => 10,
        Color::LightYellow => 11,
        Color::LightBlue => 12,
        Color::LightMagenta => 13,
        Color::LightCyan => 14,
        Color::White => 15,
    };
    Some(match index {
        0..=15 => NAMED[usize::from(index)],
        16..=231 => {
            let step = |n: u8| if n == 0 { 0 } else { 55 + 40 * n };
            let n = index - 16;
            (step(n / 36), step(n / 6 % 6), step(n % 6))
        }
        _ => {
            let grey = 8 + 10 * (index - 232);
            (grey, grey, grey)
        }
    })
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
    use super::{READABLE, contrast_ratio, fit_middle, on_row};
    use crate::config::theme::{BUILT_IN, Theme};
    use crate::model::StatusKind;
    use ratatui::style::Color;

    #[test]
    fn contrast_is_wcags() {
        let ratio = |a, b| contrast_ratio(a, b).expect("known colours");
        assert!((ratio(Color::Black, Color::White) - 21.0).abs() < 1e-9);
        assert!((ratio(Color::White, Color::White) - 1.0).abs() < 1e-9);
        // WCAG's own examples: #777777 on white just misses 4.5:1, #767676 just makes it.
        assert!(ratio(Color::Rgb(0x77, 0x77, 0x77), Color::White) < READABLE);
        assert!(ratio(Color::Rgb(0x76, 0x76, 0x76), Color::White) >= READABLE);
        assert_eq!(ratio(Color::Indexed(15), Color::Indexed(16)), 21.0);
        assert_eq!(contrast_ratio(Color::Reset, Color::White), None);
    }

    /// Every status, health and chrome style a selected row can carry, in every shipped theme,
    /// reads against the selection: its own colour when that contrasts enough, else the
    /// selection's foreground.
    #[test]
    fn every_style_on_the_selected_row_reads_in_every_shipped_theme() {
        for (name, _) in BUILT_IN {
            let theme = Theme::load(Some(name), false);
            let selection = theme.selection;
            let bg = selection
                .bg
                .unwrap_or_else(|| panic!("{name}: selection has no bg"));
            let own = selection
                .fg
                .unwrap_or_else(|| panic!("{name}: selection has no fg"));
            let own_ratio = contrast_ratio(own, bg).unwrap_or(0.0);
            assert!(
                own_ratio >= READABLE,
                "{name}: selection itself {own_ratio:.2}:1"
            );
            let mut slots: Vec<(String, ratatui::style::Style)> = StatusKind::ALL
                .into_iter()
                .map(|kind| (format!("status.{kind}"), theme.status_style(kind)))
                .collect();
            slots.extend([
                ("text".to_string(), theme.text),
                ("muted".to_string(), theme.muted),
                ("danger".to_string(), theme.danger),
                ("health.ready".to_string(), theme.health_ready),
                ("health.not-ready".to_string(), theme.health_not_ready),
                ("health.unreachable".to_string(), theme.health_unreachable),
                ("health.unknown".to_string(), theme.health_unknown),
            ]);
            for (slot, style) in slots {
                let drawn = on_row(selection, style);
                let fg = drawn.fg.unwrap_or(own);
                let bg = drawn.bg.unwrap_or(bg);
                let ratio = contrast_ratio(fg, bg).unwrap_or(0.0);
                assert!(
                    ratio >= READABLE,
                    "{name}: {slot} on the selected row is {ratio:.2}:1 ({fg:?} on {bg:?})"
                );
            }
        }
    }

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
