--- isolate: run a Lua function in a forked child with its own mount namespace.
-- The child unshares a new mount namespace and makes `/` recursively
-- private before `fn` runs, so nothing it mounts can propagate back to the
-- caller's namespace (when not root, a user namespace mapping the caller to
-- root comes first). Results travel back through a pipe in mountns.child's
-- binary form.
-- @module mountns.isolate

local core = require "mountns.core"
local argcheck = require "mountns.args"
local child_proto = require "mountns.child"

local M = {}
local DEFAULT_TIMEOUT = 60

--- debug.traceback cut at the first frame of lua/mountns/<module>.lua
-- (see mountns.child.traceback).
M.traceback = child_proto.traceback

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

-- The child's side: set up, run, send an "o" (ok) frame with the
-- results, an "f" frame with a test framework's failure or an "e" frame
-- with the error; returns the exit status.
local function child(r, w, fn, ...)
  core.close_fd(r)
  local args = pack(...)
  local failure = false
  local ok, payload = xpcall(function()
    M.private_namespace()
    local res = pack(fn(unpack(args, 1, args.n)))
    return child_proto.encode("result", res)
  end, function(e)
    failure = child_proto.is_failure(e)
    -- a failed assertion reads as its message: its traceback is noise
    if failure then return tostring(e) end
    return M.traceback(child_proto.message(e), "isolate")
  end)
  pcall(child_proto.send, w, ok and "o" or failure and "f" or "e", tostring(payload))
  return ok and 0 or 1
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
  local pid, ferr = child_proto.fork(child, r, w, fn, ...)
  if not pid then
    core.close_fd(r); core.close_fd(w)
    error("isolate: " .. ferr, 2)
  end
  core.close_fd(w)
  local kind, body = child_proto.receive(r, timeout)
  core.close_fd(r)
  if kind == nil and body == "timeout" then
    core.kill(pid, "KILL")
    core.waitpid(pid)
    error(string.format("isolate: child %d ran past its timeout of %g s "
      .. "and was killed", pid, timeout), 2)
  end
  if kind == nil and body == "too large" then
    core.kill(pid, "KILL")
    core.waitpid(pid)
    error(string.format("isolate: the result of child %d is larger than "
      .. "%d bytes (mountns.child.MAX_BYTES)", pid, child_proto.MAX_BYTES), 2)
  end
  local how, code = core.waitpid(pid)
  if kind == "o" then
    local ok, vals = pcall(child_proto.decode, body)
    if not ok then error("isolate: bad result from child: " .. vals, 2) end
    return unpack(vals, 1, vals.n)
  elseif kind == "e" then
    error(body, 0)
  elseif kind == "f" then
    child_proto.raise_failure(body)
  end
  if how == "killed" then
    error(string.format("isolate: child %d was killed by %s", pid, code), 2)
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
