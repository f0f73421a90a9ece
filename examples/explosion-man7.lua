-- mount_namespaces(7), "MS_UNBINDABLE example": the mount explosion of
-- repeated `mount --rbind / /home/USER`, and its cure, --make-unbindable.
-- The man page's session, as written (its /dev/sdb6 and /dev/sdb7 are
-- tmpfs here, / is the scenario's root), and after each step the man
-- page's own listing of `mount | awk '{print $1, $2, $3}'`: 3 -> 6 -> 12
-- -> 24 mounts, then 3 -> 6 -> 9 -> 12 with the cure. The kernel prints
-- them line for line. The man page's / is private, as a scenario's is: with
-- / and its submounts shared (systemd's default), the same session gives
-- 3 -> 6 -> 18 -> 126 (spec/model/25-docfacts_spec.lua).
local mountns = require "mountns"
local expect = require "mountns.expect"

-- `mount | awk '{print $1, $2, $3}'`, the man page's view; the scenario's
-- root filesystem plays /dev/sda1
local function listing(ns)
  local t = ns:mounts()
  local root = t:find("/").source
  local lines = {}
  for _, m in ipairs(t) do
    lines[#lines + 1] = (m.source == root and "/dev/sda1" or m.source) .. " on " .. m.target
  end
  return table.concat(lines, "\n")
end

local function same(want, ns)
  want = want:gsub("^%s+", ""):gsub("\n%s+", "\n"):gsub("%s+$", "")
  local got = listing(ns)
  assert(got == want, "the man page's listing:\n" .. want .. "\n\nthe kernel's:\n" .. got)
end

-- The man page's last listing, after the third rbind; the ones before it
-- are its first 3, 6 and 12 lines.
local AFTER_OTTO = [[
    /dev/sda1 on /
    /dev/sdb6 on /mntX
    /dev/sdb7 on /mntY
    /dev/sda1 on /home/cecilia
    /dev/sdb6 on /home/cecilia/mntX
    /dev/sdb7 on /home/cecilia/mntY
    /dev/sda1 on /home/henry
    /dev/sdb6 on /home/henry/mntX
    /dev/sdb7 on /home/henry/mntY
    /dev/sda1 on /home/henry/home/cecilia
    /dev/sdb6 on /home/henry/home/cecilia/mntX
    /dev/sdb7 on /home/henry/home/cecilia/mntY
    /dev/sda1 on /home/otto
    /dev/sdb6 on /home/otto/mntX
    /dev/sdb7 on /home/otto/mntY
    /dev/sda1 on /home/otto/home/cecilia
    /dev/sdb6 on /home/otto/home/cecilia/mntX
    /dev/sdb7 on /home/otto/home/cecilia/mntY
    /dev/sda1 on /home/otto/home/henry
    /dev/sdb6 on /home/otto/home/henry/mntX
    /dev/sdb7 on /home/otto/home/henry/mntY
    /dev/sda1 on /home/otto/home/henry/home/cecilia
    /dev/sdb6 on /home/otto/home/henry/home/cecilia/mntX
    /dev/sdb7 on /home/otto/home/henry/home/cecilia/mntY]]

local function first(n, text)
  local lines = {}
  for l in text:gmatch("[^\n]+") do
    if #lines < n then lines[#lines + 1] = l end
  end
  return table.concat(lines, "\n")
end

mountns.scenario("mount_namespaces(7): rbind / three times, 3 -> 6 -> 12 -> 24 mounts", function(ns)
  mountns.shell(ns, [[
# mount /dev/sdb6 /mntX
# mount /dev/sdb7 /mntY
# mkdir -p /home/cecilia /home/henry /home/otto
]])
  same(first(3, AFTER_OTTO), ns)
  mountns.shell(ns, "# mount --rbind / /home/cecilia")
  same(first(6, AFTER_OTTO), ns)
  mountns.shell(ns, "# mount --rbind / /home/henry")
  same(first(12, AFTER_OTTO), ns)
  mountns.shell(ns, "# mount --rbind / /home/otto")
  same(AFTER_OTTO, ns)
  expect.count(ns, "/", 24)
end)

mountns.scenario("mount_namespaces(7): --make-unbindable, 3 -> 6 -> 9 -> 12 mounts", function(ns)
  mountns.shell(ns, [[
# mount /dev/sdb6 /mntX
# mount /dev/sdb7 /mntY
# mkdir -p /home/cecilia /home/henry /home/otto
# mount --rbind --make-unbindable / /home/cecilia
]])
  expect.count(ns, "/", 6)
  expect.propagation(ns, "/home/cecilia", "unbindable")

  -- "we show that unbindable mounts are indeed unbindable"
  local _, _, steps = mountns.shell(ns, [[
# mkdir /mntZ
# mount --bind /home/cecilia /mntZ
]])
  assert(steps[2].status == 32, "mount --bind /home/cecilia /mntZ: status " .. steps[2].status)
  expect.fails("EINVAL", ns.bind, ns, "/home/cecilia", "/mntZ")
  expect.not_mounted(ns, "/mntZ")

  mountns.shell(ns, [[
# mount --rbind --make-unbindable / /home/henry
# mount --rbind --make-unbindable / /home/otto
]])
  same([[
    /dev/sda1 on /
    /dev/sdb6 on /mntX
    /dev/sdb7 on /mntY
    /dev/sda1 on /home/cecilia
    /dev/sdb6 on /home/cecilia/mntX
    /dev/sdb7 on /home/cecilia/mntY
    /dev/sda1 on /home/henry
    /dev/sdb6 on /home/henry/mntX
    /dev/sdb7 on /home/henry/mntY
    /dev/sda1 on /home/otto
    /dev/sdb6 on /home/otto/mntX
    /dev/sdb7 on /home/otto/mntY]], ns)
  -- only the top of each copy is unbindable (mount(8) makes the
  -- propagation change after the bind, not recursively)
  expect.propagation(ns, "/home/henry", "unbindable")
  expect.propagation(ns, "/home/henry/mntX", "private")
end)
