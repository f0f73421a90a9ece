-- What a failed scenario leaves behind (issue 27): `mountns run
-- --artifacts DIR` writes its picture, each open namespace's mountinfo,
-- its diagnostic and its steps as a script that runs again; a passing
-- scenario writes nothing unless --artifacts-all.
local helper = require "helper"
local runner = require "mountns.runner"

local dir
local function write(name, text) return helper.write(dir, name, text) end
local function read(path)
  local f = io.open(path)
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local SCRIPT = [[
local mountns = require "mountns"
local expect = require "mountns.expect"
mountns.scenario("fails", function(sh1)
  sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
  local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
  sh2:mkdir("/X/a"); sh2:mount("a", "/X/a", "tmpfs")
  pcall(sh1.bind, sh1, "/nope", "/X")
  expect.mounted(sh1, "/X/b")
end, { label = "sh1" })
mountns.scenario("passes", function(ns) ns:mkdir("/Y") end)
]]

describe("mountns run --artifacts", function()
  before_each(function() dir = helper.tempdir() end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  it("saves a failed scenario's picture, tables, diagnostic and steps; not a pass's", function()
    local path = write("art.lua", SCRIPT)
    local out = helper.cli("run --artifacts " .. dir .. "/a " .. path)
    local base = dir .. "/a/art-1"
    assert.matches("\n    artifacts: " .. (base:gsub("%p", "%%%0")) .. "%.dot ", out)
    assert.matches("1 passed, 1 failed\nexit=1$", out)
    -- the picture: both namespaces and their peer group
    assert.matches("^digraph", read(base .. ".dot"))
    -- the kernel's tables: sh2's mount propagated to sh1 (the peer of /X)
    local mi = read(base .. ".mountinfo")
    assert.matches("^# sh1\n", mi)
    assert.matches("\n# sh2\n", mi)
    local _, n = mi:gsub(" /X/a rw,relatime shared:%d+ %- tmpfs a rw", "")
    assert.equal(2, n, mi)
    assert.matches("expected a mount at /X/b in sh1", read(base .. ".txt"))
    -- the steps run again, the refusal as expect.fails
    local steps = read(base .. ".steps.lua")
    assert.matches('\n  local ns2 = ns1:unshare%({label = "sh2", propagation = "unchanged"}%)',
      steps)
    assert.matches('\n  expect.fails%("ENOENT", ns1.bind, ns1, "/nope", "/X"%)', steps)
    local again = helper.cli("run " .. base .. ".steps.lua")
    assert.matches("^ok   fails %(its steps%)", again)
    assert.matches("exit=0$", again)
    -- the passing scenario left nothing
    assert.is_nil(read(dir .. "/a/art-2.txt"))
  end)

  it("--artifacts-all saves a passing scenario's too", function()
    local path = write("art.lua", SCRIPT)
    local out = helper.cli("run --artifacts " .. dir .. "/b --artifacts-all " .. path)
    assert.matches("exit=1$", out)
    assert.equal("passed\n", read(dir .. "/b/art-2.txt"))
    assert.matches('\n  ns1:mkdir%("/Y"%)', read(dir .. "/b/art-2.steps.lua"))
  end)

  it("JUnit names them as attachments, KCIDB as output_files", function()
    local path = write("art.lua", SCRIPT)
    local out = helper.cli("run --artifacts " .. dir .. "/c --junit " .. dir .. "/r.xml --kcidb "
      .. dir .. "/r.json " .. path)
    assert.matches("exit=1$", out)
    local base = dir .. "/c/art-1"
    local xml = read(dir .. "/r.xml")
    assert.truthy(xml:find("[[ATTACHMENT|" .. base .. ".steps.lua]]", 1, true), xml)
    assert.is_nil(xml:find("art-2", 1, true)) -- the pass: none
    local json = read(dir .. "/r.json")
    assert.truthy(json:find('"name":"art-1.mountinfo","url":"file://' .. base
      .. '.mountinfo"', 1, true) or json:find('"url":"file://' .. base .. '.mountinfo"', 1, true),
      json)
  end)

  it("refuses what cannot work, on the command line and in runner.run", function()
    local path = write("art.lua", SCRIPT)
    assert.matches("run: %-%-artifacts%-all goes with %-%-artifacts DIR\nexit=2$",
      helper.cli("run --artifacts-all " .. path))
    assert.matches("run: %-%-dot and %-%-artifacts need directories of their own\nexit=2$",
      helper.cli("run --dot " .. dir .. " --artifacts " .. dir .. " " .. path))
    assert.matches("run: %-%-artifacts needs a directory\nexit=2$",
      helper.cli("run " .. path .. " --artifacts"))
    assert.has_error(function() runner.run({ path }, { artifacts_all = true }) end,
      "bad argument #2 to 'run' (option 'artifacts_all' needs option 'artifacts' (a directory))")
  end)
end)

describe("a result event's artifacts (runner.event_problem)", function()
  local function result(art)
    return { "result", name = "x", ok = false, secs = 0, artifacts = art }
  end
  it("takes collect's shape", function()
    assert.is_nil(runner.event_problem(result {
      dot = "digraph {}", steps = "-- s", mountinfo = { { "ns1", "1 2 0:1 / / rw - t t rw" } },
      missing = { "picture: no" } }))
    assert.is_nil(runner.event_problem(result {}))
  end)
  it("refuses anything else", function()
    for _, case in ipairs {
      { { dot = 1 }, "a result event whose artifacts have a malformed dot" },
      { { mountinfo = { "x" } }, "a result event whose artifacts have a malformed mountinfo" },
      { { mountinfo = { { "a", "b", "c" } } }, "have a malformed mountinfo" },
      { { missing = { 1 } }, "have a malformed missing" },
      { { path = "/etc/passwd" }, 'have an unknown field "path"' },
    } do
      local problem = runner.event_problem(result(case[1]))
      assert.truthy(problem and problem:find(case[2], 1, true), tostring(problem))
    end
    assert.matches("artifacts is a string", runner.event_problem(result("x")))
  end)
end)
