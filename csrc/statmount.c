/*
 * statmount.c - listmount(2) and statmount(2) (Linux 6.8+): the mount table
 * without generating and parsing mountinfo text, for this namespace or for
 * another one named by its mount-namespace ID (no setns needed).
 *
 * Records have the shape of mountinfo.c's, plus unique_id and
 * parent_unique_id (the 64-bit IDs that are never reused), and are built
 * by record.c's builder: the keys pushed once per listing. Here is only
 * what turns a struct statmount into the text fields mountinfo shows; the
 * calls themselves, and the helper thread that makes a long listing's
 * beside the building of its records, are smpipe.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lmns.h"
#include "uapi.h"

/***
@module mountns.core
*/

/***
listmount(2) and statmount(2): the mount table without mountinfo text.
@section statmount
*/

/* ---- records ---------------------------------------------------------- */

/* Append s to out (of size size) at *n; the result is truncated, never
 * overflowed (out holds options, so truncation needs > 4 KB of them). */
static void lmns_cat(char *out, size_t size, size_t *n, const char *s)
{
	size_t len = strlen(s);

	if (*n + len >= size)
		len = size - *n - 1;
	memcpy(out + *n, s, len);
	*n += len;
	out[*n] = '\0';
}

/* mountinfo's per-mount options, in show_mnt_opts() order */
static size_t lmns_mnt_options(char *out, size_t size, uint64_t attr)
{
	size_t n = 0;

	out[0] = '\0';
	lmns_cat(out, size, &n, (attr & MOUNT_ATTR_RDONLY) ? "ro" : "rw");
	if (attr & MOUNT_ATTR_NOSUID)
		lmns_cat(out, size, &n, ",nosuid");
	if (attr & MOUNT_ATTR_NODEV)
		lmns_cat(out, size, &n, ",nodev");
	if (attr & MOUNT_ATTR_NOEXEC)
		lmns_cat(out, size, &n, ",noexec");
	if ((attr & MOUNT_ATTR__ATIME) == MOUNT_ATTR_NOATIME)
		lmns_cat(out, size, &n, ",noatime");
	if (attr & MOUNT_ATTR_NODIRATIME)
		lmns_cat(out, size, &n, ",nodiratime");
	if ((attr & MOUNT_ATTR__ATIME) == MOUNT_ATTR_RELATIME)
		lmns_cat(out, size, &n, ",relatime");
	if (attr & MOUNT_ATTR_NOSYMFOLLOW)
		lmns_cat(out, size, &n, ",nosymfollow");
	if (attr & MOUNT_ATTR_IDMAP)
		lmns_cat(out, size, &n, ",idmapped");
	return n;
}

/* mountinfo's super options: rw|ro, the sb flags, then the fs's own */
static size_t lmns_super_options(char *out, size_t size,
				 const struct lmns_statmount *sm,
				 const char *str)
{
	size_t n = 0;

	out[0] = '\0';
	lmns_cat(out, size, &n, (sm->sb_flags & LMNS_SB_RDONLY) ? "ro" : "rw");
	if (sm->sb_flags & LMNS_SB_SYNCHRONOUS)
		lmns_cat(out, size, &n, ",sync");
	if (sm->sb_flags & LMNS_SB_DIRSYNC)
		lmns_cat(out, size, &n, ",dirsync");
	if (sm->sb_flags & LMNS_SB_LAZYTIME)
		lmns_cat(out, size, &n, ",lazytime");
	if ((sm->mask & STATMOUNT_MNT_OPTS) && str[sm->mnt_opts]) {
		lmns_cat(out, size, &n, ",");
		lmns_cat(out, size, &n, str + sm->mnt_opts);
	}
	return n;
}

/* One record from a statmount result whose strings are at str (with
 * propagate_from if want_from). */
static void lmns_push_sm_record(lua_State *L, lmns_builder *b,
				const struct lmns_statmount *sm,
				const char *str, int want_from)
{
	char buf[4096];
	uint64_t prop = sm->mnt_propagation;
	int shared = (prop & MS_SHARED) && sm->mnt_peer_group;
	int slave = (prop & MS_SLAVE) && sm->mnt_master;
	int from = want_from && (sm->mask & STATMOUNT_PROPAGATE_FROM) &&
		   sm->propagate_from && sm->propagate_from != sm->mnt_master;
	size_t n;

	lua_createtable(L, 0, 14 + shared + slave + from);
	lmns_rec_int(L, b, LMNS_K_ID, sm->mnt_id_old);
	lmns_rec_int(L, b, LMNS_K_PARENT_ID, sm->mnt_parent_id_old);
	lmns_rec_int(L, b, LMNS_K_MAJOR, sm->sb_dev_major);
	lmns_rec_int(L, b, LMNS_K_MINOR, sm->sb_dev_minor);
	if (sm->mask & STATMOUNT_MNT_ROOT)
		lmns_rec_memo(L, b, LMNS_K_ROOT, LMNS_M_ROOT,
			      str + sm->mnt_root, strlen(str + sm->mnt_root));
	if (sm->mask & STATMOUNT_MNT_POINT)
		lmns_rec_str(L, b, LMNS_K_TARGET, str + sm->mnt_point,
			     strlen(str + sm->mnt_point));
	n = lmns_mnt_options(buf, sizeof buf, sm->mnt_attr);
	lmns_rec_memo(L, b, LMNS_K_OPTIONS, LMNS_M_OPTIONS, buf, n);
	n = 0;
	buf[0] = '\0';
	if (sm->mask & STATMOUNT_FS_TYPE)
		lmns_cat(buf, sizeof buf, &n, str + sm->fs_type);
	if ((sm->mask & STATMOUNT_FS_SUBTYPE) && str[sm->fs_subtype]) {
		lmns_cat(buf, sizeof buf, &n, ".");
		lmns_cat(buf, sizeof buf, &n, str + sm->fs_subtype);
	}
	lmns_rec_memo(L, b, LMNS_K_FSTYPE, LMNS_M_FSTYPE, buf, n);
	if (sm->mask & STATMOUNT_SB_SOURCE)
		lmns_rec_memo(L, b, LMNS_K_SOURCE, LMNS_M_SOURCE,
			      str + sm->sb_source, strlen(str + sm->sb_source));
	else
		lmns_rec_memo(L, b, LMNS_K_SOURCE, LMNS_M_SOURCE, "none", 4);
	n = lmns_super_options(buf, sizeof buf, sm, str);
	lmns_rec_memo(L, b, LMNS_K_SUPER_OPTIONS, LMNS_M_SUPER, buf, n);
	lmns_rec_propagation(L, b, shared ? (lua_Integer)sm->mnt_peer_group : 0,
			     slave ? (lua_Integer)sm->mnt_master : 0,
			     from ? (lua_Integer)sm->propagate_from : 0,
			     (prop & MS_UNBINDABLE) != 0);
	lmns_rec_int(L, b, LMNS_K_UNIQUE_ID, (lua_Integer)sm->mnt_id);
	lmns_rec_int(L, b, LMNS_K_PARENT_UNIQUE_ID,
		     (lua_Integer)sm->mnt_parent_id);
}

/* The first buffer of a statmount call: on the C stack, so a call whose
 * result fits (every ordinary mount) allocates no Lua memory. In a forked
 * child on a fresh arena (core.fresh_heap) each 4 KB userdata was a new
 * page, a page fault each. */
typedef union lmns_smfirst {
	struct lmns_statmount sm;
	char bytes[LMNS_SM_BUFSIZE];
} lmns_smfirst;

/* opts.ns (a mount namespace handle) -> its mount-namespace ID, or 0;
 * *name: "mnt:[4026...]" (left on the stack), or NULL */
static int lmns_opt_nsid(lua_State *L, int arg, uint64_t *nsid,
			 const char **name)
{
	lmns_ns *ns;
	int rc, err;

	*nsid = 0;
	*name = NULL;
	if (lua_isnoneornil(L, arg))
		return 0;
	luaL_checktype(L, arg, LUA_TTABLE);
	lua_getfield(L, arg, "ns");
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		return 0;
	}
	ns = lmns_ns_checkopt(L, lua_gettop(L), arg, "ns", "mnt");
	rc = lmns_ns_mntns_id(ns->h.fd, nsid);
	err = errno;
	lmns_handle_pushname(L, &ns->h);
	*name = lua_tostring(L, -1);
	lua_replace(L, -2);	/* the name stays on the stack */
	errno = err;
	return rc;
}

/* listmount's failed statmount of mount id: nil, "statmount ID [NS]: ..." */
static int lmns_listmount_fail(lua_State *L, int err, uint64_t id,
			       const char *nsname)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%llu", (unsigned long long)id);
	return lmns_fail(L, err, "statmount", buf, nsname);
}

/***
The mounts of a namespace, as unique mount IDs or as records.
@function listmount
@tparam[opt] table opts `ns` (a mount namespace handle: list it without
setns), `mnt_id` (list below this unique ID; default the root), `reverse`,
`stat = true` (records, in the shape of `mountinfo`'s plus `unique_id` and
`parent_unique_id`), `propagate_from = true` (with `stat`: compute it too,
which costs as much as mountinfo in namespaces with large peer groups),
`target = path`: only the mounts whose mount point is path (compared as
the kernel gives it: normalise path first), found by a statmount of each
mount's mount point alone, without building a record for the others
(`ns:find` of a path where nothing is mounted: an empty list)
@treturn[1] table array of integers, or of records
@return[2] nil
@treturn[2] string "listmount [NS]: strerror (ENAME)"
@treturn[2] int errno
@see listmount(2), statmount(2)
*/
/* Is path in the form the kernel gives a mount point: absolute, no empty,
 * "." or ".." component, no trailing slash ("/" itself aside)? Any other
 * spelling could never equal a mount point: refused, not answered empty. */
static int is_mount_point_form(const char *path, size_t len)
{
	size_t i;

	if (len == 0 || path[0] != '/')
		return 0;
	if (len == 1)
		return 1;
	if (path[len - 1] == '/')
		return 0;
	for (i = 0; i < len; i++) {
		const char *c = path + i + 1;	/* a component after a slash */

		if (path[i] != '/')
			continue;
		if (c[0] == '/' || (c[0] == '.' && (c[1] == '/' || c[1] == 0)) ||
		    (c[0] == '.' && c[1] == '.' && (c[2] == '/' || c[2] == 0)))
			return 0;
	}
	return 1;
}

/* listmount's opts.target, or NULL. The string stays on the stack (slot
 * 2, left there until the function returns): an __index function may give
 * a string nothing else holds, which a collection would free. */
static const char *listmount_target(lua_State *L)
{
	size_t len;
	const char *target;

	if (lua_isnil(L, 1)) {
		lua_pushnil(L);		/* no options: the slot all the same */
		return NULL;
	}
	lua_getfield(L, 1, "target");
	if (lua_isnil(L, -1))
		return NULL;
	if (lua_type(L, -1) != LUA_TSTRING)
		luaL_argerror(L, 1, lua_pushfstring(L,
			"option 'target' must be a string, got %s",
			luaL_typename(L, -1)));
	target = lua_tolstring(L, -1, &len);
	if (strlen(target) != len)
		luaL_argerror(L, 1, "option 'target': embedded NUL byte");
	if (!is_mount_point_form(target, len))
		luaL_argerror(L, 1, lua_pushfstring(L,
			"option 'target' must be an absolute path in normal "
			"form (as a mount point is written), got '%s'", target));
	return target;
}

static int lmns_statmount_listmount(lua_State *L)
{
	static const char *const known[] = {
		"ns", "mnt_id", "reverse", "stat", "propagate_from", "target",
		NULL
	};
	struct lmns_mnt_id_req req;
	/* the IDs of a small table on the C stack (no Lua memory: see
	 * lmns_smfirst), a userdata from the first that does not fit */
	uint64_t nsid, first_ids[256], *ids = first_ids, mask = LMNS_SM_MASK;
	size_t cap = sizeof first_ids / sizeof first_ids[0], n = 0;
	lmns_smfirst first;
	const char *nsname, *target;
	int stat, reverse, from, idsidx;
	long got;
	lmns_smbuf b;
	lmns_builder rb;
	lmns_pipe *pipe = NULL;

	lmns_checknomore(L, 1);
	lua_settop(L, 1);
	lmns_checkkeys(L, 1, known);
	stat = lmns_optbool(L, 1, "stat", 0);
	reverse = lmns_optbool(L, 1, "reverse", 0);
	from = lmns_optbool(L, 1, "propagate_from", 0);
	if (from)
		mask |= STATMOUNT_PROPAGATE_FROM;
	target = listmount_target(L);
	memset(&req, 0, sizeof req);
	req.mnt_id = (uint64_t)lmns_optinteger(L, 1, "mnt_id",
					       (lua_Integer)LSMT_ROOT);
	if (lmns_opt_nsid(L, 1, &nsid, &nsname) != 0)
		return lmns_fail(L, errno, "listmount", nsname, NULL);
	req.size = nsid ? LMNS_MNT_ID_REQ_SIZE_VER1 : LMNS_MNT_ID_REQ_SIZE_VER0;
	req.mnt_ns_id = nsid;
	/* all IDs first: a listing is one snapshot, paged by the last ID */
	lua_pushnil(L);		/* the slot of a bigger ID array */
	idsidx = lua_gettop(L);
	for (;;) {
		got = syscall(SYS_listmount, &req, ids + n, cap - n,
			      reverse ? LISTMOUNT_REVERSE : 0);
		if (got < 0)
			return lmns_fail(L, errno, "listmount", nsname, NULL);
		n += (size_t)got;
		if (n < cap)
			break;
		req.param = ids[n - 1];
		{
			uint64_t *more = lua_newuserdata(L,
						2 * cap * sizeof *ids);

			memcpy(more, ids, n * sizeof *ids);
			ids = more;
			cap *= 2;
			lua_replace(L, idsidx);
		}
	}
	if (stat || target)
		lmns_smbuf_init(L, &b, &first.sm, sizeof first);
	if (stat) {
		/* the helper thread may outlive this frame (joined by the
		 * job's __gc after an error): never the stack's IDs */
		pipe = n >= LMNS_PIPE_MIN && ids != first_ids && !target
			? lmns_pipe_start(L, ids, n, nsid, mask) : NULL;
		lmns_builder_init(L, &rb);
	}
	lua_createtable(L, (int)n, 0);
	{
		size_t i;
		int k = 0;
		const struct lmns_statmount *sm = NULL;

		for (i = 0; i < n; i++) {
			/* target: the mount point alone first (no pipe) */
			if (target) {
				if (lmns_smbuf_statmount(L, &b, ids[i], nsid,
							STATMOUNT_MNT_POINT) != 0) {
					if (errno == ENOENT)
						continue;	/* gone */
					return lmns_listmount_fail(L, errno,
						ids[i], nsname);
				}
				if (!(b.sm->mask & STATMOUNT_MNT_POINT) ||
				    strcmp(b.sm->str + b.sm->mnt_point,
					   target) != 0)
					continue;
			}
			if (!stat) {
				lua_pushinteger(L, (lua_Integer)ids[i]);
			} else if (pipe ? (sm = lmns_pipe_get(L, pipe, &b,
							      i)) != NULL :
				   lmns_smbuf_statmount(L, &b, ids[i], nsid,
						       mask) == 0) {
				if (sm == LMNS_PIPE_GONE)
					continue;	/* gone since listmount */
				if (!pipe)
					sm = b.sm;
				lmns_push_sm_record(L, &rb, sm,
						    LMNS_SM_STR(sm, pipe != NULL),
						    from);
			} else if (errno == ENOENT) {
				continue;	/* gone since listmount */
			} else {
				int err = errno;

				if (pipe)
					lmns_pipe_stop(pipe);
				return lmns_listmount_fail(L, err, ids[i],
							   nsname);
			}
			lua_rawseti(L, -2, ++k);
		}
	}
	if (pipe)	/* the thread has ended its loop: join it now */
		lmns_pipe_stop(pipe);
	return 1;
}

/*
 * The unique mount ID that argument arg names: an integer, a record with
 * unique_id, a path or a mount fd (both via statx). 0, or -1 with errno;
 * *name is the path or the mount fd's name (left on the stack), or NULL.
 */
static int lmns_check_mount_id(lua_State *L, int arg, uint64_t *id,
			       const char **name)
{
	unsigned long long uid = 0;
	lmns_handle *h;
	int unique = 0, rc;

	*name = NULL;
	switch (lua_type(L, arg)) {
	case LUA_TNUMBER:
		*id = (uint64_t)luaL_checkinteger(L, arg);
		return 0;
	case LUA_TTABLE:
		lua_getfield(L, arg, "unique_id");
		if (lua_type(L, -1) != LUA_TNUMBER)
			return luaL_argerror(L, arg, "record without unique_id "
				"(from mountinfo? list with mountns.mounts())");
		*id = (uint64_t)lua_tointeger(L, -1);
		lua_pop(L, 1);
		return 0;
	case LUA_TSTRING:
		*name = lmns_checkpath(L, arg);
		rc = lmns_mount_id_of(AT_FDCWD, *name, 0, &uid, &unique);
		break;
	default:
		h = lmns_mountfd_test(L, arg);
		if (!h)
			return luaL_argerror(L, arg, lua_pushfstring(L,
				"unique mount ID, record, path or mount fd "
				"expected, got %s", luaL_typename(L, arg)));
		lmns_handle_pushname(L, h);	/* stays on the stack */
		*name = lua_tostring(L, -1);
		rc = lmns_mount_id_of(h->fd, "", AT_EMPTY_PATH, &uid, &unique);
		break;
	}
	if (rc == 0 && !unique) {
		errno = ENOSYS;	/* statx before 6.8: no unique ID */
		rc = -1;
	}
	*id = uid;
	return rc;
}

/***
One mount as a record, without reading the table.
@function statmount
@param m a unique mount ID, a record with `unique_id`, a path (the mount
it is on, found with statx) or a mount fd
@tparam[opt] table opts `ns` (a mount namespace handle), `propagate_from`
@treturn[1] table the record
@return[2] nil
@treturn[2] string "statmount M: strerror (ENAME)"
@treturn[2] int errno
@see statmount(2)
*/
static int lmns_statmount_statmount(lua_State *L)
{
	static const char *const known[] = { "ns", "propagate_from", NULL };
	uint64_t id = 0, nsid, mask = LMNS_SM_MASK;
	const char *name, *nsname;
	char idbuf[32];
	int from;
	lmns_smbuf b;
	lmns_smfirst first;
	lmns_builder rb;

	lmns_checknomore(L, 2);
	lua_settop(L, 2);
	lmns_checkkeys(L, 2, known);
	from = lmns_optbool(L, 2, "propagate_from", 0);
	if (from)
		mask |= STATMOUNT_PROPAGATE_FROM;
	if (lmns_check_mount_id(L, 1, &id, &name) != 0)
		return lmns_fail(L, errno, "statmount", name, NULL);
	if (!name) {
		snprintf(idbuf, sizeof idbuf, "%llu", (unsigned long long)id);
		name = idbuf;
	}
	if (lmns_opt_nsid(L, 2, &nsid, &nsname) != 0)
		return lmns_fail(L, errno, "statmount", name, nsname);
	lmns_smbuf_init(L, &b, &first.sm, sizeof first);
	if (lmns_smbuf_statmount(L, &b, id, nsid, mask) != 0)
		return lmns_fail(L, errno, "statmount", name, nsname);
	lmns_builder_init(L, &rb);
	lmns_push_sm_record(L, &rb, b.sm, b.sm->str, from);
	return 1;
}

void lmns_statmount_open(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{ "listmount", lmns_statmount_listmount },
		{ "statmount", lmns_statmount_statmount },
		{ NULL, NULL }
	};

	luaL_setfuncs(L, funcs, 0);
}
