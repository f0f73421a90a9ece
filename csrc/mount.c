/*
 * mount.c - mount(2), umount2(2), propagation and pivot_root(2); the
 * filesystem calls scenario code needs between them are files.c's.
 *
 * Each function binds one mount(8) verb to one system call, so a failure
 * names exactly the operation and path(s) that failed; policy lives in Lua.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lmns.h"
#include "uapi.h"

/*
 * mount(8) option names; the "positive" forms are 0: the default of
 * mount(2). The propagation names and bind/rbind/move/remount are passed
 * as given, so {"shared", "private"} reaches mount(2) as
 * MS_SHARED|MS_PRIVATE and the kernel's EINVAL for it can be seen. The
 * terminator's value LMNS_FLAGS_RAW: integers (the mountns.MS constants)
 * are accepted too, as raw bits.
 */
static const lmns_flag mount_flags[] = {
	{ "ro", MS_RDONLY },		{ "rw", 0 },
	{ "nosuid", MS_NOSUID },	{ "suid", 0 },
	{ "nodev", MS_NODEV },		{ "dev", 0 },
	{ "noexec", MS_NOEXEC },	{ "exec", 0 },
	{ "sync", MS_SYNCHRONOUS },	{ "async", 0 },
	{ "dirsync", MS_DIRSYNC },
	{ "mand", MS_MANDLOCK },	{ "nomand", 0 },
	{ "silent", MS_SILENT },	{ "loud", 0 },
	{ "relatime", MS_RELATIME },	{ "norelatime", 0 },
	{ "noatime", MS_NOATIME },	{ "atime", 0 },
	{ "strictatime", MS_STRICTATIME },
	{ "nodiratime", MS_NODIRATIME }, { "diratime", 0 },
	{ "lazytime", MS_LAZYTIME },	{ "nolazytime", 0 },
	{ "nosymfollow", MS_NOSYMFOLLOW }, { "symfollow", 0 },
	{ "shared", MS_SHARED },	{ "rshared", MS_SHARED | MS_REC },
	{ "private", MS_PRIVATE },	{ "rprivate", MS_PRIVATE | MS_REC },
	{ "slave", MS_SLAVE },		{ "rslave", MS_SLAVE | MS_REC },
	{ "unbindable", MS_UNBINDABLE },
	{ "runbindable", MS_UNBINDABLE | MS_REC },
	{ "bind", MS_BIND },		{ "rbind", MS_BIND | MS_REC },
	{ "move", MS_MOVE },		{ "remount", MS_REMOUNT },
	{ NULL, LMNS_FLAGS_RAW }
};

/* mountns.MS: the MS_* constants of mount(2) (include/uapi/linux/mount.h) */
static const lmns_flag ms_constants[] = {
	{ "RDONLY", MS_RDONLY },	{ "NOSUID", MS_NOSUID },
	{ "NODEV", MS_NODEV },		{ "NOEXEC", MS_NOEXEC },
	{ "SYNCHRONOUS", MS_SYNCHRONOUS }, { "REMOUNT", MS_REMOUNT },
	{ "MANDLOCK", MS_MANDLOCK },	{ "DIRSYNC", MS_DIRSYNC },
	{ "NOSYMFOLLOW", MS_NOSYMFOLLOW }, { "NOATIME", MS_NOATIME },
	{ "NODIRATIME", MS_NODIRATIME }, { "BIND", MS_BIND },
	{ "MOVE", MS_MOVE },		{ "REC", MS_REC },
	{ "SILENT", MS_SILENT },	{ "POSIXACL", MS_POSIXACL },
	{ "UNBINDABLE", MS_UNBINDABLE }, { "PRIVATE", MS_PRIVATE },
	{ "SLAVE", MS_SLAVE },		{ "SHARED", MS_SHARED },
	{ "RELATIME", MS_RELATIME },	{ "STRICTATIME", MS_STRICTATIME },
	{ "LAZYTIME", MS_LAZYTIME },
	{ NULL, 0 }
};

static const lmns_flag umount_flags[] = {
	{ "force", MNT_FORCE },
	{ "detach", MNT_DETACH },
	{ "lazy", MNT_DETACH },		/* umount(8) -l */
	{ "expire", MNT_EXPIRE },
	{ "nofollow", UMOUNT_NOFOLLOW },
	{ NULL, 0 }
};

/* the option keys each call knows: a misspelt one raises */
static const char *const recursive_keys[] = { "recursive", NULL };
static const char *const bind_keys[] = { "bind", NULL };

/***
@module mountns.core
*/

/***
Mounting: mount(2), umount2(2), pivot_root(2) and their helpers
@section mount
*/

/***
Mount a filesystem, like `mount -t FSTYPE -o FLAGS,DATA SOURCE TARGET`.
@function mount
@tparam[opt="none"] string source device or name ("tmpfs", "proc", ...)
@tparam string target the mount point
@tparam[opt] string fstype filesystem type
@tparam[opt] string|{string,...}|int flags `ro rw nosuid suid nodev dev noexec
exec sync async dirsync mand nomand silent loud relatime norelatime noatime
atime strictatime nodiratime diratime lazytime nolazytime nosymfollow
symfollow`, and passed to mount(2) as given: `shared private slave
unbindable` (`rshared`... with MS_REC), `bind rbind move remount`; or
`mountns.MS` constants (integers, in the list too) as raw bits
@tparam[opt] string data filesystem options, e.g. `"size=1m,mode=755"`
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "mount PATH: strerror (ENAME)"
@treturn[2] int errno
@see mount(2)
@usage assert(mountns.mount("tmpfs", "/tmp", "tmpfs", "nosuid,nodev", "size=1m"))
*/
static int lmns_mount_mount(lua_State *L)
{
	const char *source;
	const char *target;
	const char *fstype;
	unsigned long flags;
	const char *data;

	lmns_checknomore(L, 5);
	source = lmns_optpath(L, 1, "none");
	target = lmns_checkpath(L, 2);
	fstype = lmns_optcstring(L, 3, NULL, "fstype");
	flags = lmns_checkflags(L, 4, mount_flags);
	data = lmns_optcstring(L, 5, NULL, "data");

	return lmns_result(L, mount(source, target, fstype, flags, data),
				 "mount", source, target);
}

/***
Unmount, like umount(8).
@function umount
@tparam string target the mount point
@tparam[opt] string|{string,...} flags `force`, `detach` (alias `lazy`,
umount -l), `expire`, `nofollow` (do not follow a symlink at target)
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "umount PATH: strerror (ENAME)"
@treturn[2] int errno
@see umount2(2)
*/
static int lmns_mount_umount(lua_State *L)
{
	const char *target;
	int flags;

	lmns_checknomore(L, 2);
	target = lmns_checkpath(L, 1);
	flags = (int)lmns_checkflags(L, 2, umount_flags);

	return lmns_result(L, umount2(target, flags), "umount", target,
				 NULL);
}

/***
Bind mount, like `mount --bind` (`mount --rbind` with `recursive`).
@function bind
@tparam string source
@tparam string target
@tparam[opt] table opts `{recursive = true}` also binds the mounts below
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "bind|rbind PATH: strerror (ENAME)"
@treturn[2] int errno
@see mount(2)
*/
static int lmns_mount_bind(lua_State *L)
{
	const char *source;
	const char *target;
	int rec;

	lmns_checknomore(L, 3);
	source = lmns_checkpath(L, 1);
	target = lmns_checkpath(L, 2);

	lmns_checkkeys(L, 3, recursive_keys);
	rec = lmns_optbool(L, 3, "recursive", 0);

	return lmns_result(L, mount(source, target, NULL,
			MS_BIND | (rec ? MS_REC : 0), NULL),
		rec ? "rbind" : "bind", source, target);
}

/***
Move a mount, like `mount --move`.
@function move
@tparam string source a mount point
@tparam string target
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "move PATH: strerror (ENAME)"
@treturn[2] int errno
@see mount(2)
*/
static int lmns_mount_move(lua_State *L)
{
	const char *source;
	const char *target;

	lmns_checknomore(L, 2);
	source = lmns_checkpath(L, 1);
	target = lmns_checkpath(L, 2);

	return lmns_result(L, mount(source, target, NULL, MS_MOVE, NULL),
				 "move", source, target);
}

/***
Change the flags of a mount, like `mount -o remount[,bind]`.
@function remount
@tparam string target
@tparam[opt] string|{string,...} flags the flags of `mount`
@tparam[opt] string data filesystem options
@tparam[opt] table opts `{bind = true}` changes only this mount's flags
(per-mount `ro`, `nosuid`, ...), not the superblock's
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "remount PATH: strerror (ENAME)"
@treturn[2] int errno
@see mount(2)
*/
static int lmns_mount_remount(lua_State *L)
{
	const char *target;
	unsigned long flags;
	const char *data;
	int bind;

	lmns_checknomore(L, 4);
	target = lmns_checkpath(L, 1);
	flags = lmns_checkflags(L, 2, mount_flags);
	data = lmns_optcstring(L, 3, NULL, "data");

	lmns_checkkeys(L, 4, bind_keys);
	bind = lmns_optbool(L, 4, "bind", 0);

	flags |= MS_REMOUNT | (bind ? MS_BIND : 0);
	return lmns_result(L, mount("none", target, NULL, flags, data),
				 "remount", target, NULL);
}

/*
 * The propagation changes. The op names are mount(8)'s options, so an error
 * reads like the command a user would have typed: make-rshared /X: ...
 */
static int lmns_mount_propagation(lua_State *L, unsigned long type,
				  const char *op, const char *rop)
{
	const char *target;
	int rec;

	lmns_checknomore(L, 2);
	target = lmns_checkpath(L, 1);
	lmns_checkkeys(L, 2, recursive_keys);
	rec = lmns_optbool(L, 2, "recursive", 0);

	return lmns_result(L, mount("none", target, NULL,
			type | (rec ? MS_REC : 0), NULL),
		rec ? rop : op, target, NULL);
}

/***
Make a mount a peer group: mounts and unmounts below it propagate to
and from its peers, like `mount --make-shared` (`--make-rshared` with
`recursive`).
@function make_shared
@tparam string target a mount point
@tparam[opt] table opts `{recursive = true}` changes every mount below too
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "make-shared|make-rshared PATH: strerror (ENAME)"
@treturn[2] int errno
@see mount_namespaces(7)
*/
static int lmns_mount_make_shared(lua_State *L)
{
	return lmns_mount_propagation(L, MS_SHARED, "make-shared",
				      "make-rshared");
}

/***
Make a mount no propagation to or from it, like `mount --make-private` (`--make-rprivate` with
`recursive`).
@function make_private
@tparam string target a mount point
@tparam[opt] table opts `{recursive = true}` changes every mount below too
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "make-private|make-rprivate PATH: strerror (ENAME)"
@treturn[2] int errno
@see mount_namespaces(7)
*/
static int lmns_mount_make_private(lua_State *L)
{
	return lmns_mount_propagation(L, MS_PRIVATE, "make-private",
				      "make-rprivate");
}

/***
Make a mount a slave of its peer group: it receives propagation
from the group's mounts but sends none back, like `mount --make-slave` (`--make-rslave` with
`recursive`).
@function make_slave
@tparam string target a mount point
@tparam[opt] table opts `{recursive = true}` changes every mount below too
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "make-slave|make-rslave PATH: strerror (ENAME)"
@treturn[2] int errno
@see mount_namespaces(7)
*/
static int lmns_mount_make_slave(lua_State *L)
{
	return lmns_mount_propagation(L, MS_SLAVE, "make-slave", "make-rslave");
}

/***
Make a mount private, and it cannot be bind-mounted, like `mount --make-unbindable` (`--make-runbindable` with
`recursive`).
@function make_unbindable
@tparam string target a mount point
@tparam[opt] table opts `{recursive = true}` changes every mount below too
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "make-unbindable|make-runbindable PATH: strerror (ENAME)"
@treturn[2] int errno
@see mount_namespaces(7)
*/
static int lmns_mount_make_unbindable(lua_State *L)
{
	return lmns_mount_propagation(L, MS_UNBINDABLE, "make-unbindable",
				      "make-runbindable");
}

/***
Make new_root the root of this mount namespace, the old root mounted at
put_old (then usually `umount(put_old, "detach")`). Call `pin_proc` first
to keep reading /proc afterwards.
@function pivot_root
@tparam string new_root a mount point
@tparam string put_old a directory under new_root
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "pivot_root PATH: strerror (ENAME)"
@treturn[2] int errno
@see pivot_root(2)
*/
/* pivot_root(new_root, put_old); glibc has no wrapper. */
static int lmns_mount_pivot_root(lua_State *L)
{
	const char *new_root;
	const char *put_old;

	lmns_checknomore(L, 2);
	new_root = lmns_checkpath(L, 1);
	put_old = lmns_checkpath(L, 2);

	lmns_libmount_preload();	/* out of reach after the pivot */
	return lmns_result(L, (int)syscall(SYS_pivot_root, new_root,
						 put_old),
				 "pivot_root", new_root, put_old);
}

/***
The flag bits of mount(2) by name, as in `include/uapi/linux/mount.h`
without the `MS_` prefix: `RDONLY NOSUID NODEV NOEXEC SYNCHRONOUS REMOUNT
MANDLOCK DIRSYNC NOSYMFOLLOW NOATIME NODIRATIME BIND MOVE REC SILENT
POSIXACL UNBINDABLE PRIVATE SLAVE SHARED RELATIME STRICTATIME LAZYTIME`.
`mount` and `remount` take them where they take flag names (alone, or as
elements of the list), passed to the kernel as given.
@table MS
@usage mountns.mount("/X", "/Y", nil, { mountns.MS.BIND, mountns.MS.REC })
*/

/* The lock probe's child: what it is to do, and what it found (it shares
 * the caller's memory, so it writes the answer here before it exits). */
struct lmns_probe {
	const char *path;
	const char *op;		/* the call that failed */
	int err;		/* its errno; 0: unmounted */
};

static int lmns_mount_probe_child(void *arg)
{
	struct lmns_probe *p = arg;

	p->op = "unshare";
	if (unshare(CLONE_NEWNS) != 0)
		goto fail;
	p->op = "mount";
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		goto fail;
	p->op = "umount";
	if (umount2(p->path, MNT_DETACH) != 0)
		goto fail;
	p->err = 0;
	return 0;
fail:
	p->err = errno;
	return 1;
}

/***
Unmount (detach) target in a throw-away copy of the caller's mount
namespace, made private first so that nothing propagates back: the
kernel's answer to whether target could be unmounted here (`EINVAL` for
a mount locked by a less privileged namespace, or for no mount). The copy
is made by a child that shares the caller's memory (no copy of its page
tables) and ends at once; the caller's namespace is not changed.
@function umount_copy
@tparam string target
@treturn[1] boolean true: unmounted in the copy
@return[2] nil
@treturn[2] string "umount PATH: strerror (ENAME)" (or "unshare: ...",
"mount /: ..." when the copy could not be made, "clone: ...")
@treturn[2] int errno
@see umount(2)
*/
static int lmns_mount_umount_copy(lua_State *L)
{
	struct lmns_probe p, *shared;
	sigset_t all, old;
	size_t size = 64 * 1024;
	char *map;
	pid_t pid;

	lmns_checknomore(L, 1);
	p.path = lmns_checkpath(L, 1);
	p.op = "clone";
	p.err = EIO;
	/* one mapping: the answer at its bottom, the child's stack growing
	 * down from its top; shared, since valgrind runs this clone as a fork */
	map = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (map == MAP_FAILED)
		return lmns_fail(L, errno, "clone", NULL, NULL);
	shared = (struct lmns_probe *)(void *)map;
	*shared = p;
	/* no signal handler may run in the child, on the caller's memory */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = clone(lmns_mount_probe_child, map + size,
		    CLONE_VM | CLONE_VFORK | SIGCHLD, shared);
	if (pid < 0)
		shared->err = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* vfork: the child has ended; reap it (its copy is gone then) */
	while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	p = *shared;
	munmap(map, size);
	if (p.err == 0) {
		lua_pushboolean(L, 1);
		return 1;
	}
	if (p.op[0] == 'u' && p.op[1] == 'm')
		return lmns_fail(L, p.err, "umount", p.path, NULL);
	return lmns_fail(L, p.err, p.op, p.op[0] == 'm' ? "/" : NULL, NULL);
}

void lmns_mount_open(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{ "mount", lmns_mount_mount },
		{ "umount", lmns_mount_umount },
		{ "umount_copy", lmns_mount_umount_copy },
		{ "bind", lmns_mount_bind },
		{ "move", lmns_mount_move },
		{ "remount", lmns_mount_remount },
		{ "make_shared", lmns_mount_make_shared },
		{ "make_private", lmns_mount_make_private },
		{ "make_slave", lmns_mount_make_slave },
		{ "make_unbindable", lmns_mount_make_unbindable },
		{ "pivot_root", lmns_mount_pivot_root },
		{ NULL, NULL }
	};
	const lmns_flag *f;

	luaL_setfuncs(L, funcs, 0);
	lua_newtable(L);
	for (f = ms_constants; f->name; f++) {
		lua_pushinteger(L, (lua_Integer)f->value);
		lua_setfield(L, -2, f->name);
	}
	lua_setfield(L, -2, "MS");
	lmns_flags_register(L, "mount", mount_flags);
	lmns_flags_register(L, "umount", umount_flags);
}
