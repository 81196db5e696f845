//! The demo backend: simulated member clusters with health, latency, live objects, drift that
//! appears over time, a propagation that fails, and applies that really change live state.
//! Deterministic for a seed. [`scenario`] says how the clusters behave, [`world`] holds their
//! state ([`SimCore`], plain data driven by explicit time), [`task`] runs it as a tokio task for
//! the console, [`object_view`] answers the console's object view of a cell, [`pods`] makes the pods its workloads run, [`exec`] answers a command run in one of them, and [`cluster_api`] puts its clusters behind the fan-out's `ClusterApi` for the
//! scripting commands.
//! It must not touch real clusters, the terminal or the app's state.

pub mod cluster_api;
pub mod exec;
pub mod live_status;
pub mod log_stream;
pub mod logs;
pub mod object_view;
pub mod pods;
pub mod scenario;
pub mod stored;
pub mod task;
pub mod world;

pub use cluster_api::{SimClusterApi, SimFleet};
pub use scenario::{Scenario, ScenarioDrift, ScenarioFailure, SimPodState, SplitMix64};
pub use task::{spawn, spawn_on, spawn_readonly};
pub use world::{CONNECT_TIMEOUT_MS, SimCore, SimDrift};
