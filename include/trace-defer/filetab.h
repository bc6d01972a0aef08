/* SPDX-License-Identifier: GPL-2.0 */
/*
 * File identity of deferred user stacks: the table of files a tracing
 * instance named (ftrace:user_unwind_file: id -> path, build-id), and the
 * decoders of the two records that carry file identity, shared by the
 * parser (live daemon, trace-defer report) and the libtraceevent plugin.
 *
 * Kernel interface (64-bit little-endian records, fields found by name):
 *   user_unwind_file   u32 id (never 0, never reused in an instance);
 *                      u32 build_id_size; u8 build_id[20];
 *                      __data_loc char[] path (NUL-terminated)
 *   user_unwind_stack  u64 cookie; __data_loc unsigned long[] stack;
 *                      and optionally (kernels with file identity)
 *                      __data_loc unsigned long[] file_bases;
 *                      __data_loc u32[] file_ids (parallel to file_bases);
 *                      __data_loc u8[] frame_files (one per frame: an index
 *                      into file_ids, or TD_FF_ANON, TD_FF_VDSO,
 *                      TD_FF_UNRECORDED)
 *
 * Promises of the table:
 *  - an id is known only after a file record for it was added; an unknown
 *    id stays unknown (never guessed), and a known id never names another
 *    file: a record giving a known id another path or build-id makes the id
 *    unusable (conflict) rather than replacing it;
 *  - bounded: at most max_files ids; a new id then drops the quarter of
 *    the ids whose last record is oldest (counted). The kernel records an
 *    id again when it is used a second or more after its last record, so
 *    an id still in use is soon known again;
 *  - entries never move, and are freed only by td_filetab_add() (dropped,
 *    td_filetab_gen() changes) or td_filetab_free(): pointers to them and
 *    to their strings stay valid until the next add.
 * Not thread safe: one table per reader (or lock around it).
 */
#ifndef TRACE_DEFER_FILETAB_H
#define TRACE_DEFER_FILETAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trace-defer/types.h>

struct tep_event;
struct tep_format_field;

#define TD_FILE_BUILD_ID_MAX	20		/* the kernel's BUILD_ID_SIZE_MAX */
#define TD_FILETAB_DEFAULT_MAX	65536

/* frame_files values other than an index. */
#define TD_FF_ANON		0xff	/* not in a file: anonymous memory, JIT, unmapped */
#define TD_FF_VDSO		0xfe
#define TD_FF_UNRECORDED	0xfd	/* in a file the kernel did not record */

struct td_file {
	uint32_t id;
	bool conflict;			/* two records disagreed: never used */
	unsigned int build_id_len;	/* 0: the file has no build-id */
	uint8_t build_id[TD_FILE_BUILD_ID_MAX];
	const char *build_id_hex;	/* lower-case hex, NULL when none */
	const char *path;		/* as recorded (may end in " (deleted)") */
	/*
	 * The symbolizer's cached resolution of this file: valid only for the
	 * symbolizer whose strings_id is sym_owner (see symbolize.h). Written
	 * by td_sym_file_id() only.
	 */
	uint64_t sym_owner;
	void *sym_res;
};

struct td_filetab_stats {
	uint64_t records;		/* file records added (new or repeated) */
	uint64_t files;			/* ids known now */
	uint64_t refreshed;		/* a record for a known id, same file */
	uint64_t conflicts;		/* a record for a known id, another file */
	uint64_t full;			/* times max_files was reached: the oldest dropped */
	uint64_t bad_records;		/* malformed file records */
	uint64_t evicted;		/* added later: ids dropped so */
};

struct td_filetab;

/* @max_files 0: TD_FILETAB_DEFAULT_MAX. NULL when out of memory. */
struct td_filetab *td_filetab_new(size_t max_files);
void td_filetab_free(struct td_filetab *ft);

/*
 * Add what a file record says. @build_id_len at most TD_FILE_BUILD_ID_MAX,
 * @path of @path_len bytes (no NUL needed; cut at a NUL). Returns 0 (new
 * id), 1 (known id, same file), -EINVAL (id 0, bad sizes), -EEXIST (known
 * id, another file: now a conflict), -ENOMEM. (-ENOSPC, table full, is no
 * longer returned: the oldest ids are dropped instead.)
 */
int td_filetab_add(struct td_filetab *ft, uint32_t id, const uint8_t *build_id,
		   unsigned int build_id_len, const char *path, size_t path_len);

/* The file of @id, or NULL when unknown (or in conflict). */
struct td_file *td_filetab_get(struct td_filetab *ft, uint32_t id);

void td_filetab_get_stats(const struct td_filetab *ft, struct td_filetab_stats *st);

/*
 * Added later: changes whenever td_filetab_get() could answer otherwise (a
 * new id, a conflict, ids dropped).
 */
uint64_t td_filetab_gen(const struct td_filetab *ft);

/* ---- decoding the records (untrusted bytes) ---- */

/* A decoded ftrace:user_unwind_file record; path points into the record. */
struct td_file_rec {
	uint32_t id;
	unsigned int build_id_len;
	const uint8_t *build_id;
	const char *path;
	size_t path_len;		/* up to the first NUL or the field's end */
};

/*
 * Where a dynamic (__data_loc / __rel_loc) field's data lies in a record
 * of @size bytes, its numbers big-endian when @big_endian: false when the
 * field or its data is outside the record, or a __data_loc points into the
 * fixed part before the field's own end.
 */
bool td_dyn_field(const struct tep_format_field *f, const void *data, int size, bool big_endian,
		  unsigned int *off, unsigned int *len);

/*
 * Decode a user_unwind_file record of @event (fields looked up by name),
 * its numbers big-endian when @big_endian (as td_dyn_field()). Returns 0,
 * or -EINVAL for a record that lies (fields outside it, a build_id_size
 * over 20, id 0, no path).
 */
int td_file_rec_decode(struct tep_event *event, const void *data, int size, bool big_endian,
		       struct td_file_rec *out);

/*
 * Decode and add a little-endian user_unwind_file record (bad ones
 * counted). Returns as td_filetab_add().
 */
int td_filetab_add_record(struct td_filetab *ft, struct tep_event *event, const void *data,
			  int size);

/* The file identity fields of user_unwind_stack, looked up once. */
struct td_ustack_fields {
	struct tep_format_field *stack, *bases, *ids, *frame_files;
	bool has_files;			/* the three file fields are all there */
	struct tep_format_field *dropped, *flags;	/* u16, NULL when absent */
	struct tep_format_field *tgid;			/* int, NULL when absent */
};

/*
 * Look the fields up in @event. Returns 0, or -EPROTO when "stack" is
 * missing or not dynamic, or when a file field is there but not a dynamic
 * array (the file fields are optional: older kernels lack them).
 */
int td_ustack_fields_init(struct td_ustack_fields *uf, struct tep_event *event);

/*
 * Per-frame file identity of a stack record, its numbers big-endian when
 * @big_endian (as td_dyn_field()): fills @out[0..nr) for the @nr IPs @ips
 * (the record's stack, in host order). Frames the record cannot vouch for
 * are TD_FILE_UNRECORDED: an index out of range, an id of 0, an IP below
 * its file's base, or (all of them) arrays whose lengths do not match.
 * Returns the number of such inconsistencies (0 for a sound record).
 * The caller checks uf->has_files first.
 */
unsigned int td_ustack_decode_files(const struct td_ustack_fields *uf, const void *data,
				    int size, bool big_endian, const uint64_t *ips,
				    unsigned int nr, struct td_ufile *out);

/*
 * Added later. The same in two steps, for a reader that keeps decoded
 * stacks: where the record's file identity lies (pointers into @data,
 * valid while it is), then the frames decoded from there. Two records
 * whose areas hold the same bytes (and the same IPs) decode the same.
 * td_ustack_locate_files() returns false (@a->found false: every frame
 * then decodes as unrecorded) when the arrays are missing, out of the
 * record, or of lengths that do not fit @nr IPs.
 */
struct td_ufile_area {
	bool found;
	bool big_endian;		/* the record's byte order */
	unsigned int nr;		/* frames (IPs) */
	unsigned int nr_files;		/* entries of bases and ids */
	const uint8_t *bases;		/* nr_files u64, in the record's order */
	const uint8_t *ids;		/* nr_files u32, in the record's order */
	const uint8_t *frame_files;	/* nr indexes or TD_FF_* */
};

bool td_ustack_locate_files(const struct td_ustack_fields *uf, const void *data, int size,
			    bool big_endian, unsigned int nr, struct td_ufile_area *a);
unsigned int td_ufile_area_decode(const struct td_ufile_area *a, const uint64_t *ips,
				  struct td_ufile *out);

#endif /* TRACE_DEFER_FILETAB_H */
