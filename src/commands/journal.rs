//! The edit journal: the last edits the editing commands (`placement set`, `override add` and
//! `remove`, `ocm-placement set`) wrote to each fleet, kept in flotilla's
//! state directory (`paths::edit_journal`) so `flotilla undo` can take the latest back. Each
//! entry holds what was there before and exactly what flotilla left there, so an undo can tell
//! whether someone changed it since. It only stores and loads entries: it must not decide
//! whether an undo may go ahead, nor write a fleet file or a hub.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Entries kept per journal, oldest dropped first.
const KEPT: usize = 50;

/// One edit flotilla wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Which fleet: the fleet directory's absolute path, or `hub:CONTEXT`.
    pub fleet: String,
    /// When it was written (RFC 3339, UTC).
    pub at: String,
    /// What wrote it, e.g. `placement set`.
    pub command: String,
    /// The edited document, e.g. `PropagationPolicy shop/web`.
    pub title: String,
    /// The resource the edit was made for, `KIND/NS/NAME`.
    pub resource: String,
    pub change: Change,
}

/// What changed, in a form that can be put back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Change {
    /// A fleet file's whole text before and after.
    #[serde(rename_all = "camelCase")]
    File {
        path: String,
        before: String,
        after: String,
    },
    /// A policy or Federated object on a Karmada or KubeFed hub, as the hub held it before
    /// and right after the write (in the form the hub's fleet is read in).
    #[serde(rename_all = "camelCase")]
    HubObject {
        /// The hub fleet's "file" of the object, `hub:CONTEXT/Kind/namespace/name`.
        file: String,
        before: Value,
        after: Value,
    },
    /// An OCM Placement's object before and right after the write.
    #[serde(rename_all = "camelCase")]
    OcmPlacement {
        namespace: String,
        name: String,
        before: Value,
        after: Value,
    },
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Journal {
    entries: Vec<Entry>,
}

fn journal_path() -> Result<PathBuf, String> {
    crate::paths::edit_journal()
        .ok_or_else(|| "no $XDG_STATE_HOME or $HOME to keep the edit journal in".to_string())
}

fn load(path: &Path) -> Result<Journal, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|err| {
            format!(
                "{}: the edit journal cannot be read ({err}); move it away to start a new one",
                path.display()
            )
        }),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Journal::default()),
        Err(err) => Err(format!("{}: {err}", path.display())),
    }
}

fn store(path: &Path, journal: &Journal) -> Result<(), String> {
    let fail = |err: std::io::Error| format!("{}: {err}", path.display());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let text = serde_json::to_string_pretty(journal).map_err(|err| err.to_string())?;
    let temp = path.with_extension(format!("json.tmp-{}", std::process::id()));
    std::fs::write(&temp, text).map_err(fail)?;
    std::fs::rename(&temp, path).map_err(|err| {
        let _ = std::fs::remove_file(&temp);
        fail(err)
    })
}

/// Adds an entry (the write it describes already happened).
pub fn record(entry: Entry) -> Result<(), String> {
    let path = journal_path()?;
    let mut journal = load(&path)?;
    journal.entries.push(entry);
    let excess = journal.entries.len().saturating_sub(KEPT);
    journal.entries.drain(..excess);
    store(&path, &journal)
}

/// Records an entry, and on failure warns on stderr that it cannot be undone.
pub fn record_or_warn(entry: Entry) {
    if let Err(err) = record(entry) {
        eprintln!("warning: the edit was written but cannot be undone with `flotilla undo`: {err}");
    }
}

/// The latest entry for `fleet`, if any.
pub fn latest(fleet: &str) -> Result<Option<Entry>, String> {
    let journal = load(&journal_path()?)?;
    Ok(journal
        .entries
        .iter()
        .rev()
        .find(|e| e.fleet == fleet)
        .cloned())
}

/// Drops `entry` (the latest for its fleet, after it was undone).
pub fn forget(entry: &Entry) -> Result<(), String> {
    let path = journal_path()?;
    let mut journal = load(&path)?;
    if let Some(at) = journal.entries.iter().rposition(|e| e == entry) {
        journal.entries.remove(at);
    }
    store(&path, &journal)
}

/// The current time as the journal writes it.
pub fn now() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}
