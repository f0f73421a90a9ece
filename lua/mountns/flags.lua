--- flags: the names of the flags mount(2) and umount2(2) take, as data,
-- and what each does to a mount: the Lua layer's one copy of the names.
-- The core's tables (csrc/mount.c's mount_flags and umount_flags, which
-- the system calls read) are the authority; spec 35 compares these with
-- them name by name, both ways (`core._flag_names`), so the two cannot
-- drift. `mountns.args.flags` parses a flag argument with these sets, in
-- the core's words; the model reads what each flag does from here.
--
-- A mount flag's entry: `attr`, `value`: the per-mount attribute it sets
-- (the field of a mount's flags: "ro", "nosuid", "nodev", "noexec",
-- "atime", "nodiratime", "nosymfollow") and its value; `prop`: the
-- propagation type it gives ("shared", "private", "slave", "unbindable");
-- `op`: the operation it asks for ("bind", "move", "remount"); `rec`:
-- MS_REC, the whole tree. An empty entry: a flag that changes nothing a
-- mount's record shows (sync, mand, lazytime, ...), or the negation of one
-- (rw, suid, atime, ...): the core sends no bit for it and ORs the bits of
-- the names given, so a negation never clears what another name set.
-- This module requires nothing.
-- @module mountns.flags

local M = {}

--- mount(2)'s flags by name (csrc/mount.c's mount_flags).
M.mount = {
  -- (rw, suid, dev, exec: no bit, so "ro,rw" is ro, as the kernel has it)
  ro = { attr = "ro", value = true }, rw = {},
  nosuid = { attr = "nosuid", value = true }, suid = {},
  nodev = { attr = "nodev", value = true }, dev = {},
  noexec = { attr = "noexec", value = true }, exec = {},
  sync = {}, async = {}, dirsync = {}, mand = {}, nomand = {}, silent = {}, loud = {},
  relatime = { attr = "atime", value = "relatime" }, norelatime = {},
  noatime = { attr = "atime", value = "noatime" }, atime = {},
  strictatime = { attr = "atime", value = "strictatime" },
  nodiratime = { attr = "nodiratime", value = true }, diratime = {},
  lazytime = {}, nolazytime = {},
  nosymfollow = { attr = "nosymfollow", value = true }, symfollow = {},
  shared = { prop = "shared" }, rshared = { prop = "shared", rec = true },
  private = { prop = "private" }, rprivate = { prop = "private", rec = true },
  slave = { prop = "slave" }, rslave = { prop = "slave", rec = true },
  unbindable = { prop = "unbindable" }, runbindable = { prop = "unbindable", rec = true },
  bind = { op = "bind" }, rbind = { op = "bind", rec = true }, move = { op = "move" },
  remount = { op = "remount" },
}

--- umount2(2)'s flags by name (csrc/mount.c's umount_flags); `lazy`:
-- MNT_DETACH (`lazy` is umount(8)'s -l, the same flag as `detach`).
M.umount = {
  force = {}, detach = { lazy = true }, lazy = { lazy = true }, expire = {}, nofollow = {},
}

return M
