//! The small pieces of YAML text handling the document editors share: block YAML of a value,
//! a chunk's parsed documents, value equality as YAML keeps it, and a line's trailing comment.
//! It works on strings only and must not edit documents itself.

use serde_json::Value;

use crate::engine::document::parse::{Doc, parse_files};
use crate::engine::document::source::SourceFile;
use crate::engine::edit::error::EditError;

/// The block YAML of a value, keys in the value's order, ending in one newline.
pub fn to_block_yaml(value: &Value) -> Result<String, EditError> {
    let mut text =
        serde_saphyr::to_string(value).map_err(|e| EditError::Serialize(e.to_string()))?;
    if let Some(rest) = text.strip_prefix("---\n") {
        text = rest.to_string();
    }
    while text.ends_with("\n\n") {
        text.pop();
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// The parsed documents of one text, by the index [`document_spans`] gives them.
pub fn parse(file: &str, text: &str) -> Vec<Doc> {
    let (docs, _) = parse_files(&[SourceFile {
        path: file.to_string(),
        text: text.to_string(),
    }]);
    docs
}

/// Equality that treats 1 and 1.0 alike (YAML does not keep the difference).
pub fn values_match(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| values_match(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((ka, va), (kb, vb))| ka == kb && values_match(va, vb))
        }
        _ => a == b,
    }
}

/// Splits `key: value  # note` into (`key: value`, `# note`): a `#` preceded by whitespace,
/// outside quotes, starts a comment.
pub fn split_inline_comment(line: &str) -> Option<(&str, &str)> {
    let mut single = false;
    let mut double = false;
    let mut escaped = false;
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        if double {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                double = false;
            }
        } else if single {
            if c == '\'' {
                single = false;
            }
        } else if c == '"' && (previous == ' ' || previous == ':' || previous == '[') {
            double = true;
        } else if c == '\'' && (previous == ' ' || previous == ':' || previous == '[') {
            single = true;
        } else if c == '#' && (previous == ' ' || previous == '\t') {
            return Some((&line[..i], line[i..].trim_end_matches(['\n', '\r'])));
        }
        previous = c;
    }
    None
}
