#!/bin/sh
# SPDX-License-Identifier: MIT
# trace-nesting.sh DVP SCENARIO OUT: runs the scenario and checks its trace.json with
# check-trace.py (valid JSON; complete slices on every track nest, as Perfetto needs; counters
# step forward through sane values), and that it has the activity's DRAM counter track.
dvp=$1; scenario=$2; out=$3
"$dvp" run "$scenario" --quiet --out "$out" || exit 1
python3 "$(dirname "$0")/check-trace.py" "$out/trace.json" || exit 1
grep -q '"name":"DRAM GB/s","ph":"C"' "$out/trace.json" || { echo "no DRAM GB/s counter track"; exit 1; }
