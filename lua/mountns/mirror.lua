--- mirror: a kernel scenario's recorded steps on a model world, one at a
-- time. The scenario's namespaces record their calls
-- (`mountns.namespace.steps`); a mirror applies each to a world of
-- `mountns.model` through the model namespace's own methods (the same
-- names and arguments), checks that the outcome is the kernel's (success,
-- or the same errno name) and tags the events the step made with it, so
-- `mountns.explain` can name the line of the scenario behind each event.
-- `mountns run --both` makes one per scenario and, after every step,
-- compares the open namespaces of both sides (`model.compare`) and what
-- the call returned; the script's reads (`ns:read`, `exists`, `ls`,
-- `locked`, `mounts`, `find`), which the namespaces tell a listening
-- mirror without keeping them as steps, are applied too and their answers
-- compared (`answer_text`). The first difference fails the scenario.
--
-- What a model cannot mirror is never passed over in silence: `ns:run`
-- (its function is code mountns cannot see) and `ns:exec` (a host tool)
-- are opaque, a method the model does not have ("not available in the
-- model": `chdir`, `symlink`, a mount onto a detached tree, a mount fd it
-- was not shown) is not modelled; each becomes a note. The tables are still compared after it:
-- if they differ right there, the mirror stops (the model lost track, a
-- note says so and how many steps went uncompared) instead of blaming the
-- model for what it was never shown; so does a later difference on a
-- superblock such a step could have changed unseen (a file it wrote: "what
-- the model was not shown" below), a read's being a note.
-- @module mountns.mirror

local core = require "mountns.core"
local argcheck = require "mountns.args"
local mtable = require "mountns.table"
local format = require "mountns.format"
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

-- ---- answers ------------------------------------------------------------------

--- A value a call returned, as text to compare with the other side's: a
-- mount table or a record (a root view, `ns:find`'s) as golden lines
-- numbered after the tables `ctx` (`format.golden_parts`: its mounts and
-- peer groups are compared by their relation to those tables, not by the
-- numbers each side chose); a mount fd by what it holds (`mountfd
-- [open_tree clone /X]`), not its number; a namespace as `namespace`;
-- anything else as Lua source (`value_text`).
-- @param v the value
-- @tparam {table,...} ctx the mount tables of the side's open namespaces
-- @treturn string
function M.answer_text(v, ctx)
  local t = type(v)
  if t == "table" and (mtable.is(v) or (v.id ~= nil and v.target ~= nil)) then
    local tables = {}
    for i = 1, #ctx do tables[i] = ctx[i] end
    tables[#tables + 1] = mtable.is(v) and v or { v }
    local parts = format.golden_parts(tables)
    return parts[#parts]
  end
  if (t == "userdata" or t == "table") and tostring(v):find("^mountfd ") then
    return (tostring(v):gsub("^mountfd %-?%d+", "mountfd"))
  end
  if t == "table" and type(v.unshare) == "function" and type(v.mounts) == "function" then
    return "namespace"
  end
  return value_text(v)
end

-- The results of a call (pcall's, packed) as one text (`answer_text`, one
-- a line; trailing nils dropped, none at all "nil").
local function answers_text(r, ctx)
  local n = r.n or #r
  while n > 1 and r[n] == nil do n = n - 1 end
  if n < 2 then return "nil" end
  local parts = {}
  for i = 2, n do parts[#parts + 1] = M.answer_text(r[i], ctx) end
  return table.concat(parts, "\n")
end

-- The sentence of two answers that differ: both on the line when each is
-- one line, else the diff of the texts (- kernel, + model).
local function answers_differ(k, m)
  if not (k:find("\n", 1, true) or m:find("\n", 1, true)) then
    return "the answers differ: the kernel's " .. k .. ", the model's " .. m
  end
  return "the answers differ (- kernel, + model):\n" .. (format.diff_text(k, m, "kernel", "model")
    or "(only in their numbering)")
end

-- The mount tables of namespaces, creation order.
local function tables_of(nss)
  local out = {}
  for i, ns in ipairs(nss) do
    local t, err = ns:mounts()
    if not t then error(err, 0) end
    out[i] = t
  end
  return out
end

--- Compare the tables of the open namespaces of both sides, once a step
-- (kept until the next step that may change them: a read compares its
-- answer with them, `answer_text`'s `ctx`).
-- @tparam table kernel_nss
-- @treturn ?table `{kernel = tables, model = tables}`, nil when they differ
-- @treturn ?string the diff then
function Mirror:context(kernel_nss)
  if self.ctx then return self.ctx end
  local kt, mt = tables_of(kernel_nss), tables_of(self:open())
  local same, diff = model.compare(kt, mt)
  if not same then return nil, diff end
  self.ctx = { kernel = kt, model = mt }
  return self.ctx
end

-- ---- what the model was not shown -------------------------------------------
-- A step the mirror cannot follow (opaque, not modelled) may change what
-- the tables do not show: files and directories on the superblocks its
-- namespace sees. Those superblocks are kept (`unseen`, each with the
-- first such step), and a difference later in a namespace that sees one
-- of them (a bind, a copy) is not the model's fault: a read's is a note,
-- a step's stops the mirror (the model lost track) with a note.

-- Keep the superblocks step's namespace sees in the model.
function Mirror:unseen_from(step)
  local ns = self.by_serial[step.ns]
  if not ns then return end
  self.unseen = self.unseen or {}
  for _, m in ipairs(self.world.mounts) do
    if m.ns == ns and not self.unseen[m.sb] then self.unseen[m.sb] = step end
  end
end

-- The paths a step names: its string arguments that are absolute paths
-- (normalised when they can be) and the `root` option of a table one.
local function paths_of(step)
  local out, args = {}, step.args or {}
  for i = 1, args.n or #args do
    local a = args[i]
    if type(a) == "table" then a = a.root end
    if type(a) == "string" and a:sub(1, 1) == "/" then
      local ok, p = pcall(mtable.normpath, a, "--both", i, 1)
      out[#out + 1] = ok and p or a
    end
  end
  return out
end

-- Whether path is the mount point t or under it.
local is_on = mtable.is_under

--- The unmirrored step whose changes a step may see, or nil: one whose
-- namespace saw the superblock of a mount that a path of the step is on
-- (the deepest mount point it is at or under: what a lookup finds past the
-- last mount it crosses is on that superblock; the mounts themselves were
-- compared), or for a step without a path, of any mount of its namespace.
-- @tparam table step
-- @treturn ?table the step
function Mirror:unseen_by(step)
  local ns, unseen = self.by_serial[step.ns], self.unseen
  if not (ns and unseen) then return nil end
  local mine, targets, cache = {}, {}, {}
  for _, m in ipairs(self.world.mounts) do
    if m.ns == ns then
      mine[#mine + 1] = m
      targets[m] = model.target_of(m, cache)
    end
  end
  local paths = paths_of(step)
  if #paths == 0 then
    for _, m in ipairs(mine) do
      if unseen[m.sb] then return unseen[m.sb] end
    end
    return nil
  end
  for _, p in ipairs(paths) do
    local deepest = 0
    for _, m in ipairs(mine) do
      local t = targets[m]
      if #t > deepest and is_on(p, t) then deepest = #t end
    end
    for _, m in ipairs(mine) do -- (a stack there: each of it)
      local t = targets[m]
      if #t == deepest and unseen[m.sb] and is_on(p, t) then return unseen[m.sb] end
    end
  end
  return nil
end

-- Why the model may not have been shown what a step saw, as the end of a
-- note's sentence, or nil: an unmirrored step before it (`unseen_by`), or
-- a script's ns:run around it (`step.within`: the step recorder's).
function Mirror:unseen_because(step)
  local before = self:unseen_by(step)
  if before then
    return "after ns:" .. before.op .. " at " .. M.where_text(before)
      .. ", a step the model could not follow"
  end
  if step.within then
    return "inside an ns:" .. step.within .. ", whose code the model could not follow"
  end
  return nil
end

-- A difference at step (head: its place and call; why: the sentence):
-- where the model may not have been shown what the step saw
-- (`unseen_because`), a note (a read) or the mirror stopped (a step: the
-- model lost track); else the scenario fails (raised, and kept in
-- `self.failed`).
function Mirror:differs(step, head, why, call)
  local because = self:unseen_because(step)
  if not because then
    self.failed = head .. "\n  " .. why
    error(self.failed, 0)
  end
  if step.read then
    return self:note_unseen(step, because, why)
  end
  self.stopped = string.format("the model lost track at step %d, %s: %s: it differs %s, "
    .. "so the steps after it were not compared", self.count, M.where_text(step), call, because)
end

-- Note a read answered otherwise after a step the model was not shown:
-- one note a method, its first place and a count (`Replay:note_lines`
-- writes it).
function Mirror:note_unseen(step, because, why)
  local key = "unseen\0" .. step.op
  local n = self.noted[key]
  if n then n.count = n.count + 1; return end
  n = { op = step.op, where = M.where_text(step), count = 1, after = because,
        detail = not why:find("\n", 1, true) and why:gsub("^the answers differ: ", "") or nil }
  self.noted[key] = n
  self.notes[#self.notes + 1] = n
end

-- ---- the steps ------------------------------------------------------------------

--- `mountns run --both`: apply the step, then compare the kernel's open
-- namespaces with the model's, and what the call returned with what the
-- model's returned (`answer_text`). A read (`step.read`: `ns:read`,
-- `exists`, `ls`, `locked`, `mounts`, `find`) is applied and its answer
-- compared likewise. Raises the first difference (and keeps it in
-- `self.failed`, so a caught error still fails the scenario): the step's
-- place and call, then the outcomes, the answers or the diff of the golden
-- texts (`- kernel`, `+ model`); a strict mirror, the first step it cannot
-- follow (not modelled, or opaque: `ns:run`, `ns:exec`), which it notes
-- otherwise. A difference after such a step, where the model may not have
-- been shown what the script sees, is a note (`Mirror:differs`).
-- @tparam table step the step just recorded
-- @tparam table kernel_nss the scenario's open namespaces, creation order
-- @tparam[opt] table results the kernel call's results (pcall's, packed)
function Mirror:step(step, kernel_nss, results)
  if self.stopped or self.failed then return end
  local ns = self.by_serial[step.ns]
  local call = M.call_text(step, ns and ns:label())
  local head = step.read
    and string.format("--both: read after step %d, %s: %s", self.count, M.where_text(step), call)
    or string.format("--both: step %d, %s: %s", self.count + 1, M.where_text(step), call)
  if not step.read and step.op ~= "label" then self.ctx = nil end
  local kind, why, _, _, got = self:apply(step)
  if kind == "differs" then return self:differs(step, head, why, call) end
  local unmirrored = kind ~= "ok"
  if unmirrored and self.strict then
    self.failed = head .. "\n  " .. kind .. " (--strict: a step the model cannot follow "
      .. "fails): " .. why
    error(self.failed, 0)
  end
  if unmirrored then
    self:note(step, why)
    if step.read then return end
    self:unseen_from(step)
  end
  if step.op == "label" and not unmirrored then return end
  local ctx, diff = self:context(kernel_nss)
  if not ctx then
    if unmirrored then
      self.stopped = string.format("the model lost track at step %d, %s: %s (not modelled): "
        .. "the tables differ from there on, so the steps after it were not compared",
        self.count, M.where_text(step), call)
      return
    end
    return self:differs(step, head, (step.read and "the tables differ before it"
      or "the tables differ after it") .. " (- kernel, + model):\n" .. diff, call)
  end
  -- what the call returned: a read's answer, a new mount fd
  if unmirrored or step.ok == false or not results then return end
  local k, m = answers_text(results, ctx.kernel), answers_text(got, ctx.model)
  if k ~= m then return self:differs(step, head, answers_differ(k, m), call) end
end

return M
