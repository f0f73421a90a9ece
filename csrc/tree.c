/*
 * tree.c - the findmnt-like tree of a mount table, rendered in C.
 *
 * tostring() of a 10,000-mount table must stay linear and far cheaper than
 * findmnt: in Lua one string.format per row cost ~1.5 us; here each record
 * is read once, the parent look-up is a hash, and the text goes straight
 * into one luaL_Buffer.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "lmns.h"

typedef struct lmns_row {
	lua_Integer id, parent;
	int first_child, last_child, next_sibling;	/* indices or -1 */
	int depth, last;	/* depth in the tree; last child of its parent */
} lmns_row;

/* A scratch array owned by a userdata on the stack: freed by the GC even
 * when a Lua error unwinds past us. */
static void *lmns_scratch(lua_State *L, size_t n, size_t size)
{
	void *p = lua_newuserdata(L, n * size > 0 ? n * size : 1);

	memset(p, 0xff, n * size);	/* all ints -1 */
	return p;
}

static size_t lmns_hash_size(size_t n)
{
	size_t h = 16;

	while (h < 2 * n)
		h <<= 1;
	return h;
}

/* Open addressing: slot -> row index + 1 (0 = empty). */
static int lmns_hash_find(const int *slots, size_t mask, const lmns_row *rows,
			  lua_Integer id)
{
	size_t h = ((size_t)id * 2654435761u) & mask;

	while (slots[h]) {
		if (rows[slots[h] - 1].id == id)
			return slots[h] - 1;
		h = (h + 1) & mask;
	}
	return -1;
}

static const char *lmns_field_str(lua_State *L, int rec, const char *k,
				  size_t *len)
{
	const char *s;

	lua_getfield(L, rec, k);
	/* only a real string: the record keeps it alive after the pop (a
	 * number converted here would live on the stack only) */
	s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, len) : NULL;
	lua_pop(L, 1);
	if (!s) {
		*len = 0;
		return "";
	}
	return s;
}

/* a peer group ID as text ("" when absent) into buf */
static void lmns_group_str(lua_State *L, int rec, const char *k, char *buf,
			   size_t size)
{
	lua_getfield(L, rec, k);
	if (lua_type(L, -1) == LUA_TNUMBER)
		snprintf(buf, size, "%lld", (long long)lua_tointeger(L, -1));
	else
		buf[0] = '\0';
	lua_pop(L, 1);
}

static lua_Integer lmns_field_int(lua_State *L, int rec, const char *k)
{
	lua_Integer v;

	lua_getfield(L, rec, k);
	v = lua_tointeger(L, -1);
	lua_pop(L, 1);
	return v;
}

/* display columns of a UTF-8 string: continuation bytes take none */
static size_t lmns_width(const char *s, size_t len)
{
	size_t i, w = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			w++;
	return w;
}

static void lmns_pad(luaL_Buffer *b, size_t have, size_t want)
{
	for (; have < want; have++)
		luaL_addchar(b, ' ');
}

/* Link each row under its parent (mountinfo order kept); returns the
 * index of the first root, roots chained through next_sibling. */
static int lmns_tree_link(lmns_row *rows, int n, const int *slots,
			  size_t mask)
{
	int i, first_root = -1, last_root = -1;

	for (i = 0; i < n; i++) {
		int p = lmns_hash_find(slots, mask, rows, rows[i].parent);

		if (p >= 0 && p != i) {
			if (rows[p].last_child < 0)
				rows[p].first_child = i;
			else
				rows[rows[p].last_child].next_sibling = i;
			rows[p].last_child = i;
		} else {
			if (last_root < 0)
				first_root = i;
			else
				rows[last_root].next_sibling = i;
			last_root = i;
		}
	}
	return first_root;
}

/* Depth-first walk from row `from` (depth 0) appending to order[k...]. */
static int lmns_tree_walk(lmns_row *rows, int from, int last, int *order,
			  int k, int *stack, char *seen)
{
	int top = 0, i, c, j, cnt;

	rows[from].depth = 0;
	rows[from].last = last;
	stack[top++] = from;
	while (top > 0) {
		i = stack[--top];
		if (seen[i])
			continue;
		seen[i] = 1;
		order[k++] = i;
		cnt = 0;
		for (c = rows[i].first_child; c >= 0; c = rows[c].next_sibling) {
			if (seen[c])
				continue;
			rows[c].depth = rows[i].depth + 1;
			rows[c].last = rows[c].next_sibling < 0;
			stack[top + cnt++] = c;
		}
		for (j = 0; j < cnt / 2; j++) {	/* pop gives mountinfo order */
			int t = stack[top + j];

			stack[top + j] = stack[top + cnt - 1 - j];
			stack[top + cnt - 1 - j] = t;
		}
		top += cnt;
	}
	return k;
}

/* Depth-first order of every row: the roots in mountinfo order, then any
 * row no root reaches (a parent cycle, possible only in crafted text), so
 * no record is ever left out. A row is pushed at most once per parent
 * link, so the stack of n entries is enough. */
static int lmns_tree_order(lmns_row *rows, int n, int first_root, int *order,
			   int *stack, char *seen)
{
	int k = 0, i;

	for (i = first_root; i >= 0; i = rows[i].next_sibling)
		k = lmns_tree_walk(rows, i, rows[i].next_sibling < 0, order, k,
				   stack, seen);
	for (i = 0; i < n; i++)
		if (!seen[i])
			k = lmns_tree_walk(rows, i, 1, order, k, stack, seen);
	return k;
}

/***
@module mountns.core
*/

/***
Mount tables as text
@section tree
*/

/***
The findmnt-like tree of a mount table: TARGET (with the tree drawn
in front), SOURCE, FSTYPE, ID, PARENT, PROPAGATION, GROUP (shared:N)
and MASTER (master:N), columns aligned by display width. This is
`tostring()` of a mount table. Linear in the number of mounts.
@function tree_text
@tparam table t a mount table (an array of records)
@treturn string the tree, one line per mount after a header line
@raise "mount table entry N is not a record"
*/
static int lmns_tree_text(lua_State *L)
{
	int n, i, k, first_root, *slots, *order, *stack;
	size_t mask, w1 = 6, w2 = 6, w3 = 6, len;
	lmns_row *rows;
	char *seen, *lastflags, num[64];
	luaL_Buffer b;

	luaL_checktype(L, 1, LUA_TTABLE);
	n = (int)lua_rawlen(L, 1);
	mask = lmns_hash_size((size_t)n) - 1;
	rows = lmns_scratch(L, (size_t)n, sizeof *rows);		/* 2 */
	slots = lmns_scratch(L, mask + 1, sizeof *slots);		/* 3 */
	memset(slots, 0, (mask + 1) * sizeof *slots);
	order = lmns_scratch(L, (size_t)n, sizeof *order);		/* 4 */
	stack = lmns_scratch(L, (size_t)n, sizeof *stack);		/* 5 */
	seen = lmns_scratch(L, (size_t)n, 1);				/* 6 */
	memset(seen, 0, (size_t)n);
	for (i = 0; i < n; i++) {
		lua_rawgeti(L, 1, i + 1);
		if (!lua_istable(L, -1))
			return luaL_error(L, "mount table entry %d is not a record",
					  i + 1);
		rows[i].id = lmns_field_int(L, -1, "id");
		rows[i].parent = lmns_field_int(L, -1, "parent_id");
		lua_pop(L, 1);
		if (lmns_hash_find(slots, mask, rows, rows[i].id) < 0) {
			size_t h = ((size_t)rows[i].id * 2654435761u) & mask;

			while (slots[h])
				h = (h + 1) & mask;
			slots[h] = i + 1;
		}
	}
	first_root = lmns_tree_link(rows, n, slots, mask);
	k = lmns_tree_order(rows, n, first_root, order, stack, seen);
	lastflags = lmns_scratch(L, (size_t)n + 1, 1);			/* 7 */

	for (i = 0; i < k; i++) {	/* column widths */
		int r = order[i];

		lua_rawgeti(L, 1, r + 1);
		lmns_field_str(L, -1, "target", &len);
		if (2 * (size_t)rows[r].depth + len > w1)
			w1 = 2 * (size_t)rows[r].depth + len;
		lmns_field_str(L, -1, "source", &len);
		if (len > w2)
			w2 = len;
		lmns_field_str(L, -1, "fstype", &len);
		if (len > w3)
			w3 = len;
		lua_pop(L, 1);
	}

	luaL_buffinit(L, &b);
	luaL_addstring(&b, "TARGET");
	lmns_pad(&b, 6, w1);
	luaL_addstring(&b, " SOURCE");
	lmns_pad(&b, 6, w2);
	luaL_addstring(&b, " FSTYPE");
	lmns_pad(&b, 6, w3);
	luaL_addstring(&b, "     ID PARENT PROPAGATION  GROUP MASTER");
	for (i = 0; i < k; i++) {
		int r = order[i], d = rows[r].depth, j;
		const char *t, *src, *fs, *prop;
		size_t tl, sl, fl, pl;
		char tail[160];

		/* read the record first: between buffer operations the stack
		 * must stay where the buffer left it */
		lua_rawgeti(L, 1, r + 1);
		t = lmns_field_str(L, -1, "target", &tl);
		src = lmns_field_str(L, -1, "source", &sl);
		fs = lmns_field_str(L, -1, "fstype", &fl);
		prop = lmns_field_str(L, -1, "propagation", &pl);
		lmns_group_str(L, -1, "shared", num, sizeof num / 2);
		lmns_group_str(L, -1, "master", num + sizeof num / 2,
			       sizeof num / 2);
		lua_pop(L, 1);
		snprintf(tail, sizeof tail, " %6lld %6lld ", (long long)rows[r].id,
			 (long long)rows[r].parent);

		luaL_addchar(&b, '\n');
		/* the prefix: one column pair per ancestor level, then the glyph */
		lastflags[d] = (char)rows[r].last;
		for (j = 1; j < d; j++)
			luaL_addstring(&b, lastflags[j] ? "  " : "\xe2\x94\x82 ");
		if (d > 0)
			luaL_addstring(&b, rows[r].last ? "\xe2\x94\x94\xe2\x94\x80"
							: "\xe2\x94\x9c\xe2\x94\x80");
		luaL_addlstring(&b, t, tl);
		lmns_pad(&b, 2 * (size_t)d + lmns_width(t, tl), w1);
		luaL_addchar(&b, ' ');
		luaL_addlstring(&b, src, sl);
		lmns_pad(&b, sl, w2);
		luaL_addchar(&b, ' ');
		luaL_addlstring(&b, fs, fl);
		lmns_pad(&b, fl, w3);
		luaL_addstring(&b, tail);
		luaL_addlstring(&b, prop, pl);
		lmns_pad(&b, pl, 12);
		snprintf(tail, sizeof tail, " %6s %6s", num, num + sizeof num / 2);
		luaL_addstring(&b, tail);
	}
	luaL_addchar(&b, '\n');
	luaL_pushresult(&b);
	return 1;
}

void lmns_tree_open(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{ "tree_text", lmns_tree_text },
		{ NULL, NULL }
	};

	luaL_setfuncs(L, funcs, 0);
}
