// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the libtraceevent plugin's decoding of user_unwind_*
 * records. The plugin (plugins/plugin_user_unwind.c, compiled into this
 * binary) is loaded into a tep with the kernel's formats for every input
 * and unloaded after it, so its file table starts empty each time; the
 * records (layout in fuzz-common.h) are printed with tep_print_event() as
 * trace-cmd report prints them, file records first teaching the table the
 * ids later stacks use. Symbolization is off (TRACE_DEFER_PLUGIN_SYMS=0):
 * recorded paths are named, never opened. Each record is copied to the end
 * of a page followed by an inaccessible one, so a read past it faults even
 * in libtraceevent, which is not instrumented.
 */
#include <endian.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "fuzz-common.h"

/* The plugin's entry points (plugin.map exports them from the .so). */
int tep_plugin_loader(struct tep_handle *tep);
void tep_plugin_unloader(struct tep_handle *tep);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define COMMON_SIZE	8
#define MAX_RECORDS	64

static struct tep_handle *teps[FUZZ_NR_LAYOUTS];
static uint8_t *guard;
static size_t page_size;
static bool verbose;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	/* A record is at most 8 + 65535 bytes: 17 pages, then the guard page. */
	guard = mmap(NULL, 18 * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (guard == MAP_FAILED || mprotect(guard + 17 * page_size, page_size, PROT_NONE))
		abort();
	setenv("TRACE_DEFER_PLUGIN_SYMS", "0", 1);
	/* FUZZ_VERBOSE=1: print the lines (to check seeds). */
	verbose = getenv("FUZZ_VERBOSE");
	for (int i = 0; i < FUZZ_NR_LAYOUTS; i++)
		if (!(teps[i] = fuzz_tep(i)))
			abort();
	return 0;
}

static const unsigned int kind_id[FUZZ_NR_REC] = {
	[FUZZ_REC_COOKIE] = ID_UNWIND_COOKIE,
	[FUZZ_REC_STACK] = ID_UNWIND_STACK,
	[FUZZ_REC_FILE] = ID_UNWIND_FILE,
};

static void print_one(struct tep_handle *tep, unsigned int kind, const uint8_t *src, size_t len,
		      uint64_t ts)
{
	size_t size = len < COMMON_SIZE ? COMMON_SIZE : len;
	uint8_t *rec = guard + 17 * page_size - size;
	struct tep_record r = { .ts = ts, .cpu = (int)(ts % 4) };
	struct trace_seq s;
	uint16_t type = tep_is_file_bigendian(tep) ? htobe16((uint16_t)kind_id[kind]) :
						      htole16((uint16_t)kind_id[kind]);
	unsigned int i;

	memset(rec, 0, size);
	memcpy(rec, src, len);
	memcpy(rec, &type, sizeof(type));
	r.data = rec;
	r.size = (int)size;
	r.record_size = (int)size;

	trace_seq_init(&s);
	tep_print_event(tep, &s, &r, "%16s-%-5d [%03d] %6.1000d %s: %s\n", TEP_PRINT_COMM,
			TEP_PRINT_PID, TEP_PRINT_CPU, TEP_PRINT_TIME, TEP_PRINT_NAME,
			TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	if (verbose)
		fputs(s.buffer, stderr);
	trace_seq_destroy(&s);

	/* The Info column: one line of printable text (the plugin's promise). */
	trace_seq_init(&s);
	tep_print_event(tep, &s, &r, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	for (i = 0; i < s.len; i++)
		if ((unsigned char)s.buffer[i] < 0x20 || s.buffer[i] == 0x7f) {
			fprintf(stderr, "fuzz_plugin: byte 0x%02x at %u of the Info column\n",
				(unsigned char)s.buffer[i], i);
			abort();
		}
	trace_seq_destroy(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tep_handle *tep;
	unsigned int nr = 0;
	size_t off = 1;

	if (size < 1)
		return -1;
	tep = teps[fuzz_plugin_layout(data[0])];
	tep_set_file_bigendian(tep, data[0] & FUZZ_PLUGIN_BIG ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	if (tep_plugin_loader(tep))
		abort();
	while (off + 3 <= size && nr < MAX_RECORDS) {
		unsigned int kind = data[off] % FUZZ_NR_REC;
		size_t len = data[off + 1] | (size_t)data[off + 2] << 8;

		off += 3;
		if (len > size - off)
			len = size - off;
		print_one(tep, kind, data + off, len, 1000 * ++nr);
		off += len;
	}
	tep_plugin_unloader(tep);
	return 0;
}
