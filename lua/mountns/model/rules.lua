--- model.rules: the kernel's rules by version: which Linux a world follows
-- (the running kernel's by default, read once when the module loads) and
-- what changed between the kernels the model follows (the rules table each
-- part of the model consults: `w.rules.old_umount`, ...).
-- @module mountns.model

local argcheck = require "mountns.args"

local M = {}

-- The rules differ between the kernels the model follows. Read in
-- fs/namespace.c and fs/pnode.c of Debian's source packages (5.10.262,
-- 6.1.176, 6.12.95, 6.17.8, 6.18.15, 6.19.8, 7.1.8, 7.2.8; 7.2.13 and
-- 7.3~rc7 from linux-source-7.2 and -7.3, whose source packages the
-- mirror no longer serves: doc/model.md has the table) and measured (spec
-- 22 and 44 on this host, `make matrix` on Debian's kernels under qemu);
-- where a change landed between two kernels read, the version named is
-- the release of the commit that made it, as far as we know. "7.2" is
-- Debian's 7.2.13, the kernel of the matrix: 7.2.8's source still has
-- 7.1's tuck_unlocks_top and neither copy_keeps_unbindable nor
-- set_group_unbindable (a 7.2 stable release between 7.2.9 and 7.2.13
-- brought them). 5.10 follows 6.1's rules: its pnode.c is 6.1's, and its
-- namespace.c differs only in what the model does not represent
-- (mount_setattr, idmapped mounts, the slave list place MOVE_MOUNT_SET_GROUP
-- gives, `mand`'s EPERM outside the initial user namespace, the mount
-- count limit, locking).
-- copy_keeps_unbindable: clone_mnt copies the unbindable state (6.1,
--   6.12: it was in mnt_flags; 6.17 moved it out, so 6.17 to 7.2.8 copy
--   a namespace's unbindable mount as private; 7.2.13 and 7.3 copy
--   T_UNBINDABLE again).
-- ns_list: mountinfo lists a namespace's list, not the mounts by ID (an
--   rbtree from 6.8): the copies one propagation made are committed last
--   first (attach_recursive_mnt walks its hlist, filled at the head).
-- umount_preorder: umount_tree gathers the unmounted tree with list_move
--   (before 6.8), so propagate_umount walks it in pre-order, not from the
--   deepest mount up.
-- old_umount: propagate_umount before its 6.16 rewrite
--   (Documentation/filesystems/propagate_umount.txt): candidates checked
--   one at a time (__propagate_umount), a locked one restored in place.
-- same_root_master: do_make_slave makes the mount a slave of the first
--   peer with the same root (else the next peer), its slaves appended to
--   the new master's list (6.1, 6.12; 6.18: the next peer, its slaves
--   put in front of that peer's list as one block, in their order:
--   transfer_propagation's hlist_splice_init).
-- bulk_private: umount_tree takes all its mounts out of propagation at
--   once (bulk_make_private, 6.18): each one's slaves go to the first
--   mount that stays along next peer / master (trace_transfers), handed
--   over in the order of the unmounted set, each block in front.
-- tuck_takes_lock: a copy that propagation puts under a locked mount
--   takes its MNT_LOCKED (attach_recursive_mnt, "move_mount: transfer
--   MNT_LOCKED": in 7.1.8, not in 6.19.8; posted after 7.0's merge
--   window). tuck_unlocks_top: 7.1 then unlocks the mount on top, so the
--   namespace that received the copy may unmount that mount (6.18 and
--   7.2.13: EINVAL); 7.2.13 and 7.3 unlock it only under the mount the
--   caller placed ("A propagated copy goes away when the mounter of the
--   original unmounts it, so @q keeps its lock").
-- beneath_root: can_move_mount_beneath no longer refuses the caller's
--   root, a mount on the namespace's root mount or a locked top mount
--   (7.1.8; 6.19.8 refuses them); the mount slid under takes the top's
--   lock. Under the root is below what the model's namespace has: it
--   raises "not available in the model" there. (A locked top is in
--   another user namespace than the caller, where the model has no
--   move_mount.)
-- set_group_unbindable: MOVE_MOUNT_SET_GROUP refuses an unbindable `to`
--   (do_set_group, 7.2.13 and 7.3); before, `to` joined the group.
-- tmpfs_noswap: tmpfs takes the mount option noswap (6.4).
-- mount_setattr: the call exists (5.12); before, ENOSYS naming the
--   release, as the core's message does.
-- beneath: move_mount knows MOVE_MOUNT_BENEATH (6.5); before, the
--   unknown flag is EINVAL, which mountns reports as the ENOSYS it
--   means, naming the release. The releases: M.SINCE (the core's
--   core.feature_since, which the model cannot require: spec 50 checks
--   that the two agree).
-- sb_mand: MS_MANDLOCK and the data "mand" set SB_MANDLOCK, which
--   mountinfo shows ("rw,sync,dirsync,mand,lazytime") and a remount sets
--   anew (MS_RMT_MASK): the 5.10, 6.1 and 6.12 guests; not 6.18 (6.13
--   to 6.17 not measured: SB_MAND_UNTIL). mand_eperm: mount(2) with MS_MANDLOCK is EPERM
--   without CAP_SYS_ADMIN in the initial user namespace (may_mandlock,
--   5.10's namespace.c; 5.15 made `mand` a warning).
-- empty_key_skipped: mount data's "=5" (an empty name) is passed over;
--   before, the filesystem judges it (tmpfs: EINVAL): the 5.10, 6.1 and
--   6.12 guests EINVAL, 6.18 ok (EMPTY_KEY_SKIPPED).
-- ramfs_swallows: ramfs takes every name it does not know, `source`
--   too (5.10 guest: "source=x" ok; 6.1: EINVAL, mount(2) gave one).
-- move_from_first: the move_mount syscall looks up `from` before `to` and
--   puts `from` on every way out, so a failed lookup of `to` clears
--   `from`'s expire mark (5.10, 6.1, 6.12; 6.17: `to` first, with
--   getname_maybe_null; 6.15 as far as we know). Measured: the 5.10 guest.
-- watch_fanotify: a watch (mountns.watch) has fanotify's mount events
--   (FAN_MNT_ATTACH/DETACH, 6.15): attaches and detaches as they came;
--   before, it diffs re-read tables (changes, attaches, then detaches).
-- unique_ids: a re-read table has the mounts' unique IDs (listmount, 6.8),
--   so a moved mount is one "change"; before, a detach and an attach.
local OLDEST, NEWEST = { 5, 10 }, "7.3"
-- where the guests measured a change but the sources we read do not say
-- which release made it (fs/proc_namespace.c, fs/fs_context.c: not read):
-- the first kernel of the matrix that answered the new way
local SB_MAND_UNTIL, EMPTY_KEY_SKIPPED = 6018, 6018

local function rules_of(major, minor)
  local v = major * 1000 + minor
  return { linux = major .. "." .. minor, copy_keeps_unbindable = v < 6017 or v >= 7002,
           ns_list = v < 6008, umount_preorder = v < 6008, old_umount = v < 6016,
           same_root_master = v < 6016, bulk_private = v >= 6018,
           tuck_takes_lock = v >= 7001, tuck_unlocks_top = v == 7001,
           beneath_root = v >= 7001, set_group_unbindable = v >= 7002,
           tmpfs_noswap = v >= 6004, move_from_first = v < 6015,
           mount_setattr = v >= 5012, beneath = v >= 6005,
           sb_mand = v < SB_MAND_UNTIL, mand_eperm = v < 5015,
           empty_key_skipped = v >= EMPTY_KEY_SKIPPED, ramfs_swallows = v < 6001,
           watch_fanotify = v >= 6015, unique_ids = v >= 6008 }
end

-- "6.12", "6.12.118+deb12-amd64" -> 6, 12 (or nil)
local function parse_linux(s)
  local a, b, rest = s:match("^(%d+)%.(%d+)(.*)$")
  if not a or (rest ~= "" and not rest:find("^[%.%-+]")) then return nil end
  return tonumber(a), tonumber(b)
end

-- The version a world follows by default, decided when the module loads,
-- not later, since a kernel scenario's child, where a mirror or a replay
-- may make a world, has no /proc under its new root: the running kernel's
-- "MAJOR.MINOR"; the oldest rules the model has (5.10) on an older kernel
-- or one whose release it cannot read (default_note says so); off Linux
-- (no /proc) the newest.
local OLDEST_S = OLDEST[1] .. "." .. OLDEST[2]

-- Whether Linux a.b is older than the oldest rules the model has.
local function older_than_oldest(a, b)
  return a < OLDEST[1] or (a == OLDEST[1] and b < OLDEST[2])
end
local default_version, default_note = NEWEST, nil
local running_version = nil -- the running kernel's "MAJOR.MINOR" (nil off Linux)
do
  local f = io.open("/proc/sys/kernel/osrelease")
  if f then
    local release = f:read("*l") or ""
    f:close()
    local a, b = parse_linux(release)
    running_version = a and a .. "." .. b
    if not a then
      default_version = OLDEST_S
      default_note = string.format("the running kernel's release %q is not a version the model "
        .. "can read: it follows Linux %s's rules, the oldest it has", release, OLDEST_S)
    elseif older_than_oldest(a, b) then
      default_version = OLDEST_S
      default_note = string.format("the running kernel is Linux %d.%d, older than the oldest "
        .. "rules the model has: it follows Linux %s's", a, b, OLDEST_S)
    else
      default_version = a .. "." .. b
    end
  end
end

local rules_cache = {}

-- The rules of kernel version v (a string "MAJOR.MINOR[...]" from 5.10
-- on; a newer kernel than the newest the model read gets its rules), or
-- nil and why not (a phrase that follows "option 'linux': ").
local function linux_rules(v)
  local cached = rules_cache[v]
  if cached then return cached end
  if type(v) ~= "string" then
    return nil, "a version string such as \"6.12\" expected, got " .. type(v)
  end
  local a, b = parse_linux(v)
  if not a then
    return nil, "'" .. v .. "' is not a kernel version (MAJOR.MINOR, such as \"6.12\")"
  end
  if older_than_oldest(a, b) then
    return nil, string.format("Linux %d.%d is older than the oldest kernel the model has rules "
      .. "for (%d.%d)", a, b, OLDEST[1], OLDEST[2])
  end
  cached = rules_of(a, b)
  rules_cache[v] = cached
  return cached
end

-- The rules for opts.linux (checked: fname, argn, level) or the default.
local function rules_for(linux, fname, argn, level)
  if linux == nil then linux = default_version end
  local rules, why = linux_rules(linux)
  if not rules then argcheck.error(fname, argn, "option 'linux': " .. why, level + 1) end
  return rules
end

M.rules_for = rules_for

--- A kernel version for the `linux` option, checked: the version of its
-- rules, or nil and why not, as a phrase (`"Linux 4.18 is older than the
-- oldest kernel the model has rules for (5.10)"`) for a caller to put in
-- its own message (`mountns run --linux`, `scenario.run_problem`).
-- @param v the option's value
-- @treturn[1] string the version of the rules, "MAJOR.MINOR"
-- @return[2] nil
-- @treturn[2] string why not
function M.linux_version(v)
  local rules, why = linux_rules(v)
  if not rules then return nil, why end
  return rules.linux
end

--- The kernel version whose rules a world follows when none is given: the
-- running kernel's MAJOR.MINOR (read from /proc/sys/kernel/osrelease when
-- the module loads); on a kernel older than the oldest rules the model has
-- (`model.OLDEST_LINUX`, 5.10), or one whose release it cannot read, that
-- oldest, with a note saying so; off Linux the newest.
-- @treturn string such as "6.12"
-- @treturn ?string the note, when the version is not the running kernel's
function M.default_linux()
  return default_version, default_note
end

--- The running kernel's version, "MAJOR.MINOR" (read from
-- /proc/sys/kernel/osrelease when the module loads, so it answers in a
-- scenario's child too), or nil off Linux or when the release is not a
-- version. What a kernel namespace's `ns:linux()` returns.
-- @treturn ?string such as "6.18"
function M.running_linux()
  return running_version
end

--- The oldest and the newest kernel versions the model has rules for,
-- read in their source (older ones raise; newer ones, 7.3 among them,
-- get the newest rules).
M.OLDEST_LINUX = OLDEST_S

--- The releases that brought the calls the rules date (`mount_setattr`,
-- `beneath`): what a model's call names before them, in the core's words
-- ("...: Function not implemented (ENOSYS): needs Linux 6.5").
M.SINCE = { mount_setattr = "5.12", beneath = "6.5" }
M.NEWEST_LINUX = NEWEST

return M
