-- Issue 27's reports and statuses: a scenario ends as PASS, FAIL (a failed
-- check), ERROR (a raised error, a crash), TIMEOUT (with its bound) or
-- SKIP (mountns.skip, busted's pending), told apart in the plain report,
-- TAP (version 13 by default: Debian 12's prove reads it), JUnit XML and
-- KCIDB JSON; the console report and the report files come from one run;
-- the files are checked against the schemas in ../shared/report-schemas
-- with xmllint and python3-jsonschema (each check shown to reject a
-- broken document too).
local helper = require "helper"
local busted = require "busted"
local mountns = require "mountns"
local runner = require "mountns.runner"
local verdict = require "mountns.verdict"
local junit = require "mountns.report.junit"
local kcidb = require "mountns.report.kcidb"

local cli = helper.cli

local SCHEMAS = os.getenv("MOUNTNS_SCHEMAS") or helper.ROOT .. "/../shared/report-schemas"

local function exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end

local function succeeds(cmd)
  local r = os.execute(cmd .. " >/dev/null 2>&1")
  return r == true or r == 0
end

-- why a schema check cannot run here (nil: it can)
local function missing(tool_ok, tool, schema)
  if not exists(SCHEMAS .. "/" .. schema) then
    return "no " .. schema .. " in " .. SCHEMAS .. " (set MOUNTNS_SCHEMAS)"
  end
  if not tool_ok then return "no " .. tool .. " (Debian: .ci/run installs it)" end
end
local NO_XMLLINT = missing(succeeds("command -v xmllint"), "xmllint", "junit-10.xsd")
local NO_JSONSCHEMA = missing(succeeds("python3 -c 'import jsonschema'"), "python3-jsonschema",
  "kcidb-v5.3.schema.json")
local NO_PROVE = not succeeds("command -v prove") and "no prove (Debian: perl)" or nil

-- busted's `it`, or a pending test naming why it cannot run here
local function it_if(why)
  if not why then return busted.it end
  return function(name) return busted.pending(name .. " [" .. why .. "]") end
end

-- whether the document at path is valid, and what the validator said
local function junit_valid(path)
  local out = helper.sh("xmllint --noout --schema " .. SCHEMAS .. "/junit-10.xsd " .. path
    .. " 2>&1; echo \"exit=$?\"")
  return out:match("exit=0$") ~= nil, out
end

local function kcidb_valid(path)
  local out = helper.sh("python3 -c 'import json,sys,jsonschema; "
    .. "jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' "
    .. SCHEMAS .. "/kcidb-v5.3.schema.json " .. path .. " 2>&1; echo \"exit=$?\"")
  return out:match("exit=0$") ~= nil, out
end

local dir
setup(function() dir = helper.tempdir() end)
teardown(function() os.execute("rm -rf '" .. dir .. "'") end)

local function write(name, text) return helper.write(dir, name, text) end

-- A file of five scenarios, one of each status, on the kernel: a pass (a
-- tmpfs really mounted), a failed check (nothing mounted at /X), a raised
-- error, a skip, a scenario blocked until its timeout (0.3 s) kills it.
local MIXED = [=[
local mountns = require "mountns"
local expect = require "mountns.expect"
local core = require "mountns.core"
mountns.scenario("mounts /X", function(ns)
  ns:mkdir("/X"); ns:mount("a", "/X", "tmpfs"); expect.mounted(ns, "/X")
end)
mountns.scenario("checks /X <&>", function(ns)
  ns:mkdir("/X"); print("printed <&> \1 ]]>"); io.stdout:flush()
  expect.mounted(ns, "/X")
end)
mountns.scenario("raises", function(ns) ns:mount("a", "/nope", "tmpfs") end)
mountns.scenario("skips", function() mountns.skip("needs <a> feature") end)
mountns.scenario("blocks", function() core.read_all((core.pipe())) end, { timeout = 0.3 })
]=]

-- the same statuses on the model (no namespaces: `run --model`)
local MIXED_MODEL = [[
local mountns = require "mountns"
local expect = require "mountns.expect"
mountns.scenario("mounts /X", function(ns)
  ns:mkdir("/X"); ns:mount("a", "/X", "tmpfs"); expect.mounted(ns, "/X")
end)
mountns.scenario("checks /X", function(ns) ns:mkdir("/X"); expect.mounted(ns, "/X") end)
mountns.scenario("raises", function() error("boom") end)
mountns.scenario("skips", function() mountns.skip("needs a feature") end)
mountns.scenario("loops", function() while true do end end, { timeout = 0.3 })
]]

describe("scenario statuses", function()
  it("plain: ok, FAIL, ERROR, SKIP (reason), TIMEOUT told apart, each counted", function()
    local f = write("mixed.lua", MIXED)
    local out = cli("run " .. f)
    assert.matches("^ok   mounts /X %(%d+ ms%)\n", out)
    assert.matches("\n# printed <&> \\001 %]%]>\nFAIL checks /X <&> %(%d+ ms%)\n    [^\n]*"
      .. "mixed%.lua:9: expected a mount at /X", out)
    assert.matches("\nERROR raises %(%d+ ms%)\n    [^\n]*ENOENT", out)
    assert.matches("\nSKIP skips %(needs <a> feature%)\n", out)
    assert.matches("\nTIMEOUT blocks %(%d+ ms%)\n    [^\n]*ran past its timeout of 0%.3 s", out)
    -- a failed check reads as its message: no traceback
    assert.is_nil(out:match("FAIL checks[^\n]*\n[^\n]*\n[^\n]*stack traceback"), out)
    assert.matches("\n1 passed, 3 failed %(1 FAIL, 1 ERROR, 1 TIMEOUT%), 1 skipped\nexit=1$",
      out)
  end)

  it("the same on the model (run --model)", function()
    local f = write("mixed-model.lua", MIXED_MODEL)
    local out = cli("run --model " .. f)
    assert.matches("^ok   mounts /X %(%d+ ms%)\nFAIL checks /X %(%d+ ms%)\n", out)
    assert.matches("\nERROR raises %(%d+ ms%)\n    [^\n]*boom", out)
    assert.matches("\nSKIP skips %(needs a feature%)\n", out)
    assert.matches("\nTIMEOUT loops %(%d+ ms%)\n    [^\n]*ran past its timeout of 0%.3 s", out)
    assert.matches("\n1 passed, 3 failed %(1 FAIL, 1 ERROR, 1 TIMEOUT%), 1 skipped\nexit=1$",
      out)
  end)

  it("skips do not fail the run; a skip outside any scenario skips the rest of its file",
    function()
    local a = write("skipping.lua", helper.passing_scenario("passes", "p") .. [[
mountns.scenario("skipped", function() mountns.skip() end)
]])
    local b = write("skip-file.lua", [[
local mountns = require "mountns"
mountns.skip("not on this machine")
mountns.scenario("never", function() error("ran") end)
]])
    local out = cli("run " .. a .. " " .. b)
    assert.matches("^ok   passes %(%d+ ms%)\nSKIP skipped %(skipped%)\nSKIP [^\n]*skip%-file%.lua "
      .. "%(not on this machine%)\n1 passed, 0 failed, 2 skipped\nexit=0$", out)
    -- the other polarity: a failure next to a skip fails the run
    local c = write("skip-and-fail.lua", [[
local mountns = require "mountns"
mountns.scenario("skipped", function() mountns.skip("x") end)
mountns.scenario("fails", function() error("boom") end)
]])
    assert.matches("\n0 passed, 1 failed %(1 ERROR%), 1 skipped\nexit=1$", cli("run " .. c))
  end)

  it("TAP: ok N - name # SKIP reason, # ERROR and # TIMEOUT with its bound", function()
    local out = cli("run --tap " .. write("mixed-tap.lua", MIXED))
    assert.matches("^TAP version 13\nok 1 %- mounts /X\n# printed <&> \\001 %]%]>\n"
      .. "not ok 2 %- checks /X <&>\n# [^\n]*expected a mount at /X", out)
    assert.matches("\nnot ok 3 %- raises\n# ERROR\n# [^\n]*ENOENT", out)
    assert.matches("\nok 4 %- skips # SKIP needs <a> feature\n", out)
    assert.matches("\nnot ok 5 %- blocks\n# TIMEOUT %(its bound: 0%.3 s%)\n# [^\n]*ran past", out)
    assert.matches("\n1%.%.5\n# 1 passed, 3 failed %(1 FAIL, 1 ERROR, 1 TIMEOUT%), 1 skipped\n"
      .. "exit=1$", out)
  end)

  it("mountns.skip and busted's pending in a scenario make the spec pending", function()
    local _, direct = pcall(pending, "direct") -- luacheck: ignore (busted's)
    for _, fn in ipairs {
      function() mountns.skip("not here") end,
      function() pending("not here") end, -- luacheck: ignore (busted's)
    } do
      local ok, err = pcall(mountns.scenario, fn)
      assert.is_false(ok)
      -- busted tells a pending test by its error's metatable
      assert.are.equal(getmetatable(direct), getmetatable(err))
      assert.are.equal("not here", tostring(err))
    end
    -- the other polarity: an error stays an error, a failed check a failure
    local _, err = pcall(mountns.scenario, function() error("boom", 0) end)
    assert.are_not.equal(getmetatable(direct), getmetatable(err))
    assert.are.equal("error", verdict.status_of(err))
  end)

  it("mountns.skip takes a string reason or none, raising at the caller's line", function()
    local ok, err = pcall(mountns.skip, 42)
    assert.is_false(ok)
    assert.matches("bad argument #1 to 'skip' %(string expected, got number%)", err)
    local _, e = pcall(mountns.skip)
    assert.are.equal("skip", verdict.status_of(e))
    assert.are.equal("skipped", tostring(e))
  end)

  it("status_of: a failed expect check, a timeout, a skip, an error", function()
    local expect = require "mountns.expect"
    local out = mountns.scenario(function(ns)
      local got = {}
      local _, e = pcall(function() expect.mounted(ns, "/nowhere") end)
      got.check = verdict.status_of(e)
      got.message = type(e) == "string" and e or "not a string"
      _, e = pcall(error, "plain")
      got.plain = verdict.status_of(e)
      return got
    end)
    local core = require "mountns.core"
    local _, e = pcall(mountns.isolate_with, { timeout = 0.2 }, function()
      core.read_all((core.pipe()))
    end)
    out.timeout = verdict.status_of(e)
    out.timeout_message = tostring(e)
    assert.are.equal("fail", out.check)
    -- still a string for a caller's pcall, positioned at its line
    assert.matches("^[^\n]*38%-reports_spec%.lua:%d+: ", out.message)
    assert.are.equal("error", out.plain)
    assert.are.equal("timeout", out.timeout)
    assert.matches("ran past its timeout of 0%.2 s", out.timeout_message)
  end)

  it("the runner checks an event's status (event_problem), both ways", function()
    local problem = runner.event_problem
    assert.is_nil(problem { "result", name = "a", ok = false, secs = 0, status = "timeout" })
    assert.is_nil(problem { "result", name = "a", ok = true, secs = 0, status = "pass" })
    assert.is_nil(problem { "result", name = "a", ok = false, secs = 0 })
    assert.is_nil(problem { "done", ok = false, err = "x", status = "skip" })
    assert.matches("status is \"late\" %(one of pass, fail, error, timeout, skip expected%)",
      problem { "result", name = "a", ok = false, secs = 0, status = "late" })
    assert.matches("status is \"pass\" and ok false",
      problem { "result", name = "a", ok = false, secs = 0, status = "pass" })
    assert.matches("status is \"skip\" and ok true",
      problem { "result", name = "a", ok = true, secs = 0, status = "skip" })
    assert.matches("a result event whose status is a number",
      problem { "result", name = "a", ok = false, secs = 0, status = 3 })
    assert.matches("a done event whose status is \"pass\"",
      problem { "done", ok = true, status = "pass" })
  end)
end)

describe("TAP versions", function()
  it("--tap is version 13, --tap=14 version 14, anything else a usage error", function()
    local f = write("one.lua", helper.passing_scenario("one", "o"))
    assert.matches("^TAP version 13\nok 1 %- one\n1%.%.1\n", cli("run --tap " .. f))
    assert.matches("^TAP version 14\nok 1 %- one\n1%.%.1\n", cli("run --tap=14 " .. f))
    assert.matches("run: unknown option %-%-tap=15\nexit=2$", cli("run --tap=15 " .. f))
    local ok, err = pcall(runner.run, { f }, { tap = 12 })
    assert.is_false(ok)
    assert.matches("option 'tap': true, 13 or 14 expected, got 12", err)
  end)

  it_if(NO_PROVE)("prove --exec 'mountns run --tap' passes a passing file, fails a failing one",
    function()
    local good = write("good.lua", helper.passing_scenario("good", "g") .. [[
mountns.scenario("skipped", function() mountns.skip("not here") end)
]])
    local bad = write("bad.lua", helper.passing_scenario("good", "g") .. [[
mountns.scenario("bad", function(ns) expect.mounted(ns, "/nope") end)
]])
    local exec = '"' .. helper.lua_cmd() .. " " .. helper.ROOT .. '/bin/mountns run --tap"'
    local out = helper.sh("prove --exec " .. exec .. " " .. good .. " 2>&1; echo \"exit=$?\"")
    assert.matches("\nResult: PASS\nexit=0$", out)
    out = helper.sh("prove --exec " .. exec .. " " .. bad .. " 2>&1; echo \"exit=$?\"")
    assert.matches("Failed tests?:%s+2\n", out)
    assert.matches("\nResult: FAIL\nexit=1$", out)
    -- TAP 14 is what Debian 12's prove refuses: --tap=14 is on request only
    exec = '"' .. helper.lua_cmd() .. " " .. helper.ROOT .. '/bin/mountns run --tap=14"'
    out = helper.sh("prove --exec " .. exec .. " " .. good .. " 2>&1; echo \"exit=$?\"")
    if out:match("version 14 but we don't know") then
      assert.matches("\nResult: FAIL\nexit=1$", out)
    end
  end)
end)

describe("report files", function()
  local report_dir, console, xml, json
  -- one run: TAP on stdout, JUnit and KCIDB files; a second file whose
  -- process exits in its second scenario (the rest never runs: MISS)
  setup(function()
    report_dir = helper.tempdir()
    local a = write("mixed-files.lua", MIXED)
    local b = write("dies.lua", helper.passing_scenario("first", "f") .. [[
mountns.scenario("second", function() end)
os.exit(3)
mountns.scenario("never", function() end)
]])
    -- a third with the same base name: its own suite and path
    os.execute("mkdir -p '" .. dir .. "/sub'")
    local c = helper.write(dir .. "/sub", "dies.lua", helper.passing_scenario("again", "x"))
    console = cli("run --tap --junit " .. report_dir .. "/r.xml --kcidb " .. report_dir
      .. "/r.json --origin mountns_ci " .. a .. " " .. b .. " " .. c)
    xml = helper.read(report_dir .. "/r.xml")
    json = helper.read(report_dir .. "/r.json")
  end)
  teardown(function() os.execute("rm -rf '" .. report_dir .. "'") end)

  it("the console's report comes from the same run", function()
    assert.matches("^TAP version 13\nok 1 %- mounts /X\n", console)
    assert.matches("\nok 6 %- first\nok 7 %- second\nnot ok 8 %- [^\n]*dies%.lua exited early\n",
      console)
    assert.matches("\nok 9 %- again\n1%.%.9\n", console)
    assert.matches("exit=1$", console)
  end)

  it("JUnit: a suite per file, a case per scenario, each status its element", function()
    local suites = {}
    for name, attrs in xml:gmatch('<testsuite name="([^"]*)"([^>]*)>') do
      suites[#suites + 1] = name:match("[^/]*/[^/]*$") .. attrs:match(' tests="%d+" failures="%d+"'
        .. ' errors="%d+" skipped="%d+"')
    end
    assert.same({ dir:match("[^/]*$") .. "/mixed-files.lua" .. ' tests="5" failures="1" '
                  .. 'errors="2" skipped="1"',
                  dir:match("[^/]*$") .. "/dies.lua" .. ' tests="3" failures="0" errors="1" '
                  .. 'skipped="0"',
                  'sub/dies.lua tests="1" failures="0" errors="0" skipped="0"' }, suites)
    assert.matches('<testcase name="mounts /X" classname="[^"]*mixed%-files%.lua" '
      .. 'time="%d+%.%d%d%d"/>', xml)
    assert.matches('<testcase name="checks /X &lt;&amp;&gt;" [^>]*>\n      <failure type="FAIL" '
      .. 'message="[^"]*expected a mount at /X[^"]*">', xml)
    assert.matches("\n      <system%-out>printed &lt;&amp;&gt; \\001 %]%]&gt;\n</system%-out>", xml)
    assert.matches('<error type="ERROR" message="[^"]*ENOENT', xml)
    assert.matches('<skipped message="needs &lt;a&gt; feature"/>', xml)
    assert.matches('<error type="TIMEOUT" message="[^"]*ran past its timeout of 0%.3 s', xml)
    assert.matches('<error type="CRASH" message="its process exited with status 3', xml)
    for _, p in ipairs { "kernel%.release", "lua%.version", "mountns%.version" } do
      assert.matches('<property name="' .. p .. '" value="[^"]+"/>', xml)
    end
    assert.matches('<property name="mountns%.mode" value="kernel"/>', xml)
    -- nothing XML forbids: no control character but newline and tab
    assert.is_nil(xml:find("[%z\1-\8\11\12\14-\31\127]"))
  end)

  it_if(NO_XMLLINT)("JUnit: valid against junit-10.xsd (xmllint), a broken one is not",
    function()
    local ok, said = junit_valid(report_dir .. "/r.xml")
    assert.is_true(ok, said)
    -- the other polarity: a testcase without its name, an unknown element
    local broken = helper.write(report_dir, "broken.xml", (xml:gsub('<testcase name="[^"]*"',
      "<testcase", 1)))
    ok, said = junit_valid(broken)
    assert.is_false(ok, said)
    assert.matches("name", said)
    broken = helper.write(report_dir, "broken2.xml", (xml:gsub("<skipped ", "<skip ", 1)))
    assert.is_false((junit_valid(broken)))
  end)

  it("KCIDB: a checkout and a build of the running kernel, a test per scenario", function()
    local release = helper.read("/proc/sys/kernel/osrelease"):gsub("\n$", "")
    local esc = release:gsub("%p", "%%%0")
    assert.matches('"version":{"major":5,"minor":3}', json)
    assert.matches('"checkouts":%[{[^%]]*"id":"mountns_ci:' .. esc .. '"', json)
    assert.matches('"builds":%[{[^%]]*"checkout_id":"mountns_ci:' .. esc .. '"', json)
    local tests = {}
    for obj in json:gmatch('{"build_id":.-"path":"[^"]*".-"status":"[A-Z]+"}') do
      tests[#tests + 1] = obj:match('"path":"([^"]*)"') .. " " .. obj:match('"status":"(%u+)"}$')
    end
    assert.same({ "mountns.mixed-files.1 PASS", "mountns.mixed-files.2 FAIL",
                  "mountns.mixed-files.3 ERROR", "mountns.mixed-files.4 SKIP",
                  "mountns.mixed-files.5 ERROR", "mountns.dies.1 PASS", "mountns.dies.2 PASS",
                  "mountns.dies ERROR", "mountns.dies.3 MISS", "mountns.dies_2.1 PASS" }, tests)
    assert.matches('"id":"mountns_ci:' .. esc .. ':mountns%.mixed%-files%.1"', json)
    assert.matches('"misc":{[^}]*"status":"TIMEOUT","timeout":0%.3', json)
    assert.matches('"start_time":"%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d%.%d%d%d%+00:00"', json)
    assert.matches('"features":{[^}]*"statmount":', json)
    assert.matches('"kernel_release":"' .. esc .. '"', json)
  end)

  it("KCIDB: the same scenario on the same kernel keeps its id in another run", function()
    local out = cli("run --kcidb " .. report_dir .. "/again.json --origin mountns_ci "
      .. dir .. "/mixed-files.lua")
    assert.matches("exit=1$", out)
    local again = helper.read(report_dir .. "/again.json")
    local id = '"id":"mountns_ci:[^"]*:mountns%.mixed%-files%.2"'
    assert.are.equal(json:match(id), again:match(id))
    assert.is_string(json:match(id))
  end)

  it_if(NO_JSONSCHEMA)("KCIDB: valid against kcidb-v5.3 (jsonschema), a broken one is not",
    function()
    local ok, said = kcidb_valid(report_dir .. "/r.json")
    assert.is_true(ok, said)
    -- the other polarity: TIMEOUT is no KCIDB status; a path with a slash
    local broken = helper.write(report_dir, "broken.json", (json:gsub('"status":"ERROR"',
      '"status":"TIMEOUT"', 1)))
    ok, said = kcidb_valid(broken)
    assert.is_false(ok, said)
    assert.matches("TIMEOUT", said)
    broken = helper.write(report_dir, "broken2.json", (json:gsub('"path":"mountns%.dies%.1"',
      '"path":"mountns/dies.1"', 1)))
    assert.is_false((kcidb_valid(broken)))
  end)

  it("--origin must be a KCIDB origin and goes with --kcidb; an unwritable file is named",
    function()
    local f = dir .. "/mixed-files.lua"
    assert.matches("run: %-%-origin: a KCIDB origin is made of a%-z, 0%-9 and _, got "
      .. "'Bad%-Name'\nexit=2$", cli("run --kcidb /dev/null --origin Bad-Name " .. f))
    assert.matches("run: %-%-origin goes with %-%-kcidb\nexit=2$", cli("run --origin x " .. f))
    assert.matches("run: %-%-junit: /nonexistent/r%.xml: No such file or directory\nexit=2$",
      cli("run --junit /nonexistent/r.xml " .. f))
    assert.matches("run: %-%-kcidb needs a file name\nexit=2$", cli("run " .. f .. " --kcidb"))
  end)
end)

describe("the writers' escaping", function()
  it("XML: markup escaped, control characters and bad UTF-8 by the one rule", function()
    assert.are.equal("a&lt;b&gt;&amp;\"' \\001\\377 é\n\t", junit.xml("a<b>&\"' \1\255 é\n\t"))
    assert.are.equal("&quot;&apos;&#10;&#9;\\033", junit.xml("\"'\n\t\27", true))
  end)

  it("JSON: quotes, backslashes, newlines; control characters by the one rule", function()
    assert.are.equal('"a\\"b\\\\c\\nd\\te\\\\001\\\\377"', kcidb.json("a\"b\\c\nd\te\1\255"))
    assert.are.equal('{"a":[1,2.5,true],"b":{}}', kcidb.json { b = {}, a = { 1, 2.5, true } })
    assert.are.equal("null", kcidb.json(0 / 0))
    local ok, err = pcall(kcidb.new, io.stdout, { origin = "No" })
    assert.is_false(ok)
    assert.matches("option 'origin': %[a%-z0%-9_%]%+ expected, got No", err)
  end)
end)
