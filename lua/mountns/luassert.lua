--- mountns.luassert: the expect checks as luassert assertions for busted.
--     require "mountns.luassert"
--     assert.mounted(ns, "/X"); assert.is_not.mounted(ns, "/Z")
--     assert.peers({sh1, "/X"}, {sh2, "/X"}); assert.slave_of(a, b)
--     assert.propagation(ns, "/X", "shared"); assert.locked(ns, "/X")
--     assert.propagates(fn, {sh1, "/X/a"}, {sh2, "/X/a"})
--     assert.mounted(ns, "/X", {source = "a"}); assert.stack(ns, "/X", {"a", "b"})
--     assert.propagate_from(a, b); assert.order(ns, {"/a", "/b"})
--     assert.count(ns, "/mnt", 6); assert.fails("EINVAL", ns.umount, ns, "/X")
--     assert.golden_mountinfo(text, {["/tmp/W"] = "/"}, sh1)
-- A failure shows the same diagnostic as mountns.expect: the mount tables
-- of the namespaces involved with the offending lines marked.
--
-- It needs luassert and say, which come with busted. The rock does not
-- depend on them (mountns itself never loads this module), so they are
-- loaded here, when this module is required, and a missing one says so.
-- @module mountns.luassert

local function need(name)
  local ok, mod = pcall(require, name)
  if not ok then
    error("mountns.luassert needs the '" .. name .. "' module, which comes with busted "
      .. "(luarocks install busted; Debian: lua-busted); the mountns rock does not "
      .. "install it", 0)
  end
  return mod
end
local assert = need "luassert"
local say = need "say"
local expect = require "mountns.expect"
local namespace = require "mountns.namespace"

-- Scenario namespaces and {ns, path} pairs print as "sh1 mnt:[N]" and
-- "{sh1 mnt:[N], /X}" instead of a dump of their fields.
assert:add_formatter(function(v)
  if namespace.is_namespace(v) then return tostring(v) end
  if type(v) == "table" and namespace.is_namespace(v[1]) and type(v[2]) == "string"
     and #v == 2 then
    return "{" .. tostring(v[1]) .. ", " .. v[2] .. "}"
  end
  -- {ns, record}: the record by its mount point and ID
  if type(v) == "table" and namespace.is_namespace(v[1]) and type(v[2]) == "table"
     and v[2].id ~= nil and type(v[2].target) == "string" and #v == 2 then
    return "{" .. tostring(v[1]) .. ", " .. v[2].target .. " (mount ID "
      .. tostring(v[2].id) .. ")}"
  end
  return nil
end)

local unpack = table.unpack or unpack -- luacheck: ignore

local function register(name, check)
  local pos, neg = "assertion." .. name .. ".positive", "assertion." .. name .. ".negative"
  say:set(pos, "Expected the mountns check '" .. name .. "' to pass")
  say:set(neg, "Expected the mountns check '" .. name .. "' to fail")
  -- level: luassert's, as error counts it from its __call (the user's line
  -- is level + 1 from this function): a usage error is raised there
  assert:register("assertion", name, function(state, arguments, level)
    local ok, diag, invalid = expect.run(check, (level or 1) + 1,
      unpack(arguments, 1, arguments.n))
    -- the diagnostic reads mount tables: build it only when luassert prints
    -- it (state.mod is false under is_not: it explains the negation)
    local negated = not state.mod
    state.failure_message = setmetatable({}, {
      __tostring = function() return diag(negated) end })
    -- a check that cannot hold either way fails under is_not too
    if invalid then return not state.mod end
    return ok
  end, pos, neg)
end

-- every check of mountns.expect, so that a new one cannot be left out
local names = {}
for name in pairs(expect.checks) do names[#names + 1] = name end
table.sort(names)
for _, name in ipairs(names) do register(name, expect.checks[name]) end

return assert
