--- Precompiled modules: mountns' Lua modules loaded from bytecode that
-- `make` built, when it was built from the very source found now.
-- Compiling every module cost a one-scenario `mountns run` ~6.5 ms of its
-- 11 ms of CPU (issue 28): a scenario's child pivots away from the module
-- files, so the caller loads them all before the first fork
-- (`lazy.load_all`), and every `mountns run` and spec process paid it.
--
-- A searcher placed before Lua's own, for `mountns` and `mountns.*`
-- only, finds a module's source through package.path as require would,
-- then looks for its bytecode in one of two places next to it, never
-- anywhere else (a directory the sources do not come from is not trusted
-- with code):
--
-- - in a source tree (`R/lua/mountns/x.lua`): `R/BUILD/lua/mountns/x.luac`,
--   BUILD being the Makefile's directory for this interpreter (`build`
--   for Lua 5.4, `build/lua5.1`, `build/luajit`...: `M.build_dir`);
-- - an installed rock (`D/mountns/x.lua`): `D/mountns/x.luac` beside it.
--
-- A .luac file holds a header line (format, interpreter, chunk name, the
-- source's size and hash: `core.file_digest`), then `string.dump` of that
-- source loaded as `loadfile` loads it (debug information kept: lines and
-- local names). It is used only when its interpreter is this one and the
-- source found now has that size and hash (its content, not its mtime: a
-- copied or touched tree keeps its bytecode, an edit of any byte drops
-- it); anything else (no file, stale, another Lua, a load error) falls
-- back to the source, which Lua's own searcher then loads as before. The
-- source itself is not read into Lua: hashing it in C is ~1 ms less CPU a
-- run than reading it and comparing it with a copy.
--
-- Messages and tracebacks name `@` plus the path the source was found
-- by, which depends on package.path (`lua/mountns/x.lua`,
-- `/abs/tree/lua/...`, `bin/../lua/...`): the dump holds the chunk name it
-- was built with, so the loader writes the found path in its place (the
-- length-prefixed name, whose encoding each Lua version defines: `NAME`).
-- The same file, line numbers and text as from source.
-- @module mountns.bytecode

-- the sources' digest is core.so's: the model loads without it, and
-- then from source (`install` does nothing)
local has_core, core = pcall(require, "mountns.core")
-- only its absence is tolerated: a core.so that refuses to load (its
-- error: MOUNTNS_HUGE_PAGES=2) raises here, with its own message (Lua 5.1
-- would say "loop or previous error" at the next require)
if not has_core and not tostring(core):find("module 'mountns.core' not found", 1, true) then
  error(core, 0)
end

local M = {}

local FORMAT = "mountns-bytecode 2"

local loadstr = loadstring or load -- luacheck: ignore (5.1)

-- This interpreter: "Lua 5.4", "Lua 5.1", "LuaJIT 2.1.0-beta3"...
-- (LuaJIT reports _VERSION "Lua 5.1"; its bytecode is its own).
local interp = jit and jit.version or _VERSION -- luacheck: ignore (jit)

--- The Makefile's build directory for this interpreter, relative to the
-- source tree's top (`build` for Lua 5.4, else `build/lua5.N` or
-- `build/luajit`): where `make` puts core.so and the bytecode (bin/mountns
-- spells the same rule for core.so, before a plain `show`, which loads
-- no Lua module).
M.build_dir = jit and "build/luajit" -- luacheck: ignore (jit)
  or (_VERSION == "Lua 5.4" and "build" or "build/lua" .. _VERSION:match("%d+%.%d+"))

-- A little-endian unsigned integer of `size` bytes (size_t on the
-- platforms mountns runs on: Linux, x86-64 and arm64, little-endian).
local function le(n, size)
  local b = {}
  for i = 1, size do
    b[i] = string.char(n % 256)
    n = math.floor(n / 256)
  end
  return table.concat(b)
end

-- How each version dumps a chunk name (lundump.c / lj_bcread.c): the name
-- as it stands in the dump, its length prefix included. 5.1 and 5.2: a
-- size_t of the length with its NUL, then the NUL-terminated text (5.2
-- repeats it in every function); 5.3: one byte of length + 1, or 0xFF and
-- a size_t; 5.4: length + 1 in 7-bit groups, high group first, the last
-- one marked by 0x80; LuaJIT: the length in ULEB128. (A string constant
-- equal to the chunk name, with that prefix, would be renamed too: no
-- module holds its own chunk name.)
local NAME = {
  ["Lua 5.1"] = function(s) return le(#s + 1, 8) .. s .. "\0" end,
  ["Lua 5.3"] = function(s)
    return (#s + 1 < 255 and string.char(#s + 1) or "\255" .. le(#s + 1, 8)) .. s
  end,
  ["Lua 5.4"] = function(s)
    local n, b = #s + 1, {}
    b[1] = string.char(0x80 + n % 128)
    n = math.floor(n / 128)
    while n > 0 do
      table.insert(b, 1, string.char(n % 128))
      n = math.floor(n / 128)
    end
    return table.concat(b) .. s
  end,
  LuaJIT = function(s)
    local n, b = #s, {}
    repeat
      local low = n % 128
      n = math.floor(n / 128)
      b[#b + 1] = string.char(n > 0 and low + 128 or low)
    until n == 0
    return table.concat(b) .. s
  end,
}
NAME["Lua 5.2"] = NAME["Lua 5.1"]
local name_of = NAME[jit and "LuaJIT" or _VERSION] -- luacheck: ignore (jit)

-- Every occurrence of `old` in `s` replaced by `new`, both plain text.
local function replace(s, old, new)
  local out, i = {}, 1
  while true do
    local a, b = s:find(old, i, true)
    if not a then break end
    out[#out + 1] = s:sub(i, a - 1)
    out[#out + 1] = new
    i = b + 1
  end
  if i == 1 then return nil end
  out[#out + 1] = s:sub(i)
  return table.concat(out)
end

-- A whole file, or nil. Its size first: one read into one buffer of
-- that size, where read("*a") grows a buffer from 1 KB by copies (2x
-- faster).
local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local size = f:seek("end")
  local s = size and f:seek("set") and f:read(size)
  f:close()
  return s or ""
end

--- The bytecode file's text for one source file: what `make` writes.
-- @tparam string path the source file, as it will be named in messages
--   until the loader renames it (e.g. "lua/mountns/expect.lua")
-- @treturn string the .luac file's content
function M.compile(path)
  local digest = assert(core.file_digest(path))
  local fn = assert(loadfile(path)) -- loadfile's chunk: '#' line, BOM, "@path"
  return table.concat({ FORMAT, interp, "@" .. path, digest }, "\t") .. "\n"
    .. string.dump(fn)
end

--- The chunk of a .luac file's text, for the source of digest `digest`
-- found at `path`; nil when the file is not for this interpreter, not
-- built from this very source, or does not load.
-- @tparam string data the .luac file's content
-- @tparam string digest the source's `core.file_digest` now
-- @tparam string path the path the source was found by
-- @treturn function|nil the module's main chunk
function M.chunk(data, digest, path)
  local nl = data:find("\n", 1, true)
  if not nl then return nil end
  local format, who, built, was = data:sub(1, nl - 1):match("^(.-)\t(.-)\t(.-)\t(.-)$")
  if format ~= FORMAT or who ~= interp or was ~= digest then return nil end
  local code = data:sub(nl + 1)
  local want = "@" .. path
  if built ~= want then
    code = replace(code, name_of(built), name_of(want))
    if not code then return nil end
  end
  return (loadstr(code, want))
end

local ENOENT, ENOTDIR = 2, 20 -- Linux's

-- A module name's file below a package.path directory, as require's
-- searcher finds it: "mountns.x" -> "mountns/x.lua" or
-- "mountns/x/init.lua"; the path found, its digest, and the part of it
-- before that file (the directory, with its slash) and that file. A path
-- that exists but cannot be hashed (EACCES, a directory): nothing, and
-- Lua's own searcher decides what to do with it.
local function find_source(name)
  local rel = name:gsub("%.", "/")
  for template in package.path:gmatch("[^;]+") do
    local path = template:gsub("%?", rel)
    local digest, _, err = core.file_digest(path)
    if digest then
      for _, tail in ipairs({ rel .. ".lua", rel .. "/init.lua" }) do
        if path:sub(-#tail) == tail then
          return path, digest, path:sub(1, -#tail - 1), tail
        end
      end
      return nil -- found where no bytecode can be looked for
    elseif err ~= ENOENT and err ~= ENOTDIR then
      return nil
    end
  end
end

-- The bytecode's two places for a source `dir .. tail`: the build dir
-- of the tree whose lua/ holds it, and beside it.
local function bytecode_paths(dir, tail)
  local places = {}
  local root = dir == "lua/" and "" or dir:match("^(.*/)lua/$")
  if root then places[1] = root .. M.build_dir .. "/lua/" .. tail .. "c" end
  places[#places + 1] = dir .. tail .. "c"
  return places
end

--- The searcher: for `mountns` and `mountns.*`, the module's chunk from
-- its bytecode, and the source path (as Lua's searcher returns it: the
-- loader's second argument); nothing else, and nothing when no fresh
-- bytecode is there (Lua's own searcher, next, loads the source).
-- @tparam string name the module name require looks for
-- @treturn function|nil the chunk
-- @treturn string the path of its source
function M.searcher(name)
  -- (a name with other characters, "%" among them, is Lua's searcher's)
  if name ~= "mountns" and not name:match("^mountns%.[%w_.]+$") then return nil end
  local path, digest, dir, tail = find_source(name)
  if not path then return nil end
  for _, bc in ipairs(bytecode_paths(dir, tail)) do
    local data = read(bc)
    if data then
      local fn = M.chunk(data, digest, path)
      if fn then return fn, path end
    end
  end
  return nil
end

--- Put the searcher before Lua's own, once per Lua state (requiring this
-- module does it). The entry is a callable table marked as ours, so a
-- second copy of this module (busted unloads a spec file's modules) puts
-- its searcher in the same place instead of adding one more.
-- MOUNTNS_BYTECODE=0 in the environment leaves it out; so does a Lua
-- without mountns.core (the model alone).
function M.install()
  if not has_core or os.getenv("MOUNTNS_BYTECODE") == "0" then return end
  local searchers = package.searchers or package.loaders -- luacheck: ignore (5.1)
  local entry = setmetatable({ mountns_bytecode = true },
    { __call = function(_, name) return M.searcher(name) end })
  for i, s in ipairs(searchers) do
    if type(s) == "table" and s.mountns_bytecode then
      searchers[i] = entry
      return
    end
  end
  table.insert(searchers, 2, entry)
end

-- `lua lua/mountns/bytecode.lua --build OUTDIR FILE...` (make): each
-- lua/mountns/x.lua compiled into OUTDIR/mountns/x.luac.
local first, outdir = ...
if first == "--build" then
  for i = 3, select("#", ...) do
    local path = select(i, ...)
    local out = outdir .. "/" .. assert(path:match("^lua/(.*)$"), path) .. "c"
    local f = assert(io.open(out, "wb"))
    assert(f:write(M.compile(path)))
    assert(f:close())
  end
  return M
end

M.install()
return M
