-- The layers of the Lua modules (doc/architecture.md, "Lua layers"), and
-- the check that their require graph keeps them: every `require
-- "mountns.x"` in lua/mountns/*.lua points to a module of the same layer or
-- a lower one, the graph has no circle, and every require sits at the top
-- of its file. A module loaded on first use is declared there too, as
-- `local x = lazy.require "mountns.x"` (mountns.lazy, the one way to defer
-- a require): a deferred arrow, held to the same rules (no arrow up, no
-- circle). A require inside a function hides an arrow until it runs: it is
-- reported, and counted as an arrow. Run from the tree's top:
--   lua doc/layers.lua [dir]   (dir: default lua/mountns)
-- Prints one line per problem and exits 1, else prints nothing.

-- Lowest first. A new module gets its place here before it can be required.
local LAYERS = {
  { "core" },                               -- the C core (csrc/)
  -- argument checks, records, tables, their text, the model (pure Lua)
  { "lazy", "args", "cli", "record", "table", "diff", "format", "model" },
  { "child", "isolate", "mounts", "ops", "agent" }, -- child processes
  { "namespace", "watch", "shell", "mirror" }, -- scenario namespaces and their facilities
  -- the scenario runner, expectations, output, the public module
  { "scenario", "runner", "expect", "luassert", "dot", "recipes", "explain", "init",
    "check" },
}

local M = {}
M.LAYERS = LAYERS

local rank = {}
for i, names in ipairs(LAYERS) do
  for _, n in ipairs(names) do rank[n] = i end
end

--- The modules of dir and the modules each requires: name -> list of
-- {to = name, line = n, inside = a require inside a function, deferred =
-- through lazy.require}.
function M.graph(dir)
  local p = assert(io.popen("ls " .. dir))
  local names = {}
  for f in p:lines() do
    if f:match("%.lua$") then names[#names + 1] = f:gsub("%.lua$", "") end
  end
  p:close()
  table.sort(names)
  local graph = {}
  for _, name in ipairs(names) do
    local edges = {}
    local n = 0
    for line in io.lines(dir .. "/" .. name .. ".lua") do
      n = n + 1
      local code = line:gsub("%-%-.*$", "") -- not in comments
      for at, mod in code:gmatch("()require%s*%(?%s*[\"'](mountns[%w_.]*)[\"']") do
        local to = mod == "mountns" and "init" or mod:match("^mountns%.([%w_]+)$")
        if to then
          edges[#edges + 1] = { to = to, line = n, inside = line:match("^%s") ~= nil,
                                deferred = code:sub(at - 5, at - 1) == "lazy." }
        end
      end
    end
    graph[name] = edges
  end
  return graph, names
end

--- The problems of the graph: a module without a layer, an arrow to a
-- higher layer, a circle. A list of strings (empty: none).
function M.check(graph, names)
  local problems = {}
  for _, name in ipairs(names) do
    if not rank[name] then
      problems[#problems + 1] = name .. ".lua: no layer (add it to doc/layers.lua)"
    end
    for _, e in ipairs(graph[name]) do
      if e.inside then
        problems[#problems + 1] = string.format("%s.lua:%d: requires %s inside a function "
          .. "(defer it with lazy.require at the top)", name, e.line, e.to)
      end
      if rank[name] and rank[e.to] and rank[e.to] > rank[name] then
        problems[#problems + 1] = string.format("%s.lua:%d: %s %s, a higher layer (%d > %d)",
          name, e.line, e.deferred and "defers" or "requires", e.to, rank[e.to], rank[name])
      end
    end
  end
  -- circles: depth-first, a module met again while on the path
  local state, path = {}, {}
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
        problems[#problems + 1] = "circle: " .. table.concat(circle, " -> ")
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
  return problems
end

if arg and arg[0] and arg[0]:match("layers%.lua$") then
  local problems = M.check(M.graph(arg[1] or "lua/mountns"))
  for _, p in ipairs(problems) do print(p) end
  os.exit(#problems == 0 and 0 or 1)
end

return M
