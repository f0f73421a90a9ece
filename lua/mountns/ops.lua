--- ops: the operations a namespace runs, inside it.
-- A scenario namespace's methods (`mountns.namespace`) run them in the
-- scenario process after entering the namespace, or ask the namespace's
-- agent (`mountns.agent`) to run them there: an agent is a fork of the
-- scenario process, so the same functions exist in both.
-- @module mountns.ops

local core = require "mountns.core"
local child = require "mountns.child"

local ops = {}

--- A core call, e.g. ops.call("mount", "x", "/X", "tmpfs").
function ops.call(fname, ...)
  return core[fname](...)
end

--- pivot_root into new_root and detach the old root, as runtimes do.
function ops.pivot_root(new_root)
  local old = new_root .. "/.pivot_old"
  local ok, err, errno = core.mkdir(old)
  if not ok and errno ~= core.errno.EEXIST then return nil, err, errno end
  ok, err, errno = core.chdir(new_root)
  if ok then ok, err, errno = core.pivot_root(".", ".pivot_old") end
  if not ok then return nil, err, errno end
  assert(core.chdir("/"))
  ok, err, errno = core.umount("/.pivot_old", "detach")
  os.remove("/.pivot_old")
  return ok, err, errno
end

--- Whether the mount at path is locked: try to unmount it in a throw-away
-- copy of the namespace (same user namespace, so the locks are copied and
-- none are added), made private first so the unmount cannot propagate
-- back. Returns true/false, or nil, "not mounted".
function ops.locked(path)
  -- exit status: 0 unmounted, 1 locked, 2 not a mount point, 3 failed
  local pid = assert(child.fork(function()
    local ok, code = pcall(function()
      assert(core.unshare { mount = true, propagation = "private" })
      local t = assert(core.mountinfo())
      if not t[1] then return 3 end
      local found = false
      for _, m in ipairs(t) do if m.target == path then found = true end end
      if not found then return 2 end
      local done, _, errno = core.umount(path, "detach")
      if done then return 0 elseif errno == core.errno.EINVAL then return 1 end
      return 3
    end)
    return ok and code or 3
  end))
  local _, code = core.waitpid(pid)
  if code == 0 then return false end
  if code == 1 then return true end
  if code == 2 then return nil, "locked " .. path .. ": not a mount point" end
  return nil, "locked " .. path .. ": the probe failed"
end

return ops
