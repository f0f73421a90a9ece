/*
 * lmns.h - helpers shared by the C files of mountns.core.
 *
 * Each csrc/X.c exports one lmns_X_open(L), called from luaopen_mountns_core
 * with the module table on top of the stack; everything else is static or
 * declared here.
 */
#ifndef LMNS_H
#define LMNS_H

#include <stddef.h>
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
void lmns_errors_open(lua_State *L);

/* args.c: every argument checker */
unsigned long lmns_checkflags(lua_State *L, int arg, const lmns_flag *set);
int lmns_optbool(lua_State *L, int arg, const char *field, int def);
void lmns_checkkeys(lua_State *L, int arg, const char *const known[]);
int lmns_optoption(lua_State *L, int arg, const char *field, int def,
		   const char *const names[]);
const char *lmns_optfield(lua_State *L, int arg, const char *field);
const char *lmns_checkcstring(lua_State *L, int arg, const char *what);
const char *lmns_optcstring(lua_State *L, int arg, const char *def,
			    const char *what);
int lmns_checkoption(lua_State *L, int arg, const char *def,
		     const char *const names[]);
/* a path argument: raises "path contains a NUL byte" */
#define lmns_checkpath(L, arg) lmns_checkcstring((L), (arg), "path")
#define lmns_optpath(L, arg, def) lmns_optcstring((L), (arg), (def), "path")
void lmns_flags_register(lua_State *L, const char *kind, const lmns_flag *set);
void lmns_args_open(lua_State *L);

/* mountinfo.c: the propagation word of a record (mountinfo and statmount),
 * lmns_propagation_words[lmns_propagation(shared, slave, unbindable)] */
#define LMNS_PROPAGATION_SHARED 1
#define LMNS_PROPAGATION_SLAVE 2
#define LMNS_PROPAGATION_UNBINDABLE 4
#define LMNS_PROPAGATION_WORDS 8
extern const char *const lmns_propagation_words[LMNS_PROPAGATION_WORDS];
int lmns_propagation(int shared, int slave, int unbindable);

/* procfs.c: /proc access that survives pivot_root (see lmns_procfs_openat) */
int lmns_procfs_openat(lua_State *L, const char *relpath, int flags);
void lmns_procfs_open(lua_State *L);

/* ns.c: the fd of the namespace handle at idx (option field of argument
 * arg) of that kind (NULL: any), or raise */
int lmns_ns_checkfd(lua_State *L, int idx, int arg, const char *field,
		    const char *kind);

/* newapi.c: the fd of a mount fd userdata at arg, -1 if arg is none;
 * the mount ID of dfd/path via statx (*unique: the 64-bit unique ID) */
int lmns_mountfd_fd(lua_State *L, int arg);
int lmns_mount_id_of(int dfd, const char *path, int flags,
		     unsigned long long *id, int *unique);

/* tree.c: append s escaped by the one rule of every output (control
 * characters, DEL, C1, non-UTF-8 bytes, the backslash and the `extra`
 * ASCII characters as \ooo); returns its display columns */
size_t lmns_escape_add(luaL_Buffer *b, const char *s, size_t len,
		       const char *extra, size_t elen);

/* the areas */
void lmns_ns_open(lua_State *L);
void lmns_mount_open(lua_State *L);
void lmns_mountinfo_open(lua_State *L);
void lmns_process_open(lua_State *L);
void lmns_tree_open(lua_State *L);
void lmns_newapi_open(lua_State *L);
void lmns_statmount_open(lua_State *L);
void lmns_watch_open(lua_State *L);

#endif
