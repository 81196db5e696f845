//! `flotilla info`: where flotilla's files live on this machine — the user's configuration
//! (settings, theme, key map), its state (audit log, edit journal, log file), the fleet files' backups and
//! the kubeconfig files in use — whether each exists, and the version. Every path comes from
//! [`crate::paths`]; this command only looks, it must not create or read any of them.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cli::{GlobalArgs, exit};
use crate::config::{Settings, health_rules, keymap, theme};
use crate::fleet::save::BACKUP_SUFFIX;
use crate::output::{self, Table};
use crate::paths;

/// `info -o json`: `{"version", "items":[{"name","path","exists","note"}]}`.
#[derive(Debug, Serialize)]
pub struct Info {
    pub version: &'static str,
    pub items: Vec<InfoItem>,
}

/// One file or directory flotilla uses. `path` is null when there is no home directory to
/// put it in.
#[derive(Debug, Serialize)]
pub struct InfoItem {
    pub name: &'static str,
    pub path: Option<PathBuf>,
    pub exists: bool,
    pub note: String,
}

impl InfoItem {
    fn new(name: &'static str, path: Option<PathBuf>, note: impl Into<String>) -> InfoItem {
        InfoItem {
            name,
            exists: path.as_deref().is_some_and(Path::exists),
            path,
            note: note.into(),
        }
    }
}

/// Everything `info` reports, for these flags.
pub fn collect(global: &GlobalArgs) -> Info {
    let config_dir = paths::config_dir();
    let (settings, _) = Settings::load(config_dir.as_deref());
    let theme_name = settings.theme_name(global.theme.as_deref());
    let keymap_name = settings.keymap_name(global.keymap.as_deref());
    let in_config = |kind: &str, name: &str| {
        config_dir
            .as_deref()
            .map(|dir| paths::user_file(dir, kind, name))
    };
    let built_in = |known: &[&str], name: &str| {
        if known.contains(&name) {
            format!("{name}: built in; a file here is laid over it")
        } else {
            format!("{name}: not built in; read from this file")
        }
    };
    let themes: Vec<&str> = theme::BUILT_IN.iter().map(|(name, _)| *name).collect();
    let keymaps: Vec<&str> = keymap::BUILT_IN.iter().map(|(name, _)| *name).collect();
    let (log_path, log_note) = match &global.log_file {
        Some(path) => (Some(path.clone()), "from --log-file"),
        None => (
            paths::default_log_file(),
            "the default; --log-file changes it",
        ),
    };
    let mut items = vec![
        InfoItem::new(
            "config",
            config_dir.clone(),
            "$XDG_CONFIG_HOME/flotilla, else ~/.config/flotilla",
        ),
        InfoItem::new(
            "settings",
            config_dir.as_deref().map(paths::settings_file),
            "keys: theme, keymap, dangerClusters, waveGate",
        ),
        InfoItem::new(
            "theme",
            in_config("themes", &theme_name),
            built_in(&themes, &theme_name),
        ),
        InfoItem::new(
            "keymap",
            in_config("keymaps", &keymap_name),
            built_in(&keymaps, &keymap_name),
        ),
        InfoItem::new(
            "state",
            paths::state_dir(),
            "$XDG_STATE_HOME/flotilla, else ~/.local/state/flotilla",
        ),
        InfoItem::new("audit", paths::audit_log(), "every write flotilla sent"),
        InfoItem::new(
            "edits",
            paths::edit_journal(),
            "the last edits of each fleet, which `flotilla undo` takes back",
        ),
        InfoItem::new(
            "health",
            config_dir.as_deref().map(health_rules::user_dir),
            "Argo CD health rules (GROUP/KIND/health.lua or argocd-cm files), read at every start",
        ),
        InfoItem::new("log", log_path, log_note),
        InfoItem::new(
            "backups",
            Some(global.fleet.clone()),
            format!(
                "each fleet file flotilla edits keeps its previous text beside it as FILE{BACKUP_SUFFIX}"
            ),
        ),
    ];
    items.extend(global.health_rules.iter().map(|path| {
        InfoItem::new(
            "health",
            Some(path.clone()),
            "from --health-rules, read before the directory above",
        )
    }));
    items.extend(
        paths::kubeconfig_files(global.kubeconfig.as_deref())
            .into_iter()
            .map(|path| InfoItem::new("kubeconfig", Some(path), kubeconfig_note(global))),
    );
    Info {
        version: env!("CARGO_PKG_VERSION"),
        items,
    }
}

fn kubeconfig_note(global: &GlobalArgs) -> &'static str {
    if global.kubeconfig.is_some() {
        "from --kubeconfig"
    } else if std::env::var_os("KUBECONFIG").is_some_and(|value| !value.is_empty()) {
        "from $KUBECONFIG"
    } else {
        "the default"
    }
}

/// `flotilla info`.
pub fn run(global: &GlobalArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let info = collect(global);
    output::write(out, &global.output, &info, || {
        let mut table = Table::new(&["NAME", "PATH", "EXISTS", "NOTE"]);
        for item in &info.items {
            let path = item.path.as_deref().map_or_else(
                || "(no home directory)".to_string(),
                |p| p.display().to_string(),
            );
            table.row(
                path.clone(),
                vec![
                    item.name.to_string(),
                    path,
                    if item.exists { "yes" } else { "no" }.to_string(),
                    item.note.clone(),
                ],
            );
        }
        table.footer(format!("flotilla {}", info.version));
        table
    })?;
    Ok(exit::OK)
}
