//! Comparing what flotilla wants with what a cluster has: normalising objects, unified diffs,
//! the drifted leaves of an intent, and drift ignore rules (`DriftIgnore` documents). It must
//! not place or render: callers hand it the rendered intent and the live object.

pub mod diff;
pub mod ignore;
pub mod secrets;
