// SPDX-License-Identifier: GPL-2.0
/*
 * JSON lines writer, documented key by key in doc/trace-defer-json.7.md:
 * layout full, one object per event with its frames (schema version 1),
 * or layout interned (schema version 2), where a td_json_writer remembers
 * the stacks it wrote to its file as "stack" lines and event lines refer
 * to them by id.
 *
 * Promises: the output is valid JSON on one line (strings are made valid
 * UTF-8: an invalid byte becomes U+FFFD), every key of the schema is always
 * present with its documented type (null where the schema allows it), keys
 * come in the documented order, and raw addresses are always written,
 * symbolized or not.
 *
 * Why not a json-c object tree per event: building and serializing one
 * (about 130 objects for a sched_switch with 10 kernel and 8 user frames)
 * costs tens of microseconds, and the daemon must write a million events a
 * second. So the structure is written straight into a stack buffer; json-c
 * still escapes every string that needs escaping (quotes, backslashes,
 * control characters), with JSON_C_TO_STRING_NOSLASHESCAPE; strings that
 * need none, the common case for symbols, paths and comms, are copied.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <traceevent/event-parse.h>

#include <trace-defer/output.h>

#include "comm.h"
#include "dynfield.h"
#include "htab.h"

#define JSON_FLAGS	(JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
#define TD_STR_(x)	#x
#define TD_STR(x)	TD_STR_(x)

size_t td_utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c;
	size_t len, i;
	uint32_t cp;

	if (!n)
		return 0;
	c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;	/* continuation byte, C0/C1 overlong, or > U+10FFFF */
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;	/* overlong, out of range, or a UTF-16 surrogate */
	return len;
}

/* ---- output buffer ---- */

/*
 * The whole line is built in memory and written with one fwrite(), so a
 * failure never leaves half a record in the output.
 */
struct jw {
	char *buf;
	size_t len, cap;
	int err;		/* first error, negative errno */
};

static int jw_grow(struct jw *w, size_t n)
{
	size_t cap = w->cap ? w->cap : 4096;
	char *nbuf;

	if (w->err)
		return w->err;
	while (n > cap - w->len)
		cap *= 2;
	nbuf = realloc(w->buf, cap);
	if (!nbuf) {
		w->err = -ENOMEM;
		return w->err;
	}
	w->buf = nbuf;
	w->cap = cap;
	return 0;
}

/* After an error nothing more is appended (cap stays short of the need). */
static inline void jw_put(struct jw *w, const char *s, size_t n)
{
	if (n > w->cap - w->len && jw_grow(w, n))
		return;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

/* For string literals: the length is known at compile time. */
#define jw_lit(w, s)	jw_put(w, s, sizeof(s) - 1)

static const char dec_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const uint64_t pow10s[20] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
	100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
	10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
	100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
};

/*
 * Decimal digits of @v, 1 to 20: from its bit width (1233 / 4096 is just
 * under log10(2)), one too few at most, which one comparison settles. @v
 * | 1 makes 0 one digit and moves no other value across a power of ten.
 */
static inline unsigned int dec_digits(uint64_t v)
{
	unsigned int t = (unsigned int)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;

	return t + ((v | 1) >= pow10s[t]);
}

static void jw_u64_grow(struct jw *w, uint64_t v);

/*
 * Decimal, two digits per step, written in place (no copy of a temporary).
 * Inline, with growing the buffer out of line: a line has ten numbers or so.
 */
static inline void jw_u64(struct jw *w, uint64_t v)
{
	unsigned int n = dec_digits(v);
	char *p;

	if (n > w->cap - w->len)
		return jw_u64_grow(w, v);
	p = w->buf + w->len + n;
	w->len += n;
	while (v >= 100) {
		p -= 2;
		memcpy(p, dec_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, dec_pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
}

static __attribute__((noinline)) void jw_u64_grow(struct jw *w, uint64_t v)
{
	if (!jw_grow(w, dec_digits(v)))
		jw_u64(w, v);
}

static void jw_i64(struct jw *w, int64_t v)
{
	if (v < 0) {
		jw_lit(w, "-");
		jw_u64(w, -(uint64_t)v);
	} else {
		jw_u64(w, (uint64_t)v);
	}
}

/* Two lower-case hex digits per byte value. */
static const char hex_pairs[256][2] = {
#define HEX_PAIR(b)	{ "0123456789abcdef"[(b) >> 4], "0123456789abcdef"[(b) & 15] }
#define HEX_ROW(r)	HEX_PAIR(r), HEX_PAIR(r + 1), HEX_PAIR(r + 2), HEX_PAIR(r + 3), \
			HEX_PAIR(r + 4), HEX_PAIR(r + 5), HEX_PAIR(r + 6), HEX_PAIR(r + 7), \
			HEX_PAIR(r + 8), HEX_PAIR(r + 9), HEX_PAIR(r + 10), HEX_PAIR(r + 11), \
			HEX_PAIR(r + 12), HEX_PAIR(r + 13), HEX_PAIR(r + 14), HEX_PAIR(r + 15)
	HEX_ROW(0x00), HEX_ROW(0x10), HEX_ROW(0x20), HEX_ROW(0x30),
	HEX_ROW(0x40), HEX_ROW(0x50), HEX_ROW(0x60), HEX_ROW(0x70),
	HEX_ROW(0x80), HEX_ROW(0x90), HEX_ROW(0xa0), HEX_ROW(0xb0),
	HEX_ROW(0xc0), HEX_ROW(0xd0), HEX_ROW(0xe0), HEX_ROW(0xf0),
#undef HEX_ROW
#undef HEX_PAIR
};

/* "0x..." lower case, no leading zeros: two digits per step. */
static void jw_hex(struct jw *w, uint64_t v)
{
	char tmp[24], *end = tmp + sizeof(tmp), *p = end - 1;

	*p = '"';
	while (v > 0xff) {
		p -= 2;
		memcpy(p, hex_pairs[v & 0xff], 2);
		v >>= 8;
	}
	if (v < 0x10) {
		*--p = hex_pairs[v][1];
	} else {
		p -= 2;
		memcpy(p, hex_pairs[v], 2);
	}
	p -= 3;
	memcpy(p, "\"0x", 3);
	jw_put(w, p, end - p);
}

/* Slow path: invalid UTF-8 replaced, then json-c escapes the result. */
static void jw_str_slow(struct jw *w, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	struct json_object *obj;
	char *copy = malloc(len * 3 + 1);	/* each bad byte grows to 3 bytes */
	size_t i, n, o = 0;
	const char *text;

	if (!copy)
		goto nomem;
	for (i = 0; i < len; ) {
		n = td_utf8_seq_len(u + i, len - i);
		if (n) {
			memcpy(copy + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(copy + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	obj = json_object_new_string_len(copy, (int)o);
	free(copy);
	if (!obj)
		goto nomem;
	text = json_object_to_json_string_length(obj, JSON_FLAGS, &n);
	if (text)
		jw_put(w, text, n);
	json_object_put(obj);
	if (text)
		return;
nomem:
	w->err = -ENOMEM;
}

/* Bytes that a JSON string cannot hold as they are: 1 escape, 2 non-ASCII. */
static const unsigned char byte_class[256] = {
	[0x00 ... 0x1f] = 1,
	['"'] = 1,
	['\\'] = 1,
	[0x80 ... 0xff] = 2,
};

/*
 * Non-zero when one of the eight bytes of @v is below 0x20, '"', '\\' or
 * non-ASCII. The "has a byte less than n" and "has a zero byte" tricks are
 * exact when no byte has its high bit set, and a byte that has it is
 * flagged anyway; a flagged word is then looked at byte by byte.
 */
static inline uint64_t special_bytes(uint64_t v)
{
	uint64_t q = v ^ (TD_BYTES_ONES * '"'), b = v ^ (TD_BYTES_ONES * '\\');

	return ((v | ((v - TD_BYTES_ONES * 0x20) & ~v)) & TD_BYTES_HIGHS) | td_nul_flags(q) |
	       td_nul_flags(b);
}

/*
 * The bytes of @s from @i to @len (fewer than eight) in one word, read
 * without going past @len: the last eight bytes when the string has
 * them, else two overlapping loads, the rest plain spaces. (Not a memcpy
 * of len - i bytes into a word: reading that word back stalls.)
 */
static inline uint64_t tail_word(const char *s, size_t i, size_t len)
{
	const char *t = s + i;
	size_t n = len - i;
	uint64_t v;
	uint32_t a4, b4;
	uint16_t a2, b2;

	if (len >= 8) {
		memcpy(&v, s + len - 8, 8);
		return v;
	}
	if (n >= 4) {
		memcpy(&a4, t, 4);
		memcpy(&b4, t + n - 4, 4);
		return a4 | (uint64_t)b4 << 32;
	}
	if (n >= 2) {
		memcpy(&a2, t, 2);
		memcpy(&b2, t + n - 2, 2);
		return (TD_BYTES_ONES * ' ' & ~0xffffffffULL) | a2 | (uint64_t)b2 << 16;
	}
	return (TD_BYTES_ONES * ' ' & ~0xffULL) | (unsigned char)t[0];
}

/* A JSON string from @len bytes at @s (kernel strings are arbitrary bytes). */
static void jw_str(struct jw *w, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n;

	/* Skip eight plain ASCII bytes at a time (most strings are all plain). */
	while (i + 8 <= len) {
		uint64_t v;

		memcpy(&v, s + i, 8);
		if (special_bytes(v))
			break;
		i += 8;
	}
	/* The last bytes as one word too (a byte loop costs more than it all). */
	if (i < len && len - i < 8 && !special_bytes(tail_word(s, i, len)))
		i = len;
	while (i < len) {
		switch (byte_class[u[i]]) {
		case 0:
			i++;
			continue;
		case 1:
			return jw_str_slow(w, s, len);
		default:
			n = td_utf8_seq_len(u + i, len - i);
			if (!n)
				return jw_str_slow(w, s, len);
			i += n;
		}
	}
	jw_lit(w, "\"");
	jw_put(w, s, len);
	jw_lit(w, "\"");
}

static void jw_cstr(struct jw *w, const char *s)
{
	jw_str(w, s, strlen(s));
}

/* ---- event fields ---- */

static void jw_number(struct jw *w, uint64_t v, int size, bool is_signed)
{
	if (!is_signed)
		return jw_u64(w, v);
	switch (size) {
	case 1:
		return jw_i64(w, (int8_t)v);
	case 2:
		return jw_i64(w, (int16_t)v);
	case 4:
		return jw_i64(w, (int32_t)v);
	default:
		return jw_i64(w, (int64_t)v);
	}
}

/*
 * tep_read_number(), minus a call per field: @swap says the file's byte
 * order is not ours. @size is 1, 2, 4 or 8.
 */
static inline uint64_t read_number(struct tep_handle *tep, bool swap, const void *p, int size)
{
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	if (swap)
		return tep_read_number(tep, p, size);
	switch (size) {
	case 1:
		memcpy(&v8, p, 1);
		return v8;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

static bool number_size(int size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

/*
 * Element size of an array field. libtraceevent gives it for fixed arrays;
 * for a __data_loc array it leaves it 0, so take it from the type.
 */
static int element_size(const struct tep_format_field *field)
{
	const char *t = field->type;

	if (field->elementsize && number_size((int)field->elementsize))
		return (int)field->elementsize;
	if (field->flags & TEP_FIELD_IS_LONG)
		return field->event && field->event->tep ?
		       tep_get_long_size(field->event->tep) : 8;
	if (strstr(t, "char") || strstr(t, "u8") || strstr(t, "s8"))
		return 1;
	if (strstr(t, "short") || strstr(t, "16"))
		return 2;
	if (strstr(t, "long") || strstr(t, "64"))
		return 8;
	return 4;
}

static void jw_array(struct jw *w, struct tep_handle *tep, bool swap,
		     const struct tep_format_field *field, const unsigned char *p, int len)
{
	bool is_signed = field->flags & TEP_FIELD_IS_SIGNED;
	int esize = element_size(field);
	int i;

	jw_lit(w, "[");
	for (i = 0; i + esize <= len; i += esize) {
		if (i)
			jw_lit(w, ",");
		jw_number(w, read_number(tep, swap, p + i, esize), esize, is_signed);
	}
	jw_lit(w, "]");
}

/*
 * One field's value: a number, a string (char arrays and __data_loc
 * char[]), an array of numbers, or null when the record is too short for
 * the field (a truncated or malformed record).
 */
static void jw_field(struct jw *w, struct tep_handle *tep, bool swap,
		     const struct tep_format_field *field, const unsigned char *data, int size)
{
	int off = field->offset, len = field->size;
	const unsigned char *p;

	if (off < 0 || len < 0 || off > size || len > size - off)
		goto null;
	if (field->flags & TEP_FIELD_IS_DYNAMIC) {
		unsigned int doff, dlen;

		if (!td_dyn_locate(field, data, size, swap != (__BYTE_ORDER == __BIG_ENDIAN),
				   &doff, &dlen))
			goto null;
		off = (int)doff;
		len = (int)dlen;
	} else if (!(field->flags & TEP_FIELD_IS_ARRAY)) {
		if (!number_size(len))
			goto null;
		jw_number(w, read_number(tep, swap, data + off, len), len,
			  field->flags & TEP_FIELD_IS_SIGNED);
		return;
	}
	p = data + off;
	if (field->flags & TEP_FIELD_IS_STRING)
		jw_str(w, (const char *)p, strnlen((const char *)p, len));
	else
		jw_array(w, tep, swap, field, p, len);
	return;
null:
	jw_lit(w, "null");
}

/* What an event line writes of its fields. */
enum fields_as {
	FIELDS_OBJECT,		/* {"name":value,...} */
	FIELDS_NAMES,		/* ["name",...]: a compact format line */
	FIELDS_VALUES,		/* [value,...]: a compact event line */
};

/*
 * How one format's fields are written, worked out on its first line (see
 * plan_of()): each field's kind, place and size, and its key already
 * rendered. The lines of a format then walk this list instead of the
 * format's fields: most of what a line costs.
 */
enum fstep_kind {
	FS_UNSIGNED,		/* a number of 1, 2, 4 or 8 bytes */
	FS_SIGNED,
	FS_STRING,		/* a char array in the record */
	FS_FIELD,		/* anything else: jw_field() */
};

struct fstep {
	const struct tep_format_field *field;
	int offset, size;
	uint32_t key;		/* its ,"name": at plan->keys + key (KEY_PAD bytes follow them all) */
	uint16_t klen;
	uint8_t kind;
};

struct fplan {
	const struct tep_event *event;	/* NULL: empty */
	bool swap;
	unsigned int nr;
	struct fstep *steps;
	char *keys;
	/* "system:name" of the event, and that name as a JSON string (NULL: none). */
	char *name;
	char *name_text;
	size_t name_len;
	/*
	 * The fields' text cache (struct xentry): where a record's own fields
	 * start (its key), and this window's lookups and hits; off for the
	 * format once a window mostly misses (arguments, pointers).
	 */
	int kstart;
	uint32_t lookups, hits;
	bool no_cache;
};

/*
 * Append @n bytes from @s, which may be read up to KEY_PAD bytes past them:
 * whole chunks, a few fixed moves instead of a call for a length known
 * only at run time (the keys of a plan, a few bytes each).
 */
#define KEY_PAD		16

static inline void jw_put_padded(struct jw *w, const char *s, size_t n)
{
	size_t i;

	if (n + KEY_PAD > w->cap - w->len && jw_grow(w, n + KEY_PAD))
		return;
	for (i = 0; i < n; i += KEY_PAD)
		memcpy(w->buf + w->len + i, s + i, KEY_PAD);
	w->len += n;
}

/* libtraceevent keeps the common_ fields apart; a format could still list one. */
static inline bool is_common(const struct tep_format_field *f)
{
	return f->name[0] == 'c' && !strncmp(f->name, "common_", 7);
}

static void jw_key(struct jw *w, const char *name);
static inline struct fplan *plan_of(struct td_json_writer *t, const struct tep_event *event);
static inline void jw_name16(struct jw *w, struct td_json_writer *t, const char *s);

static void jw_fields_cached(struct jw *w, struct td_json_writer *t, struct fplan *p,
			     const struct td_event *ev, enum fields_as as);

/* @p's fields of @ev (FIELDS_OBJECT or FIELDS_VALUES), as jw_fields() writes them. */
static void jw_plan_fields(struct jw *w, struct td_json_writer *t, const struct fplan *p,
			   const struct td_event *ev, enum fields_as as)
{
	const unsigned char *data = ev->raw;
	struct tep_handle *tep = ev->tep_event->tep;
	int size = ev->raw_size;
	unsigned int i;

	jw_put(w, as == FIELDS_OBJECT ? "{" : "[", 1);
	for (i = 0; i < p->nr; i++) {
		const struct fstep *f = &p->steps[i];

		/* A key is ,"name": (the first without its comma). */
		if (as == FIELDS_OBJECT)
			jw_put_padded(w, p->keys + f->key + !i, f->klen - !i);
		else if (i)
			jw_lit(w, ",");
		if (f->kind == FS_FIELD) {
			jw_field(w, tep, p->swap, f->field, data, size);
		} else if (f->offset > size || f->size > size - f->offset) {
			jw_lit(w, "null");
		} else if (f->kind == FS_STRING) {
			const char *str = (const char *)data + f->offset;

			if (f->size == TD_COMM_LEN)
				jw_name16(w, t, str);
			else
				jw_str(w, str, strnlen(str, f->size));
		} else {
			jw_number(w, read_number(tep, p->swap, data + f->offset, f->size), f->size,
				  f->kind == FS_SIGNED);
		}
	}
	jw_put(w, as == FIELDS_OBJECT ? "}" : "]", 1);
}

/*
 * The event's own fields (common_* left out), in the order of its format.
 * FIELDS_NAMES lists them for a format even when the record has no data.
 * @t: the writer whose plans to use, NULL for none.
 */
static void jw_fields(struct jw *w, struct td_json_writer *t, const struct td_event *ev,
		      enum fields_as as)
{
	struct tep_event *event = ev->tep_event;
	struct tep_handle *tep = event ? event->tep : NULL;
	struct tep_format_field *field;
	struct fplan *plan;
	bool first = true, swap;

	if (t && event && ev->raw && as != FIELDS_NAMES && (plan = plan_of(t, event))) {
		jw_fields_cached(w, t, plan, ev, as);
		return;
	}
	swap = tep && tep_is_file_bigendian(tep) != tep_is_local_bigendian(tep);
	if (as == FIELDS_OBJECT)
		jw_lit(w, "{");
	else
		jw_lit(w, "[");
	field = event && (ev->raw || as == FIELDS_NAMES) ? event->format.fields : NULL;
	for (; field; field = field->next) {
		if (is_common(field))
			continue;
		if (!first)
			jw_lit(w, ",");
		first = false;
		if (as == FIELDS_OBJECT)
			jw_key(w, field->name);
		else if (as == FIELDS_NAMES)
			jw_cstr(w, field->name);
		if (as == FIELDS_NAMES)
			continue;
		jw_field(w, tep, swap, field, ev->raw, ev->raw_size);
	}
	if (as == FIELDS_OBJECT)
		jw_lit(w, "}");
	else
		jw_lit(w, "]");
}

/* ---- frames ---- */

static void jw_frame(struct jw *w, const struct td_frame *fr, bool user)
{
	jw_lit(w, "{\"addr\":");
	jw_hex(w, fr->addr);
	if (fr->symbol) {
		jw_lit(w, ",\"sym\":");
		jw_cstr(w, fr->symbol);
		jw_lit(w, ",\"off\":");
		jw_u64(w, fr->sym_offset);
	} else {
		jw_lit(w, ",\"sym\":null,\"off\":null");
	}
	jw_lit(w, ",\"obj\":");
	if (fr->object)
		jw_cstr(w, fr->object);
	else
		jw_lit(w, "null");
	if (user) {
		/* A recorded vDSO frame has no offset; an unknown file id has one. */
		jw_lit(w, ",\"file_off\":");
		if ((fr->object && fr->file_kind != TD_FILE_VDSO) || fr->file_kind == TD_FILE_IN)
			jw_hex(w, fr->file_offset);
		else
			jw_lit(w, "null");
		jw_lit(w, ",\"build_id\":");
		if (fr->build_id)
			jw_cstr(w, fr->build_id);
		else
			jw_lit(w, "null");
		jw_lit(w, ",\"file_id\":");
		if (fr->file_kind == TD_FILE_IN)
			jw_u64(w, fr->file_id);
		else
			jw_lit(w, "null");
	}
	jw_lit(w, "}");
}

/*
 * Frame cache: the text of recently written frames, so that a frame seen
 * again (the common case: the same functions are on most stacks) is one
 * copy instead of a dozen escapes and conversions. Only frames whose
 * strings a symbolizer promises never to change (td_frame.strings_id) are
 * cached, keyed by everything the text is made of. Direct-mapped, one per
 * thread (the writer functions may be called from several), allocated on
 * first use and freed when the thread exits.
 */
#define FCACHE_BITS	12
#define FCACHE_TEXT	256	/* longer frames are written every time */
#define FCACHE_CHUNK	32	/* copied by so many bytes: FCACHE_TEXT is a multiple */
#define LINE_BUF_KEEP	(1 << 20)

struct fentry {
	uint64_t addr, sym_offset, file_offset, strings_id;	/* 0: empty */
	const char *symbol, *object, *build_id;
	uint32_t file_id, file_kind;
	uint16_t len;
	uint8_t user;
	char text[FCACHE_TEXT];
};

/*
 * Append a cached frame's text. Whole chunks are copied, maybe past its end
 * (within text[], and within the buffer, which has room for FCACHE_TEXT
 * more): a few vector moves, where an exact copy of a length known only
 * at run time becomes a slow string instruction or a call.
 */
static inline void jw_put_chunked(struct jw *w, const char *text, size_t len, size_t room)
{
	size_t i;
	char *d;

	if (room > w->cap - w->len && jw_grow(w, room))
		return;
	d = w->buf + w->len;
	for (i = 0; i < len; i += FCACHE_CHUNK)
		memcpy(d + i, text + i, FCACHE_CHUNK);
	w->len += len;
}

static inline void jw_put_cached(struct jw *w, const struct fentry *e)
{
	jw_put_chunked(w, e->text, e->len, FCACHE_TEXT);
}

/*
 * Fields' text: the text of an event's fields, keyed by its format, how
 * they are written and the record's bytes from its first own field on
 * (the text is made of nothing else). A few tasks switching among each
 * other write the same sched_switch fields again and again. Direct-mapped;
 * a format whose lookups mostly miss (a window of XCACHE_WINDOW with under
 * one hit in eight) stops using it, so unique records pay a lookup only
 * that long.
 */
#define XCACHE_BITS	8
#define XCACHE_KEY	64	/* records with more bytes of their own are written every time */
#define XCACHE_TEXT	320	/* a multiple of FCACHE_CHUNK */
#define XCACHE_WINDOW	4096

struct xentry {
	const struct tep_event *event;	/* NULL: empty */
	uint16_t klen, len;
	uint8_t as;
	uint64_t key[XCACHE_KEY / 8];	/* zero past klen */
	char text[XCACHE_TEXT];
};

#define SCACHE_BITS	8
#define SCACHE_FRAMES	128	/* deeper stacks are not cached whole */
#define SCACHE_TEXT	16384

_Static_assert(sizeof(struct td_frame) == 8 * sizeof(uint64_t),
	       "td_frame must have no padding: stacks are compared with memcmp");

struct sentry {
	void *block;		/* frames, then text; NULL: empty */
	size_t cap;
	struct td_frame *frames;
	char *text;		/* "[...]" */
	size_t len;
	unsigned int nr;
	bool user;
	uint64_t id;		/* the pipeline's stack id of these frames, 0: none */
};

/*
 * Interned stacks (layout "interned", schema version 2): the stacks already
 * written to this file as "stack" lines, by id, in the library's hash table;
 * at most max_stacks entries and TD_JSON_STACK_BYTES of keys, then
 * a new epoch (the table is emptied, ids go on). A key is either the frames
 * themselves (every frame vouched for by a symbolizer: equal frames render
 * to equal text) or, when a frame is not, the rendered text: either way,
 * two events share an id only when their stacks are written the same.
 */
struct istack {
	struct hnode node;
	uint64_t id;
	uint32_t len;		/* key bytes */
	uint32_t nk;		/* as ikey's */
	char key[];		/* frames (kernel then user) or text */
};

/*
 * Field plans (struct fplan), one per format, direct-mapped on the format's
 * address: the formats a writer is given stay as they are while it lives,
 * or until td_json_writer_reset() (see trace-defer/output.h).
 */
#define PCACHE_BITS	4

/*
 * Task names (an event's comm, and the 16-byte char fields that hold one,
 * such as sched_switch's prev_comm and next_comm) as JSON strings: a few
 * tasks write most lines. Direct-mapped on the name's bytes up to its NUL,
 * which are the whole key (the text is made from nothing else); a name
 * whose text does not fit is written as it comes.
 */
#define NCACHE_BITS	7

struct tname {
	uint64_t lo, hi;	/* the 16 bytes, zero from the first NUL on */
	uint32_t len;		/* of text; 0: empty */
	char text[44];
};

/*
 * An event line's task after its CPU: pid, tid and comm with their keys
 * (or commas), by task: a few tasks write most lines. Direct-mapped on
 * what the text is made of; a text that does not fit is written every time.
 */
#define TCACHE_BITS	8
#define TCACHE_TEXT	96	/* a multiple of FCACHE_CHUNK */

struct seps;

struct ttask {
	const struct seps *sep;	/* NULL: empty */
	int pid, tid;
	uint64_t lo, hi;	/* the comm, as struct tname's */
	uint32_t len;
	char text[TCACHE_TEXT];
};

/* An event line's status as a JSON string: the longest, "unwind_failed", is 15 bytes. */
struct tstatus {
	uint8_t len;		/* 0: not made (out of memory), write it as it comes */
	char text[23];
};

struct td_json_writer {
	enum td_json_layout layout;
	struct fentry *cache;	/* NULL (out of memory): frames not cached */
	struct fplan *plans;	/* NULL (out of memory): fields written as they come */
	struct tname *names;	/* NULL (out of memory): names written as they come */
	struct xentry *fields;	/* NULL (out of memory): fields' text written every time */
	struct ttask *tasks;	/* NULL (out of memory): tasks written every time */
	struct tstatus status[TD_NR_STATUS];
	struct sentry *stacks;
	char *buf;		/* line buffer, kept between lines */
	size_t cap;
	struct htab tab;	/* of struct istack; interned layout only */
	bool has_tab;
	size_t nr, bytes, max;
	uint64_t next_id;
	/* Layout compact: event formats described to this file, and whether it has its header. */
	struct htab formats;
	bool has_formats;
	bool header_done;
	uint64_t next_format;
	struct td_json_stats stats;
};

/*
 * Layout compact: an event format described to the file by a "format"
 * line, keyed on the format (tep_event) and the event's name.
 */
struct iformat {
	struct hnode node;
	const struct tep_event *event;
	uint64_t id;
	char name[];
};

static void iformat_free(struct hnode *n)
{
	free(container_of(n, struct iformat, node));
}

static void istack_free(struct hnode *n)
{
	free(container_of(n, struct istack, node));
}

/*
 * Empty the table. Should it not be set up again (out of memory) there is
 * none: every stack is then written as a new one, still a correct file.
 */
static void writer_forget(struct td_json_writer *jw)
{
	if (!jw->has_tab)
		return;
	htab_destroy(&jw->tab, istack_free);
	jw->has_tab = !htab_init(&jw->tab);
	jw->nr = 0;
	jw->bytes = 0;
}

/* A new file: its formats are described again, after a header. */
static void writer_forget_formats(struct td_json_writer *jw)
{
	jw->header_done = false;
	if (!jw->has_formats)
		return;
	htab_destroy(&jw->formats, iformat_free);
	jw->has_formats = !htab_init(&jw->formats);
}

static void plan_free(struct fplan *p)
{
	free(p->steps);
	free(p->keys);
	free(p->name);
	free(p->name_text);
	memset(p, 0, sizeof(*p));
}

static void forget_plans(struct td_json_writer *jw)
{
	unsigned int i;

	if (jw->plans)
		for (i = 0; i < 1U << PCACHE_BITS; i++)
			plan_free(&jw->plans[i]);
}

static enum fstep_kind step_kind(const struct tep_format_field *f)
{
	if (f->offset < 0 || f->size < 0 || (f->flags & TEP_FIELD_IS_DYNAMIC))
		return FS_FIELD;
	if (f->flags & TEP_FIELD_IS_ARRAY)
		return f->flags & TEP_FIELD_IS_STRING ? FS_STRING : FS_FIELD;
	if (!number_size(f->size))
		return FS_FIELD;
	return f->flags & TEP_FIELD_IS_SIGNED ? FS_SIGNED : FS_UNSIGNED;
}

/* The event's name and its text; none when out of memory (it is then written as it comes). */
static void plan_name(struct fplan *p, const struct tep_event *event)
{
	struct jw text = { 0 };

	if (!event->system || !event->name ||
	    asprintf(&p->name, "%s:%s", event->system, event->name) < 0) {
		p->name = NULL;
		return;
	}
	jw_cstr(&text, p->name);
	if (text.err) {
		free(text.buf);
		free(p->name);
		p->name = NULL;
		return;
	}
	p->name_text = text.buf;
	p->name_len = text.len;
}

/* Work out @p for @event; false when out of memory (@p left empty). */
static bool plan_build(struct fplan *p, const struct tep_event *event)
{
	struct tep_handle *tep = event->tep;
	const struct tep_format_field *f;
	struct jw keys = { 0 };
	unsigned int n = 0;

	for (f = event->format.fields; f; f = f->next)
		n++;
	p->steps = calloc(n ? n : 1, sizeof(*p->steps));
	if (!p->steps)
		return false;
	for (f = event->format.fields; f; f = f->next) {
		struct fstep *st = &p->steps[p->nr];
		size_t start = keys.len;

		if (is_common(f))
			continue;
		jw_lit(&keys, ",");
		jw_key(&keys, f->name);
		if (keys.err || keys.len - start > UINT16_MAX)
			goto fail;
		st->field = f;
		st->offset = f->offset;
		st->size = f->size;
		st->key = (uint32_t)start;
		st->klen = (uint16_t)(keys.len - start);
		st->kind = step_kind(f);
		p->nr++;
	}
	jw_put(&keys, (const char[KEY_PAD]){ 0 }, KEY_PAD);
	if (keys.err)
		goto fail;
	p->kstart = INT_MAX;
	for (n = 0; n < p->nr; n++)
		if (p->steps[n].offset < p->kstart)
			p->kstart = p->steps[n].offset;
	p->no_cache = !p->nr || p->kstart < 0;
	p->keys = keys.buf;
	p->swap = tep && tep_is_file_bigendian(tep) != tep_is_local_bigendian(tep);
	p->event = event;
	plan_name(p, event);
	return true;
fail:
	free(keys.buf);
	plan_free(p);
	return false;
}

static __attribute__((noinline)) struct fplan *plan_new(struct fplan *p,
							const struct tep_event *event)
{
	plan_free(p);
	return plan_build(p, event) ? p : NULL;
}

static inline struct fplan *plan_of(struct td_json_writer *t, const struct tep_event *event)
{
	struct fplan *p;

	if (!t->plans)
		return NULL;
	p = &t->plans[((uintptr_t)event >> 4 ^ (uintptr_t)event >> 12) &
		      ((1U << PCACHE_BITS) - 1)];
	return p->event == event ? p : plan_new(p, event);
}

/* Two whole keys (zero past their length): a few vector ops, not a call to memcmp(). */
static inline bool same_key(const uint64_t *a, const uint64_t *b)
{
	uint64_t d = 0;

	for (unsigned int i = 0; i < XCACHE_KEY / 8; i++)
		d |= a[i] ^ b[i];
	return !d;
}

static void jw_fields_cached(struct jw *w, struct td_json_writer *t, struct fplan *p,
			     const struct td_event *ev, enum fields_as as)
{
	uint64_t key[XCACHE_KEY / 8] = { 0 }, h = HTAB_SEED;
	size_t klen, start, len;
	struct xentry *e;
	unsigned int i;
	bool hit;

	if (!t->fields || p->no_cache || ev->raw_size <= p->kstart ||
	    ev->raw_size - p->kstart > XCACHE_KEY)
		return jw_plan_fields(w, t, p, ev, as);
	klen = (size_t)(ev->raw_size - p->kstart);
	memcpy(key, (const char *)ev->raw + p->kstart, klen);
	for (i = 0; i < (klen + 7) / 8; i++)
		h = htab_hash_u64(h, key[i]);
	e = &t->fields[(h ^ as) & ((1U << XCACHE_BITS) - 1)];
	hit = e->event == p->event && e->as == as && e->klen == klen && same_key(e->key, key);
	p->hits += hit;
	if (++p->lookups == XCACHE_WINDOW) {
		p->no_cache = p->hits < XCACHE_WINDOW / 8;
		p->lookups = p->hits = 0;
	}
	if (hit) {
		t->stats.fields_cached++;
		return jw_put_chunked(w, e->text, e->len, XCACHE_TEXT);
	}
	start = w->len;
	jw_plan_fields(w, t, p, ev, as);
	len = w->len - start;
	if (w->err || len > XCACHE_TEXT)
		return;
	e->event = p->event;
	e->as = (uint8_t)as;
	e->klen = (uint16_t)klen;
	e->len = (uint16_t)len;
	memcpy(e->key, key, sizeof(key));
	memcpy(e->text, w->buf + start, len);
}

/* Not found in the cache: written, and kept in @e when it fits (@e NULL: no cache). */
static __attribute__((noinline)) void name16_miss(struct jw *w, struct tname *e, const char *s,
						  uint64_t lo, uint64_t hi)
{
	size_t start = w->len;

	jw_str(w, s, strnlen(s, TD_COMM_LEN));
	if (!e || w->err || w->len - start > sizeof(e->text))
		return;
	e->lo = lo;
	e->hi = hi;
	e->len = (uint32_t)(w->len - start);
	memcpy(e->text, w->buf + start, e->len);
}

/* A name of at most 16 bytes (a NUL ends it sooner) at @s, as jw_str() writes it. */
static inline void jw_name16(struct jw *w, struct td_json_writer *t, const char *s)
{
	struct tname *e;
	uint64_t lo, hi;

	if (!t || !t->names)
		return name16_miss(w, NULL, s, 0, 0);
	td_comm_words(s, &lo, &hi);
	e = &t->names[((lo ^ hi * 0xff51afd7ed558ccdULL) * 0x9e3779b97f4a7c15ULL) >>
		      (64 - NCACHE_BITS)];
	if (!e->len || e->lo != lo || e->hi != hi)
		return name16_miss(w, e, s, lo, hi);
	/* All of text[], maybe past its end: a few fixed moves, not a call. */
	if (sizeof(e->text) > w->cap - w->len && jw_grow(w, sizeof(e->text)))
		return;
	memcpy(w->buf + w->len, e->text, sizeof(e->text));
	w->len += e->len;
}

/* Each status as a JSON string, once; one left unmade is written as it comes. */
static void make_statuses(struct td_json_writer *jw)
{
	for (unsigned int st = 0; st < TD_NR_STATUS; st++) {
		struct jw text = { 0 };
		const char *name = td_status_name(st);

		if (name)
			jw_cstr(&text, name);
		if (name && !text.err && text.len <= sizeof(jw->status[st].text)) {
			memcpy(jw->status[st].text, text.buf, text.len);
			jw->status[st].len = (uint8_t)text.len;
		}
		free(text.buf);
	}
}

void td_json_writer_free(struct td_json_writer *jw)
{
	unsigned int i;

	if (!jw)
		return;
	if (jw->has_tab)
		htab_destroy(&jw->tab, istack_free);
	if (jw->has_formats)
		htab_destroy(&jw->formats, iformat_free);
	if (jw->stacks)
		for (i = 0; i < 1U << SCACHE_BITS; i++)
			free(jw->stacks[i].block);
	free(jw->stacks);
	free(jw->cache);
	free(jw->names);
	free(jw->fields);
	free(jw->tasks);
	forget_plans(jw);
	free(jw->plans);
	free(jw->buf);
	free(jw);
}

struct td_json_writer *td_json_writer_new(enum td_json_layout layout, unsigned int max_stacks)
{
	struct td_json_writer *jw;

	if (layout != TD_JSON_FULL && layout != TD_JSON_INTERNED && layout != TD_JSON_COMPACT)
		return NULL;
	jw = calloc(1, sizeof(*jw));
	if (!jw)
		return NULL;
	jw->layout = layout;
	jw->next_id = 1;
	jw->max = max_stacks ? max_stacks : TD_JSON_MAX_STACKS;
	/* The caches only make writing faster: without them it still works. */
	jw->cache = calloc(1U << FCACHE_BITS, sizeof(*jw->cache));
	jw->stacks = calloc(1U << SCACHE_BITS, sizeof(*jw->stacks));
	if (!jw->cache || !jw->stacks) {
		free(jw->cache);
		free(jw->stacks);
		jw->cache = NULL;
		jw->stacks = NULL;
	}
	jw->plans = calloc(1U << PCACHE_BITS, sizeof(*jw->plans));
	jw->names = calloc(1U << NCACHE_BITS, sizeof(*jw->names));
	jw->fields = calloc(1U << XCACHE_BITS, sizeof(*jw->fields));
	jw->tasks = calloc(1U << TCACHE_BITS, sizeof(*jw->tasks));
	make_statuses(jw);
	jw->next_format = 1;
	if (layout != TD_JSON_FULL) {
		if (htab_init(&jw->tab)) {
			td_json_writer_free(jw);
			return NULL;
		}
		jw->has_tab = true;
	}
	if (layout == TD_JSON_COMPACT) {
		if (htab_init(&jw->formats)) {
			td_json_writer_free(jw);
			return NULL;
		}
		jw->has_formats = true;
	}
	return jw;
}

void td_json_writer_reset(struct td_json_writer *jw)
{
	writer_forget(jw);
	writer_forget_formats(jw);
	forget_plans(jw);
	/* Keyed by format: a format may be gone after a reset. */
	if (jw->fields)
		memset(jw->fields, 0, (1U << XCACHE_BITS) * sizeof(*jw->fields));
	jw->stats.resets++;
}

void td_json_writer_stats(const struct td_json_writer *jw, struct td_json_stats *st)
{
	*st = jw->stats;
	st->table_stacks = jw->nr;
	st->table_bytes = jw->bytes;
}

static inline bool fentry_match(const struct fentry *e, const struct td_frame *fr, bool user)
{
	return e->addr == fr->addr && e->strings_id == fr->strings_id &&
	       e->symbol == fr->symbol && e->object == fr->object && e->user == user &&
	       e->sym_offset == fr->sym_offset && e->file_offset == fr->file_offset &&
	       e->build_id == fr->build_id && e->file_id == fr->file_id &&
	       e->file_kind == fr->file_kind;
}

static void jw_frames_each(struct jw *w, struct td_json_writer *t,
			   const struct td_frame *frames, unsigned int nr, bool user)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		const struct td_frame *fr = &frames[i];
		struct fentry *e;
		size_t start;

		if (i)
			jw_lit(w, ",");
		if (!fr->strings_id || !t || !t->cache) {
			jw_frame(w, fr, user);
			continue;
		}
		e = &t->cache[((fr->addr ^ (fr->strings_id << 1 | user)) *
			       0x9e3779b97f4a7c15ULL) >> (64 - FCACHE_BITS)];
		if (fentry_match(e, fr, user)) {
			jw_put_cached(w, e);
			continue;
		}
		start = w->len;
		jw_frame(w, fr, user);
		if (w->err || w->len - start > FCACHE_TEXT)
			continue;
		e->addr = fr->addr;
		e->sym_offset = fr->sym_offset;
		e->file_offset = fr->file_offset;
		e->strings_id = fr->strings_id;
		e->symbol = fr->symbol;
		e->object = fr->object;
		e->build_id = fr->build_id;
		e->file_id = fr->file_id;
		e->file_kind = fr->file_kind;
		e->user = user;
		e->len = (uint16_t)(w->len - start);
		memcpy(e->text, w->buf + start, e->len);
	}
}

/* Every frame vouched for by a symbolizer (an empty stack is). */
static bool frames_vouched(const struct td_frame *frames, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (!frames[i].strings_id)
			return false;
	return true;
}

/*
 * Whole stacks: the same stacks come again and again, and comparing a
 * stack's frames with one memcmp, then copying its text at once, beats
 * doing both frame by frame. Keyed by the frames themselves (td_frame has
 * no padding: equal bytes are equal frames) when a symbolizer vouches for
 * all of their strings.
 */
static bool stack_cacheable(const struct td_frame *frames, unsigned int nr)
{
	return nr >= 2 && nr <= SCACHE_FRAMES && frames_vouched(frames, nr);
}

static struct sentry *stack_slot(struct td_json_writer *t, const struct td_frame *frames,
				 unsigned int nr, bool user)
{
	uint64_t h = (frames[0].addr ^ frames[0].strings_id << 1 ^ user) * 0x9e3779b97f4a7c15ULL;

	h = (h ^ frames[1].addr ^ (uint64_t)nr << 40) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ frames[nr - 1].addr) * 0x9e3779b97f4a7c15ULL;
	return &t->stacks[h >> (64 - SCACHE_BITS)];
}

/*
 * @t: the writer whose caches to use, NULL for none. @id: the pipeline's
 * id of @frames (td_resolved), 0 for none: an id names the same frames for
 * the life of the process, so a stack with one is found by it alone,
 * without comparing its frames (a kilobyte and more a stack).
 */
static void jw_frames(struct jw *w, struct td_json_writer *t, const struct td_frame *frames,
		      unsigned int nr, bool user, uint64_t id)
{
	struct sentry *e = NULL;
	size_t start, len;

	if (t && t->stacks && id && stack_cacheable(frames, nr)) {
		e = &t->stacks[((id << 1 | user) * 0x9e3779b97f4a7c15ULL) >> (64 - SCACHE_BITS)];
		if (e->id == id && e->user == user && e->nr == nr) {
			jw_put(w, e->text, e->len);
			return;
		}
	} else if (t && t->stacks && stack_cacheable(frames, nr)) {
		e = stack_slot(t, frames, nr, user);
		if (e->nr == nr && e->user == user &&
		    !memcmp(e->frames, frames, nr * sizeof(*frames))) {
			jw_put(w, e->text, e->len);
			return;
		}
	}
	start = w->len;
	jw_lit(w, "[");
	jw_frames_each(w, t, frames, nr, user);
	jw_lit(w, "]");
	len = w->len - start;
	if (!e || w->err || len > SCACHE_TEXT)
		return;
	/* One block per slot, reused by the stacks that replace each other there. */
	if (!e->block || e->cap < nr * sizeof(*frames) + len) {
		size_t cap = nr * sizeof(*frames) + len + 256;
		void *b = realloc(e->block, cap);

		if (!b)
			return;
		e->block = b;
		e->cap = cap;
	}
	e->frames = e->block;
	e->text = (char *)e->block + nr * sizeof(*frames);
	memcpy(e->frames, frames, nr * sizeof(*frames));
	memcpy(e->text, w->buf + start, len);
	e->len = len;
	e->nr = nr;
	e->user = user;
	e->id = id;
}

/* "kernel_stack":[...],"user_stack":[...] */
static void jw_stacks(struct jw *w, struct td_json_writer *t, const struct td_resolved *r)
{
	jw_lit(w, "\"kernel_stack\":");
	jw_frames(w, t, r->kframes, r->nr_kframes, false, r->kstack_id);
	jw_lit(w, ",\"user_stack\":");
	jw_frames(w, t, r->uframes, r->nr_uframes, true, r->ustack_id);
}

/* ---- interned stacks ---- */

#define MIX	0x9e3779b97f4a7c15ULL

/* What a frame key is hashed on: what tells stacks apart cheaply. */
static uint64_t frames_hash(uint64_t h, const struct td_frame *frames, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		h = (h ^ frames[i].addr ^ (uintptr_t)frames[i].object) * MIX;
	return h;
}

static uint64_t text_hash(const char *s, size_t len)
{
	uint64_t h = len * MIX, v;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&v, s + i, 8);
		h = (h ^ v) * MIX;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * MIX;
	return h ^ h >> 32;
}

/* A lookup: the key (frames in two parts, their ids, or text) and its hash. */
struct ikey {
	uint64_t hash;
	const void *a, *b;	/* frame key: kernel, user frames; id, text key: a only */
	uint32_t alen, blen;
	uint32_t nk;		/* IKEY_TEXT, IKEY_IDS, else kernel frames */
	size_t text_off;	/* text key: where it starts in the line buffer */
	uint64_t ids[2];	/* id key: td_resolved's kstack_id, ustack_id */
};

#define IKEY_TEXT	UINT32_MAX
#define IKEY_IDS	(UINT32_MAX - 1)

static bool ikey_match(const struct istack *e, const struct ikey *k)
{
	uint64_t ids[2];

	if (e->nk != k->nk || e->len != k->alen + k->blen)
		return false;
	/* The pipeline's ids, on every line: two words, not a call to memcmp(). */
	if (k->nk == IKEY_IDS) {
		memcpy(ids, e->key, sizeof(ids));
		return ids[0] == k->ids[0] && ids[1] == k->ids[1];
	}
	return (!k->alen || !memcmp(e->key, k->a, k->alen)) &&
	       (!k->blen || !memcmp(e->key + k->alen, k->b, k->blen));
}

/* The stack written as @k, or NULL. */
static struct istack *istack_find(struct td_json_writer *jw, const struct ikey *k)
{
	struct hnode *n;

	if (!jw->has_tab)
		return NULL;
	for (n = htab_first(&jw->tab, k->hash); n; n = htab_next(n)) {
		struct istack *e = container_of(n, struct istack, node);

		if (ikey_match(e, k))
			return e;
	}
	return NULL;
}

/*
 * Remember @k as @id, once its stack line is written. A full table starts
 * a new epoch first. Out of memory: not remembered, the stack is simply
 * written again next time.
 */
static void istack_add(struct td_json_writer *jw, const struct ikey *k, uint64_t id)
{
	size_t len = (size_t)k->alen + k->blen;
	struct istack *e;

	if (len > TD_JSON_STACK_BYTES)
		return;
	if (jw->nr >= jw->max || jw->bytes + len > TD_JSON_STACK_BYTES) {
		writer_forget(jw);
		jw->stats.epochs++;
	}
	if (!jw->has_tab)
		return;
	e = malloc(sizeof(*e) + len);
	if (!e)
		return;
	if (k->alen)
		memcpy(e->key, k->a, k->alen);
	if (k->blen)
		memcpy(e->key + k->alen, k->b, k->blen);
	e->id = id;
	e->len = (uint32_t)len;
	e->nk = k->nk;
	htab_add(&jw->tab, &e->node, k->hash);
	jw->nr++;
	jw->bytes += len;
}

/* ---- the record ---- */

/* @t: the writer whose plans name the event, NULL for none. */
static void jw_event_name(struct jw *w, struct td_json_writer *t, const struct td_resolved *r)
{
	const struct tep_event *event = r->ev->tep_event;
	const struct fplan *p;
	char buf[256];
	int n;

	if (r->event_name && t && event && (p = plan_of(t, event)) && p->name &&
	    !strcmp(r->event_name, p->name))
		return jw_put(w, p->name_text, p->name_len);
	if (r->event_name)
		return jw_cstr(w, r->event_name);
	if (event && event->system && event->name) {
		n = snprintf(buf, sizeof(buf), "%s:%s", event->system, event->name);
		return jw_str(w, buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	}
	jw_lit(w, "\"unknown\"");
}

/* An event line's separators: keys (layouts full and interned) or commas (compact). */
struct seps {
	const char *s;
	size_t n;
};

#define SEP(x)	{ x, sizeof(x) - 1 }

enum { SEP_CPU, SEP_PID, SEP_TID, SEP_COMM, SEP_COOKIE, SEP_STATUS, NR_SEPS };

static const struct seps keyed[NR_SEPS] = {
	SEP(",\"cpu\":"), SEP(",\"pid\":"), SEP(",\"tid\":"), SEP(",\"comm\":"),
	SEP(",\"cookie\":"), SEP(",\"status\":"),
};

static const struct seps commas[NR_SEPS] = {
	SEP(","), SEP(","), SEP(","), SEP(","), SEP(","), SEP(","),
};

static inline void jw_sep(struct jw *w, const struct seps *sep, int i)
{
	jw_put(w, sep[i].s, sep[i].n);
}

static void jw_task_text(struct jw *w, struct td_json_writer *t, const struct td_event *ev,
			 const struct seps *sep)
{
	jw_sep(w, sep, SEP_PID);
	jw_i64(w, ev->pid);
	jw_sep(w, sep, SEP_TID);
	jw_i64(w, ev->tid);
	jw_sep(w, sep, SEP_COMM);
	jw_name16(w, t, ev->comm);
}

/* The task's part of an event line, after its timestamp: cpu, pid, tid, comm. */
static void jw_task(struct jw *w, struct td_json_writer *t, const struct td_event *ev,
		    const struct seps *sep)
{
	struct ttask *e;
	uint64_t lo, hi;
	size_t start, len;

	jw_sep(w, sep, SEP_CPU);
	jw_i64(w, ev->cpu);
	if (!t || !t->tasks)
		return jw_task_text(w, t, ev, sep);
	td_comm_words(ev->comm, &lo, &hi);
	e = &t->tasks[htab_hash_u64(htab_hash_u64(lo ^ hi * 0x9e3779b97f4a7c15ULL,
						  (uint64_t)(uint32_t)ev->tid << 32 |
						  (uint32_t)ev->pid), (uintptr_t)sep) &
		      ((1U << TCACHE_BITS) - 1)];
	if (e->sep == sep && e->pid == ev->pid && e->tid == ev->tid && e->lo == lo &&
	    e->hi == hi)
		return jw_put_chunked(w, e->text, e->len, TCACHE_TEXT);
	start = w->len;
	jw_task_text(w, t, ev, sep);
	len = w->len - start;
	if (w->err || len > TCACHE_TEXT)
		return;
	*e = (struct ttask){ .sep = sep, .pid = ev->pid, .tid = ev->tid, .lo = lo, .hi = hi,
			     .len = (uint32_t)len };
	memcpy(e->text, w->buf + start, len);
}

/* The cookie and the status. */
static void jw_outcome(struct jw *w, struct td_json_writer *t, const struct td_resolved *r,
		       const struct seps *sep)
{
	const char *status;

	jw_sep(w, sep, SEP_COOKIE);
	if (r->cookie)
		jw_hex(w, r->cookie);
	else
		jw_lit(w, "null");
	jw_sep(w, sep, SEP_STATUS);
	if (t && (unsigned int)r->status < TD_NR_STATUS && t->status[r->status].len)
		return jw_put(w, t->status[r->status].text, t->status[r->status].len);
	status = td_status_name(r->status);
	if (status)
		jw_cstr(w, status);
	else
		jw_lit(w, "\"unknown\"");
}

/* "name": of a field. */
static void jw_key(struct jw *w, const char *name)
{
	jw_cstr(w, name);
	jw_lit(w, ":");
}

/* Everything of an event line but its stacks: "{...,"status":"..."," */
static void jw_event_head(struct jw *w, struct td_json_writer *t, const struct td_resolved *r,
			  bool interned)
{
	const struct td_event *ev = r->ev;

	if (interned)
		jw_lit(w, "{\"v\":" TD_STR(TD_JSON_INTERNED_VERSION) ",\"type\":\"event\",\"ts\":");
	else
		jw_lit(w, "{\"v\":" TD_STR(TD_JSON_SCHEMA_VERSION) ",\"ts\":");
	jw_u64(w, ev->ts);
	jw_task(w, t, ev, keyed);
	jw_lit(w, ",\"event\":");
	jw_event_name(w, t, r);
	jw_lit(w, ",\"fields\":");
	jw_fields(w, t, ev, FIELDS_OBJECT);
	jw_outcome(w, t, r, keyed);
	jw_lit(w, ",");
}

/* Schema version 1: the stacks in the line. */
static int jw_record(struct jw *w, struct td_json_writer *t, const struct td_resolved *r)
{
	jw_event_head(w, t, r, false);
	jw_stacks(w, t, r);
	jw_lit(w, "}\n");
	return w->err;
}

#define STACK_HEAD(v)	"{\"v\":" TD_STR(v) ",\"type\":\"stack\",\"id\":"

static const char stack_head_interned[] = STACK_HEAD(TD_JSON_INTERNED_VERSION);
static const char stack_head_compact[] = STACK_HEAD(TD_JSON_COMPACT_VERSION);

/* Layout compact: the first line of a file, naming an event line's columns. */
static const char compact_header[] =
	"{\"v\":" TD_STR(TD_JSON_COMPACT_VERSION) ",\"type\":\"header\",\"columns\":"
	"[\"ts\",\"cpu\",\"pid\",\"tid\",\"comm\",\"format\",\"fields\",\"cookie\","
	"\"status\",\"stack\"]}\n";

static const char *format_name(const struct td_resolved *r)
{
	return r->event_name ? r->event_name : "";
}

/*
 * On the format alone: this runs for every event, and one format has one
 * name (the rare events without a format share a chain, told apart by
 * name in format_find()).
 */
static uint64_t format_hash(const struct td_resolved *r)
{
	return htab_hash_u64(HTAB_SEED, (uintptr_t)r->ev->tep_event);
}

static struct iformat *format_find(const struct td_json_writer *jw, const struct td_resolved *r,
				   uint64_t hash)
{
	struct hnode *n;

	if (!jw->has_formats)
		return NULL;
	for (n = htab_first(&jw->formats, hash); n; n = htab_next(n)) {
		struct iformat *f = container_of(n, struct iformat, node);

		if (f->event == r->ev->tep_event && !strcmp(f->name, format_name(r)))
			return f;
	}
	return NULL;
}

/* Remember a format line that was written; forgetting it only costs a line. */
static void format_add(struct td_json_writer *jw, const struct td_resolved *r, uint64_t hash,
		       uint64_t id)
{
	const char *name = format_name(r);
	size_t len = strlen(name);
	struct iformat *f;

	if (!jw->has_formats)
		return;
	f = malloc(sizeof(*f) + len + 1);
	if (!f)
		return;
	f->event = r->ev->tep_event;
	f->id = id;
	memcpy(f->name, name, len + 1);
	htab_add(&jw->formats, &f->node, hash);
}

/*
 * Layout compact, schema version 3: a "format" line first when the event's
 * format is new to the file (*@new_fmt set to its id), then the event as
 * an array in the header's column order.
 */
static void jw_compact_event(struct jw *w, struct td_json_writer *jw,
			     const struct td_resolved *r, uint64_t stack_id, uint64_t fmt_hash,
			     uint64_t *new_fmt)
{
	const struct td_event *ev = r->ev;
	struct iformat *f = format_find(jw, r, fmt_hash);
	uint64_t fmt;

	if (f) {
		fmt = f->id;
	} else {
		fmt = jw->next_format++;
		jw_lit(w, "{\"v\":" TD_STR(TD_JSON_COMPACT_VERSION) ",\"type\":\"format\",\"id\":");
		jw_u64(w, fmt);
		jw_lit(w, ",\"event\":");
		jw_event_name(w, jw, r);
		jw_lit(w, ",\"fields\":");
		jw_fields(w, NULL, ev, FIELDS_NAMES);
		jw_lit(w, "}\n");
		*new_fmt = fmt;
	}
	jw_lit(w, "[");
	jw_u64(w, ev->ts);
	jw_task(w, jw, ev, commas);
	jw_lit(w, ",");
	jw_u64(w, fmt);
	jw_lit(w, ",");
	jw_fields(w, jw, ev, FIELDS_VALUES);
	jw_outcome(w, jw, r, commas);
	jw_lit(w, ",");
	jw_u64(w, stack_id);
	jw_lit(w, "]\n");
}

/*
 * The key of @r's stacks without rendering them: the pipeline's ids when
 * it gave them, else the frames when a symbolizer vouches for all their
 * strings. false: only the rendered text can be the key.
 */
static bool ikey_of(const struct td_resolved *r, struct ikey *k)
{
	if ((!r->nr_kframes || r->kstack_id) && (!r->nr_uframes || r->ustack_id) &&
	    (r->nr_kframes || r->nr_uframes)) {
		k->nk = IKEY_IDS;
		k->ids[0] = r->kstack_id;
		k->ids[1] = r->ustack_id;
		k->a = k->ids;
		k->alen = sizeof(k->ids);
		k->b = NULL;
		k->blen = 0;
		k->hash = htab_hash_u64(htab_hash_u64(HTAB_SEED, r->kstack_id), r->ustack_id);
		return true;
	}
	if (!frames_vouched(r->kframes, r->nr_kframes) ||
	    !frames_vouched(r->uframes, r->nr_uframes))
		return false;
	k->nk = r->nr_kframes;
	k->a = r->kframes;
	k->alen = r->nr_kframes * sizeof(struct td_frame);
	k->b = r->uframes;
	k->blen = r->nr_uframes * sizeof(struct td_frame);
	k->hash = frames_hash(frames_hash(r->nr_kframes * MIX, r->kframes, r->nr_kframes),
			      r->uframes, r->nr_uframes);
	return true;
}

/*
 * Schema version 2: the event line refers to its stacks by id, and a
 * "stack" line comes first when they are new to this file. @k is set to
 * the key to remember as *@new_id once the lines are written; *@new_id
 * stays 0 when the stacks were known.
 */
static int jw_interned(struct jw *w, struct td_json_writer *jw, const struct td_resolved *r,
		       struct ikey *k, uint64_t *new_id, uint64_t fmt_hash, uint64_t *new_fmt)
{
	bool compact = jw->layout == TD_JSON_COMPACT;
	const char *stack_head = compact ? stack_head_compact : stack_head_interned;
	struct istack *e;
	uint64_t id;
	size_t n;

	*new_id = 0;
	if (ikey_of(r, k)) {
		e = istack_find(jw, k);
		if (!e) {
			id = jw->next_id++;
			jw_put(w, stack_head, strlen(stack_head));
			jw_u64(w, id);
			jw_lit(w, ",");
			jw_stacks(w, jw, r);
			jw_lit(w, "}\n");
			*new_id = id;
		} else {
			id = e->id;
		}
	} else {
		/* Keyed on the text: render it, then drop it or put the head before it. */
		jw_stacks(w, jw, r);
		if (w->err)
			return w->err;
		k->nk = IKEY_TEXT;
		k->a = w->buf;
		k->alen = (uint32_t)w->len;
		k->b = NULL;
		k->blen = 0;
		k->text_off = 0;
		k->hash = text_hash(w->buf, w->len);
		e = istack_find(jw, k);
		if (e) {
			id = e->id;
			w->len = 0;
		} else {
			char head[64];

			id = jw->next_id++;
			n = (size_t)snprintf(head, sizeof(head), "%s%" PRIu64 ",", stack_head, id);
			jw_put(w, head, n);	/* room for it, then move the text */
			if (w->err)
				return w->err;
			memmove(w->buf + n, w->buf, w->len - n);
			memcpy(w->buf, head, n);
			k->text_off = n;
			jw_lit(w, "}\n");
			*new_id = id;
		}
	}
	if (compact) {
		jw_compact_event(w, jw, r, id, fmt_hash, new_fmt);
	} else {
		jw_event_head(w, jw, r, true);
		jw_lit(w, "\"stack\":");
		jw_u64(w, id);
		jw_lit(w, "}\n");
	}
	if (w->err) {
		*new_id = 0;
		*new_fmt = 0;
	}
	return w->err;
}

int td_json_writer_write(struct td_json_writer *jw, FILE *f, const struct td_resolved *r)
{
	struct jw w = { .buf = jw->buf, .cap = jw->cap };
	uint64_t new_id = 0, new_fmt = 0, fmt_hash = 0;
	struct ikey k;
	int ret = 0;

	if (jw->layout == TD_JSON_COMPACT && !jw->header_done) {
		errno = 0;
		if (fwrite(compact_header, 1, sizeof(compact_header) - 1, f) !=
		    sizeof(compact_header) - 1)
			return errno ? -errno : -EIO;
		jw->header_done = true;
	}
	if (jw->layout == TD_JSON_COMPACT)
		fmt_hash = format_hash(r);
	if (jw->layout != TD_JSON_FULL)
		ret = jw_interned(&w, jw, r, &k, &new_id, fmt_hash, &new_fmt);
	else
		ret = jw_record(&w, jw, r);
	if (!ret) {
		errno = 0;
		if (fwrite(w.buf, 1, w.len, f) != w.len)
			ret = errno ? -errno : -EIO;
	}
	if (!ret) {
		jw->stats.events++;
		if (new_fmt)
			format_add(jw, r, fmt_hash, new_fmt);
		if (new_id) {
			/* A text key lives in the line buffer, which may have moved. */
			if (k.nk == IKEY_TEXT)
				k.a = w.buf + k.text_off;
			else if (k.nk == IKEY_IDS)
				k.a = k.ids;
			istack_add(jw, &k, new_id);
			jw->stats.stacks++;
		}
	}
	/* The line buffer is kept for the next line, unless one huge record made it grow. */
	if (w.cap <= LINE_BUF_KEEP) {
		jw->buf = w.buf;
		jw->cap = w.cap;
	} else {
		free(w.buf);
		jw->buf = NULL;
		jw->cap = 0;
	}
	return ret;
}

int td_json_write(FILE *f, const struct td_resolved *r)
{
	struct jw w = { 0 };
	int ret;

	/* One line, no caches: writers that write often own a td_json_writer. */
	ret = jw_record(&w, NULL, r);
	if (!ret) {
		errno = 0;
		if (fwrite(w.buf, 1, w.len, f) != w.len)
			ret = errno ? -errno : -EIO;
	}
	free(w.buf);
	return ret;
}

int td_json_format(const struct td_resolved *r, char **out)
{
	struct jw w = { 0 };
	int ret = jw_record(&w, NULL, r);

	*out = NULL;
	if (ret) {
		free(w.buf);
		return ret;
	}
	w.buf[w.len - 1] = '\0';	/* the newline */
	*out = w.buf;
	return 0;
}
