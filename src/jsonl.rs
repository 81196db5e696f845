//! The JSON Lines files flotilla keeps in its state directory (the audit log, the edit
//! journal): a line is appended whole, under an exclusive lock, on a fresh line even when the
//! file ends in a torn line (a write cut short by a full disk or a kill), and synced before the
//! append returns; a reader skips a torn or unreadable line and counts it, so nothing is glued
//! to a broken line and nothing is lost silently. The state directory is made 0700 and the
//! files 0600. It knows nothing of what the lines say: it must not interpret them.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

fn fail(path: &Path, err: impl std::fmt::Display) -> String {
    format!("{}: {err}", path.display())
}

/// Makes the directory (and its parents) that holds `path`; a directory flotilla creates is
/// private to its user (0700).
pub fn make_private_dir(dir: &Path) -> Result<(), String> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| fail(dir, e))
}

/// Opens `path` for appending (created 0600; an existing file is narrowed to 0600).
fn open_append(path: &Path) -> Result<File, String> {
    if let Some(dir) = path.parent() {
        make_private_dir(dir)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| fail(path, e))?;
    let meta = file.metadata().map_err(|e| fail(path, e))?;
    if meta.permissions().mode() & 0o077 != 0 {
        let _ = file.set_permissions(std::fs::Permissions::from_mode(0o600));
    }
    Ok(file)
}

/// Appends `line` (one JSON value, no newline in it) to `path`: under an exclusive lock,
/// after a newline when the file's last line is torn, then synced.
pub fn append(path: &Path, line: &str) -> Result<(), String> {
    let mut file = open_append(path)?;
    file.lock().map_err(|e| fail(path, e))?;
    let mut text = String::with_capacity(line.len() + 2);
    if ends_torn(&mut file).map_err(|e| fail(path, e))? {
        text.push('\n');
    }
    text.push_str(line);
    text.push('\n');
    // One write per line: appends of whole lines do not interleave with another process's.
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_data())
        .map_err(|e| fail(path, e))
}

/// Whether the file is non-empty and does not end in a newline.
fn ends_torn(file: &mut File) -> std::io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// What reading a JSON Lines file found: each line that parsed, with its byte offset, and how
/// many lines did not (torn or unreadable).
#[derive(Debug)]
pub struct Lines<T> {
    pub lines: Vec<(u64, T)>,
    pub torn: usize,
}

/// Reads every line of `path` that parses as `T`, one line in memory at a time (no file: no
/// lines). `keep` decides which parsed lines are kept.
pub fn read<T: serde::de::DeserializeOwned>(
    path: &Path,
    mut keep: impl FnMut(&T) -> bool,
) -> Result<Lines<T>, String> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Lines {
                lines: Vec::new(),
                torn: 0,
            });
        }
        Err(err) => return Err(fail(path, err)),
    };
    let mut out = Lines {
        lines: Vec::new(),
        torn: 0,
    };
    each_line(path, file, |offset, line| {
        let text = String::from_utf8_lossy(line);
        let text = text.trim();
        if text.is_empty() {
            return Ok(());
        }
        match serde_json::from_str::<T>(text) {
            Ok(value) => {
                if keep(&value) {
                    out.lines.push((offset, value));
                }
            }
            Err(_) => out.torn += 1,
        }
        Ok(())
    })?;
    Ok(out)
}

/// Calls `each` with every line of `file` (read from `path`) and the byte offset it starts
/// at, one line in memory at a time.
fn each_line(
    path: &Path,
    file: File,
    mut each: impl FnMut(u64, &mut Vec<u8>) -> Result<(), String>,
) -> Result<(), String> {
    let mut reader = BufReader::new(file);
    let mut offset = 0u64;
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        let read = reader
            .read_until(b'\n', &mut buffer)
            .map_err(|e| fail(path, e))?;
        if read == 0 {
            return Ok(());
        }
        each(offset, &mut buffer)?;
        offset += read as u64;
    }
}

/// The one line that starts at `offset` of `path`, parsed.
pub fn read_at<T: serde::de::DeserializeOwned>(path: &Path, offset: u64) -> Result<T, String> {
    let mut file = File::open(path).map_err(|e| fail(path, e))?;
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| fail(path, e))?;
    let mut reader = BufReader::new(file);
    let mut buffer = Vec::new();
    reader
        .read_until(b'\n', &mut buffer)
        .map_err(|e| fail(path, e))?;
    serde_json::from_slice(&buffer).map_err(|e| fail(path, e))
}

/// Rewrites `path` keeping only the lines that start at the offsets in `keep` (ascending), one
/// line in memory at a time, through a synced temporary file renamed over it.
pub fn rewrite(path: &Path, keep: &[u64]) -> Result<(), String> {
    let temp = path.with_extension(format!("tmp-{}", std::process::id()));
    let result = (|| {
        let source = File::open(path).map_err(|e| fail(path, e))?;
        let mut out = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .mode(0o600)
            .open(&temp)
            .map_err(|e| fail(&temp, e))?;
        let mut wanted = keep.iter().peekable();
        each_line(path, source, |offset, line| {
            while wanted.peek().is_some_and(|at| **at < offset) {
                wanted.next();
            }
            if wanted.peek() == Some(&&offset) {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                out.write_all(line).map_err(|e| fail(&temp, e))?;
                wanted.next();
            }
            Ok(())
        })?;
        out.sync_all().map_err(|e| fail(&temp, e))?;
        std::fs::rename(&temp, path).map_err(|e| fail(path, e))
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

    #[test]
    fn a_torn_last_line_is_skipped_and_never_glued_to_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/log.jsonl");
        append(&path, r#"{"n":1}"#).unwrap();
        // A write cut short: half a line, no newline.
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(br#"{"n":2,"cut"#).unwrap();
        append(&path, r#"{"n":3}"#).unwrap();
        let read = read::<serde_json::Value>(&path, |_| true).unwrap();
        let ns: Vec<i64> = read
            .lines
            .iter()
            .map(|(_, v)| v["n"].as_i64().unwrap())
            .collect();
        assert_eq!(ns, vec![1, 3]);
        assert_eq!(read.torn, 1);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
    }

    #[test]
    fn rewrite_keeps_the_chosen_lines_and_read_at_finds_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        for n in 0..5 {
            append(&path, &format!(r#"{{"n":{n}}}"#)).unwrap();
        }
        let read = read::<serde_json::Value>(&path, |v| v["n"].as_i64().unwrap() % 2 == 0).unwrap();
        let offsets: Vec<u64> = read.lines.iter().map(|(at, _)| *at).collect();
        let third: serde_json::Value = read_at(&path, offsets[1]).unwrap();
        assert_eq!(third["n"], 2);
        rewrite(&path, &offsets).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"n\":0}\n{\"n\":2}\n{\"n\":4}\n"
        );
    }
}
