//! A (resource, cluster) cell of the propagation matrix, as effects and events name it, and
//! the news about one: its status, its live health. Plain data; it must not import anything
//! above `model`.

use std::collections::BTreeMap;

use crate::model::CellStatus;

/// A (resource, cluster) cell position in the propagation matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellRef {
    pub resource: u32,
    pub cluster: u32,
}

/// Groups per-cluster items (a cell's row, a field to revert, a whole cell) by their cluster,
/// clusters in order and items in the order given.
pub fn by_cluster<T>(items: impl IntoIterator<Item = (u32, T)>) -> BTreeMap<u32, Vec<T>> {
    let mut grouped: BTreeMap<u32, Vec<T>> = BTreeMap::new();
    for (cluster, item) in items {
        grouped.entry(cluster).or_default().push(item);
    }
    grouped
}

/// One cell's new status.
#[derive(Debug, Clone, PartialEq)]
pub struct CellUpdate {
    pub cell: CellRef,
    pub status: CellStatus,
    /// Human detail for the detail pane (an API error, the drifted path), if any.
    pub message: Option<String>,
}

/// One cell's live health.
#[derive(Debug, Clone, PartialEq)]
pub struct HealthUpdate {
    pub cell: CellRef,
    pub health: Option<crate::model::CellHealth>,
}
