rockspec_format = "3.0"
package = "mountns"
version = "scm-1"
-- mountns has no public repository yet: build the rock from a clone,
-- `luarocks make rockspec/mountns-scm-1.rockspec` (README, "Install"; doc/install.md).
-- luarocks requires a source.url; "." names that clone, the one place
-- `luarocks make` reads (`luarocks install` of this file alone cannot work).
source = {
  url = ".",
}
description = {
  summary = "Linux mount namespaces and shared-subtree propagation for Lua",
  detailed = [[
    Binds unshare, setns, mount, bind/rbind, move, umount, remount and the
    propagation changes, parses /proc/PID/mountinfo with util-linux libmount,
    and lets scripts describe multi-namespace scenarios and assert what the
    kernel propagated.
  ]],
  license = "MIT",
  labels = { "linux", "mount", "namespaces", "containers" },
}
supported_platforms = { "linux" }
dependencies = {
  "lua >= 5.1",
}
external_dependencies = {
  LIBMOUNT = {
    header = "libmount/libmount.h",
    library = "mount",
  },
}
-- The Makefile builds and installs (`make all`, `make install`): core.so
-- (linked with -Wl,-z,now: every libc function bound at load, not on its
-- first call in each forked child), and every module of lua/mountns with
-- its bytecode beside it (x.luac next to x.lua, compiled by this
-- interpreter: mountns.bytecode loads it while it matches the source;
-- issue 28), in the layout of lua/ (`mountns/init.lua`...). The build goes
-- to build/rock/<interpreter's path>, apart from `make`'s own build/ and
-- build/$LUA, one for each Lua the rock is made for.
build = {
  type = "make",
  build_target = "all",
  variables = {
    LUA = "$(LUA)",
    BUILD = "build/rock$(LUA)",
    CFLAGS = "$(CFLAGS)",
    LUA_CFLAGS = "-I$(LUA_INCDIR)",
    MOUNT_CFLAGS = "-I$(LIBMOUNT_INCDIR)/libmount",
    INST_LUADIR = "$(LUADIR)",
    INST_LIBDIR = "$(LIBDIR)",
  },
  install = {
    bin = { mountns = "bin/mountns" },
  },
}
-- `luarocks test` runs `make test` with the Lua luarocks targets
-- (spec/tools/luarocks-test.lua), offline: type "busted" would make
-- luarocks fetch busted as a rock when it is installed otherwise (Debian's
-- lua-busted).
test = {
  type = "command",
  script = "spec/tools/luarocks-test.lua",
}
