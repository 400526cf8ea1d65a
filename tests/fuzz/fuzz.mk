# `make fuzz`: each fuzz target (tests/fuzz/fuzz_NAME.c) under libFuzzer
# with AddressSanitizer and UBSan for FUZZ_SECONDS (default 60) from its
# kept corpus (tests/fuzz/corpus/NAME, read only; what libFuzzer finds goes
# to $(OUT)/fuzz/corpus/NAME); a crash, a leak, a wrong outcome (the
# target aborts) or a timeout fails it, its input under $(OUT)/fuzz/.
# The code under test is built again with clang in $(OUT)/fuzz.
# `make test` does not fuzz: it replays the kept corpora
# (tests/unit/test_fuzz_corpus.c).
FUZZ_TARGETS := expr spec store elf
FUZZ_SECONDS ?= 60
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $(FUZZ_SAN)

.PHONY: fuzz fuzz-build

$(OUT)/fuzz_%: tests/fuzz/fuzz_%.c $(AGENT_LIB) $(CORE_LIB)
	$(call msg,FUZZ,$@)
	$(Q)$(CC) $(CMON_CFLAGS) -fsanitize=fuzzer $< $(AGENT_LIB) $(CORE_LIB) $(AGENT_LDLIBS) -o $@

fuzz-build:
	$(Q)./tools/install-deps.sh fuzz
	$(Q)$(MAKE) --no-print-directory OUT=$(OUT)/fuzz CC=$(CLANG) CFLAGS="$(FUZZ_CFLAGS)" \
		$(patsubst %,$(OUT)/fuzz/fuzz_%,$(FUZZ_TARGETS))

fuzz: fuzz-build
	$(Q)for t in $(FUZZ_TARGETS); do \
		mkdir -p $(OUT)/fuzz/corpus/$$t || exit 1; \
		echo "fuzz $$t: $(FUZZ_SECONDS) s"; \
		$(OUT)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
			-rss_limit_mb=2048 -max_len=65536 -dict=tests/fuzz/$$t.dict \
			-artifact_prefix=$(OUT)/fuzz/$$t- -print_final_stats=1 \
			$(OUT)/fuzz/corpus/$$t tests/fuzz/corpus/$$t \
			>$(OUT)/fuzz/$$t.log 2>&1 || { tail -n 40 $(OUT)/fuzz/$$t.log; \
			echo "fuzz $$t: FAILED (input: $(OUT)/fuzz/$$t-*)"; exit 1; }; \
		grep -E '^stat::number_of_executed_units|^stat::new_units_added' $(OUT)/fuzz/$$t.log | \
			sed "s/^/fuzz $$t: /"; \
		echo "fuzz $$t: 0 crashes"; \
	done
