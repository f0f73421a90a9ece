/*
 * ns.c - unshare(2), setns(2) and namespace handles.
 *
 * A namespace handle is an nsfs fd (/proc/PID/ns/TYPE). Holding it keeps
 * the namespace alive: a mount namespace whose last fd and process are gone
 * is torn down and its mounts leave their peer groups, so scenarios keep one
 * handle per namespace.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lmns.h"
#include "uapi.h"

#define NS_MT "mountns.namespace"
/* registry: a weak-keyed set of every handle, for close_namespaces */
#define NS_OPEN_KEY "mountns.namespaces"

static const struct {
	const char *kind;
	int nstype;
	const char *optname;	/* option of unshare(opts) */
} ns_kinds[] = {
	{ "mnt", CLONE_NEWNS, "mount" },
	{ "user", CLONE_NEWUSER, "user" },
	{ "pid", CLONE_NEWPID, "pid" },
	{ "uts", CLONE_NEWUTS, "uts" },
	{ "ipc", CLONE_NEWIPC, "ipc" },
	{ "net", CLONE_NEWNET, "net" },
	{ "cgroup", CLONE_NEWCGROUP, "cgroup" },
	{ "time", CLONE_NEWTIME, "time" },
	{ NULL, 0, NULL }
};

/* unshare(1)'s --propagation values, read with luaL_checkoption */
static const char *const prop_names[] = {
	"private", "shared", "slave", "unchanged", NULL
};
static const unsigned long prop_values[] = {
	MS_PRIVATE, MS_SHARED, MS_SLAVE, 0
};
static const char *const prop_ops[] = {
	"unshare: make-rprivate", "unshare: make-rshared",
	"unshare: make-rslave", NULL
};

static void lmns_ns_name(lua_State *L, const lmns_handle *h);

static const lmns_class ns_class = {
	NS_MT, "namespace", sizeof(lmns_ns), lmns_ns_name
};

static lmns_ns *lmns_ns_check(lua_State *L, int i)
{
	return lmns_handle_check(L, i, &ns_class);
}

static lmns_ns *lmns_ns_checkopen(lua_State *L, int i)
{
	return lmns_handle_checkopen(L, i, &ns_class);
}

/* "mnt:[4026531841]", as readlink(1) and lsns(8) show it */
static void lmns_ns_name(lua_State *L, const lmns_handle *h)
{
	const lmns_ns *ns = (const lmns_ns *)h;
	char buf[64];

	snprintf(buf, sizeof buf, "%s:[%llu]%s", ns->kind, ns->ino,
		 h->fd < 0 ? " (closed)" : "");
	lua_pushstring(L, buf);
}

/*
 * The open namespace handle at stack index idx of that kind (NULL: any),
 * for other areas; anything else raises, naming argument arg and, when
 * idx is option field of it, the option.
 */
static lmns_ns *lmns_ns_checkat(lua_State *L, int idx, int arg,
				const char *field, const char *kind)
{
	lmns_ns *ns = luaL_testudata(L, idx, NS_MT);
	const char *err = NULL;

	if (!ns)
		err = lua_pushfstring(L, "%s namespace handle expected, got %s",
			!kind ? "a" : field || strcmp(kind, "mnt") ? kind :
			"mount", luaL_typename(L, idx));
	else if (ns->h.fd < 0)
		err = "attempt to use a closed namespace";
	else if (kind && strcmp(ns->kind, kind) != 0)
		err = lua_pushfstring(L, "%s namespace handle expected, got a "
			"%s namespace", kind, ns->kind);
	if (err && field)
		err = lua_pushfstring(L, "option '%s': %s", field, err);
	if (err)
		luaL_argerror(L, arg, err);
	return ns;
}

/* The open namespace handle at argument arg (fanotify_mounts, mntns_id). */
lmns_ns *lmns_ns_checkarg(lua_State *L, int arg, const char *kind)
{
	return lmns_ns_checkat(L, arg, arg, NULL, kind);
}

/* The open namespace handle at idx, option field of argument arg (idmap
 * of mount_setattr, ns of listmount and statmount). */
lmns_ns *lmns_ns_checkopt(lua_State *L, int idx, int arg, const char *field,
			  const char *kind)
{
	return lmns_ns_checkat(L, idx, arg, field, kind);
}

int lmns_ns_mntns_id(int fd, uint64_t *id)
{
	return ioctl(fd, NS_GET_MNTNS_ID, id);
}

/* Write "s" to /proc/self/<file>; returns 0 or -1 with errno set. */
static int lmns_ns_write_proc(lua_State *L, const char *file, const char *s)
{
	int fd = lmns_procfs_openat(L, file, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	err = errno;
	close(fd);
	errno = err;
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Map the caller's uid and gid to 0 in the user namespace it just entered. */
static int lmns_ns_map_root(lua_State *L, uid_t uid, gid_t gid,
			    const char **what)
{
	char map[64];

	*what = "/proc/self/setgroups";
	if (lmns_ns_write_proc(L, "self/setgroups", "deny") != 0 &&
	    errno != ENOENT)
		return -1;
	*what = "/proc/self/uid_map";
	snprintf(map, sizeof map, "0 %u 1\n", (unsigned)uid);
	if (lmns_ns_write_proc(L, "self/uid_map", map) != 0)
		return -1;
	*what = "/proc/self/gid_map";
	snprintf(map, sizeof map, "0 %u 1\n", (unsigned)gid);
	return lmns_ns_write_proc(L, "self/gid_map", map);
}

/***
@module mountns.core
*/

/***
Namespaces: unshare(2), setns(2) and namespace handles
@section namespaces
*/

/***
Move the calling process into new namespaces, like unshare(1).
@function unshare
@tparam[opt] table opts booleans `mount` (default true), `user`, `pid`,
`uts`, `ipc`, `net`, `cgroup`, `time`; `propagation`: what the new mount
namespace's mounts become, `"private"` (default, as unshare(1)),
`"shared"`, `"slave"` or `"unchanged"`; `map_root = true` (needs
`user = true`) maps the caller's uid and gid to root inside
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "unshare: strerror (ENAME)", or the failed step
(`unshare: write /proc/self/uid_map: ...`, `unshare: make-rprivate /: ...`)
@treturn[2] int errno
@see unshare(2)
@usage assert(mountns.unshare { user = true, map_root = true })
*/
/*
 * unshare({mount=true, user, pid, uts, ipc, net, cgroup, time,
 *          propagation="private", map_root})
 * All options are read before the system call, so a bad option changes
 * nothing.
 */
static int lmns_ns_unshare(lua_State *L)
{
	int flags = 0, i, map_root, prop;
	uid_t uid = getuid();
	gid_t gid = getgid();
	const char *what;

	static const char *const keys[] = {
		"mount", "user", "pid", "uts", "ipc", "net", "cgroup", "time",
		"propagation", "map_root", NULL
	};

	lmns_checknomore(L, 1);
	lmns_checkkeys(L, 1, keys);
	for (i = 0; ns_kinds[i].kind; i++)
		if (lmns_optbool(L, 1, ns_kinds[i].optname,
				 ns_kinds[i].nstype == CLONE_NEWNS))
			flags |= ns_kinds[i].nstype;
	map_root = lmns_optbool(L, 1, "map_root", 0);
	if (map_root && !(flags & CLONE_NEWUSER))
		return luaL_argerror(L, 1, "map_root needs user = true");
	prop = lmns_optoption(L, 1, "propagation", 0, prop_names);

	if (unshare(flags) != 0)
		return lmns_fail(L, errno, "unshare", NULL, NULL);
	if (map_root && lmns_ns_map_root(L, uid, gid, &what) != 0)
		return lmns_fail(L, errno, "unshare: write", what, NULL);
	/* like unshare(1): the new namespace's mounts get the asked propagation */
	if ((flags & CLONE_NEWNS) && prop_values[prop] != 0 &&
	    mount("none", "/", NULL, MS_REC | prop_values[prop], NULL) != 0)
		return lmns_fail(L, errno, prop_ops[prop], "/", NULL);
	lua_pushboolean(L, 1);
	return 1;
}

static int lmns_ns_kind_index(lua_State *L, int arg)
{
	static const char *const kinds[] = {
		"mnt", "user", "pid", "uts", "ipc", "net", "cgroup", "time",
		NULL
	};
	return lmns_checkoption(L, arg, "mnt", kinds);
}

/***
Open a handle on a namespace: /proc/PID/ns/KIND. The handle keeps the
namespace alive until it is closed or collected.
@function namespace
@tparam[opt] int pid default: the calling process
@tparam[opt="mnt"] string kind `mnt user pid uts ipc net cgroup time`
@treturn[1] namespace
@return[2] nil
@treturn[2] string "namespace /proc/PID/ns/KIND PATH: strerror (ENAME)"
@treturn[2] int errno
*/
static int lmns_ns_namespace(lua_State *L)
{
	char path[64];
	struct stat st;
	lmns_ns *ns;
	int k;

	lmns_checknomore(L, 2);
	k = lmns_ns_kind_index(L, 2);

	if (lua_isnoneornil(L, 1))
		snprintf(path, sizeof path, "self/ns/%s", ns_kinds[k].kind);
	else
		snprintf(path, sizeof path, "%lld/ns/%s",
			 (long long)luaL_checkinteger(L, 1), ns_kinds[k].kind);
	/* the handle exists, closed, before the fd does: no leak on error */
	ns = lmns_handle_new(L, &ns_class);
	ns->nstype = ns_kinds[k].nstype;
	ns->kind = ns_kinds[k].kind;
	ns->ino = 0;
	lua_getfield(L, LUA_REGISTRYINDEX, NS_OPEN_KEY);
	lua_pushvalue(L, -2);
	lua_pushboolean(L, 1);
	lua_rawset(L, -3);
	lua_pop(L, 1);
	ns->h.fd = lmns_procfs_openat(L, path, O_RDONLY | O_CLOEXEC);
	if (ns->h.fd < 0 || fstat(ns->h.fd, &st) != 0) {
		int err = errno;

		lua_pushfstring(L, "/proc/%s", path);
		return lmns_fail(L, err, "namespace", lua_tostring(L, -1),
				 NULL);
	}
	ns->ino = (unsigned long long)st.st_ino;
	return 1;
}

/***
Close every open namespace handle of this process but the ones given. A
forked child inherits the parent's nsfs fds, and each keeps its namespace
alive: a helper process calls this right after fork so that closing a
namespace in the parent still tears it down.
@function close_namespaces
@param[opt] ... the handles to keep open
@treturn int how many handles were closed
*/
static int lmns_ns_close_all(lua_State *L)
{
	int i, n = lua_gettop(L), closed = 0;

	for (i = 1; i <= n; i++)
		lmns_ns_check(L, i);
	lua_getfield(L, LUA_REGISTRYINDEX, NS_OPEN_KEY);
	lua_pushnil(L);
	while (lua_next(L, n + 1) != 0) {
		lmns_ns *ns = lua_touserdata(L, -2);
		int keep = 0;

		lua_pop(L, 1);
		for (i = 1; i <= n; i++)
			if (lua_touserdata(L, i) == ns)
				keep = 1;
		if (!keep && ns->h.fd >= 0) {
			lmns_handle_closefd(&ns->h);
			closed++;
		}
	}
	lua_pushinteger(L, closed);
	return 1;
}

/***
The 64-bit ID of a mount namespace (the NS_GET_MNTNS_ID ioctl, Linux 6.11),
as `listmount` and `statmount` take it.
@function mntns_id
@tparam namespace ns a mount namespace handle
@treturn[1] int
@return[2] nil
@treturn[2] string "mntns_id mnt:[INO]: strerror (ENAME)"
@treturn[2] int errno
*/
static int lmns_ns_mntns_id_f(lua_State *L)
{
	lmns_ns *ns;
	uint64_t id;

	lmns_checknomore(L, 1);
	ns = lmns_ns_checkarg(L, 1, "mnt");

	if (lmns_ns_mntns_id(ns->h.fd, &id) != 0) {
		int err = errno;

		lmns_ns_name(L, &ns->h);
		return lmns_fail(L, err, "mntns_id", lua_tostring(L, -1), NULL);
	}
	lua_pushinteger(L, (lua_Integer)id);
	return 1;
}

/***
A namespace handle (from `namespace`): an nsfs fd. Handles of the same
namespace are equal (`==`); `tostring` gives `"mnt:[4026531841]"`, as
readlink(1) and lsns(8) show it. It works with `<close>` on Lua 5.4;
methods other than `close` raise on a closed handle.
@type namespace
*/

/***
The namespace ID: the inode number of its nsfs file.
@function namespace:id
@treturn int
*/
static int lmns_ns_id(lua_State *L)
{
	lmns_ns *ns;

	lmns_checknomore(L, 1);
	ns = lmns_ns_checkopen(L, 1);

	lmns_pushid(L, ns->ino);
	return 1;
}

/***
The fd of the handle.
@function namespace:fileno
@treturn int
*/

/***
The kind of namespace: `"mnt"`, `"user"`, ...
@function namespace:kind
@treturn string
*/
static int lmns_ns_kind(lua_State *L)
{
	lmns_checknomore(L, 1);
	lua_pushstring(L, lmns_ns_check(L, 1)->kind);
	return 1;
}

/***
Join the namespace, like nsenter(1).
@function namespace:enter
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "setns mnt:[ID] PATH: strerror (ENAME)"
@treturn[2] int errno
@see setns(2)
*/
static int lmns_ns_enter(lua_State *L)
{
	lmns_ns *ns;

	lmns_checknomore(L, 1);
	ns = lmns_ns_checkopen(L, 1);

	if (ns->nstype == CLONE_NEWNS)
		lmns_libmount_preload();	/* the new root may lack it */
	if (setns(ns->h.fd, ns->nstype) != 0) {
		int err = errno;

		lmns_ns_name(L, &ns->h);
		return lmns_fail(L, err, "setns", lua_tostring(L, -1), NULL);
	}
	lua_pushboolean(L, 1);
	return 1;
}

/***
Close the handle; closing twice is harmless.
@function namespace:close
*/
static int lmns_ns_eq(lua_State *L)
{
	lmns_ns *a, *b;

	lmns_checknomore(L, 2);
	a = lmns_ns_check(L, 1);
	b = lmns_ns_check(L, 2);

	lua_pushboolean(L, a->ino == b->ino && a->nstype == b->nstype);
	return 1;
}

void lmns_ns_open(lua_State *L)
{
	static const luaL_Reg methods[] = {
		{ "id", lmns_ns_id },
		{ "kind", lmns_ns_kind },
		{ "enter", lmns_ns_enter },
		{ NULL, NULL }
	};
	static const luaL_Reg meta[] = {
		{ "__eq", lmns_ns_eq },
		{ NULL, NULL }
	};
	static const luaL_Reg funcs[] = {
		{ "unshare", lmns_ns_unshare },
		{ "namespace", lmns_ns_namespace },
		{ "close_namespaces", lmns_ns_close_all },
		{ "mntns_id", lmns_ns_mntns_id_f },
		{ NULL, NULL }
	};

	lua_newtable(L);
	lua_newtable(L);
	lua_pushliteral(L, "k");
	lua_setfield(L, -2, "__mode");
	lua_setmetatable(L, -2);
	lua_setfield(L, LUA_REGISTRYINDEX, NS_OPEN_KEY);
	lmns_handle_newclass(L, &ns_class, methods, meta);
	luaL_setfuncs(L, funcs, 0);
}
