//! Checking objects of built-in Kubernetes kinds against the API's own types (k8s-openapi):
//! a value of the wrong type (`replicas: "three"`, `labels` written as a list) or out of range
//! (a replica count beyond int32) is a located error, never coerced; an object whose types hold
//! is then held to the API server's rules for names, labels, counts, ports and selectors
//! (`api_rules.rs`). Required fields left out are the API server's to report (a dry run names
//! them), so they are not checked here. It must not change the object it checks.

use k8s_openapi::api::{apps, autoscaling, batch, core, networking, policy, rbac};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::api_rules;
use super::parse::{Doc, escape_token};
use super::secret_values;
use super::source::FleetError;

/// How many left-out required fields are filled in, at most, while looking for a real type
/// error behind them.
const MAX_FILLED: usize = 64;

/// Checks `object` (the member object; at `prefix` inside `doc`, `""` for a plain template)
/// when its apiVersion and kind are a built-in the API's types describe.
/// [`check`] of the whole document, remembered with it once it passes: a fleet re-read after
/// an edit elsewhere does not check its unchanged documents again.
pub fn check_document(doc: &Doc) -> Result<(), FleetError> {
    if doc.memo.checked.get().is_some() {
        return Ok(());
    }
    check(doc, "", &doc.value)?;
    let _ = doc.memo.checked.set(());
    Ok(())
}

pub fn check(doc: &Doc, prefix: &str, object: &Value) -> Result<(), FleetError> {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let Some(check) = checker(api_version, kind) else {
        return Ok(());
    };
    let mut candidate = object.clone();
    for _ in 0..MAX_FILLED {
        let Err(problem) = check(&candidate) else {
            // The types hold: then the API server's rules for names, labels, counts, ports
            // and selectors.
            return match api_rules::check(object).into_iter().next() {
                Some(rule) => Err(doc.error(
                    &format!("{prefix}{}", rule.pointer),
                    format!("{kind}: {}", rule.message),
                    rule.hint,
                )),
                None => Ok(()),
            };
        };
        let pointer = pointer_of(&problem.path);
        if let Some(field) = missing_field(&problem.message)
            && fill(&mut candidate, &pointer, field, check)
        {
            continue;
        }
        if secret_values::is_secret_value(object, &pointer) {
            return Err(located_secret(
                doc,
                prefix,
                kind,
                &pointer,
                &problem.message,
            ));
        }
        return Err(located(doc, prefix, kind, &pointer, &problem.message));
    }
    Ok(())
}

/// One failed deserialization: where (serde's path) and what.
struct Problem {
    path: Vec<Segment>,
    message: String,
}

enum Segment {
    Key(String),
    Index(usize),
}

type Checker = fn(&Value) -> Result<(), Problem>;

fn typed<T: DeserializeOwned>(value: &Value) -> Result<(), Problem> {
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(_) => Ok(()),
        Err(err) => {
            let path = err
                .path()
                .iter()
                .filter_map(|segment| match segment {
                    serde_path_to_error::Segment::Seq { index } => Some(Segment::Index(*index)),
                    serde_path_to_error::Segment::Map { key } => Some(Segment::Key(key.clone())),
                    serde_path_to_error::Segment::Enum { variant } => {
                        Some(Segment::Key(variant.clone()))
                    }
                    serde_path_to_error::Segment::Unknown => None,
                })
                .collect();
            Err(Problem {
                path,
                message: err.into_inner().to_string(),
            })
        }
    }
}

/// The built-in kinds flotilla checks, by apiVersion and kind.
fn checker(api_version: &str, kind: &str) -> Option<Checker> {
    Some(match (api_version, kind) {
        ("v1", "ConfigMap") => typed::<core::v1::ConfigMap>,
        ("v1", "Secret") => typed::<core::v1::Secret>,
        ("v1", "Service") => typed::<core::v1::Service>,
        ("v1", "ServiceAccount") => typed::<core::v1::ServiceAccount>,
        ("v1", "Namespace") => typed::<core::v1::Namespace>,
        ("v1", "Pod") => typed::<core::v1::Pod>,
        ("v1", "PersistentVolumeClaim") => typed::<core::v1::PersistentVolumeClaim>,
        ("v1", "LimitRange") => typed::<core::v1::LimitRange>,
        ("v1", "ResourceQuota") => typed::<core::v1::ResourceQuota>,
        ("apps/v1", "Deployment") => typed::<apps::v1::Deployment>,
        ("apps/v1", "StatefulSet") => typed::<apps::v1::StatefulSet>,
        ("apps/v1", "DaemonSet") => typed::<apps::v1::DaemonSet>,
        ("apps/v1", "ReplicaSet") => typed::<apps::v1::ReplicaSet>,
        ("batch/v1", "Job") => typed::<batch::v1::Job>,
        ("batch/v1", "CronJob") => typed::<batch::v1::CronJob>,
        ("autoscaling/v2", "HorizontalPodAutoscaler") => {
            typed::<autoscaling::v2::HorizontalPodAutoscaler>
        }
        ("networking.k8s.io/v1", "Ingress") => typed::<networking::v1::Ingress>,
        ("networking.k8s.io/v1", "NetworkPolicy") => typed::<networking::v1::NetworkPolicy>,
        ("policy/v1", "PodDisruptionBudget") => typed::<policy::v1::PodDisruptionBudget>,
        ("rbac.authorization.k8s.io/v1", "Role") => typed::<rbac::v1::Role>,
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => typed::<rbac::v1::RoleBinding>,
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => typed::<rbac::v1::ClusterRole>,
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            typed::<rbac::v1::ClusterRoleBinding>
        }
        _ => return None,
    })
}

fn missing_field(message: &str) -> Option<&str> {
    message.strip_prefix("missing field `")?.split('`').next()
}

/// Fills a left-out required field with the first placeholder the type accepts, so the check
/// can go on to the fields that were written. False when none fits (then the message stands).
fn fill(candidate: &mut Value, pointer: &str, field: &str, check: Checker) -> bool {
    let placeholders = [
        Value::Object(Map::new()),
        Value::Array(Vec::new()),
        Value::String(String::new()),
        Value::from(0),
        Value::Bool(false),
    ];
    let field_pointer = format!("{pointer}/{}", escape_token(field));
    for placeholder in placeholders {
        let Some(parent) = candidate
            .pointer_mut(pointer)
            .and_then(Value::as_object_mut)
        else {
            return false;
        };
        parent.insert(field.to_string(), placeholder);
        match check(candidate) {
            Ok(()) => return true,
            Err(problem) => {
                let same_field = pointer_of(&problem.path) == field_pointer
                    && problem.message.starts_with("invalid type");
                if !same_field {
                    return true;
                }
            }
        }
    }
    false
}

fn pointer_of(path: &[Segment]) -> String {
    path.iter()
        .map(|segment| match segment {
            Segment::Key(key) => format!("/{}", escape_token(key)),
            Segment::Index(index) => format!("/{index}"),
        })
        .collect()
}

fn located(doc: &Doc, prefix: &str, kind: &str, pointer: &str, message: &str) -> FleetError {
    let explain: Vec<&str> = pointer
        .split('/')
        .skip(1)
        .filter(|token| token.parse::<usize>().is_err())
        .collect();
    let explain = if explain.is_empty() {
        kind.to_lowercase()
    } else {
        format!("{}.{}", kind.to_lowercase(), explain.join("."))
    };
    doc.error(
        &format!("{prefix}{pointer}"),
        format!("{kind}: {message}"),
        format!(
            "write the value the Kubernetes API expects here (`kubectl explain {explain}` describes it)"
        ),
    )
}

/// The error of a Secret's value, which must not be quoted: what the API expects there and
/// what was found instead (its type, never the value), and how to write it.
fn located_secret(doc: &Doc, prefix: &str, kind: &str, pointer: &str, message: &str) -> FleetError {
    let expected = message
        .rsplit_once(", expected ")
        .map(|(_, expected)| expected.trim_end_matches('.'));
    let found = ["invalid type: ", "invalid value: "]
        .iter()
        .find_map(|start| message.strip_prefix(start))
        .map(|rest| {
            rest.split(['`', '"', ','])
                .next()
                .unwrap_or_default()
                .trim()
        })
        .filter(|found| !found.is_empty());
    let in_data = pointer == "/data" || pointer.starts_with("/data/");
    let what = match (found, expected) {
        (Some(found), Some(expected)) => {
            let article = if found.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            format!("{article} {found} where the API expects {expected}")
        }
        (None, Some(expected)) => format!("not a value the API takes here; it expects {expected}"),
        (None, None) if in_data => "not base64 text".to_string(),
        _ => "not a value the API takes here".to_string(),
    };
    let hint = if pointer == "/stringData" || pointer.starts_with("/stringData/") {
        "write each value of stringData as text in quotes (`key: \"...\"`)"
    } else if in_data {
        "write each value of data as base64 text in quotes, or put the plain text under stringData instead"
    } else {
        "write the value the Kubernetes API expects here"
    };
    doc.error(
        &format!("{prefix}{pointer}"),
        format!("{kind}: {what} (the value is a Secret's, so it is not quoted)"),
        hint,
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::document::parse::parse_files;
    use crate::engine::document::source::SourceFile;

    fn doc(text: &str) -> Doc {
        let (docs, errors) = parse_files(&[SourceFile {
            path: "t.yaml".into(),
            text: text.into(),
        }]);
        assert!(errors.is_empty(), "{errors:?}");
        docs.into_iter().next().unwrap()
    }

    fn error_of(text: &str) -> Option<String> {
        let d = doc(text);
        check(&d, "", &d.value).err().map(|e| e.to_string())
    }

    const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n";

    #[test]
    fn a_replica_count_written_as_words_names_its_line_and_field() {
        let err = error_of(&format!("{DEPLOYMENT}spec:\n  replicas: three\n")).unwrap();
        assert!(
            err.starts_with("t.yaml:6: spec.replicas: Deployment: invalid type: string \"three\""),
            "{err}"
        );
        assert!(
            err.contains("kubectl explain deployment.spec.replicas"),
            "{err}"
        );
    }

    #[test]
    fn a_replica_count_beyond_int32_is_refused_not_clamped() {
        let err = error_of(&format!("{DEPLOYMENT}spec:\n  replicas: 99999999999\n")).unwrap();
        assert!(err.contains("spec.replicas"), "{err}");
        assert!(err.contains("99999999999"), "{err}");
    }

    #[test]
    fn labels_written_as_a_list_are_refused() {
        let err =
            error_of("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: [a, b]\n")
                .unwrap();
        assert!(err.starts_with("t.yaml:5: metadata.labels:"), "{err}");
        assert!(err.contains("invalid type: sequence"), "{err}");
    }

    #[test]
    fn left_out_required_fields_do_not_hide_a_wrong_type_after_them() {
        // No selector or template (required by the API), and a container port as text.
        let text = format!(
            "{DEPLOYMENT}spec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: web\n        ports:\n        - containerPort: http\n"
        );
        let err = error_of(&text).unwrap();
        assert!(
            err.contains("spec.template.spec.containers[0].ports[0].containerPort"),
            "{err}"
        );
        assert_eq!(
            error_of(&format!("{DEPLOYMENT}spec:\n  replicas: 2\n")),
            None
        );
    }

    #[test]
    fn an_error_in_a_secret_value_names_the_field_and_type_never_the_value() {
        let secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n";
        for (body, field, hint) in [
            (
                "stringData:\n  pin: 987654\n",
                "stringData.pin",
                "stringData",
            ),
            ("data:\n  pin: 987654\n", "data.pin", "base64"),
            (
                "data:\n  pin: \"not base64 987654!\"\n",
                "data.pin",
                "base64",
            ),
            (
                "stringData:\n  pin: [987654]\n",
                "stringData.pin",
                "stringData",
            ),
            (
                "stringData:\n  pin: {x: 987654}\n",
                "stringData.pin",
                "stringData",
            ),
        ] {
            let err = error_of(&format!("{secret}{body}")).unwrap();
            assert!(!err.contains("987654"), "{err}");
            assert!(
                err.starts_with(&format!("t.yaml:6: {field}: Secret: ")),
                "{err}"
            );
            assert!(err.contains(hint), "{err}");
        }
        let err = error_of(&format!("{secret}stringData:\n  pin: 987654\n")).unwrap();
        assert!(
            err.contains("an integer where the API expects a string"),
            "{err}"
        );
        // Elsewhere in a Secret the value is still quoted: it is no secret.
        let err = error_of(&format!("{secret}type: [tls-x]\n")).unwrap();
        assert!(err.contains("type"), "{err}");
    }

    #[test]
    fn well_typed_objects_and_unknown_kinds_pass() {
        assert_eq!(
            error_of(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {a: b}}\ndata: {k: v}\n"
            ),
            None
        );
        assert_eq!(
            error_of(
                "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: three}\n"
            ),
            None
        );
    }
}
