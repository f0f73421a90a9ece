--- mountns.runner.run: the scheduler of `mountns run` (`mountns.runner`):
-- files, slots, their processes, frames, bounds, signals.
-- Its whole value is that the verdict cannot lie, so:
--
-- - each script runs in a forked child of its own, in a private mount
--   namespace: nothing the script does outside a scenario reaches the mount
--   table `run` was started in, and a script's `os.exit` ends only that
--   child (the runner reports it as an early exit, a failure, and goes on);
-- - what a script or its scenarios print to stdout is read through a pipe
--   and re-emitted as `# ` comment lines, so it can never pass for a result
--   line; names, prints and diagnostics go through `mountns.escape`, so
--   none of them can add a line or drive the terminal (the writers do it,
--   by the rules of `mountns.report`: the runner sends events and writes
--   no report line itself);
-- - SIGINT stops the run at once: the runner kills the script's child
--   (its scenario processes die with it), prints the summary so far with
--   "interrupted" and returns 130; SIGTERM the same, "terminated", 143;
-- - bounds belong to the process that waits: a scenario's process is
--   bounded by its script's process (isolate), the script's process by the
--   runner, which never blocks on it (a pipe ended without "done": its
--   exit waited for in the main loop, --timeout at most);
-- - the runner's pipes are the script's process's alone (no scenario's
--   process inherits them: child.keep_from_children), and every frame on
--   them is checked (`event_problem`): anything else is a protocol error
--   that fails the file, never a crash, never an extra "ok".
-- The runner's results come from the child as mountns.child frames on a
-- second pipe, and the child waits for the runner's acknowledgement (a
-- third pipe) before it goes on: so everything in the stdout pipe when the
-- runner reads a result was printed before it, and the output a scenario
-- printed comes out before the scenario's own line, never after.
-- @module mountns.runner.run

local core = require "mountns.core"
local argcheck = require "mountns.args"
local child_proto = require "mountns.child"
local scenario = require "mountns.scenario"
local lazy = require "mountns.lazy"
local report = require "mountns.report"
local plain_writer = require "mountns.report.plain"
local tap_writer = require "mountns.report.tap"
local order = require "mountns.report.order"
local artifacts = lazy.require "mountns.artifacts"
local protocol = require "mountns.runner.protocol"
local select_ = require "mountns.runner.select"
local script = require "mountns.runner.script"
-- what a script requires (every example does): loaded here, with every
-- module they defer, by `run` before its first fork (see there)
require "mountns"
require "mountns.expect"

local unpack = table.unpack or unpack -- luacheck: ignore

local M = {}

-- The signals that stop a run: the word the summary and TAP's bail-out
-- say, the exit status (128 + the signal's number, as a shell reports it).
local SIGNALS = {
  { name = "INT", word = "interrupted", status = 130 },
  { name = "TERM", word = "terminated", status = 143 },
}


-- How long after a scenario's timeout the runner waits for its result
-- before it kills the script's process: the script's process kills the
-- scenario at its timeout and reports it at once; this is for a script's
-- process that cannot (stopped, wedged)
local GRACE = 5
-- bytes of a script's stdout read at one go before the runner looks at
-- its other scripts and frames
local DRAIN_MAX = 256 * 1024


-- What to show for a script's child that ended without its "done" frame.
local function early_exit(how, code)
  local text = "its process " .. child_proto.ending(how, code) .. " before the script ended"
  if how == "exited" then
    text = text .. " (os.exit in a script ends only the script's own process)"
  end
  return text
end

--- The number of online CPUs, from /sys/devices/system/cpu/online
-- ("0-3,6"); 1 when it cannot be read. `mountns run`'s default `jobs`.
-- @treturn int
function M.cpus()
  local f = io.open("/sys/devices/system/cpu/online")
  local text = f and f:read("*l")
  if f then f:close() end
  local n = 0
  for a, b in (text or ""):gmatch("(%d+)%-?(%d*)") do
    n = n + (b ~= "" and tonumber(b) - tonumber(a) + 1 or 1)
  end
  return n > 0 and n or 1
end


--- Run scripts and report their verdict (on stdout, or to `writers`).
-- @tparam {string,...} files the scripts, in order
-- @tparam[opt] table opts `tap`: TAP instead of the plain report (true or
-- 13: version 13; 14: version 14);
-- `writers`: the report writers, a list of objects whose methods hear the
-- run's events (`mountns.report`) instead of the plain or TAP report on
-- stdout (`mountns.report.plain.new()`, `mountns.report.tap.new()` are
-- those two; not with `tap`);
-- `dot`: a directory (it exists) for one Graphviz file per passing scenario,
-- `<script>-<n>.dot` (`<script>~2-<n>.dot` for a second script of the
-- same name); `timeout`: every scenario's default timeout in seconds;
-- `golden`: after each passing scenario's line, the golden text of its
-- namespaces at its end (`mountns.format.golden_text`), each line indented
-- by four spaces (`# ` under TAP), to paste into `expect.golden`;
-- `jobs`: how many scripts run at once (an integer >= 1, default 1; a
-- script counts until its last result is in: the next one starts while
-- its process ends); the report is the same whatever it is: a script's
-- lines are held back until the scripts before it are reported, so the
-- output comes in file order;
-- `model = true`: the scenarios run on the model (`mountns.model`), not on
-- the kernel; `linux` (with `model`): the kernel version whose rules the
-- model follows ("5.10", "6.1", ... "7.3"; default: the running kernel's);
-- `both`: run each scenario on the kernel and mirror every step it
-- records on the model (`mountns.mirror`), failing the scenario at the
-- first difference of the outcomes or of the normalised tables; the steps
-- the model cannot follow (`ns:run`, `ns:exec`, methods it has not) are
-- listed after the scenario's line as `note:` lines (true, or the
-- mirror's options);
-- `filter`: run only the scenarios whose name matches this Lua pattern
-- (`string.find`; a plain word is a substring); one that matches no
-- scenario of the run (without `shard`) fails it (status 1, a line on
-- stderr); `shard` ("K/N"): run only
-- shard K of N (`selector`); a scenario left out is not run at all (its
-- function is not called, no process, no namespace): its script's process
-- asks before it runs one (`scenario.run_file`'s `select`);
-- `list`: run no scenario, but send each one the run would run to the
-- writers as `scenario_listed` (default writer: one line each,
-- "FILE<TAB>INDEX<TAB>NAME"); the scripts still run, each in its process
-- and private namespace: their code outside scenarios is what names them;
-- `progress`: a function called with a line of progress after each file
-- ("3/20 files, 41 passed, 1 failed"; `mountns.cli.progress` shows it on
-- stderr), and with nil to erase it before the report goes on
-- (`with_progress`);
-- `fail_fast`: stop at the first scenario that does not pass (in the
-- report's order): the run ends as a stopped one (the summary says what
-- was not run; exit status 1).
-- SIGINT and SIGTERM are blocked from here on (they stay so when run
-- returns: the caller is about to exit) and read from signalfds while it
-- runs.
-- @treturn[1] int the exit status: 0 all passed (or skipped), 1 a failure or an early
-- exit (or the runner itself failed: "stopped"), 130 interrupted, 143
-- terminated
-- @return[2] nil
-- @treturn[2] string "signalfd SIGINT: strerror (ENAME)"
function M.run(files, opts)
  if type(files) ~= "table" then
    argcheck.error("run", 1, "table expected, got " .. type(files), 2)
  end
  for _, f in ipairs(files) do argcheck.path(f, "run", 1, 2) end
  opts = argcheck.options(opts, "run", 2,
    { "tap", "dot", "golden", "timeout", "jobs", "model", "both", "linux", "writers",
      "artifacts", "artifacts_all", "filter", "shard", "list", "fail_fast", "progress" }, 2)
  argcheck.seconds(opts.timeout, "run", 2, "option 'timeout'", 2)
  if opts.artifacts ~= nil then argcheck.typed(opts.artifacts, "string", "run", 2, 2) end
  if opts.artifacts_all and not opts.artifacts then
    argcheck.error("run", 2, "option 'artifacts_all' needs option 'artifacts' (a directory)", 2)
  end
  if opts.artifacts and opts.artifacts == opts.dot then
    argcheck.error("run", 2, "options 'dot' and 'artifacts' need directories of their own "
      .. "(both write <script>-<n>.dot)", 2)
  end
  scenario.check_modes(opts, "run", 2)
  local jobs = opts.jobs
  if jobs == nil then jobs = 1 end
  if type(jobs) ~= "number" or jobs < 1 or jobs ~= math.floor(jobs) or jobs == math.huge then
    argcheck.error("run", 2, "option 'jobs': an integer >= 1 expected, got "
      .. tostring(jobs), 2)
  end
  if opts.filter ~= nil then
    if type(opts.filter) ~= "string" then
      argcheck.error("run", 2, "option 'filter': a Lua pattern (string) expected, got "
        .. type(opts.filter), 2)
    end
    local problem = select_.pattern_problem(opts.filter)
    if problem then
      argcheck.error("run", 2, "option 'filter': " .. problem .. " in '"
        .. core.escape(opts.filter) .. "'", 2)
    end
  end
  if opts.shard ~= nil then
    local k, why = select_.shard(opts.shard)
    if not k then argcheck.error("run", 2, "option 'shard': " .. why, 2) end
  end
  local writers = opts.writers
  if opts.tap ~= nil and opts.tap ~= true and opts.tap ~= false and opts.tap ~= 13
     and opts.tap ~= 14 then
    argcheck.error("run", 2, "option 'tap': true, 13 or 14 expected, got "
      .. core.escape(tostring(opts.tap)), 2)
  end
  if opts.list then
    -- what reports a run's results has nothing to do in a list
    for _, k in ipairs { "tap", "dot", "golden", "fail_fast", "artifacts" } do
      if opts[k] then
        argcheck.error("run", 2, "option '" .. k .. "' does not apply to option 'list' "
          .. "(no scenario runs)", 2)
      end
    end
    writers = writers or { select_.list_writer() }
  end
  if writers ~= nil and opts.tap then
    argcheck.error("run", 2, "option 'tap' with option 'writers': put "
      .. "mountns.report.tap.new() in writers", 2)
  end
  if opts.progress ~= nil and type(opts.progress) ~= "function" then
    argcheck.error("run", 2, "option 'progress': function expected, got "
      .. type(opts.progress), 2)
  end
  -- the report: events to the writers, which write it (mountns.report)
  local tell = report.subscribers(writers or { opts.tap and tap_writer.new(nil,
    opts.tap == 14 and 14 or 13) or plain_writer.new() }, "run", 2, 2)
  if opts.progress then tell = select_.with_progress(tell, opts.progress, #files) end
  -- once here, not in every script's process: the modules a script
  -- requires, and those deferred (mountns.lazy) that its first scenario
  -- would load before it forks; each script's process inherits them
  lazy.load_all()
  -- the signals' fds: no script's process holds them (keep_from_children)
  local sigfds = {}
  local function close_sigfds()
    for _, f in ipairs(sigfds) do
      child_proto.keep_from_children(f, false)
      core.close_fd(f)
    end
  end
  for _, sig in ipairs(SIGNALS) do
    local fd, serr = core.signalfd(sig.name)
    if not fd then
      close_sigfds()
      return nil, serr
    end
    sigfds[#sigfds + 1] = fd
    child_proto.keep_from_children(fd)
  end
  -- the scenarios' template namespace, once here too: a script's process,
  -- root, is in the runner's user namespace and reuses it (not root, its
  -- private namespace is in a user namespace of its own, where its first
  -- scenario makes its own); if it cannot be made here, each script's
  -- first scenario tries and fails as it would have
  local _, euid = core.getuid()
  if euid == 0 and not opts.model then pcall(scenario.template) end

  -- the report, in file order whatever runs at once: each script's
  -- (`st.rep`) is held until those before it are reported
  local rep = order.new(tell, core.clock, opts.fail_fast)

  -- picture file stems: a script's base name, made unique in this run
  local stems = {}
  local function stem_of(path)
    local base = path:match("([^/]*)%.lua$") or path:match("[^/]*$")
    if base == "" then base = "scenario" end
    local stem, k = base, 1
    while stems[stem] do
      k = k + 1
      stem = base .. "~" .. k
    end
    stems[stem] = true
    return stem
  end

  local function picture(stem, k, dot)
    return artifacts.write_file(string.format("%s/%s-%d.dot", opts.dot, stem, k), dot)
  end

  -- what can be read now (at most DRAIN_MAX bytes: a script writing as
  -- fast as the runner reads would keep one read going for ever), and
  -- whether the stream has ended
  local function drain(fd)
    local data, why, part = core.read_all(fd, 0, DRAIN_MAX)
    if data then return data, true end
    if why == "timeout" or why == "max" then return part, false end
    return "", true -- a read error ends the stream like an EOF
  end

  local running = {} -- the scripts whose results are still to come, in file order
  -- the PIDs of scripts whose "done" frame is in but whose process may still
  -- be ending: reaped without waiting (`reap`)
  local exiting = {}
  local exiting_path = {} -- their files, by PID (for the --timeout note)
  -- how long a script's process may take to end once its pipe ended (or
  -- after the last report): the run's timeout
  local limit = opts.timeout or 60

  -- A resource the system refused (pipe: EMFILE, fork: EAGAIN...) while
  -- other scripts run: the file waits until one of them ends (said once on
  -- stderr); with none running it fails, naming the error.
  local starved, starved_said = nil, false

  -- Start the script's process: true, or false after a failure it
  -- reported, or nil and the error when the system refused a resource
  -- while other scripts run (the file is started later).
  local function start(path, file_index)
    -- the signals' fds and the other scripts' ends of their pipes are
    -- kept from this one's process (child.spawn, keep_from_children)
    local proc, err = child_proto.spawn({ up = { "ev", "out" }, down = { "ack" } },
      function(fds) return script.child(path, file_index, opts, fds.ev, fds.out, fds.ack) end)
    if not proc then
      if running[1] then
        if not starved_said then
          io.stderr:write("mountns: run: ", core.escape(path), ": ", tostring(err),
            ": it waits for a running file to end (fewer files run at once)\n")
          starved_said = true
        end
        return nil, err
      end
    end
    local st = { path = path, rep = rep:add(path), pictures = 0, out_open = true, results = 0,
                 stem = (opts.dot or opts.artifacts) and stem_of(path) }
    if not proc then
      rep:error(st.rep, path, "cannot start its process: " .. tostring(err), 0,
        { missed = true, whole_file = true, crash = true })
      rep:finish(st.rep)
      return false
    end
    st.proc, st.pid = proc, proc.pid
    st.ev_r, st.out_r, st.ack_w = proc.fds.ev, proc.fds.out, proc.fds.ack
    running[#running + 1] = st
    return true
  end

  local function read_output(st)
    local data, eof = drain(st.out_r)
    rep:output(st.rep, data)
    if eof then st.out_open = false end
  end

  -- The script's process broke the protocol: its report ends with a
  -- failure saying how, its process is killed (`finish`).
  local function broken(st, why)
    st.broken = st.broken or why
  end

  -- One frame of the script's process: exactly one event of a known kind
  -- with well-formed fields (`event_problem`), a result while the script
  -- runs, then one "done"; anything else breaks the protocol.
  local function handle(st, kind, body)
    if st.out_open then read_output(st) end
    if kind ~= "o" then return broken(st, "a frame of kind " .. string.format("%q", kind)) end
    -- linear in the frame and bounded by the run's timeout, whatever the
    -- bytes (mountns.child.decode)
    local okd, vals = pcall(child_proto.decode, body, core.clock() + limit)
    if not okd then return broken(st, tostring(vals)) end
    if vals.n ~= 1 then return broken(st, "a frame of " .. tostring(vals.n) .. " values") end
    local ev = vals[1]
    local problem = protocol.event_problem(ev)
    if problem then return broken(st, problem) end
    if st.done then return broken(st, "an event after its \"done\"") end
    -- one verdict per scenario started: a start, then its result (a model
    -- scenario, run in the script's process, sends no start)
    local started = st.started
    if started and (ev[1] ~= "result" or ev.name ~= started.name) then
      return broken(st, string.format("%s while scenario %s runs", ev[1] == "result" and
        "the result of scenario " .. string.format("%q", ev.name) or "a " .. ev[1] .. " event",
        string.format("%q", started.name)))
    end
    st.started = nil
    if ev[1] == "start" then
      st.started = { name = ev.name, timeout = ev.timeout,
                     by = core.clock() + ev.timeout + GRACE }
    elseif ev[1] == "result" then
      local status, err = ev.status or (ev.ok and "pass" or "fail"), ev.err
      if status == "pass" and ev.dot and st.stem then
        st.pictures = st.pictures + 1
        local wrote, werr = picture(st.stem, st.pictures, ev.dot)
        if not wrote then status, err = "error", "cannot write its picture: " .. tostring(werr) end
      end
      st.results = st.results + 1
      local saved
      if opts.artifacts and ev.artifacts then
        local werr
        saved, werr = artifacts.write(opts.artifacts, st.stem, ev.index or st.results,
          ev.artifacts, status ~= "pass" and err or nil)
        if not saved then
          status, err = "error", "cannot write its artifacts: " .. tostring(werr)
        end
      end
      local ok = status == "pass"
      rep:result(st.rep, { name = ev.name, status = status, message = err,
                           secs = ev.secs, golden = ok and ev.golden or nil, notes = ev.notes,
                           timeout = status == "timeout" and started and started.timeout
                             or nil, artifacts = saved, index = ev.index })
      -- the script goes on; not after the failure that stops a --fail-fast
      -- run: its process waits until it is killed, running nothing more
      if not rep.halted then core.write_fd(st.ack_w, "k") end
    elseif ev[1] == "listed" then
      -- (a script's process lists only under --list: one forged elsewhere
      -- would reach the writers as a scenario that never ran)
      if not opts.list then return broken(st, "a listed event outside --list") end
      rep:listed(st.rep, { name = ev.name, index = ev.index })
      core.write_fd(st.ack_w, "k")
    else
      st.done = ev
    end
  end

  -- Reap the processes of `exiting` that have ended (all of them, waiting,
  -- with `wait`).
  local function reap(wait)
    child_proto.reap_list(exiting, wait)
  end

  -- The script's process is done with: its fds closed, its slot free.
  local function release(st)
    if st.out_open then rep:output(st.rep, (drain(st.out_r))) end
    st.proc:close()
    for i, o in ipairs(running) do
      if o == st then table.remove(running, i); break end
    end
  end

  -- The script's report is complete: its "done" frame is in, or its pipe
  -- ended (the process is gone, or killed), or it broke the protocol.
  -- End its report; its slot is free. After "done" its process is not
  -- waited for: its exit (the teardown of its namespaces, RCU grace
  -- periods) overlaps the next script's start, and it is reaped later
  -- (`reap`). Without "done" the exit status is the report: `how`, `code`
  -- from its waitpid (the main loop waits for it, Ctrl-C heard, for the
  -- run's timeout at most: `stuck`, it was killed then).
  local function finish(st, how, code, stuck)
    if st.broken or st.overdue then
      st.proc:kill_tree()
    elseif st.done then
      if st.proc:wait(0) == "running" then
        exiting[#exiting + 1], exiting_path[st.pid] = st.pid, st.path
      end
    end
    release(st)
    rep:end_output(st.rep)
    local done, path = st.done, st.path
    -- `missed`: the rest of the file did not run (how many scenarios it
    -- had left, the runner cannot know: it learns of one as it starts);
    -- `whole_file`: the verdict is on the file, not on a scenario;
    -- `crash`: its process died, was killed or broke the protocol
    if st.overdue then
      local sc = st.started
      rep:error(st.rep, sc.name, string.format("ran past its timeout of %g s: its script's "
        .. "process did not report it within %g s more and was killed (the rest of %s "
        .. "did not run)", sc.timeout, GRACE, path), sc.timeout + GRACE,
        { status = "timeout", timeout = sc.timeout, missed = true })
    elseif st.broken then
      rep:error(st.rep, path, "protocol error: " .. st.broken
        .. " (its process was killed: a scenario's process cannot write to the runner)", 0,
        { missed = true, whole_file = true, crash = true })
    elseif stuck then
      rep:error(st.rep, path .. " exited early", string.format("its process closed its "
        .. "result pipe before the script ended and was still running %g s later "
        .. "(--timeout): killed", limit), 0,
        { missed = true, whole_file = true, crash = true })
    elseif not done then
      rep:error(st.rep, path .. " exited early", early_exit(how, code), 0,
        { missed = true, whole_file = true, crash = true })
    elseif not done.ok and done.status == "skip" then
      -- mountns.skip outside any scenario: the rest of the file is skipped
      rep:error(st.rep, path, done.err, 0, { status = "skip", whole_file = true })
    elseif not done.ok then
      -- an error outside any scenario
      rep:error(st.rep, path, done.err, 0, { missed = true, whole_file = true })
    elseif st.rep.results == 0 and (done.seen or 0) == 0 then
      -- (a script whose scenarios were all left out by --filter, --shard
      -- or --list reached some: not an error)
      rep:error(st.rep, path .. " (no scenario ran)", "the script ran no scenario", 0,
        { whole_file = true })
    end
    rep:finish(st.rep)
  end

  -- The scripts whose pipe ended without "done": reaped once they end,
  -- killed once the run's timeout has passed; the seconds until the next
  -- look (nil: none to look at).
  local function look_at_closing()
    local tick
    for _, st in ipairs { unpack(running) } do
      if st.closing_at then
        local how, code = st.proc:wait(0)
        local waited = core.clock() - st.closing_at
        if how ~= "running" then
          finish(st, how, code)
        elseif waited >= limit then
          st.proc:kill_tree()
          finish(st, nil, nil, true)
        else
          -- 1 ms, doubling to 50 ms: an early exit is seen at once
          local t = math.min(math.max(0.001, waited), 0.05, limit - waited)
          tick = math.min(tick or t, t)
        end
      end
    end
    return tick
  end

  -- The scripts whose scenario is past its timeout and GRACE: their
  -- process is killed, the scenario fails; the seconds until the next
  -- deadline (nil: none).
  local function look_at_overdue()
    local tick
    for _, st in ipairs { unpack(running) } do
      local sc = st.started
      if sc and not st.closing_at then
        local left = sc.by - core.clock()
        if left <= 0 then
          st.overdue = true
          finish(st)
        else
          tick = math.min(tick or left, left)
        end
      end
    end
    return tick
  end

  local stop -- "interrupted" (SIGINT), "terminated" (SIGTERM)
  local function signalled(ready)
    for i, fd in ipairs(sigfds) do
      if ready[i] then
        core.read_all(fd, 0)
        return SIGNALS[i].word
      end
    end
  end

  -- The run: scripts started (up to `jobs`), their frames and output read,
  -- each report completed, until every file is reported or a signal stops it.
  local function loop()
    tell("run_start", { files = { unpack(files) }, clock = core.clock(), time = os.time(),
                        shard = opts.shard, filter = opts.filter })
    local next_file = 1
    -- --fail-fast: the first failure in the report's order ends the run
    local function halted()
      if not rep.halted then return false end
      local f = rep.halted.file
      stop = string.format("stopped at the first failure by --fail-fast: the rest of %s and "
        .. "%d file%s after it not run", f.path, #files - f.index, #files - f.index == 1 and ""
        or "s")
      return true
    end
    while true do
      if halted() then return end
      while #running < jobs and files[next_file] and not (starved and #running >= starved) do
        if start(files[next_file], next_file) == nil then
          starved = #running
          break
        end
        starved = nil
        next_file = next_file + 1
      end
      if #running == 0 then break end
      reap()
      local tick, due = look_at_closing(), look_at_overdue()
      if due then tick = math.min(tick or due, due) end
      if #running > 0 then
        local fds, owner = { unpack(sigfds) }, {}
        local function watch(fd, st)
          fds[#fds + 1] = fd
          owner[#fds] = st
        end
        for _, st in ipairs(running) do
          if not st.closing_at then watch(st.ev_r, st) end
          if st.out_open then watch(st.out_r, st) end
        end
        local ready = { core.wait_any(tick, unpack(fds)) }
        if ready[1] == nil then error(ready[2], 0) end
        stop = signalled(ready)
        if stop then return end
        local ended = {}
        for i = #sigfds + 1, #fds do
          local st = owner[i]
          if ready[i] and not ended[st] then
            if fds[i] == st.out_r then
              if st.out_open then read_output(st) end
            else
              -- a frame is written whole: once it starts, the rest follows
              -- (within GRACE, or it was cut short: Ctrl-C waits that long
              -- at most)
              local kind, body = child_proto.receive(st.ev_r, GRACE)
              if kind then
                handle(st, kind, body)
              elseif body ~= "eof" then
                broken(st, body == "corrupt frame" and "a corrupt frame header"
                  or body == "too large" and "a frame larger than mountns.child.MAX_BYTES"
                  or body == "timeout" and string.format("a frame cut short (its rest did "
                    .. "not come within %g s)", GRACE)
                  or tostring(body))
              end
              -- "done" is its last frame: everything it printed is in
              -- the stdout pipe (it flushed before), nothing follows but
              -- its exit; the end of file without it: its exit is waited
              -- for (look_at_closing)
              if st.done or st.broken then
                ended[st] = true
              elseif not kind then
                st.closing_at = core.clock()
              end
            end
          end
        end
        for i = #sigfds + 1, #fds do
          local st = owner[i]
          if ended[st] then ended[st] = nil; finish(st) end
        end
      end
      if halted() then return end
    end
    -- the processes still ending after their "done", after the last
    -- report: waited for with Ctrl-C heard (SIGINT is read from sigfd, not
    -- delivered: it kills them and the run ends as interrupted), for the
    -- run's timeout at most (then killed): one that hangs (a scenario's
    -- teardown) does not hold the run
    local deadline, tick = core.clock() + limit, 0.001
    reap()
    while exiting[1] do
      local left = deadline - core.clock()
      if left > 0 then stop = signalled { core.wait_any(math.min(tick, left), unpack(sigfds)) } end
      if left <= 0 or stop then
        for _, pid in ipairs(exiting) do
          child_proto.kill_tree(pid)
          -- the timeout says so on stderr, a line a file (stdout's report is
          -- whole): a teardown that hangs is seen, not only in the run's time
          if not stop then
            io.stderr:write(string.format("mountns: run: %s: its process still ending "
              .. "%g s after the last report (--timeout): killed PID %d\n",
              exiting_path[pid], limit, pid))
          end
        end
        return
      end
      tick = math.min(tick * 2, 0.05)
      reap()
    end
  end

  local completed, failure = pcall(loop)
  if not completed then
    -- a failure of the runner itself (out of memory, a writer that
    -- raised...): what was reported stays, the summary says why the run
    -- stopped
    stop = "stopped: " .. tostring(failure)
  end
  if stop then
    -- every script's process killed (before any writer hears of it); what
    -- the script being reported printed is shown, the scripts after it
    -- are not reported
    rep:hold()
    for i = #running, 1, -1 do
      local st = running[i]
      st.proc:kill_tree() -- what its scenarios' tools forked too
      release(st)
    end
    -- the processes still ending after their "done" (reaping their
    -- scenarios' processes) too: the run stops at once, whatever they wait for
    for _, pid in ipairs(exiting) do child_proto.kill_tree(pid) end
  end
  reap(true)
  close_sigfds()
  local summary = rep:run_end(stop)
  -- a filter that matched nothing in the whole run (a typo would pass in
  -- CI); a shard's may (a shard can be empty)
  if opts.filter and not opts.shard and not stop and summary.total == 0 and rep.n_listed == 0 then
    io.stderr:write("mountns: run: --filter '", core.escape(opts.filter),
      "' matched no scenario\n")
    return 1
  end
  if stop then
    for _, sig in ipairs(SIGNALS) do
      if sig.word == stop then return sig.status end
    end
    return 1
  end
  return summary.failed == 0 and 0 or 1
end


return M
