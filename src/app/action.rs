//! Everything that can change the console's state, as plain messages: key map commands,
//! typed keys, backend facts, resizes and ticks. It must not carry terminal types, handles
//! or clients (the console turns terminal events into these).

use super::state::Saved;
use crate::backend::BackendEvent;
use crate::config::keymap::{Key, KeyCodeName, KeyCommand};

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A key map command the operator triggered.
    Command(KeyCommand),
    /// A key typed into a text input (filter, palette).
    Input(InputKey),
    /// A fact from the backend.
    Backend(BackendEvent),
    /// The terminal now has this many columns and rows.
    Resize { width: u16, height: u16 },
    /// The clock moved: milliseconds since the app started, and the wall clock's milliseconds
    /// since the Unix epoch where the caller reads one (for how long ago a time an object
    /// carries was).
    Tick { now_ms: u64, unix_ms: Option<u64> },
    /// Quit for a reason other than a key (a signal).
    Terminate,
    /// What the session's write of a confirmed fleet edit did.
    Saved(Saved),
}

/// Keys a text input understands, and the keys a view with a key map section of its own
/// reads (the object view's shift-tab, arrows left and right, pages and home; a text input
/// never gets these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKey {
    Char(char),
    Backspace,
    /// ctrl-u: clear the line.
    ClearLine,
    Enter,
    Esc,
    Tab,
    Up,
    Down,
    BackTab,
    Left,
    Right,
    PageUp,
    PageDown,
    Home,
    End,
}

impl InputKey {
    /// The key map's name for this key, for views that read their own key map section.
    pub fn key(self) -> Key {
        let (code, ctrl) = match self {
            InputKey::Char(c) => (KeyCodeName::Char(c), false),
            InputKey::Backspace => (KeyCodeName::Backspace, false),
            InputKey::ClearLine => (KeyCodeName::Char('u'), true),
            InputKey::Enter => (KeyCodeName::Enter, false),
            InputKey::Esc => (KeyCodeName::Esc, false),
            InputKey::Tab => (KeyCodeName::Tab, false),
            InputKey::Up => (KeyCodeName::Up, false),
            InputKey::Down => (KeyCodeName::Down, false),
            InputKey::BackTab => (KeyCodeName::BackTab, false),
            InputKey::Left => (KeyCodeName::Left, false),
            InputKey::Right => (KeyCodeName::Right, false),
            InputKey::PageUp => (KeyCodeName::PageUp, false),
            InputKey::PageDown => (KeyCodeName::PageDown, false),
            InputKey::Home => (KeyCodeName::Home, false),
            InputKey::End => (KeyCodeName::End, false),
        };
        Key {
            code,
            ctrl,
            alt: false,
        }
    }
}
