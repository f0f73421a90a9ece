--- mountns.report.plain: `mountns run`'s plain report, a writer over the
-- run's events (`mountns.report`): one line per scenario, its status's
-- word (`ok`, `FAIL` a failed check, `ERROR` a raised error or a crash,
-- `TIMEOUT`), its name and milliseconds, or `SKIP`, its name and the
-- reason; a failure's diagnostic and each note below it, indented four
-- spaces; under `--golden` a passing scenario's golden text, indented the
-- same; the files `--artifacts` wrote for it; what a script printed as
-- `# ` lines; the summary.
-- @module mountns.report.plain

local report = require "mountns.report"

local M = {}

local Plain = {}
Plain.__index = Plain

--- A plain writer on out.
-- @param[opt=io.stdout] out a file (anything with `write` and `flush`)
-- @treturn table the writer
function M.new(out)
  return setmetatable({ emit = report.printer(out) }, Plain)
end

function Plain:output(_, line)
  self.emit(report.output_line(line))
end

function Plain:scenario_end(_, r)
  local ok = r.status == "pass"
  if r.status == "skip" then
    self.emit(string.format("SKIP %s (%s)", report.escape_name(r.name),
                            report.escape_name(r.message or "skipped")))
    return
  end
  self.emit(string.format("%-4s %s (%.0f ms)", report.WORDS[r.status] or "FAIL",
                          report.escape_name(r.name), r.secs * 1000))
  if not ok then self.emit(report.diagnostic(r.message or "failed", "    ")) end
  for _, note in ipairs(r.notes or {}) do
    self.emit(report.diagnostic("note: " .. note, "    "))
  end
  if r.artifacts then
    self.emit(report.diagnostic("artifacts: " .. table.concat(r.artifacts, " "), "    "))
  end
  if ok and r.golden then
    for _, line in ipairs(report.golden_lines(r.golden, "    ", "")) do self.emit(line) end
  end
end

function Plain:run_end(summary)
  self.emit(report.summary(summary))
end

return M
