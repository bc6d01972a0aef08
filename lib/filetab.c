// SPDX-License-Identifier: GPL-2.0
/*
 * The file table and the decoders of file identity (see
 * include/trace-defer/filetab.h). Ids are a counter in the kernel, but come
 * from untrusted bytes here: they are hashed into the library's one hash
 * table (htab.h), and each entry is one allocation (entry, path, hex
 * build-id) that never moves. Full, the table drops the quarter of its
 * entries whose last record is oldest: the kernel keeps ids for a few dozen
 * files per instance and gives a file a new id when it comes back, so a
 * long run meets ever new ids, and an id still in use is recorded again
 * within a second or so of its next use.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include <trace-defer/filetab.h>

#include "dynfield.h"
#include "htab.h"

struct td_filetab {
	struct htab tab;		/* struct entry by id */
	size_t max_files;
	uint64_t gen;			/* td_filetab_gen() */
	struct td_filetab_stats stats;
};

/* An entry as the table keeps it: the file, and when it was last recorded. */
struct entry {
	struct hnode node;
	struct td_file file;
	uint64_t seen;			/* stats.records when last added or refreshed */
};

struct td_filetab *td_filetab_new(size_t max_files)
{
	struct td_filetab *ft = calloc(1, sizeof(*ft));

	if (!ft)
		return NULL;
	ft->max_files = max_files ? max_files : TD_FILETAB_DEFAULT_MAX;
	if (htab_init(&ft->tab)) {
		free(ft);
		return NULL;
	}
	return ft;
}

static void entry_free(struct hnode *n)
{
	free(container_of(n, struct entry, node));
}

void td_filetab_free(struct td_filetab *ft)
{
	if (!ft)
		return;
	htab_destroy(&ft->tab, entry_free);
	free(ft);
}

static inline uint64_t id_hash(uint32_t id)
{
	return htab_hash_u64(HTAB_SEED, id);
}

/* The entry of @id, or NULL. */
static struct entry *find(const struct td_filetab *ft, uint32_t id)
{
	struct hnode *n;

	for (n = htab_first(&ft->tab, id_hash(id)); n; n = htab_next(n)) {
		struct entry *e = container_of(n, struct entry, node);

		if (e->file.id == id)
			return e;
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* evict()'s walks: first every entry's time into @seen, then the cut. */
struct evict_walk {
	uint64_t *seen;
	size_t n;
	uint64_t cut;
	bool collect;
};

static bool evict_keep(struct hnode *n, void *arg)
{
	struct entry *e = container_of(n, struct entry, node);
	struct evict_walk *w = arg;

	if (w->collect) {
		w->seen[w->n++] = e->seen;
		return true;
	}
	return !(e->seen < w->cut || (w->n < 4 && e->seen == w->cut));
}

/*
 * Full: free the quarter of the entries (at least one) recorded longest
 * ago. Returns 0 or -ENOMEM (nothing dropped).
 */
static int evict(struct td_filetab *ft)
{
	struct evict_walk w = { .collect = true };
	size_t before = ft->tab.nr;

	if (!before)
		return -ENOMEM;
	w.seen = malloc(before * sizeof(*w.seen));
	if (!w.seen)
		return -ENOMEM;
	htab_filter(&ft->tab, evict_keep, NULL, &w);
	qsort(w.seen, w.n, sizeof(*w.seen), cmp_u64);
	/* Records are counted one by one: no two entries share a time. */
	w.cut = w.seen[w.n / 4];
	free(w.seen);
	w.collect = false;
	htab_filter(&ft->tab, evict_keep, entry_free, &w);
	ft->stats.evicted += before - ft->tab.nr;
	ft->stats.files = ft->tab.nr;
	ft->stats.full++;
	ft->gen++;
	return 0;
}

static bool same_file(const struct td_file *f, const uint8_t *build_id,
		      unsigned int build_id_len, const char *path, size_t path_len)
{
	if (f->build_id_len != build_id_len || strlen(f->path) != path_len)
		return false;
	return (!build_id_len || !memcmp(f->build_id, build_id, build_id_len)) &&
	       !memcmp(f->path, path, path_len);
}

static struct td_file *new_file(uint32_t id, const uint8_t *build_id, unsigned int build_id_len,
				const char *path, size_t path_len)
{
	static const char hex[] = "0123456789abcdef";
	struct td_file *f;
	unsigned int i;
	struct entry *e;
	char *p, *h;

	e = calloc(1, sizeof(*e) + path_len + 1 + 2 * TD_FILE_BUILD_ID_MAX + 1);
	if (!e)
		return NULL;
	f = &e->file;
	f->id = id;
	f->build_id_len = build_id_len;
	if (build_id_len)
		memcpy(f->build_id, build_id, build_id_len);
	p = (char *)(e + 1);
	memcpy(p, path, path_len);
	p[path_len] = '\0';
	f->path = p;
	if (build_id_len) {
		h = p + path_len + 1;
		for (i = 0; i < build_id_len; i++) {
			h[2 * i] = hex[build_id[i] >> 4];
			h[2 * i + 1] = hex[build_id[i] & 0xf];
		}
		h[2 * i] = '\0';
		f->build_id_hex = h;
	}
	return f;
}

int td_filetab_add(struct td_filetab *ft, uint32_t id, const uint8_t *build_id,
		   unsigned int build_id_len, const char *path, size_t path_len)
{
	struct td_file *f;
	struct entry *e;
	const char *nul;

	if (!id || build_id_len > TD_FILE_BUILD_ID_MAX || (build_id_len && !build_id) || !path) {
		ft->stats.bad_records++;
		return -EINVAL;
	}
	nul = memchr(path, '\0', path_len);
	if (nul)
		path_len = (size_t)(nul - path);
	ft->stats.records++;
	e = find(ft, id);
	if (e) {
		f = &e->file;
		if (!f->conflict && same_file(f, build_id, build_id_len, path, path_len)) {
			ft->stats.refreshed++;
			container_of(f, struct entry, file)->seen = ft->stats.records;
			return 1;
		}
		/* Ids are never reused: a kernel that says otherwise is not believed. */
		if (!f->conflict) {
			ft->stats.conflicts++;
			ft->gen++;
		}
		f->conflict = true;
		return -EEXIST;
	}
	if (ft->stats.files >= ft->max_files && evict(ft))
		return -ENOMEM;
	f = new_file(id, build_id, build_id_len, path, path_len);
	if (!f)
		return -ENOMEM;
	e = container_of(f, struct entry, file);
	e->seen = ft->stats.records;
	htab_add(&ft->tab, &e->node, id_hash(id));
	ft->stats.files++;
	ft->gen++;
	return 0;
}

struct td_file *td_filetab_get(struct td_filetab *ft, uint32_t id)
{
	struct entry *e;

	if (!ft || !id)
		return NULL;
	e = find(ft, id);
	return e && !e->file.conflict ? &e->file : NULL;
}

uint64_t td_filetab_gen(const struct td_filetab *ft)
{
	return ft ? ft->gen : 0;
}

void td_filetab_get_stats(const struct td_filetab *ft, struct td_filetab_stats *st)
{
	*st = ft->stats;
}

/* ---- decoding ---- */

/* The u32 field @f, big-endian when @big_endian; false if it is not a u32 inside the record. */
static bool read_u32(const struct tep_format_field *f, const uint8_t *data, int size,
		     bool big_endian, uint32_t *val)
{
	uint32_t v;

	if (!f || f->offset < 0 || f->size != 4 || size < 0 ||
	    (uint64_t)f->offset + 4 > (uint64_t)size)
		return false;
	memcpy(&v, data + f->offset, sizeof(v));
	*val = big_endian ? be32toh(v) : le32toh(v);
	return true;
}

bool td_dyn_field(const struct tep_format_field *f, const void *data, int size, bool big_endian,
		  unsigned int *off, unsigned int *len)
{
	return data && td_dyn_locate(f, data, size, big_endian, off, len);
}

int td_file_rec_decode(struct tep_event *event, const void *data, int size, bool big_endian,
		       struct td_file_rec *out)
{
	struct tep_format_field *bid = tep_find_field(event, "build_id");
	const uint8_t *d = data;
	uint32_t id, bid_size;
	unsigned int off, len;
	const char *nul;

	if (!read_u32(tep_find_field(event, "id"), d, size, big_endian, &id) || !id ||
	    !read_u32(tep_find_field(event, "build_id_size"), d, size, big_endian, &bid_size) ||
	    !bid || bid->offset < 0 || bid->size != TD_FILE_BUILD_ID_MAX ||
	    (uint64_t)bid->offset + TD_FILE_BUILD_ID_MAX > (uint64_t)size ||
	    bid_size > TD_FILE_BUILD_ID_MAX ||
	    !td_dyn_locate(tep_find_field(event, "path"), d, size, big_endian, &off, &len) ||
	    !len)
		return -EINVAL;
	out->id = id;
	out->build_id_len = bid_size;
	out->build_id = d + bid->offset;
	out->path = (const char *)d + off;
	nul = memchr(out->path, '\0', len);
	out->path_len = nul ? (size_t)(nul - out->path) : len;
	return out->path_len ? 0 : -EINVAL;
}

int td_filetab_add_record(struct td_filetab *ft, struct tep_event *event, const void *data,
			  int size)
{
	struct td_file_rec r;

	/* The reader of this table parses little-endian input only (parse.h). */
	if (td_file_rec_decode(event, data, size, false, &r)) {
		ft->stats.bad_records++;
		return -EINVAL;
	}
	return td_filetab_add(ft, r.id, r.build_id, r.build_id_len, r.path, r.path_len);
}

static struct tep_format_field *dyn_field(struct tep_event *event, const char *name, int *err)
{
	struct tep_format_field *f = tep_find_field(event, name);

	if (f && (!(f->flags & TEP_FIELD_IS_DYNAMIC) || f->size != 4))
		*err = -EPROTO;
	return f;
}

/* An optional scalar field: absent (older kernels) or of another shape is NULL. */
static struct tep_format_field *scalar_field(struct tep_event *event, const char *name,
					     int size)
{
	struct tep_format_field *f = tep_find_field(event, name);

	return f && f->size == size && !(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) ?
	       f : NULL;
}

int td_ustack_fields_init(struct td_ustack_fields *uf, struct tep_event *event)
{
	int err = 0;

	memset(uf, 0, sizeof(*uf));
	uf->stack = dyn_field(event, "stack", &err);
	uf->bases = dyn_field(event, "file_bases", &err);
	uf->ids = dyn_field(event, "file_ids", &err);
	uf->frame_files = dyn_field(event, "frame_files", &err);
	if (!uf->stack || err)
		return -EPROTO;
	uf->has_files = uf->bases && uf->ids && uf->frame_files;
	uf->dropped = scalar_field(event, "dropped", 2);
	uf->flags = scalar_field(event, "flags", 2);
	uf->tgid = scalar_field(event, "tgid", 4);
	return 0;
}

static void all_unrecorded(struct td_ufile *out, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		out[i] = (struct td_ufile){ .kind = TD_FILE_UNRECORDED };
}

bool td_ustack_locate_files(const struct td_ustack_fields *uf, const void *data, int size,
			    bool big_endian, unsigned int nr, struct td_ufile_area *a)
{
	unsigned int boff, blen, ioff, ilen, foff, flen;
	const uint8_t *d = data;

	memset(a, 0, sizeof(*a));
	a->nr = nr;
	a->big_endian = big_endian;
	if (!td_dyn_locate(uf->bases, d, size, big_endian, &boff, &blen) ||
	    !td_dyn_locate(uf->ids, d, size, big_endian, &ioff, &ilen) ||
	    !td_dyn_locate(uf->frame_files, d, size, big_endian, &foff, &flen) ||
	    blen % 8 || ilen % 4 || blen / 8 != ilen / 4 || flen != nr)
		return false;
	a->found = true;
	/* The kernel describes at most 16 files per stack: an index is a byte. */
	a->nr_files = ilen / 4 < TD_FF_UNRECORDED ? ilen / 4 : TD_FF_UNRECORDED;
	a->bases = d + boff;
	a->ids = d + ioff;
	a->frame_files = d + foff;
	return true;
}

unsigned int td_ufile_area_decode(const struct td_ufile_area *a, const uint64_t *ips,
				  struct td_ufile *out)
{
	uint64_t bases[TD_FF_UNRECORDED];
	uint32_t ids[TD_FF_UNRECORDED];
	unsigned int i, bad = 0;

	if (!a->found) {
		all_unrecorded(out, a->nr);
		return a->nr ? a->nr : 1;
	}
	/* Decode the few files once: each frame is then one table lookup. */
	for (i = 0; i < a->nr_files; i++) {
		uint64_t base;
		uint32_t id;

		memcpy(&id, a->ids + 4 * i, 4);
		memcpy(&base, a->bases + 8 * i, 8);
		ids[i] = a->big_endian ? be32toh(id) : le32toh(id);
		bases[i] = a->big_endian ? be64toh(base) : le64toh(base);
	}
	for (i = 0; i < a->nr; i++) {
		unsigned int idx = a->frame_files[i];

		if (idx < a->nr_files && ids[idx] && ips[i] >= bases[idx]) {
			out[i] = (struct td_ufile){ .kind = TD_FILE_IN, .id = ids[idx],
						    .offset = ips[i] - bases[idx] };
			continue;
		}
		out[i] = (struct td_ufile){ .kind = TD_FILE_UNRECORDED };
		if (idx == TD_FF_ANON)
			out[i].kind = TD_FILE_ANON;
		else if (idx == TD_FF_VDSO)
			out[i].kind = TD_FILE_VDSO;
		else if (idx != TD_FF_UNRECORDED)
			bad++;	/* out of range, id 0, or under its file's base */
	}
	return bad;
}

unsigned int td_ustack_decode_files(const struct td_ustack_fields *uf, const void *data,
				    int size, bool big_endian, const uint64_t *ips,
				    unsigned int nr, struct td_ufile *out)
{
	struct td_ufile_area a;

	td_ustack_locate_files(uf, data, size, big_endian, nr, &a);
	return td_ufile_area_decode(&a, ips, out);
}
