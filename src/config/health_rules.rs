//! Reads the health rules an operator keeps, as Argo CD keeps them: a directory in Argo CD's
//! `resource_customizations` layout (`GROUP/KIND/health.lua`, `_` for any group part or kind)
//! whose top-level `*.yaml`/`*.yml` files are `argocd-cm`-shaped ConfigMaps
//! (`resource.customizations.health.GROUP_KIND` keys), or such a ConfigMap file named
//! directly. Sources come from `--health-rules` (in the order given) and then
//! `$XDG_CONFIG_HOME/flotilla/health/`. This module only reads texts: it must not compile or
//! run a rule (the engine does), and a missing user directory is no error.

use std::fs;
use std::path::{Path, PathBuf};

/// The file name of a rule in a rules directory.
pub const HEALTH_FILE: &str = "health.lua";

/// The most rule files one directory may hold, and the largest one read: far beyond Argo
/// CD's own few hundred scripts of a few kilobytes.
const MAX_FILES: usize = 10_000;
const MAX_BYTES: u64 = 1 << 20;

/// One place rules came from, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleSource {
    /// A rules directory: each `health.lua` by its path relative to `root` (`/`-separated),
    /// and the ConfigMaps at its top.
    Directory {
        root: PathBuf,
        scripts: Vec<(String, String)>,
        config_maps: Vec<(PathBuf, String)>,
    },
    /// A ConfigMap file named on the command line.
    ConfigMap { path: PathBuf, text: String },
}

/// Why a named source could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HealthRulesError {
    #[error("--health-rules {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("--health-rules {}: more than {MAX_FILES} rule files", path.display())]
    TooMany { path: PathBuf },
    #[error("{}: larger than {} KiB", path.display(), MAX_BYTES >> 10)]
    TooLarge { path: PathBuf },
}

/// The directory below the user's configuration that holds rules.
pub fn user_dir(config_dir: &Path) -> PathBuf {
    config_dir.join("health")
}

/// Reads every `--health-rules` path (a directory or a ConfigMap file), then the user's
/// directory if it exists. A named path that cannot be read is an error; the user's
/// directory, read the same way, only warns.
pub fn read(
    named: &[PathBuf],
    config_dir: Option<&Path>,
) -> Result<(Vec<RuleSource>, Vec<String>), HealthRulesError> {
    let mut sources = Vec::new();
    for path in named {
        sources.push(read_one(path)?);
    }
    let mut warnings = Vec::new();
    if let Some(dir) = config_dir.map(user_dir).filter(|dir| dir.is_dir()) {
        match read_one(&dir) {
            Ok(source) => sources.push(source),
            Err(error) => warnings.push(format!("health rules not read: {error}")),
        }
    }
    Ok((sources, warnings))
}

fn read_one(path: &Path) -> Result<RuleSource, HealthRulesError> {
    let unreadable = |source| HealthRulesError::Unreadable {
        path: path.to_path_buf(),
        source,
    };
    let meta = fs::metadata(path).map_err(unreadable)?;
    if !meta.is_dir() {
        return Ok(RuleSource::ConfigMap {
            path: path.to_path_buf(),
            text: read_text(path)?,
        });
    }
    let mut scripts = Vec::new();
    let mut config_maps = Vec::new();
    let mut top: Vec<PathBuf> = fs::read_dir(path)
        .map_err(unreadable)?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .collect();
    top.sort();
    for entry in top {
        if entry.is_dir() {
            walk(path, &entry, 0, &mut scripts)?;
        } else if entry
            .extension()
            .is_some_and(|ext| ext == "yaml" || ext == "yml")
        {
            config_maps.push((entry.clone(), read_text(&entry)?));
        }
    }
    Ok(RuleSource::Directory {
        root: path.to_path_buf(),
        scripts,
        config_maps,
    })
}

/// Collects `health.lua` files up to two levels below a top directory (`GROUP/KIND/` and, for
/// the core group, `KIND/`).
fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    scripts: &mut Vec<(String, String)>,
) -> Result<(), HealthRulesError> {
    let file = dir.join(HEALTH_FILE);
    if file.is_file() {
        if scripts.len() >= MAX_FILES {
            return Err(HealthRulesError::TooMany {
                path: root.to_path_buf(),
            });
        }
        let relative = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .components()
            .map(|part| part.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        scripts.push((relative, read_text(&file)?));
    }
    if depth >= 1 {
        return Ok(());
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    let mut below: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.is_dir())
        .collect();
    below.sort();
    for next in below {
        walk(root, &next, depth + 1, scripts)?;
    }
    Ok(())
}

fn read_text(path: &Path) -> Result<String, HealthRulesError> {
    let unreadable = |source| HealthRulesError::Unreadable {
        path: path.to_path_buf(),
        source,
    };
    let meta = fs::metadata(path).map_err(unreadable)?;
    if meta.len() > MAX_BYTES {
        return Err(HealthRulesError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    fs::read_to_string(path).map_err(unreadable)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_gives_its_scripts_by_layout_and_its_config_maps() {
        let dir = tempfile::tempdir().unwrap();
        let rule = dir.path().join("cert-manager.io/Certificate");
        fs::create_dir_all(&rule).unwrap();
        fs::write(rule.join("health.lua"), "return nil").unwrap();
        fs::write(rule.join("health_test.yaml"), "tests: []").unwrap();
        fs::create_dir_all(dir.path().join("ConfigMap")).unwrap();
        fs::write(dir.path().join("ConfigMap/health.lua"), "return nil").unwrap();
        fs::write(dir.path().join("argocd-cm.yaml"), "data: {}").unwrap();
        let (sources, warnings) = read(&[dir.path().to_path_buf()], None).unwrap();
        assert!(warnings.is_empty());
        let RuleSource::Directory {
            scripts,
            config_maps,
            ..
        } = &sources[0]
        else {
            panic!("{sources:?}")
        };
        let names: Vec<&str> = scripts.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(
            names,
            [
                "ConfigMap/health.lua",
                "cert-manager.io/Certificate/health.lua"
            ]
        );
        assert_eq!(config_maps.len(), 1);
    }

    #[test]
    fn a_named_path_that_is_missing_is_an_error_the_user_directory_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        assert!(matches!(
            read(std::slice::from_ref(&missing), None),
            Err(HealthRulesError::Unreadable { .. })
        ));
        let (sources, warnings) = read(&[], Some(dir.path())).unwrap();
        assert!(sources.is_empty() && warnings.is_empty());
    }
}
