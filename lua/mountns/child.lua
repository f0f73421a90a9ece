--- child: what crosses between a mountns process and its forked children.
-- isolate's child, a scenario's agents and its helpers send Lua values
-- through pipes. A value crosses as a length-prefixed binary form, not as
-- Lua source fed to `load`: `load` overflows the C stack on deeply nested
-- constructors (LUAI_MAXCCALLS, 200 levels), costs many times the text's
-- size in memory, and cannot express a table seen twice. Both sides walk
-- values with an explicit stack, so depth is bounded only by MAX_BYTES
-- (not by the C stack of Lua 5.1 or LuaJIT), and each table crosses once: a
-- table reached again (a shared subtable, a cycle) comes back as the same
-- table. Mount tables (`mountns.table`) come back as mount tables.
--
-- The form (by hand: string.pack is 5.3+ only): `n` nil, `t`/`f` booleans,
-- `p<varint>`/`m<varint>` an integer below 2^53 and its sign, `i<dec>;` a
-- larger one (5.3+), `d<%.17g>;` a float, `s<varint><bytes>` a string
-- (a varint: 7 bits a byte, low first, the high bit on all but the
-- last), `T` or `M` (a mount table) opens a table whose key/value pairs
-- follow until `E`, `R<k>;` is the k-th table opened. A message is
-- `<count>;` then that many values. The receiver trusts no message: it
-- checks one whole before it makes a value (decode).
-- @module mountns.child

local core = require "mountns.core"
local mtable = require "mountns.table"
local verdict = require "mountns.verdict"

local M = {}

--- The largest message (a result, a request) that crosses, in bytes:
-- a bigger one raises, naming this limit, before any of it is sent.
M.MAX_BYTES = 64 * 1024 * 1024

local math_type = math.type -- luacheck: ignore (nil on 5.1, 5.2, LuaJIT)
-- computed: 5.1 folds the constant -0.0 into 0
local NEG_ZERO = -tonumber("0.0")
local mount_mt = getmetatable(mtable.new({}))

local char, floor = string.char, math.floor

-- A length or a magnitude below 2^53 as a varint: 7 bits a byte, low
-- bits first, the high bit set on every byte but the last. By hand:
-- string.pack is 5.3+ only.
local function varint(z)
  if z < 128 then return char(z) end
  -- two and three bytes (lengths up to 2 MB) without the table: ~30% off
  -- the encoding of a result of many strings
  local b0 = z % 128
  local z1 = floor((z - b0) / 128)
  if z1 < 128 then return char(b0 + 128, z1) end
  local b1 = z1 % 128
  local z2 = floor((z1 - b1) / 128)
  if z2 < 128 then return char(b0 + 128, b1 + 128, z2) end
  local bytes = {}
  while z >= 128 do
    local low = z % 128
    bytes[#bytes + 1] = low + 128
    z = floor((z - low) / 128)
  end
  bytes[#bytes + 1] = z
  return char((table.unpack or unpack)(bytes)) -- luacheck: ignore
end

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

-- A number's token: `p`/`m` and a varint for an integer below 2^53 (not
-- -0), else its text.
local function number_token(v)
  if v % 1 == 0 and v > -2^53 and v < 2^53 and (v ~= 0 or 1 / v > 0)
      and (not math_type or math_type(v) == "integer") then
    return v < 0 and "m" .. varint(-v) or "p" .. varint(v)
  end
  local tag, text = number_text(v)
  return tag .. text .. ";"
end

-- Write a scalar v (of type ty) into out after index no: the new last
-- index, or nil when v is no scalar (a table, or what cannot cross). The
-- one home of the scalar tokens, for encode's fast path and its walker.
local function put_scalar(out, no, v, ty)
  if ty == "string" then
    out[no + 1] = "s" .. varint(#v)
    out[no + 2] = v
    return no + 2
  elseif ty == "number" then
    out[no + 1] = number_token(v)
  elseif ty == "boolean" then
    out[no + 1] = v and "t" or "f"
  elseif v == nil then
    out[no + 1] = "n"
  else
    return nil
  end
  return no + 1
end

local encode_tables

--- Encode values (nil, booleans, numbers, strings, tables of these).
-- @tparam string what how to name a top-level value in errors:
-- "argument" gives "argument #2", "result" gives "result #1"
-- @tparam table vals the values, vals[1] .. vals[n]
-- @tparam[opt] int n how many (default vals.n, else #vals)
-- @tparam[opt=0] int skip vals[skip + 1] is named "what #1" in errors
-- @treturn string the message
function M.encode(what, vals, n, skip)
  n = n or vals.n or #vals
  -- the common message (an agent's request or reply): scalars only, written
  -- in one pass without the table walker's state (about 10x cheaper)
  local out, no, size, max = { n .. ";" }, 1, 0, M.MAX_BYTES
  for i = 1, n do
    local v = vals[i]
    local ty = type(v)
    size = size + 32
    if ty == "string" then size = size + #v end
    -- past the limit, a table, what cannot cross: the walker's
    no = size <= max and put_scalar(out, no, v, ty)
    if not no then return encode_tables(what, vals, n, skip) end
  end
  return table.concat(out)
end

-- encode's general case: tables (walked with an explicit stack), values
-- that cannot cross (raised naming them), the size limit.
function encode_tables(what, vals, n, skip)
  skip = skip or 0
  local max = M.MAX_BYTES
  local out, no, size = { n .. ";" }, 1, 0
  local seen, count = {}, 0
  -- the open tables, innermost last: the table, the key next() goes on
  -- from, and a value still to write (after a key that is a table)
  local ft, fk, fv, fpend, depth = {}, {}, {}, {}, 0
  -- where each table was found, for the message of a value that cannot cross
  local parent, key_in, top_names = {}, {}, {}
  local function too_large()
    error(string.format("%s: too large to cross a process (more than "
      .. "%d bytes, mountns.child.MAX_BYTES)", what, max), 0)
  end
  local function bad(v, holder, key, as_key)
    local where = holder and path_of(top_names, parent, key_in, holder, key)
      or key
    error(string.format("%s%s is a %s: only nil, booleans, numbers, strings "
      .. "and tables cross a process", where, as_key and " (a key)" or "",
      type(v)), 0)
  end
  -- Write v; true if v is a table opened here (its pairs come next).
  local function emit(v, holder, key, as_key)
    local ty = type(v)
    -- size bounds the message from above: 32 bytes a token (a float's
    -- text is the longest, 26) plus a string's bytes
    size = size + 32
    if ty == "string" then
      size = size + #v
      if size > max then too_large() end
    end
    local at = put_scalar(out, no, v, ty)
    if at then
      no = at
    elseif ty == "table" then
      local id = seen[v]
      no = no + 1
      if id then
        out[no] = "R" .. id .. ";"
        return false
      end
      count = count + 1
      seen[v] = count
      if holder then
        parent[v], key_in[v] = holder, key
      else
        top_names[v] = key
      end
      out[no] = getmetatable(v) == mount_mt and "M" or "T"
      depth = depth + 1
      ft[depth], fk[depth], fpend[depth] = v, nil, false
      return true
    else
      bad(v, holder, key, as_key)
    end
    return false
  end
  for i = 1, n do
    emit(vals[i], nil, what .. " #" .. (i - skip))
    while depth > 0 do
      local d = depth
      local t, k = ft[d], fk[d]
      local descended = false
      if fpend[d] then
        -- the key k was a table, now written: its value comes next
        local v = fv[d]
        fpend[d], fv[d] = false, nil
        descended = emit(v, t, k)
      end
      if not descended then
        local v
        k, v = next(t, k)
        while k ~= nil do
          if size > max then too_large() end
          if emit(k, t, k, true) then
            fk[d], fv[d], fpend[d] = k, v, true
            break
          end
          if emit(v, t, k) then
            fk[d] = k
            break
          end
          k, v = next(t, k)
        end
        if k == nil then
          no = no + 1
          out[no] = "E"
          ft[d], fk[d], fv[d], fpend[d] = nil, nil, nil, nil
          depth = d - 1
        end
      end
    end
  end
  -- the values after the last check (a table's last pair, scalars after
  -- it): decode refuses a message past the limit, so none leaves here
  if size > max then too_large() end
  return table.concat(out)
end

local function corrupt(pos)
  error("mountns.child: corrupt message at byte " .. pos, 0)
end

local function past_limit(max, pos)
  error(string.format("mountns.child: message larger than %d bytes "
    .. "(mountns.child.MAX_BYTES, 32 a value) at byte %d", max, pos), 0)
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

local byte, find, sub = string.byte, string.find, string.sub
local B_s, B_i, B_d, B_R = byte("s"), byte("i"), byte("d"), byte("R")
local B_t, B_f, B_n = byte("t"), byte("f"), byte("n")
local B_T, B_M, B_E = byte("T"), byte("M"), byte("E")
local B_p, B_m = byte("p"), byte("m")

-- The texts encode writes after `d` (number_text: "%.17g" and the
-- special values) and after `i` (an integer's decimal digits), up to the
-- `;`: tonumber reads each of them (or number_of does), and only them.
local FLOAT_FORMS = { "^%-?%d+%.?%d*;", "^%-?%d+%.?%d*e[%-+]%d+;", "^%-?inf;", "^nan;" }
local INTEGER_FORM = "^%-?%d+;"
-- the longest text of a number (%.17g: 24 bytes) or a table's index
local TEXT_MAX = 32

-- the `;` that ends the float text after a `d` at pos, or nil
local function float_end(s, pos)
  for i = 1, #FLOAT_FORMS do
    local _, e = find(s, FLOAT_FORMS[i], pos + 1)
    if e then return e end
  end
end

-- Levels of open tables whose "a key waits" bits one number holds: 48
-- (exact in a double on every Lua); the first pass keeps these bits, not
-- a table slot a level (16 bytes a `T`): a third of a byte a level.
local LEVELS = 48
-- tokens read between two looks at the clock (a few milliseconds)
local TICK = 16384

-- The one reader of the form. decode calls it twice: first with make
-- false, which checks the whole message and makes nothing (no value, no
-- table: a frame of `T`s never closed once cost 110 times its size in
-- tables before its end was found corrupt), then with make true, which
-- makes the values. Each pass is linear in the message's length and
-- raises, naming the byte, on any message encode could not have written;
-- none reaches Lua's own errors ("table index is NaN"). Every value
-- counts 32 bytes and a string its bytes, as encode counts them against
-- MAX_BYTES: a message encode would refuse is refused, so a frame's
-- values cost at most what the sender's own limit let it send.
local function read(s, make, deadline)
  local _, semi = find(s, "^%d+;")
  if not semi or semi > 11 then corrupt(1) end
  local n = tonumber(sub(s, 1, semi - 1))
  local pos, len = semi + 1, #s
  -- every value takes a byte at least
  if n > len - semi then corrupt(1) end
  local vals = make and { n = n }
  local ntables, tables = 0, nil
  -- made tables (for `R`) and the open ones, innermost last, with the key
  -- waiting for its value: made at the first table
  local st, sk
  -- whether a key waits in the innermost open table; the same bit of the
  -- tables around it, LEVELS to a number: `word` the innermost's, `words`
  -- the others' (made at the first level past LEVELS)
  local waiting, word, words, depth = false, 0, nil, 0
  local size, max, nvals, tick = 0, M.MAX_BYTES, 0, TICK
  while nvals < n do
    local tag = byte(s, pos)
    local v, done, nokey = nil, true, false
    tick = tick - 1
    if tick == 0 then
      tick = TICK
      if deadline and core.clock() > deadline then
        error(string.format("mountns.child: decoding ran past its deadline (at byte %d "
          .. "of %d)", pos, len), 0)
      end
    end
    -- encode's count: 32 bytes a value (not an `E`), a string's bytes;
    -- checked once the token is read
    size = size + 32
    if tag == B_s or tag == B_p or tag == B_m then
      -- a varint: a string's length or an integer's magnitude, below 2^53
      -- (8 bytes at most: 7 of 7 bits, the last one's 4)
      pos = pos + 1
      local z = byte(s, pos)
      if z and z >= 128 then
        local b, mul = z, 1
        z = 0
        while b and b >= 128 and mul < 2^49 do
          z = z + (b - 128) * mul
          mul = mul * 128
          pos = pos + 1
          b = byte(s, pos)
        end
        if not b or b >= 128 then corrupt(pos) end
        z = z + b * mul
        if z >= 2^53 then corrupt(pos) end
      elseif not z then
        corrupt(pos)
      end
      pos = pos + 1
      if tag == B_s then
        if z > len - pos + 1 then corrupt(pos) end
        size = size + z
        if make then v = sub(s, pos, pos + z - 1) end
        pos = pos + z
      elseif make then
        v = tag == B_p and z or -z
      end
    elseif tag == B_t then
      v = true
      pos = pos + 1
    elseif tag == B_f then
      v = false
      pos = pos + 1
    elseif tag == B_n then
      nokey = true
      pos = pos + 1
    elseif tag == B_T or tag == B_M then
      ntables = ntables + 1
      -- the bit of the table it opens in (a key waits: it is a value)
      if depth > 0 and depth % LEVELS == 0 then
        words = words or {}
        words[depth / LEVELS] = word
        word = 0
      end
      word = word * 2 + (waiting and 1 or 0)
      depth = depth + 1
      waiting = false
      if make then
        local t = tag == B_M and mtable.new({}) or {}
        if not tables then tables, st, sk = {}, {}, {} end
        tables[ntables] = t
        st[depth] = t
      end
      done = false
      pos = pos + 1
    elseif tag == B_E then
      if depth == 0 or waiting then corrupt(pos) end
      size = size - 32
      local bit = word % 2
      word = (word - bit) / 2
      waiting = bit == 1
      if make then
        v = st[depth]
        st[depth], sk[depth] = nil, nil
      end
      depth = depth - 1
      if depth > 0 and depth % LEVELS == 0 then
        word = words[depth / LEVELS]
        words[depth / LEVELS] = nil
      end
      pos = pos + 1
    elseif tag == B_i or tag == B_d or tag == B_R then
      local e
      if tag == B_d then
        e = float_end(s, pos)
        nokey = byte(s, pos + 1) == B_n -- nan: no table's key
      else
        _, e = find(s, tag == B_i and INTEGER_FORM or "^%d+;", pos + 1)
      end
      if not e or e - pos > TEXT_MAX then corrupt(pos) end
      if tag == B_R then
        local k = tonumber(sub(s, pos + 1, e - 1))
        if k < 1 or k > ntables then corrupt(pos) end
        if make then v = tables[k] end
      elseif make then
        local text = sub(s, pos + 1, e - 1)
        v = tag == B_i and tonumber(text) or number_of("d", text, pos)
      end
      pos = e + 1
    else
      corrupt(pos)
    end
    if size > max then past_limit(max, pos) end
    if done then
      if depth == 0 then
        nvals = nvals + 1
        if make then vals[nvals] = v end
      elseif waiting then
        if make then st[depth][sk[depth]] = v end
        waiting = false
      else
        if nokey then corrupt(pos) end
        if make then sk[depth] = v end
        waiting = true
      end
    end
  end
  if pos ~= len + 1 then corrupt(pos) end
  return vals
end

--- Decode a message made by encode. Any other string raises
-- "mountns.child: ..." naming the byte where it goes wrong, having made
-- no value: the whole message is checked first. Time is linear in the
-- message's length; memory beyond the message is the values' own and,
-- while checking, a bit a level of nesting (no depth bound but the count
-- of MAX_BYTES: 32 a value).
-- @tparam string s the message
-- @tparam[opt] number deadline a `core.clock()` time: a decode still
-- running then raises "mountns.child: decoding ran past its deadline"
-- @treturn table the values, with `n` their count
function M.decode(s, deadline)
  read(s, false, deadline)
  return read(s, true, deadline)
end

-- The fds no child of this process may hold (`keep_from_children`).
local parent_only = {}

--- Keep an fd from every child this process forks from now on (`fork`
-- closes it in the child before its body runs), or with `keep` false no
-- longer. For a channel whose far end trusts what comes through it: the
-- pipe a scenario's process sends its one result on, the pipes of a `mountns
-- run` script's process to the runner; a scenario's agents and helpers,
-- forked from there, must not be able to write a frame into it (nor hold
-- it open: its end of file says the sender is done). A child forked by
-- `core.fork` directly (a scenario's own code) still inherits it.
-- @tparam int fd
-- @tparam[opt=true] boolean keep
function M.keep_from_children(fd, keep)
  parent_only[fd] = keep ~= false or nil
end

--- Fork a child that runs body(...) and ends with _exit: its status is
-- what body returns (0 if nothing), 1 if body raises. The child never
-- returns into the caller's code: fork copied the caller's frames, and
-- running them twice would run the caller's program twice.
-- @tparam function body
-- @param ... body's arguments
-- @treturn[1] int the child's PID (in the parent)
-- @return[2] nil
-- @treturn[2] string "fork: strerror (ENAME)"
-- @treturn[2] int errno
function M.fork(body, ...)
  local pid, err, errno = core.fork()
  if pid == 0 then
    for fd in pairs(parent_only) do core.close_fd(fd) end
    parent_only = {}
    local ok, code = pcall(body, ...)
    if not ok then code = 1 end
    core._exit(tonumber(code) or 0)
  end
  return pid, err, errno
end

-- ---- spawn: the one way a mountns module starts a child --------------------
-- Every child mountns forks (isolate's, a scenario's template maker, the
-- helper of ns:pid, ns:exec's supervisor and its tool, an agent, another
-- namespace's reader, a `mountns run` script's process, the probe of user
-- namespaces) starts here, with its pipes named, so the rules of the
-- trust issue live in one place: the caller's ends of the pipes are kept
-- from every other child (`keep_from_children`: no child can hold or
-- write another's channel), the child's ends are closed in the caller
-- and the caller's in the child, every wait is bounded by the child's
-- deadline (`core.waitpid(pid, "block", timeout)`), and a child that runs
-- past it is killed with its whole tree (`kill_tree`). No module but this
-- one calls `core.fork`, `core.waitpid` or `core.kill_tree`
-- (spec/tools/layers.lua checks it).

local Proc = {}
Proc.__index = Proc

-- close every fd of a list (pcall: the list may hold a failed pipe's nil)
local function close_all(fds)
  for _, fd in pairs(fds) do core.close_fd(fd) end
end

--- Fork a child with named pipes between it and the caller.
-- @tparam table spec `up`: the names of the pipes the child writes and the
-- caller reads; `down`: those the caller writes and the child reads;
-- `timeout` (seconds, optional): the child's deadline, which bounds
-- `receive`, `wait` and `finish` when they are given no timeout
-- @tparam function body body(fds, ...) runs in the child (see `fork`):
-- fds[name] is the child's end of each pipe, the caller's ends closed
-- @param ... body's arguments
-- @treturn[1] table the child: `pid`, `fds` (the caller's end of each pipe,
-- by name), `deadline`; the methods below
-- @return[2] nil
-- @treturn[2] string "pipe: ..." or "fork: ..."
-- @treturn[2] int errno
function M.spawn(spec, body, ...)
  local mine, theirs = {}, {}
  local function pipes(names, up)
    for _, name in ipairs(names or {}) do
      local r, w, errno = core.pipe()
      if not r then return w, errno end
      if up then mine[name], theirs[name] = r, w else mine[name], theirs[name] = w, r end
    end
  end
  local err, errno = pipes(spec.up, true)
  if not err then err, errno = pipes(spec.down, false) end
  if err then
    close_all(mine); close_all(theirs)
    return nil, err, errno
  end
  local pid, ferr, ferrno = M.fork(function(...)
    close_all(mine)
    return body(theirs, ...)
  end, ...)
  close_all(theirs)
  if not pid then
    close_all(mine)
    return nil, ferr, ferrno
  end
  for _, fd in pairs(mine) do M.keep_from_children(fd) end
  return setmetatable({ pid = pid, fds = mine,
                        deadline = spec.timeout and core.clock() + spec.timeout }, Proc)
end

--- The seconds left until the child's deadline (0 past it), nil without one.
function Proc:left()
  return self.deadline and math.max(0, self.deadline - core.clock())
end

--- Close the caller's end of the pipe `name`, or of every pipe; twice is harmless.
-- @tparam[opt] string name
function Proc:close(name)
  for n, fd in pairs(self.fds) do
    if name == nil or n == name then
      M.keep_from_children(fd, false)
      core.close_fd(fd)
      self.fds[n] = nil
    end
  end
end

--- Receive one frame (`receive`) from the pipe `name`, for `timeout`
-- seconds at most (default: until the child's deadline).
function Proc:receive(name, timeout)
  return M.receive(self.fds[name], timeout or self:left())
end

--- Wait for the child's end, for `timeout` seconds at most (default: until
-- its deadline; without one, for as long as it takes; 0: a look). Reaps it
-- once: later calls return the same.
-- @treturn[1] string "exited" or "killed", and the status or signal (as `core.waitpid`)
-- @treturn[2] string "running": still running when the time was up
-- @return[3] nil
-- @treturn[3] string "waitpid: ..." (as `core.waitpid`)
function Proc:wait(timeout)
  return self:reap(timeout or self:left())
end

-- wait's work: timeout nil waits for as long as it takes
function Proc:reap(timeout)
  if self.how then return self.how, self.code end
  local how, code
  if timeout == 0 then
    how, code = core.waitpid(self.pid, "nohang")
  elseif timeout then
    how, code = core.waitpid(self.pid, "block", timeout)
  else
    how, code = core.waitpid(self.pid)
  end
  if how == "running" or not how then return how, code end
  self.how, self.code = how, code
  return how, code
end

--- SIGKILL the child alone, not waiting (`wait` reaps it): for a child that
-- runs no code of the user and forks nothing (an agent, a helper).
function Proc:kill()
  if not self.how then core.kill(self.pid, "KILL") end
end

--- Kill the child and every process under it (`kill_tree`: each stopped
-- before its children are read), and reap it. Its pipes stay open (what
-- it wrote can still be read): `close` closes them.
-- @return how it ended, as `wait`
function Proc:kill_tree()
  if self.how then return self.how, self.code end
  M.kill_tree(self.pid)
  return self:reap()
end

--- The child's end: its pipes closed, waited for `timeout` seconds at most
-- (default: until its deadline), then killed with its tree.
-- @treturn string how, as `wait`
-- @return code
-- @treturn boolean true when it was killed for running past the time
function Proc:finish(timeout)
  self:close()
  local how, code = self:wait(timeout)
  if how ~= "running" then return how, code, false end
  how, code = self:kill_tree()
  return how, code, true
end

--- Nothing a child starts outlives it. A forked child gets SIGKILL when
-- its parent dies (core.fork), but what a program it runs forks does
-- not, and an orphan goes to PID 1: `sh -c "sleep 25 &"` run by ns:exec
-- would outlive the scenario and keep its namespaces alive. So a child
-- that runs the user's code or programs (isolate's and a scenario's,
-- ns:exec's) calls `contain` first: it becomes a child subreaper (an
-- orphan in its tree becomes its child), and at its end
-- `kill_tree(core.getpid())` kills whatever is left. A parent that
-- kills such a child (a timeout, Ctrl-C) kills its tree with `kill_tree`
-- too: each process stopped before its children are listed, top-down,
-- then all killed (csrc/proctree.c).
function M.contain()
  assert(core.child_subreaper())
end

--- Kill pid and every process under it, or, given the caller's own PID,
-- every process under the caller (reaped). The caller reaps pid.
-- @tparam int pid
-- @treturn int how many were killed
function M.kill_tree(pid)
  return core.kill_tree(pid)
end

--- Reap the PIDs of a list that have ended (all of them, waiting for
-- each, with `wait`), and take them out of the list: the children whose
-- result is in but whose exit was not waited for (`mountns.isolate`'s,
-- `mountns run`'s scripts).
-- With `deadlines` (core.clock() times, by PID), a wait lasts until the
-- PID's deadline at most, then the process is killed (SIGKILL): a child
-- that sent its result and does not end cannot hold its parent.
-- @tparam table list PIDs
-- @tparam[opt] boolean wait
-- @tparam[opt] table deadlines
function M.reap_list(list, wait, deadlines)
  for i = #list, 1, -1 do
    local pid = list[i]
    if wait or core.waitpid(pid, "nohang") ~= "running" then
      local limit = wait and deadlines and deadlines[pid]
      local how = limit and core.waitpid(pid, "block", math.max(0, limit - core.clock()))
      if how == "running" then
        M.kill_tree(pid) -- and all it started
        how = nil
      end
      if wait and not how then core.waitpid(pid) end
      if deadlines then deadlines[pid] = nil end
      table.remove(list, i)
    end
  end
end

--- Send one frame: a kind letter, 8 hex digits of length, the body.
-- @tparam int fd a pipe's write end
-- @tparam string kind "o" (values), "e" (an error message), "f" (a test
-- framework's failure: see `is_failure`) or "s" (a skip's reason:
-- `mountns.verdict`)
-- @tparam string body
-- @treturn[1] boolean true
-- @return[2] nil
-- @treturn[2] string "write: ..." (EPIPE: the reader is gone)
function M.send(fd, kind, body)
  if #body > M.MAX_BYTES then
    if kind ~= "e" then
      error(string.format("mountns.child: a message of %d bytes is larger "
        .. "than mountns.child.MAX_BYTES (%d)", #body, M.MAX_BYTES), 2)
    end
    body = body:sub(1, M.MAX_BYTES) -- an error message: its start is enough
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

--- Whether an error is a test framework's failure, which must stay one
-- after the trip from a child: busted marks its failure objects so (its
-- metatable's `__type` is "failure"), and a failed luassert assertion
-- raises one under busted; a failed `mountns.expect` check raises a
-- string `mountns.verdict` marked so.
function M.is_failure(e)
  return verdict.status_of(e) == "fail"
end

local FAILURE = { __type = "failure", __tostring = function(e) return e.message end }

--- A failure (not an error) with this message, for a check of mountns's
-- own that fails a scenario as a failed assertion does: `is_failure` says
-- yes, it crosses from a child as one (no traceback of mountns's frames).
-- @tparam string msg
-- @treturn table the failure (`tostring` gives msg)
function M.failure(msg)
  return setmetatable({ message = msg }, FAILURE)
end

--- Raise a child's failure again in the parent, with the child's message:
-- through busted's own `fail` when busted runs the caller (so busted counts
-- a failed assertion as a failure, not an error), else as a string.
-- @tparam string msg
function M.raise_failure(msg)
  local busted = package.loaded.busted
  local fail = type(busted) == "table" and busted.fail
  if type(fail) == "function" then fail(msg, 0) end
  error(verdict.mark("fail", msg), 0)
end

--- Raise a child's skip again in the parent (`mountns.verdict.skip`,
-- busted's `pending`): through busted's own `pending` when busted runs
-- the caller (the spec is pending), else as the reason, a string marked
-- "skip" (`mountns.verdict`).
-- @tparam string reason
function M.raise_skip(reason)
  local pending = verdict.busted_pending()
  if pending then pending(reason) end
  error(verdict.mark("skip", reason), 0)
end

--- A child's error value as a string (a table's `message` field, else
-- tostring).
function M.message(e)
  if type(e) == "string" then return e end
  if type(e) == "table" and type(e.message) == "string" then return e.message end
  return tostring(e)
end

return M
