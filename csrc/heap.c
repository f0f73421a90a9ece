/*
 * heap.c - the Lua heap in transparent huge pages, so that fork stays cheap.
 *
 * Every scenario forks the caller, and fork copies one page-table entry per
 * 4 KB page of the caller's memory (and takes a reference on each page),
 * which the child's exit drops again: a busted suite holding 256 MB of Lua
 * data paid ~14 ms a scenario for it, against ~1 ms from an empty heap
 * (`git show 17eacb7:bench/RESULTS.md`, "The caller's heap"; bench/RESULTS.md
 * has the current ratio). In 2 MB pages the same heap is 128 entries. glibc
 * does this when started with GLIBC_TUNABLES=glibc.malloc.hugetlb=1; a
 * library cannot set that for its host, so this does the same from the
 * moment mountns.core is loaded, for the memory the Lua state allocates:
 *
 * - the state's allocator is wrapped; after an allocation it looks at the
 *   top of the malloc heap (sbrk(0): a variable, no system call);
 * - when the heap first grows after the load, malloc is told to grow it
 *   in steps of HEAP_STEP from then on (mallopt M_TOP_PAD), and each new
 *   stretch is marked MADV_HUGEPAGE when it appears, so its 2 MB ranges
 *   fault in as huge pages when first touched. glibc advises before it
 *   writes a new stretch; here malloc has already written a chunk header in
 *   its first range, which then holds 4 KB pages: MADV_COLLAPSE makes that
 *   one range huge (a copy of a few pages, once a step; not for the first
 *   stretch when the heap at the load ended off a 2 MB boundary, where
 *   there is nothing it could collapse). The heap as it was at the load is
 *   left alone;
 * - from the load, malloc serves blocks below HEAP_STEP from the heap too
 *   (mallopt M_MMAP_THRESHOLD; glibc's own is 128 KB, raised by each
 *   mapped block freed, up to this same 32 MB, until M_TOP_PAD or the
 *   first mallopt fixes it): a caller's 1 MiB strings (file contents,
 *   JSON documents) were each a mapping of their own, 256 of them 65,536
 *   entries for fork to copy, an empty scenario 9-17x what it costs from
 *   an empty heap. In the heap they sit in its huge pages. The price: a
 *   freed block in the middle of the heap is reused by malloc but not
 *   given back to the system, where munmap gave it back at once (the top
 *   of the heap still is, above M_TOP_PAD). Not when the environment sets
 *   the threshold (GLIBC_TUNABLES=glibc.malloc.mmap_threshold=N,
 *   MALLOC_MMAP_THRESHOLD_=N): the user's word wins;
 * - blocks of HEAP_STEP and more (served by mmap, not the heap) get their
 *   whole 2 MB ranges advised too (4 MB and more when the user set the
 *   threshold: a smaller block has no whole range worth it).
 *
 * Nothing changes for Lua: the same allocator serves every block, only the
 * page size of the memory behind it changes. A process whose heap does not
 * grow after the load keeps its pages as they were. Under ASan or
 * valgrind malloc is replaced and never moves the break, so nothing
 * happens. LuaJIT's own allocator maps its memory itself, outside malloc's
 * heap (the glibc tunable does not reach it either): not wrapped there. Off
 * with MOUNTNS_HUGE_PAGES=0 in the environment when mountns.core loads.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "lmns.h"
#include "uapi.h"

#if defined(__GLIBC__) && !defined(LUA_LJDIR)	/* LUA_LJDIR: LuaJIT */
#define HUGE_PAGE ((uintptr_t)2 << 20)
#define HEAP_STEP (32 << 20)		/* the heap grows by this much */
#define MAX_STATES 8			/* distinct old allocators wrapped */

/* One wrapped allocator: the old function and its ud. Slots are never
 * freed (a state may allocate until the end of lua_close), so a state's
 * wrapper ud stays valid; states with the same old allocator share one. */
struct lmns_heap_slot {
	lua_Alloc f;
	void *ud;
};

static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lmns_heap_slot heap_slots[MAX_STATES];
/* The process has one malloc heap, whatever the number of states. */
static char *heap_base;		/* the break when mountns.core first loaded */
static char *heap_seen;		/* the break at the last look */
static char *heap_advised;	/* the end of what is advised */
static int heap_state;		/* 0 watching, 1 advising, -1 off */
static size_t heap_block_min = 2 * HUGE_PAGE;	/* mapped blocks advised */

static uintptr_t lmns_heap_down(uintptr_t p)
{
	return p & ~(HUGE_PAGE - 1);
}

/* THP "never": advising does nothing, so do nothing at all. */
static int lmns_heap_thp_never(void)
{
	char buf[64];
	ssize_t n;
	int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 1;	/* no THP in this kernel */
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	return strstr(buf, "[never]") != NULL;
}

/*
 * The break moved (under heap_lock). What is advised ends at a 2 MB
 * boundary (heap_advised), and the stretch above it up to the break stays
 * unadvised: brk then extends that mapping in place (a new stretch with
 * other flags would be a mapping of its own, and an advised range cannot
 * span two). When the break passes the next boundary, the whole 2 MB
 * ranges below it are advised, and the first of them, whose pages are
 * already there in 4 KB (the old top of the heap, the header malloc wrote
 * in the new stretch), is collapsed into one huge page.
 */
static void lmns_heap_moved(char *brk)
{
	uintptr_t to = lmns_heap_down((uintptr_t)brk);
	uintptr_t from = (uintptr_t)heap_advised;

	__atomic_store_n(&heap_seen, brk, __ATOMIC_RELAXED);
	if (heap_state < 0)
		return;
	if (heap_state == 0) {		/* the first growth since the load */
		mallopt(M_TOP_PAD, HEAP_STEP);
		__atomic_store_n(&heap_state, 1, __ATOMIC_RELAXED);
		heap_advised = (char *)to;	/* the next stretch is the first */
		return;
	}
	if (to <= from) {		/* trimmed, or not past a boundary */
		heap_advised = (char *)(to < from ? to : from);
		return;
	}
	if (from < (uintptr_t)heap_base)	/* not what was there before */
		from = (uintptr_t)heap_base;
	madvise((void *)from, to - from, MADV_HUGEPAGE);
	/* The first range made huge, where it can be: from heap_base (the
	 * first stretch, most loads: heap_base is seldom on a boundary) the
	 * range that holds the 4 KB pages starts below heap_base, in the
	 * load's part of the heap, another mapping; and the first whole range
	 * above heap_base holds no page yet (it faults in huge): a collapse
	 * there does nothing (the kernel answers 0 unaligned, EINVAL aligned
	 * up: no page table to collapse), so none is asked for. */
	if ((from & (HUGE_PAGE - 1)) == 0)
		madvise((void *)from, HUGE_PAGE, MADV_COLLAPSE);
	heap_advised = (char *)to;
}

/*
 * A large block (mmap'd by malloc, not in the heap): its whole 2 MB ranges.
 * A block that realloc moved there has its first `copied` bytes written
 * already, in 4 KB pages (malloc copied them before this could advise):
 * those ranges are collapsed, a copy once against one entry per 4 KB page
 * at every fork (a Lua 5.4 table of 2 M strings: its 32 MB array was half
 * 4 KB pages, 4,096 entries, 0.3x an empty scenario's time).
 */
static void lmns_heap_block(void *p, size_t size, size_t copied)
{
	uintptr_t from = lmns_heap_down((uintptr_t)p + HUGE_PAGE - 1);
	uintptr_t to = lmns_heap_down((uintptr_t)p + size);
	uintptr_t written = lmns_heap_down((uintptr_t)p + copied);

	if (__atomic_load_n(&heap_state, __ATOMIC_RELAXED) != 1 || from >= to)
		return;
	madvise((void *)from, to - from, MADV_HUGEPAGE);
	if (from < written)
		madvise((void *)from, written - from, MADV_COLLAPSE);
}

/* The wrapper: the old allocator, then one look at the break (a free, or a
 * failed allocation, returns NULL and needs none). */
static void *lmns_heap_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	const struct lmns_heap_slot *s = ud;
	void *p = s->f(s->ud, ptr, osize, nsize);

	if (p) {
		char *brk = sbrk(0);

		if (__builtin_expect(brk != __atomic_load_n(&heap_seen, __ATOMIC_RELAXED), 0)) {
			pthread_mutex_lock(&heap_lock);
			lmns_heap_moved(brk);
			pthread_mutex_unlock(&heap_lock);
		} else if (__builtin_expect(nsize >= __atomic_load_n(&heap_block_min,
								   __ATOMIC_RELAXED), 0)) {
			lmns_heap_block(p, nsize, ptr ? (osize < nsize ? osize : nsize) : 0);
		}
	}
	return p;
}

/* The wrapper must outlive every state it serves: lua_close unloads
 * core.so (dlclose) before it frees the last blocks, through the wrapper.
 * RTLD_NODELETE keeps this module mapped until the process ends. */
static int lmns_heap_pin(void)
{
	Dl_info info;

	if (!dladdr((void *)lmns_heap_pin, &info) || !info.dli_fname)
		return 0;
	return dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE) != NULL;
}

/* The threshold as the user set it in the environment, if they did. */
static int lmns_heap_user_threshold(void)
{
	const char *t = getenv("GLIBC_TUNABLES");

	return getenv("MALLOC_MMAP_THRESHOLD_") != NULL
		|| (t && strstr(t, "glibc.malloc.mmap_threshold=") != NULL);
}

/* Once the first state is wrapped (under heap_lock): blocks below
 * HEAP_STEP from the heap, unless THP is "never" (the heap's pages stay
 * 4 KB: nothing to gain) or the user said. */
static void lmns_heap_threshold(void)
{
	static int done;

	if (done || heap_state < 0)
		return;
	done = 1;
	if (!lmns_heap_user_threshold() && mallopt(M_MMAP_THRESHOLD, HEAP_STEP))
		__atomic_store_n(&heap_block_min, (size_t)HEAP_STEP, __ATOMIC_RELAXED);
}

/* Wrap L's allocator, once per state; off with MOUNTNS_HUGE_PAGES=0. */
static void lmns_heap_wrap(lua_State *L)
{
	const char *env = getenv("MOUNTNS_HUGE_PAGES");
	void *ud;
	lua_Alloc f = lua_getallocf(L, &ud);
	struct lmns_heap_slot *s = NULL;
	int i;

	if ((env && strcmp(env, "0") == 0) || f == lmns_heap_alloc)
		return;
	pthread_mutex_lock(&heap_lock);
	if (!heap_base) {
		heap_base = heap_seen = sbrk(0);
		if (lmns_heap_thp_never())	/* advising would do nothing */
			__atomic_store_n(&heap_state, -1, __ATOMIC_RELAXED);
	}
	for (i = 0; i < MAX_STATES && !s; i++)
		if (!heap_slots[i].f || (heap_slots[i].f == f && heap_slots[i].ud == ud))
			s = &heap_slots[i];
	if (s && heap_base != (char *)-1 && lmns_heap_pin()) {
		s->f = f;
		s->ud = ud;
		lua_setallocf(L, lmns_heap_alloc, s);
		lmns_heap_threshold();
	}
	pthread_mutex_unlock(&heap_lock);
}
#endif

static void lmns_heap_fresh_open(lua_State *L);	/* fresh_heap, below */

void lmns_heap_open(lua_State *L)
{
	const char *env = getenv("MOUNTNS_HUGE_PAGES");

	/* a value meant as "off" (no, false) must not leave it on unseen */
	if (env && *env && strcmp(env, "0") != 0 && strcmp(env, "1") != 0)
		luaL_error(L, "mountns.core: MOUNTNS_HUGE_PAGES must be 0 or 1, got '%s'", env);
#if defined(__GLIBC__) && !defined(LUA_LJDIR)
	lmns_heap_wrap(L);
#else
	(void)L;
#endif
	lmns_heap_fresh_open(L);
}

/* ---- fresh_heap: a forked child's allocations from a fresh arena ------- */

/***
@module mountns.core
*/

/***
The heap: a forked child's allocations
@section heap
*/

/*
 * fresh_heap: a forked child's Lua allocations from a fresh arena.
 *
 * After fork every page of the parent's heap is shared copy-on-write, so
 * the child pays a page fault and a 4 KB copy for each page it writes:
 * malloc reusing a free chunk of the inherited heap, the collector marking
 * an old object. A short-lived child (a scenario) touches a few hundred
 * such pages for a few dozen KB of work. Here its new blocks come from a
 * private anonymous mapping instead (a zero-fill fault per fresh 4 KB, no
 * copy), and the collector is stopped, so old objects are not written.
 * Blocks of the arena are never reused (freeing one does nothing); blocks
 * of the old heap are freed and resized by the old allocator (kept
 * instead, they would be leaks to LeakSanitizer and valgrind: a child of
 * make asan or make valgrind exits with their checks). When the
 * arena is full, new blocks come from the old allocator. Every period
 * (16 MB allocated, arena or not, unless the caller gives another) a full collection runs: the allocator
 * sets a count hook (lua_sethook may be called at any time, even from a
 * signal handler), which at the next instruction puts the thread's
 * previous hook back and runs lua_gc(LUA_GCCOLLECT), a normal collection
 * that also calls the finalizers (__gc: a file left open is closed). An
 * emergency collection, which Lua 5.4 runs when an allocation fails (also
 * when the collector is stopped), calls none: the file descriptors of
 * unclosed files would pile up. Should the hook not have run by the next
 * period (the thread that called fresh_heap is not the one allocating),
 * the next request the arena cannot serve fails instead: the emergency
 * collection, then the old
 * allocator serves it, so memory stays bounded by the live data plus the
 * arena plus that period. Lua 5.1-5.3 and LuaJIT run no collection on a
 * failed allocation when the collector is stopped: there, nothing is done.
 */
#if LUA_VERSION_NUM >= 504
#define ARENA_ALIGN 16

struct lmns_arena {
	char *top, *end, *base;
	lua_Alloc old;
	void *oldud;
	size_t since_gc;	/* bytes allocated since a collection */
	size_t every;		/* the period of the collections, in bytes */
	int failed;		/* the last growth failed on purpose */
	lua_State *L;		/* the thread that called fresh_heap: the hook's */
	int hooked;		/* the collection's hook is set, not run yet */
	lua_Hook oldhook;	/* the thread's hook before it, put back by it */
	int oldmask, oldcount;
};

static struct lmns_arena *lmns_arena_current;	/* one per process */

/* The count hook that the allocator set: the previous hook back, then a
 * full collection with its finalizers. */
static void lmns_arena_hook(lua_State *L, lua_Debug *ar)
{
	struct lmns_arena *a = lmns_arena_current;

	(void)ar;
	if (!a || !a->hooked)
		return;
	a->hooked = 0;
	lua_sethook(L, a->oldhook, a->oldmask, a->oldcount);
	a->since_gc = 0;
	lua_gc(L, LUA_GCCOLLECT, 0);
}

/* Count n bytes allocated; past the period, set the collection's hook.
 * Returns 1 when the last period's hook has not run yet. */
static int lmns_arena_count(struct lmns_arena *a, size_t n)
{
	a->since_gc += n;
	if (a->since_gc < a->every)
		return 0;
	a->since_gc = 0;
	if (a->hooked)
		return 1;
	a->oldhook = lua_gethook(a->L);
	a->oldmask = lua_gethookmask(a->L);
	a->oldcount = lua_gethookcount(a->L);
	a->hooked = 1;
	lua_sethook(a->L, lmns_arena_hook, LUA_MASKCOUNT, 1);
	return 0;
}

static int lmns_arena_owns(const struct lmns_arena *a, const void *p)
{
	return (const char *)p >= a->base && (const char *)p < a->end;
}

static void *lmns_arena_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct lmns_arena *a = ud;
	size_t size = (nsize + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	void *p;

	if (ptr && !lmns_arena_owns(a, ptr))	/* the old heap's block */
		return a->old(a->oldud, ptr, osize, nsize);
	if (nsize == 0)
		return NULL;	/* an arena block (or none): not reused */
	if (ptr && nsize <= osize)
		return ptr;	/* shrinking never fails, never moves */
	if (ptr && (char *)ptr + ((osize + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))
	    == a->top && size <= (size_t)(a->end - (char *)ptr)) {
		a->top = (char *)ptr + size;	/* the last block grows in place */
		return ptr;
	}
	if (size <= (size_t)(a->end - a->top)) {
		p = a->top;
		a->top += size;
		lmns_arena_count(a, size);
	} else {
		if (!a->failed && lmns_arena_count(a, nsize)) {
			a->failed = 1;	/* Lua collects, then asks again */
			return NULL;
		}
		a->failed = 0;
		p = a->old(a->oldud, NULL, 0, nsize);
		if (!p)
			return NULL;
	}
	if (ptr)
		memcpy(p, ptr, osize);
	return p;
}
#endif

/***
In a forked child that will end with `_exit` (never returning into its
parent's code): allocate the Lua state's new blocks from a fresh private
arena of `mb` megabytes and stop the collector, so the child writes
fewer of the pages it shares copy-on-write with its parent (each one a
page fault and a copy). Memory stays bounded: once the arena is full,
blocks come from the old allocator; a full collection runs every
`every` MB allocated (with the finalizers: `__gc`). Lua 5.4 only
(elsewhere it does nothing and returns false). A process cannot undo
it: never call it in a process that goes on.
@function fresh_heap
@tparam[opt=16] int mb the arena's size
@tparam[opt=16] number every MB allocated between two collections
@treturn[1] boolean true: done; false: not on this Lua
@return[2] nil
@treturn[2] string "fresh_heap: strerror (ENAME)" (mmap failed)
@treturn[2] int errno
*/
static int lmns_heap_fresh_heap(lua_State *L)
{
	lua_Integer mb;
	lua_Number every;

	lmns_checknomore(L, 2);
	mb = luaL_optinteger(L, 1, 16);
	every = luaL_optnumber(L, 2, 16);
	luaL_argcheck(L, mb >= 1 && mb <= 4096, 1, "a size in MB from 1 to 4096 expected");
	luaL_argcheck(L, every >= 0.0625 && every <= 4096, 2,
		      "a period in MB from 0.0625 to 4096 expected");
#if LUA_VERSION_NUM >= 504
	{
		size_t len = (size_t)mb << 20;
		struct lmns_arena *a = mmap(NULL, len, PROT_READ | PROT_WRITE,
					    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
					    -1, 0);

		if (a == MAP_FAILED)
			return lmns_fail(L, errno, "fresh_heap", NULL, NULL);
		a->base = (char *)a;
		a->end = a->base + len;
		a->top = a->base + ((sizeof *a + ARENA_ALIGN - 1)
				    & ~(size_t)(ARENA_ALIGN - 1));
		a->since_gc = 0;
		a->every = (size_t)(every * (1 << 20));
		a->failed = 0;
		a->L = L;	/* kept from the collector: the hook's thread */
		/* a coroutine is kept from the collector by a reference; the
		 * main thread lives as long as the state (and a reference
		 * would write the registry's array: a copy-on-write fault) */
		if (lua_pushthread(L))
			lua_pop(L, 1);
		else
			luaL_ref(L, LUA_REGISTRYINDEX);
		a->hooked = 0;
		/* a second call (a scenario's child of a script's process,
		 * both with fresh_heap): the first arena only forwards from
		 * now on; its pending hook, which reads the current arena,
		 * is undone here (it would stay set, run at every
		 * instruction) */
		if (lmns_arena_current) {
			struct lmns_arena *o = lmns_arena_current;

			if (o->hooked) {
				lua_sethook(o->L, o->oldhook, o->oldmask, o->oldcount);
				o->hooked = 0;
			}
			o->every = (size_t)-1;
		}
		lmns_arena_current = a;
		a->old = lua_getallocf(L, &a->oldud);
		lua_gc(L, LUA_GCSTOP, 0);
		lua_setallocf(L, lmns_arena_alloc, a);
		lua_pushboolean(L, 1);
	}
#else
	lua_pushboolean(L, 0);
#endif
	return 1;
}

static void lmns_heap_fresh_open(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{ "fresh_heap", lmns_heap_fresh_heap },
		{ NULL, NULL }
	};

	luaL_setfuncs(L, funcs, 0);
}
