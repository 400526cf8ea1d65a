# Test target programs (`make targets`), built under $(OUT)/targets.
# -O1 keeps each probed function a real call; -fno-omit-frame-pointer and
# -fcf-protection vary the first instruction the probe lands on.
TARGET_DIR := $(OUT)/targets
TARGET_CFLAGS := -g -O1 -fno-inline -pthread

TARGETS := $(TARGET_DIR)/calls $(TARGET_DIR)/calls_cet $(TARGET_DIR)/calls_pie \
	$(TARGET_DIR)/calls_stripped $(TARGET_DIR)/calls_stripped_dynsym $(TARGET_DIR)/cxx_throw

targets: $(TARGETS)

$(TARGET_DIR)/calls: tests/targets/calls.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -no-pie -fcf-protection=none $< -o $@

$(TARGET_DIR)/calls_cet: tests/targets/calls.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -fcf-protection=full -fno-omit-frame-pointer $< -o $@

$(TARGET_DIR)/calls_pie: tests/targets/calls.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -fPIE -pie -fcf-protection=none $< -o $@

$(TARGET_DIR)/calls_stripped: tests/targets/calls.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -no-pie -s $< -o $@

# stripped, its functions exported (-rdynamic): only .dynsym names them
$(TARGET_DIR)/calls_stripped_dynsym: tests/targets/calls.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -no-pie -rdynamic -s $< -o $@

$(TARGET_DIR)/cxx_throw: tests/targets/cxx_throw.cpp
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -g -O1 -fno-inline $< -o $@

# An exception through a frame with a destructor: _Unwind_Resume (issue 29).
TARGETS += $(TARGET_DIR)/cxx_cleanup
targets: $(TARGET_DIR)/cxx_cleanup

$(TARGET_DIR)/cxx_cleanup: tests/targets/cxx_cleanup.cpp
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -g -O1 -fno-inline $< -o $@

# The program `make demo` traces.
$(OUT)/demo/kvstore: tools/demo/kvstore.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O2 $< -o $@

targets: $(OUT)/demo/kvstore

# Threads that move CPUs before every call: staged records put back in order.
TARGETS += $(TARGET_DIR)/migrate
targets: $(TARGET_DIR)/migrate

$(TARGET_DIR)/migrate: tests/targets/migrate.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -no-pie -fcf-protection=none $< -o $@

# The program `cmon profile`'s tests measure: known call counts and durations.
TARGETS += $(TARGET_DIR)/sleeper
targets: $(TARGET_DIR)/sleeper

$(TARGET_DIR)/sleeper: tests/targets/sleeper.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -no-pie -fcf-protection=none $< -o $@

# Thousands of functions (many_0000 .. many_3999, each called once a run):
# `cmon profile` and the agent at scale.
TARGETS += $(TARGET_DIR)/many
targets: $(TARGET_DIR)/many

$(TARGET_DIR)/many.c: tools/bench/gen_many.sh
	$(Q)mkdir -p $(@D)
	$(Q)tools/bench/gen_many.sh 4000 > $@.tmp && mv $@.tmp $@

$(TARGET_DIR)/many: $(TARGET_DIR)/many.c
	$(call msg,TARGET,$@)
	$(Q)$(CC) -O1 -no-pie -fcf-protection=none $< -o $@

# Typed arguments from DWARF (test_typed.py, test_capture.py): the same
# program unoptimized and at -O2 (arguments move, locations become lists).
TYPED_CFLAGS := -g -fno-inline -fcf-protection=none -Wall -Wextra -Werror
TARGETS += $(TARGET_DIR)/typed_O0 $(TARGET_DIR)/typed_O2
targets: $(TARGET_DIR)/typed_O0 $(TARGET_DIR)/typed_O2

$(TARGET_DIR)/typed_O0: tests/targets/typed.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TYPED_CFLAGS) -O0 $< -o $@

$(TARGET_DIR)/typed_O2: tests/targets/typed.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TYPED_CFLAGS) -O2 $< -o $@

# typed.c by clang at -O2, DWARF 5 and DWARF 4: a struct passed by value in
# registers is described as pieces, each a register shifted (DW_OP_shr) into
# place, and in DWARF 5 truncated (DW_OP_convert).
TARGETS += $(TARGET_DIR)/typed_clang $(TARGET_DIR)/typed_clang_dwarf4
targets: $(TARGET_DIR)/typed_clang $(TARGET_DIR)/typed_clang_dwarf4

$(TARGET_DIR)/typed_clang: tests/targets/typed.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -Wno-unknown-attributes $< -o $@

$(TARGET_DIR)/typed_clang_dwarf4: tests/targets/typed.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -gdwarf-4 -O2 -Wno-unknown-attributes $< -o $@

# Inputs that differ between runs in a known digit (test_stats.py).
TARGETS += $(TARGET_DIR)/numeric
targets: $(TARGET_DIR)/numeric

$(TARGET_DIR)/numeric: tests/targets/numeric.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TYPED_CFLAGS) -O1 $< -o $@

# A ~5 us busy function behind entry points of every probe-site class
# (test_latency.py: latencies are the function's own).
TARGETS += $(TARGET_DIR)/busy
targets: $(TARGET_DIR)/busy

$(TARGET_DIR)/busy: tests/targets/busy.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O2 -pthread -fcf-protection=none -Wall -Wextra -Werror $< -o $@

# Traced whole ('argc:*', _start included) it must not change (test_safety.py):
# -O2 and -O0 with CET (endbr64 first instructions).
TARGETS += $(TARGET_DIR)/argc $(TARGET_DIR)/argc_O0
targets: $(TARGET_DIR)/argc $(TARGET_DIR)/argc_O0

$(TARGET_DIR)/argc: tests/targets/argc.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O2 -fcf-protection=none $< -o $@

$(TARGET_DIR)/argc_O0: tests/targets/argc.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O0 -fcf-protection=full $< -o $@

# sq() inlined everywhere: the error names its callers (test_safety.py).
TARGETS += $(TARGET_DIR)/inlined
targets: $(TARGET_DIR)/inlined

$(TARGET_DIR)/inlined: tests/targets/inlined.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O2 $< -o $@

# gcc's hot/cold split (work.cold), C++ at -O2 (test_programs.py).
TARGETS += $(TARGET_DIR)/coldsplit
targets: $(TARGET_DIR)/coldsplit

$(TARGET_DIR)/coldsplit: tests/targets/coldsplit.cpp
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -g -O2 -fcf-protection=none $< -o $@

# via_ptr() leaves only through `jmp *%rax`: it returns (test_safety.py).
TARGETS += $(TARGET_DIR)/tailptr
targets: $(TARGET_DIR)/tailptr

$(TARGET_DIR)/tailptr: tests/targets/tailptr.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O2 -fcf-protection=none $< -o $@

# typed.c without DWARF (symbols only): functions captured as raw registers
# (test_readback.py).
TARGETS += $(TARGET_DIR)/typed_nodwarf
targets: $(TARGET_DIR)/typed_nodwarf

$(TARGET_DIR)/typed_nodwarf: tests/targets/typed.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(filter-out -g,$(TYPED_CFLAGS)) -O2 $< -o $@

# Widget::Widget(int) as _ZN6WidgetC1Ei and _ZN6WidgetC2Ei at one address
# (test_safety.py).
TARGETS += $(TARGET_DIR)/ctor
targets: $(TARGET_DIR)/ctor

$(TARGET_DIR)/ctor: tests/targets/ctor.cpp
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -g -O2 $< -o $@

# USDT probes, one guarded by a semaphore (test_usdt.py); systemtap-sdt-dev.
TARGETS += $(TARGET_DIR)/usdt
targets: $(TARGET_DIR)/usdt

$(TARGET_DIR)/usdt: tests/targets/usdt.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O2 -I/usr/include/$(shell $(CC) -dumpmachine) $< -o $@

# calls.c with frame pointers: --stack walks them (test_stack.py).
TARGETS += $(TARGET_DIR)/calls_fp
targets: $(TARGET_DIR)/calls_fp

$(TARGET_DIR)/calls_fp: tests/targets/calls.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -fno-omit-frame-pointer -no-pie -fcf-protection=none $< -o $@

# The same as a PIE (--stack: frames named after the process is gone).
TARGETS += $(TARGET_DIR)/calls_pie_fp
targets: $(TARGET_DIR)/calls_pie_fp

$(TARGET_DIR)/calls_pie_fp: tests/targets/calls.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -fno-omit-frame-pointer -fPIE -pie -fcf-protection=none $< -o $@

# Source lines for --line (test_lines.py), -O0, -O1 and -O2.
TARGETS += $(TARGET_DIR)/lines $(TARGET_DIR)/lines_O1 $(TARGET_DIR)/lines_O2
targets: $(TARGET_DIR)/lines $(TARGET_DIR)/lines_O1 $(TARGET_DIR)/lines_O2

$(TARGET_DIR)/lines_O1: tests/targets/lines.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O1 -fcf-protection=none $< -o $@

$(TARGET_DIR)/lines: tests/targets/lines.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O0 -fcf-protection=none $< -o $@

$(TARGET_DIR)/lines_O2: tests/targets/lines.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O2 -fcf-protection=none $< -o $@

# The same built by clang, which writes no .debug_aranges (nor does Go): a
# code address finds its compilation unit by the CUs' own ranges.
TARGETS += $(TARGET_DIR)/lines_clang
targets: $(TARGET_DIR)/lines_clang

$(TARGET_DIR)/lines_clang: tests/targets/lines.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O0 $< -o $@

# A C program that maps the C++ runtime through a dependency (as redis does
# through jemalloc), and a C++ exception unwinding through libc's qsort:
# where returns may be uretprobes and where they must not.
TARGETS += $(TARGET_DIR)/calls_cxxrt $(TARGET_DIR)/cxx_qsort
targets: $(TARGET_DIR)/calls_cxxrt $(TARGET_DIR)/cxx_qsort

# It maps libcrypto too, as redis does: OpenSSL imports makecontext for its
# async jobs, which must not make the process count as switching stacks.
LIBCRYPTO := $(firstword $(wildcard /lib/x86_64-linux-gnu/libcrypto.so.3 \
	/usr/lib/x86_64-linux-gnu/libcrypto.so.3))

$(TARGET_DIR)/calls_cxxrt: tests/targets/calls.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -no-pie -fcf-protection=none $< -o $@ -Wl,--no-as-needed -lstdc++ \
		$(LIBCRYPTO)

$(TARGET_DIR)/cxx_qsort: tests/targets/cxx_qsort.cpp
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -g -O1 -fno-inline $< -o $@

# A ucontext generator (issue 14: programs that switch stacks).
TARGETS += $(TARGET_DIR)/coro
targets: $(TARGET_DIR)/coro

$(TARGET_DIR)/coro: tests/targets/coro.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -no-pie -fcf-protection=none $< -o $@

# A Go program (issue 14): goroutines whose stacks grow.  Go's build cache
# and module path are kept under $(OUT), not in $HOME.
TARGETS += $(TARGET_DIR)/gowork
targets: $(TARGET_DIR)/gowork

$(TARGET_DIR)/gowork: tests/targets/gowork.go
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)GOCACHE=$(abspath $(OUT))/gocache GOPATH=$(abspath $(OUT))/gopath GO111MODULE=off \
		go build -o $@ $<

# Go calls pending when a trace ends (issue 29), and stacks grown by
# runtime.morestack while traced.
TARGETS += $(TARGET_DIR)/gopending
targets: $(TARGET_DIR)/gopending

$(TARGET_DIR)/gopending: tests/targets/gopending.go
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)GOCACHE=$(abspath $(OUT))/gocache GOPATH=$(abspath $(OUT))/gopath GO111MODULE=off \
		go build -o $@ $<

# pthread_exit's forced unwind through traced C++ frames.
TARGETS += $(TARGET_DIR)/cxx_exit
targets: $(TARGET_DIR)/cxx_exit

$(TARGET_DIR)/cxx_exit: tests/targets/cxx_exit.cpp
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -g -O1 -fno-inline -pthread $< -o $@

# Pointer parameters whose pointees a call changes (--capture-at).
TARGETS += $(TARGET_DIR)/mutate
targets: $(TARGET_DIR)/mutate

$(TARGET_DIR)/mutate: tests/targets/mutate.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O1 -fno-inline -no-pie -fcf-protection=none $< -o $@

# Processes that fork, daemonise and exec: `--follow` (test_forks.py).
TARGETS += $(TARGET_DIR)/forks
targets: $(TARGET_DIR)/forks

$(TARGET_DIR)/forks: tests/targets/forks.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -no-pie -fcf-protection=none $< -o $@

# Globals written at known lines, a function to stop in (test_watch.py,
# test_break.py): PIE with frame pointers, a fixed-address build, and a
# clang build (no .debug_aranges).
TARGETS += $(TARGET_DIR)/watch $(TARGET_DIR)/watch_nopie $(TARGET_DIR)/watch_clang
targets: $(TARGET_DIR)/watch $(TARGET_DIR)/watch_nopie $(TARGET_DIR)/watch_clang

$(TARGET_DIR)/watch_clang: tests/targets/watch.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O0 -fno-omit-frame-pointer $< -o $@

$(TARGET_DIR)/watch: tests/targets/watch.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -fPIE -pie -fno-omit-frame-pointer -fcf-protection=none $< -o $@

$(TARGET_DIR)/watch_nopie: tests/targets/watch.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -no-pie -fno-omit-frame-pointer -fcf-protection=none $< -o $@

# --if and --on-change (test_filters.py): ints, a struct and a string
# parameter, repeated values, sleeps; and the same without DWARF (symbols
# kept).
TARGETS += $(TARGET_DIR)/filters $(TARGET_DIR)/filters_nodwarf
targets: $(TARGET_DIR)/filters $(TARGET_DIR)/filters_nodwarf

$(TARGET_DIR)/filters: tests/targets/filters.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TYPED_CFLAGS) -O1 $< -o $@

$(TARGET_DIR)/filters_nodwarf: tests/targets/filters.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -fno-inline -fcf-protection=none -Wall -Wextra -Werror -O1 $< -o $@

# C23 unnamed parameters (test_typed.py): their names never take a real one's.
TARGETS += $(TARGET_DIR)/unnamed
targets: $(TARGET_DIR)/unnamed

$(TARGET_DIR)/unnamed: tests/targets/unnamed.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TYPED_CFLAGS) -std=gnu2x -O1 $< -o $@

# typed.c in the debug-info formats production programs ship
# (test_debugformats.py).  Types in type units (-fdebug-types-section): .debug_types in DWARF 4,
# DW_UT_type units of .debug_info in DWARF 5.
TARGETS += $(TARGET_DIR)/typed_types4 $(TARGET_DIR)/typed_types5
targets: $(TARGET_DIR)/typed_types4 $(TARGET_DIR)/typed_types5

$(TARGET_DIR)/typed_types4: tests/targets/typed.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TYPED_CFLAGS) -O2 -gdwarf-4 -fdebug-types-section $< -o $@

$(TARGET_DIR)/typed_types5: tests/targets/typed.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TYPED_CFLAGS) -O2 -gdwarf-5 -fdebug-types-section $< -o $@

# -gsplit-dwarf: the DIEs in a .dwo beside the program (its skeleton unit
# in the program has only ranges and lines); and one whose .dwo is gone.
TARGETS += $(TARGET_DIR)/typed_split $(TARGET_DIR)/lines_split $(TARGET_DIR)/watch_split \
	$(TARGET_DIR)/typed_split_nodwo
targets: $(TARGET_DIR)/typed_split $(TARGET_DIR)/lines_split $(TARGET_DIR)/watch_split \
	$(TARGET_DIR)/typed_split_nodwo

$(TARGET_DIR)/typed_split: tests/targets/typed.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TYPED_CFLAGS) -O2 -gsplit-dwarf $< -o $@

$(TARGET_DIR)/lines_split: tests/targets/lines.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O0 -fcf-protection=none -gsplit-dwarf $< -o $@

$(TARGET_DIR)/watch_split: tests/targets/watch.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -fPIE -pie -fno-omit-frame-pointer -fcf-protection=none \
		-gsplit-dwarf $< -o $@

$(TARGET_DIR)/typed_split_nodwo: tests/targets/typed.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TYPED_CFLAGS) -O2 -gsplit-dwarf $< -o $@
	$(Q)rm -f $@-typed.dwo

# MiniDebugInfo as Fedora builds it (gdb manual, "MiniDebugInfo"): fully
# stripped, the function symbols .dynsym lacks in .gnu_debugdata, an
# xz-compressed ELF file of their .symtab; no DWARF.
TARGETS += $(TARGET_DIR)/typed_minidebug
targets: $(TARGET_DIR)/typed_minidebug

$(TARGET_DIR)/typed_minidebug: tests/targets/typed.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TYPED_CFLAGS) -O2 $< -o $@.full
	$(Q)nm -D $@.full --format=posix --defined-only | awk '{ print $$1 }' | sort > $@.dynsyms
	$(Q)nm $@.full --format=posix --defined-only | \
		awk '{ if ($$2 == "T" || $$2 == "t" || $$2 == "D") print $$1 }' | sort > $@.funcsyms
	$(Q)comm -13 $@.dynsyms $@.funcsyms > $@.keep
	$(Q)objcopy --only-keep-debug $@.full $@.mini
	$(Q)objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols=$@.keep $@.mini
	$(Q)rm -f $@.mini.xz && xz $@.mini
	$(Q)strip --strip-all -R .comment $@.full -o $@.tmp
	$(Q)objcopy --add-section .gnu_debugdata=$@.mini.xz $@.tmp
	$(Q)rm -f $@.full $@.dynsyms $@.funcsyms $@.keep $@.mini.xz && mv $@.tmp $@

# dwz -m (Debian's -dbgsym packages): what two programs share moved into
# one file that .gnu_debugaltlink names; and the same whose shared file is
# gone.  Only where dwz is installed.
ifneq ($(shell command -v dwz 2>/dev/null),)
TARGETS += $(TARGET_DIR)/typed_dwz $(TARGET_DIR)/typed_dwz_noalt
targets: $(TARGET_DIR)/typed_dwz $(TARGET_DIR)/typed_dwz_noalt

$(TARGET_DIR)/typed_dwz: tests/targets/typed.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TYPED_CFLAGS) -O2 $< -o $@.tmp
	$(Q)cp $@.tmp $@.twin
	$(Q)dwz -m $(abspath $@).alt -M $(abspath $@).alt $@.tmp $@.twin
	$(Q)rm -f $@.twin && mv $@.tmp $@

$(TARGET_DIR)/typed_dwz_noalt: tests/targets/typed.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TYPED_CFLAGS) -O2 $< -o $@.tmp
	$(Q)cp $@.tmp $@.twin
	$(Q)dwz -m $@.alt -M /nonexistent/.dwz/typed.debug $@.tmp $@.twin
	$(Q)rm -f $@.twin $@.alt && mv $@.tmp $@
endif

# The same by clang -O2: callers leave the unused parameters' registers as
# they were (LLVM's dead argument elimination), and DWARF gives them no
# location.
TARGETS += $(TARGET_DIR)/unnamed_clang
targets: $(TARGET_DIR)/unnamed_clang

$(TARGET_DIR)/unnamed_clang: tests/targets/unnamed.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -std=gnu2x $< -o $@

# A C++ class described only in the compilation unit of its key function
# (keyfunc_def.cpp): a declaration where bill() takes it.  g++ and clang.
TARGETS += $(TARGET_DIR)/keyfunc $(TARGET_DIR)/keyfunc_clang
targets: $(TARGET_DIR)/keyfunc $(TARGET_DIR)/keyfunc_clang

$(TARGET_DIR)/keyfunc: tests/targets/keyfunc.cpp tests/targets/keyfunc_def.cpp tests/targets/keyfunc.h
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -g -O0 $(filter %.cpp,$^) -o $@

$(TARGET_DIR)/keyfunc_clang: tests/targets/keyfunc.cpp tests/targets/keyfunc_def.cpp tests/targets/keyfunc.h
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 $(filter %.cpp,$^) -o $@ -lstdc++

# An IFUNC with its implementations (test_errors.py: the error names them).
TARGETS += $(TARGET_DIR)/ifunc
targets: $(TARGET_DIR)/ifunc

$(TARGET_DIR)/ifunc: tests/targets/ifunc.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) $< -o $@

# Names and values a user reads (test_names.py): glibc aliases, a
# transparent union, a library dlopen()ed by a relative path.
TARGETS += $(TARGET_DIR)/names $(TARGET_DIR)/libnames_dl.so
targets: $(TARGET_DIR)/names $(TARGET_DIR)/libnames_dl.so

$(TARGET_DIR)/names: tests/targets/names.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) $< -ldl -o $@

$(TARGET_DIR)/libnames_dl.so: tests/targets/names_dl.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -shared -fPIC $< -o $@

TARGETS += $(TARGET_DIR)/names_cxx
targets: $(TARGET_DIR)/names_cxx

$(TARGET_DIR)/names_cxx: tests/targets/names_cxx.cpp
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -g -O1 -fno-inline $< -o $@
