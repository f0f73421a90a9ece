-- bench/lib.lua: what the benchmarks under bench/ share (not part of the
-- installed module): interleaved rounds, medians, timing loops, the load
-- average, the seed article's scenario and a namespace of n mounts. A
-- bench script loads it from beside itself:
--   local bench = dofile((arg[0]:match("^(.*)/[^/]*$") or ".") .. "/lib.lua")
local mountns = require "mountns"
local core = require "mountns.core"
local expect = require "mountns.expect"

local M = {}

--- The median of a list of numbers (the list is left as it is).
function M.median(t)
  local c = {}
  for i, v in ipairs(t) do c[i] = v end
  table.sort(c)
  return c[math.floor((#c + 1) / 2)]
end

--- Seconds per call of fn(...) over n calls, and the last call's result.
function M.timed(n, fn, ...)
  local answer
  local t0 = core.clock()
  for _ = 1, n do answer = fn(...) end
  return (core.clock() - t0) / n, answer
end

--- The seconds of each of n calls of fn (after one call to warm up).
function M.sample(n, fn)
  fn()
  local t = {}
  for i = 1, n do t[i] = M.timed(1, fn) end
  return t
end

-- A contender's seconds for one round: its `run()` (which measures itself)
-- or one timed call of its `fn`.
local function once(c)
  if c.run then return c.run() end
  return (M.timed(1, c.fn))
end

--- One round of interleaved contenders: each runs once, in an order that
-- changes with the round (`rotate`: each round starts one further; else
-- forward in odd rounds, backward in even ones), so a load that comes and
-- goes weighs on each alike.
-- @tparam table list contenders `{key = k, run = function() return
-- seconds end}` or `{key = k, fn = function to time}`
-- @tparam int r the round's number (from 1)
-- @tparam[opt] boolean rotate
-- @treturn table key -> seconds
function M.round(list, r, rotate)
  local this, n = {}, #list
  for j = 1, n do
    local i
    if rotate then i = (r + j) % n + 1
    elseif r % 2 == 1 then i = j
    else i = n + 1 - j end
    this[list[i].key] = once(list[i])
  end
  return this
end

--- `rounds` interleaved rounds (`round`): key -> the list of its seconds.
function M.rounds(rounds, list, rotate)
  local times = {}
  for _, c in ipairs(list) do times[c.key] = {} end
  for r = 1, rounds do
    for k, v in pairs(M.round(list, r, rotate)) do times[k][r] = v end
  end
  return times
end

--- The C floor's binary (bench/scenario_floor.c), built with cc when it is
-- missing or older than its source. `dir`: the bench folder.
-- @treturn string its path
function M.floor(dir)
  local root = dir .. "/.."
  local floor = root .. "/build/scenario_floor"
  local function sh(cmd)
    local ok = os.execute(cmd)
    return ok == true or ok == 0
  end
  if not sh("test -x " .. floor .. " -a " .. floor .. " -nt " .. dir .. "/scenario_floor.c") then
    assert(sh("mkdir -p " .. root .. "/build && cc -O2 -Wall -o " .. floor .. " "
      .. dir .. "/scenario_floor.c"), "cc bench/scenario_floor.c failed")
  end
  return floor
end

--- The load average's first three fields ("0.52 0.61 0.70"), or "?".
function M.loadavg()
  local f = io.open("/proc/loadavg")
  local load = f and f:read("*l"):match("^(%S+ %S+ %S+)") or "?"
  if f then f:close() end
  return load
end

--- The seed article's scenario on sh1 (the first namespace): two shared
-- mounts, a copy of the namespace, a bind that does not reach it, checked.
function M.article(sh1)
  sh1:mkdir("/X"); sh1:mkdir("/Y"); sh1:mkdir("/Z")
  sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
  sh1:mount("sda5", "/Y", "tmpfs"); sh1:make_shared("/Y")
  local sh2 = sh1:unshare { propagation = "unchanged" }
  sh1:bind("/X", "/Z")
  expect.propagation(sh1, "/X", "shared")
  expect.peers({ sh1, "/X" }, { sh1, "/Z" }, { sh2, "/X" })
  expect.not_mounted(sh2, "/Z")
end

--- Inside an isolated child (never the caller's namespace): a tmpfs on
-- /tmp and n mounts under /tmp/b/m, half tmpfs, half binds of /tmp/b/m
-- (so the binds stack no deeper than one).
function M.populate(n)
  assert(mountns.mount("tmpfs", "/tmp", "tmpfs"))
  assert(mountns.mkdir("/tmp/b/m", { parents = true }))
  for i = 1, n do
    local d = "/tmp/b/m/" .. i
    assert(mountns.mkdir(d))
    if i % 2 == 0 then
      assert(mountns.mount("t" .. i, d, "tmpfs"))
    else
      assert(mountns.bind("/tmp/b/m", d))
    end
  end
end

return M
