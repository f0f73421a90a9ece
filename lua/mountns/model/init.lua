--- model: a pure-Lua simulation of mount namespaces and their propagation.
-- `model.scenario([name,] fn, opts)` hands `fn` a *model namespace*: the
-- methods of a scenario namespace (`mountns.namespace`), its argument
-- checks and its error messages ("bind /X /Z: No such file or directory
-- (ENOENT)"), with mount tables of the same records, so `expect`,
-- `normalize`, `format`, `dot` and golden tables work on it unchanged. No
-- fork, no namespaces, no root, no Linux: the rules of fs/pnode.c and
-- fs/namespace.c as Lua code, checked against the kernel by
-- spec/model/22-model_spec.lua (same steps on both, equal golden texts and
-- equal errno names).
--
-- What is modelled: superblocks with directories and files; mount, bind,
-- rbind (unbindable mounts pruned), move, umount (lazy too; propagated to
-- the copies, an over-mount of a copy's root reparented), remount,
-- make-[r]shared/private/slave/unbindable, namespace copies (`unshare`,
-- each propagation mode; `user = true`: shared mounts become slaves, the
-- copied mounts are locked) and their closing; peer groups, masters and
-- slaves, `propagate_from`. A world keeps `world.events`: every call, each
-- copy propagation made and where the rules stopped one (for explain).
--
-- The model is a package, one job a file, lowest first:
-- `model.errors` (failures in the core's words), `model.paths`,
-- `model.rules` (the kernel's rules by version), `model.world` (mount
-- trees, IDs, peer groups, path lookup), `model.propagate`,
-- `model.umount`, `model.checks` (argument checks), `model.fsdata` (mount
-- data), `model.listing` (the mount table), `model.events` (a watch's
-- events), `model.ops` (what mount(2) does), `model.newapi` (the mount fd
-- calls: open_tree, move_mount, fsmount, mount_setattr, and their fds),
-- `model.space` (the
-- namespace class), `model.scenario`, `model.replay`; this module is the
-- public face: what `require "mountns.model"` returns.
-- @module mountns.model

local format = require "mountns.format"
local errors = require "mountns.model.errors"
local rules = require "mountns.model.rules"
local world = require "mountns.model.world"
local propagate = require "mountns.model.propagate"
local space = require "mountns.model.space"
local scenario = require "mountns.model.scenario"
local replay = require "mountns.model.replay"
local events = require "mountns.model.events"

local M = {}

local unpack = table.unpack or unpack -- luacheck: ignore

-- (each name is the part's own function or table: no wrapper, so the
-- error levels of argument checks point at the caller's line as before)
M.STRERROR, M.errno_of = errors.STRERROR, errors.errno_of
M.linux_version, M.default_linux, M.running_linux = rules.linux_version, rules.default_linux,
  rules.running_linux
M.OLDEST_LINUX, M.NEWEST_LINUX = rules.OLDEST_LINUX, rules.NEWEST_LINUX
M.new, M.World, M.open_namespaces, M.target_of = world.new, world.World, world.open_namespaces,
  world.target_of
M.receivers = propagate.receivers
M.Namespace, M.is_namespace, M.set_shell = space.Namespace, space.is_namespace, space.set_shell
M.scenario, M.backend = scenario.scenario, scenario.backend
M.OPAQUE, M.where_text, M.Replay = replay.OPAQUE, replay.where_text, replay.Replay
M.replayer, M.replay = replay.replayer, replay.replay
M.open_watch = events.open

--- Compare the open namespaces of a kernel scenario with those of a model
-- world, in the same order, by their golden texts.
-- @tparam table kernel_nss namespaces (or mount tables)
-- @tparam table model_nss namespaces (or mount tables)
-- @treturn boolean true when equal
-- @treturn[2] string the diff (`- kernel`, `+ model`)
function M.compare(kernel_nss, model_nss)
  local a = #kernel_nss > 0 and format.golden_text(unpack(kernel_nss)) or ""
  local b = #model_nss > 0 and format.golden_text(unpack(model_nss)) or ""
  if #kernel_nss ~= #model_nss then
    return false, string.format("%d namespace(s) on the kernel, %d in the model\n",
      #kernel_nss, #model_nss) .. (format.diff_text(a, b, "kernel", "model") or "")
  end
  local d = format.diff_text(a, b, "kernel", "model")
  if d then return false, d end
  return true
end

-- `model.propagate_from` (a setting, documented in model.space) is read
-- and written through to model.space, whose ns:mounts reads it
return setmetatable(M, {
  __index = function(_, k)
    if k == "propagate_from" then return space.propagate_from end
  end,
  __newindex = function(t, k, v)
    if k == "propagate_from" then space.propagate_from = v else rawset(t, k, v) end
  end,
})
