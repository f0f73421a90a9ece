-- Every example under examples/ passes under `mountns run`.
local helper = require "helper"

describe("examples", function()
  local p = io.popen("ls " .. helper.ROOT .. "/examples/*.lua")
  for file in p:lines() do
    it(file:match("[^/]*$") .. " passes under mountns run", function()
      local out = helper.sh("cd " .. helper.ROOT .. " && " .. helper.lua_cmd()
        .. " bin/mountns run " .. file .. " 2>&1; echo \"exit=$?\"")
      assert.truthy(out:match("\n%d+ passed, 0 failed\nexit=0$"), out)
      assert.falsy(out:match("\nFAIL "), out)
    end)

    it(file:match("[^/]*$") .. " passes as an unprivileged user (uid 65534)", function()
      local out = helper.sh(helper.unpriv_cmd() .. " bin/mountns run examples/"
        .. file:match("[^/]*$")
        .. " 2>&1; echo \"exit=$?\"")
      assert.truthy(out:match("\n%d+ passed, 0 failed\nexit=0$"), out)
    end)
  end
  p:close()
end)
