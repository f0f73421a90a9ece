-- Explain (issue 13): the step recorder of kernel scenarios, `mountns run
-- --both` (every step mirrored on the model and compared), mountns.explain
-- (on a model namespace and inside a kernel scenario), `mountns show
-- --explain` on a live process, and expect's "why:" line.
local mountns = require "mountns"
local core = require "mountns.core"
local namespace = require "mountns.namespace"
local recipes = require "mountns.recipes"
local helper = require "helper"

local ROOT = helper.ROOT

-- `bin/mountns ARGS` from the tree's root: its output and "exit=N"
local function cli(args)
  return helper.sh("cd " .. ROOT .. " && " .. helper.lua_cmd() .. " bin/mountns " .. args
    .. " 2>&1; echo exit=$?")
end

describe("the step recorder", function()
  it("records the article's calls with their namespace, arguments, outcome and line", function()
    local here = debug.getinfo(1, "S").short_src
    local line0 = debug.getinfo(1, "l").currentline
    local steps, sh2_serial = mountns.scenario(function(sh1)
      sh1:label("sh1")                                        -- line0 + 2
      sh1:make_private("/")
      sh1:mkdir("/X")
      sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
      local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
      pcall(sh1.bind, sh1, "/X", "/Z")                        -- ENOENT: /Z is missing
      sh1:mkdir("/Z")
      local opts = { recursive = false }
      sh1:bind("/X", "/Z", opts)
      opts.recursive = true -- the step keeps a copy
      sh2:close()
      return namespace.steps(), sh2.serial
    end)
    local want = {
      { "label", 2, true }, { "make_private", 3, true }, { "mkdir", 4, true },
      { "mount", 5, true }, { "make_shared", 5, true }, { "unshare", 6, true },
      { "bind", 7, false, "ENOENT" }, { "mkdir", 8, true }, { "bind", 10, true },
      { "close", 12, true },
    }
    assert.are.equal(#want, #steps)
    for i, w in ipairs(want) do
      local s = steps[i]
      assert.are.equal(w[1], s.op, "step " .. i)
      assert.are.equal(here .. ":" .. (line0 + w[2]), s.where, "step " .. i)
      assert.are.equal(w[3], s.ok, "step " .. i)
      assert.are.equal(w[4], s.errno, "step " .. i)
      assert.are.equal(s.op == "close" and sh2_serial or 1, s.ns, "step " .. i)
    end
    assert.are.equal("ns1", steps.first_label)
    assert.are.same({ n = 3, "sda3", "/X", "tmpfs" }, steps[4].args)
    assert.are.equal(sh2_serial, steps[6].new)
    assert.are.equal("sh2", steps[6].label)
    assert.are.equal("unchanged", steps[6].args[1].propagation)
    assert.are.same({ n = 3, "/X", "/Z", { recursive = false } }, steps[9].args)
    assert.matches("bind /X /Z: No such file or directory %(ENOENT%)", steps[7].error)
  end)

  it("names the user's line and the mountns module a call came through (a recipe)", function()
    local line = debug.getinfo(1, "l").currentline + 2
    local steps = mountns.scenario(function(host)
      recipes.rootfs(host, { propagation = "rslave" })
      return namespace.steps()
    end)
    local pivot
    for _, s in ipairs(steps) do if s.op == "pivot_root" then pivot = s end end
    assert.is_truthy(pivot)
    assert.are.equal(debug.getinfo(1, "S").short_src .. ":" .. line, pivot.where)
    assert.matches("^recipes%.lua:%d+$", pivot.via)
    assert.are.equal(2, pivot.ns)
  end)
end)

describe("mountns show --explain", function()
  it("says, from the current state, which namespaces hold peers and slaves of a mount", function()
    local res = mountns.isolate(function()
      local base = helper.sandbox()
      assert(mountns.mkdir(base .. "/x")); assert(mountns.mount("x", base .. "/x", "tmpfs"))
      assert(mountns.make_shared(base .. "/x"))
      assert(mountns.mkdir(base .. "/y")); assert(mountns.bind(base .. "/x", base .. "/y"))
      -- a child in a copy of this namespace: /y there becomes a slave
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
      local function show(path, p)
        return helper.sh(helper.lua_cmd() .. " " .. ROOT .. "/bin/mountns show --explain "
          .. path .. " " .. (p or ""))
      end
      local out = {
        x = show(base .. "/x", pid), y = show(base .. "/y", pid), sub = show(base .. "/y/a", pid),
        child_ns = assert(core.namespace(pid)):id(), my_ns = assert(core.namespace()):id(),
        mine = mountns.mountinfo():find(base .. "/x"), theirs = mountns.mountinfo(pid),
      }
      core.close_fd(w)
      core.waitpid(pid)
      out.base = base
      return out
    end)
    local base, group = res.base, res.mine.shared
    local child_y = res.theirs:find(base .. "/y")
    assert.are.equal(group, child_y.master) -- the kernel made it so
    -- /x in the child: shared, its peers are the parent's /x and /y (another
    -- namespace), its slave is the child's own /y
    local first = res.x:match("^[^\n]*"):gsub("PID %d+", "PID N")
    assert.are.equal(string.format("%s/x in PID N (mnt:[%s]) is shared in peer group %d "
      .. "with 2 peers in 1 other namespace and 1 slave in this namespace: mounts and "
      .. "unmounts under it reach its peers and slaves, and those under its peers reach it "
      .. "(from the current state, not history).", base, res.child_ns, group), first)
    assert.matches("No history exists for a live process", res.x, 1, true)
    assert.matches("mnt:[" .. res.my_ns .. "] (PID", res.x, 1, true)
    assert.matches(base .. "/x (mount " .. res.mine.id .. ",", res.x, 1, true)
    assert.matches("slaves of peer group " .. group, res.x, 1, true)
    assert.matches("    this namespace: " .. base .. "/y (mount " .. child_y.id .. ",", res.x,
      1, true)
    -- /y in the child: a slave of that group; nothing of its own goes back
    assert.matches("is a slave of peer group " .. group .. ": mounts and unmounts under its "
      .. "master's group reach it; its own go nowhere", res.y, 1, true)
    assert.matches("its master, peer group " .. group, res.y, 1, true)
    -- a path below a mount point: the mount it lies on
    assert.matches("is not a mount point; it lies on " .. base .. "/y, which is a slave",
      res.sub, 1, true)
  end)

  it("refuses a relative path and the other show options", function()
    assert.matches("show: %-%-explain needs an absolute path, got 'x'.*exit=2",
      cli("show --explain x"))
    assert.matches("show: %-%-explain needs an absolute path, got nothing.*exit=2",
      cli("show --explain"))
    assert.matches("show: %-%-json does not apply to %-%-explain.*exit=2",
      cli("show --explain / --json"))
  end)
end)
