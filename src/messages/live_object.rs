//! What a cluster holds for a cell the object view follows: the object, its diff against the
//! desired one, its recent Events and, for a workload, its pods, as a backend read them. Plain
//! data; it must not read a cluster (the backends do) nor import anything above `model` but the
//! engine's plain reading of a pod. [`CellPods`] is one cell's pods in a line, for the
//! console's fleet-wide `:pods` query.

/// What one cluster holds for a followed cell, as the object view shows it. Text in it is as the
/// cluster sent it: whoever prints it escapes it.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct LiveObject {
    /// The object on the cluster with Secret values masked; `None` when it does not hold it.
    pub object: Option<serde_json::Value>,
    /// The unified diff of the live object against the desired one, as a read-only plan
    /// reads it (Secret values masked); empty when nothing differs.
    pub diff: String,
    /// A fingerprint of the unmasked object's normalised state, so clusters group by what
    /// they really hold (see `engine::compare::live_state::fingerprint`).
    pub fingerprint: Option<u64>,
    /// The cluster's recent Events for the object (and its pods, for a workload), newest first.
    pub events: Vec<ObjectEvent>,
    /// A workload's pods on the cluster (owned through its ReplicaSets), by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pods: Vec<crate::engine::health::pods::PodRow>,
    /// Why the object or its Events could not be read, if they could not.
    pub error: Option<String>,
    /// On a Karmada hub: what the hub itself aggregated for the object's template.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hub: Option<HubAggregate>,
}

/// What a Karmada hub aggregated for a template from its members: the template as the hub
/// holds it (its generation, and `.status` as Karmada wrote it) and the ResourceBinding's
/// `status.aggregatedStatus` items (each member's collected status).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct HubAggregate {
    pub template: Option<serde_json::Value>,
    #[serde(rename = "aggregatedStatus")]
    pub items: Vec<serde_json::Value>,
    /// Why the hub's template or binding could not be read, if they could not.
    pub error: Option<String>,
}

/// One cluster Event about a followed object or one of its pods.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectEvent {
    /// `Normal` or `Warning`.
    #[serde(rename = "type")]
    pub event_type: String,
    pub reason: String,
    pub message: String,
    pub count: u32,
    /// What it is about: `Deployment shop/web`, `Pod shop/web-7d9c4-x2x`.
    pub object: String,
    /// When it last happened (RFC 3339), where the cluster says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<String>,
    /// Seconds from then until it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_seconds: Option<u64>,
}

impl ObjectEvent {
    pub fn is_warning(&self) -> bool {
        self.event_type == "Warning"
    }
}

/// What a backend read of one cell's workload pods, for the console's fleet-wide `:pods` query
/// and the cell's explanation: the pods in one line, and which troubles any of them is in.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CellPods {
    /// `2/3 ready, 1 CrashLoopBackOff: exit 1`, as `flotilla pods` words it.
    pub summary: String,
    /// Every trouble some pod is in, worst first.
    pub troubles: Vec<crate::engine::health::pods::PodTrouble>,
    /// Each container running other images than the fleet renders for the cell:
    /// `web: nginx:1.26 (desired nginx:1.27)`.
    pub skew: Vec<String>,
    /// Why the pods could not be read, if they could not.
    pub error: Option<String>,
}

impl CellPods {
    /// The cell's pods, as read, and where they or the live workload (`live`) run other
    /// images than the `desired` object.
    pub fn of(
        pods: &[crate::engine::health::pods::PodRow],
        desired: Option<&serde_json::Value>,
        live: Option<&serde_json::Value>,
    ) -> CellPods {
        let mut troubles: Vec<_> = pods.iter().filter_map(|pod| pod.trouble).collect();
        troubles.sort_unstable();
        troubles.dedup();
        CellPods {
            summary: crate::engine::health::pods::summary(pods),
            troubles,
            skew: desired
                .map(|desired| crate::engine::health::pods::image_skew(desired, live, pods))
                .unwrap_or_default(),
            error: None,
        }
    }

    /// Pods that could not be read, and why.
    pub fn unread(reason: String) -> CellPods {
        CellPods {
            error: Some(reason),
            ..CellPods::default()
        }
    }

    /// What the explanation says of them: the summary, or why they could not be read.
    pub fn line(&self) -> String {
        match &self.error {
            Some(reason) => format!("cannot read pods: {reason}"),
            None => self.summary.clone(),
        }
    }
}
