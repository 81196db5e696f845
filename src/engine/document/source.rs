//! Where engine input comes from and how its problems are told: a fleet file handed in as
//! text, the location of a document or field within it, and the located error a person fixes.
//! It must not read files or parse YAML.

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
