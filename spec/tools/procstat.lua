-- What the specs read of a process in /proc and /sys, in one home: spec
-- files and the fresh Lua processes they start (`helper.lua_cmd` puts
-- spec/tools on LUA_PATH) `require "procstat"`. Reads only.
local M = {}

--- This process's peak resident set (VmHWM), in kB.
function M.hwm()
  for l in io.lines("/proc/self/status") do
    local v = l:match("^VmHWM:%s+(%d+)")
    if v then return tonumber(v) end
  end
end

--- The transparent huge page mode ("always", "madvise", "never"), or nil
-- where the kernel has none.
function M.thp_mode()
  local f = io.open("/sys/kernel/mm/transparent_hugepage/enabled")
  local mode = f and f:read("*l"):match("%[(%w+)%]")
  if f then f:close() end
  return mode
end

return M
