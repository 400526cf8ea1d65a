# Benchmark programs (tools/bench.sh).  Included by the main Makefile, or
# standalone: make -f tools/bench/bench.mk bench-tools [OUT=build]
#
#   $(OUT)/bench/target_{ss,fp,cet,nop5}  the same target, bench_fn starting
#                                         with add / push %rbp / endbr64 / nopl
#   $(OUT)/bench/uprobe-floor             empty uprobe (+uretprobe) runner
#   $(OUT)/bench/peakrss                  a command's own peak RSS
#   $(OUT)/bench/many                     1,000 functions many_0000..many_0999

OUT ?= build
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
ARCH ?= x86

BENCH_DIR := $(OUT)/bench
BENCH_SRC := tools/bench
BENCH_TARGETS := $(addprefix $(BENCH_DIR)/target_,ss fp cet nop5)
BENCH_TCFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Werror -pthread

# What the kernel does with bench_fn's first instruction decides the cost:
# an ordinary instruction (add) is single-stepped, push %rbp emulated,
# endbr64 single-stepped, and a 5-byte nop optimized into a jump.  bench_fn
# keeps a stack slot so that gcc gives it a frame when asked: a leaf without
# one gets no push %rbp even with -fno-omit-frame-pointer.  bench.sh checks
# the first instruction of each build with objdump.
BENCH_FLAGS_ss   := -fomit-frame-pointer -fcf-protection=none
BENCH_FLAGS_fp   := -fno-omit-frame-pointer -fcf-protection=none
BENCH_FLAGS_cet  := -fno-omit-frame-pointer -fcf-protection=full
# -mnop-mcount needs non-PIC code.  -pg only at compile time: linking with it
# would add gcrt1's profiler, which writes gmon.out at exit.
BENCH_FLAGS_nop5 := -pg -mfentry -mnop-mcount -fcf-protection=none -fno-pie
BENCH_LDFLAGS_nop5 := -no-pie

.PHONY: bench-tools

bench-tools: $(BENCH_TARGETS) $(BENCH_DIR)/uprobe-floor $(BENCH_DIR)/peakrss \
	$(BENCH_DIR)/usdt_target

# A USDT site in a timed loop (bench_probes.sh); <sys/sdt.h> from
# systemtap-sdt-dev.
$(BENCH_DIR)/usdt_target: $(BENCH_SRC)/usdt_target.c $(BENCH_SRC)/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_TCFLAGS) -I/usr/include/$(shell $(CC) -dumpmachine) $< -o $@

$(BENCH_DIR)/target_%.o: $(BENCH_SRC)/target.c $(BENCH_SRC)/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_TCFLAGS) $(BENCH_FLAGS_$*) -c $< -o $@

$(BENCH_DIR)/target_%: $(BENCH_DIR)/target_%.o
	$(CC) -pthread $(BENCH_LDFLAGS_$*) $< -o $@

$(BENCH_DIR)/floor.bpf.o: $(BENCH_SRC)/floor.bpf.c
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux -Wall \
		-c $< -o $@

$(BENCH_DIR)/floor.skel.h: $(BENCH_DIR)/floor.bpf.o
	$(BPFTOOL) gen skeleton $< name floor_bpf > $@

$(BENCH_DIR)/uprobe-floor: $(BENCH_SRC)/uprobe-floor.c $(BENCH_DIR)/floor.skel.h
	$(CC) -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
		-I$(BENCH_DIR) $< -lbpf -lelf -lz -o $@

$(BENCH_DIR)/peakrss: $(BENCH_SRC)/peakrss.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE $< -o $@

# The capture store's write rate and open+show time (user/store/).
bench-tools: $(BENCH_DIR)/store_bench

$(BENCH_DIR)/store_bench: $(BENCH_SRC)/store_bench.c $(wildcard user/store/*.c user/store/*.h) \
		user/core/grow.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Werror -D_GNU_SOURCE \
		-Iuser -Iinclude $< $(wildcard user/store/*.c) user/core/grow.c -lsqlite3 -ljansson -o $@

# Typed capture's cost and the capture store's sustained rate
# (tools/bench/bench_capture.sh): capture_fn(name, buf, 64) starts with
# push %rbp (emulated), as target_fp's bench_fn does.
bench-tools: $(BENCH_DIR)/capture_target

$(BENCH_DIR)/capture_target: $(BENCH_SRC)/capture_target.c
	@mkdir -p $(@D)
	$(CC) $(BENCH_TCFLAGS) $(BENCH_FLAGS_fp) $< -o $@

# Attach and detach time for 10, 100 and 1,000 functions
# (tools/bench/bench_attach.sh): a generated program with 1,000 distinct
# one-line functions, each called once.  -fno-ipa-icf: never fold two into one.
BENCH_MANY_N := 1000

bench-tools: $(BENCH_DIR)/many

$(BENCH_DIR)/many.c: $(BENCH_SRC)/gen_many.sh $(BENCH_SRC)/bench.mk
	@mkdir -p $(@D)
	$(BENCH_SRC)/gen_many.sh $(BENCH_MANY_N) > $@.tmp && mv $@.tmp $@

$(BENCH_DIR)/many: $(BENCH_DIR)/many.c
	$(CC) $(BENCH_TCFLAGS) -fno-ipa-icf $< -o $@

# Latencies that are the function's own (tools/bench/bench_latency.sh): the
# test target with a ~5 us busy function behind every site class.
bench-tools: $(BENCH_DIR)/busy

$(BENCH_DIR)/busy: tests/targets/busy.c
	@mkdir -p $(@D)
	$(CC) -g -O2 -pthread -fcf-protection=none -Wall -Wextra -Werror $< -o $@
