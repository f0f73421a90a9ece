/*
 * tree.c - the findmnt-like tree of a mount table, rendered in C.
 *
 * tostring() of a 10,000-mount table must stay linear and far cheaper than
 * findmnt: in Lua one string.format per row cost ~1.5 us; here each record
 * is read once, the parent look-up is a hash, and the text goes straight
 * into one luaL_Buffer.
 *
 * It is also the one home of the escaping rule of every text mountns shows
 * (this tree, mountns.format, mountns.dot, expect's diagnostics, watch
 * lines, show --json): a mount point or source is chosen by whoever mounts
 * it, inside a container too, and a raw newline or ESC in it would forge a
 * row of the table root reads, or drive the terminal. See lmns_keep.
 */
#define _GNU_SOURCE
#include <math.h>
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

/*
 * The escaping rule. A byte is kept when it is printable ASCII other than
 * the backslash (and other than the caller's `extra` characters), or part
 * of a well-formed UTF-8 sequence that is not a C1 control (U+0080 to
 * U+009F: some terminals obey them as ESC sequences; NEL, U+0085, ends a
 * line for some readers) nor the line and paragraph separators U+2028 and
 * U+2029 (a line break to JavaScript, Python's splitlines and other
 * Unicode-aware readers: one would split a report's line, or a TAP test
 * point, in two). Every other byte --
 * C0 controls, DEL, the backslash, a byte of malformed, overlong or
 * surrogate UTF-8 -- becomes the kernel's three octal digits, \ooo, as
 * /proc/PID/mountinfo writes a newline (\012). The result is valid UTF-8
 * without any control character, and reversible: each backslash in it
 * starts an escape.
 *
 * Returns the length of the sequence kept at s (n bytes left), or 0 when
 * the byte at s is to be escaped.
 */
static size_t lmns_keep(const unsigned char *s, size_t n, const char *extra,
			size_t elen)
{
	unsigned long cp;
	size_t len, i;

	if (s[0] < 0x80) {
		if (s[0] < 0x20 || s[0] == 0x7f || s[0] == '\\' ||
		    (elen && memchr(extra, s[0], elen)))
			return 0;
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;	/* a continuation byte, or never in UTF-8 */
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
	    (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029)
		return 0;
	return len;
}

/* The length of the run at s that needs no escape; its display columns
 * (one per character) in *cols. Printable ASCII, the common case, is
 * tested inline. */
static size_t lmns_clean_run(const char *s, size_t len, const char *extra,
			     size_t elen, size_t *cols)
{
	size_t i = 0, w = 0, k;

	while (i < len) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\' &&
		    !(elen && memchr(extra, c, elen))) {
			i++;
		} else if (c >= 0x80 && (k = lmns_keep((const unsigned char *)s + i,
							 len - i, extra, elen))) {
			i += k;
		} else {
			break;
		}
		w++;
	}
	*cols = w;
	return i;
}

/* Display columns of s once escaped: an escape takes 4, a kept character 1. */
static size_t lmns_escaped_width(const char *s, size_t len, const char *extra,
				 size_t elen)
{
	size_t i = 0, w = 0, cols;

	while (i < len) {
		i += lmns_clean_run(s + i, len - i, extra, elen, &cols);
		w += cols;
		if (i < len) {	/* one byte to escape */
			i++;
			w += 4;
		}
	}
	return w;
}

/* Append s escaped (no Lua stack use but the buffer's); returns its
 * display columns. errors.c escapes the paths of its messages with it. */
size_t lmns_escape_add(luaL_Buffer *b, const char *s, size_t len,
			      const char *extra, size_t elen)
{
	size_t i = 0, w = 0, run, cols;
	char oct[4];

	while (i < len) {
		run = lmns_clean_run(s + i, len - i, extra, elen, &cols);
		luaL_addlstring(b, s + i, run);
		i += run;
		w += cols;
		if (i < len) {
			w += 4;
			unsigned char c = (unsigned char)s[i++];

			oct[0] = '\\';
			oct[1] = (char)('0' + (c >> 6));
			oct[2] = (char)('0' + ((c >> 3) & 7));
			oct[3] = (char)('0' + (c & 7));
			luaL_addlstring(b, oct, 4);
		}
	}
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
Escape a string for display: the rule of every text mountns shows. Bytes
that are C0 controls (newline, tab, ESC...), DEL, the backslash, a C1
control (U+0080 to U+009F, NEL included), of the line or paragraph
separator (U+2028, U+2029) or not part of well-formed UTF-8 become the
kernel's octal form `\ooo` (a newline: `\012`, as in /proc/PID/mountinfo).
The result is valid UTF-8 without control characters; it is reversible,
since every backslash in it starts an escape.
@function escape
@tparam string s
@tparam[opt] string extra more ASCII characters to escape (`" "` gives the
form of mountinfo fields: `format.mangle`)
@treturn string s itself when nothing needs escaping
@usage print(mountns.escape("/mnt/a\nb")) --> /mnt/a\012b
*/
static int lmns_tree_escape(lua_State *L)
{
	size_t len, elen = 0, i, cols;
	const char *s, *extra;
	luaL_Buffer b;

	lmns_checknomore(L, 2);
	s = luaL_checklstring(L, 1, &len);
	extra = luaL_optlstring(L, 2, NULL, &elen);

	i = lmns_clean_run(s, len, extra, elen, &cols);
	if (i == len) {		/* the common case: no copy */
		lua_settop(L, 1);
		return 1;
	}
	luaL_buffinit(L, &b);
	luaL_addlstring(&b, s, i);
	lmns_escape_add(&b, s + i, len - i, extra, elen);
	luaL_pushresult(&b);
	return 1;
}

/***
The findmnt-like tree of a mount table: TARGET (with the tree drawn
in front), SOURCE, FSTYPE, ID, PARENT, PROPAGATION, GROUP (shared:N)
and MASTER (master:N), columns aligned by display width. A ROOT column
follows SOURCE when some record's root is not `/` (a bind mount of a
subdirectory: otherwise it would look like a bind of the whole
filesystem), and a PROPAGATE_FROM column ends the row when some record
has `propagate_from`. Text fields
are escaped as `escape` does, so a control character in a mount point
cannot break or forge a row. This is `tostring()` of a mount table.
Linear in the number of mounts.
@function tree_text
@tparam table t a mount table (an array of records)
@tparam[opt] string extra more ASCII characters to escape (as for `escape`)
@treturn string the tree, one line per mount after a header line
@raise "mount table entry N is not a record"
*/
static int lmns_tree_text(lua_State *L)
{
	int n, i, k, first_root, *slots, *order, *stack;
	size_t mask, w1 = 6, w2 = 6, w3 = 6, w4 = 4, len, elen = 0;
	int has_root = 0, has_from = 0;
	const char *extra, *str;
	lmns_row *rows;
	char *seen, *lastflags, num[64];
	luaL_Buffer b;

	lmns_checknomore(L, 2);
	luaL_checktype(L, 1, LUA_TTABLE);
	extra = luaL_optlstring(L, 2, NULL, &elen);
	lua_settop(L, 2);
	n = (int)lua_rawlen(L, 1);
	mask = lmns_hash_size((size_t)n) - 1;
	rows = lmns_scratch(L, (size_t)n, sizeof *rows);		/* 3 */
	slots = lmns_scratch(L, mask + 1, sizeof *slots);		/* 4 */
	memset(slots, 0, (mask + 1) * sizeof *slots);
	order = lmns_scratch(L, (size_t)n, sizeof *order);		/* 5 */
	stack = lmns_scratch(L, (size_t)n, sizeof *stack);		/* 6 */
	seen = lmns_scratch(L, (size_t)n, 1);				/* 7 */
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
	lastflags = lmns_scratch(L, (size_t)n + 1, 1);			/* 8 */

	for (i = 0; i < k; i++) {	/* column widths, of the escaped text */
		int r = order[i];

		lua_rawgeti(L, 1, r + 1);
		str = lmns_field_str(L, -1, "target", &len);
		len = lmns_escaped_width(str, len, extra, elen);
		if (2 * (size_t)rows[r].depth + len > w1)
			w1 = 2 * (size_t)rows[r].depth + len;
		str = lmns_field_str(L, -1, "source", &len);
		len = lmns_escaped_width(str, len, extra, elen);
		if (len > w2)
			w2 = len;
		str = lmns_field_str(L, -1, "fstype", &len);
		len = lmns_escaped_width(str, len, extra, elen);
		if (len > w3)
			w3 = len;
		str = lmns_field_str(L, -1, "root", &len);
		if (len > 0 && !(len == 1 && str[0] == '/'))
			has_root = 1;	/* a bind mount of a subdirectory */
		len = lmns_escaped_width(str, len, extra, elen);
		if (len > w4)
			w4 = len;
		lua_getfield(L, -1, "propagate_from");
		if (lua_type(L, -1) == LUA_TNUMBER)
			has_from = 1;
		lua_pop(L, 2);
	}

	luaL_buffinit(L, &b);
	luaL_addstring(&b, "TARGET");
	lmns_pad(&b, 6, w1);
	luaL_addstring(&b, " SOURCE");
	lmns_pad(&b, 6, w2);
	if (has_root) {
		luaL_addstring(&b, " ROOT");
		lmns_pad(&b, 4, w4);
	}
	luaL_addstring(&b, " FSTYPE");
	lmns_pad(&b, 6, w3);
	luaL_addstring(&b, "     ID PARENT PROPAGATION  GROUP MASTER");
	if (has_from)
		luaL_addstring(&b, " PROPAGATE_FROM");
	for (i = 0; i < k; i++) {
		int r = order[i], d = rows[r].depth, j;
		const char *t, *src, *fs, *prop, *root;
		size_t tl, sl, fl, pl, rl;
		char tail[160], from[32];

		/* read the record first: between buffer operations the stack
		 * must stay where the buffer left it */
		lua_rawgeti(L, 1, r + 1);
		t = lmns_field_str(L, -1, "target", &tl);
		src = lmns_field_str(L, -1, "source", &sl);
		fs = lmns_field_str(L, -1, "fstype", &fl);
		prop = lmns_field_str(L, -1, "propagation", &pl);
		root = lmns_field_str(L, -1, "root", &rl);
		lmns_group_str(L, -1, "shared", num, sizeof num / 2);
		lmns_group_str(L, -1, "master", num + sizeof num / 2,
			       sizeof num / 2);
		lmns_group_str(L, -1, "propagate_from", from, sizeof from);
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
		lmns_pad(&b, 2 * (size_t)d + lmns_escape_add(&b, t, tl, extra, elen),
			 w1);
		luaL_addchar(&b, ' ');
		lmns_pad(&b, lmns_escape_add(&b, src, sl, extra, elen), w2);
		luaL_addchar(&b, ' ');
		if (has_root) {
			lmns_pad(&b, lmns_escape_add(&b, root, rl, extra, elen), w4);
			luaL_addchar(&b, ' ');
		}
		lmns_pad(&b, lmns_escape_add(&b, fs, fl, extra, elen), w3);
		luaL_addstring(&b, tail);
		lmns_pad(&b, lmns_escape_add(&b, prop, pl, extra, elen), 12);
		snprintf(tail, sizeof tail, " %6s %6s", num, num + sizeof num / 2);
		luaL_addstring(&b, tail);
		if (has_from) {
			snprintf(tail, sizeof tail, " %14s", from);
			luaL_addstring(&b, tail);
		}
	}
	luaL_addchar(&b, '\n');
	luaL_pushresult(&b);
	return 1;
}

/* ---- JSON --------------------------------------------------------------- */

/* A growing output buffer in a userdata at stack index idx (replaced when it
 * grows): the Lua stack stays free for reading records meanwhile, and an
 * error unwinding past us leaves the memory to the GC. */
typedef struct lmns_out {
	char *p;
	size_t len, cap;
	int idx;
} lmns_out;

static void lmns_out_init(lua_State *L, lmns_out *o, size_t cap)
{
	o->cap = cap;
	o->len = 0;
	o->p = lua_newuserdata(L, cap);
	o->idx = lua_gettop(L);
}

static char *lmns_out_room(lua_State *L, lmns_out *o, size_t n)
{
	if (o->cap - o->len < n) {
		size_t cap = o->cap * 2;
		char *p;

		while (cap - o->len < n)
			cap *= 2;
		p = lua_newuserdata(L, cap);
		memcpy(p, o->p, o->len);
		lua_replace(L, o->idx);
		o->p = p;
		o->cap = cap;
	}
	return o->p + o->len;
}

static void lmns_out_add(lua_State *L, lmns_out *o, const char *s, size_t n)
{
	memcpy(lmns_out_room(L, o, n), s, n);
	o->len += n;
}

#define lmns_out_lit(L, o, s) lmns_out_add((L), (o), (s), sizeof(s) - 1)

/*
 * A JSON string (RFC 8259) of a text field: the escaping rule first (no
 * control character, only valid UTF-8 is left), then the JSON escapes of
 * the quote and the backslash, so the \ooo of the rule reads \\ooo. A
 * reader gets the bytes back by decoding JSON, then each \ooo.
 */
static void lmns_json_string(lua_State *L, lmns_out *o, const char *s,
			     size_t len)
{
	size_t i = 0, run, cols;
	const char *p, *e, *q;
	char oct[5];

	lmns_out_lit(L, o, "\"");
	while (i < len) {
		run = lmns_clean_run(s + i, len - i, NULL, 0, &cols);
		for (p = s + i, e = p + run; (q = memchr(p, '"', (size_t)(e - p)));
		     p = q + 1) {	/* a kept run may hold quotes */
			lmns_out_add(L, o, p, (size_t)(q - p));
			lmns_out_lit(L, o, "\\\"");
		}
		lmns_out_add(L, o, p, (size_t)(e - p));
		i += run;
		if (i < len) {
			unsigned char c = (unsigned char)s[i++];

			oct[0] = '\\';
			oct[1] = '\\';
			oct[2] = (char)('0' + (c >> 6));
			oct[3] = (char)('0' + ((c >> 3) & 7));
			oct[4] = (char)('0' + (c & 7));
			lmns_out_add(L, o, oct, 5);
		}
	}
	lmns_out_lit(L, o, "\"");
}

/* A JSON number: an integer as one (a float too when it holds one), NaN
 * and the infinities as null, any other float with 17 digits. */
static void lmns_json_number(lua_State *L, lmns_out *o, int idx)
{
	char num[64];
	lua_Number d;

#if LUA_VERSION_NUM >= 503
	if (lua_isinteger(L, idx)) {
		lua_Integer v = lua_tointeger(L, idx);

		if (v != LUA_MININTEGER) {	/* -2^63 is not > -2^63: %.17g */
			lmns_out_add(L, o, num, (size_t)snprintf(num, sizeof num,
				"%lld", (long long)v));
			return;
		}
	}
#endif
	d = lua_tonumber(L, idx);
	if (d != d || d == (lua_Number)HUGE_VAL || d == -(lua_Number)HUGE_VAL)
		lmns_out_lit(L, o, "null");
	else if (d > -9223372036854775808.0 && d < 9223372036854775808.0 &&
		 d == (lua_Number)(long long)d)
		lmns_out_add(L, o, num, (size_t)snprintf(num, sizeof num,
			"%lld", (long long)d));
	else
		lmns_out_add(L, o, num, (size_t)snprintf(num, sizeof num,
			"%.17g", (double)d));
}

/***
A mount table as a JSON document: `{"mounts":[{...},\n{...}]}` and a
newline, one record a line, each with the fields of `mountns.record.FIELDS`
it has, in that order (read by name, so a field a record computes on
first access is there too). Text fields are escaped as `escape` does, then
JSON-quoted: the document is valid UTF-8 whatever bytes the paths hold.
This is `mountns.format(t, "json")` and `mountns show --json`.
@function json_text
@tparam table t a mount table (an array of records)
@treturn string
@raise "mount table entry N is not a record"
*/
static int lmns_tree_json(lua_State *L)
{
	lmns_out o;
	int i, k, first;
	size_t len;
	const char *s;

	lmns_checknomore(L, 1);
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 1);
	lmns_out_init(L, &o, 4096);
	lmns_out_lit(L, &o, "{\"mounts\":[");
	for (i = 1;; i++) {
		lua_rawgeti(L, 1, i);
		if (lua_isnil(L, -1)) {
			lua_pop(L, 1);
			break;
		}
		if (!lua_istable(L, -1))
			return luaL_error(L, "mount table entry %d is not a record",
					  i);
		if (i > 1)
			lmns_out_lit(L, &o, ",\n");
		lmns_out_lit(L, &o, "{");
		first = 1;
		for (k = 0; k < LMNS_K_UNIQUE_ID; k++) {
			const char *key = lmns_record_key(k);

			lua_getfield(L, -1, key);
			if (lua_isnil(L, -1)) {
				lua_pop(L, 1);
				continue;
			}
			if (!first)
				lmns_out_lit(L, &o, ",");
			first = 0;
			lmns_out_lit(L, &o, "\"");
			lmns_out_add(L, &o, key, strlen(key));
			lmns_out_lit(L, &o, "\":");
			switch (lua_type(L, -1)) {
			case LUA_TSTRING:
				s = lua_tolstring(L, -1, &len);
				lmns_json_string(L, &o, s, len);
				break;
			case LUA_TNUMBER:
				lmns_json_number(L, &o, lua_gettop(L));
				break;
			case LUA_TBOOLEAN:
				if (lua_toboolean(L, -1))
					lmns_out_lit(L, &o, "true");
				else
					lmns_out_lit(L, &o, "false");
				break;
			default:
				lmns_out_lit(L, &o, "null");
				break;
			}
			lua_pop(L, 1);
		}
		lmns_out_lit(L, &o, "}");
		lua_pop(L, 1);
	}
	lmns_out_lit(L, &o, "]}\n");
	lua_pushlstring(L, o.p, o.len);
	return 1;
}

void lmns_tree_open(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{ "tree_text", lmns_tree_text },
		{ "escape", lmns_tree_escape },
		{ "json_text", lmns_tree_json },
		{ NULL, NULL }
	};

	luaL_setfuncs(L, funcs, 0);
}
