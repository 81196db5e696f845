//! The fleet directory's write lock: an exclusive `flock` on the directory itself (no lock
//! file is left in the operator's repository), waited for briefly, and when another process
//! still holds it, who that is (from `/proc/locks`). It must not read or write fleet files.

use std::fs::{File, TryLockError};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::safe_text::printable;

/// Why the lock was not had.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process still held it after [`LOCK_WAIT`].
    #[error("locked by {holder}")]
    Held { holder: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// How long a write waits for another flotilla's write to the same directory to finish.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Holds the lock until dropped.
#[derive(Debug)]
pub struct DirLock {
    _dir: File,
}

/// Takes `dir`'s exclusive lock, waiting up to [`LOCK_WAIT`].
pub fn lock_dir(dir: &Path) -> Result<DirLock, LockError> {
    let file = File::open(dir)?;
    let started = Instant::now();
    let mut pause = Duration::from_millis(2);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(DirLock { _dir: file }),
            Err(TryLockError::WouldBlock) if started.elapsed() < LOCK_WAIT => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(TryLockError::WouldBlock) => {
                let holder = file
                    .metadata()
                    .ok()
                    .and_then(|meta| holder_of(meta.ino()))
                    .unwrap_or_else(|| "another process".into());
                return Err(LockError::Held { holder });
            }
            Err(TryLockError::Error(err)) => return Err(LockError::Io(err)),
        }
    }
}

/// `pid N (COMMAND LINE)` of the process holding a `flock` on the inode `ino`.
fn holder_of(ino: u64) -> Option<String> {
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let pid = locks.lines().find_map(|line| {
        // `1: FLOCK  ADVISORY  WRITE 4242 fd:01:1311 0 EOF`
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (kind, pid, device) = (fields.get(1)?, fields.get(4)?, fields.get(5)?);
        let inode = device.rsplit(':').next()?.parse::<u64>().ok()?;
        (*kind == "FLOCK" && inode == ino).then(|| pid.to_string())
    })?;
    let command = std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|raw| {
            raw.split(|b| *b == 0)
                .filter(|part| !part.is_empty())
                .map(|part| String::from_utf8_lossy(part).to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|c| !c.is_empty());
    Some(match command {
        Some(command) => {
            let short: String = command.chars().take(100).collect();
            format!("pid {pid} ({})", printable(&short, true))
        }
        None => format!("pid {pid}"),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_names_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let held = lock_dir(dir.path()).unwrap();
        let ino = std::fs::metadata(dir.path()).unwrap().ino();
        let holder = holder_of(ino).unwrap();
        assert!(
            holder.starts_with(&format!("pid {}", std::process::id())),
            "{holder}"
        );
        drop(held);
        assert!(lock_dir(dir.path()).is_ok());
    }
}
