//! What the fleet commands (plan, apply, drift, repair and status) share: the scope a command
//! works on (`--cluster` and `--resource` parsed and checked against the fleet), one fan-out
//! target per selected cluster — live, or simulated on `--demo` — with the objects the engine
//! renders for it, asking before a write, input errors, and what the audit log says about
//! fields reverted before (owner fights). It must not write to a cluster or a file.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::sync::Arc;

use serde_json::Value;

use crate::backend::fanout::cluster_api::ApiError;
use crate::backend::fanout::drift::DriftItem;
use crate::backend::fanout::targets::{Desired, Ignores, Target, desired};
use crate::backend::kube::api::KubeCluster;
use crate::backend::kube::{self, kubeconfig::Timeouts};
use crate::backend::sim::{Scenario, SimClusterApi, SimCore, SimFleet};
use crate::cli::{GlobalArgs, ScopeArgs, exit};
use crate::engine::edit::placement::label_selector_of;
use crate::engine::health::pods::WORKLOADS;
use crate::engine::place::selector::LabelSelector;
use crate::engine::{Fleet, SourceFile};
use crate::model::{ClusterSpec, ResourceRef};
use crate::safe_text::printable;
use crate::source;

/// An input error: printed with `error:` and exit 2.
pub struct InputError(pub String);

/// Parses `--resource KIND/NS/NAME` or `KIND/NAME`.
pub fn resource_filter(text: &str) -> Result<(String, Option<String>, String), InputError> {
    let parts: Vec<&str> = text.split('/').collect();
    match parts.as_slice() {
        [kind, name] if !kind.is_empty() && !name.is_empty() => {
            Ok((kind.to_string(), None, name.to_string()))
        }
        [kind, ns, name] if !kind.is_empty() && !ns.is_empty() && !name.is_empty() => {
            Ok((kind.to_string(), Some(ns.to_string()), name.to_string()))
        }
        _ => Err(InputError(format!(
            "--resource {text:?}: expected KIND/NAMESPACE/NAME or KIND/NAME"
        ))),
    }
}

/// Whether `resource` is the one a `--resource` names: its kind as kubectl takes a type (the
/// kind, its plural or its short name, any case), its namespace, its name.
pub fn matches_filter(resource: &ResourceRef, filter: &(String, Option<String>, String)) -> bool {
    crate::model::names_kind(&resource.kind, &filter.0)
        && resource.name == filter.2
        && (filter.1.is_none() || resource.namespace == filter.1)
}

/// The resources a command works on, as kubectl would pick them: any of the `--resource`
/// names, in the `-n/--namespace` namespace, whose template labels match `-l/--selector`.
#[derive(Debug, Default)]
pub struct ResourceScope {
    filters: Vec<(String, Option<String>, String)>,
    namespace: Option<String>,
    selector: Option<LabelSelector>,
}

impl ResourceScope {
    pub fn parse(scope: &ScopeArgs) -> Result<ResourceScope, InputError> {
        ResourceScope::of(
            &scope.resources,
            scope.namespace.as_deref(),
            scope.selector.as_deref(),
        )
    }

    pub fn of(
        resources: &[String],
        namespace: Option<&str>,
        selector: Option<&str>,
    ) -> Result<ResourceScope, InputError> {
        let filters = resources
            .iter()
            .map(|text| resource_filter(text))
            .collect::<Result<Vec<_>, _>>()?;
        if namespace.is_some_and(str::is_empty) {
            return Err(InputError(
                "-n/--namespace needs a namespace name, e.g. -n shop".into(),
            ));
        }
        let selector = selector.map(label_selector).transpose()?.flatten();
        Ok(ResourceScope {
            filters,
            namespace: namespace.map(str::to_string),
            selector,
        })
    }

    /// Whether `-l` narrows the resources (so their templates' labels must be known).
    pub fn has_selector(&self) -> bool {
        self.selector.is_some()
    }

    /// Whether nothing narrows the resources (so pruning and implied namespaces apply).
    pub fn is_everything(&self) -> bool {
        self.filters.is_empty() && self.namespace.is_none() && self.selector.is_none()
    }

    /// Whether the fleet's resource at `row` is in scope.
    pub fn selects(&self, fleet: &Fleet, row: usize) -> bool {
        fleet
            .resources
            .get(row)
            .is_some_and(|resource| self.matches(&resource.target, fleet.template_labels(row)))
    }

    /// Whether `resource`, whose template carries `labels`, is in scope.
    pub fn matches(
        &self,
        resource: &ResourceRef,
        labels: Option<&serde_json::Map<String, Value>>,
    ) -> bool {
        (self.filters.is_empty() || self.filters.iter().any(|f| matches_filter(resource, f)))
            && self
                .namespace
                .as_ref()
                .is_none_or(|ns| resource.namespace.as_ref() == Some(ns))
            && self
                .selector
                .as_ref()
                .is_none_or(|selector| selector.matches_map(labels))
    }

    /// Whether a `--resource` names `resource` (not merely `-n` or `-l` letting it through).
    pub fn names(&self, resource: &ResourceRef) -> bool {
        self.filters.iter().any(|f| matches_filter(resource, f))
    }

    /// Each `--resource` that names nothing in the fleet, as an input error; with
    /// `workload_argument`, the command's own argument, among the fleet's workloads.
    pub fn check_names(
        &self,
        fleet: &Fleet,
        texts: &[String],
        workload_argument: bool,
    ) -> Result<(), InputError> {
        for (filter, text) in self.filters.iter().zip(texts) {
            if !fleet
                .resources
                .iter()
                .any(|r| matches_filter(&r.target, filter))
            {
                let known: Vec<String> = fleet
                    .resources
                    .iter()
                    .filter(|r| !workload_argument || WORKLOADS.contains(&r.target.kind.as_str()))
                    .map(|r| r.target.display_key())
                    .collect();
                let known: Vec<&str> = known.iter().map(String::as_str).collect();
                let message = if workload_argument {
                    no_such("", text, "workload", &known)
                } else {
                    no_such("--resource", text, "resource", &known)
                };
                return Err(InputError(message));
            }
        }
        Ok(())
    }
}

/// Names a fleet's clusters or resources beyond which an error lists no more.
const NAMES_SHOWN: usize = 10;

/// The input error for `name`, given to `flag` (empty: the command's argument), which is none of the fleet's `known` names of
/// `what`: the nearest one as "did you mean", and the first few known.
pub fn no_such(flag: &str, name: &str, what: &str, known: &[&str]) -> String {
    let mut text = if flag.is_empty() {
        format!("{name}: no such {what} in the fleet")
    } else {
        format!("{flag} {name}: no such {what} in the fleet")
    };
    if let Some(near) = crate::engine::dialect::api_groups::closest(name, known) {
        text.push_str(&format!("; did you mean {near}?"));
    }
    let mut listed = if known.is_empty() {
        "(none)".to_string()
    } else {
        known
            .iter()
            .take(NAMES_SHOWN)
            .copied()
            .collect::<Vec<_>>()
            .join(", ")
    };
    if known.len() > NAMES_SHOWN {
        listed.push_str(&format!(" … and {} more", known.len() - NAMES_SHOWN));
    }
    text.push_str(&format!("\n  known: {listed}"));
    text
}

/// `-l/--selector` in kubectl's syntax (`app=web,tier in (a,b),!legacy`); empty selects all.
fn label_selector(text: &str) -> Result<Option<LabelSelector>, InputError> {
    let bad = |message: String| {
        InputError(format!(
            "-l/--selector {text:?}: {message}\n  hint: write it as kubectl does, e.g. -l app=web,tier!=canary"
        ))
    };
    label_selector_of(text).map_err(|err| bad(err.to_string()))
}

/// What a command works on: one target per selected cluster, notes for stderr, the fleet's
/// ignore rules per cluster, and the loaded fleet.
pub struct Prepared<A = KubeCluster> {
    pub targets: Vec<Target<A>>,
    pub notes: Vec<String>,
    pub ignores: Ignores,
    pub fleet: Arc<Fleet>,
    /// The texts the fleet was loaded from (adopt and ignore edit them).
    pub files: Vec<SourceFile>,
}

/// The fleet a command works on: live clusters, or the simulated ones of `--demo` (the same
/// fan-out runs over either).
pub enum Clusters {
    Live(Prepared<KubeCluster>),
    Simulated(Prepared<SimClusterApi>),
}

/// [`prepare`] on live clusters, or [`prepare_demo`] with `--demo` / `--demo-scale`.
pub async fn prepare_clusters(
    global: &GlobalArgs,
    scope: &ScopeArgs,
    prune: bool,
) -> Result<Clusters, InputError> {
    if global.uses_demo() {
        prepare_demo(global, scope, prune).map(Clusters::Simulated)
    } else {
        prepare(global, scope, prune).await.map(Clusters::Live)
    }
}

/// Loads the fleet and inventory, connects, and builds one target per selected cluster, with
/// the fleet it was built from.
pub async fn prepare(
    global: &GlobalArgs,
    scope: &ScopeArgs,
    prune: bool,
) -> Result<Prepared, InputError> {
    let inventory = source::live_inventory(global).map_err(|e| InputError(e.to_string()))?;
    let Some(fleet) = inventory.fleet.clone() else {
        return Err(InputError(format!(
            "there is no fleet directory {}: plan, apply and drift need the desired state\n  hint: pass --fleet DIR",
            global.fleet.display()
        )));
    };
    unmatched_contexts(&global.contexts, &fleet)?;
    let selection = select(fleet, inventory.clusters.clone(), scope, prune)?;
    let files = inventory.files.clone();
    let members = kube::connect(
        &inventory.kubeconfig,
        selection.specs.clone(),
        Timeouts::default(),
    )
    .await;
    let apis = members
        .into_iter()
        .map(|member| {
            member
                .client
                .map(|client| KubeCluster::new(client, global.readonly))
                .map_err(|error| ApiError::Other(error.into()))
        })
        .collect();
    Ok(selection.into_prepared(apis, files))
}

/// The simulated fleet of `--demo` (or `--demo-scale`) as the console's demo starts from the
/// same seed, one target per selected simulated cluster. What a command writes changes this
/// world only while the command runs: every run starts afresh from the seed.
pub fn prepare_demo(
    global: &GlobalArgs,
    scope: &ScopeArgs,
    prune: bool,
) -> Result<Prepared<SimClusterApi>, InputError> {
    let loaded = source::load(global).map_err(|e| InputError(e.to_string()))?;
    let fleet = loaded.fleet;
    unmatched_contexts(&global.contexts, &fleet)?;
    let mut clusters = fleet.clusters.clone();
    if !global.contexts.is_empty() {
        clusters.retain(|spec| {
            global
                .contexts
                .iter()
                .any(|glob| kube::kubeconfig::glob_match(glob, &spec.context))
        });
    }
    let scenario = Scenario::for_demo(
        &fleet.clusters,
        global.demo_scale.is_some(),
        global.demo_seed,
    );
    let sim = SimFleet::new(SimCore::new(fleet.clone(), &scenario, global.demo_seed));
    let selection = select(fleet, clusters, scope, prune)?;
    let apis = selection
        .specs
        .iter()
        .map(|spec| {
            sim.cluster(&spec.name, global.readonly)
                .ok_or_else(|| ApiError::Other(format!("{}: no such simulated cluster", spec.name)))
        })
        .collect();
    Ok(selection.into_prepared(apis, loaded.files))
}

/// The scope checked against the fleet, and per selected cluster what it should have; the
/// part of preparing that does not connect.
struct Selection {
    specs: Vec<ClusterSpec>,
    desired: Vec<Desired>,
    notes: Vec<String>,
    prune_kinds: Vec<(String, String)>,
    prune_namespaces: BTreeSet<String>,
    ignores: Ignores,
    fleet: Arc<Fleet>,
}

fn select(
    fleet: Arc<Fleet>,
    clusters: Vec<ClusterSpec>,
    scope: &ScopeArgs,
    prune: bool,
) -> Result<Selection, InputError> {
    let resources = ResourceScope::parse(scope)?;
    resources.check_names(&fleet, &scope.resources, scope.workload_argument)?;
    let mut specs = clusters;
    for name in &scope.clusters {
        if !specs.iter().any(|spec| &spec.name == name) {
            let known: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
            return Err(InputError(no_such("--cluster", name, "cluster", &known)));
        }
    }
    if !scope.clusters.is_empty() {
        specs.retain(|spec| scope.clusters.contains(&spec.name));
    }
    let mut notes = Vec::new();
    let desired: Vec<Desired> = specs
        .iter()
        .map(|spec| match fleet.cluster_index(&spec.name) {
            Some(c) => {
                let selected =
                    (0..fleet.resources.len()).filter(|&row| resources.selects(&fleet, row));
                desired(&fleet, c, selected, resources.is_everything())
            }
            None => Desired::default(),
        })
        .collect();
    let placement_failed = desired.iter().any(|d| !d.failed.is_empty());
    let mut prune_kinds: Vec<(String, String)> = Vec::new();
    if prune {
        if placement_failed {
            notes.push(
                "not pruning: some objects could not be rendered (placement had errors)".into(),
            );
        } else if !resources.is_everything() {
            notes.push("not pruning: --resource, -n or -l limits the scope".into());
        } else {
            let mut kinds: BTreeSet<(String, String)> = fleet
                .resources
                .iter()
                .map(|r| (r.target.api_version.clone(), r.target.kind.clone()))
                .collect();
            kinds.insert(("v1".into(), "Namespace".into()));
            prune_kinds = kinds.into_iter().collect();
        }
    }
    let prune_namespaces: BTreeSet<String> = fleet
        .resources
        .iter()
        .filter_map(|r| r.target.namespace.clone())
        .collect();
    let ignores = Ignores::new(&fleet.ignores, &specs).retaining(fleet.interpreters.clone());
    Ok(Selection {
        specs,
        desired,
        notes,
        prune_kinds,
        prune_namespaces,
        ignores,
        fleet,
    })
}

impl Selection {
    /// One target per selected cluster, with its API (or why there is none), in order.
    fn into_prepared<A>(
        self,
        apis: Vec<Result<A, ApiError>>,
        files: Vec<SourceFile>,
    ) -> Prepared<A> {
        let targets = self
            .specs
            .iter()
            .zip(apis)
            .zip(self.desired)
            .map(|((spec, api), desired)| Target {
                cluster: spec.name.clone(),
                api,
                objects: desired.objects,
                failed: desired.failed,
                prune_kinds: self.prune_kinds.clone(),
                prune_namespaces: self.prune_namespaces.clone(),
                suspended: desired.suspended,
                refuse_unowned: desired.refuse_unowned,
                take_over_unowned: desired.take_over_unowned,
            })
            .collect();
        Prepared {
            targets,
            notes: self.notes,
            ignores: self.ignores,
            fleet: self.fleet,
            files,
        }
    }
}

/// A `--context` glob that selects none of the fleet's clusters is an input error (a typo
/// would otherwise act on nothing and report success), naming the glob and the clusters it
/// could have selected. A fleet without an inventory takes its clusters from the globs, which
/// the kubeconfig checks.
pub fn unmatched_contexts(globs: &[String], fleet: &Fleet) -> Result<(), InputError> {
    if fleet.clusters.is_empty() {
        return Ok(());
    }
    let unmatched: Vec<&str> = globs
        .iter()
        .filter(|glob| {
            !fleet
                .clusters
                .iter()
                .any(|spec| kube::kubeconfig::glob_match(glob, &spec.context))
        })
        .map(String::as_str)
        .collect();
    if unmatched.is_empty() {
        return Ok(());
    }
    let known: Vec<String> = fleet
        .clusters
        .iter()
        .map(|spec| {
            if spec.context == spec.name {
                spec.name.clone()
            } else {
                format!("{} (context {})", spec.name, spec.context)
            }
        })
        .collect();
    Err(InputError(format!(
        "--context {}: selects none of the fleet's clusters; the fleet has: {}",
        unmatched.join(", --context "),
        known.join(", ")
    )))
}

/// Prints an input error and gives its exit code.
pub fn input_error(message: &str) -> u8 {
    eprintln!("error: {}", printable(message, true));
    exit::INPUT
}

/// Asks a yes/no question on the terminal.
pub fn confirm(question: &str) -> bool {
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes")
}

/// Drifted fields that `repair --revert` already took back before (as the audit log says) and
/// that the same kind of change hit again: likely an owner fight with another manager (an
/// autoscaler, a controller). One note per field, suggesting an ignore rule.
pub fn owner_fights(items: &[DriftItem], entries: &[Value]) -> Vec<String> {
    let has = |entry: &Value, key: &str, wanted: &str| {
        entry[key]
            .as_array()
            .is_some_and(|list| list.iter().any(|v| v.as_str() == Some(wanted)))
    };
    let mut notes = Vec::new();
    for item in items {
        let object = item.resource.display_key();
        for field in &item.fields {
            let reverts = entries
                .iter()
                .filter(|e| e["action"] == "repair-revert")
                .filter(|e| {
                    has(e, "clusters", &item.cluster)
                        && has(e, "objects", &object)
                        && has(e, "paths", &field.path)
                })
                .count();
            if reverts > 0 {
                notes.push(format!(
                    "{} {object} {}: reverted {reverts} time(s) before and changed again by {}: an owner fight? `flotilla repair --ignore --cluster {} --resource {object} --path {}` stops reporting it",
                    item.cluster,
                    field.path,
                    field.manager.as_deref().unwrap_or("another manager"),
                    item.cluster,
                    field.path
                ));
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::messages::DriftField;

    #[test]
    fn a_context_glob_that_selects_no_fleet_cluster_names_it_and_the_clusters() {
        let files = [crate::engine::SourceFile {
            path: "clusters.yaml".into(),
            text: "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: east}\nspec: {syncMode: Push}\n---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: west}\nspec: {syncMode: Push}\n".into(),
        }];
        let (fleet, errors) = crate::engine::load_fleet(&files);
        assert!(errors.is_empty(), "{errors:?}");
        assert!(unmatched_contexts(&["e*".into()], &fleet).is_ok());
        let Err(InputError(message)) = unmatched_contexts(&["e*".into(), "prod-*".into()], &fleet)
        else {
            panic!("prod-* selects nothing");
        };
        assert!(message.contains("--context prod-*"), "{message}");
        assert!(
            message.contains("east") && message.contains("west"),
            "{message}"
        );
        assert!(unmatched_contexts(&["x".into()], &Fleet::default()).is_ok());
    }

    #[test]
    fn a_field_reverted_before_and_changed_again_is_an_owner_fight() {
        let item = DriftItem {
            cluster: "east".into(),
            resource: ResourceRef {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                namespace: Some("shop".into()),
                name: "web".into(),
            },
            fields: vec![DriftField {
                path: "/spec/replicas".into(),
                desired: json!(2),
                live: json!(5),
                manager: Some("hpa-controller".into()),
                time: None,
                secret: false,
            }],
        };
        let revert = json!({"action": "repair-revert", "clusters": ["east"],
            "objects": ["Deployment/shop/web"], "paths": ["/spec/replicas"]});
        let elsewhere = json!({"action": "repair-revert", "clusters": ["west"],
            "objects": ["Deployment/shop/web"], "paths": ["/spec/replicas"]});
        assert!(
            owner_fights(
                std::slice::from_ref(&item),
                std::slice::from_ref(&elsewhere)
            )
            .is_empty()
        );
        let notes = owner_fights(&[item], &[revert.clone(), revert, elsewhere]);
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("reverted 2 time(s)") && notes[0].contains("hpa-controller"),
            "{notes:?}"
        );
        assert!(
            notes[0].contains("repair --ignore --cluster east"),
            "{notes:?}"
        );
    }
}
