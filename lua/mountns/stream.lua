--- stream: the forms a watch is read in, one home for a kernel
-- namespace's watch (`mountns.watch`) and a model namespace's
-- (`mountns.model.events`): the list of events so far (`events`), the
-- generic-for iterator that closes the watch at its end (`iterate`), and
-- `ns:watch`'s three forms (`forms`: `run` then `callback`, or the
-- iterator). A watch is anything with `next(timeout)`, `close()` and a
-- `closed` field; pure Lua, so the model loads without the core.
-- @module mountns.stream

local M = {}

--- All events until none comes for `timeout` seconds (0: those already
-- there).
-- @param w a watch
-- @tparam[opt=0] number timeout seconds
-- @treturn table list of events
function M.events(w, timeout)
  local out = {}
  for ev in function() return w:next(timeout or 0) end do out[#out + 1] = ev end
  return out
end

--- The generic-for iterator: the next event, closing the watch at the end.
-- @param w a watch
-- @return the next event, or nil (the watch closed)
function M.iterate(w)
  if w.closed then return nil end
  local ev = w:next()
  if ev == nil then w:close() end
  return ev
end
local iterate = M.iterate

--- `ns:watch`'s forms over an open watch: `opts.run` is called first (a
-- raise closes the watch and is raised again); with `opts.callback`, each
-- event goes to it until it returns false or the events end, the watch is
-- closed and the count of events returned; else the iterator.
-- @param w an open watch
-- @tparam table opts checked options (`run`, `callback`)
-- @return the count of events (callback), or the generic-for's iterator,
-- state, nil and the watch (the fourth closes it when a 5.4 loop is left early)
function M.forms(w, opts)
  if opts.run then
    local ok, err = pcall(opts.run)
    if not ok then w:close(); error(err, 0) end
  end
  if opts.callback then
    local n = 0
    local ok, err = pcall(function()
      for ev in iterate, w do
        n = n + 1
        if opts.callback(ev) == false then break end
      end
    end)
    w:close()
    if not ok then error(err, 0) end
    return n
  end
  return iterate, w, nil, w
end

return M
