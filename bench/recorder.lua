-- bench/recorder.lua: what the step recorder (issue 13: every mutating
-- ns: call appends a step, for `mountns.explain` and `mountns run --both`)
-- costs. Inside one scenario, a loop of ns:label(name) (a method that does
-- nothing but record a step) against the same loop of ns:label() (a read:
-- no step), so the difference is one step's cost; then the seed article's
-- scenario (bench/scenario.lua's), its step count and its time, so the
-- recorder's share of a scenario is the product over the total.
--   lua5.4 bench/recorder.lua [calls]
local mountns = require "mountns"
local core = require "mountns.core"
local namespace = require "mountns.namespace"
local bench = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench") .. "/lib.lua")

local CALLS = tonumber(arg and arg[1]) or 200000
local RUNS, ROUNDS = 20, 5

local per_step = mountns.scenario(function(ns)
  local with, without = {}, {}
  local steps = namespace.steps()
  for r = 1, ROUNDS do
    local t0 = core.clock()
    for _ = 1, CALLS / 100 do
      for _ = 1, 100 do ns:label() end
      for i = #steps, 1, -1 do steps[i] = nil end
    end
    without[r] = core.clock() - t0
    t0 = core.clock()
    -- a hundred steps at a time, then dropped: a scenario's list is short
    for _ = 1, CALLS / 100 do
      for _ = 1, 100 do ns:label("sh1") end
      for i = #steps, 1, -1 do steps[i] = nil end
    end
    with[r] = core.clock() - t0
  end
  return (bench.median(with) - bench.median(without)) / CALLS
end)

local function article(sh1)
  bench.article(sh1)
  return #namespace.steps()
end

local steps = mountns.scenario(article)
local scen = bench.median(bench.rounds(ROUNDS, { { key = "article",
  run = function() return (bench.timed(RUNS, mountns.scenario, article)) end } }).article)

print(string.format("one recorded step                %8.2f us  (median of %d rounds of %d calls)",
  per_step * 1e6, ROUNDS, CALLS))
print(string.format("article scenario                 %8.2f ms  (%d steps recorded)",
  scen * 1000, steps))
print(string.format("recorder's share of the scenario %8.4f %%  (%d steps x one step / scenario)",
  100 * steps * per_step / scen, steps))
