//! Karmada's resource interpreter as a fleet declares it: `ResourceInterpreterCustomization`
//! documents (config.karmada.io/v1alpha1) read and checked as Karmada's admission webhook
//! checks them ([`customization`]), merged per target `apiVersion` and kind as Karmada's
//! config manager merges them, and their Lua functions called as Karmada's Lua VM calls them
//! ([`vm`]): `InterpretHealth`, `GetReplicas`, `ReviseReplica`, `Retain` (with Karmada's
//! built-in retention for the kinds it has one for, [`retain`]). It runs scripts only
//! in the health room's bounded sandbox; it must not read files, decide placement, or know
//! where an object came from.

pub mod customization;
pub mod dependencies;
pub mod retain;
pub mod vm;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::engine::health::lua::{Limits, Returned, RuleError};
use crate::engine::health::rules::Layer;
pub use customization::{Customization, Operation, Script};

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
