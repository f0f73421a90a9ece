-- tostring() of mount tables: the findmnt-like tree rendered in C.
local mountns = require "mountns"
local helper = require "helper"

local function rec(id, parent, target, extra)
  local m = { id = id, parent_id = parent, target = target, source = "src",
              fstype = "tmpfs", propagation = "private" }
  for k, v in pairs(extra or {}) do m[k] = v end
  return m
end

-- the lines of a text, each ended by "\n" (a plain find: the 3,000-deep
-- chain's text is 18 MB, which a pattern walks 4x slower)
local function lines(s)
  local out, at = {}, 1
  while true do
    local nl = s:find("\n", at, true)
    if not nl then return out end
    out[#out + 1] = s:sub(at, nl - 1)
    at = nl + 1
  end
end

-- byte offset of the SOURCE column on a line (after the padded target)
local function source_col(l)
  return (l:find(" src ", 1, true))
end

describe("mount table tostring", function()
  it("draws the kernel's tree with IDs, propagation, group and master", function()
    local t = mountns.isolate(function()
      local base = helper.sandbox()
      assert(mountns.mkdir(base .. "/X/sub", { parents = true }))
      assert(mountns.mount("x", base .. "/X", "tmpfs"))
      assert(mountns.make_shared(base .. "/X"))
      assert(mountns.mkdir(base .. "/X/sub"))
      assert(mountns.mount("sub", base .. "/X/sub", "tmpfs"))
      local mi = mountns.mountinfo()
      -- the host's table comes along: a bind of a subdirectory there (or
      -- the tree's own, put back by the sandbox when it lives under /tmp)
      -- brings the ROOT column
      local bind = false
      for _, m in ipairs(mi) do bind = bind or m.root ~= "/" end
      return { text = tostring(mi), x = mi:find(base .. "/X"), sub = mi:find(base .. "/X/sub"),
               bind = bind }
    end)
    local l = lines(t.text)
    local root = t.bind and "/ +" or ""
    assert.matches("^TARGET +SOURCE +" .. (t.bind and "ROOT +" or "")
      .. "FSTYPE +ID PARENT PROPAGATION  GROUP MASTER$", l[1])
    local x = t.text:match("\n([^\n]*/tmp/mns/X [^\n]*)")
    assert.matches("^[│ ]*[└├]─/tmp/mns/X +x +" .. root .. "tmpfs +" .. t.x.id .. " +"
      .. t.x.parent_id .. " shared +" .. t.x.shared .. " +$", x)
    local sub = t.text:match("\n([^\n]*/tmp/mns/X/sub[^\n]*)")
    assert.matches("└─/tmp/mns/X/sub +sub +" .. root .. "tmpfs +" .. t.sub.id .. " +" .. t.x.id,
      sub)
  end)

  it("stays linear and exact on a 3,000-deep chain and a 10,000-mount table", function()
    local deep = {}
    for i = 1, 3000 do deep[i] = rec(i + 10, i + 9, "/d" .. i) end
    local l = lines(tostring(mountns.table.new(deep)))
    assert.are.equal(3001, #l)
    assert.are.equal(string.rep("  ", 2998) .. "└─/d3000", l[3001]:match("^(.-/d3000)"))

    local wide = { rec(1, 0, "/") }
    for i = 2, 10000 do wide[i] = rec(i, 1 + (i % 3 == 0 and i - 1 or 0), "/m" .. i) end
    local text = tostring(mountns.table.new(wide))
    assert.are.equal(10001, #lines(text))
  end)

  it("aligns columns by display width, long and multibyte targets too", function()
    local t = mountns.table.new {
      rec(1, 0, "/"), rec(2, 1, "/" .. string.rep("x", 150)), rec(3, 1, "/ü/日本"),
      rec(4, 3, "/ü/日本/deeper", { shared = 12, master = 7 }),
    }
    local l = lines(tostring(t))
    local function display_col(s)
      local _, n = s:sub(1, source_col(s)):gsub("[^\128-\191]", "")
      return n
    end
    local want = display_col(l[2])
    for i = 3, 5 do assert.are.equal(want, display_col(l[i]), l[i]) end
    assert.matches("private +12 +7$", l[5])
  end)

  it("never leaves a record out, even with a parent cycle in crafted text", function()
    local t = mountns.table.new { rec(1, 2, "/a"), rec(2, 1, "/b"), rec(5, 5, "/self") }
    local text = tostring(t)
    assert.are.equal(4, #lines(text))
    for _, p in ipairs { "/a", "/b", "/self" } do assert.truthy(text:find(p, 1, true)) end
  end)

  it("the Lua walker (tree_rows, under) lists the rows of tostring, cycles too", function()
    -- one order for every tree of mountns: before, the Lua walker dropped
    -- the records of a parent cycle that tostring (csrc/tree.c) keeps
    local cases = {
      { rec(1, 2, "/a"), rec(2, 1, "/b"), rec(5, 5, "/self") },
      { rec(1, 0, "/"), rec(3, 4, "/c"), rec(2, 1, "/x"), rec(4, 3, "/d"), rec(6, 2, "/x/y"),
        rec(7, 1, "/z") },
      -- a repeated ID: children go under the first record with it
      { rec(1, 0, "/"), rec(2, 1, "/p"), rec(2, 1, "/q"), rec(8, 2, "/p/k") },
    }
    for n, c in ipairs(cases) do
      local t = mountns.table.new(c)
      local want = {}
      for i, l in ipairs(lines(tostring(t))) do
        if i > 1 then want[#want + 1] = l:match("^(.-) +src ") end
      end
      local got, under = {}, {}
      for _, r in ipairs(mountns.table.tree_rows(t)) do got[#got + 1] = r[1] end
      for _, m in ipairs(t:under("/")) do under[#under + 1] = m.target end
      assert.same(want, got, "case " .. n)
      assert.equal(#c, #got, "case " .. n)
      assert.equal(#c, #under, "case " .. n)
    end
  end)

  it("raises on a table entry that is not a record", function()
    local t = mountns.table.new { rec(1, 0, "/"), "oops" }
    assert.has_error(function() return tostring(t) end,
      "mount table entry 2 is not a record")
  end)
end)
