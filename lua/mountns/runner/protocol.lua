--- mountns.runner.protocol: what a script's process may send the runner
-- (`mountns.runner`), and the one check of it: every frame on the
-- runner's pipes is an event of a known kind whose every field has its
-- type (`event_problem`); anything else is a protocol error that fails
-- the file, never a crash, never an extra "ok".
-- @module mountns.runner.protocol

local core = require "mountns.core"
local child_proto = require "mountns.child"
local verdict = require "mountns.verdict"

local M = {}

-- The fields of each event, by kind: the type each must have ("?": or nil).
local EVENTS = {
  result = { name = "string", ok = "boolean", err = "string?", secs = "number",
             dot = "string?", golden = "string?", notes = "table?", status = "string?",
             artifacts = "table?", index = "number?" },
  start = { name = "string", timeout = "number" },
  listed = { name = "string", index = "number" },
  done = { ok = "boolean", err = "string?", status = "string?", seen = "number?" },
}

-- whether t is a list of strings (`n` items each of which `item` accepts)
local function is_list(t, item)
  if type(t) ~= "table" then return false end
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  for i = 1, count do
    if not item(t[i]) then return false end
  end
  return true
end
local function is_string(v) return type(v) == "string" end
local function is_pair(v) return is_list(v, is_string) and #v == 2 end

-- what is wrong with a result's artifacts, or nil
local function artifacts_problem(a)
  for k, v in pairs(a) do
    local ok
    if k == "dot" or k == "steps" then ok = type(v) == "string"
    elseif k == "mountinfo" then ok = is_list(v, is_pair)
    elseif k == "missing" then ok = is_list(v, is_string)
    else return "have an unknown field " .. core.escape(string.format("%q", tostring(k))) end
    if not ok then return "have a malformed " .. k end
  end
end

--- What is wrong with an event from a script's process, or nil: the
-- runner takes nothing it has not checked (a field of the wrong type
-- would crash the report; an unknown one would be a silent lie). An event
-- is `{kind, field = value...}`: a `start` (a kernel scenario begins)
-- has `name` (a string) and `timeout` (seconds > 0); a `result` has
-- `name`, `ok` (a boolean), `secs` (a finite number >= 0), `err`, `dot`,
-- `golden` (strings, or nil), `notes` (nil or a list of strings) and
-- `status` (nil, or what ended the scenario: one of
-- `mountns.verdict.STATUSES`, "pass" exactly when `ok`), `artifacts` (nil
-- or `mountns.artifacts.collect`'s table: `dot`, `steps`, strings or nil;
-- `mountinfo`, a list of {label, text} strings; `missing`, nil or a list of
-- strings) and `index` (its place in its file, an integer >= 1, or nil); a
-- `listed` (`run --list`: a scenario the run would run) has `name` and
-- `index`; a `done` has `ok`, `err`, `status` (nil, or "skip" when `ok` is
-- false: the script skipped the rest of its file) and `seen` (how many
-- scenarios the script reached, run or not: an integer >= 0, or nil);
-- nothing else.
-- @param ev the decoded event
-- @treturn ?string the problem
function M.event_problem(ev)
  if type(ev) ~= "table" then return "an event that is a " .. type(ev) .. ", not a table" end
  local fields = EVENTS[ev[1]]
  if not fields then
    return "an event of unknown kind " .. core.escape(string.format("%q", tostring(ev[1])))
  end
  for k in pairs(ev) do
    if k ~= 1 and not fields[k] then
      return "a " .. ev[1] .. " event with an unknown field "
        .. core.escape(string.format("%q", tostring(k)))
    end
  end
  for k, want in pairs(fields) do
    local v, optional = ev[k], want:sub(-1) == "?"
    if not (v == nil and optional or type(v) == want:gsub("%?$", "")) then
      return string.format("a %s event whose %s is a %s (%s expected)", ev[1], k, type(v),
        optional and want:sub(1, -2) .. " or nil" or want)
    end
  end
  if ev.secs and not (ev.secs >= 0 and ev.secs < math.huge) then
    return "a result event whose secs is " .. tostring(ev.secs) .. " (a duration expected)"
  end
  for _, k in ipairs { "index", "seen" } do
    local v = ev[k]
    if v and not (v >= (k == "seen" and 0 or 1) and v < 2 ^ 31 and v == math.floor(v)) then
      return string.format("a %s event whose %s is %s (a count expected)", ev[1], k,
        tostring(v))
    end
  end
  if ev.timeout and not (ev.timeout > 0 and ev.timeout < math.huge) then
    return "a start event whose timeout is " .. tostring(ev.timeout)
      .. " (seconds > 0 expected)"
  end
  if ev.artifacts then
    local problem = artifacts_problem(ev.artifacts)
    if problem then return "a result event whose artifacts " .. problem end
  end
  if ev.status ~= nil then
    if ev[1] == "done" and (ev.status ~= "skip" or ev.ok) then
      return "a done event whose status is " .. core.escape(string.format("%q", ev.status))
        .. " (nil, or \"skip\" with ok false, expected)"
    elseif not verdict.is_status(ev.status) then
      return "a result event whose status is " .. core.escape(string.format("%q", ev.status))
        .. " (one of " .. table.concat(verdict.STATUSES, ", ") .. " expected)"
    elseif (ev.status == "pass") ~= ev.ok then
      return string.format("a result event whose status is %q and ok %s", ev.status,
        tostring(ev.ok))
    end
  end
  if ev.notes then
    local count = 0
    for _ in pairs(ev.notes) do count = count + 1 end
    for i = 1, count do
      if type(ev.notes[i]) ~= "string" then
        return "a result event whose notes are not a list of strings"
      end
    end
  end
  return nil
end

--- One event (a table) as a mountns.child frame on the result pipe.
-- @tparam int fd
-- @tparam table t the event
function M.send(fd, t)
  assert(child_proto.send(fd, "o", child_proto.encode("event", { t }, 1)))
end

return M
