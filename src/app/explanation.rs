//! The engine's explanation of the selected cell, kept current in the state: why the cell is
//! placed or not, the steps that decided it, and (when drilled in) the desired object with
//! Secret values masked. Recomputed only when the selection, the mode or the fleet changes.
//! It must not do I/O or read anything but the state.

use super::state::{CellExplanation, Mode, State};
use crate::engine::Decision;
use crate::engine::compare::secrets;

/// Brings `state.explanation` up to date with the selected cell; cheap when it already is.
pub fn follow_selection(state: &mut State) {
    let Some((resource, cluster)) = state.selected_cell() else {
        state.explanation = None;
        return;
    };
    // A hub's scheduler placed it: the cell's own detail says why, not this engine.
    if !state.fleet.plans(resource) {
        state.explanation = None;
        return;
    }
    let current = state
        .explanation
        .as_ref()
        .is_some_and(|e| e.resource == resource && e.cluster == cluster);
    if !current {
        let explanation = state.fleet.explain(resource, cluster);
        state.explanation = Some(CellExplanation {
            resource,
            cluster,
            placed: explanation.placed,
            reason: explanation.reason,
            steps: explanation.steps,
            object_yaml: None,
            chain: state.fleet.chain(resource, cluster),
        });
    }
    let drilled_in = matches!(state.mode, Mode::Object { .. });
    let fleet = state.fleet.clone();
    if let Some(explanation) = state.explanation.as_mut()
        && drilled_in
        && explanation.object_yaml.is_none()
    {
        explanation.object_yaml = Some(match fleet.decide(resource, cluster) {
            Decision::Placed { object, .. } => serde_saphyr::to_string(&secrets::mask(&object))
                .unwrap_or_else(|err| format!("# cannot show the object as YAML: {err}")),
            Decision::Suspended { object, reason, .. } => format!(
                "# {reason}\n{}",
                serde_saphyr::to_string(&secrets::mask(&object))
                    .unwrap_or_else(|err| format!("# cannot show the object as YAML: {err}"))
            ),
            Decision::NotPlaced { reason } => format!("# not placed on this cluster: {reason}"),
        });
    }
}
