//! The wall display: summary tiles, then Degraded and Drifted cells and Unreachable clusters
//! in large digits, each with a sparkline of its last hour, a heatmap
//! with one cell per cluster grouped by region or provider (coloured by the worse of sync and
//! health), and the worst problems with their age — readable from across a room. Pure: it
//! draws `&State` and never changes it; pages that do not fit are chosen by `wall.page`.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, RenderDirection, Sparkline};
use tui_big_text::{BigText, PixelSize};

use super::widgets::{ViewContext, fit};
use crate::app::state::history::Sample;
use crate::app::state::{State, group_value};
use crate::model::{Health, HealthKind, StatusKind};

/// Draws the wall display.
pub fn render(frame: &mut Frame, state: &State, context: &ViewContext) {
    let area = frame.area();
    let theme = context.theme;
    if area.width < 20 || area.height < 8 {
        frame.render_widget(
            Paragraph::new("flotilla watch: terminal too small").style(theme.muted),
            area,
        );
        return;
    }
    let problem_rows = (area.height / 4).clamp(3, 12);
    // Digits four rows tall when the screen has room for them and the heatmap.
    let trend_rows = if area.height >= 30 { 6 } else { 4 };
    let [title, counts, trends, heat, problems] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(4),
        Constraint::Length(trend_rows),
        Constraint::Min(3),
        Constraint::Length(problem_rows + 2),
    ])
    .areas(area);
    let pages = heatmap_pages(state, heat);
    let page = state.wall.as_ref().map_or(0, |wall| {
        wall.page.rem_euclid(pages.len().max(1) as i64) as usize
    });
    render_title(frame, title, state, context, page, pages.len());
    render_counts(frame, counts, state, context);
    render_trends(frame, trends, state, context);
    render_heatmap(
        frame,
        heat,
        state,
        context,
        pages.get(page).map_or(&[][..], Vec::as_slice),
    );
    render_problems(frame, problems, state, context);
    if ascii(context, state) {
        to_ascii(frame.buffer_mut(), area);
    }
}

/// `--ascii` is pure ASCII, byte for byte, whatever a widget or a cluster's name drew: box
/// lines become `+`, `-` and `|`, an ellipsis or a middle dot `.`, and any other character
/// outside ASCII `?`.
fn to_ascii(buffer: &mut ratatui::buffer::Buffer, area: Rect) {
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            let Some(cell) = buffer.cell_mut((x, y)) else {
                continue;
            };
            let symbol = cell.symbol();
            if symbol.is_ascii() {
                continue;
            }
            let plain = match symbol.chars().next().unwrap_or(' ') {
                '─' | '━' | '═' | '╌' | '┄' => "-",
                '│' | '┃' | '║' | '╎' | '┆' => "|",
                '┌' | '┐' | '└' | '┘' | '├' | '┤' | '┬' | '┴' | '┼' | '╭' | '╮' | '╯' | '╰'
                | '╔' | '╗' | '╚' | '╝' | '┏' | '┓' | '┗' | '┛' => "+",
                '…' | '·' | '•' => ".",
                '▶' | '→' | '›' => ">",
                '◀' | '←' | '‹' => "<",
                _ => "?",
            };
            cell.set_symbol(plain);
        }
    }
}

fn ascii(context: &ViewContext, state: &State) -> bool {
    context.ascii || state.wall.as_ref().is_some_and(|wall| wall.ascii)
}

fn render_title(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    context: &ViewContext,
    page: usize,
    pages: usize,
) {
    let theme = context.theme;
    let seconds = state.now_ms / 1000;
    let clock = format!(
        "up {:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    );
    let mut spans = vec![
        Span::styled(" FLOTILLA WATCH ", theme.title),
        Span::styled(
            format!("│ {} │ {clock} │ read-only ", state.source),
            theme.header,
        ),
    ];
    if pages > 1 {
        spans.push(Span::styled(
            format!("│ page {}/{} ", page + 1, pages),
            theme.header,
        ));
    }
    spans.push(Span::styled(
        "│ q quit · space/pgdn next page ",
        theme.muted,
    ));
    frame.render_widget(Paragraph::new(Line::from(spans)).style(theme.header), area);
}

/// One tile: what it counts, now and over the last hour, and its colour.
struct Tile {
    label: &'static str,
    now: usize,
    hour: Vec<u64>,
    style: Style,
}

/// Degraded and Drifted cells and Unreachable clusters in large digits, each beside a
/// sparkline of its last hour.
fn render_trends(frame: &mut Frame, area: Rect, state: &State, context: &ViewContext) {
    let theme = context.theme;
    let history = state.wall.as_ref().map(|wall| &wall.history);
    let hour = |value: fn(&Sample) -> u32| history.map_or_else(Vec::new, |h| h.series(value));
    let tiles = [
        Tile {
            label: "Degraded",
            now: state.cells.health_count(HealthKind::Degraded) as usize,
            hour: hour(|sample| sample.degraded),
            style: theme.status_style(HealthKind::Degraded.severity()),
        },
        Tile {
            label: "Drifted",
            now: state.cells.totals().get(StatusKind::Drifted),
            hour: hour(|sample| sample.drifted),
            style: theme.status_style(StatusKind::Drifted),
        },
        Tile {
            label: "Unreachable clusters",
            now: state.unreachable_clusters,
            hour: hour(|sample| sample.unreachable),
            style: theme.health_unreachable,
        },
    ];
    let ascii = ascii(context, state);
    let areas = Layout::horizontal([Constraint::Ratio(1, 3); 3]).split(area);
    for (tile, tile_area) in tiles.into_iter().zip(areas.iter()) {
        let block = tile_block(&format!("{} · last hour", tile.label), *tile_area, context);
        let inner = block.inner(*tile_area);
        frame.render_widget(block, *tile_area);
        let digits = tile.now.to_string();
        // Quadrant pixels: each 8×8 glyph takes four columns and four rows.
        let big = !ascii && inner.height >= 4 && inner.width >= digits.len() as u16 * 4 + 8;
        let number_width = if big {
            digits.len() as u16 * 4 + 1
        } else {
            digits.len() as u16 + 2
        };
        let [number_area, spark_area] =
            Layout::horizontal([Constraint::Length(number_width), Constraint::Min(0)]).areas(inner);
        let number_style = tile.style.add_modifier(Modifier::BOLD);
        if big {
            let text = BigText::builder()
                .pixel_size(PixelSize::Quadrant)
                .style(number_style)
                .lines(vec![Line::from(digits)])
                .build();
            frame.render_widget(text, number_area);
        } else {
            frame.render_widget(
                Paragraph::new(Span::styled(format!(" {digits}"), number_style)),
                number_area,
            );
        }
        // The whole hour, a bar per minute or, when narrower, per few minutes (their worst);
        // the scale starts at zero.
        // Newest first, drawn from the right edge, so now is always at the right.
        let mut shown = squeeze(&tile.hour, usize::from(spark_area.width));
        shown.reverse();
        let peak = shown.iter().copied().max().unwrap_or(0).max(1);
        let mut sparkline = Sparkline::default()
            .data(&shown)
            .max(peak)
            .style(tile.style)
            .direction(RenderDirection::RightToLeft);
        if ascii {
            sparkline = sparkline.bar_set(ASCII_BARS);
        }
        frame.render_widget(sparkline, spark_area);
    }
}

/// A tile's frame, titled with as much of `title` as fits.
fn tile_block<'a>(title: &str, area: Rect, context: &ViewContext) -> Block<'a> {
    let theme = context.theme;
    Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(
            format!(
                " {} ",
                fit(title, usize::from(area.width.saturating_sub(4)))
            ),
            theme.muted,
        ))
}

/// At most `width` values: runs of neighbours folded into their largest.
fn squeeze(values: &[u64], width: usize) -> Vec<u64> {
    if values.len() <= width || width == 0 {
        return values.to_vec();
    }
    values
        .chunks(values.len().div_ceil(width))
        .map(|run| run.iter().copied().max().unwrap_or(0))
        .collect()
}

/// Sparkline bars for terminals without Unicode.
const ASCII_BARS: symbols::bar::Set = symbols::bar::Set {
    full: "#",
    seven_eighths: "#",
    three_quarters: "=",
    five_eighths: "=",
    half: "-",
    three_eighths: "-",
    one_quarter: ".",
    one_eighth: ".",
    empty: " ",
};

/// The counts at a glance: clusters by connection, cells by sync status and health.
fn render_counts(frame: &mut Frame, area: Rect, state: &State, context: &ViewContext) {
    let theme = context.theme;
    let count = |health: Health| {
        state
            .clusters
            .iter()
            .filter(|row| row.status.health == health)
            .count()
    };
    let stale = (0..state.clusters.len())
        .filter(|&c| state.is_stale(c))
        .count();
    let totals = state.cells.totals();
    let tiles: Vec<(String, usize, Style)> = vec![
        (
            "Clusters Ready".into(),
            count(Health::Ready),
            theme.health_ready,
        ),
        (
            "NotReady".into(),
            count(Health::NotReady),
            theme.health_not_ready,
        ),
        ("Stale".into(), stale, theme.health_unknown),
        (
            "Cells InSync".into(),
            totals.get(StatusKind::InSync),
            theme.status_style(StatusKind::InSync),
        ),
        (
            "Failed".into(),
            totals.get(StatusKind::Failed) + totals.get(StatusKind::Conflict),
            theme.status_style(StatusKind::Failed),
        ),
        (
            "Pending".into(),
            totals.get(StatusKind::Pending),
            theme.status_style(StatusKind::Pending),
        ),
        (
            "Progressing".into(),
            state.cells.health_count(HealthKind::Progressing) as usize,
            theme.status_style(HealthKind::Progressing.severity()),
        ),
    ];
    let constraints = vec![Constraint::Ratio(1, tiles.len() as u32); tiles.len()];
    let areas = Layout::horizontal(constraints).split(area);
    for ((label, value, style), tile) in tiles.into_iter().zip(areas.iter()) {
        let block = tile_block(&label, *tile, context);
        let number = Paragraph::new(Line::from(Span::styled(
            format!(" {value}"),
            style.add_modifier(ratatui::style::Modifier::BOLD),
        )))
        .block(block);
        frame.render_widget(number, *tile);
    }
}

/// The heatmap's groups: (group name, clusters), each group's cells wrapped in rows.
type Group = (String, Vec<usize>);

/// Splits the cluster groups into pages that fit the heatmap area.
fn heatmap_pages(state: &State, area: Rect) -> Vec<Vec<Group>> {
    let key = state.group_by.as_deref().unwrap_or("region");
    let mut groups: Vec<Group> = Vec::new();
    let mut order: Vec<usize> = (0..state.clusters.len()).collect();
    order.sort_by_cached_key(|&cluster| group_value(&state.clusters[cluster].spec, key));
    for cluster in order {
        let name = group_value(&state.clusters[cluster].spec, key);
        match groups.last_mut() {
            Some((last, members)) if *last == name => members.push(cluster),
            _ => groups.push((name, vec![cluster])),
        }
    }
    let width = usize::from(area.width.saturating_sub(2)).max(1);
    let height = usize::from(area.height.saturating_sub(2)).max(1);
    let chip = chip_width(state, &groups, width, height);
    let mut pages: Vec<Vec<Group>> = vec![Vec::new()];
    let mut used = 0;
    for (name, members) in groups {
        // One heading line, then rows of cells; a group taller than a page is split across pages.
        let per_row = (width / chip).max(1);
        let mut rest = members.as_slice();
        while !rest.is_empty() {
            let free_rows = height.saturating_sub(used);
            if free_rows < 2 && used > 0 {
                pages.push(Vec::new());
                used = 0;
                continue;
            }
            let rows_here = (height.saturating_sub(used).saturating_sub(1)).max(1);
            let take = (rows_here * per_row).min(rest.len());
            let (chunk, tail) = rest.split_at(take);
            used += 1 + chunk.len().div_ceil(per_row);
            if let Some(page) = pages.last_mut() {
                page.push((name.clone(), chunk.to_vec()));
            }
            rest = tail;
            if !rest.is_empty() {
                pages.push(Vec::new());
                used = 0;
            }
        }
    }
    pages.retain(|page| !page.is_empty());
    if pages.is_empty() {
        pages.push(Vec::new());
    }
    pages
}

/// Columns per cluster in the heatmap: a glyph and the cluster's name when the whole fleet
/// fits that way on one page (readable across a room), else a single glyph per cluster.
fn chip_width(state: &State, groups: &[Group], width: usize, height: usize) -> usize {
    let longest = state
        .clusters
        .iter()
        .map(|row| row.spec.name.chars().count())
        .max()
        .unwrap_or(0);
    let chip = longest + 3;
    let per_row = width / chip;
    if per_row == 0 {
        return 1;
    }
    let rows: usize = groups
        .iter()
        .map(|(_, members)| 1 + members.len().div_ceil(per_row))
        .sum();
    if rows <= height { chip } else { 1 }
}

/// A cluster's glyph and style: its health when not Ready, stale when silent, else its worst cell.
fn cluster_glyph(
    state: &State,
    cluster: usize,
    context: &ViewContext,
    ascii: bool,
) -> (char, Style) {
    let theme = context.theme;
    let row = &state.clusters[cluster];
    match row.status.health {
        Health::Unreachable => {
            return (
                StatusKind::Unreachable.symbol(ascii),
                theme.health_unreachable,
            );
        }
        Health::Unauthorized => return (if ascii { 'A' } else { '⚿' }, theme.health_unreachable),
        Health::NotReady => return (if ascii { 'N' } else { '▲' }, theme.health_not_ready),
        Health::Unknown => return (if ascii { ':' } else { '◌' }, theme.health_unknown),
        Health::NoAccess => return (if ascii { '-' } else { '∅' }, theme.health_unknown),
        Health::Ready => {}
    }
    if state.is_stale(cluster) {
        return (if ascii { ':' } else { '◌' }, theme.health_unknown);
    }
    let worst = state.cells.cluster_concern(cluster);
    (worst.symbol(ascii), theme.status_style(worst.severity()))
}

fn render_heatmap(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    context: &ViewContext,
    page: &[Group],
) {
    let theme = context.theme;
    let ascii = ascii(context, state);
    let key = state.group_by.as_deref().unwrap_or("region");
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(
            format!(
                " Fleet heatmap: {} clusters by {key} ",
                state.clusters.len()
            ),
            theme.title,
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width).max(1);
    let all_groups: Vec<Group> = page.to_vec();
    let chip = if page.iter().map(|(_, m)| m.len()).sum::<usize>() == state.clusters.len() {
        chip_width(state, &all_groups, width, usize::from(inner.height))
    } else {
        1
    };
    let per_row = (width / chip).max(1);
    let mut lines = Vec::new();
    for (name, members) in page {
        let problems = members
            .iter()
            .filter(|&&c| {
                state.clusters[c].status.health != Health::Ready
                    || state.cells.cluster_concern(c).is_problem()
            })
            .count();
        lines.push(Line::from(vec![
            Span::styled(format!("{name} "), theme.title),
            Span::styled(
                format!("{} clusters, {problems} with problems", members.len()),
                theme.muted,
            ),
        ]));
        for row in members.chunks(per_row) {
            let spans: Vec<Span> = row
                .iter()
                .map(|&cluster| {
                    let (glyph, style) = cluster_glyph(state, cluster, context, ascii);
                    if chip == 1 {
                        Span::styled(glyph.to_string(), style)
                    } else {
                        let name = &state.clusters[cluster].spec.name;
                        Span::styled(format!("{glyph} {name:<width$}", width = chip - 2), style)
                    }
                })
                .collect();
            lines.push(Line::from(spans));
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn render_problems(frame: &mut Frame, area: Rect, state: &State, context: &ViewContext) {
    let theme = context.theme;
    let ascii = ascii(context, state);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(" Top problems ", theme.title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let rows = usize::from(inner.height);
    let mut lines: Vec<Line> = Vec::new();
    // Unhealthy clusters first: they explain many cells at once.
    for (index, row) in state.clusters.iter().enumerate() {
        if lines.len() >= rows / 2 {
            break;
        }
        if matches!(
            row.status.health,
            Health::Unreachable | Health::NotReady | Health::Unauthorized
        ) {
            let (glyph, style) = cluster_glyph(state, index, context, ascii);
            lines.push(Line::from(vec![
                Span::styled(
                    format!(" {glyph} {:<12}", row.status.health.as_str()),
                    style,
                ),
                Span::styled(format!(" cluster {}", row.spec.name), theme.text),
                Span::styled(format!("  {}", row.status.message), theme.muted),
            ]));
        }
    }
    for (cell, kind, since) in state.cells.worst_problems(rows.saturating_sub(lines.len())) {
        let (resource, cluster) = (cell.resource as usize, cell.cluster as usize);
        let name = state
            .resources
            .get(resource)
            .map_or_else(String::new, |row| row.target.display_key());
        let cluster_name = state
            .clusters
            .get(cluster)
            .map_or("?", |row| row.spec.name.as_str());
        let age = age(state.now_ms.saturating_sub(since));
        let detail = state
            .cells
            .message(resource, cluster)
            .map(str::to_string)
            .or_else(|| {
                state
                    .cells
                    .status(resource, cluster)
                    .detail()
                    .map(str::to_string)
            })
            .unwrap_or_default();
        lines.push(Line::from(vec![
            Span::styled(
                format!(" {} {:<12}", kind.symbol(ascii), kind.as_str()),
                theme.status_style(kind),
            ),
            Span::styled(format!(" {name} on {cluster_name}"), theme.text),
            Span::styled(format!("  for {age}"), theme.title),
            Span::styled(format!("  {detail}"), theme.muted),
        ]));
    }
    if lines.is_empty() {
        lines.push(Line::from(Span::styled(
            " no problems",
            theme.status_style(StatusKind::InSync),
        )));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// "45s", "3m12s", "2h05m", "3d04h".
pub fn age(ms: u64) -> String {
    let seconds = ms / 1000;
    match seconds {
        0..=59 => format!("{seconds}s"),
        60..=3599 => format!("{}m{:02}s", seconds / 60, seconds % 60),
        3600..=86_399 => format!("{}h{:02}m", seconds / 3600, seconds / 60 % 60),
        _ => format!("{}d{:02}h", seconds / 86_400, seconds / 3600 % 24),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_narrow_sparkline_keeps_every_spike() {
        let hour: Vec<u64> = (0..60).map(|minute| u64::from(minute == 7) * 5).collect();
        let squeezed = squeeze(&hour, 25);
        assert!(squeezed.len() <= 25);
        assert_eq!(squeezed.iter().max(), Some(&5));
        assert_eq!(squeeze(&hour[..10], 25), hour[..10]);
    }

    #[test]
    fn ages_read_at_a_glance() {
        assert_eq!(age(45_000), "45s");
        assert_eq!(age(192_000), "3m12s");
        assert_eq!(age(7_500_000), "2h05m");
        assert_eq!(age(3 * 86_400_000 + 4 * 3_600_000), "3d04h");
    }
}
