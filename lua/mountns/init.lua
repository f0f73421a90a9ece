--- mountns: Linux mount namespaces and shared-subtree propagation for Lua.
-- The C core (`mountns.core`) binds the system calls and the libmount
-- parser; this module exports the calls of it that the README documents
-- and adds the Lua policy on top: mount tables with methods, `isolate`,
-- scenarios, diffs and outputs. The rest of the core (fork, pipe, waitpid,
-- clock, the fanotify and poll handles...) is the Lua layer's plumbing:
-- `require "mountns.core"` where it is needed.
-- @module mountns

local core = require "mountns.core"
local mtable = require "mountns.table"
local isolate = require "mountns.isolate"

local M = {}

-- The README's "Core" and "The modern kernel interface" tables.
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
  local t, err, errno = core.mountinfo(pid)
  if not t then return nil, err, errno end
  return mtable.new(t)
end

local scenario = require "mountns.scenario"
M.scenario = scenario.scenario
M.peer_groups = scenario.peer_groups
M.diff = require("mountns.diff").diff

local format = require "mountns.format"
M.normalize = format.normalize
M.format = format.format
M.golden = format.golden
M.dot = require("mountns.dot").dot
--- Live mount events (see `mountns.watch`; `ns:watch(opts)` on a namespace).
M.watch = require("mountns.watch").watch

--- The fastest complete mount table: listmount+statmount, else mountinfo.
-- @see mountns.mounts
M.mounts = require("mountns.mounts").mounts

--- Run a shell transcript against scenario namespaces (see `mountns.shell`).
M.shell = require("mountns.shell").shell
M.isolate = isolate.isolate
M.isolate_with = isolate.isolate_with
M.table = mtable

return M
