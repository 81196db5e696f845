//! What a fleet's Karmada interpreters mean to its assembly: its `ResourceInterpreterCustomization`
//! documents read into [`Interpreters`], and a custom kind's replicas read by `GetReplicas`
//! (with the `ReviseReplica` that later sets a cluster's share), a multi-component kind's
//! components by `GetComponents` (the explanation's line), and the one call that makes a
//! fleet's `InterpretHealth` scripts judge health from then on ([`use_for_health`]), made
//! wherever a fleet is put to use. It must not place or render.

use std::hash::{Hash, Hasher};

use serde_json::Value;

use crate::engine::document::parse::{Doc, DocMemo};
use crate::engine::document::source::FleetError;
use crate::engine::fleet::decide::Fleet;
use crate::engine::health::lua::Limits;
use crate::engine::interpreter::{Interpreters, Operation, Script, customization, vm};
use crate::model::ResourceRef;

/// Makes `fleet`'s Karmada interpreters judge health for every later assessment, replacing
/// those of the fleet used before (a fleet with none takes them away). Called wherever a fleet
/// is put to use: loaded for a command or the console, and again each time the console
/// reloads it after an edit, so an edited customization counts without a restart.
pub fn use_for_health(fleet: &Fleet) {
    crate::engine::health::use_fleet_layer(Some(fleet.interpreters.health_layer()));
}

/// Makes a Karmada hub's interpreters judge health, over those of `fleet` (the fleet
/// directory beside it, if one was read): for a kind and operation both give, the hub's
/// script decides, as it is the one the hub runs; each verdict names its script's origin
/// (`hub:CONTEXT/ResourceInterpreterCustomization/NAME:LINE` or the fleet file's).
pub fn use_hub_for_health(hub: &Interpreters, fleet: Option<&Fleet>) {
    let merged = match fleet {
        Some(fleet) => hub.over(&fleet.interpreters),
        None => hub.clone(),
    };
    crate::engine::health::use_fleet_layer(Some(merged.health_layer()));
}

/// A custom kind's replica count by the fleet's `GetReplicas` for its `apiVersion` and kind
/// (an error in the script: why the template is not propagated, as Karmada makes no binding
/// for it), and the `ReviseReplica` that sets a cluster's share; `None` without `GetReplicas`.
/// The script runs once per template and script version: the result is kept in `memo` (the
/// template document's), keyed by the script's origin and text and the template's identity
/// (the object `base` is made from the document and that identity alone).
pub(super) fn interpreted_replicas(
    base: &Value,
    target: &ResourceRef,
    interpreters: &Interpreters,
    memo: &DocMemo,
) -> Option<(Result<i64, String>, Option<Script>)> {
    let get = interpreters.script(
        &target.api_version,
        &target.kind,
        Operation::InterpretReplica,
    )?;
    let revise = interpreters
        .script(&target.api_version, &target.kind, Operation::ReviseReplica)
        .cloned();
    let version = {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (&get.origin, &get.text, target).hash(&mut hasher);
        hasher.finish()
    };
    let kept = memo.replicas.lock().ok().and_then(|kept| {
        kept.as_ref()
            .filter(|(v, _)| *v == version)
            .map(|(_, replicas)| replicas.clone())
    });
    let replicas = kept.unwrap_or_else(|| {
        let replicas = vm::get_replicas(&get.origin, &get.text, base, Limits::default())
            .map(|(replicas, _)| i64::from(replicas.max(0)))
            .map_err(|error| {
                format!(
                    "GetReplicas ({}) failed: {error}; Karmada makes no binding for the template",
                    get.origin
                )
            });
        if let Ok(mut kept) = memo.replicas.lock() {
            *kept = Some((version, replicas.clone()));
        }
        replicas
    });
    Some((replicas, revise))
}

/// The explanation's line for a kind whose customization gives `componentResource`
/// (`GetComponents`): each component's replicas and what each of its replicas asks, as
/// Karmada's scheduler reads them to size a cluster's room when its
/// `MultiplePodTemplatesScheduling` feature gate is on (it then sends every cluster it picks
/// the whole workload, undivided); `None` without the script. Run once per template and
/// script version, as [`interpreted_replicas`] is.
pub(super) fn components_step(
    base: &Value,
    target: &ResourceRef,
    interpreters: &Interpreters,
    memo: &DocMemo,
) -> Option<String> {
    let get = interpreters.script(
        &target.api_version,
        &target.kind,
        Operation::InterpretComponent,
    )?;
    let replicas_by = interpreters
        .script(
            &target.api_version,
            &target.kind,
            Operation::InterpretReplica,
        )
        .map(|script| script.origin.clone());
    let version = {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (&get.origin, &get.text, &replicas_by, target).hash(&mut hasher);
        hasher.finish()
    };
    let kept = memo.components.lock().ok().and_then(|kept| {
        kept.as_ref()
            .filter(|(v, _)| *v == version)
            .map(|(_, step)| step.clone())
    });
    if kept.is_some() {
        return kept;
    }
    let gate = "Karmada's scheduler sizes each cluster's room by whole sets of them when its \
                MultiplePodTemplatesScheduling feature gate is on, and then sends every cluster \
                it picks the whole workload, undivided";
    let default = match &replicas_by {
        Some(origin) => format!("off, as by default, its GetReplicas ({origin}) decides"),
        None => "off, as by default, nothing reads its replicas: it goes whole to each cluster"
            .to_string(),
    };
    let step = match vm::get_components(&get.origin, &get.text, base, Limits::default()) {
        Ok(components) if components.is_empty() => format!(
            "componentResource (GetComponents, {}) names no components",
            get.origin
        ),
        Ok(components) => {
            let each: Vec<String> = components
                .iter()
                .map(|component| {
                    let mut text = format!("{} ×{}", component.name, component.replicas);
                    if let Some(requirements) = &component.requirements {
                        let request = requirements.request_text();
                        let claim = requirements.node_claim.is_some();
                        match (request.is_empty(), claim) {
                            (false, false) => text.push_str(&format!(" ({request} each)")),
                            (false, true) => {
                                text.push_str(&format!(" ({request} each, with a node claim)"))
                            }
                            (true, true) => text.push_str(" (with a node claim)"),
                            (true, false) => {}
                        }
                    }
                    text
                })
                .collect();
            format!(
                "componentResource (GetComponents, {}): {}; {gate} ({default})",
                get.origin,
                each.join(", ")
            )
        }
        Err(error) => format!(
            "componentResource (GetComponents, {}) failed: {error}; with MultiplePodTemplatesScheduling on, Karmada makes no binding for the template ({default})",
            get.origin
        ),
    };
    if let Ok(mut kept) = memo.components.lock() {
        *kept = Some((version, step.clone()));
    }
    Some(step)
}

/// The fleet's `ResourceInterpreterCustomization`s, read, checked against each other and
/// merged; each one that cannot be used is an error and left out.
pub(super) fn interpreters_of(docs: &[&Doc], errors: &mut Vec<FleetError>) -> Interpreters {
    let mut read = Vec::new();
    for doc in docs
        .iter()
        .filter(|doc| customization::is_customization(doc))
    {
        match customization::parse(doc) {
            Ok(parsed) => read.push((*doc, parsed)),
            Err(e) => errors.push(e),
        }
    }
    errors.extend(customization::conflicts(&read));
    let customizations: Vec<_> = read.into_iter().map(|(_, parsed)| parsed).collect();
    Interpreters::new(&customizations)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::interpreter::Customization;
    use serde_json::json;

    /// Interpreters holding one script of a customization of `example.io/v1` Widget.
    fn interpreters(operation: Operation, script: &str) -> Interpreters {
        Interpreters::new(&[Customization {
            name: "widget".into(),
            api_version: "example.io/v1".into(),
            kind: "Widget".into(),
            scripts: [(
                operation,
                Script {
                    text: script.into(),
                    origin: "fleet.yaml:9".into(),
                },
            )]
            .into(),
            location: "fleet.yaml:1".into(),
        }])
    }

    /// A Widget `shop/dial` of size 3: its reference and its template.
    fn widget() -> (ResourceRef, serde_json::Value) {
        let target = ResourceRef {
            api_version: "example.io/v1".into(),
            kind: "Widget".into(),
            namespace: Some("shop".into()),
            name: "dial".into(),
        };
        let base = json!({"apiVersion": "example.io/v1", "kind": "Widget", "spec": {"size": 3}});
        (target, base)
    }

    fn calls() -> u64 {
        vm::CALLS.with(std::cell::Cell::get)
    }

    #[test]
    fn get_replicas_runs_once_per_template_and_script_version() {
        let (target, base) = widget();
        let replicas = |interpreters: &Interpreters, memo: &DocMemo| {
            interpreted_replicas(&base, &target, interpreters, memo)
                .unwrap()
                .0
                .unwrap()
        };
        let sized = interpreters(
            Operation::InterpretReplica,
            "function GetReplicas(obj) return obj.spec.size end",
        );
        let memo = DocMemo::default();
        let before = calls();
        assert_eq!(replicas(&sized, &memo), 3);
        assert_eq!(replicas(&sized, &memo), 3);
        assert_eq!(calls() - before, 1, "the second answer is the kept one");
        assert_eq!(
            replicas(&sized, &DocMemo::default()),
            3,
            "another document (an edited template) asks the script again"
        );
        assert_eq!(calls() - before, 2);
        let fixed = interpreters(
            Operation::InterpretReplica,
            "function GetReplicas(obj) return 7 end",
        );
        assert_eq!(
            replicas(&fixed, &memo),
            7,
            "an edited script is another version"
        );
        assert_eq!(calls() - before, 3);
    }

    #[test]
    fn get_components_runs_once_per_template_and_script_version() {
        let (target, base) = widget();
        let interpreters = interpreters(
            Operation::InterpretComponent,
            "function GetComponents(o) return {{name = 'a', replicas = o.spec.size}} end",
        );
        let memo = DocMemo::default();
        let before = calls();
        let step = components_step(&base, &target, &interpreters, &memo).unwrap();
        assert!(
            step.starts_with("componentResource (GetComponents, fleet.yaml:9): a ×3;"),
            "{step}"
        );
        assert_eq!(
            components_step(&base, &target, &interpreters, &memo),
            Some(step)
        );
        assert_eq!(calls() - before, 1, "the second answer is the kept one");
        assert_eq!(
            components_step(&base, &target, &Interpreters::default(), &memo),
            None,
            "no script, no line"
        );
    }
}
