//! Where fleet state comes from and where changes go. A backend runs as tasks of its own and
//! talks to the app only through messages (the room `crate::messages`, below it): it receives
//! [`Effect`](crate::messages::Effect)s and answers with
//! [`BackendEvent`](crate::messages::BackendEvent)s. It must never reach into the app's state
//! (nor import the app, the views, the commands or the command line), and a slow or dead
//! cluster must never block another cluster or the UI. Read-only is enforced here: a read-only
//! backend has no code path that can send a mutating request.
//!
//! # Rooms, from the bottom up
//! - [`read_only`]: the channel of a read-only backend, which lets only reads through.
//! - [`fanout`]: plan, apply, drift and revert over any cluster API, with bounded fan-out.
//! - [`cells`]: the cell-status rules every backend that watches clusters follows.
//! - [`console_loop`]: the console's backend loop, one for every backend kind.
//! - [`audit`]: the audit log every write is recorded in.
//! - [`log_pane`]: the console's log pane streamed from any cluster API, alike on every
//!   backend.
//! - [`kube`]: raw kubeconfig contexts: clients, probes, the kube-rs cluster API, and the live
//!   backend with its watch caches.
//! - [`hub`]: federation hubs (Karmada, Open Cluster Management, KubeFed) and the console's
//!   backend on one.
//! - [`cluster_profiles`]: SIG Multicluster ClusterProfiles on a hub as the inventory, and
//!   the access providers that reach their members.
//! - [`sim`]: the demo's simulated clusters.

pub mod audit;
pub mod cells;
pub mod cluster_profiles;
pub mod console_loop;
pub mod fanout;
pub mod hub;
pub mod kube;
pub mod log_pane;
pub mod read_only;
pub mod sim;
