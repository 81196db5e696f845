//! The contract between the console's app, its backends and its views: the [`Effect`]s the
//! app asks a backend for, the [`BackendEvent`]s a backend answers with, the cells they name
//! and the plain data they carry (a plan's rows, drifted fields, a followed object). It sits
//! below all three so each imports it downward. Plain data and its pure methods only: it must
//! not do anything the messages describe, and must not import `backend`, `app`, `views`,
//! `console` or anything else above it (`model`, `engine` and `config` are below).
//!
//! # Rooms, from the bottom up
//! - [`cell`]: a cell of the matrix and the news about it.
//! - [`plan_item`], [`drift_field`], [`live_object`]: what a cluster answered, as carried.
//! - [`logs`]: the log pane's request, lease and lines.
//! - [`effect`]: what the app asks of a backend, and the fleet handed over with it.
//! - [`event`]: what a backend reports, and what a connected hub lets the console do.

pub mod cell;
pub mod drift_field;
pub mod effect;
pub mod event;
pub mod live_object;
pub mod logs;
pub mod plan_item;

pub use cell::{CellRef, CellUpdate, HealthUpdate, by_cluster};
pub use drift_field::DriftField;
pub use effect::{Effect, RevertField, SharedFleet};
pub use event::{AddedResource, BackendEvent, CannotEdit, HubTraits};
pub use live_object::{CellPods, HubAggregate, LiveObject, ObjectEvent};
pub use logs::{LogItem, LogLease, LogOpen, LogWatch};
pub use plan_item::{PlanAction, PlanItem};
