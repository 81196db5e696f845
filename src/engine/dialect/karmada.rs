//! The Karmada dialect: (Cluster)PropagationPolicy and (Cluster)OverridePolicy parsing, which
//! policy claims a resource template (namespaced first, then priority, selector precision,
//! name), and the offline scheduler (affinity groups, tolerations, spread constraints,
//! Duplicated/Divided/Aggregated replicas). It must not render objects or read files.

use std::fmt;

use serde_json::Value;

use crate::engine::dialect::karmada_behaviour::Behaviour;
use crate::engine::document::parse::Doc;
use crate::engine::document::source::FleetError;
use crate::engine::overrides::overriders::Overriders;
use crate::engine::place::replicas::divide_by_static_weight;
use crate::engine::place::selector::{
    ClusterAffinity, LabelSelector, Toleration, scalar_text, untolerated_taint,
};
use crate::model::{ClusterSpec, ResourceRef};

/// How precisely a resource selector matched, in upstream's order (higher wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Precision {
    /// apiVersion and kind only (or an OverridePolicy with no selectors).
    All = 1,
    LabelSelector = 2,
    Name = 3,
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Precision::All => "kind only",
            Precision::LabelSelector => "labelSelector",
            Precision::Name => "name",
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ResourceSelector {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub label_selector: Option<LabelSelector>,
}

impl ResourceSelector {
    fn parse(doc: &Doc, pointer: &str) -> Result<ResourceSelector, FleetError> {
        let item = doc.value.pointer(pointer).cloned().unwrap_or(Value::Null);
        let text = |k: &str| item.get(k).and_then(scalar_text).filter(|s| !s.is_empty());
        let api_version = text("apiVersion").ok_or_else(|| {
            doc.error(
                &format!("{pointer}/apiVersion"),
                "a resource selector needs apiVersion",
                "add e.g. `apiVersion: apps/v1`",
            )
        })?;
        let kind = text("kind").ok_or_else(|| {
            doc.error(
                &format!("{pointer}/kind"),
                "a resource selector needs kind",
                "add e.g. `kind: Deployment`",
            )
        })?;
        let label_selector = match item.get("labelSelector") {
            None | Some(Value::Null) => None,
            Some(_) => Some(LabelSelector::parse(
                doc,
                &format!("{pointer}/labelSelector"),
            )?),
        };
        Ok(ResourceSelector {
            api_version,
            kind,
            namespace: text("namespace"),
            name: text("name"),
            label_selector,
        })
    }

    /// Upstream's match: apiVersion, kind and namespace (when set) must agree; a name, when
    /// set, decides alone (the labelSelector is then ignored); else the labelSelector; else all.
    pub fn matches(
        &self,
        target: &ResourceRef,
        labels: Option<&serde_json::Map<String, Value>>,
    ) -> Option<Precision> {
        if self.api_version != target.api_version || self.kind != target.kind {
            return None;
        }
        if let Some(ns) = &self.namespace
            && target.namespace.as_deref() != Some(ns.as_str())
        {
            return None;
        }
        if let Some(name) = &self.name {
            return (name == &target.name).then_some(Precision::Name);
        }
        match &self.label_selector {
            Some(sel) => sel.matches_map(labels).then_some(Precision::LabelSelector),
            None => Some(Precision::All),
        }
    }
}

fn parse_selectors(
    doc: &Doc,
    pointer: &str,
    required: bool,
) -> Result<Option<Vec<ResourceSelector>>, FleetError> {
    match doc.value.pointer(pointer) {
        None | Some(Value::Null) if !required => Ok(None),
        Some(Value::Array(items)) if !items.is_empty() || !required => {
            let mut out = Vec::new();
            for i in 0..items.len() {
                out.push(ResourceSelector::parse(doc, &format!("{pointer}/{i}"))?);
            }
            Ok(Some(out))
        }
        _ => Err(doc.error(
            pointer,
            "resourceSelectors must be a non-empty list",
            "add `resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]`",
        )),
    }
}

/// Best precision over a policy's selectors for one template.
pub fn best_match(
    selectors: &[ResourceSelector],
    target: &ResourceRef,
    labels: Option<&serde_json::Map<String, Value>>,
) -> Option<Precision> {
    selectors
        .iter()
        .filter_map(|s| s.matches(target, labels))
        .max()
}

#[derive(Debug, Clone, PartialEq)]
pub enum SpreadBy {
    Cluster,
    Region,
    Zone,
    Provider,
    Label(String),
}

impl fmt::Display for SpreadBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpreadBy::Cluster => f.write_str("cluster"),
            SpreadBy::Region => f.write_str("region"),
            SpreadBy::Zone => f.write_str("zone"),
            SpreadBy::Provider => f.write_str("provider"),
            SpreadBy::Label(l) => write!(f, "label {l}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SpreadConstraint {
    pub by: SpreadBy,
    pub min_groups: i64,
    /// 0 = no maximum.
    pub max_groups: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ReplicaScheduling {
    Duplicated,
    /// Static weights as (affinity, weight); empty = every cluster weighs the same.
    Weighted(Vec<(ClusterAffinity, i64)>),
    /// `dynamicWeight: AvailableReplicas`: no live capacity offline, so equal weights.
    Dynamic,
    Aggregated,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub affinity: Option<ClusterAffinity>,
    pub affinities: Vec<(String, ClusterAffinity)>,
    /// Per `clusterAffinities` group (same index), its `overflowAffinities` in order.
    pub overflow: Vec<Vec<(String, ClusterAffinity)>>,
    pub tolerations: Vec<Toleration>,
    pub spread: Vec<SpreadConstraint>,
    pub replicas: ReplicaScheduling,
    /// Lines explain shows for placement fields that act at run time: `workloadAffinity`
    /// (where other workloads of the group were scheduled) and toleration seconds.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PropagationPolicy {
    /// `PropagationPolicy` or `ClusterPropagationPolicy`.
    pub kind: &'static str,
    pub namespace: Option<String>,
    pub name: String,
    pub priority: i64,
    pub selectors: Vec<ResourceSelector>,
    pub placement: Placement,
    /// propagateDeps, suspension, conflictResolution and the fields only a hub decides.
    pub behaviour: Behaviour,
    pub location: String,
}

impl PropagationPolicy {
    pub fn display_name(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }

    pub fn parse(doc: &Doc) -> Result<PropagationPolicy, FleetError> {
        let cluster_scoped = doc.kind() == "ClusterPropagationPolicy";
        let name = doc.name().to_string();
        if name.is_empty() {
            return Err(doc.error(
                "/metadata/name",
                "a policy needs a name",
                "add `metadata.name`",
            ));
        }
        let namespace = if cluster_scoped {
            None
        } else {
            Some(doc.namespace().unwrap_or("default").to_string())
        };
        let selectors = parse_selectors(doc, "/spec/resourceSelectors", true)?.unwrap_or_default();
        let priority = match doc.value.pointer("/spec/priority") {
            None | Some(Value::Null) => 0,
            Some(v) => v.as_i64().ok_or_else(|| {
                doc.error(
                    "/spec/priority",
                    "priority must be an integer",
                    "write e.g. `priority: 10`",
                )
            })?,
        };
        let placement = parse_placement(doc, "/spec/placement")?;
        let behaviour = Behaviour::parse(doc, "/spec")?;
        Ok(PropagationPolicy {
            kind: if cluster_scoped {
                "ClusterPropagationPolicy"
            } else {
                "PropagationPolicy"
            },
            namespace,
            name,
            priority,
            selectors,
            placement,
            behaviour,
            location: doc.location("").to_string(),
        })
    }

    /// Short placement summary for tables, naming the `clusterAffinities` group the
    /// scheduler used (`group`, an index; the first when none fits).
    pub fn summary(&self, group: Option<usize>) -> String {
        let p = &self.placement;
        let used = group
            .and_then(|g| p.affinities.get(g))
            .or(p.affinities.first());
        let mut out = match (&p.affinity, used) {
            (_, Some((name, a))) => format!("{name}: {}", a.summary()),
            (Some(a), None) => a.summary(),
            (None, None) => "all".into(),
        };
        match &p.replicas {
            ReplicaScheduling::Duplicated => {}
            ReplicaScheduling::Weighted(_) | ReplicaScheduling::Dynamic => {
                out.push_str(" (Divided)")
            }
            ReplicaScheduling::Aggregated => out.push_str(" (Aggregated)"),
        }
        out
    }
}

fn parse_placement(doc: &Doc, pointer: &str) -> Result<Placement, FleetError> {
    let value = doc.value.pointer(pointer).cloned().unwrap_or(Value::Null);
    let has = |k: &str| value.get(k).is_some_and(|v| !v.is_null());
    if has("clusterAffinity") && has("clusterAffinities") {
        return Err(doc.error(
            &format!("{pointer}/clusterAffinities"),
            "clusterAffinity and clusterAffinities cannot both be set",
            "keep one: clusterAffinities is an ordered list of fallback groups",
        ));
    }
    let affinity = if has("clusterAffinity") {
        Some(ClusterAffinity::parse(
            doc,
            &format!("{pointer}/clusterAffinity"),
        )?)
    } else {
        None
    };
    let mut affinities = Vec::new();
    let mut overflow = Vec::new();
    let named = |item: &Value, p: &str, what: &str| -> Result<String, FleetError> {
        let name = item
            .get("affinityName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if name.is_empty() {
            return Err(doc.error(
                &format!("{p}/affinityName"),
                format!("each {what} group needs an affinityName"),
                "add `affinityName: primary`",
            ));
        }
        Ok(name)
    };
    if let Some(items) = value.get("clusterAffinities").and_then(Value::as_array) {
        for (i, item) in items.iter().enumerate() {
            let p = format!("{pointer}/clusterAffinities/{i}");
            let name = named(item, &p, "clusterAffinities")?;
            affinities.push((name, ClusterAffinity::parse(doc, &p)?));
            let mut groups = Vec::new();
            for (j, group) in item
                .get("overflowAffinities")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let q = format!("{p}/overflowAffinities/{j}");
                groups.push((
                    named(group, &q, "overflowAffinities")?,
                    ClusterAffinity::parse(doc, &q)?,
                ));
            }
            overflow.push(groups);
        }
    }
    let workload_affinity = value
        .get("workloadAffinity")
        .filter(|v| !v.is_null())
        .map(|w| {
            let key = |term: &str| {
                w.pointer(&format!("/{term}/groupByLabelKey"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            let mut terms = Vec::new();
            if let Some(k) = key("affinity") {
                terms.push(format!("with the workloads sharing its {k} label value"));
            }
            if let Some(k) = key("antiAffinity") {
                terms.push(format!("away from the workloads sharing its {k} label value"));
            }
            format!(
                "workloadAffinity: Karmada places it {}, which depends on where the scheduler put those workloads on the hub; flotilla does not apply it offline",
                if terms.is_empty() { "by workload groups".to_string() } else { terms.join(" and ") }
            )
        });
    let tolerations = Toleration::parse_list(doc, &format!("{pointer}/clusterTolerations"))?;
    let mut spread = Vec::new();
    if let Some(items) = value.get("spreadConstraints").and_then(Value::as_array) {
        for (i, item) in items.iter().enumerate() {
            let p = format!("{pointer}/spreadConstraints/{i}");
            let field = item
                .get("spreadByField")
                .and_then(Value::as_str)
                .unwrap_or("");
            let label = item
                .get("spreadByLabel")
                .and_then(Value::as_str)
                .unwrap_or("");
            let by = match (field, label) {
                ("", "") | ("cluster", "") => SpreadBy::Cluster,
                ("region", "") => SpreadBy::Region,
                ("zone", "") => SpreadBy::Zone,
                ("provider", "") => SpreadBy::Provider,
                ("", l) => SpreadBy::Label(l.to_string()),
                (f, "") => {
                    return Err(doc.error(
                        &format!("{p}/spreadByField"),
                        format!("unknown spreadByField `{f}`"),
                        "use cluster, region, zone or provider (or spreadByLabel)",
                    ));
                }
                _ => {
                    return Err(doc.error(
                        &p,
                        "spreadByField and spreadByLabel cannot both be set",
                        "keep one of them",
                    ));
                }
            };
            let int = |k: &str, d: i64| item.get(k).and_then(Value::as_i64).unwrap_or(d);
            let min_groups = int("minGroups", 1);
            let max_groups = int("maxGroups", 0);
            if max_groups != 0 && max_groups < min_groups {
                return Err(doc.error(
                    &format!("{p}/maxGroups"),
                    format!("maxGroups {max_groups} is less than minGroups {min_groups}"),
                    "raise maxGroups or lower minGroups",
                ));
            }
            spread.push(SpreadConstraint {
                by,
                min_groups,
                max_groups,
            });
        }
    }
    let rs = format!("{pointer}/replicaScheduling");
    let replicas = match doc.value.pointer(&rs) {
        None | Some(Value::Null) => ReplicaScheduling::Duplicated,
        Some(r) => {
            let kind = r
                .get("replicaSchedulingType")
                .and_then(Value::as_str)
                .unwrap_or("Divided");
            match kind {
                "Duplicated" => ReplicaScheduling::Duplicated,
                "Divided" => {
                    let pref = r
                        .get("replicaDivisionPreference")
                        .and_then(Value::as_str)
                        .unwrap_or("Weighted");
                    match pref {
                        "Aggregated" => ReplicaScheduling::Aggregated,
                        "Weighted" => {
                            let wp = r.get("weightPreference");
                            let dynamic = wp
                                .and_then(|w| w.get("dynamicWeight"))
                                .and_then(Value::as_str)
                                .unwrap_or("");
                            if !dynamic.is_empty() {
                                if dynamic != "AvailableReplicas" {
                                    return Err(doc.error(
                                        &format!("{rs}/weightPreference/dynamicWeight"),
                                        format!("unknown dynamicWeight `{dynamic}`"),
                                        "the only dynamic weight is AvailableReplicas",
                                    ));
                                }
                                ReplicaScheduling::Dynamic
                            } else {
                                let mut list = Vec::new();
                                let lp = format!("{rs}/weightPreference/staticWeightList");
                                let n = doc
                                    .value
                                    .pointer(&lp)
                                    .and_then(Value::as_array)
                                    .map(Vec::len)
                                    .unwrap_or(0);
                                for i in 0..n {
                                    let ip = format!("{lp}/{i}");
                                    let weight = doc
                                        .value
                                        .pointer(&format!("{ip}/weight"))
                                        .and_then(Value::as_i64)
                                        .unwrap_or(0);
                                    if weight < 1 {
                                        return Err(doc.error(
                                            &format!("{ip}/weight"),
                                            "a static weight must be an integer of at least 1",
                                            "set `weight: 1` or more",
                                        ));
                                    }
                                    let aff = ClusterAffinity::parse(
                                        doc,
                                        &format!("{ip}/targetCluster"),
                                    )?;
                                    list.push((aff, weight));
                                }
                                ReplicaScheduling::Weighted(list)
                            }
                        }
                        other => {
                            return Err(doc.error(
                                &format!("{rs}/replicaDivisionPreference"),
                                format!("unknown replicaDivisionPreference `{other}`"),
                                "use Weighted or Aggregated",
                            ));
                        }
                    }
                }
                other => {
                    return Err(doc.error(
                        &format!("{rs}/replicaSchedulingType"),
                        format!("unknown replicaSchedulingType `{other}`"),
                        "use Duplicated or Divided",
                    ));
                }
            }
        }
    };
    let mut notes: Vec<String> = workload_affinity.into_iter().collect();
    let timed: Vec<String> = value
        .get("clusterTolerations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let seconds = t.get("tolerationSeconds").and_then(Value::as_i64)?;
            let key = t.get("key").and_then(Value::as_str).unwrap_or("*");
            Some(format!("{key} for {seconds}s"))
        })
        .collect();
    if !timed.is_empty() {
        notes.push(format!(
            "clusterTolerations with tolerationSeconds ({}): how long Karmada keeps the workload on a cluster once a NoExecute taint appears; flotilla treats every cluster as Ready, so nothing is evicted offline",
            timed.join(", ")
        ));
    }
    Ok(Placement {
        affinity,
        affinities,
        overflow,
        tolerations,
        spread,
        replicas,
        notes,
    })
}

/// The scheduler's verdict for one template.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// Per inventory cluster: `Ok(replicas)` when placed (`None` for kinds without replicas),
    /// `Err(reason)` when not.
    pub cells: Vec<Result<Option<i64>, String>>,
    /// Human lines shared by every cluster (group used, spread choice, division rule).
    pub steps: Vec<String>,
    /// Per cluster static weight when replicas were divided by weight (for explain).
    pub weights: Vec<i64>,
    /// The `clusterAffinities` group used (index), when the policy has groups and one fit.
    pub group: Option<usize>,
}

fn group_value(cluster: &ClusterSpec, by: &SpreadBy) -> Option<String> {
    match by {
        SpreadBy::Cluster => Some(cluster.name.clone()),
        SpreadBy::Region => cluster.region.clone(),
        SpreadBy::Zone => cluster.zones.first().cloned(),
        SpreadBy::Provider => cluster.provider.clone(),
        SpreadBy::Label(key) => cluster.labels.get(key).cloned(),
    }
}

/// Chooses clusters among `feasible` (indices into `clusters`, sorted by name) by spread
/// constraints. Without scores every cluster ranks equal, so groups rank by size, then name,
/// and clusters by name. Returns the chosen indices, or why nothing fits; `why_not` gets a
/// reason for each feasible cluster left out.
fn apply_spread(
    clusters: &[ClusterSpec],
    feasible: &[usize],
    spread: &[SpreadConstraint],
    why_not: &mut Vec<(usize, String)>,
    steps: &mut Vec<String>,
) -> Result<Vec<usize>, String> {
    let cluster_c = spread.iter().find(|s| s.by == SpreadBy::Cluster);
    let group_c = spread.iter().find(|s| s.by != SpreadBy::Cluster);
    if let Some(g) = group_c {
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for &i in feasible {
            match group_value(&clusters[i], &g.by) {
                Some(v) => match groups.iter_mut().find(|(name, _)| *name == v) {
                    Some((_, members)) => members.push(i),
                    None => groups.push((v, vec![i])),
                },
                None => why_not.push((
                    i,
                    format!("spreadConstraints by {}: the cluster has no {}", g.by, g.by),
                )),
            }
        }
        groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
        let min = g.min_groups.max(1) as usize;
        if groups.len() < min {
            return Err(format!(
                "spreadConstraints: only {} {} group(s) feasible, minGroups is {}",
                groups.len(),
                g.by,
                g.min_groups
            ));
        }
        let cap = if g.max_groups > 0 {
            (g.max_groups as usize).min(groups.len())
        } else {
            groups.len()
        };
        let need_clusters = cluster_c.map(|c| c.min_groups.max(0) as usize).unwrap_or(0);
        let mut k = min;
        while k < cap && groups[..k].iter().map(|g| g.1.len()).sum::<usize>() < need_clusters {
            k += 1;
        }
        let available: usize = groups[..k].iter().map(|g| g.1.len()).sum();
        if available < need_clusters {
            return Err(format!(
                "spreadConstraints: {available} cluster(s) in the chosen {} groups, cluster minGroups is {need_clusters}",
                g.by
            ));
        }
        let mut chosen: Vec<usize> = groups[..k].iter().map(|g| g.1[0]).collect();
        let mut rest: Vec<usize> = groups[..k]
            .iter()
            .flat_map(|g| g.1[1..].iter().copied())
            .collect();
        rest.sort_unstable();
        let want = cluster_c
            .map(|c| {
                if c.max_groups > 0 {
                    c.max_groups as usize
                } else {
                    0
                }
            })
            .unwrap_or(0);
        let extra = want.saturating_sub(chosen.len()).min(rest.len());
        chosen.extend(rest.iter().take(extra).copied());
        let chosen_groups: Vec<&str> = groups[..k].iter().map(|g| g.0.as_str()).collect();
        steps.push(format!(
            "spreadConstraints: chose {} {} group(s) [{}] and {} cluster(s); flotilla has no resource scores, so groups rank by feasible-cluster count then name, and clusters by name (upstream ranks by score)",
            k,
            g.by,
            chosen_groups.join(", "),
            chosen.len()
        ));
        for (name, members) in &groups {
            for &i in members {
                if !chosen.contains(&i) {
                    if chosen_groups.contains(&name.as_str()) {
                        why_not.push((
                            i,
                            format!(
                                "spreadConstraints: not among the clusters chosen in {} {name}",
                                g.by
                            ),
                        ));
                    } else {
                        why_not.push((
                            i,
                            format!(
                                "spreadConstraints: {} {name} not among the {k} chosen",
                                g.by
                            ),
                        ));
                    }
                }
            }
        }
        chosen.sort_unstable();
        return Ok(chosen);
    }
    if let Some(c) = cluster_c {
        let min = c.min_groups.max(0) as usize;
        if feasible.len() < min {
            return Err(format!(
                "spreadConstraints: only {} feasible cluster(s), minGroups is {}",
                feasible.len(),
                c.min_groups
            ));
        }
        let take = if c.max_groups > 0 {
            (c.max_groups as usize).min(feasible.len())
        } else {
            feasible.len()
        };
        steps.push(format!(
            "spreadConstraints: chose {take} of {} feasible cluster(s) by name (upstream ranks by score)",
            feasible.len()
        ));
        for &i in &feasible[take..] {
            why_not.push((
                i,
                format!(
                    "spreadConstraints: not among the {take} clusters chosen (maxGroups {})",
                    c.max_groups
                ),
            ));
        }
        return Ok(feasible[..take].to_vec());
    }
    Ok(feasible.to_vec())
}

impl Placement {
    fn spread_ignored(&self) -> bool {
        matches!(self.replicas, ReplicaScheduling::Weighted(_))
    }

    /// Schedules one template over the inventory. `replicas` is the template's replica count
    /// for kinds that have one.
    pub fn schedule(&self, clusters: &[ClusterSpec], replicas: Option<i64>) -> Schedule {
        let n = clusters.len();
        let mut steps = Vec::new();
        let groups: Vec<(Option<&str>, Option<&ClusterAffinity>)> = if self.affinities.is_empty() {
            vec![(None, self.affinity.as_ref())]
        } else {
            self.affinities
                .iter()
                .map(|(name, a)| (Some(name.as_str()), Some(a)))
                .collect()
        };
        let mut last_reasons: Vec<String> = vec![String::new(); n];
        let mut last_failure: Option<String> = None;
        for (gi, (group, affinity)) in groups.iter().enumerate() {
            let prefix = group
                .map(|g| format!("affinity group '{g}': "))
                .unwrap_or_default();
            let mut reasons: Vec<String> = vec![String::new(); n];
            // Overflow groups widen a group only for kinds with replicas (upstream's
            // cluster-affinity filter); tier 0 is the group itself, tier k its k-th overflow.
            let overflow: &[(String, ClusterAffinity)] = match (group, replicas) {
                (Some(_), Some(_)) => self.overflow.get(gi).map(Vec::as_slice).unwrap_or(&[]),
                _ => &[],
            };
            let mut tiered: Vec<(usize, usize)> = Vec::new();
            for (i, cluster) in clusters.iter().enumerate() {
                let tier = match affinity.and_then(|a| a.mismatch(cluster)) {
                    None => 0,
                    Some(reason) => match overflow
                        .iter()
                        .position(|(_, a)| a.mismatch(cluster).is_none())
                    {
                        Some(k) => k + 1,
                        None => {
                            reasons[i] = format!("{prefix}{reason}");
                            continue;
                        }
                    },
                };
                if let Some(taint) = untolerated_taint(cluster, &self.tolerations) {
                    reasons[i] = format!("taint {taint} not tolerated");
                } else {
                    tiered.push((i, tier));
                }
            }
            // No capacity data offline: the first tier with a feasible cluster is assumed to
            // hold every replica, so later overflow groups are not used.
            let first_tier = tiered.iter().map(|&(_, t)| t).min().unwrap_or(0);
            let mut feasible = Vec::new();
            for &(i, tier) in &tiered {
                if tier == first_tier {
                    feasible.push(i);
                } else if let (Some(g), Some((name, _))) = (group, overflow.get(tier - 1)) {
                    reasons[i] = format!(
                        "overflow group '{name}' of affinity group '{g}': used only when the clusters before it lack capacity for the replicas (depends on the scheduler's estimator; flotilla assumes they have enough)"
                    );
                }
            }
            if first_tier > 0
                && let (Some(g), Some((name, _))) = (group, overflow.get(first_tier - 1))
            {
                steps.push(format!(
                    "affinity group '{g}' itself has no feasible cluster; its overflow group '{name}' takes the replicas"
                ));
            } else if !overflow.is_empty() && !feasible.is_empty() {
                steps.push(format!(
                    "overflowAffinities of group '{}': not used, as flotilla assumes the group's own clusters have capacity for every replica (upstream's estimator decides)",
                    group.unwrap_or_default()
                ));
            }
            if feasible.is_empty() {
                if let Some(g) = group {
                    steps.push(format!(
                        "affinity group '{g}' has no feasible cluster; trying the next group"
                    ));
                }
                last_reasons = reasons;
                last_failure = None;
                continue;
            }
            let mut why_not = Vec::new();
            let mut local_steps = Vec::new();
            let chosen = if self.spread.is_empty() {
                Ok(feasible.clone())
            } else if self.spread_ignored() {
                local_steps.push(
                    "spreadConstraints ignored: static weights decide the clusters, as upstream"
                        .to_string(),
                );
                Ok(feasible.clone())
            } else {
                apply_spread(
                    clusters,
                    &feasible,
                    &self.spread,
                    &mut why_not,
                    &mut local_steps,
                )
            };
            let chosen = match chosen {
                Ok(c) => c,
                Err(message) => {
                    if let Some(g) = group {
                        steps.push(format!(
                            "affinity group '{g}': {message}; trying the next group"
                        ));
                    }
                    for &i in &feasible {
                        reasons[i] = format!("{prefix}{message}");
                    }
                    last_reasons = reasons;
                    last_failure = Some(message);
                    continue;
                }
            };
            for (i, why) in why_not {
                reasons[i] = why;
            }
            if let Some(g) = group {
                steps.push(format!(
                    "using affinity group '{g}' (#{gi}), the first with a feasible cluster"
                ));
                for (i, reason) in reasons.iter_mut().enumerate() {
                    if !chosen.contains(&i) && reason.is_empty() {
                        *reason = format!("not in affinity group '{g}'");
                    }
                }
            }
            steps.extend(local_steps);
            let mut cells: Vec<Result<Option<i64>, String>> =
                reasons.into_iter().map(Err).collect();
            let mut weights = Vec::new();
            self.assign(
                clusters,
                &chosen,
                replicas,
                &mut cells,
                &mut weights,
                &mut steps,
            );
            return Schedule {
                cells,
                steps,
                weights,
                group: group.map(|_| gi),
            };
        }
        if let Some(message) = last_failure {
            steps.push(format!("no cluster fits: {message}"));
        } else {
            steps.push("no cluster fits: every cluster is filtered out".into());
        }
        Schedule {
            cells: last_reasons
                .into_iter()
                .map(|r| {
                    Err(if r.is_empty() {
                        "no cluster fits".into()
                    } else {
                        r
                    })
                })
                .collect(),
            steps,
            weights: Vec::new(),
            group: None,
        }
    }

    fn assign(
        &self,
        clusters: &[ClusterSpec],
        chosen: &[usize],
        replicas: Option<i64>,
        cells: &mut [Result<Option<i64>, String>],
        weights: &mut Vec<i64>,
        steps: &mut Vec<String>,
    ) {
        let Some(total) = replicas else {
            for &i in chosen {
                cells[i] = Ok(None);
            }
            if !matches!(self.replicas, ReplicaScheduling::Duplicated) {
                steps.push(
                    "the kind has no replicas, so every chosen cluster gets the whole object"
                        .into(),
                );
            }
            return;
        };
        let weighted = |list: &[(ClusterAffinity, i64)]| -> Vec<i64> {
            chosen
                .iter()
                .map(|&i| {
                    list.iter()
                        .filter(|(a, _)| a.mismatch(&clusters[i]).is_none())
                        .map(|(_, w)| *w)
                        .max()
                        .unwrap_or(0)
                })
                .collect()
        };
        match &self.replicas {
            ReplicaScheduling::Duplicated => {
                for &i in chosen {
                    cells[i] = Ok(Some(total));
                }
                steps.push(format!(
                    "Duplicated: every cluster runs all {total} replicas"
                ));
            }
            ReplicaScheduling::Aggregated => {
                if let Some(&first) = chosen.first() {
                    cells[first] = Ok(Some(total));
                    for &i in &chosen[1..] {
                        cells[i] = Err(format!(
                            "Aggregated: all {total} replicas packed onto {}",
                            clusters[first].name
                        ));
                    }
                    steps.push(format!(
                        "Aggregated: flotilla has no capacity data and assumes every cluster can hold all replicas, so all {total} go to {} (first by name)",
                        clusters[first].name
                    ));
                }
            }
            ReplicaScheduling::Weighted(_) | ReplicaScheduling::Dynamic if !chosen.is_empty() => {
                let mut w = match &self.replicas {
                    ReplicaScheduling::Weighted(list) if !list.is_empty() => weighted(list),
                    _ => vec![1; chosen.len()],
                };
                let rule = match &self.replicas {
                    ReplicaScheduling::Dynamic => {
                        "dynamicWeight AvailableReplicas (no live capacity offline: equal weights)"
                    }
                    ReplicaScheduling::Weighted(list) if list.is_empty() => {
                        "no staticWeightList: equal weights"
                    }
                    _ => "static weights",
                };
                if w.iter().all(|x| *x == 0) {
                    w = vec![1; chosen.len()];
                    steps.push("no staticWeightList entry matches a chosen cluster: equal weights, as upstream".into());
                }
                let names: Vec<(&str, i64)> = chosen
                    .iter()
                    .zip(&w)
                    .map(|(&i, &wt)| (clusters[i].name.as_str(), wt))
                    .collect();
                let split = divide_by_static_weight(total, &names);
                let sum: i64 = w.iter().fold(0_i64, |acc, x| acc.saturating_add(*x));
                weights.resize(clusters.len(), 0);
                for ((&i, &wt), &r) in chosen.iter().zip(&w).zip(&split) {
                    weights[i] = wt;
                    cells[i] = if wt == 0 {
                        Err("Divided: weight 0 (no staticWeightList entry matches)".to_string())
                    } else if r == 0 {
                        Err(format!(
                            "Divided: 0 of {total} replicas fall here (weight {wt} of {sum})"
                        ))
                    } else {
                        Ok(Some(r))
                    };
                }
                steps.push(format!(
                    "Divided by {rule}: {total} replicas over weight {sum}; floor shares first, the remainder one by one by weight, then cluster name (upstream breaks equal-weight ties at random)"
                ));
            }
            _ => {}
        }
    }
}

/// One `overrideRules` entry (or the deprecated `targetCluster`+`overriders` form).
#[derive(Debug, Clone, PartialEq)]
pub struct OverrideRule {
    pub target: Option<ClusterAffinity>,
    pub overriders: Overriders,
    /// Which inventory clusters the rule targets.
    pub clusters: Vec<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct OverridePolicy {
    pub kind: &'static str,
    pub namespace: Option<String>,
    pub name: String,
    pub selectors: Option<Vec<ResourceSelector>>,
    pub rules: Vec<OverrideRule>,
}

impl OverridePolicy {
    pub fn display_name(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }

    pub fn parse(doc: &Doc, clusters: &[ClusterSpec]) -> Result<OverridePolicy, FleetError> {
        let cluster_scoped = doc.kind() == "ClusterOverridePolicy";
        let name = doc.name().to_string();
        if name.is_empty() {
            return Err(doc.error(
                "/metadata/name",
                "a policy needs a name",
                "add `metadata.name`",
            ));
        }
        let selectors = parse_selectors(doc, "/spec/resourceSelectors", false)?;
        let mut rules = Vec::new();
        let has_rules = doc
            .value
            .pointer("/spec/overrideRules")
            .is_some_and(|v| !v.is_null());
        // Karmada's webhook defaults the deprecated `overriders` to `{}`: empty means unset.
        let has_old = doc
            .value
            .pointer("/spec/overriders")
            .is_some_and(|v| !(v.is_null() || v.as_object().is_some_and(|o| o.is_empty())));
        if has_rules && has_old {
            return Err(doc.error(
                "/spec/overriders",
                "overrideRules cannot be combined with the deprecated targetCluster/overriders",
                "move the overriders into an overrideRules entry",
            ));
        }
        let mut push = |target_ptr: String, overriders_ptr: String| -> Result<(), FleetError> {
            let target = match doc.value.pointer(&target_ptr) {
                None | Some(Value::Null) => None,
                Some(_) => Some(ClusterAffinity::parse(doc, &target_ptr)?),
            };
            let overriders = Overriders::parse(doc, &overriders_ptr)?;
            let mask = clusters
                .iter()
                .map(|c| target.as_ref().is_none_or(|t| t.mismatch(c).is_none()))
                .collect();
            rules.push(OverrideRule {
                target,
                overriders,
                clusters: mask,
            });
            Ok(())
        };
        if has_rules {
            let n = doc
                .value
                .pointer("/spec/overrideRules")
                .and_then(Value::as_array)
                .map(Vec::len)
                .ok_or_else(|| {
                    doc.error(
                        "/spec/overrideRules",
                        "overrideRules must be a list",
                        "write `- targetCluster: ...`",
                    )
                })?;
            for i in 0..n {
                push(
                    format!("/spec/overrideRules/{i}/targetCluster"),
                    format!("/spec/overrideRules/{i}/overriders"),
                )?;
            }
        } else if has_old {
            push("/spec/targetCluster".into(), "/spec/overriders".into())?;
        }
        Ok(OverridePolicy {
            kind: if cluster_scoped {
                "ClusterOverridePolicy"
            } else {
                "OverridePolicy"
            },
            namespace: if cluster_scoped {
                None
            } else {
                Some(doc.namespace().unwrap_or("default").to_string())
            },
            name,
            selectors,
            rules,
        })
    }

    /// Precision with which this policy selects the template (no selectors = match all).
    pub fn matches(
        &self,
        target: &ResourceRef,
        labels: Option<&serde_json::Map<String, Value>>,
    ) -> Option<Precision> {
        if let Some(ns) = &self.namespace
            && target.namespace.as_deref() != Some(ns.as_str())
        {
            return None;
        }
        match &self.selectors {
            None => Some(Precision::All),
            Some(list) => best_match(list, target, labels),
        }
    }
}
