-- Where a scenario's cost goes (issue 15), asserted on what the kernel
-- did, never on a clock: the kernel numbers every mount it creates with a
-- 64-bit unique ID from one counter (Linux 6.8+), so the IDs a scenario
-- consumes count the mounts its unshares copied.
local mountns = require "mountns"
local core = require "mountns.core"
local helper = require "helper"

local CALLER_MOUNTS = 3000

describe("scenario template", function()
  it("a scenario copies a small template, not the caller's mount table", function()
    local f = core.features()
    if not (f.statmount and f.statx_unique_id) then
      pending("needs statmount(2) and statx unique mount IDs (Linux 6.8+)")
      return
    end
    local r = mountns.isolate(function()
      local base = helper.sandbox()
      for i = 1, CALLER_MOUNTS do
        local p = base .. "/" .. i
        assert(mountns.mkdir(p))
        assert(mountns.mount("m" .. i, p, "tmpfs", nil, "size=4k"))
      end
      local function root_id() return core.statmount("/").unique_id end
      -- the first scenario of a process makes the template (two copies of
      -- the caller's table, once); the next ones copy only the template
      local first = mountns.scenario(root_id)
      local second = mountns.scenario(root_id)
      local third = mountns.scenario(root_id)
      return { first = first, second = second, third = third,
               caller = #mountns.mountinfo() }
    end)
    assert.is_true(r.caller > CALLER_MOUNTS)
    assert.is_true(r.second > r.first and r.third > r.second)
    -- copying the caller's table once would take more than 3,000 IDs;
    -- a template copy takes a handful (other processes' mounts meanwhile
    -- take some too: the bound leaves them room)
    assert.is_true(r.second - r.first < CALLER_MOUNTS / 2,
      "scenario 2 took " .. (r.second - r.first) .. " mount IDs")
    assert.is_true(r.third - r.second < CALLER_MOUNTS / 2,
      "scenario 3 took " .. (r.third - r.second) .. " mount IDs")
  end)
end)

describe("mountns show start-up", function()
  -- which mountns modules bin/mountns had loaded when it exited, and its output
  local function loaded(args)
    local out = helper.sh("cd " .. helper.ROOT .. " && " .. helper.lua_cmd() .. [[ -e '
      local exit = os.exit
      os.exit = function(...)
        local names = {}
        for name in pairs(package.loaded) do
          if name:match("^mountns") then names[#names + 1] = name end
        end
        table.sort(names)
        io.stderr:write("LOADED ", table.concat(names, " "), "\n")
        return exit(...)
      end' bin/mountns ]] .. args .. " 2>&1 >/dev/null")
    return out:match("LOADED ([^\n]*)")
  end

  it("plain show loads the core and the table module only, not all of mountns", function()
    assert.are.equal("mountns.args mountns.core mountns.table", loaded("show"))
  end)

  it("show --json adds format, show --dot adds dot", function()
    assert.are.equal("mountns.args mountns.core mountns.format mountns.record mountns.table",
      loaded("show --json"))
    assert.are.equal("mountns.args mountns.core mountns.dot mountns.format mountns.record "
      .. "mountns.table", loaded("show --dot"))
  end)
end)
