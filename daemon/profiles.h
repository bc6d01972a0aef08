/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Profiles cut every interval into a directory, with bounded disk use: what
 * an always-on daemon keeps instead of a line per event.
 *
 * Every profile_interval seconds (and at exit) the events counted since the
 * last cut go to DIR/profile-YYYYMMDDTHHMMSS.mmmZ.pb.gz (pprof, gzipped;
 * the time is the interval's start, UTC; names sort as intervals start)
 * and, with profile_folded, to DIR/profile-....folded. Each file is
 * written under a dot-name and renamed into place, so readers never see
 * half a profile; files are 0600 and a directory we create is 0700. The
 * directory must be ours alone (our uid, written by no one else) and is
 * locked: one trace-defer a directory. Before the new interval is
 * renamed into place the oldest are removed (at start too), so that the
 * intervals in the directory never number more than profile_keep nor
 * take more than profile_max_kb KiB (0: that bound off); an interval
 * bigger than the bound on its own is still written, alone. Oldest means
 * written first: earlier runs' by name, then this run's in the order it
 * wrote them, whatever the wall clock, which names them, did meanwhile.
 * Only names of that pattern are ever touched. An interval without
 * events writes nothing. An interval whose tables (distinct stacks, names,
 * folded lines) reach profile_max_mem_kb KiB is cut at once, early, and counted: memory
 * stays bounded however many distinct stacks come.
 */
#ifndef TD_DAEMON_PROFILES_H
#define TD_DAEMON_PROFILES_H

#include <stdint.h>

#include <trace-defer/output.h>

#include "config.h"

struct td_profiles;

struct td_profiles_stats {
	uint64_t written;	/* intervals written */
	uint64_t removed;	/* intervals removed to stay within the bounds */
	uint64_t bytes;		/* bytes written, over all files, removed ones too */
	uint64_t kept;		/* intervals in the directory after the last cut */
	uint64_t kept_bytes;	/* and their bytes: what the bounds bound */
	uint64_t last_bytes;	/* of the last interval's pprof file */
	uint64_t errors;	/* cuts that failed (message printed) */
	uint64_t early;		/* intervals cut early: their tables hit profile_max_mem_kb */
	uint64_t dir_made_again;	/* the directory was removed, and made again */
	/* events in an interval's pprof file that its folded file lacks (out of memory) */
	uint64_t folded_missed;
};

/*
 * Create or check the directory (a stale dot-file of a crashed run is
 * removed). NULL on error (message printed).
 */
struct td_profiles *td_profiles_open(const struct td_config *cfg, uint64_t mono_ns);

/*
 * Count one event. Returns 0 or -ENOMEM: not counted, or (folded_missed)
 * counted in the pprof but not in the folded stacks.
 */
int td_profiles_add(struct td_profiles *p, const struct td_resolved *r);

/* Cut when the interval is over. Returns 0 or -1 (message printed). */
int td_profiles_tick(struct td_profiles *p, uint64_t mono_ns);

/*
 * Cut what is left and free; *@st (may be NULL) gets the final counters.
 * Returns 0, or -1 when this cut or any before it failed (messages
 * printed at each).
 */
int td_profiles_close(struct td_profiles *p, struct td_profiles_stats *st);

void td_profiles_stats(const struct td_profiles *p, struct td_profiles_stats *st);

#endif /* TD_DAEMON_PROFILES_H */
