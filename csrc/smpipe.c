/*
 * smpipe.c - the statmount(2) calls of statmount.c: one into a buffer that
 * grows on EOVERFLOW, or a listing's many in a helper thread beside the
 * building of the records (the pipeline below). No Lua function here:
 * statmount.c binds listmount and statmount, and builds the records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lmns.h"
#include "uapi.h"

#define LMNS_SM_BUFMAX (16 << 20)	/* the largest buffer tried */

/* ---- one call ----------------------------------------------------------- */

void lmns_smbuf_init(lua_State *L, lmns_smbuf *b,
		     struct lmns_statmount *first, size_t size)
{
	b->sm = first;
	b->size = size;
	lua_pushnil(L);		/* the slot of a bigger buffer */
	b->idx = lua_gettop(L);
}

/* statmount(2) of one ID into b; 0, or -1 with errno (EOVERFLOW grows b) */
int lmns_smbuf_statmount(lua_State *L, lmns_smbuf *b, uint64_t id,
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
#define LMNS_PIPE_BLOCK (1 << 20)	/* results are copied into such blocks */

/* mmap'd blocks that kept results are copied into: one per thread */
typedef struct lmns_arena {
	char **blocks;			/* nblocks of them (at most maxblocks) */
	size_t *bsizes;			/* and their sizes */
	size_t nblocks, maxblocks, used;	/* used: of the last block */
} lmns_arena;

struct lmns_pipe {
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
};

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
void lmns_pipe_stop(lmns_pipe *p)
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
lmns_pipe *lmns_pipe_start(lua_State *L, const uint64_t *ids, size_t n,
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
	if (lmns_smbuf_statmount(L, b, p->ids[j], p->nsid, p->mask) != 0)
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
const struct lmns_statmount *lmns_pipe_get(lua_State *L, lmns_pipe *p,
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
