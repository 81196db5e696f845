//! One console session without a terminal: the state (which owns the fleet and its files)
//! and the channel to the backend. It applies actions (`update`, then the effects it
//! returns; a fleet it hands the backend also judges health with its own Karmada
//! interpreters from then on), and writes the fleet edits `update` confirmed, handing what each write did back
//! to `update` as an action. The terminal loop and headless tests drive it the same way. It
//! must not draw, nor change the state other than through `update`.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::action::Action;
use super::state::State;
use super::state::{AfterSave, FleetChanged, FleetEdit, FleetSave, FleetWrite, Saved};
use super::update::update;
use crate::backend::audit;
use crate::engine::SourceFile;
use crate::engine::edit::yaml_text;
use crate::fleet::save;
use crate::messages::{CellRef, Effect};

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

/// Why a save was refused: the fleet changed on disk under the edit, or anything else.
enum Refusal {
    Changed(FleetChanged),
    Plain(String),
}

impl Session {
    /// What a refused save tells the operator: a conflict with an outside change says what
    /// changed on disk and carries the file's text now, to reload from.
    fn refusal_of(
        &self,
        file: &str,
        reopen: Option<super::state::Reopen>,
        err: save::SaveError,
    ) -> Refusal {
        if !err.is_conflict() {
            return Refusal::Plain(err.to_string());
        }
        let disk = std::fs::read_to_string(file).ok();
        let (title, lines) = match &err {
            save::SaveError::Changed(conflict) => {
                (conflict.title().to_string(), conflict.what_changed())
            }
            _ => (file.to_string(), Vec::new()),
        };
        Refusal::Changed(FleetChanged {
            file: file.to_string(),
            title,
            reason: err.to_string(),
            lines,
            disk,
            reopen,
        })
    }

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

    /// Writes the confirmed edits `update` left in the state, in order, and hands what each
    /// write did back to `update` (which reloads the fleet from the new texts), running the
    /// effects that follow: the backend gets the new fleet and the cells to propagate.
    pub fn write_edits(&mut self) {
        for edit in std::mem::take(&mut self.state.edits) {
            let saved = match edit {
                FleetEdit::Document {
                    save,
                    cells,
                    delete,
                } => self.save_document(save, cells, delete),
                FleetEdit::Files(write) => self.write_files(write),
            };
            let effects = update(&mut self.state, Action::Saved(saved));
            self.run_effects(effects);
        }
    }

    /// `update`; the effects are returned, not run.
    pub fn step(&mut self, action: Action) -> Vec<Effect> {
        update(&mut self.state, action)
    }

    /// Runs effects as the console does: hub writes are recorded in the audit log, a fleet
    /// the backend is to work from (loaded again after an edit) judges health with its own
    /// Karmada interpreters from then on, and every effect is sent to the backend.
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
                Effect::UseFleet(fleet) => {
                    crate::engine::fleet::interpreted::use_for_health(&fleet.0);
                    Effect::UseFleet(fleet)
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

    /// Saves an edited fleet document (to disk, or in memory for the demo and a hub, whose
    /// backend then writes the policy). Nothing reaches a cluster when the save fails.
    fn save_document(&self, save: FleetSave, cells: Vec<CellRef>, delete: Vec<CellRef>) -> Saved {
        let refused = |reason: String| Saved::NotWritten {
            files: Vec::new(),
            notice: format!("{reason}; nothing was written"),
        };
        if self.store == Store::Hub && self.effects.is_none() {
            return refused("read-only: the hub was not written".into());
        }
        let Some(current) = self.state.files.iter().find(|file| file.path == save.file) else {
            return refused(format!("{} is not one of the fleet's files", save.file));
        };
        let saved = if self.store == Store::Directory {
            // The edit is computed from the text the editor's preview was made from, then put
            // into the file as it is now: a document someone changed meanwhile refuses it.
            let path = std::path::Path::new(&save.file);
            save::document_edit(path, Some(&current.text), save.document, &save.object)
                .and_then(|edited| {
                    let saved = save::commit_one(
                        save::FileEdit {
                            path,
                            base: Some(&current.text),
                            new: &edited.text,
                        },
                        None,
                    )?;
                    let backup = saved
                        .backup
                        .map(|backup| format!(" (previous version in {})", backup.display()))
                        .unwrap_or_default();
                    Ok((saved.text, edited.warnings, backup))
                })
                .map_err(|err| self.refusal_of(&save.file, save.reopen, err))
        } else {
            yaml_text::replace_or_append(&save.file, &current.text, save.document, &save.object)
                .map(|edited| {
                    let place = match self.store {
                        Store::Hub => String::new(),
                        _ => " (in memory: the demo)".into(),
                    };
                    (edited.text, edited.warnings, place)
                })
                .map_err(|err| Refusal::Plain(err.to_string()))
        };
        let (text, warnings, backup) = match saved {
            Ok(saved) => saved,
            Err(Refusal::Plain(error)) => return refused(format!("not saved: {error}")),
            Err(Refusal::Changed(changed)) => return Saved::Changed(changed),
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
        let files = vec![SourceFile {
            path: save.file.clone(),
            text,
        }];
        if self.store == Store::Hub {
            return Saved::Written {
                files,
                notice: String::new(),
                then: AfterSave::WriteToHub {
                    base: crate::engine::document::parse::parse_files(std::slice::from_ref(
                        current,
                    ))
                    .0
                    .into_iter()
                    .find(|doc| doc.index == save.document)
                    .map(crate::engine::document::parse::Doc::into_value),
                    object: save.object,
                    title: save.title,
                    cells,
                },
            };
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
        Saved::Written {
            files,
            notice,
            then: AfterSave::Propagate {
                apply: cells,
                delete,
            },
        }
    }

    /// Writes whole fleet files (to disk, or in memory for the demo). Refused when a file
    /// changed since the change was prepared; nothing reaches a cluster when a write fails.
    fn write_files(&self, write: FleetWrite) -> Saved {
        for file in &write.files {
            let current = self.state.files.iter().find(|f| f.path == file.path);
            let unchanged = match (current, &file.old) {
                (Some(current), Some(old)) => current.text == *old,
                (None, None) => true,
                _ => false,
            };
            if !unchanged {
                return Saved::NotWritten {
                    files: Vec::new(),
                    notice: format!(
                        "{} changed since the change was prepared; nothing was written",
                        file.path
                    ),
                };
            }
        }
        let written: Vec<SourceFile> = if self.store == Store::Directory {
            let edits: Vec<save::FileEdit<'_>> = write
                .files
                .iter()
                .map(|file| save::FileEdit {
                    path: std::path::Path::new(&file.path),
                    base: file.old.as_deref(),
                    new: &file.new,
                })
                .collect();
            match save::commit(&edits, None) {
                Ok(done) => write
                    .files
                    .iter()
                    .zip(done)
                    .map(|(file, done)| SourceFile {
                        path: file.path.clone(),
                        text: done.text,
                    })
                    .collect(),
                Err(err) => {
                    let file = write
                        .files
                        .first()
                        .map(|f| f.path.clone())
                        .unwrap_or_default();
                    return match self.refusal_of(&file, None, err) {
                        Refusal::Changed(changed) => Saved::Changed(changed),
                        Refusal::Plain(error) => Saved::NotWritten {
                            files: Vec::new(),
                            notice: format!("not saved: {error}; nothing was written"),
                        },
                    };
                }
            }
        } else {
            write
                .files
                .iter()
                .map(|file| SourceFile {
                    path: file.path.clone(),
                    text: file.new.clone(),
                })
                .collect()
        };
        let paths: Vec<String> = written.iter().map(|f| f.path.clone()).collect();
        if self.store == Store::Directory {
            let mut entry = audit::Entry::new(&write.action);
            entry.clusters = write.clusters.clone();
            entry.objects = write.objects.clone();
            entry.paths = write.paths.clone();
            entry.files = paths.clone();
            audit::record_or_warn(&entry);
        }
        let place = if self.store == Store::Directory {
            ""
        } else {
            " (in memory: the demo)"
        };
        let mut notice = format!("{}: saved {}{place}", write.title, paths.join(", "));
        if !write.apply.is_empty() {
            notice.push_str(&format!("; propagating {} object(s)", write.apply.len()));
        }
        Saved::Written {
            files: written,
            notice,
            then: AfterSave::Propagate {
                apply: write.apply,
                delete: Vec::new(),
            },
        }
    }
}
