-- bench/check.lua: `mountns check --random N --ops K` of this tree against
-- a base tree (issue 28, item 3: at most 0.8x the base's wall time, the
-- output byte-identical for the same seed). Both trees' bin/mountns run as
-- whole processes (`sh -c exec ...`) on the same seed, back to back, in
-- rounds that alternate which goes first, so a load that comes and goes
-- weighs on both alike. Prints each round's wall times and ratio, the
-- median of those ratios (the figure) and the ratio of the medians, the
-- load average before and after. Each run's output (its lines and the
-- scripts it wrote) is compared with the base's, the timing figures of
-- the summary line left out (the only bytes allowed to differ); a
-- difference stops the bench.
--   lua5.4 bench/check.lua [rounds 5] [N 400] [K 16] [BASE]
-- BASE: a built source tree of the code before; default: the commit in
-- $BASE_COMMIT (default cfaa127, main before issue 28) put into a
-- temporary directory with `git archive`, built with `make`, removed at
-- the end. Round r runs seed r on both trees.
local core = require "mountns.core"
local bench = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench") .. "/lib.lua")

local ROUNDS = tonumber(arg and arg[1]) or 5
local N = tonumber(arg and arg[2]) or 400
local K = tonumber(arg and arg[3]) or 16
local lua = arg and arg[-1] or "lua5.4"
local HERE = ((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench") .. "/.."

local function sh(cmd)
  local ok = os.execute(cmd)
  return ok == true or ok == 0
end

local BASE = arg and arg[4]
local built -- the base tree made here, removed at the end
if not BASE then
  local commit = os.getenv("BASE_COMMIT") or "cfaa127"
  BASE = os.tmpname()
  os.remove(BASE)
  assert(sh("mkdir -p " .. BASE .. " && git -C " .. HERE .. " archive " .. commit
    .. " | tar -x -C " .. BASE .. " && make -s -C " .. BASE .. " >/dev/null"),
    "could not build the base tree from " .. commit)
  print("base: " .. commit .. " built in " .. BASE)
  built = BASE
end

local OUT = os.tmpname()
os.remove(OUT)
assert(sh("mkdir -p " .. OUT))

-- One run of a tree's `check` for a seed: its wall time and its output
-- (stdout, the scripts it wrote), the summary line's timing cut off.
-- (both write into the same directory: the lines name the scripts' paths;
-- it is kept as OUT/base-SEED or OUT/this-SEED until the end)
local function run(tree, seed)
  local dir = OUT .. "/out"
  sh("rm -rf " .. dir .. " && mkdir -p " .. dir)
  local cmd = string.format("exec %s %s/bin/mountns check --random %d --ops %d --seed %d "
    .. "--out %s > %s/stdout 2>&1", lua, tree, N, K, seed, dir, dir)
  local t0 = core.clock()
  sh(cmd)
  local t = core.clock() - t0
  local p = io.popen("cd " .. dir .. " && for f in stdout $(ls check-*.lua 2>/dev/null); do "
    .. "echo \"== $f\"; cat $f; done")
  local text = p:read("*a")
  p:close()
  sh(string.format("rm -rf %s/%s-%d && mv %s %s/%s-%d", OUT, tree == BASE and "base" or "this",
    seed, dir, OUT, tree == BASE and "base" or "this", seed))
  -- "..., 0 divergences, 2.9 s (kernel 2.3 s, model 0.5 s; 139 sequences/s)"
  text = text:gsub("(divergences?[^\n]-), [%d.]+ s %(kernel [%d.]+ s, model [%d.]+ s; "
    .. "[%d.]+ sequences/s%)", "%1, (times)")
  return t, text
end

print(string.format("check --random %d --ops %d: this tree %s against %s; %d rounds; %s; "
  .. "load %s", N, K, HERE, BASE, ROUNDS, _VERSION, bench.loadavg()))
local times = { this = {}, base = {} }
for r = 1, ROUNDS do
  local order = r % 2 == 1 and { "base", "this" } or { "this", "base" }
  local got = {}
  for _, who in ipairs(order) do
    local t, text = run(who == "base" and BASE or HERE, r)
    times[who][r], got[who] = t, text
  end
  if got.this ~= got.base then
    io.stderr:write("seed ", r, ": the outputs differ: see ", OUT, "/base-", r, " and ",
      OUT, "/this-", r, "\n")
    os.exit(1)
  end
  print(string.format("  round %d (seed %d): base %.2f s, this %.2f s (%.2fx), output "
    .. "identical (%d bytes, %s)", r, r, times.base[r], times.this[r],
    times.this[r] / times.base[r], #got.this,
    got.this:find("DIVERGES", 1, true) and "with divergences" or "no divergence"))
end
-- the ratio: the median of the rounds' ratios (a pair runs back to back,
-- under about the same load), and beside it the ratio of the medians
local ratios = {}
for r = 1, ROUNDS do ratios[r] = times.this[r] / times.base[r] end
local b, t, ratio = bench.median(times.base), bench.median(times.this), bench.median(ratios)
print(string.format("median: base %.2f s, this %.2f s (ratio of medians %.2fx); median of the "
  .. "rounds' ratios %.2fx (target <= 0.8x: %s); load %s", b, t, t / b, ratio,
  ratio <= 0.8 and "holds" or "DOES NOT HOLD", bench.loadavg()))
sh("rm -rf " .. OUT)
if built then sh("rm -rf " .. built) end
