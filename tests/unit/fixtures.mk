# Unit-test fixtures: small ELF files built special ways, under
# $(OUT)/tests/fixtures (tests find them through $CMON_FIXTURES).
# Included by the Makefile (which sets Q and msg for quiet output); also
# works alone:
#   make -f tests/unit/fixtures.mk OUT=build unit-fixtures
# To add fixtures: append rules, and a `unit-fixtures: <outputs>` line.

OUT ?= build
CC ?= cc
CXX ?= c++
OBJCOPY ?= objcopy

UNIT_FIXTURE_DIR := $(OUT)/tests/fixtures
UNIT_FIXTURE_SRC := tests/unit/fixtures
UNIT_FIXTURE_CFLAGS := -O2 -g0 -Wall -Wextra -Wl,--build-id

.PHONY: unit-fixtures

# --- symtab (test_symtab) ---------------------------------------------------
unit-fixtures: $(UNIT_FIXTURE_DIR)/symtab_c_pie \
	$(UNIT_FIXTURE_DIR)/symtab_c_nopie \
	$(UNIT_FIXTURE_DIR)/symtab_c_stripped \
	$(UNIT_FIXTURE_DIR)/symtab_cxx \
	$(UNIT_FIXTURE_DIR)/libsymtab_ver.so \
	$(UNIT_FIXTURE_DIR)/symtab_markers

$(UNIT_FIXTURE_DIR)/symtab_c_pie: $(UNIT_FIXTURE_SRC)/symtab_c.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(UNIT_FIXTURE_CFLAGS) -fPIE -pie $< -o $@

$(UNIT_FIXTURE_DIR)/symtab_c_nopie: $(UNIT_FIXTURE_SRC)/symtab_c.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(UNIT_FIXTURE_CFLAGS) -fno-pie -no-pie $< -o $@

# No .symtab, and a non-PIE .dynsym only imports: no function symbols at all.
$(UNIT_FIXTURE_DIR)/symtab_c_stripped: $(UNIT_FIXTURE_SRC)/symtab_c.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(UNIT_FIXTURE_CFLAGS) -fno-pie -no-pie -s $< -o $@

$(UNIT_FIXTURE_DIR)/symtab_cxx: $(UNIT_FIXTURE_SRC)/symtab_cxx.cc
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(UNIT_FIXTURE_CFLAGS) $< -o $@

$(UNIT_FIXTURE_DIR)/libsymtab_ver.so: $(UNIT_FIXTURE_SRC)/symtab_ver.c $(UNIT_FIXTURE_SRC)/symtab_ver.map
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(UNIT_FIXTURE_CFLAGS) -fPIC -shared \
		-Wl,--version-script=$(UNIT_FIXTURE_SRC)/symtab_ver.map $< -o $@

$(UNIT_FIXTURE_DIR)/symtab_markers: $(UNIT_FIXTURE_SRC)/symtab_markers.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(UNIT_FIXTURE_CFLAGS) $< -o $@.tmp
	$(Q)printf 'go marker' > $@.sec
	$(Q)$(OBJCOPY) --add-section .go.buildinfo=$@.sec $@.tmp $@
	$(Q)rm -f $@.tmp $@.sec

# --- dwarf (test_dwarf) -----------------------------------------------------
# One source at -O0 and -O2 with DWARF (and endbr64 at every entry, as CET
# distributions build), and the ways DWARF is found outside the file:
# .gnu_debuglink, build-id under a debug root, a debuglink whose file has
# another build-id (must be refused), MiniDebugInfo (.gnu_debugdata only).
DWARF_FIXTURE_CFLAGS := -g -fcf-protection=full -Wall -Wextra -Wl,--build-id
DWARF_FX := $(UNIT_FIXTURE_DIR)/dwarf_fixture

unit-fixtures: $(DWARF_FX)_O0 $(DWARF_FX)_O2 $(DWARF_FX)_debuglink \
	$(DWARF_FX)_buildid $(DWARF_FX)_mismatch $(DWARF_FX)_minidebug

$(DWARF_FX)_O0: $(UNIT_FIXTURE_SRC)/dwarf_fixture.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O0 $(DWARF_FIXTURE_CFLAGS) $< -o $@

$(DWARF_FX)_O2: $(UNIT_FIXTURE_SRC)/dwarf_fixture.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 $(DWARF_FIXTURE_CFLAGS) $< -o $@

$(DWARF_FX)_debuglink: $(DWARF_FX)_O2
	$(call msg,FIXTURE,$@)
	$(Q)$(OBJCOPY) --only-keep-debug $< $@.debug
	$(Q)$(OBJCOPY) --strip-debug --add-gnu-debuglink=$@.debug $< $@

# The test passes $(UNIT_FIXTURE_DIR)/dwarf_debugroot as the debug root.
$(DWARF_FX)_buildid: $(DWARF_FX)_O2
	$(call msg,FIXTURE,$@)
	$(Q)id=$$(readelf -n $< | sed -n 's/.*Build ID: *//p'); \
		dir=$(UNIT_FIXTURE_DIR)/dwarf_debugroot/.build-id/$$(printf %s "$$id" | cut -c1-2); \
		mkdir -p $$dir && \
		$(OBJCOPY) --only-keep-debug $< $$dir/$$(printf %s "$$id" | cut -c3-).debug
	$(Q)$(OBJCOPY) --strip-debug $< $@

# The -O2 build's DWARF behind the -O0 build's debuglink: the CRC matches,
# the build-id does not.
$(DWARF_FX)_mismatch: $(DWARF_FX)_O0 $(DWARF_FX)_O2
	$(call msg,FIXTURE,$@)
	$(Q)$(OBJCOPY) --only-keep-debug $(DWARF_FX)_O2 $@.debug
	$(Q)$(OBJCOPY) --strip-debug --add-gnu-debuglink=$@.debug $(DWARF_FX)_O0 $@

# MiniDebugInfo: the symbol table, xz-compressed in .gnu_debugdata.
$(DWARF_FX)_minidebug: $(DWARF_FX)_O2
	$(call msg,FIXTURE,$@)
	$(Q)$(OBJCOPY) --strip-debug $< $@.mini
	$(Q)xz -f $@.mini
	$(Q)$(OBJCOPY) --strip-all --add-section .gnu_debugdata=$@.mini.xz $< $@
	$(Q)rm -f $@.mini.xz
