//! The console's backend loop, one for every backend kind: it waits for the console's next
//! effect or the backend's own next happening (a timer, a watch, a hub's cache), hands either
//! to the backend, and ends when the console has gone. The demo's simulated clusters, raw
//! contexts and hubs each implement [`ConsoleBackend`]; read-only is enforced below it, by the
//! channel ([`crate::backend::read_only`]). It must not know any backend's kind nor decide
//! what an effect does.

use std::future::Future;

use tokio::sync::mpsc;

use crate::messages::{BackendEvent, Effect};

/// What the console's loop drives: a backend that carries out the console's effects and has
/// happenings of its own. Each handler sends what changed on the backend's event channel and
/// answers whether the console is still there to hear it.
pub trait ConsoleBackend: Send {
    /// What the backend woke for.
    type Wake: Send;

    /// The backend's own next happening (a backend with none waits forever); `None` when the
    /// backend cannot go on. Must be cancel-safe: an effect arriving first drops the wait, and
    /// the loop waits again after.
    fn wait(&mut self) -> impl Future<Output = Option<Self::Wake>> + Send;

    /// Handles what the backend woke for. False when the console has gone.
    fn woken(&mut self, wake: Self::Wake) -> impl Future<Output = bool> + Send;

    /// Carries out one of the console's effects. False when the console has gone.
    fn effect(&mut self, effect: Effect) -> impl Future<Output = bool> + Send;
}

/// What the loop waited for.
enum Next<W> {
    Wake(W),
    Effect(Effect),
    End,
}

/// Runs `backend` until the console has gone: its effect channel closed (`effects`, `None` for
/// a backend nothing can be sent to) or its event channel (`events`) dropped.
pub async fn run<B: ConsoleBackend>(
    mut backend: B,
    mut effects: Option<mpsc::UnboundedReceiver<Effect>>,
    events: mpsc::UnboundedSender<BackendEvent>,
) {
    loop {
        let next = tokio::select! {
            wake = backend.wait() => match wake {
                Some(wake) => Next::Wake(wake),
                None => Next::End,
            },
            effect = async {
                match effects.as_mut() {
                    Some(receiver) => receiver.recv().await,
                    None => std::future::pending().await,
                }
            } => match effect {
                Some(effect) => Next::Effect(effect),
                None => Next::End,
            },
            () = events.closed() => Next::End,
        };
        let still_there = match next {
            Next::Wake(wake) => backend.woken(wake).await,
            Next::Effect(effect) => backend.effect(effect).await,
            Next::End => false,
        };
        if !still_there || events.is_closed() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::messages::CellRef;

    /// Wakes `wakes` times and then waits forever, and answers each effect with a notice.
    struct Counter {
        wakes: u32,
        events: mpsc::UnboundedSender<BackendEvent>,
    }

    impl ConsoleBackend for Counter {
        type Wake = u32;

        async fn wait(&mut self) -> Option<u32> {
            if self.wakes == 0 {
                return std::future::pending().await;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
            self.wakes -= 1;
            Some(self.wakes)
        }

        async fn woken(&mut self, wake: u32) -> bool {
            self.events
                .send(BackendEvent::Notice(format!("wake {wake}")))
                .is_ok()
        }

        async fn effect(&mut self, effect: Effect) -> bool {
            self.events
                .send(BackendEvent::Notice(effect.name().to_string()))
                .is_ok()
        }
    }

    #[tokio::test]
    async fn a_backend_with_nothing_of_its_own_still_carries_out_effects_until_the_console_goes() {
        let (events, mut console) = mpsc::unbounded_channel();
        let (effects, receiver) = mpsc::unbounded_channel();
        let backend = Counter {
            wakes: 2,
            events: events.clone(),
        };
        let running = tokio::spawn(run(backend, Some(receiver), events));
        let mut heard = Vec::new();
        for _ in 0..2 {
            if let Some(BackendEvent::Notice(text)) = console.recv().await {
                heard.push(text);
            }
        }
        assert_eq!(heard, ["wake 1", "wake 0"]);
        let cell = CellRef {
            resource: 0,
            cluster: 0,
        };
        effects
            .send(Effect::Apply { cells: vec![cell] })
            .expect("the loop takes effects");
        assert!(matches!(
            console.recv().await,
            Some(BackendEvent::Notice(text)) if text == Effect::Apply { cells: Vec::new() }.name()
        ));
        drop(effects);
        tokio::time::timeout(Duration::from_secs(5), running)
            .await
            .expect("the loop ends when the console stops sending")
            .expect("the loop does not panic");
    }

    #[tokio::test]
    async fn the_loop_ends_when_nobody_listens_any_more() {
        let (events, console) = mpsc::unbounded_channel();
        let backend = Counter {
            wakes: 0,
            events: events.clone(),
        };
        // No effect channel at all: a backend that can only be watched.
        let running = tokio::spawn(run(backend, None, events));
        drop(console);
        tokio::time::timeout(Duration::from_secs(5), running)
            .await
            .expect("the loop ends when the console has gone")
            .expect("the loop does not panic");
    }
}
