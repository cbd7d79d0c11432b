#!/bin/sh
# SPDX-License-Identifier: MIT
# firmware-output.sh DVP SCENARIO OUT HOST_PROGRAM [dvp option...]: runs the scenario's firmware
# and passes if it exits 0 and its UART (core 0) printed exactly what HOST_PROGRAM, the same C
# built for the host on its C library, prints.
set -u
dvp=$1; scenario=$2; out=$3; host=$4; shift 4
rm -rf "$out"
if ! "$dvp" run "$scenario" --quiet --out "$out" "$@"; then
  echo "dvp run $scenario failed"; exit 1
fi
"$host" > "$out/expected.txt" || { echo "$host failed"; exit 1; }
if ! diff -u "$out/expected.txt" "$out/uart-cpu0.txt"; then
  echo "the firmware's output (+) differs from the host's (-)"; exit 1
fi
echo "ok: $(wc -l < "$out/expected.txt") lines as on the host"
