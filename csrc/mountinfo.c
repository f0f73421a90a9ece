/*
 * mountinfo.c - /proc/PID/mountinfo parsed with util-linux libmount into a
 * Lua array of records, one per mount, in mountinfo order.
 *
 * libmount is lenient on purpose: it guesses the file format from the first
 * line and drops lines it cannot parse. mountns asserts what the kernel did,
 * so a dropped line would be a silent lie: every line is first checked to
 * have the shape of proc(5)'s mountinfo record, and the parser's error
 * callback plus an entry count catch anything libmount still refuses.
 * Where libmount is lossy (a raw space in super options, "\000" in a
 * root, a "/dev/root" source), the record takes the field from the text.
 *
 * libmount is loaded on the first parse (libmount.c), not with core.so.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <libmount.h>

#include "lmns.h"

/* ---- shape check ---------------------------------------------------- */

static int lmns_is_number(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > 10)	/* libmount reads IDs as int */
		return 0;
	for (i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return len < 10 || strncmp(s, "2147483647", 10) <= 0;
}

static int lmns_is_devno(const char *s, size_t len)
{
	const char *colon = memchr(s, ':', len);

	return colon && lmns_is_number(s, (size_t)(colon - s)) &&
	       lmns_is_number(colon + 1, len - (size_t)(colon - s) - 1);
}

/*
 * An optional field: "shared:N", "master:N", "propagate_from:N" (N a peer
 * group ID, >= 1) or "unbindable". proc(5) tells parsers to skip tags they
 * do not know, so only a known tag with a bad ID is an error: it would
 * otherwise become a record with a made-up peer group.
 */
static const char *lmns_check_optional(const char *f, size_t len)
{
	static const char *const tags[] = {
		"shared:", "master:", "propagate_from:", NULL
	};
	size_t i, tl;

	for (i = 0; tags[i]; i++) {
		tl = strlen(tags[i]);
		if (len < tl || memcmp(f, tags[i], tl) != 0)
			continue;
		if (!lmns_is_number(f + tl, len - tl) ||
		    strspn(f + tl, "0") >= len - tl)
			return "optional field without a peer group ID >= 1";
		return NULL;
	}
	return NULL;
}

/* A field of a line: where it starts and how long it is. */
typedef struct lmns_span {
	const char *p;
	size_t len;
} lmns_span;

/* The fields of a checked line that mountns takes from the text itself. */
typedef struct lmns_fields {
	lmns_span root, target, source, super;
} lmns_fields;

#define LMNS_TOO_FEW_TAIL "expected FSTYPE SOURCE SUPER_OPTIONS after ' - '"

/* NUL or raw tab in a field: libmount would cut or split it there. */
static const char *lmns_check_bytes(const char *f, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (f[i] == '\0')
			return "NUL byte in line";
		if (f[i] == '\t')
			return "raw tab in line (the kernel writes \\011)";
	}
	return NULL;
}

/*
 * A word of the tail (FSTYPE, SOURCE) at *p: its span in *word (unless
 * NULL), *p moved past it and the space after it, as a later field must
 * follow. Returns the first defect or NULL; empty: whether the word may be
 * empty.
 */
static const char *lmns_check_word(const char **p, const char *end,
				   int empty, lmns_span *word)
{
	const char *f = *p, *q = *p, *why;

	while (q < end && *q != ' ')
		q++;
	why = lmns_check_bytes(f, (size_t)(q - f));
	if (why)
		return why;
	if (q == f && !empty)
		return "empty field (double space)";
	if (q == end)
		return LMNS_TOO_FEW_TAIL;
	if (q + 1 == end)
		return "trailing space";
	if (word)
		*word = (lmns_span){ f, (size_t)(q - f) };
	*p = q + 1;
	return NULL;
}

/*
 * Check one line (without its '\n'): "ID PARENT MAJ:MIN ROOT TARGET OPTS
 * [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS", as fs/proc_namespace.c's
 * show_mountinfo writes it. Returns NULL (and the fields mountns reads from
 * the text in *out) or the first defect, reading left to right.
 *
 * The kernel escapes space, tab, newline and backslash as \ooo in every
 * field up to SOURCE, so those fields are split at single spaces and never
 * hold a raw blank; SOURCE alone may be empty (mount(2) with source "" gives
 * "tmpfs  rw"). SUPER_OPTIONS is the rest of the line: the kernel leaves
 * each filesystem to print its own options, and some print values raw (9p
 * on WSL 2: "aname=drvfs;path=C:\Program Files\..."; cifs before Linux
 * 3.10: "unc=\\host\A B"). With one ' - ' after the optional fields and
 * FSTYPE and SOURCE escaped, such a line is unambiguous, so there is no
 * "too many fields": the words after SOURCE are all super options. A raw
 * tab stays an error everywhere (libmount splits at tabs; no real option
 * value holds one), and so does a trailing space.
 */
static const char *lmns_check_line(const char *line, size_t len,
				   lmns_fields *out)
{
	const char *p = line, *end = line + len, *f, *why;
	size_t n = 0, flen;

	/* ID PARENT MAJ:MIN ROOT TARGET OPTS [OPTIONAL...] - */
	for (;;) {
		f = p;
		while (p < end && *p != ' ')
			p++;
		flen = (size_t)(p - f);
		n++;
		why = lmns_check_bytes(f, flen);
		if (why)
			return why;
		if (flen == 0)
			return "empty field (double space)";
		if (n == 1 && !lmns_is_number(f, flen))
			return "mount ID is not a number";
		if (n == 2 && !lmns_is_number(f, flen))
			return "parent ID is not a number";
		if (n == 3 && !lmns_is_devno(f, flen))
			return "device is not MAJOR:MINOR";
		if (n == 4)
			out->root = (lmns_span){ f, flen };
		if (n == 5)
			out->target = (lmns_span){ f, flen };
		if (n >= 7 && flen == 1 && *f == '-')
			break;
		if (n >= 7) {
			why = lmns_check_optional(f, flen);
			if (why)
				return why;
		}
		if (p == end)
			return n < 6 ? "too few fields" :
			       "no ' - ' separator after the optional fields";
		if (++p == end)
			return "trailing space";
	}
	/* FSTYPE: a word */
	if (p == end)
		return LMNS_TOO_FEW_TAIL;
	if (++p == end)
		return "trailing space";
	why = lmns_check_word(&p, end, 0, NULL);
	if (why)
		return why;
	/* SOURCE: a word, maybe empty */
	why = lmns_check_word(&p, end, 1, &out->source);
	if (why)
		return why;
	/* SUPER_OPTIONS: the rest of the line */
	why = lmns_check_bytes(p, (size_t)(end - p));
	if (why)
		return why;
	if (*p == ' ')
		return "empty field (double space)";
	if (end[-1] == ' ')
		return "trailing space";
	out->super = (lmns_span){ p, (size_t)(end - p) };
	return NULL;
}

/*
 * The line at p up to nl, as libmount reads it: without a final '\r' (so
 * CRLF text parses; libmount drops that byte anyway). Length 0: no record.
 */
static size_t lmns_line_len(const char *p, const char *nl)
{
	size_t n = (size_t)(nl - p);

	return n && p[n - 1] == '\r' ? n - 1 : n;
}

/* Check every line; returns the number of records or -(bad line number). */
static long lmns_check_text(const char *text, size_t len, const char **why)
{
	const char *p = text, *end = text + len, *nl;
	long lineno = 0, records = 0;
	lmns_fields fields;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		lineno++;
		if (lmns_line_len(p, nl)) {	/* an empty line is no record */
			*why = lmns_check_line(p, lmns_line_len(p, nl), &fields);
			if (*why)
				return -lineno;
			records++;
		}
		p = nl + 1;
	}
	return records;
}

/* ---- records ---------------------------------------------------------- */

/*
 * The optional fields ("shared:1 master:2 propagate_from:3 unbindable")
 * become shared/master/propagate_from IDs, unbindable, and the propagation
 * word (record.c).
 */
static void lmns_rec_optional(lua_State *L, const lmns_builder *b,
			      const char *opt)
{
	long shared = 0, master = 0, from = 0;
	int unbindable = 0;
	const char *p = opt ? opt : "";

	while (*p) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, "shared:", 7))
			shared = strtol(p + 7, NULL, 10);
		else if (!strncmp(p, "master:", 7))
			master = strtol(p + 7, NULL, 10);
		else if (!strncmp(p, "propagate_from:", 15))
			from = strtol(p + 15, NULL, 10);
		else if (!strncmp(p, "unbindable", 10) &&
			 (p[10] == ' ' || p[10] == '\0'))
			unbindable = 1;	/* the whole word: "unbindablex" is unknown */
		while (*p && *p != ' ')
			p++;
	}
	lmns_rec_propagation(L, b, shared, master, from, unbindable);
}

/* A string field of libmount's (NULL: left out), memoised in slot m. */
static void lmns_rec_cstr(lua_State *L, lmns_builder *b, int k, int m,
			  const char *v)
{
	if (v)
		lmns_rec_memo(L, b, k, m, v, strlen(v));
}

/*
 * Set field k to a field of the text with its \ooo escapes decoded, as
 * libmount's unmangle decodes them (three octal digits, one byte).
 */
static void lmns_rec_unescaped(lua_State *L, const lmns_builder *b, int k,
			       const char *s, size_t len)
{
	const char *end = s + len;
	luaL_Buffer buf;

	lmns_rec_key(L, b, k);
	luaL_buffinit(L, &buf);
	while (s < end) {
		if (*s == '\\' && end - s >= 4 && s[1] >= '0' && s[1] <= '7' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			luaL_addchar(&buf, (char)(((s[1] - '0') << 6) |
						  ((s[2] - '0') << 3) |
						  (s[3] - '0')));
			s += 4;
		} else {
			luaL_addchar(&buf, *s++);
		}
	}
	luaL_pushresult(&buf);
	lua_rawset(L, -3);
}

/*
 * One record from libmount's entry and its (validated) line. The string
 * fields but OPTIONS and FSTYPE come from the line itself: libmount cuts
 * SUPER_OPTIONS at a raw space (9p, old cifs) and ROOT at an escaped NUL,
 * rewrites a "/dev/root" source into a device of the host that parses the
 * text, and (up to 2.37) cut " (deleted)" off a target; mountns reports
 * what the kernel wrote.
 */
static void lmns_push_record(lua_State *L, lmns_builder *b,
			     struct libmnt_fs *fs, const char *line,
			     size_t len)
{
	dev_t dev = lmns_lm.fs_get_devno(fs);
	lmns_fields f;

	(void)lmns_check_line(line, len, &f);	/* checked: fills f */
	lua_createtable(L, 0, 16);
	lmns_rec_int(L, b, LMNS_K_ID, lmns_lm.fs_get_id(fs));
	lmns_rec_int(L, b, LMNS_K_PARENT_ID, lmns_lm.fs_get_parent_id(fs));
	lmns_rec_int(L, b, LMNS_K_MAJOR, major(dev));
	lmns_rec_int(L, b, LMNS_K_MINOR, minor(dev));
	lmns_rec_unescaped(L, b, LMNS_K_ROOT, f.root.p, f.root.len);
	lmns_rec_unescaped(L, b, LMNS_K_TARGET, f.target.p, f.target.len);
	lmns_rec_cstr(L, b, LMNS_K_OPTIONS, LMNS_M_OPTIONS,
		      lmns_lm.fs_get_vfs_options(fs));
	lmns_rec_cstr(L, b, LMNS_K_FSTYPE, LMNS_M_FSTYPE,
		      lmns_lm.fs_get_fstype(fs));
	lmns_rec_unescaped(L, b, LMNS_K_SOURCE, f.source.p, f.source.len);
	lmns_rec_unescaped(L, b, LMNS_K_SUPER_OPTIONS, f.super.p, f.super.len);
	lmns_rec_optional(L, b, lmns_lm.fs_get_optional_fields(fs));
}

/* ---- parsing ---------------------------------------------------------- */

/* libmount's errcb has no user pointer; a table-keyed slot would need one,
 * so the first bad line number travels through the table's userdata. */
static int lmns_parser_errcb(struct libmnt_table *tb, const char *filename,
			     int line)
{
	long *bad = lmns_lm.table_get_userdata(tb);

	(void)filename;
	if (bad && *bad == 0)
		*bad = line;
	return -1;	/* stop: a partial table would be a wrong table */
}

/* Parse text (validated) into a new Lua array; returns Lua results. */
static int lmns_parse_text(lua_State *L, const char *text, size_t len)
{
	const char *why = NULL;
	long n = lmns_check_text(text, len, &why), bad = 0, i = 0;
	const char *line = text, *nl;
	struct libmnt_table *tb;
	struct libmnt_iter *itr;
	struct libmnt_fs *fs;
	lmns_builder b;
	FILE *f;
	int rc;

	if (n < 0) {
		lua_pushnil(L);
		lua_pushfstring(L, "line %d: %s", (int)-n, why);
		return 2;
	}
	lmns_builder_init(L, &b);
	lua_createtable(L, (int)n, 0);
	if (n == 0)
		return 1;
	why = lmns_libmount_load();
	if (why) {
		lua_pushnil(L);
		lua_pushfstring(L, "parse_mountinfo: cannot load libmount: %s",
				why);
		lua_pushinteger(L, ELIBACC);
		return 3;
	}
	tb = lmns_lm.new_table();
	itr = lmns_lm.new_iter(MNT_ITER_FORWARD);
	f = fmemopen((void *)text, len, "r");
	if (!tb || !itr || !f) {
		int err = errno ? errno : ENOMEM;

		lmns_lm.unref_table(tb);
		lmns_lm.free_iter(itr);
		if (f)
			fclose(f);
		return lmns_fail(L, err, "parse_mountinfo", NULL, NULL);
	}
	lmns_lm.table_set_userdata(tb, &bad);
	lmns_lm.table_set_parser_errcb(tb, lmns_parser_errcb);
	rc = lmns_lm.table_parse_stream(tb, f, "mountinfo");
	fclose(f);
	if (rc == 0 && bad == 0 && lmns_lm.table_get_nents(tb) == (int)n) {
		/* no Lua error can be raised below except out-of-memory */
		while (lmns_lm.table_next_fs(tb, itr, &fs) == 0) {
			/* entry i is the i-th non-empty line (all were checked) */
			for (;;) {
				nl = memchr(line, '\n',
					    (size_t)(text + len - line));
				if (!nl)
					nl = text + len;
				if (lmns_line_len(line, nl))
					break;
				line = nl + 1;
			}
			lmns_push_record(L, &b, fs, line,
					 lmns_line_len(line, nl));
			lua_rawseti(L, -2, (int)++i);
			line = nl < text + len ? nl + 1 : nl;
		}
	}
	lmns_lm.free_iter(itr);
	lmns_lm.unref_table(tb);
	if (i != n) {
		lua_pushnil(L);
		lua_pushfstring(L, "line %d: libmount could not parse it",
				(int)(bad ? bad : 1));
		return 2;
	}
	return 1;
}

/***
@module mountns.core
*/

/***
mountinfo: /proc/PID/mountinfo parsed with libmount
@section mountinfo
*/

/***
Parse mountinfo text into an array of records, one per line, in order.
Every line is checked against proc(5)'s format first: a line libmount
would silently drop is an error instead. `mountns.parse_mountinfo` wraps
the array into a mount table (see `mountns.table`).

Each record has `id`, `parent_id`, `major`, `minor`, `root`, `target`,
`options` (per-mount), `fstype`, `source`, `super_options`, the optional
fields as `shared`, `master`, `propagate_from` (peer group IDs, absent when
0) and `unbindable`, and `propagation`: `"private"`, `"shared"`,
`"slave"`, `"shared,slave"` or `"unbindable"` (what the kernel shows;
text may also give `"slave,unbindable"`, `"shared,unbindable"` and
`"shared,slave,unbindable"`): findmnt's PROPAGATION without its
`"private,"` before `slave` and `unbindable`. SUPER_OPTIONS is the rest
of the line, raw spaces included (9p, old cifs print values unescaped).
@function parse_mountinfo
@tparam string text
@treturn[1] {table,...} the records
@return[2] nil
@treturn[2] string "line N: why"
@see proc(5)
*/
static int lmns_mountinfo_parse(lua_State *L)
{
	size_t len;
	const char *text;

	lmns_checknomore(L, 1);
	text = luaL_checklstring(L, 1, &len);
	return lmns_parse_text(L, text, len);
}

/* Read a whole /proc file into a Lua string on the stack. */
static int lmns_read_procfile(lua_State *L, const char *rel, int *err)
{
	luaL_Buffer b;
	int fd = lmns_procfs_openat(L, rel, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		*err = errno;
		return -1;
	}
	luaL_buffinit(L, &b);
	for (;;) {
		char *p = luaL_prepbuffer(&b);
		ssize_t n = read(fd, p, LUAL_BUFFERSIZE);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*err = n < 0 ? errno : 0;
			close(fd);
			luaL_pushresult(&b);
			return n < 0 ? -1 : 0;
		}
		luaL_addsize(&b, (size_t)n);
	}
}

/*
 * Push the text of /proc/PID/mountinfo (arg 1 a PID or nil for self).
 * Returns 0 with the string on top, or the count of lmns_fail's results.
 */
static int lmns_push_mountinfo(lua_State *L)
{
	char rel[64];
	int err;

	lmns_checknomore(L, 1);
	if (lua_isnoneornil(L, 1))
		snprintf(rel, sizeof rel, "self/mountinfo");
	else
		snprintf(rel, sizeof rel, "%lld/mountinfo",
			 (long long)luaL_checkinteger(L, 1));
	if (lmns_read_procfile(L, rel, &err) == 0)
		return 0;
	lua_pushfstring(L, "/proc/%s", rel);
	return lmns_fail(L, err, "mountinfo", lua_tostring(L, -1), NULL);
}

/***
Read and parse /proc/PID/mountinfo (see `parse_mountinfo` for the
records). `mountns.mountinfo` returns a mount table instead.
@function mountinfo
@tparam[opt] int pid default: the calling process
@treturn[1] {table,...} the records
@return[2] nil
@treturn[2] string "mountinfo PATH: strerror (ENAME)"
@treturn[2] int errno
@see proc(5)
*/
static int lmns_mountinfo_read(lua_State *L)
{
	size_t len;
	int nret = lmns_push_mountinfo(L);
	const char *text;

	if (nret)
		return nret;
	text = lua_tolstring(L, -1, &len);
	return lmns_parse_text(L, text, len);
}

/***
The raw text of /proc/PID/mountinfo.
@function read_mountinfo
@tparam[opt] int pid default: the calling process
@treturn[1] string
@return[2] nil
@treturn[2] string "mountinfo PATH: strerror (ENAME)"
@treturn[2] int errno
*/
/* read_mountinfo([pid]) -> the raw text, for tools and benchmarks */
static int lmns_mountinfo_raw(lua_State *L)
{
	int nret = lmns_push_mountinfo(L);

	return nret ? nret : 1;
}

void lmns_mountinfo_open(lua_State *L)
{
	static const luaL_Reg funcs[] = {
		{ "parse_mountinfo", lmns_mountinfo_parse },
		{ "mountinfo", lmns_mountinfo_read },
		{ "read_mountinfo", lmns_mountinfo_raw },
		{ NULL, NULL }
	};

	luaL_setfuncs(L, funcs, 0);
}
