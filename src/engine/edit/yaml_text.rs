//! Editing the text of a multi-document fleet file without disturbing it: replace one
//! document with a new version (every other byte of the file untouched, the new version's key
//! order kept, comments of the old version carried over where their field still exists) or
//! append a new document. It works on strings only: it must not read or write files (that is
//! `crate::fleet::save`) and never returns text whose edited document does not parse back to
//! the value asked for.
//!
//! How comments survive a replacement: the lines before the document's first field and after
//! its last (the `---` marker, header comments, trailing comments) are kept verbatim. The
//! fields in between are written afresh from the new value, and each comment (or blank line)
//! that sat between them is re-attached in front of the field that followed it, found by its
//! JSON pointer; a comment at the end of a field's line goes back to the end of that field's
//! line. A comment whose field is gone cannot be placed; the edit says so in a warning.

mod minimal;
mod syntax;

use serde_json::Value;

pub use syntax::to_block_yaml;
use syntax::{parse, split_inline_comment, values_match};

use crate::engine::document::parse::{document_spans, is_list};

/// The new text of a file, and what the person saving it should know.
#[derive(Debug, Clone, PartialEq)]
pub struct Edited {
    pub text: String,
    /// e.g. "comment `# pinned for the audit` (line 12) could not be kept: its field is gone".
    pub warnings: Vec<String>,
}

pub use super::error::WriteError;

fn refuse(file: &str, message: impl Into<String>) -> WriteError {
    WriteError {
        file: file.to_string(),
        message: message.into(),
    }
}

/// Whether `out` (`text` with document `index` replaced by `chunk`) still splits into as
/// many documents: read from the chunk where it can be, else from the whole text.
fn same_documents(
    spans: &[crate::engine::document::parse::Span],
    text: &str,
    index: usize,
    chunk: &str,
    out: &str,
) -> bool {
    crate::engine::document::parse::respan(spans, text, index, chunk).is_some()
        || document_spans(out).len() == spans.len()
}

/// Replaces document `index` of `text` (as [`document_spans`] counts them) with `value`.
/// Every byte outside that document is kept; see the module docs for comments.
pub fn replace_document(
    file: &str,
    text: &str,
    index: usize,
    value: &Value,
) -> Result<Edited, WriteError> {
    replace_spanned_document(file, text, &document_spans(text), index, value)
}

/// [`replace_document`] given the text's document spans (as [`document_spans`] gives them).
pub fn replace_spanned_document(
    file: &str,
    text: &str,
    spans: &[crate::engine::document::parse::Span],
    index: usize,
    value: &Value,
) -> Result<Edited, WriteError> {
    let Some((_, range)) = spans.get(index).cloned() else {
        return Err(refuse(
            file,
            format!("has no document number {} to replace", index + 1),
        ));
    };
    let chunk = &text[range.clone()];
    if serde_saphyr::from_str::<Value>(chunk).is_ok_and(|v| is_list(&v)) {
        return Err(refuse(
            file,
            format!(
                "document {} is a list (kind: List), and flotilla edits one object per document; split the list into one document per item and try again",
                index + 1
            ),
        ));
    }
    // Only scalar values changed: edit them where they stand, keeping every other byte.
    if let Some(new_chunk) = in_place(file, chunk, value)
        && round_trips(file, &new_chunk, value)
    {
        let mut out = String::with_capacity(text.len());
        out.push_str(&text[..range.start]);
        out.push_str(&new_chunk);
        out.push_str(&text[range.end..]);
        return Ok(Edited {
            text: out,
            warnings: Vec::new(),
        });
    }
    // A structural change: only the fields that changed are written again, in the style their
    // old text had (a flow collection stays flow); the rest keeps its bytes.
    if let Some(new_chunk) = minimal::edit(file, chunk, value)
        && round_trips(file, &new_chunk, value)
    {
        let mut out = String::with_capacity(text.len() + new_chunk.len());
        out.push_str(&text[..range.start]);
        out.push_str(&new_chunk);
        out.push_str(&text[range.end..]);
        if same_documents(spans, text, index, &new_chunk, &out) {
            return Ok(Edited {
                text: out,
                warnings: Vec::new(),
            });
        }
    }
    let newline = if chunk.contains("\r\n") { "\r\n" } else { "\n" };
    let fresh = to_block_yaml(value).map_err(|e| refuse(file, e.to_string()))?;
    let (new_chunk, warnings) = match rewrite_chunk(file, chunk, &fresh, newline) {
        Some((chunk, warnings)) if round_trips(file, &chunk, value) => (chunk, warnings),
        _ => {
            // Comments could not be re-attached cleanly: write the document without them.
            let plain = plain_chunk(chunk, &fresh, newline);
            let lost = comments_in_body(chunk);
            let warnings = if lost.is_empty() {
                Vec::new()
            } else {
                vec![format!(
                    "{} comment(s) inside the edited document could not be kept",
                    lost.len()
                )]
            };
            (plain, warnings)
        }
    };
    if !round_trips(file, &new_chunk, value) {
        return Err(refuse(
            file,
            "the new document would not read back as written; nothing saved",
        ));
    }
    let mut out = String::with_capacity(text.len() + new_chunk.len());
    out.push_str(&text[..range.start]);
    out.push_str(&new_chunk);
    out.push_str(&text[range.end..]);
    if !same_documents(spans, text, index, &new_chunk, &out) {
        return Err(refuse(
            file,
            "the edit would change how the file splits into documents; nothing saved",
        ));
    }
    Ok(Edited {
        text: out,
        warnings,
    })
}

/// Replaces document `index` of `text`, or appends `value` as a new document when `index` is
/// the number of documents the text has (how an editor saves a document it created).
pub fn replace_or_append(
    file: &str,
    text: &str,
    index: usize,
    value: &Value,
) -> Result<Edited, WriteError> {
    if index == document_spans(text).len() {
        return append_document(file, text, value).map(|text| Edited {
            text,
            warnings: Vec::new(),
        });
    }
    replace_document(file, text, index, value)
}

/// `text` with `value` appended as a new document (or as the only one of an empty text).
pub fn append_document(file: &str, text: &str, value: &Value) -> Result<String, WriteError> {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let fresh = to_block_yaml(value)
        .map_err(|e| refuse(file, e.to_string()))?
        .replace('\n', newline);
    let mut out = text.to_string();
    if document_spans(text).is_empty() && text.trim().is_empty() {
        out.push_str(&fresh);
    } else {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(newline);
        }
        out.push_str("---");
        out.push_str(newline);
        out.push_str(&fresh);
    }
    let spans = document_spans(&out);
    let ok = spans
        .last()
        .is_some_and(|(_, range)| round_trips(file, &out[range.clone()], value));
    if !ok {
        return Err(refuse(
            file,
            "the appended document would not read back as written; nothing saved",
        ));
    }
    Ok(out)
}

fn round_trips(file: &str, chunk: &str, value: &Value) -> bool {
    let docs = parse(file, chunk);
    docs.len() == 1 && values_match(&docs[0].value, value)
}

/// The scalar leaves where `new` differs from `old`, when that is the only difference (same
/// keys in the same order, same list lengths); `None` for any structural change.
fn scalar_changes<'a>(
    old: &Value,
    new: &'a Value,
    pointer: String,
    out: &mut Vec<(String, &'a Value)>,
) -> bool {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.keys().eq(b.keys())
                && b.iter().all(|(k, v)| {
                    scalar_changes(
                        &a[k.as_str()],
                        v,
                        format!(
                            "{pointer}/{}",
                            crate::engine::document::parse::escape_token(k)
                        ),
                        out,
                    )
                })
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .enumerate()
                    .all(|(i, (x, y))| scalar_changes(x, y, format!("{pointer}/{i}"), out))
        }
        (Value::Object(_) | Value::Array(_), _) | (_, Value::Object(_) | Value::Array(_)) => false,
        (a, b) => {
            if !values_match(a, b) || a != b {
                out.push((pointer, b));
            }
            true
        }
    }
}

/// The chunk with only its changed scalars rewritten in place, when every change is a plain
/// `key: value` or `- value` on a line of its own; `None` otherwise.
fn in_place(file: &str, chunk: &str, value: &Value) -> Option<String> {
    let old = parse(file, chunk).into_iter().next()?;
    let mut changes = Vec::new();
    if !scalar_changes(&old.value, value, String::new(), &mut changes) {
        return None;
    }
    let mut lines: Vec<String> = chunk.split_inclusive('\n').map(str::to_string).collect();
    let mut touched = std::collections::BTreeSet::new();
    for (pointer, scalar) in changes {
        let line_no = old.exact_line(&pointer)?;
        // Every field on the line must be this one or its ancestors (no flow mappings).
        if !old
            .pointers_on_line(line_no)
            .iter()
            .all(|p| pointer.starts_with(p))
            || !touched.insert(line_no)
        {
            return None;
        }
        let line = lines.get(line_no.checked_sub(1)?)?.clone();
        let body = line.trim_end_matches(['\n', '\r']);
        let ending = &line[body.len()..];
        let code = split_inline_comment(body)
            .map(|(code, _)| code)
            .unwrap_or(body);
        let code = code.trim_end();
        let mut start = body.len() - body.trim_start().len();
        while body[start..].starts_with("- ") {
            start += 2;
            start += body[start..].len() - body[start..].trim_start().len();
        }
        let is_index = pointer
            .rsplit('/')
            .next()
            .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
        let value_start = if is_index && old.value.pointer(pointer.rsplit_once('/')?.0)?.is_array()
        {
            start
        } else {
            let rest = &code[start.min(code.len())..];
            let colon = rest.find(": ").or_else(|| rest.find(":\t"))?;
            let after = start + colon + 1;
            after + (code[after..].len() - code[after..].trim_start().len())
        };
        if value_start >= code.len() {
            return None;
        }
        let old_text = &code[value_start..];
        if old_text.starts_with(['|', '>', '&', '*', '!', '{', '[']) {
            return None;
        }
        let rendered = to_block_yaml(scalar).ok()?;
        let rendered = rendered.trim_end();
        if rendered.contains('\n') {
            return None;
        }
        let new_line = format!(
            "{}{rendered}{}{ending}",
            &body[..value_start],
            &body[code.len()..]
        );
        lines[line_no - 1] = new_line;
    }
    Some(lines.concat())
}

/// How each line of a document chunk reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineKind {
    Blank,
    /// A whole-line comment.
    Comment,
    /// A `---` marker or a `%` directive.
    Marker,
    /// Inside a block scalar (`|` or `>`): content, whatever it looks like.
    Block,
    Content,
}

fn classify_lines(lines: &[&str]) -> Vec<LineKind> {
    let mut kinds = Vec::with_capacity(lines.len());
    // Indentation of the line that opened a block scalar; more-indented lines belong to it.
    let mut block: Option<usize> = None;
    for line in lines {
        let body = line.trim_end_matches(['\n', '\r']);
        let trimmed = body.trim_start();
        let indent = body.len() - trimmed.len();
        if let Some(opener) = block {
            if trimmed.is_empty() || indent > opener {
                kinds.push(LineKind::Block);
                continue;
            }
            block = None;
        }
        let kind = if trimmed.is_empty() {
            LineKind::Blank
        } else if trimmed.starts_with('#') {
            LineKind::Comment
        } else if body.starts_with("---") || body.starts_with('%') {
            LineKind::Marker
        } else {
            LineKind::Content
        };
        if kind == LineKind::Content && opens_block_scalar(body) {
            block = Some(indent);
        }
        kinds.push(kind);
    }
    kinds
}

/// Whether a line ends in a block scalar indicator (`key: |`, `- >-`, `key: |2+ # note`).
fn opens_block_scalar(line: &str) -> bool {
    let code = match split_inline_comment(line) {
        Some((code, _)) => code,
        None => line,
    };
    let code = code.trim_end();
    let Some(token) = code.rsplit([' ', '\t']).next() else {
        return false;
    };
    let mut chars = token.chars();
    let indicator = matches!(chars.next(), Some('|' | '>'));
    let rest_ok = chars.all(|c| c == '+' || c == '-' || c.is_ascii_digit());
    let before = code[..code.len() - token.len()].trim_end();
    indicator && rest_ok && (before.ends_with(':') || before.ends_with('-') || before.is_empty())
}

/// The chunk's lines split into (prefix lines kept verbatim, body, suffix lines kept).
fn frame(chunk: &str) -> (Vec<&str>, Vec<LineKind>, usize, usize) {
    let lines: Vec<&str> = chunk.split_inclusive('\n').collect();
    let kinds = classify_lines(&lines);
    let first = kinds
        .iter()
        .position(|k| *k == LineKind::Content)
        .unwrap_or(lines.len());
    let last = kinds
        .iter()
        .rposition(|k| matches!(k, LineKind::Content | LineKind::Block))
        .map(|i| i + 1)
        .unwrap_or(first)
        .max(first);
    (lines, kinds, first, last)
}

fn comments_in_body(chunk: &str) -> Vec<String> {
    let (lines, kinds, first, last) = frame(chunk);
    let mut out = Vec::new();
    for i in first..last {
        match kinds[i] {
            LineKind::Comment => out.push(lines[i].trim().to_string()),
            LineKind::Content => {
                if let Some((_, comment)) = split_inline_comment(lines[i]) {
                    out.push(comment.to_string());
                }
            }
            _ => {}
        }
    }
    out
}

fn with_newline(text: &str, newline: &str) -> String {
    if newline == "\n" {
        text.to_string()
    } else {
        text.replace('\n', newline)
    }
}

/// Prefix, the fresh body, suffix: no comments from the old body.
fn plain_chunk(chunk: &str, fresh: &str, newline: &str) -> String {
    let (lines, _, first, last) = frame(chunk);
    let mut out = String::new();
    push_prefix(&mut out, &lines[..first], newline);
    out.push_str(&with_newline(fresh, newline));
    for line in &lines[last..] {
        out.push_str(line);
    }
    out
}

/// The prefix lines, with a `---` line whose content is part of the document cut back to
/// the bare marker (the content is written afresh below it).
fn push_prefix(out: &mut String, prefix: &[&str], newline: &str) {
    for line in prefix {
        out.push_str(line);
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push_str(newline);
    }
}

/// The chunk with its body written from `fresh` and its comments re-attached; `None` when a
/// marker line carries content (the body cannot be separated from it).
fn rewrite_chunk(
    file: &str,
    chunk: &str,
    fresh: &str,
    newline: &str,
) -> Option<(String, Vec<String>)> {
    let (lines, kinds, first, last) = frame(chunk);
    if lines[..first]
        .iter()
        .any(|l| l.starts_with("---") && !l.trim_end().eq("---") && !l[3..].trim().starts_with('#'))
    {
        return None;
    }
    let old = parse(file, chunk).into_iter().next()?;
    // Comments (and blank lines) before a field, by the field's pointer; inline comments by
    // the pointer of the line they end.
    let mut before: Vec<(String, Vec<String>)> = Vec::new();
    let mut inline: Vec<(String, String)> = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    let mut lost: Vec<String> = Vec::new();
    for i in first..last {
        let line_no = i + 1;
        match kinds[i] {
            LineKind::Comment => pending.push(lines[i].trim().to_string()),
            LineKind::Blank | LineKind::Marker => pending.push(String::new()),
            LineKind::Block => {}
            LineKind::Content => {
                let pointers = old.pointers_on_line(line_no);
                if !pending.is_empty() {
                    match pointers.first() {
                        Some(p) => before.push((p.to_string(), std::mem::take(&mut pending))),
                        None => lost.append(&mut pending),
                    }
                }
                if let Some((_, comment)) = split_inline_comment(lines[i]) {
                    match pointers.last() {
                        Some(p) => inline.push((p.to_string(), comment.to_string())),
                        None => lost.push(comment.to_string()),
                    }
                }
            }
        }
    }
    lost.append(&mut pending);
    let mut prefix = String::new();
    push_prefix(&mut prefix, &lines[..first], newline);
    let prefix_lines = prefix.matches('\n').count();
    let candidate = format!("{prefix}{fresh}");
    let new = parse(file, &candidate).into_iter().next()?;
    let mut body: Vec<String> = fresh.lines().map(str::to_string).collect();
    let mut inserts: Vec<(usize, Vec<String>)> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let body_len = body.len();
    let body_line = |pointer: &str| -> Option<usize> {
        new.exact_line(pointer)
            .and_then(|l| l.checked_sub(prefix_lines + 1))
            .filter(|l| *l < body_len)
    };
    for (pointer, comment) in &inline {
        match body_line(pointer) {
            Some(at) => {
                let line = &mut body[at];
                if split_inline_comment(line).is_none() {
                    line.push_str("  ");
                    line.push_str(comment);
                }
            }
            None => warnings.push(format!(
                "comment `{comment}` could not be kept: its field is gone"
            )),
        }
    }
    for (pointer, group) in before {
        match body_line(&pointer) {
            Some(at) => inserts.push((at, group)),
            None => {
                for comment in group.iter().filter(|c| !c.is_empty()) {
                    warnings.push(format!(
                        "comment `{comment}` could not be kept: the field after it is gone"
                    ));
                }
            }
        }
    }
    for comment in lost.iter().filter(|c| !c.is_empty()) {
        warnings.push(format!("comment `{comment}` could not be kept"));
    }
    inserts.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    for (at, group) in inserts {
        let indent: String = body[at].chars().take_while(|c| *c == ' ').collect();
        let lines: Vec<String> = group
            .into_iter()
            .map(|c| {
                if c.is_empty() {
                    c
                } else {
                    format!("{indent}{c}")
                }
            })
            .collect();
        body.splice(at..at, lines);
    }
    let mut out = prefix;
    for line in body {
        out.push_str(&line);
        out.push_str(newline);
    }
    for line in &lines[last..] {
        out.push_str(line);
    }
    Some((out, warnings))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::document::parse::parse_files;
    use crate::engine::document::source::SourceFile;
    use serde_json::json;

    fn docs(text: &str) -> Vec<String> {
        document_spans(text)
            .into_iter()
            .map(|(_, r)| text[r].to_string())
            .collect()
    }

    const FILE: &str = "# fleet for the shop\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  x: \"1\"\n---\n# the web tier\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # the public one\n  namespace: shop\nspec:\n  # three is enough for now\n  replicas: 3\n\n  template:\n    spec:\n      containers:\n      # main container\n      - name: web\n        image: nginx:1.27   # pinned\n        command:\n        - |\n          #!/bin/sh\n          exec nginx\n# end of web\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n";

    fn web(replicas: i64) -> Value {
        let (docs, _) = parse_files(&[SourceFile {
            path: "f".into(),
            text: FILE.into(),
        }]);
        let mut value = Value::clone(&docs[1].value);
        value["spec"]["replicas"] = json!(replicas);
        value
    }

    #[test]
    fn other_documents_stay_byte_identical_and_comments_follow_their_fields() {
        // A new field is a structural change: only it and the changed value are written.
        let mut value = web(5);
        value["spec"]["minReadySeconds"] = json!(5);
        let edited = replace_document("f.yaml", FILE, 1, &value).unwrap();
        let expected = FILE.replace("  replicas: 3\n", "  replicas: 5\n").replace(
            "          exec nginx\n# end of web\n",
            "          exec nginx\n  minReadySeconds: 5\n# end of web\n",
        );
        assert_eq!(edited.text, expected);
        assert!(edited.warnings.is_empty(), "{:?}", edited.warnings);
    }

    #[test]
    fn a_document_written_afresh_keeps_its_comments_by_field() {
        // A change the minimal edit does not place (fields moved) writes the document afresh,
        // with each comment in front of its field.
        let web = web(5);
        let mut value = serde_json::Map::new();
        for key in ["kind", "apiVersion", "metadata", "spec"] {
            value.insert(key.into(), web[key].clone());
        }
        let value = Value::Object(value);
        let edited = replace_document("f.yaml", FILE, 1, &value).unwrap();
        let before = docs(FILE);
        let after = docs(&edited.text);
        assert_eq!(before.len(), after.len());
        assert_eq!(before[0], after[0]);
        assert_eq!(before[2], after[2]);
        let doc = &after[1];
        assert!(doc.starts_with("---\n# the web tier\n"), "{doc}");
        assert!(doc.contains("  name: web  # the public one\n"), "{doc}");
        assert!(
            doc.contains("  # three is enough for now\n  replicas: 5\n\n  template:"),
            "{doc}"
        );
        assert!(
            doc.contains("      # main container\n      - name: web\n"),
            "{doc}"
        );
        assert!(doc.contains("image: nginx:1.27  # pinned\n"), "{doc}");
        assert!(doc.ends_with("# end of web\n"), "{doc}");
        // The script's `#!` line is content, not a comment: it appears once.
        assert_eq!(doc.matches("#!/bin/sh").count(), 1, "{doc}");
        // Key order of the new value is kept.
        let keys: Vec<&str> = ["kind", "apiVersion", "metadata", "spec:"].to_vec();
        let positions: Vec<usize> = keys.iter().map(|k| doc.find(k).unwrap()).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{doc}");
    }

    #[test]
    fn a_removed_field_takes_the_comment_above_it() {
        let mut value = web(3);
        value["spec"].as_object_mut().unwrap().remove("replicas");
        let edited = replace_document("f.yaml", FILE, 1, &value).unwrap();
        assert_eq!(
            edited.text,
            FILE.replace("  # three is enough for now\n  replicas: 3\n", "")
        );
    }

    #[test]
    fn a_changed_scalar_is_edited_where_it_stands() {
        let mut value = web(3);
        value["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.28");
        value["spec"]["replicas"] = json!(7);
        let edited = replace_document("f.yaml", FILE, 1, &value).unwrap();
        let expected = FILE.replace("  replicas: 3\n", "  replicas: 7\n").replace(
            "image: nginx:1.27   # pinned",
            "image: nginx:1.28   # pinned",
        );
        assert_eq!(edited.text, expected);
        // A value that must be quoted to stay a string is quoted.
        let text = "kind: X\ndata: {a: b}\nv: '1.27' # keep\n";
        let edited = replace_document(
            "f.yaml",
            text,
            0,
            &json!({"kind": "X", "data": {"a": "b"}, "v": "1.28"}),
        )
        .unwrap();
        assert_eq!(edited.text, "kind: X\ndata: {a: b}\nv: \"1.28\" # keep\n");
        // Inside a flow mapping it falls back to rewriting (the value still lands).
        let edited = replace_document(
            "f.yaml",
            text,
            0,
            &json!({"kind": "X", "data": {"a": "c"}, "v": "1.27"}),
        )
        .unwrap();
        assert!(edited.text.contains("a: c"), "{}", edited.text);
        assert!(edited.text.contains("# keep"), "{}", edited.text);
    }

    #[test]
    fn crlf_files_stay_crlf_and_a_missing_document_is_refused() {
        let text = "a: 1\r\n---\r\nkind: X # k\r\nb: 2\r\n";
        let edited = replace_document("f.yaml", text, 1, &json!({"kind": "X", "b": 3})).unwrap();
        assert_eq!(edited.text, "a: 1\r\n---\r\nkind: X # k\r\nb: 3\r\n");
        let edited =
            replace_document("f.yaml", text, 1, &json!({"kind": "X", "b": 3, "c": 1})).unwrap();
        assert_eq!(
            edited.text,
            "a: 1\r\n---\r\nkind: X # k\r\nb: 3\r\nc: 1\r\n"
        );
        assert!(replace_document("f.yaml", text, 2, &json!({})).is_err());
    }

    #[test]
    fn append_adds_a_document_and_keeps_the_rest() {
        let text = "a: 1";
        let out = append_document("f.yaml", text, &json!({"kind": "X", "v": "1.28"})).unwrap();
        assert!(out.starts_with("a: 1\n---\n"), "{out}");
        let (parsed, errors) = parse_files(&[SourceFile {
            path: "f".into(),
            text: out.clone(),
        }]);
        assert!(errors.is_empty());
        assert_eq!(*parsed[1].value, json!({"kind": "X", "v": "1.28"}));
        assert_eq!(
            append_document("f", "", &json!({"a": 1})).unwrap(),
            "a: 1\n"
        );
    }

    #[test]
    fn inline_comments_respect_quotes() {
        assert_eq!(
            split_inline_comment("a: \"x # y\" # z"),
            Some(("a: \"x # y\" ", "# z"))
        );
        assert_eq!(split_inline_comment("a: b#c"), None);
        assert!(opens_block_scalar("  script: |-"));
        assert!(opens_block_scalar("- > # folded"));
        assert!(!opens_block_scalar("  a: b|"));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn scalar() -> impl Strategy<Value = Value> {
            prop_oneof![
                any::<bool>().prop_map(Value::from),
                any::<i32>().prop_map(Value::from),
                "[a-z0-9 .:#-]{0,8}".prop_map(Value::from),
            ]
        }

        fn object() -> impl Strategy<Value = Value> {
            let leaf = scalar();
            let tree = leaf.prop_recursive(3, 20, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                    prop::collection::btree_map("[a-z]{1,5}", inner, 0..4)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            });
            prop::collection::btree_map("[a-z]{1,5}", tree, 1..4)
                .prop_map(|m| Value::Object(m.into_iter().collect()))
        }

        /// A document's text in one of a few styles, with comments sprinkled in.
        fn render(value: &Value, style: u8) -> String {
            let yaml = to_block_yaml(value).unwrap();
            match style % 3 {
                0 => yaml,
                1 => format!("# header\n{yaml}# trailer\n"),
                _ => serde_json::to_string(value).unwrap() + "  # flow\n",
            }
        }

        fn collect_leaves(value: &Value, pointer: String, out: &mut Vec<String>) {
            match value {
                Value::Object(map) => {
                    for (k, v) in map {
                        collect_leaves(
                            v,
                            format!(
                                "{pointer}/{}",
                                crate::engine::document::parse::escape_token(k)
                            ),
                            out,
                        );
                    }
                }
                Value::Array(items) => {
                    for (i, v) in items.iter().enumerate() {
                        collect_leaves(v, format!("{pointer}/{i}"), out);
                    }
                }
                _ => out.push(pointer),
            }
        }

        /// Block YAML of `value` with a comment line in front of some lines and at the end of
        /// others (`picks` chooses which), and how many comments it holds.
        fn commented(value: &Value, picks: &[(bool, bool)]) -> (String, usize) {
            let yaml = to_block_yaml(value).unwrap();
            let mut out = String::new();
            let mut count = 0;
            for (i, line) in yaml.lines().enumerate() {
                let (before, after) = picks.get(i % picks.len()).copied().unwrap_or_default();
                let indent: String = line.chars().take_while(|c| *c == ' ').collect();
                if before {
                    out.push_str(&format!("{indent}# note {i}\n"));
                    count += 1;
                }
                out.push_str(line);
                if after && !line.trim_end().ends_with(['|', '>', '-']) {
                    out.push_str(&format!("  # end {i}"));
                    count += 1;
                }
                out.push('\n');
            }
            (out, count)
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            #[test]
            fn changing_scalars_keeps_every_comment_and_every_other_line(
                value in object(),
                picks in prop::collection::vec(any::<(bool, bool)>(), 1..40),
                pick in any::<prop::sample::Index>(),
                new_leaf in scalar(),
            ) {
                let (doc, count) = commented(&value, &picks);
                let text = format!("a: 1\n---\n{doc}");
                let (parsed, errors) = parse_files(&[SourceFile { path: "f".into(), text: text.clone() }]);
                prop_assume!(errors.is_empty() && parsed.len() == 2);
                prop_assume!(values_match(&parsed[1].value, &value));
                let mut leaves = Vec::new();
                collect_leaves(&value, String::new(), &mut leaves);
                prop_assume!(!leaves.is_empty());
                let target = &leaves[pick.index(leaves.len())];
                let mut new = value.clone();
                *new.pointer_mut(target).unwrap() = new_leaf;
                let edited = replace_document("f.yaml", &text, 1, &new).unwrap();
                prop_assert!(edited.warnings.is_empty(), "{:?}", edited.warnings);
                let kept = edited.text.matches("# note ").count() + edited.text.matches("# end ").count();
                prop_assert_eq!(kept, count, "{}\n=>\n{}", text, edited.text);
                // At most the changed line differs.
                let before: Vec<&str> = text.lines().collect();
                let after: Vec<&str> = edited.text.lines().collect();
                prop_assert_eq!(before.len(), after.len(), "{}\n=>\n{}", text, edited.text);
                let changed = before.iter().zip(&after).filter(|(a, b)| a != b).count();
                prop_assert!(changed <= 1, "{}\n=>\n{}", text, edited.text);
            }

            #[test]
            fn rewriting_a_document_with_the_same_value_keeps_every_comment(
                value in object(),
                picks in prop::collection::vec(any::<(bool, bool)>(), 1..40),
            ) {
                let (doc, count) = commented(&value, &picks);
                let text = format!("a: 1\n---\n{doc}");
                let (parsed, errors) = parse_files(&[SourceFile { path: "f".into(), text: text.clone() }]);
                prop_assume!(errors.is_empty() && parsed.len() == 2);
                prop_assume!(values_match(&parsed[1].value, &value));
                let edited = replace_document("f.yaml", &text, 1, &value).unwrap();
                prop_assert!(edited.warnings.is_empty(), "{:?}\n{}", edited.warnings, text);
                let kept = edited.text.matches("# note ").count() + edited.text.matches("# end ").count();
                prop_assert_eq!(kept, count, "{}\n=>\n{}", text, edited.text);
            }

            #[test]
            fn replacing_one_document_leaves_the_others_byte_identical(
                values in prop::collection::vec((object(), any::<u8>()), 1..5),
                new in object(),
                pick in any::<prop::sample::Index>(),
            ) {
                let text: String = values
                    .iter()
                    .map(|(v, style)| format!("---\n{}", render(v, *style)))
                    .collect();
                let spans = document_spans(&text);
                prop_assume!(spans.len() == values.len());
                let index = pick.index(values.len());
                let edited = replace_document("f.yaml", &text, index, &new).unwrap();
                let before = docs(&text);
                let after = docs(&edited.text);
                prop_assert_eq!(before.len(), after.len());
                for i in 0..before.len() {
                    if i != index {
                        prop_assert_eq!(&before[i], &after[i]);
                    }
                }
                let (parsed, errors) = parse_files(&[SourceFile { path: "f".into(), text: edited.text.clone() }]);
                prop_assert!(errors.is_empty(), "{:?}", errors);
                let doc = parsed.iter().find(|d| d.index == index).unwrap();
                prop_assert!(values_match(&doc.value, &new), "{}", edited.text);
            }
        }
    }

    #[test]
    fn a_list_document_is_never_replaced_by_one_of_its_items() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n";
        let err = replace_document("f.yaml", text, 0, &json!({"kind": "ConfigMap"})).unwrap_err();
        assert!(err.to_string().contains("is a list (kind: List)"), "{err}");
    }
}
