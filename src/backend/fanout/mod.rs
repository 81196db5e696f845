//! Plan, apply, drift and revert across a fleet, over any [`ClusterApi`]: bounded fan-out
//! over clusters (at most `concurrency` in flight, each with its own timeout and per-cluster
//! guard: token bucket, request timeout, retries), and per cluster the requests in the right
//! order. Results are per (cluster, object) rows; a dead or slow cluster yields error rows and
//! never blocks the others. Used alike by the commands, the live backend and the hub backend.
//! It must not read files, print, or know about the console: callers turn rows into output,
//! cell statuses and exit codes.
//!
//! # Files, from the bottom up
//! - [`object`]: an object's identity and the field manager flotilla applies with.
//! - [`cluster_api`]: the per-cluster API, its errors and the request guards.
//! - [`targets`]: per-cluster work, ignore rules, fan-out settings and the fan-out itself.
//! - [`planning`], [`apply`], [`drift`]: the three passes; [`revert`] takes back chosen
//!   drifted fields through [`apply`].
//! - [`object_events`]: the object view's reads of one object: its recent Events (and its
//!   pods'), masked, with its diff against the desired object.
//! - [`pods`]: the pods a workload owns on a cluster (through its ReplicaSets), read across
//!   the fleet for `pods` and `images`.
//! - [`exec`]: which pod and container a command runs in, and what a cluster offers to run it
//!   (`pods/exec`).
//! - [`fake`]: an in-memory cluster for tests and the fan-out benchmark.
//!
//! [`ClusterApi`]: cluster_api::ClusterApi

pub mod apply;
pub mod cluster_api;
pub mod drift;
pub mod exec;
pub mod fake;
pub mod logs;
pub mod object;
pub mod object_events;
pub mod planning;
pub mod pods;
pub mod revert;
pub mod targets;
#[cfg(test)]
mod tests;
