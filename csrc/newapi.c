/*
 * newapi.c - the file-descriptor based mount API: open_tree(2),
 * move_mount(2), fsopen(2)/fsconfig(2)/fsmount(2) and mount_setattr(2).
 *
 * A tree made by open_tree(OPEN_TREE_CLONE) or fsmount() is a detached mount
 * held by an fd: it stays out of every mount table until move_mount()
 * attaches it, and it is torn down when its last fd closes. So the fd lives
 * in a userdata whose __gc closes it, like liolib's files.
 *
 * The system calls go through syscall(2) with numbers from uapi.h when the
 * headers lack them, so a module built against old headers still reaches
 * the calls of a new kernel, and an old kernel answers ENOSYS, which reaches
 * Lua as nil, "op ...: Function not implemented (ENOSYS)", errno.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lmns.h"
#include "uapi.h"

#define MOUNTFD_MT "mountns.mountfd"

/***
@module mountns.core
*/

/***
The new mount API: open_tree(2), move_mount(2), fsopen(2)/fsconfig(2)/
fsmount(2), mount_setattr(2). Each call returns `nil, "op ...: strerror
(ENAME)", errno` on an OS failure (`ENOSYS` on a kernel without it: see
`features`) and raises on misuse.
@section newapi
*/


typedef struct lmns_mountfd {
	lmns_handle h;		/* h.fd: the mount fd */
	char what[80];		/* how it was made, for messages */
} lmns_mountfd;

/* ---- the mount fd userdata -------------------------------------------- */

/* "mountfd 5 [fsmount tmpfs]", "mountfd (closed) [fsmount tmpfs]" */
static void lmns_mountfd_name(lua_State *L, const lmns_handle *h)
{
	const lmns_mountfd *m = (const lmns_mountfd *)h;

	if (h->fd < 0)
		lua_pushfstring(L, "mountfd (closed) [%s]", m->what);
	else
		lua_pushfstring(L, "mountfd %d [%s]", h->fd, m->what);
}

static const lmns_class mountfd_class = {
	MOUNTFD_MT, "mount fd", sizeof(lmns_mountfd), lmns_mountfd_name
};

/* A closed handle first, the fd after: an allocation error leaks nothing. */
static lmns_mountfd *lmns_mountfd_new(lua_State *L, const char *op,
				      const char *arg)
{
	lmns_mountfd *m = lmns_handle_new(L, &mountfd_class);

	snprintf(m->what, sizeof m->what, "%s %s", op, arg);
	return m;
}

lmns_handle *lmns_mountfd_test(lua_State *L, int arg)
{
	lmns_handle *h = luaL_testudata(L, arg, MOUNTFD_MT);

	if (h && h->fd < 0)
		luaL_argerror(L, arg, "attempt to use a closed mount fd");
	return h;
}

/* Two handles are equal when they hold the same mount. */
static int lmns_mountfd_eq(lua_State *L)
{
	lmns_mountfd *a, *b;
	unsigned long long ia, ib;
	int ua, ub;

	lmns_checknomore(L, 2);
	a = lmns_handle_check(L, 1, &mountfd_class);
	b = lmns_handle_check(L, 2, &mountfd_class);

	lua_pushboolean(L, a == b || (a->h.fd >= 0 && b->h.fd >= 0 &&
		lmns_mount_id_of(a->h.fd, "", AT_EMPTY_PATH, &ia, &ua) == 0 &&
		lmns_mount_id_of(b->h.fd, "", AT_EMPTY_PATH, &ib, &ub) == 0 &&
		ia == ib && ua == ub));
	return 1;
}

/* ---- arguments -------------------------------------------------------- */

/*
 * A place for the *at calls: a mount fd (dfd = fd, path "", *empty set) or
 * a path (AT_FDCWD). name is what error messages show.
 */
typedef struct lmns_where {
	int dfd;
	const char *path;
	const char *name;
	int empty;
} lmns_where;

static void lmns_check_where(lua_State *L, int arg, lmns_where *w)
{
	lmns_mountfd *m = (lmns_mountfd *)lmns_mountfd_test(L, arg);

	if (m) {
		w->dfd = m->h.fd;
		w->path = "";
		w->empty = 1;
		/* the name stays on the stack above the arguments: replacing
		 * the userdata could let the collector close its fd */
		w->name = lua_pushfstring(L, "[%s]", m->what);
		return;
	}
	if (lua_type(L, arg) != LUA_TSTRING)
		luaL_argerror(L, arg, lua_pushfstring(L,
			"path or mount fd expected, got %s",
			luaL_typename(L, arg)));
	w->dfd = AT_FDCWD;
	w->path = lmns_checkpath(L, arg);
	w->name = w->path;
	w->empty = 0;
}

/* ---- open_tree, move_mount -------------------------------------------- */

/***
Open a mount, or a detached copy of it, as a mount fd.
@function open_tree
@tparam string|mountfd path a path, or a mount fd (to copy a detached tree)
@tparam[opt] table opts booleans `clone` (a detached copy), `recursive`
(with `clone`: the submounts too), `nofollow`, `no_automount`, `empty_path`
@treturn[1] mountfd
@return[2] nil
@treturn[2] string "open_tree PATH: strerror (ENAME)"
@treturn[2] int errno
@see open_tree(2)
@usage local t = assert(mountns.open_tree("/X", { clone = true, recursive = true }))
assert(mountns.move_mount(t, "/Y"))
*/
static int lmns_newapi_open_tree(lua_State *L)
{
	static const char *const known[] = {
		"clone", "recursive", "nofollow", "no_automount", "empty_path",
		NULL
	};
	lmns_where w;
	unsigned int flags = OPEN_TREE_CLOEXEC;
	lmns_mountfd *m;
	int fd;

	lmns_checknomore(L, 2);
	lua_settop(L, 2);	/* names pushed next land above the args */
	lmns_check_where(L, 1, &w);
	lmns_checkkeys(L, 2, known);
	if (lmns_optbool(L, 2, "clone", 0))
		flags |= OPEN_TREE_CLONE;
	if (lmns_optbool(L, 2, "recursive", 0))
		flags |= AT_RECURSIVE;
	if (lmns_optbool(L, 2, "nofollow", 0))
		flags |= AT_SYMLINK_NOFOLLOW;
	if (lmns_optbool(L, 2, "no_automount", 0))
		flags |= AT_NO_AUTOMOUNT;
	if (lmns_optbool(L, 2, "empty_path", 0) || w.empty)
		flags |= AT_EMPTY_PATH;
	if ((flags & AT_RECURSIVE) && !(flags & OPEN_TREE_CLONE))
		return luaL_argerror(L, 2, "recursive needs clone = true");
	m = lmns_mountfd_new(L, (flags & OPEN_TREE_CLONE) ?
			     "open_tree clone" : "open_tree", w.name);
	fd = (int)syscall(SYS_open_tree, w.dfd, w.path, flags);
	if (fd < 0)
		return lmns_fail(L, errno, "open_tree", w.name, NULL);
	m->h.fd = fd;
	return 1;
}

/*
 * move_mount knows flag f (features() and move_mount ask) when it is not
 * rejected as EINVAL up front: with NULL paths a kernel that knows it fails
 * later, with EFAULT or ENOENT. 5.10 checks the caller's right to mount
 * first: EPERM tells nothing and counts as unknown (uid 65534 on Debian's
 * 5.10 was told it had MOVE_MOUNT_BENEATH); mountns.features() asks again
 * in a child that may mount.
 */
int lmns_has_move_flag(unsigned int f)
{
	long rc = syscall(SYS_move_mount, -1, NULL, -1, NULL, f);

	return !(rc < 0 && (errno == EINVAL || errno == ENOSYS ||
			    errno == EPERM));
}

/***
Move or attach a mount, or copy a peer group. Symlinks are followed (as
mount(8) does) unless `nofollow`.
@function move_mount
@tparam string|mountfd from
@tparam string|mountfd to
@tparam[opt] table opts `set_group = true`: make `to` a peer of `from`
instead of moving (same superblock, `to` private; Linux 5.15);
`beneath = true`: mount under the top mount at `to` (Linux 6.5);
`nofollow = true`
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "move_mount FROM TO: strerror (ENAME)" (a mount fd shows
as "[fsmount tmpfs]")
@treturn[2] int errno
@see move_mount(2)
*/
static int lmns_newapi_move_mount(lua_State *L)
{
	static const char *const known[] = {
		"set_group", "beneath", "nofollow", NULL
	};
	lmns_where from, to;
	unsigned int flags = 0;
	const char *op = "move_mount";

	lmns_checknomore(L, 3);
	lua_settop(L, 3);	/* names pushed next land above the args */
	lmns_check_where(L, 1, &from);
	lmns_check_where(L, 2, &to);
	lmns_checkkeys(L, 3, known);
	if (lmns_optbool(L, 3, "set_group", 0)) {
		flags |= MOVE_MOUNT_SET_GROUP;
		op = "move_mount set_group";
	}
	if (lmns_optbool(L, 3, "beneath", 0)) {
		flags |= MOVE_MOUNT_BENEATH;
		op = "move_mount beneath";
	}
	if ((flags & MOVE_MOUNT_SET_GROUP) && (flags & MOVE_MOUNT_BENEATH))
		return luaL_argerror(L, 3, "set_group and beneath exclude "
				     "each other");
	if (!lmns_optbool(L, 3, "nofollow", 0))
		flags |= MOVE_MOUNT_F_SYMLINKS | MOVE_MOUNT_T_SYMLINKS;
	if (from.empty)
		flags |= MOVE_MOUNT_F_EMPTY_PATH;
	if (to.empty)
		flags |= MOVE_MOUNT_T_EMPTY_PATH;
	if (syscall(SYS_move_mount, from.dfd, from.path, to.dfd, to.path,
		    flags) != 0) {
		int err = errno;

		/* a kernel without the flag says EINVAL: say what it lacks */
		if (err == EINVAL && (flags & (MOVE_MOUNT_SET_GROUP |
		    MOVE_MOUNT_BENEATH)) && !lmns_has_move_flag(flags &
		    (MOVE_MOUNT_SET_GROUP | MOVE_MOUNT_BENEATH)))
			err = ENOSYS;
		return lmns_fail(L, err, op, from.name, to.name);
	}
	lua_pushboolean(L, 1);
	return 1;
}

/* ---- attributes ------------------------------------------------------- */

/* the on/off attributes: name = true sets, false clears */
static const lmns_flag attr_bits[] = {
	{ "ro", MOUNT_ATTR_RDONLY },
	{ "nosuid", MOUNT_ATTR_NOSUID },
	{ "nodev", MOUNT_ATTR_NODEV },
	{ "noexec", MOUNT_ATTR_NOEXEC },
	{ "nodiratime", MOUNT_ATTR_NODIRATIME },
	{ "nosymfollow", MOUNT_ATTR_NOSYMFOLLOW },
	{ NULL, 0 }
};

/* the atime modes: one value of a 3-valued field (MOUNT_ATTR__ATIME) */
static const lmns_flag atime_modes[] = {
	{ "relatime", MOUNT_ATTR_RELATIME },
	{ "noatime", MOUNT_ATTR_NOATIME },
	{ "strictatime", MOUNT_ATTR_STRICTATIME },
	{ NULL, 0 }
};

/* the same names as a flag list, for fsmount's attrs "ro,nosuid" */
static const lmns_flag attr_flags[] = {
	{ "ro", MOUNT_ATTR_RDONLY },	{ "rw", 0 },
	{ "nosuid", MOUNT_ATTR_NOSUID },
	{ "nodev", MOUNT_ATTR_NODEV },
	{ "noexec", MOUNT_ATTR_NOEXEC },
	{ "nodiratime", MOUNT_ATTR_NODIRATIME },
	{ "nosymfollow", MOUNT_ATTR_NOSYMFOLLOW },
	{ "relatime", MOUNT_ATTR_RELATIME },
	{ "noatime", MOUNT_ATTR_NOATIME },
	{ "strictatime", MOUNT_ATTR_STRICTATIME },
	{ NULL, 0 }
};

static const char *const prop_names[] = {
	"shared", "private", "slave", "unbindable", NULL
};
static const uint64_t prop_values[] = {
	MS_SHARED, MS_PRIVATE, MS_SLAVE, MS_UNBINDABLE
};

/* opts[name] as nil (-1), false (0) or true (1); anything else raises */
static int lmns_tribool(lua_State *L, int arg, const char *name)
{
	int v;

	lua_getfield(L, arg, name);
	if (lua_isnil(L, -1))
		v = -1;
	else if (lua_type(L, -1) == LUA_TBOOLEAN)
		v = lua_toboolean(L, -1);
	else
		return luaL_argerror(L, arg, lua_pushfstring(L,
			"attribute '%s' must be a boolean, got %s", name,
			luaL_typename(L, -1)));
	lua_pop(L, 1);
	return v;
}

/*
 * Read the attribute table at arg into attr: on/off bits, one atime mode,
 * propagation and idmap (when allow_prop). Misuse raises.
 */
static void lmns_check_attrs(lua_State *L, int arg, struct lmns_mount_attr *a,
			     int allow_prop)
{
	const lmns_flag *f;
	int v, atime_set = 0;

	memset(a, 0, sizeof *a);
	if (lua_isnoneornil(L, arg))
		return;
	luaL_checktype(L, arg, LUA_TTABLE);
	for (f = attr_bits; f->name; f++) {
		v = lmns_tribool(L, arg, f->name);
		if (v == 1)
			a->attr_set |= f->value;
		else if (v == 0)
			a->attr_clr |= f->value;
	}
	for (f = atime_modes; f->name; f++) {
		v = lmns_tribool(L, arg, f->name);
		if (v == -1)
			continue;
		if (v == 0 && f->value == MOUNT_ATTR_RELATIME)
			luaL_argerror(L, arg, "relatime = false names no atime "
				      "mode: set noatime or strictatime");
		if (atime_set++)
			luaL_argerror(L, arg, "more than one atime mode "
				      "(noatime, relatime, strictatime)");
		/* the field is replaced whole; false goes back to relatime */
		a->attr_clr |= MOUNT_ATTR__ATIME;
		a->attr_set |= v ? f->value : MOUNT_ATTR_RELATIME;
	}
	if (!allow_prop)
		return;
	{
		int i = lmns_optoption(L, arg, "propagation", -1, prop_names);

		if (i >= 0)
			a->propagation = prop_values[i];
	}
	lua_getfield(L, arg, "idmap");
	if (!lua_isnil(L, -1)) {
		a->attr_set |= MOUNT_ATTR_IDMAP;
		a->userns_fd = (uint64_t)lmns_ns_checkopt(L, lua_gettop(L),
						arg, "idmap", "user")->h.fd;
	}
	lua_pop(L, 1);
}

/***
Change the attributes and propagation of a mount, or of a tree.
`ro nosuid nodev noexec nodiratime nosymfollow`: `true` sets, `false`
clears, absent leaves alone; one atime mode of `noatime`, `relatime`,
`strictatime` (`noatime = false` goes back to relatime).
@function mount_setattr
@tparam string|mountfd target
@tparam table attrs the attributes above, and `recursive`, `propagation`
(`"shared" "private" "slave" "unbindable"`), `idmap` (a user namespace
handle, `mountns.namespace(pid, "user")`: for a detached mount from
`open_tree{clone = true}`), `nofollow`
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "mount_setattr TARGET: strerror (ENAME)"
@treturn[2] int errno
@see mount_setattr(2)
@usage assert(mountns.mount_setattr("/X", { ro = true, propagation = "shared",
  recursive = true }))
*/
static int lmns_newapi_mount_setattr(lua_State *L)
{
	static const char *const known[] = {
		"recursive", "propagation", "ro", "nosuid", "nodev", "noexec",
		"noatime", "relatime", "strictatime", "nodiratime",
		"nosymfollow", "idmap", "nofollow", NULL
	};
	struct lmns_mount_attr attr;
	lmns_where w;
	unsigned int flags = 0;

	lmns_checknomore(L, 2);
	lua_settop(L, 2);	/* names pushed next land above the args */
	lmns_check_where(L, 1, &w);
	luaL_checktype(L, 2, LUA_TTABLE);
	lmns_checkkeys(L, 2, known);
	lmns_check_attrs(L, 2, &attr, 1);
	if (lmns_optbool(L, 2, "recursive", 0))
		flags |= AT_RECURSIVE;
	if (lmns_optbool(L, 2, "nofollow", 0))
		flags |= AT_SYMLINK_NOFOLLOW;
	if (w.empty)
		flags |= AT_EMPTY_PATH;
	if (syscall(SYS_mount_setattr, w.dfd, w.path, flags, &attr,
		    sizeof attr) != 0)
		return lmns_fail(L, errno, (flags & AT_RECURSIVE) ?
				 "mount_setattr recursive" : "mount_setattr",
				 w.name, NULL);
	lua_pushboolean(L, 1);
	return 1;
}

/* ---- fsopen, fsconfig, fsmount ---------------------------------------- */

/*
 * After a failed fsconfig the kernel keeps messages ("e tmpfs: Bad value
 * for 'size'") readable from the fs-context fd: push the error lines joined
 * with "; " (or an empty string).
 */
static void lmns_push_fslog(lua_State *L, int fsfd)
{
	luaL_Buffer b;
	char msg[512];
	ssize_t n;
	int any = 0;

	luaL_buffinit(L, &b);
	while ((n = read(fsfd, msg, sizeof msg - 1)) > 0) {
		while (n > 0 && msg[n - 1] == '\n')
			n--;
		msg[n] = '\0';
		if (n >= 2 && msg[1] == ' ' && (msg[0] == 'e' || msg[0] == 'w'))
		{
			if (any++)
				luaL_addstring(&b, "; ");
			luaL_addstring(&b, msg + 2);
		}
	}
	luaL_pushresult(&b);
}

/* fail with "op fstype what (kernel log): strerror (ENAME)" */
static int lmns_fsfail(lua_State *L, int err, int fsfd, const char *op,
		       const char *fstype, const char *what)
{
	lmns_push_fslog(L, fsfd);
	if (lua_rawlen(L, -1) > 0) {
		if (what)
			lua_pushfstring(L, "%s (%s)", what, lua_tostring(L, -1));
		else
			lua_pushfstring(L, "(%s)", lua_tostring(L, -1));
		what = lua_tostring(L, -1);
	}
	return lmns_fail(L, err, op, fstype, what);
}

/* One fsconfig call; key with value NULL is a flag. 0 or -1 with errno. */
static int lmns_fsconfig(int fsfd, const char *key, const char *value)
{
	return (int)syscall(SYS_fsconfig, fsfd, value ?
			    LMNS_FSCONFIG_SET_STRING : LMNS_FSCONFIG_SET_FLAG,
			    key, value, 0);
}

/*
 * Apply one config entry (key at -2, value at -1) to fsfd. Returns 0, or the
 * count of lmns_fail's results. A bad key or value type raises: fsmount
 * makes a first pass with fsfd -1 that only checks, so that raise comes
 * before any fd exists.
 */
static int lmns_fsconfig_entry(lua_State *L, int fsfd, const char *fstype)
{
	const char *key, *value = NULL;

	if (lua_type(L, -2) != LUA_TSTRING)
		return luaL_argerror(L, 2, lua_pushfstring(L,
			"config keys must be strings, got %s",
			luaL_typename(L, -2)));
	key = lua_tostring(L, -2);
	switch (lua_type(L, -1)) {
	case LUA_TBOOLEAN:
		if (!lua_toboolean(L, -1))
			return 0;	/* false: leave the option unset */
		break;
	case LUA_TSTRING:
	case LUA_TNUMBER:
		value = lua_tostring(L, -1);	/* converts the copy */
		break;
	default:
		return luaL_argerror(L, 2, lua_pushfstring(L,
			"config '%s' must be a string, number or true, got %s",
			key, luaL_typename(L, -1)));
	}
	/* the kernel would read a key or value cut at a NUL byte */
	if (strlen(key) != lua_rawlen(L, -2) ||
	    (value && strlen(value) != lua_rawlen(L, -1)))
		return luaL_argerror(L, 2, lua_pushfstring(L,
			"config '%s' contains a NUL byte", key));
	if (fsfd < 0 || lmns_fsconfig(fsfd, key, value) == 0)
		return 0;	/* fsfd -1: the checking pass */
	{
		int err = errno;

		if (value)
			lua_pushfstring(L, "%s=%s", key, value);
		else
			lua_pushstring(L, key);
		return lmns_fsfail(L, err, fsfd, "fsconfig", fstype,
				   lua_tostring(L, -1));
	}
}

/* Apply the config table at arg: the array part in order (each a flag name
 * or a {key, value} pair), then the other keys. */
static int lmns_fsconfig_all(lua_State *L, int arg, int fsfd,
			     const char *fstype)
{
	int i, n, nret;

	if (lua_isnoneornil(L, arg))
		return 0;
	n = (int)lua_rawlen(L, arg);
	for (i = 1; i <= n; i++) {
		lua_rawgeti(L, arg, i);
		if (lua_type(L, -1) == LUA_TSTRING) {
			lua_pushboolean(L, 1);	/* "ro" -> ro = true */
		} else if (lua_type(L, -1) == LUA_TTABLE) {
			lua_rawgeti(L, -1, 1);
			lua_rawgeti(L, -2, 2);
			lua_remove(L, -3);
		} else {
			return luaL_argerror(L, arg, lua_pushfstring(L,
				"config #%d must be a flag name or a {key, "
				"value} pair, got %s", i, luaL_typename(L, -1)));
		}
		if ((nret = lmns_fsconfig_entry(L, fsfd, fstype)))
			return nret;
		lua_pop(L, 2);
	}
	lua_pushnil(L);
	while (lua_next(L, arg)) {
		lua_Number k = lua_type(L, -2) == LUA_TNUMBER ?
			       lua_tonumber(L, -2) : 0;

		if (k >= 1 && k <= n && k == (lua_Number)(int)k) {
			lua_pop(L, 1);
			continue;
		}
		lua_pushvalue(L, -2);	/* lua_tostring must not touch keys */
		lua_insert(L, -2);
		if ((nret = lmns_fsconfig_entry(L, fsfd, fstype)))
			return nret;
		lua_pop(L, 2);
	}
	return 0;
}

/* fsmount's attrs: a flag list ("ro,nosuid", {"ro"}) or a table of booleans */
static unsigned int lmns_check_fsattrs(lua_State *L, int arg)
{
	struct lmns_mount_attr a;

	if (lua_type(L, arg) != LUA_TTABLE || lua_rawlen(L, arg) > 0)
		return (unsigned int)lmns_checkflags(L, arg, attr_flags);
	{
		static const char *const known[] = {
			"ro", "nosuid", "nodev", "noexec", "noatime",
			"relatime", "strictatime", "nodiratime",
			"nosymfollow", NULL
		};
		lmns_checkkeys(L, arg, known);
	}
	lmns_check_attrs(L, arg, &a, 0);
	return (unsigned int)a.attr_set;
}

/***
Create a filesystem and a detached mount of it: fsopen, one fsconfig per
option, create, fsmount.
@function fsmount
@tparam string fstype
@tparam[opt] table config fsconfig keys: `{size = "1m", source = "x",
ro = true}` (a string or number is a value, `true` a flag, `false` skips);
array entries (flag names or `{key, value}` pairs) go first, in order
@param[opt] attrs mount attributes, as a flag list (`"ro,nosuid"`) or a
table of booleans (`{ro = true}`)
@treturn[1] mountfd detached, for `move_mount`
@return[2] nil
@treturn[2] string "fsconfig FSTYPE KEY=VALUE (the kernel's message):
strerror (ENAME)", "fsopen FSTYPE: ...", "fsmount FSTYPE: ..."
@treturn[2] int errno
@see fsopen(2), fsconfig(2), fsmount(2)
@usage local m = assert(mountns.fsmount("tmpfs", { size = "1m" }, "nodev"))
assert(mountns.move_mount(m, "/mnt")); m:close()
*/
static int lmns_newapi_fsmount(lua_State *L)
{
	const char *fstype;
	unsigned int attrs;
	lmns_mountfd *fs, *m;
	int fd, nret;

	lmns_checknomore(L, 3);
	lua_settop(L, 3);	/* the handles pushed below land above the
				 * args: with no config, slot 2 was the fs
				 * context's handle, read as the config */
	fstype = lmns_checkcstring(L, 1, "fstype");
	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	attrs = lmns_check_fsattrs(L, 3);
	lmns_fsconfig_all(L, 2, -1, fstype);	/* misuse raises here */
	/* the fs context is a handle too, so a raised error closes it */
	fs = lmns_mountfd_new(L, "fsopen", fstype);
	fs->h.fd = (int)syscall(SYS_fsopen, fstype, FSOPEN_CLOEXEC);
	if (fs->h.fd < 0)
		return lmns_fail(L, errno, "fsopen", fstype, NULL);
	nret = lmns_fsconfig_all(L, 2, fs->h.fd, fstype);
	if (nret) {
		lmns_handle_closefd(&fs->h);
		return nret;
	}
	if (syscall(SYS_fsconfig, fs->h.fd, LMNS_FSCONFIG_CMD_CREATE, NULL,
		    NULL, 0) != 0) {
		nret = lmns_fsfail(L, errno, fs->h.fd, "fsconfig", fstype,
				   "create");
		lmns_handle_closefd(&fs->h);
		return nret;
	}
	m = lmns_mountfd_new(L, "fsmount", fstype);
	fd = (int)syscall(SYS_fsmount, fs->h.fd, FSMOUNT_CLOEXEC, attrs);
	if (fd < 0) {
		nret = lmns_fsfail(L, errno, fs->h.fd, "fsmount", fstype, NULL);
		lmns_handle_closefd(&fs->h);
		return nret;
	}
	m->h.fd = fd;
	lmns_handle_closefd(&fs->h);
	return 1;
}

/***
A mount fd (from `open_tree` or `fsmount`): a detached tree stays out of
every mount table until `move_mount` attaches it, and is torn down when
its last fd closes. Handles of the same mount are equal (`==`);
`tostring` gives `"mountfd 5 [fsmount tmpfs]"`; it works with `<close>`
on Lua 5.4; methods other than `close` raise on a closed handle.
@type mountfd
*/

/***
Close the fd; closing twice is harmless.
@function mountfd:close
*/

/***
The fd number.
@function mountfd:fileno
@treturn int
*/

void lmns_newapi_open(lua_State *L)
{
	static const luaL_Reg methods[] = {
		{ NULL, NULL }
	};
	static const luaL_Reg meta[] = {
		{ "__eq", lmns_mountfd_eq },
		{ NULL, NULL }
	};
	static const luaL_Reg funcs[] = {
		{ "open_tree", lmns_newapi_open_tree },
		{ "move_mount", lmns_newapi_move_mount },
		{ "mount_setattr", lmns_newapi_mount_setattr },
		{ "fsmount", lmns_newapi_fsmount },
		{ NULL, NULL }
	};

	lmns_handle_newclass(L, &mountfd_class, methods, meta);
	luaL_setfuncs(L, funcs, 0);
	lmns_flags_register(L, "mount_attr", attr_flags);
}
