-- The Lua modules' house rules (issue 14): a class's methods live in its
-- file, a module works whatever was loaded before it, no module reads
-- another through package.loaded.
local helper = require "helper"

local ROOT = helper.ROOT

local read = helper.read

-- the modules' files, package folders too ("model/world"), without ".lua"
local function modules()
  local list = {}
  for name in helper.sh("cd " .. ROOT .. "/lua/mountns && find . -name '*.lua' | cut -c3- | sort")
      :gmatch("[^\n]+") do
    list[#list + 1] = name:gsub("%.lua$", "")
  end
  return list
end

describe("layers", function()
  it("Namespace methods are in namespace.lua, no module reads package.loaded", function()
    local elsewhere, hidden = {}, {}
    for _, m in ipairs(modules()) do
      local src = read(ROOT .. "/lua/mountns/" .. m .. ".lua")
      if m ~= "namespace" then
        for meth in src:gmatch("\nfunction Namespace[:.]([%w_]+)") do
          elsewhere[#elsewhere + 1] = m .. ".lua: Namespace:" .. meth
        end
      end
      for what in src:gmatch("package%.loaded%s*[%[.]%s*([^%]\n]*)") do
        if what:match("mountns") then hidden[#hidden + 1] = m .. ".lua: " .. what end
      end
    end
    assert.same({}, elsewhere)
    assert.same({}, hidden)
  end)

  it("a scenario's namespace has all its methods with only mountns.scenario loaded", function()
    -- before: ns:watch existed only once mountns.watch was loaded, and
    -- ns:mounts read the mountinfo file unless mountns.mounts was
    local out = helper.sh(helper.lua_vars() .. [[ -e '
      local scenario = require "mountns.scenario"
      local core = require "mountns.core"
      print(scenario.scenario(function(ns)
        ns:mkdir("/X")
        ns:mount("a", "/X", "tmpfs")
        local fast = core.features().statmount_complete
        local m = ns:mounts():find("/X")
        local events = 0
        ns:watch { timeout = 0, fallback = true, run = function()
          ns:mount("b", "/X", "tmpfs") end, callback = function() events = events + 1 end }
        return type(ns.watch) .. " " .. tostring(m.source) .. " "
          .. tostring(not fast or m.unique_id ~= nil) .. " " .. tostring(events > 0)
      end))' 2>&1]])
    assert.equal("function a true true", out)
  end)

  it("two spec files in one busted process, with a helper that requires mountns, both pass",
     function()
    -- busted's insulation unloads what a spec file loaded, not what the
    -- helper did (mountns): a field of mountns read in the first file
    -- (mountns.scenario, loaded then) must not keep that file's copy of
    -- mountns.scenario and mountns.namespace for the second, whose
    -- mountns.expect loads a new one (before: expect.propagates rejected
    -- the scenario's namespaces, "with a scenario namespace")
    local dir = helper.tempdir()
    helper.write(dir, "helper.lua", 'require "mountns"\n')
    local body = [[
      local mountns = require "mountns"
      local expect = require "mountns.expect"
      describe("F", function() it("expect in a scenario", function()
        assert.equal(require("mountns.scenario").scenario, mountns.scenario)
        mountns.scenario(function(ns)
          ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs"); ns:make_shared("/X")
          local u = ns:unshare { propagation = "unchanged" }
          ns:mkdir("/X/a")
          expect.propagates(function() ns:mount("y", "/X/a", "tmpfs") end, { u, "/X/a" })
        end)
      end) end)
    ]]
    helper.write(dir, "a_spec.lua", (body:gsub("F", "a")))
    helper.write(dir, "b_spec.lua", (body:gsub("F", "b")))
    -- lua_cmd's paths, from the tree's root made absolute (busted runs in dir)
    local abs = helper.sh("cd " .. ROOT .. " && pwd")
    local build, interp = helper.lua_cmd():match("LUA_CPATH='[^']-(/build[^']*)' (%S+)$")
    local lpath, cpath = abs .. "/lua/?.lua;" .. abs .. "/lua/?/init.lua;;", abs .. build
    -- (busted --lua runs the interpreter through a shell, unquoted: the
    -- paths go in the environment)
    local out = helper.sh(string.format("cd %s && LUA_PATH='%s' LUA_CPATH='%s' busted --lua=%s "
      .. "-o TAP --helper=helper.lua a_spec.lua b_spec.lua 2>&1; echo \"exit=$?\"",
      dir, lpath, cpath, interp))
    helper.sh("rm -r " .. dir)
    assert.equal("ok 1 - a expect in a scenario\nok 2 - b expect in a scenario\n1..2\nexit=0",
      out)
  end)

  it("spec/parallel (make test) keeps the time of each file a busted ran with others: "
    .. "its own, measured by spec/helper.lua, not a share of the last run's", function()
    -- the last run's times put a and b in one busted (each is short next
    -- to c), a at 0 ms: its share of the group's time stayed 0 for ever,
    -- and a file that grew slow stayed grouped
    local dir = helper.tempdir()
    helper.write(dir, "a_spec.lua", 'it("waits", function() os.execute("sleep 0.3") end)\n')
    helper.write(dir, "b_spec.lua", 'it("passes", function() end)\n')
    helper.write(dir, "c_spec.lua", 'it("passes", function() end)\n')
    helper.write(dir, "out.times", "0 a_spec.lua\n1 b_spec.lua\n100000 c_spec.lua\n1 lint\n")
    local abs = helper.sh("cd " .. ROOT .. " && pwd")
    local build, interp = helper.lua_cmd():match("LUA_CPATH='[^']-(/build[^']*)' (%S+)$")
    local out = helper.sh(string.format("cd %s && LUA_PATH='%s/lua/?.lua;%s/lua/?/init.lua;;' "
      .. "LUA_CPATH='%s%s' BUSTED_CMD='busted --lua=%s --helper=%s/spec/helper.lua' "
      .. "sh %s/spec/parallel 1 out true a_spec.lua b_spec.lua c_spec.lua 2>&1; echo \"exit=$?\"",
      dir, abs, abs, abs, build, interp, abs, abs))
    local jobs, times = helper.read(dir .. "/out/jobs"), helper.read(dir .. "/out.times")
    helper.sh("rm -r " .. dir)
    assert.truthy(out:find("\nexit=0$"), out)
    assert.equal("a_spec.lua b_spec.lua\nc_spec.lua\n", jobs)
    local a = tonumber(times:match("(%d+) a_spec%.lua"))
    assert.truthy(a and a >= 300, times) -- at least its sleep
  end)

  describe("the require graph (spec/tools/layers.lua)", function()
    local layers = dofile(ROOT .. "/spec/tools/layers.lua")

    it("has no circle and no arrow to a higher layer among lua/mountns/*.lua", function()
      assert.same({}, layers.check(layers.graph(ROOT .. "/lua/mountns")))
      -- the script as make and CI run it
      assert.equal("", helper.sh("cd " .. ROOT .. " && " .. helper.LUA .. " spec/tools/layers.lua"))
    end)

    it("doc/architecture.md's Lua table places each module as spec/tools/layers.lua does",
      function()
      local doc = read(ROOT .. "/doc/architecture.md")
      local lua_part = assert(doc:match("\n## Lua layers\n(.*)$"))
      local in_doc, layer = {}, nil
      for row in lua_part:gmatch("\n(|[^\n]*)") do
        local n, mod = row:match("^| (%d+) [^|]*| `([%w_.]+)`")
        if n then layer = tonumber(n) else mod = row:match("^| | `([%w_.]+)`") end
        if mod then in_doc[(mod:gsub("^mountns%.", ""))] = layer end
      end
      local in_script = {}
      for i, names in ipairs(layers.LAYERS) do
        for _, name in ipairs(names) do in_script[name] = i - 1 end
      end
      assert.same(in_script, in_doc)
    end)

    it("finds a circle, a require in a function, an upward arrow and a module without a layer,"
      .. " and holds a deferred arrow (lazy.require) to the same rules", function()
      local dir = helper.sh("mktemp -d")
      local function write(name, text) helper.write(dir, name .. ".lua", text) end
      write("expect", 'local w = require "mountns.watch"\n')
      write("watch", 'local function f()\n  return require("mountns.expect").x end\n'
        .. '-- require "mountns.scenario" (a comment is no arrow)\n')
      write("table", "local s = require 'mountns.scenario'\n")
      -- deferred arrows: up a layer, and closing a circle (format -> scenario
      -- -> format); one down a layer is no problem (diff -> record)
      write("format", 'local lazy = require "mountns.lazy"\n'
        .. 'local s = lazy.require "mountns.scenario"\n')
      write("scenario", 'local lazy = require "mountns.lazy"\n'
        .. 'local f = lazy.require("mountns.format")\n')
      write("diff", 'local lazy = require "mountns.lazy"\n'
        .. 'local r = lazy.require "mountns.record"\n')
      write("newthing", "")
      local problems = layers.check(layers.graph(dir))
      helper.sh("rm -r " .. dir)
      table.sort(problems)
      assert.same({
        "circle: expect -> watch -> expect",
        "circle: format -> scenario -> format",
        "format.lua:2: defers scenario, a higher layer (5 > 2)",
        "newthing.lua: no layer (add it to spec/tools/layers.lua)",
        "table.lua:1: requires scenario, a higher layer (5 > 2)",
        "watch.lua:2: requires expect inside a function (defer it with lazy.require at the top)",
        "watch.lua:2: requires expect, a higher layer (5 > 4)",
      }, problems)
    end)

    it("sees a package folder's modules and their requires (mountns.pkg.x), and a require"
      .. " of a module that does not exist", function()
      local dir = helper.sh("mktemp -d")
      local function write(name, text) helper.write(dir, name, text) end
      -- model (layer 2) is a folder: init requires its parts; a part
      -- reaching up to a higher layer, a circle inside the package, and a
      -- module naming a part that is not there
      write("model/init.lua", 'local w = require "mountns.model.world"\n')
      write("model/world.lua", 'local p = require "mountns.model.propagate"\n')
      write("model/propagate.lua", 'local w = require "mountns.model.world"\n'
        .. 'local s = require "mountns.check"\n')
      write("scenario.lua", 'local m = require "mountns.model"\n'
        .. 'local r = require "mountns.model.rules"\n')
      local graph, names, files = layers.graph(dir)
      local problems = layers.check(graph, names, files)
      helper.sh("rm -r " .. dir)
      table.sort(problems)
      assert.same({ "model", "model.propagate", "model.world", "scenario" }, names)
      assert.same({
        "circle: model.world -> model.propagate -> model.world",
        "model/propagate.lua:2: requires check, a higher layer (5 > 2)",
        "scenario.lua:2: requires mountns.model.rules, which is no module",
      }, problems)
    end)
  end)

  describe("the C layers (spec/tools/layers.lua)", function()
    local layers = dofile(ROOT .. "/spec/tools/layers.lua")

    it("no call to a higher layer, no circle, no .c including another in csrc/", function()
      assert.same({}, layers.ccheck(layers.cgraph(ROOT .. "/csrc")))
    end)

    it("doc/architecture.md's C table places each file and lists its calls as found", function()
      local doc = read(ROOT .. "/doc/architecture.md")
      local c_part = assert(doc:match("\n## C layers[^\n]*\n(.-)\n## Lua layers"))
      local in_doc, calls_doc, layer = {}, {}, nil
      for row in c_part:gmatch("\n(|[^\n]*)") do
        local n, file, rest = row:match("^| (%d+) [^|]*| `([%w_]+)%.c` |(.*)$")
        if not n then file, rest = row:match("^| | `([%w_]+)%.c` |(.*)$") end
        if n then layer = tonumber(n) end
        if file then
          in_doc[file] = layer
          calls_doc[file] = rest:match("|%s*([^|]-)%s*|%s*$")
        end
      end
      local in_script = {}
      for i, names in ipairs(layers.C_LAYERS) do
        for _, name in ipairs(names) do in_script[name] = i end
      end
      assert.same(in_script, in_doc)
      local graph = layers.cgraph(ROOT .. "/csrc")
      local found = {}
      for name, edges in pairs(graph) do
        local to = {}
        for _, e in ipairs(edges) do to[#to + 1] = e.to end
        found[name] = #to == 0 and "—" or table.concat(to, ", ")
      end
      found.core = "every area" -- core.c opens every file: the table says so
      assert.same(found, calls_doc)
    end)

    it("finds a call up a layer, a circle, a file without a layer and a .c include", function()
      local dir = helper.sh("mktemp -d")
      local function write(name, text) helper.write(dir, name, text) end
      write("lmns.h", "int lmns_a(int x);\nint lmns_b(void);\nvoid lmns_ns_x(void);\n"
        .. "#define lmns_c(x) lmns_a((x))\n")
      -- tree (1) calls ns (3) up; args <-> tree through a macro; a name in a
      -- comment or a string is no call
      write("tree.c", '#include "lmns.h"\nint lmns_b(void)\n{\n\tlmns_ns_x();\n'
        .. '\treturn lmns_c(1);\n}\n')
      write("args.c", '#include "lmns.h"\n#include "tree.c"\nint lmns_a(int x)\n{\n'
        .. '\t/* lmns_ns_x() */ return x + lmns_b() + (int)sizeof "lmns_ns_x";\n}\n')
      write("ns.c", '#include "lmns.h"\nvoid lmns_ns_x(void)\n{\n}\n')
      write("extra.c", '#include "lmns.h"\n')
      local graph, names, includes = layers.cgraph(dir)
      local problems = layers.ccheck(graph, names, includes)
      helper.sh("rm -r " .. dir)
      table.sort(problems)
      assert.same({ { to = "tree", via = "lmns_b" } }, graph.args)
      assert.same({
        "args.c: includes tree.c (only lmns.h and uapi.h: a .c includes no other file of csrc/)",
        "circle: args -> tree -> args",
        "extra.c: no layer (add it to spec/tools/layers.lua)",
        "tree.c: calls ns (lmns_ns_x), a higher layer (3 > 1)",
      }, problems)
    end)
  end)

  describe("one record vocabulary (mountns.record)", function()
    local record = require "mountns.record"
    local mountns = require "mountns"

    it("its fields are those of the core's records, mountinfo and statmount alike", function()
      local known = {}
      for _, f in ipairs(record.FIELDS) do known[f] = true end
      for _, f in ipairs(record.UNIQUE) do known[f] = true end
      local r = mountns.isolate(function()
        local core = require "mountns.core"
        assert(core.mount("v", "/mnt", "tmpfs"))
        assert(core.make_shared("/mnt"))
        local out = { mountinfo = assert(core.mountinfo()) }
        if core.features().statmount_complete then
          out.statmount = assert(core.listmount { stat = true, propagate_from = true })
        end
        return out
      end)
      for source, t in pairs(r) do
        assert.truthy(#t > 0)
        for _, m in ipairs(t) do
          for k in pairs(m) do assert.truthy(known[k], source .. " field " .. tostring(k)) end
          for _, k in ipairs { "id", "parent_id", "root", "target", "propagation" } do
            assert.not_nil(m[k], source .. " lacks " .. k)
          end
        end
      end
    end)

    it("the optional fields read as mountinfo writes them, in every output", function()
      local m = { id = 7, parent_id = 1, major = 0, minor = 9, root = "/", target = "/X",
                  options = "rw", fstype = "tmpfs", source = "x", super_options = "rw",
                  shared = 3, master = 2, propagate_from = 1, unbindable = true,
                  propagation = "shared,slave,unbindable" }
      assert.equal("shared:3 master:2 propagate_from:1 unbindable", record.optional(m))
      assert.equal("", record.optional { propagation = "private" })
      assert.equal("shared:3 master:2", record.groups(m))
      local t = mountns.table.new { m }
      assert.matches(" shared:3 master:2 propagate_from:1 unbindable - tmpfs",
        mountns.format(t, "mountinfo"), 1, true)
      assert.truthy(mountns.dot(t):find("#7 shared:3 master:2 propagate_from:1 unbindable", 1,
        true))
      -- the JSON lists the fields in record.FIELDS's order
      local json, order = mountns.format(t, "json"), {}
      for k in json:gmatch('"([%w_]+)":') do order[#order + 1] = k end
      table.remove(order, 1) -- "mounts"
      assert.same(record.FIELDS, order)
    end)

    it("the optional-field text and the identity key are written only in record.lua", function()
      local others = {}
      for _, m in ipairs(modules()) do
        if m ~= "record" then
          local code = read(ROOT .. "/lua/mountns/" .. m .. ".lua"):gsub("%-%-[^\n]*", "")
          for _, lit in ipairs { '"propagate_from:"', '" unbindable"', '"u" .. tostring' } do
            if code:find(lit, 1, true) then others[#others + 1] = m .. ".lua: " .. lit end
          end
        end
      end
      assert.same({}, others)
    end)
  end)

  describe("the public API", function()
    -- the manual: the README and the pages under doc/ it links
    local pages = { read(ROOT .. "/README.md") }
    for name in helper.sh("ls -1 '" .. ROOT .. "/doc'"):gmatch("[^\n]+") do
      if name:match("%.md$") then pages[#pages + 1] = read(ROOT .. "/doc/" .. name) end
    end
    local readme = table.concat(pages, "\n")
    -- the names the manual writes as mountns.NAME, `NAME(` or `NAME`,
    -- gathered in one pass (a pattern search of the whole text a name
    -- took 0.2 s); a name is documented when it is among them
    local mentioned = {}
    for n in readme:gmatch("mountns%.([%w_]+)") do mentioned[n] = true end
    for n in readme:gmatch("`([%w_]+)%f[(`]") do mentioned[n] = true end
    local function documented(name) return mentioned[name] == true end

    it("exports what the manual (README, doc/) documents, no plumbing of the core", function()
      local mountns = require "mountns"
      local core = require "mountns.core"
      local undocumented, plumbing = {}, {}
      for name in pairs(mountns) do
        if not documented(name) then undocumented[#undocumented + 1] = name end
      end
      for name in pairs(core) do
        if not documented(name) then
          plumbing[#plumbing + 1] = name
          assert.is_nil(rawget(mountns, name), "mountns." .. name .. " is plumbing")
        end
      end
      table.sort(undocumented)
      assert.same({}, undocumented)
      -- the issue's examples stay reachable, in the core
      for _, name in ipairs { "fork", "_exit", "pipe", "read_all" } do
        assert.is_function(core[name])
        assert.is_nil(mountns[name])
      end
      assert.truthy(#plumbing >= 4)
    end)
  end)
end)
