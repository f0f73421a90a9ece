-- `mountns run --both` sees what the script sees (issue 25): every answer
-- the script got from a namespace (a file, a directory's names, whether a
-- path exists, a record, a root view, a mount fd) is compared with the
-- model's, also when the call came through expect.fails or pcall; a
-- difference the model was not shown (after a step it cannot follow:
-- ns:run, ns:exec) is a note, and under --strict that step fails.
--
-- The reproducers run a kernel scenario under `--both` (scenario.run_file,
-- as `mountns run --both` does); a wrong answer is plugged into the model
-- with the mirror's `override` option, and each case also runs without
-- it, where the same scenario must pass: the kernel's answer is the one
-- the script asserts, so the model's right answer is checked too.
local helper = require "helper"
local mtable = require "mountns.table"

-- a script file for `mountns run` (spec/helper.lua); removed by the caller
local script = helper.script_file

-- The line of text that holds marker (a `-- name` comment), as "file:N".
local function at(path, text, marker)
  local n = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if line:find("-- " .. marker, 1, true) then
      return (path:match("[^/]*$")) .. ":" .. n
    end
  end
  error("no line marked " .. marker)
end

-- A pattern that matches s literally.
local function lit(s)
  return (s:gsub("%p", "%%%0"))
end

-- The script run under --both (both: the mirror's options): its one
-- report, `{ok = ..., err = text, notes = {lines}}`.
local function run_both(text, both)
  local scenario = require "mountns.scenario"
  local path = script(text)
  local reported = {}
  local ok, err = scenario.run_file(path, { both = both or true,
    report = function(_, passed, e, _, _, _, notes)
      reported[#reported + 1] = { ok = passed, err = e and tostring(e), notes = notes or {} }
    end })
  os.remove(path)
  assert(ok, err)
  assert.are.equal(1, #reported)
  return reported[1], path
end

-- the scenario of the wrong-answer cases: a file, two peer groups (/A,
-- /B), a slave copy of the namespace, then the reads the script makes
local ANSWERS = [[
local mountns = require "mountns"
mountns.scenario("answers", function(sh1)
  sh1:label("sh1")
  sh1:make_private("/")
  for _, d in ipairs { "/A", "/B", "/X" } do sh1:mkdir(d) end
  sh1:mount("a", "/A", "tmpfs"); sh1:make_shared("/A")
  sh1:mount("b", "/B", "tmpfs"); sh1:make_shared("/B")
  sh1:mount("x", "/X", "tmpfs")
  sh1:write("/X/f", "hello\n")
  local sh2 = sh1:unshare { propagation = "slave", label = "sh2" }
  assert(sh1:read("/X/f") == "hello\n")                             -- read
  assert(sh1:exists("/X/f"))                                        -- exists
  assert(#sh1:ls("/X") == 1)                                        -- ls
  assert(sh2:find("/A").master)                                     -- find
  local view = assert(sh2:mounts { root = "/A", propagate_from = true }) -- view
  assert(#view == 1 and view[1].target == "/" and view[1].master)
end)
]]

describe("run --both compares every answer the script got #model", function()
  -- the model follows the running kernel: pending where it has no rules for it
  local it = helper.model_it

  -- the scenario as it is: the model answers as the kernel did
  local function passes(text)
    local r = run_both(text)
    assert.is_true(r.ok, r.err)
    assert.are.same({}, r.notes)
  end

  -- each read of ANSWERS answered wrongly by the model: the call's line,
  -- the call and both answers
  local WRONG = {
    { "read", function() return "wrong\n" end, 'sh1:read("/X/f")',
      [[the answers differ: the kernel's "hello\n", the model's "wrong\n"]] },
    { "exists", function() return false end, 'sh1:exists("/X/f")',
      "the answers differ: the kernel's true, the model's false" },
    { "ls", function() return { "f", "g" } end, 'sh1:ls("/X")',
      [[the answers differ: the kernel's {"f"}, the model's {"f", "g"}]] },
    { "find", function() return nil end, 'sh2:find("/A")',
      "the answers differ (- kernel, + model):\n--- kernel\n+++ model\n@@ -1,1 +1,1 @@\n"
      .. "-6 5 0:2 / /A rw,relatime master:1\n+nil" },
  }
  for _, w in ipairs(WRONG) do
    local op, f, call, answers = w[1], w[2], w[3], w[4]
    it("fails on a wrong answer of ns:" .. op .. ", naming the call and both answers",
      function()
        passes(ANSWERS)
        local r, path = run_both(ANSWERS, { override = { [op] = f } })
        assert.is_false(r.ok)
        assert.matches("^%-%-both: read after step 12, [^\n]*" .. lit(at(path, ANSWERS, op))
          .. ": " .. lit(call) .. "\n  " .. lit(answers) .. "$", r.err)
        assert.is_nil(r.err:find("stack traceback", 1, true), r.err)
      end)
  end

  it("compares a root view's peer groups by their relation to the tables, not their numbers",
    function()
      -- the model's view of /A in sh2 names /B's group as the master: by
      -- its own numbers the view is the same ("master:1" alone); against
      -- the tables before it, /B's group is the second one
      passes(ANSWERS)
      local r, path = run_both(ANSWERS, { override = { mounts = function(ns, opts)
        local t = ns:mounts(opts)
        if not (opts and opts.root) then return t end
        local other, records = ns:find("/B").master, {}
        for i, m in ipairs(t) do
          local c = {}
          for k, v in pairs(m) do c[k] = v end
          if c.master then c.master = other end
          records[i] = c
        end
        return mtable.new(records)
      end } })
      assert.is_false(r.ok)
      assert.matches("^%-%-both: read after step 12, [^\n]*" .. lit(at(path, ANSWERS, "view"))
        .. ': sh2:mounts%({propagate_from = true, root = "/A"}%)\n  the answers differ %(%- '
        .. "kernel, %+ model%):\n[^\n]*\n[^\n]*\n@@[^\n]*\n%-6 5 0:2 / / rw,relatime "
        .. "master:1\n%+6 5 0:2 / / rw,relatime master:2$", r.err)
    end)

  -- (b) a false blame: code the model cannot see changes a file
  local OPAQUE = [[
local mountns = require "mountns"
mountns.scenario("opaque", function(ns)
  ns:mkdir("/X"); ns:mkdir("/X/d")
  ns:write("/X/f", "old\n")
  ns:run(function()                                          -- run
    local f = assert(io.open("/X/f", "w")); f:write("new\n"); f:close()
    assert(os.remove("/X/d"))
  end)
  assert(ns:read("/X/f") == "new\n")                         -- read
  local sh2 = ns:unshare()
  assert(sh2:read("/X/f") == "new\n")                        -- copy
  ns:mkdir("/Y"); ns:mount("y", "/Y", "tmpfs")
  ns:write("/Y/g", "seen\n")
  assert(ns:read("/Y/g") == "seen\n")                        -- fresh
  assert(not pcall(ns.mkdir, ns, "/X/d/e", { parents = false })) -- step
  ns:mkdir("/Z")
end)
]]

  it("notes a read answered otherwise after a step the model was not shown; --strict fails",
    function()
    local r, path = run_both(OPAQUE)
    assert.is_true(r.ok, r.err)
    assert.are.equal(3, #r.notes, table.concat(r.notes, "\n"))
    assert.matches("^not modelled: ns:run %(1 call, first at [^\n]*" .. lit(at(path, OPAQUE, "run"))
      .. "%)", r.notes[1])
    assert.matches("^not compared: ns:read %(2 calls, first at [^\n]*"
      .. lit(at(path, OPAQUE, "read")) .. "%): answered otherwise by the kernel and the model "
      .. "after ns:run at [^\n]*" .. lit(at(path, OPAQUE, "run")) .. ", a step the model could "
      .. 'not follow %(the kernel\'s "new\\n", the model\'s "old\\n"%)$', r.notes[2])
    -- a step that fails on the kernel only (its directory is gone): the
    -- model lost track there, nothing after it is blamed
    assert.matches("^the model lost track at step %d+, [^\n]*" .. lit(at(path, OPAQUE, "step"))
      .. ': ns1:mkdir%("/X/d/e", {parents = false}%): it differs after ns:run at [^\n]*'
      .. lit(at(path, OPAQUE, "run")) .. ", a step the model could not follow", r.notes[3])
    -- --strict: the step the model cannot follow fails, before its reads
    local s, spath = run_both(OPAQUE, { strict = true })
    assert.is_false(s.ok)
    assert.matches("^%-%-both: step 4, [^\n]*" .. lit(at(spath, OPAQUE, "run"))
      .. ": ns1:run%(fn%)\n  opaque %(%-%-strict: a step the model cannot follow fails%)", s.err)
    assert.are.same({}, s.notes)
  end)

  it("notes a read inside a script's ns:run, whose code the model cannot see", function()
    local text = [[
local mountns = require "mountns"
mountns.scenario("inside", function(ns)
  ns:mkdir("/X")
  ns:write("/X/f", "old\n")
  ns:run(function()
    local f = assert(io.open("/X/f", "w")); f:write("new\n"); f:close()
    assert(ns:read("/X/f") == "new\n")                     -- inside
  end)
  ns:mkdir("/Y")
end)
]]
    local r, path = run_both(text)
    assert.is_true(r.ok, r.err)
    assert.are.equal(2, #r.notes, table.concat(r.notes, "\n"))
    assert.matches("^not compared: ns:read %(1 call, first at [^\n]*" .. lit(at(path, text,
      "inside")) .. "%): answered otherwise by the kernel and the model inside an ns:run, whose "
      .. 'code the model could not follow %(the kernel\'s "new\\n", the model\'s "old\\n"%)$',
      r.notes[1])
    assert.matches("^not modelled: ns:run %(1 call", r.notes[2])
  end)

  it("still compares a read the unseen step cannot reach, after it", function()
    -- /Y is a tmpfs mounted after the ns:run: a wrong answer there fails
    local r, path = run_both(OPAQUE, { override = { read = function(ns, p)
      local text = ns:read(p)
      if p == "/Y/g" then return "wrong\n" end
      return text
    end } })
    assert.is_false(r.ok)
    assert.matches("^%-%-both: read after step %d+, [^\n]*" .. lit(at(path, OPAQUE, "fresh"))
      .. ': ns1:read%("/Y/g"%)\n  the answers differ: the kernel\'s "seen\\n", the model\'s '
      .. '"wrong\\n"$', r.err)
  end)

  helper.root_it("a tool writes through /proc/PID/root as its owner")(
    "an ns:exec that changes a file: a note, and under --strict a failure", function()
      local text = [[
local mountns = require "mountns"
mountns.scenario("exec", function(ns)
  ns:mkdir("/X")
  ns:write("/X/f", "old\n")
  ns:exec { "sh", "-c", "echo new > /proc/$MOUNTNS_PID/root/X/f" } -- exec
  assert(ns:read("/X/f") == "new\n")                                -- read
end)
]]
      local r, path = run_both(text)
      assert.is_true(r.ok, r.err)
      assert.matches("^not compared: ns:read %(1 call, first at [^\n]*" .. lit(at(path, text,
        "read")) .. "%): [^\n]* after ns:exec at [^\n]*" .. lit(at(path, text, "exec")), r.notes[2])
      local s = run_both(text, { strict = true })
      assert.is_false(s.ok)
      assert.matches("^%-%-both: step 3, [^\n]*: ns1:exec%({\"sh\", [^\n]*\n  opaque %(%-%-strict",
        s.err)
    end)

  -- (c) a call made through expect.fails or pcall is mirrored, its
  -- answer compared: the script got it, whatever called
  local CAUGHT = [[
local mountns = require "mountns"
local expect = require "mountns.expect"
mountns.scenario("caught", function(ns)
  ns:mkdir("/A"); ns:mount("a", "/A", "tmpfs")
  ns:write("/A/f", "a\n")
  expect.fails("ENOENT", ns.read, ns, "/A/none")                      -- expect
  local ok, text = pcall(ns.read, ns, "/A/f")                          -- pcall
  assert(ok and text == "a\n")
  local fd = select(2, pcall(ns.open_tree, ns, "/A", { clone = true })) -- fd
  fd:close()
end)
]]

  it("mirrors a read made through expect.fails or pcall, and compares its answer", function()
    local r = run_both(CAUGHT)
    assert.is_true(r.ok, r.err)
    assert.are.same({}, r.notes)
    -- the model reads a file where the kernel found none
    local e, path = run_both(CAUGHT, { override = { read = function() return "x" end } })
    assert.is_false(e.ok)
    assert.matches("^%-%-both: read after step 3, [^\n]*" .. lit(at(path, CAUGHT, "expect"))
      .. " via expect[%w/]*%.lua:%d+: ns1:read%(\"/A/none\"%)\n  the kernel's call failed "
      .. "%(read /A/none: No such file or directory %(ENOENT%)%), the model's succeeded$", e.err)
    -- a wrong answer to a read in pcall
    local p
    p, path = run_both(CAUGHT, { override = { read = function(ns, f)
      if f == "/A/f" then return "b\n" end
      return ns:read(f)
    end } })
    assert.is_false(p.ok)
    assert.matches("^%-%-both: read after step 3, [^\n]*" .. lit(at(path, CAUGHT, "pcall"))
      .. ': ns1:read%("/A/f"%)\n  the answers differ: the kernel\'s "a\\n", the model\'s "b\\n"$',
      p.err)
  end)

  it("found: ns:find with a root view that cannot be read refuses as the kernel's", function()
    -- under --both the model's find crashed (indexing its nil view) where
    -- the kernel's raised the chroot's ENOENT; a read of a root that is a
    -- file, ENOTDIR
    local _, out = helper.same(function(ns, _, try)
      ns:write("/f", "x")
      try(ns.find, ns, "/", { root = "/nope" })
      try(ns.find, ns, "/", { root = "/f" })
      try(ns.mounts, ns, { root = "/nope" })
    end)
    assert.are.equal("ENOENT ENOTDIR ok", out)
    local r = run_both([[
local mountns = require "mountns"
mountns.scenario("refused views", function(ns)
  ns:write("/f", "x")
  assert(not pcall(ns.find, ns, "/", { root = "/nope" }))
  assert(ns:mounts { root = "/f" } == nil)
end)
]], { strict = true })
    assert.is_true(r.ok, r.err)
  end)

  helper.feature_it("open_tree")("compares the mount fd a changing call returned", function()
    -- the model's open_tree clones / where the kernel's cloned /A
    local r, path = run_both(CAUGHT, { override = { open_tree = function(ns, _, opts)
      return ns:open_tree("/", opts)
    end } })
    assert.is_false(r.ok)
    assert.matches("^%-%-both: step 4, [^\n]*" .. lit(at(path, CAUGHT, "fd"))
      .. ': ns1:open_tree%("/A", {clone = true}%)\n  the answers differ: the kernel\'s '
      .. "mountfd %[open_tree clone /A%], the model's mountfd %[open_tree clone /%]$", r.err)
  end)
end)
