--- mountns.report: the events of a `mountns run` and the rules of a
-- report line. A report writer (`mountns.report.plain`, `mountns.report.tap`,
-- or one of the caller's own passed as `runner.run`'s `writers`) is an
-- object that subscribes to the run's events by having methods of their
-- names, as busted's output handlers subscribe to its events; the runner
-- (the scheduler: files, slots, processes, frames, bounds, signals) sends
-- them and writes nothing itself. A writer with no method for an event
-- does not hear it.
--
-- The events, in the order a run sends them, each once:
--
-- - `run_start(w, run)`: `run.files`, the scripts in order; `run.clock`
--   and `run.time`: the runner's `mountns.core.clock()` and `os.time()`
--   as it starts (a result's `ended` is on that clock); `run.shard`
--   ("K/N" under `--shard`: a report names it, so `mountns report merge`
--   can tell that every shard is there) and `run.filter`, or nil;
-- - for each file, in file order whatever `jobs` is:
--   `file_start(w, file)` (`file.path`, `file.index`: its place in
--   `files`), then what it printed and its scenarios in the order they
--   came: `output(w, file, line)` (one line the script or a scenario
--   printed, without its newline, as printed: not escaped) and
--   `scenario_end(w, file, result)` (under `run --list`, instead, no
--   scenario runs and each one the run would run is
--   `scenario_listed(w, file, {name = , index = })`), then `file_end(w, file)`;
-- - `run_end(w, summary)`: `summary.total`, `.passed`, `.failed` (FAIL,
--   ERROR and TIMEOUT), `.skipped`, `.counts` (the number of each status,
--   by status: `counts.error`...), and
--   `.stop`: nil, or why the run stopped before its end ("interrupted",
--   "terminated", "stopped: " and the runner's own failure, not escaped).
--   A run that stops gives the file being reported its `file_end`; the
--   files after it get no event.
--
-- A `result` has `n` (its number in the run, from 1), `index` (its number
-- in its file), `name` (not escaped), `status` (`mountns.verdict`'s:
-- "pass"; "fail": a check failed; "error": the scenario raised an error,
-- or the runner's verdict on a file or a scenario whose process did not
-- give its own: an error outside any scenario, an early exit, a protocol
-- error, a file that ran none or could not start; "timeout": it ran past
-- its timeout; "skip": `mountns.skip` or busted's `pending`, `message` the
-- reason), `secs`, `message` (the diagnostic of a failure, or nil),
-- `golden` (a passing scenario's golden text under `--golden`, or nil),
-- `notes` (nil or a list of strings), `timeout` (a "timeout"'s bound in
-- seconds, when the runner knows it), `whole_file` (true: the verdict is
-- on the file, `name` its path, not on a scenario), `crash` (true: the
-- file's process died, was killed, broke the protocol or could not start),
-- `missed` (true: the rest of the file did not run; how many scenarios it
-- had left is not known: the runner learns of a scenario when it starts)
-- `ended` (the runner's `mountns.core.clock()` when the result came) and
-- `artifacts` (the paths `--artifacts` wrote for it, or nil).
-- The counting (`n`, the summary) and the order are the runner's: a
-- writer renders.
--
-- The one line per test point rule lives here: names, prints and
-- diagnostics go through `mountns.escape`, so none of them can add a
-- line, start a directive or drive the terminal.
-- @module mountns.report

local core = require "mountns.core"
local argcheck = require "mountns.args"

local M = {}

--- The events, in the order a run sends them.
M.EVENTS = { "run_start", "file_start", "output", "scenario_end", "scenario_listed", "file_end",
  "run_end" }

--- A scenario name as one line, by the one escaping rule of mountns
-- (`mountns.escape`: a newline as `\012`, a backslash as `\134`, ESC as
-- `\033`...); under TAP also `#` as `\#`, so no name can start a directive
-- (`# TODO`, `# SKIP`).
-- @tparam string name
-- @tparam boolean tap
-- @treturn string
function M.escape_name(name, tap)
  local s = core.escape(tostring(name))
  if tap then s = s:gsub("#", "\\#") end
  return s
end

-- A line of a diagnostic: the same rule, but tabs (tracebacks) and
-- backslashes (the `\ooo` of paths that expect's diagnostics escaped
-- already) are kept as they are.
local function escape_diagnostic(line)
  return (core.escape(line):gsub("\\011", "\t"):gsub("\\134", "\\"))
end

--- Every line of a diagnostic (a failure's message, a note) with prefix
-- before it, as one string (no newline at its end).
-- @tparam string text
-- @tparam string prefix
-- @treturn string
function M.diagnostic(text, prefix)
  local out = {}
  for line in (tostring(text) .. "\n"):gmatch("([^\n]*)\n") do
    out[#out + 1] = prefix .. escape_diagnostic(line)
  end
  return table.concat(out, "\n")
end

--- A text (a message, what a scenario printed) by the one escaping rule,
-- its lines kept: every line escaped as a diagnostic's (no control
-- character but the newlines and tabs, only valid UTF-8 left), for the
-- report files (JUnit's XML, KCIDB's JSON).
-- @tparam string text
-- @treturn string
function M.text(text)
  return M.diagnostic(text, "")
end

--- A line a script printed, as a comment line (`# ` and the line escaped):
-- it can never pass for a result line.
-- @tparam string line
-- @treturn string
function M.output_line(line)
  return "# " .. core.escape(line)
end

--- The lines of a golden text (`--golden`), each escaped with prefix
-- before it; a blank line is `blank`.
-- @tparam string text lines, each ended by a newline
-- @tparam string prefix
-- @tparam string blank
-- @treturn {string,...}
function M.golden_lines(text, prefix, blank)
  local out = {}
  for line in text:gmatch("([^\n]*)\n") do
    out[#out + 1] = line == "" and blank or prefix .. core.escape(line)
  end
  return out
end

--- Why the run stopped, escaped (nil: it did not stop).
-- @tparam table summary `run_end`'s
-- @treturn ?string
function M.stop(summary)
  return summary.stop and core.escape(summary.stop)
end

--- The word of each status in the plain report and the summary.
M.WORDS = { pass = "ok", fail = "FAIL", error = "ERROR", timeout = "TIMEOUT", skip = "SKIP" }

--- The summary line: "P passed, F failed"; when not every failure is a
-- failed check, how many of each ("(1 FAIL, 2 ERROR, 1 TIMEOUT)"); the
-- skipped ones (", S skipped"); and why the run stopped.
-- @tparam table summary `run_end`'s
-- @treturn string
function M.summary(summary)
  local s = string.format("%d passed, %d failed", summary.passed, summary.failed)
  local c = summary.counts or {}
  if summary.failed > (c.fail or summary.failed) then
    local parts = {}
    for _, status in ipairs { "fail", "error", "timeout" } do
      if (c[status] or 0) > 0 then parts[#parts + 1] = c[status] .. " " .. M.WORDS[status] end
    end
    s = s .. " (" .. table.concat(parts, ", ") .. ")"
  end
  if (summary.skipped or 0) > 0 then s = s .. ", " .. summary.skipped .. " skipped" end
  local stop = M.stop(summary)
  return stop and s .. " (" .. stop .. ")" or s
end

--- A function that writes a line and flushes it, on out: each line is out
-- as soon as it is known (a run that is killed has shown what it had).
-- @param[opt=io.stdout] out a file (anything with `write` and `flush`)
-- @treturn function
function M.printer(out)
  out = out or io.stdout
  return function(s)
    out:write(s, "\n")
    out:flush()
  end
end

--- The writers checked (a list of objects, each event method a function
-- or nil), and a function that sends an event to each of them in turn.
-- @tparam {table,...} writers
-- @tparam string fname the public name, for the error (`"run"`)
-- @tparam int argn the options' position
-- @tparam[opt=1] int level as `error`'s
-- @treturn function `tell(event, ...)`
function M.subscribers(writers, fname, argn, level)
  level = (level or 1) + 1
  local function bad(msg)
    argcheck.error(fname, argn, "option 'writers': " .. msg, level + 1)
  end
  if type(writers) ~= "table" then bad("a list of writers expected, got " .. type(writers)) end
  local list = {}
  for i, w in ipairs(writers) do
    if type(w) ~= "table" then
      bad(string.format("writer %d is a %s (a table expected)", i, type(w)))
    end
    for _, event in ipairs(M.EVENTS) do
      local f = w[event]
      local callable = type(f) == "function" or (getmetatable(f) or {}).__call
      if f ~= nil and not callable then
        bad(string.format("writer %d's %s is a %s (a function expected)", i, event, type(f)))
      end
    end
    list[i] = w
  end
  for k in pairs(writers) do
    if list[k] == nil then
      bad("a list expected (it has the key " .. core.escape(tostring(k)) .. ")")
    end
  end
  return function(event, ...)
    for _, w in ipairs(list) do
      local f = w[event]
      if f then f(w, ...) end
    end
  end
end

return M
