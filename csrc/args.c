/*
 * args.c - one table-driven parser for every flag argument, and the other
 * argument checkers of the core (option keys, choices, C strings).
 *
 * A flag argument is nil, a comma list ("ro,nosuid"), an array of names
 * ({"ro", "nosuid"}), a set ({ro = true, nosuid = true}) or both in one
 * table ({"ro", nosuid = true}), as mount(8) and Lua users write them. A
 * set's false value leaves that flag out, as if the key were absent. An
 * unknown name, a value that is not a boolean or any other key raises an
 * error naming the argument and the bad flag: that is misuse, not an OS
 * failure, so it must not look like one, and a key that is not read must
 * not be silently ignored ({ro = true} used to mount rw).
 *
 * A string that goes to the kernel as a C string (a path, a file system
 * type, mount data) must not hold a NUL byte: the kernel would read it cut
 * at the NUL and act on another path ("/c\0garbage" on "/c"). Every such
 * argument is read with lmns_checkcstring (lmns_checkpath). A path is a
 * string: a number is not taken as its text.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "lmns.h"

static unsigned long lmns_flag_lookup(lua_State *L, int arg,
				      const lmns_flag *set, const char *name,
				      size_t len)
{
	const lmns_flag *f;

	luaL_Buffer b;
	size_t i;

	for (f = set; f->name; f++)
		if (strlen(f->name) == len && memcmp(f->name, name, len) == 0)
			return f->value;
	/* a NUL in the name would cut the message short: show it as \0 */
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "unknown flag '");
	for (i = 0; i < len; i++) {
		if (name[i])
			luaL_addchar(&b, name[i]);
		else
			luaL_addstring(&b, "\\0");
	}
	luaL_addchar(&b, '\'');
	luaL_pushresult(&b);
	return (unsigned long)luaL_argerror(L, arg, lua_tostring(L, -1));
}

/* A comma list of len bytes: a Lua string may hold NULs, and "ro\0x" must
 * not pass as "ro". "" is no flag, as nil; an empty name in a list ("ro,,ro",
 * "ro,") is a typo, not a flag left out. */
static unsigned long lmns_flag_list(lua_State *L, int arg,
				    const lmns_flag *set, const char *s,
				    size_t len)
{
	unsigned long mask = 0;
	const char *end, *start = s, *stop = s + len;

	if (len == 0)
		return 0;
	for (;;) {
		end = memchr(s, ',', (size_t)(stop - s));
		if (!end)
			end = stop;
		if (end == s)
			luaL_argerror(L, arg, lua_pushfstring(L,
				"empty flag name in '%s'", start));
		mask |= lmns_flag_lookup(L, arg, set, s, (size_t)(end - s));
		if (end == stop)
			return mask;
		s = end + 1;
	}
}

/* The key at -2 of the flag table at arg, with its value at -1: an index
 * of the list part (1..n, read already), or a name set to true or false. */
static unsigned long lmns_flag_key(lua_State *L, int arg,
				   const lmns_flag *set, size_t n)
{
	const char *s;
	size_t len;

	if (lua_type(L, -2) == LUA_TNUMBER) {
		lua_Number k = lua_tonumber(L, -2);

		if (k >= 1 && k <= (lua_Number)n && k == (lua_Number)(size_t)k)
			return 0;
	}
	if (lua_type(L, -2) != LUA_TSTRING) {
		lua_pushvalue(L, -2);	/* lua_tostring must not touch keys */
		return (unsigned long)luaL_argerror(L, arg, lua_pushfstring(L,
			"unexpected key %s (%s): flags are a list of names or "
			"a set {name = true}", lua_tostring(L, -1) ?
			lua_tostring(L, -1) : "?", luaL_typename(L, -3)));
	}
	s = lua_tolstring(L, -2, &len);
	if (lua_type(L, -1) != LUA_TBOOLEAN) {
		lmns_flag_lookup(L, arg, set, s, len);	/* an unknown name first */
		return (unsigned long)luaL_argerror(L, arg, lua_pushfstring(L,
			"flag '%s' must be true or false, got %s", s,
			luaL_typename(L, -1)));
	}
	if (!lua_toboolean(L, -1)) {
		lmns_flag_lookup(L, arg, set, s, len);	/* known, left out */
		return 0;
	}
	return lmns_flag_lookup(L, arg, set, s, len);
}

/* Whether the set takes integers: its terminator says LMNS_FLAGS_RAW. */
static int lmns_flags_raw(const lmns_flag *set)
{
	while (set->name)
		set++;
	return set->value == LMNS_FLAGS_RAW;
}

/* The number at idx as raw flag bits: a whole number from 0 to 2^32-1
 * (mount(2) takes an unsigned long; every MS_ bit is below 2^32). */
static unsigned long lmns_flag_bits(lua_State *L, int arg, int idx, int pos)
{
	lua_Number v = lua_tonumber(L, idx);

	if (!(v >= 0 && v <= 4294967295.0 && v == (lua_Number)(unsigned long)v)) {
		char what[32] = "flags";

		if (pos)
			snprintf(what, sizeof what, "flag #%d", pos);
		return (unsigned long)luaL_argerror(L, arg, lua_pushfstring(L,
			"%s: %s is not a set of flag bits (an integer from 0 "
			"to 2^32-1: mountns.MS)", what, lua_tostring(L, idx)));
	}
	return (unsigned long)v;
}

unsigned long lmns_checkflags(lua_State *L, int arg, const lmns_flag *set)
{
	unsigned long mask = 0;
	size_t i, n, len;
	const char *s;
	int raw = lmns_flags_raw(set);

	if (raw && lua_type(L, arg) == LUA_TNUMBER)
		return lmns_flag_bits(L, arg, arg, 0);
	switch (lua_type(L, arg)) {
	case LUA_TNONE:
	case LUA_TNIL:
		return 0;
	case LUA_TSTRING:
		s = lua_tolstring(L, arg, &len);
		return lmns_flag_list(L, arg, set, s, len);
	case LUA_TTABLE:
		if (arg < 0)
			arg = lua_gettop(L) + arg + 1;
		n = lua_rawlen(L, arg);
		for (i = 1; i <= n; i++) {
			lua_rawgeti(L, arg, (int)i);
			if (raw && lua_type(L, -1) == LUA_TNUMBER) {
				mask |= lmns_flag_bits(L, arg, -1, (int)i);
				lua_pop(L, 1);
				continue;
			}
			if (lua_type(L, -1) != LUA_TSTRING)
				luaL_argerror(L, arg, lua_pushfstring(L,
					"flag #%d is a %s, expected a string",
					(int)i, luaL_typename(L, -1)));
			s = lua_tolstring(L, -1, &len);
			mask |= lmns_flag_list(L, arg, set, s, len);
			lua_pop(L, 1);
		}
		/* then every other key: a set's names; nothing is ignored */
		lua_pushnil(L);
		while (lua_next(L, arg)) {
			mask |= lmns_flag_key(L, arg, set, n);
			lua_pop(L, 1);
		}
		return mask;
	default:
		return (unsigned long)luaL_argerror(L, arg, lua_pushfstring(L,
			"flags expected (comma string, list or set of names), "
			"got %s", luaL_typename(L, arg)));
	}
}

/*
 * Raise on an argument past the n a function takes: "bad argument #N to
 * 'f' (no value expected, got T)". An extra argument is a mistake the call
 * would otherwise ignore in silence (readdir(path, opts) reads no opts),
 * and it shifts any slot a function counts from the bottom of the stack.
 * As luaL_checkany, it goes by lua_isnone: an explicit nil is a value, so
 * f(x, nil) is refused where f takes one argument. Every function of the
 * core calls it first, before any system call: spec 30 and
 * fuzz/args_fuzz.c call each one with every kind of extra argument.
 */
void lmns_checknomore(lua_State *L, int n)
{
	if (lua_gettop(L) > n)
		luaL_argerror(L, n + 1, lua_pushfstring(L,
			"no value expected, got %s", luaL_typename(L, n + 1)));
}

/*
 * An integer argument in [lo, hi], named by what in the error: a C int
 * cast of a Lua integer would wrap (close_fd(2^32 + 3) closed fd 3,
 * kill(2^32 + PID) signalled PID).
 */
static lua_Integer lmns_checkrange(lua_State *L, int arg, lua_Integer lo,
				   lua_Integer hi, const char *what)
{
	/* as a number first: Lua 5.1's and LuaJIT's luaL_checkinteger cast
	 * 1.5 to 1 (kill_tree(1.5) was kill_tree(1): init's whole tree) and
	 * a number out of range undefinedly */
	lua_Number n = luaL_checknumber(L, arg);

	if (!(n >= (lua_Number)lo && n <= (lua_Number)hi) ||
	    n != (lua_Number)(lua_Integer)n)
		luaL_argerror(L, arg, lua_pushfstring(L, "%s expected, got %s",
			what, lua_tostring(L, arg)));
	return (lua_Integer)n;
}

/* An optional byte count in [1, hi] (nil or none: def). */
lua_Integer lmns_optcount(lua_State *L, int arg, lua_Integer hi,
			  lua_Integer def)
{
	if (lua_isnoneornil(L, arg))
		return def;
	return lmns_checkrange(L, arg, 1, hi, "a byte count from 1");
}

/* A file descriptor argument: an integer from 0 to INT_MAX. */
int lmns_checkfd(lua_State *L, int arg)
{
	return (int)lmns_checkrange(L, arg, 0, INT_MAX, "a file descriptor");
}

/* A PID argument: an integer from 1 to INT_MAX (never 0 or -1: a process
 * group or every process). */
pid_t lmns_checkpid(lua_State *L, int arg)
{
	return (pid_t)lmns_checkrange(L, arg, 1, INT_MAX, "a positive PID");
}

/* A timeout in seconds (nil or none: -1, for ever; negative: for ever
 * too). NaN raises: every comparison with it is false, so it waited not at
 * all where the caller meant some time. */
double lmns_opttimeout(lua_State *L, int arg)
{
	lua_Number t;

	if (lua_isnoneornil(L, arg))
		return -1;
	t = luaL_checknumber(L, arg);
	if (t != t)
		luaL_argerror(L, arg, "a timeout in seconds expected, got nan");
	return (double)t;
}

/* Raise if the string s of len bytes holds a NUL: C would read it cut. */
static void lmns_checknul(lua_State *L, int arg, const char *s, size_t len,
			  const char *what)
{
	if (memchr(s, '\0', len))
		luaL_argerror(L, arg, lua_pushfstring(L,
			"%s contains a NUL byte", what));
}

/*
 * arg as a string for the kernel: what ("path", "fstype", "data") names it
 * in the error when it holds a NUL byte. Numbers are converted, as
 * luaL_checkstring does.
 */
const char *lmns_checkcstring(lua_State *L, int arg, const char *what)
{
	size_t len;
	const char *s = luaL_checklstring(L, arg, &len);

	lmns_checknul(L, arg, s, len, what);
	return s;
}

/* lmns_checkcstring, or def when arg is none or nil. */
const char *lmns_optcstring(lua_State *L, int arg, const char *def,
			    const char *what)
{
	if (lua_isnoneornil(L, arg))
		return def;
	return lmns_checkcstring(L, arg, what);
}

/*
 * arg as a path: a string only (a number would be converted by
 * luaL_checkstring: mkdir(0/0) made a directory named "-nan"), without a
 * NUL byte.
 */
const char *lmns_checkpath(lua_State *L, int arg)
{
	if (lua_type(L, arg) != LUA_TSTRING)
		luaL_argerror(L, arg, lua_pushfstring(L, "string expected, got %s",
			luaL_typename(L, arg)));
	return lmns_checkcstring(L, arg, "path");
}

/* lmns_checkpath, or def when arg is none or nil. */
const char *lmns_optpath(lua_State *L, int arg, const char *def)
{
	if (lua_isnoneornil(L, arg))
		return def;
	return lmns_checkpath(L, arg);
}

/* luaL_checkoption that does not take "mnt\0x" for "mnt". */
int lmns_checkoption(lua_State *L, int arg, const char *def,
		     const char *const names[])
{
	size_t len;
	const char *s;

	if (lua_type(L, arg) == LUA_TSTRING) {
		s = lua_tolstring(L, arg, &len);
		if (strlen(s) != len)
			return luaL_argerror(L, arg, lua_pushfstring(L,
				"invalid option '%s' (contains a NUL byte)", s));
	}
	return luaL_checkoption(L, arg, def, names);
}

/* Raise on a key of opts (a table at arg, or nil) that is not in known: a
 * misspelt option must not be silently ignored. */
void lmns_checkkeys(lua_State *L, int arg, const char *const known[])
{
	int i;

	if (lua_isnoneornil(L, arg))
		return;
	luaL_checktype(L, arg, LUA_TTABLE);
	lua_pushnil(L);
	while (lua_next(L, arg)) {
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TSTRING)
			luaL_argerror(L, arg, lua_pushfstring(L,
				"option keys must be strings, got %s",
				luaL_typename(L, -1)));
		for (i = 0; known[i]; i++)
			if (strlen(known[i]) == lua_rawlen(L, -1) &&
			    strcmp(known[i], lua_tostring(L, -1)) == 0)
				break;
		if (!known[i])
			luaL_argerror(L, arg, lua_pushfstring(L,
				"unknown option '%s'", lua_tostring(L, -1)));
	}
}

/* Push opts.field (opts the table at arg, or nil) and return 1; push
 * nothing and return 0 when opts or the field is nil. */
static int lmns_getopt(lua_State *L, int arg, const char *field)
{
	size_t len = strlen(field);

	if (lua_isnoneornil(L, arg))
		return 0;
	luaL_checktype(L, arg, LUA_TTABLE);
	if (arg < 0 && arg > LUA_REGISTRYINDEX)
		arg = lua_gettop(L) + arg + 1;
	/*
	 * The table's own keys are walked (a few), not lua_getfield: that
	 * pushes the field's name, a new string where no loaded code holds
	 * it (an absent option: unshare asks for ten), which a forked child
	 * writes into the string table it shares with its parent, a
	 * copy-on-write fault each. A table with a metatable is asked with
	 * lua_getfield too (its __index may give the option).
	 */
	lua_pushnil(L);
	while (lua_next(L, arg)) {
		if (lua_type(L, -2) == LUA_TSTRING && lua_rawlen(L, -2) == len &&
		    memcmp(lua_tostring(L, -2), field, len) == 0) {
			lua_remove(L, -2);	/* the key */
			return 1;
		}
		lua_pop(L, 1);
	}
	if (!lua_getmetatable(L, arg))
		return 0;
	lua_pop(L, 1);
	lua_getfield(L, arg, field);
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		return 0;
	}
	return 1;
}

/*
 * opts.field as one of names (its index), def when absent or opts is nil;
 * like luaL_checkoption, but the error names the argument and the field.
 */
int lmns_optoption(lua_State *L, int arg, const char *field, int def,
		   const char *const names[])
{
	const char *v;
	int i;

	if (!lmns_getopt(L, arg, field))
		return def;
	v = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
	for (i = 0; v && names[i]; i++)
		if (strlen(names[i]) == lua_rawlen(L, -1) &&
		    strcmp(names[i], v) == 0) {
			lua_pop(L, 1);
			return i;
		}
	return luaL_argerror(L, arg, lua_pushfstring(L,
		"option '%s': invalid value '%s'", field,
		v ? v : luaL_typename(L, -1)));
}

/* opts.field as a boolean; opts may be nil. A non-boolean value is misuse. */
int lmns_optbool(lua_State *L, int arg, const char *field, int def)
{
	int v;

	if (!lmns_getopt(L, arg, field))
		return def;
	if (lua_type(L, -1) == LUA_TBOOLEAN)
		v = lua_toboolean(L, -1);
	else
		return luaL_argerror(L, arg, lua_pushfstring(L,
			"option '%s' must be a boolean, got %s", field,
			luaL_typename(L, -1)));
	lua_pop(L, 1);
	return v;
}

/*
 * opts.field as an integer, def when absent or opts is nil: a float with
 * no integer value or any other type raises naming the argument and the
 * field (luaL_checkinteger on the field would say "bad argument #-1").
 */
lua_Integer lmns_optinteger(lua_State *L, int arg, const char *field,
			    lua_Integer def)
{
	lua_Integer v;
	int ok;
#if LUA_VERSION_NUM < 503
	lua_Number n;
#endif

	if (!lmns_getopt(L, arg, field))
		return def;
	if (lua_type(L, -1) != LUA_TNUMBER)
		return luaL_argerror(L, arg, lua_pushfstring(L,
			"option '%s' must be an integer, got %s", field,
			luaL_typename(L, -1)));
#if LUA_VERSION_NUM >= 503
	v = lua_tointegerx(L, -1, &ok);
#else
	n = lua_tonumber(L, -1);
	/* a cast of NaN or of a number out of range is undefined */
	ok = n >= -9223372036854775808.0 && n < 9223372036854775808.0;
	v = ok ? (lua_Integer)n : 0;
	ok = ok && (lua_Number)v == n;
#endif
	if (!ok)
		return luaL_argerror(L, arg, lua_pushfstring(L,
			"option '%s' must be an integer, got %s", field,
			lua_tostring(L, -1)));
	lua_pop(L, 1);
	return v;
}

/*
 * Flag sets by kind, for _parse_flags: each area registers its static sets
 * here at open time, so the parser can be driven (by specs and the fuzzer)
 * without the system call that normally consumes the mask. The sets are
 * static arrays: a light userdata in a registry table is enough.
 */
#define LMNS_FLAGSETS "mountns.flagsets"

void lmns_flags_register(lua_State *L, const char *kind, const lmns_flag *set)
{
	lua_getfield(L, LUA_REGISTRYINDEX, LMNS_FLAGSETS);
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setfield(L, LUA_REGISTRYINDEX, LMNS_FLAGSETS);
	}
	lua_pushlightuserdata(L, (void *)(size_t)set);
	lua_setfield(L, -2, kind);
	lua_pop(L, 1);
}

/* The registered set named by argument 1 ("mount", "umount", ...), or an
 * error naming it. Leaves the stack as it was. */
static const lmns_flag *lmns_flags_set(lua_State *L)
{
	const char *kind = luaL_checkstring(L, 1);
	const lmns_flag *set = NULL;

	lua_getfield(L, LUA_REGISTRYINDEX, LMNS_FLAGSETS);
	if (lua_istable(L, -1)) {
		lua_getfield(L, -1, kind);
		set = lua_touserdata(L, -1);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	if (!set)
		luaL_argerror(L, 1, lua_pushfstring(L, "unknown flag set '%s'", kind));
	return set;
}

/*
 * _parse_flags(kind, flags) -> mask: the mask lmns_checkflags gives for a
 * flag argument of that kind ("mount", "umount", ...), with no system call;
 * an unknown kind or flag raises like the real call would.
 */
static int lmns_flags_parse(lua_State *L)
{
	const lmns_flag *set;

	lmns_checknomore(L, 2);
	set = lmns_flags_set(L);
	lua_settop(L, 2);	/* the flags stay at 2 when absent */
	lua_pushinteger(L, (lua_Integer)lmns_checkflags(L, 2, set));
	return 1;
}

/*
 * _flag_names(kind) -> {name, ...}: the names of a registered set, in its
 * table's order. This table is the authority on the names (it is what the
 * system calls read); the Lua layer's copy (mountns.flags, which the model
 * parses with) is checked against it name by name, both ways (spec 35).
 */
static int lmns_flags_names(lua_State *L)
{
	const lmns_flag *f;
	int i = 0;

	lmns_checknomore(L, 1);
	f = lmns_flags_set(L);
	lua_newtable(L);
	for (; f->name; f++) {
		lua_pushstring(L, f->name);
		lua_rawseti(L, -2, ++i);
	}
	return 1;
}

void lmns_args_open(lua_State *L)
{
	lua_pushcfunction(L, lmns_flags_parse);
	lua_setfield(L, -2, "_parse_flags");
	lua_pushcfunction(L, lmns_flags_names);
	lua_setfield(L, -2, "_flag_names");
}
