//! User-facing configuration: themes and key maps, built in and (later) from the user's
//! config directory. Loading never fails the program: bad entries become warnings.

pub mod keymap;
pub mod theme;
