//! The scripting commands of design §3, each a function from parsed arguments to an exit code.
//! They print results to stdout and problems to stderr; they must not open the console.

pub mod clusters;
pub mod completion;
pub mod edits;
pub mod hub;
pub mod info;
pub mod man;
pub mod ocm_placement;
pub mod override_rules;
pub mod placement;
pub mod propagate;
pub mod render;
pub mod repair;
pub mod reschedule;
pub mod scope;
pub mod status;
pub mod undo;
