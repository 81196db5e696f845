//! Key maps: which keys trigger which named console command, one section per part of the
//! console — `global` (the main view, also spelled `main`), `object` (a cell's object view),
//! `logs` (the log pane),
//! `drift` (the drift view), `placement` (the placement editor), `overrides` (the override
//! editor's rules), `editor` (the editors' review of changes) and `ocm-placement` (the Open
//! Cluster Management Placement editor). Built-in maps live in `keymaps/*.yaml`
//! (embedded); the help screen is generated from the map in use. A user file's unknown
//! section, command or key, and a key bound twice in one section, are errors naming the file
//! and line. It must not know what a command does, only its name, nor read terminal events
//! (the console turns those into [`Key`]s).

use std::collections::BTreeMap;
use std::fmt;

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
    Detail,
    Apply,
    EditPlacement,
    EditOverrides,
    Undo,
    Select,
    Drift,
    PauseRollout,
    Exec,
    Logs,
}

impl KeyCommand {
    pub const ALL: [KeyCommand; 27] = [
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
        KeyCommand::Detail,
        KeyCommand::Apply,
        KeyCommand::EditPlacement,
        KeyCommand::EditOverrides,
        KeyCommand::Undo,
        KeyCommand::Select,
        KeyCommand::Drift,
        KeyCommand::PauseRollout,
        KeyCommand::Exec,
        KeyCommand::Logs,
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
            KeyCommand::Detail => "detail",
            KeyCommand::Apply => "apply",
            KeyCommand::EditPlacement => "edit-placement",
            KeyCommand::EditOverrides => "edit-overrides",
            KeyCommand::Undo => "undo",
            KeyCommand::Select => "select",
            KeyCommand::Drift => "drift",
            KeyCommand::PauseRollout => "pause",
            KeyCommand::Exec => "exec",
            KeyCommand::Logs => "logs",
        }
    }

    /// What the help screen says about it.
    pub fn description(self) -> &'static str {
        match self {
            KeyCommand::Quit => "quit flotilla",
            KeyCommand::Help => "show or hide this help",
            KeyCommand::Back => "close the overlay / go back",
            KeyCommand::FocusNext => "next pane",
            KeyCommand::FocusPrev => "previous pane",
            KeyCommand::Up => "move up",
            KeyCommand::Down => "move down",
            KeyCommand::PageUp => "page up",
            KeyCommand::PageDown => "page down",
            KeyCommand::Top => "first row",
            KeyCommand::Bottom => "last row",
            KeyCommand::Left => "previous cluster column",
            KeyCommand::Right => "next cluster column",
            KeyCommand::Filter => "filter the focused pane (fuzzy, !not, glob, -l key=value)",
            KeyCommand::Palette => "command palette (:cluster :kind :status :pods :sort …)",
            KeyCommand::Sort => "cycle the focused pane's sort order",
            KeyCommand::Collapse => "matrix: one heat strip per cluster group",
            KeyCommand::Detail => "the selection's Detail, full width over the panes",
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
                "drift view: every drifted field, grouped, to revert, adopt or ignore (its keys below; each asks first)"
            }
            KeyCommand::PauseRollout => "pause a propagation (the next wave waits) or resume it",
            KeyCommand::Logs => {
                "log pane: the selected cell's workload's pod logs (collapsed matrix: every placed cluster of the row)"
            }
            KeyCommand::Exec => {
                "run a command in a pod of the selected cell's workload (default sh); the terminal is the command's until it ends"
            }
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
                | KeyCommand::Exec
        )
    }

    pub fn from_name(name: &str) -> Option<KeyCommand> {
        KeyCommand::ALL
            .into_iter()
            .find(|command| command.name() == name)
    }
}

/// The parts of the console that read keys of their own, each a section of a key map file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Section {
    /// A cell's object view (`enter` on a cell): its views, scrolling and other clusters.
    Object,
    /// The drift view (`D`): its fields and ignore rules.
    Drift,
    /// The placement editor (`e`): its cluster list, and the keys that leave its text fields.
    Placement,
    /// The override editor (`o`): its list of rules, before a rule's form opens.
    Overrides,
    /// The placement and override editors' review of the changes before anything is saved.
    Editor,
    /// The Open Cluster Management Placement editor (`e` on an OCM hub): the list of
    /// Placements, and the keys that leave its text fields.
    OcmPlacement,
    /// The wall display (`flotilla watch`): turning the heat map's pages.
    Wall,
    /// The log pane (`L`): following, pausing, searching and narrowing the streamed lines.
    Logs,
}

impl Section {
    /// In help order.
    pub const ALL: [Section; 8] = [
        Section::Object,
        Section::Logs,
        Section::Drift,
        Section::Placement,
        Section::Overrides,
        Section::Editor,
        Section::OcmPlacement,
        Section::Wall,
    ];

    /// The section's name in key map files.
    pub fn name(self) -> &'static str {
        match self {
            Section::Object => "object",
            Section::Drift => "drift",
            Section::Placement => "placement",
            Section::Overrides => "overrides",
            Section::Editor => "editor",
            Section::OcmPlacement => "ocm-placement",
            Section::Wall => "wall",
            Section::Logs => "logs",
        }
    }

    /// Where the section's keys work, for the help screen and the README.
    pub fn title(self) -> &'static str {
        match self {
            Section::Object => "In a cell's object view",
            Section::Drift => "In the drift view",
            Section::Placement => "In the placement editor",
            Section::Overrides => "In the override editor's list of rules",
            Section::Editor => "In an editor's review of the changes",
            Section::OcmPlacement => "In the Open Cluster Management Placement editor",
            Section::Wall => "On the wall display of `flotilla watch`, where q quits",
            Section::Logs => "In the log pane",
        }
    }

    /// The commands the section can bind, in help order.
    pub fn commands(self) -> &'static [ViewCommand] {
        match self {
            Section::Object => &[
                ViewCommand::Back,
                ViewCommand::NextView,
                ViewCommand::PrevView,
                ViewCommand::Up,
                ViewCommand::Down,
                ViewCommand::PageUp,
                ViewCommand::PageDown,
                ViewCommand::Top,
                ViewCommand::PrevCluster,
                ViewCommand::NextCluster,
                ViewCommand::Help,
            ],
            Section::Drift => &[
                ViewCommand::Back,
                ViewCommand::Up,
                ViewCommand::Down,
                ViewCommand::Top,
                ViewCommand::Bottom,
                ViewCommand::SwitchPane,
                ViewCommand::Mark,
                ViewCommand::Revert,
                ViewCommand::Adopt,
                ViewCommand::Ignore,
                ViewCommand::RemoveRule,
                ViewCommand::Help,
            ],
            Section::Placement => &[
                ViewCommand::Back,
                ViewCommand::NextField,
                ViewCommand::Up,
                ViewCommand::Down,
                ViewCommand::Toggle,
                ViewCommand::Review,
                ViewCommand::Help,
            ],
            Section::Overrides => &[
                ViewCommand::Back,
                ViewCommand::Up,
                ViewCommand::Down,
                ViewCommand::Patch,
                ViewCommand::Image,
                ViewCommand::Replicas,
                ViewCommand::Label,
                ViewCommand::Annotation,
                ViewCommand::Env,
                ViewCommand::EditRule,
                ViewCommand::DeleteRule,
                ViewCommand::MoveUp,
                ViewCommand::MoveDown,
                ViewCommand::Review,
                ViewCommand::Help,
            ],
            Section::Editor => &[
                ViewCommand::Back,
                ViewCommand::Up,
                ViewCommand::Down,
                ViewCommand::NextChange,
                ViewCommand::PrevChange,
                ViewCommand::SideBySide,
                ViewCommand::OwnPolicy,
                ViewCommand::Save,
                ViewCommand::Help,
            ],
            Section::OcmPlacement => &[
                ViewCommand::Back,
                ViewCommand::Up,
                ViewCommand::Down,
                ViewCommand::NextField,
                ViewCommand::Confirm,
                ViewCommand::Help,
            ],
            Section::Wall => &[ViewCommand::PageDown, ViewCommand::PageUp],
            Section::Logs => &[
                ViewCommand::Back,
                ViewCommand::Up,
                ViewCommand::Down,
                ViewCommand::PageUp,
                ViewCommand::PageDown,
                ViewCommand::Top,
                ViewCommand::Bottom,
                ViewCommand::Follow,
                ViewCommand::Pause,
                ViewCommand::Search,
                ViewCommand::NextMatch,
                ViewCommand::PrevMatch,
                ViewCommand::Wrap,
                ViewCommand::NextCluster,
                ViewCommand::PrevCluster,
                ViewCommand::Timestamps,
                ViewCommand::NextContainer,
                ViewCommand::PrevContainer,
                ViewCommand::Copy,
                ViewCommand::Previous,
                ViewCommand::AllClusters,
                ViewCommand::Help,
            ],
        }
    }

    fn from_name(name: &str) -> Option<Section> {
        Section::ALL
            .into_iter()
            .find(|section| section.name() == name)
    }
}

/// A command of a view's own section. Each opens at most a confirmation: no view command
/// writes anything by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ViewCommand {
    Back,
    Up,
    Down,
    Top,
    Bottom,
    SwitchPane,
    Mark,
    Revert,
    Adopt,
    Ignore,
    RemoveRule,
    NextChange,
    PrevChange,
    SideBySide,
    /// Save a placement edit as a policy of the resource's own.
    OwnPolicy,
    Save,
    Help,
    NextField,
    Toggle,
    Review,
    Patch,
    Image,
    Replicas,
    Label,
    Annotation,
    Env,
    EditRule,
    DeleteRule,
    MoveUp,
    MoveDown,
    NextView,
    PrevView,
    PageUp,
    PageDown,
    PrevCluster,
    NextCluster,
    Confirm,
    Follow,
    Pause,
    Search,
    NextMatch,
    PrevMatch,
    Wrap,
    Previous,
    AllClusters,
    /// The log pane: show or hide when each line was printed.
    Timestamps,
    /// The log pane: narrow to the next (or previous) container name, then to every one.
    NextContainer,
    PrevContainer,
    /// The log pane: copy a line to the clipboard through the terminal.
    Copy,
}

impl ViewCommand {
    /// The name used in key map files.
    pub fn name(self) -> &'static str {
        match self {
            ViewCommand::Back => "back",
            ViewCommand::Up => "up",
            ViewCommand::Down => "down",
            ViewCommand::Top => "top",
            ViewCommand::Bottom => "bottom",
            ViewCommand::SwitchPane => "switch-pane",
            ViewCommand::Mark => "mark",
            ViewCommand::Revert => "revert",
            ViewCommand::Adopt => "adopt",
            ViewCommand::Ignore => "ignore",
            ViewCommand::RemoveRule => "remove-rule",
            ViewCommand::NextChange => "next-change",
            ViewCommand::PrevChange => "prev-change",
            ViewCommand::SideBySide => "side-by-side",
            ViewCommand::OwnPolicy => "own-policy",
            ViewCommand::Save => "save",
            ViewCommand::Help => "help",
            ViewCommand::NextField => "next-field",
            ViewCommand::Toggle => "toggle",
            ViewCommand::Review => "review",
            ViewCommand::Patch => "patch",
            ViewCommand::Image => "image",
            ViewCommand::Replicas => "replicas",
            ViewCommand::Label => "label",
            ViewCommand::Annotation => "annotation",
            ViewCommand::Env => "env",
            ViewCommand::EditRule => "edit",
            ViewCommand::DeleteRule => "delete",
            ViewCommand::MoveUp => "move-up",
            ViewCommand::MoveDown => "move-down",
            ViewCommand::NextView => "next-view",
            ViewCommand::PrevView => "prev-view",
            ViewCommand::PageUp => "page-up",
            ViewCommand::PageDown => "page-down",
            ViewCommand::PrevCluster => "prev-cluster",
            ViewCommand::NextCluster => "next-cluster",
            ViewCommand::Confirm => "confirm",
            ViewCommand::Follow => "follow",
            ViewCommand::Pause => "pause",
            ViewCommand::Search => "search",
            ViewCommand::NextMatch => "next-match",
            ViewCommand::PrevMatch => "prev-match",
            ViewCommand::Wrap => "wrap",
            ViewCommand::Previous => "previous",
            ViewCommand::AllClusters => "all-clusters",
            ViewCommand::Timestamps => "timestamps",
            ViewCommand::NextContainer => "next-container",
            ViewCommand::PrevContainer => "prev-container",
            ViewCommand::Copy => "copy",
        }
    }

    /// What the help screen says about it.
    pub fn description(self) -> &'static str {
        match self {
            ViewCommand::Back => "go back (nothing is written)",
            ViewCommand::Up => "move up",
            ViewCommand::Down => "move down",
            ViewCommand::Top => "first row",
            ViewCommand::Bottom => "last row",
            ViewCommand::SwitchPane => "switch between drifted fields and ignore rules",
            ViewCommand::Mark => "mark the field or group, so one confirmation repairs them all",
            ViewCommand::Revert => "revert: take the desired value back (asks first)",
            ViewCommand::Adopt => "adopt: keep the live value as an override (asks first)",
            ViewCommand::Ignore => "ignore: write a DriftIgnore rule (asks first)",
            ViewCommand::RemoveRule => "remove the selected ignore rule (asks first)",
            ViewCommand::NextChange => "next changed hunk",
            ViewCommand::PrevChange => "previous changed hunk",
            ViewCommand::SideBySide => "old and new side by side, or one column",
            ViewCommand::OwnPolicy => {
                "save a shared policy's edit as a policy of the resource's own (the others keep theirs)"
            }
            ViewCommand::Save => "save and propagate (asks first)",
            ViewCommand::Help => "help: this view's keys first, then the main view's",
            ViewCommand::NextField => {
                "next field: clusters, selector, fields, tolerations, replicas (as the dialect has them)"
            }
            ViewCommand::Toggle => "name the cluster under the cursor explicitly, or drop its name",
            ViewCommand::Review => "review the diffs before anything is written",
            ViewCommand::Patch => "new rule: a JSON patch (tab completes the path)",
            ViewCommand::Image => "new rule: a container image's tag, registry or repository",
            ViewCommand::Replicas => "new rule: the replicas",
            ViewCommand::Label => "new rule: a label (key=value)",
            ViewCommand::Annotation => "new rule: an annotation (key=value)",
            ViewCommand::Env => "new rule: a container environment variable",
            ViewCommand::EditRule => "edit the selected rule in its form",
            ViewCommand::DeleteRule => "delete the selected rule",
            ViewCommand::MoveUp => "move the selected rule earlier (rules apply in order)",
            ViewCommand::MoveDown => "move the selected rule later",
            ViewCommand::NextView => "next view: desired, live, diff, Events, clusters",
            ViewCommand::PrevView => "previous view",
            ViewCommand::PageUp => "page up",
            ViewCommand::PageDown => "page down",
            ViewCommand::PrevCluster => "the previous cluster's object",
            ViewCommand::NextCluster => "the next cluster's object",
            ViewCommand::Confirm => {
                "edit the Placement under the cursor; in its fields, ask to write the edit (lists the decision change first)"
            }
            ViewCommand::Follow => "follow on or off: new lines scroll in (scrolling up stops it)",
            ViewCommand::Pause => {
                "pause reading into the pane (lines are held, then dropped past the bound), or resume"
            }
            ViewCommand::Search => "search the lines (case-insensitive), newest match first",
            ViewCommand::NextMatch => "the match before (older)",
            ViewCommand::PrevMatch => "the match after (newer)",
            ViewCommand::Wrap => "wrap long lines, or cut them at the edge",
            ViewCommand::Previous => {
                "each container's previous run (as --previous), or back to the current one"
            }
            ViewCommand::AllClusters => "read every cluster the workload is placed on",
            ViewCommand::Timestamps => {
                "show or hide when each line was printed (as --timestamps; nothing is read again)"
            }
            ViewCommand::NextContainer => {
                "show only the next container's lines (as -c; after the last: every container's)"
            }
            ViewCommand::PrevContainer => "show only the previous container's lines",
            ViewCommand::Copy => {
                "copy the search's match, else the newest line in view, to the clipboard (OSC 52)"
            }
        }
    }

    /// What the help screen says about it in `section`, where a section gives it a meaning of
    /// its own.
    pub fn description_in(self, section: Section) -> &'static str {
        match (section, self) {
            (Section::Object, ViewCommand::Back) => "close the object view",
            (Section::Object, ViewCommand::Up) => {
                "scroll up; in the clusters view, the group above"
            }
            (Section::Object, ViewCommand::Down) => {
                "scroll down; in the clusters view, the group below"
            }
            (Section::Object, ViewCommand::Top) => "back to the top",
            (Section::OcmPlacement, ViewCommand::Back) => "cancel the edit (nothing is written)",
            (Section::OcmPlacement, ViewCommand::Up) => {
                "move up the Placements; in the fields, the previous field"
            }
            (Section::OcmPlacement, ViewCommand::Down) => {
                "move down the Placements; in the fields, the next field"
            }
            (Section::OcmPlacement, ViewCommand::NextField) => {
                "next field: each predicate's label and claim selectors, tolerations, number of clusters"
            }
            (Section::Logs, ViewCommand::Back) => "close the pane and stop its streams",
            (Section::Logs, ViewCommand::Up) => "scroll up (stops following)",
            (Section::Logs, ViewCommand::Down) => "scroll down (at the newest line, follows again)",
            (Section::Logs, ViewCommand::Top) => "the oldest line kept",
            (Section::Logs, ViewCommand::Bottom) => "the newest line, following",
            (Section::Logs, ViewCommand::NextCluster) => {
                "show only the next cluster's lines (after the last: every cluster's)"
            }
            (Section::Logs, ViewCommand::PrevCluster) => "show only the previous cluster's lines",
            (Section::Wall, ViewCommand::PageDown) => "next page of the heat map",
            (Section::Wall, ViewCommand::PageUp) => "previous page of the heat map",
            _ => self.description(),
        }
    }

    /// Whether the command leads to a write (hidden from a read-only console's help).
    pub fn is_mutating(self) -> bool {
        matches!(
            self,
            ViewCommand::Revert
                | ViewCommand::Adopt
                | ViewCommand::Ignore
                | ViewCommand::RemoveRule
                | ViewCommand::Save
                | ViewCommand::Confirm
        )
    }
}

/// One view section's bindings.
#[derive(Debug, Clone, Default)]
struct ViewKeys {
    bindings: BTreeMap<Key, ViewCommand>,
    listed: BTreeMap<ViewCommand, Vec<Key>>,
}

impl ViewKeys {
    fn keys_for(&self, command: ViewCommand) -> Vec<Key> {
        self.listed
            .get(&command)
            .into_iter()
            .flatten()
            .filter(|key| self.bindings.get(key) == Some(&command))
            .copied()
            .collect()
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
    /// The views' own sections.
    views: BTreeMap<Section, ViewKeys>,
    pub warnings: Vec<String>,
    /// What a user's file got wrong (`file:line: section: field: message`): the console
    /// refuses to start with any.
    pub errors: Vec<String>,
}

/// A key map file: section → command → keys.
type KeymapFile = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// The 1-based line of `field` inside `section` in a block-style file, else the section's
/// line, else 1: where an error points.
fn line_of(text: &str, section: &str, field: Option<&str>) -> usize {
    let mut in_section = false;
    let mut section_line = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') || trimmed.is_empty() {
            continue;
        }
        let indented = trimmed.len() != line.len();
        let name = trimmed
            .split(':')
            .next()
            .unwrap_or_default()
            .trim()
            .trim_matches(['"', '\'']);
        if !indented {
            in_section = name == section;
            if in_section {
                section_line = Some(index + 1);
                if field.is_none() {
                    return index + 1;
                }
            }
        } else if in_section && Some(name) == field {
            return index + 1;
        }
    }
    section_line.unwrap_or(1)
}

/// The shipped key maps, embedded so the binary needs no files.
pub const BUILT_IN: [(&str, &str); 3] = [
    ("default", include_str!("../../keymaps/default.yaml")),
    ("vim", include_str!("../../keymaps/vim.yaml")),
    ("k9s", include_str!("../../keymaps/k9s.yaml")),
];

/// Where a section's entries come from, for errors.
struct Place<'a> {
    origin: &'a str,
    section: &'a str,
    text: &'a str,
}

/// Binds one command's keys in a section; a key that does not parse, or that the section
/// already binds to another command, is an error.
fn bind<C: Copy + Ord>(
    (bindings, listed): (&mut BTreeMap<Key, C>, &mut BTreeMap<C, Vec<Key>>),
    (command, name): (C, fn(C) -> &'static str),
    (command_name, keys): (&str, Vec<String>),
    place: &Place,
    errors: &mut Vec<String>,
) {
    let at = |field: &str| line_of(place.text, place.section, Some(field));
    for key_text in keys {
        match Key::parse(&key_text) {
            Ok(key) => {
                listed.entry(command).or_default().push(key);
                if let Some(previous) = bindings.insert(key, command)
                    && previous != command
                {
                    errors.push(conflict(
                        place.origin,
                        place.section,
                        key,
                        (name(previous), at(name(previous))),
                        (name(command), at(command_name)),
                    ));
                }
            }
            Err(err) => errors.push(format!(
                "{}:{}: {}: {command_name}: {err}",
                place.origin,
                at(command_name),
                place.section
            )),
        }
    }
}

/// Lays a user's section over a built-in one: each command the user lists lets go of its old
/// keys first (so two commands may swap) and takes the user's; a key the built-in section
/// still binds to a command the user did not list is an error.
fn lay_over<C: Copy + Ord>(
    (bindings, listed): (&mut BTreeMap<Key, C>, &mut BTreeMap<C, Vec<Key>>),
    user: BTreeMap<C, Vec<Key>>,
    name: fn(C) -> &'static str,
    (place, map_name): (&Place, &str),
    errors: &mut Vec<String>,
) {
    bindings.retain(|_, bound| !user.contains_key(bound));
    for (command, keys) in user {
        listed.insert(command, keys.clone());
        for key in keys {
            if let Some(previous) = bindings.insert(key, command)
                && previous != command
            {
                errors.push(format!(
                    "{}:{}: {}: {}: key {key} is also bound to {} by the {map_name} map; list {} with other keys too",
                    place.origin,
                    line_of(place.text, place.section, Some(name(command))),
                    place.section,
                    name(command),
                    name(previous),
                    name(previous)
                ));
            }
        }
    }
}

/// A key bound to two commands of one section, said at the later of their lines.
fn conflict(
    origin: &str,
    section: &str,
    key: Key,
    one: (&str, usize),
    other: (&str, usize),
) -> String {
    let (earlier, later) = if one.1 <= other.1 {
        (one, other)
    } else {
        (other, one)
    };
    format!(
        "{origin}:{}: {section}: {}: key {key} is already bound to {} (line {}); a key does one thing per section",
        later.1, later.0, earlier.0, earlier.1
    )
}

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
            let main_section = if text.lines().any(|line| line.starts_with("main:")) {
                "main"
            } else {
                "global"
            };
            let mut place = Place {
                origin: &path,
                section: main_section,
                text: &text,
            };
            lay_over(
                (&mut map.bindings, &mut map.listed),
                overlay.listed,
                KeyCommand::name,
                (&place, name),
                &mut map.errors,
            );
            for (section, view) in overlay.views {
                let keys_of = map.views.entry(section).or_default();
                place.section = section.name();
                lay_over(
                    (&mut keys_of.bindings, &mut keys_of.listed),
                    view.listed,
                    ViewCommand::name,
                    (&place, name),
                    &mut map.errors,
                );
            }
            map.warnings.extend(overlay.warnings);
            map.errors.extend(overlay.errors);
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
            Some(text) => {
                let mut map = Keymap::parse(name, text, &format!("keymaps/{name}.yaml"));
                // A shipped map without a view's section uses the default map's keys there.
                let default = Keymap::parse("default", BUILT_IN[0].1, "keymaps/default.yaml");
                for (section, keys) in default.views {
                    map.views.entry(section).or_insert(keys);
                }
                map
            }
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

    /// Parses a key map file; whatever cannot be used is an error naming `origin`, the line,
    /// the section and the field.
    pub fn parse(name: &str, text: &str, origin: &str) -> Keymap {
        let mut map = Keymap {
            name: name.to_string(),
            ..Keymap::default()
        };
        let file: KeymapFile = match serde_saphyr::from_str(text) {
            Ok(file) => file,
            Err(err) => {
                map.errors.push(format!(
                    "{origin}: not a key map ({err}); expected sections such as global: {{quit: [q]}}"
                ));
                return map;
            }
        };
        for (section_name, commands) in file {
            let at = |field: Option<&str>| line_of(text, &section_name, field);
            let place = Place {
                origin,
                section: &section_name,
                text,
            };
            if section_name == "global" || section_name == "main" {
                for (command_name, keys) in commands {
                    let Some(command) = KeyCommand::from_name(&command_name) else {
                        map.errors.push(format!(
                            "{origin}:{}: {section_name}: {command_name}: unknown command; known: {}",
                            at(Some(&command_name)),
                            KeyCommand::ALL.map(KeyCommand::name).join(", ")
                        ));
                        continue;
                    };
                    bind(
                        (&mut map.bindings, &mut map.listed),
                        (command, KeyCommand::name),
                        (&command_name, keys),
                        &place,
                        &mut map.errors,
                    );
                }
                continue;
            }
            let Some(section) = Section::from_name(&section_name) else {
                map.errors.push(format!(
                    "{origin}:{}: {section_name}: unknown section; known: global (or main), {}",
                    at(None),
                    Section::ALL.map(Section::name).join(", ")
                ));
                continue;
            };
            let view = map.views.entry(section).or_default();
            for (command_name, keys) in commands {
                let Some(command) = section
                    .commands()
                    .iter()
                    .copied()
                    .find(|command| command.name() == command_name)
                else {
                    map.errors.push(format!(
                        "{origin}:{}: {section_name}: {command_name}: unknown command; known in {section_name}: {}",
                        at(Some(&command_name)),
                        section
                            .commands()
                            .iter()
                            .map(|command| command.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                    continue;
                };
                bind(
                    (&mut view.bindings, &mut view.listed),
                    (command, ViewCommand::name),
                    (&command_name, keys),
                    &place,
                    &mut map.errors,
                );
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

    /// The command a key triggers in a view's section, if any.
    pub fn view_command(&self, section: Section, key: Key) -> Option<ViewCommand> {
        self.views.get(&section)?.bindings.get(&key).copied()
    }

    /// The keys bound to a view command, for help and hints.
    pub fn view_keys(&self, section: Section, command: ViewCommand) -> Vec<Key> {
        self.views
            .get(&section)
            .map(|view| view.keys_for(command))
            .unwrap_or_default()
    }

    /// The first key of a view command as the hints write it, `-` when none is bound.
    pub fn view_hint(&self, section: Section, command: ViewCommand) -> String {
        self.view_keys(section, command)
            .first()
            .map_or_else(|| "-".to_string(), Key::to_string)
    }

    /// Help lines of a view's section, in the section's order; without the commands that
    /// lead to writes when `readonly`.
    pub fn section_help(&self, section: Section, readonly: bool) -> Vec<(String, &'static str)> {
        section
            .commands()
            .iter()
            .copied()
            .filter(|command| !(readonly && command.is_mutating()))
            .filter_map(|command| {
                let keys = self.view_keys(section, command);
                (!keys.is_empty()).then(|| {
                    let names: Vec<String> = keys.iter().map(Key::to_string).collect();
                    (names.join(" "), command.description_in(section))
                })
            })
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

    /// The map has exactly these errors, each found by how it starts.
    fn assert_errors(map: &Keymap, expect: &[&str]) {
        assert_eq!(map.errors.len(), expect.len(), "{:#?}", map.errors);
        for expected in expect {
            assert!(
                map.errors.iter().any(|error| error.starts_with(expected)),
                "no error {expected:?} in {:#?}",
                map.errors
            );
        }
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
    fn bad_entries_are_errors_naming_file_line_section_and_field() {
        let map = Keymap::parse(
            "mine",
            "global:\n  quit: [x, ctrl-]\n  launch-rockets: [r]\n  down: [j]\n  up: [j]\ndrift:\n  revert: [R]\n  explode: [E]\n  adopt: [R]\nbridge:\n  quit: [q]\n",
            "mine.yaml",
        );
        let expect = [
            "mine.yaml:2: global: quit: unknown key \"ctrl-\"",
            "mine.yaml:3: global: launch-rockets: unknown command",
            "mine.yaml:5: global: up: key j is already bound to down (line 4)",
            "mine.yaml:8: drift: explode: unknown command; known in drift:",
            "mine.yaml:9: drift: adopt: key R is already bound to revert (line 7)",
            "mine.yaml:10: bridge: unknown section",
        ];
        assert_errors(&map, &expect);
    }

    #[test]
    fn the_editors_sections_report_bad_entries_with_file_and_line() {
        let map = Keymap::parse(
            "mine",
            "overrides:\n  patch: [A]\n  explode: [E]\n  label: [A]\nplacement:\n  toggle: [ctrl-]\n  review: [enter]\n  next-field: [enter]\n",
            "mine.yaml",
        );
        let expect = [
            "mine.yaml:3: overrides: explode: unknown command; known in overrides: back, up, down, patch,",
            "mine.yaml:4: overrides: label: key A is already bound to patch (line 2)",
            "mine.yaml:6: placement: toggle: unknown key \"ctrl-\"",
            "mine.yaml:8: placement: next-field: key enter is already bound to review (line 7)",
        ];
        assert_errors(&map, &expect);
        // Over the default map, a key the default still binds to another command clashes.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("keymaps")).unwrap();
        std::fs::write(
            dir.path().join("keymaps/mine.yaml"),
            "# mine\noverrides:\n  delete: [e]\n",
        )
        .unwrap();
        let clash = Keymap::load("mine", Some(dir.path()));
        assert_eq!(clash.errors.len(), 1, "{:?}", clash.errors);
        assert!(
            clash.errors[0].contains("mine.yaml:3: overrides: delete: key e is also bound to edit"),
            "{:?}",
            clash.errors
        );
    }

    #[test]
    fn the_editors_sections_keep_the_keys_the_editors_always_had() {
        let map = Keymap::built_in("default");
        let bound = |section, text: &str| map.view_command(section, key(text));
        for (text, command) in [
            ("esc", ViewCommand::Back),
            ("tab", ViewCommand::NextField),
            ("k", ViewCommand::Up),
            ("down", ViewCommand::Down),
            ("space", ViewCommand::Toggle),
            ("enter", ViewCommand::Review),
        ] {
            assert_eq!(bound(Section::Placement, text), Some(command), "{text}");
        }
        for (text, command) in [
            ("a", ViewCommand::Patch),
            ("i", ViewCommand::Image),
            ("r", ViewCommand::Replicas),
            ("l", ViewCommand::Label),
            ("n", ViewCommand::Annotation),
            ("v", ViewCommand::Env),
            ("e", ViewCommand::EditRule),
            ("d", ViewCommand::DeleteRule),
            ("K", ViewCommand::MoveUp),
            ("J", ViewCommand::MoveDown),
            ("enter", ViewCommand::Review),
            ("esc", ViewCommand::Back),
        ] {
            assert_eq!(bound(Section::Overrides, text), Some(command), "{text}");
        }
        // The wall only looks: `?` is the main view's there, as `q` is.
        for section in Section::ALL.into_iter().filter(|s| *s != Section::Wall) {
            assert_eq!(
                bound(section, "?"),
                Some(ViewCommand::Help),
                "{}",
                section.name()
            );
        }
    }

    #[test]
    fn the_object_and_ocm_placement_sections_remap_and_their_help_lists_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("keymaps")).unwrap();
        std::fs::write(
            dir.path().join("keymaps/mine.yaml"),
            "object:\n  next-view: [n]\n  prev-cluster: [H]\nocm-placement:\n  confirm: [ctrl-s]\n  down: [J]\n",
        )
        .unwrap();
        let map = Keymap::load("mine", Some(dir.path()));
        assert!(map.errors.is_empty(), "{:?}", map.errors);
        // The user's keys name the commands; the keys they replaced name none.
        let object = |text: &str| map.view_command(Section::Object, key(text));
        assert_eq!(object("n"), Some(ViewCommand::NextView));
        assert_eq!(object("tab"), None);
        assert_eq!(object("H"), Some(ViewCommand::PrevCluster));
        assert_eq!(object("h"), None);
        assert_eq!(
            object("shift-tab"),
            Some(ViewCommand::PrevView),
            "what the user did not list stays"
        );
        let ocm = |text: &str| map.view_command(Section::OcmPlacement, key(text));
        assert_eq!(ocm("ctrl-s"), Some(ViewCommand::Confirm));
        assert_eq!(ocm("enter"), None);
        assert_eq!(ocm("J"), Some(ViewCommand::Down));
        // The help lists each section with the keys in use.
        let object = map.section_help(Section::Object, false);
        assert!(
            object.contains(&("n".to_string(), ViewCommand::NextView.description())),
            "{object:?}"
        );
        assert!(
            object.contains(&("H".to_string(), ViewCommand::PrevCluster.description())),
            "{object:?}"
        );
        let ocm = map.section_help(Section::OcmPlacement, false);
        assert!(
            ocm.contains(&("ctrl-s".to_string(), ViewCommand::Confirm.description())),
            "{ocm:?}"
        );
        assert!(
            !map.section_help(Section::OcmPlacement, true)
                .iter()
                .any(|(_, what)| *what == ViewCommand::Confirm.description()),
            "a read-only console's help offers no write"
        );
    }

    #[test]
    fn the_new_sections_report_bad_entries_with_file_and_line() {
        let map = Keymap::parse(
            "mine",
            "object:\n  next-view: [n]\n  explode: [x]\n  top: [n]\nocm-placement:\n  toggle: [t]\nobjects:\n  up: [k]\n",
            "mine.yaml",
        );
        let expect = [
            "mine.yaml:3: object: explode: unknown command; known in object: back, next-view, prev-view,",
            "mine.yaml:4: object: top: key n is already bound to next-view (line 2)",
            "mine.yaml:6: ocm-placement: toggle: unknown command; known in ocm-placement: back, up, down, next-field, confirm, help",
            "mine.yaml:7: objects: unknown section; known: global (or main), object, logs, drift, placement, overrides, editor, ocm-placement, wall",
        ];
        assert_errors(&map, &expect);
    }

    #[test]
    fn unparsable_files_are_an_error_naming_the_file() {
        let map = Keymap::parse("broken", "global: [unclosed", "broken.yaml");
        assert_eq!(map.errors.len(), 1);
        assert!(map.errors[0].starts_with("broken.yaml"));
    }

    #[test]
    fn a_user_section_replaces_the_keys_of_the_commands_it_names_and_conflicts_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("keymaps")).unwrap();
        let write = |text: &str| std::fs::write(dir.path().join("keymaps/vim.yaml"), text).unwrap();
        write("drift:\n  revert: [R]\neditor:\n  save: [ctrl-s]\n");
        let map = Keymap::load("vim", Some(dir.path()));
        assert!(map.errors.is_empty(), "{:?}", map.errors);
        assert_eq!(
            map.view_command(Section::Drift, key("R")),
            Some(ViewCommand::Revert)
        );
        assert_eq!(map.view_command(Section::Drift, key("r")), None);
        assert_eq!(
            map.view_command(Section::Drift, key("a")),
            Some(ViewCommand::Adopt)
        );
        assert_eq!(
            map.view_command(Section::Editor, key("ctrl-s")),
            Some(ViewCommand::Save)
        );
        assert_eq!(map.view_command(Section::Drift, key("w")), None);
        assert_eq!(
            map.view_command(Section::Editor, key("enter")),
            None,
            "the user's keys replace save's built-in ones"
        );
        write("drift:\n  revert: [a]\n");
        let clash = Keymap::load("vim", Some(dir.path()));
        assert_eq!(clash.errors.len(), 1, "{:?}", clash.errors);
        assert!(
            clash.errors[0].contains("vim.yaml:2: drift: revert: key a is also bound to adopt"),
            "{:?}",
            clash.errors
        );
        write("drift:\n  revert: [a]\n  adopt: [r]\n");
        let swapped = Keymap::load("vim", Some(dir.path()));
        assert!(swapped.errors.is_empty(), "{:?}", swapped.errors);
        assert_eq!(
            swapped.view_command(Section::Drift, key("a")),
            Some(ViewCommand::Revert)
        );
        assert_eq!(
            swapped.view_command(Section::Drift, key("r")),
            Some(ViewCommand::Adopt)
        );
    }

    #[test]
    fn every_shipped_map_has_every_views_section_without_conflicts_or_single_key_writes() {
        for (name, _) in BUILT_IN {
            let map = Keymap::built_in(name);
            assert!(map.errors.is_empty(), "{name}: {:?}", map.errors);
            for section in Section::ALL {
                for command in section.commands() {
                    assert!(
                        !map.view_keys(section, *command).is_empty(),
                        "{name}: {} has no key for {}",
                        section.name(),
                        command.name()
                    );
                }
                let keys: Vec<Key> = section
                    .commands()
                    .iter()
                    .flat_map(|command| map.view_keys(section, *command))
                    .collect();
                assert!(
                    !keys.contains(&key("q")) && !keys.contains(&key("ctrl-c")),
                    "{name}: q and ctrl-c stay quit"
                );
            }
        }
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
