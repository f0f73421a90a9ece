-- The C core against the real kernel: every call runs inside isolate()
-- and its outcome is read back from the kernel's mountinfo.
local mountns = require "mountns"
local core = require "mountns.core"
local helper = require "helper"

local isolate = mountns.isolate

describe("mountns core", function()
  local host_before
  setup(function() host_before = helper.host_mountinfo() end)
  teardown(function()
    assert.are.equal(host_before, helper.host_mountinfo())
  end)

  describe("mount and umount", function()
    it("mounts a tmpfs with flags and data, seen in mountinfo", function()
      local r = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mkdir(base .. "/a"))
        assert(mountns.mount("mytmp", base .. "/a", "tmpfs", "ro,nosuid,nodev", "size=1m"))
        return mountns.mountinfo():find(base .. "/a")
      end)
      assert.are.equal("tmpfs", r.fstype)
      assert.are.equal("mytmp", r.source)
      assert.truthy(r.options:match("^ro,"))
      assert.truthy(r.options:match("nosuid"))
      assert.truthy(r.options:match("nodev"))
      assert.truthy(r.super_options:match("size=1024k"))
    end)

    it("accepts flags as an array of names", function()
      local opts = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mount("t", base, "tmpfs", { "noexec", "noatime" }))
        return mountns.mountinfo():find(base).options
      end)
      assert.truthy(opts:match("noexec"))
      assert.truthy(opts:match("noatime"))
    end)

    it("umount removes the mount; detach and nofollow are accepted", function()
      local before, after, lazy = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mount("t", base, "tmpfs"))
        local b = mountns.mountinfo():find(base) ~= nil
        assert(mountns.umount(base))
        local a = mountns.mountinfo():find(base)
        assert(mountns.mount("t", base, "tmpfs"))
        assert(mountns.umount(base, "detach,nofollow"))
        return b, a, mountns.mountinfo():find(base)
      end)
      assert.is_true(before)
      assert.is_nil(after)
      assert.is_nil(lazy)
    end)

    it("umount of a non-mount fails with EINVAL, naming the path", function()
      local ok, msg, errno = isolate(function()
        local base = helper.sandbox()
        return mountns.umount(base)
      end)
      assert.is_nil(ok)
      assert.are.equal("umount /tmp/mns: Invalid argument (EINVAL)", msg)
      assert.are.equal(mountns.errno.EINVAL, errno)
    end)
  end)

  describe("bind, rbind, move", function()
    it("a bind of a shared mount joins its peer group", function()
      local x, z = isolate(function()
        local base = helper.sandbox()
        mountns.mkdir(base .. "/X"); mountns.mkdir(base .. "/Z")
        assert(mountns.mount("x", base .. "/X", "tmpfs"))
        assert(mountns.make_shared(base .. "/X"))
        assert(mountns.bind(base .. "/X", base .. "/Z"))
        local t = mountns.mountinfo()
        return t:find(base .. "/X"), t:find(base .. "/Z")
      end)
      assert.is_number(x.shared)
      assert.are.equal(x.shared, z.shared)
      assert.are_not.equal(x.id, z.id)
      assert.are.equal(x.major, z.major)
      assert.are.equal(x.minor, z.minor)
    end)

    it("bind leaves submounts behind, rbind takes them", function()
      local plain, rec = isolate(function()
        local base = helper.sandbox()
        for _, d in ipairs { "/A", "/B", "/C" } do mountns.mkdir(base .. d) end
        assert(mountns.mount("a", base .. "/A", "tmpfs"))
        mountns.mkdir(base .. "/A/sub")
        assert(mountns.mount("sub", base .. "/A/sub", "tmpfs"))
        assert(mountns.bind(base .. "/A", base .. "/B"))
        assert(mountns.bind(base .. "/A", base .. "/C", { recursive = true }))
        local t = mountns.mountinfo()
        return t:find(base .. "/B/sub") ~= nil, t:find(base .. "/C/sub") ~= nil
      end)
      assert.is_false(plain)
      assert.is_true(rec)
    end)

    it("move moves a mount to a new mount point", function()
      local old, new = isolate(function()
        local base = helper.sandbox()
        mountns.mkdir(base .. "/from"); mountns.mkdir(base .. "/to")
        assert(mountns.mount("m", base .. "/from", "tmpfs"))
        local id = mountns.mountinfo():find(base .. "/from").id
        assert(mountns.move(base .. "/from", base .. "/to"))
        local t = mountns.mountinfo()
        return t:find(base .. "/from"), t:find(base .. "/to").id == id
      end)
      assert.is_nil(old)
      assert.is_true(new)
    end)

    it("bind of a missing source names both paths and ENOENT", function()
      local ok, msg, errno = isolate(function()
        local base = helper.sandbox()
        return mountns.bind(base .. "/nope", base)
      end)
      assert.is_nil(ok)
      assert.are.equal("bind /tmp/mns/nope /tmp/mns: No such file or directory (ENOENT)", msg)
      assert.are.equal(mountns.errno.ENOENT, errno)
    end)
  end)

  describe("remount", function()
    it("remount,bind makes one mount point read-only", function()
      local a, b = isolate(function()
        local base = helper.sandbox()
        mountns.mkdir(base .. "/a"); mountns.mkdir(base .. "/b")
        assert(mountns.mount("t", base .. "/a", "tmpfs"))
        assert(mountns.bind(base .. "/a", base .. "/b"))
        assert(mountns.remount(base .. "/b", "ro", nil, { bind = true }))
        local t = mountns.mountinfo()
        return t:find(base .. "/a").options, t:find(base .. "/b").options
      end)
      assert.truthy(a:match("^rw"))
      assert.truthy(b:match("^ro"))
    end)

    it("a superblock remount changes the fs options", function()
      local so = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mount("t", base, "tmpfs", nil, "size=1m"))
        assert(mountns.remount(base, nil, "size=2m"))
        return mountns.mountinfo():find(base).super_options
      end)
      assert.truthy(so:match("size=2048k"))
    end)
  end)

  describe("propagation", function()
    local function kinds(recursive)
      return isolate(function()
        local base = helper.sandbox()
        local out = {}
        for _, k in ipairs { "shared", "private", "slave", "unbindable" } do
          local p = base .. "/" .. k
          mountns.mkdir(p)
          assert(mountns.mount(k, p, "tmpfs"))
          mountns.mkdir(p .. "/sub")
          assert(mountns.mount(k .. "sub", p .. "/sub", "tmpfs"))
          if k == "slave" then -- a slave needs a master: a shared peer
            assert(mountns.make_shared(p, { recursive = true }))
            mountns.mkdir(base .. "/peer")
            assert(mountns.bind(p, base .. "/peer", { recursive = true }))
          end
          assert(mountns["make_" .. k](p, { recursive = recursive }))
          local t = mountns.mountinfo()
          out[k] = { t:find(p), t:find(p .. "/sub") }
        end
        return out
      end)
    end

    it("make_* set the propagation of one mount", function()
      local out = kinds(false)
      assert.are.equal("shared", out.shared[1].propagation)
      assert.is_number(out.shared[1].shared)
      assert.are.equal("private", out.shared[2].propagation)
      assert.are.equal("private", out.private[1].propagation)
      assert.are.equal("slave", out.slave[1].propagation)
      assert.is_number(out.slave[1].master)
      assert.is_nil(out.slave[1].shared)
      assert.are.equal("shared", out.slave[2].propagation)
      assert.are.equal("unbindable", out.unbindable[1].propagation)
      assert.is_true(out.unbindable[1].unbindable)
      assert.is_false(out.unbindable[2].unbindable)
    end)

    it("recursive = true changes the whole subtree (--make-r*)", function()
      local out = kinds(true)
      assert.are.equal("shared", out.shared[2].propagation)
      assert.are.equal("slave", out.slave[2].propagation)
      assert.are.equal("unbindable", out.unbindable[2].propagation)
    end)

    it("a slave-and-shared mount reports shared,slave", function()
      local r = isolate(function()
        local base = helper.sandbox()
        mountns.mkdir(base .. "/m"); mountns.mkdir(base .. "/s")
        assert(mountns.mount("m", base .. "/m", "tmpfs"))
        assert(mountns.make_shared(base .. "/m"))
        assert(mountns.bind(base .. "/m", base .. "/s"))
        assert(mountns.make_slave(base .. "/s"))
        assert(mountns.make_shared(base .. "/s"))
        return mountns.mountinfo():find(base .. "/s")
      end)
      assert.are.equal("shared,slave", r.propagation)
      assert.is_number(r.shared)
      assert.is_number(r.master)
      assert.are_not.equal(r.shared, r.master)
    end)

    it("binding an unbindable mount fails with EINVAL", function()
      local ok, msg = isolate(function()
        local base = helper.sandbox()
        mountns.mkdir(base .. "/u"); mountns.mkdir(base .. "/v")
        assert(mountns.mount("u", base .. "/u", "tmpfs"))
        assert(mountns.make_unbindable(base .. "/u"))
        return mountns.bind(base .. "/u", base .. "/v")
      end)
      assert.is_nil(ok)
      assert.truthy(msg:match("%(EINVAL%)$"))
    end)

    it("errors name the mount(8) verb", function()
      local _, msg = isolate(function()
        return mountns.make_shared("/no/such/dir", { recursive = true })
      end)
      assert.are.equal("make-rshared /no/such/dir: No such file or directory (ENOENT)", msg)
    end)
  end)

  describe("unshare", function()
    it("default propagation makes every mount private", function()
      local before, after, ns1, ns2 = isolate(function()
        local base = helper.sandbox()
        assert(mountns.make_shared(base .. "/..", { recursive = true }))
        local b = mountns.mountinfo():find("/tmp").propagation
        local id1 = mountns.namespace():id()
        assert(mountns.unshare())
        return b, mountns.mountinfo():find("/tmp").propagation, id1,
          mountns.namespace():id()
      end)
      assert.are.equal("shared", before)
      assert.are.equal("private", after)
      assert.are_not.equal(ns1, ns2)
    end)

    it("propagation 'unchanged' keeps shared:N, the same peer group", function()
      local g1, g2 = isolate(function()
        helper.sandbox()
        assert(mountns.make_shared("/tmp"))
        local g = mountns.mountinfo():find("/tmp").shared
        assert(mountns.unshare { propagation = "unchanged" })
        return g, mountns.mountinfo():find("/tmp").shared
      end)
      assert.is_number(g1)
      assert.are.equal(g1, g2)
    end)

    it("propagation 'slave' makes the copies slaves of the old groups", function()
      local g, r = isolate(function()
        helper.sandbox()
        assert(mountns.make_shared("/tmp"))
        local grp = mountns.mountinfo():find("/tmp").shared
        -- the old namespace must live on: alone in its group, the copy
        -- could not be a slave of anything and the kernel makes it private
        local home = mountns.namespace()
        assert(mountns.unshare { propagation = "slave" })
        local r = mountns.mountinfo():find("/tmp")
        home:close()
        return grp, r
      end)
      assert.are.equal("slave", r.propagation)
      assert.are.equal(g, r.master)
    end)

    it("user = true with map_root maps the caller to root", function()
      local uid = isolate(function()
        assert(mountns.unshare { user = true, map_root = true, uts = true })
        return helper.sh("id -u")
      end)
      assert.are.equal("0", uid)
    end)

    it("rejects bad options before any system call", function()
      -- in an isolated child: a regression that reached the system call
      -- must not act on the namespace the suite runs in
      isolate(function()
        assert.has_error(function() mountns.unshare { propagation = "bogus" } end,
          "bad argument #1 to 'unshare' (option 'propagation': invalid value 'bogus')")
        assert.has_error(function() mountns.unshare { mount = "yes" } end)
        assert.has_error(function() mountns.unshare { map_root = true } end)
        assert.has_error(function() mountns.unshare("x") end)
      end)
    end)
  end)

  describe("pivot_root, chdir, mkdir", function()
    it("pivots into a new root and detaches the old one", function()
      local targets = isolate(function()
        local base = helper.sandbox()
        local nr = base .. "/newroot"
        mountns.mkdir(nr)
        assert(mountns.mount("newroot", nr, "tmpfs"))
        assert(mountns.mkdir(nr .. "/old"))
        assert(core.pin_proc())
        assert(mountns.chdir(nr))
        assert(mountns.pivot_root(".", "old"))
        assert(mountns.chdir("/"))
        assert(mountns.umount("/old", "detach"))
        local t = {}
        for _, m in ipairs(mountns.mountinfo()) do t[#t + 1] = m.target end
        return t
      end)
      assert.are.same({ "/" }, targets)
    end)

    it("mkdir with parents creates every level, and fails clearly", function()
      local ok, again, err = isolate(function()
        local base = helper.sandbox()
        local a = mountns.mkdir(base .. "/a/b/c", { parents = true })
        local b = mountns.mkdir(base .. "/a/b/c", { parents = true })
        local _, e = mountns.mkdir(base .. "/a/b/c")
        return a and b, mountns.chdir(base .. "/a/b/c"), e
      end)
      assert.is_true(ok)
      assert.is_true(again)
      assert.are.equal("mkdir /tmp/mns/a/b/c: File exists (EEXIST)", err)
    end)
  end)

  describe("namespace handles", function()
    it("id is the inode readlink shows; __eq, __tostring, close", function()
      local ns = mountns.namespace()
      local link = helper.sh("readlink /proc/" .. core.getpid() .. "/ns/mnt")
      assert.are.equal(link, tostring(ns))
      assert.are.equal(link, "mnt:[" .. ns:id() .. "]")
      assert.are.equal(mountns.namespace(), ns)
      assert.are.equal(mountns.namespace(core.getpid()), ns)
      ns:close()
      ns:close()
      assert.has_error(function() ns:id() end, "attempt to use a closed namespace")
      assert.has_error(function() ns:enter() end)
    end)

    it("enter() goes back to a namespace", function()
      local back, inner = isolate(function()
        local home = mountns.namespace()
        assert(mountns.unshare())
        local other = mountns.namespace():id()
        assert(home:enter())
        local r1, r2 = mountns.namespace():id() == home:id(), other ~= home:id()
        home:close()
        return r1, r2
      end)
      assert.is_true(back)
      assert.is_true(inner)
    end)

    -- `<close>` is Lua 5.4 syntax: compiled from a string so that the file
    -- still loads on 5.1-5.3 and LuaJIT, where the spec is pending
    local with_close = _VERSION >= "Lua 5.4" and it or pending
    with_close("a <close> handle's fd is closed at the end of its block", function()
      local f = assert(load([[
        local mountns = ...
        local fd, ns
        do
          local home <close> = mountns.namespace()
          ns, fd = home, home:fileno()
        end
        return ns, fd
      ]]))
      local ns, fd = f(mountns)
      assert.matches("(closed)", tostring(ns), 1, true)
      assert.is_nil(io.open("/proc/self/fd/" .. fd))
    end)

    it("a missing process is an error result", function()
      local ns, msg, errno = mountns.namespace(999999999)
      assert.is_nil(ns)
      assert.are.equal("namespace /proc/999999999/ns/mnt: No such file or directory (ENOENT)", msg)
      assert.are.equal(mountns.errno.ENOENT, errno)
    end)
  end)

  describe("isolate", function()
    it("returns nil, booleans, numbers, strings and nested tables", function()
      local a, b, c, d, e, f = isolate(function()
        return nil, true, 42, 1.5, "x\0y\n", { 1, { k = "v" }, [10] = false }
      end)
      assert.is_nil(a)
      assert.is_true(b)
      assert.are.equal(42, c)
      assert.are.equal(1.5, d)
      assert.are.equal("x\0y\n", e)
      assert.are.same({ 1, { k = "v" }, [10] = false }, f)
      assert.are.same({ 1, 2 }, { isolate(function(x, y) return x, y end, 1, 2) })
    end)

    it("runs in a new, private mount namespace", function()
      local id, props = isolate(function()
        local out = {}
        for _, m in ipairs(mountns.mountinfo()) do out[m.propagation] = true end
        return mountns.namespace():id(), out
      end)
      assert.are_not.equal(mountns.namespace():id(), id)
      assert.are.same({ private = true }, props)
    end)

    it("raises the child's error with its traceback", function()
      local ok, err = pcall(isolate, function() error("boom in child") end)
      assert.is_false(ok)
      assert.truthy(err:match("boom in child"))
      assert.truthy(err:match("stack traceback"))
    end)

    it("names the signal that killed the child", function()
      local ok, err = pcall(isolate, function()
        core.kill(core.getpid(), "KILL")
      end)
      assert.is_false(ok)
      assert.truthy(err:match("killed by SIGKILL"))
    end)

    it("kills a child that runs past its timeout", function()
      local ok, err = pcall(mountns.isolate_with, { timeout = 0.2 }, function()
        core.read_all((core.pipe())) -- blocks for ever, without spinning a core
      end)
      assert.is_false(ok)
      assert.truthy(err:match("timeout of 0.2 s"))
    end)

    it("refuses to return functions, with a clear error", function()
      local ok, err = pcall(isolate, function() return print end)
      assert.is_false(ok)
      assert.truthy(err:find("result #1 is a function", 1, true), err)
    end)

    it("neither loses nor doubles buffered output", function()
      local out = helper.sh(helper.lua_vars() .. [[ -e '
        local m = require "mountns"
        io.write("before ")
        m.isolate(function() io.write("child ") end)
        io.write("after")' 2>&1]])
      assert.are.equal("before child after", out)
    end)
  end)

  describe("bounded reads of a pipe (read_exact, read_all)", function()
    local function pipe_with(data, close_writer)
      local r, w = assert(core.pipe())
      if data then assert(core.write_fd(w, data)) end
      if close_writer then core.close_fd(w); w = nil end
      return r, w
    end
    local function close(...)
      for i = 1, select("#", ...) do
        local fd = select(i, ...)
        if fd then core.close_fd(fd) end
      end
    end

    it("read_exact takes n bytes over several reads and leaves the rest", function()
      local big = string.rep("0123456789", 6000) -- 60000 bytes: many buffer-sized reads
      local r, w = pipe_with(big .. "rest")
      assert.are.equal(big, core.read_exact(r, #big))
      assert.are.equal("re", core.read_exact(r, 2, 5))
      assert.are.equal("", core.read_exact(r, 0))
      close(r, w)
    end)

    it("read_exact answers eof when the writer closes first, timeout when it is silent", function()
      local r = pipe_with("ab", true)
      assert.are.same({ nil, "eof" }, { core.read_exact(r, 3) })
      close(r)
      local r2, w2 = pipe_with("ab")
      assert.are.same({ nil, "timeout" }, { core.read_exact(r2, 3, 0.01) })
      close(r2, w2)
    end)

    it("read_all reads to end of file, or gives what came before the timeout", function()
      local r = pipe_with(string.rep("x", 20000), true)
      assert.are.equal(string.rep("x", 20000), core.read_all(r))
      close(r)
      local r2, w2 = pipe_with("so far")
      assert.are.same({ nil, "timeout", "so far" }, { core.read_all(r2, 0.01) })
      close(r2, w2)
    end)

    it("a closed fd fails with the kernel's EBADF, in the core's form", function()
      local r, w = pipe_with()
      close(r, w)
      for _, res in ipairs { { core.read_all(r) }, { core.read_exact(r, 1) },
                             { core.read_exact(r, 1, 1) } } do
        assert.is_nil(res[1])
        assert.matches("^read: .* %(EBADF%)$", res[2])
        assert.are.equal(mountns.errno.EBADF, res[3])
      end
    end)
  end)

  describe("errno", function()
    it("maps names to numbers", function()
      assert.are.equal(2, mountns.errno.ENOENT)
      assert.are.equal(22, mountns.errno.EINVAL)
      assert.are.equal(28, mountns.errno.ENOSPC)
    end)

    it("maps the numbers back to the names a failure's message uses", function()
      local _, msg, e = core.readdir("/proc/self/fd/mountns-spec-nope") -- no change to anything
      assert.are.equal(mountns.errno.ENOENT, e)
      assert.are.equal("ENOENT", mountns.errno[e])
      assert.matches("%(" .. mountns.errno[e] .. "%)$", msg)
      for name, n in pairs(mountns.errno) do
        if type(name) == "string" then
          assert.are.equal(n, mountns.errno[mountns.errno[n]], name)
        end
      end
    end)
  end)

  describe("waitpid", function()
    -- the state letter of /proc/PID/stat ("S", "Z"...), nil once reaped
    local function state(pid)
      local f = io.open("/proc/" .. pid .. "/stat")
      if not f then return nil end
      local text = f:read("*a")
      f:close()
      return text:match("^%d+ %b() (%a)")
    end

    it("with nohang answers running and leaves the child, then reaps it once it ended", function()
      local r, w = assert(core.pipe())
      local pid = assert(core.fork())
      if pid == 0 then
        core.close_fd(w)
        core.read_all(r) -- until the parent closes w
        core._exit(7)
      end
      core.close_fd(r)
      assert.are.same({ "running" }, { core.waitpid(pid, "nohang") })
      assert.is_not_nil(state(pid)) -- not reaped
      core.close_fd(w)
      local nap, nap_w = assert(core.pipe()) -- nobody writes: a read waits its timeout
      for _ = 1, 400 do -- until the kernel made it a zombie (20 s at most)
        if state(pid) == "Z" then break end
        core.read_all(nap, 0.05)
      end
      core.close_fd(nap); core.close_fd(nap_w)
      assert.are.equal("Z", state(pid))
      assert.are.same({ "exited", 7 }, { core.waitpid(pid, "nohang") })
      assert.is_nil(state(pid)) -- reaped
      local ok, err = core.waitpid(pid, "nohang")
      assert.is_nil(ok)
      assert.matches("^waitpid: .* %(ECHILD%)$", err)
    end)

    it("raises on an unknown way to wait, naming the argument", function()
      assert.has_error(function() core.waitpid(1, "soon") end,
        "bad argument #2 to 'waitpid' (invalid option 'soon')")
    end)
  end)

  describe("bad arguments raise errors naming the argument", function()
    it("unknown flags", function()
      -- in an isolated child: a regression that reached the system call
      -- must not act on the namespace the suite runs in
      isolate(function()
        assert.has_error(function() mountns.mount("a", "/b", "tmpfs", "ro,bogus") end,
          "bad argument #4 to 'mount' (unknown flag 'bogus')")
        assert.has_error(function() mountns.umount("/b", { "detach", "soon" }) end,
          "bad argument #2 to 'umount' (unknown flag 'soon')")
        assert.has_error(function() mountns.umount("/b", { 1 }) end)
        -- integers are raw MS_ bits (mountns.MS): a negative or fractional
        -- one raises before the system call
        assert.has_error(function() mountns.mount("a", "/b", "t", -7) end,
          "bad argument #4 to 'mount' (flags: -7 is not a set of flag bits (an integer "
          .. "from 0 to 2^32-1: mountns.MS))")
        assert.has_error(function() mountns.mount("a", "/b", "t", { "ro", 0.5 }) end)
      end)
    end)

    it("wrong types", function()
      -- in an isolated child: a regression that reached the system call
      -- must not act on the namespace the suite runs in
      isolate(function()
        assert.has_error(function() mountns.bind(nil, "/x") end)
        assert.has_error(function() mountns.bind("/x", "/y", { recursive = "yes" }) end,
          "bad argument #3 to 'bind' (option 'recursive' must be a boolean, got string)")
        assert.has_error(function() mountns.isolate("nope") end)
        assert.has_error(function() mountns.namespace(nil, "mount") end)
      end)
    end)

    it("misspelt option keys", function()
      -- in an isolated child: a regression that reached the system call
      -- must not act on the namespace the suite runs in
      isolate(function()
        assert.has_error(function() mountns.bind("/a", "/b", { recrsive = true }) end,
          "bad argument #3 to 'bind' (unknown option 'recrsive')")
        assert.has_error(function() mountns.make_shared("/a", { recursve = true }) end,
          "bad argument #2 to 'make_shared' (unknown option 'recursve')")
        assert.has_error(function() mountns.remount("/a", nil, nil, { bnd = true }) end,
          "bad argument #4 to 'remount' (unknown option 'bnd')")
        assert.has_error(function() mountns.mkdir("/a", { parent = true }) end,
          "bad argument #2 to 'mkdir' (unknown option 'parent')")
        assert.has_error(function() mountns.unshare { propgation = "private" } end,
          "bad argument #1 to 'unshare' (unknown option 'propgation')")
        assert.has_error(function() mountns.isolate_with({ timout = 1 }, print) end,
          "bad argument #1 to 'isolate_with' (unknown option 'timout')")
        assert.has_error(function() mountns.isolate(42) end,
          "bad argument #1 to 'isolate' (function expected, got number)")
      end)
    end)

    it("leak no fd over many failing calls", function()
      -- in an isolated child: a regression that reached the system call
      -- must not act on the namespace the suite runs in
      isolate(function()
        local before = helper.fd_count()
        for _ = 1, 2000 do
          mountns.bind("/no/such", "/no/where")
          mountns.namespace(999999999)
          mountns.mountinfo(999999999)
          mountns.parse_mountinfo("garbage")
          local ns = mountns.namespace()
          ns:close()
        end
        assert.are.equal(before, helper.fd_count())
      end)
    end)
  end)
end)
