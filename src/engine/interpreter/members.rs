//! A Karmada binding's per-member record (`status.aggregatedStatus`: each member's collected
//! status, whether its Work applied, and the health Karmada judged) held against what flotilla
//! read on the same member: the status Karmada would collect from the member's live object now
//! (this room's reflection), whether the member holds the object, and flotilla's health of it
//! in Karmada's words. Where the two differ the record is flagged, field by field. It reads
//! objects handed to it; it must not read a cluster nor decide what is shown.

use serde_json::Value;

use super::Interpreters;
use super::status::{StatusItem, same_status};
use crate::engine::health::lua::Limits;
use crate::model::HealthKind;

/// One member's item as Karmada recorded it, beside flotilla's read of the member.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MemberCheck {
    #[serde(rename = "clusterName")]
    pub cluster: String,
    /// The status Karmada collected from the member; absent when it collected none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Value>,
    pub applied: bool,
    #[serde(rename = "appliedMessage", skip_serializing_if = "String::is_empty")]
    pub applied_message: String,
    /// `Healthy`, `Unhealthy` or `Unknown`, as Karmada judged it; empty when it did not.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub health: String,
    /// What flotilla read on the member; absent when it did not read it (not placed there
    /// by flotilla's reading, or unreachable).
    #[serde(rename = "flotilla", skip_serializing_if = "Option::is_none")]
    pub read: Option<MemberRead>,
    /// Where Karmada's record and flotilla's read differ: `applied`, `health`, `status`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differs: Vec<&'static str>,
}

/// What flotilla read on one member, in the terms of Karmada's record.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MemberRead {
    /// Whether the member holds the object.
    pub applied: bool,
    /// What Karmada would collect from the member's object now (`ReflectStatus`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Value>,
    /// Why the collection failed, naming the rule.
    #[serde(rename = "statusError", skip_serializing_if = "Option::is_none")]
    pub status_error: Option<String>,
    /// flotilla's health of the member's object in Karmada's words (`Healthy`, `Unhealthy`,
    /// `Unknown`); absent for a kind without health, or one Karmada's words do not fit (a
    /// suspended workload).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<&'static str>,
}

/// flotilla's health in Karmada's three words: a rollout under way is Unhealthy to Karmada,
/// as a failure is; a suspended object and one the member does not hold have no word here.
pub fn karmada_health(kind: HealthKind) -> Option<&'static str> {
    match kind {
        HealthKind::Healthy => Some("Healthy"),
        HealthKind::Degraded | HealthKind::Progressing => Some("Unhealthy"),
        HealthKind::Unknown => Some("Unknown"),
        HealthKind::Suspended | HealthKind::Missing => None,
    }
}

impl Interpreters {
    /// Each item of a binding's `aggregatedStatus` (`recorded`, Go's JSON) held against
    /// flotilla's reads of the members (`reads`: each member read and answered, with its live
    /// object, `None` when it does not hold it), in the binding's order. Collection runs this
    /// room's `ReflectStatus` (held to `limits`); health is the health engine's.
    pub fn check_members(
        &self,
        recorded: &[Value],
        reads: &[(&str, Option<&Value>)],
        limits: Limits,
    ) -> Vec<MemberCheck> {
        recorded
            .iter()
            .map(|raw| {
                let item = StatusItem::from_json(raw);
                let read = reads
                    .iter()
                    .find(|(cluster, _)| *cluster == item.cluster)
                    .map(|(_, live)| self.read_member(*live, limits));
                let differs = read
                    .as_ref()
                    .map(|read| differences(&item, read))
                    .unwrap_or_default();
                MemberCheck {
                    cluster: item.cluster,
                    status: item.status,
                    applied: item.applied,
                    applied_message: item.applied_message,
                    health: item.health,
                    read,
                    differs,
                }
            })
            .collect()
    }

    fn read_member(&self, live: Option<&Value>, limits: Limits) -> MemberRead {
        let Some(object) = live else {
            return MemberRead {
                applied: false,
                status: None,
                status_error: None,
                health: None,
            };
        };
        let (status, status_error) = match self.reflect_status_within(object, limits) {
            Ok(status) => (status, None),
            Err(error) => (None, Some(error.to_string())),
        };
        MemberRead {
            applied: true,
            status,
            status_error,
            health: crate::engine::health::assess(object).and_then(|h| karmada_health(h.kind)),
        }
    }
}

/// The fields where Karmada's record and flotilla's read differ. Health counts only where
/// both gave a verdict (`Healthy` or `Unhealthy`); status only where flotilla could collect.
fn differences(item: &StatusItem, read: &MemberRead) -> Vec<&'static str> {
    let mut differs = Vec::new();
    if item.applied != read.applied {
        differs.push("applied");
    }
    let verdict = |word: &str| matches!(word, "Healthy" | "Unhealthy");
    if let Some(ours) = read.health
        && verdict(ours)
        && verdict(&item.health)
        && ours != item.health
    {
        differs.push("health");
    }
    let empty = Value::Object(serde_json::Map::new());
    if read.status_error.is_none()
        && !same_status(
            item.status.as_ref().unwrap_or(&empty),
            read.status.as_ref().unwrap_or(&empty),
        )
    {
        differs.push("status");
    }
    differs
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(ready: i64) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "namespace": "shop", "generation": 1,
                            "annotations": {"resourcetemplate.karmada.io/generation": "1"}},
               "spec": {"replicas": 2},
               "status": {"replicas": 2, "readyReplicas": ready, "availableReplicas": ready,
                          "updatedReplicas": 2, "observedGeneration": 1}})
    }

    #[test]
    fn a_record_that_matches_the_member_is_unflagged_and_each_difference_is_named() {
        let interpreters = Interpreters::default();
        let east = deployment(2);
        let collected = interpreters
            .reflect_status(&east)
            .unwrap()
            .expect("a Deployment's status is collected");
        let recorded = vec![
            json!({"clusterName": "east", "status": collected, "applied": true, "health": "Healthy"}),
            json!({"clusterName": "west", "status": collected, "applied": true, "health": "Healthy"}),
            json!({"clusterName": "north", "applied": false, "appliedMessage": "conflict"}),
        ];
        let west = deployment(1);
        let checks = interpreters.check_members(
            &recorded,
            &[("east", Some(&east)), ("west", Some(&west))],
            Limits::default(),
        );
        assert_eq!(checks.len(), 3);
        assert_eq!(checks[0].cluster, "east");
        assert!(checks[0].differs.is_empty(), "{:?}", checks[0]);
        assert_eq!(checks[0].read.as_ref().unwrap().health, Some("Healthy"));
        // West has one replica short: flotilla reads it Progressing (Unhealthy) and collects
        // another status than the hub recorded.
        assert_eq!(checks[1].differs, vec!["health", "status"]);
        // North: flotilla did not read it, so nothing is compared.
        assert!(checks[2].read.is_none() && checks[2].differs.is_empty());
        assert_eq!(checks[2].applied_message, "conflict");
        // A member the hub says applied that holds nothing.
        let gone = interpreters.check_members(&recorded[..1], &[("east", None)], Limits::default());
        assert_eq!(gone[0].differs, vec!["applied", "status"]);
        let json = serde_json::to_value(&gone[0]).unwrap();
        assert_eq!(json["flotilla"], json!({"applied": false}));
        assert_eq!(json["differs"], json!(["applied", "status"]));
    }
}
