/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One CPU's ring buffer read through its memory mapping (the kernel's
 * trace_pipe_raw mmap, Linux 6.10 and later): the records are parsed
 * where the kernel wrote them, with no read() and no copy.
 *
 * The kernel hands the reader one sub-buffer at a time, and it may still
 * be the one the writer fills: each call says which bytes of it are new
 * since the last call. The mapping pins the buffer's size (buffer_size_kb
 * cannot change while it exists) and excludes a snapshot.
 */
#ifndef TRACE_DEFER_RINGMAP_H
#define TRACE_DEFER_RINGMAP_H

struct td_ringmap;

/*
 * Map the buffer of @fd (an open per_cpu/cpuN/trace_pipe_raw) whose
 * sub-buffers are @subbuf_size bytes. Returns 0 and *@out, or a negative
 * errno: what mmap() said (the kernel cannot map this buffer: ENODEV,
 * EINVAL, EBUSY...), -EPROTO when its layout is not what we read, or
 * -ENOMEM.
 */
int td_ringmap_open(int fd, unsigned int subbuf_size, struct td_ringmap **out);
void td_ringmap_close(struct td_ringmap *m);

/*
 * The next new records: 1 with *@page, the sub-buffer that holds them,
 * and its new data bytes (*@from, *@to] (td_parser_page_range()); 0 when
 * there are none; a negative errno when the kernel refused (ENODEV: the
 * CPU went away). The sub-buffer stays as it is until the next call.
 */
int td_ringmap_next(struct td_ringmap *m, const void **page, unsigned int *from,
		    unsigned int *to);

#endif
