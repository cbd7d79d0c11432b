#!/bin/sh
# SPDX-License-Identifier: MIT
# output-limit.sh DVP SCENARIO OUT: an output file that cannot be written whole (here a
# 1-block file-size limit, which holds for root too) is exit 5 naming the file and the reason,
# never "outputs in ..." with nothing written.
dvp=$1; scenario=$2; out=$3
rm -rf "$out"
trap '' XFSZ  # the write fails with EFBIG instead of the signal ending the process
ulimit -f 1
msg=$("$dvp" run "$scenario" --quiet --no-trace --out "$out" 2>&1); rc=$?
if [ "$rc" != 5 ]; then echo "exit code $rc, expected 5: $msg"; exit 1; fi
case "$msg" in
  *"cannot write $out/stats.json: File too large"*) echo "ok: $msg" ;;
  *) echo "message does not name the file and reason: $msg"; exit 1 ;;
esac
