-- Benchmark (issue 25): the model against the kernel with many mounts
-- under one parent. The same scenario function, N times `mkdir /mI`,
-- `mount tmpfs /mI` and `ns:find("/mI")`, then the mount table, runs
-- through `mountns.scenario` (the kernel) and `mountns.model.scenario`, in
-- interleaved rounds, for N = 2,500, 5,000 and 10,000; their answers'
-- golden texts must be equal (outside the timing). Medians, the ratio
-- kernel / model in the same run (target: >= 2x at 10,000) and the model's
-- microseconds per mount at each N (linear growth: the same at every N).
-- Before the model's per-parent index by mount point, path lookup scanned
-- every child of / and `ns:find` built the whole table: 3-4.7 s at 10,000.
--   ROUNDS=5 lua5.4 bench/model_wide.lua
local mountns = require "mountns"
local model = require "mountns.model"
local format = require "mountns.format"
local bench = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench") .. "/lib.lua")

local ROUNDS = tonumber(os.getenv("ROUNDS") or "") or 5

local function wide(n)
  return function(ns)
    for i = 1, n do
      local p = "/m" .. i
      ns:mkdir(p)
      ns:mount("m", p, "tmpfs")
      assert(ns:find(p), p)
    end
    return ns:mounts()
  end
end

print(string.format("model vs kernel, N tmpfs mounts under /, median of %d interleaved rounds "
  .. "(%s, %s, load average %s)", ROUNDS, rawget(_G, "jit") and jit.version or _VERSION,
  (io.open("/proc/sys/kernel/osrelease") or io.stdin):read("*l") or "?", bench.loadavg()))
for _, n in ipairs { 2500, 5000, 10000 } do
  local fn = wide(n)
  local kanswer, manswer
  local times = bench.rounds(ROUNDS, {
    { key = "kernel", run = function()
      collectgarbage()
      local t; t, kanswer = bench.timed(1, mountns.scenario, fn); return t end },
    { key = "model", run = function()
      collectgarbage()
      local t; t, manswer = bench.timed(1, model.scenario, fn, { timeout = 600 }); return t end },
  })
  local ktext, mtext = format.golden_text(kanswer), format.golden_text(manswer)
  assert(ktext == mtext, n .. " mounts: the model's answer differs from the kernel's:\n"
    .. tostring(format.diff_text(ktext, mtext, "kernel", "model")))
  local k, m = bench.median(times.kernel), bench.median(times.model)
  print(string.format("  %6d mounts  kernel %8.1f ms (%5.1f us a mount)  model %8.1f ms "
    .. "(%5.1f us a mount)  ratio %5.1fx%s", n, k * 1000, k / n * 1e6, m * 1000, m / n * 1e6,
    k / m, n == 10000 and ("  (target >= 2x: " .. (k / m >= 2 and "holds" or "DOES NOT HOLD")
    .. ")") or ""))
end
