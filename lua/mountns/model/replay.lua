--- model.replay: the one replay of a kernel scenario's recorded steps
-- (`mountns.namespace.steps()`) onto a world: `model.replay` applies them
-- all, `mountns.mirror` (`mountns run --both`) one at a time, comparing
-- the tables after each, and `mountns.explain` answers from the world it
-- leaves.
-- @module mountns.model

local argcheck = require "mountns.args"
local world = require "mountns.model.world"
local errors = require "mountns.model.errors"
-- (world:namespace, and whether unshare's result is a model namespace)
local space = require "mountns.model.space"
local newapi = require "mountns.model.newapi"

local M = {}

local unpack = table.unpack or unpack -- luacheck: ignore

local function pack(...)
  return { n = select("#", ...), ... }
end

-- Steps whose code the step does not hold: never applied, always a note.
local OPAQUE = {
  run = "a function run in the namespace: its code is not in the step",
  exec = "a host tool run on the namespace: what it does is not in the step",
}
M.OPAQUE = OPAQUE

--- Where a step was called: "file.lua:19" (and " via recipes.lua:57").
-- @tparam table step
-- @treturn string
function M.where_text(step)
  return tostring(step.where or "?") .. (step.via and (" via " .. step.via) or "")
end

--- The class of replays (`model.replayer`): a world, its namespaces by
-- the kernel's serials, the notes of the steps it could not follow.
-- @type Replay
local Replay = {}
Replay.__index = Replay
M.Replay = Replay

local REPLAYER_OPTIONS = { "label", "locked_root", "override" }
local REPLAY_OPTIONS = { "locked_root", "override" }

-- the options of replayer and replay (known: the names fname reads)
local function replay_options(opts, fname, known, level)
  level = level + 1
  local argn = known == REPLAY_OPTIONS and 2 or 1
  opts = argcheck.options(opts, fname, argn, known, level)
  argcheck.option(opts, "label", "string", fname, argn, level)
  argcheck.option(opts, "locked_root", "boolean", fname, argn, level)
  argcheck.option(opts, "override", "table", fname, argn, level)
  for op, f in pairs(opts.override or {}) do
    if type(op) ~= "string" then
      argcheck.error(fname, argn, "option 'override': method names expected as keys, got "
        .. type(op), level)
    end
    if type(f) ~= "function" then
      argcheck.error(fname, argn, "option 'override': function expected for '" .. op
        .. "', got " .. type(f), level)
    end
  end
  return opts
end

local function new_replayer(opts)
  local w = world.new()
  local first = w:namespace { label = opts.label, locked_root = opts.locked_root }
  return setmetatable({ world = w, by_serial = { first }, notes = {}, noted = {},
                        count = 0, override = opts.override }, Replay)
end

--- A replay: a fresh world whose first namespace stands for the kernel
-- scenario's first one.
-- @tparam[opt] table opts `label`: the first namespace's label;
-- `locked_root`: whether the kernel scenario's `/` is locked (see
-- `world:namespace`); `override`: a table op -> function(model_ns, ...)
-- called instead of the model's method of that name (to plug a wrong rule
-- in and see a comparison catch it)
-- @treturn Replay `world`, `by_serial` (the model namespaces by the
-- kernel's serials), `notes`, `count` (steps applied)
function M.replayer(opts)
  return new_replayer(replay_options(opts, "model.replayer", REPLAYER_OPTIONS, 2))
end

-- The outcome of a pcall of a model method: ok, errno name, message. A
-- refusal returned (nil and a message: a root view's `ns:mounts`) is a
-- failure, as the kernel's step records it.
local function outcome(ok, err, refusal)
  if ok and err == nil and type(refusal) == "string" then ok, err = false, refusal end
  if ok then return true end
  local msg = type(err) == "table" and (err.message or tostring(err)) or tostring(err)
  return false, errors.errno_of(msg) or msg:match(".*%((E[%u%d]+)%)"), msg
end

--- Apply one recorded step to the world. Returns "ok", or "differs" and
-- a sentence (the outcomes differ), or "opaque" / "not modelled" and why;
-- then the model's outcome (ok, errno name) and its results. The events
-- the step made are tagged with it (`event.step`). A read (`step.read`:
-- `mountns run --both` hears the script's reads too) is applied alike but
-- not counted: `count` numbers the steps that may change something.
-- @tparam table step
-- @treturn string the kind: "ok", "differs", "opaque" or "not modelled"
-- @treturn ?string why (nil when "ok")
-- @treturn ?boolean the model's outcome: true (ok) or false (nil for
-- "opaque" and "not modelled": the step did not run)
-- @treturn ?string the errno name of the model's failure
-- @treturn ?table the model call's results, pcall's packed (`n`)
function Replay:apply(step)
  if not step.read then self.count = self.count + 1 end
  local ns = self.by_serial[step.ns]
  if OPAQUE[step.op] then return "opaque", OPAQUE[step.op] end
  if not ns then
    return "not modelled", "its namespace (serial " .. tostring(step.ns)
      .. ") is not in the model"
  end
  local w = self.world
  local first_event = #w.events + 1
  -- the kernel's mount fds in the step, as the model fds they stand for
  -- (live: the model fds of kernel fds closed since are closed first)
  if self.live then newapi.sync(self) end
  local args, unshown = newapi.translate(self, step.args or { n = 0 })
  if not args then return "not modelled", unshown end
  local fn = self.override and self.override[step.op] or ns[step.op]
  local res
  if type(fn) ~= "function" then
    res = { false, "ns:" .. tostring(step.op) .. ": not available in the model" }
  else
    res = pack(pcall(fn, ns, unpack(args, 1, args.n or #args)))
  end
  for i = first_event, #w.events do w.events[i].step = step end
  local ok, errno, msg = outcome(res[1], res[2], res[3])
  if not ok and msg:find("not available in the model", 1, true) then
    return "not modelled", msg
  end
  local kernel_fd = ok and step.result and step.result[1]
  if kernel_fd ~= nil and newapi.is_fd(res[2]) then newapi.link(self, kernel_fd, res[2]) end
  if ok and step.op == "unshare" and step.new then
    self.by_serial[step.new] = res[2]
    if step.label and space.is_namespace(res[2]) then res[2]:label(step.label) end
  end
  local kernel_ok = step.ok ~= false
  if ok ~= kernel_ok then
    return "differs", kernel_ok
      and ("the kernel's call succeeded, the model's failed: " .. msg)
      or ("the kernel's call failed (" .. tostring(step.error) .. "), the model's succeeded"),
      ok, errno
  end
  -- a failure with an errno name must have the same one (a misuse raised
  -- without errno on the kernel's side must fail in the model too)
  if not ok and step.errno and errno ~= step.errno then
    return "differs", string.format("the kernel's call failed with %s, the model's with %s (%s)",
      step.errno, tostring(errno), msg), ok, errno, res
  end
  return "ok", nil, ok, errno, res
end

--- The model's namespaces still open, in the kernel's creation order.
-- @treturn table
function Replay:open()
  return world.open_namespaces(self.world)
end

--- Note a step the replay could not follow, one note per kind (op and
-- reason): the first place and a count.
-- @tparam table step
-- @tparam string why
function Replay:note(step, why)
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
-- file.lua:12): a host tool ...", a read answered otherwise after such a
-- step (`mountns.mirror`: a note with `after`, why, and `detail`)
-- "not compared: ns:read (1 call, first at file.lua:14): answered
-- otherwise ... after ns:exec at file.lua:12, ...", then `stopped` (a line
-- saying where the replay stopped comparing), if set.
-- @treturn {string,...}
function Replay:note_lines()
  local out = {}
  for _, n in ipairs(self.notes) do
    local calls = n.count == 1 and "1 call" or (n.count .. " calls")
    if n.after then
      out[#out + 1] = string.format("not compared: ns:%s (%s, first at %s): answered otherwise "
        .. "by the kernel and the model %s%s", n.op,
        calls, n.where, n.after, n.detail and (" (" .. n.detail .. ")") or "")
    else
      out[#out + 1] = string.format("not modelled: ns:%s (%s, first at %s): %s; the tables "
        .. "were compared after it", n.op, calls, n.where, n.why)
    end
  end
  if self.stopped then out[#out + 1] = self.stopped end
  return out
end

--- Apply recorded kernel steps (`mountns.namespace.steps()`: `{ns =
-- serial, op = method, args = {n = N, ...}, ok = boolean, errno = name,
-- new = serial of a namespace unshare made, label = its label}`, and
-- `first_label`) to a fresh world, each step tagged on its events; the
-- steps the model cannot follow (`ns:run`, `ns:exec`, methods it has not)
-- are skipped and noted.
-- @tparam table steps
-- @tparam[opt] table opts `locked_root`, `override` (see `model.replayer`)
-- @treturn table the world
-- @treturn table its namespaces by the kernel's serial
-- @treturn[opt] table the first step whose outcome differs (`{index = i,
-- step = step, why = sentence, ok = the model's, errno = the model's}`), or nil
-- @treturn Replay the replay (its `notes`, `note_lines()`)
function M.replay(steps, opts)
  argcheck.typed(steps, "table", "model.replay", 1, 2)
  opts = replay_options(opts, "model.replay", REPLAY_OPTIONS, 2)
  if steps.first_label ~= nil and type(steps.first_label) ~= "string" then
    argcheck.error("model.replay", 1, "steps.first_label must be a string, got "
      .. type(steps.first_label), 2)
  end
  local r = new_replayer { label = steps.first_label, locked_root = opts.locked_root,
                           override = opts.override }
  local first
  for i, s in ipairs(steps) do
    local kind, why, ok, errno = r:apply(s)
    if kind == "differs" then
      first = first or { index = i, step = s, why = why, ok = ok, errno = errno }
    elseif kind ~= "ok" then
      r:note(s, why)
    end
  end
  return r.world, r.by_serial, first, r
end

return M
