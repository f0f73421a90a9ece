-- The modern kernel interface against the real kernel: open_tree,
-- move_mount, fsmount, mount_setattr, listmount/statmount and mounts().
-- Every kernel action runs inside isolate() on a sandbox tmpfs; results
-- are read back from the kernel's own mount table.
local mountns = require "mountns"
local core = require "mountns.core"
local helper = require "helper"

local isolate = mountns.isolate
local features = mountns.features()

local function need(feature)
  if not features[feature] then
    pending("this kernel lacks " .. feature .. " (Linux " .. core.feature_since[feature] .. ")")
    return false
  end
  return true
end

-- fields a mountinfo record and a statmount record must agree on
local FIELDS = { "id", "parent_id", "major", "minor", "root", "target",
  "options", "fstype", "source", "super_options", "shared", "master",
  "propagate_from", "unbindable", "propagation" }

-- A user namespace held by a handle, its uid_map and gid_map both `ids`
-- (default "0 1000 10": 0..9 inside are 1000..1009 outside): a child
-- unshares it, the parent writes the maps, opens the handle and lets the
-- child go.
local function userns_handle(ids)
  local r1, w1 = assert(core.pipe())
  local r2, w2 = assert(core.pipe())
  local pid = assert(core.fork())
  if pid == 0 then
    core.close_fd(r1); core.close_fd(w2)
    pcall(function()
      assert(core.unshare { mount = false, user = true })
      core.write_fd(w1, "r")
      core.read_exact(r2, 1)
    end)
    core._exit(0)
  end
  core.close_fd(w1); core.close_fd(r2)
  assert(core.read_exact(r1, 1))
  for _, map in ipairs { "uid_map", "gid_map" } do
    local f = assert(io.open("/proc/" .. pid .. "/" .. map, "w"))
    assert(f:write((ids or "0 1000 10") .. "\n"))
    assert(f:close())
  end
  local h = assert(mountns.namespace(pid, "user"))
  core.close_fd(w2); core.close_fd(r1)
  core.waitpid(pid)
  return h
end

describe("new mount API", function()
  local host_before
  setup(function() host_before = helper.host_mountinfo() end)
  teardown(function()
    assert.are.equal(host_before, helper.host_mountinfo())
  end)

  describe("features", function()
    it("reports each path as a boolean, probed from this kernel", function()
      for _, k in ipairs { "open_tree", "move_mount", "fsmount",
          "mount_setattr", "idmap", "set_group", "beneath", "listmount",
          "statmount", "mntns_id", "listmount_ns", "statx_unique_id",
          "statmount_complete", "idmap_tmpfs", "fanotify_mounts" } do
        assert.is_boolean(features[k], k)
      end
      assert.is_number(features.statmount_mask)
      -- what it says matches what the calls do
      assert.are.equal(features.listmount, mountns.listmount() ~= nil)
      assert.are.same(features, mountns.features())
    end)

    -- what works, not only which calls exist: the same idmap and fanotify
    -- calls made here, in a scenario, agree with what features() says
    -- #novalgrind: valgrind 3.19 answers fsopen with ENOSYS
    it("idmap_tmpfs and fanotify_mounts say what the kernel really does #novalgrind", function()
      local idmapped, fan = isolate(function()
        local m = assert(mountns.fsmount("tmpfs", {}, {}))
        local userns = userns_handle("0 0 1")
        local ok, err = mountns.mount_setattr(m, { idmap = userns })
        local f = core.fanotify_mounts((assert(mountns.namespace())))
        if f then f:close() end
        return ok and true or err, f and true or false
      end)
      assert.are.equal(features.idmap_tmpfs, idmapped == true,
        "idmap on a tmpfs: " .. tostring(idmapped))
      assert.are.equal(features.fanotify_mounts, fan)
    end)
  end)

  describe("mount_setattr", function()
    it("sets and clears attributes, seen in mountinfo", function()
      if not need("mount_setattr") then return end
      local set, cleared = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mount("t", base, "tmpfs"))
        assert(mountns.mount_setattr(base, { ro = true, nosuid = true,
          nodev = true, noexec = true, noatime = true, nodiratime = true,
          nosymfollow = true }))
        local a = mountns.mountinfo():find(base).options
        assert(mountns.mount_setattr(base, { ro = false, noexec = false,
          strictatime = true, nosymfollow = false }))
        return a, mountns.mountinfo():find(base).options
      end)
      assert.are.equal("ro,nosuid,nodev,noexec,noatime,nodiratime,nosymfollow", set)
      assert.are.equal("rw,nosuid,nodev,nodiratime", cleared)
    end)

    it("changes propagation of one mount, or of a tree with recursive", function()
      if not need("mount_setattr") then return end
      local one, rec = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mount("a", base, "tmpfs"))
        assert(mountns.mkdir(base .. "/sub"))
        assert(mountns.mount("b", base .. "/sub", "tmpfs"))
        assert(mountns.mount_setattr(base, { propagation = "shared" }))
        local t = mountns.mountinfo()
        local r1 = { t:find(base).propagation, t:find(base .. "/sub").propagation }
        assert(mountns.mount_setattr(base, { propagation = "unbindable",
          recursive = true }))
        t = mountns.mountinfo()
        return r1, { t:find(base).propagation, t:find(base .. "/sub").propagation }
      end)
      assert.are.same({ "shared", "private" }, one)
      assert.are.same({ "unbindable", "unbindable" }, rec)
    end)

    -- mapping 0..9 to 1000..1009 and chown 3:4 need IDs an unprivileged
    -- user's namespace does not have (it maps only the caller's own uid)
    helper.root_it("a user namespace mapping a range of IDs (0 1000 10)")(
    "makes an idmapped mount from a user namespace handle", function()
      if not need("idmap_tmpfs") then return end
      local owner, options = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mkdir(base .. "/src")); assert(mountns.mkdir(base .. "/dst"))
        assert(mountns.mount("t", base .. "/src", "tmpfs"))
        for _, name in ipairs { "f", "g" } do
          local f = assert(io.open(base .. "/src/" .. name, "w")); f:close()
        end
        assert(os.execute("chown 3:4 " .. base .. "/src/g"))
        local userns = userns_handle()
        local tree = assert(mountns.open_tree(base .. "/src", { clone = true }))
        assert(mountns.mount_setattr(tree, { idmap = userns }))
        assert(mountns.move_mount(tree, base .. "/dst"))
        tree:close(); userns:close()
        return helper.sh("stat -c %u:%g " .. base .. "/dst/f " .. base .. "/dst/g"),
               mountns.mountinfo():find(base .. "/dst").options
      end)
      -- on disk 0 and 3:4 are IDs inside the namespace, seen as 1000+
      assert.are.equal("1000:1000\n1003:1004", owner)
      assert.truthy(options:match(",idmapped"))
    end)

    -- what an unprivileged user can do too: its namespace has one ID (0),
    -- so the idmap's one line moves that ID off 0, and the file's owner is
    -- then an ID the mount does not map: the kernel shows the overflow ID
    it("makes an idmapped mount whose map leaves the owner out (any user)", function()
      if not need("idmap_tmpfs") then return end
      local owner, options = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mkdir(base .. "/src")); assert(mountns.mkdir(base .. "/dst"))
        assert(mountns.mount("t", base .. "/src", "tmpfs"))
        local f = assert(io.open(base .. "/src/f", "w")); f:close()
        local userns = userns_handle("5 0 1")
        local tree = assert(mountns.open_tree(base .. "/src", { clone = true }))
        assert(mountns.mount_setattr(tree, { idmap = userns }))
        assert(mountns.move_mount(tree, base .. "/dst"))
        tree:close(); userns:close()
        return helper.sh("stat -c %u:%g " .. base .. "/src/f " .. base .. "/dst/f"),
               mountns.mountinfo():find(base .. "/dst").options
      end)
      local function overflow(id) -- 65534 unless the admin changed it
        local f = assert(io.open("/proc/sys/kernel/overflow" .. id))
        local n = f:read("*n"); f:close(); return n
      end
      assert.are.equal("0:0\n" .. overflow("uid") .. ":" .. overflow("gid"), owner)
      assert.truthy(options:match(",idmapped"))
    end)
  end)

  describe("move_mount", function()
    it("set_group makes a private mount of the same superblock a peer", function()
      if not need("set_group") then return end
      local before, x, y = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mkdir(base .. "/X")); assert(mountns.mkdir(base .. "/Y"))
        assert(mountns.mount("x", base .. "/X", "tmpfs"))
        assert(mountns.bind(base .. "/X", base .. "/Y"))
        assert(mountns.make_shared(base .. "/X"))
        local b = mountns.mountinfo():find(base .. "/Y").propagation
        assert(mountns.move_mount(base .. "/X", base .. "/Y", { set_group = true }))
        local t = mountns.mountinfo()
        return b, t:find(base .. "/X"), t:find(base .. "/Y")
      end)
      assert.are.equal("private", before)
      assert.is_number(x.shared)
      assert.are.equal(x.shared, y.shared)
    end)

    it("attaches a detached fsmount tmpfs", function()
      if not need("fsmount") then return end
      local detached, r = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mkdir(base .. "/a"))
        local n = #mountns.mountinfo()
        local m = assert(mountns.fsmount("tmpfs", { size = "2m", mode = "0711",
          source = "fresh" }, { nodev = true, noexec = true }))
        local d = #mountns.mountinfo() == n
        assert(mountns.move_mount(m, base .. "/a"))
        m:close()
        return d, mountns.mountinfo():find(base .. "/a")
      end)
      assert.is_true(detached)
      assert.are.equal("tmpfs", r.fstype)
      assert.are.equal("fresh", r.source)
      assert.are.equal("rw,nodev,noexec,relatime", r.options)
      assert.are.equal("rw,size=2048k,mode=711" .. helper.TMPFS_OWNER .. helper.tmpfs_inodes(),
        r.super_options)
    end)

    it("fsmount failures name the fsconfig key and the kernel's message", function()
      if not need("fsmount") then return end
      local function try()
        local r = {}
        for i, args in ipairs { { "tmpfs", { size = "bogus" } }, { "no-such-fs", {} } } do
          local ok, msg, errno = mountns.fsmount(args[1], args[2])
          r[i] = { ok = ok ~= nil, msg = msg, errno = errno }
        end
        return r
      end
      local r = try()
      if not helper.root then
        -- fsopen asks for CAP_SYS_ADMIN over the caller's mount namespace
        -- before it reads the name: an unprivileged user gets EPERM here,
        -- and the kernel's answers below in a namespace of its own
        for i, fs in ipairs { "tmpfs", "no-such-fs" } do
          assert.is_false(r[i].ok)
          assert.are.equal("fsopen " .. fs .. ": Operation not permitted (EPERM)", r[i].msg)
          assert.are.equal(mountns.errno.EPERM, r[i].errno)
        end
        r = isolate(try)
      end
      assert.is_false(r[1].ok)
      assert.are.equal(mountns.errno.EINVAL, r[1].errno)
      local msg = r[1].msg
      assert.truthy(msg:match("^fsconfig tmpfs size=bogus "), msg)
      assert.truthy(msg:match("Bad value for 'size'"), msg)
      assert.truthy(msg:match(": Invalid argument %(EINVAL%)$"), msg)
      assert.is_false(r[2].ok)
      assert.are.equal("fsopen no-such-fs: No such device (ENODEV)", r[2].msg)
      assert.are.equal(mountns.errno.ENODEV, r[2].errno)
    end)

    it("attaches an open_tree clone, recursive or not", function()
      if not need("open_tree") then return end
      local flat, deep = isolate(function()
        local base = helper.sandbox()
        for _, d in ipairs { "/A", "/B", "/C" } do assert(mountns.mkdir(base .. d)) end
        assert(mountns.mount("a", base .. "/A", "tmpfs"))
        assert(mountns.mkdir(base .. "/A/sub"))
        assert(mountns.mount("s", base .. "/A/sub", "tmpfs"))
        local t1 = assert(mountns.open_tree(base .. "/A", { clone = true }))
        assert(mountns.move_mount(t1, base .. "/B"))
        local t2 = assert(mountns.open_tree(base .. "/A", { clone = true,
          recursive = true }))
        assert(mountns.move_mount(t2, base .. "/C"))
        local t = mountns.mountinfo()
        local function at(p) local m = t:find(p); return m and m.source end
        return { at(base .. "/B"), at(base .. "/B/sub") },
               { at(base .. "/C"), at(base .. "/C/sub") }
      end)
      assert.are.same({ "a" }, flat)
      assert.are.same({ "a", "s" }, deep)
    end)

    it("beneath slides a mount under the top one", function()
      if not need("beneath") then return end
      local top, under, found = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mount("top", base, "tmpfs"))
        local m = assert(mountns.fsmount("tmpfs", { source = "under" }))
        assert(mountns.move_mount(m, base, { beneath = true }))
        local t = mountns.mountinfo()
        local at = {}
        for _, r in ipairs(t:find_all(base)) do at[r.source] = r end
        return at.top, at.under, t:find(base).source
      end)
      assert.are.equal(under.id, top.parent_id)   -- top now sits on under
      assert.are.equal("top", found)
    end)

    -- #novalgrind: valgrind 3.19 answers move_mount with ENOSYS
    it("returns nil, message, errno on an OS failure #novalgrind", function()
      local ok, msg, errno = isolate(function()
        local base = helper.sandbox()
        return mountns.move_mount("/no/such/path", base)
      end)
      assert.is_nil(ok)
      assert.are.equal("move_mount /no/such/path /tmp/mns: No such file or "
        .. "directory (ENOENT)", msg)
      assert.are.equal(mountns.errno.ENOENT, errno)
    end)
  end)

  describe("mount fds", function()
    it("close is idempotent, use after close raises, tostring says so", function()
      if not need("open_tree") then return end
      local m = assert(mountns.open_tree("/"))
      assert.is_number(m:fileno())
      assert.truthy(tostring(m):match("^mountfd %d+ %[open_tree /%]$"))
      assert.are.equal(m, m)
      m:close(); m:close()
      assert.truthy(tostring(m):match("closed"))
      assert.has_error(function() m:fileno() end, "attempt to use a closed mount fd")
      assert.has_error(function() mountns.move_mount(m, "/") end)
    end)

    -- `<close>` is Lua 5.4 syntax: compiled from a string so that the file
    -- still loads on 5.1-5.3 and LuaJIT, where the spec is pending
    local with_close = _VERSION >= "Lua 5.4" and it or pending
    with_close("a <close> mount fd is closed at the end of its block", function()
      if not need("open_tree") then return end
      local m, fd = assert(load([[
        local mountns = ...
        local m, fd
        do
          local c <close> = assert(mountns.open_tree("/"))
          m, fd = c, c:fileno()
        end
        return m, fd
      ]]))(mountns)
      assert.matches("(closed)", tostring(m), 1, true)
      assert.is_nil(io.open("/proc/self/fd/" .. fd))
    end)

    it("two fds of the same mount are equal", function()
      if not need("open_tree") then return end
      local a, b = assert(mountns.open_tree("/")), assert(mountns.open_tree("/"))
      local c = assert(mountns.open_tree("/proc"))
      assert.are.equal(a, b)
      assert.are_not.equal(a, c)
      a:close(); b:close(); c:close()
    end)
  end)

  describe("listmount and statmount", function()
    it("give the mountinfo table: same IDs, targets, propagation, groups", function()
      if not need("statmount_complete") then return end
      local mi, sm, ids = isolate(function()
        local base = helper.sandbox()
        for _, d in ipairs { "/S", "/P", "/Q", "/U", "/V", "/w s" } do
          assert(mountns.mkdir(base .. d))
        end
        assert(mountns.mount("s", base .. "/S", "tmpfs", "nosuid", "size=1m"))
        assert(mountns.make_shared(base .. "/S"))
        assert(mountns.bind(base .. "/S", base .. "/P"))          -- peer
        assert(mountns.bind(base .. "/S", base .. "/Q"))
        assert(mountns.make_slave(base .. "/Q"))                  -- slave
        assert(mountns.make_shared(base .. "/Q"))                 -- shared,slave
        assert(mountns.mount("u", base .. "/U", "tmpfs", "ro,noexec"))
        assert(mountns.make_unbindable(base .. "/U"))
        assert(mountns.mount("v", base .. "/V", "tmpfs", "noatime"))
        assert(mountns.mount("with space", base .. "/w s", "tmpfs"))
        assert(mountns.mkdir(base .. "/S/inner"))
        assert(mountns.mount("i", base .. "/S/inner", "tmpfs"))  -- propagates
        return mountns.mountinfo(), mountns.listmount { stat = true,
          propagate_from = true }, mountns.listmount()
      end)
      assert.are.equal(#mi, #sm)
      assert.are.equal(#mi, #ids)
      local groups = 0
      for i, r in ipairs(mi) do
        local s = sm[i]
        for _, k in ipairs(FIELDS) do
          assert.are.equal(r[k], s[k], ("mount %d (%s) field %s"):format(r.id, r.target, k))
        end
        assert.are.equal(ids[i], s.unique_id)
        if r.shared then groups = groups + 1 end
      end
      assert.truthy(groups >= 5)
    end)

    it("statmount finds one mount by path, record, ID or mount fd", function()
      if not need("statmount_complete") then return end
      local by = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mount("one", base, "tmpfs"))
        local r = assert(mountns.statmount(base))
        local fd = assert(mountns.open_tree(base))
        return { path = r, rec = mountns.statmount(r), id = mountns.statmount(r.unique_id),
                 fd = mountns.statmount(fd), inside = mountns.statmount(base .. "/."),
                 mi = mountns.mountinfo():find(base) }
      end)
      assert.are.equal("one", by.path.source)
      assert.are.equal(by.mi.id, by.path.id)
      for _, k in ipairs { "rec", "id", "fd", "inside" } do
        assert.are.same(by.path, by[k])
      end
    end)

    it("lists another namespace by its handle, without setns", function()
      if not need("listmount_ns") then return end
      local r = isolate(function()
        local base = helper.sandbox()
        local outer = assert(mountns.namespace())
        assert(mountns.unshare { mount = true })
        assert(mountns.mount("only-inner", base, "tmpfs"))
        local inner = mountns.mounts()
        local o = assert(mountns.mounts(outer))
        local obj = assert(mountns.mounts({ handle = function() return outer end }))
        return { inner = inner:find(base).source, outer = o:find("/tmp").source,
                 hidden = o:find(base) == nil, obj = obj:find("/tmp").source,
                 n = #o, n_obj = #obj,
                 nsid = core.mntns_id(outer) ~= core.mntns_id(mountns.namespace()) }
      end)
      assert.are.equal("only-inner", r.inner)
      assert.are.equal("tmpfs", r.outer)     -- the sandbox, not the inner mount
      assert.is_true(r.hidden)
      assert.are.equal(r.n, r.n_obj)
      assert.are.equal(r.outer, r.obj)
      assert.is_true(r.nsid)
    end)

    it("mounts() leaves out propagate_from unless asked", function()
      if not need("statmount_complete") then return end
      local plain, asked, mi = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mkdir(base .. "/M")); assert(mountns.mkdir(base .. "/S"))
        assert(mountns.mount("m", base .. "/M", "tmpfs"))
        assert(mountns.make_shared(base .. "/M"))           -- group G1
        assert(mountns.bind(base .. "/M", base .. "/S"))
        assert(mountns.make_slave(base .. "/S"))
        assert(mountns.make_shared(base .. "/S"))           -- G2, slave of G1
        -- in a second namespace S becomes a slave of G2, which has no member
        -- there, while G1 has: mountinfo shows propagate_from:G1
        local outer = assert(mountns.namespace())
        assert(mountns.unshare { mount = true, propagation = "unchanged" })
        assert(mountns.make_slave(base .. "/S"))
        local t = mountns.mounts()
        local p = mountns.mounts { propagate_from = true }
        local m = mountns.mountinfo()
        outer:close()
        return t:find(base .. "/S"), p:find(base .. "/S"), m:find(base .. "/S")
      end)
      assert.is_number(mi.master)
      assert.is_number(mi.propagate_from)
      assert.are_not.equal(mi.master, mi.propagate_from)
      assert.are.equal(mi.master, plain.master)
      assert.are.equal(mi.propagate_from, asked.propagate_from)
      assert.is_nil(plain.propagate_from)
    end)

    it("rejects bad arguments", function()
      assert.has_error(function() mountns.statmount({}) end)
      assert.has_error(function() mountns.statmount(true) end)
      assert.has_error(function() mountns.statmount(1, { bogus = 1 }) end)
      assert.has_error(function() mountns.listmount { ns = 42 } end)
      local user = assert(mountns.namespace(nil, "user"))
      assert.has_error(function() mountns.listmount { ns = user } end,
        "bad argument #1 to 'listmount' (option 'ns': mnt namespace handle expected, "
        .. "got a user namespace)")
      user:close()
      assert.has_error(function() mountns.mounts(1, 2) end)
      local ok, msg, errno = mountns.statmount(2 ^ 40 + 7)
      assert.is_nil(ok)
      assert.truthy(msg:match("^statmount 1099511627783: "), msg)
      assert.is_number(errno)
    end)
    it("listmount's mnt_id lists below that mount; a non-integer names the option", function()
      if not need("statmount_complete") then return end
      local r = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mount("t", base, "tmpfs"))
        assert(mountns.mkdir(base .. "/a"))
        assert(mountns.mount("t", base .. "/a", "tmpfs"))
        local top = assert(mountns.statmount(base)).unique_id
        return { below = assert(mountns.listmount { mnt_id = top }),
                 a = assert(mountns.statmount(base .. "/a")).unique_id }
      end)
      assert.are.same({ r.a }, r.below)
      for _, bad in ipairs { "x", 1.5, true } do
        local ok, err = pcall(mountns.listmount, { mnt_id = bad })
        assert.is_false(ok)
        assert.matches("bad argument #1 to '[^']*' %(option 'mnt_id' must be an "
          .. "integer, got " .. (type(bad) == "number" and "1.5" or type(bad)), tostring(err))
      end
    end)
  end)

  describe("listmount's target", function()
    it("lists the mounts at that mount point, one hidden under an over-mount too, "
      .. "without records unless asked; none there: an empty list", function()
      if not need("statmount_complete") then return end
      local r = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mount("t", base, "tmpfs"))
        assert(mountns.mkdir(base .. "/a"))
        assert(mountns.mount("low", base .. "/a", "tmpfs"))
        local low = assert(mountns.statmount(base .. "/a")).unique_id
        assert(mountns.mkdir(base .. "/a/b"))
        assert(mountns.mount("b", base .. "/a/b", "tmpfs"))
        local b = assert(mountns.statmount(base .. "/a/b")).unique_id
        assert(mountns.mount("high", base .. "/a", "tmpfs")) -- /a/b now hidden
        local high = assert(mountns.statmount(base .. "/a")).unique_id
        return { a = assert(mountns.listmount { target = base .. "/a" }),
                 b = assert(mountns.listmount { target = base .. "/a/b" }),
                 recs = assert(mountns.listmount { target = base .. "/a/b", stat = true }),
                 none = assert(mountns.listmount { target = base .. "/c" }),
                 low = low, high = high, bid = b }
      end)
      assert.are.same({ r.low, r.high }, r.a)
      assert.are.same({ r.bid }, r.b)
      assert.are.equal(1, #r.recs)
      assert.are.equal(r.bid, r.recs[1].unique_id)
      assert.are.equal("b", r.recs[1].source)
      assert.are.same({}, r.none)
    end)

    it("names a bad target", function()
      if not need("listmount") then return end
      assert.has_error(function() mountns.listmount { target = 7 } end,
        "bad argument #1 to 'listmount' (option 'target' must be a string, got number)")
      assert.has_error(function() mountns.listmount { target = "/a\0b" } end,
        "bad argument #1 to 'listmount' (option 'target': embedded NUL byte)")
      -- a spelling no mount point has could only ever answer "none there"
      for _, bad in ipairs { "proc", "", "/proc/", "//proc", "/a/./b", "/a/../b", "/a/." } do
        assert.has_error(function() mountns.listmount { target = bad } end,
          "bad argument #1 to 'listmount' (option 'target' must be an absolute path in "
          .. "normal form (as a mount point is written), got '" .. bad .. "')")
      end
    end)

    it("keeps a target an __index function made alive while it compares", function()
      if not need("listmount") then return end
      -- the string is held by nothing but the call (make asan catches a
      -- read after a collection freed it)
      local opts = setmetatable({}, { __index = function(_, k)
        if k == "target" then collectgarbage(); return table.concat { "/", "pr", "oc" } end
      end })
      local want = assert(mountns.listmount { target = "/proc" })
      local got = assert(mountns.listmount(opts))
      assert.are.same(want, got)
      assert.is_true(#got >= 1)
    end)
  end)

  describe("bad arguments to the new API", function()
    it("raise, naming the option, and leave no fd open", function()
      -- in an isolated child: a regression that reached the system call
      -- must not act on the namespace the suite runs in
      isolate(function()
        local before = helper.fd_count()
        assert.has_error(function() mountns.open_tree(42) end)
        assert.has_error(function() mountns.open_tree("/", { bogus = true }) end,
          "bad argument #2 to 'open_tree' (unknown option 'bogus')")
        assert.has_error(function() mountns.open_tree("/", { recursive = true }) end,
          "bad argument #2 to 'open_tree' (recursive needs clone = true)")
        assert.has_error(function() mountns.move_mount("/a", "/b", { set_group = 1 }) end)
        assert.has_error(function()
          mountns.move_mount("/a", "/b", { set_group = true, beneath = true })
        end)
        assert.has_error(function() mountns.mount_setattr("/", { propagation = "bogus" }) end,
          "bad argument #2 to 'mount_setattr' (option 'propagation': invalid value 'bogus')")
        assert.has_error(function() mountns.mount_setattr("/", { relatime = false }) end)
        assert.has_error(function()
          mountns.mount_setattr("/", { noatime = true, strictatime = true })
        end)
        assert.has_error(function() mountns.mount_setattr("/", { ro = "yes" }) end,
          "bad argument #2 to 'mount_setattr' (attribute 'ro' must be a boolean, got string)")
        local mnt = assert(mountns.namespace())
        assert.has_error(function() mountns.mount_setattr("/", { idmap = mnt }) end,
          "bad argument #2 to 'mount_setattr' (option 'idmap': user namespace handle "
          .. "expected, got a mnt namespace)")
        mnt:close()
        assert.has_error(function() mountns.mount_setattr("/", { colour = true }) end)
        assert.has_error(function() mountns.fsmount("tmpfs", { size = {} }) end)
        assert.has_error(function() mountns.fsmount("tmpfs", { [{}] = "x" }) end)
        assert.has_error(function() mountns.fsmount("tmpfs", {}, "ro,bogus") end,
          "bad argument #3 to 'fsmount' (unknown flag 'bogus')")
        assert.has_error(function() mountns.fsmount("tmpfs", { "ro", 42 }) end)
        assert.are.equal(before, helper.fd_count())
      end)
    end)
  end)

  describe("fds", function()
    it("none leak over thousands of calls", function()
      if not need("statmount_complete") then return end
      local before, after = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mkdir(base .. "/a"))
        local outer = mountns.namespace()
        local b = helper.fd_count()
        for i = 1, 1500 do
          local t = assert(mountns.open_tree(base, { clone = true }))
          if i % 2 == 0 then t:close() end
          assert(mountns.fsmount("tmpfs", { size = "bogus" }) == nil)
          assert(mountns.fsmount("tmpfs", {}, "ro"))
          assert(mountns.statmount(base))
          assert(mountns.listmount { ns = outer })
          assert(mountns.mount_setattr("/tmp", { nosuid = i % 2 == 0 }))
          assert(mountns.move_mount("/no/such", base) == nil)
          -- the trees left to __gc above are collected every 50 rounds:
          -- Debian's 7.3 answered open_tree with ENOSPC after about a
          -- thousand uncollected ones in a 256 MiB guest (each detached
          -- tree holds a mount namespace, counted against a limit that
          -- grows with memory, we believe)
          if i % 50 == 0 then collectgarbage() end
          if i % 100 == 0 then   -- a temporary fd, referenced only by the call
            assert(mountns.move_mount((assert(mountns.fsmount("tmpfs", {}))), base .. "/a"))
            assert(mountns.statmount((assert(mountns.open_tree(base .. "/a")))))
          end
        end
        local m = assert(mountns.fsmount("tmpfs", {}))
        assert(mountns.move_mount(m, base .. "/a"))
        m = nil -- luacheck: ignore
        assert(mountns.mounts(outer))
        return b, helper.fd_count()
      end)
      assert.are.equal(before, after)
    end)
  end)
end)
