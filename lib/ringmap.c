// SPDX-License-Identifier: GPL-2.0
/*
 * A CPU's ring buffer read through its memory mapping (see ringmap.h).
 *
 * The mapping is a meta page (the buffer's layout and the reader's
 * position) followed by every sub-buffer in id order. The ioctl
 * GET_READER makes the kernel hand over the next sub-buffer, or keep the
 * current one if the writer has added to it; either way the meta page then
 * names the reader sub-buffer, which is ours to read until the next call.
 * Whether the records in it are new is ours to remember: the kernel
 * counts the whole sub-buffer read once it is handed over.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <trace-defer/ringbuf.h>

#include <trace-defer/ringmap.h>

#if __has_include(<linux/trace_mmap.h>)
#include <linux/trace_mmap.h>
#else
/* Linux's uapi <linux/trace_mmap.h> (6.10), for C library headers older than that. */
#include <linux/ioctl.h>
#include <linux/types.h>

struct trace_buffer_meta {
	__u32 meta_page_size;
	__u32 meta_struct_len;
	__u32 subbuf_size;
	__u32 nr_subbufs;
	struct {
		__u64 lost_events;
		__u32 id;
		__u32 read;
	} reader;
	__u64 flags;
	__u64 entries;
	__u64 overrun;
	__u64 read;
	__u64 pages_lost;
	__u64 pages_touched;
};

#define TRACE_MMAP_IOCTL_GET_READER	_IO('R', 0x20)
#endif

struct td_ringmap {
	int fd;
	const struct trace_buffer_meta *meta;
	size_t meta_len;
	const uint8_t *data;
	size_t data_len;
	unsigned int subbuf_size, nr_subbufs;
	uint32_t last_id;		/* the reader sub-buffer of the last call, or none */
	unsigned int last_end;		/* its data bytes handed out so far */
};

#define NO_ID	UINT32_MAX

void td_ringmap_close(struct td_ringmap *m)
{
	if (!m)
		return;
	if (m->data)
		munmap((void *)m->data, m->data_len);
	if (m->meta)
		munmap((void *)m->meta, m->meta_len);
	free(m);
}

int td_ringmap_open(int fd, unsigned int subbuf_size, struct td_ringmap **out)
{
	long page = sysconf(_SC_PAGESIZE);
	struct td_ringmap *m;
	void *p;
	int err;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->fd = fd;
	m->last_id = NO_ID;
	m->meta_len = page;
	p = mmap(NULL, m->meta_len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	m->meta = p;
	/* A layout we do not read (another sub-buffer size, a meta page we do not know). */
	if (m->meta->subbuf_size != subbuf_size || !m->meta->nr_subbufs ||
	    m->meta->meta_page_size < (size_t)page || m->meta->meta_page_size % page ||
	    subbuf_size <= TD_PAGE_HDR_SIZE) {
		err = -EPROTO;
		goto fail;
	}
	m->subbuf_size = subbuf_size;
	m->nr_subbufs = m->meta->nr_subbufs;
	m->data_len = (size_t)subbuf_size * m->nr_subbufs;
	p = mmap(NULL, m->data_len, PROT_READ, MAP_SHARED, fd, m->meta->meta_page_size);
	if (p == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	m->data = p;
	*out = m;
	return 0;
fail:
	td_ringmap_close(m);
	return err;
}

int td_ringmap_next(struct td_ringmap *m, const void **page, unsigned int *from,
		    unsigned int *to)
{
	const uint8_t *sb;
	uint64_t commit;
	uint32_t id;

	if (ioctl(m->fd, TRACE_MMAP_IOCTL_GET_READER) < 0)
		return -errno;
	id = __atomic_load_n(&m->meta->reader.id, __ATOMIC_ACQUIRE);
	if (id >= m->nr_subbufs)
		return -EPROTO;
	sb = m->data + (size_t)id * m->subbuf_size;
	/*
	 * The writer may still be filling this sub-buffer: the records up to
	 * the commit read here are whole (the kernel moves the commit after
	 * writing them), the rest is left for the next call.
	 */
	commit = __atomic_load_n((const uint64_t *)(sb + 8), __ATOMIC_ACQUIRE) &
		 TD_PAGE_COMMIT_MASK;
	if (id == m->last_id && commit <= m->last_end)
		return 0;
	*from = id == m->last_id ? m->last_end : 0;
	m->last_id = id;
	m->last_end = (unsigned int)commit;
	if (!commit)
		return 0;
	*page = sb;
	*to = (unsigned int)commit;
	return 1;
}
