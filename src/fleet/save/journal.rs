//! The edit journal: the last edits flotilla wrote to each fleet (placement and override
//! edits, drift repairs, OCM Placement edits), kept in flotilla's state directory
//! (`paths::edit_journal`, JSON Lines, 0600 in a 0700 directory) so `flotilla undo` can take
//! the latest back. A fleet file's entry holds each changed document before and after, not
//! the whole file, and is made durable before the file is replaced, so after a crash at any
//! instant the file is as before (the entry did not land, and undo passes over it) or as
//! after. An undone entry is marked by a line of its own; the file is compacted to the last
//! [`KEPT`] entries and at most [`MAX_BYTES`], streaming, one line in memory at a time. It only
//! stores and loads entries: it must not decide whether an undo may go ahead, nor write a
//! fleet file or a hub.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::edit::by_document::DocChange;
use crate::jsonl;

/// Entries kept, oldest dropped first.
pub const KEPT: usize = 50;
/// The journal is compacted when it grows past this size (the newest entry is always kept).
pub const MAX_BYTES: u64 = 8 * 1024 * 1024;

/// One edit flotilla wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Unique among entries: when, which process, which write.
    #[serde(default)]
    pub id: String,
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
    /// The documents of a fleet file that changed, each before and after.
    #[serde(rename_all = "camelCase")]
    Documents { path: String, docs: Vec<DocChange> },
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

/// Why the journal could not be read or written. The journal is flotilla's own state, not the
/// fleet: none of these means a fleet file was left unwritten.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JournalError {
    /// Neither `$XDG_STATE_HOME` nor `$HOME` is set.
    #[error("no $XDG_STATE_HOME or $HOME to keep the edit journal in")]
    NoStateDir,
    /// The journal's directory cannot be created, opened or locked.
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    /// The journal file cannot be read, appended to or compacted (the message names the file).
    #[error("{0}")]
    File(String),
    /// An entry cannot be encoded.
    #[error("{0}")]
    Encode(String),
    /// The line at an edit's offset is not an edit: the journal changed while it was read.
    #[error("{path}: not an edit")]
    NotAnEdit { path: String },
}

/// One line of the journal.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Line {
    Edit(Box<Entry>),
    /// The entry of this id was undone (or found never to have landed).
    Undone {
        id: String,
    },
}

fn journal_path() -> Result<PathBuf, JournalError> {
    crate::paths::edit_journal().ok_or(JournalError::NoStateDir)
}

/// A fresh entry id.
pub fn new_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = k8s_openapi::jiff::Timestamp::now().as_nanosecond();
    format!(
        "{nanos}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Adds an entry, durably (before the write it describes is made).
pub fn record(entry: &Entry) -> Result<(), JournalError> {
    let path = journal_path()?;
    record_at(&path, entry)
}

fn record_at(path: &Path, entry: &Entry) -> Result<(), JournalError> {
    let line = serde_json::to_string(&Line::Edit(Box::new(entry.clone())))
        .map_err(|err| JournalError::Encode(err.to_string()))?;
    let _lock = lock_journal(path)?;
    jsonl::append(path, &line).map_err(JournalError::File)?;
    compact_if_large(path)
}

/// Records an entry (a fresh id when it has none), and on failure warns on stderr that the
/// edit cannot be undone.
pub fn record_or_warn(mut entry: Entry) {
    if entry.id.is_empty() {
        entry.id = new_id();
    }
    if let Err(err) = record(&entry) {
        eprintln!("warning: the edit is written but cannot be undone with `flotilla undo`: {err}");
    }
}

/// Records that `entry` was undone: an undo does not take it back again.
pub fn forget(entry: &Entry) -> Result<(), JournalError> {
    let path = journal_path()?;
    let line = serde_json::to_string(&Line::Undone {
        id: entry.id.clone(),
    })
    .map_err(|err| JournalError::Encode(err.to_string()))?;
    let _lock = lock_journal(&path)?;
    jsonl::append(&path, &line).map_err(JournalError::File)
}

/// The entries for `fleet` that are not undone, newest first, each read only when asked for.
pub fn newest_first(
    fleet: &str,
) -> Result<impl Iterator<Item = Result<Entry, JournalError>>, JournalError> {
    let path = journal_path()?;
    let live = live_offsets(&path, |entry_fleet| entry_fleet == fleet)?;
    Ok(live.into_iter().rev().map(move |offset| {
        match jsonl::read_at::<Line>(&path, offset).map_err(JournalError::File)? {
            Line::Edit(entry) => Ok(*entry),
            Line::Undone { .. } => Err(JournalError::NotAnEdit {
                path: path.display().to_string(),
            }),
        }
    }))
}

/// A journal line without its change, which is all compaction and the newest-first walk
/// need: a line in memory holds no file text.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum Head {
    Edit(EntryHead),
    Undone { id: String },
}

#[derive(Deserialize)]
struct EntryHead {
    #[serde(default)]
    id: String,
    fleet: String,
}

/// Offsets of the edit lines whose fleet `wanted` accepts and that are not undone, oldest first.
fn live_offsets(path: &Path, wanted: impl Fn(&str) -> bool) -> Result<Vec<u64>, JournalError> {
    let read = jsonl::read::<Head>(path, |_| true).map_err(JournalError::File)?;
    if read.torn > 0 {
        tracing::warn!(
            "{}: {} torn or unreadable line(s) skipped",
            path.display(),
            read.torn
        );
    }
    let undone: std::collections::HashSet<&str> = read
        .lines
        .iter()
        .filter_map(|(_, head)| match head {
            Head::Undone { id } => Some(id.as_str()),
            Head::Edit(_) => None,
        })
        .collect();
    Ok(read
        .lines
        .iter()
        .filter_map(|(offset, head)| match head {
            Head::Edit(entry) if wanted(&entry.fleet) && !undone.contains(entry.id.as_str()) => {
                Some(*offset)
            }
            _ => None,
        })
        .collect())
}

/// Compacts the journal once it is larger than [`MAX_BYTES`] or holds more than twice
/// [`KEPT`] lines: the newest live entries are kept, at most [`KEPT`] and (beyond the newest)
/// at most [`MAX_BYTES`] / 2 of them. The caller holds [`lock_journal`].
fn compact_if_large(path: &Path) -> Result<(), JournalError> {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let lines = count_lines(path);
    if size <= MAX_BYTES && lines <= 2 * KEPT {
        return Ok(());
    }
    let live = live_offsets(path, |_| true)?;
    let mut ends: Vec<u64> = live.iter().skip(1).copied().collect();
    ends.push(size);
    let mut keep = Vec::new();
    let mut bytes = 0u64;
    for (offset, end) in live.iter().zip(ends).rev() {
        let len = end.saturating_sub(*offset);
        if !keep.is_empty() && (keep.len() >= KEPT || bytes + len > MAX_BYTES / 2) {
            break;
        }
        bytes += len;
        keep.push(*offset);
    }
    keep.reverse();
    jsonl::rewrite(path, &keep).map_err(JournalError::File)
}

fn count_lines(path: &Path) -> usize {
    use std::io::Read;
    let Ok(mut file) = std::fs::File::open(path) else {
        return 0;
    };
    let mut buffer = [0u8; 64 * 1024];
    let mut count = 0;
    while let Ok(read) = file.read(&mut buffer) {
        if read == 0 {
            break;
        }
        count += buffer[..read].iter().filter(|b| **b == b'\n').count();
    }
    count
}

/// Every change of the journal holds this lock: compaction replaces the journal file, so
/// the lock is on its directory, not on the file.
fn lock_journal(path: &Path) -> Result<std::fs::File, JournalError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    jsonl::make_private_dir(dir).map_err(JournalError::File)?;
    let io = |e: std::io::Error| JournalError::Io {
        path: dir.display().to_string(),
        message: e.to_string(),
    };
    let file = std::fs::File::open(dir).map_err(io)?;
    file.lock().map_err(io)?;
    Ok(file)
}

/// The current time as the journal writes it.
pub fn now() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn entry(n: usize, text: &str) -> Entry {
        Entry {
            id: format!("id-{n}"),
            fleet: "/f".into(),
            at: now(),
            command: "placement set".into(),
            title: format!("T {n}"),
            resource: "Deployment/shop/web".into(),
            change: Change::Documents {
                path: "/f/a.yaml".into(),
                docs: vec![DocChange {
                    before: Some(text.into()),
                    after: Some(format!("{text}!")),
                }],
            },
        }
    }

    #[test]
    fn the_journal_stays_bounded_by_count_and_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        for n in 0..130 {
            record_at(&path, &entry(n, "small")).unwrap();
        }
        let live = live_offsets(&path, |_| true).unwrap();
        assert!(live.len() <= 2 * KEPT, "{}", live.len());
        let newest: Line = jsonl::read_at(&path, *live.last().unwrap()).unwrap();
        assert!(matches!(newest, Line::Edit(e) if e.id == "id-129"));
        // Large entries: the size bound holds, the newest is always kept.
        let big = "x".repeat(3 * 1024 * 1024);
        for n in 200..205 {
            record_at(&path, &entry(n, &big)).unwrap();
        }
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size <= MAX_BYTES + 7 * 1024 * 1024, "{size}");
        let live = live_offsets(&path, |_| true).unwrap();
        let newest: Line = jsonl::read_at(&path, *live.last().unwrap()).unwrap();
        assert!(matches!(newest, Line::Edit(e) if e.id == "id-204"));
    }
}
