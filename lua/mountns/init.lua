--- mountns: Linux mount namespaces and shared-subtree propagation for Lua.
-- The C core (`mountns.core`) binds the system calls and the libmount
-- parser; this module exports the calls of it that doc/api.md documents
-- and adds the Lua policy on top: mount tables with methods, `isolate`,
-- scenarios, diffs and outputs. The rest of the core (fork, pipe, waitpid,
-- clock, the fanotify and poll handles...) is the Lua layer's plumbing:
-- `require "mountns.core"` where it is needed.
-- @module mountns

-- every module after this one from its bytecode when it is fresh
require "mountns.bytecode"
local core = require "mountns.core"
-- the mount table class, loaded now: mountinfo and parse_mountinfo work
-- in a process that has left the file system its modules came from
-- (pivot_root, chroot), as the core's calls do
local mtable = require "mountns.table"
local argcheck = require "mountns.args"
local lazy = require "mountns.lazy"
local verdict = require "mountns.verdict"
-- loaded on first use (doc/api.md, "What loads when"); `require "mountns"`
-- loads the core, mountns.table (and mountns.args), mountns.lazy
local isolate = lazy.require "mountns.isolate"
local scenario = lazy.require "mountns.scenario"
local diff = lazy.require "mountns.diff"
local format = lazy.require "mountns.format"
local dot = lazy.require "mountns.dot"
local watch = lazy.require "mountns.watch"
local mounts = lazy.require "mountns.mounts"
local explain = lazy.require "mountns.explain"
local shell = lazy.require "mountns.shell"
local child = lazy.require "mountns.child"

local M = {}

-- The fields that come from another module: field -> {module, its field},
-- read from the module loaded now at every read, not kept in M (so
-- `mountns.explain == require("mountns.explain").explain`, as before, even
-- where busted's insulation unloaded the module between two spec files:
-- see mountns.lazy).
local FROM = {
  scenario = { scenario, "scenario" }, peer_groups = { scenario, "peer_groups" },
  diff = { diff, "diff" },
  normalize = { format, "normalize" }, format = { format, "format" },
  golden = { format, "golden" },
  dot = { dot, "dot" },
  --- Live mount events (see `mountns.watch`; `ns:watch(opts)` on a namespace).
  -- @function watch
  watch = { watch, "watch" },
  --- The fastest complete mount table: listmount+statmount, else mountinfo.
  -- @function mounts
  -- @see mountns.mounts
  mounts = { mounts, "mounts" },
  --- Why a mount is at a path, or why none is (see `mountns.explain`):
  -- `mountns.explain(ns, path)` on a scenario namespace (its recorded steps
  -- replayed in the model) or a model namespace (its world's history).
  -- @function explain
  explain = { explain, "explain" },
  --- Run a shell transcript against scenario namespaces (see `mountns.shell`).
  -- @function shell
  shell = { shell, "shell" },
  isolate = { isolate, "isolate" }, isolate_with = { isolate, "isolate_with" },
}

local function load_field(_, k)
  local from = FROM[k]
  if not from then return nil end
  return from[1][from[2]]
end

setmetatable(M, {
  __index = load_field,
  -- pairs(mountns) (Lua 5.2+) lists every field, loading the rest first
  __pairs = function(t)
    local all = {}
    for k, v in next, t do all[k] = v end
    for k in pairs(FROM) do all[k] = load_field(t, k) end
    return next, all, nil
  end,
})

-- doc/api.md's "The calls" and "The modern kernel interface" tables.
for _, name in ipairs {
  "unshare", "mount", "umount", "bind", "move", "remount",
  "make_shared", "make_private", "make_slave", "make_unbindable",
  "pivot_root", "chdir", "chroot", "mkdir", "symlink", "readdir", "exists",
  "MS", "namespace", "escape", "errno",
  "open_tree", "move_mount", "fsmount", "mount_setattr", "listmount", "statmount",
  "features",
} do
  M[name] = core[name]
end

--- Parse mountinfo text into a mount table.
-- @tparam string text the content of a /proc/PID/mountinfo file
-- @treturn[1] table a mount table (see `mountns.table`)
-- @return[2] nil
-- @treturn[2] string "line N: why"
function M.parse_mountinfo(text)
  argcheck.typed(text, "string", "parse_mountinfo", 1, 2)
  local t, err, errno = core.parse_mountinfo(text)
  if not t then return nil, err, errno end
  return mtable.new(t)
end

--- Read and parse /proc/PID/mountinfo.
-- @tparam[opt] integer pid default: the calling process
-- @treturn[1] table a mount table
-- @return[2] nil
-- @treturn[2] string message naming the file, strerror and errno name
-- @treturn[2] integer errno
function M.mountinfo(pid)
  argcheck.pid(pid, "mountinfo", 1, 2)
  local t, err, errno = core.mountinfo(pid)
  if not t then return nil, err, errno end
  return mtable.new(t)
end

-- A user namespace handle (root inside is the caller), held by a
-- grandchild that waits on a pipe; nil when it cannot be made. For the
-- probe below: runs inside isolate's child.
local function userns_handle()
  local proc = assert(child.spawn({ up = { "ready" }, down = { "go" }, timeout = 30 },
    function(fds)
      if core.unshare { mount = false, user = true, map_root = true } then
        core.write_fd(fds.ready, "r")
      end
      core.read_exact(fds.go, 1)
    end))
  local h = core.read_exact(proc.fds.ready, 1, proc:left()) == "r"
    and core.namespace(proc.pid, "user")
  proc:finish()
  return h
end

-- What works, tried for real in a throw-away namespace (isolate's child):
-- idmap_tmpfs, a detached tmpfs (fsmount) given an idmap (tmpfs allows it
-- from Linux 6.3); fanotify_mounts, fanotify's mount events marked on the
-- namespace (6.15). Nothing is attached anywhere.
-- Also move_mount's set_group and beneath flags, asked again where the
-- caller may mount (the core's probe cannot tell without that right on a
-- kernel that checks it first, 5.10): a move to a path that does not
-- exist fails ENOENT where the flag is known, ENOSYS where not.
local function probe_works()
  local ok, idmap_tmpfs, fanotify, set_group, beneath = pcall(isolate.isolate, function()
    local m = core.fsmount("tmpfs", {}, {})
    local userns = m and userns_handle()
    local idmapped = userns and core.mount_setattr(m, { idmap = userns }) and true
    local h = core.namespace()
    local fan = h and core.fanotify_mounts(h)
    if fan then fan:close() end
    local function knows(flag)
      local _, _, errno = core.move_mount("/", "/nonexistent/mountns-probe", { [flag] = true })
      return errno ~= core.errno.ENOSYS
    end
    return idmapped or false, fan and true or false, knows("set_group"), knows("beneath")
  end)
  if not ok then return false, false end
  return idmap_tmpfs, fanotify, set_group, beneath
end

local probed
--- Which modern paths this kernel offers and what works: `mountns.core`'s
-- `features()` (the calls, statmount's mask, listmount by namespace ID)
-- plus what works here, probed once per process in a throw-away
-- namespace: `idmap_tmpfs` (an idmapped mount of a tmpfs: Linux 6.3+, and
-- a caller allowed to make one) and `fanotify_mounts` (fanotify's mount
-- events: 6.15+, CAP_SYS_ADMIN over the namespace).
-- @treturn table a fresh copy each call
function M.features()
  if not probed then
    probed = core.features()
    local set_group, beneath
    probed.idmap_tmpfs, probed.fanotify_mounts, set_group, beneath = probe_works()
    if set_group ~= nil then probed.set_group, probed.beneath = set_group, beneath end
  end
  local copy = {}
  for k, v in pairs(probed) do copy[k] = v end
  return copy
end
M.table = mtable
--- mountns's version (the rock's): what `mountns --version` prints (spec 39
-- holds it to the rockspec's version) and `mountns run`'s report files say.
M._VERSION = "scm-1"
--- Skip the running scenario (see `mountns.verdict.skip`): reported as
-- skipped, which does not fail the run.
-- @function skip
M.skip = verdict.skip

return M
