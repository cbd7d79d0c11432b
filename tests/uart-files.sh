#!/bin/sh
# SPDX-License-Identifier: MIT
# uart-files.sh DVP SCENARIOS OUT: a memory-only run writes no uart-*.txt; the quickstart's
# firmware writes exactly the files of the cores that printed (ctrl0 is cpu0, aicpu0 is cpu4).
dvp=$1; scenarios=$2; out=$3
rm -rf "$out"
"$dvp" run "$scenarios/memory/stream-read.yaml" --quiet --no-trace --out "$out/memory" || exit 1
"$dvp" run "$scenarios/quickstart.yaml" --quiet --no-trace --out "$out/quickstart" || exit 1
memory=$(cd "$out/memory" && ls uart-*.txt 2>/dev/null)
quick=$(cd "$out/quickstart" && ls uart-*.txt 2>/dev/null | tr '\n' ' ')
if [ -n "$memory" ]; then echo "memory-only run wrote: $memory"; exit 1; fi
if [ "$quick" != "uart-cpu0.txt uart-cpu4.txt " ]; then echo "quickstart wrote: $quick"; exit 1; fi
for f in "$out"/quickstart/uart-*.txt; do
  if [ ! -s "$f" ]; then echo "$f is empty"; exit 1; fi
done
echo "ok: no UART file for a memory-only run; quickstart: $quick"
