//! The fleet after an edit of one document, as an editor's preview needs it: only the edited
//! document is read again, and when it is a Karmada PropagationPolicy only the templates that
//! policy selects (before or after) are planned again — every other plan is the one the fleet
//! already had. It must give exactly the fleet a whole read of the edited files gives (a
//! property test holds it to that), and it must not do I/O.

use std::sync::Arc;

use crate::engine::dialect::api_groups;
use crate::engine::dialect::karmada::{PropagationPolicy, best_match};
use crate::engine::document::parse::{Doc, ParsedDocs, reparse_document};
use crate::engine::document::source::{FleetError, SourceFile};
use crate::engine::fleet::assemble::{Built, assemble, karmada_plan, load_fleet};
use crate::engine::fleet::decide::Fleet;
use crate::engine::fleet::karmada_inputs::KarmadaInputs;
use crate::engine::fleet::namespaces::finish_namespaces;
use crate::model::ResourceRef;

/// The fleet `before` (read from `files`) becomes once document `document` of `file` is
/// rewritten, as `edited` holds it: an editor's preview. Only that document is read again
/// when it can be (see [`reload_document`]); otherwise every file is.
pub fn load_edit(
    before: &Fleet,
    files: &[SourceFile],
    edited: &[SourceFile],
    file: &str,
    document: usize,
) -> (Fleet, Vec<FleetError>) {
    fn text_of<'a>(files: &'a [SourceFile], path: &str) -> Option<&'a str> {
        files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.text.as_str())
    }
    match (text_of(files, file), text_of(edited, file)) {
        (Some(old), Some(new)) => reload_document(before, file, document, old, new),
        _ => None,
    }
    .unwrap_or_else(|| load_fleet(edited))
}

/// The fleet after document `document` of `file` was rewritten from `old_text` to
/// `new_text`, built from `before`'s documents with only that one read again. `None` when
/// `before` was not read from files without errors, or the edit needs a whole read (see
/// [`reparse_document`]).
pub fn reload_document(
    before: &Fleet,
    file: &str,
    document: usize,
    old_text: &str,
    new_text: &str,
) -> Option<(Fleet, Vec<FleetError>)> {
    let parsed = before.parsed.as_ref().filter(|parsed| parsed.clean)?;
    let parsed = Arc::new(reparse_document(
        parsed, file, document, old_text, new_text,
    )?);
    Some(policy_edit(before, &parsed).unwrap_or_else(|| assemble(parsed, Vec::new())))
}

/// `before` with one PropagationPolicy rewritten (its identity kept), as `parsed` holds the
/// documents: the templates the policy selects before or after the edit are planned again,
/// and those whose documents moved (below the policy in its file) take their new lines, as do
/// the policies that moved; every other plan is kept. `None`
/// when the edit is anything else, or when a whole assembly is needed to say the same:
/// `before` had errors, or some policy propagates dependencies (a workload's placement moves
/// its dependencies'), or a document other than a template or a policy moved.
fn policy_edit(before: &Fleet, parsed: &Arc<ParsedDocs>) -> Option<(Fleet, Vec<FleetError>)> {
    let provenance = before.provenance.as_ref()?;
    let old_docs = &before.parsed.as_ref()?.docs;
    let new_docs = &parsed.docs;
    if old_docs.len() != new_docs.len() {
        return None;
    }
    let mut may_move = vec![false; new_docs.len()];
    for &at in provenance
        .template_docs
        .iter()
        .chain(&provenance.policy_docs)
        .flatten()
    {
        *may_move.get_mut(at as usize)? = true;
    }
    // The one document whose value changed, and the templates that only moved.
    let mut edited = None;
    let mut moved = vec![false; new_docs.len()];
    for (at, (old, new)) in old_docs.iter().zip(new_docs).enumerate() {
        if Arc::ptr_eq(old, new) {
            continue;
        }
        if Arc::ptr_eq(&old.value, &new.value) && may_move[at] {
            moved[at] = true;
        } else if edited.replace(at).is_some() || Arc::ptr_eq(&old.value, &new.value) {
            return None;
        }
    }
    let edited = edited?;
    let (old_doc, new_doc) = (&old_docs[edited], &new_docs[edited]);
    let policy = provenance
        .policy_docs
        .iter()
        .position(|&at| at == Some(edited as u32))?;
    if !same_policy_identity(old_doc, new_doc) || api_groups::check(new_doc).is_err() {
        return None;
    }
    let new_policy = PropagationPolicy::parse(new_doc).ok()?;
    let old_policy = before.propagation.get(policy)?;
    if new_policy.behaviour.propagate_deps
        || before
            .propagation
            .iter()
            .any(|p| p.behaviour.propagate_deps)
    {
        return None;
    }
    // The policies below the edited one in its file moved: read again for their new lines
    // (no plan holds a policy's line).
    let mut policies = before.propagation.clone();
    for (p, at) in provenance.policy_docs.iter().enumerate() {
        if let Some(at) = at.filter(|&at| moved[at as usize]) {
            policies[p] = PropagationPolicy::parse(&new_docs[at as usize]).ok()?;
        }
    }
    policies[policy] = new_policy;
    let overrides: Vec<_> = before
        .overrides
        .iter()
        .cloned()
        .zip(provenance.override_files.iter().cloned())
        .collect();
    let inputs = KarmadaInputs::new(
        &policies,
        &before.interpreters,
        &overrides,
        &before.clusters,
    );
    let mut errors = Vec::new();
    let mut resources = Vec::with_capacity(before.resources.len());
    let mut plans = Vec::with_capacity(before.plans.len());
    for (r, resource) in before.resources.iter().enumerate() {
        let plan = before.plans.get(r)?;
        let template = provenance.template_docs.get(r).copied().flatten();
        let replan = template.and_then(|at| {
            let doc = &new_docs[at as usize];
            let target = &resource.target;
            let selects = |p: &PropagationPolicy| selects(p, target, doc);
            (moved[at as usize]
                || plan.follows_namespace
                || selects(old_policy)
                || selects(&policies[policy]))
            .then_some(doc)
        });
        match replan {
            Some(doc) => {
                let Built { resource, plan } =
                    karmada_plan(doc, resource.target.clone(), &inputs, &[], &mut errors);
                resources.push(resource);
                plans.push(plan);
            }
            None => {
                resources.push(resource.clone());
                plans.push(plan.clone());
            }
        }
    }
    let mut fleet = Fleet {
        clusters: before.clusters.clone(),
        resources,
        plans,
        propagation: policies,
        overrides: before.overrides.clone(),
        namespaces: Vec::new(),
        ignores: before.ignores.clone(),
        parsed: Some(parsed.clone()),
        provenance: errors.is_empty().then(|| provenance.clone()),
        interpreters: before.interpreters.clone(),
    };
    finish_namespaces(&mut fleet);
    errors.sort_by(|a, b| {
        (&a.location, &a.field, &a.message).cmp(&(&b.location, &b.field, &b.message))
    });
    errors.dedup();
    Some((fleet, errors))
}

/// Both documents are the same PropagationPolicy or ClusterPropagationPolicy.
fn same_policy_identity(old: &Doc, new: &Doc) -> bool {
    old.group() == "policy.karmada.io"
        && matches!(old.kind(), "PropagationPolicy" | "ClusterPropagationPolicy")
        && (old.api_version(), old.kind(), old.namespace(), old.name())
            == (new.api_version(), new.kind(), new.namespace(), new.name())
}

/// Whether `policy` is among the candidates for the template `doc` declares as `target`.
fn selects(policy: &PropagationPolicy, target: &ResourceRef, doc: &Doc) -> bool {
    let in_scope = match &policy.namespace {
        Some(ns) => target.namespace.as_deref() == Some(ns.as_str()),
        None => true,
    };
    in_scope && best_match(&policy.selectors, target, doc.labels()).is_some()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A fleet file: three clusters, templates in two namespaces (one with a Namespace
    /// template of its own), `policies` as given, and an override policy for `shop`.
    fn fleet_text(policies: &[String]) -> String {
        let mut text = String::new();
        for (name, env, region) in [
            ("east", "prod", "r1"),
            ("west", "prod", "r2"),
            ("lab", "dev", "r1"),
        ] {
            text.push_str(&format!(
                "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {{name: {name}, labels: {{env: {env}, region: {region}}}}}\n---\n"
            ));
        }
        text.push_str(
            "apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: tint, namespace: shop}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]\n  overrideRules:\n  - targetCluster: {clusterNames: [west]}\n    overriders:\n      labelsOverrider: [{operator: add, value: {tint: west}}]\n---\n",
        );
        for policy in policies {
            text.push_str(policy);
            text.push_str("---\n");
        }
        text.push_str("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\n");
        for (kind, ns, name, labels) in [
            ("ConfigMap", "shop", "colors", "{tier: web}"),
            ("ConfigMap", "shop", "sizes", "{tier: db}"),
            ("ConfigMap", "lab", "notes", "{tier: web}"),
            ("Secret", "shop", "token", "{tier: db}"),
        ] {
            text.push_str(&format!(
                "apiVersion: v1\nkind: {kind}\nmetadata: {{name: {name}, namespace: {ns}, labels: {labels}}}\n---\n"
            ));
        }
        text.push_str(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: nginx}]}\n",
        );
        text
    }

    /// A PropagationPolicy (in `shop`) or ClusterPropagationPolicy named `name`.
    fn policy(name: &str, cluster_scoped: bool, spec: &PolicySpec) -> String {
        let (kind, namespace) = if cluster_scoped {
            ("ClusterPropagationPolicy", String::new())
        } else {
            ("PropagationPolicy", ", namespace: shop".to_string())
        };
        let mut selectors = vec![format!("{{apiVersion: v1, kind: {}}}", spec.kind)];
        if spec.also_deployments {
            selectors.push("{apiVersion: apps/v1, kind: Deployment}".into());
        }
        let mut affinity = String::new();
        if !spec.names.is_empty() {
            affinity.push_str(&format!(
                "      clusterNames: [{}]\n",
                spec.names.join(", ")
            ));
        }
        if let Some(env) = &spec.env {
            affinity.push_str(&format!(
                "      labelSelector: {{matchLabels: {{env: {env}}}}}\n"
            ));
        }
        let affinity = if affinity.is_empty() {
            String::new()
        } else {
            format!("    clusterAffinity:\n{affinity}")
        };
        let division = if spec.divided {
            "    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}\n"
        } else {
            ""
        };
        format!(
            "apiVersion: policy.karmada.io/v1alpha1\nkind: {kind}\nmetadata: {{name: {name}{namespace}}}\nspec:\n  priority: {}\n  resourceSelectors: [{}]\n  placement:\n{affinity}{division}",
            spec.priority,
            selectors.join(", ")
        )
    }

    #[derive(Debug, Clone)]
    struct PolicySpec {
        kind: &'static str,
        also_deployments: bool,
        names: Vec<&'static str>,
        env: Option<&'static str>,
        priority: i64,
        divided: bool,
    }

    fn spec() -> impl Strategy<Value = PolicySpec> {
        (
            prop::sample::select(vec!["ConfigMap", "Secret", "Namespace"]),
            any::<bool>(),
            prop::sample::subsequence(vec!["east", "lab", "west"], 0..=3),
            prop::option::of(prop::sample::select(vec!["prod", "dev"])),
            0_i64..3,
            any::<bool>(),
        )
            .prop_map(|(kind, also_deployments, names, env, priority, divided)| {
                PolicySpec {
                    kind,
                    also_deployments,
                    names,
                    env,
                    priority,
                    divided,
                }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// Whatever a policy's edit changes, the fleet built from the one document read again
        /// is the fleet a whole read of the edited file gives: the same resources (with their
        /// lines), every cell's decision and explanation, and the same implied namespaces.
        #[test]
        fn a_policy_edit_assembles_as_a_whole_read_does(
            specs in prop::collection::vec(spec(), 1..4),
            edited in 0_usize..3,
            new_spec in spec(),
            cluster_scoped in any::<bool>(),
        ) {
            let edited = edited % specs.len();
            let names = ["alpha", "beta", "gamma"];
            let policies: Vec<String> = specs
                .iter()
                .enumerate()
                .map(|(i, s)| policy(names[i], i == 0 && cluster_scoped, s))
                .collect();
            let mut after = policies.clone();
            after[edited] = policy(names[edited], edited == 0 && cluster_scoped, &new_spec);
            let (old_text, new_text) = (fleet_text(&policies), fleet_text(&after));
            let files = [SourceFile { path: "fleet.yaml".into(), text: old_text.clone() }];
            let (before, errors) = load_fleet(&files);
            prop_assume!(errors.is_empty());
            let edited_files = [SourceFile { path: "fleet.yaml".into(), text: new_text.clone() }];
            let (whole, whole_errors) = load_fleet(&edited_files);
            // The policy's document: three clusters and the override policy come first.
            let parsed = before.parsed.clone().unwrap();
            let reparsed = Arc::new(
                reparse_document(&parsed, "fleet.yaml", 4 + edited, &old_text, &new_text).unwrap(),
            );
            let (fast, fast_errors) = policy_edit(&before, &reparsed).expect("a policy edit");
            prop_assert_eq!(&fast_errors, &whole_errors);
            prop_assert_eq!(&fast.resources, &whole.resources);
            for r in 0..whole.resources.len() {
                prop_assert_eq!(fast.placement_summary(r), whole.placement_summary(r));
                for c in 0..whole.clusters.len() {
                    prop_assert_eq!(fast.decide(r, c), whole.decide(r, c), "{} on {}", r, c);
                    prop_assert_eq!(fast.explain(r, c), whole.explain(r, c), "{} on {}", r, c);
                }
            }
            for c in 0..whole.clusters.len() {
                prop_assert_eq!(fast.implied_namespaces(c), whole.implied_namespaces(c));
            }
            let locations = |fleet: &Fleet| -> Vec<String> {
                fleet.propagation.iter().map(|p| p.location.clone()).collect()
            };
            prop_assert_eq!(locations(&fast), locations(&whole));
        }
    }

    /// The edit above takes the short way: a PropagationPolicy edit re-plans from the fleet.
    #[test]
    fn a_policy_edit_keeps_the_plans_it_does_not_touch() {
        let spec = PolicySpec {
            kind: "Secret",
            also_deployments: false,
            names: vec![],
            env: Some("prod"),
            priority: 0,
            divided: false,
        };
        let other = PolicySpec {
            kind: "ConfigMap",
            ..spec.clone()
        };
        let old_text = fleet_text(&[policy("alpha", false, &spec), policy("beta", false, &other)]);
        let new_text = fleet_text(&[
            policy(
                "alpha",
                false,
                &PolicySpec {
                    env: Some("dev"),
                    ..spec
                },
            ),
            policy("beta", false, &other),
        ]);
        let files = [SourceFile {
            path: "fleet.yaml".into(),
            text: old_text.clone(),
        }];
        let (before, errors) = load_fleet(&files);
        assert!(errors.is_empty(), "{errors:?}");
        let parsed = before.parsed.clone().unwrap();
        let reparsed =
            Arc::new(reparse_document(&parsed, "fleet.yaml", 4, &old_text, &new_text).unwrap());
        let (fast, errors) = policy_edit(&before, &reparsed).expect("a policy edit");
        assert!(errors.is_empty(), "{errors:?}");
        let colors = before
            .resources
            .iter()
            .position(|r| r.target.name == "colors")
            .unwrap();
        // beta's ConfigMap keeps its plan (its cells are the very same vector).
        assert!(Arc::ptr_eq(
            &before.plans[colors].cells,
            &fast.plans[colors].cells
        ));
        let token = before
            .resources
            .iter()
            .position(|r| r.target.name == "token")
            .unwrap();
        let lab = before.cluster_index("lab").unwrap();
        assert!(!before.is_placed(token, lab));
        assert!(
            fast.is_placed(token, lab),
            "alpha's Secret moves to the dev cluster"
        );
    }
}
