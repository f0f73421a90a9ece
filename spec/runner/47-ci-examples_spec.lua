-- The CI recipes of examples/ci (issue 27) run as written: the YAML is
-- parsed (python3-yaml), the commands each file gives a job are run
-- locally with the values its runner sets (a GitHub Actions matrix, a
-- Kubernetes completion index, LAVA's steps and parse pattern), and the
-- merged reports hold every scenario of examples/*.lua exactly once.
-- (`--kernel host` only: a guest kernel is make matrix's business.)
local helper = require "helper"

-- the tree's absolute path (links to it are made elsewhere)
local ROOT = helper.sh("cd " .. helper.ROOT .. " && pwd"):match("[^\n]+")

-- python3 with yaml, or nil and why not
local function python_yaml()
  local out = helper.sh("python3 -c 'import yaml, json; print(\"yes\")' 2>&1")
  if out:match("^yes") then return true end
  return nil, "python3-yaml is not installed"
end

-- What python prints from the YAML file `name` (the code's `doc`).
local dir
local function from_yaml(name, code)
  local script = helper.write(dir, "y.py", "import yaml, sys\n"
    .. "doc = yaml.safe_load(open(sys.argv[1]))\n" .. code)
  return helper.sh("python3 " .. script .. " " .. ROOT .. "/examples/ci/" .. name .. " 2>&1")
end

-- The scenarios of examples/*.lua, as `mountns run --list` names them.
local function all_scenarios()
  local out = helper.cli("run --list " .. ROOT .. "/examples/*.lua")
  local n = select(2, out:gsub("\t%d+\t", ""))
  assert(n > 20, out)
  return n
end

-- a shell script run by bash -e, with the suite's Lua and the variables
-- env ("A=1 B=2"), in dir/tree: the tree's bin, lua, build and examples
-- linked there, so what a job writes (reports/, merged-*) lands in dir,
-- not in the tree; its output and "exit=N"
local function sh(env, cmd)
  local script = helper.write(dir, "step.sh", cmd .. "\n")
  local tree = dir .. "/tree"
  if not require("mountns.core").exists(tree) then
    os.execute("mkdir " .. tree)
    for _, d in ipairs { "bin", "lua", "build", "examples" } do
      os.execute("ln -s " .. ROOT .. "/" .. d .. " " .. tree .. "/" .. d)
    end
  end
  return helper.sh("cd " .. tree .. " && " .. env .. " " .. helper.lua_vars():gsub(" %S+$", "")
    .. " bash -e " .. script .. " 2>&1; echo \"exit=$?\"")
end

local function count(path, pattern)
  return select(2, helper.read(path):gsub(pattern, ""))
end

local have, why = python_yaml()
local yit = have and it or function(name) pending(name .. " [" .. why .. "]") end

describe("examples/ci", function()
  before_each(function() dir = helper.tempdir() end)
  after_each(function() os.execute("rm -rf " .. dir) end)

  yit("GitHub Actions: each shard's job, then the merge, cover every scenario once", function()
    local out = from_yaml("github-actions.yml", [[
jobs = doc["jobs"]
m = jobs["shard"]["strategy"]["matrix"]
assert "host" in m["kernel"]
print("SHARDS=%s" % doc["env"]["SHARDS"])
print("SCENARIOS=%s" % doc["env"]["SCENARIOS"])
print("LIST=%s" % " ".join(str(s) for s in m["shard"]))
for job, sid in (("shard", "shard"), ("merge", "merge")):
    for st in jobs[job]["steps"]:
        if st.get("id") == sid:
            print("STEP " + sid)
            print(st["run"].rstrip("\n"))
            print("END")
]])
    local shards = assert(out:match("SHARDS=(%d+)"), out)
    local list = out:match("LIST=([%d ]+)")
    local shard_run = assert(out:match("STEP shard\n(.-)\nEND"), out)
    local merge_run = assert(out:match("STEP merge\n(.-)\nEND"), out)
    local env = "SHARDS=" .. shards .. " SCENARIOS='" .. out:match("SCENARIOS=(%S+)") .. "'"
    for k in list:gmatch("%d+") do
      local run = shard_run:gsub("%${{ matrix%.kernel }}", "host"):gsub("%${{ matrix%.shard }}", k)
      local res = sh(env, run)
      assert.matches("exit=0$", res)
    end
    local res = sh(env, (merge_run:gsub("%${{ matrix%.kernel }}", "host")))
    assert.matches("exit=0$", res)
    local n = all_scenarios()
    assert.equal(n, count(dir .. "/tree/merged-host.xml", "<testcase "))
    assert.equal(n, count(dir .. "/tree/merged-host.json", '"path": *"mountns%.'))
  end)

  yit("Kubernetes Indexed Job: one pod a shard, by its completion index", function()
    local out = from_yaml("k8s-indexed-job.yaml", [[
spec = doc["spec"]
assert spec["completionMode"] == "Indexed"
c = spec["template"]["spec"]["containers"][0]
assert c["command"] == ["/bin/sh", "-c"]
print("COMPLETIONS=%d" % spec["completions"])
for e in c["env"]:
    if e["name"] != "REPORTS":
        print("ENV %s=%s" % (e["name"], e["value"]))
print("ARGS " + c["args"][0])
]])
    local completions = tonumber((assert(out:match("COMPLETIONS=(%d+)"), out)))
    local env = {}
    for k, v in out:gmatch("ENV (%w+)=(%S+)") do env[#env + 1] = k .. "=" .. v end
    local args = assert(out:match("ARGS ([^\n]+)"))
    local junit, kcidb = {}, {}
    for index = 0, completions - 1 do
      local res = sh(table.concat(env, " ") .. " REPORTS=" .. dir .. " JOB_COMPLETION_INDEX="
        .. index, args)
      assert.matches("exit=0$", res)
      junit[#junit + 1] = dir .. "/junit-" .. index .. ".xml"
      kcidb[#kcidb + 1] = dir .. "/kcidb-" .. index .. ".json"
    end
    assert.matches("exit=0$", helper.cli("report merge " .. dir .. "/all.xml "
      .. table.concat(junit, " ")))
    assert.matches("exit=0$", helper.cli("report merge " .. dir .. "/all.json "
      .. table.concat(kcidb, " ")))
    local n = all_scenarios()
    assert.equal(n, count(dir .. "/all.xml", "<testcase "))
    -- a shard left out: the merge refuses
    assert.matches("missing\nexit=1$", helper.cli("report merge " .. dir .. "/part.xml "
      .. junit[1]))
  end)

  yit("LAVA: the steps' TAP through the parse pattern, a result per scenario", function()
    local out = from_yaml("lava-test.yaml", [[
import re
print("PATTERN " + doc["parse"]["pattern"])
for s in doc["run"]["steps"]:
    print("STEP " + s)
]])
    local steps = {}
    for s in out:gmatch("STEP ([^\n]+)") do steps[#steps + 1] = s end
    local tap = sh("MOUNTNS_TREE=" .. dir .. "/tree", table.concat(steps, "\n"))
    assert.matches("\nexit=0$", tap)
    helper.write(dir, "tap.txt", tap)
    local parsed = from_yaml("lava-test.yaml", [[
import re
pat = re.compile(doc["parse"]["pattern"])
fix = doc["parse"]["fixupdict"]
n = 0
for line in open("]] .. dir .. [[/tap.txt"):
    m = pat.match(line.rstrip("\n"))
    if m:
        n += 1
        print(fix.get(m.group("result"), m.group("result")), m.group("test_case_id"))
print("CASES %d" % n)
]])
    assert.equal(all_scenarios(), tonumber(parsed:match("CASES (%d+)")))
    assert.matches("\npass seed article", "\n" .. parsed)
  end)
end)
