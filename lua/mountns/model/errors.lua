--- model.errors: the model's failures in the core's form ("bind /X /Z: No
-- such file or directory (ENOENT)"), so a model namespace fails with the
-- kernel namespace's words and a comparison can match errno names.
-- A failure is raised as a table (Failure) and turned into the message by
-- the namespace method that called (model.space's `method`): the method
-- raises it at its caller's line, as the core does.
-- @module mountns.model

local M = {}

-- strerror(3) of glibc for the errno names the model raises
local STRERROR = {
  EPERM = "Operation not permitted", ENOENT = "No such file or directory",
  EINVAL = "Invalid argument", ENOTDIR = "Not a directory",
  EBUSY = "Device or resource busy", ELOOP = "Too many levels of symbolic links",
  EEXIST = "File exists", ENODEV = "No such device", EISDIR = "Is a directory",
  EROFS = "Read-only file system", EACCES = "Permission denied",
  ENOTEMPTY = "Directory not empty", EXDEV = "Invalid cross-device link",
  ENOSPC = "No space left on device", ENOSYS = "Function not implemented",
  EAGAIN = "Resource temporarily unavailable",
}
M.STRERROR = STRERROR

-- The escaping of paths in messages (the core's: control bytes and the
-- backslash as \ooo).
local function escape(s)
  return (s:gsub("[%c\\\127]", function(c) return string.format("\\%03o", c:byte()) end))
end

-- A failure in the core's form; raised as the error value (a table the
-- method turns into the message).
local Failure = {}
Failure.__index = Failure
local function fail(errno, op, p1, p2)
  local text = op
  if p1 then text = text .. " " .. escape(p1) end
  if p2 then text = text .. " " .. escape(p2) end
  error(setmetatable({ errno = errno,
    message = string.format("%s: %s (%s)", text, STRERROR[errno] or errno, errno) },
    Failure), 0)
end

-- A call this kernel lacks: ENOSYS and the release that brought it, in
-- the core's words ("...: Function not implemented (ENOSYS): needs Linux
-- 6.5", lmns_fail).
local function fail_since(since, op, p1, p2)
  local ok, f = pcall(fail, "ENOSYS", op, p1, p2)
  assert(not ok)
  f.message = f.message .. ": needs Linux " .. since
  error(f, 0)
end

M.escape, M.Failure, M.fail, M.fail_since = escape, Failure, fail, fail_since

--- The errno name at the end of a failure message ("... (ENOENT)"), or nil.
-- @tparam string msg
-- @treturn string|nil
function M.errno_of(msg)
  -- a call the kernel lacks ends in the release it needs ("(ENOSYS): needs Linux 6.5")
  return type(msg) == "string" and (msg:match("%((E[A-Z0-9]+)%)$")
    or msg:match("%((ENOSYS)%): needs Linux [%d.]+$")) or nil
end

return M
