//! The KubeFed dialect: the Federated<Kind> → target kind map (built in, extended by
//! FederatedTypeConfig), parsing Federated objects (template, placement, overrides) and
//! ReplicaSchedulingPreferences, and KubeFed's placement rules. It must not render objects
//! or read files.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::engine::document::metadata;
use crate::engine::document::parse::{Doc, pointer_to_field};
use crate::engine::document::source::FleetError;
use crate::engine::overrides::overriders::Located;
use crate::engine::overrides::patch::PatchOp;
use crate::engine::place::replicas::RspPreference;
use crate::engine::place::selector::{LabelSelector, scalar_text};
use crate::model::{ClusterSpec, ResourceRef};

/// The label KubeFed sets on every object it propagates.
pub const KUBEFED_MANAGED_LABEL: &str = "kubefed.io/managed";

pub const TYPES_GROUP: &str = "types.kubefed.io";

/// What a Federated kind propagates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetType {
    pub api_version: String,
    pub kind: String,
    pub namespaced: bool,
    /// Group of the Federated kind (types.kubefed.io unless an FTC says otherwise).
    pub federated_group: String,
    /// Set when a FederatedTypeConfig disables propagation: the FTC's name.
    pub disabled_by: Option<String>,
}

/// The built-in map: (target apiVersion, kind, namespaced).
const BUILTIN: &[(&str, &str, bool)] = &[
    ("v1", "Namespace", false),
    ("v1", "ConfigMap", true),
    ("v1", "Secret", true),
    ("v1", "ServiceAccount", true),
    ("v1", "Service", true),
    ("v1", "PersistentVolumeClaim", true),
    ("v1", "LimitRange", true),
    ("v1", "ResourceQuota", true),
    ("apps/v1", "Deployment", true),
    ("apps/v1", "StatefulSet", true),
    ("apps/v1", "DaemonSet", true),
    ("apps/v1", "ReplicaSet", true),
    ("batch/v1", "Job", true),
    ("batch/v1", "CronJob", true),
    ("networking.k8s.io/v1", "Ingress", true),
    ("networking.k8s.io/v1", "NetworkPolicy", true),
    ("rbac.authorization.k8s.io/v1", "Role", true),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", true),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", false),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", false),
    ("autoscaling/v2", "HorizontalPodAutoscaler", true),
    ("storage.k8s.io/v1", "StorageClass", false),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", false),
];

/// Federated kind name → target type.
#[derive(Debug, Clone, Default)]
pub struct KindMap {
    map: BTreeMap<String, TargetType>,
}

impl KindMap {
    pub fn builtin() -> KindMap {
        let mut map = BTreeMap::new();
        for (api_version, kind, namespaced) in BUILTIN {
            map.insert(
                format!("Federated{kind}"),
                TargetType {
                    api_version: api_version.to_string(),
                    kind: kind.to_string(),
                    namespaced: *namespaced,
                    federated_group: TYPES_GROUP.into(),
                    disabled_by: None,
                },
            );
        }
        KindMap { map }
    }

    /// Adds (or replaces) an entry from a FederatedTypeConfig.
    pub fn add_type_config(&mut self, doc: &Doc) -> Result<(), FleetError> {
        let text = |p: &str| {
            doc.value
                .pointer(p)
                .and_then(scalar_text)
                .filter(|s| !s.is_empty())
        };
        let kind = text("/spec/targetType/kind").ok_or_else(|| {
            doc.error(
                "/spec/targetType/kind",
                "a FederatedTypeConfig needs spec.targetType.kind",
                "add the target kind, e.g. `kind: Deployment`",
            )
        })?;
        let version = text("/spec/targetType/version").ok_or_else(|| {
            doc.error(
                "/spec/targetType/version",
                "a FederatedTypeConfig needs spec.targetType.version",
                "add e.g. `version: v1`",
            )
        })?;
        let group = text("/spec/targetType/group").unwrap_or_default();
        let api_version = if group.is_empty() {
            version
        } else {
            format!("{group}/{version}")
        };
        let scope = text("/spec/targetType/scope").unwrap_or_else(|| "Namespaced".into());
        let namespaced = match scope.as_str() {
            "Namespaced" => true,
            "Cluster" => false,
            other => {
                return Err(doc.error(
                    "/spec/targetType/scope",
                    format!("unknown scope `{other}`"),
                    "use Namespaced or Cluster",
                ));
            }
        };
        let fed_kind =
            text("/spec/federatedType/kind").unwrap_or_else(|| format!("Federated{kind}"));
        let fed_group = text("/spec/federatedType/group").unwrap_or_else(|| TYPES_GROUP.into());
        let disabled = text("/spec/propagation").is_some_and(|p| p == "Disabled");
        self.map.insert(
            fed_kind,
            TargetType {
                api_version,
                kind,
                namespaced,
                federated_group: fed_group,
                disabled_by: disabled.then(|| doc.name().to_string()),
            },
        );
        Ok(())
    }

    pub fn get(&self, federated_kind: &str) -> Option<&TargetType> {
        self.map.get(federated_kind)
    }

    /// Whether a document's group/kind is a Federated wrapper.
    pub fn is_federated(&self, group: &str, kind: &str) -> bool {
        if group == TYPES_GROUP {
            return true;
        }
        self.map
            .get(kind)
            .is_some_and(|t| t.federated_group == group)
    }
}

/// `spec.placement`, as KubeFed reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum KfPlacement {
    /// `clusters` present: it wins, even when empty.
    Clusters(Vec<String>),
    Selector(LabelSelector),
    None,
}

impl KfPlacement {
    pub fn summary(&self) -> String {
        match self {
            KfPlacement::Clusters(list) if list.is_empty() => "none (clusters: [])".into(),
            KfPlacement::Clusters(list) if list.len() == 1 => list[0].clone(),
            KfPlacement::Clusters(list) => format!("{} clusters", list.len()),
            KfPlacement::Selector(s) if s.is_empty() => "all".into(),
            KfPlacement::Selector(s) => format!("selector {s}"),
            KfPlacement::None => "none".into(),
        }
    }

    /// Why the cluster is outside this placement, or `None` when inside.
    pub fn mismatch(&self, cluster: &ClusterSpec) -> Option<String> {
        match self {
            KfPlacement::Clusters(list) if list.is_empty() => {
                Some("spec.placement.clusters is empty (an empty list selects no cluster)".into())
            }
            KfPlacement::Clusters(list) => {
                (!list.contains(&cluster.name)).then(|| "not in spec.placement.clusters".into())
            }
            KfPlacement::Selector(s) => (!s.matches(&cluster.labels))
                .then(|| format!("spec.placement.clusterSelector {s} does not match")),
            KfPlacement::None => Some(
                "no spec.placement.clusters or clusterSelector (KubeFed places it nowhere)".into(),
            ),
        }
    }
}

/// One `spec.overrides[]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterOverride {
    pub cluster: String,
    pub ops: Vec<Located<PatchOp>>,
}

/// A parsed Federated<Kind> object.
#[derive(Debug, Clone, PartialEq)]
pub struct FederatedObject {
    pub federated_kind: String,
    pub target: ResourceRef,
    pub target_type: TargetType,
    /// The member object before overrides: template, name, namespace, kind, apiVersion.
    pub object: Value,
    pub placement: KfPlacement,
    pub overrides: Vec<ClusterOverride>,
    /// Names in `spec.placement.clusters` missing from the inventory (dropped, as upstream).
    pub unknown_clusters: Vec<String>,
    pub dropped_annotations: bool,
    pub source_key: String,
}

const FORBIDDEN: [&str; 4] = [
    "/metadata/name",
    "/metadata/namespace",
    "/metadata/generateName",
    "/kind",
];

impl FederatedObject {
    pub fn parse(
        doc: &Doc,
        kinds: &KindMap,
        clusters: &[ClusterSpec],
    ) -> Result<FederatedObject, FleetError> {
        let federated_kind = doc.kind().to_string();
        let target_type = kinds.get(&federated_kind).cloned().ok_or_else(|| {
            doc.error(
                "/kind",
                format!("unknown federated kind {federated_kind}"),
                "use a built-in Federated kind or add a FederatedTypeConfig for it",
            )
        })?;
        let name = doc.name().to_string();
        if name.is_empty() {
            return Err(doc.error(
                "/metadata/name",
                "a federated object needs a name",
                "add `metadata.name`",
            ));
        }
        let fed_ns = doc.namespace().map(str::to_string);
        if fed_ns.is_none() && (target_type.namespaced || target_type.kind == "Namespace") {
            return Err(doc.error(
                "/metadata/namespace",
                format!("{federated_kind} is namespaced but has no namespace"),
                "add `metadata.namespace`",
            ));
        }
        if target_type.kind == "Namespace" && fed_ns.as_deref() != Some(name.as_str()) {
            return Err(doc.error(
                "/metadata/name",
                format!(
                    "FederatedNamespace {name} lives in namespace {}",
                    fed_ns.unwrap_or_default()
                ),
                "a FederatedNamespace must be named after the namespace it is in",
            ));
        }
        let template = match doc.value.pointer("/spec/template") {
            Some(Value::Object(map)) => map.clone(),
            Some(Value::Null) | None if target_type.kind == "Namespace" => Map::new(),
            _ => {
                return Err(doc.error(
                    "/spec/template",
                    "a federated object needs spec.template (the object to propagate)",
                    "add `template:` with the target object's fields",
                ));
            }
        };
        let mut object = Value::Object(template);
        let template_api = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .map(str::to_string);
        let mut dropped_annotations = false;
        if let Some(obj) = object.as_object_mut() {
            obj.insert(
                "apiVersion".into(),
                Value::String(template_api.unwrap_or_else(|| target_type.api_version.clone())),
            );
            obj.insert("kind".into(), Value::String(target_type.kind.clone()));
            let metadata = obj
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            if !metadata.is_object() {
                *metadata = Value::Object(Map::new());
            }
            if let Some(meta) = metadata.as_object_mut() {
                dropped_annotations = meta.remove("annotations").is_some();
                meta.remove("finalizers");
                meta.insert("name".into(), Value::String(name.clone()));
                if target_type.namespaced {
                    meta.insert(
                        "namespace".into(),
                        Value::String(fed_ns.clone().unwrap_or_default()),
                    );
                } else {
                    meta.remove("namespace");
                }
            }
        }
        let target = ResourceRef {
            api_version: object
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            kind: target_type.kind.clone(),
            namespace: if target_type.namespaced {
                fed_ns.clone()
            } else {
                None
            },
            name: name.clone(),
        };
        let placement_value = doc.value.pointer("/spec/placement");
        let mut unknown_clusters = Vec::new();
        let placement = match placement_value {
            Some(p) if p.get("clusters").is_some_and(|c| !c.is_null()) => {
                let list = p.get("clusters").and_then(Value::as_array).ok_or_else(|| {
                    doc.error(
                        "/spec/placement/clusters",
                        "clusters must be a list",
                        "write `clusters: [{name: c1}]`",
                    )
                })?;
                let mut names = Vec::new();
                for (i, item) in list.iter().enumerate() {
                    let n = item.get("name").and_then(scalar_text).ok_or_else(|| {
                        doc.error(
                            &format!("/spec/placement/clusters/{i}/name"),
                            "each placement cluster needs a name",
                            "write `- name: <cluster>`",
                        )
                    })?;
                    if clusters.iter().any(|c| c.name == n) {
                        names.push(n);
                    } else {
                        unknown_clusters.push(n);
                    }
                }
                KfPlacement::Clusters(names)
            }
            Some(p) if p.get("clusterSelector").is_some_and(|c| !c.is_null()) => {
                KfPlacement::Selector(LabelSelector::parse(
                    doc,
                    "/spec/placement/clusterSelector",
                )?)
            }
            _ => KfPlacement::None,
        };
        let mut overrides: Vec<ClusterOverride> = Vec::new();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let n = match doc.value.pointer("/spec/overrides") {
            None | Some(Value::Null) => 0,
            Some(Value::Array(items)) => items.len(),
            Some(_) => {
                return Err(doc.error(
                    "/spec/overrides",
                    "overrides must be a list",
                    "write `- clusterName: c1`",
                ));
            }
        };
        for i in 0..n {
            let p = format!("/spec/overrides/{i}");
            let cluster = doc
                .value
                .pointer(&format!("{p}/clusterName"))
                .and_then(scalar_text)
                .unwrap_or_default();
            if cluster.is_empty() {
                return Err(doc.error(
                    &format!("{p}/clusterName"),
                    "an override needs a clusterName",
                    "add `clusterName: <cluster>`",
                ));
            }
            if !seen.insert(cluster.clone()) {
                return Err(doc.error(
                    &format!("{p}/clusterName"),
                    format!("duplicate override for cluster {cluster}"),
                    "merge the clusterOverrides of both entries into one entry (KubeFed rejects the whole object)",
                ));
            }
            let lp = format!("{p}/clusterOverrides");
            let count = doc
                .value
                .pointer(&lp)
                .and_then(Value::as_array)
                .map(Vec::len)
                .unwrap_or(0);
            let mut ops = Vec::new();
            let mut paths: BTreeSet<String> = BTreeSet::new();
            for j in 0..count {
                let op_ptr = format!("{lp}/{j}");
                let op = PatchOp::parse(doc, &op_ptr, "op", "path", true)?;
                if FORBIDDEN.contains(&op.path.as_str()) {
                    return Err(doc.error(
                        &format!("{op_ptr}/path"),
                        format!("overriding {} is forbidden", op.path),
                        "KubeFed never overrides name, namespace, generateName or kind; create another federated object instead",
                    ));
                }
                if !paths.insert(op.path.clone()) {
                    return Err(doc.error(
                        &format!("{op_ptr}/path"),
                        format!("path {} is overridden twice for cluster {cluster}", op.path),
                        "keep one operation per path for a cluster",
                    ));
                }
                let path_ptr = format!("{op_ptr}/path");
                ops.push(Located {
                    field: pointer_to_field(&path_ptr),
                    line: doc.line_of(&path_ptr),
                    item: op,
                });
            }
            overrides.push(ClusterOverride { cluster, ops });
        }
        let source_key = match &fed_ns {
            Some(ns) => format!("{federated_kind}/{ns}/{name}"),
            None => format!("{federated_kind}/{name}"),
        };
        Ok(FederatedObject {
            federated_kind,
            target,
            target_type,
            object,
            placement,
            overrides,
            unknown_clusters,
            dropped_annotations,
            source_key,
        })
    }
}

/// Applies one override operation the way KubeFed v0.10.0 does. KubeFed applies overrides
/// with evanphx/json-patch v4.12, which differs from RFC 6902 in one place: `replace` of a
/// key missing from an existing object sets the key (RFC 6902 says the target must exist).
/// Everything else (a missing parent, an index past the end, `remove` of a missing key)
/// fails in both.
pub fn apply_override(op: &PatchOp, obj: &mut Value) -> Result<(), String> {
    if op.kind == crate::engine::overrides::patch::OpKind::Replace
        && let Ok(path) = jsonptr::Pointer::parse(&op.path)
        && let Some((parent, last)) = path.split_back()
        && let Some(Value::Object(map)) = obj.pointer_mut(parent.as_str())
    {
        let key = last.decoded().into_owned();
        if !map.contains_key(&key) {
            map.insert(key, op.value.clone().unwrap_or(Value::Null));
            return Ok(());
        }
    }
    op.apply(obj)
}

/// What KubeFed does to every object after that cluster's overrides: it sets
/// `kubefed.io/managed: "true"`, creating the labels map if needed and overwriting a value an
/// override put there.
pub fn add_managed_label(obj: &mut Value) {
    metadata::set_entry(obj, "labels", KUBEFED_MANAGED_LABEL, "true");
}

/// A ReplicaSchedulingPreference.
#[derive(Debug, Clone, PartialEq)]
pub struct Rsp {
    pub namespace: String,
    pub name: String,
    pub target_kind: String,
    pub total: i64,
    pub intersect: bool,
    pub clusters: BTreeMap<String, RspPreference>,
    pub location: String,
}

impl Rsp {
    pub fn parse(doc: &Doc) -> Result<Rsp, FleetError> {
        let target_kind = doc
            .value
            .pointer("/spec/targetKind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if target_kind != "FederatedDeployment" && target_kind != "FederatedReplicaSet" {
            return Err(doc.error(
                "/spec/targetKind",
                format!("targetKind `{target_kind}` cannot be scheduled"),
                "use FederatedDeployment or FederatedReplicaSet",
            ));
        }
        let total = doc
            .value
            .pointer("/spec/totalReplicas")
            .and_then(Value::as_i64)
            .filter(|t| *t >= 0)
            .ok_or_else(|| {
                doc.error(
                    "/spec/totalReplicas",
                    "totalReplicas must be a non-negative integer",
                    "set e.g. `totalReplicas: 9`",
                )
            })?;
        let intersect = doc
            .value
            .pointer("/spec/intersectWithClusterSelector")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let mut clusters = BTreeMap::new();
        if let Some(map) = doc
            .value
            .pointer("/spec/clusters")
            .and_then(Value::as_object)
        {
            for (name, pref) in map {
                let p = format!(
                    "/spec/clusters/{}",
                    crate::engine::document::parse::escape_token(name)
                );
                let int = |k: &str| pref.get(k).and_then(Value::as_i64);
                let weight = int("weight").unwrap_or(0);
                let min_replicas = int("minReplicas").unwrap_or(0);
                let max_replicas = int("maxReplicas");
                if weight < 0 || min_replicas < 0 || max_replicas.is_some_and(|m| m < min_replicas)
                {
                    return Err(doc.error(
                        &p,
                        "weights and replica bounds must be non-negative, with maxReplicas >= minReplicas",
                        "fix weight, minReplicas or maxReplicas",
                    ));
                }
                clusters.insert(
                    name.clone(),
                    RspPreference {
                        min_replicas,
                        max_replicas,
                        weight,
                    },
                );
            }
        }
        if clusters.is_empty() {
            clusters.insert(
                "*".into(),
                RspPreference {
                    min_replicas: 0,
                    max_replicas: None,
                    weight: 1,
                },
            );
        }
        Ok(Rsp {
            namespace: doc.namespace().unwrap_or("default").to_string(),
            name: doc.name().to_string(),
            target_kind,
            total,
            intersect,
            clusters,
            location: doc.location("").to_string(),
        })
    }

    pub fn preference(&self, cluster: &str) -> Option<RspPreference> {
        self.clusters
            .get(cluster)
            .or_else(|| self.clusters.get("*"))
            .copied()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::document::parse::parse_files;
    use crate::engine::document::source::SourceFile;

    fn parse(text: &str) -> Result<FederatedObject, FleetError> {
        let (docs, errors) = parse_files(&[SourceFile {
            path: "f.yaml".into(),
            text: text.into(),
        }]);
        assert!(errors.is_empty(), "{errors:?}");
        let clusters = vec![ClusterSpec {
            name: "a".into(),
            ..Default::default()
        }];
        FederatedObject::parse(&docs[0], &KindMap::builtin(), &clusters)
    }

    const HEAD: &str = "apiVersion: types.kubefed.io/v1beta1\nkind: FederatedConfigMap\nmetadata: {name: c, namespace: n}\nspec:\n  template: {data: {a: b}}\n";

    #[test]
    fn the_same_path_twice_for_one_cluster_rejects_the_object() {
        let err = parse(&format!(
            "{HEAD}  overrides:\n  - clusterName: a\n    clusterOverrides:\n    - {{path: /data/a, value: x}}\n    - {{op: remove, path: /data/a}}\n"
        ))
        .unwrap_err();
        assert_eq!(err.location.line, 10);
        assert!(err.message.contains("overridden twice"), "{}", err.message);
    }

    #[test]
    fn every_forbidden_path_is_rejected_and_api_version_is_allowed() {
        for path in FORBIDDEN {
            let err = parse(&format!(
                "{HEAD}  overrides:\n  - clusterName: a\n    clusterOverrides:\n    - {{path: {path}, value: x}}\n"
            ))
            .unwrap_err();
            assert!(err.message.contains("forbidden"), "{path}");
        }
        assert!(
            parse(&format!(
                "{HEAD}  overrides:\n  - clusterName: a\n    clusterOverrides:\n    - {{path: /apiVersion, value: v2}}\n"
            ))
            .is_ok()
        );
    }

    #[test]
    fn unknown_kinds_and_misnamed_namespaces_are_errors() {
        let err = parse("apiVersion: types.kubefed.io/v1beta1\nkind: FederatedGizmo\nmetadata: {name: g, namespace: n}\nspec: {template: {}}\n").unwrap_err();
        assert!(err.hint.contains("FederatedTypeConfig"));
        let err = parse("apiVersion: types.kubefed.io/v1beta1\nkind: FederatedNamespace\nmetadata: {name: a, namespace: b}\nspec: {}\n").unwrap_err();
        assert!(err.hint.contains("named after the namespace"));
    }

    fn op(
        kind: crate::engine::overrides::patch::OpKind,
        path: &str,
        value: Option<Value>,
    ) -> PatchOp {
        PatchOp::new(kind, path, value).unwrap()
    }

    #[test]
    fn replace_of_a_missing_key_sets_it_as_kubefeds_json_patch_does() {
        use crate::engine::overrides::patch::OpKind;
        use serde_json::json;
        let mut obj = json!({"data": {"a": "1"}, "spec": {"list": [1]}});
        // Seen on a real KubeFed v0.10.0: the member got data.missing.
        apply_override(
            &op(OpKind::Replace, "/data/missing", Some(json!("x"))),
            &mut obj,
        )
        .unwrap();
        assert_eq!(obj["data"], json!({"a": "1", "missing": "x"}));
        apply_override(
            &op(OpKind::Replace, "/data/a~1b", Some(json!("y"))),
            &mut obj,
        )
        .unwrap();
        assert_eq!(obj["data"]["a/b"], "y");
        // Still failures, as in KubeFed: a missing parent, an index past the end, removing
        // a missing key.
        let before = obj.clone();
        for (kind, path) in [
            (OpKind::Replace, "/nope/deeper"),
            (OpKind::Replace, "/spec/list/1"),
            (OpKind::Remove, "/data/none"),
            (OpKind::Add, "/metadata/labels/tier"),
        ] {
            let value = (kind != OpKind::Remove).then(|| json!(1));
            let err = apply_override(&op(kind, path, value), &mut obj).unwrap_err();
            assert!(err.contains(path), "{err}");
        }
        assert_eq!(obj, before);
    }

    #[test]
    fn the_managed_label_is_set_last_and_wins() {
        use serde_json::json;
        let mut bare = json!({"kind": "ConfigMap", "metadata": {"name": "c"}});
        add_managed_label(&mut bare);
        assert_eq!(
            bare["metadata"]["labels"],
            json!({"kubefed.io/managed": "true"})
        );
        let mut overridden =
            json!({"metadata": {"labels": {"kubefed.io/managed": "false", "x": "y"}}});
        add_managed_label(&mut overridden);
        assert_eq!(
            overridden["metadata"]["labels"],
            json!({"kubefed.io/managed": "true", "x": "y"})
        );
    }

    #[test]
    fn placement_forms() {
        let cases = [
            ("  placement: {clusters: []}\n", "none (clusters: [])"),
            ("  placement: {clusters: [{name: a}, {name: zz}]}\n", "a"),
            ("  placement: {clusterSelector: {}}\n", "all"),
            ("  placement: {}\n", "none"),
            ("", "none"),
        ];
        for (placement, summary) in cases {
            let fed = parse(&format!("{HEAD}{placement}")).unwrap();
            assert_eq!(fed.placement.summary(), summary, "{placement}");
        }
        let fed = parse(&format!(
            "{HEAD}  placement: {{clusters: [{{name: a}}, {{name: zz}}]}}\n"
        ))
        .unwrap();
        assert_eq!(fed.unknown_clusters, ["zz"]);
    }
}
