//! `pairs` and `next` in a fixed order, for every Lua sandbox flotilla runs (Argo CD's health
//! rules and Karmada's interpreter alike). Lua 5.2 seeds its string hashes afresh per state,
//! so stock `pairs` walks a table in another order each call, and a script that builds a list
//! or a message by walking a table would answer differently each time. Here every walk goes:
//! positive integer keys ascending, then the other keys, numbers before text, each ascending.
//! It must not change what a walk visits (every key with a value, once), only its order, and
//! must not be visible to scripts beyond that order.

use mlua::Lua;

/// Replaces `pairs` and `next` in `lua`'s globals (see the module header). `__pairs`
/// metamethods are honoured, as Lua 5.2's `pairs` honours them.
pub fn install(lua: &Lua) -> mlua::Result<()> {
    lua.load(PRELUDE).set_name("=pairs").exec()
}

const PRELUDE: &str = r#"
local raw_next, raw_pairs, rawget, type, tostring, sort, getmetatable =
  next, pairs, rawget, type, tostring, table.sort, getmetatable
-- The order of the walk under way per table, kept while the table lives.
local walks = setmetatable({}, {__mode = "k"})

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

local function walk_of(t)
  local keys, n = {}, 0
  for k in raw_next, t do
    n = n + 1
    keys[n] = k
  end
  sort(keys, before)
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
"#;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn fresh() -> Lua {
        let lua = Lua::new();
        install(&lua).unwrap();
        lua
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
