//! The wall display, made to be read from across a room: every headline count (clusters
//! Ready, NotReady and Unreachable; cells InSync, Drifted, Failed and Pending; health Healthy,
//! Degraded and Progressing) in large digits sized to the screen, each over a sparkline of its
//! last hour; a heat map that fills the space left, one tile per cluster grouped by region
//! (or the `--group-by` label), tiles as large as fit and one glyph each when the fleet is
//! large; and the top problems ranked by harm, one line per dead cluster or per resource in
//! one state, each with its age. Stale data says so. Pure: it draws `&State` and never
//! changes it; which heat-map page shows is `wall.page`.

use std::collections::HashMap;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, RenderDirection, Sparkline};

use super::digits;
use super::widgets::{ViewContext, card, fit};
use crate::app::state::history::{Headline, Sample};
use crate::app::state::{State, group_value};
use crate::config::keymap::{Section, ViewCommand};
use crate::messages::CellRef;
use crate::model::{Concern, Health, HealthKind, StatusKind};

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
    let band = Band::new(area, &state.headlines());
    // As many problem lines as there are, up to a fifth of the screen; the rest is the map's.
    let found = problems(state, context, ascii(context, state));
    let problem_rows = (found.len() as u16).clamp(1, (area.height / 5).clamp(3, 12));
    let [title, counts, heat, problems] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(band.height()),
        Constraint::Min(3),
        Constraint::Length(problem_rows + 2),
    ])
    .areas(area);
    let mut heat_inner = inner_of(heat);
    let groups = groups(state);
    let mut shape = Shape::choose(&groups, heat_inner, longest_name(state));
    let mut pages = pages_of(&groups, shape, heat_inner);
    // When the map takes more than a page, its first row names every group and its size,
    // so no group is out of sight while another page shows.
    let roll_call = pages.len() > 1 && heat_inner.height > 2;
    if roll_call {
        heat_inner.y += 1;
        heat_inner.height -= 1;
        shape = Shape::choose(&groups, heat_inner, longest_name(state));
        pages = pages_of(&groups, shape, heat_inner);
    }
    let page = state.wall.as_ref().map_or(0, |wall| {
        wall.page.rem_euclid(pages.len().max(1) as i64) as usize
    });
    render_title(frame, title, state, context, page, pages.len());
    render_counts(frame, counts, state, context, &band);
    let shown = pages.get(page).map_or(&[][..], Vec::as_slice);
    render_heatmap(
        frame,
        heat,
        heat_inner,
        state,
        context,
        shape,
        (&groups, shown),
    );
    if roll_call {
        let row = Rect {
            y: heat_inner.y - 1,
            height: 1,
            ..heat_inner
        };
        render_roll_call(frame, row, state, context, &groups, shown);
    }
    render_problems(frame, problems, state, context, &found);
}

/// Whether the screen is drawn in ASCII: `--ascii` on the console or the wall.
pub(super) fn ascii(context: &ViewContext, state: &State) -> bool {
    context.ascii || state.wall.as_ref().is_some_and(|wall| wall.ascii)
}

fn inner_of(area: Rect) -> Rect {
    Block::default().borders(Borders::ALL).inner(area)
}

/// Clusters no event has reached for the wall's stale time.
fn stale_clusters(state: &State) -> usize {
    (0..state.clusters.len())
        .filter(|&c| state.is_stale(c))
        .count()
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
    // Each part with its place in the line and how much it matters: when the line is too
    // narrow, the least needed go first (the keys, then the clock), never the stale warning.
    let mut parts: Vec<(u8, u8, Span)> = vec![
        (0, 0, Span::styled(" FLOTILLA WATCH ", theme.title)),
        (
            1,
            3,
            Span::styled(format!("│ {} ", state.source), theme.header),
        ),
        (3, 5, Span::styled(format!("│ {clock} "), theme.header)),
        (4, 6, Span::styled("│ read-only ", theme.header)),
    ];
    let stale = stale_clusters(state);
    if stale > 0 {
        let text = if stale == state.clusters.len() {
            " STALE: no word from any cluster ".to_string()
        } else {
            format!(" STALE: {stale} clusters silent ")
        };
        parts.push((
            2,
            1,
            Span::styled(
                text,
                theme
                    .health_not_ready
                    .add_modifier(Modifier::BOLD | Modifier::REVERSED),
            ),
        ));
    }
    if pages > 1 {
        let next = state.wall.as_ref().map_or(String::new(), |wall| {
            if wall.page_every_ms == 0 {
                return String::new();
            }
            let due = wall.page_turned_ms.saturating_add(wall.page_every_ms);
            format!(
                " · next in {}s",
                due.saturating_sub(state.now_ms).div_ceil(1000)
            )
        });
        parts.push((
            5,
            2,
            Span::styled(
                format!("│ page {}/{}{next} ", page + 1, pages),
                theme.header,
            ),
        ));
    }
    // What a key pressed here was answered (a refused exec or log pane, say): the wall has no
    // status line, so the answer stands in its title, before the keys.
    if let Some(notice) = &state.notice {
        parts.push((
            6,
            2,
            Span::styled(
                format!("│ {notice} "),
                theme.header.add_modifier(Modifier::BOLD),
            ),
        ));
    }
    let keymap = context.keymap;
    let keys = keymap.view_keys(Section::Wall, ViewCommand::PageDown);
    let keys: Vec<String> = keys.iter().take(2).map(ToString::to_string).collect();
    parts.push((
        6,
        7,
        Span::styled(
            format!("│ q quit · {} next page ", keys.join("/")),
            theme.muted,
        ),
    ));
    let width = |parts: &[(u8, u8, Span)]| parts.iter().map(|(_, _, s)| s.width()).sum::<usize>();
    while width(&parts) > usize::from(area.width) && parts.len() > 1 {
        let Some(least) = parts
            .iter()
            .enumerate()
            .max_by_key(|(_, (_, rank, _))| *rank)
            .map(|(i, _)| i)
        else {
            break;
        };
        parts.remove(least);
    }
    parts.sort_by_key(|(place, _, _)| *place);
    let spans: Vec<Span> = parts.into_iter().map(|(_, _, span)| span).collect();
    frame.render_widget(Paragraph::new(Line::from(spans)).style(theme.header), area);
}

/// The band of headline counts: each count's text and columns, the scale all its digits share
/// (`None`: plain numbers), and how tall the band is — the larger the screen, the larger the
/// digits, every count the same height.
struct Band {
    texts: Vec<String>,
    widths: Vec<u16>,
    scale: Option<(u16, u16)>,
    digit_rows: u16,
    spark_rows: u16,
}

impl Band {
    /// Frames of the three groups (two columns each) and the gaps between their tiles.
    const CHROME: u16 = 3 * 2 + (2 + 3 + 2);

    fn new(area: Rect, counts: &Sample) -> Band {
        let spark_rows = match area.height {
            0..=59 => 1,
            60..=89 => 2,
            _ => 3,
        };
        // About three tenths of the screen: frame, label, digits, sparkline.
        let budget = (area.height * 3 / 10).saturating_sub(2 + 1 + spark_rows);
        let tallest = budget / digits::GLYPH_ROWS;
        let room = area.width.saturating_sub(Band::CHROME);
        let least: Vec<u16> = Headline::ALL
            .iter()
            .map(|&h| short_label(h).chars().count() as u16)
            .collect();
        let exact: Vec<String> = Headline::ALL
            .iter()
            .map(|&h| counts.get(h).to_string())
            .collect();
        let compact: Vec<String> = Headline::ALL
            .iter()
            .map(|&h| digits::compact(u64::from(counts.get(h))))
            .collect();
        // The widest pixels with which every count and every label fits side by side, each
        // count with a pixel of air beside it, so neighbouring counts never read as one
        // number from across a room.
        let widest = |texts: &[String]| -> u16 {
            let pixels: Vec<u16> = texts
                .iter()
                .map(|text| digits::pixel_width(text).unwrap_or(u16::MAX / 64))
                .collect();
            (1..=16)
                .take_while(|&sx| {
                    pixels
                        .iter()
                        .zip(&least)
                        .map(|(p, l)| (p * sx + sx).max(*l))
                        .sum::<u16>()
                        <= room
                })
                .last()
                .unwrap_or(0)
        };
        let mut texts = exact.clone();
        let mut sx = widest(&exact);
        if sx == 0 {
            texts = compact;
            sx = widest(&texts);
        }
        let sy = tallest.min(sx);
        let scale = (sy > 0).then(|| (sx.min(2 * sy), sy));
        let needs: Vec<u16> = match scale {
            Some((sx, _)) => texts
                .iter()
                .zip(&least)
                .map(|(text, l)| ((digits::pixel_width(text).unwrap_or(0) + 1) * sx).max(*l))
                .collect(),
            None => {
                texts = exact;
                texts
                    .iter()
                    .zip(&least)
                    .map(|(text, l)| (text.chars().count() as u16).max(*l))
                    .collect()
            }
        };
        // What is left is shared evenly, so the tiles fill the row.
        let total: u16 = needs.iter().sum();
        let spare = room.saturating_sub(total);
        let count = needs.len() as u16;
        let widths = needs
            .iter()
            .enumerate()
            .map(|(i, need)| need + spare / count + u16::from((i as u16) < spare % count))
            .collect();
        Band {
            texts,
            widths,
            scale,
            digit_rows: scale.map_or(1, |(_, sy)| sy * digits::GLYPH_ROWS),
            spark_rows,
        }
    }

    fn height(&self) -> u16 {
        2 + 1 + self.digit_rows + self.spark_rows
    }
}

/// A headline's label where there is room, and a shorter one where there is not.
fn short_label(headline: Headline) -> &'static str {
    match headline {
        Headline::NotReady => "NotRdy",
        Headline::Unreachable => "Unreach",
        Headline::Degraded => "Degrad",
        Headline::Progressing => "Progr",
        other => other.as_str(),
    }
}

fn headline_style(headline: Headline, context: &ViewContext) -> Style {
    let theme = context.theme;
    match headline {
        Headline::Ready => theme.health_ready,
        Headline::NotReady => theme.health_not_ready,
        Headline::Unreachable => theme.health_unreachable,
        Headline::InSync => theme.status_style(StatusKind::InSync),
        Headline::Drifted => theme.status_style(StatusKind::Drifted),
        Headline::Failed => theme.status_style(StatusKind::Failed),
        Headline::Pending => theme.status_style(StatusKind::Pending),
        Headline::Healthy => theme.status_style(HealthKind::Healthy.severity()),
        Headline::Degraded => theme.status_style(HealthKind::Degraded.severity()),
        Headline::Progressing => theme.status_style(HealthKind::Progressing.severity()),
    }
}

/// Every headline count in large digits, in three framed groups — clusters, cells, health —
/// each count over the sparkline of its last hour. A problem count at zero is drawn muted, so
/// only what is wrong stands out; when every cluster is stale the counts are muted too.
fn render_counts(frame: &mut Frame, area: Rect, state: &State, context: &ViewContext, band: &Band) {
    let theme = context.theme;
    let ascii = ascii(context, state);
    let now = state.headlines();
    let history = state.wall.as_ref().map(|wall| &wall.history);
    let stale = stale_clusters(state);
    let all_stale = stale > 0 && stale == state.clusters.len();
    let groups: [(&str, &[Headline]); 3] = [
        ("Clusters", &Headline::ALL[0..3]),
        ("Cells", &Headline::ALL[3..7]),
        ("Health", &Headline::ALL[7..10]),
    ];
    let mut x = area.x;
    let mut next = 0;
    for (name, headlines) in groups {
        let widths = &band.widths[next..next + headlines.len()];
        let width = widths.iter().sum::<u16>() + headlines.len() as u16 - 1 + 2;
        let group_area = Rect {
            x,
            width: width.min(area.right().saturating_sub(x)),
            ..area
        };
        x = x.saturating_add(width);
        let mut title = format!(" {} ", name.to_uppercase());
        if name == "Clusters" && stale > 0 {
            title = format!(" CLUSTERS · {stale} STALE ");
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border)
            .title(Span::styled(
                fit(&title, usize::from(group_area.width.saturating_sub(2))),
                theme.title,
            ));
        let inner = block.inner(group_area);
        frame.render_widget(block, group_area);
        let tiles = Layout::horizontal(widths.iter().map(|w| Constraint::Length(*w)))
            .spacing(1)
            .split(inner);
        for ((&headline, tile), text) in headlines.iter().zip(tiles.iter()).zip(&band.texts[next..])
        {
            let count = now.get(headline);
            let mut style = headline_style(headline, context);
            if all_stale || (headline.is_problem() && count == 0) {
                style = theme.muted;
            }
            let hour = history.map_or_else(Vec::new, |h| h.series(headline));
            let tile_view = TileView {
                headline,
                count: u64::from(count),
                text,
                hour: &hour,
                style,
            };
            render_tile(frame, *tile, &tile_view, band, ascii);
        }
        next += headlines.len();
    }
}

/// One headline as a tile shows it.
struct TileView<'a> {
    headline: Headline,
    count: u64,
    /// The count as drawn: exact, or shortened when the band is too narrow for it.
    text: &'a str,
    hour: &'a [u64],
    style: Style,
}

/// One headline: its label, its count in the band's digits (the exact count in the label
/// when the digits show it shortened), and its last hour.
fn render_tile(frame: &mut Frame, area: Rect, tile: &TileView, band: &Band, ascii: bool) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let [label_area, number_area, spark_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(band.spark_rows),
    ])
    .areas(area);
    let width = usize::from(area.width);
    let exact = tile.count.to_string();
    let mut label = tile.headline.as_str().to_string();
    if label.chars().count() > width {
        label = short_label(tile.headline).to_string();
    }
    if tile.text != exact {
        let with_count = format!("{label} {exact}");
        if with_count.chars().count() <= width {
            label = with_count;
        }
    }
    frame.render_widget(
        Paragraph::new(Span::styled(fit(&label, width), tile.style))
            .alignment(ratatui::layout::Alignment::Center),
        label_area,
    );
    let bold = tile.style.add_modifier(Modifier::BOLD);
    match band.scale {
        Some(scale) => {
            digits::draw(
                frame.buffer_mut(),
                number_area,
                tile.text,
                scale,
                bold,
                ascii,
            );
        }
        None => {
            let middle = Rect {
                y: number_area.y + number_area.height / 2,
                height: 1,
                ..number_area
            };
            frame.render_widget(
                Paragraph::new(Span::styled(fit(tile.text, width), bold))
                    .alignment(ratatui::layout::Alignment::Center),
                middle,
            );
        }
    }
    // The whole hour, a bar per minute or, when narrower, per few minutes (their worst);
    // the scale starts at zero. Newest first, drawn from the right edge, so now is always at
    // the right.
    let mut shown = squeeze(tile.hour, usize::from(spark_area.width));
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

/// A heat-map group: its name and its clusters.
type Group = (String, Vec<usize>);

/// The clusters grouped by the `--group-by` label (region unless told), groups by name.
fn groups(state: &State) -> Vec<Group> {
    let key = state.group_by.as_deref().unwrap_or("region");
    let mut order: Vec<(String, usize)> = (0..state.clusters.len())
        .map(|cluster| (group_value(&state.clusters[cluster].spec, key), cluster))
        .collect();
    order.sort();
    let mut groups: Vec<Group> = Vec::new();
    for (name, cluster) in order {
        match groups.last_mut() {
            Some((last, members)) if *last == name => members.push(cluster),
            _ => groups.push((name, vec![cluster])),
        }
    }
    groups
}

fn longest_name(state: &State) -> u16 {
    state
        .clusters
        .iter()
        .map(|row| row.spec.name.chars().count())
        .max()
        .unwrap_or(0)
        .min(usize::from(u16::MAX / 2)) as u16
}

/// How the heat map draws a cluster: `width` columns and `rows` rows a tile, plus the gap
/// after it; named tiles carry the cluster's name (and, two rows or more, what is wrong).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    width: u16,
    rows: u16,
    named: bool,
}

impl Shape {
    const GLYPH: Shape = Shape {
        width: 1,
        rows: 1,
        named: false,
    };

    /// Columns and rows one tile takes with its gap.
    fn pitch(self) -> (u16, u16) {
        if self.named {
            (self.width + 1, self.rows + u16::from(self.rows > 1))
        } else {
            (self.width, 1)
        }
    }

    fn per_row(self, area: Rect) -> usize {
        usize::from((area.width + 1) / self.pitch().0).max(1)
    }

    /// Rows the whole fleet takes drawn this way: a heading per group, then its tiles.
    fn rows_needed(self, groups: &[Group], area: Rect) -> usize {
        let per_row = self.per_row(area);
        groups
            .iter()
            .map(|(_, members)| 1 + members.len().div_ceil(per_row) * usize::from(self.pitch().1))
            .sum()
    }

    /// The largest tiles with which the whole fleet fits on one page: named tiles as wide as
    /// the widest group lets them and as tall as the page lets them (up to a landscape card,
    /// a terminal cell being about twice as tall as wide), so a few clusters fill a large
    /// screen; else a glyph and a space per cluster; else one glyph per cluster, on as many
    /// pages as it takes.
    fn choose(groups: &[Group], area: Rect, longest: u16) -> Shape {
        let widest_group = groups
            .iter()
            .map(|(_, m)| m.len())
            .max()
            .unwrap_or(1)
            .max(1);
        let least = longest + 3;
        if least < area.width {
            let fit = usize::from((area.width + 1) / (least + 1)).max(1);
            let per_row = fit.min(widest_group) as u16;
            let width = ((area.width + 1) / per_row).saturating_sub(1).max(least);
            let tallest = (width / 3).clamp(1, area.height.max(1));
            for rows in (1..=tallest).rev() {
                let shape = Shape {
                    width,
                    rows,
                    named: true,
                };
                if shape.rows_needed(groups, area) <= usize::from(area.height) {
                    return shape;
                }
            }
        }
        let spaced = Shape {
            width: 2,
            rows: 1,
            named: false,
        };
        if spaced.rows_needed(groups, area) <= usize::from(area.height) {
            return spaced;
        }
        Shape::GLYPH
    }
}

/// A group's clusters on one page.
type Part = (String, usize, Vec<usize>);

/// The groups cut into pages that fit `area` drawn as `shape`: each part keeps its group's
/// name and whole size, so a group split over pages still says how large it is.
fn pages_of(groups: &[Group], shape: Shape, area: Rect) -> Vec<Vec<Part>> {
    let per_row = shape.per_row(area);
    let pitch = usize::from(shape.pitch().1);
    let height = usize::from(area.height).max(1);
    let mut pages: Vec<Vec<Part>> = vec![Vec::new()];
    let mut used = 0;
    for (name, members) in groups {
        let mut rest = members.as_slice();
        while !rest.is_empty() {
            let free = height.saturating_sub(used);
            if free < 1 + pitch && used > 0 {
                pages.push(Vec::new());
                used = 0;
                continue;
            }
            let tile_rows = (height.saturating_sub(used + 1) / pitch).max(1);
            let take = (tile_rows * per_row).min(rest.len());
            let (chunk, tail) = rest.split_at(take);
            used += 1 + chunk.len().div_ceil(per_row) * pitch;
            if let Some(page) = pages.last_mut() {
                page.push((name.clone(), members.len(), chunk.to_vec()));
            }
            rest = tail;
        }
    }
    pages.retain(|page| !page.is_empty());
    if pages.is_empty() {
        pages.push(Vec::new());
    }
    pages
}

/// A cluster's glyph, style and one word for what it shows: its health when not Ready, stale
/// when silent, else its worst cell.
fn cluster_glyph(
    state: &State,
    cluster: usize,
    context: &ViewContext,
    ascii: bool,
) -> (char, Style, String) {
    let theme = context.theme;
    let row = &state.clusters[cluster];
    let health = row.status.health;
    let word = health.as_str().to_string();
    match health {
        Health::Unreachable => {
            return (
                StatusKind::Unreachable.symbol(ascii),
                theme.health_unreachable,
                word,
            );
        }
        Health::Unauthorized => {
            return (
                if ascii { 'A' } else { '⚿' },
                theme.health_unreachable,
                word,
            );
        }
        Health::NotReady => {
            return (if ascii { 'N' } else { '▲' }, theme.health_not_ready, word);
        }
        Health::Unknown => return (if ascii { ':' } else { '◌' }, theme.health_unknown, word),
        Health::NoAccess => return (if ascii { '-' } else { '∅' }, theme.health_unknown, word),
        Health::Ready => {}
    }
    if state.is_stale(cluster) {
        return (
            if ascii { ':' } else { '◌' },
            theme.health_unknown,
            "stale".into(),
        );
    }
    let worst = state.cells.cluster_concern(cluster);
    let count = match worst {
        Concern::Sync(kind) => state.cells.cluster_counts(cluster).get(kind),
        Concern::Health(kind) => state.cells.cluster_health(cluster).get(kind),
    };
    let word = if worst.is_problem() {
        format!("{count} {}", worst.as_str())
    } else {
        worst.as_str().to_string()
    };
    (
        worst.symbol(ascii),
        theme.status_style(worst.severity()),
        word,
    )
}

/// Clusters of `members` that are not Ready or have a cell in trouble.
fn with_problems(state: &State, members: &[usize]) -> usize {
    members
        .iter()
        .filter(|&&c| {
            state.clusters[c].status.health != Health::Ready
                || state.cells.cluster_concern(c).is_problem()
        })
        .count()
}

/// One row naming every group with its size (and its clusters with problems, when every
/// group still fits with them), the groups on this page in the title's style: as many as fit,
/// then `+N groups` for the rest.
fn render_roll_call(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    context: &ViewContext,
    groups: &[Group],
    page: &[Part],
) {
    let theme = context.theme;
    let width = usize::from(area.width);
    let with: Vec<String> = groups
        .iter()
        .map(|(name, members)| match with_problems(state, members) {
            0 => format!("{name} {}", members.len()),
            n => format!("{name} {} ({n} with problems)", members.len()),
        })
        .collect();
    let bare: Vec<String> = groups
        .iter()
        .map(|(name, members)| format!("{name} {}", members.len()))
        .collect();
    let length = |texts: &[String]| texts.iter().map(|t| t.chars().count() + 3).sum::<usize>();
    let texts = if length(&with) <= width + 3 {
        with
    } else {
        bare
    };
    let mut spans: Vec<Span> = Vec::new();
    let mut used = 0;
    for (index, ((name, _), text)) in groups.iter().zip(&texts).enumerate() {
        let separator = if index == 0 { "" } else { " · " };
        let rest = groups.len() - index - 1;
        let tail = if rest > 0 {
            format!(" · +{rest} groups").chars().count()
        } else {
            0
        };
        let need = separator.chars().count() + text.chars().count();
        if used + need + tail > width {
            spans.push(Span::styled(
                format!("{separator}+{} groups", groups.len() - index),
                theme.muted,
            ));
            break;
        }
        used += need;
        let here = page.iter().any(|(shown, _, _)| shown == name);
        spans.push(Span::styled(separator, theme.muted));
        spans.push(Span::styled(
            text.clone(),
            if here { theme.title } else { theme.text },
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// A named tile's lines, top to bottom: the glyph and name, what it shows, and — when the
/// tile has room — the cluster's version and latency.
fn tile_lines(state: &State, cluster: usize, glyph: char, word: &str, rows: u16) -> Vec<String> {
    let row = &state.clusters[cluster];
    let mut lines = vec![format!("{glyph} {}", row.spec.name), word.to_string()];
    if rows >= 4 {
        let mut facts: Vec<String> = Vec::new();
        if let Some(version) = &row.status.version {
            facts.push(version.clone());
        }
        if let Some(latency) = row.status.latency_ms {
            facts.push(format!("{latency} ms"));
        }
        if !facts.is_empty() {
            lines.push(facts.join(" · "));
        }
    }
    lines
}

#[allow(clippy::too_many_arguments)]
fn render_heatmap(
    frame: &mut Frame,
    area: Rect,
    inner: Rect,
    state: &State,
    context: &ViewContext,
    shape: Shape,
    (groups, page): (&[Group], &[Part]),
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
    frame.render_widget(block, area);
    let per_row = shape.per_row(inner);
    let (pitch_x, pitch_y) = shape.pitch();
    // Every tile's lines start at the same place, so names line up down the map: in the
    // middle of a large tile, one column in on a small one.
    let width = usize::from(shape.width);
    let planned = if shape.rows >= 4 { 3 } else { 2 }.min(usize::from(shape.rows));
    let top = (usize::from(shape.rows) - planned) / 2;
    let longest = (usize::from(longest_name(state)) + 2).max(16);
    let indent = if width >= longest + 8 {
        (width - longest) / 2
    } else {
        1
    };
    let buffer = frame.buffer_mut();
    let mut y = inner.y;
    for (name, size, members) in page {
        if y >= inner.bottom() {
            break;
        }
        // A group split over pages counts its problems over the whole group, so a page of
        // healthy tiles never hides the trouble on another; what is on this page follows.
        let here = with_problems(state, members);
        let (shown, problems) = if members.len() < *size {
            let whole = groups
                .iter()
                .find(|(group, _)| group == name)
                .map_or(here, |(_, all)| with_problems(state, all));
            (
                format!(" ({} here)", members.len()),
                format!("{whole} with problems ({here} here)"),
            )
        } else {
            (String::new(), format!("{here} with problems"))
        };
        let heading = Line::from(vec![
            Span::styled(format!("{name} "), theme.title),
            Span::styled(
                format!("· {size} clusters{shown} · {problems}"),
                theme.muted,
            ),
        ]);
        buffer.set_line(inner.x, y, &heading, inner.width);
        y += 1;
        for row in members.chunks(per_row) {
            for (i, &cluster) in row.iter().enumerate() {
                let x = inner.x + i as u16 * pitch_x;
                let (glyph, style, word) = cluster_glyph(state, cluster, context, ascii);
                if !shape.named {
                    if y < inner.bottom() && x < inner.right() {
                        buffer.set_string(x, y, glyph.to_string(), style);
                    }
                    continue;
                }
                // A card in the cluster's colour with text that reads on it, its lines in
                // the middle; on a wide card they are centred too.
                let card = card(style);
                let lines = tile_lines(state, cluster, glyph, &word, shape.rows);
                let clip = width.min(usize::from(inner.right().saturating_sub(x)));
                for line in 0..usize::from(shape.rows) {
                    let yy = y + line as u16;
                    if yy >= inner.bottom() {
                        break;
                    }
                    let text = line
                        .checked_sub(top)
                        .and_then(|at| lines.get(at))
                        .map_or_else(String::new, |text| format!("{}{text}", " ".repeat(indent)));
                    let style = if line == top {
                        card.add_modifier(Modifier::BOLD)
                    } else {
                        card
                    };
                    buffer.set_stringn(
                        x,
                        yy,
                        format!("{:<width$}", fit(&text, width)),
                        clip,
                        style,
                    );
                }
            }
            y += pitch_y;
        }
    }
}

/// How bad a problem is, worst first: a failure, a Degraded workload, a cluster out of
/// reach, then what has only moved away from what was asked.
fn harm(concern: Concern) -> u8 {
    match concern {
        Concern::Sync(StatusKind::Failed) => 0,
        Concern::Sync(StatusKind::Conflict) => 1,
        Concern::Health(HealthKind::Degraded) => 2,
        Concern::Sync(StatusKind::Missing) => 6,
        Concern::Sync(StatusKind::Drifted) => 7,
        Concern::Sync(StatusKind::Orphaned) => 8,
        Concern::Sync(StatusKind::Unreachable) => 9,
        _ => 10,
    }
}

fn cluster_harm(health: Health) -> Option<u8> {
    match health {
        Health::Unreachable => Some(3),
        Health::Unauthorized => Some(4),
        Health::NotReady => Some(5),
        _ => None,
    }
}

/// One line of the top problems: a cluster that is down, or a resource in one bad state on
/// one or more clusters.
struct Problem {
    harm: u8,
    glyph: char,
    style: Style,
    label: &'static str,
    what: String,
    /// Clusters it is on (a cell problem) or cells it takes out of reach (a cluster).
    count: usize,
    since: Option<u64>,
    detail: String,
}

/// The problems, worst first: a cluster out of reach or not ready is one line (its cells are
/// not listed again); cell problems — sync and health — are grouped by resource and state.
fn problems(state: &State, context: &ViewContext, ascii: bool) -> Vec<Problem> {
    let theme = context.theme;
    let mut found: Vec<Problem> = Vec::new();
    let mut cells: HashMap<CellRef, u64> = HashMap::new();
    for (cell, _, since) in state.cells.worst_problems(usize::MAX) {
        cells.insert(cell, since);
    }
    for (cell, _, since) in state.cells.health_problems() {
        let entry = cells.entry(cell).or_insert(since);
        *entry = (*entry).min(since);
    }
    let mut cluster_since: HashMap<usize, u64> = HashMap::new();
    let mut cluster_cells: HashMap<usize, usize> = HashMap::new();
    // (resource, concern) → clusters, oldest since.
    let mut grouped: HashMap<(usize, Concern), (Vec<usize>, u64)> = HashMap::new();
    for (cell, since) in cells {
        let (resource, cluster) = (cell.resource as usize, cell.cluster as usize);
        let Some(row) = state.clusters.get(cluster) else {
            continue;
        };
        if matches!(
            row.status.health,
            Health::Unreachable | Health::Unauthorized
        ) {
            let at = cluster_since.entry(cluster).or_insert(since);
            *at = (*at).min(since);
            *cluster_cells.entry(cluster).or_default() += 1;
            continue;
        }
        let concern = state.cells.concern(resource, cluster);
        if !concern.is_problem() {
            continue;
        }
        let entry = grouped
            .entry((resource, concern))
            .or_insert_with(|| (Vec::new(), since));
        entry.0.push(cluster);
        entry.1 = entry.1.min(since);
    }
    for (index, row) in state.clusters.iter().enumerate() {
        let Some(harm) = cluster_harm(row.status.health) else {
            continue;
        };
        let (glyph, style, _) = cluster_glyph(state, index, context, ascii);
        found.push(Problem {
            harm,
            glyph,
            style,
            label: row.status.health.as_str(),
            what: format!("cluster {}", row.spec.name),
            count: cluster_cells.get(&index).copied().unwrap_or(0),
            since: state
                .cluster_health_since
                .get(&index)
                .or_else(|| cluster_since.get(&index))
                .copied(),
            detail: row.status.message.clone(),
        });
    }
    for ((resource, concern), (mut clusters, since)) in grouped {
        clusters.sort_by(|a, b| {
            state.clusters[*a]
                .spec
                .name
                .cmp(&state.clusters[*b].spec.name)
        });
        let name = state
            .resources
            .get(resource)
            .map_or_else(String::new, |row| row.target.display_key());
        let first = clusters[0];
        let on = match clusters.len() {
            1 => state.clusters[first].spec.name.clone(),
            n => format!("{} +{} more", state.clusters[first].spec.name, n - 1),
        };
        let detail = match concern {
            Concern::Health(_) => state
                .cells
                .health(resource, first)
                .map(|health| health.reason.clone()),
            Concern::Sync(_) => state
                .cells
                .message(resource, first)
                .map(str::to_string)
                .or_else(|| {
                    state
                        .cells
                        .status(resource, first)
                        .detail()
                        .map(str::to_string)
                }),
        }
        .unwrap_or_default();
        found.push(Problem {
            harm: harm(concern),
            glyph: concern.symbol(ascii),
            style: theme.status_style(concern.severity()),
            label: concern.as_str(),
            what: format!("{name} on {on}"),
            count: clusters.len(),
            since: Some(since),
            detail,
        });
    }
    found.sort_by(|a, b| {
        a.harm
            .cmp(&b.harm)
            .then(b.count.cmp(&a.count))
            .then(a.since.cmp(&b.since))
            .then(a.what.cmp(&b.what))
    });
    found
}

fn render_problems(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    context: &ViewContext,
    found: &[Problem],
) {
    let theme = context.theme;
    let rows = usize::from(area.height.saturating_sub(2));
    let title = if found.len() > rows {
        format!(" Top problems: {rows} of {}, worst first ", found.len())
    } else {
        " Top problems, worst first ".to_string()
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(title, theme.title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let mut lines: Vec<Line> = Vec::new();
    for problem in found.iter().take(rows) {
        let mut spans = vec![
            Span::styled(
                format!(" {} {:<12}", problem.glyph, problem.label),
                problem.style,
            ),
            Span::styled(format!(" {}", problem.what), theme.text),
        ];
        if problem.what.starts_with("cluster ") && problem.count > 0 {
            spans.push(Span::styled(
                format!(" ({} cells out of reach)", problem.count),
                theme.muted,
            ));
        }
        if let Some(since) = problem.since {
            spans.push(Span::styled(
                format!("  for {}", age(state.now_ms.saturating_sub(since))),
                theme.title,
            ));
        }
        if !problem.detail.is_empty() {
            spans.push(Span::styled(
                format!("  {}", crate::safe_text::printable(&problem.detail, false)),
                theme.muted,
            ));
        }
        lines.push(Line::from(spans));
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
