//! Everything that can change the console's state, as plain messages.
//! It must not carry terminal handles or clients.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::backend::BackendEvent;
use crate::config::keymap::KeyCommand;

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
    /// The clock moved: milliseconds since the app started.
    Tick { now_ms: u64 },
    /// Quit for a reason other than a key (a signal).
    Terminate,
}

/// Keys a text input understands.
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
    /// The input key a terminal key stands for while typing; `None` for keys inputs ignore.
    pub fn from_event(event: KeyEvent) -> Option<InputKey> {
        let ctrl = event.modifiers.contains(KeyModifiers::CONTROL);
        Some(match event.code {
            KeyCode::Char('u') if ctrl => InputKey::ClearLine,
            KeyCode::Char(_) if ctrl => return None,
            KeyCode::Char(c) => InputKey::Char(c),
            KeyCode::Backspace => InputKey::Backspace,
            KeyCode::Enter => InputKey::Enter,
            KeyCode::Esc => InputKey::Esc,
            KeyCode::Tab => InputKey::Tab,
            KeyCode::Up | KeyCode::BackTab => InputKey::Up,
            KeyCode::Down => InputKey::Down,
            _ => return None,
        })
    }
}
