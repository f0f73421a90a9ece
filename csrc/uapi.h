/*
 * uapi.h - the one home of the kernel definitions mountns uses that the
 * libc headers lack (glibc 2.36 and older), each behind #ifndef so newer
 * headers win. The system headers that may define them come first, so the
 * order in which a .c file includes things changes nothing.
 *
 * Constants keep the kernel's own names (MOUNT_ATTR_RDONLY, STATX_MNT_ID).
 * Structures and the few constants a libc header declares in a form #ifndef
 * cannot test (an enum, a struct) take an lmns_ name, so a header that has
 * them does not clash.
 */
#ifndef LMNS_UAPI_H
#define LMNS_UAPI_H

#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>

/* ---- system call numbers ------------------------------------------------
 *
 * The libc's SYS_* where it has them, else the kernel headers' __NR_*.
 * The calls of Linux 5.2 and later have one number on every architecture
 * (include/uapi/asm-generic/unistd.h) except alpha (+110), ia64 (+1024),
 * mips (+4000/5000/6000) and x32 (| 0x40000000): there the headers must
 * know them, or the build stops here.
 */
#if defined(__alpha__) || defined(__ia64__) || defined(__mips__) || \
    (defined(__x86_64__) && defined(__ILP32__))
#define LMNS_NR(nr) (-1)
#define LMNS_NR_NOT_GENERIC 1
#else
#define LMNS_NR(nr) (nr)
#endif
#ifndef SYS_open_tree
#define SYS_open_tree LMNS_NR(428)
#endif
#ifndef SYS_move_mount
#define SYS_move_mount LMNS_NR(429)
#endif
#ifndef SYS_fsopen
#define SYS_fsopen LMNS_NR(430)
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig LMNS_NR(431)
#endif
#ifndef SYS_fsmount
#define SYS_fsmount LMNS_NR(432)
#endif
#ifndef SYS_mount_setattr	/* Linux 5.12 */
#define SYS_mount_setattr LMNS_NR(442)
#endif
#ifndef SYS_statmount		/* Linux 6.8; glibc 2.36 lists it not */
#ifdef __NR_statmount
#define SYS_statmount __NR_statmount
#else
#define SYS_statmount LMNS_NR(457)
#endif
#endif
#ifndef SYS_listmount		/* Linux 6.8 */
#ifdef __NR_listmount
#define SYS_listmount __NR_listmount
#else
#define SYS_listmount LMNS_NR(458)
#endif
#endif
#ifdef LMNS_NR_NOT_GENERIC
#if SYS_open_tree < 0 || SYS_move_mount < 0 || SYS_fsopen < 0 || \
    SYS_fsconfig < 0 || SYS_fsmount < 0 || SYS_mount_setattr < 0 || \
    SYS_statmount < 0 || SYS_listmount < 0
#error "mountns: this architecture numbers the new mount calls its own way: build with kernel headers >= 6.8"
#endif
#endif
/* statx (Linux 4.11) predates the common numbering: one per architecture
 * (arch/x86/entry/syscalls/syscall_64.tbl and syscall_32.tbl,
 * arch/arm/tools/syscall.tbl, include/uapi/asm-generic/unistd.h) */
#ifndef SYS_statx
#if defined(__x86_64__) && !defined(__ILP32__)
#define SYS_statx 332
#elif defined(__i386__)
#define SYS_statx 383
#elif defined(__arm__)
#define SYS_statx 397
#elif defined(__aarch64__) || defined(__riscv) || defined(__loongarch__)
#define SYS_statx 291
#else
#error "mountns: no statx number for this architecture: build with kernel headers >= 4.11"
#endif
#endif

/* ---- include/uapi/linux/sched.h: namespace kinds ------------------------ */
#ifndef CLONE_NEWCGROUP		/* Linux 4.6 */
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef CLONE_NEWTIME		/* Linux 5.6 */
#define CLONE_NEWTIME 0x00000080
#endif

/* ---- include/uapi/linux/fcntl.h: *at flags ------------------------------ */
#ifndef AT_SYMLINK_NOFOLLOW
#define AT_SYMLINK_NOFOLLOW 0x100
#endif
#ifndef AT_NO_AUTOMOUNT
#define AT_NO_AUTOMOUNT 0x800
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
#ifndef AT_RECURSIVE		/* Linux 5.2 */
#define AT_RECURSIVE 0x8000
#endif

/* ---- include/uapi/linux/mount.h: mount(2) flags ------------------------- */
#ifndef MS_NOSYMFOLLOW		/* Linux 5.10 */
#define MS_NOSYMFOLLOW 256
#endif
#ifndef MS_LAZYTIME		/* Linux 4.0 */
#define MS_LAZYTIME (1 << 25)
#endif

/* include/linux/fs.h: the SB_* flags of statmount's sb_flags. Not uapi:
 * the kernel keeps them equal to MS_RDONLY, MS_SYNCHRONOUS, MS_DIRSYNC and
 * MS_LAZYTIME, which is why statmount can report them. */
#define LMNS_SB_RDONLY 1
#define LMNS_SB_SYNCHRONOUS 16
#define LMNS_SB_DIRSYNC 128
#define LMNS_SB_LAZYTIME (1 << 25)

/* ---- include/uapi/linux/mount.h: the new mount API ---------------------- */
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_SYMLINKS
#define MOVE_MOUNT_F_SYMLINKS 0x00000001
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOVE_MOUNT_T_SYMLINKS
#define MOVE_MOUNT_T_SYMLINKS 0x00000010
#endif
#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif
#ifndef MOVE_MOUNT_SET_GROUP	/* Linux 5.15 */
#define MOVE_MOUNT_SET_GROUP 0x00000100
#endif
#ifndef MOVE_MOUNT_BENEATH	/* Linux 6.5 */
#define MOVE_MOUNT_BENEATH 0x00000200
#endif
#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x00000001
#endif
#ifndef FSMOUNT_CLOEXEC
#define FSMOUNT_CLOEXEC 0x00000001
#endif

/* enum fsconfig_command: glibc declares it as an enum (no macro to test) */
#define LMNS_FSCONFIG_SET_FLAG 0
#define LMNS_FSCONFIG_SET_STRING 1
#define LMNS_FSCONFIG_CMD_CREATE 6

/* MOUNT_ATTR_*: mount_setattr, fsmount, and statmount's mnt_attr */
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
#ifndef MOUNT_ATTR_NOSUID
#define MOUNT_ATTR_NOSUID 0x00000002
#endif
#ifndef MOUNT_ATTR_NODEV
#define MOUNT_ATTR_NODEV 0x00000004
#endif
#ifndef MOUNT_ATTR_NOEXEC
#define MOUNT_ATTR_NOEXEC 0x00000008
#endif
#ifndef MOUNT_ATTR__ATIME
#define MOUNT_ATTR__ATIME 0x00000070
#endif
#ifndef MOUNT_ATTR_RELATIME
#define MOUNT_ATTR_RELATIME 0x00000000
#endif
#ifndef MOUNT_ATTR_NOATIME
#define MOUNT_ATTR_NOATIME 0x00000010
#endif
#ifndef MOUNT_ATTR_STRICTATIME
#define MOUNT_ATTR_STRICTATIME 0x00000020
#endif
#ifndef MOUNT_ATTR_NODIRATIME
#define MOUNT_ATTR_NODIRATIME 0x00000080
#endif
#ifndef MOUNT_ATTR_IDMAP		/* Linux 5.12 */
#define MOUNT_ATTR_IDMAP 0x00100000
#endif
#ifndef MOUNT_ATTR_NOSYMFOLLOW	/* Linux 5.14 */
#define MOUNT_ATTR_NOSYMFOLLOW 0x00200000
#endif

/* struct mount_attr (MOUNT_ATTR_SIZE_VER0) */
struct lmns_mount_attr {
	uint64_t attr_set;
	uint64_t attr_clr;
	uint64_t propagation;
	uint64_t userns_fd;
};

/* ---- include/uapi/linux/mount.h: listmount(2), statmount(2) ------------- */

/* struct statmount, as of Linux 6.15 */
struct lmns_statmount {
	uint32_t size;
	uint32_t mnt_opts;		/* [str] fs options, 6.11 */
	uint64_t mask;
	uint32_t sb_dev_major;
	uint32_t sb_dev_minor;
	uint64_t sb_magic;
	uint32_t sb_flags;
	uint32_t fs_type;		/* [str] */
	uint64_t mnt_id;		/* unique */
	uint64_t mnt_parent_id;
	uint32_t mnt_id_old;		/* the IDs of mountinfo */
	uint32_t mnt_parent_id_old;
	uint64_t mnt_attr;		/* MOUNT_ATTR_* */
	uint64_t mnt_propagation;	/* MS_SHARED|MS_SLAVE|... */
	uint64_t mnt_peer_group;
	uint64_t mnt_master;
	uint64_t propagate_from;
	uint32_t mnt_root;		/* [str] */
	uint32_t mnt_point;		/* [str] */
	uint64_t mnt_ns_id;
	uint32_t fs_subtype;		/* [str] 6.13 */
	uint32_t sb_source;		/* [str] 6.13 */
	uint32_t opt_num;
	uint32_t opt_array;
	uint32_t opt_sec_num;
	uint32_t opt_sec_array;
	uint64_t supported_mask;	/* 6.15 */
	uint32_t mnt_uidmap_num;
	uint32_t mnt_uidmap;
	uint32_t mnt_gidmap_num;
	uint32_t mnt_gidmap;
	uint64_t spare2[43];
	char str[];
};

/* struct mnt_id_req, MNT_ID_REQ_SIZE_VER1 */
struct lmns_mnt_id_req {
	uint32_t size;
	uint32_t spare;
	uint64_t mnt_id;
	uint64_t param;
	uint64_t mnt_ns_id;		/* 6.11 */
};
#define LMNS_MNT_ID_REQ_SIZE_VER0 24
#define LMNS_MNT_ID_REQ_SIZE_VER1 32

/* statmount mask bits */
#ifndef STATMOUNT_SB_BASIC
#define STATMOUNT_SB_BASIC 0x00000001U
#define STATMOUNT_MNT_BASIC 0x00000002U
#define STATMOUNT_PROPAGATE_FROM 0x00000004U
#define STATMOUNT_MNT_ROOT 0x00000008U
#define STATMOUNT_MNT_POINT 0x00000010U
#define STATMOUNT_FS_TYPE 0x00000020U
#endif
#ifndef STATMOUNT_MNT_NS_ID
#define STATMOUNT_MNT_NS_ID 0x00000040U
#endif
#ifndef STATMOUNT_MNT_OPTS
#define STATMOUNT_MNT_OPTS 0x00000080U
#endif
#ifndef STATMOUNT_FS_SUBTYPE
#define STATMOUNT_FS_SUBTYPE 0x00000100U
#endif
#ifndef STATMOUNT_SB_SOURCE
#define STATMOUNT_SB_SOURCE 0x00000200U
#endif
#ifndef STATMOUNT_SUPPORTED_MASK
#define STATMOUNT_SUPPORTED_MASK 0x00001000U
#endif
#ifndef LSMT_ROOT
#define LSMT_ROOT 0xffffffffffffffffULL
#endif
#ifndef LISTMOUNT_REVERSE
#define LISTMOUNT_REVERSE 1U
#endif

/* ---- include/uapi/linux/stat.h: the mount ID of statx ------------------- */

/* struct statx up to stx_mnt_id, padded to its full 256 bytes (glibc
 * 2.36's struct statx has no stx_mnt_id) */
struct lmns_statx {
	uint32_t stx_mask;
	uint32_t stx_blksize;
	uint64_t stx_attributes;
	uint32_t stx_nlink;
	uint32_t stx_uid;
	uint32_t stx_gid;
	uint16_t stx_mode;
	uint16_t spare0;
	uint64_t stx_ino;
	uint64_t stx_size;
	uint64_t stx_blocks;
	uint64_t stx_attributes_mask;
	uint64_t stx_times[8];	/* atime, btime, ctime, mtime */
	uint32_t stx_rdev_major;
	uint32_t stx_rdev_minor;
	uint32_t stx_dev_major;
	uint32_t stx_dev_minor;
	uint64_t stx_mnt_id;
	uint64_t spare[13];
};
#ifndef STATX_MNT_ID		/* Linux 5.8 */
#define STATX_MNT_ID 0x00001000U
#endif
#ifndef STATX_MNT_ID_UNIQUE	/* Linux 6.8 */
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif

/* ---- include/uapi/linux/nsfs.h ------------------------------------------ */
#ifndef NS_GET_MNTNS_ID		/* Linux 6.11 */
#define NS_GET_MNTNS_ID _IOR(0xb7, 0x5, uint64_t)
#endif

/* ---- include/uapi/linux/fanotify.h: mount events (Linux 6.15) ----------- */
#ifndef FAN_MNT_ATTACH
#define FAN_MNT_ATTACH 0x01000000
#endif
#ifndef FAN_MNT_DETACH
#define FAN_MNT_DETACH 0x02000000
#endif
#ifndef FAN_REPORT_MNT		/* fanotify_init: events carry a mount ID */
#define FAN_REPORT_MNT 0x00004000
#endif
#ifndef FAN_MARK_MNTNS		/* fanotify_mark: the object is an nsfs fd */
#define FAN_MARK_MNTNS 0x00000110
#endif
#ifndef FAN_EVENT_INFO_TYPE_MNT
#define FAN_EVENT_INFO_TYPE_MNT 7
#endif
#ifndef FAN_Q_OVERFLOW		/* 2.6.37 */
#define FAN_Q_OVERFLOW 0x00004000
#endif

/* struct fanotify_event_info_mnt */
struct lmns_fan_info_mnt {
	uint8_t info_type;
	uint8_t pad;
	uint16_t len;
	uint64_t mnt_id;
};

/* ---- include/uapi/asm-generic/mman-common.h ----------------------------- */
#ifndef MADV_COLLAPSE		/* Linux 6.1: huge pages for a range, now */
#define MADV_COLLAPSE 25
#endif

#endif
