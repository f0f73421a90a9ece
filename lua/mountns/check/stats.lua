--- mountns.check.stats: `mountns check --stats`, the coverage of a run:
-- what the generator drew and which rules of the model the steps hit.
-- @module mountns.check.stats

local M = {}


-- An event's rule as a class: its kind and its reason with the names,
-- paths and numbers of this world taken out ("propagated: a slave of peer
-- group N: it receives what that group propagates").
local function rule_class(e)
  local why = tostring(e.rule or e.message or "")
  why = why:gsub("/[^%s:,()]*", "PATH"):gsub("ns%d+", "NS"):gsub("%d+", "N")
  return e.kind .. (why ~= "" and (": " .. why) or "")
end

--- Count a model world's events by rule class into stats.rules.
-- @tparam table stats
-- @tparam table events a world's
function M.count_rules(stats, events)
  stats.rules = stats.rules or {}
  for _, e in ipairs(events) do
    if e.kind ~= "call" then
      local c = rule_class(e)
      stats.rules[c] = (stats.rules[c] or 0) + 1
    end
  end
end

-- Where a step holds mount data: mount's fifth argument, remount's third
local DATA_AT = { mount = 5, remount = 3 }

-- The mount data a step draws, as "tmpfs size=1m", "remount size=2m" or
-- "fsmount tmpfs mode=0700"; nil for none.
local function data_of(st)
  local at = DATA_AT[st.op]
  if at and type(st.args[at]) == "string" then
    return (st.op == "mount" and st.args[3] or "remount") .. " " .. st.args[at]
  end
  if st.op == "attach_fsmount" then
    for k, v in pairs(st.args[2]) do
      if k ~= "source" then return "fsmount " .. st.args[1] .. " " .. k .. "=" .. v end
    end
  end
end

--- Count what a sequence draws into stats: each operation (make_* by
-- name), each flag or option (recursive, detach, bind, user), each
-- propagation type an unshare asks for, each mount data string.
-- @tparam table stats
-- @tparam table steps
function M.count_steps(stats, steps)
  stats.ops, stats.flags = stats.ops or {}, stats.flags or {}
  stats.propagations, stats.data = stats.propagations or {}, stats.data or {}
  local function bump(t, k) t[k] = (t[k] or 0) + 1 end
  for _, st in ipairs(steps) do
    bump(stats.ops, st.op)
    local data = data_of(st)
    if data then bump(stats.data, data) end
    for j = 1, st.args.n do
      local a = st.args[j]
      if a == "detach" or a == "force" or a == "expire" then bump(stats.flags, a) end
      if type(a) == "table" then
        for k, v in pairs(a) do
          if k == "propagation" then bump(stats.propagations, v)
          elseif v == true then bump(stats.flags, k) end
        end
      end
    end
  end
end

--- The coverage table of `check --stats` (lines).
-- @tparam table stats as `check` filled it
-- @treturn {string,...}
function M.stats_lines(stats)
  local out = {}
  local function section(title, t)
    local keys = {}
    for k in pairs(t or {}) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b)
      if t[a] ~= t[b] then return t[a] > t[b] end
      return a < b
    end)
    out[#out + 1] = title
    for _, k in ipairs(keys) do out[#out + 1] = string.format("  %8d  %s", t[k], k) end
    if #keys == 0 then out[#out + 1] = "         0  (none)" end
  end
  section("operations drawn:", stats.ops)
  section("flags and options drawn:", stats.flags)
  section("propagation types asked of unshare:", stats.propagations)
  section("mount data drawn (the kernel takes some, refuses others):", stats.data)
  section("model rules hit (events by rule, names and numbers taken out):", stats.rules)
  return out
end

return M
