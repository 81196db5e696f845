//! Reads one `ResourceInterpreterCustomization` document as Karmada's API and admission
//! webhook accept it: `spec.target.apiVersion` and `spec.target.kind` required, each
//! customization's `luaScript` text that must compile, and no two customizations of one
//! target giving the same operation (dependencies aside, which add up). Errors are located at
//! the field, with the fix. It must not run a script.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::engine::document::parse::Doc;
use crate::engine::document::source::FleetError;

/// One operation's script and the place it was written (`file:line` of its `luaScript`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    pub text: String,
    pub origin: String,
}

/// The group and kind this module reads.
pub const GROUP: &str = "config.karmada.io";
pub const KIND: &str = "ResourceInterpreterCustomization";

/// Karmada's interpreter operations a customization may script, by the field that holds
/// each and the Lua function it must define.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    Retain,
    InterpretReplica,
    InterpretComponent,
    ReviseReplica,
    InterpretStatus,
    AggregateStatus,
    InterpretHealth,
    InterpretDependency,
}

impl Operation {
    pub const ALL: [Operation; 8] = [
        Operation::Retain,
        Operation::InterpretReplica,
        Operation::InterpretComponent,
        Operation::ReviseReplica,
        Operation::InterpretStatus,
        Operation::AggregateStatus,
        Operation::InterpretHealth,
        Operation::InterpretDependency,
    ];

    /// The field under `spec.customizations`.
    pub fn field(self) -> &'static str {
        match self {
            Operation::Retain => "retention",
            Operation::InterpretReplica => "replicaResource",
            Operation::InterpretComponent => "componentResource",
            Operation::ReviseReplica => "replicaRevision",
            Operation::InterpretStatus => "statusReflection",
            Operation::AggregateStatus => "statusAggregation",
            Operation::InterpretHealth => "healthInterpretation",
            Operation::InterpretDependency => "dependencyInterpretation",
        }
    }

    /// Karmada's name of the operation (`operation:` in its tests).
    pub fn name(self) -> &'static str {
        match self {
            Operation::Retain => "Retain",
            Operation::InterpretReplica => "InterpretReplica",
            Operation::InterpretComponent => "InterpretComponent",
            Operation::ReviseReplica => "ReviseReplica",
            Operation::InterpretStatus => "InterpretStatus",
            Operation::AggregateStatus => "AggregateStatus",
            Operation::InterpretHealth => "InterpretHealth",
            Operation::InterpretDependency => "InterpretDependency",
        }
    }

    /// The operation Karmada names so.
    pub fn named(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|op| op.name() == name)
    }
}

/// One customization, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Customization {
    pub name: String,
    pub api_version: String,
    pub kind: String,
    /// Each operation's script; `InterpretDependency` holds this customization's one.
    pub scripts: BTreeMap<Operation, Script>,
    /// Where the document starts (`file:line`).
    pub location: String,
}

/// Whether `doc` is a `ResourceInterpreterCustomization`.
pub fn is_customization(doc: &Doc) -> bool {
    doc.group() == GROUP && doc.kind() == KIND
}

/// Reads `doc` (a `ResourceInterpreterCustomization`) or says what is wrong with it.
pub fn parse(doc: &Doc) -> Result<Customization, FleetError> {
    if doc.name().is_empty() {
        return Err(doc.error(
            "/metadata/name",
            "the ResourceInterpreterCustomization has no name",
            "add `metadata.name` (Karmada merges customizations of one target in name order)",
        ));
    }
    let target = |field: &str, example: &str| -> Result<String, FleetError> {
        let pointer = format!("/spec/target/{field}");
        match doc.value.pointer(&pointer) {
            Some(Value::String(text)) if !text.is_empty() => Ok(text.clone()),
            Some(Value::String(_)) | None | Some(Value::Null) => Err(doc.error(
                &pointer,
                format!("spec.target.{field} is required"),
                format!("name the kind this customization interprets, e.g. `{field}: {example}`"),
            )),
            Some(_) => Err(doc.error(
                &pointer,
                format!("spec.target.{field} must be text"),
                format!("write e.g. `{field}: {example}`"),
            )),
        }
    };
    let api_version = target("apiVersion", "apps.kruise.io/v1alpha1")?;
    let kind = target("kind", "CloneSet")?;
    match doc.value.pointer("/spec/customizations") {
        Some(Value::Object(_)) => {}
        None | Some(Value::Null) => {
            return Err(doc.error(
                "/spec/customizations",
                "spec.customizations is required",
                "add `customizations:` with e.g. `healthInterpretation: {luaScript: ...}`",
            ));
        }
        Some(_) => {
            return Err(doc.error(
                "/spec/customizations",
                "spec.customizations must be a mapping",
                "write `customizations:` as a mapping of operations to `{luaScript: ...}`",
            ));
        }
    }
    let mut scripts = BTreeMap::new();
    for operation in Operation::ALL {
        let field = operation.field();
        let pointer = format!("/spec/customizations/{field}");
        let script_pointer = format!("{pointer}/luaScript");
        let text = match doc.value.pointer(&pointer) {
            None | Some(Value::Null) => continue,
            Some(Value::Object(_)) => match doc.value.pointer(&script_pointer) {
                Some(Value::String(text)) => text.clone(),
                None | Some(Value::Null) => {
                    return Err(doc.error(
                        &script_pointer,
                        format!("customizations.{field}.luaScript is required"),
                        format!(
                            "give the Lua text defining `function {}(...)`, or remove `{field}`",
                            function_of(operation)
                        ),
                    ));
                }
                Some(_) => {
                    return Err(doc.error(
                        &script_pointer,
                        format!("customizations.{field}.luaScript must be text"),
                        "write the script as a block: `luaScript: |` and the Lua below it",
                    ));
                }
            },
            Some(_) => {
                return Err(doc.error(
                    &pointer,
                    format!("customizations.{field} must be a mapping"),
                    format!("write `{field}: {{luaScript: ...}}`"),
                ));
            }
        };
        if text.is_empty() {
            continue;
        }
        if let Err(reason) = super::vm::compiles(&text) {
            return Err(doc.error(
                &script_pointer,
                format!(
                    "InterpreterOperation({}) Lua script error: {reason}",
                    operation.name()
                ),
                format!(
                    "fix the Lua so it compiles (Lua 5.1); it must define `function {}(...)`",
                    function_of(operation)
                ),
            ));
        }
        scripts.insert(
            operation,
            Script {
                text,
                origin: doc.location(&script_pointer).to_string(),
            },
        );
    }
    Ok(Customization {
        name: doc.name().to_string(),
        api_version,
        kind,
        scripts,
        location: doc.location("").to_string(),
    })
}

/// The Lua function an operation's script must define.
pub fn function_of(operation: Operation) -> &'static str {
    match operation {
        Operation::Retain => "Retain",
        Operation::InterpretReplica => "GetReplicas",
        Operation::InterpretComponent => "GetComponents",
        Operation::ReviseReplica => "ReviseReplica",
        Operation::InterpretStatus => "ReflectStatus",
        Operation::AggregateStatus => "AggregateStatus",
        Operation::InterpretHealth => "InterpretHealth",
        Operation::InterpretDependency => "GetDependencies",
    }
}

/// Karmada's webhook refuses a customization that gives an operation another customization
/// of the same target already gives (dependencies aside); so does flotilla, at the later one.
pub fn conflicts(read: &[(&Doc, Customization)]) -> Vec<FleetError> {
    let mut errors = Vec::new();
    let mut first: BTreeMap<(&str, &str, Operation), &str> = BTreeMap::new();
    for (doc, customization) in read {
        for operation in customization.scripts.keys() {
            if *operation == Operation::InterpretDependency {
                continue;
            }
            let key = (
                customization.api_version.as_str(),
                customization.kind.as_str(),
                *operation,
            );
            match first.get(&key) {
                Some(other) if *other != customization.name => errors.push(doc.error(
                    &format!("/spec/customizations/{}", operation.field()),
                    format!(
                        "conflicting with InterpreterOperation({}) of existing ResourceInterpreterCustomization({other})",
                        operation.name()
                    ),
                    format!(
                        "keep one {} script for {} {}: remove it here or from {other}",
                        operation.field(),
                        customization.api_version,
                        customization.kind
                    ),
                )),
                Some(_) => {}
                None => {
                    first.insert(key, customization.name.as_str());
                }
            }
        }
    }
    errors
}
