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

/* Lua 5.1 / LuaJIT lack a few 5.2+ auxiliary calls; map them once here. */
#if LUA_VERSION_NUM < 502
#define luaL_setfuncs(L, l, n) luaL_register((L), NULL, (l))
#define luaL_newlib(L, l) (lua_newtable(L), luaL_register((L), NULL, (l)))
#define lua_rawlen(L, i) lua_objlen((L), (i))
#define luaL_testudata lmns_testudata
void *lmns_testudata(lua_State *L, int i, const char *tname);
#endif

/* One named flag of a table-driven flag set (see flags.c). */
typedef struct lmns_flag {
	const char *name;
	unsigned long value;
} lmns_flag;

/* errors.c */
const char *lmns_errno_name(int err);
int lmns_fail(lua_State *L, int err, const char *op, const char *path1,
	      const char *path2);
void lmns_errors_open(lua_State *L);

/* flags.c */
unsigned long lmns_checkflags(lua_State *L, int arg, const lmns_flag *set);
int lmns_optbool(lua_State *L, int arg, const char *field, int def);
const char *lmns_optfield(lua_State *L, int arg, const char *field);

/* proc.c: /proc access that survives pivot_root (see lmns_proc_open) */
int lmns_proc_open(lua_State *L, const char *relpath, int flags);
void lmns_proc_open_lib(lua_State *L);

/* the areas */
void lmns_ns_open(lua_State *L);
void lmns_mount_open(lua_State *L);
void lmns_mountinfo_open(lua_State *L);
void lmns_process_open(lua_State *L);

#endif
