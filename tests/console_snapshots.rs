//! Snapshot tests of the console screen at the sizes operators use, drawn from a settled demo
//! fleet (every cluster probed) into ratatui's TestBackend. Keys go through the console's key
//! mapping (`harness::console::press`). No terminal, no timing.

mod harness;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use harness::console::press;

use flotilla::app::{self, Action, update};
use flotilla::backend::sim::{Scenario, SimCore};
use flotilla::config::keymap::Keymap;
use flotilla::config::theme::Theme;
use flotilla::engine::load_fleet;
use flotilla::messages::{BackendEvent, CellRef, CellUpdate};
use flotilla::model::CellStatus;
use flotilla::views::{self, ViewContext};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn settled_demo_state() -> app::state::State {
    settled_demo().0
}

/// The settled demo and the simulated clusters behind it.
fn settled_demo() -> (app::state::State, SimCore) {
    let (fleet, errors) = load_fleet(&flotilla::fleet::demo::demo_files());
    assert!(errors.is_empty(), "{errors:?}");
    let fleet = Arc::new(fleet);
    let core = SimCore::new(fleet.clone(), &Scenario::demo(), 7);
    let mut state = app::state_for_fleet(&fleet, "demo (simulated)".into());
    update(&mut state, Action::Backend(core.snapshot()));
    for cluster in 0..core.cluster_count() {
        let event = BackendEvent::Cluster {
            cluster: cluster as u32,
            status: core.cluster_status(cluster),
        };
        update(&mut state, Action::Backend(event));
    }
    (state, core)
}

fn draw(state: &app::state::State, width: u16, height: u16) -> Terminal<TestBackend> {
    let theme = Theme::load(None, false);
    let keymap = Keymap::built_in("default");
    let context = ViewContext {
        theme: &theme,
        keymap: &keymap,
        ascii: false,
    };
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal
        .draw(|frame| views::render(frame, state, &context))
        .expect("draw");
    terminal
}

#[test]
fn console_at_200x50() {
    let state = settled_demo_state();
    insta::assert_snapshot!(draw(&state, 200, 50).backend());
}

#[test]
fn console_at_120x40() {
    let state = settled_demo_state();
    insta::assert_snapshot!(draw(&state, 120, 40).backend());
}

#[test]
fn console_at_80x24() {
    let state = settled_demo_state();
    insta::assert_snapshot!(draw(&state, 80, 24).backend());
}

#[test]
fn console_at_40x12() {
    let state = settled_demo_state();
    insta::assert_snapshot!(draw(&state, 40, 12).backend());
}

#[test]
fn help_overlay_at_120x40() {
    let mut state = settled_demo_state();
    press(&mut state, "?");
    insta::assert_snapshot!(draw(&state, 120, 40).backend());
}

#[test]
fn help_over_the_drift_view_lists_the_drift_keys_first_at_120x40() {
    let (mut state, core) = settled_demo();
    for event in core.all_drift_events() {
        update(&mut state, Action::Backend(event));
    }
    press(&mut state, "D?");
    assert!(state.help_open);
    let screen = draw(&state, 120, 40).backend().to_string();
    // (row, column) of a text on the screen.
    let at = |text: &str| {
        screen
            .lines()
            .enumerate()
            .find_map(|(row, line)| line.find(text).map(|column| (row, column)))
            .unwrap_or_else(|| panic!("no {text:?} in\n{screen}"))
    };
    let (drift, main) = (at("In the drift view"), at("In the main view"));
    assert_eq!(
        drift.0,
        at("Help — key map default").0 + 1,
        "the drift keys come first"
    );
    assert_eq!(main.0, drift.0, "then the main keys, beside them");
    assert!(main.1 > drift.1);
    assert!(
        !screen.contains("Cell symbols"),
        "the view's help is its keys"
    );
    insta::assert_snapshot!(screen);
}

#[test]
fn tiny_and_odd_sizes_never_panic() {
    let state = settled_demo_state();
    for (width, height) in [
        (1, 1),
        (5, 3),
        (19, 5),
        (20, 6),
        (25, 7),
        (300, 2),
        (2, 200),
    ] {
        draw(&state, width, height);
    }
}

#[test]
fn every_shipped_theme_renders_with_its_status_colours() {
    use flotilla::model::StatusKind;
    let state = settled_demo_state();
    for (name, _) in flotilla::config::theme::BUILT_IN {
        let theme = Theme::load(Some(name), false);
        let keymap = Keymap::built_in("default");
        let context = ViewContext {
            theme: &theme,
            keymap: &keymap,
            ascii: false,
        };
        let mut terminal = Terminal::new(TestBackend::new(160, 40)).expect("test terminal");
        terminal
            .draw(|frame| views::render(frame, &state, &context))
            .expect("draw");
        let buffer = terminal.backend().buffer();
        let failed = StatusKind::Failed.symbol(false).to_string();
        let cell = buffer
            .content()
            .iter()
            .find(|cell| cell.symbol() == failed)
            .unwrap_or_else(|| panic!("{name}: no Failed cell on screen"));
        assert_eq!(
            Some(cell.fg),
            theme.status_style(StatusKind::Failed).fg,
            "{name}: the Failed cell uses the theme's colour"
        );
    }
}

#[test]
fn the_propagate_confirmation_lists_what_would_be_written() {
    let mut state = settled_demo_state();
    press(&mut state, "<tab>");
    let drifted = (0..state.resources.len())
        .find(|r| {
            state
                .cells
                .resource_counts(*r)
                .get(flotilla::model::StatusKind::Drifted)
                > 0
        })
        .expect("a resource that is not in sync");
    harness::console::put_cursor_on(&mut state, drifted);
    press(&mut state, "a");
    let screen = format!("{:?}", draw(&state, 160, 45).backend());
    assert!(screen.contains("Propagate?"), "{screen}");
    assert!(screen.contains("y propagate"), "{screen}");
}

#[test]
fn a_degraded_cell_shows_its_health_mark_the_header_count_and_why() {
    let mut state = settled_demo_state();
    // The cell's detail shows with the matrix focused.
    press(&mut state, "<tab>");
    let selected = state.selected_cell().expect("a selected cell");
    let cell = flotilla::messages::CellRef {
        resource: selected.0 as u32,
        cluster: selected.1 as u32,
    };
    let health = flotilla::model::CellHealth {
        kind: flotilla::model::HealthKind::Degraded,
        reason: "0/3 available".into(),
        since: None,
        rule: None,
    };
    update(
        &mut state,
        Action::Backend(BackendEvent::Health(vec![
            flotilla::messages::HealthUpdate {
                cell,
                health: Some(health),
            },
        ])),
    );
    let screen = draw(&state, 250, 50).backend().to_string();
    let header = screen.lines().next().unwrap_or_default().to_string();
    assert!(header.contains("│ health ▼1 Degraded"), "{header}");
    assert!(screen.contains("▼"), "the cell carries the mark");
    assert!(
        screen.contains("health Degraded: 0/3 available"),
        "{screen}"
    );
}

#[test]
fn a_health_an_operators_rule_decided_names_the_rule_under_the_selected_cell() {
    let mut state = settled_demo_state();
    press(&mut state, "<tab>");
    let selected = state.selected_cell().expect("a selected cell");
    let cell = flotilla::messages::CellRef {
        resource: selected.0 as u32,
        cluster: selected.1 as u32,
    };
    let mut show = |rule: &str| {
        let health = flotilla::model::CellHealth {
            kind: flotilla::model::HealthKind::Degraded,
            reason: "certificate not issued".into(),
            since: None,
            rule: Some(rule.into()),
        };
        update(
            &mut state,
            Action::Backend(BackendEvent::Health(vec![
                flotilla::messages::HealthUpdate {
                    cell,
                    health: Some(health),
                },
            ])),
        );
        draw(&state, 250, 50).backend().to_string()
    };
    let screen = show("cert-manager.io/Certificate (argocd rules, /rules/health.lua)");
    assert!(
        screen.contains("health by cert-manager.io/Certificate (argocd rules, /rules/health.lua)"),
        "{screen}"
    );
    let screen = show("apps/Deployment (built-in)");
    assert!(
        !screen.contains("health by"),
        "built-ins go unnamed: {screen}"
    );
}

/// The settled demo with the live health its simulated clusters report (the stalled ledger
/// rollout is Degraded, one workload Progressing).
fn demo_state_with_health() -> app::state::State {
    use flotilla::messages::{CellRef, HealthUpdate};
    use flotilla::model::{CellHealth, HealthKind};
    let (mut state, core) = settled_demo();
    for event in core.health_events() {
        update(&mut state, Action::Backend(event));
    }
    let inventory = state
        .resources
        .iter()
        .position(|row| row.target.display_key() == "Deployment/shop/inventory")
        .expect("the demo's inventory Deployment");
    let cluster = state
        .fleet
        .cluster_index("prod-us-east-1")
        .expect("a demo cluster");
    let progressing = HealthUpdate {
        cell: CellRef {
            resource: inventory as u32,
            cluster: cluster as u32,
        },
        health: Some(CellHealth {
            kind: HealthKind::Progressing,
            reason: "2/3 updated".into(),
            since: None,
            rule: None,
        }),
    };
    update(
        &mut state,
        Action::Backend(BackendEvent::Health(vec![progressing])),
    );
    assert_eq!(state.cells.health_count(HealthKind::Degraded), 1);
    state
}

#[test]
fn header_and_matrix_with_health_at_120x40() {
    let state = demo_state_with_health();
    insta::assert_snapshot!(draw(&state, 120, 40).backend());
}

#[test]
fn heat_strips_with_health_at_120x40() {
    let mut state = demo_state_with_health();
    press(&mut state, "z");
    insta::assert_snapshot!(draw(&state, 120, 40).backend());
}

/// The wall after an hour: the first twenty minutes as the demo starts, then three more cells
/// drifted, then the unreachable cluster back and a second one gone.
fn wall_after_an_hour(ascii: bool) -> app::state::State {
    use flotilla::messages::{CellRef, CellUpdate};
    use flotilla::model::{CellStatus, ClusterStatus, Health};
    let mut state = demo_state_with_health();
    state.wall = Some(app::state::Wall {
        stale_after_ms: 86_400_000,
        ascii,
        ..Default::default()
    });
    let tick = |state: &mut app::state::State, minutes: std::ops::Range<u64>| {
        for minute in minutes {
            update(
                state,
                Action::Tick {
                    now_ms: minute * 60_000,
                    unix_ms: None,
                },
            );
        }
    };
    tick(&mut state, 0..20);
    let drifted: Vec<CellUpdate> = (0..state.resources.len())
        .filter_map(|resource| {
            let cluster = (0..state.clusters.len()).find(|&cluster| {
                state.cells.kind(resource, cluster) == flotilla::model::StatusKind::InSync
            })?;
            Some(CellUpdate {
                cell: CellRef {
                    resource: resource as u32,
                    cluster: cluster as u32,
                },
                status: CellStatus::Drifted,
                message: None,
            })
        })
        .take(3)
        .collect();
    update(&mut state, Action::Backend(BackendEvent::Cells(drifted)));
    tick(&mut state, 20..40);
    let cluster = state
        .fleet
        .cluster_index("staging-us-east-1")
        .expect("a demo cluster") as u32;
    let down = ClusterStatus {
        health: Health::Unreachable,
        version: None,
        latency_ms: None,
        message: "dial tcp: i/o timeout".into(),
    };
    update(
        &mut state,
        Action::Backend(BackendEvent::Cluster {
            cluster,
            status: down,
        }),
    );
    tick(&mut state, 40..61);
    state
}

/// The wall drawn at `width` × `height`, as ASCII or not.
fn draw_wall(state: &app::state::State, width: u16, height: u16) -> Terminal<TestBackend> {
    draw(state, width, height)
}

/// The screen's rows as text.
fn rows(terminal: &Terminal<TestBackend>) -> Vec<String> {
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect()
        })
        .collect()
}

/// Every headline the wall counts: its label (or the short label narrow tiles use).
const HEADLINES: [(&str, &str); 10] = [
    ("Ready", "Ready"),
    ("NotReady", "NotRdy"),
    ("Unreachable", "Unreach"),
    ("InSync", "InSync"),
    ("Drifted", "Drifted"),
    ("Failed", "Failed"),
    ("Pending", "Pending"),
    ("Healthy", "Healthy"),
    ("Degraded", "Degrad"),
    ("Progressing", "Progr"),
];

/// How many rows tall each headline's large digits are: the bold blocks under its label, in
/// the band above the heat map (0 where the count is plain text).
fn digit_rows(terminal: &Terminal<TestBackend>) -> Vec<(&'static str, u16)> {
    let buffer = terminal.backend().buffer();
    let lines = rows(terminal);
    let band_end = lines
        .iter()
        .position(|line| line.contains("Fleet heatmap"))
        .unwrap_or(lines.len()) as u16;
    HEADLINES
        .iter()
        .map(|&(label, short)| {
            let found = (1..band_end).find_map(|y| {
                let line = &lines[usize::from(y)];
                [label, short].iter().find_map(|text| {
                    line.find(text)
                        .map(|byte| (line[..byte].chars().count() as u16, y, text.len() as u16))
                })
            });
            let Some((x, y, len)) = found else {
                return (label, 0);
            };
            let lit: Vec<u16> = (y + 1..band_end)
                .filter(|&row| {
                    (x.saturating_sub(3)..(x + len + 3).min(buffer.area.width)).any(|column| {
                        let cell = &buffer[(column, row)];
                        (cell.symbol() == "█" || cell.symbol() == "#")
                            && cell.modifier.contains(ratatui::style::Modifier::BOLD)
                    })
                })
                .collect();
            let tall = match (lit.first(), lit.last()) {
                (Some(top), Some(bottom)) => bottom - top + 1,
                _ => 0,
            };
            (label, tall)
        })
        .collect()
}

/// What a person must see on the wall at any size: every headline and its count, the heat
/// map and the problems, and frames whose corners pair up (no stray border pieces).
fn assert_wall_reads(terminal: &Terminal<TestBackend>, size: &str) {
    let lines = rows(terminal);
    let screen = lines.join("\n");
    for (label, short) in HEADLINES {
        assert!(
            screen.contains(label) || screen.contains(short),
            "{size}: headline {label} missing\n{screen}"
        );
    }
    for part in ["FLOTILLA WATCH", "Fleet heatmap", "Top problems"] {
        assert!(screen.contains(part), "{size}: {part} missing\n{screen}");
    }
    for (y, line) in lines.iter().enumerate() {
        for (open, close) in [('┌', '┐'), ('└', '┘')] {
            assert_eq!(
                line.matches(open).count(),
                line.matches(close).count(),
                "{size}: row {y} has an unpaired corner: {line}"
            );
        }
    }
}

#[test]
fn wall_at_80x24() {
    let state = wall_after_an_hour(false);
    let terminal = draw_wall(&state, 80, 24);
    assert_wall_reads(&terminal, "80x24");
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn wall_at_120x40() {
    let state = wall_after_an_hour(false);
    let terminal = draw_wall(&state, 120, 40);
    assert_wall_reads(&terminal, "120x40");
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn wall_at_200x60() {
    let state = wall_after_an_hour(false);
    let terminal = draw_wall(&state, 200, 60);
    assert_wall_reads(&terminal, "200x60");
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn wall_at_300x90() {
    let state = wall_after_an_hour(false);
    let terminal = draw_wall(&state, 300, 90);
    assert_wall_reads(&terminal, "300x90");
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn wall_at_80x24_in_ascii() {
    let state = wall_after_an_hour(true);
    insta::assert_snapshot!(draw(&state, 80, 24).backend());
}

/// From across a room: at 200×60 and above every headline count is at least five rows tall,
/// and the larger the screen, the larger the digits.
#[test]
fn the_walls_counts_grow_with_the_screen() {
    let state = wall_after_an_hour(false);
    let at = |width, height| digit_rows(&draw_wall(&state, width, height));
    let (large, huge) = (at(200, 60), at(300, 90));
    for ((label, tall), (_, taller)) in large.iter().zip(huge.iter()) {
        assert!(*tall >= 5, "200x60: {label} is {tall} rows tall");
        assert!(
            taller > tall,
            "300x90: {label} is {taller} rows, no larger than {tall}"
        );
    }
    for (label, tall) in at(120, 40) {
        assert!(tall >= 5, "120x40: {label} is {tall} rows tall");
    }
}

/// Top problems rank by harm — the failure first, then the Degraded workload the Degraded
/// count counts, then the unreachable cluster as one line — each with its age.
#[test]
fn the_walls_top_problems_rank_by_harm_one_line_per_dead_cluster() {
    let state = wall_after_an_hour(false);
    let lines = rows(&draw_wall(&state, 200, 60));
    let problems: Vec<&String> = lines
        .iter()
        .skip_while(|line| !line.contains("Top problems"))
        .skip(1)
        .take_while(|line| !line.starts_with('└'))
        .collect();
    let first = |needle: &str| problems.iter().position(|line| line.contains(needle));
    let failed = first("Failed").expect("the failed checkout");
    let degraded = first("Degraded").expect("the Degraded workload");
    let unreachable = first("Unreachable").expect("the unreachable store");
    let drifted = first("Drifted").expect("a drift");
    assert!(
        failed < degraded && degraded < unreachable && unreachable < drifted,
        "{problems:#?}"
    );
    for store in ["edge-store-0003", "staging-us-east-1"] {
        assert_eq!(
            problems.iter().filter(|line| line.contains(store)).count(),
            1,
            "{store} is one line\n{problems:#?}"
        );
    }
    for line in &problems[..=drifted] {
        assert!(line.contains(" for "), "no age: {line}");
    }
}

/// A cluster's tile on the wall: the rectangle around `name` filled with the background the
/// name is drawn on (or, without colour, reversed): (columns, rows).
fn tile_size(terminal: &Terminal<TestBackend>, name: &str) -> Option<(u16, u16)> {
    let buffer = terminal.backend().buffer();
    let lines = rows(terminal);
    let heat = lines
        .iter()
        .position(|line| line.contains("Fleet heatmap"))?;
    let (y, line) = lines
        .iter()
        .enumerate()
        .skip(heat)
        .find(|(_, line)| line.contains(&format!(" {name}")))?;
    let x = line[..line.find(name)?].chars().count() as u16;
    let (x, y) = (x, y as u16);
    let fill = |cx: u16, cy: u16| {
        let cell = &buffer[(cx, cy)];
        (
            cell.bg,
            cell.modifier.contains(ratatui::style::Modifier::REVERSED),
        )
    };
    let own = fill(x, y);
    let same = |cx: u16, cy: u16| fill(cx, cy) == own;
    let left = (0..=x).rev().take_while(|&cx| same(cx, y)).last()?;
    let right = (x..buffer.area.width)
        .take_while(|&cx| same(cx, y))
        .last()?;
    let top = (0..=y).rev().take_while(|&cy| same(x, cy)).last()?;
    let bottom = (y..buffer.area.height)
        .take_while(|&cy| same(x, cy))
        .last()?;
    Some((right - left + 1, bottom - top + 1))
}

/// A handful of clusters fill a large wall: every tile carries its cluster's name and state
/// in full, the tiles grow with the screen, and little of the map is left empty.
#[test]
fn the_walls_tiles_grow_to_fill_a_large_screen() {
    let state = wall_after_an_hour(false);
    let names: Vec<String> = state
        .clusters
        .iter()
        .map(|row| row.spec.name.clone())
        .collect();
    let mut last = (0, 0);
    for (width, height) in [(120, 40), (200, 60), (300, 90)] {
        let terminal = draw_wall(&state, width, height);
        let lines = rows(&terminal);
        let screen = lines.join("\n");
        let sizes: Vec<(u16, u16)> = names
            .iter()
            .map(|name| {
                tile_size(&terminal, name)
                    .unwrap_or_else(|| panic!("{width}x{height}: no tile for {name}\n{screen}"))
            })
            .collect();
        let smallest = sizes
            .iter()
            .copied()
            .min_by_key(|(w, h)| w * h)
            .expect("tiles");
        assert!(
            smallest.0 > last.0 && smallest.1 > last.1,
            "{width}x{height}: tiles {smallest:?}, no larger than {last:?}"
        );
        last = smallest;
        for word in ["Unreachable", "1 Failed", "1 Degraded", "NotReady"] {
            assert!(screen.contains(word), "{width}x{height}: {word} missing");
        }
        // The map's rows with nothing on them.
        let heat: Vec<&String> = lines
            .iter()
            .skip_while(|line| !line.contains("Fleet heatmap"))
            .skip(1)
            .take_while(|line| !line.starts_with('└'))
            .collect();
        if width == 300 {
            assert!(
                smallest.0 >= 30 && smallest.1 >= 8,
                "300x90: tiles only {smallest:?}"
            );
            // Blank text rows are fine inside a tile; rows with no tile on them are not.
            let empty = (0..heat.len())
                .filter(|&at| {
                    let y = lines
                        .iter()
                        .position(|line| line.contains("Fleet heatmap"))
                        .unwrap_or(0)
                        + 1
                        + at;
                    let buffer = terminal.backend().buffer();
                    (1..width - 1).all(|x| {
                        let cell = &buffer[(x, y as u16)];
                        cell.symbol().trim().is_empty() && cell.bg == ratatui::style::Color::Reset
                    })
                })
                .count();
            assert!(
                empty * 5 <= heat.len(),
                "300x90: {empty} of {} map rows empty\n{screen}",
                heat.len()
            );
        }
    }
}

/// Every tile on the wall reads in every shipped theme: each character on a tile is drawn in
/// an explicit colour on an explicit background with WCAG contrast of at least 4.5:1 (never
/// the terminal's unknown default); under NO_COLOR the tiles are reversed and uncoloured.
#[test]
fn every_wall_tile_reads_in_every_shipped_theme() {
    use flotilla::views::{READABLE, contrast_ratio};
    use ratatui::style::{Color, Modifier};
    let state = wall_after_an_hour(false);
    let keymap = Keymap::built_in("default");
    let mut themes: Vec<Theme> = flotilla::config::theme::BUILT_IN
        .iter()
        .map(|(name, _)| Theme::load(Some(name), false))
        .collect();
    themes.push(Theme::load(None, true));
    for theme in &themes {
        let context = ViewContext {
            theme,
            keymap: &keymap,
            ascii: false,
        };
        let mut terminal = Terminal::new(TestBackend::new(200, 60)).expect("test terminal");
        terminal
            .draw(|frame| views::render(frame, &state, &context))
            .expect("draw");
        for row in &state.clusters {
            assert!(
                tile_size(&terminal, &row.spec.name).is_some_and(|(w, h)| w > 10 && h > 1),
                "{}: {} has no tile",
                theme.name,
                row.spec.name
            );
        }
        let buffer = terminal.backend().buffer();
        let lines = rows(&terminal);
        let top = lines
            .iter()
            .position(|line| line.contains("Fleet heatmap"))
            .expect("the heat map") as u16;
        let bottom = lines
            .iter()
            .position(|line| line.contains("Top problems"))
            .expect("the problems") as u16;
        let mut checked = 0;
        for y in top + 1..bottom {
            for x in 0..buffer.area.width {
                let cell = &buffer[(x, y)];
                let on_tile = cell.bg != Color::Reset || cell.modifier.contains(Modifier::REVERSED);
                if !on_tile || cell.symbol().trim().is_empty() {
                    continue;
                }
                checked += 1;
                if !theme.colour {
                    assert_eq!(
                        (cell.fg, cell.bg, cell.modifier.contains(Modifier::REVERSED)),
                        (Color::Reset, Color::Reset, true),
                        "NO_COLOR: {:?} on a tile",
                        cell.symbol()
                    );
                    continue;
                }
                let ratio = contrast_ratio(cell.fg, cell.bg).unwrap_or(0.0);
                assert!(
                    ratio >= READABLE && !cell.modifier.contains(Modifier::REVERSED),
                    "{}: {:?} on a tile at {x},{y} is {ratio:.2}:1 ({:?} on {:?})",
                    theme.name,
                    cell.symbol(),
                    cell.fg,
                    cell.bg
                );
            }
        }
        assert!(
            checked > 150,
            "{}: only {checked} characters on tiles",
            theme.name
        );
    }
}

/// Ten thousand clusters: one glyph each, every region's name and size legible on its own
/// heading, pages announced, and the counts still readable at every size.
#[test]
fn the_wall_at_ten_thousand_clusters() {
    let files = flotilla::fleet::demo::synthetic_fleet(10_000, 20);
    let (fleet, errors) = load_fleet(&files);
    assert!(errors.is_empty(), "{errors:?}");
    let fleet = Arc::new(fleet);
    let core = SimCore::new(fleet.clone(), &Scenario::synthetic(&fleet.clusters, 7), 7);
    let mut state = app::state_for_fleet(&fleet, "demo-scale 10000×20".into());
    update(&mut state, Action::Backend(core.snapshot()));
    for cluster in 0..core.cluster_count() {
        let event = BackendEvent::Cluster {
            cluster: cluster as u32,
            status: core.cluster_status(cluster),
        };
        update(&mut state, Action::Backend(event));
    }
    state.wall = Some(app::state::Wall {
        stale_after_ms: 86_400_000,
        page_every_ms: 10_000,
        ..Default::default()
    });
    for (width, height) in [(80, 24), (120, 40), (200, 60), (300, 90)] {
        let terminal = draw_wall(&state, width, height);
        let size = format!("{width}x{height} at 10,000 clusters");
        assert_wall_reads(&terminal, &size);
        let lines = rows(&terminal);
        let headings: Vec<&String> = lines
            .iter()
            .filter(|line| line.contains(" clusters") && line.contains("with problems"))
            .collect();
        assert!(
            !headings.is_empty(),
            "{size}: no group heading\n{}",
            lines.join("\n")
        );
        for heading in headings {
            assert!(
                heading.contains("· 2000 clusters"),
                "{size}: a region's size reads apart from its name: {heading}"
            );
        }
        // Every region named with its size, on this page or in the map's first row; any that
        // cannot fit are counted.
        let screen = lines.join("\n");
        let missing: Vec<&str> = ["ap-south", "eu-central", "eu-west", "us-east", "us-west"]
            .into_iter()
            .filter(|region| {
                !screen.contains(&format!("{region} 2000"))
                    && !screen.contains(&format!("{region} · 2000 clusters"))
            })
            .collect();
        if !missing.is_empty() {
            assert!(
                screen.contains(&format!("+{} groups", missing.len())),
                "{size}: {missing:?} neither shown nor counted\n{screen}"
            );
        }
        if width >= 120 {
            assert!(
                missing.is_empty(),
                "{size}: {missing:?} out of sight\n{screen}"
            );
        }
        if width >= 200 {
            for (label, tall) in digit_rows(&terminal) {
                assert!(tall >= 5, "{size}: {label} is {tall} rows tall");
            }
        }
        if width == 300 {
            insta::assert_snapshot!("wall_at_300x90_with_10000_clusters", terminal.backend());
        }
        if width == 80 {
            assert!(
                lines[0].contains("page 1/"),
                "{size}: pages unannounced: {}",
                lines[0]
            );
            insta::assert_snapshot!("wall_at_80x24_with_10000_clusters", terminal.backend());
        }
    }
    // At 80×24 each region takes several pages: every page's heading counts the region's
    // problems over the whole region, and what each page says is on it adds up to that.
    let number = |text: &str| -> usize {
        let digits: String = text.chars().filter(char::is_ascii_digit).collect();
        digits
            .parse()
            .unwrap_or_else(|_| panic!("a count: {text:?}"))
    };
    let mut counted: BTreeMap<String, (BTreeSet<usize>, usize)> = BTreeMap::new();
    let mut page = 0;
    loop {
        if let Some(wall) = state.wall.as_mut() {
            wall.page = page;
        }
        let lines = rows(&draw_wall(&state, 80, 24));
        if page > 0 && lines[0].contains("page 1/") {
            break;
        }
        for line in &lines {
            let Some((name, rest)) = line.trim_start_matches('│').split_once(" · 2000 clusters")
            else {
                continue;
            };
            let Some((_, problems)) = rest.split_once(" · ") else {
                continue;
            };
            let Some((whole, here)) = problems.split_once(" with problems (") else {
                panic!("a region split over pages says what is on this page: {line}");
            };
            let entry = counted.entry(name.trim().to_string()).or_default();
            entry.0.insert(number(whole));
            entry.1 += number(here.split_once(" here)").map_or(here, |(n, _)| n));
        }
        page += 1;
        assert!(page < 200, "the pages come round again");
    }
    assert_eq!(counted.len(), 5, "every region's headings: {counted:?}");
    for (region, (wholes, here)) in &counted {
        assert_eq!(
            wholes.len(),
            1,
            "{region}: the same count of problems on every page: {wholes:?}"
        );
        assert_eq!(
            wholes.first(),
            Some(here),
            "{region}: the problems each page shows add up to the region's"
        );
    }
}

/// The wall's pages turn with space as the docs say, and with pagedown, ↓, → and j; back with
/// pageup, ↑, ← and k; q still quits and no other key does anything.
#[test]
fn the_walls_pages_turn_with_space_and_the_paging_keys() {
    let mut state = wall_after_an_hour(false);
    let page = |state: &app::state::State| state.wall.as_ref().map(|wall| wall.page);
    for (keys, turned) in [
        ("<space>", 1),
        ("<pagedown>", 2),
        ("<down><right>j", 5),
        ("<pageup><up><left>k", 1),
        ("a/:e", 1),
    ] {
        press(&mut state, keys);
        assert_eq!(page(&state), Some(turned), "after {keys}");
        assert!(!state.should_quit, "after {keys}");
    }
    press(&mut state, "<esc>q");
    assert!(state.should_quit);
}

/// `--ascii` is pure ASCII at every size, whatever the wall draws (borders, cut names,
/// separators, glyphs): a terminal without Unicode shows it as it is meant.
#[test]
fn the_ascii_wall_is_pure_ascii_at_every_size() {
    let state = wall_after_an_hour(true);
    for (width, height) in [(40, 12), (80, 24), (120, 40), (200, 60), (300, 90)] {
        let terminal = draw(&state, width, height);
        let buffer = terminal.backend().buffer();
        let foreign: Vec<(u16, u16, String)> = buffer
            .content()
            .iter()
            .enumerate()
            .filter(|(_, cell)| !cell.symbol().is_ascii())
            .map(|(i, cell)| {
                let (x, y) = buffer.pos_of(i);
                (x, y, cell.symbol().to_string())
            })
            .collect();
        assert!(foreign.is_empty(), "{width}x{height}: {foreign:?}");
    }
}

#[test]
fn the_palettes_commands_at_120x40() {
    let mut state = settled_demo_state();
    press(&mut state, ":");
    insta::assert_snapshot!(draw(&state, 120, 40).backend());
}

#[test]
fn the_palettes_clusters_ranked_by_what_is_typed_at_80x24() {
    let mut state = settled_demo_state();
    press(&mut state, ":clu<tab>eu<down><down>");
    insta::assert_snapshot!(draw(&state, 80, 24).backend());
}

#[test]
fn the_palettes_status_counts_follow_the_cells_while_it_is_open_at_120x40() {
    let mut state = settled_demo_state();
    press(&mut state, ":status <down>");
    let before = draw(&state, 120, 40).backend().to_string();
    update(
        &mut state,
        Action::Backend(BackendEvent::Cells(vec![CellUpdate {
            cell: CellRef {
                resource: 0,
                cluster: 0,
            },
            status: CellStatus::Drifted,
            message: None,
        }])),
    );
    let after = draw(&state, 120, 40).backend().to_string();
    assert_ne!(before, after, "a cell's change shows in the open palette");
    insta::assert_snapshot!(after);
}

/// Box corners come in pairs on every row: an overlay leaves no stray border pieces.
fn assert_no_stray_borders(screen: &[String], what: &str) {
    for (row, line) in screen.iter().enumerate() {
        let count = |corner: char| line.chars().filter(|&c| c == corner).count();
        assert!(
            count('┌') == count('┐') && count('└') == count('┘'),
            "{what}: stray border piece on row {row}:\n{}",
            screen.join("\n")
        );
    }
}

/// The console as a person must read it at the sizes operators use, the demo with health and
/// its prod clusters marked danger-class as the real console marks them: every header count,
/// the Detail (a pane, or `i` over the panes), one glyph per matrix column, hidden columns
/// said, no stray border pieces under overlays, and the danger mark never drawn as a failure.
#[test]
fn the_console_reads_at_every_size() {
    use flotilla::model::{HealthKind, StatusKind};
    use ratatui::style::Color;
    for (width, height) in [(80, 24), (120, 40), (200, 60), (300, 90)] {
        let size = format!("{width}x{height}");
        let mut state = demo_state_with_health();
        state.danger_patterns = vec!["prod*".into()];
        let terminal = draw(&state, width, height);
        let screen = rows(&terminal);
        let whole = screen.join("\n");
        insta::assert_snapshot!(format!("console_with_health_at_{size}"), whole);

        // Every header count, abbreviated rather than cut.
        let header = &screen[0];
        assert!(
            header.contains(&format!(
                "{}/{}",
                state.ready_clusters(),
                state.clusters.len()
            )),
            "{size}: {header}"
        );
        let totals = state.cells.totals();
        for kind in StatusKind::ALL {
            let count = totals.get(kind);
            if count > 0 && kind != StatusKind::NotPlaced {
                let shown = format!("{}{count}", kind.symbol(false));
                assert!(header.contains(&shown), "{size}: no {shown} in {header}");
            }
        }
        for kind in [HealthKind::Degraded, HealthKind::Progressing] {
            let shown = format!(
                "{}{}",
                kind.symbol(false).unwrap_or(' '),
                state.cells.health_count(kind)
            );
            assert!(header.contains(&shown), "{size}: no {shown} in {header}");
        }
        assert!(!header.trim_end().ends_with('…'), "{size}: cut: {header}");

        // One glyph per matrix column: beside each column's digit, a space on every row.
        let numbers = screen
            .iter()
            .position(|line| line.contains("KIND"))
            .map(|row| row + 1)
            .expect("the matrix header");
        let chars: Vec<char> = screen[numbers].chars().collect();
        // The matrix starts after the names (char positions, not bytes).
        let names = screen[numbers - 1]
            .chars()
            .collect::<String>()
            .split("NAMESPACE/NAME")
            .next()
            .map_or(0, |before| before.chars().count());
        let columns: Vec<usize> = (names..chars.len() - 1)
            .filter(|&x| chars[x].is_ascii_digit() && chars[x - 1] == ' ' && chars[x + 1] == ' ')
            .collect();
        assert!(columns.len() >= 5, "{size}: {}", screen[numbers]);
        for line in screen[numbers + 1..]
            .iter()
            .take_while(|line| !line.contains("└──"))
        {
            let cells: Vec<char> = line.chars().collect();
            for &x in &columns {
                assert_eq!(cells[x + 1], ' ', "{size}: a glyph between columns: {line}");
            }
        }
        // Hidden clusters are said.
        if columns.len() < state.clusters.len() {
            let note = format!("+{} clusters →", state.clusters.len() - columns.len());
            assert!(whole.contains(&note), "{size}: no {note:?}\n{whole}");
        }

        // The danger mark is a caution: marked, and never on a failure's red background.
        let buffer = terminal.backend().buffer();
        let marks: Vec<_> = buffer
            .content()
            .iter()
            .filter(|cell| cell.symbol() == "⚠")
            .collect();
        assert!(!marks.is_empty(), "{size}: prod clusters are unmarked");
        for mark in marks {
            assert!(
                !matches!(mark.bg, Color::Red | Color::LightRed | Color::Rgb(..)),
                "{size}: the danger mark reads as a failure"
            );
        }

        // The Detail: a pane on tall screens, taking the rows the matrix leaves empty; `i`
        // shows it full width at every size, and esc closes it.
        let detail = screen.iter().position(|line| line.contains("┌ Detail"));
        if height >= 40 {
            let top = detail.unwrap_or_else(|| panic!("{size}: no Detail pane\n{whole}"));
            let bottom = screen[top..]
                .iter()
                .position(|line| line.contains("└"))
                .unwrap_or(0);
            assert!(
                bottom > usize::from(height) / 3,
                "{size}: the Detail pane keeps {bottom} rows while the matrix has empty ones"
            );
        }
        press(&mut state, "i");
        let over = rows(&draw(&state, width, height));
        let text = over.join("\n");
        assert!(text.contains("Detail · i or esc closes"), "{size}:\n{text}");
        assert!(
            text.contains("cluster   batch-ap-south-1"),
            "{size}:\n{text}"
        );
        assert_no_stray_borders(&over, &format!("{size} detail"));
        press(&mut state, "?");
        assert_no_stray_borders(&rows(&draw(&state, width, height)), &format!("{size} help"));
        press(&mut state, "?<esc>");
        assert!(!state.detail_open, "esc closes the Detail");
        if width == 80 {
            insta::assert_snapshot!("detail_over_the_panes_at_80x24", text);
        }
    }
}

/// The help's legend lists every glyph the matrix and the clusters pane can draw.
#[test]
fn the_help_legend_lists_every_glyph() {
    use flotilla::model::{HealthKind, StatusKind};
    let mut state = settled_demo_state();
    press(&mut state, "?");
    let screen = rows(&draw(&state, 120, 40)).join("\n");
    let glyphs = StatusKind::ALL
        .into_iter()
        .map(|kind| kind.symbol(false))
        .chain(
            HealthKind::ALL
                .into_iter()
                .filter_map(|kind| kind.symbol(false)),
        )
        .chain(['⚠']);
    for glyph in glyphs {
        assert!(
            screen
                .lines()
                .any(|line| line.contains(&format!(" {glyph}  "))),
            "no {glyph} in the legend\n{screen}"
        );
    }
}

/// What a person sees on the selected row, whichever row of either pane the cursor is on:
/// every character drawn on the selection's background reads against it (WCAG contrast of
/// at least 4.5:1, colours at xterm's defaults) in every shipped theme; under NO_COLOR the
/// selection is reversed and carries no colour of its own.
#[test]
fn the_selected_row_reads_in_every_shipped_theme() {
    use flotilla::app::state::Pane;
    use flotilla::views::{READABLE, contrast_ratio};
    use harness::console::{put_cluster_cursor_on, put_cursor_on};
    use ratatui::style::{Color, Modifier};

    let settled = settled_demo_state();
    let keymap = Keymap::built_in("default");
    let mut themes: Vec<Theme> = flotilla::config::theme::BUILT_IN
        .iter()
        .map(|(name, _)| Theme::load(Some(name), false))
        .collect();
    themes.push(Theme::load(None, true));
    let mut selections = Vec::new();
    for (pane, rows) in [
        (Pane::Clusters, settled.clusters.len()),
        (Pane::Resources, settled.resources.len()),
    ] {
        for row in 0..rows {
            let mut state = settled.clone();
            state.focus = pane;
            match pane {
                Pane::Clusters => put_cluster_cursor_on(&mut state, row),
                _ => put_cursor_on(&mut state, row),
            }
            selections.push(state);
        }
    }
    for theme in &themes {
        let context = ViewContext {
            theme,
            keymap: &keymap,
            ascii: false,
        };
        let mut checked = 0;
        for state in &selections {
            let mut terminal = Terminal::new(TestBackend::new(160, 40)).expect("test terminal");
            terminal
                .draw(|frame| views::render(frame, state, &context))
                .expect("draw");
            let buffer = terminal.backend().buffer();
            let selected: Vec<_> = match theme.selection.bg {
                Some(bg) => buffer.content().iter().filter(|c| c.bg == bg).collect(),
                None => buffer
                    .content()
                    .iter()
                    .filter(|c| c.modifier.contains(Modifier::REVERSED))
                    .collect(),
            };
            assert!(
                !selected.is_empty(),
                "{}: no selected row on screen",
                theme.name
            );
            for cell in selected.iter().filter(|c| !c.symbol().trim().is_empty()) {
                checked += 1;
                if !theme.colour {
                    assert_eq!(
                        (cell.fg, cell.bg),
                        (Color::Reset, Color::Reset),
                        "NO_COLOR: {:?} on the selected row is coloured",
                        cell.symbol()
                    );
                    continue;
                }
                let ratio = contrast_ratio(cell.fg, cell.bg).unwrap_or(0.0);
                assert!(
                    ratio >= READABLE,
                    "{}: {:?} on the selected row is {ratio:.2}:1 ({:?} on {:?})",
                    theme.name,
                    cell.symbol(),
                    cell.fg,
                    cell.bg
                );
            }
        }
        assert!(checked > 100, "{}: only {checked} characters", theme.name);
    }
}

/// The console's heat strips at 10,000 clusters: every group's name shortened in the middle
/// (never `ap… eu…`), names told apart, and each group's count a number of its own beside the
/// others, never run together; at 120 and 200 columns.
#[test]
fn heat_strip_headers_read_at_ten_thousand_clusters() {
    let files = flotilla::fleet::demo::synthetic_fleet(10_000, 20);
    let (fleet, errors) = load_fleet(&files);
    assert!(errors.is_empty(), "{errors:?}");
    let fleet = Arc::new(fleet);
    let core = SimCore::new(fleet.clone(), &Scenario::synthetic(&fleet.clusters, 7), 7);
    let mut state = app::state_for_fleet(&fleet, "demo-scale 10000×20".into());
    update(&mut state, Action::Backend(core.snapshot()));
    // A fleet this large opens with its clusters folded into heat strips.
    if !state.collapsed {
        press(&mut state, "z");
    }
    assert!(state.collapsed && !state.groups.is_empty());
    for (width, height) in [(120, 40), (200, 60)] {
        let terminal = draw(&state, width, height);
        let lines = rows(&terminal);
        // The name column's heading, shortened when the names give way to the strips.
        let heading = ["NAMESPACE/NAME", "NS/NAME"]
            .into_iter()
            .find(|heading| lines.iter().any(|line| line.contains(heading)))
            .unwrap_or_else(|| panic!("no matrix header\n{}", lines.join("\n")));
        let at = lines
            .iter()
            .position(|line| line.contains(heading))
            .expect("the matrix header");
        // Columns, not bytes: the screen has box lines and glyphs in it.
        let chars = |line: &str| line.chars().collect::<Vec<char>>();
        let (names_line, counts_line) = (chars(&lines[at]), chars(&lines[at + 1]));
        let start = (0..names_line.len())
            .find(|&x| names_line[x..].starts_with(&chars(heading)))
            .expect("the name column");
        // The strips start at the first word after the name (and dialect) headings.
        let mut first = start + heading.len();
        loop {
            first += names_line[first..]
                .iter()
                .position(|c| !c.is_whitespace())
                .unwrap_or_else(|| panic!("no group names\n{}", lines.join("\n")));
            if !names_line[first..].starts_with(&chars("DIALECT")) {
                break;
            }
            first += "DIALECT".len();
        }
        let tokens = |line: &[char]| -> Vec<String> {
            line[first..]
                .iter()
                .collect::<String>()
                .split_whitespace()
                .filter(|token| *token != "│")
                .map(str::to_string)
                .collect()
        };
        let (names, counts) = (tokens(&names_line), tokens(&counts_line));
        let screen = lines.join("\n");
        // Five regions, and the names give way so that every strip shows at 120 columns.
        assert_eq!(names.len(), 5, "{width}x{height}: {names:?}\n{screen}");
        assert!(!screen.contains("groups →"), "{width}x{height}\n{screen}");
        assert_eq!(names.len(), counts.len(), "{width}x{height}\n{screen}");
        for name in &names {
            assert!(
                !name.ends_with('…'),
                "{width}x{height}: {name} cut at its end\n{screen}"
            );
        }
        let mut distinct = names.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), names.len(), "{width}x{height}: {names:?}");
        for (count, name) in counts.iter().zip(&names) {
            let group = state
                .groups
                .iter()
                .find(|group| {
                    let full = &group.name;
                    full == name
                        || name.split_once('…').is_some_and(|(head, tail)| {
                            full.starts_with(head) && full.ends_with(tail)
                        })
                })
                .unwrap_or_else(|| panic!("{name} names no group"));
            let members = group.members.len();
            let shown = if members >= 10_000 {
                format!("{}k", members / 1000)
            } else {
                members.to_string()
            };
            assert_eq!(*count, shown, "{width}x{height}: {name}\n{screen}");
        }
    }
}

/// The drift view takes the width below the header and keeps who changed a field whole: at
/// 160 columns and wider the demo's drifted replicas read `by kubectl-scale`, with their
/// desired and live values, on the field's own row.
#[test]
fn the_drift_view_at_160_columns_names_the_manager_whole() {
    let (mut state, core) = settled_demo();
    for event in core.all_drift_events() {
        update(&mut state, Action::Backend(event));
    }
    press(&mut state, "D");
    for (width, height) in [(160, 40), (200, 50)] {
        let lines = rows(&draw(&state, width, height));
        let screen = lines.join("\n");
        let row = lines
            .iter()
            .find(|line| {
                line.contains("Deployment/shop/inventory") && line.contains("/spec/replicas")
            })
            .unwrap_or_else(|| panic!("{width}x{height}: no drifted replicas\n{screen}"));
        for part in ["by kubectl-scale ", "desired ", "live 9", "drifted "] {
            assert!(
                row.contains(part),
                "{width}x{height}: {part:?} missing from\n{row}"
            );
        }
        if width == 160 {
            insta::assert_snapshot!(screen);
        }
    }
}
