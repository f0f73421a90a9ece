--- Modules loaded on first use: the one way a mountns module defers a
-- require. `require "mountns"` used to load all 21 modules (the model's
-- 2,300 lines, explain, shell, watch, dot...: 15 ms of CPU, where a
-- command or a spec file uses a few); a module that needs another only in
-- some of its functions names it here instead:
--
--     local model = lazy.require "mountns.model"
--
-- at the top of the file, and reads `model.x` as before: the first read
-- of any field requires the module. doc/layers.lua reads such a line as
-- an arrow like a plain require's (the same layer or a lower one, no
-- circle: a deferred arrow still orders the layers); a require written
-- inside a function stays a problem there.
-- @module mountns.lazy

local M = {}

-- the stand-ins not loaded yet, in creation order (load_all's list)
local pending = {}

local function read_only(proxy)
  error("mountns.lazy: " .. getmetatable(proxy).name .. " is read-only through its stand-in", 2)
end

-- the first field read: load the module, then every later read goes
-- straight to it (the stand-in's __index becomes the module's table)
local function first_read(proxy, k)
  local mt = getmetatable(proxy)
  local mod = require(mt.name)
  mt.__index = mod
  return mod[k]
end

--- A stand-in for module `name`: the first read of any of its fields
-- requires the module (an error loading it is raised there, by that read).
-- @tparam string name a module name, e.g. "mountns.model"
-- @treturn table the stand-in (fields read through to the module)
function M.require(name)
  local proxy = setmetatable({}, { name = name, __index = first_read, __newindex = read_only })
  pending[#pending + 1] = proxy
  return proxy
end

--- Load the module behind a stand-in now (for a module whose loading does
-- something: mountns.shell gives the model its `ns:shell`).
-- @tparam table proxy a stand-in from `lazy.require`
-- @treturn table the module
function M.load(proxy)
  local mt = getmetatable(proxy)
  if mt.__index == first_read then mt.__index = require(mt.name) end
  return mt.__index
end

--- Load every module still deferred, and those they defer in turn: before
-- a process leaves the host's file system (a scenario's child pivots to a
-- fresh tmpfs, where package.path finds nothing), so that every function
-- works there. `mountns.scenario` calls it in the caller, before its first
-- fork: each scenario child inherits the loaded modules.
function M.load_all()
  local i = 1
  while pending[i] do -- loading a module may add stand-ins to the list
    M.load(pending[i])
    i = i + 1
  end
  pending = {}
end

return M
