//! Themes: semantic style slots (one per status, health, diff side and chrome) loaded from
//! `themes/*.yaml` (embedded), with `NO_COLOR` forcing monochrome. Bad entries warn and fall
//! back to the default; it must never fail the program.

use std::collections::BTreeMap;
use std::path::Path;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

use crate::model::{Health, StatusKind};

/// Every style the views use, by meaning rather than by colour.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    pub text: Style,
    pub muted: Style,
    pub title: Style,
    pub border: Style,
    pub border_focused: Style,
    pub selection: Style,
    pub header: Style,
    pub danger: Style,
    pub health_ready: Style,
    pub health_not_ready: Style,
    pub health_unreachable: Style,
    pub health_unknown: Style,
    pub status: BTreeMap<StatusKind, Style>,
    pub diff_added: Style,
    pub diff_removed: Style,
    /// Whether colour is used at all (false under NO_COLOR).
    pub colour: bool,
    pub warnings: Vec<String>,
}

/// The shipped themes, embedded so the binary needs no files.
pub const BUILT_IN: [(&str, &str); 4] = [
    ("dark", include_str!("../../themes/dark.yaml")),
    ("light", include_str!("../../themes/light.yaml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.yaml"),
    ),
    ("k9s", include_str!("../../themes/k9s.yaml")),
];

/// One slot in a theme file: `red`, `"#ff8800"`, or `{fg: red, bg: black, bold: true}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum SlotSpec {
    Colour(String),
    Full {
        #[serde(default)]
        fg: Option<String>,
        #[serde(default)]
        bg: Option<String>,
        #[serde(default)]
        bold: bool,
        #[serde(default)]
        reversed: bool,
        #[serde(default)]
        underlined: bool,
    },
}

impl Theme {
    /// A built-in theme by name (`dark` when unknown, with a warning); monochrome when
    /// `no_colour` is set.
    pub fn load(name: Option<&str>, no_colour: bool) -> Theme {
        Theme::load_with_user(name, no_colour, None)
    }

    /// A theme by name, with `<user_dir>/themes/<name>.yaml` laid over the built-in of the same
    /// name (or over `dark` for a name only the user has). Unusable entries become warnings.
    pub fn load_with_user(name: Option<&str>, no_colour: bool, user_dir: Option<&Path>) -> Theme {
        let wanted = name.unwrap_or("dark");
        let mut warnings = Vec::new();
        let user_text =
            user_dir.and_then(|dir| super::read_user_file(dir, "themes", wanted, &mut warnings));
        let (name, text) = match BUILT_IN.iter().find(|(candidate, _)| *candidate == wanted) {
            Some((name, text)) => (*name, *text),
            None if user_text.is_some() => (wanted, BUILT_IN[0].1),
            None => {
                warnings.push(format!(
                    "no theme named {wanted:?}; using dark (shipped: {})",
                    BUILT_IN.map(|(name, _)| name).join(", ")
                ));
                BUILT_IN[0]
            }
        };
        let mut theme = Theme::parse(name, text, &format!("themes/{name}.yaml"));
        if let Some((path, text)) = user_text {
            theme.overlay(&text, &path);
        }
        theme.warnings.splice(0..0, warnings);
        if no_colour {
            theme = theme.monochrome();
        }
        theme
    }

    /// Parses a theme file over the monochrome base; unusable entries become warnings.
    pub fn parse(name: &str, text: &str, origin: &str) -> Theme {
        let mut theme = Theme::monochrome_base(name);
        theme.colour = true;
        if !theme.overlay(text, origin) {
            theme.colour = false;
        }
        theme
    }

    /// Lays a theme file's slots over this theme; returns false when the file is unusable.
    fn overlay(&mut self, text: &str, origin: &str) -> bool {
        let theme = self;
        let slots: BTreeMap<String, SlotSpec> = match serde_saphyr::from_str(text) {
            Ok(slots) => slots,
            Err(err) => {
                theme
                    .warnings
                    .push(format!("{origin}: not a theme ({err}); ignored"));
                return false;
            }
        };
        for (slot, spec) in slots {
            match to_style(&spec) {
                Ok(style) => {
                    if !theme.set_slot(&slot, style) {
                        theme
                            .warnings
                            .push(format!("{origin}: unknown slot {slot:?}; ignored"));
                    }
                }
                Err(err) => theme.warnings.push(format!("{origin}: {slot}: {err}")),
            }
        }
        true
    }

    fn set_slot(&mut self, slot: &str, style: Style) -> bool {
        if let Some(kind) = slot.strip_prefix("status.").and_then(StatusKind::parse) {
            self.status.insert(kind, style);
            return true;
        }
        let target = match slot {
            "text" => &mut self.text,
            "muted" => &mut self.muted,
            "title" => &mut self.title,
            "border" => &mut self.border,
            "border-focused" => &mut self.border_focused,
            "selection" => &mut self.selection,
            "header" => &mut self.header,
            "danger" => &mut self.danger,
            "health.ready" => &mut self.health_ready,
            "health.not-ready" => &mut self.health_not_ready,
            "health.unreachable" => &mut self.health_unreachable,
            "health.unknown" => &mut self.health_unknown,
            "diff.added" => &mut self.diff_added,
            "diff.removed" => &mut self.diff_removed,
            _ => return false,
        };
        *target = style;
        true
    }

    /// Styles that carry meaning without colour: bold, reverse and underline only.
    fn monochrome_base(name: &str) -> Theme {
        let plain = Style::default();
        let bold = plain.add_modifier(Modifier::BOLD);
        let status = StatusKind::ALL
            .into_iter()
            .map(|kind| {
                let style = if kind.is_problem() { bold } else { plain };
                (kind, style)
            })
            .collect();
        Theme {
            name: name.to_string(),
            text: plain,
            muted: plain,
            title: bold,
            border: plain,
            border_focused: bold,
            selection: plain.add_modifier(Modifier::REVERSED),
            header: bold,
            danger: bold.add_modifier(Modifier::UNDERLINED),
            health_ready: plain,
            health_not_ready: bold,
            health_unreachable: bold,
            health_unknown: plain,
            status,
            diff_added: plain,
            diff_removed: plain,
            colour: false,
            warnings: Vec::new(),
        }
    }

    /// The same theme with every colour removed.
    pub fn monochrome(self) -> Theme {
        Theme {
            warnings: self.warnings,
            ..Theme::monochrome_base(&self.name)
        }
    }

    pub fn status_style(&self, kind: StatusKind) -> Style {
        self.status.get(&kind).copied().unwrap_or(self.text)
    }

    pub fn health_style(&self, health: Health) -> Style {
        match health {
            Health::Ready => self.health_ready,
            Health::NotReady => self.health_not_ready,
            Health::Unreachable | Health::Unauthorized => self.health_unreachable,
            Health::Unknown | Health::NoAccess => self.health_unknown,
        }
    }
}

fn to_style(spec: &SlotSpec) -> Result<Style, String> {
    match spec {
        SlotSpec::Colour(colour) => Ok(Style::default().fg(parse_colour(colour)?)),
        SlotSpec::Full {
            fg,
            bg,
            bold,
            reversed,
            underlined,
        } => {
            let mut style = Style::default();
            if let Some(fg) = fg {
                style = style.fg(parse_colour(fg)?);
            }
            if let Some(bg) = bg {
                style = style.bg(parse_colour(bg)?);
            }
            for (on, modifier) in [
                (*bold, Modifier::BOLD),
                (*reversed, Modifier::REVERSED),
                (*underlined, Modifier::UNDERLINED),
            ] {
                if on {
                    style = style.add_modifier(modifier);
                }
            }
            Ok(style)
        }
    }
}

fn parse_colour(text: &str) -> Result<Color, String> {
    text.parse::<Color>().map_err(|_| {
        format!("{text:?} is not a colour; use a name such as red or lightblue, #rrggbb, or 0-255")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_theme_loads_cleanly_and_colours_every_status() {
        for (name, _) in BUILT_IN {
            let theme = Theme::load(Some(name), false);
            assert!(theme.warnings.is_empty(), "{name}: {:?}", theme.warnings);
            assert!(theme.colour);
            assert_eq!(theme.name, name);
            for kind in StatusKind::ALL {
                let style = theme.status_style(kind);
                assert!(style.fg.is_some(), "{name}: {kind} has no colour");
            }
        }
    }

    #[test]
    fn user_files_lay_over_the_built_in_theme() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("themes")).expect("mkdir");
        std::fs::write(
            dir.path().join("themes/dark.yaml"),
            "text: magenta\nbogus: red\n",
        )
        .expect("write");
        let theme = Theme::load_with_user(Some("dark"), false, Some(dir.path()));
        assert_eq!(theme.text.fg, Some(Color::Magenta), "the user's slot wins");
        assert_eq!(
            theme.status_style(StatusKind::InSync).fg,
            Some(Color::Green),
            "the rest stays built in"
        );
        assert_eq!(theme.warnings.len(), 1, "{:?}", theme.warnings);
        std::fs::write(dir.path().join("themes/mine.yaml"), "text: cyan\n").expect("write");
        let mine = Theme::load_with_user(Some("mine"), false, Some(dir.path()));
        assert_eq!(mine.name, "mine");
        assert_eq!(mine.text.fg, Some(Color::Cyan));
        assert!(mine.warnings.is_empty(), "{:?}", mine.warnings);
    }

    #[test]
    fn no_colour_removes_every_colour() {
        let theme = Theme::load(Some("dark"), true);
        assert!(!theme.colour);
        for kind in StatusKind::ALL {
            assert_eq!(theme.status_style(kind).fg, None);
        }
        assert_eq!(theme.selection.fg, None);
    }

    #[test]
    fn bad_slots_warn_and_the_rest_apply() {
        let theme = Theme::parse(
            "mine",
            "text: red\nsparkle: blue\nmuted: notacolour\n",
            "mine.yaml",
        );
        assert_eq!(theme.text.fg, Some(Color::Red));
        assert_eq!(theme.warnings.len(), 2, "{:?}", theme.warnings);
    }

    #[test]
    fn unknown_theme_names_fall_back_with_a_warning() {
        let theme = Theme::load(Some("neon"), false);
        assert_eq!(theme.name, "dark");
        assert!(theme.warnings[0].contains("neon"));
    }
}
