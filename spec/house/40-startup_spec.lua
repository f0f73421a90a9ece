-- spec 40: precompiled modules (lua/mountns/bytecode.lua, issue 28 item 2).
-- A module's bytecode is used when it was built from the very source that
-- require finds, from the build dir of that source's tree or beside it,
-- for this interpreter; otherwise the source is loaded. Either way the
-- messages and tracebacks are the same text: the file the source was
-- found by, the same lines, the same variable names. No timing here
-- (bench/startup.lua measures the CPU).
local helper = require "helper"
local bytecode = require "mountns.bytecode"

-- A module whose errors name lines, locals and upvalues.
local SAMPLE = [[
local M = {}
local up = nil
function M.fail(msg)
  error(msg)
end
function M.index_local()
  local x = nil
  return x.field
end
function M.index_upvalue()
  return up.field
end
function M.trace()
  local t = debug.traceback("here", 1)
  return t
end
function M.deeper()
  local t = M.trace()
  return t
end
return M
]]

-- The messages of a loaded sample's functions, and a traceback through
-- two of its frames (whose other frames are this file's: the same too).
local function messages(m)
  local out = {}
  for _, f in ipairs { "fail", "index_local", "index_upvalue" } do
    local _, err = pcall(m[f], "boom")
    out[f] = err
  end
  out.trace = m.deeper()
  return out
end

describe("precompiled modules (mountns.bytecode)", function()
  local tree, saved_path
  before_each(function()
    tree = helper.tempdir()
    saved_path = package.path
    helper.write(tree, "lua/mountns/sample.lua", SAMPLE)
  end)
  after_each(function()
    package.path = saved_path
    package.loaded["mountns.sample"] = nil
    os.execute("rm -rf '" .. tree .. "'")
  end)

  -- Build the sample's bytecode as make does (chunk name: the path given)
  -- into `dest`/mountns/ (default: the tree's build dir for this
  -- interpreter, BUILD/lua).
  local function build(dest)
    local text = bytecode.compile(tree .. "/lua/mountns/sample.lua")
    dest = dest or (tree .. "/" .. bytecode.build_dir .. "/lua")
    return helper.write(dest, "mountns/sample.luac", text)
  end

  -- What require's searchers do with package.path = `dir`/?.lua: the
  -- bytecode's chunk or nil, and the source's chunk as Lua's searcher
  -- loads it (loadfile of the path found).
  local function search(dir)
    package.path = dir .. "/?.lua"
    local chunk, path = bytecode.searcher("mountns.sample")
    return chunk, path, assert(loadfile(dir .. "/mountns/sample.lua"))
  end

  it("uses fresh bytecode: the same messages and traceback as the source", function()
    build()
    local chunk, path, source = search(tree .. "/lua")
    assert.is_function(chunk)
    assert.are.equal(tree .. "/lua/mountns/sample.lua", path)
    local from_bc, from_src = messages(chunk()), messages(source())
    assert.are.same(from_src, from_bc)
    -- what that text is: the file and lines of the source, the names
    local file = tree .. "/lua/mountns/sample.lua"
    assert.are.equal(file .. ":4: boom", from_bc.fail)
    -- (the wording is each version's: the names need the debug information)
    assert.are.equal(file .. ":8: attempt to index", from_bc.index_local:sub(1, #file + 20))
    assert.truthy(from_bc.index_local:find("local 'x'", 1, true))
    assert.are.equal(file .. ":11: attempt to index", from_bc.index_upvalue:sub(1, #file + 21))
    assert.truthy(from_bc.index_upvalue:find("upvalue 'up'", 1, true))
    assert.truthy(from_bc.trace:find(file .. ":14: in ", 1, true))
    assert.truthy(from_bc.trace:find(file .. ":18: in ", 1, true))
  end)

  it("names the path the source is found by, not the one it was built from", function()
    build()
    -- the same tree spelled two other ways, one long (a chunk name of
    -- more than 255 bytes: another length encoding in every version)
    for _, dir in ipairs { tree .. "/lua/../lua", tree .. ("/."):rep(150) .. "/lua" } do
      local chunk, path, source = search(dir)
      assert.is_function(chunk)
      assert.are.equal(dir .. "/mountns/sample.lua", path)
      local from_bc, from_src = messages(chunk()), messages(source())
      assert.are.same(from_src, from_bc)
      -- (a message shortens a long name, from source as well: its whole
      -- text is the chunk's source)
      assert.are.equal("@" .. dir .. "/mountns/sample.lua", debug.getinfo(chunk, "S").source)
      assert.truthy(from_bc.fail:find("/mountns/sample.lua:4: boom", 1, true))
    end
  end)

  it("ignores bytecode built from another source, and require loads the source", function()
    build()
    assert.is_function((search(tree .. "/lua")))
    -- the same size, one byte changed: line 4 raises another message
    helper.write(tree, "lua/mountns/sample.lua", (SAMPLE:gsub("error%(msg%)", "error(\"bad\")")))
    assert.is_nil((search(tree .. "/lua")))
    local m = require "mountns.sample"
    local _, err = pcall(m.fail, "boom")
    assert.are.equal(tree .. "/lua/mountns/sample.lua:4: bad", err)
    -- a line more: the source's line numbers, not the bytecode's
    package.loaded["mountns.sample"] = nil
    helper.write(tree, "lua/mountns/sample.lua", "\n" .. SAMPLE)
    assert.is_nil((search(tree .. "/lua")))
    _, err = pcall(require("mountns.sample").fail, "boom")
    assert.are.equal(tree .. "/lua/mountns/sample.lua:5: boom", err)
  end)

  it("goes by the content: a source touched but unchanged keeps its bytecode", function()
    build()
    helper.sh("touch -d '2001-01-01' '" .. tree .. "/lua/mountns/sample.lua'")
    assert.is_function((search(tree .. "/lua")))
  end)

  it("ignores bytecode of another interpreter or format", function()
    local luac = build()
    local text = helper.read(luac)
    assert.is_function((search(tree .. "/lua")))
    local other = jit and "Lua 5.4" or "LuaJIT 2.1.0-beta3" -- luacheck: ignore (jit)
    local nl = text:find("\n", 1, true)
    local header = text:sub(1, nl - 1)
    helper.write(tree, bytecode.build_dir .. "/lua/mountns/sample.luac",
      header:gsub("^([^\t]*)\t[^\t]*", "%1\t" .. other) .. text:sub(nl))
    assert.is_nil((search(tree .. "/lua")))
    helper.write(tree, bytecode.build_dir .. "/lua/mountns/sample.luac",
      header:gsub("^mountns%-bytecode %d+", "mountns-bytecode 0") .. text:sub(nl))
    assert.is_nil((search(tree .. "/lua")))
  end)

  it("looks only in its tree's build dir and beside the source", function()
    -- beside the source (an installed rock): used
    build(tree .. "/lua")
    assert.is_function((search(tree .. "/lua")))
    os.remove(tree .. "/lua/mountns/sample.luac")
    assert.is_nil((search(tree .. "/lua")))
    -- the build dir of another tree, or the current directory's: not
    local other = helper.tempdir()
    finally(function() os.execute("rm -rf '" .. other .. "'") end)
    build(other .. "/" .. bytecode.build_dir .. "/lua")
    build(other .. "/lua")
    helper.write(tree, "elsewhere/lua/mountns/sample.lua", SAMPLE)
    assert.is_nil((search(tree .. "/elsewhere/lua")))
    assert.is_nil((search(tree .. "/lua")))
    -- and only for mountns' modules (a name Lua's searcher would make
    -- a path of, but not this one's: "%" in it, and no error)
    package.path = tree .. "/lua/?.lua"
    assert.is_nil(bytecode.searcher("sample"))
    assert.is_nil(bytecode.searcher("mountns.%d"))
    build() -- (the tree's own build dir: used)
    assert.is_function((search(tree .. "/lua")))
  end)
end)

describe("the tree's modules (make builds their bytecode)", function()
  -- every module of lua/mountns, as require names it
  local function modules()
    local names = {}
    local p = assert(io.popen("cd " .. helper.ROOT .. "/lua && ls mountns/*.lua mountns/*/*.lua"))
    for f in p:lines() do
      names[#names + 1] = (f:gsub("/init%.lua$", ""):gsub("%.lua$", ""):gsub("/", "."))
    end
    p:close()
    return names
  end

  it("has fresh bytecode for this interpreter for every module", function()
    local saved = package.path
    package.path = helper.ROOT .. "/lua/?.lua;" .. helper.ROOT .. "/lua/?/init.lua"
    local stale = {}
    for _, name in ipairs(modules()) do
      if not bytecode.searcher(name) then stale[#stale + 1] = name end
    end
    package.path = saved
    assert.are.same({}, stale, "no fresh bytecode (run make for this Lua)")
  end)

  -- A traceback through mountns' own modules, from a process loading them
  -- from bytecode and from one loading the sources (MOUNTNS_BYTECODE=0).
  local PROBE = [[ -e '
    local bc = require "mountns.bytecode"
    io.write(bc.searcher("mountns.expect") and "bytecode\n" or "source\n")
    local n = 0
    for _, s in ipairs(package.searchers or package.loaders) do
      if type(s) == "table" and s.mountns_bytecode then n = n + 1 end
    end
    io.write("searchers ", n, "\n")
    local expect = require "mountns.expect"
    local _, tb = xpcall(function() expect.mounted(nil, "/x") end, debug.traceback)
    io.write(tb, "\n")']]

  it("gives the same traceback from bytecode as from source", function()
    local cmd = "cd " .. helper.ROOT .. " && " .. helper.lua_vars()
    local from_bc = helper.sh(cmd .. PROBE)
    local from_src = helper.sh("cd " .. helper.ROOT .. " && MOUNTNS_BYTECODE=0 "
      .. helper.lua_vars() .. PROBE)
    assert.are.equal("bytecode\nsearchers 1\n", from_bc:match("^[^\n]*\n[^\n]*\n"))
    assert.are.equal("bytecode\nsearchers 0\n", from_src:match("^[^\n]*\n[^\n]*\n"))
    -- (LuaJIT's last frame names an address, another in each process)
    local function tb(out) return (out:match("\n[^\n]*\n(.*)$"):gsub("0x%x+", "ADDR")) end
    local tb_bc, tb_src = tb(from_bc), tb(from_src)
    assert.are.equal(tb_src, tb_bc)
    -- frames in the modules, with their lines
    assert.matches("mountns/expect/%w+%.lua:%d+: in ", tb_bc)
  end)
end)

describe("mountns run's report from bytecode (bin/mountns)", function()
  local dir
  before_each(function() dir = helper.tempdir() end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  -- two failing scenarios: a bad argument to expect, a failed mount and
  -- a nil indexed; their messages and tracebacks name module lines
  local SCRIPT = [[
local mountns = require "mountns"
local expect = require "mountns.expect"
mountns.scenario("bad argument", function(ns)
  ns:mkdir("/X")
  expect.mounted(ns, 42)
end)
mountns.scenario("failed mount", function(ns)
  ns:mount("x", "/nonexistent/y", "tmpfs")
end)
]]

  helper.root_it("scenarios")("is the same text as from source, module lines included", function()
    local script = helper.write(dir, "bad.lua", SCRIPT)
    -- bin/mountns finds the modules as bin/../lua/...: a chunk name the
    -- bytecode (built as lua/mountns/...) is renamed to
    local function run(env)
      local out = helper.sh("cd " .. helper.ROOT .. " && " .. env .. " " .. helper.lua_vars()
        .. " bin/mountns run " .. script .. " 2>&1; echo \"exit=$?\"")
      return (out:gsub("%(%d+ ms%)", "(T)"))
    end
    local from_bc, from_src = run(""), run("MOUNTNS_BYTECODE=0")
    assert.are.equal(from_src, from_bc)
    assert.truthy(from_bc:find("bad.lua:5: bad argument #2 to 'mounted'", 1, true))
    assert.truthy(from_bc:find("bin/../lua/mountns/expect/%w+%.lua:%d+: in "))
    assert.truthy(from_bc:find("bin/../lua/mountns/namespace.lua:%d+: in "))
    assert.truthy(from_bc:find("0 passed, 2 failed (2 ERROR)\nexit=1", 1, true), from_bc)
  end)
end)

describe("core.file_digest (the sources' freshness)", function()
  local core = require "mountns.core"
  local dir
  before_each(function() dir = helper.tempdir() end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("is the same for the same bytes anywhere, another for one byte changed", function()
    -- sizes around the 8-byte words and the 16 KB chunks the hash reads
    for _, n in ipairs { 0, 1, 7, 8, 9, 16383, 16384, 16385, 40000 } do
      local text = ("abcdefghij"):rep(4001):sub(1, n)
      local a = helper.write(dir, "a", text)
      local b = helper.write(dir, "sub/b", text)
      local da = assert(core.file_digest(a))
      assert.are.equal(da, core.file_digest(b))
      assert.are.equal(n, tonumber(da:match("^(%d+):%x+$")))
      if n > 0 then -- the last byte, then the first, changed
        helper.write(dir, "b", text:sub(1, -2) .. "X")
        assert.are_not.equal(da, core.file_digest(dir .. "/b"))
        helper.write(dir, "b", "X" .. text:sub(2))
        assert.are_not.equal(da, core.file_digest(dir .. "/b"))
      end
      -- a zero byte more is another size and another hash
      helper.write(dir, "b", text .. "\0")
      local db = core.file_digest(dir .. "/b")
      assert.are_not.equal(da:match(":(%x+)$"), db:match(":(%x+)$"))
    end
  end)

  it("returns the errno of a path it cannot read, and raises on misuse", function()
    local r, msg, errno = core.file_digest(dir .. "/none")
    assert.is_nil(r)
    assert.are.equal("file_digest " .. dir .. "/none: No such file or directory (ENOENT)", msg)
    assert.are.equal(2, errno)
    r, msg = core.file_digest(dir)
    assert.is_nil(r)
    assert.truthy(msg:find("(EISDIR)", 1, true))
    -- (the function's name in the message is each version's)
    local ok, err = pcall(core.file_digest, dir, 1)
    assert.is_false(ok)
    assert.truthy(err:find("bad argument #2 to '[%w_.?]*' %(no value expected, got number%)"))
    assert.has_error(function() core.file_digest() end)
    assert.has_error(function() core.file_digest("a\0b") end)
  end)
end)
