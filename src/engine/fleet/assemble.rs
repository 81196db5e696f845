//! Assembles a [`Fleet`] from parsed documents: classifies them, builds the inventory, turns
//! every template and Federated object into a per-resource plan (placement per cluster,
//! replicas, the distinct override sequences), validates overrides once per sequence, and
//! sorts everything by stable keys. It must not do I/O or keep rendered objects.

use std::borrow::Cow;
use std::collections::BTreeMap;

use foldhash::{HashMap, HashMapExt};
use std::sync::Arc;

use serde_json::Value;

use crate::engine::dialect::api_groups;
use crate::engine::dialect::karmada::{OverridePolicy, Precision, PropagationPolicy, best_match};
use crate::engine::dialect::karmada_behaviour::ConflictResolution;
use crate::engine::dialect::kubefed::{FederatedObject, KindMap, Rsp};
use crate::engine::document::builtin;
use crate::engine::document::parse::{Doc, ParsedDocs, parse_files_spanned};
use crate::engine::document::source::{FleetError, SourceFile, SourceLocation};
use crate::engine::fleet::decide::{FederatedResource, Fleet};
use crate::engine::fleet::interpreted::{components_step, interpreted_replicas, interpreters_of};
use crate::engine::fleet::inventory::{self, InventoryKind};
use crate::engine::fleet::karmada_inputs::{KarmadaInputs, compact};
use crate::engine::interpreter::Operation;
use crate::engine::interpreter::dependencies::{Reference, dependencies, has_dependency_rule};
use crate::engine::overrides::overriders::OverrideFailure;
use crate::engine::place::replicas::kubefed_plan;
use crate::model::{ClusterSpec, Dialect, ResourceRef};

use crate::engine::fleet::plan::{
    Cell, Origin, OverrideSet, Plan, Provenance, RequiredBy, mark, replica_path, set_path,
};

/// Kinds that are cluster-scoped in Kubernetes (everything else is namespaced unless a CRD in
/// the fleet says otherwise).
const CLUSTER_SCOPED: &[&str] = &[
    "Namespace",
    "Node",
    "PersistentVolume",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "StorageClass",
    "PriorityClass",
    "IngressClass",
    "RuntimeClass",
    "CSIDriver",
    "CSINode",
    "VolumeAttachment",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "CertificateSigningRequest",
    "FlowSchema",
    "PriorityLevelConfiguration",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    KarmadaCluster,
    KubeFedCluster,
    ClusterProfile,
    TypeConfig,
    Ignored,
    DriftIgnore,
    UnknownFlotilla,
    Rsp,
    Propagation,
    Override,
    Federated,
    Template,
}

fn classify(doc: &Doc, kinds: &KindMap) -> Class {
    let group = doc.group();
    let kind = doc.kind();
    match (group, kind) {
        ("cluster.karmada.io", "Cluster") => Class::KarmadaCluster,
        ("core.kubefed.io", "KubeFedCluster") => Class::KubeFedCluster,
        ("multicluster.x-k8s.io", "ClusterProfile") => Class::ClusterProfile,
        ("core.kubefed.io", "FederatedTypeConfig") => Class::TypeConfig,
        ("scheduling.kubefed.io", "ReplicaSchedulingPreference") => Class::Rsp,
        ("flotilla.dev", crate::engine::compare::ignore::KIND) => Class::DriftIgnore,
        ("flotilla.dev", _) => Class::UnknownFlotilla,
        ("policy.karmada.io", "PropagationPolicy" | "ClusterPropagationPolicy") => {
            Class::Propagation
        }
        ("policy.karmada.io", "OverridePolicy" | "ClusterOverridePolicy") => Class::Override,
        (
            "core.kubefed.io"
            | "scheduling.kubefed.io"
            | "policy.karmada.io"
            | "work.karmada.io"
            | "cluster.karmada.io"
            | "config.karmada.io"
            | "apps.karmada.io"
            | "search.karmada.io"
            | "autoscaling.karmada.io"
            | "networking.karmada.io"
            | "remedy.karmada.io",
            _,
        ) => Class::Ignored,
        _ if kinds.is_federated(group, kind) => Class::Federated,
        _ => Class::Template,
    }
}

/// Removes what the hub's API server owns and never propagates.
fn prune(obj: &mut Value) {
    if let Some(root) = obj.as_object_mut() {
        root.remove("status");
        if let Some(meta) = root.get_mut("metadata").and_then(Value::as_object_mut) {
            for key in [
                "uid",
                "resourceVersion",
                "generation",
                "creationTimestamp",
                "managedFields",
                "selfLink",
                "ownerReferences",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
            ] {
                meta.remove(key);
            }
        }
    }
    if obj.get("kind").and_then(Value::as_str) == Some("Service")
        && let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut)
        && spec.get("clusterIP").and_then(Value::as_str) != Some("None")
    {
        spec.remove("clusterIP");
        spec.remove("clusterIPs");
    }
}

pub(super) struct Built {
    pub(super) resource: FederatedResource,
    pub(super) plan: Plan,
}

impl Built {
    /// Where the resource goes in the fleet: Namespaces, then CRDs, then the rest, each by
    /// namespace, name, kind, apiVersion and dialect.
    fn order(&self) -> (u8, &str, &str, &str, &str, u8) {
        let t = &self.resource.target;
        (
            kind_rank(&t.kind),
            t.namespace.as_deref().unwrap_or_default(),
            &t.name,
            &t.kind,
            &t.api_version,
            self.resource.dialect as u8,
        )
    }
}

fn kind_rank(kind: &str) -> u8 {
    match kind {
        "Namespace" => 0,
        "CustomResourceDefinition" => 1,
        _ => 2,
    }
}

fn built(resource: FederatedResource, plan: Plan) -> Built {
    Built { resource, plan }
}

/// Loads every document of `files`, returning the fleet built from what could be read and
/// every error found (sorted by file and line). Deterministic regardless of file and document
/// order: documents are sorted by identity before anything is built.
pub fn load_fleet(files: &[SourceFile]) -> (Fleet, Vec<FleetError>) {
    let (docs, errors, spans) = parse_files_spanned(files);
    let parsed = ParsedDocs {
        clean: errors.is_empty(),
        docs: docs.into_iter().map(Arc::new).collect(),
        spans,
    };
    assemble(Arc::new(parsed), errors)
}

pub(super) fn assemble(
    parsed: Arc<ParsedDocs>,
    mut errors: Vec<FleetError>,
) -> (Fleet, Vec<FleetError>) {
    // Sorted by identity, then place; each key read once. The fleet keeps its documents in
    // this order, so the next assembly of an edit (one document read again) sorts a list
    // that is already in order: one pass.
    let mut keyed: Vec<_> = parsed
        .docs
        .iter()
        .map(|doc| {
            let key = (
                doc.api_version(),
                doc.kind(),
                doc.namespace(),
                doc.name(),
                doc.file.as_str(),
                doc.line,
            );
            (key, doc)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    let in_order = keyed
        .iter()
        .zip(&parsed.docs)
        .all(|((_, sorted), doc)| Arc::ptr_eq(sorted, doc));
    let parsed = if in_order {
        parsed.clone()
    } else {
        Arc::new(ParsedDocs {
            docs: keyed.iter().map(|(_, doc)| Arc::clone(doc)).collect(),
            clean: parsed.clean,
            spans: parsed.spans.clone(),
        })
    };
    let docs: Vec<&Doc> = parsed.docs.iter().map(|doc| &**doc).collect();
    let mut good = Vec::with_capacity(docs.len());
    for doc in docs {
        if !doc.value.is_object() {
            errors.push(doc.error(
                "",
                "a document must be a mapping (a Kubernetes object)",
                "remove the document or make it an object with apiVersion, kind and metadata",
            ));
        } else if doc.api_version().is_empty() {
            errors.push(doc.error(
                "/apiVersion",
                "the document has no apiVersion",
                "add `apiVersion:` (e.g. apps/v1)",
            ));
        } else if doc.kind().is_empty() {
            errors.push(doc.error(
                "/kind",
                "the document has no kind",
                "add `kind:` (e.g. Deployment)",
            ));
        } else {
            good.push(doc);
        }
    }
    let docs = good;

    let mut kinds = KindMap::builtin();
    for doc in docs
        .iter()
        .filter(|d| d.group() == "core.kubefed.io" && d.kind() == "FederatedTypeConfig")
    {
        if let Err(e) = kinds.add_type_config(doc) {
            errors.push(e);
        }
    }
    let mut crd_scopes: HashMap<(&str, &str), bool> = HashMap::new();
    for doc in docs
        .iter()
        .filter(|d| d.kind() == "CustomResourceDefinition")
    {
        let group = doc
            .value
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or("");
        let kind = doc
            .value
            .pointer("/spec/names/kind")
            .and_then(Value::as_str)
            .unwrap_or("");
        let namespaced =
            doc.value.pointer("/spec/scope").and_then(Value::as_str) != Some("Cluster");
        crd_scopes.insert((group, kind), namespaced);
    }

    let mut classes: Vec<Class> = Vec::with_capacity(docs.len());
    for doc in &docs {
        classes.push(match api_groups::check(doc) {
            Ok(()) => classify(doc, &kinds),
            Err(e) => {
                errors.push(e);
                Class::Ignored
            }
        });
    }

    let mut inventory_entries = Vec::new();
    for (doc, class) in docs.iter().zip(&classes) {
        let kind = match class {
            Class::KarmadaCluster => InventoryKind::Karmada,
            Class::KubeFedCluster => InventoryKind::KubeFed,
            Class::ClusterProfile => InventoryKind::ClusterProfile,
            _ => continue,
        };
        match inventory::parse_cluster_once(doc, kind) {
            Ok(spec) => inventory_entries.push((*doc, kind, spec)),
            Err(e) => errors.push(e),
        }
    }
    // The contexts `--context` selected are the inventory of a fleet that declares none.
    if inventory_entries
        .iter()
        .any(|(doc, _, _)| !inventory::from_contexts(doc))
    {
        inventory_entries.retain(|(doc, _, _)| !inventory::from_contexts(doc));
    }
    let clusters = inventory::merge(inventory_entries, &mut errors);

    let mut ignores = Vec::new();
    for (doc, class) in docs.iter().zip(&classes) {
        match class {
            Class::DriftIgnore => {
                match crate::engine::compare::ignore::IgnoreRule::parse(doc, &clusters) {
                    Ok(rule) => ignores.push(rule),
                    Err(e) => errors.push(e),
                }
            }
            Class::UnknownFlotilla => errors.push(doc.error(
                "/kind",
                format!("flotilla.dev has no kind {}", doc.kind()),
                format!(
                    "flotilla.dev/v1alpha1 knows only {}; fix the kind or remove the document",
                    crate::engine::compare::ignore::KIND
                ),
            )),
            _ => {}
        }
    }

    let interpreters = Arc::new(interpreters_of(&docs, &mut errors));

    let mut propagation: Vec<PropagationPolicy> = Vec::new();
    // The document of each policy, for the fleet's provenance.
    let mut policy_docs: Vec<*const Doc> = Vec::new();
    let mut overrides: Vec<(OverridePolicy, String)> = Vec::new();
    let mut rsps: Vec<Rsp> = Vec::new();
    let mut seen_policies: BTreeMap<(String, Option<String>, String), String> = BTreeMap::new();
    for (doc, class) in docs.iter().zip(&classes) {
        if !matches!(class, Class::Propagation | Class::Override | Class::Rsp) {
            continue;
        }
        let key = (
            doc.kind().to_string(),
            doc.namespace().map(str::to_string),
            doc.name().to_string(),
        );
        if let Some(first) = seen_policies.get(&key) {
            errors.push(doc.error(
                "/metadata/name",
                format!(
                    "{} {} is declared twice (first at {first})",
                    doc.kind(),
                    doc.name()
                ),
                "remove or rename one of them",
            ));
            continue;
        }
        seen_policies.insert(key, doc.location("").to_string());
        match class {
            Class::Propagation => match PropagationPolicy::parse(doc) {
                Ok(p) => {
                    propagation.push(p);
                    policy_docs.push(std::ptr::from_ref::<Doc>(doc));
                }
                Err(e) => errors.push(e),
            },
            Class::Override => match OverridePolicy::parse(doc, &clusters) {
                Ok(p) => overrides.push((p, doc.file.clone())),
                Err(e) => errors.push(e),
            },
            _ => match Rsp::parse(doc) {
                Ok(r) => rsps.push(r),
                Err(e) => errors.push(e),
            },
        }
    }
    // Override policies in upstream's order of application groups: cluster-scoped first.
    overrides.sort_by(|a, b| {
        (a.0.namespace.is_some(), &a.0.namespace, &a.0.name).cmp(&(
            b.0.namespace.is_some(),
            &b.0.namespace,
            &b.0.name,
        ))
    });

    let mut builds: Vec<Built> = Vec::new();
    let mut targets: Claims<'_> = HashMap::with_capacity(docs.len());
    let mut claim = |target: &ResourceRef, doc, borrowed, errors: &mut Vec<FleetError>| {
        claim_target(&mut targets, target, doc, borrowed, errors)
    };

    let inputs = KarmadaInputs::new(&propagation, &interpreters, &overrides, &clusters);
    let mut fed_docs: Vec<(&Doc, FederatedObject)> = Vec::new();
    // Karmada templates with a plan: (index into `builds`, document).
    let mut karmada_templates: Vec<(usize, &Doc)> = Vec::new();
    for (doc, class) in docs.iter().zip(&classes) {
        match class {
            Class::Federated => match FederatedObject::parse(doc, &kinds, &clusters) {
                Ok(fed) => {
                    if !claim(&fed.target, doc, false, &mut errors) {
                        continue;
                    }
                    match builtin::check(doc, "/spec/template", &fed.object) {
                        Ok(()) => fed_docs.push((doc, fed)),
                        Err(e) => {
                            errors.push(e.clone());
                            builds.extend(invalid_resource(
                                doc,
                                Dialect::KubeFed,
                                &e,
                                clusters.len(),
                                &kinds,
                            ));
                        }
                    }
                }
                Err(e) => {
                    errors.push(e.clone());
                    if let Some(b) =
                        invalid_resource(doc, Dialect::KubeFed, &e, clusters.len(), &kinds)
                        && claim(&b.resource.target, doc, false, &mut Vec::new())
                    {
                        builds.push(b);
                    }
                }
            },
            Class::Template => {
                if doc.name().is_empty() {
                    errors.push(doc.error(
                        "/metadata/name",
                        "the object has no name",
                        "add `metadata.name`",
                    ));
                    continue;
                }
                let namespaced = if CLUSTER_SCOPED.contains(&doc.kind()) {
                    false
                } else {
                    *crd_scopes.get(&(doc.group(), doc.kind())).unwrap_or(&true)
                };
                let target = ResourceRef {
                    api_version: doc.api_version().to_string(),
                    kind: doc.kind().to_string(),
                    namespace: namespaced.then(|| doc.namespace().unwrap_or("default").to_string()),
                    name: doc.name().to_string(),
                };
                if !claim(&target, doc, true, &mut errors) {
                    continue;
                }
                if let Err(e) = builtin::check_document(doc) {
                    errors.push(e.clone());
                    builds.extend(invalid_resource(
                        doc,
                        Dialect::Karmada,
                        &e,
                        clusters.len(),
                        &kinds,
                    ));
                } else {
                    karmada_templates.push((builds.len(), doc));
                    builds.push(karmada_plan(doc, target, &inputs, &[], &mut errors));
                }
            }
            _ => {}
        }
    }
    propagate_dependencies(&mut builds, &karmada_templates, &inputs, &mut errors);
    // FederatedNamespaces first: namespaced Federated objects intersect with their placement.
    let mut ns_placement: BTreeMap<String, (Vec<Option<String>>, String)> = BTreeMap::new();
    for (doc, fed) in fed_docs
        .iter()
        .filter(|(_, f)| f.target_type.kind == "Namespace")
    {
        let b = kubefed_plan_for(doc, fed, None, &clusters, &rsps, &mut errors);
        let cells: Vec<Option<String>> = (0..clusters.len())
            .map(|c| match b.plan.cells[c] {
                Cell::Placed { .. } => None,
                Cell::NotPlaced(i) => Some(b.plan.reasons[i as usize].clone()),
            })
            .collect();
        ns_placement.insert(fed.target.name.clone(), (cells, fed.source_key.clone()));
        builds.push(b);
    }
    for (doc, fed) in fed_docs
        .iter()
        .filter(|(_, f)| f.target_type.kind != "Namespace")
    {
        let ns = if fed.target_type.namespaced {
            Some(
                fed.target
                    .namespace
                    .as_ref()
                    .and_then(|n| ns_placement.get(n))
                    .map(|(cells, key)| (cells.as_slice(), key.as_str())),
            )
        } else {
            None
        };
        builds.push(kubefed_plan_for(
            doc,
            fed,
            ns,
            &clusters,
            &rsps,
            &mut errors,
        ));
    }

    // Sorted by key through their indices (a stable sort, as of the builds themselves, which
    // are large to move).
    let mut order: Vec<usize> = (0..builds.len()).collect();
    order.sort_by(|&a, &b| builds[a].order().cmp(&builds[b].order()));
    let provenance = errors.is_empty().then(|| {
        Arc::new(provenance(
            &parsed,
            &order,
            &karmada_templates,
            &policy_docs,
            &overrides,
        ))
    });
    let mut slots: Vec<Option<Built>> = builds.into_iter().map(Some).collect();
    let mut resources = Vec::with_capacity(slots.len());
    let mut plans = Vec::with_capacity(slots.len());
    for b in order.into_iter().filter_map(|i| slots[i].take()) {
        resources.push(b.resource);
        plans.push(b.plan);
    }

    let mut fleet = Fleet {
        clusters,
        resources,
        plans,
        propagation,
        overrides: overrides.into_iter().map(|(p, _)| p).collect(),
        namespaces: Vec::new(),
        ignores,
        parsed: Some(parsed.clone()),
        provenance,
        interpreters,
    };
    super::namespaces::finish_namespaces(&mut fleet);
    errors.sort_by(|a, b| {
        (&a.location, &a.field, &a.message).cmp(&(&b.location, &b.field, &b.message))
    });
    errors.dedup();
    (fleet, errors)
}

/// Where a fleet assembled without errors came from: the document of every Karmada template
/// (by the resources' final order) and of every PropagationPolicy, and each override
/// policy's file.
fn provenance(
    parsed: &ParsedDocs,
    order: &[usize],
    templates: &[(usize, &Doc)],
    policy_docs: &[*const Doc],
    overrides: &[(OverridePolicy, String)],
) -> Provenance {
    let position: HashMap<*const Doc, u32> = parsed
        .docs
        .iter()
        .enumerate()
        .map(|(i, doc)| (Arc::as_ptr(doc), i as u32))
        .collect();
    let mut by_build: HashMap<usize, u32> = HashMap::with_capacity(templates.len());
    for &(build, doc) in templates {
        if let Some(&at) = position.get(&std::ptr::from_ref(doc)) {
            by_build.insert(build, at);
        }
    }
    Provenance {
        template_docs: order
            .iter()
            .map(|build| by_build.get(build).copied())
            .collect(),
        policy_docs: policy_docs
            .iter()
            .map(|doc| position.get(doc).copied())
            .collect(),
        override_files: overrides.iter().map(|(_, file)| file.clone()).collect(),
    }
}

/// The documents that declared each object (kind, namespace, name), first come first kept.
/// Keys borrow from the documents where they can (a template's identity is its own).
type Claims<'d> = HashMap<ClaimKey<'d>, &'d Doc>;
type ClaimKey<'d> = (Cow<'d, str>, Option<Cow<'d, str>>, Cow<'d, str>);

/// Records that `doc` declares `target`, or says it is declared twice. A template's target
/// is named by its document (`borrowed`), a Federated object's by its template.
fn claim_target<'d>(
    claims: &mut Claims<'d>,
    target: &ResourceRef,
    doc: &'d Doc,
    borrowed: bool,
    errors: &mut Vec<FleetError>,
) -> bool {
    let key: ClaimKey<'d> = if borrowed {
        (
            Cow::Borrowed(doc.kind()),
            target.namespace.as_ref().map(|ns| match doc.namespace() {
                Some(own) if own == ns => Cow::Borrowed(own),
                _ => Cow::Owned(ns.clone()),
            }),
            Cow::Borrowed(doc.name()),
        )
    } else {
        (
            Cow::Owned(target.kind.clone()),
            target.namespace.clone().map(Cow::Owned),
            Cow::Owned(target.name.clone()),
        )
    };
    debug_assert!(key.0 == target.kind.as_str() && key.2 == target.name.as_str());
    if let Some(first) = claims.get(&key) {
        errors.push(doc.error(
            "/metadata/name",
            format!(
                "{target} is already declared at {}; the same object cannot be propagated twice",
                first.location("")
            ),
            "remove one of the two, or rename it",
        ));
        return false;
    }
    claims.insert(key, doc);
    true
}

/// A resource whose document is broken but identifiable: listed, never placed.
fn invalid_resource(
    doc: &Doc,
    dialect: Dialect,
    error: &FleetError,
    clusters: usize,
    kinds: &KindMap,
) -> Option<Built> {
    if doc.name().is_empty() {
        return None;
    }
    let (api_version, kind, namespace) = match dialect {
        Dialect::KubeFed => {
            let t = kinds.get(doc.kind())?;
            (
                t.api_version.clone(),
                t.kind.clone(),
                if t.namespaced {
                    doc.namespace().map(str::to_string)
                } else {
                    None
                },
            )
        }
        Dialect::Karmada => (
            doc.api_version().to_string(),
            doc.kind().to_string(),
            doc.namespace().map(str::to_string),
        ),
    };
    let target = ResourceRef {
        api_version,
        kind,
        namespace,
        name: doc.name().to_string(),
    };
    let mut plan = Plan::new(
        Value::Null,
        &Plan::nowhere(clusters),
        Origin::Invalid,
        String::new(),
    );
    plan.not_placed_everywhere(format!(
        "invalid {}: {} ({})",
        doc.kind(),
        error.message,
        error.location
    ));
    plan.summary = "invalid".into();
    Some(built(
        FederatedResource {
            target,
            dialect,
            source: doc.location(""),
        },
        plan,
    ))
}

/// The template as every cluster starts from it — pruned of what the hub owns, in its
/// namespace, marked with its source — and its source key. Worked out once per document and
/// identity.
fn template_base(doc: &Doc, target: &ResourceRef) -> (Arc<Value>, String) {
    if let Some((known, base, key)) = doc.memo.base.get()
        && known == target
    {
        return (base.clone(), key.clone());
    }
    let source_key = target.display_key();
    let mut base = Value::clone(&doc.value);
    prune(&mut base);
    if let Some(ns) = &target.namespace {
        set_path(&mut base, "/metadata/namespace", Value::String(ns.clone()));
    }
    mark(&mut base, &source_key);
    let base = Arc::new(base);
    // The first identity is kept; another (a CRD changed the scope) is worked out each time.
    let _ = doc
        .memo
        .base
        .set((target.clone(), base.clone(), source_key.clone()));
    (base, source_key)
}

pub(super) fn karmada_plan(
    doc: &Doc,
    target: ResourceRef,
    inputs: &KarmadaInputs<'_>,
    required_by: &[RequiredBy],
    errors: &mut Vec<FleetError>,
) -> Built {
    let (policies, overrides, clusters) = (inputs.policies, inputs.overrides, inputs.clusters);
    let (base, source_key) = template_base(doc, &target);
    let labels = doc.labels();
    let replica_path = replica_path(&target.kind);
    // A custom kind's replicas, as a fleet's Karmada interpreter reads them.
    let interpreted = replica_path
        .is_none()
        .then(|| interpreted_replicas(&base, &target, inputs.interpreters, &doc.memo))
        .flatten();
    let template_replicas = match &interpreted {
        Some((Ok(replicas), _)) => Some(*replicas),
        Some((Err(_), _)) => None,
        None => replica_path.map(|p| base.pointer(p).and_then(Value::as_i64).unwrap_or(1)),
    };
    let resource = FederatedResource {
        target,
        dialect: Dialect::Karmada,
        source: doc.location(""),
    };
    let target = &resource.target;

    // Which policy claims the template: a PropagationPolicy in its namespace beats any
    // ClusterPropagationPolicy; then priority, then precision, then name.
    let mut candidates: Vec<(usize, Precision)> = policies
        .iter()
        .enumerate()
        .filter(|(_, p)| match &p.namespace {
            Some(ns) => target.namespace.as_deref() == Some(ns.as_str()),
            None => true,
        })
        .filter_map(|(i, p)| best_match(&p.selectors, target, labels).map(|prec| (i, prec)))
        .collect();
    candidates.sort_by(|&(a, pa), &(b, pb)| {
        let (x, y) = (&policies[a], &policies[b]);
        (y.namespace.is_some())
            .cmp(&x.namespace.is_some())
            .then(y.priority.cmp(&x.priority))
            .then(pb.cmp(&pa))
            .then(x.name.cmp(&y.name))
    });
    let mut plan = Plan::new(
        base,
        &inputs.nowhere,
        Origin::Karmada {
            policy: candidates.first().map(|c| c.0),
        },
        source_key,
    );
    plan.replica_path = replica_path;
    // A multi-component kind: what Karmada's scheduler would size clusters by.
    if let Some(step) = components_step(&plan.base, target, inputs.interpreters, &doc.memo) {
        plan.steps.push(step);
    }
    if let Some((replicas, revise)) = interpreted {
        if let Err(reason) = replicas {
            plan.not_placed_everywhere(reason.clone());
            plan.steps.push(reason);
            return built(resource, plan);
        }
        plan.interpreted = Some(revise);
    }
    // Upstream's dependencies distributor: an attached binding takes Overwrite when any
    // workload that needs it has it, else Abort; the template's annotation comes first.
    let required_resolution = if required_by
        .iter()
        .any(|r| r.conflict_resolution == ConflictResolution::Overwrite)
    {
        ConflictResolution::Overwrite
    } else {
        ConflictResolution::Abort
    };
    let Some(&(chosen, _)) = candidates.first() else {
        if !required_by.is_empty() {
            plan.conflict_resolution = Some(ConflictResolution::for_template(
                required_resolution,
                &doc.value,
            ));
            let names: Vec<&str> = required_by.iter().map(|r| r.workload.as_str()).collect();
            plan.summary = format!("dependency of {}", names.join(", ")).into();
            plan.steps.push(format!(
                "no PropagationPolicy selects it; the propagateDeps of {} brings it to the clusters they are scheduled to, as Karmada's dependencies distributor does",
                names.join(", ")
            ));
            let cells = (0..clusters.len())
                .map(|c| {
                    if required_by.iter().any(|r| r.clusters.get(c).copied().unwrap_or(false)) {
                        Ok(None)
                    } else {
                        Err(format!(
                            "no PropagationPolicy selects it, and {} (which needs it: propagateDeps) is not scheduled here",
                            names.join(", ")
                        ))
                    }
                })
                .collect();
            plan.dependency_only = vec![true; clusters.len()];
            plan.required_by = required_by.to_vec();
            let (cells, reasons) = compact(cells);
            plan.cells = Arc::new(cells);
            plan.reasons = Arc::new(reasons);
            fill_karmada_cells(&mut plan, &resource, target, labels, overrides, errors);
            return built(resource, plan);
        }
        if target.kind == "Namespace" {
            plan.follows_namespace = true;
            plan.summary = "follows its objects".into();
            plan.steps.push("no ClusterPropagationPolicy selects this Namespace; Karmada creates a namespace on the clusters its objects go to, so flotilla renders it exactly there".into());
        } else {
            plan.summary = "no policy".into();
            plan.not_placed_everywhere("no PropagationPolicy selects it".into());
            plan.steps.push("no PropagationPolicy in its namespace and no ClusterPropagationPolicy has a resourceSelector matching this template".into());
        }
        return built(resource, plan);
    };
    let policy = &policies[chosen];
    plan.conflict_resolution = Some(ConflictResolution::for_template(
        policy.behaviour.conflict_resolution,
        &doc.value,
    ));
    let claim = inputs.claim_steps(&candidates);
    plan.shared_steps = Some(claim.clone());
    if let Some(missing) = missing_dependent_overrides(policy, overrides) {
        plan.summary = policy.summary(None).into();
        plan.not_placed_everywhere(format!(
            "waiting for dependentOverrides: {missing} not in the fleet; Karmada holds the template back until it exists"
        ));
        plan.steps.push(format!(
            "{} lists dependentOverrides; {missing} is missing, so Karmada does not propagate the template yet",
            policy.display_name()
        ));
        return built(resource, plan);
    }
    let schedule = inputs.schedule(chosen, template_replicas);
    plan.summary = schedule.summary.clone();
    plan.shared_steps = Some(inputs.planned_steps(&claim, &schedule));
    plan.weights = schedule.weights.clone();
    plan.cells = schedule.cells.clone();
    plan.reasons = schedule.reasons.clone();
    if !required_by.is_empty() {
        // A dependency with a policy of its own goes where that policy places it and also
        // wherever a workload that needs it is scheduled (`mergeTargetClusters` upstream).
        plan.dependency_only = vec![false; clusters.len()];
        for (c, cell) in Arc::make_mut(&mut plan.cells).iter_mut().enumerate() {
            let needed = required_by
                .iter()
                .any(|r| r.clusters.get(c).copied().unwrap_or(false));
            if needed && matches!(cell, Cell::NotPlaced(_)) {
                *cell = Cell::Placed {
                    replicas: -1,
                    set: 0,
                };
                plan.dependency_only[c] = true;
            }
        }
        let names: Vec<&str> = required_by.iter().map(|r| r.workload.as_str()).collect();
        plan.steps.push(format!(
            "also needed by {} (propagateDeps): placed on their clusters too, keeping its own policy's conflictResolution",
            names.join(", ")
        ));
        plan.summary = format!("{} + dependency", plan.summary).into();
        plan.required_by = required_by.to_vec();
    }
    let suspension = &policy.behaviour.suspension;
    if !suspension.is_empty() {
        plan.suspended = clusters
            .iter()
            .map(|c| suspension.covers(&c.name))
            .collect();
        plan.suspended_reason = suspension.reason(&policy.display_name());
    }
    fill_karmada_cells(&mut plan, &resource, target, labels, overrides, errors);
    built(resource, plan)
}

/// Karmada's `propagateDeps`: every workload whose policy sets it brings the ConfigMaps,
/// Secrets, ServiceAccounts and PVCs it references (when they are templates of the fleet) to
/// the clusters it is scheduled to; each such dependency is planned again with those
/// clusters added (upstream's dependencies distributor and attached bindings). Dependencies
/// never have dependencies of their own, so one pass is enough.
fn propagate_dependencies(
    builds: &mut [Built],
    templates: &[(usize, &Doc)],
    inputs: &KarmadaInputs<'_>,
    errors: &mut Vec<FleetError>,
) {
    let (policies, clusters) = (inputs.policies, inputs.clusters);
    if !policies.iter().any(|p| p.behaviour.propagate_deps) {
        return;
    }
    // Identities copied out of the builds, which are rewritten below.
    let templates: Vec<(usize, &Doc, ResourceRef)> = templates
        .iter()
        .map(|&(build, doc)| (build, doc, builds[build].resource.target.clone()))
        .collect();
    let by_key: HashMap<(&str, &str, Option<&str>, &str), usize> = templates
        .iter()
        .enumerate()
        .map(|(i, (_, _, t))| {
            (
                (
                    t.api_version.as_str(),
                    t.kind.as_str(),
                    t.namespace.as_deref(),
                    t.name.as_str(),
                ),
                i,
            )
        })
        .collect();
    let mut needs: BTreeMap<usize, Vec<RequiredBy>> = BTreeMap::new();
    for (build, doc, target) in &templates {
        let plan = &builds[*build].plan;
        let Origin::Karmada { policy: Some(p) } = plan.origin else {
            continue;
        };
        let Some(policy) = policies.get(p) else {
            continue;
        };
        if !policy.behaviour.propagate_deps {
            continue;
        }
        // A customization's GetDependencies comes before Karmada's default interpreter, as
        // Karmada's declarative interpreter comes before its native one.
        let scripted = inputs.interpreters.dependencies(&doc.value);
        let ns = target.namespace.as_deref();
        let references: Vec<Reference> = match &scripted {
            Some(Ok(references)) => references.clone(),
            Some(Err(error)) => {
                builds[*build].plan.steps.push(format!(
                    "propagateDeps: {error}; Karmada propagates none of its dependencies"
                ));
                continue;
            }
            None => {
                let (true, Some(ns)) = (has_dependency_rule(&target.api_version, &target.kind), ns)
                else {
                    continue;
                };
                dependencies(&target.api_version, &target.kind, &doc.value)
                    .into_iter()
                    .map(|dep| Reference {
                        api_version: "v1".into(),
                        kind: dep.kind.into(),
                        namespace: ns.into(),
                        name: dep.name,
                        label_selector: None,
                    })
                    .collect()
            }
        };
        let script = match &scripted {
            Some(_) => inputs
                .interpreters
                .script(
                    &target.api_version,
                    &target.kind,
                    Operation::InterpretDependency,
                )
                .map(|s| s.origin.clone()),
            None => None,
        };
        let placed: Vec<bool> = (0..clusters.len()).map(|c| plan.placed(c)).collect();
        let workload = match ns {
            Some(ns) => format!("{} {ns}/{}", target.kind, target.name),
            None => format!("{} {}", target.kind, target.name),
        };
        let mut found = Vec::new();
        let mut absent = Vec::new();
        for reference in &references {
            let namespace = Some(reference.namespace.as_str()).filter(|n| !n.is_empty());
            let matched: Vec<usize> = match &reference.label_selector {
                Some(selector) if reference.name.is_empty() => templates
                    .iter()
                    .enumerate()
                    .filter(|(_, (_, doc, t))| {
                        t.api_version == reference.api_version
                            && t.kind == reference.kind
                            && t.namespace.as_deref() == namespace
                            && selector.matches(doc.value.pointer("/metadata/labels"))
                    })
                    .map(|(i, _)| i)
                    .collect(),
                // A name, with a selector or without: Karmada looks the name up.
                _ => by_key
                    .get(&(
                        reference.api_version.as_str(),
                        reference.kind.as_str(),
                        namespace,
                        reference.name.as_str(),
                    ))
                    .copied()
                    .into_iter()
                    .collect(),
            };
            if matched.is_empty() {
                absent.push(match &reference.label_selector {
                    Some(_) if reference.name.is_empty() => {
                        format!("{} selected by labels", reference.kind)
                    }
                    _ => format!("{} {}", reference.kind, reference.name),
                });
            }
            for t in matched {
                if templates[t].0 == *build {
                    continue;
                }
                let dep = &templates[t].2;
                found.push(match &dep.namespace {
                    Some(n) => format!("{} {n}/{}", dep.kind, dep.name),
                    None => format!("{} {}", dep.kind, dep.name),
                });
                needs.entry(t).or_default().push(RequiredBy {
                    workload: workload.clone(),
                    clusters: placed.clone(),
                    // The attached binding takes the workload binding's own value.
                    conflict_resolution: policy.behaviour.conflict_resolution,
                    script: script.clone(),
                });
            }
        }
        let plan = &mut builds[*build].plan;
        let named_by = match &script {
            Some(origin) => format!("its GetDependencies ({origin})"),
            None => "its pod template".to_string(),
        };
        if found.is_empty() && absent.is_empty() {
            plan.steps.push(match &script {
                Some(_) => format!("propagateDeps: {named_by} names no dependency"),
                None => "propagateDeps: its pod template references no ConfigMap, Secret, ServiceAccount or PersistentVolumeClaim".into(),
            });
        }
        if !found.is_empty() {
            let by_script = match &script {
                Some(_) => format!(" ({named_by} names them)"),
                None => String::new(),
            };
            plan.steps.push(format!(
                "propagateDeps: {} follow it to its clusters{by_script}",
                found.join(", ")
            ));
        }
        if !absent.is_empty() {
            plan.steps.push(format!(
                "propagateDeps: {} not in the fleet; Karmada skips a dependency that is not on the hub (it may already exist on the members)",
                absent.join(", ")
            ));
        }
    }
    for (t, required_by) in needs {
        let (build, doc, target) = &templates[t];
        builds[*build] = karmada_plan(doc, target.clone(), inputs, &required_by, errors);
    }
}

/// The first OverridePolicy a PropagationPolicy's `dependentOverrides` names that the fleet
/// lacks (upstream's `IsDependentOverridesPresent`, checked in the policy's namespace).
fn missing_dependent_overrides(
    policy: &PropagationPolicy,
    overrides: &[(OverridePolicy, String)],
) -> Option<String> {
    let namespace = policy.namespace.as_ref()?;
    policy
        .behaviour
        .dependent_overrides
        .iter()
        .find(|name| {
            !overrides.iter().any(|(o, _)| {
                o.kind == "OverridePolicy"
                    && o.namespace.as_ref() == Some(namespace)
                    && &o.name == *name
            })
        })
        .map(|name| format!("OverridePolicy {namespace}/{name}"))
}

/// Gives each of the plan's scheduled cells (placed with set 0) the override sequence that
/// applies on its cluster, and validates every distinct sequence once. A template no
/// override selects keeps its (possibly shared) cells as they are.
fn fill_karmada_cells(
    plan: &mut Plan,
    resource: &FederatedResource,
    target: &ResourceRef,
    labels: Option<&serde_json::Map<String, Value>>,
    overrides: &[(OverridePolicy, String)],
    errors: &mut Vec<FleetError>,
) {
    // Override sequences: ClusterOverridePolicies, then OverridePolicies of the namespace,
    // each group by precision then name; rules in list order where their targetCluster matches.
    let mut applicable: Vec<(usize, Precision)> = overrides
        .iter()
        .enumerate()
        .filter_map(|(i, (p, _))| p.matches(target, labels).map(|prec| (i, prec)))
        .collect();
    applicable.sort_by(|&(a, pa), &(b, pb)| {
        let (x, y) = (&overrides[a].0, &overrides[b].0);
        (x.namespace.is_some())
            .cmp(&y.namespace.is_some())
            .then(pa.cmp(&pb))
            .then(x.name.cmp(&y.name))
    });
    let rules: Vec<(u32, u32)> = applicable
        .iter()
        .flat_map(|&(p, _)| (0..overrides[p].0.rules.len()).map(move |r| (p as u32, r as u32)))
        .filter(|&(p, r)| {
            !overrides[p as usize].0.rules[r as usize]
                .overriders
                .is_empty()
        })
        .collect();
    if !applicable.is_empty() {
        let names: Vec<String> = applicable
            .iter()
            .map(|&(p, _)| overrides[p].0.display_name())
            .collect();
        plan.steps.push(format!(
            "override policies in application order: {}",
            names.join(", ")
        ));
    }
    let mut interned: HashMap<Vec<(u32, u32)>, u32> = HashMap::new();
    if !rules.is_empty() {
        let mut cells = std::mem::take(&mut plan.cells);
        for (c, cell) in Arc::make_mut(&mut cells).iter_mut().enumerate() {
            let Cell::Placed { set, .. } = cell else {
                continue;
            };
            let seq: Vec<(u32, u32)> = rules
                .iter()
                .copied()
                .filter(|&(p, r)| {
                    overrides[p as usize].0.rules[r as usize]
                        .clusters
                        .get(c)
                        .copied()
                        .unwrap_or(false)
                })
                .collect();
            *set = if seq.is_empty() {
                0
            } else if let Some(&s) = interned.get(&seq) {
                s
            } else {
                plan.sets.push(OverrideSet::Karmada(seq.clone()));
                let s = (plan.sets.len() - 1) as u32;
                interned.insert(seq, s);
                s
            };
        }
        plan.cells = cells;
    }
    validate_sets(
        plan,
        resource,
        |p, r| {
            let (policy, file) = &overrides[p as usize];
            (
                policy.display_name(),
                file.clone(),
                &policy.rules[r as usize].overriders,
            )
        },
        errors,
    );
}

/// Applies every distinct override sequence once; a failing sequence turns its clusters into
/// NotPlaced cells and produces one located error.
fn validate_sets<'a, F>(
    plan: &mut Plan,
    resource: &FederatedResource,
    lookup: F,
    errors: &mut Vec<FleetError>,
) where
    F: Fn(
        u32,
        u32,
    ) -> (
        String,
        String,
        &'a crate::engine::overrides::overriders::Overriders,
    ),
{
    let mut failed: Vec<(u32, String)> = Vec::new();
    for (s, set) in plan.sets.iter().enumerate().skip(1) {
        let OverrideSet::Karmada(seq) = set else {
            continue;
        };
        let Some(sample) = plan.cells.iter().find_map(|c| match c {
            Cell::Placed { replicas, set } if *set as usize == s => Some(*replicas),
            _ => None,
        }) else {
            continue;
        };
        let mut obj = Value::clone(&plan.base);
        if let (Some(path), true) = (plan.replica_path, sample >= 0) {
            set_path(&mut obj, path, Value::from(sample));
        }
        for &(p, r) in seq {
            let (name, file, overriders) = lookup(p, r);
            if let Err(OverrideFailure {
                field,
                line,
                message,
            }) = overriders.apply(&mut obj, None)
            {
                errors.push(FleetError {
                    location: SourceLocation { file, line },
                    field: field.clone(),
                    message: format!("{name} rule {r} cannot apply to {}: {message}", resource.target),
                    hint: "fix the path, or narrow resourceSelectors/targetCluster so the rule only reaches objects that have it".into(),
                });
                failed.push((
                    s as u32,
                    format!("override failed: {name} {field}: {message}"),
                ));
                break;
            }
        }
    }
    for (s, reason) in failed {
        let idx = plan.reason(reason);
        for cell in Arc::make_mut(&mut plan.cells).iter_mut() {
            if matches!(cell, Cell::Placed { set, .. } if *set == s) {
                *cell = Cell::NotPlaced(idx);
            }
        }
    }
}

fn kubefed_plan_for(
    doc: &Doc,
    fed: &FederatedObject,
    namespace: Option<Option<NamespacePlacement<'_>>>,
    clusters: &[ClusterSpec],
    rsps: &[Rsp],
    errors: &mut Vec<FleetError>,
) -> Built {
    // The template as KubeFed generates it, before overrides: KubeFed's managed label and
    // flotilla's marker are added after them (`Fleet::render`), as KubeFed adds its label
    // after the overrides (an override sees neither, and cannot remove the label).
    let mut base = fed.object.clone();
    prune(&mut base);
    let resource = FederatedResource {
        target: fed.target.clone(),
        dialect: Dialect::KubeFed,
        source: doc.location(""),
    };
    let rsp = rsps.iter().find(|r| {
        r.target_kind == fed.federated_kind
            && Some(r.namespace.as_str()) == fed.target.namespace.as_deref()
            && r.name == fed.target.name
    });
    let mut plan = Plan::new(
        base,
        &Plan::nowhere(clusters.len()),
        Origin::KubeFed {
            overrides: fed.overrides.clone(),
            rsp: rsp.is_some(),
        },
        fed.source_key.clone(),
    );
    plan.summary = fed.placement.summary().into();
    plan.replica_path = replica_path(&fed.target.kind);
    plan.steps.push(format!(
        "{} places it by spec.placement: {}",
        fed.source_key,
        fed.placement.summary()
    ));
    if !fed.unknown_clusters.is_empty() {
        plan.steps.push(format!(
            "spec.placement.clusters names {} not in the inventory; dropped, as KubeFed does",
            fed.unknown_clusters.join(", ")
        ));
    }
    if fed.dropped_annotations {
        plan.steps.push(
            "template annotations are dropped, as KubeFed does (use overrides to set annotations)"
                .into(),
        );
    }
    if let Some(by) = &fed.target_type.disabled_by {
        plan.not_placed_everywhere(format!(
            "propagation of {} is disabled by FederatedTypeConfig {by}",
            fed.federated_kind
        ));
        return built(resource, plan);
    }
    if let Some(None) = namespace {
        let ns = fed.target.namespace.clone().unwrap_or_default();
        plan.not_placed_everywhere(format!(
            "NamespaceNotFederated: namespace {ns} has no FederatedNamespace"
        ));
        plan.steps.push(format!("KubeFed places a namespaced resource only where the FederatedNamespace of its namespace is placed; {ns} has none"));
        return built(resource, plan);
    }
    // Placement from spec.placement (or the RSP), as (reason when not placed, replicas).
    let mut cells: Vec<Result<i64, String>> = clusters
        .iter()
        .map(|c| match fed.placement.mismatch(c) {
            Some(reason) => Err(reason),
            None => Ok(-1),
        })
        .collect();
    let intersect_namespace = |cells: &mut Vec<Result<i64, String>>, steps: &mut Vec<String>| {
        if let Some(Some((ns_cells, ns_key))) = namespace {
            for (c, cell) in cells.iter_mut().enumerate() {
                if cell.is_ok()
                    && let Some(Some(why)) = ns_cells.get(c)
                {
                    *cell = Err(format!(
                        "its namespace is not placed here ({ns_key}: {why})"
                    ));
                }
            }
            steps.push(format!("intersected with the placement of {ns_key}"));
        }
    };
    // With an RSP that intersects, KubeFed divides over the namespaced placement; without
    // one (or when the RSP replaces the placement) the namespace is intersected afterwards.
    if rsp.is_none_or(|r| r.intersect) {
        intersect_namespace(&mut cells, &mut plan.steps);
    }
    if let Some(rsp) = rsp {
        let avail: Vec<usize> = if rsp.intersect {
            (0..clusters.len()).filter(|&c| cells[c].is_ok()).collect()
        } else {
            (0..clusters.len()).collect()
        };
        let prefs: Vec<(&str, Option<crate::engine::place::replicas::RspPreference>)> = avail
            .iter()
            .map(|&c| (clusters[c].name.as_str(), rsp.preference(&clusters[c].name)))
            .collect();
        let key = format!("{}/{}", rsp.namespace, rsp.name);
        let split = kubefed_plan(rsp.total, &prefs, &key);
        for (&c, r) in avail.iter().zip(split) {
            cells[c] = Ok(r);
        }
        plan.steps.push(format!(
            "ReplicaSchedulingPreference {key} ({}): {} replicas; {}; clusters without an entry (and no \"*\") get 0 replicas; equal weights are ordered by FNV hash of cluster and key, as upstream",
            rsp.location,
            rsp.total,
            if rsp.intersect {
                "intersectWithClusterSelector: true, so it divides over the placement"
            } else {
                "intersectWithClusterSelector: false, so its result replaces spec.placement.clusters (every inventory cluster is a candidate)"
            }
        ));
        plan.summary = format!(
            "{} (RSP {} replicas)",
            if rsp.intersect { &plan.summary } else { "all" },
            rsp.total
        )
        .into();
    }
    if rsp.is_some_and(|r| !r.intersect) {
        intersect_namespace(&mut cells, &mut plan.steps);
    }
    // Overrides: one set per cluster entry that is placed.
    let rsp_owns_replicas = rsp.is_some();
    for (c, cell) in cells.into_iter().enumerate() {
        match cell {
            Err(reason) => {
                let idx = plan.reason(reason);
                Arc::make_mut(&mut plan.cells)[c] = Cell::NotPlaced(idx);
            }
            Ok(replicas) => {
                let set = match fed
                    .overrides
                    .iter()
                    .position(|o| o.cluster == clusters[c].name)
                {
                    Some(o) => {
                        plan.sets.push(OverrideSet::KubeFed(o));
                        (plan.sets.len() - 1) as u32
                    }
                    None => 0,
                };
                Arc::make_mut(&mut plan.cells)[c] = Cell::Placed {
                    replicas: i32::try_from(replicas).unwrap_or(i32::MAX),
                    set,
                };
            }
        }
    }
    // Validate each cluster's patches once.
    let mut failed = Vec::new();
    for (c, cluster) in clusters.iter().enumerate() {
        let Cell::Placed { replicas, set } = plan.cells[c] else {
            continue;
        };
        if set == 0 {
            continue;
        }
        let OverrideSet::KubeFed(o) = plan.sets[set as usize] else {
            continue;
        };
        let mut obj = Value::clone(&plan.base);
        if let (Some(path), true) = (plan.replica_path, replicas >= 0) {
            set_path(&mut obj, path, Value::from(replicas));
        }
        for op in &fed.overrides[o].ops {
            if rsp_owns_replicas && op.item.path == "/spec/replicas" {
                continue;
            }
            if let Err(message) =
                crate::engine::dialect::kubefed::apply_override(&op.item, &mut obj)
            {
                errors.push(FleetError {
                    location: SourceLocation {
                        file: doc.file.clone(),
                        line: op.line,
                    },
                    field: op.field.clone(),
                    message: format!("override for cluster {} cannot apply: {message}", cluster.name),
                    hint: if op.item.kind == crate::engine::overrides::patch::OpKind::Add {
                        "add the parent first (e.g. `{op: add, path: /metadata/labels, value: {k: v}}`): KubeFed patches the template before it adds its own label".into()
                    } else {
                        "fix the path (JSON pointer into the generated object), or use `add` to create a field".into()
                    },
                });
                failed.push((c, format!("ApplyOverridesFailed: {}: {message}", op.field)));
                break;
            }
        }
    }
    for (c, reason) in failed {
        let idx = plan.reason(reason);
        Arc::make_mut(&mut plan.cells)[c] = Cell::NotPlaced(idx);
    }
    if rsp_owns_replicas
        && fed
            .overrides
            .iter()
            .any(|o| o.ops.iter().any(|op| op.item.path == "/spec/replicas"))
    {
        plan.steps.push("overrides of /spec/replicas are replaced by the ReplicaSchedulingPreference, as upstream".into());
    }
    built(resource, plan)
}

/// The placement of a FederatedNamespace: per cluster, why it is not there (`None` = placed),
/// and the FederatedNamespace's key.
type NamespacePlacement<'a> = (&'a [Option<String>], &'a str);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::fleet::decide::Decision;

    /// A DriftIgnore rule (see `compare::ignore`).
    const RULE: &str = "apiVersion: flotilla.dev/v1alpha1\nkind: DriftIgnore\nmetadata: {name: r}\nspec:\n  clusters: [west]\n  resources: [{kind: Deployment, namespace: shop, name: web}]\n  paths: [/spec/template/spec/containers/name=web/image]\n";

    #[test]
    fn the_loader_reads_rules_and_never_propagates_them() {
        let inventory =
            "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: west}\n---\n";
        let files = [SourceFile {
            path: "fleet.yaml".into(),
            text: format!("{inventory}{RULE}"),
        }];
        let (fleet, errors) = load_fleet(&files);
        assert!(errors.is_empty(), "{errors:?}");
        assert!(fleet.resources.is_empty(), "{:?}", fleet.resources);
        assert_eq!(fleet.ignores.len(), 1);
        assert_eq!(fleet.ignores[0].source.line, 5);
        let files = [SourceFile {
            path: "fleet.yaml".into(),
            text: format!(
                "{inventory}apiVersion: flotilla.dev/v1alpha1\nkind: DriftIgnor\nmetadata: {{name: x}}\n"
            ),
        }];
        let (_, errors) = load_fleet(&files);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0]
                .to_string()
                .contains("fleet.yaml:6: kind: flotilla.dev has no kind DriftIgnor"),
            "{}",
            errors[0]
        );
    }

    /// What the real KubeFed v0.10.0 wrote for these (tests/testenv_kubefed.rs checks it
    /// against the controller): its label comes after the overrides.
    #[test]
    fn overrides_see_the_template_without_kubefeds_label_or_flotillas_marker() {
        let fleet_text = "\
apiVersion: core.kubefed.io/v1beta1
kind: KubeFedCluster
metadata: {name: a, namespace: kube-federation-system}
spec: {apiEndpoint: \"https://a\", secretRef: {name: a}}
---
apiVersion: core.kubefed.io/v1beta1
kind: KubeFedCluster
metadata: {name: b, namespace: kube-federation-system}
spec: {apiEndpoint: \"https://b\", secretRef: {name: b}}
---
apiVersion: types.kubefed.io/v1beta1
kind: FederatedNamespace
metadata: {name: n, namespace: n}
spec:
  placement: {clusterSelector: {}}
  overrides:
  - clusterName: b
    clusterOverrides: [{op: add, path: /metadata/labels, value: {zone: b}}]
---
apiVersion: types.kubefed.io/v1beta1
kind: FederatedConfigMap
metadata: {name: c, namespace: n}
spec:
  template: {data: {a: '1'}}
  placement: {clusterSelector: {}}
  overrides:
  - clusterName: a
    clusterOverrides: [{op: add, path: /metadata/labels/tier, value: gold}]
  - clusterName: b
    clusterOverrides:
    - {path: /data/missing, value: x}
    - {op: add, path: /metadata/labels, value: {kubefed.io/managed: 'false'}}
";
        let (fleet, errors) = load_fleet(&[SourceFile {
            path: "f.yaml".into(),
            text: fleet_text.into(),
        }]);
        // The add into labels the template does not have fails, as in KubeFed.
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0]
                .message
                .contains("cannot add /metadata/labels/tier"),
            "{}",
            errors[0].message
        );
        let resource = |kind: &str| {
            fleet
                .resources
                .iter()
                .position(|r| r.target.kind == kind)
                .unwrap()
        };
        let (a, b) = (
            fleet.cluster_index("a").unwrap(),
            fleet.cluster_index("b").unwrap(),
        );
        let Decision::NotPlaced { reason } = fleet.decide(resource("ConfigMap"), a) else {
            panic!("the override cannot apply on a");
        };
        assert!(reason.starts_with("ApplyOverridesFailed: "), "{reason}");
        let Decision::Placed { object, .. } = fleet.decide(resource("ConfigMap"), b) else {
            panic!("c is placed on b");
        };
        assert_eq!(object["data"]["missing"], "x");
        assert_eq!(object["metadata"]["labels"]["kubefed.io/managed"], "true");
        let Decision::Placed { object, .. } = fleet.decide(resource("Namespace"), b) else {
            panic!("n is placed on b");
        };
        let labels = &object["metadata"]["labels"];
        assert_eq!(labels["zone"], "b");
        assert_eq!(labels["kubefed.io/managed"], "true");
        assert_eq!(labels["app.kubernetes.io/managed-by"], "flotilla");
    }

    /// What `kubectl get cm -o yaml` writes: a List whose items are templates like any other.
    #[test]
    fn the_items_of_a_list_are_templates_placed_like_any_other() {
        let text = "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: west}\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, namespace: shop}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b, namespace: shop, labels: [x]}\n---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p, namespace: shop}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]\n";
        let (fleet, errors) = load_fleet(&[SourceFile {
            path: "f.yaml".into(),
            text: text.into(),
        }]);
        let a = fleet
            .resources
            .iter()
            .position(|r| r.target.name == "a" && r.target.kind == "ConfigMap")
            .unwrap();
        assert_eq!(fleet.resources[a].source.line, 8);
        assert!(matches!(fleet.decide(a, 0), Decision::Placed { .. }));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0]
                .to_string()
                .starts_with("f.yaml:13: metadata.labels:"),
            "{}",
            errors[0]
        );
    }

    fn fleet_of(text: &str) -> Fleet {
        let (fleet, errors) = load_fleet(&[SourceFile {
            path: "f.yaml".into(),
            text: text.into(),
        }]);
        assert!(errors.is_empty(), "{errors:?}");
        fleet
    }

    fn row(fleet: &Fleet, key: &str) -> usize {
        fleet
            .resources
            .iter()
            .position(|r| r.target.display_key() == key)
            .unwrap()
    }

    const MEMBERS: &str = "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: a}\n---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: b}\n---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: c}\n---\n";

    fn policy(name: &str, selector: &str, spec: &str) -> String {
        format!(
            "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: {name}, namespace: s}}\nspec:\n  resourceSelectors: [{selector}]\n{spec}---\n"
        )
    }

    fn web(name: &str, config: &str) -> String {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: s}}\nspec:\n  template:\n    spec:\n      containers: [{{name: w, image: x, envFrom: [{{configMapRef: {{name: {config}}}}}]}}]\n---\n"
        )
    }

    const CONFIG: &str =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: s}\ndata: {k: v}\n---\n";

    /// Follows upstream's dependencies distributor (`buildAttachedBinding`,
    /// `createOrUpdateAttachedBinding`, `detectAndResolveConflictResolution`) and the binding
    /// controller's `mergeTargetClusters`: a dependency goes wherever a workload that needs
    /// it is scheduled, besides where its own policy puts it.
    #[test]
    fn dependencies_follow_every_workload_that_needs_them() {
        let deps =
            |c: &str| format!("  propagateDeps: true\n  conflictResolution: {c}\n  placement:\n");
        let cases: [(&str, String, [bool; 3], &str); 3] = [
            // Only one workload pulls it: its clusters, and its conflictResolution.
            (
                "one workload",
                format!(
                    "{}{}{}",
                    web("w1", "cfg"),
                    policy(
                        "w1",
                        "{apiVersion: apps/v1, kind: Deployment, name: w1}",
                        &format!(
                            "{}    clusterAffinity: {{clusterNames: [a]}}\n",
                            deps("Overwrite")
                        )
                    ),
                    CONFIG
                ),
                [true, false, false],
                "Overwrite",
            ),
            // Two workloads: the union; any Overwrite wins over Abort.
            (
                "two workloads",
                format!(
                    "{}{}{}{}{}",
                    web("w1", "cfg"),
                    policy(
                        "w1",
                        "{apiVersion: apps/v1, kind: Deployment, name: w1}",
                        &format!(
                            "{}    clusterAffinity: {{clusterNames: [a]}}\n",
                            deps("Abort")
                        )
                    ),
                    web("w2", "cfg"),
                    policy(
                        "w2",
                        "{apiVersion: apps/v1, kind: Deployment, name: w2}",
                        &format!(
                            "{}    clusterAffinity: {{clusterNames: [b]}}\n",
                            deps("Overwrite")
                        )
                    ),
                    CONFIG
                ),
                [true, true, false],
                "Overwrite",
            ),
            // Its own policy places it on c and keeps its own (default) conflictResolution.
            (
                "own policy",
                format!(
                    "{}{}{}{}",
                    web("w1", "cfg"),
                    policy(
                        "w1",
                        "{apiVersion: apps/v1, kind: Deployment, name: w1}",
                        &format!(
                            "{}    clusterAffinity: {{clusterNames: [a]}}\n",
                            deps("Overwrite")
                        )
                    ),
                    CONFIG,
                    policy(
                        "cfg",
                        "{apiVersion: v1, kind: ConfigMap, name: cfg}",
                        "  placement:\n    clusterAffinity: {clusterNames: [c]}\n"
                    ),
                ),
                [true, false, true],
                "Abort",
            ),
        ];
        for (case, text, want, resolution) in cases {
            let fleet = fleet_of(&format!("{MEMBERS}{text}"));
            let cfg = row(&fleet, "ConfigMap/s/cfg");
            let placed: Vec<bool> = (0..3).map(|c| fleet.is_placed(cfg, c)).collect();
            assert_eq!(placed, want, "{case}");
            assert_eq!(
                fleet
                    .conflict_resolution(cfg)
                    .map(|r| r.to_string())
                    .as_deref(),
                Some(resolution),
                "{case}"
            );
            let a = fleet.explain(cfg, 0);
            assert!(
                a.steps
                    .iter()
                    .any(|s| s.contains("needed here by Deployment s/w1 (propagateDeps)")),
                "{case}: {:?}",
                a.steps
            );
            assert_eq!(
                a.reason, "placed as a dependency of Deployment s/w1 (propagateDeps)",
                "{case}"
            );
            if case == "own policy" {
                assert_eq!(
                    fleet.explain(cfg, 2).reason,
                    "placed by PropagationPolicy s/cfg",
                    "{case}"
                );
            }
        }
        // A dependency the fleet does not have is named in the workload's steps.
        let fleet = fleet_of(&format!(
            "{MEMBERS}{}{}{}",
            web("w1", "absent"),
            policy(
                "w1",
                "{apiVersion: apps/v1, kind: Deployment, name: w1}",
                "  propagateDeps: true\n"
            ),
            CONFIG
        ));
        assert!(!fleet.is_placed(row(&fleet, "ConfigMap/s/cfg"), 0));
        let steps = fleet
            .explain(row(&fleet, "Deployment/s/w1"), 0)
            .steps
            .join("\n");
        assert!(
            steps.contains("ConfigMap absent not in the fleet"),
            "{steps}"
        );
    }

    /// Follows the binding controller's `shouldSuspendDispatching` upstream.
    #[test]
    fn suspended_cells_keep_their_object_and_say_why() {
        let fleet = fleet_of(&format!(
            "{MEMBERS}{CONFIG}{}",
            policy(
                "cfg",
                "{apiVersion: v1, kind: ConfigMap, name: cfg}",
                "  suspension: {dispatchingOnClusters: {clusterNames: [b]}}\n"
            )
        ));
        let cfg = row(&fleet, "ConfigMap/s/cfg");
        assert!(matches!(fleet.decide(cfg, 0), Decision::Placed { .. }));
        let Decision::Suspended { object, reason, .. } = fleet.decide(cfg, 1) else {
            panic!("b is suspended");
        };
        assert_eq!(object["data"]["k"], "v");
        assert!(reason.contains("dispatchingOnClusters [b]"), "{reason}");
        assert_eq!(fleet.suspended_reason(cfg, 1), Some(reason.as_str()));
        assert_eq!(fleet.suspended_reason(cfg, 0), None);
        let explained = fleet.explain(cfg, 1);
        assert!(
            explained
                .reason
                .starts_with("suspended: PropagationPolicy s/cfg"),
            "{}",
            explained.reason
        );
    }

    /// Follows the scheduler's affinity groups and overflow tiers
    /// (`assignWorkloadReplicas`, the cluster-affinity filter): a later group is used when
    /// the earlier ones fit nowhere, and the table names it.
    #[test]
    fn the_summary_names_the_affinity_group_that_was_used() {
        let text = format!(
            "{MEMBERS}apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d, namespace: s}}\nspec: {{replicas: 3}}\n---\n{}",
            policy(
                "d",
                "{apiVersion: apps/v1, kind: Deployment, name: d}",
                "  placement:\n    clusterAffinities:\n    - {affinityName: first, clusterNames: [zz]}\n    - affinityName: second\n      clusterNames: [a]\n      overflowAffinities: [{affinityName: more, clusterNames: [b]}]\n"
            )
        );
        let fleet = fleet_of(&text);
        let d = row(&fleet, "Deployment/s/d");
        assert_eq!(fleet.placement_summary(d), "second: a");
        assert_eq!(fleet.placement(d, 0), Ok(Some(3)));
        let overflow = fleet.placement(d, 1).unwrap_err();
        assert!(overflow.contains("overflow group 'more'"), "{overflow}");
        assert!(overflow.contains("estimator"), "{overflow}");
        // With no feasible cluster in the group itself, the overflow group takes the replicas.
        let fleet = fleet_of(&text.replace("clusterNames: [a]", "clusterNames: [zz]"));
        let d = row(&fleet, "Deployment/s/d");
        assert_eq!(fleet.placement(d, 1), Ok(Some(3)));
    }

    /// Follows the detector's `IsDependentOverridesPresent` wait upstream.
    #[test]
    fn a_policy_waits_for_its_dependent_overrides() {
        let spec = "  dependentOverrides: [tune]\n";
        let text = format!(
            "{MEMBERS}{CONFIG}{}",
            policy("cfg", "{apiVersion: v1, kind: ConfigMap, name: cfg}", spec)
        );
        let fleet = fleet_of(&text);
        let reason = fleet
            .placement(row(&fleet, "ConfigMap/s/cfg"), 0)
            .unwrap_err();
        assert!(
            reason.contains("OverridePolicy s/tune not in the fleet"),
            "{reason}"
        );
        let fleet = fleet_of(&format!(
            "{text}apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata: {{name: tune, namespace: s}}\nspec: {{}}\n"
        ));
        assert!(fleet.is_placed(row(&fleet, "ConfigMap/s/cfg"), 0));
    }

    /// ClusterProfiles are inventory: their properties and cluster manager become labels a
    /// policy selects on, and a Karmada Cluster of the same name is laid over its profile.
    #[test]
    fn cluster_profiles_are_inventory_with_properties_as_labels() {
        let profile = |name: &str, region: &str| {
            format!(
                "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ClusterProfile\nmetadata: {{name: {name}, namespace: fleet}}\n\
                 spec: {{clusterManager: {{name: ocm}}}}\n\
                 status: {{properties: [{{name: region.example.com, value: {region}}}]}}\n---\n"
            )
        };
        let text = format!(
            "{}{}apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {{name: p2, labels: {{region.example.com: us}}}}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cfg, namespace: s}}\n---\n\
             apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: cfg, namespace: s}}\n\
             spec:\n  resourceSelectors: [{{apiVersion: v1, kind: ConfigMap, name: cfg}}]\n  \
             placement: {{clusterAffinity: {{labelSelector: {{matchLabels: {{region.example.com: eu}}}}}}}}\n",
            profile("p1", "eu"),
            profile("p2", "eu"),
        );
        let fleet = fleet_of(&text);
        let names: Vec<&str> = fleet.clusters.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["p1", "p2"]);
        assert_eq!(
            fleet.clusters[0]
                .labels
                .get("x-k8s.io/cluster-manager")
                .map(String::as_str),
            Some("ocm")
        );
        let cfg = row(&fleet, "ConfigMap/s/cfg");
        assert!(fleet.is_placed(cfg, 0));
        // The Karmada Cluster's label wins over the profile's property.
        assert!(!fleet.is_placed(cfg, 1));
        let (_, errors) = load_fleet(&[SourceFile {
            path: "p.yaml".into(),
            text: "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ClusterProfile\nmetadata: {name: p, namespace: f}\nspec: {clusterManager: {name: m}}\nstatus: {properties: [{name: x}]}\n".into(),
        }]);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0]
                .to_string()
                .contains("status.properties[0].value: a property needs a string value"),
            "{}",
            errors[0]
        );
    }
}
