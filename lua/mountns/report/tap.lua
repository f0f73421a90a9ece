--- mountns.report.tap: `mountns run --tap`, a writer over the run's events
-- (`mountns.report`): TAP version 14 (`TAP version 14`, one `ok N - NAME`
-- or `not ok N - NAME` per scenario, the plan `1..N` at the end, then
-- `# P passed, F failed`). Everything else is a `# ` line: what a script
-- printed, a failure's diagnostic, the notes, the golden text; a run that
-- stops ends with `Bail out! WHY` and no plan.
-- @module mountns.report.tap

local report = require "mountns.report"

local M = {}

local Tap = {}
Tap.__index = Tap

--- A TAP writer on out.
-- @param[opt=io.stdout] out a file (anything with `write` and `flush`)
-- @treturn table the writer
function M.new(out)
  return setmetatable({ emit = report.printer(out) }, Tap)
end

--- The stream's first line: the TAP version.
function Tap:run_start()
  self.emit("TAP version 14")
end

function Tap:output(_, line)
  self.emit(report.output_line(line))
end

function Tap:scenario_end(_, r)
  local ok = r.status == "pass"
  self.emit(string.format("%s %d - %s", ok and "ok" or "not ok", r.n,
                          report.escape_name(r.name, true)))
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
