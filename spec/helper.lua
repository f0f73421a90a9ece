-- Loaded by busted before the specs (see .busted). Shared helpers.
local helper = {}

--- Number of open fds of this process (to catch fd leaks).
function helper.fd_count()
  -- handles dropped earlier close their fds in __gc: settle that first
  collectgarbage("collect"); collectgarbage("collect")
  local p = io.popen("ls /proc/" .. require("mountns").getpid() .. "/fd")
  local n = 0
  for _ in p:lines() do n = n + 1 end
  p:close()
  return n
end

--- The text of the host's mountinfo, to prove a spec left it alone.
function helper.host_mountinfo()
  local f = assert(io.open("/proc/self/mountinfo"))
  local s = f:read("a")
  f:close()
  return s
end

--- Inside an isolated child: a fresh tmpfs on /tmp to work in, so a spec
-- creates no file or directory on the host. Returns the base path.
function helper.sandbox()
  local mountns = require "mountns"
  assert(mountns.mount("tmpfs", "/tmp", "tmpfs"))
  assert(mountns.mkdir("/tmp/mns", { parents = true }))
  return "/tmp/mns"
end

--- Run a shell command, return its stdout (trailing newline trimmed).
function helper.sh(cmd)
  local p = assert(io.popen(cmd))
  local s = p:read("a")
  p:close()
  return (s:gsub("\n$", ""))
end

-- the tree this helper belongs to: child Lua processes load mountns from it
local ROOT = (debug.getinfo(1, "S").source:match("^@(.*)/spec/[^/]*$") or ".")
helper.ROOT = ROOT
local LUA_PATH = ROOT .. "/lua/?.lua;" .. ROOT .. "/lua/?/init.lua;;"
local LUA_CPATH = ROOT .. "/build/?.so;;"

--- A shell command that starts this Lua with this package path.
function helper.lua_cmd()
  local interp = arg and arg[-1] or "lua5.4"
  if interp:match("busted") or not interp:match("lua") then interp = "lua5.4" end
  return string.format("env LUA_PATH='%s' LUA_CPATH='%s' %s", LUA_PATH,
    LUA_CPATH, interp)
end

package.loaded["helper"] = helper
return helper
