//! Comparing what flotilla wants with what a cluster has: normalising objects, unified diffs,
//! the drifted leaves of an intent, drift ignore rules (`DriftIgnore` documents), and the live
//! view's comparisons (a live object against the desired one, clusters grouped by live state). It must
//! not place or render: callers hand it the rendered intent and the live object.

pub mod diff;
pub mod ignore;
pub mod live_state;
pub mod secrets;
