--- mountns.report.junit: `mountns run --junit FILE`, a writer over the
-- run's events (`mountns.report`): JUnit XML in the dialect Jenkins,
-- GitLab and GitHub's test-report actions read (Surefire's,
-- junit-10.xsd). One `testsuite` per file (its path the suite's name and
-- each case's `classname`: names repeat across files), one `testcase` per
-- scenario with its `time`; `failure` (type "FAIL") for a failed check,
-- `error` for a raised error (type "ERROR"), a file whose process died or
-- broke the protocol (type "CRASH") or a timeout (type "TIMEOUT");
-- `skipped` with the reason; `system-out` with what the scenario printed
-- (and a `[[ATTACHMENT|path]]` line per file `--artifacts` wrote for it)
-- (the runner hears of a scenario when it ends: what the script printed
-- before it, since the scenario before, goes with it; what it printed
-- after the last, in the suite's `system-out`); the suite's `properties`:
-- the kernel release, the Lua version, mountns's version, the mode
-- (kernel, model, both). Names are escaped as the console's report has
-- them (`report.escape_name`: one line).
--
-- The document is written whole at the run's end (a suite's counts come
-- first): a run that stops writes what was reported. Every text goes
-- through the one escaping rule (`mountns.report.text`: no control
-- character, valid UTF-8 only), then XML's escapes.
-- @module mountns.report.junit

local report = require "mountns.report"

local M = {}

local Junit = {}
Junit.__index = Junit

local XML = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;",
              ["'"] = "&apos;", ["\n"] = "&#10;", ["\t"] = "&#9;" }

--- s as XML character data (`attr`: as an attribute's value, where a
-- newline or a tab would be normalised to a space unless written as a
-- reference): escaped by the one rule first (`report.text`).
-- @tparam string s
-- @tparam[opt] boolean attr
-- @treturn string
function M.xml(s, attr)
  return (report.text(s):gsub(attr and "[&<>\"'\n\t]" or "[&<>]", XML))
end
local xml = M.xml

--- A JUnit writer on out (the document is written at `run_end`).
-- @param out a file (anything with `write` and `flush`)
-- @tparam[opt] table env what `properties` say: `release` (the kernel's),
-- `lua` (its version), `version` (mountns's), `mode` ("kernel", "model"
-- or "both"); the ones missing are left out
-- @treturn table the writer
function M.new(out, env)
  return setmetatable({ out = out, env = env or {}, suites = {} }, Junit)
end

function Junit:run_start(run)
  -- under --shard: a property of each suite, so `mountns report merge`
  -- can tell that every shard is there
  self.shard = run.shard
end

function Junit:file_start(file)
  -- the suite's name and each case's classname: one line, as the console's
  self.suite = { path = report.escape_name(file.path), cases = {}, out = {}, printed = {} }
  self.suites[#self.suites + 1] = self.suite
end

function Junit:output(_, line)
  -- a scenario's prints come before its line: held until it ends
  local p = self.suite.printed
  p[#p + 1] = line
end

function Junit:scenario_end(_, r)
  local s = self.suite
  s.cases[#s.cases + 1] = { r = r, out = s.printed }
  s.printed = {}
end

function Junit:file_end()
  -- what was printed after the last scenario: the suite's
  for _, line in ipairs(self.suite.printed) do
    self.suite.out[#self.suite.out + 1] = line
  end
end

-- The element of a result that is not a pass, or nil.
local function verdict_element(r)
  local msg = r.message or ""
  local first = msg:match("^[^\n]*")
  if r.status == "fail" then
    return string.format('<failure type="FAIL" message="%s">%s</failure>', xml(first, true),
                         xml(msg))
  elseif r.status == "error" or r.status == "timeout" then
    local kind = r.status == "timeout" and "TIMEOUT" or r.crash and "CRASH" or "ERROR"
    return string.format('<error type="%s" message="%s">%s</error>', kind, xml(first, true),
                         xml(msg))
  elseif r.status == "skip" then
    return string.format('<skipped message="%s"/>', xml(msg, true))
  end
end

-- The property lines of env.
local PROPERTIES = { { "kernel.release", "release" }, { "lua.version", "lua" },
                     { "mountns.version", "version" }, { "mountns.mode", "mode" } }

function Junit:run_end(summary)
  local env, lines = self.env, {}
  local function add(s) lines[#lines + 1] = s end
  local counts = { tests = 0, failures = 0, errors = 0, skipped = 0, time = 0 }
  local stats = {}
  for i, s in ipairs(self.suites) do
    local c = { tests = #s.cases, failures = 0, errors = 0, skipped = 0, time = 0 }
    for _, case in ipairs(s.cases) do
      local st = case.r.status
      if st == "fail" then c.failures = c.failures + 1
      elseif st == "error" or st == "timeout" then c.errors = c.errors + 1
      elseif st == "skip" then c.skipped = c.skipped + 1 end
      c.time = c.time + (case.r.secs or 0)
    end
    for k, v in pairs(c) do counts[k] = counts[k] + v end
    stats[i] = c
  end
  add('<?xml version="1.0" encoding="UTF-8"?>')
  add(string.format('<testsuites name="mountns run" tests="%d" failures="%d" errors="%d" '
    .. 'time="%.3f">', counts.tests, counts.failures, counts.errors, counts.time))
  for i, s in ipairs(self.suites) do
    local c = stats[i]
    add(string.format('  <testsuite name="%s" tests="%d" failures="%d" errors="%d" '
      .. 'skipped="%d" time="%.3f" file="%s">', xml(s.path, true), c.tests, c.failures,
      c.errors, c.skipped, c.time, xml(s.path, true)))
    add("    <properties>")
    for _, p in ipairs(PROPERTIES) do
      if env[p[2]] ~= nil then
        add(string.format('      <property name="%s" value="%s"/>', p[1],
                          xml(tostring(env[p[2]]), true)))
      end
    end
    if self.shard then
      add(string.format('      <property name="mountns.shard" value="%s"/>',
                        xml(self.shard, true)))
    end
    if summary.stop then
      add(string.format('      <property name="mountns.stopped" value="%s"/>',
                        xml(summary.stop, true)))
    end
    add("    </properties>")
    for _, case in ipairs(s.cases) do
      local r = case.r
      local body = { verdict_element(r) }
      -- the files --artifacts wrote, as Jenkins' attachments plugin
      -- (and GitLab) read them from system-out
      for _, path in ipairs(r.artifacts or {}) do
        case.out[#case.out + 1] = "[[ATTACHMENT|" .. path .. "]]"
      end
      if #case.out > 0 then
        body[#body + 1] = "<system-out>" .. xml(table.concat(case.out, "\n") .. "\n")
          .. "</system-out>"
      end
      local open = string.format('    <testcase name="%s" classname="%s" time="%.3f"',
                                 xml(report.escape_name(r.name), true), xml(s.path, true),
                                 r.secs or 0)
      if #body == 0 then add(open .. "/>")
      else
        add(open .. ">")
        for _, b in ipairs(body) do add("      " .. b) end
        add("    </testcase>")
      end
    end
    if #s.out > 0 then
      add("    <system-out>" .. xml(table.concat(s.out, "\n") .. "\n") .. "</system-out>")
    end
    add("  </testsuite>")
  end
  add("</testsuites>")
  self.out:write(table.concat(lines, "\n"), "\n")
  self.out:flush()
end

return M
