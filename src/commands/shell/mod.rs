//! The commands about flotilla itself rather than a fleet: shell completion, manual pages and
//! where flotilla keeps its files. They read the command line's own definition and the
//! environment; they must not read a fleet or reach a cluster.

pub mod completion;
pub mod info;
pub mod man;
