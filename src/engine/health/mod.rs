//! Whether a live object is doing its job, for every kind something knows about: the
//! operator's health rules in Lua (Argo CD's, run in a sandbox, `lua.rs`, whose tables walk in
//! gopher-lua's order, `ordered.rs`), searched in layers
//! (`rules.rs`), over the built-in kinds (`builtin.rs`, Argo CD's health engine's meanings).
//! A pod's own trouble, in kubectl's words, is `pods.rs`.
//! The rules in use are installed once at start ([`install`]); before that, and in a program
//! that installs none, only the built-ins decide. It reads only the object handed to it and
//! the rules' texts: it must not read files, know where the object came from, nor decide that
//! an absent object is Missing (the caller knows that).

mod builtin;
pub mod lua;
mod ordered;
pub mod pods;
pub mod rules;

use std::sync::OnceLock;

use serde_json::Value;

use crate::model::CellHealth;
pub use builtin::{DEADLINE_EXCEEDED, reason_at};
pub use rules::Rules;

static INSTALLED: OnceLock<Rules> = OnceLock::new();

/// Makes `rules` the ones every later assessment uses; `false` (and nothing changes) when
/// rules were already installed or used.
pub fn install(rules: Rules) -> bool {
    INSTALLED.set(rules).is_ok()
}

fn installed() -> &'static Rules {
    INSTALLED.get_or_init(Rules::builtin)
}

/// Makes `layer` the fleet's Karmada interpreters for every later assessment, replacing
/// those of the fleet read before (`None`: the fleet declares none).
pub fn use_fleet_layer(layer: Option<rules::Layer>) {
    installed().use_fleet_layer(layer);
}

/// Whether objects of this API version and kind have a health (a Deployment does, a
/// ConfigMap does not, a Certificate does where a rule knows it).
pub fn has_health(api_version: &str, kind: &str) -> bool {
    installed().has_health(api_version, kind)
}

/// The health of a live object and the rule that decided it, or `None` for a kind without
/// one (a ConfigMap, a Role).
pub fn assess(object: &Value) -> Option<CellHealth> {
    installed().assess(object)
}
