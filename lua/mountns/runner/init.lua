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
--
-- A package: `protocol` (the events and their check), `select` (--filter,
-- --shard, --list), `script` (the script's process), `run` (the
-- scheduler); this face is `mountns run`'s command line.
-- @module mountns.runner

local core = require "mountns.core"
local cli = require "mountns.cli"
local scenario = require "mountns.scenario"
local plain_writer = require "mountns.report.plain"
local tap_writer = require "mountns.report.tap"
local junit_writer = require "mountns.report.junit"
local kcidb_writer = require "mountns.report.kcidb"
local mountns = require "mountns"
local protocol = require "mountns.runner.protocol"
local select_ = require "mountns.runner.select"
local run = require "mountns.runner.run"

local M = {}

M.event_problem = protocol.event_problem
M.pattern_problem, M.shard = select_.pattern_problem, select_.shard
M.selector, M.with_progress = select_.selector, select_.with_progress
M.cpus, M.run = run.cpus, run.run

-- ---- the command line: `mountns run ...` ----------------------------------

local die = cli.die

-- The shell word for s.
local function quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- The options whose value is a file or directory the run writes: under
-- --kernel the guest writes them into vm/run's output share (its root is
-- the host's, read-only) and they are copied to the host's path after.
local OUTPUTS = { ["--junit"] = true, ["--kcidb"] = true, ["--artifacts"] = true,
                  ["--dot"] = true }

-- os.execute's result as an exit status (Lua 5.1 gives the wait status)
local function status_of(ok, how, code)
  if type(ok) == "number" then
    return ok % 256 == 0 and math.floor(ok / 256) or 128 + ok % 256
  end
  if how == "signal" then return 128 + code end
  return code or (ok and 0 or 1)
end

--- `mountns run --kernel K`'s arguments as the guest gets them: each
-- report file or directory (`--junit`, `--kcidb`, `--artifacts`, `--dot`)
-- named in vm/run's output share instead, `/run/mountns-out/N-BASENAME`.
-- @tparam {string,...} args the words after `run`, without `--kernel K`
-- @treturn {string,...} the guest's
-- @treturn table the copies to make after: `{host = path, name = N-BASENAME}`
function M.guest_args(args)
  local guest_args, copies = {}, {}
  local i = 1
  while i <= #args do
    local a = args[i]
    guest_args[#guest_args + 1] = a
    if a == "--" then
      for j = i + 1, #args do guest_args[#guest_args + 1] = args[j] end
      break
    end
    if OUTPUTS[a] and args[i + 1] then
      local name = #copies + 1 .. "-" .. (args[i + 1]:match("([^/]*)/*$") or "out")
      copies[#copies + 1] = { host = args[i + 1], name = name }
      guest_args[#guest_args + 1] = "/run/mountns-out/" .. name
      i = i + 1
    end
    i = i + 1
  end
  return guest_args, copies
end

-- mountns run --kernel K ARGS: this same command (without --kernel) in a
-- virtual machine booting K, through the tree's vm/run; its exit status.
-- The report files and directories it names are written in the guest's
-- output share (/run/mountns-out, kept by `vm/run -o`) and copied to the
-- paths given here once the guest is done.
local function run_on_kernel(kernel, args, tree, interp)
  if not tree then die("run: --kernel needs the source tree (its vm/ folder)") end
  local f = io.open(tree .. "/vm/run")
  if not f then die("run: --kernel: no " .. tree .. "/vm/run") end
  f:close()
  local share = os.tmpname()
  os.remove(share)
  local guest_args, copies = M.guest_args(args)
  local cmd = { quote(tree .. "/vm/run") }
  if #copies > 0 then cmd[#cmd + 1] = "-o " .. quote(share) end
  for _, w in ipairs { kernel, interp, tree .. "/bin/mountns", "run" } do
    cmd[#cmd + 1] = quote(w)
  end
  for _, a in ipairs(guest_args) do cmd[#cmd + 1] = quote(a) end
  io.stdout:flush()
  local code = status_of(os.execute(table.concat(cmd, " ")))
  for _, c in ipairs(copies) do
    local from = share .. "/" .. c.name
    if not core.exists(from) then
      io.stderr:write("mountns: run --kernel: the guest wrote no ", core.escape(c.host), "\n")
      if code == 0 then code = 1 end
    elseif not os.execute("rm -rf " .. quote(c.host) .. " && cp -r " .. quote(from) .. " "
        .. quote(c.host)) then
      io.stderr:write("mountns: run --kernel: cannot copy ", core.escape(c.host), "\n")
      if code == 0 then code = 1 end
    end
  end
  -- the report files name the artifacts by the guest's paths: the host's
  for _, c in ipairs(copies) do
    local fh = core.exists(c.host) and io.open(c.host)
    local text = fh and fh:read("*a")
    if fh then fh:close() end
    if text and not text:find("^%s*$") then
      for _, o in ipairs(copies) do
        local host = o.host:sub(1, 1) == "/" and o.host or ((os.getenv("PWD") or ".") .. "/"
          .. o.host)
        text = text:gsub("/run/mountns%-out/" .. o.name:gsub("%p", "%%%0"),
          (host:gsub("/+$", ""):gsub("%%", "%%%%")))
      end
      fh = io.open(c.host, "w")
      if fh then fh:write(text); fh:close() end
    end
  end
  if #copies > 0 then os.execute("rm -rf " .. quote(share)) end
  return code
end

-- The first line of a file of /proc/sys/kernel (nil when it cannot be read).
local function kernel_value(name)
  local f = io.open("/proc/sys/kernel/" .. name)
  local v = f and f:read("*l")
  if f then f:close() end
  return v
end

--- What the report files say of the run's environment (`mountns.report.junit`,
-- `mountns.report.kcidb`): `release` and `arch` (the running kernel's,
-- /proc/sys/kernel/osrelease and arch), `lua` (`_VERSION`, and LuaJIT's
-- version), `version` (mountns's), `mode` ("kernel", "model" or "both",
-- from `opts`), `features` (`mountns.features()`, which probes the kernel
-- in a throw-away namespace).
-- @tparam table opts `model`, `both` as `run`'s
-- @treturn table
function M.environment(opts)
  local jit = rawget(_G, "jit")
  local ok, features = pcall(mountns.features)
  return { release = kernel_value("osrelease"), arch = kernel_value("arch"),
           lua = _VERSION .. (type(jit) == "table" and " (" .. tostring(jit.version) .. ")"
             or ""),
           version = mountns._VERSION, features = ok and features or nil,
           mode = opts.model and "model" or opts.both and "both" or "kernel" }
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
  -- --help anywhere before "--" (even after --kernel): the help, nothing run
  for _, a in ipairs(args) do
    if a == "--" then break end
    if a == "-h" or a == "--help" then
      io.write(cli.help("run"))
      return 0
    end
  end
  local files, opts, strict, progress_asked = {}, {}, false, false
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
    return run_on_kernel(kernel, rest, ctx.tree, ctx.interp)
  end
  args, i = rest, 1
  local files_out, origin = {}, nil -- --junit, --kcidb: their paths
  while i <= #args do
    local a = args[i]
    if a == "--tap" or a == "--tap=13" then opts.tap = 13
    elseif a == "--tap=14" then opts.tap = 14
    elseif a == "--junit" or a == "--kcidb" then
      i = i + 1
      files_out[a:sub(3)] = args[i] or die("run: " .. a .. " needs a file name")
    elseif a == "--origin" then
      i = i + 1
      origin = args[i] or die("run: --origin needs a name")
      if not origin:match("^[a-z0-9_]+$") then
        die("run: --origin: a KCIDB origin is made of a-z, 0-9 and _, got '"
          .. core.escape(origin) .. "'")
      end
    elseif a == "--golden" then opts.golden = true
    elseif a == "--model" then opts.model = true
    elseif a == "--both" then opts.both = true
    elseif a == "--strict" then strict = true
    elseif a == "--list" then opts.list = true
    elseif a == "--fail-fast" then opts.fail_fast = true
    elseif a == "--progress" then progress_asked = true
    elseif a == "--filter" or a == "--shard" then
      i = i + 1
      local v, key = args[i], a:sub(3)
      if v == nil then
        die("run: " .. a .. (key == "filter" and " needs a Lua pattern" or " needs K/N"))
      end
      if opts[key] then die("run: " .. a .. " given twice") end
      local problem
      if key == "filter" then problem = M.pattern_problem(v)
      else
        local k, why = M.shard(v)
        problem = not k and why
      end
      if problem then die("run: " .. a .. ": " .. problem) end
      opts[key] = v
    elseif a == "--linux" then
      i = i + 1
      opts.linux = args[i] or die("run: --linux needs a kernel version (such as 6.12)")
    elseif a == "--dot" then
      i = i + 1
      opts.dot = args[i] or die("run: --dot needs a directory")
    elseif a == "--artifacts" then
      i = i + 1
      opts.artifacts = args[i] or die("run: --artifacts needs a directory")
    elseif a == "--artifacts-all" then
      opts.artifacts_all = true
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
  if opts.list then
    for k, name in pairs { tap = "--tap", dot = "--dot", golden = "--golden",
                           fail_fast = "--fail-fast" } do
      if opts[k] then die("run: " .. name .. " does not apply to --list (no scenario runs)") end
    end
  end
  local problem = scenario.run_problem(opts, CLI_NAMES)
  if problem then die("run: " .. problem) end
  if strict then
    if not opts.both then die("run: --strict goes with --both") end
    opts.both = { strict = true }
  end
  if opts.artifacts_all and not opts.artifacts then
    die("run: --artifacts-all goes with --artifacts DIR")
  end
  for _, o in ipairs { "dot", "artifacts" } do
    if opts[o] then
      local ok, err = core.mkdir(opts[o], { parents = true })
      if not ok then die("run: --" .. o .. ": " .. tostring(err)) end
    end
  end
  if opts.artifacts and opts.artifacts == opts.dot then
    die("run: --dot and --artifacts need directories of their own")
  end
  opts.jobs = opts.jobs or M.cpus()
  if origin and not files_out.kcidb then die("run: --origin goes with --kcidb") end
  if opts.list and (files_out.junit or files_out.kcidb) then
    die("run: --list runs no scenario: --junit and --kcidb do not apply")
  end
  -- the report files: the console's report and theirs from one run
  local opened = {}
  if files_out.junit or files_out.kcidb then
    local env = M.environment(opts)
    env.origin = origin
    local writers = { opts.tap and tap_writer.new(nil, opts.tap) or plain_writer.new() }
    for _, w in ipairs { { "junit", junit_writer }, { "kcidb", kcidb_writer } } do
      local name = files_out[w[1]]
      if name then
        local f, ferr = io.open(name, "w")
        if not f then die("run: --" .. w[1] .. ": " .. tostring(ferr)) end
        opened[#opened + 1] = f
        writers[#writers + 1] = w[2].new(f, env)
      end
    end
    opts.tap, opts.writers = nil, writers
  end
  -- progress only for a run of several files (one file: its lines are it)
  local progress = (#files > 1 or progress_asked) and not opts.list and cli.progress(progress_asked)
  if progress then
    opts.progress = function(line)
      if line then progress:show("run: " .. line) else progress:done() end
    end
  end
  local code, err = M.run(files, opts)
  if progress then progress:done() end
  for _, f in ipairs(opened) do f:close() end
  if not code then die("run: " .. tostring(err)) end
  return code
end

return M

