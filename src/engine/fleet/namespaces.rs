//! The Namespaces a fleet implies: Karmada creates a template's namespace on every member it
//! places the template on, so each namespace of the fleet's Karmada templates is listed with
//! the templates in it and the resources that render it themselves, and a Namespace template
//! no ClusterPropagationPolicy selects goes exactly where its objects go. It reads an
//! assembled fleet's plans; it must not read documents or change any other plan.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::engine::fleet::decide::Fleet;
use crate::engine::fleet::plan::{Cell, ImpliedNamespace, Origin};
use crate::model::Dialect;

/// Lists the fleet's implied namespaces and places the Namespace templates that follow
/// their objects.
pub(crate) fn finish_namespaces(fleet: &mut Fleet) {
    let mut by_ns: BTreeMap<String, ImpliedNamespace> = BTreeMap::new();
    for (r, res) in fleet.resources.iter().enumerate() {
        if res.dialect == Dialect::Karmada
            && let Some(ns) = &res.target.namespace
            && matches!(fleet.plans[r].origin, Origin::Karmada { .. })
        {
            by_ns
                .entry(ns.clone())
                .or_insert_with(|| ImpliedNamespace {
                    name: ns.clone(),
                    members: Vec::new(),
                    renderers: Vec::new(),
                })
                .members
                .push(r);
        }
    }
    for (r, res) in fleet.resources.iter().enumerate() {
        if res.target.kind == "Namespace"
            && let Some(entry) = by_ns.get_mut(&res.target.name)
        {
            entry.renderers.push(r);
        }
    }
    // Namespace templates that follow their objects.
    for r in 0..fleet.resources.len() {
        if !fleet.plans[r].follows_namespace {
            continue;
        }
        let name = fleet.resources[r].target.name.clone();
        let members = by_ns
            .get(&name)
            .map(|e| e.members.clone())
            .unwrap_or_default();
        let n = fleet.clusters.len();
        for c in 0..n {
            let placed = members.iter().any(|&m| fleet.plans[m].placed(c));
            let plan = &mut fleet.plans[r];
            Arc::make_mut(&mut plan.cells)[c] = if placed {
                Cell::Placed {
                    replicas: -1,
                    set: 0,
                }
            } else {
                let idx = plan.reason(format!(
                    "no object in namespace {name} is placed here, and no ClusterPropagationPolicy selects the Namespace"
                ));
                Cell::NotPlaced(idx)
            };
        }
    }
    fleet.namespaces = by_ns.into_values().collect();
}
