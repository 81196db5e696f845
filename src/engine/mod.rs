//! The pure propagation engine: load a fleet directory's documents, place every federated
//! resource on inventory clusters, apply overrides, render per-cluster objects and explain why.
//! It must not do I/O, read a clock, spawn tasks or touch tokio: callers hand it file texts.
//!
//! # Choices where upstream is ambiguous or needs live state (explain says so where it matters)
//! - Every inventory cluster is treated as joined and Ready; health is shown as status instead.
//! - Inventory: a name in several dialects is one cluster; labels are united (Karmada wins a
//!   conflicting key, then KubeFed, then a ClusterProfile); provider/region/zones/taints come
//!   from the Karmada Cluster, falling back to the KubeFedCluster's status; a ClusterProfile's
//!   `status.properties` are labels; context = `flotilla.dev/context` annotation, else the name.
//! - YAML is read with YAML 1.2 booleans, so `name: y` or `value: on` stay strings.
//! - Karmada claims are recomputed from the files (no history), so `preemption` has no effect
//!   (explain says so where policies compete); `failover`, `activationPreference`,
//!   `schedulePriority`, `schedulerName`, `preserveResourcesOnDeletion` and
//!   `workloadAffinity` need the hub's live state or history and are stated, not applied.
//! - `propagateDeps`: a dependency goes where every workload that needs it is scheduled, and
//!   where its own policy places it (checked against Karmada v1.18.2); only templates of the
//!   fleet are dependencies. A workload's `suspension` does not reach its dependencies.
//! - `suspension`: the cell is placed and its object built, but never delivered (Suspended).
//! - `overflowAffinities`: no capacity data, so a group's own clusters are assumed to hold
//!   every replica; an overflow group is used only when the group itself has no feasible one.
//! - Karmada's scheduler scores are unknown offline: equal scores, ties broken by cluster name;
//!   spread groups rank by feasible-cluster count, then name. Spread constraints support
//!   cluster, region, zone (first zone), provider and labels with upstream's region algorithm
//!   (one cluster per chosen group, more only up to a cluster maxGroups).
//! - Divided static weights: floor shares, remainder one by one by weight then name (upstream
//!   breaks equal-weight ties at random). `dynamicWeight` divides equally (no capacity data).
//!   Clusters that get 0 replicas are not placed. Aggregated puts all replicas on the first
//!   chosen cluster by name (every cluster assumed large enough).
//! - Karmada's own bookkeeping labels (permanent ids, applied-overrides annotations) are not
//!   rendered: they carry hub UIDs. KubeFed's `kubefed.io/managed: "true"` label is rendered.
//! - Karmada namespaces: a namespace is rendered on the clusters its placed templates reach
//!   (upstream's namespace sync would create every hub namespace everywhere); a Namespace
//!   template no ClusterPropagationPolicy selects follows its objects the same way.
//! - A namespaced template without a namespace lands in `default`, as kubectl would put it.
//! - The same object (kind/namespace/name) declared twice, in one dialect or across both, is an
//!   error; the first by (apiVersion, kind, namespace, name, file, line) is kept.
//! - An override that fails for some clusters (missing path) is an error, and those cells are
//!   NotPlaced with the reason, as upstream would not deliver them.
//! - `flotilla.dev/v1alpha1 DriftIgnore` documents are flotilla's own: read as ignore rules
//!   ([`ignore`]), never propagated; any other `flotilla.dev` kind is an error.

//!
//! # Rooms, from the bottom up (a room imports only rooms below it)
//! - [`document`]: file texts in, located documents out, and the located error.
//! - [`health`]: whether a live object is healthy: the operator's Argo CD health rules in a Lua
//!   sandbox over the built-in kinds (Argo CD's meanings).
//! - [`interpreter`]: Karmada's resource interpreter (`ResourceInterpreterCustomization`):
//!   its documents read and checked, its Lua functions called in the health sandbox.
//! - [`place`]: label and field selectors, affinities, taints and tolerations, replica division.
//! - [`overrides`]: how one object is varied (RFC 6902 operations, Karmada's overriders).
//! - [`dialect`]: each federation API's documents and upstream semantics (Karmada, KubeFed, OCM).
//! - [`compare`]: normalising, diffing, drift fields and drift ignore rules.
//! - [`fleet`]: the assembled fleet (inventory, a plan per resource), what it decides per cell,
//!   and why.
//! - [`render`]: `flotilla render`'s output.
//! - [`edit`]: placement, override, OCM Placement and drift edits as pure transformations of
//!   fleet texts, and the comment-preserving YAML writer.

pub mod chain;
pub mod compare;
pub mod dialect;
pub mod document;
pub mod edit;
pub mod fleet;
pub mod health;
pub mod interpreter;
pub mod logs;
pub mod overrides;
pub mod place;
pub mod render;

pub use document::{FleetError, SourceFile, SourceLocation};
pub use fleet::{
    CONTEXT_ANNOTATION, Decision, Explanation, FederatedResource, Fleet, KUBEFED_MANAGED_LABEL,
    MANAGED_BY_LABEL, MANAGED_BY_VALUE, SOURCE_ANNOTATION, load_fleet,
};
