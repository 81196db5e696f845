//! Owning the terminal: raw mode and the alternate screen on the way in, and a guaranteed way
//! out on quit, error, panic or signal; handing it to an exec session and taking it back
//! ([`suspend`], [`resume`]). It must not draw anything itself.

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

/// Hands the terminal over: the main screen back, raw mode off, the cursor shown.
pub fn suspend() {
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = crossterm::execute!(
        io::stdout(),
        crossterm::terminal::LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// Takes the terminal back: the alternate screen and raw mode again (the caller redraws all
/// of it).
pub fn resume() -> io::Result<()> {
    // Dropping the console's input stream (so the handed-over command alone reads the
    // terminal) left crossterm's wake-up pending. Were the next poll to find it beside the
    // first key typed after the handover, crossterm would report only the wake-up, and that
    // key would sit unread until another came. Taking it now, before the console draws and
    // anyone has reason to type, leaves the first key to arrive alone.
    let _ = crossterm::event::poll(std::time::Duration::ZERO);
    crossterm::terminal::enable_raw_mode()?;
    crossterm::execute!(
        io::stdout(),
        crossterm::terminal::EnterAlternateScreen,
        crossterm::terminal::Clear(crossterm::terminal::ClearType::All)
    )
}
