//! Backend events queued between two frames, coalesced per cell: the latest status (and the
//! latest drifted fields) of a cell wins, log lines of one stream join into one event holding
//! at most the log pane's capacity (the oldest are counted as skipped), and every other event
//! keeps its place in order. A flood of cell changes or log lines therefore costs the app one
//! update per changed cell, and one per log stream, per frame, not one per event. It must not
//! look inside statuses or lines, nor decide what an event means.

use std::collections::HashMap;

use crate::app::state::logs::CAPACITY as LOG_CAPACITY;
use crate::messages::{BackendEvent, CellRef, CellUpdate, DriftField};

/// Events waiting for the next frame.
#[derive(Debug, Default)]
pub struct Batch {
    ready: Vec<BackendEvent>,
    cells: Vec<CellUpdate>,
    cell_slots: HashMap<CellRef, usize>,
    drift: Vec<(CellRef, Vec<DriftField>)>,
    drift_slots: HashMap<CellRef, usize>,
}

impl Batch {
    /// Queues one event; a cell's newer status or drift replaces the one already queued.
    pub fn push(&mut self, event: BackendEvent) {
        match event {
            BackendEvent::Cells(updates) => {
                for update in updates {
                    match self.cell_slots.get(&update.cell) {
                        Some(&slot) => self.cells[slot] = update,
                        None => {
                            self.cell_slots.insert(update.cell, self.cells.len());
                            self.cells.push(update);
                        }
                    }
                }
            }
            BackendEvent::Drift { cell, fields } => match self.drift_slots.get(&cell) {
                Some(&slot) => self.drift[slot].1 = fields,
                None => {
                    self.drift_slots.insert(cell, self.drift.len());
                    self.drift.push((cell, fields));
                }
            },
            BackendEvent::Logs {
                stream,
                items,
                skipped,
            } => {
                self.close_cells();
                match self.ready.last_mut() {
                    Some(BackendEvent::Logs {
                        stream: last,
                        items: queued,
                        skipped: queued_skipped,
                    }) if *last == stream => {
                        *queued_skipped += skipped;
                        queued.extend(items);
                        let over = queued.len().saturating_sub(LOG_CAPACITY);
                        if over > 0 {
                            queued.drain(..over);
                            *queued_skipped += over;
                        }
                    }
                    _ => self.ready.push(BackendEvent::Logs {
                        stream,
                        items,
                        skipped,
                    }),
                }
            }
            other => {
                self.close_cells();
                self.ready.push(other);
            }
        }
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.ready.is_empty() && self.cells.is_empty() && self.drift.is_empty()
    }

    /// Everything queued, in order: each run of cell changes as one `Cells` event followed by
    /// the drift of those cells.
    pub fn take(&mut self) -> Vec<BackendEvent> {
        self.close_cells();
        std::mem::take(&mut self.ready)
    }

    fn close_cells(&mut self) {
        if !self.cells.is_empty() {
            self.ready
                .push(BackendEvent::Cells(std::mem::take(&mut self.cells)));
            self.cell_slots.clear();
        }
        for (cell, fields) in self.drift.drain(..) {
            self.ready.push(BackendEvent::Drift { cell, fields });
        }
        self.drift_slots.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CellStatus;

    fn update(resource: u32, cluster: u32, status: CellStatus) -> CellUpdate {
        CellUpdate {
            cell: CellRef { resource, cluster },
            status,
            message: None,
        }
    }

    #[test]
    fn the_latest_status_of_a_cell_wins() {
        let mut batch = Batch::default();
        batch.push(BackendEvent::Cells(vec![
            update(0, 0, CellStatus::Pending),
            update(0, 1, CellStatus::Pending),
        ]));
        batch.push(BackendEvent::Cells(vec![update(0, 0, CellStatus::InSync)]));
        batch.push(BackendEvent::Cells(vec![update(0, 0, CellStatus::Drifted)]));
        assert_eq!(
            batch.take(),
            vec![BackendEvent::Cells(vec![
                update(0, 0, CellStatus::Drifted),
                update(0, 1, CellStatus::Pending),
            ])]
        );
        assert!(batch.is_empty());
    }

    fn log_lines(stream: u64, from: usize, count: usize) -> BackendEvent {
        let items = (from..from + count)
            .map(|n| {
                crate::messages::LogItem::Line(crate::engine::logs::LogLine {
                    cluster: "eu-1".into(),
                    namespace: "shop".into(),
                    pod: "web-1".into(),
                    container: "web".into(),
                    time: None,
                    text: n.to_string(),
                })
            })
            .collect();
        BackendEvent::Logs {
            stream,
            items,
            skipped: 0,
        }
    }

    #[test]
    fn a_flood_of_log_lines_is_one_bounded_event_per_stream() {
        let mut batch = Batch::default();
        for chunk in 0..30 {
            batch.push(log_lines(1, chunk * 1_000, 1_000));
        }
        batch.push(log_lines(2, 0, 1));
        let events = batch.take();
        assert_eq!(events.len(), 2);
        let BackendEvent::Logs {
            stream,
            items,
            skipped,
        } = &events[0]
        else {
            panic!("{:?}", events[0]);
        };
        assert_eq!(
            (*stream, items.len(), *skipped),
            (1, LOG_CAPACITY, 30_000 - LOG_CAPACITY)
        );
        // The newest lines are the ones kept, in order.
        let last = match items.last() {
            Some(crate::messages::LogItem::Line(line)) => line.text.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(last, "29999");
    }

    #[test]
    fn other_events_keep_their_order_around_cell_changes() {
        let mut batch = Batch::default();
        batch.push(BackendEvent::Cells(vec![update(0, 0, CellStatus::Pending)]));
        batch.push(BackendEvent::Notice("saved".into()));
        batch.push(BackendEvent::Cells(vec![update(0, 0, CellStatus::InSync)]));
        batch.push(BackendEvent::Drift {
            cell: CellRef {
                resource: 0,
                cluster: 0,
            },
            fields: Vec::new(),
        });
        let events = batch.take();
        assert_eq!(events.len(), 4, "{events:?}");
        assert_eq!(
            events[0],
            BackendEvent::Cells(vec![update(0, 0, CellStatus::Pending)])
        );
        assert_eq!(events[1], BackendEvent::Notice("saved".into()));
        assert_eq!(
            events[2],
            BackendEvent::Cells(vec![update(0, 0, CellStatus::InSync)])
        );
        assert!(matches!(events[3], BackendEvent::Drift { .. }));
    }
}
