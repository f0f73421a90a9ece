-- Bounds a scenario cannot defeat (issue 23): whatever a scenario does
-- (closes its fds and loops, writes garbage or forged frames into them),
-- its timeout and Ctrl-C hold, in `mountns run` and in a script that calls
-- isolate or scenario itself; the runner takes nothing it has not checked;
-- running out of fds, SIGTERM: a clear line, the summary, a non-zero exit.
-- Every run here is in a subprocess bounded by timeout(1), so code that
-- hangs fails the spec instead of holding the suite.
local helper = require "helper"
local core = require "mountns.core"
local runner = require "mountns.runner"

local ROOT = helper.ROOT
local passing = helper.passing_scenario

local dir
local function write(name, text) return helper.write(dir, name, text) end

-- `INTERPRETER ARGS` from the tree's root, killed after 60 s (timeout(1)
-- in the foreground: a signal sent to it goes to the interpreter alone),
-- after the shell command `before`; its output, stderr included, and a
-- last line "exit=N" (137: it hung, killed).
local LIMIT = 60
local function bounded_cmd(args)
  local vars, interp = helper.lua_vars():match("^(.*) (%S+)$")
  return vars .. " timeout --foreground -s KILL " .. LIMIT .. " " .. interp .. " " .. args
end
local function bounded(args, before)
  return helper.sh("cd " .. ROOT .. " && " .. (before or "") .. bounded_cmd(args)
    .. " 2>&1; echo \"exit=$?\"")
end
local function run(args, before) return bounded("bin/mountns run " .. args, before) end

-- The statement that writes a frame into every fd from 3 to 64 (those it
-- cannot write are skipped): a forged runner event `ev` (Lua source of a
-- table), or the raw bytes `raw`.
local function write_everywhere(ev, raw)
  return string.format([[
  do
    local core, child = require "mountns.core", require "mountns.child"
    local bytes = %s
    for fd = 3, 64 do pcall(core.write_fd, fd, bytes) end
  end
]], raw and string.format("%q", raw) or
    "'o' .. string.format('%08x', #child.encode('event', { " .. ev .. " }, 1)) "
    .. ".. child.encode('event', { " .. ev .. " }, 1)")
end

local CLOSE_ALL = "for fd = 3, 64 do pcall(core.close_fd, fd) end\n"

describe("bounds a scenario cannot defeat", function()
  setup(function() dir = helper.tempdir() end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  describe("the timeout holds", function()
    it("in mountns run: a scenario that closes its fds and loops is killed, the run goes on",
      function()
      local f = write("closes.lua", [[
        local mountns = require "mountns"
        local core = require "mountns.core"
        mountns.scenario("daemon-like", function() ]] .. CLOSE_ALL .. [[ while true do end end)
      ]] .. passing("after it", "a", "after"))
      local out = run("--timeout 1 " .. f)
      assert.matches("^TIMEOUT daemon%-like %(%d+ ms%)\n    isolate: child %d+ ran past its "
        .. "timeout of 1 s and was killed %(it closed its result pipe without a result%)\n", out)
      -- the next scenario ran on the kernel: its tmpfs was mounted
      assert.matches("\n# mounted after\nok   after it %(%d+ ms%)\n1 passed, 1 failed %(1 %u+%)\n"
        .. "exit=1$",
        out)
    end)

    it("in mountns run: a scenario writing a bad frame header into its fds is killed", function()
      local f = write("header.lua", [[
        local mountns = require "mountns"
        mountns.scenario("garbage", function()
        ]] .. write_everywhere(nil, "oZZZZZZZZ") .. [[
          while true do end
        end)
      ]] .. passing("after it", "a", "after"))
      local out = run("--timeout 30 " .. f)
      -- at once, not at the timeout: the protocol is broken
      assert.matches("^ERROR garbage %((%d+) ms%)\n    isolate: child %d+ broke the result "
        .. "protocol %(a corrupt frame header%) and was killed\n", out)
      assert.is_true(tonumber(out:match("^ERROR garbage %((%d+) ms%)")) < 30000)
      assert.matches("\n# mounted after\nok   after it %(%d+ ms%)\n1 passed, 1 failed %(1 %u+%)\n"
        .. "exit=1$",
        out)
    end)

    it("in a script's own isolate_with and scenario calls", function()
      local f = write("direct.lua", [[
        local mountns = require "mountns"
        local core = require "mountns.core"
        local function try(...) print((select(2, pcall(...)):gsub("child %d+", "child N"))) end
        try(mountns.scenario, "closes", function() ]] .. CLOSE_ALL .. [[ while true do end end,
            { timeout = 0.5 })
        try(mountns.isolate_with, { timeout = 0.5 }, function() ]] .. CLOSE_ALL .. [[
          while true do end end)
        try(mountns.isolate_with, { timeout = 30 }, function()
        ]] .. write_everywhere(nil, "oZZZZZZZZ") .. [[
          while true do end end)
        -- a result, then garbage after it: one frame, then nothing
        try(mountns.isolate_with, { timeout = 30 }, function()
        ]] .. write_everywhere(nil, "o00000003" .. "1;t" .. "junk") .. [[
          while true do end end)
        -- its result sent, it does not end: killed at its timeout
        try(mountns.isolate_with, { timeout = 0.5 }, function()
        ]] .. write_everywhere(nil, "o00000003" .. "1;t") .. CLOSE_ALL .. [[
          while true do end end)
        -- and one that behaves is untouched
        print(mountns.isolate_with({ timeout = 30 }, function() return "fine" end))
      ]])
      local out = bounded(f)
      assert.are.equal(table.concat({
        "ran past its timeout of 0.5 s and was killed (it closed its result pipe without a result)",
        "ran past its timeout of 0.5 s and was killed (it closed its result pipe without a result)",
        "broke the result protocol (a corrupt frame header) and was killed",
        "broke the result protocol (more than one result frame) and was killed",
        "ran past its timeout of 0.5 s and was killed (its result was in, its process not ended)",
        "fine", "exit=0" }, "\n"), out:gsub("[^\n]*isolate: child N ", ""))
    end)

    it("a scenario whose teardown hangs after its result is killed at its timeout", function()
      -- reap_later (mountns run's script processes): the result is taken
      -- at once, the exit is waited for by reap(true), until the
      -- scenario's timeout at most
      local mark = dir .. "/teardown.mark"
      local f = write("teardown.lua", [[
        local mountns = require "mountns"
        local core = require "mountns.core"
        local isolate = require "mountns.isolate"
        local t = assert(io.open("]] .. mark .. [[", "w"))
        isolate.reap_later()
        local t0 = core.clock()
        print(mountns.scenario("hangs after", function(ns)
          ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs")
          getmetatable(ns).close = function()
            core.read_all((core.pipe()), 50)
            t:write("ended"); t:close()
          end
          return #ns:mounts()
        end, { timeout = 2 })) -- room for a loaded machine: the scenario itself must fit
        t:close()
        isolate.reap(true)
        print(core.clock() - t0 < 20)
      ]])
      local out = bounded(f)
      assert.are.equal("2\ntrue\nexit=0", out)
      assert.are.equal("", helper.read(mark)) -- its teardown never ended
    end)

    it("Ctrl-C in a script's own scenario kills the scenario's process", function()
      local f = write("ctrlc.lua", [[
        local mountns = require "mountns"
        local core = require "mountns.core"
        local ok, err = pcall(mountns.scenario, "deaf", function()
          core.signalfd("INT") -- it does not hear SIGINT itself
          print("child " .. core.getpid()); io.stdout:flush()
          ]] .. CLOSE_ALL .. [[
          while true do end
        end, { timeout = 60 })
        print(ok, err); print("after")
      ]])
      local out_file = dir .. "/ctrlc.out"
      -- SIGINT to the script's process only (not its group): the scenario's
      -- process does not get it
      local rc = helper.sh("cd " .. ROOT .. " && : >" .. out_file .. " && { "
        .. bounded_cmd(f) .. " >"
        .. out_file .. " 2>&1 & pid=$!; for i in $(seq 200); do grep -q child " .. out_file
        .. " && break; sleep 0.05; done; kill -INT $pid; wait $pid; echo $?; }")
      local out = helper.read(out_file)
      assert.are.equal("0", rc, out)
      assert.matches("^child %d+\nfalse\t[^\n]*interrupted!\nafter\n$", out)
      assert.is_nil(helper.wait_gone(out:match("child (%d+)")))
    end)
  end)

  describe("the runner takes nothing it has not checked", function()
    it("a scenario cannot forge a verdict: its frames never reach the runner", function()
      local f = write("forged.lua", [[
        local mountns = require "mountns"
        mountns.scenario("forger", function()
        ]] .. write_everywhere('{ "result", name = "FORGED never ran", ok = true, secs = 0 }')
           .. write_everywhere('{ "done", ok = true }') .. [[
          error("the forger itself fails")
        end)
      ]] .. passing("honest", "h", "honest"))
      local out = run(f)
      assert.is_nil(out:find("FORGED", 1, true), out)
      assert.matches("^ERROR forger %(%d+ ms%)\n    isolate: child %d+ broke the result "
        .. "protocol %(more than one result frame%) and was killed\n# mounted honest\n"
        .. "ok   honest %(%d+ ms%)\n1 passed, 1 failed %(1 ERROR%)\nexit=1$", out)
    end)

    it("a malformed event from a script's process is a protocol error, not a crash", function()
      -- outside any scenario the script's own code holds the runner's pipe:
      -- what it writes there is checked like any frame
      local cases = {
        { ev = '{ "result", name = "X", ok = false, secs = "x" }',
          why = 'a result event whose secs is a string %(number expected%)' },
        { ev = '{ "result", name = "X", ok = true, secs = 0/0 }',
          why = "a result event whose secs is %-?nan %(a duration expected%)" },
        { ev = '{ "result", name = {}, ok = true, secs = 0 }',
          why = "a result event whose name is a table %(string expected%)" },
        { ev = '{ "result", name = "X", ok = true, secs = 0, extra = 1 }',
          why = 'a result event with an unknown field "extra"' },
        { ev = '{ "result", name = "X", ok = true, secs = 0, notes = { 1 } }',
          why = "a result event whose notes are not a list of strings" },
        { ev = '{ "verdict", ok = true }', why = 'an event of unknown kind "verdict"' },
        { ev = '"result"', why = "an event that is a string, not a table" },
        { ev = '{ "start", name = "A", timeout = 0 }',
          why = "a start event whose timeout is 0 %(seconds > 0 expected%)" },
        -- one verdict per scenario started
        { ev = '{ "start", name = "A", timeout = 9 }',
          ev2 = '{ "result", name = "B", ok = true, secs = 0 }',
          why = 'the result of scenario "B" while scenario "A" runs' },
        { ev = '{ "start", name = "A", timeout = 9 }', ev2 = '{ "done", ok = true }',
          why = 'a done event while scenario "A" runs' },
        { ev = '{ "start", name = "A", timeout = 9 }',
          ev2 = '{ "start", name = "A", timeout = 9 }',
          why = 'a start event while scenario "A" runs' },
        { raw = "oZZZZZZZZ", why = "a corrupt frame header" },
        { raw = "o0000", why = "a frame cut short %(its rest did not come within 5 s%)" },
        { raw = "o00000002" .. "1;", why = "mountns.child: corrupt message at byte %d+" },
        { raw = "x00000002" .. "0;", why = 'a frame of kind "x"' },
      }
      for i, c in ipairs(cases) do
        local f = write("event" .. i .. ".lua", passing("first", "f")
          .. write_everywhere(c.ev, c.raw) .. (c.ev2 and write_everywhere(c.ev2) or "")
          .. "while true do end\n")
        local g = write("next" .. i .. ".lua", passing("next file", "n", "next"))
        local out = run("-j 1 " .. f .. " " .. g)
        assert.matches("^ok   first %(%d+ ms%)\nERROR " .. f:gsub("%p", "%%%0")
          .. " %(0 ms%)\n    protocol error: " .. c.why .. " %(its process was killed", out)
        assert.matches("\n# mounted next\nok   next file %(%d+ ms%)\n2 passed, 1 failed "
          .. "%(1 ERROR%)\nexit=1$", out)
      end
    end)

    it("event_problem: every field of both kinds checked, in both polarities", function()
      local good = {
        { "result", name = "n", ok = true, secs = 0 },
        { "result", name = "n", ok = false, err = "e", secs = 1.5, dot = "d", golden = "g",
          notes = { "a", "b" } },
        { "done", ok = true }, { "done", ok = false, err = "why" },
        { "start", name = "n", timeout = 0.5 },
      }
      for _, ev in ipairs(good) do assert.is_nil(runner.event_problem(ev)) end
      local bad = {
        { "result", ok = true, secs = 0 }, { "result", name = "n", secs = 0 },
        { "result", name = "n", ok = true }, { "result", name = "n", ok = 1, secs = 0 },
        { "result", name = "n", ok = true, secs = -1 },
        { "result", name = "n", ok = true, secs = math.huge },
        { "result", name = "n", ok = true, secs = 0, err = false },
        { "result", name = "n", ok = true, secs = 0, dot = 1 },
        { "result", name = "n", ok = true, secs = 0, golden = {} },
        { "result", name = "n", ok = true, secs = 0, notes = "x" },
        { "result", name = "n", ok = true, secs = 0, notes = { "a", nil, "c" } },
        { "result", name = "n", ok = true, secs = 0, notes = { x = "a" } },
        { "result", name = "n", ok = true, secs = 0, [2] = "x" },
        { "done" }, { "done", ok = true, err = 3 }, { "done", ok = true, name = "x" },
        { ok = true }, {}, 42, nil,
        { "start", name = "n" }, { "start", timeout = 1 }, { "start", name = "n", timeout = -1 },
        { "start", name = "n", timeout = 0 / 0 }, { "start", name = "n", timeout = "1" },
      }
      for i = 1, 25 do
        assert.is_string(runner.event_problem(bad[i]), "case " .. i)
      end
    end)

    it("a scenario that stops its script's process is killed by the runner, the run goes on",
      function()
      -- the script's process cannot report it: the runner, told that the
      -- scenario started, waits its timeout and 5 s more
      local f = write("stopper.lua", [[
        local mountns = require "mountns"
        local core = require "mountns.core"
        local parent = core.getpid()
        mountns.scenario("stops its parent", function()
          core.kill(parent, "STOP")
          while true do end
        end, { timeout = 0.5 })
        mountns.scenario("never runs", function() end)
      ]])
      local g = write("after-stop.lua", passing("next file", "n", "next"))
      local out = run("-j 1 " .. f .. " " .. g)
      assert.matches("^TIMEOUT stops its parent %(5500 ms%)\n    ran past its timeout of 0%.5 s: "
        .. "its script's process did not report it within 5 s more and was killed %(the rest "
        .. "of " .. f:gsub("%p", "%%%0") .. " did not run%)\n# mounted next\nok   next file "
        .. "%(%d+ ms%)\n1 passed, 1 failed %(1 TIMEOUT%)\nexit=1$", out)
    end)

    it("a script's process that closes the runner's pipe and loops is killed at --timeout",
      function()
      local f = write("closer.lua", passing("before", "b") .. "local core = require "
        .. "'mountns.core'\n" .. CLOSE_ALL .. "while true do end\n")
      local g = write("after.lua", passing("next file", "n", "next"))
      local out = run("-j 1 --timeout 1 " .. f .. " " .. g)
      assert.matches("^ok   before %(%d+ ms%)\nERROR " .. f:gsub("%p", "%%%0") .. " exited "
        .. "early %(0 ms%)\n    its process closed its result pipe before the script ended "
        .. "and was still running 1 s later %(%-%-timeout%): killed\n# mounted next\n"
        .. "ok   next file %(%d+ ms%)\n2 passed, 1 failed %(1 ERROR%)\nexit=1$", out)
    end)
  end)

  describe("resources and signals", function()
    it("a scenario flooding stdout costs the runner a bounded memory", function()
      -- 2 s of 64 KiB writes with no newline, then a short line: the runner
      -- keeps LINE_MAX of the long line, says how much it dropped, and its
      -- peak RSS grows by a few MiB, not by what was printed (before: 480
      -- MB for about 700 MB printed, and one read never ended while the
      -- writer kept up)
      local flood = write("flood.lua", [[
        require("mountns").scenario("flood", function()
          local chunk, t0 = string.rep("x", 65536), os.time()
          while os.time() - t0 < 2 do io.write(chunk) end
          io.write("\nlast line\n")
        end, { label = "flood" })
      ]])
      local driver = write("flood-driver.lua", [[
        local hwm = require("procstat").hwm
        local h0 = hwm()
        local rc = require("mountns.runner").command({ arg[1] }, {})
        io.stderr:write("grew=", hwm() - h0, "\n")
        os.exit(rc)
      ]])
      local out = bounded(driver .. " " .. flood)
      local order = require "mountns.report.order"
      local long = ("\n" .. out):match(
        "\n# (x+ %[mountns: %d+ more bytes of this line dropped%])\n")
      assert.truthy(long, out:sub(1, 300))
      assert.equal(order.LINE_MAX, #long:match("^x+"))
      assert.truthy(tonumber(long:match("(%d+) more")) > 0)
      assert.matches("\n# last line\nok   flood", out)
      local grew = tonumber(out:match("grew=(%d+)"))
      assert.truthy(grew, out)
      -- (ASan's allocator holds freed blocks in its quarantine: no bound)
      if not (os.getenv("LD_PRELOAD") or ""):find("asan", 1, true) then
        assert.truthy(grew < 64 * 1024, out:match("grew=%d+"))
      end
      assert.matches("exit=0$", out)
    end)

    it("out of fds: a clear line, the files fail, the summary prints", function()
      local files = {}
      for i = 1, 12 do files[i] = write("fd" .. i .. ".lua", passing("s" .. i, "t")) end
      -- `mountns run -j 8 FILES` in a process that holds every fd it can
      -- but `free`: the limit, whatever fds the suite's shell inherited
      local driver = write("driver.lua", [[
        local core = require "mountns.core"
        local held = {}
        while true do
          local r, w = core.pipe()
          if not r then break end
          held[#held + 1] = r; held[#held + 1] = w
        end
        for _ = 1, tonumber(arg[1]) do core.close_fd(table.remove(held)) end
        local unpack = table.unpack or unpack
        os.exit(require("mountns.runner").command({ "-j", "8", unpack(arg, 2) }, {}))
      ]])
      -- 4 fds: the runner's signal fds and one pipe, not a file's three pipes
      local out = bounded(driver .. " 4 " .. table.concat(files, " "))
      local n = select(2, out:gsub("\n    cannot start its process: pipe: Too many open "
        .. "files %(EMFILE%)", ""))
      assert.are.equal(12, n, out)
      assert.matches("\n0 passed, 12 failed %(12 ERROR%)\nexit=1$", out)
      -- 20 fds: fewer files at once, said on stderr, every scenario runs
      out = bounded(driver .. " 20 " .. table.concat(files, " "))
      assert.matches("\nmountns: run: [^\n]*: pipe: Too many open files %(EMFILE%): it waits "
        .. "for a running file to end %(fewer files run at once%)\n", "\n" .. out)
      assert.matches("\n12 passed, 0 failed\nexit=0$", out)
    end)

    it("a failure of the runner itself (out of memory): the summary so far, exit 1", function()
      local a = write("mem1.lua", passing("first", "f"))
      local b = write("mem2.lua", [[
        local mountns = require "mountns"
        local core = require "mountns.core"
        print("started " .. core.getpid()); io.stdout:flush()
        assert(io.open("]] .. dir .. [[/mem.go", "w")):close()
        mountns.scenario("slow", function() core.read_all((core.pipe()), 30) end)
      ]])
      -- the runner's wait fails once the second file started (and made mem.go)
      local driver = write("nomem.lua", [[
        local core = require "mountns.core"
        local wait_any = core.wait_any
        core.wait_any = function(...)
          local ready = { wait_any(...) }
          if io.open("]] .. dir .. [[/mem.go") then error("not enough memory", 0) end
          return (table.unpack or unpack)(ready)
        end
        local args = { "-j", "1", "]] .. a .. [[", "]] .. b .. [[" }
        if arg[1] then table.insert(args, 1, arg[1]) end
        os.exit(require("mountns.runner").command(args, {}))
      ]])
      for _, mode in ipairs { "", "--tap" } do
        os.remove(dir .. "/mem.go")
        local out = bounded(driver .. " " .. mode)
        local tap = mode ~= ""
        assert.matches("^" .. (tap and "TAP version 13\nok 1 %- first" or "ok   first %(%d+ ms%)")
          .. "\n# started %d+\n" .. (tap and "Bail out! stopped: not enough memory\n# " or "")
          .. "1 passed, 0 failed %(stopped: not enough memory%)\nexit=1$", out)
        assert.is_nil(helper.wait_gone(out:match("started (%d+)")))
      end
    end)

    it("out of fds in a script's process: that scenario fails naming EMFILE", function()
      local f = write("hog.lua", [[
        local mountns = require "mountns"
        local core = require "mountns.core"
        local held = {}
        while true do
          local r, w = core.pipe()
          if not r then break end
          held[#held + 1] = r; held[#held + 1] = w
        end
        mountns.scenario("starved", function() end)
        for _ = 1, 4 do core.close_fd(table.remove(held)) end
      ]] .. passing("fed", "f", "fed"))
      local out = run(f)
      -- (the call that fails first, isolate's pipe or the template's check
      -- of /proc/self/ns/user, depends on whether one fd is left)
      assert.matches("^ERROR starved %(%d+ ms%)\n    [^\n]*: Too many open files "
        .. "%(EMFILE%)\n# mounted fed\nok   fed %(%d+ ms%)\n1 passed, 1 failed %(1 ERROR%)\n"
        .. "exit=1$", out)
    end)

    for _, mode in ipairs { "", "--tap " } do
      it("SIGTERM " .. (mode == "" and "" or "under --tap ") .. "stops the run as SIGINT does",
        function()
        local f = write("term" .. mode:gsub("%W", "") .. ".lua", [[
          local mountns = require "mountns"
          local core = require "mountns.core"
          mountns.scenario("quick", function() end)
          mountns.scenario("slow", function()
            print("started " .. core.getpid()); io.stdout:flush()
            core.read_all((core.pipe()), 30)
          end)
        ]])
        local out_file = f .. ".out"
        local rc = helper.sh("cd " .. ROOT .. " && : >" .. out_file .. " && { "
          .. bounded_cmd("bin/mountns run ")
          .. mode .. f .. " >" .. out_file .. " 2>&1 & pid=$!; for i in $(seq 200); do grep -q "
          .. "started " .. out_file .. " && break; sleep 0.05; done; kill -TERM $pid; "
          .. "wait $pid; echo $?; }")
        local out = helper.read(out_file)
        assert.are.equal("143", rc, out)
        if mode == "" then
          assert.matches("^ok   quick %(%d+ ms%)\n# started %d+\n1 passed, 0 failed "
            .. "%(terminated%)\n$", out)
        else
          assert.matches("^TAP version 13\nok 1 %- quick\n# started %d+\nBail out! "
            .. "terminated\n# 1 passed, 0 failed %(terminated%)\n$", out)
        end
        assert.is_nil(helper.wait_gone(out:match("started (%d+)")))
      end)
    end
  end)

  describe("core.waitpid with a timeout", function()
    it("waits that long at most, and reaps a child that ends", function()
      local r, w = assert(core.pipe())
      local pid = assert(core.fork())
      if pid == 0 then
        core.close_fd(w)
        core.read_all(r, 10) -- until the parent closes w (10 s at most)
        core._exit(7)
      end
      core.close_fd(r)
      assert.are.equal("running", core.waitpid(pid, "block", 0.05))
      core.close_fd(w)
      local how, code = core.waitpid(pid, "block", 30)
      assert.are.same({ "exited", 7 }, { how, code })
      -- not a child (any more): an error, not "running"
      local ok, err = core.waitpid(pid, "block", 0.05)
      assert.is_nil(ok)
      assert.matches("ECHILD", err)
      local bad, msg = pcall(core.waitpid, pid, "nohang", 1)
      assert.is_false(bad)
      assert.matches("bad argument #3 to '[^']*' %(a timeout goes with 'block'%)", msg)
    end)
  end)
end)
