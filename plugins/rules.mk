# SPDX-License-Identifier: GPL-2.0
#
# plugin_user_unwind.so gets its own link rule (it overrides the generic one
# for this target): the library's PIC objects go in through an archive so
# only what the plugin uses is linked, plugins/plugin.map keeps everything
# but the loader and unloader private, and -z defs turns a symbol missing
# from the plugin into a link error instead of a dlopen failure in
# trace-cmd. In the ASan build (SAN=1, never installed) the plugin is
# instrumented like the library objects it links, so test_plugin.c, which
# loads it, checks the plugin's own memory accesses too.

UU_PLUGIN	:= $(BUILD)/plugins/plugin_user_unwind.so
UU_PIC_LIB	:= $(BUILD)/plugins/libtracedefer-pic.a
UU_SAN_FLAGS	:= -fsanitize=address,undefined -fno-omit-frame-pointer \
		   -fno-sanitize-recover=all

$(UU_PIC_LIB): $(LIB_SRCS:%.c=$(BUILD)/pic/%.o)
	@mkdir -p $(dir $@)
	$(QUIET_AR)rm -f $@ && ar rcs $@ $^

$(UU_PLUGIN): plugins/plugin_user_unwind.c plugins/plugin.map plugins/rules.mk $(UU_PIC_LIB) \
		$(wildcard include/trace-defer/*.h)
	@mkdir -p $(dir $@)
	$(QUIET_LD)$(CC) -std=gnu11 -O2 -g $(WARN) -D_GNU_SOURCE -Iinclude $(PKG_CFLAGS) \
		$(if $(SAN),$(UU_SAN_FLAGS)) -fPIC -shared -Wl,--version-script=plugins/plugin.map \
		-Wl,-z,defs -Wl,--as-needed -o $@ plugins/plugin_user_unwind.c $(UU_PIC_LIB) \
		$(PKG_LIBS) -lpthread

# The unit test loads the real plugin: build it first (order-only: the test
# binary does not link it).
$(BUILD)/tests/test_plugin: | $(UU_PLUGIN)

# End-to-end with the system's trace-cmd (root; see the script's header).
.PHONY: plugin-check
plugin-check: $(UU_PLUGIN) $(BUILD)/progs/fp_chain
	$(Q)BUILD=$(BUILD) plugins/check-report.sh
