//! The log pane's messages: what opening it asks a backend ([`LogOpen`]), the lease whose end
//! stops its streams ([`LogLease`], held by the open pane; [`LogWatch`], held by the streams),
//! and what the streams send back ([`LogItem`]). Plain data and the lease's two ends; it must
//! not read a log nor decide how a line is shown (the engine's `logs` does).

use std::sync::Arc;

use tokio::sync::watch;

use super::cell::CellRef;
use crate::engine::logs::LogLine;

/// The pane's end of a log stream: while it lives (the pane is open) the streams read; when
/// it is dropped (the pane closed or was opened anew) every stream it started stops.
#[derive(Debug, Clone)]
pub struct LogLease(#[allow(dead_code)] Arc<watch::Sender<()>>);

/// The streams' end of a [`LogLease`].
#[derive(Debug, Clone)]
pub struct LogWatch(watch::Receiver<()>);

impl LogLease {
    /// A new lease and the watch the streams wait on.
    pub fn new() -> (LogLease, LogWatch) {
        let (sender, receiver) = watch::channel(());
        (LogLease(Arc::new(sender)), LogWatch(receiver))
    }
}

impl PartialEq for LogLease {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for LogLease {}

impl LogWatch {
    /// Resolves once the lease is gone (the pane closed).
    pub async fn ended(&self) {
        let mut receiver = self.0.clone();
        while receiver.changed().await.is_ok() {}
    }

    /// Whether the lease is gone.
    pub fn is_ended(&self) -> bool {
        self.0.has_changed().is_err()
    }
}

impl PartialEq for LogWatch {
    fn eq(&self, other: &Self) -> bool {
        self.0.same_channel(&other.0)
    }
}

/// `L`: read the logs of these cells' workloads (each on its cell's cluster), following them
/// (or, with `previous`, the run before each container's last restart) until the lease ends.
#[derive(Debug, Clone, PartialEq)]
pub struct LogOpen {
    /// Which opening of the pane this is; lines of an older one are dropped.
    pub stream: u64,
    pub cells: Vec<CellRef>,
    pub previous: bool,
    /// Lines of the past each container sends before following.
    pub tail: u64,
    pub watch: LogWatch,
}

/// What a log stream sends, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogItem {
    Line(LogLine),
    /// Why something was not read on a cluster (a pod on no node yet, a container without a
    /// previous run, a cluster neither a context nor a proxy reaches), `failed` when it is a
    /// failure rather than a note.
    Note {
        cluster: String,
        text: String,
        failed: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn dropping_the_lease_ends_the_watch() {
        let (lease, watch) = LogLease::new();
        assert!(!watch.is_ended());
        let waiting = tokio::spawn({
            let watch = watch.clone();
            async move { watch.ended().await }
        });
        drop(lease);
        assert!(waiting.await.is_ok());
        assert!(watch.is_ended());
    }
}
