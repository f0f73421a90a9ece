--- check: the model checked against the kernel by generated scenarios
-- (`mountns check --random N --seed S [--ops K]`, issue 13).
--
-- A generator makes random sequences of namespace method calls over a
-- small universe of paths and one to four namespaces; each sequence runs
-- on the kernel (in a scenario) and on the model (`mountns.model`), and
-- after every step the two are compared: the outcome (ok, or the errno
-- name of the failure) and the golden text of every open namespace
-- (`mountns.format.golden_text`: IDs, peer groups and devices renumbered,
-- `propagate_from` included). A divergence is shrunk (steps dropped,
-- arguments simplified, as long as it still diverges) and written out as a
-- scenario script that `mountns run` runs on the kernel.
--
-- The generator has its own random number generator (L'Ecuyer's combined
-- multiplicative generator, exact in doubles as in integers), so a seed
-- gives the same sequences on every Lua version; sequence `i` of a seed
-- depends only on the seed and `i`, so one can be rerun alone.
-- @module mountns.check

local core = require "mountns.core"
local argcheck = require "mountns.args"
local format = require "mountns.format"
local scenario = require "mountns.scenario"
local model = require "mountns.model"
local mirror = require "mountns.mirror"
local cli = require "mountns.cli"

local M = {}

local unpack = table.unpack or unpack -- luacheck: ignore

local function pack(...)
  return { n = select("#", ...), ... }
end


-- ---- the random number generator ------------------------------------------

-- L'Ecuyer (1988): two multiplicative congruential generators combined.
-- Every product is below 2^47, so doubles (Lua 5.1-5.3, LuaJIT) and 5.4's
-- integers compute the same numbers.
local M1, M2 = 2147483563, 2147483399
local A1, A2 = 40014, 40692

local Rng = {}
Rng.__index = Rng

--- A random number generator for sequence `index` of `seed`.
-- @tparam int seed 0 <= seed < 2^31
-- @tparam[opt=0] int index
-- @return an object with `:int(n)` (1..n) and `:pick(list)`
function M.rng(seed, index)
  local r = setmetatable({ s1 = math.floor(seed) % (M1 - 1) + 1,
                           s2 = math.floor(index or 0) % (M2 - 1) + 1 }, Rng)
  -- nearby seeds start nearby: a few rounds spread them over the range
  for _ = 1, 8 do r:next() end
  return r
end

--- The next number, 1 .. M1 - 1.
function Rng:next()
  self.s1 = A1 * self.s1 % M1
  self.s2 = A2 * self.s2 % M2
  return (self.s1 - self.s2 - 1) % (M1 - 1) + 1
end

--- An integer 1 .. n.
function Rng:int(n)
  return math.floor((self:next() - 1) * n / (M1 - 1)) + 1
end

--- An element of a list.
function Rng:pick(list)
  return list[self:int(#list)]
end

-- ---- the generator ----------------------------------------------------------

--- The paths the generator uses (with `/` for some operations).
M.PATHS = { "/a", "/b", "/c", "/a/x", "/b/x", "/a/x/y" }

local PROPAGATIONS = { "private", "shared", "slave", "unchanged" }
local MAKES = { "make_shared", "make_private", "make_slave", "make_unbindable" }

-- The operations and their weights.
local OPS = {
  { "mkdir", 3 }, { "mount", 4 }, { "bind", 5 }, { "move", 2 }, { "umount", 3 },
  { "remount", 1 }, { "make", 6 }, { "unshare", 3 }, { "close", 1 },
  { "mount_setattr", 2 }, { "move_mount", 2 },
}
-- mount_setattr's attribute sets the generator draws (each alone, maybe
-- with recursive), and move_mount's three kinds
local SETATTRS = {
  { ro = true }, { ro = false }, { nosuid = true }, { noexec = false }, { noatime = true },
  { propagation = "shared" }, { propagation = "private" }, { propagation = "slave" },
  { propagation = "unbindable" },
}
local MOVE_KINDS = { "move", "move", "set_group", "beneath" }
local TOTAL = 0
for _, o in ipairs(OPS) do TOTAL = TOTAL + o[2] end

local function pick_op(r)
  local x = r:int(TOTAL)
  for _, o in ipairs(OPS) do
    x = x - o[2]
    if x <= 0 then return o[1] end
  end
end

-- Never a mount on a namespace's `/`: no call targets `/`, and `/` is no
-- bind source (a bind of `/` is a peer of the root, so a mount on it would
-- propagate onto the root). A mount stacked on `/` is seen by a process
-- that enters the namespace after it (setns, an agent) but not by one that
-- was there before (its root stays the mount below), so the kernel's
-- answer would depend on which process looks, not on the rules.

-- Path helpers of the generator's guess below.
local function under(p, dir) -- p strictly under dir
  if dir == "/" then return p ~= "/" end
  return p:sub(1, #dir + 1) == dir .. "/"
end

local function set_copy(t)
  local c = {}
  for k in pairs(t) do c[k] = true end
  return c
end

--- The method calls of sequence `index` of `seed`: a list of steps
-- `{id = i, ns = 0 (the first namespace) or the id of the unshare step
-- that made it, op = method name, args = {n = N, ...}}`.
-- The generator keeps a rough guess of the directories each namespace
-- has (mkdir adds them, a mount on a path hides those under it, a bind or
-- a move shows the source's there; propagation is not guessed) and picks
-- mostly paths that exist, so that most steps do something.
-- @tparam int seed
-- @tparam int index
-- @tparam[opt=8] int k the number of steps
-- @tparam[opt] table opts `user = false`: no user-namespace copies
-- @treturn table the steps
function M.generate(seed, index, k, opts)
  local r = M.rng(seed, index)
  local user = not (opts and opts.user == false)
  -- the guess: namespace -> {dirs = set of paths, mounts = set of paths}
  local guess = { [0] = { dirs = {}, mounts = {} } }
  local function listed(set, want)
    local out = {}
    for _, p in ipairs(M.PATHS) do
      if (set[p] or false) == want then out[#out + 1] = p end
    end
    return out
  end
  -- a directory, mostly one that exists (never `/`: see above)
  local function dir(g)
    local have = listed(g.dirs, true)
    if #have > 0 and r:int(8) > 1 then return r:pick(have) end
    return r:pick(M.PATHS)
  end
  -- a mount point: mostly one that the sequence mounted, or `/` (one time
  -- in `root`; never for umount: a namespace whose root is unmounted
  -- shows a reader the mount under it, which depends on how it entered)
  local function mountpoint(g, root)
    local have = listed(g.mounts, true)
    if root and (r:int(root) == 1 or #have == 0) then return "/" end
    if #have == 0 or r:int(12) == 1 then return r:pick(M.PATHS) end
    return r:pick(have)
  end
  local function hide(g, p) -- a mount on p hides what was under it
    for _, set in ipairs { g.dirs, g.mounts } do
      for q in pairs(set_copy(set)) do
        if under(q, p) then set[q] = nil end
      end
    end
  end
  local function show(g, a, b) -- a bind or a move of a onto b
    if not g.dirs[b] then return end
    local from = set_copy(g.dirs)
    hide(g, b)
    g.mounts[b] = true
    for q in pairs(from) do
      if under(q, a) then
        g.dirs[(b == "/" and "" or b) .. q:sub(a == "/" and 1 or #a + 1)] = true
      end
    end
  end
  local open = { 0 }
  local steps = {}
  local sources = 0
  for i = 1, k or 8 do
    local ns = r:pick(open)
    local g = guess[ns]
    local op, args
    if #listed(g.dirs, true) < 2 and r:int(3) == 1 then
      op = "mkdir"
    else
      repeat
        op = pick_op(r)
      until not ((op == "unshare" and #open >= 4) or (op == "close" and #open < 2))
    end
    if op == "mkdir" then
      local missing = listed(g.dirs, false)
      local p = (#missing > 0 and r:int(4) > 1) and r:pick(missing) or r:pick(M.PATHS)
      local q = p
      while q ~= "" do
        g.dirs[q] = true
        q = q:match("^(.*)/[^/]*$")
      end
      args = { p, n = 1 }
    elseif op == "mount" then
      sources = sources + 1
      local p = dir(g)
      if g.dirs[p] then hide(g, p); g.mounts[p] = true end
      args = { "t" .. sources, p, "tmpfs", n = 3 }
    elseif op == "bind" then
      local a, b = dir(g), dir(g)
      show(g, a, b)
      args = r:int(3) == 1 and { a, b, { recursive = true }, n = 3 } or { a, b, n = 2 }
    elseif op == "move" then
      local a, b = r:int(10) == 1 and "/" or mountpoint(g), dir(g)
      if g.dirs[b] then
        show(g, a, b)
        hide(g, a)
        g.mounts[a] = nil
      end
      args = { a, b, n = 2 }
    elseif op == "umount" then
      local p = mountpoint(g)
      g.mounts[p] = nil
      local how = r:int(6)
      args = how <= 2 and { p, "detach", n = 2 } or how == 3 and { p, "force", n = 2 }
        or how == 4 and { p, "expire", n = 2 } or { p, n = 1 }
    elseif op == "mount_setattr" then
      local attrs = {}
      for key, v in pairs(r:pick(SETATTRS)) do attrs[key] = v end
      if r:int(3) == 1 then attrs.recursive = true end
      args = { mountpoint(g, 6), attrs, n = 2 }
    elseif op == "move_mount" then
      -- by paths only: a mount fd cannot be a step's argument (never `/`)
      local kind = r:pick(MOVE_KINDS)
      local a, b = mountpoint(g), kind == "move" and dir(g) or mountpoint(g)
      if kind == "move" then
        if g.dirs[b] then show(g, a, b); hide(g, a); g.mounts[a] = nil end
        args = { a, b, n = 2 }
      else
        args = { a, b, { [kind] = true }, n = 3 }
      end
    elseif op == "remount" then
      local how = r:pick { "ro", "rw" }
      args = r:int(2) == 1 and { mountpoint(g, 6), how, nil, { bind = true }, n = 4 }
        or { mountpoint(g, 6), how, n = 2 }
    elseif op == "make" then
      op = r:pick(MAKES)
      args = r:int(3) == 1 and { mountpoint(g, 3), { recursive = true }, n = 2 }
        or { mountpoint(g, 3), n = 1 }
    elseif op == "unshare" then
      local o = { propagation = r:pick(PROPAGATIONS) }
      if user and r:int(4) == 1 then o.user = true end
      args = { o, n = 1 }
      open[#open + 1] = i
      guess[i] = { dirs = set_copy(g.dirs), mounts = set_copy(g.mounts) }
    elseif op == "close" then
      for j, v in ipairs(open) do
        if v == ns then table.remove(open, j); break end
      end
      args = { n = 0 }
    end
    steps[i] = { id = i, ns = ns, op = op, args = args }
  end
  return steps
end

-- ---- steps as text ----------------------------------------------------------

-- A value as Lua source.
local function lua_value(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "table" then
    local keys = {}
    for key in pairs(v) do keys[#keys + 1] = key end
    table.sort(keys)
    local parts = {}
    for j, key in ipairs(keys) do parts[j] = key .. " = " .. lua_value(v[key]) end
    return "{ " .. table.concat(parts, ", ") .. " }"
  end
  return tostring(v)
end

--- The names of a sequence's namespaces: `{[0] = "ns1", [id] = "nsK"}`, K
-- in the order the unshare steps come.
-- @tparam table steps
-- @treturn table
function M.names(steps)
  local names, k = { [0] = "ns1" }, 1
  for _, st in ipairs(steps) do
    if st.op == "unshare" then
      k = k + 1
      names[st.id] = "ns" .. k
    end
  end
  return names
end

--- A step as a Lua call: `ns2:bind("/a", "/b", { recursive = true })`.
-- @tparam table step
-- @tparam[opt] table names from `names` (default: "ns?")
-- @treturn string
function M.call_text(step, names)
  local a = {}
  for j = 1, step.args.n do a[j] = lua_value(step.args[j]) end
  local who = names and names[step.ns] or "ns?"
  if step.op == "unshare" and step.args.n == 1 then
    return who .. ":unshare " .. a[1]
  end
  return who .. ":" .. step.op .. "(" .. table.concat(a, ", ") .. ")"
end

-- ---- running a sequence -----------------------------------------------------

--- The outcome of a failed call: the errno name its message ends in
-- ("bind /X /Z: No such file or directory (ENOENT)" -> "ENOENT"), else
-- "error: " and the message without its position.
-- @param err the error
-- @treturn string
function M.errno_of(err)
  local s = tostring(err)
  local name = s:match("%((E[%u%d]+)%)%s*$")
  if name then return name end
  return "error: " .. (s:gsub("^[^\n:]*:%d+: ", ""))
end

-- A namespace's table with propagate_from, read from inside it (ns:run):
-- the kernel answers propagate_from against the reader's root, and a read
-- from outside would fork a child that enters it, at every step.
-- (a closure, not ns:run(f, ns): a scenario records ns:run's arguments,
-- and copies a table it is given); a model's namespace (or a wrapper of
-- one) has no ns:run, and its answer is the same from anywhere
local function table_of(ns)
  if not scenario.is_namespace(ns) then return ns:mounts { propagate_from = true } end
  return ns:run(function() return ns:mounts { propagate_from = true } end)
end

-- The golden text of the open namespaces (propagate_from included).
local function tables_text(open)
  local tables = {}
  for j, ns in ipairs(open) do
    local t, err = table_of(ns)
    if not t then return "error: " .. tostring(err) end
    tables[j] = t
  end
  return format.golden_text(unpack(tables, 1, #open))
end

--- Run steps from a first namespace (a kernel scenario's or a model's):
-- after each step, its outcome ("ok", an errno name, "error: ..." for a
-- raised error that names no errno, "skip" when its namespace was not
-- made or is closed) and the golden text of the namespaces open then, in
-- the order they were made.
-- @param first the first namespace
-- @tparam table steps
-- @tparam[opt] boolean close close every namespace still open at the end
-- (the first one too)
-- @treturn table `{ {outcome = s, text = s}, ... }`, one per step
function M.observe(first, steps, close)
  local nss, open = { [0] = first }, { first }
  local obs = {}
  for i, st in ipairs(steps) do
    local ns = nss[st.ns]
    local outcome = "skip"
    if ns then
      local res = pack(pcall(function()
        return ns[st.op](ns, unpack(st.args, 1, st.args.n))
      end))
      if res[1] then
        outcome = "ok"
        if st.op == "unshare" then
          nss[st.id] = res[2]
          open[#open + 1] = res[2]
        elseif st.op == "close" then
          nss[st.ns] = nil
          for j, o in ipairs(open) do
            if o == ns then table.remove(open, j); break end
          end
        end
      else
        outcome = M.errno_of(res[2])
      end
    end
    local ok, text = pcall(tables_text, open)
    obs[i] = { outcome = outcome, text = ok and text or M.errno_of(text) }
  end
  if close then
    for j = #open, 1, -1 do pcall(open[j].close, open[j]) end
  end
  return obs
end

--- The first step where two observations differ, or nil.
-- @tparam table a
-- @tparam table b
-- @treturn[1] int the step
-- @return[2] nil
function M.first_difference(a, b)
  for i = 1, math.max(#a, #b) do
    local x, y = a[i], b[i]
    if not x or not y or x.outcome ~= y.outcome or x.text ~= y.text then return i end
  end
  return nil
end

--- The model's observation of steps (a fresh world each time).
-- @tparam table steps
-- @tparam[opt] table m the model module (default `mountns.model`)
-- @tparam[opt] boolean locked_root the kernel's fresh namespaces have a
-- locked `/` (`on_kernel`'s second result: not root, see `world:namespace`)
-- @treturn table as `observe`
function M.on_model(steps, m, locked_root)
  m = m or model
  local ok, first = pcall(function()
    return m.new():namespace(locked_root and { locked_root = true } or nil)
  end)
  if not ok then
    local obs = {}
    for i = 1, #steps do obs[i] = { outcome = "error: " .. tostring(first), text = "" } end
    return obs
  end
  return M.observe(first, steps)
end

-- A fresh namespace inside a running scenario for sequence k of a batch:
-- what a scenario's first namespace is (a private copy whose / is a new
-- tmpfs, the old root detached), made from the scenario's own.
local function fresh(first, k)
  local ns = first:unshare { propagation = "private" }
  local dir = "/s" .. k
  ns:mkdir(dir)
  ns:mount("mountns", dir, "tmpfs", nil, "mode=0755")
  ns:pivot_root(dir)
  return ns
end

--- The kernel's observations of sequences: each in a fresh namespace
-- (see above) of a scenario, `per` sequences a scenario.
-- @tparam table seqs a list of step lists
-- @tparam[opt=1] int per sequences a scenario
-- @treturn table a list of observations, one per sequence
-- @treturn boolean whether their `/` was locked: the scenario ran in a user
-- namespace other than the initial one (an unprivileged caller's), whose
-- lock pivot_root hands to the new root (doc/kernel-vs-docs.md 4)
function M.on_kernel(seqs, per)
  per = per or 1
  local out, locked = {}, false
  for from = 1, #seqs, per do
    local to = math.min(#seqs, from + per - 1)
    local got, lk = scenario.scenario(function(first)
      local res = {}
      for j = from, to do
        -- its namespaces are closed at its end (an agent with none left ends)
        res[#res + 1] = M.observe(fresh(first, j), seqs[j], true)
      end
      return res, not mirror.in_initial_userns()
    end, { timeout = 60 + (to - from) })
    for _, o in ipairs(got) do out[#out + 1] = o end
    locked = lk
  end
  return out, locked
end

-- ---- comparing, shrinking ----------------------------------------------------

-- Candidates run on the kernel (per scenario: `per`) and on the model:
-- for each, nil or {at = first differing step, kernel = obs, model = obs}.
local function trial(cands, o)
  local kobs, locked = M.on_kernel(cands, o.per)
  local out = {}
  for j, steps in ipairs(cands) do
    local mobs = M.on_model(steps, o.model, locked)
    local at = M.first_difference(kobs[j], mobs)
    out[j] = at and { at = at, kernel = kobs[j], model = mobs, steps = steps } or false
  end
  return out
end

-- The steps whose namespace still exists once others are dropped (a step
-- on a namespace whose unshare was dropped goes too).
local function consistent(steps)
  local made, out = { [0] = true }, {}
  for _, st in ipairs(steps) do
    if made[st.ns] then
      out[#out + 1] = st
      if st.op == "unshare" then made[st.id] = true end
    end
  end
  return out
end

local function with_args(st, args)
  return { id = st.id, ns = st.ns, op = st.op, args = args }
end

local function copy_args(a)
  local c = { n = a.n }
  for j = 1, a.n do c[j] = a[j] end
  return c
end

-- The simpler forms of a step: without its flags or options, a path one
-- level up, a plain private copy.
local function simpler(st)
  local out = {}
  local a = st.args
  if st.op == "unshare" then
    local o = a[1]
    if o.user then out[#out + 1] = with_args(st, { { propagation = o.propagation }, n = 1 }) end
    if o.propagation ~= "private" then
      out[#out + 1] = with_args(st, { { propagation = "private", user = o.user }, n = 1 })
    end
    return out
  end
  -- the trailing flags: bind's and make_*'s {recursive}, umount's "detach",
  -- remount's {bind}
  local last = a[a.n]
  if a.n >= 2 and (type(last) == "table" or (st.op == "umount" and last ~= nil)) then
    local c = copy_args(a)
    c[c.n] = nil
    c.n = c.n - 1
    if st.op == "remount" then c[3], c.n = nil, 2 end
    out[#out + 1] = with_args(st, c)
  end
  for j = 1, a.n do
    local v = a[j]
    local up = type(v) == "string" and v:match("^(/.+)/[^/]+$")
    if up and not (st.op == "mount" and j ~= 2) then
      local c = copy_args(a)
      c[j] = up
      out[#out + 1] = with_args(st, c)
    end
  end
  return out
end

--- Run steps on the kernel and on the model: where they first differ.
-- @tparam table steps
-- @tparam[opt] table opts `model` (the model module)
-- @treturn[1] table `{at = step, steps = steps, kernel = obs, model = obs}`
-- @return[2] nil when they never differ
function M.diverges(steps, opts)
  return trial({ steps }, { model = opts and opts.model })[1] or nil
end

--- Shrink a divergence: drop steps and simplify arguments as long as the
-- kernel and the model still differ (delta debugging, greedily: one step
-- or one simplification at a time, every candidate of a round run in one
-- kernel scenario).
-- @tparam table found `{at = step, steps = steps, kernel = obs, model = obs}`
-- @tparam[opt] table opts `model` (the model module), `per`
-- @treturn table the same shape, for the shortest sequence found, and the
-- number of candidates tried
function M.shrink(found, opts)
  local o = { model = opts and opts.model, per = 1000 }
  local tried = 0
  -- the steps after the first difference do not matter
  local function cut(f)
    local steps = {}
    for j = 1, f.at do steps[j] = f.steps[j] end
    f.steps = steps
    return f
  end
  found = cut(found)
  local function round(cands)
    if #cands == 0 then return nil end
    tried = tried + #cands
    for _, f in ipairs(trial(cands, o)) do
      if f then return cut(f) end
    end
    return nil
  end
  local changed = true
  while changed do
    changed = false
    -- drop one step (the later ones first)
    local cands = {}
    for j = #found.steps, 1, -1 do
      local c = {}
      for x, st in ipairs(found.steps) do
        if x ~= j then c[#c + 1] = st end
      end
      cands[#cands + 1] = consistent(c)
    end
    local f = round(cands)
    if f then
      found, changed = f, true
    else
      -- simplify one step
      cands = {}
      for j, st in ipairs(found.steps) do
        for _, s2 in ipairs(simpler(st)) do
          local c = {}
          for x, st2 in ipairs(found.steps) do c[x] = x == j and s2 or st2 end
          cands[#cands + 1] = c
        end
      end
      f = round(cands)
      if f then found, changed = f, true end
    end
  end
  return found, tried
end

-- ---- the written script ---------------------------------------------------

-- text with each line behind prefix
local function commented(text, prefix)
  local out = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    out[#out + 1] = (prefix .. line):gsub("%s+$", "")
  end
  if out[#out] == "--" or out[#out] == prefix:gsub("%s+$", "") then out[#out] = nil end
  return table.concat(out, "\n")
end

--- A divergence as a scenario script: the steps on the scenario's
-- namespaces, each step the kernel refused as `expect.fails`, the
-- kernel's tables after the last step as `expect.golden`; the kernel's
-- and the model's tables and their diff in comments. `mountns run FILE`
-- runs it on the kernel (it passes: it asserts what the kernel did),
-- `mountns run --both FILE` shows where the model differs.
-- @tparam table found as `shrink` returns it
-- @tparam table info `seed`, `index`, `n`, `k` (the run), `from` (steps
-- before shrinking)
-- @treturn string the script
function M.script(found, info)
  local steps, at = found.steps, found.at
  local names = M.names(steps)
  local k, m = found.kernel[at], found.model[at]
  local lines = {
    "-- mountns check: the kernel and the model (mountns.model) differ.",
    string.format("-- Sequence %d of `mountns check --random %d --seed %d --ops %d`,",
      info.index, info.n, info.seed, info.k),
    string.format("-- shrunk from %d steps to %d.", info.from, #steps),
    "--   mountns run FILE         the kernel: it passes (it asserts what the kernel did)",
    "--   mountns run --model FILE  the model: it fails where the model differs",
    "--   mountns run --both FILE   both, compared after every step",
    "--",
    string.format("-- Step %d, %s:", at, M.call_text(steps[at], names)),
    "--   kernel: " .. k.outcome,
    "--   model:  " .. m.outcome,
    "-- The kernel's tables after it (one block per open namespace):",
    commented(k.text, "--   "),
    "-- The model's tables after it:",
    commented(m.text, "--   "),
  }
  local d = format.diff_text(k.text, m.text, "kernel", "model")
  if d then
    lines[#lines + 1] = "-- The difference (- kernel, + model):"
    lines[#lines + 1] = commented(d, "--   ")
  end
  lines[#lines + 1] = ""
  -- (written with format: spec/tools/layers.lua reads a require in a string as one)
  lines[#lines + 1] = string.format('local mountns = %s "mountns"', "require")
  lines[#lines + 1] = string.format('local expect = %s "mountns.expect"', "require")
  lines[#lines + 1] = ""
  lines[#lines + 1] = string.format('mountns.scenario("check: seed %d, sequence %d, shrunk", '
    .. "function(ns1)", info.seed, info.index)
  local open = { 0 }
  for j, st in ipairs(steps) do
    local outcome = found.kernel[j].outcome
    local call = M.call_text(st, names)
    if outcome == "skip" then
      call = "-- (skipped: its namespace is gone) " .. call
    elseif outcome ~= "ok" then
      local a = {}
      for x = 1, st.args.n do a[x] = lua_value(st.args[x]) end
      call = string.format("expect.fails(%q, %s.%s, %s%s)", outcome, names[st.ns], st.op,
        names[st.ns], #a > 0 and (", " .. table.concat(a, ", ")) or "")
    elseif st.op == "unshare" then
      call = "local " .. names[st.id] .. " = " .. call
      open[#open + 1] = st.id
    elseif st.op == "close" then
      for x, v in ipairs(open) do
        if v == st.ns then table.remove(open, x); break end
      end
    end
    lines[#lines + 1] = "  " .. call
  end
  local tables = {}
  for x, id in ipairs(open) do
    tables[x] = names[id] .. ":mounts { propagate_from = true }"
  end
  if #tables > 0 then
    lines[#lines + 1] = "  -- the kernel's tables now"
    lines[#lines + 1] = "  expect.golden([["
    lines[#lines + 1] = (k.text:gsub("\n*$", ""))
    lines[#lines + 1] = "]], " .. table.concat(tables, ", ") .. ")"
  end
  lines[#lines + 1] = "end)"
  return table.concat(lines, "\n") .. "\n"
end

--- Run a written script the way `mountns run` does: whether its scenario
-- passed on the kernel.
-- @tparam string file
-- @treturn[1] boolean true
-- @return[2] nil
-- @treturn[2] string why not
function M.verify(file)
  local passed, why = true, nil
  local done, err = scenario.run_file(file, { report = function(_, ok, e)
    if not ok then passed, why = false, tostring(e) end
  end })
  if not done then return nil, err end
  if not passed then return nil, why end
  return true
end

--- Whether this machine lets a scenario make a user-namespace copy
-- (`unshare{user = true}`): true, or false and why not.
function M.user_allowed()
  local ok, err = pcall(scenario.scenario, function(ns)
    ns:unshare { user = true }
  end)
  return ok, not ok and tostring(err) or nil
end

-- ---- the check ------------------------------------------------------------

--- Check the model against the kernel: `mountns check`.
-- @tparam table opts `n` sequences (default 100), `seed` (0 <= seed <
-- 2^31, default 1), `ops` steps each (default 8), `per` sequences in a
-- kernel scenario (default 50), `out` directory for the scripts (default
-- "."), `model` (a module with `new()`; default `mountns.model`: an
-- option for specs that plug in a wrong one), `user = false` (no
-- user-namespace copies), `report` (called with each line of output),
-- `shrink = false` (write the divergence as found)
-- @treturn table `{n, seed, ops, divergences = {{index, at, steps, file,
-- line}, ...}, errors = {{index, line}, ...} (sequences the kernel's run
-- could not finish), seconds, kernel_seconds, model_seconds}`
function M.check(opts)
  opts = argcheck.options(opts, "check", 1, { "n", "seed", "ops", "per", "out", "model",
    "user", "report", "shrink" }, 2)
  local n, seed, k = opts.n or 100, opts.seed or 1, opts.ops or 8
  local per = opts.per or 50
  local report = opts.report or function() end
  local t0 = core.clock()
  local res = { n = n, seed = seed, ops = k, divergences = {}, errors = {},
                kernel_seconds = 0, model_seconds = 0 }
  local shrunk = {} -- kind of divergence -> the sequence shrunk for it
  local user = opts.user
  if user == nil then
    local why
    user, why = M.user_allowed()
    if not user then
      report("user-namespace copies left out: " .. (why:gsub("\n.*", "")))
    end
  end
  for from = 1, n, per do
    local to = math.min(n, from + per - 1)
    local seqs = {}
    for i = from, to do seqs[#seqs + 1] = M.generate(seed, i, k, { user = user }) end
    local t1 = core.clock()
    local ok, kobs, locked = pcall(M.on_kernel, seqs, per)
    if not ok then
      -- a batch that failed (a scenario's error, its timeout): each
      -- sequence alone, and the one that fails is reported
      kobs = {}
      for j, steps in ipairs(seqs) do
        local one_ok, one, lk = pcall(M.on_kernel, { steps })
        if one_ok then
          kobs[j], locked = one[1], lk
        else
          local line = string.format("ERROR sequence %d: the kernel's run failed: %s",
            from + j - 1, (tostring(one):gsub("\n.*", "")))
          res.errors[#res.errors + 1] = { index = from + j - 1, line = line }
          report(line)
        end
      end
    end
    local t2 = core.clock()
    local found = {}
    for j, steps in ipairs(seqs) do
      local mobs = kobs[j] and M.on_model(steps, opts.model, locked)
      local at = mobs and M.first_difference(kobs[j], mobs)
      if at then
        found[#found + 1] = { index = from + j - 1, at = at, steps = steps,
                              kernel = kobs[j], model = mobs }
      end
    end
    res.kernel_seconds = res.kernel_seconds + (t2 - t1)
    res.model_seconds = res.model_seconds + (core.clock() - t2)
    for _, f in ipairs(found) do
      local index, from_steps = f.index, #f.steps
      -- one shrink per kind of divergence (the call, both outcomes, whether
      -- the tables differ): the same bug found again is only reported
      local km0, mm0 = f.kernel[f.at], f.model[f.at]
      local kind = table.concat({ f.steps[f.at].op, km0.outcome, mm0.outcome,
                                  tostring(km0.text == mm0.text) }, " ")
      local like = shrunk[kind]
      if opts.shrink ~= false and not like then
        f = M.shrink(f, { model = opts.model })
        shrunk[kind] = index
      else
        local steps = {}
        for j = 1, f.at do steps[j] = f.steps[j] end
        f.steps = steps
      end
      local file = string.format("%s/check-%d-%d.lua", opts.out or ".", seed, index)
      local text = M.script(f, { seed = seed, index = index, n = n, k = k, from = from_steps })
      local fh, err = io.open(file, "w")
      local verdict = ""
      if fh then
        fh:write(text)
        fh:close()
        -- the script must reproduce the kernel's side
        local verified, why = M.verify(file)
        if not verified then
          verdict = " (the script fails on the kernel: " .. (tostring(why):gsub("\n.*", "")) .. ")"
        end
      else
        file = "(not written: " .. tostring(err) .. ")"
      end
      local names = M.names(f.steps)
      local km, mm = f.kernel[f.at], f.model[f.at]
      local line = string.format("DIVERGES sequence %d: step %d of %d, %s: kernel %s, model %s%s"
        .. " -> %s%s", index, f.at, #f.steps, M.call_text(f.steps[f.at], names),
        km.outcome, mm.outcome, km.text ~= mm.text and " (tables differ)" or "", file,
        like and string.format(" (like sequence %d: not shrunk)", like) or "")
        .. verdict
      res.divergences[#res.divergences + 1] = { index = index, at = f.at, steps = f.steps,
                                                file = file, line = line }
      report(line)
    end
  end
  res.seconds = core.clock() - t0
  return res
end

-- ---- the command line: `mountns check ...` --------------------------------

--- `mountns check ARGS` (bin/mountns): the options parsed, the sequences
-- listed (`--list`) or checked (`M.check`), one line per divergence and a
-- summary. A usage error exits with status 2 (`mountns.cli.die`).
-- @tparam {string,...} args the words after `check`
-- @treturn int the exit status: 0 no divergence, 1 divergences (or a
-- sequence not run)
function M.command(args)
  local die = cli.die
  local o = {}
  local i = 1
  -- an integer option's value, lo <= v <= hi
  local function int(name, lo, hi)
    i = i + 1
    local v = args[i]
    local n = v and v:match("^%d+$") and tonumber(v)
    if not n or n < lo or n > hi then
      die(string.format("check: %s needs an integer from %d to %d, got %s", name, lo, hi,
        v and ("'" .. core.escape(v) .. "'") or "nothing"))
    end
    return math.floor(n)
  end
  while i <= #args do
    local a = args[i]
    if o[a] ~= nil then die("check: " .. a .. " given twice") end
    if a == "--random" then o[a] = int(a, 1, 1e9)
    elseif a == "--seed" then o[a] = int(a, 0, 2147483646)
    elseif a == "--ops" then o[a] = int(a, 1, 1000)
    elseif a == "--per" then o[a] = int(a, 1, 10000)
    elseif a == "--out" then
      i = i + 1
      o[a] = args[i] or die("check: --out needs a directory")
    elseif a == "--no-user" or a == "--list" then o[a] = true
    else die("check: unexpected argument " .. core.escape(a) .. "\n" .. cli.USAGE) end
    i = i + 1
  end
  local n = o["--random"] or die("check: --random N is needed (the number of sequences)")
  local seed = o["--seed"] or os.time() % 2147483647
  local k = o["--ops"] or 8
  if o["--list"] then
    for index = 1, n do
      local steps = M.generate(seed, index, k, { user = not o["--no-user"] })
      local names = M.names(steps)
      print(string.format("sequence %d:", index))
      for _, st in ipairs(steps) do print("  " .. M.call_text(st, names)) end
    end
    return 0
  end
  if o["--out"] then
    local ok, err = core.mkdir(o["--out"], { parents = true })
    if not ok then die("check: --out: " .. tostring(err)) end
  end
  print(string.format("check: %d sequences of %d steps, seed %d", n, k, seed))
  io.stdout:flush()
  local ok, res = pcall(M.check, { n = n, seed = seed, ops = k, per = o["--per"],
    out = o["--out"], user = not o["--no-user"] and nil or false,
    report = function(line)
      print(line)
      io.stdout:flush()
    end })
  if not ok then
    io.stderr:write("mountns: check: ", tostring(res), "\n")
    return 1
  end
  print(string.format("check: %d sequences of %d steps, seed %d: %d divergence%s%s, %.1f s "
    .. "(kernel %.1f s, model %.1f s; %.0f sequences/s)", n, k, seed, #res.divergences,
    #res.divergences == 1 and "" or "s",
    #res.errors > 0 and string.format(", %d not run", #res.errors) or "",
    res.seconds, res.kernel_seconds, res.model_seconds, n / res.seconds))
  return (#res.divergences == 0 and #res.errors == 0) and 0 or 1
end

return M
