//! Saving into the fleet directory: replace one document of a fleet file, append a document,
//! or create a new file, through [`crate::engine::edit::yaml_text`] for the text. Every write keeps
//! a backup of the old file (`<file>.flotilla-bak`, which the loader does not read because it
//! does not end in `.yaml`) and is atomic (a temporary file in the same directory, synced,
//! then renamed over the original). It must not decide what to write, and it never deletes
//! a fleet file.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::engine::edit::yaml_text::{self, Edited};

/// Suffix of the backup kept next to an edited file.
pub const BACKUP_SUFFIX: &str = ".flotilla-bak";

/// What a save did, for the caller to show.
#[derive(Debug, Clone, PartialEq)]
pub struct Saved {
    pub path: PathBuf,
    /// The backup of the previous content; `None` for a new file.
    pub backup: Option<PathBuf>,
    /// Comments that could not be kept, and the like.
    pub warnings: Vec<String>,
}

/// Why nothing was saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error(transparent)]
    Edit(#[from] yaml_text::EditError),
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

/// Replaces document `index` (as the engine's loader counts them, [`crate::engine::document::parse::Doc::index`])
/// of the file at `path` with `value`. Other documents stay byte-identical.
pub fn replace_document(path: &Path, index: usize, value: &Value) -> Result<Saved, SaveError> {
    let old = std::fs::read_to_string(path).map_err(|e| io(path, e))?;
    let Edited { text, warnings } =
        yaml_text::replace_document(&path.display().to_string(), &old, index, value)?;
    let backup = write_with_backup(path, &old, &text)?;
    Ok(Saved {
        path: path.to_path_buf(),
        backup: Some(backup),
        warnings,
    })
}

/// Replaces document `index`, or appends `value` when `index` is the file's document count
/// (a document an editor created); see [`yaml_text::replace_or_append`].
pub fn replace_or_append_document(
    path: &Path,
    index: usize,
    value: &Value,
) -> Result<Saved, SaveError> {
    let old = std::fs::read_to_string(path).map_err(|e| io(path, e))?;
    if index == crate::engine::document::parse::document_spans(&old).len() {
        return append_document(path, value);
    }
    replace_document(path, index, value)
}

/// Appends `value` as a new document to the file at `path`, creating the file (and its
/// directory) when it does not exist.
pub fn append_document(path: &Path, value: &Value) -> Result<Saved, SaveError> {
    let old = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => return Err(io(path, err)),
    };
    let text = yaml_text::append_document(
        &path.display().to_string(),
        old.as_deref().unwrap_or(""),
        value,
    )?;
    let backup = match &old {
        Some(old) => Some(write_with_backup(path, old, &text)?),
        None => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
            }
            write_atomic(path, &text)?;
            None
        }
    };
    Ok(Saved {
        path: path.to_path_buf(),
        backup,
        warnings: Vec::new(),
    })
}

/// Writes the whole new text of a file whose old text was `old` (read by the caller).
pub fn write_text(path: &Path, old: Option<&str>, text: &str) -> Result<Saved, SaveError> {
    let backup = match old {
        Some(old) => Some(write_with_backup(path, old, text)?),
        None => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
            }
            write_atomic(path, text)?;
            None
        }
    };
    Ok(Saved {
        path: path.to_path_buf(),
        backup,
        warnings: Vec::new(),
    })
}

/// Keeps `old` as the backup, then replaces the file atomically. Refuses when the file
/// changed on disk since it was read (someone else is editing it).
fn write_with_backup(path: &Path, old: &str, text: &str) -> Result<PathBuf, SaveError> {
    let current = std::fs::read_to_string(path).map_err(|e| io(path, e))?;
    if current != old {
        return Err(io(
            path,
            "the file changed on disk while it was being edited; nothing saved, try again",
        ));
    }
    let backup = backup_path(path);
    write_atomic(&backup, old)?;
    write_atomic(path, text)?;
    Ok(backup)
}

/// Writes through a temporary file in the same directory and renames it into place, so a
/// reader sees the old file or the new one, never half of one. Keeps the old permissions.
fn write_atomic(path: &Path, text: &str) -> Result<(), SaveError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "fleet".into());
    let mut temp = dir.join(format!(".{name}.flotilla-tmp-{}", std::process::id()));
    let mut n = 0;
    while temp.exists() {
        n += 1;
        temp = dir.join(format!(".{name}.flotilla-tmp-{}-{n}", std::process::id()));
    }
    let result = (|| {
        let mut file = std::fs::File::create(&temp).map_err(|e| io(&temp, e))?;
        file.write_all(text.as_bytes()).map_err(|e| io(&temp, e))?;
        file.sync_all().map_err(|e| io(&temp, e))?;
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&temp, meta.permissions()).map_err(|e| io(&temp, e))?;
        }
        std::fs::rename(&temp, path).map_err(|e| io(path, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replace_keeps_a_backup_and_the_other_documents() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.yaml");
        let old = "kind: A # first\n---\n# keep me\nkind: B\nv: 1\n";
        std::fs::write(&path, old).unwrap();
        let saved = replace_document(&path, 1, &json!({"kind": "B", "v": 2})).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "kind: A # first\n---\n# keep me\nkind: B\nv: 2\n"
        );
        assert_eq!(std::fs::read_to_string(saved.backup.unwrap()).unwrap(), old);
        // Only the file and its backup: no temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn replace_or_append_appends_at_the_document_count_and_replaces_below_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.yaml");
        std::fs::write(&path, "kind: A # keep\n").unwrap();
        let saved = replace_or_append_document(&path, 1, &json!({"kind": "B"})).unwrap();
        assert!(saved.backup.is_some());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "kind: A # keep\n---\nkind: B\n"
        );
        replace_or_append_document(&path, 1, &json!({"kind": "C"})).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "kind: A # keep\n---\nkind: C\n"
        );
        assert!(replace_or_append_document(&path, 3, &json!({})).is_err());
    }

    #[test]
    fn append_creates_missing_files_and_refuses_a_broken_index() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/new.yaml");
        let saved = append_document(&path, &json!({"kind": "A"})).unwrap();
        assert!(saved.backup.is_none());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "kind: A\n");
        append_document(&path, &json!({"kind": "B"})).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "kind: A\n---\nkind: B\n"
        );
        assert!(replace_document(&path, 5, &json!({})).is_err());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "kind: A\n---\nkind: B\n",
            "a refused edit writes nothing"
        );
    }
}
