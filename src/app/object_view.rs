//! The object view's commands (its `object` key map section, and `x` to exec in one of its
//! pods) and what it asks of the backend:
//! scrolling, other clusters (← →), the views it cycles through (tab / shift-tab: desired,
//! live, diff, events, clusters), the group highlighted in the clusters view, and the cells
//! the backend must follow while it is open — asked for with [`Effect::OpenObjectView`], dropped
//! with [`Effect::CloseObjectView`] once it closes. Live reads the backend sends are kept only
//! for followed cells, and the template status they aggregate to (Karmada's rules, through the
//! engine) is worked out as each arrives. It must not do I/O nor draw.

use serde_json::json;

use super::state::object_view::{AggregateRead, HubMembers, LiveRead, ObjectTab};
use super::state::{Mode, State};
use crate::config::keymap::{KeyCommand, ViewCommand};
use crate::engine::compare::{diff, live_state};
use crate::engine::health::lua::Limits;
use crate::messages::{CellRef, Effect, LiveObject};

/// Opens the object view on the selected cell, at the desired object.
pub fn open(state: &mut State) {
    state.mode = Mode::Object {
        scroll: 0,
        tab: ObjectTab::Desired,
        group: 0,
    };
}

/// A command of the `object` key map section while the object view is open.
pub fn command(state: &mut State, command: ViewCommand) {
    let Mode::Object { scroll, tab, group } = state.mode else {
        return;
    };
    let page = state.page_rows.max(1);
    let (mut scroll, mut tab, mut group) = (scroll, tab, group);
    match command {
        ViewCommand::Back => {
            state.mode = Mode::Normal;
            return;
        }
        command @ (ViewCommand::NextView | ViewCommand::PrevView) => {
            tab = tab.step(command == ViewCommand::PrevView);
            scroll = 0;
        }
        // In the clusters view up and down pick a group; its object scrolls by page.
        ViewCommand::Down if tab == ObjectTab::Clusters => {
            group = (group + 1).min(groups_len(state).saturating_sub(1));
            scroll = 0;
        }
        ViewCommand::Up if tab == ObjectTab::Clusters => {
            group = group.saturating_sub(1);
            scroll = 0;
        }
        ViewCommand::Down => scroll += 1,
        ViewCommand::Up => scroll = scroll.saturating_sub(1),
        ViewCommand::PageDown => scroll += page,
        ViewCommand::PageUp => scroll = scroll.saturating_sub(page),
        ViewCommand::Top => scroll = 0,
        // Moving to the next or previous cluster shows that cluster's object.
        command @ (ViewCommand::PrevCluster | ViewCommand::NextCluster) => {
            state.step_cluster(command == ViewCommand::NextCluster);
        }
        _ => {}
    }
    state.mode = Mode::Object { scroll, tab, group };
}

/// A main view command while the object view is open (a key its section leaves free): quit,
/// and exec, which asks which of the pods the view lists to run in.
pub fn run_command(state: &mut State, command: KeyCommand) {
    match command {
        KeyCommand::Quit => state.should_quit = true,
        KeyCommand::Exec => super::exec::ask(state),
        _ => {}
    }
}

/// The cells the open view needs read: the selected cell, or in the clusters view every
/// cluster the resource is placed on; none when the view is closed. Reads are all a
/// read-only console asks of its backend.
fn wanted(state: &State) -> Vec<CellRef> {
    let Some((tab, _, _)) = state.object_view_place() else {
        return Vec::new();
    };
    let Some((resource, cluster)) = state.selected_cell() else {
        return Vec::new();
    };
    let clusters = if tab == ObjectTab::Clusters {
        state.placed_clusters(resource)
    } else {
        vec![cluster]
    };
    clusters
        .into_iter()
        .map(|cluster| CellRef {
            resource: resource as u32,
            cluster: cluster as u32,
        })
        .collect()
}

/// Brings what the backend follows in line with the view: a new follow when the cells it
/// needs changed, a stop when it closed. Reads of cells no longer followed are dropped.
pub fn follow(state: &mut State) -> Vec<Effect> {
    let wanted = wanted(state);
    if wanted == state.live.followed {
        return Vec::new();
    }
    state.live.reads.retain(|cell, _| wanted.contains(cell));
    state.live.aggregated.retain(|resource, _| {
        wanted
            .iter()
            .any(|cell| cell.resource as usize == *resource)
    });
    state.live.hub_members.retain(|resource, _| {
        wanted
            .iter()
            .any(|cell| cell.resource as usize == *resource)
    });
    let effect = if wanted.is_empty() {
        Effect::CloseObjectView
    } else {
        Effect::OpenObjectView {
            cells: wanted.clone(),
        }
    };
    state.live.followed = wanted;
    vec![effect]
}

/// A live read arrived: kept, with its YAML for reading, when the cell is followed.
pub fn receive(state: &mut State, cell: CellRef, live: LiveObject) {
    if !state.live.followed.contains(&cell) {
        return;
    }
    let yaml = live
        .object
        .as_ref()
        .map(|object| diff::to_yaml(&live_state::for_reading(object)))
        .unwrap_or_default();
    state.live.reads.insert(
        cell,
        LiveRead {
            live,
            received_ms: state.now_ms,
            yaml,
        },
    );
    aggregate(state, cell.resource as usize);
    check_hub_members(state, cell.resource as usize);
}

/// The bound of a status script run as a read arrives: a rule that runs away stops within a
/// frame's time or so and says so, instead of holding up the console for a second.
const CONSOLE_LIMITS: Limits = Limits {
    instructions: 2_000_000,
    memory: 32 << 20,
    time: std::time::Duration::from_millis(50),
};

/// Works out `resource`'s template status as Karmada would aggregate it from the reads of its
/// placed clusters, with the hub's own where a read brought it. A cluster not read yet, or
/// that could not be read, is left out: Karmada would still hold its last collected status,
/// which flotilla does not know (a member read that holds no object counts, with no status).
fn aggregate(state: &mut State, resource: usize) {
    let reads = member_reads(state, resource);
    let Some(row) = state.resources.get(resource) else {
        return;
    };
    // The hub's template where a read brought it (Karmada starts from its generation and
    // status), else the fleet's.
    let hub_template = reads
        .iter()
        .find_map(|(_, read)| read.live.hub.as_ref()?.template.as_ref());
    let template = hub_template.or_else(|| {
        let index = state.fleet.resource_index(&row.target, resource)?;
        state.fleet.template(index)
    });
    let Some(template) = template else {
        state.live.aggregated.remove(&resource);
        return;
    };
    let members = member_objects(&reads);
    // A read every few seconds mostly brings what the last did: the rule runs again only when
    // what goes into it changed.
    let inputs = inputs_hash(std::slice::from_ref(template), &members);
    if state
        .live
        .aggregated
        .get(&resource)
        .is_some_and(|kept| kept.inputs == inputs)
    {
        return;
    }
    let aggregated = state
        .fleet
        .interpreters
        .aggregate_members_within(template, &members, CONSOLE_LIMITS)
        .map(|result| AggregateRead {
            flotilla: result.map_err(|error| error.to_string()),
            members: members.len(),
            hub: hub_template.map(|t| t.get("status").cloned().unwrap_or_else(|| json!({}))),
            inputs,
        });
    match aggregated {
        Some(aggregated) => {
            state.live.aggregated.insert(resource, aggregated);
        }
        None => {
            state.live.aggregated.remove(&resource);
        }
    }
}

/// The reads of `resource`'s placed clusters that answered, by cluster name.
fn member_reads(state: &State, resource: usize) -> Vec<(&str, &LiveRead)> {
    state
        .placed_clusters(resource)
        .into_iter()
        .filter_map(|cluster| {
            let read = state.live.reads.get(&CellRef {
                resource: resource as u32,
                cluster: cluster as u32,
            })?;
            if read.live.object.is_none() && read.live.error.is_some() {
                return None;
            }
            Some((state.clusters.get(cluster)?.spec.name.as_str(), read))
        })
        .collect()
}

/// Each member read and its live object (`None`: it does not hold it).
fn member_objects<'a>(
    reads: &[(&'a str, &'a LiveRead)],
) -> Vec<(&'a str, Option<&'a serde_json::Value>)> {
    reads
        .iter()
        .map(|(name, read)| (*name, read.live.object.as_ref()))
        .collect()
}

/// A hash of what goes into a piece of work done as reads arrive (`given`, then each
/// member's object), so an unchanged read does not do it again.
fn inputs_hash(given: &[serde_json::Value], members: &[(&str, Option<&serde_json::Value>)]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for value in given {
        value.to_string().hash(&mut hasher);
    }
    for (name, object) in members {
        name.hash(&mut hasher);
        object.map(|o| o.to_string()).hash(&mut hasher);
    }
    hasher.finish()
}

/// On a Karmada hub: `resource`'s binding's per-member record (each member's collected
/// status, applied and health, as a read brought it) held against the reads of its placed
/// clusters, each difference flagged. Off a hub, or before the hub's record arrives, none.
fn check_hub_members(state: &mut State, resource: usize) {
    let worked_out = {
        let reads = member_reads(state, resource);
        let recorded = reads
            .iter()
            .find_map(|(_, read)| read.live.hub.as_ref())
            .map(|hub| &hub.items)
            .filter(|items| !items.is_empty());
        recorded.map(|recorded| {
            let members = member_objects(&reads);
            let inputs = inputs_hash(recorded, &members);
            let unchanged = state
                .live
                .hub_members
                .get(&resource)
                .is_some_and(|kept| kept.inputs == inputs);
            (!unchanged).then(|| HubMembers {
                checks: state
                    .fleet
                    .interpreters
                    .check_members(recorded, &members, CONSOLE_LIMITS),
                inputs,
            })
        })
    };
    match worked_out {
        None => {
            state.live.hub_members.remove(&resource);
        }
        Some(None) => {}
        Some(Some(members)) => {
            state.live.hub_members.insert(resource, members);
        }
    }
}

/// How many groups the clusters view shows.
fn groups_len(state: &State) -> usize {
    state
        .selected_resource()
        .map_or(0, |resource| state.live_groups(resource).len())
}
