//! An Open Cluster Management hub: [`read`] turns its ManagedClusters, cluster sets,
//! Placements and ManifestWorks into the console's view and the placement editor's world,
//! [`delta`] keeps that view current one watched object at a time, and [`write`] writes an
//! edited Placement back. The reader only reads; writing is [`write`]'s
//! alone.

pub mod delta;
pub mod read;
pub mod types;
pub mod write;

pub use read::{
    ClusterSet, Decision, Manifest, ManifestState, ManifestWork, Placement, PlacementState,
    SetBinding, binding_of, cluster_set_of, manifest_cell, manifest_work_of, manifest_works,
    placement_state, placement_world, placements_of, render_of, rows_of, spec_of, status_of,
};
pub use write::write_placement;
