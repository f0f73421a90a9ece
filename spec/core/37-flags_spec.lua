-- The flag names in one home (issue 24): mountns.flags is the Lua layer's
-- one copy of the names mount(2) and umount2(2) take; the core's tables
-- (csrc/mount.c, which the system calls read) are the authority. Every
-- name is compared both ways, each entry's meaning with the bits the core
-- gives it, and the Lua parser (mountns.args.flags, the model's) with the
-- core's on the same arguments. No kernel action: nothing here needs root.
local core = require "mountns.core"
local flags = require "mountns.flags"
local args = require "mountns.args"
local model = require "mountns.model"

local HERE = debug.getinfo(1, "S").short_src

-- The names only in the Lua set, and only in the core's list, sorted.
local function differences(set, list)
  local only_lua, only_core, in_core = {}, {}, {}
  for _, n in ipairs(list) do
    in_core[n] = true
    if not set[n] then only_core[#only_core + 1] = n end
  end
  for n in pairs(set) do
    if not in_core[n] then only_lua[#only_lua + 1] = n end
  end
  table.sort(only_lua)
  table.sort(only_core)
  return { lua = only_lua, core = only_core }
end

-- single-bit MS_* constants: whether mask has bit (no bit operators in 5.1)
local function has(mask, bit)
  return math.floor(mask / bit) % 2 == 1
end

local MS = core.MS
-- the bit of each per-mount attribute (attr, value) the model keeps
local ATTR_BITS = { ro = MS.RDONLY, nosuid = MS.NOSUID, nodev = MS.NODEV, noexec = MS.NOEXEC,
                    nodiratime = MS.NODIRATIME, nosymfollow = MS.NOSYMFOLLOW }
local ATIME_BITS = { relatime = MS.RELATIME, noatime = MS.NOATIME,
                     strictatime = MS.STRICTATIME }
local PROP_BITS = { shared = MS.SHARED, private = MS.PRIVATE, slave = MS.SLAVE,
                    unbindable = MS.UNBINDABLE }
local OP_BITS = { bind = MS.BIND, move = MS.MOVE, remount = MS.REMOUNT }

-- The mask an entry of flags.mount stands for (its bits the model reads).
local function mask_of(e)
  local m = 0
  if e.attr == "atime" then
    m = m + ATIME_BITS[e.value]
  elseif e.attr and e.value then
    m = m + ATTR_BITS[e.attr]
  end
  if e.prop then m = m + PROP_BITS[e.prop] end
  if e.op then m = m + OP_BITS[e.op] end
  if e.rec then m = m + MS.REC end
  return m
end

-- every bit mask_of can give: what a flag the model ignores must not have
local MODELLED = {}
for _, t in ipairs { ATTR_BITS, ATIME_BITS, PROP_BITS, OP_BITS, { MS.REC } } do
  for _, b in pairs(t) do MODELLED[#MODELLED + 1] = b end
end

describe("the flag names (mountns.flags against the core's tables)", function()
  it("are the core's, name by name, both ways, for mount and umount", function()
    for _, kind in ipairs { "mount", "umount" } do
      local list = core._flag_names(kind)
      assert.is_true(#list >= 5, kind)
      assert.are.same({ lua = {}, core = {} }, differences(flags[kind], list), kind)
    end
    -- the core's sets are what its parser reads: each name parses, under
    -- its own kind only where the other set lacks it
    for _, n in ipairs(core._flag_names("umount")) do
      assert.is_true(pcall(core._parse_flags, "umount", n), n)
      assert.is_false(pcall(core._parse_flags, "mount", n), n)
    end
  end)

  it("a comparison that finds a name on one side only (the check's other polarity)",
     function()
    local set = {}
    for k, v in pairs(flags.mount) do set[k] = v end
    set.ro, set.nosuidd = nil, {}
    assert.are.same({ lua = { "nosuidd" }, core = { "ro" } },
      differences(set, core._flag_names("mount")))
    local ok, err = pcall(core._flag_names, "mount_atr")
    assert.is_false(ok)
    assert.matches("^bad argument #1 to '[^']*' %(unknown flag set 'mount_atr'%)$", err)
  end)

  it("mean what the core's bits say: attribute, propagation, operation, MS_REC", function()
    local checked = 0
    for name, e in pairs(flags.mount) do
      local mask = core._parse_flags("mount", name)
      -- (an attribute's entry sets it: the core has no bit that clears)
      assert.is_true(e.attr == nil or e.value ~= false, name)
      if next(e) == nil then
        -- nothing the model keeps: no bit the model reads
        for _, b in ipairs(MODELLED) do
          assert.is_false(has(mask, b), name .. " has bit " .. b)
        end
      else
        assert.are.equal(mask_of(e), mask, name)
        checked = checked + 1
      end
    end
    assert.is_true(checked >= 20, checked)
    -- and a wrong meaning is seen: rshared without MS_REC, ro as nosuid
    assert.are_not.equal(mask_of { prop = "shared" }, core._parse_flags("mount", "rshared"))
    assert.are_not.equal(mask_of { attr = "nosuid", value = true },
      core._parse_flags("mount", "ro"))
    -- umount: lazy and detach are MNT_DETACH, the others not
    local detach = core._parse_flags("umount", "detach")
    for name, e in pairs(flags.umount) do
      assert.are.equal(e.lazy == true, core._parse_flags("umount", name) == detach, name)
    end
  end)
end)

-- A name and its negation in one argument: the core ORs the names' bits
-- (a negation has none), so the kernel keeps what the first set; the
-- model used to let the last name win ("ro,rw" gave rw).
local PAIRS = { "nosuid,suid", "ro,rw", "nodev,dev", "noexec,exec", "suid,nosuid",
                "noatime,atime", "nodiratime,diratime", { "ro", rw = true } }

-- The options text of a mount made with each of PAIRS, on a scenario
-- runner (mountns.scenario or model.scenario).
local function options_of(run)
  return run(function(ns)
    local out = {}
    for i, fl in ipairs(PAIRS) do
      ns:mkdir("/X" .. i)
      ns:mount("m", "/X" .. i, "tmpfs", fl)
      out[i] = ns:find("/X" .. i).options
    end
    return out
  end)
end

describe("a flag and its negation in one argument", function()
  it("on the model: the flag set stays set (the core's OR of bits)", function()
    local got = options_of(model.scenario)
    assert.are.same({ "rw,nosuid,relatime", "ro,relatime", "rw,nodev,relatime",
                      "rw,noexec,relatime", "rw,nosuid,relatime", "rw,noatime",
                      "rw,nodiratime,relatime", "ro,relatime" }, got)
  end)

  require("helper").root_it("mounts in a scenario")(
    "on the kernel: the same options as the model's", function()
    assert.are.same(options_of(require("mountns").scenario), options_of(model.scenario))
  end)
end)

describe("args.flags (the model's flag parser) against the core's", function()
  -- what core._parse_flags says about v: its mask, or the why of its
  -- bad-argument message
  local function core_reads(kind, v)
    local ok, r = pcall(core._parse_flags, kind, v)
    if ok then return { mask = r } end
    return { why = tostring(r):match("^bad argument #2 to '[^']+' %((.*)%)$") or tostring(r) }
  end
  local function lua_reads(kind, v)
    local ok, r = pcall(args.flags, v, flags[kind], "f", 2, 1)
    if not ok then
      return { why = tostring(r):match("^bad argument #2 to 'f' %((.*)%)$") or tostring(r) }
    end
    -- the names the core turns into its mask (a list of names)
    return { mask = core._parse_flags(kind, r) }
  end

  it("gives the same flags and the same messages on the same arguments", function()
    local cases = {
      mount = { "ro", "ro,nosuid,nodev", "", { "rbind" }, { "ro", nosuid = true },
                { ro = true, nodev = false }, { "ro,noexec", "rshared" },
                "ro,,rw", ",ro", "ro,", "bogus", "ro,bogus",
                { ro = 1 }, { bogus = true }, { [0] = "ro" }, { [1.5] = "ro" }, true,
                "ro\0x", "a\0b" },
      -- (raw bits, a number, alone or in a list: the core's mount set only;
      -- the umount set refuses them, in the words args.flags uses)
      umount = { "lazy", "detach,force", { expire = true }, "ro", { "nofollow", "lazyy" },
                 { "lazy", 1 }, 2 },
    }
    local errors = 0
    for kind, list in pairs(cases) do
      for i, v in ipairs(list) do
        local c, l = core_reads(kind, v), lua_reads(kind, v)
        assert.are.same(c, l, kind .. " case " .. i)
        if c.why then errors = errors + 1 end
      end
    end
    -- the one difference in words: a key that is neither a name nor an
    -- index, shown by its value here and as "?" by the core (C's
    -- lua_tostring of a boolean); kept as it was (the messages are a
    -- contract), and held here so that a change on either side is seen
    assert.are.same({ why = "unexpected key ? (boolean): flags are a list of names or a set "
      .. "{name = true}" }, core_reads("mount", { [true] = 1 }))
    assert.are.same({ why = "unexpected key true (boolean): flags are a list of names or a "
      .. "set {name = true}" }, lua_reads("mount", { [true] = 1 }))
    -- both polarities: arguments read, arguments refused
    assert.is_true(errors >= 12, errors)
    assert.are.same({}, args.flags(nil, flags.mount, "f", 1))
  end)

  it("a model namespace reads its flags with it: the core's names, the core's words",
     function()
    model.scenario(function(ns)
      ns:mkdir("/X")
      ns:mount("m", "/X", "tmpfs", core._flag_names("mount")[1]) -- "ro"
      assert.is_true(ns:find("/X").options:find("^ro") ~= nil)
      local ok, err = pcall(ns.mount, ns, "m", "/X", "tmpfs", "ro,nosuidd")
      assert.is_false(ok)
      assert.are.equal("bad argument #4 to 'ns:mount' (unknown flag 'nosuidd')", err)
      ok, err = pcall(ns.umount, ns, "/X", "ro")
      assert.is_false(ok)
      assert.are.equal("bad argument #2 to 'ns:umount' (unknown flag 'ro')", err)
    end)
  end)

  it("raw flag bits on the model: raised at the caller's line, no line of the model's",
     function()
    -- before: "lua/mountns/model.lua:840: ns:mount: raw flag bits ..." after
    -- the caller's position
    model.scenario(function(ns)
      ns:mkdir("/X")
      for _, call in ipairs {
        { "mount", function() ns:mount("m", "/X", "tmpfs", core.MS.RDONLY) end },
        { "umount", function() ns:umount("/X", 2) end },
      } do
        local ok, err = pcall(call[2])
        assert.is_false(ok)
        assert.matches("^" .. HERE:gsub("%p", "%%%0") .. ":%d+: ns:" .. call[1]
          .. ": raw flag bits are not available in the model$", err)
      end
      -- the other polarity: names, not bits, are read
      assert.is_true(ns:mount("m", "/X", "tmpfs", "ro"))
    end)
  end)
end)
