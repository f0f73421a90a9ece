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
--   none of them can add a line or drive the terminal;
-- - SIGINT stops the run at once: the runner kills the script's child
--   (its scenario processes die with it), prints the summary so far with
--   "interrupted" and returns 130.
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

local M = {}

-- ---- escaping: one line per item, whatever it contains ---------------------

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

-- Every line of a diagnostic with prefix before it.
local function lines_of(text, prefix)
  local out = {}
  for line in (tostring(text) .. "\n"):gmatch("([^\n]*)\n") do
    out[#out + 1] = prefix .. escape_diagnostic(line)
  end
  return table.concat(out, "\n")
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
  local ok, err = pcall(function()
    assert(core.dup2(out_w, 1))
    core.close_fd(out_w)
    isolate.private_namespace()
    local done, why = scenario.run_file(path, {
      dot = opts.dot and true or nil, golden = opts.golden and true or nil,
      timeout = opts.timeout,
      report = function(name, passed, e, secs, dot, golden)
        io.stdout:flush() -- its prints before its line
        send(ev_w, { "result", name = name, ok = passed and true or false,
                     err = e ~= nil and tostring(e) or nil, secs = secs,
                     dot = type(dot) == "string" and dot or nil,
                     golden = type(golden) == "string" and golden or nil })
        core.read_exact(ack_r, 1) -- "k", or end of file: the runner is gone
      end })
    io.stdout:flush()
    send(ev_w, { "done", ok = done or false, err = why })
  end)
  if not ok then
    io.stdout:flush()
    pcall(send, ev_w, { "done", ok = false, err = tostring(err) })
  end
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

--- Run scripts and print their verdict on stdout.
-- @tparam {string,...} files the scripts, in order
-- @tparam[opt] table opts `tap`: TAP version 14 instead of the plain report;
-- `dot`: a directory (it exists) for one Graphviz file per passing scenario,
-- `<script>-<n>.dot` (`<script>~2-<n>.dot` for a second script of the
-- same name); `timeout`: every scenario's default timeout in seconds;
-- `golden`: after each passing scenario's line, the golden text of its
-- namespaces at its end (`mountns.format.golden_text`), each line indented
-- by four spaces (`# ` under TAP), to paste into `expect.golden`.
-- SIGINT is blocked from here on (it stays so when run returns: the
-- caller is about to exit) and read from a signalfd while it runs.
-- @treturn[1] int the exit status: 0 all passed, 1 a failure or an early
-- exit, 130 interrupted
-- @return[2] nil
-- @treturn[2] string "signalfd SIGINT: strerror (ENAME)"
function M.run(files, opts)
  if type(files) ~= "table" then
    argcheck.error("run", 1, "table expected, got " .. type(files), 2)
  end
  for _, f in ipairs(files) do argcheck.path(f, "run", 1, 2) end
  opts = argcheck.options(opts, "run", 2, { "tap", "dot", "golden", "timeout" }, 2)
  argcheck.seconds(opts.timeout, "run", 2, "option 'timeout'", 2)
  local tap = opts.tap
  local out = io.stdout
  local n, passed, failed = 0, 0, 0
  local sigfd, serr = core.signalfd("INT")
  if not sigfd then return nil, serr end

  local function emit(s)
    out:write(s, "\n")
    out:flush()
  end

  -- printed output, a line at a time; a last line without newline is
  -- completed before the next result or at the script's end
  local pending = ""
  local function output(data)
    pending = pending .. data
    while true do
      local nl = pending:find("\n", 1, true)
      if not nl then break end
      emit("# " .. core.escape(pending:sub(1, nl - 1)))
      pending = pending:sub(nl + 1)
    end
  end
  local function end_output()
    if pending ~= "" then
      emit("# " .. core.escape(pending))
      pending = ""
    end
  end

  -- run --golden: the text indented (under TAP: "# "), a blank line blank
  local function golden_lines(text)
    for line in text:gmatch("([^\n]*)\n") do
      emit(line == "" and (tap and "#" or "") or ((tap and "# " or "    ")
        .. core.escape(line)))
    end
  end

  local function report(name, ok, err, secs)
    end_output()
    n = n + 1
    if ok then passed = passed + 1 else failed = failed + 1 end
    if tap then
      emit(string.format("%s %d - %s", ok and "ok" or "not ok", n, M.escape_name(name, true)))
      if not ok then emit(lines_of(err or "failed", "# ")) end
    else
      emit(string.format("%-4s %s (%.0f ms)", ok and "ok" or "FAIL", M.escape_name(name),
                         (secs or 0) * 1000))
      if not ok then emit(lines_of(err or "failed", "    ")) end
    end
  end

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

  local interrupted = false

  local function run_one(path)
    local first = n
    local stem = opts.dot and stem_of(path)
    local ev_r, ev_w = assert(core.pipe())
    local out_r, out_w = assert(core.pipe())
    local ack_r, ack_w = assert(core.pipe())
    local pid, ferr = child_proto.fork(function()
      core.close_fd(ev_r); core.close_fd(out_r); core.close_fd(ack_w); core.close_fd(sigfd)
      return script_child(path, opts, ev_w, out_w, ack_r)
    end)
    if not pid then
      for _, fd in ipairs { ev_r, ev_w, out_r, out_w, ack_r, ack_w } do core.close_fd(fd) end
      report(path, false, "cannot start its process: " .. tostring(ferr), 0)
      return
    end
    core.close_fd(ev_w); core.close_fd(out_w); core.close_fd(ack_r)

    local out_open, done, k = true, nil, 0
    local function handle(ev)
      if out_open then
        local data, eof = drain(out_r)
        output(data)
        if eof then out_open = false end
      end
      if ev[1] == "result" then
        local ok, err = ev.ok, ev.err
        if ok and ev.dot and stem then
          k = k + 1
          local wrote, werr = picture(stem, k, ev.dot)
          if not wrote then ok, err = false, "cannot write its picture: " .. tostring(werr) end
        end
        report(ev.name, ok, err, ev.secs)
        if ok and ev.golden then golden_lines(ev.golden) end
        core.write_fd(ack_w, "k") -- the script goes on
      elseif ev[1] == "done" then
        done = ev
      end
    end
    while true do
      local sig, ev_ready, out_ready
      if out_open then
        sig, ev_ready, out_ready = core.wait_any(nil, sigfd, ev_r, out_r)
      else
        sig, ev_ready = core.wait_any(nil, sigfd, ev_r)
      end
      if sig then interrupted = true; break end
      if out_ready then
        local data, eof = drain(out_r)
        output(data)
        if eof then out_open = false end
      end
      if ev_ready then
        -- a frame is written whole: once it starts, the rest follows
        local kind, body = child_proto.receive(ev_r)
        if not kind then break end -- end of file: the script's process is gone
        local okd, vals = pcall(child_proto.decode, body)
        if kind == "o" and okd and type(vals[1]) == "table" then handle(vals[1]) end
      end
    end
    if interrupted then core.kill(pid, "KILL") end
    local how, code = core.waitpid(pid)
    if out_open then output((drain(out_r))) end
    core.close_fd(ev_r); core.close_fd(out_r); core.close_fd(ack_w)
    if interrupted then return end
    end_output()
    if not done then
      report(path .. " exited early", false, early_exit(how, code), 0)
    elseif not done.ok then
      report(path, false, done.err, 0) -- an error outside any scenario
    elseif n == first then
      report(path .. " (no scenario ran)", false, "the script ran no scenario", 0)
    end
  end

  if tap then emit("TAP version 14") end
  for _, path in ipairs(files) do
    run_one(path)
    if interrupted then break end
  end
  end_output()
  core.close_fd(sigfd)
  if interrupted then
    if tap then emit("Bail out! interrupted") end
    emit(string.format("%s%d passed, %d failed (interrupted)", tap and "# " or "",
                       passed, failed))
    return 130
  end
  if tap then emit("1.." .. n) end
  emit(string.format("%s%d passed, %d failed", tap and "# " or "", passed, failed))
  return failed == 0 and 0 or 1
end

return M
