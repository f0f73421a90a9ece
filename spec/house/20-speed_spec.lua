-- Where a scenario's cost goes (issue 15), asserted on what the kernel
-- did, never on a clock: the kernel numbers every mount it creates with a
-- 64-bit unique ID from one counter (Linux 6.8+), so the IDs a scenario
-- consumes count the mounts its unshares copied.
local mountns = require "mountns"
local core = require "mountns.core"
local helper = require "helper"

local CALLER_MOUNTS = 3000

describe("scenario template", function()
  it("a scenario copies a small template, not the caller's mount table", function()
    local f = core.features()
    if not (f.statmount and f.statx_unique_id) then
      pending("needs statmount(2) and statx unique mount IDs (Linux 6.8+)")
      return
    end
    local r = mountns.isolate(function()
      local base = helper.sandbox()
      for i = 1, CALLER_MOUNTS do
        local p = base .. "/" .. i
        assert(mountns.mkdir(p))
        assert(mountns.mount("m" .. i, p, "tmpfs", nil, "size=4k"))
      end
      local function root_id() return core.statmount("/").unique_id end
      -- the first scenario of a process makes the template (two copies of
      -- the caller's table, once); the next ones copy only the template.
      -- Other processes' mounts take IDs from the same counter meanwhile
      -- (make test runs spec files in parallel; one loaded run saw 2,512
      -- between two scenarios): they can only widen a gap, so the
      -- narrowest gap is the scenario's own. Up to 50 scenarios, stopping
      -- at the first gap below the bound (five were once all widened
      -- under load); copying the caller's table makes every gap wide.
      local prev = mountns.scenario(root_id)
      local gaps = {}
      for i = 1, 50 do
        local id = mountns.scenario(root_id)
        gaps[i] = id - prev
        prev = id
        if gaps[i] < CALLER_MOUNTS / 2 then break end
      end
      return { gaps = gaps, caller = #mountns.mountinfo() }
    end)
    assert.is_true(r.caller > CALLER_MOUNTS)
    table.sort(r.gaps)
    -- unique mount IDs only grow
    assert.is_true(r.gaps[1] > 0)
    -- copying the caller's table once would take more than 3,000 IDs;
    -- a template copy takes a handful
    assert.is_true(r.gaps[1] < CALLER_MOUNTS / 2,
      "a scenario took " .. r.gaps[1] .. " mount IDs at least")
  end)
end)

describe("mountns show start-up", function()
  -- which mountns modules bin/mountns had loaded when it exited, and its output
  local function loaded(args)
    local out = helper.sh("cd " .. helper.ROOT .. " && " .. helper.lua_vars() .. [[ -e '
      local exit = os.exit
      os.exit = function(...)
        local names = {}
        for name in pairs(package.loaded) do
          if name:match("^mountns") then names[#names + 1] = name end
        end
        table.sort(names)
        io.stderr:write("LOADED ", table.concat(names, " "), "\n")
        return exit(...)
      end' bin/mountns ]] .. args .. " 2>&1 >/dev/null")
    return out:match("LOADED ([^\n]*)")
  end

  it("plain show and show --json load the core only (tree and JSON rendered in C)", function()
    assert.are.equal("mountns.core", loaded("show"))
    assert.are.equal("mountns.core", loaded("show --json"))
  end)

  it("bin/mountns compiles what a plain show runs: the rest is in modules", function()
    -- the interpreter compiles the whole script before it runs any of it:
    -- the other commands' code there cost plain `show` a tenth of its time
    local f = assert(io.open(helper.ROOT .. "/bin/mountns"))
    local src = f:read("*a")
    f:close()
    for _, s in ipairs { '"--kernel"', '"--tap"', '"--random"', '"--seed"', "watching %s via",
                         "usage: mountns run", "proc_stat", "given twice", "PID_MAX" } do
      assert.is_nil(src:find(s, 1, true), "bin/mountns holds " .. s)
    end
    assert.is_function(require("mountns.runner").command)
    assert.is_function(require("mountns.check").command)
    assert.is_function(require("mountns.watch").command)
    assert.truthy(require("mountns.cli").USAGE:find("usage: mountns run", 1, true))
    assert.is_function(require("mountns.cli").show_options)
  end)

  it("show --dot adds show's options, the table, dot and what dot needs", function()
    -- (format's golden raises a failed check marked by mountns.verdict;
    -- mountns.bytecode: the modules from their bytecode)
    assert.are.equal("mountns.args mountns.bytecode mountns.cli mountns.core mountns.dot "
      .. "mountns.format mountns.record mountns.table mountns.verdict", loaded("show --dot"))
    assert.are.equal("mountns.bytecode mountns.cli mountns.core", loaded("show 1"))
  end)

  it("plain show and show --json load no libmount where statmount gives every field", function()
    if not core.features().statmount_complete then
      pending("needs statmount(2) with source and options (Linux 6.13+)")
      return
    end
    -- the libraries mapped into bin/mountns when it exits
    local function libs(args)
      local out = helper.sh("cd " .. helper.ROOT .. " && " .. helper.lua_vars() .. [[ -e '
        local exit = os.exit
        os.exit = function(...)
          local f = io.open("/proc/self/maps")
          io.stderr:write("MAPS ", f:read("*a"):gsub("\n", " "), "\n")
          f:close()
          return exit(...)
        end' bin/mountns ]] .. args .. " 2>&1 >/dev/null")
      return out:match("MAPS ([^\n]*)") or out
    end
    for _, args in ipairs { "show", "show --json" } do
      local maps = libs(args)
      assert.truthy(maps:find("core.so", 1, true), maps)
      assert.is_nil(maps:find("libmount", 1, true), args .. " mapped libmount")
    end
    -- a parse still loads it, on first use
    assert.truthy(libs("show --dot 1"):find("libmount", 1, true))
  end)

  it("a process that pivots into a root without libmount still parses mountinfo", function()
    -- a fresh interpreter (no fork before: nothing loaded libmount) makes
    -- its own namespace, pivots into an empty tmpfs, then parses
    local script = [[
      local mountns = require "mountns"
      local core = require "mountns.core"
      assert(core.pin_proc())
      assert(mountns.unshare())
      local nr = "/tmp/mns/root"
      assert(mountns.mkdir(nr, { parents = true }))
      assert(mountns.mount("root", nr, "tmpfs"))
      assert(mountns.mkdir(nr .. "/old"))
      assert(mountns.chdir(nr))
      assert(mountns.pivot_root(".", "old"))
      assert(mountns.chdir("/"))
      assert(mountns.umount("/old", "detach"))
      local f = io.open("/lib")
      local t, err = mountns.parse_mountinfo((assert(core.read_mountinfo())))
      io.write(f and "lib" or "nolib", " ", tostring(t and #t or err))
      -- a /proc again, for what runs at exit (LeakSanitizer under make asan,
      -- which runs as root); not asserted: in a user namespace the kernel
      -- refuses it (EPERM: no fully visible /proc is left after the pivot)
      mountns.mkdir("/proc")
      mountns.mount("proc", "/proc", "proc")
    ]]
    local out = mountns.isolate(function()
      helper.sandbox()
      local f = assert(io.open("/tmp/mns/pivot.lua", "w"))
      f:write(script)
      f:close()
      return helper.sh(helper.lua_vars() .. " /tmp/mns/pivot.lua 2>&1")
    end)
    assert.are.equal("nolib 1", out)
  end)
end)

-- #novalgrind: under valgrind the agent's /proc/PID/io counts valgrind's own
-- reads too (703 for 100 calls in make valgrind), and a lone run under it saw
-- an agent die before it answered (main's earlier code too)
describe("require \"mountns\" loads on first use", function()
  -- before: require "mountns" loaded all 21 modules (15 ms of CPU), the
  -- model's 2,300 lines among them, in every process that required it
  local HEAVY = { "mountns.model", "mountns.explain", "mountns.shell", "mountns.watch",
                  "mountns.dot", "mountns.mirror", "mountns.scenario", "mountns.namespace",
                  "mountns.format", "mountns.isolate", "mountns.mounts", "mountns.agent" }

  -- a fresh interpreter runs code after `require "mountns"`: the modules
  -- of HEAVY loaded after the require, then after code, and what it printed
  local function fresh(code)
    local out = helper.sh(helper.lua_vars() .. " -e '"
      .. "local mountns = require \"mountns\" "
      .. "local HEAVY = {\"" .. table.concat(HEAVY, "\", \"") .. "\"} "
      .. "local function loaded() local l = {} for _, n in ipairs(HEAVY) do "
      .. "if package.loaded[n] then l[#l + 1] = n end end return table.concat(l, \" \") end "
      .. "local before = loaded() " .. code .. " "
      .. "print(\"before=\" .. before) print(\"after=\" .. loaded())' 2>&1")
    return out:match("before=([^\n]*)"), out:match("after=([^\n]*)"), out
  end

  it("loads none of the heavy modules; reading a field loads its module, which works", function()
    local before, after, out = fresh([[
      local t = mountns.parse_mountinfo("1 0 0:1 / / rw - tmpfs none rw\n")
      print("dot " .. tostring(mountns.dot(t):find("digraph", 1, true) ~= nil))
      print("same " .. tostring(mountns.dot == require("mountns.dot").dot))]])
    assert.equal("", before, out)
    -- dot and what it needs (format), nothing else of HEAVY
    assert.equal("mountns.dot mountns.format", after, out)
    assert.truthy(out:find("dot true\n", 1, true), out)
    assert.truthy(out:find("same true\n", 1, true), out)
  end)

  it("mountns.explain, .shell, .watch load theirs on first read", function()
    for field, mod in pairs { explain = "mountns.explain", shell = "mountns.shell",
                              watch = "mountns.watch", mounts = "mountns.mounts" } do
      local before, after, out = fresh("print(type(mountns." .. field .. "))")
      assert.equal("", before, out)
      assert.truthy((" " .. after .. " "):find(" " .. mod .. " ", 1, true), out)
      assert.truthy(out:find("function\n", 1, true), out)
    end
  end)

  it("a scenario works from a bare require: every deferred module is loaded before its "
    .. "child leaves the host's file system", function()
    -- ns:mounts, ns:watch, ns:shell and mountns.explain load mountns.mounts,
    -- watch, shell, explain and the model: inside the scenario's child,
    -- whose root is a fresh tmpfs without the module files
    local _, after, out = fresh([[
      print("got " .. tostring(mountns.scenario(function(ns)
        ns:mkdir("/X")
        ns:mount("a", "/X", "tmpfs")
        local m = ns:mounts():find("/X")
        local t = ns:shell("sh1# mkdir /Y")
        local why = mountns.explain(ns, "/X")
        return m.source .. "," .. type(t) .. "," .. type(why)
      end)))]])
    assert.truthy(out:find("got a,string,string\n", 1, true), out)
    assert.truthy(after:find("mountns.model", 1, true), out)
  end)
end)

describe("agent calls", function()
  it("the agent enters a namespace once, not at every call: ns:chdir holds for the "
    .. "next calls, as in the scenario's own namespaces #novalgrind", function()
    local r = mountns.scenario(function(sh1)
      sh1:mkdir("/X/c")
      local c = sh1:unshare { user = true }
      sh1:chdir("/X")
      c:chdir("/X")
      -- a relative path resolves from the working directory chdir set,
      -- which a setns(2) at every call would have reset to /
      return { direct = sh1:exists("c"), agent = c:exists("c"), root = c:exists("X") }
    end)
    assert.is_true(r.direct)
    assert.is_true(r.agent)
    assert.is_false(r.root)
  end)

  -- #novalgrind: /proc/PID/io counts valgrind's own reads too (702, not 200)
  it("a call costs the agent one read(2) and one write(2): the request is read "
    .. "whole into a buffer, the reply is one write on its pipe #novalgrind", function()
    local r = mountns.scenario(function(sh1)
      local c = sh1:unshare { user = true }
      local path = "/proc/" .. c.agent.pid .. "/io"
      -- read from the host's tree (the scenario's / has no /proc)
      local function io_counts()
        local text = sh1:exec { "cat", path }.stdout
        return tonumber(text:match("syscr: (%d+)")), tonumber(text:match("syscw: (%d+)"))
      end
      c:exists("/")
      local r0, w0 = io_counts()
      if not r0 then return nil end
      for _ = 1, 100 do c:exists("/") end
      local r1, w1 = io_counts()
      return { reads = r1 - r0, writes = w1 - w0 }
    end)
    if not r then
      pending("no /proc/PID/io (CONFIG_TASK_IO_ACCOUNTING)")
      return
    end
    assert.are.equal(100, r.reads)
    assert.are.equal(100, r.writes)
  end)
end)

describe("a scenario's child and its caller's heap", function()
  local lua54 = _VERSION == "Lua 5.4" and not rawget(_G, "jit")

  it("runs with the collector stopped, its caller's collector untouched (Lua 5.4)", function()
    if not lua54 then
      pending("Lua 5.4 only: older collectors run no collection when an allocation fails")
      return
    end
    local inside = mountns.scenario(function() return collectgarbage("isrunning") end)
    local in_isolate = mountns.isolate(function() return collectgarbage("isrunning") end)
    assert.is_false(inside)
    assert.is_false(in_isolate)
    assert.is_true(collectgarbage("isrunning"))
  end)

  it("closes the files a child left open: its collections run the finalizers (Lua 5.4)",
     function()
    if not lua54 then
      pending("Lua 5.4 only: elsewhere the child's collector runs as usual")
      return
    end
    -- 400 files opened and dropped, 200 KB allocated after each: 80 MB,
    -- a full collection every 16 MB. Before, the collections were
    -- emergency ones (an allocation made to fail), which call no __gc:
    -- every file stayed open (EMFILE after 250 under ulimit -n 256)
    local before, after, opened = mountns.isolate(function()
      local n0 = assert(core.open_fds())
      local n = 0
      -- string.rep copies its piece once a repetition: 200 KB of a 1 KB
      -- piece, not 200,000 one-byte copies (the same strings, 10x less CPU)
      local y1k = string.rep("y", 1000)
      for i = 1, 400 do
        if not io.open("/dev/null") then break end
        n = n + 1
        local s = string.rep(y1k, 200) .. i -- luacheck: ignore s
      end
      return n0, assert(core.open_fds()), n
    end)
    assert.are.equal(400, opened)
    -- the files of the last period at most (80 of them) are still open
    assert.is_true(after - before <= 100, "still open: " .. (after - before))
  end)

  -- #novalgrind: valgrind's own allocator and its shadow memory make the
  -- resident set say nothing about Lua's
  it("keeps its memory bounded: 80 MB of allocations in a child peak far below "
    .. "#novalgrind", function()
    if (os.getenv("LD_PRELOAD") or ""):find("asan", 1, true) then
      -- make asan: ASan's malloc keeps freed blocks in quarantine
      pending("the resident set says nothing of Lua's memory under ASan's malloc")
      return
    end
    -- the child's resident set, kB (isolate's / is the host's: /proc is there)
    local r = mountns.isolate(function()
      local function kb(field)
        local f = assert(io.open("/proc/self/status"))
        local text = f:read("*a")
        f:close()
        return tonumber(text:match(field .. ":%s*(%d+) kB"))
      end
      local start = kb("VmRSS")
      local keep, x100 = {}, string.rep("x", 100)
      for i = 1, 40 * 1024 do
        -- 2 KB of garbage each (the 1,000 x's and their copy with i)
        local s = string.rep(x100, 10) .. i
        if i % 1024 == 0 then keep[#keep + 1] = s end -- and a little live data
      end
      return { start = start, peak = kb("VmHWM"), kept = #keep }
    end)
    -- the arena (16 MB) and a collection every 16 MB after it: about
    -- 32 MB (the same at 240 MB of garbage); with the collector only
    -- stopped, the whole 80 MB (83 MB measured): the bound lies between
    assert.are.equal(40, r.kept)
    assert.is_true(r.peak - r.start < 56 * 1024,
      string.format("the child grew by %d kB", r.peak - r.start))
  end)
end)

describe("what a scenario's child runs", function()
  -- #novalgrind: LD_DEBUG reports valgrind's loader, not the program's
  it("binds no library function lazily: each first call in a fresh process costs "
    .. "~10 page faults (its stdout is flushed only when it holds output) #novalgrind",
     function()
    local dir = helper.tempdir()
    local out = helper.sh("LD_DEBUG=bindings LD_DEBUG_OUTPUT=" .. dir
      .. "/ld " .. helper.lua_cmd() .. [[ -e '
        local mountns = require "mountns"
        local core = require "mountns.core"
        mountns.scenario(function() end) -- the template, and the first child
        io.write(mountns.scenario(function() return core.getpid() end), " ")
        -- a child that printed: its output still comes before its result
        mountns.scenario(function() io.write("printed ") end)
        print(mountns.scenario(function() return core.getpid() end))' 2>&1]])
    local bindings = {}
    for _, name in ipairs(assert(core.readdir(dir))) do
      if name:match("^ld%.") then
        for line in helper.read(dir .. "/" .. name):gmatch("[^\n]+") do
          local pid, sym = line:match("^%s*(%d+):%s*binding .- symbol `([^']+)'")
          if pid then
            bindings[pid] = bindings[pid] or {}
            table.insert(bindings[pid], sym)
          end
        end
        os.remove(dir .. "/" .. name)
      end
    end
    os.remove(dir)
    local a, b = out:match("^(%d+) printed (%d+)$")
    assert.is_truthy(a, out)
    -- the main process binds hundreds (the sanity check of the reading)
    assert.is_true(next(bindings) ~= nil, "no LD_DEBUG output read")
    assert.are.same({}, bindings[a] or {})
    assert.are.same({}, bindings[b] or {})
  end)
end)

describe("a scenario's first namespace", function()
  it("has its handle opened when asked or left, not when the scenario begins: an "
    .. "empty scenario opens no nsfs file", function()
    local r = mountns.scenario(function(sh1)
      local n0 = assert(core.open_fds())
      local id = sh1:id() -- opens it: the process is still in sh1
      local n1 = assert(core.open_fds())
      local here = assert(core.namespace())
      local same = here:id() == id
      here:close()
      return { n0 = n0, n1 = n1, same = same }
    end)
    assert.are.equal(r.n0 + 1, r.n1)
    assert.is_true(r.same)
  end)

  it("is found again after the process left it without its handle opened", function()
    local r = mountns.scenario(function(sh1)
      local sh2 = sh1:unshare() -- the process leaves sh1, then comes back
      sh2:mkdir("/a"); sh2:mount("a", "/a", "tmpfs") -- leaves sh1 again
      sh1:mkdir("/b"); sh1:mount("b", "/b", "tmpfs")
      return { a1 = sh1:find("/a") ~= nil, b1 = sh1:find("/b") ~= nil,
               a2 = sh2:find("/a") ~= nil, b2 = sh2:find("/b") ~= nil,
               differ = sh1:id() ~= sh2:id() }
    end)
    assert.are.same({ a1 = false, b1 = true, a2 = true, b2 = false, differ = true }, r)
  end)
end)

describe("the caller's heap in huge pages (csrc/heap.c)", function()
  -- a fresh interpreter (the opt-out is read when mountns.core loads)
  -- requires mountns, then holds 64 MB of Lua strings; it reports the huge
  -- pages (kB) of its malloc heap, [heap] in /proc/self/smaps, and exits
  -- through lua_close (which unloads core.so before it frees the last
  -- blocks through the wrapper: a crash there is exit=139)
  local function heap_huge_kb(env)
    local out = helper.sh("cd " .. helper.ROOT .. " && env -u GLIBC_TUNABLES " .. env .. " "
      .. helper.lua_cmd() .. [[ -e '
      require "mountns"
      local t = {}
      for i = 1, 64 * 1024 do t[i] = string.rep(string.format("%07d", i), 128) end
      local kb, heap = 0, false
      for line in io.lines("/proc/self/smaps") do
        local name = line:match("^%x+%-%x+ %S+ %x+ %S+ %d+%s*(.*)$")
        if name then heap = name == "[heap]" end
        local v = line:match("^AnonHugePages:%s*(%d+) kB")
        if v and heap then kb = kb + tonumber(v) end
      end
      assert(t[65536] == string.rep("0065536", 128))
      print("HUGE " .. kb)' 2>&1; echo "exit=$?"]])
    return tonumber(out:match("HUGE (%d+)")), out:match("exit=(%d+)"), out
  end

  local thp_mode = require("procstat").thp_mode

  local function skip()
    if (os.getenv("LD_PRELOAD") or ""):find("asan", 1, true) then
      return "ASan's malloc serves Lua from its own mappings: no heap to back"
    elseif rawget(_G, "jit") then
      return "LuaJIT's allocator maps its memory itself: not wrapped"
    elseif thp_mode() ~= "madvise" then
      -- never: no huge pages at all; always: every heap has them anyway
      return "needs transparent huge pages in madvise mode (here: "
        .. tostring(thp_mode()) .. ")"
    end
  end

  it("backs the Lua heap grown after require \"mountns\" with huge pages", function()
    local why = skip()
    if why then pending(why) return end
    local kb, code, out = heap_huge_kb("")
    assert.are.equal("0", code, out)
    -- 64 MB in 2 MB pages: most of it (memory too fragmented for a huge
    -- page leaves a range in 4 KB pages; 32 MB would be half)
    assert.is_true(kb >= 32 * 1024, out)
  end)

  it("leaves the heap in 4 KB pages with MOUNTNS_HUGE_PAGES=0", function()
    local why = skip()
    if why then pending(why) return end
    local kb, code, out = heap_huge_kb("MOUNTNS_HUGE_PAGES=0")
    assert.are.equal("0", code, out)
    assert.are.equal(0, kb, out)
  end)

  it("refuses a MOUNTNS_HUGE_PAGES other than 0 or 1, naming it", function()
    for _, v in ipairs { "no", "off", "2" } do
      local out = helper.sh("MOUNTNS_HUGE_PAGES=" .. v .. " " .. helper.lua_vars()
        .. [[ -e 'require "mountns"' 2>&1; echo "exit=$?"]])
      assert.truthy(out:find("mountns.core: MOUNTNS_HUGE_PAGES must be 0 or 1, got '"
        .. v .. "'", 1, true), out)
      assert.truthy(out:find("exit=1", 1, true), out)
    end
  end)
end)

describe("a scenario's result", function()
  -- the caller's children, as the kernel lists them (CONFIG_PROC_CHILDREN)
  local function children()
    local pid = core.getpid()
    local f = io.open("/proc/" .. pid .. "/task/" .. pid .. "/children")
    if not f then return nil end
    local set = {}
    for p in f:read("*a"):gmatch("%d+") do set[p] = true end
    f:close()
    return set
  end

  it("is decoded once its child is reaped: the caller writes no page it still shares "
    .. "(a write to a shared huge page splits it)", function()
    if not children() then
      pending("needs /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN)")
      return
    end
    mountns.scenario(function() end) -- the template, made on first use
    local before = children()
    local child_proto = require "mountns.child"
    local left -- the scenario's children still listed when decode began
    -- LuaJIT runs no hook inside a compiled trace: with the whole file's
    -- calls before it, the call into decode could be one (CI saw left nil)
    local jit = rawget(_G, "jit")
    if jit then jit.off(); jit.flush() end
    debug.sethook(function()
      if left == nil and debug.getinfo(2, "f").func == child_proto.decode then
        left = {}
        for p in pairs(children()) do
          if not before[p] then left[#left + 1] = p end
        end
      end
    end, "c")
    local ok, res = pcall(mountns.scenario, function() return { "a", "b" } end)
    debug.sethook()
    if jit then jit.on() end
    assert.is_true(ok, res)
    assert.are.same({ "a", "b" }, res)
    assert.are.same({}, left)
  end)
end)

describe("listmount with records, many mounts", function()
  -- from 256 mounts on, the statmount calls run in a helper thread while
  -- the records are built: the same records as statmount one by one
  it("gives the records statmount gives for each mount, in order", function()
    local f = core.features()
    if not (f.statmount and f.listmount) then
      pending("needs listmount(2) and statmount(2) (Linux 6.8+)")
      return
    end
    local r = mountns.isolate(function()
      local base = helper.sandbox()
      helper.propagation_kinds(base)
      for i = 1, 600 do
        local p = base .. "/" .. i .. (i % 7 == 0 and " x\n\\" or "")
        assert(mountns.mkdir(p))
        if i % 2 == 0 then
          assert(mountns.mount("m" .. i, p, "tmpfs", nil, "size=" .. (4 * i) .. "k"))
        else
          assert(mountns.bind(base .. "/sh", p))
        end
      end
      local out = {}
      for _, from in ipairs { false, true } do
        local list = assert(core.listmount { stat = true, propagate_from = from or nil })
        local ids = assert(core.listmount())
        local bad, n = {}, 0
        for i, m in ipairs(list) do
          local one = assert(core.statmount(ids[i], { propagate_from = from or nil }))
          for _, k in ipairs { "id", "parent_id", "major", "minor", "root", "target",
                               "options", "fstype", "source", "super_options", "shared",
                               "master", "propagate_from", "unbindable", "propagation",
                               "unique_id", "parent_unique_id" } do
            if m[k] ~= one[k] then bad[#bad + 1] = i .. " " .. k end
          end
          n = n + 1
        end
        out[#out + 1] = { n = n, ids = #ids, bad = table.concat(bad, ", ", 1, math.min(#bad, 5)),
                          mountinfo = #assert(mountns.mountinfo()) }
      end
      return out
    end)
    for _, o in ipairs(r) do
      assert.is_true(o.n > 600)
      assert.are.equal(o.ids, o.n)
      assert.are.equal(o.mountinfo, o.n)
      assert.are.equal("", o.bad)
    end
  end)
end)
