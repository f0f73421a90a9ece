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
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
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

/* ---- the pipeline: statmount calls beside the record building ---------- */

/*
 * At 10,000 mounts the statmount calls and the building of the Lua records
 * cost about as much as each other, one after the other. A listing of many
 * mounts runs the calls in a helper thread, which copies each result into
 * memory of its own, while the Lua thread builds records from the results
 * already there: the two overlap on a machine with a second core. The
 * thread touches no Lua state and no malloc arena (its memory is mmap'd),
 * blocks every signal, and is joined before listmount returns (or, should
 * a Lua error unwind past, by the job's __gc).
 */
#define LMNS_PIPE_MIN 256		/* fewer mounts: one thread */
#define LMNS_PIPE_BLOCK (1 << 20)	/* results are copied into such blocks */
#define LMNS_PIPE_GONE ((const struct lmns_statmount *)1)

typedef struct lmns_pipe {
	const uint64_t *ids;
	size_t n;
	uint64_t nsid, mask;
	const struct lmns_statmount **res;	/* result i, GONE, or NULL: error */
	char **blocks;			/* the blocks (mmap'd), nblocks of them */
	size_t *bsizes;			/* and their sizes */
	int *err;			/* errno of a failed call */
	size_t nblocks, maxblocks;
	size_t done;			/* results 0..done-1 are ready */
	int cancel, started, joined;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
} lmns_pipe;

/* mmap'd memory: no malloc arena is made for the helper thread */
static void *lmns_pipe_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A copy of the result in buf (of bufsize bytes) in the current block, or
 * NULL when no memory is left. */
static const struct lmns_statmount *lmns_pipe_keep(lmns_pipe *p,
		const struct lmns_statmount *buf, size_t bufsize,
		char **block, size_t *used)
{
	size_t size = ((size_t)buf->size + 7) & ~(size_t)7;
	const struct lmns_statmount *r;

	if (size < sizeof *buf)
		size = sizeof *buf;
	if (size > bufsize)
		size = bufsize;
	if (!*block || *used + size > p->bsizes[p->nblocks - 1]) {
		size_t bsize = size > LMNS_PIPE_BLOCK ? size : LMNS_PIPE_BLOCK;

		*block = p->nblocks < p->maxblocks ? lmns_pipe_map(bsize) : NULL;
		if (!*block)
			return NULL;
		p->blocks[p->nblocks] = *block;
		p->bsizes[p->nblocks++] = bsize;
		*used = 0;
	}
	memcpy(*block + *used, buf, size);
	r = (const struct lmns_statmount *)(*block + *used);
	*used += size;
	return r;
}

static void *lmns_pipe_run(void *arg)
{
	lmns_pipe *p = arg;
	struct lmns_mnt_id_req req;
	size_t i, bufsize = LMNS_SM_BUFSIZE, used = 0;
	struct lmns_statmount *buf = lmns_pipe_map(bufsize), *big;
	char *block = NULL;
	int err;

	memset(&req, 0, sizeof req);
	req.size = p->nsid ? LMNS_MNT_ID_REQ_SIZE_VER1 : LMNS_MNT_ID_REQ_SIZE_VER0;
	req.param = p->mask;
	req.mnt_ns_id = p->nsid;
	for (i = 0; i < p->n; i++) {
		const struct lmns_statmount *r = NULL;

		err = ENOMEM;
		req.mnt_id = p->ids[i];
		while (buf) {
			if (syscall(SYS_statmount, &req, buf, bufsize, 0) == 0) {
				err = 0;
				break;
			}
			err = errno;
			if (err != EOVERFLOW || bufsize >= LMNS_SM_BUFMAX)
				break;
			big = lmns_pipe_map(bufsize * 4);
			munmap(buf, bufsize);
			buf = big;
			bufsize *= 4;
			err = ENOMEM;
		}
		if (err == ENOENT)
			r = LMNS_PIPE_GONE;	/* gone since listmount */
		else if (err == 0 &&
			 !(r = lmns_pipe_keep(p, buf, bufsize, &block, &used)))
			err = ENOMEM;
		pthread_mutex_lock(&p->mu);
		p->res[i] = r;
		p->err[i] = err;
		p->done = i + 1;
		pthread_cond_signal(&p->cv);
		if (p->cancel)
			i = p->n;	/* the Lua side gave up */
		pthread_mutex_unlock(&p->mu);
	}
	if (buf)
		munmap(buf, bufsize);
	return NULL;
}

/* Stop and join the helper thread, free its memory (once): the end of a
 * listing, and __gc of the job. */
static void lmns_pipe_stop(lmns_pipe *p)
{
	size_t i;

	if (!p->started || p->joined)
		return;
	pthread_mutex_lock(&p->mu);
	p->cancel = 1;
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	p->joined = 1;
	for (i = 0; i < p->nblocks; i++)
		munmap(p->blocks[i], p->bsizes[i]);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
}

static int lmns_pipe_gc(lua_State *L)
{
	lmns_pipe_stop(lua_touserdata(L, 1));
	return 0;
}

/*
 * Start the helper thread for ids[0..n-1]: pushes the job (a userdata
 * whose __gc joins the thread) and returns it, or returns NULL with
 * nothing pushed when no thread could be started: the caller then makes
 * the calls itself.
 */
static lmns_pipe *lmns_pipe_start(lua_State *L, const uint64_t *ids, size_t n,
				  uint64_t nsid, uint64_t mask)
{
	lmns_pipe *p;
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	/* the job and its arrays in one userdata: results of ~1 KB but for
	 * huge option strings, at worst one block each, so n + 1 blocks */
	p = lua_newuserdata(L, sizeof *p + n * sizeof *p->res +
			    (n + 1) * (sizeof *p->blocks + sizeof *p->bsizes) +
			    n * sizeof *p->err);
	memset(p, 0, sizeof *p);
	p->ids = ids;
	p->n = n;
	p->nsid = nsid;
	p->mask = mask;
	p->maxblocks = n + 1;
	p->res = (const struct lmns_statmount **)(p + 1);
	p->blocks = (char **)(p->res + n);
	p->bsizes = (size_t *)(p->blocks + n + 1);
	p->err = (int *)(p->bsizes + n + 1);
	if (pthread_attr_init(&attr) != 0) {
		lua_pop(L, 1);
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&p->thread, &attr, lmns_pipe_run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
		lua_pop(L, 1);
		return NULL;
	}
	p->started = 1;
	if (luaL_newmetatable(L, "mountns.statmount_job")) {
		lua_pushcfunction(L, lmns_pipe_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	return p;
}

/* Wait for result i; NULL (errno set) when its call failed. */
static const struct lmns_statmount *lmns_pipe_get(lmns_pipe *p, size_t i)
{
	const struct lmns_statmount *r;

	pthread_mutex_lock(&p->mu);
	while (p->done <= i)
		pthread_cond_wait(&p->cv, &p->mu);
	r = p->res[i];
	errno = p->err[i];
	pthread_mutex_unlock(&p->mu);
	return r;
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
	lmns_pipe *pipe = NULL;

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
		pipe = n >= LMNS_PIPE_MIN ? lmns_pipe_start(L, ids, n, nsid,
							    mask) : NULL;
		lmns_builder_init(L, &rb);
	}
	lua_createtable(L, (int)n, 0);
	{
		size_t i;
		int k = 0;
		const struct lmns_statmount *sm = NULL;

		for (i = 0; i < n; i++) {
			if (!stat) {
				lua_pushinteger(L, (lua_Integer)ids[i]);
			} else if (pipe ? (sm = lmns_pipe_get(pipe, i)) != NULL :
				   lmns_statmount_call(L, &b, ids[i], nsid,
						       mask) == 0) {
				if (sm == LMNS_PIPE_GONE)
					continue;	/* gone since listmount */
				lmns_push_sm_record(L, &rb, pipe ? sm : b.sm,
						    from);
			} else if (errno == ENOENT) {
				continue;	/* gone since listmount */
			} else {
				int err = errno;
				char id[32];

				snprintf(id, sizeof id, "%llu",
					 (unsigned long long)ids[i]);
				if (pipe)
					lmns_pipe_stop(pipe);
				return lmns_fail(L, err, "statmount", id,
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
