/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Processes for the synthesized capture to belong to: copies of a
 * frame-pointer test program blocked in read(2) on a pipe, alive while the
 * benchmark symbolizes their addresses.
 */
#ifndef TD_BENCH_TASKS_H
#define TD_BENCH_TASKS_H

struct bench_tasks {
	int nr;
	int pids[16];
	int stdin_fd[16];	/* write ends: closing one ends its process */
};

/* Start @nr copies of `PROG read`; returns 0 or -errno (all stopped then). */
int tasks_start(struct bench_tasks *t, const char *prog, int nr);
void tasks_stop(struct bench_tasks *t);

#endif /* TD_BENCH_TASKS_H */
