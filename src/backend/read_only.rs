//! The channel of a read-only backend: the console sends on it as on any other, and only
//! effects that merely read reach the backend. It is where read-only is enforced for the
//! console's backends; it must not let an effect that writes through, and must not import
//! anything of `backend` (every backend builds on it).

use crate::messages::Effect;

/// The channel of a read-only backend: the console sends on it as on any other, and only
/// effects that merely read ([`Effect::only_reads`]) reach the backend; any other is refused
/// with a warning, so nothing sent to a read-only backend can become a write. Must be called
/// within a tokio runtime.
pub fn reads_only() -> (
    tokio::sync::mpsc::UnboundedSender<Effect>,
    tokio::sync::mpsc::UnboundedReceiver<Effect>,
) {
    let (console, mut sent) = tokio::sync::mpsc::unbounded_channel::<Effect>();
    let (reads, backend) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(effect) = sent.recv().await {
            if !effect.only_reads() {
                tracing::warn!("read-only: a {} request was refused", effect.name());
                continue;
            }
            if reads.send(effect).is_err() {
                return;
            }
        }
    });
    (console, backend)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::messages::CellRef;

    #[tokio::test]
    async fn a_read_only_channel_lets_the_live_views_reads_through_and_nothing_else() {
        let (console, mut backend) = reads_only();
        let cell = CellRef {
            resource: 0,
            cluster: 1,
        };
        console.send(Effect::Apply { cells: vec![cell] }).unwrap();
        console.send(Effect::Delete { cells: vec![cell] }).unwrap();
        console.send(Effect::Revert { fields: Vec::new() }).unwrap();
        console
            .send(Effect::OpenObjectView { cells: vec![cell] })
            .unwrap();
        console.send(Effect::CloseObjectView).unwrap();
        // The log pane only reads.
        let (_lease, watch) = crate::messages::LogLease::new();
        let logs = Effect::OpenLogs(crate::messages::LogOpen {
            stream: 1,
            cells: vec![cell],
            previous: false,
            tail: 10,
            watch,
        });
        console.send(logs.clone()).unwrap();
        drop(console);
        let mut received = Vec::new();
        while let Some(effect) = backend.recv().await {
            received.push(effect);
        }
        assert_eq!(
            received,
            [
                Effect::OpenObjectView { cells: vec![cell] },
                Effect::CloseObjectView,
                logs
            ]
        );
    }
}
