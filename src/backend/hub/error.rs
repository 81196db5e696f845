//! Why a hub could not be used, read or written, by cause, so a caller can branch on it (the
//! command line turns it into an exit code) without reading words. Each variant carries the
//! message the operator sees, unchanged. Plain data; it must not talk to a hub.

/// Why a hub could not be used, read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HubError {
    /// What the operator named cannot serve as a hub: the kubeconfig, the context, or a
    /// cluster that serves no federation API (or a request that kind of hub cannot answer).
    #[error("{0}")]
    Input(String),
    /// The hub did not answer, or refused to be read.
    #[error("{0}")]
    Unreachable(String),
    /// The hub does not serve a kind its reader lists (its CRD is not installed).
    #[error("{0}")]
    MissingKind(String),
    /// An object on the hub, or an edit for it, that flotilla cannot read as its kind (a
    /// member the inventory parser refuses, a patch that is not one).
    #[error("{0}")]
    Unreadable(String),
    /// The hub refused a write; the message is the server's reason.
    #[error("{0}")]
    Refused(String),
    /// The object changed on the hub under an edit: nothing was written.
    #[error("{0}")]
    Changed(String),
}

impl HubError {
    /// The same cause, its message prefixed with `context` (e.g. `--hub NAME: `).
    pub fn within(self, context: &str) -> HubError {
        let prefixed = |message: String| format!("{context}{message}");
        match self {
            HubError::Input(m) => HubError::Input(prefixed(m)),
            HubError::Unreachable(m) => HubError::Unreachable(prefixed(m)),
            HubError::MissingKind(m) => HubError::MissingKind(prefixed(m)),
            HubError::Unreadable(m) => HubError::Unreadable(prefixed(m)),
            HubError::Refused(m) => HubError::Refused(prefixed(m)),
            HubError::Changed(m) => HubError::Changed(prefixed(m)),
        }
    }
}

/// A reason with no cause of its own: the hub did not answer.
impl From<String> for HubError {
    fn from(reason: String) -> HubError {
        HubError::Unreachable(reason)
    }
}
