//! Reads a fleet directory from disk: every `*.yaml`/`*.yml` below it, recursively, in sorted
//! path order, as [`SourceFile`]s for the engine. The only place the render path touches files.

use std::path::{Path, PathBuf};

use crate::engine::SourceFile;

/// Reads every YAML file under `dir` (hidden directories such as `.git` are skipped).
pub fn read_fleet_dir(dir: &Path) -> Result<Vec<SourceFile>, String> {
    if !dir.is_dir() {
        return Err(format!(
            "{}: fleet directory not found; pass --fleet DIR (default ./fleet) or --demo",
            dir.display()
        ));
    }
    let mut paths = Vec::new();
    collect(dir, &mut paths)?;
    paths.sort();
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        files.push(SourceFile {
            path: path.display().to_string(),
            text,
        });
    }
    Ok(files)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if path.is_dir() {
            if !name.starts_with('.') {
                collect(&path, out)?;
            }
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            out.push(path);
        }
    }
    Ok(())
}
