/*
 * statmount.c - listmount(2) and statmount(2) (Linux 6.8+): the mount table
 * without generating and parsing mountinfo text, for this namespace or for
 * another one named by its mount-namespace ID (no setns needed).
 *
 * Records have the shape of mountinfo.c's, plus unique_id and
 * parent_unique_id (the 64-bit IDs that are never reused), and are built
 * by record.c's builder: the keys pushed once per listing. Here is only
 * what turns a struct statmount into the text fields mountinfo shows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lmns.h"
#include "uapi.h"

#define LMNS_SM_BUFSIZE 4096		/* first try; grows on EOVERFLOW */
#define LMNS_SM_BUFMAX (16 << 20)

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
				 const struct lmns_statmount *sm)
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
	if ((sm->mask & STATMOUNT_MNT_OPTS) && sm->str[sm->mnt_opts]) {
		lmns_cat(out, size, &n, ",");
		lmns_cat(out, size, &n, sm->str + sm->mnt_opts);
	}
	return n;
}

/* One record from a statmount result (with propagate_from if want_from). */
static void lmns_push_sm_record(lua_State *L, lmns_builder *b,
				const struct lmns_statmount *sm, int want_from)
{
	char buf[4096];
	const char *str = sm->str;
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
	n = lmns_super_options(buf, sizeof buf, sm);
	lmns_rec_memo(L, b, LMNS_K_SUPER_OPTIONS, LMNS_M_SUPER, buf, n);
	lmns_rec_propagation(L, b, shared ? (lua_Integer)sm->mnt_peer_group : 0,
			     slave ? (lua_Integer)sm->mnt_master : 0,
			     from ? (lua_Integer)sm->propagate_from : 0,
			     (prop & MS_UNBINDABLE) != 0);
	lmns_rec_int(L, b, LMNS_K_UNIQUE_ID, (lua_Integer)sm->mnt_id);
	lmns_rec_int(L, b, LMNS_K_PARENT_UNIQUE_ID,
		     (lua_Integer)sm->mnt_parent_id);
}

/* ---- the calls -------------------------------------------------------- */

/* A growable buffer in a userdata at stack index idx (replaced on growth). */
typedef struct lmns_smbuf {
	int idx;
	size_t size;
	struct lmns_statmount *sm;
} lmns_smbuf;

static void lmns_smbuf_init(lua_State *L, lmns_smbuf *b, size_t size)
{
	b->sm = lua_newuserdata(L, size);
	b->size = size;
	b->idx = lua_gettop(L);
}

/* statmount(2) of one ID into b; 0, or -1 with errno (EOVERFLOW grows b) */
static int lmns_statmount_call(lua_State *L, lmns_smbuf *b, uint64_t id,
			       uint64_t nsid, uint64_t mask)
{
	struct lmns_mnt_id_req req;

	memset(&req, 0, sizeof req);
	req.size = nsid ? LMNS_MNT_ID_REQ_SIZE_VER1 : LMNS_MNT_ID_REQ_SIZE_VER0;
	req.mnt_id = id;
	req.param = mask;
	req.mnt_ns_id = nsid;
	for (;;) {
		if (syscall(SYS_statmount, &req, b->sm, b->size, 0) == 0)
			return 0;
		if (errno != EOVERFLOW || b->size >= LMNS_SM_BUFMAX)
			return -1;
		b->size *= 4;
		b->sm = lua_newuserdata(L, b->size);
		lua_replace(L, b->idx);
	}
}

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

/***
The mounts of a namespace, as unique mount IDs or as records.
@function listmount
@tparam[opt] table opts `ns` (a mount namespace handle: list it without
setns), `mnt_id` (list below this unique ID; default the root), `reverse`,
`stat = true` (records, in the shape of `mountinfo`'s plus `unique_id` and
`parent_unique_id`), `propagate_from = true` (with `stat`: compute it too,
which costs as much as mountinfo in namespaces with large peer groups)
@treturn[1] table array of integers, or of records
@return[2] nil
@treturn[2] string "listmount [NS]: strerror (ENAME)"
@treturn[2] int errno
@see listmount(2), statmount(2)
*/
static int lmns_statmount_listmount(lua_State *L)
{
	static const char *const known[] = {
		"ns", "mnt_id", "reverse", "stat", "propagate_from", NULL
	};
	struct lmns_mnt_id_req req;
	uint64_t nsid, *ids, mask = LMNS_SM_MASK;
	size_t cap = 1024, n = 0;
	const char *nsname;
	int stat, reverse, from, idsidx;
	long got;
	lmns_smbuf b;
	lmns_builder rb;

	lua_settop(L, 1);
	lmns_checkkeys(L, 1, known);
	stat = lmns_optbool(L, 1, "stat", 0);
	reverse = lmns_optbool(L, 1, "reverse", 0);
	from = lmns_optbool(L, 1, "propagate_from", 0);
	if (from)
		mask |= STATMOUNT_PROPAGATE_FROM;
	memset(&req, 0, sizeof req);
	req.mnt_id = (uint64_t)lmns_optinteger(L, 1, "mnt_id",
					       (lua_Integer)LSMT_ROOT);
	if (lmns_opt_nsid(L, 1, &nsid, &nsname) != 0)
		return lmns_fail(L, errno, "listmount", nsname, NULL);
	req.size = nsid ? LMNS_MNT_ID_REQ_SIZE_VER1 : LMNS_MNT_ID_REQ_SIZE_VER0;
	req.mnt_ns_id = nsid;
	/* all IDs first: a listing is one snapshot, paged by the last ID */
	ids = lua_newuserdata(L, cap * sizeof *ids);
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
	if (stat) {
		lmns_smbuf_init(L, &b, LMNS_SM_BUFSIZE);
		lmns_builder_init(L, &rb);
	}
	lua_createtable(L, (int)n, 0);
	{
		size_t i;
		int k = 0;

		for (i = 0; i < n; i++) {
			if (!stat) {
				lua_pushinteger(L, (lua_Integer)ids[i]);
			} else if (lmns_statmount_call(L, &b, ids[i], nsid,
						       mask) == 0) {
				lmns_push_sm_record(L, &rb, b.sm, from);
			} else if (errno == ENOENT) {
				continue;	/* gone since listmount */
			} else {
				int err = errno;
				char id[32];

				snprintf(id, sizeof id, "%llu",
					 (unsigned long long)ids[i]);
				return lmns_fail(L, err, "statmount", id,
						 nsname);
			}
			lua_rawseti(L, -2, ++k);
		}
	}
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
	lmns_builder rb;

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
	lmns_smbuf_init(L, &b, LMNS_SM_BUFSIZE);
	if (lmns_statmount_call(L, &b, id, nsid, mask) != 0)
		return lmns_fail(L, errno, "statmount", name, nsname);
	lmns_builder_init(L, &rb);
	lmns_push_sm_record(L, &rb, b.sm, from);
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
