--- mountns.report.tap: `mountns run --tap`, a writer over the run's events
-- (`mountns.report`): TAP version 13 (`TAP version 13`; version 14 on
-- request, `--tap=14`: the stream is the same, only its first line says
-- 14, which Test::Harness before 3.48 (Debian 12's `prove`) refuses), one
-- `ok N - NAME` or `not ok N - NAME` per scenario, a skipped one as
-- `ok N - NAME # SKIP REASON`, the plan `1..N` at the end, then
-- `# P passed, F failed`. Everything else is a `# ` line: what a script
-- printed, a failure's diagnostic (after `# ERROR` for a raised error,
-- `# TIMEOUT` and its bound for a timeout), the notes, the golden text; a
-- run that stops ends with `Bail out! WHY` and no plan.
-- @module mountns.report.tap

local report = require "mountns.report"

local M = {}

local Tap = {}
Tap.__index = Tap

--- A TAP writer on out.
-- @param[opt=io.stdout] out a file (anything with `write` and `flush`)
-- @tparam[opt=13] int version the TAP version: 13 or 14
-- @treturn table the writer
function M.new(out, version)
  if version ~= nil and version ~= 13 and version ~= 14 then
    error("bad argument #2 to 'new' (13 or 14 expected, got " .. tostring(version) .. ")", 2)
  end
  return setmetatable({ emit = report.printer(out), version = version or 13 }, Tap)
end

--- The stream's first line: the TAP version.
function Tap:run_start()
  self.emit("TAP version " .. self.version)
end

function Tap:output(_, line)
  self.emit(report.output_line(line))
end

function Tap:scenario_end(_, r)
  local ok = r.status == "pass"
  local name = report.escape_name(r.name, true)
  if r.status == "skip" then
    -- the reason ends the line: a "#" in it cannot start another directive
    self.emit(string.format("ok %d - %s # SKIP %s", r.n, name,
                            report.escape_name(r.message or "skipped")))
    return
  end
  self.emit(string.format("%s %d - %s", ok and "ok" or "not ok", r.n, name))
  if r.status == "error" then
    self.emit("# ERROR")
  elseif r.status == "timeout" then
    self.emit(r.timeout and string.format("# TIMEOUT (its bound: %g s)", r.timeout)
      or "# TIMEOUT")
  end
  if not ok then self.emit(report.diagnostic(r.message or "failed", "# ")) end
  for _, note in ipairs(r.notes or {}) do
    self.emit(report.diagnostic("note: " .. note, "# "))
  end
  if r.artifacts then
    self.emit(report.diagnostic("artifacts: " .. table.concat(r.artifacts, " "), "# "))
  end
  if ok and r.golden then
    for _, line in ipairs(report.golden_lines(r.golden, "# ", "#")) do self.emit(line) end
  end
end

function Tap:run_end(summary)
  local stop = report.stop(summary)
  self.emit(stop and "Bail out! " .. stop or "1.." .. summary.total)
  self.emit("# " .. report.summary(summary))
end

return M
