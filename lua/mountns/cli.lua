--- mountns.cli: the command line of `bin/mountns` beyond a plain `show`:
-- the command line as data (`COMMANDS`: the usage text, each command's
-- `--help`, the man page, the completions), the exit of a usage error, a
-- progress line and the options of `show`. Each other command's code lives with what it drives
-- (`runner.command`, `check.command`, `watch.command`), and `bin/mountns`
-- keeps only the reading and rendering of a table, so `mountns show` and
-- `mountns show --json` compile and load no more Lua than they run (issue
-- 15: as fast as findmnt on a small table).
-- @module mountns.cli

local core = require "mountns.core"

local M = {}

--- The command line as data, the one source of `mountns --help`, each
-- command's `--help`, the man page and the shell completions
-- (doc/mkusage.lua writes doc/mountns.1 and doc/completion/: `make man`).
-- Each command: `name`, `synopsis` (its usage lines, after "mountns
-- NAME"), `about` (paragraphs), `options` ({names, argument or nil,
-- text}: `names` as "-j, --jobs"; `values`: the words an argument takes,
-- for the completions; an argument DIR completes directories, PATH
-- files), `operands` (what the completion offers after the options:
-- "file" for files, "pid", or nil).
M.COMMANDS = {
  { name = "run",
    synopsis = { "[-j N] [--tap[=14]] [--dot DIR] [--golden] [--timeout S] [--kernel K]",
                 "    [--model [--linux V]|--both] [--strict] [--list] [--filter PATTERN]",
                 "    [--shard K/N] [--fail-fast] [--progress] [--junit FILE] [--kcidb FILE]",
                 "    [--origin NAME] [--artifacts DIR [--artifacts-all]] FILE.lua ..." },
    about = { "Run scenario scripts, each in a child process with a private mount "
      .. "namespace: one line per scenario (ok/FAIL and name), the diagnostic of each "
      .. "failure, what scripts print as \"# \" lines, a summary. Exit status 0 all "
      .. "passed, 1 a failure or a script that exited early, 2 usage, 130 interrupted "
      .. "(Ctrl-C), 143 terminated (SIGTERM)." },
    operands = "file",
    options = {
      { "--tap", nil, "TAP version 13 on stdout instead of the plain report (--tap=14: "
        .. "version 14)." },
      { "--junit", "FILE", "JUnit XML of the same run in FILE (doc/runner.md)." },
      { "--kcidb", "FILE", "KCIDB v5.3 JSON of the same run in FILE (doc/runner.md)." },
      { "--origin", "NAME", "(with --kcidb) the origin of its objects (default mountns)." },
      { "--artifacts", "DIR", "what each failed scenario leaves behind: "
        .. "DIR/<script>-<n>.dot (.svg with Graphviz), .mountinfo (each open namespace), "
        .. ".txt (the diagnostic), .steps.lua (its steps, a script mountns run runs again)." },
      { "--artifacts-all", nil, "(with --artifacts) every scenario's, not only a failed "
        .. "one's." },
      { "--timeout", "S", "every scenario's default timeout (seconds)." },
      { "-j, --jobs", "N", "run N files at once (default: the online CPUs); the report "
        .. "is the same, in file order, whatever N is." },
      { "--dot", "DIR", "write DIR/<script>-<n>.dot per scenario: Graphviz text of its "
        .. "namespaces, peer groups and slave edges at the scenario's end." },
      { "--golden", nil, "print after each passing scenario the golden text of its "
        .. "namespaces at its end (normalised, article form), to paste into expect.golden." },
      { "--kernel", "K", values = { "5.10", "6.1", "6.12", "7.2", "7.3", "host" },
        "(5.10, 6.1, 6.12, 7.2, 7.3, host, or a path to a kernel image with its modules "
        .. "directory beside it) run them in a virtual machine booting Debian's kernel K or "
        .. "that image (vm/run, from a source tree; make matrix-deps), output and exit "
        .. "status passed through; the report files and artifacts come back to the "
        .. "host's paths." },
      { "--model", nil, "run the scenarios on the model (mountns.model: the kernel's "
        .. "propagation rules in Lua, no namespaces) instead." },
      { "--linux", "V", values = { "5.10", "6.1", "6.12", "6.18", "7.1", "7.2", "7.3" },
        "(with --model) the rules of Linux V (5.10, 6.1, 6.12, 6.18, 7.1, 7.2, 7.3; any "
        .. "MAJOR.MINOR from 5.10 on; default: the running kernel's)." },
      { "--both", nil, "each scenario runs on the kernel and every step it makes is "
        .. "mirrored on the model: the first difference of an outcome, of an answer the "
        .. "script got (a file, a directory's names, a record, a root view, a mount fd) or "
        .. "of the normalised tables fails it, naming the line, the call and the diff; what "
        .. "the model cannot follow (ns:run, ns:exec, methods it lacks) is listed as "
        .. "\"note: not modelled\" lines, and a difference it may have caused as a note "
        .. "too." },
      { "--strict", nil, "(with --both) a step the model cannot follow fails the "
        .. "scenario instead." },
      { "--list", nil, "print FILE<TAB>INDEX<TAB>NAME for each scenario the run would "
        .. "run and run none (each script still runs, in its own process and namespace, "
        .. "to name its scenarios; with --filter and --shard: what they select)." },
      { "--filter", "PATTERN", "run only the scenarios whose name matches the Lua "
        .. "pattern PATTERN (string.find: a word without magic characters is a "
        .. "substring); the others are not run at all. A bad pattern is a usage error; "
        .. "one that matches no scenario fails the run (not a shard's)." },
      { "--shard", "K/N", "run shard K of N: scenario j of the i-th FILE when "
        .. "(i-1 + j-1) mod N = K-1. The same FILEs in the same order give the same "
        .. "split; the N shards are disjoint and together run everything (mountns "
        .. "report merge joins their reports)." },
      { "--fail-fast", nil, "stop at the first scenario that fails (in report order): "
        .. "the summary says what was not run; exit status 1." },
      { "--progress", nil, "a progress line on stderr after each file even when stderr "
        .. "is not a terminal (on a terminal it is shown anyway, rewritten in place)." },
      { "-h, --help", nil, "this help." },
    } },
  { name = "show",
    synopsis = { "[--json|--dot] [PID]", "--explain PATH [PID]",
                 "--watch [--timeout S] [--interval S] [--fallback] [PID]" },
    about = { "The mount tree of a process's mount namespace (default: $MOUNTNS_PID's, "
      .. "set in an ns:exec tool, else this one), with propagation, peer group and "
      .. "master columns." },
    operands = "pid",
    options = {
      { "--json", nil, "the table as JSON, for machines." },
      { "--dot", nil, "the table as Graphviz text." },
      { "--watch", nil, "print each mount event of that namespace as it happens (attach, "
        .. "detach, change), one line each with the namespace and propagation, for S "
        .. "seconds or for ever; with a PID the watch ends when that process exits; "
        .. "Ctrl-C ends it with exit status 130." },
      { "--timeout", "S", "(with --watch) watch for S seconds." },
      { "--interval", "S", "(with --watch) propagation changes signal nothing: the table "
        .. "is re-read every S seconds (default 1, > 0)." },
      { "--fallback", nil, "(with --watch) poll mountinfo and diff, not fanotify." },
      { "--explain", "PATH", "the mount at PATH (or the one PATH lies on), its peer group "
        .. "and master, the mounts of every namespace you can see (/proc/*/mountinfo) that "
        .. "are its peers, slaves or masters, and what that means for propagation; from "
        .. "the current state (a live process has no history: scenarios have one, see "
        .. "mountns.explain)." },
      { "-h, --help", nil, "this help." },
    } },
  { name = "check",
    synopsis = { "--random N [--seed S] [--ops K] [--per N] [--out DIR] [--no-user]",
                 "    [--list] [--stats] [--progress]" },
    about = { "Generate N random sequences of K (default 8) namespace calls (mkdir, mount, "
      .. "with mount data taken and refused, bind, rbind, move, umount, remount, "
      .. "make-[r]shared/private/slave/unbindable, unshare with each propagation and user "
      .. "namespaces, close, mount_setattr, move_mount, open_tree and fsmount trees "
      .. "attached, pivot_root, write, read, exists, ls, root views) over a few paths and "
      .. "up to 4 namespaces, run each on the kernel "
      .. "(scenarios) and on the model (mountns.model), and compare after every step the "
      .. "errno name, the answer (a file, a directory's names, a root view) and the golden "
      .. "text of every open namespace. Each divergence is shrunk and written as "
      .. "DIR/check-S-I.lua, a scenario `mountns run` runs on the kernel; one line each, "
      .. "then a summary; exit status 0 none, 1 divergences, 2 usage." },
    options = {
      { "--random", "N", "the number of sequences (needed)." },
      { "--seed", "S", "the seed, 0 <= S < 2^31 (default from the clock, printed): the "
        .. "same sequences on every Lua version." },
      { "--ops", "K", "steps a sequence (default 8)." },
      { "--per", "N", "sequences in one kernel scenario (default 50)." },
      { "--out", "DIR", "where the shrunk scripts go (default .)." },
      { "--no-user", nil, "no user-namespace copies." },
      { "--list", nil, "print the sequences only (nothing runs)." },
      { "--stats", nil, "after the summary, how often each operation, flag and propagation "
        .. "type was drawn and how many events each rule of the model made (its coverage)." },
      { "--progress", nil, "a progress line on stderr after each batch even when stderr "
        .. "is not a terminal." },
      { "-h, --help", nil, "this help." },
    } },
  { name = "report",
    synopsis = { "merge OUT IN ..." },
    about = { "Merge the reports of the shards of a run (mountns run --shard K/N), JUnit XML "
      .. "or KCIDB v5.3 JSON, into OUT, in their format. It fails (exit status 1, OUT not "
      .. "written) when a scenario is in two reports, a shard is missing or given twice, or "
      .. "a KCIDB file's scenarios have a gap." },
    operands = "file",
    options = { { "-h, --help", nil, "this help." } } },
}

--- The general options (`mountns --help`, `mountns --version`).
M.GENERAL = {
  { "-h, --help", nil, "this help; `mountns COMMAND --help`: that command's." },
  { "--version", nil, "mountns's version." },
}

-- text as lines of at most width columns, each after indent (the first
-- after first, when given)
local function wrap(text, width, indent, first)
  local out, line = {}, first or indent
  local empty = true
  for word in text:gmatch("%S+") do
    if not empty and #line + 1 + #word > width then
      out[#out + 1] = line
      line, empty = indent, true
    end
    line = line .. (empty and "" or " ") .. word
    empty = false
  end
  out[#out + 1] = line
  return table.concat(out, "\n")
end
M.wrap = wrap

--- A command of `COMMANDS` by name, or nil.
-- @tparam string name
-- @treturn ?table
function M.command(name)
  for _, c in ipairs(M.COMMANDS) do
    if c.name == name then return c end
  end
end

-- an option's names and argument: "-j, --jobs N"
local function option_head(o)
  return o[1] .. (o[2] and " " .. o[2] or "")
end
M.option_head = option_head

--- The help of one command (`mountns NAME --help`): its usage lines, what
-- it does, its options.
-- @tparam string name
-- @treturn string
function M.help(name)
  local c = assert(M.command(name), name)
  local out = {}
  for i, line in ipairs(c.synopsis) do
    local lead = i == 1 and "usage: mountns " .. name .. " " or "       mountns " .. name .. " "
    if line:sub(1, 4) == "    " then lead = string.rep(" ", #("usage: mountns " .. name .. " ")) end
    out[#out + 1] = lead .. (line:gsub("^    ", ""))
  end
  out[#out + 1] = ""
  for _, para in ipairs(c.about) do out[#out + 1] = wrap(para, 78, "") end
  out[#out + 1] = ""
  out[#out + 1] = "options:"
  for _, o in ipairs(c.options) do
    local head = "  " .. option_head(o)
    local first = #head < 20 and head .. string.rep(" ", 20 - #head) or nil
    if not first then out[#out + 1] = head end
    out[#out + 1] = wrap(o[3], 78, string.rep(" ", 20), first)
  end
  return table.concat(out, "\n") .. "\n"
end

-- `mountns --help`: every command's usage lines, then each command's
-- description and options as prose
local function usage_text()
  local out = {}
  for _, c in ipairs(M.COMMANDS) do
    for _, line in ipairs(c.synopsis) do
      local lead = #out == 0 and "usage: mountns " or "       mountns "
      if line:sub(1, 4) == "    " then lead = string.rep(" ", 16 + #c.name) end
      out[#out + 1] = lead .. (line:sub(1, 4) == "    " and line:sub(5) or c.name .. " " .. line)
    end
  end
  out[#out + 1] = "       mountns --version"
  out[#out + 1] = ""
  for _, c in ipairs(M.COMMANDS) do
    out[#out + 1] = wrap(table.concat(c.about, " "), 78, string.rep(" ", 9),
      "  " .. c.name .. string.rep(" ", 7 - #c.name))
    for _, o in ipairs(c.options) do
      if o[1] ~= "-h, --help" then
        out[#out + 1] = wrap(option_head(o) .. ": " .. o[3], 78, string.rep(" ", 11),
          string.rep(" ", 9))
      end
    end
  end
  out[#out + 1] = wrap("Each command's own help: mountns COMMAND --help. Paths are shown "
    .. "escaped: control characters, DEL, bytes that are not UTF-8 and the backslash as "
    .. "\\ooo (octal, as in mountinfo). Exit status 2 is a usage error.", 78, "  ")
  return table.concat(out, "\n") .. "\n"
end

-- M.USAGE: the usage text of `bin/mountns` (`mountns --help`), made from
-- `COMMANDS` when first read (a plain `show` never reads it).
setmetatable(M, { __index = function(t, k)
  if k == "USAGE" then
    local text = usage_text()
    rawset(t, "USAGE", text)
    return text
  end
end })

--- A usage error: "mountns: MSG" on stderr, exit status 2.
-- @tparam string msg
function M.die(msg)
  io.stderr:write("mountns: ", msg, "\n")
  os.exit(2)
end

--- Whether stderr is a terminal (`test -t 2`: the shell inherits it; one
-- fork, only for the commands that may show progress).
-- @treturn boolean
function M.stderr_is_terminal()
  io.stderr:flush()
  local ok = os.execute("test -t 2")
  return ok == true or ok == 0 -- (Lua 5.1: the wait status)
end

--- A progress line on stderr for a long command (`run` over many files,
-- `check --random N`), or nil: on a terminal, one line rewritten in place
-- and erased at the end; in a pipe or a CI log nothing, unless `asked`
-- (`--progress`): then one line each time, so a log keeps them in order.
-- Progress never goes to stdout: the report there stays whole.
-- @tparam boolean asked `--progress` was given
-- @tparam[opt] function is_terminal (default `stderr_is_terminal`; specs)
-- @treturn ?table `p:show(text)`, `p:done()`
function M.progress(asked, is_terminal)
  local tty = (is_terminal or M.stderr_is_terminal)()
  if not tty and not asked then return nil end
  local err = io.stderr
  local p, last = {}, nil
  function p.show(_, text)
    if tty then err:write("\r", text, "\27[K")
    elseif text ~= last then err:write(text, "\n") end -- (a log: each line once)
    last = text
    err:flush()
  end
  function p.done()
    if tty then err:write("\r\27[K"); err:flush() end
  end
  return p
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
    if a == "-h" or a == "--help" then
      io.write(M.help("show"))
      os.exit(0)
    elseif a == "--json" or a == "--dot" or a == "--watch" or a == "--fallback" then
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
