//! Reads a fleet directory from disk: every `*.yaml`/`*.yml` below it, recursively, in sorted
//! path order, as [`SourceFile`]s for the engine. The only place the render path touches files.
//!
//! Reading is bounded, whatever the directory holds: only regular files are read (a FIFO, a
//! device or a socket is refused by name, never opened), each file and the whole fleet have a
//! size cap ([`Limits`], from `FLOTILLA_MAX_FILE_BYTES` / `FLOTILLA_MAX_FLEET_BYTES`), and
//! symlinks are followed at most once per real path, so a link back to `.` cannot loop. It
//! must not parse what it reads.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::engine::SourceFile;

/// Why a fleet directory could not be read: each variant is one thing the operator fixes
/// differently (a setting, the path, one file, the fleet's size).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DirError {
    /// A size cap in the environment is not a number.
    #[error("{var}={text:?} is not a number of bytes; set it to e.g. 16777216")]
    BadLimit { var: &'static str, text: String },
    /// The directory does not exist (or is not a directory).
    #[error("{dir}: fleet directory not found; pass --fleet DIR (default ./fleet) or --demo")]
    NotFound { dir: String },
    /// A directory below the fleet cannot be listed.
    #[error("{dir}: cannot list: {message}")]
    Unlistable { dir: String, message: String },
    /// A file cannot be opened or read.
    #[error("{path}: cannot read: {message}")]
    Unreadable { path: String, message: String },
    /// A `.yaml` name that is a FIFO, a socket, a device or a directory.
    #[error(
        "{path}: {kind}, not a regular file; flotilla reads only regular files (remove it or rename it away from .yaml)"
    )]
    NotRegular { path: String, kind: &'static str },
    /// One file is larger than `FLOTILLA_MAX_FILE_BYTES`.
    #[error("{path}: larger than {cap} bytes; split it, or raise FLOTILLA_MAX_FILE_BYTES")]
    FileTooLarge { path: String, cap: u64 },
    /// The files together are larger than `FLOTILLA_MAX_FLEET_BYTES`.
    #[error(
        "{dir}: the fleet's files add up to more than {cap} bytes; raise FLOTILLA_MAX_FLEET_BYTES if this fleet is really that large"
    )]
    FleetTooLarge { dir: String, cap: u64 },
    /// A file is not UTF-8; `valid_up_to` is the first byte that is not.
    #[error("{path}: not UTF-8 text (byte {valid_up_to}); save the file as UTF-8")]
    NotUtf8 { path: String, valid_up_to: usize },
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// Size caps for reading a fleet directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// One file, in bytes.
    pub file_bytes: u64,
    /// All files together, in bytes.
    pub fleet_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            file_bytes: 16 * 1024 * 1024,
            fleet_bytes: 512 * 1024 * 1024,
        }
    }
}

impl Limits {
    /// The defaults, overridden by `FLOTILLA_MAX_FILE_BYTES` and `FLOTILLA_MAX_FLEET_BYTES`.
    pub fn from_env() -> Result<Limits, DirError> {
        let mut limits = Limits::default();
        for (var, slot) in [
            ("FLOTILLA_MAX_FILE_BYTES", &mut limits.file_bytes),
            ("FLOTILLA_MAX_FLEET_BYTES", &mut limits.fleet_bytes),
        ] {
            if let Ok(text) = std::env::var(var) {
                *slot = text
                    .trim()
                    .parse()
                    .map_err(|_| DirError::BadLimit { var, text })?;
            }
        }
        Ok(limits)
    }
}

/// Reads every YAML file under `dir` (hidden directories such as `.git` are skipped) within
/// the limits from the environment.
pub fn read_fleet_dir(dir: &Path) -> Result<Vec<SourceFile>, DirError> {
    read_fleet_dir_within(dir, Limits::from_env()?)
}

/// Reads every YAML file under `dir` within `limits`; the first file that cannot be read
/// (or breaks a limit) is the error.
pub fn read_fleet_dir_within(dir: &Path, limits: Limits) -> Result<Vec<SourceFile>, DirError> {
    if !dir.is_dir() {
        return Err(DirError::NotFound { dir: shown(dir) });
    }
    let mut paths = Vec::new();
    let mut seen = HashSet::new();
    collect(dir, &mut paths, &mut seen)?;
    paths.sort();
    let mut files = Vec::with_capacity(paths.len());
    let mut total: u64 = 0;
    for path in paths {
        let text = read_bounded(&path, limits.file_bytes)?;
        total = total.saturating_add(text.len() as u64);
        if total > limits.fleet_bytes {
            return Err(DirError::FleetTooLarge {
                dir: shown(dir),
                cap: limits.fleet_bytes,
            });
        }
        files.push(SourceFile {
            path: path.display().to_string(),
            text,
        });
    }
    Ok(files)
}

/// Reads one regular file of at most `cap` bytes (never more than `cap + 1` are read).
fn read_bounded(path: &Path, cap: u64) -> Result<String, DirError> {
    let unreadable = |e: std::io::Error| DirError::Unreadable {
        path: shown(path),
        message: e.to_string(),
    };
    let metadata = std::fs::metadata(path).map_err(unreadable)?;
    if !metadata.is_file() {
        return Err(DirError::NotRegular {
            path: shown(path),
            kind: kind_of(&metadata),
        });
    }
    let too_large = || DirError::FileTooLarge {
        path: shown(path),
        cap,
    };
    if metadata.len() > cap {
        return Err(too_large());
    }
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|e| DirError::NotUtf8 {
        path: shown(path),
        valid_up_to: e.utf8_error().valid_up_to(),
    })
}

fn kind_of(metadata: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else if kind.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// Walks `dir`, following symlinks at most once per real path.
fn collect(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    seen: &mut HashSet<PathBuf>,
) -> Result<(), DirError> {
    let unlistable = |e: std::io::Error| DirError::Unlistable {
        dir: shown(dir),
        message: e.to_string(),
    };
    let real = std::fs::canonicalize(dir).map_err(unlistable)?;
    if !seen.insert(real) {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(unlistable)?;
    for entry in entries {
        let entry = entry.map_err(unlistable)?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        // `is_dir` follows a symlink; a dangling one is neither and is left to the reader.
        if path.is_dir() {
            if !name.starts_with('.') {
                collect(&path, out, seen)?;
            }
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            let first_time = std::fs::canonicalize(&path).map_or(true, |real| seen.insert(real));
            if first_time {
                out.push(path);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    const SMALL: Limits = Limits {
        file_bytes: 64,
        fleet_bytes: 100,
    };

    #[test]
    fn symlinks_back_to_the_directory_are_read_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), "kind: A\n").unwrap();
        symlink(dir.path(), dir.path().join("loop1")).unwrap();
        symlink(".", dir.path().join("loop2")).unwrap();
        symlink(dir.path().join("a.yaml"), dir.path().join("b.yaml")).unwrap();
        let files = read_fleet_dir_within(dir.path(), SMALL).unwrap();
        assert_eq!(files.len(), 1, "{files:?}");
    }

    #[test]
    fn a_fifo_or_device_is_refused_by_name_without_being_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.yaml");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let err = read_fleet_dir_within(dir.path(), SMALL).unwrap_err();
        assert!(
            matches!(&err, DirError::NotRegular { path, kind: "a FIFO" } if path.ends_with("pipe.yaml")),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("pipe.yaml: a FIFO, not a regular file"),
            "{err}"
        );
        std::fs::remove_file(&fifo).unwrap();
        symlink("/dev/zero", dir.path().join("zero.yaml")).unwrap();
        let err = read_fleet_dir_within(dir.path(), SMALL).unwrap_err();
        assert!(
            matches!(&err, DirError::NotRegular { path, kind: "a device" } if path.ends_with("zero.yaml")),
            "{err}"
        );
    }

    #[test]
    fn files_and_fleets_beyond_their_caps_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big.yaml"), "x".repeat(65)).unwrap();
        let err = read_fleet_dir_within(dir.path(), SMALL).unwrap_err();
        assert!(
            matches!(&err, DirError::FileTooLarge { path, cap: 64 } if path.ends_with("big.yaml")),
            "{err}"
        );
        assert!(
            err.to_string().contains("big.yaml: larger than 64 bytes"),
            "{err}"
        );
        std::fs::write(dir.path().join("big.yaml"), "x".repeat(60)).unwrap();
        std::fs::write(dir.path().join("more.yaml"), "x".repeat(60)).unwrap();
        let err = read_fleet_dir_within(dir.path(), SMALL).unwrap_err();
        assert!(
            matches!(err, DirError::FleetTooLarge { cap: 100, .. }),
            "{err}"
        );
    }
}
