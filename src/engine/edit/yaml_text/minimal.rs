//! The smallest rewrite of one document for a structural change: fields added, removed or of
//! another shape. Only the lines of the fields whose value changed are written again — a
//! collection written in flow style (`[a, b]`, `{key: value}`) stays flow, a block one stays
//! block, a new field is inserted where the new value orders it, at its siblings' indent —
//! and every other line (key order, comments, quoting) keeps its bytes. It gives up (`None`)
//! on anything it cannot place exactly; the caller then writes the document afresh and checks
//! every result reads back as the value asked for.

use std::ops::Range;

use serde_json::Value;

use super::syntax::{parse, split_inline_comment, to_block_yaml, values_match};
use crate::engine::document::parse::{Doc, escape_token};

/// `chunk` (one document) rewritten to read as `value`, touching only what changed.
pub fn edit(file: &str, chunk: &str, value: &Value) -> Option<String> {
    let old = parse(file, chunk).into_iter().next()?;
    let lines: Vec<&str> = chunk.split_inclusive('\n').collect();
    let newline = if chunk.contains("\r\n") { "\r\n" } else { "\n" };
    let text = Text {
        doc: &old,
        lines: &lines,
        newline,
    };
    let mut edits = Vec::new();
    text.plan("", &old.value, value, &mut edits)?;
    // Apply from the bottom up; the edits never overlap. Insertions at one place go in the
    // order they were planned (a nested field before its parent's next sibling), so the later
    // planned is applied first and the earlier lands in front of it.
    let mut edits: Vec<(usize, Edit)> = edits.into_iter().enumerate().collect();
    edits.sort_by_key(|(seq, edit)| std::cmp::Reverse((edit.lines.start, edit.lines.end, *seq)));
    let mut out: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
    let mut last = usize::MAX;
    for (_, edit) in edits {
        if edit.lines.end > last {
            return None;
        }
        last = edit.lines.start;
        out.splice(edit.lines, [edit.text]);
    }
    Some(out.concat())
}

/// Lines `lines` (0-based, end exclusive; empty for an insertion) replaced by `text`.
struct Edit {
    lines: Range<usize>,
    text: String,
}

struct Text<'a> {
    doc: &'a Doc,
    lines: &'a [&'a str],
    newline: &'a str,
}

impl Text<'_> {
    /// The edits that bring the field at `pointer` from `old` to `new`.
    fn plan(&self, pointer: &str, old: &Value, new: &Value, edits: &mut Vec<Edit>) -> Option<()> {
        if values_match(old, new) {
            return Some(());
        }
        match (old, new) {
            (Value::Object(a), Value::Object(b)) if self.is_block(pointer) => {
                // Keys both have must keep their order: only insertions and removals move.
                let kept: Vec<&String> = a.keys().filter(|k| b.contains_key(*k)).collect();
                let kept_new: Vec<&String> = b.keys().filter(|k| a.contains_key(*k)).collect();
                if kept != kept_new {
                    return None;
                }
                for (key, value) in a {
                    let child = child(pointer, key);
                    match b.get(key) {
                        Some(next) => self.plan(&child, value, next, edits)?,
                        None => edits.push(Edit {
                            lines: self.with_comments_above(self.subtree(&child)?),
                            text: String::new(),
                        }),
                    }
                }
                let mut previous: Option<&String> = None;
                for (key, value) in b {
                    if a.contains_key(key) {
                        previous = Some(key);
                        continue;
                    }
                    let at = match previous {
                        Some(key) => self.subtree(&child(pointer, key))?.end,
                        None => self.subtree(&child(pointer, a.keys().next()?))?.start,
                    };
                    let indent = self.key_column(&child(pointer, a.keys().next()?))?;
                    let mut one = serde_json::Map::new();
                    one.insert(key.clone(), value.clone());
                    edits.push(Edit {
                        lines: at..at,
                        text: self.block(&Value::Object(one), indent)?,
                    });
                    previous = Some(key);
                }
                Some(())
            }
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() && self.is_block(pointer) => {
                for (index, (x, y)) in a.iter().zip(b).enumerate() {
                    self.plan(&format!("{pointer}/{index}"), x, y, edits)?;
                }
                Some(())
            }
            _ => self.replace(pointer, old, new, edits),
        }
    }

    /// Writes the field at `pointer` again with its new value, in its old value's style.
    fn replace(
        &self,
        pointer: &str,
        old: &Value,
        new: &Value,
        edits: &mut Vec<Edit>,
    ) -> Option<()> {
        let range = self.subtree(pointer)?;
        if self.is_item(pointer) {
            // A `- item` on a line of its own: the item is written again after its dash, in
            // flow style (a block item's fields were planned one by one instead).
            if range.len() != 1 {
                return None;
            }
            let line = self.lines[range.start].trim_end_matches(['\n', '\r']);
            let comment = split_inline_comment(line)
                .map(|(_, comment)| format!(" {comment}"))
                .unwrap_or_default();
            let column = self.key_column(pointer)?;
            edits.push(Edit {
                lines: range,
                text: format!(
                    "{}{}{comment}{}",
                    line.get(..column)?,
                    flow_text(new)?,
                    self.newline
                ),
            });
            return Some(());
        }
        let line = self.lines[range.start];
        let body = line.trim_end_matches(['\n', '\r']);
        let (code, comment) = match split_inline_comment(body) {
            Some((code, comment)) => (code.trim_end(), format!(" {comment}")),
            None => (body.trim_end(), String::new()),
        };
        let column = self.key_column(pointer)?;
        // A key's column past the trimmed code (a `- ` item with nothing after its dash) has no
        // key here to write after: the caller writes the document whole instead.
        let colon = code.get(column..)?.find(':')? + column;
        let head = &code[..=colon];
        let rest = code[colon + 1..].trim();
        let flow = rest.starts_with('[') || rest.starts_with('{');
        let one_line = range.len() == 1;
        let written = match new {
            Value::Object(map) if !(map.is_empty() || flow && one_line) => format!(
                "{head}{comment}{}{}",
                self.newline,
                self.block(new, column + 2)?
            ),
            Value::Array(items) if !(items.is_empty() || flow && one_line) => {
                // A block sequence under a key sits at the key's column, as kubectl writes it.
                let _ = old;
                format!(
                    "{head}{comment}{}{}",
                    self.newline,
                    self.block(new, column)?
                )
            }
            _ => format!("{head} {}{comment}{}", flow_text(new)?, self.newline),
        };
        edits.push(Edit {
            lines: range,
            text: written,
        });
        Some(())
    }

    /// Whether the collection at `pointer` is written in block style (the root always is).
    fn is_block(&self, pointer: &str) -> bool {
        if pointer.is_empty() {
            return true;
        }
        let Some(range) = self.subtree(pointer) else {
            return false;
        };
        let line = self.lines[range.start].trim_end_matches(['\n', '\r']);
        let code = split_inline_comment(line).map_or(line, |(code, _)| code);
        let Some(column) = self.key_column(pointer) else {
            return false;
        };
        // A sequence item (`- …`) holding a mapping is block when its first key is.
        let after = code.get(column..).unwrap_or_default();
        match after.find(':') {
            Some(colon) if !self.is_item(pointer) => after[colon + 1..].trim().is_empty(),
            _ => !after.trim_start().starts_with(['{', '[']),
        }
    }

    fn is_item(&self, pointer: &str) -> bool {
        pointer
            .rsplit('/')
            .next()
            .is_some_and(|token| token.bytes().all(|b| b.is_ascii_digit()))
            && pointer
                .rsplit_once('/')
                .and_then(|(parent, _)| self.doc.value.pointer(parent))
                .is_some_and(Value::is_array)
    }

    /// The column the field at `pointer` starts at on its line (after any `- `).
    fn key_column(&self, pointer: &str) -> Option<usize> {
        let line = self.lines[self.doc.exact_line(pointer)? - 1];
        let mut column = line.len() - line.trim_start().len();
        while line[column..].starts_with("- ") {
            column += 2;
            column += line[column..].len() - line[column..].trim_start().len();
        }
        Some(column)
    }

    /// The lines of the field at `pointer`: its own line and every line below it indented
    /// deeper (or a block sequence's `- ` items at its column), trailing blank and comment
    /// lines left to what follows.
    fn subtree(&self, pointer: &str) -> Option<Range<usize>> {
        let start = self.doc.exact_line(pointer)? - 1;
        let column = self.key_column(pointer)?;
        let item = self.is_item(pointer);
        let mut end = start + 1;
        let mut last = start + 1;
        while end < self.lines.len() {
            let line = self.lines[end].trim_end_matches(['\n', '\r']);
            let trimmed = line.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                end += 1;
                continue;
            }
            if trimmed == "---" || trimmed == "..." {
                break;
            }
            let indent = line.len() - trimmed.len();
            let own_sequence = !item && indent == column && trimmed.starts_with("- ");
            if indent > column || own_sequence {
                end += 1;
                last = end;
                continue;
            }
            break;
        }
        Some(start..last)
    }

    /// `range` with the whole-line comments right above it (they speak of that field).
    fn with_comments_above(&self, range: Range<usize>) -> Range<usize> {
        let mut start = range.start;
        while start > 0 && self.lines[start - 1].trim_start().starts_with('#') {
            start -= 1;
        }
        start..range.end
    }

    /// `value` in block style, every line indented by `indent` spaces.
    fn block(&self, value: &Value, indent: usize) -> Option<String> {
        let text = to_block_yaml(value).ok()?;
        let pad = " ".repeat(indent);
        Some(
            text.lines()
                .map(|line| format!("{pad}{line}{}", self.newline))
                .collect(),
        )
    }
}

fn child(pointer: &str, key: &str) -> String {
    format!("{pointer}/{}", escape_token(key))
}

/// `value` on one line in flow style: `[a, b]`, `{key: value}`, or a plain scalar.
fn flow_text(value: &Value) -> Option<String> {
    Some(match value {
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(flow_text)
                .collect::<Option<Vec<_>>>()?
                .join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(key, value)| Some(format!(
                    "{}: {}",
                    scalar(&Value::String(key.clone()))?,
                    flow_text(value)?
                )))
                .collect::<Option<Vec<_>>>()?
                .join(", ")
        ),
        other => scalar(other)?,
    })
}

/// A scalar as block YAML writes it on one line (quoted where YAML needs it); inside a flow
/// collection a plain scalar must not hold the flow indicators.
fn scalar(value: &Value) -> Option<String> {
    let text = to_block_yaml(value).ok()?;
    let text = text.trim_end();
    if text.contains('\n') {
        return None;
    }
    if text.contains([',', '[', ']', '{', '}']) && !text.starts_with(['"', '\'']) {
        return serde_json::to_string(value).ok();
    }
    Some(text.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const POLICY: &str = "apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: batch-only   # the batch clusters
  namespace: batch
spec:
  resourceSelectors:
  - {apiVersion: batch/v1, kind: CronJob}
  - {apiVersion: v1, kind: ConfigMap, labelSelector: {matchLabels: {propagate: \"true\"}}}
  placement:
    clusterAffinity:
      labelSelector:
        matchLabels: {env: batch}
        matchExpressions:
        - {key: env, operator: In, values: [prod, edge]}
";

    fn edited(change: impl FnOnce(&mut Value)) -> (String, Value) {
        let mut value: Value = serde_saphyr::from_str(POLICY).unwrap();
        change(&mut value);
        let text = edit("p.yaml", POLICY, &value).expect("a minimal edit");
        let back: Value = serde_saphyr::from_str(&text).unwrap();
        assert!(values_match(&back, &value), "{text}");
        (text, value)
    }

    /// The lines of `text` that are not lines of `POLICY`, and how many of its lines went.
    fn changed(text: &str) -> (Vec<&str>, usize) {
        let old: Vec<&str> = POLICY.lines().collect();
        let new: Vec<&str> = text.lines().collect();
        let added = new.iter().copied().filter(|l| !old.contains(l)).collect();
        let removed = old.iter().filter(|l| !new.contains(l)).count();
        (added, removed)
    }

    #[test]
    fn a_new_field_is_two_lines_at_its_siblings_indent() {
        let (text, _) = edited(|v| {
            v["spec"]["placement"]["clusterAffinity"]["clusterNames"] = serde_json::json!(["b1"]);
        });
        assert_eq!(
            changed(&text),
            (vec!["      clusterNames:", "      - b1"], 0),
            "{text}"
        );
    }

    #[test]
    fn a_flow_value_changed_stays_flow_on_its_line() {
        let (text, _) = edited(|v| {
            v["spec"]["placement"]["clusterAffinity"]["labelSelector"]["matchExpressions"][0]["values"] =
                serde_json::json!(["prod", "edge", "staging"]);
        });
        assert_eq!(
            changed(&text),
            (
                vec!["        - {key: env, operator: In, values: [prod, edge, staging]}"],
                1
            ),
            "{text}"
        );
        let (text, _) = edited(|v| {
            v["spec"]["placement"]["clusterAffinity"]["labelSelector"]["matchLabels"] =
                serde_json::json!({"env": "batch", "tier": "web"});
        });
        assert_eq!(
            changed(&text),
            (vec!["        matchLabels: {env: batch, tier: web}"], 1),
            "{text}"
        );
    }

    #[test]
    fn a_removed_field_takes_its_lines_and_nothing_else() {
        let (text, _) = edited(|v| {
            v["spec"]["placement"]["clusterAffinity"]["labelSelector"]
                .as_object_mut()
                .unwrap()
                .remove("matchExpressions");
        });
        assert_eq!(changed(&text), (vec![], 2), "{text}");
        assert!(
            text.contains("name: batch-only   # the batch clusters"),
            "{text}"
        );
    }

    #[test]
    fn two_new_fields_at_one_place_keep_their_nesting() {
        let (text, _) = edited(|v| {
            v["spec"]["placement"]["clusterAffinity"]["clusterNames"] = serde_json::json!(["b1"]);
            v["spec"]["placement"]["clusterTolerations"] =
                serde_json::json!([{"key": "dedicated", "operator": "Exists"}]);
        });
        let (added, removed) = changed(&text);
        assert_eq!(removed, 0, "{text}");
        assert_eq!(&added[..2], ["      clusterNames:", "      - b1"], "{text}");
    }

    #[test]
    fn a_new_block_after_a_nested_mapping_keeps_the_mapping() {
        let (text, _) = edited(|v| {
            v["spec"]["placement"]["clusterTolerations"] =
                serde_json::json!([{"key": "dedicated", "operator": "Exists"}]);
        });
        let (added, removed) = changed(&text);
        assert_eq!(removed, 0, "{text}");
        assert_eq!(added[0], "    clusterTolerations:", "{text}");
    }
}
