-- model.events: the mount events of a model namespace (`ns:watch`, and
-- `expect.propagates` on the model), in the shape and order a kernel
-- watch gives them (mountns.watch, on its fanotify path from Linux 6.15,
-- else a diff of tables: rules.watch_fanotify): `{kind =
-- "attach"|"detach"|"change", mount = record, ns = ns, via = "model"}`;
-- attaches and detaches in the order the mounts came and went (the
-- world's uid counter orders both: a mount's uid when it was made, a
-- `gone` stamp when umount or close took it out; one that came and went
-- between two looks as a stub in both, as on the kernel), then "change" (with
-- `before` and `fields`: a move, a remount, a propagation change), found
-- by comparing the records with those of the last look, as the kernel
-- watch's re-read finds them. A model namespace changes only when the
-- caller calls it, so a watch never waits: `next` answers from what has
-- happened, nil when nothing has (whatever its timeout).
-- @module mountns.model

local argcheck = require "mountns.args"
local record = require "mountns.record"
local listing = require "mountns.model.listing"
local stream = require "mountns.stream"

local M = {}

-- what a "change" compares (mountns.watch's FIELDS: the mount point too)
local FIELDS = { "target" }
for _, f in ipairs(record.CHANGES) do FIELDS[#FIELDS + 1] = f end

-- the mounts of ns now: mount -> its record, and the mounts in listing order
local function look(ns)
  local recs, order, gen = {}, {}, {}
  for _, m in ipairs(ns.world.mounts) do
    if m.ns == ns then
      recs[m] = listing.record_of(m, ns, false, gen)
      order[#order + 1] = m
    end
  end
  return recs, order
end

-- The watch of a model namespace: `next`, `events`, `close`, and fields
-- `path` ("model"), `ns` (the methods of mountns.watch's Watch).
local Watch = {}
Watch.__index = Watch
M.Watch = Watch

--- Start watching a model namespace (as `watch.open` a kernel one).
-- @param ns a model namespace
-- @tparam[opt] table opts `fallback = true`: the events of a watch that
-- diffs tables (as on a kernel before 6.15); `timeout`, `interval`:
-- accepted as a kernel watch's and without effect (nothing to wait for)
-- @treturn Watch
function M.open(ns, opts)
  local poll = (opts and opts.fallback) or not ns.world.rules.watch_fanotify
  local w = setmetatable({ ns = ns, path = "model", queue = {}, head = 1, closed = false,
                           timeout = opts and opts.timeout, poll = poll or false }, Watch)
  w.records, w.mark, w.departed_i = look(ns), ns.world.uid, #ns.world.departed
  return w
end

function Watch:close()
  self.closed = true
end
Watch.__close = Watch.close

function Watch:__tostring()
  return string.format("watch of %s (model)%s", tostring(self.ns),
                       self.closed and " (closed)" or "")
end

local function check_open(self)
  if self.closed then error("attempt to use a closed watch", 3) end
end

local function differ(old, r)
  local fields = {}
  for _, f in ipairs(FIELDS) do
    if old[f] ~= r[f] then fields[#fields + 1] = f end
  end
  return fields
end

-- the events since the last look as a watch without fanotify's mount
-- events finds them (a kernel before 6.15, or `fallback = true`): a diff
-- of two tables (mountns.watch's scan): the changes, then the attaches
-- in table order, then the detaches by mount ID; a mount that came and
-- went in between is not seen; before 6.8 the tables have no unique IDs,
-- so a moved mount is a detach and an attach
function Watch:scan_poll()
  local now, order = look(self.ns)
  local by_key = not self.ns.world.rules.unique_ids
  local changes, added, removed, stays = {}, {}, {}, {}
  for _, m in ipairs(order) do
    local old, r = self.records[m], now[m]
    if old and by_key and (old.target ~= r.target or old.id ~= r.id) then old = nil end
    if not old then
      added[#added + 1] = { kind = "attach", mount = r }
    else
      stays[m] = true
      local fields = differ(old, r)
      if #fields > 0 then
        changes[#changes + 1] = { kind = "change", mount = r, before = old, fields = fields }
      end
    end
  end
  for m, old in pairs(self.records) do
    if not stays[m] then removed[#removed + 1] = { kind = "detach", mount = old } end
  end
  table.sort(removed, function(a, b) return a.mount.id < b.mount.id end)
  for _, list in ipairs { changes, added, removed } do
    for _, e in ipairs(list) do
      e.ns, e.via = self.ns, "model"
      self.queue[#self.queue + 1] = e
    end
  end
  self.records, self.mark, self.departed_i = now, self.ns.world.uid, #self.ns.world.departed
end

-- the events since the last look, queued in the kernel watch's order
function Watch:scan()
  if self.poll then return self:scan_poll() end
  local now, order = look(self.ns)
  local came, changes = {}, {}
  for _, m in ipairs(order) do
    local old, r = self.records[m], now[m]
    if not old then
      came[#came + 1] = { at = m.uid, kind = "attach", mount = r }
    else
      local fields = differ(old, r)
      if #fields > 0 then
        changes[#changes + 1] = { kind = "change", mount = r, before = old, fields = fields }
      end
    end
  end
  for m, old in pairs(self.records) do
    if not now[m] then came[#came + 1] = { at = m.gone or m.uid, kind = "detach", mount = old } end
  end
  -- a mount that came and went since the last look: the kernel watch
  -- names it in both events by its unique ID alone (statmount finds it
  -- gone), a stub `{unique_id = N, gone = true}`; here N is its uid
  local ns, mark, departed = self.ns, self.mark, self.ns.world.departed
  for i = self.departed_i + 1, #departed do
    local m = departed[i]
    if m.gone_ns == ns and m.uid > mark then
      local stub = { unique_id = m.uid, gone = true }
      came[#came + 1] = { at = m.uid, kind = "attach", mount = stub }
      came[#came + 1] = { at = m.gone, kind = "detach", mount = stub }
    end
  end
  self.mark, self.departed_i = ns.world.uid, #departed
  table.sort(came, function(a, b) return a.at < b.at end)
  for _, list in ipairs { came, changes } do
    for _, e in ipairs(list) do
      e.at, e.ns, e.via = nil, self.ns, "model"
      self.queue[#self.queue + 1] = e
    end
  end
  self.records = now
end

--- The next event, or nil when nothing more has happened (a model
-- namespace changes only when called: there is nothing to wait for).
-- @param[opt] timeout seconds, checked as a kernel watch's (no effect)
function Watch:next(timeout)
  check_open(self)
  if timeout ~= nil and (type(timeout) ~= "number" or timeout ~= timeout) then
    argcheck.error("watch:next", 1, "seconds expected, got " .. (type(timeout) == "number"
      and tostring(timeout) or type(timeout)), 2)
  end
  if self.queue[self.head] == nil then
    self.queue, self.head = {}, 1
    self:scan()
  end
  local ev = self.queue[self.head]
  if ev == nil then return nil end
  self.queue[self.head] = nil
  self.head = self.head + 1
  return ev
end

--- All events so far.
-- @function Watch:events
-- @treturn table list of events
Watch.events = stream.events

--- `ns:watch(opts)` of a model namespace: the forms of a kernel
-- namespace's (`mountns.namespace`'s `watch`), its options checked alike.
function M.watch(ns, opts)
  opts = argcheck.watch_options(opts, "ns:watch", 1, 3)
  return stream.forms(M.open(ns, opts), opts)
end

return M
