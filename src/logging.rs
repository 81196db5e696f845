//! Logging through `tracing` to a file, never to the terminal (the console owns it).
//! The level comes from `FLOTILLA_LOG` (default `info`). The file is private to its owner
//! (0600; the default directory 0700) and rotated at start once it has grown past
//! [`ROTATE_AT`], keeping [`KEEP`] older generations. A `--log-file` in a directory that does
//! not exist is refused, never created. Tokens and credentials are never logged: every line
//! passes through [`safe_text::redact`] on its way to the file, so the libraries' own debug
//! lines (request URLs with userinfo, errors quoting a plugin) are redacted too.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

use crate::safe_text;

/// A log at least this large is rotated when flotilla starts.
pub const ROTATE_AT: u64 = 16 * 1024 * 1024;
/// Older generations kept: `flotilla.log.1` (newest) … `flotilla.log.3`.
pub const KEEP: usize = 3;

/// Where logs go when `--log-file` is not given: `$XDG_STATE_HOME/flotilla/flotilla.log`,
/// else `~/.local/state/flotilla/flotilla.log`.
pub fn default_log_path() -> Option<PathBuf> {
    crate::paths::default_log_file()
}

/// Starts file logging. Returns a guard that flushes on drop, or a warning to show when the
/// file cannot be opened (flotilla then runs without a log).
pub fn init(path: Option<&Path>) -> Result<WorkerGuard, String> {
    let file = open(path)?;
    let (writer, guard) = tracing_appender::non_blocking(Redacting(file));
    let filter = EnvFilter::try_from_env("FLOTILLA_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .map_err(|err| format!("logging already set up: {err}"))?;
    Ok(guard)
}

/// A log file that redacts credentials from every line written to it.
struct Redacting<W>(W);

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(safe_text::redact(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Opens the log for appending (0600), after rotating it when it is large. `explicit` is the
/// `--log-file` path, whose directory must exist; the default's directory is created (0700).
pub fn open(explicit: Option<&Path>) -> Result<fs::File, String> {
    let path = match explicit {
        Some(path) => path.to_path_buf(),
        None => default_log_path().ok_or("no log file: neither XDG_STATE_HOME nor HOME is set")?,
    };
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if explicit.is_some() {
        if !parent.is_dir() {
            return Err(format!(
                "cannot open log file {}: the directory {} does not exist (create it, or choose another --log-file)",
                path.display(),
                parent.display()
            ));
        }
    } else {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|err| format!("cannot create log directory {}: {err}", parent.display()))?;
    }
    rotate(&path);
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
        .map_err(|err| format!("cannot open log file {}: {err}", path.display()))?;
    // A file created before by something else keeps its mode on open: make it private too.
    let _ = file.set_permissions(fs::Permissions::from_mode(0o600));
    Ok(file)
}

/// `flotilla.log` → `.1` → `.2` … when it has reached [`ROTATE_AT`]; the oldest is dropped.
fn rotate(path: &Path) {
    if fs::metadata(path).map_or(true, |m| m.len() < ROTATE_AT) {
        return;
    }
    let generation = |n: usize| {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{n}"));
        PathBuf::from(name)
    };
    let _ = fs::remove_file(generation(KEEP));
    for n in (1..KEEP).rev() {
        let _ = fs::rename(generation(n), generation(n + 1));
    }
    let _ = fs::rename(path, generation(1));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn log_lines_lose_their_credentials_on_the_way_to_the_file() {
        let mut file = Redacting(Vec::new());
        let line = b"DEBUG hyper: GET https://admin:pa55@10.0.0.1:6443/version token=abc\n";
        assert_eq!(file.write(line).unwrap(), line.len());
        let written = String::from_utf8(file.0).unwrap();
        assert_eq!(
            written,
            "DEBUG hyper: GET https://[redacted]@10.0.0.1:6443/version token=[redacted]\n"
        );
    }

    #[test]
    fn a_log_file_in_a_missing_directory_is_refused_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/sub/flotilla.log");
        let err = open(Some(&path)).unwrap_err();
        assert!(err.contains("does not exist"), "{err}");
        assert!(!dir.path().join("missing").exists());
    }

    #[test]
    fn the_log_is_private_to_its_owner() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flotilla.log");
        fs::write(&path, "old\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        drop(open(Some(&path)).unwrap());
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let fresh = dir.path().join("fresh.log");
        drop(open(Some(&fresh)).unwrap());
        let mode = fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn a_large_log_is_rotated_and_only_three_generations_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flotilla.log");
        for generation in 1..=4 {
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .unwrap();
            file.set_len(ROTATE_AT).unwrap();
            drop(file);
            drop(open(Some(&path)).unwrap());
            assert_eq!(fs::metadata(&path).unwrap().len(), 0, "round {generation}");
        }
        let names: Vec<bool> = (1..=4)
            .map(|n| dir.path().join(format!("flotilla.log.{n}")).exists())
            .collect();
        assert_eq!(names, [true, true, true, false]);
    }
}
