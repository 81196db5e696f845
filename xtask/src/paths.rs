//! Where things live: the repository root, the test environment's run directory
//! (`target/testenv/`) and the binary cache outside the repository. It only computes paths;
//! it must not create or delete anything.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The workspace root (the parent of the `xtask` package).
pub fn repo_root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask
        .parent()
        .map_or_else(|| xtask.join(".."), Path::to_path_buf)
}

/// `target/testenv/` under the workspace root: state, logs, PKI, etcd data and the kubeconfig.
/// Always the repository's `target/`, even with `CARGO_TARGET_DIR` set, because the kubeconfig
/// path is a contract (`target/testenv/kubeconfig`).
pub fn testenv_dir() -> PathBuf {
    repo_root().join("target").join("testenv")
}

pub fn kubeconfig() -> PathBuf {
    testenv_dir().join("kubeconfig")
}

pub fn state_file() -> PathBuf {
    testenv_dir().join("state.json")
}

pub fn lock_file() -> PathBuf {
    testenv_dir().join("lock")
}

pub fn logs_dir() -> PathBuf {
    testenv_dir().join("logs")
}

/// A server's log, `logs/<name>.log` (`hub-kube-apiserver`, `karmada-webhook`, …).
pub fn log_file(name: &str) -> PathBuf {
    logs_dir().join(format!("{name}.log"))
}

pub fn pki_dir() -> PathBuf {
    testenv_dir().join("pki")
}

/// Per-cluster runtime files (the controller-manager's private client config, cert-dir).
pub fn run_dir() -> PathBuf {
    testenv_dir().join("run")
}

/// Server data (etcd's); wiped on every fresh start and on `down`.
pub fn data_dir() -> PathBuf {
    testenv_dir().join("data")
}

pub fn etcd_data_dir() -> PathBuf {
    data_dir().join("etcd")
}

/// `${XDG_CACHE_HOME:-~/.cache}/flotilla/testenv/<k8s version>/`: built binaries, never in the
/// repository.
pub fn cache_dir(k8s_version: &str) -> Result<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .context("neither XDG_CACHE_HOME nor HOME is set: cannot place the binary cache")?;
            PathBuf::from(home).join(".cache")
        }
    };
    Ok(base.join("flotilla").join("testenv").join(k8s_version))
}

/// The Go wrapper modules committed under `xtask/go/`.
pub fn go_module_dir(name: &str) -> PathBuf {
    repo_root().join("xtask").join("go").join(name)
}

/// Shows `path` relative to the repository root when it is inside it.
pub fn display(path: &Path) -> String {
    let root = repo_root();
    path.strip_prefix(&root).map_or_else(
        |_| path.display().to_string(),
        |rel| rel.display().to_string(),
    )
}
