-- Benchmark (issues 3 and 15): what a scenario costs against its floors,
-- all measured in this one run, in interleaved rounds (each round runs
-- every contender once, so a load that comes and goes weighs on each
-- alike; each ratio is taken within a round, and the median of the
-- rounds' ratios is printed):
--   * the seed article's scenario with mountns, against bench/scenario_floor
--     (a C program doing the same kernel steps: fork, a copy of a template
--     namespace, a tmpfs root, the mounts, mountinfo of both namespaces)
--     and against bench/article.sh (unshare, mount, nsenter, findmnt);
--   * a user-namespace scenario (an agent: a process in a new user
--     namespace doing the container's mounts, a slave check, the lock
--     probe) against the C program doing the same;
--   * one agent call (ns:exists through the agent) against a direct one
--     (ns:exists in the scenario's process) and against the C floor of
--     both (a one-byte pipe round trip to a process that calls access(2),
--     and access(2) itself);
--   * expect.locked (a throw-away copy of the namespace, by the agent);
--   * the bound under every scenario: fork + _exit + waitpid of this Lua
--     process (mountns loaded, as a scenario's caller) against the same
--     of the C program (`scenario_floor fork`), nothing done in the child;
--     and of the C program with this process's shared libraries mapped
--     too (LD_PRELOAD), those of the interpreter alone (lua5.4: readline,
--     libm; mapped before the first fork) and all (with mountns's libmount
--     chain, which core.fork loads first): what the mappings cost, apart
--     from the Lua state's own memory.
-- Everything runs inside private mount namespaces (the C program makes its
-- own first). Builds build/scenario_floor with cc when it is missing or
-- older than its source.
--   lua5.4 bench/scenario.lua [rounds (default 15)] [scenarios a round (default 20)]
-- With BEFORE=dir (another checkout of mountns, built: dir/lua, dir/build),
-- each round also runs the article in two child processes, one on dir's
-- modules and core.so and one on this tree's, and prints this tree's time
-- over dir's: a change measured against its base in the same run.
--   BEFORE=/work/main lua5.4 bench/scenario.lua
-- (`lua5.4 bench/scenario.lua --article N`: the seconds of one of N article
-- scenarios on the modules LUA_PATH and LUA_CPATH name; what those child
-- processes run.)
local mountns = require "mountns"
local core = require "mountns.core"
local expect = require "mountns.expect"
local bench = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench") .. "/lib.lua")

if arg and arg[1] == "--article" then
  mountns.scenario(bench.article) -- warm-up: the template namespace, the pages
  print(string.format("%.9f", (bench.timed(tonumber(arg[2]) or 20, mountns.scenario,
    bench.article))))
  return
end

local ROUNDS = tonumber(arg and arg[1]) or 15
local RUNS = tonumber(arg and arg[2]) or 20
local SHELL_RUNS = math.max(1, math.floor(RUNS / 4)) -- the shell is ~50x slower
local CALLS, LOCKS = 2000, 20
local FORKS = RUNS * 5 -- fork + _exit + waitpid a round
local dir = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench"
local floor = bench.floor(dir) -- built when missing or older than its source

local function sh(cmd)
  local ok = os.execute(cmd)
  return ok == true or ok == 0
end

local article = bench.article

-- a container in its own user namespace: its mounts are the agent's
local function userns(sh1)
  sh1:mkdir("/X"); sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
  local c = sh1:unshare { propagation = "unchanged", user = true }
  c:mkdir("/X/c"); c:mount("c", "/X/c", "tmpfs")
  expect.propagation(c, "/X", "slave")
  expect.mounted(c, "/X/c")
  expect.locked(c, "/X")
end

-- seconds of one agent call, one direct call, one expect.locked
local function calls(sh1)
  sh1:mkdir("/X"); sh1:mount("sda3", "/X", "tmpfs")
  local c = sh1:unshare { user = true }
  local t0 = core.clock()
  for _ = 1, CALLS do c:exists("/") end
  local agent = (core.clock() - t0) / CALLS
  t0 = core.clock()
  for _ = 1, CALLS do sh1:exists("/") end
  local direct = (core.clock() - t0) / CALLS
  t0 = core.clock()
  for _ = 1, LOCKS do expect.locked(c, "/X") end
  return agent, direct, (core.clock() - t0) / LOCKS
end

local function floor_run(mode, n, env)
  local p = assert(io.popen((env or "") .. floor .. " " .. mode .. " " .. n))
  local out = p:read("*a")
  assert(p:close(), "bench/scenario_floor " .. mode .. " failed")
  local a, b = out:match("^(%S+)%s*(%S*)")
  return tonumber(a), tonumber(b)
end

-- the article on the tree at `tree` (its lua/ and build/), in a child
-- process: seconds a scenario
local function tree_run(tree, n)
  local cmd = string.format("LUA_PATH='%s/lua/?.lua;%s/lua/?/init.lua;;' "
    .. "LUA_CPATH='%s/build/?.so;;' lua5.4 %s/scenario.lua --article %d",
    tree, tree, tree, dir, n)
  local p = assert(io.popen(cmd))
  local out = p:read("*a")
  assert(p:close(), "bench/scenario.lua --article failed on " .. tree)
  return assert(tonumber(out), "bench/scenario.lua --article: " .. out)
end

-- LD_PRELOAD=... of the shared libraries this process maps (not core.so,
-- which needs Lua's symbols, nor the dynamic loader, which the C program
-- maps already and which crashes preloaded), read once the warm-up has
-- loaded libmount
local function our_libraries()
  local seen, list = {}, {}
  for line in io.lines("/proc/self/maps") do
    local path = line:match("%s(/%S+%.so[%.%d]*)$")
    if path and not seen[path] and not path:find("/mountns/", 1, true)
       and not path:find("/ld%-linux[^/]*$") then
      seen[path] = true
      list[#list + 1] = path
    end
  end
  return "LD_PRELOAD='" .. table.concat(list, " ") .. "' ", #list
end
local lua_preload, lua_libraries = our_libraries() -- before any fork
local preload, n_libraries

-- seconds of one fork + _exit + waitpid of this process
local function forks(n)
  local t0 = core.clock()
  for _ = 1, n do
    local pid = assert(core.fork())
    if pid == 0 then core._exit(0) end
    local how, status = core.waitpid(pid)
    assert(how == "exited" and status == 0, "the forked child failed")
  end
  return (core.clock() - t0) / n
end

local BEFORE = os.getenv("BEFORE")

local CONTENDERS = {
  { key = "lua_article", name = "mountns: article scenario",
    run = function() return (bench.timed(RUNS, mountns.scenario, article)) end },
  { key = "c_article", name = "C floor: article scenario",
    run = function() return floor_run("article", RUNS) end },
  { key = "sh_article", name = "shell: bench/article.sh",
    run = function()
      return (bench.timed(SHELL_RUNS, function()
        assert(sh("sh " .. dir .. "/article.sh"), "bench/article.sh failed")
      end))
    end },
  { key = "lua_userns", name = "mountns: user-namespace scenario",
    run = function() return (bench.timed(RUNS, mountns.scenario, userns)) end },
  { key = "c_userns", name = "C floor: user-namespace scenario",
    run = function() return floor_run("userns", RUNS) end },
  { key = "lua_fork", name = "mountns: fork + _exit + waitpid (this process)",
    run = function() return forks(FORKS) end },
  { key = "c_fork", name = "C floor: fork + _exit + waitpid",
    run = function() return floor_run("fork", FORKS) end },
  { key = "c_fork_lualibs", name = "C floor, the interpreter's libraries: fork ...",
    run = function() return floor_run("fork", FORKS, lua_preload) end },
  { key = "c_fork_libs", name = "C floor, this process's libraries: fork ...",
    run = function() return floor_run("fork", FORKS, preload) end },
}

if BEFORE and BEFORE ~= "" then
  CONTENDERS[#CONTENDERS + 1] = { key = "before_article",
    name = "mountns, BEFORE's tree (child process)",
    run = function() return tree_run(BEFORE, RUNS) end }
  CONTENDERS[#CONTENDERS + 1] = { key = "after_article",
    name = "mountns, this tree (child process)",
    run = function() return tree_run(dir .. "/..", RUNS) end }
end

local times, ratios = {}, {}
local CALL_KEYS = { "lua_agent", "lua_direct", "lua_locked", "c_agent", "c_direct" }
for _, k in ipairs(CALL_KEYS) do times[k] = {} end
for _, c in ipairs(CONTENDERS) do times[c.key] = {} end
local RATIOS = {
  { "article: mountns / C floor (target <= 1.3)", "lua_article", "c_article" },
  { "article: shell / mountns (target >= 75)", "sh_article", "lua_article" },
  { "article: shell / C floor", "sh_article", "c_article" },
  { "user namespace: mountns / C floor (target <= 1.5)", "lua_userns", "c_userns" },
  { "agent call / direct call (mountns; target <= 2)", "lua_agent", "lua_direct" },
  { "agent call: mountns / C floor (a pipe round trip)", "lua_agent", "c_agent" },
  { "direct call: mountns / C access(2)", "lua_direct", "c_direct" },
  { "fork + _exit + waitpid: this Lua process / C", "lua_fork", "c_fork" },
  { "fork ...: C with the interpreter's libraries / C", "c_fork_lualibs", "c_fork" },
  { "fork ...: C with all / the interpreter's libraries", "c_fork_libs", "c_fork_lualibs" },
  { "fork ...: this Lua process / C with its libraries", "lua_fork", "c_fork_libs" },
}
if BEFORE and BEFORE ~= "" then
  RATIOS[#RATIOS + 1] = { "article: this tree / BEFORE's (child processes)", "after_article",
                          "before_article" }
  RATIOS[#RATIOS + 1] = { "article: BEFORE's tree / C floor", "before_article", "c_article" }
  RATIOS[#RATIOS + 1] = { "article: this tree (child process) / C floor", "after_article",
                          "c_article" }
end
for _, r in ipairs(RATIOS) do ratios[r[1]] = {} end

-- warm-up: the template namespace, the modules, the C binary's pages
mountns.scenario(article); mountns.scenario(userns); floor_run("article", 1)
preload, n_libraries = our_libraries()

for round = 1, ROUNDS do
  -- the order alternates, so neither side always runs after the other
  local this = bench.round(CONTENDERS, round)
  this.lua_agent, this.lua_direct, this.lua_locked = mountns.scenario(calls)
  this.c_agent, this.c_direct = floor_run("call", CALLS)
  for k, v in pairs(this) do times[k][#times[k] + 1] = v end
  for _, r in ipairs(RATIOS) do
    local list = ratios[r[1]]
    list[#list + 1] = this[r[2]] / this[r[3]]
  end
end

local load = bench.loadavg()
print(string.format("scenario bench: %d rounds (%d scenarios, %d shell runs, %d calls, "
  .. "%d expect.locked, %d forks a round; %d libraries mapped, %d of them the interpreter's), "
  .. "loadavg %s", ROUNDS, RUNS, SHELL_RUNS, CALLS, LOCKS, FORKS, n_libraries, lua_libraries,
  load))
print("median of the rounds:")
for _, c in ipairs(CONTENDERS) do
  print(string.format("  %-46s %9.3f ms", c.name, bench.median(times[c.key]) * 1e3))
end
local NAMES = { lua_agent = "mountns: agent call (ns:exists)",
                lua_direct = "mountns: direct call (ns:exists)",
                lua_locked = "mountns: expect.locked",
                c_agent = "C floor: agent call (pipe round trip)",
                c_direct = "C floor: access(2)" }
for _, k in ipairs(CALL_KEYS) do
  local v = bench.median(times[k])
  if k == "lua_locked" then
    print(string.format("  %-46s %9.3f ms", NAMES[k], v * 1e3))
  else
    print(string.format("  %-46s %9.2f us", NAMES[k], v * 1e6))
  end
end
print("ratios (median of the rounds' ratios):")
for _, r in ipairs(RATIOS) do
  print(string.format("  %-52s %7.2fx", r[1], bench.median(ratios[r[1]])))
end
