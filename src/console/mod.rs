//! The console at the edge: the terminal loop. It owns the terminal (raw mode and the
//! alternate screen, restored on quit, error, panic or signal), turns terminal events,
//! signals, clock ticks and backend events into [`Action`]s for the session, and draws
//! `&State` with `views`. Keys come first: a key is handled before any queued backend event
//! and its frame is drawn at once; backend events are coalesced per cell and drawn at most
//! at a capped frame rate, so a flood delays cell freshness, never a key. It must not change
//! state other than through the session, nor decide what a key does.

pub mod batch;
pub mod clipboard;
pub mod keys;
pub mod signals;
pub mod terminal;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crossterm::event::{Event, EventStream};
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::app::state::exec::ExecHandoff;
use crate::app::{Action, Session};
use crate::config::keymap::Keymap;
use crate::config::theme::Theme;
use crate::messages::BackendEvent;
use crate::views::{self, ViewContext};
use batch::Batch;
use signals::Signals;
use terminal::TerminalGuard;

/// How often the app clock ticks (ages, staleness, wall paging).
const TICK_INTERVAL: Duration = Duration::from_secs(1);

/// Frames for backend events are drawn at most this often; events between them coalesce.
const FRAME_INTERVAL: Duration = Duration::from_millis(25);

/// How long one turn of the loop may spend taking queued backend events before it looks at
/// the keyboard again.
const EVENT_BUDGET: Duration = Duration::from_millis(4);

/// Runs a confirmed exec on the terminal handed over, and says how it ended.
pub type Handoff =
    Box<dyn FnMut(ExecHandoff) -> Pin<Box<dyn Future<Output = String> + Send>> + Send>;

/// Everything the console loop needs: the session, and how to draw it.
pub struct Console {
    pub session: Session,
    pub theme: Theme,
    pub keymap: Keymap,
    pub ascii: bool,
    pub events: mpsc::UnboundedReceiver<BackendEvent>,
    /// How an exec (`x`) runs once the loop has handed the terminal over; `None` where
    /// there is no terminal to hand over.
    pub handoff: Option<Handoff>,
    /// How a copy (`y` in the log pane) reaches the terminal's clipboard; [`Console::run`]
    /// sets it to the terminal it draws on. `None`: copies go nowhere (a test terminal).
    pub clipboard: Option<clipboard::Clipboard>,
}

/// The terminal's events, through a stream that is let go while an exec has the terminal (so
/// nothing else reads it) and made anew when the loop next reads, after it has taken the
/// terminal back and redrawn it (a redraw asks the terminal where its cursor is, an answer a
/// waiting stream would hold up).
struct SharedInputs(Arc<Mutex<Option<EventStream>>>);

impl Stream for SharedInputs {
    type Item = std::io::Result<Event>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut inner = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        Pin::new(inner.get_or_insert_with(EventStream::new)).poll_next(cx)
    }
}

/// What a drawn frame shows, for whoever watches the loop (benchmarks, tests): how many
/// terminal inputs and backend events had been handled when it was drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameDrawn {
    pub inputs: u64,
    pub events: u64,
}

/// Why the console loop ended, for the exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// The operator quit.
    Quit,
    /// A signal ended it (SIGINT, SIGTERM, SIGHUP).
    Signal(&'static str),
    /// The fleet or hub loading in the background could not be had: why, and whether it was
    /// the user's input (else a hub that did not answer).
    StartFailed { error: String, input: bool },
}

impl Console {
    /// Runs on the real terminal until the operator quits, a signal arrives or the fleet (or
    /// hub) fails to load; the terminal is restored on return.
    pub async fn run(mut self) -> anyhow::Result<Ended> {
        let mut guard = TerminalGuard::enter()?;
        let mut signals = Signals::new()?;
        let inputs = Arc::new(Mutex::new(Some(EventStream::new())));
        self.clipboard = Some(clipboard::stdout());
        if let Some(mut exec) = self.handoff.take() {
            let reader = inputs.clone();
            self.handoff = Some(Box::new(move |handoff| {
                let reader = reader.clone();
                let running = exec(handoff);
                Box::pin(async move {
                    // Nothing may read the terminal but the exec while it has it.
                    reader.lock().unwrap_or_else(PoisonError::into_inner).take();
                    terminal::suspend();
                    let said = running.await;
                    match terminal::resume() {
                        Ok(()) => said,
                        Err(err) => format!("{said}; the terminal could not be taken back: {err}"),
                    }
                })
            }));
        }
        let ended_by = self
            .drive(
                guard.terminal(),
                SharedInputs(inputs),
                Some(&mut signals),
                |_, _| {},
            )
            .await;
        drop(guard);
        ended_by
    }

    /// The loop itself, on any terminal and input stream (a test backend and a channel of
    /// key events in benchmarks); `on_frame` hears of every frame drawn, with the state it
    /// showed.
    pub async fn drive<B, I>(
        mut self,
        terminal: &mut Terminal<B>,
        mut inputs: I,
        mut signals: Option<&mut Signals>,
        mut on_frame: impl FnMut(&crate::app::State, FrameDrawn),
    ) -> anyhow::Result<Ended>
    where
        B: ratatui::backend::Backend,
        B::Error: Send + Sync + 'static,
        I: Stream<Item = std::io::Result<Event>> + Unpin,
    {
        if let Ok(size) = terminal.size() {
            self.session.dispatch(Action::Resize {
                width: size.width,
                height: size.height,
            });
        }
        let mut drawn = FrameDrawn {
            inputs: 0,
            events: 0,
        };
        let mut batch = Batch::default();
        // Backend events received; `drawn.events` counts those applied.
        let mut received = 0;
        let mut dirty = true;
        let mut draw_now = true;
        let mut last_frame: Option<Instant> = None;
        let started = Instant::now();
        let mut clock = tokio::time::interval(TICK_INTERVAL);
        clock.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut ended_by: Option<&'static str> = None;
        let mut inputs_open = true;
        let mut events_open = true;
        loop {
            if self.session.state.should_quit {
                break;
            }
            let due = last_frame.map_or(Instant::now(), |at| at + FRAME_INTERVAL);
            let frame_due = Instant::now() >= due;
            if frame_due && !batch.is_empty() {
                // The events queued since the last frame, one update per changed cell.
                for event in batch.take() {
                    self.session.dispatch(Action::Backend(event));
                }
                drawn.events = received;
                dirty = true;
            }
            if dirty && (draw_now || frame_due) {
                let context = ViewContext {
                    theme: &self.theme,
                    keymap: &self.keymap,
                    ascii: self.ascii,
                };
                terminal.draw(|frame| views::render(frame, &self.session.state, &context))?;
                on_frame(&self.session.state, drawn);
                dirty = false;
                draw_now = false;
                last_frame = Some(Instant::now());
            }
            let frame_timer = async {
                if dirty || !batch.is_empty() {
                    tokio::time::sleep_until(due).await;
                } else {
                    std::future::pending::<()>().await;
                }
            };
            let next_signal = async {
                match signals.as_mut() {
                    Some(signals) => signals.next().await,
                    None => std::future::pending().await,
                }
            };
            let next_input = async {
                if inputs_open {
                    inputs.next().await
                } else {
                    std::future::pending().await
                }
            };
            tokio::select! {
                biased;
                event = next_input => {
                    let action = match event {
                        Some(Ok(event)) => {
                            keys::action_in(event, self.session.state.key_context(), &self.keymap)
                        }
                        Some(Err(err)) => {
                            tracing::error!("terminal input failed: {err}");
                            Some(Action::Terminate)
                        }
                        None => {
                            inputs_open = false;
                            None
                        }
                    };
                    drawn.inputs += 1;
                    if let Some(action) = action {
                        self.session.dispatch(action);
                        dirty = true;
                        draw_now = true;
                    }
                    if let Some(text) = self.session.state.clipboard.take()
                        && let Some(copy) = self.clipboard.as_mut()
                        && let Err(err) = copy(&text)
                    {
                        tracing::warn!("the copy could not be written to the terminal: {err}");
                    }
                    if let Some(handoff) = self.session.state.handoff.take() {
                        let said = match self.handoff.as_mut() {
                            Some(exec) => {
                                let said = exec(handoff).await;
                                // Whatever the session drew is gone: a frame no view draws
                                // (every cell hidden) makes the next one redraw every cell.
                                // (`clear` would ask the terminal for its cursor first.)
                                terminal.draw(|frame| {
                                    let area = frame.area();
                                    frame.buffer_mut().set_style(
                                        area,
                                        ratatui::style::Style::default()
                                            .add_modifier(ratatui::style::Modifier::HIDDEN),
                                    );
                                })?;
                                said
                            }
                            None => "exec needs a terminal to hand over; none here".into(),
                        };
                        self.session.dispatch(Action::ExecEnded(said));
                    }
                }
                signal = next_signal => {
                    if signal == "SIGHUP" && self.session.state.wall.is_some() {
                        // A wall display outlives the session that started it.
                        tracing::info!("received SIGHUP; the wall display keeps running");
                    } else {
                        tracing::info!("received {signal}; quitting");
                        ended_by = Some(signal);
                        self.session.dispatch(Action::Terminate);
                    }
                }
                event = self.events.recv(), if events_open => {
                    let Some(event) = event else {
                        // The backend has gone; the console stays up on what it last said.
                        events_open = false;
                        continue;
                    };
                    batch.push(event);
                    received += 1;
                    let taking = Instant::now();
                    while taking.elapsed() < EVENT_BUDGET {
                        let Ok(event) = self.events.try_recv() else {
                            break;
                        };
                        batch.push(event);
                        received += 1;
                    }
                }
                _ = clock.tick() => {
                    let now_ms = started.elapsed().as_millis() as u64;
                    let unix_ms = SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .ok()
                        .and_then(|since| u64::try_from(since.as_millis()).ok());
                    // The wall shows time, a rollout may pass its gate's hold on a tick, and
                    // the detail may say how long ago a deadline passed; otherwise the console
                    // redraws only on change.
                    let state = &self.session.state;
                    if state.wall.is_some() || state.rollout.is_some() || state.shows_a_time() {
                        dirty = true;
                    }
                    self.session.dispatch(Action::Tick { now_ms, unix_ms });
                }
                () = frame_timer => {}
            }
        }
        if let Some((error, input)) = self.session.state.start_failed.take() {
            return Ok(Ended::StartFailed { error, input });
        }
        Ok(ended_by.map_or(Ended::Quit, Ended::Signal))
    }
}
