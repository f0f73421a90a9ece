-- Loaded by busted before the specs (see .busted). Shared helpers.
local helper = {}

--- Number of open fds of this process (to catch fd leaks).
function helper.fd_count()
  -- handles dropped earlier close their fds in __gc: settle that first
  collectgarbage("collect"); collectgarbage("collect")
  -- counted in C without a child process: `ls /proc/PID/fd` from a popen
  -- raced with the parent's own copy of the pipe
  return assert(require("mountns.core").open_fds())
end

--- The text of the host's mountinfo, to prove a spec left it alone.
function helper.host_mountinfo()
  local f = assert(io.open("/proc/self/mountinfo"))
  local s = f:read("*a") -- "*a": Lua 5.1 and LuaJIT need the star
  f:close()
  return s
end

--- Inside an isolated child: a fresh tmpfs on /tmp to work in, so a spec
-- creates no file or directory on the host. Returns the base path.
-- This tree's absolute path (CI may clone it under /tmp).
local function tree_path()
  local here = (debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$") or ".")
  if here:sub(1, 1) == "/" then return here end
  local p = io.popen("cd " .. here .. " && pwd")
  local abs = p:read("*l")
  p:close()
  return abs
end
local TREE = tree_path()

function helper.sandbox()
  local mountns = require "mountns"
  -- a tree under /tmp would vanish under the new tmpfs: keep a clone of its
  -- mount and put it back at the same path, so child processes still find it
  local put_back
  if TREE and TREE:sub(1, 5) == "/tmp/" then
    local fd = mountns.open_tree(TREE, { clone = true, recursive = true })
    if fd then
      put_back = function()
        assert(mountns.move_mount(fd, TREE))
        fd:close()
      end
    else -- no new mount API (valgrind): park a bind of the tree on /mnt
      assert(mountns.bind(TREE, "/mnt", { recursive = true }))
      put_back = function() assert(mountns.move("/mnt", TREE)) end
    end
  end
  assert(mountns.mount("tmpfs", "/tmp", "tmpfs"))
  if put_back then
    assert(mountns.mkdir(TREE, { parents = true }))
    put_back()
  end
  assert(mountns.mkdir("/tmp/mns", { parents = true }))
  return "/tmp/mns"
end

--- Inside a sandbox: one mount of every propagation kind under base —
-- sh (shared) with its peer, sl (slave of sh), ss (slave and shared),
-- ub (unbindable). Used by the parser spec and the fuzz corpus.
function helper.propagation_kinds(base)
  local mountns = require "mountns"
  for _, d in ipairs { "sh", "peer", "sl", "ss", "ub" } do
    assert(mountns.mkdir(base .. "/" .. d))
  end
  assert(mountns.mount("sh", base .. "/sh", "tmpfs"))
  assert(mountns.make_shared(base .. "/sh"))
  assert(mountns.bind(base .. "/sh", base .. "/peer"))
  assert(mountns.bind(base .. "/sh", base .. "/sl"))
  assert(mountns.make_slave(base .. "/sl"))
  assert(mountns.bind(base .. "/sh", base .. "/ss"))
  assert(mountns.make_slave(base .. "/ss"))
  assert(mountns.make_shared(base .. "/ss"))
  assert(mountns.mount("ub", base .. "/ub", "tmpfs"))
  assert(mountns.make_unbindable(base .. "/ub"))
end

--- Run a shell command, return its stdout (trailing newline trimmed).
function helper.sh(cmd)
  local p = assert(io.popen(cmd))
  local s = p:read("*a")
  p:close()
  return (s:gsub("\n$", ""))
end

-- the tree this helper belongs to: child Lua processes load mountns from it
local ROOT = (debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$") or ".")
helper.ROOT = ROOT
local LUA_PATH = ROOT .. "/lua/?.lua;" .. ROOT .. "/lua/?/init.lua;"
  .. ROOT .. "/spec/tools/?.lua;;"

--- The interpreter running the suite (busted's --lua), lua5.4 by default.
helper.LUA = arg and arg[-1] or "lua5.4"
if helper.LUA:match("busted") or not helper.LUA:match("lua") then helper.LUA = "lua5.4" end

--- A shell command that starts this Lua with this package path, and the
-- core.so built for it (the Makefile's BUILD: build/ for lua5.4,
-- build/<interpreter>/ for the others).
function helper.lua_cmd()
  local interp = helper.LUA
  local name = interp:match("[^/]*$")
  local build = name == "lua5.4" and "/build" or "/build/" .. name
  return string.format("env LUA_PATH='%s' LUA_CPATH='%s' %s", LUA_PATH,
    ROOT .. build .. "/?.so;;", interp)
end

--- lua_cmd's command with the variables set by the shell itself
-- (`LUA_PATH=... LUA_CPATH=... lua`): no env(1) process, ~2 ms of CPU a
-- command. Only where a command starts (not after exec, setsid, timeout).
function helper.lua_vars()
  return (helper.lua_cmd():gsub("^env ", ""))
end

--- `bin/mountns ARGS` run from the tree's root: its output, stderr
-- included, and a last line "exit=N".
function helper.cli(args)
  return helper.sh("cd " .. ROOT .. " && " .. helper.lua_vars() .. " bin/mountns " .. args
    .. " 2>&1; echo \"exit=$?\"")
end

--- A new empty directory for a spec's files (the spec removes it).
function helper.tempdir()
  local dir = os.tmpname()
  os.remove(dir)
  -- mkdir(2), not a shell and mkdir(1): specs make many files and dirs
  assert(require("mountns.core").mkdir(dir, { parents = true }))
  return dir
end

--- A script file for `mountns run` holding text, under /tmp (a name from
-- os.tmpname(), which makes that file empty: only its name is used, with
-- ".lua" after it); the caller removes it.
function helper.script_file(text)
  local base = os.tmpname()
  os.remove(base)
  local path = base .. ".lua"
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

--- The whole content of a file (the spec fails if it cannot be read).
function helper.read(path)
  local f = assert(io.open(path))
  local s = f:read("*a")
  f:close()
  return s
end

--- Write text to the file dir/name (name may hold directories: they are
-- made); returns its path.
function helper.write(dir, name, text)
  local path = dir .. "/" .. name
  assert(require("mountns.core").mkdir(path:match("^(.*)/[^/]*$"), { parents = true }))
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

--- Wait (up to 5 s) until process pid is gone or a zombie nobody reaped
-- yet; returns nil then, else the state letter of /proc/PID/stat it kept.
function helper.wait_gone(pid)
  local state
  for _ = 1, 100 do
    local stat = io.open("/proc/" .. pid .. "/stat")
    -- (a process gone between the open and the read reads as nil)
    local text = stat and stat:read("*a")
    state = text and text:match("^%d+ %b() (%a)")
    if stat then stat:close() end
    if state == nil or state == "Z" then return nil end
    helper.sh("sleep 0.05")
  end
  return state
end

--- The text of a scenario file, for `mountns run`: a scenario called name
-- that passes on a fact of the kernel (its tmpfs, source tag, is
-- mounted); with say, it prints "mounted SAY" (flushed) first.
function helper.passing_scenario(name, tag, say)
  return string.format([[
local mountns = require "mountns"
local expect = require "mountns.expect"
mountns.scenario("%s", function(ns)
  ns:mkdir("/X"); ns:mount("%s", "/X", "tmpfs")
%s  expect.mounted(ns, "/X")
end)
]], name, tag, say and string.format("  print(\"mounted %s\"); io.stdout:flush()\n", say) or "")
end

-- Who runs the suite. As root, isolate() and scenario() work in the initial
-- user namespace and the specs that start an unprivileged Lua switch to
-- uid 65534 with setpriv; as any other user the whole suite is already the
-- unprivileged run (.ci/run does that as uid 65534): isolate() adds a user
-- namespace, setpriv cannot switch users, and a few specs differ (below).
local function ids()
  local f = assert(io.open("/proc/self/status"))
  local s = f:read("*a")
  f:close()
  -- "Uid:\treal\teffective\tsaved\tfs"
  return tonumber(s:match("\nUid:%s+%d+%s+(%d+)")), tonumber(s:match("\nGid:%s+%d+%s+(%d+)"))
end
helper.EUID, helper.EGID = ids()
--- True when the suite runs as root (effective uid 0).
helper.root = helper.EUID == 0
--- The uid of helper.unpriv_cmd()'s Lua: 65534 as root, else the suite's own.
helper.UNPRIV_UID = helper.root and 65534 or helper.EUID
--- What a tmpfs mounted in isolate/scenario adds to its super options: none
-- as root; otherwise it belongs to its creator and the kernel shows uid= and
-- gid= as the initial user namespace sees that user (",uid=65534,gid=65534").
helper.TMPFS_OWNER = helper.root and ""
  or ",uid=" .. helper.EUID .. ",gid=" .. helper.EGID

--- What this kernel's config adds at the end of a tmpfs's super options:
-- ",inode64" where CONFIG_TMPFS_INODE64=y (Debian's 6.1 and 6.12), else
-- "". Read once from a tmpfs mounted in an isolated child.
local tmpfs_inodes
function helper.tmpfs_inodes()
  if tmpfs_inodes == nil then
    local mountns = require "mountns"
    tmpfs_inodes = mountns.isolate(function()
      local base = helper.sandbox()
      return mountns.mountinfo():find(base:match("^/[^/]*")).super_options
        :match(",inode%d%d$") or ""
    end)
  end
  return tmpfs_inodes
end

--- busted's `it` when the suite runs as root; otherwise a test declared
-- pending with the reason in its name (`[needs root: reason]`), so an
-- unprivileged `make test` reports what it could not check, never a failure.
-- Use: `helper.root_it("why")("name", function() ... end)`.
function helper.root_it(reason)
  local busted = require "busted"
  if helper.root then return busted.it end
  return function(name)
    return busted.pending(name .. " [needs root: " .. reason .. "]")
  end
end

--- busted's `it` for a test that needs features of `mountns.features()`
-- (names given): on a kernel without one, a pending test whose name says
-- which Linux release brought it (`core.feature_since`) and which kernel
-- this is. Use: `helper.feature_it("mount_setattr")("name", function() end)`.
function helper.feature_it(...)
  local busted = require "busted"
  local mountns = require "mountns"
  local have, missing = mountns.features(), {}
  for _, name in ipairs { ... } do
    local since = assert(require("mountns.core").feature_since[name], name .. ": no such feature")
    if not have[name] then missing[#missing + 1] = name .. ": Linux " .. since end
  end
  if #missing == 0 then return busted.it end
  local why = string.format("needs %s; this is %d.%d", table.concat(missing, ", "),
    helper.kernel_version()[1], helper.kernel_version()[2])
  return function(name)
    return busted.pending(name .. " [" .. why .. "]")
  end
end

--- The running kernel's version, {major, minor} (from
-- /proc/sys/kernel/osrelease, read only).
function helper.kernel_version()
  local f = io.open("/proc/sys/kernel/osrelease")
  local s = f and f:read("*l") or ""
  if f then f:close() end
  local a, b = s:match("^(%d+)%.(%d+)")
  return { tonumber(a) or 0, tonumber(b) or 0 }
end

-- From Linux 6.17 MNT_UNBINDABLE is out of mnt_flags (Al Viro, "mount:
-- separate the flags accessed only under namespace_sem"): clone_mnt copies
-- mnt_flags only, so a namespace copy of an unbindable mount is private,
-- until 7.2.13 and 7.3's clone_mnt copies T_UNBINDABLE (their sources; 7.1.8
-- and 7.2.8 do not). Measured: kept on 5.10, 6.1 and 6.12, private on 6.18,
-- kept on Debian's 7.2.13 and 7.3 (make matrix).
local KV = helper.kernel_version()
-- (one home for the releases: the model's rule copy_keeps_unbindable; a
-- kernel older than the model's oldest rules keeps the flag, as 5.10 does)
local ok_rules, kernel_rules = pcall(require("mountns.model.rules").rules_for,
  KV[1] .. "." .. KV[2], "helper", 1, 1)
helper.COPY_DROPS_UNBINDABLE = ok_rules and not kernel_rules.copy_keeps_unbindable

--- Why a spec too slow for an emulated CPU is pending here, or nil: set in
-- a guest of vm/run under qemu's TCG (MOUNTNS_VM=tcg: no usable KVM), where
-- an exec costs about 0.1 s and a scenario of 10,000 mounts runs past its
-- 60 s timeout (the 5.10 and 6.1 guests).
helper.EMULATED = os.getenv("MOUNTNS_VM") == "tcg"
  and "under qemu's TCG (an emulated CPU, vm/run): too slow for its timeout" or nil

--- Why a comparison of mountns.model with this kernel is pending, or nil.
-- The model follows the running kernel's rules (`model.default_linux()`);
-- a kernel older than its oldest rule set (`model.OLDEST_LINUX`) has none.
helper.MODEL_PENDING = select(2, require("mountns.model").linux_version(KV[1] .. "." .. KV[2]))

--- busted's `it` for a test that compares the model with this kernel: on a
-- kernel the model has no rules for (helper.MODEL_PENDING), a pending test
-- with the reason in its name. Use: `local it = helper.model_it` at the top
-- of such a describe block.
function helper.model_it(name, fn)
  local busted = require "busted"
  if not helper.MODEL_PENDING then return busted.it(name, fn) end
  return busted.pending(name .. " [" .. helper.MODEL_PENDING .. "]")
end

-- A tree uid 65534 can read: this one, or (CI clones into private
-- directories) a copy made once and removed when the Lua state closes.
local unpriv_tree
local function readable_tree()
  if unpriv_tree then return unpriv_tree end
  local probe = "setpriv --reuid=65534 --regid=65534 --clear-groups test -r " .. ROOT
    .. "/lua/mountns/init.lua >/dev/null 2>&1"
  local r = os.execute(probe)
  if r == true or r == 0 then
    unpriv_tree = ROOT
  else
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -m 0755 " .. dir .. " && cp -r " .. ROOT .. "/lua " .. ROOT
      .. "/build " .. ROOT .. "/bin " .. ROOT .. "/examples " .. dir
      .. " && chmod -R a+rX " .. dir))
    unpriv_tree = dir
    helper.unpriv_cleanup = setmetatable({}, { __gc = function()
      os.execute("rm -rf " .. dir)
    end })
  end
  return unpriv_tree
end

--- "cd TREE && setpriv ... lua": run this Lua as uid 65534 (nobody) with
-- mountns from a tree nobody can read. Append "-e '...'" or a script.
-- When the suite is not root it already is the unprivileged user: the
-- command runs this Lua as that user (helper.UNPRIV_UID), without setpriv.
function helper.unpriv_cmd()
  if not helper.root then return "cd " .. ROOT .. " && " .. helper.lua_vars() end
  local tree = readable_tree()
  local cmd = helper.lua_cmd()
  local i, j = cmd:find(ROOT, 1, true)
  while i do
    cmd = cmd:sub(1, i - 1) .. tree .. cmd:sub(j + 1)
    i, j = cmd:find(ROOT, i + #tree, true)
  end
  return "cd " .. tree .. " && setpriv --reuid=65534 --regid=65534 --clear-groups " .. cmd
end

-- busted notes where each describe, it and hook was declared
-- (busted.getTrace), building a debug.traceback each time. From Lua 5.2 on,
-- luaL_traceback looks each frame's function up among the fields of every
-- loaded module (pushglobalfuncname): ~0.5 ms a declaration on 5.4, about
-- 0.5 s of CPU over the suite (declaring every spec with no test run: 1.44
-- -> 0.89 s). A declaration's trace serves its file and line (and its frames
-- when a failure brings no trace of its own): built here with the same
-- frames, without the global names. Errors and failures (busted.safe) keep
-- debug.traceback. Lua 5.1 and LuaJIT do no such lookup: left alone.
local function declaration_traceback(msg, level)
  local out = { (msg or "") .. "\nstack traceback:" }
  level = (level or 1) + 1
  while true do
    local ar = debug.getinfo(level, "Slnt")
    if not ar then break end
    local what = ar.namewhat ~= "" and (ar.namewhat .. " '" .. tostring(ar.name) .. "'")
      or ar.what == "main" and "main chunk"
      or ar.what ~= "C" and ("function <" .. ar.short_src .. ":" .. ar.linedefined .. ">")
      or "?"
    out[#out + 1] = "\n\t" .. ar.short_src .. ":"
      .. (ar.currentline > 0 and ar.currentline .. ":" or "") .. " in " .. what
    if ar.istailcall then out[#out + 1] = "\n\t(...tail calls...)" end
    level = level + 1
  end
  return table.concat(out)
end

local function light_declarations()
  local ok, api = pcall(require, "busted")
  local it = ok and type(api) == "table" and api.it
  if _VERSION == "Lua 5.1" or type(it) ~= "function" then return end
  local core
  for i = 1, 20 do
    local name, value = debug.getupvalue(it, i)
    if name == nil then break end
    if name == "busted" then core = value end
  end
  -- only the busted this was written for (2.x): else nothing changes
  if type(core) ~= "table" or type(core.getTrace) ~= "function"
    or type(core.executors) ~= "table" then return end
  local get_trace = core.getTrace
  core.getTrace = function(element, level, msg)
    local caller = debug.getinfo(2, "f").func
    for _, publisher in pairs(core.executors) do
      if publisher == caller then -- a declaration
        local traceback = debug.traceback
        debug.traceback = declaration_traceback -- luacheck: ignore 122
        -- two more levels: pcall's and this function's frames
        local ok2, info = pcall(get_trace, element, (level or 3) + 2, msg)
        debug.traceback = traceback -- luacheck: ignore 122
        if not ok2 then error(info, 0) end
        return info
      end
    end
    return get_trace(element, level, msg)
  end
end
light_declarations()

-- spec/parallel runs short files several to a busted; to place them in the
-- next run it needs each file's own time, not only the busted's. With
-- MOUNTNS_SPEC_TIMES set (by spec/parallel), each spec file's wall time is
-- appended to that file as "MS FILE", a line at the file's end.
local function file_times(path)
  local ok, api = pcall(require, "busted")
  if not path or not ok or type(api) ~= "table" or type(api.subscribe) ~= "function"
    or type(api.monotime) ~= "function" then return end
  local start
  api.subscribe({ "file", "start" }, function()
    start = api.monotime()
    return nil, true
  end)
  api.subscribe({ "file", "end" }, function(file)
    local f = start and type(file) == "table" and file.name and io.open(path, "a")
    if f then
      f:write(string.format("%d %s\n", math.floor((api.monotime() - start) * 1000), file.name))
      f:close()
    end
    return nil, true
  end)
end
file_times(os.getenv("MOUNTNS_SPEC_TIMES"))

package.loaded["helper"] = helper

-- ---- the same steps on the kernel and on the model (specs 22, 41, 45) ------

--- fn(ns, nss, try, note) run by `scenario` (mountns.scenario or a model
-- scenario): nss collects the namespaces to compare (ns first),
-- try(f, ...) runs a step that may fail and records "ok" or its errno
-- name (or a misuse's message without its position) and returns f's
-- result, note(v) records a value. Returns the golden text of the open
-- namespaces and the outcomes, joined by sep (default " ").
function helper.side(scenario, fn, sep)
  local model, format = require "mountns.model", require "mountns.format"
  local unpack = table.unpack or unpack -- luacheck: ignore
  return scenario(function(ns)
    local nss, out = { ns }, {}
    local function try(f, ...)
      local ok, e = pcall(f, ...)
      out[#out + 1] = ok and "ok" or (model.errno_of(tostring(e))
        or (tostring(e):gsub("^[^\n]-:%d+: ", "")))
      return ok and e or nil
    end
    local function note(v) out[#out + 1] = tostring(v) end
    fn(ns, nss, try, note)
    local open = {}
    for _, n in ipairs(nss) do if not n.closed then open[#open + 1] = n end end
    return format.golden_text(unpack(open)), table.concat(out, sep or " ")
  end)
end

--- A model scenario as the kernel's is for this process: not root, the
-- scenario lives in a user namespace and its / is locked.
function helper.model_scenario(fn)
  return require("mountns.model").scenario(fn, { locked_root = not helper.root })
end

--- fn on both sides (`side`); asserts equal outcomes and golden texts;
-- returns the kernel's text and outcomes.
function helper.same(fn, sep)
  local format = require "mountns.format"
  local kg, ko = helper.side(require("mountns").scenario, fn, sep)
  local mg, mo = helper.side(helper.model_scenario, fn, sep)
  assert(ko == mo, "outcomes:\nkernel: " .. ko .. "\nmodel:  " .. mo)
  local d = format.diff_text(kg, mg, "kernel", "model")
  assert(d == nil, "golden texts differ:\n" .. tostring(d) .. "\nkernel:\n" .. kg)
  return kg, ko
end

return helper
