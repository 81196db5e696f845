//! How the demo's simulated clusters behave: who is down or not Ready, which versions and
//! latencies they have, which applies fail, what is pending or drifted at the start and how
//! often drift appears; the embedded demo fleet's scenario and one for synthetic fleets. And
//! the tiny deterministic random generator the simulation draws from. Data only; it must not
//! simulate anything.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::model::ClusterSpec;

/// How the simulated clusters of the embedded demo fleet behave.
const DEMO_SCENARIO: &str = include_str!("../../../testdata/demo-scenario.yaml");

/// How simulated clusters behave: who is down, what fails, how drift appears.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    /// Clusters that never answer.
    #[serde(default)]
    pub unreachable: Vec<String>,
    /// Clusters that answer but report not Ready.
    #[serde(default)]
    pub not_ready: Vec<String>,
    /// Kubernetes version per cluster; `default` for the rest.
    #[serde(default)]
    pub versions: BTreeMap<String, String>,
    /// Round-trip latency in milliseconds per region; `default` for the rest.
    #[serde(default)]
    pub latency_ms_by_region: BTreeMap<String, u64>,
    /// Applies that fail, with the API error the cluster answers.
    #[serde(default)]
    pub failures: Vec<ScenarioFailure>,
    /// Resources (KIND/NS/NAME) that are placed but not applied yet when the demo starts.
    #[serde(default)]
    pub pending: Vec<String>,
    /// Drift present when the demo starts.
    #[serde(default)]
    pub drift: Vec<ScenarioDrift>,
    /// Mean seconds between new drift events; 0 turns drift over time off.
    #[serde(default)]
    pub drift_every_seconds: u64,
    /// Workloads in sync whose rollout stalled: 1 of their replicas available and the
    /// progress deadline exceeded, so their live health is Degraded.
    #[serde(default)]
    pub degraded: Vec<ScenarioCell>,
    /// Workloads one of whose pods is in trouble: `CrashLoopBackOff`, `OOMKilled` (restarted
    /// after it) or `Pending` (unschedulable, with the scheduler's `message`).
    #[serde(default)]
    pub pods: Vec<ScenarioPod>,
    /// Workloads whose pods on a cluster still run an older tag of their image.
    #[serde(default)]
    pub old_images: Vec<ScenarioImage>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioPod {
    pub cluster: String,
    pub resource: String,
    pub state: SimPodState,
    #[serde(default)]
    pub message: String,
}

/// The trouble a simulated pod is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum SimPodState {
    CrashLoopBackOff,
    OOMKilled,
    Pending,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioImage {
    pub cluster: String,
    pub resource: String,
    /// The tag the pods run instead of the desired one.
    pub tag: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioCell {
    pub cluster: String,
    pub resource: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioFailure {
    pub cluster: String,
    pub resource: String,
    pub message: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioDrift {
    pub cluster: String,
    pub resource: String,
    pub path: String,
    pub live: Value,
    pub manager: String,
}

impl Scenario {
    /// The embedded demo fleet's scenario.
    pub fn demo() -> Scenario {
        // The file ships inside the binary and a unit test parses it, so this cannot fail at run time.
        serde_saphyr::from_str(DEMO_SCENARIO).unwrap_or_default()
    }

    /// The scenario a simulated fleet runs: the embedded demo fleet's, or, for a synthetic
    /// fleet (`--demo-scale`), one drawn from the seed.
    pub fn for_demo(clusters: &[ClusterSpec], synthetic: bool, seed: u64) -> Scenario {
        if synthetic {
            Scenario::synthetic(clusters, seed)
        } else {
            Scenario::demo()
        }
    }

    /// A scenario for a synthetic fleet: about one cluster in 200 unreachable and one in 250 not
    /// Ready (at least one of each), one failing cell per 100 resources, drift over time.
    pub fn synthetic(clusters: &[ClusterSpec], seed: u64) -> Scenario {
        let mut rng = SplitMix64::new(seed ^ 0x5eed);
        let mut pick = |count: usize| -> Vec<String> {
            (0..count)
                .map(|_| clusters[rng.below(clusters.len())].name.clone())
                .collect()
        };
        let unreachable = pick((clusters.len() / 200).max(1));
        let not_ready = pick((clusters.len() / 250).max(1));
        Scenario {
            unreachable,
            not_ready,
            drift_every_seconds: 2,
            ..Scenario::default()
        }
    }
}

/// A tiny deterministic PRNG (SplitMix64): enough for simulation, no crate needed.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`0` when `bound` is 0).
    pub fn below(&mut self, bound: usize) -> usize {
        if bound == 0 {
            return 0;
        }
        (self.next_u64() % bound as u64) as usize
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_scenario_parses() {
        let scenario: Scenario = serde_saphyr::from_str(DEMO_SCENARIO).unwrap();
        assert!(!scenario.unreachable.is_empty());
        assert!(!scenario.not_ready.is_empty());
        assert!(!scenario.failures.is_empty());
        assert_eq!(scenario.pods.len(), 3);
        assert_eq!(scenario.old_images.len(), 2);
    }
}
