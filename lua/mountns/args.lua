--- args: the argument checks shared by every public function of the Lua
-- layer, with the C core's wording (`csrc/args.c`): misuse raises
-- `bad argument #N to 'fname' (why)` at the caller's line, before anything
-- is done. An options table with a key no one reads raises, so that a
-- misspelt option (`timout`, `propogation`) is never silently ignored; a
-- path with a NUL byte raises, as the core does, because the kernel would
-- read it cut at the NUL.
--
-- `level` follows `error`: 1 is the function that calls the check, 2 its
-- caller (the usual value: the user's line when a public function checks
-- its own arguments).
-- This module requires nothing: every other module may use it.
-- @module mountns.args

local M = {}

--- Raise `bad argument #argn to 'fname' (msg)` at level.
-- @tparam string fname the public name (`"scenario"`, `"ns:unshare"`)
-- @tparam int argn the argument's position (after self for a method)
-- @tparam string msg why
-- @tparam[opt=1] int level as `error`'s, from the function that calls this
function M.error(fname, argn, msg, level)
  error(string.format("bad argument #%d to '%s' (%s)", argn, fname, msg),
    (level or 1) + 1)
end

-- known as a set, cached by the list's identity (each list is a constant)
local sets = setmetatable({}, { __mode = "k" })

local function set_of(known)
  local s = sets[known]
  if not s then
    s = {}
    for _, k in ipairs(known) do s[k] = true end
    sets[known] = s
  end
  return s
end

--- An options table: nil (gives an empty table) or a table whose every key
-- is one of `known`. Raises naming the function, the argument and the key.
-- @param opts the argument
-- @tparam string fname the public name
-- @tparam int argn the argument's position
-- @tparam {string,...} known the option names the function reads
-- @tparam[opt=1] int level
-- @treturn table opts, or a new empty table when opts is nil
function M.options(opts, fname, argn, known, level)
  level = (level or 1) + 1
  if opts == nil then return {} end
  if type(opts) ~= "table" then
    M.error(fname, argn, "options table expected, got " .. type(opts), level)
  end
  local set = set_of(known)
  for k in pairs(opts) do
    if type(k) ~= "string" then
      M.error(fname, argn, "option keys must be strings, got " .. type(k)
        .. " " .. tostring(k), level)
    end
    if not set[k] then
      M.error(fname, argn, "unknown option '" .. k:gsub("%z", "\\0") .. "'", level)
    end
  end
  return opts
end

--- A path: a string without a NUL byte, as the core takes it
-- (`lmns_checkpath`: a number is not a path, `mkdir(0/0)` made "-nan").
-- @param path the argument
-- @tparam string fname the public name
-- @tparam int argn the argument's position
-- @tparam[opt=1] int level
-- @treturn string path
function M.path(path, fname, argn, level)
  level = (level or 1) + 1
  local t = type(path)
  if t ~= "string" then
    M.error(fname, argn, "path expected, got " .. (path == nil and "no value" or t), level)
  end
  if path:find("\0", 1, true) then
    M.error(fname, argn, "path contains a NUL byte", level)
  end
  return path
end

--- A PID (a whole number from 1), or nil.
-- @param pid the argument
-- @tparam string fname the public name
-- @tparam int argn the argument's position
-- @tparam[opt=1] int level
-- @return pid
function M.pid(pid, fname, argn, level)
  -- (NaN passes `pid < 1` but not `pid % 1 ~= 0`)
  if pid ~= nil and (type(pid) ~= "number" or pid < 1 or pid % 1 ~= 0) then
    M.error(fname, argn, "PID expected, got " .. (type(pid) == "number" and tostring(pid)
      or type(pid)), (level or 1) + 1)
  end
  return pid
end

--- A number greater than 0 (seconds), or nil.
-- @param v the value
-- @tparam string fname the public name
-- @tparam int argn the argument's position
-- @tparam string what its name in the message ("option 'timeout'")
-- @tparam[opt=1] int level
-- @return v
function M.seconds(v, fname, argn, what, level)
  if v == nil then return nil end
  if type(v) ~= "number" or v ~= v or v <= 0 then
    M.error(fname, argn, string.format("%s must be a number of seconds > 0, got %s",
      what, type(v) == "number" and tostring(v) or type(v)), (level or 1) + 1)
  end
  return v
end

--- The times of a watch's options (`ns:watch`, `mountns.watch`,
-- `watch.open`, and a model namespace's `ns:watch`): `timeout` >= 0,
-- `interval` > 0 (or false: no re-reads), neither NaN: an interval of 0
-- re-read the table without end and starved the deadline, a NaN deadline
-- never came. level as error's, from the caller.
function M.watch_times(opts, fname, argn, level)
  local t = opts.timeout
  if t ~= nil and (type(t) ~= "number" or t ~= t or t < 0) then
    M.error(fname, argn, "option 'timeout' must be a number of seconds >= 0, got "
      .. (type(t) == "number" and tostring(t) or type(t)), level + 1)
  end
  if opts.interval ~= false then
    M.seconds(opts.interval, fname, argn, "option 'interval'", level + 1)
  end
end

--- The options of `ns:watch` and `mountns.watch` (on the kernel and on
-- the model): `fallback`, `timeout`, `interval`, `run`, `callback`;
-- raises at level (as error's, from the caller).
-- @treturn table opts
function M.watch_options(opts, fname, argn, level)
  opts = M.options(opts, fname, argn,
    { "fallback", "timeout", "interval", "run", "callback" }, level + 1)
  M.watch_times(opts, fname, argn, level + 1)
  for _, k in ipairs { "run", "callback" } do
    if opts[k] ~= nil and type(opts[k]) ~= "function" then
      M.error(fname, argn, string.format("option '%s' must be a function, got %s",
        k, type(opts[k])), level + 1)
    end
  end
  return opts
end

-- ---- flags ------------------------------------------------------------------
-- The flag parser of csrc/args.c (lmns_checkflags) in Lua, for the model:
-- the same forms and the same messages, over a set of names the caller
-- gives (mountns.flags's: the one home of the names, data this module
-- does not load, so that a command that reads no flags loads none).

-- (nil gives one shared empty list: the callers only read it)
local NO_FLAGS = setmetatable({}, { __newindex = function() error("args: NO_FLAGS", 2) end })

-- the names of one comma string s of flags, appended to names (no
-- closure: LuaJIT does not compile the making of one)
local function flag_names(s, set, fname, argn, names, level)
  -- "" is no flag; an empty name in a list is a typo (as in csrc/args.c)
  if s ~= "" and (s:find(",,", 1, true) or s:sub(1, 1) == "," or s:sub(-1) == ",") then
    M.error(fname, argn, "empty flag name in '" .. s:gsub("%z.*", "") .. "'", level + 1)
  end
  for n in s:gmatch("[^,]+") do
    if not set[n] then
      M.error(fname, argn, "unknown flag '" .. n:gsub("%z", "\\0") .. "'", level + 1)
    end
    names[#names + 1] = n
  end
end

--- A flag argument of a set of names (`mountns.flags.mount` or
-- `.umount`), read as the core reads one: nil, a comma string ("ro,nosuid"), a list of
-- names, a set `{name = true}` or both in one table; an unknown name, an
-- empty name in a list, a value that is not a boolean or any other key
-- raises, in the core's words. (Raw flag bits, a number alone or in a
-- list, are the core's mount set's alone: they raise here as the core's
-- umount set refuses them.)
-- @param flags the argument
-- @tparam table set the names: name -> anything but false
-- @tparam string fname the public name
-- @tparam int argn the argument's position
-- @tparam[opt=1] int level
-- @treturn {string,...} the names, in the argument's order (a set's last)
function M.flags(flags, set, fname, argn, level)
  level = (level or 1) + 1
  if flags == nil then return NO_FLAGS end
  local names = {}
  if type(flags) == "string" then
    flag_names(flags, set, fname, argn, names, level)
  elseif type(flags) == "table" then
    for i = 1, #flags do
      if type(flags[i]) ~= "string" then
        M.error(fname, argn, string.format("flag #%d is a %s, expected a string",
          i, type(flags[i])), level)
      end
      flag_names(flags[i], set, fname, argn, names, level)
    end
    for k, v in pairs(flags) do
      if not (type(k) == "number" and k >= 1 and k <= #flags and k % 1 == 0) then
        if type(k) ~= "string" then
          M.error(fname, argn, string.format("unexpected key %s (%s): flags are a "
            .. "list of names or a set {name = true}", tostring(k), type(k)), level)
        end
        if not set[k] then M.error(fname, argn, "unknown flag '" .. k .. "'", level) end
        if type(v) ~= "boolean" then
          M.error(fname, argn, string.format("flag '%s' must be true or false, got %s",
            k, type(v)), level)
        end
        if v then names[#names + 1] = k end
      end
    end
  else
    M.error(fname, argn, "flags expected (comma string, list or set of names), got "
      .. type(flags), level)
  end
  return names
end

-- ---- a scenario namespace's methods ---------------------------------------
-- The checks the methods of both namespace classes make (`mountns.namespace`
-- on the kernel, `mountns.model` on the model): one home, so that the same
-- bad call raises the same message on either.

--- The first check of a method `ns:name`: self is a namespace of the class
-- (`is_ns`: a call with a dot, ns.mkdir(p), passes p as self) and open.
-- @param ns the method's self
-- @tparam boolean is_ns whether ns is of the method's class
-- @tparam string name the method's name ("mkdir")
-- @tparam[opt=1] int level
function M.self(ns, is_ns, name, level)
  level = (level or 1) + 1
  if not is_ns then
    error(string.format("calling 'ns:%s' on bad self (scenario namespace expected, "
      .. "got %s): call it with a colon, ns:%s(...)", name, type(ns), name), level)
  end
  if ns.closed then
    error(string.format("attempt to use closed namespace %s (ns:%s)", tostring(ns), name), level)
  end
end

-- the option names each method reads
local NS_OPTIONS = {
  mkdir = { "parents", "mode" },
  pivot_root = { "put_old", "old_root" },
  unshare = { "propagation", "label", "user" },
  mounts = { "propagate_from", "root" },
  find = { "root" },
}

--- The options table of a method `ns:name` (`options` with the names that
-- method reads).
-- @tparam string name the method's name ("mounts")
-- @param opts the argument
-- @tparam int argn its position
-- @tparam[opt=1] int level
-- @treturn table opts, or a new empty table when opts is nil
function M.ns_options(name, opts, argn, level)
  local o = M.options(opts, "ns:" .. name, argn, NS_OPTIONS[name], (level or 1) + 1)
  return o -- (not a tail call: the level counts this function's frame)
end

--- The `old_root` option of `ns:pivot_root` (both backends): nil,
-- "rslave" or "rprivate"; raises as a bad argument #2.
-- @param v the option's value
-- @tparam[opt=1] int level
function M.old_root(v, level)
  if v ~= nil and v ~= "rslave" and v ~= "rprivate" then
    M.error("ns:pivot_root", 2, "option 'old_root': \"rslave\" or \"rprivate\" expected, got "
      .. (type(v) == "string" and ("'" .. v .. "'") or type(v)), (level or 1) + 1)
  end
end

-- mkdir's mode, as the core reads it (csrc/files.c, lmns_mkdir_mode): an
-- integer 0..07777 or an octal string ("0755", "755"), never decimal
local function mkdir_mode(mode, level)
  local t = type(mode)
  if t == "number" then
    if not (mode >= 0 and mode <= 4095 and mode == math.floor(mode)) then
      M.error("ns:mkdir", 2, "mode " .. tostring(mode) .. " out of range (0 to 4095, octal 07777)",
        level + 1)
    end
  elseif t == "string" then
    local digits = mode ~= "" and mode:match("^0*([0-7]*)$")
    if not digits or #digits > 4 or (tonumber(digits, 8) or 0) > 4095 then
      M.error("ns:mkdir", 2, "mode '" .. mode .. "' is not an octal mode (\"0755\", \"755\" or "
        .. "an integer)", level + 1)
    end
  elseif t ~= "nil" then
    M.error("ns:mkdir", 2, "mode must be an integer or an octal string, got " .. t, level + 1)
  end
end

--- The arguments of `ns:mkdir(path, opts)`, checked as the core checks
-- them (the same messages on the kernel and on the model): its options'
-- names, the path (a string, no NUL byte), `parents` (a
-- boolean) and `mode` (an integer 0..07777 or an octal string).
-- @param path the argument
-- @param opts the argument
-- @tparam[opt=1] int level
-- @treturn string path
-- @treturn table opts (a new empty table when nil)
function M.mkdir(path, opts, level)
  level = (level or 1) + 1
  opts = M.options(opts, "ns:mkdir", 2, NS_OPTIONS.mkdir, level)
  local t = type(path)
  if t ~= "string" then
    M.error("ns:mkdir", 1, "string expected, got " .. t, level)
  elseif path:find("\0", 1, true) then
    M.error("ns:mkdir", 1, "path contains a NUL byte", level)
  end
  local parents = opts.parents
  if parents ~= nil and type(parents) ~= "boolean" then
    M.error("ns:mkdir", 2, "option 'parents' must be a boolean, got " .. type(parents), level)
  end
  mkdir_mode(opts.mode, level)
  return path, opts
end

-- unshare's propagation values (core.unshare's, as unshare(1) has them)
local PROPAGATIONS = { private = true, shared = true, slave = true, unchanged = true }

--- The options of `ns:unshare(opts)`.
-- @param opts the argument
-- @tparam[opt=1] int level
-- @treturn table opts (a new empty table when nil)
-- @treturn string the propagation ("private" when not given)
function M.unshare(opts, level)
  level = (level or 1) + 1
  opts = M.options(opts, "ns:unshare", 1, NS_OPTIONS.unshare, level)
  local prop = opts.propagation or "private"
  if not PROPAGATIONS[prop] then
    M.error("ns:unshare", 1, string.format("option 'propagation': invalid value '%s' "
      .. "(private, shared, slave or unchanged)", tostring(prop)), level)
  end
  if opts.user ~= nil and type(opts.user) ~= "boolean" then
    M.error("ns:unshare", 1, "option 'user' must be a boolean, got " .. type(opts.user), level)
  end
  return opts, prop
end

--- An option of a given type, or absent: raises `option 'key' must be a
-- T, got U` otherwise.
-- @tparam table opts the options table (checked by `options`)
-- @tparam string key the option's name
-- @tparam string t the type expected ("boolean", "string", "table", "function")
-- @tparam string fname the public name
-- @tparam int argn the options table's position
-- @tparam[opt=1] int level
-- @return the option's value
function M.option(opts, key, t, fname, argn, level)
  local v = opts[key]
  if v ~= nil and type(v) ~= t then
    M.error(fname, argn, string.format("option '%s' must be a %s, got %s", key, t, type(v)),
      (level or 1) + 1)
  end
  return v
end

--- A value of a given type (`"function"`, `"string"`): raises `T expected,
-- got U` otherwise.
-- @param v the argument
-- @tparam string t the type expected
-- @tparam string fname the public name
-- @tparam int argn the argument's position
-- @tparam[opt=1] int level
-- @return v
function M.typed(v, t, fname, argn, level)
  if type(v) ~= t then
    M.error(fname, argn, t .. " expected, got " .. type(v), (level or 1) + 1)
  end
  return v
end

return M
