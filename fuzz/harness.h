/*
 * harness.h - what the libFuzzer harnesses share: a Lua state with the
 * module's core linked in, and the core function under test kept in the
 * registry as "fuzz.parse" (or the whole core as "fuzz.core").
 */
#ifndef LMNS_FUZZ_HARNESS_H
#define LMNS_FUZZ_HARNESS_H

#include <stdint.h>
#include <stdlib.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

int luaopen_mountns_core(lua_State *L);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static lua_State *lmns_fuzz_L;

/* Open the state once and keep mountns.core[fname] as "fuzz.parse" (with
 * fname NULL, the whole module as "fuzz.core"). */
static void lmns_fuzz_open(const char *fname)
{
	lua_State *L = luaL_newstate();

	if (!L)
		abort();
	luaL_openlibs(L);
	luaL_requiref(L, "mountns.core", luaopen_mountns_core, 0);
	if (fname) {
		lua_getfield(L, -1, fname);
		lua_setfield(L, LUA_REGISTRYINDEX, "fuzz.parse");
	} else {
		lua_setfield(L, LUA_REGISTRYINDEX, "fuzz.core");
	}
	lua_settop(L, 0);
	lmns_fuzz_L = L;
}

#endif
