//! Owning the terminal: raw mode and the alternate screen on the way in, and a guaranteed way
//! out on quit, error, panic or signal. It must not draw anything itself.

use std::io;

use ratatui::DefaultTerminal;

/// The terminal in console mode; dropping it restores the terminal.
pub struct TerminalGuard {
    terminal: DefaultTerminal,
}

impl TerminalGuard {
    /// Enters raw mode and the alternate screen, and makes a panic restore the terminal before
    /// its message prints.
    pub fn enter() -> io::Result<TerminalGuard> {
        // ratatui installs a panic hook that restores the terminal, then runs the previous hook.
        let terminal = ratatui::try_init()?;
        Ok(TerminalGuard { terminal })
    }

    pub fn terminal(&mut self) -> &mut DefaultTerminal {
        &mut self.terminal
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        ratatui::restore();
    }
}
