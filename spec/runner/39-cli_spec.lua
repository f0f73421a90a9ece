-- The command line as CI authors use it (issue 27): selecting and sharding
-- scenarios (--list, --filter, --shard, --fail-fast), merging shard
-- reports (mountns report merge), per-command help, --version, completion,
-- the man page, progress lines. Every selection is checked against what
-- ran: a scenario that runs mounts a tmpfs and checks the kernel shows it;
-- a scenario that must not run fails if it does.
local helper = require "helper"
local runner = require "mountns.runner"

local cli = helper.cli

local dir
local function write(name, text) return helper.write(dir, name, text) end

-- A script of scenarios named names[i]: each mounts a tmpfs and checks it
-- is there (a fact of the kernel); a name starting with "trap" fails (a
-- failed check: FAIL).
local function script(names)
  local out = { 'local mountns = require "mountns"', 'local expect = require "mountns.expect"' }
  for _, name in ipairs(names) do
    out[#out + 1] = string.format([[
mountns.scenario(%q, function(ns)
  ns:mkdir("/X"); ns:mount("t", "/X", "tmpfs")
  expect.mounted(ns, "/X")
  if (%q):match("^trap") or (%q):match(" trap") then expect.mounted(ns, "/trap-ran") end
end)]], name, name, name)
  end
  return table.concat(out, "\n") .. "\n"
end

-- the lines of s, as a list
local function lines(s)
  local t = {}
  for l in (s .. "\n"):gmatch("([^\n]*)\n") do t[#t + 1] = l end
  return t
end

-- the "ok"/"FAIL" names of a plain report, as a set
local function ran(out)
  local set = {}
  for name in out:gmatch("\nok   ([^\n]-) %(%d+ ms%)") do set[name] = "ok" end
  for name in ("\n" .. out):gmatch("\nok   ([^\n]-) %(%d+ ms%)") do set[name] = "ok" end
  for name in ("\n" .. out):gmatch("\nFAIL ([^\n]-) %(%d+ ms%)") do set[name] = "FAIL" end
  return set
end

describe("mountns run: selecting and sharding", function()
  local a, b
  setup(function()
    dir = helper.tempdir()
    a = write("a.lua", script { "mount one", "mount two", "trap three", "mount four",
                                "mount five" })
    b = write("b.lua", script { "mount one", "b trap", "mount b3" })
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  describe("--list", function()
    it("prints file, index and name of every scenario and runs none", function()
      local out = cli("run --list " .. a .. " " .. b)
      assert.same({ a .. "\t1\tmount one", a .. "\t2\tmount two", a .. "\t3\ttrap three",
                    a .. "\t4\tmount four", a .. "\t5\tmount five", b .. "\t1\tmount one",
                    b .. "\t2\tb trap", b .. "\t3\tmount b3", "exit=0" }, lines(out))
      -- the same files run: the traps run and fail
      local run = cli("run " .. a .. " " .. b)
      assert.equal("FAIL", ran(run)["trap three"])
      assert.matches("\n6 passed, 2 failed\nexit=1$", run)
    end)

    it("refuses the options that report or keep what a run does", function()
      for _, o in ipairs { "--tap", "--golden", "--fail-fast", "--dot " .. dir .. "/pics" } do
        assert.matches("^mountns: run: " .. o:match("^%S+"):gsub("%-", "%%-")
          .. " does not apply to %-%-list %(no scenario runs%)\nexit=2$",
          cli("run --list " .. o .. " " .. a))
      end
      assert.is_nil(io.open(dir .. "/pics")) -- not made
      local ok, err = pcall(function() runner.run({ a }, { list = true, tap = true }) end)
      assert.is_false(ok)
      assert.matches("39%-cli_spec%.lua:%d+: bad argument #2 to 'run' %(option 'tap' does not "
        .. "apply to option 'list'", err)
      -- what selects or runs elsewhere does apply
      assert.matches("\tmount b3\nexit=0$", cli("run --list --model -j 1 " .. b))
    end)

    it("says on stderr why a file could not be listed, with exit status 1", function()
      local bad = write("bad.lua", "error('no names here')\n")
      local out = cli("run --list " .. a .. " " .. bad)
      assert.matches("\tmount five\nmountns: run %-%-list: [^\n]*bad%.lua: [^\n]*no names here"
        .. "\nexit=1$", out)
      local stdout = helper.sh("cd " .. helper.ROOT .. " && " .. helper.lua_vars()
        .. " bin/mountns run --list " .. bad .. " 2>/dev/null")
      assert.equal("", stdout)
    end)
  end)

  describe("--filter", function()
    it("runs only the scenarios whose name matches the Lua pattern; the others not at all",
      function()
      local out = cli("run --filter '^mount [ot]' " .. a .. " " .. b)
      assert.same({ ["mount one"] = "ok", ["mount two"] = "ok" }, ran(out))
      assert.matches("\n3 passed, 0 failed\nexit=0$", out) -- a's two, b's "mount one"
      -- a substring is a pattern without magic characters
      assert.same({ ["trap three"] = "FAIL" }, ran(cli("run --filter 'trap t' " .. a)))
      -- --list with --filter: the real indexes in the file
      assert.same({ a .. "\t4\tmount four", a .. "\t5\tmount five", "exit=0" },
        lines(cli("run --list --filter 'f' " .. a)))
    end)

    it("a bad Lua pattern is a usage error before anything runs", function()
      for pattern, why in pairs {
        ["x["] = "malformed pattern %(missing '%]'%)",
        ["x%"] = "malformed pattern %(ends with '%%'%)",
        ["(x"] = "unfinished capture",
        ["(x))"] = "invalid pattern capture",
        ["%1"] = "invalid capture index %%1",
        ["%f"] = "missing '%[' after '%%f' in pattern",
        ["%bx"] = "missing arguments to '%%b'",
      } do
        -- Lua itself says nothing of "x[" on a name that has no "x"
        local out = cli("run --filter '" .. pattern .. "' " .. a)
        assert.matches("^mountns: run: %-%-filter: " .. why .. "\nexit=2$", out)
      end
      assert.matches("%-%-filter needs a Lua pattern\nexit=2$", cli("run " .. a .. " --filter"))
      assert.matches("%-%-filter given twice\nexit=2$", cli("run --filter a --filter b " .. a))
      -- the same patterns through the API: an error at the caller's line
      local ok, err = pcall(function() runner.run({ a }, { filter = "x[" }) end)
      assert.is_false(ok)
      assert.matches("39%-cli_spec%.lua:%d+: bad argument #2 to 'run' %(option 'filter': "
        .. "malformed pattern", err)
    end)

    it("pattern_problem knows a valid pattern from a bad one", function()
      for _, p in ipairs { "mount", "^mount %d+$", "[%]]", "[]]", "%f[%w]x", "(a)%1", "%bxy",
                           "()", "[^%s]+", "a-", "%%", "a)" } do
        assert.is_nil(runner.pattern_problem(p), p)
        assert.is_true(pcall(string.find, "abc", p), p)
      end
      for _, p in ipairs { "[a", "[^", "[%", "%", "(a", "(a))", "%2", "(a%1)", "%b", "%fx" } do
        assert.is_string(runner.pattern_problem(p), p)
        -- each is one Lua rejects when a match reaches it
        assert.is_false(pcall(string.find, p .. "", p), p)
      end
    end)

    it("a run whose filter leaves out every scenario of a file is no error for that file",
      function()
      local out = cli("run --filter '^mount' " .. a .. " " .. b)
      assert.not_matches("no scenario ran", out)
      -- a filter that matches no scenario of the whole run fails it (a typo
      -- would pass in CI), unless it is a shard's: a shard may be empty
      assert.matches("^0 passed, 0 failed\nmountns: run: %-%-filter 'zzz' matched no "
        .. "scenario\nexit=1$", cli("run --filter zzz " .. a))
      assert.matches("^mountns: run: %-%-filter 'zzz' matched no scenario\nexit=1$",
        cli("run --list --filter zzz " .. a))
      assert.matches("^0 passed, 0 failed\nexit=0$", cli("run --shard 2/9 --filter '1' " .. a))
      local empty = write("empty.lua", "-- no scenario\n")
      assert.matches("ERROR [^\n]*empty%.lua %(no scenario ran%)",
        cli("run --filter '^mount' " .. a .. " " .. empty))
    end)
  end)

  describe("--shard K/N", function()
    it("splits the run into N disjoint shards that together are the whole run", function()
      local all = lines(cli("run --list " .. a .. " " .. b))
      table.remove(all) -- exit=0
      for n = 1, 4 do
        local seen = {}
        for k = 1, n do
          local part = lines(cli("run --list --shard " .. k .. "/" .. n .. " " .. a .. " " .. b))
          assert.equal("exit=0", table.remove(part))
          for _, l in ipairs(part) do
            assert.is_nil(seen[l], l .. " in two shards of " .. n)
            seen[l] = k
          end
        end
        for _, l in ipairs(all) do assert.is_number(seen[l], l .. " in no shard of " .. n) end
      end
      -- the same split when the scenarios run, not listed
      local s1 = ran(cli("run --filter '^mount' --shard 1/2 " .. a .. " " .. b))
      local s2 = ran(cli("run --filter '^mount' --shard 2/2 " .. a .. " " .. b))
      local union = {}
      for name in pairs(s1) do union[name] = true end
      for name in pairs(s2) do union[name] = true end
      -- "mount one" is in both files: once in each shard (file a's 1 and b's 1)
      assert.same({ ["mount one"] = true, ["mount two"] = true, ["mount four"] = true,
                    ["mount five"] = true, ["mount b3"] = true }, union)
      assert.equal("ok", s1["mount one"]); assert.equal("ok", s2["mount one"])
    end)

    it("a bad K/N is a usage error", function()
      for _, case in ipairs {
        { "0/2", "K must be from 1 to N %(2%), got 0" },
        { "3/2", "K must be from 1 to N %(2%), got 3" },
        { "1/0", "N must be from 1 to 1000000, got 0" },
        { "a/b", "K/N expected %(shard K of N, such as 2/4%), got 'a/b'" },
        { "2", "K/N expected" },
      } do
        assert.matches("^mountns: run: %-%-shard: " .. case[2] .. "[^\n]*\nexit=2$",
          cli("run --shard " .. case[1] .. " " .. a))
      end
      assert.matches("%-%-shard needs K/N\nexit=2$", cli("run " .. a .. " --shard"))
      local ok, err = pcall(function() runner.run({ a }, { shard = "2/1" }) end)
      assert.is_false(ok)
      assert.matches("bad argument #2 to 'run' %(option 'shard': K must be", err)
    end)
  end)

  describe("the protocol's new fields", function()
    it("event_problem checks index, seen and the listed event, both polarities", function()
      for _, ev in ipairs {
        { "result", name = "n", ok = true, secs = 0, index = 3 },
        { "listed", name = "n", index = 1 }, { "done", ok = true, seen = 0 },
        { "done", ok = false, err = "e", seen = 7 },
      } do
        assert.is_nil(runner.event_problem(ev))
      end
      for i, ev in ipairs {
        { "result", name = "n", ok = true, secs = 0, index = 0 },
        { "result", name = "n", ok = true, secs = 0, index = 1.5 },
        { "result", name = "n", ok = true, secs = 0, index = "1" },
        { "result", name = "n", ok = true, secs = 0, index = 2 ^ 31 },
        { "done", ok = true, seen = -1 }, { "done", ok = true, seen = 0 / 0 },
        { "listed", name = "n" }, { "listed", index = 1 }, { "listed", name = "n", index = 0 },
        { "listed", name = "n", index = 1, ok = true },
      } do
        assert.is_string(runner.event_problem(ev), "case " .. i)
      end
    end)

    it("a listed event forged outside --list is a protocol error", function()
      local f = write("forge.lua", script { "mount one" } .. [[
do
  local core, child = require "mountns.core", require "mountns.child"
  local body = child.encode("event", { { "listed", name = "FORGED", index = 1 } }, 1)
  for fd = 3, 64 do pcall(core.write_fd, fd, "o" .. string.format("%08x", #body) .. body) end
end
while true do end
]])
      local out = cli("run " .. f)
      assert.matches("^ok   mount one %(%d+ ms%)\nERROR [^\n]*forge%.lua %(0 ms%)\n    protocol "
        .. "error: a listed event outside %-%-list %(its process was killed", out)
      assert.matches("\n1 passed, 1 failed %(1 ERROR%)\nexit=1$", out)
      assert.not_matches("FORGED", out)
    end)
  end)

  describe("--fail-fast", function()
    it("stops at the first failure: the summary says what was not run, exit status 1",
      function()
      local c = write("c.lua", script { "c runs" })
      for _, jobs in ipairs { 1, 3 } do
        local out = cli("run -j " .. jobs .. " --fail-fast " .. a .. " " .. b .. " " .. c)
        assert.same({ ["mount one"] = "ok", ["mount two"] = "ok", ["trap three"] = "FAIL" },
          ran(out))
        assert.matches("\n2 passed, 1 failed %(stopped at the first failure by %-%-fail%-fast: "
          .. "the rest of [^\n]*a%.lua and 2 files after it not run%)\nexit=1$", out)
      end
      local tap = cli("run --tap --fail-fast " .. a .. " " .. c)
      assert.matches("\nnot ok 3 %- trap three\n.*\nBail out! stopped at the first failure", tap)
      -- without it: every scenario runs
      local out = cli("run " .. a .. " " .. b .. " " .. c)
      assert.equal("ok", ran(out)["c runs"])
      assert.equal("ok", ran(out)["mount five"])
      -- a run that passes is not stopped
      assert.matches("\n1 passed, 0 failed\nexit=0$", cli("run --fail-fast " .. c))
    end)
  end)

  describe("--fail-fast in report.order", function()
    it("halts at the first result that is neither a pass nor a skip, in file order", function()
      local order = require "mountns.report.order"
      local heard = {}
      local rep = order.new(function(event, _, r)
        if event == "scenario_end" then heard[#heard + 1] = r.name end
      end, nil, true)
      local f1, f2 = rep:add("one.lua"), rep:add("two.lua")
      rep:result(f2, { name = "two fails", status = "fail", secs = 0 }) -- held: not first
      assert.is_false(rep.halted)
      rep:result(f1, { name = "passes", status = "pass", secs = 0 })
      rep:result(f1, { name = "skipped", status = "skip", secs = 0 })
      assert.is_false(rep.halted)
      rep:result(f1, { name = "errs", status = "error", secs = 0 })
      assert.equal(f1, rep.halted)
      rep:result(f1, { name = "after", status = "pass", secs = 0 })
      rep:finish(f1); rep:finish(f2)
      assert.same({ "passes", "skipped", "errs" }, heard)
      -- without fail_fast: everything, in file order
      heard = {}
      rep = order.new(function(event, _, r)
        if event == "scenario_end" then heard[#heard + 1] = r.name end
      end)
      f1, f2 = rep:add("one.lua"), rep:add("two.lua")
      rep:result(f2, { name = "two fails", status = "fail", secs = 0 })
      rep:result(f1, { name = "errs", status = "error", secs = 0 })
      rep:finish(f1); rep:finish(f2)
      assert.same({ "errs", "two fails" }, heard)
      assert.is_false(rep.halted)
    end)
  end)

  describe("progress", function()
    it("goes to stderr in a pipe only with --progress, a line per file", function()
      local c = write("c.lua", script { "c runs" })
      local cmd = "cd " .. helper.ROOT .. " && " .. helper.lua_vars() .. " bin/mountns run "
      local err = helper.sh(cmd .. "--progress " .. c .. " " .. c .. " 2>&1 >/dev/null")
      assert.equal("run: 1/2 files, 1 passed, 0 failed\nrun: 2/2 files, 2 passed, 0 failed", err)
      assert.equal("", helper.sh(cmd .. c .. " " .. c .. " 2>&1 >/dev/null"))
      -- the report on stdout is the same with or without it
      local function report(opt)
        return (helper.sh(cmd .. opt .. c .. " " .. c .. " 2>/dev/null"):gsub("%(%d+ ms%)", ""))
      end
      assert.equal(report(""), report("--progress "))
    end)

    it("of check --random: a line per batch on stderr with --progress, else none", function()
      local tmp = helper.tempdir()
      local cmd = "cd " .. helper.ROOT .. " && " .. helper.lua_vars() .. " bin/mountns check "
        .. "--random 3 --per 2 --ops 2 --seed 7 --out " .. tmp .. " "
      local err = helper.sh(cmd .. "--progress 2>&1 >/dev/null")
      assert.matches("^check: 2/3 sequences, %d+ s\ncheck: 3/3 sequences, %d+ s$", err)
      assert.equal("", helper.sh(cmd .. "2>&1 >/dev/null"))
      assert.matches("0 divergences", helper.sh(cmd .. "--progress 2>/dev/null"))
      os.execute("rm -rf " .. tmp)
    end)

    it("is a line rewritten in place on a terminal, erased before each report line", function()
      if os.execute("command -v script >/dev/null") ~= true
          and os.execute("command -v script >/dev/null") ~= 0 then
        return pending("no script(1)")
      end
      local c = write("c.lua", script { "c runs" })
      -- (a machine without pseudo-terminals, as make matrix's guests: no
      -- terminal to show it on; asked of script(1) itself, so a run that
      -- broke under one still fails here)
      if not helper.sh("script -qec tty /dev/null 2>&1"):find("/dev/pts/", 1, true) then
        return pending("script(1) finds no pseudo-terminal here")
      end
      local out = helper.sh("cd " .. helper.ROOT .. " && script -qec \"" .. helper.lua_vars()
        .. " bin/mountns run " .. c .. " " .. c .. "\" /dev/null")
      assert.truthy(out:find("\rrun: 1/2 files, 1 passed, 0 failed\27[K", 1, true), out)
      assert.truthy(out:find("\r\27[K2 passed, 0 failed", 1, true), out)
    end)
  end)
end)

describe("mountns report merge", function()
  local merge = require "mountns.report.merge"
  local SCHEMAS = helper.ROOT .. "/../shared/report-schemas"
  local function has(cmd)
    local r = os.execute(cmd .. " >/dev/null 2>&1")
    return r == true or r == 0
  end
  local jsonschema = has("python3 -c 'import jsonschema'") and has("test -d " .. SCHEMAS)
  local xmllint = has("command -v xmllint") and has("test -d " .. SCHEMAS)
  setup(function() dir = helper.tempdir() end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  -- A KCIDB v5.3 report of shard (or nil: none named) with tests
  -- {file, index}...: the checkout and build every shard describes alike.
  local function kcidb(shard, tests)
    local t = {}
    for _, x in ipairs(tests) do
      t[#t + 1] = string.format('{"id": "mountns:%s.%d", "build_id": "mountns:b1", '
        .. '"origin": "mountns", "path": "mountns.%s.%d", "status": "PASS"%s}', x[1], x[2],
        x[1], x[2], shard and ', "misc": {"shard": "' .. shard .. '"}' or "")
    end
    return '{"version": {"major": 5, "minor": 3},\n'
      .. '"checkouts": [{"id": "mountns:c1", "origin": "mountns"}],\n'
      .. '"builds": [{"id": "mountns:b1", "checkout_id": "mountns:c1", "origin": "mountns"}],\n'
      .. '"tests": [' .. table.concat(t, ",\n") .. "]}\n"
  end

  -- A JUnit report of shard with one testsuite per file: {file, {names}}...
  local function junit(shard, suites)
    local out = { '<?xml version="1.0" encoding="UTF-8"?>', '<testsuites name="mountns">' }
    for _, s in ipairs(suites) do
      out[#out + 1] = string.format('<testsuite name="%s" tests="%d" failures="0" errors="0" '
        .. 'time="0.5">', s[1], #s[2])
      if shard then
        out[#out + 1] = '<properties><property name="mountns.shard" value="' .. shard
          .. '"/></properties>'
      end
      for _, name in ipairs(s[2]) do
        out[#out + 1] = string.format('<testcase classname="%s" name="%s" time="0.25">'
          .. '<system-out>said &lt;%s&gt;</system-out></testcase>', s[1], name, name)
      end
      out[#out + 1] = "</testsuite>"
    end
    out[#out + 1] = "</testsuites>"
    return table.concat(out, "\n") .. "\n"
  end

  local function run(out, ...)
    local args = {}
    for i, text in ipairs { ... } do args[i] = write("in" .. i, text) end
    return cli("report merge " .. out .. " " .. table.concat(args, " "))
  end

  it("merges KCIDB shards into one valid report, each scenario once", function()
    local out = dir .. "/merged.json"
    assert.equal("exit=0", run(out, kcidb("2/2", { { "a", 2 }, { "b", 1 } }),
                                    kcidb("1/2", { { "a", 1 }, { "a", 3 } })))
    local doc = merge.json_decode(helper.read(out))
    assert.same({ major = 5, minor = 3 }, doc.version)
    assert.equal(1, #doc.checkouts); assert.equal(1, #doc.builds)
    local ids = {}
    for _, t in ipairs(doc.tests) do ids[#ids + 1] = t.id end
    table.sort(ids)
    assert.same({ "mountns:a.1", "mountns:a.2", "mountns:a.3", "mountns:b.1" }, ids)
    if jsonschema then
      assert.equal("", helper.sh("python3 -c 'import json,sys,jsonschema; jsonschema.validate("
        .. "json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' " .. SCHEMAS
        .. "/kcidb-v5.3.schema.json " .. out .. " 2>&1"))
    end
  end)

  it("fails, writing nothing, on a scenario twice, a shard missing, a gap", function()
    local out = dir .. "/no.json"
    assert.matches("^mountns: report merge: scenario mountns:a%.1 ran twice: in [^\n]*in1 and "
      .. "[^\n]*in2\nexit=1$", run(out, kcidb("1/2", { { "a", 1 } }), kcidb("2/2", { { "a", 1 } })))
    assert.matches("^mountns: report merge: shard 2/3 missing\nexit=1$",
      run(out, kcidb("1/3", { { "a", 1 } }), kcidb("3/3", { { "a", 3 } })))
    assert.matches("^mountns: report merge: shard 1/2 twice: ",
      run(out, kcidb("1/2", { { "a", 1 } }), kcidb("1/2", { { "a", 2 } })))
    assert.matches("^mountns: report merge: scenario mountns%.a%.2 is in no report %(a has 3 "
      .. "after it%)\nexit=1$", run(out, kcidb(nil, { { "a", 1 } }), kcidb(nil, { { "a", 3 } })))
    assert.matches("names no shard", run(out, kcidb("1/2", { { "a", 1 } }),
      kcidb(nil, { { "a", 2 } })))
    assert.matches("not a KCIDB v5%.3 report", run(out, '{"version": {"major": 4, "minor": 0}}'))
    assert.is_nil(io.open(out))
    -- the same reports, each scenario once: merged
    assert.equal("exit=0", run(out, kcidb(nil, { { "a", 1 } }), kcidb(nil, { { "a", 2 } })))
  end)

  it("merges JUnit shards into one valid document, a testsuite per file", function()
    local out = dir .. "/merged.xml"
    assert.equal("exit=0", run(out, junit("1/2", { { "a.lua", { "one", "three" } },
                                                   { "b.lua", { "one" } } }),
                                    junit("2/2", { { "a.lua", { "two" } } })))
    local root = merge.xml_parse(helper.read(out))
    assert.equal("testsuites", root.tag)
    assert.equal("4", merge.attr(root, "tests"))
    local suites = {}
    for _, s in ipairs(root.children) do
      if s.tag == "testsuite" then
        local names = {}
        for _, c in ipairs(s.children) do
          if c.tag == "testcase" then names[#names + 1] = merge.attr(c, "name") end
        end
        suites[merge.attr(s, "name")] = { merge.attr(s, "tests"), table.concat(names, " ") }
      end
    end
    assert.same({ ["a.lua"] = { "3", "one three two" }, ["b.lua"] = { "1", "one" } }, suites)
    assert.truthy(helper.read(out):find("said &lt;two&gt;", 1, true)) -- text kept as written
    assert.falsy(helper.read(out):find("mountns.shard", 1, true)) -- no shard's name
    if xmllint then
      assert.matches("validates$", helper.sh("xmllint --noout --schema " .. SCHEMAS
        .. "/junit-10.xsd " .. out .. " 2>&1"))
    end
  end)

  it("fails on a JUnit scenario twice or a shard missing", function()
    local out = dir .. "/no.xml"
    assert.matches("^mountns: report merge: scenario one of a%.lua ran twice: ",
      run(out, junit("1/2", { { "a.lua", { "one" } } }), junit("2/2", { { "a.lua", { "one" } } })))
    assert.matches("^mountns: report merge: shard 2/2 missing\nexit=1$",
      run(out, junit("1/2", { { "a.lua", { "one" } } })))
    assert.is_nil(io.open(out))
    -- one name in two files is two scenarios
    assert.equal("exit=0", run(out, junit(nil, { { "a.lua", { "one" } } }),
                                    junit(nil, { { "b.lua", { "one" } } })))
  end)

  it("refuses reports of two formats, bad text and a bad command line", function()
    local out = dir .. "/x"
    assert.matches("in2 is junit, [^\n]*in1 kcidb\nexit=1$",
      run(out, kcidb(nil, { { "a", 1 } }), junit(nil, { { "a.lua", { "one" } } })))
    assert.matches("in1: not valid JSON: offset %d+: ", run(out, '{"version": '))
    assert.matches("in1: not valid XML: offset %d+: </b> closes <a>", run(out, "<a></b>"))
    assert.matches("neither JUnit XML nor KCIDB JSON", run(out, "hello"))
    assert.matches("^mountns: report merge: OUT and at least one IN expected[^\n]*\nexit=2$",
      cli("report merge " .. out))
    assert.matches("^mountns: report: unknown subcommand split[^\n]*\nexit=2$",
      cli("report split x y"))
    assert.matches("^mountns: report merge: [^\n]*/nothing[^\n]*No such file[^\n]*\nexit=1$",
      cli("report merge " .. out .. " " .. dir .. "/nothing"))
  end)

  it("decodes and encodes JSON as written", function()
    local v = merge.json_decode('{"a": [1, 2.5, -3e2, "\\u00e9\\ud83d\\ude00\\n", true, null, {}],'
      .. ' "b": []}')
    assert.same({ 1, 2.5, -300, "é😀\n", true, merge.null, {} }, v.a)
    assert.is_true(merge.is_array(v.b))
    assert.equal('{\n  "a": [\n    1,\n    2.5,\n    -300,\n    "é😀\\n",\n    true,\n    null,\n'
      .. '    {}\n  ],\n  "b": []\n}', merge.json_encode(v))
    for _, bad in ipairs { "[1,]", '{"a" 1}', "[1", '"\\q"', "01x", "" } do
      assert.is_false(pcall(merge.json_decode, bad), bad)
    end
  end)
end)

describe("the command line's conventions", function()
  local clim = require "mountns.cli"

  it("run, show, check and report --help print their own usage, exit status 0", function()
    for _, cmd in ipairs { "run", "show", "check", "report" } do
      for _, flag in ipairs { "--help", "-h" } do
        local out = cli(cmd .. " " .. flag)
        assert.matches("^usage: mountns " .. cmd .. " ", out)
        assert.matches("\noptions:\n", out)
        assert.matches("\nexit=0$", out)
        assert.equal(clim.help(cmd) .. "exit=0", out)
        -- no other command's usage in it
        for _, other in ipairs { "run", "show", "check", "report" } do
          if other ~= cmd then
            assert.not_matches("usage: mountns " .. other .. " ", out)
            assert.not_matches("\n       mountns " .. other .. " ", out)
          end
        end
      end
    end
    -- --help after other options, after --kernel: the help, nothing run
    assert.matches("^usage: mountns run .*exit=0$", cli("run --kernel 6.1 x.lua --help"))
    assert.matches("^usage: mountns show .*exit=0$", cli("show --json --help"))
    assert.matches("^usage: mountns check .*exit=0$", cli("check --random 5 --help"))
    -- a file named --help after "--" is a file
    assert.matches("ERROR %-%-help", cli("run -- --help"))
    -- mountns help CMD, and the overview
    assert.equal(clim.help("run") .. "exit=0", cli("help run"))
    local all = cli("--help")
    assert.matches("^usage: mountns run ", all)
    for _, c in ipairs(clim.COMMANDS) do
      for _, o in ipairs(c.options) do
        if o[1] ~= "-h, --help" then
          assert.truthy(all:find(clim.option_head(o), 1, true), c.name .. " " .. o[1])
        end
      end
    end
    -- an unknown option is still a usage error with status 2
    assert.matches("^mountns: run: unknown option %-%-helps\nexit=2$", cli("run --helps x"))
  end)

  it("every option in a command's usage is taken by its parser; a made-up one is not",
    function()
    -- each option of the table, alone, is taken by its parser (no "unknown
    -- option"/"unexpected argument"), and a made-up one is not
    -- (show: with --watch --timeout 0.01, so no probe watches for ever;
    -- run: a file that is not there, in a directory of the spec's own)
    local tmp = helper.tempdir()
    local probe = { run = "run %s " .. tmp .. "/x.lua", check = "check %s",
                    show = "show %s --watch --timeout 0.01" }
    for _, c in ipairs(clim.COMMANDS) do
      if probe[c.name] then
        for _, o in ipairs(c.options) do
          for name in o[1]:gmatch("[^,%s]+") do
            if name ~= "-h" and name ~= "--help" and name ~= "--kernel" then
              local out = cli(string.format(probe[c.name], name) .. " </dev/null")
              assert.not_matches("unknown option", out, name)
              assert.not_matches("unexpected argument " .. name:gsub("%-", "%%-"), out, name)
            end
          end
        end
        local out = cli(string.format(probe[c.name], "--no-such-option"))
        assert.matches("exit=2$", out)
      end
    end
    os.execute("rm -rf " .. tmp)
  end)

  it("--version prints the version, whose one home is mountns._VERSION, as the rockspec's",
    function()
    local mountns = require "mountns"
    local rockspec = helper.sh("ls " .. helper.ROOT .. "/rockspec/")
    local version = assert(rockspec:match("^mountns%-(.+)%.rockspec$"))
    assert.equal(version, mountns._VERSION)
    assert.matches("^mountns " .. version:gsub("%p", "%%%0") .. " %((.-)%)\nexit=0$",
      cli("--version"))
  end)

  it("the man page and the completions in the tree are what doc/mkusage.lua makes", function()
    local mk = helper.sh("cd " .. helper.ROOT .. " && " .. helper.lua_vars()
      .. " doc/mkusage.lua man | cmp - doc/mountns.1 && echo same")
    assert.equal("same", mk)
    for kind, file in pairs { bash = "mountns.bash", zsh = "_mountns" } do
      assert.equal("same", helper.sh("cd " .. helper.ROOT .. " && " .. helper.lua_vars()
        .. " doc/mkusage.lua " .. kind .. " | cmp - doc/completion/" .. file .. " && echo same"))
    end
    local page = helper.read(helper.ROOT .. "/doc/mountns.1")
    for _, c in ipairs(clim.COMMANDS) do
      assert.truthy(page:find('.SS "mountns ' .. c.name .. '"', 1, true), c.name)
      for _, o in ipairs(c.options) do
        assert.truthy(page:find("\\fB" .. o[1]:gsub("%-", "\\-") .. "\\fR", 1, true), o[1])
      end
    end
    if os.execute("command -v man >/dev/null 2>&1") == true then
      -- (man(1) runs groff under seccomp: without ASan's preload, whose log
      -- it could not open)
      local text = helper.sh("env -u LD_PRELOAD -u ASAN_OPTIONS MANWIDTH=80 man -l "
        .. helper.ROOT .. "/doc/mountns.1 2>&1")
      assert.matches("\nCOMMANDS\n", text)
      assert.matches("%-%-shard K/N", text)
    end
  end)

  it("bash completes commands, each command's options and their values", function()
    local function complete(...)
      local w = { ... }
      return helper.sh("bash -c 'source " .. helper.ROOT .. "/doc/completion/mountns.bash; "
        .. "COMP_WORDS=(" .. table.concat(w, " ") .. "); COMP_CWORD=" .. (#w - 1)
        .. "; _mountns; echo \"${COMPREPLY[*]}\"'")
    end
    assert.equal("show", complete("mountns", "sh"))
    assert.equal("--strict --shard", complete("mountns", "run", "--s")) -- (usage order)
    assert.equal("--explain", complete("mountns", "show", "--ex"))
    assert.equal("--seed", complete("mountns", "check", "--se"))
    assert.equal("6.1 6.12", complete("mountns", "run", "--kernel", "6.1"))
    assert.equal("", complete("mountns", "run", "--zz"))
    assert.equal("", complete("mountns", "show", "--shard"))   -- run's, not show's
    assert.equal("", complete("mountns", "run", "--shard", "")) -- K/N: nothing to offer
  end)

  it("zsh's completion is valid zsh", function()
    if os.execute("command -v zsh >/dev/null 2>&1") ~= true then
      return pending("no zsh here")
    end
    assert.equal("ok", helper.sh("zsh -n " .. helper.ROOT .. "/doc/completion/_mountns && echo ok"))
  end)
end)

describe("the test suite's own command lines", function()
  it("make test refuses an output that would be one document per busted, not TAP", function()
    local function args(a)
      return helper.sh("cd " .. helper.ROOT .. " && make --no-print-directory -s test-args "
        .. "BUSTED_ARGS='" .. a .. "' 2>&1; echo \"exit=$?\"")
    end
    for _, a in ipairs { "-o junit", "--output=junit", "-o json" } do
      local out = args(a)
      assert.matches("^make test: BUSTED_ARGS='" .. a:gsub("%p", "%%%0") .. "': spec/parallel "
        .. "runs the spec files in several busted processes, which would print one document "
        .. "each: refused%. One JUnit document: [^\n]* %-o junit spec", out)
      assert.matches("\nexit=2$", out)
    end
    for _, a in ipairs { "", "-o TAP", "--exclude-tags=model" } do
      assert.equal("exit=0", args(a))
    end
  end)

  it("luarocks test runs make test with the Lua luarocks targets, busted from anywhere",
    function()
    local env = {}
    local chunk = assert(loadfile(helper.ROOT .. "/rockspec/mountns-scm-1.rockspec", "t", env))
    if setfenv then setfenv(chunk, env) end -- luacheck: ignore (5.1)
    chunk()
    -- not "busted": luarocks would fetch the busted rock, offline or not
    assert.same({ type = "command", script = "spec/tools/luarocks-test.lua" }, env.test)
    for _, lua in ipairs { "lua5.1", "lua5.4", "luajit" } do
      if os.execute("command -v " .. lua .. " >/dev/null") == true
          or os.execute("command -v " .. lua .. " >/dev/null") == 0 then
        assert.equal("make test LUA=" .. lua .. " BUSTED_ARGS='-o TAP --filter=x'",
          helper.sh("cd " .. helper.ROOT .. " && MOUNTNS_LUAROCKS_TEST_DRY=1 " .. lua
            .. " spec/tools/luarocks-test.lua -o TAP --filter=x"))
      end
    end
  end)
end)
