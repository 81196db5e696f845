//! A Karmada hub: [`read`] turns its Clusters, ResourceBindings and Works into the console's
//! view, [`fleet_files`] reads the fleet it holds (inventory, policies, templates) as source
//! texts, [`delta`] keeps that view current one watched object at a time, and [`write`] asks its scheduler to reschedule a binding. The readers only read;
//! writing is [`write`]'s alone, and edited policies go through the hub-wide writer.

pub mod delta;
pub mod fleet_files;
pub mod read;
pub mod types;
pub mod write;

pub use fleet_files::fleet_files;
pub use read::{
    Binding, Work, WorkState, binding_of, bindings_and_works, row_of, status_of, view_of, work_of,
    works_by_binding,
};
pub use write::reschedule;
