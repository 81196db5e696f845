//! Drift as the state holds it: the drift book (every drifted field the backend reported,
//! fields taken back before, owner fights, the last repair) and the drift view's own data
//! (cursor, marks, the stage of a repair and what its confirmation lists), and the book read as
//! the view lists it: the same drift on several clusters grouped, and the list's rows. Plain
//! data and pure reads of it: it must not import the state or change it (keys and repairs are
//! `app::drift`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::cells::CellGrid;
use super::edits::FleetWrite;
use crate::messages::{CellRef, DriftField, RevertField};

/// One field of one cell, the unit of marking and repair.
pub type FieldKey = (CellRef, String);

/// What the backend said about drift, kept whether or not the view is open.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DriftBook {
    /// The drifted fields of every drifted cell.
    pub fields: BTreeMap<CellRef, Vec<DriftField>>,
    /// Fields taken back before, with the manager that had changed them (empty when only the
    /// audit log knows of the revert, not who had changed the field).
    pub reverted: BTreeMap<FieldKey, String>,
    /// Owner fights: fields changed again by the manager they were taken back from.
    pub fights: BTreeMap<FieldKey, String>,
    /// The last confirmed repair, for its progress and results.
    pub last_batch: Option<Batch>,
}

/// A confirmed repair and the cells it touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub verb: Verb,
    pub cells: Vec<CellRef>,
    /// Fields it covered.
    pub fields: usize,
}

/// The three ways to resolve drift, and removing an ignore rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Revert,
    Adopt,
    Ignore,
    RemoveRule,
}

impl Verb {
    pub fn name(self) -> &'static str {
        match self {
            Verb::Revert => "revert",
            Verb::Adopt => "adopt",
            Verb::Ignore => "ignore",
            Verb::RemoveRule => "remove rule",
        }
    }
}

/// One cluster's copy of a drift.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub cell: CellRef,
    pub manager: Option<String>,
    /// When the manager last wrote the field, as the cluster says.
    pub changed: Option<String>,
    /// Since when (app clock, ms) the cell has been drifted.
    pub since_ms: Option<u64>,
    /// The competing manager when this is an owner fight.
    pub fight: Option<String>,
}

/// The same drift on one or more clusters.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub resource: usize,
    pub path: String,
    pub desired: Value,
    pub live: Value,
    /// Whether the values are a Secret's, shown masked.
    pub secret: bool,
    pub members: Vec<Member>,
}

/// A row of the drift list: a group, or one cluster of a group of several.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    Group(usize),
    Member(usize, usize),
}

/// Which list has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pane {
    #[default]
    Fields,
    Rules,
}

/// An ignore rule as the view lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleRow {
    pub name: String,
    /// `file:line`.
    pub location: String,
    pub summary: String,
}

/// A field chosen for a repair, with what the confirmation shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub cell: CellRef,
    pub path: String,
    pub desired: Value,
    pub live: Value,
    pub manager: Option<String>,
    /// Whether the values are a Secret's, shown masked.
    pub secret: bool,
}

/// Browsing, waiting for the engine's file changes, or asking.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Stage {
    #[default]
    Browsing,
    /// `app::drift::refresh` computes what adopting, ignoring or removing a rule writes.
    Preparing {
        verb: Verb,
        targets: Vec<Target>,
        rule: Option<String>,
    },
    Confirming(Box<Plan>),
}

/// What a confirmed repair does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanEffect {
    Revert(Vec<RevertField>),
    Write(FleetWrite),
}

/// A repair waiting for the operator: the lines listing exactly what will be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub verb: Verb,
    pub lines: Vec<String>,
    /// `y`, or the name of a danger-class cluster that must be typed.
    pub confirm_word: String,
    pub typed: String,
    pub effect: PlanEffect,
    pub fields: usize,
}

/// The view's own state; lives in `Mode::Drift`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DriftView {
    pub cursor: usize,
    pub marked: BTreeSet<FieldKey>,
    pub pane: Pane,
    pub rule_cursor: usize,
    /// The fleet's ignore rules, filled in by `app::drift::refresh`.
    pub rules: Vec<RuleRow>,
    pub stage: Stage,
}

impl DriftBook {
    /// Every drift, grouped, in (resource, path) order; `cells` says since when each cell has
    /// been drifted.
    pub fn groups(&self, cells: &CellGrid) -> Vec<Group> {
        let mut by_key: BTreeMap<(usize, String, String, String), Group> = BTreeMap::new();
        for (cell, fields) in &self.fields {
            for field in fields {
                let key = (
                    cell.resource as usize,
                    field.path.clone(),
                    field.desired.to_string(),
                    field.live.to_string(),
                );
                let group = by_key.entry(key).or_insert_with(|| Group {
                    resource: cell.resource as usize,
                    path: field.path.clone(),
                    desired: field.desired.clone(),
                    live: field.live.clone(),
                    secret: field.secret,
                    members: Vec::new(),
                });
                group.members.push(Member {
                    cell: *cell,
                    manager: field.manager.clone(),
                    changed: field.time.clone(),
                    since_ms: cells.problem_since(*cell),
                    fight: self.fights.get(&(*cell, field.path.clone())).cloned(),
                });
            }
        }
        by_key.into_values().collect()
    }
}

/// The drift list's rows: each group, then its clusters when it has several.
pub fn rows(groups: &[Group]) -> Vec<Row> {
    let mut rows = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        rows.push(Row::Group(g));
        if group.members.len() > 1 {
            rows.extend((0..group.members.len()).map(|m| Row::Member(g, m)));
        }
    }
    rows
}
