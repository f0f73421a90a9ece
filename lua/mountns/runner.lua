--- mountns.runner: `mountns run`, the verdict of a set of scenario scripts.
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
-- @module mountns.runner

local core = require "mountns.core"
local argcheck = require "mountns.args"
local isolate = require "mountns.isolate"
local child_proto = require "mountns.child"
local scenario = require "mountns.scenario"
local cli = require "mountns.cli"
local lazy = require "mountns.lazy"
local report = require "mountns.report"
local plain_writer = require "mountns.report.plain"
local tap_writer = require "mountns.report.tap"
local order = require "mountns.report.order"
-- what a script requires (every example does): loaded here, with every
-- module they defer, by `run` before its first fork (see there)
require "mountns"
require "mountns.expect"

local unpack = table.unpack or unpack -- luacheck: ignore

local M = {}

-- ---- the protocol: what the script's process sends --------------------------

-- The signals that stop a run: the word the summary and TAP's bail-out
-- say, the exit status (128 + the signal's number, as a shell reports it).
local SIGNALS = {
  { name = "INT", word = "interrupted", status = 130 },
  { name = "TERM", word = "terminated", status = 143 },
}

-- The fields of each event, by kind: the type each must have ("?": or nil).
local EVENTS = {
  result = { name = "string", ok = "boolean", err = "string?", secs = "number",
             dot = "string?", golden = "string?", notes = "table?" },
  start = { name = "string", timeout = "number" },
  done = { ok = "boolean", err = "string?" },
}

-- How long after a scenario's timeout the runner waits for its result
-- before it kills the script's process: the script's process kills the
-- scenario at its timeout and reports it at once; this is for a script's
-- process that cannot (stopped, wedged)
local GRACE = 5

--- What is wrong with an event from a script's process, or nil: the
-- runner takes nothing it has not checked (a field of the wrong type
-- would crash the report; an unknown one would be a silent lie). An event
-- is `{kind, field = value...}`: a `start` (a kernel scenario begins)
-- has `name` (a string) and `timeout` (seconds > 0); a `result` has
-- `name`, `ok` (a boolean), `secs` (a finite number >= 0), `err`, `dot`,
-- `golden` (strings, or nil) and `notes` (nil or a list of strings); a
-- `done` has `ok` and `err`; nothing else.
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
  if ev.timeout and not (ev.timeout > 0 and ev.timeout < math.huge) then
    return "a start event whose timeout is " .. tostring(ev.timeout)
      .. " (seconds > 0 expected)"
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

-- ---- the script's child -------------------------------------------------

-- One event (a table) as a mountns.child frame on the result pipe.
local function send(fd, t)
  assert(child_proto.send(fd, "o", child_proto.encode("event", { t }, 1)))
end

-- In the forked child (mountns.child.fork: it ends with _exit): stdout
-- into the pipe, a private namespace, the script; a frame per scenario
-- (each waits for the runner's "k"), then a "done" frame.
local function script_child(path, opts, ev_w, out_w, ack_r)
  -- first, as isolate's child does: a fresh arena, the collector stopped
  -- (it would write every page of the runner's heap it shares; Lua 5.4):
  -- 12% fewer page faults a file, 3-4% less CPU (the collector running:
  -- 20% more CPU, 50% more page faults). A full collection, finalizers
  -- included (a file left open is closed), runs each time the script has
  -- allocated as much as the heap held, as the collector's default pause
  -- would: a script opening files without closing them runs out of file
  -- descriptors no sooner than in plain Lua
  core.fresh_heap(16, math.min(4096, math.max(1, collectgarbage("count") / 1024)))
  -- a scenario's result goes to the runner while its process ends (the
  -- teardown of its namespaces); those processes are reaped after "done"
  isolate.reap_later()
  -- the runner's pipes: no scenario's process, agent or helper forked
  -- from here gets them (it could forge a result, or take the runner's
  -- acknowledgement and leave this process waiting)
  child_proto.keep_from_children(ev_w)
  child_proto.keep_from_children(ack_r)
  -- os.exit in the script ends this process without the reap(true) below:
  -- its scenarios' processes would be left to PID 1, which need not reap
  -- them (zombies). They are reaped first (in this process only: a
  -- scenario's child inherits the wrapper)
  -- The state is closed on the way out (os.exit's `close`, Lua 5.2+): the
  -- script's files are flushed and closed by their finalizers, and no Lua
  -- block is left for LeakSanitizer to find (`make asan`: blocks made
  -- before fresh_heap, referred to only from its arena, which it does not
  -- scan, read as leaks)
  local exit, me = os.exit, core.getpid()
  rawset(os, "exit", function(code)
    if core.getpid() == me then
      io.stdout:flush()
      isolate.reap(true)
    end
    return exit(code, true)
  end)
  local ok, err = pcall(function()
    assert(core.dup2(out_w, 1))
    core.close_fd(out_w)
    isolate.private_namespace()
    local done, why = scenario.run_file(path, {
      dot = opts.dot and true or nil, golden = opts.golden and true or nil,
      timeout = opts.timeout, model = opts.model and true or nil, both = opts.both,
      linux = opts.linux,
      start = function(name, timeout)
        send(ev_w, { "start", name = name, timeout = timeout })
      end,
      report = function(name, passed, e, secs, dot, golden, notes)
        io.stdout:flush() -- its prints before its line
        send(ev_w, { "result", name = name, ok = passed and true or false,
                     err = e ~= nil and tostring(e) or nil, secs = secs,
                     dot = type(dot) == "string" and dot or nil,
                     golden = type(golden) == "string" and golden or nil,
                     notes = type(notes) == "table" and notes or nil })
        core.read_exact(ack_r, 1) -- "k", or end of file: the runner is gone
      end })
    io.stdout:flush()
    send(ev_w, { "done", ok = done or false, err = why })
  end)
  if not ok then
    io.stdout:flush()
    pcall(send, ev_w, { "done", ok = false, err = tostring(err) })
  end
  -- the runner has the script's report: the next script starts while the
  -- scenarios' processes end here
  isolate.reap(true)
  return 0
end

-- ---- the runner -----------------------------------------------------------

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
-- @tparam[opt] table opts `tap`: TAP version 14 instead of the plain report;
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
-- model follows ("6.1", "6.12", "6.18"...; default: the running kernel's);
-- `both`: run each scenario on the kernel and mirror every step it
-- records on the model (`mountns.mirror`), failing the scenario at the
-- first difference of the outcomes or of the normalised tables; the steps
-- the model cannot follow (`ns:run`, `ns:exec`, methods it has not) are
-- listed after the scenario's line as `note:` lines (true, or the
-- mirror's options).
-- SIGINT and SIGTERM are blocked from here on (they stay so when run
-- returns: the caller is about to exit) and read from signalfds while it
-- runs.
-- @treturn[1] int the exit status: 0 all passed, 1 a failure or an early
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
    { "tap", "dot", "golden", "timeout", "jobs", "model", "both", "linux", "writers" }, 2)
  argcheck.seconds(opts.timeout, "run", 2, "option 'timeout'", 2)
  scenario.check_modes(opts, "run", 2)
  local jobs = opts.jobs
  if jobs == nil then jobs = 1 end
  if type(jobs) ~= "number" or jobs < 1 or jobs ~= math.floor(jobs) or jobs == math.huge then
    argcheck.error("run", 2, "option 'jobs': an integer >= 1 expected, got "
      .. tostring(jobs), 2)
  end
  local writers = opts.writers
  if writers ~= nil and opts.tap then
    argcheck.error("run", 2, "option 'tap' with option 'writers': put "
      .. "mountns.report.tap.new() in writers", 2)
  end
  -- the report: events to the writers, which write it (mountns.report)
  local tell = report.subscribers(writers or { (opts.tap and tap_writer or plain_writer).new() },
    "run", 2, 2)
  -- once here, not in every script's process: the modules a script
  -- requires, and those deferred (mountns.lazy) that its first scenario
  -- would load before it forks; each script's process inherits them
  lazy.load_all()
  local sigfds = {}
  for _, sig in ipairs(SIGNALS) do
    local fd, serr = core.signalfd(sig.name)
    if not fd then
      for _, f in ipairs(sigfds) do core.close_fd(f) end
      return nil, serr
    end
    sigfds[#sigfds + 1] = fd
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
  local rep = order.new(tell)

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
    local name = string.format("%s/%s-%d.dot", opts.dot, stem, k)
    local f, err = io.open(name, "w")
    if not f then return nil, err end
    local ok, werr = f:write(dot)
    f:close()
    if not ok then return nil, werr end
    return true
  end

  -- what can be read now, and whether the stream has ended
  local function drain(fd)
    local data, why, part = core.read_all(fd, 0)
    if data then return data, true end
    if why == "timeout" then return part, false end
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
  local function start(path)
    local fds, err = {}, nil
    for _ = 1, 3 do
      local r, w = core.pipe()
      if not r then err = w; break end
      fds[#fds + 1] = r
      fds[#fds + 1] = w
    end
    local pid
    if not err then
      local ev_r, ev_w, out_r, out_w, ack_r, ack_w = unpack(fds)
      pid, err = child_proto.fork(function()
        core.close_fd(ev_r); core.close_fd(out_r); core.close_fd(ack_w)
        for _, fd in ipairs(sigfds) do core.close_fd(fd) end
        for _, o in ipairs(running) do -- the other scripts' ends: not this one's
          core.close_fd(o.ev_r); core.close_fd(o.out_r); core.close_fd(o.ack_w)
        end
        return script_child(path, opts, ev_w, out_w, ack_r)
      end)
    end
    if not pid then
      for _, fd in ipairs(fds) do core.close_fd(fd) end
      if running[1] then
        if not starved_said then
          io.stderr:write("mountns: run: ", core.escape(path), ": ", tostring(err),
            ": it waits for a running file to end (fewer files run at once)\n")
          starved_said = true
        end
        return nil, err
      end
    end
    local st = { path = path, rep = rep:add(path), pictures = 0, out_open = true,
                 stem = opts.dot and stem_of(path) }
    if not pid then
      rep:error(st.rep, path, "cannot start its process: " .. tostring(err), 0)
      rep:finish(st.rep)
      return false
    end
    core.close_fd(fds[2]); core.close_fd(fds[4]); core.close_fd(fds[5])
    st.pid, st.ev_r, st.out_r, st.ack_w = pid, fds[1], fds[3], fds[6]
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
    local problem = M.event_problem(ev)
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
      local ok, err = ev.ok, ev.err
      if ok and ev.dot and st.stem then
        st.pictures = st.pictures + 1
        local wrote, werr = picture(st.stem, st.pictures, ev.dot)
        if not wrote then ok, err = false, "cannot write its picture: " .. tostring(werr) end
      end
      rep:result(st.rep, { name = ev.name, status = ok and "pass" or "fail", message = err,
                           secs = ev.secs, golden = ok and ev.golden or nil, notes = ev.notes })
      core.write_fd(st.ack_w, "k") -- the script goes on
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
    core.close_fd(st.ev_r); core.close_fd(st.out_r); core.close_fd(st.ack_w)
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
      child_proto.kill_tree(st.pid)
      core.waitpid(st.pid)
    elseif st.done then
      if core.waitpid(st.pid, "nohang") == "running" then
        exiting[#exiting + 1], exiting_path[st.pid] = st.pid, st.path
      end
    end
    release(st)
    rep:end_output(st.rep)
    local done, path = st.done, st.path
    if st.overdue then
      local sc = st.started
      rep:error(st.rep, sc.name, string.format("ran past its timeout of %g s: its script's "
        .. "process did not report it within %g s more and was killed (the rest of %s "
        .. "did not run)", sc.timeout, GRACE, path), sc.timeout + GRACE)
    elseif st.broken then
      rep:error(st.rep, path, "protocol error: " .. st.broken
        .. " (its process was killed: a scenario's process cannot write to the runner)", 0)
    elseif stuck then
      rep:error(st.rep, path .. " exited early", string.format("its process closed its "
        .. "result pipe before the script ended and was still running %g s later "
        .. "(--timeout): killed", limit), 0)
    elseif not done then
      rep:error(st.rep, path .. " exited early", early_exit(how, code), 0)
    elseif not done.ok then
      rep:error(st.rep, path, done.err, 0) -- an error outside any scenario
    elseif st.rep.results == 0 then
      rep:error(st.rep, path .. " (no scenario ran)", "the script ran no scenario", 0)
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
        local how, code = core.waitpid(st.pid, "nohang")
        local waited = core.clock() - st.closing_at
        if how ~= "running" then
          finish(st, how, code)
        elseif waited >= limit then
          child_proto.kill_tree(st.pid)
          core.waitpid(st.pid)
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
    tell("run_start", { files = { unpack(files) } })
    local next_file = 1
    while true do
      while #running < jobs and files[next_file] and not (starved and #running >= starved) do
        if start(files[next_file]) == nil then
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
      child_proto.kill_tree(st.pid) -- what its scenarios' tools forked too
      core.waitpid(st.pid)
      release(st)
    end
    -- the processes still ending after their "done" (reaping their
    -- scenarios' processes) too: the run stops at once, whatever they wait for
    for _, pid in ipairs(exiting) do child_proto.kill_tree(pid) end
  end
  reap(true)
  for _, fd in ipairs(sigfds) do core.close_fd(fd) end
  local summary = rep:run_end(stop)
  if stop then
    for _, sig in ipairs(SIGNALS) do
      if sig.word == stop then return sig.status end
    end
    return 1
  end
  return summary.failed == 0 and 0 or 1
end

-- ---- the command line: `mountns run ...` ----------------------------------

local die = cli.die

-- The shell word for s.
local function quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- mountns run --kernel K ARGS: this same command (without --kernel) in a
-- virtual machine booting K, through the tree's vm/run; its exit status.
local function run_on_kernel(kernel, args, tree, interp)
  if not tree then die("run: --kernel needs the source tree (its vm/ folder)") end
  local f = io.open(tree .. "/vm/run")
  if not f then die("run: --kernel: no " .. tree .. "/vm/run") end
  f:close()
  local cmd = { quote(tree .. "/vm/run"), quote(kernel), quote(interp),
                quote(tree .. "/bin/mountns"), "run" }
  for _, a in ipairs(args) do cmd[#cmd + 1] = quote(a) end
  io.stdout:flush()
  local ok, how, code = os.execute(table.concat(cmd, " "))
  if type(ok) == "number" then -- Lua 5.1: the wait status
    return ok % 256 == 0 and math.floor(ok / 256) or 128 + ok % 256
  end
  if how == "signal" then return 128 + code end
  return code or (ok and 0 or 1)
end

-- The kernels `--kernel` takes: `host`, a series the tree's vm/kernel
-- knows (`vm/kernel --series`: the one home of that list) or a path to a
-- kernel image (with a "/"; vm/kernel finds its modules directory).
local function kernel_series(tree)
  local p = io.popen(quote(tree .. "/vm/kernel") .. " --series 2>/dev/null")
  local list = p and p:read("*l") or ""
  if p then p:close() end
  return list
end

local function check_kernel(kernel, tree)
  if kernel == "host" then return end
  if not tree then die("run: --kernel needs the source tree (its vm/ folder)") end
  if kernel:find("/", 1, true) then
    local f, err, code = io.open(kernel)
    if not f then
      die("run: --kernel: " .. err .. " (" .. tostring(core.errno[code] or code) .. ")")
    end
    f:close()
    return
  end
  local list = kernel_series(tree)
  for s in list:gmatch("%S+") do
    if s == kernel then return end
  end
  die("run: --kernel: " .. list:gsub(" ", ", ") .. ", host or a path to a kernel image "
    .. "expected, got " .. kernel)
end

-- the options in scenario.run_problem's reasons, as the command line has them
local CLI_NAMES = { model = "--model", both = "--both", linux = "--linux" }

--- `mountns run ARGS` (bin/mountns): the options parsed, the scripts run
-- (`M.run`), or with `--kernel K` the same command in a virtual machine.
-- A usage error exits with status 2 (`mountns.cli.die`).
-- @tparam {string,...} args the words after `run`
-- @tparam table ctx `tree`: the source tree's root (nil when installed;
-- `--kernel` needs its vm/), `interp`: the Lua interpreter's command
-- @treturn int the exit status
function M.command(args, ctx)
  local files, opts, strict = {}, {}, false
  local kernel, rest = nil, {}
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--kernel" then
      i = i + 1
      kernel = args[i] or die("run: --kernel needs a kernel: a series (such as 5.10 or "
        .. "7.3), host or a path to a kernel image")
      check_kernel(kernel, ctx.tree)
    else rest[#rest + 1] = a end
    if a == "--" then
      for j = i + 1, #args do rest[#rest + 1] = args[j] end
      break
    end
    i = i + 1
  end
  if kernel and kernel ~= "host" then
    for _, a in ipairs(rest) do
      if a == "--dot" then
        die("run: --dot with --kernel: nothing of the guest reaches the host")
      end
      if a == "--" then break end
    end
    return run_on_kernel(kernel, rest, ctx.tree, ctx.interp)
  end
  args, i = rest, 1
  while i <= #args do
    local a = args[i]
    if a == "--tap" then opts.tap = true
    elseif a == "--golden" then opts.golden = true
    elseif a == "--model" then opts.model = true
    elseif a == "--both" then opts.both = true
    elseif a == "--strict" then strict = true
    elseif a == "--linux" then
      i = i + 1
      opts.linux = args[i] or die("run: --linux needs a kernel version (such as 6.12)")
    elseif a == "--dot" then
      i = i + 1
      opts.dot = args[i] or die("run: --dot needs a directory")
    elseif a == "--timeout" then
      i = i + 1
      local s = tonumber(args[i] or "")
      if not s or s <= 0 or s ~= s or s == math.huge then
        die("run: --timeout needs a number of seconds > 0")
      end
      opts.timeout = s
    elseif a == "-j" or a == "--jobs" then
      i = i + 1
      local v = args[i]
      local j = v and v:match("^%d+$") and tonumber(v)
      if not j or j < 1 then
        die("run: " .. a .. " needs a number of files to run at once (an integer >= 1), got "
          .. (v and ("'" .. core.escape(v) .. "'") or "nothing"))
      end
      opts.jobs = j
    elseif a == "--" then
      for j = i + 1, #args do files[#files + 1] = args[j] end
      break
    elseif a:sub(1, 1) == "-" and a ~= "-" then die("run: unknown option " .. a)
    else files[#files + 1] = a end
    i = i + 1
  end
  if #files == 0 then die("run: no scenario file given\n" .. cli.USAGE) end
  local problem = scenario.run_problem(opts, CLI_NAMES)
  if problem then die("run: " .. problem) end
  if strict then
    if not opts.both then die("run: --strict goes with --both") end
    opts.both = { strict = true }
  end
  if opts.dot then
    local ok, err = core.mkdir(opts.dot, { parents = true })
    if not ok then die("run: --dot: " .. tostring(err)) end
  end
  opts.jobs = opts.jobs or M.cpus()
  local code, err = M.run(files, opts)
  if not code then die("run: " .. tostring(err)) end
  return code
end

return M
