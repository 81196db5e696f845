//! The console app: one owner of state. Terminal keys, backend events and signals become
//! [`Action`]s, `update` applies them and returns effects for the backend, and after draining
//! whatever is queued the screen is drawn once, at most at a capped frame rate.
//! It must not draw outside `views` or talk to clusters outside `backend`.

pub mod action;
pub mod editor;
pub mod filter;
pub mod palette;
pub mod state;
pub mod update;

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{Event, EventStream, KeyCode, KeyEventKind, KeyModifiers};
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::backend::{BackendEvent, CellRef, Effect, FleetSave, SharedFleet};
use crate::config::keymap::Keymap;
use crate::config::theme::Theme;
use crate::engine::{Fleet, SourceFile, load_fleet, yaml_edit};
use crate::terminal::TerminalGuard;
use crate::views::{self, ViewContext};
use crate::{audit, fleet_edit};
pub use action::Action;
use state::{ClusterRow, ResourceRow, State};
pub use update::update;

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

/// Everything the console loop needs.
pub struct Console {
    pub state: State,
    pub theme: Theme,
    pub keymap: Keymap,
    pub ascii: bool,
    pub events: mpsc::UnboundedReceiver<BackendEvent>,
    /// Where effects go; `None` for a read-only backend, which has no way to receive them.
    pub effects: Option<mpsc::UnboundedSender<Effect>>,
    /// Kept so the fleet outlives the backend tasks that borrow it.
    pub fleet: Arc<Fleet>,
    /// The texts the fleet was loaded from, for the editors.
    pub files: Vec<SourceFile>,
    /// Whether edits are written to the fleet directory; the demo's files live in memory.
    pub persist: bool,
}

impl Console {
    /// Runs until the operator quits or a signal arrives; the terminal is restored on return.
    pub async fn run(mut self) -> anyhow::Result<()> {
        let mut guard = TerminalGuard::enter()?;
        self.explain_selection();
        let mut terminal_events = EventStream::new();
        let mut signals = Signals::new()?;
        if let Ok(size) = guard.terminal().size() {
            update(
                &mut self.state,
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
            if self.state.should_quit {
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
                    .draw(|frame| views::render(frame, &self.state, &context))?;
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
                    if signal == "SIGHUP" && self.state.wall.is_some() {
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
                    if self.state.wall.is_some() {
                        dirty = true;
                    }
                    Some(Action::Tick { now_ms })
                }
                () = frame_timer => None,
            };
            if let Some(action) = action {
                let is_tick = matches!(action, Action::Tick { .. });
                self.dispatch(action);
                dirty |= !is_tick;
            }
            // Drain whatever else is queued before drawing once.
            let mut drained = 0;
            while drained < MAX_EVENTS_PER_FRAME {
                let Ok(event) = self.events.try_recv() else {
                    break;
                };
                self.dispatch(Action::Backend(event));
                drained += 1;
                dirty = true;
            }
        }
        drop(guard);
        Ok(())
    }

    fn dispatch(&mut self, action: Action) {
        let effects = update(&mut self.state, action);
        self.explain_selection();
        editor::refresh(&mut self.state, &self.fleet, &self.files);
        for effect in effects {
            let effect = match effect {
                Effect::SaveAndApply {
                    save,
                    cells,
                    delete,
                } => {
                    self.save_and_apply(save, cells, delete);
                    continue;
                }
                other => other,
            };
            match &self.effects {
                Some(effects) => {
                    if effects.send(effect).is_err() {
                        tracing::warn!("the backend has stopped; effect dropped");
                    }
                }
                None => tracing::warn!("read-only: effect {effect:?} refused"),
            }
        }
    }

    /// Saves an edited fleet document (to disk, or in memory for the demo), reloads the fleet,
    /// hands it to the backend and propagates the cells. Nothing reaches a cluster when the
    /// save fails.
    fn save_and_apply(&mut self, save: FleetSave, cells: Vec<CellRef>, delete: Vec<CellRef>) {
        let Some(index) = self.files.iter().position(|file| file.path == save.file) else {
            self.refuse(format!("{} is not one of the fleet's files", save.file));
            return;
        };
        let saved = if self.persist {
            let path = std::path::Path::new(&save.file);
            fleet_edit::replace_document(path, save.document, &save.object)
                .map_err(|err| err.to_string())
                .and_then(|saved| {
                    let text = std::fs::read_to_string(path)
                        .map_err(|err| format!("{}: {err}", save.file))?;
                    let backup = saved
                        .backup
                        .map(|backup| format!(" (previous version in {})", backup.display()))
                        .unwrap_or_default();
                    Ok((text, saved.warnings, backup))
                })
        } else {
            yaml_edit::replace_document(
                &save.file,
                &self.files[index].text,
                save.document,
                &save.object,
            )
            .map(|edited| {
                (
                    edited.text,
                    edited.warnings,
                    " (in memory: the demo)".into(),
                )
            })
            .map_err(|err| err.to_string())
        };
        let (text, warnings, backup) = match saved {
            Ok(saved) => saved,
            Err(error) => {
                self.refuse(format!("not saved: {error}"));
                return;
            }
        };
        self.files[index].text = text;
        let (fleet, errors) = load_fleet(&self.files);
        if let Some(error) = errors.first() {
            self.refuse(format!("saved, but the fleet no longer loads: {error}"));
            return;
        }
        let fleet = Arc::new(fleet);
        self.fleet = fleet.clone();
        for (row, resource) in self.state.resources.iter_mut().enumerate() {
            resource.placement = fleet.placement_summary(row);
        }
        self.state.explanation = None;
        self.explain_selection();
        if self.persist {
            let mut entry = audit::Entry::new("save-placement");
            entry.objects = vec![save.title.clone()];
            entry.files = vec![save.file.clone()];
            audit::record_or_warn(&entry);
        }
        let mut notice = format!("saved {} to {}{backup}", save.title, save.file);
        if !cells.is_empty() || !delete.is_empty() {
            notice.push_str(&format!(
                "; propagating {} object(s){}",
                cells.len(),
                if delete.is_empty() {
                    String::new()
                } else {
                    format!(", deleting {}", delete.len())
                }
            ));
        }
        if let Some(warning) = warnings.first() {
            notice.push_str(&format!(" — {warning}"));
        }
        self.state.notice = Some(notice);
        let mut follow = vec![Effect::UseFleet(SharedFleet(fleet))];
        if !cells.is_empty() {
            follow.push(Effect::Apply { cells });
        }
        if !delete.is_empty() {
            follow.push(Effect::Delete { cells: delete });
        }
        for effect in follow {
            match &self.effects {
                Some(effects) if effects.send(effect).is_ok() => {}
                _ => tracing::warn!("the backend cannot take the saved fleet's effects"),
            }
        }
    }

    /// A save that did not happen: say so, and forget the undo it would have offered.
    fn refuse(&mut self, message: String) {
        tracing::warn!("{message}");
        self.state.notice = Some(format!("{message}; nothing was written"));
        self.state.last_change = None;
    }

    /// Keeps the engine's explanation of the selected cell current. The engine is pure and
    /// fast, so this runs in the loop rather than as a backend effect.
    fn explain_selection(&mut self) {
        let Some((resource, cluster)) = self.state.selected_cell() else {
            self.state.explanation = None;
            return;
        };
        let current = self
            .state
            .explanation
            .as_ref()
            .is_some_and(|e| e.resource == resource && e.cluster == cluster);
        if !current {
            let explanation = self.fleet.explain(resource, cluster);
            self.state.explanation = Some(state::CellExplanation {
                resource,
                cluster,
                placed: explanation.placed,
                reason: explanation.reason,
                steps: explanation.steps,
                object_yaml: None,
            });
        }
        let drilled_in = matches!(self.state.mode, state::Mode::Object { .. });
        if let Some(explanation) = self.state.explanation.as_mut()
            && drilled_in
            && explanation.object_yaml.is_none()
        {
            explanation.object_yaml = Some(match self.fleet.decide(resource, cluster) {
                crate::engine::Decision::Placed { object, .. } => serde_saphyr::to_string(&object)
                    .unwrap_or_else(|err| format!("# cannot show the object as YAML: {err}")),
                crate::engine::Decision::NotPlaced { reason } => {
                    format!("# not placed on this cluster: {reason}")
                }
            });
        }
    }

    fn action_for(&self, event: Event) -> Option<Action> {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => {
                let ctrl_c =
                    key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
                if ctrl_c {
                    Some(Action::Terminate)
                } else if update::is_typing(&self.state) {
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
