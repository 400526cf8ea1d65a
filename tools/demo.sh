#!/bin/sh
# `make demo`: trace the bundled key-value store from its first instruction,
# first as a table for a person, then as CSV for a program.
set -eu
OUT=${OUT:-build}
CMON=$OUT/cmon
DEMO=$OUT/demo/kvstore
if [ "$(id -u)" != 0 ]; then
	echo "make demo attaches probes: run it as root" >&2
	exit 1
fi
echo "\$ cmon trace --func handle_request --func 'kv_*' -- $DEMO   (first 12 calls)"
"$CMON" trace --func handle_request --func 'kv_*' --max-events 12 -- "$DEMO"
echo
csv=$(mktemp /tmp/cmon-demo-XXXXXX.csv)
echo "\$ cmon trace --func grow_table -F csv -o $csv -- $DEMO; cat $csv   (the RSS columns show each growth)"
"$CMON" trace --func grow_table -F csv -o "$csv" -- "$DEMO"
cat "$csv"
rm -f "$csv"
echo
echo "\$ cmon list 'kv_*' grow_table -- $DEMO"
"$CMON" list 'kv_*' grow_table -- "$DEMO"
echo
echo "\$ cmon profile --func 'kv_*' --func hash_key -- $DEMO   (aggregated in the kernel)"
"$CMON" profile --func 'kv_*' --func hash_key -- "$DEMO"
