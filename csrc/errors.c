/*
 * errors.c - how a failed system call reaches Lua.
 *
 * Like liolib's luaL_fileresult, an OS failure *returns*
 * nil, "op path [path2]: strerror (ENAME)", errno; misuse raises (args.c).
 * The errno name is in the message so scripts and expect.fails() can match
 * on a stable word instead of a locale-dependent strerror text.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "lmns.h"

#define E(x) { #x, x }
static const struct { const char *name; int value; } errnames[] = {
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG),
	E(ENOEXEC), E(EBADF), E(ECHILD), E(EAGAIN), E(ENOMEM), E(EACCES),
	E(EFAULT), E(ENOTBLK), E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV),
	E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY),
	E(ETXTBSY), E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS), E(EMLINK),
	E(EPIPE), E(EDOM), E(ERANGE), E(EDEADLK), E(ENAMETOOLONG), E(ENOLCK),
	E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(ENOMSG), E(EIDRM), E(ENOSTR),
	E(ENODATA), E(ETIME), E(ENOSR), E(ENOLINK), E(EPROTO), E(EBADMSG),
	E(EOVERFLOW), E(EILSEQ), E(EUSERS), E(ENOTSOCK), E(EOPNOTSUPP),
	E(EADDRINUSE), E(ETIMEDOUT), E(ECONNREFUSED), E(EALREADY),
	E(EINPROGRESS), E(ESTALE), E(EDQUOT), E(ECANCELED), E(EOWNERDEAD),
	E(ENOTRECOVERABLE), E(ENOKEY), E(EKEYEXPIRED), E(EKEYREVOKED),
	E(EMEDIUMTYPE), E(ENOMEDIUM), E(EUCLEAN),
};
#undef E

#define NERRNAMES (sizeof(errnames) / sizeof(errnames[0]))

const char *lmns_errno_name(int err)
{
	size_t i;

	for (i = 0; i < NERRNAMES; i++)
		if (errnames[i].value == err)
			return errnames[i].name;
	return "E?";
}

/*
 * The first Linux release with each feature: the one home of these numbers,
 * read by lmns_fail (a call a kernel lacks fails with ENOSYS and names the
 * release it needs) and by Lua as core.feature_since (features() names). `op` is the
 * operation word of that call's error message ("move_mount set_group"
 * before "move_mount": the longer one is looked up first). Debian's 5.10
 * has MOVE_MOUNT_SET_GROUP backported (features() probes, never guesses).
 */
static const struct {
	const char *name, *op, *since;
} since[] = {
	{ "set_group", "move_mount set_group", "5.15" },
	{ "beneath", "move_mount beneath", "6.5" },
	{ "open_tree", "open_tree", "5.2" },
	{ "move_mount", "move_mount", "5.2" },
	{ "fsmount", "fsopen", "5.2" },
	{ "fsmount", "fsconfig", "5.2" },
	{ "fsmount", "fsmount", "5.2" },
	{ "mount_setattr", "mount_setattr", "5.12" },
	{ "idmap", NULL, "5.12" },
	{ "idmap_tmpfs", NULL, "6.3" },
	{ "listmount", "listmount", "6.8" },
	{ "statmount", "statmount", "6.8" },
	{ "statx_unique_id", NULL, "6.8" },
	{ "mntns_id", NULL, "6.11" },
	{ "listmount_ns", NULL, "6.11" },
	{ "statmount_complete", NULL, "6.13" },
	{ "fanotify_mounts", "fanotify_init FAN_REPORT_MNT", "6.15" },
};
#define NSINCE (sizeof(since) / sizeof(since[0]))

static const char *lmns_errors_since(const char *op)
{
	size_t i, n;

	for (i = 0; i < NSINCE; i++) {
		if (!since[i].op)
			continue;
		n = strlen(since[i].op);
		if (strncmp(op, since[i].op, n) == 0 &&
		    (op[n] == '\0' || op[n] == ' '))
			return since[i].since;
	}
	return NULL;
}

/*
 * Push nil, "op path1 path2: strerror (ENAME)", err and return 3 (with
 * ": needs Linux X.Y" after an ENOSYS of a call the table above dates). The
 * paths are escaped as every output is (tree.c): a message is shown, and a
 * newline or ESC in a crafted path must not reach the terminal raw.
 * err is passed in (not read from errno) because callers must save errno
 * before any Lua API call can change it.
 */
int lmns_fail(lua_State *L, int err, const char *op, const char *path1,
	      const char *path2)
{
	luaL_Buffer b;
	const char *release;

	lua_pushnil(L);
	luaL_buffinit(L, &b);
	luaL_addstring(&b, op);
	if (path1) {
		luaL_addchar(&b, ' ');
		lmns_escape_add(&b, path1, strlen(path1), NULL, 0);
	}
	if (path2) {
		luaL_addchar(&b, ' ');
		lmns_escape_add(&b, path2, strlen(path2), NULL, 0);
	}
	luaL_addstring(&b, ": ");
	luaL_addstring(&b, strerror(err));
	luaL_addstring(&b, " (");
	luaL_addstring(&b, lmns_errno_name(err));
	luaL_addchar(&b, ')');
	/* a call this kernel lacks: say which release brought it */
	if (err == ENOSYS && (release = lmns_errors_since(op))) {
		luaL_addstring(&b, ": needs Linux ");
		luaL_addstring(&b, release);
	}
	luaL_pushresult(&b);
	lua_pushinteger(L, err);
	return 3;
}

/*
 * A system call's answer as a core function's results: true where rc is
 * 0, else lmns_fail's three (errno read at once, before any Lua call).
 */
int lmns_result(lua_State *L, int rc, const char *op, const char *path1,
		const char *path2)
{
	if (rc != 0)
		return lmns_fail(L, errno, op, path1, path2);
	lua_pushboolean(L, 1);
	return 1;
}

/***
@module mountns.core
*/

/***
Error numbers by name, as in `<errno.h>`: `errno.ENOENT == 2`. The third
result of a failed call compares against these. The numbers map back to
the names the messages use: `errno[2] == "ENOENT"`.
@table errno
@usage local ok, msg, err = mountns.umount("/x")
if not ok and err == mountns.errno.EINVAL then --[[ not a mount point ]] end
*/
/***
The first Linux release with each feature of `features` (a string such as
"5.12" by feature name): what the ENOSYS message of a call this kernel
lacks names, and the reason a spec needing it is pending.
@table feature_since
@usage if not mountns.core.features().mount_setattr then
  print("mount_setattr needs Linux " .. mountns.core.feature_since.mount_setattr)
end
*/
/* mountns.errno: ENAME -> number, and number -> ENAME for reverse look-up;
 * mountns.feature_since. */
void lmns_errors_open(lua_State *L)
{
	size_t i;

	lua_createtable(L, 0, 2 * (int)NERRNAMES);
	for (i = 0; i < NERRNAMES; i++) {
		lua_pushinteger(L, errnames[i].value);
		lua_setfield(L, -2, errnames[i].name);
		/* the name lmns_errno_name gives: the first one of a number */
		lua_rawgeti(L, -1, errnames[i].value);
		if (lua_isnil(L, -1)) {
			lua_pushstring(L, errnames[i].name);
			lua_rawseti(L, -3, errnames[i].value);
		}
		lua_pop(L, 1);
	}
	lua_setfield(L, -2, "errno");
	lua_createtable(L, 0, (int)NSINCE);
	for (i = 0; i < NSINCE; i++) {
		lua_pushstring(L, since[i].since);
		lua_setfield(L, -2, since[i].name);
	}
	lua_setfield(L, -2, "feature_since");
}
