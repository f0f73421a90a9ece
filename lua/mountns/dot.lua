--- dot: mount namespaces and their peer groups as a Graphviz picture.
-- `mountns.dot(sh1, sh2)` draws one cluster per namespace (its label and
-- ID) holding one node per mount (mount point, mount ID, propagation) and
-- the tree edges between them; the members of a peer group share a fill
-- colour and are joined by dashed lines across namespaces, and a bold arrow
-- runs from a member of a master group to each of its slaves. Render with
-- `dot -Tsvg`. The text depends only on the tables given: namespaces in
-- argument order, mounts in tree order, groups in order of first
-- appearance.
-- @module mountns.dot

local mtable = require "mountns.table"
local format = require "mountns.format"
local record = require "mountns.record"
local argcheck = require "mountns.args"

local M = {}

local unpack = table.unpack or unpack -- luacheck: ignore

-- Peer group colours: a pale fill for the members and a strong tone of the
-- same hue for lines (ColorBrewer "Paired" and friends), cycled.
local COLOURS = {
  { "#a6cee3", "#1f78b4" }, { "#b2df8a", "#33a02c" }, { "#fb9a99", "#e31a1c" },
  { "#fdbf6f", "#ff7f00" }, { "#cab2d6", "#6a3d9a" }, { "#ffff99", "#b15928" },
  { "#8dd3c7", "#1b9e77" }, { "#fccde5", "#e7298a" }, { "#ccebc5", "#66a61e" },
  { "#d9d9d9", "#525252" },
}
M.COLOURS = COLOURS

-- A DOT string literal: backslashes and quotes escaped, newlines as \n.
local function q(s)
  s = tostring(s):gsub("[\\\"]", "\\%0"):gsub("\n", "\\n")
  return '"' .. s .. '"'
end

-- attributes as ` [k=v, ...]` in the order given: {{k, v}, ...}
local function attrs(list)
  local out = {}
  for _, kv in ipairs(list) do out[#out + 1] = kv[1] .. "=" .. q(kv[2]) end
  return " [" .. table.concat(out, ", ") .. "]"
end

-- Whether v is an options table rather than a namespace or a mount table.
local function is_options(v)
  return type(v) == "table" and not mtable.is(v) and v[1] == nil
    and type(v.mounts) ~= "function"
end

-- {t = mount table, label = string|nil, id = number|nil} for one argument.
local function item_of(v, i)
  if type(v) == "table" and type(v.mounts) == "function" then
    local t, err = v:mounts()
    if not t then error(err, 3) end
    local label = type(v.label) == "function" and v:label() or nil
    local id = type(v.id) == "function" and v:id() or nil
    return { t = t, label = label, id = id }
  end
  if type(v) ~= "table" then
    error(string.format("bad argument #%d to 'dot' (namespace or mount table "
      .. "expected, got %s)", i, type(v)), 3)
  end
  format.check_records(v, i, "dot", 3)
  local label = v.name or v.label
  return { t = v, label = type(label) == "string" and label or nil }
end

-- The node text of a mount: its mount point, then "#ID" and the optional
-- fields as mountinfo shows them ("private" when it has none).
local function node_label(m)
  local prop = record.optional(m)
  return format.mangle(m.target) .. "\n#" .. tostring(m.id) .. " "
    .. (prop == "" and "private" or prop)
end

--- Graphviz text for mount namespaces and the peer groups joining them.
-- @param ... scenario namespaces (objects with `:mounts()`, `:id()` and
-- `:label()`) or mount tables (a table's `name` field labels it); a last
-- argument that is neither is an options table: `normalize = true`
-- renumbers mount IDs, peer groups and devices as `mountns.normalize` does
-- and leaves out the namespace IDs, so the text is the same run after run;
-- `title` is the graph's label.
-- @treturn string DOT text for `dot -Tsvg`
-- @usage io.open("article.dot", "w"):write(mountns.dot(sh1, sh2))
function M.dot(...)
  local args = { n = select("#", ...), ... }
  local opts = {}
  if args.n > 0 and is_options(args[args.n]) then
    opts = argcheck.options(args[args.n], "dot", args.n, { "normalize", "title" }, 2)
    args.n = args.n - 1
  end
  local items = {}
  for i = 1, args.n do items[i] = item_of(args[i], i) end
  if opts.normalize then
    local ts = {}
    for i, it in ipairs(items) do ts[i] = it.t end
    local norm = { format.normalize(unpack(ts, 1, #ts)) }
    for i, it in ipairs(items) do it.t, it.id = norm[i], nil end
  end

  local out = { "digraph mountns {" }
  local function add(s) out[#out + 1] = s end
  add('  graph [fontname="Helvetica", fontsize=12, labeljust="l", '
    .. 'newrank=true, nodesep=0.3, ranksep=0.4];')
  if opts.title then add("  label=" .. q(opts.title) .. ";") end
  add('  node [shape="box", style="rounded,filled", fillcolor="white", '
    .. 'fontname="Helvetica", fontsize=10];')
  add('  edge [color="#555555", arrowsize=0.6];')

  -- peer groups in order of first appearance (members, then masters)
  local groups, order = {}, {}
  local function group(gid)
    local g = groups[gid]
    if not g then
      g = { id = gid, members = {}, slaves = {} }
      groups[gid] = g
      order[#order + 1] = g
      g.colour = COLOURS[(#order - 1) % #COLOURS + 1]
    end
    return g
  end

  -- node names per namespace, per mount ID
  local names = {}
  for i, it in ipairs(items) do
    local seen = {}
    names[i] = {}
    for j, m in ipairs(it.t) do
      local name = "ns" .. i .. "_m" .. tostring(m.id)
      if seen[name] then name = name .. "_" .. j end
      seen[name] = true
      names[i][m] = name
      if m.shared then
        local g = group(m.shared)
        g.members[#g.members + 1] = name
      end
      if m.master then
        local g = group(m.master)
        g.slaves[#g.slaves + 1] = name
      end
    end
  end

  for i, it in ipairs(items) do
    local label = it.label or ("ns" .. i)
    if it.id then label = label .. " mnt:[" .. tostring(it.id) .. "]" end
    add("")
    add("  subgraph cluster_" .. i .. " {")
    add("    label=" .. q(label) .. ";")
    add('    style="rounded"; color="#888888";')
    local rows = mtable.tree_rows(it.t)
    for _, r in ipairs(rows) do
      local m = r[2]
      local a = { { "label", node_label(m) } }
      local classes = {}
      if m.shared then
        local g = groups[m.shared]
        a[#a + 1] = { "fillcolor", g.colour[1] }
        classes[#classes + 1] = "peer-group-" .. tostring(m.shared)
      elseif m.unbindable then
        a[#a + 1] = { "fillcolor", "#eeeeee" }
        a[#a + 1] = { "style", "rounded,filled,dotted" }
      end
      if m.master then
        local g = groups[m.master]
        a[#a + 1] = { "color", g.colour[2] }
        a[#a + 1] = { "penwidth", "2" }
        classes[#classes + 1] = "slave-of-" .. tostring(m.master)
      end
      if #classes > 0 then a[#a + 1] = { "class", table.concat(classes, " ") } end
      add("    " .. names[i][m] .. attrs(a) .. ";")
    end
    local by_id = {}
    for _, m in ipairs(it.t) do by_id[m.id] = m end
    for _, r in ipairs(rows) do
      local m = r[2]
      local p = by_id[m.parent_id]
      if p and p ~= m then
        add("    " .. names[i][p] .. " -> " .. names[i][m] .. ' [class="tree"];')
      end
    end
    add("  }")
  end

  for _, g in ipairs(order) do
    local gid = tostring(g.id)
    add("")
    add("  // peer group " .. gid .. ": " .. (#g.members > 0
      and table.concat(g.members, " ") or "(no member shown)"))
    local from = g.members[1]
    if not from then
      -- the master lives in a namespace not drawn: one node stands for it
      from = "group_" .. gid:gsub("%W", "_")
      add("  " .. from .. attrs { { "label", "peer group " .. gid .. "\n(not shown)" },
        { "fillcolor", g.colour[1] }, { "color", g.colour[2] },
        { "style", "rounded,filled,dashed" }, { "class", "peer-group-" .. gid } } .. ";")
    end
    for k = 2, #g.members do
      add("  " .. g.members[k - 1] .. " -> " .. g.members[k] .. attrs {
        { "dir", "none" }, { "style", "dashed" }, { "color", g.colour[2] },
        { "penwidth", "1.5" }, { "constraint", "false" },
        { "tooltip", "peer group " .. gid }, { "class", "peer peer-group-" .. gid } } .. ";")
    end
    for _, s in ipairs(g.slaves) do
      add("  " .. from .. " -> " .. s .. attrs {
        { "style", "bold" }, { "color", g.colour[2] }, { "constraint", "false" },
        { "tooltip", "master:" .. gid }, { "class", "slave slave-of-" .. gid } }
        .. "; // slave of " .. gid)
    end
  end
  add("}")
  return table.concat(out, "\n") .. "\n"
end

return M
