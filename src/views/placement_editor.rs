//! The placement editor in the right-hand area: the selector being typed, every cluster with
//! its checkbox and what the edit does to it (entering, leaving, staying, or out and why), and
//! the blast radius; in review, the rendered diffs grouped across clusters, coloured.
//! It must not change state.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::widgets::{ViewContext, pane_block};
use crate::app::state::State;
use crate::app::state::placement_editor::{Field, PlacementEditor, Stage, review_rows};
use crate::app::state::review::ReviewRow;
use crate::config::keymap::{Section, ViewCommand};
use crate::config::theme::Theme;
use crate::engine::edit::placement::{ClusterChange, Membership};

pub(super) fn render(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    editor: &PlacementEditor,
    context: &ViewContext,
) {
    let theme = context.theme;
    let resource = state
        .resources
        .get(editor.resource)
        .map(|r| r.target.display_key())
        .unwrap_or_default();
    let title = match &editor.source {
        Some(source) => format!(
            "Placement of {resource} · {} ({}:{})",
            source.title, source.file, source.line
        ),
        None => format!("Placement of {resource}"),
    };
    let lines = match editor.stage {
        Stage::Editing => editing_lines(state, editor, context, area),
        Stage::Reviewing {
            scroll,
            side_by_side,
        } => review_lines(editor, context, scroll, side_by_side, area.width),
    };
    frame.render_widget(
        Paragraph::new(lines).block(pane_block(&title, true, theme)),
        area,
    );
}

fn editing_lines<'a>(
    state: &State,
    editor: &'a PlacementEditor,
    context: &ViewContext,
    area: Rect,
) -> Vec<Line<'a>> {
    let theme = context.theme;
    let focus = |field: Field| {
        if editor.field == field {
            theme.title
        } else {
            theme.muted
        }
    };
    let text_line = |label: &'static str, field: Field, text: &str| {
        Line::from(vec![
            Span::styled(label, focus(field)),
            Span::styled(text.to_string(), theme.text),
            Span::styled(if editor.field == field { "▏" } else { "" }, theme.title),
        ])
    };
    let mut lines = vec![text_line(
        " selector    ",
        Field::Selector,
        &editor.edit.selector,
    )];
    let karmada = editor
        .source
        .as_ref()
        .is_some_and(|source| source.dialect == crate::model::Dialect::Karmada);
    if karmada {
        lines.push(text_line(
            " fields      ",
            Field::Fields,
            &editor.edit.fields,
        ));
        lines.push(text_line(
            " tolerations ",
            Field::Tolerations,
            &editor.edit.tolerations,
        ));
        lines.push(text_line(
            " replicas    ",
            Field::Replicas,
            &editor.edit.replicas,
        ));
    }
    match &editor.error {
        Some(error) => lines.push(Line::from(Span::styled(
            format!(" ✗ {error}"),
            theme.danger,
        ))),
        None => lines.push(Line::from(Span::styled(
            summary(editor),
            if editor.preview_is_current() {
                theme.text
            } else {
                theme.muted
            },
        ))),
    }
    lines.push(Line::from(Span::styled(
        " clusters (space toggles an explicit name; names and selector must both match)",
        focus(Field::Clusters),
    )));
    let rows = usize::from(area.height.saturating_sub(10)).max(1);
    let first = editor.cursor.saturating_sub(rows.saturating_sub(1));
    let changes = editor.preview.as_ref().map(|p| p.clusters.as_slice());
    for (index, row) in state.clusters.iter().enumerate().skip(first).take(rows) {
        let name = &row.spec.name;
        let checked = if editor.edit.clusters.contains(name) {
            "[x]"
        } else {
            "[ ]"
        };
        let cursor = editor.field == Field::Clusters && index == editor.cursor;
        let change = changes.and_then(|changes| changes.iter().find(|c| &c.cluster == name));
        let mut spans = vec![
            Span::styled(if cursor { "▶" } else { " " }, theme.title),
            Span::styled(
                format!("{checked} {name:<24} "),
                if cursor { theme.selection } else { theme.text },
            ),
        ];
        if let Some(change) = change {
            spans.extend(change_spans(change, theme));
        }
        lines.push(Line::from(spans));
    }
    let key = |command| context.keymap.view_hint(Section::Placement, command);
    lines.push(Line::from(Span::styled(
        format!(
            " {} next field · {} toggle a cluster · {} review the diffs · {} cancel · {} help   \
             tolerations: key=value:Effect, key:Effect, *   replicas: duplicated | divided a=3,b=1 | aggregated",
            key(ViewCommand::NextField),
            key(ViewCommand::Toggle),
            key(ViewCommand::Review),
            key(ViewCommand::Back),
            key(ViewCommand::Help),
        ),
        theme.muted,
    )));
    lines
}

fn summary(editor: &PlacementEditor) -> String {
    let Some(preview) = &editor.preview else {
        return " computing the preview…".into();
    };
    format!(
        " {} entering · {} leaving · {} object(s) created · {} updated{}",
        preview.entering().count(),
        preview.leaving().count(),
        preview.created,
        preview.updated,
        if editor.changed() { "" } else { " (unchanged)" }
    )
}

fn change_spans(change: &ClusterChange, theme: &Theme) -> Vec<Span<'static>> {
    let replicas = match (change.replicas_before, change.replicas_after) {
        (Some(before), Some(after)) if before != after => format!("  replicas {before}→{after}"),
        (None, Some(after)) => format!("  replicas {after}"),
        (Some(before), Some(_)) => format!("  replicas {before}"),
        _ => String::new(),
    };
    vec![membership_span(&change.membership, &replicas, theme)]
}

/// What an edit does to one cluster: enters, leaves (why), stays, or out (why); `extra`
/// follows entering and staying.
pub(super) fn membership_span(
    membership: &Membership,
    extra: &str,
    theme: &Theme,
) -> Span<'static> {
    let (text, style): (String, Style) = match membership {
        Membership::Entering => (format!("+ enters{extra}"), theme.diff_added),
        Membership::Leaving { reason } => (format!("- leaves: {reason}"), theme.diff_removed),
        Membership::Staying => (format!("✓ stays{extra}"), theme.text),
        Membership::Out { reason } => (format!("· out: {reason}"), theme.muted),
    };
    Span::styled(text, style)
}

fn review_lines(
    editor: &PlacementEditor,
    context: &ViewContext,
    scroll: usize,
    side_by_side: bool,
    width: u16,
) -> Vec<Line<'static>> {
    let theme = context.theme;
    let mut lines = vec![
        Line::from(Span::styled(summary(editor), theme.text)),
        Line::from(Span::styled(
            super::widgets::review_hint(context.keymap, "edit"),
            theme.muted,
        )),
    ];
    lines.extend(diff_lines(
        &review_rows(editor),
        theme,
        scroll,
        side_by_side,
        width,
    ));
    lines
}

/// Review rows from `scroll` on, unified or side by side; shared with the override editor.
pub(super) fn diff_lines(
    rows: &[ReviewRow],
    theme: &Theme,
    scroll: usize,
    side_by_side: bool,
    width: u16,
) -> Vec<Line<'static>> {
    let rows = rows.get(scroll.min(rows.len())..).unwrap_or_default();
    if side_by_side {
        side_by_side_lines(rows, theme, width)
    } else {
        rows.iter().map(|row| unified_line(row, theme)).collect()
    }
}

fn unified_line(row: &ReviewRow, theme: &Theme) -> Line<'static> {
    let (text, style) = match row {
        ReviewRow::Note(text) => (format!(" {text}"), theme.diff_removed),
        ReviewRow::Group(text) => (format!(" {text}"), theme.title),
        ReviewRow::Hunk(text) => (format!("   {text}"), theme.muted),
        ReviewRow::Context(text) => (format!("    {text}"), theme.text),
        ReviewRow::Removed(text) => (format!("   -{text}"), theme.diff_removed),
        ReviewRow::Added(text) => (format!("   +{text}"), theme.diff_added),
    };
    Line::from(Span::styled(text, style))
}

/// Old on the left, new on the right: a hunk's removed lines pair with the added lines that
/// follow them; context shows on both sides.
fn side_by_side_lines(rows: &[ReviewRow], theme: &Theme, width: u16) -> Vec<Line<'static>> {
    let half = usize::from(width.saturating_sub(5) / 2).max(8);
    let cell = |text: &str| -> String {
        let mut cut: String = text.chars().take(half).collect();
        let pad = half.saturating_sub(cut.chars().count());
        cut.push_str(&" ".repeat(pad));
        cut
    };
    let mut lines = Vec::new();
    let mut removed: Vec<&str> = Vec::new();
    let mut added: Vec<&str> = Vec::new();
    let flush = |removed: &mut Vec<&str>, added: &mut Vec<&str>, lines: &mut Vec<Line<'static>>| {
        for at in 0..removed.len().max(added.len()) {
            let left = removed.get(at).copied();
            let right = added.get(at).copied();
            lines.push(Line::from(vec![
                Span::styled(
                    format!(" {}", cell(left.unwrap_or(""))),
                    if left.is_some() {
                        theme.diff_removed
                    } else {
                        theme.muted
                    },
                ),
                Span::styled(" │ ", theme.muted),
                Span::styled(
                    cell(right.unwrap_or("")),
                    if right.is_some() {
                        theme.diff_added
                    } else {
                        theme.muted
                    },
                ),
            ]));
        }
        removed.clear();
        added.clear();
    };
    for row in rows {
        match row {
            ReviewRow::Removed(text) => {
                if !added.is_empty() {
                    flush(&mut removed, &mut added, &mut lines);
                }
                removed.push(text);
            }
            ReviewRow::Added(text) => added.push(text),
            other => {
                flush(&mut removed, &mut added, &mut lines);
                match other {
                    ReviewRow::Context(text) => lines.push(Line::from(vec![
                        Span::styled(format!(" {}", cell(text)), theme.text),
                        Span::styled(" │ ", theme.muted),
                        Span::styled(cell(text), theme.text),
                    ])),
                    _ => lines.push(unified_line(other, theme)),
                }
            }
        }
    }
    flush(&mut removed, &mut added, &mut lines);
    lines
}
