--- mountns.report.kcidb: `mountns run --kcidb FILE`, a writer over the
-- run's events (`mountns.report`): KCIDB v5.3 JSON, the I/O schema of
-- KernelCI's common results database. A checkout and a build describe the
-- kernel under test (its release, its architecture); each scenario is a
-- test whose `path` is `mountns.<file>.<n>` (`<file>`: the script's base
-- name, its characters outside `[A-Za-z0-9_-]` as `_`, `_2`... for a
-- second file of that name; `<n>`: the scenario's number in its file)
-- and whose `id` is `<origin>:<release>:<path>`: the same scenario on the
-- same kernel has the same id in every run, so the reports of shards
-- merge. `status`: PASS, FAIL (a failed check), ERROR (a raised error, a
-- crash, a timeout: `misc.status` says "TIMEOUT" and `misc.timeout` the
-- bound), SKIP; a verdict on a whole file (an error outside any scenario,
-- its process dead) is the test `mountns.<file>`; when the rest of a file
-- did not run, the test of its first scenario that never ran is MISS (the
-- runner learns of a scenario when it starts: how many more the file had
-- is not known, so one MISS stands for them). `duration`, `start_time`,
-- `log_excerpt` (the diagnostic), `output_files` (what `--artifacts`
-- wrote), `environment.misc` (kernel release,
-- `mountns.features()`, the Lua version, the mode), `misc` (the name, the
-- file, what the scenario printed).
--
-- The document is written whole at the run's end. Every text goes through
-- the one escaping rule (`mountns.report.text`), then JSON's escapes.
-- @module mountns.report.kcidb

local report = require "mountns.report"

local M = {}

local Kcidb = {}
Kcidb.__index = Kcidb

local STATUS = { pass = "PASS", fail = "FAIL", error = "ERROR", timeout = "ERROR",
                 skip = "SKIP" }

-- KCIDB's limit on a log excerpt (characters; bytes here, cut at a
-- character's start)
local EXCERPT = 16384

local JSON = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\t"] = "\\t" }

--- v as JSON: strings escaped by the one rule first (`report.text`), then
-- JSON's escapes; a table with keys 1..n (n > 0) is an array, any other an
-- object (its keys sorted: the same report, byte for byte, for the same
-- run); numbers finite.
-- @param v
-- @treturn string
function M.json(v)
  local t = type(v)
  if t == "string" then return '"' .. report.text(v):gsub('["\\\n\t]', JSON) .. '"' end
  if t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return "null" end
    if v == math.floor(v) and math.abs(v) < 2 ^ 53 then return string.format("%d", v) end
    -- the shortest of the two that reads back as v (0.3, not 0.29999...)
    local short = string.format("%.15g", v)
    return tonumber(short) == v and short or string.format("%.17g", v)
  end
  if t == "boolean" then return tostring(v) end
  if t ~= "table" then return "null" end
  local n, count = #v, 0
  for _ in pairs(v) do count = count + 1 end
  local out = {}
  if n > 0 and n == count then
    for i = 1, n do out[i] = M.json(v[i]) end
    return "[" .. table.concat(out, ",") .. "]"
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local val = v[k]
    if val == nil then val = v[tonumber(k)] end
    out[#out + 1] = M.json(k) .. ":" .. M.json(val)
  end
  return "{" .. table.concat(out, ",") .. "}"
end
local json = M.json

--- A KCIDB date-time (RFC 3339, UTC) of a time in seconds since the epoch.
-- @tparam number t
-- @treturn string
function M.date_time(t)
  local s = math.floor(t)
  return os.date("!%Y-%m-%dT%H:%M:%S", s) .. string.format(".%03d+00:00",
    math.min(999, math.floor((t - s) * 1000)))
end

-- text cut to KCIDB's limit, at a character's start
local function excerpt(text)
  text = report.text(text)
  if #text <= EXCERPT then return text end
  local cut = EXCERPT
  while cut > 0 and text:byte(cut + 1) and text:byte(cut + 1) >= 0x80
        and text:byte(cut + 1) < 0xC0 do
    cut = cut - 1
  end
  return text:sub(1, cut)
end

--- A KCIDB writer on out (the document is written at `run_end`).
-- @param out a file (anything with `write` and `flush`)
-- @tparam[opt] table env `origin` (`[a-z0-9_]+`, default "mountns"),
-- `release` (the kernel's), `arch` (its architecture), `features`
-- (`mountns.features()`), `lua`, `version` (mountns's), `mode`
-- @treturn table the writer
function M.new(out, env)
  env = env or {}
  local origin = env.origin or "mountns"
  if type(origin) ~= "string" or not origin:match("^[a-z0-9_]+$") then
    error("bad argument #2 to 'new' (option 'origin': [a-z0-9_]+ expected, got "
      .. report.escape_name(tostring(origin)) .. ")", 2)
  end
  return setmetatable({ out = out, env = env, origin = origin, tests = {}, stems = {} }, Kcidb)
end

function Kcidb:run_start(run)
  self.clock, self.time = run.clock, run.time or os.time()
  -- under --shard: named in the build's and each test's misc, so `mountns
  -- report merge` can tell that every shard is there
  self.shard = run.shard
end

-- the file's path segment, unique in this run
function Kcidb:file_start(file)
  local base = file.path:match("([^/]*)%.lua$") or file.path:match("[^/]*$")
  base = base:gsub("[^%w_%-]", "_")
  if base == "" then base = "scenario" end
  local stem, k = base, 1
  while self.stems[stem] do
    k = k + 1
    stem = base .. "_" .. k
  end
  self.stems[stem] = true
  self.file = { path = file.path, stem = stem, scenarios = 0, printed = {} }
end

function Kcidb:output(_, line)
  local p = self.file.printed
  p[#p + 1] = line
end

-- the files --artifacts wrote, as KCIDB's resources: a file name and a
-- file: URL (absolute: a relative path is taken from the working
-- directory, as the runner wrote it)
local function output_files(paths)
  local out, cwd = {}, nil
  for _, path in ipairs(paths) do
    if path:sub(1, 1) ~= "/" then
      cwd = cwd or os.getenv("PWD") or "."
      path = cwd .. "/" .. path
    end
    local url = "file://" .. path:gsub("[^%w/._~-]", function(c)
      return string.format("%%%02X", c:byte())
    end)
    out[#out + 1] = { name = path:match("[^/]*$"), url = url }
  end
  return out
end

function Kcidb:scenario_end(_, r)
  local f, env = self.file, self.env
  local path = "mountns." .. f.stem
  if not r.whole_file then
    -- the scenario's place in its file (--filter and --shard leave some
    -- out: the path stays the one a whole run gives it)
    f.scenarios = r.index or (f.scenarios + 1)
    path = path .. "." .. f.scenarios
  end
  local release = env.release or "unknown"
  local test = {
    id = self.origin .. ":" .. release .. ":" .. path, build_id = self:build_id(),
    origin = self.origin, path = path, status = STATUS[r.status] or "ERROR",
    duration = r.secs or 0, comment = r.name,
    misc = { name = r.name, file = f.path, status = r.status == "timeout" and "TIMEOUT" or nil,
             timeout = r.timeout, output = #f.printed > 0 and table.concat(f.printed, "\n")
             or nil, shard = self.shard },
  }
  if r.ended and self.clock then
    test.start_time = M.date_time(self.time + (r.ended - (r.secs or 0) - self.clock))
  end
  if r.message and r.status ~= "pass" then test.log_excerpt = excerpt(r.message) end
  if r.artifacts then test.output_files = output_files(r.artifacts) end
  self.tests[#self.tests + 1] = test
  f.printed = {}
  if r.missed then
    local miss = "mountns." .. f.stem .. "." .. (f.scenarios + 1)
    self.tests[#self.tests + 1] = {
      id = self.origin .. ":" .. release .. ":" .. miss, build_id = self:build_id(),
      origin = self.origin, path = miss, status = "MISS",
      comment = "the scenarios of " .. f.path .. " from #" .. (f.scenarios + 1)
        .. " on did not run (how many there were is not known)",
      misc = { file = f.path },
    }
  end
end

function Kcidb:build_id()
  return self.origin .. ":" .. (self.env.release or "unknown")
end

function Kcidb:run_end(summary)
  local env = self.env
  local release = env.release or "unknown"
  local kernel = { kernel_release = env.release, lua = env.lua, mountns_version = env.version,
                   mode = env.mode, stopped = summary.stop }
  local built = { shard = self.shard }
  for k, v in pairs(kernel) do built[k] = v end
  local environment = { comment = "mountns run on Linux " .. release,
                        misc = { kernel_release = env.release, features = env.features,
                                 lua = env.lua, mode = env.mode } }
  for _, t in ipairs(self.tests) do t.environment = environment end
  local start = M.date_time(self.time or os.time())
  local arch = type(env.arch) == "string" and env.arch:lower():match("^[a-z0-9_]+$") or nil
  local doc = {
    version = { major = 5, minor = 3 },
    checkouts = { { id = self:build_id(), origin = self.origin, start_time = start,
                    comment = "the running kernel, Linux " .. release, valid = true,
                    misc = kernel } },
    builds = { { id = self:build_id(), checkout_id = self:build_id(), origin = self.origin,
                 architecture = arch, comment = "the running kernel, Linux " .. release,
                 misc = built } },
    tests = #self.tests > 0 and self.tests or nil,
  }
  self.out:write(json(doc), "\n")
  self.out:flush()
end

return M
