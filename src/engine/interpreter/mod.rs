//! Karmada's resource interpreter as a fleet declares it: `ResourceInterpreterCustomization`
//! documents (config.karmada.io/v1alpha1) read and checked as Karmada's admission webhook
//! checks them ([`customization`]), merged per target `apiVersion` and kind as Karmada's
//! config manager merges them, and their Lua functions called as Karmada's Lua VM calls them
//! ([`vm`]): `InterpretHealth`, `GetReplicas`, `ReviseReplica`, `Retain` (with Karmada's
//! built-in retention for the kinds it has one for, [`retain`]), `GetComponents` (a
//! multi-component workload's replicas and requirements per component, [`requirements`],
//! its quantities [`quantity`]), `ReflectStatus` and
//! `AggregateStatus` (with Karmada's built-in status interpretation, [`status`]; a hub's
//! per-member record held against flotilla's reads, [`members`]). It runs scripts only
//! in the health room's bounded sandbox; it must not read files, decide placement, or know
//! where an object came from.

pub mod customization;
pub mod dependencies;
pub mod members;
pub mod quantity;
pub mod requirements;
pub mod retain;
pub mod status;
pub mod vm;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::engine::health::lua::{Limits, Returned, RuleError};
use crate::engine::health::rules::Layer;
pub use customization::{Customization, Operation, Script};
pub use status::StatusItem;

/// The customizations of one target, merged as Karmada merges them: customizations sorted
/// by name, the first non-empty script of each operation kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Accessor {
    scripts: BTreeMap<Operation, Script>,
    /// Every customization's `GetDependencies`, in name order: Karmada runs them all and
    /// takes the union.
    dependencies: Vec<Script>,
}

impl Accessor {
    /// The script of `operation`, if a customization gives one (the first `GetDependencies`
    /// for [`Operation::InterpretDependency`]; [`Interpreters::dependencies`] runs them all).
    pub fn script(&self, operation: Operation) -> Option<&Script> {
        match operation {
            Operation::InterpretDependency => self.dependencies.first(),
            _ => self.scripts.get(&operation),
        }
    }
}

/// A fleet's interpreters, by target `(apiVersion, kind)` matched exactly, as Karmada matches
/// an object's GroupVersionKind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interpreters {
    targets: BTreeMap<(String, String), Arc<Accessor>>,
}

impl Interpreters {
    /// The merged interpreters of `customizations` (in any order).
    pub fn new(customizations: &[Customization]) -> Interpreters {
        let mut sorted: Vec<&Customization> = customizations.iter().collect();
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        let mut targets: BTreeMap<(String, String), Accessor> = BTreeMap::new();
        for customization in sorted {
            let accessor = targets
                .entry((
                    customization.api_version.clone(),
                    customization.kind.clone(),
                ))
                .or_default();
            for (operation, script) in &customization.scripts {
                if *operation == Operation::InterpretDependency {
                    accessor.dependencies.push(script.clone());
                    continue;
                }
                accessor
                    .scripts
                    .entry(*operation)
                    .or_insert_with(|| script.clone());
            }
        }
        Interpreters {
            targets: targets
                .into_iter()
                .map(|(key, accessor)| (key, Arc::new(accessor)))
                .collect(),
        }
    }

    /// These interpreters over `lower`: for each target and operation, this one's script when
    /// it has one, else `lower`'s (the dependency scripts of a target taken whole from one
    /// side). A Karmada hub's customizations over a fleet directory's: the hub's object is the
    /// one the hub runs, so it decides what the hub does, and each script keeps its origin.
    pub fn over(&self, lower: &Interpreters) -> Interpreters {
        let mut targets = lower.targets.clone();
        for (key, upper) in &self.targets {
            let merged = match targets.get(key) {
                None => upper.clone(),
                Some(below) => {
                    let mut scripts = below.scripts.clone();
                    scripts.extend(upper.scripts.clone());
                    let dependencies = if upper.dependencies.is_empty() {
                        below.dependencies.clone()
                    } else {
                        upper.dependencies.clone()
                    };
                    Arc::new(Accessor {
                        scripts,
                        dependencies,
                    })
                }
            };
            targets.insert(key.clone(), merged);
        }
        Interpreters { targets }
    }

    /// Whether the fleet declares no interpreter.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// The script of `operation` for objects of `api_version` and `kind`.
    pub fn script(&self, api_version: &str, kind: &str, operation: Operation) -> Option<&Script> {
        // Most fleets have none: asked for every template, this costs nothing then.
        if self.targets.is_empty() {
            return None;
        }
        self.targets
            .get(&(api_version.to_string(), kind.to_string()))?
            .script(operation)
    }

    /// What `object`'s `GetDependencies` scripts name, all of them run and their references
    /// joined without repeats (sorted); `None` when no customization of its kind gives one, an
    /// error (naming the script) when one fails, as Karmada then propagates none of them.
    pub fn dependencies(
        &self,
        object: &Value,
    ) -> Option<Result<Vec<dependencies::Reference>, InterpreterError>> {
        if self.targets.is_empty() {
            return None;
        }
        let text = |field: &str| object.get(field).and_then(Value::as_str).unwrap_or("");
        let accessor = self
            .targets
            .get(&(text("apiVersion").to_string(), text("kind").to_string()))?;
        if accessor.dependencies.is_empty() {
            return None;
        }
        let mut found = std::collections::BTreeSet::new();
        for script in &accessor.dependencies {
            match vm::get_dependencies(&script.origin, &script.text, object, Limits::default()) {
                Ok(references) => found.extend(references),
                Err(error) => {
                    return Some(Err(InterpreterError {
                        origin: format!("GetDependencies ({})", script.origin),
                        error,
                    }));
                }
            }
        }
        Some(Ok(found.into_iter().collect()))
    }

    /// The components of `object` by its kind's `componentResource` (`GetComponents`), `None`
    /// when no customization of its kind gives one; an error names the script.
    pub fn components(
        &self,
        object: &Value,
    ) -> Option<Result<Vec<requirements::Component>, InterpreterError>> {
        let text = |field: &str| object.get(field).and_then(Value::as_str).unwrap_or("");
        let script = self.script(
            text("apiVersion"),
            text("kind"),
            Operation::InterpretComponent,
        )?;
        Some(
            vm::get_components(&script.origin, &script.text, object, Limits::default()).map_err(
                |error| InterpreterError {
                    origin: format!("GetComponents ({})", script.origin),
                    error,
                },
            ),
        )
    }

    /// The health rule layer of these interpreters' `InterpretHealth` scripts, for
    /// [`crate::engine::health::rules::Rules::use_fleet_layer`].
    pub fn health_layer(&self) -> Layer {
        let mut layer = Layer::default();
        for ((api_version, kind), accessor) in &self.targets {
            let Some(script) = accessor.script(Operation::InterpretHealth) else {
                continue;
            };
            let text = script.text.clone();
            let origin = script.origin.clone();
            let named = origin.clone();
            layer.add_judge(
                api_version,
                kind,
                origin,
                script.text.clone(),
                Arc::new(move |object: &Value, limits: Limits| {
                    let healthy = vm::interpret_health(&named, &text, object, limits)?;
                    Ok(Some(health_verdict(healthy)))
                }),
            );
        }
        layer
    }
}

/// A template's status as Karmada would aggregate it, and the rules that decided it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Aggregation {
    /// The template's `.status` after aggregation (`{}` when it has none).
    pub status: Value,
    /// What aggregated: `"apps/Deployment (built-in)"` or the customization's script,
    /// `"example.io/Widget (karmada interpreter, fleet/widget.yaml:12)"`.
    pub rule: String,
    /// What collected each member's status, named the same way.
    #[serde(rename = "reflectRule")]
    pub reflect_rule: String,
}

/// The name of a rule of `operation` for `object`'s kind: the script's origin, or built-in.
fn rule_name(object: &Value, script: Option<&Script>) -> String {
    let text = |field: &str| object.get(field).and_then(Value::as_str).unwrap_or("");
    let group = text("apiVersion")
        .rsplit_once('/')
        .map_or("", |(group, _)| group);
    let key = crate::engine::health::rules::key(group, text("kind"));
    match script {
        Some(script) => format!("{key} (karmada interpreter, {})", script.origin),
        None => format!("{key} (built-in)"),
    }
}

impl Interpreters {
    fn script_for(&self, object: &Value, operation: Operation) -> Option<&Script> {
        let text = |field: &str| object.get(field).and_then(Value::as_str).unwrap_or("");
        self.script(text("apiVersion"), text("kind"), operation)
    }

    /// What Karmada collects of a member's live `object` (`ReflectStatus`): a customization's
    /// `statusReflection` where one is given, else the built-in ([`status::reflect`]); `None`
    /// when there is nothing to collect.
    pub fn reflect_status(&self, object: &Value) -> Result<Option<Value>, InterpreterError> {
        self.reflect_status_within(object, Limits::default())
    }

    fn reflect_status_within(
        &self,
        object: &Value,
        limits: Limits,
    ) -> Result<Option<Value>, InterpreterError> {
        match self.script_for(object, Operation::InterpretStatus) {
            Some(script) => vm::reflect_status(&script.origin, &script.text, object, limits)
                .map(Some)
                .map_err(|error| InterpreterError {
                    origin: format!("ReflectStatus ({})", script.origin),
                    error,
                }),
            None => status::reflect(object).map_err(|reason| InterpreterError {
                origin: format!("ReflectStatus ({})", rule_name(object, None)),
                error: RuleError::Runtime(reason),
            }),
        }
    }

    /// `template`'s status aggregated from the members' collected `items` (`AggregateStatus`;
    /// `None` when the binding has no status yet, which a script sees as `nil`): a
    /// customization's `statusAggregation` where one is given, else the built-in
    /// ([`status::aggregate`]); `None` when neither knows the kind (Karmada then leaves the
    /// template's status alone).
    pub fn aggregate_status(
        &self,
        template: &Value,
        items: Option<&[StatusItem]>,
    ) -> Option<Result<Aggregation, InterpreterError>> {
        self.aggregate_status_within(template, items, Limits::default())
    }

    fn aggregate_status_within(
        &self,
        template: &Value,
        items: Option<&[StatusItem]>,
        limits: Limits,
    ) -> Option<Result<Aggregation, InterpreterError>> {
        let script = self.script_for(template, Operation::AggregateStatus);
        let reflect_rule = rule_name(
            template,
            self.script_for(template, Operation::InterpretStatus),
        );
        let rule = rule_name(template, script);
        let status = match script {
            Some(script) => {
                let items: Option<Vec<Value>> =
                    items.map(|items| items.iter().map(StatusItem::to_json).collect());
                vm::aggregate_status(
                    &script.origin,
                    &script.text,
                    template,
                    items.as_deref(),
                    limits,
                )
                .map(|object| object.get("status").cloned().unwrap_or(Value::Null))
                .map_err(|error| InterpreterError {
                    origin: format!("AggregateStatus ({})", script.origin),
                    error,
                })
            }
            None => status::aggregate(template, items.unwrap_or(&[]))?.map_err(|reason| {
                InterpreterError {
                    origin: format!("AggregateStatus ({rule})"),
                    error: RuleError::Runtime(reason),
                }
            }),
        };
        Some(status.map(|status| Aggregation {
            status: if status.is_null() {
                Value::Object(serde_json::Map::new())
            } else {
                status
            },
            rule,
            reflect_rule,
        }))
    }

    /// `template`'s status aggregated from the members' live objects (`None`: the member
    /// does not hold it), each reflected first, as Karmada's status controller does; `None`
    /// when no rule aggregates the kind.
    pub fn aggregate_members(
        &self,
        template: &Value,
        members: &[(&str, Option<&Value>)],
    ) -> Option<Result<Aggregation, InterpreterError>> {
        self.aggregate_members_within(template, members, Limits::default())
    }

    /// [`Interpreters::aggregate_members`] with each script held to `limits` (the console's
    /// tighter bound, so a runaway script cannot hold up a frame for long).
    pub fn aggregate_members_within(
        &self,
        template: &Value,
        members: &[(&str, Option<&Value>)],
        limits: Limits,
    ) -> Option<Result<Aggregation, InterpreterError>> {
        let text = |field: &str| template.get(field).and_then(Value::as_str).unwrap_or("");
        let known = status::aggregates(text("apiVersion"), text("kind"))
            || self
                .script_for(template, Operation::AggregateStatus)
                .is_some();
        if !known {
            return None;
        }
        let mut items = Vec::with_capacity(members.len());
        for (cluster, live) in members {
            let status = match live {
                Some(object) => match self.reflect_status_within(object, limits) {
                    Ok(status) => status,
                    Err(error) => return Some(Err(error)),
                },
                None => None,
            };
            items.push(StatusItem {
                cluster: cluster.to_string(),
                applied: live.is_some(),
                status,
                ..StatusItem::default()
            });
        }
        self.aggregate_status_within(
            template,
            (!items.is_empty()).then_some(items.as_slice()),
            limits,
        )
    }
}

/// How Karmada's two health words read among Argo CD's six: `true` (Karmada's Healthy) is
/// Healthy; `false` (Karmada's Unhealthy) is Degraded, the one word that asks for attention,
/// since Karmada does not tell a rollout under way from a failure. An error is Unknown, as
/// Karmada's own health is Unknown when its interpreter fails (the caller says so).
pub fn health_verdict(healthy: bool) -> Returned {
    if healthy {
        Returned {
            status: "Healthy".to_string(),
            message: "InterpretHealth: healthy".to_string(),
            deletion_message: String::new(),
        }
    } else {
        Returned {
            status: "Degraded".to_string(),
            message: "InterpretHealth: unhealthy (Karmada's Unhealthy)".to_string(),
            deletion_message: String::new(),
        }
    }
}

/// Why an interpreter gave no answer: the script's origin and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {error}")]
pub struct InterpreterError {
    pub origin: String,
    pub error: RuleError,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn customization(name: &str, origin: &str, operations: &[Operation]) -> Customization {
        Customization {
            name: name.into(),
            api_version: "example.io/v1".into(),
            kind: "Widget".into(),
            scripts: operations
                .iter()
                .map(|op| {
                    (
                        *op,
                        Script {
                            text: format!("-- {name}"),
                            origin: origin.into(),
                        },
                    )
                })
                .collect(),
            location: origin.into(),
        }
    }

    fn scripted(operation: Operation, text: &str) -> Interpreters {
        let mut widget = customization("widget", "fleet/widget.yaml:12", &[]);
        widget.scripts.insert(
            operation,
            Script {
                text: text.into(),
                origin: "fleet/widget.yaml:12".into(),
            },
        );
        Interpreters::new(&[widget])
    }

    #[test]
    fn a_fleets_aggregation_script_decides_and_is_named() {
        let interpreters = scripted(
            Operation::AggregateStatus,
            "function AggregateStatus(d, items)\n  local n = 0\n  for i = 1, #items do n = n + items[i].status.ready end\n  d.status = {ready = n}\n  return d\nend",
        );
        let template = serde_json::json!({"apiVersion": "example.io/v1", "kind": "Widget"});
        let live = serde_json::json!({"apiVersion": "example.io/v1", "kind": "Widget",
            "status": {"ready": 2}});
        let got = interpreters
            .aggregate_members(&template, &[("a", Some(&live)), ("b", Some(&live))])
            .unwrap()
            .unwrap();
        assert_eq!(got.status, serde_json::json!({"ready": 4}));
        assert_eq!(
            got.rule,
            "example.io/Widget (karmada interpreter, fleet/widget.yaml:12)"
        );
        // Reflection had no script: Karmada's default collects the whole status.
        assert_eq!(got.reflect_rule, "example.io/Widget (built-in)");
        // A kind nobody aggregates: nothing.
        let other = serde_json::json!({"apiVersion": "x.io/v1", "kind": "Gadget"});
        assert!(interpreters.aggregate_members(&other, &[]).is_none());
    }

    #[test]
    fn a_runaway_or_forbidden_aggregation_script_is_an_error_naming_it() {
        let template = serde_json::json!({"apiVersion": "example.io/v1", "kind": "Widget"});
        let limits = Limits {
            instructions: 200_000,
            ..Limits::default()
        };
        for text in [
            "function AggregateStatus(d, items) while true do end end",
            "function AggregateStatus(d, items) os.execute('true') return d end",
            "function AggregateStatus(d, items) return io.open('/etc/passwd') end",
            "function AggregateStatus(d, items) return 1 end",
        ] {
            let interpreters = scripted(Operation::AggregateStatus, text);
            let error = interpreters
                .aggregate_members_within(&template, &[], limits)
                .unwrap()
                .unwrap_err();
            assert!(
                error
                    .to_string()
                    .starts_with("AggregateStatus (fleet/widget.yaml:12): "),
                "{error}"
            );
        }
    }

    #[test]
    fn the_hubs_script_wins_per_operation_and_the_fleets_fills_the_rest() {
        let fleet = Interpreters::new(&[customization(
            "widget",
            "fleet.yaml:9",
            &[Operation::InterpretHealth, Operation::Retain],
        )]);
        let hub = Interpreters::new(&[customization(
            "widget",
            "hub:karmada/ResourceInterpreterCustomization/widget:9",
            &[Operation::InterpretHealth],
        )]);
        let both = hub.over(&fleet);
        let origin = |op| {
            both.script("example.io/v1", "Widget", op)
                .map(|s| s.origin.as_str())
        };
        assert_eq!(
            origin(Operation::InterpretHealth),
            Some("hub:karmada/ResourceInterpreterCustomization/widget:9")
        );
        assert_eq!(origin(Operation::Retain), Some("fleet.yaml:9"));
        assert_eq!(origin(Operation::InterpretReplica), None);
        assert_eq!(hub.over(&Interpreters::default()), hub);
    }
}
