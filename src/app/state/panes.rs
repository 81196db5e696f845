//! The two panes: which has the keyboard, what each is sorted by, and each one's rows in
//! display order, kept by delta: for every row its place (its group, then its
//! rank under the pane's sort key; equal places keep fleet order) and whether it is shown, and
//! the shown rows ordered by place. A row whose place or filter match changed moves by binary
//! search, so k changed rows cost O(k log n) comparisons plus the shift of the list they sit
//! in. Plain data: it must not work out places or filter matches itself — the state does,
//! from its rows and cells.

use std::ops::Range;

use super::filter::Filter;

/// Which pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pane {
    #[default]
    Clusters,
    Resources,
}

impl Pane {
    pub fn next(self) -> Pane {
        match self {
            Pane::Clusters => Pane::Resources,
            Pane::Resources => Pane::Clusters,
        }
    }
}

/// What a pane's rows are sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKey {
    /// Fleet order: the order of the inventory or the fleet files.
    #[default]
    Fleet,
    Name,
    /// Worst cell status first.
    Worst,
    /// Clusters only: unhealthy first.
    Health,
    /// Clusters only: slowest first.
    Latency,
    /// Resources only.
    Kind,
}

impl SortKey {
    pub fn name(self) -> &'static str {
        match self {
            SortKey::Fleet => "fleet order",
            SortKey::Name => "name",
            SortKey::Worst => "worst status",
            SortKey::Health => "health",
            SortKey::Latency => "latency",
            SortKey::Kind => "kind",
        }
    }

    /// The keys a pane cycles through.
    pub fn cycle(pane: Pane) -> &'static [SortKey] {
        match pane {
            Pane::Clusters => &[
                SortKey::Fleet,
                SortKey::Name,
                SortKey::Worst,
                SortKey::Health,
                SortKey::Latency,
            ],
            Pane::Resources => &[SortKey::Fleet, SortKey::Name, SortKey::Worst, SortKey::Kind],
        }
    }

    pub fn parse(text: &str) -> Option<SortKey> {
        [
            SortKey::Fleet,
            SortKey::Name,
            SortKey::Worst,
            SortKey::Health,
            SortKey::Latency,
            SortKey::Kind,
        ]
        .into_iter()
        .find(|key| {
            key.name().starts_with(&text.to_lowercase())
                || (text == "fleet" && *key == SortKey::Fleet)
        })
    }
}

/// Where a row sorts: by its group (the index of its grouping value; 0 when ungrouped), then
/// by its rank under the pane's sort key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub group: u32,
    pub rank: u64,
}

/// One row as its pane's order knows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Entry {
    pub place: Place,
    /// Whether the row's text, labels and kind pass the filters; its cells aside, since they
    /// change under it.
    pub matches_text: bool,
    /// Whether the row passes every filter, its cells included.
    pub shown: bool,
}

/// The rows a pane shows: its filter and sort, and the resulting row order.
#[derive(Debug, Clone, Default)]
pub struct PaneView {
    pub filter: Filter,
    pub sort: SortKey,
    /// Indexes into the pane's rows, in display order, after filtering.
    pub visible: Vec<usize>,
    /// Position of the cursor within `visible`.
    pub cursor: usize,
    /// Every row's entry, by row index; `visible` holds the shown ones by (place, index).
    entries: Vec<Entry>,
}

impl PaneView {
    /// The row under the cursor.
    pub fn selected(&self) -> Option<usize> {
        self.visible.get(self.cursor).copied()
    }

    /// Orders the rows anew from every row's entry.
    pub fn rebuild(&mut self, entries: Vec<Entry>) {
        let mut visible: Vec<usize> = (0..entries.len())
            .filter(|row| entries[*row].shown)
            .collect();
        visible.sort_by_key(|row| (entries[*row].place, *row));
        self.visible = visible;
        self.entries = entries;
    }

    pub fn entry(&self, row: usize) -> Option<Entry> {
        self.entries.get(row).copied()
    }

    /// Gives one row a new entry, moving it in `visible`; returns whether it moved, entered
    /// or left.
    pub fn reposition(&mut self, row: usize, entry: Entry) -> bool {
        let Some(old) = self.entry(row) else {
            return false;
        };
        if old == entry {
            return false;
        }
        let moves = old.shown != entry.shown || (entry.shown && old.place != entry.place);
        if moves
            && old.shown
            && let Some(position) = self.position(row)
        {
            self.visible.remove(position);
        }
        self.entries[row] = entry;
        if moves && entry.shown {
            let at = self
                .visible
                .partition_point(|other| (self.entries[*other].place, *other) < (entry.place, row));
            self.visible.insert(at, row);
        }
        moves
    }

    /// Where a shown row stands in `visible`.
    pub fn position(&self, row: usize) -> Option<usize> {
        let entry = self.entry(row).filter(|entry| entry.shown)?;
        let key = (entry.place, row);
        self.visible
            .binary_search_by(|other| (self.entries[*other].place, *other).cmp(&key))
            .ok()
    }

    /// The runs of shown rows sharing a group: each group index with its positions in
    /// `visible`, for the groups `0..groups`.
    pub fn group_runs(&self, groups: u32) -> Vec<(u32, Range<usize>)> {
        let group_of = |row: &usize| self.entries[*row].place.group;
        (0..groups)
            .filter_map(|group| {
                let start = self.visible.partition_point(|row| group_of(row) < group);
                let end = self.visible.partition_point(|row| group_of(row) <= group);
                (start < end).then_some((group, start..end))
            })
            .collect()
    }

    /// Puts the cursor back on `selected` if it is still shown, else keeps its position,
    /// clamped to the rows shown.
    pub fn restore_cursor(&mut self, selected: Option<usize>) {
        if let Some(position) = selected.and_then(|row| self.position(row)) {
            self.cursor = position;
        }
        self.cursor = self.cursor.min(self.visible.len().saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(group: u32, rank: u64, shown: bool) -> Entry {
        Entry {
            place: Place { group, rank },
            matches_text: true,
            shown,
        }
    }

    #[test]
    fn rows_sort_by_group_then_rank_then_fleet_order() {
        let mut view = PaneView::default();
        view.rebuild(vec![
            entry(1, 0, true),
            entry(0, 5, true),
            entry(0, 2, false),
            entry(0, 5, true),
            entry(1, 0, true),
        ]);
        assert_eq!(view.visible, vec![1, 3, 0, 4]);
        assert_eq!(view.group_runs(3), vec![(0, 0..2), (1, 2..4)]);
        assert_eq!(view.position(4), Some(3));
        assert_eq!(view.position(2), None, "a hidden row has no position");
    }

    #[test]
    fn a_changed_row_moves_enters_and_leaves_in_place() {
        let mut view = PaneView::default();
        view.rebuild((0..5).map(|row| entry(0, row, row != 2)).collect());
        assert_eq!(view.visible, vec![0, 1, 3, 4]);
        assert!(view.reposition(4, entry(0, 0, true)), "ranks first now");
        assert_eq!(view.visible, vec![0, 4, 1, 3], "ties keep fleet order");
        assert!(view.reposition(2, entry(0, 2, true)), "enters");
        assert_eq!(view.visible, vec![0, 4, 1, 2, 3]);
        assert!(view.reposition(1, entry(0, 1, false)), "leaves");
        assert_eq!(view.visible, vec![0, 4, 2, 3]);
        let mut hidden_moved = entry(0, 9, false);
        hidden_moved.matches_text = false;
        assert!(
            !view.reposition(1, hidden_moved),
            "a hidden row's new rank moves nothing"
        );
        assert_eq!(view.visible, vec![0, 4, 2, 3]);
    }

    #[test]
    fn the_cursor_follows_its_row_or_keeps_its_place() {
        let mut view = PaneView::default();
        view.rebuild((0..4).map(|row| entry(0, row, true)).collect());
        view.cursor = 1;
        view.reposition(1, entry(0, 9, true));
        view.restore_cursor(Some(1));
        assert_eq!(view.selected(), Some(1), "followed to the end");
        assert_eq!(view.cursor, 3);
        view.reposition(1, entry(0, 9, false));
        view.restore_cursor(Some(1));
        assert_eq!(view.cursor, 2, "its row left: clamped to the last row");
    }
}
