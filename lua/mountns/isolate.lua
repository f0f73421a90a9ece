--- isolate: run a Lua function in a forked child with its own mount namespace.
-- The child unshares a new mount namespace and makes `/` recursively
-- private before `fn` runs, so nothing it mounts can propagate back to the
-- caller's namespace (when not root, a user namespace mapping the caller to
-- root comes first). Results travel back through a pipe as a Lua literal.
-- @module mountns.isolate

local core = require "mountns.core"
local argcheck = require "mountns.args"

local M = {}
local DEFAULT_TIMEOUT = 60

-- 5.1 and LuaJIT set a chunk's environment with setfenv; 5.2+ pass it to
-- load (5.2 keeps loadstring, but not setfenv)
local load_in = setfenv and function(src, env) -- luacheck: ignore
  local f, err = loadstring(src, "=isolate") -- luacheck: ignore
  if f then setfenv(f, env) end -- luacheck: ignore
  return f, err
end or function(src, env)
  return load(src, "=isolate", "t", env)
end

local function number_literal(v)
  if v ~= v then return "(0/0)" end
  if v == math.huge then return "(1/0)" end
  if v == -math.huge then return "(-1/0)" end
  if math.type then return string.format("%q", v) end
  return string.format("%.17g", v)
end

-- Lua literal of a value made of nil, booleans, numbers, strings, tables.
local function serialize(v, seen, out)
  local t = type(v)
  if t == "nil" or t == "boolean" then
    out[#out + 1] = tostring(v)
  elseif t == "number" then
    out[#out + 1] = number_literal(v)
  elseif t == "string" then
    out[#out + 1] = string.format("%q", v)
  elseif t == "table" then
    if seen[v] then error("isolate: cannot return a cyclic table", 0) end
    seen[v] = true
    out[#out + 1] = "{"
    for k, x in pairs(v) do
      out[#out + 1] = "["
      serialize(k, seen, out)
      out[#out + 1] = "]="
      serialize(x, seen, out)
      out[#out + 1] = ","
    end
    out[#out + 1] = "}"
    seen[v] = nil
  else
    error("isolate: cannot return a " .. t .. " from the child", 0)
  end
end
M.serialize = function(v)
  local out = {}
  serialize(v, {}, out)
  return table.concat(out)
end

--- debug.traceback cut at the first frame of lua/mountns/<module>.lua: the
-- child's stack goes on into the caller's frames (fork copied them), which
-- are noise. A message that has a traceback already is kept as it is.
function M.traceback(e, module)
  if e:find("\nstack traceback:\n", 1, true) then return e end
  local tb = debug.traceback(e, 3)
  local cut = tb:find("\n\t%[C%]: in function 'xpcall'\n\t[^\n]*mountns/"
    .. module .. "%.lua")
  return cut and tb:sub(1, cut - 1) or tb
end

--- The value of a literal made by serialize (loaded with an empty env).
function M.deserialize(s)
  local f, err = load_in("return " .. s, {})
  if not f then error("isolate: bad literal: " .. err, 2) end
  return f()
end

local function pack(...)
  return { n = select("#", ...), ... }
end

local unpack = table.unpack or unpack -- luacheck: ignore

--- Give the calling process a private mount namespace (the isolate set-up).
-- Root gets a new mount namespace; others first a user namespace that maps
-- them to root.
function M.private_namespace()
  local _, euid = core.getuid()
  local ok, err = core.unshare { mount = true, user = euid ~= 0,
                                 map_root = euid ~= 0,
                                 propagation = "private" }
  if not ok then error(err, 0) end
end

-- The child's side: set up, run, send "ok"/"err" and the payload, _exit.
local function child(w, fn, ...)
  local args = pack(...)
  local ok, payload = xpcall(function()
    M.private_namespace()
    local res = pack(fn(unpack(args, 1, args.n)))
    local parts = {}
    for i = 1, res.n do parts[i] = M.serialize(res[i]) end
    return "return " .. (res.n > 0 and table.concat(parts, ",") or "")
  end, function(e)
    if type(e) ~= "string" then
      local s = tostring(e)
      if type(e) == "table" and type(e.message) == "string" then
        s = e.message
      end
      e = s
    end
    return M.traceback(e, "isolate")
  end)
  pcall(core.write_fd, w, (ok and "ok\n" or "err\n") .. tostring(payload))
  core._exit(ok and 0 or 1)
end

--- Run fn(...) in an isolated child with options.
-- @tparam table opts `timeout` in seconds (default 60)
-- @tparam function fn
-- @return fn's results
function M.isolate_with(opts, fn, ...)
  if type(opts) ~= "table" then
    error("bad argument #1 to 'isolate_with' (table expected, got "
      .. type(opts) .. ")", 2)
  end
  if type(fn) ~= "function" then
    error("bad argument #2 to 'isolate_with' (function expected, got "
      .. type(fn) .. ")", 2)
  end
  -- every option is checked before the fork: a raise after it would leave
  -- the child and the pipe behind
  argcheck.options(opts, "isolate_with", 1, { "timeout" }, 2)
  local timeout = argcheck.seconds(opts.timeout, "isolate_with", 1, "option 'timeout'", 2)
    or DEFAULT_TIMEOUT
  local r, w = assert(core.pipe())
  local pid, ferr = core.fork()
  if not pid then
    core.close_fd(r); core.close_fd(w)
    error("isolate: " .. ferr, 2)
  end
  if pid == 0 then
    core.close_fd(r)
    -- never return into the caller's code: whatever happens, _exit
    pcall(child, w, fn, ...)
    core._exit(2)
  end
  core.close_fd(w)
  local data = core.read_all(r, timeout)
  core.close_fd(r)
  if not data then
    core.kill(pid, "KILL")
    core.waitpid(pid)
    error(string.format("isolate: child %d ran past its timeout of %g s "
      .. "and was killed", pid, timeout), 2)
  end
  local how, code = core.waitpid(pid)
  if how == "killed" then
    error(string.format("isolate: child %d was killed by %s", pid, code), 2)
  end
  local status, payload = data:match("^(%a+)\n(.*)$")
  if status == "ok" then
    local f, lerr = load_in(payload, {})
    if not f then error("isolate: bad result from child: " .. lerr, 2) end
    return f()
  elseif status == "err" then
    error(payload, 0)
  end
  error(string.format("isolate: child %d exited with status %d and no "
    .. "result", pid, code), 2)
end

--- Run fn(...) in an isolated child (timeout 60 s).
function M.isolate(fn, ...)
  if type(fn) ~= "function" then
    error("bad argument #1 to 'isolate' (function expected, got " .. type(fn) .. ")", 2)
  end
  return M.isolate_with({}, fn, ...)
end

return M
