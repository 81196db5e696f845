//! Editing an Open Cluster Management Placement in memory: its predicates (label and claim
//! selectors in kubectl's `-l` syntax, ORed across predicates), its tolerations and
//! `numberOfClusters` as text, the Placement object with those parts replaced (everything the
//! operator did not touch stays exactly as stored), the JSON patch that writes only those
//! parts, and how the edit changes the Placement's decision, cluster by cluster, with the
//! reason for every cluster left out. Pure: it never reads or writes a hub.

use serde_json::{Value, json};

use crate::engine::dialect::ocm::{
    OCM_EFFECTS, OcmCluster, OcmClusterSet, PlacementContext, decide, parse_placement,
};
use crate::engine::document::parse::Doc;
use crate::engine::document::source::FleetError;
use crate::engine::edit::placement::{
    Membership, parse_expressions, parse_selector, parse_tolerations_with, selector_text,
    set_or_remove, tolerations_text,
};
use crate::engine::edit::{EditError, Part};

/// What a Placement is decided against, as the hub holds it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlacementWorld {
    pub clusters: Vec<OcmCluster>,
    pub sets: Vec<OcmClusterSet>,
    /// (namespace, set) of every ManagedClusterSetBinding OCM reports Bound.
    pub bindings: Vec<(String, String)>,
    /// In namespace/name order.
    pub placements: Vec<HubPlacement>,
    /// ManifestWorkReplicaSets, which deliver their ManifestWorks where Placements decide.
    pub replica_sets: Vec<ReplicaSetRef>,
}

/// A Placement as stored on the hub, with what OCM decided for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubPlacement {
    /// The object as the hub serves it (with `metadata.resourceVersion`).
    pub object: Value,
    /// The clusters its PlacementDecisions hold, in name order.
    pub decided: Vec<String>,
    /// `PlacementSatisfied`: whether it is True, and `Reason: message`.
    pub satisfied: Option<(bool, String)>,
}

impl HubPlacement {
    fn text(&self, pointer: &str) -> &str {
        self.object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    pub fn namespace(&self) -> &str {
        self.text("/metadata/namespace")
    }

    pub fn name(&self) -> &str {
        self.text("/metadata/name")
    }

    pub fn resource_version(&self) -> &str {
        self.text("/metadata/resourceVersion")
    }

    /// `Placement ns/name`.
    pub fn title(&self) -> String {
        format!("Placement {}/{}", self.namespace(), self.name())
    }
}

/// A ManifestWorkReplicaSet and the Placements (of its namespace) it follows.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaSetRef {
    pub namespace: String,
    pub name: String,
    pub placements: Vec<String>,
    /// `Kind/namespace/name` of each manifest its ManifestWorks carry.
    pub objects: Vec<String>,
}

impl PlacementWorld {
    /// The ManifestWorkReplicaSets that deliver where `placement` decides.
    pub fn followers(&self, placement: &HubPlacement) -> Vec<&ReplicaSetRef> {
        self.replica_sets
            .iter()
            .filter(|set| {
                set.namespace == placement.namespace()
                    && set.placements.iter().any(|p| p == placement.name())
            })
            .collect()
    }
}

/// One predicate's selectors as text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PredicateText {
    pub labels: String,
    pub claims: String,
    /// The predicate's index in the stored Placement; its other fields (a CEL selector) are
    /// kept. `None` for a predicate the operator added.
    pub original: Option<usize>,
    /// Whether it carries a CEL selector, which keeps it even with both selectors empty.
    pub cel: bool,
}

impl PredicateText {
    fn is_empty(&self) -> bool {
        self.labels.trim().is_empty() && self.claims.trim().is_empty() && !self.cel
    }
}

/// The parts of a Placement the editor changes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlacementEdit {
    /// ORed; a predicate whose selectors are both empty (and has no CEL) is dropped.
    pub predicates: Vec<PredicateText>,
    /// OCM tolerations in the editor's syntax: `key=value:NoSelect`, `key:NoSelect for 300s`.
    pub tolerations: String,
    /// `numberOfClusters`; empty selects every match.
    pub count: String,
}

const PREDICATES: &str = "/spec/predicates";
const TOLERATIONS: &str = "/spec/tolerations";
const COUNT: &str = "/spec/numberOfClusters";

/// The editable parts of a stored Placement.
pub fn editable(placement: &Value) -> PlacementEdit {
    let predicates = placement
        .pointer(PREDICATES)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    let selector = |field: &str| {
                        item.pointer(&format!("/requiredClusterSelector/{field}"))
                            .map(selector_text)
                            .unwrap_or_default()
                    };
                    PredicateText {
                        labels: selector("labelSelector"),
                        claims: selector("claimSelector"),
                        original: Some(index),
                        cel: item
                            .pointer("/requiredClusterSelector/celSelector/celExpressions")
                            .and_then(Value::as_array)
                            .is_some_and(|list| !list.is_empty()),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    PlacementEdit {
        predicates,
        tolerations: placement
            .pointer(TOLERATIONS)
            .map(tolerations_text)
            .unwrap_or_default(),
        count: placement
            .pointer(COUNT)
            .map(|n| n.to_string())
            .unwrap_or_default(),
    }
}

/// The stored Placement with the edited parts replaced. A part the operator did not touch
/// stays exactly as stored; invalid text is an error saying what is wrong.
pub fn edited(placement: &Value, edit: &PlacementEdit) -> Result<Value, EditError> {
    let original = editable(placement);
    let mut object = placement.clone();
    let live: Vec<&PredicateText> = edit.predicates.iter().filter(|p| !p.is_empty()).collect();
    let unchanged: Vec<&PredicateText> = original.predicates.iter().collect();
    if edit.predicates != original.predicates && live != unchanged {
        let stored = placement.pointer(PREDICATES).and_then(Value::as_array);
        let mut items = Vec::new();
        for (at, predicate) in live.iter().enumerate() {
            let kept = predicate
                .original
                .and_then(|index| stored.and_then(|list| list.get(index)));
            if let Some(kept) = kept
                && original
                    .predicates
                    .get(predicate.original.unwrap_or(usize::MAX))
                    == Some(predicate)
            {
                items.push(kept.clone());
                continue;
            }
            let mut item = kept.cloned().unwrap_or_else(|| json!({}));
            let labels =
                parse_selector(&predicate.labels).map_err(|e| e.in_part(Part::Labels(at + 1)))?;
            set_or_remove(&mut item, "/requiredClusterSelector/labelSelector", labels);
            let claims = parse_expressions(&predicate.claims)
                .map_err(|e| e.in_part(Part::Claims(at + 1)))?
                .map(|expressions| json!({ "matchExpressions": expressions }));
            set_or_remove(&mut item, "/requiredClusterSelector/claimSelector", claims);
            if item
                .get("requiredClusterSelector")
                .is_some_and(|s| s.as_object().is_some_and(|m| m.is_empty()))
                && let Some(map) = item.as_object_mut()
            {
                map.remove("requiredClusterSelector");
            }
            items.push(item);
        }
        set_or_remove(
            &mut object,
            PREDICATES,
            (!items.is_empty()).then_some(Value::Array(items)),
        );
    }
    if edit.tolerations != original.tolerations {
        let tolerations = parse_tolerations_with(&edit.tolerations, &OCM_EFFECTS)
            .map_err(|e| e.in_part(Part::Tolerations))?;
        set_or_remove(&mut object, TOLERATIONS, tolerations);
    }
    if edit.count.trim() != original.count {
        let count = match edit.count.trim() {
            "" => None,
            text => Some(json!(text.parse::<u32>().map_err(|_| {
                EditError::input(format!(
                    "`{text}` is not a whole number (leave it empty to select every match)"
                ))
                .in_part(Part::NumberOfClusters)
            })?)),
        };
        set_or_remove(&mut object, COUNT, count);
    }
    Ok(object)
}

/// `current` with the editor's parts (predicates, tolerations, numberOfClusters) as they are in
/// `previous`: what undoing an edit writes back.
pub fn with_parts_of(current: &Value, previous: &Value) -> Value {
    let mut out = current.clone();
    for path in [PREDICATES, TOLERATIONS, COUNT] {
        set_or_remove(&mut out, path, previous.pointer(path).cloned());
    }
    out
}

/// The JSON patch that turns `before` into `after` in the parts the editor changes, guarded by
/// `before`'s resourceVersion so a Placement changed on the hub meanwhile is not overwritten.
pub fn patch(before: &Value, after: &Value) -> Vec<Value> {
    let mut ops = vec![json!({
        "op": "test",
        "path": "/metadata/resourceVersion",
        "value": before.pointer("/metadata/resourceVersion").cloned().unwrap_or(Value::Null),
    })];
    if before.pointer("/spec").is_none() {
        ops.push(json!({"op": "add", "path": "/spec", "value": {}}));
    }
    for path in [PREDICATES, TOLERATIONS, COUNT] {
        match (before.pointer(path), after.pointer(path)) {
            (old, Some(new)) if old != Some(new) => {
                ops.push(json!({"op": "add", "path": path, "value": new}));
            }
            (Some(_), None) => ops.push(json!({"op": "remove", "path": path})),
            _ => {}
        }
    }
    ops
}

/// One cluster under the edited Placement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionRow {
    pub cluster: String,
    pub membership: Membership,
}

/// How an edit changes a Placement's decision.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DecisionPreview {
    /// Every cluster, in name order.
    pub clusters: Vec<DecisionRow>,
    /// What the edited Placement selects, in name order.
    pub selected: Vec<String>,
    /// `PlacementSatisfied` as OCM would set it.
    pub satisfied: (bool, &'static str),
    /// Where the preview approximates OCM's scheduler.
    pub notes: Vec<String>,
}

impl DecisionPreview {
    pub fn entering(&self) -> impl Iterator<Item = &str> {
        self.clusters
            .iter()
            .filter(|row| row.membership == Membership::Entering)
            .map(|row| row.cluster.as_str())
    }

    pub fn leaving(&self) -> impl Iterator<Item = &str> {
        self.clusters
            .iter()
            .filter(|row| matches!(row.membership, Membership::Leaving { .. }))
            .map(|row| row.cluster.as_str())
    }

    pub fn changes(&self) -> bool {
        self.entering().next().is_some() || self.leaving().next().is_some()
    }
}

/// Decides `object` (the edited form of `placement`) against the hub's clusters and sets and
/// compares the outcome with what OCM decided. An invalid Placement is an error naming the
/// field.
pub fn preview(
    world: &PlacementWorld,
    placement: &HubPlacement,
    object: &Value,
) -> Result<DecisionPreview, FleetError> {
    let decide_on = |value: &Value| -> Result<_, FleetError> {
        let spec = parse_placement(&Doc::from_value(&placement.title(), value.clone()))?;
        Ok(decide(
            &spec,
            &PlacementContext {
                clusters: &world.clusters,
                sets: &world.sets,
                bindings: &world.bindings,
                decided: &placement.decided,
            },
        ))
    };
    let outcome = decide_on(object)?;
    let mut notes = outcome.notes.clone();
    if let Ok(unedited) = decide_on(&placement.object)
        && unedited.selected != placement.decided
    {
        notes.push(format!(
            "flotilla's evaluation of the stored Placement selects [{}] but OCM decided [{}]: \
             this preview may differ from OCM's decision",
            unedited.selected.join(", "),
            placement.decided.join(", ")
        ));
    }
    let mut names: Vec<&str> = world.clusters.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    let clusters = names
        .into_iter()
        .map(|name| {
            let was = placement.decided.iter().any(|d| d == name);
            let now = outcome.selected.iter().any(|s| s == name);
            let reason = || outcome.not_selected.get(name).cloned().unwrap_or_default();
            DecisionRow {
                cluster: name.to_string(),
                membership: match (was, now) {
                    (true, true) => Membership::Staying,
                    (false, true) => Membership::Entering,
                    (true, false) => Membership::Leaving { reason: reason() },
                    (false, false) => Membership::Out { reason: reason() },
                },
            }
        })
        .collect();
    Ok(DecisionPreview {
        clusters,
        selected: outcome.selected,
        satisfied: outcome.satisfied,
        notes,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::engine::dialect::ocm::SetSelector;
    use crate::engine::place::selector::LabelSelector;
    use crate::model::Taint;

    fn placement(spec: Value) -> Value {
        json!({
            "apiVersion": "cluster.open-cluster-management.io/v1beta1",
            "kind": "Placement",
            "metadata": {"name": "web", "namespace": "apps", "resourceVersion": "41"},
            "spec": spec,
        })
    }

    fn cluster(name: &str, env: &str, region: &str) -> OcmCluster {
        OcmCluster {
            name: name.into(),
            labels: BTreeMap::from([("env".to_string(), env.to_string())]),
            claims: BTreeMap::from([(
                "region.open-cluster-management.io".to_string(),
                region.to_string(),
            )]),
            taints: Vec::new(),
        }
    }

    /// Three clusters in the `global` set bound to `apps`; OCM decided `decided`.
    fn world(spec: Value, decided: &[&str]) -> PlacementWorld {
        let mut gpu = cluster("gamma", "prod", "us");
        gpu.taints.push(Taint {
            key: "gpu".into(),
            value: "true".into(),
            effect: "NoSelect".into(),
        });
        PlacementWorld {
            clusters: vec![
                cluster("alpha", "prod", "eu"),
                cluster("beta", "dev", "eu"),
                gpu,
            ],
            sets: vec![OcmClusterSet {
                name: "global".into(),
                selector: SetSelector::Labels(LabelSelector::default()),
            }],
            bindings: vec![("apps".into(), "global".into())],
            placements: vec![HubPlacement {
                object: placement(spec),
                decided: decided.iter().map(|d| d.to_string()).collect(),
                satisfied: None,
            }],
            replica_sets: Vec::new(),
        }
    }

    #[test]
    fn an_untouched_placement_is_written_back_exactly_even_what_the_text_cannot_say() {
        let stored = placement(json!({
            "predicates": [
                {"requiredClusterSelector": {
                    "labelSelector": {"matchLabels": {"env": "prod"}},
                    "celSelector": {"celExpressions": ["managedCluster.metadata.name != 'x'"]}}},
                {"requiredClusterSelector": {}},
            ],
            "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSelect",
                             "tolerationSeconds": 300}],
            "numberOfClusters": 2,
            "prioritizerPolicy": {"mode": "Additive"},
        }));
        let edit = editable(&stored);
        assert_eq!(edit.predicates[0].labels, "env=prod");
        assert!(edit.predicates[0].cel);
        assert_eq!(edit.tolerations, "gpu:NoSelect for 300s");
        assert_eq!(edit.count, "2");
        assert_eq!(edited(&stored, &edit).unwrap(), stored);
        assert_eq!(
            patch(&stored, &stored).len(),
            1,
            "only the resourceVersion test"
        );
    }

    #[test]
    fn edited_parts_replace_only_themselves_and_the_patch_writes_only_them() {
        let stored = placement(json!({
            "clusterSets": ["global"],
            "predicates": [{"requiredClusterSelector": {
                "labelSelector": {"matchLabels": {"env": "prod"}},
                "celSelector": {"celExpressions": ["true"]}}}],
            "numberOfClusters": 2,
        }));
        let mut edit = editable(&stored);
        edit.predicates[0].labels = "env in (prod,dev)".into();
        edit.predicates.push(PredicateText {
            claims: "region.open-cluster-management.io=us".into(),
            ..PredicateText::default()
        });
        edit.tolerations = "gpu=true:NoSelect for 60s".into();
        edit.count = String::new();
        let after = edited(&stored, &edit).unwrap();
        assert_eq!(
            after["spec"]["predicates"],
            json!([
                {"requiredClusterSelector": {
                    "labelSelector": {"matchExpressions": [
                        {"key": "env", "operator": "In", "values": ["prod", "dev"]}]},
                    "celSelector": {"celExpressions": ["true"]}}},
                {"requiredClusterSelector": {"claimSelector": {"matchExpressions": [
                    {"key": "region.open-cluster-management.io", "operator": "In", "values": ["us"]}]}}},
            ])
        );
        assert_eq!(
            after["spec"]["tolerations"],
            json!([{"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSelect",
                    "tolerationSeconds": 60}])
        );
        assert!(after["spec"].get("numberOfClusters").is_none());
        assert_eq!(after["spec"]["clusterSets"], json!(["global"]));
        let ops = patch(&stored, &after);
        assert_eq!(
            ops[0],
            json!({"op": "test", "path": "/metadata/resourceVersion", "value": "41"})
        );
        let paths: Vec<(&str, &str)> = ops[1..]
            .iter()
            .map(|op| (op["op"].as_str().unwrap(), op["path"].as_str().unwrap()))
            .collect();
        assert_eq!(
            paths,
            [
                ("add", "/spec/predicates"),
                ("add", "/spec/tolerations"),
                ("remove", "/spec/numberOfClusters"),
            ]
        );
    }

    #[test]
    fn bad_text_says_which_part_is_wrong() {
        let stored = placement(json!({}));
        let mut edit = editable(&stored);
        edit.tolerations = "gpu:NoSchedule".into();
        let err = edited(&stored, &edit).unwrap_err();
        assert!(
            matches!(&err, EditError::InPart { part: Part::Tolerations, error }
                if matches!(&**error, EditError::Input(m) if m.contains("NoSelect"))),
            "{err}"
        );
        assert!(err.to_string().starts_with("tolerations:"), "{err}");
        edit.tolerations.clear();
        edit.count = "two".into();
        let err = edited(&stored, &edit).unwrap_err();
        assert!(
            matches!(
                &err,
                EditError::InPart {
                    part: Part::NumberOfClusters,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("whole number"), "{err}");
        edit.count.clear();
        edit.predicates.push(PredicateText {
            labels: "env in prod".into(),
            ..PredicateText::default()
        });
        let err = edited(&stored, &edit).unwrap_err();
        assert!(
            matches!(
                &err,
                EditError::InPart {
                    part: Part::Labels(1),
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().starts_with("predicate 1, labels:"), "{err}");
    }

    #[test]
    fn the_preview_names_clusters_entering_leaving_and_why_the_rest_stay_out() {
        let world = world(
            json!({"predicates": [{"requiredClusterSelector": {
                "labelSelector": {"matchLabels": {"env": "prod"}}}}]}),
            &["alpha"],
        );
        let stored = &world.placements[0];
        let mut edit = editable(&stored.object);
        edit.predicates[0].labels.clear();
        edit.predicates[0].claims = "region.open-cluster-management.io=us".into();
        edit.tolerations = "gpu:NoSelect".into();
        let shown = preview(&world, stored, &edited(&stored.object, &edit).unwrap()).unwrap();
        assert_eq!(shown.selected, ["gamma"]);
        assert_eq!(shown.entering().collect::<Vec<_>>(), ["gamma"]);
        assert_eq!(shown.leaving().collect::<Vec<_>>(), ["alpha"]);
        assert_eq!(
            shown.clusters[0].membership,
            Membership::Leaving {
                reason: "claims do not match region.open-cluster-management.io=us".into()
            }
        );
        assert!(matches!(
            shown.clusters[1].membership,
            Membership::Out { .. }
        ));
        assert_eq!(shown.satisfied, (true, "AllDecisionsScheduled"));
        assert!(shown.notes.is_empty(), "{:?}", shown.notes);

        // Without the toleration the tainted cluster stays out, and nothing matches.
        edit.tolerations.clear();
        let shown = preview(&world, stored, &edited(&stored.object, &edit).unwrap()).unwrap();
        assert!(shown.selected.is_empty());
        assert_eq!(
            shown.clusters[2].membership,
            Membership::Out {
                reason: "taint gpu=true:NoSelect not tolerated".into()
            }
        );
        assert_eq!(shown.satisfied, (false, "NoManagedClusterMatched"));
    }

    #[test]
    fn the_preview_says_when_ocm_decided_otherwise_than_flotilla_would() {
        let world = world(json!({}), &["beta"]);
        let stored = &world.placements[0];
        let shown = preview(&world, stored, &stored.object).unwrap();
        assert!(
            shown.notes.iter().any(|n| n.contains("OCM decided [beta]")),
            "{:?}",
            shown.notes
        );
    }
}
