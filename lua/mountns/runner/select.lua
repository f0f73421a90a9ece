--- mountns.runner.select: which scenarios a run runs (`--filter`,
-- `--shard`, `--list`), checked before any script starts, and the
-- writers and progress lines that go with them.
-- @module mountns.runner.select

local core = require "mountns.core"
local report = require "mountns.report"

local M = {}


--- Why `pattern` is not a valid Lua pattern, or nil. Lua reports a bad
-- pattern only when a match reaches its bad part (`("abc"):find("x[")`
-- is nil, no error): so it is checked whole here, before any script runs,
-- by the rules of lstrlib.c (the same words as its errors).
-- @tparam string pattern
-- @treturn ?string the problem
function M.pattern_problem(pattern)
  -- string.find takes a pattern without these as plain text
  if not pattern:find("[%^%$%*%+%?%.%(%[%%%-]") then return nil end
  local p, i, n = pattern, 1, #pattern
  local open, closed = 0, 0 -- captures opened and not closed, closed
  local function set(j) -- j: after "[": the index after its "]", or nil
    if p:sub(j, j) == "^" then j = j + 1 end
    repeat -- the first character is in the set even if it is "]"
      if j > n then return nil end
      if p:sub(j, j) == "%" then j = j + 1 end
      j = j + 1
    until p:sub(j, j) == "]"
    return j <= n and j + 1 or nil
  end
  while i <= n do
    local c = p:sub(i, i)
    if c == "%" then
      local d = p:sub(i + 1, i + 1)
      if d == "" then return "malformed pattern (ends with '%')" end
      if d == "b" then
        if i + 3 > n then return "missing arguments to '%b'" end
        i = i + 4
      elseif d == "f" then
        if p:sub(i + 2, i + 2) ~= "[" then return "missing '[' after '%f' in pattern" end
        i = set(i + 3)
        if not i then return "malformed pattern (missing ']')" end
      elseif d:match("%d") then
        local k = tonumber(d)
        if k == 0 or k > closed then return "invalid capture index %" .. d end
        i = i + 2
      else
        i = i + 2
      end
    elseif c == "[" then
      i = set(i + 1)
      if not i then return "malformed pattern (missing ']')" end
    elseif c == "(" then
      open, i = open + 1, i + 1
    elseif c == ")" then
      if open == 0 then return "invalid pattern capture" end
      open, closed, i = open - 1, closed + 1, i + 1
    else
      i = i + 1
    end
  end
  if open > 0 then return "unfinished capture" end
  return nil
end

--- The shard K/N of `run --shard`: k, n (1 <= k <= n), or nil and why not.
-- @tparam string text "K/N"
-- @treturn[1] int k
-- @treturn[1] int n
-- @return[2] nil
-- @treturn[2] string the problem
function M.shard(text)
  local k, n = tostring(text):match("^(%d+)/(%d+)$")
  k, n = tonumber(k), tonumber(n)
  if not k then return nil, "K/N expected (shard K of N, such as 2/4), got '"
    .. core.escape(tostring(text)) .. "'" end
  if n < 1 or n > 1e6 then return nil, "N must be from 1 to 1000000, got " .. n end
  if k < 1 or k > n then return nil, string.format("K must be from 1 to N (%d), got %d", n, k) end
  return k, n
end

--- The selection of a run (`run`'s options `filter` and `shard`) for the
-- file at `file_index` in its files: a function of a scenario's index in
-- the file and its name, true when it runs. Shard K of N takes scenario j
-- of file i when (i - 1 + j - 1) % N == K - 1: a stable split by file and
-- index (the same files in the same order give the same shards), the N
-- shards disjoint and together the whole run, and a suite of one-scenario
-- files spread over every shard (each file starts one shard further). The
-- filter is applied within the shard's share, so the N shards of a
-- filtered run are also disjoint and complete.
-- @tparam table opts `filter` (a Lua pattern), `shard` ("K/N")
-- @tparam int file_index
-- @treturn function select(index, name)
function M.selector(opts, file_index)
  local filter, k, n = opts.filter, nil, nil
  if opts.shard then k, n = M.shard(opts.shard) end
  return function(index, name)
    if n and (file_index - 1 + index - 1) % n ~= k - 1 then return false end
    if filter and not name:find(filter) then return false end
    return true
  end
end

--- `tell` (`report.subscribers`'s) that also calls progress(line) after
-- each file's end: how many files are reported and the counts so far; and
-- progress(nil) before any other event once a line is shown, then the
-- line again after it (a progress line on a terminal is erased before
-- the report writes a line, and comes back under it).
-- @tparam function tell
-- @tparam function progress
-- @tparam int total the number of files
-- @treturn function
function M.with_progress(tell, progress, total)
  local files, passed, failed, line = 0, 0, 0, nil
  return function(event, a, b)
    if line then progress(nil) end
    tell(event, a, b)
    if event == "scenario_end" then
      if b.status == "pass" then passed = passed + 1
      elseif b.status ~= "skip" then failed = failed + 1 end
    elseif event == "file_end" then
      files = files + 1
      line = string.format("%d/%d files, %d passed, %d failed", files, total, passed, failed)
    elseif event == "run_end" then
      line = nil
    end
    if line then progress(line) end
  end
end

-- The writer of `run --list`: one line a scenario, "FILE<TAB>INDEX<TAB>NAME"
-- (file and name escaped), on stdout; a file that fails to load or raises
-- outside a scenario: its error on stderr (the run's status 1).
local function list_writer()
  local out, err = report.printer(io.stdout), report.printer(io.stderr)
  return {
    scenario_listed = function(_, file, r)
      out(core.escape(file.path) .. "\t" .. r.index .. "\t" .. report.escape_name(r.name))
    end,
    scenario_end = function(_, file, r)
      if r.status ~= "pass" then
        err("mountns: run --list: " .. core.escape(file.path) .. ": "
          .. report.diagnostic(r.message or r.name, ""):gsub("\n", "\n    "))
      end
    end,
  }
end

M.list_writer = list_writer

return M
