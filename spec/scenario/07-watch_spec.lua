-- Live mount events against the real kernel: the core's fanotify watch and
-- mountinfo poller, ns:watch on both paths (fanotify mount events where the
-- kernel has them, poll and diff everywhere), expect.propagates and
-- `mountns show --watch`. Every mount happens in an isolated child.
local mountns = require "mountns"
local core = require "mountns.core"
local expect = require "mountns.expect"
local watch = require "mountns.watch"
local helper = require "helper"

local scenario, isolate = mountns.scenario, mountns.isolate

-- Whether this kernel reports mount events through fanotify (6.15+), asked
-- in an isolated child: the watch is armed on a throw-away namespace.
local has_fanotify = isolate(function()
  local w = core.fanotify_mounts((assert(mountns.namespace())))
  if w then w:close() end
  return w ~= nil
end)

-- Whether the kernel can name a mount of a scenario namespace by its
-- unique ID (statmount, 6.8; listmount of another namespace, 6.10): then
-- every event carries one, on both paths.
local unique_ids = mountns.features().statmount and mountns.features().listmount_ns

-- Both paths where the kernel has fanotify mount events, else the fallback
-- only (the fanotify specs are pending then).
local PATHS = { { name = "fanotify", fallback = false }, { name = "poll", fallback = true } }

local function kinds_and_targets(events)
  local out = {}
  for _, ev in ipairs(events) do out[#out + 1] = ev.kind .. " " .. tostring(ev.mount.target) end
  return out
end

-- The unique ID of the mount at path in ns: from its table, else (6.8 to
-- 6.12: the table is mountinfo's) from statmount; nil before 6.8.
local function unique_id(ns, path)
  return ns:find(path).unique_id or ns:run(function()
    local m = mountns.statmount(path)
    return m and m.unique_id
  end)
end

-- sh1 with a shared /X, sh2 its peer copy, sl a slave copy, priv a
-- private copy: the four ways a namespace can relate to sh1's /X.
local function peers(sh1)
  sh1:label("sh1")
  sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
  sh1:mkdir("/X/a")
  return sh1:unshare { propagation = "unchanged", label = "sh2" },
         sh1:unshare { propagation = "slave", label = "sl" },
         sh1:unshare { propagation = "private", label = "priv" }
end

describe("watch", function()
  local host_before
  setup(function() host_before = helper.host_mountinfo() end)
  teardown(function() assert.are.equal(host_before, helper.host_mountinfo()) end)

  -- the poll path's table on kernels with listmount but incomplete
  -- statmount (6.8-6.12): mountinfo records given the unique IDs
  it("with_unique_ids gives mountinfo records the unique IDs statmount gives", function()
    local f = mountns.features()
    if not (f.listmount and f.statmount and f.listmount_ns) then
      pending("this kernel lacks listmount/statmount by namespace ID")
      return
    end
    local r = scenario(function(sh1)
      sh1:mkdir("/A"); sh1:mount("a", "/A", "tmpfs")
      sh1:mkdir("/A/b"); sh1:mount("b", "/A/b", "tmpfs")
      local with_unique_ids = require("mountns.mounts").with_unique_ids
      -- from outside (the watch's case) and from inside the namespace
      local outside = with_unique_ids(mountns.table.new(sh1:run(function()
        return assert(mountns.mountinfo()) end)), sh1:handle())
      local inside = mountns.table.new(sh1:run(function()
        return with_unique_ids(assert(mountns.mountinfo()))
      end))
      local out = {}
      for _, target in ipairs { "/", "/A", "/A/b" } do
        local m, n = outside:find(target), inside:find(target)
        out[target] = { m.unique_id, m.parent_unique_id, n.unique_id, n.parent_unique_id,
                        sh1:run(function()
          local s = mountns.statmount(target)
          return s.unique_id, s.parent_unique_id
        end) }
      end
      return out
    end)
    for _, target in ipairs { "/", "/A", "/A/b" } do
      local got = r[target]
      assert.is_number(got[1], target)
      assert.are.same({ got[5], got[6] }, { got[1], got[2] }, target)
      assert.are.same({ got[5], got[6] }, { got[3], got[4] }, target)
    end
  end)

  describe("core", function()
    local fit = has_fanotify and it or helper.feature_it("fanotify_mounts")

    -- #novalgrind: valgrind 3.19 answers statmount with ENOSYS (fuzz/README.md)
    fit("fanotify_mounts reports attach and detach with the mount's unique ID #novalgrind",
        function()
      local r = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mkdir(base .. "/a"))
        local w = assert(core.fanotify_mounts((assert(mountns.namespace()))))
        local empty = assert(w:read(0))
        assert(mountns.mount("a", base .. "/a", "tmpfs"))
        local uid = mountns.mounts():find(base .. "/a").unique_id
        local attached = assert(w:read(1))
        assert(mountns.umount(base .. "/a"))
        local detached = assert(w:read(1))
        local fileno = w:fileno()
        local open_text = tostring(w)
        w:close(); w:close()
        local ok, err = pcall(w.read, w, 0)
        return { empty = #empty, uid = uid, attached = attached, detached = detached,
                 fileno = fileno, open_text = open_text, closed_text = tostring(w),
                 ok = ok, err = err }
      end)
      assert.are.equal(0, r.empty)
      assert.are.same({ { kind = "attach", unique_id = r.uid } }, r.attached)
      assert.are.same({ { kind = "detach", unique_id = r.uid } }, r.detached)
      assert.is_number(r.fileno)
      assert.matches("^fanotify watch of mnt:%[%d+%]$", r.open_text)
      assert.matches("%(closed%)$", r.closed_text)
      assert.is_false(r.ok)
      assert.matches("attempt to use a closed watch", r.err)
    end)

    it("fanotify_mounts wants an open mount namespace handle", function()
      local r = isolate(function()
        local ok1, e1 = pcall(core.fanotify_mounts, "/proc/self/ns/mnt")
        local h = assert(mountns.namespace())
        h:close()
        local ok2, e2 = pcall(core.fanotify_mounts, h)
        local u = assert(mountns.namespace(nil, "uts"))
        local ok3, e3 = pcall(core.fanotify_mounts, u)
        u:close()
        return { ok1, e1, ok2, e2, ok3, e3 }
      end)
      assert.is_false(r[1]); assert.matches("mount namespace handle expected, got string", r[2])
      assert.is_false(r[3]); assert.matches("closed namespace", r[4])
      assert.is_false(r[5]); assert.matches("mnt namespace handle expected", r[6])
    end)

    it("a mountinfo poller signals each change of the namespace it was opened in", function()
      local r = isolate(function()
        local base = helper.sandbox()
        assert(mountns.mkdir(base .. "/a")); assert(mountns.mkdir(base .. "/b"))
        local home = assert(mountns.namespace())
        local p = assert(core.mountinfo_poller())
        local out = { quiet = p:wait(0) }
        assert(mountns.mount("a", base .. "/a", "tmpfs"))
        out.mounted = p:wait(0)
        out.once = p:wait(0)
        -- the process moves to a new namespace: the file stays on the old one
        assert(mountns.unshare())
        assert(mountns.mount("b", base .. "/b", "tmpfs"))
        out.other_ns = p:wait(0.05)
        assert(home:enter())
        assert(mountns.remount(base .. "/a", "ro", nil, { bind = true }))
        out.remounted = p:wait(0)
        out.any = { core.wait_any(0, p) }
        local t0 = core.clock()
        out.timeout = p:wait(0.05)
        out.waited = core.clock() - t0
        out.text = tostring(p)
        p:close(); p:close()
        out.closed_ok, out.closed_err = pcall(p.wait, p, 0)
        home:close()
        return out
      end)
      assert.is_false(r.quiet)
      assert.is_true(r.mounted)
      assert.is_false(r.once)
      assert.is_false(r.other_ns)
      assert.is_true(r.remounted)
      assert.are.same({ false }, r.any)
      assert.is_false(r.timeout)
      assert.is_true(r.waited >= 0.045)
      assert.are.equal("mountinfo poller", r.text)
      assert.is_false(r.closed_ok)
      assert.matches("attempt to use a closed poller", r.closed_err)
    end)

    it("a mountinfo poller of a PID that does not exist fails with ENOENT", function()
      local r = { core.mountinfo_poller(2 ^ 22 + 7) }
      assert.is_nil(r[1])
      assert.matches("^mountinfo_poller /proc/%d+/mountinfo: .*%(ENOENT%)$", r[2])
      assert.are.equal(mountns.errno.ENOENT, r[3])
    end)
  end)

  for _, path in ipairs(PATHS) do
    local pit = (path.fallback or has_fanotify) and it or helper.feature_it("fanotify_mounts")
    local opts = { fallback = path.fallback }

    describe("ns:watch through " .. path.name
             .. (path.fallback and "" or " #novalgrind"), function()
      pit("a mount in a shared peer group reaches every peer and the slave, not the "
          .. "private copy", function()
        local r = scenario(function(sh1)
          local sh2, sl, priv = peers(sh1)
          local ws = {}
          -- no periodic re-read: on a slow machine (valgrind) one second can
          -- pass before w:events(), and a re-read would find the attach first
          -- (via "rescan"), where this spec wants the kernel's signal
          for i, ns in ipairs { sh1, sh2, sl, priv } do
            ws[i] = watch.open(ns, { fallback = opts.fallback, interval = 600 })
          end
          sh1:mount("a", "/X/a", "tmpfs")
          local out = { path = ws[1].path, events = {} }
          for i, w in ipairs(ws) do
            out.events[i] = {}
            for _, ev in ipairs(w:events()) do
              out.events[i][#out.events[i] + 1] = { kind = ev.kind, target = ev.mount.target,
                via = ev.via, uid = ev.mount.unique_id, shared = ev.mount.shared,
                master = ev.mount.master, same_ns = ev.ns == ({ sh1, sh2, sl, priv })[i] }
            end
          end
          out.uids = { unique_id(sh1, "/X/a"), unique_id(sh2, "/X/a"),
                       unique_id(sl, "/X/a") }
          -- one way only: a mount in the slave reaches no one else
          sl:mkdir("/X/s"); sl:mount("s", "/X/s", "tmpfs")
          out.from_slave = {}
          for i, w in ipairs(ws) do out.from_slave[i] = kinds_and_targets(w:events()) end
          for _, w in ipairs(ws) do w:close() end
          return out
        end)
        assert.are.equal(path.name, r.path)
        for i = 1, 3 do
          local evs = r.events[i]
          assert.are.equal(1, #evs, "namespace " .. i)
          assert.are.equal("attach", evs[1].kind)
          assert.are.equal("/X/a", evs[1].target)
          assert.are.equal(path.name, evs[1].via)
          assert.is_true(evs[1].same_ns)
          -- the event names the very mount the namespace's table has
          assert.are.equal(r.uids[i], evs[1].uid)
          -- and by its unique ID wherever the kernel has one for it
          if unique_ids then assert.is_number(evs[1].uid, "namespace " .. i) end
        end
        assert.are.same({}, r.events[4])
        -- the copies in sh1 and sh2 are one peer group, sl's is its slave
        assert.is_number(r.events[1][1].shared)
        assert.are.equal(r.events[1][1].shared, r.events[2][1].shared)
        assert.are.equal(r.events[1][1].shared, r.events[3][1].master)
        assert.are.same({ {}, {}, { "attach /X/s" }, {} }, r.from_slave)
      end)

      pit("an unmount reports detach with the record of the mount that left", function()
        local r = scenario(function(sh1)
          local sh2, _, priv = peers(sh1)
          sh1:mount("a", "/X/a", "tmpfs")
          local before = { unique_id(sh1, "/X/a"), unique_id(sh2, "/X/a") }
          local ws = { watch.open(sh1, opts), watch.open(sh2, opts), watch.open(priv, opts) }
          sh1:umount("/X/a")
          local out = { before = before, events = {} }
          for i, w in ipairs(ws) do
            out.events[i] = {}
            for _, ev in ipairs(w:events()) do
              out.events[i][#out.events[i] + 1] = { kind = ev.kind, target = ev.mount.target,
                uid = ev.mount.unique_id, fstype = ev.mount.fstype, source = ev.mount.source }
            end
            w:close()
          end
          out.gone = { sh1:find("/X/a") == nil, sh2:find("/X/a") == nil }
          return out
        end)
        assert.are.same({ true, true }, r.gone)
        for i = 1, 2 do
          assert.are.same({ { kind = "detach", target = "/X/a", uid = r.before[i],
                              fstype = "tmpfs", source = "a" } }, r.events[i])
        end
        assert.are.same({}, r.events[3])
      end)

      pit("remounts, propagation changes and moves show as change", function()
        local r = scenario(function(sh1)
          local sh2, _, priv = peers(sh1)
          sh1:mount("a", "/X/a", "tmpfs")
          sh1:mkdir("/M"); sh1:mkdir("/N"); sh1:mount("m", "/M", "tmpfs")
          local w1, w2, w3 = watch.open(sh1, opts), watch.open(sh2, opts), watch.open(priv, opts)
          local out = {}
          local function grab(w)
            local list = {}
            for _, ev in ipairs(w:events()) do
              list[#list + 1] = { kind = ev.kind, target = ev.mount.target, fields = ev.fields,
                before = ev.before and { target = ev.before.target, options = ev.before.options,
                                         shared = ev.before.shared },
                options = ev.mount.options, propagation = ev.mount.propagation }
            end
            return list
          end
          sh1:remount("/X/a", "ro", nil, { bind = true })
          out.remount = { grab(w1), grab(w2) }
          sh2:make_private("/X/a")
          out.private = { grab(w1), grab(w2) }
          -- without unique IDs (mountinfo before 6.8) a move reads as a new mount
          out.unique = w1:read_table():find("/M").unique_id ~= nil
          sh1:move("/M", "/N")
          out.move = grab(w1)
          out.priv = grab(w3)
          w1:close(); w2:close(); w3:close()
          return out
        end)
        local rm = r.remount[1]
        assert.are.equal(1, #rm)
        assert.are.equal("change", rm[1].kind)
        assert.are.equal("/X/a", rm[1].target)
        assert.are.same({ "options" }, rm[1].fields)
        assert.matches("^ro,", rm[1].options)
        assert.matches("^rw,", rm[1].before.options)
        assert.are.same({}, r.remount[2]) -- a per-mount flag does not propagate
        assert.are.same({}, r.private[1])
        local pv = r.private[2]
        assert.are.equal(1, #pv)
        assert.are.equal("change", pv[1].kind)
        assert.are.equal("private", pv[1].propagation)
        assert.is_number(pv[1].before.shared)
        assert.are.same({ "propagation", "shared" }, pv[1].fields)
        if r.unique or path.name == "fanotify" then
          assert.are.equal(1, #r.move)
          assert.are.equal("change", r.move[1].kind)
          assert.are.equal("/N", r.move[1].target)
          assert.are.equal("/M", r.move[1].before.target)
          assert.are.equal("target", r.move[1].fields[1])
        else
          assert.are.same({ "attach", "detach" }, { r.move[1].kind, r.move[2].kind })
        end
        assert.are.same({}, r.priv)
      end)

      pit("iterates until a timeout, calls back, and closes its watch", function()
        local r = scenario(function(sh1)
          local sh2 = peers(sh1)
          local out = { iter = {} }
          local t0 = core.clock()
          local it_fn, w = sh2:watch { timeout = 0.1, fallback = opts.fallback,
                                       run = function() sh1:mount("a", "/X/a", "tmpfs") end }
          for ev in it_fn, w do out.iter[#out.iter + 1] = watch.describe(ev) end
          out.elapsed = core.clock() - t0
          out.closed_at_end = w.closed
          local seen = {}
          out.n = sh2:watch { timeout = 0.05, fallback = opts.fallback,
            run = function()
              sh1:mkdir("/X/a/b"); sh1:mount("b", "/X/a/b", "tmpfs")
              sh1:mkdir("/X/a/c"); sh1:mount("c", "/X/a/c", "tmpfs")
            end,
            callback = function(ev)
              seen[#seen + 1] = ev.kind .. " " .. tostring(ev.mount.target)
              return #seen < 1 -- stop after the first
            end }
          out.seen = seen
          return out
        end)
        assert.are.equal(1, #r.iter)
        assert.matches("^attach /X/a in sh2 mnt:%[%d+%]: shared:%d+ %(id %d+%)$", r.iter[1])
        assert.is_true(r.elapsed >= 0.1)
        assert.is_true(r.closed_at_end)
        assert.are.equal(1, r.n)
        assert.are.equal(1, #r.seen)
        assert.are.same({ "attach /X/a/b" }, r.seen)
      end)

      pit("expect.propagates passes on exactly the listed events", function()
        local received = scenario(function(sh1)
          local sh2, sl, priv = peers(sh1)
          local o = { fallback = opts.fallback }
          expect.propagates(function() sh1:mount("a", "/X/a", "tmpfs") end,
            { sh1, "/X/a" }, { sh2, "/X/a" }, { sl, "/X/a", "attach" }, { priv }, o)
          expect.propagates(function() sl:mkdir("/X/s"); sl:mount("s", "/X/s", "tmpfs") end,
            { sl, "/X/s" }, { sh1 }, { sh2 }, o)
          expect.propagates(function() sh2:make_private("/X/a") end,
            { sh2, "/X/a", "change" }, { sh1 }, o)
          -- an unmount propagates by the parent's peer group: sh2's /X/a goes
          -- too although it is private now (its /X is still sh1's peer)
          local evs = expect.propagates(function() sh1:umount("/X/a") end,
            { sh1, "/X/a", "detach" }, { sl, "/X/a", "detach" }, { sh2, "/X/a", "detach" },
            { priv }, o)
          return kinds_and_targets(evs)
        end)
        assert.are.same({ "detach /X/a", "detach /X/a", "detach /X/a" }, received)
      end)

      pit("expect.propagates fails on a missing or an unexpected event", function()
        local r = scenario(function(sh1)
          local sh2, _, priv = peers(sh1)
          priv:label("priv")
          local o = { fallback = opts.fallback }
          local ok1, missing = pcall(expect.propagates,
            function() sh1:mount("a", "/X/a", "tmpfs") end,
            { sh1, "/X/a" }, { sh2, "/X/a" }, { priv, "/X/a" }, o)
          local ok2, unexpected = pcall(expect.propagates,
            function() sh1:umount("/X/a") end, { sh1, "/X/a", "detach" }, { sh2 }, o)
          -- sh2 is not named: not watched, so not unexpected either
          local ok3 = pcall(expect.propagates,
            function() sh1:mount("a", "/X/a", "tmpfs") end, { sh1, "/X/a" }, o)
          local ok4, wrong_kind = pcall(expect.propagates,
            function() sh1:umount("/X/a") end, { sh1, "/X/a" }, { sh2 }, o)
          local ok5, bad = pcall(expect.propagates, function() end, { "sh1", "/X" })
          local ok6, bad_kind = pcall(expect.propagates, function() end, { sh1, "/X", "moved" })
          local ok7, raised = pcall(expect.propagates, function() error("boom", 0) end, { sh1 })
          return { ok1, missing, ok2, unexpected, ok3, ok4, wrong_kind, ok5, bad, ok6, bad_kind,
                   ok7, raised }
        end)
        assert.is_false(r[1])
        local missing = r[2]
        assert.matches("^expected exactly these mount events:\n", missing)
        assert.matches("\n  attach /X/a in priv mnt:%[%d+%]\nreceived:\n", missing)
        assert.matches("\n  attach /X/a in sh1 mnt:%[%d+%]: shared:%d+ %(id %d+%)\n", missing)
        assert.matches("\nmissing:\n  attach /X/a in priv mnt:%[%d+%]\n", missing)
        assert.not_matches("unexpected:", missing)
        -- then the mount tables of the namespaces involved
        assert.matches("\n  priv mnt:%[%d+%]:\n +TARGET", missing)
        assert.is_false(r[3])
        assert.matches("\nunexpected:\n  detach /X/a in sh2 mnt:%[%d+%]: shared:%d+", r[4])
        assert.not_matches("missing:", r[4])
        assert.is_true(r[5])
        assert.is_false(r[6])
        assert.matches("missing:\n  attach /X/a in sh1", r[7])
        assert.matches("unexpected:\n  detach /X/a in sh1 .*\n  detach /X/a in sh2", r[7])
        assert.is_false(r[8])
        assert.matches("bad argument #2 to 'propagates' %(expected {ns, path %[, kind%]}",
                       r[9])
        assert.is_false(r[10])
        assert.matches("kind attach, detach or change", r[11])
        assert.is_false(r[12])
        assert.are.equal("boom", r[13])
      end)

      pit("show --watch prints one line per event as it happens", function()
        local lines = isolate(function(fallback)
          local base = helper.sandbox()
          assert(mountns.mkdir(base .. "/a"))
          -- bin/mountns by a relative path: the interpreter's own LUA_CPATH holds.
          -- The shell prints its PID and execs the watcher (env execs too):
          -- the watcher is ended once its lines are read, not waited out
          -- (--timeout only bounds a watcher that misses an event)
          local p = io.popen("cd " .. helper.ROOT .. " && echo $$ && exec "
            .. helper.lua_cmd() .. " bin/mountns show --watch"
            .. " --timeout 10 --interval 0.05" .. (fallback and " --fallback" or ""))
          local watcher = tonumber(p:read("*l"))
          local out = { p:read("*l") }
          assert(mountns.mount("a", base .. "/a", "tmpfs"))
          out[#out + 1] = p:read("*l")
          assert(mountns.make_shared(base .. "/a"))
          out[#out + 1] = p:read("*l")
          assert(mountns.umount(base .. "/a"))
          out[#out + 1] = p:read("*l")
          out.id = mountns.namespace():id()
          assert(core.kill(watcher, "TERM"))
          p:close()
          return out
        end, path.fallback)
        local ns = "mnt:%[" .. lines.id .. "%]"
        assert.matches("^watching " .. ns .. " via " .. path.name, lines[1])
        assert.matches("^attach /tmp/mns/a in " .. ns .. ": private %(id %d+%)$", lines[2])
        assert.matches("^change /tmp/mns/a in " .. ns .. ": shared:%d+ %(id %d+%); "
                       .. "propagation private %-> shared:%d+$", lines[3])
        assert.matches("^detach /tmp/mns/a in " .. ns .. ": shared:%d+ %(id %d+%)$", lines[4])
      end)
    end)
  end

  it("works for an unprivileged user, in the user namespace of its scenario", function()
    local out = helper.sh(helper.unpriv_cmd() .. [[ -e '
        local m = require "mountns"
        local e = require "mountns.expect"
        local w = require "mountns.watch"
        print(require("mountns.core").getuid(), m.scenario(function(sh1)
          sh1:mkdir("/X"); sh1:mount("x", "/X", "tmpfs"); sh1:make_shared("/X")
          sh1:mkdir("/X/a")
          local sh2 = sh1:unshare { propagation = "unchanged" }
          local priv = sh1:unshare()
          local paths = {}
          for _, fb in ipairs { false, true } do
            local evs = e.propagates(function() sh1:mount("a", "/X/a", "tmpfs") end,
              { sh1, "/X/a" }, { sh2, "/X/a" }, { priv }, { fallback = fb })
            paths[#paths + 1] = evs[1].via
            sh1:umount("/X/a")
          end
          local x = w.open(sh2)
          paths[#paths + 1] = x.path
          x:close()
          return table.concat(paths, " ")
        end))' 2>&1]])
    -- fanotify where the kernel lets a user namespace root mark its own
    -- mount namespaces (6.18 does), else the fallback
    local via = has_fanotify and out:match("fanotify") and "fanotify" or "poll"
    assert.are.equal(helper.UNPRIV_UID .. "\t" .. via .. " poll "
      .. (via == "fanotify" and via or "poll"), out)
  end)

  it("leaks no file descriptor", function()
    local r = isolate(function()
      local base = helper.sandbox()
      assert(mountns.mkdir(base .. "/a"))
      local before = helper.fd_count()
      -- one call per round: LuaJIT keeps dead loop locals of a live frame
      -- reachable, a returned call's slots it clears, so __gc can run
      local function round(i)
        local w = watch.open(nil, { fallback = i % 2 == 0 })
        assert(mountns.mount("a", base .. "/a", "tmpfs"))
        assert(w:next(1))
        assert(mountns.umount(base .. "/a"))
        if i % 3 == 0 then w:close() end -- the others close in __gc
        local p = assert(core.mountinfo_poller())
        if i % 2 == 0 then p:close() end
      end
      -- LuaJIT's compiled loop can keep the last handles in registers
      if jit then jit.off() end -- luacheck: ignore
      for i = 1, 20 do round(i) end
      local after = helper.fd_count()
      return { before, after }
    end)
    assert.are.equal(r[1], r[2])
  end)

  it("watch.open rejects what it cannot watch", function()
    local ok1, e1 = pcall(watch.open, "sh1")
    assert.is_false(ok1)
    assert.matches("scenario namespace, PID or nil expected, got string", e1)
    local ok2, e2 = pcall(watch.open, nil, "fast")
    assert.is_false(ok2)
    assert.matches("table expected, got string", e2)
    local ok3, e3 = pcall(watch.open, 2 ^ 22 + 7)
    assert.is_false(ok3)
    assert.matches("%(ENOENT%)", e3)
  end)
end)
