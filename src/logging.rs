//! Logging through `tracing` to a file, never to the terminal (the console owns it).
//! The level comes from `FLOTILLA_LOG` (default `info`). Tokens and credentials are never logged.

use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// Where logs go when `--log-file` is not given: `$XDG_STATE_HOME/flotilla/flotilla.log`,
/// else `~/.local/state/flotilla/flotilla.log`.
pub fn default_log_path() -> Option<PathBuf> {
    let state_home = std::env::var_os("XDG_STATE_HOME")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".local/state")))?;
    Some(state_home.join("flotilla").join("flotilla.log"))
}

/// Starts file logging. Returns a guard that flushes on drop, or a warning to show when the
/// file cannot be opened (flotilla then runs without a log).
pub fn init(path: Option<&Path>) -> Result<WorkerGuard, String> {
    let path = match path {
        Some(path) => path.to_path_buf(),
        None => default_log_path().ok_or("no log file: neither XDG_STATE_HOME nor HOME is set")?,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|err| format!("cannot create log directory {}: {err}", parent.display()))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|err| format!("cannot open log file {}: {err}", path.display()))?;
    let (writer, guard) = tracing_appender::non_blocking(file);
    let filter = EnvFilter::try_from_env("FLOTILLA_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .map_err(|err| format!("logging already set up: {err}"))?;
    Ok(guard)
}
