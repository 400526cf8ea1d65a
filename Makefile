# cmon build.  Everything lands under $(OUT); `make V=1` shows full commands.
#
#   bpf/x.bpf.c -> $(OUT)/bpf/x.bpf.o -> $(OUT)/skel/x.skel.h -> user objects -> $(OUT)/cmon

OUT ?= build
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
ARCH ?= x86

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WERROR := $(if $(CI),-Werror,)
CFLAGS ?= -O2 -g
CMON_CFLAGS := $(CFLAGS) -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-Wno-missing-field-initializers $(WERROR) -D_GNU_SOURCE \
	-Iuser -Ibpf -Iinclude -I$(OUT)/skel -MMD -MP
LDLIBS := -lbpf -lelf -ldw -lz -llzma -liberty -llz4 -lpthread -lsqlite3 -ljansson -lcsv -lm
# The agent's HTTP server and spec parser (and their TLS stacks) live in
# their own executable, so a trace does not carry them in memory.
AGENT_LDLIBS := $(LDLIBS) -lyaml -lmicrohttpd -lcurl

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux -Ibpf \
	-Wall -Wno-unused-function $(WERROR) -MMD -MP

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUT)/skel/%.skel.h,$(BPF_SRCS))

AGENT_SRCS := $(filter-out user/agent/main.c,$(sort $(wildcard user/agent/*.c)))
USER_SRCS := $(filter-out $(AGENT_SRCS),$(shell find user -name '*.c' ! -name main.c | sort))
USER_OBJS := $(patsubst %.c,$(OUT)/obj/%.o,$(USER_SRCS))
MAIN_OBJ := $(OUT)/obj/user/main.o
CORE_LIB := $(OUT)/cmon-core.a
AGENT_OBJS := $(patsubst %.c,$(OUT)/obj/%.o,$(AGENT_SRCS))
AGENT_LIB := $(OUT)/cmon-agent.a

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))

.DELETE_ON_ERROR:
.PHONY: all deps test unit unit-sanitized integration demo bench clean targets fuzz

all: $(OUT)/cmon $(OUT)/cmon-agent $(OUT)/libcmon.a

deps:
	$(Q)./tools/install-deps.sh build

# Before the first compiler run: the missing packages by name.
$(OUT)/.deps-checked: tools/install-deps.sh
	$(Q)./tools/install-deps.sh check
	$(Q)mkdir -p $(@D) && touch $@

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c | $(OUT)/.deps-checked
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@ # keep BTF, drop DWARF: the skeleton embeds the object

$(OUT)/skel/%.skel.h: $(OUT)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# User objects may include any skeleton: generate them all first.
$(OUT)/obj/%.o: %.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CMON_CFLAGS) -c $< -o $@

$(CORE_LIB): $(USER_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(OUT)/cmon: $(MAIN_OBJ) $(CORE_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CMON_CFLAGS) $^ $(LDLIBS) -o $@

$(AGENT_LIB): $(AGENT_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

# `cmon agent` runs this (git-style: cmon-<command> beside cmon).
$(OUT)/cmon-agent: $(OUT)/obj/user/agent/main.o $(AGENT_LIB) $(CORE_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CMON_CFLAGS) $^ $(AGENT_LDLIBS) -o $@

$(OUT)/obj/user/agent/main.o: user/agent/main.c | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CMON_CFLAGS) -c $< -o $@

$(OUT)/tests/%: tests/unit/%.c $(AGENT_LIB) $(CORE_LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CMON_CFLAGS) -Wno-unused-function $< $(AGENT_LIB) $(CORE_LIB) $(AGENT_LDLIBS) -lcmocka -o $@

include tests/targets/targets.mk
include tests/unit/fixtures.mk
-include tools/bench/bench.mk
-include user/store/store.mk
-include user/report/report.mk
include tests/fuzz/fuzz.mk
include docs/docs.mk

unit: $(UNIT_BINS) unit-fixtures
integration: $(OUT)/cmon targets

# The README's test command: unit tests, then integration tests that attach
# for real (root).  Ends with one line "N passed, N failed".
# The unit tests again under AddressSanitizer and UBSan (OUT/san): an
# out-of-bounds read or a NULL given to memcpy fails the test that made it.
SAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all

unit-sanitized:
	$(Q)$(MAKE) --no-print-directory OUT=$(OUT)/san CFLAGS="$(SAN_CFLAGS)" unit

test:
	$(Q)./tools/install-deps.sh test
	$(Q)$(MAKE) --no-print-directory all unit unit-sanitized targets docs-check
	@# The container tests' Debian root filesystem: made once (minutes), kept
	@# in /var/cache/cmon-test; without it they skip.
	$(Q)./tools/test-rootfs.sh >/dev/null || true
	$(Q)OUT=$(OUT) ./tests/run.sh

# The first command on a fresh machine: the build packages, cmon and the
# one program it traces (not the test targets: they need the test packages).
demo: deps
	$(Q)$(MAKE) --no-print-directory all $(OUT)/demo/kvstore
	$(Q)OUT=$(OUT) ./tools/demo.sh

bench:
	$(Q)./tools/install-deps.sh bench
	$(Q)$(MAKE) --no-print-directory all targets
	$(Q)OUT=$(OUT) ./tools/bench.sh

clean:
	rm -rf $(OUT)

-include $(shell find $(OUT) -name '*.d' 2>/dev/null)
