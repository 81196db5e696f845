//! What a template depends on, as Karmada's resource interpreter reads it for
//! `propagateDeps: true`: the default interpreter's reading of the built-in workloads
//! (`pkg/resourceinterpreter/default/native/dependencies.go` and
//! `helper.GetDependenciesFromPodTemplate` upstream: the ConfigMaps, Secrets,
//! ServiceAccounts and PersistentVolumeClaims a pod template names, and an Ingress's TLS
//! Secrets), the same reading of any pod template (the `kube.getPodDependencies` a
//! customization's Lua calls), and the references a customization's `GetDependencies` returns
//! ([`Reference`]). It reads one template's JSON and names objects; it must not look them up,
//! place them or know the fleet.

use std::collections::BTreeSet;

use serde_json::Value;

/// One object a template needs on every cluster it goes to (always in its namespace).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Dependency {
    pub kind: &'static str,
    pub name: String,
}

/// Where each built-in workload keeps its pod template (`None`: the kind has no interpreter
/// rule). Only the `apps/v1`, `batch/v1` and core `v1` kinds have one upstream.
fn pod_spec_pointer(api_version: &str, kind: &str) -> Option<&'static str> {
    match (api_version, kind) {
        ("apps/v1", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet")
        | ("batch/v1", "Job") => Some("/spec/template/spec"),
        ("batch/v1", "CronJob") => Some("/spec/jobTemplate/spec/template/spec"),
        ("v1", "Pod") => Some("/spec"),
        _ => None,
    }
}

/// Whether Karmada's default interpreter knows the dependencies of this kind.
pub fn has_dependency_rule(api_version: &str, kind: &str) -> bool {
    pod_spec_pointer(api_version, kind).is_some()
        || (api_version == "networking.k8s.io/v1" && kind == "Ingress")
}

/// The objects `template` (of `api_version`/`kind`) references, sorted and without repeats.
/// Empty names are skipped, the `default` ServiceAccount is not a dependency, and a
/// StatefulSet's claims that its own `volumeClaimTemplates` create are not either.
pub fn dependencies(api_version: &str, kind: &str, template: &Value) -> Vec<Dependency> {
    let mut found: BTreeSet<Dependency> = BTreeSet::new();
    if api_version == "networking.k8s.io/v1" && kind == "Ingress" {
        for tls in array(template.pointer("/spec/tls")) {
            add(&mut found, "Secret", tls.get("secretName"));
        }
        return found.into_iter().collect();
    }
    let Some(pointer) = pod_spec_pointer(api_version, kind) else {
        return Vec::new();
    };
    let Some(pod) = template.pointer(pointer) else {
        return Vec::new();
    };
    pod_dependencies(pod, &mut found);
    if kind == "StatefulSet" {
        let claimed: BTreeSet<&str> = array(template.pointer("/spec/volumeClaimTemplates"))
            .filter_map(|t| t.pointer("/metadata/name").and_then(Value::as_str))
            .collect();
        found.retain(|d| !(d.kind == "PersistentVolumeClaim" && claimed.contains(d.name.as_str())));
    }
    found.into_iter().collect()
}

/// The objects a pod template (`metadata` and `spec`) references, as Karmada's
/// `kube.getPodDependencies` reads them.
pub fn pod_template_dependencies(template: &Value) -> Vec<Dependency> {
    let mut found = BTreeSet::new();
    if let Some(spec) = template.get("spec") {
        pod_dependencies(spec, &mut found);
    }
    found.into_iter().collect()
}

/// One object a customization's `GetDependencies` names (Karmada's
/// `DependentObjectReference`): by name, or every template of the kind in the namespace whose
/// labels the selector matches.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reference {
    pub api_version: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
}

/// A `metav1.LabelSelector`, as a dependency reference carries it.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub match_labels: std::collections::BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<Requirement>,
}

/// One `matchExpressions` requirement.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Requirement {
    pub key: String,
    pub operator: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

impl LabelSelector {
    /// Whether `labels` (an object's `metadata.labels`) satisfy the selector, as
    /// `metav1.LabelSelectorAsSelector` reads it (an empty selector matches everything).
    pub fn matches(&self, labels: Option<&Value>) -> bool {
        let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
        self.match_labels
            .iter()
            .all(|(key, value)| label(key) == Some(value.as_str()))
            && self
                .match_expressions
                .iter()
                .all(|r| match r.operator.as_str() {
                    "In" => label(&r.key).is_some_and(|v| r.values.iter().any(|w| w == v)),
                    "NotIn" => label(&r.key).is_none_or(|v| r.values.iter().all(|w| w != v)),
                    "Exists" => label(&r.key).is_some(),
                    "DoesNotExist" => label(&r.key).is_none(),
                    _ => false,
                })
    }
}

impl Reference {
    /// Karmada's `VerifyDependencies`: apiVersion and kind required, and a name or a selector.
    pub fn verify(&self) -> Result<(), String> {
        if self.api_version.is_empty() {
            return Err("dependencies: missing required apiVersion".into());
        }
        if self.kind.is_empty() {
            return Err("dependencies: missing required kind".into());
        }
        if self.name.is_empty() && self.label_selector.is_none() {
            return Err(
                "dependencies: dependency can not leave name and labelSelector all empty".into(),
            );
        }
        for requirement in self
            .label_selector
            .iter()
            .flat_map(|s| &s.match_expressions)
        {
            let needs_values = matches!(requirement.operator.as_str(), "In" | "NotIn");
            let known =
                needs_values || matches!(requirement.operator.as_str(), "Exists" | "DoesNotExist");
            if !known || needs_values == requirement.values.is_empty() {
                return Err(format!(
                    "dependencies: invalid labelSelector requirement on {:?} ({})",
                    requirement.key, requirement.operator
                ));
            }
        }
        Ok(())
    }
}

fn array(value: Option<&Value>) -> impl Iterator<Item = &Value> {
    value.and_then(Value::as_array).into_iter().flatten()
}

fn add(found: &mut BTreeSet<Dependency>, kind: &'static str, name: Option<&Value>) {
    if let Some(name) = name.and_then(Value::as_str).filter(|n| !n.is_empty()) {
        found.insert(Dependency {
            kind,
            name: name.to_string(),
        });
    }
}

/// Volume sources that name a Secret through a `secretRef` (or, for two of them, a field of
/// their own), as the pod's secret visitor upstream walks them.
const SECRET_REF_VOLUMES: &[(&str, &str)] = &[
    ("azureFile", "/secretName"),
    ("cephfs", "/secretRef/name"),
    ("cinder", "/secretRef/name"),
    ("flexVolume", "/secretRef/name"),
    ("rbd", "/secretRef/name"),
    ("scaleIO", "/secretRef/name"),
    ("iscsi", "/secretRef/name"),
    ("storageos", "/secretRef/name"),
    ("csi", "/nodePublishSecretRef/name"),
];

fn pod_dependencies(pod: &Value, found: &mut BTreeSet<Dependency>) {
    for secret in array(pod.get("imagePullSecrets")) {
        add(found, "Secret", secret.get("name"));
    }
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for container in array(pod.get(list)) {
            for from in array(container.get("envFrom")) {
                add(found, "ConfigMap", from.pointer("/configMapRef/name"));
                add(found, "Secret", from.pointer("/secretRef/name"));
            }
            for env in array(container.get("env")) {
                add(
                    found,
                    "ConfigMap",
                    env.pointer("/valueFrom/configMapKeyRef/name"),
                );
                add(found, "Secret", env.pointer("/valueFrom/secretKeyRef/name"));
            }
        }
    }
    for volume in array(pod.get("volumes")) {
        add(found, "ConfigMap", volume.pointer("/configMap/name"));
        add(found, "Secret", volume.pointer("/secret/secretName"));
        add(
            found,
            "PersistentVolumeClaim",
            volume.pointer("/persistentVolumeClaim/claimName"),
        );
        for source in array(volume.pointer("/projected/sources")) {
            add(found, "ConfigMap", source.pointer("/configMap/name"));
            add(found, "Secret", source.pointer("/secret/name"));
        }
        for (source, field) in SECRET_REF_VOLUMES {
            add(
                found,
                "Secret",
                volume.get(*source).and_then(|s| s.pointer(field)),
            );
        }
    }
    if let Some(account) = pod
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty() && *a != "default")
    {
        found.insert(Dependency {
            kind: "ServiceAccount",
            name: account.to_string(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(deps: &[Dependency]) -> Vec<String> {
        deps.iter()
            .map(|d| format!("{}/{}", d.kind, d.name))
            .collect()
    }

    /// Follows `helper.GetDependenciesFromPodTemplate` (and the lifted pod visitors) upstream.
    #[test]
    fn every_reference_of_a_pod_template_is_a_dependency() {
        let pod = json!({
            "serviceAccountName": "web-sa",
            "imagePullSecrets": [{"name": "registry"}, {"name": ""}],
            "initContainers": [{"name": "init", "envFrom": [{"configMapRef": {"name": "init-env"}}]}],
            "containers": [{
                "name": "web",
                "envFrom": [{"secretRef": {"name": "web-env"}}],
                "env": [
                    {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "a"}}},
                    {"name": "B", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "b"}}},
                    {"name": "C", "value": "plain"}
                ]
            }],
            "volumes": [
                {"name": "v1", "configMap": {"name": "settings"}},
                {"name": "v2", "secret": {"secretName": "tls"}},
                {"name": "v3", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "v4", "projected": {"sources": [
                    {"configMap": {"name": "projected-cm"}},
                    {"secret": {"name": "projected-secret"}},
                    {"serviceAccountToken": {"path": "token"}}
                ]}},
                {"name": "v5", "csi": {"driver": "x", "nodePublishSecretRef": {"name": "csi-secret"}}}
            ]
        });
        let cases = [
            (
                "apps/v1",
                "Deployment",
                json!({"spec": {"template": {"spec": pod.clone()}}}),
            ),
            (
                "apps/v1",
                "DaemonSet",
                json!({"spec": {"template": {"spec": pod.clone()}}}),
            ),
            (
                "batch/v1",
                "Job",
                json!({"spec": {"template": {"spec": pod.clone()}}}),
            ),
            (
                "batch/v1",
                "CronJob",
                json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": pod.clone()}}}}}),
            ),
            ("v1", "Pod", json!({"spec": pod.clone()})),
        ];
        for (api_version, kind, template) in cases {
            assert_eq!(
                names(&dependencies(api_version, kind, &template)),
                [
                    "ConfigMap/init-env",
                    "ConfigMap/projected-cm",
                    "ConfigMap/settings",
                    "PersistentVolumeClaim/data",
                    "Secret/creds",
                    "Secret/csi-secret",
                    "Secret/projected-secret",
                    "Secret/registry",
                    "Secret/tls",
                    "Secret/web-env",
                    "ServiceAccount/web-sa",
                ],
                "{kind}"
            );
        }
    }

    /// Follows `getStatefulSetDependencies`, `getIngressDependencies` and
    /// `getServiceAccountNames` upstream.
    #[test]
    fn claims_a_statefulset_creates_the_default_account_and_other_kinds_are_not_dependencies() {
        let set = json!({"spec": {
            "volumeClaimTemplates": [{"metadata": {"name": "data"}}],
            "template": {"spec": {
                "serviceAccountName": "default",
                "volumes": [
                    {"name": "a", "persistentVolumeClaim": {"claimName": "data"}},
                    {"name": "b", "persistentVolumeClaim": {"claimName": "shared"}}
                ]
            }}
        }});
        assert_eq!(
            names(&dependencies("apps/v1", "StatefulSet", &set)),
            ["PersistentVolumeClaim/shared"]
        );
        let ingress = json!({"spec": {"tls": [{"secretName": "site-tls"}, {"hosts": ["x"]}]}});
        assert_eq!(
            names(&dependencies("networking.k8s.io/v1", "Ingress", &ingress)),
            ["Secret/site-tls"]
        );
        assert!(dependencies("v1", "ConfigMap", &json!({"data": {}})).is_empty());
        assert!(
            dependencies("apps/v1beta1", "Deployment", &set).is_empty(),
            "only the served versions have rules"
        );
        assert!(has_dependency_rule("batch/v1", "CronJob"));
        assert!(!has_dependency_rule("v1", "Service"));
    }
}
