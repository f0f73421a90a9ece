/*
 * files.c - the filesystem calls scenario code needs between mount calls:
 * chdir, chroot, a directory to come back to (open_dir, fchdir), mkdir -p,
 * symlink, a directory's names and a path's existence, so a scenario needs
 * no shell.
 *
 * Each binds one system call, so a failure names exactly the operation and
 * path(s) that failed; policy lives in Lua.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lmns.h"

/* the option keys each call knows: a misspelt one raises */
static const char *const mkdir_keys[] = { "parents", "mode", NULL };

/***
@module mountns.core
*/

/***
Files: the calls scenario code needs between mount calls
@section files
*/

/***
Change the working directory (needed around `pivot_root`).
@function chdir
@tparam string path
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "chdir PATH: strerror (ENAME)"
@treturn[2] int errno
@see chdir(2)
*/
static int lmns_files_chdir(lua_State *L)
{
	const char *path;

	lmns_checknomore(L, 1);
	path = lmns_checkpath(L, 1);

	return lmns_result(L, chdir(path), "chdir", path, NULL);
}

/***
Open a directory as a place to come back to (`O_PATH`, close-on-exec):
`fchdir` to it later reaches it even when it is no longer reachable by
a path (the old root after `pivot_root`, as runc does). Close it with
`close_fd`.
@function open_dir
@tparam string path
@treturn[1] int the fd
@return[2] nil
@treturn[2] string "open_dir PATH: strerror (ENAME)"
@treturn[2] int errno
@see open(2)
*/
static int lmns_files_open_dir(lua_State *L)
{
	const char *path;
	int fd;

	lmns_checknomore(L, 1);
	path = lmns_checkpath(L, 1);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return lmns_fail(L, errno, "open_dir", path, NULL);
	lua_pushinteger(L, fd);
	return 1;
}

/***
Change the working directory to a directory fd (`open_dir`).
@function fchdir
@tparam int fd
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "fchdir: strerror (ENAME)"
@treturn[2] int errno
@see fchdir(2)
*/
static int lmns_files_fchdir(lua_State *L)
{
	int fd;

	lmns_checknomore(L, 1);
	fd = lmns_checkfd(L, 1);
	return lmns_result(L, fchdir(fd), "fchdir", NULL, NULL);
}

/* mkdir -p: create each missing component; an existing directory is fine. */
static int lmns_mkdir_parents(char *path, mode_t mode)
{
	char *p;
	struct stat st;

	for (p = path + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		if (p[-1] != '/') {
			char c = *p;

			*p = '\0';
			if (mkdir(path, mode) != 0 && !(errno == EEXIST &&
			    stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
				if (errno == EEXIST)
					errno = ENOTDIR;
				*p = c;
				return -1;
			}
			*p = c;
		}
		if (*p == '\0')
			return 0;
	}
}

/*
 * opts.mode of mkdir: an integer (0493, written 0x1ed or 493 in Lua) or an
 * octal string as chmod(1) takes it ("0755", "755"). A string is never read
 * as decimal: "0755" used to become 755, mode 01363.
 */
static mode_t lmns_mkdir_mode(lua_State *L, int arg)
{
	lua_Number n;
	const char *s;
	size_t len, i;
	unsigned long v = 0;

	if (lua_isnoneornil(L, arg))
		return 0755;
	lua_getfield(L, arg, "mode");
	switch (lua_type(L, -1)) {
	case LUA_TNIL:
		lua_pop(L, 1);
		return 0755;
	case LUA_TNUMBER:
		n = lua_tonumber(L, -1);
		if (n >= 0 && n <= 07777 && n == (lua_Number)(long)n) {
			lua_pop(L, 1);
			return (mode_t)n;
		}
		return (mode_t)luaL_argerror(L, arg, lua_pushfstring(L,
			"mode %s out of range (0 to 4095, octal 07777)",
			lua_tostring(L, -1)));
	case LUA_TSTRING:
		s = lua_tolstring(L, -1, &len);
		for (i = 0; i < len && s[i] >= '0' && s[i] <= '7' &&
		     v <= 07777; i++)
			v = v * 8 + (unsigned long)(s[i] - '0');
		if (len == 0 || i < len || v > 07777)
			return (mode_t)luaL_argerror(L, arg, lua_pushfstring(L,
				"mode '%s' is not an octal mode (\"0755\", "
				"\"755\" or an integer)", s));
		lua_pop(L, 1);
		return (mode_t)v;
	default:
		return (mode_t)luaL_argerror(L, arg, lua_pushfstring(L,
			"mode must be an integer or an octal string, got %s",
			luaL_typename(L, -1)));
	}
}

/***
Create a directory, like mkdir(1) (`mkdir -p` with `parents`).
@function mkdir
@tparam string path
@tparam[opt] table opts `parents = true`: create missing parents, an
existing directory is no error; `mode`, an integer (default 493, octal
0755) or an octal string (`"0755"`, `"755"`)
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "mkdir PATH: strerror (ENAME)"
@treturn[2] int errno
@see mkdir(2)
*/
static int lmns_files_mkdir(lua_State *L)
{
	const char *path;
	size_t len;
	int parents;

	lmns_checknomore(L, 2);
	path = lmns_checkpath(L, 1);
	len = lua_rawlen(L, 1);

	lmns_checkkeys(L, 2, mkdir_keys);
	parents = lmns_optbool(L, 2, "parents", 0);
	mode_t mode = lmns_mkdir_mode(L, 2);
	int rc;
	char *copy;

	if (!parents || len == 0)
		return lmns_result(L, mkdir(path, mode), "mkdir", path,
					 NULL);
	/* a writable copy lives in a Lua userdata, so an error cannot leak it */
	copy = lua_newuserdata(L, len + 1);
	memcpy(copy, path, len + 1);
	rc = lmns_mkdir_parents(copy, mode);
	return lmns_result(L, rc, "mkdir", path, NULL);
}

/***
Create a symbolic link linkpath pointing to target.
@function symlink
@tparam string target
@tparam string linkpath
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "symlink PATH: strerror (ENAME)"
@treturn[2] int errno
@see symlink(2)
*/
/***
Change the root directory, as chroot(8): the process then sees the mount
table as a process whose root is path does.
@function chroot
@tparam string path
@treturn[1] boolean true
@return[2] nil
@treturn[2] string "chroot PATH: strerror (ENAME)"
@treturn[2] int errno
@see chroot(2)
*/
static int lmns_files_chroot(lua_State *L)
{
	const char *path;

	lmns_checknomore(L, 1);
	path = lmns_checkpath(L, 1);

	lmns_libmount_preload();	/* maybe out of reach after it */
	return lmns_result(L, chroot(path), "chroot", path, NULL);
}

static int lmns_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The closing of a DIR * in a to-be-closed-like box: a userdata whose
 * __gc closes it, so a Lua error while the names are pushed cannot leak it. */
static int lmns_dir_gc(lua_State *L)
{
	DIR **d = lua_touserdata(L, 1);

	if (*d) {
		closedir(*d);
		*d = NULL;
	}
	return 0;
}

/***
The names in a directory, sorted by byte value, without `.` and `..`
(what `ls -A` lists).
@function readdir
@tparam string path
@treturn[1] {string,...} the names
@return[2] nil
@treturn[2] string "readdir PATH: strerror (ENAME)"
@treturn[2] int errno
@see readdir(3)
*/
static int lmns_files_readdir(lua_State *L)
{
	const char *path;
	DIR **d;
	struct dirent *e;
	int n = 0, i, list;
	const char **names;

	lmns_checknomore(L, 1);
	path = lmns_checkpath(L, 1);
	/* the slots below are counted from the top, never as fixed numbers:
	 * readdir("/", "x") once set the string metatable at slot 2 */
	d = lua_newuserdata(L, sizeof *d);
	*d = NULL;
	lua_newtable(L);					/* its metatable */
	lua_pushcfunction(L, lmns_dir_gc);
	lua_setfield(L, -2, "__gc");
	lua_setmetatable(L, -2);
	*d = opendir(path);
	if (!*d)
		return lmns_fail(L, errno, "readdir", path, NULL);
	lua_newtable(L);					/* the names */
	list = lua_gettop(L);
	for (;;) {
		errno = 0;
		e = readdir(*d);
		if (!e)
			break;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		lua_pushstring(L, e->d_name);
		lua_rawseti(L, list, ++n);
	}
	if (errno) {
		int err = errno;

		closedir(*d);
		*d = NULL;
		return lmns_fail(L, err, "readdir", path, NULL);
	}
	closedir(*d);
	*d = NULL;
	/* sort: pointers to the strings the table keeps alive */
	names = lua_newuserdata(L, (size_t)(n > 0 ? n : 1) * sizeof *names);
	for (i = 0; i < n; i++) {
		lua_rawgeti(L, list, i + 1);
		names[i] = lua_tostring(L, -1);
		lua_pop(L, 1);
	}
	qsort(names, (size_t)n, sizeof *names, lmns_name_cmp);
	lua_createtable(L, n, 0);
	for (i = 0; i < n; i++) {
		lua_pushstring(L, names[i]);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/***
Whether a path exists (a symlink itself counts, dangling or not).
@function exists
@tparam string path
@treturn[1] boolean true, or false when it (or a directory on the way) does
not exist (`ENOENT`, `ENOTDIR`)
@return[2] nil
@treturn[2] string "exists PATH: strerror (ENAME)" (`EACCES`, ...)
@treturn[2] int errno
@see fstatat(2)
*/
/*
 * faccessat2(F_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) (Linux 5.8) asks the
 * same as fstatat(AT_SYMLINK_NOFOLLOW) (the lookup with this process's
 * effective ids; a final symlink itself) without filling a struct stat:
 * ~0.3 us less a call (ns:exists is the call a shell transcript's tests
 * and expect make most). Where it is missing (ENOSYS, or EPERM from a
 * seccomp filter that predates it; EINVAL) fstatat answers, from then on.
 */
#ifdef SYS_faccessat2
static int exists_faccessat2 = 1;
#endif

static int lmns_files_exists(lua_State *L)
{
	const char *path;
	struct stat st;

	lmns_checknomore(L, 1);
	path = lmns_checkpath(L, 1);

#ifdef SYS_faccessat2
	if (exists_faccessat2) {
		if (syscall(SYS_faccessat2, AT_FDCWD, path, F_OK,
			    AT_EACCESS | AT_SYMLINK_NOFOLLOW) == 0) {
			lua_pushboolean(L, 1);
			return 1;
		}
		if (errno == ENOSYS || errno == EPERM || errno == EINVAL)
			exists_faccessat2 = 0;
		else if (errno == ENOENT || errno == ENOTDIR) {
			lua_pushboolean(L, 0);
			return 1;
		} else
			return lmns_fail(L, errno, "exists", path, NULL);
	}
#endif
	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		lua_pushboolean(L, 1);
		return 1;
	}
	if (errno == ENOENT || errno == ENOTDIR) {
		lua_pushboolean(L, 0);
		return 1;
	}
	return lmns_fail(L, errno, "exists", path, NULL);
}

/***
A file's size and a 64-bit hash of its bytes, read in C: what
mountns.bytecode compares to know that bytecode was built from the source
found now, without reading the source into Lua (~0.3 ms less CPU a
`mountns run` than comparing a copy). It tells an edited file from the
one hashed, not a forged one (whoever can write the source can write its
bytecode: the directories are the trust, see mountns.bytecode).
@function file_digest
@tparam string path
@treturn[1] string "SIZE:HASH" (HASH: 16 hex digits)
@return[2] nil
@treturn[2] string "file_digest PATH: strerror (ENAME)"
@treturn[2] int errno
@see read(2)
*/
/*
 * The hash takes 8 bytes at a time (the tail zero-padded), each word
 * xored in, multiplied by an odd constant and folded: one multiply per 8
 * bytes, where FNV-1a's byte at a time was 4x slower over the 550 KB of
 * mountns' modules. The chunk size is a multiple of 8, and each chunk is
 * filled before it is hashed (a short read does not shift the words).
 */
#define DIGEST_CHUNK 16384

static uint64_t lmns_files_mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
	return h ^ (h >> 29);
}

static int lmns_files_digest(lua_State *L)
{
	const char *path;
	unsigned char buf[DIGEST_CHUNK];
	uint64_t h = 0x2545F4914F6CDD1DULL, size = 0;
	char out[48];
	int fd;

	lmns_checknomore(L, 1);
	path = lmns_checkpath(L, 1);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return lmns_fail(L, errno, "file_digest", path, NULL);
	for (;;) {
		size_t n = 0, i;
		ssize_t r = 0;

		while (n < sizeof buf) {
			r = read(fd, buf + n, sizeof buf - n);
			if (r > 0)
				n += (size_t)r;
			else if (r == 0 || errno != EINTR)
				break;
		}
		if (r < 0) {
			int err = errno;

			close(fd);
			return lmns_fail(L, err, "file_digest", path, NULL);
		}
		size += n;
		for (i = 0; i + 8 <= n; i += 8) {
			uint64_t w;

			memcpy(&w, buf + i, 8);
			h = lmns_files_mix(h, w);
		}
		if (i < n) {	/* the tail: the file's end */
			uint64_t w = 0;

			memcpy(&w, buf + i, n - i);
			h = lmns_files_mix(h, w);
		}
		if (n < sizeof buf)
			break;
	}
	close(fd);
	h = lmns_files_mix(h, size);
	snprintf(out, sizeof out, "%llu:%016llx", (unsigned long long)size,
		 (unsigned long long)h);
	lua_pushstring(L, out);
	return 1;
}

/* symlink(target, linkpath) - for symlink specs: Lua has no symlink */
static int lmns_files_symlink(lua_State *L)
{
	const char *target;
	const char *linkpath;

	lmns_checknomore(L, 2);
	target = lmns_checkpath(L, 1);
	linkpath = lmns_checkpath(L, 2);

	return lmns_result(L, symlink(target, linkpath), "symlink",
				 target, linkpath);
}

void lmns_files_open(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{ "chdir", lmns_files_chdir },
		{ "open_dir", lmns_files_open_dir },
		{ "fchdir", lmns_files_fchdir },
		{ "mkdir", lmns_files_mkdir },
		{ "symlink", lmns_files_symlink },
		{ "chroot", lmns_files_chroot },
		{ "readdir", lmns_files_readdir },
		{ "exists", lmns_files_exists },
		{ "file_digest", lmns_files_digest },
		{ NULL, NULL }
	};

	luaL_setfuncs(L, funcs, 0);
}
