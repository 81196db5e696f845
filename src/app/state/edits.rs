//! Confirmed edits of the fleet's own files, as `update` leaves them for the session to
//! write: one edited document (a placement or override edit, or its undo), or whole files
//! (adopting drift, adding or removing an ignore rule), each with the cells to propagate once
//! the fleet reloads; and what the write did ([`Saved`]), which the session hands back to
//! `update`. Plain data: it must not write files or know the backends.

use crate::engine::SourceFile;
use crate::messages::CellRef;

/// An edit waiting to be written.
#[derive(Debug, Clone, PartialEq)]
pub enum FleetEdit {
    /// Save an edited fleet document, then propagate these cells of the edited fleet.
    Document {
        save: FleetSave,
        cells: Vec<CellRef>,
        /// Objects to delete afterwards (an undo removing what the change created); only
        /// ever set from a confirmation that listed them.
        delete: Vec<CellRef>,
    },
    /// Save these fleet files, then propagate.
    Files(FleetWrite),
}

/// Whole fleet files to write (their previous text, to refuse when the file changed on disk
/// meanwhile, and the new one), then cells to propagate: what adopting drift, adding an
/// ignore rule or removing one saves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetWrite {
    /// e.g. `adopt /spec/replicas of Deployment/shop/inventory on prod-us-east-2`.
    pub title: String,
    /// The audit log's action, e.g. `console-adopt`.
    pub action: String,
    pub files: Vec<FileText>,
    /// Cells propagated once the files are saved and the fleet reloads.
    pub apply: Vec<CellRef>,
    /// For the audit log: clusters, objects and paths concerned.
    pub clusters: Vec<String>,
    pub objects: Vec<String>,
    pub paths: Vec<String>,
}

/// One file's new text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileText {
    pub path: String,
    /// The text before; `None` for a new file.
    pub old: Option<String>,
    pub new: String,
}

/// A fleet document to write back, replacing the document at `document` in `file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetSave {
    pub file: String,
    pub document: usize,
    pub object: serde_json::Value,
    /// e.g. `PropagationPolicy shop/web`, for notices and the audit log.
    pub title: String,
    /// The editor to reopen when the document changed on disk under the edit.
    pub reopen: Option<Reopen>,
}

/// An editor the console can reopen on the fleet as it is on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reopen {
    Placement,
    Overrides,
}

/// The fleet's file changed on disk under a confirmed edit: nothing was written. What changed,
/// and the file's text now, which the operator may reload and edit again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetChanged {
    pub file: String,
    /// The document concerned, e.g. `PropagationPolicy shop/web`.
    pub title: String,
    /// Why the write was refused, in a sentence.
    pub reason: String,
    /// What changed on disk in that document, as diff lines.
    pub lines: Vec<String>,
    /// The file's text on disk now (`None`: it is gone or unreadable).
    pub disk: Option<String>,
    /// The editor to reopen on it.
    pub reopen: Option<Reopen>,
}

/// What the session's write of a confirmed edit did, handed back to `update`, which takes
/// the new texts, reloads the fleet from them and says what follows.
#[derive(Debug, Clone, PartialEq)]
pub enum Saved {
    /// The files now hold these texts (on disk, or in memory for the demo and a hub).
    Written {
        files: Vec<SourceFile>,
        notice: String,
        then: AfterSave,
    },
    /// Nothing (more) was written; the notice says why. `files` are any written before the
    /// failure.
    NotWritten {
        files: Vec<SourceFile>,
        notice: String,
    },
    /// Nothing was written: the file changed on disk under the edit.
    Changed(FleetChanged),
}

/// What follows a written edit once the fleet reloads.
#[derive(Debug, Clone, PartialEq)]
pub enum AfterSave {
    /// The backend works from the new fleet and propagates (and deletes) these cells.
    Propagate {
        apply: Vec<CellRef>,
        delete: Vec<CellRef>,
    },
    /// The hub's backend writes the edited policy and follows the hub until it rendered the
    /// engine's objects for these cells.
    WriteToHub {
        object: serde_json::Value,
        /// The object as the edit was computed from it; `None` when the edit creates it.
        base: Option<serde_json::Value>,
        title: String,
        cells: Vec<CellRef>,
    },
}
