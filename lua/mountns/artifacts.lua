--- mountns.artifacts: what a scenario leaves behind for `mountns run
-- --artifacts DIR` (issue 27): the picture at its end (Graphviz `.dot`,
-- and `.svg` where `dot(1)` is installed), each open namespace's
-- mountinfo, the diagnostic, and the steps it made as a script that
-- `mountns run` runs again.
--
-- Two halves, as a scenario has two processes: `collect` runs in the
-- scenario's child, where its namespaces are (its `/` is a fresh tmpfs:
-- nothing can be written to the caller's files from there), and returns
-- texts that cross back with its result; `write` runs in the script's
-- process and writes them under DIR.
-- @module mountns.artifacts

local core = require "mountns.core"
local namespace = require "mountns.namespace"
local format = require "mountns.format"
local dot = require "mountns.dot"
local mirror = require "mountns.mirror"

local M = {}
local unpack = table.unpack or unpack -- luacheck: ignore

-- the variable a namespace has in the script: ns<serial>
local function var(serial) return "ns" .. tostring(serial) end

-- a step's arguments as Lua source, after `first` ones
local function args_text(step)
  local args = step.args or { n = 0 }
  local n = args.n or #args
  while n > 0 and args[n] == nil do n = n - 1 end
  local parts = {}
  for i = 1, n do parts[i] = mirror.value_text(args[i]) end
  return parts
end

-- one step as a line of the script: a call; a refusal as expect.fails; a
-- step whose code the steps do not hold (ns:run, ns:exec) as a comment
local function step_line(step)
  local ns, where = var(step.ns), step.where and ("  -- " .. step.where) or ""
  if step.op == "run" or step.op == "exec" then
    return "-- " .. mirror.call_text(step, ns) .. ": its code is not in the steps" .. where
  end
  local parts = args_text(step)
  if step.ok == false then
    if step.errno then
      table.insert(parts, 1, ns)
      return string.format("expect.fails(%q, %s.%s, %s)%s", step.errno, ns, step.op,
        table.concat(parts, ", "), where)
    end
    return "pcall(" .. ns .. "." .. step.op .. ", " .. table.concat({ ns, unpack(parts) }, ", ")
      .. ") -- it raised: " .. core.escape(tostring(step.error)):sub(1, 200)
  end
  local call = string.format("%s:%s(%s)", ns, step.op, table.concat(parts, ", "))
  if step.op == "unshare" and step.new then call = "local " .. var(step.new) .. " = " .. call end
  return call .. where
end

--- The steps as a scenario script (`mountns run` runs it: the calls the
-- scenario made, in order, each refusal as `expect.fails`).
-- @tparam table steps as `namespace.steps()` gives them
-- @tparam string name the scenario's name
-- @treturn string
function M.script(steps, name)
  local lines = {
    "-- mountns run --artifacts: the steps of scenario " .. string.format("%q", name)
      .. " as it made them.",
    "-- `mountns run FILE` makes them again; ns:run and ns:exec steps are comments:",
    "-- their code is in the scenario, not in the steps.",
    string.format('local mountns = %s "mountns"', "require"),
    string.format('local expect = %s "mountns.expect"', "require"),
    "",
    string.format("mountns.scenario(%q, function(ns1)", name .. " (its steps)"),
  }
  for _, step in ipairs(steps) do
    if step.op ~= "label" then lines[#lines + 1] = "  " .. step_line(step) end
  end
  lines[#lines + 1] = string.format("end, { label = %q })", steps.first_label or "ns1")
  return table.concat(lines, "\n") .. "\n"
end

--- In the scenario's child, at its end: the texts its artifacts are made
-- of. Each part that cannot be made is left out, with why in `missing`.
-- @tparam string name the scenario's name (the picture's title)
-- @treturn table `dot`, `mountinfo` (a list of `{label, text}`), `steps`
function M.collect(name)
  local art, missing = { mountinfo = {} }, {}
  local open = namespace.open_namespaces()
  local pic = { unpack(open) }
  pic[#pic + 1] = { normalize = true, title = name }
  local ok, text = pcall(dot.dot, unpack(pic))
  if ok then art.dot = text else missing[#missing + 1] = "picture: " .. tostring(text) end
  for _, ns in ipairs(open) do
    local ok2, t = pcall(ns.mounts, ns, { propagate_from = true })
    if ok2 then
      art.mountinfo[#art.mountinfo + 1] = { ns:label(), format.format(t, "mountinfo") }
    else
      missing[#missing + 1] = "mountinfo of " .. ns:label() .. ": " .. tostring(t)
    end
  end
  art.steps = M.script(namespace.steps(), name)
  if #missing > 0 then art.missing = missing end
  return art
end

-- a path for the shell, single-quoted
local function quoted(path) return "'" .. path:gsub("'", "'\\''") .. "'" end

-- whether a command is on PATH
local function on_path(cmd)
  for dir in (os.getenv("PATH") or ""):gmatch("[^:]+") do
    if core.exists(dir .. "/" .. cmd) then return true end
  end
  return false
end

--- Write text to the file path (made or emptied).
-- @tparam string path
-- @tparam string text
-- @treturn[1] boolean true
-- @return[2] nil
-- @treturn[2] string why not
function M.write_file(path, text)
  local f, err = io.open(path, "w")
  if not f then return nil, err end
  local ok, werr = f:write(text)
  f:close()
  if not ok then return nil, werr end
  return true
end

--- In the script's process: write a scenario's artifacts under dir, as
-- `<stem>-<index>.dot` (and `.svg` where `dot(1)` is installed),
-- `.mountinfo` (each open namespace's table, a `# label` line before
-- it), `.txt` (the diagnostic) and `.steps.lua` (`script`).
-- @tparam string dir an existing directory
-- @tparam string stem the file's stem (`mountns run`'s, as `--dot`'s)
-- @tparam int index the scenario's number in its file
-- @tparam table art as `collect` made it (nil: only the diagnostic)
-- @tparam ?string diagnostic the failure's message (nil for a pass)
-- @treturn[1] table the paths written, in that order
-- @return[2] nil
-- @treturn[2] string why a file could not be written
function M.write(dir, stem, index, art, diagnostic)
  local base = string.format("%s/%s-%d", dir, stem, index)
  local written = {}
  local function put(ext, text)
    local path = base .. ext
    local ok, err = M.write_file(path, text)
    if not ok then error(err, 0) end
    written[#written + 1] = path
  end
  local ok, err = pcall(function()
    art = art or {}
    if art.dot then
      put(".dot", art.dot)
      if on_path("dot") and os.execute("dot -Tsvg -o " .. quoted(base .. ".svg") .. " "
          .. quoted(base .. ".dot") .. " 2>/dev/null") then
        written[#written + 1] = base .. ".svg"
      end
    end
    if art.mountinfo and #art.mountinfo > 0 then
      local parts = {}
      for _, m in ipairs(art.mountinfo) do
        parts[#parts + 1] = "# " .. core.escape(m[1]) .. "\n" .. m[2]
      end
      put(".mountinfo", table.concat(parts, "\n"))
    end
    local text = diagnostic or "passed"
    if art.missing then text = text .. "\n\nnot saved:\n  " .. table.concat(art.missing, "\n  ") end
    put(".txt", text .. "\n")
    if art.steps then put(".steps.lua", art.steps) end
  end)
  if not ok then return nil, tostring(err) end
  return written
end

return M
