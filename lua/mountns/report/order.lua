--- mountns.report.order: a run's report in file order, whatever runs at
-- once. Each file's report is a list of items (a line it printed, a
-- result) sent to the writers as events (`mountns.report`) once every
-- file before it is reported: the file at the head streams its items at
-- once, the others hold them until their turn. So `-j 2` reports byte for
-- byte what `-j 1` does, the results are numbered in file order, and the
-- counts of the summary are kept here, as the events go. Under
-- `--fail-fast` the first failure in that order is the last item sent
-- (`halted`): what came after it, even from files that ran at once, is
-- not reported.
-- @module mountns.report.order

local verdict = require "mountns.verdict"

local M = {}

local Order = {}
Order.__index = Order

--- An empty report.
-- @tparam function tell sends an event to the writers (`report.subscribers`)
-- @tparam[opt] function clock stamps each result as it comes (`ended`)
-- @tparam[opt] boolean fail_fast stop at the first result that is not a
-- pass (nor a skip): nothing after it is sent, and `halted` is set to its
-- file's report (the runner then stops)
-- @treturn table the report
function M.new(tell, clock, fail_fast)
  return setmetatable({ tell = tell, clock = clock, files = {}, head = 1, held = false,
                        n = 0, counts = {}, n_listed = 0, fail_fast = fail_fast,
                        halted = false }, Order)
end

--- The report of the next file, its place in the order.
-- @tparam string path
-- @treturn table the file's report: `file` is what the writers get
-- (`path`, `index`), `results` how many results it has
function Order:add(path)
  local f = { file = { path = path, index = #self.files + 1 }, items = {}, shown = 0,
              results = 0, pending = {}, pending_len = 0, cut = 0,
              held_bytes = 0, dropped_lines = 0 }
  self.files[#self.files + 1] = f
  return f
end

-- file_start, once
local function open(self, f)
  if not f.opened then
    f.opened = true
    self.tell("file_start", f.file)
  end
end

-- the items of f not sent yet, the results numbered and counted
local function show(self, f)
  open(self, f)
  while f.shown < #f.items and not self.halted do
    f.shown = f.shown + 1
    local it = f.items[f.shown]
    if it[1] == "output" then self.tell("output", f.file, it[2])
    elseif it[1] == "listed" then
      self.n_listed = self.n_listed + 1
      self.tell("scenario_listed", f.file, it[2])
    else
      local r = it[2]
      self.n = self.n + 1
      r.n = self.n
      self.counts[r.status] = (self.counts[r.status] or 0) + 1
      self.tell("scenario_end", f.file, r)
      -- (a skip, where a writer knows one, is no failure)
      if self.fail_fast and r.status ~= "pass" and r.status ~= "skip" then self.halted = f end
    end
  end
end

-- every file whose turn has come
local function flush(self)
  while self.files[self.head] and not self.halted do
    local f = self.files[self.head]
    show(self, f)
    if not f.finished or self.halted then break end
    f.items = nil -- reported: not kept for the rest of the run
    self.head = self.head + 1
    self.tell("file_end", f.file)
  end
end

local function push(self, f, item)
  f.items[#f.items + 1] = item
  if f == self.files[self.head] and not self.held then flush(self) end
end

--- The most of one line a report keeps: a longer line (a scenario that
-- floods stdout without a newline) is cut there, with a note of the bytes
-- dropped, so the runner's memory does not grow with what a script prints.
M.LINE_MAX = 64 * 1024
--- The most output a file's report holds while files before it are
-- reported (bytes of lines); the rest is dropped, with a note.
M.HELD_MAX = 4 * 1024 * 1024

-- a line of f's output: sent or held, the held bytes bounded by HELD_MAX
local function push_line(self, f, line)
  if f ~= self.files[self.head] or self.held then
    if f.held_bytes + #line > M.HELD_MAX then
      f.dropped_lines = f.dropped_lines + 1
      return
    end
    f.held_bytes = f.held_bytes + #line
  end
  push(self, f, { "output", line })
end

-- f's current line, ended; a cut line says how much it lost
local function end_line(self, f)
  local line = table.concat(f.pending)
  if f.cut > 0 then
    line = line .. string.format(" [mountns: %d more bytes of this line dropped]", f.cut)
  end
  f.pending, f.pending_len, f.cut = {}, 0, 0
  push_line(self, f, line)
end

-- data without a newline, added to f's current line up to LINE_MAX
local function add_to_line(f, data)
  local room = M.LINE_MAX - f.pending_len
  if #data > room then
    f.cut = f.cut + #data - room
    data = data:sub(1, room)
  end
  if data ~= "" then
    f.pending[#f.pending + 1] = data
    f.pending_len = f.pending_len + #data
  end
end

-- a note of the lines HELD_MAX dropped, once the file's output ends
local function note_dropped(self, f)
  if f.dropped_lines > 0 then
    push(self, f, { "output", string.format(
      "[mountns: %d lines of output dropped: more than %d bytes held]",
      f.dropped_lines, M.HELD_MAX) })
    f.dropped_lines = 0
  end
end

--- What f's process printed, a line at a time; a last line without
-- newline is completed before the next result or at the file's end.
-- @tparam table f a file's report
-- @tparam string data
function Order:output(f, data)
  local at = 1
  while true do
    local nl = data:find("\n", at, true)
    if not nl then break end
    add_to_line(f, data:sub(at, nl - 1))
    end_line(self, f)
    at = nl + 1
  end
  add_to_line(f, data:sub(at))
end

--- f's last line without newline, as a line.
-- @tparam table f a file's report
function Order:end_output(f)
  if f.pending_len > 0 or f.cut > 0 then end_line(self, f) end
  note_dropped(self, f)
end

--- A scenario's result (`r`: as `scenario_end` has it, but for `n`, given
-- here, and `index`: its place in the file when the script's process
-- said it (--filter and --shard leave scenarios out), else its count).
-- @tparam table f a file's report
-- @tparam table r
function Order:result(f, r)
  self:end_output(f)
  f.results = f.results + 1
  r.index = r.index or f.results
  if self.clock then r.ended = self.clock() end
  push(self, f, { "result", r })
end

--- A scenario `run --list` lists (`r`: `name`, `index`): sent as
-- `scenario_listed`, in file order.
-- @tparam table f a file's report
-- @tparam table r
function Order:listed(f, r)
  self:end_output(f)
  push(self, f, { "listed", r })
end

--- The runner's own verdict on a file or a scenario: an error (unless
-- `more` says otherwise).
-- @tparam table f a file's report
-- @tparam string name
-- @tparam string message
-- @tparam number secs
-- @tparam[opt] table more the result's other fields (`status`, `timeout`,
-- `missed`, `whole_file`: see `mountns.report`)
function Order:error(f, name, message, secs, more)
  local r = { name = name, status = "error", message = message, secs = secs }
  for k, v in pairs(more or {}) do r[k] = v end
  self:result(f, r)
end

--- f is complete: its file_end goes once every file before it is reported.
-- @tparam table f a file's report
function Order:finish(f)
  f.finished = true
  flush(self)
end

--- The run stops: from here the items are kept, not sent (a stopped run
-- kills its processes before any writer hears of it); `stop` sends them.
function Order:hold()
  self.held = true
end

--- The run stopped: the file being reported gets the rest of its items
-- and its file_end; the files after it get no event. Then run_end.
-- @tparam ?string stop why the run stopped (nil: it did not)
-- @treturn table the summary (`total`, `passed`, `failed`, `skipped`,
-- `counts`, `stop`: see `mountns.report`)
function Order:run_end(stop)
  local f = stop and (self.halted or self.files[self.head])
  if f then
    self:end_output(f)
    show(self, f)
    self.tell("file_end", f.file)
  end
  local c = {}
  for _, status in ipairs(verdict.STATUSES) do c[status] = self.counts[status] or 0 end
  local summary = { total = self.n, passed = c.pass, failed = c.fail + c.error + c.timeout,
                    skipped = c.skip, counts = c, stop = stop }
  self.tell("run_end", summary)
  return summary
end

return M
