//! Edits of a fleet file as changes of its documents, found by what they are, never by where
//! they sit: an edit computed from one text of a file (its base) is put into the file as it is
//! now, so a document another writer added, removed or changed meanwhile is kept, and the edit
//! is refused when the document it changes is itself no longer what it was computed from.
//! Documents are matched by their text (a document that still reads as it did is that
//! document, wherever it moved); a new document must not take the identity (apiVersion, kind,
//! namespace, name) of one already there. Pure: texts in, a text or a refusal out; it must not
//! read or write files.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::compare::secrets;
use crate::engine::document::parse::document_spans;

/// One document's change: its text before (`None`: the edit adds it) and after (`None`: the
/// edit removes it). Texts are the document's own lines, without its `---` marker line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

impl DocChange {
    /// The change that takes this one back.
    pub fn inverse(&self) -> DocChange {
        DocChange {
            before: self.after.clone(),
            after: self.before.clone(),
        }
    }

    /// What the document is, e.g. `PropagationPolicy shop/web`, from whichever side has it.
    pub fn title(&self) -> String {
        self.before
            .as_deref()
            .or(self.after.as_deref())
            .map(title_of)
            .unwrap_or_else(|| "a document".into())
    }
}

/// Why an edit cannot be put into the file as it is now. Nothing should be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Conflict {
    /// The document the edit changes is no longer as the edit found it (or is gone).
    #[error("{title} changed in {file} since the edit was prepared")]
    Changed {
        file: String,
        title: String,
        /// What the edit was computed from.
        expected: String,
        /// The document of the same identity as it is now, if there is one.
        now: Option<String>,
    },
    /// The edit adds a document whose identity another writer has added meanwhile.
    #[error("{title} was added to {file} by someone else since the edit was prepared")]
    Added {
        file: String,
        title: String,
        now: String,
    },
    /// The document the edit changes appears more than once as it was: which one is meant
    /// cannot be told.
    #[error("{title} appears more than once in {file}; which one the edit meant cannot be told")]
    Ambiguous { file: String, title: String },
}

impl Conflict {
    /// What changed in the document since the edit was computed, as diff lines (`- ` the
    /// edit's side, `+ ` the file's now); a Secret's values are not shown.
    pub fn what_changed(&self) -> Vec<String> {
        let (expected, now) = match self {
            Conflict::Changed { expected, now, .. } => (expected.as_str(), now.as_deref()),
            Conflict::Added { now, .. } => ("", Some(now.as_str())),
            Conflict::Ambiguous { .. } => return Vec::new(),
        };
        let Some(now) = now else {
            return vec!["(it is no longer in the file)".into()];
        };
        let secret = |text: &str| {
            serde_saphyr::from_str::<Value>(text).is_ok_and(|v| secrets::is_secret(&v))
        };
        if secret(expected) || secret(now) {
            return vec!["(a Secret: what changed in it is not shown)".into()];
        }
        similar::TextDiff::from_lines(expected, now)
            .iter_all_changes()
            .filter(|change| change.tag() != similar::ChangeTag::Equal)
            .map(|change| {
                let sign = match change.tag() {
                    similar::ChangeTag::Delete => "-",
                    _ => "+",
                };
                format!("{sign} {}", change.value().trim_end())
            })
            .collect()
    }

    /// The document concerned, e.g. `PropagationPolicy shop/web`.
    pub fn title(&self) -> &str {
        match self {
            Conflict::Changed { title, .. }
            | Conflict::Added { title, .. }
            | Conflict::Ambiguous { title, .. } => title,
        }
    }
}

/// A document's span split into its `---` marker line (possibly empty) and its body.
struct Span {
    whole: std::ops::Range<usize>,
    body: std::ops::Range<usize>,
}

fn spans(text: &str) -> Vec<Span> {
    document_spans(text)
        .into_iter()
        .map(|(_, whole)| {
            let chunk = &text[whole.clone()];
            let first = chunk.split_inclusive('\n').next().unwrap_or("");
            let trimmed = first.trim_end_matches(['\n', '\r']);
            let marker_only = trimmed == "---" || trimmed.starts_with("--- #");
            let skip = if marker_only { first.len() } else { 0 };
            Span {
                body: whole.start + skip..whole.end,
                whole,
            }
        })
        .collect()
}

/// Two bodies are the same document text when they differ at most in trailing blank space
/// (the last document of a file may lose or gain its final newline when another is appended).
fn same_text(a: &str, b: &str) -> bool {
    a.trim_end() == b.trim_end()
}

/// The changes that turn `base` into `new`, document by document (documents matched in
/// order, so an edit that rewrites a document in place is one change, not a removal and an
/// addition).
pub fn changes(base: &str, new: &str) -> Vec<DocChange> {
    let old_spans = spans(base);
    let new_spans = spans(new);
    let old_bodies: Vec<&str> = old_spans.iter().map(|s| &base[s.body.clone()]).collect();
    let new_bodies: Vec<&str> = new_spans.iter().map(|s| &new[s.body.clone()]).collect();
    let mut out = Vec::new();
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old_bodies, &new_bodies) {
        match op {
            similar::DiffOp::Equal { .. } => {}
            similar::DiffOp::Delete {
                old_index, old_len, ..
            } => out.extend(
                old_bodies[old_index..old_index + old_len]
                    .iter()
                    .map(|b| DocChange {
                        before: Some((*b).to_string()),
                        after: None,
                    }),
            ),
            similar::DiffOp::Insert {
                new_index, new_len, ..
            } => out.extend(
                new_bodies[new_index..new_index + new_len]
                    .iter()
                    .map(|b| DocChange {
                        before: None,
                        after: Some((*b).to_string()),
                    }),
            ),
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                let olds = &old_bodies[old_index..old_index + old_len];
                let news = &new_bodies[new_index..new_index + new_len];
                out.extend((0..old_len.max(new_len)).map(|i| DocChange {
                    before: olds.get(i).map(|b| (*b).to_string()),
                    after: news.get(i).map(|b| (*b).to_string()),
                }));
            }
        }
    }
    // Documents that differ only in trailing blank space are no change.
    out.retain(|c| !matches!((&c.before, &c.after), (Some(a), Some(b)) if same_text(a, b)));
    out
}

/// Puts `changes` into `current` (the file as it is now): each changed or removed document is
/// found by its text as the edit found it; a new document is appended unless a document of
/// its identity is already there. `file` names the file in refusals.
pub fn apply(file: &str, current: &str, changes: &[DocChange]) -> Result<String, Conflict> {
    let now = spans(current);
    let mut taken = vec![false; now.len()];
    // (range to replace, replacement)
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut appended: Vec<&str> = Vec::new();
    for change in changes {
        match (&change.before, &change.after) {
            (Some(before), after) => {
                let found: Vec<usize> = now
                    .iter()
                    .enumerate()
                    .filter(|(i, span)| {
                        !taken[*i] && same_text(&current[span.body.clone()], before)
                    })
                    .map(|(i, _)| i)
                    .collect();
                let at = match found.as_slice() {
                    [one] => *one,
                    [] => {
                        return Err(Conflict::Changed {
                            file: file.to_string(),
                            title: title_of(before),
                            expected: before.clone(),
                            now: identity(before).and_then(|id| {
                                now.iter()
                                    .map(|span| &current[span.body.clone()])
                                    .find(|body| identity(body).as_ref() == Some(&id))
                                    .map(str::to_string)
                            }),
                        });
                    }
                    _ => {
                        return Err(Conflict::Ambiguous {
                            file: file.to_string(),
                            title: title_of(before),
                        });
                    }
                };
                taken[at] = true;
                let span = &now[at];
                match after {
                    Some(after) => {
                        // Keep the blank space that ends the document as it is now.
                        let body = &current[span.body.clone()];
                        let tail = &body[body.trim_end().len()..];
                        let mut text = after.trim_end().to_string();
                        text.push_str(if tail.is_empty() && after.ends_with('\n') {
                            "\n"
                        } else {
                            tail
                        });
                        edits.push((span.body.clone(), text));
                    }
                    None => edits.push((span.whole.clone(), String::new())),
                }
            }
            (None, Some(after)) => {
                if let Some(id) = identity(after)
                    && let Some(body) = now
                        .iter()
                        .map(|span| &current[span.body.clone()])
                        .find(|body| identity(body).as_ref() == Some(&id))
                {
                    return Err(Conflict::Added {
                        file: file.to_string(),
                        title: title_of(after),
                        now: body.to_string(),
                    });
                }
                appended.push(after);
            }
            (None, None) => {}
        }
    }
    edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    let mut out = current.to_string();
    for (range, text) in edits {
        out.replace_range(range, &text);
    }
    let newline = if current.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    for body in appended {
        if out.trim().is_empty() {
            out.clear();
        } else {
            if !out.ends_with('\n') {
                out.push_str(newline);
            }
            out.push_str("---");
            out.push_str(newline);
        }
        out.push_str(body);
        if !out.ends_with('\n') {
            out.push_str(newline);
        }
    }
    Ok(out)
}

/// `new` put into `current` when both were made from `base`: `new` itself when the file did
/// not change meanwhile, else the edit's documents merged into what is there now.
pub fn merge(file: &str, base: &str, new: &str, current: &str) -> Result<String, Conflict> {
    if current == base {
        return Ok(new.to_string());
    }
    apply(file, current, &changes(base, new))
}

/// A document's identity: apiVersion, kind, namespace and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity(String, String, String, String);

impl Identity {
    /// The identity of an object; `None` without a kind or a name.
    pub fn of(value: &Value) -> Option<Identity> {
        let text = |pointer: &str| {
            value
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let id = Identity(
            text("/apiVersion"),
            text("/kind"),
            text("/metadata/namespace"),
            text("/metadata/name"),
        );
        (!id.1.is_empty() && !id.3.is_empty()).then_some(id)
    }
}

/// The identity of a document's text.
fn identity(body: &str) -> Option<Identity> {
    Identity::of(&serde_saphyr::from_str(body).ok()?)
}

/// `Kind namespace/name` (or `Kind name`) of a document's text, for messages.
pub fn title_of(body: &str) -> String {
    match identity(body) {
        Some(Identity(_, kind, namespace, name)) if namespace.is_empty() => {
            format!("{kind} {name}")
        }
        Some(Identity(_, kind, namespace, name)) => format!("{kind} {namespace}/{name}"),
        None => "a document".into(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const BASE: &str = "# policies\nkind: PropagationPolicy\nmetadata: {name: web, namespace: shop}\nspec: {priority: 0}\n---\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n";

    fn edited(base: &str) -> String {
        base.replace("priority: 0", "priority: 7")
    }

    #[test]
    fn an_unchanged_file_takes_the_new_text_whole() {
        let new = edited(BASE);
        assert_eq!(merge("f", BASE, &new, BASE).unwrap(), new);
    }

    #[test]
    fn a_prepended_document_never_shifts_what_is_replaced() {
        let current = format!("kind: ConfigMap\nmetadata: {{name: pulled}}\n---\n{BASE}");
        let merged = merge("f", BASE, &edited(BASE), &current).unwrap();
        assert_eq!(
            merged,
            format!(
                "kind: ConfigMap\nmetadata: {{name: pulled}}\n---\n{}",
                edited(BASE)
            )
        );
    }

    #[test]
    fn another_documents_change_is_kept() {
        let current = BASE.replace("name: web\n  namespace", "name: web # mine\n  namespace");
        let merged = merge("f", BASE, &edited(BASE), &current).unwrap();
        assert!(merged.contains("priority: 7"), "{merged}");
        assert!(merged.contains("# mine"), "{merged}");
    }

    #[test]
    fn the_edited_documents_own_change_is_refused_with_what_is_there_now() {
        let current = BASE.replace("priority: 0", "priority: 5");
        let err = merge("f", BASE, &edited(BASE), &current).unwrap_err();
        match err {
            Conflict::Changed { title, now, .. } => {
                assert_eq!(title, "PropagationPolicy shop/web");
                assert!(now.unwrap().contains("priority: 5"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_removed_document_is_a_conflict_and_an_added_one_must_be_new() {
        let current = "kind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n";
        assert!(matches!(
            merge("f", BASE, &edited(BASE), current),
            Err(Conflict::Changed { now: None, .. })
        ));
        let rule = "kind: DriftIgnore\nmetadata: {name: r}\n";
        assert_eq!(
            merge("f", "", rule, "kind: X\nmetadata: {name: theirs}\n").unwrap(),
            format!("kind: X\nmetadata: {{name: theirs}}\n---\n{rule}")
        );
        assert!(matches!(
            merge(
                "f",
                "",
                rule,
                "kind: DriftIgnore\nmetadata: {name: r}\nspec: {}\n"
            ),
            Err(Conflict::Added { .. })
        ));
    }

    #[test]
    fn changes_invert_for_an_undo() {
        let new = format!(
            "{}---\nkind: DriftIgnore\nmetadata: {{name: r}}\n",
            edited(BASE)
        );
        let forward = changes(BASE, &new);
        assert_eq!(forward.len(), 2);
        let back: Vec<DocChange> = forward.iter().rev().map(DocChange::inverse).collect();
        assert_eq!(apply("f", &new, &back).unwrap().trim_end(), BASE.trim_end());
    }

    #[test]
    fn two_equal_documents_are_ambiguous() {
        let doc = "kind: A\nmetadata: {name: a}\n";
        let base = format!("{doc}---\nkind: B\nmetadata: {{name: b}}\n");
        let new =
            "kind: A\nmetadata: {name: a, labels: {x: y}}\n---\nkind: B\nmetadata: {name: b}\n";
        let current = format!("{doc}---\n{doc}---\nkind: B\nmetadata: {{name: b}}\n");
        assert!(matches!(
            merge("f", &base, new, &current),
            Err(Conflict::Ambiguous { .. })
        ));
    }
}
