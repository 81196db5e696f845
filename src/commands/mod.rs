//! Subcommand logic that is independent of the argument parser.

pub mod render;
