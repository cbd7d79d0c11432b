#!/bin/sh
# SPDX-License-Identifier: MIT
# quantum-invariance.sh DVP OUT SCENARIO...: each scenario (firmware on a CPU) run at three
# quanta must print the same UART output, execute the same number of instructions and take the
# same simulated time: firmware-visible time and instruction counts must not depend on how far
# a core runs ahead.
dvp=$1; out=$2; shift 2
for scenario in "$@"; do
  name=$(basename "$scenario" .yaml)
  ref=""
  for q in 100 1000 7777; do
    d="$out/$name-q$q"
    "$dvp" run "$scenario" --quiet --no-trace --set platform.cpu.quantum_ns=$q --out "$d" || { echo "$name: run at quantum $q ns failed"; exit 1; }
    t=$(grep -o '"simulated_ns": *[0-9.e+]*' "$d/stats.json")
    i=$(grep -o '"instructions": *[0-9]*' "$d/stats.json" | tr '\n' ' ')
    sig="$t $i $(cksum < "$d/uart-cpu0.txt")"
    echo "$name quantum $q ns: $t, $(cksum < "$d/uart-cpu0.txt")"
    if [ -z "$ref" ]; then ref=$sig
    elif [ "$sig" != "$ref" ]; then echo "$name: differs at quantum $q ns"; diff "$out/$name-q100/uart-cpu0.txt" "$d/uart-cpu0.txt"; exit 1; fi
  done
done
echo "ok"
