//! The dialect-neutral domain model shared by engine, backends, app and views: clusters,
//! federated resources, placement decisions, the kinds of federation hub and what each lets
//! an operator do, and the per-cell status vocabulary of design §4.
//! Plain data only: no I/O, no Kubernetes client types, no terminal types.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Identity of a Kubernetes object: the contract's `{"apiVersion","kind","namespace","name"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRef {
    pub api_version: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
}

impl ResourceRef {
    /// `Kind/namespace/name`, or `Kind/name` for cluster-scoped objects: the form
    /// `--resource` accepts and the console shows.
    pub fn display_key(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{}/{}", self.kind, ns, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }

    /// The API group, empty for the core group.
    pub fn group(&self) -> &str {
        self.api_version
            .rsplit_once('/')
            .map(|(group, _)| group)
            .unwrap_or("")
    }
}

/// kubectl's short names of the built-in kinds, lowercased: `deploy` → `deployment`.
const SHORT_KINDS: [(&str, &str); 16] = [
    ("cm", "configmap"),
    ("svc", "service"),
    ("deploy", "deployment"),
    ("ds", "daemonset"),
    ("sts", "statefulset"),
    ("rs", "replicaset"),
    ("ns", "namespace"),
    ("sa", "serviceaccount"),
    ("cj", "cronjob"),
    ("ing", "ingress"),
    ("pvc", "persistentvolumeclaim"),
    ("hpa", "horizontalpodautoscaler"),
    ("netpol", "networkpolicy"),
    ("pdb", "poddisruptionbudget"),
    ("crb", "clusterrolebinding"),
    ("rb", "rolebinding"),
];

/// The kind a typed name stands for, lowercased: a kubectl short name (`deploy`) or a plural
/// (`deployments`, `ingresses`, `networkpolicies`) becomes the kind it names; anything else
/// is itself, lowercased.
pub fn kind_named(typed: &str) -> String {
    let typed = typed.to_lowercase();
    if let Some((_, kind)) = SHORT_KINDS.iter().find(|(short, _)| *short == typed) {
        return (*kind).to_string();
    }
    typed
}

/// Whether `typed` names `kind` as kubectl takes a resource type: the kind, its plural or its
/// short name, in any case.
pub fn names_kind(kind: &str, typed: &str) -> bool {
    let kind = kind.to_lowercase();
    let typed = kind_named(typed);
    typed == kind
        || typed == format!("{kind}s")
        || typed == format!("{kind}es")
        || kind
            .strip_suffix('y')
            .is_some_and(|stem| typed == format!("{stem}ies"))
}

impl fmt::Display for ResourceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display_key())
    }
}

/// A cluster taint as Karmada and Kubernetes spell it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Taint {
    pub key: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
    pub effect: String,
}

impl fmt::Display for Taint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}:{}", self.key, self.effect)
        } else {
            write!(f, "{}={}:{}", self.key, self.value, self.effect)
        }
    }
}

/// A member cluster as the fleet inventory declares it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ClusterSpec {
    pub name: String,
    /// The kubeconfig context this cluster connects through.
    pub context: String,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    pub provider: Option<String>,
    pub region: Option<String>,
    pub zones: Vec<String>,
}

/// Connection health of one cluster (design §3 `clusters` contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Health {
    Ready,
    NotReady,
    Unreachable,
    Unauthorized,
    /// flotilla has no way to reach it: no kubeconfig context, no access provider.
    NoAccess,
    Unknown,
}

impl Health {
    pub fn as_str(self) -> &'static str {
        match self {
            Health::Ready => "Ready",
            Health::NotReady => "NotReady",
            Health::Unreachable => "Unreachable",
            Health::Unauthorized => "Unauthorized",
            Health::NoAccess => "NoAccess",
            Health::Unknown => "Unknown",
        }
    }

    pub fn is_ready(self) -> bool {
        self == Health::Ready
    }
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a backend currently knows about a cluster's connection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterStatus {
    pub health: Health,
    pub version: Option<String>,
    pub latency_ms: Option<u64>,
    pub message: String,
}

impl Default for ClusterStatus {
    fn default() -> Self {
        ClusterStatus {
            health: Health::Unknown,
            version: None,
            latency_ms: None,
            message: "connecting".into(),
        }
    }
}

/// The federation dialect a federated resource was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Dialect {
    Karmada,
    KubeFed,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Karmada => "karmada",
            Dialect::KubeFed => "kubefed",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The federation control planes flotilla knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HubKind {
    Karmada,
    OpenClusterManagement,
    KubeFed,
}

/// What a cluster leaving a placement loses, in the one wording every surface uses: with no
/// hub flotilla propagates and deletes nothing until `flotilla apply --prune`; on a hub, its
/// controllers delete the objects they delivered there.
pub fn leaving(hub: Option<HubKind>) -> String {
    match hub {
        None => "its objects stay on it until `flotilla apply --prune`".to_string(),
        Some(HubKind::OpenClusterManagement) => {
            "it leaves the decision; what the Placement's consumers (ManifestWorkReplicaSets) delivered there is removed".to_string()
        }
        Some(kind) => format!("{} deletes its objects there", kind.as_str()),
    }
}

impl HubKind {
    pub const ALL: [HubKind; 3] = [
        HubKind::Karmada,
        HubKind::OpenClusterManagement,
        HubKind::KubeFed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HubKind::Karmada => "Karmada",
            HubKind::OpenClusterManagement => "Open Cluster Management",
            HubKind::KubeFed => "KubeFed",
        }
    }

    /// Why the console cannot edit overrides on this kind of hub, if it cannot.
    pub fn no_overrides(self) -> Option<&'static str> {
        match self {
            HubKind::OpenClusterManagement => Some(
                "Open Cluster Management has no override API: a ManifestWork is already per cluster (edit it in the cluster's namespace on the hub)",
            ),
            HubKind::Karmada | HubKind::KubeFed => None,
        }
    }

    /// Whether the hub reports how each member's workload is doing (Karmada's aggregated
    /// status, OCM's status feedback); KubeFed reports propagation only.
    pub fn reports_health(self) -> bool {
        !matches!(self, HubKind::KubeFed)
    }

    /// Whether the hub stores the object it renders for each member (Karmada's Works, OCM's
    /// ManifestWorks); KubeFed renders in memory and keeps only a status.
    pub fn keeps_rendered_objects(self) -> bool {
        !matches!(self, HubKind::KubeFed)
    }

    /// Why `a` (reschedule on a hub) does nothing on this kind of hub, if it does not.
    pub fn no_reschedule(self) -> Option<&'static str> {
        match self {
            HubKind::OpenClusterManagement => Some(
                "Open Cluster Management's work agents apply each ManifestWork themselves and OCM re-decides Placements as clusters change: there is nothing to propagate or reschedule; edit a Placement (e) to move the ManifestWorks that follow it",
            ),
            HubKind::KubeFed => Some(
                "KubeFed's controller propagates each Federated object itself and has no reschedule: edit its placement (e) or overrides (o)",
            ),
            HubKind::Karmada => None,
        }
    }

    /// The API group whose presence identifies the hub.
    pub fn marker(self) -> &'static str {
        match self {
            HubKind::Karmada => "cluster.karmada.io",
            HubKind::OpenClusterManagement => "cluster.open-cluster-management.io",
            HubKind::KubeFed => "core.kubefed.io",
        }
    }

    /// The hub kind the served API groups identify (Karmada first: its hub also serves
    /// aggregated member APIs under other names).
    pub fn of_groups(groups: &[&str]) -> Option<HubKind> {
        HubKind::ALL
            .into_iter()
            .find(|kind| groups.contains(&kind.marker()))
    }

    /// The dialect the hub's federated objects are written in (OCM's ManifestWorks are read
    /// as Karmada's rendering: one object per cluster).
    pub fn dialect(self) -> Dialect {
        match self {
            HubKind::KubeFed => Dialect::KubeFed,
            HubKind::Karmada | HubKind::OpenClusterManagement => Dialect::Karmada,
        }
    }
}

impl fmt::Display for HubKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Status of one (federated resource, cluster) cell, design §4.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "status", content = "reason")]
pub enum CellStatus {
    InSync,
    Drifted,
    /// Placed, not yet applied.
    Pending,
    /// Was applied, now gone from the cluster.
    Missing,
    Failed(String),
    /// Another field manager owns fields flotilla wants; carries that manager's name.
    Conflict(String),
    Unreachable,
    NotPlaced(String),
    /// Carries flotilla's ownership marker but is no longer placed.
    Orphaned,
    /// Placed, but Karmada's `suspension` holds it back; carries which policy and clusters.
    Suspended(String),
}

/// The kinds of [`CellStatus`] without their payloads, in severity order: a roll-up picks the
/// greatest. `NotPlaced` is no problem at all; `Failed` is the worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum StatusKind {
    NotPlaced,
    InSync,
    Suspended,
    Pending,
    Orphaned,
    Drifted,
    Unreachable,
    Missing,
    Conflict,
    Failed,
}

impl StatusKind {
    pub const ALL: [StatusKind; 10] = [
        StatusKind::InSync,
        StatusKind::Drifted,
        StatusKind::Pending,
        StatusKind::Missing,
        StatusKind::Failed,
        StatusKind::Conflict,
        StatusKind::Unreachable,
        StatusKind::NotPlaced,
        StatusKind::Orphaned,
        StatusKind::Suspended,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StatusKind::InSync => "InSync",
            StatusKind::Drifted => "Drifted",
            StatusKind::Pending => "Pending",
            StatusKind::Missing => "Missing",
            StatusKind::Failed => "Failed",
            StatusKind::Conflict => "Conflict",
            StatusKind::Unreachable => "Unreachable",
            StatusKind::NotPlaced => "NotPlaced",
            StatusKind::Orphaned => "Orphaned",
            StatusKind::Suspended => "Suspended",
        }
    }

    /// Parses a status name case-insensitively (`drifted`, `InSync`, `not-placed`).
    pub fn parse(text: &str) -> Option<StatusKind> {
        let wanted: String = text
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        StatusKind::ALL
            .into_iter()
            .find(|kind| kind.as_str().to_ascii_lowercase() == wanted)
    }

    /// One glyph per status so the matrix reads without colour.
    pub fn symbol(self, ascii: bool) -> char {
        match (self, ascii) {
            (StatusKind::InSync, false) => '✓',
            (StatusKind::InSync, true) => '=',
            (StatusKind::Drifted, _) => '~',
            (StatusKind::Pending, false) => '…',
            (StatusKind::Pending, true) => '.',
            (StatusKind::Missing, _) => '?',
            (StatusKind::Failed, false) => '✗',
            (StatusKind::Failed, true) => 'X',
            (StatusKind::Conflict, _) => '!',
            (StatusKind::Unreachable, false) => '⊘',
            (StatusKind::Unreachable, true) => '#',
            (StatusKind::NotPlaced, false) => '·',
            (StatusKind::NotPlaced, true) => '-',
            (StatusKind::Orphaned, false) => '°',
            (StatusKind::Orphaned, true) => 'o',
            (StatusKind::Suspended, false) => '‖',
            (StatusKind::Suspended, true) => 's',
        }
    }

    /// Whether this state asks for an operator's attention.
    pub fn is_problem(self) -> bool {
        self > StatusKind::Pending
    }
}

impl fmt::Display for StatusKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl CellStatus {
    pub fn kind(&self) -> StatusKind {
        match self {
            CellStatus::InSync => StatusKind::InSync,
            CellStatus::Drifted => StatusKind::Drifted,
            CellStatus::Pending => StatusKind::Pending,
            CellStatus::Missing => StatusKind::Missing,
            CellStatus::Failed(_) => StatusKind::Failed,
            CellStatus::Conflict(_) => StatusKind::Conflict,
            CellStatus::Unreachable => StatusKind::Unreachable,
            CellStatus::NotPlaced(_) => StatusKind::NotPlaced,
            CellStatus::Orphaned => StatusKind::Orphaned,
            CellStatus::Suspended(_) => StatusKind::Suspended,
        }
    }

    /// The reason or manager a status carries, if any.
    pub fn detail(&self) -> Option<&str> {
        match self {
            CellStatus::Failed(text)
            | CellStatus::Conflict(text)
            | CellStatus::NotPlaced(text)
            | CellStatus::Suspended(text) => Some(text),
            _ => None,
        }
    }
}

impl fmt::Display for CellStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.detail() {
            Some(detail) => write!(f, "{}({})", self.kind(), detail),
            None => f.write_str(self.kind().as_str()),
        }
    }
}

/// Whether a live object is doing its job, beside whether it matches the fleet (design §4):
/// Argo CD's meanings for built-in kinds. In severity order, so a roll-up picks the greatest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum HealthKind {
    Healthy,
    /// Deliberately stopped (a paused Deployment, a suspended Job or CronJob).
    Suspended,
    /// Still getting there (a rollout, a pending claim, a load balancer not yet assigned).
    Progressing,
    /// The cluster could not say.
    Unknown,
    /// Placed, but the cluster does not hold it.
    Missing,
    Degraded,
}

impl HealthKind {
    pub const ALL: [HealthKind; 6] = [
        HealthKind::Healthy,
        HealthKind::Suspended,
        HealthKind::Progressing,
        HealthKind::Unknown,
        HealthKind::Missing,
        HealthKind::Degraded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HealthKind::Healthy => "Healthy",
            HealthKind::Suspended => "Suspended",
            HealthKind::Progressing => "Progressing",
            HealthKind::Unknown => "Unknown",
            HealthKind::Missing => "Missing",
            HealthKind::Degraded => "Degraded",
        }
    }

    /// The glyph a matrix cell shows beside its sync glyph; `None` for health that needs no
    /// mark (Healthy, and what the sync glyph already says).
    pub fn symbol(self, ascii: bool) -> Option<char> {
        match (self, ascii) {
            (HealthKind::Degraded, false) => Some('▼'),
            (HealthKind::Degraded, true) => Some('v'),
            (HealthKind::Progressing, false) => Some('↻'),
            (HealthKind::Progressing, true) => Some('+'),
            (HealthKind::Suspended, false) => Some('⊖'),
            (HealthKind::Suspended, true) => Some('|'),
            _ => None,
        }
    }

    /// Parses a health name case-insensitively (`degraded`, `Progressing`).
    pub fn parse(text: &str) -> Option<HealthKind> {
        HealthKind::ALL
            .into_iter()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

impl fmt::Display for HealthKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl HealthKind {
    /// Where this health ranks on the sync statuses' scale, for roll-ups that show the worse
    /// of the two: Degraded as badly as Failed (the workload does not work), Progressing as
    /// Pending, Suspended as Suspended; Healthy, Unknown and Missing (which the sync status
    /// already says) never outrank a sync status.
    pub fn severity(self) -> StatusKind {
        match self {
            HealthKind::Degraded => StatusKind::Failed,
            HealthKind::Progressing => StatusKind::Pending,
            HealthKind::Suspended => StatusKind::Suspended,
            HealthKind::Healthy | HealthKind::Unknown | HealthKind::Missing => {
                StatusKind::NotPlaced
            }
        }
    }
}

/// What a cell or a roll-up shows: the worse of its sync status and its live health. On a tie
/// the sync status shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Concern {
    Sync(StatusKind),
    Health(HealthKind),
}

impl Concern {
    /// The worse of a sync status and a live health.
    pub fn of(sync: StatusKind, health: Option<HealthKind>) -> Concern {
        match health {
            Some(health) if health.severity() > sync => Concern::Health(health),
            _ => Concern::Sync(sync),
        }
    }

    /// Its rank on the sync statuses' scale (what picks its colour).
    pub fn severity(self) -> StatusKind {
        match self {
            Concern::Sync(kind) => kind,
            Concern::Health(kind) => kind.severity(),
        }
    }

    pub fn symbol(self, ascii: bool) -> char {
        match self {
            Concern::Sync(kind) => kind.symbol(ascii),
            Concern::Health(kind) => kind.symbol(ascii).unwrap_or('?'),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Concern::Sync(kind) => kind.as_str(),
            Concern::Health(kind) => kind.as_str(),
        }
    }

    /// Whether it asks for an operator's attention.
    pub fn is_problem(self) -> bool {
        self.severity().is_problem()
    }
}

/// Worse is greater: by severity, and a sync status above a health of the same severity.
impl Ord for Concern {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let rank = |concern: &Concern| {
            (
                concern.severity(),
                matches!(concern, Concern::Sync(_)),
                match concern {
                    Concern::Sync(kind) => *kind as u8,
                    Concern::Health(kind) => *kind as u8,
                },
            )
        };
        rank(self).cmp(&rank(other))
    }
}

impl PartialOrd for Concern {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A live object's health and why ("1/3 available", "1/3 available, progress deadline
/// exceeded: …").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CellHealth {
    pub kind: HealthKind,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// When what the reason tells began, where the object says (RFC 3339): for a rollout past
    /// its progress deadline, when its Progressing condition said so. Whoever shows the
    /// reason counts how long ago from it, against a clock of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// The rule that decided it: `"apps/Deployment (built-in)"`,
    /// `"cert-manager.io/Certificate (argocd rules, PATH)"`; `None` where no rule did (a
    /// hub's own report, a test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// The worst status among a set of cells, with the position of the cell that caused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollUp<K> {
    pub worst: StatusKind,
    /// The first cell (in iteration order) whose status is `worst`; `None` for an empty set.
    pub cause: Option<K>,
}

/// Rolls cells up to their worst state, keeping the first cell that holds it so the
/// roll-up is always traceable. An empty set rolls up to `NotPlaced`.
pub fn roll_up<K: Copy>(cells: impl IntoIterator<Item = (K, StatusKind)>) -> RollUp<K> {
    let mut result = RollUp {
        worst: StatusKind::NotPlaced,
        cause: None,
    };
    for (key, kind) in cells {
        if result.cause.is_none() || kind > result.worst {
            result = RollUp {
                worst: kind,
                cause: Some(key),
            };
        }
    }
    result
}

/// Counts of cells by status, for headers and wall tiles.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusCounts(BTreeMap<StatusKind, usize>);

impl StatusCounts {
    pub fn add(&mut self, kind: StatusKind) {
        self.add_n(kind, 1);
    }

    pub fn add_n(&mut self, kind: StatusKind, count: usize) {
        if count > 0 {
            *self.0.entry(kind).or_default() += count;
        }
    }

    pub fn get(&self, kind: StatusKind) -> usize {
        self.0.get(&kind).copied().unwrap_or(0)
    }

    pub fn iter(&self) -> impl Iterator<Item = (StatusKind, usize)> + '_ {
        self.0.iter().map(|(kind, count)| (*kind, *count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_type_is_named_as_kubectl_names_it() {
        for typed in [
            "Deployment",
            "deployment",
            "deployments",
            "deploy",
            "DEPLOY",
        ] {
            assert!(names_kind("Deployment", typed), "{typed}");
        }
        assert!(names_kind("Ingress", "ingresses") && names_kind("Ingress", "ing"));
        assert!(
            names_kind("NetworkPolicy", "networkpolicies") && names_kind("NetworkPolicy", "netpol")
        );
        assert!(names_kind("ConfigMap", "cm") && names_kind("ConfigMap", "configmaps"));
        assert!(!names_kind("Deployment", "deploymen") && !names_kind("Deployment", "svc"));
        assert!(!names_kind("DaemonSet", "deploy"));
    }

    #[test]
    fn roll_up_picks_the_worst_and_remembers_its_cell() {
        let cells = [
            ("a", StatusKind::InSync),
            ("b", StatusKind::Drifted),
            ("c", StatusKind::Failed),
            ("d", StatusKind::Failed),
            ("e", StatusKind::Pending),
        ];
        let rolled = roll_up(cells);
        assert_eq!(rolled.worst, StatusKind::Failed);
        assert_eq!(
            rolled.cause,
            Some("c"),
            "the first failing cell is the cause"
        );
    }

    #[test]
    fn not_placed_never_hides_a_real_state() {
        let rolled = roll_up([(0, StatusKind::NotPlaced), (1, StatusKind::InSync)]);
        assert_eq!(rolled.worst, StatusKind::InSync);
        assert_eq!(rolled.cause, Some(1));
    }

    #[test]
    fn empty_roll_up_is_not_placed_without_cause() {
        let rolled = roll_up(std::iter::empty::<(u8, StatusKind)>());
        assert_eq!(rolled.worst, StatusKind::NotPlaced);
        assert_eq!(rolled.cause, None);
    }

    #[test]
    fn a_resource_with_only_unplaced_cells_keeps_a_traceable_cause() {
        let rolled = roll_up([(7, StatusKind::NotPlaced), (8, StatusKind::NotPlaced)]);
        assert_eq!(rolled.worst, StatusKind::NotPlaced);
        assert_eq!(rolled.cause, Some(7));
    }

    #[test]
    fn severity_order_is_the_documented_one() {
        use StatusKind::*;
        let order = [
            NotPlaced,
            InSync,
            Pending,
            Orphaned,
            Drifted,
            Unreachable,
            Missing,
            Conflict,
            Failed,
        ];
        assert!(order.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(!Pending.is_problem());
        assert!(Orphaned.is_problem());
    }

    #[test]
    fn every_status_has_a_distinct_symbol_in_both_alphabets() {
        for ascii in [false, true] {
            let mut seen = std::collections::HashSet::new();
            for kind in StatusKind::ALL {
                assert!(seen.insert(kind.symbol(ascii)), "{kind} repeats a symbol");
                if ascii {
                    assert!(kind.symbol(true).is_ascii());
                }
            }
        }
    }

    #[test]
    fn health_marks_are_distinct_from_every_status_glyph() {
        for ascii in [false, true] {
            let statuses: Vec<char> = StatusKind::ALL
                .into_iter()
                .map(|kind| kind.symbol(ascii))
                .collect();
            let marks: Vec<char> = HealthKind::ALL
                .into_iter()
                .filter_map(|kind| kind.symbol(ascii))
                .collect();
            assert_eq!(marks.len(), 3);
            for mark in marks {
                assert!(!statuses.contains(&mark), "{mark} is also a status glyph");
            }
        }
    }

    #[test]
    fn status_names_parse_loosely() {
        assert_eq!(StatusKind::parse("drifted"), Some(StatusKind::Drifted));
        assert_eq!(StatusKind::parse("not-placed"), Some(StatusKind::NotPlaced));
        assert_eq!(StatusKind::parse("InSync"), Some(StatusKind::InSync));
        assert_eq!(StatusKind::parse("bogus"), None);
    }

    #[test]
    fn cell_status_displays_its_reason() {
        let status = CellStatus::Conflict("kubectl-edit".into());
        assert_eq!(status.to_string(), "Conflict(kubectl-edit)");
        assert_eq!(CellStatus::InSync.to_string(), "InSync");
    }

    #[test]
    fn resource_keys_read_like_kubectl() {
        let namespaced = ResourceRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: Some("shop".into()),
            name: "web".into(),
        };
        assert_eq!(namespaced.display_key(), "Deployment/shop/web");
        assert_eq!(namespaced.group(), "apps");
        let core = ResourceRef {
            api_version: "v1".into(),
            kind: "Namespace".into(),
            namespace: None,
            name: "shop".into(),
        };
        assert_eq!(core.display_key(), "Namespace/shop");
        assert_eq!(core.group(), "");
    }
}
