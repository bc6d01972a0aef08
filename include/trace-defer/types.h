/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Core record types shared by the parser, the stitcher, the symbolizer and
 * the output writers.
 *
 * Ownership: a td_event and a td_ustack are owned by whoever holds them; the
 * stitcher takes ownership of what is fed to it and frees it after emitting.
 * Free them with td_event_free() and td_ustack_free() only: the parser
 * allocates a record's data with the record (td_event_new_raw(),
 * td_ustack_new_ips()).
 * Everything handed to an emit callback is valid only during the call.
 */
#ifndef TRACE_DEFER_TYPES_H
#define TRACE_DEFER_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tep_event;

#define TD_COMM_LEN 16

/* Why an event carries the user stack it carries (or none). */
enum td_status {
	TD_STITCHED = 0,	/* deferred stack found by (tid, cookie) */
	TD_USER_LOST,		/* cookie seen, stack never came (overrun, exit, bound) */
	TD_UNWIND_FAILED,	/* stack record came with zero entries */
	TD_NO_USER,		/* no cookie: kernel thread, or no request made */
	TD_INPLACE,		/* fallback mode: 8-entry in-place user stack */
	TD_NR_STATUS,
};

/* "stitched", "user_lost", ... ; NULL for out-of-range values. */
const char *td_status_name(enum td_status st);

/* A list of instruction pointers, innermost first. */
struct td_ips {
	unsigned int nr;
	uint64_t *ips;		/* malloc'ed, nr entries (NULL when nr == 0) */
};

/*
 * One kernel event that may ask for a user stack: the event record itself
 * plus what followed it on the same CPU (kernel_stack, user_unwind_cookie,
 * or in fallback mode user_stack).
 */
struct td_event {
	uint64_t ts;			/* ring-buffer timestamp (ns, trace clock) */
	int cpu;
	int tid;			/* common_pid of the record */
	int pid;			/* thread group id, 0 if unknown */
	char comm[TD_COMM_LEN];
	struct tep_event *tep_event;	/* format of raw (owned by the tep handle) */
	void *raw;			/* copy of the record data (malloc'ed) */
	int raw_size;
	struct td_ips kstack;		/* kernel frames, may be empty */
	bool has_cookie;
	uint64_t cookie;
	bool inplace;			/* fallback: ustack holds the in-place stack */
	struct td_ips inplace_stack;
	uint64_t seq;			/* emission order, set by the stitcher */
	/* Added after the first version: private to lib/types.c, leave it 0. */
	uint32_t alloc_flags;
};

/*
 * Where a user frame lies, as the stack record says (kernels that record
 * file identity; see trace-defer/filetab.h).
 */
enum td_file_kind {
	TD_FILE_NONE = 0,	/* the record carries no file identity (older kernel) */
	TD_FILE_IN,		/* in file @id at file offset @offset */
	TD_FILE_ANON,		/* not in a file: anonymous memory, JIT, unmapped */
	TD_FILE_VDSO,		/* in the vDSO */
	TD_FILE_UNRECORDED,	/* in a file the kernel did not record, or a bad record */
};

struct td_ufile {
	uint64_t offset;	/* TD_FILE_IN: offset of the IP in the file */
	uint32_t id;		/* TD_FILE_IN: the instance's file id (never 0) */
	uint32_t kind;		/* enum td_file_kind */
};

/* One ftrace:user_unwind_stack record. */
struct td_ustack {
	uint64_t ts;
	int cpu;
	int tid;
	uint64_t cookie;
	struct td_ips ips;		/* empty: the unwind found nothing */
	/* Added after the first version: private to lib/types.c, leave it 0. */
	uint32_t alloc_flags;
	/*
	 * Added with file identity: ips.nr entries, one per frame, or NULL
	 * when the record has none (older kernels). Allocated with the stack
	 * by td_ustack_new_files(), freed by td_ustack_free().
	 */
	struct td_ufile *files;
	/*
	 * Added with the kernel's "dropped" and "flags" fields (0 from older
	 * kernels): outermost frames the kernel left out for the record to
	 * fit, and TD_USTACK_* flags.
	 */
	uint16_t dropped;
	uint16_t flags;
	/*
	 * Added with the kernel's "tgid" field (0 from older kernels): the
	 * process of the task the stack was taken in, recorded by the task
	 * itself, so known even when the process is gone by read time.
	 */
	int tgid;
};

/*
 * The task called execve() after the first event of its kernel entry
 * asked: the stack is the new program's, not the one of the events that
 * asked before. The stitcher gives such events status user_lost.
 */
#define TD_USTACK_EXEC	0x1

/* Cookie layout (kernel/unwind/deferred.c): low 32 bits cpu + 1, high 32 an odd counter. */
static inline int td_cookie_cpu(uint64_t cookie)
{
	/* Unsigned: a CPU part of 0x80000000 (never written, but read) must not overflow. */
	return (int)((uint32_t)cookie - 1);
}

static inline uint32_t td_cookie_seq(uint64_t cookie)
{
	return (uint32_t)(cookie >> 32);
}

void td_ips_free(struct td_ips *ips);
/* Deep copy; returns 0 or -ENOMEM. */
int td_ips_copy(struct td_ips *dst, const uint64_t *ips, unsigned int nr);

struct td_event *td_event_new(void);
void td_event_free(struct td_event *ev);
struct td_ustack *td_ustack_new(void);
void td_ustack_free(struct td_ustack *us);

/*
 * Added after the first version. The same as td_event_new(), with ev->raw
 * pointing to @raw_size bytes (uninitialized; raw_size set) allocated with
 * the event: one allocation instead of two for the parser's hot path.
 * ev->raw may be replaced (the block is then just not used), never freed
 * on its own; td_event_free() frees what it must. NULL when out of memory.
 */
struct td_event *td_event_new_raw(size_t raw_size);
/*
 * The same as td_ustack_new(), with us->ips holding @nr entries
 * (uninitialized) allocated with the stack; td_ustack_free() frees it all.
 * us->ips.ips may be replaced, never freed on its own (no td_ips_free()).
 * NULL when out of memory.
 */
struct td_ustack *td_ustack_new_ips(unsigned int nr);
/*
 * The same, with us->files holding @nr entries too (uninitialized) when
 * @with_files, in the same allocation: do not replace us->files, it is
 * never freed on its own. NULL when out of memory.
 */
struct td_ustack *td_ustack_new_files(unsigned int nr, bool with_files);

#endif /* TRACE_DEFER_TYPES_H */
