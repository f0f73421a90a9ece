-- Arguments are read exactly or refused: a flags set, a misspelt option
-- key, an octal mode string, a path with a NUL byte, a bad argument to a
-- namespace method. Each of these was silently ignored or misread once
-- (issue 11); each case checks what the kernel did, or that the call
-- raised a "bad argument" naming the function before any system call.
local mountns = require "mountns"
local core = require "mountns.core"
local helper = require "helper"

local isolate = mountns.isolate
local scenario = mountns.scenario
-- an error raised at a line of this file (the user's line)
local HERE = "13%-arguments_spec%.lua:%d+: "
local AT = "^[^:\n]*" .. HERE -- the whole message starts there


-- The message of the error fn raises (fails the test if it does not).
local function raised(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return tostring(err)
end

local function has(text, plain)
  assert.truthy(text:find(plain, 1, true), text)
end

describe("arguments", function()
  local host_before
  setup(function() host_before = helper.host_mountinfo() end)
  teardown(function()
    assert.are.equal(host_before, helper.host_mountinfo())
  end)

  describe("flags", function()
    it("a set {ro = true} mounts read-only", function()
      local opts = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mount("t", base, "tmpfs", { ro = true, nodev = true }))
        return mountns.mountinfo():find(base).options
      end)
      assert.truthy(opts:match("^ro,"), opts)
      assert.truthy(opts:match("nodev"), opts)
    end)

    it("the mixed form {'ro', nosuid = true} keeps both", function()
      local opts = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mount("t", base, "tmpfs", { "ro", nosuid = true }))
        return mountns.mountinfo():find(base).options
      end)
      assert.truthy(opts:match("^ro,"), opts)
      assert.truthy(opts:match("nosuid"), opts)
    end)

    it("a false value leaves the flag out", function()
      local opts = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mount("t", base, "tmpfs", { ro = false, noexec = true }))
        return mountns.mountinfo():find(base).options
      end)
      assert.truthy(opts:match("^rw,"), opts)
      assert.truthy(opts:match("noexec"), opts)
    end)

    it("a set takes part in remount and umount too", function()
      local opts, gone = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mount("t", base, "tmpfs"))
        assert(mountns.remount(base, { ro = true }, nil, { bind = true }))
        local o = mountns.mountinfo():find(base).options
        assert(mountns.umount(base, { detach = true }))
        return o, mountns.mountinfo():find(base) == nil
      end)
      assert.truthy(opts:match("^ro,"), opts)
      assert.is_true(gone)
    end)

    it("fsmount's attributes take the mixed form too", function()
      if not mountns.features().fsmount then
        pending("this kernel lacks fsmount")
        return
      end
      local opts = isolate(function()
        local base = helper.sandbox()
        local m = assert(mountns.fsmount("tmpfs", nil, { "ro", nosuid = true }))
        assert(mountns.move_mount(m, base))
        m:close()
        return mountns.mountinfo():find(base).options
      end)
      assert.truthy(opts:match("^ro,"), opts)
      assert.truthy(opts:match("nosuid"), opts)
    end)

    it("raises on a bad name, value or key, before the system call", function()
      local parse = core._parse_flags
      has(raised(parse, "mount", { rdonly = true }), "(unknown flag 'rdonly')")
      has(raised(parse, "mount", { ro = 1 }),
        "(flag 'ro' must be true or false, got number)")
      has(raised(parse, "mount", { "ro", [3] = "nosuid" }), "(unexpected key 3")
      has(raised(parse, "mount", { [true] = true }), "(unexpected key")
      assert.are.equal(parse("mount", "ro,nosuid"),
        parse("mount", { ro = true, nosuid = true }))
      -- the real call raises too, and mounts nothing
      local msg, mounted = isolate(function()
        local base = helper.sandbox()
        local ok, err = pcall(mountns.mount, "t", base, "tmpfs", { "ro", nosiud = true })
        return not ok and err, mountns.mountinfo():find(base) ~= nil
      end)
      has(msg, "bad argument #4 to '")
      has(msg, "(unknown flag 'nosiud')")
      assert.is_false(mounted)
    end)
  end)

  describe("paths with a NUL byte", function()
    it("raise in every core call instead of acting on the prefix", function()
      local r = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mkdir(base .. "/c"))
        local bad = base .. "/c\0garbage"
        local out = {}
        local function try(name, ...)
          local ok, err = pcall(core[name], ...)
          out[#out + 1] = { name, not ok and tostring(err) or "no error" }
        end
        try("mount", "t", bad, "tmpfs")
        try("mount", bad, base .. "/c", nil, "bind")
        try("mount", "t", base .. "/c", "tmp\0fs")
        try("mount", "t", base .. "/c", "tmpfs", nil, "size=1m\0x")
        try("bind", bad, base .. "/c")
        try("bind", base, bad)
        try("move", bad, base .. "/c")
        try("umount", bad)
        try("remount", bad)
        try("make_shared", bad)
        try("make_private", bad)
        try("make_slave", bad)
        try("make_unbindable", bad)
        try("mkdir", base .. "/d\0x")
        try("chdir", bad)
        try("symlink", "x", base .. "/l\0x")
        try("pivot_root", bad, base)
        try("pin_proc", "/proc\0x")
        try("open_tree", bad)
        try("move_mount", bad, base)
        try("mount_setattr", bad, { ro = true })
        try("fsmount", "tmp\0fs")
        try("fsmount", "tmpfs", { size = "1m\0x" })
        try("statmount", bad)
        -- nothing was created or mounted at the prefix
        local t = mountns.mountinfo()
        out.mounted_c = t:find(base .. "/c") ~= nil
        out.d = io.open(base .. "/d") ~= nil
        out.l = io.open(base .. "/l") ~= nil
        return out
      end)
      for _, c in ipairs(r) do
        local name, msg = c[1], c[2]
        assert.truthy(msg:find("bad argument #%d to '"), name .. ": " .. msg)
        assert.truthy(msg:find("contains a NUL byte)", 1, true), name .. ": " .. msg)
      end
      has(r[1][2], "(path contains a NUL byte)")
      has(r[3][2], "(fstype contains a NUL byte)")
      has(r[4][2], "(data contains a NUL byte)")
      assert.is_false(r.mounted_c)
      assert.is_false(r.d)
      assert.is_false(r.l)
    end)

    it("a choice or an option key with a NUL byte is not its prefix", function()
      has(raised(mountns.namespace, nil, "mnt\0x"), "contains a NUL byte")
      has(raised(mountns.unshare, { ["mount\0x"] = true }), "(unknown option 'mount")
      has(raised(mountns.unshare, { propagation = "private\0x" }),
        "option 'propagation': invalid value 'private")
    end)
  end)

  describe("options tables of the core", function()
    it("are read from their own keys, and through __index: an option a metatable "
      .. "gives counts as given", function()
      local r = isolate(function()
        local base = helper.sandbox()
        local via = setmetatable({}, { __index = { parents = true } })
        local ok1 = core.mkdir(base .. "/a/b/c", via)
        local ok2, err = core.mkdir(base .. "/d/e", {})
        return { ok1 = ok1, ok2 = ok2, err = err, made = core.exists(base .. "/a/b/c") }
      end)
      assert.is_true(r.ok1)
      assert.is_true(r.made)
      assert.is_nil(r.ok2)
      has(r.err, "ENOENT")
    end)
  end)

  describe("mkdir's mode", function()
    it("reads an octal string as octal, an integer as it is", function()
      local modes = isolate(function()
        local base = helper.sandbox()
        local out = {}
        for i, m in ipairs { "0750", "750", 488, "0" } do
          local p = base .. "/m" .. i
          assert(mountns.mkdir(p, { mode = m }))
          out[i] = helper.sh("stat -c %a " .. p)
        end
        return out
      end)
      -- 0750 and 488 (octal 0750) are untouched by the usual umask 022
      assert.are.same({ "750", "750", "750", "0" }, modes)
    end)

    it("raises on a string that is not octal, and creates nothing", function()
      local msgs, made = isolate(function()
        local base = helper.sandbox()
        local out = {}
        for i, m in ipairs { "0755x", "0o755", "493", "", "77777", -1, 4096, 7.5, true } do
          local ok, err = pcall(mountns.mkdir, base .. "/m" .. i, { mode = m })
          out[i] = not ok and tostring(err) or "no error"
        end
        return out, io.open(base .. "/m1") ~= nil
      end)
      for i, msg in ipairs(msgs) do
        assert.truthy(msg:find("bad argument #2 to '", 1, true), i .. ": " .. msg)
        assert.truthy(msg:find("mode", 1, true), i .. ": " .. msg)
      end
      has(msgs[1], "(mode '0755x' is not an octal mode")
      has(msgs[3], "(mode '493' is not an octal mode")
      assert.is_false(made)
    end)
  end)

  describe("options tables of the Lua layer", function()
    -- a misspelt key used to be ignored: the call ran with the default
    it("scenario, isolate_with and mounts raise on an unknown key", function()
      local ran = false
      local e1 = raised(function() scenario("s", function() ran = true end, { timout = 2 }) end)
      local e2 = raised(function() scenario(function() end, { lable = "x" }) end)
      local e3 = raised(function() scenario(function() end, { timeout = "2" }) end)
      local e4 = raised(function() mountns.mounts { propagte_from = true } end)
      local e5 = raised(function() mountns.mounts(nil, { 1 }) end)
      assert.is_false(ran)
      assert.matches(AT .. "bad argument #3 to 'scenario' %(unknown option 'timout'%)$", e1)
      assert.matches(HERE .. "bad argument #2 to 'scenario' %(unknown option 'lable'%)", e2)
      assert.matches(HERE .. "bad argument #2 to 'scenario' %(option 'timeout' must be",
        e3)
      assert.matches(HERE .. "bad argument #1 to 'mounts' %(unknown option 'propagte_from'%)", e4)
      assert.matches(HERE .. "bad argument #2 to 'mounts' %(option keys must be strings", e5)
    end)

    it("namespace methods, watch, propagates, dot and the recipes raise too", function()
      local recipes = require "mountns.recipes"
      local expect = require "mountns.expect"
      local r = scenario(function(ns)
        local out = {}
        local function try(fn) out[#out + 1] = select(2, pcall(fn)) or "no error" end
        try(function() ns:unshare { propogation = "shared" } end)
        try(function() ns:unshare { propagation = "shard" } end)
        try(function() ns:watch { timout = 1 } end)
        try(function() ns:watch { run = "x" } end)
        try(function() mountns.watch(ns, { intervall = 1 }) end)
        try(function() require("mountns.watch").open(ns, { fallbak = true }) end)
        try(function() ns:mounts { propagate = true } end)
        try(function() ns:mkdir("/m", { mod = "0755" }) end)
        try(function() expect.propagates(function() end, { ns }, { setle = 1 }) end)
        try(function() mountns.dot(ns, { titel = "x" }) end)
        try(function() recipes.rootfs(ns, { propagaton = "shared" }) end)
        try(function() recipes.rootless(ns, { lable = "c" }) end)
        try(function() recipes.kubernetes(ns, "None", { usr = true }) end)
        -- nothing was made by the refused calls
        out.namespaces = #mountns.peer_groups(ns) -- a call that works
        out.m = ns:find("/m") == nil and io.open("/m") == nil
        out.rootfs = io.open("/rootfs") == nil
        return out
      end)
      local want = {
        "#1 to 'ns:unshare' %(unknown option 'propogation'%)",
        "#1 to 'ns:unshare' %(option 'propagation': invalid value 'shard'",
        "#1 to 'ns:watch' %(unknown option 'timout'%)",
        "#1 to 'ns:watch' %(option 'run' must be a function, got string%)",
        "#2 to 'watch' %(unknown option 'intervall'%)",
        "#2 to 'watch.open' %(unknown option 'fallbak'%)",
        "#1 to 'ns:mounts' %(unknown option 'propagate'%)",
        "#2 to 'ns:mkdir' %(unknown option 'mod'%)",
        "#3 to 'propagates' %(unknown option 'setle'%)",
        "#2 to 'dot' %(unknown option 'titel'%)",
        "#2 to 'rootfs' %(unknown option 'propagaton'%)",
        "#2 to 'rootless' %(unknown option 'lable'%)",
        "#3 to 'kubernetes' %(unknown option 'usr'%)",
      }
      for i, w in ipairs(want) do
        assert.matches(AT .. "bad argument " .. w, r[i])
      end
      assert.is_true(r.m)
      assert.is_true(r.rootfs)
    end)

    it("isolate_with checks every option before it forks", function()
      local fds = helper.fd_count()
      local e1 = raised(function() mountns.isolate_with({ timeout = {} }, print) end)
      local e2 = raised(function() mountns.isolate_with({ timeout = -1 }, print) end)
      local e3 = raised(function() mountns.isolate_with({ timeout = 0 / 0 }, print) end)
      assert.matches(HERE .. "bad argument #1 to 'isolate_with' %(option 'timeout' must be "
        .. "a number of seconds > 0, got table%)", e1)
      assert.matches("got %-1%)", e2)
      assert.matches("got [-]?n[a]n", e3)
      -- no pipe left open, no child left behind
      assert.are.equal(fds, helper.fd_count())
      local f = io.open("/proc/self/task/" .. core.getpid() .. "/children")
      if f then
        local kids = f:read("*a")
        f:close()
        assert.are.equal("", kids)
      end
    end)
  end)

  describe("namespace methods", function()
    it("name the method and point at the caller's line", function()
      local r = scenario(function(ns)
        local out = {}
        local function try(fn) out[#out + 1] = select(2, pcall(fn)) or "no error" end
        ns:mkdir("/a")
        try(function() ns:mount("a", "/a", "tmpfs", "bogus") end)
        try(function() ns:bind("/a", "/a", { recurse = true }) end)
        try(function() ns:make_shared("/a\0b") end)
        try(function() ns:find("/a\0b") end)
        try(function() ns:locked(42 > 1) end)
        try(function() ns:run(42) end)
        try(function() ns:mkdir("/b", { mode = "0755x" }) end)
        -- through an agent: a namespace of a new user namespace
        local u = ns:unshare { user = true }
        try(function() u:mount("a", "/a", "tmpfs", { ro = "yes" }) end)
        try(function() u:umount("/a\0b") end)
        out.a = ns:find("/a") == nil
        return out
      end)
      local want = {
        "#4 to 'ns:mount' %(unknown flag 'bogus'%)$",
        "#3 to 'ns:bind' %(unknown option 'recurse'%)$",
        "#1 to 'ns:make_shared' %(path contains a NUL byte%)$",
        "#1 to 'ns:find' %(path contains a NUL byte%)$",
        "#1 to 'ns:locked' %(path expected, got boolean%)$",
        "#1 to 'ns:run' %(function expected, got number%)$",
        "#2 to 'ns:mkdir' %(mode '0755x' is not an octal mode",
        "#4 to 'ns:mount' %(flag 'ro' must be true or false, got string%)$",
        "#1 to 'ns:umount' %(path contains a NUL byte%)$",
      }
      for i, w in ipairs(want) do
        assert.matches(AT .. "bad argument " .. w, r[i])
      end
      assert.is_true(r.a)
    end)

    it("a dot for a colon, or a closed namespace, is said at the caller's line", function()
      local r = scenario(function(ns)
        local out = {}
        local function try(fn) out[#out + 1] = select(2, pcall(fn)) or "no error" end
        try(function() ns.mkdir("/x") end)
        try(function() ns.mount("a", "/x", "tmpfs") end)
        try(function() ns.unshare() end)
        try(function() ns.watch() end)
        local b = ns:unshare()
        b:close()
        try(function() b:mount("a", "/x", "tmpfs") end)
        try(function() b:mounts() end)
        try(function() b:watch() end)
        try(function() b:unshare() end)
        return out
      end)
      assert.matches(AT .. "calling 'ns:mkdir' on bad self %(scenario namespace "
        .. "expected, got string%): call it with a colon, ns:mkdir%(...%)$", r[1])
      assert.matches(AT .. "calling 'ns:mount' on bad self", r[2])
      assert.matches(AT .. "calling 'ns:unshare' on bad self %(scenario namespace "
        .. "expected, got nil%)", r[3])
      assert.matches(AT .. "calling 'ns:watch' on bad self", r[4])
      for i = 5, 8 do
        assert.matches(AT .. "attempt to use closed namespace ns%d+ mnt:%[closed%]", r[i])
      end
    end)
  end)
end)
