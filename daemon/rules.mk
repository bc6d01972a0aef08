# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of daemon modules: they link the daemon objects they test on
# top of the generic test rule (which links $^).
$(BUILD)/tests/test_daemon_config: $(BUILD)/obj/daemon/config.o $(BUILD)/obj/daemon/log.o
$(BUILD)/tests/test_daemon_cmdlines: $(BUILD)/obj/daemon/cmdlines.o $(BUILD)/obj/daemon/log.o
