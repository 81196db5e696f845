//! The scripting commands of design §3, each a function from parsed arguments to an exit code.
//! They print results to stdout and problems to stderr; they must not open the console.
//! The fleet commands are files here; the editing commands are in `edit/`, and the commands
//! about flotilla itself (completion, manual pages, where its files live) in `shell/`.

pub mod clusters;
pub mod edit;
pub mod exec;
pub mod hub;
pub mod logs;
pub mod pods;
pub mod propagate;
pub mod render;
pub mod repair;
pub mod scope;
pub mod shell;
pub mod status;
