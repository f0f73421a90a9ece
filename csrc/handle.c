/*
 * handle.c - the one fd-holding userdata of the core (namespace, mount fd,
 * watch, poller), and the one way to wait on fds.
 *
 * Every handle struct starts with an lmns_handle, and each class is
 * described once by an lmns_class: the check, close, fileno, tostring and
 * class set-up below serve all of them, so "attempt to use a closed X",
 * close twice, __gc and __close behave the same everywhere. A handle is
 * created closed (fd -1) before its fd exists, as liolib's newprefile: an
 * allocation error or a failed system call leaks nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "lmns.h"

/* Lua 5.1 has no luaL_testudata (lmns.h maps it here) */
#ifdef LMNS_COMPAT_TESTUDATA
void *lmns_testudata(lua_State *L, int i, const char *tname)
{
	void *p = lua_touserdata(L, i);

	if (!p || !lua_getmetatable(L, i))
		return NULL;
	luaL_getmetatable(L, tname);
	if (!lua_rawequal(L, -1, -2))
		p = NULL;
	lua_pop(L, 2);
	return p;
}
#endif

void *lmns_handle_new(lua_State *L, const lmns_class *cls)
{
	lmns_handle *h = lua_newuserdata(L, cls->size);

	h->fd = -1;
	h->cls = cls;
	luaL_getmetatable(L, cls->tname);
	lua_setmetatable(L, -2);
	return h;
}

void *lmns_handle_check(lua_State *L, int i, const lmns_class *cls)
{
	return luaL_checkudata(L, i, cls->tname);
}

void *lmns_handle_checkopen(lua_State *L, int i, const lmns_class *cls)
{
	lmns_handle *h = luaL_checkudata(L, i, cls->tname);

	if (h->fd < 0)
		luaL_error(L, "attempt to use a closed %s", cls->noun);
	return h;
}

void lmns_handle_closefd(lmns_handle *h)
{
	if (h->fd >= 0) {
		int fd = h->fd;

		h->fd = -1;
		close(fd);
	}
}

void lmns_handle_pushname(lua_State *L, const lmns_handle *h)
{
	h->cls->name(L, h);
}

/* the class of a generic method: its upvalue */
static const lmns_class *lmns_handle_class(lua_State *L)
{
	return lua_touserdata(L, lua_upvalueindex(1));
}

/* close(), __gc and __close: idempotent, like lfs's dir objects. The
 * method takes no argument; __close is given the error as a second one
 * (Lua 5.4), __gc nothing more. */
static int lmns_handle_closeargs(lua_State *L, int n)
{
	lmns_checknomore(L, n);
	lmns_handle_closefd(lmns_handle_check(L, 1, lmns_handle_class(L)));
	return 0;
}

static int lmns_handle_close(lua_State *L)
{
	return lmns_handle_closeargs(L, 1);
}

static int lmns_handle_closemeta(lua_State *L)
{
	return lmns_handle_closeargs(L, 2);
}

static int lmns_handle_fileno(lua_State *L)
{
	lmns_handle *h;

	lmns_checknomore(L, 1);
	h = lmns_handle_checkopen(L, 1, lmns_handle_class(L));

	lua_pushinteger(L, h->fd);
	return 1;
}

static int lmns_handle_tostring(lua_State *L)
{
	lmns_checknomore(L, 1);
	lmns_handle_pushname(L, lmns_handle_check(L, 1, lmns_handle_class(L)));
	return 1;
}

/* Two handles that are the same userdata (the default of watch, poller). */
int lmns_handle_same(lua_State *L)
{
	lmns_checknomore(L, 2);
	lua_pushboolean(L, lua_touserdata(L, 1) == lua_touserdata(L, 2));
	return 1;
}

static void lmns_handle_setgeneric(lua_State *L, const lmns_class *cls,
				   const char *name, lua_CFunction f)
{
	lua_pushlightuserdata(L, (void *)(size_t)cls);
	lua_pushcclosure(L, f, 1);
	lua_setfield(L, -2, name);
}

/*
 * The metatable of cls: close, fileno, __gc, __close and __tostring from
 * here, then the class's own methods and metamethods (__eq at least).
 */
void lmns_handle_newclass(lua_State *L, const lmns_class *cls,
			  const luaL_Reg *methods, const luaL_Reg *meta)
{
	luaL_newmetatable(L, cls->tname);
	lmns_handle_setgeneric(L, cls, "__gc", lmns_handle_closemeta);
	lmns_handle_setgeneric(L, cls, "__close", lmns_handle_closemeta);
	lmns_handle_setgeneric(L, cls, "__tostring", lmns_handle_tostring);
	luaL_setfuncs(L, meta, 0);
	lua_newtable(L);
	lmns_handle_setgeneric(L, cls, "close", lmns_handle_close);
	lmns_handle_setgeneric(L, cls, "fileno", lmns_handle_fileno);
	luaL_setfuncs(L, methods, 0);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
}

/* ---- waiting ------------------------------------------------------------ */

/* The monotonic clock in seconds. */
double lmns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What is left of timeout (negative: for ever) that ends at deadline:
 * for ever, or >= 0 seconds. */
double lmns_left(double timeout, double deadline)
{
	double left;

	if (timeout < 0)
		return -1;
	left = deadline - lmns_now();
	return left > 0 ? left : 0;
}

/* Seconds left (negative: for ever) as poll's milliseconds, rounded up so
 * a short wait is not a busy zero. */
static int lmns_poll_ms(double left)
{
	if (left < 0)
		return -1;
	if (left > 2e6)
		return 2000000000;
	return (int)(left * 1000 + 0.999);
}

/*
 * poll() with a timeout in seconds (negative: for ever) that resumes after
 * a signal with what is left, unless the signal's handler set a Lua hook:
 * the standalone interpreters (lua.c, luajit.c) answer Ctrl-C so, to raise
 * "interrupted!" at the next Lua instruction. Then it fails with EINTR at
 * once; resuming would hold Ctrl-C back until the timeout.
 */
int lmns_poll(lua_State *L, struct pollfd *pfd, nfds_t n, double timeout)
{
	double deadline = lmns_now() + timeout;
	lua_Hook hook = lua_gethook(L);
	int mask = lua_gethookmask(L), rc;

	for (;;) {
		double left = timeout < 0 ? -1 : deadline - lmns_now();

		rc = poll(pfd, n, timeout < 0 ? -1 :
			  lmns_poll_ms(left > 0 ? left : 0));
		if (rc >= 0 || errno != EINTR)
			return rc;
		if (lua_gethook(L) != hook || lua_gethookmask(L) != mask) {
			errno = EINTR;
			return -1;
		}
	}
}
