# SPDX-License-Identifier: GPL-2.0
#
# libFuzzer targets (tests/fuzz/README.md): clang, -fsanitize=fuzzer with
# ASan and UBSan, everything in build-fuzz/ with the library sources (and
# the plugin's) compiled again there, so the gcc build is never touched.
#   make fuzz           build the targets and the seed writer
#   make check-fuzz     the short run of make check (FUZZ_SECONDS, default 60, per target)
#   make fuzz-long      a long run (FUZZ_SECONDS, default 1800, per target)
#   make fuzz-seed      rewrite the generated seeds in tests/fuzz/corpus/
#   make fuzz-seed-real FROM=DIR   add seeds from the trace.dat / cpuN.raw files under DIR

FUZZ_BUILD	:= build-fuzz
FUZZ_CC		:= clang
FUZZ_SAN	:= -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS	:= -std=gnu11 -g -O1 $(FUZZ_SAN) $(WARN) -D_GNU_SOURCE -Iinclude $(PKG_CFLAGS)
FUZZ_LIBS	:= $(PKG_LIBS) -lpthread
FUZZ_TARGETS	:= $(FUZZ_BUILD)/fuzz_page $(FUZZ_BUILD)/fuzz_plugin
FUZZ_SEED	:= $(FUZZ_BUILD)/fuzz_seed
# pprof needs generated code the targets do not use (and so do the sinks).
FUZZ_LIB_OBJS	:= $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,\
		   $(filter-out lib/pprof.c lib/sinks.c,$(LIB_SRCS)))
FUZZ_HDRS	:= $(wildcard include/trace-defer/*.h lib/*.h) tests/fuzz/fuzz-common.h \
		   tests/unit/parse-fixtures.h

.PHONY: fuzz fuzz-long check-fuzz fuzz-seed fuzz-seed-real clean-fuzz

$(FUZZ_BUILD)/obj/%.o: %.c $(FUZZ_HDRS) tests/fuzz/rules.mk
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_BUILD)/fuzz_page: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_page.o $(FUZZ_LIB_OBJS)
	$(QUIET_LD)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LIBS)

$(FUZZ_BUILD)/fuzz_plugin: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_plugin.o \
		$(FUZZ_BUILD)/obj/plugins/plugin_user_unwind.o $(FUZZ_LIB_OBJS)
	$(QUIET_LD)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LIBS)

# The seed writer: no libFuzzer main of its own, reads trace.dat files too.
$(FUZZ_SEED): $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_seed.o $(FUZZ_LIB_OBJS)
	$(QUIET_LD)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -o $@ $^ $(FUZZ_LIBS) \
		-ltracecmd

fuzz: $(FUZZ_TARGETS) $(FUZZ_SEED)

check-fuzz: fuzz
	$(Q)FUZZ_BUILD=$(FUZZ_BUILD) tests/fuzz/run.sh $(or $(FUZZ_SECONDS),60)

fuzz-long: fuzz
	$(Q)FUZZ_BUILD=$(FUZZ_BUILD) tests/fuzz/run.sh $(or $(FUZZ_SECONDS),1800)

fuzz-seed: $(FUZZ_SEED)
	$(Q)$(FUZZ_SEED) synth tests/fuzz/corpus/page tests/fuzz/corpus/plugin

fuzz-seed-real: $(FUZZ_SEED)
	$(Q)FUZZ_BUILD=$(FUZZ_BUILD) tests/fuzz/seed-from-dat.sh $(FROM)

clean-fuzz:
	rm -rf $(FUZZ_BUILD)

clean: clean-fuzz
