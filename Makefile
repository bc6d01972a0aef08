# SPDX-License-Identifier: GPL-2.0
#
# trace-defer: one Makefile for the library, the daemon, the plugins, the
# tests and the kernel/VM harness. `make help` lists the targets.

PREFIX		?= /usr/local
DESTDIR		?=
BINDIR		?= $(PREFIX)/bin
MANDIR		?= $(PREFIX)/share/man
SYSCONFDIR	?= /etc
UNITDIR		?= /lib/systemd/system
# libtraceevent searches only its own directory (and TRACEEVENT_PLUGIN_DIR,
# ~/.local/lib/traceevent/plugins), whatever PREFIX is.
PLUGINDIR	?= /usr/lib/$(shell gcc -dumpmachine)/traceevent/plugins

CC		?= gcc
BUILD		?= build
SAN		?=
V		?=

PKGS		:= libtracefs libtraceevent json-c libdw libelf libdebuginfod libsystemd \
		   libprotobuf-c zlib
# Its header only: lib/debuginfod.c loads the library when first asked.
PKGS_LOADED	:= libdebuginfod
PKG_CFLAGS	:= $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libiberty (a static archive, no pkg-config file): the demangler binutils
# and GDB use, for C++ and both Rust manglings.
PKG_LIBS	:= $(shell pkg-config --libs $(filter-out $(PKGS_LOADED),$(PKGS)) 2>/dev/null) -liberty

# $(call cc-option,FLAG): FLAG if $(CC) takes it, else nothing ($(comma) for a comma).
comma		:= ,
cc-option	= $(shell $(CC) -Werror $(1) -E -x c /dev/null > /dev/null 2>&1 && echo "$(1)")

# GCC's generic x86 tuning zeroes structs of 33 bytes to 8 KiB (an event
# is 128) with rep stos, whose start-up costs more than the whole store on
# current cores (AMD EPYC here: 12% of the parser's time went to one such
# memset). Up to 256 bytes: vector stores; beyond: libc's memset, which
# picks its method for the CPU it runs on. Copies keep GCC's choice: the
# same strategy for memcpy turned copies of a length known only at run
# time into byte loops (the JSON writer's field cache key: 10% of its time).
STRINGOPS	?= $(call cc-option,-mmemset-strategy=vector_loop:256:noalign$(comma)libcall:-1:noalign)

WARN		:= -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow \
		   -Wmissing-prototypes -Wstrict-prototypes
CFLAGS		?= -O2 -g
ALL_CFLAGS	:= -std=gnu11 $(CFLAGS) $(STRINGOPS) $(WARN) -D_GNU_SOURCE -Iinclude -I$(BUILD)/gen $(PKG_CFLAGS)
LDLIBS		:= $(PKG_LIBS) -lpthread
# Link-time optimization for what people run (the daemon, the benchmarks):
# every event crosses many small functions of several files (parse ->
# stitch -> name -> sinks), which only LTO can inline across (make bench:
# about 10% less CPU per event). Fat objects, so the unit tests link the
# same objects without LTO, as quickly as before. Off in sanitizer builds;
# LTO=0 turns it off.
LTO		?= 1
ifeq ($(SAN),)
ifeq ($(LTO),1)
LTO_CFLAGS	:= -flto=auto -ffat-lto-objects
LTO_LDFLAGS	:= -flto=auto
NO_LTO		:= -fno-lto
endif
endif
# SAN=1: ASan and UBSan (make unit-asan); SAN=thread: TSan, for the one
# thread the library starts (lib/jitwatch.c).
ifeq ($(SAN),thread)
ALL_CFLAGS	+= -fsanitize=thread -fno-omit-frame-pointer
LDFLAGS		+= -fsanitize=thread
else ifneq ($(SAN),)
ALL_CFLAGS	+= -fsanitize=address,undefined -fno-omit-frame-pointer \
		   -fno-sanitize-recover=all
LDFLAGS		+= -fsanitize=address,undefined
endif

ifeq ($(V),)
Q		:= @
QUIET_CC	= @echo "  CC      $@";
QUIET_LD	= @echo "  LD      $@";
QUIET_AR	= @echo "  AR      $@";
endif

LIB_SRCS	:= $(sort $(wildcard lib/*.c))
DAEMON_SRCS	:= $(sort $(wildcard daemon/*.c))
UNIT_SRCS	:= $(sort $(wildcard tests/unit/test_*.c))
PLUGIN_SRCS	:= $(sort $(wildcard plugins/plugin_*.c))
PROG_SRCS	:= $(sort $(wildcard tests/progs/*.c))

LIB		:= $(BUILD)/libtracedefer.a
DAEMON		:= $(BUILD)/trace-defer
UNIT_BINS	:= $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
PLUGINS		:= $(PLUGIN_SRCS:plugins/%.c=$(BUILD)/plugins/%.so)
# Test programs: frame pointers everywhere so a frame-pointer unwind is exact.
PROGS		:= $(PROG_SRCS:tests/progs/%.c=$(BUILD)/progs/%)
PROG_CFLAGS	:= -O1 -g -no-pie -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		   -fno-inline -fno-optimize-sibling-calls -Wall -Werror

.PHONY: all help lib daemon plugins progs unit unit-asan host-test vm-test check \
	check-debug 	kernel kernel-debug demo bench bench-profile install uninstall clean distclean format doc

all: $(LIB) $(DAEMON) $(PLUGINS) $(PROGS)

help:
	@echo "Targets:"
	@echo "  all          library, trace-defer, plugins, test programs (default)"
	@echo "  check        every test: unit (plain + ASan/UBSan), host tracefs, VM"
	@echo "  check-debug  the stress stage on the debug kernel (KASAN, lockdep, RCU)"
	@echo "  unit         cmocka unit tests"
	@echo "  unit-asan    unit tests built with ASan/UBSan"
	@echo "  fuzz         libFuzzer targets (clang) in build-fuzz/; check-fuzz: a 60 s run"
	@echo "  fuzz-long    fuzz for 30 minutes per target (FUZZ_SECONDS=N)"
	@echo "  host-test    tests on this machine's real tracefs (root)"
	@echo "  kernel       fetch Linux 7.3, apply kernel-patches/, build (cached)"
	@echo "  kernel-debug the same with KASAN, lockdep, PROVE_RCU and failslab"
	@echo "  vm-test      boot the kernels under QEMU and run tests/vm/ (VM_TESTS=...)"
	@echo "  demo         build everything, boot the VM, show stitched stacks"
	@echo "  bench        benchmarks with ratios against in-run baselines"
	@echo "  bench-profile  perf profile of the always-on daemon and the drain loop in the VM"
	@echo "  install      install into DESTDIR/PREFIX"
	@echo "  doc          doc/trace-defer-json.7 again from its markdown (lowdown)"

lib: $(LIB)
daemon: $(DAEMON)
plugins: $(PLUGINS)
progs: $(PROGS)

$(BUILD)/obj/%.o: %.c $(wildcard include/trace-defer/*.h) $(wildcard */*.h)
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) $(LTO_CFLAGS) -c -o $@ $<

$(BUILD)/pic/%.o: %.c $(wildcard include/trace-defer/*.h) $(wildcard */*.h)
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -fPIC -c -o $@ $<

$(LIB): $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
	@mkdir -p $(dir $@)
	$(QUIET_AR)rm -f $@ && ar rcs $@ $^

$(DAEMON): $(DAEMON_SRCS:%.c=$(BUILD)/obj/%.o) $(LIB)
	$(QUIET_LD)$(CC) $(LDFLAGS) $(LTO_LDFLAGS) -o $@ $^ $(LDLIBS) -ltracecmd

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(QUIET_LD)$(CC) $(LDFLAGS) $(NO_LTO) -o $@ $^ $(LDLIBS) -lcmocka

# Plugins are loaded by trace-cmd and KernelShark: position independent,
# linked with the library's PIC objects, no sanitizers.
$(BUILD)/plugins/%.so: plugins/%.c $(LIB_SRCS:%.c=$(BUILD)/pic/%.o)
	@mkdir -p $(dir $@)
	$(QUIET_LD)$(CC) -std=gnu11 -O2 -g $(WARN) -D_GNU_SOURCE -Iinclude $(PKG_CFLAGS) \
		-fPIC -shared -o $@ $^ $(PKG_LIBS)

$(BUILD)/progs/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(PROG_CFLAGS) -o $@ $< -lpthread

# Areas may add their own rules (fixtures, man pages) in a rules.mk.
-include $(sort $(wildcard */rules.mk tests/*/rules.mk))

unit: $(UNIT_BINS) $(PROGS)
	$(Q)BUILD=$(BUILD) tests/run-unit.sh $(UNIT_BINS)

unit-asan:
	$(Q)$(MAKE) --no-print-directory BUILD=build-asan SAN=1 unit

host-test: all
	$(Q)BUILD=$(BUILD) tests/host/run.sh

kernel:
	$(Q)kernel/build.sh

kernel-debug:
	$(Q)KCONFIG_FLAVOR=debug kernel/build.sh

vm-test: all kernel
	$(Q)BUILD=$(BUILD) tests/vm/run.sh

# The test command the README gives and CI runs. The patched kernel is
# built beside the tests of the host (niced; a no-op once cached): they
# leave a core idle much of the time, and the build took 15 of CI's 90
# minutes on a slow machine when it came after them (2026-12-02). The
# first test that fails ends the run, once the build is done.
check: all
	$(Q)mkdir -p vm-out; nice -n 19 kernel/build.sh > vm-out/build-patched-beside.log 2>&1 & \
	kpid=$$!; rc=0; t0=$$(date +%s); \
	for t in unit unit-asan check-fuzz host-test; do \
		$(MAKE) --no-print-directory $$t || { rc=1; break; }; \
	done; \
	wait $$kpid || { echo "check: the kernel did not build:"; \
		tail -n 20 vm-out/build-patched-beside.log; rc=1; }; \
	echo "check: host tests and kernel build: $$(( $$(date +%s) - t0 )) s"; \
	[ $$rc -eq 0 ]
	$(Q)$(MAKE) --no-print-directory vm-test

# The stress stage on the debug kernel (KASAN, lockdep, PROVE_RCU,
# failslab): a kernel of its own and 3-12 minutes under TCG, so not
# in `check`, which must end within CI's 90 minutes.
check-debug: all kernel-debug
	$(Q)BUILD=$(BUILD) VM_TESTS=stress tests/vm/run.sh

demo: all kernel
	$(Q)BUILD=$(BUILD) scripts/demo.sh

bench: all
	$(Q)BUILD=$(BUILD) bench/run.sh

bench-profile: all bench-progs
	$(Q)BUILD=$(BUILD) bench/profile-vm.sh

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(SYSCONFDIR)/trace-defer $(DESTDIR)$(SYSCONFDIR)/logrotate.d \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(PLUGINDIR)
	install -m 0755 $(DAEMON) $(DESTDIR)$(BINDIR)/trace-defer
	install -m 0755 contrib/td-json-resolve $(DESTDIR)$(BINDIR)/td-json-resolve
	for p in $(PLUGINS); do install -m 0644 $$p $(DESTDIR)$(PLUGINDIR)/; done
	for m in $(wildcard doc/*.8); do install -m 0644 $$m $(DESTDIR)$(MANDIR)/man8/; done
	for m in $(wildcard doc/*.7); do install -m 0644 $$m $(DESTDIR)$(MANDIR)/man7/; done
	install -d $(DESTDIR)$(PREFIX)/share/doc/trace-defer
	install -m 0644 README.md $(wildcard doc/*.md) $(DESTDIR)$(PREFIX)/share/doc/trace-defer/
	test -e $(DESTDIR)$(SYSCONFDIR)/trace-defer/trace-defer.conf || \
		install -m 0644 contrib/trace-defer.conf $(DESTDIR)$(SYSCONFDIR)/trace-defer/
	test -e $(DESTDIR)$(SYSCONFDIR)/logrotate.d/trace-defer || \
		install -m 0644 contrib/trace-defer.logrotate \
		$(DESTDIR)$(SYSCONFDIR)/logrotate.d/trace-defer
	sed 's|@BINDIR@|$(BINDIR)|g' trace-defer.service > $(DESTDIR)$(UNITDIR)/trace-defer.service

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/trace-defer $(DESTDIR)$(BINDIR)/td-json-resolve
	rm -f $(DESTDIR)$(UNITDIR)/trace-defer.service
	rm -f $(addprefix $(DESTDIR)$(PLUGINDIR)/,$(notdir $(PLUGINS)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(wildcard doc/*.8)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man7/,$(notdir $(wildcard doc/*.7)))
	rm -rf $(DESTDIR)$(PREFIX)/share/doc/trace-defer

# Kept in the tree, so that man -l and make install need no lowdown; t_docs
# checks that it is what its markdown makes.
LOWDOWN = lowdown -s -Tman --out-no-smarty --parse-no-intraemph --parse-no-super
doc:
	$(LOWDOWN) -o doc/trace-defer-json.7 doc/trace-defer-json.7.md

format:
	clang-format -i $(LIB_SRCS) $(DAEMON_SRCS) $(UNIT_SRCS) $(PLUGIN_SRCS) include/trace-defer/*.h

clean:
	rm -rf build build-asan build-tsan

distclean: clean
	rm -rf .cache
