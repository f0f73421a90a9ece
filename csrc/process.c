/*
 * process.c - the process primitives isolate() and scenarios are built on:
 * fork with a parent-death signal, execvp, waitpid, kill, _exit and
 * signalfd (a runner that turns Ctrl-C into an orderly stop). The pipes
 * and reads between a process and its children are fdio.c's, the end of
 * a process's whole tree (kill_tree) proctree.c's.
 *
 * They stay thin: the policy (serialising results, timeouts, reporting)
 * is Lua code in lua/mountns/isolate.lua.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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
its exit (the teardown of its namespaces). With a timeout, `block` waits
that long at most (a pidfd polled: the standalone interpreters' Ctrl-C
ends the wait, as it ends `read_exact`'s), so a parent bounds the wait
for a child that does not end.
@function waitpid
@tparam int pid
@tparam[opt="block"] string how `block` (wait) or `nohang`
@tparam[opt] number timeout seconds (`block` only); absent or negative:
no limit
@treturn[1] string "exited"
@treturn[1] int the exit status
@treturn[2] string "killed"
@treturn[2] string the signal's name, e.g. "SIGKILL"
@treturn[2] int the signal number
@treturn[3] string "running" (`nohang`, or the timeout passed: the child
has not ended; it is not reaped)
@return[4] nil
@treturn[4] string "waitpid: strerror (ENAME)" (EINTR: Ctrl-C in the
standalone interpreter during a timed wait)
@treturn[4] int errno
@see waitpid(2)
*/
/*
 * The timed wait: until pid's pidfd is readable (it has ended) or the
 * timeout passes. Returns 1 ended, 0 timeout, -1 with errno. Without a
 * pidfd (no pidfd_open, or no fd left: EMFILE) it polls the child with
 * WNOHANG, sleeping 1 ms doubling to 50 ms between looks.
 */
static int lmns_process_wait_ended(lua_State *L, pid_t pid, double timeout)
{
	double deadline = lmns_now() + timeout, tick = 0.001;
	siginfo_t si;
	int fd, rc;

	/* ended already, or not a child (ECHILD: waitpid says so): no pidfd */
	si.si_pid = 0;
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 ||
	    si.si_pid != 0)
		return 1;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0) {
		struct pollfd pfd = { fd, POLLIN, 0 };

		rc = lmns_poll(L, &pfd, 1, timeout);
		if (rc < 0) {
			int err = errno;

			close(fd);
			errno = err;
			return -1;
		}
		close(fd);
		return rc > 0;
	}
	for (;;) {
		double left = deadline - lmns_now();

		si.si_pid = 0;	/* WNOWAIT: looked at, not reaped */
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
			return 1;	/* not a child (ECHILD): waitpid says so */
		if (si.si_pid != 0)
			return 1;
		if (left <= 0)
			return 0;
		if (lmns_poll(L, NULL, 0, tick < left ? tick : left) < 0)
			return -1;
		tick = tick * 2 < 0.05 ? tick * 2 : 0.05;
	}
}
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
	double timeout;

	lmns_checknomore(L, 3);
	pid = lmns_checkpid(L, 1);
	flags = lmns_checkoption(L, 2, "block", hows) == 1 ? WNOHANG : 0;
	timeout = lmns_opttimeout(L, 3);

	luaL_argcheck(L, timeout < 0 || flags == 0, 3, "a timeout goes with 'block'");
	if (timeout >= 0) {
		int ended = lmns_process_wait_ended(L, pid, timeout);

		if (ended < 0)
			return lmns_fail(L, errno, "waitpid", NULL, NULL);
		if (!ended) {
			lua_pushliteral(L, "running");
			return 1;
		}
		/* it has ended: the blocking wait below returns at once */
	}
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
