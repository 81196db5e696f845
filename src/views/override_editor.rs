//! The override editor in the right-hand area: every document holding rules for the selected
//! resource with its rules (target, overriders, whether it reaches the selected cluster), the
//! form being written with its inline error and path completions, the clusters whose objects
//! change; in review, the rendered diffs grouped across clusters. It must not change state.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::widgets::{ViewContext, pane_block};
use crate::app::state::State;
use crate::app::state::override_editor::{
    Form, FormField, FormKind, OverrideEditor, Stage, review_rows,
};
use crate::config::keymap::{Section, ViewCommand};
use crate::config::theme::Theme;
use crate::engine::compare::secrets;
use crate::engine::document::parse::escape_token;
use crate::engine::edit::override_rules::component_name;

pub(super) fn render(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    editor: &OverrideEditor,
    context: &ViewContext,
) {
    let theme = context.theme;
    let resource = state
        .resources
        .get(editor.resource)
        .map(|r| r.target.display_key())
        .unwrap_or_default();
    let cluster = state
        .clusters
        .get(editor.cluster)
        .map(|c| c.spec.name.as_str())
        .unwrap_or_default();
    let title = format!("Overrides of {resource} · checked against {cluster}");
    let mut lines = vec![Line::from(Span::styled(
        summary(editor),
        if editor.error.is_some() {
            theme.danger
        } else {
            theme.text
        },
    ))];
    match &editor.stage {
        Stage::Reviewing {
            scroll,
            side_by_side,
        } => {
            lines.push(Line::from(Span::styled(
                super::widgets::review_hint(context.keymap, "back"),
                theme.muted,
            )));
            let rows = review_rows(editor);
            lines.extend(super::placement_editor::diff_lines(
                &rows,
                theme,
                *scroll,
                *side_by_side,
                area.width,
            ));
        }
        Stage::List => {
            let rows = usize::from(area.height.saturating_sub(5)).max(1);
            lines.extend(visible(rule_lines(editor, cluster, theme), rows));
            lines.push(Line::from(Span::styled(list_hint(context), theme.muted)));
        }
        Stage::Form(form) => {
            let form = form_lines(form, secret_value(editor, form), theme);
            let rows = usize::from(area.height.saturating_sub(3))
                .saturating_sub(form.len())
                .max(1);
            lines.extend(visible(rule_lines(editor, cluster, theme), rows));
            lines.extend(form);
        }
    }
    frame.render_widget(
        Paragraph::new(lines).block(pane_block(&title, true, theme)),
        area,
    );
}

/// The list's keys as the key map in use binds them.
fn list_hint(context: &ViewContext) -> String {
    let key = |command| context.keymap.view_hint(Section::Overrides, command);
    format!(
        " {} patch · {} image · {} replicas · {} label · {} annotation · {} env · {} edit · {} delete · {}/{} move · {} review · {} cancel · {} help",
        key(ViewCommand::Patch),
        key(ViewCommand::Image),
        key(ViewCommand::Replicas),
        key(ViewCommand::Label),
        key(ViewCommand::Annotation),
        key(ViewCommand::Env),
        key(ViewCommand::EditRule),
        key(ViewCommand::DeleteRule),
        key(ViewCommand::MoveUp),
        key(ViewCommand::MoveDown),
        key(ViewCommand::Review),
        key(ViewCommand::Back),
        key(ViewCommand::Help),
    )
}

fn summary(editor: &OverrideEditor) -> String {
    if let Some(error) = &editor.error {
        return format!(" ✗ {error}");
    }
    match (&editor.dirty, &editor.preview) {
        (None, _) => " no change yet".into(),
        (Some(_), None) => " computing the preview…".into(),
        (Some(_), Some(preview)) => format!(
            " {} object(s) change on {}",
            preview.updated,
            if preview.clusters.is_empty() {
                "no cluster".into()
            } else {
                preview.clusters.join(", ")
            }
        ),
    }
}

/// At most `rows` of the rule lines, scrolled so the cursor's line shows.
fn visible((lines, cursor): (Vec<Line<'static>>, usize), rows: usize) -> Vec<Line<'static>> {
    let first = cursor.saturating_sub(rows.saturating_sub(2));
    lines.into_iter().skip(first).take(rows).collect()
}

/// The documents and their rules, and the line the cursor is on.
fn rule_lines(
    editor: &OverrideEditor,
    cluster: &str,
    theme: &Theme,
) -> (Vec<Line<'static>>, usize) {
    let mut lines = Vec::new();
    let mut cursor_line = 0;
    for (d, doc) in editor.docs.iter().enumerate() {
        let mut header = if doc.created {
            format!(" {} (new: created in {} on save)", doc.title, doc.file)
        } else {
            format!(" {} ({}:{})", doc.title, doc.file, doc.line)
        };
        if editor.dirty == Some(d) {
            header.push_str(" · edited");
        }
        lines.push(Line::from(Span::styled(header, theme.title)));
        let rows: Vec<(usize, &crate::engine::edit::override_rules::RuleView)> = editor
            .rows
            .iter()
            .enumerate()
            .filter(|(_, (doc, _))| *doc == d)
            .map(|(at, (_, rule))| (at, rule))
            .collect();
        if rows.is_empty() {
            lines.push(Line::from(Span::styled("    (no rules)", theme.muted)));
        }
        for (at, rule) in rows {
            if at == editor.cursor {
                cursor_line = lines.len();
            }
            let cursor = at == editor.cursor && editor.stage == Stage::List;
            let here = if rule.clusters.iter().any(|c| c == cluster) {
                "✓"
            } else {
                " "
            };
            lines.push(Line::from(vec![
                Span::styled(if cursor { " ▶" } else { "  " }, theme.title),
                Span::styled(
                    // Numbered from 1, as `flotilla override list` and `--rule` number them.
                    format!("{here} #{} {}", rule.index + 1, rule.target),
                    if cursor { theme.selection } else { theme.text },
                ),
            ]));
            for item in &rule.items {
                lines.push(Line::from(Span::styled(
                    format!("       {item}"),
                    theme.muted,
                )));
            }
        }
    }
    (lines, cursor_line)
}

/// Whether the form's value is written into a Secret's values (then it is never drawn).
fn secret_value(editor: &OverrideEditor, form: &Form) -> bool {
    let pointer = match form.kind {
        FormKind::Patch => form.path.clone(),
        FormKind::Annotation => {
            let key = form.value.split_once('=').map_or("", |(key, _)| key.trim());
            format!("/metadata/annotations/{}", escape_token(key))
        }
        FormKind::Image | FormKind::Label => return false,
    };
    secrets::is_secret_value(&editor.rendered, &pointer)
}

fn form_lines(form: &Form, secret: bool, theme: &Theme) -> Vec<Line<'static>> {
    let kind = match form.kind {
        FormKind::Patch => "JSON patch",
        FormKind::Image => "image",
        FormKind::Label => "label (key=value)",
        FormKind::Annotation => "annotation (key=value)",
    };
    let mut lines = vec![Line::from(Span::styled(
        format!(
            " {} {kind} rule",
            if form.editing.is_some() {
                "edit"
            } else {
                "new"
            }
        ),
        theme.title,
    ))];
    for field in form.fields() {
        let (label, text) = match field {
            FormField::Target => ("clusters", form.target.clone()),
            FormField::Op if form.kind == FormKind::Image => (
                "component",
                format!("{} (space cycles)", component_name(form.component)),
            ),
            FormField::Op => ("op", format!("{} (space cycles)", form.op.as_str())),
            FormField::Path => ("path", form.path.clone()),
            FormField::Value if secret => (
                "value",
                match form.value.split_once('=') {
                    Some((key, _)) if form.kind == FormKind::Annotation => {
                        format!("{key}=*** (a Secret's value is not shown)")
                    }
                    _ if form.value.is_empty() => String::new(),
                    _ => "*** (a Secret's value is not shown)".into(),
                },
            ),
            FormField::Value => ("value", form.value.clone()),
        };
        let focused = *field == form.field;
        lines.push(Line::from(vec![
            Span::styled(
                format!(" {label:>9} "),
                if focused { theme.title } else { theme.muted },
            ),
            Span::styled(
                text,
                if form.prefilled && *field == FormField::Value {
                    theme.selection
                } else {
                    theme.text
                },
            ),
            Span::styled(if focused { "▏" } else { "" }, theme.title),
        ]));
    }
    if form.completions.len() > 1 {
        lines.push(Line::from(Span::styled(
            format!(
                " tab: {}/{} of {}",
                form.completion + 1,
                form.completions.len(),
                form.completions.join(" ")
            ),
            theme.muted,
        )));
    }
    if let Some(error) = &form.error {
        lines.push(Line::from(Span::styled(
            format!(" ✗ {error}"),
            theme.danger,
        )));
    }
    lines.push(Line::from(Span::styled(
        " ↑↓ field · tab complete the path · enter apply to the preview · esc drop the form",
        theme.muted,
    )));
    lines
}
