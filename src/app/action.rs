//! Everything that can change the console's state, as plain messages.
//! It must not carry terminal handles or clients.

use crate::backend::BackendEvent;
use crate::config::keymap::Command;

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A key map command the operator triggered.
    Command(Command),
    /// A fact from the backend.
    Backend(BackendEvent),
    /// The terminal now has this many columns and rows.
    Resize { width: u16, height: u16 },
    /// Quit for a reason other than a key (a signal).
    Terminate,
}
