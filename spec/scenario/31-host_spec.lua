-- What a scenario leaves on the host: no process (what its tools fork
-- included, also when it is killed at its timeout), no file its tools
-- write, no unmount that the recipes' pivot propagates (issue 23).
local mountns = require "mountns"
local core = require "mountns.core"
local helper = require "helper"

local scenario = mountns.scenario

-- The PIDs of the processes whose command line holds `mark` (a unique
-- sleep length), from /proc.
local function processes_with(mark)
  local out = {}
  local p = io.popen("grep -lsF -- '" .. mark .. "' /proc/[0-9]*/cmdline")
  for line in p:lines() do
    local pid = tonumber(line:match("^/proc/(%d+)/cmdline$"))
    -- not the grep itself (its argument holds the mark)
    local f = pid and io.open("/proc/" .. pid .. "/comm")
    local comm = f and f:read("*l")
    if f then f:close() end
    if comm == "sleep" then out[#out + 1] = pid end
  end
  p:close()
  return out
end

-- The IDs of the mount namespaces that lsns lists (those a process is in).
local function mount_namespaces()
  local ids = {}
  local p = io.popen("lsns -n -t mnt -o NS 2>/dev/null")
  for line in p:lines() do ids[tonumber(line)] = true end
  p:close()
  return ids
end

-- Poll (up to 20 s) until check() is true; its last answer.
local function eventually(check)
  for _ = 1, 400 do
    if check() then return true end
    helper.sh("sleep 0.05")
  end
  return check()
end

-- A sleep no other process runs: its length is the mark.
local function unique_sleep()
  return string.format("%d.%d", 1000 + core.getpid() % 1000, math.random(100000, 999999))
end

describe("processes started in a scenario", function()
  it("a tool's background child ends with the tool, the scenario's namespace with it",
    function()
    local mark = unique_sleep()
    local r = scenario(function(ns)
      -- alive while the tool runs: what the checks below look for
      local during = ns:exec { "sh", "-c", "sleep " .. mark
        .. " </dev/null >/dev/null 2>&1 & kill -0 $! && echo alive $!" }.stdout
      local pid = tonumber(during:match("alive (%d+)"))
      local after = ns:exec { "sh", "-c",
        "kill -0 " .. tostring(pid) .. " 2>/dev/null || echo gone" }
      return { during = during, pid = pid, after = after.stdout, ns = ns:id() }
    end)
    assert.are.equal("alive " .. r.pid .. "\n", r.during)
    assert.are.equal("gone\n", r.after)
    assert.is_true(eventually(function() return #processes_with(mark) == 0 end),
      "left behind: " .. table.concat(processes_with(mark), " "))
    assert.is_true(eventually(function() return not mount_namespaces()[r.ns] end))
  end)

  it("a scenario killed at its timeout takes its whole tree with it", function()
    local mark = unique_sleep()
    local r, w = assert(core.pipe())
    local ok, err = pcall(scenario, function(ns)
      core.close_fd(r)
      core.write_fd(w, tostring(ns:id()))
      core.close_fd(w)
      -- the shell waits for the sleep: the scenario is killed meanwhile
      ns:exec { "sh", "-c", "sleep " .. mark .. "; true" }
    end, { timeout = 1 })
    core.close_fd(w)
    local id = tonumber(core.read_all(r))
    core.close_fd(r)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("ran past its timeout", 1, true), err)
    assert.is_number(id)
    assert.is_true(eventually(function() return #processes_with(mark) == 0 end),
      "left behind: " .. table.concat(processes_with(mark), " "))
    assert.is_true(eventually(function() return not mount_namespaces()[id] end))
  end)

  it("a tree that keeps forking while it is killed leaves nothing", function()
    -- the shell forks a sleep every millisecond or so: the kill comes
    -- while it forks (each process is stopped before its children are
    -- read, so none is forked behind the walk)
    local mark = unique_sleep()
    local ok, err = pcall(scenario, function(ns)
      ns:exec { "sh", "-c", "while :; do sleep " .. mark
        .. " </dev/null >/dev/null 2>&1 & sleep 0.001; done" }
    end, { timeout = 1 })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("ran past its timeout", 1, true), err)
    assert.is_true(eventually(function() return #processes_with(mark) == 0 end),
      "left behind: " .. #processes_with(mark))
  end)

  it("the checks see a process and a namespace that are there", function()
    -- the polarity of the checks above: this test process's own
    local mark = unique_sleep()
    local p = io.popen("sleep " .. mark .. " </dev/null >/dev/null 2>&1 & echo $!")
    local pid = tonumber(p:read("*l"))
    p:close()
    -- (until it has exec'd sleep, the shell's child is a shell)
    assert.is_true(eventually(function() return processes_with(mark)[1] == pid end))
    local me = assert(core.namespace())
    assert.is_true(mount_namespaces()[me:id()])
    me:close()
    core.kill(pid, "KILL")
    assert.is_true(eventually(function() return #processes_with(mark) == 0 end))
  end)
end)

describe("recipes.rootfs and the host's mounts", function()
  local recipes = require "mountns.recipes"
  local model = require "mountns.model"
  local MODES = { "rshared", "shared", "private", "rslave", "rprivate", "slave" }

  -- The scenario's host namespace has /data with /data/sub under it (a
  -- host mount under a shared mount the container copies); what is left
  -- of them in the host after the container started, and the container's
  -- own mounts. Run by `run` (mountns.scenario or model.scenario).
  local function after_rootfs(run, mode)
    return run(function(host)
      host:mkdir("/data"); host:mount("d", "/data", "tmpfs")
      host:mkdir("/data/sub"); host:mount("s", "/data/sub", "tmpfs")
      local c = recipes.rootfs(host, { propagation = mode })
      local t = {}
      for _, m in ipairs(host:mounts()) do t[#t + 1] = m.target end
      local ct = {}
      for _, m in ipairs(c.container:mounts()) do ct[#ct + 1] = m.target end
      return table.concat(t, " ") .. " | " .. table.concat(ct, " ")
    end)
  end

  it("the container's start unmounts nothing in the host's namespace, in every mode", function()
    for _, mode in ipairs(MODES) do
      assert.are.equal("/ /data /data/sub /rootfs/vol | / /vol", after_rootfs(scenario, mode), mode)
    end
  end)

  helper.model_it("the model agrees, mode by mode", function()
    for _, mode in ipairs(MODES) do
      assert.are.equal(after_rootfs(scenario, mode), after_rootfs(model.scenario, mode), mode)
    end
  end)

  -- ns:pivot_root alone: its detach propagates as umount -l does, unless
  -- the old root is made rslave or rprivate first (old_root)
  local function pivot(run, opts)
    return run(function(host)
      host:make_shared("/", { recursive = true })
      host:mkdir("/data"); host:mount("d", "/data", "tmpfs")
      host:mkdir("/data/sub"); host:mount("s", "/data/sub", "tmpfs")
      host:mkdir("/new"); host:mount("n", "/new", "tmpfs")
      local ctr = host:unshare { propagation = "unchanged" }
      ctr:make_private("/new"); ctr:make_private("/")
      ctr:pivot_root("/new", opts)
      return host:find("/data/sub") ~= nil, #ctr:mounts()
    end)
  end

  it("ns:pivot_root's detach reaches the peers, unless old_root says otherwise", function()
    assert.are.same({ false, 1 }, { pivot(scenario) })
    assert.are.same({ true, 1 }, { pivot(scenario, { old_root = "rslave" }) })
    assert.are.same({ true, 1 }, { pivot(scenario, { old_root = "rprivate" }) })
  end)

  helper.model_it("the model's ns:pivot_root does the same", function()
    assert.are.same({ false, 1 }, { pivot(model.scenario) })
    assert.are.same({ true, 1 }, { pivot(model.scenario, { old_root = "rslave" }) })
    assert.are.same({ true, 1 }, { pivot(model.scenario, { old_root = "rprivate" }) })
  end)

  it("old_root takes rslave or rprivate only, on both backends", function()
    for _, run in ipairs { scenario, model.scenario } do
      local err = run(function(host)
        host:mkdir("/new"); host:mount("n", "/new", "tmpfs")
        return select(2, pcall(host.pivot_root, host, "/new", { old_root = "slave" }))
      end)
      assert.truthy(tostring(err):find("bad argument #2 to 'ns:pivot_root' (option 'old_root': "
        .. "\"rslave\" or \"rprivate\" expected, got 'slave')", 1, true), err)
    end
  end)
end)

describe("ns:exec tools and the host", function()
  local namespace = require "mountns.namespace"
  -- this tree's absolute path (a tool's cwd is the host's /)
  local p = io.popen("cd " .. helper.ROOT .. " && pwd")
  local TREE = p:read("*l")
  p:close()
  local host_before
  setup(function() host_before = helper.host_mountinfo() end)
  teardown(function() assert.are.equal(host_before, helper.host_mountinfo()) end)

  it("see the host's files read-only: they create, change and remove nothing there", function()
    local dir = TREE .. "/build/spec31-" .. core.getpid()
    helper.write(dir, "kept", "old")
    local r = scenario(function(ns)
      local function sh(cmd)
        return ns:exec { "sh", "-c", "{ " .. cmd .. "; } 2>&1; echo status $?" }
      end
      return { touch = sh("touch " .. dir .. "/new").stdout,
               change = sh("echo new > " .. dir .. "/kept").stdout,
               remove = sh("rm -f " .. dir .. "/kept").stdout,
               mkdir = sh("mkdir " .. dir .. "/d").stdout,
               -- what the tool can read: the same file
               read = ns:exec { "cat", dir .. "/kept" }.stdout }
    end)
    local after = {}
    for name in io.popen("ls " .. dir):lines() do after[#after + 1] = name end
    local kept = helper.read(dir .. "/kept")
    os.remove(dir .. "/kept"); os.remove(dir .. "/new"); os.remove(dir .. "/d"); os.remove(dir)
    for _, what in ipairs { "touch", "change", "remove", "mkdir" } do
      assert.truthy(r[what]:find("Read-only file system", 1, true), what .. ": " .. r[what])
      assert.truthy(r[what]:find("status [1-9]%d*\n$"), what .. ": " .. r[what])
    end
    assert.are.same({ "kept" }, after)
    assert.are.equal("old", kept)
    assert.are.equal("old", r.read)
  end)

  it("have a writable /dev/shm of their own, a /dev of harmless devices, no capability",
    function()
    local name = "mountns-spec-31-" .. core.getpid()
    local r = scenario(function(ns)
      return { shm = ns:exec { "sh", "-c", "echo x > $TMPDIR/" .. name .. " && cat $HOME/" .. name
                               .. " && echo ok > /dev/null && echo devnull" }.stdout,
               tmp = ns:exec { "sh", "-c", "{ touch /tmp/" .. name .. "; } 2>&1" }.stdout,
               dev = ns:exec { "ls", "/dev" }.stdout,
               status = ns:exec { "cat", "/proc/self/status" }.stdout,
               remount = ns:exec { "mount", "-o", "remount,rw", "/" } }
    end)
    assert.are.equal("x\ndevnull\n", r.shm)
    assert.truthy(r.tmp:find("Read-only file system", 1, true), r.tmp)
    assert.is_nil(io.open("/tmp/" .. name)) -- not the host's /tmp
    assert.is_nil(io.open("/dev/shm/" .. name)) -- nor its /dev/shm
    assert.are.equal("fd\nfull\nnull\nrandom\nshm\nstderr\nstdin\nstdout\ntty\nurandom\nzero\n",
      r.dev)
    for _, set in ipairs { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" } do
      assert.are.equal("0000000000000000", r.status:match(set .. ":%s*(%x+)"), set)
    end
    assert.are.equal("1", r.status:match("NoNewPrivs:%s*(%d)"))
    assert.are_not.equal(0, r.remount.code)
  end)

  it("get the documented environment, and what `env` adds", function()
    local plain, added, pid = scenario(function(ns)
      return ns:exec { "env" }.stdout,
        ns:exec({ "env" }, { env = { FOO = "bar", LANG = "C.UTF-8" } }).stdout, ns:pid()
    end)
    local path = namespace.TOOL_ENV.PATH
    assert.are.equal("HOME=/dev/shm\nLANG=C\nMOUNTNS_PID=" .. pid .. "\nPATH=" .. path
      .. "\nTMPDIR=/dev/shm\n", plain)
    assert.are.equal("FOO=bar\nHOME=/dev/shm\nLANG=C.UTF-8\nMOUNTNS_PID=" .. pid .. "\nPATH="
      .. path .. "\nTMPDIR=/dev/shm\n", added)
  end)

  it("refuse an env option that is not a table of names and strings", function()
    local errs = scenario(function(ns)
      local out = {}
      local bad = { "PATH=/x", { ["1X"] = "y" }, { X = 1 }, { X = "a\0b" }, { [1] = "X=y" } }
      for i, env in ipairs(bad) do
        out[i] = select(2, pcall(ns.exec, ns, { "true" }, { env = env }))
      end
      return out
    end)
    assert.are.equal(5, #errs)
    for _, e in ipairs(errs) do
      assert.truthy(e:find("bad argument #2 to 'ns:exec' (option 'env': ", 1, true), e)
      assert.truthy(e:find("^[^\n]*31%-host_spec%.lua:%d+: "), e) -- the caller's line
    end
  end)

  it("`mountns show` in a tool lists ns's mounts, as findmnt does there", function()
    local show, findmnt = scenario(function(ns)
      ns:mkdir("/X"); ns:mount("x", "/X", "tmpfs")
      return ns:exec { TREE .. "/bin/mountns", "show" },
        ns:exec { "findmnt", "-rn", "-o", "TARGET" }.stdout
    end)
    assert.are.equal(0, show.code, show.stderr)
    assert.are.equal("/\n/X\n", findmnt)
    local targets = {}
    for line in show.stdout:gmatch("[^\n]+") do
      local t = line:match("(/%S*)")
      if t then targets[#targets + 1] = t end
    end
    assert.are.same({ "/", "/X" }, targets, show.stdout)
  end)

  it("mountns show's default PID is $MOUNTNS_PID; a bad one is refused", function()
    local function show(env_pid, arg)
      return helper.sh("cd " .. helper.ROOT .. " && "
        .. (env_pid and ("MOUNTNS_PID='" .. env_pid .. "' ") or "") .. helper.lua_vars()
        .. " bin/mountns show"
        .. (arg and (" " .. arg) or "") .. " 2>&1; echo \"exit=$?\"")
    end
    local me = tostring(core.getpid())
    local direct = show(nil, me)
    assert.matches("exit=0$", direct)
    assert.are.equal(direct, show(me))
    assert.matches("^mountns: show: MOUNTNS_PID is not a PID: 'abc'\n.*exit=2$", show("abc"))
  end)
end)
