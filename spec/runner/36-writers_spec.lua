-- The report writers behind one interface (mountns.report): the plain and
-- TAP writers driven with synthetic events render exactly what `mountns
-- run` printed before they were writers (pass, fail, error, a golden text,
-- notes, a run interrupted or stopped); report.order sends a later
-- file's events only once the files before it are reported, and a stop
-- ends the current file and no other; a writer object passed to
-- runner.run (`writers`) hears every event of a real run once, in file
-- order, and nothing reaches stdout but what the writers write.
local helper = require "helper"
local report = require "mountns.report"
local plain = require "mountns.report.plain"
local tap = require "mountns.report.tap"
local runner = require "mountns.runner"

-- a file that keeps what is written, and whether the last thing done was a
-- flush (a writer flushes each line: a run killed has shown what it had)
local function buffer()
  local b = { parts = {} }
  function b:write(...)
    for _, s in ipairs { ... } do self.parts[#self.parts + 1] = s end
    self.flushed = false
    return self
  end
  function b:flush() self.flushed = true end
  function b:text() return table.concat(self.parts) end
  return b
end

local A = { path = "dir/a.lua", index = 1 }
local B = { path = "b.lua", index = 2 }

-- One run's events: a print with an escape, a pass with notes and a golden
-- text (a name with a newline and a would-be directive), a failure with a
-- multi-line diagnostic (a tab, a backslash already escaped, an ESC) and a
-- golden text it must not show, the runner's error on the second file.
local function drive(w, stop)
  local function tell(event, ...)
    if w[event] then w[event](w, ...) end
  end
  tell("run_start", { files = { A.path, B.path } })
  tell("file_start", A)
  tell("output", A, "hello\27[1m")
  tell("scenario_end", A, { n = 1, index = 1, name = "mounts /X\n# TODO", status = "pass",
    secs = 0.0123, golden = "ns1\n/ x\n\n/ y\n", notes = { "not modelled: ns:exec" } })
  tell("scenario_end", A, { n = 2, index = 2, name = "fails", status = "fail", secs = 0.002,
    message = "a.lua:3: expected a mount \27[2J\n\tat /m\\134x", golden = "not shown\n" })
  tell("file_end", A)
  tell("file_start", B)
  tell("output", B, "no newline")
  tell("scenario_end", B, { n = 3, index = 1, name = "b.lua exited early", status = "error",
    secs = 0, message = "its process exited with status 3 before the script ended" })
  tell("file_end", B)
  tell("run_end", { total = 3, passed = 1, failed = 2, stop = stop })
end

local function render(new, stop)
  local out = buffer()
  drive(new(out), stop)
  assert.is_true(out.flushed, "the last line is flushed")
  return out:text()
end

local PLAIN_BODY = table.concat({
  "# hello\\033[1m",
  "ok   mounts /X\\012# TODO (12 ms)",
  "    note: not modelled: ns:exec",
  "    ns1",
  "    / x",
  "",
  "    / y",
  "FAIL fails (2 ms)",
  "    a.lua:3: expected a mount \\033[2J",
  "    \tat /m\\134x",
  "# no newline",
  "ERROR b.lua exited early (0 ms)",
  "    its process exited with status 3 before the script ended",
  "", }, "\n")

local TAP_BODY = table.concat({
  "TAP version 13",
  "# hello\\033[1m",
  "ok 1 - mounts /X\\012\\# TODO",
  "# note: not modelled: ns:exec",
  "# ns1",
  "# / x",
  "#",
  "# / y",
  "not ok 2 - fails",
  "# a.lua:3: expected a mount \\033[2J",
  "# \tat /m\\134x",
  "# no newline",
  "not ok 3 - b.lua exited early",
  "# ERROR",
  "# its process exited with status 3 before the script ended",
  "", }, "\n")

local function has_tap_parser()
  local r = os.execute("perl -MTAP::Parser -e 1 >/dev/null 2>&1")
  return r == true or r == 0
end

-- what .ci/tap-check (perl's TAP::Parser) makes of a stream, and its exit
local function tap_check(text)
  local dir = helper.tempdir()
  local path = helper.write(dir, "stream.tap", text)
  local got = helper.sh(helper.ROOT .. "/.ci/tap-check < " .. path .. " 2>&1; echo \"exit=$?\"")
  os.execute("rm -rf " .. dir)
  return got
end

describe("report writers (mountns.report)", function()
  describe("driven with synthetic events", function()
    it("plain: ok/FAIL lines, diagnostics and notes indented, golden for a pass only",
      function()
      assert.equal(PLAIN_BODY .. "1 passed, 2 failed\n", render(plain.new))
    end)

    it("plain: an interrupted run and a stopped one say why in the summary, escaped",
      function()
      assert.equal(PLAIN_BODY .. "1 passed, 2 failed (interrupted)\n",
        render(plain.new, "interrupted"))
      assert.equal(PLAIN_BODY .. "1 passed, 2 failed (stopped: out of\\012memory)\n",
        render(plain.new, "stopped: out of\nmemory"))
    end)

    it("TAP: numbered points, everything else a # line, the plan at the end", function()
      local text = render(tap.new)
      assert.equal(TAP_BODY .. "1..3\n# 1 passed, 2 failed\n", text)
      if has_tap_parser() then
        local got = tap_check(text)
        -- the name's # escaped: a description, not a TODO directive
        assert.truthy(got:find("\nok 1 - mounts /X\\012\\# TODO\n", 1, true), got)
        assert.truthy(got:find("\nnot ok 2 - fails\n", 1, true), got)
        assert.matches("\nplan 1..3\n", got)
        assert.matches("\nexit=0$", got)
      end
    end)

    it("TAP: an interrupted or stopped run bails out, with no plan", function()
      local text = render(tap.new, "interrupted")
      assert.equal(TAP_BODY .. "Bail out! interrupted\n# 1 passed, 2 failed (interrupted)\n",
        text)
      assert.equal(TAP_BODY .. "Bail out! stopped: out of\\012memory\n"
        .. "# 1 passed, 2 failed (stopped: out of\\012memory)\n",
        render(tap.new, "stopped: out of\nmemory"))
      if has_tap_parser() then
        local got = tap_check(text)
        assert.matches("\nbailout interrupted\n", got)
        assert.not_matches("\nplan ", got)
        assert.not_matches("\nexit=0$", got)
      end
    end)

    it("write to io.stdout when given no file", function()
      local saved = io.stdout
      local out = buffer()
      rawset(io, "stdout", out)
      local ok, err = pcall(function()
        local w = plain.new()
        w:run_end { total = 0, passed = 0, failed = 0 }
      end)
      rawset(io, "stdout", saved)
      assert(ok, err)
      assert.equal("0 passed, 0 failed\n", out:text())
    end)
  end)

  describe("report.order", function()
    local order = require "mountns.report.order"
    local function recorder()
      local heard = {}
      return heard, function(event, a, b)
        local s = event
        if a and a.path then s = s .. " " .. a.path end
        if event == "output" then s = s .. " " .. b end
        if event == "scenario_end" then
          s = string.format("%s %d/%d %s %s", s, b.n, b.index, b.status, b.name)
        end
        if event == "run_end" then
          s = string.format("%s %d %d %d %s", s, a.total, a.passed, a.failed, tostring(a.stop))
        end
        heard[#heard + 1] = s
      end
    end

    it("holds a later file's items until the files before it are reported", function()
      local heard, tell = recorder()
      local rep = order.new(tell)
      local a, b = rep:add("a"), rep:add("b")
      rep:output(b, "b line\nb half")
      rep:result(b, { name = "b1", status = "pass", secs = 0 })
      assert.same({}, heard)
      rep:output(a, "a half")
      rep:result(a, { name = "a1", status = "fail", secs = 0 })
      rep:error(a, "a", "the script ran no scenario", 0)
      assert.same({ "file_start a", "output a a half", "scenario_end a 1/1 fail a1",
                    "scenario_end a 2/2 error a" }, heard)
      rep:finish(a)
      assert.same({ "file_start a", "output a a half", "scenario_end a 1/1 fail a1",
                    "scenario_end a 2/2 error a", "file_end a", "file_start b",
                    "output b b line", "output b b half", "scenario_end b 3/1 pass b1" }, heard)
      rep:finish(b)
      local summary = rep:run_end(nil)
      assert.same({ total = 3, passed = 1, failed = 2, skipped = 0,
                    counts = { pass = 1, fail = 1, error = 1, timeout = 0, skip = 0 } }, summary)
      assert.same({ "file_end b", "run_end 3 1 2 nil" }, { heard[10], heard[11] })
      assert.equal(11, #heard)
    end)

    it("a stop held: the current file's rest and its end, no later file", function()
      local heard, tell = recorder()
      local rep = order.new(tell)
      local a, b = rep:add("a"), rep:add("b")
      rep:result(b, { name = "b1", status = "pass", secs = 0 })
      rep:result(a, { name = "a1", status = "pass", secs = 0 })
      rep:hold()
      rep:output(a, "printed\nthen killed")
      assert.equal(2, #heard)
      assert.same({ total = 1, passed = 1, failed = 0, skipped = 0, stop = "interrupted",
                    counts = { pass = 1, fail = 0, error = 0, timeout = 0, skip = 0 } },
        rep:run_end("interrupted"))
      assert.same({ "file_start a", "scenario_end a 1/1 pass a1", "output a printed",
                    "output a then killed", "file_end a", "run_end 1 1 0 interrupted" }, heard)
    end)
  end)

  describe("report.subscribers", function()
    it("sends each event to every writer that has its method, in the list's order", function()
      local heard = {}
      local function writer(tag, events)
        local w = {}
        for _, e in ipairs(events) do
          w[e] = function(self, x)
            assert.equal(w, self)
            heard[#heard + 1] = tag .. ":" .. e .. ":" .. tostring(x)
          end
        end
        return w
      end
      local tell = report.subscribers({ writer("1", report.EVENTS), writer("2", { "run_end" }) },
        "run", 2)
      for i, e in ipairs(report.EVENTS) do tell(e, i) end
      assert.same({ "1:run_start:1", "1:file_start:2", "1:output:3", "1:scenario_end:4",
                    "1:scenario_listed:5", "1:file_end:6", "1:run_end:7", "2:run_end:7" }, heard)
    end)

    it("refuses what is not a list of writers, at runner.run's caller", function()
      local cases = {
        { "yes", "option 'writers': a list of writers expected, got string" },
        { { 1 }, "option 'writers': writer 1 is a number %(a table expected%)" },
        { { {}, { file_end = "x" } },
          "option 'writers': writer 2's file_end is a string %(a function expected%)" },
        { { x = {} }, "option 'writers': a list expected %(it has the key x%)" },
      }
      for _, case in ipairs(cases) do
        local ok, err = pcall(function() runner.run({ "x.lua" }, { writers = case[1] }) end)
        assert.is_false(ok)
        assert.matches("^[^:]*36%-writers_spec%.lua:%d+: bad argument #2 to 'run' %("
          .. case[2] .. "%)$", err)
      end
      local ok, err = pcall(function()
        runner.run({ "x.lua" }, { tap = true, writers = { tap.new() } })
      end)
      assert.is_false(ok)
      assert.matches("36%-writers_spec%.lua:%d+: bad argument #2 to 'run' %(option 'tap' "
        .. "with option 'writers'", err)
    end)
  end)

  describe("a writer passed to runner.run", function()
    local dir
    setup(function() dir = helper.tempdir() end)
    teardown(function() os.execute("rm -rf " .. dir) end)

    -- A run of files through runner.run, in a Lua process of its own (the
    -- run blocks SIGINT and SIGTERM for good): two recording writers; each
    -- event as a line, the second writer's log, stdout, and the exit status.
    local function run_with_writers(files, raise_at)
      local driver = helper.write(dir, "driver.lua", [[
        local runner = require "mountns.runner"
        local report = require "mountns.report"
        local files, raise_at = {}, os.getenv("RAISE_AT")
        for i = 1, #arg do files[i] = arg[i] end
        local function base(path) return path:match("[^/]*$") end
        local function line(e, a, b)
          if e == "run_start" then return e .. " " .. #a.files end
          if e == "run_end" then
            return string.format("%s %d %d %d %s", e, a.total, a.passed, a.failed,
              tostring(a.stop):match("^[^:]*"))
          end
          local s = e .. " " .. a.index .. " " .. base(a.path)
          if e == "output" then return s .. " " .. b end
          if e == "scenario_end" then
            return string.format("%s %d %d %s %s", s, b.n, b.index, b.status, base(b.name))
          end
          return s
        end
        local logs = { {}, {} }
        local writers = {}
        for k = 1, 2 do
          local w = {}
          for _, e in ipairs(report.EVENTS) do
            w[e] = function(self, ...)
              assert(self == w)
              local l = line(e, ...)
              table.insert(logs[k], l)
              if k == 2 and l == raise_at then error("writer broke", 0) end
            end
          end
          writers[k] = w
        end
        local code = runner.run(files, { writers = writers, jobs = 2 })
        io.write("second writer: ",
          table.concat(logs[1], "\n") == table.concat(logs[2], "\n") and "same" or "differs",
          "\n", table.concat(logs[1], "\n"), "\nexit=", code, "\n")
      ]])
      local cmd = string.format("%s %s %s", helper.lua_vars(), driver, table.concat(files, " "))
      if raise_at then cmd = "RAISE_AT='" .. raise_at .. "' " .. cmd end
      return helper.sh(cmd .. " 2>&1")
    end

    local function files()
      local a = helper.write(dir, "a.lua", [[
        local mountns = require "mountns"
        local expect = require "mountns.expect"
        print("a says")
        mountns.scenario("mounted", function(ns)
          ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs")
          expect.mounted(ns, "/X")
        end)
        mountns.scenario("not mounted", function(ns)
          ns:mkdir("/Y")
          io.write("half a line")
          expect.mounted(ns, "/Y")
        end)
      ]])
      local b = helper.write(dir, "b.lua", [[
        local mountns = require "mountns"
        local expect = require "mountns.expect"
        mountns.scenario("b mounted", function(ns)
          ns:mkdir("/Z"); ns:mount("z", "/Z", "tmpfs")
          expect.mounted(ns, "/Z")
        end)
        error("b is done")
      ]])
      return { a, b }
    end

    it("hears every event once, in file order (-j 2), and stdout has nothing else",
      function()
      assert.equal(table.concat({
        "second writer: same",
        "run_start 2",
        "file_start 1 a.lua",
        "output 1 a.lua a says",
        "scenario_end 1 a.lua 1 1 pass mounted",
        "output 1 a.lua half a line",
        "scenario_end 1 a.lua 2 2 fail not mounted",
        "file_end 1 a.lua",
        "file_start 2 b.lua",
        "scenario_end 2 b.lua 3 1 pass b mounted",
        "scenario_end 2 b.lua 4 2 error b.lua",
        "file_end 2 b.lua",
        "run_end 4 2 2 nil",
        "exit=1",
      }, "\n"), run_with_writers(files()))
    end)

    it("a writer that raises stops the run: the file being reported ends, no later file",
      function()
      assert.equal(table.concat({
        "second writer: same",
        "run_start 2",
        "file_start 1 a.lua",
        "output 1 a.lua a says",
        "scenario_end 1 a.lua 1 1 pass mounted",
        "file_end 1 a.lua",
        "run_end 1 1 0 stopped",
        "exit=1",
      }, "\n"), run_with_writers(files(), "scenario_end 1 a.lua 1 1 pass mounted"))
    end)
  end)
end)
