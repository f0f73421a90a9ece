-- bench/scenario_cost.lua: what an empty scenario costs as a function of
-- the caller (issue 15): its mount table (20 mounts against 10,000) and
-- its Lua heap (empty against 256 MB of 1 KB strings, 256 strings of 1 MiB,
-- 2 M strings of 100 bytes: issue 28). Each caller is a worker process
-- forked from here that first unshares a private mount namespace (the
-- 10,000 tmpfs mounts are made there, never on the host) and then runs
-- rounds of empty scenarios when asked; the workers' rounds alternate, so
-- a load that comes and goes weighs on each alike. Prints the median time
-- of one scenario per worker and its ratio to the baseline worker (20
-- mounts, empty heap) in the same round, the median of the rounds. The
-- forked workers build their heap after `require "mountns"`, so mountns
-- backs it with transparent huge pages (csrc/heap.c). The other workers
-- are the same program started again (exec): with that turned off
-- (MOUNTNS_HUGE_PAGES=0: the heap in 4 KB pages), and with glibc's malloc
-- told to back its heap with huge pages instead
-- (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, glibc 2.35+), an empty heap and
-- 256 MB each: fork copies one page-table entry per 2 MB instead of one
-- per 4 KB. The load average is printed before and after.
--   lua5.4 bench/scenario_cost.lua [rounds] [scenarios a round]
local mountns = require "mountns"
local core = require "mountns.core"
local child = require "mountns.child"
local isolate = require "mountns.isolate"
local bench = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench") .. "/lib.lua")

local WORKER = arg and arg[1] == "--worker" -- started again: heap, runs follow
local ROUNDS = tonumber(arg and arg[1]) or 9
local RUNS = tonumber(arg and arg[WORKER and 3 or 2]) or 20
local OFF = "MOUNTNS_HUGE_PAGES=0"
local GLIBC = "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"
local HOST = 0
for _ in io.lines("/proc/self/mountinfo") do HOST = HOST + 1 end

-- The caller's heaps, each about 256 MB of Lua strings built after
-- `require "mountns"`: "1k", 256 K strings of 1 KB (issue 15); "1m", 256
-- strings of 1 MiB (file contents, logs, JSON documents: issue 28), blocks
-- glibc would map each on its own; "100b", 2 M strings of 100 bytes
-- (issue 28), the most objects.
local HEAPS = {
  ["1k"] = function(i) return string.rep(string.format("%07d", i), 128) end, -- 256 K
  ["1m"] = function(i) return string.rep(string.format("%07d\n", i), 131072) end, -- 256
  -- (the digits all along it: Lua 5.1 hashes every 4th byte of a string)
  ["100b"] = function(i) return string.format("%07d", i):rep(14) .. "\n\n" end, -- 2 M
}
local COUNT = { ["1k"] = 256 * 1024, ["1m"] = 256, ["100b"] = 2 * 1024 * 1024 }

local WORKERS = {
  { name = string.format("%d caller mounts (baseline)", HOST), mounts = 0 },
  { name = string.format("%d caller mounts", HOST + 10000), mounts = 10000 },
  { name = "256 MB caller Lua heap", mounts = 0, heap = "1k" },
  { name = "256 x 1 MiB strings", mounts = 0, heap = "1m" },
  { name = "2 M x 100 B strings", mounts = 0, heap = "100b" },
  { name = "empty heap, HUGE_PAGES=0", mounts = 0, exec = { OFF } },
  { name = "256 MB heap, HUGE_PAGES=0", mounts = 0, heap = "1k", exec = { OFF } },
  { name = "256 x 1 MiB, HUGE_PAGES=0", mounts = 0, heap = "1m", exec = { OFF } },
  { name = "2 M x 100 B, HUGE_PAGES=0", mounts = 0, heap = "100b", exec = { OFF } },
  { name = "empty heap, malloc.hugetlb=1", mounts = 0, exec = { OFF, GLIBC } },
  { name = "256 MB heap, malloc.hugetlb=1", mounts = 0, heap = "1k", exec = { OFF, GLIBC } },
}

local function empty() end

-- The worker: its own namespace, its mounts and heap, then a round of
-- RUNS scenarios per "r" read from cmd; the round's seconds go to res.
local function worker(w, cmd_r, res_w)
  isolate.private_namespace()
  if w.mounts > 0 then
    assert(core.mount("bench", "/mnt", "tmpfs", nil, "mode=0755"))
    for i = 1, w.mounts do
      local p = "/mnt/" .. i
      assert(core.mkdir(p))
      assert(core.mount("m" .. i, p, "tmpfs", nil, "size=4k"))
    end
  end
  local heap, make = {}, HEAPS[w.heap]
  for i = 1, make and COUNT[w.heap] or 0 do heap[i] = make(i) end
  mountns.scenario(empty) -- the first one makes the template
  while true do
    local cmd = core.read_exact(cmd_r, 1)
    if cmd ~= "r" then break end
    local t0 = core.clock()
    for _ = 1, RUNS do mountns.scenario(empty) end
    assert(child.send(res_w, "o", tostring(core.clock() - t0)))
  end
  return #heap > -1 and 0 or 1
end

-- started again as a worker (exec): its commands on stdin, results on stdout
if WORKER then
  os.exit(worker({ mounts = 0, heap = HEAPS[arg[2]] and arg[2] }, 0, 1))
end

-- a worker started again with w.exec in its environment: its stdin and
-- stdout are the pipes
local function exec_worker(w, cmd_r, res_w)
  assert(core.dup2(cmd_r, 0)); assert(core.dup2(res_w, 1))
  local argv = { "env" }
  for _, v in ipairs(w.exec) do argv[#argv + 1] = v end
  for _, v in ipairs { arg[-1], arg[0], "--worker", tostring(w.heap or "none"), tostring(RUNS) } do
    argv[#argv + 1] = v
  end
  local _, err = core.execvp(argv)
  error(err)
end

local LOAD0 = bench.loadavg()
for _, w in ipairs(WORKERS) do
  local cmd_r, cmd_w = assert(core.pipe())
  local res_r, res_w = assert(core.pipe())
  w.pid = assert(child.fork(w.exec and exec_worker or worker, w, cmd_r, res_w))
  core.close_fd(cmd_r); core.close_fd(res_w)
  w.cmd, w.res, w.times = cmd_w, res_r, {}
end

for _ = 1, ROUNDS do
  for _, w in ipairs(WORKERS) do
    assert(core.write_fd(w.cmd, "r"))
    local kind, body = child.receive(w.res, 600)
    assert(kind == "o", "worker failed: " .. tostring(body))
    w.times[#w.times + 1] = tonumber(body) / RUNS * 1000
  end
end
for _, w in ipairs(WORKERS) do
  -- "q", not EOF: the workers forked later hold copies of this pipe
  assert(core.write_fd(w.cmd, "q"))
  core.close_fd(w.cmd); core.close_fd(w.res)
  core.waitpid(w.pid)
  w.median = bench.median(w.times)
end

-- a ratio is taken inside a round (both workers ran in it, back to back)
-- and the median of the rounds' ratios is printed
local function ratio(a, b)
  local r = {}
  for i = 1, ROUNDS do r[i] = a.times[i] / b.times[i] end
  return bench.median(r)
end
local W = {}
for _, w in ipairs(WORKERS) do W[w.name] = w end
local base = WORKERS[1]
print(string.format("empty scenario, median of %d rounds of %d, one scenario "
  .. "(ratio: to the baseline in the same round, median of the rounds); "
  .. "load %s before, %s after:", ROUNDS, RUNS, LOAD0, bench.loadavg()))
for _, w in ipairs(WORKERS) do
  print(string.format("  %-34s %8.3f ms  %6.2fx", w.name, w.median, ratio(w, base)))
end
local function holds(w, target)
  return string.format("%.2fx <= %.1fx %s", ratio(w, base), target,
    ratio(w, base) <= target and "holds" or "DOES NOT HOLD")
end
print("targets: 10,000 mounts " .. holds(WORKERS[2], 1.5)
  .. "; 256 MB heap " .. holds(W["256 MB caller Lua heap"], 1.5)
  .. "; 256 x 1 MiB " .. holds(W["256 x 1 MiB strings"], 2)
  .. "; 2 M x 100 B " .. holds(W["2 M x 100 B strings"], 2))
local off = W["empty heap, HUGE_PAGES=0"]
print(string.format("in 4 KB pages (HUGE_PAGES=0), each against its own empty heap: "
  .. "256 MB %.2fx, 256 x 1 MiB %.2fx, 2 M x 100 B %.2fx; malloc.hugetlb=1: 256 MB %.2fx",
  ratio(W["256 MB heap, HUGE_PAGES=0"], off), ratio(W["256 x 1 MiB, HUGE_PAGES=0"], off),
  ratio(W["2 M x 100 B, HUGE_PAGES=0"], off),
  ratio(W["256 MB heap, malloc.hugetlb=1"], W["empty heap, malloc.hugetlb=1"])))
