--- child: what crosses between a mountns process and its forked children.
-- isolate's child, a scenario's agents and its helpers send Lua values
-- through pipes. A value crosses as a length-prefixed binary form, not as
-- Lua source fed to `load`: `load` overflows the C stack on deeply nested
-- constructors (LUAI_MAXCCALLS, 200 levels), costs many times the text's
-- size in memory, and cannot express a table seen twice. Both sides walk
-- values with an explicit stack, so depth is bounded by memory only (not
-- by the C stack of Lua 5.1 or LuaJIT), and each table crosses once: a
-- table reached again (a shared subtable, a cycle) comes back as the same
-- table. Mount tables (`mountns.table`) come back as mount tables.
--
-- The form (lengths and numbers as decimal text, so any Lua from 5.1 on
-- reads it): `n` nil, `t`/`f` booleans, `i<dec>;` an integer, `d<%.17g>;`
-- a float, `s<len>;<bytes>` a string, `T` or `M` (a mount table) opens a
-- table whose key/value pairs follow until `E`, `R<k>;` is the k-th table
-- opened. A message is `<count>;` then that many values.
-- @module mountns.child

local core = require "mountns.core"
local mtable = require "mountns.table"

local M = {}

--- The largest message (a result, a request) that crosses, in bytes:
-- a bigger one raises, naming this limit, before any of it is sent.
M.MAX_BYTES = 64 * 1024 * 1024

local math_type = math.type -- luacheck: ignore (nil on 5.1, 5.2, LuaJIT)
-- computed: 5.1 folds the constant -0.0 into 0
local NEG_ZERO = -tonumber("0.0")
local mount_mt = getmetatable(mtable.new({}))

local function number_text(v)
  if v ~= v then return "d", "nan" end
  if v == math.huge then return "d", "inf" end
  if v == -math.huge then return "d", "-inf" end
  if math_type and math_type(v) == "integer" then return "i", tostring(v) end
  if v == 0 and 1 / v < 0 then return "d", "-0" end
  return "d", string.format("%.17g", v)
end

-- "[1]", '["x"]': one step of the path to a value that cannot cross
local function key_text(k)
  if type(k) == "string" then return string.format("[%q]", k) end
  return "[" .. tostring(k) .. "]"
end

-- The path of a value inside the message: the table that holds it and its
-- key, up to the top-level value.
local function path_of(top_names, parent, key_in, t, key)
  local steps = { key ~= nil and key_text(key) or nil }
  while parent[t] do
    table.insert(steps, 1, key_text(key_in[t]))
    t = parent[t]
  end
  return top_names[t] .. table.concat(steps)
end

--- Encode values (nil, booleans, numbers, strings, tables of these).
-- @tparam string what how to name a top-level value in errors:
-- "argument" gives "argument #2", "result" gives "result #1"
-- @tparam table vals the values, vals[1] .. vals[n]
-- @tparam[opt] int n how many (default vals.n, else #vals)
-- @tparam[opt=0] int skip vals[skip + 1] is named "what #1" in errors
-- @treturn string the message
function M.encode(what, vals, n, skip)
  n = n or vals.n or #vals
  skip = skip or 0
  local out, size = { n .. ";" }, 0
  local seen, count = {}, 0
  -- the work stack: a value, or END (close a table); the table holding
  -- the value and its key, for the message of a value that cannot cross
  local END = seen
  local wv, wt, wk = {}, {}, {}
  local top
  local parent, key_in, top_names = {}, {}, {}
  local function put(s)
    size = size + #s
    if size > M.MAX_BYTES then
      error(string.format("%s: too large to cross a process (more than "
        .. "%d bytes, mountns.child.MAX_BYTES)", what, M.MAX_BYTES), 0)
    end
    out[#out + 1] = s
  end
  local function bad(v, holder, key, as_key)
    local where = holder and path_of(top_names, parent, key_in, holder, key)
      or key
    error(string.format("%s%s is a %s: only nil, booleans, numbers, strings "
      .. "and tables cross a process", where, as_key and " (a key)" or "",
      type(v)), 0)
  end
  for i = 1, n do
    top = 1
    wv[1], wt[1], wk[1] = vals[i], nil, what .. " #" .. (i - skip)
    while top > 0 do
      local v, holder, key = wv[top], wt[top], wk[top]
      wv[top], wt[top], wk[top] = nil, nil, nil
      top = top - 1
      local ty = type(v)
      if rawequal(v, END) then
        put("E")
      elseif ty == "string" then
        put("s" .. #v .. ";"); put(v)
      elseif ty == "number" then
        local tag, text = number_text(v)
        put(tag .. text .. ";")
      elseif ty == "boolean" then
        put(v and "t" or "f")
      elseif v == nil then
        put("n")
      elseif ty == "table" then
        if seen[v] then
          put("R" .. seen[v] .. ";")
        else
          count = count + 1
          seen[v] = count
          if holder then
            parent[v], key_in[v] = holder, key
          else
            top_names[v] = key
          end
          put(getmetatable(v) == mount_mt and "M" or "T")
          top = top + 1
          wv[top] = END
          -- pairs pushed last come out first: keep next's order
          local pairs_ = {}
          for k, x in next, v do
            local kt = type(k)
            if kt == "function" or kt == "userdata" or kt == "thread" then
              bad(k, v, k, true)
            end
            pairs_[#pairs_ + 1] = k
            pairs_[#pairs_ + 1] = x
          end
          for j = #pairs_ - 1, 1, -2 do
            local k, x = pairs_[j], pairs_[j + 1]
            top = top + 1
            wv[top], wt[top], wk[top] = x, v, k
            top = top + 1
            wv[top], wt[top], wk[top] = k, v, k
          end
        end
      else
        bad(v, holder, key)
      end
    end
  end
  return table.concat(out)
end

local function corrupt(pos)
  error("mountns.child: corrupt message at byte " .. pos, 0)
end

local function number_of(tag, text, pos)
  if text == "nan" then return 0 / 0 end
  if text == "inf" then return math.huge end
  if text == "-inf" then return -math.huge end
  if text == "-0" then return NEG_ZERO end
  local v = tonumber(text)
  if v == nil then corrupt(pos) end
  if tag == "d" and math_type and math_type(v) == "integer" then
    return v + 0.0
  end
  return v
end

--- Decode a message made by encode.
-- @tparam string s the message
-- @treturn table the values, with `n` their count
function M.decode(s)
  local semi = s:find(";", 1, true)
  local n = semi and tonumber(s:sub(1, semi - 1))
  if not n then corrupt(1) end
  local pos, len = semi + 1, #s
  local vals = { n = n }
  local tables = {}
  -- the open tables, innermost last, with the key waiting for its value
  local st, sk, sh, depth = {}, {}, {}, 0
  local nvals = 0
  while nvals < n do
    if pos > len then corrupt(pos) end
    local tag = s:sub(pos, pos)
    local v, done = nil, true
    if tag == "s" then
      local e = s:find(";", pos + 1, true)
      local l = e and tonumber(s:sub(pos + 1, e - 1))
      if not l or e + l > len then corrupt(pos) end
      v = s:sub(e + 1, e + l)
      pos = e + l + 1
    elseif tag == "i" or tag == "d" or tag == "R" then
      local e = s:find(";", pos + 1, true)
      if not e then corrupt(pos) end
      local text = s:sub(pos + 1, e - 1)
      if tag == "R" then
        v = tables[tonumber(text)]
        if v == nil then corrupt(pos) end
      else
        v = number_of(tag, text, pos)
      end
      pos = e + 1
    elseif tag == "t" or tag == "f" or tag == "n" then
      v = tag == "t"
      if tag == "n" then v = nil end
      pos = pos + 1
    elseif tag == "T" or tag == "M" then
      local t = tag == "M" and mtable.new({}) or {}
      tables[#tables + 1] = t
      depth = depth + 1
      st[depth], sk[depth], sh[depth] = t, nil, false
      done = false
      pos = pos + 1
    elseif tag == "E" then
      if depth == 0 or sh[depth] then corrupt(pos) end
      v = st[depth]
      st[depth], sk[depth], sh[depth] = nil, nil, nil
      depth = depth - 1
      pos = pos + 1
    else
      corrupt(pos)
    end
    if done then
      if depth == 0 then
        nvals = nvals + 1
        vals[nvals] = v
      elseif sh[depth] then
        st[depth][sk[depth]] = v
        sk[depth], sh[depth] = nil, false
      else
        if v == nil then corrupt(pos) end
        sk[depth], sh[depth] = v, true
      end
    end
  end
  if pos ~= len + 1 then corrupt(pos) end
  return vals
end

--- Send one frame: a kind letter, 8 hex digits of length, the body.
-- @tparam int fd a pipe's write end
-- @tparam string kind "o" (values) or "e" (an error message)
-- @tparam string body
-- @treturn[1] boolean true
-- @return[2] nil
-- @treturn[2] string "write: ..." (EPIPE: the reader is gone)
function M.send(fd, kind, body)
  if #body > M.MAX_BYTES then
    body = "message too large"
    kind = "e"
  end
  return core.write_fd(fd, kind .. string.format("%08x", #body) .. body)
end

--- Receive one frame.
-- @tparam int fd a pipe's read end
-- @tparam[opt] number timeout seconds
-- @treturn[1] string the kind letter
-- @treturn[1] string the body
-- @return[2] nil
-- @treturn[2] string "eof", "timeout", "too large" or "read: ..."
function M.receive(fd, timeout)
  local head, err = core.read_exact(fd, 9, timeout)
  if not head then return nil, err end
  local len = tonumber(head:sub(2), 16)
  if not len then return nil, "corrupt frame" end
  if len > M.MAX_BYTES then return nil, "too large" end
  local body
  body, err = core.read_exact(fd, len, timeout)
  if not body then return nil, err end
  return head:sub(1, 1), body
end

--- "exited with status 3", "was killed by SIGSEGV": how a child ended,
-- from core.waitpid's results.
function M.ending(how, code)
  if how == "killed" then return "was killed by " .. tostring(code) end
  if how == "exited" then return "exited with status " .. tostring(code) end
  return "ended (" .. tostring(how) .. " " .. tostring(code) .. ")"
end

--- debug.traceback cut at the first frame of lua/mountns/<module>.lua: the
-- child's stack goes on into the caller's frames (fork copied them), which
-- are noise. A message that has a traceback already is kept as it is.
function M.traceback(e, module)
  if e:find("\nstack traceback:\n", 1, true) then return e end
  local tb = debug.traceback(e, 3)
  local cut = tb:find("\n\t%[C%]: in function 'xpcall'\n\t[^\n]*mountns/"
    .. module .. "%.lua")
  return cut and tb:sub(1, cut - 1) or tb
end

--- A child's error value as a string (a table's `message` field, else
-- tostring).
function M.message(e)
  if type(e) == "string" then return e end
  if type(e) == "table" and type(e.message) == "string" then return e.message end
  return tostring(e)
end

return M
