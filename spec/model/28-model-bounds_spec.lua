-- The model's bounds (issue 23): a model scenario honours its timeout,
-- `--timeout` and Ctrl-C as a kernel scenario does (the same verdict, the
-- next scenario runs), on every interpreter (LuaJIT runs no hook inside a
-- compiled loop); and a model namespace never reaches the host: a
-- transcript's touch and cat act on the model's files, a model ns:run
-- raises, `run --both` follows a transcript's files without a false blame.
-- The runs are `bin/mountns run` in a subprocess bounded by timeout(1), so
-- a bound that does not hold fails the spec instead of hanging it.
local helper = require "helper"
local model = require "mountns.model"
local core = require "mountns.core"
require "mountns.shell" -- a model namespace's ns:shell

local ROOT = helper.ROOT

local dir
local function write(name, text) return helper.write(dir, name, text) end

-- `bin/mountns ARGS`: its output (stderr too) and a last line "exit=N";
-- killed after 120 s (then "exit=124"), far beyond any bound used here
local function run(args)
  return helper.sh("cd " .. ROOT .. " && timeout -s KILL 120 " .. helper.lua_cmd()
    .. " bin/mountns " .. args .. " 2>&1; echo \"exit=$?\"")
end

-- scenarios that never end, each in its own way, then one that passes
local SPINNERS = [[
local mountns = require "mountns"
local function spin(n) local i = 0 while i ~= n do i = i + 1 end return i end
spin(1e6) -- LuaJIT: spin's loop is a compiled trace before any scenario runs
local T = %s
mountns.scenario("loop", function() while true do end end, T)
mountns.scenario("compiled", function() spin() end, T)
mountns.scenario("catches", function() while true do pcall(spin) end end, T)
mountns.scenario("coroutine", function()
  local co = coroutine.wrap(function() while true do pcall(spin) end end)
  while true do pcall(co) end
end, T)
mountns.scenario("handler", function()
  while true do xpcall(spin, function() while true do end end) end
end, T)
mountns.scenario("tail call", function() return spin() end, T)
mountns.scenario("next", function(ns) ns:mkdir("/a"); assert(ns:exists("/a")) end)
]]

local NAMES = { "loop", "compiled", "catches", "coroutine", "handler", "tail call" }

describe("a model scenario's timeout", function()
  setup(function() dir = helper.tempdir() end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("stops it under run --model, says so as a kernel timeout does, and the next runs",
    function()
      local f = write("spin.lua", SPINNERS:format("{ timeout = 0.3 }"))
      local out = run("run --model " .. f)
      local want = {}
      for _, name in ipairs(NAMES) do
        want[#want + 1] = "TIMEOUT " .. name .. " %(%d+ ms%)\n    model: the scenario ran past "
          .. "its timeout of 0%.3 s and was stopped\n"
      end
      assert.matches("^" .. table.concat(want) .. "ok   next %(%d+ ms%)\n1 passed, 6 failed "
        .. "%(6 TIMEOUT%)\n"
        .. "exit=1$", out)
    end)

  it("is --timeout when the scenario gives none, and the default 60 s is not it", function()
    local f = write("spin2.lua", SPINNERS:format("nil"))
    local out = run("run --model --timeout 0.2 " .. f)
    assert.matches("^TIMEOUT loop %(%d+ ms%)\n    model: the scenario ran past its timeout of "
      .. "0%.2 s and was stopped\n", out)
    assert.matches("\nok   next %(%d+ ms%)\n1 passed, 6 failed %(6 TIMEOUT%)\nexit=1$", out)
    -- its own timeout wins over --timeout
    local g = write("own.lua", [[
      require("mountns").scenario("own", function() while true do end end, { timeout = 0.1 })
    ]])
    assert.matches("^TIMEOUT own %(%d+ ms%)\n    [^\n]*ran past its timeout of 0%.1 s",
      run("run --model --timeout 30 " .. g))
  end)

  it("reads as the kernel's: the same verdict line, the same sentence", function()
    local f = write("both.lua", [[
      require("mountns").scenario("stuck", function() while true do end end, { timeout = 0.2 })
    ]])
    local kernel, modelled = run("run " .. f), run("run --model " .. f)
    local pattern = "^TIMEOUT stuck %(%d+ ms%)\n    (%a+): ([^\n]*) ran past its timeout of 0%.2 s "
      .. "and was (%a+)\n0 passed, 1 failed %(1 TIMEOUT%)\nexit=1$"
    local kernel_words = { kernel:match(pattern) }
    kernel_words[2] = kernel_words[2] and kernel_words[2]:gsub(" %d+$", " PID")
    assert.are.same({ "isolate", "child PID", "killed" }, kernel_words, kernel)
    assert.are.same({ "model", "the scenario", "stopped" }, { modelled:match(pattern) },
      modelled)
  end)

  it("times it by the wall clock, as a kernel scenario is timed", function()
    -- a scenario that waits 0.3 s in a system call spends no CPU
    local f = write("wait.lua", [[
      local core = require "mountns.core"
      require("mountns").scenario("waits", function()
        local r, w = core.pipe()
        core.read_all(r, 0.3)
        core.close_fd(r); core.close_fd(w)
      end)
    ]])
    local ms = tonumber(run("run --model " .. f):match("^ok   waits %((%d+) ms%)\n"))
    assert.is_true(ms and ms >= 290, tostring(ms))
  end)

  it("holds in model.scenario too, and leaves the hooks, the JIT and the globals as found",
    function()
      local function spin() local i = 0 while true do i = i + 1 end end
      local jit_on = jit and jit.status()
      local function state()
        local h, mask, count = debug.gethook()
        return { h or false, mask or false, count or false, jit and jit.status() or false,
                 coroutine.create, coroutine.wrap, xpcall }
      end
      local before = state()
      local ok, err = pcall(model.scenario, function() while true do pcall(spin) end end,
                            { timeout = 0.2 })
      assert.is_false(ok)
      assert.are.equal("model: the scenario ran past its timeout of 0.2 s and was stopped",
        err)
      assert.are.same(before, state())
      -- a scenario that ends in time: its results, nothing stopped
      assert.are.same({ 1, "two" }, { model.scenario(function() return 1, "two" end,
                                                     { timeout = 0.2 }) })
      -- a coroutine it made and returned runs unbounded after it, past its deadline
      local co = model.scenario(function()
        return coroutine.wrap(function() local i = 0 while i < 1e6 do i = i + 1 end return i end)
      end, { timeout = 0.05 })
      local r, w = core.pipe()
      core.read_all(r, 0.1)
      core.close_fd(r); core.close_fd(w)
      assert.are.equal(1e6, co())
      -- a previous hook is back after it
      local calls = 0
      debug.sethook(function() calls = calls + 1 end, "", 1000)
      model.scenario(function(ns) ns:mkdir("/a") end)
      local h = debug.gethook()
      debug.sethook()
      assert.is_function(h)
      if jit_on then assert.is_true(jit.status()) end
    end)

  it("and Ctrl-C stop run --model at once: the summary so far, exit 130", function()
    -- as spec 11's SIGINT: its own process group, SIGINT to all of it
    local out_file = dir .. "/sigint.out"
    local f = write("spin3.lua", [[
      local mountns = require "mountns"
      mountns.scenario("quick", function() end)
      mountns.scenario("spins", function()
        print("started"); io.stdout:flush()
        while true do end
      end)
      mountns.scenario("never", function() print("NEVER") end)
    ]])
    -- (timeout(1) kills the group if SIGINT does not end it: exit 137)
    local rc = helper.sh("cd " .. ROOT .. " && : >" .. out_file .. " && { setsid timeout "
      .. "-s KILL 60 " .. helper.lua_cmd() .. " bin/mountns run --model " .. f .. " >"
      .. out_file .. " 2>&1 & pid=$!; for i in $(seq 400); do grep -q started " .. out_file
      .. " && break; sleep 0.05; done; kill -INT -$pid; wait $pid; echo $?; }")
    local out = helper.read(out_file)
    assert.are.equal("130", rc, out)
    assert.matches("^ok   quick %(%d+ ms%)\n# started\n1 passed, 0 failed %(interrupted%)\n$", out)
  end)

  it("and Ctrl-C stops a model.scenario in a plain script, a compiled loop too (LuaJIT)",
    function()
      -- one SIGINT to the interpreter, as a terminal's Ctrl-C: lua.c's
      -- handler sets a hook, which LuaJIT would not run in a compiled loop
      local out_file = dir .. "/plain.out"
      local f = write("plain.lua", [[
        local model = require "mountns.model"
        local function spin(n) local i = 0 while i ~= n do i = i + 1 end end
        spin(1e6) -- compiled before the scenario starts
        model.scenario(function()
          print("started"); io.stdout:flush()
          spin()
        end)
      ]])
      -- (killed after 30 s if SIGINT does not end it: exit 137)
      local rc = helper.sh("cd " .. ROOT .. " && : >" .. out_file .. " && { "
        .. helper.lua_vars() .. " " .. f .. " >" .. out_file .. " 2>&1 & pid=$!; "
        .. "for i in $(seq 400); do grep -q started " .. out_file .. " && break; sleep 0.05; "
        .. "done; kill -INT $pid; for i in $(seq 600); do kill -0 $pid 2>/dev/null || break; "
        .. "sleep 0.05; done; kill -KILL $pid 2>/dev/null; wait $pid; echo $?; }")
      local out = helper.read(out_file)
      assert.are.equal("1", rc, out)
      assert.matches("^started\n[^\n]*interrupted!", out)
    end)
end)

describe("a model namespace never touches the host", function()
  setup(function() dir = helper.tempdir() end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("a transcript's touch and cat under run --model: the model's files, the kernel's answers",
    function()
      local host_file = dir .. "/made-by-a-transcript"
      local hostname = helper.read("/etc/hostname"):gsub("%s+$", "")
      local f = write("transcript.lua", ([[
        local mountns = require "mountns"
        mountns.scenario("files", function(ns)
          io.write((ns:shell([==[
# touch HOST
# cat /etc/hostname
# mkdir /d
# touch /d/f /d
# ls /d
# cat /d/f
# cat /d
# mount -t tmpfs -o ro tmpfs /d
# touch /d/g
# umount /d
# touch e
# mount --bind /d/f /e
# cat /e
]==])))
          assert(ns:exists("/d/f") and ns:read("/e") == "")
        end)
      ]]):gsub("HOST", host_file))
      local modelled = run("run --model " .. f)
      local kernel = run("run " .. f)
      -- nothing made on the host, nothing of the host's shown
      assert.is_nil(io.open(host_file), host_file)
      -- (as a line of cat's output: the name alone, "vm" here, can turn up
      -- inside the random name of the temporary directory)
      assert.is_true(#hostname > 0)
      for line in modelled:gmatch("[^\n]+") do
        assert.are_not.equal("# " .. hostname, line, modelled)
      end
      local function untimed(s) return (s:gsub(" %(%d+ ms%)\n", "\n")) end
      assert.are.equal(untimed(kernel), untimed(modelled))
      assert.matches("\n# touch: cannot touch '" .. host_file:gsub("%p", "%%%0")
        .. "': No such file or directory\n", modelled)
      assert.matches("\n# cat: /etc/hostname: No such file or directory\n", modelled)
      assert.matches("\n# # ls /d\n# f\n", modelled)
      assert.matches("\n# cat: /d: Is a directory\n", modelled)
      assert.matches("\n# touch: cannot touch '/d/g': Read%-only file system\n", modelled)
      assert.matches("\nok   files\n1 passed, 0 failed\nexit=0\n?$", untimed(modelled))
    end)

  it("model ns:run raises at the caller's line and never calls its function", function()
    local called = false
    local ok, err = pcall(model.scenario, function(ns)
      ns:run(function() called = true end)
    end)
    assert.is_false(ok)
    assert.matches("^[^\n]*28%-model%-bounds_spec%.lua:%d+: ns:run: not available in the model",
      err)
    assert.is_false(called)
    -- its argument is checked first, as a kernel namespace's ns:run does
    local _, bad = pcall(model.scenario, function(ns) ns:run(1) end)
    assert.matches("bad argument #1 to 'ns:run' %(function expected, got number%)", bad)
  end)

  it("a transcript on model.scenario acts on the model's files", function()
    local out = model.scenario(function(ns)
      ns:mkdir("/d")
      ns:write("/d/old", "kept\n")
      local text = ns:shell("# touch /d/new /d/old\n# cat /d/old\n# cat /d/none\n")
      assert.are.equal("", ns:read("/d/new"))
      assert.are.equal("kept\n", ns:read("/d/old"))
      return text
    end)
    assert.are.equal("# touch /d/new /d/old\n# cat /d/old\nkept\n# cat /d/none\n"
      .. "cat: /d/none: No such file or directory\n", out)
  end)

  it("run --both follows a transcript's files: no false blame, no note", function()
    local f = write("both.lua", [[
      local mountns = require "mountns"
      mountns.scenario("bind a touched file", function(ns)
        ns:shell([==[
# mkdir /d
# touch /d/f /g
# mount --bind /d/f /g
]==])
        assert(ns:mounts():find("/g"))
      end)
    ]])
    local out = run("run --both " .. f)
    assert.matches("^ok   bind a touched file %(%d+ ms%)\n1 passed, 0 failed\nexit=0$", out)
    -- and the check of the comparison: a model told the file is missing fails
    -- at the bind (the kernel's succeeded)
    local g = write("both2.lua", [[
      local mountns = require "mountns"
      mountns.scenario("a model that drops writes", function(ns)
        ns:shell("# mkdir /d\n# touch /d/f /g\n# mount --bind /d/f /g\n")
      end)
    ]])
    local ok = require("mountns.scenario").run_file(g, {
      both = { override = { write = function() return true end } },
      report = function(_, passed, err)
        assert.is_false(passed)
        assert.matches("bind%(\"/d/f\", \"/g\"", err)
      end })
    assert.is_true(ok)
  end)
end)
