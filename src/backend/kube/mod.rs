//! The raw-contexts backend: kubeconfig handling as kubectl does it, one client per context,
//! probes, the kube-rs [`ClusterApi`](crate::backend::fanout::cluster_api::ClusterApi) that the
//! fan-out applies through, and the live backend with its watch caches. Fan-out is bounded and
//! every cluster has its own timeout, so a slow or dead cluster never holds up another. It must
//! not log credentials, write a kubeconfig or change its current context, and a read-only
//! cluster has no code path that sends a mutating request.
//!
//! # Files, from the bottom up
//! - [`credentials`]: running a user's `exec` plugin without a terminal, within a deadline.
//! - [`proxy`]: which proxy a cluster is reached through, as kubectl decides it.
//! - [`retry_after`]: how a client is built for the one retry layer (kube-rs retries off,
//!   `Retry-After` kept).
//! - [`kubeconfig`], [`probe`]: loading contexts and clients; probing one cluster.
//! - [`profile_inventory`]: ClusterProfiles found on a hub: their ways in and what their
//!   cluster manager reports.
//! - [`api`]: one cluster's API through kube-rs.
//! - [`exec`]: running a command in a pod (`pods/exec`) through kube-rs.
//! - [`connect`]: clients and probes for the whole fleet.
//! - [`live`]: the console's live backend.

pub mod api;
pub mod connect;
pub mod credentials;
pub mod exec;
pub mod kubeconfig;
pub mod live;
pub mod logs;
pub mod probe;
pub mod profile_inventory;
pub mod proxy;
pub mod retry_after;

pub use connect::{Member, connect, probe_all};
