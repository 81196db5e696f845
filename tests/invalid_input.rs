#![allow(clippy::unwrap_used)]
//! Bad input exits 2 and says file:line, the field, what is wrong and how to fix it;
//! --keep-going renders everything else and still lists the errors.

use std::path::Path;

use flotilla::commands::render::{FleetInput, OutputFormat, run_render};
use flotilla::commands::scope::ResourceScope;
use serde_json::Value;

fn render(case: &str, keep_going: bool) -> (i32, String, String) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/fleets/invalid")
        .join(case);
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = run_render(
        FleetInput::Dir(&dir),
        &[],
        &ResourceScope::default(),
        OutputFormat::Json,
        keep_going,
        false,
        &mut out,
        &mut err,
    );
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

/// (case, file, line, field, message fragment, hint fragment)
const CASES: &[(&str, &str, usize, &str, &str, &str)] = &[
    (
        "malformed-yaml",
        "broken.yaml",
        13,
        "(yaml)",
        "malformed YAML",
        "fix the YAML syntax",
    ),
    (
        "unknown-override-operator",
        "override.yaml",
        10,
        "spec.overrideRules[0].overriders.plaintext[0].operator",
        "unknown override operator `set`",
        "use add, remove or replace",
    ),
    (
        "missing-patch-path",
        "federated.yaml",
        20,
        "spec.overrides[0].clusterOverrides[0].path",
        "cannot replace /spec/strategy/rollingUpdate/maxSurge: the path does not exist in the object",
        "use `add` to create a field",
    ),
    (
        "bad-selector-operator",
        "policy.yaml",
        16,
        "spec.placement.clusterAffinity.labelSelector.matchExpressions[0].operator",
        "unknown selector operator `Equals`",
        "use In, NotIn, Exists or DoesNotExist",
    ),
    (
        "duplicate-override-cluster",
        "federated.yaml",
        17,
        "spec.overrides[1].clusterName",
        "duplicate override for cluster a",
        "merge the clusterOverrides",
    ),
    (
        "forbidden-override-path",
        "federated.yaml",
        16,
        "spec.overrides[0].clusterOverrides[0].path",
        "overriding /metadata/name is forbidden",
        "create another federated object",
    ),
    (
        "bad-drift-ignore",
        "ignore.yaml",
        10,
        "spec.paths[1]",
        "\"data/b\" is not a JSON pointer",
        "write a JSON pointer",
    ),
    (
        "replicas-as-words",
        "deployment.yaml",
        5,
        "spec.replicas",
        "invalid type: string \"three\", expected i32",
        "kubectl explain deployment.spec.replicas",
    ),
    (
        "replicas-beyond-int32",
        "deployment.yaml",
        5,
        "spec.replicas",
        "invalid value: integer `99999999999`, expected i32",
        "kubectl explain deployment.spec.replicas",
    ),
    (
        "labels-as-a-list",
        "configmap.yaml",
        6,
        "metadata.labels",
        "invalid type: sequence, expected a map",
        "kubectl explain configmap.metadata.labels",
    ),
    (
        "kind-typo",
        "policy.yaml",
        7,
        "kind",
        "policy.karmada.io has no kind PropagationPolicyy",
        "did you mean PropagationPolicy?",
    ),
    (
        "unknown-version",
        "policy.yaml",
        6,
        "apiVersion",
        "policy.karmada.io has no version v9",
        "use apiVersion: policy.karmada.io/v1alpha1",
    ),
    (
        "too-deep",
        "deep.yaml",
        7,
        "(yaml)",
        "nested more than 40 levels deep",
        "flatten the structure",
    ),
    (
        "kubefed-template-type",
        "federated.yaml",
        15,
        "spec.template.spec.template.spec.containers[0].ports[0].containerPort",
        "invalid type: string \"http\", expected i32",
        "kubectl explain deployment.spec.template.spec.containers.ports.containerPort",
    ),
];

#[test]
fn bad_input_exits_2_with_location_field_and_fix() {
    for (case, file, line, field, message, hint) in CASES {
        let (code, out, err) = render(case, false);
        assert_eq!(code, 2, "{case}: {err}");
        assert!(
            out.is_empty(),
            "{case}: nothing is rendered without --keep-going"
        );
        let first = err.lines().next().unwrap();
        let (location, rest) = first.split_once(": ").unwrap();
        assert!(
            location.ends_with(&format!("{case}/{file}:{line}")),
            "{case}: {first}"
        );
        assert!(rest.starts_with(&format!("{field}: ")), "{case}: {first}");
        assert!(rest.contains(message), "{case}: {first}");
        let (_, fix) = rest.rsplit_once("; ").unwrap();
        assert!(fix.contains(hint), "{case}: {first}");
        assert!(
            !first.contains("column"),
            "{case}: no document-relative positions: {first}"
        );
    }
}

#[test]
fn keep_going_renders_the_rest_and_lists_the_errors() {
    for (case, file, line, ..) in CASES {
        let (code, out, err) = render(case, true);
        assert_eq!(code, 2, "{case}: errors still fail the run");
        assert!(err.contains(&format!("{file}:{line}")), "{case}: {err}");
        assert!(
            err.contains("everything else was rendered"),
            "{case}: {err}"
        );
        let doc: Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{case}: {e}\n{out}"));
        let items = doc["items"].as_array().unwrap();
        assert!(
            items
                .iter()
                .any(|i| i["cluster"] == "a" && i["object"]["metadata"]["name"] == "fine"),
            "{case}: the valid ConfigMap is rendered"
        );
    }
}

#[test]
fn an_object_with_a_failing_override_is_unplaced_with_the_reason() {
    let (_, out, _) = render("missing-patch-path", true);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let entry = doc["unplaced"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["cluster"] == "a" && u["resource"]["name"] == "ledger")
        .unwrap();
    assert!(
        entry["reason"]
            .as_str()
            .unwrap()
            .starts_with("ApplyOverridesFailed"),
        "{entry}"
    );
    let placed_on_b = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .any(|i| i["cluster"] == "b" && i["object"]["metadata"]["name"] == "ledger");
    assert!(placed_on_b, "the override only targets cluster a");
}

#[test]
fn unknown_cluster_filter_and_missing_directory_exit_2() {
    let demo = flotilla::fleet::demo::demo_files();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = run_render(
        FleetInput::Files(demo),
        &["nope".to_string()],
        &ResourceScope::default(),
        OutputFormat::Json,
        false,
        false,
        &mut out,
        &mut err,
    );
    assert_eq!(code, 2);
    assert!(
        String::from_utf8(err)
            .unwrap()
            .contains("--cluster nope: no such cluster")
    );
    let mut err = Vec::new();
    let code = run_render(
        FleetInput::Dir(Path::new("/nonexistent/fleet")),
        &[],
        &ResourceScope::default(),
        OutputFormat::Table,
        false,
        false,
        &mut out,
        &mut err,
    );
    assert_eq!(code, 2);
    assert!(
        String::from_utf8(err)
            .unwrap()
            .contains("fleet directory not found")
    );
}
