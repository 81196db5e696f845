//! Edits as pure transformations of fleet texts: placements (either dialect), override rules,
//! an OCM Placement, adopting drift as overrides and drift ignore rules, and the writer that
//! replaces one YAML document while keeping the rest of its file and its comments. Each
//! returns new texts and what they change; it must not write files or talk to a cluster.

pub mod adopt;
pub mod by_document;
pub mod drift_repair;
pub mod error;
pub mod ocm_placement;
pub mod override_rules;
pub mod placement;
pub mod yaml_text;

pub use error::{EditError, Part};
