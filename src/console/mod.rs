//! The console at the edge: the terminal loop. It owns the terminal (raw mode and the
//! alternate screen, restored on quit, error, panic or signal), turns terminal events,
//! signals, clock ticks and backend events into [`Action`]s for the session, and after
//! draining whatever is queued draws `&State` with `views` once, at most at a capped frame
//! rate. It must not change state other than through the session, nor decide what a key does.

pub mod keys;
pub mod signals;
pub mod terminal;

use std::time::Duration;

use crossterm::event::EventStream;
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::app::update::{is_typing, update};
use crate::app::{Action, Session};
use crate::backend::BackendEvent;
use crate::config::keymap::Keymap;
use crate::config::theme::Theme;
use crate::views::{self, ViewContext};
use signals::Signals;
use terminal::TerminalGuard;

/// How often the app clock ticks (ages, staleness, wall paging).
const TICK_INTERVAL: Duration = Duration::from_secs(1);

/// Frames are drawn at most this often; bursts of events between them coalesce into one frame.
const FRAME_INTERVAL: Duration = Duration::from_millis(33);

/// Backend events handled before a frame is drawn, so a flood cannot starve the keyboard.
const MAX_EVENTS_PER_FRAME: usize = 4096;

/// Everything the console loop needs: the session, and how to draw it.
pub struct Console {
    pub session: Session,
    pub theme: Theme,
    pub keymap: Keymap,
    pub ascii: bool,
    pub events: mpsc::UnboundedReceiver<BackendEvent>,
}

impl Console {
    /// Runs until the operator quits or a signal arrives; the terminal is restored on return.
    /// Returns the signal that ended it (`None` when the operator quit), for the exit status.
    pub async fn run(mut self) -> anyhow::Result<Option<&'static str>> {
        let mut guard = TerminalGuard::enter()?;
        self.session.explain_selection();
        let mut terminal_events = EventStream::new();
        let mut signals = Signals::new()?;
        if let Ok(size) = guard.terminal().size() {
            update(
                &mut self.session.state,
                Action::Resize {
                    width: size.width,
                    height: size.height,
                },
            );
        }
        let mut dirty = true;
        let mut last_frame: Option<Instant> = None;
        let started = Instant::now();
        let mut clock = tokio::time::interval(TICK_INTERVAL);
        clock.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut ended_by: Option<&'static str> = None;
        loop {
            if self.session.state.should_quit {
                break;
            }
            let due = last_frame.map_or(Instant::now(), |at| at + FRAME_INTERVAL);
            if dirty && Instant::now() >= due {
                let context = ViewContext {
                    theme: &self.theme,
                    keymap: &self.keymap,
                    ascii: self.ascii,
                };
                guard
                    .terminal()
                    .draw(|frame| views::render(frame, &self.session.state, &context))?;
                dirty = false;
                last_frame = Some(Instant::now());
            }
            let frame_timer = async {
                if dirty {
                    tokio::time::sleep_until(due).await;
                } else {
                    std::future::pending::<()>().await;
                }
            };
            let action = tokio::select! {
                event = terminal_events.next() => match event {
                    Some(Ok(event)) => {
                        keys::action_for(event, is_typing(&self.session.state), &self.keymap)
                    }
                    Some(Err(err)) => {
                        tracing::error!("terminal input failed: {err}");
                        Some(Action::Terminate)
                    }
                    None => Some(Action::Terminate),
                },
                event = self.events.recv() => event.map(Action::Backend),
                signal = signals.next() => {
                    if signal == "SIGHUP" && self.session.state.wall.is_some() {
                        // A wall display outlives the session that started it.
                        tracing::info!("received SIGHUP; the wall display keeps running");
                        None
                    } else {
                        tracing::info!("received {signal}; quitting");
                        ended_by = Some(signal);
                        Some(Action::Terminate)
                    }
                }
                _ = clock.tick() => {
                    let now_ms = started.elapsed().as_millis() as u64;
                    // Only the wall shows time; the console redraws only on change.
                    if self.session.state.wall.is_some() {
                        dirty = true;
                    }
                    Some(Action::Tick { now_ms })
                }
                () = frame_timer => None,
            };
            if let Some(action) = action {
                let is_tick = matches!(action, Action::Tick { .. });
                self.session.dispatch(action);
                dirty |= !is_tick;
            }
            // Drain whatever else is queued before drawing once.
            let mut drained = 0;
            while drained < MAX_EVENTS_PER_FRAME {
                let Ok(event) = self.events.try_recv() else {
                    break;
                };
                self.session.dispatch(Action::Backend(event));
                drained += 1;
                dirty = true;
            }
        }
        drop(guard);
        Ok(ended_by)
    }
}
