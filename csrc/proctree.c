/*
 * proctree.c - the process tree: a scenario's processes end with it.
 *
 * fork() gives each child PR_SET_PDEATHSIG, but a program a tool runs
 * (`sh -c "sleep 25 &"`) forks children of its own, which inherit no
 * death signal and are reparented when their parent ends: to PID 1
 * unless an ancestor is a child subreaper. So a scenario's process is
 * a subreaper (every orphan of its tree becomes its child), and its
 * tree is killed when it ends, or from outside when it is killed.
 * Killing a tree from outside is racy unless it cannot change while it
 * is walked: each process is stopped (SIGSTOP) before its children are
 * listed (/proc/PID/task/TID/children, reliable only for a stopped
 * task), and waited for until it is stopped, so no fork completes
 * behind the walk; the walk is repeated until it finds nothing new;
 * only then is every process killed (SIGKILL also ends a stopped one).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lmns.h"

/***
@module mountns.core
*/

/***
Process trees: a scenario's processes end with it
@section proctree
*/

/* A growing list of PIDs. */
struct lmns_pids {
	pid_t *v;
	size_t n, cap;
};

static int lmns_pids_has(const struct lmns_pids *l, pid_t p)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i] == p)
			return 1;
	return 0;
}

static int lmns_pids_add(struct lmns_pids *l, pid_t p)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		pid_t *v = realloc(l->v, cap * sizeof *v);

		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = p;
	return 0;
}

/* The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z'...), or 0 when
 * the process is gone. */
static char lmns_proc_state(lua_State *L, pid_t pid)
{
	char rel[64], buf[512], *close_paren;
	int fd;
	ssize_t n;

	snprintf(rel, sizeof rel, "%d/stat", (int)pid);
	fd = lmns_procfs_openat(L, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* the name in parentheses may hold anything: the state follows the
	 * last ')' */
	close_paren = strrchr(buf, ')');
	return close_paren && close_paren[1] == ' ' ? close_paren[2] : 0;
}

/* Wait until pid is stopped, a zombie or gone, or the deadline (on
 * lmns_now's clock) has passed. */
static void lmns_wait_stopped(lua_State *L, pid_t pid, double deadline)
{
	struct timespec ms = { 0, 1000000 };

	for (;;) {
		char st = lmns_proc_state(L, pid);

		if (st == 0 || st == 'T' || st == 't' || st == 'Z' || st == 'X' ||
		    lmns_now() > deadline)
			return;
		nanosleep(&ms, NULL);
	}
}

/* The whole of a small file at dfd/name, NUL-terminated (malloc'd), or
 * NULL. */
static char *lmns_read_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 4096;
	char *buf;
	ssize_t n;

	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	while (buf && (n = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)n;
		if (len == cap) {
			char *b = realloc(buf, cap * 2 + 1);

			if (!b) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b;
			cap *= 2;
		}
	}
	close(fd);
	if (buf)
		buf[len] = '\0';
	return buf;
}

/* Add the children of every thread of pid to l (those not in it yet),
 * stopping each first (unless stop is 0). Returns how many were added. */
static size_t lmns_add_children(lua_State *L, pid_t pid, struct lmns_pids *l,
				int stop)
{
	char rel[64];
	int dfd;
	DIR *d;
	struct dirent *e;
	size_t added = 0;

	snprintf(rel, sizeof rel, "%d/task", (int)pid);
	dfd = lmns_procfs_openat(L, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		char name[300];
		char *text;
		const char *p;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(name, sizeof name, "%s/children", e->d_name);
		text = lmns_read_at(dirfd(d), name);
		/* "PID PID ... " */
		for (p = text; p && *p; ) {
			char *end;
			long c = strtol(p, &end, 10);

			if (end == p)
				break;
			p = end;
			if (c <= 0 || lmns_pids_has(l, (pid_t)c))
				continue;
			if (stop)
				kill((pid_t)c, SIGSTOP);
			if (lmns_pids_add(l, (pid_t)c) == 0)
				added++;
		}
		free(text);
	}
	closedir(d);
	return added;
}

/***
Kill a process and all its descendants, or, given the caller's own
PID, all the caller's descendants (then reaped: they are its children
or, in a `child_subreaper`, became so). Each process is stopped (SIGSTOP)
and waited for until it is stopped before its children are listed
(`/proc/PID/task/TID/children`), top-down, so none can fork behind the
walk; the walk is repeated until it finds no new process; then every
process found gets SIGKILL. The caller reaps `pid` itself (it is its
child), not the others (they are not). Only the caller's own tree: a PID
that is neither the caller's nor one of its children's is refused
(ECHILD), before any signal.
@function kill_tree
@tparam int pid the caller's PID or a child's
@treturn[1] int how many processes were killed
@return[2] nil
@treturn[2] string "kill_tree: strerror (ENAME)"
@treturn[2] int errno
@see prctl(2)
*/
static int lmns_proctree_kill_tree(lua_State *L)
{
	lua_Integer arg;
	pid_t root, me = getpid();
	struct lmns_pids l = { NULL, 0, 0 };
	size_t i;
	int self, pass;
	double deadline;
	lua_Integer killed = 0;

	lmns_checknomore(L, 1);
	arg = lmns_checkpid(L, 1);
	root = (pid_t)arg;
	self = root == me;
	/* only the caller's own tree: a PID that is not its child (PID 1, a
	 * sibling, a recycled number) would stop and kill processes it did not
	 * start. waitid looks without reaping; ECHILD: not a child */
	if (!self) {
		siginfo_t si;

		si.si_pid = 0;
		if (waitid(P_PID, (id_t)root, &si, WEXITED | WSTOPPED |
			   WCONTINUED | WNOHANG | WNOWAIT) != 0)
			return lmns_fail(L, errno, "kill_tree", NULL, NULL);
	}
	if (self) {
		siginfo_t si;

		/* the common case, at the end of every scenario: no child at
		 * all, in one system call (the walk costs ~100 us) */
		if (waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WCONTINUED | WNOHANG |
			   WNOWAIT) < 0 && errno == ECHILD) {
			lua_pushinteger(L, 0);
			return 1;
		}
	} else {
		kill(root, SIGSTOP);
	}
	/* a process that does not stop (in an uninterruptible sleep) holds
	 * the walk 5 s at most in all */
	deadline = lmns_now() + 5;
	if (lmns_pids_add(&l, root) != 0) {
		if (!self)
			kill(root, SIGKILL);
		return luaL_error(L, "kill_tree: out of memory");
	}
	/* each pass walks the whole list, top-down (a child is appended
	 * after its parent, so it is reached in the same pass); a process is
	 * stopped before its children are read, and once it is stopped its
	 * list is final (a fork that has not attached its child by then is
	 * cancelled by the pending signal). One more pass that finds nothing
	 * new ends it: a process that did not stop in time is read again. */
	for (pass = 0; pass < 100; pass++) {
		size_t before = l.n;

		for (i = 0; i < l.n; i++) {
			if (!(self && i == 0))
				lmns_wait_stopped(L, l.v[i], deadline);
			lmns_add_children(L, l.v[i], &l, 1);
		}
		if (l.n == before)
			break;
	}
	for (i = self ? 1 : 0; i < l.n; i++)
		if (kill(l.v[i], SIGKILL) == 0)
			killed++;
	if (self) {
		/* the caller's children: reaped (they are dying) */
		struct lmns_pids kids = { NULL, 0, 0 };

		lmns_add_children(L, me, &kids, 0);
		for (i = 0; i < kids.n; i++)
			while (waitpid(kids.v[i], NULL, 0) < 0 && errno == EINTR)
				;
		free(kids.v);
	}
	free(l.v);
	lua_pushinteger(L, killed);
	return 1;
}

/***
Make the calling process a child subreaper: an orphan among its
descendants becomes its child instead of PID 1's, so `kill_tree` of
this process finds it.
@function child_subreaper
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "prctl PR_SET_CHILD_SUBREAPER: strerror (ENAME)"
@treturn[2] int errno
@see prctl(2)
*/
static int lmns_proctree_child_subreaper(lua_State *L)
{
	lmns_checknomore(L, 0);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		return lmns_fail(L, errno, "prctl PR_SET_CHILD_SUBREAPER", NULL, NULL);
	lua_pushboolean(L, 1);
	return 1;
}

void lmns_proctree_open(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{ "kill_tree", lmns_proctree_kill_tree },
		{ "child_subreaper", lmns_proctree_child_subreaper },
		{ NULL, NULL }
	};

	luaL_setfuncs(L, funcs, 0);
}
