#![allow(clippy::unwrap_used)]
//! The embedded demo fleet loads cleanly and shows what the demo promises.

use std::collections::BTreeSet;

use flotilla::demo_fleet::demo_files;
use flotilla::engine::{Decision, load_fleet};
use flotilla::model::Dialect;

#[test]
fn demo_fleet_loads_without_errors_and_has_the_promised_shape() {
    let (fleet, errors) = load_fleet(&demo_files());
    assert!(errors.is_empty(), "demo fleet errors: {errors:#?}");
    assert!(
        fleet.clusters.len() >= 14,
        "{} clusters",
        fleet.clusters.len()
    );
    let placed_somewhere: Vec<usize> = (0..fleet.resources.len())
        .filter(|&r| (0..fleet.clusters.len()).any(|c| fleet.is_placed(r, c)))
        .collect();
    assert!(
        placed_somewhere.len() >= 15,
        "{} federated resources placed",
        placed_somewhere.len()
    );
    let kinds: BTreeSet<&str> = placed_somewhere
        .iter()
        .map(|&r| fleet.resources[r].target.kind.as_str())
        .collect();
    assert!(kinds.len() >= 4, "{kinds:?}");
    let dialects: BTreeSet<Dialect> = placed_somewhere
        .iter()
        .map(|&r| fleet.resources[r].dialect)
        .collect();
    assert_eq!(dialects.len(), 2);
    let gpu = fleet.cluster_index("gpu-us-east-1").unwrap();
    let kept_off: Vec<String> = (0..fleet.resources.len())
        .filter_map(|r| match fleet.decide(r, gpu) {
            Decision::NotPlaced { reason }
                if reason == "taint dedicated=gpu:NoSchedule not tolerated" =>
            {
                Some(fleet.resources[r].target.display_key())
            }
            _ => None,
        })
        .collect();
    assert!(!kept_off.is_empty(), "the gpu taint keeps nothing off");
}
