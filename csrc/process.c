/*
 * process.c - the process primitives isolate() and scenarios are built on:
 * fork with a parent-death signal, execvp, waitpid, kill, _exit and
 * signalfd (a runner that turns Ctrl-C into an orderly stop). The pipes
 * and reads between a process and its children are fdio.c's.
 *
 * They stay thin: the policy (serialising results, timeouts, reporting)
 * is Lua code in lua/mountns/isolate.lua.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "lmns.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/***
@module mountns.core
*/

/***
Processes: the primitives of isolate and scenarios
@section process
*/

/***
Fork. The child is killed (SIGKILL) when its parent dies; C stdio
buffers are flushed first so the child does not repeat pending output.
@function fork
@treturn[1] int the child's PID in the parent, 0 in the child
@return[2] nil
@treturn[2] string "fork: strerror (ENAME)"
@treturn[2] int errno
@see fork(2)
*/
/*
 * fork() - C stdio buffers (Lua's io.stdout among them) are flushed first so
 * the child does not print the parent's pending output a second time. The
 * child gets SIGKILL when its parent dies, so no scenario outlives its test.
 */
#define LMNS_CHILD_STACK 1000	/* slots: 16 KB */

static int lmns_process_fork(lua_State *L)
{
	pid_t parent = getpid(), pid;

	lmns_checknomore(L, 0);
	fflush(NULL);
	lmns_libmount_preload();	/* once: no child loads it after a pivot */
	/* stack room for the child's calls, made here: a stack grown in the
	 * child is copied whole and every frame's pointers into it are
	 * rewritten (the parent's frames too: pages it shares with the
	 * parent, a copy-on-write fault each); the parent's collector
	 * shrinks it back when it is idle */
	lua_checkstack(L, LMNS_CHILD_STACK);
	pid = fork();
	if (pid < 0)
		return lmns_fail(L, errno, "fork", NULL, NULL);
	if (pid == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 ||
		    getppid() != parent)	/* parent died before prctl */
			_exit(127);
	}
	lua_pushinteger(L, pid);
	return 1;
}

/* The list of "NAME=value" strings at index idx as a NULL-terminated
 * array (a userdata on the stack: freed by the GC if a check raises). */
static const char **lmns_execvp_env(lua_State *L, int idx)
{
	int n, i;
	const char **envp;

	if (!lua_istable(L, idx))
		luaL_argerror(L, 2, "option 'env': a list of \"NAME=value\" strings expected");
	n = (int)lua_rawlen(L, idx);
	envp = lua_newuserdata(L, sizeof *envp * ((size_t)n + 1));
	for (i = 1; i <= n; i++) {
		size_t len;
		const char *e;

		lua_rawgeti(L, idx, i);
		e = lua_tolstring(L, -1, &len);
		if (lua_type(L, -1) != LUA_TSTRING || strlen(e) != len || !strchr(e, '='))
			luaL_argerror(L, 2, lua_pushfstring(L,
				"option 'env': [%d]: a \"NAME=value\" string expected", i));
		envp[i - 1] = e;	/* kept alive by the table */
		lua_pop(L, 1);
	}
	envp[n] = NULL;
	return envp;
}

/***
Replace the process with a program, like execvp(3): a name without a `/`
is looked up in `PATH`. Only fds 0, 1 and 2 reach the program: every
other fd is closed on exec. Only returns on failure.
@function execvp
@tparam table argv the program and its arguments, strings (`argv[1]` is
the program)
@tparam[opt] table fds `stdin`, `stdout`, `stderr`: fds put at 0, 1 and 2
first (dup2); `env`: the program's whole environment, a list of
`"NAME=value"` strings, also the `PATH` the program is looked up in
(default: this process's environment)
@return nil
@treturn string "execvp PROGRAM: strerror (ENAME)"
@treturn int errno
@see execvp(3)
*/
static int lmns_process_execvp(lua_State *L)
{
	static const char *const keys[] = { "stdin", "stdout", "stderr", "env", NULL };
	int n, i, fds[3] = { -1, -1, -1 };
	const char **argv, **envp = NULL;

	lmns_checknomore(L, 2);
	luaL_checktype(L, 1, LUA_TTABLE);
	n = (int)lua_rawlen(L, 1);
	if (n < 1)
		return luaL_argerror(L, 1, "a program name expected at [1]");
	if (!lua_isnoneornil(L, 2)) {
		lmns_checkkeys(L, 2, keys);
		for (i = 0; i < 3; i++) {
			lua_getfield(L, 2, keys[i]);
			if (!lua_isnil(L, -1)) {
				if (!lua_isnumber(L, -1))
					return luaL_argerror(L, 2, lua_pushfstring(L,
						"option '%s': an fd expected", keys[i]));
				fds[i] = (int)lua_tointeger(L, -1);
			}
			lua_pop(L, 1);
		}
	}
	/* userdata: freed by the GC if a check below raises */
	argv = lua_newuserdata(L, sizeof *argv * ((size_t)n + 1));
	for (i = 1; i <= n; i++) {
		size_t len;
		const char *a;

		lua_rawgeti(L, 1, i);
		a = lua_tolstring(L, -1, &len);
		if (!a || lua_type(L, -1) != LUA_TSTRING)
			return luaL_argerror(L, 1, lua_pushfstring(L,
				"argv[%d]: string expected, got %s", i,
				luaL_typename(L, -1)));
		if (strlen(a) != len)
			return luaL_argerror(L, 1, lua_pushfstring(L,
				"argv[%d]: embedded NUL byte", i));
		argv[i - 1] = a;	/* kept alive by the table argv */
		lua_pop(L, 1);
	}
	argv[n] = NULL;
	if (!lua_isnoneornil(L, 2)) {
		lua_getfield(L, 2, "env");
		if (!lua_isnil(L, -1))
			envp = lmns_execvp_env(L, lua_gettop(L));
	}
	for (i = 0; i < 3; i++)
		if (fds[i] >= 0 && fds[i] != i && dup2(fds[i], i) < 0)
			return lmns_fail(L, errno, "execvp: dup2", argv[0], NULL);
	/* only 0, 1 and 2 reach the program (dup2 left them inheritable) */
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
#endif
		for (i = 3; i < 1024; i++)
			fcntl(i, F_SETFD, FD_CLOEXEC);
	fflush(NULL);
	if (envp)
		environ = (char **)envp;	/* also execvp's PATH */
	execvp(argv[0], (char *const *)argv);
	return lmns_fail(L, errno, "execvp", argv[0], NULL);
}

/***
Wait for a child to end; with "nohang", reap it only if it has ended
(WNOHANG): a runner reaps a child whose result is in without waiting out
its exit (the teardown of its namespaces).
@function waitpid
@tparam int pid
@tparam[opt="block"] string how `block` (wait) or `nohang`
@treturn[1] string "exited"
@treturn[1] int the exit status
@treturn[2] string "killed"
@treturn[2] string the signal's name, e.g. "SIGKILL"
@treturn[2] int the signal number
@treturn[3] string "running" (`nohang`: the child has not ended; it is
not reaped)
@see waitpid(2)
*/
/*
 * waitpid(pid, [how]) -> "exited", status | "killed", "SIGNAME", signo
 *                      | "running" (how == "nohang")
 * Retries on EINTR so a signal to the parent cannot lose a child.
 */
static int lmns_process_waitpid(lua_State *L)
{
	static const char *const hows[] = { "block", "nohang", NULL };
	pid_t pid, got;
	int flags, status;

	lmns_checknomore(L, 2);
	pid = lmns_checkpid(L, 1);
	flags = lmns_checkoption(L, 2, "block", hows) == 1 ? WNOHANG : 0;

	while ((got = waitpid(pid, &status, flags)) < 0) {
		if (errno != EINTR)
			return lmns_fail(L, errno, "waitpid", NULL, NULL);
	}
	if (got == 0) {
		lua_pushliteral(L, "running");
		return 1;
	}
	if (WIFSIGNALED(status)) {
		const char *abbrev = sigabbrev_np(WTERMSIG(status));

		lua_pushliteral(L, "killed");
		lua_pushfstring(L, "SIG%s", abbrev ? abbrev : "?");
		lua_pushinteger(L, WTERMSIG(status));
		return 3;
	}
	lua_pushliteral(L, "exited");
	lua_pushinteger(L, WEXITSTATUS(status));
	return 2;
}

static const char *const signames[] = {
	"KILL", "TERM", "INT", "HUP", "USR1", "USR2", "STOP", "CONT", NULL
};
static const int signums[] = {
	SIGKILL, SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGSTOP, SIGCONT
};

/***
Send a signal to a process.
@function kill
@tparam int pid a positive PID
@tparam[opt="KILL"] string sig `KILL TERM INT HUP USR1 USR2 STOP CONT`
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "kill: strerror (ENAME)"
@treturn[2] int errno
@see kill(2)
*/
/* kill(pid, [sig="KILL"]) - only ever called with PIDs mountns started */
static int lmns_process_kill(lua_State *L)
{
	pid_t pid;
	int sig;

	lmns_checknomore(L, 2);
	pid = lmns_checkpid(L, 1);
	sig = signums[lmns_checkoption(L, 2, "KILL", signames)];
	if (kill(pid, sig) != 0)
		return lmns_fail(L, errno, "kill", NULL, NULL);
	lua_pushboolean(L, 1);
	return 1;
}

/***
Block a signal and return an fd that becomes readable when it arrives
(read it with `read_all(fd, 0)` to consume it). Children forked later
inherit the block, so the signal stays pending in them and does nothing:
the caller decides what it means (`mountns run` stops on SIGINT).
@function signalfd
@tparam string sig `INT TERM HUP USR1 USR2` (as in `kill`)
@treturn[1] int the fd (close-on-exec, non-blocking)
@return[2] nil
@treturn[2] string "signalfd SIGINT: strerror (ENAME)"
@treturn[2] int errno
@see signalfd(2)
*/
static int lmns_process_signalfd(lua_State *L)
{
	static const char *const names[] = {
		"INT", "TERM", "HUP", "USR1", "USR2", NULL
	};
	static const int nums[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 };
	int opt, fd;
	char what[16];
	sigset_t set;

	lmns_checknomore(L, 1);
	opt = lmns_checkoption(L, 1, NULL, names);

	snprintf(what, sizeof what, "SIG%s", names[opt]);
	sigemptyset(&set);
	sigaddset(&set, nums[opt]);
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return lmns_fail(L, errno, "signalfd", what, NULL);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0) {
		int err = errno;

		close(fd);
		return lmns_fail(L, err, "signalfd", what, NULL);
	}
	lua_pushinteger(L, fd);
	return 1;
}

/*
 * The process tree: a scenario's processes end with it.
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
child), not the others (they are not). Only for PIDs the caller started.
@function kill_tree
@tparam int pid a positive PID
@treturn int how many processes were killed
@see prctl(2)
*/
static int lmns_process_kill_tree(lua_State *L)
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
static int lmns_process_child_subreaper(lua_State *L)
{
	lmns_checknomore(L, 0);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		return lmns_fail(L, errno, "prctl PR_SET_CHILD_SUBREAPER", NULL, NULL);
	lua_pushboolean(L, 1);
	return 1;
}

/***
Give up every capability for good, in this process and the programs it
runs: the bounding set emptied (a program run as root gets none back),
the ambient set cleared, the permitted, effective and inheritable sets
emptied, and `no_new_privs` set (set-user-ID and file capabilities are
ignored). The user and group IDs stay. For a process that runs a tool
(`ns:exec`): it cannot remount, mount or bypass file permissions.
@function drop_capabilities
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "drop_capabilities: strerror (ENAME)"
@treturn[2] int errno
@see capabilities(7)
*/
static int lmns_process_drop_capabilities(lua_State *L)
{
	struct __user_cap_header_struct head = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	int cap;

	lmns_checknomore(L, 0);
	for (cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
			return lmns_fail(L, errno, "drop_capabilities", NULL, NULL);
	/* EINVAL: a kernel without ambient capabilities has none to clear */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 &&
	    errno != EINVAL)
		return lmns_fail(L, errno, "drop_capabilities", NULL, NULL);
	memset(data, 0, sizeof data);
	if (syscall(SYS_capset, &head, data) != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return lmns_fail(L, errno, "drop_capabilities", NULL, NULL);
	lua_pushboolean(L, 1);
	return 1;
}

/***
End the process at once (after flushing C stdio), without the atexit
handlers and Lua finalizers a forked child must not run twice.
@function _exit
@tparam[opt=0] int code the exit status
@see _exit(2)
*/
/* _exit(code) - leave a forked child without running the parent's atexit */
static int lmns_process_exit(lua_State *L)
{
	int code;

	lmns_checknomore(L, 1);
	code = (int)luaL_optinteger(L, 1, 0);
	fflush(NULL);
	_exit(code);
	return 0;
}

/***
The PID of the calling process.
@function getpid
@treturn int
*/
static int lmns_process_getpid(lua_State *L)
{
	lmns_checknomore(L, 0);
	lua_pushinteger(L, getpid());
	return 1;
}

/***
The real and effective user IDs.
@function getuid
@treturn int uid
@treturn int euid
*/
static int lmns_process_getuid(lua_State *L)
{
	lmns_checknomore(L, 0);
	lua_pushinteger(L, getuid());
	lua_pushinteger(L, geteuid());
	return 2;
}

/***
The number of open fds of this process, to catch fd leaks.
@function open_fds
@treturn[1] int
@return[2] nil
@treturn[2] string "open_fds /proc/self/fd: strerror (ENAME)"
@treturn[2] int errno
*/
/*
 * open_fds() - the number of open fds of this process, counted in
 * /proc/self/fd without forking (a child listing it races with the parent's
 * own pipe fds). The directory's own fd is not counted.
 */
static int lmns_process_open_fds(lua_State *L)
{
	int dfd;
	DIR *d;
	struct dirent *e;
	lua_Integer n = 0;

	lmns_checknomore(L, 0);
	dfd = lmns_procfs_openat(L, "self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		int err = errno;

		if (dfd >= 0)
			close(dfd);
		return lmns_fail(L, err, "open_fds", "/proc/self/fd", NULL);
	}
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	lua_pushinteger(L, n - 1);
	return 1;
}

/***
Flush C's stdout (Lua's `io.stdout`, where `print` writes) if it holds
output not written yet, else do nothing. A scenario's child calls this
before it sends its result: what it printed goes first. Asking stdio
(`__fpending`, a read of the stream) instead of flushing an empty stream
spares a child the stream's lock and the interpreter's lazy binding of
`fflush`, each a page written or mapped in a fresh process (about ten
page faults).
@function flush_stdout
@treturn boolean true: there was output, flushed (or fflush failed: the
stream's error stays set, as io.stdout:flush() leaves it); false: none
*/
static int lmns_process_flush_stdout(lua_State *L)
{
	int pending = __fpending(stdout) > 0;

	lmns_checknomore(L, 0);
	if (pending)
		fflush(stdout);
	lua_pushboolean(L, pending);
	return 1;
}

/***
Seconds on the monotonic clock, for timing.
@function clock
@treturn number
*/
static int lmns_process_clock(lua_State *L)
{
	lmns_checknomore(L, 0);
	lua_pushnumber(L, lmns_now());
	return 1;
}

void lmns_process_open(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{ "fork", lmns_process_fork },
		{ "signalfd", lmns_process_signalfd },
		{ "execvp", lmns_process_execvp },
		{ "waitpid", lmns_process_waitpid },
		{ "kill", lmns_process_kill },
		{ "kill_tree", lmns_process_kill_tree },
		{ "child_subreaper", lmns_process_child_subreaper },
		{ "drop_capabilities", lmns_process_drop_capabilities },
		{ "_exit", lmns_process_exit },
		{ "getpid", lmns_process_getpid },
		{ "getuid", lmns_process_getuid },
		{ "clock", lmns_process_clock },
		{ "flush_stdout", lmns_process_flush_stdout },
		{ "open_fds", lmns_process_open_fds },
		{ NULL, NULL }
	};

	luaL_setfuncs(L, funcs, 0);
}
