-- model.checks: a model namespace's argument checks, in the core's words
-- (csrc/args.c's flag parser, through mountns.args.flags over the names
-- of mountns.flags, and lmns_checkpath), so a bad argument raises the same
-- message on the model as on the kernel: flags as a comma string, a list
-- or a set of names; options tables; paths and strings without NUL.

local argcheck = require "mountns.args"
local flagsets = require "mountns.flags"

local M = {}

-- A flag argument of kind ("mount", "umount"), read as the core reads
-- one (mountns.args.flags, over mountns.flags's names), but raw flag bits:
-- the model has no bits. That message has no place in it (level 0): the
-- method raises it at its caller's line.
local function check_flags(flags, kind, fname, argn)
  if type(flags) == "number" then
    error(fname .. ": raw flag bits are not available in the model", 0)
  end
  local names = argcheck.flags(flags, flagsets[kind], fname, argn, 2)
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

M.check_flags, M.check_keys, M.opt_string, M.check_path = check_flags, check_keys, opt_string,
  check_path
M.NO_OPTIONS, M.RECURSIVE, M.BIND = NO_OPTIONS, RECURSIVE, BIND

return M
