//! Adopting drift: turning a live value into a per-cluster override written in the resource's
//! own dialect, as new fleet-file texts. Karmada: a `plaintext` replace rule for that cluster
//! in an OverridePolicy flotilla owns (label `app.kubernetes.io/managed-by: flotilla`),
//! created next to the template when there is none. KubeFed: an entry in the Federated
//! object's `spec.overrides` for that cluster. Before anything is returned the edited fleet
//! is loaded again and the cluster's object rendered, so an override that would not take
//! effect (another policy applied after it, a ReplicaSchedulingPreference owning replicas) is
//! refused. It must not do I/O: it takes file texts and returns new ones.

use serde_json::{Map, Value, json};

use crate::engine::compare::diff::Segment;
use crate::engine::document::parse::{Doc, escape_token, parse_files};
use crate::engine::document::source::SourceFile;
use crate::engine::edit::EditError;
use crate::engine::edit::yaml_text;
use crate::engine::fleet::assemble::load_fleet;
use crate::engine::fleet::decide::{Decision, Fleet};
use crate::engine::fleet::plan::{MANAGED_BY_LABEL, MANAGED_BY_VALUE};
use crate::model::{Dialect, ResourceRef};

/// One field to adopt: where it is in the rendered object, and the live value (`None`: the
/// field is absent on the cluster, so the override removes it).
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// JSON pointer into the object the engine renders (indices of the rendered lists).
    pub pointer: String,
    pub value: Option<Value>,
}

/// The new text of one fleet file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileChange {
    pub path: String,
    /// The text before (`None` for a new file).
    pub old: Option<String>,
    pub new: String,
    pub warnings: Vec<String>,
}

/// Translates drift segments (keyed items by key, with their live index) into a pointer into
/// `desired`, matching keyed items by key. `None` when `desired` has no such place.
pub fn desired_pointer(desired: &Value, path: &[Segment]) -> Option<String> {
    let mut node = desired;
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Field(name) => {
                node = node.get(name)?;
                out.push('/');
                out.push_str(&escape_token(name));
            }
            Segment::Keyed { key, .. } => {
                let items = node.as_array()?;
                let (index, item) = items.iter().enumerate().find(|(_, item)| {
                    key.iter()
                        .all(|(k, v)| item.get(k).is_some_and(|iv| same_scalar(iv, v)))
                })?;
                node = item;
                out.push('/');
                out.push_str(&index.to_string());
            }
        }
    }
    Some(out)
}

fn same_scalar(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Files as the caller will write them: edits accumulate, so several adoptions into one file
/// see each other.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub files: Vec<SourceFile>,
    originals: Vec<Option<String>>,
    warnings: Vec<Vec<String>>,
    /// Where a new OverridePolicy goes when the template's file is not known.
    pub fallback_file: String,
}

impl Workspace {
    pub fn new(files: Vec<SourceFile>, fallback_file: String) -> Workspace {
        let originals = files.iter().map(|f| Some(f.text.clone())).collect();
        let warnings = files.iter().map(|_| Vec::new()).collect();
        Workspace {
            files,
            originals,
            warnings,
            fallback_file,
        }
    }

    fn set(&mut self, path: &str, text: String, warnings: Vec<String>) {
        match self.files.iter().position(|f| f.path == path) {
            Some(i) => {
                self.files[i].text = text;
                self.warnings[i].extend(warnings);
            }
            None => {
                self.files.push(SourceFile {
                    path: path.to_string(),
                    text,
                });
                self.originals.push(None);
                self.warnings.push(warnings);
            }
        }
    }

    fn text(&self, path: &str) -> &str {
        self.files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.text.as_str())
            .unwrap_or("")
    }

    /// The files whose text changed.
    pub fn changes(&self) -> Vec<FileChange> {
        self.files
            .iter()
            .zip(&self.originals)
            .zip(&self.warnings)
            .filter(|((file, old), _)| old.as_deref() != Some(file.text.as_str()))
            .map(|((file, old), warnings)| FileChange {
                path: file.path.clone(),
                old: old.clone(),
                new: file.text.clone(),
                warnings: warnings.clone(),
            })
            .collect()
    }

    /// Replaces document `doc` with `value` in its file.
    fn replace(&mut self, doc: &Doc, value: &Value) -> Result<(), EditError> {
        let edited =
            yaml_text::replace_document(&doc.file, self.text(&doc.file), doc.index, value)?;
        self.set(&doc.file, edited.text, edited.warnings);
        Ok(())
    }

    fn append(&mut self, path: &str, value: &Value) -> Result<(), EditError> {
        let text = yaml_text::append_document(path, self.text(path), value)?;
        self.set(path, text, Vec::new());
        Ok(())
    }

    fn docs(&self) -> Vec<Doc> {
        parse_files(&self.files).0
    }
}

/// Adopts `fields` of `resource` on `cluster` into the workspace's files. The caller checks
/// the result with [`verify`] once every adoption is in.
pub fn adopt(
    work: &mut Workspace,
    fleet: &Fleet,
    resource: &ResourceRef,
    cluster: &str,
    fields: &[Field],
) -> Result<(), EditError> {
    let federated = fleet
        .resources
        .iter()
        .find(|r| &r.target == resource)
        .ok_or_else(|| {
            EditError::missing(format!(
                "{} is not a resource of the fleet",
                resource.display_key()
            ))
        })?;
    match federated.dialect {
        Dialect::Karmada => adopt_karmada(work, resource, &federated.source.file, cluster, fields),
        Dialect::KubeFed => {
            let docs = work.docs();
            let doc = docs
                .iter()
                .find(|d| d.file == federated.source.file && d.line == federated.source.line)
                .ok_or_else(|| {
                    EditError::missing(format!(
                        "{}: the Federated object of {} is no longer there",
                        federated.source,
                        resource.display_key()
                    ))
                })?;
            let mut value = Value::clone(&doc.value);
            kubefed_override(&mut value, cluster, fields)?;
            work.replace(doc, &value)
        }
    }
}

fn kubefed_override(value: &mut Value, cluster: &str, fields: &[Field]) -> Result<(), EditError> {
    let spec = value
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| EditError::unsupported("the Federated object has no spec"))?;
    let overrides = spec
        .entry("overrides")
        .or_insert_with(|| Value::Array(Vec::new()));
    if overrides.is_null() {
        *overrides = Value::Array(Vec::new());
    }
    let list = overrides
        .as_array_mut()
        .ok_or_else(|| EditError::unsupported("spec.overrides is not a list"))?;
    let position = list
        .iter()
        .position(|o| o.get("clusterName").and_then(Value::as_str) == Some(cluster));
    let entry = match position {
        Some(i) => &mut list[i],
        None => {
            list.push(json!({"clusterName": cluster, "clusterOverrides": []}));
            let last = list.len() - 1;
            &mut list[last]
        }
    };
    let entry = entry
        .as_object_mut()
        .ok_or_else(|| EditError::unsupported("an override entry is not a mapping"))?;
    let ops = entry
        .entry("clusterOverrides")
        .or_insert_with(|| Value::Array(Vec::new()));
    if ops.is_null() {
        *ops = Value::Array(Vec::new());
    }
    let ops = ops
        .as_array_mut()
        .ok_or_else(|| EditError::unsupported("clusterOverrides is not a list"))?;
    for field in fields {
        let op = match &field.value {
            Some(value) => json!({"path": field.pointer, "value": value}),
            None => json!({"op": "remove", "path": field.pointer}),
        };
        // The last entry for a path wins; keep one.
        ops.retain(|o| o.get("path").and_then(Value::as_str) != Some(field.pointer.as_str()));
        ops.push(op);
    }
    Ok(())
}

fn is_flotilla_owned(doc: &Doc) -> bool {
    doc.value
        .pointer("/metadata/labels")
        .and_then(|l| l.get(MANAGED_BY_LABEL))
        .and_then(Value::as_str)
        == Some(MANAGED_BY_VALUE)
}

fn selector_for(resource: &ResourceRef) -> Value {
    json!({"apiVersion": resource.api_version, "kind": resource.kind, "name": resource.name})
}

fn plaintext(fields: &[Field]) -> Vec<Value> {
    fields
        .iter()
        .map(|f| match &f.value {
            Some(value) => json!({"path": f.pointer, "operator": "replace", "value": value}),
            None => json!({"path": f.pointer, "operator": "remove"}),
        })
        .collect()
}

fn adopt_karmada(
    work: &mut Workspace,
    resource: &ResourceRef,
    template_file: &str,
    cluster: &str,
    fields: &[Field],
) -> Result<(), EditError> {
    let docs = work.docs();
    if let Some(doc) = owned_policy(&docs, resource) {
        let mut value = Value::clone(&doc.value);
        let rules = value
            .pointer_mut("/spec/overrideRules")
            .and_then(Value::as_array_mut)
            .ok_or_else(|| {
                EditError::unsupported(format!(
                    "{}: spec.overrideRules is not a list",
                    doc.location("")
                ))
            })?;
        let target = json!({"clusterNames": [cluster]});
        let rule = rules
            .iter_mut()
            .find(|r| r.get("targetCluster") == Some(&target));
        match rule {
            Some(rule) => {
                let overriders = rule
                    .as_object_mut()
                    .ok_or_else(|| EditError::unsupported("an override rule is not a mapping"))?
                    .entry("overriders")
                    .or_insert_with(|| Value::Object(Map::new()));
                let overriders = overriders
                    .as_object_mut()
                    .ok_or_else(|| EditError::unsupported("overriders is not a mapping"))?;
                let list = overriders
                    .entry("plaintext")
                    .or_insert_with(|| Value::Array(Vec::new()));
                let list = list
                    .as_array_mut()
                    .ok_or_else(|| EditError::unsupported("plaintext is not a list"))?;
                for item in plaintext(fields) {
                    let path = item.get("path").cloned();
                    list.retain(|p| p.get("path") != path.as_ref());
                    list.push(item);
                }
            }
            None => rules.push(json!({
                "targetCluster": target,
                "overriders": {"plaintext": plaintext(fields)},
            })),
        }
        return work.replace(doc, &value);
    }
    let policy = new_policy(
        &docs,
        resource,
        vec![json!({
            "targetCluster": {"clusterNames": [cluster]},
            "overriders": {"plaintext": plaintext(fields)},
        })],
    );
    let file = if template_file.is_empty() {
        work.fallback_file.clone()
    } else {
        template_file.to_string()
    };
    work.append(&file, &policy)
}

/// The override policy kind for a resource: namespaced resources get an OverridePolicy in
/// their namespace, cluster-scoped ones a ClusterOverridePolicy.
pub(crate) fn policy_kind(resource: &ResourceRef) -> &'static str {
    if resource.namespace.is_some() {
        "OverridePolicy"
    } else {
        "ClusterOverridePolicy"
    }
}

/// flotilla's own override policy for exactly `resource` (labelled as flotilla's, selecting
/// only it): where new per-cluster rules go.
pub(crate) fn owned_policy<'a>(docs: &'a [Doc], resource: &ResourceRef) -> Option<&'a Doc> {
    let kind = policy_kind(resource);
    let selector = selector_for(resource);
    docs.iter().find(|d| {
        d.group() == "policy.karmada.io"
            && d.kind() == kind
            && d.namespace() == resource.namespace.as_deref()
            && is_flotilla_owned(d)
            && d.value.pointer("/spec/resourceSelectors") == Some(&json!([selector.clone()]))
    })
}

/// A new flotilla-owned override policy for `resource` holding `rules`, named to sort after
/// every existing policy of its kind and namespace so its rules are the ones that land.
pub(crate) fn new_policy(docs: &[Doc], resource: &ResourceRef, rules: Vec<Value>) -> Value {
    let policy_kind = policy_kind(resource);
    let taken: Vec<&str> = docs
        .iter()
        .filter(|d| d.kind() == policy_kind && d.namespace() == resource.namespace.as_deref())
        .map(Doc::name)
        .collect();
    let base = format!(
        "flotilla-adopt-{}-{}",
        resource.kind.to_ascii_lowercase(),
        resource.name
    );
    // Later policies (by name) override earlier ones: sort after every existing policy so the
    // adopted value is the one that lands.
    let base = match taken.iter().max() {
        Some(last) if *last > base.as_str() => {
            let z = last.chars().take_while(|c| *c == 'z').count() + 1;
            format!("{}-{base}", "z".repeat(z))
        }
        _ => base,
    };
    let mut name = base.clone();
    let mut n = 1;
    while taken.contains(&name.as_str()) {
        n += 1;
        name = format!("{base}-{n}");
    }
    let mut metadata = Map::new();
    metadata.insert("name".into(), Value::from(name));
    if let Some(ns) = &resource.namespace {
        metadata.insert("namespace".into(), Value::from(ns.clone()));
    }
    metadata.insert(
        "labels".into(),
        json!({ MANAGED_BY_LABEL: MANAGED_BY_VALUE }),
    );
    json!({
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": policy_kind,
        "metadata": metadata,
        "spec": {
            "resourceSelectors": [selector_for(resource)],
            "overrideRules": rules,
        },
    })
}

/// Loads the edited fleet and checks that every adopted field now renders as the live value
/// on its cluster. The error names what went wrong; nothing should be written then.
pub fn verify(
    work: &Workspace,
    adopted: &[(ResourceRef, String, Vec<Field>)],
) -> Result<(), EditError> {
    let (fleet, errors) = load_fleet(&work.files);
    if let Some(error) = errors.first() {
        return Err(EditError::AdoptedWouldNotLoad {
            count: errors.len(),
            first: Box::new(error.clone()),
        });
    }
    for (resource, cluster, fields) in adopted {
        let r = fleet
            .resources
            .iter()
            .position(|f| &f.target == resource)
            .ok_or_else(|| {
                EditError::missing(format!(
                    "{} vanished from the fleet",
                    resource.display_key()
                ))
            })?;
        let c = fleet.cluster_index(cluster).ok_or_else(|| {
            EditError::missing(format!("cluster {cluster} vanished from the fleet"))
        })?;
        let object = match fleet.decide(r, c) {
            Decision::Placed { object, .. } | Decision::Suspended { object, .. } => object,
            Decision::NotPlaced { reason } => {
                return Err(EditError::WouldNotTakeEffect(format!(
                    "{} would no longer be placed on {cluster}: {reason}",
                    resource.display_key()
                )));
            }
        };
        for field in fields {
            let got = object.pointer(&field.pointer);
            let ok = match (&field.value, got) {
                (None, None) => true,
                (Some(want), Some(got)) => {
                    want == got || want.as_f64().is_some_and(|w| got.as_f64() == Some(w))
                }
                _ => false,
            };
            if !ok {
                return Err(EditError::WouldNotTakeEffect(format!(
                    "adopting {} {} on {cluster} would not take effect: the fleet renders {} \
                     (another override applies after flotilla's, or a ReplicaSchedulingPreference owns the field)",
                    resource.display_key(),
                    field.pointer,
                    got.map(Value::to_string)
                        .unwrap_or_else(|| "nothing".into())
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const INVENTORY: &str = "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: east}\n---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: west}\n";

    const KARMADA: &str = "# the web tier\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 2 # two is plenty\n  template:\n    spec:\n      containers:\n      - {name: web, image: nginx:1}\n---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: web, namespace: shop}\nspec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]\n  placement: {}\n";

    fn files(fleet: &str) -> Vec<SourceFile> {
        vec![
            SourceFile {
                path: "clusters.yaml".into(),
                text: INVENTORY.into(),
            },
            SourceFile {
                path: "web.yaml".into(),
                text: fleet.into(),
            },
        ]
    }

    fn web() -> ResourceRef {
        ResourceRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: Some("shop".into()),
            name: "web".into(),
        }
    }

    fn replicas(n: i64) -> Vec<Field> {
        vec![Field {
            pointer: "/spec/replicas".into(),
            value: Some(json!(n)),
        }]
    }

    fn rendered(files: &[SourceFile], cluster: &str) -> Value {
        let (fleet, errors) = load_fleet(files);
        assert!(errors.is_empty(), "{errors:?}");
        let r = fleet
            .resources
            .iter()
            .position(|f| f.target == web())
            .unwrap();
        match fleet.decide(r, fleet.cluster_index(cluster).unwrap()) {
            Decision::Placed { object, .. } | Decision::Suspended { object, .. } => object,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn karmada_adoption_creates_then_extends_a_flotilla_policy() {
        let files = files(KARMADA);
        let (fleet, _) = load_fleet(&files);
        let mut work = Workspace::new(files.clone(), "flotilla-overrides.yaml".into());
        adopt(&mut work, &fleet, &web(), "west", &replicas(7)).unwrap();
        let adopted = vec![(web(), "west".to_string(), replicas(7))];
        verify(&work, &adopted).unwrap();
        let changes = work.changes();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].path, "web.yaml");
        assert!(
            changes[0].new.starts_with(KARMADA),
            "the other documents stay as they were"
        );
        assert_eq!(rendered(&work.files, "west")["spec"]["replicas"], 7);
        assert_eq!(rendered(&work.files, "east")["spec"]["replicas"], 2);

        // A second adoption (east, and west again) edits the same policy.
        let (fleet, _) = load_fleet(&work.files);
        adopt(&mut work, &fleet, &web(), "east", &replicas(4)).unwrap();
        adopt(&mut work, &fleet, &web(), "west", &replicas(9)).unwrap();
        verify(
            &work,
            &[
                (web(), "east".to_string(), replicas(4)),
                (web(), "west".to_string(), replicas(9)),
            ],
        )
        .unwrap();
        let text = &work.changes()[0].new;
        assert_eq!(text.matches("kind: OverridePolicy").count(), 1, "{text}");
        assert_eq!(text.matches("value: 7").count(), 0, "{text}");
    }

    #[test]
    fn kubefed_adoption_adds_a_cluster_override() {
        let fed = "apiVersion: types.kubefed.io/v1beta1\nkind: FederatedNamespace\nmetadata: {name: shop, namespace: shop}\nspec:\n  placement: {clusters: [{name: east}, {name: west}]}\n---\napiVersion: types.kubefed.io/v1beta1\nkind: FederatedDeployment\nmetadata: {name: web, namespace: shop}\nspec:\n  template:\n    spec:\n      replicas: 2\n      template: {spec: {containers: [{name: web, image: nginx:1}]}}\n  placement: {clusters: [{name: east}, {name: west}]}\n  overrides:\n  - clusterName: east\n    clusterOverrides: [{path: /spec/replicas, value: 3}]\n";
        let files = files(fed);
        let (fleet, errors) = load_fleet(&files);
        assert!(errors.is_empty(), "{errors:?}");
        let mut work = Workspace::new(files, "x.yaml".into());
        let image = vec![Field {
            pointer: "/spec/template/spec/containers/0/image".into(),
            value: Some(json!("nginx:2")),
        }];
        adopt(&mut work, &fleet, &web(), "west", &image).unwrap();
        adopt(&mut work, &fleet, &web(), "east", &replicas(5)).unwrap();
        verify(
            &work,
            &[
                (web(), "west".into(), image.clone()),
                (web(), "east".into(), replicas(5)),
            ],
        )
        .unwrap();
        let text = &work.changes()[0].new;
        assert_eq!(text.matches("clusterName: east").count(), 1, "{text}");
        assert!(!text.contains("value: 3"), "{text}");
    }

    #[test]
    fn a_new_policy_sorts_after_a_user_policy_that_sets_the_same_field() {
        // A user policy whose name sorts after flotilla-… sets replicas for west too.
        let later = format!(
            "{KARMADA}---\napiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata: {{name: zz-pin, namespace: shop}}\nspec:\n  resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: web}}]\n  overrideRules:\n  - targetCluster: {{clusterNames: [west]}}\n    overriders: {{plaintext: [{{path: /spec/replicas, operator: replace, value: 1}}]}}\n"
        );
        let files = files(&later);
        let (fleet, errors) = load_fleet(&files);
        assert!(errors.is_empty(), "{errors:?}");
        let mut work = Workspace::new(files, "x.yaml".into());
        adopt(&mut work, &fleet, &web(), "west", &replicas(7)).unwrap();
        verify(&work, &[(web(), "west".into(), replicas(7))]).unwrap();
        let text = &work.changes()[0].new;
        assert!(
            text.contains("name: zzz-flotilla-adopt-deployment-web"),
            "{text}"
        );
        assert_eq!(rendered(&work.files, "west")["spec"]["replicas"], 7);
    }

    #[test]
    fn an_override_that_would_not_take_effect_is_refused() {
        // A ReplicaSchedulingPreference owns replicas: a KubeFed override of them is skipped.
        let fed = "apiVersion: types.kubefed.io/v1beta1\nkind: FederatedNamespace\nmetadata: {name: shop, namespace: shop}\nspec:\n  placement: {clusters: [{name: east}, {name: west}]}\n---\napiVersion: types.kubefed.io/v1beta1\nkind: FederatedDeployment\nmetadata: {name: web, namespace: shop}\nspec:\n  template:\n    spec:\n      replicas: 2\n      template: {spec: {containers: [{name: web, image: nginx:1}]}}\n  placement: {clusters: [{name: east}, {name: west}]}\n---\napiVersion: scheduling.kubefed.io/v1alpha1\nkind: ReplicaSchedulingPreference\nmetadata: {name: web, namespace: shop}\nspec:\n  targetKind: FederatedDeployment\n  totalReplicas: 4\n  clusters: {east: {weight: 1}, west: {weight: 1}}\n";
        let files = files(fed);
        let (fleet, errors) = load_fleet(&files);
        assert!(errors.is_empty(), "{errors:?}");
        let mut work = Workspace::new(files, "x.yaml".into());
        adopt(&mut work, &fleet, &web(), "west", &replicas(7)).unwrap();
        let err = verify(&work, &[(web(), "west".into(), replicas(7))]).unwrap_err();
        assert!(
            matches!(&err, EditError::WouldNotTakeEffect(m) if m.contains("would not take effect")),
            "{err}"
        );
    }

    #[test]
    fn keyed_segments_map_to_the_rendered_index() {
        let desired =
            json!({"spec": {"containers": [{"name": "a"}, {"name": "web", "image": "x"}]}});
        let path = vec![
            Segment::Field("spec".into()),
            Segment::Field("containers".into()),
            Segment::Keyed {
                key: [("name".to_string(), json!("web"))].into_iter().collect(),
                index: 0,
            },
            Segment::Field("image".into()),
        ];
        assert_eq!(
            desired_pointer(&desired, &path).as_deref(),
            Some("/spec/containers/1/image")
        );
    }
}
