//! Secret values, wherever a person reads them: masked as `***` (a value that differs between
//! the two sides of a comparison as `*** (changed)`, as `kubectl diff` marks it), and
//! `stringData` folded into `data` (base64) before anything is compared, because the API
//! server stores only `data` and never returns `stringData`. Where the values stand is
//! `document::secret_values`' one notion (re-exported here); this adds what comparing needs:
//! the folding, both sides of an object diff, a drifted field, and a fleet file's diff (its
//! documents that hold Secret values shown masked). It must not mask anything that notion
//! does not name.

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::engine::document::parse::{document_spans, document_value};
use crate::engine::document::secret_values::text_may_hold_secrets;
pub use crate::engine::document::secret_values::{
    Held, LAST_APPLIED, MASK, MASK_CHANGED, holds_secrets, is_secret, is_secret_kind,
    is_secret_value, is_value_pointer, mask_document, mask_document_against, mask_written,
    places_in_secret, secret_places,
};

/// Moves a Secret's `stringData` into `data` (base64), as the API server does on write;
/// `stringData` wins over `data` for the same key, as upstream. Other objects are untouched.
pub fn fold_string_data(object: &mut Value) {
    if !is_secret(object) {
        return;
    }
    let Some(root) = object.as_object_mut() else {
        return;
    };
    let Some(Value::Object(string_data)) = root.remove("stringData") else {
        return;
    };
    let data = root
        .entry("data")
        .or_insert_with(|| Value::Object(Map::new()));
    if !data.is_object() {
        *data = Value::Object(Map::new());
    }
    if let Some(data) = data.as_object_mut() {
        for (key, value) in string_data {
            let text = match value {
                Value::String(s) => s,
                other => other.to_string(),
            };
            let encoded = base64::engine::general_purpose::STANDARD.encode(text);
            data.insert(key, Value::String(encoded));
        }
    }
}

/// `object` with every Secret value masked (objects that hold none as they are); a core/v1
/// Secret's `stringData` is folded into `data` first, as the cluster holds it.
pub fn mask(object: &Value) -> Value {
    let mut out = object.clone();
    fold_string_data(&mut out);
    mask_document(&out)
}

/// Both sides of a comparison with Secret values masked: on the desired side a key whose value
/// differs from the live one (or that the live object lacks) shows as `*** (changed)`, every
/// other value as `***`, so a diff still says which keys change without saying what they hold.
/// A core/v1 Secret's `stringData` is folded into `data` on both sides first.
pub fn mask_pair(desired: &Value, live: Option<&Value>) -> (Value, Option<Value>) {
    if !holds_secrets(desired) && !live.is_some_and(holds_secrets) {
        return (desired.clone(), live.cloned());
    }
    let mut desired = desired.clone();
    let mut live = live.cloned();
    fold_string_data(&mut desired);
    if let Some(live) = live.as_mut() {
        fold_string_data(live);
    }
    let masked_desired = mask_document_against(&desired, live.as_ref());
    let masked_live = live.as_ref().map(mask_document);
    (masked_desired, masked_live)
}

/// A drifted Secret value's two sides as a person may read them: the desired one (which by
/// definition differs from live) as `*** (changed)`, the live one as `***`. An absent side
/// (`null`) stays `null`, which says only that it is absent.
pub fn mask_field(desired: &Value, live: &Value) -> (Value, Value) {
    let masked = |value: &Value, text: &str| match value {
        Value::Null => Value::Null,
        _ => Value::String(text.into()),
    };
    (masked(desired, MASK_CHANGED), masked(live, MASK))
}

/// The unified diff of a fleet file's text from `old` to `new`, with the Secret values of
/// every document that holds some masked: such a document is shown as its masked YAML (its
/// comments left out, as they may quote a value), a value that changes as `*** (changed)`;
/// the other documents as written. A document that does not parse is left out when it names
/// a Secret. When only what is masked changes, a note says so instead of an empty diff.
pub fn file_diff(file: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let old_docs = documents(old);
    let new_docs = documents(new);
    let old_text = masked_text(old, &old_docs, &new_docs, false);
    let new_text = masked_text(new, &new_docs, &old_docs, true);
    if old_text == new_text {
        return format!(
            "(the change to {file} is in Secret values or a Secret's comments, which are not shown)\n"
        );
    }
    similar::TextDiff::from_lines(&old_text, &new_text)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{file}"), &format!("b/{file}"))
        .to_string()
}

/// One document of a text: its byte range and its value (`Err` when it does not parse).
type Spanned = (std::ops::Range<usize>, Result<Option<Value>, ()>);

fn documents(text: &str) -> Vec<Spanned> {
    document_spans(text)
        .into_iter()
        .map(|(_, range)| {
            let document = &text[range.clone()];
            // A document that cannot hold Secret values is shown as written, unparsed.
            let value = if text_may_hold_secrets(document) {
                document_value(document).map_err(|_| ())
            } else {
                Ok(None)
            };
            (range, value)
        })
        .collect()
}

/// What names a document across two versions of a file.
fn identity(value: &Value) -> [Option<&str>; 4] {
    [
        value.get("apiVersion").and_then(Value::as_str),
        value.get("kind").and_then(Value::as_str),
        value.pointer("/metadata/namespace").and_then(Value::as_str),
        value.pointer("/metadata/name").and_then(Value::as_str),
    ]
}

/// `text` with each document that holds Secret values replaced by its masked YAML; `mark`:
/// values that differ from the matching document of `others` show as `*** (changed)`.
fn masked_text(text: &str, docs: &[Spanned], others: &[Spanned], mark: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (index, (range, value)) in docs.iter().enumerate() {
        out.push_str(&text[at..range.start]);
        at = range.end;
        let original = &text[range.clone()];
        let marker = if original.starts_with("---") {
            "---\n"
        } else {
            ""
        };
        match value {
            Ok(Some(value)) if holds_secrets(value) => {
                let other = others
                    .iter()
                    .filter_map(|(_, v)| v.as_ref().ok().and_then(Option::as_ref))
                    .find(|v| identity(v) == identity(value))
                    .or_else(|| {
                        others
                            .get(index)
                            .and_then(|(_, v)| v.as_ref().ok().and_then(Option::as_ref))
                    });
                let masked = if mark {
                    mask_document_against(value, other)
                } else {
                    mask_document(value)
                };
                out.push_str(marker);
                out.push_str(&yaml(&masked));
            }
            Err(()) if original.contains("Secret") => {
                out.push_str(marker);
                out.push_str("# (a document that does not parse and names a Secret: not shown)\n");
            }
            _ => out.push_str(original),
        }
    }
    out.push_str(&text[at..]);
    out
}

/// Block YAML of a masked document, ending in one newline.
fn yaml(value: &Value) -> String {
    let mut text = serde_saphyr::to_string(value)
        .unwrap_or_else(|_| serde_json::to_string_pretty(value).unwrap_or_default());
    if let Some(rest) = text.strip_prefix("---\n") {
        text = rest.to_string();
    }
    let trimmed = text.trim_end_matches('\n').len();
    text.truncate(trimmed);
    text.push('\n');
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn secret(data: Value, string_data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
               "data": data, "stringData": string_data})
    }

    #[test]
    fn string_data_becomes_base64_data_and_wins_over_data() {
        let mut s = secret(json!({"a": "eA==", "b": "eQ=="}), json!({"b": "hello"}));
        fold_string_data(&mut s);
        assert_eq!(s["data"], json!({"a": "eA==", "b": "aGVsbG8="}));
        assert!(s.get("stringData").is_none());
    }

    #[test]
    fn masked_values_say_only_whether_they_changed() {
        let desired = secret(
            json!({"same": "eA==", "new": "eQ=="}),
            json!({"pw": "hunter2"}),
        );
        let live = secret(
            json!({"same": "eA==", "new": "eg==", "pw": "aHVudGVyMg=="}),
            json!({}),
        );
        let (d, l) = mask_pair(&desired, Some(&live));
        let l = l.unwrap();
        assert_eq!(
            d["data"],
            json!({"same": MASK, "new": MASK_CHANGED, "pw": MASK})
        );
        assert_eq!(l["data"], json!({"same": MASK, "new": MASK, "pw": MASK}));
        let text = format!("{d}{l}");
        assert!(
            !text.contains("hunter2") && !text.contains("eQ==") && !text.contains("aHVudGVyMg==")
        );
    }

    #[test]
    fn the_copy_kubectl_apply_keeps_in_an_annotation_is_masked_too() {
        let applied = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "annotations": {}},
            "stringData": {"password": "not-a-real-password"}});
        let mut live = secret(
            json!({"password": "bm90LWEtcmVhbC1wYXNzd29yZA=="}),
            json!(null),
        );
        live["metadata"]["annotations"] = json!({
            "kubectl.kubernetes.io/last-applied-configuration": format!("{applied}\n"),
            "team": "payments",
        });
        for shown in [mask(&live), mask_pair(&live, Some(&live)).1.unwrap()] {
            let text = shown.to_string();
            assert!(!text.contains("not-a-real-password"), "{text}");
            assert!(!text.contains("bm90LWEtcmVhbC1wYXNzd29yZA"), "{text}");
            let kept: Value = serde_json::from_str(
                shown["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
                    .as_str()
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(
                kept["stringData"],
                json!({"password": MASK}),
                "the key still shows"
            );
            assert_eq!(shown["metadata"]["annotations"]["team"], "payments");
        }
        // Text that does not read as a Secret is masked whole.
        live["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] =
            json!("{not json: not-a-real-password");
        assert_eq!(
            mask(&live)["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"],
            MASK
        );
    }

    #[test]
    fn other_kinds_are_never_masked() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}});
        assert_eq!(mask(&cm), cm);
        assert_eq!(mask_pair(&cm, None).0, cm);
        assert!(!is_secret_value(&cm, "/data/a"));
        let s = secret(json!({"a": "eA=="}), json!(null));
        assert_eq!(mask(&s)["data"]["a"], MASK);
        assert!(is_secret_value(&s, "/data/a"));
        assert!(is_secret_value(&s, "/data") && is_secret_value(&s, "/stringData/b"));
        assert!(!is_secret_value(&s, "/dataset") && !is_secret_value(&s, "/metadata/name"));
    }

    fn secret_file(pw: &str, labels: &str) -> String {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c, namespace: shop}}\ndata: {{plain: visible-value}}\n---\n# the password is {pw}\napiVersion: v1\nkind: Secret\nmetadata: {{name: db, namespace: shop{labels}}}\nstringData: {{pw: {pw}, same: kept-secret}}\n"
        )
    }

    #[test]
    fn a_file_diff_shows_which_secret_keys_change_never_their_values() {
        let old = secret_file("hunter2", "");
        let new = secret_file("letmein", ", labels: {tier: gold}");
        let diff = file_diff("f.yaml", &old, &new);
        for value in ["hunter2", "letmein", "kept-secret"] {
            assert!(!diff.contains(value), "{value}: {diff}");
        }
        assert!(diff.contains("+  pw: \"*** (changed)\""), "{diff}");
        assert!(
            diff.contains("   same: \"***\""),
            "an unchanged key is context: {diff}"
        );
        assert!(diff.contains("tier: gold"), "{diff}");
        // The document without Secret values stays as written.
        let plain = file_diff("f.yaml", &old, &old.replace("visible-value", "other-value"));
        assert!(plain.contains("-data: {plain: visible-value}"), "{plain}");
        assert!(plain.contains("+data: {plain: other-value}"), "{plain}");
        assert!(!plain.contains("hunter2"), "{plain}");
        // A change only a masked value or a comment holds still says the file changes.
        let comment = file_diff("f.yaml", &old, &old.replace("# the password", "# the pw"));
        assert!(
            comment.contains("not shown") && !comment.contains("hunter2"),
            "{comment}"
        );
        // A document that does not parse and names a Secret is left out.
        let broken = file_diff(
            "f.yaml",
            &old,
            &old.replace("stringData: {pw: hunter2", "stringData: {pw: [hunter2"),
        );
        assert!(!broken.contains("hunter2"), "{broken}");
        assert_eq!(file_diff("f.yaml", &old, &old), "");
    }

    #[test]
    fn a_drifted_value_says_only_that_it_changed() {
        assert_eq!(
            mask_field(&json!("aHVudGVyMg=="), &json!("eA==")),
            (json!(MASK_CHANGED), json!(MASK))
        );
        assert_eq!(
            mask_field(&json!({"pw": "eA=="}), &Value::Null),
            (json!(MASK_CHANGED), Value::Null)
        );
    }
}
