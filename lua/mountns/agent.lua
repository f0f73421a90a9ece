--- agent: a helper process that acts for the namespaces of one user namespace.
-- A process cannot leave a user namespace once it joined one, and a
-- namespace created by a process belongs to that process's user namespace.
-- So a scenario keeps one agent per user namespace it creates: a forked
-- child that joined that user namespace and performs, on request, the
-- operations on its namespaces (mount, unshare, pivot_root, the lock probe).
-- Requests and replies are mountns.child frames, requests in one pipe,
-- replies in another. An agent that dies is reported by the next call (its PID, how
-- it ended, the call), not by a SIGPIPE that would kill the scenario.
-- @module mountns.agent

local core = require "mountns.core"
local child = require "mountns.child"
local ops = require "mountns.ops"

local M = {}
local unpack = table.unpack or unpack -- luacheck: ignore

local function pack(...)
  return { n = select("#", ...), ... }
end

-- Send values (a packed list) as one "o" frame encoded by child.encode
-- (which raises for a value that cannot cross, naming it as `what` #k).
-- false, error if the reader is gone.
local function send_encoded(fd, vals, what, skip)
  return child.send(fd, "o", child.encode(what, vals, nil, skip))
end

-- The same for any values: a message of scalars is encoded and sent by
-- the core in one call (csrc/frame.c), any other by child.encode.
local function send(fd, vals)
  local sent, err = core.send_values(fd, child.MAX_BYTES, unpack(vals, 1, vals.n))
  if sent ~= false then return sent, err end
  return send_encoded(fd, vals, "result")
end

-- The values of a frame core.receive_frame returned as kind, body (a
-- packed list), or nil and why not ("eof", or the error an "e" frame
-- carries).
local function received(kind, body)
  if kind == "o" then
    if type(body) == "table" then return body end
    return child.decode(body)
  end
  if kind == "e" then return nil, body, true end -- the sender's last words
  return nil, body
end

-- The values of the next frame (a packed list), or nil and why not.
-- The channel carries one frame at a time (a request, then its reply):
-- the core reads it with one read(2) and decodes a message of scalars
-- itself.
local function receive(fd)
  return received(core.receive_frame(fd, child.MAX_BYTES))
end

-- ---- the agent process --------------------------------------------------

-- Reply to a request (its op `op`, its first argument `arg1`: the core
-- function's name of a "call") with values (pcall's results); a result
-- that cannot cross sends its error instead.
local function reply(fd, op, arg1, ...)
  if core.send_values(fd, child.MAX_BYTES, ...) ~= false then return end
  local sent, serr = pcall(send_encoded, fd, pack(...), "result")
  if not sent then
    send(fd, { false, "ns:" .. (op == "call" and tostring(arg1) or op)
      .. ": " .. tostring(serr), n = 2 })
  end
end

-- A request is the list op, serial, args...; a reply the list ok, results...
-- `current`: the serial of the namespace the agent is in (setns only when
-- a request is for another one).
local function serve(req_r, rep_w, handles, current)
  -- any request but the common call, as a table; false: stop
  local function handle(req)
    local op, serial = req[1], req[2]
    if op == "exit" then return false end
    if op == "close" then
      local h = handles[serial]
      handles[serial] = nil
      if h then h:close() end
      -- leave a namespace being closed: an agent inside would keep it alive
      local other_serial, other = next(handles)
      if not other then send(rep_w, { true, n = 1 }); return false end
      current = other:enter() and other_serial or nil
      send(rep_w, { true, n = 1 })
      return true
    end
    local h = handles[serial]
    local res
    if not h then
      res = { false, "agent: no namespace " .. tostring(serial), n = 2 }
    else
      local ok, err = true, nil
      if current ~= serial then
        ok, err = h:enter()
        current = ok and serial or nil
      end
      if not ok then
        res = { false, err, n = 2 }
      elseif op == "unshare" then
        local u, uerr = core.unshare { mount = true, propagation = req[3] }
        if u then
          handles[req[4]] = assert(core.namespace())
          current = req[4]
        end
        res = { true, u, uerr, n = 3 }
      else
        res = pack(pcall(ops[op], unpack(req, 3, req.n)))
      end
    end
    reply(rep_w, op, req[3], unpack(res, 1, res.n))
    return true
  end
  -- one request, as core.receive_frame(..., true) returns it: the common
  -- call (an operation in the namespace the agent is in, a message of
  -- scalars) is served without a table; false: stop
  local function step(got, op, serial, ...)
    if got == true then
      if current ~= nil and current == serial and op ~= "close" and op ~= "unshare"
        and op ~= "exit" then
        reply(rep_w, op, (...), pcall(ops[op], ...))
        return true
      end
      return handle(pack(op, serial, ...))
    end
    local req, why = received(got, op)
    if not req then
      if why == "eof" then return false end
      error("agent: bad request: " .. tostring(why), 0)
    end
    return handle(req)
  end
  while step(core.receive_frame(req_r, child.MAX_BYTES, true)) do end
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
  -- requests in one pipe, replies in another (a pipe round trip costs
  -- less than a Unix socket's, SIGPIPE dance included: measured in
  -- `git show 17eacb7:bench/RESULTS.md`, "Agent calls and the lock probe")
  local proc, ferr = child.spawn({ up = { "rep" }, down = { "req" } }, function(fds)
    local req_r, rep_w = fds.req, fds.rep
    -- no code of the user runs here: a reply is one write(2), a caller
    -- gone an EPIPE (csrc/fdio.c)
    core.ignore_sigpipe()
    local ok, err = pcall(function()
      if userns then assert(userns:enter()) end
      assert(parent:enter())
      -- the scenario's namespace fds: holding them would keep those
      -- namespaces alive after the scenario closes them
      core.close_namespaces()
      assert(core.unshare { mount = true, user = true, map_root = true,
                            propagation = propagation })
    end)
    send(rep_w, { ok, ok and nil or tostring(err), n = 2 })
    if ok then
      local sok, serr = pcall(serve, req_r, rep_w,
                              { [serial] = assert(core.namespace()) }, serial)
      if not sok then
        pcall(child.send, rep_w, "e", child.message(serr))
        return 1
      end
    end
    return 0
  end)
  if not proc then return nil, "agent: " .. ferr end
  local agent = setmetatable({ pid = proc.pid, proc = proc, req = proc.fds.req,
                               rep = proc.fds.rep }, { __index = M })
  local r = receive(agent.rep)
  if not (r and r[1]) then
    agent:stop()
    return nil, "unshare (user): " .. tostring(r and r[2] or "the agent died")
  end
  return agent
end

-- Close the caller's ends of the agent's pipes.
local function close_channel(self)
  self.proc:close()
end

-- The agent is gone: reap it (once) and raise, naming it, how it ended and
-- the call it was asked to do. `gone`: it closed its pipes or said its
-- last words; else (a corrupt reply) it is stopped first.
local function dead(self, call, why, gone)
  if not self.ending then
    close_channel(self)
    self.stopped = true
    -- gone (its pipe's end: EOF, EPIPE), or talking nonsense: stop it
    if not gone then self.proc:kill() end
    self.reaped = true
    self.ending = child.ending(self.proc:wait())
  end
  error(string.format("%s: the agent (PID %d) of this namespace's user "
    .. "namespace %s%s", call, self.pid, self.ending,
    (why and why ~= "eof") and (": " .. why) or ""), 0)
end

-- "ns:mount": the name of a call in errors (built only for one)
local function call_name(op, ...)
  return "ns:" .. (op == "call" and tostring((...)) or op)
end

-- M:call's results from what core.receive_frame(..., true) returned: the
-- reply's values (ok, results...) after `true`, without a table, when the
-- reply is a message of scalars.
local function returned(self, op, arg1, got, ok, ...)
  if got == true then
    if ok then return ... end
    error((...), 0)
  end
  local r, why, last_words = received(got, ok)
  if not r then dead(self, call_name(op, arg1), why, why == "eof" or last_words) end
  if not r[1] then error(r[2], 0) end
  return unpack(r, 2, r.n)
end

--- Ask the agent to run ops[op](...) in the namespace `serial`.
-- @return the operation's results, or raises the agent's error; a value
-- that cannot cross a process raises naming the argument; a dead agent
-- raises naming its PID, how it ended and the call
function M:call(serial, op, ...)
  if self.ending then dead(self, call_name(op, ...)) end
  local sent, werr = core.send_values(self.req, child.MAX_BYTES, op, serial, ...)
  if sent == false then -- a table, a float, a large string: child.encode's
    local ok
    ok, sent, werr = pcall(send_encoded, self.req, pack(op, serial, ...), "argument",
                           op == "call" and 3 or 2)
    if not ok then error(call_name(op, ...) .. ": " .. sent, 0) end
  end
  if not sent then dead(self, call_name(op, ...), werr, true) end
  return returned(self, op, (...), core.receive_frame(self.rep, child.MAX_BYTES, true))
end

--- Tell the agent to drop namespace `serial`.
function M:close_ns(serial)
  if self.ending then return end
  if child.send(self.req, "o", child.encode("request", { "close", serial, n = 2 })) then
    receive(self.rep)
  end
end

--- Kill the agent (its pipes closed, SIGKILL) without waiting for it:
-- its exit runs while the caller goes on; `stop` reaps it.
function M:kill()
  if self.stopped then return end
  self.stopped = true
  close_channel(self)
  self.proc:kill()
end

--- End the agent process and reap it.
function M:stop()
  self:kill()
  if not self.reaped then
    self.reaped = true
    self.proc:wait()
  end
end

return M
