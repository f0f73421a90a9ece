-- bench/jobs.lua: `mountns run -j 2` against `-j 1` (issue 15: -j 2 on 2
-- cores >= 1.7x the throughput of -j 1 on the examples x 50). Each round
-- runs bin/mountns over the examples repeated N times, once with -j 1 and
-- once with -j 2, in an order that changes with the round, so a load that
-- comes and goes weighs on both alike; prints the median wall time of each
-- and the throughput ratio. With OTHER (another source tree, e.g. main's
-- worktree), its bin/mountns runs in the same rounds on the same files, so
-- the ratios of the two trees are measured under the same load. The C
-- floor runs in the same rounds: the kernel's part of as many files,
-- 1 and JOBS at once (bench/scenario_floor.c `files`: each file a process
-- with a private copy of the caller's namespace that runs the article's
-- scenario in a child), fork + unshare + exit alone (`pairs`), and mount +
-- umount of a tmpfs (`umount`, 20 a file): what the kernel lets 2 at once
-- gain. The runner gives every file a private
-- mount namespace of its own: nothing here touches the caller's.
--   lua5.4 bench/jobs.lua [N (default 50)] [rounds (default 5)] [jobs (default 2)] [OTHER]

local N = tonumber(arg and arg[1]) or 50
local ROUNDS = tonumber(arg and arg[2]) or 5
local JOBS = tonumber(arg and arg[3]) or 2
local OTHER = arg and arg[4]
local dir = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench"
local bench = dofile(dir .. "/lib.lua")
local floor = bench.floor(dir)

local examples = {}
local p = assert(io.popen("ls examples/*.lua"))
for f in p:lines() do examples[#examples + 1] = f end
p:close()
local files = {}
for _ = 1, N do
  for _, f in ipairs(examples) do files[#files + 1] = f end
end
local list = table.concat(files, " ")
local lua = arg and arg[-1] or "lua5.4"

-- bin/mountns of `tree` (it loads that tree's modules) with -j j
local function run(tree, j)
  local t, ok = bench.timed(1, os.execute,
    lua .. " " .. tree .. "/bin/mountns run -j " .. j .. " " .. list .. " >/dev/null")
  assert(ok == true or ok == 0, tree .. "/bin/mountns run -j " .. j .. " failed")
  return t
end

local trees = { { name = "this tree", dir = "." } }
if OTHER then trees[2] = { name = OTHER, dir = OTHER } end
local list_of = {}
for _, tree in ipairs(trees) do
  for _, j in ipairs { 1, JOBS } do
    list_of[#list_of + 1] = { key = tree.dir .. " " .. j,
                              run = function() return run(tree.dir, j) end }
  end
end
-- the C floor's wall seconds for as many files (or pairs), j at once
local function floor_run(mode, j)
  local n = mode == "umount" and 20 * #files or #files
  local f = assert(io.popen(floor .. " " .. mode .. " " .. n .. " " .. j))
  local out = f:read("*a")
  assert(f:close(), "bench/scenario_floor " .. mode .. " failed")
  return assert(tonumber(out:match("^(%S+)")))
end
local FLOORS = { "files", "pairs", "umount" }
for _, mode in ipairs(FLOORS) do
  for _, j in ipairs { 1, JOBS } do
    list_of[#list_of + 1] = { key = mode .. " " .. j,
                              run = function() return floor_run(mode, j) end }
  end
end
-- rounds rotate the order (bench.round)
local times = bench.rounds(ROUNDS, list_of, true)
print(string.format("mountns run: %d files (%d examples x %d), %d rounds, %d online CPUs, "
  .. "loadavg %s", #files, #examples, N, ROUNDS, require("mountns.runner").cpus(), bench.loadavg()))
for _, tree in ipairs(trees) do
  local t1 = bench.median(times[tree.dir .. " 1"])
  local tj = bench.median(times[tree.dir .. " " .. JOBS])
  print(string.format("%s:", tree.name))
  print(string.format("  -j 1: median %.2f s (%.1f files/s)", t1, #files / t1))
  print(string.format("  -j %d: median %.2f s (%.1f files/s)", JOBS, tj, #files / tj))
  print(string.format("  throughput -j %d / -j 1: %.2fx (target >= 1.7x on 2 cores)",
    JOBS, t1 / tj))
end
local FLOOR_NAMES = { files = "files (article scenario each)", pairs = "fork + unshare + exit",
                      umount = "mount + umount (20 a file)" }
for _, mode in ipairs(FLOORS) do
  local t1, tj = bench.median(times[mode .. " 1"]), bench.median(times[mode .. " " .. JOBS])
  print(string.format("C floor, %s: -j 1 %.3f s, -j %d %.3f s: %.2fx", FLOOR_NAMES[mode],
    t1, JOBS, tj, t1 / tj))
end
