# shellcheck shell=bash
# lib.sh: number formatting and binary inspection shared by the benchmark
# scripts (sourced by tools/bench.sh and tools/bench/bench_*.sh).

median() { # numbers... -> median
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
		END { if (NR == 0) exit; m = int((NR + 1) / 2);
		      if (NR % 2) print v[m]; else printf "%.3f\n", (v[m] + v[m + 1]) / 2 }'
}

# 1234567.8 -> 1,234,568 (one decimal below 100)
fmt_ns() {
	awk -v x="$1" 'BEGIN {
		if (x < 100) { printf "%.1f", x; exit }
		s = sprintf("%.0f", x); o = "";
		while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) }
		print s o }'
}

fmt_int() { awk -v x="$1" 'BEGIN { s = sprintf("%.0f", x); o = "";
	while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) }
	print s o }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b > 0) printf "%.2f×", a / b; else print "-" }'; }

# The first instruction of function $FUNC in a binary, from objdump.
first_insn() { # binary -> "mnemonic operands"
	objdump -d --no-show-raw-insn "$1" 2>/dev/null |
		awk -v f="<$FUNC>:" '$2 == f { getline; sub(/^[ \t]*[0-9a-f]+:[ \t]*/, ""); print; exit }'
}
