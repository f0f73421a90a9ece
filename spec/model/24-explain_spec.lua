-- Explain (issue 13): the step recorder of kernel scenarios, `mountns run
-- --both` (every step mirrored on the model and compared), mountns.explain
-- (on a model namespace and inside a kernel scenario), `mountns show
-- --explain` on a live process, and expect's "why:" line.
local mountns = require "mountns"
local core = require "mountns.core"
local namespace = require "mountns.namespace"
local recipes = require "mountns.recipes"
local helper = require "helper"

local ROOT = helper.ROOT

-- `bin/mountns ARGS` from the tree's root: its output and "exit=N"
local function cli(args)
  return helper.sh("cd " .. ROOT .. " && " .. helper.lua_vars() .. " bin/mountns " .. args
    .. " 2>&1; echo exit=$?")
end

describe("the step recorder", function()
  it("records the article's calls with their namespace, arguments, outcome and line", function()
    local here = debug.getinfo(1, "S").short_src
    local line0 = debug.getinfo(1, "l").currentline
    local steps, sh2_serial = mountns.scenario(function(sh1)
      sh1:label("sh1")                                        -- line0 + 2
      sh1:make_private("/")
      sh1:mkdir("/X")
      sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
      local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
      pcall(sh1.bind, sh1, "/X", "/Z")                        -- ENOENT: /Z is missing
      sh1:mkdir("/Z")
      local opts = { recursive = false }
      sh1:bind("/X", "/Z", opts)
      opts.recursive = true -- the step keeps a copy
      sh2:close()
      return namespace.steps(), sh2.serial
    end)
    local want = {
      { "label", 2, true }, { "make_private", 3, true }, { "mkdir", 4, true },
      { "mount", 5, true }, { "make_shared", 5, true }, { "unshare", 6, true },
      { "bind", 7, false, "ENOENT" }, { "mkdir", 8, true }, { "bind", 10, true },
      { "close", 12, true },
    }
    assert.are.equal(#want, #steps)
    for i, w in ipairs(want) do
      local s = steps[i]
      assert.are.equal(w[1], s.op, "step " .. i)
      assert.are.equal(here .. ":" .. (line0 + w[2]), s.where, "step " .. i)
      assert.are.equal(w[3], s.ok, "step " .. i)
      assert.are.equal(w[4], s.errno, "step " .. i)
      assert.are.equal(s.op == "close" and sh2_serial or 1, s.ns, "step " .. i)
    end
    assert.are.equal("ns1", steps.first_label)
    assert.are.same({ n = 3, "sda3", "/X", "tmpfs" }, steps[4].args)
    assert.are.equal(sh2_serial, steps[6].new)
    assert.are.equal("sh2", steps[6].label)
    assert.are.equal("unchanged", steps[6].args[1].propagation)
    assert.are.same({ n = 3, "/X", "/Z", { recursive = false } }, steps[9].args)
    assert.matches("bind /X /Z: No such file or directory %(ENOENT%)", steps[7].error)
  end)

  it("names the user's line and the mountns module a call came through (a recipe)", function()
    local line = debug.getinfo(1, "l").currentline + 2
    local steps = mountns.scenario(function(host)
      recipes.rootfs(host, { propagation = "rslave" })
      return namespace.steps()
    end)
    local pivot
    for _, s in ipairs(steps) do if s.op == "pivot_root" then pivot = s end end
    assert.is_truthy(pivot)
    assert.are.equal(debug.getinfo(1, "S").short_src .. ":" .. line, pivot.where)
    assert.matches("^recipes%.lua:%d+$", pivot.via)
    assert.are.equal(2, pivot.ns)
  end)
end)

describe("mountns show --explain", function()
  it("says, from the current state, which namespaces hold peers and slaves of a mount", function()
    local res = mountns.isolate(function()
      local base = helper.sandbox()
      assert(mountns.mkdir(base .. "/x")); assert(mountns.mount("x", base .. "/x", "tmpfs"))
      assert(mountns.make_shared(base .. "/x"))
      assert(mountns.mkdir(base .. "/y")); assert(mountns.bind(base .. "/x", base .. "/y"))
      -- a child in a copy of this namespace: /y there becomes a slave
      local r, w = assert(core.pipe())
      local r2, w2 = assert(core.pipe())
      local pid = assert(core.fork())
      if pid == 0 then
        core.close_fd(w); core.close_fd(r2)
        local ok = core.unshare { mount = true, propagation = "unchanged" }
          and core.make_slave(base .. "/y")
        core.write_fd(w2, ok and "k" or "e")
        core.read_all(r)
        core._exit(0)
      end
      core.close_fd(r); core.close_fd(w2)
      assert(core.read_exact(r2, 1) == "k")
      core.close_fd(r2)
      local function show(path, p)
        return helper.sh(helper.lua_vars() .. " " .. ROOT .. "/bin/mountns show --explain "
          .. path .. " " .. (p or ""))
      end
      local out = {
        x = show(base .. "/x", pid), y = show(base .. "/y", pid), sub = show(base .. "/y/a", pid),
        child_ns = assert(core.namespace(pid)):id(), my_ns = assert(core.namespace()):id(),
        mine = mountns.mountinfo():find(base .. "/x"), theirs = mountns.mountinfo(pid),
      }
      core.close_fd(w)
      core.waitpid(pid)
      out.base = base
      return out
    end)
    local base, group = res.base, res.mine.shared
    local child_y = res.theirs:find(base .. "/y")
    assert.are.equal(group, child_y.master) -- the kernel made it so
    -- /x in the child: shared, its peers are the parent's /x and /y (another
    -- namespace), its slave is the child's own /y
    local first = res.x:match("^[^\n]*"):gsub("PID %d+", "PID N")
    assert.are.equal(string.format("%s/x in PID N (mnt:[%s]) is shared in peer group %d "
      .. "with 2 peers in 1 other namespace and 1 slave in this namespace: mounts and "
      .. "unmounts under it reach its peers and slaves, and those under its peers reach it "
      .. "(from the current state, not history).", base, res.child_ns, group), first)
    assert.matches("No history exists for a live process", res.x, 1, true)
    assert.matches("mnt:[" .. res.my_ns .. "] (PID", res.x, 1, true)
    assert.matches(base .. "/x (mount " .. res.mine.id .. ",", res.x, 1, true)
    assert.matches("slaves of peer group " .. group, res.x, 1, true)
    assert.matches("    this namespace: " .. base .. "/y (mount " .. child_y.id .. ",", res.x,
      1, true)
    -- /y in the child: a slave of that group; nothing of its own goes back
    assert.matches("is a slave of peer group " .. group .. ": mounts and unmounts under its "
      .. "master's group reach it; its own go nowhere", res.y, 1, true)
    assert.matches("its master, peer group " .. group, res.y, 1, true)
    -- a path below a mount point: the mount it lies on
    assert.matches("is not a mount point; it lies on " .. base .. "/y, which is a slave",
      res.sub, 1, true)
  end)

  it("refuses a relative path and the other show options", function()
    assert.matches("show: %-%-explain needs an absolute path, got 'x'.*exit=2",
      cli("show --explain x"))
    assert.matches("show: %-%-explain needs an absolute path, got nothing.*exit=2",
      cli("show --explain"))
    assert.matches("show: %-%-json does not apply to %-%-explain.*exit=2",
      cli("show --explain / --json"))
  end)
end)

-- A script file for `mountns run`, written under /tmp; removed by the caller.
-- a script file for `mountns run` (spec/helper.lua); removed by the caller
local script = helper.script_file

describe("mountns run --both #model", function()
  -- the model follows the running kernel: pending where it has no rules for it
  local it = helper.model_it
  it("passes on every example: the model agrees with the kernel after every step", function()
    local out = cli("run --both examples/*.lua")
    local passed = out:match("\n(%d+) passed, 0 failed\nexit=0$")
    assert.is_truthy(passed, out)
    -- the same count as a plain run: no scenario skipped
    local plain = cli("run examples/*.lua")
    assert.are.equal(passed, plain:match("\n(%d+) passed, 0 failed\nexit=0$"))
    assert.is_nil(out:find("FAIL", 1, true))
  end)

  it("fails at the first difference, naming the line, the call and the diff", function()
    -- a wrong rule plugged into the mirror: make-private acts as make-shared
    local scenario = require "mountns.scenario"
    local reported = {}
    assert(scenario.run_file(ROOT .. "/examples/article.lua", {
      both = { override = { make_private = function(ns, path, opts)
        return ns:make_shared(path, opts)
      end } },
      report = function(name, ok, err) reported[#reported + 1] = { name, ok, err } end }))
    assert.are.equal(1, #reported)
    assert.is_false(reported[1][2])
    local err = tostring(reported[1][3]) -- under busted: its failure object
    assert.matches('^%-%-both: step 2, [^\n]*examples/article%.lua:12: sh1:make_private%("/"%)\n',
      err)
    assert.matches("the tables differ after it (- kernel, + model):", err, 1, true)
    assert.matches("\n%-1 2 0:1 / / rw,relatime\n%+1 2 0:1 / / rw,relatime shared:1$", err)
    -- a failure, as a failed assertion: no traceback of mountns's own frames
    assert.is_nil(tostring(err):find("stack traceback", 1, true), err)
  end)

  it("fails when the outcomes differ, even when the scenario caught the error", function()
    local path = script([[
local mountns = require "mountns"
mountns.scenario("caught", function(ns)
  pcall(ns.bind, ns, "/nowhere", "/also-nowhere")
end)
]])
    local scenario = require "mountns.scenario"
    local reported = {}
    assert(scenario.run_file(path, {
      both = { override = { bind = function() return true end } },
      report = function(name, ok, err) reported[#reported + 1] = { name, ok, err } end }))
    os.remove(path)
    assert.is_false(reported[1][2])
    assert.matches('step 1, [^\n]*:3: ns1:bind%("/nowhere", "/also%-nowhere"%)\n  the kernel\'s '
      .. "call failed %(bind /nowhere /also%-nowhere: No such file or directory %(ENOENT%)%), "
      .. "the model's succeeded", reported[1][3])
  end)

  it("says what it could not mirror: a note per kind, never a silent pass", function()
    local path = script([[
local mountns = require "mountns"
local core = require "mountns.core"
mountns.scenario("exec and run", function(ns)
  ns:mkdir("/X")
  ns:exec { "true" }
  ns:exec { "true" }
  ns:mount("x", "/X", "tmpfs")
  ns:run(function() assert(core.mount("y", "/X", "tmpfs")) end) -- unseen by the model
  ns:mkdir("/Y")
end)
]])
    local out = cli("run --both " .. path)
    local tap = cli("run --both --tap " .. path)
    os.remove(path)
    local name = path:match("[^/]*$")
    assert.matches("ok   exec and run %(%d+ ms%)\n    note: not modelled: ns:exec %(2 calls, "
      .. "first at [^\n]*" .. name:gsub("%p", "%%%0") .. ":5%): a host tool run on the "
      .. "namespace: what it does is not in the step; the tables were compared after it\n"
      .. "    note: not modelled: ns:run %(1 call, first at [^\n]*:8%)[^\n]*\n"
      .. "    note: the model lost track at step 5, [^\n]*:8: ns1:run%(fn%) %(not modelled%): "
      .. "the tables differ from there on, so the steps after it were not compared\n", out)
    assert.matches("exit=0$", out)
    assert.matches("\n# note: not modelled: ns:exec %(2 calls", tap)
  end)

  it("--strict: a step the model cannot follow fails the scenario, not a note", function()
    -- ns:run: code the model cannot see mounts in the scenario's namespace
    -- (an ns:exec tool cannot: it has no capability)
    local path = script([[
local mountns = require "mountns"
local core = require "mountns.core"
mountns.scenario("run mounts", function(ns)
  ns:mkdir("/X")
  ns:run(function() assert(core.mount("y", "/X", "tmpfs")) end)
  assert(ns:find("/X").fstype == "tmpfs", "the function's mount is in the namespace")
  ns:mkdir("/Y")
end)
]])
    local loose = cli("run --both " .. path)
    local strict = cli("run --both --strict " .. path)
    local alone = cli("run --strict " .. path)
    assert.matches("^ok   run mounts %(%d+ ms%)\n    note: not modelled: ns:run %(1 call", loose)
    assert.matches("\n    note: the model lost track at step 2, [^\n]*:5: ns1:run%(", loose)
    assert.matches("1 passed, 0 failed\nexit=0$", loose)
    assert.matches("^FAIL run mounts %(%d+ ms%)\n    %-%-both: step 2, [^\n]*:5: ns1:run%(fn%)"
      .. "\n      opaque %(%-%-strict: a step the model cannot "
      .. "follow fails%): a function run in the namespace", strict)
    assert.is_nil(strict:find("note:", 1, true), strict)
    assert.is_nil(strict:find("stack traceback", 1, true), strict)
    local tap = cli("run --both --strict --tap " .. path)
    assert.matches("\nnot ok 1 %- run mounts\n# %-%-both: step 2,", tap)
    assert.is_nil(tap:find("stack traceback", 1, true), tap)
    assert.matches("0 passed, 1 failed\nexit=1$", strict)
    assert.matches("run: %-%-strict goes with %-%-both\nexit=2$", alone)
    os.remove(path)
  end)

  it("records an ns:run whoever calls it: the model is never blamed for it", function()
    -- ns.run handed to expect.fails is called from mountns's own code: it
    -- was dropped as one of mountns's reads, and the next step failed
    -- "the tables differ" against the model, which was never shown the mount
    local path = script([[
local mountns = require "mountns"
local expect = require "mountns.expect"
local core = require "mountns.core"
mountns.scenario("run through expect", function(ns)
  ns:mkdir("/X")
  expect.fails("EBUSY", ns.run, ns, function()
    assert(core.mount("t", "/X", "tmpfs"))
    error("and then it fails (EBUSY)")
  end)
  ns:mkdir("/Y")
end)
]])
    local loose = cli("run --both " .. path)
    local strict = cli("run --both --strict " .. path)
    os.remove(path)
    assert.is_nil(loose:find("tables differ after it", 1, true), loose)
    assert.matches("^ok   run through expect %(%d+ ms%)\n    note: not modelled: ns:run %(1 "
      .. "call, first at [^\n]*:6 via expect[%w/]*%.lua:%d+%)", loose)
    assert.matches("\n    note: the model lost track at step 2, [^\n]*:6 via "
      .. "expect[%w/]*%.lua:%d+: "
      .. "ns1:run%(fn%)", loose)
    assert.matches("exit=0$", loose)
    assert.matches("^FAIL run through expect %(%d+ ms%)\n    %-%-both: step 2, [^\n]*:6 via "
      .. "expect[%w/]*%.lua:%d+: ns1:run%(fn%)\n      opaque %(%-%-strict", strict)
    assert.matches("exit=1$", strict)
  end)
end)

describe("mountns.explain #model", function()
  -- the model follows the running kernel: pending where it has no rules for it
  local it = helper.model_it
  local model = require "mountns.model"

  -- the seed article, with a third namespace, a slave copy of sh1
  local function article(sh1)
    sh1:label("sh1")
    sh1:make_private("/")
    sh1:mkdir("/X"); sh1:mkdir("/Y")
    sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
    sh1:mount("sda5", "/Y", "tmpfs"); sh1:make_shared("/Y")
    local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
    sh1:mkdir("/Z")
    sh1:bind("/X", "/Z")
    return sh2
  end

  -- the text of line n of this spec file
  local function spec_line(n)
    local i = 0
    for l in io.lines(debug.getinfo(1, "S").source:sub(2)) do
      i = i + 1
      if i == n then return l end
    end
  end

  it("answers the article's question in one sentence, in a kernel scenario", function()
    local text, present = mountns.scenario(function(sh1)
      local sh2 = article(sh1)
      assert(not sh2:find("/Z")) -- the kernel's fact the sentence explains
      return mountns.explain(sh2, "/Z"), mountns.explain(sh1, "/Z")
    end)
    local lines = {}
    for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal("/Z was bound in sh1 under /, which is private in sh1: no propagation "
      .. "to sh2.", lines[1])
    -- the chain: the call that made / private, the bind, the rule that stopped it
    local here = debug.getinfo(1, "S").short_src:gsub("%p", "%%%0")
    local n = tonumber(lines[2]:match("^  #%d+ sh1: make%-private /  %[sh1:make_private%(\"/\"%), "
      .. here .. ":(%d+)%]$"))
    assert.matches('sh1:make_private("/")', spec_line(n), 1, true)
    n = tonumber(lines[3]:match("^  #%d+ sh1: bind /X /Z  %[sh1:bind%(\"/X\", \"/Z\"%), "
      .. here .. ":(%d+)%]$"))
    assert.matches('sh1:bind("/X", "/Z")', spec_line(n), 1, true)
    assert.matches("^  #%d+   blocked / in sh1: / is private in sh1: no propagation$", lines[4])
    assert.matches('^/Z in sh1 was bound there by sh1:bind%("/X", "/Z"%) %(' .. here .. ":" .. n
      .. "%)%.\n", present)
  end)

  it("gives the same answer on the model (from its world's history)", function()
    local text = model.scenario(function(sh1)
      return mountns.explain(article(sh1), "/Z")
    end)
    assert.are.equal("/Z was bound in sh1 under /, which is private in sh1: no propagation "
      .. "to sh2.", text:match("^[^\n]*"))
  end)

  it("explains a slave: what arrived through the master, what does not go back", function()
    local r = mountns.scenario(function(sh1)
      sh1:label("sh1")
      sh1:mkdir("/X")
      sh1:mount("x", "/X", "tmpfs")
      sh1:make_shared("/X")
      local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
      sh2:make_slave("/X")
      sh1:mkdir("/X/down"); sh1:mount("down", "/X/down", "tmpfs")
      sh2:mkdir("/X/up"); sh2:mount("up", "/X/up", "tmpfs")
      return { up = mountns.explain(sh1, "/X/up"), down = mountns.explain(sh2, "/X/down"),
               group = sh1:find("/X").shared, master = sh2:find("/X").master,
               up_there = sh1:find("/X/up") ~= nil, down_there = sh2:find("/X/down") ~= nil }
    end)
    assert.is_false(r.up_there); assert.is_true(r.down_there) -- the kernel's facts
    assert.are.equal(r.group, r.master)
    assert.are.equal("/X/up was mounted in sh2 under /X, which is a slave, not shared, in sh2: "
      .. "a slave receives propagation but does not send it.", r.up:match("^[^\n]*"))
    -- the kernel's group number, not the model's
    assert.matches('^/X/down in sh2 is a copy of sh1:mount%("down", "/X/down", "tmpfs"%) '
      .. "%([^)]*%), propagated from sh1 through master " .. r.group .. " %(", r.down)
  end)

  it("says where copies went when they did not come here, and why", function()
    local r = mountns.scenario(function(sh1)
      sh1:label("sh1")
      sh1:make_private("/")
      sh1:mkdir("/X"); sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
      local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
      local sh3 = sh1:unshare { label = "sh3" } -- private: the copy of /X too
      sh1:mkdir("/Z"); sh1:bind("/X", "/Z")
      sh1:mkdir("/Z/a"); sh1:mount("a", "/Z/a", "tmpfs")
      return { text = mountns.explain(sh3, "/X/a"), here = sh3:find("/X/a") ~= nil,
               there = sh2:find("/X/a") ~= nil and sh1:find("/X/a") ~= nil,
               x = sh3:find("/X").propagation }
    end)
    assert.is_false(r.here); assert.is_true(r.there); assert.are.equal("private", r.x)
    assert.matches('^/X/a is not in sh3: sh1:mount%("a", "/Z/a", "tmpfs"%) %([^)]*%) put copies '
      .. "in sh2, sh1, but none in sh3: /X in sh3, where it would be, is private: nothing "
      .. "propagates to it%.\n", r.text)
  end)

  it("follows a move (quiz A) and an rbind that skips an unbindable mount", function()
    local r = mountns.scenario(function(ns)
      ns:mkdir("/mnt/1"); ns:mkdir("/tmp")
      ns:bind("/mnt", "/mnt")
      ns:make_shared("/mnt")
      ns:bind("/mnt", "/tmp")
      ns:move("/tmp", "/mnt/1")
      ns:mkdir("/tree2"); ns:mkdir("/tree")
      ns:mount("tree", "/tree", "tmpfs")
      ns:mkdir("/tree/sub")
      ns:mount("sub", "/tree/sub", "tmpfs")
      ns:make_unbindable("/tree/sub")
      ns:bind("/tree", "/tree2", { recursive = true })
      return { copy = mountns.explain(ns, "/mnt/1/1"), gone = mountns.explain(ns, "/tmp"),
               pruned = mountns.explain(ns, "/tree2/sub"),
               facts = { ns:find("/mnt/1/1") ~= nil, ns:find("/tmp") == nil,
                         ns:find("/tree2/sub") == nil, ns:find("/mnt/1/1").shared ==
                         ns:find("/mnt").shared } }
    end)
    assert.are.same({ true, true, true, true }, r.facts)
    assert.matches('^/mnt/1/1 in ns1 is a copy of ns1:move%("/tmp", "/mnt/1"%) %([^)]*%), '
      .. "propagated from ns1 through peer group %d+, made at /tmp/1 %(now /mnt/1/1%)", r.copy)
    assert.matches('^/tmp is not in ns1: ns1:move%("/tmp", "/mnt/1"%) %([^)]*%) moved it to '
      .. "/mnt/1%.\n", r.gone)
    assert.matches('^/tree2/sub is not in ns1: ns1:bind%("/tree", "/tree2", {recursive = '
      .. 'true}%) %([^)]*%) copied the mounts under /tree but skipped /tree/sub, which is '
      .. "unbindable%.\n", r.pruned)
  end)

  it("names a path with a space (the model's call events carry their paths)", function()
    local text = model.scenario(function(sh1)
      local sh2 = article(sh1)
      sh1:mkdir("/a b"); sh1:bind("/X", "/a b")
      return mountns.explain(sh2, "/a b") .. mountns.explain(sh1, "/a b")
    end)
    assert.matches("^/a b was bound in sh1 under /, which is private in sh1: no propagation to "
      .. "sh2%.\n.*\n/a b in sh1 was bound there by bind /X /a b in sh1%.\n", text)
  end)

  it("refuses what is neither a scenario nor a model namespace", function()
    assert.has_error(function() mountns.explain({}, "/X") end,
      "bad argument #1 to 'explain' (a scenario or model namespace expected, got table)")
  end)
end)

describe("expect's why line", function()
  local expect = require "mountns.expect"
  local explain = require "mountns.explain"

  it("follows the headline of a failed propagation check", function()
    local msgs = mountns.scenario(function(sh1)
      sh1:label("sh1")
      sh1:make_private("/")
      sh1:mkdir("/X"); sh1:mount("sda3", "/X", "tmpfs"); sh1:make_shared("/X")
      local sh2 = sh1:unshare { propagation = "unchanged", label = "sh2" }
      sh1:mkdir("/Z"); sh1:bind("/X", "/Z")
      local out = {}
      out[1] = select(2, pcall(expect.mounted, sh2, "/Z"))
      out[2] = select(2, pcall(expect.peers, { sh1, "/Z" }, { sh2, "/Z" }))
      out[4] = select(2, pcall(expect.propagates, function()
        sh1:mkdir("/Z/a"); sh1:mount("a", "/Z/a", "tmpfs")
      end, { sh2, "/Z/a" }))
      -- explain failing must not hide the failure
      explain.why = function() error("explain broke") end
      out[3] = select(2, pcall(expect.mounted, sh2, "/Z"))
      return out
    end)
    local why = "\n  why: /Z was bound in sh1 under /, which is private in sh1: no propagation "
      .. "to sh2.\n"
    assert.matches("^expected a mount at /Z in sh2 mnt:%[%d+%]\n", msgs[1])
    assert.matches(why, msgs[1], 1, true)
    assert.matches("^expected one peer group: ", msgs[2])
    assert.matches(why, msgs[2], 1, true)
    assert.matches("^expected a mount at /Z in sh2 mnt:%[%d+%]\n  sh2 mnt:", msgs[3])
    assert.is_nil(msgs[3]:find("why:", 1, true))
    -- the missing event's mount: the copy went to /X/a, not to /Z/a
    assert.matches("^expected exactly these mount events:\n  why: /Z/a was mounted in sh1 and "
      .. "propagated to [^\n]*sh2 at /X/a[^\n]*, but not to sh2: / in sh2, where it would be, "
      .. "is private: nothing propagates to it%.\n", msgs[4])
  end)
end)

describe("the options of a replay, a mirror and run's both", function()
  it("are checked: unknown keys and wrong types raise at the caller's line", function()
    local model = require "mountns.model"
    local mirror = require "mountns.mirror"
    local runner = require "mountns.runner"
    local scenario = require "mountns.scenario"
    local here = "^spec/model/24%-explain_spec%.lua:%d+: "
    local cases = {
      { function() model.replay({}, { lockd_root = true }) end,
        "bad argument #2 to 'model.replay' (unknown option 'lockd_root')" },
      { function() model.replay({}, "x") end,
        "bad argument #2 to 'model.replay' (options table expected, got string)" },
      { function() model.replay(nil) end,
        "bad argument #1 to 'model.replay' (table expected, got nil)" },
      { function() model.replay({}, { locked_root = "yes" }) end,
        "bad argument #2 to 'model.replay' (option 'locked_root' must be a boolean, got string)" },
      { function() model.replay({}, { override = { bind = 5 } }) end,
        "bad argument #2 to 'model.replay' (option 'override': function expected for 'bind', "
        .. "got number)" },
      { function() model.replayer { label = 5 } end,
        "bad argument #1 to 'model.replayer' (option 'label' must be a string, got number)" },
      { function() mirror.new("ns1", { strcit = true }) end,
        "bad argument #2 to 'mirror.new' (unknown option 'strcit')" },
      { function() mirror.new("ns1", { strict = "yes" }) end,
        "bad argument #2 to 'mirror.new' (option 'strict' must be a boolean, got string)" },
      { function() mirror.new(5) end,
        "bad argument #1 to 'mirror.new' (string expected, got number)" },
      { function()
          runner.run({ ROOT .. "/examples/article.lua" }, { both = { strcit = true } })
        end,
        "bad argument #2 to 'run' (option 'both': unknown option 'strcit')" },
      { function() runner.run({ ROOT .. "/examples/article.lua" }, { both = "yes" }) end,
        "bad argument #2 to 'run' (option 'both': true or a table expected, got string)" },
      { function()
          scenario.run_file(ROOT .. "/examples/article.lua",
            { both = { strict = 1 }, report = function() end })
        end,
        "bad argument #2 to 'run_file' (option 'both': option 'strict' must be a boolean, "
        .. "got number)" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(c[1])
      assert.is_false(ok)
      assert.matches(here, err)
      assert.equal(c[2], (err:gsub(here, "")))
    end
    -- the good ones pass
    assert.is_table(model.replay({}, { locked_root = false, override = {} }))
    assert.is_table(mirror.new(nil, { strict = true, locked_root = true }))
  end)
end)
