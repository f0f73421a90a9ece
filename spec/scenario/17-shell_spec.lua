-- mountns.shell / ns:shell: transcripts of mount commands run verbatim
-- against scenario namespaces, on the real kernel. Every scenario returns
-- plain data (the session's output, records, messages); the assertions run
-- here, in the parent.
local mountns = require "mountns"
local helper = require "helper"
require "mountns.shell" -- loaded before the scenarios: their / is a tmpfs

local scenario = mountns.scenario

-- Run fn(ns) in a scenario, returning what it returns; a raised error is
-- returned as {err = message} so the parent can look at it.
local function raised(fn)
  return scenario(function(ns)
    local ok, e = pcall(fn, ns)
    if ok then return { ok = true } end
    return { err = tostring(e) }
  end)
end

local ARTICLE = [[
sh1# mount --make-private /
sh1# mount --make-shared /dev/sda3 /X
sh1# mount --make-shared /dev/sda5 /Y
sh2# unshare -m --propagation unchanged sh
sh1# mkdir /Z
sh1# mount --bind /X /Z
sh1# cat /proc/self/mountinfo | sed 's/ - .*//'
61 0 8:2 / / rw,relatime
81 61 8:3 / /X rw,relatime shared:1
124 61 8:5 / /Y rw,relatime shared:2
228 61 8:3 / /Z rw,relatime shared:1
sh2# cat /proc/self/mountinfo | sed 's/ - .*//'
147 146 8:2 / / rw,relatime
221 147 8:3 / /X rw,relatime shared:1
224 147 8:5 / /Y rw,relatime shared:2
]]

local DMESG = "       dmesg(1) may have more information after failed mount system call.\n"

describe("shell", function()
  local host_before
  setup(function() host_before = helper.host_mountinfo() end)
  teardown(function() assert.are.equal(host_before, helper.host_mountinfo()) end)

  it("runs the seed article's session verbatim and prints its two tables", function()
    local r = scenario(function(ns)
      local out, sh = mountns.shell(ns, ARTICLE, { normalize = true })
      local raw = ns:shell("# cat /proc/self/mountinfo")
      local a, b = sh.sh1:mounts(), sh.sh2:mounts()
      return { out = out, raw = raw, same = sh.sh1 == ns, x1 = a:find("/X"),
               z1 = a:find("/Z"), x2 = b:find("/X"), y1 = a:find("/Y"),
               y2 = b:find("/Y"), z2 = b:find("/Z") or false, n2 = #b }
    end, { label = "sh1" })
    assert.are.equal([[
sh1# mount --make-private /
sh1# mount --make-shared /dev/sda3 /X
sh1# mount --make-shared /dev/sda5 /Y
sh2# unshare -m --propagation unchanged sh
sh1# mkdir /Z
sh1# mount --bind /X /Z
sh1# cat /proc/self/mountinfo | sed 's/ - .*//'
1 8 0:1 / / rw,relatime
2 1 0:2 / /X rw,relatime shared:1
3 1 0:3 / /Y rw,relatime shared:2
4 1 0:2 / /Z rw,relatime shared:1
sh2# cat /proc/self/mountinfo | sed 's/ - .*//'
5 9 0:1 / / rw,relatime
6 5 0:2 / /X rw,relatime shared:1
7 5 0:3 / /Y rw,relatime shared:2
]], r.out)
    assert.is_true(r.same)
    -- the kernel's own numbers without normalize, the device sources kept
    assert.matches("\n" .. r.x1.id .. " %d+ %d+:%d+ / /X rw,relatime shared:"
      .. r.x1.shared .. " %- tmpfs /dev/sda3 rw" .. helper.TMPFS_OWNER
      .. helper.tmpfs_inodes() .. "\n", r.raw)
    assert.are.equal("/dev/sda3", r.x1.source)
    assert.are.equal("tmpfs", r.x1.fstype)
    assert.are.equal(r.x1.shared, r.z1.shared)
    assert.are.equal(r.x1.shared, r.x2.shared)
    assert.are.equal(r.y1.shared, r.y2.shared)
    assert.is_false(r.z2)
    assert.are.equal(3, r.n2)
  end)

  describe("mount", function()
    it("-t, -o with mount(8) names and filesystem options", function()
      local r = scenario(function(ns)
        local out, _, steps = ns:shell([[
# mkdir /a
# mount -t tmpfs -o ro,nosuid,size=1m,mode=700 data /a
]])
        return { out = out, m = ns:mounts():find("/a"), status = steps[2].status }
      end)
      assert.are.equal(0, r.status)
      assert.are.equal("data", r.m.source)
      assert.matches("^ro,nosuid", r.m.options)
      assert.matches("size=1024k", r.m.super_options)
      assert.matches("mode=700", r.m.super_options)
      assert.are.equal("# mkdir /a\n# mount -t tmpfs -o ro,nosuid,size=1m,mode=700 data /a\n",
                       r.out)
    end)

    it("--bind, --rbind, --move and the --make-* forms, also combined", function()
      local r = scenario(function(ns)
        ns:shell([[
$ mount -t tmpfs src /s
$ mkdir /s/sub /b /rb /mv /sb /ru /ro
$ mount -t tmpfs sub /s/sub
$ mount --bind /s /b
$ mount --rbind /s /rb
$ mount -t tmpfs moved /m
$ mount --move /m /mv
$ mount --make-shared --bind /s /sb
$ mount --rbind --make-unbindable /s /ru
$ mount --bind -o ro /s /ro
$ mount --make-rslave /rb
$ mount -o remount,ro /mv
]])
        local t = ns:mounts()
        return { b = t:find("/b"), bsub = t:find("/b/sub") or false, rbsub = t:find("/rb/sub"),
                 rb = t:find("/rb"), m = t:find("/m") or false, mv = t:find("/mv"),
                 sb = t:find("/sb"), ru = t:find("/ru"), rusub = t:find("/ru/sub"),
                 ro = t:find("/ro"), s = t:find("/s") }
      end)
      assert.are.equal(r.s.major .. ":" .. r.s.minor, r.b.major .. ":" .. r.b.minor)
      assert.is_false(r.bsub)                       -- --bind: not the submount
      assert.are.equal("sub", r.rbsub.source)        -- --rbind: the submount too
      assert.is_false(r.m)
      assert.are.equal("moved", r.mv.source)
      assert.matches("^ro", r.mv.options)            -- -o remount,ro
      assert.are.equal("shared", r.sb.propagation)   -- bind, then make-shared
      assert.are.equal("unbindable", r.ru.propagation)
      assert.are.equal("sub", r.rusub.source)
      assert.matches("^ro", r.ro.options)            -- bind, then remount ro
      assert.matches("^rw", r.s.options)             -- the source stays rw
      assert.are.equal("private", r.rb.propagation)  -- rslave of a private mount
    end)

    it("applies several --make-* in order (mount --make-private --make-shared)", function()
      local r = scenario(function(ns)
        ns:shell("# mount -t tmpfs a /a\n# mount --make-unbindable --make-shared /a\n")
        return ns:mounts():find("/a")
      end)
      assert.are.equal("shared", r.propagation)
    end)

    it("a /dev source without -t is a tmpfs; another source without -t raises", function()
      local r = raised(function(ns)
        ns:shell("# mount /dev/sdb1 /d")
        assert(ns:mounts():find("/d").fstype == "tmpfs")
        ns:shell("# mount /srv /e")
      end)
      assert.matches("shell: line 1: mount: /srv: give %-t TYPE", r.err)
    end)

    it("creates a missing mount point only on the scenario's fresh root", function()
      local r = scenario(function(ns)
        local out = ns:shell([[
# mount -t tmpfs a /a
# mount -t tmpfs b /a/b
# mount --bind /a /c
]])
        local t = ns:mounts()
        return { out = out, a = t:find("/a") ~= nil, b = t:find("/a/b") ~= nil }
      end)
      assert.is_true(r.a)
      assert.is_false(r.b)
      assert.are.equal("# mount -t tmpfs a /a\n# mount -t tmpfs b /a/b\n"
        .. "mount: /a/b: mount point does not exist.\n" .. DMESG
        .. "# mount --bind /a /c\nmount: /c: mount point does not exist.\n" .. DMESG, r.out)
    end)
  end)

  describe("failures print mount(8)'s message and status, and the session goes on", function()
    local CASES = {
      { "mount --bind /X /Z", 32, "mount: /Z: mount point does not exist.\n" .. DMESG },
      { "mount --bind /nope /X", 32, "mount: /X: special device /nope does not exist.\n"
        .. DMESG },
      { "mount --make-shared /nope", 32, "mount: /nope: mount point does not exist.\n" .. DMESG },
      { "mount --make-shared /d", 32, "mount: /d: not mount point or bad option.\n" .. DMESG },
      { "mount -t bogusfs x /d", 32, "mount: /d: unknown filesystem type 'bogusfs'.\n" .. DMESG },
      { "mount -t tmpfs -o bogus x /d", 32, "mount: /d: wrong fs type, bad option, bad "
        .. "superblock on x, missing codepage or helper program, or other error.\n" .. DMESG },
      { "mount --move /d /X", 32, "mount: /X: wrong fs type, bad option, bad superblock on "
        .. "/d, missing codepage or helper program, or other error.\n" .. DMESG },
      { "mount --move /S/m /X", 32, "mount: /X: bad option; moving a mount residing under "
        .. "a shared mount is unsupported.\n" .. DMESG },
      { "mount -o remount,ro /d", 32, "mount: /d: mount point not mounted or bad option.\n"
        .. DMESG },
      { "mount -t tmpfs x /f", 32, "mount: /f: mount point is not a directory.\n" .. DMESG },
      { "umount /d", 32, "umount: /d: not mounted.\n" },
      { "umount /nope", 32, "umount: /nope: no mount point specified.\n" },
      { "mkdir /d", 1, "mkdir: cannot create directory \226\128\152/d\226\128\153: File exists\n" },
      { "mkdir /nope/deeper", 1, "mkdir: cannot create directory \226\128\152/nope/deeper"
        .. "\226\128\153: No such file or directory\n" },
      { "touch /nope/f", 1, "touch: cannot touch '/nope/f': No such file or directory\n" },
      { "ls /nope", 2, "ls: cannot access '/nope': No such file or directory\n" },
      { "cat /nope", 1, "cat: /nope: No such file or directory\n" },
    }
    local results = scenario(function(ns)
      ns:shell([[
# mkdir /d /X
# touch /f
# mount -t tmpfs S /S
# mount --make-shared /S
# mkdir /S/m
# mount -t tmpfs m /S/m
]])
      local res = {}
      for i, c in ipairs(CASES) do
        local out, _, steps = ns:shell("# " .. c[1] .. "\n# echo status $?\n")
        res[i] = { out = out, status = steps[1].status, output = steps[1].output }
      end
      return res
    end)
    for i, c in ipairs(CASES) do
      it(c[1], function()
        assert.are.equal(c[3], results[i].output)
        assert.are.equal(c[2], results[i].status)
        assert.are.equal("# " .. c[1] .. "\n" .. c[3] .. "# echo status $?\nstatus " .. c[2]
          .. "\n", results[i].out)
      end)
    end

    it("prints what util-linux's own mount and umount print (where they are 2.38)", function()
      -- the real tools, on paths absent on the host too, each in a mount
      -- namespace of its own (unshare -Urm: root in a user namespace of
      -- its own, as ns:exec's tools have no capability and mount(2) would
      -- refuse them before it looks at the paths)
      local argvs = {
        { "mount", "--bind", "/mountns-spec-nope", "/mountns-spec-nope2" },
        { "mount", "--make-shared", "/mountns-spec-nope" },
        { "umount", "/mountns-spec-nope" },
        { "mount", "-t", "bogusfs", "x", "/" },
        { "mount", "-t", "tmpfs", "-o", "bogus", "x", "/" },
        { "mount", "--bind", "/mountns-spec-nope", "/" },
      }
      local v = helper.sh("mount --version")
      if not v:match("util%-linux 2%.38") then
        return pending("mount(8) is not util-linux 2.38: " .. v)
      end
      local real = {}
      for i, argv in ipairs(argvs) do
        local out = helper.sh("LC_ALL=C unshare -Urm " .. table.concat(argv, " ")
          .. " 2>&1 >/dev/null; echo \"status $?\"")
        local text, code = out:match("^(.-)status (%d+)$")
        real[i] = { stderr = text, code = tonumber(code) }
      end
      local r = scenario(function(ns)
        local res = {}
        for i, argv in ipairs(argvs) do
          local out, _, steps = ns:shell("# " .. table.concat(argv, " "))
          res[i] = { ours = steps[1].output, status = steps[1].status, out = out }
        end
        return res
      end)
      for i, c in ipairs(r) do
        assert.are.equal(real[i].stderr, c.ours)
        assert.are.equal(real[i].code, c.status)
      end
    end)
  end)

  describe("umount", function()
    it("-l, -f and -R", function()
      local r = scenario(function(ns)
        local out = ns:shell([[
# mount -t tmpfs a /a
# mount -t tmpfs l /l
# mkdir /a/b /a/c
# mount -t tmpfs b /a/b
# mount -t tmpfs c /a/c
# mount -t tmpfs d /a/c
# umount -R /a
# umount -l /l
# mount -t tmpfs f /f
# umount -f /f
]])
        local t = ns:mounts()
        return { out = out, n = #t }
      end)
      assert.are.equal(1, r.n)
      assert.falsy(r.out:find("umount:", 1, true))
    end)
  end)

  describe("files and listings", function()
    it("mkdir -p, touch, ls, cat, findmnt", function()
      local r = scenario(function(ns)
        local out = ns:shell([[
# mkdir -p /w/x/y
# mkdir -p /w/x
# mount -t tmpfs w /w
# touch /w/b /w/a
# mkdir /w/c
# ls /w
# ls
# findmnt
]])
        return { out = out, t = tostring(ns:mounts()) }
      end)
      assert.are.equal("# mkdir -p /w/x/y\n# mkdir -p /w/x\n# mount -t tmpfs w /w\n"
        .. "# touch /w/b /w/a\n# mkdir /w/c\n# ls /w\na  b  c\n# ls\nw\n# findmnt\n",
        r.out:match("^(.-\n# findmnt\n)"))
      assert.matches("\n# findmnt\nTARGET%s+SOURCE%s+FSTYPE%s+ID%s+PARENT%s+PROPAGATION", r.out)
      assert.matches("\n/%s+mountns%s+tmpfs", r.out)
      assert.matches("\n└─/w%s+w%s+tmpfs", r.out)
    end)
  end)

  describe("ls", function()
    -- a tree with dot files, a file, a dangling symlink and a directory
    local function tree(ns)
      ns:mkdir("/w"); ns:mount("w", "/w", "tmpfs")
      for _, f in ipairs { "/w/b", "/w/.h", "/w/A", "/w/d/y", "/w/d/.x" } do
        ns:mkdir(f:match("^(.*)/")); ns:write(f, "")
      end
      ns:mkdir("/w/e")
      ns:symlink("/nope", "/w/dl")
    end
    local LINES = { "ls w", "ls -a w", "ls -A w/d", "ls -1 w/e", "ls w/d w/b w/e",
                    "ls w/nope w/d", "ls w/dl", "ls w/b/x", "ls -aA1 w/d w", "ls -A -a w/d" }

    it("lists what GNU ls lists in the C locale (the host's ls on the same tree)", function()
      local r = scenario(function(ns)
        tree(ns)
        local res = {}
        for i, line in ipairs(LINES) do
          local _, _, steps = ns:shell(line .. "\n")
          local real = ns:exec { "sh", "-c", "cd /proc/" .. ns:pid() .. "/root && LC_ALL=C "
            .. line:gsub("^ls", "ls -1") .. " 2>&1" }
          res[i] = { out = steps[1].output, status = steps[1].status,
                     real = real.stdout, code = real.code }
        end
        return res
      end)
      for i, line in ipairs(LINES) do
        -- ls -1 into a pipe puts a name a line; the transcript, as in a
        -- terminal, two spaces between names
        assert.are.equal(r[i].real, (r[i].out:gsub("  ", "\n")), line)
        assert.are.equal(r[i].code, r[i].status, line)
      end
    end)

    it("needs no host tool: a transcript's ls runs with no ls in PATH", function()
      local interp = helper.sh("command -v " .. helper.LUA)
      local cmd = helper.lua_cmd():gsub("^env ", "env PATH=/mountns-spec-no-tools ")
        :gsub("%S+$", interp)
      local out = helper.sh(cmd .. [[ -e '
        local mountns = require "mountns"
        io.write(mountns.scenario(function(ns)
          ns:mkdir("/w"); ns:mount("w", "/w", "tmpfs"); ns:mkdir("/w/a"); ns:write("/w/b", "")
          return (ns:shell("ls /w\n"))
        end))' 2>&1]])
      assert.are.equal("ls /w\na  b", out)
    end)
  end)

  describe("namespaces and prompts", function()
    it("switches by prompt name and by @name; a new terminal starts in the first namespace",
      function()
      local r = scenario(function(ns)
        local out, sh = ns:shell([[
sh1# mount -t tmpfs a /a
sh1# mount --make-shared /a
sh2# unshare -m --propagation unchanged sh
@sh1 mkdir /a/b
@sh1 mount -t tmpfs b /a/b
sh2# mkdir /only2
@sh2 mount -t tmpfs c /only2
sh3# cat /proc/self/mountinfo
]])
        local a, b = sh.sh1:mounts(), sh.sh2:mounts()
        return { out = out, first = sh.sh1 == ns, third = sh.sh3 == ns, two = sh.sh2 ~= ns,
                 b2 = b:find("/a/b") and b:find("/a/b").source, c1 = a:find("/only2") or false,
                 c2 = b:find("/only2").source, label = sh.sh2:label() }
      end)
      assert.is_true(r.first); assert.is_true(r.third); assert.is_true(r.two)
      assert.are.equal("b", r.b2)        -- propagated from sh1 into sh2's peer
      assert.is_false(r.c1)
      assert.are.equal("c", r.c2)
      assert.are.equal("sh2", r.label)
      assert.matches("sh3# cat /proc/self/mountinfo\n%d+ %d+ %d+:%d+ / / ", r.out)
    end)

    it("unshare -m gives a private copy by default, --propagation=shared a peer; exit returns",
      function()
      local r = scenario(function(ns)
        local _, sh, steps = ns:shell([[
# mount -t tmpfs a /a
# mount --make-shared /a
# mkdir /a/x /a/y
# unshare -m sh
# mount -t tmpfs in1 /a/x
# exit
# unshare -m --propagation=shared
# mount -t tmpfs in2 /a/y
]])
        local t = ns:mounts()
        return { x = t:find("/a/x") or false, y = t:find("/a/y") and t:find("/a/y").source,
                 back = steps[6].status, now = sh.ns1 ~= ns }
      end)
      assert.is_false(r.x)        -- the private copy did not propagate back
      assert.are.equal("in2", r.y)
      assert.are.equal(0, r.back)
      assert.is_true(r.now)
    end)

    it("unshare -Urm: a namespace of a new user namespace, its mounts locked", function()
      local r = scenario(function(ns)
        local out, sh = ns:shell([[
sh1# mount -t tmpfs a /a
sh2# unshare -Urm sh
sh2# mount -t tmpfs b /b
sh2# mount -o remount,ro /a
sh2# umount /a
]])
        local u1, u2 = ns:userns(), sh.sh2:userns()
        local res = { differ = u1:id() ~= u2:id(), locked = sh.sh2:locked("/a"),
                      b = sh.sh2:mounts():find("/b").source, out = out }
        u1:close(); u2:close()
        return res
      end)
      assert.is_true(r.differ)
      assert.is_true(r.locked)
      assert.are.equal("b", r.b)
      -- the superblock belongs to sh1's user namespace; the mount is locked
      assert.matches("sh2# mount %-o remount,ro /a\nmount: /a: permission denied%.\n"
        .. DMESG:gsub("[%(%)%.%-]", "%%%0") .. "sh2# umount /a\numount: /a: not mounted%.\n$",
        r.out)
    end)

    it("comments, blank lines, sudo, and the source's own output lines", function()
      local r = scenario(function(ns)
        local out, _, steps = ns:shell([[
# A comment: not a command
#!/bin/sh

$ sudo mount -t tmpfs a /a   # trailing comment
$ cat /proc/self/mountinfo
99 1 0:1 / / rw - whatever the source showed
]])
        return { out = out, n = #steps, a = ns:mounts():find("/a").source }
      end)
      assert.are.equal(2, r.n)
      assert.are.equal("a", r.a)
      assert.falsy(r.out:find("whatever", 1, true))
      assert.falsy(r.out:find("A comment", 1, true))
      assert.falsy(r.out:find("#!/bin/sh", 1, true))
    end)

    it("a transcript without prompts: every line is a command", function()
      local r = scenario(function(ns)
        local out = ns:shell("mount -t tmpfs a /a\nmkdir /a/b\nls /a\n")
        return out
      end)
      assert.are.equal("mount -t tmpfs a /a\nmkdir /a/b\nls /a\nb\n", r)
    end)
  end)

  describe("what it cannot read raises, naming the line", function()
    for _, c in ipairs {
      { "# mount -t tmpfs a /a\nsh1# frobnicate /a",
        "shell: line 2: unknown command 'frobnicate'" },
      { "$ frobnicate", "shell: line 1: unknown command 'frobnicate'" },
      { "$ mount --bogus /a", "shell: line 1: mount: unrecognized option '%-%-bogus'" },
      { "$ mount -t tmpfs x", "shell: line 1: mount: x: a scenario has no /etc/fstab" },
      { "$ umount -z /a", "shell: line 1: umount: invalid option %-%- 'z'" },
      { "$ unshare -m mount /a", "shell: line 1: unshare: runs 'mount /a': only a shell" },
      { "$ unshare -m sh -c 'mount -t tmpfs a /a'", "unshare: runs 'sh %-c mount %-t tmpfs a /a'" },
      { "$ unshare -m --propagation bogus", "unsupported propagation mode: bogus" },
      { "$ unshare -p sh", "option %-p is not supported" },
      { "$ echo $HOME", "'%$' expansion other than %$%? is not supported" },
      { "$ mount -t tmpfs a /a > /dev/null", "'>' is not supported" },
      { "$ cat /proc/self/mountinfo | grep X", "only '| sed" },
      { "$ exit", "exit: terminal ns1 has no shell to leave" },
      { "61 0 8:2 / / rw\nsh1# mount -t tmpfs a /a", "shell: line 1: no prompt" },
    } do
      it(c[1], function()
        local r = raised(function(ns) ns:shell(c[1]) end)
        assert.matches(c[2], r.err)
        assert.matches("^[^:]*17%-shell_spec%.lua:%d+: shell: line", r.err)
      end)
    end

    it("bad arguments raise at the caller's line", function()
      local r = scenario(function(ns)
        local res = {}
        res[1] = select(2, pcall(mountns.shell, nil, "x"))
        res[2] = select(2, pcall(function() ns:shell(42) end))
        res[3] = select(2, pcall(function() mountns.shell(ns, "", { normalise = true }) end))
        return res
      end)
      assert.matches("bad argument #1 to 'shell' %(scenario namespace expected, got nil%)", r[1])
      assert.matches("17%-shell_spec%.lua:%d+: bad argument #2 to 'shell' %(string expected",
                     r[2])
      assert.matches("17%-shell_spec%.lua:%d+: bad argument #3 to 'shell' %(unknown option "
        .. "'normalise'%)", r[3])
    end)
  end)
end)
