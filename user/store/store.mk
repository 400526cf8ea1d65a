# The capture store: libcmon (the reader, include/cmon/cmon.h, plus the
# writer `cmon capture` uses), its example, and the store-filling tool the
# integration tests read back.  Included by the main Makefile:
#
#   $(OUT)/libcmon.a               user/store/*.c and core/grow.c, standalone
#                                  (no BPF, no other cmon module): link with
#                                  -lcmon -lsqlite3 -ljansson
#   $(OUT)/examples/read_store     examples/read_store.c, the API's example
#   $(OUT)/tests/store_fill        tests/unit/store_fill.c: a store with
#                                  known calls (tests/integration/test_store.py)
#
# The cmon binary itself gets user/store/*.c through the core archive like
# every module; these objects are built apart so that libcmon.a needs
# neither the BPF skeletons nor the rest of the tree.

OUT ?= build
CC ?= cc

LIBCMON := $(OUT)/libcmon.a
LIBCMON_SRCS := $(sort $(wildcard user/store/*.c))
# core/grow (growing an array: a leaf of core/, which includes nothing of cmon's)
LIBCMON_OBJS := $(patsubst user/store/%.c,$(OUT)/libcmon/%.o,$(LIBCMON_SRCS)) \
	$(OUT)/libcmon/core/grow.o
LIBCMON_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-Wno-missing-field-initializers $(if $(CI),-Werror,) -D_GNU_SOURCE -fPIC \
	-Iuser -Iinclude -MMD -MP
LIBCMON_LDLIBS := -lsqlite3 -ljansson

.PHONY: libcmon

libcmon: $(LIBCMON) $(OUT)/examples/read_store

# `make unit` / `make test` build them all; the integration tests need store_fill.
unit: $(LIBCMON) $(OUT)/examples/read_store $(OUT)/tests/store_fill
integration: $(OUT)/tests/store_fill

$(OUT)/libcmon/%.o: user/store/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIBCMON_CFLAGS) -c $< -o $@

$(OUT)/libcmon/core/%.o: user/core/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIBCMON_CFLAGS) -c $< -o $@

$(LIBCMON): $(LIBCMON_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(OUT)/examples/read_store: examples/read_store.c $(LIBCMON)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIBCMON_CFLAGS) $< $(LIBCMON) $(LIBCMON_LDLIBS) -o $@

# An explicit rule: it takes precedence over the Makefile's $(OUT)/tests/%
# pattern for unit tests.
$(OUT)/tests/store_fill: tests/unit/store_fill.c $(LIBCMON)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIBCMON_CFLAGS) $< $(LIBCMON) $(LIBCMON_LDLIBS) -o $@
