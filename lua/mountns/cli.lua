--- mountns.cli: the command line of `bin/mountns` beyond a plain `show`:
-- the usage text (`mountns --help`), the exit of a usage error and the
-- options of `show`. Each other command's code lives with what it drives
-- (`runner.command`, `check.command`, `watch.command`), and `bin/mountns`
-- keeps only the reading and rendering of a table, so `mountns show` and
-- `mountns show --json` compile and load no more Lua than they run (issue
-- 15: as fast as findmnt on a small table).
-- @module mountns.cli

local core = require "mountns.core"

local M = {}

--- The usage text of `bin/mountns` (`mountns --help`).
M.USAGE = [[
usage: mountns run [-j N] [--tap] [--dot DIR] [--golden] [--timeout S] [--kernel K]
                   [--model [--linux V]|--both] [--strict] FILE.lua ...
       mountns show [--json|--dot] [PID]
       mountns show --explain PATH [PID]
       mountns show --watch [--timeout S] [--interval S] [--fallback] [PID]
       mountns check --random N [--seed S] [--ops K] [--out DIR] [--no-user] [--list]

  run    run scenario scripts, each in a child process with a private mount
         namespace; one line per scenario (ok/FAIL and name), the diagnostic
         of each failure, what scripts print as "# " lines, a summary; exit
         status 0 all passed, 1 a failure or a script that exited early,
         2 usage, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).
         --tap: TAP version 14.
         --timeout S: every scenario's default timeout (seconds).
         -j N, --jobs N: run N files at once (default: the online CPUs);
         the report is the same, in file order, whatever N is.
         --dot DIR writes DIR/<script>-<n>.dot per scenario: Graphviz text of
         its namespaces, peer groups and slave edges at the scenario's end;
         --golden prints after each passing scenario the golden text of its
         namespaces at its end (normalised, article form), to paste into
         expect.golden. --kernel K (5.10, 6.1, 6.12, 7.2, 7.3, host, or a path to a
         kernel image with its modules directory beside it): run them in a
         virtual machine booting Debian's kernel K or that image (vm/run,
         from a source tree; make matrix-deps), output and exit status
         passed through.
         --model: run the scenarios on the model (mountns.model: the
         kernel's propagation rules in Lua, no namespaces) instead;
         --linux V (with --model): the rules of Linux V (6.1, 6.12, 6.18;
         any MAJOR.MINOR from 6.1 on; default: the running kernel's);
         --both: each scenario runs on the kernel and every step it makes
         is mirrored on the model (mountns.model): the first difference of
         an outcome or of the normalised tables fails it, naming the line,
         the call and the diff; what the model cannot follow (ns:run,
         ns:exec, methods it lacks) is listed as "note: not modelled" lines;
         --strict (with --both): such a step fails the scenario instead
  show   the mount tree of a process's mount namespace (default: $MOUNTNS_PID's,
         set in an ns:exec tool, else this one),
         with propagation, peer group and master columns; --json for
         machines, --dot for Graphviz; --watch prints each mount event of
         that namespace as it happens (attach, detach, change), one line
         each with the namespace and propagation, for S seconds or for ever
         (--fallback: poll mountinfo and diff, not fanotify); propagation
         changes signal nothing: the table is re-read every --interval S
         seconds (default 1, > 0); with a PID the watch ends when that
         process exits; Ctrl-C ends it with exit status 130;
         --explain PATH: the mount at PATH (or the one PATH lies on), its
         peer group and master, the mounts of every namespace you can see
         (/proc/*/mountinfo) that are its peers, slaves or masters, and what
         that means for propagation; from the current state (a live process
         has no history: scenarios have one, see mountns.explain)
  check  generate N random sequences of K (default 8) namespace calls
         (mkdir, mount, bind, rbind, move, umount, remount, make-[r]shared/
         private/slave/unbindable, unshare with each propagation and user
         namespaces, close) over a few paths and up to 4 namespaces, run each
         on the kernel (scenarios) and on the model (mountns.model), and
         compare after every step the errno name and the golden text of
         every open namespace. Seeded (--seed S, 0 <= S < 2^31; default from
         the clock, printed): the same sequences on every Lua version. Each
         divergence is shrunk and written as DIR/check-S-I.lua (--out DIR,
         default .), a scenario `mountns run` runs on the kernel; one line
         each, then a summary; exit status 0 none, 1 divergences, 2 usage.
         --no-user: no user-namespace copies; --list: print the sequences
         only (nothing runs)
  Paths are shown escaped: control characters, DEL, bytes that are not
  UTF-8 and the backslash as \ooo (octal, as in mountinfo). Exit status 2
  is a usage error.
]]

--- A usage error: "mountns: MSG" on stderr, exit status 2.
-- @tparam string msg
function M.die(msg)
  io.stderr:write("mountns: ", msg, "\n")
  os.exit(2)
end

-- Seconds given to --timeout or --interval: a finite number, > 0 for
-- --interval, >= 0 for --timeout.
local function seconds(opt, v, positive)
  local n = tonumber(v or "")
  if not n or n ~= n or n == math.huge or n == -math.huge then
    M.die("show: " .. opt .. " needs seconds (a number), got "
      .. (v and ("'" .. core.escape(v) .. "'") or "nothing"))
  end
  if positive and n <= 0 then M.die("show: " .. opt .. " must be more than 0 seconds") end
  if n < 0 then M.die("show: " .. opt .. " must not be negative") end
  return n
end

local PID_MAX = 4194304 -- the kernel's PID_MAX_LIMIT (include/linux/threads.h)

--- The options of `mountns show ARGS`, checked: each misuse (an unknown
-- argument, an option given twice or where it does not apply, a bad PID
-- or number of seconds) is a usage error (`M.die`).
-- @tparam {string,...} args the words after `show`
-- @treturn table the options given, by name: `["--json"]`, `["--dot"]`,
-- `["--watch"]`, `["--fallback"]` (true), `["--timeout"]`,
-- `["--interval"]` (seconds), `["--explain"]` (an absolute path)
-- @treturn[opt] int the PID, when one was given
function M.show_options(args)
  local die = M.die
  local o, pid = {}, nil
  local i = 1
  local function once(name)
    if o[name] ~= nil then die("show: " .. name .. " given twice") end
  end
  while i <= #args do
    local a = args[i]
    if a == "--json" or a == "--dot" or a == "--watch" or a == "--fallback" then
      once(a)
      o[a] = true
    elseif a == "--timeout" or a == "--interval" then
      once(a)
      i = i + 1
      o[a] = seconds(a, args[i], a == "--interval")
    elseif a == "--explain" then
      once(a)
      i = i + 1
      local p = args[i]
      if not p or p:sub(1, 1) ~= "/" then
        die("show: --explain needs an absolute path, got "
          .. (p and ("'" .. core.escape(p) .. "'") or "nothing"))
      end
      o[a] = p
    elseif a:match("^%d+$") then
      local n = tonumber(a)
      if pid then
        die("show: one PID at most (got " .. pid .. " and " .. a .. ")")
      end
      if n < 1 or n > PID_MAX then
        die("show: PID " .. a .. " out of range (1 to " .. PID_MAX .. ")")
      end
      pid = math.floor(n)
    else
      die("show: unexpected argument " .. core.escape(a) .. "\n" .. M.USAGE)
    end
    i = i + 1
  end
  -- in an ns:exec tool, the namespace it looks at (its /proc/self is that
  -- namespace's: `mountns show` lists what findmnt lists there)
  local env_pid = os.getenv("MOUNTNS_PID")
  if not pid and env_pid and env_pid ~= "" then
    local n = env_pid:match("^%d+$") and tonumber(env_pid)
    if not n or n < 1 or n > PID_MAX then
      die("show: MOUNTNS_PID is not a PID: '" .. core.escape(env_pid) .. "'")
    end
    pid = n
  end
  if o["--json"] and o["--dot"] then die("show: --json and --dot exclude each other") end
  if o["--explain"] then
    for _, x in ipairs { "--json", "--dot", "--watch", "--timeout", "--interval", "--fallback" } do
      if o[x] then die("show: " .. x .. " does not apply to --explain") end
    end
  elseif o["--watch"] then
    for _, x in ipairs { "--json", "--dot" } do
      if o[x] then die("show: " .. x .. " does not apply to --watch (one line per event)") end
    end
  else
    for _, x in ipairs { "--timeout", "--interval", "--fallback" } do
      if o[x] then die("show: " .. x .. " needs --watch") end
    end
  end
  return o, pid
end

return M
