-- Regenerate the seed corpus of the fuzzers (fuzz/corpus/*):
--   LUA_PATH="lua/?.lua;lua/?/init.lua;spec/?.lua;;" LUA_CPATH="build/?.so;;" \
--     lua5.4 fuzz/make-corpus.lua
-- Real mountinfo comes from namespaces built inside isolate(); the rest are
-- hand-made lines: the article's samples, every optional field, escapes,
-- and broken text (truncated, oversized, wrong format).
local mountns = require "mountns"
local core = require "mountns.core"
local helper = require "helper"

local dir = "fuzz/corpus/"

local function put(name, text)
  local f = assert(io.open(dir .. name, "wb"))
  f:write(text)
  f:close()
end

-- Real mountinfo minus the mounts the machine's own tooling put under /mnt
-- (they say nothing about mountns and name the host's set-up).
local function real(text)
  return (text:gsub("[^\n]* /mnt/[^\n]*\n", ""))
end

-- ---- real mountinfo, each from its own namespace --------------------------

put("mountinfo/real-isolate", real(mountns.isolate(function()
  return core.read_mountinfo()
end)))

put("mountinfo/real-propagation", real(mountns.isolate(function()
  local base = helper.sandbox()
  helper.propagation_kinds(base)
  assert(mountns.mkdir(base .. "/pv"))
  assert(mountns.mount("pv", base .. "/pv", "tmpfs", "ro,nosuid,nodev,noexec"))
  return core.read_mountinfo()
end)))

-- a namespace made with propagation "unchanged": shared:N kept across it
put("mountinfo/real-unchanged", real(mountns.isolate(function()
  helper.sandbox()
  assert(mountns.make_shared("/tmp"))
  assert(mountns.unshare { propagation = "unchanged" })
  return core.read_mountinfo()
end)))

-- a slave namespace: master:N on every copy
put("mountinfo/real-slave-ns", real(mountns.isolate(function()
  helper.sandbox()
  assert(mountns.make_shared("/", { recursive = true }))
  local home <close> = mountns.namespace() -- luacheck: ignore
  assert(mountns.unshare { propagation = "slave" })
  return core.read_mountinfo()
end)))

-- a user namespace owned by the isolate child
put("mountinfo/real-userns", real(mountns.isolate(function()
  assert(mountns.unshare { user = true, map_root = true })
  return core.read_mountinfo()
end)))

put("mountinfo/real-escapes", real(mountns.isolate(function()
  local base = helper.sandbox()
  for _, name in ipairs { "sp ace", "t\tab", "new\nline", "back\\slash",
                          "\255\254latin", "-", "x (deleted)" } do
    local p = base .. "/" .. name
    assert(mountns.mkdir(p))
    assert(mountns.mount("src " .. name, p, "tmpfs", nil, "mode=0755"))
  end
  assert(mountns.mkdir(base .. "/empty"))
  assert(mountns.mount("", base .. "/empty", "tmpfs"))
  return core.read_mountinfo()
end)))

-- nsfs roots ("uts:[4026531838]") and a bind of a deleted file ("//deleted")
put("mountinfo/real-nsfs-deleted", real(mountns.isolate(function()
  local base = helper.sandbox()
  for _, f in ipairs { "/ns", "/a", "/b" } do
    assert(io.open(base .. f, "w")):close()
  end
  -- a mount ns file binds only into an older namespace; uts has no such rule
  assert(mountns.bind("/proc/self/ns/uts", base .. "/ns"))
  assert(mountns.bind(base .. "/a", base .. "/b"))
  assert(os.remove(base .. "/a"))
  return core.read_mountinfo()
end)))

-- stacked mounts and a deeper tree
put("mountinfo/real-stacked", real(mountns.isolate(function()
  local base = helper.sandbox()
  for i = 1, 3 do assert(mountns.mount("layer" .. i, base, "tmpfs")) end
  local p = base
  for i = 1, 6 do
    p = p .. "/d" .. i
    assert(mountns.mkdir(p))
    assert(mountns.mount("deep" .. i, p, "tmpfs"))
  end
  return core.read_mountinfo()
end)))

put("mountinfo/real-host", real(core.read_mountinfo()))

-- ---- hand-made ------------------------------------------------------------

local article1 = table.concat({
  "61 0 8:2 / / rw,relatime - ext4 /dev/sda2 rw",
  "81 61 8:3 / /X rw,relatime shared:1 - ext4 /dev/sda3 rw",
  "124 61 8:5 / /Y rw,relatime shared:2 - ext4 /dev/sda5 rw",
  "228 61 8:3 / /Z rw,relatime shared:1 - ext4 /dev/sda3 rw", "" }, "\n")
local article2 = table.concat({
  "147 146 8:2 / / rw,relatime - ext4 /dev/sda2 rw",
  "221 147 8:3 / /X rw,relatime shared:1 - ext4 /dev/sda3 rw",
  "224 147 8:5 / /Y rw,relatime shared:2 - ext4 /dev/sda5 rw", "" }, "\n")
put("mountinfo/article-sh1", article1)
put("mountinfo/article-sh2", article2)

put("mountinfo/optional-kinds", table.concat({
  "1 0 0:1 / / rw - tmpfs a rw",
  "2 1 0:2 / /s rw shared:1 - tmpfs b rw",
  "3 1 0:2 / /m rw master:1 - tmpfs c rw",
  "4 1 0:2 / /p rw master:1 propagate_from:7 - tmpfs d rw",
  "5 1 0:3 / /u rw unbindable - tmpfs e rw",
  "6 1 0:2 / /sm rw shared:4 master:1 - tmpfs f rw",
  "7 1 0:2 / /x rw future:9 shared:2 - tmpfs g rw",
  "2147483647 7 4095:1048575 / /max rw shared:2147483647 - tmpfs h rw",
  "" }, "\n"))

put("mountinfo/escapes", "9 1 0:5 /r\\040o\\011o\\012t\\134 /t\\040a\\011r"
  .. "\\012g\\134 rw,x\\040y - f\\040s s\\040r\\134c o\\040p\\054t\n"
  .. "10 1 0:5 / /e rw - tmpfs  rw\n"
  .. "11 1 0:5 / /k\\040(deleted) rw - tmpfs /dev/root rw\r\n")

local line = "61 0 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw"
for _, cut in ipairs { 2, 5, 9, 24, 34, 37, 44 } do
  put("mountinfo/truncated-" .. cut, line:sub(1, cut) .. "\n")
end
put("mountinfo/oversized", "1 0 8:1 / /" .. string.rep("a", 65000)
  .. " rw - ext4 /dev/sda1 rw\n")
put("mountinfo/bad-fstab", "/dev/sda1 / ext4 rw,relatime 0 1\n")
put("mountinfo/bad-no-separator", "61 0 8:2 / / rw,relatime\n")
put("mountinfo/bad-nul", "61 0 8:2 / /\0x rw - ext4 /dev/sda2 rw\n")
put("mountinfo/bad-tab", "61 0 8:2 /\t/x / rw - ext4 /dev/sda2 rw\n")
put("mountinfo/bad-optional", "61 0 8:2 / / rw shared:0 master:-1 - ext4 a rw\n")

-- ---- flags: byte 0 = kind (0 mount, 1 umount, 2 mount_attr, 3 unknown)
-- + 4 for an array
local mount_all = "ro,rw,nosuid,suid,nodev,dev,noexec,exec,sync,async,"
  .. "dirsync,mand,nomand,silent,loud,relatime,norelatime,noatime,atime,"
  .. "strictatime,nodiratime,diratime,lazytime,nolazytime,nosymfollow,symfollow"
put("flags/mount-all", "\0" .. mount_all)
put("flags/mount-array", "\4ro\nnosuid,nodev\n\nnoatime")
put("flags/mount-empty-names", "\0,ro,,nodev,")
put("flags/mount-unknown", "\0ro,bogus")
put("flags/mount-nul", "\0ro\0x")
put("flags/mount-number", "\4ro\n#")
put("flags/umount-all", "\1force,detach,lazy,expire,nofollow")
put("flags/umount-array", "\5detach\nnofollow")
put("flags/attr-all", "\2ro,rw,nosuid,nodev,noexec,nodiratime,nosymfollow,"
  .. "relatime,noatime,strictatime")
put("flags/attr-array", "\6noatime\nro,nodev")
put("flags/unknown-kind", "\3ro")
