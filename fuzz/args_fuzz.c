/*
 * args_fuzz.c - libFuzzer harness for the arguments of every function and
 * method of mountns.core (issue 23: readdir("/", "x") crashed, and
 * readdir("/nonexistent", "x") replaced the string metatable).
 *
 * The targets are listed from the module itself at start-up: every
 * function of mountns.core and every method and metamethod of its handle
 * classes (the registry's "mountns.*" metatables), sorted by name. A
 * target's arity n is read from the core too: called with sixteen nils it
 * must raise "bad argument #n+1 ... (no value expected, got nil)" (it acts
 * on nothing: the check comes first); only send_values, close_namespaces
 * and wait_any may take more (any other function that does aborts here).
 *
 * Input: byte 0 picks the target, byte 1 the mode and how many values
 * follow; the rest are the values, each a type byte and its bytes (nil,
 * booleans, integers incl. mininteger and maxinteger, floats incl. NaN and
 * infinities, strings with NULs, tables incl. one whose __index raises,
 * a function, a thread, userdata: a namespace handle, a poller, a closed
 * handle, io.stdout, a light userdata).
 * - extra mode: n fuzzed values, then one or more: the call must raise
 *   exactly "bad argument #n+1 to '...' (no value expected, got T)".
 * - the three that take more: fixed harmless first arguments (send_values
 *   to /dev/null, wait_any with timeout 0) and fuzzed values after them:
 *   success or a "bad argument".
 * - pure mode: up to n fuzzed values for a function that has no effect
 *   outside this process (a parser, a query): success or an error.
 * After every call the string metatable must be the one string methods
 * use, and the stack as it was. The harness runs in a mount namespace of
 * its own (as root; else a user namespace too): a check that went missing
 * acts there, never in the host's.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define MAX_TARGETS 256
#define MAX_VALUES 12

static struct {
	char name[64];
	int n;		/* arity; -1: takes any number of values */
} targets[MAX_TARGETS];
static int ntargets;
static int devnull = -1;

/* functions with no effect outside this process, for pure mode */
static const char *const pure[] = {
	"_parse_flags", "parse_mountinfo", "escape", "tree_text", "json_text",
	"exists", "readdir", "statmount", "listmount", "mountinfo",
	"read_mountinfo", "namespace", "mntns_id", "getpid", "getuid", "clock",
	"features", "open_fds", "mountinfo_poller", "mountns.namespace:id",
	"mountns.namespace:kind", "mountns.namespace:fileno",
	"mountns.namespace:__tostring", "mountns.namespace:__eq",
	"mountns.poller:fileno", "mountns.poller:__tostring", NULL
};
static const char *const variadic[] = {
	"send_values", "close_namespaces", "wait_any", NULL
};

static void lmns_fuzz_fail(const char *what, const char *name,
			   const char *msg)
{
	fprintf(stderr, "args_fuzz: %s: %s%s%s\n", name, what,
		msg ? ": " : "", msg ? msg : "");
	abort();
}

static int lmns_fuzz_in(const char *const list[], const char *name)
{
	int i;

	for (i = 0; list[i]; i++)
		if (strcmp(list[i], name) == 0)
			return 1;
	return 0;
}

/* Push the target i (the function). */
static void lmns_fuzz_push_target(lua_State *L, int i)
{
	const char *name = targets[i].name, *colon = strchr(name, ':');

	if (!colon) {
		lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.core");
		lua_getfield(L, -1, name);
	} else {
		lua_pushlstring(L, name, (size_t)(colon - name));
		lua_rawget(L, LUA_REGISTRYINDEX);
		if (strncmp(colon + 1, "__", 2) != 0)
			lua_getfield(L, -1, "__index");
		else
			lua_pushvalue(L, -1);
		lua_getfield(L, -1, colon + 1);
		lua_remove(L, -2);
	}
	lua_remove(L, -2);
}

static void lmns_fuzz_add(const char *prefix, const char *name)
{
	if (ntargets == MAX_TARGETS)
		lmns_fuzz_fail("too many targets", name, NULL);
	snprintf(targets[ntargets].name, sizeof targets[ntargets].name,
		 "%s%s%s", prefix ? prefix : "", prefix ? ":" : "", name);
	ntargets++;
}

static int lmns_fuzz_cmp(const void *a, const void *b)
{
	return strcmp(a, b);	/* name is the first member */
}

/* The arity of target i, in this process (see lmns_fuzz_arity): n, -1 for
 * one of the three that take more, or -2 when sixteen nils passed. */
static int lmns_fuzz_arity_here(lua_State *L, int i)
{
	const char *msg;
	int k;

	lmns_fuzz_push_target(L, i);
	for (k = 0; k < 16; k++)
		lua_pushnil(L);
	if (lua_pcall(L, 16, LUA_MULTRET, 0) == 0)
		return -2;
	msg = lua_tostring(L, -1);
	if (!msg || !strstr(msg, "(no value expected, got nil)") ||
	    strncmp(msg, "bad argument #", 14) != 0) {
		if (!lmns_fuzz_in(variadic, targets[i].name))
			lmns_fuzz_fail("takes any number of arguments "
				       "(not in the harness's list)",
				       targets[i].name, msg);
		return -1;
	}
	return (int)strtol(msg + 14, NULL, 10) - 1;
}

/*
 * The arity of target i: from the error sixteen nils raise. Asked in a
 * child: a function that lacks the check would act on them (_exit ends
 * the process, fork forks), and the child's answer would never come.
 */
static int lmns_fuzz_arity(lua_State *L, int i)
{
	int fds[2], n = -3, status;
	pid_t pid = -1;

	if (pipe(fds) != 0 || (pid = fork()) < 0)
		lmns_fuzz_fail("pipe or fork", targets[i].name, NULL);
	if (pid == 0) {
		close(fds[0]);
		n = lmns_fuzz_arity_here(L, i);
		if (write(fds[1], &n, sizeof n) != (ssize_t)sizeof n)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &n, sizeof n) != (ssize_t)sizeof n)
		n = -3;
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (n == -3)
		lmns_fuzz_fail("sixteen nils ended the process or its child",
			       targets[i].name, NULL);
	if (n == -2)
		lmns_fuzz_fail("sixteen nils were accepted", targets[i].name,
			       NULL);
	return n;
}

/* The values the fuzzer can name that it cannot build from bytes. */
static void lmns_fuzz_pool(lua_State *L)
{
	lua_newtable(L);
	lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.core");
	lua_getfield(L, -1, "namespace");
	lua_call(L, 0, 1);
	lua_rawseti(L, -3, 1);		/* an open namespace handle */
	lua_getfield(L, -1, "mountinfo_poller");
	lua_call(L, 0, 1);
	lua_rawseti(L, -3, 2);		/* a poller */
	lua_getfield(L, -1, "namespace");
	lua_call(L, 0, 1);
	lua_getfield(L, -1, "close");
	lua_pushvalue(L, -2);
	lua_call(L, 1, 0);
	lua_rawseti(L, -3, 3);		/* a closed handle */
	lua_pop(L, 1);
	lua_getglobal(L, "io");
	lua_getfield(L, -1, "stdout");
	lua_rawseti(L, -3, 4);
	lua_pop(L, 1);
	lua_getglobal(L, "print");
	lua_rawseti(L, -2, 5);
	lua_newthread(L);
	lua_rawseti(L, -2, 6);
	/* a table whose __index raises */
	luaL_loadstring(L, "return setmetatable({}, {__index = "
			"function() error('touched') end})");
	lua_call(L, 0, 1);
	lua_rawseti(L, -2, 7);
	lua_setfield(L, LUA_REGISTRYINDEX, "fuzz.pool");
}

struct lmns_cursor {
	const uint8_t *p;
	size_t left;
};

static unsigned lmns_fuzz_byte(struct lmns_cursor *c)
{
	if (!c->left)
		return 0;
	c->left--;
	return *c->p++;
}

/* Push one value read from the input. */
static void lmns_fuzz_value(lua_State *L, struct lmns_cursor *c)
{
	unsigned t = lmns_fuzz_byte(c) % 17, i, len;
	uint64_t u = 0;
	double d;

	luaL_checkstack(L, 4, "args_fuzz");	/* tables nest */
	switch (t) {
	case 0: lua_pushnil(L); break;
	case 1: lua_pushboolean(L, 1); break;
	case 2: lua_pushboolean(L, 0); break;
	case 3:
	case 4:
		for (i = 0; i < 8; i++)
			u = u << 8 | lmns_fuzz_byte(c);
		if (t == 3) {
			lua_pushinteger(L, (lua_Integer)u);
		} else {
			memcpy(&d, &u, sizeof d);
			lua_pushnumber(L, d);
		}
		break;
	case 5: lua_pushnumber(L, 0.0 / 0.0); break;
	case 6: lua_pushinteger(L, LUA_MININTEGER); break;
	case 7: lua_pushinteger(L, LUA_MAXINTEGER); break;
	case 8:
		len = lmns_fuzz_byte(c) % 64;
		if (len > c->left)
			len = (unsigned)c->left;
		lua_pushlstring(L, (const char *)c->p, len);
		c->p += len;
		c->left -= len;
		break;
	case 9: lua_newtable(L); break;
	case 10:
		lua_newtable(L);
		len = lmns_fuzz_byte(c) % 4;
		for (i = 1; i <= len; i++) {
			lmns_fuzz_value(L, c);
			lua_rawseti(L, -2, (lua_Integer)i);
		}
		break;
	case 11:
		lua_newtable(L);	/* a key of any type, then its value */
		lmns_fuzz_value(L, c);
		lmns_fuzz_value(L, c);
		if (lua_isnil(L, -2) || (lua_type(L, -2) == LUA_TNUMBER &&
		    lua_tonumber(L, -2) != lua_tonumber(L, -2)))
			lua_pop(L, 2);	/* no nil or NaN key */
		else
			lua_rawset(L, -3);
		break;
	case 12:
		lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.pool");
		lua_rawgeti(L, -1, 1 + (lua_Integer)(lmns_fuzz_byte(c) % 7));
		lua_remove(L, -2);
		break;
	case 13: lua_pushlightuserdata(L, (void *)c); break;
	case 14: lua_pushnumber(L, lmns_fuzz_byte(c) & 1 ? 1.0 / 0.0 :
				-1.0 / 0.0); break;
	case 15: lua_pushinteger(L, (lua_Integer)lmns_fuzz_byte(c) - 2); break;
	default: lua_pushnumber(L, (double)lmns_fuzz_byte(c) / 4.0); break;
	}
}

/* The Lua state as it was: the string metatable and its __index. */
static void lmns_fuzz_intact(lua_State *L, const char *name, int top)
{
	if (lua_gettop(L) != top)
		lmns_fuzz_fail("the stack changed", name, NULL);
	lua_pushliteral(L, "");
	if (!lua_getmetatable(L, -1))
		lmns_fuzz_fail("strings lost their metatable", name, NULL);
	lua_getfield(L, -1, "__index");
	lua_getglobal(L, "string");
	if (!lua_rawequal(L, -1, -2))
		lmns_fuzz_fail("the string metatable was replaced", name, NULL);
	lua_settop(L, top);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	lua_State *L;
	int i;

	(void)argc;
	(void)argv;
	/* a mount namespace of its own, private: nothing reaches the host */
	if (unshare(geteuid() == 0 ? CLONE_NEWNS : CLONE_NEWNS | CLONE_NEWUSER)
	    != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		perror("args_fuzz: unshare or make-rprivate /");
		abort();
	}
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	lmns_fuzz_open(NULL);
	L = lmns_fuzz_L;
	lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.core");
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		if (lua_type(L, -1) == LUA_TFUNCTION)
			lmns_fuzz_add(NULL, lua_tostring(L, -2));
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	lua_pushnil(L);
	while (lua_next(L, LUA_REGISTRYINDEX)) {
		if (lua_type(L, -2) == LUA_TSTRING &&
		    strncmp(lua_tostring(L, -2), "mountns.", 8) == 0 &&
		    lua_istable(L, -1)) {
			const char *cls = lua_tostring(L, -2);

			lua_getfield(L, -1, "__index");
			if (lua_istable(L, -1)) {
				lua_pushnil(L);
				while (lua_next(L, -2)) {
					lmns_fuzz_add(cls, lua_tostring(L, -2));
					lua_pop(L, 1);
				}
				lua_pushnil(L);
				while (lua_next(L, -3)) {
					if (lua_type(L, -1) == LUA_TFUNCTION)
						lmns_fuzz_add(cls,
							lua_tostring(L, -2));
					lua_pop(L, 1);
				}
			}
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	qsort(targets, (size_t)ntargets, sizeof targets[0], lmns_fuzz_cmp);
	for (i = 0; i < ntargets; i++)
		targets[i].n = lmns_fuzz_arity(L, i);
	lmns_fuzz_pool(L);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lua_State *L = lmns_fuzz_L;
	struct lmns_cursor c;
	int i, n, mode, nvals, k, rc;
	const char *name, *msg;
	char want[96];

	if (size < 2)
		return 0;
	i = data[0] % ntargets;
	name = targets[i].name;
	n = targets[i].n;
	mode = data[1] & 3;
	nvals = 1 + (data[1] >> 2) % MAX_VALUES;
	c.p = data + 2;
	c.left = size - 2;
	lua_settop(L, 0);
	lmns_fuzz_push_target(L, i);
	if (n < 0) {		/* takes any number: harmless first arguments */
		if (strcmp(name, "send_values") == 0) {
			lua_pushinteger(L, devnull);
			lua_pushinteger(L, 1 << 20);
			k = 2;
		} else if (strcmp(name, "wait_any") == 0) {
			lua_pushinteger(L, 0);
			k = 1;
		} else {
			k = 0;	/* close_namespaces: the pool's handles */
		}
		for (; nvals > 0; nvals--, k++)
			lmns_fuzz_value(L, &c);
		rc = lua_pcall(L, k, 0, 0);
		msg = rc ? lua_tostring(L, -1) : NULL;
		if (rc && (!msg || strncmp(msg, "bad argument #", 14) != 0))
			lmns_fuzz_fail("an error that is not an argument "
				       "error", name, msg);
		lua_settop(L, 0);
		lmns_fuzz_intact(L, name, 0);
		return 0;
	}
	if (mode == 3 && lmns_fuzz_in(pure, name)) {
		/* pure: up to n values of any type, the call may succeed */
		k = nvals % (n + 1);
		for (nvals = 0; nvals < k; nvals++)
			lmns_fuzz_value(L, &c);
		rc = lua_pcall(L, k, 0, 0);
		if (rc && !lua_isstring(L, -1))
			lmns_fuzz_fail("an error that is not a message", name,
				       NULL);
		lua_settop(L, 0);
		lmns_fuzz_intact(L, name, 0);
		return 0;
	}
	/* extra: n values, then at least one more; the n+1th is refused */
	for (k = 0; k < n + nvals; k++) {
		lmns_fuzz_value(L, &c);
		if (k == n)
			snprintf(want, sizeof want, "(no value expected, got %s)",
				 luaL_typename(L, -1));
	}
	rc = lua_pcall(L, n + nvals, LUA_MULTRET, 0);
	msg = lua_tostring(L, -1);
	if (rc == 0)
		lmns_fuzz_fail("an extra argument was accepted", name, NULL);
	if (lua_gettop(L) != 1)
		lmns_fuzz_fail("the error left values on the stack", name, NULL);
	{
		char head[32];

		snprintf(head, sizeof head, "bad argument #%d to '", n + 1);
		if (!msg || strncmp(msg, head, strlen(head)) != 0 ||
		    strlen(msg) < strlen(want) ||
		    strcmp(msg + strlen(msg) - strlen(want), want) != 0)
			lmns_fuzz_fail("not the extra argument's error", name,
				       msg);
	}
	lua_settop(L, 0);
	lmns_fuzz_intact(L, name, 0);
	return 0;
}
