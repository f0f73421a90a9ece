-- `mountns check`'s observation (issue 28, item 3): the golden text is
-- rendered from the records and their renumbering, without normalised
-- copies. It must stay what it was defined as, the article style of the
-- normalised tables a blank line apart, `format(normalize(...)[i],
-- "article", opts)` joined with "\n" (the function golden_text was before):
-- compared here on the tables check itself reads after every step of
-- generated sequences, on the model and on the kernel, on the real-world
-- mountinfo fixtures (../shared/mountinfo-corpora, where present) and on
-- made-up records that reach every branch of the rule. (bench/check.lua
-- compares whole `mountns check` runs of the tree before and after, byte
-- for byte.)
local helper = require "helper"
local mountns = require "mountns"
local format = require "mountns.format"
local check = require "mountns.check"
local core = require "mountns.core"

local unpack = table.unpack or unpack -- luacheck: ignore

-- The golden text as it was defined: normalise, format each, join.
local function slow_text(...)
  local n = select("#", ...)
  local opts
  if n > 0 and type(select(n, ...)) == "table" and getmetatable(select(n, ...)) == nil
     and select(n, ...).source ~= nil then
    opts, n = select(n, ...), n - 1
  end
  local args = { ... }
  local norm = { format.normalize(unpack(args, 1, n)) }
  local parts = {}
  for i = 1, n do parts[i] = format.format(norm[i], "article", opts) end
  return table.concat(parts, "\n")
end

-- Each of `lists` (lists of tables) through both: the count compared and
-- the first difference, or nil.
local function compare(lists)
  for i, list in ipairs(lists) do
    for _, opts in ipairs { false, { source = true } } do
      local args = { unpack(list) }
      if opts then args[#args + 1] = opts end
      local fast = format.golden_text(unpack(args, 1, #list + (opts and 1 or 0)))
      local slow = slow_text(unpack(args, 1, #list + (opts and 1 or 0)))
      if fast ~= slow then
        return i, string.format("case %d%s:\n--- slow\n%s\n--- fast\n%s", i,
          opts and " (source)" or "", slow, fast)
      end
    end
  end
  return #lists
end

-- check.observe's golden texts checked against slow_text as it runs:
-- format.golden_text wrapped (in the scenario's child too: it is forked
-- with the wrapper), a difference raised as an error, which observe
-- writes into the observation as "error: ..." text.
local function watched(fn)
  local real = format.golden_text
  format.golden_text = function(...)
    local fast, slow = real(...), slow_text(...)
    if fast ~= slow then
      error("golden_text differs from format(normalize(...)):\n" .. slow .. "\n--\n" .. fast)
    end
    return fast
  end
  local ok, a, b = pcall(fn)
  format.golden_text = real
  if not ok then error(a, 0) end
  return a, b
end

-- Whether an observation holds a text, none an error.
local function errors_in(obs)
  local out = {}
  for _, o in ipairs(obs) do
    if o.text:find("^error") or o.text:find("golden_text differs") then out[#out + 1] = o.text end
  end
  return out
end

describe("the golden text, rendered directly", function()
  it("is format(normalize(...)) of the model's tables after every generated step", function()
    local steps_seen, texts = 0, 0
    watched(function()
      for index = 1, 40 do
        local steps = check.generate(34, index, 16)
        local obs = check.on_model(steps)
        assert.same({}, errors_in(obs))
        steps_seen = steps_seen + #obs
        for _, o in ipairs(obs) do
          if o.text ~= "" then texts = texts + 1 end
        end
      end
    end)
    assert.equal(640, steps_seen)
    assert.is_true(texts > 600, texts .. " texts")
  end)

  -- #novalgrind: 192 generated kernel steps pass their timeout under
  -- memcheck; the golden text is pure Lua, checked on the model's tables too
  it("is format(normalize(...)) of the kernel's tables after every generated step #novalgrind",
    function()
    local seqs = {}
    for index = 1, 12 do seqs[index] = check.generate(34, index, 16) end
    local kobs = watched(function() return check.on_kernel(seqs, 12) end)
    local n = 0
    for _, obs in ipairs(kobs) do
      assert.same({}, errors_in(obs))
      for _, o in ipairs(obs) do
        -- a kernel table: "1 2 0:1 / / rw..." lines, at least the root
        assert.matches("^1 %d+ 0:1 / / ", o.text)
        n = n + 1
      end
    end
    assert.equal(12 * 16, n)
  end)

  it("is format(normalize(...)) of records that reach every branch of the rule", function()
    local function rec(t)
      local r = { id = 10, parent_id = 1, major = 0, minor = 30, root = "/", target = "/",
                  options = "rw", fstype = "tmpfs", source = "none", super_options = "rw" }
      for k, v in pairs(t) do r[k] = v end
      return r
    end
    local a = mountns.table.new {
      rec {},
      rec { id = 11, parent_id = 10, target = "/a b", shared = 7, source = "with\tab" },
      rec { id = 12, parent_id = 11, target = "/a b/\\c", master = 7, shared = 9,
            propagate_from = 3, minor = 31 },
      rec { id = 13, parent_id = 99, target = "/x", unbindable = true, source = false },
      rec { id = 14, parent_id = 12, target = "/y\n", master = 9, major = 8, minor = 1,
            root = "/sub dir", options = "ro,nosuid" },
      rec { id = 15, parent_id = 13, target = "/z", unique_id = 123456, ns_id = 5 },
    }
    local b = mountns.table.new {
      rec { id = 20, parent_id = 12, target = "/", shared = 9, master = 3 },
      rec { id = 21, parent_id = 77, target = "/q", minor = 30, propagate_from = 9 },
    }
    local empty = mountns.table.new {}
    local plain = { rec { id = 5, parent_id = 5 } } -- a plain list of records
    local n, diff = compare { { a }, { b }, { a, b }, { b, a, a }, { empty }, { a, empty, b },
                              { empty, empty }, { plain, a }, {} }
    assert.equal(9, n, diff)
    -- and it renumbers as normalize does: mount IDs, then the parents that
    -- are no mount of a table, groups and devices in order of appearance
    assert.equal(table.concat({
      "1 9 0:1 / / rw",
      "2 1 0:1 / /a\\040b rw shared:1",
      "3 2 0:2 / /a\\040b/\\134c rw shared:2 master:1 propagate_from:3",
      "4 10 0:1 / /x rw unbindable",
      "5 3 0:3 /sub\\040dir /y\\012 ro,nosuid master:2",
      "6 4 0:1 / /z rw",
      "",
      "7 3 0:1 / / rw shared:2 master:3",
      "8 11 0:1 / /q rw propagate_from:2",
      "" }, "\n"), format.golden_text(a, b))
  end)

  describe("on the real-world mountinfo fixtures", function()
    local DIR = helper.ROOT .. "/../shared/mountinfo-corpora"
    local f = io.open(DIR .. "/README.md")
    if not f then
      pending("the fixtures are absent (" .. DIR .. ")")
      return
    end
    f:close()
    it("is format(normalize(...)) of each, alone and in pairs", function()
      local tables = {}
      for name in helper.sh("ls -1 '" .. DIR .. "'"):gmatch("[^\n]+") do
        if name:match("%.txt$") then
          local t = core.parse_mountinfo(helper.read(DIR .. "/" .. name))
          if t then tables[#tables + 1] = mountns.table.new(t) end
        end
      end
      assert.is_true(#tables >= 25, #tables .. " fixtures parsed")
      local lists = {}
      for i, t in ipairs(tables) do
        lists[#lists + 1] = { t }
        lists[#lists + 1] = { t, tables[i % #tables + 1] }
      end
      local n, diff = compare(lists)
      assert.equal(2 * #tables, n, diff)
    end)
  end)
end)

describe("the golden text's option", function()
  it("source must be a boolean: an error naming the call, at the caller's line", function()
    local t = mountns.table.new { { id = 1, parent_id = 0, major = 0, minor = 1, root = "/",
                                    target = "/", options = "rw", source = "s" } }
    local line = debug.getinfo(1, "l").currentline
    local ok, err = pcall(format.golden_text, t, { source = 1 })
    assert.is_false(ok)
    assert.equal("bad argument #2 to 'golden_text' (option 'source' must be a boolean, "
      .. "got number)", err)
    local ok2, err2 = pcall(function()
      local r = format.golden("", t, t, { source = "yes" }); return r end)
    assert.is_false(ok2)
    assert.equal("spec/scenario/34-observe_spec.lua:" .. (line + 6)
      .. ": bad argument #4 to 'golden' (option 'source' must be a boolean, got string)", err2)
    -- a boolean is taken, both ways
    assert.equal("1 2 0:1 / / rw - s\n", format.golden_text(t, { source = true }))
    assert.equal("1 2 0:1 / / rw\n", format.golden_text(t, { source = false }))
  end)
end)

describe("check's table reads in a scenario", function()
  -- record() tells mountns's own ns:run (check's reads of a table after
  -- each step) from the user's by the first Lua frame, without walking up
  -- to the user's: the user's are steps (also through pcall, a C frame),
  -- mountns's are not
  it("are no steps; the user's ns:run is one, at the user's line", function()
    local namespace = require "mountns.namespace"
    local line = debug.getinfo(1, "l").currentline
    local ops, wheres = mountns.scenario(function(ns)
      ns:run(function() end)
      pcall(ns.run, ns, function() end)
      check.observe(ns, { { id = 1, ns = 0, op = "mkdir", args = { "/q", n = 1 } } })
      local o, w = {}, {}
      for i, st in ipairs(namespace.steps()) do o[i], w[i] = st.op, st.where end
      return o, w
    end)
    assert.same({ "run", "run", "mkdir" }, ops)
    assert.equal("spec/scenario/34-observe_spec.lua:" .. (line + 2), wheres[1])
    assert.equal("spec/scenario/34-observe_spec.lua:" .. (line + 3), wheres[2])
  end)
end)

describe("record.optional_of (the optional fields, no table a mount)", function()
  it("writes every combination of the four fields as show_mountinfo does", function()
    local record = require "mountns.record"
    local n = 0
    for _, shared in ipairs { false, 1, 7 } do
      for _, master in ipairs { false, 1, 3 } do
        for _, from in ipairs { false, 2, 7 } do
          for _, unbindable in ipairs { false, true } do
            -- the fields the record has, in show_mountinfo's order, one space apart
            local want = {}
            if shared then want[#want + 1] = "shared:" .. shared end
            if master then want[#want + 1] = "master:" .. master end
            if from then want[#want + 1] = "propagate_from:" .. from end
            if unbindable then want[#want + 1] = "unbindable" end
            local m = { shared = shared or nil, master = master or nil,
                        propagate_from = from or nil, unbindable = unbindable or nil }
            assert.equal(table.concat(want, " "), record.optional(m))
            assert.equal(table.concat(want, " "),
              record.optional_of(m.shared, m.master, m.propagate_from, m.unbindable))
            n = n + 1
          end
        end
      end
    end
    assert.equal(54, n)
    assert.equal("", record.optional {})
    assert.equal("shared:1 master:3 propagate_from:2 unbindable",
      record.optional { shared = 1, master = 3, propagate_from = 2, unbindable = true })
  end)
end)
