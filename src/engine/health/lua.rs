//! The sandbox a health rule runs in: a fresh Lua state per call speaking what Argo CD's
//! gopher-lua VM speaks (Lua 5.1 with 5.2's `goto`: flotilla runs Lua 5.2 with the 5.1 names
//! `unpack` and `table.getn`), with the libraries that VM gives its rules (base, table,
//! string, math, and an `os` holding only `time` and `date`, also reachable as
//! `require("os")`), the live object as the global `obj` converted as Argo CD converts it,
//! `pairs` and `next` walking tables in gopher-lua's order (`ordered.rs`), and a bound on
//! instructions, time and memory. It must not
//! open files, processes or the network, must not let one call see another's state, and
//! must never panic or hang on what a rule does: every failure is a [`RuleError`].

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::{HookTriggers, Lua, LuaOptions, StdLib, Table, Value as LuaValue, VmState};
use serde_json::Value;

/// How much one call may use before it is stopped.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Lua VM instructions (counted in steps of [`STEP`]).
    pub instructions: u64,
    /// Bytes the Lua state may allocate, the object included.
    pub memory: usize,
    /// Wall time, as Argo CD's one-second timeout per script.
    pub time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            instructions: 20_000_000,
            memory: 64 << 20,
            time: Duration::from_secs(1),
        }
    }
}

/// How many instructions run between two checks of the limits.
const STEP: u32 = 1_000;

/// Why a rule gave no verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// The script does not compile.
    #[error("does not compile: {0}")]
    Compile(String),
    /// The script raised an error (or called something the sandbox does not offer).
    #[error("{0}")]
    Runtime(String),
    /// The script ran more instructions than [`Limits::instructions`].
    #[error("stopped after {0} instructions (a loop that does not end?)")]
    Instructions(u64),
    /// The script ran longer than [`Limits::time`].
    #[error("stopped after {0:?}")]
    Time(Duration),
    /// The script allocated more than [`Limits::memory`].
    #[error("stopped: it needed more than {0} MiB of memory")]
    Memory(usize),
    /// The script returned something other than a table or nil.
    #[error("expect table output from Lua script, not {0}")]
    Returned(String),
    /// The returned table's message is not text.
    #[error("the returned message is a {0}, not text")]
    Message(String),
}

/// What a health rule returned: `None` for `nil` (the rule has no opinion, so built-ins
/// decide, as in Argo CD), else its table's fields.
pub type Verdict = Option<Returned>;

/// A rule's table: the status text (not yet checked), the message, and the message to show
/// instead while the object is being deleted (`deletionMessage`, empty if none).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Returned {
    pub status: String,
    pub message: String,
    pub deletion_message: String,
}

/// Runs a health `script` (named `name` in errors) against `object` within `limits`.
pub fn run_health(
    name: &str,
    script: &str,
    object: &Value,
    limits: Limits,
) -> Result<Verdict, RuleError> {
    run_bounded(limits, |lua| {
        let obj = to_lua(lua, object)?;
        lua.globals().raw_set("obj", obj)?;
        let chunk = match load(lua, script, &format!("={name}")) {
            Ok(chunk) => chunk,
            Err(mlua::Error::SyntaxError { message, .. }) => {
                return Ok(Err(RuleError::Compile(message)));
            }
            Err(other) => return Err(other),
        };
        let returned: LuaValue = chunk.call(())?;
        Ok(verdict(returned))
    })
}

/// `script` compiled for the sandbox (its tables walking in gopher-lua's order, see
/// `ordered.rs`), named `name` (`=file` as Lua names chunks), to be called with no arguments.
pub fn load(lua: &Lua, script: &str, name: &str) -> mlua::Result<mlua::Function> {
    super::ordered::load(lua, script, name)
}

/// Runs `body` in a fresh sandbox (Argo CD's libraries, see the module header) bounded by
/// `limits`: every Lua error it raises, a limit passed included, becomes a [`RuleError`];
/// what it returns is its own verdict. Other upstreams' VMs shape the sandbox further in
/// `body` before they run a script.
pub fn run_bounded<T>(
    limits: Limits,
    body: impl FnOnce(&Lua) -> mlua::Result<Result<T, RuleError>>,
) -> Result<T, RuleError> {
    let lua = sandbox(limits)?;
    let steps = Rc::new(Cell::new(0u64));
    let started = Instant::now();
    {
        let steps = steps.clone();
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(STEP),
            move |_, _| {
                let ran = steps.get() + u64::from(STEP);
                steps.set(ran);
                if ran > limits.instructions {
                    return Err(mlua::Error::runtime(LIMIT_INSTRUCTIONS));
                }
                if started.elapsed() > limits.time {
                    return Err(mlua::Error::runtime(LIMIT_TIME));
                }
                Ok(VmState::Continue)
            },
        )
        .map_err(|error| RuleError::Runtime(error.to_string()))?;
    }
    match body(&lua) {
        Ok(result) => result,
        Err(mlua::Error::SyntaxError { message, .. }) => Err(RuleError::Compile(message)),
        Err(error) => Err(classify(error, limits, steps.get())),
    }
}

const LIMIT_INSTRUCTIONS: &str = "flotilla: instruction limit";
const LIMIT_TIME: &str = "flotilla: time limit";

/// A fresh state with only the libraries rules may use.
fn sandbox(limits: Limits) -> Result<Lua, RuleError> {
    let setup = |error: mlua::Error| RuleError::Runtime(format!("cannot start Lua: {error}"));
    let lua = Lua::new_with(
        StdLib::TABLE | StdLib::STRING | StdLib::MATH,
        LuaOptions::default(),
    )
    .map_err(setup)?;
    let globals = lua.globals();
    // Base functions that reach files or load code from text or bytecode, and print, which
    // would write over the console.
    for name in ["dofile", "loadfile", "load", "loadstring", "print"] {
        globals.raw_set(name, LuaValue::Nil).map_err(setup)?;
    }
    // gopher-lua is Lua 5.1 with 5.2's goto: Lua 5.2 (for goto, which Argo CD's rules use)
    // with the 5.1 names those rules call.
    // Tables are never finalized, as in Lua 5.1 and gopher-lua: a `__gc` present when a
    // metatable is set would otherwise run when the state closes, beyond every bound.
    super::ordered::compiled(
        &lua,
        "unpack = table.unpack\n\
         table.getn = function(t) return #t end\n\
         math.mod = math.fmod\n\
         local raw_setmetatable, rawget, rawset, type = setmetatable, rawget, rawset, type\n\
         setmetatable = function(t, mt)\n\
           if type(mt) ~= 'table' or rawget(mt, '__gc') == nil then\n\
             return raw_setmetatable(t, mt)\n\
           end\n\
           local gc = rawget(mt, '__gc')\n\
           rawset(mt, '__gc', nil)\n\
           raw_setmetatable(t, mt)\n\
           rawset(mt, '__gc', gc)\n\
           return t\n\
         end",
        "=sandbox",
    )
    .and_then(|chunk| chunk.call::<()>(()))
    .map_err(setup)?;
    // Walks in one order, so a rule's answer does not change from one call to the next.
    super::ordered::install(&lua).map_err(setup)?;
    let os = safe_os(&lua).map_err(setup)?;
    globals.raw_set("os", os.clone()).map_err(setup)?;
    let require = lua
        .create_function(move |_, name: String| match name.as_str() {
            "os" => Ok(os.clone()),
            other => Err(mlua::Error::runtime(format!("module {other} not found"))),
        })
        .map_err(setup)?;
    globals.raw_set("require", require).map_err(setup)?;
    lua.set_memory_limit(limits.memory).map_err(setup)?;
    Ok(lua)
}

/// `os.time` and `os.date` as Argo CD's safe os library has them: the time now, a time from
/// a table's numeric fields (`year`, `month`, `day`, `hour` 12, `min`, `sec`), read in UTC;
/// the date now formatted strftime-style (`!` for UTC; flotilla reads both in UTC).
fn safe_os(lua: &Lua) -> mlua::Result<Table> {
    let os = lua.create_table()?;
    os.raw_set(
        "time",
        lua.create_function(|_, fields: Option<Table>| {
            let Some(fields) = fields else {
                return Ok(k8s_openapi::jiff::Timestamp::now().as_second() as f64);
            };
            let field = |name: &str, default: i64| -> i64 {
                match fields.raw_get::<LuaValue>(name) {
                    Ok(LuaValue::Number(number)) => number as i64,
                    Ok(LuaValue::Integer(number)) => number,
                    _ => default,
                }
            };
            let date = k8s_openapi::jiff::civil::DateTime::new(
                clamp(field("year", -1), -9999, 9999) as i16,
                1,
                1,
                0,
                0,
                0,
                0,
            )
            .map_err(mlua::Error::external)?;
            // As Go's time.Date: out-of-range months, days and times carry over.
            let span = k8s_openapi::jiff::Span::new()
                .try_months(field("month", -1) - 1)
                .and_then(|span| span.try_days(field("day", -1) - 1))
                .and_then(|span| span.try_hours(field("hour", 12)))
                .and_then(|span| span.try_minutes(field("min", 0)))
                .and_then(|span| span.try_seconds(field("sec", 0)))
                .map_err(mlua::Error::external)?;
            let at = date
                .checked_add(span)
                .and_then(|at| at.to_zoned(k8s_openapi::jiff::tz::TimeZone::UTC))
                .map_err(mlua::Error::external)?;
            Ok(at.timestamp().as_second() as f64)
        })?,
    )?;
    os.raw_set(
        "date",
        lua.create_function(|_, format: Option<String>| {
            let format = format.unwrap_or_else(|| "%c".to_string());
            let format = format.trim_start_matches('!');
            let now =
                k8s_openapi::jiff::Timestamp::now().to_zoned(k8s_openapi::jiff::tz::TimeZone::UTC);
            k8s_openapi::jiff::fmt::strtime::format(format, &now).map_err(mlua::Error::external)
        })?,
    )?;
    Ok(os)
}

fn clamp(value: i64, low: i64, high: i64) -> i64 {
    value.max(low).min(high)
}

/// An mlua error in the words a user reads, the limits named as such.
fn classify(error: mlua::Error, limits: Limits, steps: u64) -> RuleError {
    let text = error.to_string();
    if matches!(error, mlua::Error::MemoryError(_)) || text.contains("not enough memory") {
        return RuleError::Memory(limits.memory >> 20);
    }
    if text.contains(LIMIT_INSTRUCTIONS) {
        return RuleError::Instructions(steps);
    }
    if text.contains(LIMIT_TIME) {
        return RuleError::Time(limits.time);
    }
    match error {
        mlua::Error::RuntimeError(message) => RuleError::Runtime(first_line(&message)),
        mlua::Error::CallbackError { cause, .. } => classify((*cause).clone(), limits, steps),
        other => RuleError::Runtime(first_line(&other.to_string())),
    }
}

/// The error without the stack traceback mlua appends (as Argo CD drops gopher-lua's).
fn first_line(text: &str) -> String {
    text.split("\nstack traceback:")
        .next()
        .unwrap_or(text)
        .trim_end()
        .to_string()
}

/// The returned value as Argo CD reads it: a table's `status` and `message`, `nil` as no
/// verdict, anything else an error. A status that is not text reads as empty (an invalid
/// status, which the caller turns into Unknown).
fn verdict(returned: LuaValue) -> Result<Verdict, RuleError> {
    let table = match returned {
        LuaValue::Nil => return Ok(None),
        LuaValue::Table(table) => table,
        other => return Err(RuleError::Returned(lua_type(&other).to_string())),
    };
    let status = match table.raw_get::<LuaValue>("status") {
        Ok(LuaValue::String(text)) => text.to_string_lossy(),
        _ => String::new(),
    };
    let text = |name: &str| match table.raw_get::<LuaValue>(name) {
        Ok(LuaValue::String(text)) => Ok(text.to_string_lossy()),
        Ok(LuaValue::Nil) | Err(_) => Ok(String::new()),
        Ok(other) => Err(RuleError::Message(lua_type(&other).to_string())),
    };
    Ok(Some(Returned {
        status,
        message: text("message")?,
        deletion_message: text("deletionMessage")?,
    }))
}

/// Lua's own name for a value's type.
pub fn lua_type(value: &LuaValue) -> &'static str {
    match value {
        LuaValue::Nil => "nil",
        LuaValue::Boolean(_) => "boolean",
        LuaValue::Integer(_) | LuaValue::Number(_) => "number",
        LuaValue::String(_) => "string",
        LuaValue::Table(_) => "table",
        LuaValue::Function(_) => "function",
        LuaValue::Thread(_) => "thread",
        _ => "userdata",
    }
}

/// A JSON value as gopher-lua's converter in Argo CD builds it: numbers as Lua numbers,
/// arrays as tables indexed from 1, objects as tables keyed by name, an empty array or object
/// as an empty table, and `null` as nil (so a field set to null is absent).
pub fn to_lua(lua: &Lua, value: &Value) -> mlua::Result<LuaValue> {
    Ok(match value {
        Value::Null => LuaValue::Nil,
        Value::Bool(flag) => LuaValue::Boolean(*flag),
        Value::Number(number) => LuaValue::Number(number.as_f64().unwrap_or(f64::NAN)),
        Value::String(text) => LuaValue::String(lua.create_string(text)?),
        Value::Array(items) => {
            let table = lua.create_table_with_capacity(items.len(), 0)?;
            // gopher-lua's Append skips nil: a null in an array closes the gap.
            for item in items.iter().filter(|item| !item.is_null()) {
                table.raw_push(to_lua(lua, item)?)?;
            }
            LuaValue::Table(table)
        }
        Value::Object(fields) => {
            let table = lua.create_table_with_capacity(0, fields.len())?;
            for (key, item) in fields {
                table.raw_set(key.as_str(), to_lua(lua, item)?)?;
            }
            LuaValue::Table(table)
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(script: &str, object: Value) -> Result<Verdict, RuleError> {
        run_health("test.lua", script, &object, Limits::default())
    }

    fn returned(status: &str, message: &str) -> Verdict {
        Some(Returned {
            status: status.into(),
            message: message.into(),
            deletion_message: String::new(),
        })
    }

    #[test]
    fn goto_and_the_5_1_names_work_as_in_argo_cds_vm() {
        let script = r#"
            local n = 0
            for i, x in ipairs(obj.items) do
              if x == 2 then goto continue end
              n = n + x
              ::continue::
            end
            return {status = "Healthy", message = n .. " " .. table.getn(obj.items) .. " " .. select(2, unpack({1, 2}))}
        "#;
        assert_eq!(
            run(script, json!({"items": [1, 2, 3]})).unwrap(),
            returned("Healthy", "4 3 2")
        );
    }

    #[test]
    fn a_rule_reads_the_object_and_returns_status_and_message() {
        let script = r#"
            local hs = {}
            if obj.status ~= nil and obj.status.ready == 3 and #obj.spec.items == 2 then
              hs.status = "Healthy"
              hs.message = "ready " .. obj.status.ready .. " " .. string.lower("OK")
            else
              hs.status = "Progressing"
            end
            return hs
        "#;
        let object = json!({"spec": {"items": [1, 2]}, "status": {"ready": 3}});
        assert_eq!(
            run(script, object).unwrap(),
            returned("Healthy", "ready 3 ok")
        );
    }

    #[test]
    fn empty_arrays_and_objects_are_empty_tables_and_null_is_absent() {
        let script = r#"
            local hs = {status = "Healthy"}
            hs.message = type(obj.a) .. #obj.a .. type(obj.o) .. tostring(next(obj.o)) .. tostring(obj.n)
            return hs
        "#;
        let object = json!({"a": [], "o": {}, "n": null});
        assert_eq!(
            run(script, object).unwrap(),
            returned("Healthy", "table0tablenilnil")
        );
    }

    #[test]
    fn nil_is_no_verdict_and_other_values_are_errors() {
        assert_eq!(run("return nil", json!({})).unwrap(), None);
        assert_eq!(
            run("return 5", json!({})).unwrap_err(),
            RuleError::Returned("number".into())
        );
        assert!(matches!(
            run("return {status = 'Healthy', message = {}}", json!({})),
            Err(RuleError::Message(_))
        ));
    }

    #[test]
    fn errors_name_the_rule_and_the_line() {
        let error = run("local x = nil\nreturn x.y", json!({})).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("test.lua:2"), "{text}");
        assert!(!text.contains("traceback"), "{text}");
        assert!(matches!(
            run("return {", json!({})),
            Err(RuleError::Compile(_))
        ));
    }

    #[test]
    fn a_rule_whose_message_follows_pairs_gives_one_answer_every_run() {
        // The message lists the conditions by walking a table keyed by type: with Lua's own
        // hash order it would change from one fresh state to the next.
        let script = r#"
            local byType = {}
            for _, c in ipairs(obj.status.conditions) do byType[c.type] = c.status end
            for k, v in pairs(obj.metadata.labels) do byType[k] = v end
            local parts = {}
            for k, v in pairs(byType) do table.insert(parts, k .. "=" .. v) end
            local first = next(obj.metadata.labels)
            return {status = "Healthy", message = table.concat(parts, ",") .. " " .. first}
        "#;
        let types = [
            "Ready",
            "Synced",
            "Issuing",
            "Available",
            "Progressing",
            "Degraded",
            "Paused",
            "Reconciling",
            "Stalled",
            "Bound",
        ];
        let conditions: Vec<Value> = types
            .iter()
            .map(|t| json!({"type": t, "status": "True"}))
            .collect();
        let labels: serde_json::Map<String, Value> = (0..12)
            .map(|i| (format!("label-{i:02}"), json!("x")))
            .collect();
        let object = json!({"metadata": {"labels": labels}, "status": {"conditions": conditions}});
        let first = run(script, object.clone()).unwrap();
        for _ in 0..30 {
            assert_eq!(run(script, object.clone()).unwrap(), first);
        }
        // As gopher-lua walks it: the keys in the order the rule first set them (the
        // conditions' order, then the labels, which Argo CD hands over in no fixed order and
        // flotilla in sorted order).
        let message = first.unwrap().message;
        assert!(message.ends_with(",label-11=x label-00"), "{message}");
        assert!(
            message.starts_with("Ready=True,Synced=True,Issuing=True,Available=True"),
            "{message}"
        );
    }

    #[test]
    fn os_time_reads_a_table_in_utc() {
        let script = r#"
            local t = os.time({year = 2024, month = 1, day = 2, hour = 3, min = 4, sec = 5})
            local os2 = require("os")
            return {status = "Healthy", message = tostring(t) .. " " .. type(os2.time())}
        "#;
        assert_eq!(
            run(script, json!({})).unwrap(),
            returned("Healthy", "1704164645 number")
        );
    }
}
