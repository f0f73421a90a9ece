--- agent: a helper process that acts for the namespaces of one user namespace.
-- A process cannot leave a user namespace once it joined one, and a
-- namespace created by a process belongs to that process's user namespace.
-- So a scenario keeps one agent per user namespace it creates: a forked
-- child that joined that user namespace and performs, on request, the
-- operations on its namespaces (mount, unshare, pivot_root, the lock probe).
-- Requests and replies are Lua literals framed by an 8-digit hex length.
-- @module mountns.agent

local core = require "mountns.core"
local isolate = require "mountns.isolate"

local M = {}
local unpack = table.unpack or unpack -- luacheck: ignore

local function pack(...)
  return { n = select("#", ...), ... }
end

local function send(fd, value)
  local s = isolate.serialize(value)
  assert(core.write_fd(fd, string.format("%08x", #s) .. s))
end

local function receive(fd)
  local head = core.read_exact(fd, 8)
  if not head then return nil end
  local body = assert(core.read_exact(fd, tonumber(head, 16)))
  return isolate.deserialize(body)
end

--- The operations, run in the namespace they are asked for. They exist in
-- every process (scenario and agents) because agents are forks of it.
local ops = {}
M.ops = ops

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
  local pid = assert(core.fork())
  if pid == 0 then
    local code = 3
    pcall(function()
      assert(core.unshare { mount = true, propagation = "private" })
      local t = assert(core.mountinfo())
      if not t[1] then return end
      local found = false
      for _, m in ipairs(t) do if m.target == path then found = true end end
      if not found then code = 2; return end
      local ok, _, errno = core.umount(path, "detach")
      if ok then code = 0 elseif errno == core.errno.EINVAL then code = 1 end
    end)
    core._exit(code)
  end
  local _, code = core.waitpid(pid)
  if code == 0 then return false end
  if code == 1 then return true end
  if code == 2 then return nil, "locked " .. path .. ": not a mount point" end
  return nil, "locked " .. path .. ": the probe failed"
end

-- ---- the agent process --------------------------------------------------

local function serve(req_r, rep_w, handles)
  while true do
    local req = receive(req_r)
    if not req or req.op == "exit" then return end
    if req.op == "close" then
      local h = handles[req.serial]
      handles[req.serial] = nil
      if h then h:close() end
      -- leave a namespace being closed: an agent inside would keep it alive
      local _, other = next(handles)
      if not other then send(rep_w, { true }); return end
      other:enter()
      send(rep_w, { true })
    else
      local h = handles[req.serial]
      local res
      if not h then
        res = { false, "agent: no namespace " .. tostring(req.serial) }
      else
        local ok, err = h:enter()
        if not ok then
          res = { false, err }
        elseif req.op == "unshare" then
          local u, uerr = core.unshare { mount = true, propagation = req.args[1] }
          if u then handles[req.args[2]] = assert(core.namespace()) end
          res = { true, u, uerr, n = 3 }
        else
          res = pack(pcall(ops[req.op], unpack(req.args, 1, req.args.n)))
        end
      end
      send(rep_w, res)
    end
  end
end

--- Start an agent: a child that joins `userns` (a core handle, or nil to
-- stay in the caller's), enters `parent` (a core mount-namespace handle),
-- and unshares a new user namespace (caller mapped to root) with a new
-- mount namespace. Returns the agent object, or nil and the error.
-- @param parent core handle of the mount namespace to start from
-- @param userns core handle of the user namespace to join, or nil
-- @tparam string propagation what the new namespace's mounts become
-- (as `unshare`'s `propagation`)
-- @param serial the scenario's number for the new namespace
function M.start(parent, userns, propagation, serial)
  local req_r, req_w = assert(core.pipe())
  local rep_r, rep_w = assert(core.pipe())
  local pid = assert(core.fork())
  if pid == 0 then
    core.close_fd(req_w); core.close_fd(rep_r)
    local ok, err = pcall(function()
      if userns then assert(userns:enter()) end
      assert(parent:enter())
      assert(core.unshare { mount = true, user = true, map_root = true,
                            propagation = propagation })
    end)
    send(rep_w, { ok, ok and nil or tostring(err) })
    if ok then serve(req_r, rep_w, { [serial] = assert(core.namespace()) }) end
    core._exit(0)
  end
  core.close_fd(req_r); core.close_fd(rep_w)
  local agent = setmetatable({ pid = pid, req = req_w, rep = rep_r }, { __index = M })
  local r = receive(rep_r)
  if not (r and r[1]) then
    agent:stop()
    return nil, "unshare (user): " .. tostring(r and r[2] or "the agent died")
  end
  return agent
end

--- Ask the agent to run ops[op](...) in the namespace `serial`.
-- @return the operation's results, or raises the agent's error
function M:call(serial, op, ...)
  send(self.req, { op = op, serial = serial, args = pack(...) })
  local r = receive(self.rep)
  if not r then error("agent " .. self.pid .. " died", 0) end
  if not r[1] then error(r[2], 0) end
  return unpack(r, 2, r.n or #r)
end

--- Tell the agent to drop namespace `serial`; true if the agent has none left.
function M:close_ns(serial)
  send(self.req, { op = "close", serial = serial })
  receive(self.rep)
end

--- End the agent process and reap it.
function M:stop()
  if self.stopped then return end
  self.stopped = true
  pcall(core.close_fd, self.req)
  pcall(core.close_fd, self.rep)
  core.kill(self.pid, "KILL")
  core.waitpid(self.pid)
end

return M
