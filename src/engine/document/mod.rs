//! Documents: the fleet files as the engine receives them (path and text), split into
//! located YAML documents with a line for every field, and the located error every room
//! raises for bad input, the check of built-in kinds against the API's types, and where a
//! document holds Secret values (the one notion every printer masks by). It must not read
//! files, classify documents or place anything.

pub mod api_rules;
pub mod builtin;
pub mod metadata;
pub mod parse;
pub mod secret_values;
pub mod source;

pub use source::{FleetError, SourceFile, SourceLocation};
