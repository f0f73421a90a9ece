-- The rules of each kernel the model follows (the `linux` option): one case
-- per rule that changed between the kernels of the matrix (doc/model.md,
-- "Which kernel's rules": the kernel, the function, the outcome). Each case
-- runs the same steps on the model under every version and asserts which
-- versions agree, as those kernels' fs/namespace.c and fs/pnode.c say
-- (Debian's source packages: 5.10.262, 6.1.176, 6.12.95, 6.18.15, 7.1.8,
-- 7.2.8; linux-source-7.2 (7.2.13) and -7.3 (7.3~rc7), whose source
-- packages the mirror no longer serves; 7.3 has 7.2.13's rules), and
-- runs it on the running kernel too, whose outcome must be the model's
-- under that kernel's rules (6.18 on this host; the other kernels in their
-- guests, `make matrix`).
local helper = require "helper"
local mountns = require "mountns"
local model = require "mountns.model"
local format = require "mountns.format"

local unpack = table.unpack or unpack -- luacheck: ignore

local KERNELS = { "5.10", "6.1", "6.12", "6.18", "7.1", "7.2", "7.3" }

-- fn(ns, nss, try) on one side: nss collects the namespaces to compare (ns
-- first), try(f, ...) runs a step that may fail and records "ok" or its
-- errno name. Returns the golden text of the open namespaces and the
-- outcomes, as one text.
local function side(scenario, fn)
  return scenario(function(ns)
    local nss, out = { ns }, {}
    local function try(f, ...)
      local ok, e = pcall(f, ...)
      out[#out + 1] = ok and "ok" or (model.errno_of(tostring(e)) or tostring(e))
    end
    fn(ns, nss, try)
    local open = {}
    for _, n in ipairs(nss) do if not n.closed then open[#open + 1] = n end end
    return format.golden_text(unpack(open)) .. "outcomes: " .. table.concat(out, " ")
  end)
end

-- A model scenario following linux (the running kernel's when nil), as a
-- kernel scenario is for this process: not root, its / is locked.
local function on_model(linux)
  return function(fn)
    return model.scenario(fn, { linux = linux, locked_root = not helper.root })
  end
end

-- The versions of KERNELS grouped by the model's outcome of fn, in the
-- order met: "{5.10,6.1} {6.12,6.18,7.1,7.2,7.3}".
local function classes(fn)
  local groups, index = {}, {}
  for _, v in ipairs(KERNELS) do
    local text = side(on_model(v), fn)
    if not index[text] then
      groups[#groups + 1] = {}
      index[text] = #groups
    end
    table.insert(groups[index[text]], v)
  end
  local parts = {}
  for i, g in ipairs(groups) do parts[i] = "{" .. table.concat(g, ",") .. "}" end
  return table.concat(parts, " ")
end

-- The kernel's outcome of fn, which must be the model's under the running
-- kernel's rules (pending on a kernel older than the model's oldest rules).
local function kernel_agrees(fn)
  local k = side(mountns.scenario, fn)
  local m = side(on_model(nil), fn)
  local d = format.diff_text(k, m, "kernel", "model " .. model.default_linux())
  assert(d == nil, "the kernel and the model differ:\n" .. tostring(d))
end

-- /X a shared tmpfs with directories q and r; /Y, /Z, /W empty directories
local function base(sh1)
  for _, d in ipairs { "/X", "/Y", "/Z", "/W" } do sh1:mkdir(d) end
  sh1:mount("a", "/X", "tmpfs"); sh1:make_shared("/X")
  sh1:mkdir("/X/q"); sh1:mkdir("/X/r")
end

-- Each rule: its steps and the versions that agree.
local RULES = {
  {
    -- clone_mnt: MNT_UNBINDABLE was in mnt_flags, which a copy takes; 6.17
    -- moved it to mnt_t_flags (T_UNBINDABLE), which it does not (to 7.1.8
    -- and 7.2.8); 7.2.13 and 7.3 copy T_UNBINDABLE again
    name = "a namespace copy of an unbindable mount: unbindable but on 6.17-7.1",
    classes = "{5.10,6.1,6.12,7.2,7.3} {6.18,7.1}",
    steps = function(ns, nss)
      ns:mkdir("/u"); ns:mount("u", "/u", "tmpfs"); ns:make_unbindable("/u")
      nss[2] = ns:unshare { propagation = "unchanged" }
    end,
  },
  {
    -- show_mountinfo walks the namespace's list (an rbtree by ID from
    -- 6.8); attach_recursive_mnt commits the copies of one propagation
    -- from the head of its hlist: last made first
    name = "the copies of one propagation are listed last made first until 6.7",
    classes = "{5.10,6.1} {6.12,6.18,7.1,7.2,7.3}",
    steps = function(sh1)
      base(sh1)
      sh1:bind("/X", "/Y"); sh1:make_slave("/Y")
      sh1:bind("/X", "/Z"); sh1:make_slave("/Z")
      sh1:mount("b", "/X/q", "tmpfs")
    end,
  },
  {
    -- umount_tree gathered the tree with list_move (pre-order) until 6.8,
    -- so propagate_umount met the copies from the top, not from the
    -- deepest mount
    name = "umount propagation walks the unmounted tree from its top until 6.7",
    classes = "{5.10,6.1} {6.12,6.18,7.1,7.2,7.3}",
    steps = function(ns1, nss)
      local ns2 = ns1:unshare { propagation = "shared" }
      nss[1] = ns2
      ns2:mkdir("/a/x/y")
      ns2:bind("/a", "/a/x/y"); ns2:bind("/a", "/a/x/y")
      ns2:bind("/a/x", "/a"); ns2:bind("/a", "/a")
      ns2:umount("/a")
    end,
  },
  {
    -- propagate_umount before its 6.16 rewrite: a locked candidate is
    -- restored in place (__propagate_umount); the rewrite takes it with
    -- its parent
    name = "umount propagation keeps a locked copy whose parent goes until 6.15",
    classes = "{5.10,6.1,6.12} {6.18,7.1,7.2,7.3}",
    steps = function(ns1, nss)
      ns1:mkdir("/a/x")
      ns1:bind("/a", "/a/x")
      local ns2 = ns1:unshare { propagation = "shared" }
      ns2:mount("t1", "/a/x", "tmpfs")
      ns2:bind("/a", "/a", { recursive = true })
      local ns3 = ns2:unshare { propagation = "unchanged", user = true }
      nss[2], nss[3] = ns2, ns3
      ns2:umount("/a", "detach")
    end,
  },
  {
    -- do_make_slave until 6.15: the master is the first peer with the
    -- same root (else the next), the slaves appended to its list; 6.16's
    -- change_mnt_propagation: the next peer, the slaves in front. Seen in
    -- the order of the copies; 6.1's list order (above) turns it back,
    -- so 5.10 and 6.1 list what 6.18 lists
    name = "make-slave's master: the first peer with the same root until 6.15",
    classes = "{5.10,6.1,6.18,7.1,7.2,7.3} {6.12}",
    steps = function(sh1, nss)
      base(sh1)
      sh1:mkdir("/X/sub"); sh1:bind("/X/sub", "/Y")
      nss[2] = sh1:unshare { propagation = "slave" }
      sh1:mount("q", "/X/sub", "tmpfs")
    end,
  },
  {
    -- umount_tree: one change_mnt_propagation a mount until 6.17;
    -- bulk_make_private (6.18) hands every slave on at once, to the
    -- first mount that stays (trace_transfers), in the order of the set
    name = "an umount hands the slaves of its mounts over at once from 6.18",
    classes = "{5.10,6.1} {6.12} {6.18,7.1,7.2,7.3}",
    steps = function(ns1, nss)
      ns1:mkdir("/a"); ns1:mkdir("/b")
      ns1:make_shared("/")
      ns1:bind("/b", "/a"); ns1:bind("/a", "/a")
      local ns2 = ns1:unshare { propagation = "slave" }
      nss[2] = ns2
      ns2:mkdir("/a/x"); ns2:bind("/a", "/a/x")
      ns1:umount("/b")
      ns1:mount("t2", "/a", "tmpfs")
    end,
  },
  {
    -- attach_recursive_mnt from 7.1 ("move_mount: transfer MNT_LOCKED"):
    -- a copy put under a locked mount takes its lock; 7.1 unlocks the
    -- mount on top, so the namespace that got the copy may unmount it;
    -- 7.2.13 and 7.3 unlock it only under the mount the caller placed
    name = "a copy tucked under a locked mount unlocks the top on 7.1 alone",
    classes = "{5.10,6.1,6.12,6.18,7.2,7.3} {7.1}",
    steps = function(ns1, nss, try)
      ns1:mkdir("/a"); ns1:mkdir("/b")
      ns1:mount("a", "/a", "tmpfs"); ns1:make_shared("/a")
      ns1:mkdir("/a/x"); ns1:mount("t", "/a/x", "tmpfs")
      local ns2 = ns1:unshare { propagation = "unchanged", user = true }
      nss[2] = ns2
      ns1:bind("/a", "/b")
      ns1:mount("u", "/b/x", "tmpfs")   -- a copy goes under ns2's locked /a/x
      try(function() if ns2:locked("/a/x") then error("locked (EPERM)") end end)
      try(ns2.umount, ns2, "/a/x")
    end,
  },
  {
    -- do_set_group: `to` must be private; 7.2.13 and 7.3 refuse an
    -- unbindable one too (before, it joined the group and was bindable)
    name = "MOVE_MOUNT_SET_GROUP refuses an unbindable mount from 7.2",
    classes = "{5.10,6.1,6.12,6.18,7.1} {7.2,7.3}",
    steps = function(ns, _, try)
      ns:mkdir("/X"); ns:mkdir("/Y")
      ns:mount("x", "/X", "tmpfs"); ns:bind("/X", "/Y")
      ns:make_shared("/X"); ns:make_unbindable("/Y")
      try(ns.move_mount, ns, "/X", "/Y", { set_group = true })
    end,
  },
}

-- Rules the same on every kernel read, which the model had wrong.
local EVERY = {
  {
    -- do_move_mount: a file onto a directory or the other way is EINVAL
    -- (5.10 to 7.2); a bind's graft_tree says ENOTDIR
    name = "move between a file and a directory is EINVAL, a bind ENOTDIR",
    steps = function(ns, _, try)
      ns:mkdir("/d"); ns:mkdir("/e"); ns:write("/f", "x"); ns:write("/g", "y")
      ns:mount("t", "/d", "tmpfs")
      try(ns.bind, ns, "/f", "/g")
      try(ns.move, ns, "/g", "/e")
      try(ns.move, ns, "/d", "/f")
      try(ns.bind, ns, "/d", "/f")
    end,
    outcomes = "ok EINVAL EINVAL ENOTDIR",
  },
}

describe("the rules of each kernel the model follows #model", function()
  for _, rule in ipairs(EVERY) do
    it(rule.name .. ": on the model, every version", function()
      for _, v in ipairs(KERNELS) do
        local text = side(on_model(v), rule.steps)
        assert.equal(rule.outcomes, text:match("outcomes: (.*)$"), v)
      end
    end)
    helper.model_it(rule.name .. ": on the running kernel", function()
      assert.equal(rule.outcomes, side(mountns.scenario, rule.steps):match("outcomes: (.*)$"))
      kernel_agrees(rule.steps)
    end)
  end

  for _, rule in ipairs(RULES) do
    it(rule.name .. ": on the model, by version", function()
      assert.equal(rule.classes, classes(rule.steps))
    end)
    helper.model_it(rule.name .. ": on the running kernel", function()
      kernel_agrees(rule.steps)
    end)
  end

  it("the tucked copy's lock, step by step: 6.18 refuses, 7.1 unmounts, 7.2 refuses", function()
    local function probe(ns1)
      ns1:mkdir("/a"); ns1:mkdir("/b")
      ns1:mount("a", "/a", "tmpfs"); ns1:make_shared("/a")
      ns1:mkdir("/a/x"); ns1:mount("t", "/a/x", "tmpfs")
      local ns2 = ns1:unshare { propagation = "unchanged", user = true }
      ns1:bind("/a", "/b")
      ns1:mount("u", "/b/x", "tmpfs")
      local before = ns2:locked("/a/x")
      local ok, e = pcall(ns2.umount, ns2, "/a/x")
      if not ok then return before, model.errno_of(tostring(e)) end
      return before, "ok", ns2:find("/a/x").source, ns2:locked("/a/x")
    end
    assert.same({ true, "EINVAL" }, { on_model("6.18")(probe) })
    assert.same({ false, "ok", "u", true }, { on_model("7.1")(probe) })
    assert.same({ true, "EINVAL" }, { on_model("7.2")(probe) })
    assert.same({ true, "EINVAL" }, { on_model("7.3")(probe) })
  end)

  it("5.10 is the oldest rule set, 7.3 the newest; 7.3's rules are 7.2's", function()
    assert.equal("5.10", model.OLDEST_LINUX)
    assert.equal("7.3", model.NEWEST_LINUX)
    assert.equal("5.10", model.linux_version("5.10.0-46-amd64"))
    local r73, r72 = model.new { linux = "7.3" }.rules, model.new { linux = "7.2" }.rules
    for k, v in pairs(r72) do
      if k ~= "linux" then assert.equal(v, r73[k], k) end
    end
    assert.equal("7.3", r73.linux)
    -- 5.10's rules are 6.1's (the same pnode.c)
    -- 5.10 follows 6.1's rules but for the call it lacks (mount_setattr:
    -- 5.12; Debian's 5.10 has MOVE_MOUNT_SET_GROUP, a 5.15 call its stable
    -- updates brought), `mand`'s EPERM and ramfs's `source` (spec 50)
    local r510, r61 = model.new { linux = "5.10" }.rules, model.new { linux = "6.1" }.rules
    local differ = { mount_setattr = { false, true }, mand_eperm = { true, false },
                     ramfs_swallows = { true, false } }
    for k, v in pairs(r61) do
      if k ~= "linux" and not differ[k] then assert.equal(v, r510[k], k) end
    end
    for k, d in pairs(differ) do assert.same(d, { r510[k], r61[k] }, k) end
    assert.error_matches(function() model.new { linux = "5.9" } end,
      "option 'linux': Linux 5.9 is older than the oldest kernel the model has rules for "
      .. "(5.10)", 1, true)
  end)

  it("mountns run --model --linux V for every V of the matrix", function()
    local file = helper.ROOT .. "/examples/copy-unbindable.lua"
    for _, v in ipairs(KERNELS) do
      local out = helper.cli("run --model --linux " .. v .. " " .. file)
      assert(out:find("^ok%s+5g: the copy of an unbindable mount.*\n1 passed, 0 failed\nexit=0$"),
        "--linux " .. v .. ":\n" .. out)
    end
  end)
end)
