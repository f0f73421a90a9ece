-- Every example under examples/ passes under `mountns run`, as root and as
-- an unprivileged user (uid 65534). One `mountns run` of all the files per
-- user: the runner runs each file in a forked child of its own (its own
-- private mount namespace, its own Lua state from the fork on), so a file
-- passes there as it does alone; one Lua start-up instead of one a file.
local helper = require "helper"

describe("examples", function()
  local files = {}
  local p = io.popen("ls " .. helper.ROOT .. "/examples/*.lua")
  for file in p:lines() do files[#files + 1] = "examples/" .. file:match("[^/]*$") end
  p:close()
  local list = table.concat(files, " ")

  -- every file ran (a file that fails to load is a FAIL line of its own),
  -- each with at least one scenario, and none failed
  local function passed(out)
    assert.truthy(out:match("\n%d+ passed, 0 failed\nexit=0$"), out)
    assert.falsy(out:match("\nFAIL "), out)
    assert.is_true(tonumber(out:match("\n(%d+) passed, 0 failed\nexit=0$")) >= #files, out)
  end

  it("all " .. #files .. " pass under mountns run", function()
    passed(helper.sh("cd " .. helper.ROOT .. " && " .. helper.lua_vars()
      .. " bin/mountns run " .. list .. " 2>&1; echo \"exit=$?\""))
  end)

  it("all " .. #files .. " pass as an unprivileged user (uid 65534)", function()
    passed(helper.sh(helper.unpriv_cmd() .. " bin/mountns run " .. list
      .. " 2>&1; echo \"exit=$?\""))
  end)
end)
