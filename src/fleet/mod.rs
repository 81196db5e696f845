//! The fleet's files: reading a fleet directory from disk (`dir`), saving edits back into it
//! compare-and-swap with a journal and backups (`save`), and the embedded demo fleet and its
//! synthetic big brothers (`demo`). Which fleet a command works on is chosen above this room
//! (`crate::source`). It hands text to the engine and takes text back; it must not interpret
//! documents itself.

pub mod demo;
pub mod dir;
pub mod save;
