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
#include <stddef.h>
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

/* ---- the calls -------------------------------------------------------- */

/* The first buffer of a statmount call: on the C stack, so a call whose
 * result fits (every ordinary mount) allocates no Lua memory. In a forked
 * child on a fresh arena (core.fresh_heap) each 4 KB userdata was a new
 * page, a page fault each. */
typedef union lmns_smfirst {
	struct lmns_statmount sm;
	char bytes[LMNS_SM_BUFSIZE];
} lmns_smfirst;

/* A growable buffer: first the caller's lmns_smfirst, then a userdata in
 * the stack slot idx (reserved by init, replaced on growth). */
typedef struct lmns_smbuf {
	int idx;
	size_t size;
	struct lmns_statmount *sm;
} lmns_smbuf;

static void lmns_smbuf_init(lua_State *L, lmns_smbuf *b, lmns_smfirst *first)
{
	b->sm = &first->sm;
	b->size = sizeof *first;
	lua_pushnil(L);		/* the slot of a bigger buffer */
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
 * helper takes the mounts from the front of the list; when the Lua thread
 * finds the next result not ready yet, it makes a call itself, for the
 * last mount nobody has taken (from the back of the list), and keeps that
 * result for later: so neither thread waits for the other but at the very
 * end, and when other processes load every core, two runnable threads get
 * the listing done as one would at best. The helper touches no Lua state
 * and no malloc arena (its memory is mmap'd), blocks every signal, and is
 * joined before listmount returns (or, should a Lua error unwind past, by
 * the job's __gc).
 */
#define LMNS_PIPE_MIN 256		/* fewer mounts: one thread */
#define LMNS_PIPE_BLOCK (1 << 20)	/* results are copied into such blocks */
#define LMNS_PIPE_GONE ((const struct lmns_statmount *)1)
/* A result is kept as the fields of struct statmount that a record reads
 * (up to its spare words) followed by its strings: a third of the memory
 * of the whole 512-byte struct and the strings. */
#define LMNS_SM_HEAD offsetof(struct lmns_statmount, spare2)

/* The string area of a result: after the whole struct in a buffer that
 * statmount filled, after LMNS_SM_HEAD bytes in a kept copy. */
#define LMNS_SM_STR(sm, kept) \
	((kept) ? (const char *)(sm) + LMNS_SM_HEAD : (sm)->str)

/* mmap'd blocks that kept results are copied into: one per thread */
typedef struct lmns_arena {
	char **blocks;			/* nblocks of them (at most maxblocks) */
	size_t *bsizes;			/* and their sizes */
	size_t nblocks, maxblocks, used;	/* used: of the last block */
} lmns_arena;

typedef struct lmns_pipe {
	const uint64_t *ids;
	size_t n;
	uint64_t nsid, mask;
	const struct lmns_statmount **res;	/* result i, GONE, or NULL: error */
	int *err;			/* errno of a failed call */
	lmns_arena arena[2];		/* the helper's, the Lua thread's */
	/* shared by the two threads, through __atomic calls: */
	uint64_t range;			/* low 32 bits: the next mount the helper
					 * takes; high 32: the first one the Lua
					 * thread took (n: none) */
	size_t done;			/* the helper's results 0..done-1 are ready */
	size_t want;			/* the Lua thread sleeps until done >= want
					 * (0: it does not sleep) */
	int cancel;			/* the Lua thread gave up */
	/* the Lua thread's own: */
	size_t avail;			/* done, as it last read it */
	size_t back;			/* range's high half (only it changes it) */
	int started, joined;
	pthread_mutex_t mu;		/* for the sleep only */
	pthread_cond_t cv;
	pthread_t thread;
} lmns_pipe;

/* When nothing is left to take, a Lua thread that waits for the helper
 * sleeps until this many more results are ready (or all of the helper's
 * are): one wake-up per batch, not per mount. */
#define LMNS_PIPE_BATCH 64

/* mmap'd memory: no malloc arena is made for the helper thread */
static void *lmns_pipe_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A copy of the result in buf (of bufsize bytes: LMNS_SM_HEAD bytes, then
 * its strings) in the arena, or NULL when no memory is left. */
static const struct lmns_statmount *lmns_pipe_keep(lmns_arena *a,
		const struct lmns_statmount *buf, size_t bufsize)
{
	size_t strs = 0, size;
	char *block, *r;

	if (buf->size > sizeof *buf)
		strs = (buf->size < bufsize ? buf->size : bufsize) - sizeof *buf;
	size = (LMNS_SM_HEAD + strs + 7) & ~(size_t)7;
	if (!a->nblocks || a->used + size > a->bsizes[a->nblocks - 1]) {
		size_t bsize = size > LMNS_PIPE_BLOCK ? size : LMNS_PIPE_BLOCK;

		block = a->nblocks < a->maxblocks ? lmns_pipe_map(bsize) : NULL;
		if (!block)
			return NULL;
		a->blocks[a->nblocks] = block;
		a->bsizes[a->nblocks++] = bsize;
		a->used = 0;
	}
	r = a->blocks[a->nblocks - 1] + a->used;
	memcpy(r, buf, LMNS_SM_HEAD);
	memcpy(r + LMNS_SM_HEAD, buf->str, strs);
	a->used += size;
	return (const struct lmns_statmount *)r;
}

static void lmns_arena_free(lmns_arena *a)
{
	size_t i;

	for (i = 0; i < a->nblocks; i++)
		munmap(a->blocks[i], a->bsizes[i]);
	a->nblocks = 0;
}

/* Take a mount: the helper from the front (back = 0), the Lua thread from
 * the back (back = 1). Its index, or -1 when none is left. */
static long lmns_pipe_take(lmns_pipe *p, int back)
{
	uint64_t v = __atomic_load_n(&p->range, __ATOMIC_ACQUIRE), nv;
	uint32_t f, b;

	do {
		f = (uint32_t)v;
		b = (uint32_t)(v >> 32);
		if (f >= b)
			return -1;
		nv = back ? ((uint64_t)(b - 1) << 32 | f) : v + 1;
	} while (!__atomic_compare_exchange_n(&p->range, &v, nv, 0,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return back ? (long)b - 1 : (long)f;
}

static void *lmns_pipe_run(void *arg)
{
	lmns_pipe *p = arg;
	struct lmns_mnt_id_req req;
	size_t want, bufsize = LMNS_SM_BUFSIZE;
	struct lmns_statmount *buf = lmns_pipe_map(bufsize), *big;
	long i;
	int err;

	memset(&req, 0, sizeof req);
	req.size = p->nsid ? LMNS_MNT_ID_REQ_SIZE_VER1 : LMNS_MNT_ID_REQ_SIZE_VER0;
	req.param = p->mask;
	req.mnt_ns_id = p->nsid;
	while ((i = lmns_pipe_take(p, 0)) >= 0) {
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
			 !(r = lmns_pipe_keep(&p->arena[0], buf, bufsize)))
			err = ENOMEM;
		p->res[i] = r;
		p->err[i] = err;
		/* published, then a sleeping reader woken if it has its batch:
		 * with both sequentially consistent, either the reader sees
		 * this done or this sees its want (and it is asleep, or about
		 * to be with mu held, once this gets mu) */
		__atomic_store_n(&p->done, (size_t)i + 1, __ATOMIC_SEQ_CST);
		want = __atomic_load_n(&p->want, __ATOMIC_SEQ_CST);
		if (want && (size_t)i + 1 >= want) {
			pthread_mutex_lock(&p->mu);
			pthread_cond_signal(&p->cv);
			pthread_mutex_unlock(&p->mu);
		}
		if (__atomic_load_n(&p->cancel, __ATOMIC_RELAXED))
			break;	/* the Lua side gave up */
	}
	if (buf)
		munmap(buf, bufsize);
	return NULL;
}

/* Stop and join the helper thread, free the kept results (once): the end
 * of a listing, and __gc of the job. */
static void lmns_pipe_stop(lmns_pipe *p)
{
	if (!p->started || p->joined)
		return;
	__atomic_store_n(&p->cancel, 1, __ATOMIC_RELAXED);
	pthread_join(p->thread, NULL);
	p->joined = 1;
	lmns_arena_free(&p->arena[0]);
	lmns_arena_free(&p->arena[1]);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
}

static const char lmns_job_key = 'j';	/* its address: a registry key */

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
	int rc, k;

	if (n >= UINT32_MAX)
		return NULL;	/* range holds 32-bit indexes */
	/* the job and its arrays in one userdata: results of ~0.3 KB but
	 * for huge option strings, at worst one block each, so n + 1 blocks
	 * in each arena */
	p = lua_newuserdata(L, sizeof *p + n * sizeof *p->res +
			    2 * (n + 1) * (sizeof(char *) + sizeof(size_t)) +
			    n * sizeof *p->err);
	memset(p, 0, sizeof *p);
	p->ids = ids;
	p->n = n;
	p->nsid = nsid;
	p->mask = mask;
	p->range = (uint64_t)n << 32;
	p->back = n;
	p->res = (const struct lmns_statmount **)(p + 1);
	{
		char **blocks = (char **)(p->res + n);
		size_t *sizes = (size_t *)(blocks + 2 * (n + 1));

		for (k = 0; k < 2; k++) {
			p->arena[k].blocks = blocks + k * (n + 1);
			p->arena[k].bsizes = sizes + k * (n + 1);
			p->arena[k].maxblocks = n + 1;
		}
		p->err = (int *)(sizes + 2 * (n + 1));
	}
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
	/* the job's metatable, in the registry under the address of
	 * lmns_job_key: not by name, where the job of another build of
	 * core.so loaded beside this one (bench/mounts.lua CORE) would find it
	 * and a __gc that reads another struct */
	lua_pushlightuserdata(L, (void *)&lmns_job_key);
	lua_rawget(L, LUA_REGISTRYINDEX);
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		lua_createtable(L, 0, 1);
		lua_pushcfunction(L, lmns_pipe_gc);
		lua_setfield(L, -2, "__gc");
		lua_pushlightuserdata(L, (void *)&lmns_job_key);
		lua_pushvalue(L, -2);
		lua_rawset(L, LUA_REGISTRYINDEX);
	}
	lua_setmetatable(L, -2);
	return p;
}

/* The Lua thread takes the last mount nobody has taken and keeps its
 * result (its call made with b); 0 when none was left. */
static int lmns_pipe_steal(lua_State *L, lmns_pipe *p, lmns_smbuf *b)
{
	long j = lmns_pipe_take(p, 1);
	const struct lmns_statmount *r = NULL;
	int err = 0;

	if (j < 0)
		return 0;
	p->back = (size_t)j;
	if (lmns_statmount_call(L, b, p->ids[j], p->nsid, p->mask) != 0)
		err = errno;
	if (err == ENOENT)
		r = LMNS_PIPE_GONE;
	else if (err == 0 && !(r = lmns_pipe_keep(&p->arena[1], b->sm,
						  b->size)))
		err = ENOMEM;
	p->res[j] = r;
	p->err[j] = err;
	return 1;
}

/* Result i (taken in order); NULL (errno set) when its call failed. Until
 * the helper has it, the Lua thread makes calls from the back; with none
 * left, it sleeps. */
static const struct lmns_statmount *lmns_pipe_get(lua_State *L, lmns_pipe *p,
						  lmns_smbuf *b, size_t i)
{
	while (i < p->back && i >= p->avail) {
		p->avail = __atomic_load_n(&p->done, __ATOMIC_ACQUIRE);
		if (i < p->avail || lmns_pipe_steal(L, p, b))
			continue;
		/* nothing left to take: the helper ends at back */
		{
			size_t want = i + LMNS_PIPE_BATCH < p->back ?
				      i + LMNS_PIPE_BATCH : p->back;

			pthread_mutex_lock(&p->mu);
			__atomic_store_n(&p->want, want, __ATOMIC_SEQ_CST);
			while ((p->avail = __atomic_load_n(&p->done,
						__ATOMIC_SEQ_CST)) < want)
				pthread_cond_wait(&p->cv, &p->mu);
			__atomic_store_n(&p->want, 0, __ATOMIC_RELAXED);
			pthread_mutex_unlock(&p->mu);
		}
	}
	errno = p->err[i];
	return p->res[i];
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
		lmns_smbuf_init(L, &b, &first);
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
				if (lmns_statmount_call(L, &b, ids[i], nsid,
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
				   lmns_statmount_call(L, &b, ids[i], nsid,
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
	lmns_smbuf_init(L, &b, &first);
	if (lmns_statmount_call(L, &b, id, nsid, mask) != 0)
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
