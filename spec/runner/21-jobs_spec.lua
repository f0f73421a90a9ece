-- bin/mountns run -j N: files run at once, the report the same as -j 1.
-- The output of several files (a failure, an os.exit, prints, a last line
-- without newline, an error outside a scenario) under -j 2 is byte for
-- byte the output under -j 1, once the per-scenario milliseconds are
-- removed; two files that wait for each other prove they ran at once;
-- SIGINT kills every running file's process.
local helper = require "helper"
local runner = require "mountns.runner"

local ROOT = helper.ROOT

local cli = helper.cli
-- a scenario file that passes on a fact of the kernel (its tmpfs is mounted)
local passing = helper.passing_scenario

-- the report without the per-scenario time, the only thing that differs
local function untimed(out)
  return (out:gsub(" %(%d+ ms%)\n", "\n"))
end

local dir
local function write(name, text) return helper.write(dir, name, text) end

-- Wait (up to 20 s) until the file `path` exists.
-- (60 s at most: in make matrix's guests, under TCG on shared cores, a
-- shell that execs readlink for each fd took more than 20 s on 5.10)
local WAIT_FOR = [[
local core = require "mountns.core"
local function wait_for(path)
  for _ = 1, 1200 do
    local f = io.open(path)
    if f then f:close(); return true end
    core.read_all((core.pipe()), 0.05)
  end
  return false
end
]]

describe("mountns run -j N", function()
  setup(function()
    dir = helper.tempdir()
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  local files
  setup(function()
    files = table.concat({
      write("one.lua", passing("one", "one", "one")),
      write("fails.lua", [[
        local mountns = require "mountns"
        local expect = require "mountns.expect"
        mountns.scenario("fails", function(ns)
          ns:mkdir("/X")
          print("no mount"); io.write("a last line without newline")
          -- (expect's own diagnostic shows the namespace's inode and IDs)
          assert(pcall(expect.mounted, ns, "/X"), "expected a mount at /X")
        end)
      ]]),
      write("exits.lua", passing("before exit", "e", "e") .. "os.exit(3)\n"),
      write("error.lua", passing("before error", "r", "r") .. "error('outside')\n"),
      write("none.lua", "print('no scenario here')\n"),
      write("two.lua", passing("two", "two", "two") .. passing("three", "t", "t")),
    }, " ")
  end)

  for _, mode in ipairs { "", "--tap " } do
    it("-j 2 " .. mode .. "prints what -j 1 prints, byte for byte", function()
      local one = cli("run -j 1 " .. mode .. files)
      local two = cli("run -j 2 " .. mode .. files)
      local many = cli("run --jobs 6 " .. mode .. files)
      -- the kernel did the work: each tmpfs was mounted, the failure seen
      assert.matches("# mounted one\n", one)
      assert.matches("expected a mount at /X", one)
      assert.matches("exited with status 3", one)
      assert.matches("\nexit=1$", one)
      assert.are.equal(untimed(one), untimed(two))
      assert.are.equal(untimed(one), untimed(many))
    end)
  end

  it("runs the files at once, and reports them in file order", function()
    -- first.lua cannot end before second.lua's scenario passed and its
    -- script went on: under -j 1 it would wait in vain
    -- (at the top level of the scripts: a scenario's / is a tmpfs of its own)
    local a = write("first.lua", WAIT_FOR .. [[
      local mountns = require "mountns"
      local expect = require "mountns.expect"
      assert(io.open("]] .. dir .. [[/first.ready", "w")):close()
      assert(wait_for("]] .. dir .. [[/second.done"), "second.lua did not run meanwhile")
      mountns.scenario("first", function(ns)
        ns:mkdir("/A"); ns:mount("a", "/A", "tmpfs")
        expect.mounted(ns, "/A")
      end)
    ]])
    local b = write("second.lua", WAIT_FOR .. [[
      local mountns = require "mountns"
      local expect = require "mountns.expect"
      assert(wait_for("]] .. dir .. [[/first.ready"), "first.lua did not run meanwhile")
      mountns.scenario("second", function(ns)
        ns:mkdir("/B"); ns:mount("b", "/B", "tmpfs")
        expect.mounted(ns, "/B")
      end)
      assert(io.open("]] .. dir .. [[/second.done", "w")):close()
    ]])
    local out = cli("run -j 2 --tap " .. a .. " " .. b)
    assert.are.equal("TAP version 13\nok 1 - first\nok 2 - second\n1..2\n"
      .. "# 2 passed, 0 failed\nexit=0", out)
  end)

  it("-j 1 starts the next file once a file's last result is in, before its process ends",
     function()
    -- first.lua's process cannot end, as the runner sees it, before
    -- second.lua started: a process outside it (bash, started through
    -- os.execute) opens every pipe of first.lua's process through /proc
    -- and holds them, as a slow exit would (the runner's end of file on
    -- them comes only when it lets go). It lets go once second.lua started,
    -- or after 20 s, and writes down which. A runner that waited for the
    -- process would wait those 20 s before it started second.lua.
    local a = write("holds.lua", WAIT_FOR .. [[
      local mountns = require "mountns"
      local expect = require "mountns.expect"
      local core = require "mountns.core"
      mountns.scenario("holds", function(ns)
        ns:mkdir("/A"); ns:mount("a", "/A", "tmpfs")
        expect.mounted(ns, "/A")
      end)
      local dir = "]] .. dir .. [["
      local hold = table.concat({
        "n=10",
        "for f in /proc/" .. core.getpid() .. "/fd/*; do",
        '  case "$(readlink "$f")" in pipe:*) eval "exec $n>$f"; n=$((n+1));; esac',
        "done",
        ": >" .. dir .. "/holds.holding",
        "for i in $(seq 400); do",
        "  [ -e " .. dir .. "/second.started ] &&",
        "    { echo started >" .. dir .. "/holds.saw; exit 0; }",
        "  sleep 0.05",
        "done",
        "echo 'not started' >" .. dir .. "/holds.saw" }, "\n")
      local f = assert(io.open(dir .. "/holds.sh", "w"))
      f:write(hold, "\n"); f:close()
      os.execute("bash " .. dir .. "/holds.sh </dev/null >/dev/null 2>&1 &")
      assert(wait_for(dir .. "/holds.holding"), "the pipes were not taken")
    ]])
    local b = write("started.lua", [[
      local mountns = require "mountns"
      local expect = require "mountns.expect"
      assert(io.open("]] .. dir .. [[/second.started", "w")):close()
      mountns.scenario("started", function(ns)
        ns:mkdir("/B"); ns:mount("b", "/B", "tmpfs")
        expect.mounted(ns, "/B")
      end)
    ]])
    local out = cli("run -j 1 --tap " .. a .. " " .. b)
    assert.are.equal("TAP version 13\nok 1 - holds\nok 2 - started\n1..2\n"
      .. "# 2 passed, 0 failed\nexit=0", out)
    local saw
    for _ = 1, 400 do -- the holder writes it after the run (20 s at most)
      local f = io.open(dir .. "/holds.saw")
      saw = f and f:read("*a")
      if f then f:close() end
      if saw and saw:match("\n$") then break end
      helper.sh("sleep 0.05")
    end
    assert.are.equal("started\n", saw)
  end)

  it("loads the modules once, before its first fork: a script finds them loaded", function()
    -- what the script requires, and what its first scenario would load
    -- (mountns.lazy's deferred modules): in the runner, not in each file
    local a = write("loaded.lua", [[
      for _, m in ipairs { "mountns", "mountns.expect", "mountns.model", "mountns.explain" } do
        assert(package.loaded[m], m .. " was not loaded by the runner")
      end
    ]] .. passing("loaded", "l"))
    assert.are.equal("TAP version 13\nok 1 - loaded\n1..1\n# 1 passed, 0 failed\nexit=0",
      cli("run -j 1 --tap " .. a))
  end)

  -- (when not root, a script's private namespace has a user namespace of
  -- its own: its first scenario makes its own template there)
  helper.root_it("a script's process is in the runner's user namespace")(
    "makes the scenarios' template once: every file's process holds it before its first "
    .. "scenario", function()
    -- the mount namespaces a script's process holds fds on (/proc/PID/fd
    -- links "mnt:[inode]"): the template and the copy of the host
    -- (mountns.scenario), inherited from the runner, not made by the
    -- script's first scenario
    local held = [[
      local mountns = require "mountns"
      local expect = require "mountns.expect"
      local core = require "mountns.core"
      local function held()
        -- one ls for the links (a readlink per fd was ~45 processes a run);
        -- an fd closed between its listing and its lstat is left out silently,
        -- as readlink did (ls said "cannot access .../fd/8" once)
        local p = io.popen("ls -l /proc/" .. core.getpid() .. "/fd/ 2>/dev/null"
          .. " | grep -o 'mnt:.[0-9]*.'"
          .. " | sort -u | tr '\n' ' '")
        local text = p:read("*a")
        p:close()
        return text
      end
      local before = held()
      mountns.scenario("%s", function(ns)
        ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs")
        expect.mounted(ns, "/X")
      end)
      local f = assert(io.open("]] .. dir .. [[/held.%s", "w"))
      f:write(before, "|", held(), "\n"); f:close()
    ]]
    local a = write("held-a.lua", held:format("a", "a"))
    local b = write("held-b.lua", held:format("b", "b"))
    assert.are.equal("TAP version 13\nok 1 - a\nok 2 - b\n1..2\n# 2 passed, 0 failed\nexit=0",
      cli("run -j 1 --tap " .. a .. " " .. b))
    local seen = {}
    for _, x in ipairs { "a", "b" } do
      local f = assert(io.open(dir .. "/held." .. x))
      seen[x] = f:read("*a")
      f:close()
    end
    -- two namespaces (the template, the host's copy), held before the
    -- first scenario, the same after it, the same in both files
    assert.matches("^mnt:%[%d+%] mnt:%[%d+%] |", seen.a)
    local before, after = seen.a:match("^(.-)|(.-)\n$")
    assert.are.equal(before, after)
    assert.are.equal(seen.a, seen.b)
  end)

  -- (core.fresh_heap does nothing on other Lua versions)
  local it54 = _VERSION == "Lua 5.4" and not jit and it
    or function(name) pending(name .. " [Lua 5.4 only]") end
  it54("a script's process allocates from a fresh arena, its collector stopped",
     function()
    -- core.fresh_heap, as in isolate's child: the runner's heap pages are
    -- shared copy-on-write, and a collection would write every one
    local a = write("heap.lua", [[
      print("collector running: " .. tostring(collectgarbage("isrunning")))
      io.stdout:flush()
    ]] .. passing("heap", "h"))
    assert.are.equal("TAP version 13\n# collector running: false"
      .. "\nok 1 - heap\n1..1\n# 1 passed, 0 failed\nexit=0", cli("run -j 1 --tap " .. a))
  end)

  it54("a scenario's child allocating past both arenas keeps no hook running", function()
    -- the script's process and its scenario's child both use fresh_heap:
    -- the first arena once set its collection hook on the child's thread
    -- when the second forwarded to it, and the hook (reading the second
    -- arena) never took itself off: a hook at every instruction after
    local a = write("nested.lua", [[
      local mountns = require "mountns"
      local hooked = mountns.scenario(function()
        local t = {}
        local y1k = string.rep("y", 1000) -- rep copies a piece at a time
        for i = 1, 5000 do t[i] = string.rep(y1k, 10) .. i end
        return debug.gethook() ~= nil
      end)
      print("hook after 50 MB: " .. tostring(hooked))
      io.stdout:flush()
    ]] .. passing("nested", "n"))
    assert.are.equal("TAP version 13\nok 1 - (unnamed scenario)\n# hook after 50 MB: false"
      .. "\nok 2 - nested\n1..2\n# 2 passed, 0 failed\nexit=0", cli("run -j 1 --tap " .. a))
  end)

  it54("a script's unclosed files are closed by its collections, as in plain Lua", function()
    -- the collector stays stopped in the script's process, but a full
    -- collection with its finalizers runs each time the script allocated
    -- as much as the heap held (the default pause). Before, the first
    -- collection came after 32 MB, an emergency one that calls no __gc:
    -- 1,500 files stayed open (EMFILE at ~1,015 under ulimit -n 1024)
    local a = write("gc.lua", [[
      local core = require "mountns.core"
      local n0, n = assert(core.open_fds()), 0
      local x1k = string.rep("x", 1000) -- rep copies a piece at a time
      for i = 1, 1500 do
        if not io.open("/dev/null") then break end
        n = n + 1
        local s = string.rep(x1k, 10) .. i -- luacheck: ignore s
      end
      local open = assert(core.open_fds()) - n0
      print("opened " .. n .. (open < 500 and ", fewer than 500 open" or ", " .. open .. " open"))
      io.stdout:flush()
    ]] .. passing("gc", "g"))
    assert.are.equal("TAP version 13\n# opened 1500, fewer than 500 open"
      .. "\nok 1 - gc\n1..1\n# 1 passed, 0 failed\nexit=0", cli("run -j 1 --tap " .. a))
  end)

  it("a script goes on once its scenario's result is in; the scenario's process is reaped "
    .. "after the script's last result", function()
    -- the script's process is the scenario process's parent: until it
    -- reaps it, /proc/PID stays (running its teardown, or a zombie). The
    -- script sees it there once scenario() returned; after the run it is
    -- gone (reaped, by the script's process before it ended). The
    -- scenario's teardown (closing its namespaces, after the result is
    -- sent) waits on a pipe until the script has looked: its process
    -- cannot have ended (and been reaped at once) before
    local a = write("reaped.lua", [[
      local mountns = require "mountns"
      local expect = require "mountns.expect"
      local core = require "mountns.core"
      -- the template's process made first: it must not hold the pipe
      require("mountns.scenario").template()
      local r, w = assert(core.pipe())
      local pid = mountns.scenario("reaped", function(ns)
        core.close_fd(w)
        ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs")
        expect.mounted(ns, "/X")
        local Namespace = getmetatable(ns)
        local close = Namespace.close
        Namespace.close = function(...)
          -- until the script closed w (a bound: where the script waited
          -- for this exit, it goes on after 20 s and sees it reaped)
          core.read_all(r, 20)
          return close(...)
        end
        return core.getpid()
      end)
      core.close_fd(r)
      local f = io.open("/proc/" .. pid .. "/stat")
      print("scenario process " .. pid .. (f and " not reaped yet" or " reaped"))
      if f then f:close() end
      io.stdout:flush()
      core.close_fd(w)
    ]])
    local out = cli("run -j 1 --tap " .. a)
    local pid = out:match("# scenario process (%d+) ")
    assert.are.equal("TAP version 13\nok 1 - reaped\n# scenario process " .. tostring(pid)
      .. " not reaped yet\n1..1\n# 1 passed, 0 failed\nexit=0", out)
    assert.is_nil(io.open("/proc/" .. pid .. "/stat"))
  end)

  it("a script ending with os.exit leaves no scenario process behind", function()
    -- its scenarios' processes were reaped only after the script returned:
    -- os.exit skipped that, the last one was left to PID 1 (a zombie where
    -- PID 1 does not reap). os.exit reaps them first now
    local a = write("exit.lua", [[
      local mountns = require "mountns"
      local core = require "mountns.core"
      local pids = {}
      for i = 1, 3 do
        pids[i] = mountns.scenario("s" .. i, function(ns)
          ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs")
          return core.getpid()
        end)
      end
      print("pids " .. table.concat(pids, " "))
      io.stdout:flush()
      os.exit(0)
    ]])
    local out = cli("run -j 1 " .. a)
    local pids = out:match("pids ([%d ]+)")
    assert.is_string(pids, out)
    local left = {}
    for pid in pids:gmatch("%d+") do
      if io.open("/proc/" .. pid .. "/stat") then left[#left + 1] = pid end
    end
    assert.same({}, left)
    assert.matches("3 passed, 1 failed %(1 ERROR%)\nexit=1$", out)
  end)

  it("SIGINT kills every running file's process: summary so far, exit 130", function()
    local slow = [[
      local mountns = require "mountns"
      local expect = require "mountns.expect"
      local core = require "mountns.core"
      -- opened here: a scenario's / is a tmpfs of its own
      local f = assert(io.open("]] .. dir .. [[/pid.%s", "w"))
      mountns.scenario("slow %s", function()
        f:write(core.getpid()); f:close()
        core.read_all((core.pipe()), 20) -- nobody writes: 20 s
      end)
    ]]
    local a = write("slow-a.lua", slow:format("a", "a"))
    local b = write("slow-b.lua", slow:format("b", "b"))
    local rc = helper.sh("cd " .. ROOT .. " && { setsid " .. helper.lua_cmd()
      .. " bin/mountns run -j 2 " .. a .. " " .. b .. " >" .. dir .. "/int.out 2>&1 & pid=$!; "
      .. "for i in $(seq 200); do [ -s " .. dir .. "/pid.a ] && [ -s " .. dir .. "/pid.b ] "
      .. "&& break; sleep 0.05; done; kill -INT -$pid; wait $pid; echo $?; }")
    local f = assert(io.open(dir .. "/int.out"))
    local out = f:read("*a")
    f:close()
    assert.are.equal("130", rc, out)
    assert.are.equal("0 passed, 0 failed (interrupted)\n", out)
    for _, x in ipairs { "a", "b" } do
      local p = assert(io.open(dir .. "/pid." .. x))
      local pid = p:read("*a")
      p:close()
      local state = helper.wait_gone(pid)
      assert.is_nil(state, x .. ": " .. tostring(state))
    end
  end)

  -- a script whose scenario's teardown hangs (30 s, then it writes "ended"
  -- to the file `mark`.teardown): its process, after "done", waits for the
  -- scenario's (a leftover for the runner); `mark` is written by the script
  -- after its last scenario
  local function hanging(mark)
    return [[
      local mountns = require "mountns"
      local core = require "mountns.core"
      -- opened here: a scenario's / is a tmpfs of its own
      local t = assert(io.open("]] .. mark .. [[.teardown", "w"))
      mountns.scenario("hangs", function(ns)
        ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs")
        local Namespace = getmetatable(ns)
        Namespace.close = function()
          local r = core.pipe() -- its write end stays open: 30 s
          core.read_all(r, 30)
          t:write("ended"); t:close()
        end
        return true
      end, { timeout = 30 }) -- (the script's process waits for it that long)
      t:close()
      local f = assert(io.open("]] .. mark .. [[", "w")); f:close()
    ]]
  end

  local read = helper.read

  it("SIGINT while the run waits for a script's leftover processes kills them, exit 130",
     function()
    -- before: that wait blocked SIGINT (signalfd) and had no limit: Ctrl-C
    -- did nothing until the teardown ended (30 s here)
    local a = write("hang.lua", hanging(dir .. "/hang.mark"))
    local rc = helper.sh("cd " .. ROOT .. " && { setsid " .. helper.lua_cmd()
      .. " bin/mountns run " .. a .. " >" .. dir .. "/hang.out 2>&1 & pid=$!; "
      .. "for i in $(seq 200); do [ -e " .. dir .. "/hang.mark ] && break; sleep 0.05; done; "
      .. "sleep 0.2; kill -INT -$pid; wait $pid; echo $?; }")
    local out = read(dir .. "/hang.out")
    assert.are.equal("130", rc, out)
    assert.are.equal("ok   hangs\n1 passed, 0 failed (interrupted)\n", untimed(out))
    assert.are.equal("", read(dir .. "/hang.mark.teardown")) -- it never ended
  end)

  it("the run waits for a script's leftover processes for its timeout at most", function()
    local a = write("hang2.lua", hanging(dir .. "/hang2.mark"))
    -- before: the run ended when the teardown did (30 s); now it is
    -- killed 0.5 s after the last report, its teardown never ended (0.5 s
    -- is also the scenario's own timeout: ~100x what it takes)
    -- stdout as before; stderr names the file and the PID killed (before:
    -- nothing, the kill was silent)
    local out = helper.sh("cd " .. ROOT .. " && " .. helper.lua_vars()
      .. " bin/mountns run --timeout 0.5 " .. a .. " 2>" .. dir .. "/hang2.err; echo \"exit=$?\"")
    assert.are.equal("ok   hangs\n1 passed, 0 failed\nexit=0", untimed(out))
    assert.are.equal("", read(dir .. "/hang2.mark.teardown"))
    local err = read(dir .. "/hang2.err")
    local pid = err:match("^mountns: run: " .. a:gsub("%p", "%%%0")
      .. ": its process still ending 0%.5 s after the last report %(%-%-timeout%): "
      .. "killed PID (%d+)\n$")
    assert.is_truthy(pid, err)
    -- that PID was the script's process: killed (else, orphaned, it would
    -- wait 30 s more)
    assert.is_nil(io.open("/proc/" .. pid .. "/stat"))
  end)

  describe("usage", function()
    for _, bad in ipairs { "-j 0", "-j x", "--jobs -1", "-j 1.5", "--jobs" } do
      it("'" .. bad .. "' is a usage error, exit 2", function()
        local out = cli("run " .. bad .. " " .. dir .. "/one.lua")
        assert.matches("^mountns: run: %-%-?j[obs]* needs a number of files to run at once", out)
        assert.matches("\nexit=2$", out)
      end)
    end

    it("runner.run raises on a bad jobs option", function()
      for _, bad in ipairs { 0, -1, 1.5, "2", 1 / 0 } do
        local ok, err = pcall(function() runner.run({ "x.lua" }, { jobs = bad }) end)
        assert.is_false(ok)
        assert.matches("21%-jobs_spec%.lua:%d+: bad argument #2 to 'run'.*option 'jobs'", err)
      end
    end)

    it("runner.cpus() is the number of online CPUs, as getconf says", function()
      assert.are.equal(tonumber(helper.sh("getconf _NPROCESSORS_ONLN")), runner.cpus())
    end)
  end)
end)
