/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Processes for the synthesized capture to belong to: copies of a
 * frame-pointer test program blocked in read(2) on a pipe, alive while the
 * benchmark symbolizes their addresses.
 */
#ifndef TD_BENCH_TASKS_H
#define TD_BENCH_TASKS_H

#define BENCH_TASKS_MAX 16

struct bench_tasks {
	int nr;
	int pids[BENCH_TASKS_MAX];
	int stdin_fd[BENCH_TASKS_MAX];	/* write ends: closing one ends its process */
};

/* Start @nr copies of `PROG read`; returns 0 or -errno (all stopped then). */
int tasks_start(struct bench_tasks *t, const char *prog, int nr);
void tasks_stop(struct bench_tasks *t);

#endif /* TD_BENCH_TASKS_H */
