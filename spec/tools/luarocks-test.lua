-- `luarocks test rockspec/mountns-scm-1.rockspec [-- BUSTED ARGS]`: the
-- rockspec's test section runs this script (type "command") with the Lua
-- that luarocks targets, and it runs `make test` with that Lua. Not type
-- "busted": luarocks would look for busted among its installed rocks and,
-- not finding Debian's (lua-busted is not a rock), download it, which an
-- offline machine cannot; make test finds busted as a command, wherever
-- it came from (make tools names what is missing). Arguments after "--"
-- go to busted as BUSTED_ARGS. Exit status: make's.
local interp = jit and "luajit" or "lua" .. _VERSION:match("%d+%.%d+") -- luacheck: ignore
local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local words = {}
for i = 1, select("#", ...) do words[i] = (select(i, ...)) end
local cmd = "make test LUA=" .. interp
if #words > 0 then cmd = cmd .. " BUSTED_ARGS=" .. quote(table.concat(words, " ")) end
io.stdout:write(cmd, "\n")
io.stdout:flush()
if os.getenv("MOUNTNS_LUAROCKS_TEST_DRY") then os.exit(0) end -- (spec 39: the command only)
local ok, how, code = os.execute(cmd)
if type(ok) == "number" then -- Lua 5.1: the wait status
  os.exit(ok % 256 == 0 and math.floor(ok / 256) or 1)
end
os.exit(how == "exit" and code or 1)
