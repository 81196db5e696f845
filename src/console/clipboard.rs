//! Copying to the system clipboard through the terminal: the text the session left in
//! `state.clipboard` (`y` in the log pane) goes out as an OSC 52 escape, which the terminal
//! (and tmux with `set-clipboard on`, and a terminal at the far end of ssh) puts on the
//! clipboard. Written at the terminal's edge, between frames, to the terminal the console
//! draws on. It must not decide what is copied nor say anything on the screen.

use std::io::{self, Write};

use base64::Engine as _;

/// How a copy reaches the terminal's clipboard: writes one OSC 52 sequence.
pub type Clipboard = Box<dyn FnMut(&str) -> io::Result<()> + Send>;

/// The OSC 52 sequence that puts `text` on the clipboard (`c`): its bytes in base64, ended by
/// BEL, the terminator xterm, tmux and the terminals that copy xterm all take.
pub fn osc52(text: &str) -> String {
    format!(
        "\x1b]52;c;{}\x07",
        base64::engine::general_purpose::STANDARD.encode(text)
    )
}

/// Writes `text`'s OSC 52 sequence to `out` and flushes it.
pub fn write_to(out: &mut impl Write, text: &str) -> io::Result<()> {
    out.write_all(osc52(text).as_bytes())?;
    out.flush()
}

/// The clipboard of the terminal on standard output (the one the console draws on).
pub fn stdout() -> Clipboard {
    Box::new(|text| write_to(&mut io::stdout().lock(), text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_carries_the_texts_bytes_in_base64() {
        assert_eq!(osc52("hello"), "\x1b]52;c;aGVsbG8=\x07");
        // Any bytes survive: the escaped control characters a log line shows, and UTF-8.
        let line = "eu-1 web-1 web naïve \\u{1b}[2J";
        let sequence = osc52(line);
        let encoded = sequence
            .strip_prefix("\x1b]52;c;")
            .and_then(|rest| rest.strip_suffix('\x07'))
            .unwrap_or_default();
        assert!(!encoded.contains('\x1b') && !encoded.contains('\x07'));
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap_or_default();
        assert_eq!(String::from_utf8_lossy(&decoded), line);
        let mut out = Vec::new();
        assert!(write_to(&mut out, line).is_ok());
        assert_eq!(out, sequence.as_bytes());
    }
}
