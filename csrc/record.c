/*
 * record.c - the one builder of mount records, for mountinfo.c (text) and
 * statmount.c (statmount(2)): the field names, the propagation fields and
 * the propagation word live here once, so the two sources cannot drift.
 *
 * A listing pushes the keys once and reuses them for every record, and
 * keeps the last string of each repeating field (neighbours, such as the
 * binds of one filesystem, mostly repeat them), so a record costs few new
 * strings: at 10,000 mounts the table building, not the system calls or
 * the parsing, is what costs.
 */
#define _GNU_SOURCE
#include <string.h>

#include "lmns.h"

/* the record fields, in LMNS_K_* order */
static const char *const key_names[LMNS_K_FIELDS] = {
	"id", "parent_id", "major", "minor", "root", "target", "options",
	"fstype", "source", "super_options", "shared", "master",
	"propagate_from", "unbindable", "propagation", "unique_id",
	"parent_unique_id"
};

/* The name of field k (LMNS_K_*): the JSON of tree.c lists the fields of
 * record.FIELDS (k < LMNS_K_UNIQUE_ID) in this order. */
const char *lmns_record_key(int k)
{
	return key_names[k];
}

/* ---- the propagation word ------------------------------------------- */

#define LMNS_PROPAGATION_SHARED 1
#define LMNS_PROPAGATION_SLAVE 2
#define LMNS_PROPAGATION_UNBINDABLE 4
#define LMNS_PROPAGATION_WORDS 8

/*
 * One word for a mount's propagation, shared by mountinfo and statmount
 * records, indexed by LMNS_PROPAGATION_SHARED | _SLAVE | _UNBINDABLE. It
 * is findmnt's PROPAGATION column (misc-utils/findmnt.c: "shared" or
 * "private", then ",slave", then ",unbindable") without the "private,"
 * that findmnt puts before "slave" and "unbindable": each word names the
 * --make-* operations that give that state, and no flag is ever lost. The
 * kernel itself shows only the first five (making a mount shared clears
 * unbindable, making it unbindable drops its master and peers), but
 * mountinfo text may say any of the eight.
 */
static const char *const propagation_words[LMNS_PROPAGATION_WORDS] = {
	"private", "shared", "slave", "shared,slave",
	"unbindable", "shared,unbindable", "slave,unbindable",
	"shared,slave,unbindable"
};

static int lmns_propagation(int shared, int slave, int unbindable)
{
	return (shared ? LMNS_PROPAGATION_SHARED : 0) |
	       (slave ? LMNS_PROPAGATION_SLAVE : 0) |
	       (unbindable ? LMNS_PROPAGATION_UNBINDABLE : 0);
}

/* ---- the builder ------------------------------------------------------ */

/* stack index of the value pushed for word w */
#define LMNS_WORD(b, w) ((b)->keys + LMNS_K_FIELDS + (w))

void lmns_builder_init(lua_State *L, lmns_builder *b)
{
	int i;

	luaL_checkstack(L, LMNS_K_FIELDS + LMNS_PROPAGATION_WORDS +
			LMNS_M_COUNT + 8, "mount records");
	b->keys = lua_gettop(L) + 1;
	for (i = 0; i < LMNS_K_FIELDS; i++)
		lua_pushstring(L, key_names[i]);
	for (i = 0; i < LMNS_PROPAGATION_WORDS; i++)
		lua_pushstring(L, propagation_words[i]);
	b->memo = lua_gettop(L) + 1;
	for (i = 0; i < LMNS_M_COUNT; i++) {
		lua_pushnil(L);
		b->len[i] = (size_t)-1;
	}
}

/* Push s, the string of memo slot m when it is the same text. */
static void lmns_memo_push(lua_State *L, lmns_builder *b, int m,
			   const char *s, size_t len)
{
	if (b->len[m] == len && memcmp(b->s[m], s, len) == 0) {
		lua_pushvalue(L, b->memo + m);
		return;
	}
	lua_pushlstring(L, s, len);
	if (len <= LMNS_MEMO_MAX) {
		memcpy(b->s[m], s, len);
		b->len[m] = len;
		lua_pushvalue(L, -1);
		lua_replace(L, b->memo + m);
	}
}

/* Push the key k: the record's value goes on top, then lua_rawset(L, -3). */
void lmns_rec_key(lua_State *L, const lmns_builder *b, int k)
{
	lua_pushvalue(L, b->keys + k);
}

void lmns_rec_int(lua_State *L, const lmns_builder *b, int k, lua_Integer v)
{
	lua_pushvalue(L, b->keys + k);
	lua_pushinteger(L, v);
	lua_rawset(L, -3);
}

void lmns_rec_str(lua_State *L, const lmns_builder *b, int k, const char *s,
		  size_t len)
{
	lua_pushvalue(L, b->keys + k);
	lua_pushlstring(L, s, len);
	lua_rawset(L, -3);
}

void lmns_rec_memo(lua_State *L, lmns_builder *b, int k, int m,
		   const char *s, size_t len)
{
	lua_pushvalue(L, b->keys + k);
	lmns_memo_push(L, b, m, s, len);
	lua_rawset(L, -3);
}

/*
 * The propagation fields of the record on top: shared, master and
 * propagate_from (peer group IDs, set only when not 0), unbindable, and
 * the propagation word, which names exactly the flags the record has.
 */
void lmns_rec_propagation(lua_State *L, const lmns_builder *b,
			  lua_Integer shared, lua_Integer master,
			  lua_Integer from, int unbindable)
{
	if (shared)
		lmns_rec_int(L, b, LMNS_K_SHARED, shared);
	if (master)
		lmns_rec_int(L, b, LMNS_K_MASTER, master);
	if (from)
		lmns_rec_int(L, b, LMNS_K_PROPAGATE_FROM, from);
	lua_pushvalue(L, b->keys + LMNS_K_UNBINDABLE);
	lua_pushboolean(L, unbindable);
	lua_rawset(L, -3);
	lua_pushvalue(L, b->keys + LMNS_K_PROPAGATION);
	lua_pushvalue(L, LMNS_WORD(b, lmns_propagation(shared != 0,
			master != 0, unbindable)));
	lua_rawset(L, -3);
}
