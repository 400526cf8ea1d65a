# cmon build.  Everything lands under $(OUT); `make V=1` shows full commands.
#
#   bpf/x.bpf.c -> $(OUT)/bpf/x.bpf.o -> $(OUT)/skel/x.skel.h -> user objects -> $(OUT)/cmon

OUT ?= build
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
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
	-Iuser -Ibpf -I$(OUT)/skel -MMD -MP
LDLIBS := -lbpf -lelf -ldw -lz -lstdc++ -lpthread -lyaml -lmicrohttpd -lcurl -lsqlite3 -ljansson

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux -Ibpf \
	-Wall -Wno-unused-function $(WERROR) -MMD -MP

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUT)/skel/%.skel.h,$(BPF_SRCS))

USER_SRCS := $(shell find user -name '*.c' ! -name main.c | sort)
USER_OBJS := $(patsubst %.c,$(OUT)/obj/%.o,$(USER_SRCS))
MAIN_OBJ := $(OUT)/obj/user/main.o
CORE_LIB := $(OUT)/cmon-core.a

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))

.DELETE_ON_ERROR:
.PHONY: all deps test unit integration demo bench clean targets

all: $(OUT)/cmon

deps:
	$(Q)./tools/install-deps.sh build

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

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

$(OUT)/tests/%: tests/unit/%.c $(CORE_LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CMON_CFLAGS) -Wno-unused-function $< $(CORE_LIB) $(LDLIBS) -lcmocka -o $@

include tests/targets/targets.mk
include tests/unit/fixtures.mk
-include tools/bench/bench.mk
-include user/store/store.mk

unit: $(UNIT_BINS) unit-fixtures
integration: $(OUT)/cmon targets

# The README's test command: unit tests, then integration tests that attach
# for real (root).  Ends with one line "N passed, N failed".
test:
	$(Q)./tools/install-deps.sh test
	$(Q)$(MAKE) --no-print-directory all unit targets
	$(Q)OUT=$(OUT) ./tests/run.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all targets
	$(Q)OUT=$(OUT) ./tools/demo.sh

bench:
	$(Q)./tools/install-deps.sh bench
	$(Q)$(MAKE) --no-print-directory all targets
	$(Q)OUT=$(OUT) ./tools/bench.sh

clean:
	rm -rf $(OUT)

-include $(shell find $(OUT) -name '*.d' 2>/dev/null)
