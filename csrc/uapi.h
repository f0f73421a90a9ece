/*
 * uapi.h - kernel uapi definitions that glibc 2.36's headers lack (or
 * that older ones lack), each behind #ifndef so newer headers win.
 */
#ifndef LMNS_UAPI_H
#define LMNS_UAPI_H

#include <sys/syscall.h>

/*
 * System call numbers: include/uapi/asm-generic/unistd.h, the same on every
 * architecture since 5.2 except alpha (+110) and mips (+4000/5000/6000).
 */
#ifndef __NR_open_tree
#define __NR_open_tree 428
#endif
#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#ifndef __NR_fsopen
#define __NR_fsopen 430
#endif
#ifndef __NR_fsconfig
#define __NR_fsconfig 431
#endif
#ifndef __NR_fsmount
#define __NR_fsmount 432
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef __NR_statmount		/* Linux 6.8 */
#define __NR_statmount 457
#endif
#ifndef __NR_listmount		/* Linux 6.8 */
#define __NR_listmount 458
#endif
#ifndef __NR_statx
#define __NR_statx 332		/* arch/x86/entry/syscalls/syscall_64.tbl */
#endif

/* include/uapi/linux/mount.h: move_mount(2) flags */
#ifndef MOVE_MOUNT_SET_GROUP	/* Linux 5.15 */
#define MOVE_MOUNT_SET_GROUP 0x00000100
#endif
#ifndef MOVE_MOUNT_BENEATH	/* Linux 6.5 */
#define MOVE_MOUNT_BENEATH 0x00000200
#endif

#endif
