-- The new mount API on the model (mountns.model.newapi) against the
-- kernel: open_tree, move_mount (attach, move, set_group, beneath),
-- fsmount, mount_setattr, umount of a namespace's root, force and expire.
-- Each case runs the same steps in a kernel scenario and in a model
-- scenario and asserts equal outcomes (ok, or the errno name) and equal
-- golden texts, plus what the kernel did (so no case can pass on two
-- equal mistakes). In the spirit of the kernel selftests
-- move_mount_set_group and mount_setattr and of LTP's mount_setattr02.
local helper = require "helper"
local mountns = require "mountns"
local model = require "mountns.model"

local unpack = table.unpack or unpack -- luacheck: ignore

-- the same steps on the kernel and on the model (spec/helper.lua)
local same = helper.same
local features = mountns.features()

local function dirs(ns, ...)
  for _, d in ipairs { ... } do ns:mkdir(d) end
end

-- the line of a golden text whose mount point is target (the last one)
local function line_at(text, target)
  local found
  for l in text:gmatch("[^\n]+") do
    if l:match("^%d+ %d+ %d+:%d+ %S+ (%S+) ") == target then found = l end
  end
  return found
end

-- #novalgrind: valgrind 3.19 answers open_tree, move_mount, fsopen and
-- mount_setattr with ENOSYS
describe("the new mount API, kernel and model #model #novalgrind", function()
  local it = helper.model_it

  describe("open_tree", function()
    it("a clone is detached: no propagation reaches it until move_mount attaches it", function()
      local text, out = same(function(ns, _, try, note)
        dirs(ns, "/A", "/B", "/C")
        ns:mount("a", "/A", "tmpfs"); ns:make_shared("/A"); ns:mkdir("/A/n")
        local t = ns:open_tree("/A", { clone = true })
        note(#ns:mounts())                      -- the clone is in no table
        ns:mount("late", "/A/n", "tmpfs")       -- does not reach the clone
        try(ns.move_mount, ns, t, "/B")
        try(ns.move_mount, ns, t, "/C")         -- the fd now names the attached mount
      end)
      assert.are.equal("2 ok ok", out)
      assert.is_nil(line_at(text, "/B"))
      assert.matches("^%d+ 1 0:2 / /C rw,relatime shared:1$", line_at(text, "/C"))
      assert.is_nil(line_at(text, "/C/n"))
      assert.matches("shared:2$", line_at(text, "/A/n"))
    end)

    it("without clone, an fd of the mount itself, which holds it", function()
      local _, out = same(function(ns, _, try)
        dirs(ns, "/A", "/B")
        ns:mount("a", "/A", "tmpfs"); ns:mkdir("/A/x")
        local t = ns:open_tree("/A")
        try(ns.umount, ns, "/A")                -- EBUSY: the fd holds it
        try(ns.umount, ns, "/A", "expire")      -- EBUSY too
        try(ns.move_mount, ns, ns:open_tree("/A/x"), "/B") -- not a mount's root
        try(ns.move_mount, ns, t, "/B")
        t:close()
        try(ns.move_mount, ns, t, "/A")         -- a closed fd: raised, same words
      end)
      assert.are.equal("EBUSY EBUSY EINVAL ok bad argument #1 to 'ns:move_mount' "
        .. "(attempt to use a closed mount fd)", out)
    end)

    it("recursive copies the tree but unbindable mounts; an unbindable source is EINVAL",
      function()
      local text, out = same(function(ns, _, try)
        dirs(ns, "/A", "/B", "/C")
        ns:mount("a", "/A", "tmpfs"); dirs(ns, "/A/s", "/A/u")
        ns:mount("s", "/A/s", "tmpfs"); ns:mount("u", "/A/u", "tmpfs")
        ns:make_unbindable("/A/u")
        try(ns.move_mount, ns, ns:open_tree("/A", { clone = true, recursive = true }), "/B")
        try(ns.open_tree, ns, "/A/u", { clone = true })
        try(ns.open_tree, ns, "/A/u")            -- no copy: allowed
        try(ns.move_mount, ns, ns:open_tree("/A", { clone = true }), "/C")
      end)
      assert.are.equal("ok EINVAL ok ok", out)
      assert.truthy(line_at(text, "/B/s"))
      assert.is_nil(line_at(text, "/B/u"))
      assert.is_nil(line_at(text, "/C/s"))
    end)

    it("closing a detached clone takes it out of its peer group", function()
      -- /S is a slave of /A's group; /A leaves it, so the clone (its only
      -- member left) becomes /S's master; closing the clone frees /S
      local text, out = same(function(ns, _, _, note)
        dirs(ns, "/A", "/S")
        ns:mount("a", "/A", "tmpfs"); ns:make_shared("/A")
        ns:bind("/A", "/S"); ns:make_slave("/S")
        local c = ns:open_tree("/A", { clone = true })
        ns:make_private("/A")
        note(ns:find("/S").propagation)
        c:close()
        ns:mkdir("/A/x")                        -- any step: the close is seen before it
      end)
      assert.are.equal("slave", out)
      assert.matches(" /S rw,relatime$", line_at(text, "/S"))
    end)
  end)

  describe("move_mount", function()
    it("attaches an fsmount under a shared mount: copies in its peers", function()
      local text = same(function(ns)
        dirs(ns, "/C", "/D")
        ns:mount("c", "/C", "tmpfs"); ns:make_shared("/C"); ns:mkdir("/C/x")
        ns:bind("/C", "/D")
        ns:move_mount(ns:fsmount("tmpfs", { source = "fresh" }), "/C/x")
        ns:move_mount(ns:fsmount("ramfs", {}), "/D/x")   -- stacked, copied back
      end)
      -- (the last at each: the ramfs and its copy, peers in a new group)
      local g = line_at(text, "/C/x"):match("shared:(%d+)$")
      assert.truthy(g)
      assert.matches(" 0:%d+ / /D/x rw,relatime shared:" .. g .. "$", line_at(text, "/D/x"))
      local n = 0
      for _ in text:gmatch(" /[CD]/x ") do n = n + 1 end
      assert.are.equal(4, n) -- the tmpfs and its copy under them
    end)

    it("refuses as the kernel does: shared parent, unbindable into shared, a loop, a file "
      .. "onto a directory, another namespace's mount", function()
      local _, out = same(function(ns, nss, try)
        dirs(ns, "/C", "/E", "/F", "/G")
        ns:mount("c", "/C", "tmpfs"); ns:make_shared("/C"); ns:mkdir("/C/x")
        ns:mount("x", "/C/x", "tmpfs")
        try(ns.move_mount, ns, "/C/x", "/G")              -- shared parent
        ns:mount("u", "/E", "tmpfs"); ns:make_unbindable("/E")
        try(ns.move_mount, ns, "/E", "/C/x")              -- unbindable into shared
        ns:mount("f", "/F", "tmpfs"); ns:mkdir("/F/y")
        try(ns.move_mount, ns, "/F", "/F/y")              -- ELOOP
        ns:write("/file", "x"); ns:write("/g", "y"); ns:bind("/file", "/g")
        try(ns.move_mount, ns, "/g", "/G")                -- a file onto a directory
        try(ns.move, ns, "/g", "/G")                      -- mount --move too: EINVAL
        try(ns.bind, ns, "/file", "/G")                   -- (a bind: ENOTDIR)
        local n2 = ns:unshare { label = "n2" }
        nss[2] = n2
        local t = ns:open_tree("/F")
        try(n2.move_mount, n2, t, "/G")
        try(n2.move_mount, n2, "/F", t)
        try(n2.mount_setattr, n2, t, { nodev = true })
        try(n2.move_mount, n2, ns:open_tree("/F", { clone = true }), "/G") -- detached: fine
        try(n2.umount, n2, "/G")                          -- its fd is open
        try(ns.move_mount, ns, "/F", ns:open_tree("/C", { clone = true, recursive = true }))
      end)
      -- (mount_setattr of another namespace's fd: ENOSYS before 5.12)
      assert.are.equal("EINVAL EINVAL ELOOP EINVAL EINVAL ENOTDIR EINVAL EINVAL "
        .. (features.mount_setattr and "EINVAL" or "ENOSYS") .. " ok EBUSY EINVAL", out)
    end)

    -- (the root: refused until 7.0; 7.1 slides the mount under it, which
    -- the model does not have: the case below)
    local under_root = model.new().rules.beneath_root
    helper.model_it("beneath slides a mount under the top one, in the peers too", function()
      if not features.beneath then return pending("this kernel lacks MOVE_MOUNT_BENEATH") end
      local text, out = same(function(ns, _, try)
        dirs(ns, "/A", "/S", "/T", "/U", "/V")
        ns:mount("top", "/A", "tmpfs"); ns:mkdir("/A/x")
        try(ns.move_mount, ns, ns:fsmount("tmpfs", {}), "/A", { beneath = true })
        local g = ns:fsmount("tmpfs", {})
        if not under_root then
          try(ns.move_mount, ns, g, "/", { beneath = true })     -- the root
        end
        try(ns.move_mount, ns, g, "/A/x", { beneath = true })    -- not a mount
        ns:mount("s", "/S", "tmpfs"); ns:make_shared("/S"); ns:mkdir("/S/y")
        ns:bind("/S", "/T"); ns:mount("yy", "/S/y", "tmpfs")
        try(ns.move_mount, ns, g, "/S/y", { beneath = true })    -- copied under /T/y too
        ns:mount("u", "/U", "tmpfs"); ns:mkdir("/U/z"); ns:mount("z", "/U/z", "tmpfs")
        try(ns.move_mount, ns, "/U/z", "/A", { beneath = true }) -- an attached one
        try(ns.move_mount, ns, "/A", "/A", { beneath = true })   -- itself
        ns:mount("v", "/V", "tmpfs"); ns:make_shared("/V")
        try(ns.move_mount, ns, ns:fsmount("tmpfs", {}), "/V", { beneath = true })
      end)
      assert.are.equal("ok " .. (under_root and "" or "EINVAL ") .. "EINVAL ok ok EINVAL ok", out)
      -- the top mount of /T/y sits on the copy slid under it
      local copy = line_at(text, "/T/y")
      assert.truthy(copy)
      assert.truthy(text:find(" %d+ 0:%d+ / /T/y rw,relatime shared:"))
    end)

    -- can_move_mount_beneath refused the caller's root until 7.0 (6.19.8's
    -- source); 7.1.8's no longer does, and the kernel slides the mount
    -- under the root, where no process of the namespace sees it
    it("beneath the root: EINVAL until 7.0; from 7.1 the kernel's, not the model's", function()
      local function steps(ns, _, try)
        try(ns.move_mount, ns, ns:fsmount("tmpfs", {}), "/", { beneath = true })
      end
      for _, v in ipairs { "6.18", "7.1", "7.3" } do
        local _, out = helper.side(function(fn) return model.scenario(fn, { linux = v }) end, steps)
        if v == "6.18" then
          assert.equal("EINVAL", out)
        else
          assert.matches("^ns:move_mount: beneath the namespace's root is not available in "
            .. "the model %(Linux " .. v:gsub("%.", "%%.") .. " puts the mount under the root", out)
        end
      end
      if features.beneath then
        local text, out = helper.side(mountns.scenario, steps)
        assert.equal(under_root and "ok" or "EINVAL", out)
        -- what the namespace lists: its root alone (the mount is below it)
        local n = 0
        for line in text:gmatch("[^\n]+") do
          if line:match("^%d+ %d+ ") then n = n + 1 end
        end
        assert.equal(1, n, text)
      end
    end)
  end)

  describe("MOVE_MOUNT_SET_GROUP (selftest move_mount_set_group)", function()
    it("makes a private mount of the same superblock a peer; it then receives", function()
      local text, out = same(function(ns, _, _, note)
        dirs(ns, "/X", "/Y")
        ns:mount("x", "/X", "tmpfs"); ns:mkdir("/X/d")
        ns:bind("/X", "/Y")
        ns:make_shared("/X")
        note(ns:find("/Y").propagation)
        ns:move_mount("/X", "/Y", { set_group = true })
        ns:mount("d", "/X/d", "tmpfs")            -- propagates to /Y/d now
      end)
      assert.are.equal("private", out)
      assert.matches("shared:1$", line_at(text, "/Y"))
      assert.truthy(line_at(text, "/Y/d"))
    end)

    it("refuses a private source, another superblock, a shared or slave target, a wider "
      .. "target, a path inside a mount; copies a slave's master", function()
      local text, out = same(function(ns, _, try)
        dirs(ns, "/A", "/F", "/G", "/E2", "/H", "/J")
        ns:mount("a", "/A", "tmpfs"); ns:make_shared("/A")
        ns:mount("s", "/G", "tmpfs"); ns:mkdir("/G/d")
        ns:mount("f", "/F", "tmpfs")
        try(ns.move_mount, ns, "/G", "/F", { set_group = true })   -- private source
        try(ns.move_mount, ns, "/A", "/F", { set_group = true })   -- another superblock
        ns:make_shared("/G"); ns:bind("/G/d", "/E2"); ns:make_private("/E2")
        try(ns.move_mount, ns, "/G", "/E2", { set_group = true })  -- a root inside: fine
        ns:bind("/G", "/H"); ns:make_private("/H")
        try(ns.move_mount, ns, "/E2", "/H", { set_group = true })  -- wider target
        try(ns.move_mount, ns, "/G/d", "/H", { set_group = true }) -- not a mount's root
        try(ns.move_mount, ns, "/G", "/E2", { set_group = true })  -- shared target
        local dt = ns:open_tree("/G", { clone = true })
        try(ns.move_mount, ns, dt, "/H", { set_group = true })     -- from a detached peer
        dt:close()
        ns:make_slave("/H")
        try(ns.move_mount, ns, "/G", "/H", { set_group = true })   -- slave target
        ns:make_private("/H")
        ns:bind("/G", "/J"); ns:make_slave("/J"); ns:make_private("/E2")
        try(ns.move_mount, ns, "/J", "/E2", { set_group = true })  -- a slave's master
        try(ns.move_mount, ns, "/J", "/E2", { set_group = true, beneath = true })
      end)
      assert.are.equal("EINVAL EINVAL ok EINVAL EINVAL EINVAL ok EINVAL ok "
        .. "bad argument #3 to 'ns:move_mount' (set_group and beneath exclude each other)", out)
      assert.matches("master:%d+$", line_at(text, "/E2"))
    end)
  end)

  describe("mount_setattr (selftest mount_setattr, LTP mount_setattr02)", function()
    -- (pending before 5.12 too: spec 50 compares the model's ENOSYS there)
    local it = helper.MODEL_PENDING and helper.model_it or helper.feature_it("mount_setattr") -- luacheck: ignore
    it("sets and clears flags, recursive or on one mount; atime as one mode", function()
      local text, out = same(function(ns, _, try)
        dirs(ns, "/A", "/A2")
        ns:mount("a", "/A", "tmpfs"); ns:mkdir("/A/b"); ns:mount("b", "/A/b", "tmpfs")
        try(ns.mount_setattr, ns, "/A", { ro = true, recursive = true })
        try(ns.write, ns, "/A/b/f", "x")                         -- EROFS
        try(ns.mount_setattr, ns, "/A/b", { ro = false, nosuid = true, noatime = true,
          nodiratime = true })
        try(ns.mount_setattr, ns, "/A2", { ro = true })          -- not a mount: EINVAL
        try(ns.mount_setattr, ns, "/A", {})
        try(ns.mount_setattr, ns, "/A", { noatime = true, strictatime = true })
        try(ns.mount_setattr, ns, "/A", { relatime = false })
        try(ns.mount_setattr, ns, "/A", { ro = "yes" })
        try(ns.mount_setattr, ns, "/A", { colour = true })
      end)
      assert.are.equal("ok EROFS ok EINVAL ok "
        .. "bad argument #2 to 'ns:mount_setattr' (more than one atime mode (noatime, relatime, "
        .. "strictatime)) bad argument #2 to 'ns:mount_setattr' (relatime = false names no "
        .. "atime mode: set noatime or strictatime) bad argument #2 to 'ns:mount_setattr' "
        .. "(attribute 'ro' must be a boolean, got string) bad argument #2 to "
        .. "'ns:mount_setattr' (unknown option 'colour')", out)
      assert.matches(" /A ro,relatime$", line_at(text, "/A"))
      assert.matches(" /A/b rw,nosuid,noatime,nodiratime$", line_at(text, "/A/b"))
    end)

    it("changes propagation through its propagation field, with and without recursive",
      function()
      local text, out = same(function(ns, _, _, note)
        ns:mkdir("/A"); ns:mount("a", "/A", "tmpfs")
        ns:mkdir("/A/b"); ns:mount("b", "/A/b", "tmpfs")
        for _, kind in ipairs { "shared", "slave", "private", "unbindable", "shared" } do
          ns:mount_setattr("/A", { propagation = kind })
          note(ns:find("/A").propagation .. "/" .. ns:find("/A/b").propagation)
        end
        ns:mount_setattr("/A", { propagation = "shared", recursive = true })
        note(ns:find("/A/b").propagation)
        ns:mount_setattr("/A", { propagation = "private", recursive = true })
        local fd = ns:fsmount("tmpfs", {})
        ns:mount_setattr(fd, { propagation = "shared", nodev = true }) -- a detached mount
        ns:mkdir("/D"); ns:move_mount(fd, "/D")
      end)
      -- a shared mount made a slave with no peer is private (do_make_slave)
      assert.are.equal("shared/private private/private private/private unbindable/private "
        .. "shared/private shared", out)
      assert.matches(" /D rw,nodev,relatime shared:%d+$", line_at(text, "/D"))
    end)

    it("an idmap of the initial user namespace is EPERM, on any mount", function()
      local _, out = same(function(ns, _, try)
        ns:mkdir("/A"); ns:mount("a", "/A", "tmpfs")
        local init = mountns.namespace(nil, "user")
        if helper.root then
          try(ns.mount_setattr, ns, "/A", { idmap = init })
          try(ns.mount_setattr, ns, ns:fsmount("ramfs", {}), { idmap = init })
        else
          return -- (a user namespace of the scenario's own is not the initial one)
        end
      end)
      if helper.root then assert.are.equal("EPERM EPERM", out) end
    end)
  end)

  describe("fsmount", function()
    it("checks tmpfs and ramfs configs as fsconfig does", function()
      local text, out = same(function(ns, _, try)
        try(ns.fsmount, ns, "tmpfs", { bogus = "1" })
        try(ns.fsmount, ns, "ramfs", { bogus = "1" })          -- ramfs ignores it
        try(ns.fsmount, ns, "ramfs", { mode = "zz" })
        try(ns.fsmount, ns, "tmpfs", { size = "zz" })
        try(ns.fsmount, ns, "nosuchfs", {})
        try(ns.fsmount, ns, "tmpfs", { size = "2m", mode = "0711", "inode64" })
        local ro = try(ns.fsmount, ns, "tmpfs", { "ro" }, "noexec")
        ns:mkdir("/R"); ns:move_mount(ro, "/R")
        try(ns.write, ns, "/R/f", "x")                         -- a read-only superblock
      end)
      assert.are.equal("EINVAL ok EINVAL EINVAL ENODEV ok ok EROFS", out)
      assert.matches(" /R rw,noexec,relatime$", line_at(text, "/R"))
    end)
  end)

  describe("umount", function()
    it("of the root (not lazy) makes its superblock read-only; force; expire", function()
      local _, out = same(function(ns, _, try)
        dirs(ns, "/A", "/B")
        ns:mount("a", "/A", "tmpfs")
        try(ns.umount, ns, "/")                  -- root: remounted ro (EINVAL if locked)
        try(ns.write, ns, "/f", "x")
        try(ns.umount, ns, "/A", "force")        -- a plain umount, in a user namespace too
        ns:mount("b", "/B", "tmpfs")
        try(ns.umount, ns, "/B", "expire")       -- EAGAIN: marked
        try(ns.umount, ns, "/B", "expire")       -- gone
        ns:mount("b", "/B", "tmpfs")
        try(ns.umount, ns, "/B", "expire,detach")
        try(ns.umount, ns, "/B", "expire")
        ns:write("/B/f", "x")                    -- a use clears the mark
        try(ns.umount, ns, "/B", "expire")
        try(ns.umount, ns, "/", "expire")
        ns:mkdir("/B/c"); ns:mount("c", "/B/c", "tmpfs")
        try(ns.umount, ns, "/B", "expire")
      end)
      if helper.root then
        assert.are.equal("ok EROFS ok EAGAIN ok EINVAL EAGAIN EAGAIN EINVAL EBUSY", out)
      else
        assert.are.equal("EINVAL ok ok EAGAIN ok EINVAL EAGAIN EAGAIN EINVAL EBUSY", out)
      end
    end)
  end)
end)

describe("umount expire's mark #model #novalgrind", function()
  local it = helper.model_it
  -- the reproducers `mountns check` shrank (seeds 11 and 12, 10,000
  -- sequences each): which failed calls clear the mark
  it("a failed lookup through the mount clears it; a move_mount whose target is missing "
    .. "does not (from 6.15: before, it puts the mount it found first)", function()
    local _, out = same(function(ns, _, try)
      ns:mkdir("/a/x"); ns:bind("/a", "/a/x")
      try(ns.umount, ns, "/a/x", "expire")
      try(ns.umount, ns, "/a/x/y")              -- ENOENT: its walk put /a/x (mntput)
      try(ns.umount, ns, "/a/x", "expire")      -- EAGAIN again
      try(ns.move_mount, ns, "/a/x", "/b")      -- ENOENT: the mark stays
      try(ns.umount, ns, "/a/x", "expire")      -- gone
    end)
    -- (spec 50 runs this on every version of the model)
    assert.are.equal(model.new().rules.move_from_first and "EAGAIN ENOENT EAGAIN ENOENT EAGAIN"
      or "EAGAIN ENOENT EAGAIN ENOENT ok", out)
  end)
end)

describe("model mount fds #model", function()
  it("close twice, use after close, tostring, fileno and == as the core's", function()
    local w = model.new()
    local ns = w:namespace()
    ns:mkdir("/A"); ns:mount("a", "/A", "tmpfs")
    local a, b = ns:open_tree("/A"), ns:open_tree("/A")
    local c = ns:open_tree("/A", { clone = true })
    assert.matches("^mountfd %d+ %[open_tree /A%]$", tostring(a))
    assert.is_number(a:fileno())
    assert.are.equal(a, b)
    assert.are_not.equal(a, c)
    a:close(); a:close()
    assert.matches("^mountfd %(closed%) %[open_tree /A%]$", tostring(a))
    assert.has_error(function() a:fileno() end, "attempt to use a closed mount fd")
    assert.has_error(function() ns:move_mount(a, "/A") end)
    local ok, err = pcall(ns.move_mount, ns, c, "/nowhere")
    assert.is_false(ok)
    assert.matches("move_mount %[open_tree clone /A%] /nowhere: No such file or directory "
      .. "%(ENOENT%)$", err)
  end)

  it("a detached tree dissolves when its fd is collected", function()
    local w = model.new()
    local ns = w:namespace()
    ns:mkdir("/A"); ns:mkdir("/S")
    ns:mount("a", "/A", "tmpfs"); ns:make_shared("/A")
    ns:bind("/A", "/S"); ns:make_slave("/S")
    local c = ns:open_tree("/A", { clone = true }) -- luacheck: ignore (held, then dropped)
    ns:make_private("/A")
    assert.are.equal("slave", ns:find("/S").propagation)
    c = nil -- luacheck: ignore
    collectgarbage(); collectgarbage()
    assert.are.equal("private", ns:find("/S").propagation)
  end)

  it("says what it does not model: a mount onto a detached tree, a lazy umount of /",
    function()
    local w = model.new()
    local ns = w:namespace()
    local t = ns:fsmount("tmpfs", {})
    assert.has_error(function() ns:move_mount(ns:fsmount("tmpfs", {}), t) end,
      "ns:move_mount: a mount onto a detached tree is not available in the model")
    assert.has_error(function() ns:umount("/", "detach") end,
      "ns:umount: a lazy umount of the root of a namespace is not available in the model")
  end)

  it("follows each kernel's rules: no MOVE_MOUNT_BENEATH before 6.5", function()
    for _, v in ipairs { "6.1", "6.12" } do
      local ns = model.new { linux = v }:namespace()
      ns:mkdir("/A"); ns:mount("a", "/A", "tmpfs")
      local ok, err = pcall(ns.move_mount, ns, ns:fsmount("tmpfs", {}), "/A", { beneath = true })
      assert.are.equal(v == "6.12", ok, tostring(err))
    end
  end)

  it("an idmap marks a detached tmpfs idmapped, only there", function()
    local core = require "mountns.core"
    -- a user namespace other than the initial one: a child's (one pipe
    -- each way, so that neither reads its own byte back)
    local r1, w1 = assert(core.pipe())
    local r2, w2 = assert(core.pipe())
    local pid = assert(core.fork())
    if pid == 0 then
      core.close_fd(r1); core.close_fd(w2)
      pcall(core.unshare, { mount = false, user = true })
      core.write_fd(w1, "r")
      core.read_exact(r2, 1)
      core._exit(0)
    end
    core.close_fd(w1); core.close_fd(r2)
    assert(core.read_exact(r1, 1))
    local userns = assert(mountns.namespace(pid, "user"))
    core.close_fd(w2); core.close_fd(r1)
    core.waitpid(pid)
    -- (the rules of a kernel with mount_setattr, whatever this one is)
    local ns = model.new { linux = "6.18" }:namespace()
    ns:mkdir("/A"); ns:mkdir("/B")
    ns:mount("a", "/A", "tmpfs")
    local t = ns:open_tree("/A", { clone = true })
    assert.has_error(function() ns:mount_setattr("/A", { idmap = userns }) end,
      "mount_setattr /A: Invalid argument (EINVAL)")
    assert.has_error(function() ns:mount_setattr(ns:fsmount("ramfs", {}), { idmap = userns }) end,
      "mount_setattr [fsmount ramfs]: Invalid argument (EINVAL)")
    assert(ns:mount_setattr(t, { idmap = userns }))
    assert.has_error(function() ns:mount_setattr(t, { idmap = userns }) end,
      "mount_setattr [open_tree clone /A]: Operation not permitted (EPERM)")
    ns:move_mount(t, "/B")
    assert.are.equal("rw,relatime,idmapped", ns:find("/B").options)
    userns:close()
  end)
end)

describe("run --both mirrors the new mount API #novalgrind", function()
  local function script(text)
    local path = os.tmpname()
    local f = assert(io.open(path, "w")); f:write(text); f:close()
    return path
  end
  local function run(path, both)
    local reported = {}
    assert(require("mountns.scenario").run_file(path, { both = both,
      report = function(name, ok, err, _, extra)
        reported[#reported + 1] = { name = name, ok = ok, err = err, extra = extra }
      end }))
    return reported
  end

  -- (the model follows 6.18: the kernel must have each call it mirrors)
  helper.feature_it("open_tree", "fsmount", "mount_setattr", "set_group")(
    "every step, under --strict, a kernel fd closed between steps too", function()
    local path = script([[
local mountns = require "mountns"
mountns.scenario("new api", function(ns)
  for _, d in ipairs { "/A", "/B", "/S" } do ns:mkdir(d) end
  ns:mount("a", "/A", "tmpfs"); ns:make_shared("/A")
  ns:bind("/A", "/S"); ns:make_slave("/S")
  local c = ns:open_tree("/A", { clone = true })
  ns:make_private("/A")
  c:close()
  ns:mkdir("/A/x")
  local f = ns:fsmount("tmpfs", {})
  ns:mount_setattr(f, { propagation = "shared", noexec = true })
  ns:move_mount(f, "/B")
  pcall(ns.move_mount, ns, "/B", "/B")
  ns:make_shared("/A"); ns:mkdir("/Q"); ns:bind("/A", "/Q"); ns:make_private("/Q")
  ns:move_mount("/A", "/Q", { set_group = true })
end)
]])
    local r = run(path, { strict = true })
    os.remove(path)
    assert.are.equal(1, #r)
    assert.is_true(r[1].ok, tostring(r[1].err))
  end)

  it("notes a mount fd the model was not shown, never blames the model", function()
    local path = script([[
local mountns = require "mountns"
mountns.scenario("unshown fd", function(ns)
  ns:mkdir("/B")
  ns:move_mount(ns:run(function() return mountns.fsmount("tmpfs", {}) end), "/B")
end)
]])
    local out = helper.sh("cd " .. helper.ROOT .. " && bin/mountns run --both " .. path
      .. " 2>&1; echo exit=$?")
    os.remove(path)
    assert.matches("ok   unshown fd", out, 1, true)
    assert.matches("not modelled: ns:move_mount %(1 call, first at [^\n]*:4%): a mount fd the "
      .. "model was not shown", out)
  end)
end)
