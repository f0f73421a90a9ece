-- Benchmark (issue 13): the model answers a scenario at least 100x faster
-- than the kernel scenario (no fork, no namespaces). The same scenario
-- function runs through `mountns.scenario` (a forked child, a new mount
-- namespace whose / is a fresh tmpfs, the kernel's calls) and through
-- `mountns.model.scenario` (pure Lua), in interleaved rounds; both return
-- their answer (the mount tables of their namespaces at the end), whose
-- golden texts must be equal (compared outside the timing: formatting is
-- the same work on both sides). Medians of the rounds and their ratio, in
-- one run:
--   * the seed article (examples/article.lua's steps);
--   * a 1,024-mount explosion in the style of mount_namespaces(7) (a
--     private / with one mount, rbind / into a directory of itself nine
--     times: 2 -> 4 -> 8 -> ... -> 1024 mounts, each rbind copying the
--     whole tree).
-- Each contender starts its timed runs after a full garbage collection
-- (outside the timing), so neither pays for collecting the other's
-- garbage. Two more contenders time the floor, what no Lua model of this
-- contract can do without: allocating the answer (each record of the
-- model's answer made again by one table constructor of its 15 fields,
-- its target string by one concatenation), then one table of a model
-- mount's 16 fields for each mount the model's world holds and one of an
-- event's 8 fields for each event of its history (explain's); the
-- kernel's time over the floor's is the most such a model could reach.
local mountns = require "mountns"
local model = require "mountns.model"
local format = require "mountns.format"
local bench = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench") .. "/lib.lua")

local unpack = table.unpack or unpack -- luacheck: ignore

local ROUNDS = tonumber(os.getenv("ROUNDS") or "") or 7

-- Each case: its steps (the calls: 11 in the article, 21 in the
-- explosion), which return the namespaces whose tables are the answer.
local function article_steps(sh1)
  sh1:make_private("/")
  sh1:mkdir("/X"); sh1:mkdir("/Y")
  sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
  sh1:mount("sda5", "/Y", "tmpfs"); sh1:make_shared("/Y")
  local sh2 = sh1:unshare { propagation = "unchanged" }
  sh1:mkdir("/Z")
  sh1:bind("/X", "/Z")
  return sh1, sh2
end

local DOUBLINGS = 9
local function explosion_steps(ns)
  ns:make_private("/")
  ns:mkdir("/a")
  ns:mount("a", "/a", "tmpfs")
  for i = 1, DOUBLINGS do ns:mkdir("/m" .. i) end
  for i = 1, DOUBLINGS do ns:bind("/", "/m" .. i, { recursive = true }) end
  return ns
end

-- the scenario function of a case: its steps, then the answer (the mount
-- table of each namespace)
local function with_answer(steps)
  return function(ns)
    local out = { steps(ns) }
    for i, x in ipairs(out) do out[i] = x:mounts() end
    return out
  end
end

-- The floor's work for an answer (a list of mount tables), a number of
-- mounts and of events: two functions that allocate them again (the
-- records; the mounts and events).
local function floor_of(answer, nmounts, nevents)
  local parts = {}
  for t, tbl in ipairs(answer) do
    parts[t] = {}
    for i, r in ipairs(tbl) do
      local dir, base = r.target:match("^(.-)(/[^/]*)$")
      parts[t][i] = { r, dir, base }
    end
  end
  return function()
    local out = {}
    for t, list in ipairs(parts) do
      local recs = {}
      for i, x in ipairs(list) do
        local r = x[1]
        recs[i] = { id = r.id, parent_id = r.parent_id, major = r.major, minor = r.minor,
          root = r.root, target = x[2] .. x[3], options = r.options, fstype = r.fstype,
          source = r.source, super_options = r.super_options, shared = r.shared,
          master = r.master, propagate_from = r.propagate_from, unbindable = r.unbindable,
          propagation = r.propagation }
      end
      out[t] = recs
    end
    return out
  end, function()
    local mounts = {}
    for i = 1, nmounts do
      mounts[i] = { uid = i, sb = mounts, root = "/", children = mounts, slaves = mounts,
        flags = mounts, unbindable = false, locked = false, parent = mounts[i - 1], mp = "/m",
        ns = mounts, group = nil, master = nil, lock_flags = nil, tgen_ = nil, tgt_ = nil }
    end
    local events = {}
    for i = 1, nevents do
      events[i] = { seq = i, ns = "ns1", call = "mkdir /m", kind = "call", target = "/m",
                    via = nil, from_ns = "ns1", rule = "r" }
    end
    return mounts, events
  end
end

local cases = {
  { name = "seed article", steps = article_steps, calls = 11, runs = 20 },
  { name = "1,024-mount explosion", steps = explosion_steps, calls = 21, runs = 3 },
}
local function empty() end

print(string.format("model vs kernel scenario, median of %d interleaved rounds (%s, %s, "
  .. "load average %s)", ROUNDS, rawget(_G, "jit") and jit.version or _VERSION,
  (io.open("/proc/sys/kernel/osrelease") or io.stdin):read("*l") or "?", bench.loadavg()))
for _, c in ipairs(cases) do
  c.fn = with_answer(c.steps)
  local kanswer, manswer
  -- the floor's answer and mounts: the model's (one run outside the timing)
  local nmounts, nevents
  local answer = model.scenario(function(ns)
    local a = c.fn(ns)
    nmounts, nevents = #ns.world.mounts, #ns.world.events
    return a
  end)
  local floor_records, floor_mounts = floor_of(answer, nmounts, nevents)
  local times = bench.rounds(ROUNDS, {
    { key = "kernel", run = function()
      collectgarbage()
      local t; t, kanswer = bench.timed(c.runs, mountns.scenario, c.fn); return t end },
    { key = "model", run = function()
      collectgarbage()
      local t; t, manswer = bench.timed(c.runs * 10, model.scenario, c.fn); return t end },
    -- the model's time in parts: a scenario that does nothing, the steps
    { key = "empty", run = function()
      collectgarbage()
      return (bench.timed(c.runs * 10, model.scenario, empty)) end },
    { key = "steps", run = function()
      collectgarbage()
      return (bench.timed(c.runs * 10, model.scenario, c.steps)) end },
    { key = "records", run = function()
      collectgarbage()
      return (bench.timed(c.runs * 10, floor_records)) end },
    { key = "mounts", run = function()
      collectgarbage()
      return (bench.timed(c.runs * 10, floor_mounts)) end } })
  local ktext = format.golden_text(unpack(kanswer))
  local mtext = format.golden_text(unpack(manswer))
  assert(ktext == mtext, c.name .. ": the model's answer differs from the kernel's:\n"
    .. tostring(format.diff_text(ktext, mtext, "kernel", "model")))
  local k, m = bench.median(times.kernel), bench.median(times.model)
  local ratio = k / m
  print(string.format("  %-24s kernel %9.3f ms  model %8.3f ms  ratio %7.1fx  (target >= 100x: %s)",
    c.name, k * 1000, m * 1000, ratio, ratio >= 100 and "holds" or "DOES NOT HOLD"))
  local e, st = bench.median(times.empty), bench.median(times.steps)
  print(string.format("  %-24s model: an empty scenario %.3f ms, the %d calls %.3f ms "
    .. "(%.1f us each), the answer's listing %.3f ms", "", e * 1000, c.calls, (st - e) * 1000,
    (st - e) / c.calls * 1e6, (m - st) * 1000))
  local fr, fm = bench.median(times.records), bench.median(times.mounts)
  local nrec = 0
  for _, t in ipairs(manswer) do nrec = nrec + #t end
  print(string.format("  %-24s floor: the answer's %d records %.3f ms (at most %.0fx), "
    .. "with %d mounts and %d events %.3f ms (at most %.0fx)", "", nrec, fr * 1000, k / fr,
    nmounts, nevents, (fr + fm) * 1000, k / (fr + fm)))
  if c.steps == explosion_steps then
    print(string.format("  (%d mounts on both)", #kanswer[1]))
  end
end
