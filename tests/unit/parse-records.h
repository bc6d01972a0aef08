/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Record builders for the unit tests: records in the layouts of the formats
 * in parse-fixtures.h, little-endian, ready for td_pagegen_add().
 */
#ifndef TEST_PARSE_RECORDS_H
#define TEST_PARSE_RECORDS_H

#include <stdint.h>
#include <string.h>

#include <trace-defer/pagegen.h>

#include "parse-fixtures.h"

#define put32 td_put_le32
#define put64 td_put_le64

static inline unsigned int rec_switch(uint8_t *b, const char *prev, int prev_pid,
				      const char *next, int next_pid)
{
	memset(b, 0, 64);
	td_rec_common(b, ID_SCHED_SWITCH, prev_pid);
	memcpy(b + 8, prev, strnlen(prev, 16));
	put32(b + 24, (uint32_t)prev_pid);
	memcpy(b + 40, next, strnlen(next, 16));
	put32(b + 56, (uint32_t)next_pid);
	return 64;
}

static inline unsigned int rec_kstack(uint8_t *b, int pid, const uint64_t *ips, int nr)
{
	int i;

	memset(b, 0, 16);
	td_rec_common(b, ID_KERNEL_STACK, pid);
	put32(b + 8, (uint32_t)nr);
	for (i = 0; i < nr; i++)
		put64(b + 16 + 8 * i, ips[i]);
	return 16 + 8 * nr;
}

static inline unsigned int rec_cookie(uint8_t *b, int pid, uint64_t cookie)
{
	td_rec_common(b, ID_UNWIND_COOKIE, pid);
	put64(b + 8, cookie);
	return 16;
}

static inline unsigned int rec_unwind(uint8_t *b, int pid, uint64_t cookie, const uint64_t *ips,
				      int nr)
{
	int i;

	memset(b, 0, 24);
	td_rec_common(b, ID_UNWIND_STACK, pid);
	put64(b + 8, cookie);
	put32(b + 16, (uint32_t)(8 * nr) << 16 | 24);
	for (i = 0; i < nr; i++)
		put64(b + 24 + 8 * i, ips[i]);
	return 24 + 8 * nr;
}

/* user_unwind_stack in the layout of fmt_unwind_stack_tgid. */
static inline unsigned int rec_unwind_tgid(uint8_t *b, int pid, uint64_t cookie,
					   const uint64_t *ips, int nr, uint16_t dropped,
					   uint16_t flags, int tgid)
{
	int i;

	memset(b, 0, 32);
	td_rec_common(b, ID_UNWIND_STACK, pid);
	put64(b + 8, cookie);
	b[16] = dropped & 0xff;
	b[17] = dropped >> 8;
	b[18] = flags & 0xff;
	b[19] = flags >> 8;
	put32(b + 20, (uint32_t)tgid);
	put32(b + 24, (uint32_t)(8 * nr) << 16 | 32);
	for (i = 0; i < nr; i++)
		put64(b + 32 + 8 * i, ips[i]);
	return 32 + 8 * nr;
}

static inline unsigned int rec_sys_enter(uint8_t *b, int pid, long id)
{
	memset(b, 0, 64);
	td_rec_common(b, ID_SYS_ENTER, pid);
	put64(b + 8, (uint64_t)id);
	return 64;
}

static inline unsigned int rec_exec(uint8_t *b, int pid, const char *file, uint32_t loc_override)
{
	size_t n = strlen(file) + 1;

	memset(b, 0, 20 + n);
	td_rec_common(b, ID_SCHED_EXEC, pid);
	put32(b + 8, loc_override ? loc_override : (uint32_t)(n << 16 | 20));
	put32(b + 12, (uint32_t)pid);
	put32(b + 16, (uint32_t)pid);
	memcpy(b + 20, file, n);
	return 20 + n;
}

/* sched_process_fork in fmt_sched_fork's layout (__data_loc names). */
static inline unsigned int rec_fork(uint8_t *b, const char *parent, int parent_pid,
				    const char *child, int child_pid)
{
	size_t np = strlen(parent) + 1, nc = strlen(child) + 1;

	memset(b, 0, 24 + np + nc);
	td_rec_common(b, ID_SCHED_FORK, parent_pid);
	put32(b + 8, (uint32_t)(np << 16 | 24));
	put32(b + 12, (uint32_t)parent_pid);
	put32(b + 16, (uint32_t)(nc << 16 | (24 + np)));
	put32(b + 20, (uint32_t)child_pid);
	memcpy(b + 24, parent, np);
	memcpy(b + 24 + np, child, nc);
	return 24 + np + nc;
}

/* sched_process_fork in fmt_sched_fork_array's layout (char[16] names). */
static inline unsigned int rec_fork_array(uint8_t *b, const char *parent, int parent_pid,
					  const char *child, int child_pid)
{
	memset(b, 0, 48);
	td_rec_common(b, ID_SCHED_FORK, parent_pid);
	memcpy(b + 8, parent, strnlen(parent, 15));
	put32(b + 24, (uint32_t)parent_pid);
	memcpy(b + 28, child, strnlen(child, 15));
	put32(b + 44, (uint32_t)child_pid);
	return 48;
}

#endif /* TEST_PARSE_RECORDS_H */
