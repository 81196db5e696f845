//! Open Cluster Management Placement semantics, evaluated offline: which ManagedClusters a
//! Placement selects from the cluster sets bound to its namespace, its predicates (label and
//! claim selectors, ORed across predicates, ANDed within one), its tolerations against the
//! clusters' taints (`NoSelect`, `NoSelectIfNew`, `PreferNoSelect`) and `numberOfClusters`, with
//! a reason for every cluster left out, so an editor can preview how a changed Placement changes
//! its decision. Pure: no I/O, no clock; it must not read or write a hub.
//!
//! What it cannot reproduce is said in the outcome's notes rather than guessed silently: CEL
//! selectors are not evaluated, `tolerationSeconds` is not counted down (a toleration with it
//! tolerates), and when `numberOfClusters` picks among more feasible clusters the choice
//! follows OCM's default `Steady` prioritizer only (clusters decided before first, then name
//! order), not its scores.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::engine::document::parse::Doc;
use crate::engine::document::source::FleetError;
use crate::engine::place::selector::{LabelSelector, Requirement, Toleration, scalar_text};
use crate::model::Taint;

/// The label that puts a cluster into an `ExclusiveClusterSetLabel` set.
pub const CLUSTER_SET_LABEL: &str = "cluster.open-cluster-management.io/clusterset";

/// A ManagedCluster as a Placement sees it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OcmCluster {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    /// `status.clusterClaims`, by name.
    pub claims: BTreeMap<String, String>,
    /// Taints with OCM's effects (`NoSelect`, `NoSelectIfNew`, `PreferNoSelect`).
    pub taints: Vec<Taint>,
}

impl OcmCluster {
    /// From a ManagedCluster object as the hub serves it (missing fields are empty).
    pub fn from_managed_cluster(value: &Value) -> OcmCluster {
        let text = |v: &Value, p: &str| {
            v.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let labels = value
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let claims = value
            .pointer("/status/clusterClaims")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .map(|c| (text(c, "/name"), text(c, "/value")))
                    .filter(|(name, _)| !name.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let taints = value
            .pointer("/spec/taints")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .map(|t| Taint {
                        key: text(t, "/key"),
                        value: text(t, "/value"),
                        effect: text(t, "/effect"),
                    })
                    .collect()
            })
            .unwrap_or_default();
        OcmCluster {
            name: text(value, "/metadata/name"),
            labels,
            claims,
            taints,
        }
    }
}

/// How a ManagedClusterSet chooses its clusters.
#[derive(Debug, Clone, PartialEq)]
pub enum SetSelector {
    /// Clusters labelled `cluster.open-cluster-management.io/clusterset=<set>` (the default).
    Exclusive,
    /// Clusters whose labels match (an empty selector is every cluster: the `global` set).
    Labels(LabelSelector),
}

#[derive(Debug, Clone, PartialEq)]
pub struct OcmClusterSet {
    pub name: String,
    pub selector: SetSelector,
}

impl OcmClusterSet {
    /// From a ManagedClusterSet object; a bad label selector is an error naming the field.
    pub fn from_value(value: &Value) -> Result<OcmClusterSet, FleetError> {
        let name = value
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let doc = Doc::from_value(&format!("ManagedClusterSet {name}"), value.clone());
        let kind = value
            .pointer("/spec/clusterSelector/selectorType")
            .and_then(Value::as_str)
            .unwrap_or("ExclusiveClusterSetLabel");
        let selector = match kind {
            "ExclusiveClusterSetLabel" => SetSelector::Exclusive,
            "LabelSelector" => SetSelector::Labels(LabelSelector::parse(
                &doc,
                "/spec/clusterSelector/labelSelector",
            )?),
            other => {
                return Err(doc.error(
                    "/spec/clusterSelector/selectorType",
                    format!("unknown selectorType `{other}`"),
                    "use ExclusiveClusterSetLabel or LabelSelector",
                ));
            }
        };
        Ok(OcmClusterSet { name, selector })
    }

    pub fn contains(&self, cluster: &OcmCluster) -> bool {
        match &self.selector {
            SetSelector::Exclusive => {
                cluster.labels.get(CLUSTER_SET_LABEL).map(String::as_str) == Some(&self.name)
            }
            SetSelector::Labels(selector) => selector.matches(&cluster.labels),
        }
    }
}

/// One `requiredClusterSelector`: its label and claim selectors must both match.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Predicate {
    pub labels: LabelSelector,
    pub claims: LabelSelector,
    /// CEL expressions, which this evaluator does not run.
    pub cel: Vec<String>,
}

/// An OCM toleration: Kubernetes' shape (`Equal` by default or `Exists`, an effect or all of
/// them) over OCM's effects, and how long it lasts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OcmToleration {
    pub toleration: Toleration,
    /// `tolerationSeconds`.
    pub seconds: Option<i64>,
}

impl OcmToleration {
    pub fn tolerates(&self, taint: &Taint) -> bool {
        self.toleration.tolerates(taint)
    }
}

/// What the evaluator reads of a Placement.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlacementSpec {
    pub namespace: String,
    pub name: String,
    /// `spec.clusterSets`; empty means every set bound to the namespace.
    pub cluster_sets: Vec<String>,
    pub number_of_clusters: Option<usize>,
    /// ORed; none selects every candidate.
    pub predicates: Vec<Predicate>,
    pub tolerations: Vec<OcmToleration>,
}

/// OCM's taint effects, the only ones a Placement toleration may name.
pub const OCM_EFFECTS: [&str; 3] = ["NoSelect", "NoSelectIfNew", "PreferNoSelect"];

fn claim_selector(doc: &Doc, pointer: &str) -> Result<LabelSelector, FleetError> {
    // OCM's claim selector has only matchExpressions; the label-selector parser checks them.
    if doc
        .value
        .pointer(&format!("{pointer}/matchLabels"))
        .is_some()
    {
        return Err(doc.error(
            &format!("{pointer}/matchLabels"),
            "a claimSelector has no matchLabels",
            "write `matchExpressions: [{key: CLAIM, operator: In, values: [VALUE]}]`",
        ));
    }
    LabelSelector::parse(doc, pointer)
}

/// Reads a Placement object. Unknown operators, effects and bad shapes are errors naming the
/// field and how to fix it.
pub fn parse_placement(doc: &Doc) -> Result<PlacementSpec, FleetError> {
    let text = |p: &str| {
        doc.value
            .pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let cluster_sets = match doc.value.pointer("/spec/clusterSets") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.iter().filter_map(scalar_text).collect(),
        Some(_) => {
            return Err(doc.error(
                "/spec/clusterSets",
                "clusterSets must be a list of ManagedClusterSet names",
                "write `clusterSets: [global]`, or leave it out for every bound set",
            ));
        }
    };
    let number_of_clusters = match doc.value.pointer("/spec/numberOfClusters") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64().and_then(|n| usize::try_from(n).ok()) {
            Some(n) => Some(n),
            None => {
                return Err(doc.error(
                    "/spec/numberOfClusters",
                    "numberOfClusters must be a whole number ≥ 0",
                    "write e.g. `numberOfClusters: 2`, or leave it out to select every match",
                ));
            }
        },
    };
    let mut predicates = Vec::new();
    if let Some(items) = doc.value.pointer("/spec/predicates") {
        let Some(items) = items.as_array() else {
            return Err(doc.error(
                "/spec/predicates",
                "predicates must be a list",
                "write `- requiredClusterSelector: {labelSelector: {matchLabels: {env: prod}}}`",
            ));
        };
        for idx in 0..items.len() {
            let p = format!("/spec/predicates/{idx}/requiredClusterSelector");
            let cel = doc
                .value
                .pointer(&format!("{p}/celSelector/celExpressions"))
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(scalar_text).collect())
                .unwrap_or_default();
            predicates.push(Predicate {
                labels: LabelSelector::parse(doc, &format!("{p}/labelSelector"))?,
                claims: claim_selector(doc, &format!("{p}/claimSelector"))?,
                cel,
            });
        }
    }
    let mut tolerations = Vec::new();
    if let Some(items) = doc.value.pointer("/spec/tolerations") {
        let Some(items) = items.as_array() else {
            return Err(doc.error(
                "/spec/tolerations",
                "tolerations must be a list",
                "write `- {key: cluster.open-cluster-management.io/unreachable, operator: Exists}`",
            ));
        };
        for (idx, item) in items.iter().enumerate() {
            let toleration = Toleration::parse(
                doc,
                &format!("/spec/tolerations/{idx}"),
                item,
                &OCM_EFFECTS,
                "OCM's effects are NoSelect, NoSelectIfNew and PreferNoSelect (or leave it empty for all)",
            )?;
            tolerations.push(OcmToleration {
                toleration,
                seconds: item.get("tolerationSeconds").and_then(Value::as_i64),
            });
        }
    }
    Ok(PlacementSpec {
        namespace: text("/metadata/namespace"),
        name: text("/metadata/name"),
        cluster_sets,
        number_of_clusters,
        predicates,
        tolerations,
    })
}

/// The hub around a Placement: its clusters, sets, and which sets are bound where.
#[derive(Debug, Clone, Default)]
pub struct PlacementContext<'a> {
    pub clusters: &'a [OcmCluster],
    pub sets: &'a [OcmClusterSet],
    /// (namespace, set) of every ManagedClusterSetBinding OCM reports Bound.
    pub bindings: &'a [(String, String)],
    /// The clusters the Placement's decisions hold now (for `Steady` and `NoSelectIfNew`).
    pub decided: &'a [String],
}

/// What a Placement would decide, and why every other cluster is left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlacementOutcome {
    /// In decision order (name order).
    pub selected: Vec<String>,
    /// Cluster → why it is not selected.
    pub not_selected: BTreeMap<String, String>,
    /// `PlacementSatisfied` as OCM would set it: whether it is True, and OCM's reason.
    pub satisfied: (bool, &'static str),
    /// Where the evaluation is an approximation of OCM's scheduler.
    pub notes: Vec<String>,
}

fn requirement_text(selector: &LabelSelector) -> String {
    selector
        .requirements
        .iter()
        .map(Requirement::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Why `cluster` fails predicate `p`, or `None` when it matches.
fn predicate_miss(p: &Predicate, cluster: &OcmCluster) -> Option<String> {
    if !p.labels.matches(&cluster.labels) {
        return Some(format!(
            "labels do not match {}",
            requirement_text(&p.labels)
        ));
    }
    if !p.claims.matches(&cluster.claims) {
        return Some(format!(
            "claims do not match {}",
            requirement_text(&p.claims)
        ));
    }
    None
}

/// Evaluates `placement` against the hub `context`.
pub fn decide(placement: &PlacementSpec, context: &PlacementContext<'_>) -> PlacementOutcome {
    let mut out = PlacementOutcome::default();
    let bound: Vec<&str> = context
        .bindings
        .iter()
        .filter(|(ns, _)| *ns == placement.namespace)
        .map(|(_, set)| set.as_str())
        .collect();
    let usable: Vec<&OcmClusterSet> = context
        .sets
        .iter()
        .filter(|set| bound.contains(&set.name.as_str()))
        .filter(|set| {
            placement.cluster_sets.is_empty() || placement.cluster_sets.contains(&set.name)
        })
        .collect();
    let mut names: Vec<&OcmCluster> = context.clusters.iter().collect();
    names.sort_by(|a, b| a.name.cmp(&b.name));
    if bound.is_empty() || usable.is_empty() {
        let (reason, why) = if bound.is_empty() {
            (
                "NoManagedClusterSetBindings",
                format!(
                    "no ManagedClusterSetBinding in namespace {} (bind a set there)",
                    placement.namespace
                ),
            )
        } else {
            (
                "NoIntersection",
                format!(
                    "none of clusterSets [{}] is bound to namespace {}",
                    placement.cluster_sets.join(", "),
                    placement.namespace
                ),
            )
        };
        for cluster in names {
            out.not_selected.insert(cluster.name.clone(), why.clone());
        }
        out.satisfied = (false, reason);
        return out;
    }
    let mut feasible = Vec::new();
    for cluster in names {
        let why = if !usable.iter().any(|set| set.contains(cluster)) {
            Some(format!(
                "in none of the usable cluster sets ({})",
                usable
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        } else if !placement.predicates.is_empty()
            && placement
                .predicates
                .iter()
                .all(|p| predicate_miss(p, cluster).is_some())
        {
            let misses: Vec<String> = placement
                .predicates
                .iter()
                .filter_map(|p| predicate_miss(p, cluster))
                .collect();
            Some(misses.join("; or "))
        } else {
            // PreferNoSelect only lowers a cluster's score in OCM; it never filters.
            let was = context.decided.contains(&cluster.name);
            cluster
                .taints
                .iter()
                .filter(|t| t.effect == "NoSelect" || (t.effect == "NoSelectIfNew" && !was))
                .find(|t| !placement.tolerations.iter().any(|tol| tol.tolerates(t)))
                .map(|t| format!("taint {t} not tolerated"))
        };
        match why {
            Some(why) => {
                out.not_selected.insert(cluster.name.clone(), why);
            }
            None => feasible.push(cluster.name.clone()),
        }
    }
    let matched = feasible.len();
    if let Some(n) = placement.number_of_clusters
        && feasible.len() > n
    {
        // Steady: clusters already decided keep their place, then name order.
        feasible.sort_by_key(|name| !context.decided.contains(name));
        for name in feasible.split_off(n) {
            out.not_selected.insert(
                name,
                format!("feasible, but numberOfClusters is {n} and others rank first"),
            );
        }
        feasible.sort();
        out.notes.push(format!(
            "{matched} clusters match and numberOfClusters is {n}: OCM chooses by its prioritizers' \
             scores; this preview keeps the clusters decided before, then takes name order"
        ));
    }
    out.satisfied = match (matched, placement.number_of_clusters) {
        (0, _) => (false, "NoManagedClusterMatched"),
        (m, Some(n)) if m < n => (false, "NotAllDecisionsScheduled"),
        _ => (true, "AllDecisionsScheduled"),
    };
    if placement.predicates.iter().any(|p| !p.cel.is_empty()) {
        out.notes.push(
            "celSelector expressions are not evaluated here: the preview may select more clusters than OCM"
                .to_string(),
        );
    }
    if placement.tolerations.iter().any(|t| t.seconds.is_some()) {
        out.notes.push(
            "tolerationSeconds is not counted down here: such a toleration is treated as tolerating"
                .to_string(),
        );
    }
    out.selected = feasible;
    out
}

/// How a decision changes: clusters that enter and clusters that leave.
pub fn decision_change(before: &[String], after: &PlacementOutcome) -> (Vec<String>, Vec<String>) {
    let entering = after
        .selected
        .iter()
        .filter(|c| !before.contains(c))
        .cloned()
        .collect();
    let leaving = before
        .iter()
        .filter(|c| !after.selected.contains(c))
        .cloned()
        .collect();
    (entering, leaving)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cluster(name: &str, labels: &[(&str, &str)], claims: &[(&str, &str)]) -> OcmCluster {
        let map = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect()
        };
        OcmCluster {
            name: name.into(),
            labels: map(labels),
            claims: map(claims),
            taints: Vec::new(),
        }
    }

    fn placement(spec: Value) -> Result<PlacementSpec, FleetError> {
        parse_placement(&Doc::from_value(
            "placement.yaml",
            json!({"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "Placement",
                   "metadata": {"name": "web", "namespace": "apps"}, "spec": spec}),
        ))
    }

    fn global() -> OcmClusterSet {
        OcmClusterSet::from_value(&json!({"metadata": {"name": "global"},
            "spec": {"clusterSelector": {"selectorType": "LabelSelector", "labelSelector": {}}}}))
        .unwrap()
    }

    fn fleet() -> Vec<OcmCluster> {
        vec![
            cluster(
                "a",
                &[("env", "prod")],
                &[("platform.open-cluster-management.io", "AWS")],
            ),
            cluster(
                "b",
                &[("env", "prod")],
                &[("platform.open-cluster-management.io", "GCP")],
            ),
            cluster(
                "c",
                &[("env", "dev")],
                &[("platform.open-cluster-management.io", "AWS")],
            ),
        ]
    }

    fn bound() -> Vec<(String, String)> {
        vec![("apps".to_string(), "global".to_string())]
    }

    fn run(spec: Value, clusters: &[OcmCluster], decided: &[String]) -> PlacementOutcome {
        let sets = [global()];
        let bindings = bound();
        decide(
            &placement(spec).unwrap(),
            &PlacementContext {
                clusters,
                sets: &sets,
                bindings: &bindings,
                decided,
            },
        )
    }

    #[test]
    fn predicates_are_ored_and_label_and_claim_selectors_within_one_are_anded() {
        let out = run(
            json!({"predicates": [
                {"requiredClusterSelector": {
                    "labelSelector": {"matchLabels": {"env": "prod"}},
                    "claimSelector": {"matchExpressions": [{"key": "platform.open-cluster-management.io",
                        "operator": "In", "values": ["AWS"]}]}}},
                {"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": "dev"}}}},
            ]}),
            &fleet(),
            &[],
        );
        assert_eq!(out.selected, ["a", "c"]);
        let why = &out.not_selected["b"];
        assert!(
            why.contains("claims do not match platform.open-cluster-management.io=AWS")
                && why.contains("; or labels do not match env=dev"),
            "{why}"
        );
        assert_eq!(out.satisfied, (true, "AllDecisionsScheduled"));
    }

    #[test]
    fn no_predicates_select_every_cluster_of_the_bound_sets() {
        let out = run(json!({}), &fleet(), &[]);
        assert_eq!(out.selected, ["a", "b", "c"]);
    }

    #[test]
    fn noselect_taints_filter_unless_tolerated_and_prefernoselect_never_does() {
        let mut clusters = fleet();
        clusters[0].taints.push(Taint {
            key: "cluster.open-cluster-management.io/unreachable".into(),
            value: String::new(),
            effect: "NoSelect".into(),
        });
        clusters[1].taints.push(Taint {
            key: "dedicated".into(),
            value: "gpu".into(),
            effect: "PreferNoSelect".into(),
        });
        let out = run(json!({}), &clusters, &[]);
        assert_eq!(out.selected, ["b", "c"]);
        assert_eq!(
            out.not_selected["a"],
            "taint cluster.open-cluster-management.io/unreachable:NoSelect not tolerated"
        );
        let tolerated = run(
            json!({"tolerations": [{"key": "cluster.open-cluster-management.io/unreachable",
                                    "operator": "Exists", "tolerationSeconds": 300}]}),
            &clusters,
            &[],
        );
        assert_eq!(tolerated.selected, ["a", "b", "c"]);
        assert!(
            tolerated
                .notes
                .iter()
                .any(|n| n.contains("tolerationSeconds"))
        );
    }

    #[test]
    fn noselectifnew_keeps_clusters_already_decided_only() {
        let mut clusters = fleet();
        for c in &mut clusters[..2] {
            c.taints.push(Taint {
                key: "maintenance".into(),
                value: String::new(),
                effect: "NoSelectIfNew".into(),
            });
        }
        let out = run(json!({}), &clusters, &["a".to_string()]);
        assert_eq!(out.selected, ["a", "c"]);
        assert!(out.not_selected["b"].contains("maintenance:NoSelectIfNew"));
    }

    #[test]
    fn number_of_clusters_keeps_earlier_decisions_and_says_it_approximates() {
        let out = run(json!({"numberOfClusters": 2}), &fleet(), &["c".to_string()]);
        assert_eq!(out.selected, ["a", "c"]);
        assert!(out.not_selected["b"].contains("numberOfClusters is 2"));
        assert!(out.notes.iter().any(|n| n.contains("prioritizers")));
        let short = run(
            json!({"numberOfClusters": 3, "predicates": [
                {"requiredClusterSelector": {"labelSelector": {"matchLabels": {"env": "prod"}}}}]}),
            &fleet(),
            &[],
        );
        assert_eq!(short.selected, ["a", "b"]);
        assert_eq!(short.satisfied, (false, "NotAllDecisionsScheduled"));
    }

    #[test]
    fn without_a_binding_in_the_namespace_nothing_is_selected() {
        let sets = [global()];
        let elsewhere = vec![("other".to_string(), "global".to_string())];
        let clusters = fleet();
        let out = decide(
            &placement(json!({})).unwrap(),
            &PlacementContext {
                clusters: &clusters,
                sets: &sets,
                bindings: &elsewhere,
                decided: &[],
            },
        );
        assert!(out.selected.is_empty());
        assert_eq!(out.satisfied, (false, "NoManagedClusterSetBindings"));
        assert!(out.not_selected["a"].contains("namespace apps"));
        let out = run(json!({"clusterSets": ["prod-set"]}), &clusters, &[]);
        assert_eq!(out.satisfied, (false, "NoIntersection"));
    }

    #[test]
    fn an_exclusive_set_holds_the_clusters_labelled_with_its_name() {
        let set = OcmClusterSet::from_value(&json!({"metadata": {"name": "prod-set"}})).unwrap();
        let mut clusters = fleet();
        clusters[1]
            .labels
            .insert(CLUSTER_SET_LABEL.into(), "prod-set".into());
        let bindings = vec![("apps".to_string(), "prod-set".to_string())];
        let out = decide(
            &placement(json!({})).unwrap(),
            &PlacementContext {
                clusters: &clusters,
                sets: std::slice::from_ref(&set),
                bindings: &bindings,
                decided: &[],
            },
        );
        assert_eq!(out.selected, ["b"]);
        assert!(out.not_selected["a"].contains("in none of the usable cluster sets (prod-set)"));
    }

    #[test]
    fn the_decision_change_names_entering_and_leaving_clusters() {
        let before = vec!["a".to_string(), "b".to_string()];
        let after = run(
            json!({"predicates": [{"requiredClusterSelector": {"claimSelector": {"matchExpressions": [
                {"key": "platform.open-cluster-management.io", "operator": "In", "values": ["AWS"]}]}}}]}),
            &fleet(),
            &before,
        );
        assert_eq!(
            decision_change(&before, &after),
            (vec!["c".to_string()], vec!["b".to_string()])
        );
    }

    #[test]
    fn bad_placements_name_the_field_and_the_fix() {
        let err =
            placement(json!({"tolerations": [{"key": "x", "effect": "NoSchedule"}]})).unwrap_err();
        assert_eq!(err.field, "spec.tolerations[0].effect");
        assert!(err.hint.contains("NoSelect"), "{}", err.hint);
        let err = placement(json!({"predicates": [{"requiredClusterSelector": {
            "claimSelector": {"matchLabels": {"a": "b"}}}}]}))
        .unwrap_err();
        assert!(err.message.contains("no matchLabels"), "{}", err.message);
        let err = placement(json!({"predicates": [{"requiredClusterSelector": {
            "labelSelector": {"matchExpressions": [{"key": "env", "operator": "Near"}]}}}]}))
        .unwrap_err();
        assert!(err.field.contains("matchExpressions"), "{}", err.field);
        assert!(placement(json!({"numberOfClusters": -1})).is_err());
        assert!(placement(json!({"tolerations": [{"operator": "Equal"}]})).is_err());
    }

    #[test]
    fn a_managed_cluster_object_reads_into_labels_claims_and_taints() {
        let c = OcmCluster::from_managed_cluster(&json!({
            "metadata": {"name": "m1", "labels": {"env": "prod"}},
            "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSelect"}]},
            "status": {"clusterClaims": [{"name": "region.open-cluster-management.io", "value": "eu"}]}
        }));
        assert_eq!(c.name, "m1");
        assert_eq!(c.labels["env"], "prod");
        assert_eq!(c.claims["region.open-cluster-management.io"], "eu");
        assert_eq!(c.taints[0].to_string(), "k=v:NoSelect");
    }
}
