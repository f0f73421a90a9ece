/*
 * features.c - features(): which of the modern mount paths this kernel
 * offers, probed once per process with calls that cannot change anything
 * (a bad flag, a NULL pointer: a missing call answers ENOSYS, a known one
 * another error).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "lmns.h"
#include "uapi.h"

static struct {
	int done;
	int open_tree, move_mount, fsmount, mount_setattr, set_group;
	int beneath, listmount, statmount, mntns_id, listmount_ns;
	int statx_unique, statmount_complete;
	uint64_t statmount_mask;
} feat;

/* The syscall exists when calling it with a bad flag is not ENOSYS. */
static int lmns_has_syscall(long rc)
{
	return !(rc < 0 && errno == ENOSYS);
}

static void lmns_features_probe(lua_State *L)
{
	int saved = errno, fd;
	uint64_t nsid = 0, ids[1];
	struct lmns_mnt_id_req req;
	struct {
		struct lmns_statmount sm;
		char str[256];
	} buf;
	unsigned long long uid;
	int unique = 0;

	feat.open_tree = lmns_has_syscall(syscall(SYS_open_tree, -1, NULL,
						  ~0U));
	feat.move_mount = lmns_has_syscall(syscall(SYS_move_mount, -1, NULL,
						   -1, NULL, ~0U));
	feat.fsmount = lmns_has_syscall(syscall(SYS_fsopen, NULL, ~0U)) &&
		       lmns_has_syscall(syscall(SYS_fsmount, -1, ~0U, ~0U));
	feat.mount_setattr = lmns_has_syscall(syscall(SYS_mount_setattr, -1,
						      NULL, ~0U, NULL, 0));
	feat.set_group = feat.move_mount &&
			 lmns_has_move_flag(MOVE_MOUNT_SET_GROUP);
	feat.beneath = feat.move_mount &&
		       lmns_has_move_flag(MOVE_MOUNT_BENEATH);
	feat.listmount = lmns_has_syscall(syscall(SYS_listmount, NULL, NULL,
						  0, ~0U));
	feat.statmount = lmns_has_syscall(syscall(SYS_statmount, NULL, NULL,
						  0, ~0U));
	/* through the pinned /proc: a first call after pivot_root has no /proc */
	fd = lmns_procfs_openat(L, "self/ns/mnt", O_RDONLY | O_CLOEXEC);
	feat.mntns_id = fd >= 0 && lmns_ns_mntns_id(fd, &nsid) == 0;
	if (fd >= 0)
		close(fd);
	if (feat.listmount && feat.mntns_id) {
		memset(&req, 0, sizeof req);
		req.size = LMNS_MNT_ID_REQ_SIZE_VER1;
		req.mnt_id = LSMT_ROOT;
		req.mnt_ns_id = nsid;
		feat.listmount_ns = syscall(SYS_listmount, &req, ids, 1, 0) >= 0;
	}
	feat.statx_unique = lmns_mount_id_of(AT_FDCWD, "/", 0, &uid,
					     &unique) == 0 && unique;
	if (feat.statmount && feat.statx_unique) {
		memset(&req, 0, sizeof req);
		req.size = LMNS_MNT_ID_REQ_SIZE_VER0;
		req.mnt_id = uid;
		req.param = STATMOUNT_SUPPORTED_MASK;
		memset(&buf, 0, sizeof buf);
		if (syscall(SYS_statmount, &req, &buf, sizeof buf, 0) == 0 &&
		    (buf.sm.mask & STATMOUNT_SUPPORTED_MASK))
			feat.statmount_mask = buf.sm.supported_mask;
		/* before 6.15 there is no supported_mask: what the kernel
		 * returns for everything asked of "/" is a lower bound */
		else if (req.param = LMNS_SM_MASK,
			 syscall(SYS_statmount, &req, &buf, sizeof buf, 0) == 0)
			feat.statmount_mask = buf.sm.mask;
	}
	feat.statmount_complete = feat.listmount && feat.statmount &&
		(feat.statmount_mask & LMNS_SM_MASK) == LMNS_SM_MASK;
	feat.done = 1;
	errno = saved;
}

/***
@module mountns.core
*/

/***
What this kernel offers
@section features
*/

/***
Which modern paths this kernel offers, probed once per process with calls
that cannot change anything.
@function features
@treturn table booleans `open_tree`, `move_mount`, `fsmount`,
`mount_setattr`, `idmap`, `set_group`, `beneath`, `listmount`,
`statmount`, `mntns_id` (NS_GET_MNTNS_ID), `listmount_ns` (another
namespace by ID), `statx_unique_id`, `statmount_complete` (every field of
a mountinfo record; Linux 6.13+), and `statmount_mask` (an integer).
`set_group` and `beneath` are false in a process without the right to
mount where the kernel checks that first (5.10, 6.18): `mountns.features()`
asks again in a child that may mount.
*/
static int lmns_features_features(lua_State *L)
{
	lmns_checknomore(L, 0);
	if (!feat.done)
		lmns_features_probe(L);
	lua_createtable(L, 0, 14);
#define F(name, v) (lua_pushboolean(L, (v)), lua_setfield(L, -2, name))
	F("open_tree", feat.open_tree);
	F("move_mount", feat.move_mount);
	F("fsmount", feat.fsmount);
	F("mount_setattr", feat.mount_setattr);
	F("idmap", feat.mount_setattr);	/* MOUNT_ATTR_IDMAP came with it */
	F("set_group", feat.set_group);
	F("beneath", feat.beneath);
	F("listmount", feat.listmount);
	F("statmount", feat.statmount);
	F("mntns_id", feat.mntns_id);
	F("listmount_ns", feat.listmount_ns);
	F("statx_unique_id", feat.statx_unique);
	F("statmount_complete", feat.statmount_complete);
#undef F
	lua_pushinteger(L, (lua_Integer)feat.statmount_mask);
	lua_setfield(L, -2, "statmount_mask");
	return 1;
}

void lmns_features_open(lua_State *L)
{
	lua_pushcfunction(L, lmns_features_features);
	lua_setfield(L, -2, "features");
}
