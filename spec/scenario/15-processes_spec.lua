-- Processes: namespace teardown with helpers and agents around, agents
-- that die, what crosses between a process and its children (results of
-- isolate, scenario and agent calls), ns:exec.
local mountns = require "mountns"
local core = require "mountns.core"
local child = require "mountns.child"
local helper = require "helper"

local scenario = mountns.scenario
local unpack = table.unpack or unpack -- luacheck: ignore

-- /S shared in ns, b a copy (peers), then ns's /S a slave of b's: when b is
-- torn down, the last member of the master group is gone and the kernel
-- makes ns's /S private. extra(ns) forks helpers before the close.
local function teardown_master(extra)
  return scenario(function(ns)
    ns:mkdir("/S"); ns:mount("s", "/S", "tmpfs"); ns:make_shared("/S")
    local b = ns:unshare { propagation = "unchanged" }
    ns:make_slave("/S")
    extra(ns, b)
    local before = ns:find("/S").master
    b:close()
    return before, ns:find("/S").master, ns:find("/S").propagation
  end)
end

describe("processes", function()
  local host_before
  setup(function() host_before = helper.host_mountinfo() end)
  teardown(function() assert.are.equal(host_before, helper.host_mountinfo()) end)

  describe("ns:close()", function()
    it("tears the namespace down with no helper around (the control)", function()
      local before, after, prop = teardown_master(function() end)
      assert.is_number(before)
      assert.is_nil(after)
      assert.are.equal("private", prop)
    end)

    it("tears it down although an agent was started after it", function()
      local before, after, prop = teardown_master(function(ns)
        ns:unshare { user = true }
      end)
      assert.is_number(before)
      assert.is_nil(after)
      assert.are.equal("private", prop)
    end)

    it("tears it down although ns:pid() helpers were started after it", function()
      local before, after, prop = teardown_master(function(ns)
        ns:pid()
        ns:unshare():pid()
      end)
      assert.is_number(before)
      assert.is_nil(after)
      assert.are.equal("private", prop)
    end)

    it("tears down a namespace that has its own ns:pid() helper", function()
      local before, after = teardown_master(function(_, b) b:pid() end)
      assert.is_number(before)
      assert.is_nil(after)
    end)
  end)

  describe("agents", function()
    it("a dead agent makes the call raise naming the agent, how it ended and the call", function()
      local ok, err, later = scenario(function(ns)
        local u = ns:unshare { user = true }
        local pid = u.agent.pid
        core.kill(pid, "KILL")
        local ok, err = pcall(u.mkdir, u, "/A")
        -- the scenario goes on: its own code runs after the failure
        local ok2, err2 = pcall(u.mkdir, u, "/B")
        return ok, err .. "|" .. pid, { ok2, err2 }
      end)
      assert.is_false(ok)
      local msg, pid = err:match("^(.*)|(%d+)$")
      assert.truthy(msg:find("ns:mkdir", 1, true), msg)
      assert.truthy(msg:find("PID " .. pid, 1, true), msg)
      assert.truthy(msg:find("killed by SIGKILL", 1, true), msg)
      assert.is_false(later[1])
      assert.truthy(later[2]:find("killed by SIGKILL", 1, true), later[2])
    end)

    it("survives a 300-deep argument and answers the next call", function()
      local err, made = scenario(function(ns)
        local u = ns:unshare { user = true }
        local deep = {}
        local t = deep
        for _ = 1, 300 do t[1] = {}; t = t[1] end
        local _, e = pcall(u.mount, u, "x", "/", "tmpfs", nil, deep)
        u:mkdir("/B")
        return e, u:run(function() return select(3, core.mkdir("/B")) end) == core.errno.EEXIST
      end)
      assert.truthy(err:find("bad argument", 1, true), err)
      assert.is_true(made)
    end)

    it("an argument above the size limit raises, and the agent goes on", function()
      local err, after = scenario(function(ns)
        child.MAX_BYTES = 4096 -- in the scenario's process (a fork) only
        local u = ns:unshare { user = true }
        local _, e = pcall(u.mkdir, u, "/" .. ("x"):rep(5000))
        u:mkdir("/B")
        return e, u:run(function() return select(3, core.mkdir("/B")) end)
      end)
      assert.truthy(err:find("ns:mkdir: argument: too large to cross a process", 1, true), err)
      assert.are.equal(core.errno.EEXIST, after)
    end)

    it("an argument that cannot cross raises naming the argument", function()
      local err = scenario(function(ns)
        local u = ns:unshare { user = true }
        -- (not mkdir's mode: args.mkdir checks its type before the call)
        local _, e = pcall(u.make_shared, u, "/", { recursive = print })
        return e
      end)
      assert.truthy(err:find("ns:make_shared: argument #2[\"recursive\"] is a function", 1, true),
        err)
    end)
  end)

  describe("an agent's frames in C (core.send_values, core.receive_frame)", function()
    -- the frame child.send writes for values encoded by child.encode
    local function lua_frame(vals)
      local body = child.encode("result", vals)
      return "o" .. string.format("%08x", #body) .. body
    end
    local SCALARS = {
      { n = 0 },
      { n = 1 },
      { true, false, nil, 0, 1, 127, 128, 16383, 16384, -1, -300, n = 11 },
      { 9007199254740991, -9007199254740991, n = 2 }, -- 2^53 - 1
      -- each length of a varint at both ends (1 to 5 bytes), both signs
      { 127, 128, 16383, 16384, 2097151, 2097152, 268435455, 268435456, 34359738367,
        -127, -128, -16383, -16384, -2097151, -2097152, -268435456, n = 16 },
      { ("a"):rep(127), ("b"):rep(128), ("c"):rep(16383), ("d"):rep(16384), n = 4 },
      { "", "a\0b", ("x"):rep(300), "call", 2, "exists", "/", n = 7 },
      -- flat tables (an options table: mkdir's), as child.encode writes them
      { "call", 2, "mkdir", "/X/c", { parents = true, mode = "0755" }, n = 5 },
      { {}, { 1, 2, "x", [true] = false, [-5] = "m" }, n = 2 },
    }

    it("child.encode writes each integer and length as its varint, 7 bits a byte, "
      .. "low first (the bytes of 1 to 8 byte varints)", function()
      local VARINTS = {
        [0] = "\0", [1] = "\1", [127] = "\127", [128] = "\128\1", [300] = "\172\2",
        [16383] = "\255\127", [16384] = "\128\128\1", [16385] = "\129\128\1",
        [2097151] = "\255\255\127", [2097152] = "\128\128\128\1",
        [268435455] = "\255\255\255\127", [268435456] = "\128\128\128\128\1",
        [9007199254740991] = ("\255"):rep(7) .. "\15", -- 2^53 - 1
      }
      for z, bytes in pairs(VARINTS) do
        assert.are.equal("1;p" .. bytes, child.encode("result", { z, n = 1 }))
        if z > 0 then
          assert.are.equal("1;m" .. bytes, child.encode("result", { -z, n = 1 }))
        end
        assert.are.same({ z, -z, n = 2 }, child.decode(child.encode("result", { z, -z, n = 2 })))
      end
      for _, len in ipairs { 127, 128, 16383, 16384, 2097151, 2097152 } do
        local s = ("x"):rep(len)
        local msg = child.encode("result", { s, n = 1 })
        assert.are.equal("1;s" .. VARINTS[len] .. s, msg)
        assert.are.same({ s, n = 1 }, child.decode(msg))
      end
    end)

    it("send_values writes the bytes child.encode and child.send write for scalars", function()
      for _, vals in ipairs(SCALARS) do
        local r, w = assert(core.pipe())
        assert.is_true(core.send_values(w, child.MAX_BYTES, unpack(vals, 1, vals.n)))
        local want = lua_frame(vals)
        local got = core.read_exact(r, #want)
        core.close_fd(r); core.close_fd(w)
        assert.are.equal(want, got)
      end
    end)

    it("send_values sends nothing and returns false for what only child.encode writes", function()
      local r, w = assert(core.pipe())
      local shared = { 1 } -- a table given twice crosses once (R)
      for _, vals in ipairs {
        { 0.5, n = 1 }, { 1, { {} }, n = 2 }, { print, n = 1 }, { 2^53, n = 1 },
        { -tonumber("0.0"), n = 1 }, { ("x"):rep(100), n = 1, max = 100 },
        { { a = 0.5 }, n = 1 }, { { [{}] = 1 }, n = 1 }, { { f = print }, n = 1 },
        { setmetatable({}, {}), n = 1 }, { shared, shared, n = 2 },
        { { ("x"):rep(100) }, n = 1, max = 100 },
        -- max holds for the shortest message too: the body "0;" is 2 bytes
        { n = 0, max = 1 }, { n = 0, max = 0 }, { n = 0, max = -1 },
      } do
        assert.is_false(core.send_values(w, vals.max or child.MAX_BYTES, unpack(vals, 1, vals.n)))
      end
      assert.is_true(core.write_fd(w, "end"))
      assert.are.equal("end", core.read_exact(r, 3))
      assert.is_true(core.send_values(w, 2)) -- the limit itself is within
      assert.are.equal("o000000020;", core.read_exact(r, 11))
      core.close_fd(r); core.close_fd(w)
    end)

    it("receive_frame decodes a frame of scalars, returns any other body whole", function()
      -- the frame written by a child (a pipe holds 64 KiB), read here
      local function through(frame, max)
        local r, w = assert(core.pipe())
        local pid = assert(child.fork(function()
          core.close_fd(r)
          return core.write_fd(w, frame) and 0 or 1
        end))
        core.close_fd(w)
        local kind, body = core.receive_frame(r, max or child.MAX_BYTES)
        core.close_fd(r)
        assert.are.same({ "exited", 0 }, { core.waitpid(pid) })
        return kind, body
      end
      for _, vals in ipairs(SCALARS) do
        local kind, got = through(lua_frame(vals))
        assert.are.equal("o", kind)
        assert.are.same(vals, got)
      end
      local with_table = { 1, { a = 2 }, 0.5, n = 3 }
      local kind, body = through(lua_frame(with_table))
      assert.are.equal("o", kind)
      assert.are.same(with_table, child.decode(body))
      assert.are.same({ "e", "boom" }, { through("e00000004boom") })
      assert.are.same({ nil, "too large" }, { through(lua_frame({ "abc", n = 1 }), 4) })
      assert.are.same({ nil, "corrupt frame" }, { through("o0000zz01x") })
      assert.are.same({ nil, "eof" }, { through("o000000") })
      local big = { ("y"):rep(100000), n = 1 }
      kind, body = through(lua_frame(big))
      assert.are.equal("o", kind)
      assert.are.same(big, body)
    end)

    it("receive_frame(fd, max, true) returns true and the values of a frame of "
      .. "scalars, with no table; any other frame as without", function()
      local function through(frame)
        local r, w = assert(core.pipe())
        assert(core.write_fd(w, frame))
        local got = { n = 0 }
        local function keep(...) got = { n = select("#", ...), ... } end
        keep(core.receive_frame(r, child.MAX_BYTES, true))
        core.close_fd(r); core.close_fd(w)
        return got
      end
      for _, vals in ipairs(SCALARS) do
        local got = through(lua_frame(vals))
        assert.are.equal(true, got[1])
        assert.are.equal(vals.n + 1, got.n) -- nils kept, trailing ones too
        for i = 1, vals.n do assert.are.same(vals[i], got[i + 1]) end
      end
      -- more than 64 values, a table inside, an error frame: as without
      local many = { n = 65 }
      for i = 1, 65 do many[i] = i end
      local got = through(lua_frame(many))
      assert.are.equal("o", got[1])
      assert.are.same(many, got[2])
      local with_table = { 1, { a = { 2 } }, n = 2 }
      got = through(lua_frame(with_table))
      assert.are.equal("o", got[1])
      assert.are.same(with_table, child.decode(got[2]))
      assert.are.same({ "e", "boom", n = 2 }, through("e00000004boom"))
    end)
  end)

  describe("writes to a reader that is gone (SIGPIPE)", function()
    -- whether SIGPIPE (13) is in a mask of /proc/PID/status ("SigIgn")
    local function has_sigpipe(status, field)
      local hex = assert(status:match(field .. ":%s*(%x+)"), field)
      -- the low 8 hex digits hold signals 1-32; SIGPIPE is bit 12
      return math.floor(tonumber(hex:sub(-8), 16) / 4096) % 2 == 1
    end
    local function status_of(pid)
      local f = assert(io.open("/proc/" .. pid .. "/status"))
      local text = f:read("*a")
      f:close()
      return text
    end

    it("write_fd returns EPIPE on a pipe, again on the same fd number, and on a "
      .. "socket there next, leaving no SIGPIPE pending", function()
      local pid = assert(child.fork(function()
        local ok = true
        for _ = 1, 2 do -- the second time send(2) is known to fail on this fd
          local r, w = assert(core.pipe())
          core.close_fd(r)
          local done, err, errno = core.write_fd(w, "x")
          ok = ok and done == nil and errno == core.errno.EPIPE and err:find("EPIPE") ~= nil
          core.close_fd(w)
        end
        -- the lowest free numbers again: the pipe's fds become a socket's
        local a, b = assert(core.socketpair())
        core.close_fd(b)
        local done, _, errno = core.write_fd(a, "x")
        ok = ok and done == nil and errno == core.errno.EPIPE
        local status = status_of("self")
        ok = ok and not has_sigpipe(status, "SigPnd") and not has_sigpipe(status, "SigIgn")
          and not has_sigpipe(status, "SigBlk")
        return ok and 0 or 3
      end))
      assert.are.same({ "exited", 0 }, { core.waitpid(pid) })
    end)

    it("ignore_sigpipe: SIGPIPE ignored, a write to a gone reader returns EPIPE", function()
      local pid = assert(child.fork(function()
        assert(core.ignore_sigpipe())
        local r, w = assert(core.pipe())
        core.close_fd(r)
        local done, _, errno = core.write_fd(w, "x")
        local ok = done == nil and errno == core.errno.EPIPE
          and has_sigpipe(status_of("self"), "SigIgn")
        return ok and 0 or 3
      end))
      assert.are.same({ "exited", 0 }, { core.waitpid(pid) })
    end)

    -- an agent writes its replies with one write(2): it ignores SIGPIPE;
    -- the scenario's process, which runs the user's code, does not
    it("an agent ignores SIGPIPE, the scenario's process does not #novalgrind", function()
      local r = mountns.scenario(function(sh1)
        local c = sh1:unshare { user = true }
        c:exists("/")
        local function ignored(pid)
          return has_sigpipe(sh1:exec { "cat", "/proc/" .. pid .. "/status" }.stdout, "SigIgn")
        end
        return { agent = ignored(c.agent.pid), scenario = ignored(core.getpid()) }
      end)
      assert.is_true(r.agent)
      assert.is_false(r.scenario)
    end)
  end)

  describe("results", function()
    it("round-trip a table nested 10,000 deep", function()
      local t = mountns.isolate(function()
        local deep = {}
        local x = deep
        for i = 1, 10000 do x.next = { i = i }; x = x.next end
        return deep
      end)
      local n = 0
      while t.next do t = t.next; n = n + 1 end
      assert.are.equal(10000, n)
      assert.are.equal(10000, t.i)
    end)

    -- the unpack of Lua 5.1 and LuaJIT stops near 8,000 values (their C
    -- stack limit): no function returns 10,000 values there
    local many_it = _VERSION == "Lua 5.1" and pending or it
    many_it("round-trip 10,000 return values", function()
      local function pack(...) return { n = select("#", ...), ... } end
      local res = pack(mountns.isolate(function()
        local t = {}
        for i = 1, 10000 do t[i] = i end
        t[5000] = nil
        return unpack(t, 1, 10000)
      end))
      assert.are.equal(10000, res.n)
      assert.are.equal(10000, res[10000])
      assert.is_nil(res[5000])
    end)

    it("keep shared subtables and cycles", function()
      local t = mountns.isolate(function()
        local shared = { "s" }
        local c = { shared, shared }
        c.self = c
        c[shared] = "a table as a key"
        return c
      end)
      assert.are.equal(t[1], t[2])
      assert.are.equal(t, t.self)
      assert.are.equal("a table as a key", t[t[1]])
    end)

    it("keep numbers exact", function()
      local a, b, c, d, e = mountns.isolate(function()
        local zero = 0.0 -- negated at run time: 5.1 folds the constant -0.0 into 0
        return 0.1, -zero, 1 / zero, 2 ^ 53, zero / zero
      end)
      assert.are.equal(0.1, a)
      assert.are.equal(-math.huge, 1 / b)
      assert.are.equal(math.huge, c)
      assert.are.equal(2 ^ 53, d)
      assert.is_true(e ~= e)
    end)

    it("come back as mount tables from a scenario", function()
      local t = scenario(function(ns)
        ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs")
        return ns:mounts()
      end)
      assert.are.equal("tmpfs", t:find("/X").fstype)
      assert.truthy(tostring(t):find("/X", 1, true))
    end)

    -- ASan's allocator keeps freed memory in quarantine: no peak to measure
    local mem_it = (os.getenv("LD_PRELOAD") or ""):find("asan") and pending or it
    -- a fresh Lua, so its peak RSS (VmHWM) is this call's: 100,000
    -- strings of about 100 bytes (about 14 MB as Lua values); with
    -- 30,000 the fixed costs put Lua 5.1 at 3.04x (14.2 MB for 4.6).
    -- Lua 5.3 and 5.4 take 30,000 (4.3 MB; 0.3 s of CPU less a run, the
    -- child's encoding is most of it): the fixed costs put them at 2.1x
    -- (2 MB pages: 2.1-2.5x) against 1.9x at 100,000; an extra copy of
    -- the message fails at both sizes (3.3-3.5x; 2 MB pages 3.4x at
    -- 100,000, 3.8x at 30,000), a decoder that loads Lua source too
    -- (3.0x, 3.1x in 4 KB pages).
    -- In 4 KB pages (MOUNTNS_HUGE_PAGES=0) the decode's own cost is below
    -- 3x (2.5x on 5.1); the default heap in 2 MB pages adds what whole
    -- pages hold: 3.0x on 5.1, 2.9x on 5.2 (doc/scenarios.md, "What a scenario costs").
    local function peak_ratio(huge_pages)
      local out = helper.sh("MOUNTNS_HUGE_PAGES=" .. huge_pages .. " " .. helper.lua_vars()
        .. [[ -e '
        local mountns = require "mountns"
        local hwm = require("procstat").hwm
        local n = (_VERSION == "Lua 5.4" or _VERSION == "Lua 5.3")
          and not rawget(_G, "jit") and 30000 or 100000
        collectgarbage(); collectgarbage()
        local k0, h0 = collectgarbage("count"), hwm()
        local t = mountns.isolate(function()
          local r, x10 = {}, ("x"):rep(10)
          for i = 1, n do r[i] = x10:rep(10) .. i end
          return r
        end)
        local h1 = hwm()
        collectgarbage(); collectgarbage()
        io.write(h1 - h0, " ", collectgarbage("count") - k0, " ", #t, " ", n)' 2>&1]])
      local peak, kept, n, want = out:match("^(%d+) ([%d.]+) (%d+) (%d+)$")
      assert.are.equal(want, n, out)
      assert.truthy(want == "30000" or want == "100000", out)
      return tonumber(peak) / tonumber(kept), "peak " .. peak .. " KiB for a result of "
        .. kept .. " KiB, MOUNTNS_HUGE_PAGES=" .. huge_pages
    end
    mem_it("cost the parent a small multiple of the result's size in memory", function()
      local r, why = peak_ratio(0)
      assert.is_true(r < 3, why)
      r, why = peak_ratio(1)
      assert.is_true(r < 3.5, why)
    end)

    it("a function raises naming the result, not the child", function()
      local ok, err = pcall(mountns.isolate, function() return 1, { f = print } end)
      assert.is_false(ok)
      assert.truthy(err:find("result #2[\"f\"] is a function", 1, true), err)
    end)

    it("a result above the size limit raises naming the limit", function()
      local max = child.MAX_BYTES
      child.MAX_BYTES = 4096 -- the child is a fork: it sees this too
      local ok, err = pcall(mountns.isolate, function() return ("x"):rep(5000) end)
      child.MAX_BYTES = max
      assert.is_false(ok)
      assert.truthy(err:find("too large", 1, true), err)
      assert.truthy(err:find("MAX_BYTES", 1, true), err)
    end)
  end)

  describe("ns:exec", function()
    it("runs a host tool whose /proc/self/mountinfo is the namespace's", function()
      local r, t = scenario(function(ns)
        ns:mkdir("/S"); ns:mount("s", "/S", "tmpfs"); ns:make_shared("/S")
        return ns:exec { "cat", "/proc/self/mountinfo" }, ns:mounts()
      end)
      assert.are.equal(0, r.code)
      local seen = assert(mountns.parse_mountinfo(r.stdout))
      assert.are.equal(#t, #seen)
      for i, m in ipairs(t) do
        assert.are.equal(m.id, seen[i].id)
        assert.are.equal(m.target, seen[i].target)
        assert.are.equal(m.shared, seen[i].shared)
      end
      assert.are.equal("/S", seen[2].target)
    end)

    it("runs findmnt on the namespace, also one of a user namespace the scenario made", function()
      local mine, theirs = scenario(function(ns)
        ns:mkdir("/S"); ns:mount("s", "/S", "tmpfs"); ns:make_shared("/S")
        local u = ns:unshare { user = true }
        u:mkdir("/U"); u:mount("u", "/U", "tmpfs")
        return ns:exec { "findmnt", "-rn", "-o", "TARGET,PROPAGATION" },
               u:exec { "findmnt", "-rn", "-o", "TARGET,SOURCE" }
      end)
      assert.are.equal("/ private\n/S shared\n", mine.stdout)
      assert.truthy(theirs.stdout:find("/U u\n", 1, true), theirs.stdout)
    end)

    it("returns the exit status, stdout and stderr, or the signal", function()
      local r, k = scenario(function(ns)
        return ns:exec { "sh", "-c", "echo out; echo err >&2; exit 3" },
               ns:exec { "sh", "-c", "kill -KILL $$" }
      end)
      assert.are.same({ code = 3, stdout = "out\n", stderr = "err\n" }, r)
      assert.are.equal("SIGKILL", k.signal)
      assert.is_nil(k.code)
    end)

    it("raises for a tool that cannot be run", function()
      local ok, err = pcall(scenario, function(ns)
        return ns:exec { "/nonexistent/no-such-tool-mountns" }
      end)
      assert.is_false(ok)
      assert.truthy(err:find("ns:exec: execvp /nonexistent/no-such-tool-mountns: ", 1, true), err)
      assert.truthy(err:find("(ENOENT)", 1, true), err)
    end)

    it("kills a tool that runs past its timeout, and checks its arguments first", function()
      local slow, bad, opt = scenario(function(ns)
        local _, a = pcall(ns.exec, ns, { "sleep", "30" }, { timeout = 0.2 })
        local _, b = pcall(ns.exec, ns, "findmnt")
        local _, c = pcall(ns.exec, ns, { "findmnt" }, { timout = 1 })
        return a, b, c
      end)
      assert.truthy(slow:find("ns:exec: sleep ran past its timeout of 0.2 s", 1, true), slow)
      assert.truthy(bad:find("bad argument #1 to 'ns:exec'", 1, true), bad)
      assert.truthy(opt:find("bad argument #2 to 'ns:exec'", 1, true), opt)
      assert.truthy(opt:find("timout", 1, true), opt)
    end)

    it("os.execute and io.popen raise inside a scenario, naming ns:exec", function()
      local e1, e2 = scenario(function()
        local _, a = pcall(os.execute, "kill -SEGV $PPID")
        local _, b = pcall(io.popen, "ls")
        return a, b
      end)
      assert.truthy(e1:find("os.execute is not available inside a scenario", 1, true), e1)
      assert.truthy(e1:find("ns:exec", 1, true), e1)
      assert.truthy(e2:find("io.popen is not available inside a scenario", 1, true), e2)
    end)
  end)
end)
