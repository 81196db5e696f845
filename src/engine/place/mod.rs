//! Placement primitives shared by the dialects: Kubernetes label selectors, Karmada field
//! selectors and cluster affinities, taints and tolerations, and replica arithmetic. Each
//! answers for one cluster or one set of numbers; it must not know about policies, documents
//! of a dialect or rendered objects.

pub mod replicas;
pub mod selector;
