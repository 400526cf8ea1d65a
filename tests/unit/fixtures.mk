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
