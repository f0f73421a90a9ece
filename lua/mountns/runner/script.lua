--- mountns.runner.script: the script's process of `mountns run`, forked
-- by the runner (`mountns.runner.run`) for each file: stdout into a pipe,
-- a private namespace, the script run by `mountns.scenario.run_file`, a
-- frame per scenario on the event pipe (each waits for the runner's "k"),
-- then a "done" frame.
-- @module mountns.runner.script

local core = require "mountns.core"
local isolate = require "mountns.isolate"
local child_proto = require "mountns.child"
local scenario = require "mountns.scenario"
local protocol = require "mountns.runner.protocol"
local send = protocol.send
local select_ = require "mountns.runner.select"

local M = {}

-- In the forked child (mountns.child.fork: it ends with _exit): stdout
-- into the pipe, a private namespace, the script; a frame per scenario
-- (each waits for the runner's "k"), then a "done" frame.
local function script_child(path, file_index, opts, ev_w, out_w, ack_r)
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
  -- the scenario being run (its index in the file), and how many the
  -- script reached: scenario.run_file asks `select` before each one
  local current, seen = nil, 0
  local wanted = select_.selector(opts, file_index)
  local function choose(index, name)
    seen = index
    if not wanted(index, name) then return false end
    if opts.list then
      send(ev_w, { "listed", name = name, index = index })
      core.read_exact(ack_r, 1)
      return false
    end
    current = index
    return true
  end
  local ok, err = pcall(function()
    assert(core.dup2(out_w, 1))
    core.close_fd(out_w)
    isolate.private_namespace()
    local done, why, skipped = scenario.run_file(path, { select = choose,
      dot = opts.dot and true or nil, golden = opts.golden and true or nil,
      timeout = opts.timeout, model = opts.model and true or nil, both = opts.both,
      linux = opts.linux,
      start = function(name, timeout)
        send(ev_w, { "start", name = name, timeout = timeout })
      end,
      artifacts = opts.artifacts and (opts.artifacts_all and "all" or true) or nil,
      report = function(name, passed, e, secs, dot, golden, notes, status, art)
        io.stdout:flush() -- its prints before its line
        send(ev_w, { "result", name = name, ok = passed and true or false,
                     err = e ~= nil and tostring(e) or nil, secs = secs,
                     dot = type(dot) == "string" and dot or nil,
                     golden = type(golden) == "string" and golden or nil,
                     notes = type(notes) == "table" and notes or nil,
                     status = passed and "pass" or status,
                     artifacts = type(art) == "table" and art or nil, index = current })
        current = nil -- (a model.scenario the script calls itself: not counted)
        core.read_exact(ack_r, 1) -- "k", or end of file: the runner is gone
      end })
    io.stdout:flush()
    send(ev_w, { "done", ok = done or false, err = why,
                 status = not done and skipped == "skip" and "skip" or nil, seen = seen })
  end)
  if not ok then
    io.stdout:flush()
    pcall(send, ev_w, { "done", ok = false, err = tostring(err), seen = seen })
  end
  -- the runner has the script's report: the next script starts while the
  -- scenarios' processes end here
  isolate.reap(true)
  return 0
end

--- The script's process: runs `path` (the file_index-th of the run) and
-- reports on the runner's pipes; returns the exit status.
-- @function child
M.child = script_child

return M
