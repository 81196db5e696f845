//! A custom kind with a fleet's Karmada interpreter (`GetReplicas`, `ReviseReplica`) is
//! divided as Karmada divides it: its replicas are what `GetReplicas` reads, each cluster's
//! share is what the same policy gives a Deployment of as many replicas (the division
//! checked against Karmada), and `ReviseReplica` writes that share into the object.

use flotilla::engine::{Decision, SourceFile, load_fleet};
use proptest::prelude::*;

const CUSTOMIZATION: &str = "\
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: cloneset}
spec:
  target: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet}
  customizations:
    replicaResource:
      luaScript: |
        local kube = require('kube')
        function GetReplicas(obj)
          return obj.spec.size, kube.accuratePodRequirements(obj.spec.template)
        end
    replicaRevision:
      luaScript: |
        function ReviseReplica(obj, desired)
          obj.spec.size = desired
          return obj
        end
---
";

fn clusters(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {{name: m{i}, labels: {{w: \"{i}\"}}}}\n---\n"
            )
        })
        .collect()
}

fn policy(kind: &str, weights: &[i64]) -> String {
    let list: String = weights
        .iter()
        .enumerate()
        .map(|(i, w)| {
            format!("        - {{targetCluster: {{clusterNames: [m{i}]}}, weight: {w}}}\n")
        })
        .collect();
    format!(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: p-{kind}, namespace: s}}\nspec:\n  resourceSelectors: [{{apiVersion: {}, kind: {kind}}}]\n  placement:\n    replicaScheduling:\n      replicaSchedulingType: Divided\n      weightPreference:\n        staticWeightList:\n{list}---\n",
        if kind == "CloneSet" {
            "apps.kruise.io/v1alpha1"
        } else {
            "apps/v1"
        }
    )
}

/// Each cluster's replicas for the resource of `kind`, and the objects' replica fields.
fn shares(text: &str, kind: &str, clusters: usize) -> Vec<Option<i64>> {
    let (fleet, errors) = load_fleet(&[SourceFile {
        path: "f.yaml".into(),
        text: text.into(),
    }]);
    assert!(errors.is_empty(), "{errors:?}");
    let row = fleet
        .resources
        .iter()
        .position(|r| r.target.kind == kind)
        .expect("the resource");
    (0..clusters)
        .map(|c| match fleet.decide(row, c) {
            Decision::Placed { object, replicas } => {
                let field = if kind == "CloneSet" {
                    "/spec/size"
                } else {
                    "/spec/replicas"
                };
                assert_eq!(object.pointer(field).and_then(|v| v.as_i64()), replicas);
                replicas
            }
            _ => None,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn a_custom_kind_is_divided_as_a_deployment_of_as_many_replicas(
        total in 0i64..40,
        weights in proptest::collection::vec(1i64..6, 1..5),
    ) {
        let n = weights.len();
        let text = format!(
            "{CUSTOMIZATION}{}{}{}apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {{name: web, namespace: s}}\nspec:\n  size: {total}\n  template: {{spec: {{containers: [{{name: w, image: x}}]}}}}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: s}}\nspec:\n  replicas: {total}\n  template: {{spec: {{containers: [{{name: w, image: x}}]}}}}\n",
            clusters(n),
            policy("CloneSet", &weights),
            policy("Deployment", &weights),
        );
        let custom = shares(&text, "CloneSet", n);
        let deployment = shares(&text, "Deployment", n);
        prop_assert_eq!(&custom, &deployment);
        let placed: i64 = custom.iter().flatten().sum();
        prop_assert_eq!(placed, total);
    }
}

#[test]
fn without_an_interpreter_a_custom_kind_goes_whole_to_every_cluster() {
    let text = format!(
        "{}{}apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {{name: web, namespace: s}}\nspec: {{size: 6}}\n",
        clusters(2),
        policy("CloneSet", &[1, 1]),
    );
    let (fleet, errors) = load_fleet(&[SourceFile {
        path: "f.yaml".into(),
        text,
    }]);
    assert!(errors.is_empty(), "{errors:?}");
    for c in 0..2 {
        match fleet.decide(0, c) {
            Decision::Placed { object, replicas } => {
                assert_eq!(replicas, None);
                assert_eq!(object["spec"]["size"], 6);
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_get_replicas_that_fails_keeps_the_template_back_and_says_why() {
    let broken = CUSTOMIZATION.replace("return obj.spec.size,", "return obj.spec.missing.size,");
    let text = format!(
        "{broken}{}{}apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {{name: web, namespace: s}}\nspec: {{size: 6}}\n",
        clusters(2),
        policy("CloneSet", &[1, 1]),
    );
    let (fleet, errors) = load_fleet(&[SourceFile {
        path: "f.yaml".into(),
        text,
    }]);
    assert!(errors.is_empty(), "{errors:?}");
    let row = fleet
        .resources
        .iter()
        .position(|r| r.target.kind == "CloneSet")
        .expect("row");
    match fleet.decide(row, 0) {
        Decision::NotPlaced { reason } => {
            assert!(
                reason.starts_with("GetReplicas (f.yaml:8) failed"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }
}
