--- expect.events: the checks of what a call does: the errno it fails with (`fails`),
-- the mount events it makes (`propagates`, through mountns.watch).
-- @module mountns.expect.events

local mtable = require "mountns.table"
local argcheck = require "mountns.args"
local escape = require("mountns.core").escape
local errno = require("mountns.core").errno
local lazy = require "mountns.lazy" -- loaded on first use:
local namespace = lazy.require "mountns.namespace"
local watch = lazy.require "mountns.watch"
local model = lazy.require "mountns.model"
local D = require "mountns.expect.diagnostic"
local A = require "mountns.expect.arguments"
local ns_name, diagnostic, with_why = D.ns_name, D.diagnostic, D.with_why
local is_namespace = A.is_namespace

local M = {}
local checks = M

-- ---- fails --------------------------------------------------------------------

-- The namespaces a failing call was about: those among its arguments and
-- those its function holds (a closure over sh1), each with the paths
-- among the arguments marked.
local function involved(fn, args)
  local seen, nss, paths = {}, {}, {}
  local function add(v)
    if is_namespace(v) and not seen[v] and not v.closed then
      seen[v] = true
      nss[#nss + 1] = v
    end
  end
  for i = 1, args.n do
    local v = args[i]
    add(v)
    if type(v) == "string" and v:sub(1, 1) == "/" and not v:find("\0", 1, true) then
      paths[#paths + 1] = v
    end
  end
  if debug and debug.getupvalue then
    for i = 1, 255 do
      local name, v = debug.getupvalue(fn, i)
      if not name then break end
      add(v)
    end
  end
  local items = {}
  for _, ns in ipairs(nss) do
    items[#items + 1] = { ns, "" }
    for _, p in ipairs(paths) do items[#items + 1] = { ns, p } end
  end
  return items
end

-- ok, diagnostic, nothing (never invalid) and the message. An errno name
-- that mountns.errno does not know would be named by no message: the
-- check would fail for ever, its negation pass for ever.
function checks.fails(ename, fn, ...)
  if type(ename) ~= "string" then
    argcheck.error("fails", 1, "errno name (\"EINVAL\") expected, got "
      .. (ename == nil and "no value" or type(ename)), 2)
  end
  if type(errno[ename]) ~= "number" then
    argcheck.error("fails", 1, string.format("unknown errno name '%s' (a name of "
      .. "mountns.errno, as EINVAL or ENOENT)", escape(ename)), 2)
  end
  argcheck.typed(fn, "function", "fails", 2, 2)
  local args = { n = select("#", ...), ... }
  local ok, err, msg2 = pcall(fn, ...)
  -- a core call returns its failure (nil, message, errno): that counts too
  if ok and err == nil and type(msg2) == "string" then
    ok, err = false, msg2
  end
  local msg = not ok and tostring(err) or nil
  local hit = msg ~= nil and msg:find("(" .. ename .. ")", 1, true) ~= nil
  return hit, function(negated)
    local head
    if negated then
      head = string.format("expected no error naming %s, got: %s", ename, escape(tostring(msg)))
    elseif ok then
      head = string.format("expected an error naming %s, but the call succeeded", ename)
    else
      head = string.format("expected an error naming %s, got: %s", ename, escape(msg))
    end
    return diagnostic(head, involved(fn, args))
  end, nil, msg
end


-- ---- propagates: mount events -----------------------------------------------

local KINDS = { attach = true, detach = true, change = true }

local function event_text(ns, path, kind)
  return string.format("%s %s in %s", kind, escape(tostring(path)), ns_name(ns))
end

-- The arguments of expect.propagates: expected events, namespaces to watch
-- (each once), options. (level 3: parse_expected, the check, its caller)
local function parse_expected(...)
  local expected, watched, opts = {}, {}, {}
  for i = 1, select("#", ...) do
    local a = select(i, ...)
    if type(a) ~= "table" then
      argcheck.error("propagates", i + 1, "expected {ns, path [, kind]}, got " .. type(a), 3)
    end
    if a[1] == nil then
      argcheck.options(a, "propagates", i + 1, { "fallback", "settle" }, 3)
      argcheck.option(a, "fallback", "boolean", "propagates", i + 1, 3)
      local settle = a.settle
      if settle ~= nil and (type(settle) ~= "number" or settle ~= settle or settle < 0) then
        argcheck.error("propagates", i + 1, "option 'settle' must be a number of seconds "
          .. ">= 0, got " .. tostring(settle), 3)
      end
      for k, v in pairs(a) do opts[k] = v end
    else
      local ns, path, kind = a[1], a[2], a[3] or "attach"
      for k in pairs(a) do
        if k ~= 1 and k ~= 2 and k ~= 3 then
          argcheck.error("propagates", i + 1, "expected {ns, path [, kind]}, got a table with "
            .. "key " .. escape(tostring(k)), 3)
        end
      end
      if not (namespace.is_namespace(ns) or model.is_namespace(ns))
         or (path ~= nil and type(path) ~= "string") then
        argcheck.error("propagates", i + 1, "expected {ns, path [, kind]} with a scenario "
          .. "namespace (of the kernel or of the model) and a path", 3)
      end
      if not KINDS[kind] then
        argcheck.error("propagates", i + 1, string.format("expected {ns, path [, kind]} with "
          .. "kind attach, detach or change, got kind '%s'", escape(tostring(kind))), 3)
      end
      local seen = false
      for _, o in ipairs(watched) do if rawequal(o, ns) then seen = true end end
      if not seen then watched[#watched + 1] = ns end
      if path then
        expected[#expected + 1] = { ns = ns, kind = kind,
                                    path = mtable.normpath(path, "propagates", i + 1, 3) }
      end
    end
  end
  -- no namespace named: nothing watched, so nothing can be seen; the
  -- check would hold whatever event_fn did
  if #watched == 0 then
    argcheck.error("propagates", select("#", ...) + 2, "at least one {ns, path [, kind]} "
      .. "or {ns} expected", 3)
  end
  return expected, watched, opts
end

-- The check behind expect.propagates: run event_fn with a watch on every
-- namespace named, and compare the events with the expected ones.
-- Each argument after event_fn is `{ns, path [, kind]}` (kind "attach" by
-- default), or `{ns}` to watch a namespace that must see no event, or an
-- options table without [1] (`fallback = true`, `settle = seconds` to wait
-- for late events). Returns ok, a function returning the diagnostic,
-- nothing (never invalid), the received events.
local function check_propagates(event_fn, ...)
  argcheck.typed(event_fn, "function", "propagates", 1, 2)
  local expected, watched, opts = parse_expected(...)
  local watches = {}
  local ok, err = pcall(function()
    for i, ns in ipairs(watched) do
      -- a model namespace's events come from its world (model.events)
      local open = model.is_namespace(ns) and model.open_watch or watch.open
      watches[i] = open(ns, { fallback = opts.fallback, interval = false })
    end
    event_fn()
  end)
  local received = {}
  if ok then
    ok, err = pcall(function()
      for _, w in ipairs(watches) do
        for _, ev in ipairs(w:events(opts.settle or 0)) do received[#received + 1] = ev end
      end
    end)
  end
  for _, w in ipairs(watches) do w:close() end
  if not ok then error(err, 0) end

  local used, missing, unexpected = {}, {}, {}
  for _, ev in ipairs(received) do
    local hit
    for j, x in ipairs(expected) do
      if not used[j] and x.ns == ev.ns and x.kind == ev.kind and x.path == ev.mount.target then
        hit = j
        break
      end
    end
    if hit then used[hit] = true else unexpected[#unexpected + 1] = ev end
  end
  for j, x in ipairs(expected) do
    if not used[j] then missing[#missing + 1] = x end
  end
  local pass = #missing == 0 and #unexpected == 0
  -- why: the first missing event's mount, else the first unexpected one's
  local why_ns, why_path
  if missing[1] then why_ns, why_path = missing[1].ns, missing[1].path
  elseif unexpected[1] then why_ns, why_path = unexpected[1].ns, unexpected[1].mount.target end
  return pass, with_why(function()
    local lines = { "expected exactly these mount events:" }
    for _, x in ipairs(expected) do
      lines[#lines + 1] = "  " .. event_text(x.ns, x.path, x.kind)
    end
    if #expected == 0 then lines[#lines + 1] = "  (none)" end
    lines[#lines + 1] = "received:"
    for _, ev in ipairs(received) do lines[#lines + 1] = "  " .. watch.describe(ev) end
    if #received == 0 then lines[#lines + 1] = "  (none)" end
    if #missing > 0 then
      lines[#lines + 1] = "missing:"
      for _, x in ipairs(missing) do
        lines[#lines + 1] = "  " .. event_text(x.ns, x.path, x.kind)
      end
    end
    if #unexpected > 0 then
      lines[#lines + 1] = "unexpected:"
      for _, ev in ipairs(unexpected) do lines[#lines + 1] = "  " .. watch.describe(ev) end
    end
    local items = {}
    for _, ns in ipairs(watched) do items[#items + 1] = { ns, "" } end
    for _, x in ipairs(expected) do items[#items + 1] = { x.ns, x.path } end
    for _, ev in ipairs(received) do
      if ev.mount.target then items[#items + 1] = { ev.ns, ev.mount.target } end
    end
    return diagnostic(table.concat(lines, "\n"), items)
  end, why_ns, why_path), nil, received
end
checks.propagates = check_propagates

return M
