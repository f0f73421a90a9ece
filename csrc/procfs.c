/*
 * procfs.c - /proc access that survives pivot_root.
 *
 * After a scenario pivots into a fresh tmpfs there is no /proc. An O_PATH
 * fd on the old /proc, pinned before the pivot, still resolves
 * "self/mountinfo" or "PID/ns/mnt" with openat(), also after setns and as an
 * unprivileged user. The pinned fd lives in the registry, not in a C global,
 * so each Lua state (and each forked child) has its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "lmns.h"

#define PROCFD_KEY "mountns.procfd"

int lmns_procfs_openat(lua_State *L, const char *relpath, int flags)
{
	char path[4096];
	int procfd;

	lua_getfield(L, LUA_REGISTRYINDEX, PROCFD_KEY);
	procfd = lua_isnumber(L, -1) ? (int)lua_tointeger(L, -1) : -1;
	lua_pop(L, 1);
	if (procfd >= 0)
		return openat(procfd, relpath, flags);
	if (snprintf(path, sizeof path, "/proc/%s", relpath) >=
	    (int)sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(path, flags);
}

static void lmns_proc_unpin_fd(lua_State *L)
{
	lua_getfield(L, LUA_REGISTRYINDEX, PROCFD_KEY);
	if (lua_isnumber(L, -1))
		close((int)lua_tointeger(L, -1));
	lua_pop(L, 1);
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, PROCFD_KEY);
}

/***
@module mountns.core
*/

/***
/proc after pivot_root
@section proc
*/

/***
Pin a /proc: later look-ups of this Lua state (`mountinfo`, `namespace`,
`unshare`'s uid maps) go through an fd on it, so they keep working after
`pivot_root` into a tree without /proc.
@function pin_proc
@tparam[opt="/proc"] string path
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "pin_proc PATH: strerror (ENAME)"
@treturn[2] int errno
*/
/* pin_proc([path="/proc"]) - resolve later /proc look-ups through path */
static int lmns_proc_pin(lua_State *L)
{
	const char *path;
	int fd;

	lmns_checknomore(L, 1);
	path = lmns_optpath(L, 1, "/proc");
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return lmns_fail(L, errno, "pin_proc", path, NULL);
	lmns_proc_unpin_fd(L);
	lua_pushinteger(L, fd);
	lua_setfield(L, LUA_REGISTRYINDEX, PROCFD_KEY);
	lua_pushboolean(L, 1);
	return 1;
}

/***
Close the pinned /proc fd; look-ups use the path /proc again.
@function unpin_proc
*/
static int lmns_proc_unpin(lua_State *L)
{
	lmns_checknomore(L, 0);
	lmns_proc_unpin_fd(L);
	return 0;
}

void lmns_procfs_open(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{ "pin_proc", lmns_proc_pin },
		{ "unpin_proc", lmns_proc_unpin },
		{ NULL, NULL }
	};

	luaL_setfuncs(L, funcs, 0);
}
