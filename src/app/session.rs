//! One console session without a terminal: the state, the fleet and its files, and the
//! channel to the backend. It applies actions (`update`, then the engine work the state asks
//! for, then the effects), and saves confirmed fleet edits before handing the backend the new
//! fleet. The terminal loop and headless tests drive it the same way. It must not draw.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::action::Action;
use super::state::State;
use super::state::{FleetEdit, FleetSave, FleetWrite};
use super::update::update;
use crate::backend::audit;
use crate::backend::{CellRef, Effect, SharedFleet};
use crate::engine::edit::yaml_text;
use crate::engine::{Fleet, SourceFile, load_fleet};
use crate::fleet_edit;

pub struct Session {
    pub state: State,
    /// Where effects go; `None` for a read-only backend, which has no way to receive them.
    pub effects: Option<mpsc::UnboundedSender<Effect>>,
    /// Where confirmed edits go.
    pub store: Store,
}

/// Where a session's fleet lives, and so where a confirmed edit is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// A fleet directory: files are rewritten (with a backup) and the audit log records it.
    Directory,
    /// In memory only (the demo).
    Memory,
    /// A federation hub: the edited policy is written to the hub by the backend, whose
    /// controllers propagate it; the texts are kept in memory and the audit log records it.
    Hub,
}

impl Session {
    /// A session on `state` (made for the fleet) with the texts the fleet was loaded from.
    pub fn new(
        mut state: State,
        files: Vec<SourceFile>,
        effects: Option<mpsc::UnboundedSender<Effect>>,
        store: Store,
    ) -> Session {
        state.files = Arc::new(files);
        Session {
            state,
            effects,
            store,
        }
    }

    /// Applies one action: `update`, then its effects, then the fleet edits it confirmed.
    pub fn dispatch(&mut self, action: Action) {
        let effects = self.step(action);
        self.run_effects(effects);
        self.write_edits();
    }

    /// Writes the confirmed edits `update` left in the state, in order: each is saved (to
    /// disk, or in memory for the demo), the fleet reloads, and the backend gets the new
    /// fleet and the cells to propagate.
    pub fn write_edits(&mut self) {
        for edit in std::mem::take(&mut self.state.edits) {
            match edit {
                FleetEdit::Document {
                    save,
                    cells,
                    delete,
                } => self.save_and_apply(save, cells, delete),
                FleetEdit::Files(write) => self.write_fleet(write),
            }
        }
    }

    /// `update`; the effects are returned, not run.
    pub fn step(&mut self, action: Action) -> Vec<Effect> {
        update(&mut self.state, action)
    }

    /// Runs effects as the console does: hub writes are recorded in the audit log, and
    /// every effect is sent to the backend.
    pub fn run_effects(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            let effect = match effect {
                Effect::WritePlacement {
                    namespace,
                    name,
                    patch,
                    expect,
                } => {
                    let mut entry = audit::Entry::new("hub-placement");
                    entry.objects = vec![format!("Placement/{namespace}/{name}")];
                    entry.clusters = expect.clone();
                    audit::record_or_warn(&entry);
                    Effect::WritePlacement {
                        namespace,
                        name,
                        patch,
                        expect,
                    }
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
        let Some(index) = self
            .state
            .files
            .iter()
            .position(|file| file.path == save.file)
        else {
            self.refuse(format!("{} is not one of the fleet's files", save.file));
            return;
        };
        let saved = if self.store == Store::Directory {
            let path = std::path::Path::new(&save.file);
            fleet_edit::replace_or_append_document(path, save.document, &save.object)
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
            yaml_text::replace_or_append(
                &save.file,
                &self.state.files[index].text,
                save.document,
                &save.object,
            )
            .map(|edited| {
                let place = match self.store {
                    Store::Hub => String::new(),
                    _ => " (in memory: the demo)".into(),
                };
                (edited.text, edited.warnings, place)
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
        Arc::make_mut(&mut self.state.files)[index].text = text;
        let Some(fleet) = self.reload_after_save() else {
            return;
        };
        if self.store != Store::Memory {
            let action = match self.store {
                Store::Hub => "hub-apply",
                _ => "save-placement",
            };
            let mut entry = audit::Entry::new(action);
            entry.objects = vec![save.title.clone()];
            entry.files = vec![save.file.clone()];
            audit::record_or_warn(&entry);
        }
        if self.store == Store::Hub {
            self.write_to_hub(save, &cells, &fleet);
            return;
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

    /// Hands a saved policy to the hub's backend, with the engine's render of every cell it
    /// changes, so the backend can follow the hub until it rendered exactly that.
    fn write_to_hub(&mut self, save: FleetSave, cells: &[CellRef], fleet: &Fleet) {
        let expect: Vec<(CellRef, serde_json::Value)> = cells
            .iter()
            .filter_map(
                |cell| match fleet.decide(cell.resource as usize, cell.cluster as usize) {
                    crate::engine::Decision::Placed { object, .. } => Some((*cell, object)),
                    crate::engine::Decision::Suspended { .. }
                    | crate::engine::Decision::NotPlaced { .. } => None,
                },
            )
            .collect();
        self.state.notice = Some(format!(
            "writing {} to the hub; {} cell(s) will follow",
            save.title,
            expect.len()
        ));
        let effect = Effect::HubApply {
            object: save.object,
            title: save.title,
            expect,
        };
        match &self.effects {
            Some(effects) if effects.send(effect).is_ok() => {}
            _ => self.refuse("read-only: the hub was not written".into()),
        }
    }

    /// Writes whole fleet files (to disk, or in memory for the demo), reloads the fleet, hands
    /// it to the backend and propagates the cells. Refused when a file changed since the
    /// change was prepared; nothing reaches a cluster when a write fails.
    fn write_fleet(&mut self, write: FleetWrite) {
        for file in &write.files {
            let current = self.state.files.iter().find(|f| f.path == file.path);
            let unchanged = match (current, &file.old) {
                (Some(current), Some(old)) => current.text == *old,
                (None, None) => true,
                _ => false,
            };
            if !unchanged {
                self.refuse(format!(
                    "{} changed since the change was prepared",
                    file.path
                ));
                return;
            }
        }
        let mut written = Vec::new();
        for file in &write.files {
            if self.store == Store::Directory {
                let path = std::path::Path::new(&file.path);
                if let Err(error) = fleet_edit::write_text(path, file.old.as_deref(), &file.new) {
                    tracing::warn!("not saved: {error}");
                    self.state.notice = Some(if written.is_empty() {
                        format!("not saved: {error}; nothing was written")
                    } else {
                        format!(
                            "not saved: {error}; already written: {}; nothing was propagated",
                            written.join(", ")
                        )
                    });
                    return;
                }
            }
            let files = Arc::make_mut(&mut self.state.files);
            match files.iter().position(|f| f.path == file.path) {
                Some(index) => files[index].text = file.new.clone(),
                None => files.push(SourceFile {
                    path: file.path.clone(),
                    text: file.new.clone(),
                }),
            }
            written.push(file.path.clone());
        }
        let Some(fleet) = self.reload_after_save() else {
            return;
        };
        if self.store == Store::Directory {
            let mut entry = audit::Entry::new(&write.action);
            entry.clusters = write.clusters.clone();
            entry.objects = write.objects.clone();
            entry.paths = write.paths.clone();
            entry.files = written.clone();
            audit::record_or_warn(&entry);
        }
        let place = if self.store == Store::Directory {
            ""
        } else {
            " (in memory: the demo)"
        };
        let mut notice = format!("{}: saved {}{place}", write.title, written.join(", "));
        if !write.apply.is_empty() {
            notice.push_str(&format!("; propagating {} object(s)", write.apply.len()));
        }
        self.state.notice = Some(notice);
        let mut follow = vec![Effect::UseFleet(SharedFleet(fleet))];
        if !write.apply.is_empty() {
            follow.push(Effect::Apply { cells: write.apply });
        }
        for effect in follow {
            match &self.effects {
                Some(effects) if effects.send(effect).is_ok() => {}
                _ => tracing::warn!("the backend cannot take the saved fleet's effects"),
            }
        }
    }
    /// Loads the fleet again from the saved files and hands it to the state, which derives
    /// what depends on it; `None` (with a notice) when the saved files no longer load.
    fn reload_after_save(&mut self) -> Option<Arc<Fleet>> {
        let (fleet, errors) = load_fleet(&self.state.files);
        if let Some(error) = errors.first() {
            self.refuse(format!("saved, but the fleet no longer loads: {error}"));
            return None;
        }
        let fleet = Arc::new(fleet);
        update(
            &mut self.state,
            Action::FleetSaved(SharedFleet(fleet.clone())),
        );
        Some(fleet)
    }

    /// A save that did not happen: say so, and forget the undo it would have offered.
    fn refuse(&mut self, message: String) {
        tracing::warn!("{message}");
        self.state.notice = Some(format!("{message}; nothing was written"));
        self.state.last_change = None;
    }
}
