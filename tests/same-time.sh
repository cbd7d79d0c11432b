#!/bin/sh
# SPDX-License-Identifier: MIT
# same-time.sh DVP SCENARIO PRESET OUT: a timing-only run must take exactly the simulated time
# of the functional run (moving data must not change timing).
dvp=$1; scenario=$2; preset=$3; out=$4
"$dvp" run "$scenario" --preset "$preset" --quiet --no-trace --out "$out/functional" || exit 1
"$dvp" run "$scenario" --preset "$preset" --quiet --no-trace --timing-only --out "$out/timing-only" || exit 1
f=$(grep -o '"simulated_ns": *[0-9.e+]*' "$out/functional/stats.json")
t=$(grep -o '"simulated_ns": *[0-9.e+]*' "$out/timing-only/stats.json")
if [ -z "$f" ] || [ "$f" != "$t" ]; then
  echo "functional $f, timing-only $t"; exit 1
fi
echo "ok: both $f"
