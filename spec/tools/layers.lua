-- The layers of mountns (doc/architecture.md), as data, and the checks that
-- the code keeps them. Run from the tree's top:
--   lua spec/tools/layers.lua [luadir [cdir]]
--     (default lua/mountns and csrc)
-- Prints one line per problem and exits 1, else prints nothing. `make lint`
-- runs it; spec/house/19-layers_spec.lua tests it and compares the tables of
-- doc/architecture.md with what it finds, so the document cannot drift.
--
-- Lua: every `require "mountns.x"` (or "mountns.pkg.x", a module of a
-- package folder lua/mountns/pkg/) points to a module of the same layer or
-- a lower one, the graph has no circle, every require sits at the top of its
-- file and names a module that exists. A module loaded on first use is
-- declared there too, as `local x = lazy.require "mountns.x"` (mountns.lazy,
-- the one way to defer a require): a deferred arrow, held to the same rules
-- (no arrow up, no circle). A require inside a function hides an arrow until
-- it runs: it is reported, and counted as an arrow. A package's modules
-- (pkg.x) sit in the package's layer unless LAYERS names them. One way
-- to fork: no module but `child` calls the core's process calls
-- (`core.fork`, `core.waitpid`, `core.kill`, `core.kill_tree`,
-- `core.child_subreaper`): every child starts through child.spawn, so its
-- pipes, bounds and tree's end live in one place.
--
-- C: a file "calls" another when it uses a function (or a macro standing
-- for one) that lmns.h declares and the other defines. No call to a higher
-- layer, no circle, every .c file in a layer, and a .c includes no file of
-- csrc/ but lmns.h and uapi.h.

-- Lowest first. A new module gets its place here before it can be required.
local LAYERS = {
  { "core" },                               -- the C core (csrc/)
  -- argument checks, records, tables, their text, the model (pure Lua)
  -- and the scenario driver with the model, its backend
  { "bytecode", "lazy", "flags", "args", "verdict", "cli", "record", "table", "diff", "format",
    "dot", "driver", "stream", "model" },
  { "child", "isolate", "mounts", "ops", "agent", "tool" }, -- child processes
  { "namespace", "watch", "shell", "mirror" }, -- scenario namespaces and their facilities
  -- the scenario runner and its report writers, expectations, output, the
  -- public module
  { "scenario", "runner", "report", "expect", "luassert", "recipes", "explain", "init",
    "check", "artifacts" },
}

-- The C files, lowest first (the headers, layer 0, are not listed: every
-- file includes them and they call nothing).
local C_LAYERS = {
  { "tree", "args", "handle", "record" },          -- 1 foundations
  -- 2 errors, kernel access, the heap
  { "errors", "procfs", "mountid", "libmount", "smpipe", "heap" },
  { "ns" },                                        -- 3 namespaces
  { "mount", "files", "mountinfo", "process", "fdio", "proctree", "frame", -- 4 areas
    "newapi", "watch" },
  { "statmount", "features" },                     -- 5 composites
  { "core" },                                      -- 6 the module
}

-- The core's process calls and the one module that may make them.
local PROCESS_CALLS = { fork = true, waitpid = true, kill = true, kill_tree = true,
                        child_subreaper = true }
local PROCESS_HOME = "child"

local M = {}
M.LAYERS = LAYERS
M.C_LAYERS = C_LAYERS

local function ranks(layers, first)
  local rank = {}
  for i, names in ipairs(layers) do
    for _, n in ipairs(names) do rank[n] = i + first - 1 end
  end
  return rank
end

local rank = ranks(LAYERS, 1)
local c_rank = ranks(C_LAYERS, 1)

-- A module's layer: its own entry, else its package's (model.world: model).
local function layer_of(name)
  while name do
    if rank[name] then return rank[name] end
    name = name:match("^(.*)%.[%w_]+$")
  end
end

local function lines_of(cmd)
  local p = assert(io.popen(cmd))
  local out = {}
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  table.sort(out)
  return out
end

-- lua/mountns/a/b.lua -> "a.b"; a/init.lua -> "a"; init.lua stays "init"
local function module_name(rel)
  local name = rel:gsub("%.lua$", ""):gsub("/", ".")
  return (name:gsub("^(.+)%.init$", "%1"))
end

--- The modules of dir and the modules each requires: name -> list of
-- {to = name, line = n, inside = a require inside a function, deferred =
-- through lazy.require}; the sorted names; name -> its file (relative);
-- name -> the core's process calls it makes, {call = "fork", line = n}.
function M.graph(dir)
  local graph, names, files, calls = {}, {}, {}, {}
  for _, rel in ipairs(lines_of("cd '" .. dir .. "' && find . -name '*.lua' | cut -c3-")) do
    local name = module_name(rel)
    names[#names + 1] = name
    files[name] = rel
  end
  table.sort(names)
  for _, name in ipairs(names) do
    local edges, made = {}, {}
    local n = 0
    for line in io.lines(dir .. "/" .. files[name]) do
      n = n + 1
      local code = line:gsub("%-%-.*$", "") -- not in comments
      for call in code:gmatch("core%.([%w_]+)%s*%(") do
        if PROCESS_CALLS[call] then made[#made + 1] = { call = call, line = n } end
      end
      for at, mod in code:gmatch("()require%s*%(?%s*[\"'](mountns[%w_.]*)[\"']") do
        local to = mod == "mountns" and "init" or mod:match("^mountns%.([%w_.]+)$")
        if to then
          edges[#edges + 1] = { to = to, line = n, inside = line:match("^%s") ~= nil,
                                deferred = code:sub(at - 5, at - 1) == "lazy." }
        end
      end
    end
    graph[name] = edges
    calls[name] = made
  end
  return graph, names, files, calls
end

-- Circles of a graph of name -> {{to = name}, ...}: depth-first, a name
-- met again while on the path. Each as "a -> b -> a".
local function circles(graph, names)
  local found, state, path = {}, {}, {}
  local function visit(name)
    state[name] = "open"
    path[#path + 1] = name
    for _, e in ipairs(graph[name] or {}) do
      if state[e.to] == "open" then
        local from
        for i, v in ipairs(path) do if v == e.to then from = i end end
        local circle = {}
        for i = from, #path do circle[#circle + 1] = path[i] end
        circle[#circle + 1] = e.to
        found[#found + 1] = "circle: " .. table.concat(circle, " -> ")
      elseif state[e.to] == nil and graph[e.to] then
        visit(e.to)
      end
    end
    path[#path] = nil
    state[name] = "done"
  end
  for _, name in ipairs(names) do
    if not state[name] then visit(name) end
  end
  return found
end

--- The problems of the Lua graph: a module without a layer, a require of a
-- module that is neither in dir nor in LAYERS, a require inside a function, an arrow to a
-- higher layer, a circle, a process call outside mountns.child (with the
-- calls graph's fourth result gives). A list of strings (empty: none).
function M.check(graph, names, files, calls)
  files = files or {}
  local problems = {}
  for _, name in ipairs(names) do
    for _, c in ipairs(name ~= PROCESS_HOME and calls and calls[name] or {}) do
      problems[#problems + 1] = string.format("%s:%d: calls core.%s outside mountns.%s "
        .. "(start a child with child.spawn)", files[name] or name .. ".lua", c.line, c.call,
        PROCESS_HOME)
    end
  end
  for _, name in ipairs(names) do
    local file = files[name] or name .. ".lua"
    if not layer_of(name) then
      problems[#problems + 1] = file .. ": no layer (add it to spec/tools/layers.lua)"
    end
    for _, e in ipairs(graph[name]) do
      if not graph[e.to] and not rank[e.to] then
        problems[#problems + 1] = string.format("%s:%d: requires mountns.%s, which is no module",
          file, e.line, e.to)
      end
      if e.inside then
        problems[#problems + 1] = string.format("%s:%d: requires %s inside a function "
          .. "(defer it with lazy.require at the top)", file, e.line, e.to)
      end
      local from, to = layer_of(name), layer_of(e.to)
      if from and to and to > from then
        problems[#problems + 1] = string.format("%s:%d: %s %s, a higher layer (%d > %d)",
          file, e.line, e.deferred and "defers" or "requires", e.to, to, from)
      end
    end
  end
  for _, c in ipairs(circles(graph, names)) do problems[#problems + 1] = c end
  return problems
end

-- C text without comments and string or character literals (a name in a
-- message is no call).
local function c_code(text)
  text = text:gsub("/%*.-%*/", " ")
  text = text:gsub('"[^"\n]*"', '""'):gsub("'[^'\n]*'", "''")
  return (text:gsub("//[^\n]*", ""))
end

local function read(path)
  local f = assert(io.open(path))
  local s = f:read("*a")
  f:close()
  return s
end

--- The C files of dir and their calls: name -> list of {to = file, via =
-- the function or macro}, sorted; the sorted names; name -> the files of
-- csrc/ it includes.
function M.cgraph(dir)
  local header = c_code(read(dir .. "/lmns.h"))
  local declared, macro = {}, {}
  for name in header:gmatch("[%s%*](lmns_[%w_]+)%s*%([^;{]-%)%s*;") do declared[name] = true end
  for name, body in header:gmatch("#define%s+(lmns_[%w_]+)%(.-%)([^\n]*)") do
    macro[name] = body:match("(lmns_[%w_]+)%s*%(")
  end
  local names, text, includes = {}, {}, {}
  for _, f in ipairs(lines_of("cd '" .. dir .. "' && ls *.c")) do
    local name = f:gsub("%.c$", "")
    names[#names + 1] = name
    local raw = read(dir .. "/" .. f)
    text[name] = c_code(raw)
    includes[name] = {}
    for inc in raw:gmatch('\n#include%s+"([^"]+)"') do
      includes[name][#includes[name] + 1] = inc
    end
  end
  -- the file that defines each declared function: at a line's start, a
  -- type, the name, its parameters and a body (not a `;`)
  local home = {}
  for _, name in ipairs(names) do
    for fn in ("\n" .. text[name]):gmatch("\n[%a][^\n;{}]-[%s%*](lmns_[%w_]+)%s*%([^;{]-%)%s*{") do
      if declared[fn] then home[fn] = name end
    end
  end
  for m, fn in pairs(macro) do home[m] = home[fn] end
  local graph = {}
  for _, name in ipairs(names) do
    local to, seen = {}, {}
    for fn in text[name]:gmatch("lmns_[%w_]+") do
      local h = home[fn]
      if h and h ~= name and not seen[h] then
        seen[h] = true
        to[#to + 1] = { to = h, via = fn }
      end
    end
    table.sort(to, function(a, b) return a.to < b.to end)
    graph[name] = to
  end
  return graph, names, includes
end

--- The problems of the C graph: a file without a layer, a call to a higher
-- layer, a circle, an include of a csrc/ file other than the headers.
function M.ccheck(graph, names, includes)
  local problems = {}
  for _, name in ipairs(names) do
    if not c_rank[name] then
      problems[#problems + 1] = name .. ".c: no layer (add it to spec/tools/layers.lua)"
    end
    for _, e in ipairs(graph[name]) do
      if c_rank[name] and c_rank[e.to] and c_rank[e.to] > c_rank[name] then
        problems[#problems + 1] = string.format("%s.c: calls %s (%s), a higher layer (%d > %d)",
          name, e.to, e.via, c_rank[e.to], c_rank[name])
      end
    end
    for _, inc in ipairs(includes and includes[name] or {}) do
      if inc ~= "lmns.h" and inc ~= "uapi.h" then
        problems[#problems + 1] = name .. ".c: includes " .. inc
          .. " (only lmns.h and uapi.h: a .c includes no other file of csrc/)"
      end
    end
  end
  for _, c in ipairs(circles(graph, names)) do problems[#problems + 1] = c end
  return problems
end

if arg and arg[0] and arg[0]:match("layers%.lua$") then
  local problems = M.check(M.graph(arg[1] or "lua/mountns"))
  for _, p in ipairs(M.ccheck(M.cgraph(arg[2] or "csrc"))) do problems[#problems + 1] = p end
  for _, p in ipairs(problems) do print(p) end
  os.exit(#problems == 0 and 0 or 1)
end

return M
