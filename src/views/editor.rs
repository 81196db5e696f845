//! The placement editor in the right-hand area: the selector being typed, every cluster with
//! its checkbox and what the edit does to it (entering, leaving, staying, or out and why), and
//! the blast radius; in review, the rendered diffs grouped across clusters, coloured.
//! It must not change state.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{ViewContext, pane_block};
use crate::app::editor::{Field, PlacementEditor, Stage};
use crate::app::state::State;
use crate::config::theme::Theme;
use crate::engine::edit::{ClusterChange, Membership};

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
        Stage::Editing => editing_lines(state, editor, theme, area),
        Stage::Reviewing { scroll } => review_lines(editor, theme, scroll),
    };
    frame.render_widget(
        Paragraph::new(lines).block(pane_block(&title, true, theme)),
        area,
    );
}

fn editing_lines<'a>(
    state: &State,
    editor: &'a PlacementEditor,
    theme: &Theme,
    area: Rect,
) -> Vec<Line<'a>> {
    let focus = |field: Field| {
        if editor.field == field {
            theme.title
        } else {
            theme.muted
        }
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(" selector ", focus(Field::Selector)),
        Span::styled(editor.edit.selector.clone(), theme.text),
        Span::styled(
            if editor.field == Field::Selector {
                "▏"
            } else {
                ""
            },
            theme.title,
        ),
    ])];
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
    let rows = usize::from(area.height.saturating_sub(7)).max(1);
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
    lines.push(Line::from(Span::styled(
        " tab selector/clusters · space toggle · enter review the diffs · esc cancel",
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
    let (text, style): (String, Style) = match &change.membership {
        Membership::Entering => (format!("+ enters{replicas}"), theme.diff_added),
        Membership::Leaving { reason } => (format!("- leaves: {reason}"), theme.diff_removed),
        Membership::Staying => (format!("✓ stays{replicas}"), theme.text),
        Membership::Out { reason } => (format!("· out: {reason}"), theme.muted),
    };
    vec![Span::styled(text, style)]
}

fn review_lines<'a>(editor: &'a PlacementEditor, theme: &Theme, scroll: usize) -> Vec<Line<'a>> {
    let mut lines = vec![
        Line::from(Span::styled(summary(editor), theme.text)),
        Line::from(Span::styled(
            " enter / y save and propagate (asks to confirm) · ↑↓ scroll · esc back to editing",
            theme.muted,
        )),
    ];
    let mut body: Vec<Line> = Vec::new();
    if let Some(preview) = &editor.preview {
        for change in preview.leaving() {
            body.push(Line::from(Span::styled(
                format!(
                    " {} leaves; its objects stay on it (prune with `flotilla apply --prune`)",
                    change.cluster
                ),
                theme.diff_removed,
            )));
        }
        if preview.diffs.is_empty() {
            body.push(Line::from(Span::styled(
                " no rendered object changes",
                theme.muted,
            )));
        }
        for group in &preview.diffs {
            let clusters = group.clusters.join(", ");
            let identical = if group.clusters.len() > 1 {
                ": identical"
            } else {
                ""
            };
            body.push(Line::from(Span::styled(
                format!(" {} on {clusters}{identical}", group.resource.display_key()),
                theme.title,
            )));
            for line in group.diff.lines() {
                let style = if line.starts_with("+++") || line.starts_with("---") {
                    theme.muted
                } else if line.starts_with('+') {
                    theme.diff_added
                } else if line.starts_with('-') {
                    theme.diff_removed
                } else if line.starts_with("@@") {
                    theme.muted
                } else {
                    theme.text
                };
                body.push(Line::from(Span::styled(format!("   {line}"), style)));
            }
        }
    }
    lines.extend(body.into_iter().skip(scroll));
    lines
}
