/*
 * statmount.c - listmount(2) and statmount(2) (Linux 6.8+): the mount table
 * without generating and parsing mountinfo text, for this namespace or for
 * another one named by its mount-namespace ID (no setns needed), and
 * features(): which of the modern paths this kernel offers.
 *
 * Records have the shape of mountinfo.c's, plus unique_id and
 * parent_unique_id (the 64-bit IDs that are never reused). They are built
 * here in C with the keys pushed once per listing: at 10,000 mounts the
 * table building, not the system calls, is what costs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lmns.h"
#include "uapi.h"

/* everything a mountinfo record holds */
#define LMNS_SM_MASK (STATMOUNT_SB_BASIC | STATMOUNT_MNT_BASIC | \
		      STATMOUNT_MNT_ROOT | STATMOUNT_MNT_POINT | \
		      STATMOUNT_FS_TYPE | STATMOUNT_MNT_OPTS | \
		      STATMOUNT_FS_SUBTYPE | STATMOUNT_SB_SOURCE)

#define LMNS_SM_BUFSIZE 4096		/* first try; grows on EOVERFLOW */
#define LMNS_SM_BUFMAX (16 << 20)

/* ---- features --------------------------------------------------------- */

static struct {
	int done;
	int open_tree, move_mount, fsmount, mount_setattr, set_group;
	int beneath, listmount, statmount, mntns_id, listmount_ns;
	int statx_unique, statmount_complete;
	uint64_t statmount_mask;
} feat;

/* The syscall exists when calling it with a bad flag is not ENOSYS. */
static int lmns_has_syscall(long rc)
{
	return !(rc < 0 && errno == ENOSYS);
}

/* move_mount knows flag f when it is not rejected as EINVAL up front: with
 * NULL paths a kernel that knows it fails later, with EFAULT or ENOENT. */
static int lmns_has_move_flag(unsigned int f)
{
	long rc = syscall(SYS_move_mount, -1, NULL, -1, NULL, f);

	return !(rc < 0 && (errno == EINVAL || errno == ENOSYS));
}

static int lmns_ns_mntns_id(int fd, uint64_t *id)
{
	return ioctl(fd, NS_GET_MNTNS_ID, id);
}

static void lmns_features_probe(lua_State *L)
{
	int saved = errno, fd;
	uint64_t nsid = 0, ids[1];
	struct lmns_mnt_id_req req;
	struct {
		struct lmns_statmount sm;
		char str[256];
	} buf;
	unsigned long long uid;
	int unique = 0;

	feat.open_tree = lmns_has_syscall(syscall(SYS_open_tree, -1, NULL,
						  ~0U));
	feat.move_mount = lmns_has_syscall(syscall(SYS_move_mount, -1, NULL,
						   -1, NULL, ~0U));
	feat.fsmount = lmns_has_syscall(syscall(SYS_fsopen, NULL, ~0U)) &&
		       lmns_has_syscall(syscall(SYS_fsmount, -1, ~0U, ~0U));
	feat.mount_setattr = lmns_has_syscall(syscall(SYS_mount_setattr, -1,
						      NULL, ~0U, NULL, 0));
	feat.set_group = feat.move_mount &&
			 lmns_has_move_flag(MOVE_MOUNT_SET_GROUP);
	feat.beneath = feat.move_mount &&
		       lmns_has_move_flag(MOVE_MOUNT_BENEATH);
	feat.listmount = lmns_has_syscall(syscall(SYS_listmount, NULL, NULL,
						  0, ~0U));
	feat.statmount = lmns_has_syscall(syscall(SYS_statmount, NULL, NULL,
						  0, ~0U));
	/* through the pinned /proc: a first call after pivot_root has no /proc */
	fd = lmns_procfs_openat(L, "self/ns/mnt", O_RDONLY | O_CLOEXEC);
	feat.mntns_id = fd >= 0 && lmns_ns_mntns_id(fd, &nsid) == 0;
	if (fd >= 0)
		close(fd);
	if (feat.listmount && feat.mntns_id) {
		memset(&req, 0, sizeof req);
		req.size = LMNS_MNT_ID_REQ_SIZE_VER1;
		req.mnt_id = LSMT_ROOT;
		req.mnt_ns_id = nsid;
		feat.listmount_ns = syscall(SYS_listmount, &req, ids, 1, 0) >= 0;
	}
	feat.statx_unique = lmns_mount_id_of(AT_FDCWD, "/", 0, &uid,
					     &unique) == 0 && unique;
	if (feat.statmount && feat.statx_unique) {
		memset(&req, 0, sizeof req);
		req.size = LMNS_MNT_ID_REQ_SIZE_VER0;
		req.mnt_id = uid;
		req.param = STATMOUNT_SUPPORTED_MASK;
		memset(&buf, 0, sizeof buf);
		if (syscall(SYS_statmount, &req, &buf, sizeof buf, 0) == 0 &&
		    (buf.sm.mask & STATMOUNT_SUPPORTED_MASK))
			feat.statmount_mask = buf.sm.supported_mask;
		/* before 6.15 there is no supported_mask: what the kernel
		 * returns for everything asked of "/" is a lower bound */
		else if (req.param = LMNS_SM_MASK,
			 syscall(SYS_statmount, &req, &buf, sizeof buf, 0) == 0)
			feat.statmount_mask = buf.sm.mask;
	}
	feat.statmount_complete = feat.listmount && feat.statmount &&
		(feat.statmount_mask & LMNS_SM_MASK) == LMNS_SM_MASK;
	feat.done = 1;
	errno = saved;
}

/***
@module mountns.core
*/

/***
listmount(2) and statmount(2): the mount table without mountinfo text.
@section statmount
*/

/***
Which modern paths this kernel offers, probed once per process with calls
that cannot change anything.
@function features
@treturn table booleans `open_tree`, `move_mount`, `fsmount`,
`mount_setattr`, `idmap`, `set_group`, `beneath`, `listmount`,
`statmount`, `mntns_id` (NS_GET_MNTNS_ID), `listmount_ns` (another
namespace by ID), `statx_unique_id`, `statmount_complete` (every field of
a mountinfo record; Linux 6.13+), and `statmount_mask` (an integer)
*/
static int lmns_statmount_features(lua_State *L)
{
	if (!feat.done)
		lmns_features_probe(L);
	lua_createtable(L, 0, 14);
#define F(name, v) (lua_pushboolean(L, (v)), lua_setfield(L, -2, name))
	F("open_tree", feat.open_tree);
	F("move_mount", feat.move_mount);
	F("fsmount", feat.fsmount);
	F("mount_setattr", feat.mount_setattr);
	F("idmap", feat.mount_setattr);	/* MOUNT_ATTR_IDMAP came with it */
	F("set_group", feat.set_group);
	F("beneath", feat.beneath);
	F("listmount", feat.listmount);
	F("statmount", feat.statmount);
	F("mntns_id", feat.mntns_id);
	F("listmount_ns", feat.listmount_ns);
	F("statx_unique_id", feat.statx_unique);
	F("statmount_complete", feat.statmount_complete);
#undef F
	lua_pushinteger(L, (lua_Integer)feat.statmount_mask);
	lua_setfield(L, -2, "statmount_mask");
	return 1;
}

/* ---- records ---------------------------------------------------------- */

enum {
	K_ID, K_PARENT_ID, K_MAJOR, K_MINOR, K_ROOT, K_TARGET, K_OPTIONS,
	K_FSTYPE, K_SOURCE, K_SUPER_OPTIONS, K_SHARED, K_MASTER,
	K_PROPAGATE_FROM, K_UNBINDABLE, K_PROPAGATION, K_UNIQUE_ID,
	K_PARENT_UNIQUE_ID,
	P_WORDS,	/* then the propagation words (mountinfo.c), as values */
	K_COUNT = P_WORDS + LMNS_PROPAGATION_WORDS
};

static const char *const key_names[P_WORDS] = {
	"id", "parent_id", "major", "minor", "root", "target", "options",
	"fstype", "source", "super_options", "shared", "master",
	"propagate_from", "unbindable", "propagation", "unique_id",
	"parent_unique_id"
};

/*
 * What one listing reuses from record to record: the keys, pushed once, and
 * the last string of each repeating field (neighbours, such as the binds of
 * one filesystem, mostly repeat them), so a record costs few new strings.
 */
enum { M_ROOT, M_OPTIONS, M_FSTYPE, M_SOURCE, M_SUPER, M_COUNT };
#define LMNS_MEMO_MAX 240

typedef struct lmns_builder {
	int keys;			/* stack index of the first key */
	int memo;			/* stack index of the first memo slot */
	int want_from;
	size_t len[M_COUNT];		/* (size_t)-1: empty slot */
	char s[M_COUNT][LMNS_MEMO_MAX];
} lmns_builder;

static void lmns_builder_init(lua_State *L, lmns_builder *b, int want_from)
{
	int i;

	luaL_checkstack(L, K_COUNT + M_COUNT + 8, "statmount records");
	b->keys = lua_gettop(L) + 1;
	for (i = 0; i < K_COUNT; i++)
		lua_pushstring(L, i < P_WORDS ? key_names[i] :
			       lmns_propagation_words[i - P_WORDS]);
	b->memo = lua_gettop(L) + 1;
	for (i = 0; i < M_COUNT; i++) {
		lua_pushnil(L);
		b->len[i] = (size_t)-1;
	}
	b->want_from = want_from;
}

/* Push s, the string of memo slot m when it is the same text. */
static void lmns_memo_push(lua_State *L, lmns_builder *b, int m,
			   const char *s, size_t len)
{
	if (b->len[m] == len && memcmp(b->s[m], s, len) == 0) {
		lua_pushvalue(L, b->memo + m);
		return;
	}
	lua_pushlstring(L, s, len);
	if (len <= LMNS_MEMO_MAX) {
		memcpy(b->s[m], s, len);
		b->len[m] = len;
		lua_pushvalue(L, -1);
		lua_replace(L, b->memo + m);
	}
}

static void lmns_rec_int(lua_State *L, lmns_builder *b, int k, lua_Integer v)
{
	lua_pushvalue(L, b->keys + k);
	lua_pushinteger(L, v);
	lua_rawset(L, -3);
}

static void lmns_rec_memo(lua_State *L, lmns_builder *b, int k, int m,
			  const char *s, size_t len)
{
	lua_pushvalue(L, b->keys + k);
	lmns_memo_push(L, b, m, s, len);
	lua_rawset(L, -3);
}

static void lmns_rec_key(lua_State *L, lmns_builder *b, int k, int valkey)
{
	lua_pushvalue(L, b->keys + k);
	lua_pushvalue(L, b->keys + valkey);
	lua_rawset(L, -3);
}

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

/* One record from a statmount result. */
static void lmns_push_sm_record(lua_State *L, lmns_builder *b,
				const struct lmns_statmount *sm)
{
	char buf[4096];
	const char *str = sm->str;
	uint64_t prop = sm->mnt_propagation;
	int shared = (prop & MS_SHARED) && sm->mnt_peer_group;
	int slave = (prop & MS_SLAVE) && sm->mnt_master;
	int from = b->want_from && (sm->mask & STATMOUNT_PROPAGATE_FROM) &&
		   sm->propagate_from && sm->propagate_from != sm->mnt_master;
	size_t n;

	lua_createtable(L, 0, 14 + shared + slave + from);
	lmns_rec_int(L, b, K_ID, sm->mnt_id_old);
	lmns_rec_int(L, b, K_PARENT_ID, sm->mnt_parent_id_old);
	lmns_rec_int(L, b, K_MAJOR, sm->sb_dev_major);
	lmns_rec_int(L, b, K_MINOR, sm->sb_dev_minor);
	if (sm->mask & STATMOUNT_MNT_ROOT)
		lmns_rec_memo(L, b, K_ROOT, M_ROOT, str + sm->mnt_root,
			      strlen(str + sm->mnt_root));
	if (sm->mask & STATMOUNT_MNT_POINT) {
		lua_pushvalue(L, b->keys + K_TARGET);
		lua_pushstring(L, str + sm->mnt_point);
		lua_rawset(L, -3);
	}
	n = lmns_mnt_options(buf, sizeof buf, sm->mnt_attr);
	lmns_rec_memo(L, b, K_OPTIONS, M_OPTIONS, buf, n);
	n = 0;
	buf[0] = '\0';
	if (sm->mask & STATMOUNT_FS_TYPE)
		lmns_cat(buf, sizeof buf, &n, str + sm->fs_type);
	if ((sm->mask & STATMOUNT_FS_SUBTYPE) && str[sm->fs_subtype]) {
		lmns_cat(buf, sizeof buf, &n, ".");
		lmns_cat(buf, sizeof buf, &n, str + sm->fs_subtype);
	}
	lmns_rec_memo(L, b, K_FSTYPE, M_FSTYPE, buf, n);
	if (sm->mask & STATMOUNT_SB_SOURCE)
		lmns_rec_memo(L, b, K_SOURCE, M_SOURCE, str + sm->sb_source,
			      strlen(str + sm->sb_source));
	else
		lmns_rec_memo(L, b, K_SOURCE, M_SOURCE, "none", 4);
	n = lmns_super_options(buf, sizeof buf, sm);
	lmns_rec_memo(L, b, K_SUPER_OPTIONS, M_SUPER, buf, n);
	if (shared)
		lmns_rec_int(L, b, K_SHARED, (lua_Integer)sm->mnt_peer_group);
	if (slave)
		lmns_rec_int(L, b, K_MASTER, (lua_Integer)sm->mnt_master);
	if (from)
		lmns_rec_int(L, b, K_PROPAGATE_FROM,
			     (lua_Integer)sm->propagate_from);
	lua_pushvalue(L, b->keys + K_UNBINDABLE);
	lua_pushboolean(L, (prop & MS_UNBINDABLE) != 0);
	lua_rawset(L, -3);
	lmns_rec_key(L, b, K_PROPAGATION, P_WORDS + lmns_propagation(shared,
			slave, (prop & MS_UNBINDABLE) != 0));
	lmns_rec_int(L, b, K_UNIQUE_ID, (lua_Integer)sm->mnt_id);
	lmns_rec_int(L, b, K_PARENT_UNIQUE_ID, (lua_Integer)sm->mnt_parent_id);
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

/* Push what __tostring says of the handle at idx (errno kept). */
static const char *lmns_push_name(lua_State *L, int idx)
{
	int err = errno;

	if (!luaL_callmeta(L, idx, "__tostring"))
		lua_pushstring(L, luaL_typename(L, idx));
	errno = err;
	return lua_tostring(L, -1);
}

/* opts.ns (a mount namespace handle) -> its mount-namespace ID, or 0 */
static int lmns_opt_nsid(lua_State *L, int arg, uint64_t *nsid,
			 const char **name)
{
	int fd;

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
	fd = lmns_ns_checkfd(L, lua_gettop(L), arg, "ns", "mnt");
	*name = lmns_push_name(L, lua_gettop(L));	/* "mnt:[4026...]" */
	lua_replace(L, -2);	/* the name stays on the stack */
	return lmns_ns_mntns_id(fd, nsid);
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
	req.mnt_id = LSMT_ROOT;
	if (!lua_isnil(L, 1)) {
		lua_getfield(L, 1, "mnt_id");
		if (!lua_isnil(L, -1))
			req.mnt_id = (uint64_t)luaL_checkinteger(L, -1);
		lua_pop(L, 1);
	}
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
		lmns_builder_init(L, &rb, from);
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
				lmns_push_sm_record(L, &rb, b.sm);
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

/* The unique mount ID that arg names: an integer, a record with unique_id,
 * a path or a mount fd (both via statx). 0 or -1 with errno. */
static int lmns_check_mount_id(lua_State *L, int arg, uint64_t *id,
			       const char **name)
{
	unsigned long long uid = 0;
	int unique = 0, fd, rc;

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
		fd = lmns_mountfd_fd(L, arg);
		if (fd < 0)
			return luaL_argerror(L, arg, lua_pushfstring(L,
				"unique mount ID, record, path or mount fd "
				"expected, got %s", luaL_typename(L, arg)));
		*name = lmns_push_name(L, arg);	/* stays on the stack */
		rc = lmns_mount_id_of(fd, "", AT_EMPTY_PATH, &uid, &unique);
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
	lmns_builder_init(L, &rb, from);
	lmns_push_sm_record(L, &rb, b.sm);
	return 1;
}

/***
The 64-bit ID of a mount namespace (the NS_GET_MNTNS_ID ioctl, Linux 6.11).
@function mntns_id
@tparam namespace ns a mount namespace handle
@treturn[1] int
@return[2] nil
@treturn[2] string "mntns_id mnt:[INO]: strerror (ENAME)"
@treturn[2] int errno
*/
static int lmns_statmount_mntns_id(lua_State *L)
{
	int fd;

	if (!luaL_testudata(L, 1, "mountns.namespace"))
		return luaL_argerror(L, 1, lua_pushfstring(L,
			"mount namespace handle expected, got %s",
			luaL_typename(L, 1)));
	fd = lmns_ns_checkfd(L, 1, 1, "ns", "mnt");
	uint64_t id;

	if (lmns_ns_mntns_id(fd, &id) != 0)
		return lmns_fail(L, errno, "mntns_id", lmns_push_name(L, 1),
				 NULL);
	lua_pushinteger(L, (lua_Integer)id);
	return 1;
}

void lmns_statmount_open(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{ "listmount", lmns_statmount_listmount },
		{ "statmount", lmns_statmount_statmount },
		{ "mntns_id", lmns_statmount_mntns_id },
		{ "features", lmns_statmount_features },
		{ NULL, NULL }
	};

	luaL_setfuncs(L, funcs, 0);
}
