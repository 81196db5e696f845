//! Documents: the fleet files as the engine receives them (path and text), split into
//! located YAML documents with a line for every field, and the located error every room
//! raises for bad input, and the check of built-in kinds against the API's types. It must not
//! read files, classify documents or place anything.

pub mod builtin;
pub mod metadata;
pub mod parse;
pub mod source;

pub use source::{FleetError, SourceFile, SourceLocation};
