//! Large digits for the wall: a 3×5 pixel font (digits, `.`, `k`, `M`) drawn with block
//! characters, each pixel `sx` columns wide and `sy` rows tall, so a count grows with the
//! space it is given. Counts too long for their space are shortened to three significant
//! figures (`12.3k`, `4.56M`). Pure drawing: it reads nothing but what it is handed.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

/// A glyph's rows, `#` for a lit pixel; every row of a glyph is as wide as its first.
fn glyph(c: char) -> Option<[&'static str; 5]> {
    Some(match c {
        '0' => ["###", "#.#", "#.#", "#.#", "###"],
        '1' => [".#.", "##.", ".#.", ".#.", "###"],
        '2' => ["###", "..#", "###", "#..", "###"],
        '3' => ["###", "..#", ".##", "..#", "###"],
        '4' => ["#.#", "#.#", "###", "..#", "..#"],
        '5' => ["###", "#..", "###", "..#", "###"],
        '6' => ["###", "#..", "###", "#.#", "###"],
        '7' => ["###", "..#", ".#.", ".#.", ".#."],
        '8' => ["###", "#.#", "###", "#.#", "###"],
        '9' => ["###", "#.#", "###", "..#", "###"],
        '.' => [".", ".", ".", ".", "#"],
        'k' => ["#..", "#.#", "##.", "#.#", "#.#"],
        'M' => ["#...#", "##.##", "#.#.#", "#...#", "#...#"],
        _ => return None,
    })
}

/// Pixel rows of a glyph.
pub const GLYPH_ROWS: u16 = 5;

/// Width of `text` in pixels, with one pixel between glyphs; `None` when the font lacks a
/// character.
pub fn pixel_width(text: &str) -> Option<u16> {
    let mut width = 0u16;
    for (i, c) in text.chars().enumerate() {
        let rows = glyph(c)?;
        width += rows[0].len() as u16 + u16::from(i > 0);
    }
    Some(width)
}

/// `count` as written, or shortened to three significant figures when longer than four
/// digits: 12345 → `12.3k`, 123456 → `123k`, 4567890 → `4.56M`. Shortened down, never up.
pub fn compact(count: u64) -> String {
    let (unit, suffix) = match count {
        0..=9_999 => return count.to_string(),
        10_000..=999_999 => (1_000, 'k'),
        _ => (1_000_000, 'M'),
    };
    let whole = count / unit;
    let rest = count % unit;
    match whole {
        0..=9 => format!("{whole}.{:02}{suffix}", rest * 100 / unit),
        10..=99 => format!("{whole}.{}{suffix}", rest * 10 / unit),
        _ => format!("{whole}{suffix}"),
    }
}

/// Draws `text` at scale (`sx`, `sy`), centred in `area`, in `style`; lit pixels are `█`, or
/// `#` in ASCII. Characters the font lacks are skipped.
pub fn draw(
    buffer: &mut Buffer,
    area: Rect,
    text: &str,
    (sx, sy): (u16, u16),
    style: Style,
    ascii: bool,
) {
    let Some(pixels) = pixel_width(text) else {
        return;
    };
    let width = pixels * sx;
    let height = GLYPH_ROWS * sy;
    let left = area.x + area.width.saturating_sub(width) / 2;
    let top = area.y + area.height.saturating_sub(height) / 2;
    let lit = if ascii { "#" } else { "█" };
    let mut x0 = left;
    for c in text.chars() {
        let Some(rows) = glyph(c) else {
            continue;
        };
        for (row, bits) in rows.iter().enumerate() {
            for (column, bit) in bits.chars().enumerate() {
                if bit != '#' {
                    continue;
                }
                for dy in 0..sy {
                    for dx in 0..sx {
                        let x = x0 + column as u16 * sx + dx;
                        let y = top + row as u16 * sy + dy;
                        if x < area.right()
                            && y < area.bottom()
                            && let Some(cell) = buffer.cell_mut((x, y))
                        {
                            cell.set_symbol(lit).set_style(style);
                        }
                    }
                }
            }
        }
        x0 += (rows[0].len() as u16 + 1) * sx;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_counts_shorten_to_three_figures_never_rounding_up() {
        assert_eq!(compact(0), "0");
        assert_eq!(compact(9_999), "9999");
        assert_eq!(compact(12_345), "12.3k");
        assert_eq!(compact(99_999), "99.9k");
        assert_eq!(compact(123_456), "123k");
        assert_eq!(compact(4_567_890), "4.56M");
        assert_eq!(compact(9_999_999), "9.99M");
        assert_eq!(compact(10_000_000), "10.0M");
        for count in [0, 7, 12_345, 999_999, 1_000_000, 123_456_789] {
            assert!(pixel_width(&compact(count)).is_some(), "{count}");
        }
    }

    #[test]
    fn digits_scale_and_stay_in_their_area() {
        assert_eq!(pixel_width("65"), Some(7));
        assert_eq!(
            pixel_width("4.56M"),
            Some(3 + 1 + 1 + 1 + 3 + 1 + 3 + 1 + 5)
        );
        assert_eq!(pixel_width("6x"), None);
        let area = Rect::new(0, 0, 18, 10);
        let mut buffer = Buffer::empty(area);
        draw(&mut buffer, area, "65", (2, 2), Style::default(), false);
        let lit: Vec<(u16, u16)> = (0..10)
            .flat_map(|y| (0..18).map(move |x| (x, y)))
            .filter(|&(x, y)| buffer[(x, y)].symbol() == "█")
            .collect();
        let rows = lit.iter().map(|&(_, y)| y).max().unwrap_or(0) - lit[0].1 + 1;
        assert_eq!(rows, 10, "five pixel rows, two rows each");
    }
}
