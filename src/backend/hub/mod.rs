//! Hub mode: a federation control plane is the source of truth. [`kind`] tells which kind of
//! hub a context is from the API groups it serves; [`connect`] reaches it and reads it through
//! that kind's reader. Each kind has a room with its readers apart from its writers:
//! [`karmada`], [`ocm`] and [`kubefed`] (which only reads, kept current by [`kubefed_delta`]);
//! [`write`] writes an edited object to any hub. The console's backend on a hub is the room
//! [`console`]: one loop, started from its first view and given a view source (the informer
//! caches [`cache`] keeps, the main path, or whole reads of the hub), with what changed turned
//! into the console's events and the console's edits carried out and followed there;
//! [`preview`] answers the editors' previews and `plan --hub`.
//! [`member_health`] and [`object_view`] read members' own objects where the hub's word is not
//! enough, and [`log_stream`] streams members' pod logs into the console's log pane. Their
//! errors say why by cause ([`HubError`]: not a hub, unreachable, a kind it does
//! not serve, an object it cannot read, a refused write, an object changed under an edit).
//! Readers only read; only the `write` modules send a mutating request, and a
//! read-only console never reaches them. No file here decides placement (the engine does) or
//! knows exit codes (the command line does).

pub mod cache;
pub mod connect;
pub mod console;
pub mod error;
pub mod karmada;
pub mod kind;
pub mod kubefed;
pub mod kubefed_delta;
pub mod log_stream;
pub mod member_health;
pub mod object_view;
pub mod objects;
pub mod ocm;
pub mod preview;
pub mod view;
pub mod write;

pub use crate::model::HubKind;
pub use connect::{Hub, connect};
pub use error::HubError;
pub use kind::detect;
pub use objects::{delivered_form, drop_marks, is_flotilla_mark, path_of};
pub use view::{
    HubRender, HubRow, HubView, RenderedObject, TemplateLabels, Unplaced, aligned, in_rows_of,
    sort_rows,
};
