//! The console app: one owner of state. Terminal keys, backend events and signals become
//! [`Action`]s, `update` applies them and returns effects for the backend, and after draining
//! whatever is queued the screen is drawn once, at most at a capped frame rate.
//! It must not draw outside `views` or talk to clusters outside `backend`.

pub mod action;
pub mod drift;
pub mod editor;
pub mod filter;
pub mod ocm_placement;
pub mod overrides;
pub mod palette;
pub mod rollout;
pub mod session;
pub mod state;
pub mod update;

use std::time::Duration;

use crossterm::event::{Event, EventStream, KeyCode, KeyEventKind, KeyModifiers};
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::backend::BackendEvent;
use crate::config::keymap::Keymap;
use crate::config::theme::Theme;
use crate::engine::Fleet;
use crate::terminal::TerminalGuard;
use crate::views::{self, ViewContext};
pub use action::Action;
pub use session::Session;
use state::{ClusterRow, ResourceRow, State};
pub use update::update;

/// Why an editor cannot open on a row the hub gained after the console loaded its fleet.
const NEW_SINCE_START: &str =
    "this row is new on the hub since the console started: reopen the console to edit it";

/// How often the app clock ticks (ages, staleness, wall paging).
const TICK_INTERVAL: Duration = Duration::from_secs(1);

/// Frames are drawn at most this often; bursts of events between them coalesce into one frame.
const FRAME_INTERVAL: Duration = Duration::from_millis(33);

/// Backend events handled before a frame is drawn, so a flood cannot starve the keyboard.
const MAX_EVENTS_PER_FRAME: usize = 4096;

/// The initial state for a fleet: its clusters (health unknown until probed) and resources.
pub fn state_for_fleet(fleet: &Fleet, source: String) -> State {
    let clusters = fleet
        .clusters
        .iter()
        .map(|spec| ClusterRow {
            spec: spec.clone(),
            status: Default::default(),
            last_seen_ms: None,
        })
        .collect();
    let resources = fleet
        .resources
        .iter()
        .enumerate()
        .map(|(index, resource)| ResourceRow {
            target: resource.target.clone(),
            dialect: resource.dialect,
            placement: fleet.placement_summary(index),
            labels: None,
        })
        .collect();
    let mut state = State::new(source, clusters, resources);
    // A large fleet does not fit one column per cluster: start with one heat strip per region.
    if state.clusters.len() > LARGE_FLEET {
        state.group_by = Some("region".into());
        state.collapsed = true;
        state.refresh_views();
        state.cluster_view.cursor = 0;
    }
    state
}

/// Clusters beyond which the matrix starts collapsed into heat strips.
const LARGE_FLEET: usize = 200;

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
    pub async fn run(mut self) -> anyhow::Result<()> {
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
                    Some(Ok(event)) => self.action_for(event),
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
        Ok(())
    }

    fn action_for(&self, event: Event) -> Option<Action> {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => {
                let ctrl_c =
                    key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
                if ctrl_c {
                    Some(Action::Terminate)
                } else if update::is_typing(&self.session.state) {
                    action::InputKey::from_event(key).map(Action::Input)
                } else {
                    self.keymap.command_for(key).map(Action::Command)
                }
            }
            Event::Resize(width, height) => Some(Action::Resize { width, height }),
            _ => None,
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP as one stream: each ends the console cleanly.
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.interrupt.recv() => "SIGINT",
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.hangup.recv() => "SIGHUP",
        }
    }
}
