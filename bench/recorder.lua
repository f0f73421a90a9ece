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
local expect = require "mountns.expect"
local namespace = require "mountns.namespace"

local CALLS = tonumber(arg and arg[1]) or 200000
local RUNS, ROUNDS = 20, 5

local function median(t)
  table.sort(t)
  return t[math.floor((#t + 1) / 2)]
end

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
  return (median(with) - median(without)) / CALLS
end)

local function article(sh1)
  sh1:mkdir("/X"); sh1:mkdir("/Y"); sh1:mkdir("/Z")
  sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
  sh1:mount("sda5", "/Y", "tmpfs"); sh1:make_shared("/Y")
  local sh2 = sh1:unshare { propagation = "unchanged" }
  sh1:bind("/X", "/Z")
  expect.propagation(sh1, "/X", "shared")
  expect.peers({ sh1, "/X" }, { sh1, "/Z" }, { sh2, "/X" })
  expect.not_mounted(sh2, "/Z")
  return #namespace.steps()
end

local steps = mountns.scenario(article)
local rounds = {}
for r = 1, ROUNDS do
  local t0 = core.clock()
  for _ = 1, RUNS do mountns.scenario(article) end
  rounds[r] = (core.clock() - t0) / RUNS
end
local scen = median(rounds)

print(string.format("one recorded step                %8.2f us  (median of %d rounds of %d calls)",
  per_step * 1e6, ROUNDS, CALLS))
print(string.format("article scenario                 %8.2f ms  (%d steps recorded)",
  scen * 1000, steps))
print(string.format("recorder's share of the scenario %8.4f %%  (%d steps x one step / scenario)",
  100 * steps * per_step / scen, steps))
