/*
 * flags_fuzz.c - libFuzzer harness for the flag parser (lmns_checkflags),
 * reached through mountns._parse_flags(kind, flags): no system call.
 *
 * Input: byte 0 picks the kind (bits 0-1: mount, umount, mount_attr, an
 * unknown kind) and whether (bit 2) the flags go in as one comma string or
 * as a table (the rest split at
 * '\n'; a lone "#" element becomes a number, a wrong type); with bit 3 the
 * table is mixed: its even elements become set keys {name = true} (a "#"
 * element sets the key before it to a number, a wrong type). The contract:
 * misuse raises "bad argument ...", success is an integer mask, and a
 * table's mask is the OR of its names' masks, each parsed alone (an empty
 * name in a comma list fails, "" alone is no flag; a set key
 * is one exact name: no comma, not empty); a table with a name that fails
 * alone, or a set value that is not a boolean, must fail too.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "harness.h"
static const char *const lmns_fuzz_kinds[] = {
	"mount", "umount", "mount_attr", "nosuch"
};

static void lmns_fuzz_fail(const char *what)
{
	fprintf(stderr, "flags_fuzz: %s\n", what);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	lmns_fuzz_open("_parse_flags");
	return 0;
}

/*
 * _parse_flags(kind, value at index v): 1 and the mask in *mask on success,
 * 0 on a raised error (which must be a "bad argument" message).
 */
static int lmns_fuzz_parse(lua_State *L, const char *kind, int v,
			   lua_Integer *mask)
{
	int ok;

	lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.parse");
	lua_pushstring(L, kind);
	lua_pushvalue(L, v);
	ok = lua_pcall(L, 2, 1, 0) == 0;
	if (ok) {
		if (!lua_isinteger(L, -1))
			lmns_fuzz_fail("success without an integer mask");
		*mask = lua_tointeger(L, -1);
	} else if (!lua_isstring(L, -1) ||
		   !strstr(lua_tostring(L, -1), "bad argument")) {
		lmns_fuzz_fail("an error that is not an argument error");
	}
	lua_pop(L, 1);
	return ok;
}

/* Push the pieces of s split at sep as an array; "#" becomes a number. */
static void lmns_fuzz_split(lua_State *L, const char *s, size_t len, char sep,
			    int numbers)
{
	const char *end = s + len, *e;
	int i = 0;

	lua_newtable(L);
	for (;;) {
		e = memchr(s, sep, (size_t)(end - s));
		if (!e)
			e = end;
		if (numbers && e - s == 1 && *s == '#')
			lua_pushinteger(L, 7);
		else
			lua_pushlstring(L, s, (size_t)(e - s));
		lua_rawseti(L, -2, ++i);
		if (e == end)
			return;
		s = e + 1;
	}
}

/*
 * The oracle for one element (a comma list): parse each name alone and OR
 * the masks. Returns 0 as soon as one name fails, or for an empty name in
 * a list ("ro,,ro", "ro,": a typo); "" alone is no flag (mask 0).
 */
static int lmns_fuzz_names(lua_State *L, const char *kind, const char *s,
			   size_t len, lua_Integer *or)
{
	lua_Integer part;
	size_t j, m;
	int ok = 1;

	lmns_fuzz_split(L, s, len, ',', 0);
	m = (size_t)lua_rawlen(L, -1);
	for (j = 1; j <= m && ok; j++) {
		lua_rawgeti(L, -1, (int)j);
		if (lua_rawlen(L, -1) > 0) {
			ok = lmns_fuzz_parse(L, kind, lua_gettop(L), &part);
			if (ok)
				*or |= part;
		} else if (len > 0) {
			ok = 0;
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return ok;
}

/*
 * Turn the array at index 1 into a mixed table: the odd elements stay a
 * list (renumbered), each even element becomes a key set to true; a "#"
 * (a number) there sets the previous key to 7 instead. Returns whether the
 * table must parse, with the OR of its names' masks in *or.
 */
static int lmns_fuzz_mixed(lua_State *L, const char *kind, lua_Integer *or)
{
	size_t i, n = (size_t)lua_rawlen(L, 1), len;
	int list = 0, ok = 1, prev = 0;
	lua_Integer part;
	const char *e;

	lua_newtable(L);	/* index 2: the mixed table */
	for (i = 1; i <= n; i++) {
		lua_rawgeti(L, 1, (int)i);
		if (i % 2) {	/* a list element: a comma list, or a number */
			if (lua_type(L, -1) != LUA_TSTRING) {
				if (strcmp(kind, "mount") == 0)
					*or |= 7;	/* raw MS_ bits */
				else
					ok = 0;
			} else if (ok) {
				e = lua_tolstring(L, -1, &len);
				ok = lmns_fuzz_names(L, kind, e, len, or);
			}
			lua_rawseti(L, 2, ++list);
			continue;
		}
		if (lua_type(L, -1) != LUA_TSTRING) {	/* "#" */
			lua_pop(L, 1);
			if (prev) {	/* the key before: a wrong value type */
				lua_rawgeti(L, 1, (int)i - 2);
				lua_pushinteger(L, 7);
				lua_rawset(L, 2);
				ok = 0;
			}
			prev = 0;
			continue;
		}
		e = lua_tolstring(L, -1, &len);
		if (len == 0 || memchr(e, ',', len)) {
			ok = 0;	/* not one name */
		} else if (ok) {
			if (lmns_fuzz_parse(L, kind, lua_gettop(L), &part))
				*or |= part;
			else
				ok = 0;
		}
		lua_pushvalue(L, -1);
		lua_rawget(L, 2);
		if (lua_isnil(L, -1)) {	/* a number set before stays */
			lua_pop(L, 1);
			lua_pushboolean(L, 1);
			lua_rawset(L, 2);
		} else {
			lua_pop(L, 2);
		}
		prev = 1;
	}
	lua_replace(L, 1);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lua_State *L = lmns_fuzz_L;
	const char *kind, *s = (const char *)data + 1, *e;
	size_t len, i, n;
	lua_Integer whole = 0, or = 0;
	int ok, expect = 1, known;

	if (size < 1)
		return 0;
	kind = lmns_fuzz_kinds[data[0] % 4];
	known = data[0] % 4 != 3;
	lua_settop(L, 0);
	if (data[0] & 4)
		lmns_fuzz_split(L, s, size - 1, '\n', 1);
	else
		lua_pushlstring(L, s, size - 1);
	if ((data[0] & 12) == 12)
		expect = lmns_fuzz_mixed(L, kind, &or);
	ok = lmns_fuzz_parse(L, kind, 1, &whole);
	if (!known) {
		if (ok)
			lmns_fuzz_fail("an unknown flag set parsed");
		lua_settop(L, 0);
		return 0;
	}
	if ((data[0] & 12) == 12) {
		/* the oracle ran while the set was built */
	} else if (lua_istable(L, 1)) {
		n = (size_t)lua_rawlen(L, 1);
		for (i = 1; i <= n && expect; i++) {
			lua_rawgeti(L, 1, (int)i);
			if (lua_type(L, -1) != LUA_TSTRING) {
				/* a number element: raw MS_ bits for mount's
				 * flags (mountns.MS), misuse elsewhere */
				if (strcmp(kind, "mount") == 0)
					or |= 7;
				else
					expect = 0;
			} else {
				e = lua_tolstring(L, -1, &len);
				expect = lmns_fuzz_names(L, kind, e, len, &or);
			}
			lua_pop(L, 1);
		}
	} else {
		e = lua_tolstring(L, 1, &len);
		expect = lmns_fuzz_names(L, kind, e, len, &or);
	}
	if (ok != expect)
		lmns_fuzz_fail(ok ? "a list passed with a bad name in it"
				  : "a list failed though each name passes");
	if (ok && whole != or)
		lmns_fuzz_fail("a list's mask is not the OR of its names");
	lua_settop(L, 0);
	return 0;
}
