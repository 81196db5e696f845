//! Writing the test environment's run files (kubeconfigs, token files, patches) atomically: a
//! temporary file beside the target, then a rename, so a reader never sees half a file. It
//! writes only the path it is given; choosing paths is `paths.rs`'s job, and it must not
//! delete anything.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

/// Writes `text` to `path` through `<path minus extension>.tmp-<pid>` and a rename.
pub fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = std::env::temp_dir().join(format!("xtask-files-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("config.kubeconfig");
        write_atomically(&path, "first").expect("first");
        write_atomically(&path, "second").expect("second");
        assert_eq!(fs::read_to_string(&path).expect("read"), "second");
        let names: Vec<String> = fs::read_dir(&dir)
            .expect("list")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        assert_eq!(names, ["config.kubeconfig"]);
        let _ = fs::remove_dir_all(dir);
    }
}
