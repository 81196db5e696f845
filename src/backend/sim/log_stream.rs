//! The demo's log pane: the cells' simulated clusters as they are when the pane opens (a copy
//! of the world, shared by the clusters' read-only APIs), each cell's desired object, and the
//! streaming the live backends do too (`backend::log_pane`). It must not touch real clusters,
//! nor change the console's simulated world.

use tokio::sync::mpsc;

use super::cluster_api::{SimClusterApi, SimFleet};
use super::world::SimCore;
use crate::backend::fanout::cluster_api::ApiError;
use crate::backend::log_pane::{PaneCell, spawn};
use crate::engine::Decision;
use crate::messages::{BackendEvent, LogOpen};

/// The cells `open` names, read on the simulated clusters.
fn cells(core: &SimCore, open: &LogOpen) -> Vec<PaneCell<SimClusterApi>> {
    let fleet = SimFleet::new(core.clone());
    open.cells
        .iter()
        .filter_map(|cell| {
            let spec = core.fleet().clusters.get(cell.cluster as usize)?;
            let Decision::Placed { object, .. } = core
                .fleet()
                .decide(cell.resource as usize, cell.cluster as usize)
            else {
                return None;
            };
            Some(PaneCell {
                cluster: spec.name.clone(),
                api: fleet
                    .cluster(&spec.name, true)
                    .ok_or_else(|| ApiError::NotFound(format!("no cluster {}", spec.name))),
                desired: object,
            })
        })
        .collect()
}

/// Starts streaming the pane's logs in a task of its own; it ends with the pane's lease.
pub fn open(core: &SimCore, events: &mpsc::UnboundedSender<BackendEvent>, open: LogOpen) {
    let cells = cells(core, &open);
    spawn(async move { cells }, open, events.clone());
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::messages::{CellRef, LogItem, LogLease};
    use std::sync::Arc;

    fn demo() -> SimCore {
        let (fleet, errors) = crate::engine::load_fleet(&crate::fleet::demo::demo_files());
        assert!(errors.is_empty());
        SimCore::new(
            Arc::new(fleet),
            &super::super::scenario::Scenario::demo(),
            7,
        )
    }

    #[tokio::test]
    async fn the_pane_gets_the_demo_lines_and_they_stop_with_the_lease() {
        let core = demo();
        let fleet = core.fleet().clone();
        let resource = fleet
            .resources
            .iter()
            .position(|r| r.target.kind == "Deployment" && r.target.name == "checkout")
            .unwrap();
        let cluster = fleet.cluster_index("prod-eu-west-1").unwrap();
        let (lease, watch) = LogLease::new();
        let (events, mut received) = mpsc::unbounded_channel();
        let request = LogOpen {
            stream: 7,
            cells: vec![CellRef {
                resource: resource as u32,
                cluster: cluster as u32,
            }],
            previous: false,
            tail: 5,
            watch: watch.clone(),
        };
        let found = cells(&core, &request);
        spawn(async move { found }, request, events);
        let Some(BackendEvent::Logs { stream, items, .. }) = received.recv().await else {
            panic!("lines come");
        };
        assert_eq!(stream, 7);
        let lines: Vec<_> = items
            .iter()
            .filter_map(|item| match item {
                LogItem::Line(line) => Some(line),
                LogItem::Note { .. } => None,
            })
            .collect();
        assert!(!lines.is_empty(), "{items:?}");
        assert!(lines.iter().all(|line| line.cluster == "prod-eu-west-1"));
        assert!(lines.iter().all(|line| line.pod.starts_with("checkout-")));
        // Closing the pane ends the streams: their thread lets go of its sender.
        drop(lease);
        while received.recv().await.is_some() {}
        assert!(watch.is_ended());
    }
}
