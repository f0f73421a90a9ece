--- mountns.mounts: the fastest complete mount table this kernel offers.
--
-- On Linux 6.8+ (with statmount's source and option strings, 6.13+) the
-- table comes from `listmount(2)` + `statmount(2)`: no text is generated or
-- parsed, other namespaces are listed by their mount-namespace ID without
-- `setns`, and each record also carries `unique_id` and `parent_unique_id`.
-- On older kernels it is `/proc/self/mountinfo` parsed by libmount (for
-- another namespace: read by a forked child that enters it).
--
-- `propagate_from` is left out of statmount records unless asked for
-- (`mounts{propagate_from = true}` or `mounts(ns, {propagate_from = true})`):
-- the kernel finds it by walking peer groups, which in a namespace whose
-- mounts are slaves of large peer groups costs as much as mountinfo does.
-- The mountinfo path always has it (the kernel computes it anyway).
-- Either way it is the answer of the namespace's own root, as in
-- /proc/PID/mountinfo of a process there: for another namespace the
-- statmount listing then runs in a child that entered it (see
-- listmount_from_inside); for the caller's own, against the caller's root
-- (in a chroot, the chroot's answer, as /proc/self/mountinfo gives).
-- @module mountns.mounts

local core = require "mountns.core"
local mtable = require "mountns.table"
local argcheck = require "mountns.args"
local child = require "mountns.child"

local M = {}

-- A core handle, or the handle of an object with a :handle() method
-- (scenario namespaces), or nil.
local function handle_of(ns)
  if ns == nil then return nil end
  if type(ns) == "table" and type(ns.handle) == "function" then
    return ns:handle()
  end
  return ns
end

-- Raise unless h is an open core handle of a mount namespace (an nsfs fd:
-- a userdata whose kind is "mnt"), at level as argcheck's: the core's own
-- check would raise inside this file.
local function kind_of(h) return h:kind() end
local function check_handle(h, level)
  level = level + 1
  local ok, kind = pcall(kind_of, h) -- (any value: indexing one may raise)
  if type(h) ~= "userdata" or not ok or kind ~= "mnt" then
    argcheck.error("mounts", 1, "mount namespace handle, scenario namespace or nil expected, "
      .. "got " .. (type(h) == "userdata" and tostring(h) or type(h)), level)
  end
  if not pcall(h.id, h) then
    argcheck.error("mounts", 1, "attempt to use a closed namespace", level)
  end
end

-- How long a child that reads another namespace may take (seconds).
local CHILD_TIMEOUT = 30

-- produce() run in a child that entered namespace h (its root is then that
-- namespace's root): its string result, or nil and a message that says why
-- (produce's error, or how the child ended: killed, timed out).
-- v, or raise err as it is: a core call's message names the call, the
-- path and the errno; assert would put this file's line before it
local function must(v, err)
  if v == nil or v == false then error(err, 0) end
  return v
end

local function in_namespace(h, what, produce)
  local proc, ferr, ferrno = child.spawn({ up = { "result" }, timeout = CHILD_TIMEOUT },
    function(fds)
      local ok, text = pcall(function() return must(h:enter()) and produce() end)
      child.send(fds.result, ok and "o" or "e", ok and text or child.message(text))
    end)
  if not proc then return nil, ferr, ferrno end
  local kind, body = proc:receive("result")
  -- past the deadline (a receive that timed out): killed at once
  local how, code = proc:finish()
  if kind == "o" then return body end
  if kind ~= "e" then
    body = string.format("the child %s (%s)", child.ending(how, code), tostring(body))
  end
  return nil, "mounts: cannot read the " .. what .. " of " .. tostring(h) .. ": " .. body
end

-- The mountinfo text of namespace h, read by a child that enters it.
local function mountinfo_in(h)
  return in_namespace(h, "mountinfo", function()
    return must(core.read_mountinfo())
  end)
end

-- Whether h is the caller's own mount namespace.
local function is_own(h)
  local me = core.namespace()
  if not me then return false end
  local own = me:id() == h:id()
  me:close()
  return own
end

-- The statmount table of another namespace with propagate_from. The kernel
-- computes propagate_from against the caller's root, as /proc/PID/mountinfo
-- does against PID's (get_dominating_id(mnt, &current->fs->root)): from
-- outside the namespace no master is "under the root" and the answer is 0
-- for every mount. So the listing runs in a child that entered it.
local function listmount_from_inside(h)
  local text, err, errno = in_namespace(h, "statmount table", function()
    local t = must(core.listmount { stat = true, propagate_from = true })
    return child.encode("result", { t }, 1)
  end)
  if not text then return nil, err, errno end
  return child.decode(text)[1]
end

-- listmount of another namespace starts at that namespace's root mount,
-- but a process that enters it (setns) stands on the topmost mount stacked
-- on that root's "/" (a system booted through an initramfs: the real root
-- on the rootfs), and its mountinfo shows that mount and those below it
-- only. Measured on Debian's 7.3 in vm/'s guest, whose / is an overlay on
-- the initramfs: the rootfs, its /lower and /rw showed in a scenario
-- namespace's table listed from outside. The records t (listmount's
-- order) are cut to those; t itself when nothing is stacked.
local function from_entered_root(t)
  local listed, root = {}, nil
  for _, r in ipairs(t) do listed[r.unique_id] = true end
  for _, r in ipairs(t) do
    if not listed[r.parent_unique_id] then root = r; break end
  end
  local first = root
  while root do -- climb: a mount on the root's "/"
    local up
    for _, r in ipairs(t) do
      if r.parent_unique_id == root.unique_id and r.target == "/" then up = r end
    end
    if not up then break end
    root = up
  end
  if root == first then return t end
  -- listmount lists by mount ID, and a child may have the smaller one:
  -- propagation tucks the mount that was at a mount point onto the copy
  -- made there (attach_recursive_mnt), so the tree is walked, not the list
  local children = {}
  for _, r in ipairs(t) do
    local c = children[r.parent_unique_id] or {}
    children[r.parent_unique_id] = c
    c[#c + 1] = r.unique_id
  end
  local keep, todo = { [root.unique_id] = true }, { root.unique_id }
  while #todo > 0 do
    local id = table.remove(todo)
    for _, c in ipairs(children[id] or {}) do
      if not keep[c] then keep[c] = true; todo[#todo + 1] = c end
    end
  end
  local kept = {}
  for _, r in ipairs(t) do
    if keep[r.unique_id] then kept[#kept + 1] = r end
  end
  return kept
end

--- listmount + statmount records of namespace h (nil: the caller's) as a
-- process there sees them: another namespace's cut to what a process that
-- enters it sees (`from_entered_root`).
-- @param[opt] h a namespace handle
-- @tparam[opt] boolean propagate_from compute propagate_from too
-- @treturn[1] table the records
-- @return[2] nil
-- @treturn[2] string message
-- @treturn[2] integer errno
function M.listmount(h, propagate_from)
  local t, err, errno = core.listmount { stat = true, ns = h,
                                         propagate_from = propagate_from or nil }
  if not t then return nil, err, errno end
  if h ~= nil and not is_own(h) then t = from_entered_root(t) end
  return t
end

--- Which path `mounts` takes here: "statmount" or "mountinfo".
-- @tparam[opt] boolean other true for another namespace (needs listmount by
-- mount-namespace ID)
function M.path(other)
  local f = core.features()
  if f.statmount_complete and (not other or f.listmount_ns) then
    return "statmount"
  end
  return "mountinfo"
end

--- Give the records of a mountinfo table their unique mount IDs
-- (`unique_id`, `parent_unique_id`) where the kernel has listmount and
-- statmount (Linux 6.8; another namespace: listmount by namespace ID)
-- without complete records (6.12's statmount has no source): statmount's
-- records carry both the reused ID mountinfo shows and the unique one.
-- A record whose ID and parent ID match no listed mount (gone or reused in
-- between) keeps none. Changes `t` in place.
-- @tparam table t a mount table from mountinfo
-- @param[opt] h the namespace handle it was read from; nil: the caller's
-- @treturn table t
function M.with_unique_ids(t, h)
  local f = core.features()
  local other = h ~= nil and not is_own(h)
  if not (f.listmount and f.statmount) or (other and not f.listmount_ns) then
    return t
  end
  local list = core.listmount { stat = true, ns = other and h or nil }
  if not list then return t end
  local by_id = {}
  for _, r in ipairs(list) do by_id[r.id] = r end
  for _, m in ipairs(t) do
    local r = by_id[m.id]
    if r and r.parent_id == m.parent_id then
      m.unique_id, m.parent_unique_id = r.unique_id, r.parent_unique_id
    end
  end
  return t
end

--- The mount table of a namespace.
-- @param[opt] ns a namespace handle (`mountns.namespace(pid)`), an object
-- with a `:handle()` method returning one, or nil for the caller's
-- @tparam[opt] table opts `propagate_from = true` to compute propagate_from
-- on the statmount path (`mounts(opts)` works too); `root = path`: the
-- table as a process whose root is path sees it (its mountinfo, read by a
-- child that enters the namespace and chroots there: only the mounts
-- reachable from that root, mount points relative to it, propagate_from
-- computed against it)
-- @treturn[1] table a mount table (`mountns.table`), in mountinfo order
-- @return[2] nil
-- @treturn[2] string message
-- @treturn[2] integer errno
-- @usage local t = mountns.mounts(); print(t:find("/").propagation)
function M.mounts(ns, opts)
  local argn = 2
  if opts == nil and type(ns) == "table" and type(ns.handle) ~= "function"
      and not mtable.is(ns) then
    ns, opts, argn = nil, ns, 1
  end
  opts = argcheck.options(opts, "mounts", argn, { "propagate_from", "root" }, 2)
  local h = handle_of(ns)
  if h ~= nil then check_handle(h, 2) end
  if opts.root ~= nil then
    local root = argcheck.path(opts.root, "mounts", argn, 2)
    if root:sub(1, 1) ~= "/" then
      argcheck.error("mounts", argn, "option 'root': absolute path expected, got "
        .. string.format("%q", root), 2)
    end
    local text, err, errno = in_namespace(h or core.namespace(), "mountinfo under "
      .. root, function()
        must(core.chroot(root))
        must(core.chdir("/"))
        return must(core.read_mountinfo())
      end)
    if not text then return nil, err, errno end
    local t
    t, err, errno = core.parse_mountinfo(text)
    if not t then return nil, err, errno end
    return mtable.new(t)
  end
  if M.path(h ~= nil) == "statmount" then
    local t, err, errno
    if opts.propagate_from and h ~= nil and not is_own(h) then
      t, err, errno = listmount_from_inside(h)
    else
      t, err, errno = M.listmount(h, opts.propagate_from)
    end
    if not t then return nil, err, errno end
    return mtable.new(t)
  end
  local t, err, errno
  -- its own namespace read directly: entering it (setns) would need
  -- CAP_SYS_ADMIN (uid 65534's show --watch PID on 5.10: EPERM)
  if h == nil or is_own(h) then
    t, err, errno = core.mountinfo()
  else
    local text
    text, err, errno = mountinfo_in(h)
    if text then t, err, errno = core.parse_mountinfo(text) end
  end
  if not t then return nil, err, errno end
  return mtable.new(t)
end

return M
