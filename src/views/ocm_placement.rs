//! The OCM Placement editor in the right-hand area: the hub's Placements to choose from, then
//! the predicates, tolerations and number of clusters being typed, and every cluster with what
//! the edit does to its place in the decision (entering, leaving, staying, or out and why).
//! It must not change state.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::placement_editor::membership_span;
use super::widgets::{ViewContext, pane_block};
use crate::app::state::State;
use crate::app::state::ocm_placement::{OcmField, OcmPlacementEditor, OcmStage};
use crate::config::keymap::{Section, ViewCommand};

pub(super) fn render(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    editor: &OcmPlacementEditor,
    context: &ViewContext,
) {
    let theme = context.theme;
    let (title, lines) = match editor.stage {
        OcmStage::Choosing { cursor } => (
            "Choose a Placement to edit".to_string(),
            choosing_lines(state, cursor, context),
        ),
        OcmStage::Editing => (
            editor
                .base
                .as_ref()
                .map(|base| base.title())
                .unwrap_or_default(),
            editing_lines(state, editor, context, area),
        ),
    };
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(pane_block(&title, true, theme)),
        area,
    );
}

fn decided(clusters: &[String]) -> String {
    if clusters.is_empty() {
        "none".into()
    } else {
        clusters.join(", ")
    }
}

fn choosing_lines(state: &State, cursor: usize, context: &ViewContext) -> Vec<Line<'static>> {
    let theme = context.theme;
    let Some(world) = &state.placements else {
        return Vec::new();
    };
    let mut lines: Vec<Line> = world
        .placements
        .iter()
        .enumerate()
        .map(|(index, placement)| {
            let selected = index == cursor;
            let followers: Vec<String> = world
                .followers(placement)
                .iter()
                .map(|set| set.name.clone())
                .collect();
            let mut spans = vec![
                Span::styled(if selected { "▶ " } else { "  " }, theme.title),
                Span::styled(
                    format!("{}/{}", placement.namespace(), placement.name()),
                    if selected {
                        theme.selection
                    } else {
                        theme.text
                    },
                ),
                Span::styled(
                    format!("  decided: {}", decided(&placement.decided)),
                    theme.text,
                ),
            ];
            if let Some((ok, why)) = &placement.satisfied {
                spans.push(Span::styled(
                    format!("  · {why}"),
                    if *ok { theme.muted } else { theme.danger },
                ));
            }
            if !followers.is_empty() {
                spans.push(Span::styled(
                    format!("  · followed by {}", followers.join(", ")),
                    theme.muted,
                ));
            }
            Line::from(spans)
        })
        .collect();
    lines.push(Line::from(""));
    let key = |command| context.keymap.view_hint(Section::OcmPlacement, command);
    lines.push(Line::from(Span::styled(
        format!(
            " {}{} choose · {} edit · {} cancel · {} help",
            key(ViewCommand::Up),
            key(ViewCommand::Down),
            key(ViewCommand::Confirm),
            key(ViewCommand::Back),
            key(ViewCommand::Help),
        ),
        theme.muted,
    )));
    lines
}

fn editing_lines(
    state: &State,
    editor: &OcmPlacementEditor,
    context: &ViewContext,
    area: Rect,
) -> Vec<Line<'static>> {
    let theme = context.theme;
    let focus = |field: OcmField| {
        if editor.field == field {
            theme.title
        } else {
            theme.muted
        }
    };
    let input = |field: OcmField, text: &str| {
        vec![
            Span::styled(text.to_string(), theme.text),
            Span::styled(if editor.field == field { "▏" } else { "" }, theme.title),
        ]
    };
    let mut lines = Vec::new();
    if let Some(base) = &editor.base {
        let sets = base
            .object
            .pointer("/spec/clusterSets")
            .and_then(serde_json::Value::as_array)
            .map(|sets| {
                sets.iter()
                    .filter_map(serde_json::Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .filter(|sets| !sets.is_empty())
            .unwrap_or_else(|| "every set bound to its namespace".into());
        lines.push(Line::from(Span::styled(
            format!(
                " cluster sets: {sets} · OCM decided: {}",
                decided(&base.decided)
            ),
            theme.muted,
        )));
    }
    for slot in 0..editor.predicate_slots() {
        let predicate = editor.edit.predicates.get(slot);
        let label = if slot == 0 {
            " predicate   ".to_string()
        } else if predicate.is_none() {
            " or…         ".to_string()
        } else {
            " or          ".to_string()
        };
        let mut spans = vec![
            Span::styled(label, focus(OcmField::Labels(slot))),
            Span::styled("labels ", focus(OcmField::Labels(slot))),
        ];
        spans.extend(input(
            OcmField::Labels(slot),
            predicate.map_or("", |p| p.labels.as_str()),
        ));
        spans.push(Span::styled("   claims ", focus(OcmField::Claims(slot))));
        spans.extend(input(
            OcmField::Claims(slot),
            predicate.map_or("", |p| p.claims.as_str()),
        ));
        if predicate.is_some_and(|p| p.cel) {
            spans.push(Span::styled("   + CEL (kept as is)", theme.muted));
        }
        lines.push(Line::from(spans));
    }
    let mut tolerations = vec![Span::styled(" tolerations ", focus(OcmField::Tolerations))];
    tolerations.extend(input(OcmField::Tolerations, &editor.edit.tolerations));
    lines.push(Line::from(tolerations));
    let mut count = vec![Span::styled(" clusters    ", focus(OcmField::Count))];
    count.extend(input(OcmField::Count, &editor.edit.count));
    if editor.edit.count.trim().is_empty() {
        count.push(Span::styled("(every match)", theme.muted));
    }
    lines.push(Line::from(count));
    if editor.changed_on_hub(state.placements.as_deref()) {
        lines.push(Line::from(Span::styled(
            " ⚠ this Placement changed on the hub since you opened it: writing will be refused (esc, then e to start again)",
            theme.danger,
        )));
    }
    if let Some(error) = &editor.error {
        lines.push(Line::from(Span::styled(
            format!(" ✗ {error}"),
            theme.danger,
        )));
    }
    if let Some(preview) = &editor.preview {
        let (ok, reason) = preview.satisfied;
        lines.push(Line::from(vec![
            Span::styled(
                format!(
                    " {} entering · {} leaving · decides {} · ",
                    preview.entering().count(),
                    preview.leaving().count(),
                    decided(&preview.selected)
                ),
                if editor.error.is_some() {
                    theme.muted
                } else {
                    theme.text
                },
            ),
            Span::styled(
                format!(
                    "PlacementSatisfied={}: {reason}",
                    if ok { "True" } else { "False" }
                ),
                if ok { theme.muted } else { theme.danger },
            ),
        ]));
        for note in &preview.notes {
            lines.push(Line::from(Span::styled(format!(" ⓘ {note}"), theme.muted)));
        }
        let rows = usize::from(area.height.saturating_sub(12)).max(1);
        for row in preview.clusters.iter().take(rows) {
            lines.push(Line::from(vec![
                Span::styled(format!("   {:<24} ", row.cluster), theme.text),
                membership_span(&row.membership, "", theme),
            ]));
        }
        if preview.clusters.len() > rows {
            lines.push(Line::from(Span::styled(
                format!("   … {} more", preview.clusters.len() - rows),
                theme.muted,
            )));
        }
    }
    let key = |command| context.keymap.view_hint(Section::OcmPlacement, command);
    lines.push(Line::from(Span::styled(
        format!(
            " {}/{} next field · {} previous · {} confirm · {} cancel   selectors: env=prod,tier in (a,b),!legacy   \
             tolerations: key=value:NoSelect, key:NoSelectIfNew for 300s, *",
            key(ViewCommand::NextField),
            key(ViewCommand::Down),
            key(ViewCommand::Up),
            key(ViewCommand::Confirm),
            key(ViewCommand::Back),
        ),
        theme.muted,
    )));
    lines
}
