-- umount's MNT_EXPIRE mark (issue 25, found by `make check-model`): the
-- first umount2(MNT_EXPIRE) of an unused mount marks it and fails EAGAIN,
-- the second unmounts it, unless something put the mount in between:
-- mntput clears the mark (fs/namespace.c; umount2 itself puts with
-- mntput_no_expire, which keeps it). So a read, a directory listing, an
-- access check, or a lookup that failed where it stopped, each between the
-- two umounts, make the second one EAGAIN again. Each case runs on the
-- kernel and on the model (spec/helper.lua's `same`): the outcomes of
-- every step and the tables left must agree.
local helper = require "helper"

local function same(fn) return helper.same(fn, "\n") end

-- a tmpfs at /a with a file, marked for expiry (EAGAIN), then `between`,
-- then expire again: the outcome says whether the mark held
local function marked_then(between)
  return same(function(ns, _, try)
    ns:mkdir("/a")
    ns:mount("t", "/a", "tmpfs")
    ns:write("/a/f", "x")
    try(ns.umount, ns, "/a", "expire")
    if between then between(ns, try) end
    try(ns.umount, ns, "/a", "expire")
  end)
end

describe("umount's expire mark, on the kernel and on the model #model", function()
  local it = helper.model_it

  it("holds when nothing puts the mount: the second expire unmounts", function()
    local _, outcomes = marked_then(nil)
    assert.are.equal("EAGAIN\nok", outcomes)
  end)

  it("is cleared by ns:read, ns:ls and ns:exists of a path in the mount", function()
    local _, o1 = marked_then(function(ns) ns:read("/a/f") end)
    assert.are.equal("EAGAIN\nEAGAIN", o1)
    local _, o2 = marked_then(function(ns) ns:ls("/a") end)
    assert.are.equal("EAGAIN\nEAGAIN", o2)
    local _, o3 = marked_then(function(ns) ns:exists("/a/f") end)
    assert.are.equal("EAGAIN\nEAGAIN", o3)
  end)

  it("is cleared by a lookup that failed inside the mount", function()
    local _, o1 = marked_then(function(ns, try) try(ns.exists, ns, "/a/missing") end)
    assert.are.equal("EAGAIN\nok\nEAGAIN", o1)
    local _, o2 = marked_then(function(ns, try) try(ns.move_mount, ns, "/a/missing", "/a") end)
    assert.are.equal("EAGAIN\nENOENT\nEAGAIN", o2)
  end)
end)
