--- ops: the operations a namespace runs, inside it.
-- A scenario namespace's methods (`mountns.namespace`) run them in the
-- scenario process after entering the namespace, or ask the namespace's
-- agent (`mountns.agent`) to run them there: an agent is a fork of the
-- scenario process, so the same functions exist in both.
-- @module mountns.ops

local core = require "mountns.core"

local ops = {}

--- A core call, e.g. ops.call("mount", "x", "/X", "tmpfs").
function ops.call(fname, ...)
  return core[fname](...)
end

--- pivot_root into new_root and detach the old root; or, with put_old (a
-- directory, as a path inside new_root), keep the old root mounted there,
-- as pivot_root(8) does. Without put_old it is pivot_root(2)'s "." "."
-- form: the old root is stacked on the new one and detached from there,
-- so nothing is made in new_root (a read-only one will do). With
-- old_root ("rslave" or "rprivate"), the old root's tree gets that
-- propagation first, so the detach (an unmount of every mount in it)
-- cannot propagate to their peers: runc's pivotRoot makes it rslave.
-- The one home of "pivot into this directory": a scenario's child pivots
-- with it too.
function ops.pivot_root(new_root, put_old, old_root)
  -- the old root, to come back to after the pivot (runc's oldroot fd):
  -- after pivot_root(".", ".") it is stacked on the new root, and "."
  -- (the cwd) is the new root below it, whose whole tree MS_REC would
  -- reach; a path to put_old crosses into the old root
  local oldfd, ok, err, errno
  if old_root and not put_old then
    oldfd, err, errno = core.open_dir("/")
    if not oldfd then return nil, err, errno end
  end
  ok, err, errno = core.chdir(new_root)
  local old = put_old and "." .. put_old or "."
  if ok then ok, err, errno = core.pivot_root(".", old) end
  if ok and oldfd then ok, err, errno = core.fchdir(oldfd) end
  if ok and old_root then
    ok, err, errno = core["make_" .. old_root:sub(2)](old, { recursive = true })
  end
  if oldfd then core.close_fd(oldfd) end
  -- umount's "." is the mount on top: the old root
  if ok and not put_old then ok, err, errno = core.umount(".", "detach") end
  if not ok then return nil, err, errno end
  assert(core.chdir("/"))
  return true
end

-- An io failure in the core's form: "op path: strerror (ENAME)", errno
-- (core.errno maps numbers back to names).
local function failed(op, path, err, errno)
  -- io.open's message is "path: strerror"; the core's form names the op
  local why = tostring(err):match(": ([^:]*)$") or tostring(err)
  return nil, string.format("%s %s: %s (%s)", op, core.escape(path), why,
    core.errno[errno] or tostring(errno)), errno
end

--- Write text to a file (created or truncated), as `printf %s text > path`.
function ops.write(path, text)
  local f, err, errno = io.open(path, "wb")
  if not f then return failed("write", path, err, errno) end
  local ok, werr, werrno = f:write(text)
  local closed, cerr, cerrno = f:close()
  if not ok then return failed("write", path, werr, werrno) end
  if not closed then return failed("write", path, cerr, cerrno) end
  return true
end

--- A file's content.
function ops.read(path)
  local f, err, errno = io.open(path, "rb")
  if not f then return failed("read", path, err, errno) end
  local text, rerr, rerrno = f:read("*a")
  f:close()
  -- a directory opens but cannot be read (EISDIR)
  if not text then return failed("read", path, rerr, rerrno) end
  return text
end

--- Whether the mount at path is locked: try to unmount it in a throw-away
-- copy of the namespace (same user namespace, so the locks are copied and
-- none are added), made private first so the unmount cannot propagate
-- back (`core.umount_copy`: a child that shares this process's memory,
-- so no fork of a Lua process). Returns true/false, or nil, "not mounted".
function ops.locked(path)
  -- a mount point: statmount(2) of the mount the path is on says so in a
  -- few microseconds (the whole table read and parsed costs ~40 us);
  -- anything else (no statmount, another mount's path) asks the table
  local r = core.statmount(path)
  if not (r and r.target == path) then
    local t = core.mountinfo()
    if not (t and t[1]) then return nil, "locked " .. path .. ": the probe failed" end
    local found = false
    for _, m in ipairs(t) do
      if m.target == path then found = true; break end
    end
    if not found then return nil, "locked " .. path .. ": not a mount point" end
  end
  local done, err, errno = core.umount_copy(path)
  if done then return false end
  -- EINVAL of the copy's umount only: the make-private step before it
  -- can fail with EINVAL too (a chroot whose / is not a mount)
  if errno == core.errno.EINVAL and err:find("^umount ") then return true end
  return nil, "locked " .. path .. ": the probe failed: " .. err
end

return ops
