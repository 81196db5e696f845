//! User-facing configuration: themes, key maps and settings, built in and laid over by the
//! user's files under `$XDG_CONFIG_HOME/flotilla/`. Loading never fails the program: bad
//! entries become warnings shown in the console.

pub mod health_rules;
pub mod keymap;
pub mod theme;
pub mod wave_gate;

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::paths;
use wave_gate::WaveGate;

/// `$XDG_CONFIG_HOME/flotilla`, else `~/.config/flotilla` (see [`crate::paths`]).
pub fn user_dir() -> Option<PathBuf> {
    paths::config_dir()
}

/// Whether a theme or key map name is safe to use as a file name.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Reads `<dir>/<kind>/<name>.yaml` if it exists: `Some((path, text))`; a bad name or an
/// unreadable file becomes a warning.
fn read_user_file(
    dir: &Path,
    kind: &str,
    name: &str,
    warnings: &mut Vec<String>,
) -> Option<(String, String)> {
    if !valid_name(name) {
        warnings.push(format!(
            "{name:?} is not a usable {kind} name: use letters, digits, - and _"
        ));
        return None;
    }
    let path = paths::user_file(dir, kind, name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some((path.display().to_string(), text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => {
            warnings.push(format!("cannot read {}: {err}", path.display()));
            None
        }
    }
}

/// `config.yaml` in the user's directory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// Theme when `--theme` is not given.
    #[serde(default)]
    pub theme: Option<String>,
    /// Key map when `--keymap` is not given.
    #[serde(default)]
    pub keymap: Option<String>,
    /// Cluster name globs that get the danger cue (default `prod*` and `*-prod*`).
    #[serde(default)]
    pub danger_clusters: Option<Vec<String>>,
    /// When a propagation's next wave starts: `sync`, `healthy` (the default) or
    /// `healthy for N s`.
    #[serde(default)]
    pub wave_gate: Option<String>,
}

/// The danger class when the user names none.
pub const DEFAULT_DANGER: [&str; 2] = ["prod*", "*-prod*"];

impl Settings {
    /// Loads `<dir>/config.yaml`; a missing file is the defaults, a bad one a warning.
    pub fn load(dir: Option<&Path>) -> (Settings, Vec<String>) {
        let Some(dir) = dir else {
            return (Settings::default(), Vec::new());
        };
        let path = paths::settings_file(dir);
        match std::fs::read_to_string(&path) {
            Ok(text) => match serde_saphyr::from_str::<Settings>(&text) {
                Ok(settings) => {
                    let mut warnings = match settings.wave_gate.as_deref().map(WaveGate::parse) {
                        Some(Err(err)) => vec![format!(
                            "{}: waveGate: {err}; using healthy",
                            path.display()
                        )],
                        _ => Vec::new(),
                    };
                    for pattern in settings.danger_clusters.iter().flatten() {
                        if let Err(err) = crate::glob::check(pattern) {
                            warnings.push(format!(
                                "{}: dangerClusters: {err}; it marks only a cluster of that very name",
                                path.display()
                            ));
                        }
                    }
                    (settings, warnings)
                }
                Err(err) => (
                    Settings::default(),
                    vec![format!(
                        "{}: {err}; using defaults (keys: theme, keymap, dangerClusters, waveGate)",
                        path.display()
                    )],
                ),
            },
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                (Settings::default(), Vec::new())
            }
            Err(err) => (
                Settings::default(),
                vec![format!("cannot read {}: {err}", path.display())],
            ),
        }
    }

    /// The theme in use: `flag` (`--theme`), else the settings', else `dark`.
    pub fn theme_name(&self, flag: Option<&str>) -> String {
        flag.or(self.theme.as_deref()).unwrap_or("dark").to_string()
    }

    /// The key map in use: `flag` (`--keymap`), else the settings', else `default`.
    pub fn keymap_name(&self, flag: Option<&str>) -> String {
        flag.or(self.keymap.as_deref())
            .unwrap_or("default")
            .to_string()
    }

    /// The wave gate in use: the settings' when it parses (`load` warned otherwise), else
    /// `healthy`.
    pub fn wave_gate(&self) -> WaveGate {
        self.wave_gate
            .as_deref()
            .and_then(|text| WaveGate::parse(text).ok())
            .unwrap_or_default()
    }

    pub fn danger_patterns(&self) -> Vec<String> {
        self.danger_clusters
            .clone()
            .unwrap_or_else(|| DEFAULT_DANGER.map(String::from).to_vec())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_escape_the_directory_are_refused() {
        assert!(valid_name("dark"));
        assert!(valid_name("my_theme-2"));
        for bad in ["", "../x", "a/b", "..", "x.yaml", "sp ace"] {
            assert!(!valid_name(bad), "{bad:?}");
        }
        let mut warnings = Vec::new();
        let dir = tempfile::tempdir().unwrap();
        assert!(read_user_file(dir.path(), "themes", "../../etc/passwd", &mut warnings).is_none());
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn settings_load_and_bad_files_warn() {
        let dir = tempfile::tempdir().unwrap();
        let (settings, warnings) = Settings::load(Some(dir.path()));
        assert!(warnings.is_empty());
        assert_eq!(settings.danger_patterns(), vec!["prod*", "*-prod*"]);
        std::fs::write(
            dir.path().join("config.yaml"),
            "theme: light\ndangerClusters: [live-*]\n",
        )
        .unwrap();
        let (settings, warnings) = Settings::load(Some(dir.path()));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(settings.theme.as_deref(), Some("light"));
        assert_eq!(settings.danger_patterns(), vec!["live-*"]);
        assert_eq!(settings.wave_gate(), WaveGate::Healthy { for_ms: 0 });
        std::fs::write(
            dir.path().join("config.yaml"),
            "waveGate: healthy for 30s\n",
        )
        .unwrap();
        let (settings, warnings) = Settings::load(Some(dir.path()));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(settings.wave_gate(), WaveGate::Healthy { for_ms: 30_000 });
        std::fs::write(dir.path().join("config.yaml"), "waveGate: green\n").unwrap();
        let (settings, warnings) = Settings::load(Some(dir.path()));
        assert!(
            warnings.len() == 1 && warnings[0].contains("config.yaml: waveGate: \"green\""),
            "{warnings:?}"
        );
        assert_eq!(settings.wave_gate(), WaveGate::default());
        std::fs::write(dir.path().join("config.yaml"), "colour: loud\n").unwrap();
        let (_, warnings) = Settings::load(Some(dir.path()));
        assert!(warnings[0].contains("dangerClusters"), "{warnings:?}");
    }
}
