-- The Lua code runs on 5.1-5.4 and LuaJIT.
std = "max"
max_line_length = 100
files["spec"] = { std = "+busted" }
exclude_files = { "build", ".luarocks", "lua_modules" }
