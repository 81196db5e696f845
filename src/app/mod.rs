//! The console app without a terminal: one owner of state. [`Action`]s come in, `update`
//! applies them to the [`State`] and returns effects for the backend, and the [`Session`] runs
//! the engine work the state asks for and hands the effects on. It must not import the
//! terminal, `views` or `console` (they sit above it), nor talk to clusters outside `backend`.

pub mod action;
pub mod drift;
pub mod editor;
pub mod filter;
pub mod ocm_placement;
pub mod overrides;
pub mod palette;
pub mod rollout;
pub mod session;
pub mod state;
pub mod update;

pub use action::Action;
pub use session::Session;
pub use state::{State, state_for_fleet};
pub use update::update;

/// Why an editor cannot open on a row the hub gained after the console loaded its fleet.
pub(crate) const NEW_SINCE_START: &str =
    "this row is new on the hub since the console started: reopen the console to edit it";
