-- model.checks: a model namespace's argument checks, in the core's words
-- (csrc/args.c's flag parser and lmns_checkpath), so a bad argument
-- raises the same message on the model as on the kernel: flags as a
-- comma string, a list or a set of names; options tables; paths and
-- strings without NUL.

local argcheck = require "mountns.args"

local M = {}

local MOUNT_FLAGS = {
  ro = { "ro", true }, rw = { "ro", false },
  nosuid = { "nosuid", true }, suid = { "nosuid", false },
  nodev = { "nodev", true }, dev = { "nodev", false }, noexec = { "noexec", true },
  exec = { "noexec", false }, sync = {}, async = {}, dirsync = {}, mand = {}, nomand = {},
  silent = {}, loud = {}, relatime = { "atime", "relatime" }, norelatime = {},
  noatime = { "atime", "noatime" }, atime = {}, strictatime = { "atime", "strictatime" },
  nodiratime = { "nodiratime", true }, diratime = {}, lazytime = {}, nolazytime = {},
  nosymfollow = { "nosymfollow", true }, symfollow = {},
  shared = { prop = "shared" }, rshared = { prop = "shared", rec = true },
  private = { prop = "private" }, rprivate = { prop = "private", rec = true },
  slave = { prop = "slave" }, rslave = { prop = "slave", rec = true },
  unbindable = { prop = "unbindable" }, runbindable = { prop = "unbindable", rec = true },
  bind = { op = "bind" }, rbind = { op = "bind", rec = true }, move = { op = "move" },
  remount = { op = "remount" },
}
local UMOUNT_FLAGS = { force = true, detach = true, lazy = true, expire = true, nofollow = true }

-- flags as the core reads them: nil, "a,b", {"a", "b"}, {a = true}; a list
-- of names
local NO_FLAGS = setmetatable({}, { __newindex = function() error("model: NO_FLAGS", 2) end })

-- the names of one comma string s of flags, appended to names (no
-- closure: LuaJIT does not compile the making of one)
local function flag_names(s, set, fname, argn, names)
  -- "" is no flag; an empty name in a list is a typo (as in csrc/args.c)
  if s ~= "" and (s:find(",,", 1, true) or s:sub(1, 1) == "," or s:sub(-1) == ",") then
    argcheck.error(fname, argn, "empty flag name in '" .. s:gsub("%z.*", "") .. "'", 4)
  end
  for n in s:gmatch("[^,]+") do
    if not set[n] then
      argcheck.error(fname, argn, "unknown flag '" .. n:gsub("%z", "\\0") .. "'", 4)
    end
    names[#names + 1] = n
  end
end

local function check_flags(flags, set, fname, argn)
  if flags == nil then return NO_FLAGS end -- (the callers only read it)
  local names = {}
  if type(flags) == "string" then
    flag_names(flags, set, fname, argn, names)
  elseif type(flags) == "table" then
    for i = 1, #flags do
      if type(flags[i]) ~= "string" then
        argcheck.error(fname, argn, string.format("flag #%d is a %s, expected a string",
          i, type(flags[i])), 4)
      end
      flag_names(flags[i], set, fname, argn, names)
    end
    for k, v in pairs(flags) do
      if not (type(k) == "number" and k >= 1 and k <= #flags and k % 1 == 0) then
        if type(k) ~= "string" then
          argcheck.error(fname, argn, string.format("unexpected key %s (%s): flags are a "
            .. "list of names or a set {name = true}", tostring(k), type(k)), 4)
        end
        if not set[k] then argcheck.error(fname, argn, "unknown flag '" .. k .. "'", 4) end
        if type(v) ~= "boolean" then
          argcheck.error(fname, argn, string.format("flag '%s' must be true or false, got %s",
            k, type(v)), 4)
        end
        if v then names[#names + 1] = k end
      end
    end
  elseif type(flags) == "number" then
    error("ns:" .. fname:gsub("^ns:", "") .. ": raw flag bits are not available in the model", 4)
  else
    argcheck.error(fname, argn, "flags expected (comma string, list or set of names), got "
      .. type(flags), 4)
  end
  return names
end

-- (nil gives a shared empty table: the callers only read it)
local NO_OPTIONS = setmetatable({}, { __newindex = function() error("model: NO_OPTIONS", 2) end })
local RECURSIVE, BIND = { recursive = "boolean" }, { bind = "boolean" }

local function check_keys(opts, known, fname, argn)
  if opts == nil then return NO_OPTIONS end
  if type(opts) ~= "table" then
    argcheck.error(fname, argn, "table expected, got " .. type(opts), 4)
  end
  for k in pairs(opts) do
    if type(k) ~= "string" then
      argcheck.error(fname, argn, "option keys must be strings, got " .. type(k), 4)
    end
    if not known[k] then argcheck.error(fname, argn, "unknown option '" .. k .. "'", 4) end
  end
  for k, v in pairs(opts) do
    if type(v) ~= "boolean" and known[k] == "boolean" then
      argcheck.error(fname, argn, string.format("option '%s' must be a boolean, got %s",
        k, type(v)), 4)
    end
  end
  return opts
end

local function opt_string(v, fname, argn, what)
  if v == nil then return nil end
  if type(v) == "number" then return tostring(v) end
  if type(v) ~= "string" then
    argcheck.error(fname, argn, "string expected, got " .. type(v), 4)
  end
  if v:find("\0", 1, true) then argcheck.error(fname, argn, what .. " contains a NUL byte", 4) end
  return v
end

local function check_path(p, fname, argn)
  if type(p) ~= "string" then -- (a number is not a path: the core's lmns_checkpath)
    argcheck.error(fname, argn, "string expected, got " .. (p == nil and "no value" or type(p)), 4)
  end
  if p:find("\0", 1, true) then argcheck.error(fname, argn, "path contains a NUL byte", 4) end
  return p
end

M.MOUNT_FLAGS, M.UMOUNT_FLAGS = MOUNT_FLAGS, UMOUNT_FLAGS
M.check_flags, M.check_keys, M.opt_string, M.check_path = check_flags, check_keys, opt_string,
  check_path
M.NO_OPTIONS, M.RECURSIVE, M.BIND = NO_OPTIONS, RECURSIVE, BIND

return M
