-- Messages (issue 23): what a user reads when something is wrong names
-- the user's own line and the call, never a line of mountns's files; the
-- numbers, counts and names in it are right; every printed line stays one
-- line; a spec run leaves no file behind.
local mountns = require "mountns"
local core = require "mountns.core"
local helper = require "helper"

local HERE = debug.getinfo(1, "S").short_src

-- The message of the error fn raises (fails the test if it does not).
local function raised(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return tostring(err)
end

-- err was raised at line `line` of this file: its position is the
-- caller's, with nothing of mountns's own files in front.
local function at_line(err, line)
  assert.are.equal(HERE .. ":" .. line .. ": ", err:sub(1, #HERE + #tostring(line) + 3), err)
end

describe("a scenario's results", function()
  it("are numbered from fn's first, in the error of one that cannot cross", function()
    local err = raised(mountns.scenario, function() return 1, function() end end)
    assert.matches("^result #2 is a function: only nil, booleans, numbers, strings and "
      .. "tables cross a process", err)
    -- the message is about the value: no traceback of mountns's own frames
    assert.is_nil(err:find("mountns/child.lua", 1, true), err)
    err = raised(mountns.scenario, "named", function() return 1, 2, { f = print } end)
    assert.matches('^result #3%["f"%] is a function', err)
    -- the other polarity: values that cross come back, nil included, in order
    local n, a, b, c = (function(...) return select("#", ...), ... end)(
      mountns.scenario(function(ns)
        ns:mkdir("/X"); ns:mount("m", "/X", "tmpfs")
        return ns:find("/X").fstype, nil, 3
      end))
    assert.are.same({ 3, "tmpfs", nil, 3 }, { n, a, b, c })
    assert.are.equal(0, select("#", mountns.scenario(function() end)))
  end)

  it("are numbered the same under mountns run", function()
    local dir = helper.tempdir()
    local path = helper.write(dir, "results.lua", [[
local mountns = require "mountns"
mountns.scenario("two results", function(ns) return 1, function() end end)
]])
    local out = helper.cli("run " .. path)
    os.remove(path); os.remove(dir)
    assert.matches("ERROR two results %(%d+ ms%)\n    result #2 is a function", out)
    assert.is_nil(out:find("result #3", 1, true), out)
    assert.matches("exit=1$", out)
  end)
end)

describe("show --explain's counts", function()
  it("count each peer and slave in the namespace that holds it", function()
    local explain = require "mountns.explain"
    local res = mountns.isolate(function()
      local base = helper.sandbox()
      for _, d in ipairs { "x", "y", "s" } do assert(mountns.mkdir(base .. "/" .. d)) end
      assert(mountns.mount("x", base .. "/x", "tmpfs"))
      assert(mountns.make_shared(base .. "/x"))
      assert(mountns.bind(base .. "/x", base .. "/y")) -- a peer here
      assert(mountns.bind(base .. "/x", base .. "/s"))
      assert(mountns.make_slave(base .. "/s")) -- a slave here
      -- a child in a copy of this namespace: its /x a peer, its /s a
      -- slave, its /y made a slave
      local r, w = assert(core.pipe())
      local r2, w2 = assert(core.pipe())
      local pid = assert(core.fork())
      if pid == 0 then
        core.close_fd(w); core.close_fd(r2)
        local ok = core.unshare { mount = true, propagation = "unchanged" }
          and core.make_slave(base .. "/y")
        core.write_fd(w2, ok and "k" or "e")
        core.read_all(r)
        core._exit(0)
      end
      core.close_fd(r); core.close_fd(w2)
      assert(core.read_exact(r2, 1) == "k")
      core.close_fd(r2)
      local out = { x = explain.live(base .. "/x"), s = explain.live(base .. "/s"),
                    mine = mountns.mountinfo(), theirs = mountns.mountinfo(pid), base = base }
      core.close_fd(w)
      core.waitpid(pid)
      return out
    end)
    local base, mine, theirs = res.base, res.mine, res.theirs
    local group = mine:find(base .. "/x").shared
    -- what the kernel made: one peer and one slave here, one peer and two
    -- slaves in the child's namespace
    assert.are.equal(group, mine:find(base .. "/y").shared)
    assert.are.equal(group, mine:find(base .. "/s").master)
    assert.are.equal(group, theirs:find(base .. "/x").shared)
    assert.are.equal(group, theirs:find(base .. "/s").master)
    assert.are.equal(group, theirs:find(base .. "/y").master)
    assert.matches(" is shared in peer group " .. group .. " with 2 peers %(1 in this "
      .. "namespace, 1 in 1 other namespace%) and 3 slaves %(1 in this namespace, 2 in 1 "
      .. "other namespace%): ", res.x:match("^[^\n]*"))
    -- counted where they are: a slave here is not "in another namespace"
    assert.is_nil(res.x:find("3 slaves in 1 other namespace", 1, true), res.x)
    assert.is_nil(res.x:find("2 peers in 1 other namespace", 1, true), res.x)
    -- /s here: a slave, no peer group of its own: no count of peers
    assert.matches("is a slave of peer group " .. group .. ": ", res.s)
  end)
end)

describe("require inside a scenario", function()
  it("says to require the module before the scenario starts, at the require's line", function()
    local line = debug.getinfo(1, "l").currentline + 3
    local err = raised(mountns.scenario, function()
      package.loaded["mountns.recipes"] = nil -- (this child's copy)
      return require("mountns.recipes") ~= nil
    end)
    at_line(err, line)
    assert.matches("module 'mountns.recipes' cannot be loaded inside a scenario %(its / is a "
      .. "fresh tmpfs, without the module files%): require it before the scenario starts", err)
    -- not the stock list of the paths tried
    assert.is_nil(err:find("no file", 1, true), err)
    -- the other polarity: a module loaded before the scenario is there
    -- inside, and the module exists (outside, require finds it)
    assert.are.equal("table", mountns.scenario(function()
      return type(require "mountns.table")
    end))
    assert.are.equal("table", type(require "mountns.recipes"))
    -- the kernel's fact behind it: the scenario's / has no module files
    assert.is_false(mountns.scenario(function(ns) return ns:exists("/usr") end))
  end)
end)

-- Every name `require "mountns"` exports: a function with a call that
-- misuses it, or a table. A name exported later must be added here.
local EXPORTS = {
  -- the core's calls (doc/api.md's "The calls" and "The modern kernel interface")
  unshare = { 1, function() local r = mountns.unshare(5); return r end },
  mount = { 2, function() local r = mountns.mount("x", {}, "tmpfs"); return r end },
  umount = { 1, function() local r = mountns.umount(true); return r end },
  bind = { 2, function() local r = mountns.bind("/a", nil); return r end },
  move = { 1, function() local r = mountns.move({}, "/b"); return r end },
  remount = { 2, function() local r = mountns.remount("/", "nosuchflag"); return r end },
  make_shared = { 2, function() local r = mountns.make_shared("/", 5); return r end },
  make_private = { 2, function() local r = mountns.make_private("/", { x = 1 }); return r end },
  make_slave = { 1, function() local r = mountns.make_slave(nil); return r end },
  make_unbindable = { 1, function() local r = mountns.make_unbindable(print); return r end },
  pivot_root = { 2, function() local r = mountns.pivot_root("/", nil); return r end },
  chdir = { 1, function() local r = mountns.chdir({}); return r end },
  chroot = { 1, function() local r = mountns.chroot(false); return r end },
  mkdir = { 2, function() local r = mountns.mkdir("/d", { mode = "x" }); return r end },
  symlink = { 2, function() local r = mountns.symlink("/a", {}); return r end },
  readdir = { 1, function() local r = mountns.readdir({}); return r end },
  exists = { 1, function() local r = mountns.exists(nil); return r end },
  namespace = { 2, function() local r = mountns.namespace(nil, "nosuchkind"); return r end },
  escape = { 1, function() local r = mountns.escape({}); return r end },
  open_tree = { 1, function() local r = mountns.open_tree(true); return r end },
  move_mount = { 2, function() local r = mountns.move_mount("/a", nil); return r end },
  fsmount = { 1, function() local r = mountns.fsmount({}); return r end },
  mount_setattr = { 1, function() local r = mountns.mount_setattr(5, {}); return r end },
  listmount = { 1, function() local r = mountns.listmount(5); return r end },
  statmount = { 1, function() local r = mountns.statmount(true); return r end },
  features = "no arguments",
  MS = "table",
  errno = "table",
  -- the Lua layer
  parse_mountinfo = { 1, function() local r = mountns.parse_mountinfo({}); return r end },
  mountinfo = { 1, function() local r = mountns.mountinfo("x"); return r end },
  mounts = { 1, function() local r = mountns.mounts("/tmp"); return r end },
  isolate = { 1, function() local r = mountns.isolate(5); return r end },
  isolate_with = { 2, function() local r = mountns.isolate_with({}, 5); return r end },
  scenario = { 1, function() local r = mountns.scenario(42, function() end); return r end },
  peer_groups = { 1, function() local r = mountns.peer_groups(5); return r end },
  diff = { 1, function() local r = mountns.diff(nil, {}); return r end },
  normalize = { 1, function() local r = mountns.normalize(5); return r end },
  format = { 1, function() local r = mountns.format("x"); return r end },
  golden = { 2, function() local r = mountns.golden("x", 5); return r end },
  dot = { 1, function() local r = mountns.dot(5); return r end },
  watch = { 1, function() local r = mountns.watch("x"); return r end },
  explain = { 1, function() local r = mountns.explain({}, "/X"); return r end },
  shell = { 1, function() local r = mountns.shell(5); return r end },
  skip = { 1, function() local r = mountns.skip(42); return r end },
  table = "table",
  _VERSION = "string",
}

describe("every function require 'mountns' exports", function()
  it("is listed here: no name is forgotten", function()
    local listed = {}
    for k in pairs(EXPORTS) do
      listed[#listed + 1] = k
      assert.is_not_nil(mountns[k], k)
    end
    table.sort(listed)
    -- pairs(mountns) lists every field on 5.2+ (__pairs); 5.1 and LuaJIT
    -- see the fields loaded now, each of which must be listed
    local seen = {}
    for k in pairs(mountns) do seen[#seen + 1] = k end
    table.sort(seen)
    if _VERSION ~= "Lua 5.1" then
      assert.are.same(listed, seen)
    else
      for _, k in ipairs(seen) do assert.is_not_nil(EXPORTS[k], k) end
    end
  end)

  it("checks its arguments and raises at the caller's line, naming itself", function()
    -- in an isolated child, in a sandbox: a check that failed would act
    local res = mountns.isolate(function()
      local base = helper.sandbox()
      assert(mountns.chdir(base))
      local out = {}
      for name, v in pairs(EXPORTS) do
        if type(v) == "table" then
          local call = v[2]
          -- the closure's own line, where the misuse is
          local line = debug.getinfo(call, "S").linedefined
          local ok, err = pcall(call)
          out[name] = { ok = ok, err = tostring(err), line = line, argn = v[1] }
        elseif name == "features" then
          out[name] = { kind = type(mountns.features()) }
        else
          out[name] = { kind = type(mountns[name]) }
        end
      end
      out[".left"] = mountns.readdir(base)
      return out
    end)
    for name, r in pairs(res) do
      if name == ".left" then
        assert.are.same({}, r) -- no call made anything
      elseif r.kind then
        assert.are.equal(EXPORTS[name] == "string" and "string" or "table", r.kind, name)
      else
        assert.is_false(r.ok, name .. " accepted a bad argument")
        assert.are.equal(HERE .. ":" .. r.line .. ": ", r.err:sub(1, #HERE + #tostring(r.line)
          + 3), name .. ": " .. r.err)
        assert.truthy(r.err:find("bad argument #" .. r.argn .. " to '", 1, true),
          name .. ": " .. r.err)
        assert.is_nil(r.err:find("lua/mountns/", 1, true), name .. ": " .. r.err)
        assert.is_nil(r.err:find("attempt to", 1, true), name .. ": " .. r.err)
      end
    end
  end)

  it("names the Lua layer's function and the argument in its own words", function()
    local cases = {
      { "peer_groups", "scenario namespace expected, got number",
        function() local r = mountns.peer_groups(5); return r end },
      { "diff", "mount table expected, got nil",
        function() local r = mountns.diff(nil, {}); return r end },
      { "diff", "#2 to 'diff' (mount table expected, got a namespace",
        function() local r = mountns.diff({}, { mounts = function() end }); return r end },
      { "mounts", "mount namespace handle, scenario namespace or nil expected, got string",
        function() local r = mountns.mounts("/tmp"); return r end },
      { "watch", "scenario namespace, PID or nil expected, got string",
        function() local r = mountns.watch("x"); return r end },
      { "watch", "PID expected, got 1.5",
        function() local r = mountns.watch(1.5); return r end },
      { "parse_mountinfo", "string expected, got number",
        function() local r = mountns.parse_mountinfo(5); return r end },
      { "mountinfo", "PID expected, got -1",
        function() local r = mountns.mountinfo(-1); return r end },
      { "format", "got a table whose entry 1 is a number",
        function() local r = mountns.format({ 5 }); return r end },
      { "dot", "got a table whose entry 2 is a number",
        function() local r = mountns.dot({ {}, 5 }); return r end },
      -- mountns.table and a mount table's methods
      { "new", "table of records expected, got number",
        function() local r = mountns.table.new(5); return r end },
      { "peers", "record or mount point expected, got number",
        function() local r = mountns.mountinfo():peers(5); return r end },
      { "children", "record or mount point expected, got boolean",
        function() local r = mountns.mountinfo():children(true); return r end },
    }
    for _, c in ipairs(cases) do
      local err = raised(c[3])
      at_line(err, debug.getinfo(c[3], "S").linedefined)
      assert.truthy(err:find("to '" .. c[1] .. "'", 1, true), err)
      assert.truthy(err:find(c[2], 1, true), err)
    end
    -- the other polarity: good arguments pass
    local t = mountns.mountinfo()
    assert.are.same({ added = {}, removed = {}, changed = {} }, mountns.diff(t, t))
    assert.are.equal(t:find("/").id, mountns.parse_mountinfo(helper.host_mountinfo()):find("/").id)
    local h = assert(core.namespace())
    assert.are.equal(mountns.mounts():find("/").id, mountns.mounts(h):find("/").id)
    h:close()
    -- a closed handle: the caller's line too
    local line = debug.getinfo(1, "l").currentline + 1
    local err = raised(function() local r = mountns.mounts(h); return r end)
    at_line(err, line)
    assert.truthy(err:find("attempt to use a closed namespace", 1, true), err)
    assert.is_table(mountns.peer_groups())
    local targets = mountns.scenario(function(ns)
      ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs"); ns:make_shared("/X")
      ns:mkdir("/Y"); ns:bind("/X", "/Y")
      local out = {}
      for _, members in pairs(mountns.peer_groups(ns)) do
        for _, m in ipairs(members) do out[#out + 1] = m.target end
      end
      return out
    end)
    assert.are.same({ "/X", "/Y" }, targets)
  end)
end)

describe("a scenario's name", function()
  it("is a string or nothing", function()
    local line = debug.getinfo(1, "l").currentline + 1
    local err = raised(function() local r = mountns.scenario(42, function() end); return r end)
    at_line(err, line)
    assert.matches("bad argument #1 to 'scenario' %(string expected, got number%)$", err)
    err = raised(mountns.scenario, mountns.mountinfo(), function() end)
    assert.matches("^bad argument #1 to 'scenario' %(string expected, got table%)$", err)
    local model = require "mountns.model"
    err = raised(model.scenario, 42, function() end)
    assert.matches("bad argument #1 to 'scenario' %(string expected, got number%)$", err)
    -- the other polarity
    assert.are.equal("tmpfs", mountns.scenario("named", function(ns)
      ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs")
      return ns:find("/X").fstype
    end))
    assert.are.equal(2, mountns.scenario(nil, function() return 2 end))
    assert.are.equal(3, model.scenario("named", function() return 3 end))
  end)
end)

describe("a path", function()
  it("is a string: a number is refused, everywhere a path is taken", function()
    local res = mountns.isolate(function()
      local base = helper.sandbox()
      assert(mountns.chdir(base))
      local out = { mounts = #mountns.mountinfo() }
      for name, call in pairs {
        mkdir = function() local r = mountns.mkdir(0 / 0); return r end,
        mkdir5 = function() local r = mountns.mkdir(5); return r end,
        mount = function() local r = mountns.mount("x", 5, "tmpfs"); return r end,
        source = function() local r = mountns.mount(5, base, "tmpfs"); return r end,
        bind = function() local r = mountns.bind(base, 5); return r end,
        symlink = function() local r = mountns.symlink("/", 7); return r end,
        exists = function() local r = mountns.exists(5); return r end,
        chdir = function() local r = mountns.chdir(5); return r end,
        umount = function() local r = mountns.umount(5); return r end,
        make_shared = function() local r = mountns.make_shared(5); return r end,
        open_tree = function() local r = mountns.open_tree(5); return r end,
        find = function() local r = mountns.mountinfo():find(5); return r end,
        mounts_root = function() local r = mountns.mounts { root = 5 }; return r end,
      } do
        local ok, err = pcall(call)
        out[name] = ok and "accepted" or tostring(err)
      end
      -- what the kernel has: nothing made, nothing mounted
      out.left = mountns.readdir(base)
      out.mounted = #mountns.mountinfo() - out.mounts
      -- the other polarity: a string path works
      out.made = mountns.mkdir(base .. "/d") and mountns.exists(base .. "/d")
      return out
    end)
    assert.are.same({}, res.left)
    assert.are.equal(0, res.mounted)
    assert.is_true(res.made)
    for name, call in pairs { mkdir = "mkdir", mkdir5 = "mkdir", exists = "exists",
                              chdir = "chdir", umount = "umount", source = "mount",
                              make_shared = "make_shared" } do
      assert.matches("bad argument #1 to '" .. call .. "' %(string expected, got number%)",
        res[name], nil, name)
    end
    for _, name in ipairs { "mount", "bind", "symlink" } do
      assert.matches("bad argument #2 to '" .. name .. "' %(string expected, got number%)",
        res[name], nil, name)
    end
    assert.matches("bad argument #1 to 'open_tree' %(path or mount fd expected, got number%)",
      res.open_tree)
    assert.matches("bad argument #1 to 'find' %(path expected, got number%)", res.find)
    assert.matches("bad argument #1 to 'mounts' %(path expected, got number%)", res.mounts_root)
    -- a scenario namespace and a model namespace refuse it the same way
    local model = require "mountns.model"
    for _, run in ipairs { mountns.scenario, model.scenario } do
      local r = run(function(ns)
        local ok, err = pcall(ns.mkdir, ns, 0 / 0)
        local ok2, err2 = pcall(ns.mount, ns, "x", 5, "tmpfs")
        return { ok = ok or ok2, err = tostring(err), err2 = tostring(err2),
                 ls = ns:ls("/"), made = ns:mkdir("/d") and ns:exists("/d") }
      end)
      assert.is_false(r.ok)
      assert.matches("bad argument #1 to 'ns:mkdir' %(string expected, got number%)", r.err)
      assert.matches("bad argument #2 to 'ns:mount' %(string expected, got number%)", r.err2)
      assert.is_nil(r.err:find("nan", 1, true))
      assert.are.same({}, r.ls)
      assert.is_true(r.made)
    end
  end)
end)

describe("flags", function()
  it("refuse an empty flag name in a comma list, on the kernel and on the model", function()
    local model = require "mountns.model"
    for _, run in ipairs { mountns.scenario, model.scenario } do
      local r = run(function(ns)
        ns:mkdir("/X")
        local out = {}
        for _, flags in ipairs { "ro,,ro", "ro,", ",ro", "," } do
          local ok, err = pcall(ns.mount, ns, "x", "/X", "tmpfs", flags)
          out[#out + 1] = ok and "accepted" or tostring(err)
        end
        local ok, err = pcall(ns.umount, ns, "/X", "detach,")
        out[#out + 1] = ok and "accepted" or tostring(err)
        out.none = ns:find("/X") -- nothing was mounted
        -- the other polarity: a list of names, and "" (no flag)
        ns:mount("x", "/X", "tmpfs", "ro,nosuid")
        out.ro = ns:find("/X").options
        ns:mount("y", "/X", "tmpfs", "")
        out.rw = ns:find("/X").options
        return out
      end)
      assert.is_nil(r.none)
      for i, flags in ipairs { "ro,,ro", "ro,", ",ro", "," } do
        assert.matches("bad argument #4 to 'ns:mount' %(empty flag name in '" .. flags .. "'%)",
          r[i])
      end
      assert.matches("bad argument #2 to 'ns:umount' %(empty flag name in 'detach,'%)", r[5])
      assert.matches("^ro,nosuid", r.ro)
      assert.matches("^rw", r.rw)
    end
    -- the core's parser, for every kind of flag argument
    assert.matches("empty flag name in 'ro,'", raised(core._parse_flags, "mount", { "ro," }))
    assert.are.equal(core._parse_flags("mount", "ro"), core._parse_flags("mount", "ro,ro"))
    assert.are.equal(0, core._parse_flags("mount", ""))
  end)
end)

describe("printed output", function()
  local SEPARATORS = { "\226\128\168", "\226\128\169", "\194\133" } -- U+2028, U+2029, NEL

  it("escapes the line and paragraph separators and NEL (mountns.escape)", function()
    assert.are.equal("a\\342\\200\\250b\\342\\200\\251c\\302\\205d",
      mountns.escape("a\226\128\168b\226\128\169c\194\133d"))
    -- the other polarity: other characters beyond ASCII are kept
    assert.are.equal("é\226\128\167\226\128\170", mountns.escape("é\226\128\167\226\128\170"))
  end)

  it("keeps one line per item in the plain report and TAP of mountns run", function()
    local dir = helper.tempdir()
    local path = helper.write(dir, "seps.lua", [[
local mountns = require "mountns"
local S = "\226\128\168|\226\128\169|\194\133"
mountns.scenario("name" .. S, function(ns)
  ns:mkdir("/X" .. S)
  print("print" .. S .. ns:ls("/")[1])
  error("error" .. S)
end)
]])
    local plain = helper.cli("run " .. path)
    local tap = helper.cli("run --tap " .. path)
    os.remove(path); os.remove(dir)
    for _, out in ipairs { plain, tap } do
      for _, sep in ipairs(SEPARATORS) do assert.is_nil(out:find(sep, 1, true), out) end
    end
    local E = "\\342\\200\\250|\\342\\200\\251|\\302\\205"
    -- the kernel made the directory whose name the scenario printed
    assert.truthy(plain:find("print" .. E .. "X" .. E, 1, true), plain)
    assert.truthy(plain:find("ERROR name" .. E .. " (", 1, true), plain)
    assert.truthy(plain:find("error" .. E, 1, true), plain)
    assert.truthy(tap:find("\nnot ok 1 - name" .. E .. "\n", 1, true), tap)
    assert.matches("\n# print" .. E:gsub("%p", "%%%0") .. "X", tap)
  end)
end)

describe("make test", function()
  helper.root_it("busted in an isolated child, with a /tmp of its own")(
    "leaves nothing in /tmp (spec 24's scripts, spec 06's roots)", function()
    local busted = helper.sh("command -v busted")
    local function run(args)
      return helper.sh("cd " .. helper.ROOT .. " && env -u MOUNTNS_SPEC_TIMES "
        .. helper.LUA .. " " .. busted .. " --ignore-lua --cpath='"
        .. helper.lua_cmd():match("LUA_CPATH='([^;]*)") .. "' " .. args .. " 2>&1")
    end
    -- the tree's absolute path (helper.ROOT may be "."), before the sandbox
    local tree = helper.sh("cd " .. helper.ROOT .. " && pwd -P")
    local res = mountns.isolate(function()
      -- a /tmp of its own (other runs share the host's)
      helper.sandbox()
      -- everything under /tmp, as find(1) lists it, but the tree itself
      -- (a clone under /tmp, as CI's, is put back there by sandbox: what
      -- make test writes in it is no leftover)
      local function listing()
        return helper.sh("find /tmp -mindepth 1 -path '" .. tree
          .. "' -prune -o -print | sort")
      end
      local before = listing()
      local out24 = run("spec/model/24-explain_spec.lua --filter=outcomes.differ "
        .. "--filter=could.not.mirror --filter=strict:.a.step")
      local after24 = listing()
      local out06 = run("spec/output/06-format_spec.lua")
      return { before = before, after24 = after24, after = listing(),
               out24 = out24, out06 = out06 }
    end)
    -- spec 24's scripts run on the model too: pending where it has no rules
    assert.matches(helper.MODEL_PENDING and "0 successes / 0 failures / 0 errors / 3 pending"
      or "3 successes / 0 failures / 0 errors / 0 pending", res.out24)
    assert.matches("%d+ successes / 0 failures / 0 errors", res.out06)
    assert.are.equal(res.before, res.after24)
    assert.are.equal(res.before, res.after)
  end)
end)
