/*
 * frame.c - the frames of lua/mountns/child.lua, in C, for an agent's calls.
 *
 * An agent call is a request and a reply of a few scalars ("call", 2,
 * "exists", "/" and true, true): encoding, framing and decoding them in
 * Lua, and reading a frame as a poll and a read for its header and again
 * for its body, cost an agent call several times a pipe round trip in C
 * (bench/scenario.lua). Here a message of scalars is encoded in C and sent
 * with one send(2), and a frame is read with one read(2) into a buffer and
 * decoded in C when it holds only scalars.
 *
 * child.lua stays the home of the form: this file writes and reads only
 * its scalar subset (nil, booleans, integers below 2^53, strings, and flat
 * tables of these without a metatable: an options table, a list of names),
 * the same bytes child.encode writes for them. Anything else (a nested
 * table, a mount table, a float, a value that cannot cross, a message over
 * the size limit) is left to child.lua: send_values returns false before
 * sending anything, receive_frame returns the body for child.decode.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lmns.h"

/***
@module mountns.core
*/

/***
Frames: an agent's requests and replies
@section frame
*/

#define FRAME_HEAD 9		/* kind letter + 8 hex digits of length */
#define FRAME_STACK 16384	/* a message that fits is built on the stack */
#define TWO_53 9007199254740992.0

/* The magnitude (and sign) of the integer at idx if child.encode writes it
 * as `p`/`m` and a varint (an integer below 2^53 in magnitude; not -0);
 * 0 if it writes it otherwise (a float, a larger integer). */
static int frame_integer(lua_State *L, int idx, unsigned long long *z,
			 int *neg)
{
#if LUA_VERSION_NUM >= 503
	lua_Integer i;

	if (!lua_isinteger(L, idx))
		return 0;
	i = lua_tointeger(L, idx);
	if (i <= -(lua_Integer)(1LL << 53) || i >= (lua_Integer)(1LL << 53))
		return 0;
	*neg = i < 0;
	*z = (unsigned long long)(i < 0 ? -i : i);
	return 1;
#else
	lua_Number d = lua_tonumber(L, idx);

	if (d != floor(d) || d <= -TWO_53 || d >= TWO_53 ||
	    (d == 0 && signbit(d)))
		return 0;
	*neg = d < 0;
	*z = (unsigned long long)(d < 0 ? -d : d);
	return 1;
#endif
}

static size_t frame_varint(char *out, unsigned long long z)
{
	size_t n = 0;

	while (z >= 128) {
		out[n++] = (char)(z % 128 + 128);
		z /= 128;
	}
	out[n++] = (char)z;
	return n;
}

/* Add the bytes child.encode writes for the scalar at idx to *cap and its
 * estimate to *estimate; 0 if it is no scalar (a table, a float, ...). */
static int frame_scalar_size(lua_State *L, int idx, size_t *cap,
			     double *estimate)
{
	unsigned long long z;
	int neg;
	size_t sl;

	switch (lua_type(L, idx)) {
	case LUA_TNIL:
	case LUA_TBOOLEAN:
		*cap += 1;
		break;
	case LUA_TNUMBER:
		if (!frame_integer(L, idx, &z, &neg))
			return 0;
		*cap += 1 + 8;
		break;
	case LUA_TSTRING:
		lua_tolstring(L, idx, &sl);
		*cap += 1 + 10 + sl;
		*estimate += (double)sl;
		break;
	default:
		return 0;
	}
	*estimate += 32;
	return 1;
}

/* Write the scalar at idx (frame_scalar_size said yes) at buf + *len. */
static void frame_put_scalar(lua_State *L, int idx, char *buf, size_t *len)
{
	unsigned long long z = 0;
	int neg = 0;
	const char *s;
	size_t sl;

	switch (lua_type(L, idx)) {
	case LUA_TNIL:
		buf[(*len)++] = 'n';
		break;
	case LUA_TBOOLEAN:
		buf[(*len)++] = lua_toboolean(L, idx) ? 't' : 'f';
		break;
	case LUA_TNUMBER:
		frame_integer(L, idx, &z, &neg);
		buf[(*len)++] = neg ? 'm' : 'p';
		*len += frame_varint(buf + *len, z);
		break;
	default:	/* a string */
		s = lua_tolstring(L, idx, &sl);
		buf[(*len)++] = 's';
		*len += frame_varint(buf + *len, sl);
		memcpy(buf + *len, s, sl);
		*len += sl;
		break;
	}
}

/* The same for a flat table at idx (no metatable, scalar keys and values:
 * an options table such as mkdir's), as child.encode writes it: `T`, its
 * pairs in next's order, `E`. */
static int frame_table_size(lua_State *L, int idx, size_t *cap,
			    double *estimate)
{
	if (lua_getmetatable(L, idx)) {
		lua_pop(L, 1);
		return 0;	/* a mount table (`M`), or one to leave alone */
	}
	*cap += 2;
	*estimate += 32;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		if (lua_type(L, -1) == LUA_TTABLE ||
		    !frame_scalar_size(L, -2, cap, estimate) ||
		    !frame_scalar_size(L, -1, cap, estimate)) {
			lua_pop(L, 2);
			return 0;
		}
		lua_pop(L, 1);
	}
	return 1;
}

static void frame_put_table(lua_State *L, int idx, char *buf, size_t *len)
{
	buf[(*len)++] = 'T';
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		frame_put_scalar(L, -2, buf, len);
		frame_put_scalar(L, -1, buf, len);
		lua_pop(L, 1);
	}
	buf[(*len)++] = 'E';
}

/***
Send values as one child.lua frame (`o`), with one system call, if each
is nil, a boolean, an integer below 2^53, a string, or a table without a
metatable whose keys and values are such scalars, and the message is
within `max` bytes: its body (the count included, as child.send counts it)
and child.encode's estimate (32 bytes a value plus a string's bytes) both,
whatever the message's size (an empty message too).
@function send_values
@tparam int fd a socket (or pipe) to the other process
@tparam int max the size limit (mountns.child.MAX_BYTES)
@param ... the values
@treturn[1] boolean true: sent
@treturn[2] boolean false: a value child.encode must write (nothing sent)
@return[3] nil
@treturn[3] string "write: strerror (ENAME)" (EPIPE: the reader is gone)
@treturn[3] int errno
*/
static int lmns_frame_send_values(lua_State *L)
{
	/* the values are the arguments after max: no extra one to refuse */
	int fd = lmns_checkfd(L, 1);
	lua_Integer max = luaL_checkinteger(L, 2);
	int i, top = lua_gettop(L), nvals = top - 2;
	char stack[FRAME_STACK], *buf = stack;
	size_t len = 0, cap = FRAME_HEAD + 24;
	int err;
	double estimate = 0;	/* child.encode's: 32 a token plus the strings */

	luaL_checkstack(L, 4, "send_values");
	for (i = 3; i <= top; i++) {
		int j, ok = lua_type(L, i) == LUA_TTABLE
			? frame_table_size(L, i, &cap, &estimate)
			: frame_scalar_size(L, i, &cap, &estimate);

		/* a table given twice crosses once (`R`): child.encode's */
		for (j = 3; ok && j < i && lua_type(L, i) == LUA_TTABLE; j++)
			ok = !lua_rawequal(L, i, j);

		if (!ok || estimate > (double)max)
			return lua_pushboolean(L, 0), 1;
	}
	if (cap > sizeof stack)
		buf = lua_newuserdata(L, cap);
	len = FRAME_HEAD;
	{	/* the count in decimal, as "%d;" (by hand: printf costs more
		 * than the rest of the encoding) */
		char digits[12];
		int nd = 0, v = nvals;

		do
			digits[nd++] = (char)('0' + v % 10);
		while ((v /= 10) > 0);
		while (nd > 0)
			buf[len++] = digits[--nd];
		buf[len++] = ';';
	}
	for (i = 3; i <= top; i++) {
		if (lua_type(L, i) == LUA_TTABLE)
			frame_put_table(L, i, buf, &len);
		else
			frame_put_scalar(L, i, buf, &len);
	}
	/* the body itself against max: the estimate leaves out the count
	 * ("N;"), so a short message (no values) would pass any max */
	if (max < 0 || (unsigned long long)(len - FRAME_HEAD) >
	    (unsigned long long)max)
		return lua_pushboolean(L, 0), 1;
	/* the header last: the body's length is known now */
	{	/* "o%08zx" */
		size_t body = len - FRAME_HEAD;

		buf[0] = 'o';
		for (i = FRAME_HEAD - 1; i >= 1; i--, body >>= 4)
			buf[i] = "0123456789abcdef"[body & 15];
	}
	err = lmns_write_all(fd, buf, len);
	if (err)
		return lmns_fail(L, err, "write", NULL, NULL);
	lua_pushboolean(L, 1);
	return 1;
}

/* The varint at *p (below end): 1 and the value, 0 if it is cut short or
 * not below 2^53 (child.decode's to judge). */
static int frame_getvarint(const unsigned char **p, const unsigned char *end,
			   unsigned long long *z)
{
	unsigned long long v = 0;
	int shift = 0;

	while (*p < end) {
		unsigned char b = *(*p)++;

		if (shift > 49)
			return 0;
		v |= (unsigned long long)(b & 127) << shift;
		if (b < 128) {
			*z = v;
			return v < (1ULL << 53);
		}
		shift += 7;
	}
	return 0;
}

/* Push the scalar of tag `tag` at *p (a boolean, an integer, a string; not
 * nil) and add child.encode's estimate of it to *estimate (32, and a
 * string's bytes): 1, or 0 (nothing pushed) for another tag or a value cut
 * short. */
static int frame_get_scalar(lua_State *L, const unsigned char **p,
			    const unsigned char *end, int tag,
			    double *estimate)
{
	unsigned long long z;

	*estimate += 32;
	if (tag == 't' || tag == 'f') {
		lua_pushboolean(L, tag == 't');
	} else if (tag == 'p' || tag == 'm') {
		if (!frame_getvarint(p, end, &z))
			return 0;
		lua_pushinteger(L, tag == 'p' ? (lua_Integer)z : -(lua_Integer)z);
	} else if (tag == 's') {
		if (!frame_getvarint(p, end, &z) ||
		    z > (unsigned long long)(end - *p))
			return 0;
		lua_pushlstring(L, (const char *)*p, (size_t)z);
		*p += z;
		*estimate += (double)z;
	} else {
		return 0;
	}
	return 1;
}

/* The most values receive_frame returns on the stack (`unpacked`); a
 * longer message comes as a table. */
#define FRAME_UNPACKED 64

/* Push the values of a body of scalars as a table with `n` (or, if
 * `unpacked`, true and the values themselves, when there are at most
 * FRAME_UNPACKED); the count of values pushed, 0 (nothing pushed) if the
 * body holds anything else, is not well formed, or is past `max` by
 * child.encode's estimate (which child.decode refuses: it raises). */
static int frame_decode(lua_State *L, const char *body, size_t len,
			int unpacked, lua_Integer max)
{
	const unsigned char *p = (const unsigned char *)body, *end = p + len;
	unsigned long long n = 0, i;
	int base = lua_gettop(L);
	double estimate = 0;

	if (p == end || *p < '0' || *p > '9')
		return 0;
	while (p < end && *p >= '0' && *p <= '9' && n < 1000000)
		n = n * 10 + (unsigned long long)(*p++ - '0');
	/* each value takes a byte at least and counts 32 in the estimate:
	 * the table made for them is no larger than both allow */
	if (p == end || *p++ != ';' || n > len || (double)n * 32 > (double)max)
		return 0;
	if (unpacked && n > FRAME_UNPACKED)
		return 0;	/* the caller asks again for a table */
	if (unpacked) {
		luaL_checkstack(L, (int)n + 3, "receive_frame");
		lua_pushboolean(L, 1);
	} else {
		luaL_checkstack(L, 4, "receive_frame");
		lua_createtable(L, (int)n, 1);
	}
	for (i = 1; i <= n; i++) {
		int tag;

		if (p == end)
			break;
		tag = *p++;
		if (estimate > (double)max)
			break;
		if (tag == 'n') {
			estimate += 32;
			if (unpacked)
				lua_pushnil(L);
			continue;
		}
		if (tag == 'T') {	/* a flat table: scalar pairs until E */
			int whole = 0;

			estimate += 32;
			lua_newtable(L);
			while (p < end && estimate <= (double)max) {
				if (*p == 'E') {
					p++;
					whole = 1;
					break;
				}
				tag = *p++;
				if (!frame_get_scalar(L, &p, end, tag,
						      &estimate))
					break;
				if (p == end ||
				    !frame_get_scalar(L, &p, end, *p++,
						      &estimate))
					break;
				lua_rawset(L, -3);
			}
			if (!whole)
				break;	/* anything else: child.decode's */
		} else if (!frame_get_scalar(L, &p, end, tag, &estimate)) {
			break;
		}
		if (!unpacked)
			lua_rawseti(L, -2, (int)i);
	}
	if (i <= n || p != end || estimate > (double)max) {
		lua_settop(L, base);
		return 0;
	}
	if (unpacked)
		return (int)n + 1;
	lua_pushinteger(L, (lua_Integer)n);
	lua_setfield(L, -2, "n");
	return 1;
}

/* read(2) until it gives bytes, EOF or an error other than EINTR */
static ssize_t frame_read(int fd, char *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

/***
Receive one child.lua frame from a channel that carries one frame at a
time (an agent's socket: a request, then its reply), with one read(2)
when it fits a buffer: the read may take all the channel holds.
@function receive_frame
@tparam int fd
@tparam int max the size limit of a body (mountns.child.MAX_BYTES)
@tparam[opt] boolean unpacked such an `o` frame of at most 64 values
comes back as `true` and its values (no table around them: an agent
call's reply)
@treturn[1] string the kind letter
@treturn[1] string|table the body; for an `o` frame of scalars and flat
tables only (as send_values writes), its values (a table with `n`)
@return[2] nil
@treturn[2] string "eof", "too large", "corrupt frame", or "read: strerror
(ENAME)" (and the errno)
*/
static int lmns_frame_receive(lua_State *L)
{
	int fd, unpacked;
	lua_Integer max;
	char stack[FRAME_STACK], *buf = stack;
	size_t got = 0, want = FRAME_HEAD, len = 0;
	int i, pushed;

	lmns_checknomore(L, 3);
	fd = lmns_checkfd(L, 1);
	max = luaL_checkinteger(L, 2);
	if (!lua_isnoneornil(L, 3))
		luaL_checktype(L, 3, LUA_TBOOLEAN);
	unpacked = lua_toboolean(L, 3);

	while (got < want) {
		ssize_t n = frame_read(fd, buf + got, (buf == stack ?
				       sizeof stack : want) - got);

		if (n < 0)
			return lmns_fail(L, errno, "read", NULL, NULL);
		if (n == 0) {
			lua_pushnil(L);
			lua_pushliteral(L, "eof");
			return 2;
		}
		got += (size_t)n;
		if (want == FRAME_HEAD && got >= FRAME_HEAD) {
			for (i = 1; i < FRAME_HEAD; i++) {
				int c = buf[i];

				if (c >= '0' && c <= '9')
					len = len * 16 + (size_t)(c - '0');
				else if (c >= 'a' && c <= 'f')
					len = len * 16 + (size_t)(c - 'a' + 10);
				else if (c >= 'A' && c <= 'F')
					len = len * 16 + (size_t)(c - 'A' + 10);
				else
					goto corrupt;
			}
			if (max < 0 || len > (size_t)max) {
				lua_pushnil(L);
				lua_pushliteral(L, "too large");
				return 2;
			}
			want = FRAME_HEAD + len;
			if (want > sizeof stack) {
				buf = lua_newuserdata(L, want);
				memcpy(buf, stack, got);
			}
		}
	}
	if (got > want)
		goto corrupt;	/* a second frame: not one at a time */
	if (unpacked && buf[0] == 'o' &&
	    (pushed = frame_decode(L, buf + FRAME_HEAD, len, 1, max)) > 0)
		return pushed;
	lua_pushlstring(L, buf, 1);
	if (buf[0] == 'o' && frame_decode(L, buf + FRAME_HEAD, len, 0, max))
		return 2;
	lua_pushlstring(L, buf + FRAME_HEAD, len);
	return 2;
corrupt:
	lua_pushnil(L);
	lua_pushliteral(L, "corrupt frame");
	return 2;
}

void lmns_frame_open(lua_State *L)
{
	lua_pushcfunction(L, lmns_frame_send_values);
	lua_setfield(L, -2, "send_values");
	lua_pushcfunction(L, lmns_frame_receive);
	lua_setfield(L, -2, "receive_frame");
}
