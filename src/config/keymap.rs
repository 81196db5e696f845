//! Key maps: which keys trigger which named console command. Built-in maps live in
//! `keymaps/*.yaml` (embedded); the help screen is generated from the map in use. Bad entries
//! become warnings, never errors. It must not know what a command does, only its name, nor
//! read terminal events (the console turns those into [`Key`]s).

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;

/// Every command a key can trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyCommand {
    Quit,
    Help,
    Back,
    FocusNext,
    FocusPrev,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Left,
    Right,
    Filter,
    Palette,
    Sort,
    Collapse,
    Apply,
    EditPlacement,
    EditOverrides,
    Undo,
    Select,
    Drift,
    PauseRollout,
}

impl KeyCommand {
    pub const ALL: [KeyCommand; 24] = [
        KeyCommand::Quit,
        KeyCommand::Help,
        KeyCommand::Back,
        KeyCommand::FocusNext,
        KeyCommand::FocusPrev,
        KeyCommand::Up,
        KeyCommand::Down,
        KeyCommand::PageUp,
        KeyCommand::PageDown,
        KeyCommand::Top,
        KeyCommand::Bottom,
        KeyCommand::Left,
        KeyCommand::Right,
        KeyCommand::Filter,
        KeyCommand::Palette,
        KeyCommand::Sort,
        KeyCommand::Collapse,
        KeyCommand::Apply,
        KeyCommand::EditPlacement,
        KeyCommand::EditOverrides,
        KeyCommand::Undo,
        KeyCommand::Select,
        KeyCommand::Drift,
        KeyCommand::PauseRollout,
    ];

    /// The name used in key map files.
    pub fn name(self) -> &'static str {
        match self {
            KeyCommand::Quit => "quit",
            KeyCommand::Help => "help",
            KeyCommand::Back => "back",
            KeyCommand::FocusNext => "focus-next",
            KeyCommand::FocusPrev => "focus-prev",
            KeyCommand::Up => "up",
            KeyCommand::Down => "down",
            KeyCommand::PageUp => "page-up",
            KeyCommand::PageDown => "page-down",
            KeyCommand::Top => "top",
            KeyCommand::Bottom => "bottom",
            KeyCommand::Left => "left",
            KeyCommand::Right => "right",
            KeyCommand::Filter => "filter",
            KeyCommand::Palette => "palette",
            KeyCommand::Sort => "sort",
            KeyCommand::Collapse => "collapse",
            KeyCommand::Apply => "apply",
            KeyCommand::EditPlacement => "edit-placement",
            KeyCommand::EditOverrides => "edit-overrides",
            KeyCommand::Undo => "undo",
            KeyCommand::Select => "select",
            KeyCommand::Drift => "drift",
            KeyCommand::PauseRollout => "pause",
        }
    }

    /// What the help screen says about it.
    pub fn description(self) -> &'static str {
        match self {
            KeyCommand::Quit => "quit flotilla",
            KeyCommand::Help => "show or hide this help",
            KeyCommand::Back => "close the overlay / go back",
            KeyCommand::FocusNext => "next pane · a cell's next view",
            KeyCommand::FocusPrev => "previous pane · previous view",
            KeyCommand::Up => "move up",
            KeyCommand::Down => "move down",
            KeyCommand::PageUp => "page up",
            KeyCommand::PageDown => "page down",
            KeyCommand::Top => "first row",
            KeyCommand::Bottom => "last row",
            KeyCommand::Left => "previous cluster column",
            KeyCommand::Right => "next cluster column",
            KeyCommand::Filter => "filter the focused pane (fuzzy, !not, glob, -l key=value)",
            KeyCommand::Palette => "command palette (:cluster :kind :status :group :sort …)",
            KeyCommand::Sort => "cycle the focused pane's sort order",
            KeyCommand::Collapse => "matrix: one heat strip per cluster group",
            KeyCommand::Apply => {
                "propagate the selected resource where it is not in sync (asks first); on a Karmada hub, reschedule it"
            }
            KeyCommand::EditPlacement => {
                "edit where the selected resource goes, with a preview before anything is written"
            }
            KeyCommand::EditOverrides => {
                "edit the selected cell's per-cluster overrides, with a preview before anything is written"
            }
            KeyCommand::Undo => {
                "undo the last placement change (asks first, lists what it deletes)"
            }
            KeyCommand::Select => {
                "drill in: a cluster's column, a cell's object (tab: desired, live, diff, Events, clusters)"
            }
            KeyCommand::Drift => {
                "drift view: every drifted field, grouped; r revert · a adopt · i ignore · space mark (asks first)"
            }
            KeyCommand::PauseRollout => "pause a propagation (the next wave waits) or resume it",
        }
    }

    /// Whether the command can write to clusters (disabled and hidden when read-only).
    pub fn is_mutating(self) -> bool {
        matches!(
            self,
            KeyCommand::Apply
                | KeyCommand::EditPlacement
                | KeyCommand::EditOverrides
                | KeyCommand::Undo
        )
    }

    pub fn from_name(name: &str) -> Option<KeyCommand> {
        KeyCommand::ALL
            .into_iter()
            .find(|command| command.name() == name)
    }
}

/// A key with its modifiers, as written in key map files (`q`, `ctrl-c`, `shift-tab`, `pagedown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    pub code: KeyCodeName,
    pub ctrl: bool,
    pub alt: bool,
}

/// The key codes a map can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyCodeName {
    Char(char),
    Enter,
    Esc,
    Tab,
    BackTab,
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Home,
    End,
    Backspace,
}

impl Key {
    /// Parses `q`, `G`, `?`, `ctrl-c`, `alt-x`, `tab`, `shift-tab`, `pagedown`, `space`.
    pub fn parse(text: &str) -> Result<Key, String> {
        let mut ctrl = false;
        let mut alt = false;
        let mut rest = text;
        loop {
            if let Some(tail) = rest.strip_prefix("ctrl-") {
                ctrl = true;
                rest = tail;
            } else if let Some(tail) = rest.strip_prefix("alt-") {
                alt = true;
                rest = tail;
            } else {
                break;
            }
        }
        let code = match rest {
            "enter" => KeyCodeName::Enter,
            "esc" => KeyCodeName::Esc,
            "tab" => KeyCodeName::Tab,
            "shift-tab" | "backtab" => KeyCodeName::BackTab,
            "up" => KeyCodeName::Up,
            "down" => KeyCodeName::Down,
            "left" => KeyCodeName::Left,
            "right" => KeyCodeName::Right,
            "pageup" => KeyCodeName::PageUp,
            "pagedown" => KeyCodeName::PageDown,
            "home" => KeyCodeName::Home,
            "end" => KeyCodeName::End,
            "backspace" => KeyCodeName::Backspace,
            "space" => KeyCodeName::Char(' '),
            single if single.chars().count() == 1 => {
                KeyCodeName::Char(single.chars().next().unwrap_or(' '))
            }
            _ => return Err(format!("unknown key {text:?}")),
        };
        Ok(Key { code, ctrl, alt })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        match self.code {
            KeyCodeName::Char(' ') => f.write_str("space"),
            KeyCodeName::Char(c) => write!(f, "{c}"),
            KeyCodeName::Enter => f.write_str("enter"),
            KeyCodeName::Esc => f.write_str("esc"),
            KeyCodeName::Tab => f.write_str("tab"),
            KeyCodeName::BackTab => f.write_str("shift-tab"),
            KeyCodeName::Up => f.write_str("↑"),
            KeyCodeName::Down => f.write_str("↓"),
            KeyCodeName::Left => f.write_str("←"),
            KeyCodeName::Right => f.write_str("→"),
            KeyCodeName::PageUp => f.write_str("pageup"),
            KeyCodeName::PageDown => f.write_str("pagedown"),
            KeyCodeName::Home => f.write_str("home"),
            KeyCodeName::End => f.write_str("end"),
            KeyCodeName::Backspace => f.write_str("backspace"),
        }
    }
}

/// A loaded key map: keys to commands, plus warnings about entries it could not use.
#[derive(Debug, Clone, Default)]
pub struct Keymap {
    pub name: String,
    bindings: BTreeMap<Key, KeyCommand>,
    /// Keys per command in the order the file lists them, so hints show the first one.
    listed: BTreeMap<KeyCommand, Vec<Key>>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct KeymapFile {
    #[serde(default)]
    global: BTreeMap<String, Vec<String>>,
}

/// The shipped key maps, embedded so the binary needs no files.
pub const BUILT_IN: [(&str, &str); 3] = [
    ("default", include_str!("../../keymaps/default.yaml")),
    ("vim", include_str!("../../keymaps/vim.yaml")),
    ("k9s", include_str!("../../keymaps/k9s.yaml")),
];

impl Keymap {
    /// A map by name with `<user_dir>/keymaps/<name>.yaml` laid over the built-in of the same
    /// name (or over `default`): each command the user lists gets exactly the user's keys.
    pub fn load(name: &str, user_dir: Option<&std::path::Path>) -> Keymap {
        let mut warnings = Vec::new();
        let user =
            user_dir.and_then(|dir| super::read_user_file(dir, "keymaps", name, &mut warnings));
        let known = BUILT_IN.iter().any(|(candidate, _)| *candidate == name);
        let mut map = if known || user.is_none() {
            Keymap::built_in(name)
        } else {
            let mut map = Keymap::built_in("default");
            map.name = name.to_string();
            map
        };
        if let Some((path, text)) = user {
            let overlay = Keymap::parse(name, &text, &path);
            for (command, keys) in overlay.listed {
                map.bindings.retain(|_, bound| *bound != command);
                map.listed.insert(command, Vec::new());
                for key in keys {
                    if let Some(previous) = map.bindings.insert(key, command)
                        && previous != command
                    {
                        map.warnings.push(format!(
                            "{path}: key {key} was bound to {}; now {}",
                            previous.name(),
                            command.name()
                        ));
                    }
                    map.listed.entry(command).or_default().push(key);
                }
            }
            map.warnings.extend(overlay.warnings);
        }
        map.warnings.splice(0..0, warnings);
        map
    }

    /// A built-in map by name; unknown names fall back to `default` with a warning.
    pub fn built_in(name: &str) -> Keymap {
        let text = BUILT_IN
            .iter()
            .find(|(candidate, _)| *candidate == name)
            .map(|(_, text)| *text);
        match text {
            Some(text) => Keymap::parse(name, text, &format!("keymaps/{name}.yaml")),
            None => {
                let mut map = Keymap::parse("default", BUILT_IN[0].1, "keymaps/default.yaml");
                map.warnings.insert(
                    0,
                    format!(
                        "no key map named {name:?}; using default (shipped: {})",
                        BUILT_IN.map(|(name, _)| name).join(", ")
                    ),
                );
                map
            }
        }
    }

    /// Parses a key map file; whatever cannot be used becomes a warning naming `origin`.
    pub fn parse(name: &str, text: &str, origin: &str) -> Keymap {
        let mut map = Keymap {
            name: name.to_string(),
            ..Keymap::default()
        };
        let file: KeymapFile = match serde_saphyr::from_str(text) {
            Ok(file) => file,
            Err(err) => {
                map.warnings
                    .push(format!("{origin}: not a key map ({err}); keys unchanged"));
                return map;
            }
        };
        for (command_name, keys) in file.global {
            let Some(command) = KeyCommand::from_name(&command_name) else {
                map.warnings.push(format!(
                    "{origin}: unknown command {command_name:?}; known: {}",
                    KeyCommand::ALL.map(KeyCommand::name).join(", ")
                ));
                continue;
            };
            for key_text in keys {
                match Key::parse(&key_text) {
                    Ok(key) => {
                        map.listed.entry(command).or_default().push(key);
                        if let Some(previous) = map.bindings.insert(key, command)
                            && previous != command
                        {
                            map.warnings.push(format!(
                                "{origin}: key {key} is bound to both {} and {}; using {}",
                                previous.name(),
                                command.name(),
                                command.name()
                            ));
                        }
                    }
                    Err(err) => map
                        .warnings
                        .push(format!("{origin}: {command_name}: {err}")),
                }
            }
        }
        map
    }

    /// The command a key triggers, if any.
    pub fn command_for(&self, key: Key) -> Option<KeyCommand> {
        self.bindings.get(&key).copied()
    }

    /// The keys bound to a command, for help and hints.
    pub fn keys_for(&self, command: KeyCommand) -> Vec<Key> {
        self.listed
            .get(&command)
            .into_iter()
            .flatten()
            .filter(|key| self.bindings.get(key) == Some(&command))
            .copied()
            .collect()
    }

    /// Help lines: (keys, description) for every bound command, in a stable order; without
    /// the mutating ones when `readonly`.
    pub fn help_entries(&self, readonly: bool) -> Vec<(String, &'static str)> {
        KeyCommand::ALL
            .into_iter()
            .filter(|command| !(readonly && command.is_mutating()))
            .filter_map(|command| {
                let keys = self.keys_for(command);
                (!keys.is_empty()).then(|| {
                    let names: Vec<String> = keys.iter().map(Key::to_string).collect();
                    (names.join(" "), command.description())
                })
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn key(text: &str) -> Key {
        Key::parse(text).unwrap()
    }

    #[test]
    fn the_default_map_binds_quit_help_and_moves_without_warnings() {
        let map = Keymap::built_in("default");
        assert!(map.warnings.is_empty(), "{:?}", map.warnings);
        let quit = key("q");
        assert_eq!(map.command_for(quit), Some(KeyCommand::Quit));
        let ctrl_c = key("ctrl-c");
        assert_eq!(map.command_for(ctrl_c), Some(KeyCommand::Quit));
        let help = key("?");
        assert_eq!(map.command_for(help), Some(KeyCommand::Help));
        let j = key("j");
        assert_eq!(map.command_for(j), Some(KeyCommand::Down));
        assert_eq!(
            map.keys_for(KeyCommand::Quit)[0].to_string(),
            "q",
            "file order is kept"
        );
    }

    #[test]
    fn every_shipped_key_map_loads_cleanly_and_can_quit() {
        for (name, _) in BUILT_IN {
            let map = Keymap::built_in(name);
            assert!(map.warnings.is_empty(), "{name}: {:?}", map.warnings);
            for command in [
                KeyCommand::Quit,
                KeyCommand::Help,
                KeyCommand::Filter,
                KeyCommand::Palette,
            ] {
                assert!(
                    !map.keys_for(command).is_empty(),
                    "{name} has no key for {command:?}"
                );
            }
        }
    }

    #[test]
    fn user_files_replace_only_the_commands_they_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("keymaps")).unwrap();
        std::fs::write(
            dir.path().join("keymaps/default.yaml"),
            "global:\n  quit: [x]\n",
        )
        .unwrap();
        let map = Keymap::load("default", Some(dir.path()));
        assert!(map.warnings.is_empty(), "{:?}", map.warnings);
        let x = key("x");
        let q = key("q");
        assert_eq!(map.command_for(x), Some(KeyCommand::Quit));
        assert_eq!(
            map.command_for(q),
            None,
            "the user's keys replace the built-in ones"
        );
        let j = key("j");
        assert_eq!(map.command_for(j), Some(KeyCommand::Down), "the rest stays");
    }

    #[test]
    fn bad_entries_warn_and_keep_the_rest() {
        let map = Keymap::parse(
            "mine",
            "global:\n  quit: [x, ctrl-]\n  launch-rockets: [r]\n  down: [j]\n  up: [j]\n",
            "mine.yaml",
        );
        assert_eq!(map.warnings.len(), 3, "{:?}", map.warnings);
        assert!(map.warnings.iter().any(|w| w.contains("launch-rockets")));
        assert!(map.warnings.iter().any(|w| w.contains("bound to both")));
        let x = key("x");
        assert_eq!(map.command_for(x), Some(KeyCommand::Quit));
    }

    #[test]
    fn unparsable_files_warn_instead_of_failing() {
        let map = Keymap::parse("broken", "global: [unclosed", "broken.yaml");
        assert_eq!(map.warnings.len(), 1);
        assert!(map.warnings[0].starts_with("broken.yaml"));
    }

    #[test]
    fn help_is_built_from_the_live_map() {
        let map = Keymap::parse("mine", "global:\n  quit: [x]\n", "mine.yaml");
        assert_eq!(
            map.help_entries(false),
            vec![("x".to_string(), "quit flotilla")]
        );
        let full = Keymap::built_in("default");
        assert!(
            full.help_entries(false)
                .iter()
                .any(|(_, d)| d.starts_with("propagate"))
        );
        assert!(
            !full
                .help_entries(true)
                .iter()
                .any(|(_, d)| d.starts_with("propagate")),
            "read-only help offers no write"
        );
    }

    #[test]
    fn keys_round_trip_through_their_names() {
        for text in [
            "q",
            "G",
            "?",
            "ctrl-c",
            "tab",
            "shift-tab",
            "pagedown",
            "space",
            "alt-x",
        ] {
            let key = Key::parse(text).unwrap();
            assert_eq!(Key::parse(&key.to_string()).unwrap(), key, "{text}");
        }
        assert!(Key::parse("hyper-q").is_err());
    }
}
