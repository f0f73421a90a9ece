--- mirror: a kernel scenario's recorded steps on a model world, one at a
-- time. The scenario's namespaces record their calls
-- (`mountns.namespace.steps`); a mirror applies each to a world of
-- `mountns.model` through the model namespace's own methods (the same
-- names and arguments), checks that the outcome is the kernel's (success,
-- or the same errno name) and tags the events the step made with it, so
-- `mountns.explain` can name the line of the scenario behind each event.
-- `mountns run --both` makes one per scenario and, after every step,
-- compares the open namespaces of both sides (`model.compare`); the first
-- difference fails the scenario.
--
-- What a model cannot mirror is never passed over in silence: `ns:run`
-- (its function is code mountns cannot see) and `ns:exec` (a host tool)
-- are opaque, a method the model does not have ("not available in the
-- model": `pivot_root`, `chdir`, `symlink`, the new mount API) is not
-- modelled; each becomes a note. The tables are still compared after it:
-- if they differ right there, the mirror stops (the model lost track, a
-- note says so and how many steps went uncompared) instead of blaming the
-- model for what it was never shown.
-- @module mountns.mirror

local core = require "mountns.core"
local model = require "mountns.model"

local M = {}

local unpack = table.unpack or unpack -- luacheck: ignore

-- Steps whose code the step does not hold: never applied, always a note.
local OPAQUE = {
  run = "a function run in the namespace: its code is not in the step",
  exec = "a host tool run on the namespace: what it does is not in the step",
}
M.OPAQUE = OPAQUE

-- ---- naming a step ------------------------------------------------------------

local function value_text(v, depth)
  if type(v) == "string" then return string.format("%q", v):gsub("\\\n", "\\n") end
  if type(v) ~= "table" then return tostring(v) end
  if (depth or 0) > 2 then return "{...}" end
  local parts, n = {}, #v
  for i = 1, n do parts[#parts + 1] = value_text(v[i], (depth or 0) + 1) end
  local keys = {}
  for k in pairs(v) do
    if not (type(k) == "number" and k >= 1 and k <= n and k == math.floor(k)) then
      keys[#keys + 1] = k
    end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    local key = type(k) == "string" and k:match("^[%a_][%w_]*$") and k
      or ("[" .. value_text(k, 3) .. "]")
    parts[#parts + 1] = key .. " = " .. value_text(v[k], (depth or 0) + 1)
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

--- A step as the call it was: `sh1:bind("/X", "/Z")`.
-- @tparam table step a recorded step
-- @tparam[opt] string label the namespace's label (default "ns" .. serial)
-- @treturn string
function M.call_text(step, label)
  local args = step.args or { n = 0 }
  local n = args.n or #args
  while n > 0 and args[n] == nil do n = n - 1 end -- trailing nils: not written
  local parts = {}
  for i = 1, n do parts[i] = value_text(args[i]) end
  if step.op == "run" then table.insert(parts, 1, "fn") end
  return string.format("%s:%s(%s)", label or ("ns" .. tostring(step.ns)), step.op,
    table.concat(parts, ", "))
end

--- Where a step was called: "file.lua:19" (and " via recipes.lua:57").
-- @tparam table step
-- @treturn string
function M.where_text(step)
  return tostring(step.where or "?") .. (step.via and (" via " .. step.via) or "")
end

-- ---- the mirror ---------------------------------------------------------------

local Mirror = {}
Mirror.__index = Mirror

-- PROC_USER_INIT_INO (include/linux/proc_ns.h): the initial user
-- namespace's inode number, the same on every boot
local INIT_USERNS = 0xEFFFFFFD

local function in_initial_userns()
  local h = core.namespace(nil, "user")
  if not h then return true end
  local id = h:id()
  h:close()
  return id == INIT_USERNS
end

--- A mirror: a fresh model world whose first namespace has that label.
-- @tparam[opt] string first_label the scenario's first namespace's label
-- @tparam[opt] table opts `override`: a table op -> function(model_ns,
-- ...) called instead of the model's method of that name (to plug a wrong
-- rule in and see `--both` catch it); `locked_root`: whether the kernel
-- scenario's `/` is locked (default: when this process, the scenario's
-- child, is in a user namespace other than the initial one, as isolate
-- puts an unprivileged caller's scenario: its namespace is a less
-- privileged copy and pivot_root hands the lock to the scenario's /,
-- doc/kernel-vs-docs.md 4); `strict = true`: a step the model cannot
-- follow fails the scenario (`Mirror:step` raises) instead of a note
-- (`mountns run --both --strict`)
-- @treturn table the mirror: `world`, `by_serial` (the model namespaces
-- by the kernel's serials), `notes`
function M.new(first_label, opts)
  local w = model.new()
  local locked = opts and opts.locked_root
  if locked == nil then locked = not in_initial_userns() end
  local first = w:namespace { label = first_label, locked_root = locked }
  return setmetatable({ world = w, by_serial = { first }, notes = {}, noted = {},
                        count = 0, override = opts and opts.override or nil,
                        strict = opts and opts.strict or nil }, Mirror)
end

-- The outcome of a pcall of a model method: ok, errno name, message.
local function outcome(ok, err)
  if ok then return true end
  local msg = type(err) == "table" and (err.message or tostring(err)) or tostring(err)
  return false, model.errno_of(msg) or msg:match(".*%((E[%u%d]+)%)"), msg
end

--- Apply one recorded step to the world. Returns "ok", or "differs" and
-- a sentence (the outcomes differ), or "opaque" / "not modelled" and why;
-- the events the step made are tagged with it (`event.step`).
-- @tparam table step
-- @treturn string
-- @treturn[opt] string
function Mirror:apply(step)
  self.count = self.count + 1
  local ns = self.by_serial[step.ns]
  if OPAQUE[step.op] then return "opaque", OPAQUE[step.op] end
  if not ns then
    return "not modelled", "its namespace (serial " .. tostring(step.ns)
      .. ") is not in the model"
  end
  local w = self.world
  local first_event = #w.events + 1
  local args = step.args or { n = 0 }
  local fn = self.override and self.override[step.op] or ns[step.op]
  local res
  if type(fn) ~= "function" then
    res = { false, "ns:" .. tostring(step.op) .. ": not available in the model" }
  else
    res = { pcall(fn, ns, unpack(args, 1, args.n or #args)) }
  end
  for i = first_event, #w.events do w.events[i].step = step end
  local ok, errno, msg = outcome(res[1], res[2])
  if not ok and msg:find("not available in the model", 1, true) then
    return "not modelled", msg
  end
  if ok and step.op == "unshare" and step.new then
    self.by_serial[step.new] = res[2]
    if step.label and model.is_namespace(res[2]) then res[2]:label(step.label) end
  end
  local kernel_ok = step.ok ~= false
  if ok ~= kernel_ok then
    return "differs", kernel_ok
      and ("the kernel's call succeeded, the model's failed: " .. msg)
      or ("the kernel's call failed (" .. tostring(step.error) .. "), the model's succeeded")
  end
  -- a failure with an errno name must have the same one (a misuse raised
  -- without errno on the kernel's side must fail in the model too)
  if not ok and step.errno and errno ~= step.errno then
    return "differs", string.format("the kernel's call failed with %s, the model's with %s (%s)",
      step.errno, tostring(errno), msg)
  end
  return "ok"
end

--- The model's namespaces still open, in the kernel's creation order.
-- @treturn table
function Mirror:open()
  return model.open_namespaces(self.world)
end

-- A note for a step the mirror could not follow, one per kind (op and
-- reason): the first place and a count.
function Mirror:note(step, why)
  local key = step.op .. "\0" .. why
  local n = self.noted[key]
  if n then
    n.count = n.count + 1
  else
    n = { op = step.op, why = why, where = M.where_text(step), count = 1 }
    self.noted[key] = n
    self.notes[#self.notes + 1] = n
  end
end

--- The notes as lines: "not modelled: ns:exec (2 calls, first at
-- file.lua:12): a host tool ...", then the stop, if the mirror stopped.
-- @treturn {string,...}
function Mirror:note_lines()
  local out = {}
  for _, n in ipairs(self.notes) do
    out[#out + 1] = string.format("not modelled: ns:%s (%s, first at %s): %s; the tables "
      .. "were compared after it", n.op, n.count == 1 and "1 call" or (n.count .. " calls"),
      n.where, n.why)
  end
  if self.stopped then out[#out + 1] = self.stopped end
  return out
end

--- `mountns run --both`: apply the step, then compare the kernel's open
-- namespaces with the model's. Raises the first difference (and keeps it
-- in `self.failed`, so a caught error still fails the scenario): the
-- step's place and call, then the outcomes or the diff of the golden
-- texts (`- kernel`, `+ model`); a strict mirror, the first step it cannot
-- follow (not modelled, or opaque: `ns:run`, `ns:exec`), which it notes
-- otherwise.
-- @tparam table step the step just recorded
-- @tparam table kernel_nss the scenario's open namespaces, creation order
function Mirror:step(step, kernel_nss)
  if self.stopped or self.failed then return end
  local ns = self.by_serial[step.ns]
  local call = M.call_text(step, ns and ns:label())
  local head = string.format("--both: step %d, %s: %s", self.count + 1, M.where_text(step), call)
  local kind, why = self:apply(step)
  if kind == "differs" then
    self.failed = head .. "\n  " .. why
    error(self.failed, 0)
  end
  local unmirrored = kind ~= "ok"
  if unmirrored and self.strict then
    self.failed = head .. "\n  " .. kind .. " (--strict: a step the model cannot follow "
      .. "fails): " .. why
    error(self.failed, 0)
  end
  if unmirrored then self:note(step, why) end
  if step.op == "label" and not unmirrored then return end
  local same, diff = model.compare(kernel_nss, self:open())
  if same then return end
  if unmirrored then
    self.stopped = string.format("the model lost track at step %d, %s: %s (not modelled): "
      .. "the tables differ from there on, so the steps after it were not compared",
      self.count, M.where_text(step), call)
    return
  end
  self.failed = head .. "\n  the tables differ after it (- kernel, + model):\n" .. diff
  error(self.failed, 0)
end

--- Replay recorded steps on a fresh world, each tagged on its events: the
-- mirror, and the first step whose outcome differs from the kernel's
-- (`{index = i, step = step, why = sentence}`) or nil. Opaque and not
-- modelled steps are skipped and noted.
-- @tparam table steps `mountns.namespace.steps()`
-- @treturn table the mirror (`world`, `by_serial`, `notes`)
-- @treturn[opt] table
function M.replay(steps)
  local m = M.new(steps.first_label)
  local first
  for i, s in ipairs(steps) do
    local kind, why = m:apply(s)
    if kind == "differs" then
      first = first or { index = i, step = s, why = why }
    elseif kind ~= "ok" then
      m:note(s, why)
    end
  end
  return m, first
end

return M
