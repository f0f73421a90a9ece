/*
 * watch.c - live mount events: fanotify mount marks (Linux 6.15+) and the
 * POLLPRI signal of a mountinfo file (every kernel).
 *
 * fanotify reports FAN_MNT_ATTACH and FAN_MNT_DETACH for each mount that
 * enters or leaves one mount namespace, propagated copies included, with
 * the mount's 64-bit unique ID and nothing else: the Lua side keeps the
 * records to describe a detach. It says nothing of remounts or propagation
 * changes. Those only bump the namespace's event counter, which a poll()
 * on an open mountinfo file sees as POLLPRI|POLLERR; on older kernels that
 * signal is all there is (mountns.watch re-reads and diffs the table).
 *
 * A mountinfo file is bound to the namespace its opener was in at open(),
 * not to the one the process is in later: a scenario process that moves
 * between namespaces with setns keeps watching the right one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include "lmns.h"
#include "uapi.h"

/***
@module mountns.core
*/

/***
Live mount events
@section watch
*/

#define WATCH_MT "mountns.watch"
#define POLLER_MT "mountns.poller"

typedef struct lmns_watch {
	lmns_handle h;		/* h.fd: the fanotify group */
	unsigned long long ino;	/* the watched namespace, for __tostring */
} lmns_watch;

typedef struct lmns_poller {
	lmns_handle h;		/* h.fd: an open mountinfo file */
	long pid;		/* whose mountinfo it is, 0: the opener's */
} lmns_poller;

static void lmns_watch_name(lua_State *L, const lmns_handle *h)
{
	char buf[80];

	snprintf(buf, sizeof buf, "fanotify watch of mnt:[%llu]%s",
		 ((const lmns_watch *)h)->ino, h->fd < 0 ? " (closed)" : "");
	lua_pushstring(L, buf);
}

static void lmns_poller_name(lua_State *L, const lmns_handle *h)
{
	long pid = ((const lmns_poller *)h)->pid;
	char buf[80];

	if (pid)
		snprintf(buf, sizeof buf, "mountinfo poller of PID %ld%s",
			 pid, h->fd < 0 ? " (closed)" : "");
	else
		snprintf(buf, sizeof buf, "mountinfo poller%s",
			 h->fd < 0 ? " (closed)" : "");
	lua_pushstring(L, buf);
}

static const lmns_class watch_class = {
	WATCH_MT, "watch", sizeof(lmns_watch), lmns_watch_name
};
static const lmns_class poller_class = {
	POLLER_MT, "poller", sizeof(lmns_poller), lmns_poller_name
};

/* ---- fanotify mount watch ---------------------------------------------- */

/***
A watch on the mounts attached to and detached from
a mount namespace (a handle from mountns.namespace()). Needs
CAP_SYS_ADMIN over the namespace's user namespace.
@function fanotify_mounts
@treturn[1] userdata the watch: read, fileno, close
@return[2] nil
@treturn[2] string "fanotify_init FAN_REPORT_MNT: Function not implemented
(ENOSYS): needs Linux 6.15" on kernels before 6.15 (use the fallback)
@treturn[2] integer errno
@see fanotify_init(2), fanotify_mark(2)
*/
static int lmns_watch_fanotify(lua_State *L)
{
	lmns_ns *ns;
	lmns_watch *w;
	int fd, err;

	lmns_checknomore(L, 1);
	ns = lmns_ns_checkarg(L, 1, "mnt");

	/* the handle exists, closed, before the group does: no leak */
	w = lmns_handle_new(L, &watch_class);
	w->ino = ns->ino;
	fd = fanotify_init(FAN_REPORT_MNT | FAN_CLOEXEC | FAN_NONBLOCK,
			   O_RDONLY);
	if (fd < 0) {
		/* before 6.15 the flag is unknown (EINVAL): the call is
		 * missing, as its ENOSYS message says (with the release) */
		err = errno == EINVAL ? ENOSYS : errno;
		return lmns_fail(L, err, "fanotify_init FAN_REPORT_MNT", NULL,
				 NULL);
	}
	if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MNTNS,
			  FAN_MNT_ATTACH | FAN_MNT_DETACH, ns->h.fd, NULL) != 0) {
		err = errno;
		close(fd);
		lmns_handle_pushname(L, &ns->h);
		return lmns_fail(L, err, "fanotify_mark", lua_tostring(L, -1),
				 NULL);
	}
	w->h.fd = fd;
	return 1;
}

/* Push one event {kind =, unique_id =} onto the list at the stack top. */
static void lmns_watch_push_event(lua_State *L, const char *kind,
				  const uint64_t *id)
{
	lua_createtable(L, 0, 2);
	lua_pushstring(L, kind);
	lua_setfield(L, -2, "kind");
	if (id) {
		lmns_pushid(L, *id);
		lua_setfield(L, -2, "unique_id");
	}
	lua_rawseti(L, -2, (int)lua_rawlen(L, -2) + 1);
}

/* Add the events of one read() buffer to the list at the stack top. */
static void lmns_watch_parse(lua_State *L, const char *buf, size_t len)
{
	while (len >= sizeof(struct fanotify_event_metadata)) {
		struct fanotify_event_metadata md;
		size_t off;
		uint64_t id = 0;
		int have_id = 0;

		memcpy(&md, buf, sizeof md);
		if (md.event_len < sizeof md || md.event_len > len)
			break;	/* cannot happen with a whole read */
		for (off = md.metadata_len; off + 4 <= md.event_len;) {
			struct lmns_fan_info_mnt info;

			memset(&info, 0, sizeof info);
			memcpy(&info, buf + off, md.event_len - off <
			       sizeof info ? md.event_len - off : sizeof info);
			if (info.len < 4)
				break;
			if (info.info_type == FAN_EVENT_INFO_TYPE_MNT &&
			    info.len >= sizeof info) {
				id = info.mnt_id;
				have_id = 1;
			}
			off += info.len;
		}
		if (md.mask & FAN_Q_OVERFLOW)
			lmns_watch_push_event(L, "overflow", NULL);
		else if ((md.mask & FAN_MNT_ATTACH) &&
			 (md.mask & FAN_MNT_DETACH))
			lmns_watch_push_event(L, "move", have_id ? &id : NULL);
		else if (md.mask & FAN_MNT_ATTACH)
			lmns_watch_push_event(L, "attach", have_id ? &id : NULL);
		else if (md.mask & FAN_MNT_DETACH)
			lmns_watch_push_event(L, "detach", have_id ? &id : NULL);
		buf += md.event_len;
		len -= md.event_len;
	}
}

/*
 * watch:read([timeout_s]) - the events queued, after waiting up to
 * timeout_s (nil: for ever; 0: do not wait) for the first one.
 * @treturn[1] table list of {kind = "attach"|"detach"|"move"|"overflow",
 * unique_id = N} in the kernel's order; empty on timeout. "move" is one
 * mount moved inside the namespace; "overflow" means events were lost.
 * @return[2] nil, message, errno
 */
static int lmns_watch_read(lua_State *L)
{
	lmns_watch *w;
	double timeout;
	struct pollfd pfd;
	union {
		struct fanotify_event_metadata md;	/* for alignment */
		char b[8192];
	} buf;

	lmns_checknomore(L, 2);
	w = lmns_handle_checkopen(L, 1, &watch_class);
	timeout = lmns_opttimeout(L, 2);
	pfd.fd = w->h.fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (lmns_poll(L, &pfd, 1, timeout) < 0)
		return lmns_fail(L, errno, "poll", "fanotify", NULL);
	lua_newtable(L);
	for (;;) {
		ssize_t n = read(w->h.fd, buf.b, sizeof buf.b);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;	/* drained: the group is non-blocking */
		if (n < 0) {
			int err = errno;

			if (lua_rawlen(L, -1) > 0)
				break;	/* keep what was read */
			return lmns_fail(L, err, "read", "fanotify", NULL);
		}
		if (n == 0)
			break;
		lmns_watch_parse(L, buf.b, (size_t)n);
	}
	return 1;
}

/***
Open /proc/PID/mountinfo (default: the
caller's, in the namespace the caller is in now) to wait for changes of
that namespace: mounts, unmounts, remounts, propagation changes. The
open file keeps the namespace alive, as an nsfs handle does.
@function mountinfo_poller
@treturn[1] userdata the poller: wait, fileno, close
@return[2] nil, "mountinfo_poller /proc/PID/mountinfo: ...", errno
*/
static int lmns_poller_open(lua_State *L)
{
	char path[64];
	lmns_poller *p;
	long pid = 0;

	lmns_checknomore(L, 1);
	if (!lua_isnoneornil(L, 1)) {
		pid = lmns_checkpid(L, 1);
		snprintf(path, sizeof path, "%ld/mountinfo", pid);
	} else {
		snprintf(path, sizeof path, "self/mountinfo");
	}
	p = lmns_handle_new(L, &poller_class);
	p->pid = pid;
	p->h.fd = lmns_procfs_openat(L, path, O_RDONLY | O_CLOEXEC);
	if (p->h.fd < 0) {
		int err = errno;

		lua_pushfstring(L, "/proc/%s", path);
		return lmns_fail(L, err, "mountinfo_poller",
				 lua_tostring(L, -1), NULL);
	}
	return 1;
}

/* Whether the pollfd of a poller saw the namespace change. */
static int lmns_poller_changed(const struct pollfd *pfd)
{
	return (pfd->revents & (POLLPRI | POLLERR)) != 0;
}

/*
 * poller:wait([timeout_s]) - wait until the namespace changes.
 * Each change is reported once: the kernel compares the namespace's event
 * counter with the one the file saw at its last poll.
 * @treturn[1] boolean true: changed since the last wait (or the open);
 * false: timeout
 * @return[2] nil, message, errno
 */
static int lmns_poller_wait(lua_State *L)
{
	lmns_poller *p;
	double timeout;
	struct pollfd pfd;
	int rc;

	lmns_checknomore(L, 2);
	p = lmns_handle_checkopen(L, 1, &poller_class);
	timeout = lmns_opttimeout(L, 2);

	pfd.fd = p->h.fd;
	pfd.events = POLLPRI;
	pfd.revents = 0;
	rc = lmns_poll(L, &pfd, 1, timeout);
	if (rc < 0)
		return lmns_fail(L, errno, "poll", "mountinfo", NULL);
	lua_pushboolean(L, rc > 0 && lmns_poller_changed(&pfd));
	return 1;
}

/* ---- waiting on several ------------------------------------------------- */

/***
Wait until one of the watches, pollers or fds
has something, or timeout_s passes (nil: for ever).
@function wait_any
@tparam[opt] number timeout_s
@param ... watches, pollers, or integer fds (from `pipe`, `signalfd`): an
fd is ready when it can be read or its writers are gone
@treturn[1] boolean ... one per object: true if it is ready. A poller
that is reported ready has been consumed: its next wait() waits for the
next change.
@return[2] nil, message, errno
*/
static int lmns_watch_wait_any(lua_State *L)
{
	/* the objects are the arguments after the timeout: no extra one */
	double timeout = lmns_opttimeout(L, 1);
	int n = lua_gettop(L) - 1, i;
	struct pollfd *pfd;

	luaL_argcheck(L, n >= 1, 2, "a watch, poller or fd expected");
	pfd = lua_newuserdata(L, (size_t)n * sizeof *pfd);
	for (i = 0; i < n; i++) {
		if (luaL_testudata(L, i + 2, WATCH_MT)) {
			pfd[i].fd = ((lmns_handle *)lmns_handle_checkopen(L,
				     i + 2, &watch_class))->fd;
			pfd[i].events = POLLIN;
		} else if (lua_type(L, i + 2) == LUA_TNUMBER) {
			pfd[i].fd = lmns_checkfd(L, i + 2);
			pfd[i].events = POLLIN;
		} else if (luaL_testudata(L, i + 2, POLLER_MT)) {
			pfd[i].fd = ((lmns_handle *)lmns_handle_checkopen(L,
				     i + 2, &poller_class))->fd;
			pfd[i].events = POLLPRI;
		} else {
			return luaL_argerror(L, i + 2, lua_pushfstring(L,
				"watch, poller or fd expected, got %s",
				luaL_typename(L, i + 2)));
		}
		pfd[i].revents = 0;
	}
	if (lmns_poll(L, pfd, (nfds_t)n, timeout) < 0)
		return lmns_fail(L, errno, "poll", NULL, NULL);
	luaL_checkstack(L, n, "too many objects");
	for (i = 0; i < n; i++)
		lua_pushboolean(L, pfd[i].events == POLLIN ?
				(pfd[i].revents &
				 (POLLIN | POLLERR | POLLHUP | POLLNVAL)) != 0 :
				lmns_poller_changed(&pfd[i]));
	return n;
}

void lmns_watch_open(lua_State *L)
{
	static const luaL_Reg watch_methods[] = {
		{ "read", lmns_watch_read },
		{ NULL, NULL }
	};
	static const luaL_Reg poller_methods[] = {
		{ "wait", lmns_poller_wait },
		{ NULL, NULL }
	};
	static const luaL_Reg meta[] = {
		{ "__eq", lmns_handle_same },
		{ NULL, NULL }
	};
	static const luaL_Reg funcs[] = {
		{ "fanotify_mounts", lmns_watch_fanotify },
		{ "mountinfo_poller", lmns_poller_open },
		{ "wait_any", lmns_watch_wait_any },
		{ NULL, NULL }
	};

	lmns_handle_newclass(L, &watch_class, watch_methods, meta);
	lmns_handle_newclass(L, &poller_class, poller_methods, meta);
	luaL_setfuncs(L, funcs, 0);
}
