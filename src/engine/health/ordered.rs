//! `pairs` and `next` in the order gopher-lua walks a table (the VM both Argo CD and Karmada
//! run their scripts in), for every Lua sandbox flotilla runs. gopher-lua walks positive
//! integer keys ascending, then the other keys in the order they were first set; stock Lua
//! 5.2 walks a hash order seeded afresh per state, so a script that builds a list or a message
//! by walking a table would answer differently each call, and unlike upstream. Here:
//!
//! - a table the script builds (`{…}`) remembers the order its keys are first set in: the
//!   script's text is read once, each constructor wrapped in a call that tags the table with
//!   its named fields in the order written, and a tagged table records each new key as it is
//!   first set ([`load`]);
//! - a walk goes: positive integer keys ascending, then keys never recorded (a table handed
//!   in, whose order upstream takes from a Go map and so has none to match; fields a
//!   constructor computes) — numbers, then text, each ascending — then recorded keys in the
//!   order they were first set.
//!
//! It must not change what a walk visits (every key with a value, once) nor what a script
//! computes otherwise, must keep a script's line numbers, and must not be visible to scripts
//! beyond that order (the tag is hidden from `getmetatable`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use mlua::chunk::ChunkMode;
use mlua::{Function, Lua};

/// Where [`install`] keeps the function that tags a constructed table.
const RECORD: &str = "flotilla.ordered.record";
/// The local a rewritten script calls it by.
const LOCAL: &str = "__flotilla_table";

/// Replaces `pairs`, `next` and `getmetatable` in `lua`'s globals (see the module header).
/// `__pairs` metamethods are honoured, as Lua 5.2's `pairs` honours them.
pub fn install(lua: &Lua) -> mlua::Result<()> {
    let record: Function = compiled(lua, PRELUDE, "=pairs")?.call(())?;
    lua.set_named_registry_value(RECORD, record)
}

/// `script` compiled (named `name`) with its constructors recording key order; called with
/// no arguments. A script that does not compile fails with its own error; one whose rewritten
/// text would not compile (it never should) runs as it is. Only text is read as a script,
/// never bytecode.
pub fn load(lua: &Lua, script: &str, name: &str) -> mlua::Result<Function> {
    cached(lua, script, name, true)
}

/// `text` (flotilla's own Lua) compiled as it is, named `name`.
pub fn compiled(lua: &Lua, text: &str, name: &str) -> mlua::Result<Function> {
    cached(lua, text, name, false)
}

/// Each text is compiled once per thread and kept as bytecode, loaded into each fresh state:
/// a rule runs for many objects, each in a state of its own.
fn cached(lua: &Lua, text: &str, name: &str, record: bool) -> mlua::Result<Function> {
    let key = (name.to_string(), text.to_string(), record);
    let kept = COMPILED.with(|kept| kept.borrow().get(&key).cloned());
    let compiled = match kept {
        Some(compiled) => compiled,
        None => {
            // The text as written decides whether it compiles, never the rewritten one.
            let original = text_chunk(lua, text, name)?;
            let rewritten = record
                .then(|| rewrite(text))
                .flatten()
                .and_then(|rewritten| text_chunk(lua, &rewritten, name).ok());
            let compiled = Rc::new(match &rewritten {
                Some(chunk) => Compiled::Recording(chunk.dump(false)),
                None => Compiled::AsIs(original.dump(false)),
            });
            COMPILED.with(|kept| {
                let mut kept = kept.borrow_mut();
                if kept.len() >= 64 {
                    kept.clear();
                }
                kept.insert(key, compiled.clone());
            });
            compiled
        }
    };
    match &*compiled {
        Compiled::Recording(bytes) => {
            let record: Function = lua.named_registry_value(RECORD)?;
            lua.load(bytes.as_slice())
                .set_mode(ChunkMode::Binary)
                .into_function()?
                .bind(record)
        }
        Compiled::AsIs(bytes) => lua
            .load(bytes.as_slice())
            .set_mode(ChunkMode::Binary)
            .into_function(),
    }
}

fn text_chunk(lua: &Lua, text: &str, name: &str) -> mlua::Result<Function> {
    lua.load(text)
        .set_name(name)
        .set_mode(ChunkMode::Text)
        .into_function()
}

/// A script as flotilla compiled it, as bytecode.
enum Compiled {
    /// Rewritten: its constructors record key order; called with the recorder.
    Recording(Vec<u8>),
    /// As written (its rewritten text would not compile).
    AsIs(Vec<u8>),
}

thread_local! {
    /// Texts by name, text and whether constructors record, compiled, for those last seen.
    static COMPILED: RefCell<HashMap<(String, String, bool), Rc<Compiled>>> =
        RefCell::new(HashMap::new());
}

/// Lua's reserved words: a name among them never ends a call's prefix.
const KEYWORDS: [&str; 21] = [
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
    "local", "nil", "not", "or", "repeat", "return", "then", "true", "until",
];

/// At most this many named fields are passed for one constructor (a call's arguments are
/// bounded); the rest count as never recorded.
const MOST_NAMES: usize = 100;

/// One token of a script: its kind and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Name,
    /// A quoted string; its text between the quotes when that is plain (no escapes).
    Str,
    LongStr,
    Number,
    Punct,
}

/// Where a constructor's named field is being read.
#[derive(Debug, Clone, PartialEq)]
enum Field {
    /// At the start of a field.
    Start,
    /// `name`, waiting for `=`.
    Name(String),
    /// `[`, waiting for a plain string.
    Bracket,
    /// `["key"`, waiting for `]`.
    BracketKey(String),
    /// `["key"]`, waiting for `=`.
    BracketDone(String),
    /// Inside a field's value.
    Value,
}

/// A constructor being read.
struct Frame {
    /// Written as a call's argument (`f{…}`): its end continues an expression.
    argument: bool,
    /// Parentheses, brackets and blocks open inside it (not nested constructors).
    depth: i32,
    field: Field,
    names: Vec<String>,
}

/// The script with each table constructor `{…}` written as `(LOCAL({…}, "a", "b"))`, its
/// named fields listed in the order written, and `LOCAL` taken from the chunk's arguments on
/// its first line, so no line moves. `None` when it has no constructor or its text cannot be
/// read (an unclosed string or comment, an unbalanced brace).
fn rewrite(script: &str) -> Option<String> {
    let bytes = script.as_bytes();
    let mut out = String::with_capacity(script.len() + 256);
    out.push_str("local ");
    out.push_str(LOCAL);
    out.push_str(" = ...; ");
    let mut copied = 0;
    let mut frames: Vec<Frame> = Vec::new();
    // Whether the previous token can end a call's prefix (a name, `)`, `]`, a string, a
    // call's constructor).
    let mut ends_prefix = false;
    // A statement-level constructor just closed: a `(` next starts a new statement.
    let mut statement_end = false;
    let mut found = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if b == b'-' && bytes.get(i + 1) == Some(&b'-') {
            i += 2;
            match long_bracket(bytes, i) {
                Some(level) => i = skip_long(bytes, i, level)?,
                None => {
                    while i < bytes.len() && bytes[i] != b'\n' {
                        i += 1;
                    }
                }
            }
            continue;
        }
        let start = i;
        let kind;
        let mut plain: Option<&str> = None;
        if b == b'"' || b == b'\'' {
            i = skip_string(bytes, i)?;
            kind = Kind::Str;
            let inner = &script[start + 1..i - 1];
            if !inner.contains(['\\', '"', '\'']) {
                plain = Some(inner);
            }
        } else if b == b'[' && long_bracket(bytes, i).is_some() {
            let level = long_bracket(bytes, i)?;
            i = skip_long(bytes, i, level)?;
            kind = Kind::LongStr;
        } else if b.is_ascii_digit()
            || (b == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i += 1;
            while i < bytes.len() {
                let c = bytes[i];
                let signed =
                    matches!(c, b'+' | b'-') && matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P');
                if c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || signed {
                    i += 1;
                } else {
                    break;
                }
            }
            kind = Kind::Number;
        } else if b.is_ascii_alphabetic() || b == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            kind = Kind::Name;
        } else {
            if !b.is_ascii() {
                // Not Lua (a character outside a string or comment): leave the script as is.
                return None;
            }
            let rest = &script[i..];
            i += ["...", "..", "==", "~=", "<=", ">=", "::"]
                .iter()
                .find(|op| rest.starts_with(**op))
                .map_or(1, |op| op.len());
            kind = Kind::Punct;
        }
        let text = &script[start..i];
        if std::mem::take(&mut statement_end) && text == "(" && frames.is_empty() {
            out.push_str(&script[copied..start]);
            out.push(';');
            copied = start;
        }
        let keyword = kind == Kind::Name && KEYWORDS.contains(&text);
        if let Some(frame) = frames.last_mut() {
            if text == "="
                && frame.depth == 0
                && let Field::Name(name) | Field::BracketDone(name) = &frame.field
            {
                frame.names.push(name.clone());
            }
            frame.field = next_field(&frame.field, frame.depth, kind, text, plain, keyword);
        }
        match text {
            "{" => {
                if let Some(frame) = frames.last_mut() {
                    frame.field = Field::Value;
                }
                out.push_str(&script[copied..start]);
                out.push('(');
                out.push_str(LOCAL);
                out.push_str("({");
                copied = i;
                found = true;
                frames.push(Frame {
                    argument: ends_prefix,
                    depth: 0,
                    field: Field::Start,
                    names: Vec::new(),
                });
                ends_prefix = false;
                continue;
            }
            "}" => {
                let frame = frames.pop()?;
                out.push_str(&script[copied..start]);
                out.push('}');
                for name in frame.names.iter().take(MOST_NAMES) {
                    out.push_str(", \"");
                    out.push_str(name);
                    out.push('"');
                }
                out.push_str("))");
                copied = i;
                ends_prefix = frame.argument;
                statement_end = !frame.argument && frames.is_empty();
                continue;
            }
            _ => {}
        }
        if let Some(frame) = frames.last_mut() {
            match (kind, text) {
                (Kind::Punct, "(" | "[") | (Kind::Name, "function" | "do" | "if" | "repeat") => {
                    frame.depth += 1
                }
                (Kind::Punct, ")" | "]") | (Kind::Name, "end" | "until") => frame.depth -= 1,
                _ => {}
            }
        }
        ends_prefix = match kind {
            Kind::Name => !keyword,
            Kind::Str | Kind::LongStr => true,
            Kind::Number => false,
            Kind::Punct => text == ")" || text == "]",
        };
    }
    if !found || !frames.is_empty() {
        return None;
    }
    out.push_str(&script[copied..]);
    Some(out)
}

/// The field state after one more token of a constructor at `depth`; a named field's name is
/// taken when its `=` comes (see [`Frame::names`], pushed by the caller's match).
fn next_field(
    field: &Field,
    depth: i32,
    kind: Kind,
    text: &str,
    plain: Option<&str>,
    keyword: bool,
) -> Field {
    match (field, kind, text) {
        (_, Kind::Punct, "," | ";") if depth == 0 => Field::Start,
        (Field::Start, Kind::Name, _) if depth == 0 && !keyword => Field::Name(text.to_string()),
        (Field::Start, Kind::Punct, "[") if depth == 0 => Field::Bracket,
        (Field::Bracket, Kind::Str, _) if depth == 1 => match plain {
            Some(key) => Field::BracketKey(key.to_string()),
            None => Field::Value,
        },
        (Field::BracketKey(key), Kind::Punct, "]") if depth == 1 => Field::BracketDone(key.clone()),
        _ => Field::Value,
    }
}

/// `[`, `[=`… `[` at `at`: the long bracket's level.
fn long_bracket(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'[') {
        return None;
    }
    let mut level = 0;
    while bytes.get(at + 1 + level) == Some(&b'=') {
        level += 1;
    }
    (bytes.get(at + 1 + level) == Some(&b'[')).then_some(level)
}

/// Past the long string or comment opening at `at` with `level`; `None` when it never closes.
fn skip_long(bytes: &[u8], at: usize, level: usize) -> Option<usize> {
    let mut i = at + level + 2;
    while i < bytes.len() {
        if bytes[i] == b']'
            && bytes
                .get(i + 1..i + 1 + level)
                .is_some_and(|eq| eq.iter().all(|c| *c == b'='))
            && bytes.get(i + 1 + level) == Some(&b']')
        {
            return Some(i + level + 2);
        }
        i += 1;
    }
    None
}

/// Past the quoted string opening at `at`; `None` when it never closes on its line.
fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    let quote = bytes[at];
    let mut i = at + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' => return None,
            c if c == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

const PRELUDE: &str = r##"
local raw_next, raw_pairs, rawget, rawset, type, tostring, sort, getmetatable, setmetatable, error, select =
  next, pairs, rawget, rawset, type, tostring, table.sort, getmetatable, setmetatable, error, select
-- The order of the walk under way per table, and the keys each tagged table recorded, in the
-- order they were first set; both kept while the table lives.
local walks = setmetatable({}, {__mode = "k"})
local recorded = setmetatable({}, {__mode = "k"})

local function positive_integer(k)
  return type(k) == "number" and k >= 1 and k % 1 == 0
end

local function before(a, b)
  local ia, ib = positive_integer(a), positive_integer(b)
  if ia ~= ib then return ia end
  local ta, tb = type(a), type(b)
  if ta ~= tb then
    if ta == "number" then return true end
    if tb == "number" then return false end
    return ta < tb
  end
  if ta == "number" or ta == "string" then return a < b end
  return tostring(a) < tostring(b)
end

local function remember(order, k)
  if order.at[k] == nil then
    local n = order.n + 1
    order.n = n
    order[n] = k
    order.at[k] = n
  end
end

-- The tag: a new key is remembered as it is first set.
local tag = {__newindex = function(t, k, v)
  if k == nil then error("table index is nil", 2) end
  if k ~= k then error("table index is NaN", 2) end
  if v ~= nil then
    local order = recorded[t]
    if order == nil then
      order = {n = 0, at = {}}
      recorded[t] = order
    end
    remember(order, k)
  end
  rawset(t, k, v)
end}

local function walk_of(t)
  local order = recorded[t]
  local keys, n, later = {}, 0, nil
  for k in raw_next, t do
    if order ~= nil and order.at[k] ~= nil and not positive_integer(k) then
      later = true
    else
      n = n + 1
      keys[n] = k
    end
  end
  sort(keys, before)
  if later then
    for i = 1, order.n do
      local k = order[i]
      if rawget(t, k) ~= nil and not positive_integer(k) then
        n = n + 1
        keys[n] = k
      end
    end
  end
  local at = {}
  for i = 1, n do at[keys[i]] = i end
  local walk = {keys = keys, at = at}
  walks[t] = walk
  return walk
end

next = function(t, k)
  if type(t) ~= "table" then return raw_next(t, k) end
  local walk, i
  if k == nil then
    walk, i = walk_of(t), 0
  else
    walk = walks[t]
    i = walk and walk.at[k]
    if i == nil then
      walk = walk_of(t)
      i = walk.at[k]
      -- A key the table does not hold: the stock error.
      if i == nil then return raw_next(t, k) end
    end
  end
  local keys = walk.keys
  while true do
    i = i + 1
    local key = keys[i]
    if key == nil then return nil end
    local value = rawget(t, key)
    if value ~= nil then return key, value end
  end
end

local next = next
pairs = function(t)
  local mt = getmetatable(t)
  if type(mt) == "table" and rawget(mt, "__pairs") ~= nil then
    return raw_pairs(t)
  end
  if type(t) ~= "table" then return raw_pairs(t) end
  return next, t, nil
end

-- The tag is not the script's own metatable.
_ENV.getmetatable = function(t)
  local mt = getmetatable(t)
  if mt == tag then return nil end
  return mt
end

-- What a constructor is wrapped in: the table, then its named fields in the order written.
return function(t, ...)
  setmetatable(t, tag)
  local n = select("#", ...)
  if n > 0 then
    local names, order = {...}, {n = 0, at = {}}
    for i = 1, n do
      if rawget(t, names[i]) ~= nil then remember(order, names[i]) end
    end
    recorded[t] = order
  end
  return t
end
"##;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn fresh() -> Lua {
        let lua = Lua::new();
        install(&lua).unwrap();
        lua
    }

    fn run(script: &str) -> mlua::Result<String> {
        let lua = fresh();
        load(&lua, script, "=t")?.call(())
    }

    /// The keys of the table `script` leaves in `t`, as `pairs` walks them.
    fn walk(script: &str) -> String {
        run(&format!(
            "{script}\nlocal seen = {{}}\nfor k in pairs(t) do seen[#seen + 1] = tostring(k) end\nreturn table.concat(seen, ',')"
        ))
        .unwrap()
    }

    #[test]
    fn a_built_table_walks_integers_then_keys_in_the_order_first_set() {
        for _ in 0..10 {
            assert_eq!(
                walk(
                    "local t = {zeta = 1, 10, alpha = 2, 20}\nt.mid = 3\nt[4] = 5\nt.beta = 4\nt[0.5] = 6"
                ),
                "1,2,4,zeta,alpha,mid,beta,0.5"
            );
        }
        // A key cleared and set again keeps its first place, as in gopher-lua.
        assert_eq!(
            walk("local t = {}\nt.b = 1\nt.a = 1\nt.b = nil\nt.c = 1\nt.b = 2"),
            "b,a,c"
        );
        // Quoted keys count; computed ones walk first, sorted.
        assert_eq!(
            walk("local k = 'k2'\nlocal t = {['z'] = 1, [k] = 2, a = 3, ['b'] = 4}"),
            "k2,z,a,b"
        );
        // A table handed in (no order of its own) walks sorted, then what the script added.
        let lua = fresh();
        let handed = lua.create_table().unwrap();
        for key in ["zeta", "alpha", "mid"] {
            handed.raw_set(key, 1).unwrap();
        }
        lua.globals().raw_set("handed", handed).unwrap();
        let got: String = load(
            &lua,
            "local seen = {}\nfor k in pairs(handed) do seen[#seen + 1] = k end\nreturn table.concat(seen, ',')",
            "=t",
        )
        .unwrap()
        .call(())
        .unwrap();
        assert_eq!(got, "alpha,mid,zeta");
    }

    #[test]
    fn conditions_gathered_by_type_come_back_in_the_order_first_seen() {
        // Karmada's MPIJob aggregation: the latest condition per type, listed by walking.
        let script = "local items = {{'Created', 'Running'}, {'Created', 'Failed'}, {'Succeeded', 'Running'}}\n\
            local latest = {}\n\
            for _, item in ipairs(items) do for _, c in ipairs(item) do latest[c] = c end end\n\
            local out = {}\n\
            for _, c in pairs(latest) do table.insert(out, c) end\n\
            return table.concat(out, ',')";
        for _ in 0..10 {
            assert_eq!(run(script).unwrap(), "Created,Running,Failed,Succeeded");
        }
    }

    #[test]
    fn the_rewrite_keeps_lines_strings_comments_calls_and_statements() {
        let script = "local s = '{' .. \"}\" .. [[ { ]] -- { a = 1\n\
            --[==[ } ]==]\n\
            local function id(x) return x end\n\
            local t = id{b = 1, f = function() local x = 1; y = 2 end, c = {d = 1}}\n\
            local u = {}\n\
            (id)(u)\n\
            local n = #{1, 2, 3} + select('#', id{}) \n\
            if t.c.d ~= 1 or n ~= 4 then error('wrong') end\n\
            local seen = {}\n\
            for k in pairs(t) do seen[#seen + 1] = k end\n\
            error(s .. table.concat(seen, ','))";
        let error = run(script).unwrap_err().to_string();
        assert!(error.contains("t:11: {} { b,f,c"), "{error}");
        // A script that does not compile keeps its own error and line.
        let error = run("local t = {\n\n  a = 1,,\n}").unwrap_err().to_string();
        assert!(error.contains("t:3:"), "{error}");
        // Nil and NaN keys fail where the script sets them.
        let error = run("local t = {}\nt[nil] = 1").unwrap_err().to_string();
        assert!(error.contains("t:2: table index is nil"), "{error}");
        // Bytecode is never read as a script.
        assert!(run("\x1bLuaR\0\x01\x04").is_err());
        // The tag is not the script's metatable.
        assert_eq!(run("return tostring(getmetatable({}))").unwrap(), "nil");
    }

    #[test]
    fn pairs_and_next_walk_integers_then_numbers_then_text() {
        for _ in 0..10 {
            let lua = fresh();
            let order: String = lua
                .load(
                    "local t = {10, 20, zeta = 1, alpha = 2, [0.5] = 3, [-1] = 4, Mid = 5}\n\
                     t[4] = 6\n\
                     local seen = {}\n\
                     for k in pairs(t) do seen[#seen + 1] = tostring(k) end\n\
                     local k = next(t)\n\
                     return table.concat(seen, ',') .. ' ' .. tostring(k)",
                )
                .eval()
                .unwrap();
            assert_eq!(order, "1,2,4,-1,0.5,Mid,alpha,zeta 1");
        }
    }

    #[test]
    fn a_key_cleared_during_the_walk_is_skipped_and_empty_tables_end_at_once() {
        let lua = fresh();
        let got: String = lua
            .load(
                "local t = {a = 1, b = 2, c = 3}\n\
                 local seen = {}\n\
                 for k in pairs(t) do seen[#seen + 1] = k; t.b = nil end\n\
                 return table.concat(seen, ',') .. ' ' .. tostring(next({}))",
            )
            .eval()
            .unwrap();
        assert_eq!(got, "a,c nil");
    }

    #[test]
    fn errors_stay_the_stock_ones_and_pairs_metamethods_count() {
        let lua = fresh();
        let error = lua.load("next({}, 'x')").exec().unwrap_err().to_string();
        assert!(error.contains("invalid key to 'next'"), "{error}");
        let error = lua.load("pairs(5)").exec().unwrap_err().to_string();
        assert!(error.contains("table expected"), "{error}");
        let got: i64 = lua
            .load(
                "local t = setmetatable({}, {__pairs = function(t) return function(_, k) if k == nil then return 7, 7 end end, t, nil end})\n\
                 for k in pairs(t) do return k end",
            )
            .eval()
            .unwrap();
        assert_eq!(got, 7);
    }
}
