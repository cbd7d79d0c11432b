#!/bin/sh
# SPDX-License-Identifier: MIT
# trace-nesting.sh DVP SCENARIO OUT: runs the scenario and checks its trace.json with
# check-trace.py (valid JSON; complete slices on every track nest, as Perfetto needs).
dvp=$1; scenario=$2; out=$3
"$dvp" run "$scenario" --quiet --out "$out" || exit 1
python3 "$(dirname "$0")/check-trace.py" "$out/trace.json"
