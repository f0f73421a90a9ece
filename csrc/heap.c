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
}
