//! Calls a customization's Lua function as Karmada's Lua VM (`luavm`) calls it: the script
//! run once to define its functions, the named function looked up and called with the
//! objects converted as Karmada converts them, and its results read back as Karmada reads
//! them (gopher-json's encoding, then Karmada's repair of empty tables from the objects it
//! was given). The state is the health room's bounded sandbox, shaped as Karmada's: base,
//! table, string, math and a safe `os`; `collectgarbage`, `getmetatable`, `setmetatable`,
//! `rawget`, `rawset`, `rawequal`, `getfenv`, `setfenv`, `module`, `newproxy` and the loaders
//! raise Karmada's error; `require` gives `kube` (Karmada's helper library) and the standard
//! libraries. It must not print (Karmada's `print` is a no-op here) nor reach files or the
//! network.

use mlua::{Lua, Table, Value as LuaValue};
use serde_json::{Map, Value};

use super::dependencies::{Reference, pod_template_dependencies};
use super::quantity::Quantity;
use super::requirements::{self, Component, Requirements};
use crate::engine::health::lua::{self, Limits, RuleError};

/// Functions Karmada's VM replaces by an error.
const FORBIDDEN: [&str; 14] = [
    "collectgarbage",
    "dofile",
    "getfenv",
    "getmetatable",
    "load",
    "loadfile",
    "loadstring",
    "rawequal",
    "rawget",
    "rawset",
    "setfenv",
    "setmetatable",
    "module",
    "newproxy",
];

/// Whether `script` compiles, as Karmada's webhook checks it (`LoadString`: nothing runs).
pub fn compiles(script: &str) -> Result<(), String> {
    lua::run_bounded(Limits::default(), |lua| {
        // Text only: bytecode is never taken for a script.
        let chunk = lua
            .load(script)
            .set_mode(mlua::chunk::ChunkMode::Text)
            .into_function();
        Ok(match chunk {
            Ok(_) => Ok(()),
            Err(mlua::Error::SyntaxError { message, .. }) => Err(RuleError::Compile(message)),
            Err(other) => Err(RuleError::Compile(other.to_string())),
        })
    })
    .map_err(|error| match error {
        RuleError::Compile(message) => message,
        other => other.to_string(),
    })
}

#[cfg(test)]
thread_local! {
    /// The calls made on this thread, for tests that show a result was kept, not made again.
    pub static CALLS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// An argument of a call.
pub enum Arg<'a> {
    Object(&'a Value),
    Number(i64),
}

/// Runs `script` (named `origin`), then calls its global `function` with `args`, and hands
/// the first `returns` results to `read`.
pub fn call<T>(
    origin: &str,
    script: &str,
    function: &str,
    args: &[Arg<'_>],
    returns: usize,
    limits: Limits,
    read: impl FnOnce(&[LuaValue]) -> Result<T, RuleError>,
) -> Result<T, RuleError> {
    #[cfg(test)]
    CALLS.with(|calls| calls.set(calls.get() + 1));
    lua::run_bounded(limits, |lua| {
        karmada_globals(lua)?;
        lua::load(lua, script, &format!("={origin}"))?.call::<()>(())?;
        let found: LuaValue = lua.globals().get(function)?;
        let function_value = match found {
            LuaValue::Nil => {
                return Ok(Err(RuleError::Runtime(format!(
                    "not found function {function}"
                ))));
            }
            LuaValue::Function(f) => f,
            other => {
                return Ok(Err(RuleError::Runtime(format!(
                    "{function} is not a function: {}",
                    lua::lua_type(&other)
                ))));
            }
        };
        let mut values = Vec::with_capacity(args.len());
        for arg in args {
            values.push(match arg {
                Arg::Object(object) => lua::to_lua(lua, object)?,
                Arg::Number(number) => LuaValue::Number(*number as f64),
            });
        }
        let results: mlua::MultiValue = function_value.call(mlua::MultiValue::from_iter(values))?;
        let mut results: Vec<LuaValue> = results.into_iter().take(returns).collect();
        results.resize(returns, LuaValue::Nil);
        Ok(read(&results))
    })
}

/// `InterpretHealth(observedObj)`: a boolean, anything else an error.
pub fn interpret_health(
    origin: &str,
    script: &str,
    object: &Value,
    limits: Limits,
) -> Result<bool, RuleError> {
    call(
        origin,
        script,
        "InterpretHealth",
        &[Arg::Object(object)],
        1,
        limits,
        |results| match &results[0] {
            LuaValue::Boolean(healthy) => Ok(*healthy),
            other => Err(RuleError::Returned(format!(
                "{} (InterpretHealth must return a boolean)",
                lua::lua_type(other)
            ))),
        },
    )
}

/// `GetReplicas(desiredObj)`: the replicas (a number, truncated to an int32 as Go does) and
/// the requirements of each replica (a table read as Karmada's `ReplicaRequirements`, or nil
/// for none).
pub fn get_replicas(
    origin: &str,
    script: &str,
    object: &Value,
    limits: Limits,
) -> Result<(i32, Option<Requirements>), RuleError> {
    call(
        origin,
        script,
        "GetReplicas",
        &[Arg::Object(object)],
        2,
        limits,
        |results| {
            let replicas = match &results[0] {
                LuaValue::Number(number) => go_int32(*number),
                LuaValue::Integer(number) => go_int32(*number as f64),
                other => {
                    return Err(RuleError::Returned(format!(
                        "{} (GetReplicas must return a number of replicas)",
                        lua::lua_type(other)
                    )));
                }
            };
            let requires = match &results[1] {
                LuaValue::Nil => None,
                LuaValue::Table(table) => Some(
                    requirements::read(&to_struct(table, &[])?, true)
                        .map_err(RuleError::Returned)?,
                ),
                other => {
                    return Err(RuleError::Returned(format!(
                        "{} (the requirements must be a table or nil)",
                        lua::lua_type(other)
                    )));
                }
            };
            Ok((replicas, requires))
        },
    )
}

/// `GetComponents(desiredObj)`: the components of a multi-component workload (a list read as
/// Karmada's typed `[]Component`, each with its replicas and per-replica requirements; `nil`
/// is none), for Karmada's `componentResource`.
pub fn get_components(
    origin: &str,
    script: &str,
    object: &Value,
    limits: Limits,
) -> Result<Vec<Component>, RuleError> {
    call(
        origin,
        script,
        "GetComponents",
        &[Arg::Object(object)],
        1,
        limits,
        |results| match &results[0] {
            LuaValue::Nil => Ok(Vec::new()),
            LuaValue::Table(table) => {
                let encoded = encode(&LuaValue::Table(table.clone()), 0).map_err(|reason| {
                    RuleError::Runtime(format!("encode lua result to json failed: {reason}"))
                })?;
                // A list is expected: an empty table stays an empty list; empty tables
                // inside it are dropped, as Karmada reads them.
                if encoded == Value::Array(Vec::new()) {
                    return Ok(Vec::new());
                }
                requirements::read_components(&repair_empty(encoded, &[])).map_err(|reason| {
                    RuleError::Returned(format!(
                        "failed to convert lua table for components: {reason}"
                    ))
                })
            }
            other => Err(RuleError::Returned(format!(
                "expected result type 'table' or 'nil' from GetComponents, but got '{}'",
                lua::lua_type(other)
            ))),
        },
    )
}

/// `ReviseReplica(desiredObj, desiredReplica)`: the object with its replicas set.
pub fn revise_replica(
    origin: &str,
    script: &str,
    object: &Value,
    replicas: i64,
    limits: Limits,
) -> Result<Value, RuleError> {
    call(
        origin,
        script,
        "ReviseReplica",
        &[Arg::Object(object), Arg::Number(replicas)],
        1,
        limits,
        |results| object_result(&results[0], &[object]),
    )
}

/// `Retain(desiredObj, observedObj)`: the desired object with what the member owns kept.
pub fn retain(
    origin: &str,
    script: &str,
    desired: &Value,
    observed: &Value,
    limits: Limits,
) -> Result<Value, RuleError> {
    call(
        origin,
        script,
        "Retain",
        &[Arg::Object(desired), Arg::Object(observed)],
        1,
        limits,
        |results| object_result(&results[0], &[desired, observed]),
    )
}

/// `GetDependencies(desiredObj)`: the objects the template needs where it goes, each checked
/// as Karmada's `VerifyDependencies` checks them.
pub fn get_dependencies(
    origin: &str,
    script: &str,
    object: &Value,
    limits: Limits,
) -> Result<Vec<Reference>, RuleError> {
    call(
        origin,
        script,
        "GetDependencies",
        &[Arg::Object(object)],
        1,
        limits,
        |results| {
            let LuaValue::Table(table) = &results[0] else {
                return Err(RuleError::Returned(format!(
                    "{} (expect the returned requires type is table)",
                    lua::lua_type(&results[0])
                )));
            };
            let encoded = encode(&LuaValue::Table(table.clone()), 0).map_err(|reason| {
                RuleError::Runtime(format!("encode lua result to json failed: {reason}"))
            })?;
            let references: Vec<Reference> = serde_json::from_value(encoded).map_err(|e| {
                RuleError::Returned(format!(
                    "the dependencies are not a list of DependentObjectReference: {e}"
                ))
            })?;
            for reference in &references {
                reference.verify().map_err(RuleError::Returned)?;
            }
            Ok(references)
        },
    )
}

/// `ReflectStatus(observedObj)`: the status to collect, read as Karmada reads it into a
/// `RawExtension` (a table, `{}` for an empty one, empty lists inside it dropped).
pub fn reflect_status(
    origin: &str,
    script: &str,
    object: &Value,
    limits: Limits,
) -> Result<Value, RuleError> {
    call(
        origin,
        script,
        "ReflectStatus",
        &[Arg::Object(object)],
        1,
        limits,
        |results| match &results[0] {
            LuaValue::Table(table) => to_struct(table, &[]),
            other => Err(RuleError::Returned(format!(
                "{} (expect the returned replica type is table)",
                lua::lua_type(other)
            ))),
        },
    )
}

/// `AggregateStatus(desiredObj, statusItems)`: the template with its status aggregated from
/// the members' collected statuses (`items`, Go's JSON of `AggregatedStatusItem`s; `None` is
/// Go's nil slice, `nil` to the script, as Karmada passes a binding with no status yet, where
/// an empty list is an empty table). Read as Karmada reads it into an `Unstructured`: a table
/// with a `kind`, empty lists dropped.
pub fn aggregate_status(
    origin: &str,
    script: &str,
    template: &Value,
    items: Option<&[Value]>,
    limits: Limits,
) -> Result<Value, RuleError> {
    let items = items.map_or(Value::Null, |items| Value::Array(items.to_vec()));
    call(
        origin,
        script,
        "AggregateStatus",
        &[Arg::Object(template), Arg::Object(&items)],
        1,
        limits,
        |results| {
            let object = object_result(&results[0], &[])?;
            match object.get("kind") {
                Some(Value::String(kind)) if !kind.is_empty() => Ok(object),
                _ => Err(RuleError::Returned(
                    "Object 'Kind' is missing in the object AggregateStatus returned".into(),
                )),
            }
        },
    )
}

fn object_result(result: &LuaValue, references: &[&Value]) -> Result<Value, RuleError> {
    match result {
        LuaValue::Table(table) => to_struct(table, references),
        other => Err(RuleError::Returned(format!(
            "{} (expect the returned type is table)",
            lua::lua_type(other)
        ))),
    }
}

/// Go's `int32(float64)` for the values a script returns: truncated toward zero, wrapped.
fn go_int32(number: f64) -> i32 {
    if number.is_finite() {
        (number.trunc() as i64) as i32
    } else {
        i32::MIN
    }
}

/// A table returned for a Go struct: gopher-json's encoding with Karmada's repair of empty
/// tables ([`repair_empty`]).
fn to_struct(table: &Table, references: &[&Value]) -> Result<Value, RuleError> {
    let encoded = encode(&LuaValue::Table(table.clone()), 0).map_err(|reason| {
        RuleError::Runtime(format!("encode lua result to json failed: {reason}"))
    })?;
    Ok(repair_empty(encoded, references))
}

/// gopher-json's `Encode`: nil as null, numbers as JSON numbers (integral ones as integers, as
/// Kubernetes' decoder reads them), an empty table as `[]`, a table keyed 1..n as an array, a
/// table keyed by text as an object; any other table, a function or a nested cycle is an
/// error.
pub fn encode(value: &LuaValue, depth: usize) -> Result<Value, String> {
    if depth > 200 {
        return Err("nested table".to_string());
    }
    Ok(match value {
        LuaValue::Nil => Value::Null,
        LuaValue::Boolean(flag) => Value::Bool(*flag),
        LuaValue::Integer(number) => Value::from(*number),
        LuaValue::Number(number) => number_value(*number),
        LuaValue::String(text) => Value::String(text.to_string_lossy()),
        LuaValue::Table(table) => {
            let mut numbered: Vec<(f64, Value)> = Vec::new();
            let mut named = Map::new();
            for pair in table.clone().pairs::<LuaValue, LuaValue>() {
                let (key, item) = pair.map_err(|e| e.to_string())?;
                let item = encode(&item, depth + 1)?;
                match key {
                    LuaValue::String(text) => {
                        named.insert(text.to_string_lossy(), item);
                    }
                    LuaValue::Number(n) => numbered.push((n, item)),
                    LuaValue::Integer(n) => numbered.push((n as f64, item)),
                    _ => return Err("cannot encode mixed or invalid key types".to_string()),
                }
            }
            if numbered.is_empty() && named.is_empty() {
                return Ok(Value::Array(Vec::new()));
            }
            if !numbered.is_empty() && !named.is_empty() {
                return Err("cannot encode mixed or invalid key types".to_string());
            }
            if numbered.is_empty() {
                Value::Object(named)
            } else {
                numbered.sort_by(|a, b| a.0.total_cmp(&b.0));
                let contiguous = numbered
                    .iter()
                    .enumerate()
                    .all(|(i, (key, _))| *key == (i + 1) as f64);
                if !contiguous {
                    return Err("cannot encode mixed or invalid key types".to_string());
                }
                Value::Array(numbered.into_iter().map(|(_, item)| item).collect())
            }
        }
        LuaValue::Function(_) => return Err("cannot encode function to JSON".to_string()),
        other => return Err(format!("cannot encode {} to JSON", lua::lua_type(other))),
    })
}

fn number_value(number: f64) -> Value {
    if number.fract() == 0.0 && number.abs() < 9.0e15 {
        Value::from(number as i64)
    } else {
        serde_json::Number::from_f64(number).map_or(Value::Null, Value::Number)
    }
}

/// Karmada's `convertEmptySliceToEmptyStructPartly`: a Lua table cannot tell `{}` from `[]`,
/// so an empty list in the result at a path (array indices left out) where a reference object
/// holds an empty map becomes `{}`; one where a reference holds an empty list stays; any other
/// is dropped. A result that is only `[]` is `{}` (a struct is expected).
pub fn repair_empty(result: Value, references: &[&Value]) -> Value {
    if result == Value::Array(Vec::new()) {
        return Value::Object(Map::new());
    }
    let mut empty_lists = std::collections::HashSet::new();
    let mut empty_maps = std::collections::HashSet::new();
    for reference in references {
        find_empty(
            reference,
            &mut Vec::new(),
            &mut empty_lists,
            &mut empty_maps,
        );
    }
    let mut result = result;
    repair(&mut result, &mut Vec::new(), &empty_lists, &empty_maps);
    result
}

fn find_empty(
    value: &Value,
    path: &mut Vec<String>,
    lists: &mut std::collections::HashSet<String>,
    maps: &mut std::collections::HashSet<String>,
) {
    let mut visit = |key: Option<&str>, item: &Value, path: &mut Vec<String>| {
        if let Some(key) = key {
            path.push(key.to_string());
        }
        match item {
            Value::Array(items) if items.is_empty() => {
                lists.insert(path.join("."));
            }
            Value::Object(fields) if fields.is_empty() => {
                maps.insert(path.join("."));
            }
            Value::Array(_) | Value::Object(_) => find_empty(item, path, lists, maps),
            _ => {}
        }
        if key.is_some() {
            path.pop();
        }
    };
    match value {
        Value::Object(fields) => {
            for (key, item) in fields {
                visit(Some(key), item, path);
            }
        }
        Value::Array(items) => {
            for item in items {
                visit(None, item, path);
            }
        }
        _ => {}
    }
}

fn repair(
    value: &mut Value,
    path: &mut Vec<String>,
    lists: &std::collections::HashSet<String>,
    maps: &std::collections::HashSet<String>,
) {
    match value {
        Value::Object(fields) => {
            let mut drop = Vec::new();
            for (key, item) in fields.iter_mut() {
                path.push(key.clone());
                if item == &Value::Array(Vec::new()) {
                    let at = path.join(".");
                    if maps.contains(&at) {
                        *item = Value::Object(Map::new());
                    } else if !lists.contains(&at) {
                        drop.push(key.clone());
                    }
                } else {
                    repair(item, path, lists, maps);
                }
                path.pop();
            }
            for key in drop {
                fields.remove(&key);
            }
        }
        Value::Array(items) => {
            let at = path.join(".");
            let mut kept = Vec::with_capacity(items.len());
            for mut item in std::mem::take(items) {
                if item == Value::Array(Vec::new()) {
                    if maps.contains(&at) {
                        kept.push(Value::Object(Map::new()));
                        continue;
                    }
                    if !lists.contains(&at) {
                        // sjson deletes the element, closing the gap.
                        continue;
                    }
                    kept.push(item);
                    continue;
                }
                repair(&mut item, path, lists, maps);
                kept.push(item);
            }
            *items = kept;
        }
        _ => {}
    }
}

/// The globals Karmada's VM gives a script, over the health sandbox's libraries.
fn karmada_globals(lua: &Lua) -> mlua::Result<()> {
    let globals = lua.globals();
    for name in FORBIDDEN {
        let message = format!(
            "call function {name} is not supported in karmada customized resourceinterpreter."
        );
        globals.raw_set(
            name,
            lua.create_function(move |_, _: mlua::MultiValue| -> mlua::Result<()> {
                Err(mlua::Error::runtime(message.clone()))
            })?,
        )?;
    }
    globals.raw_set(
        "print",
        lua.create_function(|_, _: mlua::MultiValue| Ok(()))?,
    )?;
    let kube = kube_library(lua)?;
    let os: LuaValue = globals.raw_get("os")?;
    let (string, table, math): (LuaValue, LuaValue, LuaValue) = (
        globals.raw_get("string")?,
        globals.raw_get("table")?,
        globals.raw_get("math")?,
    );
    globals.raw_set(
        "require",
        lua.create_function(move |_, name: String| match name.as_str() {
            "kube" => Ok(LuaValue::Table(kube.clone())),
            "os" => Ok(os.clone()),
            "string" => Ok(string.clone()),
            "table" => Ok(table.clone()),
            "math" => Ok(math.clone()),
            other => Err(mlua::Error::runtime(format!("module {other} not found"))),
        })?,
    )?;
    Ok(())
}

/// Karmada's `kube` library: `getResourceQuantity` (a quantity as a number),
/// `resourceAdd` (quantities summed, in Kubernetes' canonical text), `accuratePodRequirements`
/// (what one replica of a pod template asks: its node claim and its summed resource request,
/// [`requirements::of_pod_template`]) and `getPodDependencies` (what a pod template
/// references, in a namespace). Quantities are apimachinery's ([`Quantity`]).
fn kube_library(lua: &Lua) -> mlua::Result<Table> {
    let kube = lua.create_table()?;
    kube.raw_set(
        "getResourceQuantity",
        lua.create_function(|_, args: mlua::MultiValue| {
            if args.len() != 1 {
                return Err(mlua::Error::runtime(
                    "getResourceQuantity only accepts one argument",
                ));
            }
            let quantity = quantity_argument(&args[0], 1, "getResourceQuantity")?;
            let number = quantity.approximate_f64();
            if number < 0.0 {
                return Err(mlua::Error::runtime(format!(
                    "int approximation unexpectedly returned a negative value: {}",
                    quantity.text()
                )));
            }
            if number == f64::INFINITY {
                return Err(mlua::Error::runtime(format!(
                    "int approximation unexpectedly returned an infinite value: {}",
                    quantity.text()
                )));
            }
            Ok(number)
        })?,
    )?;
    kube.raw_set(
        "resourceAdd",
        lua.create_function(|_, args: mlua::MultiValue| {
            let mut sum = Quantity::zero();
            for (index, arg) in args.iter().enumerate() {
                sum.add(&quantity_argument(arg, index + 1, "resourceAdd")?);
            }
            Ok(sum.text())
        })?,
    )?;
    kube.raw_set(
        "accuratePodRequirements",
        lua.create_function(|lua, args: mlua::MultiValue| {
            if args.len() != 1 {
                return Err(mlua::Error::runtime(
                    "getPodRequirements only accepts one argument",
                ));
            }
            let template = match &args[0] {
                LuaValue::Table(table) => encode(&LuaValue::Table(table.clone()), 0)
                    .map_err(|e| mlua::Error::runtime(format!("fail to convert lua value: {e}")))?,
                other => {
                    return Err(mlua::Error::runtime(format!(
                        "bad argument #1 to accuratePodRequirements (table expected, got {})",
                        lua::lua_type(other)
                    )));
                }
            };
            // As Karmada reads the table into a PodTemplateSpec: empty tables dropped.
            let template = repair_empty(template, &[]);
            match requirements::of_pod_template(&template) {
                Ok(Some(found)) => lua::to_lua(lua, &found.to_json()),
                Ok(None) => Ok(LuaValue::Nil),
                Err(reason) => Err(mlua::Error::runtime(format!(
                    "fail to convert lua value to PodTemplateSpec: {reason}"
                ))),
            }
        })?,
    )?;
    kube.raw_set(
        "getPodDependencies",
        lua.create_function(|lua, args: mlua::MultiValue| {
            if args.len() != 2 {
                return Err(mlua::Error::runtime(
                    "getPodDependencies only accepts two argument",
                ));
            }
            let template = match &args[0] {
                LuaValue::Table(table) => encode(&LuaValue::Table(table.clone()), 0)
                    .map_err(|e| mlua::Error::runtime(format!("fail to convert lua value: {e}")))?,
                other => {
                    return Err(mlua::Error::runtime(format!(
                        "bad argument #1 (table expected, got {})",
                        lua::lua_type(other)
                    )));
                }
            };
            let namespace = match &args[1] {
                LuaValue::Nil => "default".to_string(),
                LuaValue::String(text) => text.to_string_lossy(),
                LuaValue::Integer(n) => n.to_string(),
                LuaValue::Number(n) => n.to_string(),
                other => {
                    return Err(mlua::Error::runtime(format!(
                        "bad argument #2 (string expected, got {})",
                        lua::lua_type(other)
                    )));
                }
            };
            let references: Vec<Value> = pod_template_dependencies(&template)
                .into_iter()
                .map(|d| {
                    serde_json::json!({"apiVersion": "v1", "kind": d.kind,
                        "namespace": namespace, "name": d.name})
                })
                .collect();
            lua::to_lua(lua, &Value::Array(references))
        })?,
    )?;
    Ok(kube)
}

/// Karmada's `checkResourceQuantity`: `nil` is zero, text is parsed (Go's `MustParse`, whose
/// panic the VM turns into this error), anything else is a type error.
fn quantity_argument(value: &LuaValue, index: usize, function: &str) -> mlua::Result<Quantity> {
    match value {
        LuaValue::Nil => Ok(Quantity::zero()),
        LuaValue::String(text) => {
            let text = text.to_string_lossy();
            Quantity::parse(&text)
                .map_err(|error| mlua::Error::runtime(format!("cannot parse '{text}': {error}")))
        }
        other => Err(mlua::Error::runtime(format!(
            "bad argument #{index} to {function} (string expected, got {})",
            lua::lua_type(other)
        ))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    const HEALTH: &str =
        "function InterpretHealth(obj)\n  return obj.status.ready == obj.spec.replicas\nend";

    #[test]
    fn interpret_health_reads_the_boolean_the_function_returns() {
        let object = json!({"spec": {"replicas": 2}, "status": {"ready": 2}});
        assert_eq!(
            interpret_health("t.yaml:3", HEALTH, &object, Limits::default()),
            Ok(true)
        );
        let object = json!({"spec": {"replicas": 2}, "status": {"ready": 1}});
        assert_eq!(
            interpret_health("t.yaml:3", HEALTH, &object, Limits::default()),
            Ok(false)
        );
    }

    #[test]
    fn a_missing_function_a_wrong_result_and_a_forbidden_call_are_errors() {
        let object = json!({});
        let missing = interpret_health("t", "x = 1", &object, Limits::default());
        assert_eq!(
            missing,
            Err(RuleError::Runtime(
                "not found function InterpretHealth".into()
            ))
        );
        let nil = interpret_health(
            "t",
            "function InterpretHealth(o) end",
            &object,
            Limits::default(),
        );
        assert!(matches!(nil, Err(RuleError::Returned(_))), "{nil:?}");
        let forbidden = interpret_health(
            "t",
            "function InterpretHealth(o) return rawget(o, 'x') == nil end",
            &object,
            Limits::default(),
        );
        assert!(
            matches!(&forbidden, Err(RuleError::Runtime(m)) if m.contains("not supported in karmada")),
            "{forbidden:?}"
        );
        let io = interpret_health(
            "t",
            "function InterpretHealth(o) return io.open('/etc/passwd') ~= nil end",
            &object,
            Limits::default(),
        );
        assert!(io.is_err());
    }

    #[test]
    fn a_loop_that_never_ends_is_stopped() {
        let limits = Limits {
            instructions: 100_000,
            ..Limits::default()
        };
        let result = interpret_health(
            "t",
            "function InterpretHealth(o) while true do end end",
            &json!({}),
            limits,
        );
        assert!(
            matches!(result, Err(RuleError::Instructions(_))),
            "{result:?}"
        );
    }

    #[test]
    fn revise_replica_keeps_empty_maps_and_lists_the_object_had_and_drops_new_ones() {
        let script = "function ReviseReplica(obj, n)\n  obj.spec.replicas = n\n  obj.spec.extra = {}\n  return obj\nend";
        let object = json!({"metadata": {"labels": {}}, "spec": {"replicas": 4, "list": [], "t": {"x": [1]}}});
        let revised = revise_replica("t", script, &object, 1, Limits::default()).unwrap();
        assert_eq!(
            revised,
            json!({"metadata": {"labels": {}}, "spec": {"replicas": 1, "list": [], "t": {"x": [1]}}})
        );
    }

    #[test]
    fn get_replicas_truncates_and_reads_requirements() {
        let script = "local kube = require('kube')\nfunction GetReplicas(obj)\n  return obj.spec.replicas, kube.accuratePodRequirements(obj.spec.template)\nend";
        let object =
            json!({"spec": {"replicas": 3.7, "template": {"spec": {"nodeSelector": {"a": "b"}}}}});
        let (replicas, requires) = get_replicas("t", script, &object, Limits::default()).unwrap();
        assert_eq!(replicas, 3);
        assert_eq!(
            requires.map(|r| r.to_json()),
            Some(json!({"nodeClaim": {"nodeSelector": {"a": "b"}}}))
        );
    }

    #[test]
    fn pairs_walks_a_table_in_one_order_every_time() {
        let script = "function ReflectStatus(o)\n  local seen = {}\n  for k, v in pairs(o.status) do table.insert(seen, k) end\n  return {order = table.concat(seen, ',')}\nend";
        let object = json!({"status": {"zeta": 1, "alpha": 2, "Mid": 3, "beta": 4}});
        for _ in 0..20 {
            assert_eq!(
                reflect_status("t", script, &object, Limits::default()).unwrap(),
                json!({"order": "Mid,alpha,beta,zeta"})
            );
        }
    }

    #[test]
    fn the_kube_library_adds_and_reads_quantities_as_kubernetes_does() {
        let script = "local kube = require('kube')\nfunction ReflectStatus(o)\n  return {cpu = kube.resourceAdd(o.a, o.b, nil), mem = kube.resourceAdd(o.c, o.d), none = kube.resourceAdd(), gi = kube.getResourceQuantity(o.d), req = kube.accuratePodRequirements({spec = {containers = {}}}) == nil}\nend";
        let object = json!({"a": "2000m", "b": "1000m", "c": "10752Mi", "d": "3072Mi"});
        assert_eq!(
            reflect_status("t", script, &object, Limits::default()).unwrap(),
            json!({"cpu": "3", "mem": "13824Mi", "none": "0", "gi": 3221225472i64, "req": true})
        );
        let number = "local kube = require('kube')\nfunction ReflectStatus(o)\n  return {x = kube.resourceAdd('1', 2)}\nend";
        let error = reflect_status("t", number, &object, Limits::default()).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("bad argument #2 to resourceAdd (string expected, got number)"),
            "{error}"
        );
        let bad = "local kube = require('kube')\nfunction ReflectStatus(o)\n  return {x = kube.getResourceQuantity('lots')}\nend";
        let error = reflect_status("t", bad, &object, Limits::default()).unwrap_err();
        assert!(error.to_string().contains("cannot parse 'lots'"), "{error}");
    }

    #[test]
    fn get_components_reads_each_components_replicas_and_requests() {
        let script = "local kube = require('kube')\nfunction GetComponents(obj)\n  local out = {}\n  for name, spec in pairs(obj.spec.roles) do\n    table.insert(out, {name = name, replicas = spec.replicas, replicaRequirements = kube.accuratePodRequirements(spec.template)})\n  end\n  return out\nend";
        let object = json!({"spec": {"roles": {
            "worker": {"replicas": 4, "template": {"spec": {"containers": [
                {"resources": {"requests": {"cpu": "1", "memory": "512Mi"}}}]}}},
            "launcher": {"replicas": 1, "template": {"spec": {"containers": [{}]}}}
        }}});
        let components = get_components("t", script, &object, Limits::default()).unwrap();
        let json: Vec<Value> = components.iter().map(Component::to_json).collect();
        assert_eq!(
            json,
            vec![
                json!({"name": "launcher", "replicas": 1}),
                json!({"name": "worker", "replicas": 4,
                       "replicaRequirements": {"resourceRequest": {"cpu": "1", "memory": "512Mi"}}}),
            ]
        );
        let none = get_components(
            "t",
            "function GetComponents(o) return {} end",
            &object,
            Limits::default(),
        );
        assert_eq!(none, Ok(Vec::new()));
        let wrong = get_components(
            "t",
            "function GetComponents(o) return 'x' end",
            &object,
            Limits::default(),
        );
        assert!(matches!(wrong, Err(RuleError::Returned(_))), "{wrong:?}");
    }
}
