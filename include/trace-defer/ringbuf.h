/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The layout of a ring-buffer sub-buffer as per_cpu/cpuN/trace_pipe_raw
 * returns it on a 64-bit little-endian kernel (kernel/trace/ring_buffer.c,
 * events/header_page): what the parser reads and the page generator
 * writes, defined once for both.
 */
#ifndef TRACE_DEFER_RINGBUF_H
#define TRACE_DEFER_RINGBUF_H

#define TD_PAGE_SIZE		4096
#define TD_PAGE_HDR_SIZE	16		/* u64 timestamp + 64-bit local_t commit */
#define TD_PAGE_MISSED_EVENTS	(1ULL << 31)	/* commit flag: events lost before it */
#define TD_PAGE_MISSED_STORED	(1ULL << 30)	/* the count is stored after the data */
#define TD_PAGE_COMMIT_MASK	((1ULL << 27) - 1)

#define TD_RB_TYPE_PADDING	29
#define TD_RB_TYPE_TIME_EXTEND	30
#define TD_RB_TYPE_TIME_STAMP	31
#define TD_RB_MAX_DELTA		((1U << 27) - 1)

#endif /* TRACE_DEFER_RINGBUF_H */
