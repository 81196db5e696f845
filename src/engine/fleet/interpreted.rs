//! What a fleet's Karmada interpreters mean to its assembly: its `ResourceInterpreterCustomization`
//! documents read into [`Interpreters`], and a custom kind's replicas read by `GetReplicas`
//! (with the `ReviseReplica` that later sets a cluster's share). It must not place or render.

use serde_json::Value;

use crate::engine::document::parse::Doc;
use crate::engine::document::source::FleetError;
use crate::engine::health::lua::Limits;
use crate::engine::interpreter::{Interpreters, Operation, Script, customization, vm};
use crate::model::ResourceRef;

/// A custom kind's replica count by the fleet's `GetReplicas` for its `apiVersion` and kind
/// (an error in the script: why the template is not propagated, as Karmada makes no binding
/// for it), and the `ReviseReplica` that sets a cluster's share; `None` without `GetReplicas`.
pub(super) fn interpreted_replicas(
    base: &Value,
    target: &ResourceRef,
    interpreters: &Interpreters,
) -> Option<(Result<i64, String>, Option<Script>)> {
    let get = interpreters.script(
        &target.api_version,
        &target.kind,
        Operation::InterpretReplica,
    )?;
    let revise = interpreters
        .script(&target.api_version, &target.kind, Operation::ReviseReplica)
        .cloned();
    let replicas = vm::get_replicas(&get.origin, &get.text, base, Limits::default())
        .map(|(replicas, _)| i64::from(replicas.max(0)))
        .map_err(|error| {
            format!(
                "GetReplicas ({}) failed: {error}; Karmada makes no binding for the template",
                get.origin
            )
        });
    Some((replicas, revise))
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
