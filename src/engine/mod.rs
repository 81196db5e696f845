//! The pure propagation engine: load a fleet directory's documents, place every federated
//! resource on inventory clusters, apply overrides, render per-cluster objects and explain why.
//! It must not do I/O, read a clock, spawn tasks or touch tokio: callers hand it file texts.

use serde_json::Value;

use crate::model::{ClusterSpec, Dialect, ResourceRef};

/// One YAML file handed to the engine: its path (as the user should see it) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    pub path: String,
    pub text: String,
}

/// Where a document (or a field within it) came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceLocation {
    pub file: String,
    /// 1-based line.
    pub line: usize,
}

impl std::fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// A problem in the fleet files, phrased for the person who has to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {field}: {message}; {hint}")]
pub struct FleetError {
    pub location: SourceLocation,
    /// The offending field as a dotted path, e.g. `spec.overrideRules[0].overriders.plaintext[1].operator`.
    pub field: String,
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

/// A federated resource: one object the fleet wants on some clusters, in either dialect.
#[derive(Debug, Clone, PartialEq)]
pub struct FederatedResource {
    /// Identity of the object as it lands on member clusters.
    pub target: ResourceRef,
    pub dialect: Dialect,
    pub source: SourceLocation,
}

/// The loaded fleet: inventory, federated resources and the policies that place and vary them.
#[derive(Debug, Clone, Default)]
pub struct Fleet {
    pub clusters: Vec<ClusterSpec>,
    pub resources: Vec<FederatedResource>,
}

/// What the engine decided for one (resource, cluster) pair.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Placed {
        /// The exact object the cluster should have, ownership marker included.
        object: Value,
        /// Replicas computed for this cluster when the resource has replicas.
        replicas: Option<i64>,
    },
    NotPlaced {
        reason: String,
    },
}
