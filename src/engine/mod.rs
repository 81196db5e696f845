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
    templates: Vec<Value>,
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

// ---- Interim stand-in, replaced by the real engine when its branch lands. ----

/// Why a resource is or is not on a cluster, step by step.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Explanation {
    pub placed: bool,
    pub reason: String,
    pub steps: Vec<String>,
}

/// Loads the fleet documents; returns what loaded and every error found.
pub fn load_fleet(files: &[SourceFile]) -> (Fleet, Vec<FleetError>) {
    let mut fleet = Fleet::default();
    let mut errors = Vec::new();
    let mut templates = Vec::new();
    for file in files {
        let docs: Vec<Value> = match serde_saphyr::from_multiple(&file.text) {
            Ok(docs) => docs,
            Err(err) => {
                errors.push(FleetError {
                    location: SourceLocation {
                        file: file.path.clone(),
                        line: 1,
                    },
                    field: "(document)".into(),
                    message: err.to_string(),
                    hint: "fix the YAML syntax".into(),
                });
                continue;
            }
        };
        for doc in docs {
            let kind = doc["kind"].as_str().unwrap_or_default().to_string();
            let name = doc["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if kind == "Cluster" {
                let labels = doc["metadata"]["labels"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                            .collect()
                    })
                    .unwrap_or_default();
                fleet.clusters.push(ClusterSpec {
                    context: name.clone(),
                    name,
                    labels,
                    region: doc["spec"]["region"].as_str().map(str::to_string),
                    provider: doc["spec"]["provider"].as_str().map(str::to_string),
                    ..ClusterSpec::default()
                });
            } else if !kind.is_empty() {
                fleet.resources.push(FederatedResource {
                    target: ResourceRef {
                        api_version: doc["apiVersion"].as_str().unwrap_or_default().into(),
                        kind,
                        namespace: doc["metadata"]["namespace"].as_str().map(str::to_string),
                        name,
                    },
                    dialect: Dialect::Karmada,
                    source: SourceLocation {
                        file: file.path.clone(),
                        line: 1,
                    },
                });
                templates.push(doc);
            }
        }
    }
    fleet.templates = templates;
    (fleet, errors)
}

impl Fleet {
    pub fn decide(&self, resource: usize, cluster: usize) -> Decision {
        let _ = cluster;
        match self.templates.get(resource) {
            Some(object) => Decision::Placed {
                object: object.clone(),
                replicas: None,
            },
            None => Decision::NotPlaced {
                reason: "unknown resource".into(),
            },
        }
    }

    pub fn explain(&self, resource: usize, cluster: usize) -> Explanation {
        let placed = matches!(self.decide(resource, cluster), Decision::Placed { .. });
        Explanation {
            placed,
            reason: "interim engine places everything everywhere".into(),
            steps: Vec::new(),
        }
    }

    /// Whether a resource is placed on a cluster, without rendering it: `Err(reason)` if not.
    pub fn placement(&self, resource: usize, _cluster: usize) -> Result<Option<i64>, String> {
        if resource < self.templates.len() {
            Ok(None)
        } else {
            Err("unknown resource".into())
        }
    }

    pub fn placement_summary(&self, _resource: usize) -> String {
        "all".into()
    }
}
