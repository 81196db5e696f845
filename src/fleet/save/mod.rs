//! Saving into the fleet directory, compare-and-swap: every write of a fleet file (the
//! console's editors and drift repairs, the editing commands, `repair`, `undo`) goes through
//! [`commit`], which holds an exclusive lock on the file's directory while it re-reads the
//! file, puts the edit's documents into the file as it is now (found by what they are, never
//! by their index: [`crate::engine::edit::by_document`]), records the edit in the journal
//! (write-ahead, synced), keeps a backup of the old file (`<file>.flotilla-bak`, its mode
//! kept, which the loader does not read because it does not end in `.yaml`) and replaces the
//! file atomically (a synced temporary file renamed over it, the directory synced). A document
//! the edit changes that changed meanwhile refuses the whole write; a new file is created
//! only if no file appeared meanwhile. `--readonly` refuses here, for every writer at once.
//! It must not decide what to write, and it never deletes a fleet file.

pub mod journal;
mod lock;

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::engine::edit::by_document::{self, Conflict};
use crate::engine::edit::yaml_text;

pub use lock::LOCK_WAIT;

/// Suffix of the backup kept next to an edited file.
pub const BACKUP_SUFFIX: &str = ".flotilla-bak";

/// Set once by `--readonly`: every commit is refused from then on.
static READ_ONLY: AtomicBool = AtomicBool::new(false);

/// Refuses every later fleet write in this process (`--readonly`).
pub fn forbid_writes() {
    READ_ONLY.store(true, Ordering::SeqCst);
}

/// What `--readonly` says to any write it stops.
pub const READ_ONLY_REFUSAL: &str = "--readonly forbids every write (fleet files, ignore files, clusters and hubs); nothing was written";

/// One file an edit writes: the text the edit was computed from (`None`: the file did not
/// exist) and the new text.
#[derive(Debug, Clone, Copy)]
pub struct FileEdit<'a> {
    pub path: &'a Path,
    pub base: Option<&'a str>,
    pub new: &'a str,
}

/// What one file's write did.
#[derive(Debug, Clone, PartialEq)]
pub struct Committed {
    pub path: PathBuf,
    /// The file's text now: the edit, with what others changed meanwhile kept.
    pub text: String,
    /// The backup of the previous content; `None` for a new file.
    pub backup: Option<PathBuf>,
}

/// What the journal records of a commit, before the files are replaced.
#[derive(Debug, Clone)]
pub struct Note {
    /// The fleet: its directory's absolute path.
    pub fleet: String,
    pub command: String,
    pub title: String,
    pub resource: String,
}

/// Why nothing was saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// `--readonly`.
    #[error("{READ_ONLY_REFUSAL}")]
    ReadOnly,
    /// Another process holds the fleet directory's lock.
    #[error("{dir} is locked by {holder}; nothing was written, try again when it is done")]
    Locked { dir: String, holder: String },
    /// The fleet changed under the edit: what it changes is no longer what it was computed from.
    #[error("the fleet changed under the edit: {0}; nothing was written")]
    Changed(#[from] Conflict),
    /// The file the edit was computed from is gone.
    #[error("the fleet changed under the edit: {path} was removed or moved; nothing was written")]
    Gone { path: String },
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error(transparent)]
    Edit(#[from] yaml_text::WriteError),
}

impl SaveError {
    /// Whether the edit lost a race with another writer (exit 4: run it again).
    pub fn is_conflict(&self) -> bool {
        matches!(
            self,
            SaveError::Changed(_) | SaveError::Gone { .. } | SaveError::Locked { .. }
        )
    }
}

fn io(path: &Path, err: impl std::fmt::Display) -> SaveError {
    SaveError::Io {
        path: path.display().to_string(),
        message: err.to_string(),
    }
}

/// The backup path of a fleet file.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(BACKUP_SUFFIX);
    PathBuf::from(name)
}

/// A step of [`commit`] at which `FLOTILLA_CRASH_AT` (a test hook) ends the process at once,
/// as a kill would: `before-journal`, `after-journal`, `after-rename`.
fn crash_point(step: &str) {
    if std::env::var("FLOTILLA_CRASH_AT").is_ok_and(|at| at == step) {
        std::process::abort();
    }
}

/// Writes `edits` compare-and-swap: under the directories' locks, each file's edit is put into
/// the file as it is now (see the module docs); the journal gets `note` first; then backups,
/// then each file replaced. Any conflict refuses every file: nothing is written.
pub fn commit(edits: &[FileEdit<'_>], note: Option<&Note>) -> Result<Vec<Committed>, SaveError> {
    commit_unless(READ_ONLY.load(Ordering::SeqCst), edits, note)
}

fn commit_unless(
    read_only: bool,
    edits: &[FileEdit<'_>],
    note: Option<&Note>,
) -> Result<Vec<Committed>, SaveError> {
    if read_only {
        return Err(SaveError::ReadOnly);
    }
    let mut dirs: Vec<PathBuf> = edits.iter().map(|edit| parent(edit.path)).collect();
    dirs.sort();
    dirs.dedup();
    let mut locks = Vec::new();
    for dir in &dirs {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        locks.push(lock_dir(dir)?);
    }
    let mut planned = Vec::new();
    for edit in edits {
        let label = edit.path.display().to_string();
        let current = match std::fs::read_to_string(edit.path) {
            Ok(text) => Some(text),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => return Err(io(edit.path, err)),
        };
        let text = match (edit.base, current.as_deref()) {
            (Some(_), None) => return Err(SaveError::Gone { path: label }),
            (None, None) => edit.new.to_string(),
            (base, Some(current)) => {
                by_document::merge(&label, base.unwrap_or(""), edit.new, current)?
            }
        };
        planned.push((edit.path, current, text));
    }
    crash_point("before-journal");
    if let Some(note) = note {
        for (path, current, text) in &planned {
            let changes = by_document::changes(current.as_deref().unwrap_or(""), text);
            if changes.is_empty() {
                continue;
            }
            journal::record_or_warn(journal::Entry {
                id: String::new(),
                fleet: note.fleet.clone(),
                at: journal::now(),
                command: note.command.clone(),
                title: note.title.clone(),
                resource: note.resource.clone(),
                change: journal::Change::Documents {
                    path: absolute(path).display().to_string(),
                    docs: changes,
                },
            });
        }
    }
    crash_point("after-journal");
    let mut done = Vec::new();
    for (path, current, text) in planned {
        let backup = match &current {
            Some(old) => {
                let mode = std::fs::metadata(path).ok().map(|m| m.permissions().mode());
                let backup = backup_path(path);
                write_atomic(&backup, old, mode)?;
                if old != &text {
                    write_atomic(path, &text, mode)?;
                }
                Some(backup)
            }
            None => {
                create_new(path, &text)?;
                None
            }
        };
        crash_point("after-rename");
        done.push(Committed {
            path: path.to_path_buf(),
            text,
            backup,
        });
    }
    drop(locks);
    Ok(done)
}

/// Holds the write lock of `path`'s directory until dropped: what a writer holds from its
/// re-read to its rename, so a journal entry written ahead of a write still under way is never
/// taken for one that did not land.
pub fn hold_dir_of(path: &Path) -> Result<lock::DirLock, SaveError> {
    lock_dir(&parent(path))
}

fn lock_dir(dir: &Path) -> Result<lock::DirLock, SaveError> {
    lock::lock_dir(dir).map_err(|err| match err {
        lock::LockError::Held { holder } => SaveError::Locked {
            dir: dir.display().to_string(),
            holder,
        },
        lock::LockError::Io(err) => io(dir, err),
    })
}

/// Writes one edited file (see [`commit`]).
pub fn commit_one(edit: FileEdit<'_>, note: Option<&Note>) -> Result<Committed, SaveError> {
    let mut done = commit(&[edit], note)?;
    done.pop()
        .ok_or_else(|| io(edit.path, "nothing was written"))
}

/// The edit of `base` (the file's text the edit was computed from; `None` for a file that did
/// not exist) that puts `value` in place of the document of the same identity (apiVersion,
/// kind, namespace, name), wherever it now sits, or appends it when `base` has no such
/// document. `index` is where the editor found it, used only for a document with no identity.
pub fn document_edit(
    path: &Path,
    base: Option<&str>,
    index: usize,
    value: &serde_json::Value,
) -> Result<yaml_text::Edited, SaveError> {
    let file = path.display().to_string();
    let text = base.unwrap_or("");
    let index = index_by_identity(&file, text, value).unwrap_or(index);
    Ok(yaml_text::replace_or_append(&file, text, index, value)?)
}

/// The index of the document of `text` with `value`'s identity; the document count (append)
/// when there is none; `None` when `value` has no identity to look for.
fn index_by_identity(file: &str, text: &str, value: &serde_json::Value) -> Option<usize> {
    let wanted = by_document::Identity::of(value)?;
    let (docs, _) = crate::engine::document::parse::parse_files(&[crate::engine::SourceFile {
        path: file.to_string(),
        text: text.to_string(),
    }]);
    Some(
        docs.iter()
            .find(|doc| {
                doc.list_item.is_none()
                    && by_document::Identity::of(&doc.value).as_ref() == Some(&wanted)
            })
            .map(|doc| doc.index)
            .unwrap_or_else(|| crate::engine::document::parse::document_spans(text).len()),
    )
}

fn parent(path: &Path) -> PathBuf {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A temporary file next to `path`, created new: private (0600), or with the usual mode of a
/// new file (the umask's) when not `private`.
fn temp_file(path: &Path, private: bool) -> Result<(PathBuf, std::fs::File), SaveError> {
    let dir = parent(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "fleet".into());
    for n in 0.. {
        let temp = dir.join(format!(".{name}.flotilla-tmp-{}-{n}", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        if private {
            options.mode(0o600);
        }
        match options.open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(io(&temp, err)),
        }
    }
    Err(io(path, "no temporary file name is free"))
}

/// Writes through a temporary file in the same directory and renames it into place, so a
/// reader sees the old file or the new one, never half of one; the directory is synced so the
/// rename survives a crash. The file gets `mode` (the edited file's, so a backup is never more
/// open than what it copies), else stays private.
fn write_atomic(path: &Path, text: &str, mode: Option<u32>) -> Result<(), SaveError> {
    let (temp, mut file) = temp_file(path, true)?;
    let result = (|| {
        file.write_all(text.as_bytes()).map_err(|e| io(&temp, e))?;
        file.sync_all().map_err(|e| io(&temp, e))?;
        if let Some(mode) = mode {
            std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(mode & 0o7777))
                .map_err(|e| io(&temp, e))?;
        }
        std::fs::rename(&temp, path).map_err(|e| io(path, e))?;
        sync_dir(path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// Creates `path` with `text`, never replacing a file that appeared meanwhile (a hard link of
/// a synced temporary file fails when the name is taken). A new fleet file gets the usual mode.
fn create_new(path: &Path, text: &str) -> Result<(), SaveError> {
    let (temp, mut file) = temp_file(path, false)?;
    let result = (|| {
        file.write_all(text.as_bytes()).map_err(|e| io(&temp, e))?;
        file.sync_all().map_err(|e| io(&temp, e))?;
        match std::fs::hard_link(&temp, path) {
            Ok(()) => sync_dir(path),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                Err(SaveError::Changed(Conflict::Added {
                    file: path.display().to_string(),
                    title: "the file".into(),
                    now: String::new(),
                }))
            }
            Err(err) => Err(io(path, err)),
        }
    })();
    let _ = std::fs::remove_file(&temp);
    result
}

fn sync_dir(path: &Path) -> Result<(), SaveError> {
    let dir = parent(path);
    std::fs::File::open(&dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io(&dir, e))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn edit<'a>(path: &'a Path, base: Option<&'a str>, new: &'a str) -> FileEdit<'a> {
        FileEdit { path, base, new }
    }

    #[test]
    fn a_write_keeps_a_backup_with_the_files_mode_and_the_other_documents() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.yaml");
        let old = "kind: A # first\nmetadata: {name: a}\n---\n# keep me\nkind: B\nmetadata: {name: b}\nv: 1\n";
        std::fs::write(&path, old).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let new = old.replace("v: 1", "v: 2");
        let saved = commit_one(edit(&path, Some(old), &new), None).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), new);
        let backup = saved.backup.unwrap();
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), old);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&backup), 0o600);
        assert_eq!(mode(&path), 0o600);
        // Only the file and its backup: no temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn an_edit_of_a_document_changed_meanwhile_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.yaml");
        let base = "kind: A\nmetadata: {name: a}\nv: 1\n";
        let theirs = "kind: A\nmetadata: {name: a}\nv: 5\n";
        std::fs::write(&path, theirs).unwrap();
        let err = commit_one(edit(&path, Some(base), &base.replace('1', "2")), None).unwrap_err();
        assert!(err.is_conflict(), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), theirs);
    }

    #[test]
    fn a_new_file_never_replaces_one_that_appeared_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flotilla-ignore.yaml");
        let theirs = "kind: DriftIgnore\nmetadata: {name: theirs}\n";
        std::fs::write(&path, theirs).unwrap();
        let ours = "kind: DriftIgnore\nmetadata: {name: ours}\n";
        commit_one(edit(&path, None, ours), None).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("theirs") && text.contains("ours"), "{text}");
        let same = "kind: DriftIgnore\nmetadata: {name: theirs}\nspec: {}\n";
        let err = commit_one(edit(&path, None, same), None).unwrap_err();
        assert!(err.is_conflict());
    }

    #[test]
    fn a_document_is_replaced_by_its_identity_wherever_it_moved() {
        let path = Path::new("fleet.yaml");
        let base =
            "kind: ConfigMap\nmetadata: {name: pulled}\n---\nkind: A\nmetadata: {name: a}\nv: 1\n";
        // The editor found A at index 0, before a pull put a ConfigMap in front of it.
        let value = serde_json::json!({"kind": "A", "metadata": {"name": "a"}, "v": 2});
        let edited = document_edit(path, Some(base), 0, &value).unwrap();
        assert_eq!(
            edited.text,
            "kind: ConfigMap\nmetadata: {name: pulled}\n---\nkind: A\nmetadata: {name: a}\nv: 2\n"
        );
        // A document the file does not hold is appended.
        let new = serde_json::json!({"kind": "B", "metadata": {"name": "b"}});
        let edited = document_edit(path, Some(base), 0, &new).unwrap();
        assert!(
            edited
                .text
                .ends_with("---\nkind: B\nmetadata:\n  name: b\n"),
            "{}",
            edited.text
        );
    }

    #[test]
    fn read_only_refuses_every_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.yaml");
        let result = commit_unless(true, &[edit(&path, None, "kind: A\n")], None);
        assert!(matches!(result, Err(SaveError::ReadOnly)));
        assert!(!path.exists());
    }
}
