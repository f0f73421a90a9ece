-- The house (issue 24). One way to fork: every child mountns starts goes
-- through mountns.child's spawn (its pipes named, the caller's ends kept
-- from every other child, its waits bounded, its tree killed past its
-- time; spec/tools/layers.lua finds a process call anywhere else). Small
-- files. One scenario driver (mountns.driver) with two backends, the
-- kernel's and the model's.
local mountns = require "mountns"
local core = require "mountns.core"
local child = require "mountns.child"
local helper = require "helper"

-- the number of fds of process pid, read by a host tool of ns
local function fd_count(ns, pid)
  local r = ns:exec { "ls", "/proc/" .. pid .. "/fd" }
  assert(r.code == 0, r.stderr)
  local n = 0
  for _ in r.stdout:gmatch("[^\n]+") do n = n + 1 end
  return n
end

describe("the house (issue 24)", function()
  describe("child.spawn", function()
    it("names the pipes: what the child writes up, what the caller writes down", function()
      local proc = assert(child.spawn({ up = { "answer" }, down = { "question" } },
        function(fds, suffix)
          local q = core.read_all(fds.question)
          assert(child.send(fds.answer, "o", q .. suffix))
          return 7
        end, "!"))
      assert(core.write_fd(proc.fds.question, "ping"))
      proc:close("question")
      local kind, body = proc:receive("answer", 30)
      assert.equal("o", kind)
      assert.equal("ping!", body)
      assert.same({ "exited", 7, false }, { proc:finish(30) })
      assert.same({}, proc.fds)
    end)

    it("keeps the caller's ends from a later child: a channel's end of file is "
      .. "its child's alone to see", function()
      -- a waits for the end of its pipe; b, spawned after it, would hold
      -- that pipe's write end open if it inherited it
      local a = assert(child.spawn({ down = { "hold" } }, function(fds)
        core.read_all(fds.hold)
      end))
      local b = assert(child.spawn({ down = { "hold" } }, function(fds)
        core.read_all(fds.hold)
      end))
      a:close()
      assert.equal("exited", (a:wait(30)))
      b:close()
      assert.equal("exited", (b:wait(30)))
    end)

    it("a caller's end no longer kept from children holds the channel open "
      .. "(the other polarity)", function()
      local a = assert(child.spawn({ down = { "hold" } }, function(fds)
        core.read_all(fds.hold)
      end))
      child.keep_from_children(a.fds.hold, false)
      local b = assert(child.spawn({ down = { "go" } }, function(fds)
        core.read_all(fds.go)
      end))
      a:close()
      -- b holds a copy of a's channel: a cannot see its end
      assert.equal("running", (a:wait(0.3)))
      b:close()
      assert.equal("exited", (b:wait(30)))
      assert.equal("exited", (a:wait(30)))
    end)

    it("a wait is bounded; finish kills a child past its time with its whole tree", function()
      local proc = assert(child.spawn({ up = { "grandchild" }, timeout = 0.2 }, function(fds)
        local r, w = assert(core.pipe())
        -- both wait for a pipe whose write end they hold: forever
        local g = child.fork(function() core.read_all(r) end)
        child.send(fds.grandchild, "o", tostring(g))
        core.read_all(r)
        core.close_fd(w)
      end))
      local kind, body = proc:receive("grandchild", 30)
      assert.equal("o", kind)
      local grandchild = assert(tonumber(body))
      assert.equal("running", (proc:wait(0)))
      local how, code, killed = proc:finish()
      assert.same({ "killed", "SIGKILL", true }, { how, code, killed })
      assert.is_nil(helper.wait_gone(grandchild))
      -- reaped once: the same answer again
      assert.same({ "killed", "SIGKILL" }, { proc:wait() })
    end)

    it("spawn and finish leave no fd behind, nor a mark on a closed fd", function()
      local before = core.open_fds()
      local proc = assert(child.spawn({ up = { "a", "b" }, down = { "c" } }, function() end))
      assert.equal(before + 3, core.open_fds())
      assert.same({ "exited", 0, false }, { proc:finish(30) })
      assert.equal(before, core.open_fds())
      -- a new pipe may reuse those fd numbers: a child inherits it
      local r, w = assert(core.pipe())
      local c = assert(child.spawn({ up = { "seen" } }, function(fds)
        child.send(fds.seen, "o", tostring(core.write_fd(w, "x")))
      end))
      assert.same({ "o", "true" }, { c:receive("seen", 30) })
      c:finish(30)
      core.close_fd(r); core.close_fd(w)
    end)
  end)

  it("a ns:pid helper holds no other helper's channel (fds counted by a host tool)",
     function()
    -- before: the second helper inherited the first one's pipe (its
    -- caller's end), one fd more
    local n1, n2 = mountns.scenario(function(ns)
      local u = ns:unshare()
      local p1, p2 = ns:pid(), u:pid()
      return fd_count(ns, p1), fd_count(ns, p2)
    end)
    assert.is_true(n1 >= 4) -- stdin, stdout, stderr, its own channel at least
    assert.equal(n1, n2)
  end)

  describe("small files", function()
    -- issue 24: a file that holds two jobs is split along its seam; these
    -- numbers say when to look
    local function over(dir, ext, max)
      local long = {}
      local out = helper.sh("cd " .. helper.ROOT .. " && find " .. dir .. " -name '*." .. ext
        .. "' -exec wc -l {} + | grep -v ' total$'")
      for n, file in out:gmatch("(%d+) ([^\n]+)") do
        if tonumber(n) > max then long[#long + 1] = file .. ": " .. n .. " lines" end
      end
      table.sort(long)
      return long
    end

    it("no Lua module over 900 lines", function()
      assert.same({}, over("lua", "lua", 900))
    end)

    it("no C file over 800 lines", function()
      assert.same({}, over("csrc", "c", 800))
    end)

    it("the count finds a long file (the other polarity)", function()
      assert.is_true(#over("lua", "lua", 100) > 0)
    end)
  end)

  describe("one scenario driver, two backends (mountns.driver)", function()
    local driver = require "mountns.driver"

    -- a backend that runs fn in this process and says what it was given
    local function stub(seen)
      return {
        OPTIONS = { "timeout", "label", "extra" },
        check = function(opts) seen.checked = opts.extra; return "made" end,
        starts = true,
        run = function(fn, _, ask, made, ...)
          seen.ask, seen.made = ask, made
          local function packed(...) return { n = select("#", ...), ... } end
          local res = packed(pcall(fn, "first", ...))
          if not res[1] then return false, res[2] end
          return true, { dot = "D", golden = "G", notes = { "n" } },
            (table.unpack or unpack)(res, 2, res.n) -- luacheck: ignore
        end,
      }
    end

    it("reads the arguments, the options and the timeout, returns fn's results", function()
      local seen = {}
      assert.same({ "first", 1, 2 }, { driver.scenario(stub(seen), 1, "s", function(ns, a, b)
        return ns, a, b
      end, { extra = "x" }, 1, 2) })
      assert.equal("x", seen.checked)
      assert.equal("made", seen.made)
      assert.equal(driver.DEFAULT_TIMEOUT, seen.ask.timeout)
      -- no name: fn first; a timeout of its own
      assert.same({ "first" }, { driver.scenario(stub(seen), 1, function(ns) return ns end,
        { timeout = 5 }) })
      assert.equal(5, seen.ask.timeout)
      -- outside a run, a failure raises
      assert.has_error(function()
        driver.scenario(stub(seen), 1, function() error("boom", 0) end)
      end, "boom")
    end)

    it("raises a usage error at the caller's line, for any backend's option set", function()
      local ok, err = pcall(driver.scenario, stub({}), 1, "s", function() end, { nope = 1 })
      assert.is_false(ok)
      assert.matches("bad argument #3 to 'scenario'", err)
      assert.matches("unknown option 'nope'", err, 1, true)
      local line
      ok, err = pcall(function()
        line = debug.getinfo(1, "l").currentline + 1
        local r = driver.scenario(stub({}), 1, 42, function() end)
        return r
      end)
      assert.is_false(ok)
      assert.matches("43-house_spec.lua:" .. line .. ": bad argument #1 to 'scenario' "
        .. "(string expected, got number)", err, 1, true)
    end)

    it("under run_script: the run's timeout, a start for a backend that starts, a report "
      .. "with the ending; a failure reported and nil returned", function()
      local seen, reports, starts = {}, {}, {}
      local run = { timeout = 7, dot = true, golden = true,
                    start = function(name, timeout) starts[#starts + 1] = { name, timeout } end,
                    report = function(...) reports[#reports + 1] = { ... } end }
      local ok = driver.run_script(run, function()
        assert.equal(run, driver.running())
        assert.same({ "r" }, { driver.scenario(stub(seen), 1, "a", function() return "r" end) })
        assert.equal(7, seen.ask.timeout)
        assert.equal("a", seen.ask.dot) -- the picture's title
        assert.is_nil(driver.scenario(stub(seen), 1, "b", function() error("bad", 0) end))
      end)
      assert.is_true(ok)
      assert.is_nil(driver.running())
      assert.same({ { "a", 7 }, { "b", 7 } }, starts)
      assert.equal(2, #reports)
      local a, b = reports[1], reports[2]
      assert.same({ "a", true }, { a[1], a[2] })
      assert.is_nil(a[3])
      assert.is_number(a[4])
      assert.same({ "D", "G", { "n" } }, { a[5], a[6], a[7] })
      assert.same({ "b", false, "bad" }, { b[1], b[2], b[3] })
      assert.is_nil(b[5])
    end)

    it("a model scenario and a kernel scenario report through it alike", function()
      local model = require "mountns.model"
      local mountns_scenario = require("mountns.scenario").scenario
      local reports, starts = {}, 0
      local run = { dot = true, golden = true, start = function() starts = starts + 1 end,
                    report = function(...) reports[#reports + 1] = { ... } end }
      driver.run_script(run, function()
        for _, sc in ipairs { model.scenario, mountns_scenario } do
          sc("m", function(ns) ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs") end)
        end
      end)
      assert.equal(1, starts) -- the kernel's only: its process is the runner's to bound
      assert.equal(2, #reports)
      for _, r in ipairs(reports) do
        assert.same({ "m", true }, { r[1], r[2] })
        assert.matches("^digraph", r[5])
        assert.matches("/X", r[6], 1, true)
      end
      -- the same golden text from both backends
      assert.equal(reports[1][6], reports[2][6])
    end)
  end)

  describe("spec/tools/layers.lua", function()
    local layers = dofile(helper.ROOT .. "/spec/tools/layers.lua")

    it("finds no process call outside mountns.child in the tree", function()
      local graph, names, files, calls = layers.graph(helper.ROOT .. "/lua/mountns")
      assert.same({}, layers.check(graph, names, files, calls))
      assert.is_true(#calls.child > 0) -- the one home does call them
    end)

    it("reports a process call in any other module, none in child.lua", function()
      local dir = helper.sh("mktemp -d")
      helper.write(dir, "child.lua", 'local core = require "mountns.core"\n'
        .. "local pid = core.fork()\ncore.waitpid(pid)\n")
      helper.write(dir, "agent.lua", 'local core = require "mountns.core"\n'
        .. "-- core.fork() in a comment is no call\n"
        .. "local pid = core.fork()\ncore.kill (pid, 'KILL')\ncore.kill_tree(pid)\n")
      local problems = layers.check(layers.graph(dir))
      helper.sh("rm -r " .. dir)
      assert.same({
        "agent.lua:3: calls core.fork outside mountns.child (start a child with child.spawn)",
        "agent.lua:4: calls core.kill outside mountns.child (start a child with child.spawn)",
        "agent.lua:5: calls core.kill_tree outside mountns.child (start a child with "
          .. "child.spawn)",
      }, problems)
    end)
  end)
end)
