/*
 * mountid.c - the mount ID of a path or a mount fd, with statx(2): the
 * unique 64-bit ID (Linux 6.8+, never reused) where the kernel has it, else
 * the reused one of mountinfo (5.8+). statmount, features and the mount fd
 * equality ask here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "lmns.h"
#include "uapi.h"

/* The unique mount ID of dfd/path (6.8+), else the reused one (5.8+). */
int lmns_mount_id_of(int dfd, const char *path, int flags,
		     unsigned long long *id, int *unique)
{
	struct lmns_statx stx;

	memset(&stx, 0, sizeof stx);
	if (syscall(SYS_statx, dfd, path, flags,
		    STATX_MNT_ID | STATX_MNT_ID_UNIQUE, &stx) != 0)
		return -1;
	if (!(stx.stx_mask & (STATX_MNT_ID | STATX_MNT_ID_UNIQUE))) {
		errno = ENOSYS;
		return -1;
	}
	*id = stx.stx_mnt_id;
	*unique = (stx.stx_mask & STATX_MNT_ID_UNIQUE) != 0;
	return 0;
}

/*
 * The unique mount ID that argument arg names: an integer, a record with
 * unique_id, a path or a mount fd (both via statx). 0, or -1 with errno;
 * *name is the path or the mount fd's name (left on the stack), or NULL.
 */
int lmns_mount_checkid(lua_State *L, int arg, uint64_t *id,
		       const char **name)
{
	unsigned long long uid = 0;
	lmns_handle *h;
	int unique = 0, rc;

	*name = NULL;
	switch (lua_type(L, arg)) {
	case LUA_TNUMBER:
		*id = (uint64_t)luaL_checkinteger(L, arg);
		return 0;
	case LUA_TTABLE:
		lua_getfield(L, arg, "unique_id");
		if (lua_type(L, -1) != LUA_TNUMBER)
			return luaL_argerror(L, arg, "record without unique_id "
				"(from mountinfo? list with mountns.mounts())");
		*id = (uint64_t)lua_tointeger(L, -1);
		lua_pop(L, 1);
		return 0;
	case LUA_TSTRING:
		*name = lmns_checkpath(L, arg);
		rc = lmns_mount_id_of(AT_FDCWD, *name, 0, &uid, &unique);
		break;
	default:
		h = lmns_mountfd_test(L, arg);
		if (!h)
			return luaL_argerror(L, arg, lua_pushfstring(L,
				"unique mount ID, record, path or mount fd "
				"expected, got %s", luaL_typename(L, arg)));
		lmns_handle_pushname(L, h);	/* stays on the stack */
		*name = lua_tostring(L, -1);
		rc = lmns_mount_id_of(h->fd, "", AT_EMPTY_PATH, &uid, &unique);
		break;
	}
	if (rc == 0 && !unique) {
		errno = ENOSYS;	/* statx before 6.8: no unique ID */
		rc = -1;
	}
	*id = uid;
	return rc;
}
