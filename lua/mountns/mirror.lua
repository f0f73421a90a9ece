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
-- model": `chdir`, `symlink`, a mount onto a detached tree, a mount fd it
-- was not shown) is not modelled; each becomes a note. The tables are still compared after it:
-- if they differ right there, the mirror stops (the model lost track, a
-- note says so and how many steps went uncompared) instead of blaming the
-- model for what it was never shown.
-- @module mountns.mirror

local core = require "mountns.core"
local argcheck = require "mountns.args"
local model = require "mountns.model"

local M = {}

-- ---- naming a step ------------------------------------------------------------

--- A value as Lua source, as a step's argument is written (strings
-- quoted, tables with sorted keys, deeper than two levels `{...}`).
-- @param v
-- @tparam[opt=0] int depth how deep v is in the value being written
-- @treturn string
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

M.value_text = value_text

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

--- Where a step was called: "file.lua:19" (and " via recipes.lua:57")
-- (`model.where_text`).
-- @function where_text
M.where_text = model.where_text

-- ---- the mirror ---------------------------------------------------------------

-- A mirror is a replay (`model.Replay`: apply, open, note, note_lines)
-- that compares the tables after each step.
local Mirror = setmetatable({}, { __index = model.Replay })
Mirror.__index = Mirror

-- PROC_USER_INIT_INO (include/linux/proc_ns.h): the initial user
-- namespace's inode number, the same on every boot
local INIT_USERNS = 0xEFFFFFFD

--- Whether this process is in the initial user namespace (a kernel
-- scenario's `/` is locked when not: see `new`'s `locked_root`).
-- @treturn boolean
function M.in_initial_userns()
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
  if first_label ~= nil and type(first_label) ~= "string" then
    argcheck.error("mirror.new", 1, "string expected, got " .. type(first_label), 2)
  end
  M.check_options(opts, "mirror.new", 2, 2)
  local locked = opts and opts.locked_root
  if locked == nil then locked = not M.in_initial_userns() end
  local m = model.replayer { label = first_label, locked_root = locked,
                             override = opts and opts.override }
  m.strict = opts and opts.strict or nil
  m.live = true -- the kernel's mount fds are open or closed as the steps come
  return setmetatable(m, Mirror)
end

local OPTION_TYPES = { override = "table", locked_root = "boolean", strict = "boolean" }

--- Check a mirror's options (`mirror.new`'s, and the table of the
-- `both` option of `mountns.run` and `run_file`, which become them):
-- nil or a table of `override`, `locked_root` and `strict`, each of its
-- type. Raises as a bad argument.
-- @param opts the options
-- @tparam string fname the public name
-- @tparam int argn the argument's position
-- @tparam[opt=1] int level
-- @tparam[opt] string within the option that holds them ("both"), named
-- in the message
function M.check_options(opts, fname, argn, level, within)
  level = (level or 1) + 1
  if opts == nil then return end
  local pre = within and "option '" .. within .. "': " or ""
  if type(opts) ~= "table" then
    argcheck.error(fname, argn, pre .. "options table expected, got " .. type(opts), level)
  end
  for k, v in pairs(opts) do
    local t = OPTION_TYPES[k]
    if not t then
      argcheck.error(fname, argn, pre .. "unknown option '" .. tostring(k) .. "'", level)
    end
    if type(v) ~= t then
      argcheck.error(fname, argn, string.format("%soption '%s' must be a %s, got %s", pre, k, t,
        type(v)), level)
    end
  end
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

return M
