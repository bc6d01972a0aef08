/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's own tracefs instance: its lifetime, and the detection and
 * removal of one left behind by a run that crashed.
 *
 * Ownership marker: a lock file RUN_DIR/NAME.lock (default
 * /run/trace-defer/trace-defer.lock), held with flock(LOCK_EX) for as long
 * as the instance is ours, and holding the owner's pid while the instance
 * exists (empty once it was removed cleanly). The kernel drops the lock when
 * its holder dies however it dies, so:
 *  - lock busy                         -> a live trace-defer owns NAME: refuse;
 *  - lock free, pid recorded, instance  -> stale, left by a crashed run: clean
 *    exists                               it (tracing off, triggers removed,
 *                                         options reset) and remove it;
 *  - lock free, nothing recorded,      -> not ours (someone made it by hand):
 *    instance exists                      refuse, unless --cleanup says so.
 * /run and tracefs instances both vanish at reboot, so the marker cannot
 * outlive what it marks. The file is never unlinked (unlinking a lock file
 * lets two processes lock two different inodes). The marker is "PID
 * STARTTIME": where flock() is missing (no CONFIG_FILE_LOCKING) the owner
 * counts as live while that pid runs with that start time.
 */
#ifndef TD_DAEMON_INSTANCE_H
#define TD_DAEMON_INSTANCE_H

#include <stdbool.h>

struct tracefs_instance;

struct td_instance {
	struct tracefs_instance *tfs;	/* NULL until created */
	char *name;
	char *lock_path;
	int lock_fd;
	/*
	 * A file of the instance held open from its mkdir to its removal:
	 * what tells another run (of another run directory) or --cleanup
	 * that it is in use, before the readers open theirs.
	 */
	int hold_fd;
};

/*
 * Check that tracefs is mounted (libtracefs mounts it if it can) and that
 * we may create instances in it. Returns 0 or -1 (message printed).
 */
int td_tracefs_check(void);

/*
 * Take the lock, clean a stale instance of that name, create a fresh one
 * with tracing off. Returns 0 or -1 (message printed, nothing left behind).
 */
int td_instance_open(struct td_instance *inst, const char *run_dir, const char *name);

/*
 * Stop tracing, remove triggers and options, destroy the instance (every
 * trace_pipe_raw fd must be closed by then), clear the marker and release
 * the lock. Safe on a partly opened instance. Returns 0 or -1 (printed).
 */
int td_instance_close(struct td_instance *inst);

/*
 * --cleanup: remove instance @name if no live trace-defer holds it and a
 * marker says trace-defer made it (a dead run's); with @force (--force),
 * also one another program made. Returns 0 (removed or nothing to do) or
 * -1 (message printed; another program's instance is left alone).
 */
int td_instance_cleanup(const char *run_dir, const char *name, bool force);

/*
 * Remove instance @name only if a run that died left it: its marker names
 * an owner and no live trace-defer holds its lock. Quiet when there is
 * nothing to do, when a live trace-defer holds it, or when it carries no
 * marker (then it is not ours). Never creates an instance. Returns 0, or -1
 * when a stale one could not be removed (printed).
 */
int td_instance_remove_stale(const char *run_dir, const char *name);

/* Turn off and remove everything a capture may have set in @tfs. */
void td_instance_scrub(struct tracefs_instance *tfs);

#endif /* TD_DAEMON_INSTANCE_H */
