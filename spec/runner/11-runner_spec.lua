-- bin/mountns run: a verdict that cannot lie. A script's os.exit, a nested
-- scenario, top-level mounts, Ctrl-C, hostile names and prints: each ends
-- in a failure the runner reports, never a pass or a lost line. TAP output
-- is read back with perl's TAP::Parser (.ci/tap-check, the parser of prove).
local helper = require "helper"
local mountns = require "mountns"
require "mountns.luassert"

local ROOT = helper.ROOT

local cli = helper.cli
-- a scenario file that passes on a fact of the kernel (its tmpfs is mounted)
local passing = helper.passing_scenario

local dir
local function write(name, text) return helper.write(dir, name, text) end

local function has_tap_parser()
  local r = os.execute("perl -MTAP::Parser -e 1 >/dev/null 2>&1")
  return r == true or r == 0
end

describe("mountns run", function()
  setup(function()
    dir = helper.tempdir()
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  describe("a file's os.exit", function()
    it("ends only that file: its results count, the early exit fails, the others run", function()
      local a = write("exits.lua", [[
        local mountns = require "mountns"
        local expect = require "mountns.expect"
        mountns.scenario("fails first", function(ns)
          ns:mkdir("/X")
          expect.mounted(ns, "/X")
        end)
        os.exit(0)
      ]])
      local b = write("after.lua", passing("runs after", "after"))
      local out = cli("run " .. a .. " " .. b)
      assert.matches("^FAIL fails first %(%d+ ms%)\n    [^\n]*expected a mount at /X", out)
      assert.matches("\nERROR " .. a:gsub("%p", "%%%0") .. " exited early %(0 ms%)\n"
        .. "    its process exited with status 0 before the script ended", out)
      assert.matches("\nok   runs after %(%d+ ms%)\n", out)
      assert.matches("\n1 passed, 2 failed %(1 FAIL, 1 ERROR%)\nexit=1$", out)
    end)

    it("os.exit(0) of a file whose scenarios passed is still a failure", function()
      local a = write("exits-ok.lua", passing("passes", "p") .. "os.exit(0)\n")
      local out = cli("run --tap " .. a)
      assert.matches("\nok 1 %- passes\nnot ok 2 %- [^\n]* exited early\n", out)
      assert.matches("\n1%.%.2\n# 1 passed, 1 failed %(1 ERROR%)\nexit=1$", out)
    end)
  end)

  describe("nested scenarios", function()
    it("are an error counted as a failure, even when the inner error is caught", function()
      local f = write("nest.lua", [[
        local mountns = require "mountns"
        mountns.scenario("outer", function(ns)
          ns:mkdir("/X")
          mountns.scenario("inner", function() end)
        end)
        mountns.scenario("outer, inner caught", function()
          pcall(mountns.scenario, "inner", function() end)
        end)
      ]])
      local out = cli("run " .. f)
      assert.matches("^ERROR outer %(%d+ ms%)\n    [^\n]*nest%.lua:4: scenarios cannot nest", out)
      assert.matches("\nERROR outer, inner caught %(%d+ ms%)\n    [^\n]*nest%.lua:7: "
        .. "scenarios cannot nest", out)
      assert.is_nil(out:match("\nok "))
      assert.matches("\n0 passed, 2 failed %(2 ERROR%)\nexit=1$", out)
    end)

    it("raise outside the runner too", function()
      local ok, err = pcall(mountns.scenario, function()
        local r = mountns.scenario(function() return 1 end)
        return r
      end)
      assert.is_false(ok)
      assert.matches("11%-runner_spec%.lua:%d+: scenarios cannot nest", err)
    end)
  end)

  it("runs each file in its own mount namespace: top-level mounts stay there", function()
    local f = write("toplevel.lua", [[
      local mountns = require "mountns"
      assert(mountns.mount("leak", "/mnt", "tmpfs"))
      print("mounted " .. mountns.mountinfo():find("/mnt").source)
      mountns.scenario("after a top-level mount", function() end)
    ]])
    -- the CLI runs inside an isolated child: whatever it does to its own
    -- namespace (the isolated child's) is seen there and nowhere else
    local before, after, out = mountns.isolate(function()
      local b = helper.host_mountinfo()
      local o = cli("run " .. f)
      return b, helper.host_mountinfo(), o
    end)
    assert.are.equal(before, after)
    -- and the mount was real, in the script's own namespace
    assert.matches("^# mounted leak\nok   after a top%-level mount", out)
    assert.matches("\nexit=0$", out)
  end)

  describe("SIGINT", function()
    -- `bin/mountns ARGS` in a process group of its own (setsid); once its
    -- output says "started", SIGINT to the whole group as Ctrl-C sends it.
    -- Returns its exit status and its output.
    local runs = 0
    local function interrupt(args)
      -- a new file each time, empty before the run starts: "started" is
      -- this run's, printed once the runner blocks SIGINT
      runs = runs + 1
      local out_file = dir .. "/sigint" .. runs .. ".out"
      local rc = helper.sh("cd " .. ROOT .. " && : >" .. out_file .. " && { setsid "
        .. helper.lua_cmd()
        .. " bin/mountns " .. args .. " >" .. out_file .. " 2>&1 & pid=$!; "
        .. "for i in $(seq 200); do grep -q started " .. out_file .. " && break; "
        .. "sleep 0.05; done; kill -INT -$pid; wait $pid; echo $?; }")
      local f = assert(io.open(out_file))
      local out = f:read("*a")
      f:close()
      return rc, out
    end

    it("stops the run at once: scenario killed, summary so far, exit 130", function()
      local a = write("slow.lua", [[
        local mountns = require "mountns"
        local core = require "mountns.core"
        mountns.scenario("quick", function() end)
        mountns.scenario("slow", function()
          print("started " .. core.getpid())
          io.stdout:flush()
          local r = core.pipe()
          core.read_all(r, 20) -- nobody writes: 20 s
        end)
        mountns.scenario("never", function() print("NEVER") end)
      ]])
      local b = write("never.lua", passing("never either", "n"))
      local rc, out = interrupt("run " .. a .. " " .. b)
      assert.are.equal("130", rc, out)
      assert.matches("^ok   quick %(%d+ ms%)\n# started %d+\n"
        .. "1 passed, 0 failed %(interrupted%)\n$", out)
      -- the slow scenario's process got SIGKILL when the script's process
      -- died: wait until it is gone (or a zombie nobody reaped yet)
      local state = helper.wait_gone(out:match("started (%d+)"))
      assert.is_nil(state, state)
    end)

    it("under --tap it is a bail-out", function()
      local a = write("slow2.lua", [[
        local mountns = require "mountns"
        local core = require "mountns.core"
        mountns.scenario("slow", function()
          print("started"); io.stdout:flush()
          core.read_all((core.pipe()), 20)
        end)
      ]])
      local rc, out = interrupt("run --tap " .. a)
      assert.are.equal("130", rc, out)
      assert.are.equal("TAP version 13\n# started\nBail out! interrupted\n"
        .. "# 0 passed, 0 failed (interrupted)\n", out)
    end)
  end)

  describe("--timeout S", function()
    it("is every scenario's default timeout", function()
      local f = write("stuck.lua", [[
        local mountns = require "mountns"
        local core = require "mountns.core"
        mountns.scenario("stuck", function() core.read_all((core.pipe())) end)
        mountns.scenario("own timeout wins", function()
          core.read_all((core.pipe()))
        end, { timeout = 0.1 })
      ]])
      -- both block for ever: each is killed at its timeout, whatever the load
      local out = cli("run --timeout 0.2 " .. f)
      assert.matches("^TIMEOUT stuck %(%d+ ms%)\n    [^\n]*ran past its timeout of 0%.2 s", out)
      assert.matches("\nTIMEOUT own timeout wins %(%d+ ms%)\n    [^\n]*ran past its timeout "
        .. "of 0%.1 s", out)
      assert.matches("\n0 passed, 2 failed %(2 TIMEOUT%)\nexit=1$", out)
    end)

    it("must be a number of seconds > 0", function()
      for _, v in ipairs { "0", "-1", "x", "nan", "" } do
        assert.matches("^mountns: run: %-%-timeout needs a number of seconds > 0\nexit=2$",
          cli("run --timeout '" .. v .. "' examples/shared.lua"))
      end
      assert.matches("^mountns: run: unknown option %-%-bogus\nexit=2$",
        cli("run --bogus examples/shared.lua"))
    end)
  end)

  describe("a luassert assertion failing inside a scenario", function()
    it("reaches busted as a failure, with the assertion's diagnostic", function()
      local ok, err = pcall(mountns.scenario, function(ns)
        ns:mkdir("/X")
        assert.mounted(ns, "/X")
      end)
      assert.is_false(ok)
      -- busted tells a failure from an error by the error's metatable
      local _, direct = pcall(assert.is_true, false)
      assert.are.equal(getmetatable(direct), getmetatable(err))
      local msg = tostring(err)
      assert.matches("expected a mount at /X in ns1 mnt:%[%d+%]", msg)
      assert.matches("TARGET +ID PARENT PROPAGATION", msg)
      assert.is_nil(msg:match("stack traceback"))
    end)

    it("stays a failure inside ns:run of a namespace an agent runs (a new user namespace)",
      function()
      -- ns:run runs fn in the scenario's process (setns), never in the
      -- agent: the failure crosses one process boundary, as above
      local _, direct = pcall(assert.is_true, false)
      for _, fn in ipairs {
        function(u) u:run(function() assert.is_true(false) end) end,
        function(u) u:run(function() assert.mounted(u, "/nope") end) end,
        function(u) assert.mounted(u:unshare { user = true }, "/nope") end,
      } do
        local ok, err = pcall(mountns.scenario, function(ns) fn(ns:unshare { user = true }) end)
        assert.is_false(ok)
        assert.are.equal(getmetatable(direct), getmetatable(err))
        assert.is_nil(tostring(err):match("stack traceback"))
      end
    end)

    it("an error that is no assertion stays an error", function()
      local ok, err = pcall(mountns.scenario, function(ns) ns:mount("a", "/nope", "tmpfs") end)
      assert.is_false(ok)
      assert.are.equal("string", type(err))
      assert.matches("mount a /nope: No such file or directory %(ENOENT%)", err)
    end)
  end)

  describe("hostile names and prints", function()
    local nasty
    setup(function()
      nasty = write("nasty.lua", [[
        local mountns = require "mountns"
        local expect = require "mountns.expect"
        mountns.scenario("a # TODO b\\c\nnot ok 9 - x\nBail out! y", function(ns)
          ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs"); expect.mounted(ns, "/X")
          io.write("ok 5 - forged\nBail out! z\n\27[2Jno newline")
        end)
        mountns.scenario("# SKIP it", function(ns)
          ns:mkdir("/Y"); ns:mount("y", "/Y", "tmpfs"); expect.mounted(ns, "/Y")
          print("1..1")
        end)
        mountns.scenario("fails\r\nnot ok", function(ns)
          expect.mounted(ns, "/Z")
        end)
        io.write("top-level, no newline")
      ]])
    end)

    it("--tap is valid TAP 13: one point each, prints as comments", function()
      local out = cli("run --tap " .. nasty)
      local lines = {}
      for l in out:gmatch("[^\n]*") do lines[#lines + 1] = l end
      assert.are.equal("TAP version 13", lines[1])
      for _, l in ipairs(lines) do
        assert.truthy(l == "" or l:match("^ok %d+ %- ") or l:match("^not ok %d+ %- ")
          or l:match("^# ") or l:match("^1%.%.%d+$") or l == "TAP version 13"
          or l:match("^exit=%d$"), l)
        assert.is_nil(l:match("[%z\1-\8\10-\31\127]"), l) -- no raw ESC or CR
      end
      assert.matches("\nok 1 %- a \\# TODO b\\134c\\012not ok 9 %- x\\012Bail out! y\n", out)
      assert.matches("\n# ok 5 %- forged\n# Bail out! z\n# \\033%[2Jno newline\nok 1 ", out)
      assert.matches("\n# 1%.%.1\nok 2 %- \\# SKIP it\n", out)
      assert.matches("\nnot ok 3 %- fails\\015\\012not ok\n# ", out)
      assert.matches("\n# top%-level, no newline\n1%.%.3\n# 2 passed, 1 failed\nexit=1$", out)
    end)

    it("--tap reads back through TAP::Parser (prove) as exactly three points", function()
      if not has_tap_parser() then
        pending("perl's TAP::Parser is not installed")
        return
      end
      local tap_file = dir .. "/nasty.tap"
      helper.sh("cd " .. ROOT .. " && " .. helper.lua_vars() .. " bin/mountns run --tap "
        .. nasty .. " >" .. tap_file .. " 2>/dev/null")
      local parsed = helper.sh(ROOT .. "/.ci/tap-check <" .. tap_file .. "; echo \"rc=$?\"")
      local points = {}
      for l in parsed:gmatch("[^\n]+") do
        if l:match("ok %d") or l:match("^bailout") or l:match("^unknown")
          or l:match("^parse error") or l:match("^plan") then
          points[#points + 1] = l
        end
      end
      assert.are.same({
        "ok 1 - a \\# TODO b\\134c\\012not ok 9 - x\\012Bail out! y",
        "ok 2 - \\# SKIP it",
        "not ok 3 - fails\\015\\012not ok",
        "plan 1..3",
      }, points)
      assert.matches("rc=0$", parsed)
    end)

    it("the plain report has one line per scenario too", function()
      local out = cli("run " .. nasty)
      local results = {}
      for l in out:gmatch("[^\n]*") do
        assert.truthy(l == "" or l:match("^ok   ") or l:match("^FAIL ") or l:match("^    ")
          or l:match("^# ") or l:match("^%d+ passed, %d+ failed$") or l:match("^exit=%d$"), l)
        assert.is_nil(l:match("[%z\1-\8\11-\31\127]"), l)
        if l:match("^ok   ") or l:match("^FAIL ") then results[#results + 1] = l end
      end
      assert.are.equal(3, #results)
      assert.matches("^ok   a # TODO b\\134c\\012not ok 9 %- x\\012Bail out! y %(%d+ ms%)$",
        results[1])
      assert.matches("^ok   # SKIP it %(%d+ ms%)$", results[2])
      assert.matches("^FAIL fails\\015\\012not ok %(%d+ ms%)$", results[3])
      assert.matches("\n2 passed, 1 failed\nexit=1$", out)
    end)
  end)

  describe("--dot DIR", function()
    it("two files of the same name in different folders keep both pictures", function()
      local a = write("one/same.lua", passing("first", "first"))
      local b = write("two/same.lua", passing("second", "second"))
      local pics = dir .. "/pics"
      local out = cli("run --dot " .. pics .. " " .. a .. " " .. b)
      assert.matches("\n2 passed, 0 failed\nexit=0$", out)
      local function read(name)
        local f = io.open(pics .. "/" .. name)
        if not f then return nil end
        local s = f:read("*a"); f:close(); return s
      end
      -- each picture shows its own scenario's tmpfs (the source name)
      assert.matches('label="first', assert(read("same-1.dot")))
      assert.matches('label="second', assert(read("same~2-1.dot")))
    end)

    it("an uncreatable DIR is one clear line, exit 2", function()
      assert.are.equal("mountns: run: --dot: mkdir /proc/nope/pics: No such file or directory "
        .. "(ENOENT)\nexit=2", cli("run --dot /proc/nope/pics examples/shared.lua"))
      local file = write("plain-file", "")
      assert.matches("^mountns: run: %-%-dot: mkdir " .. file:gsub("%p", "%%%0")
        .. "/pics: Not a directory %(ENOTDIR%)\nexit=2$", cli("run --dot " .. file .. "/pics "
        .. "examples/shared.lua"))
    end)
  end)
end)

describe("mountns run --kernel", function()
  setup(function()
    dir = helper.tempdir()
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("host runs here, as without it", function()
    local f = write("here.lua", passing("here", "h"))
    local out = cli("run --kernel host " .. f)
    assert.matches("ok +here", out)
    assert.matches("exit=0\n?$", out)
  end)

  it("names the kernels it knows and refuses what cannot come back", function()
    local out = cli("run --kernel 5.4 x.lua")
    assert.matches("run: %-%-kernel: 5%.10, 6%.1, 6%.12, 7%.2, 7%.3, host or a path to a "
      .. "kernel image expected, got 5%.4", out)
    assert.matches("exit=2\n?$", out)
    out = cli("run --kernel")
    assert.matches("run: %-%-kernel needs a kernel: a series %(such as 5%.10 or 7%.3%), host "
      .. "or a path to a kernel image", out)
    assert.matches("exit=2\n?$", out)
  end)

  it("brings the guest's report files back to the host's paths", function()
    -- the guest's paths: vm/run's output share
    local runner = require "mountns.runner"
    local guest, copies = runner.guest_args { "--tap", "--junit", "out/r.xml", "--artifacts",
      "arts/", "--", "--junit", "x.lua" }
    assert.same({ "--tap", "--junit", "/run/mountns-out/1-r.xml", "--artifacts",
                  "/run/mountns-out/2-arts", "--", "--junit", "x.lua" }, guest)
    assert.same({ { host = "out/r.xml", name = "1-r.xml" }, { host = "arts/", name = "2-arts" } },
                copies)
    -- a stand-in vm/run (in a tree of its own) writes what the guest would
    -- into the share `-o` names; mountns run --kernel copies it back
    local tree = helper.tempdir()
    helper.write(tree, "vm/run", [[
#!/bin/sh
[ "$1" = -o ] || exit 9
share=$2; shift 4; mkdir -p "$share"
for a; do case $a in /run/mountns-out/*) echo "<from the guest/>" > "$share/${a##*/}";; esac; done
exit 3
]])
    helper.write(tree, "vm/kernel", "#!/bin/sh\necho 6.1\n")
    os.execute("chmod +x " .. tree .. "/vm/run " .. tree .. "/vm/kernel")
    local code = runner.command({ "--kernel", "6.1", "--junit", tree .. "/r.xml", "x.lua" },
      { tree = tree, interp = "lua" })
    assert.equal(3, code) -- the guest's exit status, passed through
    assert.equal("<from the guest/>\n", helper.read(tree .. "/r.xml"))
    os.execute("rm -rf " .. tree)
  end)
end)
