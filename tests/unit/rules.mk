# SPDX-License-Identifier: GPL-2.0
#
# Fixtures for tests/unit/test_symbolize.c, built with the system compiler
# (never with sanitizers: they are the processes being looked at) into
# $(BUILD)/fixtures/:
#   libfx.so          shared library with .symtab and a build-id
#   libfx_stripped.so the same, --strip-all (.dynsym only)
#   libfx_dl.so       dlopen'ed by a fixture after the test read its maps
#   fx_pie, fx_nopie  PIE and non-PIE executables using libfx.so
#   fx_link           stripped, no build-id, .gnu_debuglink to fx_link.debug
#   fx_badcrc         the same, but fx_badcrc.debug is from another build
#   fx_bid            stripped, build-id; debug file only in
#                     debug/.build-id/xx/yyyy.debug
#   fx_cxx            C++ (g++), for demangling
#   fx_fid_a, fx_fid_b never run: named from file identity alone; fixed
#                     build-ids, and fx_fid_b is another build (FX_SHIFT)
# *.full are the unstripped builds the tests read expected values from.

FX		:= $(BUILD)/fixtures
FX_SRC		:= tests/unit/fixtures
FX_CC		:= cc
FX_CXX		:= g++
# No inlining, no function alignment, source order kept: fx_prog.c relies on
# fx_after following fx_tail_caller directly.
FX_CFLAGS	:= -O1 -g -fno-inline -fno-optimize-sibling-calls -falign-functions=1 \
		   -fno-reorder-functions -fno-toplevel-reorder -fno-omit-frame-pointer -Wall
FX_LINK		:= -L$(FX) -lfx -Wl,-rpath,'$$ORIGIN'

FIXTURES	:= $(addprefix $(FX)/,libfx.so libfx_stripped.so libfx_dl.so fx_pie fx_nopie \
		   fx_link fx_badcrc fx_bid fx_cxx fx_fid_a fx_fid_b)
FX_BID_A	:= 0x1111111111111111111111111111111111111111
FX_BID_B	:= 0x2222222222222222222222222222222222222222

$(FX)/libfx.so: $(FX_SRC)/fx_lib.c $(FX_SRC)/fx_lib.map $(FX_SRC)/../rules.mk
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(FX_CC) $(FX_CFLAGS) -fPIC -shared -Wl,--build-id \
		-Wl,--version-script,$(FX_SRC)/fx_lib.map -o $@ $<

$(FX)/libfx_stripped.so: $(FX)/libfx.so
	$(Q)objcopy --strip-all $< $@

$(FX)/libfx_dl.so: $(FX_SRC)/fx_dl.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(FX_CC) $(FX_CFLAGS) -fPIC -shared -o $@ $<

$(FX)/fx_pie: $(FX_SRC)/fx_prog.c $(FX)/libfx.so
	$(QUIET_CC)$(FX_CC) $(FX_CFLAGS) -fPIE -pie -Wl,--build-id -o $@ $< $(FX_LINK)

$(FX)/fx_nopie: $(FX_SRC)/fx_prog.c $(FX)/libfx.so
	$(QUIET_CC)$(FX_CC) $(FX_CFLAGS) -fno-pie -no-pie -Wl,--build-id -o $@ $< $(FX_LINK)

# No build-id: the debug file can only be found, and checked, by debuglink+CRC.
$(FX)/fx_link.full $(FX)/fx_badcrc.full: $(FX)/%.full: $(FX_SRC)/fx_prog.c $(FX)/libfx.so
	$(QUIET_CC)$(FX_CC) $(FX_CFLAGS) -fPIE -pie -Wl,--build-id=none -o $@ $< $(FX_LINK)

$(FX)/fx_link: $(FX)/fx_link.full
	$(Q)objcopy --only-keep-debug $< $@.debug
	$(Q)objcopy --strip-all --add-gnu-debuglink=$@.debug $< $@

# The debuglink is made against the right debug file, which is then replaced
# by the debug file of a different build (functions at other addresses): a
# stale debug file that only the CRC check can reject.
$(FX)/fx_badcrc: $(FX)/fx_badcrc.full $(FX_SRC)/fx_prog.c
	$(Q)objcopy --only-keep-debug $< $@.debug
	$(Q)objcopy --strip-all --add-gnu-debuglink=$@.debug $< $@
	$(Q)$(FX_CC) $(FX_CFLAGS) -DFX_SHIFT -fPIE -pie -Wl,--build-id=none -o $@.other \
		$(FX_SRC)/fx_prog.c $(FX_LINK)
	$(Q)objcopy --only-keep-debug $@.other $@.debug
	$(Q)rm -f $@.other

$(FX)/fx_bid.full: $(FX_SRC)/fx_prog.c $(FX)/libfx.so
	$(QUIET_CC)$(FX_CC) $(FX_CFLAGS) -fPIE -pie -Wl,--build-id -o $@ $< $(FX_LINK)

$(FX)/fx_bid: $(FX)/fx_bid.full
	$(Q)id=$$(readelf -n $< | sed -n 's/^ *Build ID: *//p'); \
	test -n "$$id" || { echo "no build-id in $<" >&2; exit 1; }; \
	d=$(FX)/debug/.build-id/$$(echo $$id | cut -c1-2); \
	mkdir -p $$d && objcopy --only-keep-debug $< $$d/$$(echo $$id | cut -c3-).debug
	$(Q)objcopy --strip-all $< $@

$(FX)/fx_cxx: $(FX_SRC)/fx_cxx.cc
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(FX_CXX) $(FX_CFLAGS) -fPIE -pie -o $@ $<

$(FX)/fx_fid_a: $(FX_SRC)/fx_prog.c $(FX)/libfx.so
	$(QUIET_CC)$(FX_CC) $(FX_CFLAGS) -fPIE -pie -Wl,--build-id=$(FX_BID_A) -o $@ $< $(FX_LINK)

$(FX)/fx_fid_b: $(FX_SRC)/fx_prog.c $(FX)/libfx.so
	$(QUIET_CC)$(FX_CC) $(FX_CFLAGS) -DFX_SHIFT -fPIE -pie -Wl,--build-id=$(FX_BID_B) -o $@ $< \
		$(FX_LINK)

# Order-only: the fixtures must exist, but are not linked into the test.
$(BUILD)/tests/test_symbolize: | $(FIXTURES)
# test_plugin and test_pipeline name frames of fx_fid_a from file identity.
$(BUILD)/tests/test_plugin $(BUILD)/tests/test_pipeline: | $(FIXTURES)
# test_report_files runs trace-defer report on a trace.dat naming fx_fid_a.
$(BUILD)/tests/test_report_files: | $(DAEMON) $(FIXTURES)
