//! Plan, apply and drift together against the in-memory [`FakeCluster`]: convergence, per
//! cluster failures, pruning, the bounded fan-out and ignore rules.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};

use super::apply::{Outcome, apply, apply_with};
use super::drift::{drift, drift_with};
use super::fake::FakeCluster;
use super::object::resource_of;
use super::planning::{PlanMode, cell_status, plan, plan_with};
use super::targets::{Ignores, Options, Target};
use crate::engine::compare::ignore::IgnoreRule;
use crate::messages::{PlanAction, PlanItem};
use crate::model::{CellStatus, ClusterSpec};

fn config_map(name: &str, ns: &str, color: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns,
            "labels": {"app.kubernetes.io/managed-by": "flotilla"}},
        "data": {"color": color},
    })
}

fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name,
        "labels": {"app.kubernetes.io/managed-by": "flotilla"}}})
}

fn target(name: &str, fake: &Arc<FakeCluster>, objects: Vec<Value>) -> Target<Arc<FakeCluster>> {
    Target {
        cluster: name.into(),
        api: Ok(fake.clone()),
        objects,
        failed: Vec::new(),
        prune_kinds: Vec::new(),
        prune_namespaces: BTreeSet::new(),
        suspended: Vec::new(),
        refuse_unowned: BTreeSet::new(),
        take_over_unowned: BTreeSet::new(),
    }
}

fn quiet(_: usize, _: usize) {}

#[tokio::test]
async fn plan_apply_plan_converges_and_a_dead_cluster_only_fails_itself() {
    let good = Arc::new(FakeCluster::new(Duration::ZERO));
    let dead = Arc::new(FakeCluster {
        unreachable: true,
        ..FakeCluster::default()
    });
    let objects = vec![namespace("shop"), config_map("a", "shop", "blue")];
    let targets = vec![
        target("good", &good, objects.clone()),
        target("dead", &dead, objects),
    ];
    let options = Options::default();
    let plan1 = plan(&targets, PlanMode::DryRun, options, &quiet).await;
    let actions: Vec<(&str, PlanAction)> = plan1
        .iter()
        .map(|i| (i.cluster.as_str(), i.action))
        .collect();
    assert_eq!(
        actions,
        [
            ("good", PlanAction::Create),
            ("good", PlanAction::Create),
            ("dead", PlanAction::Error),
            ("dead", PlanAction::Error)
        ]
    );
    let applied = apply(&targets, false, &BTreeMap::new(), options, &quiet).await;
    assert_eq!(applied[0].result, Outcome::Applied);
    assert_eq!(applied[1].result, Outcome::Applied);
    assert!(applied[2..].iter().all(|i| i.result.is_failure()));
    let plan2 = plan(&targets[..1], PlanMode::DryRun, options, &quiet).await;
    assert!(
        plan2.iter().all(|i| i.action == PlanAction::Unchanged),
        "{plan2:?}"
    );
    let (drift_items, errors) = drift(&targets[..1], options, &quiet).await;
    assert!(drift_items.is_empty() && errors.is_empty());
}

#[tokio::test]
async fn conflicts_unserved_kinds_and_forbidden_clusters_are_per_cluster() {
    let conflicted = Arc::new(FakeCluster::default());
    let cm = config_map("a", "shop", "blue");
    conflicted
        .foreign
        .lock()
        .unwrap()
        .insert(resource_of(&cm), "payments-team".into());
    let mut served = BTreeSet::new();
    served.insert(("v1".to_string(), "Namespace".to_string()));
    let no_configmaps = Arc::new(FakeCluster {
        served,
        ..FakeCluster::default()
    });
    let forbidden = Arc::new(FakeCluster {
        forbidden: true,
        ..FakeCluster::default()
    });
    let objects = vec![namespace("shop"), cm.clone()];
    let targets = vec![
        target("conflicted", &conflicted, objects.clone()),
        target("old", &no_configmaps, objects.clone()),
        target("forbidden", &forbidden, objects),
    ];
    let options = Options::default();
    let items = apply(&targets, false, &BTreeMap::new(), options, &quiet).await;
    let find = |cluster: &str, kind: &str| {
        items
            .iter()
            .find(|i| i.cluster == cluster && i.resource.kind == kind)
            .unwrap()
            .clone()
    };
    let conflict = find("conflicted", "ConfigMap");
    assert_eq!(conflict.result, Outcome::Conflict);
    assert!(conflict.message.contains("payments-team"));
    assert!(
        conflicted
            .lock_objects_for_test()
            .get(&resource_of(&cm))
            .is_none()
    );
    let old = find("old", "ConfigMap");
    assert_eq!(old.result, Outcome::Error);
    assert!(old.message.contains("kind not served"), "{old:?}");
    assert_eq!(find("old", "Namespace").result, Outcome::Applied);
    // The namespace is refused, so nothing else is attempted there.
    assert_eq!(find("forbidden", "Namespace").result, Outcome::Error);
    assert_eq!(find("forbidden", "ConfigMap").result, Outcome::Skipped);
    // Forcing takes the fields.
    let forced = apply(&targets[..1], true, &BTreeMap::new(), options, &quiet).await;
    assert!(
        forced.iter().all(|i| i.result == Outcome::Applied),
        "{forced:?}"
    );
}

#[tokio::test]
async fn prune_lists_only_marked_objects_no_longer_placed() {
    let fake = Arc::new(FakeCluster::default());
    let options = Options::default();
    let old = vec![
        config_map("a", "shop", "blue"),
        config_map("b", "shop", "red"),
    ];
    apply(
        &[target("c", &fake, old)],
        false,
        &BTreeMap::new(),
        options,
        &quiet,
    )
    .await;
    let mut now = target("c", &fake, vec![config_map("a", "shop", "blue")]);
    now.prune_kinds = vec![("v1".into(), "ConfigMap".into())];
    now.prune_namespaces.insert("shop".into());
    let items = plan(
        std::slice::from_ref(&now),
        PlanMode::DryRun,
        options,
        &quiet,
    )
    .await;
    let pruned: Vec<&str> = items
        .iter()
        .filter(|i| i.action == PlanAction::Prune)
        .map(|i| i.resource.name.as_str())
        .collect();
    assert_eq!(pruned, ["b"]);
    let mut confirmed = BTreeMap::new();
    confirmed.insert(
        "c".to_string(),
        vec![resource_of(&config_map("b", "shop", "red"))],
    );
    let applied = apply(
        std::slice::from_ref(&now),
        false,
        &confirmed,
        options,
        &quiet,
    )
    .await;
    assert!(applied.iter().any(|i| i.result == Outcome::Pruned));
    assert_eq!(fake.lock_objects_for_test().len(), 1);
}

#[test]
fn plan_rows_map_to_cell_statuses() {
    let row = |action: PlanAction, message: &str| PlanItem {
        cluster: "c".into(),
        resource: resource_of(&config_map("a", "ns", "x")),
        action,
        diff: String::new(),
        message: message.into(),
        health: None,
    };
    assert_eq!(
        cell_status(&row(PlanAction::Create, "")),
        CellStatus::Pending
    );
    assert_eq!(
        cell_status(&row(PlanAction::Unchanged, "")),
        CellStatus::InSync
    );
    assert_eq!(
        cell_status(&row(
            PlanAction::Conflict,
            "conflict with kubectl: Apply failed: conflict with \"kubectl\" using v1"
        )),
        CellStatus::Conflict("kubectl".into())
    );
    assert_eq!(
        cell_status(&row(PlanAction::Error, "unreachable: connection refused")),
        CellStatus::Unreachable
    );
    assert_eq!(
        cell_status(&row(PlanAction::Error, "kind not served: x/v1 W")),
        CellStatus::Failed("kind not served: x/v1 W".into())
    );
}

#[tokio::test(start_paused = true)]
async fn fan_out_is_bounded_and_a_slow_cluster_times_out_alone() {
    let rtt = Duration::from_millis(50);
    let mut targets: Vec<Target<Arc<FakeCluster>>> = (0..64)
        .map(|i| {
            target(
                &format!("m{i}"),
                &Arc::new(FakeCluster::new(rtt)),
                vec![config_map("a", "default", "x")],
            )
        })
        .collect();
    let slow = Arc::new(FakeCluster::new(Duration::from_secs(3600)));
    targets.push(target("slow", &slow, vec![config_map("a", "default", "x")]));
    let options = Options {
        concurrency: 16,
        cluster_timeout: Duration::from_secs(5),
        ..Options::default()
    };
    let started = tokio::time::Instant::now();
    let items = apply(&targets, false, &BTreeMap::new(), options, &quiet).await;
    let took = started.elapsed();
    // 65 clusters / 16 at a time = 5 rounds of 50 ms, with the slow one's 5 s overlapping.
    assert!(took <= Duration::from_millis(5_300), "{took:?}");
    assert_eq!(
        items
            .iter()
            .filter(|i| i.result == Outcome::Applied)
            .count(),
        64
    );
    let slow_item = items.iter().find(|i| i.cluster == "slow").unwrap();
    assert!(slow_item.message.contains("unreachable"), "{slow_item:?}");
    assert_eq!(slow.requests.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn ignored_fields_are_not_drift_not_updates_and_not_reverted() {
    let fake = Arc::new(FakeCluster::new(Duration::ZERO));
    let desired = config_map("a", "shop", "blue");
    let targets = vec![target("east", &fake, vec![desired.clone()])];
    let options = Options::default();
    let applied = apply(&targets, false, &BTreeMap::new(), options, &quiet).await;
    assert!(applied.iter().all(|i| i.result == Outcome::Applied));
    // Someone changes the colour on the cluster.
    let resource = resource_of(&desired);
    *fake
        .lock_objects_for_test()
        .get_mut(&resource)
        .unwrap()
        .pointer_mut("/data/color")
        .unwrap() = json!("red");
    let (drifted, _) = drift(&targets, options, &quiet).await;
    assert_eq!(drifted.len(), 1, "without a rule the change is drift");

    let rule_text = "apiVersion: flotilla.dev/v1alpha1\nkind: DriftIgnore\nmetadata: {name: colour}\nspec:\n  resources: [{kind: ConfigMap, namespace: shop, name: a}]\n  paths: [/data/color]\n";
    let (docs, _) = crate::engine::document::parse::parse_files(&[crate::engine::SourceFile {
        path: "i.yaml".into(),
        text: rule_text.into(),
    }]);
    let rule = IgnoreRule::parse(&docs[0], &[]).unwrap();
    let east = ClusterSpec {
        name: "east".into(),
        ..ClusterSpec::default()
    };
    let ignores = Ignores::new(&[rule], &[east]);
    let (drifted, errors) = drift_with(&targets, options, &ignores, &quiet).await;
    assert!(drifted.is_empty() && errors.is_empty(), "{drifted:?}");
    let planned = plan_with(&targets, PlanMode::DryRun, options, &ignores, &quiet).await;
    assert_eq!(planned[0].action, PlanAction::Unchanged, "{planned:?}");
    let planned = plan(&targets, PlanMode::DryRun, options, &quiet).await;
    assert_eq!(
        planned[0].action,
        PlanAction::Update,
        "without the rule: {planned:?}"
    );
    let applied = apply_with(&targets, false, &BTreeMap::new(), options, &ignores, &quiet).await;
    assert!(applied.iter().all(|i| i.result == Outcome::Applied));
    let objects = fake.lock_objects_for_test();
    assert_eq!(
        objects[&resource]["data"]["color"], "red",
        "apply must not revert it"
    );
}

fn secret(password: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "db", "namespace": "shop",
            "labels": {"app.kubernetes.io/managed-by": "flotilla"}},
        "stringData": {"password": password},
    })
}

#[tokio::test]
async fn secret_values_never_reach_a_plan_a_prune_or_drift_output() {
    use base64::Engine as _;
    let b64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    let leaks = |text: &str| {
        ["hunter2", "letmein"]
            .iter()
            .any(|v| text.contains(v) || text.contains(&b64(v)))
    };
    let fake = Arc::new(FakeCluster::new(Duration::ZERO));
    let options = Options::default();
    let targets = vec![target("east", &fake, vec![secret("hunter2")])];
    let planned = plan(&targets, PlanMode::DryRun, options, &quiet).await;
    assert_eq!(planned[0].action, PlanAction::Create, "{planned:?}");
    assert!(planned[0].diff.contains("***"), "{}", planned[0].diff);
    assert!(!leaks(&planned[0].diff), "{}", planned[0].diff);
    apply(&targets, false, &BTreeMap::new(), options, &quiet).await;

    // The password is changed on the cluster: an update to plan, and drift.
    let resource = resource_of(&secret("hunter2"));
    fake.lock_objects_for_test()
        .get_mut(&resource)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .insert("data".into(), json!({"password": b64("letmein")}));
    let planned = plan(&targets, PlanMode::DryRun, options, &quiet).await;
    assert_eq!(planned[0].action, PlanAction::Update, "{planned:?}");
    assert!(
        planned[0].diff.contains("*** (changed)"),
        "{}",
        planned[0].diff
    );
    assert!(!leaks(&planned[0].diff), "{}", planned[0].diff);

    let (drifted, _) = drift(&targets, options, &quiet).await;
    let field = &drifted[0].fields[0];
    assert_eq!(field.path, "/data/password");
    assert!(field.secret);
    assert_eq!(
        field.live,
        json!(b64("letmein")),
        "a repair still has the value"
    );
    let shown = serde_json::to_value(&drifted).unwrap();
    assert_eq!(shown[0]["fields"][0]["desired"], "*** (changed)");
    assert_eq!(shown[0]["fields"][0]["live"], "***");
    assert!(!leaks(&shown.to_string()), "{shown}");
    let summary = crate::backend::cells::drift_summary(&drifted[0].fields).unwrap();
    assert!(!leaks(&summary), "{summary}");

    // No longer placed: the prune row lists the object without its values.
    let mut now = target("east", &fake, Vec::new());
    now.prune_kinds = vec![("v1".into(), "Secret".into())];
    now.prune_namespaces.insert("shop".into());
    let planned = plan(
        std::slice::from_ref(&now),
        PlanMode::DryRun,
        options,
        &quiet,
    )
    .await;
    let pruned = planned
        .iter()
        .find(|i| i.action == PlanAction::Prune)
        .unwrap();
    assert!(!leaks(&pruned.diff), "{}", pruned.diff);
}

#[tokio::test]
async fn a_cluster_fatal_answer_stops_the_rest_of_its_phase_unsent() {
    let forbidden = Arc::new(FakeCluster {
        forbidden: true,
        ..FakeCluster::default()
    });
    let objects: Vec<Value> = (0..20)
        .map(|n| config_map(&format!("cm-{n}"), "shop", "blue"))
        .collect();
    let targets = vec![target("forbidden", &forbidden, objects)];
    let mut options = Options::default();
    options.limits.in_flight = 1;
    let items = apply(&targets, false, &BTreeMap::new(), options, &quiet).await;
    assert_eq!(items.len(), 20);
    assert_eq!(items[0].result, Outcome::Error);
    assert!(
        items[1..]
            .iter()
            .all(|i| i.result == Outcome::Skipped
                && i.message.starts_with("not attempted: forbidden")),
        "{items:?}"
    );
    assert_eq!(
        forbidden.requests.load(Ordering::Relaxed),
        1,
        "one request sent"
    );
}

/// Follows the object watcher's `allowUpdate` upstream: Karmada takes over an object the
/// member already has only when it carries `karmada.io/managed: "true"` or the policy (or
/// template annotation) says Overwrite; `suspension` keeps objects from the member.
#[tokio::test]
async fn plan_flags_what_karmada_would_refuse_to_adopt_and_holds_suspended_objects() {
    use crate::engine::{SourceFile, load_fleet};
    let policy = |name: &str, spec: &str| {
        format!(
            "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  resourceSelectors: [{{apiVersion: v1, kind: ConfigMap, name: {name}}}]\n{spec}---\n"
        )
    };
    let mut text = String::from(
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: east}\n---\n",
    );
    for name in ["refused", "overwritten", "annotated", "karmadas", "held"] {
        let annotations = if name == "annotated" {
            ", annotations: {work.karmada.io/conflict-resolution: overwrite}"
        } else {
            ""
        };
        text.push_str(&format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: shop{annotations}}}\ndata: {{color: blue}}\n---\n"
        ));
    }
    text.push_str(&policy("refused", ""));
    text.push_str(&policy("overwritten", "  conflictResolution: Overwrite\n"));
    text.push_str(&policy("annotated", ""));
    text.push_str(&policy("karmadas", ""));
    text.push_str(&policy("held", "  suspension: {dispatching: true}\n"));
    let (fleet, errors) = load_fleet(&[SourceFile {
        path: "fleet.yaml".into(),
        text,
    }]);
    assert!(errors.is_empty(), "{errors:?}");
    let fake = Arc::new(FakeCluster::default());
    {
        let mut objects = fake.lock_objects_for_test();
        for name in ["refused", "overwritten", "annotated", "karmadas", "held"] {
            let mut live = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "shop"}, "data": {"color": "red"}});
            if name == "karmadas" {
                live["metadata"]["labels"] = json!({"karmada.io/managed": "true"});
            }
            if name == "held" {
                live["metadata"]["labels"] = json!({"app.kubernetes.io/managed-by": "flotilla"});
            }
            objects.insert(resource_of(&live), live);
        }
    }
    let wanted = super::targets::desired(&fleet, 0, 0..fleet.resources.len(), true);
    let mut east = target("east", &fake, wanted.objects);
    east.suspended = wanted.suspended;
    east.refuse_unowned = wanted.refuse_unowned;
    east.take_over_unowned = wanted.take_over_unowned;
    east.prune_kinds = vec![("v1".into(), "ConfigMap".into())];
    east.prune_namespaces.insert("shop".into());
    let items = plan(
        std::slice::from_ref(&east),
        PlanMode::DryRun,
        Options::default(),
        &quiet,
    )
    .await;
    let of = |name: &str| -> Vec<&PlanItem> {
        items
            .iter()
            .filter(|i| i.resource.name == name && i.resource.kind == "ConfigMap")
            .collect()
    };
    let refused = of("refused");
    assert_eq!(refused.len(), 1, "{items:#?}");
    assert_eq!(refused[0].action, PlanAction::Conflict);
    assert!(
        refused[0]
            .message
            .starts_with("Karmada would refuse to adopt it (conflictResolution: Abort)"),
        "{}",
        refused[0].message
    );
    for name in ["overwritten", "annotated", "karmadas"] {
        assert_eq!(of(name)[0].action, PlanAction::Update, "{name}: {items:#?}");
    }
    // Apply refuses the same object, reported, and writes nothing to it; Overwrite takes
    // its object over.
    let applied = apply(
        std::slice::from_ref(&east),
        false,
        &BTreeMap::new(),
        Options::default(),
        &quiet,
    )
    .await;
    let outcome = |name: &str| {
        applied
            .iter()
            .find(|i| i.resource.name == name && i.resource.kind == "ConfigMap")
            .unwrap_or_else(|| panic!("{name} not reported: {applied:#?}"))
    };
    assert_eq!(outcome("refused").result, Outcome::Conflict);
    assert!(
        outcome("refused")
            .message
            .starts_with("not taken over: Karmada would refuse to adopt it"),
        "{}",
        outcome("refused").message
    );
    for name in ["overwritten", "annotated", "karmadas"] {
        assert_eq!(outcome(name).result, Outcome::Applied, "{name}");
    }
    {
        let objects = fake.lock_objects_for_test();
        let color = |name: &str| {
            objects
                .iter()
                .find(|(r, _)| r.name == name && r.kind == "ConfigMap")
                .map(|(_, o)| o["data"]["color"].clone())
        };
        assert_eq!(color("refused"), Some(json!("red")));
        assert_eq!(color("overwritten"), Some(json!("blue")));
    }
    let held = of("held");
    assert_eq!(
        held.len(),
        1,
        "held back, never a prune candidate: {items:#?}"
    );
    assert_eq!(held[0].action, PlanAction::Unchanged);
    assert!(
        matches!(cell_status(held[0]), CellStatus::Suspended(ref why) if why.contains("suspension.dispatching")),
        "{:?}",
        cell_status(held[0])
    );
}
