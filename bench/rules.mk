# SPDX-License-Identifier: GPL-2.0
#
# Benchmark programs (make bench runs bench/run.sh), built into $(BUILD)/bench/:
#   replay     synthesized capture through the library's pipeline: parse,
#              stitch, symbolize, JSON, pprof
#   drain      the ceiling: a plain tracefs_cpu_read loop over every CPU
#   rbstat     guest side: one traced workload, ring-buffer bytes per event
#   loadgen    workloads with a deep frame-pointer call chain (built like
#              the test programs)
#   spawn      short-lived processes: fork and exec at once, one spawner
#              per CPU (the live section's second load)
#   profiles   the pprof sink on the events of short-lived processes,
#              against the same events from one process

BENCH_DIR	:= $(BUILD)/bench
BENCH_BINS	:= $(addprefix $(BENCH_DIR)/,replay drain rbstat loadgen spawn profiles)
BENCH_COMMON	:= $(BUILD)/obj/bench/capgen.o $(BUILD)/obj/bench/addrs.o \
		   $(BUILD)/obj/bench/tasks.o

.PHONY: bench-progs
bench-progs: $(BENCH_BINS)
bench: bench-progs
# tests/host/t_replay.sh runs the replay's checked captures;
# tests/vm/guest-report.sh traces loadgen's system call loop.
host-test: $(BENCH_DIR)/replay
vm-test: $(BENCH_DIR)/loadgen

$(BENCH_DIR)/replay: $(BUILD)/obj/bench/replay.o $(BENCH_COMMON) $(LIB)
	@mkdir -p $(dir $@)
	$(QUIET_LD)$(CC) $(LDFLAGS) $(LTO_LDFLAGS) -o $@ $^ $(LDLIBS)

$(BENCH_DIR)/profiles: $(BUILD)/obj/bench/profiles.o $(LIB)
	@mkdir -p $(dir $@)
	$(QUIET_LD)$(CC) $(LDFLAGS) $(LTO_LDFLAGS) -o $@ $^ $(LDLIBS)

$(BENCH_DIR)/drain: $(BUILD)/obj/bench/drain.o $(BUILD)/obj/bench/rbwalk.o
	@mkdir -p $(dir $@)
	$(QUIET_LD)$(CC) $(LDFLAGS) $(LTO_LDFLAGS) -o $@ $^ $(LDLIBS)

$(BENCH_DIR)/rbstat: $(BUILD)/obj/bench/rbstat.o $(BUILD)/obj/bench/rbwalk.o
	@mkdir -p $(dir $@)
	$(QUIET_LD)$(CC) $(LDFLAGS) $(LTO_LDFLAGS) -o $@ $^ $(LDLIBS)

$(BENCH_DIR)/loadgen: bench/progs/loadgen.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(PROG_CFLAGS) -o $@ $< -lpthread

$(BENCH_DIR)/spawn: bench/progs/spawn.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(PROG_CFLAGS) -o $@ $<
