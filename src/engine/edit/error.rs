//! Why an edit was refused: one error for every editor of this room (placements of either
//! dialect, override rules, an OCM Placement, adopting drift, drift ignore rules), with a
//! variant per cause a caller acts on differently: the operator's text, something the edit
//! names that is gone, a document flotilla cannot edit, a fleet the edit would break, a file
//! the edit cannot be written into. Each message is the one the operator reads; it must not
//! add hints of a command or a view (its callers do), nor decide what a caller does about it.

use crate::engine::document::source::FleetError;

/// Why an edit was refused; nothing should be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The operator's text does not parse or is not allowed there: a selector, a toleration,
    /// replicas, a `key=value`, an override's path or value, a rule's clusters.
    #[error("{0}")]
    Input(String),
    /// [`EditError::Input`] (or another refusal) in one part of an OCM Placement's edit.
    #[error("{part}: {error}")]
    InPart { part: Part, error: Box<EditError> },
    /// What the edit names (a resource, cluster, rule, policy, file or document) is not, or no
    /// longer, in the fleet: reload and look again.
    #[error("{0}")]
    Missing(String),
    /// The resource's placement or overrides are not in a shape flotilla can edit (no policy
    /// selects it, the other dialect, a field that is not a list or mapping).
    #[error("{0}")]
    Unsupported(String),
    /// The document the edit starts from does not parse.
    #[error("cannot read the document: {0}")]
    Unreadable(String),
    /// The edit would change nothing (a rule already at the end of its list, nothing chosen).
    #[error("{0}")]
    NoOp(String),
    /// The fleet does not place the resource on the cluster: there is nothing to adopt there.
    #[error("{0}")]
    NotPlaced(String),
    /// The edited fleet would not load; its first error.
    #[error("the edited fleet would not load: {0}")]
    WouldNotLoad(Box<FleetError>),
    /// The fleet with adopted drift would not load: how many errors, and the first.
    #[error("the edited fleet would not load ({count} error(s)), first: {first}")]
    AdoptedWouldNotLoad {
        count: usize,
        first: Box<FleetError>,
    },
    /// The edited fleet loads but does not render what was adopted.
    #[error("{0}")]
    WouldNotTakeEffect(String),
    /// The edited document cannot be written into its file's text.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// A value cannot be written as YAML.
    #[error("{0}")]
    Serialize(String),
}

impl EditError {
    pub(crate) fn input(message: impl Into<String>) -> EditError {
        EditError::Input(message.into())
    }

    pub(crate) fn missing(message: impl Into<String>) -> EditError {
        EditError::Missing(message.into())
    }

    pub(crate) fn unsupported(message: impl Into<String>) -> EditError {
        EditError::Unsupported(message.into())
    }

    pub(crate) fn no_op(message: impl Into<String>) -> EditError {
        EditError::NoOp(message.into())
    }

    /// The error in `part`.
    pub(crate) fn in_part(self, part: Part) -> EditError {
        EditError::InPart {
            part,
            error: Box::new(self),
        }
    }
}

/// Why a document could not be written into its file's text (the YAML writer,
/// [`super::yaml_text`]); nothing should be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct WriteError {
    pub file: String,
    pub message: String,
}

/// A part of an OCM Placement's edit, as its errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The label selector of predicate `n` (from 1).
    Labels(usize),
    /// The claim selector of predicate `n` (from 1).
    Claims(usize),
    Tolerations,
    NumberOfClusters,
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Part::Labels(n) => write!(f, "predicate {n}, labels"),
            Part::Claims(n) => write!(f, "predicate {n}, claims"),
            Part::Tolerations => f.write_str("tolerations"),
            Part::NumberOfClusters => f.write_str("number of clusters"),
        }
    }
}
