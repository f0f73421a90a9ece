-- Every kernel of the matrix (issue 26): `run --kernel K` reads K (a series
-- vm/kernel knows, host, a path to a kernel image), vm/kernel prepares an
-- image with its modules directory, vm/table sums the guests' TAP files,
-- and a call this kernel lacks fails with ENOSYS naming the Linux release
-- that brought it (those run where a feature is missing: the matrix's 5.10
-- and 6.1 guests; pending on a kernel that has them all).
local mountns = require "mountns"
local core = require "mountns.core"
local helper = require "helper"

local ROOT, sh, cli = helper.ROOT, helper.sh, helper.cli

-- `cmd; echo exit=$?` run from the tree's root, stderr included
local function run(cmd)
  return sh("cd " .. ROOT .. " && " .. cmd .. " 2>&1; echo \"exit=$?\"")
end

describe("mountns run --kernel K", function()
  it("takes the series vm/kernel knows, and names them when K is none", function()
    assert.are.equal("5.10 6.1 6.12 7.2 7.3\nexit=0", run("vm/kernel --series"))
    local out = cli("run --kernel 5.4 x.lua")
    assert.matches("run: %-%-kernel: 5%.10, 6%.1, 6%.12, 7%.2, 7%.3, host or a path to a "
      .. "kernel image expected, got 5%.4\nexit=2$", out)
    out = cli("run --kernel 7 x.lua")
    assert.matches("got 7\nexit=2$", out)
  end)

  it("takes a path to a kernel image, and names the errno of one it cannot open", function()
    assert.are.equal("mountns: run: --kernel: /nonexistent/vmlinuz-9.9: No such file or "
      .. "directory (ENOENT)\nexit=2", cli("run --kernel /nonexistent/vmlinuz-9.9 x.lua"))
  end)
end)

describe("vm/kernel IMAGE", function()
  local dir
  before_each(function() dir = helper.tempdir() end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  local function kernel(image)
    return run("XDG_CACHE_HOME='" .. dir .. "/cache' vm/kernel '" .. image .. "'")
  end

  it("finds no modules directory and says where it looked", function()
    local image = helper.write(dir, "boot/vmlinuz-9.9.9-test", "not a kernel")
    local out = kernel(image)
    assert.matches("vm/kernel: " .. image:gsub("%p", "%%%0") .. ": no modules directory for "
      .. "'9%.9%.9%-test' %(looked beside the image, in %.%./lib/modules/9%.9%.9%-test, "
      .. "%.%./usr/lib/modules/9%.9%.9%-test and /lib/modules/9%.9%.9%-test%)\nexit=1$", out)
    assert.matches("vm/kernel: " .. dir:gsub("%p", "%%%0")
      .. "/nope: no such kernel image\nexit=1$", kernel(dir .. "/nope"))
  end)

  it("refuses a modules directory without a module the guest needs", function()
    local image = helper.write(dir, "boot/vmlinuz-9.9.9-test", "not a kernel")
    helper.write(dir, "lib/modules/9.9.9-test/modules.builtin",
      "kernel/drivers/virtio/virtio_pci.ko\n")
    assert.matches("vm/kernel: module 9pnet_virtio: neither a file in [^\n]*/lib/modules/"
      .. "9%.9%.9%-test/kernel nor built in\nexit=1$", kernel(image))
  end)

  it("prepares an image whose modules are all built in (7.x's layout: modules/V/vmlinuz)",
    function()
      if sh("command -v busybox") == "" then
        return pending("needs busybox-static (make matrix-deps)")
      end
      local image = helper.write(dir, "usr/lib/modules/9.9.9-test/vmlinuz", "not a kernel")
      helper.write(dir, "usr/lib/modules/9.9.9-test/modules.builtin", table.concat({
        "kernel/drivers/virtio/virtio_pci.ko", "kernel/net/9p/9pnet_virtio.ko",
        "kernel/fs/9p/9p.ko", "kernel/fs/overlayfs/overlay.ko", "" }, "\n"))
      local out = kernel(image)
      assert.matches("no vmlinux inside", out)
      local cached = out:match("\n(/[^\n]*)\nexit=0$")
      assert.truthy(cached, out)
      assert.are.equal("not a kernel", helper.read(cached .. "/bzImage"))
      assert.are.equal(image .. "\n", helper.read(cached .. "/ok"))
      -- the initramfs holds busybox and an empty module order: nothing to load
      local list = sh("zcat '" .. cached .. "/initramfs.gz' | busybox cpio -t 2>/dev/null")
      assert.matches("bin/busybox", list)
      assert.matches("modules/order", list)
      assert.falsy(list:find("%.ko"))
      -- a second call answers from the cache
      assert.are.equal(cached .. "\nexit=0", kernel(image))
    end)
end)

describe("vm/table", function()
  local dir
  before_each(function() dir = helper.tempdir() end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  -- one kernel's results as vm/suite leaves them
  local function guest(name, t)
    local k = dir .. "/" .. name
    helper.write(k, "kernel", name .. "-amd64\n")
    helper.write(k, "vm.rc", "0\n")
    helper.write(k, "seconds", t.seconds .. "\n")
    for file, tap in pairs(t.root) do
      helper.write(k, file .. ".tap", tap)
      helper.write(k, file .. ".rc", (tap:find("not ok") and 1 or 0) .. "\n")
    end
    for file, tap in pairs(t.unpriv) do
      helper.write(k, "u65534/" .. file .. ".tap", tap)
      helper.write(k, "u65534/" .. file .. ".rc", (tap:find("not ok") and 1 or 0) .. "\n")
    end
    helper.write(k, "examples.tap", t.examples)
    helper.write(k, "examples.rc", (t.examples:find("not ok") and 1 or 0) .. "\n")
  end
  local GOOD = "ok 1 - a\nok 2 - b\n"
    .. "ok 3 - c # SKIP [needs listmount: Linux 6.8; this is 5.10]\n1..3\n"

  it("sums specs as root and as uid 65534, examples and seconds, a row per kernel", function()
    guest("5.10", { seconds = 301, root = { ["01-a_spec"] = GOOD, ["02-b_spec"] = "ok 1 - d\n" },
      unpriv = { ["01-a_spec"] = "ok 1 - a # SKIP [needs root: x]\nok 2 - b\n" },
      examples = "ok 1 - e\nok 2 - f\n" })
    guest("7.3", { seconds = 12, root = { ["01-a_spec"] = GOOD }, unpriv = {},
      examples = "ok 1 - e\n" })
    local out = run("vm/table '" .. dir .. "' 5.10 7.3")
    assert.matches("\n5%.10%-amd64 +3/0/1 +1/0/1 +2/0 +%- +301\n", out)
    assert.matches("\n7%.3%-amd64 +2/0/1 +%- +1/0 +%- +12\n", out)
    assert.matches("pending: 1 needs listmount: Linux 6%.8; this is 5%.10\n", out)
    assert.matches("exit=0$", out)
    assert.are.equal("root 3/0/1, uid 65534 1/0/1 (ok/failed/pending), examples 2/0, check -, "
      .. "301 s\nexit=0", run("vm/table --row '" .. dir .. "/5.10'"))
  end)

  it("fails on a failed spec, a crashed spec file or a failed example, and shows it", function()
    guest("a", { seconds = 1, root = { ["01-a_spec"] = "ok 1 - a\nnot ok 2 - broke\n# why\n" },
      unpriv = {}, examples = "ok 1 - e\n" })
    local out = run("vm/table '" .. dir .. "' a")
    assert.matches("FAIL 01%-a_spec as root %(exit 1%):\n   | not ok 2 %- broke\n   | # why", out)
    assert.matches("\na%-amd64 +1/1/0 ", out)
    assert.matches("exit=1$", out)
    -- killed by its timeout: no "not ok", exit 124, still a failure
    guest("b", { seconds = 1, root = {}, unpriv = { ["01-a_spec"] = "ok 1 - a\n" },
      examples = "ok 1 - e\n" })
    helper.write(dir .. "/b", "u65534/01-a_spec.rc", "124\n")
    out = run("vm/table '" .. dir .. "' b")
    assert.matches("FAIL 01%-a_spec as uid 65534 %(exit 124%)", out)
    assert.matches("\nb%-amd64 +0/0/0 +1/1/0 ", out)
    assert.matches("exit=1$", out)
    guest("c", { seconds = 1, root = {}, unpriv = {}, examples = "ok 1 - e\nnot ok 2 - f\n" })
    assert.matches("\nc%-amd64 +0/0/0 +%- +1/1 .*exit=1$", run("vm/table '" .. dir .. "' c"))
  end)
end)

-- Where this kernel lacks a call, the call fails with ENOSYS and says which
-- release brought it. Each runs in an isolated child on a sandbox tmpfs; on
-- a kernel with the feature it is pending (the host's 6.18 has them all).
describe("a call this kernel lacks", function()
  local features, real_it = mountns.features(), it
  local CALLS = {
    { "mount_setattr", "mount_setattr /tmp/mns", function(base)
      return core.mount_setattr(base, { nosuid = true })
    end },
    { "beneath", "move_mount beneath /tmp/mns /tmp/mns", function(base)
      return core.move_mount(base, base, { beneath = true })
    end },
    { "set_group", "move_mount set_group /tmp/mns /tmp/mns", function(base)
      return core.move_mount(base, base, { set_group = true })
    end },
    { "listmount", "listmount", function() return core.listmount() end },
    { "statmount", "statmount /tmp/mns", function(base) return core.statmount(base) end },
  }
  for _, c in ipairs(CALLS) do
    local feature, op, call = c[1], c[2], c[3]
    local since = core.feature_since[feature]
    local it = features[feature] and function(name)
      return pending(name .. " [this kernel has " .. feature .. "]")
    end or real_it
    it(feature .. ": ENOSYS, naming Linux " .. since, function()
      local ok, msg, err = mountns.isolate(function()
        return call(helper.sandbox())
      end)
      assert.is_nil(ok)
      assert.are.equal(core.errno.ENOSYS, err)
      assert.are.equal(op .. ": Function not implemented (ENOSYS): needs Linux " .. since, msg)
    end)
  end

  it("every feature of features() has its release, as MAJOR.MINOR", function()
    for name in pairs(features) do
      if name ~= "statmount_mask" then
        assert.matches("^%d+%.%d+$", core.feature_since[name] or "none: " .. name)
      end
    end
  end)
end)
