//! A fleet's Karmada `ResourceInterpreterCustomization`s as an operator meets them: read
//! from the fleet directory and checked as Karmada's webhook checks them (a script that does
//! not compile or a second script for one operation is an input error with file, line and
//! field, exit 2), and their `InterpretHealth` deciding health after the operator's Argo CD
//! rules and before the built-ins, named in the verdict.

use std::process::Command;

use flotilla::engine::health::Rules;
use flotilla::engine::health::rules::Layer;
use flotilla::engine::{SourceFile, load_fleet};
use flotilla::model::HealthKind;
use serde_json::json;

const CUSTOMIZATION: &str = "\
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: cloneset
spec:
  target:
    apiVersion: apps.kruise.io/v1alpha1
    kind: CloneSet
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(obj)
          return obj.status ~= nil and obj.status.readyReplicas == obj.spec.replicas
        end
";

fn cloneset(ready: i64) -> serde_json::Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
           "metadata": {"name": "web", "namespace": "shop"},
           "spec": {"replicas": 3}, "status": {"readyReplicas": ready}})
}

#[test]
fn interpret_health_decides_a_custom_kind_and_names_its_file_and_line() {
    let (fleet, errors) = load_fleet(&[SourceFile {
        path: "fleet/interpreters.yaml".into(),
        text: CUSTOMIZATION.into(),
    }]);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        fleet.resources.is_empty(),
        "a customization is never propagated"
    );
    let rules = Rules::builtin();
    assert!(
        rules.assess(&cloneset(3)).is_none(),
        "no health before the fleet's interpreters"
    );
    rules.use_fleet_layer(Some(fleet.interpreters.health_layer()));
    let healthy = rules.assess(&cloneset(3)).expect("a health");
    assert_eq!(healthy.kind, HealthKind::Healthy);
    assert_eq!(
        healthy.rule.as_deref(),
        Some("apps.kruise.io/CloneSet (karmada interpreter, fleet/interpreters.yaml:11)")
    );
    let unhealthy = rules.assess(&cloneset(1)).expect("a health");
    assert_eq!(unhealthy.kind, HealthKind::Degraded);
    assert!(
        unhealthy.reason.contains("Unhealthy"),
        "{}",
        unhealthy.reason
    );
    // Another version of the kind is not the target's, as Karmada matches exactly.
    let mut other = cloneset(3);
    other["apiVersion"] = json!("apps.kruise.io/v1beta1");
    assert!(rules.assess(&other).is_none());
}

#[test]
fn an_argo_cd_rule_for_the_kind_comes_before_the_fleets_interpreter() {
    let (fleet, _) = load_fleet(&[SourceFile {
        path: "fleet/interpreters.yaml".into(),
        text: CUSTOMIZATION.into(),
    }]);
    let scripts = vec![(
        "apps.kruise.io/CloneSet/health.lua".to_string(),
        "return {status = \"Suspended\", message = \"argo\"}".to_string(),
    )];
    let rules = Rules::with_layers(vec![Layer::directory("rules", &scripts).expect("rules")]);
    rules.use_fleet_layer(Some(fleet.interpreters.health_layer()));
    let health = rules.assess(&cloneset(3)).expect("a health");
    assert_eq!(health.kind, HealthKind::Suspended);
    assert!(
        health
            .rule
            .as_deref()
            .is_some_and(|r| r.contains("argocd rules")),
        "{health:?}"
    );
}

#[test]
fn a_failing_script_is_unknown_with_its_place_and_reason() {
    let broken = CUSTOMIZATION.replace(
        "return obj.status ~= nil and obj.status.readyReplicas == obj.spec.replicas",
        "return obj.status.missing.field",
    );
    let (fleet, errors) = load_fleet(&[SourceFile {
        path: "f.yaml".into(),
        text: broken,
    }]);
    assert!(errors.is_empty(), "{errors:?}");
    let rules = Rules::builtin();
    rules.use_fleet_layer(Some(fleet.interpreters.health_layer()));
    let health = rules.assess(&cloneset(3)).expect("a health");
    assert_eq!(health.kind, HealthKind::Unknown);
    assert!(
        health.reason.starts_with("f.yaml:11: "),
        "{}",
        health.reason
    );
}

#[test]
fn a_script_that_does_not_compile_or_a_second_script_for_one_operation_is_an_input_error() {
    let broken = CUSTOMIZATION.replace("end\n", "\n");
    let (_, errors) = load_fleet(&[SourceFile {
        path: "f.yaml".into(),
        text: broken,
    }]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].location.to_string(), "f.yaml:11");
    assert_eq!(
        errors[0].field,
        "spec.customizations.healthInterpretation.luaScript"
    );
    assert!(
        errors[0]
            .message
            .contains("InterpreterOperation(InterpretHealth) Lua script error")
    );

    let second = format!(
        "{CUSTOMIZATION}---\n{}",
        CUSTOMIZATION.replace("name: cloneset", "name: cloneset-2")
    );
    let (_, errors) = load_fleet(&[SourceFile {
        path: "f.yaml".into(),
        text: second,
    }]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0]
            .message
            .contains("conflicting with InterpreterOperation(InterpretHealth) of existing ResourceInterpreterCustomization(cloneset)"),
        "{errors:?}"
    );

    let missing = CUSTOMIZATION.replace("    kind: CloneSet\n", "");
    let (_, errors) = load_fleet(&[SourceFile {
        path: "f.yaml".into(),
        text: missing,
    }]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].field, "spec.target.kind");
}

#[test]
fn flotilla_refuses_a_fleet_whose_customization_does_not_compile() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("interpreters.yaml"),
        CUSTOMIZATION.replace("end\n", "\n"),
    )
    .expect("write");
    let state = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args([
            "--fleet",
            &dir.path().display().to_string(),
            "--context",
            "none-*",
            "render",
        ])
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_CONFIG_HOME", state.path())
        .env("KUBECONFIG", state.path().join("none"))
        .output()
        .expect("run flotilla");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("interpreters.yaml:11"), "{stderr}");
}

/// A custom kind whose customization's `GetDependencies` names the ConfigMap its spec refers
/// to and every Secret labelled for it, placed with `propagateDeps: true`.
const DEPENDENT_FLEET: &str = "\
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: east, labels: {tier: web}}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: west}
---
apiVersion: example.io/v1
kind: Widget
metadata: {name: dial, namespace: shop}
spec: {configRef: dial-config}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: dial-config, namespace: shop}
data: {size: '3'}
---
apiVersion: v1
kind: Secret
metadata: {name: dial-key, namespace: shop, labels: {widget: dial}}
stringData: {key: k}
---
apiVersion: v1
kind: Secret
metadata: {name: other-key, namespace: shop, labels: {widget: gauge}}
stringData: {key: k}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: widgets, namespace: shop}
spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: example.io/v1, kind: Widget}]
  placement:
    clusterAffinity: {labelSelector: {matchLabels: {tier: web}}}
---
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: widget}
spec:
  target: {apiVersion: example.io/v1, kind: Widget}
  customizations:
    dependencyInterpretation:
      luaScript: |
        function GetDependencies(desiredObj)
          local ns = desiredObj.metadata.namespace
          return {
            {apiVersion = 'v1', kind = 'ConfigMap', namespace = ns, name = desiredObj.spec.configRef},
            {apiVersion = 'v1', kind = 'Secret', namespace = ns,
             labelSelector = {matchLabels = {widget = desiredObj.metadata.name}}},
          }
        end
";

#[test]
fn get_dependencies_brings_what_a_custom_kind_names_to_its_clusters_and_says_so() {
    let (fleet, errors) = load_fleet(&[SourceFile {
        path: "fleet.yaml".into(),
        text: DEPENDENT_FLEET.into(),
    }]);
    assert!(errors.is_empty(), "{errors:?}");
    let row = |name: &str| {
        fleet
            .resources
            .iter()
            .position(|r| r.target.name == name)
            .expect(name)
    };
    let (east, west) = (
        fleet.cluster_index("east").expect("east"),
        fleet.cluster_index("west").expect("west"),
    );
    for name in ["dial", "dial-config", "dial-key"] {
        assert!(fleet.is_placed(row(name), east), "{name} on east");
        assert!(!fleet.is_placed(row(name), west), "{name} not on west");
    }
    assert!(
        !fleet.is_placed(row("other-key"), east),
        "a Secret the selector does not match stays where it is"
    );
    let why = fleet.explain(row("dial-config"), east);
    assert_eq!(
        why.reason,
        "placed as a dependency of Widget shop/dial (propagateDeps)"
    );
    assert!(
        why.steps.iter().any(|s| s
            == "needed here by Widget shop/dial (propagateDeps): its GetDependencies (fleet.yaml:45) names it"),
        "{:#?}",
        why.steps
    );
    let widget = fleet.explain(row("dial"), east);
    assert!(
        widget.steps.iter().any(|s| s
            == "propagateDeps: ConfigMap shop/dial-config, Secret shop/dial-key follow it to its clusters (its GetDependencies (fleet.yaml:45) names them)"),
        "{:#?}",
        widget.steps
    );
}

#[test]
fn a_failing_get_dependencies_propagates_nothing_and_names_the_script() {
    let broken = DEPENDENT_FLEET.replace(
        "local ns = desiredObj.metadata.namespace",
        "error('no dependencies today')",
    );
    let (fleet, errors) = load_fleet(&[SourceFile {
        path: "fleet.yaml".into(),
        text: broken,
    }]);
    assert!(errors.is_empty(), "{errors:?}");
    let config = fleet
        .resources
        .iter()
        .position(|r| r.target.name == "dial-config")
        .expect("the ConfigMap");
    assert!((0..fleet.clusters.len()).all(|c| !fleet.is_placed(config, c)));
    let dial = fleet
        .resources
        .iter()
        .position(|r| r.target.name == "dial")
        .expect("the Widget");
    let east = fleet.cluster_index("east").expect("east");
    let steps = fleet.explain(dial, east).steps;
    assert!(
        steps.iter().any(
            |s| s.starts_with("propagateDeps: GetDependencies (fleet.yaml:45)")
                && s.contains("no dependencies today")
                && s.ends_with("Karmada propagates none of its dependencies")
        ),
        "{steps:#?}"
    );
}

const COMPONENT_FLEET: &str = "\
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: east}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: west}
---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: bench, namespace: ml}
spec:
  mpiReplicaSpecs:
    Worker:
      replicas: 4
      template:
        spec:
          containers:
          - name: w
            resources:
              requests: {cpu: '1', memory: 512Mi}
          nodeSelector: {gpu: 'true'}
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: l
            resources:
              limits: {cpu: 500m, memory: 256Mi}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: jobs, namespace: ml}
spec:
  resourceSelectors: [{apiVersion: kubeflow.org/v2beta1, kind: MPIJob}]
  placement:
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
---
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: mpijob}
spec:
  target: {apiVersion: kubeflow.org/v2beta1, kind: MPIJob}
  customizations:
    componentResource:
      luaScript: |
        local kube = require('kube')
        function GetComponents(obj)
          local components = {}
          for name, spec in pairs(obj.spec.mpiReplicaSpecs) do
            table.insert(components, {name = name, replicas = spec.replicas,
              replicaRequirements = kube.accuratePodRequirements(spec.template)})
          end
          return components
        end
";

#[test]
fn a_multi_component_kind_explains_its_components_as_karmadas_scheduler_reads_them() {
    let (fleet, errors) = load_fleet(&[SourceFile {
        path: "fleet.yaml".into(),
        text: COMPONENT_FLEET.into(),
    }]);
    assert!(errors.is_empty(), "{errors:?}");
    let job = fleet
        .resources
        .iter()
        .position(|r| r.target.kind == "MPIJob")
        .expect("the MPIJob");
    let east = fleet.cluster_index("east").expect("east");
    let why = fleet.explain(job, east);
    assert!(why.placed, "{why:?}");
    assert!(
        why.steps.iter().any(|s| s
            == "componentResource (GetComponents, fleet.yaml:47): Launcher ×1 (cpu 500m, memory 256Mi each), Worker ×4 (cpu 1, memory 512Mi each, with a node claim); Karmada's scheduler sizes each cluster's room by whole sets of them when its MultiplePodTemplatesScheduling feature gate is on, and then sends every cluster it picks the whole workload, undivided (off, as by default, nothing reads its replicas: it goes whole to each cluster)"),
        "{:#?}",
        why.steps
    );
    // A script that fails says so in the same place.
    let broken = COMPONENT_FLEET.replace("local components = {}", "error('no components')");
    let (fleet, _) = load_fleet(&[SourceFile {
        path: "fleet.yaml".into(),
        text: broken,
    }]);
    let why = fleet.explain(job, east);
    assert!(
        why.steps.iter().any(|s| s
            .starts_with("componentResource (GetComponents, fleet.yaml:47) failed: ")
            && s.contains("no components")),
        "{:#?}",
        why.steps
    );
}
