//! The review of an edit before it is confirmed, shared by the placement and override
//! editors: the offline render diff (or, once the clusters answer, their server-side dry run)
//! as rows grouped across clusters by identical content, and the hunks `n`/`p` jump between.
//! Pure: it must not import the state.

use std::collections::BTreeSet;

use crate::engine::edit::placement::DiffGroup;
use crate::messages::PlanItem;

/// One row of the review: what the preview does, then each diff group's hunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewRow {
    /// A line about the whole change (a cluster leaving, nothing changing).
    Note(String),
    /// `Kind/ns/name on a, b: identical`.
    Group(String),
    /// `@@ -1,3 +1,4 @@`, where `n`/`p` jump to.
    Hunk(String),
    Context(String),
    Removed(String),
    Added(String),
}

/// The rows of an edit's diffs: the offline render diff until the clusters' dry run answers,
/// then the servers' own diffs, each grouped across clusters by identical content. Shared by
/// the placement and override editors.
pub fn diff_review_rows(diffs: &[DiffGroup], dry_run: &[PlanItem], asked: usize) -> Vec<ReviewRow> {
    let mut rows = Vec::new();
    if diffs.is_empty() {
        rows.push(ReviewRow::Note("no rendered object changes".into()));
        return rows;
    }
    if dry_run.is_empty() {
        rows.push(ReviewRow::Note(
            "offline render diff; each cluster's server-side dry run replaces it as it answers"
                .into(),
        ));
        for group in diffs {
            rows.push(ReviewRow::Group(group_title(
                &group.resource.display_key(),
                &group.clusters,
                None,
            )));
            push_diff(&mut rows, &group.diff);
        }
        return rows;
    }
    let answered: BTreeSet<&str> = dry_run.iter().map(|item| item.cluster.as_str()).collect();
    rows.push(ReviewRow::Note(format!(
        "server-side dry run: {} of {asked} cluster(s) answered",
        answered.len(),
    )));
    let mut groups: std::collections::BTreeMap<(String, &str, &str, &str), Vec<String>> =
        std::collections::BTreeMap::new();
    for item in dry_run {
        groups
            .entry((
                item.resource.display_key(),
                item.action.as_str(),
                item.diff.as_str(),
                item.message.as_str(),
            ))
            .or_default()
            .push(item.cluster.clone());
    }
    for ((resource, action, diff, message), clusters) in groups {
        rows.push(ReviewRow::Group(group_title(
            &resource,
            &clusters,
            Some(action),
        )));
        if !message.is_empty() {
            rows.push(ReviewRow::Note(message.to_string()));
        }
        push_diff(&mut rows, diff);
    }
    rows
}

fn group_title(resource: &str, clusters: &[String], action: Option<&str>) -> String {
    let identical = if clusters.len() > 1 {
        ": identical"
    } else {
        ""
    };
    let action = action.map(|a| format!(" · {a}")).unwrap_or_default();
    format!("{resource} on {}{identical}{action}", clusters.join(", "))
}

fn push_diff(rows: &mut Vec<ReviewRow>, diff: &str) {
    for line in diff.lines() {
        if line.starts_with("+++") || line.starts_with("---") {
            continue;
        }
        rows.push(if line.starts_with("@@") {
            ReviewRow::Hunk(line.to_string())
        } else if let Some(rest) = line.strip_prefix('+') {
            ReviewRow::Added(rest.to_string())
        } else if let Some(rest) = line.strip_prefix('-') {
            ReviewRow::Removed(rest.to_string())
        } else {
            ReviewRow::Context(line.strip_prefix(' ').unwrap_or(line).to_string())
        });
    }
}

/// The row of the next (or previous) hunk or group header from `scroll`.
pub fn jump(rows: &[ReviewRow], scroll: usize, forward: bool) -> usize {
    let is_stop = |row: &ReviewRow| matches!(row, ReviewRow::Hunk(_) | ReviewRow::Group(_));
    if forward {
        rows.iter()
            .enumerate()
            .skip(scroll + 1)
            .find(|(_, row)| is_stop(row))
            .map_or(scroll, |(at, _)| at)
    } else {
        rows.iter()
            .enumerate()
            .take(scroll)
            .rev()
            .find(|(_, row)| is_stop(row))
            .map_or(0, |(at, _)| at)
    }
}
