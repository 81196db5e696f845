//! The fleet: its cluster inventory, one plan per federated resource assembled from the
//! documents of both dialects, what that plan decides for a (resource, cluster) cell, and the
//! explanation of it. Placement is computed once when the fleet is assembled. It must not do
//! I/O, and it must not edit documents (that is [`super::edit`]).

pub mod assemble;
pub mod decide;
pub mod explain;
pub mod interpreted;
pub mod inventory;
mod karmada_inputs;
pub mod namespaces;
pub mod plan;
pub mod reload;

pub use crate::engine::dialect::kubefed::KUBEFED_MANAGED_LABEL;
pub use assemble::load_fleet;
pub use decide::{Decision, FederatedResource, Fleet};
pub use explain::Explanation;
pub use inventory::CONTEXT_ANNOTATION;
pub use plan::{MANAGED_BY_LABEL, MANAGED_BY_VALUE, SOURCE_ANNOTATION};
