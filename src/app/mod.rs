//! The console app without a terminal: one owner of state. [`Action`]s come in, `update`
//! applies them to the [`State`] (deriving the selected cell's explanation and the editors'
//! previews from their inputs) and returns effects for the backend, and the [`Session`] saves
//! confirmed edits and hands the effects on. It must not import the
//! terminal, `views` or `console` (they sit above it), nor talk to clusters outside `backend`.

pub mod action;
pub mod drift;
pub mod exec;
pub mod explanation;
pub mod logs;
pub mod object_view;
pub mod ocm_placement;
pub mod override_editor;
pub mod palette;
pub mod placement_editor;
pub mod review;
pub mod rollout;
pub mod session;
pub mod state;
pub mod text_input;
pub mod update;

pub use action::Action;
pub use session::Session;
pub use state::{State, state_for_fleet};
pub use update::update;
