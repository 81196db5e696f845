//! The API server's own validation rules for the classes flotilla checks offline, on objects
//! of built-in kinds whose types already check (`builtin.rs`): object and namespace names (a
//! DNS-1123 subdomain or label, an RBAC object's path segment),
//! label keys and values, annotation keys, counts that must not be negative, port ranges, and a
//! workload's selector against its template's labels. Each rule is the API server's, so what
//! it accepts flotilla accepts; a broken rule is a located error naming the field and the fix.
//! It must not change the object, nor check what only a live cluster knows.

use serde_json::Value;

use super::parse::escape_token;

/// A rule an object breaks: where (a JSON pointer into the object), what, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    pub pointer: String,
    pub message: String,
    pub hint: String,
}

fn broken(
    pointer: impl Into<String>,
    message: impl Into<String>,
    hint: impl Into<String>,
) -> Broken {
    Broken {
        pointer: pointer.into(),
        message: message.into(),
        hint: hint.into(),
    }
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters.
pub fn is_dns1123_label(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

/// DNS-1123 labels joined by dots, at most 253 characters.
pub fn is_dns1123_subdomain(text: &str) -> bool {
    text.len() <= 253
        && text.split('.').all(|part| {
            let bytes = part.as_bytes();
            !bytes.is_empty()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
                && bytes[0] != b'-'
                && bytes[bytes.len() - 1] != b'-'
        })
}

/// A name usable as one path segment: not `.` or `..`, no `/` or `%`.
fn is_path_segment(text: &str) -> bool {
    !text.is_empty() && text != "." && text != ".." && !text.contains(['/', '%'])
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, at most 63 characters.
fn is_qualified_part(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
}

/// A label or annotation key: an optional DNS-1123 subdomain prefix and `/`, then a name.
pub fn is_qualified_name(text: &str) -> bool {
    match text.split_once('/') {
        Some((prefix, name)) => {
            !prefix.is_empty() && is_dns1123_subdomain(prefix) && is_qualified_part(name)
        }
        None => is_qualified_part(text),
    }
}

/// A label value: empty, or a qualified name's part.
pub fn is_label_value(text: &str) -> bool {
    text.is_empty() || is_qualified_part(text)
}

/// A name rule: the test and what it asks for, in words.
type NameRule = (fn(&str) -> bool, &'static str);

/// What an object's name must be, by kind, as the API server validates it.
fn name_rule(api_version: &str, kind: &str) -> Option<NameRule> {
    const SUBDOMAIN: NameRule = (
        is_dns1123_subdomain,
        "a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters",
    );
    Some(match (api_version, kind) {
        // A Service's name was a DNS-1035 label (a letter first) before Kubernetes relaxed it
        // to a DNS-1123 label; the API server of the test tier accepts `1web`.
        ("v1", "Namespace" | "Service") => (
            is_dns1123_label,
            "a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters",
        ),
        ("rbac.authorization.k8s.io/v1", _) => (
            is_path_segment,
            "usable as a path segment: not '.' or '..', and without '/' or '%'",
        ),
        (
            "v1",
            "ConfigMap"
            | "Secret"
            | "ServiceAccount"
            | "Pod"
            | "PersistentVolumeClaim"
            | "LimitRange"
            | "ResourceQuota",
        )
        | ("apps/v1", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet")
        | ("batch/v1", "Job" | "CronJob")
        | ("autoscaling/v2", "HorizontalPodAutoscaler")
        | ("networking.k8s.io/v1", "Ingress" | "NetworkPolicy")
        | ("policy/v1", "PodDisruptionBudget") => SUBDOMAIN,
        _ => return None,
    })
}

fn text_at<'a>(object: &'a Value, pointer: &str) -> Option<&'a str> {
    object.pointer(pointer).and_then(Value::as_str)
}

/// Every rule `object` (of a built-in kind) breaks, the first first.
pub fn check(object: &Value) -> Vec<Broken> {
    let api_version = text_at(object, "/apiVersion").unwrap_or_default();
    let kind = text_at(object, "/kind").unwrap_or_default();
    let mut out = Vec::new();
    if let Some((rule, what)) = name_rule(api_version, kind)
        && let Some(name) = text_at(object, "/metadata/name")
        && !rule(name)
    {
        out.push(broken(
            "/metadata/name",
            format!("{kind} name {name:?} is not valid: it must be {what}"),
            "rename the object",
        ));
    }
    if let Some(namespace) = text_at(object, "/metadata/namespace")
        && !is_dns1123_label(namespace)
    {
        out.push(broken(
            "/metadata/namespace",
            format!(
                "namespace {namespace:?} is not valid: it must be a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)"
            ),
            "name an existing, valid namespace",
        ));
    }
    labels_and_annotations(object, "/metadata", &mut out);
    counts(api_version, kind, object, &mut out);
    if let Some(template) = pod_template(api_version, kind) {
        labels_and_annotations(object, &format!("{template}/metadata"), &mut out);
        pod_spec(object, &format!("{template}/spec"), &mut out);
        // A Job's selector is generated unless it asks for a manual one.
        if api_version == "apps/v1" {
            selector_matches_template(object, template, &mut out);
        }
    }
    if (api_version, kind) == ("v1", "Pod") {
        pod_spec(object, "/spec", &mut out);
    }
    if (api_version, kind) == ("v1", "Service") {
        service_ports(object, &mut out);
    }
    out
}

fn labels_and_annotations(object: &Value, meta: &str, out: &mut Vec<Broken>) {
    if let Some(labels) = object
        .pointer(&format!("{meta}/labels"))
        .and_then(Value::as_object)
    {
        for (key, value) in labels {
            let at = format!("{meta}/labels/{}", escape_token(key));
            if !is_qualified_name(key) {
                out.push(broken(
                    at.clone(),
                    format!("label key {key:?} is not valid: a name of at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, with an optional DNS subdomain prefix and '/'"),
                    "rename the label",
                ));
            }
            if let Some(value) = value.as_str()
                && !is_label_value(value)
            {
                out.push(broken(
                    at,
                    format!("label value {value:?} is not valid: empty, or at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"),
                    "shorten or rewrite the value (an annotation takes any text)",
                ));
            }
        }
    }
    if let Some(annotations) = object
        .pointer(&format!("{meta}/annotations"))
        .and_then(Value::as_object)
    {
        for key in annotations.keys() {
            // The API server checks an annotation key lowercased.
            if !is_qualified_name(&key.to_lowercase()) {
                out.push(broken(
                    format!("{meta}/annotations/{}", escape_token(key)),
                    format!("annotation key {key:?} is not valid: a name of at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, with an optional DNS subdomain prefix and '/'"),
                    "rename the annotation",
                ));
            }
        }
    }
}

/// Where a workload keeps its pod template.
fn pod_template(api_version: &str, kind: &str) -> Option<&'static str> {
    match (api_version, kind) {
        ("apps/v1", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet")
        | ("batch/v1", "Job") => Some("/spec/template"),
        ("batch/v1", "CronJob") => Some("/spec/jobTemplate/spec/template"),
        _ => None,
    }
}

/// Counts the API server requires to be zero or more, by kind.
fn counts(api_version: &str, kind: &str, object: &Value, out: &mut Vec<Broken>) {
    let fields: &[&str] = match (api_version, kind) {
        ("apps/v1", "Deployment") => &[
            "/spec/replicas",
            "/spec/minReadySeconds",
            "/spec/revisionHistoryLimit",
        ],
        ("apps/v1", "ReplicaSet") => &["/spec/replicas", "/spec/minReadySeconds"],
        ("apps/v1", "StatefulSet") => &[
            "/spec/replicas",
            "/spec/minReadySeconds",
            "/spec/revisionHistoryLimit",
        ],
        ("apps/v1", "DaemonSet") => &["/spec/minReadySeconds", "/spec/revisionHistoryLimit"],
        ("batch/v1", "Job") => &[
            "/spec/parallelism",
            "/spec/completions",
            "/spec/backoffLimit",
        ],
        ("batch/v1", "CronJob") => &[
            "/spec/successfulJobsHistoryLimit",
            "/spec/failedJobsHistoryLimit",
        ],
        _ => &[],
    };
    for pointer in fields {
        if let Some(n) = object.pointer(pointer).and_then(Value::as_i64)
            && n < 0
        {
            let field = pointer.rsplit('/').next().unwrap_or_default();
            out.push(broken(
                *pointer,
                format!("{field} is {n}: it must be greater than or equal to 0"),
                format!("set {field} to 0 or more"),
            ));
        }
    }
}

fn port_in_range(value: &Value) -> bool {
    value.as_i64().is_none_or(|n| (1..=65535).contains(&n))
}

/// Container ports and the template's containers.
fn pod_spec(object: &Value, spec: &str, out: &mut Vec<Broken>) {
    for list in ["containers", "initContainers"] {
        let Some(containers) = object
            .pointer(&format!("{spec}/{list}"))
            .and_then(Value::as_array)
        else {
            continue;
        };
        for (i, container) in containers.iter().enumerate() {
            let Some(ports) = container.get("ports").and_then(Value::as_array) else {
                continue;
            };
            for (j, port) in ports.iter().enumerate() {
                for field in ["containerPort", "hostPort"] {
                    // A hostPort of 0 means none.
                    if let Some(value) = port.get(field)
                        && !(field == "hostPort" && value.as_i64() == Some(0))
                        && !port_in_range(value)
                    {
                        out.push(broken(
                            format!("{spec}/{list}/{i}/ports/{j}/{field}"),
                            format!(
                                "{field} {value} is out of range: it must be between 1 and 65535"
                            ),
                            "use a port number from 1 to 65535",
                        ));
                    }
                }
            }
        }
    }
}

fn service_ports(object: &Value, out: &mut Vec<Broken>) {
    let Some(ports) = object.pointer("/spec/ports").and_then(Value::as_array) else {
        return;
    };
    for (i, port) in ports.iter().enumerate() {
        for field in ["port", "targetPort"] {
            // A targetPort of 0 is defaulted to the port before validation.
            if let Some(value) = port.get(field)
                && !(field == "targetPort" && value.as_i64() == Some(0))
                && !port_in_range(value)
            {
                out.push(broken(
                    format!("/spec/ports/{i}/{field}"),
                    format!("{field} {value} is out of range: it must be between 1 and 65535"),
                    "use a port number from 1 to 65535 (targetPort may also name a container port)",
                ));
            }
        }
        if let Some(value) = port.get("nodePort")
            && value.as_i64().is_some_and(|n| !(0..=65535).contains(&n))
        {
            out.push(broken(
                format!("/spec/ports/{i}/nodePort"),
                format!("nodePort {value} is out of range: it must be between 0 and 65535"),
                "leave nodePort out to have one allocated, or use the cluster's node port range",
            ));
        }
    }
}

/// A workload's `selector.matchLabels` must be labels its template carries.
fn selector_matches_template(object: &Value, template: &str, out: &mut Vec<Broken>) {
    let selector_at = template.replace("/template", "/selector");
    let Some(wanted) = object
        .pointer(&format!("{selector_at}/matchLabels"))
        .and_then(Value::as_object)
    else {
        return;
    };
    if object
        .pointer(&format!("{selector_at}/matchExpressions"))
        .is_some_and(|e| e.as_array().is_some_and(|e| !e.is_empty()))
    {
        return;
    }
    let labels = object
        .pointer(&format!("{template}/metadata/labels"))
        .and_then(Value::as_object);
    let missing: Vec<String> = wanted
        .iter()
        .filter(|(key, value)| labels.and_then(|l| l.get(*key)) != Some(*value))
        .map(|(key, value)| format!("{key}={}", value.as_str().unwrap_or_default()))
        .collect();
    if !missing.is_empty() && !wanted.is_empty() {
        out.push(broken(
            format!("{template}/metadata/labels"),
            format!(
                "the selector does not match the template's labels: {} missing from them",
                missing.join(", ")
            ),
            "give the template the labels the selector names (or select by labels the template has)",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_follow_the_api_servers_classes() {
        for good in ["a", "web-1", "a.b", "0abc", &"a".repeat(253)] {
            assert!(is_dns1123_subdomain(good), "{good}");
        }
        for bad in [
            "",
            "Web",
            "-a",
            "a-",
            "a..b",
            "a_b",
            "a.-b",
            &"a".repeat(254),
        ] {
            assert!(!is_dns1123_subdomain(bad), "{bad}");
        }
        assert!(is_dns1123_label("prod-1") && !is_dns1123_label("a.b"));
        assert!(!is_dns1123_label(&"a".repeat(64)));
        assert!(is_qualified_name("app.kubernetes.io/name") && is_qualified_name("A_b.c"));
        assert!(
            !is_qualified_name("/x") && !is_qualified_name("a/b/c") && !is_qualified_name("-x")
        );
        assert!(is_label_value("") && is_label_value("v1.2_x") && !is_label_value("a b"));
        assert!(is_path_segment("system:controller") && !is_path_segment("a/b"));
    }

    #[test]
    fn a_deployment_breaks_each_rule_at_its_field() {
        let object = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "Web", "namespace": "Shop", "labels": {"bad key!": "ok"}},
            "spec": {
                "replicas": -5,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "other"}},
                    "spec": {"containers": [{"name": "w", "image": "i", "ports": [{"containerPort": 70000}]}]}
                }
            }
        });
        let pointers: Vec<String> = check(&object).into_iter().map(|b| b.pointer).collect();
        assert_eq!(
            pointers,
            [
                "/metadata/name",
                "/metadata/namespace",
                "/metadata/labels/bad key!",
                "/spec/replicas",
                "/spec/template/spec/containers/0/ports/0/containerPort",
                "/spec/template/metadata/labels",
            ]
        );
        let fine = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web", "x": "y"}}}}
        });
        assert!(check(&fine).is_empty(), "{:?}", check(&fine));
    }
}
