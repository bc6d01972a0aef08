# SPDX-License-Identifier: GPL-2.0
#
# Variants of the test programs for the file identity tests (tests/vm/):
#   fp_chain_pie    fp_chain as a position independent executable, so a
#                   frame's file offset differs from its address
#   fp_chain_altid  fp_chain with another build-id: put in place of the
#                   binary that ran, it must never be used to name frames
#   libfid.so       the library fid_cases loads and unloads

PROG_VARIANTS	:= $(BUILD)/progs/fp_chain_pie $(BUILD)/progs/fp_chain_altid \
		   $(BUILD)/progs/libfid.so

$(BUILD)/progs/fp_chain_pie: tests/progs/fp_chain.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(filter-out -no-pie,$(PROG_CFLAGS)) -fPIE -pie -o $@ $< -lpthread

$(BUILD)/progs/fp_chain_altid: tests/progs/fp_chain.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(PROG_CFLAGS) -Wl,--build-id=0x7d0c0ffee0ddba11 -o $@ $< -lpthread

$(BUILD)/progs/libfid.so: tests/progs/lib/fid_lib.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(filter-out -no-pie,$(PROG_CFLAGS)) -fPIC -shared -o $@ $<

all progs: $(PROG_VARIANTS)
