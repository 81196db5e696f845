//! Where flotilla keeps its files on this machine, resolved in one place with the XDG base
//! directories (through `etcetera`): the user's configuration (`$XDG_CONFIG_HOME/flotilla`,
//! else `~/.config/flotilla`), its state — the audit log, the edit journal `undo` reads and
//! the default log file — (`$XDG_STATE_HOME/flotilla`, else `~/.local/state/flotilla`), and
//! the kubeconfig files kubectl would read. As the XDG specification says, an `XDG_*` value
//! that is not an absolute path is ignored. This module only names paths: it must not create,
//! read or write them.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use etcetera::BaseStrategy;
use etcetera::base_strategy::Xdg;

/// The directory below each base directory that is flotilla's own.
const APP: &str = "flotilla";

/// The XDG base directories, or `None` when no home directory can be found.
fn base() -> Option<Xdg> {
    Xdg::new().ok()
}

/// The user's configuration directory: `config.yaml`, `themes/`, `keymaps/`.
pub fn config_dir() -> Option<PathBuf> {
    base().map(|base| base.config_dir().join(APP))
}

/// The user's settings file.
pub fn settings_file(config_dir: &Path) -> PathBuf {
    config_dir.join("config.yaml")
}

/// The user's file for a theme (`kind` "themes") or key map (`kind` "keymaps") of this name.
pub fn user_file(config_dir: &Path, kind: &str, name: &str) -> PathBuf {
    config_dir.join(kind).join(format!("{name}.yaml"))
}

/// The state directory: the audit log and the default log file.
pub fn state_dir() -> Option<PathBuf> {
    base()
        .and_then(|base| base.state_dir())
        .map(|dir| dir.join(APP))
}

/// The audit log of every write flotilla sent.
pub fn audit_log() -> Option<PathBuf> {
    state_dir().map(|dir| dir.join("audit.log"))
}

/// The journal of the last edits flotilla wrote to each fleet, which `flotilla undo` reads.
pub fn edit_journal() -> Option<PathBuf> {
    state_dir().map(|dir| dir.join("journal.jsonl"))
}

/// The log file when `--log-file` is not given.
pub fn default_log_file() -> Option<PathBuf> {
    state_dir().map(|dir| dir.join("flotilla.log"))
}

/// The kubeconfig files named by a `$KUBECONFIG` value, in order, empty entries dropped.
pub fn kubeconfig_env_files(value: &OsStr) -> Vec<PathBuf> {
    std::env::split_paths(value)
        .filter(|path| !path.as_os_str().is_empty())
        .collect()
}

/// The kubeconfig files kubectl would read: `--kubeconfig`, else `$KUBECONFIG`'s files, else
/// `~/.kube/config`.
pub fn kubeconfig_files(explicit: Option<&Path>) -> Vec<PathBuf> {
    if let Some(path) = explicit {
        return vec![path.to_path_buf()];
    }
    let from_env = std::env::var_os("KUBECONFIG")
        .map(|value| kubeconfig_env_files(&value))
        .unwrap_or_default();
    if !from_env.is_empty() {
        return from_env;
    }
    base()
        .map(|base| vec![base.home_dir().join(".kube").join("config")])
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_lists_split_as_kubectl_splits_them() {
        assert_eq!(
            kubeconfig_env_files(OsStr::new("/a/one::/b/two:")),
            vec![PathBuf::from("/a/one"), PathBuf::from("/b/two")]
        );
        assert_eq!(
            kubeconfig_files(Some(Path::new("/x/config"))),
            vec![PathBuf::from("/x/config")]
        );
    }

    #[test]
    fn user_files_sit_in_their_kind_directory() {
        assert_eq!(
            user_file(Path::new("/c/flotilla"), "themes", "dark"),
            PathBuf::from("/c/flotilla/themes/dark.yaml")
        );
        assert_eq!(
            settings_file(Path::new("/c/flotilla")),
            PathBuf::from("/c/flotilla/config.yaml")
        );
    }
}
