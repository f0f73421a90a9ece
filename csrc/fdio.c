/*
 * fdio.c - file descriptor I/O between a process and its children: pipes
 * and socket pairs, dup2, a write that a vanished reader cannot turn into
 * SIGPIPE (lmns_write_all, also frame.c's), and reads bounded by a
 * deadline (read_all, read_exact for framed messages, read_outputs for a
 * child's stdout and stderr at once).
 *
 * They stay thin: what the bytes mean (frames, results, timeouts) is
 * decided by lua/mountns/child.lua and frame.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lmns.h"

/***
@module mountns.core
*/

/***
File descriptors: pipes, writes and bounded reads
@section fdio
*/

/***
A pipe, both ends close-on-exec.
@function pipe
@treturn[1] int the read end
@treturn[1] int the write end
@return[2] nil
@treturn[2] string "pipe: strerror (ENAME)"
@treturn[2] int errno
@see pipe(2)
*/
static int lmns_fdio_pipe(lua_State *L)
{
	int fds[2];

	lmns_checknomore(L, 0);
	if (pipe2(fds, O_CLOEXEC) != 0)
		return lmns_fail(L, errno, "pipe", NULL, NULL);
	lua_pushinteger(L, fds[0]);
	lua_pushinteger(L, fds[1]);
	return 2;
}

/***
A connected pair of Unix stream sockets, both close-on-exec: a channel
both ways. `write_fd` on a socket needs one system call (`send` with
`MSG_NOSIGNAL`), on a pipe four; a round trip through two pipes still
costs less than through a socket (agents use pipes: measured in
`git show 17eacb7:bench/RESULTS.md`, "Agent calls and the lock probe").
@function socketpair
@treturn[1] int one end
@treturn[1] int the other end
@return[2] nil
@treturn[2] string "socketpair: strerror (ENAME)"
@treturn[2] int errno
@see socketpair(2)
*/
static int lmns_fdio_socketpair(lua_State *L)
{
	int fds[2];

	lmns_checknomore(L, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
		return lmns_fail(L, errno, "socketpair", NULL, NULL);
	lua_pushinteger(L, fds[0]);
	lua_pushinteger(L, fds[1]);
	return 2;
}

/***
Close an fd from `pipe`.
@function close_fd
@tparam int fd
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "close: strerror (ENAME)"
@treturn[2] int errno
*/
static int lmns_fdio_close(lua_State *L)
{
	int fd;

	lmns_checknomore(L, 1);
	fd = lmns_checkfd(L, 1);

	if (close(fd) != 0)
		return lmns_fail(L, errno, "close", NULL, NULL);
	lua_pushboolean(L, 1);
	return 1;
}

/***
Make newfd a copy of oldfd (closing newfd first), e.g. a child's stdout
(fd 1) into the write end of a pipe. The copy is not close-on-exec.
@function dup2
@tparam int oldfd
@tparam int newfd
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "dup2: strerror (ENAME)"
@treturn[2] int errno
@see dup2(2)
*/
static int lmns_fdio_dup2(lua_State *L)
{
	int oldfd, newfd;

	lmns_checknomore(L, 2);
	oldfd = lmns_checkfd(L, 1);
	newfd = lmns_checkfd(L, 2);
	if (dup2(oldfd, newfd) < 0)
		return lmns_fail(L, errno, "dup2", NULL, NULL);
	lua_pushboolean(L, 1);
	return 1;
}

/***
Write all of a string to an fd. A pipe whose reader is gone gives
`EPIPE` instead of killing the process with SIGPIPE, so a dead helper
process becomes an error the caller can report.
@function write_fd
@tparam int fd
@tparam string data
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "write: strerror (ENAME)"
@treturn[2] int errno
*/
/*
 * A socket is written with send(MSG_NOSIGNAL): no signal, one system call.
 * Anything else (a pipe: send fails with ENOTSOCK before writing): SIGPIPE
 * is blocked around the write and a SIGPIPE it raised is consumed before
 * the mask is restored (one already pending is left alone): the process's
 * disposition of SIGPIPE stays what the embedding program set. A SIGPIPE
 * that was not blocked cannot be pending (it would have been delivered),
 * so sigpending(2) is asked only when the caller had it blocked. An fd
 * send found not to be a socket is remembered and written without the
 * send next time (a hint only: the blocked write is right for any fd, a
 * socket reusing the number just skips MSG_NOSIGNAL's shortcut). In a
 * process that called ignore_sigpipe (an agent: no code of the user runs
 * there) a write is one write(2): EPIPE comes back without a signal.
 * An agent call's round trip: 7 system calls instead of 11.
 */
static unsigned char write_notsock[1024 / 8];
static int write_sigpipe_ignored;

int lmns_write_all(int fd, const char *s, size_t len)
{
	size_t off = 0;
	sigset_t pipe_set, old, pending;
	int err = 0, was_pending = 0;
	int hinted = fd >= 0 && fd < 1024 &&
		(write_notsock[fd / 8] & (1u << (fd % 8)));

	while (!write_sigpipe_ignored && !hinted && off < len) {
		ssize_t n = send(fd, s + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOTSOCK && off == 0) {
			if (fd >= 0 && fd < 1024)
				write_notsock[fd / 8] |= (unsigned char)(1u << (fd % 8));
			break;	/* not a socket: the write below */
		}
		if (n < 0)
			return errno;
		off += (size_t)n;
	}
	if (off == len && len > 0)
		return 0;
	if (!write_sigpipe_ignored) {
		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		sigprocmask(SIG_BLOCK, &pipe_set, &old);
		if (sigismember(&old, SIGPIPE)) {
			sigpending(&pending);
			was_pending = sigismember(&pending, SIGPIPE);
		}
	}
	while (off < len) {
		ssize_t n = write(fd, s + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			break;
		}
		off += (size_t)n;
	}
	if (write_sigpipe_ignored)
		return err;
	if (err == EPIPE && !was_pending) {
		struct timespec zero = { 0, 0 };

		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}

/***
Ignore SIGPIPE in this process (and the children it forks): a write to
a pipe whose reader is gone returns `EPIPE`, and `write_fd` and
`send_values` write with one system call instead of four. For a process
mountns runs alone (an agent), never one that runs the user's code or
programs (the disposition is inherited across exec).
@function ignore_sigpipe
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "sigaction: strerror (ENAME)"
@treturn[2] int errno
@see sigaction(2)
*/
static int lmns_fdio_ignore_sigpipe(lua_State *L)
{
	struct sigaction sa;

	lmns_checknomore(L, 0);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPIPE, &sa, NULL) != 0)
		return lmns_fail(L, errno, "sigaction", NULL, NULL);
	write_sigpipe_ignored = 1;
	lua_pushboolean(L, 1);
	return 1;
}

static int lmns_fdio_write(lua_State *L)
{
	int fd, err;
	size_t len;
	const char *s;

	lmns_checknomore(L, 2);
	fd = lmns_checkfd(L, 1);
	s = luaL_checklstring(L, 2, &len);
	err = lmns_write_all(fd, s, len);
	if (err)
		return lmns_fail(L, err, "write", NULL, NULL);
	lua_pushboolean(L, 1);
	return 1;
}

/*
 * One step of the bounded reads below: wait until fd is readable or the
 * deadline passes (timeout < 0: no limit), then read up to max bytes into
 * dst. A read interrupted (EINTR) or not ready (EAGAIN) waits again.
 * Returns the bytes read (> 0), 0 at end of file, READ_TIMEOUT, or
 * READ_FAILED with errno and *op ("poll", "read") saying why.
 */
#define READ_TIMEOUT (-1)
#define READ_FAILED (-2)

static ssize_t lmns_fdio_read_into(lua_State *L, char *dst, int fd,
				      size_t max, double timeout,
				      double deadline, const char **op)
{
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int rc = lmns_poll(L, &pfd, 1, lmns_left(timeout, deadline));
		ssize_t n;

		*op = "poll";
		if (rc == 0)
			return READ_TIMEOUT;
		if (rc > 0) {
			n = read(fd, dst, max);
			if (n >= 0)
				return n;
			if (errno == EINTR || errno == EAGAIN)
				continue;
			*op = "read";
		}
		return READ_FAILED;
	}
}

/* The same into b, LUAL_BUFFERSIZE at most; on READ_FAILED b is closed and
 * nil, "poll|read: strerror (ENAME)", errno are pushed (3 values). */
static ssize_t lmns_fdio_read_step(lua_State *L, luaL_Buffer *b, int fd,
				      size_t max, double timeout,
				      double deadline)
{
	const char *op;
	ssize_t n = lmns_fdio_read_into(L, luaL_prepbuffer(b), fd,
					   max < LUAL_BUFFERSIZE ? max :
					   LUAL_BUFFERSIZE, timeout, deadline,
					   &op);

	if (n >= 0) {
		luaL_addsize(b, (size_t)n);
	} else if (n == READ_FAILED) {
		int err = errno;

		luaL_pushresult(b);
		lmns_fail(L, err, op, NULL, NULL);
	}
	return n;
}

/***
Read an fd until end of file, or until max bytes are in.
@function read_all
@tparam int fd
@tparam[opt] number timeout seconds; absent or negative: no limit
@tparam[opt] int max stop once at least this many bytes are read (a writer
faster than the reader cannot make one call read for ever)
@treturn[1] string the data
@return[2] nil
@treturn[2] string "timeout" or "max"
@treturn[2] string the data read so far
*/
/*
 * read_all(fd, [timeout_s], [max]) -> data | nil, "timeout"|"max", data
 * Reads until EOF; a negative or absent timeout waits for ever.
 */
static int lmns_fdio_read_all(lua_State *L)
{
	int fd;
	double timeout, deadline;
	size_t max, got = 0;
	ssize_t n;
	luaL_Buffer b;

	lmns_checknomore(L, 3);
	fd = lmns_checkfd(L, 1);
	timeout = lmns_opttimeout(L, 2);
	max = (size_t)lmns_optcount(L, 3, INT_MAX, INT_MAX);
	deadline = lmns_now() + timeout;
	luaL_buffinit(L, &b);
	while (got < max && (n = lmns_fdio_read_step(L, &b, fd,
			LUAL_BUFFERSIZE, timeout, deadline)) > 0)
		got += (size_t)n;
	if (got >= max) {
		luaL_pushresult(&b);
		lua_pushnil(L);
		lua_pushliteral(L, "max");
		lua_pushvalue(L, -3);
		return 3;
	}
	if (n == READ_FAILED)
		return 3;
	luaL_pushresult(&b);
	if (n == READ_TIMEOUT) {
		lua_pushnil(L);
		lua_pushliteral(L, "timeout");
		lua_pushvalue(L, -3);
		return 3;
	}
	return 1;
}

/***
Read exactly n bytes from an fd.
@function read_exact
@tparam int fd
@tparam int n
@tparam[opt] number timeout seconds for the whole read; absent or
negative: no limit
@treturn[1] string n bytes
@return[2] nil
@treturn[2] string "eof": the writer closed first; "timeout"
*/
/*
 * read_exact(fd, n, [timeout_s]) -> n bytes | nil, "eof" | nil, "timeout"
 * For framed messages between a process and its children.
 */
static int lmns_fdio_read_exact(lua_State *L)
{
	int fd;
	lua_Integer n;
	double timeout, deadline;
	size_t want, got = 0;
	ssize_t r = 1;
	const char *op = "read";
	char small[256], *buf = small;

	lmns_checknomore(L, 3);
	fd = lmns_checkfd(L, 1);
	n = luaL_checkinteger(L, 2);
	timeout = lmns_opttimeout(L, 3);
	deadline = lmns_now() + timeout;
	/* the body's block is allocated before the read: a length no
	 * frame can have (mountns.child.MAX_BYTES is 64 MiB) is refused as an
	 * argument, not met as a failed allocation */
	luaL_argcheck(L, n >= 0 && n <= INT_MAX, 2,
		      "a length from 0 to 2^31-1 expected");
	want = (size_t)n;
	/* a frame's body is read whole into one block of its size, then
	 * copied once into its string: the caller's peak is twice the body
	 * (a luaL_Buffer grows by doubling and copying: 2-5 times) */
	if (want > sizeof small)
		buf = lua_newuserdata(L, want);
	while (got < want && (r = lmns_fdio_read_into(L, buf + got, fd,
							 want - got, timeout,
							 deadline, &op)) > 0)
		got += (size_t)r;
	if (r == READ_FAILED)
		return lmns_fail(L, errno, op, NULL, NULL);
	if (got == want) {
		lua_pushlstring(L, buf, want);
		return 1;
	}
	lua_pushnil(L);
	if (r == READ_TIMEOUT)
		lua_pushliteral(L, "timeout");
	else
		lua_pushliteral(L, "eof");
	return 2;
}

/***
Read two fds until end of file on both, at the same time (a child's
stdout and stderr: reading one to its end first would deadlock once the
child filled the other pipe).
@function read_outputs
@tparam int fd1
@tparam int fd2
@tparam[opt] number timeout seconds; absent or negative: no limit
@treturn[1] string what fd1 gave
@treturn[1] string what fd2 gave
@return[2] nil
@treturn[2] string "timeout"
@treturn[2] string what fd1 gave so far
@treturn[2] string what fd2 gave so far
*/
static int lmns_fdio_read_outputs(lua_State *L)
{
	int fds[2], open[2] = { 1, 1 }, i;
	double timeout, deadline;
	char buf[8192];

	lmns_checknomore(L, 3);
	fds[0] = lmns_checkfd(L, 1);
	fds[1] = lmns_checkfd(L, 2);
	timeout = lmns_opttimeout(L, 3);
	deadline = lmns_now() + timeout;
	lua_settop(L, 3);
	lua_pushliteral(L, "");	/* 4: fd1's data */
	lua_pushliteral(L, "");	/* 5: fd2's data */
	while (open[0] || open[1]) {
		struct pollfd pfd[2];
		int rc;

		for (i = 0; i < 2; i++) {
			pfd[i].fd = open[i] ? fds[i] : -1;
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		rc = lmns_poll(L, pfd, 2, lmns_left(timeout, deadline));
		if (rc < 0)
			return lmns_fail(L, errno, "poll", NULL, NULL);
		if (rc == 0) {
			lua_pushnil(L);
			lua_pushliteral(L, "timeout");
			lua_pushvalue(L, 4);
			lua_pushvalue(L, 5);
			return 4;
		}
		for (i = 0; i < 2; i++) {
			ssize_t n;

			if (!open[i] || !pfd[i].revents)
				continue;
			n = read(fds[i], buf, sizeof buf);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n < 0)
				return lmns_fail(L, errno, "read", NULL, NULL);
			if (n == 0) {
				open[i] = 0;
				continue;
			}
			/* appending: quadratic only in the number of reads, each
			 * up to 8 KiB, as the outputs of tools are small */
			lua_pushvalue(L, 4 + i);
			lua_pushlstring(L, buf, (size_t)n);
			lua_concat(L, 2);
			lua_replace(L, 4 + i);
		}
	}
	return 2;
}

void lmns_fdio_open(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{ "pipe", lmns_fdio_pipe },
		{ "socketpair", lmns_fdio_socketpair },
		{ "close_fd", lmns_fdio_close },
		{ "write_fd", lmns_fdio_write },
		{ "ignore_sigpipe", lmns_fdio_ignore_sigpipe },
		{ "dup2", lmns_fdio_dup2 },
		{ "read_all", lmns_fdio_read_all },
		{ "read_exact", lmns_fdio_read_exact },
		{ "read_outputs", lmns_fdio_read_outputs },
		{ NULL, NULL }
	};

	luaL_setfuncs(L, funcs, 0);
}
