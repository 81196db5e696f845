//! RFC 6902 operations as KubeFed overrides and Karmada plaintext/field overriders write them:
//! parsing with located errors, and applying (through the json-patch crate) with messages a
//! person can act on. It must not decide which cluster gets which patch.

use std::fmt;

use json_patch::{AddOperation, PatchOperation, RemoveOperation, ReplaceOperation};
use jsonptr::PointerBuf;
use serde_json::Value;

use crate::engine::document::parse::Doc;
use crate::engine::document::secret_values;
use crate::engine::document::source::FleetError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Add,
    Remove,
    Replace,
}

impl OpKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Add => "add",
            OpKind::Remove => "remove",
            OpKind::Replace => "replace",
        }
    }
}

/// One JSON patch operation, precompiled for the json-patch crate.
#[derive(Debug, Clone, PartialEq)]
pub struct PatchOp {
    pub kind: OpKind,
    pub path: String,
    pub value: Option<Value>,
    compiled: PatchOperation,
}

impl fmt::Display for PatchOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.kind, &self.value) {
            (OpKind::Remove, _) | (_, None) => write!(f, "{} {}", self.kind.as_str(), self.path),
            (_, Some(v)) => {
                let mut text = v.to_string();
                if text.len() > 60 {
                    let mut cut = 57;
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    text.truncate(cut);
                    text.push_str("...");
                }
                write!(f, "{} {} = {}", self.kind.as_str(), self.path, text)
            }
        }
    }
}

impl PatchOp {
    /// The operation as a person reads it; `secret`: it applies to a core/v1 Secret, so a
    /// value it writes into the Secret's values is masked.
    pub fn shown(&self, secret: bool) -> String {
        match &self.value {
            Some(value) if secret => {
                let mut shown = self.clone();
                shown.value = Some(secret_values::mask_written(&self.path, value));
                shown.to_string()
            }
            _ => self.to_string(),
        }
    }

    /// The operation as a person reads it, its value masked whole when `masked`.
    pub fn masked_if(&self, masked: bool) -> String {
        match &self.value {
            Some(_) if masked => {
                let mut shown = self.clone();
                shown.value = Some(Value::String(secret_values::MASK.into()));
                shown.to_string()
            }
            _ => self.to_string(),
        }
    }

    /// Builds an operation; `path` must be a JSON pointer.
    pub fn new(kind: OpKind, path: &str, value: Option<Value>) -> Result<PatchOp, String> {
        let pointer = PointerBuf::parse(path.to_string())
            .map_err(|e| format!("`{path}` is not a JSON pointer ({e})"))?;
        let compiled = match kind {
            OpKind::Add => PatchOperation::Add(AddOperation {
                path: pointer,
                value: value.clone().unwrap_or(Value::Null),
            }),
            OpKind::Replace => PatchOperation::Replace(ReplaceOperation {
                path: pointer,
                value: value.clone().unwrap_or(Value::Null),
            }),
            OpKind::Remove => PatchOperation::Remove(RemoveOperation { path: pointer }),
        };
        Ok(PatchOp {
            kind,
            path: path.to_string(),
            value,
            compiled,
        })
    }

    /// Parses `{op|operator, path, value}` at `pointer`. `op_key` is `op` (KubeFed) or
    /// `operator` (Karmada); `path_key` is `path` or `subPath`. An empty op means replace
    /// only when `empty_is_replace` (KubeFed).
    pub fn parse(
        doc: &Doc,
        pointer: &str,
        op_key: &str,
        path_key: &str,
        empty_is_replace: bool,
    ) -> Result<PatchOp, FleetError> {
        let item = doc.value.pointer(pointer).cloned().unwrap_or(Value::Null);
        if !item.is_object() {
            return Err(doc.error(
                pointer,
                "a patch operation must be a mapping",
                format!("write `{{{op_key}: replace, {path_key}: /spec/replicas, value: 2}}`"),
            ));
        }
        let op_text = item.get(op_key).and_then(Value::as_str).unwrap_or("");
        let kind = match op_text {
            "add" => OpKind::Add,
            "remove" => OpKind::Remove,
            "replace" => OpKind::Replace,
            "" if empty_is_replace => OpKind::Replace,
            other => {
                let shown = if other.is_empty() { "(empty)" } else { other };
                return Err(doc.error(
                    &format!("{pointer}/{op_key}"),
                    format!("unknown override operator `{shown}`"),
                    if empty_is_replace {
                        "use add, remove or replace (an empty op means replace)"
                    } else {
                        "use add, remove or replace"
                    },
                ));
            }
        };
        let path = item.get(path_key).and_then(Value::as_str).unwrap_or("");
        if !path.starts_with('/') {
            return Err(doc.error(
                &format!("{pointer}/{path_key}"),
                format!("`{path}` is not a JSON pointer"),
                format!("write an absolute JSON pointer such as `{path_key}: /spec/replicas`"),
            ));
        }
        let value = item.get("value").cloned();
        if kind != OpKind::Remove && value.is_none() {
            return Err(doc.error(
                pointer,
                format!("operator {} needs a `value`", kind.as_str()),
                "add `value: ...` (use `remove` to delete a field)",
            ));
        }
        let value = if kind == OpKind::Remove { None } else { value };
        PatchOp::new(kind, path, value).map_err(|message| {
            doc.error(
                &format!("{pointer}/{path_key}"),
                message,
                "escape `/` as ~1 and `~` as ~0",
            )
        })
    }

    /// Applies this operation; the error says what is missing.
    pub fn apply(&self, obj: &mut Value) -> Result<(), String> {
        json_patch::patch_unsafe(obj, std::slice::from_ref(&self.compiled)).map_err(|_| match self
            .kind
        {
            OpKind::Add => format!(
                "cannot add {}: its parent does not exist in the object",
                self.path
            ),
            _ => format!(
                "cannot {} {}: the path does not exist in the object",
                self.kind.as_str(),
                self.path
            ),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    type Case = (OpKind, &'static str, Option<Value>, Result<Value, ()>);

    #[test]
    fn operations_table() {
        let base = json!({"spec": {"replicas": 1, "list": [1, 2]}});
        let cases: Vec<Case> = vec![
            (
                OpKind::Replace,
                "/spec/replicas",
                Some(json!(5)),
                Ok(json!({"spec": {"replicas": 5, "list": [1, 2]}})),
            ),
            (
                OpKind::Add,
                "/spec/new",
                Some(json!("x")),
                Ok(json!({"spec": {"replicas": 1, "list": [1, 2], "new": "x"}})),
            ),
            (
                OpKind::Add,
                "/spec/list/-",
                Some(json!(3)),
                Ok(json!({"spec": {"replicas": 1, "list": [1, 2, 3]}})),
            ),
            (
                OpKind::Remove,
                "/spec/list/0",
                None,
                Ok(json!({"spec": {"replicas": 1, "list": [2]}})),
            ),
            (OpKind::Remove, "/spec/missing", None, Err(())),
            (OpKind::Replace, "/spec/missing", Some(json!(1)), Err(())),
            (OpKind::Add, "/nope/deeper", Some(json!(1)), Err(())),
        ];
        for (kind, path, value, want) in cases {
            let op = PatchOp::new(kind, path, value).unwrap();
            let mut obj = base.clone();
            let got = op.apply(&mut obj);
            match want {
                Ok(expected) => {
                    assert!(got.is_ok(), "{op}: {got:?}");
                    assert_eq!(obj, expected, "{op}");
                }
                Err(()) => {
                    let message = got.unwrap_err();
                    assert!(message.contains(path), "{message}");
                }
            }
        }
    }
}
