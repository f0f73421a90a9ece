/*
 * lmns.h - helpers shared by the C files of mountns.core.
 *
 * Each csrc/X.c exports one lmns_X_open(L), called from luaopen_mountns_core
 * with the module table on top of the stack; everything else is static or
 * declared here.
 */
#ifndef LMNS_H
#define LMNS_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <lua.h>
#include <lauxlib.h>

/*
 * Lua 5.1 lacks a few 5.2+ calls; map them once here. LuaJIT 2.1 reports
 * 5.1 but has the 5.2 auxiliary calls already (it defines luaL_newlib):
 * only lua_rawlen is missing there. Every luaL_setfuncs in mountns has no
 * upvalues, so luaL_register is an exact stand-in.
 */
#if LUA_VERSION_NUM < 502
#define lua_rawlen(L, i) lua_objlen((L), (i))
#ifndef luaL_newlib
#define LMNS_COMPAT_TESTUDATA 1
#define luaL_setfuncs(L, l, n) luaL_register((L), NULL, (l))
#define luaL_newlib(L, l) (lua_newtable(L), luaL_register((L), NULL, (l)))
#define luaL_testudata lmns_testudata
void *lmns_testudata(lua_State *L, int i, const char *tname);
#endif
#endif

/*
 * A 64-bit kernel ID (the unique mount ID of statx/statmount, an inode
 * number) as a Lua number. Lua 5.3+ integers hold it exactly. On 5.1 and
 * LuaJIT every number is a double, exact up to 2^53: the unique mount ID is
 * a counter that starts at 2^31, and inode numbers of nsfs are 32-bit, so
 * real IDs fit; one past 2^53 becomes its decimal string rather than be
 * rounded into a different, wrong ID.
 */
static inline void lmns_pushid(lua_State *L, unsigned long long id)
{
#if LUA_VERSION_NUM < 503
	if (id > (1ULL << 53)) {
		char buf[24];
		int i = (int)sizeof buf;

		do {	/* lua_pushfstring of 5.1 has no 64-bit format */
			buf[--i] = (char)('0' + id % 10);
			id /= 10;
		} while (id);
		lua_pushlstring(L, buf + i, sizeof buf - (size_t)i);
		return;
	}
#endif
	lua_pushinteger(L, (lua_Integer)id);
}

/* One named flag of a table-driven flag set (see args.c). A set ends
 * with a NULL name; its value LMNS_FLAGS_RAW lets the set take integers
 * (raw bits) besides names. */
typedef struct lmns_flag {
	const char *name;
	unsigned long value;
} lmns_flag;
#define LMNS_FLAGS_RAW 1UL

/* errors.c */
const char *lmns_errno_name(int err);
int lmns_fail(lua_State *L, int err, const char *op, const char *path1,
	      const char *path2);
int lmns_result(lua_State *L, int rc, const char *op, const char *path1,
		const char *path2);
void lmns_errors_open(lua_State *L);

/* args.c: every argument checker. lmns_checknomore(L, n): every function
 * calls it first; a function that takes n arguments raises on an n+1th */
void lmns_checknomore(lua_State *L, int n);
int lmns_checkfd(lua_State *L, int arg);
pid_t lmns_checkpid(lua_State *L, int arg);
double lmns_opttimeout(lua_State *L, int arg);
unsigned long lmns_checkflags(lua_State *L, int arg, const lmns_flag *set);
int lmns_optbool(lua_State *L, int arg, const char *field, int def);
void lmns_checkkeys(lua_State *L, int arg, const char *const known[]);
int lmns_optoption(lua_State *L, int arg, const char *field, int def,
		   const char *const names[]);
const char *lmns_checkcstring(lua_State *L, int arg, const char *what);
const char *lmns_optcstring(lua_State *L, int arg, const char *def,
			    const char *what);
int lmns_checkoption(lua_State *L, int arg, const char *def,
		     const char *const names[]);
lua_Integer lmns_optinteger(lua_State *L, int arg, const char *field,
			    lua_Integer def);
lua_Integer lmns_optcount(lua_State *L, int arg, lua_Integer hi,
			  lua_Integer def);
/* a path argument: raises "path contains a NUL byte" */
const char *lmns_checkpath(lua_State *L, int arg);
const char *lmns_optpath(lua_State *L, int arg, const char *def);
void lmns_flags_register(lua_State *L, const char *kind, const lmns_flag *set);
void lmns_args_open(lua_State *L);

/*
 * record.c: the one builder of mount records (mountinfo.c, statmount.c).
 * lmns_builder_init pushes the keys (and memo slots) once per listing; the
 * record being built is on top of the stack when a lmns_rec_* is called.
 */
enum {
	LMNS_K_ID, LMNS_K_PARENT_ID, LMNS_K_MAJOR, LMNS_K_MINOR, LMNS_K_ROOT,
	LMNS_K_TARGET, LMNS_K_OPTIONS, LMNS_K_FSTYPE, LMNS_K_SOURCE,
	LMNS_K_SUPER_OPTIONS, LMNS_K_SHARED, LMNS_K_MASTER,
	LMNS_K_PROPAGATE_FROM, LMNS_K_UNBINDABLE, LMNS_K_PROPAGATION,
	LMNS_K_UNIQUE_ID, LMNS_K_PARENT_UNIQUE_ID,
	LMNS_K_FIELDS
};
/* the repeating string fields, each with the last string it had */
enum {
	LMNS_M_ROOT, LMNS_M_OPTIONS, LMNS_M_FSTYPE, LMNS_M_SOURCE,
	LMNS_M_SUPER, LMNS_M_COUNT
};
#define LMNS_MEMO_MAX 240

typedef struct lmns_builder {
	int keys;			/* stack index of the first key */
	int memo;			/* stack index of the first memo slot */
	size_t len[LMNS_M_COUNT];	/* (size_t)-1: empty slot */
	char s[LMNS_M_COUNT][LMNS_MEMO_MAX];
} lmns_builder;

const char *lmns_record_key(int k);
void lmns_builder_init(lua_State *L, lmns_builder *b);
void lmns_rec_key(lua_State *L, const lmns_builder *b, int k);
void lmns_rec_int(lua_State *L, const lmns_builder *b, int k, lua_Integer v);
void lmns_rec_str(lua_State *L, const lmns_builder *b, int k, const char *s,
		  size_t len);
void lmns_rec_memo(lua_State *L, lmns_builder *b, int k, int m,
		   const char *s, size_t len);
void lmns_rec_propagation(lua_State *L, const lmns_builder *b,
			  lua_Integer shared, lua_Integer master,
			  lua_Integer from, int unbindable);

/*
 * libmount.c: util-linux libmount, loaded on first use. The functions
 * mountns calls (its mnt_ names without the prefix), set by
 * lmns_libmount_load: NULL when loaded, else why not.
 * lmns_libmount_preload loads it now, before the process changes its root
 * or forks (out of reach after); errno is kept.
 */
#include <stdio.h>
#include <sys/types.h>
struct libmnt_fs;
struct libmnt_iter;
struct libmnt_table;
struct lmns_libmount {
	void (*free_iter)(struct libmnt_iter *);
	dev_t (*fs_get_devno)(struct libmnt_fs *);
	const char *(*fs_get_fstype)(struct libmnt_fs *);
	int (*fs_get_id)(struct libmnt_fs *);
	const char *(*fs_get_optional_fields)(struct libmnt_fs *);
	int (*fs_get_parent_id)(struct libmnt_fs *);
	const char *(*fs_get_vfs_options)(struct libmnt_fs *);
	struct libmnt_iter *(*new_iter)(int);
	struct libmnt_table *(*new_table)(void);
	int (*table_get_nents)(struct libmnt_table *);
	void *(*table_get_userdata)(struct libmnt_table *);
	int (*table_next_fs)(struct libmnt_table *, struct libmnt_iter *,
			     struct libmnt_fs **);
	int (*table_parse_stream)(struct libmnt_table *, FILE *, const char *);
	int (*table_set_parser_errcb)(struct libmnt_table *,
		int (*)(struct libmnt_table *, const char *, int));
	int (*table_set_userdata)(struct libmnt_table *, void *);
	void (*unref_table)(struct libmnt_table *);
};
extern struct lmns_libmount lmns_lm;
const char *lmns_libmount_load(void);
void lmns_libmount_preload(void);

/* procfs.c: /proc access that survives pivot_root (see lmns_procfs_openat) */
int lmns_procfs_openat(lua_State *L, const char *relpath, int flags);
void lmns_procfs_open(lua_State *L);

/*
 * handle.c: the one fd-holding userdata. Each handle struct starts with an
 * lmns_handle; each class is one static lmns_class. close, fileno, __gc,
 * __close and __tostring come from lmns_handle_newclass.
 */
typedef struct lmns_class lmns_class;
typedef struct lmns_handle {
	int fd;			/* -1 once closed, and until opened */
	const lmns_class *cls;
} lmns_handle;
struct lmns_class {
	const char *tname;	/* the metatable, "mountns.namespace" */
	const char *noun;	/* "attempt to use a closed <noun>" */
	size_t size;		/* of the whole userdata */
	/* push what tostring shows (the handle may be closed) */
	void (*name)(lua_State *L, const lmns_handle *h);
};
void *lmns_handle_new(lua_State *L, const lmns_class *cls);
void *lmns_handle_check(lua_State *L, int i, const lmns_class *cls);
void *lmns_handle_checkopen(lua_State *L, int i, const lmns_class *cls);
void lmns_handle_closefd(lmns_handle *h);
void lmns_handle_pushname(lua_State *L, const lmns_handle *h);
int lmns_handle_same(lua_State *L);
void lmns_handle_newclass(lua_State *L, const lmns_class *cls,
			  const luaL_Reg *methods, const luaL_Reg *meta);
/* the monotonic clock (s); poll with a timeout in s (< 0: for ever) */
double lmns_now(void);
double lmns_left(double timeout, double deadline);
int lmns_poll(lua_State *L, struct pollfd *pfd, nfds_t n, double timeout);

/* ns.c: namespace handles */
typedef struct lmns_ns {
	lmns_handle h;		/* h.fd: the nsfs fd */
	int nstype;		/* CLONE_NEW* of the namespace, for setns */
	unsigned long long ino;	/* the ID lsns and readlink show */
	const char *kind;	/* "mnt", "user", ... (static string) */
} lmns_ns;
/* the open handle of that kind (NULL: any) at argument arg, or raise */
lmns_ns *lmns_ns_checkarg(lua_State *L, int arg, const char *kind);
/* the same for the value at idx that is option field of argument arg */
lmns_ns *lmns_ns_checkopt(lua_State *L, int idx, int arg, const char *field,
			  const char *kind);
/* NS_GET_MNTNS_ID of a mount namespace fd: 0, or -1 with errno */
int lmns_ns_mntns_id(int fd, uint64_t *id);

/* newapi.c: the mount fd handle at arg; NULL if arg is no mount fd, a
 * closed one raises */
lmns_handle *lmns_mountfd_test(lua_State *L, int arg);

/* mountid.c: the mount ID of dfd/path via statx (*unique: the 64-bit
 * unique ID) */
int lmns_mount_id_of(int dfd, const char *path, int flags,
		     unsigned long long *id, int *unique);

/* newapi.c: whether move_mount knows flag f */
int lmns_has_move_flag(unsigned int f);

/* features.c: the probe's statmount mask, what a mountinfo record needs */
#define LMNS_SM_MASK (STATMOUNT_SB_BASIC | STATMOUNT_MNT_BASIC | \
		      STATMOUNT_MNT_ROOT | STATMOUNT_MNT_POINT | \
		      STATMOUNT_FS_TYPE | STATMOUNT_MNT_OPTS | \
		      STATMOUNT_FS_SUBTYPE | STATMOUNT_SB_SOURCE)	/* uapi.h */

/*
 * smpipe.c: the statmount(2) calls of statmount.c (struct lmns_statmount:
 * uapi.h). lmns_smbuf: a call's buffer, first the caller's (on its C
 * stack, LMNS_SM_BUFSIZE bytes: no Lua memory for an ordinary mount), then
 * a userdata in the stack slot idx that lmns_smbuf_init reserves, replaced
 * as it grows on EOVERFLOW. lmns_smbuf_statmount: one call into b; 0, or
 * -1 with errno.
 */
struct lmns_statmount;
#define LMNS_SM_BUFSIZE 4096		/* first try; grows on EOVERFLOW */
typedef struct lmns_smbuf {
	int idx;
	size_t size;
	struct lmns_statmount *sm;
} lmns_smbuf;
void lmns_smbuf_init(lua_State *L, lmns_smbuf *b,
		     struct lmns_statmount *first, size_t size);
int lmns_smbuf_statmount(lua_State *L, lmns_smbuf *b, uint64_t id,
			 uint64_t nsid, uint64_t mask);
/*
 * The pipeline: a listing of LMNS_PIPE_MIN mounts or more makes its calls
 * in a helper thread while the Lua thread builds records. lmns_pipe_start
 * pushes the job (its __gc joins the thread) and returns it, or returns
 * NULL with nothing pushed (the caller then makes the calls itself); ids
 * must outlive the job (never the caller's C stack). lmns_pipe_get: result
 * i, taken in order (b: the Lua thread's buffer for the calls it makes
 * itself); LMNS_PIPE_GONE when the mount is gone since listmount, NULL
 * with errno when its call failed; its strings at LMNS_SM_STR(sm, 1).
 * lmns_pipe_stop joins the thread and frees the results (once).
 */
typedef struct lmns_pipe lmns_pipe;
#define LMNS_PIPE_MIN 256		/* fewer mounts: one thread */
#define LMNS_PIPE_GONE ((const struct lmns_statmount *)1)
/* A result is kept as the fields of struct statmount that a record reads
 * (up to its spare words) followed by its strings: a third of the memory
 * of the whole 512-byte struct and the strings. */
#define LMNS_SM_HEAD offsetof(struct lmns_statmount, spare2)
/* The string area of a result: after the whole struct in a buffer that
 * statmount filled, after LMNS_SM_HEAD bytes in a kept copy. */
#define LMNS_SM_STR(sm, kept) \
	((kept) ? (const char *)(sm) + LMNS_SM_HEAD : (sm)->str)
lmns_pipe *lmns_pipe_start(lua_State *L, const uint64_t *ids, size_t n,
			   uint64_t nsid, uint64_t mask);
const struct lmns_statmount *lmns_pipe_get(lua_State *L, lmns_pipe *p,
					   lmns_smbuf *b, size_t i);
void lmns_pipe_stop(lmns_pipe *p);

/* tree.c: append s escaped by the one rule of every output (control
 * characters, DEL, C1, non-UTF-8 bytes, the backslash and the `extra`
 * ASCII characters as \ooo); returns its display columns */
size_t lmns_escape_add(luaL_Buffer *b, const char *s, size_t len,
		       const char *extra, size_t elen);

/* the areas */
void lmns_ns_open(lua_State *L);
void lmns_mount_open(lua_State *L);
void lmns_files_open(lua_State *L);
void lmns_mountinfo_open(lua_State *L);
void lmns_process_open(lua_State *L);
void lmns_fdio_open(lua_State *L);
void lmns_proctree_open(lua_State *L);
/* fdio.c: write all of s to fd (a socket: send with MSG_NOSIGNAL; else
 * write with SIGPIPE blocked and a SIGPIPE it raised consumed); 0 or an
 * errno */
int lmns_write_all(int fd, const char *s, size_t len);
void lmns_frame_open(lua_State *L);
void lmns_tree_open(lua_State *L);
void lmns_newapi_open(lua_State *L);
void lmns_statmount_open(lua_State *L);
void lmns_features_open(lua_State *L);
void lmns_watch_open(lua_State *L);
void lmns_heap_open(lua_State *L);

#endif
