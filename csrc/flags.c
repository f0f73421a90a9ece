/*
 * flags.c - one table-driven parser for every flag argument.
 *
 * A flag argument is nil, a comma list ("ro,nosuid") or an array of names
 * ({"ro", "nosuid"}), as mount(8) users write them. An unknown name raises
 * an error naming the argument and the bad flag: that is misuse, not an OS
 * failure, so it must not look like one.
 */
#define _GNU_SOURCE
#include <string.h>

#include "lmns.h"

static unsigned long lmns_flag_lookup(lua_State *L, int arg,
				      const lmns_flag *set, const char *name,
				      size_t len)
{
	const lmns_flag *f;

	for (f = set; f->name; f++)
		if (strlen(f->name) == len && memcmp(f->name, name, len) == 0)
			return f->value;
	lua_pushlstring(L, name, len);
	return (unsigned long)luaL_argerror(L, arg,
		lua_pushfstring(L, "unknown flag '%s'", lua_tostring(L, -1)));
}

static unsigned long lmns_flag_list(lua_State *L, int arg,
				    const lmns_flag *set, const char *s)
{
	unsigned long mask = 0;
	const char *end;

	for (;;) {
		end = strchr(s, ',');
		if (!end)
			end = s + strlen(s);
		if (end > s)
			mask |= lmns_flag_lookup(L, arg, set, s, (size_t)(end - s));
		if (!*end)
			return mask;
		s = end + 1;
	}
}

unsigned long lmns_checkflags(lua_State *L, int arg, const lmns_flag *set)
{
	unsigned long mask = 0;
	size_t i, n;

	switch (lua_type(L, arg)) {
	case LUA_TNONE:
	case LUA_TNIL:
		return 0;
	case LUA_TSTRING:
		return lmns_flag_list(L, arg, set, lua_tostring(L, arg));
	case LUA_TTABLE:
		n = lua_rawlen(L, arg);
		for (i = 1; i <= n; i++) {
			lua_rawgeti(L, arg, (int)i);
			if (lua_type(L, -1) != LUA_TSTRING)
				luaL_argerror(L, arg, lua_pushfstring(L,
					"flag #%d is a %s, expected a string",
					(int)i, luaL_typename(L, -1)));
			mask |= lmns_flag_list(L, arg, set, lua_tostring(L, -1));
			lua_pop(L, 1);
		}
		return mask;
	default:
		return (unsigned long)luaL_argerror(L, arg, lua_pushfstring(L,
			"flags expected (comma string or array), got %s",
			luaL_typename(L, arg)));
	}
}

/* opts.field as a boolean; opts may be nil. A non-boolean value is misuse. */
int lmns_optbool(lua_State *L, int arg, const char *field, int def)
{
	int v;

	if (lua_isnoneornil(L, arg))
		return def;
	luaL_checktype(L, arg, LUA_TTABLE);
	lua_getfield(L, arg, field);
	if (lua_isnil(L, -1))
		v = def;
	else if (lua_type(L, -1) == LUA_TBOOLEAN)
		v = lua_toboolean(L, -1);
	else
		return luaL_argerror(L, arg, lua_pushfstring(L,
			"option '%s' must be a boolean, got %s", field,
			luaL_typename(L, -1)));
	lua_pop(L, 1);
	return v;
}

/* opts.field as a string or NULL; the string stays referenced by opts. */
const char *lmns_optfield(lua_State *L, int arg, const char *field)
{
	const char *s = NULL;

	if (lua_isnoneornil(L, arg))
		return NULL;
	luaL_checktype(L, arg, LUA_TTABLE);
	lua_getfield(L, arg, field);
	if (lua_type(L, -1) == LUA_TSTRING)
		s = lua_tostring(L, -1);
	else if (!lua_isnil(L, -1))
		luaL_argerror(L, arg, lua_pushfstring(L,
			"option '%s' must be a string, got %s", field,
			luaL_typename(L, -1)));
	lua_pop(L, 1);
	return s;
}
