--- tool: a host tool run read-only, for `ns:exec` (mountns.namespace).
-- A tool runs on the host's files (its binary, libraries, `/proc`: a
-- scenario's `/` is a bare tmpfs) and must change none of them: it runs
-- in a throw-away private copy of the isolate's namespace (the host's
-- tree) whose every mount is made read-only (one recursive
-- mount_setattr), with a /dev of the harmless devices only (a tool
-- running as root could write a disk's device node: a read-only mount
-- does not stop that) and a fresh tmpfs at /dev/shm (its scratch space:
-- HOME and TMPDIR; /tmp stays the host's, read-only: a tree that lives
-- under /tmp stays visible), and without any capability (it cannot
-- remount, mount, or bypass a file's permissions; set-user-ID programs
-- do not raise it again: no_new_privs). It sees ns through /proc/self
-- (see ns:exec). Its process tree ends with it: a supervisor between
-- the scenario and the tool is a child subreaper, waits for the tool,
-- then kills what it left (mountns.child.contain).
-- @module mountns.tool

local core = require "mountns.core"
local argcheck = require "mountns.args"
local child = require "mountns.child"
local ops = require "mountns.ops"

local M = {}

--- The environment of a tool run by `ns:exec`, before its `env` option
-- adds to it: `MOUNTNS_PID` is added too (ns:pid()).
M.ENV = { PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          HOME = "/dev/shm", TMPDIR = "/dev/shm", LANG = "C" }

-- The devices a tool's /dev has, bound from the host's.
local TOOL_DEVICES = { "null", "zero", "full", "random", "urandom", "tty" }

-- Every mount of this namespace read-only: mount_setattr(2) with
-- AT_RECURSIVE, or, without it (before Linux 5.12; valgrind), a bind
-- remount of each mount, keeping its per-mount flags (those a namespace
-- of a less privileged user namespace cannot clear: EPERM).
local function read_only_tree()
  local ok, err, errno = core.mount_setattr("/", { recursive = true, ro = true })
  if ok then return end
  if errno ~= core.errno.ENOSYS then error(err, 0) end
  local t = assert(core.mountinfo())
  for _, m in ipairs(t) do
    local flags = { "ro" }
    for f in (m.options or ""):gmatch("[^,]+") do
      if f ~= "rw" and f ~= "ro" then flags[#flags + 1] = f end
    end
    -- a mount under another one at the same path cannot be reached
    core.remount(m.target, flags, nil, { bind = true })
  end
end

-- The tool's /dev: a tmpfs with the host's devices bound on files of
-- it and a writable tmpfs at /dev/shm, made on /tmp (the one place
-- sure to exist), then moved to /dev (/tmp is the host's again).
local function tool_dev()
  local function try(ok, err) if not ok then error(err, 0) end end
  try(core.mount("tool-dev", "/tmp", "tmpfs", "nosuid,noexec", "mode=0755"))
  for _, d in ipairs(TOOL_DEVICES) do
    if core.exists("/dev/" .. d) then
      try(ops.write("/tmp/" .. d, ""))
      try(core.bind("/dev/" .. d, "/tmp/" .. d))
    end
  end
  for name, to in pairs { fd = "/proc/self/fd", stdin = "/proc/self/fd/0",
                          stdout = "/proc/self/fd/1", stderr = "/proc/self/fd/2" } do
    try(core.symlink(to, "/tmp/" .. name))
  end
  try(core.mkdir("/tmp/shm"))
  try(core.mount("tool-shm", "/tmp/shm", "tmpfs", "nosuid,nodev", "mode=1777"))
  try(core.remount("/tmp", "ro,nosuid,noexec", nil, { bind = true }))
  try(core.move("/tmp", "/dev"))
end

-- The tool's process (forked by the supervisor): the namespace set up
-- (see above), then exec. Only returns when the tool cannot be run.
local function tool(host, helper, argv, env, fds)
  local function try(ok, err)
    if not ok then error(err, 0) end
  end
  -- the isolate's namespace (/ is the host's tree), then a private copy
  -- of it, so what follows stays in this process
  try(host:enter())
  host:close()
  try(core.unshare { mount = true, propagation = "private" })
  read_only_tree()
  tool_dev()
  -- the mount files only: the rest of /proc/self (maps, fd, exe) must
  -- stay the tool's own (the loader and sanitizers read them)
  local me = core.getpid()
  for _, f in ipairs { "mountinfo", "mounts", "mountstats",
                       "task/%d/mountinfo", "task/%d/mounts" } do
    try(core.bind("/proc/" .. helper .. "/" .. f:format(helper),
                  "/proc/" .. me .. "/" .. f:format(me)))
  end
  try(core.drop_capabilities())
  fds.env = env
  local _, err = core.execvp(argv, fds)
  error(err, 0)
end

-- The environment list of a tool: ENV, MOUNTNS_PID, then `env`.
local function tool_env(helper, env)
  local vars = { MOUNTNS_PID = tostring(helper) }
  for k, v in pairs(M.ENV) do vars[k] = v end
  for k, v in pairs(env or {}) do vars[k] = v end
  local list = {}
  for k, v in pairs(vars) do list[#list + 1] = k .. "=" .. v end
  table.sort(list)
  return list
end

--- Check ns:exec's option `env`: a table of names (`[%a_][%w_]*`) and
-- string values (raised at the line that called ns:exec: ns:exec calls
-- this itself).
function M.check_env(env)
  if env == nil then return end
  if type(env) ~= "table" then
    argcheck.error("ns:exec", 2, "option 'env': a table of NAME = value strings expected, "
      .. "got " .. type(env), 4)
  end
  for k, v in pairs(env) do
    if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then
      argcheck.error("ns:exec", 2, "option 'env': " .. tostring(k)
        .. " is not a variable's name", 4)
    end
    if type(v) ~= "string" or v:find("\0", 1, true) then
      argcheck.error("ns:exec", 2, "option 'env': " .. k .. ": a string without NUL "
        .. "expected, got " .. type(v), 4)
    end
  end
end

--- Run argv as ns:exec does: in a throw-away read-only copy of `host`
-- (the isolate's namespace, a core handle), its mount files those of
-- process `helper` (ns:pid()), for `timeout` seconds at most.
-- @treturn[1] table `{code, signal, stdout, stderr}` (see ns:exec)
-- @return[2] nil
-- @treturn[2] string "ns:exec: ..." why (could not be run, past its timeout)
function M.run(host, helper, argv, timeout, opts_env)
  local env = tool_env(helper, opts_env)
  -- the supervisor: forks the tool, waits for it, kills what it left,
  -- and reports how it ended (an "o" frame on `status`), after the tool's
  -- "e" frame if it could not be run
  local proc, ferr = child.spawn({ up = { "stdout", "stderr", "status" }, down = { "stdin" } },
    function(fds)
      child.contain()
      core.close_namespaces(host)
      local st_w = fds.status
      local std = { stdin = fds.stdin, stdout = fds.stdout, stderr = fds.stderr }
      local tproc, terr = child.spawn({}, function()
        local _, e = pcall(tool, host, helper, argv, env, std)
        -- only reached when the tool could not be run (st_w closes on exec)
        child.send(st_w, "e", tostring(e))
        return 127
      end)
      core.close_fd(fds.stdin); core.close_fd(fds.stdout); core.close_fd(fds.stderr)
      if not tproc then
        child.send(st_w, "e", terr)
        return 127
      end
      -- for as long as it takes: the scenario bounds this process
      local how, code = tproc:wait()
      child.kill_tree(core.getpid())
      child.send(st_w, "o", child.encode("ending", { how, code, n = 2 }))
      return 0
    end)
  if not proc then return nil, "ns:exec: " .. ferr end
  proc:close("stdin")
  local stdout, stderr, so_far_out, so_far_err = core.read_outputs(proc.fds.stdout,
    proc.fds.stderr, timeout)
  proc:close("stdout"); proc:close("stderr")
  if not stdout and stderr == "timeout" then
    proc:kill_tree()
    proc:close()
    return nil, string.format("ns:exec: %s ran past its timeout of %g s and was "
      .. "killed (output so far: %q %q)", argv[1], timeout, so_far_out, so_far_err)
  end
  -- the supervisor's frames: the tool's error, if it could not be run,
  -- then how it ended
  local failed, how, code
  while true do
    local kind, body = proc:receive("status", timeout)
    if kind == "e" then failed = failed or body
    elseif kind == "o" then
      local ok, v = pcall(child.decode, body)
      if ok then how, code = v[1], v[2] end
    else break end
  end
  local show, scode = proc:finish(timeout)
  if failed then return nil, "ns:exec: " .. failed end
  if not how then
    return nil, string.format("ns:exec: %s: its supervisor %s", argv[1],
                              child.ending(show, scode))
  end
  return { code = how == "exited" and code or nil,
           signal = how == "killed" and code or nil,
           stdout = stdout, stderr = stderr }
end

return M
