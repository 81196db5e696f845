//! One drifted field of one object, as drift finds it and the drift view, `drift -o json` and
//! a revert carry it: the desired and live values, who owns the live one, and whether they are
//! a Secret's. Plain data and how it may be shown (masked through the engine's Secret
//! masking); it must not find drift (the backends do) nor import anything above `engine`.

use serde::Serialize;
use serde_json::Value;

use crate::engine::compare::secrets;

/// One drifted field of `drift -o json`. `desired` and `live` hold the real values (a repair
/// needs them); whatever shows them to a person goes through [`DriftField::shown`], and the
/// JSON it serializes to is masked the same way.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftField {
    pub path: String,
    pub desired: Value,
    pub live: Value,
    pub manager: Option<String>,
    /// When that manager's managedFields entry was last written.
    pub time: Option<String>,
    /// Whether the values are a Secret's (`/data` or `/stringData` of a core/v1 Secret).
    pub secret: bool,
}

impl DriftField {
    /// The desired and live values as a person may read them: a Secret's masked.
    pub fn shown(&self) -> (Value, Value) {
        if self.secret {
            secrets::mask_field(&self.desired, &self.live)
        } else {
            (self.desired.clone(), self.live.clone())
        }
    }
}

impl Serialize for DriftField {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Shown<'a> {
            path: &'a str,
            desired: Value,
            live: Value,
            manager: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            time: Option<&'a str>,
        }
        let (desired, live) = self.shown();
        Shown {
            path: &self.path,
            desired,
            live,
            manager: self.manager.as_deref(),
            time: self.time.as_deref(),
        }
        .serialize(serializer)
    }
}
