--- Modules loaded on first use: the one way a mountns module defers a
-- require. `require "mountns"` used to load all 21 modules (the model's
-- 2,300 lines, explain, shell, watch, dot...: 15 ms of CPU, where a
-- command or a spec file uses a few); a module that needs another only in
-- some of its functions names it here instead:
--
--     local model = lazy.require "mountns.model"
--
-- at the top of the file, and reads `model.x` as before: the first read
-- of any field requires the module. spec/tools/layers.lua reads such a line as
-- an arrow like a plain require's (the same layer or a lower one, no
-- circle: a deferred arrow still orders the layers); a require written
-- inside a function stays a problem there.
-- @module mountns.lazy

-- the modules below this one, and those they load, from their bytecode
-- when it is fresh (mountns.bytecode: its searcher, installed once)
require "mountns.bytecode"

local M = {}

-- The stand-ins hold no module: each read looks the module up in
-- package.loaded (one hash lookup more than a plain field read), so a
-- module unloaded and loaded again (busted's insulation removes from
-- package.loaded what a spec file loaded) is read as the copy loaded now,
-- the one the caller's other requires return; a stand-in that kept its
-- first copy would mix two copies of a module (two namespace classes:
-- expect rejecting a scenario's namespaces).

-- the names deferred, in creation order, once each (load_all's list)
local names, listed = {}, {}

local function read_only(proxy)
  error("mountns.lazy: " .. getmetatable(proxy).name .. " is read-only through its stand-in", 2)
end

-- the module now: the loaded one, else required here
local function module(name)
  local mod = package.loaded[name]
  if mod == nil then mod = require(name) end
  return mod
end

local function read(proxy, k)
  return module(getmetatable(proxy).name)[k]
end

--- A stand-in for module `name`: every read of one of its fields reads
-- the module loaded under that name, the first one requires it (an error
-- loading it is raised there, by that read).
-- @tparam string name a module name, e.g. "mountns.model"
-- @treturn table the stand-in (fields read through to the module)
function M.require(name)
  if not listed[name] then
    listed[name] = true
    names[#names + 1] = name
  end
  return setmetatable({}, { name = name, __index = read, __newindex = read_only })
end

--- Load the module behind a stand-in now (for a module whose loading does
-- something: mountns.shell gives the model its `ns:shell`).
-- @tparam table proxy a stand-in from `lazy.require`
-- @treturn table the module
function M.load(proxy)
  return module(getmetatable(proxy).name)
end

--- Load every module still deferred, and those they defer in turn: before
-- a process leaves the host's file system (a scenario's child pivots to a
-- fresh tmpfs, where package.path finds nothing), so that every function
-- works there. `mountns.scenario` calls it in the caller, before each
-- fork: each scenario child inherits the loaded modules.
function M.load_all()
  local i = 1
  while names[i] do -- loading a module may add names to the list
    module(names[i])
    i = i + 1
  end
end

return M
