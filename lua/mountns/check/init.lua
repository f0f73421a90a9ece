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
--
-- A package: `generate` (the random numbers, the generator, steps as
-- text), `stats` (--stats); this face runs, compares, shrinks and writes.
-- @module mountns.check

local core = require "mountns.core"
local argcheck = require "mountns.args"
local format = require "mountns.format"
local scenario = require "mountns.scenario"
local model = require "mountns.model"
local mirror = require "mountns.mirror"
local cli = require "mountns.cli"
local generate = require "mountns.check.generate"
local stats_ = require "mountns.check.stats"

local M = {}

-- the generator and the coverage, in parts of their own
M.rng, M.PATHS, M.ANSWERS = generate.rng, generate.PATHS, generate.ANSWERS
M.generate, M.names, M.call_text = generate.generate, generate.names, generate.call_text
M.count_rules, M.count_steps = stats_.count_rules, stats_.count_steps
-- the steps of more than one call, by name (a shrunk script calls them)
local COMPOUND = generate.COMPOUND
M.attach_clone, M.attach_fsmount = COMPOUND.attach_clone, COMPOUND.attach_fsmount
M.pivot_private = COMPOUND.pivot_private
M.stats_lines = stats_.stats_lines
local lua_value = generate.lua_value

local unpack = table.unpack or unpack -- luacheck: ignore

local function pack(...)
  return { n = select("#", ...), ... }
end


-- ---- running a sequence -----------------------------------------------------

--- The outcome of a failed call: the errno name its message ends in
-- ("bind /X /Z: No such file or directory (ENOENT)" -> "ENOENT"), else
-- "error: " and the message without its position.
-- @param err the error
-- @treturn string
function M.errno_of(err)
  local s = tostring(err)
  -- a call the kernel lacks: "...(ENOSYS): needs Linux 5.12"
  local name = s:match("%((E[%u%d]+)%)%s*$") or s:match("%((ENOSYS)%): needs Linux [%d.]+%s*$")
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

-- An answer as text: a file's content, whether a path exists, a
-- directory's names (in the order given), a root view's golden text.
local function answer_text(op, v)
  if op == "mounts" then return format.golden_text(v) end
  return lua_value(v)
end

--- Run steps from a first namespace (a kernel scenario's or a model's):
-- after each step, its outcome ("ok", an errno name, "error: ..." for a
-- raised error that names no errno, "skip" when its namespace was not
-- made or is closed), the answer of a step in `ANSWERS` that succeeded
-- (`answer`: its text) and the golden text of the namespaces open then,
-- in the order they were made.
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
    local outcome, answer = "skip", nil
    if ns then
      local res = pack(pcall(function()
        local f = COMPOUND[st.op] or ns[st.op]
        return f(ns, unpack(st.args, 1, st.args.n))
      end))
      if res[1] and res[2] == nil and type(res[3]) == "string" then
        outcome = M.errno_of(res[3]) -- nil and a message: a refusal (ns:mounts)
      elseif res[1] then
        outcome = "ok"
        if M.ANSWERS[st.op] then answer = answer_text(st.op, res[2]) end
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
    obs[i] = { outcome = outcome, answer = answer, text = ok and text or M.errno_of(text) }
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
    if not x or not y or x.outcome ~= y.outcome or x.answer ~= y.answer or x.text ~= y.text then
      return i
    end
  end
  return nil
end

--- The model's observation of steps (a fresh world each time).
-- @tparam table steps
-- @tparam[opt] table m the model module (default `mountns.model`)
-- @tparam[opt] boolean locked_root the kernel's fresh namespaces have a
-- locked `/` (`on_kernel`'s second result: not root, see `world:namespace`)
-- @tparam[opt] table stats counts the model's rules hit into it (`--stats`)
-- @treturn table as `observe`
function M.on_model(steps, m, locked_root, stats)
  m = m or model
  local w
  local ok, first = pcall(function()
    w = m.new()
    return w:namespace(locked_root and { locked_root = true } or nil)
  end)
  if not ok then
    local obs = {}
    for i = 1, #steps do obs[i] = { outcome = "error: " .. tostring(first), text = "" } end
    return obs
  end
  local obs = M.observe(first, steps)
  if stats then M.count_rules(stats, w.events or {}) end
  return obs
end

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

-- A step's outcome in a script's comment, with its answer (the lines
-- after the first commented)
local function outcome_text(o)
  if not o.answer then return o.outcome end
  return o.outcome .. ", answered:\n" .. commented(o.answer, "--     ")
end

-- (Lua 5.1's load takes a function: its loadstring takes the text)
local loadstr = loadstring or load -- luacheck: ignore

-- A step whose answer the script asserts: the kernel's
local function answer_check(op, call, answer)
  if op == "mounts" then
    return "expect.golden([[\n" .. answer:gsub("\n*$", "") .. "\n]], " .. call .. ")"
  elseif op == "ls" then
    return "assert(table.concat(" .. call .. ", \",\") == "
      .. string.format("%q", table.concat(assert(loadstr("return " .. answer))(), ",")) .. ")"
  end
  return "assert(" .. call .. " == " .. answer .. ")"
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
    "--   kernel: " .. outcome_text(k),
    "--   model:  " .. outcome_text(m),
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
  for _, st in ipairs(steps) do
    if COMPOUND[st.op] then
      lines[#lines + 1] = string.format('local check = %s "mountns.check"', "require")
      break
    end
  end
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
      call = string.format("expect.fails(%q, %s.%s, %s%s)", outcome,
        COMPOUND[st.op] and "check" or names[st.ns], st.op,
        names[st.ns], #a > 0 and (", " .. table.concat(a, ", ")) or "")
    elseif found.kernel[j].answer then
      call = answer_check(st.op, call, found.kernel[j].answer)
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
-- `shrink = false` (write the divergence as found), `progress` (called
-- as progress(done, n) after each batch of sequences)
-- @treturn table `{n, seed, ops, divergences = {{index, at, steps, file,
-- line}, ...}, errors = {{index, line}, ...} (sequences the kernel's run
-- could not finish), seconds, kernel_seconds, model_seconds}`
function M.check(opts)
  opts = argcheck.options(opts, "check", 1, { "n", "seed", "ops", "per", "out", "model",
    "user", "report", "shrink", "stats", "progress" }, 2)
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
    if opts.stats then
      for _, steps in ipairs(seqs) do M.count_steps(opts.stats, steps) end
    end
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
      local mobs = kobs[j] and M.on_model(steps, opts.model, locked, opts.stats)
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
    if opts.progress then opts.progress(to, n) end
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
    if a == "-h" or a == "--help" then
      io.write(cli.help("check"))
      return 0
    end
    if o[a] ~= nil then die("check: " .. a .. " given twice") end
    if a == "--random" then o[a] = int(a, 1, 1e9)
    elseif a == "--seed" then o[a] = int(a, 0, 2147483646)
    elseif a == "--ops" then o[a] = int(a, 1, 1000)
    elseif a == "--per" then o[a] = int(a, 1, 10000)
    elseif a == "--out" then
      i = i + 1
      o[a] = args[i] or die("check: --out needs a directory")
    elseif a == "--no-user" or a == "--list" or a == "--stats" or a == "--progress" then
      o[a] = true
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
  local stats = o["--stats"] and {} or nil
  local progress = cli.progress(o["--progress"])
  local t0 = core.clock()
  local ok, res = pcall(M.check, { n = n, seed = seed, ops = k, per = o["--per"],
    out = o["--out"], user = not o["--no-user"] and nil or false, stats = stats,
    progress = progress and function(done, total)
      progress:show(string.format("check: %d/%d sequences, %.0f s", done, total,
        core.clock() - t0))
    end,
    report = function(line)
      if progress then progress:done() end -- the line, not after the progress
      print(line)
      io.stdout:flush()
    end })
  if progress then progress:done() end
  if not ok then
    io.stderr:write("mountns: check: ", tostring(res), "\n")
    return 1
  end
  print(string.format("check: %d sequences of %d steps, seed %d: %d divergence%s%s, %.1f s "
    .. "(kernel %.1f s, model %.1f s; %.0f sequences/s)", n, k, seed, #res.divergences,
    #res.divergences == 1 and "" or "s",
    #res.errors > 0 and string.format(", %d not run", #res.errors) or "",
    res.seconds, res.kernel_seconds, res.model_seconds, n / res.seconds))
  if stats then
    for _, line in ipairs(M.stats_lines(stats)) do print(line) end
  end
  return (#res.divergences == 0 and #res.errors == 0) and 0 or 1
end

return M
