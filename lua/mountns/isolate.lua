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
local verdict = require "mountns.verdict"
local driver = require "mountns.driver"

local M = {}
--- A child's timeout when the caller gives none, in seconds: a
-- scenario's (`mountns.driver`).
M.DEFAULT_TIMEOUT = driver.DEFAULT_TIMEOUT

--- debug.traceback cut at the first frame of lua/mountns/<module>.lua
-- (see mountns.child.traceback).
M.traceback = child_proto.traceback

local function pack(...)
  return { n = select("#", ...), ... }
end

local unpack = table.unpack or unpack -- luacheck: ignore

-- The dynamic linker binds a libc function of the interpreter on its first
-- call (lazy binding), in the process that makes it: a function first
-- called in a child is bound again in every child, each time about ten
-- page faults (the libraries' symbol tables, the GOT page copied). Every
-- child formats (string.format: memcpy) and searches plain strings
-- (memchr): bound here once, before any fork. (core.so is linked with
-- -z now.)
local _ = string.format("%08x", 0)
_ = ("/"):find("\0", 1, true)

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

-- The child's side: set up (`setup`, default private_namespace), run, send
-- an "o" (ok) frame with the results, an "f" frame with a test framework's
-- failure, an "s" frame with a skip's reason or an "e" frame with the
-- error, and only then run what setup
-- returned (the teardown);
-- returns the exit status.
local function child(fds, setup, fn, ...)
  -- first: the child's allocations from a fresh arena, the collector
  -- stopped (fewer copy-on-write faults on the caller's heap; Lua 5.4)
  core.fresh_heap()
  child_proto.contain()
  local w = fds.result
  -- the one result goes through w: no agent or helper forked here may
  -- write into it or hold it open (its end of file tells the parent that
  -- the result is whole)
  child_proto.keep_from_children(w)
  local args = pack(...)
  local frame, teardown = "e", nil
  local function handler(e)
    -- a failed assertion reads as its message: its traceback is noise;
    -- so does a skip (its reason)
    local status = verdict.status_of(e)
    if status == "fail" then frame = "f"; return tostring(e) end
    if status == "skip" then frame = "s"; return child_proto.message(e) end
    return M.traceback(child_proto.message(e), "isolate")
  end
  local ok, payload = xpcall(function()
    teardown = setup()
    return pack(fn(unpack(args, 1, args.n)))
  end, handler)
  -- what fn printed goes before its result (a caller may report the
  -- result before this process's exit, which would flush it: reap_later);
  -- only when there is some: io.stdout:flush() would take the stream's
  -- lock and make the dynamic linker bind the interpreter's fflush in
  -- every child (about ten page faults; the parent never calls it there)
  core.flush_stdout()
  -- results of scalars (nil, booleans, integers, strings: the usual ones)
  -- are encoded and sent by the core in one call, without the Lua strings
  -- of the encoding and the frame's header (each new one written into the
  -- string table the child shares with its parent); any other by
  -- child.encode, whose error (a value that cannot cross) is the result
  if ok and core.send_values(w, child_proto.MAX_BYTES,
                             unpack(payload, 1, payload.n)) ~= false then
    payload = nil
  elseif ok then
    -- its error names the result that cannot cross ("result #2 is a
    -- function"): no traceback, whose frames would be mountns.child's
    ok, payload = pcall(child_proto.encode, "result", payload)
  end
  if payload ~= nil then
    pcall(child_proto.send, w, ok and "o" or frame, tostring(payload))
  end
  core.close_fd(w)
  child_proto.keep_from_children(w, false)
  if teardown then pcall(teardown) end
  child_proto.kill_tree(core.getpid())
  return ok and 0 or 1
end

-- whether core.features() probed the kernel in this process (or before
-- the fork that made it)
local probed = false

-- reap_later's state: the PID of the process that asked (a forked child
-- does not inherit the choice) and the children whose result is in but
-- whose exit was not waited for
local later_pid, exiting, exit_by = nil, {}, {}

--- Reap the children whose result is in and whose exit was not waited for
-- (`reap_later`): those that have ended, or with `wait` all of them (each
-- waited for until its timeout's end at most, then killed).
-- @tparam[opt] boolean wait
function M.reap(wait)
  child_proto.reap_list(exiting, wait, exit_by)
end

--- From now on, in this process, a child's result is returned as soon as
-- it is in, without waiting for the child's exit (the teardown of its
-- namespaces: expedited RCU grace periods, a few tenths of a millisecond
-- each), which overlaps what the caller does next; such children are
-- reaped by the next isolate or scenario (those that have ended) and by
-- `reap(true)`, which the caller must call before it exits (a child
-- orphaned unreaped may stay a zombie: not every init reaps). A child
-- that sends no result is waited for as always (its exit status is the
-- error). For `mountns run`'s script processes, which end with _exit.
function M.reap_later()
  later_pid = core.getpid()
end

-- The parent's side of the protocol, every step bounded by the child's
-- deadline (proc, from child.spawn): one
-- frame, then the end of file (the child closes its end once it sent the
-- frame), then, unless `later` (reap_later), the child's exit. Returns
-- the frame's kind and body (nil, nil: none came) and the exit's how and
-- code; or false and why the child must be killed: its timeout passed
-- (then "timeout" too), or it broke the protocol (a corrupt or unknown
-- frame, a second one).
-- Whatever the child does (closes its fds, writes garbage into them,
-- loops), the wait ends by the deadline.
local function await(proc, timeout, later)
  local past = "ran past its timeout of %g s and was killed"
  local kind, body = proc:receive("result")
  if kind then
    if kind ~= "o" and kind ~= "e" and kind ~= "f" and kind ~= "s" then
      return false, "broke the result protocol (a frame of unknown kind "
        .. string.format("%q", kind) .. ") and was killed"
    end
    -- a byte more is a second frame (or garbage): the protocol is broken
    -- at once, whatever follows
    local more, why = core.read_exact(proc.fds.result, 1, proc:left())
    if why == "timeout" then
      return false, string.format(past .. " (its result was in, its result pipe still open)",
                                  timeout), "timeout"
    elseif why ~= "eof" then
      return false, "broke the result protocol (" .. (more and "more than one result frame"
        or tostring(why)) .. ") and was killed"
    end
    if later then return kind, body end
  elseif body == "timeout" then
    return false, string.format(past, timeout), "timeout"
  elseif body == "too large" then
    return false, string.format("sent a result larger than %d bytes "
      .. "(mountns.child.MAX_BYTES) and was killed", child_proto.MAX_BYTES)
  elseif body ~= "eof" then
    return false, "broke the result protocol (" .. (body == "corrupt frame"
      and "a corrupt frame header" or tostring(body)) .. ") and was killed"
  end
  local how, code = proc:wait()
  if how == "running" then
    return false, string.format(past .. (kind and " (its result was in, its process not ended)"
      or " (it closed its result pipe without a result)"), timeout), "timeout"
  end
  if not how then error(code, 0) end
  return kind, body, how, code
end

-- isolate_with's work, with the child's set-up as a parameter (`spawn`).
local function spawn(setup, opts, level, fn, ...)
  -- every option is checked before the fork: a raise after it would leave
  -- the child and the pipe behind
  argcheck.options(opts, "isolate_with", 1, { "timeout" }, level + 1)
  local timeout = argcheck.seconds(opts.timeout, "isolate_with", 1, "option 'timeout'",
    level + 1) or M.DEFAULT_TIMEOUT
  -- probed once here, not in every child (the cache is inherited by fork);
  -- asked once per process (each call builds a table)
  if not probed then
    core.features()
    probed = true
  end
  if exiting[1] then M.reap() end
  local proc, ferr = child_proto.spawn({ up = { "result" }, timeout = timeout }, child,
                                       setup, fn, ...)
  if not proc then error("isolate: " .. ferr, level + 1) end
  local pid = proc.pid
  local later = later_pid ~= nil and later_pid == core.getpid()
  -- an error while waiting (Ctrl-C in the standalone interpreter raises
  -- "interrupted!" as the wait returns) ends the child too
  local waited, kind, body, how, code = pcall(await, proc, timeout, later)
  proc:close()
  if not waited or kind == false then
    -- the child and all it started (agents, tools, their orphans)
    proc:kill_tree()
    if not waited then error(kind, 0) end
    -- a timeout is told apart from an error (mountns.verdict)
    verdict.raise(how == "timeout" and "timeout" or "error",
                  string.format("isolate: child %d %s", pid, body), level + 1)
  end
  if later and kind then
    -- reap_later: the result is in, the child's exit is not waited for
    if proc:wait(0) == "running" then
      exiting[#exiting + 1], exit_by[pid] = pid, proc.deadline
    end
  end
  local decoded, vals
  if kind == "o" then decoded, vals = pcall(child_proto.decode, body, proc.deadline) end
  if kind == "o" then
    if not decoded then error("isolate: bad result from child: " .. vals, level + 1) end
    return unpack(vals, 1, vals.n)
  elseif kind == "e" then
    error(body, 0)
  elseif kind == "f" then
    child_proto.raise_failure(body)
  elseif kind == "s" then
    child_proto.raise_skip(body)
  end
  if how == "killed" then
    error(string.format("isolate: child %d was killed by %s", pid, code), level + 1)
  end
  error(string.format("isolate: child %d exited with status %d and no "
    .. "result", pid, code), level + 1)
end

--- Run fn(...) in a forked child set up by `setup` instead of
-- `private_namespace` (plumbing for mountns.scenario, which enters its
-- template namespace): setup() runs in the child first and may return a
-- teardown function, run after the result was sent.
-- @tparam function setup
-- @tparam table opts as isolate_with's
-- @tparam function fn
-- @return fn's results
function M.spawn(setup, opts, fn, ...)
  -- not a tail call: the errors name the caller's line (level 3)
  local res = pack(spawn(setup, opts, 2, fn, ...))
  return unpack(res, 1, res.n)
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
  local res = pack(spawn(M.private_namespace, opts, 2, fn, ...))
  return unpack(res, 1, res.n)
end

--- Run fn(...) in an isolated child (timeout 60 s).
function M.isolate(fn, ...)
  if type(fn) ~= "function" then
    error("bad argument #1 to 'isolate' (function expected, got " .. type(fn) .. ")", 2)
  end
  return M.isolate_with({}, fn, ...)
end

return M
