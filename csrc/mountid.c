/*
 * mountid.c - the mount ID of a path or a mount fd, with statx(2): the
 * unique 64-bit ID (Linux 6.8+, never reused) where the kernel has it, else
 * the reused one of mountinfo (5.8+). statmount, features and the mount fd
 * equality ask here; it needs nothing but the kernel.
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
