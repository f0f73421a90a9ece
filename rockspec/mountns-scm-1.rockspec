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
-- The Makefile links core.so with -Wl,-z,now (every libc function bound
-- at load, not on its first call in each forked child: fewer page faults
-- a scenario; speed only). The builtin build has no field for a linker
-- flag: pass it as `luarocks make rockspec/mountns-scm-1.rockspec
-- LIBFLAG="-shared -Wl,-z,now"`.
build = {
  type = "builtin",
  modules = {
    ["mountns.core"] = {
      sources = {
        "csrc/core.c", "csrc/errors.c", "csrc/args.c", "csrc/handle.c",
        "csrc/procfs.c", "csrc/record.c", "csrc/ns.c", "csrc/mount.c",
        "csrc/mountinfo.c", "csrc/process.c", "csrc/tree.c", "csrc/mountid.c",
        "csrc/newapi.c", "csrc/statmount.c", "csrc/features.c", "csrc/watch.c",
        "csrc/heap.c", "csrc/frame.c", "csrc/libmount.c", "csrc/fdio.c",
        "csrc/proctree.c", "csrc/smpipe.c", "csrc/files.c",
      },
      incdirs = { "$(LIBMOUNT_INCDIR)/libmount" },
      libdirs = { "$(LIBMOUNT_LIBDIR)" },
      libraries = { "dl", "pthread" }, -- libmount itself: dlopen on first parse
    },
    ["mountns"] = "lua/mountns/init.lua",
    ["mountns.table"] = "lua/mountns/table.lua",
    ["mountns.lazy"] = "lua/mountns/lazy.lua",
    ["mountns.mounts"] = "lua/mountns/mounts.lua",
    ["mountns.isolate"] = "lua/mountns/isolate.lua",
    ["mountns.scenario"] = "lua/mountns/scenario.lua",
    ["mountns.namespace"] = "lua/mountns/namespace.lua",
    ["mountns.ops"] = "lua/mountns/ops.lua",
    ["mountns.record"] = "lua/mountns/record.lua",
    ["mountns.runner"] = "lua/mountns/runner.lua",
    ["mountns.report"] = "lua/mountns/report/init.lua",
    ["mountns.report.order"] = "lua/mountns/report/order.lua",
    ["mountns.report.plain"] = "lua/mountns/report/plain.lua",
    ["mountns.report.tap"] = "lua/mountns/report/tap.lua",
    ["mountns.expect"] = "lua/mountns/expect.lua",
    ["mountns.luassert"] = "lua/mountns/luassert.lua",
    ["mountns.diff"] = "lua/mountns/diff.lua",
    ["mountns.format"] = "lua/mountns/format.lua",
    ["mountns.dot"] = "lua/mountns/dot.lua",
    ["mountns.agent"] = "lua/mountns/agent.lua",
    ["mountns.child"] = "lua/mountns/child.lua",
    ["mountns.args"] = "lua/mountns/args.lua",
    ["mountns.flags"] = "lua/mountns/flags.lua",
    ["mountns.recipes"] = "lua/mountns/recipes.lua",
    ["mountns.watch"] = "lua/mountns/watch.lua",
    ["mountns.shell"] = "lua/mountns/shell.lua",
    ["mountns.model"] = "lua/mountns/model/init.lua",
    ["mountns.model.errors"] = "lua/mountns/model/errors.lua",
    ["mountns.model.paths"] = "lua/mountns/model/paths.lua",
    ["mountns.model.rules"] = "lua/mountns/model/rules.lua",
    ["mountns.model.world"] = "lua/mountns/model/world.lua",
    ["mountns.model.fsdata"] = "lua/mountns/model/fsdata.lua",
    ["mountns.model.propagate"] = "lua/mountns/model/propagate.lua",
    ["mountns.model.umount"] = "lua/mountns/model/umount.lua",
    ["mountns.model.checks"] = "lua/mountns/model/checks.lua",
    ["mountns.model.listing"] = "lua/mountns/model/listing.lua",
    ["mountns.model.events"] = "lua/mountns/model/events.lua",
    ["mountns.model.ops"] = "lua/mountns/model/ops.lua",
    ["mountns.model.space"] = "lua/mountns/model/space.lua",
    ["mountns.model.scenario"] = "lua/mountns/model/scenario.lua",
    ["mountns.model.replay"] = "lua/mountns/model/replay.lua",
    ["mountns.mirror"] = "lua/mountns/mirror.lua",
    ["mountns.explain"] = "lua/mountns/explain.lua",
    ["mountns.check"] = "lua/mountns/check.lua",
    ["mountns.cli"] = "lua/mountns/cli.lua",
  },
  install = {
    bin = { mountns = "bin/mountns" },
  },
}
test = {
  type = "busted",
}
