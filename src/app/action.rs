//! Everything that can change the console's state, as plain messages: commands, typed keys,
//! backend facts, resizes and ticks. A key arrives already resolved by the key map in use: a
//! main-view command ([`Action::Command`]), a command of the view section in focus
//! ([`Action::View`]), or, where the operator types, an [`InputKey`]; nothing here is decoded
//! again. It must not carry terminal types, handles or clients (the console turns terminal
//! events into these), nor key map keys.

use super::state::Saved;
use crate::config::keymap::{KeyCommand, Section, ViewCommand};
use crate::messages::BackendEvent;

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A main view command the operator triggered.
    Command(KeyCommand),
    /// A command of a view's own key map section (a cell's object, the drift view, an
    /// editor), for the section that had the focus when the key was pressed.
    View(Section, ViewCommand),
    /// A key typed into a text input (filter, palette, confirmation, an editor's field).
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
    /// An exec the console ran on the terminal it handed over has ended: how, for the status
    /// line.
    ExecEnded(String),
}

/// Keys a text input understands: the ones that edit its text, and the ones the inputs
/// without a key map section of their own (the filter, the palette, a confirmation, the
/// override editor's rule form) move and leave by.
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
}

impl InputKey {
    /// Whether the key edits text (a character, backspace, clear the line) rather than
    /// moving or leaving.
    pub fn edits_text(self) -> bool {
        matches!(
            self,
            InputKey::Char(_) | InputKey::Backspace | InputKey::ClearLine
        )
    }
}
