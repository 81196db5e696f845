//! Turns file texts into located documents: splits multi-document YAML on its markers (keeping
//! line offsets), parses each document into JSON with a line for every field, expands
//! `kind: List` documents into their items (each with its own lines), and reads apiVersion and
//! kind. It must not read files, place resources or apply overrides.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use serde_saphyr::Spanned;

use crate::engine::document::source::{FleetError, SourceFile, SourceLocation};

/// One YAML document of the fleet, parsed, with the line of every field it holds.
#[derive(Debug, Clone)]
pub struct Doc {
    pub file: String,
    /// Line of the document's first field (1-based, in the file).
    pub line: usize,
    /// Shared, never written: a document moved by an edit above it keeps its value.
    pub value: Arc<Value>,
    /// JSON pointer (`/spec/placement`) → line in the file where it was read; `shift` lines
    /// from where it is now.
    lines: Arc<HashMap<String, usize>>,
    shift: isize,
    /// What was worked out from `value` alone, shared by the moved copies of the document.
    pub memo: Arc<DocMemo>,
    /// Position of the document inside its file, for stable ordering.
    pub index: usize,
    /// The item's position when the document came out of a `kind: List` (or `*List`) document:
    /// its lines are the item's own, but editors must not replace the whole document with it.
    pub list_item: Option<usize>,
}

/// Results that depend only on a document's value, kept with it so a fleet re-read after an
/// edit elsewhere does not work them out again.
#[derive(Debug, Default)]
pub struct DocMemo {
    /// The built-in kind's checks passed (a failure is not kept: its message has a location).
    pub checked: OnceLock<()>,
    /// The template as every cluster starts from it, for one identity, with that identity's
    /// display key.
    pub base: OnceLock<(crate::model::ResourceRef, Arc<Value>, String)>,
    /// The cluster an inventory document declares, for one inventory kind (its tag).
    pub cluster: OnceLock<(u8, crate::model::ClusterSpec)>,
    /// A custom kind's replicas as a `GetReplicas` script read them, with the version of the
    /// script (and identity) they were read by: an assembly asks once per template, and a
    /// fleet re-read after an edit elsewhere asks again only when the script changed.
    pub replicas: std::sync::Mutex<Option<(u64, Result<i64, String>)>>,
    /// A multi-component kind's components as its `GetComponents` script read them (the
    /// explanation's line), kept the same way.
    pub components: std::sync::Mutex<Option<(u64, String)>>,
    ident: OnceLock<Ident>,
}

/// apiVersion, kind, namespace and name as strings (empty when absent or not a string):
/// read for every document, several times, when a fleet is assembled.
#[derive(Debug)]
struct Ident {
    api_version: String,
    kind: String,
    namespace: String,
    name: String,
}

impl Doc {
    fn new(
        file: String,
        line: usize,
        value: Value,
        lines: HashMap<String, usize>,
        index: usize,
        list_item: Option<usize>,
    ) -> Doc {
        Doc {
            file,
            line,
            value: Arc::new(value),
            lines: Arc::new(lines),
            shift: 0,
            memo: Arc::default(),
            index,
            list_item,
        }
    }

    /// A document that did not come from a file (an object read from a hub): `file` names its
    /// origin in messages, and every field reports line 1.
    pub fn from_value(file: &str, value: Value) -> Doc {
        Doc::new(file.to_string(), 1, value, HashMap::new(), 0, None)
    }

    /// The same document `delta` lines further down its file: an edit above it changed the
    /// file's line count.
    pub fn shifted(&self, delta: isize) -> Doc {
        Doc {
            file: self.file.clone(),
            line: self.line.saturating_add_signed(delta),
            value: self.value.clone(),
            lines: self.lines.clone(),
            shift: self.shift + delta,
            memo: self.memo.clone(),
            index: self.index,
            list_item: self.list_item,
        }
    }

    /// The line a JSON pointer (or its closest ancestor that has one) sits on.
    pub fn line_of(&self, pointer: &str) -> usize {
        if pointer.is_empty() {
            return self.line;
        }
        let mut current = pointer;
        loop {
            if let Some(line) = self.lines.get(current) {
                return line.saturating_add_signed(self.shift);
            }
            match current.rfind('/') {
                Some(pos) => current = &current[..pos],
                None => return self.line,
            }
        }
    }

    /// The line of exactly this pointer, when the parser recorded one (map keys and sequence
    /// items have lines; the document root has its first line).
    pub fn exact_line(&self, pointer: &str) -> Option<usize> {
        self.lines
            .get(pointer)
            .map(|line| line.saturating_add_signed(self.shift))
    }

    /// Every pointer recorded on `line`, shortest first.
    pub fn pointers_on_line(&self, line: usize) -> Vec<&str> {
        let mut found: Vec<&str> = self
            .lines
            .iter()
            .filter(|(pointer, l)| {
                l.saturating_add_signed(self.shift) == line && !pointer.is_empty()
            })
            .map(|(pointer, _)| pointer.as_str())
            .collect();
        found.sort_by_key(|p| (p.len(), *p));
        found
    }

    pub fn location(&self, pointer: &str) -> SourceLocation {
        SourceLocation {
            file: self.file.clone(),
            line: self.line_of(pointer),
        }
    }

    /// An error about the field at `pointer`, reported as its dotted path.
    pub fn error(
        &self,
        pointer: &str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> FleetError {
        FleetError {
            location: self.location(pointer),
            field: pointer_to_field(pointer),
            message: message.into(),
            hint: hint.into(),
        }
    }

    /// The document's identity fields, read once.
    fn ident(&self) -> &Ident {
        self.memo.ident.get_or_init(|| {
            let text =
                |value: Option<&Value>| value.and_then(Value::as_str).unwrap_or("").to_string();
            Ident {
                api_version: text(self.value.get("apiVersion")),
                kind: text(self.value.get("kind")),
                namespace: text(self.metadata("namespace")),
                name: text(self.metadata("name")),
            }
        })
    }

    pub fn api_version(&self) -> &str {
        &self.ident().api_version
    }

    pub fn kind(&self) -> &str {
        &self.ident().kind
    }

    /// `metadata.<field>`.
    fn metadata(&self, field: &str) -> Option<&Value> {
        get(get(&self.value, "metadata")?, field)
    }

    pub fn name(&self) -> &str {
        &self.ident().name
    }

    pub fn namespace(&self) -> Option<&str> {
        Some(self.ident().namespace.as_str()).filter(|ns| !ns.is_empty())
    }

    pub fn labels(&self) -> Option<&Map<String, Value>> {
        self.metadata("labels").and_then(Value::as_object)
    }

    /// The API group of the document's apiVersion (empty for the core group).
    pub fn group(&self) -> &str {
        self.api_version()
            .rsplit_once('/')
            .map(|(group, _)| group)
            .unwrap_or("")
    }

    /// Drops the line map once the document has been checked.
    pub fn into_value(self) -> Value {
        Arc::unwrap_or_clone(self.value)
    }
}

/// `/spec/overrides/0/clusterName` → `spec.overrides[0].clusterName`.
pub fn pointer_to_field(pointer: &str) -> String {
    if pointer.is_empty() {
        return "(document)".into();
    }
    let Ok(parsed) = jsonptr::Pointer::parse(pointer) else {
        return pointer.to_string();
    };
    let mut out = String::new();
    for token in parsed.tokens() {
        let token = token.decoded();
        if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
            out.push('[');
            out.push_str(&token);
            out.push(']');
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&token);
        }
    }
    out
}

/// The field `key` of `value` when it is an object. A manifest's maps are small, and a scan
/// of a few keys costs less than hashing one (the fleet asks for labels and annotations of
/// every template whenever it is assembled).
pub fn get<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    let map = value.as_object()?;
    if map.len() <= 8 {
        map.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
    } else {
        map.get(key)
    }
}

/// Escapes one JSON pointer token (RFC 6901: `~` as `~0`, `/` as `~1`).
pub fn escape_token(token: &str) -> String {
    jsonptr::Token::new(token).encoded().to_owned()
}

/// Splits a multi-document YAML text on `---` lines (and `...` end markers), returning each
/// document's text with the 1-based line on which it starts.
pub fn split_documents(text: &str) -> Vec<(usize, String)> {
    document_spans(text)
        .into_iter()
        .map(|(line, range)| (line, text[range].to_string()))
        .collect()
}

/// The byte range of every document of a multi-document YAML text (the `---` line included,
/// `...` end markers and documents holding only comments excluded) with the 1-based line on
/// which it starts. The n-th span is the document [`Doc::index`] n refers to; bytes outside
/// the spans belong to no document.
pub fn document_spans(text: &str) -> Vec<(usize, std::ops::Range<usize>)> {
    let len = text.len();
    let mut lines = std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|at| at + 1))
        .filter(|&start| start < len)
        .peekable();
    let mut docs = Vec::new();
    let mut begin: Option<usize> = None;
    let mut start = 1;
    let mut in_doc_has_text = false;
    let mut lineno = 0;
    while let Some(here) = lines.next() {
        lineno += 1;
        let rest = &text[here..];
        // Inside a document that has text, only a marker line changes anything: the other
        // lines of a large file are passed over without being looked at further.
        if in_doc_has_text
            && begin.is_some()
            && !rest.starts_with("---")
            && !rest.starts_with("...")
        {
            continue;
        }
        let line = &text[here..lines.peek().copied().unwrap_or(len)];
        let trimmed = line.trim_end_matches(['\n', '\r']);
        let is_start = starts_document(trimmed);
        let is_end = trimmed == "..." || trimmed.starts_with("... ");
        if is_start {
            if in_doc_has_text && let Some(b) = begin {
                docs.push((start, b..here));
            }
            // Keep the marker line so content after `---` on the same line still parses,
            // and so line numbers inside the chunk stay aligned with the file.
            begin = Some(here);
            start = lineno;
            in_doc_has_text = !is_blank_yaml(&trimmed[3..]);
            continue;
        }
        if is_end {
            if in_doc_has_text && let Some(b) = begin {
                docs.push((start, b..here));
            }
            begin = None;
            in_doc_has_text = false;
            start = lineno + 1;
            continue;
        }
        if begin.is_none() {
            begin = Some(here);
            start = lineno;
        }
        if !is_blank_yaml(trimmed) && !trimmed.starts_with('%') {
            in_doc_has_text = true;
        }
    }
    if in_doc_has_text && let Some(b) = begin {
        docs.push((start, b..len));
    }
    docs
}

/// A document's span: the line it starts on and its bytes (see [`document_spans`]).
pub type Span = (usize, std::ops::Range<usize>);

/// The spans of `text` after document `index` (whose span `spans` gives) is replaced with
/// `chunk`, worked out from the chunk alone: `None` when the chunk would not stay exactly one
/// document there (it split, emptied, or would run into the next line), when only reading
/// the whole new text can say. Each document is split off by a marker line that resets
/// everything before it, so the documents around the replaced one keep their bytes and
/// move by the bytes and lines the chunk adds.
pub fn respan(spans: &[Span], text: &str, index: usize, chunk: &str) -> Option<Vec<Span>> {
    let (start, range) = spans.get(index)?.clone();
    let runs_on = range.end < text.len() && !chunk.ends_with('\n');
    // Read alone, the chunk starts as the whole text does: at its beginning or at a marker
    // line (else it would continue the document above it).
    let first_line = chunk.split(['\n', '\r']).next().unwrap_or("");
    let starts_alone = range.start == 0 || starts_document(first_line);
    if runs_on || !starts_alone || document_spans(chunk) != [(1, 0..chunk.len())] {
        return None;
    }
    let lines = |t: &str| memchr::memchr_iter(b'\n', t.as_bytes()).count() as isize;
    let line_delta = lines(chunk) - lines(&text[range.clone()]);
    let byte_delta = chunk.len() as isize - range.len() as isize;
    let moved = |n: usize, delta: isize| n.checked_add_signed(delta);
    let mut out = Vec::with_capacity(spans.len());
    out.extend(spans[..index].iter().cloned());
    out.push((start, range.start..range.start + chunk.len()));
    for (line, span) in &spans[index + 1..] {
        out.push((
            moved(*line, line_delta)?,
            moved(span.start, byte_delta)?..moved(span.end, byte_delta)?,
        ));
    }
    Some(out)
}

/// The spans of `new_text`, a rewrite of `old_text` (whose spans `old_spans` gives) within
/// one of its documents: only the changed bytes are read again when they lie inside one
/// document, else the whole text (see [`respan`]).
pub fn spans_after_rewrite(old_spans: &[Span], old_text: &str, new_text: &str) -> Vec<Span> {
    let (old, new) = (old_text.as_bytes(), new_text.as_bytes());
    let prefix = common_prefix(old, new, false);
    let suffix = common_prefix(&old[prefix..], &new[prefix..], true);
    let changed = prefix..old.len() - suffix;
    old_spans
        .iter()
        .position(|(_, span)| span.start <= changed.start && changed.end <= span.end)
        .and_then(|index| {
            let span = &old_spans[index].1;
            let end = span.end + new.len() - old.len();
            let chunk = new_text.get(span.start..end)?;
            respan(old_spans, old_text, index, chunk)
        })
        .unwrap_or_else(|| document_spans(new_text))
}

/// How many bytes `a` and `b` share at their start (at their end, `from_end`), compared a
/// block at a time.
fn common_prefix(a: &[u8], b: &[u8], from_end: bool) -> usize {
    const BLOCK: usize = 256;
    let n = a.len().min(b.len());
    let at = |s: &[u8], i: usize, len: usize| -> std::ops::Range<usize> {
        if from_end {
            s.len() - i - len..s.len() - i
        } else {
            i..i + len
        }
    };
    let mut same = 0;
    while same + BLOCK <= n && a[at(a, same, BLOCK)] == b[at(b, same, BLOCK)] {
        same += BLOCK;
    }
    while same < n && a[at(a, same, 1)] == b[at(b, same, 1)] {
        same += 1;
    }
    same
}

/// Whether a line (without its line break) is a `---` marker that starts a document.
fn starts_document(line: &str) -> bool {
    line == "---"
        || ["--- ", "---\t", "--- #"]
            .iter()
            .any(|p| line.starts_with(p))
}

fn is_blank_yaml(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// Whether a document is a list of objects as `kubectl get -o yaml` writes them (`kind: List`,
/// or a typed list such as `ConfigMapList`), which `kubectl apply` expands into its items.
pub fn is_list(value: &Value) -> bool {
    value
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|kind| kind.ends_with("List"))
        && value.get("items").is_some_and(Value::is_array)
}

/// The items of a list document, each a document of its own with its own lines.
fn expand_list(list: Doc, docs: &mut Vec<Doc>, errors: &mut Vec<FleetError>) {
    let Some(items) = list.value.get("items").and_then(Value::as_array) else {
        return;
    };
    for (i, item) in items.iter().enumerate() {
        let prefix = format!("/items/{i}");
        if !item.is_object() {
            errors.push(list.error(
                &prefix,
                "a list item is not an object",
                "make every entry of `items` an object with apiVersion, kind and metadata",
            ));
            continue;
        }
        if is_list(item) {
            errors.push(list.error(
                &prefix,
                "a list inside a list",
                "move the inner list's items up into the outer list, or into their own documents",
            ));
            continue;
        }
        let lines = list
            .lines
            .iter()
            .filter_map(|(pointer, line)| {
                let rest = pointer.strip_prefix(&prefix)?;
                (rest.is_empty() || rest.starts_with('/'))
                    .then(|| (rest.to_string(), line.saturating_add_signed(list.shift)))
            })
            .collect();
        docs.push(Doc::new(
            list.file.clone(),
            list.exact_line(&prefix).unwrap_or(list.line),
            item.clone(),
            lines,
            list.index,
            Some(i),
        ));
    }
}

/// Documents read from one fleet at most: far beyond any real fleet (10,000 clusters and
/// their policies stay well below), small enough that hostile input cannot exhaust memory.
pub const MAX_DOCUMENTS: usize = 100_000;

/// The documents a fleet was built from, kept so an edit of one document re-reads only it.
#[derive(Debug, Default)]
pub struct ParsedDocs {
    pub docs: Vec<std::sync::Arc<Doc>>,
    /// Every document parsed: no error belongs to the parse.
    pub clean: bool,
    /// Where each file's documents lie in the text they were read from.
    pub spans: FileSpans,
}

/// The documents of a fleet after document `document` of `file` was rewritten from
/// `old_text` to `new_text`, re-reading only that document: the others are shared, and those
/// below it in the same file move by the lines the edit added or removed. `None` when only a
/// whole read can say (the file gained or lost documents, or the document is or becomes a
/// list, or does not parse).
pub fn reparse_document(
    parsed: &ParsedDocs,
    file: &str,
    document: usize,
    old_text: &str,
    new_text: &str,
) -> Option<ParsedDocs> {
    let docs = &parsed.docs;
    let old_spans = parsed.spans.of(file, old_text);
    let new_spans = spans_after_rewrite(&old_spans, old_text, new_text);
    if old_spans.len() != new_spans.len() {
        return None;
    }
    let (start, range) = new_spans.get(document)?.clone();
    let (value, lines, first_line) = parse_document(file, start, &new_text[range]).ok()??;
    if is_list(&value) {
        return None;
    }
    let delta = match (old_spans.get(document + 1), new_spans.get(document + 1)) {
        (Some((old, _)), Some((new, _))) => *new as isize - *old as isize,
        _ => 0,
    };
    let mut replaced = false;
    let mut out = Vec::with_capacity(docs.len());
    for doc in docs {
        if doc.file != file || doc.index < document {
            out.push(doc.clone());
        } else if doc.index == document {
            if doc.list_item.is_some() || replaced {
                return None;
            }
            let new = Arc::new(Doc::new(
                file.to_string(),
                first_line,
                value.clone(),
                lines.clone(),
                document,
                None,
            ));
            replaced = true;
            out.push(new);
        } else if delta == 0 {
            out.push(doc.clone());
        } else {
            out.push(std::sync::Arc::new(doc.shifted(delta)));
        }
    }
    let mut spans = parsed.spans.clone();
    spans.insert(file, new_text, new_spans);
    replaced.then_some(ParsedDocs {
        docs: out,
        clean: parsed.clean,
        spans,
    })
}

/// Parses every document of every file. Documents that fail to parse become errors; empty
/// documents are skipped. The result is in (file, position) order.
pub fn parse_files(files: &[SourceFile]) -> (Vec<Doc>, Vec<FleetError>) {
    let (docs, errors, _) = parse_files_spanned(files);
    (docs, errors)
}

/// [`parse_files`], with the document spans of every file it read.
pub fn parse_files_spanned(files: &[SourceFile]) -> (Vec<Doc>, Vec<FleetError>, FileSpans) {
    let mut docs = Vec::new();
    let mut errors = Vec::new();
    let mut count = 0_usize;
    let mut spans = FileSpans::default();
    for file in files {
        let file_spans = document_spans(&file.text);
        let chunks: Vec<(usize, &str)> = file_spans
            .iter()
            .map(|(line, range)| (*line, &file.text[range.clone()]))
            .collect();
        spans.insert(&file.path, &file.text, file_spans.clone());
        for (index, (start, text)) in chunks.into_iter().enumerate() {
            count += 1;
            if count > MAX_DOCUMENTS {
                errors.push(FleetError {
                    location: SourceLocation {
                        file: file.path.clone(),
                        line: start,
                    },
                    field: "(fleet)".into(),
                    message: format!("more than {MAX_DOCUMENTS} documents; the rest is not read"),
                    hint: "split the fleet into smaller fleet directories".into(),
                });
                return (docs, errors, FileSpans::default());
            }
            match parse_document(&file.path, start, text) {
                Ok(Some((value, lines, first_line))) => {
                    let doc = Doc::new(file.path.clone(), first_line, value, lines, index, None);
                    if is_list(&doc.value) {
                        expand_list(doc, &mut docs, &mut errors);
                    } else {
                        docs.push(doc);
                    }
                }
                Ok(None) => {}
                Err(error) => errors.push(error),
            }
        }
    }
    (docs, errors, spans)
}

/// The document spans of each file a fleet was read from, with a fingerprint of the text
/// they were worked out from: an editor asking for a file's spans gets them only for that
/// same text, without reading it again.
#[derive(Debug, Clone, Default)]
pub struct FileSpans {
    by_file: HashMap<String, (u64, usize, Arc<[Span]>)>,
}

impl FileSpans {
    fn fingerprint(text: &str) -> u64 {
        use std::hash::BuildHasher;
        foldhash::quality::FixedState::with_seed(0).hash_one(text)
    }

    /// Keeps `spans` as the spans of `text`, read from `file`.
    pub fn insert(&mut self, file: &str, text: &str, spans: Vec<Span>) {
        self.by_file.insert(
            file.to_string(),
            (Self::fingerprint(text), text.len(), spans.into()),
        );
    }

    /// The spans of `file` when `text` is the text they were worked out from.
    pub fn get(&self, file: &str, text: &str) -> Option<Arc<[Span]>> {
        let (fingerprint, len, spans) = self.by_file.get(file)?;
        (*len == text.len() && *fingerprint == Self::fingerprint(text)).then(|| spans.clone())
    }

    /// The spans of `file` (whose text is `text`), from here or worked out.
    pub fn of(&self, file: &str, text: &str) -> Arc<[Span]> {
        self.get(file, text)
            .unwrap_or_else(|| document_spans(text).into())
    }
}

type Parsed = (Value, HashMap<String, usize>, usize);

/// One document's text (a span [`document_spans`] gives) parsed as the fleet's documents are,
/// without lines and with a `kind: List` kept whole: `None` when it holds no value.
pub fn document_value(text: &str) -> Result<Option<Value>, FleetError> {
    parse_document("", 1, text).map(|parsed| parsed.map(|(value, _, _)| value))
}

/// Sequences and mappings nested in one document, at most. Reading recurses once a level, and
/// deeply nested sequences overflow a 2 MiB thread stack (a test's, a tokio worker's) in debug
/// builds past about 50; the deepest real manifests (CRD schemas) stay well under 40.
pub const MAX_NESTING: usize = 40;

fn parse_document(file: &str, start: usize, text: &str) -> Result<Option<Parsed>, FleetError> {
    // YAML 1.2 booleans only: `name: y` or `value: on` stay strings.
    let mut budget = serde_saphyr::budget::Budget::default();
    budget.max_depth = MAX_NESTING;
    let options = serde_saphyr::options! { strict_booleans: true, budget: Some(budget) };
    let parsed: Result<Spanned<Node>, _> = serde_saphyr::from_str_with_options(text, options);
    match parsed {
        Ok(root) => {
            let offset = start.saturating_sub(1);
            let root_line = line_in_file(root.referenced.line(), offset, start);
            let mut lines = HashMap::new();
            let value = root.value.into_value(String::new(), offset, &mut lines);
            if value.is_null() {
                return Ok(None);
            }
            let first_line = lines
                .values()
                .copied()
                .min()
                .unwrap_or(root_line)
                .min(root_line.max(start));
            lines.insert(String::new(), first_line);
            Ok(Some((value, lines, first_line)))
        }
        Err(error) => {
            let line = error
                .location()
                .map(|loc| line_in_file(loc.line(), start.saturating_sub(1), start))
                .unwrap_or(start);
            let message = error.without_snippet().to_string();
            let message = strip_chunk_location(message.lines().next().unwrap_or("").trim());
            if message.starts_with("budget breached: Depth") {
                return Err(FleetError {
                    location: SourceLocation {
                        file: file.to_string(),
                        line,
                    },
                    field: "(yaml)".into(),
                    message: format!(
                        "nested more than {MAX_NESTING} levels deep (sequences and mappings)"
                    ),
                    hint: format!(
                        "flotilla reads at most {MAX_NESTING} levels of nesting; flatten the structure at this line"
                    ),
                });
            }
            Err(FleetError {
                location: SourceLocation {
                    file: file.to_string(),
                    line,
                },
                field: "(yaml)".into(),
                message: format!("malformed YAML: {message}"),
                hint: "fix the YAML syntax at this line (indentation, a missing ':' or an unclosed quote or bracket)".into(),
            })
        }
    }
}

/// Drops serde-saphyr's ` at line N, column M` suffix: those numbers count from the start of
/// the document, and the error already carries the line in the file.
fn strip_chunk_location(message: &str) -> String {
    if let Some(pos) = message.rfind(" at line ") {
        let rest = &message[pos + " at line ".len()..];
        let looks_like_location = rest
            .split(", column ")
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
        if looks_like_location {
            return message[..pos].to_string();
        }
    }
    message.to_string()
}

fn line_in_file(line_in_chunk: u64, offset: usize, fallback: usize) -> usize {
    if line_in_chunk == 0 {
        fallback
    } else {
        usize::try_from(line_in_chunk).unwrap_or(0) + offset
    }
}

/// A YAML node with the line of each child, deserialized through serde-saphyr's spans.
#[derive(Debug)]
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<(u64, Node)>),
    Map(Vec<(String, u64, Node)>),
}

impl Node {
    fn into_value(
        self,
        pointer: String,
        offset: usize,
        lines: &mut HashMap<String, usize>,
    ) -> Value {
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(b),
            Node::Int(i) => Value::Number(i.into()),
            Node::UInt(u) => Value::Number(u.into()),
            Node::Float(f) => Number::from_f64(f)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            Node::Str(s) => Value::String(s),
            Node::Seq(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (idx, (line, node)) in items.into_iter().enumerate() {
                    let child = format!("{pointer}/{idx}");
                    if line > 0 {
                        lines.insert(child.clone(), line_in_file(line, offset, 0));
                    }
                    out.push(node.into_value(child, offset, lines));
                }
                Value::Array(out)
            }
            Node::Map(entries) => {
                let mut out = Map::with_capacity(entries.len());
                for (key, line, node) in entries {
                    let child = format!("{pointer}/{}", escape_token(&key));
                    if line > 0 {
                        lines.insert(child.clone(), line_in_file(line, offset, 0));
                    }
                    let value = node.into_value(child, offset, lines);
                    out.insert(key, value);
                }
                Value::Object(out)
            }
        }
    }
}

/// A mapping key of any scalar type, as text (YAML allows `1: x` and `true: y`).
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a scalar mapping key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key, E> {
                Ok(Key(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Key, E> {
                Ok(Key("null".into()))
            }
        }
        deserializer.deserialize_any(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NodeVisitor;
        impl<'de> Visitor<'de> for NodeVisitor {
            type Value = Node;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
                Ok(Node::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
                Ok(Node::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
                Ok(Node::UInt(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
                Ok(Node::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
                Ok(Node::Str(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Node, E> {
                Ok(Node::Str(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Null)
            }
            fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
                Node::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Spanned<Node>>()? {
                    items.push((item.referenced.line(), item.value));
                }
                Ok(Node::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Spanned<Key>>()? {
                    let value = map.next_value::<Node>()?;
                    entries.push((key.value.0, key.referenced.line(), value));
                }
                Ok(Node::Map(entries))
            }
        }
        deserializer.deserialize_any(NodeVisitor)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn file(text: &str) -> SourceFile {
        SourceFile {
            path: "f.yaml".into(),
            text: text.into(),
        }
    }

    /// The spans as the YAML rules define them, read line by line: the oracle the scanning
    /// implementation is held to.
    fn spans_line_by_line(text: &str) -> Vec<(usize, std::ops::Range<usize>)> {
        let mut docs = Vec::new();
        let (mut begin, mut start, mut has_text, mut offset) = (None, 1, false, 0);
        for (idx, line) in text.split_inclusive('\n').enumerate() {
            let here = offset;
            offset += line.len();
            let trimmed = line.trim_end_matches(['\n', '\r']);
            let marker = trimmed == "---"
                || ["--- ", "---\t", "--- #"]
                    .iter()
                    .any(|p| trimmed.starts_with(p));
            let end = trimmed == "..." || trimmed.starts_with("... ");
            if marker || end {
                if has_text && let Some(b) = begin {
                    docs.push((start, b..here));
                }
                begin = marker.then_some(here);
                start = if marker { idx + 1 } else { idx + 2 };
                has_text = marker && !is_blank_yaml(&trimmed[3..]);
                continue;
            }
            if begin.is_none() {
                begin = Some(here);
                start = idx + 1;
            }
            has_text |= !is_blank_yaml(trimmed) && !trimmed.starts_with('%');
        }
        if has_text && let Some(b) = begin {
            docs.push((start, b..offset));
        }
        docs
    }

    /// Lines that start, end, or only look like they start or end a document.
    const LINES: [&str; 17] = [
        "---",
        "--- ",
        "--- # c",
        "---\ta: 1",
        "--- a: 1",
        "---x",
        "...",
        "... ",
        "....",
        "a: 1",
        "  b: 2",
        "# c",
        "",
        "  ",
        "%YAML 1.2",
        "-- ",
        "x---",
    ];

    fn join_lines(lines: &[&str], trailing_newline: bool) -> String {
        let mut text = lines.join("\n");
        if trailing_newline && !lines.is_empty() {
            text.push('\n');
        }
        text
    }

    proptest::proptest! {
        #[test]
        fn spans_agree_with_reading_line_by_line(
            lines in proptest::collection::vec(
                proptest::sample::select(LINES.to_vec()),
                0..40,
            ),
            crlf in proptest::collection::vec(proptest::bool::ANY, 40),
            trailing_newline in proptest::bool::ANY,
        ) {
            let mut text = String::new();
            for (i, line) in lines.iter().enumerate() {
                text.push_str(line);
                if i + 1 < lines.len() || trailing_newline {
                    text.push_str(if crlf[i] { "\r\n" } else { "\n" });
                }
            }
            proptest::prop_assert_eq!(document_spans(&text), spans_line_by_line(&text));
        }

        #[test]
        fn spans_after_a_rewrite_are_the_spans_of_the_new_text(
            lines in proptest::collection::vec(proptest::sample::select(LINES.to_vec()), 0..30),
            chunk in proptest::collection::vec(proptest::sample::select(LINES.to_vec()), 0..6),
            pick in 0_usize..8,
            trailing_newline in proptest::bool::ANY,
        ) {
            let text = join_lines(&lines, trailing_newline);
            let spans = document_spans(&text);
            // Rewrite one document (or, past the last, a stretch of the text) into the chunk.
            let range = spans.get(pick).map_or(text.len() / 2..text.len(), |(_, r)| r.clone());
            let (range, chunk) = match text.get(range.clone()) {
                Some(_) => (range, join_lines(&chunk, trailing_newline)),
                None => (0..0, String::new()),
            };
            let new = format!("{}{chunk}{}", &text[..range.start], &text[range.end..]);
            proptest::prop_assert_eq!(spans_after_rewrite(&spans, &text, &new), document_spans(&new));
        }
    }

    #[test]
    fn splits_documents_and_keeps_lines() {
        let text = "a: 1\n---\nb: 2\n\n---\n# only a comment\n---\nc:\n  d: 3\n";
        let (docs, errors) = parse_files(&[file(text)]);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[0].line, 1);
        assert_eq!(docs[1].line, 3);
        assert_eq!(docs[2].line, 8);
        assert_eq!(docs[2].line_of("/c/d"), 9);
        assert_eq!(docs[2].value["c"]["d"], 3);
    }

    #[test]
    fn nesting_past_the_limit_is_a_located_error_that_fits_a_small_stack() {
        let deep = |depth: usize| {
            file(&format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: deep}}\ndata:\n  deep: {}x{}\n",
                "[".repeat(depth),
                "]".repeat(depth)
            ))
        };
        // A 2 MiB stack is what test threads and tokio workers get; a debug build overflowed
        // it at about 52 nested sequences before the limit.
        let on_small_stack = |files: Vec<SourceFile>| {
            std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(move || parse_files(&files))
                .unwrap()
                .join()
                .unwrap()
        };
        let (docs, errors) = on_small_stack(vec![deep(MAX_NESTING - 2)]);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(docs.len(), 1);
        for depth in [MAX_NESTING, 52, 200] {
            let (docs, errors) = on_small_stack(vec![deep(depth)]);
            assert!(docs.is_empty(), "depth {depth}");
            let [error] = errors.as_slice() else {
                panic!("one error at depth {depth}: {errors:?}");
            };
            assert_eq!(
                (error.location.file.as_str(), error.location.line),
                ("f.yaml", 5)
            );
            assert!(
                error.message.contains("nested more than 40 levels"),
                "{error:?}"
            );
        }
    }

    #[test]
    fn malformed_yaml_points_at_its_line_in_the_file() {
        let text = "a: 1\n---\nkind: X\nmetadata:\n  name: [unclosed\n";
        let (docs, errors) = parse_files(&[file(text)]);
        assert_eq!(docs.len(), 1);
        assert_eq!(errors.len(), 1);
        let line = errors[0].location.line;
        assert!((3..=6).contains(&line), "line {line}");
        assert!(errors[0].message.starts_with("malformed YAML"));
    }

    #[test]
    fn malformed_yaml_in_a_secret_says_where_never_what_its_value_is() {
        for body in [
            "stringData:\n  pin: \"abc987654\\q\"\n",
            "stringData:\n  pin: 'abc987654\n",
            "stringData:\n  pin: abc987654: def\n",
            "stringData:\n  pin: !!int abc987654\n",
            "data:\n  pin: !!binary abc987654\n",
            "stringData: {pin: abc987654\n",
        ] {
            let text = format!("apiVersion: v1\nkind: Secret\nmetadata: {{name: s}}\n{body}");
            let (_, errors) = parse_files(&[file(&text)]);
            let [error] = errors.as_slice() else {
                panic!("one error: {errors:?}");
            };
            let text = error.to_string();
            assert!(text.starts_with("f.yaml:"), "{text}");
            assert!(!text.contains("987654"), "{text}");
        }
    }

    #[test]
    fn crlf_and_a_byte_order_mark_keep_lines() {
        let text = "\u{feff}a: 1\r\n---\r\nkind: X\r\nmetadata:\r\n  name: y\r\n";
        let (docs, errors) = parse_files(&[file(text)]);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1].line_of("/metadata/name"), 5);
        assert_eq!(docs[1].name(), "y", "YAML 1.2: `y` is a string");
    }

    #[test]
    fn sequence_items_and_nested_keys_have_lines() {
        let text = "spec:\n  overrides:\n  - clusterName: a\n    clusterOverrides:\n    - path: /x\n      op: bogus\n";
        let (docs, _) = parse_files(&[file(text)]);
        let doc = &docs[0];
        assert_eq!(doc.line_of("/spec/overrides/0/clusterName"), 3);
        assert_eq!(doc.line_of("/spec/overrides/0/clusterOverrides/0/op"), 6);
        assert_eq!(
            pointer_to_field("/spec/overrides/0/clusterOverrides/0/op"),
            "spec.overrides[0].clusterOverrides[0].op"
        );
    }

    #[test]
    fn a_list_document_expands_into_its_items_with_their_own_lines() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: b\nmetadata: {resourceVersion: \"\"}\n";
        let (docs, errors) = parse_files(&[SourceFile {
            path: "list.yaml".into(),
            text: text.into(),
        }]);
        assert!(errors.is_empty(), "{errors:?}");
        let names: Vec<(&str, &str, usize)> =
            docs.iter().map(|d| (d.kind(), d.name(), d.line)).collect();
        assert_eq!(names, [("ConfigMap", "a", 4), ("Secret", "b", 8)]);
        assert_eq!(docs[1].line_of("/metadata/name"), 11);
        assert_eq!(docs[1].list_item, Some(1));
    }

    #[test]
    fn a_typed_list_expands_and_a_bad_item_is_located() {
        let text = "apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- just text\n";
        let (docs, errors) = parse_files(&[SourceFile {
            path: "list.yaml".into(),
            text: text.into(),
        }]);
        assert_eq!(docs.len(), 1);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0]
                .to_string()
                .starts_with("list.yaml:7: items[1]: a list item is not an object"),
            "{}",
            errors[0]
        );
    }

    #[test]
    fn a_flood_of_documents_stops_at_the_bound_with_a_located_error() {
        let text = "a: 1\n---\n".repeat(MAX_DOCUMENTS + 5);
        let (docs, errors) = parse_files(&[SourceFile {
            path: "flood.yaml".into(),
            text,
        }]);
        assert_eq!(docs.len(), MAX_DOCUMENTS);
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].to_string().contains("more than 100000 documents"),
            "{}",
            errors[0]
        );
    }
}
