// SPDX-License-Identifier: GPL-2.0
/*
 * JSON lines writer: one object per event, schema version 1, documented key
 * by key in doc/trace-defer-json.7.md. Built with json-c.
 *
 * Promises: the output is valid JSON on one line (strings are made valid
 * UTF-8: an invalid byte becomes U+FFFD), every key of the schema is always
 * present with its documented type (null where the schema allows it), and
 * raw addresses are always written, symbolized or not.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <traceevent/event-parse.h>

#include <trace-defer/output.h>

#define JSON_FLAGS	(JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

size_t td_utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len, i;
	uint32_t cp;

	if (!n)
		return 0;
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

/*
 * A JSON string from @len bytes at @s. Kernel strings (comm, file names) are
 * arbitrary bytes: copy them with invalid sequences replaced by U+FFFD only
 * when needed, so the common (valid) case costs one scan.
 */
static struct json_object *new_string(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	struct json_object *obj;
	size_t i = 0, n, o = 0;
	char *copy;

	while (i < len && (n = td_utf8_seq_len(u + i, len - i)))
		i += n;
	if (i == len)
		return json_object_new_string_len(s, (int)len);

	copy = malloc(len * 3 + 1);	/* each bad byte grows to 3 bytes */
	if (!copy)
		return NULL;
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
	return obj;
}

static struct json_object *new_hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_object_new_string(buf);
}

/*
 * Add @val under @key, which must outlive @obj (a literal, or a tep field
 * name). Takes the reference to @val even on failure. Returns 0 or -ENOMEM.
 */
static int add(struct json_object *obj, const char *key, struct json_object *val)
{
	/* A NULL val is a failed allocation: callers pass json null explicitly. */
	if (!val)
		return -ENOMEM;
	if (json_object_object_add_ex(obj, key, val, JSON_C_OBJECT_ADD_KEY_IS_NEW |
				      JSON_C_OBJECT_KEY_IS_CONSTANT)) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

/* Like add() but a NULL @val is json null; @ok says whether val was wanted. */
static int add_or_null(struct json_object *obj, const char *key, bool want,
		       struct json_object *val)
{
	if (!want)
		return json_object_object_add_ex(obj, key, NULL, JSON_C_OBJECT_ADD_KEY_IS_NEW |
						 JSON_C_OBJECT_KEY_IS_CONSTANT) ? -ENOMEM : 0;
	return add(obj, key, val);
}

static int append(struct json_object *arr, struct json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_array_add(arr, val)) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

/* ---- event fields ---- */

static struct json_object *new_number(uint64_t v, int size, bool is_signed)
{
	if (is_signed) {
		int64_t s;

		switch (size) {
		case 1:
			s = (int8_t)v;
			break;
		case 2:
			s = (int16_t)v;
			break;
		case 4:
			s = (int32_t)v;
			break;
		default:
			s = (int64_t)v;
			break;
		}
		return json_object_new_int64(s);
	}
	return json_object_new_uint64(v);
}

static bool number_size(int size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

/*
 * Element size of an array field. libtraceevent gives it for fixed arrays;
 * for a __data_loc array of numbers it may leave it 0, so fall back on the
 * type name.
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
		return field->event && field->event->tep ?
		       tep_get_long_size(field->event->tep) : 8;
	return 4;
}

static struct json_object *decode_array(struct tep_handle *tep,
					const struct tep_format_field *field,
					const unsigned char *p, int len)
{
	bool is_signed = field->flags & TEP_FIELD_IS_SIGNED;
	int esize = element_size(field);
	struct json_object *arr;
	int i;

	arr = json_object_new_array_ext(len / esize);
	if (!arr)
		return NULL;
	for (i = 0; i + esize <= len; i += esize) {
		uint64_t v = tep_read_number(tep, p + i, esize);

		if (append(arr, new_number(v, esize, is_signed))) {
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

/*
 * One field's value: a number, a string (char arrays and __data_loc
 * char[]), an array of numbers, or json null when the record is too short
 * for the field (a truncated or malformed record). *@ok is false only when
 * out of memory.
 */
static struct json_object *decode_field(struct tep_handle *tep,
					const struct tep_format_field *field,
					const unsigned char *data, int size, bool *ok)
{
	const unsigned char *p;
	struct json_object *val;
	int off = field->offset, len = field->size;

	*ok = true;
	if (off < 0 || len < 0 || off > size || len > size - off)
		return NULL;
	if (field->flags & TEP_FIELD_IS_DYNAMIC) {
		uint64_t loc;

		if (!number_size(len))
			return NULL;
		/* __data_loc: offset in the low 16 bits, length in the high 16. */
		loc = tep_read_number(tep, data + off, len);
		if (field->flags & TEP_FIELD_IS_RELATIVE)
			off = off + len + (int)(loc & 0xffff);
		else
			off = (int)(loc & 0xffff);
		len = (int)((loc >> 16) & 0xffff);
		if (off > size || len > size - off)
			return NULL;
	} else if (!(field->flags & TEP_FIELD_IS_ARRAY)) {
		if (!number_size(len))
			return NULL;
		val = new_number(tep_read_number(tep, data + off, len), len,
				 field->flags & TEP_FIELD_IS_SIGNED);
		goto out;
	}
	p = data + off;
	if (field->flags & TEP_FIELD_IS_STRING)
		val = new_string((const char *)p, strnlen((const char *)p, len));
	else
		val = decode_array(tep, field, p, len);
out:
	*ok = val != NULL;
	return val;
}

static struct json_object *decode_fields(const struct td_event *ev, bool *ok)
{
	struct tep_event *event = ev->tep_event;
	struct tep_format_field *field;
	struct json_object *obj;

	*ok = false;
	obj = json_object_new_object();
	if (!obj)
		return NULL;
	*ok = true;
	if (!event || !ev->raw)
		return obj;
	for (field = event->format.fields; field; field = field->next) {
		struct json_object *val;

		if (!strncmp(field->name, "common_", 7))
			continue;
		val = decode_field(event->tep, field, ev->raw, ev->raw_size, ok);
		if (!*ok || add_or_null(obj, field->name, val != NULL, val)) {
			*ok = false;
			break;
		}
	}
	return obj;
}

/* ---- frames ---- */

static struct json_object *frame_object(const struct td_frame *fr, bool user)
{
	struct json_object *obj = json_object_new_object();
	bool sym = fr->symbol != NULL;

	if (!obj)
		return NULL;
	if (add(obj, "addr", new_hex(fr->addr)) ||
	    add_or_null(obj, "sym", sym, sym ? new_string(fr->symbol, strlen(fr->symbol)) :
					     NULL) ||
	    add_or_null(obj, "off", sym, sym ? json_object_new_uint64(fr->sym_offset) : NULL))
		goto fail;
	if (!user)
		return obj;
	if (add_or_null(obj, "obj", fr->object,
			fr->object ? new_string(fr->object, strlen(fr->object)) : NULL) ||
	    add_or_null(obj, "file_off", fr->object,
			fr->object ? new_hex(fr->file_offset) : NULL) ||
	    add_or_null(obj, "build_id", fr->build_id,
			fr->build_id ? json_object_new_string(fr->build_id) : NULL))
		goto fail;
	return obj;
fail:
	json_object_put(obj);
	return NULL;
}

static struct json_object *frames_array(const struct td_frame *frames, unsigned int nr, bool user)
{
	struct json_object *arr = json_object_new_array_ext(nr);
	unsigned int i;

	if (!arr)
		return NULL;
	for (i = 0; i < nr; i++) {
		if (append(arr, frame_object(&frames[i], user))) {
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

/* ---- the record ---- */

static struct json_object *event_name(const struct td_resolved *r)
{
	const struct tep_event *event = r->ev->tep_event;
	char buf[256];

	if (r->event_name)
		return new_string(r->event_name, strlen(r->event_name));
	if (event && event->system && event->name) {
		snprintf(buf, sizeof(buf), "%s:%s", event->system, event->name);
		return new_string(buf, strlen(buf));
	}
	return json_object_new_string("unknown");
}

static struct json_object *build(const struct td_resolved *r)
{
	const struct td_event *ev = r->ev;
	const char *status = td_status_name(r->status);
	struct json_object *obj, *fields;
	bool ok;

	obj = json_object_new_object();
	if (!obj)
		return NULL;
	if (add(obj, "v", json_object_new_int(TD_JSON_SCHEMA_VERSION)) ||
	    add(obj, "ts", json_object_new_uint64(ev->ts)) ||
	    add(obj, "cpu", json_object_new_int(ev->cpu)) ||
	    add(obj, "pid", json_object_new_int(ev->pid)) ||
	    add(obj, "tid", json_object_new_int(ev->tid)) ||
	    add(obj, "comm", new_string(ev->comm, strnlen(ev->comm, TD_COMM_LEN))) ||
	    add(obj, "event", event_name(r)))
		goto fail;
	fields = decode_fields(ev, &ok);
	if (!ok) {
		json_object_put(fields);
		goto fail;
	}
	if (add(obj, "fields", fields) ||
	    add_or_null(obj, "cookie", r->cookie != 0, r->cookie ? new_hex(r->cookie) : NULL) ||
	    add(obj, "status", json_object_new_string(status ? status : "unknown")) ||
	    add(obj, "kernel_stack", frames_array(r->kframes, r->nr_kframes, false)) ||
	    add(obj, "user_stack", frames_array(r->uframes, r->nr_uframes, true)))
		goto fail;
	return obj;
fail:
	json_object_put(obj);
	return NULL;
}

int td_json_format(const struct td_resolved *r, char **out)
{
	struct json_object *obj = build(r);
	const char *s;
	int ret = -ENOMEM;

	*out = NULL;
	if (!obj)
		return -ENOMEM;
	s = json_object_to_json_string_ext(obj, JSON_FLAGS);
	if (s) {
		*out = strdup(s);
		if (*out)
			ret = 0;
	}
	json_object_put(obj);
	return ret;
}

int td_json_write(FILE *f, const struct td_resolved *r)
{
	struct json_object *obj = build(r);
	const char *s;
	size_t len;
	int ret = 0;

	if (!obj)
		return -ENOMEM;
	s = json_object_to_json_string_length(obj, JSON_FLAGS, &len);
	if (!s) {
		ret = -ENOMEM;
		goto out;
	}
	errno = 0;
	if (fwrite(s, 1, len, f) != len || putc('\n', f) == EOF)
		ret = errno ? -errno : -EIO;
out:
	json_object_put(obj);
	return ret;
}
