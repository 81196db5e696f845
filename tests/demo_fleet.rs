#![allow(clippy::unwrap_used)]
//! The embedded demo fleet loads cleanly and shows what the demo promises.

use std::collections::BTreeSet;

use flotilla::engine::edit::drift_repair::{
    Chosen, adopt_changes, changed_lines, ignore_changes, remove_rule_change,
};
use flotilla::engine::{Decision, Fleet, SourceFile, load_fleet};
use flotilla::fleet::demo::demo_files;
use flotilla::model::Dialect;
use flotilla::model::ResourceRef;
use serde_json::Value;

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

// Drift repair edits of the demo fleet (engine::edit::drift_repair).
fn demo() -> (Fleet, Vec<SourceFile>) {
    let files = demo_files();
    let (fleet, errors) = load_fleet(&files);
    assert!(errors.is_empty(), "{errors:?}");
    (fleet, files)
}

fn inventory() -> ResourceRef {
    ResourceRef {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        namespace: Some("shop".into()),
        name: "inventory".into(),
    }
}

#[test]
fn an_ignore_rule_is_appended_loads_and_can_be_removed_again() {
    let (fleet, files) = demo();
    let chosen = [Chosen {
        cluster: "prod-us-east-2".into(),
        resource: inventory(),
        path: "/spec/replicas".into(),
        live: Value::from(9),
    }];
    let (change, names) = ignore_changes(&fleet, &files, &chosen).unwrap();
    assert_eq!(change.path, "demo/flotilla-ignore.yaml");
    assert_eq!(names, ["ignore-deployment-inventory"]);
    let mut edited = files.clone();
    edited.push(SourceFile {
        path: change.path.clone(),
        text: change.new.clone(),
    });
    let (with_rule, errors) = load_fleet(&edited);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(with_rule.ignores.len(), fleet.ignores.len() + 1);
    let removal = remove_rule_change(&with_rule, &edited, &names[0]).unwrap();
    assert!(!removal.new.contains("ignore-deployment-inventory"));
    assert!(changed_lines(&removal).iter().all(|l| l.starts_with("- ")));
}

#[test]
fn adopting_writes_an_override_that_renders_the_live_value() {
    let (fleet, files) = demo();
    let chosen = [Chosen {
        cluster: "prod-us-east-2".into(),
        resource: inventory(),
        path: "/spec/replicas".into(),
        live: Value::from(9),
    }];
    let changes = adopt_changes(&fleet, &files, &chosen).unwrap();
    assert!(!changes.is_empty());
    let mut edited = files.clone();
    for change in &changes {
        match edited.iter_mut().find(|f| f.path == change.path) {
            Some(file) => file.text = change.new.clone(),
            None => edited.push(SourceFile {
                path: change.path.clone(),
                text: change.new.clone(),
            }),
        }
    }
    let (after, errors) = load_fleet(&edited);
    assert!(errors.is_empty(), "{errors:?}");
    let row = after
        .resources
        .iter()
        .position(|r| r.target == inventory())
        .unwrap();
    let column = after.cluster_index("prod-us-east-2").unwrap();
    let Decision::Placed { object, .. } = after.decide(row, column) else {
        panic!("still placed");
    };
    assert_eq!(object.pointer("/spec/replicas"), Some(&Value::from(9)));
}
