/*
 * mountinfo_fuzz.c - libFuzzer harness for mountns.parse_mountinfo.
 *
 * The module's C files are linked in statically (luaopen_mountns_core),
 * with liblua5.4; each input is one text handed to the real Lua function.
 * Besides the sanitizers, the harness checks the parser's contract, so a
 * wrong answer is a finding too, not only a crash:
 *  - it returns a table or nil + "line N: why", nothing else, never raises;
 *  - "libmount could not parse it" never happens: mountns' own line check
 *    must refuse whatever libmount would drop or misread;
 *  - a table has one record per non-empty line, in order, and each
 *    record's id and parent_id are the numbers at the start of its line;
 *  - its propagation word says "shared", "slave", "unbindable" exactly
 *    when the record has shared, master, unbindable: no flag is lost.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "harness.h"

static void lmns_fuzz_fail(const char *what, const uint8_t *data, size_t size)
{
	fprintf(stderr, "mountinfo_fuzz: %s (input of %zu bytes)\n", what,
		size);
	(void)data;
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	lmns_fuzz_open("parse_mountinfo");
	return 0;
}

/* The record on top: does its propagation word name exactly its flags? */
static int lmns_fuzz_word_ok(lua_State *L)
{
	const char *word;
	int shared, slave, unbindable, ok;

	lua_getfield(L, -1, "propagation");
	lua_getfield(L, -2, "shared");
	lua_getfield(L, -3, "master");
	lua_getfield(L, -4, "unbindable");
	word = lua_tostring(L, -4);
	shared = !lua_isnil(L, -3);
	slave = !lua_isnil(L, -2);
	unbindable = lua_toboolean(L, -1);
	ok = word && (strstr(word, "shared") != NULL) == shared &&
	     (strstr(word, "slave") != NULL) == slave &&
	     (strstr(word, "unbindable") != NULL) == unbindable &&
	     (strcmp(word, "private") == 0) == !(shared || slave || unbindable);
	lua_pop(L, 4);
	return ok;
}

/* Check the records against the lines they came from. */
static void lmns_fuzz_check_table(lua_State *L, const uint8_t *data,
				  size_t size)
{
	const char *p = (const char *)data, *end = p + size, *nl;
	lua_Integer i = 0, id, parent;
	char *q;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		/* a line of only "\r" is blank: libmount reads CRLF text */
		if (nl > p && !(nl - p == 1 && *p == '\r')) {
			i++;
			lua_rawgeti(L, 1, (int)i);
			if (!lua_istable(L, -1))
				lmns_fuzz_fail("fewer records than lines", data,
					       size);
			/* checked lines start "ID PARENT ", digits only */
			id = (lua_Integer)strtoll(p, &q, 10);
			parent = (lua_Integer)strtoll(q + 1, NULL, 10);
			lua_getfield(L, -1, "id");
			lua_getfield(L, -2, "parent_id");
			if (lua_tointeger(L, -2) != id ||
			    lua_tointeger(L, -1) != parent)
				lmns_fuzz_fail("record does not match its line",
					       data, size);
			lua_pop(L, 2);
			if (!lmns_fuzz_word_ok(L))
				lmns_fuzz_fail("propagation word loses a flag",
					       data, size);
			lua_pop(L, 1);
		}
		p = nl + 1;
	}
	if ((lua_Integer)lua_rawlen(L, 1) != i)
		lmns_fuzz_fail("more records than lines", data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lua_State *L = lmns_fuzz_L;
	const char *msg;

	lua_settop(L, 0);
	lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.parse");
	lua_pushlstring(L, (const char *)data, size);
	if (lua_pcall(L, 1, 2, 0) != 0)
		lmns_fuzz_fail(lua_tostring(L, -1), data, size);
	if (lua_istable(L, 1)) {
		lmns_fuzz_check_table(L, data, size);
	} else {
		msg = lua_tostring(L, 2);
		if (!lua_isnil(L, 1) || !msg || strncmp(msg, "line ", 5) != 0)
			lmns_fuzz_fail("neither a table nor nil, \"line N\"",
				       data, size);
		if (strstr(msg, "libmount could not parse"))
			lmns_fuzz_fail(msg, data, size);
	}
	lua_settop(L, 0);
	return 0;
}
