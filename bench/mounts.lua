-- bench/mounts.lua: the speed targets of issue 5, measured in isolated
-- namespaces holding 1,000 and 10,000 tmpfs/bind mounts, and in a slave
-- namespace whose 1,000 mounts are slaves of one 1,000-member peer group.
-- Prints medians and ratios against baselines measured in the same run, as
-- a Markdown table (bench/RESULTS.md's table keeps the latest figures).
-- `make bench` runs it.
local mountns = require "mountns"
local core = require "mountns.core"
local bench = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench") .. "/lib.lua")

local SIZES = { 1000, 10000 }
-- lua5.4 bench/mounts.lua [CORE]: CORE, another build's core.so, has its
-- listmount{stat = true} (what mounts() calls) timed in the same rounds
local OTHER = arg and arg[1] and assert(package.loadlib(arg[1], "luaopen_mountns_core"))()

-- median wall time of f() in milliseconds over n runs (one warm-up)
local function median(n, f)
  return bench.median(bench.sample(n, f)) * 1000
end

-- Medians (ms) of several functions measured in turn, round after round
-- (bench.rounds), so a load that comes and goes on the machine weighs on
-- each of them alike. Each call starts after a full garbage collection
-- (outside the timing), as in bench/model.lua: the tables the parsers
-- leave behind (10,000 records each) are not collected during the next
-- contender's call, whichever allocates most.
local function medians(n, fs)
  local list = {}
  for k, f in pairs(fs) do
    f()
    list[#list + 1] = { key = k, run = function()
      collectgarbage()
      return (bench.timed(1, f))
    end }
  end
  local out = {}
  for k, t in pairs(bench.rounds(n, list)) do out[k] = bench.median(t) * 1000 end
  return out
end

-- A plain-Lua mountinfo parser, the baseline of target 1: records of the
-- same shape as mountns.mountinfo()'s, with gmatch and string.match only.
local function unescape(s)
  return (s:gsub("\\(%d%d%d)", function(o) return string.char(tonumber(o, 8)) end))
end

local function lua_parse(text)
  local out = {}
  for line in text:gmatch("[^\n]+") do
    local id, parent, maj, min, root, target, opts, rest =
      line:match("^(%d+) (%d+) (%d+):(%d+) (%S+) (%S+) (%S+) (.*)$")
    local optional, fstype, source, super = rest:match("^(.-) ?%- (%S+) (%S+) (%S+)$")
    local r = { id = tonumber(id), parent_id = tonumber(parent), major = tonumber(maj),
      minor = tonumber(min), root = unescape(root), target = unescape(target),
      options = opts, fstype = fstype, source = unescape(source), super_options = super,
      unbindable = false }
    for k, v in optional:gmatch("(%a[%a_]*):?(%d*)") do
      if k == "unbindable" then r.unbindable = true else r[k] = tonumber(v) end
    end
    r.propagation = r.unbindable and "unbindable"
      or (r.shared and r.master and "shared,slave") or (r.shared and "shared")
      or (r.master and "slave") or "private"
    out[#out + 1] = r
  end
  return out
end


-- one table size: every measurement of targets 1, 2, 3 and 5
local function run_size(n)
  bench.populate(n)
  local r = { n = #mountns.mountinfo() }
  local reps = n >= 10000 and 31 or 101
  local m = medians(reps, {
    raw = function() core.read_mountinfo() end,
    mounts = function() mountns.mounts() end,
    mounts_from = function() mountns.mounts { propagate_from = true } end,
    libmount = function() mountns.mountinfo() end,
    gmatch = function() lua_parse(core.read_mountinfo()) end,
    listmount_ids = function() mountns.listmount() end,
    other = OTHER and function() mountns.table.new(OTHER.listmount { stat = true }) end or nil,
  })
  for k, v in pairs(m) do r[k] = v end
  local t = mountns.mounts()
  r.tostring = median(n >= 10000 and 11 or 51, function() return tostring(t) end)
  r.findmnt = median(3, function() assert(os.execute("findmnt >/dev/null")) end)
  local one = "/tmp/b/m/" .. math.floor(n / 2)
  r.statmount_one = median(1001, function() mountns.statmount(one) end)
  -- memory of one table: the Lua heap it keeps alive
  t = nil -- luacheck: ignore
  collectgarbage("collect"); collectgarbage("collect")
  local before = collectgarbage("count")
  local keep = mountns.mounts()
  collectgarbage("collect"); collectgarbage("collect")
  r.mem_mb = (collectgarbage("count") - before) / 1024
  if OTHER then
    keep = nil -- luacheck: ignore
    collectgarbage("collect"); collectgarbage("collect")
    before = collectgarbage("count")
    keep = OTHER.listmount { stat = true }
    collectgarbage("collect"); collectgarbage("collect")
    r.mem_other = (collectgarbage("count") - before) / 1024
  end
  r.rows = #keep
  r.path = require("mountns.mounts").path()
  return r
end

-- target 4: 1,000 mounts that are slaves of one 1,000-member peer group
local function run_slave(n)
  assert(mountns.mount("tmpfs", "/tmp", "tmpfs"))
  assert(mountns.mkdir("/tmp/b/s", { parents = true }))
  assert(mountns.mkdir("/tmp/b/p"))
  assert(mountns.mount("s", "/tmp/b/s", "tmpfs"))
  assert(mountns.make_shared("/tmp/b/s"))
  for i = 2, n do
    local d = "/tmp/b/p/" .. i
    assert(mountns.mkdir(d))
    assert(mountns.bind("/tmp/b/s", d))
  end
  local r = {}
  r.raw_shared = median(51, function() core.read_mountinfo() end)
  local shared_ns = assert(mountns.namespace())   -- keeps the peers alive
  assert(mountns.unshare { mount = true, propagation = "slave" })
  local t = mountns.mountinfo()
  local slaves = 0
  for _, m in ipairs(t) do
    if m.master and m.target:match("^/tmp/b/") then slaves = slaves + 1 end
  end
  r.slaves = slaves
  local m = medians(51, {
    raw_slave = function() core.read_mountinfo() end,
    parse = function() mountns.parse_mountinfo(core.read_mountinfo()) end,
    mounts = function() mountns.mounts() end,
    mounts_from = function() mountns.mounts { propagate_from = true } end,
  })
  for k, v in pairs(m) do r[k] = v end
  shared_ns:close()
  return r
end

local function sh(cmd)
  local p = io.popen(cmd)
  local s = p:read("*a"); p:close()
  return (s:gsub("%s+$", ""))
end

local function machine()
  return string.format("%s; %s x %s; %s MB RAM", sh("uname -srm"), sh("nproc"),
    sh("sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1"),
    sh("awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo"))
end

local results = {}
for _, n in ipairs(SIZES) do
  results[n] = mountns.isolate_with({ timeout = 900 }, run_size, n)
end
local slave = mountns.isolate_with({ timeout = 300 }, run_slave, 1000)

local a, b = results[SIZES[1]], results[SIZES[2]]
local function row(name, key, unit)
  print(string.format("| %-50s | %12.3f | %12.3f | %s |", name, a[key], b[key],
    unit or "ms"))
end
local function ratio(name, x, y, fmt)
  print(string.format("| %-50s | %12" .. (fmt or ".2f") .. " | %12" .. (fmt or ".2f")
    .. " | ratio |", name, x(a) / y(a), x(b) / y(b)))
end

print(string.format("mountns bench, %s: %s, %s, mounts() path: %s",
  os.date("!%Y-%m-%d %H:%M UTC"), machine(), _VERSION, b.path))
print()
print(string.format("| %-50s | %12s | %12s | unit |", "median", a.n .. " mounts",
  b.n .. " mounts"))
print("|" .. string.rep("-", 52) .. "|" .. string.rep("-", 14) .. "|"
  .. string.rep("-", 14) .. "|------|")
row("raw read of mountinfo into a C buffer (floor)", "raw")
row("mountns.mounts()", "mounts")
row("mountns.mounts{propagate_from = true}", "mounts_from")
row("mountns.mountinfo() (libmount)", "libmount")
row("plain-Lua gmatch parser (read + parse)", "gmatch")
row("listmount() IDs only", "listmount_ids")
if OTHER then row("mounts() with CORE (" .. arg[1]:sub(-40) .. ")", "other") end
row("tostring(table) (tree)", "tostring")
row("findmnt (default tree) on the same table", "findmnt")
row("statmount(path) of one mount", "statmount_one")
row("memory of the mounts() table", "mem_mb", "MB")
if OTHER then row("memory of CORE's table", "mem_other", "MB") end
ratio("mounts() / raw read (target 1: <= 2)", function(r) return r.mounts end,
  function(r) return r.raw end)
if OTHER then
  ratio("mounts() with CORE / raw read", function(r) return r.other end,
    function(r) return r.raw end)
end
ratio("gmatch / mounts() (target 1: >= 1.5)", function(r) return r.gmatch end,
  function(r) return r.mounts end)
ratio("libmount / raw read", function(r) return r.libmount end, function(r) return r.raw end)
ratio("gmatch / raw read", function(r) return r.gmatch end, function(r) return r.raw end)
ratio("findmnt / tostring (target 2: >= 50)", function(r) return r.findmnt end,
  function(r) return r.tostring end, ".1f")
ratio("mounts() / statmount one (target 3: >= 100)", function(r) return r.mounts end,
  function(r) return r.statmount_one end, ".0f")
print(string.format("| %-50s | %12s | %12.2f | ratio |",
  "tostring growth 10x mounts (linear: ~10)", "", b.tostring / a.tostring))
print(string.format("| %-50s | %12s | %12.2f | ratio |",
  "findmnt growth 10x mounts (quadratic: ~100)", "", b.findmnt / a.findmnt))
print()
print(string.format("slave namespace: %d mounts, slaves of one %d-member peer group",
  slave.slaves, 1000))
print()
print("| median | ms |")
print("|---|---|")
print(string.format("| raw read, shared namespace (before unshare) | %.3f |", slave.raw_shared))
print(string.format("| raw read, slave namespace | %.3f |", slave.raw_slave))
print(string.format("| parse_mountinfo(read_mountinfo()) | %.3f |", slave.parse))
print(string.format("| mountns.mounts() | %.3f |", slave.mounts))
print(string.format("| mountns.mounts{propagate_from = true} | %.3f |", slave.mounts_from))
print(string.format("| parse / mounts() (target 4: >= 3) | %.2f |", slave.parse / slave.mounts))
print()
local targets = {
  { "1 mounts() <= 2x raw read", a.mounts / a.raw <= 2 and b.mounts / b.raw <= 2 },
  { "1 mounts() >= 1.5x faster than gmatch",
    a.gmatch / a.mounts >= 1.5 and b.gmatch / b.mounts >= 1.5 },
  { "2 tostring >= 50x faster than findmnt (10k)", b.findmnt / b.tostring >= 50 },
  { "3 statmount one >= 100x faster than the table (10k)", b.mounts / b.statmount_one >= 100 },
  { "4 slave ns: mounts() >= 3x faster than parse", slave.parse / slave.mounts >= 3 },
  { "5 10,000-mount table < 10 MB", b.mem_mb < 10 },
}
for _, t in ipairs(targets) do
  print(string.format("target %-50s %s", t[1], t[2] and "holds" or "DOES NOT HOLD"))
end
