# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of daemon modules: they link the daemon objects they test on
# top of the generic test rule (which links $^).
# test_daemon_record runs the program itself (record --recover, a fake trace-cmd).
$(BUILD)/tests/test_daemon_record: | $(DAEMON)
$(BUILD)/tests/test_daemon_config: $(BUILD)/obj/daemon/config.o $(BUILD)/obj/daemon/log.o
# config.o asks the library for the stitcher's defaults: the archive again, after it.
$(BUILD)/tests/test_daemon_config: LDLIBS := $(LIB) $(LDLIBS)
$(BUILD)/tests/test_daemon_cmdlines: $(BUILD)/obj/daemon/cmdlines.o $(BUILD)/obj/daemon/log.o
$(BUILD)/tests/test_daemon_kmodules: $(BUILD)/obj/daemon/kmodules.o
# profiles.o with its clock from the test (no counters.o), the library after it.
$(BUILD)/tests/test_daemon_profiles: $(BUILD)/obj/daemon/profiles.o $(BUILD)/obj/daemon/log.o
$(BUILD)/tests/test_daemon_profiles: LDLIBS := $(LIB) $(LDLIBS)
# Its td_folded_add() fails when the test says (--wrap), and it reads the
# pprof files back (the generated profile.proto code, in the library).
$(BUILD)/tests/test_daemon_profiles: LDFLAGS += -Wl,--wrap=td_folded_add
$(BUILD)/obj/tests/unit/test_daemon_profiles.o: $(BUILD)/gen/profile.pb-c.h
$(BUILD)/tests/test_daemon_service: $(BUILD)/obj/daemon/service.o
