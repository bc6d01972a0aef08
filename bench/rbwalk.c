// SPDX-License-Identifier: GPL-2.0
/*
 * Sub-buffer walker (see rbwalk.h).
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include <kbuffer.h>
#include <tracefs.h>

#include "rbwalk.h"

#define COMMIT_MASK	((1ULL << 27) - 1)

struct rbwalk {
	struct kbuffer *kbuf;
	uint64_t records, commit_bytes, pages;
};

struct rbwalk *rbwalk_new(void)
{
	struct rbwalk *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->kbuf = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	if (!w->kbuf) {
		free(w);
		return NULL;
	}
	return w;
}

void rbwalk_free(struct rbwalk *w)
{
	if (!w)
		return;
	kbuffer_free(w->kbuf);
	free(w);
}

int rbwalk_page(struct rbwalk *w, void *page, int size, rbwalk_fn fn, void *arg)
{
	unsigned long long ts;
	uint64_t commit;
	uint16_t type;
	void *data;
	int n = 0;

	if (size < 16 || kbuffer_load_subbuffer(w->kbuf, page) < 0)
		return -1;
	memcpy(&commit, (char *)page + 8, sizeof(commit));
	w->commit_bytes += le64toh(commit) & COMMIT_MASK;
	w->pages++;
	for (data = kbuffer_read_event(w->kbuf, &ts); data;
	     data = kbuffer_next_event(w->kbuf, &ts)) {
		memcpy(&type, data, sizeof(type));
		if (fn)
			fn(le16toh(type), data, kbuffer_event_size(w->kbuf), arg);
		n++;
	}
	w->records += n;
	return n;
}

uint64_t rbwalk_records(const struct rbwalk *w)
{
	return w->records;
}

uint64_t rbwalk_commit_bytes(const struct rbwalk *w)
{
	return w->commit_bytes;
}

uint64_t rbwalk_pages(const struct rbwalk *w)
{
	return w->pages;
}

/* From the format file: ftrace's own events (kernel_stack...) have no id file. */
int rbwalk_event_id(const char *system, const char *name)
{
	char *s = tracefs_event_file_read(NULL, system, name, "format", NULL);
	char *p = s ? strstr(s, "\nID: ") : NULL;
	int id = p ? atoi(p + 5) : -1;

	free(s);
	return id;
}

int rbwalk_field_offset(const char *system, const char *name, const char *field)
{
	char *s = tracefs_event_file_read(NULL, system, name, "format", NULL);
	char key[128], *p;
	int off = -1;

	snprintf(key, sizeof(key), " %s;\toffset:", field);
	p = s ? strstr(s, key) : NULL;
	if (p)
		off = atoi(p + strlen(key));
	free(s);
	return off;
}
