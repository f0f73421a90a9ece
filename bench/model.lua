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
local mountns = require "mountns"
local model = require "mountns.model"
local format = require "mountns.format"
local bench = dofile(((arg and arg[0] or ""):match("^(.*)/[^/]*$") or "bench") .. "/lib.lua")

local unpack = table.unpack or unpack -- luacheck: ignore

local ROUNDS = tonumber(os.getenv("ROUNDS") or "") or 7

local function article(sh1)
  sh1:make_private("/")
  sh1:mkdir("/X"); sh1:mkdir("/Y")
  sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
  sh1:mount("sda5", "/Y", "tmpfs"); sh1:make_shared("/Y")
  local sh2 = sh1:unshare { propagation = "unchanged" }
  sh1:mkdir("/Z")
  sh1:bind("/X", "/Z")
  return { sh1:mounts(), sh2:mounts() }
end

local DOUBLINGS = 9
local function explosion(ns)
  ns:make_private("/")
  ns:mkdir("/a")
  ns:mount("a", "/a", "tmpfs")
  for i = 1, DOUBLINGS do ns:mkdir("/m" .. i) end
  for i = 1, DOUBLINGS do ns:bind("/", "/m" .. i, { recursive = true }) end
  return { ns:mounts() }
end

local cases = {
  { name = "seed article", fn = article, runs = 20 },
  { name = "1,024-mount explosion", fn = explosion, runs = 3 },
}

print(string.format("model vs kernel scenario, median of %d interleaved rounds (%s, %s)",
  ROUNDS, _VERSION, (io.open("/proc/sys/kernel/osrelease") or io.stdin):read("*l") or "?"))
for _, c in ipairs(cases) do
  local kanswer, manswer
  local times = bench.rounds(ROUNDS, {
    { key = "kernel", run = function()
      local t; t, kanswer = bench.timed(c.runs, mountns.scenario, c.fn); return t end },
    { key = "model", run = function()
      local t; t, manswer = bench.timed(c.runs * 10, model.scenario, c.fn); return t end } })
  local ktext = format.golden_text(unpack(kanswer))
  local mtext = format.golden_text(unpack(manswer))
  assert(ktext == mtext, c.name .. ": the model's answer differs from the kernel's:\n"
    .. tostring(format.diff_text(ktext, mtext, "kernel", "model")))
  local k, m = bench.median(times.kernel), bench.median(times.model)
  local ratio = k / m
  print(string.format("  %-24s kernel %9.3f ms  model %8.3f ms  ratio %7.1fx  (target >= 100x: %s)",
    c.name, k * 1000, m * 1000, ratio, ratio >= 100 and "holds" or "DOES NOT HOLD"))
  if c.fn == explosion then print(string.format("  (%d mounts on both)", #kanswer[1])) end
end
